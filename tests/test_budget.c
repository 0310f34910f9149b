/*
 * test_budget.c - solver budgets under attack (issue 6, part 4; docs/robustness.md).
 *
 * Traces crafted to make Z3 slow are generated here as single-file JSON text
 * (docs/trace-format.md; nothing big is committed) and checked with small
 * budgets. Every attack must finish within its wall-clock budget plus a margin,
 * with a verdict that is right or "unknown", and every dim left unknown must
 * carry a reason (a budget's: "time budget", "timeout (N ms)", "canceled",
 * "max. resource limit exceeded"; or Z3's own "incomplete ..."). Every
 * counterexample reported is evaluated with sg_expr_eval and must fail a guard
 * or a traced range. The attacks:
 *   - large products and huge constants: a 101-bit semiprime to factor, a
 *     product of 40 symbols against a prime near 2^100 and against 2^100, a
 *     quadratic non-residue modulo a prime near 2^100;
 *   - deep nesting: 1000 chained floor divisions, 1000 chained symbolic
 *     moduli, and 5000 (over SG_EXPR_MAX_DEPTH: a clean SG_ELIMIT at load);
 *   - thousands of symbols and guards: 2000 symbols in one chain of non-linear
 *     guards, and 2000 more with 4000 modular guards;
 *   - non-linear modular facts (sums of three squares mod 8, of three cubes
 *     mod 9), high powers.
 * And the stops one by one: the whole-check wall clock while Z3 is inside one
 * long query (no query timeout, no rlimit), the per-query timeout alone, and
 * the resource limit alone (deterministic: two runs agree).
 *
 * Each attack runs in a child process killed 3 s after its budget and margin,
 * so one that does not stop fails instead of hanging. Z3 4.8.12 ignores
 * Z3_interrupt in some queries (docs/robustness.md, "Known overruns"): the
 * attacks where it does are marked known, and an overrun there is printed
 * ("KNOWN OVERRUN"), not failed, until solver/ stops such queries.
 *
 * Environment:
 *   SG_BUDGET_QUICK=1     the reduced set (the sanitizer build's ctest sets it): fewer
 *                         symbols, shallower nesting, no repeated rlimit run
 *   SG_BUDGET_MARGIN_MS   slack over each wall-clock budget (default 1500; ctest sets
 *                         more for the sanitizer build)
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
 * verdict, reasons of unknown dims, counterexamples. The wall-clock budget is
 * checked by the caller (it knows which limit applies). Fills `o`.
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

/* The small budgets of the attacks: 2 s in all, 1 s and `rlimit` per query, inference as given. */
static sg_check_options small_budget(uint64_t rlimit, bool infer)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    o.timeout_ms = 2000;
    o.query_timeout_ms = 1000;
    o.query_rlimit = rlimit;
    o.infer = infer;
    return o;
}

/* Margin over a wall-clock budget, in seconds. */
static double margin(void) { return (double)env_ulong("SG_BUDGET_MARGIN_MS", 1500) / 1000.0; }

/* Is the reduced (sanitizer) set asked for? */
static bool quick(void) { return env_ulong("SG_BUDGET_QUICK", 0) != 0; }

/*
 * Run an attack under the small budgets and check it stayed within the 2 s
 * wall clock (killed 3 s after that). `known` names a reported overrun the
 * solver does not yet stop (then an overrun is printed, not failed).
 */
