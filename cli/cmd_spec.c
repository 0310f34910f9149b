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

int sg_cmd_spec(int argc, char **argv)
{
    sg_cli_trace_args a;
    sg_error err = SG_ERROR_INIT;
    sg_engine *engine = NULL;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    char *text = NULL;
    sg_cli_supervisor sv = {0};
    double t0;
    int rc;

    sg_cli_trace_args_init(&a, "spec");
    if ((rc = sg_cli_parse(&spec_spec, argc, argv, sg_cli_on_trace_option, &a)) >= 0)
        goto done;
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    if ((rc = sg_cli_start_solver(&sv, "spec", argc, argv, a.json, sg_cli_hard_limit(a.opts.timeout_ms, 2))) >= 0)
        goto done;
    t0 = sg_cli_now_ms();
    if ((rc = sg_cli_open_trace(&t, "spec", argv[optind], a.frame, a.spec_file, a.dims, a.ndims)) != SG_EXIT_OK)
        goto cleanup;
    sg_cli_spend(&a.opts.timeout_ms, t0);
    a.opts.torch_fixes = a.opts.torch_message = a.json; /* the JSON form carries torch's text and lines */
    if ((rc = sg_engine_new(&engine, NULL, &err)) != 0 || (rc = sg_engine_spec(engine, t, &a.opts, &r, &err)) != 0) {
        sg_cli_path_error("spec", argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if ((rc = a.json ? sg_report_to_json(&text, r, 0, &err) : sg_report_to_text(&text, r, 0, &err)) != 0) {
        sg_cli_errorf("spec", "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    fputs(text, stdout);
    if (a.json)
        fputc('\n', stdout);
    rc = sg_report_fixes_verified(r)                                  ? SG_EXIT_OK
         : sg_report_fixes_recheck(r) == SG_VERDICT_INVALID_SPEC ? SG_EXIT_FALSE
                                                                  : SG_EXIT_UNKNOWN;
    rc = sg_cli_finish_output("spec", rc);
cleanup:
    sg_free(text);
    sg_report_free(r);
    sg_trace_free(t);
    sg_engine_free(engine);
    rc = sg_cli_supervised_exit(&sv, rc);
done:
    free(a.dims);
    return rc;
}
