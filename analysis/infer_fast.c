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
 * bound over two variables, an overflow) leaves its whole component to Z3 -
 * unless the component is one class over a small finite domain (at most
 * FAST_ENUM_MAX values of its root): then every value of the root is tried,
 * the facts that were not read are evaluated exactly (sg_expr_eval, Python
 * semantics), and the valid values give the exact range, congruence and holes
 * (view800: `Eq(Mod(s, 8), 0)`, `Ne(s//8, 1)` over s <= 2000 + i).
 *
 * Soundness: the facts are F's conjuncts; a component is decided here only
 * when none of them was dropped or widened, and F's other components are
 * independent of it (they share no variable), so a value valid for the
 * component is valid for F iff F is satisfiable at all - which sg_infer
 * checks (the base query, or here: every component exact and consistent).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_impl.h"
#include "expr/expr.h"
#include "solver/presolve.h"
#include "trace/trace_impl.h"
#include "util/util.h"

#define FAST_ENUM_MAX 4096           /* root values one component may enumerate */
#define FAST_EVAL_BUDGET (1u << 22)  /* fact evaluations, all components together */
#define FAST_MAX_HOLES 64            /* as infer.c's INF_MAX_HOLES: the smallest ones, incomplete beyond */
#define FAST_WALK_MAX 4096           /* nodes visited checking what a fact mentions */

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

/* Does `e` mention only Int symbols of the trace in component `comp`? (*work counts nodes) */
static bool only_comp(const sg_problem *p, const sg_expr *e, long comp, unsigned *work, int depth)
{
    size_t i, n;
    if (depth > 64 || ++*work > FAST_WALK_MAX)
        return false;
    if (sg_expr_kind(e) == SG_SYM) {
        const sg_symbol_info *si = sg_trace_symbol_info(p->trace, e);
        return si && sg_expr_sort(e) == SG_SORT_INT && p->sym_comp[si - p->syms] == comp;
    }
    n = sg_expr_nargs(e);
    for (i = 0; i < n; i++)
        if (!only_comp(p, sg_expr_arg(e, i), comp, work, depth + 1))
            return false;
    return true;
}

/* The integer value of `e` under `vals`; false when undefined, not an integer, or on error. */
static bool eval_int(sg_problem *p, const sg_expr *e, const sg_int *vals, size_t nvals, sg_int *out)
{
    sg_value v;
    if (sg_expr_eval(&v, p->pool, e, vals, nvals, NULL) != 0 || v.kind != SG_VAL_INT)
        return false;
    *out = v.num;
    return true;
}

/* A fact left out by the presolve, for evaluation: a constraint, or symbol k's definition. */
typedef struct efact {
    bool is_def;
    size_t idx;
} efact;

/* Does fact `ef` hold under `vals` (input dim values in `dval`)? -1: cannot tell (undefined). */
static int fact_holds(sg_problem *p, const efact *ef, const sg_int *vals, size_t nvals, const sg_int *dval)
{
    sg_value v;
    sg_int a, b;
    if (ef->is_def) { /* s == replacement */
        const sg_symbol_info *si = &p->syms[ef->idx];
        if (!eval_int(p, si->replacement, vals, nvals, &b))
            return -1;
        return vals[sg_expr_symbol_index(si->sym)] == b;
    }
    {
        const sg_constraint *c = &p->cons[ef->idx];
        switch (c->kind) {
        case SG_CORE_GUARD:
            if (!c->expr || sg_expr_eval(&v, p->pool, c->expr, vals, nvals, NULL) != 0 || v.kind != SG_VAL_BOOL)
                return -1;
            return v.num != 0;
        case SG_CORE_REPLACEMENT:
            if (!eval_int(p, p->syms[c->index].replacement, vals, nvals, &b))
                return -1;
            return vals[sg_expr_symbol_index(p->syms[c->index].sym)] == b;
        case SG_CORE_INPUT:
            if (!p->inputs[c->index].value || !eval_int(p, p->inputs[c->index].value, vals, nvals, &a))
                return -1;
            return dval[c->index] == a;
        case SG_CORE_RANGE: {
            const sg_symbol_info *si = &p->syms[c->index];
            sg_int x = vals[sg_expr_symbol_index(si->sym)];
            return (si->lo.inf || x >= si->lo.v) && (si->hi.inf || x <= si->hi.v);
        }
        default:
            return -1;
        }
    }
}