static void attack(const char *name, const sbuf *json, truth tr, bool infer, const char *known)
{
    sg_check_options opts = small_budget(2000000, infer);
    double limit = opts.timeout_ms / 1000.0 + margin();
    outcome o;
    run_attack(name, json, &opts, tr, &o, limit + 3.0);
    if (o.died)
        return; /* failed in run_attack */
    if (o.killed || o.check_s > limit) {
        if (known)
            printf("%-44s KNOWN OVERRUN (%s): %s after %.2f s\n", name, known, o.killed ? "killed" : "finished",
                   o.check_s);
        else
            CHECK_MSG(false, "%s: %s after %.2f s with a %.1f s budget", name, o.killed ? "killed" : "finished",
                      o.check_s, opts.timeout_ms / 1000.0);
        return;
    }
    if (known)
        printf("%-44s the known overrun (%s) did not happen\n", name, known);
    CHECK_MSG(o.load_rc == 0, "%s: does not load", name);
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
    attack("semiprime of 101 bits", &j, T_INVALID, false, NULL);
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
    attack("product of n symbols mod a 100-bit prime", &j, T_VALID, false, NULL);
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* n factors >= 2 multiply to 2^100 (n - 1 twos and 2^(101 - n)): invalid */
    product(&e, 0, n);
    sb_printf(&g, "{\"origin\": \"shape\", \"expr\": \"Ne(%s, " TWO_POW_100 ")\"}", sb_str(&e));
    trace_json(&j, n, NULL, 4, &g);
    attack("product of n symbols equal to 2^100", &j, T_INVALID, false, NULL);
    sb_free(&g);
    sb_free(&j);
    sb_free(&e);

    /* s0^2 = R (mod M) has no solution: R is a quadratic non-residue; valid */
    add_guard(&g, "Ne(Mod(s0**2 - " NONRESIDUE_100 ", " PRIME_100 "), 0)");
    trace_json(&j, 1, NULL, 4, &g);
    attack("square = non-residue mod a 100-bit prime", &j, T_VALID, true, NULL);
    sb_free(&g);
    sb_free(&j);
}

/* Deep nesting: chains of floor divisions and moduli, within and beyond the depth limit. */
static void test_deep_nesting(void)
{
    sbuf g = {0}, e = {0}, j = {0};
    int depth = quick() ? 300 : 1000, i;
    outcome o;
    sg_check_options opts = small_budget(2000000, false);

    /* ((s0*s1 + s1)//2//3//2...) <= s0*s1 + s1: dividing a positive number never grows it */
    sb_printf(&e, "(s0*s1 + s1)");
    for (i = 0; i < depth; i++)
        sb_printf(&e, "//%d", 2 + i % 2);
    sb_printf(&e, " <= s0*s1 + s1");
    add_guard(&g, sb_str(&e));
    trace_json(&j, 2, NULL, 4, &g);
    /* Known overrun, reported: Z3 answers the 1000-deep chain ~10 s after Z3_interrupt. */
    attack("floor division nested deep", &j, T_VALID, true, "Z3 ignores the interrupt");
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
    attack("symbolic modulus nested deep", &j, T_VALID, false, NULL);
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
    run_attack("floor division nested 5000 deep", &j, &opts, T_ANY, &o, 30.0);
    CHECK_EQ_INT(o.load_rc, SG_ELIMIT);
    CHECK_MSG(o.load_s < 1.0 + margin(), "refusing took %.2f s", o.load_s);
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
    attack("n symbols, a chain of non-linear guards", &j, T_INVALID, false, NULL);
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
    attack("n symbols, 2n modular guards", &j, T_VALID, true, NULL);
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
    attack("three squares mod 8", &j, T_VALID, false, NULL);
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "Ne(Mod(s0**3 + s1**3 + s2**3, 9), 4)"); /* cubes are 0, 1, 8 mod 9 */
    trace_json(&j, 3, NULL, 4, &g);
    attack("three cubes mod 9", &j, T_VALID, false, NULL);
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "Eq(Mod(s0**5 + s1**5, s2**2 + 1), Mod(s0 + s1, s2**2 + 1))");
    add_guard(&g, "Ne(Mod(s0*s1*s2, s0 + s1 + s2), 1)");
    trace_json(&j, 3, NULL, 4, &g);
    attack("fifth powers modulo a square", &j, T_ANY, true, NULL);
    sb_free(&g);
    sb_free(&j);

    add_guard(&g, "s0**40 + s1**40 > s2**40"); /* fails at (2, 2, 3) */
    trace_json(&j, 3, NULL, 4, &g);
    /* the lra solver did not return from this query after Z3_interrupt */
    attack("high powers", &j, T_INVALID, false, NULL);
    sb_free(&g);
    sb_free(&j);
}

