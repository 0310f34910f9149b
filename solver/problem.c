#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/*
 * problem.c - building the constraint set of a trace (solver/problem.h) and
 * running budgeted Z3 queries over it.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "solver/problem.h"
#include "solver/watchdog.h"
#include "util/util.h"

/* ---- Z3 helpers ----------------------------------------------------------------- */

static void on_z3_error(Z3_context ctx, Z3_error_code code)
{
    (void)ctx;
    (void)code; /* recorded in the context; checked after each call */
}

Z3_ast sg_problem_keep(sg_problem *p, Z3_ast a)
{
    if (!a || Z3_get_error_code(p->ctx) != Z3_OK)
        return NULL;
    if (sg__grow((void **)&p->keep, &p->keep_cap, p->nkeep + 1, sizeof *p->keep)) {
        /* No room to remember it: keep the term alive anyway (deleting the context releases
         * it, so the context is not reused) rather than hand NULL on to Z3's API, which does
         * not check its arguments. */
        Z3_inc_ref(p->ctx, a);
        sg_smt_no_reuse(p->smt);
        return a;
    }
    Z3_inc_ref(p->ctx, a);
    p->keep[p->nkeep++] = a;
    return a;
}

#define K(x) sg_problem_keep(p, (x))

static Z3_ast mk_int_const(sg_problem *p, const char *name)
{
    return K(Z3_mk_const(p->ctx, Z3_mk_string_symbol(p->ctx, name), Z3_mk_int_sort(p->ctx)));
}

static Z3_ast mk_bool_const(sg_problem *p, const char *name)
{
    return K(Z3_mk_const(p->ctx, Z3_mk_string_symbol(p->ctx, name), Z3_mk_bool_sort(p->ctx)));
}

Z3_ast sg_problem_num(sg_problem *p, sg_int v)
{
    char buf[SG_INT_STRLEN];
    return K(Z3_mk_numeral(p->ctx, sg_int_format(buf, v), Z3_mk_int_sort(p->ctx)));
}

Z3_ast sg_problem_and2(sg_problem *p, Z3_ast a, Z3_ast b)
{
    Z3_ast v[2];
    if (!a)
        return b;
    if (!b)
        return a;
    v[0] = a;
    v[1] = b;
    return K(Z3_mk_and(p->ctx, 2, v));
}

#define mk_num sg_problem_num
#define mk_and2 sg_problem_and2

/* lo <= t <= hi for the finite sides; NULL when both are infinite. */
static Z3_ast mk_bounds(sg_problem *p, Z3_ast t, sg_bound lo, sg_bound hi)
{
    Z3_ast r = NULL;
    if (lo.inf == 0)
        r = K(Z3_mk_ge(p->ctx, t, mk_num(p, lo.v)));
    if (hi.inf == 0)
        r = mk_and2(p, r, K(Z3_mk_le(p->ctx, t, mk_num(p, hi.v))));
    return r;
}

double sg_problem_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

