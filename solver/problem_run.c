#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/*
 * problem_run.c - running budgeted Z3 queries over a built problem
 * (solver/problem.h: sg_problem_check, sg_problem_model_int, sg_problem_now).
 *
 * Does: one query on one of the problem's solvers - incremental (linear
 * questions), non-linear incremental (questions with assumptions), general,
 * or many-divisions (the QF_NIA tactic without nlsat, built here) - under the budget's
 * time and resource limits, its deadline and cancel token (the watchdog);
 * the linearity test that picks the solver; Z3's reason for "unknown";
 * counting into the check's stats and the runtime's counters.
 *
 * Does not: encode the trace, the spec or the components (problem.c), build
 * the terms an analysis asks about (query.c), or decide anything without Z3
 * (presolve.c).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "solver/problem.h"
#include "solver/watchdog.h"
#include "util/util.h"

double sg_problem_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- Queries ------------------------------------------------------------------------ */

/*
 * Z3's reason for "unknown", made to fit `reason[64]`: the tactic wrapper's
 * "smt tactic failed to show goal to be sat/unsat (incomplete (theory
 * arithmetic))" becomes "incomplete (theory arithmetic)".
 */
static void unknown_reason(char reason[64], const char *z3)
{
    static const char wrapper[] = "smt tactic failed to show goal to be sat/unsat (";
    size_t n;
    if (!z3)
        z3 = "unknown";
    if (strncmp(z3, wrapper, sizeof wrapper - 1) == 0 && (n = strlen(z3)) > sizeof wrapper) {
        z3 += sizeof wrapper - 1;
        n -= sizeof wrapper; /* the wrapper's "(" and the closing ")" */
        snprintf(reason, 64, "%.*s", (int)(n < 63 ? n : 63), z3);
        return;
    }
    snprintf(reason, 64, "%s", z3);
}

/*
 * Many divisions. Z3's default tactic for non-linear integer problems
 * (QF_NIA, 4.8.12 and later) tries, after bit-blasting and a 2 s SMT run,
 * its nlsat solver, whose `purify-arith` step adds one functionality axiom
 * per PAIR of integer divisions (and of modulos) by a non-literal, without
 * polling the interrupt or the resource limit: on prod300 (2,488 such terms,
 * 3 million axioms) it runs 10 s past the query's time limit and allocates
 * 700 MiB (measured with Z3's verbose output; the z3 binary shows the same
 * with `-t`). Queries with more than SG_NIA_MANY_DIVS of them go to a solver
 * built from the same tactic without that step: preamble, then bit-blasting
 * of bounded non-linear terms, else the SMT core (the 2 s SMT run and the
 * final one of the default tactic are one run here). Every step left polls,
 * so the watchdog's interrupt stops the query. Only completeness can differ
 * (nlsat may decide what the SMT core leaves unknown); answers stay exact.
 * Below the threshold the default solver is used unchanged.
 */
#define SG_NIA_MANY_DIVS 128

/* The tactic objects made for nia_solver(), each referenced until the solver is made. */
typedef struct tactics {
    Z3_context c;
    Z3_tactic made[64];
    size_t n;
} tactics;

/* Reference and record `t`; NULL (and nothing kept) on a Z3 error or a full record. */
static Z3_tactic kept(tactics *tb, Z3_tactic t)
{
    if (!t || Z3_get_error_code(tb->c) != Z3_OK || tb->n == sizeof tb->made / sizeof tb->made[0])
        return NULL;
    Z3_tactic_inc_ref(tb->c, t);
    tb->made[tb->n++] = t;
    return t;
}

/* Tactic `name` with `n` (key, value) parameter pairs, values "true"/"false" or a number; NULL on a
 * Z3 error (an unknown name or parameter on another Z3 version). A NULL `inner` makes `name`;
 * else the parameters are put on `inner`. */
