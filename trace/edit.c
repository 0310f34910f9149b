/*
 * edit.c - structured copies of a trace and typed spec edits (trace.h):
 * sg_trace_clone() copies the per-dim tables and shares everything immutable
 * with the original (its arena, its frozen pool, through a reference);
 * sg_trace_edit() applies a list of sg_spec_edits to such a copy, all or
 * nothing, as one set: a range given for a Dim name redefines that Dim
 * everywhere, derived bounds are recomputed as torch does, and the structured
 * dynamic_shapes JSON is rebuilt from the per-dim specs. The text form of
 * `--dim` (dims.c) and the suggested fixes (analysis/fixes.c) both end here,
 * so no spec ever travels through text between library modules.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_impl.h"
#include "util/strmap.h"

/* ---- the copy ------------------------------------------------------------------------ */

/* `n` elements of `elem` bytes copied into a new array (NULL when n is 0); false when out of memory. */
static bool copy_array(void **out, const void *src, size_t n, size_t elem)
{
    *out = NULL;
    if (n == 0)
        return true;
    if (!(*out = sg__malloc(n * elem)))
        return false;
    memcpy(*out, src, n * elem);
    return true;
}

int sg_trace__clone(sg_trace **out, const sg_trace *t, sg_error *err)
{
    sg_trace *c;
    int rc;

    *out = NULL;
    if (!t)
        return sg_error_set(err, SG_EINVALID, "sg_trace_clone: no trace");
    if (!(c = sg__calloc(1, sizeof *c)))
        return sg_error_set(err, SG_ENOMEM, "out of memory copying a trace");
    atomic_init(&c->refs, 1);
    /* what the copy adds (names, derived expressions) goes into an overlay of the frozen pool */
    if ((rc = sg_pool_overlay_new(&c->pool, t->pool, err)) != 0) {
        sg_free(c);
        return rc;
    }
    c->origin = sg_trace__ref(t);
    c->name = t->name;
    c->torch_version = t->torch_version;
    c->strict = t->strict;
    c->has_shape_env = t->has_shape_env;
    c->has_flat_spec = t->has_flat_spec;
    c->spec_overridden = t->spec_overridden;
    c->sizes_from_min = t->sizes_from_min;
    c->dynamic_shapes_json = t->dynamic_shapes_json;
    c->inputs_json = t->inputs_json;
    c->torch_fixes_json = t->torch_fixes_json;
    c->torch_error = t->torch_error;
    c->torch_error_message = t->torch_error_message;
    if (!copy_array((void **)&c->symbols, t->symbols, t->nsymbols, sizeof *t->symbols)
        || !copy_array((void **)&c->guards, t->guards, t->nguards, sizeof *t->guards)
        || !copy_array((void **)&c->inputs, t->inputs, t->ninputs, sizeof *t->inputs)
        || !copy_array((void **)&c->sym_map, t->sym_map, t->nsym_map, sizeof *t->sym_map)) {
        sg_trace_free(c);
        return sg_error_set(err, SG_ENOMEM, "out of memory copying a trace");
    }
    c->nsymbols = c->csymbols = t->nsymbols;
    c->nguards = c->cguards = t->nguards;
    c->ninputs = c->cinputs = t->ninputs;
    c->nsym_map = t->nsym_map;
    *out = c;
    return 0;
}

void sg_trace__drop_guards(sg_trace *t, const bool *drop)
{
    size_t i, k = 0;
    for (i = 0; t && drop && i < t->nguards; i++)
        if (!drop[i])
            t->guards[k++] = t->guards[i];
    if (t && drop)
        t->nguards = k;
}

int sg_trace_clone(sg_trace **out, const sg_trace *t, sg_error *err)
{
    if (!out)
        return sg_error_set(err, SG_EINVALID, "sg_trace_clone: no output");
    return sg_trace__clone(out, t, err);
}

/* ---- building a list of edits ----------------------------------------------------------- */

