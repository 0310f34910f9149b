/*
 * verify.c - what `verify` and `pack` need from a graph: sg_graph_to_trace()
 * turns the program's declared facts (range_constraints, the runtime
 * asserts, each user input dim's symbolic size) into an sg_trace whose spec
 * is the declared ranges, so that sg_check() decides whether every shape the
 * ranges admit passes every runtime assert; sg_graph_constraints_json()
 * writes the record `pack` stores in the archive (per input dim the verified
 * range, relations, divisibility, verdicts; solver, budget, versions, the
 * SHA-256 of the model JSON, the guards_code entries as read). The
 * guards_code entries (torch >= 2.8) are shape guards of the trace: the
 * loaded module checks them on every call. The trace is built directly (the trace
 * module's builders), its expressions copied from the graph's pool; example
 * sizes that pass the asserts come from the caller's point finder (verify.h:
 * the engine answers with the solver's; graph/ holds no solver). The graph is
 * only read: evaluation builds in an overlay.
 */
#include <stdio.h>
#include <string.h>

#include "shapegate/engine.h"
#include "shapegate/graph.h"
#include "graph/verify.h"
#include "report/report.h"
#include "trace/trace_impl.h"
#include "util/json.h"
#include "util/sha256.h"
#include "util/util.h"

#define TRACE_MAX ((size_t)64 << 20)
#define HINT_RLIMIT 5000000u

/* True when `sym` occurs in the size of some user input dim (a backed symbol). */
static bool is_backed(const sg_graph *g, const sg_expr *sym, sg_error *err)
{
    size_t i, d, k;

    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        for (d = 0; d < in->tensor->ndim; d++) {
            const sg_expr **syms = NULL;
            size_t n = 0;
            bool hit = false;
            if (sg_expr_symbols(&syms, &n, sg_graph_pool(g), in->tensor->sizes[d], err) != 0)
                return false;
            for (k = 0; k < n; k++)
                hit |= syms[k] == sym;
            sg_free(syms);
            if (hit)
                return true;
        }
    }
    return false;
}

/* e = A*root + B with integers A >= 1, B and a symbol root. */
static bool affine(const sg_expr *e, const sg_expr **root, sg_int *a, sg_int *b)
{
    return sg_expr_affine(e, root, a, b) && *root && *a >= 1;
}

/* A declared bound as the library's integer (0 for an absent one). */
static sg_int nv(const sg_num *n)
{
    sg_int v = 0;
    sg__num_int(n, &v);
    return v;
}

/* The range_constraints entry whose key is `e`, or NULL. */
static const sg_graph_range *range_of(const sg_graph *g, const sg_expr *e)
{
    size_t i;

    for (i = 0; i < sg_graph_range_count(g); i++)
        if (sg_graph_range_at(g, i)->expr == e)
            return sg_graph_range_at(g, i);
    return NULL;
}

/* Is every symbol of `e` backed? */
static bool all_backed(const sg_graph *g, const sg_expr *e, const bool *backed, sg_error *err)
{
    const sg_expr **syms = NULL;
    size_t n = 0, k;
    bool ok = true;

    if (sg_expr_symbols(&syms, &n, sg_graph_pool(g), e, err) != 0)
        return false;
    for (k = 0; k < n; k++)
        ok &= backed[sg_expr_symbol_index(syms[k])];
    sg_free(syms);
    return ok;
}

/* Optional bounds per symbol index that example values must meet (a spec's). */
typedef sg_graph_bound sym_bounds;

/*
 * Whether the starting values `vals` (each backed symbol's lower bound, at least 2, clamped to
 * its range and to `sb`) already meet every wish of find_hints: inside `sb`, the declared
 * ranges and 2.., and true in every runtime assert over backed symbols (evaluated exactly in
 * `scratch`, an overlay of the graph's pool). Most programs declare no assert that the lower
 * bounds break, and then need no solver.
 */
