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
#include "util/strmap.h"
#include "util/util.h"

#define FAST_ENUM_MAX 4096           /* root values one component may enumerate */
#define FAST_EVAL_BUDGET (1u << 22)  /* fact evaluations, all components together, */
#define FAST_EVAL_PER_FACT 1024u     /* plus this many per constraint and symbol (eval_budget) */
#define FAST_MAX_HOLES 64            /* as infer.c's INF_MAX_HOLES: the smallest ones, incomplete beyond */
#define FAST_WALK_MAX 4096           /* nodes visited checking what a fact mentions */

void sg__infer_fast_free(sg_infer_fast *f)
{
    SG_FREE_ALL(f->done, f->root, f->a, f->b, f->jcomp, f->jval, f->jn);
    sg_presolve_free(f->ps);
    memset(f, 0, sizeof *f);
}

/* `o` as an exact range with no congruence, hole or relation yet (its bounds set by the caller). */
static void exact_no_holes(sg_inferred *o)
{
    o->range_exact = true;
    o->modulus = 1;
    o->residue = 0;
    o->holes = NULL;
    o->nholes = 0;
    o->holes_complete = true;
    o->equals = NULL;
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
    double evals;          /* spent of eval_budget() */
} enumer;

/* The evaluations enumeration may spend: a floor, then linear in the problem, so that a trace of
 * thousands of small components (list inputs) gets the allowance per component one of a few gets
 * (FAST_EVAL_BUDGET alone ran out at ~750 four-dim groups: the rest went to Z3 as one query over
 * all of them, 13 s of the 3,000-input synth trace). */
static double eval_budget(const enumer *E)
{
    return (double)FAST_EVAL_BUDGET + (double)FAST_EVAL_PER_FACT * (double)(E->p->ncons + E->p->nsyms);
}

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
    if (E->evals + (double)(span + 1) * (double)(nf ? nf : 1) > eval_budget(E))
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

/* ---- Isomorphic components, enumerated once ------------------------------------------------------ */

/*
 * A component that enumerate_comp decides is decided again, point for point, by any component with
 * the same facts up to a renaming: the same root domain, each symbol and input dim the same affine
 * form of the root, the same facts left out. Its signature says all of that by position (the
 * symbols, input dims and facts in the component's order; expressions by sg_expr_shape), and a
 * later component of a signature already decided takes the first one's ranges, congruences and
 * holes by position instead of enumerating (a list of 1,000 tensors with their own Dims and the
 * same guards is enumerated once). The budget is charged as if it had enumerated, so the
 * components after it are decided as they would have been.
 */
typedef struct iclass {
    char *sig;               /* the key (owned) */
    bool ok;                 /* decided by enumeration: its results below */
    size_t ns;
    sg_inferred *out;        /* [ns] its symbols' results (holes owned) */
    double evals;            /* what enumerating it spent */
} iclass;

typedef struct iclasses {
    sg_strmap by_sig;
    iclass *v;
    size_t n, cap;
    size_t *sloc, *dloc;     /* [nsyms], [ninputs]: position in the component being read */
    bool *twin;              /* [nnodes] another component has as many symbols, dims and facts */
} iclasses;

static void iclasses_free(iclasses *k)
{
    size_t i, j;
    for (i = 0; i < k->n; i++) {
        for (j = 0; k->v[i].out && j < k->v[i].ns; j++)
            sg_free(k->v[i].out[j].holes);
        SG_FREE_ALL(k->v[i].sig, k->v[i].out);
    }
    sg_strmap_dispose(&k->by_sig);
    SG_FREE_ALL(k->v, k->sloc, k->dloc, k->twin);
    memset(k, 0, sizeof *k);
}

typedef struct isig {
    sg_comp_pos pos; /* the component being read, its symbols' positions */
    unsigned nodes;  /* expression nodes left to write */
} isig;

static bool ishape(isig *s, sg_buf *b, const sg_expr *e)
{
    return sg_expr_shape(b, e, sg_problem_sym_pos, &s->pos, &s->nodes);
}

/* The signature of component `comp` for enumerate_comp (root r over dom) into b; false when it has
 * none (a symbol or input dim on another root, a fact of another component, a symbol outside the
 * pool's table, an expression too large). */
static bool inf_signature(enumer *E, iclasses *k, long comp, size_t r, const sg_interval *dom, const size_t *syms,
                          size_t ns, const size_t *ins, size_t ni, const efact *facts, size_t nf, sg_buf *b)
{
    const sg_problem *p = E->p;
    isig s = {{p, k->sloc, comp}, 1u << 20};
    size_t j, root;
    sg_int a, c;
    sg_interval d;
    for (j = 0; j < ns; j++)
        k->sloc[syms[j]] = j;
    for (j = 0; j < ni; j++)
        k->dloc[ins[j]] = j;
    if (dom->lo_inf || dom->hi_inf)
        return false;
    sg_buf_put_size(b, ns, ' ');
    sg_buf_put_size(b, ni, ' ');
    sg_buf_put_size(b, nf, '[');
    sg_buf_put_int(b, dom->lo, ':');
    sg_buf_put_int(b, dom->hi, ']');
    if (r < p->ninputs && p->input_comp[r] == comp) {
        sg_buf_putc(b, 'd');
        sg_buf_put_size(b, k->dloc[r], '|');
    } else if (r >= p->ninputs && r < p->ninputs + p->nsyms && p->sym_comp[r - p->ninputs] == comp) {
        sg_buf_putc(b, 's');
        sg_buf_put_size(b, k->sloc[r - p->ninputs], '|');
    } else {
        return false;
    }
    for (j = 0; j < ns; j++) {
        const sg_symbol_info *si = &p->syms[syms[j]];
        if (sg_expr_sort(si->sym) != SG_SORT_INT || sg_expr_symbol_index(si->sym) >= E->nvals ||
            !sg_presolve_class(E->ps, p->ninputs + syms[j], &root, &a, &c, &d) || root != r)
            return false;
        sg_buf_putc(b, 's');
        sg_buf_put_int(b, a, ',');
        sg_buf_put_int(b, c, ',');
        sg_buf_put_bound(b, si->lo, ',');
        sg_buf_put_bound(b, si->hi, ',');
        if (!ishape(&s, b, si->replacement))
            return false;
    }
    for (j = 0; j < ni; j++) {
        if (!sg_presolve_class(E->ps, ins[j], &root, &a, &c, &d) || root != r)
            return false;
        sg_buf_putc(b, 'd');
        sg_buf_put_int(b, a, ',');
        sg_buf_put_int(b, c, ',');
        if (!ishape(&s, b, p->inputs[ins[j]].value))
            return false;
    }
    for (j = 0; j < nf; j++) {
        const efact *ef = &facts[j];
        if (!fact_in_comp(p, ef, comp))
            return false;
        if (ef->is_def) {
            sg_buf_putc(b, 'D');
            sg_buf_put_size(b, k->sloc[ef->idx], ';');
            continue;
        }
        {
            const sg_constraint *cn = &p->cons[ef->idx];
            size_t at = cn->kind == SG_CORE_INPUT ? (cn->index < p->ninputs && p->input_comp[cn->index] == comp
                                                         ? k->dloc[cn->index] : SIZE_MAX)
                      : cn->kind == SG_CORE_RANGE || cn->kind == SG_CORE_REPLACEMENT
                          ? (cn->index < p->nsyms && p->sym_comp[cn->index] == comp ? k->sloc[cn->index] : SIZE_MAX)
                          : 0;
            if (at == SIZE_MAX)
                return false;
            sg_buf_putc(b, 'C');
            sg_buf_put_size(b, (size_t)cn->kind, ',');
            sg_buf_put_size(b, at, ',');
            if (cn->kind == SG_CORE_GUARD && !ishape(&s, b, cn->expr))
                return false;
            sg_buf_putc(b, ';');
        }
    }
    return !b->failed;
}

/* *dst takes what enumerate_comp decides of src (range, congruence, constant, holes: copied) and
 * keeps its own symbol and input dim. 0 or SG_ENOMEM (dst unchanged). */
