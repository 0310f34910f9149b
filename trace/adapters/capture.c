/*
 * capture.c - the capture-folder adapter: a folder holding guards.json (torch's
 * ShapeEnv dumps) and case.json (inputs and the dynamic_shapes spec), as in
 * tests/corpus/cases/NAME/, read into an sg_trace. docs/trace-format.md
 * describes the mapping.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/trace_impl.h"
#include "util/json.h"

/* ---- the capture-folder adapter ------------------------------------------------------ */

/* The state of one folder load. */
typedef struct dirload {
    sg_trace__reader r; /* the trace, the error, the file and field being read */
    char gwhat[128];    /* "NAME/guards.json" */
    char cwhat[128];    /* "NAME/case.json" */
    int se_index;       /* index of the main ShapeEnv */
} dirload;

/* A JSON member that must pass `is` (cJSON_IsObject, cJSON_IsArray), or be absent / null
 * (`*out` NULL); `what` names the expected type in the error. */
static int get_typed(dirload *L, const cJSON **out, const cJSON *parent, const char *key,
                     cJSON_bool (*is)(const cJSON *), const char *what)
{
    return sg_trace__get_member(&L->r, out, parent, key, is, what, false);
}

static int get_object(dirload *L, const cJSON **out, const cJSON *parent, const char *key)
{
    return get_typed(L, out, parent, key, cJSON_IsObject, "an object");
}

static int get_array(dirload *L, const cJSON **out, const cJSON *parent, const char *key)
{
    return get_typed(L, out, parent, key, cJSON_IsArray, "an array");
}

/* An optional string member copied into the arena (`*out` NULL when absent or null). */
static int get_string(dirload *L, const char **out, const cJSON *parent, const char *key)
{
    const cJSON *j;
    int rc;
    *out = NULL;
    if ((rc = get_typed(L, &j, parent, key, cJSON_IsString, "a string")) != 0 || !j)
        return rc;
    if (!(*out = sg_trace__strdup(L->r.t, j->valuestring)))
        return sg_trace__oom(&L->r);
    return 0;
}

/* The symbol named by a JSON key or string, with its info record. */
static int symbol_of(dirload *L, sg_symbol_info **si, const char *name)
{
    const sg_expr *sym;
    int rc;

    *si = NULL;
    if (!name)
        return sg_trace__fail(&L->r, SG_EINVALID, "expected a symbol name");
    rc = sg_trace__symbol_named(&sym, L->r.t, name, L->r.what, L->r.field, L->r.err);
    if (rc)
        return rc;
    if (!(*si = sg_trace__symbol(L->r.t, sym, NULL)))
        return sg_trace__oom(&L->r);
    return 0;
}

/* One entry `it` of a per-symbol table, for symbol record `si`; `arg`: the table's own. */
typedef int (*symbol_entry)(dirload *L, sg_symbol_info *si, const cJSON *it, const void *arg);

/*
 * Table `key` of shape env `se` ({symbol: value}; absent or null: nothing): for each entry, the
 * current field names it (shape_envs[N].key['name']), its symbol is looked up (or added) and
 * `entry` reads the value. Returns 0 or the first error.
 */
static int load_symbol_table(dirload *L, const cJSON *se, const char *key, symbol_entry entry, const void *arg)
{
    const cJSON *tab, *it;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].%s", L->se_index, key);
    if ((rc = get_object(L, &tab, se, key)) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        sg_trace__set_field(&L->r, "shape_envs[%d].%s['%.40s']", L->se_index, key, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0 || (rc = entry(L, si, it, arg)) != 0)
            return rc;
    }
    return 0;
}

/* var_to_range: {symbol: [lo, hi]}. */
static int range_entry(dirload *L, sg_symbol_info *si, const cJSON *it, const void *arg)
{
    sg_bound lo, hi;
    int rc;
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
        return sg_trace__fail(&L->r, SG_EINVALID, "expected [lo, hi]");
    if ((rc = sg_trace__read_bound(&L->r, &lo, cJSON_GetArrayItem(it, 0), NULL)) != 0
        || (rc = sg_trace__read_bound(&L->r, &hi, cJSON_GetArrayItem(it, 1), NULL)) != 0)
        return rc > 0 ? sg_trace__fail(&L->r, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"") : rc;
    si->lo = lo;
    si->hi = hi;
    return 0;
}

/* var_to_sources: {symbol: [source, ...]}. */
static int sources_entry(dirload *L, sg_symbol_info *si, const cJSON *it, const void *arg)
{
    const cJSON *s;
    const char **srcs;
    size_t n = 0;
    if (!cJSON_IsArray(it))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected an array of source names");
    srcs = sg_trace__alloc(L->r.t, ((size_t)cJSON_GetArraySize(it) + 1) * sizeof *srcs);
    if (!srcs)
        return sg_trace__oom(&L->r);
    cJSON_ArrayForEach(s, it) {
        if (!cJSON_IsString(s))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected an array of source names");
        if (!(srcs[n++] = sg_trace__strdup(L->r.t, s->valuestring)))
            return sg_trace__oom(&L->r);
    }
    si->sources = srcs;
    si->nsources = n;
    return 0;
}

