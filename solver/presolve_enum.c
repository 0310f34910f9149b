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

/* Are the models of the facts the points of the box where the facts left out hold (every fact
 * read exactly or left out, none substituted, consistent)? What enumerating them needs. */
static bool models_are_box(const sg_presolve *ps)
{
    return sg_presolve_enabled() && !ps->empty && !ps->inexact && ps->ndefs == 0;
}

/* Node x (an input dim or an Int symbol with a value slot) as ma * root + mb over a class root not
 * substituted away; false otherwise. */
static bool node_on_root(sg_presolve *ps, size_t x, size_t *root, sg_int *ma, sg_int *mb)
{
    const sg_problem *p = ps->p;
    if (x >= ps->nnodes || x >= p->ninputs + p->nsyms || !sg_presolve__find(ps, x, root, ma, mb) ||
        sg_presolve__get(ps, *root)->elim)
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
    size_t roots[ENUM_ROOTS], nroots = 0, i, j, *at_root = NULL, at[ENUM_ROOTS], size[ENUM_ROOTS], *lorder = NULL,
           *corder = NULL;
    sg_int lo[ENUM_ROOTS], hi[ENUM_ROOTS], start[ENUM_ROOTS], *ma = NULL, *mb = NULL, *order[ENUM_ROOTS];
    sg_int **dst = NULL; /* [nn] where node i's value goes at each point (node_slot, once) */
    bool started[ENUM_ROOTS];
    double points = 1;
    int res = -1;

    memset(order, 0, sizeof order);
    if (!models_are_box(ps) || nn == 0)
        return -1;
    if (!(at_root = sg__malloc(nn * sizeof *at_root)) || !(ma = sg__malloc(nn * sizeof *ma)) ||
        !(mb = sg__malloc(nn * sizeof *mb)) || !(dst = sg__malloc(nn * sizeof *dst)))
        goto done;
    for (i = 0; i < nn; i++) { /* node i = ma * root + mb */
        size_t r;
        if (!node_on_root(ps, nodes[i], &r, &ma[i], &mb[i]))
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
        if (!started[j] && root_at_example(ps, nodes[i], ma[i], mb[i], dvals, &start[j])) {
            start[j] = start[j] < lo[j] ? lo[j] : start[j] > hi[j] ? hi[j] : start[j];
            started[j] = true;
        }
    }
    if (points > ENUM_POINTS || ps->enum_spent >= enum_budget(ps) || ps->empty)
        goto done; /* (the budget is charged with the points visited: most searches stop early) */
    if ((!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals))) ||
        !(lorder = sg__malloc((ps->nleft + 1) * sizeof *lorder)) || !(corder = sg__malloc((nc + 1) * sizeof *corder)))
        goto done;
    for (i = 0; i < nn; i++)
        dst[i] = node_slot(ps, nodes[i], dvals);
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
        int model, all = 1;
        for (i = 0; i < nn; i++) {
            sg_int x;
            if (!sg__mul(ma[i], order[at_root[i]][at[at_root[i]]], &x) || !sg__add(x, mb[i], &x))
                goto done;
            *dst[i] = x;
        }
        /* a model: the facts left out hold too; then whether the constraints all hold */
        if ((model = first_false(ps, lorder, ps->nleft, dvals)) < 0 ||
            (model && (all = first_false(ps, corder, nc, dvals)) < 0))
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
    sg_free(at_root);
    sg_free(ma);
    sg_free(mb);
    sg_free(lorder);
    sg_free(corder);
    sg_free(dst);
    return res;
}

/* ---- A failing model near the example (sg_presolve_violate) ------------------------------------- */

typedef struct vnode {
    size_t root, node; /* node = ma * root + mb */
    sg_int ma, mb;
} vnode;

static int cmp_vnode(const void *a, const void *b)
{
    const vnode *x = a, *y = b;
    return x->root != y->root ? (x->root < y->root ? -1 : 1) : (x->node > y->node) - (x->node < y->node);
}

/* Root j of vr[] (its nodes vn[from[j] .. from[j+1]-1]) at value v: node values into dvals / ps->evals.
 * false on overflow. */
static bool set_root(sg_presolve *ps, const vnode *vn, const size_t *from, size_t j, sg_int v, sg_int *dvals)
{
    size_t i;
    for (i = from[j]; i < from[j + 1]; i++) {
        sg_int x;
        if (!sg__mul(vn[i].ma, v, &x) || !sg__add(x, vn[i].mb, &x))
            return false;
        *node_slot(ps, vn[i].node, dvals) = x;
    }
    return true;
}

