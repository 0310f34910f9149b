/*
 * presolve_enum.c - exact evaluation over small boxes (solver/presolve.h,
 * sg_presolve_enumerate; presolve_impl.h, sg_presolve__enum_decide).
 *
 * Does: once the presolve (presolve.c) has written every symbol of a
 * question as an affine form over a few class roots with small finite
 * domains, walk every point of that box and evaluate (expr/eval.c: Python's
 * integer semantics) - to prove a question that holds at every point
 * (enum_decide), or to find the first model at which constraints hold or
 * fail (sg_presolve_enumerate, for phase 2 of the check on small components).
 *
 * Does not: read facts, keep classes or domains, or decide anything over an
 * unbounded box (presolve.c); explain relations (presolve_forest.c); touch Z3.
 * Every walk is charged to the presolve's budget (enum_budget: linear in the problem's size).
 */
#include <string.h>

#include "solver/presolve_impl.h"
#include "trace/trace_impl.h"
#include "util/util.h"

#define ENUM_POINTS 4096        /* box points one question may enumerate (enum_decide) */
#define ENUM_BUDGET (1u << 20)  /* evaluations one presolve may spend enumerating, all questions, */
#define ENUM_PER_FACT 4096u     /* plus this many per constraint and symbol: linear in the problem */
#define ENUM_SYMS 16            /* symbols of an enumerated question */
#define ENUM_ROOTS 4            /* class roots its symbols range over */

/* The presolve's enumeration budget: a floor for small problems, then linear in the problem's size,
 * so that a trace of many small components (thousands of list inputs) gets the same allowance per
 * component as one of a few (ENUM_BUDGET alone ran out after ~700 four-dim groups, and the rest
 * went to Z3's non-linear arithmetic). */
static unsigned long long enum_budget(const sg_presolve *ps)
{
    return ENUM_BUDGET + (unsigned long long)ENUM_PER_FACT * (ps->p->ncons + ps->p->nsyms);
}

/* The distinct symbols of `e` into syms[0..*n-1] (at most ENUM_SYMS); false when there are more,
 * or `e` is too large to walk. */
static bool enum_symbols(sg_presolve *ps, const sg_expr *e, const sg_expr **syms, size_t *n, int depth)
{
    size_t i, k = sg_expr_nargs(e);
    if (depth > 64 || ++ps->work > WORK_MAX)
        return false;
    if (sg_expr_kind(e) == SG_SYM) {
        for (i = 0; i < *n; i++)
            if (syms[i] == e)
                return true;
        if (*n == ENUM_SYMS)
            return false;
        syms[(*n)++] = e;
        return true;
    }
    for (i = 0; i < k; i++)
        if (!enum_symbols(ps, sg_expr_arg(e, i), syms, n, depth + 1))
            return false;
    return true;
}

/*
 * `e` at every point of the box, exactly: TRUE when every integer symbol of `e` is an affine form
 * over at most ENUM_ROOTS class roots with finite domains whose product has at most ENUM_POINTS
 * points, and `e` evaluates (expr/eval.c: Python's integer semantics) to True at each of them;
 * UNKNOWN otherwise - a False or undefined point may lie outside H's models, so FALSE is never
 * concluded here. Sound as the interval evaluator is: every model of H is a point of the box (the
 * class maps and substitutions are equalities of H, the domains enclose its values). err_div_2d
 * _reshape's fixed spec (B = 2*_B, _B in [1, 32], guards with floors and modulos of products)
 * is proved in 32 evaluations instead of a non-linear Z3 query.
 */