static Z3_tactic tactic_with(tactics *tb, const char *name, Z3_tactic inner, size_t n, const char *const *kv)
{
    Z3_context c = tb->c;
    Z3_tactic t = inner ? inner : name ? kept(tb, Z3_mk_tactic(c, name)) : NULL;
    Z3_params prm;
    size_t i;
    if (!t || n == 0)
        return t;
    prm = Z3_mk_params(c);
    Z3_params_inc_ref(c, prm);
    for (i = 0; i < n; i++) {
        Z3_symbol k = Z3_mk_string_symbol(c, kv[2 * i]);
        const char *v = kv[2 * i + 1];
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
            Z3_params_set_bool(c, prm, k, v[0] == 't');
        else
            Z3_params_set_uint(c, prm, k, (unsigned)strtoul(v, NULL, 10));
    }
    t = kept(tb, Z3_tactic_using_params(c, t, prm));
    Z3_params_dec_ref(c, prm);
    return t;
}

/* and_then (or or_else) of `n` tactics; NULL when one is. */
static Z3_tactic tactic_seq(tactics *tb, bool or_else, size_t n, const Z3_tactic *ts)
{
    Z3_tactic r;
    size_t i;
    for (i = 0; i < n; i++)
        if (!ts[i])
            return NULL;
    r = ts[n - 1];
    for (i = n - 1; i-- > 0 && r;)
        r = kept(tb, or_else ? Z3_tactic_or_else(tb->c, ts[i], r) : Z3_tactic_and_then(tb->c, ts[i], r));
    return r;
}

/*
 * The solver of "Many divisions", referenced: Z3's QF_NIA tactic (preamble,
 * then bit-blasting of bounded non-linear terms, else the SMT core) without
 * its nlsat step. Z3's default solver when the tactic cannot be built on this
 * Z3 (an unknown tactic or parameter name); then the budget is Z3's to keep.
 */
static Z3_solver nia_solver(Z3_context c)
{
    static const char *const ctx_simp[] = {"max_depth", "30", "max_steps", "5000000"};
    static const char *const pull_ite[] = {"pull_cheap_ite", "true", "local_ctx", "true", "local_ctx_limit", "10000000"};
    static const char *const hoist[] = {"hoist_mul", "true"};
    static const char *const bvsize[] = {"nla2bv_max_bv_size", "64"};
    static const char *const local[] = {"local_ctx", "true", "local_ctx_limit", "10000000"};
    static const char *const blast[] = {"flat", "false", "hi_div0", "true", "elim_and", "true", "blast_distinct", "true"};
    static const char *const som[] = {"som", "true"};
    tactics tb;
    Z3_tactic pre[8], bv[6], sat[4], smt[2], alt[2], top[2], two[2], t;
    Z3_solver s = NULL;
    size_t i;

    tb.c = c;
    tb.n = 0;
    pre[0] = tactic_with(&tb, "simplify", NULL, 0, NULL);
    pre[1] = tactic_with(&tb, "propagate-values", NULL, 0, NULL);
    pre[2] = tactic_with(&tb, "ctx-simplify", NULL, 2, ctx_simp);
    pre[3] = tactic_with(&tb, "simplify", NULL, 3, pull_ite);
    pre[4] = tactic_with(&tb, "elim-uncnstr", NULL, 0, NULL);
    pre[5] = tactic_with(&tb, "lia2card", NULL, 0, NULL);
    pre[6] = tactic_with(&tb, "card2bv", NULL, 0, NULL);
    two[0] = tactic_with(&tb, "cofactor-term-ite", NULL, 0, NULL);
    two[1] = tactic_with(&tb, "skip", NULL, 0, NULL);
    pre[7] = tactic_seq(&tb, true, 2, two);
    bv[0] = tactic_with(&tb, "simplify", NULL, 0, NULL);
    bv[1] = tactic_with(&tb, "propagate-values", NULL, 0, NULL);
    bv[2] = tactic_with(&tb, "simplify", NULL, 2, local);
    bv[3] = tactic_with(&tb, "max-bv-sharing", NULL, 0, NULL);
    bv[4] = tactic_with(&tb, "bit-blast", NULL, 0, NULL);
    bv[5] = tactic_with(&tb, "sat", NULL, 0, NULL);
    sat[0] = tactic_with(&tb, "simplify", NULL, 1, hoist);
    sat[1] = tactic_with(&tb, "nla2bv", NULL, 1, bvsize);
    t = tactic_seq(&tb, false, 6, bv);
    two[0] = t ? tactic_with(&tb, NULL, t, 4, blast) : NULL;
    two[1] = tactic_with(&tb, "skip", NULL, 0, NULL);
    sat[2] = tactic_seq(&tb, true, 2, two);
    sat[3] = tactic_with(&tb, "fail-if-undecided", NULL, 0, NULL);
    smt[0] = tactic_with(&tb, "simplify", NULL, 1, som);
    smt[1] = tactic_with(&tb, "smt", NULL, 0, NULL);
    alt[0] = tactic_seq(&tb, false, 4, sat);
    alt[1] = tactic_seq(&tb, false, 2, smt);
    top[0] = tactic_seq(&tb, false, 8, pre);
    top[1] = tactic_seq(&tb, true, 2, alt);
    t = tactic_seq(&tb, false, 2, top);
    if (t) {
        s = Z3_mk_solver_from_tactic(c, t);
        if (Z3_get_error_code(c) != Z3_OK)
            s = NULL;
    }
    if (!s)
        s = Z3_mk_solver(c);
    Z3_solver_inc_ref(c, s);
    for (i = 0; i < tb.n; i++) /* the solver holds what it needs */
        Z3_tactic_dec_ref(c, tb.made[i]);
    return s;
}

