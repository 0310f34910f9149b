/*
 * validate.c - the checks torch applies to a dynamic_shapes spec before tracing
 * (docs/check.md, "Spec validation"), with torch's wording:
 *   - one Dim name with two definitions;
 *   - a Dim whose min is not below its max (min == max too: torch's Dim()
 *     asserts max > min);
 *   - a derived Dim whose derived min is negative;
 *   - example sizes that differ for one Dim name, or that do not have the
 *     derived form, or that lie outside the Dim's range;
 *   - a named Dim whose example size is 0 or 1: torch specialises it;
 *   - a dict spec whose top-level keys are not the argument names;
 *   - a spec whose structure is not the inputs' (a dict for a list, a tuple of
 *     the wrong length, a plain tuple for a namedtuple), a tensor's spec list of
 *     another length than its rank (torch 2.7 on), a dict naming a dim beyond it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "torch/validate.h"
#include "trace/trace_impl.h"
#include "util/json.h"
#include "util/util.h"

enum { SPEC = 0, SPECIALIZED = 1 };

static int add(sg_spec_issues *r, const sg_input_dim *d, size_t index, int kind, const char *msg)
{
    sg_spec_issue *v;
    const char *name = d->kind == SG_SPEC_DIM || d->kind == SG_SPEC_DERIVED ? d->name : d->source;
    if (sg__grow((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v))
        return SG_ENOMEM;
    v = &r->v[r->n];
    memset(v, 0, sizeof *v);
    v->input = index;
    v->specialized = kind == SPECIALIZED;
    v->dim = sg__strndup(name ? name : "?", strlen(name ? name : "?"));
    v->message = sg__strndup(msg, strlen(msg));
    if (!v->dim || !v->message) {
        sg_free(v->dim);
        sg_free(v->message);
        return SG_ENOMEM;
    }
    r->n++;
    r->invalid |= kind == SPEC;
    return 0;
}

void sg_spec_issues_dispose(sg_spec_issues *r)
{
    size_t i;
    for (i = 0; r && i < r->n; i++) {
        sg_free(r->v[i].dim);
        sg_free(r->v[i].message);
    }
    if (r) {
        sg_free(r->v);
        memset(r, 0, sizeof *r);
    }
}

/* torch's repr of a Dim: Dim('d', min=0, max=10), min omitted when 2, max when int_oo. */
static void dim_repr(char *buf, size_t cap, const char *name, sg_bound lo, sg_bound hi)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    bool show_lo = !lo.inf && lo.v != 2, show_hi = !hi.inf;
    if (show_lo && show_hi)
        snprintf(buf, cap, "Dim('%s', min=%s, max=%s)", name, sg_int_format(a, lo.v), sg_int_format(b, hi.v));
    else if (show_lo)
        snprintf(buf, cap, "Dim('%s', min=%s)", name, sg_int_format(a, lo.v));
    else if (show_hi)
        snprintf(buf, cap, "Dim('%s', max=%s)", name, sg_int_format(b, hi.v));
    else
        snprintf(buf, cap, "Dim('%s')", name);
}

static bool same_bound(sg_bound a, sg_bound b) { return a.inf == b.inf && (a.inf || a.v == b.v); }

/* Python's repr of a list of names: ['x', 'y']. */
static void name_list(sg_buf *b, const cJSON *arr_or_obj, bool keys)
{
    const cJSON *it;
    bool first = true;
    sg_buf_putc(b, '[');
    cJSON_ArrayForEach(it, arr_or_obj) {
        const char *name = keys ? it->string : cJSON_GetStringValue(it);
        if (!name)
            continue;
        sg_buf_printf(b, "%s'%s'", first ? "" : ", ", name);
        first = false;
    }
    sg_buf_putc(b, ']');
}

