/*
 * cmd_check.c - `shapegate check`: decide a traced export against its
 * dynamic_shapes spec and print the diagnosis (text, or one JSON object).
 *
 * Exit codes (the output contract of docs/check.md): 0 every dynamic dim
 * proved, 1 some dim refuted or the spec invalid, 4 some unknown and none
 * refuted, 2 usage, 3 unreadable input, 5 internal.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum { OPT_NO_INFER = 256, OPT_NO_MINIMIZE, OPT_NO_FIX, OPT_PYTHON, OPT_EXPLAIN, OPT_TORCH, OPT_JOBS };

#define MAX_JOBS 256 /* each worker holds its own engine and Z3 contexts: tens of MB */

static const sg_cli_opt check_opts[] = {
    {"json", 'j', false, true, "--json               print one JSON object (docs/check.md) instead of text"},
    {"spec", SG_CLI_KEY_SPEC, true, false,
     "--spec FILE          replace the trace's dynamic_shapes by FILE's (JSON, the corpus's\n"
     "                     structured form: {\"x\": {\"0\": {\"name\": \"dx\", \"max\": 64}}})"},
    {"dim", SG_CLI_KEY_DIM, true, false,
     "--dim ITEM           override one dim's spec, after --spec; repeatable. ITEM is\n"
     "                     INPUT.DIM=SPEC, INPUT a path as 'x', 'inputs.a', 'xs.3' or\n"
     "                     \"['inputs']['a']\", SPEC one of NAME, NAME:MIN..MAX (either side\n"
     "                     may be empty), A*NAME+B (derived), AUTO, DYNAMIC, AUTO:MIN..MAX,\n"
     "                     STATIC or a size; or NAME:MIN..MAX alone, a range for a derived\n"
     "                     dim's root. E.g. --dim 'x.0=batch:1..1024' --dim 'y.0=2*batch'"},
    SG_CLI_OPT_FRAME,
    SG_CLI_OPT_BUDGET("Z3 resource limit per query, deterministic (default 50000000; 0: none)"),
    {"no-infer", OPT_NO_INFER, false, false,
     "--no-infer           skip inferring ranges, relations, congruences and holes"},
    {"no-minimize", OPT_NO_MINIMIZE, false, false,
     "--no-minimize        report Z3's unsat cores as they come, without shrinking them"},
    {"no-fix", OPT_NO_FIX, false, false, "--no-fix             do not derive suggested fixes for a refuted spec"},
    {"python", OPT_PYTHON, false, false,
     "--python             print the corrected spec as paste-ready Python (the Dim\n"
     "                     definitions and dynamic_shapes = {...}) after the diagnosis"},
    {"explain", OPT_EXPLAIN, false, false,
     "--explain            say how the fixes were found, and re-check torch's own\n"
     "                     suggested fixes when the trace has them"},
    {"torch", OPT_TORCH, false, false,
     "--torch              print the error torch prints for this trace, byte for byte in\n"
     "                     the wording of its torch version, with our verified fixes"},
    {"jobs", OPT_JOBS, true, false,
     "--jobs N             a batch's worker processes (default: the online CPUs; 1: one\n"
     "                     trace after another); the output is the same for every N"},
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec check_spec = {
    "check",
    "usage: shapegate check [options] INPUT\n"
    "       shapegate check --json [options] INPUT...   (a batch: one JSON object per line)\n"
    "\n"
    "Decide whether every shape the dynamic_shapes spec allows passes the guards torch\n"
    "recorded. INPUT is a JSON trace (`python3 -m shapegate capture`, docs/trace-format.md),\n"
    "a capture folder (guards.json + case.json, as in tests/corpus/cases/*), or a TORCH_TRACE\n"
    "folder or log file (.log, .log.gz; give the spec with --spec/--dim, else every traced\n"
    "dim is checked as Dim.AUTO).\n"
    "\n"
    "Options:\n",
    check_opts,
    "\n"
    "Exit: 0 all dynamic dims proved, 1 some refuted or the spec is invalid, 4 unknown,\n"
    "      2 usage, 3 unreadable input, 5 internal error.\n",
    false,
    NULL,
};

typedef struct check_args {
    sg_cli_trace_args in; /* INPUT, --spec, --dim, budgets, --json */
    bool no_fix, python, explain, torch;
    unsigned jobs; /* a batch's workers; 0: the online CPUs */
} check_args;

/* --jobs N: a whole number from 1 to MAX_JOBS. */
static int jobs_option(check_args *a, const char *arg)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(arg, &end, 10);
    if (*arg < '0' || *arg > '9' || errno || *end || v < 1 || v > MAX_JOBS)
        return sg_cli_usage_error("check", "--jobs needs a whole number from 1 to %d, got '%s'", MAX_JOBS, arg);
    a->jobs = (unsigned)v;
    return -1;
}