/*
 * The same hard terms again. The incremental solver answers most queries in
 * microseconds, but each query asserted its hard terms afresh in a scope of
 * its own, and Z3 internalizes them anew every time: on kv48 the minimisation
 * of one core asks 7 questions over the same 976 terms with other
 * assumptions, 15 ms each, nearly all of it internalizing (the search itself:
 * 48 decisions). So the query's scope stays open after its answer, with the
 * list of its hard terms (p->inc_scope); a next query with the very same hard
 * terms asks in it again, only its assumptions new; any other query, an
 * answer that is not sat or unsat (a budget's stop, Z3's incompleteness) and
 * the end of the problem pop it. The question, hence the answer, is the same;
 * Z3 keeps what it learnt in the scope, so a model or core may differ.
 */

/* Whether scope `sc` is open with exactly hard[0..nhard-1] (in order). */
static bool same_hard(const struct sg_scope *sc, const sg_term *const *hard, size_t nhard)
{
    size_t i;
    if (!sc->open || sc->n != nhard)
        return false;
    for (i = 0; i < nhard; i++)
        if (sc->hard[i] != hard[i])
            return false;
    return true;
}

/* Pop the open scope `sc` of solver s, if any. */
static void close_scope(struct sg_scope *sc, Z3_context c, Z3_solver s)
{
    if (sc->open)
        Z3_solver_pop(c, s, 1);
    sc->open = false;
    sc->n = 0;
}

/*
 * Non-linear questions with assumptions. The full solver is a combined one: a
 * question without assumptions goes to Z3's tactic for the logic (nlsat for
 * non-linear integer arithmetic), one with assumptions to its incremental SMT
 * core. Resetting it before each question rebuilt both, and that was the
 * cost: prod300's probe asks 60 small questions (9 hard terms, 2
 * assumptions), and Z3_solver_assert after the reset was 44% of the check, the
 * search 4%. So such questions go to an incremental solver of their own
 * (p->nl) with the full solver's parameters (its simplex arithmetic, which
 * listens to the resource limit; the rlimit), asked in scopes like the linear
 * ones: the same SMT core answers the same question, without the rebuild.
 * Questions with many divisions keep the nia solver, which tracks no
 * assumption anyway.
 */

/*
 * One query on the solver in `*slot` (made on first use: an incremental one for p->inc and p->nl,
 * the general one for p->solver, nia_solver()'s for p->nia), counted into `stats`: an
 * incremental solver asks in a scope of the query's hard terms (its state is
 * kept, so a query costs what the problem costs; the scope stays open for a
 * next query with the same hard terms, above), the full solver is
 * reset first (it rebuilds Z3's tactic for the problem's logic every time,
 * about 3.7 ms even for a trivial problem). `timeout` 0: no wall-clock limit.
 * Same outputs as sg_problem_check; *fired says the watchdog stopped it.
 */