static bool defaults_do(const sg_int *vals, const sg_graph *g, sg_pool *scratch, const bool *backed,
                        const sym_bounds *sb)
{
    const sg_pool *pool = sg_graph_pool(g);
    size_t ns = sg_pool_nsymbols(pool), i;

    for (i = 0; i < ns; i++) {
        const sg_graph_range *r = range_of(g, sg_pool_symbol(pool, i));
        if (!backed[i])
            continue;
        if (vals[i] < 2 || (r && r->has_min && vals[i] < nv(&r->min)) || (r && r->has_max && vals[i] > nv(&r->max))
            || (sb && sb[i].has_lo && vals[i] < sb[i].lo) || (sb && sb[i].has_hi && vals[i] > sb[i].hi))
            return false;
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        sg_error e2 = SG_ERROR_INIT;
        sg_value v;
        if (!a->expr || !all_backed(g, a->expr, backed, &e2))
            continue;
        if (sg_expr_eval(&v, scratch, a->expr, vals, ns, &e2) != 0 || v.kind != SG_VAL_BOOL || !v.num)
            return false;
    }
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        sg_error e2 = SG_ERROR_INIT;
        sg_value v;
        if (!gd->expr)
            continue;
        if (sg_expr_eval(&v, scratch, gd->expr, vals, ns, &e2) != 0 || v.kind != SG_VAL_BOOL || !v.num)
            return false;
    }
    for (i = 0; i < sg_graph_kernel_check_count(g); i++) {
        const sg_expr *c = sg_graph_kernel_check_at(g, i)->expr;
        sg_error e2 = SG_ERROR_INIT;
        sg_value v;
        if (!all_backed(g, c, backed, &e2))
            continue;
        if (sg_expr_eval(&v, scratch, c, vals, ns, &e2) != 0 || v.kind != SG_VAL_BOOL || !v.num)
            return false;
    }
    return true;
}

/*
 * Example values for the backed symbols (`vals`, by symbol index): within
 * `sb` (may be NULL) always, and, as far as possible, inside the declared
 * ranges, passing every runtime assert over backed symbols, and at least 2
 * (the solver's point search, dropping those wishes in that order of
 * importance when no point meets them all); where none is found, each
 * symbol's lower bound (at least 2 when its range allows).
 */
static int find_hints(sg_int *vals, const sg_graph *g, sg_pool *scratch, const bool *backed, const sym_bounds *sb,
                      const sg_graph_points *pts, sg_error *err)
{
    const sg_pool *pool = sg_graph_pool(g);
    size_t ns = sg_pool_nsymbols(pool), i, ng = 0;
    sg_graph_bound *ranges = NULL;
    const sg_expr **guards = NULL;
    sg_graph_point_query q;
    int rc;

    for (i = 0; i < ns; i++) {
        const sg_graph_range *r = range_of(g, sg_pool_symbol(pool, i));
        vals[i] = 2;
        if (r && r->has_min && nv(&r->min) > 2)
            vals[i] = nv(&r->min);
        if (r && r->has_max && nv(&r->max) < vals[i])
            vals[i] = nv(&r->max);
        if (sb && sb[i].has_lo && vals[i] < sb[i].lo)
            vals[i] = sb[i].lo;
        if (sb && sb[i].has_hi && vals[i] > sb[i].hi)
            vals[i] = sb[i].hi;
    }
    if (defaults_do(vals, g, scratch, backed, sb))
        return 0; /* every wish met without asking the solver */
    ranges = sg__calloc(ns + 1, sizeof *ranges);
    guards = sg__calloc(sg_graph_assert_count(g) + sg_graph_guard_count(g) + sg_graph_kernel_check_count(g) + 1,
                        sizeof *guards);
    if (!ranges || !guards) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < ns; i++) {
        const sg_graph_range *r = range_of(g, sg_pool_symbol(pool, i));
        if (!r)
            continue;
        ranges[i].has_lo = r->has_min;
        ranges[i].lo = nv(&r->min);
        ranges[i].has_hi = r->has_max;
        ranges[i].hi = nv(&r->max);
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        if (a->expr && all_backed(g, a->expr, backed, err))
            guards[ng++] = a->expr;
    }
    for (i = 0; i < sg_graph_guard_count(g); i++)
        if (sg_graph_guard_at(g, i)->expr)
            guards[ng++] = sg_graph_guard_at(g, i)->expr;
    for (i = 0; i < sg_graph_kernel_check_count(g); i++)
        if (all_backed(g, sg_graph_kernel_check_at(g, i)->expr, backed, err))
            guards[ng++] = sg_graph_kernel_check_at(g, i)->expr;
    q = (sg_graph_point_query){.pool = scratch, .active = backed, .hard = sb, .ranges = ranges, .guards = guards,
                               .nguards = ng, .floor = 2, .rlimit = HINT_RLIMIT};
    rc = pts->find(pts->ctx, vals, &q, err);
