/*
 * test_budget.c - solver budgets under attack (issue 6, part 4; docs/robustness.md).
 *
 * Traces crafted to make Z3 slow are generated here as single-file JSON text
 * (docs/trace-format.md; nothing big is committed) and checked under Z3's
 * resource limit (rlimit) per query, with no wall-clock limit at all: what an
 * attack answers depends only on the trace and the limit, never on how fast or
 * loaded the machine is. Every attack must come back with a verdict that is
 * right or "unknown", every dim left unknown must carry a reason (the resource
 * limit's "max. resource limit exceeded", or Z3's own "incomplete ..."), the
 * number of Z3 queries must stay within a bound that is a count (linear in the
 * dims), and every counterexample reported is evaluated with sg_expr_eval and
 * must fail a guard or a traced range. Work outside Z3 is bounded by the
 * loader's limits (SG_EXPR_MAX_DEPTH: a 5000-deep expression is SG_ELIMIT),
 * not by a clock. The attacks:
 *   - large products and huge constants: a 101-bit semiprime to factor, a
 *     product of 40 symbols against a prime near 2^100 and against 2^100, a
 *     quadratic non-residue modulo a prime near 2^100;
 *   - deep nesting: 1000 chained floor divisions, 1000 chained symbolic
 *     moduli, and 5000 (over SG_EXPR_MAX_DEPTH: a clean SG_ELIMIT at load);
 *   - thousands of symbols and guards: 2000 symbols in one chain of non-linear
 *     guards, and 2000 more with 4000 modular guards;
 *   - non-linear modular facts (sums of three squares mod 8, of three cubes
 *     mod 9), high powers.
 * The resource limit alone on two hard queries runs twice and the two answers
 * must agree (verdict, statuses, queries, reasons).
 * The other two stops are checked by their answer, not by their timing: the
 * whole-call wall clock alone (no rlimit, no query timeout) and the per-query
 * timeout alone, each on a query no machine answers within it (factoring a
 * 101-bit semiprime), must give "unknown" with a reason naming the clock;
 * a slower or loaded machine can only make that answer more certain.
 *
 * Each attack runs in a child process, so that one that does not stop fails
 * the test instead of hanging it: the child is killed after SG_BUDGET_HANG_S
 * seconds (default 240). That is a hang detector, not a budget: an attack
 * passes or fails by its answer, and a correct run takes a small fraction of it
 * even on a loaded machine.
 *
 * Environment:
 *   SG_BUDGET_QUICK=1     the reduced set (the sanitizer build's ctest sets it): fewer
 *                         symbols, shallower nesting
 *   SG_BUDGET_HANG_S      seconds after which an attack's child counts as hung (240)
 *   SG_BUDGET_VERBOSE=1   print each attack's report
 *   SG_BUDGET_DUMP=DIR    write each attack's trace to DIR/<name>.json (to replay with the CLI)
 */
#define _POSIX_C_SOURCE 200809L

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oracle_model.h"
#include "analysis/analysis.h"
#include "analysis/check.h"
#include "expr/expr.h"
#include "trace/trace.h"
#include "test.h"

/* 1125899906842597 * 1125899906842679, both prime (2^50 - 27 and the next prime after 2^50 + 55). */
#define SEMIPRIME_101 "1267650600228260926694094797363"
/* The largest prime below 2^100, and a quadratic non-residue modulo it. */
#define PRIME_100 "1267650600228229401496703205361"
#define NONRESIDUE_100 "633825300114114700748351615033"
#define TWO_POW_100 "1267650600228229401496703205376"

/* What the right answer is, as far as the test knows it. */
typedef enum truth {
    T_VALID,   /* every allowed shape passes: ok or unknown */
    T_INVALID, /* some allowed shape fails: violations or unknown */
    T_ANY      /* not known here: any verdict, counterexamples still verified */
} truth;

/* ---- building traces ------------------------------------------------------------------------ */

