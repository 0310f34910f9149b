/*
 * cmd_spec.c - `shapegate spec`: the widest valid dynamic_shapes for a trace,
 * made explicit (what Dim.AUTO discovered: ranges, relations, divisibility)
 * and re-checked before it is printed, as paste-ready Python or JSON.
 *
 * Exit codes: 0 a verified spec was printed, 4 none could be verified (the
 * notes say why), 1 the trace's own spec is invalid, 2 usage, 3 unreadable
 * input, 5 internal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shapegate/common.h"
#include "shapegate/engine.h"
#include "analysis/fixes.h"

enum { OPT_DIM = 256, OPT_SPEC };

static void spec_help(FILE *out)
{
    fputs("usage: shapegate spec [options] INPUT\n"
          "\n"
          "Print the widest dynamic_shapes spec the guards of a trace allow: every dynamic dim\n"
          "(named Dims, Dim.AUTO, Dim.DYNAMIC) as an explicit Dim with its widest valid range,\n"
          "equal and derived dims as relations, divisibility as a new root (_dx, dx = 8*_dx).\n"
          "The spec is checked against the trace before it is printed. INPUT is a capture\n"
          "folder or a single-file JSON trace, as for `shapegate check`.\n"
          "\n"
          "Options:\n"
          "  --json               print one JSON object: {\"verified\", \"spec\", \"python\", \"lines\", \"notes\"}\n"
          "  --spec FILE, --dim ITEM   start from another spec, as for `shapegate check`\n"
          "  --timeout MS, --query-timeout MS, --rlimit N   budgets, as for `shapegate check`\n"
          "  -h, --help           this help\n"
          "\n"
          "Exit: 0 a verified spec was printed, 4 none could be verified, 1 the trace's spec is\n"
          "      invalid, 2 usage, 3 unreadable input, 5 internal error.\n",
          out);
}

int sg_cmd_spec(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, SG_CLI_OPT_TIMEOUT},
        {"query-timeout", required_argument, NULL, SG_CLI_OPT_QUERY_TIMEOUT},
        {"rlimit", required_argument, NULL, SG_CLI_OPT_RLIMIT},
        {"dim", required_argument, NULL, OPT_DIM},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_engine *engine = NULL;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    const sg_fixes *f;
    bool json = false;
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
            free(dims);
            spec_help(stdout);
            return sg_cli_finish_output("spec", SG_EXIT_OK);
        case 'j':
            json = true;
            break;
        case SG_CLI_OPT_TIMEOUT: case SG_CLI_OPT_QUERY_TIMEOUT: case SG_CLI_OPT_RLIMIT:
            if (!sg_cli_parse_budget(c, optarg, &opts)) {
                free(dims);
                return sg_cli_usage_error("spec", "'%s' is not a non-negative integer", optarg);
            }
            break;
        case OPT_DIM:
            if (!sg_cli_push_dim(&dims, &ndims, optarg)) {
                free(dims);
                sg_cli_errorf("spec", "out of memory");
                return SG_EXIT_INTERNAL;
            }
            break;
        case OPT_SPEC:
            spec_file = optarg;
            break;
        default:
            free(dims);
            return sg_cli_bad_option("spec", argc, argv, c, longopts);
        }
    }
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    hard_ms = sg_cli_hard_limit(opts.timeout_ms, 2);
    if ((rc = sg_cli_start_solver(&sv, "spec", argc, argv, json, hard_ms)) >= 0) {
        free(dims);
        return rc;
    }
    if ((rc = sg_cli_open_trace(&t, "spec", argv[optind], spec_file, dims, ndims)) != SG_EXIT_OK)
        goto cleanup;
    opts.torch_fixes = opts.torch_message = json; /* the JSON form carries torch's text and lines */
    if ((rc = sg_engine_new(&engine, NULL, &err)) != 0 || (rc = sg_engine_spec(engine, t, &opts, &r, &err)) != 0) {
        sg_cli_errorf("spec", "%s: %s", argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if ((rc = json ? sg_report_to_json(&text, r, 0, &err) : sg_report_to_text(&text, r, 0, &err)) != 0) {
        sg_cli_errorf("spec", "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    fputs(text, stdout);
    if (json)
        fputc('\n', stdout);
    f = r->fixes;
    rc = f->verified ? SG_EXIT_OK : f->recheck == SG_VERDICT_INVALID_SPEC ? SG_EXIT_FALSE : SG_EXIT_UNKNOWN;
    rc = sg_cli_finish_output("spec", rc);
cleanup:
    free(dims);
    sg_free(text);
    sg_report_free(r);
    sg_trace_free(t);
    sg_engine_free(engine);
    return sg_cli_supervised_exit(&sv, rc);
}