cleanup:
    sg_free(ranges);
    sg_free((void *)guards);
    return rc;
}

/* A bound that may be absent: the value, or infinite in direction `dir`. */
static sg_bound bound_of(bool has, sg_int v, int dir)
{
    sg_bound b = {0, 0};
    if (has)
        b.v = v;
    else
        b.inf = dir;
    return b;
}

/* The sympy text of `e` in the trace's arena (NULL on failure, recorded in `err`). */
static const char *print_into(sg_trace *t, const sg_expr *e, sg_error *err)
{
    char *s = NULL;
    const char *r;
    if (sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, err) != 0)
        return NULL;
    r = sg_trace__strdup(t, s);
    sg_free(s);
    if (!r)
        sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
    return r;
}

/* The spec of input dim `d` whose size is `size`: static for a literal, a Dim for a bare
 * symbol (its declared range), a derived Dim for A*root + B, else Dim.DYNAMIC. */
/*
 * A new guard of `origin` in `t`: expression `e` copied into t's pool (through `cp`), its text
 * printed. Returns the guard, or NULL with the error in *rc (the printer's, or SG_ENOMEM
 * with nothing set: the caller reports it).
 */
static sg_guard *add_guard_of(sg_trace *t, sg_expr_copier *cp, const sg_expr *e, sg_guard_origin origin, int *rc,
                              sg_error *err)
{
    sg_guard *gd = sg_trace__add_guard(t);
    *rc = SG_ENOMEM;
    if (!gd)
        return NULL;
    gd->origin = origin;
    if (!(gd->text = print_into(t, e, err))) {
        *rc = err && err->code ? err->code : SG_ENOMEM;
        return NULL;
    }
    if (!(gd->expr = sg_expr_copy(cp, e)))
        return NULL;
    *rc = 0;
    return gd;
}

static int dim_spec(sg_trace *t, sg_expr_copier *cp, sg_input_dim *d, const sg_graph *g, const sg_expr *size,
                    sg_error *err)
{
    const sg_graph_range *r, *rr;
    const sg_expr *root;
    sg_int a, c, v = 0;

    if (sg_expr_kind(size) == SG_INT) {
        d->kind = SG_SPEC_STATIC;
        return 0;
    }
    if (!affine(size, &root, &a, &c)) {
        d->kind = SG_SPEC_DYNAMIC;
        return 0;
    }
    rr = range_of(g, root);
    d->has_bounds = true;
    if (size == root) {
        d->kind = SG_SPEC_DIM;
        d->name = sg_expr_symbol_name(sg_expr_copy(cp, root));
        d->min = bound_of(true, rr && rr->has_min ? nv(&rr->min) : 0, -1);
        d->max = bound_of(rr && rr->has_max, rr ? nv(&rr->max) : 0, 1);
        return d->name ? 0 : sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
    }
    r = range_of(g, size);
    d->kind = SG_SPEC_DERIVED;
    if (!(d->name = print_into(t, size, err)))
        return err && err->code ? err->code : SG_ENOMEM;
    if (!(d->derived = sg_expr_copy(cp, size)) || !(d->root_name = sg_expr_symbol_name(sg_expr_copy(cp, root))))
        return sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
    d->root_min = bound_of(true, rr && rr->has_min ? nv(&rr->min) : 0, -1);
    d->root_max = bound_of(rr && rr->has_max, rr ? nv(&rr->max) : 0, 1);
    if (r && r->has_min)
        d->min = bound_of(true, nv(&r->min), -1);
    else
        d->min = bound_of(sg__mul(a, rr && rr->has_min ? nv(&rr->min) : 0, &v) && sg__add(v, c, &v), v, -1);
    if (r)
        d->max = bound_of(r->has_max, nv(&r->max), 1);
    else
        d->max = bound_of(rr && rr->has_max && sg__mul(a, nv(&rr->max), &v) && sg__add(v, c, &v), v, 1);
    return 0;
}