static int query(sg_problem *p, Z3_solver *slot, const sg_term *const *hard_t, const Z3_ast *hard,
                 size_t nhard, const Z3_ast *assumptions, size_t nassume, unsigned timeout, uint64_t rlimit,
                 const sg_budget *b, sg_check_stats *stats, Z3_lbool *res, Z3_model *model, size_t **core,
                 size_t *ncore, bool *core_all, char reason[64], bool *fired, sg_error *err)
{
    Z3_context c = sg_problem_context(p);
    sg_cancel *cancel = b ? b->cancel : NULL;
    Z3_solver s;
    Z3_params prm = NULL;
    uint64_t *set = &p->rlimit_set[slot == &p->inc ? 0 : slot == &p->solver ? 1 : slot == &p->nia ? 2 : 3];
    struct sg_scope *sc = slot == &p->inc ? &p->inc_scope : slot == &p->nl ? &p->nl_scope : NULL;
    bool incremental = sc != NULL; /* asked in scopes (p->inc, p->nl), else emptied first */
    size_t i;
    int rc = 0;

    *fired = false;
    if (!*slot) { /* made on first use (or the context's warm one), kept until sg_problem_free */
        if (slot == &p->nia) {
            *slot = nia_solver(c);
        } else if (slot == &p->inc && (*slot = sg_ctxpool_take_solver(p->contexts, c, set)) != NULL) {
            /* a warm one: *set says the parameters its last user left it with */
        } else {
            *slot = incremental ? Z3_mk_simple_solver(c) : Z3_mk_solver(c);
            Z3_solver_inc_ref(c, *slot);
        }
    }
    s = *slot;
    if (stats)
        stats->queries++;
    SG_COUNT(b ? b->rt : NULL, queries, 1);
    /* A solver keeps its parameters (a reset too): set them when it is new or the rlimit changes,
     * not at every query (a tenth of a small query's cost; the answers are the same), and before
     * its first assertion: Z3 builds a solver's SMT core with the parameters it has then, and
     * p->nl's arithmetic solver set afterwards was not the one that answered (high_powers.json
     * ran on past its rlimit) */
    if (*set != rlimit + 1) {
        prm = Z3_mk_params(c);
        Z3_params_inc_ref(c, prm);
        /* 0 is "no limit" for Z3 too: set it always */
        Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "rlimit"),
                           rlimit > 0xffffffffu ? 0xffffffffu : (unsigned)rlimit);
        /* Non-linear queries: Z3's simplex arithmetic solver (2), not the default lra one (6), whose
         * non-linear core runs on without noticing Z3_interrupt on high powers and long products. */
        if (slot != &p->inc)
            Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "arith.solver"), 2);
        Z3_solver_set_params(c, s, prm);
        *set = rlimit + 1;
    }
    if (incremental && !same_hard(sc, hard_t, nhard)) {
        close_scope(sc, c, s);
        if (sg__grow((void **)&sc->hard, &sc->cap, nhard + 1, sizeof *sc->hard))
            return sg_error_set(err, SG_ENOMEM, "out of memory asking Z3");
        Z3_solver_push(c, s);
        for (i = 0; i < nhard; i++) {
            sc->hard[i] = hard_t[i];
            if (hard[i])
                Z3_solver_assert(c, s, hard[i]);
        }
        sc->n = nhard;
        sc->open = true;
    } else if (!incremental) {
        Z3_solver_reset(c, s);
    }
    for (i = 0; i < nhard && !incremental; i++)
        if (hard[i])
            Z3_solver_assert(c, s, hard[i]);
    {
        sg_watchdog w;
        /* a cancel request from another thread interrupts the check through the token */
        if (!sg_cancel__enter(cancel, c)) {
            snprintf(reason, 64, "canceled");
            goto cleanup;
        }
        if (timeout)
            sg_watchdog_arm(&w, c, timeout);
        *res = nassume ? Z3_solver_check_assumptions(c, s, (unsigned)nassume, assumptions) : Z3_solver_check(c, s);
        *fired = timeout ? sg_watchdog_disarm(&w) : false;
        sg_cancel__leave(cancel, c);
        if (*res == Z3_L_UNDEF && sg_cancel_requested(cancel)) {
            snprintf(reason, 64, "canceled");
            goto cleanup;
        }
        if (*fired && *res == Z3_L_UNDEF) {
            snprintf(reason, 64, "timeout (%u ms)", timeout);
            goto cleanup;
        }
    }
    if (Z3_get_error_code(c) != Z3_OK) {
        rc = sg_error_set(err, SG_ERROR, "Z3: %s", Z3_get_error_msg(c, Z3_get_error_code(c)));
        goto cleanup;
    }
    if (*res == Z3_L_TRUE && model) {
        *model = Z3_solver_get_model(c, s);
        Z3_model_inc_ref(c, *model);
    } else if (*res == Z3_L_FALSE && core && slot == &p->nia) {
        /* a solver made of tactics (nia_solver) answers with assumptions as plain assertions and
         * tracks none of them: its core is empty, which would say the hard terms alone conflict.
         * Every assumption is a core (the question itself), and *core_all says so. */
        if (!(*core = sg__malloc((nassume + 1) * sizeof **core))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading an unsat core");
            goto cleanup;
        }
        for (i = 0; i < nassume; i++)
            (*core)[(*ncore)++] = i;
        *core_all = true;
    } else if (*res == Z3_L_FALSE && core) {
        Z3_ast_vector v = Z3_solver_get_unsat_core(c, s);
        unsigned n, j;
        Z3_ast_vector_inc_ref(c, v);
        n = Z3_ast_vector_size(c, v);
        *core = sg__malloc((n + 1) * sizeof **core);
        if (!*core) {
            Z3_ast_vector_dec_ref(c, v);
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading an unsat core");
            goto cleanup;
        }
        for (j = 0; j < n; j++) {
            Z3_ast a = Z3_ast_vector_get(c, v, j);
            for (i = 0; i < nassume; i++)
                if (Z3_is_eq_ast(c, a, assumptions[i])) {
                    (*core)[(*ncore)++] = i;
                    break;
                }
        }
        Z3_ast_vector_dec_ref(c, v);
    } else if (*res == Z3_L_UNDEF) {
        unknown_reason(reason, Z3_solver_get_reason_unknown(c, s));
        /* neither the caller nor the watchdog stopped it: a tactic that ran out of the resource
         * limit says "canceled" (Z3 cancels itself at the limit), which would name a clock */
        if (rlimit && strcmp(reason, "canceled") == 0)
            snprintf(reason, 64, "max. resource limit exceeded");
    }