/* Can fact `ef` be evaluated over component `comp` alone? */
static bool fact_in_comp(const sg_problem *p, const efact *ef, long comp)
{
    unsigned work = 0;
    const sg_constraint *c;
    if (ef->is_def) /* only the replacement definition is evaluated (the others are unit equalities) */
        return p->sym_input[ef->idx] < 0 && !p->syms[ef->idx].unbacked && p->syms[ef->idx].replacement &&
               only_comp(p, p->syms[ef->idx].replacement, comp, &work, 0);
    c = &p->cons[ef->idx];
    switch (c->kind) {
    case SG_CORE_GUARD:
        return c->expr && only_comp(p, c->expr, comp, &work, 0);
    case SG_CORE_REPLACEMENT:
        return only_comp(p, p->syms[c->index].replacement, comp, &work, 0);
    case SG_CORE_INPUT:
        return p->inputs[c->index].value && only_comp(p, p->inputs[c->index].value, comp, &work, 0);
    case SG_CORE_RANGE:
        return true;
    default:
        return false;
    }
}

/* Everything enumeration needs across components. */
typedef struct enumer {
    sg_problem *p;
    sg_presolve *ps;
    sg_int *vals;          /* [pool symbols] */
    size_t nvals;
    sg_int *dval;          /* [ninputs] */
    unsigned char *valid;  /* [FAST_ENUM_MAX] */
    unsigned evals;        /* spent of FAST_EVAL_BUDGET */
} enumer;

#define FAST_PERIOD_MAX 64 /* the modulus of a periodic fact that lets enumeration skip values */

/* The values of root value `v` into E->vals (symbols syms[]) and E->dval (input dims ins[]);
 * false on overflow or when a dim is not of class `r` (then nothing is decided). */
static bool set_point(enumer *E, size_t r, sg_int v, const size_t *syms, size_t ns, const size_t *ins, size_t ni,
                      const sg_infer_fast *f)
{
    sg_problem *p = E->p;
    size_t j;
    for (j = 0; j < ns; j++) {
        size_t k = syms[j];
        sg_int x;
        if (!sg__mul(f->a[k], v, &x) || !sg__add(x, f->b[k], &x))
            return false;
        E->vals[sg_expr_symbol_index(p->syms[k].sym)] = x;
    }
    for (j = 0; j < ni; j++) {
        size_t root, in = ins[j];
        sg_int a, b, x;
        sg_interval d;
        if (!sg_presolve_class(E->ps, in, &root, &a, &b, &d) || root != r || !sg__mul(a, v, &x) || !sg__add(x, b, &x))
            return false;
        E->dval[in] = x;
    }
    return true;
}

/*
 * The modulus m of fact `ef` when it is periodic in the root with period m: a guard comparing
 * Mod(X, m) with an integer, m a literal in [2, FAST_PERIOD_MAX] and X affine in one symbol of
 * the component (so affine in the root: X(v + m) = X(v) + a*m, the same residue); 0 otherwise.
 * `Eq(Mod(s, 8), 0)` rules out 7 values in 8 without evaluating the other facts there.
 */