/* A dict spec must be keyed by the argument names (torch's _check_dynamic_shapes). */
static int check_top_level(const sg_trace *t, const sg_trace_parsed *pj, sg_spec_issues *r)
{
    const cJSON *sj = pj->spec, *ij = pj->inputs;
    const cJSON *names, *k;
    sg_buf b;
    int rc = 0;
    bool bad = false;

    if (!sg_trace_dynamic_shapes_json(t) || !sg_trace_inputs_json(t))
        return 0;
    names = ij ? cJSON_GetObjectItemCaseSensitive(ij, "arg_names") : NULL;
    if (!cJSON_IsObject(sj) || cJSON_GetObjectItemCaseSensitive(sj, "__tuple__") || !cJSON_IsArray(names))
        goto cleanup;
    cJSON_ArrayForEach(k, sj) {
        const cJSON *n;
        bool found = false;
        cJSON_ArrayForEach(n, names)
            found |= cJSON_IsString(n) && strcmp(n->valuestring, k->string) == 0;
        bad |= !found;
    }
    if (!bad)
        goto cleanup;
    sg_buf_init(&b, 8192);
    sg_buf_puts(&b, "When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg names ");
    name_list(&b, names, false);
    sg_buf_puts(&b, " of `inputs`, but here they are ");
    name_list(&b, sj, true);
    sg_buf_puts(&b, ". Alternatively, you could also ignore arg names entirely and specify `dynamic_shapes` as a "
                    "list/tuple matching `inputs`. For more information about this error, see: "
                    "https://pytorch.org/docs/main/generated/exportdb/index.html#dynamic-shapes-validation");
    if (b.failed) {
        rc = SG_ENOMEM;
    } else {
        sg_input_dim whole;
        memset(&whole, 0, sizeof whole);
        whole.source = "dynamic_shapes";
        rc = add(r, &whole, SIZE_MAX, SPEC, b.data);
    }
    sg_buf_dispose(&b);
cleanup:
    return rc;
}

/*
 * torch's Dim() asserts max > min (a missing min is 0, a missing max int_oo):
 * a Dim pinned to one value (min == max) is refused like min > max; the spec
 * must say the size itself. False, with torch's message in `msg`, when refused.
 */
static bool dim_bounds_ok(char *msg, size_t cap, sg_bound lo, sg_bound hi)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    if (hi.inf || hi.v > (lo.inf ? 0 : lo.v))
        return true;
    snprintf(msg, cap, "Cannot create Dim with inconsistent min=%s, max=%s", lo.inf ? "None" : sg_int_format(a, lo.v),
             sg_int_format(b, hi.v));
    return false;
}

/* ---- the structure of the spec against the inputs' pytree (export/dynamic_shapes.py) ---- */

#define EXPORTDB " For more information about this error, see: " \
                 "https://pytorch.org/docs/main/generated/exportdb/index.html#dynamic-shapes-validation"

typedef struct walker {
    const sg_trace *t;
    const cJSON *flat;   /* inputs.flat: the leaves' paths (a namedtuple's show its fields) */
    bool lengths;        /* torch 2.7 and later: a tensor's spec list must have its rank */
    sg_buf msg;          /* the first mismatch, torch's words; empty while none */
} walker;

static const cJSON *items_of(const cJSON *spec)
{
    const cJSON *t = cJSON_IsObject(spec) ? cJSON_GetObjectItemCaseSensitive(spec, "__tuple__") : NULL;
    return t ? t : cJSON_IsArray(spec) ? spec : NULL;
}

/* The pytree node type of a spec value as torch prints it; NULL for a leaf (a Dim, a hint, an int). */
static const char *spec_type(const cJSON *spec)
{
    if (cJSON_IsArray(spec))
        return "<class 'list'>";
    if (cJSON_IsObject(spec) && cJSON_GetObjectItemCaseSensitive(spec, "__tuple__"))
        return "<class 'tuple'>";
    if (cJSON_IsObject(spec) && !cJSON_GetObjectItemCaseSensitive(spec, "name")
        && !cJSON_GetObjectItemCaseSensitive(spec, "hint") && !cJSON_GetObjectItemCaseSensitive(spec, "derived"))
        return "<class 'dict'>";
    return NULL;
}

