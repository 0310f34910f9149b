/*
 * presolve_enum.c - exact evaluation over small boxes (solver/presolve.h,
 * sg_presolve_enumerate; presolve_impl.h, sg_presolve__enum_decide).
 *
 * Does: once the presolve (presolve.c) has written every symbol of a
 * question as an affine form over a few class roots with small finite
 * domains, walk every point of that box and evaluate (expr/eval.c: Python's
 * integer semantics) - to prove a question that holds at every point
 * (enum_decide), or to find the first model at which constraints hold or
 * fail (sg_presolve_enumerate, for phase 2 of the check on small components);
 * on larger ones, try the example point and its one-root neighbours for a model
 * failing a constraint (sg_presolve_violate).
 *
 * Does not: read facts, keep classes or domains, or decide anything over an
 * unbounded box (presolve.c); explain relations (presolve_forest.c); touch Z3.
 * Every walk is charged to the presolve's budget (enum_budget: linear in the problem's size).
 */
#include <stdlib.h>
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


/* Are the models of the facts the points of the box over the roots not substituted where each
 * substituted root's value (its definition's) lies in its domain and the facts left out hold
 * (every fact read exactly, substituted or left out; consistent)? What walking them needs. */
static bool models_are_walkable(const sg_presolve *ps)
{
    return sg_presolve_enabled() && !ps->empty && !ps->inexact;
}

/* Has node x a value slot (an input dim, or an Int symbol the evaluator reads)? */
static bool node_has_slot(const sg_presolve *ps, size_t x)
{
    const sg_problem *p = ps->p;
    if (x >= ps->nnodes || x >= p->ninputs + p->nsyms)
        return false;
    return x < p->ninputs || (sg_expr_sort(p->syms[x - p->ninputs].sym) == SG_SORT_INT &&
                              sg_expr_symbol_index(p->syms[x - p->ninputs].sym) < ps->nbox);
}


/* Where node x's value goes: an input dim's size in dvals[], a symbol's value in ps->evals. */
static sg_int *node_slot(sg_presolve *ps, size_t x, sg_int *dvals)
{
    const sg_problem *p = ps->p;
    return x < p->ninputs ? &dvals[x] : &ps->evals[sg_expr_symbol_index(p->syms[x - p->ninputs].sym)];
}

/* The value of the root of input dim x = ma * root + mb (ma = +-1) at its size dvals[x]; false
 * when x is not an input dim or on overflow. */
static bool root_at_example(const sg_presolve *ps, size_t x, sg_int ma, sg_int mb, const sg_int *dvals, sg_int *v)
{
    sg_int t;
    if (x >= ps->p->ninputs || (ma != 1 && ma != -1) || !sg__sub(dvals[x], mb, &t))
        return false;
    *v = ma * t;
    return true;
}

/* A value the walk sets or tests: node `node`'s (an input dim's size or an Int symbol's value,
 * written to its slot), or, for `check`, an eliminated class root's, which a model keeps in the
 * root's domain; f is its form over the walk's roots (indices into roots[]). */