/* The argument name heading a pytree path "['name']...", into `out` (cap bytes). */
static bool path_head(const char *path, char *out, size_t cap)
{
    const char *e;

    if (!path || strncmp(path, "['", 2) != 0 || !(e = strstr(path + 2, "']")) || (size_t)(e - path - 2) >= cap)
        return false;
    memcpy(out, path + 2, (size_t)(e - path - 2));
    out[e - path - 2] = '\0';
    return true;
}

/* "L" + path + ".size()[d]": the source name torch gives a user input's dim. */
static const char *source_name(sg_trace *t, const char *path, size_t d)
{
    return sg_trace__printf(t, "L%s.size()[%zu]", path, d);
}

/* {"arg_names":[...]}: the argument names of the user inputs, in order of first appearance. */
static int inputs_json(sg_trace *t, const sg_graph *g, sg_error *err)
{
    char head[256], h2[256];
    size_t i, k, ni = 0;
    sg_buf names;
    int rc = 0;

    sg_buf_init(&names, 1 << 20);
    sg_buf_puts(&names, "{\"arg_names\":[");
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        bool seen = false;
        if (in->kind != SG_GRAPH_IN_USER || !path_head(in->path, head, sizeof head))
            continue;
        for (k = 0; k < i && !seen; k++) {
            const sg_graph_input *o = sg_graph_input_at(g, k);
            seen = o->kind == SG_GRAPH_IN_USER && path_head(o->path, h2, sizeof h2) && strcmp(h2, head) == 0;
        }
        if (!seen) {
            sg_buf_puts(&names, ni++ ? "," : "");
            sg__json_put_str(&names, head);
        }
    }
    sg_buf_puts(&names, "]}");
    if (names.failed)
        rc = sg_error_set(err, names.failed, "building the trace: argument names too long");
    else if (!(t->inputs_json = sg_trace__strndup(t, names.data, names.len)))
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
    sg_buf_dispose(&names);
    return rc;
}

/*
 * Build the trace of `g` with example values meeting `sb` (may be NULL): each
 * symbol with its declared range and example value, each recovered runtime
 * assert a guard, each user input dim with its size expression and the spec
 * its declared ranges make. Expressions are copied into the trace's own pool.
 */