static int take_facts(sg_inferred *dst, const sg_inferred *src)
{
    sg_inferred o = *src;
    o.sym = dst->sym;
    o.input = dst->input;
    o.equals = NULL;
    o.holes = NULL;
    if (src->nholes && !(o.holes = sg__malloc(src->nholes * sizeof *o.holes)))
        return SG_ENOMEM;
    if (src->nholes)
        memcpy(o.holes, src->holes, src->nholes * sizeof *o.holes);
    sg_free(dst->holes);
    *dst = o;
    return 0;
}

/*
 * Component comp by its class: 1 when an earlier component of its signature was enumerated and its
 * results are now comp's (f->root/a/b and done set, the budget charged), 0 to enumerate it (then
 * *slot is the class to note the result in, or NULL), an error code.
 */
static int inf_class_take(enumer *E, iclasses *k, long comp, size_t r, const sg_interval *dom, const size_t *syms,
                          size_t ns, const size_t *ins, size_t ni, const efact *facts, size_t nf, sg_inferred *res,
                          sg_infer_fast *f, iclass **slot, sg_error *err)
{
    sg_buf b;
    size_t at, j, *ms;
    sg_int span;
    *slot = NULL;
    sg_buf_init(&b, (size_t)1 << 24);
    if (!inf_signature(E, k, comp, r, dom, syms, ns, ins, ni, facts, nf, &b)) {
        sg_buf_dispose(&b);
        return 0;
    }
    if ((at = sg_strmap_get(&k->by_sig, b.data)) != SIZE_MAX) {
        const iclass *cl = &k->v[at];
        sg_buf_dispose(&b);
        /* as enumerate_comp: within the budget, or not at all */
        if (!cl->ok || !sg__sub(dom->hi, dom->lo, &span) ||
            E->evals + (double)(span + 1) * (double)(nf ? nf : 1) > eval_budget(E))
            return 0;
        for (j = 0; j < ns; j++) {
            size_t s = syms[j], root;
            sg_interval d;
            if (!sg_presolve_class(E->ps, E->p->ninputs + s, &root, &f->a[s], &f->b[s], &d))
                return 0; /* (the signature read it) */
            f->root[s] = root;
            if (take_facts(&res[s], &cl->out[j]))
                return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        }
        for (j = 0; j < ns; j++) {
            f->done[syms[j]] = true;
            f->ndone++;
        }
        E->evals += cl->evals;
        sg_check__classes_count();
        return 1;
    }
    if (!sg__push((void **)&k->v, &k->cap, &k->n, sizeof *k->v)) {
        sg_buf_dispose(&b);
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    }
    memset(&k->v[k->n - 1], 0, sizeof *k->v);
    if (!(k->v[k->n - 1].sig = sg_buf_take(&b)) || !(ms = sg_strmap_slot(&k->by_sig, k->v[k->n - 1].sig))) {
        sg_free(k->v[k->n - 1].sig);
        k->n--;
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    }
    *ms = k->n - 1;
    *slot = &k->v[k->n - 1];
    return 0;
}

/* A class's first component was enumerated (er as enumerate_comp returned, spending `spent`): its
 * results by position, when it was decided. 0 or SG_ENOMEM. */
static int inf_class_note(iclass *cl, int er, const size_t *syms, size_t ns, const sg_inferred *res, double spent,
                          sg_error *err)
{
    size_t j;
    if (!cl || er != 1)
        return 0;
    if (!(cl->out = sg__calloc(ns + 1, sizeof *cl->out)))
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    cl->ns = ns;
    for (j = 0; j < ns; j++)
        if (take_facts(&cl->out[j], &res[syms[j]]))
            return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    cl->evals = spent;
    cl->ok = true;
    return 0;
}

/* After the presolve read a definition or constraint of component `comp`: when it dropped some
 * of it, mark that (`*dropped`) and taint the component, or everything (`*global`) for a ground
 * one (not read: F's satisfiability is Z3's). */
static void note_dropped(sg_presolve *ps, bool *dropped, long comp, bool *tainted, size_t nnodes, bool *global)
{
    if (!sg_presolve_take_dropped(ps))
        return;
    *dropped = true;
    if (comp >= 0 && (size_t)comp < nnodes)
        tainted[comp] = true;
    else
        *global = true;
}

/* ---- Components of several classes: a product of per-class valid sets ----------------------- */

#define PROD_ROOTS 8 /* classes of one component enumerated as a product */

/* Add the class root of node x to roots[*n] (a constant adds nothing); false when x is not one
 * affine form over one root, or there are more than PROD_ROOTS. */
static bool add_root(sg_presolve *ps, size_t x, size_t *roots, size_t *n)
{
    size_t r, i;
    sg_int a, b;
    if (!sg_presolve_form1(ps, x, &r, &a, &b))
        return false;
    if (r == SIZE_MAX)
        return true;
    for (i = 0; i < *n; i++)
        if (roots[i] == r)
            return true;
    if (*n == PROD_ROOTS)
        return false;
    roots[(*n)++] = r;
    return true;
}

/* The roots of every symbol of `e`; false when one has none (see add_root) or the walk is long. */
static bool expr_roots(enumer *E, const sg_expr *e, size_t *roots, size_t *n, unsigned *work, int depth)
{
    size_t i, na;
    if (depth > 64 || ++*work > FAST_WALK_MAX)
        return false;
    if (sg_expr_kind(e) == SG_SYM) {
        const sg_symbol_info *si = sg_trace_symbol_info(E->p->trace, e);
        return si && add_root(E->ps, E->p->ninputs + (size_t)(si - E->p->syms), roots, n);
    }
    na = sg_expr_nargs(e);
    for (i = 0; i < na; i++)
        if (!expr_roots(E, sg_expr_arg(e, i), roots, n, work, depth + 1))
            return false;
    return true;
}

/* The class roots fact `ef` mentions; false when it cannot tell. */
static bool fact_roots(enumer *E, const efact *ef, size_t *roots, size_t *n)
{
    sg_problem *p = E->p;
    unsigned work = 0;
    *n = 0;
    if (ef->is_def) {
        const sg_symbol_info *si = &p->syms[ef->idx];
        return add_root(E->ps, p->ninputs + ef->idx, roots, n) && si->replacement &&
               expr_roots(E, si->replacement, roots, n, &work, 0);
    }
    {
        const sg_constraint *c = &p->cons[ef->idx];
        switch (c->kind) {
        case SG_CORE_GUARD:
            return c->expr && expr_roots(E, c->expr, roots, n, &work, 0);
        case SG_CORE_REPLACEMENT:
            return add_root(E->ps, p->ninputs + c->index, roots, n) &&
                   expr_roots(E, p->syms[c->index].replacement, roots, n, &work, 0);
        case SG_CORE_INPUT:
            return p->inputs[c->index].value && add_root(E->ps, c->index, roots, n) &&
                   expr_roots(E, p->inputs[c->index].value, roots, n, &work, 0);
        case SG_CORE_RANGE:
            return add_root(E->ps, p->ninputs + c->index, roots, n);
        default:
            return false;
        }
    }
}

/*
 * Component `comp` over several classes (roots), every symbol and input dim of it one affine
 * form over one root (2*r + 1 through a substitution included). Its facts the presolve did not
 * read exactly (facts[0..nf-1]) are each over one class, or hold on the whole box (the presolve
 * decides them TRUE: a*d >= 4 over a in [2, 512], d in [2, 256]), which makes them redundant:
 * then the models of F in the component are exactly the product of each class's valid values
 * (the class domain, the facts read exactly, and that class's facts evaluated at each value), and
 * every symbol's range, congruence and holes are read off its class. The traced ranges of
 * symbols on a non-unit map are evaluated too (their bound reaches the root by division).
 * Same returns as enumerate_comp.
 */
