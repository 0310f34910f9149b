/*
 * fix_box.c - fitting a derived spec's box inside the joint linear guards
 * (analysis/fix_box.h).
 *
 * Every symbol of the trace is written, once and memoised, as a linear form
 * over the groups' symbols (the fit's variables): a group's own symbol is
 * itself, any other symbol is what its proved relation (`equals`) or torch's
 * replacement says, read linearly, recursively. A guard `lhs <op> rhs` becomes
 * f <= 0 with f linear over the variables; its largest value over the box is
 * the sum of each term at the bound its sign picks, exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/fix_box.h"
#include "expr/expr.h"
#include "util/lin.h"
#include "util/util.h"

#define DEPTH_MAX 16    /* replacement / relation hops followed from one symbol */
#define WORK_MAX 4096   /* expression nodes one guard may visit (a shared DAG is not unfolded) */

/* Σ c[j] * var v[j] + k (util/lin.h). */
typedef sg_lin form;

enum { SYM_NEW, SYM_BUSY, SYM_OK, SYM_FAILED };

typedef struct fitter {
    const sg_trace *t;
    sg_fit_var *vars;
    size_t nvars, nsym;
    long *var_of;                  /* [nsym] variable whose symbol this is, or -1 */
    const sg_inferred **fact_of;   /* [nsym] the report's facts about the symbol, or NULL */
    unsigned char *state;          /* [nsym] SYM_* */
    form *memo;                    /* [nsym] the symbol's form when SYM_OK */
    unsigned work;
} fitter;

static bool form_of(fitter *F, const sg_expr *e, form *f, int depth);

/* Symbol `sym` as a form over the variables (memoised); false when it has none. */
static bool sym_form(fitter *F, const sg_expr *sym, form *f, int depth)
{
    uint32_t k = sg_expr_symbol_index(sym);
    const sg_symbol_info *si;
    const sg_expr *via[2];
    int j;
    memset(f, 0, sizeof *f);
    if (k >= F->nsym || sg_expr_sort(sym) != SG_SORT_INT)
        return false;
    if (F->var_of[k] >= 0)
        return sg_lin_add_term(f, (size_t)F->var_of[k], 1);
    if (F->state[k] == SYM_OK) {
        *f = F->memo[k];
        return true;
    }
    if (F->state[k] != SYM_NEW || depth > DEPTH_MAX)
        return false; /* failed before, or a cycle of relations */
    F->state[k] = SYM_BUSY;
    si = sg_trace_symbol_info(F->t, sym);
    via[0] = F->fact_of[k] ? F->fact_of[k]->equals : NULL;
    via[1] = si ? si->replacement : NULL;
    for (j = 0; j < 2; j++)
        if (via[j] && form_of(F, via[j], f, depth + 1)) {
            F->memo[k] = *f;
            F->state[k] = SYM_OK;
            return true;
        }
    F->state[k] = SYM_FAILED;
    memset(f, 0, sizeof *f);
    return false;
}

static bool sym_form_cb(void *ctx, const sg_expr *sym, form *f, int depth) { return sym_form(ctx, sym, f, depth); }

/* Linear expression `e` as a form over the variables; false when it is not linear over them. */
static bool form_of(fitter *F, const sg_expr *e, form *f, int depth)
{
    return sg_expr_linear(e, sym_form_cb, F, &F->work, WORK_MAX, f, depth);
}

/* ceil(a / c) for c > 0; false on overflow. */
static bool ceil_div(sg_int a, sg_int c, sg_int *q)
{
    if (a == SG_INT_MIN || !sg__floordiv(-a, c, q))
        return false;
    *q = -*q;
    return true;
}

/* Term j's largest contribution c * x over the box; false when unbounded or overflowing. */
static bool term_max(const fitter *F, const form *f, int j, sg_int *out)
{
    const sg_fit_var *x = &F->vars[f->v[j]];
    sg_bound b = f->c[j] > 0 ? x->hi : x->lo;
    return !b.inf && sg__mul(f->c[j], b.v, out);
}

/* k + the largest contributions of every term but `skip` (-1: none); false when unbounded. */
static bool rest_max(const fitter *F, const form *f, int skip, sg_int *out)
{
    int j;
    sg_int t;
    *out = f->k;
    for (j = 0; j < f->n; j++)
        if (j != skip && (!term_max(F, f, j, &t) || !sg__add(*out, t, out)))
            return false;
    return true;
}

