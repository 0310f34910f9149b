/*
 * infer_comp.c - connected components of the constraint set F and their
 * univariate reduction (analysis/infer_ctx.h, docs/infer.md): variables
 * linked through shared conjuncts form a component, queries about a symbol
 * carry only its component, and a component that eliminates to one variable w
 * gives the exact set of valid values of w's aliases (complete holes).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_ctx.h"

/* Is `a` an equation between two Int constants? */
static bool is_var_eq(ictx *x, const sg_term *a)
{
    return sg_q_op_of(x->p, a) == SG_QOP_EQ && sg_q_nargs(x->p, a) == 2 && sg_q_is_int_const(x->p, sg_q_arg(x->p, a, 0)) &&
           sg_q_is_int_const(x->p, sg_q_arg(x->p, a, 1));
}

/*
 * Split F into conjuncts, its variables into connected components and alias
 * classes (once, from setup: the conjuncts, parts of F, live for the whole run).
 */
int sg_infer__prepare_components(ictx *x)
{
    const sg_term **stack = NULL;
    size_t n = 0, cap = 0, i, j;
    walk_out wo;
    int rc = 0;

    if (x->comp_ready)
        return 0;
    memset(&wo, 0, sizeof wo);
    if (!SG_CALLOC_ALL(SG_SLOT(x->uf, x->nvars + 1), SG_SLOT(x->comps, x->nvars + 1), SG_SLOT(x->alias, x->nvars + 1),
                       SG_SLOT(x->arep, x->nvars + 1)) ||
        sg__grow((void **)&stack, &cap, 1, sizeof *stack)) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = 0; i < x->nvars; i++)
        x->uf[i] = x->arep[i] = i;
    stack[n++] = x->F;
    while (n > 0) {
        const sg_term *a = stack[--n];
        if (sg_q_op_of(x->p, a) == SG_QOP_AND) {
            size_t na = sg_q_nargs(x->p, a), k;
            if (sg__grow((void **)&stack, &cap, n + na, sizeof *stack)) {
                rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
                goto cleanup;
            }
            for (k = na; k > 0; k--)
                stack[n++] = sg_q_arg(x->p, a, k - 1);
            continue;
        }
        if (sg__grow((void **)&x->conj, &x->cconj, x->nconj + 1, sizeof *x->conj)) {
            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        x->conj[x->nconj++] = a;
    }
    x->conj_comp = sg__calloc(x->nconj + 1, sizeof *x->conj_comp);
    if (!x->conj_comp) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = 0; i < x->nconj; i++) {
        wo.n = 0;
        if ((rc = sg_infer__walk(x, x->conj[i], false, &wo, false)))
            goto cleanup;
        x->conj_comp[i] = SIZE_MAX;
        for (j = 1; j < wo.n; j++) {
            size_t a = uf_find(x->uf, wo.idx[0]), b = uf_find(x->uf, wo.idx[j]);
            if (a != b)
                x->uf[a < b ? b : a] = a < b ? a : b;
        }
        if (wo.n)
            x->conj_comp[i] = wo.idx[0];
        if (wo.n == 2 && is_var_eq(x, x->conj[i])) {
            size_t a = uf_find(x->arep, wo.idx[0]), b = uf_find(x->arep, wo.idx[1]);
            if (a != b)
                x->arep[a < b ? b : a] = a < b ? a : b;
        }
    }
    for (i = 0; i < x->nconj; i++)
        if (x->conj_comp[i] != SIZE_MAX)
            x->conj_comp[i] = uf_find(x->uf, x->conj_comp[i]);
    /* the formula of every component: its conjuncts, bucketed by root */
    {
        size_t *start = sg__calloc(x->nvars + 2, sizeof *start), *fill = NULL;
        const sg_term **sorted = sg__calloc(x->nconj + 1, sizeof *sorted);
        fill = sg__calloc(x->nvars + 1, sizeof *fill);
        if (!start || !sorted || !fill) {
            sg_free(start);
            sg_free(sorted);
            sg_free(fill);
            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        for (i = 0; i < x->nconj; i++)
            if (x->conj_comp[i] != SIZE_MAX)
                start[x->conj_comp[i] + 1]++;
        for (i = 0; i < x->nvars; i++)
            start[i + 1] += start[i];
        for (i = 0; i < x->nconj; i++)
            if (x->conj_comp[i] != SIZE_MAX) {
                size_t r = x->conj_comp[i];
                sorted[start[r] + fill[r]++] = x->conj[i];
            }
        for (i = 0; i < x->nvars && !x->failed; i++)
            if (uf_find(x->uf, i) == i)
                x->comps[i].F = mk_and(x, sorted + start[i], start[i + 1] - start[i]);
        sg_free(start);
        sg_free(sorted);
        sg_free(fill);
        if (x->failed) {
            rc = failure(x);
            goto cleanup;
        }
    }
    x->comp_ready = true;
cleanup:
    sg_free(stack);
    sg_free(wo.idx);
    return rc;
}