/* ---- the stops one by one ------------------------------------------------------------------- */

/*
 * The whole-check wall clock alone (no query timeout, no resource limit) must
 * stop Z3 inside its one long query: factoring the semiprime.
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
    run_attack("wall clock only, inside one query", &j, &opts, T_INVALID, &o, 30.0);
    CHECK(o.load_rc == 0 && o.check_rc == 0);
    CHECK_MSG(o.check_s <= 2.0 + margin(), "took %.2f s with a 2 s budget", o.check_s);
    /* nothing else could stop it: Z3 was busy until the clock ran out, and said so */
    CHECK_MSG(o.check_s >= 1.5, "stopped after %.2f s: Z3 was not inside a long query", o.check_s);
    CHECK_EQ_INT(o.verdict, SG_VERDICT_UNKNOWN);
    CHECK(o.unknown > 0);
    CHECK_MSG(strstr(o.reasons, "timeout") || strstr(o.reasons, "time budget") || strstr(o.reasons, "canceled"),
              "reason '%s' does not name the wall clock", o.reasons);
    sb_free(&g);
    sb_free(&j);
}

/* The per-query timeout alone: every query stops after 500 ms, and the reason says so. */
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
    run_attack("query timeout only (500 ms)", &j, &opts, T_INVALID, &o, 30.0);
    CHECK(o.load_rc == 0 && o.check_rc == 0);
    CHECK(o.queries > 0);
    CHECK_MSG(o.check_s <= 0.5 * o.queries + margin(), "took %.2f s for %u queries of at most 0.5 s", o.check_s,
              o.queries);
    CHECK_EQ_INT(o.verdict, SG_VERDICT_UNKNOWN);
    CHECK_MSG(strstr(o.reasons, "timeout") || strstr(o.reasons, "canceled"), "reason '%s' does not name the query "
              "timeout", o.reasons);
    sb_free(&g);
    sb_free(&j);
}

/* The resource limit alone: the reason names it, and two runs give the same answer. */
static void test_rlimit_only(void)
{
    sbuf g = {0}, j = {0};
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    outcome a, b;

    opts.timeout_ms = 30000; /* a safety net only: the resource limit must stop it long before */
    opts.query_timeout_ms = 0;
    opts.query_rlimit = 300000;
    opts.infer = false;
    add_guard(&g, "Ne(Mod(s0**2 - " NONRESIDUE_100 ", " PRIME_100 "), 0)");
    add_guard(&g, "Ne(s1*s2, " SEMIPRIME_101 ")");
    trace_json(&j, 3, NULL, 4, &g);
    run_attack("resource limit only (300000)", &j, &opts, T_ANY, &a, 60.0);
    CHECK(a.load_rc == 0 && a.check_rc == 0);
    CHECK_MSG(a.check_s < 10.0, "took %.2f s", a.check_s);
    CHECK_EQ_INT(a.verdict, SG_VERDICT_UNKNOWN);
    CHECK_MSG(strstr(a.reasons, "resource limit") != NULL, "reason '%s' does not name the resource limit",
              a.reasons);
    if (!quick()) {
        run_attack("resource limit only, again", &j, &opts, T_ANY, &b, 60.0);
        CHECK_EQ_INT(b.verdict, a.verdict);
        CHECK_EQ_INT(b.unknown, a.unknown);
        CHECK_EQ_INT(b.queries, a.queries);
        CHECK_EQ_STR(b.reasons, a.reasons);
    }
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
    printf("total %.1f s\n", now_seconds() - t0);
    return test_summary();
}