sg_tri sg_presolve__enum_decide(sg_presolve *ps, const sg_expr *e)
{
    const sg_expr *syms[ENUM_SYMS];
    size_t nsyms = 0, roots[ENUM_ROOTS], nroots = 0, i, j;
    sg_int lo[ENUM_ROOTS], at[ENUM_ROOTS];
    lin form[ENUM_SYMS];
    size_t idx[ENUM_SYMS];
    double points;

    ps->work = 0;
    if (!enum_symbols(ps, e, syms, &nsyms, 0) || nsyms == 0)
        return SG_TRI_UNKNOWN;
    for (i = 0; i < nsyms; i++) {
        long x = sg_expr_sort(syms[i]) == SG_SORT_INT ? sg_presolve__sym_node(ps, syms[i]) : -1;
        idx[i] = sg_expr_symbol_index(syms[i]);
        if (x < 0 || idx[i] >= ps->nbox || !sg_presolve__lin_node(ps, (size_t)x, &form[i]))
            return SG_TRI_UNKNOWN;
        for (j = 0; j < (size_t)form[i].n; j++) {
            size_t r = form[i].v[j], m;
            for (m = 0; m < nroots && roots[m] != r; m++)
                ;
            if (m == nroots) {
                if (nroots == ENUM_ROOTS)
                    return SG_TRI_UNKNOWN;
                roots[nroots++] = r;
            }
        }
    }
    points = 1;
    for (j = 0; j < nroots; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
        sg_int span;
        if (d->lo_inf || d->hi_inf || !sg__sub(d->hi, d->lo, &span) || span < 0 || span >= ENUM_POINTS)
            return SG_TRI_UNKNOWN;
        points *= (double)(span + 1);
        lo[j] = at[j] = d->lo;
    }
    if (points > ENUM_POINTS || ps->enum_spent + points > enum_budget(ps))
        return SG_TRI_UNKNOWN;
    if (!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals)))
        return SG_TRI_UNKNOWN;
    ps->enum_spent += (unsigned)points;
    for (;;) {
        sg_value v;
        for (i = 0; i < nsyms; i++) { /* symbol i = form.k + sum c_j * root_j */
            sg_int x = form[i].k, t;
            for (j = 0; j < (size_t)form[i].n; j++) {
                size_t m;
                for (m = 0; form[i].v[j] != roots[m]; m++)
                    ;
                if (!sg__mul(form[i].c[j], at[m], &t) || !sg__add(x, t, &x))
                    return SG_TRI_UNKNOWN;
            }
            ps->evals[idx[i]] = x;
        }
        if (sg_expr_eval(&v, ps->p->pool, e, ps->evals, ps->nbox, NULL) != 0 || v.kind != SG_VAL_BOOL || !v.num)
            return SG_TRI_UNKNOWN;
        for (j = 0; j < nroots; j++) { /* the next point, odometer order */
            const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
            if (at[j] < d->hi) {
                at[j]++;
                break;
            }
            at[j] = lo[j];
        }
        if (j == nroots)
            return SG_TRI_TRUE;
    }
}

/* ---- Enumeration of the models (sg_presolve_enumerate) ------------------------------------------ */

static int eval_int_at(sg_presolve *ps, const sg_expr *e, sg_int *out)
{
    sg_value v;
    if (sg_expr_eval(&v, ps->p->pool, e, ps->evals, ps->nbox, NULL) != 0 || v.kind != SG_VAL_INT)
        return -1;
    *out = v.num;
    return 0;
}

/* Constraint k, or symbol k - ncons's definition by its replacement, at the point set in ps->evals
 * (symbols) and dvals (input dims): 1 holds, 0 does not, -1 undefined or unreadable there. */
static int holds_at(sg_presolve *ps, size_t k, const sg_int *dvals)
{
    const sg_problem *p = ps->p;
    const sg_symbol_info *si;
    sg_value v;
    sg_int a;
    if (k >= p->ncons) { /* a definition: s == replacement */
        si = &p->syms[k - p->ncons];
        if (!si->replacement || eval_int_at(ps, si->replacement, &a))
            return -1;
        return ps->evals[sg_expr_symbol_index(si->sym)] == a;
    }
    switch (p->cons[k].kind) {
    case SG_CORE_GUARD:
        if (!p->cons[k].expr || sg_expr_eval(&v, p->pool, p->cons[k].expr, ps->evals, ps->nbox, NULL) != 0 ||
            v.kind != SG_VAL_BOOL)
            return -1;
        return v.num != 0;
    case SG_CORE_RANGE: {
        sg_int x;
        si = &p->syms[p->cons[k].index];
        x = ps->evals[sg_expr_symbol_index(si->sym)];
        return (si->lo.inf || x >= si->lo.v) && (si->hi.inf || x <= si->hi.v);
    }
    case SG_CORE_REPLACEMENT:
        si = &p->syms[p->cons[k].index];
        if (!si->replacement || eval_int_at(ps, si->replacement, &a))
            return -1;
        return ps->evals[sg_expr_symbol_index(si->sym)] == a;
    case SG_CORE_INPUT:
        if (!p->inputs[p->cons[k].index].value || eval_int_at(ps, p->inputs[p->cons[k].index].value, &a))
            return -1;
        return dvals[p->cons[k].index] == a;
    default:
        return -1;
    }
}

