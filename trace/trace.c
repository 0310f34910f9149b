/*
 * trace.c - sg_trace (include/shapegate/trace.h): the in-memory trace, its
 * arena and builders (trace/trace_impl.h), the accessors, sg_trace_load(),
 * and the pieces every reader shares (errors naming file and field, bounds,
 * kept JSON). The adapters are in trace/adapters/, the spec side in spec.c,
 * paths.c and dims.c.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace/adapters/torch_trace.h"
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
    atomic_init(&t->refs, 1);
    *out = t;
    return 0;
}

sg_trace *sg_trace__ref(const sg_trace *t)
{
    sg_trace *m = (sg_trace *)t; /* the count is the one mutable field */
    if (m)
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

void sg_trace_free(sg_trace *t)
{
    sg_trace_block *b, *next;
    sg_trace_parsed *pj;

    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (b = t->mem; b; b = next) {
        next = b->next;
        sg_free(b);
    }
    SG_FREE_ALL(t->symbols, t->guards, t->inputs, t->sym_map);
    if ((pj = atomic_load_explicit(&t->parsed, memory_order_acquire)) != NULL) {
        sg__json_doc_free(pj->spec_doc);
        sg__json_doc_free(pj->inputs_doc);
        sg_free(pj);
    }
    sg_pool_free(t->pool);
    sg_trace_free(t->origin);
    sg_free(t);
}

/* `text` (NULL: none) as a document into *doc; its root, or NULL when absent or not JSON. */
static const cJSON *parse_or_null(const char *text, sg__json_doc **doc)
{
    const cJSON *root = NULL;
    sg_error err = SG_ERROR_INIT;
    *doc = NULL;
    if (text && sg__json_doc_parse(doc, &root, text, strlen(text), SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, "spec",
                                   &err) != 0)
        return NULL;
    return root;
}

const sg_trace_parsed *sg_trace__parsed(const sg_trace *t)
{
    sg_trace *w = (sg_trace *)t; /* the cache only: what the trace says does not change */
    sg_trace_parsed *h = atomic_load_explicit(&w->parsed, memory_order_acquire), *expected = NULL;

    if (h && h->spec_text == t->dynamic_shapes_json && h->inputs_text == t->inputs_json)
        return h;
    if (!(h = sg__calloc(1, sizeof *h)))
        return NULL;
    h->spec_text = t->dynamic_shapes_json;
    h->inputs_text = t->inputs_json;
    h->spec = parse_or_null(h->spec_text, &h->spec_doc);
    h->inputs = parse_or_null(h->inputs_text, &h->inputs_doc);
    h->kept = atomic_compare_exchange_strong_explicit(&w->parsed, &expected, h, memory_order_acq_rel,
                                                      memory_order_acquire);
    return h;
}

void sg_trace__parsed_release(const sg_trace_parsed *h)
{
    sg_trace_parsed *m = (sg_trace_parsed *)h;
    if (!m || m->kept)
        return;
    sg__json_doc_free(m->spec_doc);
    sg__json_doc_free(m->inputs_doc);
    sg_free(m);
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
    if (sg__grow_zeroed((void **)&t->sym_map, &t->nsym_map, (size_t)idx + 1, sizeof *t->sym_map))
        return NULL;
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
    return sg__push((void **)&t->guards, &t->cguards, &t->nguards, sizeof *t->guards);
}

