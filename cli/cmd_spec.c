/*
 * cmd_spec.c - `shapegate spec`: the widest valid dynamic_shapes for a trace,
 * made explicit (what Dim.AUTO discovered: ranges, relations, divisibility)
 * and re-checked before it is printed, as paste-ready Python or JSON.
 *
 * Exit codes: 0 a verified spec was printed, 4 none could be verified (the
 * notes say why), 1 the trace's own spec is invalid, 2 usage, 3 unreadable
 * input, 5 internal.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const sg_cli_opt spec_opts[] = {
    {"json", 'j', false, true,
     "--json               print one JSON object: {\"verified\", \"spec\", \"python\", \"lines\", \"notes\"}"},
    {"spec", SG_CLI_KEY_SPEC, true, false, "--spec FILE, --dim ITEM   start from another spec, as for `shapegate check`"},
    {"dim", SG_CLI_KEY_DIM, true, false, NULL},
    {"frame", SG_CLI_KEY_FRAME, true, false, "--frame N            export frame N of a TORCH_TRACE log, as for `shapegate check`"},
    {"timeout", SG_CLI_KEY_TIMEOUT, true, false,
     "--timeout MS, --query-timeout MS, --rlimit N   budgets, as for `shapegate check`"},
    {"query-timeout", SG_CLI_KEY_QUERY_TIMEOUT, true, false, NULL},
    {"rlimit", SG_CLI_KEY_RLIMIT, true, false, NULL},
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec spec_spec = {
    "spec",
    "usage: shapegate spec [options] INPUT\n"
    "\n"
    "Print the widest dynamic_shapes spec the guards of a trace allow: every dynamic dim\n"
    "(named Dims, Dim.AUTO, Dim.DYNAMIC) as an explicit Dim with its widest valid range,\n"
    "equal and derived dims as relations, divisibility as a new root (_dx, dx = 8*_dx).\n"
    "The spec is checked against the trace before it is printed. INPUT is a JSON trace,\n"
    "a capture folder or a TORCH_TRACE folder or log, as for `shapegate check`.\n"
    "\n"
    "Options:\n",
    spec_opts,
    "\n"
    "Exit: 0 a verified spec was printed, 4 none could be verified, 1 the trace's spec is\n"
    "      invalid, 2 usage, 3 unreadable input, 5 internal error.\n",
    false,
    NULL,
};

/* 0 a verified spec, 1 the trace's own spec is invalid, 4 none could be verified. */
static int spec_exit(const sg_report *r)
{
    if (sg_report_fixes_verified(r))
        return SG_EXIT_OK;
    return sg_report_fixes_recheck(r) == SG_VERDICT_INVALID_SPEC ? SG_EXIT_FALSE : SG_EXIT_UNKNOWN;
}

int sg_cmd_spec(int argc, char **argv)
{
    sg_cli_trace_args a;
    sg_cli_supervisor sv = {0};
    int rc;

    sg_cli_trace_args_init(&a, "spec");
    if ((rc = sg_cli_parse(&spec_spec, argc, argv, sg_cli_on_trace_option, &a)) >= 0)
        goto done;
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    if ((rc = sg_cli_start_solver(&sv, "spec", argc, argv, a.json, sg_cli_hard_limit(a.opts.timeout_ms, 2))) >= 0)
        goto done;
    a.opts.torch_fixes = a.opts.torch_message = a.json; /* the JSON form carries torch's text and lines */
    rc = sg_cli_supervised_exit(&sv, sg_cli_run_report(&a, argv[optind], sg_engine_spec, 0, spec_exit));
done:
    free(a.dims);
    return rc;
}