static long x_index(sg_problem *p, const char *name)
{
    size_t h;
    if (!p->x_cap || !name)
        return -1;
    for (h = hash_name(name) & (p->x_cap - 1); p->x_slot[h] >= 0; h = (h + 1) & (p->x_cap - 1))
        if (strcmp(p->names[p->x_slot[h]], name) == 0)
            return p->x_slot[h];
    return -1;
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

static int add_x(sg_problem *p, const char *name, sg_error *err)
{
    char buf[80];
    size_t cap = p->nx;
    if (x_index(p, name) >= 0)
        return 0;
    if (sg__grow((void **)&p->names, &cap, p->nx + 1, sizeof *p->names))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    cap = p->nx;
    if (sg__grow((void **)&p->xvar, &cap, p->nx + 1, sizeof *p->xvar))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    p->names[p->nx] = name;
    if (x_index_put(p, p->nx, err))
        return SG_ENOMEM;
    /* the index keeps two long names that share a prefix apart; the name is for reading */
    snprintf(buf, sizeof buf, "X!%zu!%.40s", p->nx, name);
    p->xvar[p->nx++] = mk_int_const(p, buf);
    return 0;
}

/* `e` with every symbol named like a spec root replaced by its X variable. */
static Z3_ast over_roots(sg_problem *p, const sg_expr *e, sg_error *err, int *rc)
{
    Z3_ast v = NULL, from[64], to[64];
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
    return K(Z3_substitute(p->ctx, v, (unsigned)m, from, to));
}

static int build_spec(sg_problem *p, size_t i, sg_error *err)
{
    const sg_input_dim *d = &p->inputs[i];
    Z3_context c = p->ctx;
    Z3_ast D = p->dvar[i], item = NULL;
    int rc = 0;
    char buf[48];

    switch (d->kind) {
    case SG_SPEC_DIM: {
        Z3_ast X = p->xvar[x_index(p, d->name)];
        sg_bound lo = sg_trace__dim_floor(p->trace, d->min); /* torch analyses sizes from 2: 0/1 specialise */
        item = mk_and2(p, K(Z3_mk_eq(c, D, X)), mk_bounds(p, X, lo, d->max));
        break;
    }
    case SG_SPEC_DERIVED: {
        Z3_ast X = p->xvar[x_index(p, d->root_name)], f = over_roots(p, d->derived, err, &rc);
        if (rc)
            return rc;
        sg_bound none = {0, 1}, zero = {0, 0};
        sg_bound rlo = sg_trace__root_floor(p->trace, d), dlo = sg_trace__dim_floor(p->trace, zero);
        /* a root no input names is a phantom symbol that torch creates like a size, from 2 (its
         * range_constraints say [2, max] for Dim('_n', max=20) under 2*_n; trace/spec.c) */
        item = mk_and2(p, K(Z3_mk_eq(c, D, f)), mk_bounds(p, X, rlo, d->root_max));
        item = mk_and2(p, item, mk_bounds(p, D, dlo, none)); /* the size itself as a Dim's */
        break;
    }
    case SG_SPEC_STATIC: case SG_SPEC_UNSET:
        item = K(Z3_mk_eq(c, D, mk_num(p, d->has_static_size ? d->static_size : d->size)));
        break;
    case SG_SPEC_AUTO: case SG_SPEC_DYNAMIC:
        if (d->has_bounds)
            item = mk_bounds(p, D, d->min, d->max);
        break;
    }
    if (Z3_get_error_code(c) != Z3_OK)
        return sg_error_set(err, SG_ERROR, "Z3: %s", Z3_get_error_msg(c, Z3_get_error_code(c)));
    if (item) {
        p->spec[i] = item;
        snprintf(buf, sizeof buf, "spec!%zu", i);
        p->spec_lit[i] = mk_bool_const(p, buf);
    }
    return 0;
}

static int add_constraint(sg_problem *p, size_t *cap, sg_core_kind kind, size_t index, const sg_expr *expr,
                          Z3_ast holds, bool checked, bool unbacked, sg_error *err)
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
    Z3_ast defs = NULL;
    int rc = 0;
    (void)defs;

    *out = NULL;
    if (!p)
        return sg_error_set(err, SG_ENOMEM, "out of memory building the problem");
    p->trace = t;
    p->pool = pool;
    p->contexts = rt ? rt->contexts : NULL;
    if ((rc = sg_smt_new_in(&p->smt, p->pool, p->contexts, err)))
        goto cleanup;
    p->ctx = sg_smt_context(p->smt);
    Z3_set_error_handler(p->ctx, on_z3_error);
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
        if (d->kind == SG_SPEC_DIM && (rc = add_x(p, d->name, err)))
            goto cleanup;
        if (d->kind == SG_SPEC_DERIVED && (rc = add_x(p, d->root_name, err)))
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
        Z3_ast s = NULL, def = NULL;
        long x = -1;
        if ((rc = sg_smt_encode(p->smt, si->sym, &s, NULL, err)))
            goto cleanup; /* SG_ENOMEM growing the encoder's memo */
        for (i = 0; i < si->nsources && x < 0; i++)
            x = x_index(p, si->sources[i]); /* a phantom root: ConstantSource(name) */
        if (p->sym_input[k] >= 0)
            def = K(Z3_mk_eq(p->ctx, s, p->dvar[p->sym_input[k]]));
        else if (x >= 0)
            def = K(Z3_mk_eq(p->ctx, s, p->xvar[x]));
        else if (si->replacement && !si->unbacked) {
            Z3_ast r = NULL;
            if ((rc = sg_smt_encode(p->smt, si->replacement, &r, NULL, err)))
                goto cleanup;
            def = K(Z3_mk_eq(p->ctx, s, r));
        }
        if (def)
            defs = mk_and2(p, defs, def);
        p->sym_def[k] = def;
    }
    p->defs = defs ? defs : K(Z3_mk_true(p->ctx));
    for (i = 0; i < p->ninputs; i++)
        if ((rc = build_spec(p, i, err)))
            goto cleanup;
    /* constraints: guards and runtime asserts */
    for (i = 0; i < ng; i++) {
        Z3_ast h = NULL;
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
        Z3_ast s = NULL, h;
        if ((rc = sg_smt_encode(p->smt, si->sym, &s, NULL, err)))
            goto cleanup;
        h = mk_bounds(p, s, si->lo, si->hi);
        if (h && (rc = add_constraint(p, &cap, SG_CORE_RANGE, k, si->sym, h, p->sym_checked[k], si->unbacked, err)))
            goto cleanup;
        if (si->replacement && p->sym_input[k] >= 0) {
            Z3_ast r = NULL;
            int r1 = 0;
            bool ck;
            if ((rc = sg_smt_encode(p->smt, si->replacement, &r, NULL, err)))
                goto cleanup;
            /* a relaxed (AUTO/DYNAMIC/static) dim follows what torch decided for it */
            ck = p->named[p->sym_input[k]];
            if ((rc = r1) ||
                (rc = add_constraint(p, &cap, SG_CORE_REPLACEMENT, k, si->sym, K(Z3_mk_eq(p->ctx, s, r)), ck,
                                     si->unbacked || mentions(p, si->replacement, unbacked, err, &r1), err)))
                goto cleanup;
        }
    }
    /* input bindings: the runtime size equals what torch traced */
    for (i = 0; i < p->ninputs; i++) {
        const sg_expr *v = p->inputs[i].value;
        Z3_ast val = NULL;
        int r1 = 0;
        bool ck;
        if (!v)
            continue;
        if ((rc = sg_smt_encode(p->smt, v, &val, NULL, err)))
            goto cleanup;
        ck = p->named[i]; /* a relaxed dim's traced shape is what torch chose for it: assumed */
        if ((rc = r1) ||
            (rc = add_constraint(p, &cap, SG_CORE_INPUT, i, v, K(Z3_mk_eq(p->ctx, p->dvar[i], val)), ck, false, err)))
            goto cleanup;
    }
    if (Z3_get_error_code(p->ctx) != Z3_OK) {
        rc = sg_error_set(err, SG_ERROR, "Z3: %s", Z3_get_error_msg(p->ctx, Z3_get_error_code(p->ctx)));
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
    if (!p)
        return;
    if (p->witness)
        Z3_model_dec_ref(p->ctx, p->witness);
    if (p->example)
        Z3_model_dec_ref(p->ctx, p->example);
    if (p->solver)
        Z3_solver_dec_ref(p->ctx, p->solver);
    /* the incremental solver is left at scope 0 with no assertion (every query pops its own):
     * a pool keeping warm solvers takes it for the context's next user */
    if (p->inc && !sg_ctxpool_park_solver(p->contexts, p->ctx, p->inc,
                                          Z3_get_error_code(p->ctx) == Z3_OK &&
                                              Z3_solver_get_num_scopes(p->ctx, p->inc) == 0,
                                          p->rlimit_set[0]))
        Z3_solver_dec_ref(p->ctx, p->inc);
    if (p->nia)
        Z3_solver_dec_ref(p->ctx, p->nia);
    sg_free(p->seen);
    for (i = 0; i < p->nkeep; i++)
        Z3_dec_ref(p->ctx, p->keep[i]);
    SG_FREE_ALL(p->keep, p->dvar, p->spec, p->spec_lit, p->named, p->sym_input, p->sym_checked, p->cons,
                p->sym_def, p->input_comp, p->sym_comp, p->cons_comp, p->names, p->x_slot, p->src_slot,
                p->xvar);
    sg_smt_free(p->smt);
    sg_free(p);
}