/* torch's repr of a spec leaf inside a list: None, Dim('dx', min=0, max=16), Dim.AUTO, 4. */
static void leaf_repr(sg_buf *b, const cJSON *j)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name"), *hint = cJSON_GetObjectItemCaseSensitive(j, "hint");
    char num[SG_INT_STRLEN];
    sg_int v;
    if (!j || cJSON_IsNull(j)) {
        sg_buf_puts(b, "None");
    } else if (cJSON_IsString(j)) {
        sg_buf_printf(b, "Dim.%s", j->valuestring);
    } else if (sg__json_int(j, &v) && !cJSON_IsString(j)) {
        sg_buf_puts(b, sg_int_format(num, v));
    } else if (cJSON_IsString(name)) {
        const cJSON *lo = cJSON_GetObjectItemCaseSensitive(j, "min"), *hi = cJSON_GetObjectItemCaseSensitive(j, "max");
        char buf[320];
        sg_bound l = {0, 0}, h = {0, 1};
        if (sg__json_int(lo, &v) && !cJSON_IsString(lo))
            l.v = v;
        if (sg__json_int(hi, &v) && !cJSON_IsString(hi)) {
            h.inf = 0;
            h.v = v;
        }
        dim_repr(buf, sizeof buf, name->valuestring, l, h);
        sg_buf_puts(b, buf);
    } else if (cJSON_IsString(hint)) {
        sg_buf_printf(b, "Dim.%s", hint->valuestring);
    } else if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "derived"))) {
        sg_buf_puts(b, cJSON_GetObjectItemCaseSensitive(j, "derived")->valuestring);
    } else {
        sg_buf_puts(b, "?");
    }
}

/* Is the tuple input at `path` a namedtuple (its leaves in inputs.flat go through fields: "['p'].img")? */
static bool named_tuple(const walker *w, const char *path)
{
    const cJSON *it;
    size_t n = strlen(path);
    cJSON_ArrayForEach(it, w->flat) {
        const char *p = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "path"));
        if (p && strncmp(p, path, n) == 0 && p[n] == '.')
            return true;
    }
    return false;
}

static void mismatch(walker *w, const char *fmt, ...) SG_PRINTF(2, 3);
static void mismatch(walker *w, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    if (w->msg.len)
        return;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sg_buf_printf(&w->msg, "Detected mismatch between the structure of `inputs` and `dynamic_shapes`: %s" EXPORTDB, tmp);
}

/* A tensor's spec: a dict naming dims below the rank, a list (torch 2.7+) of the rank's length. */
static void tensor_spec(walker *w, const cJSON *shape, const cJSON *spec, const char *path)
{
    int rank = cJSON_GetArraySize(shape), k;
    const cJSON *it, *items = items_of(spec);
    sg_buf sz;
    if (w->msg.len)
        return;
    sg_buf_init(&sz, 4096);
    sg_buf_puts(&sz, "torch.Size([");
    for (k = 0; k < rank; k++) {
        char num[SG_INT_STRLEN];
        sg_int v = 0;
        sg__json_int(cJSON_GetArrayItem(shape, k), &v);
        sg_buf_printf(&sz, "%s%s", k ? ", " : "", sg_int_format(num, v));
    }
    sg_buf_puts(&sz, "])");
    if (items && w->lengths && cJSON_GetArraySize(items) != rank) {
        sg_buf_printf(&w->msg, "Expected dynamic shape spec %s", cJSON_IsArray(spec) ? "[" : "(");
        k = 0;
        cJSON_ArrayForEach(it, items) {
            if (k++)
                sg_buf_puts(&w->msg, ", ");
            leaf_repr(&w->msg, it);
        }
        sg_buf_printf(&w->msg, "%s specified at `dynamic_shapes%s` to have the same length as the actual tensor shape %s "
                      "(expected %d, but got %d instead)" EXPORTDB, cJSON_IsArray(spec) ? "]" : k == 1 ? ",)" : ")",
                      path, sz.data ? sz.data : "?", rank, cJSON_GetArraySize(items));
    } else if (!items && spec_type(spec)) {
        cJSON_ArrayForEach(it, spec) {
            char *end;
            long d = strtol(it->string, &end, 10);
            if (*end == '\0' && (d >= rank || d < -rank)) { /* torch 2.14 and 2.6: a bare IndexError */
                sg_buf_printf(&w->msg, "list assignment index out of range: `dynamic_shapes%s` names dim %ld of a "
                              "tensor of shape %s (%d dims)", path, d, sz.data ? sz.data : "?", rank);
                break;
            }
        }
    }
    sg_buf_dispose(&sz);
}

