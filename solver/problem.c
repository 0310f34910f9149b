/*
 * problem.c - building the constraint set of a trace (solver/problem.h):
 * the Z3 variables and the encoding of definitions, constraints and spec
 * items with their tracking literals, the source and spec-root names, and
 * the components (union-find over input dims, symbols and spec roots).
 *
 * Not here: running queries over what is built - the solvers, tactics,
 * budgets and the linearity test (problem_run.c); the question interface
 * the analyses use (query.c).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "solver/problem.h"
#include "solver/watchdog.h"
#include "util/util.h"

/* ---- Term helpers ---------------------------------------------------------------- */

const sg_term *sg_problem_keep(sg_problem *p, const sg_term *a)
{
    if (!a)
        return NULL;
    if (sg__grow((void **)&p->keep, &p->keep_cap, p->nkeep + 1, sizeof *p->keep)) {
        /* No room to remember it: keep the term alive anyway (deleting the context releases
         * it, so the context is not reused) rather than hand NULL on. */
        sg_t_ref(p->ts, a);
        sg_terms_no_reuse(p->ts);
        return a;
    }
    sg_t_ref(p->ts, a);
    p->keep[p->nkeep++] = a;
    return a;
}

#define K(x) sg_problem_keep(p, (x))

Z3_context sg_problem_context(sg_problem *p) { return sg_terms_context(p->ts); }

static const sg_term *mk_int_const(sg_problem *p, const char *name) { return K(sg_t_const(p->ts, name, SG_TS_INT)); }

static const sg_term *mk_bool_const(sg_problem *p, const char *name) { return K(sg_t_const(p->ts, name, SG_TS_BOOL)); }

const sg_term *sg_problem_num(sg_problem *p, sg_int v) { return K(sg_t_int(p->ts, v)); }

const sg_term *sg_problem_and2(sg_problem *p, const sg_term *a, const sg_term *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return K(sg_t_app2(p->ts, SG_T_AND, a, b));
}

#define mk_num sg_problem_num
#define mk_and2 sg_problem_and2
#define EQ(a, b) K(sg_t_app2(p->ts, SG_T_EQ, (a), (b)))

/* lo <= t <= hi for the finite sides; NULL when both are infinite. */
static const sg_term *mk_bounds(sg_problem *p, const sg_term *t, sg_bound lo, sg_bound hi)
{
    const sg_term *r = NULL;
    if (lo.inf == 0)
        r = K(sg_t_app2(p->ts, SG_T_GE, t, mk_num(p, lo.v)));
    if (hi.inf == 0)
        r = mk_and2(p, r, K(sg_t_app2(p->ts, SG_T_LE, t, mk_num(p, hi.v))));
    return r;
}

/* ---- Source names ---------------------------------------------------------------- */

/* The input dim whose source is `src`, or -1. Also maps strict mode's
 * L['flat_args'][k].size()[d] to the k-th tensor input's dim d. */
/* FNV-1a of a string. */
static size_t hash_name(const char *s)
{
    size_t h = 1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    return h;
}

/* Index the input dims by source (open addressing, the first dim of a source wins, as the
 * linear scan did). Returns 0 or SG_ENOMEM. */
static int index_sources(sg_problem *p, sg_error *err)
{
    size_t i, cap;
    for (cap = 16; cap < 2 * p->ninputs + 2; cap *= 2)
        ;
    p->src_slot = sg__malloc(cap * sizeof *p->src_slot);
    if (!p->src_slot)
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    p->src_cap = cap;
    for (i = 0; i < cap; i++)
        p->src_slot[i] = -1;
    for (i = 0; i < p->ninputs; i++) {
        const char *src = p->inputs[i].source;
        size_t h;
        bool dup = false;
        if (!src)
            continue;
        for (h = hash_name(src) & (cap - 1); p->src_slot[h] >= 0; h = (h + 1) & (cap - 1))
            if (strcmp(p->inputs[p->src_slot[h]].source, src) == 0) {
                dup = true;
                break;
            }
        if (!dup)
            p->src_slot[h] = (long)i;
    }
    return 0;
}