static int build_trace(sg_trace **out, const sg_graph *g, const sym_bounds *sb, const sg_graph_points *pts,
                       sg_error *err)
{
    const sg_pool *pool;
    sg_pool *scratch = NULL;
    sg_expr_copier cp;
    sg_trace *t = NULL;
    size_t ns, i, d;
    bool *backed = NULL;
    sg_int *vals = NULL;
    int rc = 0;

    *out = NULL;
    memset(&cp, 0, sizeof cp);
    if (!g || !pts || !pts->find)
        return sg_error_set(err, SG_EINVALID, !g ? "no graph" : "no point finder");
    pool = sg_graph_pool(g);
    ns = sg_pool_nsymbols(pool);
    backed = sg__calloc(ns + 1, sizeof *backed);
    vals = sg__calloc(ns + 1, sizeof *vals);
    if (!backed || !vals) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
        goto cleanup;
    }
    /* evaluation and the point search build in an overlay: the graph is only read */
    if ((rc = sg_pool_overlay_new(&scratch, pool, err)) != 0)
        goto cleanup;
    for (i = 0; i < ns; i++) {
        sg_error e2 = SG_ERROR_INIT;
        backed[i] = is_backed(g, sg_pool_symbol(pool, i), &e2);
        if (e2.code) {
            rc = sg_error_set(err, e2.code, "%s", e2.msg);
            goto cleanup;
        }
    }
    if ((rc = find_hints(vals, g, scratch, backed, sb, pts, err)) != 0)
        goto cleanup;
    if ((rc = sg_trace__new(&t, err)) != 0)
        goto cleanup;
    sg_expr_copier_init(&cp, t->pool);
    if (sg_graph_torch_version(g) && !(t->torch_version = sg_trace__strdup(t, sg_graph_torch_version(g))))
        goto oom;
    t->has_shape_env = true;
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        uint32_t idx = sg_expr_symbol_index(s->sym);
        const sg_graph_range *r = s->range;
        const sg_expr *sym = sg_expr_copy(&cp, s->sym);
        const char **src = NULL;
        sg_symbol_info *si;
        bool added;
        if (!sym)
            goto oom;
        /* a backed symbol that no input dim is exactly (the root of a derived dim `4*s`) is
         * torch's phantom root: its source is its own name, the spec's root variable */
        if ((s->path || backed[idx]) && !(src = sg_trace__alloc(t, sizeof *src)))
            goto oom;
        if (s->path && !(src[0] = source_name(t, s->path, s->dim)))
            goto oom;
        if (!s->path && backed[idx] && !(src[0] = sg_trace__strdup(t, sg_expr_symbol_name(s->sym))))
            goto oom;
        if (!(si = sg_trace__symbol(t, sym, &added)))
            goto oom;
        if (!added) {
            rc = sg_error_set(err, SG_EINVALID, "building the trace: symbol '%.40s' listed twice",
                              sg_expr_symbol_name(sym));
            goto cleanup;
        }
        si->lo = bound_of((r && r->has_min) || backed[idx], r && r->has_min ? nv(&r->min) : 0, -1);
        si->hi = bound_of(r && r->has_max, r ? nv(&r->max) : 0, 1);
        si->has_hint = backed[idx];
        si->hint = backed[idx] ? vals[idx] : 0;
        si->unbacked = !backed[idx];
        si->sources = src;
        si->nsources = src ? 1 : 0;
    }
    /* guards_code: the shape guards the loaded module checks on every call */
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gc = sg_graph_guard_at(g, i);
        sg_guard *gd;
        if (!gc->expr)
            continue;
        if (!(gd = add_guard_of(t, &cp, gc->expr, SG_GUARD_SHAPE, &rc, err)))
            goto failed;
        if (!(gd->msg = sg_trace__printf(t, "guards_code[%zu]: %s", i, gc->text)))
            goto oom;
    }
    /* the kernels' shape conditions over input sizes: the module raises where one is false */
    for (i = 0; i < sg_graph_kernel_check_count(g); i++) {
        const sg_graph_kernel_check *kc = sg_graph_kernel_check_at(g, i);
        sg_error e2 = SG_ERROR_INIT;
        sg_guard *gd;
        if (!all_backed(g, kc->expr, backed, &e2))
            continue;
        if (!(gd = add_guard_of(t, &cp, kc->expr, SG_GUARD_SHAPE, &rc, err)))
            goto failed;
        /* the core's location: which kernel and what it needs */
        if (!(gd->framework_loc = sg_trace__strdup(t, kc->what)))
            goto oom;
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        sg_guard *gd;
        const char *msg = a->message ? a->message : a->target;
        if (!a->expr)
            continue;
        if (sg_expr_sort(a->expr) != SG_SORT_BOOL) {
            rc = sg_error_set(err, SG_EINVALID, "building the trace: assert %zu is not a boolean expression", i);
            goto cleanup;
        }
        if (!(gd = add_guard_of(t, &cp, a->expr, SG_GUARD_RUNTIME_ASSERT, &rc, err)))
            goto failed;
        if (msg && !(gd->msg = sg_trace__strdup(t, msg)))
            goto oom;
    }
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        for (d = 0; d < in->tensor->ndim; d++) {
            const sg_expr *size = in->tensor->sizes[d];
            sg_input_dim *x;
            sg_value v;
            sg_error e2 = SG_ERROR_INIT;
            if (sg_expr_eval(&v, scratch, size, vals, ns, &e2) != 0 || v.kind != SG_VAL_INT) {
                rc = sg_error_set(err, SG_EUNSUPPORTED, "input %s dim %zu: no example size for its size", in->path, d);
                goto cleanup;
            }
            if (!(x = sg_trace__add_input(t)) || !(x->path = sg_trace__strdup(t, in->path)))
                goto oom;
            x->dim = (int)d;
            x->size = v.num;
            if (!(x->source = x->traced_source = source_name(t, in->path, d)) || !(x->value = sg_expr_copy(&cp, size)))
                goto oom;
            if ((rc = dim_spec(t, &cp, x, g, size, err)) != 0)
                goto cleanup;
        }
    }
    t->has_flat_spec = true;
    t->sizes_from_min = true; /* the loaded module checks its guards_code at every size */
    if ((rc = inputs_json(t, g, err)) != 0)
        goto cleanup;
    *out = t;
    t = NULL;
    goto cleanup;