/*
 * A trace of `nsym` one-dim tensors x0, x1, ...: dim i is Dim d<i> in
 * [2, dim_max] ("int_oo" when NULL), traced as symbol s<i> with range
 * [2, int_oo] and example size `hint`; the guards are the texts appended to
 * `guards` by add_guard(). Written as JSON into `out`.
 */
static void trace_json(sbuf *out, int nsym, const char *dim_max, long hint, const sbuf *guards)
{
    int i;
    sb_printf(out, "{\"format\": \"shapegate-trace\", \"version\": 1, \"shape_env\": true, \"symbols\": [");
    for (i = 0; i < nsym; i++)
        sb_printf(out, "%s{\"name\": \"s%d\", \"range\": [2, \"int_oo\"], \"hint\": %ld, \"sources\": [\"L['x%d']"
                  ".size()[0]\"]}", i ? ", " : "", i, hint, i);
    sb_printf(out, "], \"guards\": [%s], \"inputs\": [", sb_str(guards));
    for (i = 0; i < nsym; i++)
        sb_printf(out, "%s{\"path\": \"['x%d']\", \"dim\": 0, \"size\": %ld, \"source\": \"L['x%d'].size()[0]\", "
                  "\"value\": \"s%d\", \"spec\": {\"kind\": \"dim\", \"name\": \"d%d\", \"min\": 2, \"max\": %s%s%s}}",
                  i ? ", " : "", i, hint, i, i, i, dim_max ? "" : "\"", dim_max ? dim_max : "int_oo",
                  dim_max ? "" : "\"");
    sb_printf(out, "], \"spec\": {\"flat\": true}}");
}

/* Append one shape guard (expression text without quotes or backslashes) to the list. */
static void add_guard(sbuf *guards, const char *expr)
{
    sb_printf(guards, "%s{\"origin\": \"shape\", \"expr\": \"%s\"}", guards->n ? ", " : "", expr);
}

/* The product "s<first>*s<first+1>*...*s<first+n-1>". */
static void product(sbuf *b, int first, int n)
{
    int i;
    for (i = 0; i < n; i++)
        sb_printf(b, "%ss%d", i ? "*" : "", first + i);
}

/* ---- running one attack ---------------------------------------------------------------------- */

/* Is `reason` one of the budgets' reasons (or Z3 giving up on non-linear arithmetic)? */
static bool budget_reason(const char *reason)
{
    return strstr(reason, "time budget") || strstr(reason, "timeout") || strstr(reason, "canceled") ||
           strstr(reason, "resource limit") || strstr(reason, "incomplete");
}

/*
 * Does the counterexample of violation `x` fail some guard or traced range of
 * trace `t` (every input dim traced as its own bare symbol)? 1 yes, 0 no, -1
 * when it cannot be told (a guard overflows 128 bits there).
 */
static int cex_fails(const sg_trace *t, const sg_violation *x)
{
    size_t nin = 0, ng = 0, nvals, i;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    const sg_guard *g = sg_trace_guards(t, &ng);
    sg_pool *pool = NULL;
    sg_int *vals;
    int verdict = 0;

    if (sg_pool_overlay_new(&pool, sg_trace_pool(t), NULL) != 0)
        return -1;
    nvals = sg_pool_nsymbols(pool);
    vals = calloc(nvals + 1, sizeof *vals);
    if (!vals) {
        sg_pool_free(pool);
        return -1;
    }
    for (i = 0; i < nin; i++) {
        sg_int v = x->counterexample[i];
        if (!in[i].value || sg_expr_kind(in[i].value) != SG_SYM) {
            verdict = -1;
            goto cleanup;
        }
        if (v < 2) { /* every traced range here is [2, int_oo] */
            verdict = 1;
            goto cleanup;
        }
        vals[sg_expr_symbol_index(in[i].value)] = v;
    }
    for (i = 0; i < ng; i++) {
        sg_value val;
        int rc = sg_expr_eval(&val, pool, g[i].expr, vals, nvals, NULL);
        if (rc == SG_EUNDEFINED || (rc == 0 && !(val.kind == SG_VAL_BOOL && val.num == 1))) {
            verdict = 1;
            goto cleanup;
        }
        if (rc)
            verdict = -1;
    }
cleanup:
    free(vals);
    sg_pool_free(pool);
    return verdict;
}