/* A hint table {symbol: int}; `arg` (a bool) marks its symbols data-dependent. */
static int hint_entry(dirload *L, sg_symbol_info *si, const cJSON *it, const void *arg)
{
    sg_int v;
    if (!sg__json_int(it, &v))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected an integer hint");
    si->has_hint = true;
    si->hint = v;
    if (*(const bool *)arg)
        si->unbacked = true;
    return 0;
}

/* replacements: {symbol: {"expr": text, "tree": ...}} (or {symbol: text}). */
static int replacement_entry(dirload *L, sg_symbol_info *si, const cJSON *it, const void *arg)
{
    const sg_expr *e, *sym = si->sym;
    const char *text = sg__json_str(cJSON_IsObject(it) ? sg__json_get(it, "expr") : it);
    int rc;
    if (!text)
        return sg_trace__fail(&L->r, SG_EINVALID, "expected {\"expr\": text}");
    sg_trace__set_field(&L->r, "shape_envs[%d].replacements['%.40s'].expr", L->se_index, it->string);
    if ((rc = sg_trace__parse(&e, L->r.t, text, false, L->r.what, L->r.field, L->r.err)) != 0)
        return rc;
    if (sg_expr_sort(e) == SG_SORT_BOOL)
        return sg_trace__fail(&L->r, SG_EINVALID, "'%.60s' is not a number", text);
    /* The records may have moved while parsing added symbols: look it up again. */
    if (!(si = sg_trace__symbol(L->r.t, sym, NULL)))
        return sg_trace__oom(&L->r);
    si->replacement = e;
    return 0;
}

/* A list of symbol names; sets the flag at `flag_off` in each record. */
static int load_symbol_list(dirload *L, const cJSON *se, const char *key, size_t flag_off)
{
    const cJSON *arr, *it;
    int rc, i = 0;

    sg_trace__set_field(&L->r, "shape_envs[%d].%s", L->se_index, key);
    if ((rc = get_array(L, &arr, se, key)) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        sg_symbol_info *si;
        sg_trace__set_field(&L->r, "shape_envs[%d].%s[%d]", L->se_index, key, i++);
        if (!cJSON_IsString(it))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected a symbol name");
        if ((rc = symbol_of(L, &si, it->valuestring)) != 0)
            return rc;
        *(bool *)((char *)si + flag_off) = true;
    }
    return 0;
}

/* The boolean "expr" of guard object `it` (the current field names it), parsed and
 * added to the trace with its origin. */
static int add_guard(dirload *L, const cJSON *it, sg_guard_origin origin, sg_guard **out)
{
    const char *text;
    const sg_expr *e;
    int rc;
    if ((rc = get_string(L, &text, it, "expr")) != 0)
        return rc;
    if (!text)
        return sg_trace__fail(&L->r, SG_EINVALID, "missing");
    if ((rc = sg_trace__parse(&e, L->r.t, text, true, L->r.what, L->r.field, L->r.err)) != 0)
        return rc;
    if (!(*out = sg_trace__add_guard(L->r.t)))
        return sg_trace__oom(&L->r);
    (*out)->expr = e;
    (*out)->origin = origin;
    (*out)->text = text;
    return 0;
}

/* guards[]: {expr, user_loc, framework_loc, sloc, ...}. */
static int load_guards(dirload *L, const cJSON *se)
{
    const cJSON *arr, *it;
    int rc, i = 0;

    sg_trace__set_field(&L->r, "shape_envs[%d].guards", L->se_index);
    if ((rc = get_array(L, &arr, se, "guards")) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        const char *uloc, *floc, *sloc;
        sg_guard *g;
        sg_trace__set_field(&L->r, "shape_envs[%d].guards[%d]", L->se_index, i);
        if (!cJSON_IsObject(it))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected an object");
        sg_trace__set_field(&L->r, "shape_envs[%d].guards[%d].user_loc", L->se_index, i);
        if ((rc = get_string(L, &uloc, it, "user_loc")) != 0)
            return rc;
        sg_trace__set_field(&L->r, "shape_envs[%d].guards[%d].framework_loc", L->se_index, i);
        if ((rc = get_string(L, &floc, it, "framework_loc")) != 0)
            return rc;
        sg_trace__set_field(&L->r, "shape_envs[%d].guards[%d].sloc", L->se_index, i);
        if ((rc = get_string(L, &sloc, it, "sloc")) != 0)
            return rc;
        sg_trace__set_field(&L->r, "shape_envs[%d].guards[%d].expr", L->se_index, i);
        if ((rc = add_guard(L, it, SG_GUARD_SHAPE, &g)) != 0)
            return rc;
        g->user_loc = uloc;
        g->framework_loc = floc;
        g->sloc = sloc;
        i++;
    }
    return 0;
}