/* Node x (-1: none) -> index of its class root in roots[0..nr-1] (sorted), or SIZE_MAX. */
static size_t root_of_node(sg_presolve *ps, long x, const size_t *roots, size_t nr)
{
    size_t r, lo = 0, hi = nr;
    sg_int a, b;
    if (x < 0 || !sg_presolve__find(ps, (size_t)x, &r, &a, &b))
        return SIZE_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (roots[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nr && roots[lo] == r ? lo : SIZE_MAX;
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
            if (*n == cap || (out[*n] = root_of_node(ps, (long)c->index, roots, nr)) == SIZE_MAX)
                return false;
            ++*n;
            break;
        default: return false;
        }
    }
    for (e = 0; e < 2; e++) {
        if (!es[e])
            continue;
        if (sg_expr_symbols(&syms, &ns, p->pool, es[e], NULL) != 0)
            return false;
        for (t = 0; t < ns; t++) {
            size_t j = root_of_node(ps, sg_presolve__sym_node(ps, syms[t]), roots, nr);
            if (j == SIZE_MAX || *n == cap) {
                sg_free((void *)syms);
                return false;
            }
            out[(*n)++] = j;
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
    vnode *vn = NULL;
    size_t *roots = NULL, *from = NULL, nr = 0, i, j, f, *fstart = NULL, *flist = NULL;
    sg_int *at = NULL;
    unsigned long long cost = 0;
    int res = -1, h;

    if (!models_are_box(ps) || nn == 0 || nc == 0)
        return -1;
    if (!ps->evals && !(ps->evals = sg__calloc(ps->nbox + 1, sizeof *ps->evals)))
        return -1;
    if (!SG_CALLOC_ALL(SG_SLOT(vn, nn), SG_SLOT(roots, nn), SG_SLOT(from, nn + 1), SG_SLOT(at, nn),
                       SG_SLOT(fstart, nn + 1)))
        goto done;
    for (i = 0; i < nn; i++) { /* each node over one class root, as enumeration needs */
        vn[i].node = nodes[i];
        if (!node_on_root(ps, nodes[i], &vn[i].root, &vn[i].ma, &vn[i].mb))
            goto done;
    }
    qsort(vn, nn, sizeof *vn, cmp_vnode);
    for (i = 0; i < nn; i++) {
        if (nr == 0 || roots[nr - 1] != vn[i].root) {
            roots[nr] = vn[i].root;
            from[nr++] = i;
        }
    }
    from[nr] = nn;
    /* the example point: each root at its value at the example sizes (ma = +-1), clamped into its
     * domain; a root no input dim gives one at its low end (high, 0) */
    for (j = 0; j < nr; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
        bool set = false;
        sg_int v = 0;
        for (i = from[j]; i < from[j + 1] && !set; i++)
            set = root_at_example(ps, vn[i].node, vn[i].ma, vn[i].mb, dvals, &v);
        if (!set)
            v = !d->lo_inf ? d->lo : !d->hi_inf ? d->hi : 0;
        if (!d->lo_inf && v < d->lo)
            v = d->lo;
        if (!d->hi_inf && v > d->hi)
            v = d->hi;
        if (!d->lo_inf && !d->hi_inf && d->lo > d->hi)
            goto done;
        at[j] = v;
        if (!set_root(ps, vn, from, j, v, dvals))
            goto done;
    }
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
    /* one root at a time, moved to its neighbours and its domain's ends: a model (its facts left
     * out hold) at which one of its checked constraints fails is the answer */
    for (j = 0; j < nr && res < 0; j++) {
        const sg_interval *d = &sg_presolve__get(ps, roots[j])->dom;
        sg_int cand[4];
        size_t nca = 0, c;
        if (at[j] < SG_INT_MAX && (d->hi_inf || at[j] < d->hi))
            cand[nca++] = at[j] + 1;
        if (at[j] > SG_INT_MIN && (d->lo_inf || at[j] > d->lo))
            cand[nca++] = at[j] - 1;
        if (!d->lo_inf && d->lo < at[j] - 1)
            cand[nca++] = d->lo;
        if (!d->hi_inf && d->hi > at[j] + 1)
            cand[nca++] = d->hi;
        for (c = 0; c < nca && res < 0; c++) {
            bool model = true, fails = false;
            if (!set_root(ps, vn, from, j, cand[c], dvals))
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
        if (res < 0 && !set_root(ps, vn, from, j, at[j], dvals))
            goto done;
    }
done:
    ps->enum_spent += cost;
    SG_FREE_ALL(vn, roots, from, at, fstart, flist);
    return res;
}