cleanup:
    if (prm)
        Z3_params_dec_ref(c, prm);
    if (incremental && (rc || *res == Z3_L_UNDEF)) /* a stopped or failed solver starts afresh */
        close_scope(sc, c, s);
    return rc;
}

/* Whether an unknown answer of the incremental solver was a budget's stop, not its incompleteness. */
static bool budget_stop(const char *reason)
{
    return strstr(reason, "timeout") || strstr(reason, "canceled") || strstr(reason, "resource limit");
}

/* Mark term `a` seen in the current walk; *first says it was not yet. Grows the marks. */
static int visit(sg_problem *p, const sg_term *a, bool *first)
{
    unsigned id = sg_t_id(a);
    if (sg__grow_zeroed((void **)&p->seen, &p->nseen, (size_t)id + 1, sizeof *p->seen))
        return SG_ENOMEM;
    *first = p->seen[id] != p->stamp;
    p->seen[id] = p->stamp;
    return 0;
}

static bool is_numeral(const sg_term *t) { return sg_t_op(t) == SG_T_NUM; }

/* Whether term `t` is linear in itself: no product of two non-numerals, no division or modulo
 * by a non-numeral, no power. */
static bool linear_op(const sg_term *t)
{
    size_t k, na = sg_t_nargs(t), nonnum = 0;
    switch (sg_t_op(t)) {
    case SG_T_MUL:
        for (k = 0; k < na; k++)
            nonnum += !is_numeral(sg_t_arg(t, k));
        return nonnum <= 1;
    case SG_T_DIV:
    case SG_T_MOD:
        return na == 2 && is_numeral(sg_t_arg(t, 1));
    case SG_T_POWER:
        return false;
    default:
        return true;
    }
}