sg_input_dim *sg_trace__add_input(sg_trace *t)
{
    return sg__push((void **)&t->inputs, &t->cinputs, &t->ninputs, sizeof *t->inputs);
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

const sg_pool *sg_trace_pool(const sg_trace *t) { return t ? t->pool : NULL; }

const char *sg_trace_name(const sg_trace *t) { return t ? t->name : NULL; }

const char *sg_trace_torch_version(const sg_trace *t) { return t ? t->torch_version : ""; }

const char *sg_trace_torch_fixes_json(const sg_trace *t) { return t ? t->torch_fixes_json : NULL; }

const char *sg_trace_torch_error(const sg_trace *t) { return t ? t->torch_error : NULL; }
const char *sg_trace_torch_error_message(const sg_trace *t) { return t ? t->torch_error_message : NULL; }

bool sg_trace_torch_failed_data_dependent(const sg_trace *t)
{
    /* the exception itself, or a UserError wrapping it (strict mode): its message says so */
    if (!t || !t->torch_error)
        return false;
    return strstr(t->torch_error, "DataDependent") != NULL
           || (t->torch_error_message && strstr(t->torch_error_message, "Could not guard on data-dependent expression"));
}

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

int sg_trace_load(sg_trace **out, const char *path, sg_error *err) { return sg_trace_load_frame(out, path, 0, err); }

int sg_trace_load_frame(sg_trace **out, const char *path, unsigned frame, sg_error *err)
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
    if (S_ISDIR(st.st_mode) && sg_trace__is_torch_trace_dir(path))
        return sg_trace_load_torch_trace(out, path, frame, err);
    if (!S_ISDIR(st.st_mode)) {
        switch (sg_trace__sniff_file(path)) {
        case SG_TRACE_FILE_LOG:
            return sg_trace_load_torch_trace(out, path, frame, err);
        case SG_TRACE_FILE_PT2:
            rc = sg_error_set(err, SG_EINVALID, "%s: a .pt2 archive, not a trace: use `shapegate verify` or "
                              "`shapegate inspect` on it", path);
            sg__error_one_line(err);
            return rc;
        case SG_TRACE_FILE_UNKNOWN:
            if (S_ISREG(st.st_mode)) {
                rc = sg_error_set(err, SG_EINVALID, "%s: not an input shapegate reads; it takes a JSON trace "
                                  "(`python3 -m shapegate capture`), a capture folder, or a TORCH_TRACE folder or "
                                  "log (.log, .log.gz)", path);
                sg__error_one_line(err);
                return rc;
            }
            break;
        case SG_TRACE_FILE_JSON:
            break;
        }
    }
    if (frame > 1) {
        rc = sg_error_set(err, SG_EINVALID, "%s: --frame %u: only a TORCH_TRACE log has several export frames",
                          path, frame);
        sg__error_one_line(err);
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        char probe[4096];
        struct stat st2;
        bool capture = false;
        snprintf(probe, sizeof probe, "%s/guards.json", path);
        capture |= stat(probe, &st2) == 0;
        snprintf(probe, sizeof probe, "%s/case.json", path);
        capture |= stat(probe, &st2) == 0;
        if (!capture) {
            rc = sg_error_set(err, SG_EIO, "%s: neither a capture folder (guards.json, case.json) nor a TORCH_TRACE "
                              "folder (*.log, *.log.gz)", path);
            sg__error_one_line(err);
            return rc;
        }
        return sg_trace_load_dir(out, path, err);
    }
    rc = sg__read_file(&text, &len, path, SG_TRACE_MAX_FILE, path, err);
    if (rc == 0)
        rc = sg_trace__load_json_named(out, text, len, path, err);
    if (rc == 0 && !((*out)->name = sg_trace__strdup(*out, path))) {
        sg_trace_free(*out);
        *out = NULL;
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
    }
    sg_free(text);
    if (rc)
        sg__error_one_line(err);
    return rc;
}

/* ---- readers' shared pieces (trace_impl.h) ------------------------------------------- */

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

/* A range bound of var_to_range or of the spec: an integer, "oo" / "-oo" (also
 * "int_oo" / "-int_oo"). Returns 1 for any other string (left to the caller). */
int sg_trace__get_member(sg_trace__reader *R, const cJSON **out, const cJSON *obj, const char *key,
                         cJSON_bool (*is)(const cJSON *), const char *expected, bool name_key)
{
    const cJSON *j = sg__json_get(obj, key);
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    if (!is(j))
        return sg_trace__fail(R, SG_EINVALID, "%s%sexpected %s", name_key ? key : "", name_key ? ": " : "",
                              expected);
    *out = j;
    return 0;
}

int sg_trace__read_bound(sg_trace__reader *R, sg_bound *b, const cJSON *j, const char *key)
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
        return sg_trace__fail(R, SG_EINVALID, "%s: expected an integer, \"oo\" or \"-oo\"", key);
    return sg_trace__fail(R, SG_EINVALID, "expected an integer, \"oo\" or \"-oo\"");
}

/* Serialize `j` into a compact JSON string in the arena (NULL for absent / null). */
int sg_trace__keep_json(sg_trace__reader *R, const char **out, const cJSON *j)
{
    sg_buf b;
    *out = NULL;
    if (sg__json_is_none(j))
        return 0;
    sg_buf_init(&b, SG_TRACE_MAX_FILE);
    sg__json_put_value(&b, j);
    if (!b.failed)
        *out = sg_trace__strndup(R->t, b.data, b.len);
    sg_buf_dispose(&b);
    if (b.failed == SG_ELIMIT)
        return sg_trace__fail(R, SG_ELIMIT, "too large or too deep");
    if (!*out)
        return sg_trace__oom(R);
    return 0;
}

int sg_trace__read_replacement(sg_trace__reader *R, const char *text, const sg_expr **out)
{
    char field[sizeof R->field + 16];
    int rc;
    snprintf(field, sizeof field, "%s.replacement", R->field);
    if ((rc = sg_trace__parse(out, R->t, text, false, R->what, field, R->err)) != 0)
        return rc;
    if (sg_expr_sort(*out) == SG_SORT_BOOL)
        return sg_trace__fail(R, SG_EINVALID, "replacement: '%.60s' is not a number", text);
    return 0;
}

