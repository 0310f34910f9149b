/*
 * trace.c - sg_trace (include/shapegate/trace.h): the in-memory trace, its
 * arena and builders (trace/trace_impl.h), the accessors, sg_trace_load(),
 * and the capture-folder adapter: a folder holding guards.json (torch's
 * ShapeEnv dumps) and case.json (inputs and the dynamic_shapes spec), as in
 * tests/corpus/cases/NAME/. docs/trace-format.md describes the mapping.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace/trace_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/json.h"

/* ---- the arena ------------------------------------------------------------------ */

#define ARENA_ALIGN (_Alignof(max_align_t))
#define ARENA_BLOCK 8192

struct sg_trace_block {
    sg_trace_block *next;
    size_t used, cap; /* bytes of data */
    max_align_t data[];
};

void *sg_trace__alloc(sg_trace *t, size_t n)
{
    sg_trace_block *b = t->mem;
    void *p;

    n = (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (n == 0)
        n = ARENA_ALIGN;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof *b)
            return NULL;
        b = sg__malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        /* A block made for one big request goes behind the current one, which
         * may still have room for small requests. */
        if (t->mem && n > ARENA_BLOCK) {
            b->next = t->mem->next;
            t->mem->next = b;
        } else {
            b->next = t->mem;
            t->mem = b;
        }
    }
    p = (unsigned char *)b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *sg_trace__strndup(sg_trace *t, const char *s, size_t n)
{
    char *r;
    if (n == SIZE_MAX)
        return NULL;
    r = sg_trace__alloc(t, n + 1);
    if (!r)
        return NULL;
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

char *sg_trace__strdup(sg_trace *t, const char *s)
{
    return s ? sg_trace__strndup(t, s, strlen(s)) : NULL;
}

/* ---- building ------------------------------------------------------------------- */

int sg_trace__new(sg_trace **out, sg_error *err)
{
    sg_trace *t;
    int rc;

    *out = NULL;
    t = sg__calloc(1, sizeof *t);
    if (!t)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    rc = sg_pool_new(&t->pool, err);
    if (rc) {
        sg_free(t);
        return rc;
    }
    t->torch_version = "";
    *out = t;
    return 0;
}

void sg_trace_free(sg_trace *t)
{
    sg_trace_block *b, *next;

    if (!t)
        return;
    for (b = t->mem; b; b = next) {
        next = b->next;
        sg_free(b);
    }
    sg_free(t->symbols);
    sg_free(t->guards);
    sg_free(t->inputs);
    sg_free(t->sym_map);
    sg_pool_free(t->pool);
    sg_free(t);
}

sg_symbol_info *sg_trace__symbol(sg_trace *t, const sg_expr *sym, bool *added)
{
    uint32_t idx = sg_expr_symbol_index(sym);
    sg_symbol_info *si;

    if (added)
        *added = false;
    if (idx == UINT32_MAX)
        return NULL;
    if (idx < t->nsym_map && t->sym_map[idx])
        return &t->symbols[t->sym_map[idx] - 1];
    if (idx >= t->nsym_map) {
        size_t old = t->nsym_map, cap = t->nsym_map;
        if (sg__grow((void **)&t->sym_map, &cap, (size_t)idx + 1, sizeof *t->sym_map))
            return NULL;
        memset(t->sym_map + old, 0, (cap - old) * sizeof *t->sym_map);
        t->nsym_map = cap;
    }
    if (t->nsymbols >= UINT32_MAX - 1
        || sg__grow((void **)&t->symbols, &t->csymbols, t->nsymbols + 1, sizeof *t->symbols))
        return NULL;
    si = &t->symbols[t->nsymbols++];
    memset(si, 0, sizeof *si);
    si->sym = sym;
    si->lo.inf = -1;
    si->hi.inf = 1;
    t->sym_map[idx] = (uint32_t)t->nsymbols;
    if (added)
        *added = true;
    return si;
}

sg_guard *sg_trace__add_guard(sg_trace *t)
{
    sg_guard *g;
    if (sg__grow((void **)&t->guards, &t->cguards, t->nguards + 1, sizeof *t->guards))
        return NULL;
    g = &t->guards[t->nguards++];
    memset(g, 0, sizeof *g);
    return g;
}

sg_input_dim *sg_trace__add_input(sg_trace *t)
{
    sg_input_dim *d;
    if (sg__grow((void **)&t->inputs, &t->cinputs, t->ninputs + 1, sizeof *t->inputs))
        return NULL;
    d = &t->inputs[t->ninputs++];
    memset(d, 0, sizeof *d);
    return d;
}

int sg_trace__parse(const sg_expr **out, sg_trace *t, const char *text, bool want_bool,
                    const char *what, const char *field, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    int rc;

    *out = NULL;
    rc = sg_expr_parse(out, t->pool, text, strlen(text), &perr);
    if (rc) {
        if (rc == SG_ENOMEM)
            return sg_error_set(err, rc, "%s: %s: out of memory", what, field);
        rc = sg__input_code(rc);
        if (perr.col > 0)
            return sg_error_set(err, rc, "%s: %s: column %d: %s", what, field, perr.col, perr.msg);
        return sg_error_set(err, rc, "%s: %s: %s", what, field, perr.msg);
    }
    if (want_bool && sg_expr_sort(*out) != SG_SORT_BOOL) {
        *out = NULL;
        return sg_error_set(err, SG_EINVALID, "%s: %s: '%.60s' is not a boolean expression", what,
                            field, text);
    }
    return 0;
}

int sg_trace__symbol_named(const sg_expr **out, sg_trace *t, const char *name, const char *what,
                           const char *field, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    int rc;

    *out = NULL;
    rc = sg_expr_parse(&e, t->pool, name, strlen(name), &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, rc, "%s: %s: out of memory", what, field);
    if (rc || sg_expr_kind(e) != SG_SYM || strcmp(sg_expr_symbol_name(e), name) != 0)
        return sg_error_set(err, SG_EINVALID, "%s: %s: '%.60s' is not a symbol name", what, field,
                            name);
    *out = e;
    return 0;
}

/* ---- accessors ------------------------------------------------------------------- */

sg_pool *sg_trace_pool(const sg_trace *t) { return t ? t->pool : NULL; }

const char *sg_trace_torch_version(const sg_trace *t) { return t ? t->torch_version : ""; }

const char *sg_trace_torch_fixes_json(const sg_trace *t) { return t ? t->torch_fixes_json : NULL; }

const char *sg_trace_torch_error(const sg_trace *t) { return t ? t->torch_error : NULL; }

bool sg_trace_strict(const sg_trace *t) { return t && t->strict; }

bool sg_trace_has_shape_env(const sg_trace *t) { return t && t->has_shape_env; }

bool sg_trace_has_flat_spec(const sg_trace *t) { return t && t->has_flat_spec; }

bool sg_trace_spec_overridden(const sg_trace *t) { return t && t->spec_overridden; }

const char *sg_trace_dynamic_shapes_json(const sg_trace *t) { return t ? t->dynamic_shapes_json : NULL; }

const char *sg_trace_inputs_json(const sg_trace *t) { return t ? t->inputs_json : NULL; }

const sg_input_dim *sg_trace_inputs(const sg_trace *t, size_t *n)
{
    if (n)
        *n = t ? t->ninputs : 0;
    return t ? t->inputs : NULL;
}

const sg_symbol_info *sg_trace_symbols(const sg_trace *t, size_t *n)
{
    if (n)
        *n = t ? t->nsymbols : 0;
    return t ? t->symbols : NULL;
}

const sg_guard *sg_trace_guards(const sg_trace *t, size_t *n)
{
    if (n)
        *n = t ? t->nguards : 0;
    return t ? t->guards : NULL;
}

const sg_symbol_info *sg_trace_symbol_info(const sg_trace *t, const sg_expr *sym)
{
    uint32_t idx;
    if (!t || !sym)
        return NULL;
    idx = sg_expr_symbol_index(sym);
    if (idx >= t->nsym_map || !t->sym_map[idx])
        return NULL;
    /* Guard against a symbol of another pool with the same index. */
    if (t->symbols[t->sym_map[idx] - 1].sym != sym)
        return NULL;
    return &t->symbols[t->sym_map[idx] - 1];
}

/* ---- loading from a path ------------------------------------------------------------ */

int sg_trace_load(sg_trace **out, const char *path, sg_error *err)
{
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    int rc;

    *out = NULL;
    if (!path)
        return sg_error_set(err, SG_EINVALID, "no trace path given");
    if (stat(path, &st) < 0) {
        sg_error_set(err, SG_EIO, "%s: %s", path, strerror(errno));
        sg__error_one_line(err);
        return SG_EIO;
    }
    if (S_ISDIR(st.st_mode))
        return sg_trace_load_dir(out, path, err);
    rc = sg__read_file(&text, &len, path, SG_TRACE_MAX_FILE, path, err);
    if (rc == 0)
        rc = sg_trace__load_json_named(out, text, len, path, err);
    sg_free(text);
    if (rc)
        sg__error_one_line(err);
    return rc;
}

/* ---- the capture-folder adapter ------------------------------------------------------ */

/* The state of one folder load. */
typedef struct dirload {
    sg_trace__reader r; /* the trace, the error, the file and field being read */
    char gwhat[128];    /* "NAME/guards.json" */
    char cwhat[128];    /* "NAME/case.json" */
    int se_index;       /* index of the main ShapeEnv */
} dirload;

int sg_trace__fail(sg_trace__reader *R, int code, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_error_set(R->err, code, "%s: %s: %s", R->what, R->field, msg);
}

int sg_trace__oom(sg_trace__reader *R) { return sg_trace__fail(R, SG_ENOMEM, "out of memory"); }

void sg_trace__set_field(sg_trace__reader *R, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->field, sizeof R->field, fmt, ap);
    va_end(ap);
}

