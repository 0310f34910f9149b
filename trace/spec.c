/*
 * spec.c - the spec side of a trace: reading dynamic_shapes leaves (both
 * readers' structured form), recomputing derived bounds as torch does,
 * rebuilding the structured dynamic_shapes JSON from per-dim specs, and
 * a copy of a trace with its whole spec replaced by a structured JSON spec
 * (sg_trace_with_spec_json, `check --spec FILE`).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_impl.h"
#include "util/json.h"

/* ---- spec leaves ---- */

/* A bound of the spec into `b`; a "<unavailable: ...>" text goes to `*note` and
 * makes the bound infinite in direction `dir`. Absent or null: `dflt`. */
static int spec_bound(sg_trace__reader *R, sg_bound *b, const char **note, const cJSON *spec,
                      const char *key, int dir, sg_bound dflt)
{
    const cJSON *j = sg__json_get(spec, key);
    int rc;

    if (sg__json_is_none(j)) {
        *b = dflt;
        return 0;
    }
    rc = sg_trace__read_bound(R, b, j, key);
    if (rc > 0) {
        if (strncmp(j->valuestring, "<unavailable", 12) != 0)
            return sg_trace__fail(R, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
        if (note && !(*note = sg_trace__strdup(R->t, j->valuestring)))
            return sg_trace__oom(R);
        b->v = 0;
        b->inf = dir;
        return 0;
    }
    return rc;
}

/* The spec of one dim (a dynamic_shapes_flat[].spec value). */
int sg_trace__read_spec(sg_trace__reader *R, sg_input_dim *d, const cJSON *spec)
{
    const sg_bound zero = {0, 0}, ninf = {0, -1}, pinf = {0, 1};
    const char *s = sg__json_str(spec);
    int rc;

    if (sg__json_is_none(spec)) {
        d->kind = SG_SPEC_UNSET;
        return 0;
    }
    if (s) {
        if (strcmp(s, "STATIC") == 0)
            d->kind = SG_SPEC_STATIC;
        else if (strcmp(s, "AUTO") == 0)
            d->kind = SG_SPEC_AUTO;
        else if (strcmp(s, "DYNAMIC") == 0)
            d->kind = SG_SPEC_DYNAMIC;
        else
            return sg_trace__fail(R, SG_EINVALID, "unknown spec '%.40s'", s);
        return 0;
    }
    if (cJSON_IsNumber(spec) || cJSON_IsRaw(spec)) { /* Raw: a big integer (util/json.c) */
        if (!sg__json_int(spec, &d->static_size))
            return sg_trace__fail(R, SG_EINVALID, "expected an integer size");
        d->kind = SG_SPEC_STATIC;
        d->has_static_size = true;
        return 0;
    }
    if (!cJSON_IsObject(spec))
        return sg_trace__fail(R, SG_EINVALID, "expected null, a string, an integer or an object");
    if (sg__json_get(spec, "derived")) {
        const cJSON *root = sg__json_get(spec, "root");
        const char *expr = sg__json_str(sg__json_get(spec, "expr"));
        const char *name = sg__json_str(sg__json_get(spec, "derived"));
        char field[sizeof R->field];
        d->kind = SG_SPEC_DERIVED;
        d->has_bounds = true;
        if (!name || !cJSON_IsObject(root) || !sg__json_str(sg__json_get(root, "name")))
            return sg_trace__fail(R, SG_EINVALID,
                        "a derived dim needs \"derived\" (text) and \"root\" {name, min, max}");
        if (!expr)
            expr = name;
        if (!(d->name = sg_trace__strdup(R->t, name))
            || !(d->root_name = sg_trace__strdup(R->t, sg__json_str(sg__json_get(root, "name")))))
            return sg_trace__oom(R);
        snprintf(field, sizeof field, "%.180s.expr", R->field);
        if ((rc = sg_trace__parse(&d->derived, R->t, expr, false, R->what, field, R->err)) != 0)
            return rc;
        if (sg_expr_sort(d->derived) != SG_SORT_INT)
            return sg_trace__fail(R, SG_EINVALID, "expr: '%.60s' is not an integer expression", expr);
        if ((rc = sg_trace__check_derived(R, d->derived, "expr", expr, d->root_name)) != 0)
            return rc;
        if ((rc = spec_bound(R, &d->root_min, NULL, root, "min", -1, zero)) != 0
            || (rc = spec_bound(R, &d->root_max, NULL, root, "max", 1, pinf)) != 0
            || (rc = spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
            || (rc = spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    if (sg__json_get(spec, "hint")) {
        const char *h = sg__json_str(sg__json_get(spec, "hint"));
        if (h && strcmp(h, "AUTO") == 0)
            d->kind = SG_SPEC_AUTO;
        else if (h && strcmp(h, "DYNAMIC") == 0)
            d->kind = SG_SPEC_DYNAMIC;
        else
            return sg_trace__fail(R, SG_EINVALID, "hint: expected \"AUTO\" or \"DYNAMIC\"");
        d->has_bounds = !sg__json_is_none(sg__json_get(spec, "min"))
                        || !sg__json_is_none(sg__json_get(spec, "max"));
        if ((rc = spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
            || (rc = spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    if (sg__json_str(sg__json_get(spec, "name"))) {
        d->kind = SG_SPEC_DIM;
        d->has_bounds = true;
        if (!(d->name = sg_trace__strdup(R->t, sg__json_str(sg__json_get(spec, "name")))))
            return sg_trace__oom(R);
        /* torch's Dim() defaults: min 0, max int_oo. */
        if ((rc = spec_bound(R, &d->min, &d->min_unavailable, spec, "min", -1, zero)) != 0
            || (rc = spec_bound(R, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    return sg_trace__fail(R, SG_EINVALID, "unknown spec object (no \"name\", \"hint\" or \"derived\")");
}

/*
 * Both rewrite the per-dim specs of a copy of the trace's inputs and swap it
 * in only when everything succeeded, so a failure leaves the spec as it was
 * (strings and parsed expressions already made stay in the arena and pool).
 */

/* Forget the spec of `d`: kind UNSET; where it is and what torch traced stay. */
void sg_trace__clear_spec(sg_input_dim *d)
{
    d->kind = SG_SPEC_UNSET;
    d->name = NULL;
    d->has_bounds = false;
    memset(&d->min, 0, sizeof d->min);
    memset(&d->max, 0, sizeof d->max);
    d->min_unavailable = d->max_unavailable = NULL;
    d->derived = NULL;
    d->root_name = NULL;
    memset(&d->root_min, 0, sizeof d->root_min);
    memset(&d->root_max, 0, sizeof d->root_max);
    d->has_static_size = false;
    d->static_size = 0;
}

/* Copy the spec fields of `from` into `to`, keeping `to`'s place and traced value. */
void sg_trace__copy_spec(sg_input_dim *to, const sg_input_dim *from)
{
    to->kind = from->kind;
    to->name = from->name;
    to->has_bounds = from->has_bounds;
    to->min = from->min;
    to->max = from->max;
    to->min_unavailable = from->min_unavailable;
    to->max_unavailable = from->max_unavailable;
    to->derived = from->derived;
    to->root_name = from->root_name;
    to->root_min = from->root_min;
    to->root_max = from->root_max;
    to->has_static_size = from->has_static_size;
    to->static_size = from->static_size;
}

/* `e` as A*root + B with integers A, B (only Add, Mul, integers and `root`); false otherwise
 * or on overflow. */
bool sg_trace__affine_in(const sg_expr *e, const sg_expr *root, sg_int *a, sg_int *b)
{
    size_t i, n = sg_expr_nargs(e);
    sg_int ea, eb, t1, t2;

    switch (sg_expr_kind(e)) {
    case SG_INT:
        *a = 0;
        *b = sg_expr_int_value(e);
        return true;
    case SG_SYM:
        *a = 1;
        *b = 0;
        return e == root;
    case SG_ADD:
        *a = *b = 0;
        for (i = 0; i < n; i++)
            if (!sg_trace__affine_in(sg_expr_arg(e, i), root, &ea, &eb) || !sg__add(*a, ea, a)
                || !sg__add(*b, eb, b))
                return false;
        return true;
    case SG_MUL:
        *a = 0;
        *b = 1;
        for (i = 0; i < n; i++) {
            if (!sg_trace__affine_in(sg_expr_arg(e, i), root, &ea, &eb))
                return false;
            if (*a != 0 && ea != 0)
                return false; /* root squared */
            /* (a x + b)(ea x + eb) = (a eb + ea b) x + b eb */
            if (!sg__mul(*a, eb, &t1) || !sg__mul(ea, *b, &t2) || !sg__add(t1, t2, a)
                || !sg__mul(*b, eb, b))
                return false;
        }
        return true;
    default:
        return false;
    }
}

int sg_trace__check_derived(sg_trace__reader *R, const sg_expr *e, const char *label, const char *text,
                            const char *root_name)
{
    const sg_expr *root = sg_expr_symbol(R->t->pool, root_name, strlen(root_name));
    sg_int a, b;

    if (!root)
        return sg_trace__oom(R);
    if (!sg_trace__affine_in(e, root, &a, &b) || a < 1)
        return sg_trace__fail(R, SG_EINVALID, "%s: '%.60s' is not A*%.60s + B with integers A >= 1 and B", label,
                              text, root_name);
    return 0;
}

/* A*v + B into `*out`; false on overflow. */
static bool affine_at(sg_int a, sg_int b, sg_int v, sg_int *out)
{
    return sg__mul(a, v, out) && sg__add(*out, b, out);
}

bool sg_trace__derived_affine(const sg_input_dim *d, sg_int *a, sg_int *b)
{
    const sg_expr *sym;
    return d->derived && sg_expr_affine(d->derived, &sym, a, b) && sym && *a > 0;
}

/*
 * Recompute the derived bounds of DERIVED `d` from its root's bounds, as torch
 * does: min = A*root_min + B (torch's "<unavailable: ...>" note and -int_oo when
 * negative), max = A*root_max + B. Left alone when the expression is not affine
 * in the root. Returns 0, SG_ENOMEM, or SG_EINVALID on overflow.
 */
int sg_trace__derive_bounds(sg_trace *t, sg_input_dim *d, sg_error *err)
{
    const sg_expr *root;
    sg_int a, b, v;
    char rmin[SG_INT_STRLEN];

    if (d->kind != SG_SPEC_DERIVED || !d->derived || !d->root_name)
        return 0;
    root = sg_expr_symbol(t->pool, d->root_name, strlen(d->root_name));
    if (!root)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (!sg_trace__affine_in(d->derived, root, &a, &b) || a < 1)
        return 0;
    d->has_bounds = true;
    d->min_unavailable = d->max_unavailable = NULL;
    memset(&d->min, 0, sizeof d->min);
    memset(&d->max, 0, sizeof d->max);
    if (d->root_min.inf) {
        d->min.inf = d->root_min.inf;
    } else if (!affine_at(a, b, d->root_min.v, &v)) {
        return sg_error_set(err, SG_EINVALID, "derived dim %.60s: its min overflows", d->name);
    } else if (v < 0) {
        d->min.inf = -1;
        d->min_unavailable = sg_trace__printf(
            t, "<unavailable: AssertionError: Expected derived min value of %s to be >= 0. "
               "Please specify an appropriate min value for %s (currently %s).>",
            d->name, d->root_name, sg_int_format(rmin, d->root_min.v));
        if (!d->min_unavailable)
            return sg_error_set(err, SG_ENOMEM, "out of memory");
    } else {
        d->min.v = v;
    }
    if (d->root_max.inf)
        d->max.inf = d->root_max.inf;
    else if (!affine_at(a, b, d->root_max.v, &d->max.v))
        return sg_error_set(err, SG_EINVALID, "derived dim %.60s: its max overflows", d->name);
    return 0;
}

/* ---- rebuilding dynamic_shapes_json from the per-dim specs ---- */

/* A bound in the structured form: an integer, "oo" / "-oo", or torch's note. */
static void put_struct_bound(sg_buf *b, sg_bound v, const char *unavailable)
{
    if (unavailable)
        sg__json_put_str(b, unavailable);
    else if (v.inf)
        sg_buf_puts(b, v.inf > 0 ? "\"oo\"" : "\"-oo\"");
    else
        sg__json_put_int(b, v.v);
}

/* `lead` (up to the min's key), then the min and the max of a range and the object's end. */
static int put_struct_range(sg_buf *b, const char *lead, sg_bound min, const char *min_unavailable, sg_bound max,
                            const char *max_unavailable)
{
    sg_buf_puts(b, lead);
    put_struct_bound(b, min, min_unavailable);
    sg_buf_puts(b, ",\"max\":");
    put_struct_bound(b, max, max_unavailable);
    return sg_buf_putc(b, '}');
}

/* The structured-form leaf of one dim's spec. */
static int put_struct_leaf(sg_buf *b, const sg_input_dim *d, sg_error *err)
{
    char *expr = NULL;
    int rc;

    switch (d->kind) {
    case SG_SPEC_DIM:
        sg_buf_puts(b, "{\"name\":");
        sg__json_put_str(b, d->name);
        return put_struct_range(b, ",\"min\":", d->min, d->min_unavailable, d->max, d->max_unavailable);
    case SG_SPEC_DERIVED:
        if ((rc = sg_expr_print(&expr, d->derived, SG_SYNTAX_SYMPY, NULL, NULL, err)) != 0)
            return rc;
        sg_buf_puts(b, "{\"derived\":");
        sg__json_put_str(b, d->name);
        sg_buf_puts(b, ",\"expr\":");
        sg__json_put_str(b, expr);
        sg_free(expr);
        sg_buf_puts(b, ",\"root\":{\"name\":");
        sg__json_put_str(b, d->root_name);
        put_struct_range(b, ",\"min\":", d->root_min, NULL, d->root_max, NULL);
        return put_struct_range(b, ",\"min\":", d->min, d->min_unavailable, d->max, d->max_unavailable);
    case SG_SPEC_AUTO:
    case SG_SPEC_DYNAMIC:
        if (!d->has_bounds)
            return sg_buf_puts(b, d->kind == SG_SPEC_AUTO ? "\"AUTO\"" : "\"DYNAMIC\"");
        return put_struct_range(b,
                                d->kind == SG_SPEC_AUTO ? "{\"hint\":\"AUTO\",\"min\":"
                                                        : "{\"hint\":\"DYNAMIC\",\"min\":",
                                d->min, d->min_unavailable, d->max, d->max_unavailable);
    case SG_SPEC_STATIC:
        if (d->has_static_size)
            return sg__json_put_int(b, d->static_size);
        return sg_buf_puts(b, "\"STATIC\"");
    case SG_SPEC_UNSET:
        break;
    }
    return sg_buf_puts(b, "null");
}

/* A tensor's structured spec: {"0": leaf, ...} over its set dims, or null when none is set. */
static int put_struct_tensor(sg_buf *b, const sg_input_dim *dims, size_t rank, sg_error *err)
{
    size_t i;
    int k = 0, rc;
    for (i = 0; i < rank; i++) {
        if (dims[i].kind == SG_SPEC_UNSET)
            continue;
        sg_buf_printf(b, "%s\"%d\":", k++ ? "," : "{", dims[i].dim);
        if ((rc = put_struct_leaf(b, &dims[i], err)) != 0)
            return rc;
    }
    return sg_buf_puts(b, k ? "}" : "null");
}

static int put_struct_node(sg_buf *b, const sg_input_dim *in, size_t n, const size_t *members, size_t m,
                           size_t off, int depth, const cJSON *orig, sg_error *err);

/* A member of a list node: its index there, its position among the members, and where its
 * path goes on after the index. */
typedef struct listed {
    long index;
    size_t pos, noff;
} listed;

/* By index, then by position: the members of one index in their order. */
static int cmp_listed(const void *a, const void *b)
{
    const listed *x = a, *y = b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The elements of a spec node as written: a list, or a tuple's {"__tuple__": [...]}; NULL otherwise. */
static const cJSON *orig_items(const cJSON *orig)
{
    const cJSON *tu = cJSON_IsObject(orig) ? cJSON_GetObjectItemCaseSensitive(orig, "__tuple__") : NULL;
    return cJSON_IsArray(tu) ? tu : cJSON_IsArray(orig) ? orig : NULL;
}

/* An attribute component ".name" at `p` (a dataclass field, a namedtuple field): its name and
 * what follows; false when `p` does not start one. */
static bool attr_component(const char *p, const char **name, size_t *len, const char **next)
{
    size_t k = 1;
    if (p[0] != '.')
        return false;
    while (p[k] && p[k] != '.' && p[k] != '[')
        k++;
    if (k == 1)
        return false;
    *name = p + 1;
    *len = k - 1;
    *next = p + k;
    return true;
}

/* The fields of an object (dataclass) in order of first appearance, as the list torch takes
 * for it: the spec of a register_dataclass type follows its flattened fields. */
static int put_struct_fields(sg_buf *b, const sg_input_dim *in, size_t n, const size_t *members, size_t m,
                             size_t off, int depth, const cJSON *orig, sg_error *err)
{
    size_t i, j, *sub = sg__malloc((m + 1) * sizeof *sub);
    int rc = 0, k = 0;
    /* a namedtuple's spec was written as a tuple (its class): so is the copy, else torch's
     * structure check sees a list where the input is a namedtuple */
    bool tuple = orig_items(orig) && orig_items(orig) != orig;
    const cJSON *item = orig_items(orig) ? orig_items(orig)->child : NULL;
    if (!sub)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    sg_buf_puts(b, tuple ? "{\"__tuple__\":[" : "[");
    for (i = 0; i < m && rc == 0; i++) {
        const char *ni, *nx, *nj, *nxj;
        size_t li, lj, ns = 0;
        bool seen = false;
        if (!attr_component(in[members[i]].path + off, &ni, &li, &nx))
            continue;
        for (j = 0; j < i && !seen; j++)
            seen = attr_component(in[members[j]].path + off, &nj, &lj, &nxj) && lj == li && memcmp(nj, ni, li) == 0;
        if (seen)
            continue;
        for (j = i; j < m; j++)
            if (attr_component(in[members[j]].path + off, &nj, &lj, &nxj) && lj == li && memcmp(nj, ni, li) == 0)
                sub[ns++] = members[j];
        if (k++)
            sg_buf_putc(b, ',');
        rc = put_struct_node(b, in, n, sub, ns, (size_t)(nx - in[members[i]].path), depth + 1, item, err);
        if (item) /* the next field's: item k - 1 of the written list, walked, not looked up */
            item = item->next;
    }
    if (rc == 0)
        sg_buf_puts(b, tuple ? "]}" : "]");
    sg_free(sub);
    return rc;
}

/*
 * The structured spec of the tensors `members[0..m)` (indices of first dims in
 * `in`), whose paths all begin with the same `off` bytes: the tensor itself
 * when a path ends there, else the dict or list their next components make.
 */
static int put_struct_node(sg_buf *b, const sg_input_dim *in, size_t n, const size_t *members, size_t m,
                           size_t off, int depth, const cJSON *orig, sg_error *err)
{
    const cJSON *items = orig_items(orig), *child = NULL;
    bool tuple = items && items != orig; /* the spec wrote a tuple here: so does the copy */
    const char *key, *next;
    size_t keylen, i, j, *sub = NULL;
    long index, max_index = -1, want;
    int kind, rc = 0, k = 0;

    if (depth > SG_TRACE_MAX_JSON_DEPTH)
        return sg_error_set(err, SG_ELIMIT, "input paths nested too deeply");
    for (i = 0; i < m; i++) {
        if (in[members[i]].path[off] == '\0') {
            size_t rank = 1;
            while (members[i] + rank < n && strcmp(in[members[i] + rank].path, in[members[i]].path) == 0)
                rank++;
            return put_struct_tensor(b, in + members[i], rank, err);
        }
    }
    kind = sg_trace__path_component(in[members[0]].path + off, &key, &keylen, &index, &next);
    if (kind <= 0 && attr_component(in[members[0]].path + off, &key, &keylen, &next))
        return put_struct_fields(b, in, n, members, m, off, depth, orig, err);
    if (kind <= 0)
        return sg_buf_puts(b, "null");
    if (!(sub = sg__malloc(m * sizeof *sub)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (kind == 1) { /* a dict: its keys in order of first appearance */
        /* the spec wrote a list (or tuple) where the paths name keys: torch 2.6 names a registered
         * dataclass's fields as keys (['p']['a']), and its spec follows the flattened fields */
        bool as_list = items != NULL;
        sg_buf_puts(b, as_list ? (tuple ? "{\"__tuple__\":[" : "[") : "{");
        for (i = 0; i < m && rc == 0; i++) {
            const char *ki, *kn;
            size_t kl, ns = 0;
            long ix;
            bool seen = false;
            if (sg_trace__path_component(in[members[i]].path + off, &ki, &kl, &ix, &kn) != 1)
                continue;
            for (j = 0; j < i && !seen; j++) {
                const char *kj, *nj;
                size_t klj;
                long ixj;
                seen = sg_trace__path_component(in[members[j]].path + off, &kj, &klj, &ixj, &nj) == 1 && klj == kl
                       && memcmp(kj, ki, kl) == 0;
            }
            if (seen)
                continue;
            for (j = i; j < m; j++) {
                const char *kj, *nj;
                size_t klj;
                long ixj;
                if (sg_trace__path_component(in[members[j]].path + off, &kj, &klj, &ixj, &nj) == 1 && klj == kl
                    && memcmp(kj, ki, kl) == 0)
                    sub[ns++] = members[j];
            }
            if (k++)
                sg_buf_putc(b, ',');
            if (as_list) { /* item k - 1, walked */
                child = k == 1 ? items->child : child ? child->next : NULL;
            } else {
                char *ks = sg__strndup(ki, kl);
                if (!ks) {
                    rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                    break;
                }
                sg__json_put_str(b, ks);
                child = cJSON_IsObject(orig) ? cJSON_GetObjectItemCaseSensitive(orig, ks) : NULL;
                sg_free(ks);
                sg_buf_putc(b, ':');
            }
            rc = put_struct_node(b, in, n, sub, ns, (size_t)(kn - in[members[i]].path), depth + 1, child, err);
        }
        if (rc == 0)
            sg_buf_puts(b, as_list ? (tuple ? "]}" : "]") : "}");
    } else { /* a list: indices 0 .. max, null where no tensor is */
        /* the members by index (in their order within one index), read once: a list of m
         * tensors is written in O(m log m), not one pass over the members per index */
        listed *by = sg__malloc((m + 1) * sizeof *by);
        size_t at = 0;
        if (!by) {
            sg_free(sub);
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        }
        for (i = j = 0; i < m; i++)
            if (sg_trace__path_component(in[members[i]].path + off, &key, &keylen, &index, &next) == 2) {
                by[j].index = index;
                by[j].pos = i;
                by[j++].noff = (size_t)(next - in[members[i]].path);
                if (index > max_index)
                    max_index = index;
            }
        qsort(by, j, sizeof *by, cmp_listed);
        child = items ? items->child : NULL;
        sg_buf_puts(b, tuple ? "{\"__tuple__\":[" : "[");
        for (want = 0; want <= max_index && rc == 0 && !b->failed; want++) {
            size_t ns = 0, noff = 0;
            for (; at < j && by[at].index == want; at++) {
                sub[ns++] = members[by[at].pos];
                noff = by[at].noff; /* the last member's, as when they were scanned in order */
            }
            if (want)
                sg_buf_putc(b, ',');
            if (ns)
                rc = put_struct_node(b, in, n, sub, ns, noff, depth + 1, child, err);
            else
                sg_buf_puts(b, "null");
            if (child)
                child = child->next;
        }
        if (rc == 0)
            sg_buf_puts(b, tuple ? "]}" : "]");
        sg_free(by);
    }
    sg_free(sub);
    return rc;
}

/*
 * The structured dynamic_shapes of the per-dim specs `in`: a dict keyed by
 * every argument name of `inputs_json` (null for those without tensors), or,
 * when the argument names are unknown, by the first components of the paths.
 * Into `*out` in the arena of `t`.
 */
int sg_trace__rebuild_spec_json(sg_trace *t, const sg_input_dim *in, size_t n, const char **out, sg_error *err)
{
    sg__json_doc *idoc = NULL, *sdoc = NULL; /* read only, freed whole */
    const cJSON *ij = NULL, *sj = NULL; /* the inputs; the spec as given (its tuples stay tuples) */
    const cJSON *names = NULL, *it;
    size_t *firsts = NULL, nf = 0, *sub = NULL, i;
    sg_buf b;
    int rc = 0, k = 0;

    *out = NULL;
    sg_buf_init(&b, SG_TRACE_MAX_FILE);
    if (t->inputs_json
        && sg__json_doc_parse(&idoc, &ij, t->inputs_json, strlen(t->inputs_json), SG_TRACE_MAX_FILE,
                              SG_TRACE_MAX_JSON_DEPTH, "inputs", err) == SG_ENOMEM) {
        rc = SG_ENOMEM;
        goto cleanup;
    }
    if (t->dynamic_shapes_json
        && sg__json_doc_parse(&sdoc, &sj, t->dynamic_shapes_json, strlen(t->dynamic_shapes_json),
                              SG_TRACE_MAX_FILE, SG_TRACE_MAX_JSON_DEPTH, "dynamic_shapes", err) == SG_ENOMEM) {
        rc = SG_ENOMEM;
        goto cleanup;
    }
    names = sg__json_get(ij, "arg_names");
    if (!cJSON_IsArray(names))
        names = NULL;
    firsts = sg__malloc((n + 1) * sizeof *firsts);
    sub = sg__malloc((n + 1) * sizeof *sub);
    if (!firsts || !sub) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < n; i++)
        if (i == 0 || strcmp(in[i].path, in[i - 1].path) != 0)
            firsts[nf++] = i;
    if (!names) {
        rc = nf ? put_struct_node(&b, in, n, firsts, nf, 0, 0, sj, err) : sg_buf_puts(&b, "null");
    } else {
        sg_buf_putc(&b, '{');
        cJSON_ArrayForEach(it, names) {
            const char *name = sg__json_str(it);
            size_t ns = 0, off = 0;
            if (!name)
                continue;
            for (i = 0; i < nf; i++) {
                const char *key, *next;
                size_t keylen;
                long index;
                if (sg_trace__path_component(in[firsts[i]].path, &key, &keylen, &index, &next) == 1
                    && keylen == strlen(name) && memcmp(key, name, keylen) == 0) {
                    sub[ns++] = firsts[i];
                    off = (size_t)(next - in[firsts[i]].path);
                }
            }
            if (k++)
                sg_buf_putc(&b, ',');
            sg__json_put_str(&b, name);
            sg_buf_putc(&b, ':');
            if (ns)
                rc = put_struct_node(&b, in, n, sub, ns, off, 0, cJSON_IsObject(sj) ? sg__json_get(sj, name) : NULL,
                                     err);
            else
                sg_buf_puts(&b, "null");
            if (rc)
                break;
        }
        sg_buf_putc(&b, '}');
    }
    if (rc == 0 && b.failed)
        rc = b.failed == SG_ENOMEM ? sg_error_set(err, SG_ENOMEM, "out of memory")
                                   : sg_error_set(err, SG_ELIMIT, "the spec is too large");
    if (rc == 0 && !(*out = sg_trace__strndup(t, b.data, b.len)))
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
cleanup:
    sg__json_doc_free(idoc);
    sg__json_doc_free(sdoc);
    sg_free(firsts);
    sg_free(sub);
    sg_buf_dispose(&b);
    return rc;
}

/* ---- --spec files ---- */

/* The spec of one tensor (`rank` dims at `dims`): null, {"0": leaf}, or a list of leaves. */
static int spec_tensor(sg_trace__reader *R, sg_input_dim *dims, size_t rank, const cJSON *node, const char *path)
{
    const cJSON *seq = sg__json_seq(node), *it;
    size_t i = 0;
    sg_int k;
    int rc;

    if (sg__json_is_none(node))
        return 0;
    sg_trace__set_field(R, "%.160s", path);
    if (seq) {
        if ((size_t)cJSON_GetArraySize(seq) > rank)
            return sg_trace__fail(R, SG_EINVALID, "the tensor has %zu dim%s, the spec gives %d", rank, rank == 1 ? "" : "s",
                        cJSON_GetArraySize(seq));
        cJSON_ArrayForEach(it, seq) {
            sg_trace__set_field(R, "%.160s[%zu]", path, i);
            if ((rc = sg_trace__read_spec(R, &dims[i], it)) != 0)
                return rc;
            i++;
        }
        return 0;
    }
    if (!cJSON_IsObject(node))
        return sg_trace__fail(R, SG_EINVALID, "expected a dict of dims, a list or null for a tensor");
    cJSON_ArrayForEach(it, node) {
        sg_trace__set_field(R, "%.160s['%.20s']", path, it->string);
        if (!sg_trace__parse_nat(it->string, strlen(it->string), &k))
            return sg_trace__fail(R, SG_EINVALID, "expected a dim index as the key");
        if (k >= (sg_int)rank)
            return sg_trace__fail(R, SG_EINVALID, "the tensor has %zu dim%s, no dim %d", rank, rank == 1 ? "" : "s",
                        (int)(k > 99999 ? 99999 : k));
        if ((rc = sg_trace__read_spec(R, &dims[k], it)) != 0)
            return rc;
    }
    return 0;
}

/* The field component (".name", or "['name']" as torch 2.6 names a registered dataclass's fields)
 * at `p`: its whole text in `*comp`/`*len`, true; false for an index or the path's end. */
static bool field_component(const char *p, const char **comp, size_t *len)
{
    const char *name, *next, *key;
    size_t nl, keylen;
    long index;
    if (attr_component(p, &name, &nl, &next) || sg_trace__path_component(p, &key, &keylen, &index, &next) == 1) {
        *comp = p;
        *len = (size_t)(next - p);
        return true;
    }
    return false;
}

/* The `idx`-th distinct field below `prefix` (len bytes) among the inputs' paths, in input order (a
 * dataclass's fields, as its spec list gives them), appended to `path`; false when the inputs below
 * `prefix` are indexed ("[0]"), as a list's are. */
static bool field_child(const sg_input_dim *in, size_t n, sg_buf *path, size_t len, long idx)
{
    size_t i, j;
    long seen = 0;
    for (i = 0; i < n; i++) {
        const char *p = in[i].path, *c, *cj;
        size_t cl, lj;
        bool dup = false;
        if (strncmp(p, path->data, len) != 0 || !field_component(p + len, &c, &cl))
            continue;
        for (j = 0; j < i && !dup; j++)
            dup = strncmp(in[j].path, path->data, len) == 0 && field_component(in[j].path + len, &cj, &lj)
                  && lj == cl && memcmp(cj, c, cl) == 0;
        if (dup)
            continue;
        if (seen++ == idx) {
            sg_buf_printf(path, "%.*s", (int)cl, c);
            return true;
        }
    }
    return false;
}

/* The spec at pytree path `path` (a tensor's, or a container's) into `in`. */
static int spec_walk(sg_trace__reader *R, sg_input_dim *in, size_t n, const cJSON *node, sg_buf *path, int depth)
{
    const cJSON *seq, *it, *kids;
    size_t first, rank, len = path->len;
    int rc = 0;
    long i = 0;

    if (path->failed)
        return path->failed == SG_ENOMEM ? sg_trace__oom(R) : sg_trace__fail(R, SG_ELIMIT, "path too long");
    if (depth > SG_TRACE_MAX_JSON_DEPTH)
        return sg_trace__fail(R, SG_ELIMIT, "nested too deeply");
    if (sg_trace__find_tensor(in, n, path->data, len, &first, &rank))
        return spec_tensor(R, in + first, rank, node, path->data);
    if (sg__json_is_none(node))
        return 0;
    sg_trace__set_field(R, "%.160s", path->data);
    seq = sg__json_seq(node);
    if (!seq && !cJSON_IsObject(node))
        return sg_trace__fail(R, SG_EINVALID, "not a tensor input (a dict, a list or null expected here)");
    kids = seq ? seq : node;
    cJSON_ArrayForEach(it, kids) {
        path->len = len;
        path->data[len] = '\0';
        if (seq && !field_child(in, n, path, len, i))
            sg_buf_printf(path, "[%ld]", i);
        if (seq)
            i++;
        else
            sg_buf_printf(path, "['%s']", it->string);
        if (path->failed)
            return path->failed == SG_ENOMEM ? sg_trace__oom(R) : sg_trace__fail(R, SG_ELIMIT, "path too long");
        if (!sg_trace__path_known(in, n, path->data, path->len)) {
            if (sg__json_is_none(it))
                continue; /* null for a non-tensor argument */
            sg_trace__set_field(R, "%.160s", path->data);
            return sg_trace__fail(R, SG_EINVALID, "no tensor input at this path");
        }
        if ((rc = spec_walk(R, in, n, it, path, depth + 1)) != 0)
            return rc;
    }
    path->len = len;
    path->data[len] = '\0';
    return 0;
}

static int set_spec_json(sg_trace *t, const char *json, size_t len, const char *what, sg_error *err)
{
    sg_trace__reader L;
    sg__json_doc *sdoc = NULL, *idoc = NULL; /* read only, freed whole */
    const cJSON *sj = NULL, *ij = NULL;
    const cJSON *spec, *names = NULL, *it, *seq;
    sg_input_dim *in = NULL;
    sg_buf path;
    const char *js = NULL;
    bool flat = true;
    size_t i;
    int rc;

    memset(&L, 0, sizeof L);
    sg_buf_init(&path, 1 << 16);
    if (!t)
        return sg_error_set(err, SG_EINVALID, "no trace");
    if (!what)
        what = "spec";
    L.t = t;
    L.err = err;
    L.what = what;
    if ((rc = sg__json_doc_parse(&sdoc, &sj, json, len, SG_TRACE_MAX_FILE, SG_TRACE_MAX_JSON_DEPTH, what, err)) != 0)
        goto cleanup;
    if (t->inputs_json
        && (rc = sg__json_doc_parse(&idoc, &ij, t->inputs_json, strlen(t->inputs_json), SG_TRACE_MAX_FILE,
                                    SG_TRACE_MAX_JSON_DEPTH, "inputs", err)) != 0)
        goto cleanup;
    names = sg__json_get(ij, "arg_names");
    if (!cJSON_IsArray(names))
        names = NULL;
    spec = sj;
    /* {"dynamic_shapes": spec}, unless that is an argument's name */
    if (cJSON_IsObject(sj) && sg__json_get(sj, "dynamic_shapes")) {
        bool is_arg = false;
        cJSON_ArrayForEach(it, names)
            is_arg |= sg__json_str(it) && strcmp(sg__json_str(it), "dynamic_shapes") == 0;
        if (!is_arg) {
            spec = sg__json_get(sj, "dynamic_shapes");
            /* a case.json of a spec torch never built: no spec known */
            flat = !sg__json_is_none(spec);
        }
    }
    if (!(in = sg__malloc((t->ninputs + 1) * sizeof *in))) {
        rc = sg_trace__oom(&L);
        goto cleanup;
    }
    if (t->ninputs)
        memcpy(in, t->inputs, t->ninputs * sizeof *in);
    for (i = 0; i < t->ninputs; i++)
        sg_trace__clear_spec(&in[i]);

    seq = sg__json_seq(spec);
    sg_trace__set_field(&L, "(top level)");
    if (sg__json_is_none(spec)) {
        /* dynamic_shapes=None: every dim static (or, wrapped, unknown) */
    } else if (seq) {
        long k = 0;
        if (!names) {
            rc = sg_trace__fail(&L, SG_EINVALID, "a list spec needs the argument names, which the trace does not have");
            goto cleanup;
        }
        if (cJSON_GetArraySize(seq) > cJSON_GetArraySize(names)) {
            rc = sg_trace__fail(&L, SG_EINVALID, "%d entries for %d arguments", cJSON_GetArraySize(seq),
                      cJSON_GetArraySize(names));
            goto cleanup;
        }
        cJSON_ArrayForEach(it, seq) {
            const char *name = sg__json_str(cJSON_GetArrayItem(names, (int)k++));
            path.len = 0;
            sg_buf_printf(&path, "['%s']", name ? name : "?");
            if (path.failed)
                break;
            if (!sg_trace__path_known(in, t->ninputs, path.data, path.len)) {
                if (sg__json_is_none(it))
                    continue;
                sg_trace__set_field(&L, "[%ld] (%.60s)", k - 1, name ? name : "?");
                rc = sg_trace__fail(&L, SG_EINVALID, "not a tensor input (null expected)");
                goto cleanup;
            }
            if ((rc = spec_walk(&L, in, t->ninputs, it, &path, 1)) != 0)
                goto cleanup;
        }
    } else if (cJSON_IsObject(spec)) {
        /* torch rejects a dict whose keys are not argument names before it flattens */
        cJSON_ArrayForEach(it, spec) {
            const cJSON *nm;
            bool found = !names;
            cJSON_ArrayForEach(nm, names)
                found |= sg__json_str(nm) && strcmp(sg__json_str(nm), it->string) == 0;
            if (!found)
                flat = false;
        }
        if (flat) {
            cJSON_ArrayForEach(it, spec) {
                path.len = 0;
                sg_buf_printf(&path, "['%s']", it->string);
                if (path.failed)
                    break;
                if (!sg_trace__path_known(in, t->ninputs, path.data, path.len)) {
                    if (sg__json_is_none(it))
                        continue;
                    sg_trace__set_field(&L, "%.160s", path.data);
                    rc = sg_trace__fail(&L, SG_EINVALID, "not a tensor input (null expected)");
                    goto cleanup;
                }
                if ((rc = spec_walk(&L, in, t->ninputs, it, &path, 1)) != 0)
                    goto cleanup;
            }
        }
    } else {
        rc = sg_trace__fail(&L, SG_EINVALID, "expected a dict keyed by argument name, a list, or null");
        goto cleanup;
    }
    if (path.failed) {
        rc = path.failed == SG_ENOMEM ? sg_trace__oom(&L) : sg_trace__fail(&L, SG_ELIMIT, "path too long");
        goto cleanup;
    }
    for (i = 0; i < t->ninputs; i++)
        if (in[i].kind == SG_SPEC_DERIVED && (rc = sg_trace__derive_bounds(t, &in[i], err)) != 0)
            goto cleanup;
    if (!flat)
        for (i = 0; i < t->ninputs; i++)
            sg_trace__clear_spec(&in[i]);
    if ((rc = sg_trace__keep_json(&L, &js, spec)) != 0)
        goto cleanup;
    sg_trace__install_spec(t, in, flat, js);
cleanup:
    if (rc == SG_EUNSUPPORTED) { /* a derived expr torch would not accept either: a wrong leaf */
        rc = SG_EINVALID;
        if (err)
            err->code = rc;
    }
    if (rc)
        sg__error_one_line(err);
    sg_buf_dispose(&path);
    sg_free(in);
    sg__json_doc_free(sdoc);
    sg__json_doc_free(idoc);
    return rc;
}

void sg_trace__install_spec(sg_trace *t, const sg_input_dim *in, bool flat, const char *json)
{
    if (t->ninputs)
        memcpy(t->inputs, in, t->ninputs * sizeof *in);
    t->has_flat_spec = flat;
    t->spec_overridden = true;
    t->dynamic_shapes_json = json;
}

int sg_trace__set_spec_json(sg_trace *t, const char *json, size_t len, const char *what, sg_error *err)
{
    return set_spec_json(t, json, len, what, err);
}

int sg_trace_with_spec_json(sg_trace **out, const sg_trace *t, const char *json, size_t len, const char *what,
                            sg_error *err)
{
    sg_trace *c = NULL;
    int rc;

    SG_ENTRY_CHECK("sg_trace_with_spec_json", out, t, "no trace", err);
    if ((rc = sg_trace__clone(&c, t, err)) != 0)
        return rc;
    if ((rc = set_spec_json(c, json, len, what, err)) != 0) {
        sg_trace_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int sg_trace_with_spec_file(sg_trace **out, const sg_trace *t, const char *path, sg_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    SG_ENTRY_CHECK("sg_trace_with_spec_file", out, t && path, "no trace or no spec file", err);
    rc = sg__read_file(&text, &len, path, SG_TRACE_MAX_FILE, path, err);
    if (rc == 0)
        rc = sg_trace_with_spec_json(out, t, text, len, path, err);
    sg_free(text);
    if (rc)
        sg__error_one_line(err);
    return rc;
}

sg_bound sg_trace__dim_floor(const sg_trace *t, sg_bound lo)
{
    sg_bound zero = {0, 0}, two = {2, 0};
    if (t && t->sizes_from_min)
        return lo.inf || lo.v < 0 ? zero : lo;
    return lo.inf || lo.v < 2 ? two : lo;
}

sg_bound sg_trace__root_floor(const sg_trace *t, const sg_input_dim *d)
{
    sg_int a = 0, b = 0;
    if (sg_trace__derived_affine(d, &a, &b) && a == 1 && b < 0)
        return d->root_min;
    return sg_trace__dim_floor(t, d->root_min);
}