/* With SG_BUDGET_DUMP=DIR, write the attack's trace to DIR/<name>.json (spaces as '_'). */
static void dump(const char *name, const sbuf *json)
{
    const char *dir = getenv("SG_BUDGET_DUMP");
    char path[4096];
    size_t i, n;
    FILE *f;
    if (!dir || !*dir)
        return;
    n = (size_t)snprintf(path, sizeof path, "%s/", dir);
    for (i = 0; name[i] && n + 6 < sizeof path; i++)
        path[n++] = name[i] == ' ' || name[i] == '/' ? '_' : name[i];
    snprintf(path + n, sizeof path - n, ".json");
    f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(json->p, 1, json->n, f);
    fclose(f);
}

/* What one attack run gave. */
typedef struct outcome {
    bool killed;  /* did not finish within the hard limit: the child was killed */
    bool died;    /* the child ended without an answer (a crash) */
    int failed;   /* a CHECK failed in the child */
    int load_rc, check_rc;
    sg_verdict verdict;
    double load_s, check_s;
    unsigned queries;
    size_t unknown, proved, refuted;
    char reasons[256]; /* the distinct reasons of unknown dims, "; "-separated */
} outcome;

/*
 * Load `json` and check it with `opts`; check the outcome against `truth`:
 * verdict, reasons of unknown dims, counterexamples. The times are printed,
 * never checked. Fills `o`.
 */
static void run_attack_here(const char *name, const sbuf *json, const sg_check_options *opts, truth tr, outcome *o)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    double t0;
    size_t i, unverified = 0;

    memset(o, 0, sizeof *o);
    dump(name, json);
    t0 = now_seconds();
    o->load_rc = sg_trace_load_json(&t, json->p, json->n, &err);
    o->load_s = now_seconds() - t0;
    if (o->load_rc) {
        printf("%-44s load: %s (%.2f s): %s\n", name, sg_strerror(o->load_rc), o->load_s, err.msg);
        return;
    }
    t0 = now_seconds();
    o->check_rc = sg_check(&r, t, opts, &err);
    o->check_s = now_seconds() - t0;
    CHECK_MSG(o->check_rc == 0, "%s: sg_check: %s: %s", name, sg_strerror(o->check_rc), err.msg);
    if (o->check_rc)
        goto cleanup;
    o->verdict = r->verdict;
    o->queries = r->stats.queries;
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        o->proved += d->status == SG_DIM_PROVED;
        o->refuted += d->status == SG_DIM_REFUTED;
        if (d->status != SG_DIM_UNKNOWN)
            continue;
        o->unknown++;
        CHECK_MSG(budget_reason(d->reason), "%s: dim %zu unknown for reason '%s'", name, i, d->reason);
        if (!strstr(o->reasons, d->reason) && strlen(o->reasons) + strlen(d->reason) + 3 < sizeof o->reasons)
            snprintf(o->reasons + strlen(o->reasons), sizeof o->reasons - strlen(o->reasons), "%s%s",
                     o->reasons[0] ? "; " : "", d->reason);
    }
    if (tr == T_VALID)
        CHECK_MSG(r->verdict == SG_VERDICT_OK || r->verdict == SG_VERDICT_UNKNOWN,
                  "%s: a valid spec got verdict %d", name, (int)r->verdict);
    if (tr == T_INVALID)
        CHECK_MSG(r->verdict == SG_VERDICT_VIOLATIONS || r->verdict == SG_VERDICT_UNKNOWN,
                  "%s: an invalid spec got verdict %d", name, (int)r->verdict);
    CHECK_MSG(r->verdict != SG_VERDICT_INVALID_SPEC, "%s: verdict invalid_spec", name);
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *x = &r->violations[i];
        int f;
        if (x->kind != SG_VIOL_GUARD || !x->has_counterexample)
            continue;
        f = cex_fails(t, x);
        CHECK_MSG(f != 0, "%s: violation %zu (%s): the counterexample passes every guard", name, i, x->dim);
        unverified += f < 0;
    }
    printf("%-44s %-10s %5.2f s (load %.2f s), %u queries, dims %zu proved %zu refuted %zu unknown%s%s%s\n", name,
           sg_verdict_name(r->verdict), o->check_s, o->load_s, o->queries, o->proved, o->refuted, o->unknown,
           o->reasons[0] ? " (" : "", o->reasons, o->reasons[0] ? ")" : "");
    if (unverified)
        printf("%-44s %zu counterexamples not verified (a guard overflows 128 bits there)\n", "", unverified);
    if (env_ulong("SG_BUDGET_VERBOSE", 0)) {
        char *rj = NULL;
        if (sg_report_to_json(&rj, r, 0, NULL) == 0)
            printf("%s\n", rj);
        sg_free(rj);
    }