static void compare(walker *w, const cJSON *input, const cJSON *spec, const char *path, int depth)
{
    const cJSON *shape, *kids = NULL, *sitems, *sit, *it;
    const char *type = NULL, *stype;
    char sub[1024];
    int n, k;

    if (w->msg.len || !input || cJSON_IsNull(input) || !spec || cJSON_IsNull(spec) || depth > 64)
        return; /* None matches any subtree */
    if ((shape = cJSON_GetObjectItemCaseSensitive(input, "tensor")) != NULL) {
        tensor_spec(w, shape, spec, path);
        return;
    }
    if ((kids = cJSON_GetObjectItemCaseSensitive(input, "list")) != NULL)
        type = "<class 'list'>";
    else if ((kids = cJSON_GetObjectItemCaseSensitive(input, "tuple")) != NULL)
        type = named_tuple(w, path) ? "<function namedtuple>" : "<class 'tuple'>";
    else if ((kids = cJSON_GetObjectItemCaseSensitive(input, "dict")) != NULL)
        type = "<class 'dict'>";
    if (!type)
        return; /* a leaf (int, float, bool, str) or a type the recording does not show (a dataclass) */
    stype = spec_type(spec);
    if (!stype) {
        mismatch(w, "`inputs%s` is a %s, but `dynamic_shapes%s` is not", path, type, path);
        return;
    }
    /* a namedtuple's spec is built with its class, which the recording writes as a tuple:
     * torch could not map it (no dynamic_shapes_flat) exactly when it was a plain tuple */
    if (strcmp(type, stype) != 0
        && !(type[1] == 'f' && strcmp(stype, "<class 'tuple'>") == 0 && sg_trace_has_flat_spec(w->t))) {
        mismatch(w, "`inputs%s` is a %s, but `dynamic_shapes%s` is a %s", path, type, path, stype);
        return;
    }
    sitems = items_of(spec);
    n = cJSON_GetArraySize(kids);
    if (cJSON_GetArraySize(sitems ? sitems : spec) != n) {
        mismatch(w, "`inputs%s` has %d elements, but `dynamic_shapes%s` has %d elements", path, n, path,
                 cJSON_GetArraySize(sitems ? sitems : spec));
        return;
    }
    k = 0;
    sit = sitems ? sitems->child : NULL; /* item k of sitems, walked along (not looked up: O(k)) */
    cJSON_ArrayForEach(it, kids) {
        if (sitems) {
            snprintf(sub, sizeof sub, "%s[%d]", path, k);
            compare(w, it, sit, sub, depth + 1);
            sit = sit ? sit->next : NULL;
        } else {
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(spec, it->string);
            snprintf(sub, sizeof sub, "%s['%s']", path, it->string);
            if (!s && !w->msg.len) {
                mismatch(w, "`inputs%s` has keys other than `dynamic_shapes%s`", path, path);
                return;
            }
            compare(w, it, s, sub, depth + 1);
        }
        k++;
    }
}

