/*
 * verify.c - what `verify` and `pack` need from a graph: sg_graph_to_trace()
 * turns the program's declared facts (range_constraints, the runtime
 * asserts, each user input dim's symbolic size) into an sg_trace whose spec
 * is the declared ranges, so that sg_check() decides whether every shape the
 * ranges admit passes every runtime assert; sg_graph_constraints_json()
 * writes the record `pack` stores in the archive (per input dim the verified
 * range, relations, divisibility, verdicts; solver, budget, versions, the
 * SHA-256 of the model JSON). The trace is built as a single-file JSON trace
 * (docs/trace-format.md) and read back with sg_trace_load_json(), so it goes
 * through the same validation as every other trace.
 */
#include <stdio.h>
#include <string.h>

#include <z3.h>

#include "shapegate/graph.h"
#include "shapegate/smt.h"
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
    size_t i;

    *a = 1;
    *b = 0;
    if (sg_expr_kind(e) == SG_SYM) {
        *root = e;
        return true;
    }
    if (sg_expr_kind(e) == SG_MUL && sg_expr_nargs(e) == 2 && sg_expr_kind(sg_expr_arg(e, 0)) == SG_INT
        && sg_expr_kind(sg_expr_arg(e, 1)) == SG_SYM && sg_expr_int_value(sg_expr_arg(e, 0)) >= 1) {
        *a = sg_expr_int_value(sg_expr_arg(e, 0));
        *root = sg_expr_arg(e, 1);
        return true;
    }
    if (sg_expr_kind(e) == SG_ADD && sg_expr_nargs(e) == 2) {
        for (i = 0; i < 2; i++) {
            const sg_expr *c = sg_expr_arg(e, i), *r = sg_expr_arg(e, 1 - i);
            sg_int b2;
            if (sg_expr_kind(c) == SG_INT && affine(r, root, a, &b2) && b2 == 0) {
                *b = sg_expr_int_value(c);
                return true;
            }
        }
    }
    return false;
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

/* Append a bound: the integer, or "-int_oo" / "int_oo". */
static void put_bound(sg_buf *b, bool has, sg_int v, bool upper)
{
    if (has)
        sg__json_put_int(b, v);
    else
        sg_buf_puts(b, upper ? "\"int_oo\"" : "\"-int_oo\"");
}

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
typedef struct sym_bounds {
    bool has_lo, has_hi;
    sg_int lo, hi;
} sym_bounds;

/*
 * Whether the starting values `vals` (each backed symbol's lower bound, at least 2, clamped to
 * its range and to `sb`) already meet every wish of find_hints: inside `sb`, the declared
 * ranges and 2.., and true in every runtime assert over backed symbols (evaluated exactly). Most
 * programs declare no assert that the lower bounds break, and then need no Z3 context.
 */
static bool defaults_do(const sg_int *vals, const sg_graph *g, const bool *backed, const sym_bounds *sb)
{
    sg_pool *pool = sg_graph_pool(g);
    size_t ns = sg_pool_nsymbols(pool), i;

    for (i = 0; i < ns; i++) {
        const sg_graph_range *r = range_of(g, sg_pool_symbol(pool, i));
        if (!backed[i])
            continue;
        if (vals[i] < 2 || (r && r->has_min && vals[i] < r->min) || (r && r->has_max && vals[i] > r->max)
            || (sb && sb[i].has_lo && vals[i] < sb[i].lo) || (sb && sb[i].has_hi && vals[i] > sb[i].hi))
            return false;
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        sg_error e2 = SG_ERROR_INIT;
        sg_value v;
        if (!a->expr || !all_backed(g, a->expr, backed, &e2))
            continue;
        if (sg_expr_eval(&v, pool, a->expr, vals, ns, &e2) != 0 || v.kind != SG_VAL_BOOL || !v.num)
            return false;
    }
    return true;
}

/*
 * Example values for the backed symbols (`vals`, by symbol index): within
 * `sb` (may be NULL) always, and, as far as possible, inside the declared
 * ranges, passing every runtime assert over backed symbols, and at least 2
 * (found with Z3, dropping those wishes in that order of importance when no
 * point meets them all); where Z3 finds nothing, each symbol's lower bound
 * (at least 2 when its range allows).
 */