/* Whether `t` is an integer division or modulo (also Python's, through its ite) by a non-literal. */
static bool nonlinear_div(sg_problem *p, const sg_term *t)
{
    switch (sg_t_op(t)) {
    case SG_T_DIV:
        if (sg_t_sort(p->ts, t) != SG_TS_INT)
            return false;
        /* fall through */
    case SG_T_MOD:
        return sg_t_nargs(t) == 2 && !is_numeral(sg_t_arg(t, 1));
    default:
        return false;
    }
}

/*
 * Whether every term of `a[0..na-1]` and `b[0..nb-1]` is linear arithmetic
 * (linear_op at every node). Each shared subterm is walked once (marks by
 * term id), so this costs the size of the formula, which Z3 reads anyway. On
 * running out of memory it answers false: the full solver is always right,
 * only slower. When not linear, *ndiv counts the distinct integer divisions
 * and modulos by a non-literal (the walk then goes on to the end; on running
 * out of memory the count is a lower bound).
 */
static bool linear(sg_problem *p, const sg_term *const *a, size_t na, const sg_term *const *b, size_t nb,
                   size_t *ndiv)
{
    const sg_term **stack = NULL;
    size_t top = 0, cap = 0, i;
    bool lin = true, first, oom = false;

    *ndiv = 0;
    if (++p->stamp == 0) { /* wrapped: forget every old mark */
        memset(p->seen, 0, p->nseen * sizeof *p->seen);
        p->stamp = 1;
    }
    for (i = 0; i < na + nb && !oom; i++) {
        const sg_term *root = i < na ? a[i] : b[i - na];
        if (!root)
            continue;
        if (sg__grow((void **)&stack, &cap, top + 1, sizeof *stack)) {
            lin = false, oom = true;
            break;
        }
        stack[top++] = root;
        while (top > 0) {
            const sg_term *t = stack[--top];
            size_t k, n;
            if (visit(p, t, &first)) {
                lin = false, oom = true;
                break;
            }
            if (!first || (n = sg_t_nargs(t)) == 0)
                continue;
            if (!linear_op(t)) {
                lin = false;
                *ndiv += nonlinear_div(p, t);
            }
            if (sg__grow((void **)&stack, &cap, top + n, sizeof *stack)) {
                lin = false, oom = true;
                break;
            }
            for (k = 0; k < n; k++)
                stack[top++] = sg_t_arg(t, k);
        }
    }
    sg_free(stack);
    return lin;
}

/* The asts of terms[0..n-1] (new array, sg_free; NULL entries stay NULL) into *out. */
static int asts_of(sg_problem *p, const sg_term *const *terms, size_t n, Z3_ast **out, sg_error *err)
{
    size_t i;
    *out = sg__malloc((n + 1) * sizeof **out);
    if (!*out)
        return sg_error_set(err, SG_ENOMEM, "out of memory asking Z3");
    for (i = 0; i < n; i++)
        if (terms[i] && !((*out)[i] = sg_t_z3(p->ts, terms[i])))
            return sg_error_set(err, sg_terms_failed(p->ts) == SG_ENOMEM ? SG_ENOMEM : SG_ERROR, "Z3: %s",
                                sg_terms_error_msg(p->ts));
        else if (!terms[i])
            (*out)[i] = NULL;
    return 0;
}

/* Count a finished query into the engine's counters; returns `rc`. */
static int counted(const sg_budget *b, int rc, Z3_lbool res, const char *reason)
{
    const sg_runtime *rt = b ? b->rt : NULL;
    if (rc == 0 && res == Z3_L_UNDEF && budget_stop(reason) && !sg_cancel_requested(b ? b->cancel : NULL))
        SG_COUNT(rt, budget_stops, 1);
    return rc;
}