static int enumerate_product(enumer *E, long comp, const size_t *syms, size_t ns, const size_t *ins, size_t ni,
                             const efact *facts, size_t nf, sg_inferred *res, sg_infer_fast *f, sg_error *err)
{
    sg_problem *p = E->p;
    size_t roots[PROD_ROOTS], nr = 0, j, i, q, *fr = NULL, nfr = 0;
    efact *fl = NULL;
    sg_interval dom[PROD_ROOTS];
    sg_int lo_r[PROD_ROOTS], hi_r[PROD_ROOTS], g_r[PROD_ROOTS];
    size_t nvalid[PROD_ROOTS];
    unsigned char *valid[PROD_ROOTS];
    double cost = 0;
    int rc = 0;

    memset(valid, 0, sizeof valid);
    for (j = 0; j < ns; j++)
        if (sg_expr_sort(p->syms[syms[j]].sym) != SG_SORT_INT || sg_expr_symbol_index(p->syms[syms[j]].sym) >= E->nvals ||
            !add_root(E->ps, p->ninputs + syms[j], roots, &nr))
            return 0;
    for (j = 0; j < ni; j++)
        if (!add_root(E->ps, ins[j], roots, &nr))
            return 0;
    if (nr < 2)
        return 0; /* one class: enumerate_comp's */
    for (i = 0; i < nr; i++) {
        sg_int a, b, span;
        size_t r2;
        if (!sg_presolve_class(E->ps, roots[i], &r2, &a, &b, &dom[i]) || r2 != roots[i] || dom[i].lo_inf ||
            dom[i].hi_inf || !sg__sub(dom[i].hi, dom[i].lo, &span) || span < 0 || span >= FAST_ENUM_MAX)
            return 0;
    }
    /* the facts to evaluate, each with its class: the left-out ones over one class, and the traced
     * ranges of symbols on a non-unit map; the left-out ones over several must hold on the box */
    if (!SG_CALLOC_ALL(SG_SLOT(fl, nf + ns + 1), SG_SLOT(fr, nf + ns + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto done;
    }
    for (j = 0; j < nf; j++) {
        size_t fro[PROD_ROOTS], nfro = 0;
        if (!fact_in_comp(p, &facts[j], comp) || !fact_roots(E, &facts[j], fro, &nfro))
            goto undecided;
        if (nfro > 1) {
            if (facts[j].is_def || sg_presolve_decide(E->ps, facts[j].idx) != SG_TRI_TRUE)
                goto undecided;
            continue; /* redundant: true at every point of the box */
        }
        if (nfro == 0)
            goto undecided;
        fl[nfr] = facts[j];
        fr[nfr++] = fro[0];
    }
    for (j = 0; j < ns; j++) {
        size_t r;
        sg_int a, b;
        const sg_symbol_info *si = &p->syms[syms[j]];
        if (!sg_presolve_form1(E->ps, p->ninputs + syms[j], &r, &a, &b) || a == 1 || a == -1 || r == SIZE_MAX ||
            (si->lo.inf && si->hi.inf))
            continue;
        for (q = 0; q < p->ncons; q++) /* its traced range, as a constraint of the problem */
            if (p->cons[q].kind == SG_CORE_RANGE && p->cons[q].index == syms[j])
                break;
        if (q == p->ncons)
            continue;
        fl[nfr].is_def = false;
        fl[nfr].idx = q;
        fr[nfr++] = r;
    }
    for (i = 0; i < nr; i++) {
        size_t cnt = 0;
        for (j = 0; j < nfr; j++)
            cnt += fr[j] == roots[i];
        cost += (double)(dom[i].hi - dom[i].lo + 1) * (double)(cnt ? cnt : 1);
    }
    if (E->evals + cost > eval_budget(E))
        goto undecided;
    /* every class on its own: its symbols and input dims on their maps, its facts evaluated */
    for (i = 0; i < nr; i++) {
        sg_int v, span = dom[i].hi - dom[i].lo;
        valid[i] = sg__calloc((size_t)span + 1, 1);
        if (!valid[i]) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            goto done;
        }
        nvalid[i] = 0;
        g_r[i] = 0;
        lo_r[i] = hi_r[i] = 0;
        for (v = dom[i].lo; v <= dom[i].hi; v++) {
            bool ok = true;
            for (j = 0; j < ns; j++) {
                size_t r;
                sg_int a, b, x;
                if (!sg_presolve_form1(E->ps, p->ninputs + syms[j], &r, &a, &b))
                    goto undecided;
                if (r != roots[i] && r != SIZE_MAX)
                    continue;
                if (!sg__mul(a, r == SIZE_MAX ? 0 : v, &x) || !sg__add(x, b, &x))
                    goto undecided;
                E->vals[sg_expr_symbol_index(p->syms[syms[j]].sym)] = x;
            }
            for (j = 0; j < ni; j++) {
                size_t r;
                sg_int a, b, x;
                if (!sg_presolve_form1(E->ps, ins[j], &r, &a, &b))
                    goto undecided;
                if (r != roots[i] && r != SIZE_MAX)
                    continue;
                if (!sg__mul(a, r == SIZE_MAX ? 0 : v, &x) || !sg__add(x, b, &x))
                    goto undecided;
                E->dval[ins[j]] = x;
            }
            for (j = 0; j < nfr && ok; j++) {
                int h;
                if (fr[j] != roots[i])
                    continue;
                h = fact_holds(p, &fl[j], E->vals, E->nvals, E->dval);
                E->evals++;
                if (h < 0)
                    goto undecided; /* undefined somewhere: Z3's encoding decides what that means */
                ok = h == 1;
            }
            valid[i][v - dom[i].lo] = ok;
            if (ok) {
                if (!nvalid[i]++)
                    lo_r[i] = v;
                hi_r[i] = v;
                g_r[i] = sg__gcd(g_r[i], v - lo_r[i]);
            }
        }
        if (nvalid[i] == 0) {
            rc = -1; /* F has no model */
            goto done;
        }
    }
    /* every symbol: a * (valid values of its class) + b */
    for (j = 0; j < ns; j++) {
        size_t k = syms[j], r, ci, nh = 0, nholes = 0;
        sg_int a, b, x1, x2, v, g, step;
        sg_inferred o = res[k];
        if (!sg_presolve_form1(E->ps, p->ninputs + k, &r, &a, &b))
            goto undecided;
        for (ci = 0; ci < nr && roots[ci] != r; ci++)
            ;
        o.lo.inf = o.hi.inf = 0;
        exact_no_holes(&o);
        if (r == SIZE_MAX || ci == nr || nvalid[ci] == 1) { /* a constant */
            sg_int c = b;
            if (r != SIZE_MAX && (ci == nr || !sg__mul(a, lo_r[ci], &c) || !sg__add(c, b, &c)))
                goto undecided;
            o.lo.v = o.hi.v = c;
            o.is_constant = true;
            o.constant = c;
        } else {
            if (!sg__mul(a, lo_r[ci], &x1) || !sg__add(x1, b, &x1) || !sg__mul(a, hi_r[ci], &x2) ||
                !sg__add(x2, b, &x2) || !sg__mul(a < 0 ? -a : a, g_r[ci], &g))
                goto undecided;
            o.lo.v = x1 < x2 ? x1 : x2;
            o.hi.v = x1 < x2 ? x2 : x1;
            o.is_constant = false;
            o.constant = 0;
            if (g >= 2) {
                o.modulus = g;
                if (!sg__pymod(o.lo.v, g, &o.residue))
                    goto undecided;
            }
            step = g_r[ci];
            for (v = lo_r[ci]; step > 0 && v <= hi_r[ci]; v += step)
                nholes += !valid[ci][v - dom[ci].lo];
            if (nholes > FAST_MAX_HOLES)
                goto undecided;
            if (nholes) {
                o.holes = sg__calloc(nholes, sizeof *o.holes);
                if (!o.holes) {
                    rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
                    goto done;
                }
                for (v = lo_r[ci]; v <= hi_r[ci]; v += step)
                    if (!valid[ci][v - dom[ci].lo])
                        o.holes[nh++] = a * v + b;
                if (a < 0)
                    for (i = 0; i < nh / 2; i++) {
                        sg_int t = o.holes[i];
                        o.holes[i] = o.holes[nh - 1 - i];
                        o.holes[nh - 1 - i] = t;
                    }
                o.nholes = nh;
            }
        }
        sg_free(res[k].holes);
        res[k] = o;
        f->root[k] = r;
        f->a[k] = a;
        f->b[k] = b;
    }
    for (j = 0; j < ns; j++) {
        f->done[syms[j]] = true;
        f->ndone++;
    }
    rc = 1;
    goto done;
undecided:
    rc = 0;
done:
    for (i = 0; i < nr; i++)
        sg_free(valid[i]);
    sg_free(fl);
    sg_free(fr);
    return rc;
}

/* ---- Components over several roots at once: every point of a small box ----------------------- */

#define JOINT_ROOTS (SG_INFER_JW - 1) /* roots left (not substituted) one component may range over */
#define JOINT_POINTS ((sg_int)1 << 16) /* points of its box */
#define JOINT_SPAN ((sg_int)1 << 16)   /* values one form may take over the box */

/* A distinct form of the component's symbols, input dims or substituted roots over its roots. */
typedef struct jform {
    sg_lin f;           /* its terms sorted by root */
    sg_int lo, span;    /* its least value over the box, and greatest - least */
    unsigned char *hit; /* [span + 1] values taken at a valid point */
    sg_int val;         /* at the current point */
} jform;

/* Everything one joint enumeration holds (enumerate_joint). */
typedef struct joint {
    size_t roots[JOINT_ROOTS], nr;
    sg_interval dom[JOINT_ROOTS];
    jform *forms;
    size_t nforms;
    size_t *sform, *iform;    /* [ns], [ni]: the form of each symbol, input dim */
    size_t *subf;             /* [nsub] the form of each substituted root met */
    sg_interval *subdom;      /* [nsub] its domain: a fact the box does not state */
    size_t *subroot, nsub;
    bool *sneed, *ineed;      /* [ns], [ni]: read by a fact evaluated */
    /* what joint_point does at each point, compacted once (joint_compact) */
    sg_interval *fdom;        /* [nforms] the meet of the domains of the substituted roots on each form */
    size_t *wslot, *wform;    /* the values a point writes: E->vals[wslot[k]] (k < nws), then */
    size_t nws, nw;           /* E->dval[wslot[k]] (nws <= k < nw), each form wform[k]'s value */
    sg_int pts[SG_INFER_JW][JOINT_ROOTS]; /* valid points spanning the affine hull */
    size_t npts;
} joint;

/* The form of node x into J (deduplicated): its index in *fi; false when not one (see
 * sg_presolve_lin), over too many roots or too wide. *sub: x's substituted root or SIZE_MAX. */
static bool joint_form(enumer *E, joint *J, size_t x, size_t *fi, size_t *sub, sg_interval *sdom)
{
    sg_lin f;
    int a, b;
    size_t i;
    if (!sg_presolve_lin(E->ps, x, &f, sub, sdom))
        return false;
    for (a = 1; a < f.n; a++) /* insertion sort of the terms by root */
        for (b = a; b > 0 && f.v[b - 1] > f.v[b]; b--) {
            size_t tv = f.v[b];
            sg_int tc = f.c[b];
            f.v[b] = f.v[b - 1];
            f.c[b] = f.c[b - 1];
            f.v[b - 1] = tv;
            f.c[b - 1] = tc;
        }
    for (i = 0; i < J->nforms; i++)
        if (J->forms[i].f.n == f.n && J->forms[i].f.k == f.k && !memcmp(J->forms[i].f.v, f.v, f.n * sizeof *f.v) &&
            !memcmp(J->forms[i].f.c, f.c, f.n * sizeof *f.c))
            break;
    if (i == J->nforms) {
        for (a = 0; a < f.n; a++) {
            size_t r;
            for (r = 0; r < J->nr && J->roots[r] != f.v[a]; r++)
                ;
            if (r == J->nr) {
                if (J->nr == JOINT_ROOTS)
                    return false;
                J->roots[J->nr++] = f.v[a];
            }
        }
        J->forms[J->nforms++].f = f;
    }
    *fi = i;
    return true;
}

/* Mark the symbols of `e` among syms[0..ns-1] in need[]; false when the walk is long. */
static bool mark_syms(const sg_problem *p, const sg_expr *e, const size_t *syms, size_t ns, bool *need, unsigned *work,
                      int depth)
{
    size_t i, n;
    if (depth > 64 || ++*work > FAST_WALK_MAX)
        return false;
    if (sg_expr_kind(e) == SG_SYM) {
        const sg_symbol_info *si = sg_trace_symbol_info(p->trace, e);
        for (i = 0; si && i < ns; i++)
            if (syms[i] == (size_t)(si - p->syms))
                need[i] = true;
        return true;
    }
    n = sg_expr_nargs(e);
    for (i = 0; i < n; i++)
        if (!mark_syms(p, sg_expr_arg(e, i), syms, ns, need, work, depth + 1))
            return false;
    return true;
}

/* Mark what fact `ef` reads (its symbols in J->sneed, its input dim in J->ineed). */
static bool fact_needs(const sg_problem *p, const efact *ef, const size_t *syms, size_t ns, const size_t *ins,
                       size_t ni, joint *J)
{
    unsigned work = 0;
    size_t i, k = ef->idx;
    const sg_expr *e = NULL;
    if (!ef->is_def) {
        const sg_constraint *c = &p->cons[ef->idx];
        k = c->index;
        switch (c->kind) {
        case SG_CORE_GUARD:
            return c->expr && mark_syms(p, c->expr, syms, ns, J->sneed, &work, 0);
        case SG_CORE_INPUT:
            for (i = 0; i < ni; i++)
                J->ineed[i] |= ins[i] == c->index;
            return p->inputs[c->index].value && mark_syms(p, p->inputs[c->index].value, syms, ns, J->sneed, &work, 0);
        case SG_CORE_REPLACEMENT:
            break;
        case SG_CORE_RANGE:
            return mark_syms(p, p->syms[k].sym, syms, ns, J->sneed, &work, 0);
        default:
            return false;
        }
    }
    e = p->syms[k].replacement; /* a definition or replacement: s == replacement */
    return e && mark_syms(p, p->syms[k].sym, syms, ns, J->sneed, &work, 0) &&
           mark_syms(p, e, syms, ns, J->sneed, &work, 0);
}

/* The forms of the component's symbols, input dims and substituted roots, its roots and their
 * finite box, what its facts read; false when it is not such a component (see enumerate_joint). */
static bool joint_setup(enumer *E, joint *J, long comp, const size_t *syms, size_t ns, const size_t *ins, size_t ni,
                        const efact *facts, size_t nf, sg_int *npoints)
{
    sg_problem *p = E->p;
    size_t j, i, sub;
    sg_interval sdom;
    for (j = 0; j < ns + ni; j++) {
        size_t x = j < ns ? p->ninputs + syms[j] : ins[j - ns], *fi = j < ns ? &J->sform[j] : &J->iform[j - ns];
        if ((j < ns && sg_expr_symbol_index(p->syms[syms[j]].sym) >= E->nvals) ||
            !joint_form(E, J, x, fi, &sub, &sdom))
            return false;
        if (sub == SIZE_MAX)
            continue;
        for (i = 0; i < J->nsub && J->subroot[i] != sub; i++)
            ;
        if (i < J->nsub)
            continue;
        if (!joint_form(E, J, sub, &J->subf[J->nsub], &x, &sdom) || x != sub)
            return false;
        J->subdom[J->nsub] = sdom;
        J->subroot[J->nsub++] = sub;
    }
    *npoints = 1;
    for (i = 0; i < J->nr; i++) {
        size_t r2;
        sg_int a, b, span;
        if (!sg_presolve_class(E->ps, J->roots[i], &r2, &a, &b, &J->dom[i]) || r2 != J->roots[i] ||
            J->dom[i].lo_inf || J->dom[i].hi_inf || !sg__sub(J->dom[i].hi, J->dom[i].lo, &span) || span < 0 ||
            span >= JOINT_POINTS || (*npoints *= span + 1) > JOINT_POINTS)
            return false;
    }
    for (i = 0; i < J->nforms; i++) { /* each form's least and greatest value over the box */
        jform *F = &J->forms[i];
        sg_int hi = F->f.k, t1, t2;
        int t;
        F->lo = F->f.k;
        for (t = 0; t < F->f.n; t++) {
            size_t r;
            for (r = 0; J->roots[r] != F->f.v[t]; r++)
                ;
            if (!sg__mul(F->f.c[t], J->dom[r].lo, &t1) || !sg__mul(F->f.c[t], J->dom[r].hi, &t2) ||
                !sg__add(F->lo, t1 < t2 ? t1 : t2, &F->lo) || !sg__add(hi, t1 < t2 ? t2 : t1, &hi))
                return false;
        }
        if (!sg__sub(hi, F->lo, &F->span) || F->span >= JOINT_SPAN)
            return false;
    }
    for (j = 0; j < nf; j++)
        if (!fact_in_comp(p, &facts[j], comp) || !fact_needs(p, &facts[j], syms, ns, ins, ni, J))
            return false;
    return true;
}

/* The point `cur` (root values): every form's value, the needed symbols and input dims into E;
 * false when a substituted root leaves its domain (not a model) or on overflow (*bad). */
static bool joint_point(enumer *E, joint *J, const sg_int *cur, bool *bad)
{
    size_t i, r;
    for (i = 0; i < J->nforms; i++) {
        jform *F = &J->forms[i];
        sg_int v = F->f.k, t;
        int q;
        for (q = 0; q < F->f.n; q++) {
            for (r = 0; J->roots[r] != F->f.v[q]; r++)
                ;
            if (!sg__mul(F->f.c[q], cur[r], &t) || !sg__add(v, t, &v)) {
                *bad = true;
                return false;
            }
        }
        F->val = v;
    }
    for (i = 0; i < J->nforms; i++) {
        const sg_interval *d = &J->fdom[i];
        sg_int v = J->forms[i].val;
        if ((!d->lo_inf && v < d->lo) || (!d->hi_inf && v > d->hi))
            return false;
    }
    for (i = 0; i < J->nws; i++)
        E->vals[J->wslot[i]] = J->forms[J->wform[i]].val;
    for (; i < J->nw; i++)
        E->dval[J->wslot[i]] = J->forms[J->wform[i]].val;
    return true;
}

/* joint_point's work once: each form's substituted-root domains met into one (kv48: 96
 * substituted roots on 3 forms), and the slots a point writes listed (the symbols and input dims
 * a fact reads, of 98 and 98). The same points pass and the same values are written. False: out
 * of memory. */
static bool joint_compact(enumer *E, joint *J, const size_t *syms, size_t ns, const size_t *ins, size_t ni)
{
    size_t i;
    if (!SG_CALLOC_ALL(SG_SLOT(J->fdom, J->nforms + 1), SG_SLOT(J->wslot, ns + ni + 1), SG_SLOT(J->wform, ns + ni + 1)))
        return false;
    for (i = 0; i < J->nforms; i++)
        J->fdom[i].lo_inf = J->fdom[i].hi_inf = true;
    for (i = 0; i < J->nsub; i++)
        (void)sg_interval_meet(&J->fdom[J->subf[i]], &J->subdom[i]); /* (empty: no point passes) */
    J->nw = 0;
    for (i = 0; i < ns; i++)
        if (J->sneed[i]) {
            J->wslot[J->nw] = sg_expr_symbol_index(E->p->syms[syms[i]].sym);
            J->wform[J->nw++] = J->sform[i];
        }
    J->nws = J->nw;
    for (i = 0; i < ni; i++)
        if (J->ineed[i]) {
            J->wslot[J->nw] = ins[i];
            J->wform[J->nw++] = J->iform[i];
        }
    return true;
}

/* Keep valid point `cur` when it leaves the affine hull of those kept (basis B of the affine
 * relations that hold at all of them, *nb vectors of nr + 1 entries); false on overflow. */
static bool joint_hull(joint *J, const sg_int *cur, sg_int *B, size_t *nb)
{
    sg_int pt[JOINT_ROOTS + 1], acc, t;
    size_t i, j, w = J->nr + 1;
    bool inside = true;
    if (*nb == 0)
        return true;
    for (i = 0; i < J->nr; i++)
        pt[i] = cur[i];
    pt[J->nr] = 1;
    for (i = 0; i < *nb && inside; i++) {
        acc = 0;
        for (j = 0; j < w; j++)
            if (!sg__mul(B[i * w + j], pt[j], &t) || !sg__add(acc, t, &acc))
                return false;
        inside = acc == 0;
    }
    if (inside)
        return true;
    memcpy(J->pts[J->npts++], cur, J->nr * sizeof *cur);
    return sg__infer_basis_restrict(B, nb, w, pt);
}

/* Symbol k (form F, valid values F->hit) into o: its exact range, congruence and holes; false
 * when it has more than FAST_MAX_HOLES holes (left to Z3) or on overflow, SG_ENOMEM in *rc. */
static bool joint_result(const jform *F, sg_inferred *o, int *rc, sg_error *err)
{
    sg_int lo = -1, hi = -1, g = 0, v;
    size_t nh = 0, nholes = 0;
    for (v = 0; v <= F->span; v++)
        if (F->hit[v]) {
            if (lo < 0)
                lo = v;
            hi = v;
            g = sg__gcd(g, v - lo);
        }
    exact_no_holes(o);
    o->lo.inf = o->hi.inf = 0;
    o->lo.v = F->lo + lo;
    o->hi.v = F->lo + hi;
    o->is_constant = lo == hi;
    o->constant = o->is_constant ? o->lo.v : 0;
    if (o->is_constant)
        return true;
    for (v = lo; g > 0 && v <= hi; v += g)
        nholes += !F->hit[v];
    if (nholes > FAST_MAX_HOLES)
        return false;
    if (g >= 2) {
        o->modulus = g;
        if (!sg__pymod(o->lo.v, g, &o->residue))
            return false;
    }
    if (nholes) {
        if (!(o->holes = sg__calloc(nholes, sizeof *o->holes))) {
            *rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            return false;
        }
        for (v = lo; v <= hi; v += g)
            if (!F->hit[v])
                o->holes[nh++] = F->lo + v;
        o->nholes = nh;
    }
    return true;
}

/* The names the canonical text of a fact gives symbols: "f<form>" for the component's symbols. */
typedef struct form_names {
    char (*name)[24]; /* by symbol index; "" for a symbol outside the component */
    size_t n;
} form_names;

static const char *form_name(const sg_expr *sym, void *payload)
{
    const form_names *fn = payload;
    size_t x = sg_expr_symbol_index(sym);
    return x < fn->n && fn->name[x][0] ? fn->name[x] : NULL;
}

/* The text of `e` with every symbol named by its form into *out ("" for NULL); 0 or an error. */
static int canon_expr(const sg_expr *e, form_names *fn, sg_buf *out)
{
    char *t = NULL;
    int rc;
    if (!e)
        return 0;
    if ((rc = sg_expr_print(&t, e, SG_SYNTAX_SYMPY, form_name, fn, NULL)) != 0)
        return rc;
    sg_buf_printf(out, "%s", t);
    sg_free(t);
    return 0;
}

/*
 * The facts of a joint enumeration that differ once every symbol is read as its form over the
 * roots: kv48's 48 layers each bound their own cache length, `l7 <= 128` and `l9 <= 128` with l7
 * and l9 both l0 after the presolve's substitutions, which hold at the same points. Each fact's
 * text with its symbols named by their forms (and, for a traced shape or a range, the input dim's
 * form or the bounds) is its key; keep[j] says fact j is the first of its key. Facts with one
 * key read the same values at every point, so they hold or fail together: the enumeration
 * evaluates one of them. Returns the number kept, or 0 (every fact kept) when a text cannot be
 * made.
 */
static size_t distinct_facts(enumer *E, const joint *J, const size_t *syms, size_t ns, const size_t *ins, size_t ni,
                             const efact *facts, size_t nf, bool *keep)
{
    const sg_problem *p = E->p;
    form_names fn;
    sg_buf *keys = NULL;
    sg_strmap seen = SG_STRMAP_INIT;
    size_t i, j, kept = 0, *slot;
    bool ok = true;

    fn.n = E->nvals;
    if (!(fn.name = sg__calloc(fn.n + 1, sizeof *fn.name)) || !(keys = sg__calloc(nf + 1, sizeof *keys))) {
        sg_free(fn.name);
        return 0;
    }
    for (i = 0; i < ns; i++) {
        size_t x = sg_expr_symbol_index(p->syms[syms[i]].sym);
        if (x < fn.n)
            snprintf(fn.name[x], sizeof fn.name[x], "f%zu", J->sform[i]);
    }
    for (j = 0; j < nf && ok; j++) {
        sg_buf *b = &keys[j];
        sg_buf_init(b, (size_t)SG_EXPR_MAX_PRINT * 2 + 64);
        if (facts[j].is_def) {
            const sg_symbol_info *si = &p->syms[facts[j].idx];
            sg_buf_printf(b, "def ");
            ok = canon_expr(si->sym, &fn, b) == 0;
            sg_buf_printf(b, " = ");
            ok = ok && canon_expr(si->replacement, &fn, b) == 0;
        } else {
            const sg_constraint *c = &p->cons[facts[j].idx];
            const sg_symbol_info *si = c->kind == SG_CORE_RANGE || c->kind == SG_CORE_REPLACEMENT ? &p->syms[c->index] : NULL;
            char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
            sg_buf_printf(b, "%d ", (int)c->kind);
            switch (c->kind) {
            case SG_CORE_GUARD:
                ok = c->expr && canon_expr(c->expr, &fn, b) == 0;
                break;
            case SG_CORE_RANGE:
                ok = canon_expr(si->sym, &fn, b) == 0;
                sg_buf_printf(b, " [%s, %s]", si->lo.inf ? "-oo" : sg_int_format(lo, si->lo.v),
                              si->hi.inf ? "oo" : sg_int_format(hi, si->hi.v));
                break;
            case SG_CORE_REPLACEMENT:
                ok = canon_expr(si->sym, &fn, b) == 0;
                sg_buf_printf(b, " = ");
                ok = ok && canon_expr(si->replacement, &fn, b) == 0;
                break;
            case SG_CORE_INPUT:
                for (i = 0; i < ni && ins[i] != c->index; i++)
                    ;
                sg_buf_printf(b, "in f%zu = ", i < ni ? J->iform[i] : (size_t)-1);
                ok = i < ni && canon_expr(p->inputs[c->index].value, &fn, b) == 0;
                break;
            default:
                ok = false;
            }
        }
        ok = ok && !b->failed;
    }
    for (j = 0; j < nf && ok; j++) {
        if (!(slot = sg_strmap_slot(&seen, keys[j].data))) {
            ok = false;
            break;
        }
        keep[j] = *slot == SIZE_MAX; /* the first fact of its key */
        *slot = j;
        kept += keep[j];
    }
    sg_strmap_dispose(&seen);
    for (j = 0; j < nf; j++)
        sg_buf_dispose(&keys[j]);
    sg_free(keys);
    sg_free(fn.name);
    return ok ? kept : 0;
}

/*
 * A fact of a joint enumeration read as one affine form over the roots compared with 0 (a guard
 * between linear sides, a traced range, shape or replacement): at a point, a few products of
 * exact integers instead of a walk of its expression, with the same answer (a linear expression
 * over integers has an integer value, never an undefined one). op < 0: not such a fact.
 */
typedef struct jfact {
    int op;                    /* SG_EQ, SG_NE, SG_LT, SG_LE (lhs - rhs against 0), SG_GE for a range */
    int n;
    size_t pos[JOINT_ROOTS];   /* the term's root, as an index into joint.roots */
    sg_int c[JOINT_ROOTS], k;
    sg_bound lo, hi;           /* SG_GE: lo <= form <= hi */
} jfact;

/* The symbol callback of sg_expr_linear: a component symbol's form over the roots. */
typedef struct jsyms {
    const joint *J;
    const size_t *form; /* by symbol index: 1 + the form, 0: not the component's */
    size_t n;
} jsyms;

static bool jsym_form(void *ctx, const sg_expr *sym, sg_lin *f, int depth)
{
    const jsyms *js = ctx;
    size_t x = sg_expr_symbol_index(sym);
    (void)depth;
    if (x >= js->n || !js->form[x])
        return false;
    *f = js->J->forms[js->form[x] - 1].f;
    return true;
}

/* a - b of two linear expressions over the component's symbols (b may be NULL) into *out. */
static bool jdiff(const jsyms *js, const sg_expr *a, const sg_expr *b, sg_lin *out)
{
    sg_lin fb;
    unsigned work = 0;
    if (!sg_expr_linear(a, jsym_form, (void *)js, &work, FAST_WALK_MAX, out, 0))
        return false;
    if (!b)
        return true;
    return sg_expr_linear(b, jsym_form, (void *)js, &work, FAST_WALK_MAX, &fb, 0) && sg_lin_axpy(out, -1, &fb);
}

/* Fact `ef` compiled into *jf (jf->op < 0 when it is not one form against 0). */
static void compile_fact(const sg_problem *p, const joint *J, const jsyms *js, const efact *ef, const size_t *ins,
                         size_t ni, jfact *jf)
{
    sg_lin f;
    int op = -1, t;
    bool ok = false;
    jf->op = -1;
    if (ef->is_def) {
        const sg_symbol_info *si = &p->syms[ef->idx];
        ok = jdiff(js, si->sym, si->replacement, &f);
        op = SG_EQ;
    } else {
        const sg_constraint *c = &p->cons[ef->idx];
        const sg_expr *e = c->expr;
        size_t i;
        switch (c->kind) {
        case SG_CORE_GUARD:
            if (!e || sg_expr_nargs(e) != 2)
                return;
            op = sg_expr_kind(e);
            if (op == SG_GT || op == SG_GE) { /* a > b: b - a < 0 */
                ok = jdiff(js, sg_expr_arg(e, 1), sg_expr_arg(e, 0), &f);
                op = op == SG_GT ? SG_LT : SG_LE;
            } else if (op == SG_EQ || op == SG_NE || op == SG_LT || op == SG_LE) {
                ok = jdiff(js, sg_expr_arg(e, 0), sg_expr_arg(e, 1), &f);
            }
            break;
        case SG_CORE_REPLACEMENT:
            ok = jdiff(js, p->syms[c->index].sym, p->syms[c->index].replacement, &f);
            op = SG_EQ;
            break;
        case SG_CORE_INPUT:
            for (i = 0; i < ni && ins[i] != c->index; i++)
                ;
            if (i == ni || !p->inputs[c->index].value || !jdiff(js, p->inputs[c->index].value, NULL, &f))
                return;
            ok = sg_lin_axpy(&f, -1, &J->forms[J->iform[i]].f); /* value - D */
            op = SG_EQ;
            break;
        case SG_CORE_RANGE:
            ok = jdiff(js, p->syms[c->index].sym, NULL, &f);
            jf->lo = p->syms[c->index].lo;
            jf->hi = p->syms[c->index].hi;
            op = SG_GE;
            break;
        default:
            return;
        }
    }
    if (!ok || f.n > JOINT_ROOTS)
        return;
    for (t = 0; t < f.n; t++) {
        size_t r;
        for (r = 0; r < J->nr && J->roots[r] != f.v[t]; r++)
            ;
        if (r == J->nr)
            return;
        jf->pos[t] = r;
        jf->c[t] = f.c[t];
    }
    jf->n = f.n;
    jf->k = f.k;
    jf->op = op;
}

/* Compiled fact `jf` at point `cur`: 1, 0, or -1 on overflow. */
static int jfact_holds(const jfact *jf, const sg_int *cur)
{
    sg_int v = jf->k, t;
    int q;
    for (q = 0; q < jf->n; q++)
        if (!sg__mul(jf->c[q], cur[jf->pos[q]], &t) || !sg__add(v, t, &v))
            return -1;
    switch (jf->op) {
    case SG_EQ: return v == 0;
    case SG_NE: return v != 0;
    case SG_LT: return v < 0;
    case SG_LE: return v <= 0;
    default: return (jf->lo.inf || v >= jf->lo.v) && (jf->hi.inf || v <= jf->hi.v);
    }
}

/*
 * Component `comp` whose symbols and input dims are affine forms over at most JOINT_ROOTS class
 * roots left by the presolve (its substitutions read through: M = l + T), with finite domains
 * of at most JOINT_POINTS points together. Every model of F restricted to the component has its
 * roots in that box (the presolve's domains hold on every model) and every node at its form (the
 * equalities read are facts of F); conversely a point of the box is a model when the facts the
 * presolve left out or read wider (facts[0..nf-1], evaluated exactly) hold there and every
 * substituted root's form lies in that root's domain (the bounds read on it, which the box of
 * the roots left does not state); the facts read exactly hold at every such point (the presolve's
 * state implies them). So the valid points are exactly the models: each symbol's range,
 * congruence and holes are read off the values its form takes at them (kv48: `T + l0 <= 128`
 * over T and l0), and the valid points that span their affine hull are kept for the relations
 * (sg__infer_fast_relations). Same returns as enumerate_comp.
 */
static int enumerate_joint(enumer *E, long comp, const size_t *syms, size_t ns, const size_t *ins, size_t ni,
                           const efact *facts, size_t nf, sg_inferred *res, sg_infer_fast *f, sg_error *err)
{
    sg_problem *p = E->p;
    joint J;
    sg_int npoints = 0, cur[JOINT_ROOTS], B[(JOINT_ROOTS + 1) * (JOINT_ROOTS + 1)], n;
    size_t nvalid = 0, nb, i, j, nodes = ns + ni, nkept = 0, *symform = NULL;
    bool *keep = NULL;
    jfact *jf = NULL;
    jsyms js;
    sg_inferred *outs = NULL;
    int rc = 0;
    bool bad = false;

    memset(&J, 0, sizeof J);
    if (!SG_CALLOC_ALL(SG_SLOT(J.forms, 2 * nodes + 1), SG_SLOT(J.sform, ns + 1), SG_SLOT(J.iform, ni + 1),
                       SG_SLOT(J.subf, nodes + 1), SG_SLOT(J.subdom, nodes + 1), SG_SLOT(J.subroot, nodes + 1),
                       SG_SLOT(J.sneed, ns + 1), SG_SLOT(J.ineed, ni + 1), SG_SLOT(outs, ns + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto done;
    }
    if (!joint_setup(E, &J, comp, syms, ns, ins, ni, facts, nf, &npoints))
        goto done;
    if (!(keep = sg__calloc(nf + 1, sizeof *keep))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto done;
    }
    if ((nkept = distinct_facts(E, &J, syms, ns, ins, ni, facts, nf, keep)) == 0)
        for (j = 0; j < nf; j++)
            keep[j] = true;
    if (E->evals + (double)npoints * (double)((nkept ? nkept : nf) + J.nsub + 1) > eval_budget(E))
        goto done;
    /* the kept facts that are one form against 0 are evaluated as such; a point writes only the
     * values the others read */
    if (!SG_CALLOC_ALL(SG_SLOT(jf, nf + 1), SG_SLOT(symform, E->nvals + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto done;
    }
    for (j = 0; j < ns; j++) {
        size_t x = sg_expr_symbol_index(p->syms[syms[j]].sym);
        if (x < E->nvals)
            symform[x] = J.sform[j] + 1;
    }
    js.J = &J;
    js.form = symform;
    js.n = E->nvals;
    memset(J.sneed, 0, ns * sizeof *J.sneed);
    memset(J.ineed, 0, ni * sizeof *J.ineed);
    for (j = 0; j < nf; j++) {
        jf[j].op = -1;
        if (!keep[j])
            continue;
        compile_fact(p, &J, &js, &facts[j], ins, ni, &jf[j]);
        if (jf[j].op < 0 && !fact_needs(p, &facts[j], syms, ns, ins, ni, &J))
            goto done; /* (never: joint_setup read every fact so) */
    }
    if (!joint_compact(E, &J, syms, ns, ins, ni)) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto done;
    }
    for (i = 0; i < J.nforms; i++)
        if (!(J.forms[i].hit = sg__calloc((size_t)J.forms[i].span + 1, 1))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            goto done;
        }
    nb = J.nr + 1;
    memset(B, 0, sizeof B);
    for (i = 0; i < nb; i++)
        B[i * nb + i] = 1;
    for (i = 0; i < J.nr; i++)
        cur[i] = J.dom[i].lo;
    for (n = 0; n < npoints; n++) {
        bool ok = joint_point(E, &J, cur, &bad);
        E->evals++;
        for (j = 0; j < nf && ok; j++) {
            int h;
            if (!keep[j])
                continue; /* a fact of the same key was evaluated */
            h = jf[j].op >= 0 ? jfact_holds(&jf[j], cur) : fact_holds(p, &facts[j], E->vals, E->nvals, E->dval);
            E->evals++;
            if (h < 0)
                goto done; /* undefined somewhere (or past 128 bits): Z3's encoding decides what that means */
            ok = h == 1;
        }
        if (bad)
            goto done;
        if (ok) {
            nvalid++;
            for (i = 0; i < J.nforms; i++)
                J.forms[i].hit[J.forms[i].val - J.forms[i].lo] = 1;
            if (!joint_hull(&J, cur, B, &nb))
                goto done;
        }
        for (i = 0; i < J.nr && ++cur[i] > J.dom[i].hi; i++) /* odometer, the first root fastest */
            cur[i] = J.dom[i].lo;
    }
    if (nvalid == 0) {
        rc = -1; /* F has no model */
        goto done;
    }
    for (j = 0; j < ns; j++) {
        outs[j] = res[syms[j]];
        if (!joint_result(&J.forms[J.sform[j]], &outs[j], &rc, err))
            goto done;
    }
    for (j = 0; j < ns; j++) {
        size_t k = syms[j], t;
        sg_free(res[k].holes);
        res[k] = outs[j];
        outs[j].holes = NULL;
        f->done[k] = true;
        f->ndone++;
        f->jcomp[k] = comp;
        f->jn[k] = J.npts;
        for (t = 0; t < J.npts; t++) { /* the symbol's value at each spanning point */
            const jform *F = &J.forms[J.sform[j]];
            sg_int v = F->f.k, x;
            int q;
            for (q = 0; q < F->f.n; q++) {
                for (i = 0; J.roots[i] != F->f.v[q]; i++)
                    ;
                if (!sg__mul(F->f.c[q], J.pts[t][i], &x) || !sg__add(v, x, &v))
                    v = 0; /* never: every partial sum lies within the form's range, checked above */
            }
            f->jval[k * SG_INFER_JW + t] = v;
        }
    }
    rc = 1;
done:
    if (rc != 1 && outs)
        for (j = 0; j < ns; j++)
            sg_free(outs[j].holes);
    for (i = 0; J.forms && i < J.nforms; i++)
        sg_free(J.forms[i].hit);
    SG_FREE_ALL(J.forms, J.sform, J.iform, J.subf, J.subdom, J.subroot, J.sneed, J.ineed, J.fdom, J.wslot, J.wform, outs,
                keep, jf, symform);
    return rc;
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
    iclasses cls;
    int rc = 0;

    memset(&E, 0, sizeof E);
    memset(&cls, 0, sizeof cls);

    memset(f, 0, sizeof *f);
    if (!SG_CALLOC_ALL(SG_SLOT(f->done, p->nsyms + 1), SG_SLOT(f->root, p->nsyms + 1), SG_SLOT(f->a, p->nsyms + 1),
                       SG_SLOT(f->b, p->nsyms + 1), SG_SLOT(f->jcomp, p->nsyms + 1), SG_SLOT(f->jn, p->nsyms + 1),
                       SG_SLOT(f->jval, SG_INFER_JW * (p->nsyms + 1)), SG_SLOT(tainted, nnodes + 1), SG_SLOT(ddef, p->nsyms + 1),
                       SG_SLOT(dcons, p->ncons + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (k = 0; k < p->nsyms; k++)
        f->jcomp[k] = -1;
    if (!sg_presolve_enabled() || p->nsyms == 0 || !p->sym_comp || !p->cons_comp)
        goto cleanup; /* off, or a problem made by hand without components */
    if ((rc = sg_presolve_new(&ps, p, err)))
        goto cleanup;
    sg_presolve_begin(ps);
    for (k = 0; k < p->nsyms; k++) {
        sg_presolve_def(ps, k);
        note_dropped(ps, &ddef[k], p->sym_comp[k], tainted, nnodes, &global);
    }
    for (k = 0; k < p->ncons && !global; k++) {
        sg_presolve_constraint(ps, k);
        note_dropped(ps, &dcons[k], p->cons_comp[k], tainted, nnodes, &global);
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
        exact_no_holes(&o);
        o.is_constant = !o.lo.inf && !o.hi.inf && o.lo.v == o.hi.v;
        o.constant = o.is_constant ? o.lo.v : 0;
        res[k] = o;
        f->done[k] = true;
        f->ndone++;
    }
    /* the components with facts left out: by enumeration when one class over a small domain */
    {
        size_t c, nf = 0;
        E.p = p;
        E.ps = ps;
        E.nvals = sg_pool_nsymbols(p->pool);
        if (!SG_CALLOC_ALL(SG_SLOT(sstart, nnodes + 2), SG_SLOT(istart, nnodes + 2), SG_SLOT(fstart, nnodes + 2),
                           SG_SLOT(slist, p->nsyms + 1), SG_SLOT(ilist, p->ninputs + 1),
                           SG_SLOT(flist, p->nsyms + p->ncons + 1), SG_SLOT(E.vals, E.nvals + 1),
                           SG_SLOT(E.dval, p->ninputs + 1), SG_SLOT(E.valid, FAST_ENUM_MAX))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        if (sg_check__classes_on() && !SG_CALLOC_ALL(SG_SLOT(cls.sloc, p->nsyms + 1), SG_SLOT(cls.dloc, p->ninputs + 1))) {
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
        if (cls.sloc) { /* only a component with a twin in sizes can have an isomorphic one */
            size_t (*key)[3] = sg__malloc((nnodes + 1) * sizeof *key);
            bool ok = key && (cls.twin = sg__calloc(nnodes + 1, sizeof *cls.twin)) != NULL;
            for (c = 0; ok && c < nnodes; c++) {
                key[c][0] = tainted[c] ? sstart[c + 1] - sstart[c] : SIZE_MAX; /* (untainted: unique) */
                key[c][1] = tainted[c] ? istart[c + 1] - istart[c] : c;
                key[c][2] = fstart[c + 1] - fstart[c];
            }
            ok = ok && sg__mark_twins((const size_t (*)[3])key, nnodes, cls.twin);
            sg_free(key);
            if (!ok) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
                goto cleanup;
            }
        }
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
            if (!ok || (ns == 0 && ni == 0)) {
                open = true;
                continue;
            }
            er = 0;
            if (sg_presolve_class(ps, ns ? p->ninputs + slist[sstart[c]] : ilist[istart[c]], &r, &a, &b, &dom)) {
                iclass *cl = NULL;
                double ev0 = E.evals;
                if (cls.sloc && cls.twin[c])
                    er = inf_class_take(&E, &cls, (long)c, r, &dom, slist + sstart[c], ns, ilist + istart[c], ni,
                                        flist + fstart[c], nf, res, f, &cl, err);
                if (er == 0) {
                    er = enumerate_comp(&E, (long)c, r, &dom, slist + sstart[c], ns, ilist + istart[c], ni,
                                        flist + fstart[c], nf, res, f, err);
                    if (er >= 0 && inf_class_note(cl, er, slist + sstart[c], ns, res, E.evals - ev0, err)) {
                        rc = SG_ENOMEM;
                        goto cleanup;
                    }
                }
            }
            if (er == 0) /* several classes: a product of theirs, when their links are redundant */
                er = enumerate_product(&E, (long)c, slist + sstart[c], ns, ilist + istart[c], ni, flist + fstart[c],
                                       nf, res, f, err);
            if (er == 0) /* several roots linked by facts left out, or substituted: every point */
                er = enumerate_joint(&E, (long)c, slist + sstart[c], ns, ilist + istart[c], ni, flist + fstart[c],
                                     nf, res, f, err);
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
                for (k = 0; k < p->nsyms; k++)
                    f->jcomp[k] = -1;
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
    /* kept: every fact it read is implied by F, so what it proves holds on every model of F */
    f->ps = ps;
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
    iclasses_free(&cls);
    return rc;
}

/*
 * The relations among the columns of one jointly enumerated component (the first is colk[i0]):
 * the valid points kept span the affine hull of its models and every symbol is affine in its
 * roots, so a relation holds on every model exactly when it holds at those points; their integer
 * nullspace in reduced echelon form (pivots from the latest column down, as infer_rel.c fits
 * Z3's points) is reported on each pivot. Returns 0, or SG_ENOMEM / the pool's error.
 */
static int joint_relations(sg_problem *p, const sg_infer_fast *f, const size_t *colk, size_t ncol, size_t i0,
                           sg_inferred *out, sg_error *err)
{
    size_t *cols = NULL, *pivot = NULL, nc = 0, w, nb, i, t, c;
    sg_int *B = NULL, *pt = NULL, *row = NULL;
    long comp = f->jcomp[colk[i0]];
    int rc = 0;

    for (i = i0; i < ncol; i++)
        nc += f->done[colk[i]] && f->jcomp[colk[i]] == comp;
    if (nc < 2)
        return 0;
    w = nc + 1;
    if (!SG_CALLOC_ALL(SG_SLOT(cols, nc), SG_SLOT(pivot, w), SG_SLOT(B, w * w), SG_SLOT(pt, w),
                       SG_SLOT(row, ncol + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = i0, nc = 0; i < ncol; i++)
        if (f->done[colk[i]] && f->jcomp[colk[i]] == comp)
            cols[nc++] = i;
    nb = w;
    for (i = 0; i < w; i++)
        B[i * w + i] = 1;
    for (t = 0; t < f->jn[colk[i0]]; t++) {
        for (c = 0; c < nc; c++)
            pt[c] = f->jval[colk[cols[c]] * SG_INFER_JW + t];
        pt[nc] = 1;
        if (!sg__infer_basis_restrict(B, &nb, w, pt))
            goto cleanup; /* overflow: no relation reported (sound) */
    }
    if (nb == 0 || !sg__infer_echelon(B, nb, w, pivot))
        goto cleanup;
    for (i = 0; i < nb; i++) {
        size_t nfree = 0;
        if (pivot[i] == SIZE_MAX || out[colk[cols[pivot[i]]]].equals)
            continue;
        for (c = 0; c < nc; c++)
            nfree += c != pivot[i] && B[i * w + c] != 0;
        if (nfree == 0)
            continue; /* a constant: reported as such */
        memset(row, 0, (ncol + 1) * sizeof *row);
        for (c = 0; c < nc; c++)
            row[cols[c]] = B[i * w + c];
        row[ncol] = B[i * w + nc];
        out[colk[cols[pivot[i]]]].equals = sg__infer_relation_expr(p, row, colk, ncol, cols[pivot[i]]);
        if (!out[colk[cols[pivot[i]]]].equals) {
            const sg_error *pe = sg_pool_error(p->pool);
            rc = sg_error_set(err, pe ? pe->code : SG_ENOMEM, "building a relation: %s",
                              pe ? pe->msg : "out of memory");
            goto cleanup;
        }
    }
cleanup:
    SG_FREE_ALL(cols, pivot, B, pt, row);
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
        if (!f->done[m] || out[m].is_constant || out[m].equals || f->jcomp[m] >= 0)
            continue;
        /* the first column of m's class: m = a_m r + b_m, e = a_e r + b_e, so
         * a_e m - a_m e + (a_m b_e - a_e b_m) = 0, divided by the gcd, m's coefficient positive
         * (a = +-1: m = a_m a_e (e - b_e) + b_m, as before; a product component's classes may
         * have any a, 2*r + 1) */
        for (j = 0; j < i; j++) {
            size_t e = colk[j];
            sg_int t1, t2, c, g;
            if (!f->done[e] || out[e].is_constant || f->jcomp[e] >= 0 || f->root[e] != f->root[m])
                continue;
            if (f->a[m] == 0 || f->a[e] == 0 || f->a[m] == SG_INT_MIN || f->a[e] == SG_INT_MIN ||
                !sg__mul(f->a[m], f->b[e], &t1) || !sg__mul(f->a[e], f->b[m], &t2) || !sg__sub(t1, t2, &c) ||
                c == SG_INT_MIN)
                break; /* overflow: no relation reported (sound) */
            memset(row, 0, (ncol + 1) * sizeof *row);
            row[i] = f->a[e];
            row[j] = -f->a[m];
            row[ncol] = c;
            g = sg__gcd(sg__gcd(row[i] < 0 ? -row[i] : row[i], row[j] < 0 ? -row[j] : row[j]), c < 0 ? -c : c);
            if (g > 1) {
                row[i] /= g;
                row[j] /= g;
                row[ncol] /= g;
            }
            if (row[i] < 0) {
                row[i] = -row[i];
                row[j] = -row[j];
                row[ncol] = -row[ncol];
            }
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
    for (i = 0; i < ncol && !rc; i++) {
        bool first = f->done[colk[i]] && f->jcomp[colk[i]] >= 0;
        for (j = 0; j < i && first; j++)
            first = f->jcomp[colk[j]] != f->jcomp[colk[i]];
        if (first)
            rc = joint_relations(p, f, colk, ncol, i, out, err);
    }
cleanup:
    sg_free(row);
    return rc;
}