static sg_int fact_period(const sg_problem *p, const efact *ef, const size_t *syms, size_t ns)
{
    const sg_expr *e, *mod, *num, *sym = NULL;
    sg_kind k;
    sg_int a = 0, b = 0, m;
    size_t j;
    if (ef->is_def || p->cons[ef->idx].kind != SG_CORE_GUARD || !(e = p->cons[ef->idx].expr))
        return 0;
    k = sg_expr_kind(e);
    if ((k != SG_EQ && k != SG_NE && k != SG_LT && k != SG_LE && k != SG_GT && k != SG_GE) || sg_expr_nargs(e) != 2)
        return 0;
    mod = sg_expr_arg(e, 0);
    num = sg_expr_arg(e, 1);
    if (sg_expr_kind(mod) == SG_INT) {
        const sg_expr *t = mod;
        mod = num;
        num = t;
    }
    if (sg_expr_kind(num) != SG_INT || (sg_expr_kind(mod) != SG_MOD && sg_expr_kind(mod) != SG_PYMOD) ||
        sg_expr_nargs(mod) != 2 || sg_expr_kind(sg_expr_arg(mod, 1)) != SG_INT)
        return 0;
    m = sg_expr_int_value(sg_expr_arg(mod, 1));
    if (m < 2 || m > FAST_PERIOD_MAX || !sg_expr_affine(sg_expr_arg(mod, 0), &sym, &a, &b) || !sym)
        return 0;
    for (j = 0; j < ns; j++)
        if (p->syms[syms[j]].sym == sym)
            return m;
    return 0;
}

/*
 * Component `comp`, one class over root `r` with domain `dom`: its symbols syms[0..ns-1] and
 * input dims ins[0..ni-1], the facts left out facts[0..nf-1]. Fills res[] and f for its
 * symbols and returns 1 when decided, 0 when left to Z3, -1 when F has no model at all (the
 * component has no valid value: F is unsatisfiable, Z3's base query says so), SG_ENOMEM.
 */