/* ---- Queries ------------------------------------------------------------------------ */

/*
 * Z3's reason for "unknown", made to fit `reason[64]`: the tactic wrapper's
 * "smt tactic failed to show goal to be sat/unsat (incomplete (theory
 * arithmetic))" becomes "incomplete (theory arithmetic)".
 */
static void unknown_reason(char reason[64], const char *z3)
{
    static const char wrapper[] = "smt tactic failed to show goal to be sat/unsat (";
    size_t n;
    if (!z3)
        z3 = "unknown";
    if (strncmp(z3, wrapper, sizeof wrapper - 1) == 0 && (n = strlen(z3)) > sizeof wrapper) {
        z3 += sizeof wrapper - 1;
        n -= sizeof wrapper; /* the wrapper's "(" and the closing ")" */
        snprintf(reason, 64, "%.*s", (int)(n < 63 ? n : 63), z3);
        return;
    }
    snprintf(reason, 64, "%s", z3);
}

/*
 * Many divisions. Z3's default tactic for non-linear integer problems
 * (QF_NIA, 4.8.12 and later) tries, after bit-blasting and a 2 s SMT run,
 * its nlsat solver, whose `purify-arith` step adds one functionality axiom
 * per PAIR of integer divisions (and of modulos) by a non-literal, without
 * polling the interrupt or the resource limit: on prod300 (2,488 such terms,
 * 3 million axioms) it runs 10 s past the query's time limit and allocates
 * 700 MiB (measured with Z3's verbose output; the z3 binary shows the same
 * with `-t`). Queries with more than SG_NIA_MANY_DIVS of them go to a solver
 * built from the same tactic without that step: preamble, then bit-blasting
 * of bounded non-linear terms, else the SMT core (the 2 s SMT run and the
 * final one of the default tactic are one run here). Every step left polls,
 * so the watchdog's interrupt stops the query. Only completeness can differ
 * (nlsat may decide what the SMT core leaves unknown); answers stay exact.
 * Below the threshold the default solver is used unchanged.
 */
