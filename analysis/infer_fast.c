/*
 * infer_fast.c - inference without Z3 where the presolve reads every fact
 * exactly (analysis/infer_impl.h, docs/infer.md "Without Z3").
 *
 * F (definitions and every constraint, checked or assumed) is given to one
 * presolve. A problem component (problem.h sym_comp / cons_comp) whose facts
 * were all read exactly (sg_presolve_take_dropped false after each) has as
 * models exactly the product of its union-find classes' domains: a symbol
 * s = a * root + b takes every value of a * dom + b and no other. So its
 * range is exact and attained (an infinite side is a ray), it has no holes and
 * no congruence, and the affine relations among a class's members are the
 * union-find maps themselves. Everything else (a product, a floor, Ne, a
 * bound over two variables, an overflow) leaves its whole component to Z3.
 *
 * Soundness: the facts are F's conjuncts; a component is decided here only
 * when none of them was dropped or widened, and F's other components are
 * independent of it (they share no variable), so a value valid for the
 * component is valid for F iff F is satisfiable at all - which sg_infer
 * checks (the base query, or here: every component exact and consistent).
 */
#include <string.h>

#include "analysis/infer_impl.h"
#include "solver/presolve.h"
#include "util/util.h"

void sg__infer_fast_free(sg_infer_fast *f)
{
    sg_free(f->done);
    sg_free(f->root);
    sg_free(f->a);
    sg_free(f->b);
    memset(f, 0, sizeof *f);
}

/* a * [lo, hi] + b into res' range; false on overflow. */
static bool map_range(sg_int a, sg_int b, const sg_interval *d, sg_inferred *o)
{
    sg_bound lo = {0, -1}, hi = {0, 1};
    bool lo_inf = a > 0 ? d->lo_inf : d->hi_inf, hi_inf = a > 0 ? d->hi_inf : d->lo_inf;
    sg_int l = a > 0 ? d->lo : d->hi, h = a > 0 ? d->hi : d->lo;
    if (!lo_inf) {
        if (!sg__mul(a, l, &lo.v) || !sg__add(lo.v, b, &lo.v))
            return false;
        lo.inf = 0;
    }
    if (!hi_inf) {
        if (!sg__mul(a, h, &hi.v) || !sg__add(hi.v, b, &hi.v))
            return false;
        hi.inf = 0;
    }
    o->lo = lo;
    o->hi = hi;
    return true;
}

int sg__infer_fast(sg_problem *p, sg_inferred *res, sg_infer_fast *f, sg_error *err)
{
    size_t nnodes = p->ninputs + p->nsyms + p->nx, k;
    sg_presolve *ps = NULL;
    bool *tainted = NULL, global = false;
    int rc = 0;

    memset(f, 0, sizeof *f);
    f->done = sg__calloc(p->nsyms + 1, sizeof *f->done);
    f->root = sg__calloc(p->nsyms + 1, sizeof *f->root);
    f->a = sg__calloc(p->nsyms + 1, sizeof *f->a);
    f->b = sg__calloc(p->nsyms + 1, sizeof *f->b);
    tainted = sg__calloc(nnodes + 1, sizeof *tainted);
    if (!f->done || !f->root || !f->a || !f->b || !tainted) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    if (!sg_presolve_enabled() || p->nsyms == 0 || !p->sym_comp || !p->cons_comp)
        goto cleanup; /* off, or a problem made by hand without components */
    if ((rc = sg_presolve_new(&ps, p, err)))
        goto cleanup;
    sg_presolve_begin(ps);
    for (k = 0; k < p->nsyms; k++) {
        sg_presolve_def(ps, k);
        if (sg_presolve_take_dropped(ps)) {
            if (p->sym_comp[k] >= 0 && (size_t)p->sym_comp[k] < nnodes)
                tainted[p->sym_comp[k]] = true;
            else
                global = true;
        }
    }
    for (k = 0; k < p->ncons && !global; k++) {
        sg_presolve_constraint(ps, k);
        if (sg_presolve_take_dropped(ps)) {
            if (p->cons_comp[k] >= 0 && (size_t)p->cons_comp[k] < nnodes)
                tainted[p->cons_comp[k]] = true;
            else
                global = true; /* a ground constraint not read: F's satisfiability is Z3's */
        }
    }
    if (global || !sg_presolve_consistent(ps))
        goto cleanup;
    for (k = 0; k < p->nsyms; k++) {
        sg_inferred o = res[k];
        sg_interval dom;
        long comp = p->sym_comp[k];
        if (comp < 0 || (size_t)comp >= nnodes || tainted[comp] || sg_expr_sort(p->syms[k].sym) != SG_SORT_INT)
            continue;
        if (!sg_presolve_class(ps, p->ninputs + k, &f->root[k], &f->a[k], &f->b[k], &dom))
            continue;
        if (!map_range(f->a[k], f->b[k], &dom, &o))
            continue;
        o.range_exact = true;
        o.is_constant = !o.lo.inf && !o.hi.inf && o.lo.v == o.hi.v;
        o.constant = o.is_constant ? o.lo.v : 0;
        o.modulus = 1;
        o.residue = 0;
        o.holes = NULL;
        o.nholes = 0;
        o.holes_complete = true;
        o.equals = NULL;
        res[k] = o;
        f->done[k] = true;
        f->ndone++;
    }
    f->all = f->ndone == p->nsyms && sg_presolve_consistent(ps);
cleanup:
    sg_presolve_free(ps);
    sg_free(tainted);
    return rc;
}

int sg__infer_fast_relations(sg_problem *p, const sg_infer_fast *f, const size_t *colk, size_t ncol,
                             sg_inferred *out, sg_error *err)
{
    sg_int *row = NULL;
    size_t i, j;
    int rc = 0;

    if (!f->ndone || ncol < 2)
        return 0;
    row = sg__calloc(ncol + 1, sizeof *row);
    if (!row)
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    for (i = 0; i < ncol; i++) {
        size_t m = colk[i];
        if (!f->done[m] || out[m].is_constant || out[m].equals)
            continue;
        /* the first column of m's class: m = a_m r + b_m, e = a_e r + b_e, so
         * m = a_m a_e (e - b_e) + b_m (a = +-1 inverts exactly) */
        for (j = 0; j < i; j++) {
            size_t e = colk[j];
            sg_int s, t, c;
            if (!f->done[e] || out[e].is_constant || f->root[e] != f->root[m])
                continue;
            s = f->a[m] * f->a[e];
            if (!sg__mul(s, f->b[e], &t) || !sg__sub(f->b[m], t, &c))
                break; /* overflow: no relation reported (sound) */
            memset(row, 0, (ncol + 1) * sizeof *row);
            row[i] = 1;
            row[j] = -s;
            row[ncol] = c == SG_INT_MIN ? 0 : -c;
            if (c == SG_INT_MIN)
                break;
            out[m].equals = sg__infer_relation_expr(p, row, colk, ncol, i);
            if (!out[m].equals) {
                const sg_error *pe = sg_pool_error(p->pool);
                rc = sg_error_set(err, pe ? pe->code : SG_ENOMEM, "building a relation: %s",
                                  pe ? pe->msg : "out of memory");
                goto cleanup;
            }
            break;
        }
    }
cleanup:
    sg_free(row);
    return rc;
}