int sg_trace__read_guard(sg_trace__reader *R, const char *text, sg_guard_origin origin, sg_guard **out)
{
    char field[sizeof R->field + 8];
    const sg_expr *e;
    sg_guard *g;
    int rc;
    snprintf(field, sizeof field, "%s.expr", R->field);
    if ((rc = sg_trace__parse(&e, R->t, text, true, R->what, field, R->err)) != 0)
        return rc;
    if (!(g = sg_trace__add_guard(R->t)))
        return sg_trace__oom(R);
    g->expr = e;
    g->origin = origin;
    g->text = text;
    if (out)
        *out = g;
    return 0;
}

int sg_trace__read_int_expr(sg_trace__reader *R, const sg_expr **out, const char *text, const char *key)
{
    char field[sizeof R->field + 16];
    int rc;
    if (key)
        snprintf(field, sizeof field, "%s.%s", R->field, key);
    if ((rc = sg_trace__parse(out, R->t, text, false, R->what, key ? field : R->field, R->err)) != 0)
        return rc;
    if (sg_expr_sort(*out) != SG_SORT_INT)
        return sg_trace__fail(R, SG_EINVALID, "%s%s'%.60s' is not an integer expression", key ? key : "",
                              key ? ": " : "", text);
    return 0;
}

int sg_trace__read_value(sg_trace__reader *R, sg_input_dim *d, const char *text)
{
    return sg_trace__read_int_expr(R, &d->value, text, "value");
}

int sg_trace__add_symbol(sg_trace__reader *R, const sg_symbol_info *info, const char *name)
{
    sg_symbol_info *si;
    bool added;

    if (!(si = sg_trace__symbol(R->t, info->sym, &added)))
        return sg_trace__oom(R);
    if (!added)
        return sg_trace__fail(R, SG_EINVALID, "symbol '%.40s' listed twice", name);
    *si = *info;
    return 0;
}

/* `fmt` formatted into a new string in the arena; NULL when out of memory. */
const char *sg_trace__printf(sg_trace *t, const char *fmt, ...)
{
    char small[512], *s;
    const char *r;
    size_t n;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = sg__vformat(small, sizeof small, &s, &n, fmt, ap);
    va_end(ap);
    if (rc)
        return NULL;
    r = sg_trace__strndup(t, s, n);
    if (s != small)
        sg_free(s);
    return r;
}

/* ---- the plain-typed accessors (trace.h) --------------------------------------------------- */

static const sg_input_dim *input_at(const sg_trace *t, size_t i) { return t && i < t->ninputs ? &t->inputs[i] : NULL; }

size_t sg_trace_input_count(const sg_trace *t) { return t ? t->ninputs : 0; }

const char *sg_trace_input_path(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->path : NULL;
}

int sg_trace_input_dim(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->dim : 0;
}

const char *sg_trace_input_source(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->source : NULL;
}

bool sg_trace_input_size(const sg_trace *t, size_t i, sg_num *out)
{
    const sg_input_dim *d = input_at(t, i);
    if (!d)
        return false;
    if (out)
        *out = sg__num(d->size);
    return true;
}

sg_spec_kind sg_trace_input_spec(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->kind : SG_SPEC_UNSET;
}

const char *sg_trace_input_spec_name(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->name : NULL;
}

bool sg_trace_input_spec_range(const sg_trace *t, size_t i, sg_num *min, sg_num *max)
{
    const sg_input_dim *d = input_at(t, i);
    if (!d || !d->has_bounds)
        return false;
    if (min)
        *min = sg__num_bound(d->min);
    if (max)
        *max = sg__num_bound(d->max);
    return true;
}

const sg_expr *sg_trace_input_value(const sg_trace *t, size_t i)
{
    const sg_input_dim *d = input_at(t, i);
    return d ? d->value : NULL;
}

size_t sg_trace_symbol_count(const sg_trace *t) { return t ? t->nsymbols : 0; }

const sg_expr *sg_trace_symbol_at(const sg_trace *t, size_t i)
{
    return t && i < t->nsymbols ? t->symbols[i].sym : NULL;
}

bool sg_trace_symbol_range(const sg_trace *t, size_t i, sg_num *lo, sg_num *hi)
{
    if (!t || i >= t->nsymbols)
        return false;
    if (lo)
        *lo = sg__num_bound(t->symbols[i].lo);
    if (hi)
        *hi = sg__num_bound(t->symbols[i].hi);
    return true;
}

size_t sg_trace_guard_count(const sg_trace *t) { return t ? t->nguards : 0; }

const sg_expr *sg_trace_guard_expr(const sg_trace *t, size_t i)
{
    return t && i < t->nguards ? t->guards[i].expr : NULL;
}

const char *sg_trace_guard_text(const sg_trace *t, size_t i)
{
    return t && i < t->nguards ? t->guards[i].text : NULL;
}

const char *sg_trace_guard_user_loc(const sg_trace *t, size_t i)
{
    return t && i < t->nguards ? t->guards[i].user_loc : NULL;
}

bool sg_trace_guard_is_runtime_assert(const sg_trace *t, size_t i)
{
    return t && i < t->nguards && t->guards[i].origin == SG_GUARD_RUNTIME_ASSERT;
}