static long input_of_source(const sg_problem *p, const char *src)
{
    size_t i;
    const char *fa = "L['flat_args'][";
    if (p->src_cap) {
        size_t h;
        for (h = hash_name(src) & (p->src_cap - 1); p->src_slot[h] >= 0; h = (h + 1) & (p->src_cap - 1))
            if (strcmp(p->inputs[p->src_slot[h]].source, src) == 0)
                return p->src_slot[h];
    } else {
        for (i = 0; i < p->ninputs; i++)
            if (p->inputs[i].source && strcmp(p->inputs[i].source, src) == 0)
                return (long)i;
    }
    if (strncmp(src, fa, strlen(fa)) == 0) {
        long k = -1, d = -1, tensor = -1;
        const char *prev = NULL;
        if (sscanf(src + strlen(fa), "%ld].size()[%ld]", &k, &d) != 2 || k < 0 || d < 0)
            return -1;
        for (i = 0; i < p->ninputs; i++) {
            if (!prev || strcmp(prev, p->inputs[i].path) != 0) {
                tensor++;
                prev = p->inputs[i].path;
            }
            if (tensor == k && p->inputs[i].dim == d)
                return (long)i;
        }
    }
    return -1;
}

const char *sg_problem_source_of(const sg_expr *sym, void *problem)
{
    const sg_problem *p = problem;
    const sg_symbol_info *si = sg_trace_symbol_info(p->trace, sym);
    long i;
    if (!si)
        return NULL;
    i = p->sym_input[si - p->syms];
    if (i >= 0 && p->inputs[i].source)
        return p->inputs[i].source;
    return si->nsources ? si->sources[0] : NULL;
}

/* ---- Building ----------------------------------------------------------------------- */

static bool mentions(const sg_problem *p, const sg_expr *e, const bool *flag_by_sym, sg_error *err, int *rc)
{
    const sg_expr **syms = NULL;
    size_t n = 0, k;
    bool any = false;
    *rc = sg_expr_symbols(&syms, &n, p->pool, e, err);
    if (*rc)
        return false;
    for (k = 0; k < n && !any; k++) {
        const sg_symbol_info *si = sg_trace_symbol_info(p->trace, syms[k]);
        any = si && flag_by_sym[si - p->syms];
    }
    sg_free((void *)syms);
    return any;
}

static long x_index(const sg_problem *p, const char *name)
{
    size_t h;
    if (!p->x_cap || !name)
        return -1;
    for (h = hash_name(name) & (p->x_cap - 1); p->x_slot[h] >= 0; h = (h + 1) & (p->x_cap - 1))
        if (strcmp(p->names[p->x_slot[h]], name) == 0)
            return p->x_slot[h];
    return -1;
}

long sg_problem_x_index(const sg_problem *p, const char *name) { return x_index(p, name); }

size_t sg_problem_sym_pos(const sg_expr *sym, void *ctx)
{
    const sg_comp_pos *c = ctx;
    const sg_symbol_info *si = sg_trace_symbol_info(c->p->trace, sym);
    size_t k = si ? (size_t)(si - c->p->syms) : SIZE_MAX;
    return k < c->p->nsyms && c->p->sym_comp[k] == c->comp ? c->pos[k] : SIZE_MAX;
}

/* Put X index x (named p->names[x]) into the name index, growing it at half load. */
static int x_index_put(sg_problem *p, size_t x, sg_error *err)
{
    size_t h, i;
    if (2 * (x + 1) >= p->x_cap) {
        size_t cap = p->x_cap ? p->x_cap * 2 : 16;
        long *slot = sg__malloc(cap * sizeof *slot);
        if (!slot)
            return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
        for (i = 0; i < cap; i++)
            slot[i] = -1;
        sg_free(p->x_slot);
        p->x_slot = slot;
        p->x_cap = cap;
        for (i = 0; i < x; i++) {
            for (h = hash_name(p->names[i]) & (cap - 1); slot[h] >= 0; h = (h + 1) & (cap - 1))
                ;
            slot[h] = (long)i;
        }
    }
    for (h = hash_name(p->names[x]) & (p->x_cap - 1); p->x_slot[h] >= 0; h = (h + 1) & (p->x_cap - 1))
        ;
    p->x_slot[h] = (long)x;
    return 0;
}