/* The variables of term t, as a list (in wo). */
static int vars_of(ictx *x, const sg_term *t, walk_out *wo)
{
    wo->n = 0;
    return sg_infer__walk(x, t, false, wo, false);
}

/*
 * Reduce the component of variable sv to a formula over one variable w, by
 * eliminating variables through equations y = T (y not in T): first every
 * var = var equation at once (aliases; the representative of a class is its
 * lowest variable index, and symbols come first), then one equation at a time.
 * On success comps[root] holds w and G (kept until the end of sg_infer), and
 * x->alias[v] is 1 for every variable of the component in w's alias class
 * (for those, "v = c is valid" is exactly G(c)), 2 for the others.
 * Must not run inside a release() scope: G outlives it.
 */
static int analyse_component(ictx *x, size_t sv)
{
    size_t root = uf_find(x->uf, sv), i, j, nvc = 0, nc = 0, round, w = SIZE_MAX;
    component *cp = &x->comps[root];
    size_t *cvars = NULL, *rep = NULL;
    const sg_term **cj = NULL, **from = NULL, **to = NULL;
    walk_out wo;
    int rc = 0;

    if (cp->state)
        return 0;
    cp->state = 2;
    memset(&wo, 0, sizeof wo);
    for (i = 0; i < x->nvars; i++)
        if (uf_find(x->uf, i) == root) {
            nvc++;
            x->alias[i] = 2;
        }
    for (i = 0; i < x->nconj; i++)
        nc += x->conj_comp[i] == root;
    if (nc > INF_UNI_MAX_CONJ)
        return 0;
    if (!SG_CALLOC_ALL(SG_SLOT(cvars, nvc + 1), SG_SLOT(rep, x->nvars + 1), SG_SLOT(cj, nc + 1), SG_SLOT(from, nvc + 1),
                       SG_SLOT(to, nvc + 1))) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    nvc = nc = 0;
    for (i = 0; i < x->nvars; i++) {
        rep[i] = i;
        if (uf_find(x->uf, i) == root)
            cvars[nvc++] = i;
    }
    for (i = 0; i < x->nconj; i++)
        if (x->conj_comp[i] == root)
            cj[nc++] = x->conj[i];
    /* aliases: var = var */
    for (i = 0; i < nc; i++) {
        const sg_term *a, *b;
        size_t ia, ib;
        if (sg_q_op_of(x->p, cj[i]) != SG_QOP_EQ || sg_q_nargs(x->p, cj[i]) != 2)
            continue;
        a = sg_q_arg(x->p, cj[i], 0);
        b = sg_q_arg(x->p, cj[i], 1);
        if (!sg_q_is_int_const(x->p, a) || !sg_q_is_int_const(x->p, b) ||
            !sg_infer__idmap_get(&x->varmap, sg_q_id(x->p, a), &ia) || !sg_infer__idmap_get(&x->varmap, sg_q_id(x->p, b), &ib))
            continue;
        ia = uf_find(rep, ia);
        ib = uf_find(rep, ib);
        if (ia != ib)
            rep[ia < ib ? ib : ia] = ia < ib ? ia : ib;
    }
    {
        size_t nf = 0, nr = 0;
        for (i = 0; i < nvc; i++) {
            size_t r = uf_find(rep, cvars[i]);
            nr += r == cvars[i];
            if (r != cvars[i]) {
                from[nf] = x->vars[cvars[i]];
                to[nf++] = x->vars[r];
            }
        }
        if (nr > INF_UNI_MAX_VARS)
            goto cleanup;
        if (nf)
            for (i = 0; i < nc; i++)
                cj[i] = substitute(x, cj[i], from, to, nf);
        if (x->failed) {
            rc = failure(x);
            goto cleanup;
        }
    }
    /* general elimination, one equation y = T at a time, never of the lowest variable left */
    for (round = 0; round <= INF_UNI_MAX_VARS; round++) {
        size_t keepv = SIZE_MAX, elim = SIZE_MAX, y = 0;
        bool others = false;
        const sg_term *T = NULL;
        for (i = 0; i < nc; i++) {
            if ((rc = vars_of(x, cj[i], &wo)))
                goto cleanup;
            for (j = 0; j < wo.n; j++)
                if (wo.idx[j] < keepv)
                    keepv = wo.idx[j];
        }
        for (i = 0; i < nc && elim == SIZE_MAX; i++) {
            unsigned side;
            if (sg_q_op_of(x->p, cj[i]) != SG_QOP_EQ || sg_q_nargs(x->p, cj[i]) != 2)
                continue;
            for (side = 0; side < 2 && elim == SIZE_MAX; side++) {
                const sg_term *a = sg_q_arg(x->p, cj[i], side), *other = sg_q_arg(x->p, cj[i], 1 - side);
                size_t ya;
                bool inside = false;
                if (!sg_q_is_int_const(x->p, a) || !sg_infer__idmap_get(&x->varmap, sg_q_id(x->p, a), &ya) || ya == keepv)
                    continue;
                if ((rc = vars_of(x, other, &wo)))
                    goto cleanup;
                for (j = 0; j < wo.n; j++)
                    inside |= wo.idx[j] == ya;
                if (!inside) {
                    elim = i;
                    y = ya;
                    T = other;
                }
            }
        }
        if (elim != SIZE_MAX) {
            cj[elim] = cj[--nc];
            for (i = 0; i < nc; i++)
                cj[i] = substitute(x, cj[i], &x->vars[y], &T, 1);
            if (x->failed) {
                rc = failure(x);
                goto cleanup;
            }
            continue;
        }
        /* no equation left: univariate when only keepv remains */
        for (i = 0; i < nc && !others; i++) {
            if ((rc = vars_of(x, cj[i], &wo)))
                goto cleanup;
            for (j = 0; j < wo.n; j++)
                others |= wo.idx[j] != keepv;
        }
        if (!others && keepv != SIZE_MAX)
            w = keepv;
        break;
    }
    if (w != SIZE_MAX) {
        cp->G = mk_and(x, cj, nc);
        if (!cp->G) {
            rc = failure(x);
            goto cleanup;
        }
        cp->state = 1;
        cp->w = w;
        for (i = 0; i < nvc; i++)
            x->alias[cvars[i]] = uf_find(rep, cvars[i]) == w ? 1 : 2;
    }
cleanup:
    sg_free(cvars);
    sg_free(rep);
    sg_free(cj);
    sg_free(from);
    sg_free(to);
    sg_free(wo.idx);
    return rc;
}

/*
 * The formula G over variable *w such that "symbol variable sv = c is valid"
 * iff G(c), or *G = NULL when the component of sv does not reduce to one.
 * Must not run inside a release() scope (see analyse_component).
 */
int sg_infer__univariate_of(ictx *x, size_t sv, const sg_term **G, size_t *w)
{
    size_t root;
    int rc;
    *G = NULL;
    if (x->exotic)
        return 0;
    if ((rc = sg_infer__prepare_components(x)))
        return rc;
    root = uf_find(x->uf, sv);
    if ((rc = analyse_component(x, sv)))
        return rc;
    if (x->comps[root].state != 1 || x->alias[sv] != 1)
        return 0;
    *G = x->comps[root].G;
    *w = x->comps[root].w;
    return 0;
}