static int find_hints(sg_int *vals, const sg_graph *g, const bool *backed, const sym_bounds *sb, sg_error *err)
{
    sg_pool *pool = sg_graph_pool(g);
    size_t ns = sg_pool_nsymbols(pool), i, nk = 0, cap = 0;
    sg_smt *smt = NULL;
    Z3_context c;
    Z3_solver s = NULL;
    Z3_params prm = NULL;
    Z3_model m = NULL;
    Z3_ast *kept = NULL, t;
    Z3_sort is;
    int rc, round;

    for (i = 0; i < ns; i++) {
        const sg_graph_range *r = range_of(g, sg_pool_symbol(pool, i));
        vals[i] = 2;
        if (r && r->has_min && r->min > 2)
            vals[i] = r->min;
        if (r && r->has_max && r->max < vals[i])
            vals[i] = r->max;
        if (sb && sb[i].has_lo && vals[i] < sb[i].lo)
            vals[i] = sb[i].lo;
        if (sb && sb[i].has_hi && vals[i] > sb[i].hi)
            vals[i] = sb[i].hi;
    }
    if (defaults_do(vals, g, backed, sb))
        return 0; /* every wish met without asking Z3 */
    if ((rc = sg_smt_new(&smt, pool, err)) != 0)
        return rc;
    c = sg_smt_context(smt);
    is = Z3_mk_int_sort(c);
    s = Z3_mk_solver(c);
    Z3_solver_inc_ref(c, s);
    prm = Z3_mk_params(c);
    Z3_params_inc_ref(c, prm);
    Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "rlimit"), HINT_RLIMIT);
    Z3_solver_set_params(c, s, prm);