int sg_problem_check(sg_problem *p, const sg_term *const *hard_t, size_t nhard, const sg_term *const *assume_t,
                     size_t nassume, const sg_budget *b, sg_check_stats *stats, Z3_lbool *res,
                     Z3_model *model, size_t **core, size_t *ncore, bool *core_all, char reason[64], sg_error *err)
{
    unsigned timeout = b ? b->query_timeout_ms : 0;
    uint64_t rlimit = b ? b->query_rlimit : 0;
    double t0 = sg_problem_now();
    Z3_ast *hard = NULL, *assumptions = NULL;
    bool fired, lin;
    size_t ndiv;
    int rc;

    *res = Z3_L_UNDEF;
    if (model)
        *model = NULL;
    if (core) {
        *core = NULL;
        *ncore = 0;
        *core_all = false;
    }
    reason[0] = '\0';
    if (b && sg_cancel_requested(b->cancel)) {
        snprintf(reason, 64, "canceled");
        return 0;
    }
    if (b && b->deadline > 0) {
        double left = b->deadline - t0;
        if (left <= 0) {
            snprintf(reason, 64, "time budget");
            return 0;
        }
        if (timeout == 0 || left * 1000 < timeout)
            timeout = (unsigned)(left * 1000) + 1;
    }
    lin = linear(p, hard_t, nhard, assume_t, nassume, &ndiv);
    if ((rc = asts_of(p, hard_t, nhard, &hard, err)) || (rc = asts_of(p, assume_t, nassume, &assumptions, err)))
        goto cleanup;
    /* Linear problems go to Z3's incremental SMT core, kept between queries: a small one is
     * answered in microseconds. Non-linear ones, and linear ones it calls incomplete, go to the
     * full solver, which picks Z3's tactic for the logic (and listens to the resource limit in
     * non-linear arithmetic, which the SMT core of Z3 4.8.12 does not always do). */
    if (lin) {
        rc = query(p, &p->inc, hard_t, hard, nhard, assumptions, nassume, timeout, rlimit, b,
                   stats, res, model, core, ncore, core_all, reason, &fired, err);
        if (rc || *res != Z3_L_UNDEF || fired || budget_stop(reason)) {
            rc = counted(b, rc, *res, reason);
            goto cleanup;
        }
        if (timeout) {
            double spent = (sg_problem_now() - t0) * 1000;
            if (spent >= timeout) {
                snprintf(reason, 64, "timeout (%u ms)", timeout);
                rc = counted(b, 0, *res, reason);
                goto cleanup;
            }
            timeout -= (unsigned)spent;
        }
        reason[0] = '\0';
    }
    if (!lin && nassume > 0 && ndiv <= SG_NIA_MANY_DIVS) /* (above: "Non-linear questions with assumptions") */
        rc = query(p, &p->nl, hard_t, hard, nhard, assumptions, nassume, timeout, rlimit, b, stats, res, model,
                   core, ncore, core_all, reason, &fired, err);
    else
        rc = query(p, ndiv > SG_NIA_MANY_DIVS ? &p->nia : &p->solver, hard_t, hard, nhard, assumptions, nassume,
                   timeout, rlimit, b, stats, res, model, core, ncore, core_all, reason, &fired, err);
    rc = counted(b, rc, *res, reason);
cleanup:
    sg_free(hard);
    sg_free(assumptions);
    return rc;
}

bool sg_problem_model_int(sg_problem *p, Z3_model model, const sg_term *term, sg_int *out)
{
    Z3_context c = sg_problem_context(p);
    Z3_ast v = NULL, t = sg_t_z3(p->ts, term);
    const char *txt;
    if (!c || !t || !Z3_model_eval(c, model, t, true, &v) || !v || !Z3_is_numeral_ast(c, v))
        return false;
    txt = Z3_get_numeral_string(c, v);
    return txt && sg_int_parse(out, txt, strlen(txt)) == 0;
}