/* deferred_runtime_asserts: {symbol or "null": [{expr, msg}, ...]}. */
static int load_asserts(dirload *L, const cJSON *se)
{
    const cJSON *tab, *list, *it;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].deferred_runtime_asserts", L->se_index);
    if ((rc = get_object(L, &tab, se, "deferred_runtime_asserts")) != 0)
        return rc;
    cJSON_ArrayForEach(list, tab) {
        int i = 0;
        sg_trace__set_field(&L->r, "shape_envs[%d].deferred_runtime_asserts['%.40s']", L->se_index, list->string);
        if (!cJSON_IsArray(list))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected an array");
        cJSON_ArrayForEach(it, list) {
            const char *msg;
            sg_guard *g;
            sg_trace__set_field(&L->r, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d]", L->se_index,
                      list->string, i);
            if (!cJSON_IsObject(it))
                return sg_trace__fail(&L->r, SG_EINVALID, "expected an object");
            sg_trace__set_field(&L->r, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d].msg", L->se_index,
                      list->string, i);
            if ((rc = get_string(L, &msg, it, "msg")) != 0)
                return rc;
            sg_trace__set_field(&L->r, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d].expr", L->se_index,
                      list->string, i);
            if ((rc = add_guard(L, it, SG_GUARD_RUNTIME_ASSERT, &g)) != 0)
                return rc;
            g->msg = msg;
            i++;
        }
    }
    return 0;
}

/* Everything of the main ShapeEnv except the input dims' values. */
static int load_shape_env(dirload *L, const cJSON *se)
{
    const cJSON *fb;
    const char *hint_table = "backed_var_to_val";
    static const bool backed = false, unbacked = true;
    int rc;

    if ((rc = load_symbol_table(L, se, "var_to_range", range_entry, NULL)) != 0
        || (rc = load_symbol_table(L, se, "var_to_sources", sources_entry, NULL)) != 0)
        return rc;
    /* torch 2.6 keeps the backed hints under the older name var_to_val and says
     * so in attribute_fallbacks. */
    sg_trace__set_field(&L->r, "shape_envs[%d].attribute_fallbacks", L->se_index);
    if ((rc = get_object(L, &fb, se, "attribute_fallbacks")) != 0)
        return rc;
    if (sg__json_is_none(sg__json_get(se, hint_table))) {
        const char *alt = sg__json_str(sg__json_get(fb, "backed_var_to_val"));
        hint_table = alt ? alt : "var_to_val";
    }
    if ((rc = load_symbol_table(L, se, hint_table, hint_entry, &backed)) != 0
        || (rc = load_symbol_table(L, se, "unbacked_var_to_val", hint_entry, &unbacked)) != 0
        || (rc = load_symbol_list(L, se, "unbacked_symbols", offsetof(sg_symbol_info, unbacked))) != 0
        || (rc = load_symbol_list(L, se, "size_like", offsetof(sg_symbol_info, size_like))) != 0
        || (rc = load_symbol_table(L, se, "replacements", replacement_entry, NULL)) != 0
        || (rc = load_guards(L, se)) != 0
        || (rc = load_asserts(L, se)) != 0)
        return rc;
    return 0;
}

/* ---- inputs and spec ---------------------------------------------------------------- */

/* One tracked fake tensor of the main ShapeEnv. */
typedef struct fake {
    const char *source;
    const cJSON *shape; /* array of size expressions */
} fake;

/* The tracked fake tensors of `se` into a new array (sg_free). */
static int load_fakes(dirload *L, const cJSON *se, fake **out, size_t *n)
{
    const cJSON *arr, *it;
    size_t cap = 0;
    int rc, i = 0;

    *out = NULL;
    *n = 0;
    sg_trace__set_field(&L->r, "shape_envs[%d].tracked_fakes", L->se_index);
    if ((rc = get_array(L, &arr, se, "tracked_fakes")) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        const char *src = sg__json_str(sg__json_get(it, "source"));
        const cJSON *shape = sg__json_get(sg__json_get(it, "fake"), "tensor");
        sg_trace__set_field(&L->r, "shape_envs[%d].tracked_fakes[%d]", L->se_index, i++);
        if (!src)
            return sg_trace__fail(&L->r, SG_EINVALID, "expected {\"source\": name, \"fake\": ...}");
        /* Non-tensor fakes (symbolic ints) have no "tensor" shape. */
        if (!cJSON_IsArray(shape))
            continue;
        if (sg__grow((void **)out, &cap, *n + 1, sizeof **out))
            return sg_trace__oom(&L->r);
        (*out)[*n].source = src;
        (*out)[*n].shape = shape;
        (*n)++;
    }
    return 0;
}