#define KEEP_ASSERT(x)                                                                                \
    do {                                                                                              \
        t = (x);                                                                                      \
        if (sg__grow((void **)&kept, &cap, nk + 1, sizeof *kept) != 0) {                              \
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");                                       \
            goto cleanup;                                                                             \
        }                                                                                             \
        Z3_inc_ref(c, t);                                                                             \
        kept[nk++] = t;                                                                               \
        Z3_solver_assert(c, s, t);                                                                    \
    } while (0)
    /* hard: the given bounds */
    for (i = 0; sb && i < ns; i++) {
        Z3_ast v = sg_smt_symbol(smt, sg_pool_symbol(pool, i));
        if (!backed[i] || !v)
            continue;
        if (sb[i].has_lo && sb[i].lo >= INT64_MIN && sb[i].lo <= INT64_MAX)
            KEEP_ASSERT(Z3_mk_ge(c, v, Z3_mk_int64(c, (int64_t)sb[i].lo, is)));
        if (sb[i].has_hi && sb[i].hi >= INT64_MIN && sb[i].hi <= INT64_MAX)
            KEEP_ASSERT(Z3_mk_le(c, v, Z3_mk_int64(c, (int64_t)sb[i].hi, is)));
    }
    /* wishes, in layers: 0 ranges and asserts, 1 sizes >= 2; tried all, then fewer */
    for (round = 0; round < 4; round++) {
        Z3_lbool res;
        Z3_solver_push(c, s);
        for (i = 0; i < ns && round < 2; i++) {
            const sg_expr *sym = sg_pool_symbol(pool, i);
            const sg_graph_range *r = range_of(g, sym);
            Z3_ast v = sg_smt_symbol(smt, sym);
            if (!backed[i] || !v)
                continue;
            if (r && r->has_min && r->min >= INT64_MIN && r->min <= INT64_MAX)
                KEEP_ASSERT(Z3_mk_ge(c, v, Z3_mk_int64(c, (int64_t)r->min, is)));
            if (r && r->has_max && r->max >= INT64_MIN && r->max <= INT64_MAX)
                KEEP_ASSERT(Z3_mk_le(c, v, Z3_mk_int64(c, (int64_t)r->max, is)));
        }
        for (i = 0; i < sg_graph_assert_count(g) && round < 2; i++) {
            const sg_graph_assert *a = sg_graph_assert_at(g, i);
            Z3_ast h;
            sg_error e2 = SG_ERROR_INIT;
            if (!a->expr || !all_backed(g, a->expr, backed, err) || sg_smt_holds(smt, a->expr, &h, &e2) != 0)
                continue;
            Z3_solver_assert(c, s, h);
        }
        for (i = 0; i < ns && (round == 0 || round == 2); i++) {
            Z3_ast v = sg_smt_symbol(smt, sg_pool_symbol(pool, i));
            if (backed[i] && v)
                KEEP_ASSERT(Z3_mk_ge(c, v, Z3_mk_int64(c, 2, is)));
        }
        res = Z3_solver_check(c, s);
        if (res == Z3_L_TRUE) {
            m = Z3_solver_get_model(c, s);
            Z3_model_inc_ref(c, m);
            for (i = 0; i < ns; i++) {
                Z3_ast v = sg_smt_symbol(smt, sg_pool_symbol(pool, i)), r = NULL;
                const char *txt;
                sg_int x;
                if (!backed[i] || !v || !Z3_model_eval(c, m, v, true, &r) || !r || !Z3_is_numeral_ast(c, r))
                    continue;
                txt = Z3_get_numeral_string(c, r);
                if (txt && sg_int_parse(&x, txt, strlen(txt)) == 0)
                    vals[i] = x;
            }
        }
        Z3_solver_pop(c, s, 1);
        if (res == Z3_L_TRUE)
            break;
    }
    rc = 0; /* without a model the fallback values stay */
cleanup:
#undef KEEP_ASSERT
    if (smt) {
        c = sg_smt_context(smt);
        for (i = 0; i < nk; i++)
            Z3_dec_ref(c, kept[i]);
        if (m)
            Z3_model_dec_ref(c, m);
        if (prm)
            Z3_params_dec_ref(c, prm);
        if (s)
            Z3_solver_dec_ref(c, s);
    }
    sg_free(kept);
    sg_smt_free(smt);
    return rc;
}

/* The tensor inputs' spec leaf of one dim, as trace-format.md's `spec` object. */
static int put_spec(sg_buf *b, const sg_graph *g, const sg_expr *size, sg_error *err)
{
    const sg_graph_range *r, *rr;
    const sg_expr *root;
    sg_int a, c, v = 0;
    int rc;

    if (sg_expr_kind(size) == SG_INT) {
        sg_buf_puts(b, "{\"kind\": \"static\"}");
        return 0;
    }
    if (!affine(size, &root, &a, &c)) {
        sg_buf_puts(b, "{\"kind\": \"dynamic\"}");
        return 0;
    }
    rr = range_of(g, root);
    if (size == root) {
        sg_buf_puts(b, "{\"kind\": \"dim\", \"name\": ");
        sg__json_put_str(b, sg_expr_symbol_name(root));
        sg_buf_puts(b, ", \"min\": ");
        put_bound(b, true, rr && rr->has_min ? rr->min : 0, false);
        sg_buf_puts(b, ", \"max\": ");
        put_bound(b, rr && rr->has_max, rr ? rr->max : 0, true);
        sg_buf_putc(b, '}');
        return 0;
    }
    r = range_of(g, size);
    sg_buf_puts(b, "{\"kind\": \"derived\", \"name\": ");
    if ((rc = put_expr(b, size, err)) != 0)
        return rc;
    sg_buf_puts(b, ", \"expr\": ");
    if ((rc = put_expr(b, size, err)) != 0)
        return rc;
    sg_buf_puts(b, ", \"root\": {\"name\": ");
    sg__json_put_str(b, sg_expr_symbol_name(root));
    sg_buf_puts(b, ", \"min\": ");
    put_bound(b, true, rr && rr->has_min ? rr->min : 0, false);
    sg_buf_puts(b, ", \"max\": ");
    put_bound(b, rr && rr->has_max, rr ? rr->max : 0, true);
    sg_buf_puts(b, "}, \"min\": ");
    if (r && r->has_min)
        put_bound(b, true, r->min, false);
    else
        put_bound(b, sg__mul(a, rr && rr->has_min ? rr->min : 0, &v) && sg__add(v, c, &v), v, false);
    sg_buf_puts(b, ", \"max\": ");
    if (r)
        put_bound(b, r->has_max, r->max, true);
    else
        put_bound(b, rr && rr->has_max && sg__mul(a, rr->max, &v) && sg__add(v, c, &v), v, true);
    sg_buf_putc(b, '}');
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

/* Build the trace with example values meeting `sb` (may be NULL). */
static int build_trace(sg_trace **out, const sg_graph *g, const sym_bounds *sb, sg_error *err)
{
    sg_pool *pool;
    size_t ns, i, d, k, ni;
    bool *backed = NULL, first;
    sg_int *vals = NULL;
    sg_buf b, names;
    char head[256], num[SG_INT_STRLEN];
    int rc = 0;

    *out = NULL;
    if (!g)
        return sg_error_set(err, SG_EINVALID, "no graph");
    pool = sg_graph_pool(g);
    ns = sg_pool_nsymbols(pool);
    sg_buf_init(&b, TRACE_MAX);
    sg_buf_init(&names, 1 << 20);
    backed = sg__calloc(ns + 1, sizeof *backed);
    vals = sg__calloc(ns + 1, sizeof *vals);
    if (!backed || !vals) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building the trace");
        goto cleanup;
    }
    for (i = 0; i < ns; i++) {
        sg_error e2 = SG_ERROR_INIT;
        backed[i] = is_backed(g, sg_pool_symbol(pool, i), &e2);
        if (e2.code) {
            rc = sg_error_set(err, e2.code, "%s", e2.msg);
            goto cleanup;
        }
    }
    if ((rc = find_hints(vals, g, backed, sb, err)) != 0)
        goto cleanup;

    sg_buf_puts(&b, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": ");
    sg__json_put_str(&b, sg_graph_torch_version(g) ? sg_graph_torch_version(g) : "");
    sg_buf_puts(&b, ", \"strict\": false, \"shape_env\": true,\n\"symbols\": [");
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        uint32_t idx = sg_expr_symbol_index(s->sym);
        bool bk = backed[idx];
        const sg_graph_range *r = s->range;
        sg_buf_puts(&b, i ? ",\n" : "\n");
        sg_buf_puts(&b, "{\"name\": ");
        sg__json_put_str(&b, sg_expr_symbol_name(s->sym));
        sg_buf_puts(&b, ", \"range\": [");
        put_bound(&b, (r && r->has_min) || bk, r && r->has_min ? r->min : 0, false);
        sg_buf_puts(&b, ", ");
        put_bound(&b, r && r->has_max, r ? r->max : 0, true);
        sg_buf_puts(&b, "], \"hint\": ");
        if (bk)
            sg__json_put_int(&b, vals[idx]);
        else
            sg_buf_puts(&b, "null");
        sg_buf_printf(&b, ", \"unbacked\": %s, \"size_like\": false, \"replacement\": null, \"sources\": [",
                      bk ? "false" : "true");
        if (s->path) {
            sg_buf_puts(&b, "\"L");
            sg_buf_puts(&b, s->path); /* pytree paths hold no quote or backslash needing escapes */
            sg_buf_printf(&b, ".size()[%zu]\"", s->dim);
        }
        sg_buf_puts(&b, "]}");
    }
    sg_buf_puts(&b, "],\n\"guards\": [");
    first = true;
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        if (!a->expr)
            continue;
        sg_buf_puts(&b, first ? "\n" : ",\n");
        first = false;
        sg_buf_puts(&b, "{\"origin\": \"runtime_assert\", \"expr\": ");
        if ((rc = put_expr(&b, a->expr, err)) != 0)
            goto cleanup;
        sg_buf_puts(&b, ", \"msg\": ");
        sg__json_put_str(&b, a->message ? a->message : a->target);
        sg_buf_putc(&b, '}');
    }
    sg_buf_puts(&b, "],\n\"inputs\": [");
    first = true;
    sg_buf_putc(&names, '[');
    ni = 0;
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER)
            continue;
        if (path_head(in->path, head, sizeof head)) {
            /* argument names in order of first appearance */
            bool seen = false;
            for (k = 0; k < i && !seen; k++) {
                const sg_graph_input *o = sg_graph_input_at(g, k);
                char h2[256];
                seen = o->kind == SG_GRAPH_IN_USER && path_head(o->path, h2, sizeof h2) && strcmp(h2, head) == 0;
            }
            if (!seen) {
                sg_buf_puts(&names, ni++ ? ", " : "");
                sg__json_put_str(&names, head);
            }
        }
        if (!in->tensor)
            continue;
        for (d = 0; d < in->tensor->ndim; d++) {
            const sg_expr *size = in->tensor->sizes[d];
            sg_value v;
            sg_error e2 = SG_ERROR_INIT;
            sg_buf_puts(&b, first ? "\n" : ",\n");
            first = false;
            sg_buf_puts(&b, "{\"path\": ");
            sg__json_put_str(&b, in->path);
            sg_buf_printf(&b, ", \"dim\": %zu, \"size\": ", d);
            if (sg_expr_eval(&v, pool, size, vals, ns, &e2) != 0 || v.kind != SG_VAL_INT) {
                rc = sg_error_set(err, SG_EUNSUPPORTED, "input %s dim %zu: no example size for its size", in->path, d);
                goto cleanup;
            }
            sg_buf_puts(&b, sg_int_format(num, v.num));
            sg_buf_puts(&b, ", \"source\": \"L");
            sg_buf_puts(&b, in->path);
            sg_buf_printf(&b, ".size()[%zu]\", \"traced_source\": \"L", d);
            sg_buf_puts(&b, in->path);
            sg_buf_printf(&b, ".size()[%zu]\", \"value\": ", d);
            if ((rc = put_expr(&b, size, err)) != 0)
                goto cleanup;
            sg_buf_puts(&b, ", \"spec\": ");
            if ((rc = put_spec(&b, g, size, err)) != 0)
                goto cleanup;
            sg_buf_putc(&b, '}');
        }
    }
    sg_buf_putc(&names, ']');
    sg_buf_puts(&b, "],\n\"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": {\"arg_names\": ");
    if (names.failed) {
        rc = sg_error_set(err, names.failed, "building the trace: argument names too long");
        goto cleanup;
    }
    sg_buf_puts(&b, names.data);
    sg_buf_puts(&b, "}}}\n");
    if (b.failed) {
        rc = sg_error_set(err, b.failed, "building the trace: %s", b.failed == SG_ENOMEM ? "out of memory" : "too large");
        goto cleanup;
    }
    rc = sg_trace_load_json(out, b.data, b.len, err);
cleanup:
    sg_buf_dispose(&b);
    sg_buf_dispose(&names);
    sg_free(backed);
    sg_free(vals);
    return rc;
}