/* The default of --jobs: the online CPUs, at most MAX_JOBS. */
static unsigned default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > MAX_JOBS ? MAX_JOBS : (unsigned)n;
}

static int on_check_opt(int key, const char *arg, void *ctx)
{
    check_args *a = ctx;
    switch (key) {
    case OPT_NO_INFER: a->in.opts.infer = false; return -1;
    case OPT_NO_MINIMIZE: a->in.opts.minimize_cores = false; return -1;
    case OPT_NO_FIX: a->no_fix = true; return -1;
    case OPT_PYTHON: a->python = true; return -1;
    case OPT_EXPLAIN: a->explain = true; return -1;
    case OPT_TORCH: a->torch = true; return -1;
    case OPT_JOBS: return jobs_option(a, arg);
    default: return sg_cli_trace_option(&a->in, key, arg);
    }
}

int sg_cmd_check(int argc, char **argv)
{
    check_args a;
    sg_cli_supervisor sv = {0};
    unsigned flags;
    int rc;

    memset(&a, 0, sizeof a);
    sg_cli_trace_args_init(&a.in, "check");
    if ((rc = sg_cli_parse(&check_spec, argc, argv, on_check_opt, &a)) >= 0)
        goto done;
    a.in.opts.fixes = !a.no_fix;
    if (optind + 1 < argc) { /* several INPUTs: a batch (cli/check_batch.c) */
        size_t n = (size_t)(argc - optind);
        if (!a.in.json || a.in.spec_file || a.in.ndims || a.python || a.explain || a.torch) {
            rc = sg_cli_usage_error("check", "several INPUTs need --json, and take no --spec, --dim, --python, "
                                             "--explain or --torch");
            goto done;
        }
        a.in.opts.torch_fixes = a.in.opts.torch_message = true;
        /* worker processes, each trace under its own hard limit (cli/check_batch.c) */
        rc = sg_cli_check_batch((const char *const *)&argv[optind], n, &a.in.opts,
                                a.jobs ? a.jobs : default_jobs(),
                                sg_cli_hard_limit(a.in.opts.timeout_ms, a.no_fix ? 1 : 3));
        rc = sg_cli_finish_output("check", rc);
        goto done;
    }
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    if ((rc = sg_cli_start_solver(&sv, "check", argc, argv, a.in.json,
                                  sg_cli_hard_limit(a.in.opts.timeout_ms, a.no_fix ? 1 : 3))) >= 0)
        goto done;
    /* what the output needs: fixes unless --no-fix (set above), torch's lines re-checked for
     * --json and --explain, torch's text for --json and --torch */
    a.in.opts.torch_fixes = a.in.json || a.explain;
    a.in.opts.torch_message = a.in.json || a.torch;
    flags = (a.python ? SG_TEXT_PYTHON : 0) | (a.explain ? SG_TEXT_EXPLAIN : 0) | (a.torch ? SG_TEXT_TORCH : 0);
    rc = sg_cli_run_report(&a.in, argv[optind], sg_engine_check, flags, sg_cli_verdict_exit);
    rc = sg_cli_supervised_exit(&sv, rc);
done:
    free(a.in.dims);
    return rc;
}
