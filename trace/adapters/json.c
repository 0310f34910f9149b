/*
 * trace_json.c - the single-file JSON trace of docs/trace-format.md
 * ("format": "shapegate-trace", "version": 1): sg_trace_to_json() writes it,
 * sg_trace_load_json() reads and validates it. Writing is deterministic and a
 * written trace reads back to a trace that writes the same bytes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_impl.h"
#include "util/json.h"

#define FORMAT_NAME "shapegate-trace"

/* ---- writing ------------------------------------------------------------------------ */

static void put_bound(sg_buf *b, sg_bound v)
{
    if (v.inf > 0)
        sg_buf_puts(b, "\"int_oo\"");
    else if (v.inf < 0)
        sg_buf_puts(b, "\"-int_oo\"");
    else
        sg__json_put_int(b, v.v);
}

/* A spec bound, or {"unavailable": text} when torch could not compute it. */
static void put_spec_bound(sg_buf *b, const char *key, sg_bound v, const char *unavailable)
{
    sg_buf_printf(b, ", \"%s\": ", key);
    if (unavailable) {
        sg_buf_puts(b, "{\"unavailable\": ");
        sg__json_put_str(b, unavailable);
        sg_buf_putc(b, '}');
    } else {
        put_bound(b, v);
    }
}

static void put_bool(sg_buf *b, const char *key, bool v)
{
    sg_buf_printf(b, ", \"%s\": %s", key, v ? "true" : "false");
}

/* `, "key": "text"` unless `s` is NULL. */
static void put_opt_str(sg_buf *b, const char *key, const char *s)
{
    if (!s)
        return;
    sg_buf_printf(b, ", \"%s\": ", key);
    sg__json_put_str(b, s);
}

/* An expression in sympy form as a JSON string, or null. */
static int put_expr(sg_buf *b, const sg_expr *e, sg_error *err)
{
    char *s = NULL;
    int rc;

    if (!e)
        return sg_buf_puts(b, "null");
    rc = sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, err);
    if (rc)
        return rc;
    sg__json_put_str(b, s);
    sg_free(s);
    return 0;
}

static const char *spec_kind_name(sg_spec_kind k)
{
    switch (k) {
    case SG_SPEC_UNSET: return "unset";
    case SG_SPEC_STATIC: return "static";
    case SG_SPEC_DIM: return "dim";
    case SG_SPEC_DERIVED: return "derived";
    case SG_SPEC_AUTO: return "auto";
    case SG_SPEC_DYNAMIC: return "dynamic";
    }
    return "unset";
}

static int put_symbol(sg_buf *b, const sg_symbol_info *si, sg_error *err)
{
    int rc;

    sg_buf_puts(b, "    {\"name\": ");
    sg__json_put_str(b, sg_expr_symbol_name(si->sym));
    sg_buf_puts(b, ", \"range\": [");
    put_bound(b, si->lo);
    sg_buf_puts(b, ", ");
    put_bound(b, si->hi);
    sg_buf_puts(b, "], \"hint\": ");
    if (si->has_hint)
        sg__json_put_int(b, si->hint);
    else
        sg_buf_puts(b, "null");
    put_bool(b, "unbacked", si->unbacked);
    put_bool(b, "size_like", si->size_like);
    sg_buf_puts(b, ", \"replacement\": ");
    if ((rc = put_expr(b, si->replacement, err)) != 0)
        return rc;
    sg_buf_puts(b, ", \"sources\": [");
    for (size_t k = 0; k < si->nsources; k++) {
        if (k)
            sg_buf_puts(b, ", ");
        sg__json_put_str(b, si->sources[k]);
    }
    return sg_buf_puts(b, "]}");
}