/* A JSON member that must pass `is` (cJSON_IsObject, cJSON_IsArray), or be absent / null
 * (`*out` NULL); `what` names the expected type in the error. */
static int get_typed(dirload *L, const cJSON **out, const cJSON *parent, const char *key,
                     cJSON_bool (*is)(const cJSON *), const char *what)
{
    const cJSON *j = sg__json_get(parent, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!is(j))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected %s", what);
    *out = j;
    return 0;
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
    const cJSON *j = sg__json_get(parent, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!cJSON_IsString(j))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected a string");
    if (!(*out = sg_trace__strdup(L->r.t, j->valuestring)))
        return sg_trace__oom(&L->r);
    return 0;
}

/* A range bound of var_to_range or of the spec: an integer, "oo" / "-oo" (also
 * "int_oo" / "-int_oo"). Returns 1 for any other string (left to the caller). */
static int read_bound(dirload *L, sg_bound *b, const cJSON *j, const char *key)
{
    const char *s = sg__json_str(j);

    b->v = 0;
    b->inf = 0;
    if (s && (strcmp(s, "oo") == 0 || strcmp(s, "int_oo") == 0)) {
        b->inf = 1;
        return 0;
    }
    if (s && (strcmp(s, "-oo") == 0 || strcmp(s, "-int_oo") == 0)) {
        b->inf = -1;
        return 0;
    }
    if (sg__json_int(j, &b->v))
        return 0;
    if (s)
        return 1;
    if (key)
        return sg_trace__fail(&L->r, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
    return sg_trace__fail(&L->r, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"");
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

/* var_to_range: {symbol: [lo, hi]}. */
static int load_ranges(dirload *L, const cJSON *se)
{
    const cJSON *tab, *it;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].var_to_range", L->se_index);
    if ((rc = get_object(L, &tab, se, "var_to_range")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        sg_bound lo, hi;
        sg_trace__set_field(&L->r, "shape_envs[%d].var_to_range['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
            return sg_trace__fail(&L->r, SG_EINVALID, "expected [lo, hi]");
        if ((rc = read_bound(L, &lo, cJSON_GetArrayItem(it, 0), NULL)) != 0
            || (rc = read_bound(L, &hi, cJSON_GetArrayItem(it, 1), NULL)) != 0)
            return rc > 0 ? sg_trace__fail(&L->r, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"") : rc;
        si->lo = lo;
        si->hi = hi;
    }
    return 0;
}

/* var_to_sources: {symbol: [source, ...]}. */
static int load_sources(dirload *L, const cJSON *se)
{
    const cJSON *tab, *it, *s;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].var_to_sources", L->se_index);
    if ((rc = get_object(L, &tab, se, "var_to_sources")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        const char **srcs;
        size_t n = 0;
        sg_trace__set_field(&L->r, "shape_envs[%d].var_to_sources['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
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
    }
    return 0;
}

/* A hint table {symbol: int}; `unbacked` marks its symbols data-dependent. */
static int load_hints(dirload *L, const cJSON *se, const char *key, bool unbacked)
{
    const cJSON *tab, *it;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].%s", L->se_index, key);
    if ((rc = get_object(L, &tab, se, key)) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        sg_int v;
        sg_trace__set_field(&L->r, "shape_envs[%d].%s['%.40s']", L->se_index, key, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        if (!sg__json_int(it, &v))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected an integer hint");
        si->has_hint = true;
        si->hint = v;
        if (unbacked)
            si->unbacked = true;
    }
    return 0;
}

/* replacements: {symbol: {"expr": text, "tree": ...}} (or {symbol: text}). */
static int load_replacements(dirload *L, const cJSON *se)
{
    const cJSON *tab, *it;
    int rc;

    sg_trace__set_field(&L->r, "shape_envs[%d].replacements", L->se_index);
    if ((rc = get_object(L, &tab, se, "replacements")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        const sg_expr *e, *sym;
        const char *text = sg__json_str(cJSON_IsObject(it) ? sg__json_get(it, "expr") : it);
        sg_trace__set_field(&L->r, "shape_envs[%d].replacements['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        sym = si->sym;
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
    }
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
    int rc;

    if ((rc = load_ranges(L, se)) != 0 || (rc = load_sources(L, se)) != 0)
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
    if ((rc = load_hints(L, se, hint_table, false)) != 0
        || (rc = load_hints(L, se, "unbacked_var_to_val", true)) != 0
        || (rc = load_symbol_list(L, se, "unbacked_symbols", offsetof(sg_symbol_info, unbacked))) != 0
        || (rc = load_symbol_list(L, se, "size_like", offsetof(sg_symbol_info, size_like))) != 0
        || (rc = load_replacements(L, se)) != 0 || (rc = load_guards(L, se)) != 0
        || (rc = load_asserts(L, se)) != 0)
        return rc;
    return 0;
}

/* ---- inputs and spec ---------------------------------------------------------------- */

/* A bound of the spec into `b`; a "<unavailable: ...>" text goes to `*note` and
 * makes the bound infinite in direction `dir`. Absent or null: `dflt`. */
static int spec_bound(dirload *L, sg_bound *b, const char **note, const cJSON *spec,
                      const char *key, int dir, sg_bound dflt)
{
    const cJSON *j = sg__json_get(spec, key);
    int rc;

    if (sg__json_is_none(j)) {
        *b = dflt;
        return 0;
    }
    rc = read_bound(L, b, j, key);
    if (rc > 0) {
        if (strncmp(j->valuestring, "<unavailable", 12) != 0)
            return sg_trace__fail(&L->r, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
        if (note && !(*note = sg_trace__strdup(L->r.t, j->valuestring)))
            return sg_trace__oom(&L->r);
        b->v = 0;
        b->inf = dir;
        return 0;
    }
    return rc;
}

/* The spec of one dim (a dynamic_shapes_flat[].spec value). */
static int load_spec(dirload *L, sg_input_dim *d, const cJSON *spec)
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
            return sg_trace__fail(&L->r, SG_EINVALID, "unknown spec '%.40s'", s);
        return 0;
    }
    if (cJSON_IsNumber(spec) || cJSON_IsRaw(spec)) { /* Raw: a big integer (util/json.c) */
        if (!sg__json_int(spec, &d->static_size))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected an integer size");
        d->kind = SG_SPEC_STATIC;
        d->has_static_size = true;
        return 0;
    }
    if (!cJSON_IsObject(spec))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected null, a string, an integer or an object");
    if (sg__json_get(spec, "derived")) {
        const cJSON *root = sg__json_get(spec, "root");
        const char *expr = sg__json_str(sg__json_get(spec, "expr"));
        const char *name = sg__json_str(sg__json_get(spec, "derived"));
        char field[sizeof L->r.field];
        d->kind = SG_SPEC_DERIVED;
        d->has_bounds = true;
        if (!name || !cJSON_IsObject(root) || !sg__json_str(sg__json_get(root, "name")))
            return sg_trace__fail(&L->r, SG_EINVALID,
                        "a derived dim needs \"derived\" (text) and \"root\" {name, min, max}");
        if (!expr)
            expr = name;
        if (!(d->name = sg_trace__strdup(L->r.t, name))
            || !(d->root_name = sg_trace__strdup(L->r.t, sg__json_str(sg__json_get(root, "name")))))
            return sg_trace__oom(&L->r);
        snprintf(field, sizeof field, "%.180s.expr", L->r.field);
        if ((rc = sg_trace__parse(&d->derived, L->r.t, expr, false, L->r.what, field, L->r.err)) != 0)
            return rc;
        if (sg_expr_sort(d->derived) != SG_SORT_INT)
            return sg_trace__fail(&L->r, SG_EINVALID, "expr: '%.60s' is not an integer expression", expr);
        if ((rc = sg_trace__check_derived(&L->r, d->derived, "expr", expr, d->root_name)) != 0)
            return rc;
        if ((rc = spec_bound(L, &d->root_min, NULL, root, "min", -1, zero)) != 0
            || (rc = spec_bound(L, &d->root_max, NULL, root, "max", 1, pinf)) != 0
            || (rc = spec_bound(L, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
            || (rc = spec_bound(L, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
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
            return sg_trace__fail(&L->r, SG_EINVALID, "hint: expected \"AUTO\" or \"DYNAMIC\"");
        d->has_bounds = !sg__json_is_none(sg__json_get(spec, "min"))
                        || !sg__json_is_none(sg__json_get(spec, "max"));
        if ((rc = spec_bound(L, &d->min, &d->min_unavailable, spec, "min", -1, ninf)) != 0
            || (rc = spec_bound(L, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    if (sg__json_str(sg__json_get(spec, "name"))) {
        d->kind = SG_SPEC_DIM;
        d->has_bounds = true;
        if (!(d->name = sg_trace__strdup(L->r.t, sg__json_str(sg__json_get(spec, "name")))))
            return sg_trace__oom(&L->r);
        /* torch's Dim() defaults: min 0, max int_oo. */
        if ((rc = spec_bound(L, &d->min, &d->min_unavailable, spec, "min", -1, zero)) != 0
            || (rc = spec_bound(L, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    return sg_trace__fail(&L->r, SG_EINVALID, "unknown spec object (no \"name\", \"hint\" or \"derived\")");
}

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

static const fake *find_fake(const fake *fakes, size_t n, const char *source)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fakes[i].source, source) == 0)
            return &fakes[i];
    return NULL;
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
                       const fake *fakes, size_t nfakes, const cJSON *inputs)
{
    sg_buf cand;
    int rc = 0;

    *out = NULL;
    *flat_args = false;
    sg_buf_init(&cand, 4096);
    if (sg_buf_printf(&cand, "L%s", path) == 0)
        *out = find_fake(fakes, nfakes, cand.data);
    if (!*out && leaf >= 0) {
        sg_buf_dispose(&cand);
        sg_buf_init(&cand, 4096);
        if (sg_buf_printf(&cand, "L['flat_args'][%ld]", leaf) == 0)
            *out = find_fake(fakes, nfakes, cand.data);
        *flat_args = *out != NULL;
    }
    if (!*out && !cand.failed) {
        sg_buf_dispose(&cand);
        sg_buf_init(&cand, 4096);
        if (source_26(&cand, inputs, path) == 0 && cand.len > 0)
            *out = find_fake(fakes, nfakes, cand.data);
    }
    if (cand.failed)
        rc = cand.failed == SG_ENOMEM ? sg_trace__oom(&L->r) : sg_trace__fail(&L->r, SG_ELIMIT, "path too long");
    sg_buf_dispose(&cand);
    return rc;
}

/* `fmt` formatted into a new string in the arena; NULL when out of memory. */
static const char *arena_printf(sg_trace *t, const char *fmt, ...) SG_PRINTF(2, 3);
static const char *arena_printf(sg_trace *t, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    if ((size_t)n < sizeof small)
        return sg_trace__strndup(t, small, (size_t)n);
    {
        char *big = sg_trace__alloc(t, (size_t)n + 1);
        if (!big)
            return NULL;
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        return big;
    }
}

/*
 * The traced value of input dim `d` (leaf number `leaf` of inputs.flat), from
 * the tracked fake tensor find_traced() picks. Sets `value`, `traced_source`
 * and the message source name `source` (docs/trace-format.md, section 2.3).
 */
static int map_dim(dirload *L, sg_input_dim *d, long leaf, const fake *fakes, size_t nfakes,
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
    if ((rc = find_traced(L, &f, &flat_args, d->path, leaf, fakes, nfakes, inputs)) != 0)
        return rc;
    /* torch rewrites strict mode's L['flat_args'][i] to the user's path in its messages */
    if (f && !flat_args)
        d->source = arena_printf(L->r.t, "%s.size()[%d]", f->source, d->dim);
    else
        d->source = arena_printf(L->r.t, "L%s.size()[%d]", d->path, d->dim);
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
    if ((rc = sg_trace__parse(&d->value, L->r.t, text, false, L->r.what, L->r.field, L->r.err)) != 0)
        return rc;
    if (sg_expr_sort(d->value) != SG_SORT_INT)
        return sg_trace__fail(&L->r, SG_EINVALID, "'%.60s' is not an integer expression", text);
    if (!(d->traced_source = arena_printf(L->r.t, "%s.size()[%d]", f->source, d->dim)))
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

/* Index of the inputs.flat leaf with `path`, -1 when none. */
static long leaf_of(const cJSON *flat, const char *path)
{
    const cJSON *it;
    long i = 0;
    cJSON_ArrayForEach(it, flat) {
        const char *p = sg__json_str(sg__json_get(it, "path"));
        if (p && strcmp(p, path) == 0)
            return i;
        i++;
    }
    return -1;
}

/* Serialize `j` into a compact JSON string in the arena (NULL for absent / null). */
static int keep_json(dirload *L, const char **out, const cJSON *j)
{
    sg_buf b;
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    sg_buf_init(&b, SG_TRACE_MAX_FILE);
    sg__json_put_value(&b, j);
    if (!b.failed)
        *out = sg_trace__strndup(L->r.t, b.data, b.len);
    sg_buf_dispose(&b);
    if (b.failed == SG_ELIMIT)
        return sg_trace__fail(&L->r, SG_ELIMIT, "too large or too deep");
    if (!*out)
        return sg_trace__oom(&L->r);
    return 0;
}

/* inputs, dynamic_shapes_flat and dynamic_shapes of case.json, and the traced dim values. */
static int load_inputs(dirload *L, const cJSON *cj, const cJSON *se)
{
    const cJSON *inputs, *flat = NULL, *dsf, *it;
    fake *fakes = NULL;
    size_t nfakes = 0, first;
    int rc, i = 0;

    L->r.what = L->cwhat;
    sg_trace__set_field(&L->r, "inputs");
    if ((rc = get_object(L, &inputs, cj, "inputs")) != 0)
        return rc;
    sg_trace__set_field(&L->r, "inputs.flat");
    if ((rc = get_array(L, &flat, inputs, "flat")) != 0)
        return rc;
    sg_trace__set_field(&L->r, "dynamic_shapes_flat");
    if ((rc = get_array(L, &dsf, cj, "dynamic_shapes_flat")) != 0)
        return rc;
    sg_trace__set_field(&L->r, "inputs");
    if ((rc = keep_json(L, &L->r.t->inputs_json, inputs)) != 0)
        return rc;
    sg_trace__set_field(&L->r, "dynamic_shapes");
    if ((rc = keep_json(L, &L->r.t->dynamic_shapes_json, sg__json_get(cj, "dynamic_shapes"))) != 0)
        return rc;
    L->r.t->has_flat_spec = dsf != NULL;
    {
        const cJSON *fx = sg__json_get(cj, "suggested_fixes");
        sg_trace__set_field(&L->r, "suggested_fixes");
        if (cJSON_IsArray(fx) && (rc = keep_json(L, &L->r.t->torch_fixes_json, fx)) != 0)
            return rc;
        fx = sg__json_get(cj, "error_type");
        if (sg__json_str(fx) && !(L->r.t->torch_error = sg_trace__strdup(L->r.t, sg__json_str(fx))))
            return sg_error_set(L->r.err, SG_ENOMEM, "out of memory");
    }

    if (dsf) {
        cJSON_ArrayForEach(it, dsf) {
            sg_input_dim *d;
            const char *path;
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d]", i);
            if (!cJSON_IsObject(it))
                return sg_trace__fail(&L->r, SG_EINVALID, "expected {path, dim, size, spec}");
            path = sg__json_str(sg__json_get(it, "path"));
            if (!path)
                return sg_trace__fail(&L->r, SG_EINVALID, "path: expected a string");
            if (!(d = sg_trace__add_input(L->r.t)) || !(d->path = sg_trace__strdup(L->r.t, path)))
                return sg_trace__oom(&L->r);
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].dim", i);
            if ((rc = read_dim(L, &d->dim, sg__json_get(it, "dim"))) != 0)
                return rc;
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].size", i);
            if (!sg__json_int(sg__json_get(it, "size"), &d->size))
                return sg_trace__fail(&L->r, SG_EINVALID, "expected an integer");
            sg_trace__set_field(&L->r, "dynamic_shapes_flat[%d].spec", i);
            if ((rc = load_spec(L, d, sg__json_get(it, "spec"))) != 0)
                return rc;
            i++;
        }
    } else {
        cJSON_ArrayForEach(it, flat) {
            const cJSON *shape = sg__json_get(it, "tensor"), *sz;
            const char *path = sg__json_str(sg__json_get(it, "path"));
            int dim = 0;
            sg_trace__set_field(&L->r, "inputs.flat[%d]", i++);
            if (!cJSON_IsObject(it) || !path)
                return sg_trace__fail(&L->r, SG_EINVALID, "expected {path, tensor | int, ...}");
            if (sg__json_is_none(shape))
                continue;
            if (!cJSON_IsArray(shape))
                return sg_trace__fail(&L->r, SG_EINVALID, "tensor: expected a shape array");
            cJSON_ArrayForEach(sz, shape) {
                sg_input_dim *d;
                if (!(d = sg_trace__add_input(L->r.t)) || !(d->path = sg_trace__strdup(L->r.t, path)))
                    return sg_trace__oom(&L->r);
                d->dim = dim++;
                d->kind = SG_SPEC_UNSET;
                if (!sg__json_int(sz, &d->size))
                    return sg_trace__fail(&L->r, SG_EINVALID, "tensor: expected integer sizes");
            }
        }
    }

    /* The traced values, from the main ShapeEnv's tracked fakes. */
    L->r.what = L->gwhat;
    if (se && (rc = load_fakes(L, se, &fakes, &nfakes)) != 0)
        goto cleanup;
    for (first = 0; first < L->r.t->ninputs; first++) {
        sg_input_dim *d = &L->r.t->inputs[first];
        if ((rc = map_dim(L, d, leaf_of(flat, d->path), fakes, nfakes, inputs)) != 0)
            goto cleanup;
    }
cleanup:
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

int sg_trace_load_dir(sg_trace **out, const char *dir, sg_error *err)
{
    dirload L;
    char name[64];
    char *gpath = NULL, *cpath = NULL;
    cJSON *gj = NULL, *cj = NULL;
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
    if ((rc = sg__json_load_file(&cj, cpath, L.cwhat, err)) != 0
        || (rc = sg__json_load_file(&gj, gpath, L.gwhat, err)) != 0)
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
    *out = L.r.t;
    L.r.t = NULL;
cleanup:
    if (rc)
        sg__error_one_line(err);
    sg_trace_free(L.r.t);
    cJSON_Delete(gj);
    cJSON_Delete(cj);
    sg_free(gpath);
    sg_free(cpath);
    return rc;
}

/* ---- spec overrides (sg_trace_override_dims, sg_trace_set_spec_json) ------------------- */

/*
 * Both rewrite the per-dim specs of a copy of the trace's inputs and swap it
 * in only when everything succeeded, so a failure leaves the spec as it was
 * (strings and parsed expressions already made stay in the arena and pool).
 */

/* Forget the spec of `d`: kind UNSET; where it is and what torch traced stay. */
static void clear_spec(sg_input_dim *d)
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
static void copy_spec(sg_input_dim *to, const sg_input_dim *from)
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

/*
 * One component of a pytree path at `p`: "['key']" / "[\"key\"]" (`*key`,
 * `*keylen`; returns 1), "[N]" (`*index`; returns 2); 0 at the end of the
 * path, -1 for anything else. `*next` is set past the component.
 */
static int path_component(const char *p, const char **key, size_t *keylen, long *index,
                          const char **next)
{
    if (*p == '\0')
        return 0;
    if (p[0] != '[')
        return -1;
    if (p[1] == '\'' || p[1] == '"') {
        const char *end = p + 2;
        while (*end && !(end[0] == p[1] && end[1] == ']'))
            end++;
        if (!*end)
            return -1;
        *key = p + 2;
        *keylen = (size_t)(end - (p + 2));
        *next = end + 2;
        return 1;
    } else {
        char *end;
        long v;
        if (p[1] < '0' || p[1] > '9')
            return -1;
        errno = 0;
        v = strtol(p + 1, &end, 10);
        if (errno || *end != ']')
            return -1;
        *index = v;
        *next = end + 1;
        return 2;
    }
}

/* Whether the pytree path `path` written dotted ("inputs.b.1") is `s[0..len)`. */
static bool dotted_equals(const char *path, const char *s, size_t len)
{
    const char *p = path, *key, *next;
    size_t keylen, at = 0;
    long index;
    int kind;
    char num[32];

    while ((kind = path_component(p, &key, &keylen, &index, &next)) > 0) {
        if (at > 0) {
            if (at >= len || s[at] != '.')
                return false;
            at++;
        }
        if (kind == 2) {
            snprintf(num, sizeof num, "%ld", index);
            key = num;
            keylen = strlen(num);
        }
        if (len - at < keylen || memcmp(s + at, key, keylen) != 0)
            return false;
        at += keylen;
        p = next;
    }
    return kind == 0 && at == len && at > 0;
}

/* Append the dotted form of `path` ("inputs.b.1"), or `path` itself when it has no such form. */
static void put_dotted(sg_buf *b, const char *path)
{
    const char *p = path, *key, *next;
    size_t keylen;
    long index;
    int kind, k = 0;
    sg_buf tmp;

    sg_buf_init(&tmp, 4096);
    while ((kind = path_component(p, &key, &keylen, &index, &next)) > 0) {
        if (k++)
            sg_buf_putc(&tmp, '.');
        if (kind == 1)
            sg_buf_append(&tmp, key, keylen);
        else
            sg_buf_printf(&tmp, "%ld", index);
        p = next;
    }
    if (kind == 0 && !tmp.failed && tmp.len)
        sg_buf_puts(b, tmp.data);
    else
        sg_buf_puts(b, path);
    sg_buf_dispose(&tmp);
}

/* "x (2 dims), y (1 dim)": the tensor inputs, cut short past about 120 bytes. */
static void put_input_list(sg_buf *b, const sg_input_dim *in, size_t n)
{
    size_t i = 0, start = b->len;
    int k = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && strcmp(in[j].path, in[i].path) == 0)
            j++;
        if (b->len - start > 120) {
            sg_buf_puts(b, ", ...");
            return;
        }
        if (k++)
            sg_buf_puts(b, ", ");
        put_dotted(b, in[i].path);
        sg_buf_printf(b, " (%zu dim%s)", j - i, j - i == 1 ? "" : "s");
        i = j;
    }
    if (k == 0)
        sg_buf_puts(b, "none");
}

/* The first input dim of the tensor at `path[0..len)` (bracketed exactly, or dotted) and its
 * number of dims; false when there is none. */
static bool find_tensor(const sg_input_dim *in, size_t n, const char *path, size_t len, size_t *first,
                        size_t *rank)
{
    size_t i, j;
    for (i = 0; i < n; i = j) {
        for (j = i; j < n && strcmp(in[j].path, in[i].path) == 0; j++)
            ;
        if ((strlen(in[i].path) == len && memcmp(in[i].path, path, len) == 0)
            || dotted_equals(in[i].path, path, len)) {
            *first = i;
            *rank = j - i;
            return true;
        }
    }
    return false;
}

/* A non-negative decimal integer `s[0..len)` into `*out`; false when it is not one or too large. */
static bool parse_nat(const char *s, size_t len, sg_int *out)
{
    sg_int v = 0;
    size_t i;
    if (len == 0 || len > 36)
        return false;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || !sg__mul(v, 10, &v) || !sg__add(v, s[i] - '0', &v))
            return false;
    }
    *out = v;
    return true;
}

/* Whether `s[0..len)` is an identifier. */
static bool is_ident(const char *s, size_t len)
{
    size_t i;
    if (len == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return false;
    for (i = 1; i < len; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')
              || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* `e` as A*root + B with integers A, B (only Add, Mul, integers and `root`); false otherwise
 * or on overflow. */
static bool affine_in(const sg_expr *e, const sg_expr *root, sg_int *a, sg_int *b)
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
            if (!affine_in(sg_expr_arg(e, i), root, &ea, &eb) || !sg__add(*a, ea, a)
                || !sg__add(*b, eb, b))
                return false;
        return true;
    case SG_MUL:
        *a = 0;
        *b = 1;
        for (i = 0; i < n; i++) {
            if (!affine_in(sg_expr_arg(e, i), root, &ea, &eb))
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
    if (!affine_in(e, root, &a, &b) || a < 1)
        return sg_trace__fail(R, SG_EINVALID, "%s: '%.60s' is not A*%.60s + B with integers A >= 1 and B", label,
                              text, root_name);
    return 0;
}

/* A*v + B into `*out`; false on overflow. */
static bool affine_at(sg_int a, sg_int b, sg_int v, sg_int *out)
{
    return sg__mul(a, v, out) && sg__add(*out, b, out);
}

/*
 * Recompute the derived bounds of DERIVED `d` from its root's bounds, as torch
 * does: min = A*root_min + B (torch's "<unavailable: ...>" note and -int_oo when
 * negative), max = A*root_max + B. Left alone when the expression is not affine
 * in the root. Returns 0, SG_ENOMEM, or SG_EINVALID on overflow.
 */
static int derive_bounds(sg_trace *t, sg_input_dim *d, sg_error *err)
{
    const sg_expr *root;
    sg_int a, b, v;
    char rmin[SG_INT_STRLEN];

    if (d->kind != SG_SPEC_DERIVED || !d->derived || !d->root_name)
        return 0;
    root = sg_expr_symbol(t->pool, d->root_name, strlen(d->root_name));
    if (!root)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (!affine_in(d->derived, root, &a, &b) || a < 1)
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
        d->min_unavailable = arena_printf(
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

/* The structured-form leaf of one dim's spec. */
static int put_struct_leaf(sg_buf *b, const sg_input_dim *d, sg_error *err)
{
    char *expr = NULL;
    int rc;

    switch (d->kind) {
    case SG_SPEC_DIM:
        sg_buf_puts(b, "{\"name\":");
        sg__json_put_str(b, d->name);
        sg_buf_puts(b, ",\"min\":");
        put_struct_bound(b, d->min, d->min_unavailable);
        sg_buf_puts(b, ",\"max\":");
        put_struct_bound(b, d->max, d->max_unavailable);
        return sg_buf_putc(b, '}');
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
        sg_buf_puts(b, ",\"min\":");
        put_struct_bound(b, d->root_min, NULL);
        sg_buf_puts(b, ",\"max\":");
        put_struct_bound(b, d->root_max, NULL);
        sg_buf_puts(b, "},\"min\":");
        put_struct_bound(b, d->min, d->min_unavailable);
        sg_buf_puts(b, ",\"max\":");
        put_struct_bound(b, d->max, d->max_unavailable);
        return sg_buf_putc(b, '}');
    case SG_SPEC_AUTO:
    case SG_SPEC_DYNAMIC:
        if (!d->has_bounds)
            return sg_buf_puts(b, d->kind == SG_SPEC_AUTO ? "\"AUTO\"" : "\"DYNAMIC\"");
        sg_buf_puts(b, d->kind == SG_SPEC_AUTO ? "{\"hint\":\"AUTO\",\"min\":" : "{\"hint\":\"DYNAMIC\",\"min\":");
        put_struct_bound(b, d->min, d->min_unavailable);
        sg_buf_puts(b, ",\"max\":");
        put_struct_bound(b, d->max, d->max_unavailable);
        return sg_buf_putc(b, '}');
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

/*
 * The structured spec of the tensors `members[0..m)` (indices of first dims in
 * `in`), whose paths all begin with the same `off` bytes: the tensor itself
 * when a path ends there, else the dict or list their next components make.
 */
static int put_struct_node(sg_buf *b, const sg_input_dim *in, size_t n, const size_t *members, size_t m,
                           size_t off, int depth, sg_error *err)
{
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
    kind = path_component(in[members[0]].path + off, &key, &keylen, &index, &next);
    if (kind <= 0)
        return sg_buf_puts(b, "null");
    if (!(sub = sg__malloc(m * sizeof *sub)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (kind == 1) { /* a dict: its keys in order of first appearance */
        sg_buf_putc(b, '{');
        for (i = 0; i < m && rc == 0; i++) {
            const char *ki, *kn;
            size_t kl, ns = 0;
            long ix;
            bool seen = false;
            if (path_component(in[members[i]].path + off, &ki, &kl, &ix, &kn) != 1)
                continue;
            for (j = 0; j < i && !seen; j++) {
                const char *kj, *nj;
                size_t klj;
                long ixj;
                seen = path_component(in[members[j]].path + off, &kj, &klj, &ixj, &nj) == 1 && klj == kl
                       && memcmp(kj, ki, kl) == 0;
            }
            if (seen)
                continue;
            for (j = i; j < m; j++) {
                const char *kj, *nj;
                size_t klj;
                long ixj;
                if (path_component(in[members[j]].path + off, &kj, &klj, &ixj, &nj) == 1 && klj == kl
                    && memcmp(kj, ki, kl) == 0)
                    sub[ns++] = members[j];
            }
            if (k++)
                sg_buf_putc(b, ',');
            {
                char *ks = sg__strndup(ki, kl);
                if (!ks) {
                    rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                    break;
                }
                sg__json_put_str(b, ks);
                sg_free(ks);
            }
            sg_buf_putc(b, ':');
            rc = put_struct_node(b, in, n, sub, ns, (size_t)(kn - in[members[i]].path), depth + 1, err);
        }
        if (rc == 0)
            sg_buf_putc(b, '}');
    } else { /* a list: indices 0 .. max, null where no tensor is */
        for (i = 0; i < m; i++)
            if (path_component(in[members[i]].path + off, &key, &keylen, &index, &next) == 2 && index > max_index)
                max_index = index;
        sg_buf_putc(b, '[');
        for (want = 0; want <= max_index && rc == 0 && !b->failed; want++) {
            size_t ns = 0, noff = 0;
            for (j = 0; j < m; j++)
                if (path_component(in[members[j]].path + off, &key, &keylen, &index, &next) == 2 && index == want) {
                    sub[ns++] = members[j];
                    noff = (size_t)(next - in[members[j]].path);
                }
            if (want)
                sg_buf_putc(b, ',');
            if (ns)
                rc = put_struct_node(b, in, n, sub, ns, noff, depth + 1, err);
            else
                sg_buf_puts(b, "null");
        }
        if (rc == 0)
            sg_buf_putc(b, ']');
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
static int rebuild_spec_json(sg_trace *t, const sg_input_dim *in, size_t n, const char **out, sg_error *err)
{
    cJSON *ij = NULL;
    const cJSON *names = NULL, *it;
    size_t *firsts = NULL, nf = 0, *sub = NULL, i;
    sg_buf b;
    int rc = 0, k = 0;

    *out = NULL;
    sg_buf_init(&b, SG_TRACE_MAX_FILE);
    if (t->inputs_json
        && sg__json_parse(&ij, t->inputs_json, strlen(t->inputs_json), SG_TRACE_MAX_FILE,
                          SG_TRACE_MAX_JSON_DEPTH, "inputs", err) == SG_ENOMEM) {
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
        rc = nf ? put_struct_node(&b, in, n, firsts, nf, 0, 0, err) : sg_buf_puts(&b, "null");
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
                if (path_component(in[firsts[i]].path, &key, &keylen, &index, &next) == 1
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
                rc = put_struct_node(&b, in, n, sub, ns, off, 0, err);
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
    cJSON_Delete(ij);
    sg_free(firsts);
    sg_free(sub);
    sg_buf_dispose(&b);
    return rc;
}

/* ---- --dim items ---- */

/* One parsed override item. */
typedef struct dim_item {
    const char *text;   /* as given */
    size_t input;       /* index into the trace's inputs */
    sg_input_dim spec;  /* the new spec fields */
    bool has_range;     /* DIM: NAME:MIN..MAX */
} dim_item;

/* SG_EINVALID (or `code`) "dim override 'TEXT': <message>". */
static int item_fail(sg_error *err, int code, const char *text, const char *fmt, ...) SG_PRINTF(4, 5);
static int item_fail(sg_error *err, int code, const char *text, const char *fmt, ...)
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

/* `s[0..len)` without white space around it. */
static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

/* "MIN..MAX" (each may be empty: `dmin` / +int_oo; MAX also "oo" or "int_oo"). */
static bool parse_range(const char *s, size_t len, sg_bound dmin, sg_bound *lo, sg_bound *hi)
{
    const char *dots = NULL, *mx;
    size_t i, nlo, nhi;

    for (i = 0; i + 1 < len; i++)
        if (s[i] == '.' && s[i + 1] == '.') {
            dots = s + i;
            break;
        }
    if (!dots)
        return false;
    nlo = (size_t)(dots - s);
    mx = dots + 2;
    nhi = len - nlo - 2;
    trim(&s, &nlo);
    trim(&mx, &nhi);
    memset(lo, 0, sizeof *lo);
    memset(hi, 0, sizeof *hi);
    if (nlo == 0)
        *lo = dmin;
    else if (!parse_nat(s, nlo, &lo->v))
        return false;
    if (nhi == 0 || (nhi == 2 && memcmp(mx, "oo", 2) == 0) || (nhi == 6 && memcmp(mx, "int_oo", 6) == 0))
        hi->inf = 1;
    else if (!parse_nat(mx, nhi, &hi->v))
        return false;
    return true;
}

/* Whether `name` can be a Dim name: an identifier that reads back as a bare symbol. */
static int check_name(sg_trace *t, const char *text, const char *name, size_t len, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    int rc;

    if (!is_ident(name, len))
        return item_fail(err, SG_EINVALID, text, "'%.*s' is not a name", (int)(len > 60 ? 60 : len), name);
    rc = sg_expr_parse(&e, t->pool, name, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc || sg_expr_kind(e) != SG_SYM)
        return item_fail(err, SG_EINVALID, text, "'%.*s' cannot be a Dim name (it reads as %s)",
                         (int)(len > 60 ? 60 : len), name, rc ? "something else" : "a constant or function");
    return 0;
}

/* The derived right-hand side `s[0..len)`: an affine A*root + B with A >= 1. */
static int parse_derived(sg_trace *t, dim_item *it, const char *s, size_t len, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL, **syms = NULL;
    size_t nsyms = 0;
    sg_int a, b;
    char *name = NULL;
    int rc;

    rc = sg_expr_parse(&e, t->pool, s, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc)
        return item_fail(err, SG_EINVALID, it->text,
                         "expected NAME[:MIN..MAX], A*NAME+B, AUTO, DYNAMIC, STATIC or a size (%s)",
                         perr.msg);
    if (sg_expr_sort(e) != SG_SORT_INT)
        return item_fail(err, SG_EINVALID, it->text, "'%.*s' is not an integer expression",
                         (int)(len > 60 ? 60 : len), s);
    if ((rc = sg_expr_symbols(&syms, &nsyms, t->pool, e, err)) != 0)
        return rc;
    if (nsyms != 1 || !affine_in(e, syms[0], &a, &b) || a < 1) {
        sg_free((void *)syms);
        return item_fail(err, SG_EINVALID, it->text,
                         "a derived dim must be A*NAME + B with integers A >= 1 and B, over one name");
    }
    it->spec.root_name = sg_trace__strdup(t, sg_expr_symbol_name(syms[0]));
    sg_free((void *)syms);
    if (!it->spec.root_name)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if ((rc = check_name(t, it->text, it->spec.root_name, strlen(it->spec.root_name), err)) != 0)
        return rc;
    if (a == 1 && b == 0) { /* just the name */
        it->spec.kind = SG_SPEC_DIM;
        it->spec.name = it->spec.root_name;
        it->spec.root_name = NULL;
        return 0;
    }
    if ((rc = sg_expr_print(&name, e, SG_SYNTAX_SYMPY, NULL, NULL, err)) != 0)
        return rc;
    it->spec.kind = SG_SPEC_DERIVED;
    it->spec.derived = e;
    it->spec.name = sg_trace__strdup(t, name);
    sg_free(name);
    if (!it->spec.name)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    return 0;
}

/* Parse one item: which input dim, and its new spec (bounds of bare names resolved later). */
static int parse_item(sg_trace *t, dim_item *it, const char *text, sg_error *err)
{
    const sg_bound zero = {0, 0}, ninf = {0, -1};
    const char *eq = strchr(text, '='), *lhs = text, *rhs, *dot = NULL, *colon;
    size_t nl, nr, first, rank, i;
    sg_int dim;
    sg_buf list;

    memset(it, 0, sizeof *it);
    it->text = text;
    clear_spec(&it->spec);
    if (!eq) { /* NAME:MIN..MAX alone: the range of a Dim (a derived dim's root) */
        const char *name = text, *c = strchr(text, ':');
        size_t nn = c ? (size_t)(c - text) : 0;
        int rc;
        trim(&name, &nn);
        if (!c || !is_ident(name, nn))
            return item_fail(err, SG_EINVALID, text, "expected INPUT.DIM=SPEC or NAME:MIN..MAX");
        if ((rc = check_name(t, text, name, nn, err)) != 0)
            return rc;
        it->input = SIZE_MAX;
        it->spec.kind = SG_SPEC_DIM;
        it->spec.has_bounds = true;
        it->has_range = true;
        if (!(it->spec.name = sg_trace__strndup(t, name, nn)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (!parse_range(c + 1, strlen(c + 1), zero, &it->spec.min, &it->spec.max))
            return item_fail(err, SG_EINVALID, text, "expected NAME:MIN..MAX (MIN, MAX optional)");
        return 0;
    }
    nl = (size_t)(eq - text);
    rhs = eq + 1;
    nr = strlen(rhs);
    trim(&lhs, &nl);
    trim(&rhs, &nr);

    /* which dim: a source name, or INPUT.DIM */
    for (i = 0; i < t->ninputs; i++) {
        const sg_input_dim *d = &t->inputs[i];
        if ((d->source && strlen(d->source) == nl && memcmp(d->source, lhs, nl) == 0)
            || (d->traced_source && strlen(d->traced_source) == nl && memcmp(d->traced_source, lhs, nl) == 0))
            break;
    }
    if (i < t->ninputs) {
        it->input = i;
    } else {
        for (i = nl; i > 0; i--)
            if (lhs[i - 1] == '.') {
                dot = lhs + i - 1;
                break;
            }
        if (!dot || dot == lhs)
            return item_fail(err, SG_EINVALID, text, "expected INPUT.DIM before '=' (e.g. x.0)");
        if (!parse_nat(dot + 1, nl - (size_t)(dot + 1 - lhs), &dim))
            return item_fail(err, SG_EINVALID, text, "'%.*s' is not a dim index", (int)(nl - (size_t)(dot + 1 - lhs)),
                             dot + 1);
        if (!find_tensor(t->inputs, t->ninputs, lhs, (size_t)(dot - lhs), &first, &rank)) {
            int rc;
            sg_buf_init(&list, 4096);
            put_input_list(&list, t->inputs, t->ninputs);
            rc = list.failed ? sg_error_set(err, SG_ENOMEM, "out of memory")
                             : item_fail(err, SG_EINVALID, text, "no tensor input '%.*s'; the inputs are %s",
                                         (int)((size_t)(dot - lhs) > 60 ? 60 : (size_t)(dot - lhs)), lhs, list.data);
            sg_buf_dispose(&list);
            return rc;
        }
        if (dim >= (sg_int)rank)
            return item_fail(err, SG_EINVALID, text, "'%.*s' has %zu dim%s (0..%zu), not %d",
                             (int)((size_t)(dot - lhs) > 60 ? 60 : (size_t)(dot - lhs)), lhs, rank,
                             rank == 1 ? "" : "s", rank - 1, (int)(dim > 99999 ? 99999 : dim));
        it->input = first + (size_t)dim;
    }

    /* the spec */
    if (nr > 4 && memcmp(rhs, "Dim.", 4) == 0) {
        rhs += 4;
        nr -= 4;
    }
    if (nr == 0)
        return item_fail(err, SG_EINVALID, text, "nothing after '='");
    colon = memchr(rhs, ':', nr);
    {
        size_t nh = colon ? (size_t)(colon - rhs) : nr;
        const char *head = rhs;
        trim(&head, &nh);
        if ((nh == 4 && memcmp(head, "AUTO", 4) == 0) || (nh == 7 && memcmp(head, "DYNAMIC", 7) == 0)) {
            it->spec.kind = head[0] == 'A' ? SG_SPEC_AUTO : SG_SPEC_DYNAMIC;
            if (colon) {
                it->spec.has_bounds = true;
                if (!parse_range(colon + 1, nr - nh - 1 - (size_t)(head - rhs), ninf, &it->spec.min, &it->spec.max))
                    return item_fail(err, SG_EINVALID, text, "expected %.*s:MIN..MAX", (int)nh, head);
            }
            return 0;
        }
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0 && colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0) {
            it->spec.kind = SG_SPEC_STATIC;
            return 0;
        }
        if (!colon && nh > 1 && head[0] == '-' && parse_nat(head + 1, nh - 1, &it->spec.static_size))
            return item_fail(err, SG_EINVALID, text, "a size cannot be negative");
        if (!colon && parse_nat(head, nh, &it->spec.static_size)) {
            it->spec.kind = SG_SPEC_STATIC;
            it->spec.has_static_size = true;
            return 0;
        }
        if (is_ident(head, nh)) {
            int rc;
            if ((rc = check_name(t, text, head, nh, err)) != 0)
                return rc;
            it->spec.kind = SG_SPEC_DIM;
            it->spec.has_bounds = true;
            if (!(it->spec.name = sg_trace__strndup(t, head, nh)))
                return sg_error_set(err, SG_ENOMEM, "out of memory");
            if (colon) {
                it->has_range = true;
                if (!parse_range(colon + 1, nr - (size_t)(colon + 1 - rhs), zero, &it->spec.min, &it->spec.max))
                    return item_fail(err, SG_EINVALID, text, "expected NAME:MIN..MAX (MIN, MAX optional)");
            }
            return 0;
        }
        if (colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
    }
    return parse_derived(t, it, rhs, nr, err);
}

/* The bounds of the Dim called `name`: an item's range, else the trace's (original)
 * definition as a Dim or as a derived dim's root, else the defaults 0 .. int_oo. */
static void resolve_dim(const sg_trace *t, const dim_item *its, size_t nits, const char *name, sg_bound *lo,
                        sg_bound *hi)
{
    size_t i;
    for (i = 0; i < nits; i++)
        if (its[i].spec.kind == SG_SPEC_DIM && its[i].has_range && strcmp(its[i].spec.name, name) == 0) {
            *lo = its[i].spec.min;
            *hi = its[i].spec.max;
            return;
        }
    for (i = 0; i < t->ninputs; i++)
        if (t->inputs[i].kind == SG_SPEC_DIM && t->inputs[i].name && strcmp(t->inputs[i].name, name) == 0) {
            *lo = t->inputs[i].min;
            *hi = t->inputs[i].max;
            return;
        }
    for (i = 0; i < t->ninputs; i++)
        if (t->inputs[i].kind == SG_SPEC_DERIVED && t->inputs[i].root_name
            && strcmp(t->inputs[i].root_name, name) == 0) {
            *lo = t->inputs[i].root_min;
            *hi = t->inputs[i].root_max;
            return;
        }
    memset(lo, 0, sizeof *lo);
    memset(hi, 0, sizeof *hi);
    hi->inf = 1;
}

static bool same_bounds(sg_bound a, sg_bound b) { return a.inf == b.inf && (a.inf || a.v == b.v); }

/* "2..100", "16..int_oo" */
static const char *range_text(char *buf, size_t cap, sg_bound lo, sg_bound hi)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    snprintf(buf, cap, "%s..%s", lo.inf ? "-int_oo" : sg_int_format(a, lo.v), hi.inf ? "int_oo" : sg_int_format(b, hi.v));
    return buf;
}

int sg_trace_override_dims(sg_trace *t, const char *const *items, size_t n, sg_error *err)
{
    dim_item *its = NULL;
    sg_input_dim *in = NULL;
    unsigned char *mark = NULL; /* per input: 1 set by an item, 2 its root or name redefined */
    const char *js = NULL;
    size_t i, j;
    int rc = 0;

    if (!t || (n && !items))
        return sg_error_set(err, SG_EINVALID, "no trace or no items");
    if (n == 0)
        return 0;
    its = sg__calloc(n, sizeof *its);
    in = sg__malloc((t->ninputs + 1) * sizeof *in);
    mark = sg__calloc(t->ninputs + 1, 1);
    if (!its || !in || !mark) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        if (!items[i]) {
            rc = sg_error_set(err, SG_EINVALID, "dim override %zu is NULL", i);
            goto cleanup;
        }
        if ((rc = parse_item(t, &its[i], items[i], err)) != 0)
            goto cleanup;
        for (j = 0; j < i; j++) {
            char r1[96], r2[96];
            if (its[j].input == its[i].input && its[i].input != SIZE_MAX) {
                rc = item_fail(err, SG_EINVALID, items[i], "that dim is also set by '%.60s'", items[j]);
                goto cleanup;
            }
            if (its[i].has_range && its[j].has_range && strcmp(its[i].spec.name, its[j].spec.name) == 0
                && (!same_bounds(its[i].spec.min, its[j].spec.min) || !same_bounds(its[i].spec.max, its[j].spec.max))) {
                rc = item_fail(err, SG_EINVALID, items[i], "Dim '%.40s' is given two ranges, %s and %s",
                               its[i].spec.name, range_text(r1, sizeof r1, its[j].spec.min, its[j].spec.max),
                               range_text(r2, sizeof r2, its[i].spec.min, its[i].spec.max));
                goto cleanup;
            }
        }
    }

    if (t->ninputs)
        memcpy(in, t->inputs, t->ninputs * sizeof *in);
    for (i = 0; i < n; i++) {
        sg_input_dim *d;
        if (its[i].input == SIZE_MAX)
            continue; /* a range only */
        d = &in[its[i].input];
        if (its[i].spec.kind == SG_SPEC_DIM && !its[i].has_range)
            resolve_dim(t, its, n, its[i].spec.name, &its[i].spec.min, &its[i].spec.max);
        if (its[i].spec.kind == SG_SPEC_DERIVED)
            resolve_dim(t, its, n, its[i].spec.root_name, &its[i].spec.root_min, &its[i].spec.root_max);
        copy_spec(d, &its[i].spec);
        mark[its[i].input] = 1;
    }
    /* a range given for a name redefines that Dim everywhere */
    for (i = 0; i < n; i++) {
        if (!its[i].has_range)
            continue;
        for (j = 0; j < t->ninputs; j++) {
            sg_input_dim *d = &in[j];
            if (mark[j] == 1)
                continue;
            if (d->kind == SG_SPEC_DIM && d->name && strcmp(d->name, its[i].spec.name) == 0) {
                d->min = its[i].spec.min;
                d->max = its[i].spec.max;
                d->min_unavailable = d->max_unavailable = NULL;
                mark[j] = 2;
            } else if (d->kind == SG_SPEC_DERIVED && d->root_name && strcmp(d->root_name, its[i].spec.name) == 0) {
                d->root_min = its[i].spec.min;
                d->root_max = its[i].spec.max;
                mark[j] = 2;
            }
        }
    }
    for (j = 0; j < t->ninputs; j++)
        if (mark[j] && in[j].kind == SG_SPEC_DERIVED && (rc = derive_bounds(t, &in[j], err)) != 0)
            goto cleanup;
    if ((rc = rebuild_spec_json(t, in, t->ninputs, &js, err)) != 0)
        goto cleanup;
    if (t->ninputs)
        memcpy(t->inputs, in, t->ninputs * sizeof *in);
    t->has_flat_spec = true;
    t->spec_overridden = true;
    t->dynamic_shapes_json = js;
cleanup:
    sg_free(its);
    sg_free(in);
    sg_free(mark);
    return rc;
}

/* ---- --spec files ---- */

/* Whether some tensor's path is `path` or lies below it. */
static bool path_known(const sg_input_dim *in, size_t n, const char *path, size_t len)
{
    size_t i;
    if (!path)
        return false;
    for (i = 0; i < n; i++)
        if (strncmp(in[i].path, path, len) == 0 && (in[i].path[len] == '\0' || in[i].path[len] == '['))
            return true;
    return false;
}

/* The array of a list or of a {"__tuple__": [...]}; NULL for anything else. */
static const cJSON *seq_of(const cJSON *j)
{
    const cJSON *tu;
    if (cJSON_IsArray(j))
        return j;
    tu = sg__json_get(j, "__tuple__");
    return cJSON_IsArray(tu) ? tu : NULL;
}

/* The spec of one tensor (`rank` dims at `dims`): null, {"0": leaf}, or a list of leaves. */
static int spec_tensor(dirload *L, sg_input_dim *dims, size_t rank, const cJSON *node, const char *path)
{
    const cJSON *seq = seq_of(node), *it;
    size_t i = 0;
    sg_int k;
    int rc;

    if (sg__json_is_none(node))
        return 0;
    sg_trace__set_field(&L->r, "%.160s", path);
    if (seq) {
        if ((size_t)cJSON_GetArraySize(seq) > rank)
            return sg_trace__fail(&L->r, SG_EINVALID, "the tensor has %zu dim%s, the spec gives %d", rank, rank == 1 ? "" : "s",
                        cJSON_GetArraySize(seq));
        cJSON_ArrayForEach(it, seq) {
            sg_trace__set_field(&L->r, "%.160s[%zu]", path, i);
            if ((rc = load_spec(L, &dims[i], it)) != 0)
                return rc;
            i++;
        }
        return 0;
    }
    if (!cJSON_IsObject(node))
        return sg_trace__fail(&L->r, SG_EINVALID, "expected a dict of dims, a list or null for a tensor");
    cJSON_ArrayForEach(it, node) {
        sg_trace__set_field(&L->r, "%.160s['%.20s']", path, it->string);
        if (!parse_nat(it->string, strlen(it->string), &k))
            return sg_trace__fail(&L->r, SG_EINVALID, "expected a dim index as the key");
        if (k >= (sg_int)rank)
            return sg_trace__fail(&L->r, SG_EINVALID, "the tensor has %zu dim%s, no dim %d", rank, rank == 1 ? "" : "s",
                        (int)(k > 99999 ? 99999 : k));
        if ((rc = load_spec(L, &dims[k], it)) != 0)
            return rc;
    }
    return 0;
}

/* The spec at pytree path `path` (a tensor's, or a container's) into `in`. */
static int spec_walk(dirload *L, sg_input_dim *in, size_t n, const cJSON *node, sg_buf *path, int depth)
{
    const cJSON *seq, *it, *kids;
    size_t first, rank, len = path->len;
    int rc = 0;
    long i = 0;

    if (path->failed)
        return path->failed == SG_ENOMEM ? sg_trace__oom(&L->r) : sg_trace__fail(&L->r, SG_ELIMIT, "path too long");
    if (depth > SG_TRACE_MAX_JSON_DEPTH)
        return sg_trace__fail(&L->r, SG_ELIMIT, "nested too deeply");
    if (find_tensor(in, n, path->data, len, &first, &rank))
        return spec_tensor(L, in + first, rank, node, path->data);
    if (sg__json_is_none(node))
        return 0;
    sg_trace__set_field(&L->r, "%.160s", path->data);
    seq = seq_of(node);
    if (!seq && !cJSON_IsObject(node))
        return sg_trace__fail(&L->r, SG_EINVALID, "not a tensor input (a dict, a list or null expected here)");
    kids = seq ? seq : node;
    cJSON_ArrayForEach(it, kids) {
        path->len = len;
        path->data[len] = '\0';
        if (seq)
            sg_buf_printf(path, "[%ld]", i++);
        else
            sg_buf_printf(path, "['%s']", it->string);
        if (path->failed)
            return path->failed == SG_ENOMEM ? sg_trace__oom(&L->r) : sg_trace__fail(&L->r, SG_ELIMIT, "path too long");
        if (!path_known(in, n, path->data, path->len)) {
            if (sg__json_is_none(it))
                continue; /* null for a non-tensor argument */
            sg_trace__set_field(&L->r, "%.160s", path->data);
            return sg_trace__fail(&L->r, SG_EINVALID, "no tensor input at this path");
        }
        if ((rc = spec_walk(L, in, n, it, path, depth + 1)) != 0)
            return rc;
    }
    path->len = len;
    path->data[len] = '\0';
    return 0;
}

int sg_trace_set_spec_json(sg_trace *t, const char *json, size_t len, const char *what, sg_error *err)
{
    dirload L;
    cJSON *sj = NULL, *ij = NULL;
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
    L.r.t = t;
    L.r.err = err;
    L.r.what = what;
    if ((rc = sg__json_parse(&sj, json, len, SG_TRACE_MAX_FILE, SG_TRACE_MAX_JSON_DEPTH, what, err)) != 0)
        goto cleanup;
    if (t->inputs_json
        && (rc = sg__json_parse(&ij, t->inputs_json, strlen(t->inputs_json), SG_TRACE_MAX_FILE,
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
        rc = sg_trace__oom(&L.r);
        goto cleanup;
    }
    if (t->ninputs)
        memcpy(in, t->inputs, t->ninputs * sizeof *in);
    for (i = 0; i < t->ninputs; i++)
        clear_spec(&in[i]);

    seq = seq_of(spec);
    sg_trace__set_field(&L.r, "(top level)");
    if (sg__json_is_none(spec)) {
        /* dynamic_shapes=None: every dim static (or, wrapped, unknown) */
    } else if (seq) {
        long k = 0;
        if (!names) {
            rc = sg_trace__fail(&L.r, SG_EINVALID, "a list spec needs the argument names, which the trace does not have");
            goto cleanup;
        }
        if (cJSON_GetArraySize(seq) > cJSON_GetArraySize(names)) {
            rc = sg_trace__fail(&L.r, SG_EINVALID, "%d entries for %d arguments", cJSON_GetArraySize(seq),
                      cJSON_GetArraySize(names));
            goto cleanup;
        }
        cJSON_ArrayForEach(it, seq) {
            const char *name = sg__json_str(cJSON_GetArrayItem(names, (int)k++));
            path.len = 0;
            sg_buf_printf(&path, "['%s']", name ? name : "?");
            if (path.failed)
                break;
            if (!path_known(in, t->ninputs, path.data, path.len)) {
                if (sg__json_is_none(it))
                    continue;
                sg_trace__set_field(&L.r, "[%ld] (%.60s)", k - 1, name ? name : "?");
                rc = sg_trace__fail(&L.r, SG_EINVALID, "not a tensor input (null expected)");
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
                if (!path_known(in, t->ninputs, path.data, path.len)) {
                    if (sg__json_is_none(it))
                        continue;
                    sg_trace__set_field(&L.r, "%.160s", path.data);
                    rc = sg_trace__fail(&L.r, SG_EINVALID, "not a tensor input (null expected)");
                    goto cleanup;
                }
                if ((rc = spec_walk(&L, in, t->ninputs, it, &path, 1)) != 0)
                    goto cleanup;
            }
        }
    } else {
        rc = sg_trace__fail(&L.r, SG_EINVALID, "expected a dict keyed by argument name, a list, or null");
        goto cleanup;
    }
    if (path.failed) {
        rc = path.failed == SG_ENOMEM ? sg_trace__oom(&L.r) : sg_trace__fail(&L.r, SG_ELIMIT, "path too long");
        goto cleanup;
    }
    for (i = 0; i < t->ninputs; i++)
        if (in[i].kind == SG_SPEC_DERIVED && (rc = derive_bounds(t, &in[i], err)) != 0)
            goto cleanup;
    if (!flat)
        for (i = 0; i < t->ninputs; i++)
            clear_spec(&in[i]);
    if ((rc = keep_json(&L, &js, spec)) != 0)
        goto cleanup;
    if (t->ninputs)
        memcpy(t->inputs, in, t->ninputs * sizeof *in);
    t->has_flat_spec = flat;
    t->spec_overridden = true;
    t->dynamic_shapes_json = js;
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
    cJSON_Delete(sj);
    cJSON_Delete(ij);
    return rc;
}

int sg_trace_load_spec(sg_trace *t, const char *path, sg_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (!t || !path)
        return sg_error_set(err, SG_EINVALID, "no trace or no spec file");
    rc = sg__read_file(&text, &len, path, SG_TRACE_MAX_FILE, path, err);
    if (rc == 0)
        rc = sg_trace_set_spec_json(t, text, len, path, err);
    sg_free(text);
    if (rc)
        sg__error_one_line(err);
    return rc;
}
