/*
 * trace.c - sg_trace (include/shapegate/trace.h): the in-memory trace, its
 * arena and builders (solver/trace_impl.h), the accessors, sg_trace_load(),
 * and the capture-folder adapter: a folder holding guards.json (torch's
 * ShapeEnv dumps) and case.json (inputs and the dynamic_shapes spec), as in
 * tests/corpus/cases/NAME/. docs/trace-format.md describes the mapping.
 */
#define _POSIX_C_SOURCE 200809L

#include "solver/trace_impl.h"

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

void sg_trace__one_line(sg_error *err)
{
    if (!err)
        return;
    for (char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* ---- accessors ------------------------------------------------------------------- */

sg_pool *sg_trace_pool(const sg_trace *t) { return t ? t->pool : NULL; }

const char *sg_trace_torch_version(const sg_trace *t) { return t ? t->torch_version : ""; }

bool sg_trace_strict(const sg_trace *t) { return t && t->strict; }

bool sg_trace_has_shape_env(const sg_trace *t) { return t && t->has_shape_env; }

bool sg_trace_has_flat_spec(const sg_trace *t) { return t && t->has_flat_spec; }

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
        sg_trace__one_line(err);
        return SG_EIO;
    }
    if (S_ISDIR(st.st_mode))
        return sg_trace_load_dir(out, path, err);
    rc = sg__read_file(&text, &len, path, SG_TRACE_MAX_FILE, path, err);
    if (rc == 0)
        rc = sg_trace__load_json_named(out, text, len, path, err);
    sg_free(text);
    if (rc)
        sg_trace__one_line(err);
    return rc;
}

/* ---- the capture-folder adapter ------------------------------------------------------ */

/* The state of one folder load. */
typedef struct dirload {
    sg_trace *t;
    sg_error *err;
    char gwhat[128];   /* "NAME/guards.json" */
    char cwhat[128];   /* "NAME/case.json" */
    const char *what;  /* the file being read now */
    char field[192];   /* the field being read now */
    int se_index;      /* index of the main ShapeEnv */
} dirload;

/* Record an SG_EINVALID (or `code`) error "<what>: <field>: <message>". */
static int fail(dirload *L, int code, const char *fmt, ...) SG_PRINTF(3, 4);
static int fail(dirload *L, int code, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_error_set(L->err, code, "%s: %s: %s", L->what, L->field, msg);
}

static int oom(dirload *L) { return fail(L, SG_ENOMEM, "out of memory"); }

/* Set the current field name with printf formatting. */
static void set_field(dirload *L, const char *fmt, ...) SG_PRINTF(2, 3);
static void set_field(dirload *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->field, sizeof L->field, fmt, ap);
    va_end(ap);
}

/* A JSON member that must be an object (or absent / null: `*out` NULL). */
static int get_object(dirload *L, const cJSON **out, const cJSON *parent, const char *key)
{
    const cJSON *j = sg__json_get(parent, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!cJSON_IsObject(j))
        return fail(L, SG_EINVALID, "expected an object");
    *out = j;
    return 0;
}

/* A JSON member that must be an array (or absent / null: `*out` NULL). */
static int get_array(dirload *L, const cJSON **out, const cJSON *parent, const char *key)
{
    const cJSON *j = sg__json_get(parent, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!cJSON_IsArray(j))
        return fail(L, SG_EINVALID, "expected an array");
    *out = j;
    return 0;
}

