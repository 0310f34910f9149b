/*
 * cmd_check.c - `shapegate check`: decide a traced export against its
 * dynamic_shapes spec and print the diagnosis (text, or one JSON object).
 *
 * Exit codes (the output contract of docs/check.md): 0 every dynamic dim
 * proved, 1 some dim refuted or the spec invalid, 4 some unknown and none
 * refuted, 2 usage, 3 unreadable input, 5 internal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shapegate/common.h"
#include "shapegate/engine.h"

enum { OPT_NO_INFER = 256, OPT_NO_MINIMIZE, OPT_DIM, OPT_SPEC,
       OPT_NO_FIX, OPT_PYTHON, OPT_EXPLAIN, OPT_TORCH };

static void check_help(FILE *out)
{
    fputs("usage: shapegate check [options] INPUT\n"
          "\n"
          "Decide whether every shape the dynamic_shapes spec allows passes the guards torch\n"
          "recorded. INPUT is a capture folder (guards.json + case.json, as in tests/corpus/cases/*)\n"
          "or a single-file JSON trace (docs/trace-format.md).\n"
          "\n"
          "Options:\n"
          "  --json               print one JSON object (docs/check.md) instead of text\n"
          "  --spec FILE          replace the trace's dynamic_shapes by FILE's (JSON, the corpus's\n"
          "                       structured form: {\"x\": {\"0\": {\"name\": \"dx\", \"max\": 64}}})\n"
          "  --dim ITEM           override one dim's spec, after --spec; repeatable. ITEM is\n"
          "                       INPUT.DIM=SPEC, INPUT a path as 'x', 'inputs.a', 'xs.3' or\n"
          "                       \"['inputs']['a']\", SPEC one of NAME, NAME:MIN..MAX (either side\n"
          "                       may be empty), A*NAME+B (derived), AUTO, DYNAMIC, AUTO:MIN..MAX,\n"
          "                       STATIC or a size; or NAME:MIN..MAX alone, a range for a derived\n"
          "                       dim's root. E.g. --dim 'x.0=batch:1..1024' --dim 'y.0=2*batch'\n"
          "  --timeout MS         wall-clock limit for the whole check (default 60000; 0: none)\n"
          "  --query-timeout MS   Z3 time limit per query (default 10000; 0: none)\n"
          "  --rlimit N           Z3 resource limit per query, deterministic (default 50000000; 0: none)\n"
          "  --no-infer           skip inferring ranges, relations, congruences and holes\n"
          "  --no-minimize        report Z3's unsat cores as they come, without shrinking them\n"
          "  --no-fix             do not derive suggested fixes for a refuted spec\n"
          "  --python             print the corrected spec as paste-ready Python (the Dim\n"
          "                       definitions and dynamic_shapes = {...}) after the diagnosis\n"
          "  --explain            say how the fixes were found, and re-check torch's own\n"
          "                       suggested fixes when the trace has them\n"
          "  --torch              print the error torch prints for this trace, byte for byte in\n"
          "                       the wording of its torch version, with our verified fixes\n"
          "  -h, --help           this help\n"
          "\n"
          "Exit: 0 all dynamic dims proved, 1 some refuted or the spec is invalid, 4 unknown,\n"
          "      2 usage, 3 unreadable input, 5 internal error.\n",
          out);
}

int sg_cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, SG_CLI_OPT_TIMEOUT},
        {"query-timeout", required_argument, NULL, SG_CLI_OPT_QUERY_TIMEOUT},
        {"rlimit", required_argument, NULL, SG_CLI_OPT_RLIMIT},
        {"no-infer", no_argument, NULL, OPT_NO_INFER},
        {"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
        {"dim", required_argument, NULL, OPT_DIM},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"no-fix", no_argument, NULL, OPT_NO_FIX},
        {"python", no_argument, NULL, OPT_PYTHON},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"torch", no_argument, NULL, OPT_TORCH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_engine *engine = NULL;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    bool json = false, no_fix = false, python = false, explain = false, torch = false;
    char *text = NULL;
    const char **dims = NULL, *spec_file = NULL;
    size_t ndims = 0;
    sg_cli_supervisor sv = {0};
    unsigned hard_ms;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hj", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            check_help(stdout);
            return sg_cli_finish_output("check", SG_EXIT_OK);
        case 'j':
            json = true;
            break;
        case SG_CLI_OPT_TIMEOUT: case SG_CLI_OPT_QUERY_TIMEOUT: case SG_CLI_OPT_RLIMIT:
            if (!sg_cli_parse_budget(c, optarg, &opts)) {
                free(dims);
                return sg_cli_usage_error("check", "'%s' is not a non-negative integer", optarg);
            }
            break;
        case OPT_NO_INFER:
            opts.infer = false;
            break;
        case OPT_NO_MINIMIZE:
            opts.minimize_cores = false;
            break;
        case OPT_DIM:
            if (!sg_cli_push_dim(&dims, &ndims, optarg)) {
                free(dims);
                sg_cli_errorf("check", "out of memory");
                return SG_EXIT_INTERNAL;
            }
            break;
        case OPT_SPEC:
            spec_file = optarg;
            break;
        case OPT_NO_FIX:
            no_fix = true;
            break;
        case OPT_PYTHON:
            python = true;
            break;
        case OPT_EXPLAIN:
            explain = true;
            break;
        case OPT_TORCH:
            torch = true;
            break;
        default:
            free(dims);
            return sg_cli_bad_option("check", argc, argv, c, longopts);
        }
    }
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    hard_ms = sg_cli_hard_limit(opts.timeout_ms, no_fix ? 1 : 3);
    if ((rc = sg_cli_start_solver(&sv, "check", argc, argv, json, hard_ms)) >= 0) {
        free(dims);
        return rc;
    }
    if ((rc = sg_cli_open_trace(&t, "check", argv[optind], spec_file, dims, ndims)) != SG_EXIT_OK)
        goto cleanup;
    /* what the output needs: fixes unless --no-fix, torch's lines re-checked for --json and
     * --explain, torch's text for --json and --torch */
    opts.fixes = !no_fix;
    opts.torch_fixes = json || explain;
    opts.torch_message = json || torch;
    if ((rc = sg_engine_new(&engine, NULL, &err)) != 0 || (rc = sg_engine_check(engine, t, &opts, &r, &err)) != 0) {
        sg_cli_errorf("check", "%s: %s", argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    rc = json ? sg_report_to_json(&text, r, 0, &err)
              : sg_report_to_text(&text, r, (python ? SG_TEXT_PYTHON : 0) | (explain ? SG_TEXT_EXPLAIN : 0)
                                                | (torch ? SG_TEXT_TORCH : 0), &err);
    if (rc) {
        sg_cli_errorf("check", "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    fputs(text, stdout);
    if (json)
        fputc('\n', stdout);
    switch (r->verdict) {
    case SG_VERDICT_OK: rc = SG_EXIT_OK; break;
    case SG_VERDICT_UNKNOWN: rc = SG_EXIT_UNKNOWN; break;
    default: rc = SG_EXIT_FALSE; break;
    }
    rc = sg_cli_finish_output("check", rc);
cleanup:
    free(dims);
    sg_free(text);
    sg_report_free(r);
    sg_trace_free(t);
    sg_engine_free(engine);
    return sg_cli_supervised_exit(&sv, rc);
}
