/*
 * test_alloc.c - allocation-failure injection (docs/robustness.md) over
 * representative library calls: parse, sg_trace_load_dir on a corpus case,
 * sg_check on it (inference off), sg_archive_open + sg_archive_read_model, and
 * sg_graph_load on the same archive.
 *
 * For each call, a clean run counts its allocations (sg_alloc_count before and
 * after); then for N = 0, 1, ... up to that count the N-th allocation is made
 * to fail (sg_alloc_fail_after(N)) and the call must return SG_ENOMEM with its
 * out-parameters empty, or succeed when the failed allocation was benign. It
 * must never crash; leaks are caught by ASan's leak check in the sanitizer
 * build. N is sampled when the count is large: the first 200, then about 200
 * more evenly spaced, then the last few. Z3's own allocations do not go through
 * shapegate's allocator and are not covered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapegate/archive.h"
#include "analysis/check.h"
#include "expr/expr.h"
#include "shapegate/graph.h"
#include "trace/trace.h"
#include "test.h"

#define CASE_DIR SG_CORPUS "/cases/err_div_view_8"
#define ARCHIVE SG_CORPUS "/cases/ok_nonzero/model.pt2"

/* One library call under test: returns its status; checks its outputs itself. */
typedef int (*alloc_call)(void *ctx);

/* Is allocation number `n` (0-based) of a `count`-allocation call tried? */
static int sampled(unsigned long n, unsigned long count)
{
    unsigned long step;

    if (n < 200 || n + 5 >= count)
        return 1;
    step = (count - 200) / 200 + 1;
    return (n - 200) % step == 0;
}

/*
 * Run `call` once cleanly (must return 0) to count its allocations, then with
 * each sampled allocation failing. Prints the count and how many runs failed
 * cleanly with SG_ENOMEM.
 */
static void inject(const char *what, alloc_call call, void *ctx)
{
    unsigned long before, count, n, runs = 0, enomem = 0;
    int rc;

    before = sg_alloc_count();
    rc = call(ctx);
    count = sg_alloc_count() - before;
    CHECK_MSG(rc == 0, "%s: clean run returned %d", what, rc);
    if (rc != 0)
        return;
    for (n = 0; n <= count; n++) {
        if (!sampled(n, count + 1))
            continue;
        sg_alloc_fail_after((long)n);
        rc = call(ctx);
        sg_alloc_fail_after(-1);
        runs++;
        if (rc == SG_ENOMEM)
            enomem++;
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "%s: allocation %lu failing: status %d", what, n,
                  rc);
    }
    /* the last run (n == count) fails nothing the call makes: it must succeed */
    CHECK_MSG(rc == 0, "%s: run past the last allocation returned %d", what, rc);
    CHECK_MSG(enomem > 0, "%s: no run reported SG_ENOMEM", what);
    printf("%s: %lu allocations, %lu runs, %lu SG_ENOMEM\n", what, count, runs, enomem);
}

/* ---- the calls ----------------------------------------------------------------- */

/* New pool, parse a three-guard conjunction, print it; returns the first failure. */
static int call_parse(void *ctx)
{
    static const char text[] =
        "Eq(Mod(s0, 8), 0) & (Max(s1, 2*s0 + 1) >= (s2//3)) & Ne(PythonMod(s0*s1, 7), 3)";
    sg_pool *pool = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    char *out = NULL;
    int rc;

    (void)ctx;
    rc = sg_pool_new(&pool, &err);
    if (rc != 0) {
        CHECK(pool == NULL);
        return rc;
    }
    rc = sg_expr_parse(&e, pool, text, sizeof text - 1, &err);
    if (rc == 0)
        rc = sg_expr_print(&out, e, SG_SYNTAX_PYTHON, NULL, NULL, &err);
    if (rc != 0)
        CHECK(out == NULL);
    sg_free(out);
    sg_pool_free(pool);
    return rc;
}

/* sg_trace_load_dir on CASE_DIR; returns its status (no trace left on failure). */
static int call_load_dir(void *ctx)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    int rc;

    (void)ctx;
    rc = sg_trace_load_dir(&t, CASE_DIR, &err);
    if (rc != 0)
        CHECK_MSG(t == NULL, "failed load left a trace");
    sg_trace_free(t);
    return rc;
}