static int put_guard(sg_buf *b, const sg_guard *g, sg_error *err)
{
    int rc;

    sg_buf_printf(b, "    {\"origin\": \"%s\", \"expr\": ",
                  g->origin == SG_GUARD_RUNTIME_ASSERT ? "runtime_assert" : "shape");
    if (g->text)
        sg__json_put_str(b, g->text);
    else if ((rc = put_expr(b, g->expr, err)) != 0)
        return rc;
    put_opt_str(b, "user_loc", g->user_loc);
    put_opt_str(b, "framework_loc", g->framework_loc);
    put_opt_str(b, "sloc", g->sloc);
    put_opt_str(b, "msg", g->msg);
    return sg_buf_putc(b, '}');
}

static int put_input(sg_buf *b, const sg_input_dim *d, sg_error *err)
{
    int rc;

    sg_buf_puts(b, "    {\"path\": ");
    sg__json_put_str(b, d->path);
    sg_buf_printf(b, ", \"dim\": %d, \"size\": ", d->dim);
    sg__json_put_int(b, d->size);
    put_opt_str(b, "source", d->source);
    put_opt_str(b, "traced_source", d->traced_source);
    sg_buf_puts(b, ", \"value\": ");
    if ((rc = put_expr(b, d->value, err)) != 0)
        return rc;
    sg_buf_printf(b, ", \"spec\": {\"kind\": \"%s\"", spec_kind_name(d->kind));
    switch (d->kind) {
    case SG_SPEC_STATIC:
        if (d->has_static_size) {
            sg_buf_puts(b, ", \"size\": ");
            sg__json_put_int(b, d->static_size);
        }
        break;
    case SG_SPEC_DIM:
        put_opt_str(b, "name", d->name);
        put_spec_bound(b, "min", d->min, d->min_unavailable);
        put_spec_bound(b, "max", d->max, d->max_unavailable);
        break;
    case SG_SPEC_DERIVED:
        put_opt_str(b, "name", d->name);
        sg_buf_puts(b, ", \"expr\": ");
        if ((rc = put_expr(b, d->derived, err)) != 0)
            return rc;
        sg__json_put_field(b, ", \"root\": {\"name\": ", d->root_name);
        sg_buf_puts(b, ", \"min\": ");
        put_bound(b, d->root_min);
        sg_buf_puts(b, ", \"max\": ");
        put_bound(b, d->root_max);
        sg_buf_putc(b, '}');
        put_spec_bound(b, "min", d->min, d->min_unavailable);
        put_spec_bound(b, "max", d->max, d->max_unavailable);
        break;
    case SG_SPEC_AUTO:
    case SG_SPEC_DYNAMIC:
        if (d->has_bounds) {
            put_spec_bound(b, "min", d->min, d->min_unavailable);
            put_spec_bound(b, "max", d->max, d->max_unavailable);
        }
        break;
    case SG_SPEC_UNSET:
        break;
    }
    return sg_buf_puts(b, "}}");
}