/* Add spec root `name` (once); `plain`: an input dim the spec names by it (a DIM, not DERIVED). */
static int add_x(sg_problem *p, const char *name, bool plain, sg_error *err)
{
    char buf[80];
    size_t cap = p->nx;
    long x = x_index(p, name);
    if (x >= 0) {
        p->x_nplain[x] += plain;
        return 0;
    }
    if (sg__grow((void **)&p->names, &cap, p->nx + 1, sizeof *p->names))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    cap = p->nx;
    if (sg__grow((void **)&p->xvar, &cap, p->nx + 1, sizeof *p->xvar))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    cap = p->nx;
    if (sg__grow((void **)&p->x_nplain, &cap, p->nx + 1, sizeof *p->x_nplain))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    p->names[p->nx] = name;
    p->x_nplain[p->nx] = plain;
    if (x_index_put(p, p->nx, err))
        return SG_ENOMEM;
    /* the index keeps two long names that share a prefix apart; the name is for reading */
    snprintf(buf, sizeof buf, "X!%zu!%.40s", p->nx, name);
    p->xvar[p->nx++] = mk_int_const(p, buf);
    return 0;
}

/* `e` with every symbol named like a spec root replaced by its X variable. */
static const sg_term *over_roots(sg_problem *p, const sg_expr *e, sg_error *err, int *rc)
{
    const sg_term *v = NULL, *from[64], *to[64];
    const sg_expr **syms = NULL;
    size_t n = 0, k, m = 0;
    *rc = sg_smt_encode(p->smt, e, &v, NULL, err);
    if (*rc)
        return NULL;
    *rc = sg_expr_symbols(&syms, &n, p->pool, e, err);
    if (*rc)
        return NULL;
    for (k = 0; k < n && m < 64; k++) {
        long x = x_index(p, sg_expr_symbol_name(syms[k]));
        if (x >= 0) {
            from[m] = sg_smt_symbol(p->smt, syms[k]);
            to[m++] = p->xvar[x];
        }
    }
    sg_free((void *)syms);
    return K(sg_t_substitute(p->ts, v, m, from, to));
}

static int build_spec(sg_problem *p, size_t i, sg_error *err)
{
    const sg_input_dim *d = &p->inputs[i];
    const sg_term *D = p->dvar[i], *item = NULL;
    int rc = 0;
    char buf[48];

    switch (d->kind) {
    case SG_SPEC_DIM: {
        const sg_term *X = p->xvar[x_index(p, d->name)];
        sg_bound lo = sg_trace__dim_floor(p->trace, d->min); /* torch analyses sizes from 2: 0/1 specialise */
        item = mk_and2(p, EQ(D, X), mk_bounds(p, X, lo, d->max));
        break;
    }
    case SG_SPEC_DERIVED: {
        const sg_term *X = p->xvar[x_index(p, d->root_name)], *f = over_roots(p, d->derived, err, &rc);
        if (rc)
            return rc;
        sg_bound none = {0, 1}, zero = {0, 0};
        sg_bound rlo = sg_trace__root_floor(p->trace, d), dlo = sg_trace__dim_floor(p->trace, zero);
        /* a root no input names is a phantom symbol that torch creates like a size, from 2 (its
         * range_constraints say [2, max] for Dim('_n', max=20) under 2*_n; trace/spec.c) */
        item = mk_and2(p, EQ(D, f), mk_bounds(p, X, rlo, d->root_max));
        item = mk_and2(p, item, mk_bounds(p, D, dlo, none)); /* the size itself as a Dim's */
        break;
    }
    case SG_SPEC_STATIC: case SG_SPEC_UNSET:
        item = EQ(D, mk_num(p, d->has_static_size ? d->static_size : d->size));
        break;
    case SG_SPEC_AUTO: case SG_SPEC_DYNAMIC:
        /* the bounds of a hint whose traced value is over checked symbols (torch tied it to a
         * named dim) are not a promise about the shapes but a range torch's program enforces on
         * that named dim: they stay in the symbol's traced range, a checked constraint, and are
         * not assumed here (Dim.AUTO(max=16) tied to Dim('d', max=64) refutes d) */
        if (d->has_bounds && !(d->value && mentions(p, d->value, p->sym_checked, err, &rc)))
            item = mk_bounds(p, D, d->min, d->max);
        if (rc)
            return rc;
        break;
    }
    if (sg_terms_failed(p->ts))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    if (item) {
        p->spec[i] = item;
        snprintf(buf, sizeof buf, "spec!%zu", i);
        p->spec_lit[i] = mk_bool_const(p, buf);
    }
    return 0;
}