static int enumerate_comp(enumer *E, long comp, size_t r, const sg_interval *dom, const size_t *syms, size_t ns,
                          const size_t *ins, size_t ni, const efact *facts, size_t nf, sg_inferred *res,
                          sg_infer_fast *f, sg_error *err)
{
    sg_problem *p = E->p;
    sg_int span, v, lo_r = 0, hi_r = 0, g = 0, period = 0, t;
    size_t nvalid = 0, j, i, nholes_r = 0;
    bool holds[FAST_PERIOD_MAX];
    if (dom->lo_inf || dom->hi_inf || !sg__sub(dom->hi, dom->lo, &span) || span < 0 || span >= FAST_ENUM_MAX)
        return 0;
    if ((double)E->evals + (double)(span + 1) * (double)(nf ? nf : 1) > FAST_EVAL_BUDGET)
        return 0;
    for (j = 0; j < nf; j++)
        if (!fact_in_comp(p, &facts[j], comp))
            return 0;
    for (j = 0; j < ns; j++) {
        size_t root;
        sg_interval d;
        if (sg_expr_symbol_index(p->syms[syms[j]].sym) >= E->nvals)
            return 0; /* not a symbol of the pool's table: cannot be given a value */
        if (!sg_presolve_class(E->ps, p->ninputs + syms[j], &root, &f->a[syms[j]], &f->b[syms[j]], &d) || root != r)
            return 0;
        f->root[syms[j]] = root;
    }
    /* a periodic fact: its residues of the root that hold, from one period; the others are not
     * valid (the fact is defined and false there), and nothing else is evaluated at them */
    for (j = 0; j < nf && !period; j++)
        if ((period = fact_period(p, &facts[j], syms, ns)) != 0) {
            for (t = 0; t < period && t <= span && period; t++) {
                int h;
                if (!set_point(E, r, dom->lo + t, syms, ns, ins, ni, f))
                    return 0;
                h = fact_holds(p, &facts[j], E->vals, E->nvals, E->dval);
                E->evals++;
                if (h < 0)
                    period = 0; /* undefined: enumerate every value */
                else
                    holds[t] = h == 1;
            }
        }
    for (i = 0; i <= (size_t)span; i++) {
        bool ok = true;
        v = dom->lo + (sg_int)i;
        if (period && !holds[(sg_int)i % period]) {
            E->valid[i] = false;
            continue;
        }
        if (!set_point(E, r, v, syms, ns, ins, ni, f))
            return 0;
        for (j = 0; j < nf && ok; j++) {
            int h = fact_holds(p, &facts[j], E->vals, E->nvals, E->dval);
            E->evals++;
            if (h < 0)
                return 0; /* undefined somewhere: Z3's encoding decides what that means */
            ok = h == 1;
        }
        E->valid[i] = ok;
        if (ok) {
            if (!nvalid++)
                lo_r = v;
            hi_r = v;
            g = sg__gcd(g, v - lo_r);
        }
    }
    if (nvalid == 0)
        return -1;
    /* holes of the root, in its class: lo_r + m*g not valid */
    if (g > 0)
        for (v = lo_r; v <= hi_r; v += g)
            nholes_r += !E->valid[v - dom->lo];
    for (j = 0; j < ns; j++) {
        size_t k = syms[j], nh = 0;
        sg_inferred o = res[k];
        sg_int a = f->a[k], b = f->b[k], x1, x2;
        if (!sg__mul(a, lo_r, &x1) || !sg__add(x1, b, &x1) || !sg__mul(a, hi_r, &x2) || !sg__add(x2, b, &x2))
            return 0;
        o.lo.inf = o.hi.inf = 0;
        o.lo.v = x1 < x2 ? x1 : x2;
        o.hi.v = x1 < x2 ? x2 : x1;
        o.range_exact = true;
        o.is_constant = nvalid == 1;
        o.constant = o.is_constant ? o.lo.v : 0;
        o.modulus = 1;
        o.residue = 0;
        if (!o.is_constant && g >= 2) {
            o.modulus = g;
            if (!sg__pymod(o.lo.v, g, &o.residue))
                return 0;
        }
        o.holes = NULL;
        o.nholes = 0;
        o.holes_complete = o.is_constant || nholes_r <= FAST_MAX_HOLES;
        o.equals = NULL;
        if (!o.is_constant && nholes_r) {
            /* the smallest FAST_MAX_HOLES of the symbol: from the root's lowest up (a > 0) or its
             * highest down (a < 0); more are left out, the list marked incomplete (as Z3's search
             * does at INF_MAX_HOLES, whose 64 are the ones it happened to meet) */
            size_t want = nholes_r < FAST_MAX_HOLES ? nholes_r : FAST_MAX_HOLES;
            o.holes = sg__calloc(want, sizeof *o.holes);
            if (!o.holes)
                return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            if (a > 0) {
                for (v = lo_r; v <= hi_r && nh < want; v += g)
                    if (!E->valid[v - dom->lo])
                        o.holes[nh++] = a * v + b;
            } else {
                for (v = hi_r; v >= lo_r && nh < want; v -= g)
                    if (!E->valid[v - dom->lo])
                        o.holes[nh++] = a * v + b;
            }
            o.nholes = nh;
        }
        sg_free(res[k].holes);
        res[k] = o;
    }
    for (j = 0; j < ns; j++) {
        f->done[syms[j]] = true;
        f->ndone++;
    }
    return 1;
}

/*
 * Constraints the presolve left out but that hold at every point of its box are redundant:
 * with no substitution the box is the product of the class domains, which is exactly the set
 * of models of the facts read (a bound read wider than it is widens a domain and is itself
 * among the left out), so a left-out constraint TRUE on the whole box removes no model
 * (large_100_list_auto_ok in torch 2.6: `Ne(s2 - 1, 1)` with s2 = s0 + 1, s0 >= 2). They are
 * taken off `dcons`, and `tainted` is made again from what is left (definitions left out
 * always taint: they are not asked about).
 */
static void rescue_implied(sg_problem *p, sg_presolve *ps, const bool *ddef, bool *dcons, bool *tainted,
                           size_t nnodes)
{
    size_t k;
    memset(tainted, 0, nnodes * sizeof *tainted);
    for (k = 0; k < p->nsyms; k++)
        if (ddef[k])
            tainted[p->sym_comp[k]] = true;
    for (k = 0; k < p->ncons; k++) {
        if (!dcons[k])
            continue;
        if (sg_presolve_decide(ps, k) == SG_TRI_TRUE)
            dcons[k] = false;
        else
            tainted[p->cons_comp[k]] = true;
    }
}