int sg_trace_to_json(char **out, const sg_trace *t, sg_error *err)
{
    sg_buf b;
    int rc = 0;

    *out = NULL;
    if (!t)
        return sg_error_set(err, SG_EINVALID, "no trace");
    sg_buf_init(&b, SG_TRACE_MAX_FILE);
    sg_buf_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"torch_version\": ",
                  FORMAT_NAME, SG_TRACE_FORMAT_VERSION);
    sg__json_put_str(&b, t->torch_version);
    sg_buf_printf(&b, ",\n  \"strict\": %s,\n  \"shape_env\": %s,\n  \"symbols\": [",
                  t->strict ? "true" : "false", t->has_shape_env ? "true" : "false");
    for (size_t i = 0; i < t->nsymbols && rc == 0; i++) {
        sg_buf_puts(&b, i ? ",\n" : "\n");
        rc = put_symbol(&b, &t->symbols[i], err);
    }
    sg_buf_puts(&b, t->nsymbols ? "\n  ],\n  \"guards\": [" : "],\n  \"guards\": [");
    for (size_t i = 0; i < t->nguards && rc == 0; i++) {
        sg_buf_puts(&b, i ? ",\n" : "\n");
        rc = put_guard(&b, &t->guards[i], err);
    }
    sg_buf_puts(&b, t->nguards ? "\n  ],\n  \"inputs\": [" : "],\n  \"inputs\": [");
    for (size_t i = 0; i < t->ninputs && rc == 0; i++) {
        sg_buf_puts(&b, i ? ",\n" : "\n");
        rc = put_input(&b, &t->inputs[i], err);
    }
    sg_buf_puts(&b, t->ninputs ? "\n  ],\n" : "],\n");
    sg_buf_printf(&b, "  \"spec\": {\"flat\": %s, \"dynamic_shapes\": %s, \"inputs\": %s",
                  t->has_flat_spec ? "true" : "false",
                  t->dynamic_shapes_json ? t->dynamic_shapes_json : "null",
                  t->inputs_json ? t->inputs_json : "null");
    if (t->torch_fixes_json)
        sg_buf_printf(&b, ", \"torch_suggested_fixes\": %s", t->torch_fixes_json);
    sg__json_put_opt_member(&b, "torch_error", t->torch_error);
    sg__json_put_opt_member(&b, "torch_error_message", t->torch_error_message);
    sg_buf_puts(&b, "}\n}\n");
    if (rc == 0 && b.failed == SG_ELIMIT)
        rc = sg_error_set(err, SG_ELIMIT, "trace JSON would be larger than %zu bytes",
                          SG_TRACE_MAX_FILE);
    else if (rc == 0 && b.failed)
        rc = sg_error_set(err, b.failed, "out of memory writing the trace JSON");
    if (rc == 0 && !(*out = sg_buf_take(&b)))
        rc = sg_error_set(err, SG_ENOMEM, "out of memory writing the trace JSON");
    sg_buf_dispose(&b);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------- */

typedef sg_trace__reader reader;

/* Member `key` of `obj` into *out when `is` accepts it (absent or null: NULL); else the error
 * "<key>: expected <expected>". */
static int get_typed(reader *R, const cJSON **out, const cJSON *obj, const char *key,
                     cJSON_bool (*is)(const cJSON *), const char *expected)
{
    return sg_trace__get_member(R, out, obj, key, is, expected, true);
}

/* An optional boolean member (absent or null: false). */
static int get_bool(reader *R, bool *out, const cJSON *obj, const char *key)
{
    const cJSON *j;
    int rc = get_typed(R, &j, obj, key, cJSON_IsBool, "true or false");
    *out = j && cJSON_IsTrue(j);
    return rc;
}

/* An optional string member copied into the arena (absent or null: NULL). */
static int get_str(reader *R, const char **out, const cJSON *obj, const char *key, bool required)
{
    const cJSON *j;
    int rc;
    *out = NULL;
    if (required && sg__json_is_none(sg__json_get(obj, key)))
        return sg_trace__fail(R, SG_EINVALID, "%s: missing", key);
    if ((rc = get_typed(R, &j, obj, key, cJSON_IsString, "a string")) != 0 || !j)
        return rc;
    if (!(*out = sg_trace__strdup(R->t, j->valuestring)))
        return sg_trace__oom(R);
    return 0;
}

/* An optional array member (absent or null: NULL). */
static int get_arr(reader *R, const cJSON **out, const cJSON *obj, const char *key)
{
    return get_typed(R, out, obj, key, cJSON_IsArray, "an array");
}

/* A bound: an integer, "int_oo" or "-int_oo". */
static int read_bound(reader *R, sg_bound *b, const cJSON *j, const char *key)
{
    const char *s = sg__json_str(j);
    b->v = 0;
    b->inf = 0;
    if (s && strcmp(s, "int_oo") == 0)
        b->inf = 1;
    else if (s && strcmp(s, "-int_oo") == 0)
        b->inf = -1;
    else if (!sg__json_int(j, &b->v))
        return sg_trace__fail(R, SG_EINVALID, "%s: expected an integer, \"int_oo\" or \"-int_oo\"", key);
    return 0;
}