static int add_constraint(sg_problem *p, size_t *cap, sg_core_kind kind, size_t index, const sg_expr *expr,
                          const sg_term *holds, bool checked, bool unbacked, sg_error *err)
{
    sg_constraint *k;
    char buf[48];
    if (sg__grow((void **)&p->cons, cap, p->ncons + 1, sizeof *p->cons))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    k = &p->cons[p->ncons];
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->index = index;
    k->expr = expr;
    k->holds = K(holds);
    snprintf(buf, sizeof buf, "c!%zu", p->ncons);
    k->lit = mk_bool_const(p, buf);
    k->checked = checked && !unbacked;
    k->unbacked = unbacked;
    p->ncons++;
    return 0;
}

/* ---- Components (union-find over input dims, symbols and spec names) ------------------- */

static long uf_find(long *par, long x)
{
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

static void uf_union(long *par, long a, long b)
{
    a = uf_find(par, a);
    b = uf_find(par, b);
    if (a != b)
        par[a < b ? b : a] = a < b ? a : b;
}

/* Union `node` with every known symbol of `e`; returns the first symbol's node (or `node`). */
static long union_expr(sg_problem *p, long *par, long node, const sg_expr *e, int *rc, sg_error *err)
{
    const sg_expr **syms = NULL;
    size_t n = 0, k;
    long first = node;
    if (!e)
        return node;
    if ((*rc = sg_expr_symbols(&syms, &n, p->pool, e, err)))
        return -1;
    for (k = 0; k < n; k++) {
        const sg_symbol_info *si = sg_trace_symbol_info(p->trace, syms[k]);
        long sn;
        if (!si)
            continue;
        sn = (long)(p->ninputs + (size_t)(si - p->syms));
        if (first < 0)
            first = sn;
        else
            uf_union(par, first, sn);
    }
    sg_free((void *)syms);
    return first;
}

static int components(sg_problem *p, sg_error *err)
{
    size_t nnodes = p->ninputs + p->nsyms + p->nx, i, k;
    long *par = sg__malloc((nnodes + 1) * sizeof *par), *anchor = NULL;
    int rc = 0;

    p->input_comp = sg__malloc((p->ninputs + 1) * sizeof *p->input_comp);
    p->sym_comp = sg__malloc((p->nsyms + 1) * sizeof *p->sym_comp);
    p->cons_comp = sg__malloc((p->ncons + 1) * sizeof *p->cons_comp);
    anchor = sg__malloc((p->ncons + 1) * sizeof *anchor);
    if (!par || !p->input_comp || !p->sym_comp || !p->cons_comp || !anchor) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory splitting the problem");
        goto cleanup;
    }
    for (i = 0; i < nnodes; i++)
        par[i] = (long)i;
    for (k = 0; k < p->nsyms && !rc; k++) { /* definitions */
        const sg_symbol_info *si = &p->syms[k];
        long sn = (long)(p->ninputs + k), x = -1;
        for (i = 0; i < si->nsources && x < 0; i++)
            x = x_index(p, si->sources[i]);
        if (p->sym_input[k] >= 0)
            uf_union(par, sn, p->sym_input[k]);
        else if (x >= 0)
            uf_union(par, sn, (long)(p->ninputs + p->nsyms) + x);
        else if (si->replacement)
            union_expr(p, par, sn, si->replacement, &rc, err);
    }
    for (i = 0; i < p->ninputs; i++) { /* spec names */
        const sg_input_dim *d = &p->inputs[i];
        long x = d->kind == SG_SPEC_DIM ? x_index(p, d->name) : d->kind == SG_SPEC_DERIVED ? x_index(p, d->root_name) : -1;
        if (x >= 0)
            uf_union(par, (long)i, (long)(p->ninputs + p->nsyms) + x);
    }
    for (k = 0; k < p->ncons && !rc; k++) { /* constraints */
        const sg_constraint *c = &p->cons[k];
        switch (c->kind) {
        case SG_CORE_INPUT:
            anchor[k] = union_expr(p, par, (long)c->index, c->expr, &rc, err);
            break;
        case SG_CORE_REPLACEMENT:
            anchor[k] = union_expr(p, par, (long)(p->ninputs + c->index), p->syms[c->index].replacement, &rc, err);
            break;
        case SG_CORE_RANGE:
            anchor[k] = (long)(p->ninputs + c->index);
            break;
        default:
            anchor[k] = union_expr(p, par, -1, c->expr, &rc, err);
            break;
        }
    }
    if (rc)
        goto cleanup;
    for (i = 0; i < p->ninputs; i++)
        p->input_comp[i] = uf_find(par, (long)i);
    for (k = 0; k < p->nsyms; k++)
        p->sym_comp[k] = uf_find(par, (long)(p->ninputs + k));
    for (k = 0; k < p->ncons; k++)
        p->cons_comp[k] = anchor[k] >= 0 ? uf_find(par, anchor[k]) : -1;
cleanup:
    sg_free(par);
    sg_free(anchor);
    return rc;
}