cleanup:
    sg_report_free(r);
    sg_trace_free(t);
}

/*
 * run_attack_here() in a child process, so that an attack that does not stop
 * fails the test instead of hanging it: the child is killed after `hard_s`
 * seconds (o->killed). A CHECK failing in the child fails the current test.
 */
static void run_attack(const char *name, const sbuf *json, const sg_check_options *opts, truth tr, outcome *o,
                       double hard_s)
{
    int p[2], status = 0;
    size_t got = 0;
    double t0;
    bool killed = false;
    pid_t pid;

    memset(o, 0, sizeof *o);
    fflush(stdout);
    fflush(stderr);
    if (pipe(p) != 0 || (pid = fork()) < 0) {
        CHECK_MSG(false, "%s: cannot fork", name);
        return;
    }
    if (pid == 0) { /* the child */
        size_t off = 0;
        close(p[0]);
        run_attack_here(name, json, opts, tr, o);
        o->failed = test_cur_failed_;
        while (off < sizeof *o) {
            ssize_t k = write(p[1], (const char *)o + off, sizeof *o - off);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
        close(p[1]);
        fflush(stdout);
        fflush(stderr);
        exit(0); /* exit, not _exit: LeakSanitizer checks the child too */
    }
    close(p[1]);
    t0 = now_seconds();
    while (got < sizeof *o) {
        struct pollfd pf = {p[0], POLLIN, 0};
        double left = hard_s - (now_seconds() - t0);
        ssize_t k;
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000) + 1) <= 0) {
            if (now_seconds() - t0 < hard_s)
                continue;
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        k = read(p[0], (char *)o + got, sizeof *o - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(p[0]);
    waitpid(pid, &status, 0);
    if (got != sizeof *o) {
        memset(o, 0, sizeof *o);
        o->killed = killed;
        o->died = !killed;
        o->check_s = now_seconds() - t0;
        printf("%-44s %s after %.1f s (status 0x%x)\n", name, killed ? "KILLED" : "DIED", o->check_s, status);
        CHECK_MSG(killed, "%s: the child died (status 0x%x)", name, status);
        return;
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exited with status 0x%x", name, status);
    if (o->failed)
        test_cur_failed_ = 1;
}

/* The budget of the attacks: Z3's resource limit `rlimit` per query, no wall clock at all. */
static sg_check_options rlimit_budget(uint64_t rlimit, bool infer)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    o.timeout_ms = 0;
    o.query_timeout_ms = 0;
    o.query_rlimit = rlimit;
    o.infer = infer;
    return o;
}

/* The resource limit of every attack per query. */
#define ATTACK_RLIMIT 200000

/* The bound on Z3 queries for an attack of `ndims` input dims: a count, linear in the dims. */
#define QUERY_BOUND(ndims) (64u + 4u * (unsigned)(ndims))

/* Seconds after which an attack's child counts as hung (a hang detector, not a budget). */
static double hang_seconds(void) { return (double)env_ulong("SG_BUDGET_HANG_S", 240); }

/* Is the reduced (sanitizer) set asked for? */
static bool quick(void) { return env_ulong("SG_BUDGET_QUICK", 0) != 0; }

/* Do two runs of one attack give the same answer? */
static void check_same(const char *name, const outcome *a, const outcome *b)
{
    CHECK_MSG(b->verdict == a->verdict && b->proved == a->proved && b->refuted == a->refuted &&
              b->unknown == a->unknown && b->queries == a->queries && strcmp(b->reasons, a->reasons) == 0,
              "%s: two runs under the same resource limit differ: verdict %d/%d, proved %zu/%zu, refuted %zu/%zu, "
              "unknown %zu/%zu, queries %u/%u, reasons '%s'/'%s'", name, (int)a->verdict, (int)b->verdict, a->proved,
              b->proved, a->refuted, b->refuted, a->unknown, b->unknown, a->queries, b->queries, a->reasons,
              b->reasons);
}

/*
 * Run an attack under the resource limit: it must come back (not hang), load,
 * answer right or unknown with a reason (run_attack_here), and use at most
 * `max_queries` Z3 queries.
 */
static void attack(const char *name, const sbuf *json, truth tr, bool infer, unsigned max_queries)
{
    sg_check_options opts = rlimit_budget(ATTACK_RLIMIT, infer);
    outcome o;
    run_attack(name, json, &opts, tr, &o, hang_seconds());
    if (o.died)
        return; /* failed in run_attack */
    CHECK_MSG(!o.killed, "%s: did not come back within %.0f s under an rlimit of %d per query (a hang)", name,
              hang_seconds(), ATTACK_RLIMIT);
    if (o.killed)
        return;
    CHECK_MSG(o.load_rc == 0, "%s: does not load", name);
    CHECK_MSG(o.queries <= max_queries, "%s: %u Z3 queries, over the bound of %u", name, o.queries, max_queries);
    CHECK_MSG(!strstr(o.reasons, "time") && !strstr(o.reasons, "canceled"),
              "%s: reason '%s' names a clock, and none was set", name, o.reasons);
}

/* ---- the attacks ---------------------------------------------------------------------------- */

/* Large products and huge constants near 2^100. */
static void test_huge_products(void)
{
    sbuf g = {0}, e = {0}, j = {0};
    int n = quick() ? 12 : 40;

    /* factor a 101-bit semiprime: a counterexample exists (the two primes) */
    add_guard(&g, "Ne(s0*s1, " SEMIPRIME_101 ")");
    trace_json(&j, 2, NULL, 4, &g);
    attack("semiprime of 101 bits", &j, T_INVALID, false, QUERY_BOUND(2));
    sb_free(&g);
    sb_free(&j);

    /* n bounded factors never make a multiple of a prime near 2^100: valid */
    sb_printf(&e, "Ne(Mod(");
    product(&e, 0, n);
    sb_printf(&e, ", " PRIME_100 "), 0)");
    add_guard(&g, sb_str(&e));
    trace_json(&j, n, "1048576", 4, &g);
    /* Z3's default (lra) arithmetic solver ran on after Z3_interrupt from about 24 factors; the
     * non-linear queries now use the simplex one, which stops (docs/robustness.md). */
    attack("product of n symbols mod a 100-bit prime", &j, T_VALID, false, QUERY_BOUND(n));
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* n factors >= 2 multiply to 2^100 (n - 1 twos and 2^(101 - n)): invalid */
    product(&e, 0, n);
    sb_printf(&g, "{\"origin\": \"shape\", \"expr\": \"Ne(%s, " TWO_POW_100 ")\"}", sb_str(&e));
    trace_json(&j, n, NULL, 4, &g);
    attack("product of n symbols equal to 2^100", &j, T_INVALID, false, QUERY_BOUND(n));
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* s0^2 = R (mod M) has no solution: R is a quadratic non-residue; valid */
    add_guard(&g, "Ne(Mod(s0**2 - " NONRESIDUE_100 ", " PRIME_100 "), 0)");
    trace_json(&j, 1, NULL, 4, &g);
    attack("square = non-residue mod a 100-bit prime", &j, T_VALID, true, QUERY_BOUND(1));
    sb_free(&g);
    sb_free(&j);
}

/* Deep nesting: chains of floor divisions and moduli, within and beyond the depth limit. */
static void test_deep_nesting(void)
{
    sbuf g = {0}, e = {0}, j = {0};
    int depth = quick() ? 300 : 1000, i;
    outcome o;
    sg_check_options opts = rlimit_budget(ATTACK_RLIMIT, false);

    /* ((s0*s1 + s1)//2//3//2...) <= s0*s1 + s1: dividing a positive number never grows it */
    sb_printf(&e, "(s0*s1 + s1)");
    for (i = 0; i < depth; i++)
        sb_printf(&e, "//%d", 2 + i % 2);
    sb_printf(&e, " <= s0*s1 + s1");
    add_guard(&g, sb_str(&e));
    trace_json(&j, 2, NULL, 4, &g);
    /* the slowest attack: Z3 spends about a minute on the 1000-deep chain before the resource limit
     * stops it (release build; the work it does there is not counted by the rlimit) */
    attack("floor division nested deep", &j, T_VALID, true, QUERY_BOUND(2));
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* s0*s1 % (s1 + depth) % ... % (s1 + 2) < s1 + 2: the last modulus bounds it */
    sb_printf(&e, "s0*s1");
    for (i = depth; i >= 2; i--)
        sb_printf(&e, " %% (s1 + %d)", i);
    sb_printf(&e, " < s1 + 2");
    add_guard(&g, sb_str(&e));
    trace_json(&j, 2, NULL, 4, &g);
    attack("symbolic modulus nested deep", &j, T_VALID, false, QUERY_BOUND(2));
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* 5000 levels: over SG_EXPR_MAX_DEPTH, refused at load, quickly */
    sb_printf(&e, "s0");
    for (i = 0; i < 5000; i++)
        sb_printf(&e, "//2");
    sb_printf(&e, " >= 0");
    add_guard(&g, sb_str(&e));
    trace_json(&j, 1, NULL, 4, &g);
    run_attack("floor division nested 5000 deep", &j, &opts, T_ANY, &o, hang_seconds());
    CHECK_MSG(!o.killed, "refusing a 5000-deep expression did not come back (a hang)");
    CHECK_EQ_INT(o.load_rc, SG_ELIMIT);
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);
}