failed:
    if (rc != SG_ENOMEM || (err && err->code))
        goto cleanup;
oom:
    rc = sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
cleanup:
    sg_expr_copier_dispose(&cp);
    sg_trace_free(t);
    sg_pool_free(scratch);
    sg_free(backed);
    sg_free(vals);
    return rc;
}

int sg_graph__to_trace(sg_trace **out, const sg_graph *g, const sg_graph_points *pts, sg_error *err)
{
    return build_trace(out, g, NULL, pts, err);
}

int sg_graph__to_trace_spec(sg_trace **out, const sg_graph *g, const char *spec, size_t len, const char *what,
                            const sg_graph_points *pts, sg_error *err)
{
    sg_trace *t = NULL;
    sym_bounds *sb = NULL;
    const sg_input_dim *in;
    size_t n = 0, i, ns;
    int rc;

    *out = NULL;
    /* first with the declared ranges, to read the spec's bounds per symbol */
    if ((rc = build_trace(&t, g, NULL, pts, err)) != 0 || (rc = sg_trace__set_spec_json(t, spec, len, what, err)) != 0)
        goto cleanup;
    ns = sg_pool_nsymbols(sg_graph_pool(g));
    in = sg_trace_inputs(t, &n);
    /* room for a symbol each lookup below could add to the pool (none in practice) */
    if (!(sb = sg__calloc(ns + n + 1, sizeof *sb))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        const sg_input_dim *d = &in[i];
        const sg_expr *gs;
        uint32_t k;
        if (!d->value || sg_expr_kind(d->value) != SG_SYM || (d->kind != SG_SPEC_DIM && !d->has_bounds))
            continue;
        /* the same symbol in the graph's pool */
        gs = sg_pool_find_symbol(sg_graph_pool(g), sg_expr_symbol_name(d->value), strlen(sg_expr_symbol_name(d->value)));
        if (!gs || (k = sg_expr_symbol_index(gs)) >= ns)
            continue;
        if (!d->min.inf && (!sb[k].has_lo || d->min.v > sb[k].lo)) {
            sb[k].has_lo = true;
            sb[k].lo = d->min.v < 2 && (d->max.inf || d->max.v >= 2) ? 2 : d->min.v;
        }
        if (!d->max.inf && (!sb[k].has_hi || d->max.v < sb[k].hi)) {
            sb[k].has_hi = true;
            sb[k].hi = d->max.v;
        }
    }
    sg_trace_free(t);
    t = NULL;
    if ((rc = build_trace(&t, g, sb, pts, err)) != 0 || (rc = sg_trace__set_spec_json(t, spec, len, what, err)) != 0)
        goto cleanup;
    *out = t;
    t = NULL;
cleanup:
    sg_trace_free(t);
    sg_free(sb);
    return rc;
}

/* ---- the record `pack` writes ---------------------------------------------------- */

/* Append `e` printed in sympy form as a JSON string. */
static int put_expr(sg_buf *b, const sg_expr *e, sg_error *err)
{
    char *s = NULL;
    int rc = sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, err);

    if (rc == 0)
        sg__json_put_str(b, s);
    sg_free(s);
    return rc;
}

/* Append an sg_bound as an integer or null (unbounded). */
static void put_sgbound(sg_buf *b, sg_bound v)
{
    if (v.inf)
        sg_buf_puts(b, "null");
    else
        sg__json_put_int(b, v.v);
}

/* `, "key": [lo, hi]` with null for an infinite side. */
static void put_bound_pair(sg_buf *b, const char *key, sg_bound lo, sg_bound hi)
{
    sg_buf_printf(b, ", \"%s\": [", key);
    put_sgbound(b, lo);
    sg_buf_puts(b, ", ");
    put_sgbound(b, hi);
    sg_buf_putc(b, ']');
}

/* Name of a violation kind in the record: the report's names, but "spec" for an invalid spec
 * (the record's format, docs/graph.md). */
static const char *viol_name(sg_violation_kind k) { return k == SG_VIOL_SPEC ? "spec" : sg_violation_kind_name(k); }