/* What call_check runs: the case folder, and the allocation to fail (-1: none). */
struct check_ctx {
    const char *dir;
    long fail_at;
};

/* sg_check with inference off on a fresh copy of the case (loaded without injection). */
static int call_check(void *ctx)
{
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    const struct check_ctx *c = ctx;
    int rc;

    /* the caller armed injection; load the trace first with it off, then re-arm */
    sg_alloc_fail_after(-1);
    rc = sg_trace_load_dir(&t, c->dir, &err);
    if (rc != 0)
        return SG_ERROR;
    opts.infer = false;
    sg_alloc_fail_after(c->fail_at);
    rc = sg_check(&r, t, &opts, &err);
    sg_alloc_fail_after(-1);
    if (rc != 0)
        CHECK_MSG(r == NULL, "failed check left a report");
    sg_report_free(r);
    sg_trace_free(t);
    return rc;
}

/* Open ARCHIVE and read its model JSON; returns the first failure. */
static int call_archive(void *ctx)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    char *json = NULL;
    size_t len = 7;
    int rc;

    (void)ctx;
    rc = sg_archive_open(&a, ARCHIVE, NULL, &err);
    if (rc != 0) {
        CHECK_MSG(a == NULL, "failed open left an archive");
        return rc;
    }
    rc = sg_archive_read_model(&json, &len, NULL, a, NULL, &err);
    if (rc != 0)
        CHECK_MSG(json == NULL && len == 0, "failed read_model left data");
    sg_free(json);
    sg_archive_free(a);
    return rc;
}

/* ---- the tests ------------------------------------------------------------------ */

/* The tests: each injects over one call (see inject()). */
static void test_parse(void) { inject("parse+print", call_parse, NULL); }
static void test_load_dir(void) { inject("sg_trace_load_dir", call_load_dir, NULL); }
static void test_archive(void) { inject("sg_archive_open+read_model", call_archive, NULL); }

/* The graph layer on the same archive: sg_graph_load (read model JSON, parse, symbol mapping). */
static int call_graph(void *ctx)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    int rc;

    (void)ctx;
    rc = sg_archive_open(&a, ARCHIVE, NULL, &err);
    if (rc != 0)
        return rc;
    rc = sg_graph_load(&g, a, NULL, &err);
    if (rc != 0)
        CHECK_MSG(g == NULL, "failed graph load left a graph");
    sg_graph_free(g);
    sg_archive_free(a);
    return rc;
}

static void test_graph(void) { inject("sg_archive_open+sg_graph_load", call_graph, NULL); }

/*
 * sg_check: injection is armed inside call_check (after the trace is loaded), so
 * count and sample here rather than through inject().
 */
/* Inject over sg_check on the capture folder `dir`. */
static void check_case(const char *dir)
{
    unsigned long count = 0, n, runs = 0, enomem = 0;
    struct check_ctx off = {dir, -1};
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    unsigned long before;
    int rc;

    opts.infer = false;
    CHECK_EQ_INT(sg_trace_load_dir(&t, dir, &err), 0);
    before = sg_alloc_count();
    rc = sg_check(&r, t, &opts, &err);
    count = sg_alloc_count() - before;
    CHECK_EQ_INT(rc, 0);
    sg_report_free(r);
    sg_trace_free(t);
    CHECK_EQ_INT(call_check(&off), 0);
    for (n = 0; n <= count; n++) {
        struct check_ctx at = {dir, (long)n};

        if (!sampled(n, count + 1))
            continue;
        rc = call_check(&at);
        runs++;
        if (rc == SG_ENOMEM)
            enomem++;
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "sg_check: allocation %lu failing: status %d", n,
                  rc);
    }
    CHECK_MSG(rc == 0, "sg_check: run past the last allocation returned %d", rc);
    CHECK(enomem > 0);
    printf("sg_check %s: %lu allocations, %lu runs, %lu SG_ENOMEM\n", strrchr(dir, '/') + 1,
           count, runs, enomem);
}

/* A case with violations (cores, counterexamples) and one that is proved. */
static void test_check(void)
{
    check_case(CASE_DIR);
    check_case(SG_CORPUS "/cases/ok_nonzero");
}

/* Runs every test; exit status 1 when one failed. */
int main(void)
{
    RUN(test_parse);
    RUN(test_load_dir);
    RUN(test_check);
    RUN(test_archive);
    RUN(test_graph);
    return test_summary();
}