int sg_graph_to_trace(sg_trace **out, const sg_graph *g, sg_error *err)
{
    return build_trace(out, g, NULL, err);
}

int sg_graph_to_trace_spec(sg_trace **out, const sg_graph *g, const char *spec, size_t len, const char *what,
                           sg_error *err)
{
    sg_trace *t = NULL;
    sym_bounds *sb = NULL;
    const sg_input_dim *in;
    size_t n = 0, i, ns;
    int rc;

    *out = NULL;
    /* first with the declared ranges, to read the spec's bounds per symbol */
    if ((rc = build_trace(&t, g, NULL, err)) != 0 || (rc = sg_trace__set_spec_json(t, spec, len, what, err)) != 0)
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
        gs = sg_expr_symbol(sg_graph_pool(g), sg_expr_symbol_name(d->value), strlen(sg_expr_symbol_name(d->value)));
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
    if ((rc = build_trace(&t, g, sb, err)) != 0 || (rc = sg_trace__set_spec_json(t, spec, len, what, err)) != 0)
        goto cleanup;
    *out = t;
    t = NULL;
cleanup:
    sg_trace_free(t);
    sg_free(sb);
    return rc;
}

/* ---- the record `pack` writes ---------------------------------------------------- */

/* Append an sg_bound as an integer or null (unbounded). */
static void put_sgbound(sg_buf *b, sg_bound v)
{
    if (v.inf)
        sg_buf_puts(b, "null");
    else
        sg__json_put_int(b, v.v);
}