/* A spec bound: a bound or {"unavailable": text}; absent: `dflt`. */
static int read_spec_bound(reader *R, sg_bound *b, const char **note, const cJSON *obj,
                           const char *key, int dir, sg_bound dflt)
{
    const cJSON *j = sg__json_get(obj, key);
    *note = NULL;
    if (sg__json_is_none(j)) {
        *b = dflt;
        return 0;
    }
    if (cJSON_IsObject(j)) {
        const char *s = sg__json_str(sg__json_get(j, "unavailable"));
        if (!s)
            return sg_trace__fail(R, SG_EINVALID, "%s: expected {\"unavailable\": text}", key);
        if (!(*note = sg_trace__strdup(R->t, s)))
            return sg_trace__oom(R);
        b->v = 0;
        b->inf = dir;
        return 0;
    }
    return read_bound(R, b, j, key);
}


static int read_symbols(reader *R, const cJSON *arr)
{
    const cJSON *it;
    int rc, i = 0;

    cJSON_ArrayForEach(it, arr) {
        const char *name, *repl_text, **list = NULL;
        const cJSON *range, *hint, *srcs, *s;
        sg_symbol_info si = {.lo = {0, -1}, .hi = {0, 1}};
        size_t n = 0;

        sg_trace__set_field(R, "symbols[%d]", i++);
        if (!cJSON_IsObject(it))
            return sg_trace__fail(R, SG_EINVALID, "expected an object");
        if ((rc = get_str(R, &name, it, "name", true)) != 0)
            return rc;
        if ((rc = sg_trace__symbol_named(&si.sym, R->t, name, R->what, R->field, R->err)) != 0)
            return rc;
        range = sg__json_get(it, "range");
        if (!sg__json_is_none(range)) {
            if (!cJSON_IsArray(range) || cJSON_GetArraySize(range) != 2)
                return sg_trace__fail(R, SG_EINVALID, "range: expected [lo, hi]");
            if ((rc = read_bound(R, &si.lo, cJSON_GetArrayItem(range, 0), "range")) != 0
                || (rc = read_bound(R, &si.hi, cJSON_GetArrayItem(range, 1), "range")) != 0)
                return rc;
        }
        if ((rc = get_bool(R, &si.unbacked, it, "unbacked")) != 0
            || (rc = get_bool(R, &si.size_like, it, "size_like")) != 0
            || (rc = get_str(R, &repl_text, it, "replacement", false)) != 0
            || (rc = get_arr(R, &srcs, it, "sources")) != 0)
            return rc;
        if (repl_text && (rc = sg_trace__read_replacement(R, repl_text, &si.replacement)) != 0)
            return rc;
        if (srcs) {
            list = sg_trace__alloc(R->t, ((size_t)cJSON_GetArraySize(srcs) + 1) * sizeof *list);
            if (!list)
                return sg_trace__oom(R);
            cJSON_ArrayForEach(s, srcs) {
                if (!cJSON_IsString(s))
                    return sg_trace__fail(R, SG_EINVALID, "sources: expected strings");
                if (!(list[n++] = sg_trace__strdup(R->t, s->valuestring)))
                    return sg_trace__oom(R);
            }
        }
        si.sources = list;
        si.nsources = n;
        hint = sg__json_get(it, "hint");
        if (!sg__json_is_none(hint) && !(si.has_hint = sg__json_int(hint, &si.hint)))
            return sg_trace__fail(R, SG_EINVALID, "hint: expected an integer or null");
        if ((rc = sg_trace__add_symbol(R, &si, name)) != 0)
            return rc;
    }
    return 0;
}