typedef struct wform {
    size_t node;
    bool check;
    lin f;
} wform;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Index of root r in roots[0..nr-1] (sorted), or SIZE_MAX. */
static size_t root_index(size_t r, const size_t *roots, size_t nr)
{
    size_t lo = 0, hi = nr;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (roots[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nr && roots[lo] == r ? lo : SIZE_MAX;
}

/* The value of w at the roots' values at[]: false on overflow. */
static bool wform_value(const wform *w, const sg_int *at, sg_int *out)
{
    sg_int x = w->f.k, t;
    int j;
    for (j = 0; j < w->f.n; j++)
        if (!sg__mul(w->f.c[j], at[w->f.v[j]], &t) || !sg__add(x, t, &x))
            return false;
    *out = x;
    return true;
}

/*
 * The forms of a walk over the models: nodes[0..nn-1] (each with a value slot) as forms over class
 * roots, in that order, then each class root the epoch substituted (a check: a model keeps its
 * value in its domain, which its definition over the other roots does not say); the roots they
 * read into *roots (sorted, *nr of them) and the forms over their indices. A node whose root is
 * not substituted reads one root with coefficient +-1. false when a node has no value slot, a form
 * cannot be read, `few` and the forms read more than ENUM_ROOTS roots (found as they are read, so a
 * large component is given up at once), or out of memory (*w and *roots are then NULL).
 */
static bool walk_forms(sg_presolve *ps, const size_t *nodes, size_t nn, bool few, wform **w, size_t *nw,
                       size_t **roots, size_t *nr)
{
    size_t i, j, n = 0, nu = 0, seen[ENUM_ROOTS], nseen = 0;
    int t;
    *roots = NULL;
    *nw = *nr = 0;
    if (!(*w = sg__calloc(nn + ps->ntouched + 1, sizeof **w)))
        return false;
    for (i = 0; i < nn + ps->ntouched; i++) {
        size_t x = i < nn ? nodes[i] : ps->touched[i - nn];
        if (i < nn && !node_has_slot(ps, x))
            goto fail;
        if (i >= nn && (!sg_presolve__get(ps, x)->elim || sg_presolve__get(ps, x)->par != x))
            continue;
        (*w)[n].node = x;
        (*w)[n].check = i >= nn;
        ps->work = 0;
        if (!sg_presolve__lin_node(ps, x, &(*w)[n].f))
            goto fail;
        for (t = 0; few && t < (*w)[n].f.n; t++) { /* (few roots: a scan) */
            for (j = 0; j < nseen && seen[j] != (*w)[n].f.v[t]; j++)
                ;
            if (j == nseen && nseen == ENUM_ROOTS)
                goto fail;
            if (j == nseen)
                seen[nseen++] = (*w)[n].f.v[t];
        }
        nu += (size_t)(*w)[n++].f.n;
    }
    *nw = n;
    if (!(*roots = sg__malloc((nu + 1) * sizeof **roots)))
        goto fail;
    for (i = 0; i < n; i++)
        for (t = 0; t < (*w)[i].f.n; t++)
            (*roots)[(*nr)++] = (*w)[i].f.v[t];
    qsort(*roots, *nr, sizeof **roots, cmp_size);
    for (i = j = 0; i < *nr; i++)
        if (j == 0 || (*roots)[j - 1] != (*roots)[i])
            (*roots)[j++] = (*roots)[i];
    *nr = j;
    for (i = 0; i < n; i++)
        for (t = 0; t < (*w)[i].f.n; t++)
            (*w)[i].f.v[t] = root_index((*w)[i].f.v[t], *roots, *nr);
    return true;
fail:
    sg_free(*w);
    sg_free(*roots);
    *w = NULL;
    *roots = NULL;
    return false;
}

/*
 * Whether facts f[0..n-1] (holds_at's numbering) all hold at the point set: 1 every one holds,
 * 0 one is false, -1 none is false but one cannot be evaluated there. The answer does not depend
 * on the order, so the order is the walk's to choose: a false fact moves to the front, where the
 * next points (neighbours in the walk) are likely to fail it too - most points of an unsatisfiable
 * question are rejected by their first evaluation instead of after every fact that holds there.
 */
static int first_false(sg_presolve *ps, size_t *f, size_t n, const sg_int *dvals)
{
    size_t j;
    int res = 1;
    for (j = 0; j < n; j++) {
        int h = holds_at(ps, f[j], dvals);
        if (h == 0) {
            size_t t = f[j];
            f[j] = f[0];
            f[0] = t;
            return 0;
        }
        if (h < 0)
            res = -1;
    }
    return res;
}

int sg_presolve_enumerate(sg_presolve *ps, const size_t *nodes, size_t nn, const size_t *cons, size_t nc,
                          bool violation, sg_int *dvals)
{
    wform *w = NULL;
    size_t *roots = NULL, nw = 0, nr = 0, nroots = 0, i, j, at[ENUM_ROOTS], size[ENUM_ROOTS], *lorder = NULL,
           *corder = NULL, perm[ENUM_ROOTS];
    sg_int lo[ENUM_ROOTS], hi[ENUM_ROOTS], start[ENUM_ROOTS], *order[ENUM_ROOTS], val[ENUM_ROOTS];
    sg_int **dst = NULL; /* [nw] where form i's value goes at each point (node_slot, once; NULL: a check) */
    bool started[ENUM_ROOTS];
    double points = 1;
    int res = -1, t;

    memset(order, 0, sizeof order);
    if (!models_are_walkable(ps) || nn == 0)
        return -1;
    if (!walk_forms(ps, nodes, nn, true, &w, &nw, &roots, &nr))
        goto done;
    /* the roots in the order the forms first read them (the odometer's, the first fastest) */
    for (i = 0; i < nw; i++)
        for (t = 0; t < w[i].f.n; t++) {
            size_t r = w[i].f.v[t];
            for (j = 0; j < nroots && perm[j] != r; j++)
                ;
            if (j == nroots)
                perm[nroots++] = r;
        }
    for (j = 0; j < nroots; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[perm[j]])->dom;
        sg_int span;
        if (d->lo_inf || d->hi_inf || !sg__sub(d->hi, d->lo, &span) || span < 0 || span >= ENUM_POINTS)
            goto done;
        lo[j] = d->lo;
        hi[j] = d->hi;
        size[j] = (size_t)span + 1;
        started[j] = false;
        points *= (double)(span + 1);
    }
    for (i = 0; i < nw; i++) /* the forms over the odometer's roots */
        for (t = 0; t < w[i].f.n; t++) {
            for (j = 0; perm[j] != w[i].f.v[t]; j++)
                ;
            w[i].f.v[t] = j;
        }
    /* each root starts at its value at the example sizes, from the first input dim that is +-1 times it plus
     * a constant */
    for (i = 0; i < nw; i++) {
        j = w[i].f.n == 1 ? w[i].f.v[0] : 0;
        if (!w[i].check && w[i].f.n == 1 && !started[j] &&
            root_at_example(ps, w[i].node, w[i].f.c[0], w[i].f.k, dvals, &start[j])) {
            start[j] = start[j] < lo[j] ? lo[j] : start[j] > hi[j] ? hi[j] : start[j];
            started[j] = true;
        }
    }
    if (points > ENUM_POINTS || ps->enum_spent >= enum_budget(ps) || ps->empty)
        goto done; /* (the budget is charged with the points visited: most searches stop early) */
    if ((!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals))) ||
        !(dst = sg__calloc(nw + 1, sizeof *dst)) || !(lorder = sg__malloc((ps->nleft + 1) * sizeof *lorder)) ||
        !(corder = sg__malloc((nc + 1) * sizeof *corder)))
        goto done;
    for (i = 0; i < nw; i++)
        dst[i] = w[i].check ? NULL : node_slot(ps, w[i].node, dvals);
    for (i = 0; i < ps->nleft; i++)
        lorder[i] = ps->left[i];
    for (i = 0; i < nc; i++)
        corder[i] = cons[i];
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
        int model = 1, all = 1;
        for (j = 0; j < nroots; j++)
            val[j] = order[j][at[j]];
        for (i = 0; i < nw; i++) { /* the nodes' values; the substituted roots kept in their domains */
            sg_int x;
            if (!wform_value(&w[i], val, &x))
                goto done;
            if (dst[i]) {
                *dst[i] = x;
            } else if (model) {
                const sg_interval *d = &sg_presolve__get(ps, w[i].node)->dom;
                model = (d->lo_inf || x >= d->lo) && (d->hi_inf || x <= d->hi);
            }
        }
        /* a model: the facts left out hold too; then whether the constraints all hold */
        if (model && ((model = first_false(ps, lorder, ps->nleft, dvals)) < 0 ||
                      (model && (all = first_false(ps, corder, nc, dvals)) < 0)))
            goto done;
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
    SG_FREE_ALL(w, roots, lorder, corder, dst);
    return res;
}

