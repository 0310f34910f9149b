/*
 * infer.c - what the guards imply about every symbol (analysis/infer.h,
 * docs/infer.md): the driver. It builds the constraint set F (definitions and
 * every constraint), lists its variables and components, asks for a first
 * model, then runs the steps in order - ranges (infer_range.c), congruences
 * and holes (infer_values.c), relations (infer_rel.c) - for the symbols the
 * presolve did not decide (infer_fast.c). The parts share the context of
 * analysis/infer_ctx.h.
 *
 * Queries about one symbol carry only the conjuncts of its connected
 * component (variables linked through shared conjuncts): the whole set is
 * satisfiable, so the other components can keep the values of the first
 * model, and each query stays as small as the dims it is about.
 *
 * Terms: every question is asked through solver/query.h (no Z3 here). The
 * terms built for one step are released at its end (sg_q_mark /
 * sg_q_release); F, the components and their reductions live until the end
 * of sg_infer, which releases everything built here.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/infer_ctx.h"

/*
 * Build F (definitions and every constraint), list its variables (symbols
 * first), fold the period of its literal divisors, and split it into
 * components. Everything kept here lives until the end of sg_infer.
 */
static int setup(ictx *x)
{
    sg_problem *p = x->p;
    size_t i;
    const sg_term **parts = NULL;
    int rc = 0;

    x->period = 1;
    x->enum_budget = INF_ENUM_BUDGET;
    parts = sg__calloc(p->ncons + 2, sizeof *parts);
    x->symvar = sg__calloc(p->nsyms + 1, sizeof *x->symvar);
    if (!parts || !x->symvar) {
        sg_free(parts);
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    }
    parts[0] = sg_q_defs(p);
    for (i = 0; i < p->ncons; i++)
        parts[i + 1] = sg_q_holds(p, i);
    x->F = mk_and(x, parts, p->ncons + 1);
    sg_free(parts);
    if (!x->F)
        return failure(x);
    /* symbols first (so that they represent their aliases), then the rest of F */
    for (i = 0; i < p->nsyms; i++) {
        const sg_term *s = sg_q_symbol(p, p->syms[i].sym);
        if (!s)
            return sg_error_set(x->err, SG_ERROR, "inference: symbol %zu has no solver constant", i);
        if ((rc = sg_infer__add_var(x, s, &x->symvar[i])))
            return rc;
    }
    if ((rc = sg_infer__walk(x, x->F, true, NULL, true)))
        return rc;
    x->maxpts = INF_MAX_VALUES / (x->nvars ? x->nvars : 1);
    if (x->maxpts < 64)
        x->maxpts = 64;
    return sg_infer__prepare_components(x);
}

/*
 * Does the trace have a component of at least sg_check__probe_min_dims() named dims with a
 * non-linear guard? Inference's first question is about every constraint at once, and there Z3's
 * non-linear arithmetic spends the whole query budget and gives up (prod300: 7.6 s, then the
 * traced ranges); so such a trace gets the traced ranges, nothing proved, without asking.
 * false when out of memory or without components (then Z3 is asked, as before).
 */
static bool too_hard(sg_problem *p)
{
    size_t *dims, i, big = 0, n = 0; /* dims[comp]: named dims of component comp (ids < n) */
    bool hard = false;
    if (!p->input_comp || !p->cons_comp || !p->named)
        return false; /* a problem built without its components (tests build some by hand) */
    for (i = 0; i < p->ninputs; i++)
        if (p->input_comp[i] >= 0 && (size_t)p->input_comp[i] >= n)
            n = (size_t)p->input_comp[i] + 1;
    if (!(dims = sg__calloc(n + 1, sizeof *dims)))
        return false;
    for (i = 0; i < p->ninputs; i++)
        if (p->named[i] && p->input_comp[i] >= 0 && ++dims[p->input_comp[i]] == sg_check__probe_min_dims())
            big++;
    for (i = 0; i < p->ncons && big && !hard; i++) {
        long comp = p->cons_comp[i];
        hard = comp >= 0 && (size_t)comp < n && dims[comp] >= sg_check__probe_min_dims() &&
               p->cons[i].kind == SG_CORE_GUARD && p->cons[i].expr && sg_check__expr_nonlinear(p->cons[i].expr);
    }
    sg_free(dims);
    return hard;
}

/* What is known without a model: the traced ranges, nothing proved. */
static void fallback(const ictx *x, sg_inferred *out)
{
    size_t k;
    for (k = 0; k < x->p->nsyms; k++) {
        sg_int v;
        out[k].lo.inf = -1;
        out[k].hi.inf = 1;
        if (sg_infer__traced_bound(x, k, -1, &v)) {
            out[k].lo.inf = 0;
            out[k].lo.v = v;
        }
        if (sg_infer__traced_bound(x, k, 1, &v)) {
            out[k].hi.inf = 0;
            out[k].hi.v = v;
        }
    }
}