/* A name and where it was: the entries of a name index (sorted by name, then place), so
 * that looking a name up costs O(log n) where a scan of a model-sized trace's thousand
 * inputs made loading quadratic. */
typedef struct named {
    const char *name;
    size_t pos;
} named;

static int cmp_named(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* The first place (the least pos) of `name` in `ix[0..n)`, -1 when it is not there. */
static long find_named(const named *ix, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ix[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && strcmp(ix[lo].name, name) == 0 ? (long)ix[lo].pos : -1;
}

/* The index of the fakes' sources (new array, sg_free; NULL when n == 0); SG_ENOMEM. */
static int index_fakes(named **out, const fake *fakes, size_t n)
{
    size_t i;
    *out = NULL;
    if (!n)
        return 0;
    if (!(*out = sg__malloc(n * sizeof **out)))
        return SG_ENOMEM;
    for (i = 0; i < n; i++) {
        (*out)[i].name = fakes[i].source;
        (*out)[i].pos = i;
    }
    qsort(*out, n, sizeof **out, cmp_named);
    return 0;
}

/* The first fake whose source is `source`, or NULL (`ix`: index_fakes of `fakes`). */
static const fake *find_fake(const fake *fakes, const named *ix, size_t n, const char *source)
{
    long at = find_named(ix, n, source);
    return at < 0 ? NULL : &fakes[at];
}

/* Split a pytree path "['name']rest" into the key and the rest; false if it does not start so. */
static bool path_head(const char *path, const char **key, size_t *keylen, const char **rest)
{
    const char *end;
    if (strncmp(path, "['", 2) != 0)
        return false;
    end = strstr(path + 2, "']");
    if (!end)
        return false;
    *key = path + 2;
    *keylen = (size_t)(end - (path + 2));
    *rest = end + 2;
    return true;
}

/* True when the signature text declares `*name` (varargs). */
static bool is_varargs(const char *sig, const char *name, size_t len)
{
    const char *p = sig;
    while (sig && (p = strchr(p, '*')) != NULL) {
        bool before = p == sig || p[-1] == '(' || p[-1] == ' ' || p[-1] == ',';
        bool after = strncmp(p + 1, name, len) == 0
                     && (p[1 + len] == ',' || p[1 + len] == ')' || p[1 + len] == ':'
                         || p[1 + len] == ' ' || p[1 + len] == '=');
        if (before && after && (p == sig || p[-1] != '*'))
            return true;
        p++;
    }
    return false;
}

/*
 * The source torch 2.6's non-strict export traces the leaf at `path` under:
 * positional argument k as L['args'][0][k], a keyword argument as
 * L['args'][1]['name'], the j-th element of varargs *name at position k as
 * L['args'][0][k + j]. Empty buffer when the path does not fit.
 */
static int source_26(sg_buf *b, const cJSON *inputs, const char *path)
{
    const cJSON *names = sg__json_get(inputs, "arg_names"), *kwargs = sg__json_get(inputs, "kwargs");
    const char *sig = sg__json_str(sg__json_get(inputs, "signature"));
    const char *key, *rest, *s;
    size_t keylen;
    long k = -1, idx = 0;
    const cJSON *it;

    if (!path_head(path, &key, &keylen, &rest))
        return 0;
    cJSON_ArrayForEach(it, kwargs) {
        if (it->string && strlen(it->string) == keylen && strncmp(it->string, key, keylen) == 0)
            return sg_buf_printf(b, "L['args'][1]['%.*s']%s", (int)keylen, key, rest);
    }
    cJSON_ArrayForEach(it, names) {
        s = sg__json_str(it);
        if (s && strlen(s) == keylen && strncmp(s, key, keylen) == 0) {
            k = idx;
            break;
        }
        idx++;
    }
    if (k < 0)
        return 0;
    if (is_varargs(sig, key, keylen)) {
        char *end;
        long j;
        if (rest[0] != '[')
            return 0;
        j = strtol(rest + 1, &end, 10);
        if (end == rest + 1 || *end != ']' || j < 0)
            return 0;
        return sg_buf_printf(b, "L['args'][0][%ld]%s", k + j, end + 1);
    }
    return sg_buf_printf(b, "L['args'][0][%ld]%s", k, rest);
}

/*
 * The tracked fake tensor of the leaf at `path` (leaf number `leaf` of
 * inputs.flat, -1 when unknown): the one whose source is, in this order,
 * "L" + path (torch 2.14 non-strict, 2.6 strict), "L['flat_args'][leaf]"
 * (2.14 strict; `*flat_args` set), or torch 2.6's non-strict form
 * (source_26). `*out` NULL when none is. Returns 0, or SG_ENOMEM / SG_ELIMIT
 * (a path too long) recorded in `L`.
 */
static int find_traced(dirload *L, const fake **out, bool *flat_args, const char *path, long leaf,
                       const fake *fakes, const named *fix, size_t nfakes, const cJSON *inputs)
{
    sg_buf cand;
    int rc = 0;

    *out = NULL;
    *flat_args = false;
    sg_buf_init(&cand, 4096);
    if (sg_buf_printf(&cand, "L%s", path) == 0)
        *out = find_fake(fakes, fix, nfakes, cand.data);
    if (!*out && leaf >= 0) {
        sg_buf_dispose(&cand);
        sg_buf_init(&cand, 4096);
        if (sg_buf_printf(&cand, "L['flat_args'][%ld]", leaf) == 0)
            *out = find_fake(fakes, fix, nfakes, cand.data);
        *flat_args = *out != NULL;
    }
    if (!*out && !cand.failed) {
        sg_buf_dispose(&cand);
        sg_buf_init(&cand, 4096);
        if (source_26(&cand, inputs, path) == 0 && cand.len > 0)
            *out = find_fake(fakes, fix, nfakes, cand.data);
    }
    if (cand.failed)
        rc = cand.failed == SG_ENOMEM ? sg_trace__oom(&L->r) : sg_trace__fail(&L->r, SG_ELIMIT, "path too long");
    sg_buf_dispose(&cand);
    return rc;
}

/*
 * The traced value of input dim `d` (leaf number `leaf` of inputs.flat), from
 * the tracked fake tensor find_traced() picks. Sets `value`, `traced_source`
 * and the message source name `source` (docs/trace-format.md, section 2.3).
 */
static int map_dim(dirload *L, sg_input_dim *d, long leaf, const fake *fakes, const named *fix, size_t nfakes,
                   const cJSON *inputs)
{
    const fake *f;
    const cJSON *v;
    const char *text;
    char buf[SG_INT_STRLEN];
    bool flat_args;
    sg_int n;
    int rc;

    sg_trace__set_field(&L->r, "tracked_fakes: %.120s", d->path);
    if ((rc = find_traced(L, &f, &flat_args, d->path, leaf, fakes, fix, nfakes, inputs)) != 0)
        return rc;
    /* torch rewrites strict mode's L['flat_args'][i] to the user's path in its messages */
    if (f && !flat_args)
        d->source = sg_trace__printf(L->r.t, "%s.size()[%d]", f->source, d->dim);
    else
        d->source = sg_trace__printf(L->r.t, "L%s.size()[%d]", d->path, d->dim);
    if (!d->source)
        return sg_trace__oom(&L->r);
    if (!f || d->dim >= cJSON_GetArraySize(f->shape))
        return 0;
    sg_trace__set_field(&L->r, "shape_envs[%d].tracked_fakes['%.60s'].fake.tensor[%d]", L->se_index, f->source,
              d->dim);
    v = cJSON_GetArrayItem(f->shape, d->dim);
    text = sg__json_str(v);
    if (!text && sg__json_int(v, &n))
        text = sg_int_format(buf, n);
    if (!text)
        return sg_trace__fail(&L->r, SG_EINVALID, "expected a size expression");
    if ((rc = sg_trace__read_int_expr(&L->r, &d->value, text, NULL)) != 0)
        return rc;
    if (!(d->traced_source = sg_trace__printf(L->r.t, "%s.size()[%d]", f->source, d->dim)))
        return sg_trace__oom(&L->r);
    return 0;
}

/* A dim number of the spec: a non-negative int. */
static int read_dim(dirload *L, int *out, const cJSON *j)
{
    sg_int v;
    if (!sg__json_int(j, &v) || v < 0 || v > 65535)
        return sg_trace__fail(&L->r, SG_EINVALID, "expected a dim number (0 .. 65535)");
    *out = (int)v;
    return 0;
}

/* The index of inputs.flat's leaf paths (new array, sg_free; *n its entries): pos is the leaf's
 * place in inputs.flat, counting the leaves without a path. SG_ENOMEM. */
static int index_leaves(named **out, size_t *n, const cJSON *flat)
{
    const cJSON *it;
    size_t i = 0;
    *out = NULL;
    *n = 0;
    if (!flat)
        return 0;
    if (!(*out = sg__malloc(((size_t)cJSON_GetArraySize(flat) + 1) * sizeof **out)))
        return SG_ENOMEM;
    cJSON_ArrayForEach(it, flat) {
        const char *p = sg__json_str(sg__json_get(it, "path"));
        if (p) {
            (*out)[*n].name = p;
            (*out)[(*n)++].pos = i;
        }
        i++;
    }
    qsort(*out, *n, sizeof **out, cmp_named);
    return 0;
}

/* inputs, dynamic_shapes_flat and dynamic_shapes of case.json, and the traced dim values. */
static int load_inputs(dirload *L, const cJSON *cj, const cJSON *se)
{
    const cJSON *inputs, *flat = NULL, *dsf, *it;
    fake *fakes = NULL;
    named *leaves = NULL, *fix = NULL; /* inputs.flat's paths, the fakes' sources */
    size_t nfakes = 0, nleaf = 0, first;
    int rc, i = 0;

    L->r.what = L->cwhat;
    sg_trace__set_field(&L->r, "inputs");
    if ((rc = get_object(L, &inputs, cj, "inputs")) != 0)
        return rc;
    /* every recording has them (null when torch raised before it could record them) */
    if (!cJSON_GetObjectItemCaseSensitive(cj, "inputs"))
        return sg_trace__fail(&L->r, SG_EINVALID, "missing: not a torch.export capture (case.json records the "
                                                  "example inputs, their spec and torch's outcome)");
    sg_trace__set_field(&L->r, "inputs.flat");
    if ((rc = get_array(L, &flat, inputs, "flat")) != 0)
        return rc;
    sg_trace__set_field(&L->r, "dynamic_shapes_flat");
    if ((rc = get_array(L, &dsf, cj, "dynamic_shapes_flat")) != 0)
        return rc;
    sg_trace__set_field(&L->r, "inputs");
    if ((rc = sg_trace__keep_json(&L->r, &L->r.t->inputs_json, inputs)) != 0)
        return rc;
    sg_trace__set_field(&L->r, "dynamic_shapes");
    if ((rc = sg_trace__keep_json(&L->r, &L->r.t->dynamic_shapes_json, sg__json_get(cj, "dynamic_shapes"))) != 0)
        return rc;
    L->r.t->has_flat_spec = dsf != NULL;
    {
        const cJSON *fx = sg__json_get(cj, "suggested_fixes");
        sg_trace__set_field(&L->r, "suggested_fixes");
        if (cJSON_IsArray(fx) && (rc = sg_trace__keep_json(&L->r, &L->r.t->torch_fixes_json, fx)) != 0)
            return rc;
        fx = sg__json_get(cj, "error_type");
        if (sg__json_str(fx) && !(L->r.t->torch_error = sg_trace__strdup(L->r.t, sg__json_str(fx))))
            return sg_error_set(L->r.err, SG_ENOMEM, "out of memory");
        fx = sg__json_get(cj, "error_message");
        if (sg__json_str(fx)) { /* its first line, at most 1 KiB */
            const char *m = sg__json_str(fx);
            size_t n = strcspn(m, "\n");
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), m);
            if (!(L->r.t->torch_error_message = sg_trace__strdup(L->r.t, line)))
                return sg_error_set(L->r.err, SG_ENOMEM, "out of memory");
        }
    }

    if (index_leaves(&leaves, &nleaf, flat) != 0)
        return sg_trace__oom(&L->r);
    if (dsf) {
        /* The rows follow the spec's structure, leaf by leaf in pytree order: a non-dict spec
         * names them by the spec's positions ("[0]"), a dataclass or namedtuple by what the
         * spec was (a list); inputs.flat has the same leaves in the same order under the
         * inputs' own paths (['p'].a). When the leaf counts agree, a row whose path is not
         * one of inputs.flat takes the path of its leaf there. */
        long nleaves = 0, leaf = -1, nflat = flat ? cJSON_GetArraySize(flat) : 0;
        const char *prev = NULL;
        cJSON_ArrayForEach(it, dsf) {
            const char *p = sg__json_str(sg__json_get(it, "path"));
            if (!p || !prev || strcmp(p, prev) != 0 || sg__json_is_none(sg__json_get(it, "dim")))
                nleaves++;
            prev = p;
        }
        prev = NULL;
        cJSON_ArrayForEach(it, dsf) {
            sg_input_dim *d;
            const char *path;
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d]", i);
            if (!cJSON_IsObject(it)) {
                rc = sg_trace__fail(&L->r, SG_EINVALID, "expected {path, dim, size, spec}");
                goto cleanup;
            }
            path = sg__json_str(sg__json_get(it, "path"));
            if (!path) {
                rc = sg_trace__fail(&L->r, SG_EINVALID, "path: expected a string");
                goto cleanup;
            }
            if (!prev || strcmp(path, prev) != 0 || sg__json_is_none(sg__json_get(it, "dim")))
                leaf++;
            prev = path;
            if (sg__json_is_none(sg__json_get(it, "dim"))) { /* an int, float, bool, str or None: no dims */
                i++;
                continue;
            }
            if (nleaves == nflat && find_named(leaves, nleaf, path) < 0) {
                const cJSON *fl = cJSON_GetArrayItem(flat, (int)leaf);
                const char *fp = sg__json_str(sg__json_get(fl, "path"));
                if (fp && cJSON_IsArray(sg__json_get(fl, "tensor")))
                    path = fp;
            }
            if (!(d = sg_trace__add_input(L->r.t)) || !(d->path = sg_trace__strdup(L->r.t, path))) {
                rc = sg_trace__oom(&L->r);
                goto cleanup;
            }
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].dim", i);
            if ((rc = read_dim(L, &d->dim, sg__json_get(it, "dim"))) != 0)
                goto cleanup;
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].size", i);
            if (!sg__json_int(sg__json_get(it, "size"), &d->size)) {
                rc = sg_trace__fail(&L->r, SG_EINVALID, "expected an integer");
                goto cleanup;
            }
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].spec", i);
            if ((rc = sg_trace__read_spec(&L->r, d, sg__json_get(it, "spec"))) != 0)
                goto cleanup;
            i++;
        }
    } else {
        cJSON_ArrayForEach(it, flat) {
            const cJSON *shape = sg__json_get(it, "tensor"), *sz;
            const char *path = sg__json_str(sg__json_get(it, "path"));
            int dim = 0;
            sg_trace__set_field(&L->r, "inputs.flat[%d]", i++);
            if (!cJSON_IsObject(it) || !path) {
                rc = sg_trace__fail(&L->r, SG_EINVALID, "expected {path, tensor | int, ...}");
                goto cleanup;
            }
            if (sg__json_is_none(shape))
                continue;
            if (!cJSON_IsArray(shape)) {
                rc = sg_trace__fail(&L->r, SG_EINVALID, "tensor: expected a shape array");
                goto cleanup;
            }
            cJSON_ArrayForEach(sz, shape) {
                sg_input_dim *d;
                if (!(d = sg_trace__add_input(L->r.t)) || !(d->path = sg_trace__strdup(L->r.t, path))) {
                    rc = sg_trace__oom(&L->r);
                    goto cleanup;
                }
                d->dim = dim++;
                d->kind = SG_SPEC_UNSET;
                if (!sg__json_int(sz, &d->size)) {
                    rc = sg_trace__fail(&L->r, SG_EINVALID, "tensor: expected integer sizes");
                    goto cleanup;
                }
            }
        }
    }

    /* The traced values, from the main ShapeEnv's tracked fakes. */
    L->r.what = L->gwhat;
    if (se && (rc = load_fakes(L, se, &fakes, &nfakes)) != 0)
        goto cleanup;
    if (index_fakes(&fix, fakes, nfakes) != 0) {
        rc = sg_trace__oom(&L->r);
        goto cleanup;
    }
    for (first = 0; first < L->r.t->ninputs; first++) {
        sg_input_dim *d = &L->r.t->inputs[first];
        if ((rc = map_dim(L, d, find_named(leaves, nleaf, d->path), fakes, fix, nfakes, inputs)) != 0)
            goto cleanup;
    }