#define SG_NIA_MANY_DIVS 128

/* The tactic objects made for nia_solver(), each referenced until the solver is made. */
typedef struct tactics {
    Z3_context c;
    Z3_tactic made[64];
    size_t n;
} tactics;

/* Reference and record `t`; NULL (and nothing kept) on a Z3 error or a full record. */
static Z3_tactic kept(tactics *tb, Z3_tactic t)
{
    if (!t || Z3_get_error_code(tb->c) != Z3_OK || tb->n == sizeof tb->made / sizeof tb->made[0])
        return NULL;
    Z3_tactic_inc_ref(tb->c, t);
    tb->made[tb->n++] = t;
    return t;
}

/* Tactic `name` with `n` (key, value) parameter pairs, values "true"/"false" or a number; NULL on a
 * Z3 error (an unknown name or parameter on another Z3 version). A NULL `inner` makes `name`;
 * else the parameters are put on `inner`. */
static Z3_tactic tactic_with(tactics *tb, const char *name, Z3_tactic inner, size_t n, const char *const *kv)
{
    Z3_context c = tb->c;
    Z3_tactic t = inner ? inner : name ? kept(tb, Z3_mk_tactic(c, name)) : NULL;
    Z3_params prm;
    size_t i;
    if (!t || n == 0)
        return t;
    prm = Z3_mk_params(c);
    Z3_params_inc_ref(c, prm);
    for (i = 0; i < n; i++) {
        Z3_symbol k = Z3_mk_string_symbol(c, kv[2 * i]);
        const char *v = kv[2 * i + 1];
        if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)
            Z3_params_set_bool(c, prm, k, v[0] == 't');
        else
            Z3_params_set_uint(c, prm, k, (unsigned)strtoul(v, NULL, 10));
    }
    t = kept(tb, Z3_tactic_using_params(c, t, prm));
    Z3_params_dec_ref(c, prm);
    return t;
}

/* and_then (or or_else) of `n` tactics; NULL when one is. */
static Z3_tactic tactic_seq(tactics *tb, bool or_else, size_t n, const Z3_tactic *ts)
{
    Z3_tactic r;
    size_t i;
    for (i = 0; i < n; i++)
        if (!ts[i])
            return NULL;
    r = ts[n - 1];
    for (i = n - 1; i-- > 0 && r;)
        r = kept(tb, or_else ? Z3_tactic_or_else(tb->c, ts[i], r) : Z3_tactic_and_then(tb->c, ts[i], r));
    return r;
}

/*
 * The solver of "Many divisions", referenced: Z3's QF_NIA tactic (preamble,
 * then bit-blasting of bounded non-linear terms, else the SMT core) without
 * its nlsat step. Z3's default solver when the tactic cannot be built on this
 * Z3 (an unknown tactic or parameter name); then the budget is Z3's to keep.
 */
