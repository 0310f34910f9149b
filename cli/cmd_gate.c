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

enum { OPT_JUNIT = 256, OPT_ANNOTATIONS, OPT_POLICY };

static const sg_cli_opt gate_opts[] = {
    {"json", 'j', false, false, "--json               print one JSON object instead of text"},
    {"junit", OPT_JUNIT, true, false, "--junit FILE         also write JUnit XML for CI (one test case per input dim)"},
    {"policy", OPT_POLICY, true, false,
     "--policy FILE        JSON of ranges NEW must accept and relations it may require (docs/gate.md)"},
    {"annotations", OPT_ANNOTATIONS, false, false,
     "--annotations        print one GitHub-style annotation line per finding instead of text"},
    SG_CLI_OPT_BUDGET("Z3 resource limit per query (default 50000000; 0: none)"),
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec gate_spec = {
    CMD,
    "usage: shapegate gate [options] OLD.pt2 NEW.pt2\n"
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
    "      3 unreadable or invalid archive, 4 unknown, 5 internal error.\n",
    false,
    NULL,
};

typedef struct gate_args {
    sg_check_options opts;
    bool json, annotations;
    const char *junit, *policy;
} gate_args;

static int on_gate_opt(int key, const char *arg, void *ctx)
{
    gate_args *a = ctx;
    if (key == 'j') {
        a->json = true;
        return -1;
    }
    if (key == OPT_ANNOTATIONS) {
        a->annotations = true;
        return -1;
    }
    if (key == OPT_JUNIT) {
        a->junit = arg;
        return -1;
    }
    if (key == OPT_POLICY) {
        a->policy = arg;
        return -1;
    }
    return sg_cli_budget_option(CMD, key, arg, &a->opts);
}

/* Open `path` and read its program into `*g`; an exit code. */
static int load(const char *path, sg_archive **a, sg_graph **g)
{
    sg_error err = SG_ERROR_INIT;
    int rc;

    if ((rc = sg_archive_open(a, path, NULL, &err)) != 0 || (rc = sg_graph_load(g, *a, NULL, &err)) != 0) {
        sg_cli_errorf(CMD, "%s: %s", path, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
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
    sg_engine *e = NULL;
    sg_gate *gt = NULL;
    char *text = NULL, *policy = NULL;
    gate_args a;
    int rc;

    memset(&a, 0, sizeof a);
    a.opts = defaults;
    if ((rc = sg_cli_parse(&gate_spec, argc, argv, on_gate_opt, &a)) >= 0)
        return rc;
    if (a.json && a.annotations)
        return sg_cli_usage_error(CMD, "--json and --annotations are two outputs: choose one");
    if (optind != argc - 2)
        return sg_cli_usage_error(CMD, optind >= argc ? "no archives given" : "two archives expected: OLD.pt2 NEW.pt2");
    if ((rc = load(argv[optind], &ao, &go)) != SG_EXIT_OK || (rc = load(argv[optind + 1], &an, &gn)) != SG_EXIT_OK)
        goto cleanup;
    if (a.policy && !(policy = read_text(a.policy))) {
        rc = SG_EXIT_INPUT;
        goto cleanup;
    }
    if ((rc = sg_engine_new(&e, NULL, &err)) != 0
        || (rc = sg_engine_gate(e, go, gn, argv[optind], argv[optind + 1], policy, &a.opts, &gt, &err)) != 0
        || (rc = a.json ? sg_gate_to_json(&text, gt, &err)
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
    sg_archive_free(ao);
    sg_archive_free(an);
    return sg_cli_finish_output(CMD, rc);
}