/* "guards_code": {"count", "checked", "unrecovered", "entries": [{"text", "expr", "reason"}]} or null. */
static int put_guards_code(sg_buf *b, const sg_graph *g, sg_error *err)
{
    size_t i, n = sg_graph_guard_count(g), read = 0;
    int rc;

    if (!sg_graph_has_guards_code(g)) {
        sg_buf_puts(b, "  \"guards_code\": null,\n");
        return 0;
    }
    for (i = 0; i < n; i++)
        read += sg_graph_guard_at(g, i)->expr != NULL;
    sg_buf_printf(b, "  \"guards_code\": {\"count\": %zu, \"checked\": %zu, \"unrecovered\": %zu, \"entries\": [", n,
                  read, n - read);
    for (i = 0; i < n; i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        sg_buf_puts(b, i ? ",\n    {\"text\": " : "\n    {\"text\": ");
        sg__json_put_str(b, gd->text);
        sg_buf_puts(b, ", \"expr\": ");
        if (gd->expr) {
            if ((rc = put_expr(b, gd->expr, err)) != 0)
                return rc;
        } else {
            sg_buf_puts(b, "null");
        }
        if (gd->reason) {
            sg_buf_puts(b, ", \"reason\": ");
            sg__json_put_str(b, gd->reason);
        }
        sg_buf_putc(b, '}');
    }
    sg_buf_puts(b, n ? "\n  ]},\n" : "]},\n");
    return 0;
}