static Z3_solver nia_solver(Z3_context c)
{
    static const char *const ctx_simp[] = {"max_depth", "30", "max_steps", "5000000"};
    static const char *const pull_ite[] = {"pull_cheap_ite", "true", "local_ctx", "true", "local_ctx_limit", "10000000"};
    static const char *const hoist[] = {"hoist_mul", "true"};
    static const char *const bvsize[] = {"nla2bv_max_bv_size", "64"};
    static const char *const local[] = {"local_ctx", "true", "local_ctx_limit", "10000000"};
    static const char *const blast[] = {"flat", "false", "hi_div0", "true", "elim_and", "true", "blast_distinct", "true"};
    static const char *const som[] = {"som", "true"};
    tactics tb;
    Z3_tactic pre[8], bv[6], sat[4], smt[2], alt[2], top[2], two[2], t;
    Z3_solver s = NULL;
    size_t i;

    tb.c = c;
    tb.n = 0;
    pre[0] = tactic_with(&tb, "simplify", NULL, 0, NULL);
    pre[1] = tactic_with(&tb, "propagate-values", NULL, 0, NULL);
    pre[2] = tactic_with(&tb, "ctx-simplify", NULL, 2, ctx_simp);
    pre[3] = tactic_with(&tb, "simplify", NULL, 3, pull_ite);
    pre[4] = tactic_with(&tb, "elim-uncnstr", NULL, 0, NULL);
    pre[5] = tactic_with(&tb, "lia2card", NULL, 0, NULL);
    pre[6] = tactic_with(&tb, "card2bv", NULL, 0, NULL);
    two[0] = tactic_with(&tb, "cofactor-term-ite", NULL, 0, NULL);
    two[1] = tactic_with(&tb, "skip", NULL, 0, NULL);
    pre[7] = tactic_seq(&tb, true, 2, two);
    bv[0] = tactic_with(&tb, "simplify", NULL, 0, NULL);
    bv[1] = tactic_with(&tb, "propagate-values", NULL, 0, NULL);
    bv[2] = tactic_with(&tb, "simplify", NULL, 2, local);
    bv[3] = tactic_with(&tb, "max-bv-sharing", NULL, 0, NULL);
    bv[4] = tactic_with(&tb, "bit-blast", NULL, 0, NULL);
    bv[5] = tactic_with(&tb, "sat", NULL, 0, NULL);
    sat[0] = tactic_with(&tb, "simplify", NULL, 1, hoist);
    sat[1] = tactic_with(&tb, "nla2bv", NULL, 1, bvsize);
    t = tactic_seq(&tb, false, 6, bv);
    two[0] = t ? tactic_with(&tb, NULL, t, 4, blast) : NULL;
    two[1] = tactic_with(&tb, "skip", NULL, 0, NULL);
    sat[2] = tactic_seq(&tb, true, 2, two);
    sat[3] = tactic_with(&tb, "fail-if-undecided", NULL, 0, NULL);
    smt[0] = tactic_with(&tb, "simplify", NULL, 1, som);
    smt[1] = tactic_with(&tb, "smt", NULL, 0, NULL);
    alt[0] = tactic_seq(&tb, false, 4, sat);
    alt[1] = tactic_seq(&tb, false, 2, smt);
    top[0] = tactic_seq(&tb, false, 8, pre);
    top[1] = tactic_seq(&tb, true, 2, alt);
    t = tactic_seq(&tb, false, 2, top);
    if (t) {
        s = Z3_mk_solver_from_tactic(c, t);
        if (Z3_get_error_code(c) != Z3_OK)
            s = NULL;
    }
    if (!s)
        s = Z3_mk_solver(c);
    Z3_solver_inc_ref(c, s);
    for (i = 0; i < tb.n; i++) /* the solver holds what it needs */
        Z3_tactic_dec_ref(c, tb.made[i]);
    return s;
}

/*
 * One query on the solver in `*slot` (made on first use: the incremental one
 * when `incremental`, else the general one, or nia_solver()'s when `slot` is p->nia), counted into `stats`: the
 * incremental solver gets a scope pushed and popped around the query (its
 * state is kept, so a query costs what the problem costs), the full solver is
 * reset first (it rebuilds Z3's tactic for the problem's logic every time,
 * about 3.7 ms even for a trivial problem). `timeout` 0: no wall-clock limit.
 * Same outputs as sg_problem_check; *fired says the watchdog stopped it.
 */