/* Thousands of symbols and guards in one component. */
static void test_many_symbols(void)
{
    sbuf g = {0}, e = {0}, j = {0};
    int n = quick() ? 300 : 2000, i;

    /* s_i*s_{i+1} >= s_{i+2} + 1 fails for a large s_{i+2}: invalid, many refutation rounds */
    for (i = 0; i + 2 < n; i++) {
        e.n = 0;
        sb_printf(&e, "s%d*s%d >= s%d + 1", i, i + 1, i + 2);
        add_guard(&g, sb_str(&e));
    }
    trace_json(&j, n, NULL, 4, &g);
    attack("n symbols, a chain of non-linear guards", &j, T_INVALID, false, QUERY_BOUND(n));
    sb_free(&g);
    sb_free(&j);

    /* Mod(s_i*s_{i+1}, s_{i+2} + 1) < s_{i+2} + 1 and != s_{i+2} + 1: valid, twice n guards */
    for (i = 0; i + 2 < n; i++) {
        e.n = 0;
        sb_printf(&e, "Ne(Mod(s%d*s%d, s%d + 1), s%d + 1)", i, i + 1, i + 2, i + 2);
        add_guard(&g, sb_str(&e));
        e.n = 0;
        sb_printf(&e, "Mod(s%d*s%d + s%d, s%d + 3) <= s%d + 2", i, i + 2, i + 1, i + 1, i + 1);
        add_guard(&g, sb_str(&e));
    }
    trace_json(&j, n, NULL, 4, &g);
    attack("n symbols, 2n modular guards", &j, T_VALID, true, QUERY_BOUND(n));
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);
}

