/*
 * cmd_trace.c - `shapegate trace`: print any input `check` accepts (a JSON
 * trace, a capture folder, a TORCH_TRACE folder or log) as a single-file v1
 * JSON trace (docs/trace-format.md), after --spec / --dim when given.
 *
 * Exit codes: 0 printed, 2 usage, 3 unreadable input, 5 internal.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const sg_cli_opt trace_opts[] = {
    SG_CLI_OPT_FRAME,
    {"spec", SG_CLI_KEY_SPEC, true, false, "--spec FILE, --dim ITEM   replace the spec, as for `shapegate check`"},
    {"dim", SG_CLI_KEY_DIM, true, false, NULL},
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec trace_spec = {
    "trace",
    "usage: shapegate trace [options] INPUT\n"
    "\n"
    "Print INPUT as a single-file JSON trace, version 1 (docs/trace-format.md). INPUT is\n"
    "what `shapegate check` reads: a JSON trace, a capture folder, or a TORCH_TRACE folder\n"
    "or log file (.log, .log.gz), one export frame of it.\n"
    "\n"
    "Options:\n",
    trace_opts,
    "\n"
    "Exit: 0 printed, 2 usage, 3 unreadable input, 5 internal error.\n",
    false,
    NULL,
};

int sg_cmd_trace(int argc, char **argv)
{
    sg_cli_trace_args a;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    char *text = NULL;
    int rc;

    sg_cli_trace_args_init(&a, "trace");
    if ((rc = sg_cli_parse(&trace_spec, argc, argv, sg_cli_on_trace_option, &a)) >= 0)
        goto done;
    if (optind + 1 != argc) {
        rc = sg_cli_usage_error("trace", optind >= argc ? "no INPUT given" : "one INPUT expected");
        goto done;
    }
    if ((rc = sg_cli_open_trace(&t, "trace", argv[optind], a.frame, a.spec_file, a.dims, a.ndims)) != SG_EXIT_OK)
        goto done;
    if ((rc = sg_trace_to_json(&text, t, &err)) != 0) {
        sg_cli_path_error("trace", argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto done;
    }
    fputs(text, stdout);
    rc = sg_cli_finish_output("trace", SG_EXIT_OK);
done:
    sg_free(text);
    sg_trace_free(t);
    free(a.dims);
    return rc;
}