int sg_problem_build(sg_problem **out, const sg_trace *t, sg_pool *pool, const sg_runtime *rt, sg_error *err)
{
    sg_problem *p = sg__calloc(1, sizeof *p);
    size_t i, k, ng = 0, cap = 0;
    const sg_guard *guards;
    bool *unbacked = NULL;
    const sg_term *defs = NULL;
    int rc = 0;

    *out = NULL;
    if (!p)
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    p->trace = t;
    p->pool = pool;
    p->contexts = rt ? rt->contexts : NULL;
    if ((rc = sg_smt_new_in(&p->smt, p->pool, p->contexts, err)))
        goto cleanup;
    p->ts = sg_smt_terms(p->smt);
    p->inputs = sg_trace_inputs(t, &p->ninputs);
    p->syms = sg_trace_symbols(t, &p->nsyms);
    guards = sg_trace_guards(t, &ng);
    if (!SG_CALLOC_ALL(SG_SLOT(p->dvar, p->ninputs + 1), SG_SLOT(p->spec, p->ninputs + 1),
                       SG_SLOT(p->spec_lit, p->ninputs + 1), SG_SLOT(p->named, p->ninputs + 1),
                       SG_SLOT(p->sym_input, p->nsyms + 1), SG_SLOT(p->sym_checked, p->nsyms + 1),
                       SG_SLOT(unbacked, p->nsyms + 1), SG_SLOT(p->sym_def, p->nsyms + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
        goto cleanup;
    }
    if ((rc = index_sources(p, err)))
        goto cleanup;
    for (i = 0; i < p->ninputs; i++) {
        char buf[48];
        const sg_input_dim *d = &p->inputs[i];
        snprintf(buf, sizeof buf, "D!%zu", i);
        p->dvar[i] = mk_int_const(p, buf);
        p->named[i] = d->kind == SG_SPEC_DIM || d->kind == SG_SPEC_DERIVED;
        if (d->kind == SG_SPEC_DIM && (rc = add_x(p, d->name, true, err)))
            goto cleanup;
        if (d->kind == SG_SPEC_DERIVED && (rc = add_x(p, d->root_name, false, err)))
            goto cleanup;
    }
    /* which input dim defines each symbol: its own source when that dim is named, else
     * the first named dim whose traced shape is that bare symbol (a relaxed dim sharing
     * it then follows the named one), else its own source, else any dim whose traced
     * shape is the bare symbol */
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        p->sym_input[k] = -1;
        unbacked[k] = si->unbacked;
        for (i = 0; i < si->nsources && p->sym_input[k] < 0; i++) { /* its own named source */
            long in = input_of_source(p, si->sources[i]);
            if (in >= 0 && p->named[in])
                p->sym_input[k] = in;
        }
    }
    for (i = 0; i < p->ninputs; i++) {
        const sg_symbol_info *si;
        if (!p->named[i] || !p->inputs[i].value || sg_expr_kind(p->inputs[i].value) != SG_SYM)
            continue;
        si = sg_trace_symbol_info(t, p->inputs[i].value);
        if (si && p->sym_input[si - p->syms] < 0)
            p->sym_input[si - p->syms] = (long)i;
    }
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        for (i = 0; i < si->nsources && p->sym_input[k] < 0; i++)
            p->sym_input[k] = input_of_source(p, si->sources[i]);
    }
    for (i = 0; i < p->ninputs; i++) {
        const sg_symbol_info *si;
        if (!p->inputs[i].value || sg_expr_kind(p->inputs[i].value) != SG_SYM)
            continue;
        si = sg_trace_symbol_info(t, p->inputs[i].value);
        if (si && p->sym_input[si - p->syms] < 0)
            p->sym_input[si - p->syms] = (long)i;
    }
    /* checked symbols: defined by a named dim, or inside a named dim's traced value */
    for (k = 0; k < p->nsyms; k++)
        p->sym_checked[k] = p->sym_input[k] >= 0 && p->named[p->sym_input[k]];
    for (i = 0; i < p->ninputs; i++) {
        const sg_expr **syms = NULL;
        size_t n = 0, j;
        if (!p->named[i] || !p->inputs[i].value)
            continue;
        if ((rc = sg_expr_symbols(&syms, &n, p->pool, p->inputs[i].value, err)))
            goto cleanup;
        for (j = 0; j < n; j++) {
            const sg_symbol_info *si = sg_trace_symbol_info(t, syms[j]);
            if (si)
                p->sym_checked[si - p->syms] = true;
        }
        sg_free((void *)syms);
    }
    /* definitions */
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        const sg_term *s = NULL, *def = NULL;
        long x = -1;
        if ((rc = sg_smt_encode(p->smt, si->sym, &s, NULL, err)))
            goto cleanup; /* SG_ENOMEM growing the encoder's memo */
        for (i = 0; i < si->nsources && x < 0; i++)
            x = x_index(p, si->sources[i]); /* a phantom root: ConstantSource(name) */
        if (p->sym_input[k] >= 0)
            def = EQ(s, p->dvar[p->sym_input[k]]);
        else if (x >= 0)
            def = EQ(s, p->xvar[x]);
        else if (si->replacement && !si->unbacked) {
            const sg_term *r = NULL;
            if ((rc = sg_smt_encode(p->smt, si->replacement, &r, NULL, err)))
                goto cleanup;
            def = EQ(s, r);
        }
        if (def)
            defs = mk_and2(p, defs, def);
        p->sym_def[k] = def;
    }
    p->defs = defs ? defs : K(sg_t_true(p->ts));
    for (i = 0; i < p->ninputs; i++)
        if ((rc = build_spec(p, i, err)))
            goto cleanup;
    /* constraints: guards and runtime asserts */
    for (i = 0; i < ng; i++) {
        const sg_term *h = NULL;
        int r1 = 0, r2 = 0;
        bool ub, ck;
        if ((rc = sg_smt_holds(p->smt, guards[i].expr, &h, err))) {
            if (rc == SG_EUNSUPPORTED && err) { /* name the guard: sg_check reports it as the reason */
                char why[SG_ERROR_MSG_MAX];
                snprintf(why, sizeof why, "%s", err->msg);
                sg_error_set(err, rc, "guard %zu: %s", i, why);
            }
            goto cleanup;
        }
        ub = mentions(p, guards[i].expr, unbacked, err, &r1);
        ck = mentions(p, guards[i].expr, p->sym_checked, err, &r2);
        if ((rc = r1 ? r1 : r2))
            goto cleanup;
        if ((rc = add_constraint(p, &cap, SG_CORE_GUARD, i, guards[i].expr, h, ck, ub, err)))
            goto cleanup;
    }
    /* traced ranges and replacements */
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        const sg_term *s = NULL, *h;
        bool ck;
        if ((rc = sg_smt_encode(p->smt, si->sym, &s, NULL, err)))
            goto cleanup;
        h = mk_bounds(p, s, si->lo, si->hi);
        /* a symbol torch replaced by an expression over checked ones is that expression: its range
         * (a Dim.AUTO(min=2, max=16) tied to Dim('d', max=64)) narrows them, and torch's program
         * accepts only the narrowed range, so it is checked like theirs */
        ck = p->sym_checked[k];
        if (h && !ck && si->replacement) {
            int r1 = 0;
            ck = mentions(p, si->replacement, p->sym_checked, err, &r1);
            if ((rc = r1))
                goto cleanup;
        }
        if (h && (rc = add_constraint(p, &cap, SG_CORE_RANGE, k, si->sym, h, ck, si->unbacked, err)))
            goto cleanup;
        if (si->replacement && p->sym_input[k] >= 0) {
            const sg_term *r = NULL;
            int r1 = 0;
            if ((rc = sg_smt_encode(p->smt, si->replacement, &r, NULL, err)))
                goto cleanup;
            /* a relaxed (AUTO/DYNAMIC/static) dim follows what torch decided for it */
            ck = p->named[p->sym_input[k]];
            if ((rc = r1) ||
                (rc = add_constraint(p, &cap, SG_CORE_REPLACEMENT, k, si->sym, EQ(s, r), ck,
                                     si->unbacked || mentions(p, si->replacement, unbacked, err, &r1), err)))
                goto cleanup;
        }
    }
    /* input bindings: the runtime size equals what torch traced */
    for (i = 0; i < p->ninputs; i++) {
        const sg_expr *v = p->inputs[i].value;
        const sg_term *val = NULL;
        int r1 = 0;
        bool ck;
        if (!v)
            continue;
        if ((rc = sg_smt_encode(p->smt, v, &val, NULL, err)))
            goto cleanup;
        ck = p->named[i]; /* a relaxed dim's traced shape is what torch chose for it: assumed */
        if ((rc = r1) ||
            (rc = add_constraint(p, &cap, SG_CORE_INPUT, i, v, EQ(p->dvar[i], val), ck, false, err)))
            goto cleanup;
    }
    if (sg_terms_failed(p->ts)) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
        goto cleanup;
    }
    if ((rc = components(p, err)))
        goto cleanup;
    *out = p;
    p = NULL;