/* Non-linear modular facts and high powers. */
static void test_nonlinear_modular(void)
{
    sbuf g = {0}, j = {0};

    add_guard(&g, "Ne(Mod(s0**2 + s1**2 + s2**2, 8), 7)"); /* Legendre: never 7 mod 8 */
    trace_json(&j, 3, NULL, 4, &g);
    /* the lra solver answered this query 0-6 s after Z3_interrupt (also `z3 -t:1000`) */
    attack("three squares mod 8", &j, T_VALID, false, QUERY_BOUND(3));
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "Ne(Mod(s0**3 + s1**3 + s2**3, 9), 4)"); /* cubes are 0, 1, 8 mod 9 */
    trace_json(&j, 3, NULL, 4, &g);
    attack("three cubes mod 9", &j, T_VALID, false, QUERY_BOUND(3));
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "Eq(Mod(s0**5 + s1**5, s2**2 + 1), Mod(s0 + s1, s2**2 + 1))");
    add_guard(&g, "Ne(Mod(s0*s1*s2, s0 + s1 + s2), 1)");
    trace_json(&j, 3, NULL, 4, &g);
    attack("fifth powers modulo a square", &j, T_ANY, true, QUERY_BOUND(3));
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "s0**40 + s1**40 > s2**40"); /* fails at (2, 2, 3) */
    trace_json(&j, 3, NULL, 4, &g);
    /* the lra solver did not return from this query after Z3_interrupt */
    attack("high powers", &j, T_INVALID, false, QUERY_BOUND(3));
    sb_free(&g);
    sb_free(&j);
}