/* ---- A failing model near the example (sg_presolve_violate) ------------------------------------- */

/* The forms root j's value reaches (ulist[ustart[j] .. ustart[j+1]-1], indices into w[]) set or
 * tested at the roots' values at[]: node values into their slots, and whether every check holds.
 * false on overflow. */
static bool set_root(sg_presolve *ps, const wform *w, const size_t *ustart, const size_t *ulist, size_t j,
                     const sg_int *at, sg_int *dvals, bool *checks)
{
    size_t i;
    *checks = true;
    for (i = ustart[j]; i < ustart[j + 1]; i++) {
        const wform *u = &w[ulist[i]];
        sg_int x;
        if (!wform_value(u, at, &x))
            return false;
        if (!u->check)
            *node_slot(ps, u->node, dvals) = x;
        else if (*checks) {
            const sg_interval *d = &sg_presolve__get(ps, u->node)->dom;
            *checks = (d->lo_inf || x >= d->lo) && (d->hi_inf || x <= d->hi);
        }
    }
    return true;
}

/* Node x (-1: none) -> the indices in roots[] of the roots its form reads, appended to out[] (at
 * most cap); false when one is not among them, or the form cannot be read. */
static bool node_roots(sg_presolve *ps, long x, const size_t *roots, size_t nr, size_t *out, size_t *n, size_t cap)
{
    lin f;
    int j;
    ps->work = 0;
    if (x < 0 || !sg_presolve__lin_node(ps, (size_t)x, &f))
        return false;
    for (j = 0; j < f.n; j++) {
        if (*n == cap || (out[*n] = root_index(f.v[j], roots, nr)) == SIZE_MAX)
            return false;
        ++*n;
    }
    return true;
}

/* The roots (indices into roots[]) fact k reads (constraint k, or ncons + symbol k's definition),
 * appended to out[] (at most cap; duplicates allowed): false when it reads a symbol outside them
 * (its value is not set by the walk) or out of memory. */