static int query(sg_problem *p, Z3_solver *slot, bool incremental, const Z3_ast *hard, size_t nhard,
                 const Z3_ast *assumptions, size_t nassume, unsigned timeout, uint64_t rlimit, const sg_budget *b,
                 sg_check_stats *stats, Z3_lbool *res, Z3_model *model, size_t **core, size_t *ncore,
                 char reason[64], bool *fired, sg_error *err)
{
    Z3_context c = p->ctx;
    sg_cancel *cancel = b ? b->cancel : NULL;
    Z3_solver s;
    Z3_params prm = NULL;
    uint64_t *set = &p->rlimit_set[slot == &p->inc ? 0 : slot == &p->solver ? 1 : 2];
    size_t i;
    int rc = 0;

    *fired = false;
    if (!*slot) { /* made on first use (or the context's warm one), kept until sg_problem_free */
        if (slot == &p->nia) {
            *slot = nia_solver(c);
        } else if (incremental && (*slot = sg_ctxpool_take_solver(p->contexts, c, set)) != NULL) {
            /* a warm one: *set says the parameters its last user left it with */
        } else {
            *slot = incremental ? Z3_mk_simple_solver(c) : Z3_mk_solver(c);
            Z3_solver_inc_ref(c, *slot);
        }
    }
    s = *slot;
    if (stats)
        stats->queries++;
    SG_COUNT(b ? b->rt : NULL, queries, 1);
    if (incremental)
        Z3_solver_push(c, s);
    else
        Z3_solver_reset(c, s);
    /* A solver keeps its parameters (a reset too): set them when it is new or the rlimit changes,
     * not at every query (a tenth of a small query's cost; the answers are the same) */
    if (*set != rlimit + 1) {
        prm = Z3_mk_params(c);
        Z3_params_inc_ref(c, prm);
        /* 0 is "no limit" for Z3 too: set it always */
        Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "rlimit"),
                           rlimit > 0xffffffffu ? 0xffffffffu : (unsigned)rlimit);
        /* Non-linear queries: Z3's simplex arithmetic solver (2), not the default lra one (6), whose
         * non-linear core runs on without noticing Z3_interrupt on high powers and long products. */
        if (!incremental)
            Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "arith.solver"), 2);
        Z3_solver_set_params(c, s, prm);
        *set = rlimit + 1;
    }
    for (i = 0; i < nhard; i++)
        if (hard[i])
            Z3_solver_assert(c, s, hard[i]);
    {
        sg_watchdog w;
        /* a cancel request from another thread interrupts the check through the token */
        if (!sg_cancel__enter(cancel, c)) {
            snprintf(reason, 64, "canceled");
            goto cleanup;
        }
        if (timeout)
            sg_watchdog_arm(&w, c, timeout);
        *res = nassume ? Z3_solver_check_assumptions(c, s, (unsigned)nassume, assumptions) : Z3_solver_check(c, s);
        *fired = timeout ? sg_watchdog_disarm(&w) : false;
        sg_cancel__leave(cancel, c);
        if (*res == Z3_L_UNDEF && sg_cancel_requested(cancel)) {
            snprintf(reason, 64, "canceled");
            goto cleanup;
        }
        if (*fired && *res == Z3_L_UNDEF) {
            snprintf(reason, 64, "timeout (%u ms)", timeout);
            goto cleanup;
        }
    }
    if (Z3_get_error_code(c) != Z3_OK) {
        rc = sg_error_set(err, SG_ERROR, "Z3: %s", Z3_get_error_msg(c, Z3_get_error_code(c)));
        goto cleanup;
    }
    if (*res == Z3_L_TRUE && model) {
        *model = Z3_solver_get_model(c, s);
        Z3_model_inc_ref(c, *model);
    } else if (*res == Z3_L_FALSE && core) {
        Z3_ast_vector v = Z3_solver_get_unsat_core(c, s);
        unsigned n, j;
        Z3_ast_vector_inc_ref(c, v);
        n = Z3_ast_vector_size(c, v);
        *core = sg__malloc((n + 1) * sizeof **core);
        if (!*core) {
            Z3_ast_vector_dec_ref(c, v);
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading an unsat core");
            goto cleanup;
        }
        for (j = 0; j < n; j++) {
            Z3_ast a = Z3_ast_vector_get(c, v, j);
            for (i = 0; i < nassume; i++)
                if (Z3_is_eq_ast(c, a, assumptions[i])) {
                    (*core)[(*ncore)++] = i;
                    break;
                }
        }
        Z3_ast_vector_dec_ref(c, v);
    } else if (*res == Z3_L_UNDEF) {
        unknown_reason(reason, Z3_solver_get_reason_unknown(c, s));
        /* neither the caller nor the watchdog stopped it: a tactic that ran out of the resource
         * limit says "canceled" (Z3 cancels itself at the limit), which would name a clock */
        if (rlimit && strcmp(reason, "canceled") == 0)
            snprintf(reason, 64, "max. resource limit exceeded");
    }