int sg_spec_edits_new(sg_spec_edits **out, sg_error *err)
{
    if (!out)
        return sg_error_set(err, SG_EINVALID, "sg_spec_edits_new: no output");
    if (!(*out = sg__calloc(1, sizeof **out)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    return 0;
}

void sg_spec_edits__dispose(sg_spec_edits *e)
{
    size_t i;
    if (!e)
        return;
    for (i = 0; i < e->n; i++) {
        sg_free(e->v[i].text);
        sg_free(e->v[i].name);
        sg_free(e->v[i].root);
    }
    sg_free(e->v);
    memset(e, 0, sizeof *e);
}

void sg_spec_edits_free(sg_spec_edits *e)
{
    sg_spec_edits__dispose(e);
    sg_free(e);
}

size_t sg_spec_edits_count(const sg_spec_edits *e) { return e ? e->n : 0; }

sg_spec_edit *sg_spec_edits__push(sg_spec_edits *e, size_t input, sg_spec_kind kind)
{
    sg_spec_edit *x;
    if (!e || !(x = sg__push((void **)&e->v, &e->cap, &e->n, sizeof *e->v)))
        return NULL;
    x->input = input;
    x->kind = kind;
    x->max.inf = 1;
    return x;
}

/* Drop the last edit (its construction failed). */
static int pop_oom(sg_spec_edits *e, sg_error *err)
{
    sg_spec_edit *x = &e->v[--e->n];
    sg_free(x->text);
    sg_free(x->name);
    sg_free(x->root);
    return sg_error_set(err, SG_ENOMEM, "out of memory");
}

int sg_spec_edits__dim(sg_spec_edits *e, size_t input, const char *name, bool has_range, sg_bound min,
                       sg_bound max, sg_error *err)
{
    sg_spec_edit *x = sg_spec_edits__push(e, input, SG_SPEC_DIM);
    if (!x)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    x->has_range = has_range;
    x->min = min;
    x->max = max;
    if (!name || !(x->name = sg__strdup(name)))
        return name ? pop_oom(e, err) : (e->n--, sg_error_set(err, SG_EINVALID, "a Dim edit needs a name"));
    return 0;
}

int sg_spec_edits__range(sg_spec_edits *e, const char *name, sg_bound min, sg_bound max, sg_error *err)
{
    return sg_spec_edits__dim(e, SIZE_MAX, name, true, min, max, err);
}

int sg_spec_edits__derived(sg_spec_edits *e, size_t input, sg_int a, const char *root, sg_int b, sg_error *err)
{
    sg_spec_edit *x = sg_spec_edits__push(e, input, SG_SPEC_DERIVED);
    if (!x)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    x->a = a;
    x->b = b;
    if (!root || !(x->root = sg__strdup(root)))
        return root ? pop_oom(e, err) : (e->n--, sg_error_set(err, SG_EINVALID, "a derived edit needs a root"));
    return 0;
}

int sg_spec_edits__static(sg_spec_edits *e, size_t input, bool has_size, sg_int size, sg_error *err)
{
    sg_spec_edit *x = sg_spec_edits__push(e, input, SG_SPEC_STATIC);
    if (!x)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    x->has_size = has_size;
    x->size = size;
    return 0;
}

int sg_spec_edits__hint(sg_spec_edits *e, size_t input, sg_spec_kind kind, bool has_range, sg_bound min,
                        sg_bound max, sg_error *err)
{
    sg_spec_edit *x;
    if (kind != SG_SPEC_AUTO && kind != SG_SPEC_DYNAMIC)
        return sg_error_set(err, SG_EINVALID, "a hint edit is Dim.AUTO or Dim.DYNAMIC");
    if (!(x = sg_spec_edits__push(e, input, kind)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    x->has_range = has_range;
    x->min = min;
    x->max = max;
    return 0;
}

/* ---- the public, plain-typed builders ------------------------------------------------------ */

/* An int64 bound of the public API: SG_SPEC_UNBOUNDED is int_oo (as a max). */
static sg_bound bound64(int64_t v)
{
    sg_bound b = {0, 0};
    if (v == SG_SPEC_UNBOUNDED)
        b.inf = 1;
    else
        b.v = v;
    return b;
}

int sg_spec_edits_set_dim(sg_spec_edits *e, size_t input, const char *name, sg_error *err)
{
    sg_bound lo = {0, 0}, hi = {0, 1};
    return sg_spec_edits__dim(e, input, name, false, lo, hi, err);
}

int sg_spec_edits_set_dim_range(sg_spec_edits *e, size_t input, const char *name, int64_t min, int64_t max,
                                sg_error *err)
{
    return sg_spec_edits__dim(e, input, name, true, bound64(min), bound64(max), err);
}

int sg_spec_edits_set_derived(sg_spec_edits *e, size_t input, int64_t a, const char *root, int64_t b,
                              sg_error *err)
{
    return sg_spec_edits__derived(e, input, a, root, b, err);
}

int sg_spec_edits_set_static(sg_spec_edits *e, size_t input, bool has_size, int64_t size, sg_error *err)
{
    return sg_spec_edits__static(e, input, has_size, size, err);
}

int sg_spec_edits_set_hint(sg_spec_edits *e, size_t input, sg_spec_kind kind, sg_error *err)
{
    sg_bound lo = {0, -1}, hi = {0, 1};
    return sg_spec_edits__hint(e, input, kind, false, lo, hi, err);
}

int sg_spec_edits_set_range(sg_spec_edits *e, const char *name, int64_t min, int64_t max, sg_error *err)
{
    return sg_spec_edits__range(e, name, bound64(min), bound64(max), err);
}

/* ---- checking one edit ------------------------------------------------------------------ */

/* "16", "" (an infinite bound, as the --dim text leaves it out) */
static const char *bound_text(char buf[SG_INT_STRLEN], sg_bound b)
{
    if (b.inf)
        buf[0] = '\0';
    else
        sg_int_format(buf, b.v);
    return buf;
}

/* The edit in the text form of --dim (for messages about an edit that came without text). */
static void edit_text(char *buf, size_t cap, const sg_trace *t, const sg_spec_edit *x)
{
    char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN], a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    const char *src = x->input < t->ninputs ? t->inputs[x->input].source : "?";

    if (x->text) {
        snprintf(buf, cap, "%s", x->text);
        return;
    }
    if (x->input == SIZE_MAX) {
        snprintf(buf, cap, "%s:%s..%s", x->name, bound_text(lo, x->min), bound_text(hi, x->max));
        return;
    }
    switch (x->kind) {
    case SG_SPEC_DIM:
        if (x->has_range)
            snprintf(buf, cap, "%s=%s:%s..%s", src, x->name, bound_text(lo, x->min), bound_text(hi, x->max));
        else
            snprintf(buf, cap, "%s=%s", src, x->name);
        break;
    case SG_SPEC_DERIVED:
        sg_int_format(a, x->a);
        sg_int_format(b, x->b < 0 ? -x->b : x->b);
        if (x->a == 1 && x->b == 0)
            snprintf(buf, cap, "%s=%s", src, x->root);
        else
            snprintf(buf, cap, "%s=%s*%s%s%s", src, a, x->root, x->b < 0 ? "-" : "+", b);
        break;
    case SG_SPEC_STATIC:
        if (x->has_size)
            snprintf(buf, cap, "%s=%s", src, sg_int_format(a, x->size));
        else
            snprintf(buf, cap, "%s=STATIC", src);
        break;
    default:
        if (x->has_range)
            snprintf(buf, cap, "%s=%s:%s..%s", src, x->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC",
                     bound_text(lo, x->min), bound_text(hi, x->max));
        else
            snprintf(buf, cap, "%s=%s", src, x->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC");
        break;
    }
}

int sg_trace__edit_fail(sg_error *err, int code, const char *text, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sg_error_set(err, code, "dim override '%.80s%s': %s", text, strlen(text) > 80 ? "..." : "", msg);
    sg__error_one_line(err);
    return code;
}

int sg_trace__check_dim_name(sg_pool *pool, const char *text, const char *name, size_t len, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    int rc;

    if (!sg_trace__is_ident(name, len))
        return sg_trace__edit_fail(err, SG_EINVALID, text, "'%.*s' is not a name", (int)(len > 60 ? 60 : len), name);
    rc = sg_expr_parse(&e, pool, name, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc || sg_expr_kind(e) != SG_SYM)
        return sg_trace__edit_fail(err, SG_EINVALID, text, "'%.*s' cannot be a Dim name (it reads as %s)",
                                   (int)(len > 60 ? 60 : len), name, rc ? "something else" : "a constant or function");
    return 0;
}

/* The rules the --dim text grammar enforces, for an edit built without text (the text reader
 * checked them already, with its own messages). */
static int check_typed(sg_trace *c, const sg_spec_edit *x, const char *text, sg_error *err)
{
    int rc;
    bool range = x->kind == SG_SPEC_DIM || x->kind == SG_SPEC_AUTO || x->kind == SG_SPEC_DYNAMIC;

    if (x->input != SIZE_MAX && x->input >= c->ninputs)
        return sg_trace__edit_fail(err, SG_EINVALID, text, "no input dim %zu (the trace has %zu)", x->input,
                                   c->ninputs);
    if (x->kind == SG_SPEC_DIM && (rc = sg_trace__check_dim_name(c->pool, text, x->name, strlen(x->name), err)))
        return rc;
    if (x->kind == SG_SPEC_DERIVED) {
        if ((rc = sg_trace__check_dim_name(c->pool, text, x->root, strlen(x->root), err)))
            return rc;
        if (x->a < 1)
            return sg_trace__edit_fail(err, SG_EINVALID, text,
                                       "a derived dim must be A*NAME + B with integers A >= 1 and B, over one name");
    }
    if (x->kind == SG_SPEC_STATIC && x->has_size && x->size < 0)
        return sg_trace__edit_fail(err, SG_EINVALID, text, "a size cannot be negative");
    if (range && x->has_range && ((!x->min.inf && x->min.v < 0) || (!x->max.inf && x->max.v < 0)
                                  || x->max.inf < 0 || x->min.inf > 0 || (x->kind == SG_SPEC_DIM && x->min.inf)))
        return sg_trace__edit_fail(err, SG_EINVALID, text,
                                   x->kind == SG_SPEC_DIM ? "expected NAME:MIN..MAX (MIN, MAX optional)"
                                                          : "expected %s:MIN..MAX",
                                   x->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC");
    return 0;
}

static bool same_bounds(sg_bound a, sg_bound b) { return a.inf == b.inf && (a.inf || a.v == b.v); }

/* "2..100", "16..int_oo" */
static const char *range_text(char *buf, size_t cap, sg_bound lo, sg_bound hi)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    snprintf(buf, cap, "%s..%s", lo.inf ? "-int_oo" : sg_int_format(a, lo.v), hi.inf ? "int_oo" : sg_int_format(b, hi.v));
    return buf;
}

int sg_trace__edit_conflict(const sg_trace *t, const sg_spec_edits *e, size_t i, sg_error *err)
{
    const sg_spec_edit *x = &e->v[i];
    char ti[512], tj[512], r1[96], r2[96];
    size_t j;

    for (j = 0; j < i; j++) {
        const sg_spec_edit *y = &e->v[j];
        bool xr = x->kind == SG_SPEC_DIM && x->has_range, yr = y->kind == SG_SPEC_DIM && y->has_range;
        if (y->input == x->input && x->input != SIZE_MAX) {
            edit_text(ti, sizeof ti, t, x);
            edit_text(tj, sizeof tj, t, y);
            return sg_trace__edit_fail(err, SG_EINVALID, ti, "that dim is also set by '%.60s'", tj);
        }
        if (xr && yr && strcmp(x->name, y->name) == 0 && (!same_bounds(x->min, y->min) || !same_bounds(x->max, y->max))) {
            edit_text(ti, sizeof ti, t, x);
            return sg_trace__edit_fail(err, SG_EINVALID, ti, "Dim '%.40s' is given two ranges, %s and %s", x->name,
                                       range_text(r1, sizeof r1, y->min, y->max), range_text(r2, sizeof r2, x->min, x->max));
        }
    }
    return 0;
}

/*
 * One set of edits indexed once (a fix of 1,000 lines compared every pair of edits, and looked
 * each Dim name up in every edit and input): the first edit of each input and the first ranged
 * edit of each Dim name, filled as the edits are checked in order (edit_index_next), and the
 * first input naming a Dim, as a Dim or as a derived dim's root.
 */
typedef struct edit_index {
    sg_strmap ranged;    /* Dim name -> its first ranged edit */
    sg_strmap dim, root; /* name -> the first input of kind DIM so named, of kind DERIVED over it */
    size_t *by_input;    /* [ninputs] the first edit of each input, SIZE_MAX: none */
    size_t nin;
} edit_index;

static void edit_index_dispose(edit_index *k)
{
    sg_strmap_dispose(&k->ranged);
    sg_strmap_dispose(&k->dim);
    sg_strmap_dispose(&k->root);
    sg_free(k->by_input);
}

/* The slot of `key` in `m`, set to `i` when new; NULL when out of memory. */
static size_t *first_index(sg_strmap *m, const char *key, size_t i)
{
    size_t *slot = sg_strmap_slot(m, key);
    if (slot && *slot == SIZE_MAX)
        *slot = i;
    return slot;
}

/* `t`'s inputs indexed, no edit seen yet; 0 or SG_ENOMEM. */
static int edit_index_init(edit_index *k, const sg_trace *t, sg_error *err)
{
    size_t i;
    bool ok = true;
    memset(k, 0, sizeof *k);
    k->nin = t->ninputs;
    if (!(k->by_input = sg__malloc((k->nin + 1) * sizeof *k->by_input)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    for (i = 0; i <= k->nin; i++)
        k->by_input[i] = SIZE_MAX;
    for (i = 0; i < t->ninputs && ok; i++)
        if (t->inputs[i].kind == SG_SPEC_DIM && t->inputs[i].name)
            ok = first_index(&k->dim, t->inputs[i].name, i) != NULL;
        else if (t->inputs[i].kind == SG_SPEC_DERIVED && t->inputs[i].root_name)
            ok = first_index(&k->root, t->inputs[i].root_name, i) != NULL;
    return ok ? 0 : sg_error_set(err, SG_ENOMEM, "out of memory");
}

/* Edit i against edits 0 .. i-1 (all seen here before), as sg_trace__edit_conflict(i): up to the
 * first conflict every ranged name has one range, its first edit's, so that edit is the earliest
 * whose range edit i can contradict; only an edit that conflicts walks the earlier ones, for the
 * message the pairwise loop gives. */
static int edit_index_next(edit_index *k, const sg_trace *t, const sg_spec_edits *e, size_t i, sg_error *err)
{
    const sg_spec_edit *x = &e->v[i];
    size_t *slot;
    bool hit = false;
    if (x->input != SIZE_MAX)
        hit = x->input >= k->nin || k->by_input[x->input] != SIZE_MAX; /* (past the inputs: the full walk) */
    if (x->kind == SG_SPEC_DIM && x->has_range) {
        if (!(slot = first_index(&k->ranged, x->name, i)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        hit |= !same_bounds(e->v[*slot].min, x->min) || !same_bounds(e->v[*slot].max, x->max);
    }
    if (x->input < k->nin && k->by_input[x->input] == SIZE_MAX)
        k->by_input[x->input] = i;
    return hit ? sg_trace__edit_conflict(t, e, i, err) : 0;
}

/* The bounds of the Dim called `name`: an edit's range, else the trace's (original)
 * definition as a Dim or as a derived dim's root, else the defaults 0 .. int_oo. */
static void resolve_dim(const sg_trace *t, const sg_spec_edits *e, const edit_index *x, const char *name, sg_bound *lo,
                        sg_bound *hi)
{
    size_t i;
    if ((i = sg_strmap_get(&x->ranged, name)) != SIZE_MAX) {
        *lo = e->v[i].min;
        *hi = e->v[i].max;
    } else if ((i = sg_strmap_get(&x->dim, name)) != SIZE_MAX) {
        *lo = t->inputs[i].min;
        *hi = t->inputs[i].max;
    } else if ((i = sg_strmap_get(&x->root, name)) != SIZE_MAX) {
        *lo = t->inputs[i].root_min;
        *hi = t->inputs[i].root_max;
    } else {
        memset(lo, 0, sizeof *lo);
        memset(hi, 0, sizeof *hi);
        hi->inf = 1;
    }
}

/* The new spec fields of edit `x` in `c` (strings in c's arena, expressions in its pool). */
static int edit_spec(sg_trace *c, const sg_spec_edits *e, const edit_index *dx, const sg_spec_edit *x, sg_input_dim *s,
                     sg_error *err)
{
    const sg_expr *root, *ex;
    char *name = NULL;
    int rc;

    memset(s, 0, sizeof *s);
    sg_trace__clear_spec(s);
    s->kind = x->kind;
    switch (x->kind) {
    case SG_SPEC_DIM:
        s->has_bounds = true;
        if (!(s->name = sg_trace__strdup(c, x->name)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (x->has_range) {
            s->min = x->min;
            s->max = x->max;
        } else {
            resolve_dim(c, e, dx, x->name, &s->min, &s->max);
        }
        return 0;
    case SG_SPEC_DERIVED:
        if (x->a == 1 && x->b == 0) { /* just the name */
            s->kind = SG_SPEC_DIM;
            s->has_bounds = true;
            if (!(s->name = sg_trace__strdup(c, x->root)))
                return sg_error_set(err, SG_ENOMEM, "out of memory");
            resolve_dim(c, e, dx, x->root, &s->min, &s->max);
            return 0;
        }
        root = sg_expr_symbol(c->pool, x->root, strlen(x->root));
        ex = sg_expr_2(c->pool, SG_ADD, sg_expr_2(c->pool, SG_MUL, sg_expr_int(c->pool, x->a), root),
                       sg_expr_int(c->pool, x->b));
        if (!ex) {
            const sg_error *pe = sg_pool_error(c->pool);
            rc = pe ? pe->code : SG_ENOMEM;
            return sg_error_set(err, rc, "derived dim %.60s: %s", x->root, pe ? pe->msg : "out of memory");
        }
        if ((rc = sg_expr_print(&name, ex, SG_SYNTAX_SYMPY, NULL, NULL, err)) != 0)
            return rc;
        s->derived = ex;
        s->has_bounds = true;
        s->name = sg_trace__strdup(c, name);
        s->root_name = sg_trace__strdup(c, x->root);
        sg_free(name);
        if (!s->name || !s->root_name)
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        resolve_dim(c, e, dx, x->root, &s->root_min, &s->root_max);
        return 0;
    case SG_SPEC_STATIC:
        s->has_static_size = x->has_size;
        s->static_size = x->size;
        return 0;
    default: /* AUTO, DYNAMIC */
        s->has_bounds = x->has_range;
        if (x->has_range) {
            s->min = x->min;
            s->max = x->max;
        }
        return 0;
    }
}

/* Apply the edits to `c`, a fresh copy no one else sees yet. */
static int apply(sg_trace *c, const sg_spec_edits *e, sg_error *err)
{
    sg_input_dim *in = NULL;
    unsigned char *mark = NULL; /* per input: 1 set by an edit, 2 its root or name redefined */
    const char *js = NULL;
    char text[512];
    edit_index dx; /* (after the checks: every ranged name's first edit, the one resolve_dim reads) */
    size_t i, j;
    int rc;

    if ((rc = edit_index_init(&dx, c, err)) != 0)
        goto cleanup;
    for (i = 0; i < e->n && !rc; i++) {
        if (!e->v[i].checked) {
            edit_text(text, sizeof text, c, &e->v[i]);
            rc = check_typed(c, &e->v[i], text, err);
        }
        if (!rc)
            rc = edit_index_next(&dx, c, e, i, err);
    }
    if (rc)
        goto cleanup;
    if (!SG_CALLOC_ALL(SG_SLOT(in, c->ninputs + 1), SG_SLOT(mark, c->ninputs + 1))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (c->ninputs)
        memcpy(in, c->inputs, c->ninputs * sizeof *in);
    for (i = 0; i < e->n; i++) {
        const sg_spec_edit *x = &e->v[i];
        sg_input_dim s;
        if (x->input == SIZE_MAX)
            continue; /* a range only */
        if ((rc = edit_spec(c, e, &dx, x, &s, err)) != 0)
            goto cleanup;
        sg_trace__copy_spec(&in[x->input], &s);
        mark[x->input] = 1;
    }
    /* a range given for a name redefines that Dim everywhere */
    for (i = 0; i < e->n; i++) {
        const sg_spec_edit *x = &e->v[i];
        if (x->kind != SG_SPEC_DIM || !x->has_range)
            continue;
        for (j = 0; j < c->ninputs; j++) {
            sg_input_dim *d = &in[j];
            if (mark[j] == 1)
                continue;
            if (d->kind == SG_SPEC_DIM && d->name && strcmp(d->name, x->name) == 0) {
                d->min = x->min;
                d->max = x->max;
                d->min_unavailable = d->max_unavailable = NULL;
                mark[j] = 2;
            } else if (d->kind == SG_SPEC_DERIVED && d->root_name && strcmp(d->root_name, x->name) == 0) {
                d->root_min = x->min;
                d->root_max = x->max;
                mark[j] = 2;
            }
        }
    }
    for (j = 0; j < c->ninputs; j++)
        if (mark[j] && in[j].kind == SG_SPEC_DERIVED && (rc = sg_trace__derive_bounds(c, &in[j], err)) != 0)
            goto cleanup;
    if ((rc = sg_trace__rebuild_spec_json(c, in, c->ninputs, &js, err)) == 0)
        sg_trace__install_spec(c, in, true, js);
cleanup:
    edit_index_dispose(&dx);
    SG_FREE_ALL(in, mark);
    return rc;
}

/* ---- two copies alike ---------------------------------------------------------------- */

static bool same_str(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* The same expression, or two that print alike (a copy's derived dims live in its own overlay);
 * false when one cannot be printed. */
static bool same_expr(const sg_expr *a, const sg_expr *b)
{
    char *x = NULL, *y = NULL;
    bool same;
    if (a == b)
        return true;
    if (!a || !b)
        return false;
    same = sg_expr_print(&x, a, SG_SYNTAX_SYMPY, NULL, NULL, NULL) == 0 &&
           sg_expr_print(&y, b, SG_SYNTAX_SYMPY, NULL, NULL, NULL) == 0 && strcmp(x, y) == 0;
    sg_free(x);
    sg_free(y);
    return same;
}

static bool same_dim(const sg_input_dim *a, const sg_input_dim *b)
{
    return same_str(a->path, b->path) && a->dim == b->dim && same_str(a->source, b->source) && a->size == b->size &&
           a->kind == b->kind && same_str(a->name, b->name) && a->has_bounds == b->has_bounds &&
           same_bounds(a->min, b->min) && same_bounds(a->max, b->max) &&
           same_str(a->min_unavailable, b->min_unavailable) && same_str(a->max_unavailable, b->max_unavailable) &&
           same_expr(a->derived, b->derived) && same_str(a->root_name, b->root_name) &&
           same_bounds(a->root_min, b->root_min) && same_bounds(a->root_max, b->root_max) &&
           a->has_static_size == b->has_static_size && (!a->has_static_size || a->static_size == b->static_size) &&
           same_expr(a->value, b->value) && same_str(a->traced_source, b->traced_source);
}

static const sg_trace *first_origin(const sg_trace *t)
{
    while (t->origin)
        t = t->origin;
    return t;
}

bool sg_trace__same_content(const sg_trace *a, const sg_trace *b)
{
    size_t i;
    if (!a || !b || first_origin(a) != first_origin(b))
        return false;
    if (a->strict != b->strict || a->has_shape_env != b->has_shape_env || a->has_flat_spec != b->has_flat_spec ||
        a->spec_overridden != b->spec_overridden || a->sizes_from_min != b->sizes_from_min ||
        !same_str(a->torch_version, b->torch_version) || !same_str(a->torch_error, b->torch_error) ||
        !same_str(a->torch_error_message, b->torch_error_message) || !same_str(a->torch_fixes_json, b->torch_fixes_json) ||
        !same_str(a->dynamic_shapes_json, b->dynamic_shapes_json) || !same_str(a->inputs_json, b->inputs_json))
        return false;
    /* the tables a copy shares in substance: byte for byte (stricter than field by field) */
    if (a->nsymbols != b->nsymbols || a->nguards != b->nguards || a->nsym_map != b->nsym_map ||
        a->ninputs != b->ninputs ||
        (a->nsymbols && memcmp(a->symbols, b->symbols, a->nsymbols * sizeof *a->symbols) != 0) ||
        (a->nguards && memcmp(a->guards, b->guards, a->nguards * sizeof *a->guards) != 0) ||
        (a->nsym_map && memcmp(a->sym_map, b->sym_map, a->nsym_map * sizeof *a->sym_map) != 0))
        return false;
    for (i = 0; i < a->ninputs; i++)
        if (!same_dim(&a->inputs[i], &b->inputs[i]))
            return false;
    return true;
}

int sg_trace_edit(sg_trace **out, const sg_trace *t, const sg_spec_edits *e, sg_error *err)
{
    sg_trace *c = NULL;
    int rc;

    SG_ENTRY_CHECK("sg_trace_edit", out, t && e, "sg_trace_edit: no trace or no edits", err);
    if ((rc = sg_trace__clone(&c, t, err)) != 0)
        return rc;
    if (e->n && (rc = apply(c, e, err)) != 0) {
        sg_trace_free(c);
        return rc;
    }
    *out = c;
    return 0;
}