static bool fact_roots(sg_presolve *ps, size_t k, const size_t *roots, size_t nr, size_t *out, size_t *n,
                       size_t cap)
{
    const sg_problem *p = ps->p;
    const sg_expr *es[2] = {NULL, NULL}, **syms = NULL;
    size_t e, t, ns = 0;
    if (k >= p->ncons) {
        es[0] = p->syms[k - p->ncons].sym;
        es[1] = p->syms[k - p->ncons].replacement;
    } else {
        const sg_constraint *c = &p->cons[k];
        switch (c->kind) {
        case SG_CORE_GUARD: es[0] = c->expr; break;
        case SG_CORE_RANGE: es[0] = p->syms[c->index].sym; break;
        case SG_CORE_REPLACEMENT: es[0] = p->syms[c->index].sym, es[1] = p->syms[c->index].replacement; break;
        case SG_CORE_INPUT: /* the dim's size and its traced value */
            es[0] = p->inputs[c->index].value;
            if (!node_roots(ps, (long)c->index, roots, nr, out, n, cap))
                return false;
            break;
        default: return false;
        }
    }
    for (e = 0; e < 2; e++) {
        if (!es[e])
            continue;
        if (sg_expr_symbols(&syms, &ns, p->pool, es[e], NULL) != 0)
            return false;
        for (t = 0; t < ns; t++)
            if (!node_roots(ps, sg_presolve__sym_node(ps, syms[t]), roots, nr, out, n, cap)) {
                sg_free((void *)syms);
                return false;
            }
        sg_free((void *)syms);
        syms = NULL;
    }
    return true;
}

#define VIOLATE_READS 64 /* roots one fact may read for the walk to track it */

/* Which facts read which roots (fact f < nc: cons[f]; else ps->left[f - nc]): root j's facts are
 * (*flist)[fstart[j] .. fstart[j+1]-1] (fstart[0..nr] zeroed by the caller), in fact order. false
 * when a fact reads a symbol outside the roots, or more than VIOLATE_READS of them, or out of memory. */
static bool reads_by_root(sg_presolve *ps, const size_t *cons, size_t nc, const size_t *roots, size_t nr,
                          size_t *fstart, size_t **flist)
{
    size_t nf = nc + ps->nleft, *fr = NULL, *fo = NULL, *pos = NULL, nfr = 0, frcap = 0, f, i, a, b;
    size_t rd[VIOLATE_READS];
    bool ok = SG_CALLOC_ALL(SG_SLOT(fo, nf + 1), SG_SLOT(pos, nr + 1));
    for (f = 0; f < nf && ok; f++) {
        size_t nrd = 0;
        fo[f] = nfr;
        ok = fact_roots(ps, f < nc ? cons[f] : ps->left[f - nc], roots, nr, rd, &nrd, VIOLATE_READS) &&
             sg__grow((void **)&fr, &frcap, nfr + nrd + 1, sizeof *fr) == 0;
        for (a = 0; a < nrd && ok; a++) { /* its distinct roots */
            for (b = 0; b < a && rd[b] != rd[a]; b++)
                ;
            if (b == a) {
                fr[nfr++] = rd[a];
                fstart[rd[a] + 1]++;
            }
        }
    }
    if (ok) {
        fo[nf] = nfr;
        for (i = 0; i < nr; i++)
            fstart[i + 1] += fstart[i];
        memcpy(pos, fstart, nr * sizeof *pos);
        ok = (*flist = sg__malloc((nfr + 1) * sizeof **flist)) != NULL;
        for (f = 0; f < nf && ok; f++)
            for (i = fo[f]; i < fo[f + 1]; i++)
                (*flist)[pos[fr[i]]++] = f;
    }
    SG_FREE_ALL(fr, fo, pos);
    return ok;
}