cleanup:
    if (prm)
        Z3_params_dec_ref(c, prm);
    if (incremental)
        Z3_solver_pop(c, s, 1);
    return rc;
}

/* Whether an unknown answer of the incremental solver was a budget's stop, not its incompleteness. */
static bool budget_stop(const char *reason)
{
    return strstr(reason, "timeout") || strstr(reason, "canceled") || strstr(reason, "resource limit");
}

/* Mark Z3 term `a` seen in the current walk; *first says it was not yet. Grows the marks. */
static int visit(sg_problem *p, Z3_ast a, bool *first)
{
    unsigned id = Z3_get_ast_id(p->ctx, a);
    if (id >= p->nseen) {
        size_t old = p->nseen;
        if (sg__grow((void **)&p->seen, &p->nseen, (size_t)id + 1, sizeof *p->seen))
            return SG_ENOMEM;
        memset(p->seen + old, 0, (p->nseen - old) * sizeof *p->seen);
    }
    *first = p->seen[id] != p->stamp;
    p->seen[id] = p->stamp;
    return 0;
}

/* Whether application `app` is linear in itself: no product of two non-numerals, no division
 * or modulo by a non-numeral, no power. */
static bool linear_op(Z3_context c, Z3_app app)
{
    unsigned k, na = Z3_get_app_num_args(c, app), nonnum = 0;
    switch (Z3_get_decl_kind(c, Z3_get_app_decl(c, app))) {
    case Z3_OP_MUL:
        for (k = 0; k < na; k++)
            nonnum += !Z3_is_numeral_ast(c, Z3_get_app_arg(c, app, k));
        return nonnum <= 1;
    case Z3_OP_DIV:
    case Z3_OP_IDIV:
    case Z3_OP_MOD:
    case Z3_OP_REM:
        return na == 2 && Z3_is_numeral_ast(c, Z3_get_app_arg(c, app, 1));
    case Z3_OP_POWER:
        return false;
    default:
        return true;
    }
}

/* Whether `app` is an integer division or modulo (also Python's, through its ite) by a non-literal. */
static bool nonlinear_div(Z3_context c, Z3_app app)
{
    switch (Z3_get_decl_kind(c, Z3_get_app_decl(c, app))) {
    case Z3_OP_IDIV:
    case Z3_OP_MOD:
    case Z3_OP_REM:
        return Z3_get_app_num_args(c, app) == 2 && !Z3_is_numeral_ast(c, Z3_get_app_arg(c, app, 1));
    default:
        return false;
    }
}

/*
 * Whether every term of `a[0..na-1]` and `b[0..nb-1]` is linear arithmetic
 * (linear_op at every node). Each shared subterm is walked once (marks by Z3
 * ast id), so this costs the size of the formula, which Z3 reads anyway. On
 * running out of memory it answers false: the full solver is always right,
 * only slower. When not linear, *ndiv counts the distinct integer divisions
 * and modulos by a non-literal (the walk then goes on to the end; on running
 * out of memory the count is a lower bound).
 */