static int read_guards(reader *R, const cJSON *arr)
{
    const cJSON *it;
    int rc, i = 0;

    cJSON_ArrayForEach(it, arr) {
        const char *origin, *text, *uloc, *floc, *sloc, *msg;
        sg_guard *g;
        sg_guard_origin o;

        sg_trace__set_field(R, "guards[%d]", i++);
        if (!cJSON_IsObject(it))
            return sg_trace__fail(R, SG_EINVALID, "expected an object");
        if ((rc = get_str(R, &origin, it, "origin", true)) != 0)
            return rc;
        if (strcmp(origin, "shape") == 0)
            o = SG_GUARD_SHAPE;
        else if (strcmp(origin, "runtime_assert") == 0)
            o = SG_GUARD_RUNTIME_ASSERT;
        else
            return sg_trace__fail(R, SG_EINVALID, "origin: expected \"shape\" or \"runtime_assert\"");
        if ((rc = get_str(R, &text, it, "expr", true)) != 0
            || (rc = get_str(R, &uloc, it, "user_loc", false)) != 0
            || (rc = get_str(R, &floc, it, "framework_loc", false)) != 0
            || (rc = get_str(R, &sloc, it, "sloc", false)) != 0
            || (rc = get_str(R, &msg, it, "msg", false)) != 0)
            return rc;
        if ((rc = sg_trace__read_guard(R, text, o, &g)) != 0)
            return rc;
        g->user_loc = uloc;
        g->framework_loc = floc;
        g->sloc = sloc;
        g->msg = msg;
    }
    return 0;
}