cleanup:
    sg_free(fix);
    sg_free(leaves);
    sg_free(fakes);
    return rc;
}

/* The last path component of `dir` (trailing slashes ignored), at most `cap` - 1 bytes. */
static void base_name(char *out, size_t cap, const char *dir)
{
    size_t end = strlen(dir), start;
    while (end > 1 && dir[end - 1] == '/')
        end--;
    start = end;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    snprintf(out, cap, "%.*s", (int)(end - start), dir + start);
}


/* `dir`/`file` into a new string (sg_free), or NULL. */
static char *join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = sg__malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, file);
    return p;
}

/* Members of guards.json and case.json no reader of a capture looks at (source locations, torch's
 * own summaries and timings of its solve, the error's other renderings, the ShapeEnv's reverse
 * maps and counters): their values are read and checked but not kept (util/json.h), two thirds of
 * a model-sized capture. Each at its own depth only: case.json's and guards.json's top level (1),
 * a shape_envs[] entry (3); a user's argument of the same name, deeper, is kept. */
static const sg__json_drop unread[] = {
    {1, "produce_guards_calls"}, {1, "dim_constraints"}, {1, "summary"}, {1, "refined"}, {1, "cause_chain"},
    {1, "error_msg_attr"}, {1, "dynamic_shapes_repr"}, {1, "timing"}, {3, "var_to_range_sloc"},
    {3, "replacements_slocs"}, {3, "source_to_var"}, {3, "source_name_to_debug_name"}, {3, "symbol_guard_counter"},
    {3, "backed_symbols"}, {3, "axioms"}, {0, NULL}};

