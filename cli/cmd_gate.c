/*
 * cmd_gate.c - `shapegate gate [--json] OLD.pt2 NEW.pt2`: does the new
 * version of a model still accept every input shape the old one accepted?
 * Both archives are read as `verify` reads them (any layout, any torch
 * version); the engine decides (sg_engine_gate); the report is printed as
 * text or JSON.
 *
 * --junit FILE also writes JUnit XML; --annotations prints GitHub-style
 * annotation lines instead of the text.
 *
 * Exit codes: 0 NEW accepts everything OLD accepts (a widening passes), 1 a
 * regression (or a changed signature), 2 usage, 3 unreadable or invalid
 * input, 4 unknown (with the reason), 5 internal or the JUnit file cannot be
 * written, 7 the JUnit file refused (not a regular file).
 */
#define _POSIX_C_SOURCE 200809L /* lstat, mkstemp, fchmod, fsync */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define CMD "gate"

enum { OPT_JUNIT = 256, OPT_ANNOTATIONS, OPT_POLICY, OPT_EMIT, OPT_CAP, OPT_FRAME, OPT_OLD_FRAME, OPT_NEW_FRAME };

static const sg_cli_opt gate_opts[] = {
    {"json", 'j', false, false, "--json               print one JSON object instead of text"},
    {"junit", OPT_JUNIT, true, false, "--junit FILE         also write JUnit XML for CI (one test case per input dim)"},
    {"policy", OPT_POLICY, true, false,
     "--policy FILE        JSON of ranges NEW must accept and relations it may require (docs/gate.md)"},
    {"annotations", OPT_ANNOTATIONS, false, false,
     "--annotations        print one GitHub-style annotation line per finding instead of text"},
    {"emit", OPT_EMIT, true, false,
     "--emit KIND          print NEW's serving descriptor instead: tensorrt (trtexec shapes), triton\n"
     "                     (config.pbtxt input block) or dynamic-shapes (torch's Python); with --json,\n"
     "                     the JSON instead, with all three in its \"serving\""},
    {"serving-cap", OPT_CAP, true, false,
     "--serving-cap N      the max a descriptor gives a dim NEW leaves unbounded (default 4096)"},
    {"frame", OPT_FRAME, true, false,
     "--frame N            export frame N (from 1) of OLD's and NEW's TORCH_TRACE logs holding several"},
    {"old-frame", OPT_OLD_FRAME, true, false, "--old-frame N        export frame N of OLD's log only (overrides --frame)"},
    {"new-frame", OPT_NEW_FRAME, true, false, "--new-frame N        export frame N of NEW's log only (overrides --frame)"},
    SG_CLI_OPT_BUDGET("Z3 resource limit per query (default 50000000; 0: none)"),
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec gate_spec = {
    CMD,
    "usage: shapegate gate [options] OLD NEW\n"
    "\n"
    "OLD and NEW are .pt2 archives or traces (a v1 JSON trace, a capture folder,\n"
    "a TORCH_TRACE folder or log), in any mix.\n"
    "\n"
    "Decide whether NEW accepts every input shape OLD accepts: each version's\n"
    "domain is what its loaded module checks on every call (symbolic and static\n"
    "sizes, range_constraints, guards_code, runtime asserts over input sizes).\n"
    "Inputs are matched by pytree path. A regression comes with a witness, a shape\n"
    "for every tensor input that OLD accepts and NEW rejects, and the NEW\n"
    "condition that rejects it; a widening (NEW accepts more) is reported and passes.\n"
    "\n"
    "Options:\n",
    gate_opts,
    "\n"
    "Exit: 0 no regression, 1 regression or changed signature, 2 usage,\n"
    "      3 unreadable or invalid input, 4 unknown, 5 internal error,\n"
    "      7 the JUnit file refused (not a regular file).\n",
    false,
    NULL,
};

typedef struct gate_args {
    sg_check_options opts;
    bool json, annotations;
    const char *junit, *policy;
    int emit;               /* -1 none, else an sg_gate_serving_kind */
    int64_t cap;
    unsigned frame, old_frame, new_frame; /* 0: not given (a log must then hold one export) */
} gate_args;

static int on_gate_opt(int key, const char *arg, void *ctx)
{
    gate_args *a = ctx;
    switch (key) {
    case 'j': a->json = true; return -1;
    case OPT_ANNOTATIONS: a->annotations = true; return -1;
    case OPT_JUNIT: a->junit = arg; return -1;
    case OPT_POLICY: a->policy = arg; return -1;
    default: break;
    }
    if (key == OPT_EMIT) {
        static const char *const kinds[] = {[SG_GATE_SERVING_TENSORRT] = "tensorrt", [SG_GATE_SERVING_TRITON] = "triton",
                                            [SG_GATE_SERVING_DYNAMIC_SHAPES] = "dynamic-shapes"};
        int k;
        for (k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
            if (strcmp(arg, kinds[k]) == 0) {
                a->emit = k;
                return -1;
            }
        return sg_cli_usage_error(CMD, "--emit '%s': expected tensorrt, triton or dynamic-shapes", arg);
    }
    if (key == OPT_CAP) {
        char *end;
        long long n = strtoll(arg, &end, 10);
        if (!*arg || *end || n < 1 || n > ((long long)1 << 40))
            return sg_cli_usage_error(CMD, "--serving-cap '%s': expected a size from 1", arg);
        a->cap = n;
        return -1;
    }
    if (key == OPT_FRAME || key == OPT_OLD_FRAME || key == OPT_NEW_FRAME) {
        char *end;
        unsigned long n = strtoul(arg, &end, 10);
        if (!*arg || *end || n < 1 || n > 1000000 || arg[0] == '-')
            return sg_cli_usage_error(CMD, "--%s '%s': expected a frame number from 1",
                                      key == OPT_FRAME ? "frame" : key == OPT_OLD_FRAME ? "old-frame" : "new-frame", arg);
        *(key == OPT_FRAME ? &a->frame : key == OPT_OLD_FRAME ? &a->old_frame : &a->new_frame) = (unsigned)n;
        return -1;
    }
    return sg_cli_budget_option(CMD, key, arg, &a->opts);
}

/* Is `path` a zip file (a .pt2 archive)? */
static bool is_zip(const char *path)
{
    unsigned char m[4] = {0};
    struct stat st;
    FILE *f;
    bool z;

    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
        return false;
    z = fread(m, 1, 4, f) == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4;
    fclose(f);
    return z;
}

/* Read `path` as a program (a .pt2: `*a`, `*g`) or a trace (`*t`): export frame `own` (its
 * --old-frame / --new-frame), else `shared` (--frame, which only TORCH_TRACE logs take) of a
 * TORCH_TRACE log; 0: its only one. An exit code. */
static int load(const char *path, unsigned own, unsigned shared, sg_archive **a, sg_graph **g, sg_trace **t)
{
    sg_error err = SG_ERROR_INIT;
    unsigned frame = own ? own : sg_trace_is_torch_trace_path(path) ? shared : 0;
    int rc;

    if (is_zip(path)) {
        if (frame > 1) {
            sg_cli_errorf(CMD, "%s: a .pt2 archive holds one program: no export frame %u", path, frame);
            return SG_EXIT_USAGE;
        }
        if ((rc = sg_archive_open(a, path, NULL, &err)) != 0 || (rc = sg_graph_load(g, *a, NULL, &err)) != 0) {
            sg_cli_path_error(CMD, path, err.msg);
            return sg_cli_exit_code(rc, SG_CLI_READING);
        }
        return SG_EXIT_OK;
    }
    if ((rc = sg_trace_load_frame(t, path, frame, &err)) != 0) {
        sg_cli_path_error(CMD, path, err.msg);
        return rc == SG_ENOMEM ? SG_EXIT_INTERNAL : SG_EXIT_INPUT;
    }
    return SG_EXIT_OK;
}

/* The JUnit report into `path` (a temporary file beside it, renamed; never over a non-regular
 * file or a symbolic link). An exit code. */
static int write_junit(const char *path, const sg_gate *gt)
{
    sg_error err = SG_ERROR_INIT;
    char *xml = NULL, tmp[4200];
    struct stat st;
    size_t len, off = 0;
    bool ok = true;
    int fd, rc = SG_EXIT_OK;

    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        sg_cli_errorf(CMD, "%s: not a regular file: not replaced", path);
        return SG_EXIT_OUTPUT;
    }
    if (sg_gate_to_junit(&xml, gt, &err) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        return SG_EXIT_INTERNAL;
    }
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    if ((fd = mkstemp(tmp)) < 0) {
        sg_cli_errorf(CMD, "%s: cannot write: %s", path, strerror(errno));
        sg_free(xml);
        return SG_EXIT_INTERNAL;
    }
    len = strlen(xml);
    while (ok && off < len) {
        ssize_t w = write(fd, xml + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    ok = ok && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        sg_cli_errorf(CMD, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        rc = SG_EXIT_INTERNAL;
    }
    sg_free(xml);
    return rc;
}

/* The text of `path` (at most 16 MiB, NUL-terminated; free()), or NULL after a one-line error. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = (size_t)16 << 20;

    if (!f) {
        sg_cli_errorf(CMD, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!(buf = malloc(cap + 1))) {
        fclose(f);
        sg_cli_errorf(CMD, "%s: out of memory", path);
        return NULL;
    }
    n = fread(buf, 1, cap + 1, f);
    if (ferror(f) || n > cap) {
        sg_cli_errorf(CMD, "%s: %s", path, ferror(f) ? "cannot read" : "larger than 16 MiB");
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    if (strlen(buf) != n) {
        sg_cli_errorf(CMD, "%s: a NUL byte in the policy", path);
        free(buf);
        return NULL;
    }
    return buf;
}

int sg_cmd_gate(int argc, char **argv)
{
    sg_check_options defaults = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_archive *ao = NULL, *an = NULL;
    sg_graph *go = NULL, *gn = NULL;
    sg_trace *to = NULL, *tn = NULL;
    sg_gate_input in = SG_GATE_INPUT_INIT;
    sg_engine *e = NULL;
    sg_gate *gt = NULL;
    char *text = NULL, *policy = NULL;
    gate_args a;
    int rc;

    memset(&a, 0, sizeof a);
    a.opts = defaults;
    a.emit = -1;
    if ((rc = sg_cli_parse(&gate_spec, argc, argv, on_gate_opt, &a)) >= 0)
        return rc;
    if ((a.json || a.emit >= 0) && a.annotations)
        return sg_cli_usage_error(CMD, "--annotations and --json or --emit are two outputs: choose one");
    if (optind != argc - 2)
        return sg_cli_usage_error(CMD, optind >= argc ? "no inputs given" : "two inputs expected: OLD NEW");
    if ((rc = load(argv[optind], a.old_frame, a.frame, &ao, &go, &to)) != SG_EXIT_OK
        || (rc = load(argv[optind + 1], a.new_frame, a.frame, &an, &gn, &tn)) != SG_EXIT_OK)
        goto cleanup;
    if (a.policy && !(policy = read_text(a.policy))) {
        rc = SG_EXIT_INPUT;
        goto cleanup;
    }
    in.old_graph = go;
    in.old_trace = to;
    in.old_name = argv[optind];
    in.new_graph = gn;
    in.new_trace = tn;
    in.new_name = argv[optind + 1];
    in.policy = policy;
    in.serving = a.emit >= 0;
    in.serving_cap = a.cap;
    if ((rc = sg_engine_new(&e, NULL, &err)) != 0 || (rc = sg_engine_gate_run(e, &in, &a.opts, &gt, &err)) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if (a.emit >= 0 && !a.json && sg_gate_to_serving(&text, gt, (sg_gate_serving_kind)a.emit, &err) != 0) {
        /* no descriptor for this NEW: say why; the verdict still decides the exit code */
        sg_cli_errorf(CMD, "--emit: %s", err.msg);
        rc = sg_gate_verdict_of(gt) == SG_GATE_PASS ? SG_EXIT_UNKNOWN : sg_gate_verdict_of(gt) == SG_GATE_REGRESSION
                                                                          ? SG_EXIT_FALSE : SG_EXIT_UNKNOWN;
        goto cleanup;
    }
    if ((a.emit < 0 || a.json) && (rc = a.json ? sg_gate_to_json(&text, gt, &err)
                            : a.annotations ? sg_gate_to_annotations(&text, gt, &err) : sg_gate_to_text(&text, gt, &err)) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if (a.junit && (rc = write_junit(a.junit, gt)) != SG_EXIT_OK)
        goto cleanup;
    fputs(text, stdout);
    if (a.json)
        fputc('\n', stdout);
    switch (sg_gate_verdict_of(gt)) {
    case SG_GATE_PASS: rc = SG_EXIT_OK; break;
    case SG_GATE_REGRESSION: rc = SG_EXIT_FALSE; break;
    default: rc = SG_EXIT_UNKNOWN; break;
    }
cleanup:
    sg_free(text);
    free(policy);
    sg_gate_free(gt);
    sg_engine_free(e);
    sg_graph_free(go);
    sg_graph_free(gn);
    sg_trace_free(to);
    sg_trace_free(tn);
    sg_archive_free(ao);
    sg_archive_free(an);
    return sg_cli_finish_output(CMD, rc);
}