/*
 * Many divisions by one symbolic product (prod300's shape: `Mod(s_i, s0*s1)`),
 * more than problem_run.c's SG_NIA_MANY_DIVS, so the query goes to the solver
 * without Z3's nlsat step (whose purify-arith adds an axiom per pair of
 * divisions without polling). Invalid (s2 = 3, s0 = s1 = 2 fails): under the
 * resource limit it must come back right or unknown, and under the wall clock
 * alone (no rlimit, no query timeout) with a reason naming the clock when
 * unknown; a stop that does not come back fails in run_attack.
 */
static void test_many_divisions(void)
{
    sbuf g = {0}, e = {0}, j = {0};
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    int n = quick() ? 160 : 400, i;
    outcome o;

    for (i = 2; i < n; i++) {
        e.n = 0;
        sb_printf(&e, "Eq(Mod(s%d, s0*s1), 0)", i);
        add_guard(&g, sb_str(&e));
        e.n = 0;
        sb_printf(&e, "Eq(Mod(s%d, s1*s0 + 1), Mod(s%d, s0*s1 + 1))", i, i);
        add_guard(&g, sb_str(&e));
    }
    trace_json(&j, n, NULL, 4, &g);
    /* Z3's path, as this test means it: phase 2's one-dim counterexamples (analysis/check_probe.c)
     * would refute every dim of this component before Z3 is asked */
    sg_check__set_probe_min_dims((size_t)-1);
    attack("many divisions by a product", &j, T_INVALID, false, QUERY_BOUND(n));
    opts.timeout_ms = 2000;
    opts.query_timeout_ms = 0;
    opts.query_rlimit = 0;
    opts.infer = false;
    run_attack("many divisions by a product, wall clock only", &j, &opts, T_INVALID, &o, hang_seconds());
    CHECK_MSG(!o.killed, "the wall clock did not stop Z3 (a hang)");
    CHECK(o.load_rc == 0 && o.check_rc == 0);
    CHECK_MSG(o.unknown == 0 || strstr(o.reasons, "timeout") || strstr(o.reasons, "time budget") ||
                  strstr(o.reasons, "canceled") || strstr(o.reasons, "incomplete"),
              "reason '%s' does not name the wall clock", o.reasons);
    sg_check__set_probe_min_dims(0);
    sb_free(&g);
    sb_free(&e);
    sb_free(&j);
}

/* ---- the stops one by one ------------------------------------------------------------------- */

/*
 * The whole-call wall clock alone (no query timeout, no resource limit) must
 * stop Z3 inside its one long query: factoring the 101-bit semiprime, which no
 * machine does in 2 s. Decided by the answer: unknown, with the clock's reason
 * (nothing else could have stopped it); a hang fails in run_attack.
 */