int sg_graph_constraints_json(char **out, const sg_graph *g, const sg_report *r, const sg_graph_record_info *info,
                              sg_error *err)
{
    char hex[SG_SHA256_HEX_LEN + 1];
    const sg_trace *t;
    const sg_input_dim *in;
    size_t n = 0, i, k, checked = 0, unrec = 0;
    int maj = 0, min = 0, rc = 0;
    sg_buf b;

    *out = NULL;
    if (!g || !r || !r->trace || !info || (!info->model_json && info->model_len))
        return sg_error_set(err, SG_EINVALID, "sg_graph_constraints_json: missing argument");
    t = r->trace;
    in = sg_trace_inputs(t, &n);
    sg__sha256_hex(hex, info->model_json ? info->model_json : "", info->model_len);
    sg_graph_schema_version(g, &maj, &min);
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        if (sg_graph_assert_at(g, i)->expr)
            checked++;
        else
            unrec++;
    }
    sg_buf_init(&b, TRACE_MAX);
    sg_buf_puts(&b, "{\n  \"format\": \"shapegate-constraints\",\n  \"version\": 1,\n  \"shapegate_version\": ");
    sg__json_put_str(&b, info->tool_version ? info->tool_version : "");
    sg__json_put_field(&b, ",\n  \"model\": {\"member\": ", info->model_member);
    sg_buf_puts(&b, ", \"sha256\": ");
    sg__json_put_str(&b, hex);
    sg_buf_printf(&b, ", \"bytes\": %zu, \"schema_version\": [%d, %d], \"torch_version\": ", info->model_len, maj, min);
    sg__json_put_str_or_null(&b, sg_graph_torch_version(g));
    sg_buf_printf(&b, "},\n  \"solver\": {\"name\": \"%s\", \"version\": \"%s\", \"budget\": ", r->solver_name,
                  r->solver_version);
    if (info->opts)
        sg_buf_printf(&b, "{\"timeout_ms\": %u, \"query_timeout_ms\": %u, \"query_rlimit\": %llu}",
                      info->opts->timeout_ms, info->opts->query_timeout_ms,
                      (unsigned long long)info->opts->query_rlimit);
    else
        sg_buf_puts(&b, "null");
    sg_buf_printf(&b, ", \"queries\": %u},\n  \"verdict\": \"%s\",\n", r->stats.queries, sg_verdict_name(r->verdict));
    sg_buf_printf(&b, "  \"runtime_asserts\": {\"count\": %zu, \"checked\": %zu, \"unrecovered\": %zu},\n",
                  sg_graph_assert_count(g), checked, unrec);
    if ((rc = put_guards_code(&b, g, err)) != 0)
        goto cleanup;
    sg_buf_puts(&b, "  \"inputs\": [");
    for (i = 0; i < n; i++) {
        const sg_input_dim *d = &in[i];
        const sg_dim_result *res = NULL;
        const sg_inferred *inf = NULL;
        const sg_expr *root = NULL;
        sg_int a, c;
        for (k = 0; k < r->ndims; k++)
            if (r->dims[k].input == i)
                res = &r->dims[k];
        if (d->value && affine(d->value, &root, &a, &c))
            for (k = 0; k < r->ninferred && !inf; k++)
                if (r->inferred[k].sym == root)
                    inf = &r->inferred[k];
        sg_buf_puts(&b, i ? ",\n    {" : "\n    {");
        sg_buf_puts(&b, "\"path\": ");
        sg__json_put_str(&b, d->path);
        sg_buf_printf(&b, ", \"dim\": %d, \"size\": ", d->dim);
        if (d->value) {
            if ((rc = put_expr(&b, d->value, err)) != 0)
                goto cleanup;
        } else {
            sg_buf_puts(&b, "null");
        }
        sg_buf_printf(&b, ", \"status\": \"%s\"", res ? sg_dim_status_name(res->status) : "static");
        if (res && res->reason[0]) {
            sg_buf_puts(&b, ", \"reason\": ");
            sg__json_put_str(&b, res->reason);
        }
        if (d->has_bounds)
            put_bound_pair(&b, "declared", d->min, d->max);
        if (inf) {
            sg_buf_puts(&b, ", \"symbol\": ");
            sg__json_put_str(&b, sg_expr_symbol_name(inf->sym));
            if (inf->is_constant) {
                sg_buf_puts(&b, ", \"constant\": ");
                sg__json_put_int(&b, inf->constant);
            }
            put_bound_pair(&b, "range", inf->lo, inf->hi);
            sg_buf_printf(&b, ", \"range_exact\": %s", inf->range_exact ? "true" : "false");
            sg_buf_puts(&b, ", \"divisible_by\": ");
            sg__json_put_int(&b, inf->modulus);
            sg_buf_puts(&b, ", \"residue\": ");
            sg__json_put_int(&b, inf->residue);
            if (inf->nholes) {
                sg_buf_puts(&b, ", \"holes\": [");
                for (k = 0; k < inf->nholes; k++) {
                    sg_buf_puts(&b, k ? ", " : "");
                    sg__json_put_int(&b, inf->holes[k]);
                }
                sg_buf_printf(&b, "], \"holes_complete\": %s", inf->holes_complete ? "true" : "false");
            }
            if (inf->equals) {
                sg_buf_puts(&b, ", \"equals\": ");
                if ((rc = put_expr(&b, inf->equals, err)) != 0)
                    goto cleanup;
            }
        }
        /* relations between input dims: the earlier dim with the same traced size */
        for (k = 0; k < i; k++)
            if (d->value && in[k].value == d->value && sg_expr_kind(d->value) != SG_INT) {
                sg_buf_puts(&b, ", \"same_as\": ");
                sg_buf_puts(&b, "{\"path\": ");
                sg__json_put_str(&b, in[k].path);
                sg_buf_printf(&b, ", \"dim\": %d}", in[k].dim);
                break;
            }
        sg_buf_putc(&b, '}');
    }
    sg_buf_puts(&b, "\n  ],\n  \"violations\": [");
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        sg_buf_puts(&b, i ? ",\n    {" : "\n    {");
        sg__json_put_field(&b, "\"dim\": ", v->dim);
        sg_buf_printf(&b, ", \"kind\": \"%s\", \"message\": ", viol_name(v->kind));
        sg__json_put_str_or_null(&b, v->message);
        if (v->has_counterexample) {
            sg_buf_puts(&b, ", \"witness\": [");
            for (k = 0; k < n; k++) {
                sg_buf_puts(&b, k ? ", " : "");
                sg__json_put_int(&b, v->counterexample[k]);
            }
            sg_buf_putc(&b, ']');
        }
        sg_buf_putc(&b, '}');
    }
    sg_buf_puts(&b, r->nviolations ? "\n  ]\n}\n" : "]\n}\n");
    if (b.failed) {
        rc = sg_error_set(err, b.failed, "writing the constraints record: %s",
                          b.failed == SG_ENOMEM ? "out of memory" : "too large");
        goto cleanup;
    }
    *out = sg_buf_take(&b);
cleanup:
    sg_buf_dispose(&b);
    return rc;
}