int sg__infer_fast(sg_problem *p, sg_inferred *res, sg_infer_fast *f, sg_error *err)
{
    size_t nnodes = p->ninputs + p->nsyms + p->nx, k;
    sg_presolve *ps = NULL;
    bool *tainted = NULL, global = false, open = false;
    bool *ddef = NULL, *dcons = NULL;
    size_t *sstart = NULL, *slist = NULL, *istart = NULL, *ilist = NULL, *fstart = NULL;
    efact *flist = NULL;
    enumer E;
    int rc = 0;

    memset(&E, 0, sizeof E);

    memset(f, 0, sizeof *f);
    f->done = sg__calloc(p->nsyms + 1, sizeof *f->done);
    f->root = sg__calloc(p->nsyms + 1, sizeof *f->root);
    f->a = sg__calloc(p->nsyms + 1, sizeof *f->a);
    f->b = sg__calloc(p->nsyms + 1, sizeof *f->b);
    tainted = sg__calloc(nnodes + 1, sizeof *tainted);
    ddef = sg__calloc(p->nsyms + 1, sizeof *ddef);
    dcons = sg__calloc(p->ncons + 1, sizeof *dcons);
    if (!f->done || !f->root || !f->a || !f->b || !tainted || !ddef || !dcons) {
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
            ddef[k] = true;
            if (p->sym_comp[k] >= 0 && (size_t)p->sym_comp[k] < nnodes)
                tainted[p->sym_comp[k]] = true;
            else
                global = true;
        }
    }
    for (k = 0; k < p->ncons && !global; k++) {
        sg_presolve_constraint(ps, k);
        if (sg_presolve_take_dropped(ps)) {
            dcons[k] = true;
            if (p->cons_comp[k] >= 0 && (size_t)p->cons_comp[k] < nnodes)
                tainted[p->cons_comp[k]] = true;
            else
                global = true; /* a ground constraint not read: F's satisfiability is Z3's */
        }
    }
    if (global || !sg_presolve_consistent(ps))
        goto cleanup;
    if (!sg_presolve_substituted(ps))
        rescue_implied(p, ps, ddef, dcons, tainted, nnodes);
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
    /* the components with facts left out: by enumeration when one class over a small domain */
    {
        size_t c, nf = 0;
        sstart = sg__calloc(nnodes + 2, sizeof *sstart);
        istart = sg__calloc(nnodes + 2, sizeof *istart);
        fstart = sg__calloc(nnodes + 2, sizeof *fstart);
        slist = sg__calloc(p->nsyms + 1, sizeof *slist);
        ilist = sg__calloc(p->ninputs + 1, sizeof *ilist);
        flist = sg__calloc(p->nsyms + p->ncons + 1, sizeof *flist);
        E.p = p;
        E.ps = ps;
        E.nvals = sg_pool_nsymbols(p->pool);
        E.vals = sg__calloc(E.nvals + 1, sizeof *E.vals);
        E.dval = sg__calloc(p->ninputs + 1, sizeof *E.dval);
        E.valid = sg__calloc(FAST_ENUM_MAX, sizeof *E.valid);
        if (!sstart || !istart || !fstart || !slist || !ilist || !flist || !E.vals || !E.dval || !E.valid) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        /* counting sort of symbols, input dims and left-out facts by component */
#define IN_COMP(x) ((x) >= 0 && (size_t)(x) < nnodes && tainted[(x)])
        for (k = 0; k < p->nsyms; k++)
            if (IN_COMP(p->sym_comp[k]))
                sstart[p->sym_comp[k] + 1]++;
        for (k = 0; k < p->ninputs; k++)
            if (IN_COMP(p->input_comp[k]))
                istart[p->input_comp[k] + 1]++;
        for (k = 0; k < p->nsyms; k++)
            if (ddef[k] && IN_COMP(p->sym_comp[k]))
                fstart[p->sym_comp[k] + 1]++;
        for (k = 0; k < p->ncons; k++)
            if (dcons[k] && IN_COMP(p->cons_comp[k]))
                fstart[p->cons_comp[k] + 1]++;
        for (c = 0; c < nnodes; c++) {
            sstart[c + 1] += sstart[c];
            istart[c + 1] += istart[c];
            fstart[c + 1] += fstart[c];
        }
        {
            size_t *sfill = sg__calloc(nnodes + 1, sizeof *sfill), *ifill = sg__calloc(nnodes + 1, sizeof *ifill),
                   *ffill = sg__calloc(nnodes + 1, sizeof *ffill);
            if (!sfill || !ifill || !ffill) {
                sg_free(sfill);
                sg_free(ifill);
                sg_free(ffill);
                rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
                goto cleanup;
            }
            for (k = 0; k < p->nsyms; k++)
                if (IN_COMP(p->sym_comp[k])) {
                    c = (size_t)p->sym_comp[k];
                    slist[sstart[c] + sfill[c]++] = k;
                }
            for (k = 0; k < p->ninputs; k++)
                if (IN_COMP(p->input_comp[k])) {
                    c = (size_t)p->input_comp[k];
                    ilist[istart[c] + ifill[c]++] = k;
                }
            for (k = 0; k < p->nsyms; k++)
                if (ddef[k] && IN_COMP(p->sym_comp[k])) {
                    c = (size_t)p->sym_comp[k];
                    flist[fstart[c] + ffill[c]].is_def = true;
                    flist[fstart[c] + ffill[c]++].idx = k;
                }
            for (k = 0; k < p->ncons; k++)
                if (dcons[k] && IN_COMP(p->cons_comp[k])) {
                    c = (size_t)p->cons_comp[k];
                    flist[fstart[c] + ffill[c]].is_def = false;
                    flist[fstart[c] + ffill[c]++].idx = k;
                }
            sg_free(sfill);
            sg_free(ifill);
            sg_free(ffill);
        }
#undef IN_COMP
        for (c = 0; c < nnodes; c++) {
            size_t r, ns = sstart[c + 1] - sstart[c], ni = istart[c + 1] - istart[c], j;
            sg_int a, b;
            sg_interval dom;
            bool ok = true;
            int er;
            if (!tainted[c])
                continue;
            nf = fstart[c + 1] - fstart[c];
            for (j = 0; j < ns && ok; j++)
                ok = sg_expr_sort(p->syms[slist[sstart[c] + j]].sym) == SG_SORT_INT;
            if (!ok || (ns == 0 && ni == 0) ||
                !sg_presolve_class(ps, ns ? p->ninputs + slist[sstart[c]] : ilist[istart[c]], &r, &a, &b, &dom)) {
                open = true;
                continue;
            }
            er = enumerate_comp(&E, (long)c, r, &dom, slist + sstart[c], ns, ilist + istart[c], ni,
                                flist + fstart[c], nf, res, f, err);
            if (er < 0 && er != -1) {
                rc = er;
                goto cleanup;
            }
            if (er == -1) { /* F has no model: nothing is decided here (Z3's base query says so) */
                for (k = 0; k < p->nsyms; k++)
                    if (f->done[k]) {
                        sg_free(res[k].holes);
                        res[k].holes = NULL;
                        res[k].nholes = 0;
                    }
                memset(f->done, 0, p->nsyms * sizeof *f->done);
                f->ndone = 0;
                open = true;
                break;
            }
            if (er == 0)
                open = true;
        }
    }
    f->all = f->ndone == p->nsyms && !open && sg_presolve_consistent(ps);
cleanup:
    sg_presolve_free(ps);
    sg_free(tainted);
    sg_free(ddef);
    sg_free(dcons);
    sg_free(sstart);
    sg_free(istart);
    sg_free(fstart);
    sg_free(slist);
    sg_free(ilist);
    sg_free(flist);
    sg_free(E.vals);
    sg_free(E.dval);
    sg_free(E.valid);
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