int sg_presolve_violate(sg_presolve *ps, const size_t *nodes, size_t nn, const size_t *cons, size_t nc, sg_int *dvals)
{
    wform *w = NULL;
    size_t *sorted = NULL, *roots = NULL, *ustart = NULL, *ulist = NULL, *upos = NULL, *fstart = NULL,
           *flist = NULL;
    size_t nw = 0, nr = 0, i, j, f;
    sg_int *at = NULL;
    unsigned long long cost = 0;
    int res = -1, h, t;
    bool checks;

    if (!models_are_walkable(ps) || nn == 0 || nc == 0)
        return -1;
    if (!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals)))
        return -1;
    /* the nodes' forms in node order, so that a root's example value comes from its first input dim */
    if (!(sorted = sg__malloc(nn * sizeof *sorted)))
        goto done;
    memcpy(sorted, nodes, nn * sizeof *sorted);
    qsort(sorted, nn, sizeof *sorted, cmp_size);
    if (!walk_forms(ps, sorted, nn, false, &w, &nw, &roots, &nr) ||
        !SG_CALLOC_ALL(SG_SLOT(ulist, nw * SG_LIN_MAX + 1), SG_SLOT(ustart, nr + 2), SG_SLOT(upos, nr + 1),
                       SG_SLOT(at, nr + 1), SG_SLOT(fstart, nr + 2)))
        goto done;
    /* which forms each root reaches (in form order) */
    for (i = 0; i < nw; i++)
        for (t = 0; t < w[i].f.n; t++)
            ustart[w[i].f.v[t] + 1]++;
    for (j = 0; j < nr; j++)
        ustart[j + 1] += ustart[j];
    memcpy(upos, ustart, nr * sizeof *upos);
    for (i = 0; i < nw; i++)
        for (t = 0; t < w[i].f.n; t++)
            ulist[upos[w[i].f.v[t]]++] = i;
    /* the example point: each root at its value at the example sizes (from the first input dim
     * that is +-1 times it plus a constant), clamped into its domain; a root no input dim gives one
     * at its low end (high, 0) */
    for (j = 0; j < nr; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
        bool set = false;
        sg_int v = 0;
        for (i = ustart[j]; i < ustart[j + 1] && !set; i++) {
            const wform *u = &w[ulist[i]];
            set = !u->check && u->f.n == 1 &&
                  root_at_example(ps, u->node, u->f.c[0], u->f.k, dvals, &v);
        }
        if (!set)
            v = !d->lo_inf ? d->lo : !d->hi_inf ? d->hi : 0;
        if (!d->lo_inf && v < d->lo)
            v = d->lo;
        if (!d->hi_inf && v > d->hi)
            v = d->hi;
        if (!d->lo_inf && !d->hi_inf && d->lo > d->hi)
            goto done;
        at[j] = v;
    }
    for (j = 0; j < nr; j++)
        if (!set_root(ps, w, ustart, ulist, j, at, dvals, &checks) || !checks)
            goto done;
    /* it must be a model (the facts left out hold there); a checked constraint failing there is
     * the answer; one undefined there: no answer */
    for (f = 0; f < ps->nleft; f++)
        if (holds_at(ps, ps->left[f], dvals) != 1)
            goto done;
    for (f = 0; f < nc; f++)
        if ((h = holds_at(ps, cons[f], dvals)) != 1) {
            res = h == 0 ? 1 : -1;
            goto done;
        }
    cost = nc + ps->nleft;
    if (!reads_by_root(ps, cons, nc, roots, nr, fstart, &flist))
        goto done;
    /* one root at a time, moved to its neighbours and its domain's ends: a model (the substituted
     * roots in their domains, its facts left out hold) at which one of its checked constraints
     * fails is the answer */
    for (j = 0; j < nr && res < 0; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
        sg_int cand[4], keep = at[j];
        size_t nca = 0, c;
        if (keep < SG_INT_MAX && (d->hi_inf || keep < d->hi))
            cand[nca++] = keep + 1;
        if (keep > SG_INT_MIN && (d->lo_inf || keep > d->lo))
            cand[nca++] = keep - 1;
        if (!d->lo_inf && d->lo < keep - 1)
            cand[nca++] = d->lo;
        if (!d->hi_inf && d->hi > keep + 1)
            cand[nca++] = d->hi;
        for (c = 0; c < nca && res < 0; c++) {
            bool model, fails = false;
            at[j] = cand[c];
            if (!set_root(ps, w, ustart, ulist, j, at, dvals, &model))
                break;
            for (i = fstart[j]; i < fstart[j + 1]; i++) {
                f = flist[i];
                if (f >= nc) {
                    model = model && holds_at(ps, ps->left[f - nc], dvals) == 1;
                } else if (!fails) {
                    fails = holds_at(ps, cons[f], dvals) == 0; /* (undefined there: not a failure) */
                }
            }
            cost += fstart[j + 1] - fstart[j];
            if (model && fails)
                res = 1;
            else if (ps->enum_spent + cost > enum_budget(ps))
                goto done;
        }
        if (res < 0) {
            at[j] = keep;
            if (!set_root(ps, w, ustart, ulist, j, at, dvals, &checks))
                goto done;
        }
    }
done:
    ps->enum_spent += cost;
    SG_FREE_ALL(w, sorted, roots, ustart, ulist, upos, at, fstart, flist);
    return res;
}