/* An optional string member copied into the arena (`*out` NULL when absent or null). */
static int get_string(dirload *L, const char **out, const cJSON *parent, const char *key)
{
    const cJSON *j = sg__json_get(parent, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!cJSON_IsString(j))
        return fail(L, SG_EINVALID, "expected a string");
    if (!(*out = sg_trace__strdup(L->t, j->valuestring)))
        return oom(L);
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
        return fail(L, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
    return fail(L, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"");
}

/* The symbol named by a JSON key or string, with its info record. */
static int symbol_of(dirload *L, sg_symbol_info **si, const char *name)
{
    const sg_expr *sym;
    int rc;

    *si = NULL;
    if (!name)
        return fail(L, SG_EINVALID, "expected a symbol name");
    rc = sg_trace__symbol_named(&sym, L->t, name, L->what, L->field, L->err);
    if (rc)
        return rc;
    if (!(*si = sg_trace__symbol(L->t, sym, NULL)))
        return oom(L);
    return 0;
}

/* var_to_range: {symbol: [lo, hi]}. */
static int load_ranges(dirload *L, const cJSON *se)
{
    const cJSON *tab, *it;
    int rc;

    set_field(L, "shape_envs[%d].var_to_range", L->se_index);
    if ((rc = get_object(L, &tab, se, "var_to_range")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        sg_bound lo, hi;
        set_field(L, "shape_envs[%d].var_to_range['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
            return fail(L, SG_EINVALID, "expected [lo, hi]");
        if ((rc = read_bound(L, &lo, cJSON_GetArrayItem(it, 0), NULL)) != 0
            || (rc = read_bound(L, &hi, cJSON_GetArrayItem(it, 1), NULL)) != 0)
            return rc > 0 ? fail(L, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"") : rc;
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

    set_field(L, "shape_envs[%d].var_to_sources", L->se_index);
    if ((rc = get_object(L, &tab, se, "var_to_sources")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        const char **srcs;
        size_t n = 0;
        set_field(L, "shape_envs[%d].var_to_sources['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        if (!cJSON_IsArray(it))
            return fail(L, SG_EINVALID, "expected an array of source names");
        srcs = sg_trace__alloc(L->t, ((size_t)cJSON_GetArraySize(it) + 1) * sizeof *srcs);
        if (!srcs)
            return oom(L);
        cJSON_ArrayForEach(s, it) {
            if (!cJSON_IsString(s))
                return fail(L, SG_EINVALID, "expected an array of source names");
            if (!(srcs[n++] = sg_trace__strdup(L->t, s->valuestring)))
                return oom(L);
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

    set_field(L, "shape_envs[%d].%s", L->se_index, key);
    if ((rc = get_object(L, &tab, se, key)) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        sg_int v;
        set_field(L, "shape_envs[%d].%s['%.40s']", L->se_index, key, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        if (!sg__json_int(it, &v))
            return fail(L, SG_EINVALID, "expected an integer hint");
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

    set_field(L, "shape_envs[%d].replacements", L->se_index);
    if ((rc = get_object(L, &tab, se, "replacements")) != 0)
        return rc;
    cJSON_ArrayForEach(it, tab) {
        sg_symbol_info *si;
        const sg_expr *e, *sym;
        const char *text = sg__json_str(cJSON_IsObject(it) ? sg__json_get(it, "expr") : it);
        set_field(L, "shape_envs[%d].replacements['%.40s']", L->se_index, it->string);
        if ((rc = symbol_of(L, &si, it->string)) != 0)
            return rc;
        sym = si->sym;
        if (!text)
            return fail(L, SG_EINVALID, "expected {\"expr\": text}");
        set_field(L, "shape_envs[%d].replacements['%.40s'].expr", L->se_index, it->string);
        if ((rc = sg_trace__parse(&e, L->t, text, false, L->what, L->field, L->err)) != 0)
            return rc;
        if (sg_expr_sort(e) == SG_SORT_BOOL)
            return fail(L, SG_EINVALID, "'%.60s' is not a number", text);
        /* The records may have moved while parsing added symbols: look it up again. */
        if (!(si = sg_trace__symbol(L->t, sym, NULL)))
            return oom(L);
        si->replacement = e;
    }
    return 0;
}

/* A list of symbol names; sets the flag at `flag_off` in each record. */
static int load_symbol_list(dirload *L, const cJSON *se, const char *key, size_t flag_off)
{
    const cJSON *arr, *it;
    int rc, i = 0;

    set_field(L, "shape_envs[%d].%s", L->se_index, key);
    if ((rc = get_array(L, &arr, se, key)) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        sg_symbol_info *si;
        set_field(L, "shape_envs[%d].%s[%d]", L->se_index, key, i++);
        if (!cJSON_IsString(it))
            return fail(L, SG_EINVALID, "expected a symbol name");
        if ((rc = symbol_of(L, &si, it->valuestring)) != 0)
            return rc;
        *(bool *)((char *)si + flag_off) = true;
    }
    return 0;
}

/* guards[]: {expr, user_loc, framework_loc, sloc, ...}. */
static int load_guards(dirload *L, const cJSON *se)
{
    const cJSON *arr, *it;
    int rc, i = 0;

    set_field(L, "shape_envs[%d].guards", L->se_index);
    if ((rc = get_array(L, &arr, se, "guards")) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        const sg_expr *e;
        const char *text, *uloc, *floc, *sloc;
        sg_guard *g;
        set_field(L, "shape_envs[%d].guards[%d]", L->se_index, i);
        if (!cJSON_IsObject(it))
            return fail(L, SG_EINVALID, "expected an object");
        set_field(L, "shape_envs[%d].guards[%d].user_loc", L->se_index, i);
        if ((rc = get_string(L, &uloc, it, "user_loc")) != 0)
            return rc;
        set_field(L, "shape_envs[%d].guards[%d].framework_loc", L->se_index, i);
        if ((rc = get_string(L, &floc, it, "framework_loc")) != 0)
            return rc;
        set_field(L, "shape_envs[%d].guards[%d].sloc", L->se_index, i);
        if ((rc = get_string(L, &sloc, it, "sloc")) != 0)
            return rc;
        set_field(L, "shape_envs[%d].guards[%d].expr", L->se_index, i);
        if ((rc = get_string(L, &text, it, "expr")) != 0)
            return rc;
        if (!text)
            return fail(L, SG_EINVALID, "missing");
        if ((rc = sg_trace__parse(&e, L->t, text, true, L->what, L->field, L->err)) != 0)
            return rc;
        if (!(g = sg_trace__add_guard(L->t)))
            return oom(L);
        g->expr = e;
        g->origin = SG_GUARD_SHAPE;
        g->text = text;
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

    set_field(L, "shape_envs[%d].deferred_runtime_asserts", L->se_index);
    if ((rc = get_object(L, &tab, se, "deferred_runtime_asserts")) != 0)
        return rc;
    cJSON_ArrayForEach(list, tab) {
        int i = 0;
        set_field(L, "shape_envs[%d].deferred_runtime_asserts['%.40s']", L->se_index, list->string);
        if (!cJSON_IsArray(list))
            return fail(L, SG_EINVALID, "expected an array");
        cJSON_ArrayForEach(it, list) {
            const sg_expr *e;
            const char *text, *msg;
            sg_guard *g;
            set_field(L, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d]", L->se_index,
                      list->string, i);
            if (!cJSON_IsObject(it))
                return fail(L, SG_EINVALID, "expected an object");
            set_field(L, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d].msg", L->se_index,
                      list->string, i);
            if ((rc = get_string(L, &msg, it, "msg")) != 0)
                return rc;
            set_field(L, "shape_envs[%d].deferred_runtime_asserts['%.40s'][%d].expr", L->se_index,
                      list->string, i);
            if ((rc = get_string(L, &text, it, "expr")) != 0)
                return rc;
            if (!text)
                return fail(L, SG_EINVALID, "missing");
            if ((rc = sg_trace__parse(&e, L->t, text, true, L->what, L->field, L->err)) != 0)
                return rc;
            if (!(g = sg_trace__add_guard(L->t)))
                return oom(L);
            g->expr = e;
            g->origin = SG_GUARD_RUNTIME_ASSERT;
            g->text = text;
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
    set_field(L, "shape_envs[%d].attribute_fallbacks", L->se_index);
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
            return fail(L, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
        if (note && !(*note = sg_trace__strdup(L->t, j->valuestring)))
            return oom(L);
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
            return fail(L, SG_EINVALID, "unknown spec '%.40s'", s);
        return 0;
    }
    if (cJSON_IsNumber(spec)) {
        if (!sg__json_int(spec, &d->static_size))
            return fail(L, SG_EINVALID, "expected an integer size");
        d->kind = SG_SPEC_STATIC;
        d->has_static_size = true;
        return 0;
    }
    if (!cJSON_IsObject(spec))
        return fail(L, SG_EINVALID, "expected null, a string, an integer or an object");
    if (sg__json_get(spec, "derived")) {
        const cJSON *root = sg__json_get(spec, "root");
        const char *expr = sg__json_str(sg__json_get(spec, "expr"));
        const char *name = sg__json_str(sg__json_get(spec, "derived"));
        char field[sizeof L->field];
        d->kind = SG_SPEC_DERIVED;
        d->has_bounds = true;
        if (!name || !cJSON_IsObject(root) || !sg__json_str(sg__json_get(root, "name")))
            return fail(L, SG_EINVALID,
                        "a derived dim needs \"derived\" (text) and \"root\" {name, min, max}");
        if (!expr)
            expr = name;
        if (!(d->name = sg_trace__strdup(L->t, name))
            || !(d->root_name = sg_trace__strdup(L->t, sg__json_str(sg__json_get(root, "name")))))
            return oom(L);
        snprintf(field, sizeof field, "%.180s.expr", L->field);
        if ((rc = sg_trace__parse(&d->derived, L->t, expr, false, L->what, field, L->err)) != 0)
            return rc;
        if (sg_expr_sort(d->derived) != SG_SORT_INT)
            return fail(L, SG_EINVALID, "expr: '%.60s' is not an integer expression", expr);
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
            return fail(L, SG_EINVALID, "hint: expected \"AUTO\" or \"DYNAMIC\"");
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
        if (!(d->name = sg_trace__strdup(L->t, sg__json_str(sg__json_get(spec, "name")))))
            return oom(L);
        /* torch's Dim() defaults: min 0, max int_oo. */
        if ((rc = spec_bound(L, &d->min, &d->min_unavailable, spec, "min", -1, zero)) != 0
            || (rc = spec_bound(L, &d->max, &d->max_unavailable, spec, "max", 1, pinf)) != 0)
            return rc;
        return 0;
    }
    return fail(L, SG_EINVALID, "unknown spec object (no \"name\", \"hint\" or \"derived\")");
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
    set_field(L, "shape_envs[%d].tracked_fakes", L->se_index);
    if ((rc = get_array(L, &arr, se, "tracked_fakes")) != 0)
        return rc;
    cJSON_ArrayForEach(it, arr) {
        const char *src = sg__json_str(sg__json_get(it, "source"));
        const cJSON *shape = sg__json_get(sg__json_get(it, "fake"), "tensor");
        set_field(L, "shape_envs[%d].tracked_fakes[%d]", L->se_index, i++);
        if (!src)
            return fail(L, SG_EINVALID, "expected {\"source\": name, \"fake\": ...}");
        /* Non-tensor fakes (symbolic ints) have no "tensor" shape. */
        if (!cJSON_IsArray(shape))
            continue;
        if (sg__grow((void **)out, &cap, *n + 1, sizeof **out))
            return oom(L);
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
        rc = cand.failed == SG_ENOMEM ? oom(L) : fail(L, SG_ELIMIT, "path too long");
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

    set_field(L, "tracked_fakes: %.120s", d->path);
    if ((rc = find_traced(L, &f, &flat_args, d->path, leaf, fakes, nfakes, inputs)) != 0)
        return rc;
    /* torch rewrites strict mode's L['flat_args'][i] to the user's path in its messages */
    if (f && !flat_args)
        d->source = arena_printf(L->t, "%s.size()[%d]", f->source, d->dim);
    else
        d->source = arena_printf(L->t, "L%s.size()[%d]", d->path, d->dim);
    if (!d->source)
        return oom(L);
    if (!f || d->dim >= cJSON_GetArraySize(f->shape))
        return 0;
    set_field(L, "shape_envs[%d].tracked_fakes['%.60s'].fake.tensor[%d]", L->se_index, f->source,
              d->dim);
    v = cJSON_GetArrayItem(f->shape, d->dim);
    text = sg__json_str(v);
    if (!text && sg__json_int(v, &n))
        text = sg_int_format(buf, n);
    if (!text)
        return fail(L, SG_EINVALID, "expected a size expression");
    if ((rc = sg_trace__parse(&d->value, L->t, text, false, L->what, L->field, L->err)) != 0)
        return rc;
    if (sg_expr_sort(d->value) != SG_SORT_INT)
        return fail(L, SG_EINVALID, "'%.60s' is not an integer expression", text);
    if (!(d->traced_source = arena_printf(L->t, "%s.size()[%d]", f->source, d->dim)))
        return oom(L);
    return 0;
}

/* A dim number of the spec: a non-negative int. */
static int read_dim(dirload *L, int *out, const cJSON *j)
{
    sg_int v;
    if (!sg__json_int(j, &v) || v < 0 || v > 65535)
        return fail(L, SG_EINVALID, "expected a dim number (0 .. 65535)");
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
        *out = sg_trace__strndup(L->t, b.data, b.len);
    sg_buf_dispose(&b);
    if (b.failed == SG_ELIMIT)
        return fail(L, SG_ELIMIT, "too large or too deep");
    if (!*out)
        return oom(L);
    return 0;
}

/* inputs, dynamic_shapes_flat and dynamic_shapes of case.json, and the traced dim values. */
static int load_inputs(dirload *L, const cJSON *cj, const cJSON *se)
{
    const cJSON *inputs, *flat = NULL, *dsf, *it;
    fake *fakes = NULL;
    size_t nfakes = 0, first;
    int rc, i = 0;

    L->what = L->cwhat;
    set_field(L, "inputs");
    if ((rc = get_object(L, &inputs, cj, "inputs")) != 0)
        return rc;
    set_field(L, "inputs.flat");
    if ((rc = get_array(L, &flat, inputs, "flat")) != 0)
        return rc;
    set_field(L, "dynamic_shapes_flat");
    if ((rc = get_array(L, &dsf, cj, "dynamic_shapes_flat")) != 0)
        return rc;
    set_field(L, "inputs");
    if ((rc = keep_json(L, &L->t->inputs_json, inputs)) != 0)
        return rc;
    set_field(L, "dynamic_shapes");
    if ((rc = keep_json(L, &L->t->dynamic_shapes_json, sg__json_get(cj, "dynamic_shapes"))) != 0)
        return rc;
    L->t->has_flat_spec = dsf != NULL;

    if (dsf) {
        cJSON_ArrayForEach(it, dsf) {
            sg_input_dim *d;
            const char *path;
            set_field(L, "dynamic_shapes_flat[%d]", i);
            if (!cJSON_IsObject(it))
                return fail(L, SG_EINVALID, "expected {path, dim, size, spec}");
            path = sg__json_str(sg__json_get(it, "path"));
            if (!path)
                return fail(L, SG_EINVALID, "path: expected a string");
            if (!(d = sg_trace__add_input(L->t)) || !(d->path = sg_trace__strdup(L->t, path)))
                return oom(L);
            set_field(L, "dynamic_shapes_flat[%d].dim", i);
            if ((rc = read_dim(L, &d->dim, sg__json_get(it, "dim"))) != 0)
                return rc;
            set_field(L, "dynamic_shapes_flat[%d].size", i);
            if (!sg__json_int(sg__json_get(it, "size"), &d->size))
                return fail(L, SG_EINVALID, "expected an integer");
            set_field(L, "dynamic_shapes_flat[%d].spec", i);
            if ((rc = load_spec(L, d, sg__json_get(it, "spec"))) != 0)
                return rc;
            i++;
        }
    } else {
        cJSON_ArrayForEach(it, flat) {
            const cJSON *shape = sg__json_get(it, "tensor"), *sz;
            const char *path = sg__json_str(sg__json_get(it, "path"));
            int dim = 0;
            set_field(L, "inputs.flat[%d]", i++);
            if (!cJSON_IsObject(it) || !path)
                return fail(L, SG_EINVALID, "expected {path, tensor | int, ...}");
            if (sg__json_is_none(shape))
                continue;
            if (!cJSON_IsArray(shape))
                return fail(L, SG_EINVALID, "tensor: expected a shape array");
            cJSON_ArrayForEach(sz, shape) {
                sg_input_dim *d;
                if (!(d = sg_trace__add_input(L->t)) || !(d->path = sg_trace__strdup(L->t, path)))
                    return oom(L);
                d->dim = dim++;
                d->kind = SG_SPEC_UNSET;
                if (!sg__json_int(sz, &d->size))
                    return fail(L, SG_EINVALID, "tensor: expected integer sizes");
            }
        }
    }

    /* The traced values, from the main ShapeEnv's tracked fakes. */
    L->what = L->gwhat;
    if (se && (rc = load_fakes(L, se, &fakes, &nfakes)) != 0)
        goto cleanup;
    for (first = 0; first < L->t->ninputs; first++) {
        sg_input_dim *d = &L->t->inputs[first];
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
    L.err = err;
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
    if ((rc = sg_trace__new(&L.t, err)) != 0)
        goto cleanup;

    L.what = L.cwhat;
    set_field(&L, "(top level)");
    if (!cJSON_IsObject(cj)) {
        rc = fail(&L, SG_EINVALID, "expected an object");
        goto cleanup;
    }
    L.what = L.gwhat;
    if (!cJSON_IsObject(gj)) {
        rc = fail(&L, SG_EINVALID, "expected an object");
        goto cleanup;
    }

    /* torch_version and strict from case.json (torch_version also in guards.json). */
    {
        const cJSON *tv = sg__json_get(cj, "torch_version"), *st = sg__json_get(cj, "strict");
        L.what = L.cwhat;
        set_field(&L, "torch_version");
        if (sg__json_is_none(tv))
            tv = sg__json_get(gj, "torch_version");
        if (!sg__json_is_none(tv)) {
            if (!cJSON_IsString(tv)) {
                rc = fail(&L, SG_EINVALID, "expected a string");
                goto cleanup;
            }
            if (!(L.t->torch_version = sg_trace__strdup(L.t, tv->valuestring))) {
                rc = oom(&L);
                goto cleanup;
            }
        }
        set_field(&L, "strict");
        if (!sg__json_is_none(st) && !cJSON_IsBool(st)) {
            rc = fail(&L, SG_EINVALID, "expected true or false");
            goto cleanup;
        }
        L.t->strict = cJSON_IsTrue(st);
    }

    /* The main ShapeEnv: shape_envs[main_shape_env_index]; none when the index is null or
     * torch never traced (only a "note"). */
    L.what = L.gwhat;
    set_field(&L, "shape_envs");
    if ((rc = get_array(&L, &envs, gj, "shape_envs")) != 0)
        goto cleanup;
    idx = sg__json_get(gj, "main_shape_env_index");
    if (envs && !sg__json_is_none(idx)) {
        sg_int k;
        set_field(&L, "main_shape_env_index");
        if (!sg__json_int(idx, &k) || k < 0 || k >= cJSON_GetArraySize(envs)) {
            rc = fail(&L, SG_EINVALID, "not the index of a shape_envs entry");
            goto cleanup;
        }
        L.se_index = (int)k;
        se = cJSON_GetArrayItem(envs, L.se_index);
        set_field(&L, "shape_envs[%d]", L.se_index);
        if (!cJSON_IsObject(se)) {
            rc = fail(&L, SG_EINVALID, "expected an object");
            goto cleanup;
        }
    }
    L.t->has_shape_env = se != NULL;
    if (se && (rc = load_shape_env(&L, se)) != 0)
        goto cleanup;
    if ((rc = load_inputs(&L, cj, se)) != 0)
        goto cleanup;
    *out = L.t;
    L.t = NULL;
cleanup:
    if (rc)
        sg_trace__one_line(err);
    sg_trace_free(L.t);
    cJSON_Delete(gj);
    cJSON_Delete(cj);
    sg_free(gpath);
    sg_free(cpath);
    return rc;
}