static void test_wall_clock_inside_query(void)
{
    sbuf g = {0}, j = {0};
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    outcome o;

    opts.timeout_ms = 2000;
    opts.query_timeout_ms = 0;
    opts.query_rlimit = 0;
    opts.infer = false;
    add_guard(&g, "Ne(s0*s1, " SEMIPRIME_101 ")");
    trace_json(&j, 2, NULL, 4, &g);
    run_attack("wall clock only, inside one query", &j, &opts, T_INVALID, &o, hang_seconds());
    CHECK_MSG(!o.killed, "the wall clock did not stop Z3 (a hang)");
    CHECK(o.load_rc == 0 && o.check_rc == 0);
    CHECK_EQ_INT(o.verdict, SG_VERDICT_UNKNOWN);
    CHECK(o.unknown > 0);
    CHECK_MSG(strstr(o.reasons, "timeout") || strstr(o.reasons, "time budget") || strstr(o.reasons, "canceled"),
              "reason '%s' does not name the wall clock", o.reasons);
    CHECK_MSG(!strstr(o.reasons, "resource limit"), "reason '%s' names a resource limit that was not set", o.reasons);
    sb_free(&g);
    sb_free(&j);
}

/* The per-query timeout alone: the semiprime's query stops, and the reason names the timeout. */
static void test_query_timeout_only(void)
{
    sbuf g = {0}, j = {0};
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    outcome o;

    opts.timeout_ms = 0;
    opts.query_timeout_ms = 500;
    opts.query_rlimit = 0;
    opts.infer = false;
    add_guard(&g, "Ne(s0*s1, " SEMIPRIME_101 ")");
    trace_json(&j, 2, NULL, 4, &g);
    run_attack("query timeout only (500 ms)", &j, &opts, T_INVALID, &o, hang_seconds());
    CHECK_MSG(!o.killed, "the query timeout did not stop Z3 (a hang)");
    CHECK(o.load_rc == 0 && o.check_rc == 0);
    CHECK(o.queries > 0);
    CHECK_EQ_INT(o.verdict, SG_VERDICT_UNKNOWN);
    CHECK_MSG(strstr(o.reasons, "timeout") || strstr(o.reasons, "canceled"), "reason '%s' does not name the query "
              "timeout", o.reasons);
    sb_free(&g);
    sb_free(&j);
}

/* The resource limit alone, on two hard queries: the reason names it, and two runs give the same answer. */
static void test_rlimit_only(void)
{
    sbuf g = {0}, j = {0};
    sg_check_options opts = rlimit_budget(300000, false);
    outcome a, b;

    add_guard(&g, "Ne(Mod(s0**2 - " NONRESIDUE_100 ", " PRIME_100 "), 0)");
    add_guard(&g, "Ne(s1*s2, " SEMIPRIME_101 ")");
    trace_json(&j, 3, NULL, 4, &g);
    run_attack("resource limit only (300000)", &j, &opts, T_ANY, &a, hang_seconds());
    CHECK_MSG(!a.killed, "the resource limit did not stop Z3 (a hang)");
    CHECK(a.load_rc == 0 && a.check_rc == 0);
    CHECK_EQ_INT(a.verdict, SG_VERDICT_UNKNOWN);
    CHECK_MSG(strstr(a.reasons, "resource limit") != NULL, "reason '%s' does not name the resource limit",
              a.reasons);
    run_attack("resource limit only, again", &j, &opts, T_ANY, &b, hang_seconds());
    if (!b.killed && !b.died)
        check_same("resource limit only", &a, &b);
    sb_free(&g);
    sb_free(&j);
}

int main(void)
{
    double t0 = now_seconds();
    RUN(test_wall_clock_inside_query);
    RUN(test_query_timeout_only);
    RUN(test_rlimit_only);
    RUN(test_huge_products);
    RUN(test_deep_nesting);
    RUN(test_many_symbols);
    RUN(test_nonlinear_modular);
    RUN(test_many_divisions);
    printf("total %.1f s\n", now_seconds() - t0);
    return test_summary();
}