static bool linear(sg_problem *p, const Z3_ast *a, size_t na, const Z3_ast *b, size_t nb, size_t *ndiv)
{
    Z3_context c = p->ctx;
    Z3_ast *stack = NULL;
    size_t top = 0, cap = 0, i;
    bool lin = true, first, oom = false;

    *ndiv = 0;
    if (++p->stamp == 0) { /* wrapped: forget every old mark */
        memset(p->seen, 0, p->nseen * sizeof *p->seen);
        p->stamp = 1;
    }
    for (i = 0; i < na + nb && !oom; i++) {
        Z3_ast root = i < na ? a[i] : b[i - na];
        if (!root)
            continue;
        if (sg__grow((void **)&stack, &cap, top + 1, sizeof *stack)) {
            lin = false, oom = true;
            break;
        }
        stack[top++] = root;
        while (top > 0) {
            Z3_ast t = stack[--top];
            Z3_app app;
            unsigned k, n;
            if (visit(p, t, &first)) {
                lin = false, oom = true;
                break;
            }
            if (!first || Z3_get_ast_kind(c, t) != Z3_APP_AST)
                continue;
            app = Z3_to_app(c, t);
            n = Z3_get_app_num_args(c, app);
            if (!linear_op(c, app)) {
                lin = false;
                *ndiv += nonlinear_div(c, app);
            }
            if (sg__grow((void **)&stack, &cap, top + n, sizeof *stack)) {
                lin = false, oom = true;
                break;
            }
            for (k = 0; k < n; k++)
                stack[top++] = Z3_get_app_arg(c, app, k);
        }
    }
    sg_free(stack);
    return lin;
}

/* Count a finished query into the engine's counters; returns `rc`. */
static int counted(const sg_budget *b, int rc, Z3_lbool res, const char *reason)
{
    const sg_runtime *rt = b ? b->rt : NULL;
    if (rc == 0 && res == Z3_L_UNDEF && budget_stop(reason) && !sg_cancel_requested(b ? b->cancel : NULL))
        SG_COUNT(rt, budget_stops, 1);
    return rc;
}

int sg_problem_check(sg_problem *p, const Z3_ast *hard, size_t nhard, const Z3_ast *assumptions,
                     size_t nassume, const sg_budget *b, sg_check_stats *stats, Z3_lbool *res,
                     Z3_model *model, size_t **core, size_t *ncore, char reason[64], sg_error *err)
{
    unsigned timeout = b ? b->query_timeout_ms : 0;
    uint64_t rlimit = b ? b->query_rlimit : 0;
    double t0 = sg_problem_now();
    bool fired;
    size_t ndiv;
    int rc;

    *res = Z3_L_UNDEF;
    if (model)
        *model = NULL;
    if (core) {
        *core = NULL;
        *ncore = 0;
    }
    reason[0] = '\0';
    if (b && sg_cancel_requested(b->cancel)) {
        snprintf(reason, 64, "canceled");
        return 0;
    }
    if (b && b->deadline > 0) {
        double left = b->deadline - t0;
        if (left <= 0) {
            snprintf(reason, 64, "time budget");
            return 0;
        }
        if (timeout == 0 || left * 1000 < timeout)
            timeout = (unsigned)(left * 1000) + 1;
    }
    /* Linear problems go to Z3's incremental SMT core, kept between queries: a small one is
     * answered in microseconds. Non-linear ones, and linear ones it calls incomplete, go to the
     * full solver, which picks Z3's tactic for the logic (and listens to the resource limit in
     * non-linear arithmetic, which the SMT core of Z3 4.8.12 does not always do). */
    if (linear(p, hard, nhard, assumptions, nassume, &ndiv)) {
        rc = query(p, &p->inc, true, hard, nhard, assumptions, nassume, timeout, rlimit, b,
                   stats, res, model, core, ncore, reason, &fired, err);
        if (rc || *res != Z3_L_UNDEF || fired || budget_stop(reason))
            return counted(b, rc, *res, reason);
        if (timeout) {
            double spent = (sg_problem_now() - t0) * 1000;
            if (spent >= timeout) {
                snprintf(reason, 64, "timeout (%u ms)", timeout);
                return counted(b, 0, *res, reason);
            }
            timeout -= (unsigned)spent;
        }
        reason[0] = '\0';
    }
    rc = query(p, ndiv > SG_NIA_MANY_DIVS ? &p->nia : &p->solver, false, hard, nhard, assumptions, nassume,
               timeout, rlimit, b, stats, res, model, core, ncore, reason, &fired, err);
    return counted(b, rc, *res, reason);
}

bool sg_problem_model_int(sg_problem *p, Z3_model model, Z3_ast term, sg_int *out)
{
    Z3_ast v = NULL;
    const char *txt;
    if (!Z3_model_eval(p->ctx, model, term, true, &v) || !v || !Z3_is_numeral_ast(p->ctx, v))
        return false;
    txt = Z3_get_numeral_string(p->ctx, v);
    return txt && sg_int_parse(out, txt, strlen(txt)) == 0;
}