int sg_trace_load_dir(sg_trace **out, const char *dir, sg_error *err)
{
    dirload L;
    char name[64];
    char *gpath = NULL, *cpath = NULL;
    /* both files as read-only documents: everything below reads them (and copies what the
     * trace keeps into its arena) and they are freed whole at the end */
    sg__json_doc *gdoc = NULL, *cdoc = NULL;
    const cJSON *gj = NULL, *cj = NULL;
    const cJSON *envs, *idx, *se = NULL;
    int rc;

    *out = NULL;
    memset(&L, 0, sizeof L);
    L.r.err = err;
    if (!dir)
        return sg_error_set(err, SG_EINVALID, "no capture folder given");
    base_name(name, sizeof name, dir);
    snprintf(L.gwhat, sizeof L.gwhat, "%s/guards.json", name);
    snprintf(L.cwhat, sizeof L.cwhat, "%s/case.json", name);
    gpath = join(dir, "guards.json");
    cpath = join(dir, "case.json");
    if (!gpath || !cpath) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = sg__json_doc_load_file(&cdoc, &cj, cpath, unread, L.cwhat, err)) != 0
        || (rc = sg__json_doc_load_file(&gdoc, &gj, gpath, unread, L.gwhat, err)) != 0)
        goto cleanup;
    if ((rc = sg_trace__new(&L.r.t, err)) != 0)
        goto cleanup;

    L.r.what = L.cwhat;
    sg_trace__set_field(&L.r, "(top level)");
    if (!cJSON_IsObject(cj)) {
        rc = sg_trace__fail(&L.r, SG_EINVALID, "expected an object");
        goto cleanup;
    }
    L.r.what = L.gwhat;
    if (!cJSON_IsObject(gj)) {
        rc = sg_trace__fail(&L.r, SG_EINVALID, "expected an object");
        goto cleanup;
    }

    /* torch_version and strict from case.json (torch_version also in guards.json). */
    {
        const cJSON *tv = sg__json_get(cj, "torch_version"), *st = sg__json_get(cj, "strict");
        L.r.what = L.cwhat;
        sg_trace__set_field(&L.r, "torch_version");
        if (sg__json_is_none(tv))
            tv = sg__json_get(gj, "torch_version");
        if (!sg__json_is_none(tv)) {
            if (!cJSON_IsString(tv)) {
                rc = sg_trace__fail(&L.r, SG_EINVALID, "expected a string");
                goto cleanup;
            }
            if (!(L.r.t->torch_version = sg_trace__strdup(L.r.t, tv->valuestring))) {
                rc = sg_trace__oom(&L.r);
                goto cleanup;
            }
        }
        sg_trace__set_field(&L.r, "strict");
        if (!sg__json_is_none(st) && !cJSON_IsBool(st)) {
            rc = sg_trace__fail(&L.r, SG_EINVALID, "expected true or false");
            goto cleanup;
        }
        L.r.t->strict = cJSON_IsTrue(st);
    }

    /* The main ShapeEnv: shape_envs[main_shape_env_index]; none when the index is null or
     * torch never traced (only a "note"). */
    L.r.what = L.gwhat;
    sg_trace__set_field(&L.r, "shape_envs");
    if ((rc = get_array(&L, &envs, gj, "shape_envs")) != 0)
        goto cleanup;
    if (!envs && sg__json_is_none(sg__json_get(gj, "note"))) { /* a folder torch never traced has a note */
        rc = sg_trace__fail(&L.r, SG_EINVALID, "missing: not a recording of torch's ShapeEnvs (nor a \"note\" "
                                               "saying why there is none)");
        goto cleanup;
    }
    idx = sg__json_get(gj, "main_shape_env_index");
    if (envs && !sg__json_is_none(idx)) {
        sg_int k;
        sg_trace__set_field(&L.r, "main_shape_env_index");
        if (!sg__json_int(idx, &k) || k < 0 || k >= cJSON_GetArraySize(envs)) {
            rc = sg_trace__fail(&L.r, SG_EINVALID, "not the index of a shape_envs entry");
            goto cleanup;
        }
        L.se_index = (int)k;
        se = cJSON_GetArrayItem(envs, L.se_index);
        sg_trace__set_field(&L.r, "shape_envs[%d]", L.se_index);
        if (!cJSON_IsObject(se)) {
            rc = sg_trace__fail(&L.r, SG_EINVALID, "expected an object");
            goto cleanup;
        }
    }
    L.r.t->has_shape_env = se != NULL;
    if (se && (rc = load_shape_env(&L, se)) != 0)
        goto cleanup;
    if ((rc = load_inputs(&L, cj, se)) != 0)
        goto cleanup;
    if (!(L.r.t->name = sg_trace__strdup(L.r.t, dir))) {
        rc = sg_trace__oom(&L.r);
        goto cleanup;
    }
    *out = L.r.t;
    L.r.t = NULL;
cleanup:
    if (rc)
        sg__error_one_line(err);
    sg_trace_free(L.r.t);
    sg__json_doc_free(gdoc);
    sg__json_doc_free(cdoc);
    sg_free(gpath);
    sg_free(cpath);
    return rc;
}