/* The "spec" object of one input dim. */
static int read_dim_spec(reader *R, sg_input_dim *d, const cJSON *spec)
{
    const sg_bound zero = {0, 0}, ninf = {0, -1}, pinf = {0, 1};
    const char *kind;
    int rc;

    if (sg__json_is_none(spec)) {
        d->kind = SG_SPEC_UNSET;
        return 0;
    }
    if (!cJSON_IsObject(spec))
        return sg_trace__fail(R, SG_EINVALID, "spec: expected an object");
    kind = sg__json_str(sg__json_get(spec, "kind"));
    if (!kind)
        return sg_trace__fail(R, SG_EINVALID, "spec.kind: expected a string");
    if (strcmp(kind, "unset") == 0) {
        d->kind = SG_SPEC_UNSET;
    } else if (strcmp(kind, "static") == 0) {
        const cJSON *sz = sg__json_get(spec, "size");
        d->kind = SG_SPEC_STATIC;
        if (!sg__json_is_none(sz)) {
            if (!sg__json_int(sz, &d->static_size))
                return sg_trace__fail(R, SG_EINVALID, "spec.size: expected an integer");
            d->has_static_size = true;
        }
    } else if (strcmp(kind, "dim") == 0) {
        d->kind = SG_SPEC_DIM;
        d->has_bounds = true;
        if ((rc = get_str(R, &d->name, spec, "name", true)) != 0
            || (rc = read_spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, zero)) != 0
            || (rc = read_spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
    } else if (strcmp(kind, "derived") == 0) {
        const cJSON *root = sg__json_get(spec, "root");
        const char *expr;
        const cJSON *rmin, *rmax;
        d->kind = SG_SPEC_DERIVED;
        d->has_bounds = true;
        if ((rc = get_str(R, &d->name, spec, "name", true)) != 0
            || (rc = get_str(R, &expr, spec, "expr", true)) != 0)
            return rc;
        if (!cJSON_IsObject(root))
            return sg_trace__fail(R, SG_EINVALID, "spec.root: expected {name, min, max}");
        rmin = sg__json_get(root, "min");
        rmax = sg__json_get(root, "max");
        d->root_min = zero;
        d->root_max = pinf;
        if ((rc = get_str(R, &d->root_name, root, "name", true)) != 0
            || (!sg__json_is_none(rmin) && (rc = read_bound(R, &d->root_min, rmin, "root.min")) != 0)
            || (!sg__json_is_none(rmax) && (rc = read_bound(R, &d->root_max, rmax, "root.max")) != 0)
            || (rc = read_spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
            || (rc = read_spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        if ((rc = sg_trace__read_int_expr(R, &d->derived, expr, "spec.expr")) != 0)
            return rc;
        if ((rc = sg_trace__check_derived(R, d->derived, "spec.expr", expr, d->root_name)) != 0)
            return rc;
    } else if (strcmp(kind, "auto") == 0 || strcmp(kind, "dynamic") == 0) {
        d->kind = kind[0] == 'a' ? SG_SPEC_AUTO : SG_SPEC_DYNAMIC;
        d->has_bounds = !sg__json_is_none(sg__json_get(spec, "min"))
                        || !sg__json_is_none(sg__json_get(spec, "max"));
        if (d->has_bounds
            && ((rc = read_spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
                || (rc = read_spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf))
                       != 0))
            return rc;
    } else {
        return sg_trace__fail(R, SG_EINVALID, "spec.kind: unknown kind '%.30s'", kind);
    }
    return 0;
}

static int read_inputs(reader *R, const cJSON *arr)
{
    const cJSON *it;
    int rc, i = 0;

    cJSON_ArrayForEach(it, arr) {
        sg_input_dim *d;
        const char *value;
        sg_int dim;

        sg_trace__set_field(R, "inputs[%d]", i++);
        if (!cJSON_IsObject(it))
            return sg_trace__fail(R, SG_EINVALID, "expected an object");
        if (!(d = sg_trace__add_input(R->t)))
            return sg_trace__oom(R);
        if ((rc = get_str(R, &d->path, it, "path", true)) != 0
            || (rc = get_str(R, &d->source, it, "source", false)) != 0
            || (rc = get_str(R, &d->traced_source, it, "traced_source", false)) != 0
            || (rc = get_str(R, &value, it, "value", false)) != 0)
            return rc;
        if (!sg__json_int(sg__json_get(it, "dim"), &dim) || dim < 0 || dim > 65535)
            return sg_trace__fail(R, SG_EINVALID, "dim: expected a dim number (0 .. 65535)");
        d->dim = (int)dim;
        if (!sg__json_int(sg__json_get(it, "size"), &d->size))
            return sg_trace__fail(R, SG_EINVALID, "size: expected an integer");
        /* no source: as the capture names it (docs/trace-format.md), the traced source, else L + path */
        if (!d->source && !(d->source = d->traced_source ? d->traced_source
                                                         : sg_trace__printf(R->t, "L%s.size()[%d]", d->path, d->dim)))
            return sg_trace__oom(R);
        if ((rc = read_dim_spec(R, d, sg__json_get(it, "spec"))) != 0)
            return rc;
        if (value && (rc = sg_trace__read_value(R, d, value)) != 0)
            return rc;
    }
    return 0;
}

int sg_trace__load_json_named(sg_trace **out, const char *json, size_t len, const char *what,
                              sg_error *err)
{
    reader R;
    sg__json_doc *doc = NULL; /* read only; what the trace keeps is copied into its arena */
    const cJSON *root = NULL;
    const cJSON *j, *arr, *spec;
    sg_int version;
    int rc;

    *out = NULL;
    memset(&R, 0, sizeof R);
    R.err = err;
    R.what = what ? what : "trace JSON";
    rc = sg__json_doc_parse(&doc, &root, json, len, SG_TRACE_MAX_FILE, SG_TRACE_MAX_JSON_DEPTH, R.what,
                            err);
    if (rc) {
        sg__error_one_line(err);
        return rc;
    }
    if ((rc = sg_trace__new(&R.t, err)) != 0)
        goto cleanup;
    sg_trace__set_field(&R, "(top level)");
    if (!cJSON_IsObject(root)) {
        rc = sg_trace__fail(&R, SG_EINVALID, "expected an object");
        goto cleanup;
    }
    sg_trace__set_field(&R, "format");
    j = sg__json_get(root, "format");
    if (!sg__json_str(j) || strcmp(j->valuestring, FORMAT_NAME) != 0) {
        rc = sg_trace__fail(&R, SG_EINVALID, "not a shapegate trace (expected \"format\": \"%s\")",
                  FORMAT_NAME);
        goto cleanup;
    }
    sg_trace__set_field(&R, "version");
    if (!sg__json_int(sg__json_get(root, "version"), &version) || version < 1) {
        rc = sg_trace__fail(&R, SG_EINVALID, "expected a positive integer");
        goto cleanup;
    }
    if (version > SG_TRACE_FORMAT_VERSION) {
        rc = sg_trace__fail(&R, SG_EUNSUPPORTED, "format version %d is newer than this shapegate reads (%d)",
                  version > 999999 ? 999999 : (int)version, SG_TRACE_FORMAT_VERSION);
        goto cleanup;
    }
    sg_trace__set_field(&R, "(top level)");
    {
        const char *tv;
        if ((rc = get_str(&R, &tv, root, "torch_version", false)) != 0
            || (rc = get_bool(&R, &R.t->strict, root, "strict")) != 0
            || (rc = get_bool(&R, &R.t->has_shape_env, root, "shape_env")) != 0)
            goto cleanup;
        if (tv)
            R.t->torch_version = tv;
    }
    if ((rc = get_arr(&R, &arr, root, "symbols")) != 0 || (rc = read_symbols(&R, arr)) != 0)
        goto cleanup;
    sg_trace__set_field(&R, "(top level)");
    if ((rc = get_arr(&R, &arr, root, "guards")) != 0 || (rc = read_guards(&R, arr)) != 0)
        goto cleanup;
    sg_trace__set_field(&R, "(top level)");
    if ((rc = get_arr(&R, &arr, root, "inputs")) != 0 || (rc = read_inputs(&R, arr)) != 0)
        goto cleanup;
    sg_trace__set_field(&R, "spec");
    spec = sg__json_get(root, "spec");
    if (!sg__json_is_none(spec)) {
        if (!cJSON_IsObject(spec)) {
            rc = sg_trace__fail(&R, SG_EINVALID, "expected an object");
            goto cleanup;
        }
        if ((rc = get_bool(&R, &R.t->has_flat_spec, spec, "flat")) != 0)
            goto cleanup;
        sg_trace__set_field(&R, "spec.dynamic_shapes");
        if ((rc = sg_trace__keep_json(&R, &R.t->dynamic_shapes_json, sg__json_get(spec, "dynamic_shapes"))) != 0)
            goto cleanup;
        sg_trace__set_field(&R, "spec.inputs");
        if ((rc = sg_trace__keep_json(&R, &R.t->inputs_json, sg__json_get(spec, "inputs"))) != 0)
            goto cleanup;
        sg_trace__set_field(&R, "spec.torch_suggested_fixes");
        {
            const cJSON *fx = sg__json_get(spec, "torch_suggested_fixes");
            if (!sg__json_is_none(fx) && !cJSON_IsArray(fx)) {
                rc = sg_trace__fail(&R, SG_EINVALID, "expected an array of strings");
                goto cleanup;
            }
            if (fx && (rc = sg_trace__keep_json(&R, &R.t->torch_fixes_json, fx)) != 0)
                goto cleanup;
        }
        sg_trace__set_field(&R, "spec.torch_error");
        if ((rc = get_str(&R, &R.t->torch_error, spec, "torch_error", false)) != 0)
            goto cleanup;
        sg_trace__set_field(&R, "spec.torch_error_message");
        if ((rc = get_str(&R, &R.t->torch_error_message, spec, "torch_error_message", false)) != 0)
            goto cleanup;
    }
    if (!R.t->has_flat_spec) /* no per-dim spec (trace.h): whatever the inputs said is not a spec */
        for (size_t i = 0; i < R.t->ninputs; i++)
            R.t->inputs[i].kind = SG_SPEC_UNSET;
    *out = R.t;
    R.t = NULL;
cleanup:
    if (rc)
        sg__error_one_line(err);
    sg_trace_free(R.t);
    sg__json_doc_free(doc);
    return rc;
}

int sg_trace_load_json(sg_trace **out, const char *json, size_t len, sg_error *err)
{
    return sg_trace__load_json_named(out, json, len, NULL, err);
}