/* The spec against the example inputs, as torch's _tree_map_with_path compares them. */
static int check_structure(const sg_trace *t, const sg_trace_parsed *pj, sg_spec_issues *r)
{
    const char *spec = sg_trace_dynamic_shapes_json(t), *inputs = sg_trace_inputs_json(t), *v = sg_trace_torch_version(t);
    const cJSON *sj = pj->spec, *ij = pj->inputs;
    const cJSON *names, *args, *kwargs, *items, *it;
    walker w;
    char sub[512];
    int rc = 0, nargs, k;

    if (!spec || !inputs)
        return 0;
    memset(&w, 0, sizeof w);
    w.t = t;
    /* torch 2.6 ignores a tensor's spec list longer than its rank; 2.14 raises */
    w.lengths = !(v && v[0] == '2' && v[1] == '.' && (v[2] >= '0' && v[2] <= '6') && (v[3] < '0' || v[3] > '9'));
    sg_buf_init(&w.msg, 8192);
    names = cJSON_GetObjectItemCaseSensitive(ij, "arg_names");
    args = cJSON_GetObjectItemCaseSensitive(ij, "args");
    kwargs = cJSON_GetObjectItemCaseSensitive(ij, "kwargs");
    w.flat = cJSON_GetObjectItemCaseSensitive(ij, "flat");
    if (!cJSON_IsArray(args) || cJSON_IsNull(sj) || !sj)
        goto cleanup;
    nargs = cJSON_GetArraySize(args);
    if ((items = items_of(sj)) != NULL) { /* positional: args then kwargs, in order */
        int n = nargs + (cJSON_IsObject(kwargs) ? cJSON_GetArraySize(kwargs) : 0);
        if (cJSON_GetArraySize(items) != n) {
            mismatch(&w, "`inputs` has %d elements, but `dynamic_shapes` has %d elements", n, cJSON_GetArraySize(items));
        } else {
            k = 0;
            cJSON_ArrayForEach(it, args) {
                snprintf(sub, sizeof sub, "[%d]", k);
                compare(&w, it, cJSON_GetArrayItem(items, k), sub, 0);
                k++;
            }
            if (cJSON_IsObject(kwargs))
                cJSON_ArrayForEach(it, kwargs) {
                    snprintf(sub, sizeof sub, "[%d]", k);
                    compare(&w, it, cJSON_GetArrayItem(items, k), sub, 0);
                    k++;
                }
        }
    } else if (spec_type(sj) && cJSON_IsArray(names)) { /* by argument name */
        const char *sig = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ij, "signature"));
        cJSON_ArrayForEach(it, sj) {
            const cJSON *in = NULL, *nm;
            char star[512];
            snprintf(star, sizeof star, "*%.500s", it->string);
            if (sig && strstr(sig, star))
                continue; /* *args / **kwargs: the recording has no node for the tuple or dict they make */
            k = 0;
            cJSON_ArrayForEach(nm, names) {
                if (cJSON_IsString(nm) && strcmp(nm->valuestring, it->string) == 0 && k < nargs)
                    in = cJSON_GetArrayItem(args, k);
                k++;
            }
            if (!in && cJSON_IsObject(kwargs))
                in = cJSON_GetObjectItemCaseSensitive(kwargs, it->string);
            snprintf(sub, sizeof sub, "['%.400s']", it->string);
            compare(&w, in, it, sub, 0);
        }
    }
    if (w.msg.failed) {
        rc = SG_ENOMEM;
    } else if (w.msg.len) {
        sg_input_dim whole;
        memset(&whole, 0, sizeof whole);
        whole.source = "dynamic_shapes";
        rc = add(r, &whole, SIZE_MAX, SPEC, w.msg.data);
    }
cleanup:
    sg_buf_dispose(&w.msg);
    return rc;
}

int sg_spec__first_dims(sg_strmap *m, const sg_input_dim *in, size_t n)
{
    size_t i, *at;
    for (i = 0; i < n; i++) {
        if (in[i].kind != SG_SPEC_DIM || !in[i].name)
            continue;
        if (!(at = sg_strmap_slot(m, in[i].name)))
            return SG_ENOMEM;
        if (*at == SIZE_MAX)
            *at = i;
    }
    return 0;
}

/* The per-dim rules of sg_spec_validate (bounds, one name's definitions and examples, derived
 * forms), into `r`; first: each Dim name's first use (sg_spec__first_dims); vals[ns]: zeroed
 * scratch symbol values (left zeroed). 0, or SG_ENOMEM. */