cleanup:
    sg_free(unbacked);
    sg_problem_free(p);
    return rc;
}

void sg_problem_free(sg_problem *p)
{
    size_t i;
    Z3_context c;
    if (!p)
        return;
    if (sg_terms_live(p->ts)) { /* else Z3 never saw a term: nothing to give back */
        c = sg_terms_context(p->ts);
        if (c && p->witness)
            Z3_model_dec_ref(c, p->witness);
        if (c && p->example)
            Z3_model_dec_ref(c, p->example);
        if (c && p->solver)
            Z3_solver_dec_ref(c, p->solver);
        /* the incremental solver goes back to scope 0 with no assertion (the last query's scope,
         * kept open for a next one with the same hard terms, is popped here): a pool keeping
         * warm solvers takes it for the context's next user */
        if (c && p->inc && p->inc_scope.open)
            Z3_solver_pop(c, p->inc, 1);
        if (c && p->inc &&
            !sg_ctxpool_park_solver(p->contexts, c, p->inc,
                                    Z3_get_error_code(c) == Z3_OK && Z3_solver_get_num_scopes(c, p->inc) == 0,
                                    p->rlimit_set[0]))
            Z3_solver_dec_ref(c, p->inc);
        if (c && p->nia)
            Z3_solver_dec_ref(c, p->nia);
        if (c && p->nl)
            Z3_solver_dec_ref(c, p->nl);
        for (i = 0; i < p->nkeep; i++)
            sg_t_unref(p->ts, p->keep[i]);
    }
    SG_FREE_ALL(p->seen, p->ex, p->amark);
    SG_FREE_ALL(p->keep, p->inc_scope.hard, p->nl_scope.hard, p->dvar, p->spec, p->spec_lit, p->named, p->sym_input, p->sym_checked, p->cons,
                p->sym_def, p->input_comp, p->sym_comp, p->cons_comp, p->names, p->x_slot, p->src_slot,
                p->xvar, p->x_nplain);
    sg_smt_free(p->smt);
    sg_free(p);
}