/* Narrow the box until f <= 0 holds on all of it (as far as the examples allow). */
static void fit(fitter *F, const form *f, size_t *nchanged)
{
    int order[SG_LIN_MAX], m = 0, i, j;
    sg_int mx;
    if (f->n < 2)
        return; /* one variable: its own range says it (inference) */
    for (j = 0; j < f->n; j++)
        if (!F->vars[f->v[j]].changeable)
            return;
    if (rest_max(F, f, -1, &mx) && mx <= 0)
        return;
    for (j = 0; j < f->n; j++) { /* the latest group first */
        for (i = m; i > 0 && F->vars[f->v[order[i - 1]]].order < F->vars[f->v[j]].order; i--)
            order[i] = order[i - 1];
        order[i] = j;
        m++;
    }
    for (i = 0; i < m; i++) {
        sg_fit_var *x;
        sg_int rest, c, nb;
        bool finite;
        j = order[i];
        x = &F->vars[f->v[j]];
        c = f->c[j];
        finite = rest_max(F, f, j, &rest);
        if (c > 0) { /* c x + rest <= 0: x <= floor(-rest / c), not below the example */
            sg_bound lim = x->has_example ? (sg_bound){x->example, 0} : x->lo;
            if (!x->lo.inf && !lim.inf && lim.v < x->lo.v)
                lim = x->lo;
            if (finite) {
                if (rest == SG_INT_MIN || !sg__floordiv(-rest, c, &nb))
                    return;
                if (!lim.inf && nb < lim.v)
                    nb = lim.v;
            } else if (!lim.inf) {
                nb = lim.v;
            } else {
                continue;
            }
            if (x->hi.inf || nb < x->hi.v) {
                x->hi.inf = 0;
                x->hi.v = nb;
                (*nchanged)++;
            }
        } else { /* c < 0: x >= ceil(rest / -c), not above the example */
            sg_bound lim = x->has_example ? (sg_bound){x->example, 0} : x->hi;
            if (!x->hi.inf && !lim.inf && lim.v > x->hi.v)
                lim = x->hi;
            if (c == SG_INT_MIN)
                return;
            if (finite) {
                if (!ceil_div(rest, -c, &nb))
                    return;
                if (!lim.inf && nb > lim.v)
                    nb = lim.v;
            } else if (!lim.inf) {
                nb = lim.v;
            } else {
                continue;
            }
            if (x->lo.inf || nb > x->lo.v) {
                x->lo.inf = 0;
                x->lo.v = nb;
                (*nchanged)++;
            }
        }
        if (rest_max(F, f, -1, &mx) && mx <= 0)
            return;
    }
}

/* lhs <op> rhs as f <= 0 (<=, <, >=, >; integers: x < y is x - y + 1 <= 0). */
static bool guard_form(fitter *F, const sg_expr *e, form *f)
{
    sg_kind op = sg_expr_kind(e);
    form r;
    sg_int one = 0;
    if ((op != SG_LE && op != SG_LT && op != SG_GE && op != SG_GT) || sg_expr_nargs(e) != 2)
        return false;
    F->work = 0;
    if (!form_of(F, sg_expr_arg(e, 0), f, 0) || !form_of(F, sg_expr_arg(e, 1), &r, 0) || !sg_lin_axpy(f, -1, &r))
        return false;
    if (op == SG_GE || op == SG_GT) {
        form neg;
        memset(&neg, 0, sizeof neg);
        if (!sg_lin_axpy(&neg, -1, f))
            return false;
        *f = neg;
    }
    if (op == SG_LT || op == SG_GT)
        one = 1;
    return sg__add(f->k, one, &f->k);
}

int sg_fix_fit_box(const sg_trace *t, const sg_inferred *facts, size_t nfacts, sg_fit_var *vars, size_t nvars,
                   size_t *nchanged, sg_error *err)
{
    fitter F;
    size_t i, ng = 0, ns = 0;
    const sg_guard *g = sg_trace_guards(t, &ng);
    const sg_symbol_info *si = sg_trace_symbols(t, &ns);
    int rc = 0;

    *nchanged = 0;
    if (nvars < 2)
        return 0;
    memset(&F, 0, sizeof F);
    F.t = t;
    F.vars = vars;
    F.nvars = nvars;
    F.nsym = sg_pool_nsymbols(sg_trace_pool(t));
    F.var_of = sg__malloc((F.nsym + 1) * sizeof *F.var_of);
    F.fact_of = sg__calloc(F.nsym + 1, sizeof *F.fact_of);
    F.state = sg__calloc(F.nsym + 1, sizeof *F.state);
    F.memo = sg__malloc((F.nsym + 1) * sizeof *F.memo);
    if (!F.var_of || !F.fact_of || !F.state || !F.memo) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory fitting a fix");
        goto cleanup;
    }
    for (i = 0; i < F.nsym; i++)
        F.var_of[i] = -1;
    for (i = 0; i < nvars; i++) {
        uint32_t k = sg_expr_symbol_index(vars[i].sym);
        if (k < F.nsym)
            F.var_of[k] = (long)i;
    }
    for (i = 0; i < nfacts; i++) {
        uint32_t k = sg_expr_symbol_index(facts[i].sym);
        if (k < F.nsym)
            F.fact_of[k] = &facts[i];
    }
    for (i = 0; i < ng; i++) {
        form f;
        if (g[i].expr && guard_form(&F, g[i].expr, &f))
            fit(&F, &f, nchanged);
    }
    for (i = 0; i < ns; i++) { /* traced ranges of symbols that are sums of groups (M = T + l) */
        form f, b;
        uint32_t k = sg_expr_symbol_index(si[i].sym);
        F.work = 0;
        if (k >= F.nsym || F.var_of[k] >= 0 || !sym_form(&F, si[i].sym, &f, 0) || f.n < 2)
            continue;
        if (!si[i].lo.inf) { /* lo - f <= 0 */
            memset(&b, 0, sizeof b);
            b.k = si[i].lo.v;
            if (sg_lin_axpy(&b, -1, &f))
                fit(&F, &b, nchanged);
        }
        if (!si[i].hi.inf) { /* f - hi <= 0 */
            b = f;
            if (sg__sub(b.k, si[i].hi.v, &b.k))
                fit(&F, &b, nchanged);
        }
    }
cleanup:
    sg_free(F.var_of);
    sg_free((void *)F.fact_of);
    sg_free(F.state);
    sg_free(F.memo);
    return rc;
}