static int check_dims(const sg_trace *t, sg_pool *pool, const sg_input_dim *in, size_t n, const sg_strmap *first,
                      sg_int *vals, size_t ns, sg_spec_issues *r)
{
    size_t i, j;
    char msg[1024], r1[256], r2[256], a[SG_INT_STRLEN], b[SG_INT_STRLEN], c[SG_INT_STRLEN];
    int rc = 0;

    for (i = 0; i < n && !rc; i++) {
        const sg_input_dim *d = &in[i];
        if ((d->kind == SG_SPEC_DIM && !dim_bounds_ok(msg, sizeof msg, d->min, d->max))
            || (d->kind == SG_SPEC_DERIVED && !dim_bounds_ok(msg, sizeof msg, d->root_min, d->root_max))) {
            rc = add(r, d, i, SPEC, msg);
            continue;
        }
        if (d->kind == SG_SPEC_DIM) { /* the first earlier use of the name with other bounds */
            j = sg_strmap_get(first, d->name);
            if (j < i && (!same_bound(in[j].min, d->min) || !same_bound(in[j].max, d->max))) {
                dim_repr(r1, sizeof r1, d->name, in[j].min, in[j].max);
                dim_repr(r2, sizeof r2, d->name, d->min, d->max);
                snprintf(msg, sizeof msg, "Found different definitions %s and %s for the same symbolic dimension %s!", r1,
                         r2, r2);
                rc = add(r, d, i, SPEC, msg);
                continue;
            }
            if (j < i && in[j].size != d->size) {
                snprintf(msg, sizeof msg, "%s = %s is not equal to %s = %s", d->source, sg_int_format(a, d->size),
                         in[j].source, sg_int_format(b, in[j].size));
                rc = add(r, d, i, SPEC, msg);
                continue;
            }
        }
        if (d->kind == SG_SPEC_DERIVED && d->derived) {
            /* derived min = f(root min) must be >= 0 */
            const sg_expr *root = sg_expr_symbol(pool, d->root_name, strlen(d->root_name));
            sg_value v;
            sg_error e2 = SG_ERROR_INIT;
            if (!root || sg_expr_symbol_index(root) >= ns)
                return SG_ENOMEM; /* (a symbol made after vals was sized: only when out of memory) */
            vals[sg_expr_symbol_index(root)] = d->root_min.inf ? 0 : d->root_min.v;
            if (!d->root_min.inf && sg_expr_eval(&v, pool, d->derived, vals, ns, &e2) == 0 && v.kind == SG_VAL_INT &&
                v.num < 0) {
                snprintf(msg, sizeof msg,
                         "Expected derived min value of %s to be >= 0. Please specify an appropriate min value for %s "
                         "(currently %s).", d->name, d->root_name, sg_int_format(a, d->root_min.v));
                vals[sg_expr_symbol_index(root)] = 0;
                rc = add(r, d, i, SPEC, msg);
                continue;
            }
            /* the example must have the derived form, given the root's example */
            j = sg_strmap_get(first, d->root_name);
            if (j < n) {
                vals[sg_expr_symbol_index(root)] = in[j].size;
                if (sg_expr_eval(&v, pool, d->derived, vals, ns, &e2) == 0 && v.kind == SG_VAL_INT && v.num != d->size) {
                    snprintf(msg, sizeof msg, "Expected input %s to be equal to %s, where %s = %s, but got %s", d->source,
                             d->name, d->root_name, sg_int_format(a, in[j].size), sg_int_format(b, d->size));
                    vals[sg_expr_symbol_index(root)] = 0;
                    rc = add(r, d, i, SPEC, msg);
                    continue;
                }
            }
            vals[sg_expr_symbol_index(root)] = 0;
        }
        if (d->kind == SG_SPEC_DIM && ((!d->min.inf && d->size < d->min.v) || (!d->max.inf && d->size > d->max.v))) {
            /* torch prints the symbol's range: the Dim's intersected with sizes from 2 */
            sg_bound lo = sg_trace__dim_floor(t, d->min);
            snprintf(msg, sizeof msg, "%s not in range [%s, %s]", sg_int_format(a, d->size),
                     lo.inf ? "-int_oo" : sg_int_format(b, lo.v), d->max.inf ? "int_oo" : sg_int_format(c, d->max.v));
            rc = add(r, d, i, SPEC, msg);
            continue;
        }
    }
    return rc;
}