/* Name of a dim status. */
static const char *status_name(sg_dim_status s)
{
    switch (s) {
    case SG_DIM_PROVED: return "proved";
    case SG_DIM_REFUTED: return "refuted";
    case SG_DIM_UNKNOWN: return "unknown";
    default: return "static";
    }
}

/* Name of a violation kind. */
static const char *viol_name(sg_violation_kind k)
{
    switch (k) {
    case SG_VIOL_SPEC: return "spec";
    case SG_VIOL_SPECIALIZED: return "specialized";
    case SG_VIOL_EQUAL: return "equal";
    case SG_VIOL_RELATED: return "related";
    default: return "guard";
    }
}

int sg_graph_constraints_json(char **out, const sg_graph *g, const sg_report *r, const sg_graph_record_info *info,
                              sg_error *err)
{
    char hex[SG_SHA256_HEX_LEN + 1];
    const sg_trace *t;
    const sg_input_dim *in;
    size_t n = 0, i, k, checked = 0, unrec = 0;
    unsigned major, minor, build, rev;
    int maj = 0, min = 0, rc = 0;
    sg_buf b;

    *out = NULL;
    if (!g || !r || !r->trace || !info || (!info->model_json && info->model_len))
        return sg_error_set(err, SG_EINVALID, "sg_graph_constraints_json: missing argument");
    t = r->trace;
    in = sg_trace_inputs(t, &n);
    sg__sha256_hex(hex, info->model_json ? info->model_json : "", info->model_len);
    Z3_get_version(&major, &minor, &build, &rev);
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
    sg_buf_puts(&b, ",\n  \"model\": {\"member\": ");
    sg__json_put_str_or_null(&b, info->model_member);
    sg_buf_puts(&b, ", \"sha256\": ");
    sg__json_put_str(&b, hex);
    sg_buf_printf(&b, ", \"bytes\": %zu, \"schema_version\": [%d, %d], \"torch_version\": ", info->model_len, maj, min);
    sg__json_put_str_or_null(&b, sg_graph_torch_version(g));
    sg_buf_printf(&b, "},\n  \"solver\": {\"name\": \"z3\", \"version\": \"%u.%u.%u\", \"budget\": ", major, minor,
                  build);
    if (info->opts)
        sg_buf_printf(&b, "{\"timeout_ms\": %u, \"query_timeout_ms\": %u, \"query_rlimit\": %llu}",
                      info->opts->timeout_ms, info->opts->query_timeout_ms,
                      (unsigned long long)info->opts->query_rlimit);
    else
        sg_buf_puts(&b, "null");
    sg_buf_printf(&b, ", \"queries\": %u},\n  \"verdict\": \"%s\",\n", r->stats.queries, sg_verdict_name(r->verdict));
    sg_buf_printf(&b, "  \"runtime_asserts\": {\"count\": %zu, \"checked\": %zu, \"unrecovered\": %zu},\n",
                  sg_graph_assert_count(g), checked, unrec);
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
        sg_buf_printf(&b, ", \"status\": \"%s\"", res ? status_name(res->status) : "static");
        if (res && res->reason[0]) {
            sg_buf_puts(&b, ", \"reason\": ");
            sg__json_put_str(&b, res->reason);
        }
        if (d->has_bounds) {
            sg_buf_puts(&b, ", \"declared\": [");
            put_sgbound(&b, d->min);
            sg_buf_puts(&b, ", ");
            put_sgbound(&b, d->max);
            sg_buf_putc(&b, ']');
        }
        if (inf) {
            sg_buf_puts(&b, ", \"symbol\": ");
            sg__json_put_str(&b, sg_expr_symbol_name(inf->sym));
            if (inf->is_constant) {
                sg_buf_puts(&b, ", \"constant\": ");
                sg__json_put_int(&b, inf->constant);
            }
            sg_buf_puts(&b, ", \"range\": [");
            put_sgbound(&b, inf->lo);
            sg_buf_puts(&b, ", ");
            put_sgbound(&b, inf->hi);
            sg_buf_printf(&b, "], \"range_exact\": %s", inf->range_exact ? "true" : "false");
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
        sg_buf_puts(&b, "\"dim\": ");
        sg__json_put_str_or_null(&b, v->dim);
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