int sg_infer(sg_problem *p, const sg_budget *b, sg_check_stats *stats, sg_inferred **out, size_t *n,
             sg_error *err)
{
    ictx x;
    sg_inferred *res = NULL, *fres = NULL;
    bool *ranged = NULL;
    sg_infer_fast fast;
    cand *cands = NULL;
    size_t ncands = 0, k, *colk = NULL, ncol = 0;
    sg_q_answer r0;
    long pt0 = -1;
    int rc = 0;

    *out = NULL;
    *n = 0;
    memset(&x, 0, sizeof x);
    memset(&fast, 0, sizeof fast);
    x.p = p;
    x.scope = SIZE_MAX;
    x.mark0 = sg_q_mark(p);
    x.b = b;
    x.stats = stats;
    x.err = err;
    res = sg__calloc(p->nsyms + 1, sizeof *res);
    ranged = sg__calloc(p->nsyms + 1, sizeof *ranged);
    if (!res || !ranged) {
        sg_free(res);
        sg_free(ranged);
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    }
    for (k = 0; k < p->ncons; k++) /* one pass, not one per symbol (sg_infer__traced_bound) */
        if (p->cons[k].kind == SG_CORE_RANGE && p->cons[k].index < p->nsyms)
            ranged[p->cons[k].index] = true;
    x.ranged = ranged;
    for (k = 0; k < p->nsyms; k++) {
        res[k].sym = p->syms[k].sym;
        res[k].input = p->sym_input[k] >= 0 ? (size_t)p->sym_input[k] : SIZE_MAX;
        res[k].modulus = 1;
    }
    if (b && b->deadline > 0 && sg_problem_now() >= b->deadline) {
        /* the budget is spent (the check used it up): the traced ranges, nothing proved, without the
         * exact pass either, whose enumerations are not bounded by the deadline */
        fallback(&x, res);
        goto done;
    }
    /* what the presolve decides exactly (no Z3), into a copy until F is known satisfiable */
    fres = sg__calloc(p->nsyms + 1, sizeof *fres);
    if (!fres) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    memcpy(fres, res, p->nsyms * sizeof *res);
    if ((rc = sg__infer_fast(p, fres, &fast, err)))
        goto cleanup;
    if (fast.all) { /* every component exact and consistent: F is satisfiable, no query */
        memcpy(res, fres, p->nsyms * sizeof *res);
        for (k = 0; k < p->nsyms; k++)
            fres[k].holes = NULL; /* res owns them now */
        goto relations;
    }
    if ((rc = setup(&x)))
        goto cleanup;
    fallback(&x, res);
    if (too_hard(p))
        goto done; /* what Z3 would end with, without its budget spent */
    if ((rc = sg_infer__query_f(&x, NULL, &r0, &pt0)))
        goto cleanup;
    if (r0 != SG_Q_SAT || pt0 != 0)
        goto done; /* inconsistent, unknown, or unrepresentable: the traced ranges, nothing proved */
    for (k = 0; k < p->nsyms; k++)
        if (fast.done[k]) {
            res[k] = fres[k];
            fres[k].holes = NULL; /* res owns them now */
        }
    for (k = 0; k < p->nsyms; k++) {
        bool ex_lo = false, ex_hi = false;
        if (fast.done[k])
            continue;
        x.scope = uf_find(x.uf, x.symvar[k]);
        if ((rc = sg_infer__extreme(&x, k, -1, &res[k].lo, &ex_lo)) || (rc = sg_infer__extreme(&x, k, 1, &res[k].hi, &ex_hi)))
            goto cleanup;
        res[k].range_exact = ex_lo && ex_hi;
        if (res[k].range_exact && !res[k].lo.inf && !res[k].hi.inf && res[k].lo.v == res[k].hi.v) {
            res[k].is_constant = true;
            res[k].constant = res[k].lo.v;
        }
    }
    for (k = 0; k < p->nsyms; k++) {
        if (fast.done[k])
            continue;
        x.scope = uf_find(x.uf, x.symvar[k]);
        if (!res[k].is_constant && (rc = sg_infer__congruence(&x, k, &res[k])))
            goto cleanup;
    }
    if ((rc = sg_infer__collect_candidates(&x, &cands, &ncands)))
        goto cleanup;
    for (k = 0; k < p->nsyms; k++) {
        if (fast.done[k])
            continue;
        if (res[k].is_constant) {
            res[k].holes_complete = true;
            continue;
        }
        x.scope = uf_find(x.uf, x.symvar[k]);
        if ((rc = sg_infer__holes(&x, k, cands, ncands, &res[k])))
            goto cleanup;
    }
    x.scope = SIZE_MAX;
relations:
    if ((rc = sg__infer_rel_columns(p, res, &colk, &ncol, err)))
        goto cleanup;
    if ((rc = sg__infer_fast_relations(p, &fast, colk, ncol, res, err)))
        goto cleanup;
    if (!fast.all && (rc = sg_infer__relations(&x, res, colk, ncol, &fast)))
        goto cleanup;
done:
    *out = res;
    *n = p->nsyms;
    res = NULL;
cleanup:
    sg_q_release(p, x.mark0);
    sg_free(x.vars);
    sg_infer__idmap_free(&x.varmap);
    sg_infer__idmap_free(&x.seen);
    SG_FREE_ALL(x.symvar, x.pts, x.uf, x.conj, x.conj_comp, x.comps, x.alias, x.arep, ranged);
    sg_free(cands);
    sg_free(colk);
    if (fres)
        for (k = 0; k < p->nsyms; k++)
            sg_free(fres[k].holes);
    sg_free(fres);
    sg__infer_fast_free(&fast);
    sg_inferred_free_array(res, p->nsyms);
    return rc;
}

void sg_inferred_free_array(sg_inferred *a, size_t n)
{
    size_t i;
    if (!a)
        return;
    for (i = 0; i < n; i++)
        sg_free(a[i].holes);
    sg_free(a);
}