int sg_presolve_enumerate(sg_presolve *ps, const size_t *nodes, size_t nn, const size_t *cons, size_t nc,
                          bool violation, sg_int *dvals)
{
    const sg_problem *p = ps->p;
    size_t roots[ENUM_ROOTS], nroots = 0, i, j, *at_root = NULL, at[ENUM_ROOTS], size[ENUM_ROOTS];
    sg_int lo[ENUM_ROOTS], hi[ENUM_ROOTS], start[ENUM_ROOTS], *ma = NULL, *mb = NULL, *order[ENUM_ROOTS];
    bool started[ENUM_ROOTS];
    double points = 1;
    int res = -1;

    memset(order, 0, sizeof order);
    if (!sg_presolve_enabled() || ps->empty || ps->inexact || ps->ndefs > 0 || nn == 0)
        return -1;
    if (!(at_root = sg__malloc(nn * sizeof *at_root)) || !(ma = sg__malloc(nn * sizeof *ma)) ||
        !(mb = sg__malloc(nn * sizeof *mb)))
        goto done;
    for (i = 0; i < nn; i++) { /* node i = ma * root + mb */
        size_t r;
        if (nodes[i] >= ps->nnodes || !sg_presolve__find(ps, nodes[i], &r, &ma[i], &mb[i]) || sg_presolve__get(ps, r)->elim)
            goto done;
        if (nodes[i] >= p->ninputs && nodes[i] < p->ninputs + p->nsyms &&
            (sg_expr_sort(p->syms[nodes[i] - p->ninputs].sym) != SG_SORT_INT ||
             sg_expr_symbol_index(p->syms[nodes[i] - p->ninputs].sym) >= ps->nbox))
            goto done;
        for (j = 0; j < nroots && roots[j] != r; j++)
            ;
        if (j == nroots) {
            const sg_interval *d = &sg_presolve__get(ps, r)->dom;
            sg_int span;
            if (nroots == ENUM_ROOTS || d->lo_inf || d->hi_inf || !sg__sub(d->hi, d->lo, &span) || span < 0 ||
                span >= ENUM_POINTS)
                goto done;
            roots[nroots] = r;
            lo[nroots] = d->lo;
            hi[nroots] = d->hi;
            size[nroots] = (size_t)span + 1;
            started[nroots++] = false;
            points *= (double)(span + 1);
        }
        at_root[i] = j;
        if (nodes[i] < p->ninputs && !started[j]) { /* the root's value at the example sizes */
            sg_int t;
            if (sg__sub(dvals[nodes[i]], mb[i], &t)) {
                start[j] = ma[i] * t; /* ma = +-1 */
                start[j] = start[j] < lo[j] ? lo[j] : start[j] > hi[j] ? hi[j] : start[j];
                started[j] = true;
            }
        }
    }
    if (points > ENUM_POINTS || ps->enum_spent >= enum_budget(ps) || ps->empty)
        goto done; /* (the budget is charged with the points visited: most searches stop early) */
    if (!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals)))
        goto done;
    /* each root's values from its example value outwards: s, s+1, s-1, s+2, ... (the lowest
     * first for a root no input dim gives an example value) */
    for (j = 0; j < nroots; j++) {
        sg_int s0 = started[j] ? start[j] : lo[j], up = s0, down = s0 - 1;
        size_t m = 0;
        if (!(order[j] = sg__malloc(size[j] * sizeof *order[j])))
            goto done;
        while (m < size[j]) {
            if (up <= hi[j])
                order[j][m++] = up++;
            if (m < size[j] && down >= lo[j])
                order[j][m++] = down--;
        }
        at[j] = 0;
    }
    for (;; ps->enum_spent++) {
        bool model = true, all = true;
        for (i = 0; i < nn; i++) {
            sg_int x;
            if (!sg__mul(ma[i], order[at_root[i]][at[at_root[i]]], &x) || !sg__add(x, mb[i], &x))
                goto done;
            if (nodes[i] < p->ninputs)
                dvals[nodes[i]] = x;
            else if (nodes[i] < p->ninputs + p->nsyms)
                ps->evals[sg_expr_symbol_index(p->syms[nodes[i] - p->ninputs].sym)] = x;
        }
        for (j = 0; j < ps->nleft && model; j++) { /* a model: the facts left out hold too */
            int h = holds_at(ps, ps->left[j], dvals);
            if (h < 0)
                goto done;
            model = h == 1;
        }
        for (j = 0; j < nc && model && all; j++) {
            int h = holds_at(ps, cons[j], dvals);
            if (h < 0)
                goto done;
            all = h == 1;
        }
        if (model && all != violation) {
            res = 1;
            goto done;
        }
        for (j = 0; j < nroots; j++) { /* the next point, odometer order */
            if (at[j] + 1 < size[j]) {
                at[j]++;
                break;
            }
            at[j] = 0;
        }
        if (j == nroots) {
            res = 0;
            goto done;
        }
    }
done:
    for (j = 0; j < ENUM_ROOTS; j++)
        sg_free(order[j]);
    sg_free(at_root);
    sg_free(ma);
    sg_free(mb);
    return res;
}