int sg_spec_validate(const sg_trace *t, sg_pool *pool, sg_spec_issues *r, sg_error *err)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    char msg[1024], a[SG_INT_STRLEN], b[SG_INT_STRLEN], c[SG_INT_STRLEN];
    const sg_trace_parsed *pj = sg_trace__parsed(t);
    int rc = pj ? check_top_level(t, pj, r) : sg_error_set(err, SG_ENOMEM, "out of memory validating the spec");

    if (!rc && !r->n)
        rc = check_structure(t, pj, r);
    sg_trace__parsed_release(pj);

    for (i = 0; i < n && !rc; i++) /* the derived dims' roots, made before vals is sized */
        if (in[i].kind == SG_SPEC_DERIVED && in[i].derived && !sg_expr_symbol(pool, in[i].root_name, strlen(in[i].root_name)))
            rc = SG_ENOMEM;
    if (!rc) {
        sg_strmap first = SG_STRMAP_INIT;
        size_t ns = sg_pool_nsymbols(pool);
        sg_int *vals = sg__calloc(ns + 1, sizeof *vals);
        rc = !vals ? SG_ENOMEM : sg_spec__first_dims(&first, in, n);
        if (!rc)
            rc = check_dims(t, pool, in, n, &first, vals, ns, r);
        sg_strmap_dispose(&first);
        sg_free(vals);
    }
    if (rc)
        return sg_error_set(err, SG_ENOMEM, "out of memory validating the spec");
    if (r->n)
        return 0;
    /*
     * torch turns a named dim with example size 0 or 1 into a constant, and a
     * derived dim whose root's example is 0 or 1 (TORCH-SEMANTICS.md 2.2). A
     * trace shows what torch did with the spec it traced; a spec edited after
     * tracing (a fix, --dim) is what torch would trace next, so the rule
     * applies to it too.
     */
    for (i = 0; i < n && !rc; i++) {
        const sg_input_dim *d = &in[i];
        sg_int da, db, rex = 2;
        if (sg_trace_has_shape_env(t) && !sg_trace_spec_overridden(t))
            break;
        if (d->kind == SG_SPEC_DYNAMIC && (d->size == 0 || d->size == 1) && !sg_trace_has_shape_env(t)) {
            /* torch 2.14's make_constraints; 2.6 exports the constant without a word, the claim is false all the same */
            snprintf(msg, sizeof msg,
                     "Received user-specified dim hint Dim.DYNAMIC(min=%s, max=%s), but export 0/1 specialized due to "
                     "hint of %s for dimension inputs%s.shape[%d].",
                     !d->has_bounds || d->min.inf ? "None" : sg_int_format(a, d->min.v),
                     !d->has_bounds || d->max.inf ? "None" : sg_int_format(b, d->max.v), sg_int_format(c, d->size), d->path, d->dim);
            rc = add(r, d, i, SPECIALIZED, msg);
            continue;
        }
        if (d->kind == SG_SPEC_DIM)
            rex = d->size;
        else if (d->kind == SG_SPEC_DERIVED && sg_trace__derived_affine(d, &da, &db) && da > 0
                 && (d->size - db) % da == 0)
            rex = (d->size - db) / da;
        if (rex == 0 || rex == 1) {
            snprintf(msg, sizeof msg,
                     "You marked %s as dynamic but your code specialized it to be a constant (%s). If you're using "
                     "mark_dynamic, either remove it or use maybe_mark_dynamic. If you're using Dim.DYNAMIC, replace it "
                     "with either Dim.STATIC or Dim.AUTO.", d->name, sg_int_format(a, d->size));
            rc = add(r, d, i, SPECIALIZED, msg);
        }
    }
    return rc ? sg_error_set(err, SG_ENOMEM, "out of memory validating the spec") : 0;
}
