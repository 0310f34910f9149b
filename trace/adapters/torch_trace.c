/*
 * torch_trace.c - the TORCH_TRACE adapter: torch's structured trace log (a
 * TORCH_TRACE directory, or one .log / .log.gz file of it) into one trace per
 * export frame.
 *
 * A log is glog lines "V1201 23:48:54.940000 17641 file.py:22] {json}", each
 * optionally followed by payload lines starting with a tab. Of the records,
 * these are read (docs/trace-format.md §3 has the mapping):
 *
 *   str                            file-name table for stacks
 *   artifact torch_version         the torch version (payload; torch >= 2.7)
 *   describe_tensor/_source        the input tensors: sizes and sources
 *   create_symbol                  a backed symbol: name, hint, range, source
 *   create_unbacked_symbol         an unbacked symbol: name, range
 *   guard_added_fast, guard_added  a guard (or, from defer_runtime_assert, a runtime assert)
 *   symbolic_shape_specialization  a symbol specialised to a constant
 *   compilation_metrics            the exception type of a failed strict export
 *   artifact make_fx_fail_partial  a non-strict trace that stopped: the graph up to the node it
 *                                  stopped at (payload; the log records no exception)
 *
 * Frames: records with a frame_id (strict export: dynamo) belong to that
 * frame; the others (non-strict) to the describer (one MetaConverter per
 * export) of the latest describe_* record. A later attempt of one dynamo
 * frame replaces the earlier one. Frames without any tensor, symbol or guard
 * are not counted.
 *
 * The selected frame is built into a trace directly, through the trace
 * module's builders (torch_trace_frame.c), in the order and with the checks of
 * the v1 JSON reader (trace/adapters/json.c), so a log and the v1 trace
 * `shapegate trace` prints of it give the same model.
 * Soundness: every record that could carry a guard must be read; a line that
 * is not a glog record or not JSON fails the whole load (SG_EINVALID) rather
 * than being skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "trace/adapters/torch_trace.h"
#include "trace/adapters/torch_trace_impl.h"
#include "util/json.h"

/* Longest log line read (a record with its stack), and most log files in a directory. */
#define MAX_LINE ((size_t)64 << 20)
#define MAX_FILES 4096
/* Largest index of the file-name table ("str" records; one per source file torch saw). */
#define MAX_STRS (1 << 20)

typedef struct tt_state {
    sg_error *err;
    const char *path;   /* the file being read (messages) */
    unsigned long line; /* its line number */
    unsigned want;      /* frame wanted (1-based; 0: the only one) */
    unsigned nframes;   /* frames with content so far */
    bool have_key, content;
    long key_frame, key_compile, key_attempt, key_describer;
    bool collecting;    /* the current frame is the wanted one */
    tt_frame f;
    char **strs;        /* file-name table */
    size_t nstrs, cstrs;
    char *torch_version;
    enum { PAYLOAD_NONE, PAYLOAD_VERSION, PAYLOAD_FAIL_PARTIAL } payload_kind; /* of the next payload lines */
    /* make_fx_fail_partial: the last node line of the graph and the "# File:" line above it,
     * clipped (the graph itself is not kept: it can be as long as the model) */
    char partial_node[320], partial_where[420];
    sg_buf payload;
} tt_state;

/* ---- small helpers ------------------------------------------------------------------- */

static int fail(tt_state *S, int code, const char *fmt, ...) SG_PRINTF(3, 4);
static int fail(tt_state *S, int code, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (S->line)
        return sg_error_set(S->err, code, "%s:%lu: %s", S->path, S->line, msg);
    return sg_error_set(S->err, code, "%s: %s", S->path, msg);
}

static int oom(tt_state *S) { return sg_error_set(S->err, SG_ENOMEM, "out of memory"); }

/* A decimal integer with an optional '-' (what the v1 reader takes as an exact integer). */
static bool is_int_text(const char *s)
{
    if (!s)
        return false;
    if (*s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static void free_frame(tt_frame *f)
{
    size_t i;
    for (i = 0; i < f->nsyms; i++) {
        sg_free(f->syms[i].name);
        sg_free(f->syms[i].lo);
        sg_free(f->syms[i].hi);
        sg_free(f->syms[i].hint);
        sg_free(f->syms[i].source);
        sg_free(f->syms[i].repl);
    }
    for (i = 0; i < f->nguards; i++) {
        sg_free(f->guards[i].expr);
        sg_free(f->guards[i].user_loc);
    }
    for (i = 0; i < f->ntensors; i++) {
        sg_free(f->tensors[i].source);
        sg_free(f->tensors[i].sizes);
    }
    sg_free(f->syms);
    sg_free(f->guards);
    sg_free(f->tensors);
    sg_free(f->error);
    sg_free(f->error_message);
    memset(f, 0, sizeof *f);
}

/* An integer member, or `dflt` when absent or not an integer. */
static long get_long(const cJSON *obj, const char *key, long dflt)
{
    sg_int v;
    if (!sg__json_int(sg__json_get(obj, key), &v) || v < -2147483647 || v > 2147483647)
        return dflt;
    return (long)v;
}

/* ---- frames ---------------------------------------------------------------------------- */

/*
 * Place the record `rec` (top-level object) in a frame: a different frame_id /
 * compile id, or (without a frame_id) a different describer `describer` (-1:
 * not a describe_* record), starts a new frame once the current one has content.
 */
static void enter_frame(tt_state *S, const cJSON *rec, long describer)
{
    long fid = get_long(rec, "frame_id", -1), cid = get_long(rec, "frame_compile_id", -1),
         att = get_long(rec, "attempt", 0);
    bool same;

    if (fid < 0 && describer < 0 && S->have_key)
        return; /* a record of the current non-strict frame */
    if (!S->have_key) {
        same = false;
    } else if (fid >= 0) {
        same = fid == S->key_frame && cid == S->key_compile;
    } else {
        same = S->key_frame < 0 && describer == S->key_describer;
    }
    if (same && fid >= 0 && att != S->key_attempt) {
        /* dynamo restarted the frame: the later attempt is the one that counts */
        S->key_attempt = att;
        if (S->collecting) {
            bool strict = S->f.strict;
            free_frame(&S->f);
            S->f.strict = strict;
        }
        return;
    }
    if (same || (S->have_key && !S->content && (fid >= 0 || describer >= 0))) {
        /* same frame, or the current one is still empty: take the new key */
        S->have_key = true;
        S->key_frame = fid;
        S->key_compile = cid;
        S->key_attempt = att;
        if (describer >= 0)
            S->key_describer = describer;
        return;
    }
    S->have_key = true;
    S->key_frame = fid;
    S->key_compile = cid;
    S->key_attempt = att;
    S->key_describer = describer;
    S->content = false;
    S->collecting = false;
}

/* The current frame gets its first content: count it, and collect it when it is the one wanted. */
static void mark_content(tt_state *S, const cJSON *rec)
{
    if (S->content)
        return;
    S->content = true;
    S->nframes++;
    S->collecting = S->want ? S->nframes == S->want : S->nframes == 1;
    if (S->collecting)
        S->f.strict = get_long(rec, "frame_id", -1) >= 0;
}

/* ---- records ----------------------------------------------------------------------------- */

/* "[2, int_oo]" into `lo`, `hi` (new strings; "oo" read as int_oo); false when malformed. */
static bool parse_range(const char *vr, char **lo, char **hi)
{
    const char *comma, *end;
    char *a, *b;
    size_t n;

    *lo = *hi = NULL;
    if (!vr || vr[0] != '[' || !(comma = strchr(vr, ',')) || !(end = strrchr(vr, ']')) || end < comma)
        return false;
    a = sg__strndup(vr + 1, (size_t)(comma - vr - 1));
    b = comma + 1 < end ? sg__strndup(comma + 1, (size_t)(end - comma - 1)) : NULL;
    if (!a || !b) {
        sg_free(a);
        sg_free(b);
        return false;
    }
    /* trim spaces */
    memmove(b, b + strspn(b, " "), strlen(b + strspn(b, " ")) + 1);
    n = strlen(a);
    while (n && a[n - 1] == ' ')
        a[--n] = '\0';
    n = strlen(b);
    while (n && b[n - 1] == ' ')
        b[--n] = '\0';
    *lo = a;
    *hi = b;
    return true;
}

/* A bound as the v1 trace writes it: an integer, or "int_oo" / "-int_oo"; NULL otherwise. */
static const char *bound_text(const char *s)
{
    if (!s)
        return NULL;
    if (strcmp(s, "oo") == 0 || strcmp(s, "int_oo") == 0)
        return "\"int_oo\"";
    if (strcmp(s, "-oo") == 0 || strcmp(s, "-int_oo") == 0)
        return "\"-int_oo\"";
    return is_int_text(s) ? s : NULL;
}

static int on_symbol(tt_state *S, const cJSON *v, bool unbacked)
{
    const char *name = sg__json_str(sg__json_get(v, "symbol"));
    const char *val = sg__json_str(sg__json_get(v, "val"));
    tt_sym *s;
    size_t i;

    if (!name)
        return fail(S, SG_EINVALID, "%s: no \"symbol\"", unbacked ? "create_unbacked_symbol" : "create_symbol");
    if (!S->collecting)
        return 0;
    for (i = 0; i < S->f.nsyms; i++) {
        /* the same symbol again: fine when it is the same record; another meaning (a second
         * ShapeEnv in one frame) would mix two sets of guards, so refuse it */
        const tt_sym *o = &S->f.syms[i];
        const char *src = sg__json_str(sg__json_get(v, "source"));
        if (strcmp(o->name, name) != 0)
            continue;
        if (o->unbacked == unbacked && (!o->source) == (!src) && (!src || strcmp(o->source, src) == 0))
            return 0;
        return fail(S, SG_EUNSUPPORTED, "symbol %s created twice in one export frame, for %s and %s", name,
                    o->source ? o->source : "(no source)", src ? src : "(no source)");
    }
    if (sg__grow((void **)&S->f.syms, &S->f.csyms, S->f.nsyms + 1, sizeof *S->f.syms))
        return oom(S);
    s = &S->f.syms[S->f.nsyms++];
    memset(s, 0, sizeof *s);
    s->unbacked = unbacked;
    if (!(s->name = sg__strdup(name)))
        return oom(S);
    if (val && is_int_text(val) && !(s->hint = sg__strdup(val)))
        return oom(S);
    if (sg__json_str(sg__json_get(v, "source")) && !(s->source = sg__strdup(sg__json_str(sg__json_get(v, "source")))))
        return oom(S);
    if (!parse_range(sg__json_str(sg__json_get(v, "vr")), &s->lo, &s->hi) || !bound_text(s->lo) || !bound_text(s->hi)) {
        sg_free(s->lo);
        sg_free(s->hi);
        s->lo = s->hi = NULL; /* no usable range: the reader's default, -int_oo..int_oo */
    }
    return 0;
}

static int on_specialization(tt_state *S, const cJSON *v)
{
    const char *name = sg__json_str(sg__json_get(v, "symbol"));
    const char *value = sg__json_str(sg__json_get(v, "value"));
    size_t i;

    if (!name || !value)
        return fail(S, SG_EINVALID, "symbolic_shape_specialization: no \"symbol\" or \"value\"");
    if (!S->collecting || !is_int_text(value))
        return 0; /* a float specialisation: nothing the integer model uses */
    for (i = 0; i < S->f.nsyms; i++)
        if (strcmp(S->f.syms[i].name, name) == 0) {
            sg_free(S->f.syms[i].repl);
            if (!(S->f.syms[i].repl = sg__strdup(value)))
                return oom(S);
        }
    return 0;
}

/* Whether stack `st` passes through the runtime-assert path of ShapeEnv. */
static bool from_runtime_assert(const cJSON *st)
{
    const cJSON *fr;
    cJSON_ArrayForEach(fr, st) {
        const char *n = sg__json_str(sg__json_get(fr, "name"));
        if (n && (strcmp(n, "defer_runtime_assert") == 0 || strcmp(n, "guard_or_defer_runtime_assert") == 0))
            return true;
    }
    return false;
}

/* "code  # file.py:12 in forward" (or without the code) for the innermost user frame. */
static int user_loc(tt_state *S, const cJSON *ust, char **out)
{
    const cJSON *fr = NULL, *it;
    const char *file = NULL, *name, *loc;
    long idx, line;
    sg_buf b;

    *out = NULL;
    cJSON_ArrayForEach(it, ust)
        fr = it;
    if (!fr)
        return 0;
    idx = get_long(fr, "filename", -1);
    if (idx >= 0 && (size_t)idx < S->nstrs)
        file = S->strs[idx];
    name = sg__json_str(sg__json_get(fr, "name"));
    loc = sg__json_str(sg__json_get(fr, "loc"));
    line = get_long(fr, "line", 0);
    sg_buf_init(&b, 1 << 16);
    if (loc && *loc)
        sg_buf_printf(&b, "%s  # ", loc);
    sg_buf_printf(&b, "%s:%ld in %s", file ? file : "?", line, name ? name : "?");
    if (b.failed) {
        sg_buf_dispose(&b);
        return oom(S);
    }
    *out = sg_buf_take(&b);
    return 0;
}

static int on_guard(tt_state *S, const cJSON *v, const char *kind)
{
    const char *expr = sg__json_str(sg__json_get(v, "expr"));
    tt_guard *g;

    if (!expr)
        return fail(S, SG_EINVALID, "%s: no \"expr\"", kind);
    if (!S->collecting)
        return 0;
    if (sg__grow((void **)&S->f.guards, &S->f.cguards, S->f.nguards + 1, sizeof *S->f.guards))
        return oom(S);
    g = &S->f.guards[S->f.nguards++];
    memset(g, 0, sizeof *g);
    g->runtime = from_runtime_assert(sg__json_get(v, "stack"));
    if (!(g->expr = sg__strdup(expr)))
        return oom(S);
    return user_loc(S, sg__json_get(v, "user_stack"), &g->user_loc);
}

static tt_tensor *find_tensor(tt_frame *f, long describer, long id)
{
    size_t i;
    for (i = 0; i < f->ntensors; i++)
        if (f->tensors[i].describer == describer && f->tensors[i].id == id)
            return &f->tensors[i];
    return NULL;
}

static int on_describe_tensor(tt_state *S, const cJSON *v)
{
    const cJSON *size = sg__json_get(v, "size"), *it;
    long describer = get_long(v, "describer_id", 0), id = get_long(v, "id", -1);
    tt_tensor *t;
    size_t k = 0;

    if (!S->collecting || !cJSON_IsArray(size) || find_tensor(&S->f, describer, id))
        return 0;
    cJSON_ArrayForEach(it, size) {
        sg_int d;
        if (!sg__json_int(it, &d) || d < 0)
            return 0; /* a symbolic or odd size: not an input we can place */
    }
    if (sg__grow((void **)&S->f.tensors, &S->f.ctensors, S->f.ntensors + 1, sizeof *S->f.tensors))
        return oom(S);
    t = &S->f.tensors[S->f.ntensors++];
    memset(t, 0, sizeof *t);
    t->describer = describer;
    t->id = id;
    t->ndim = (size_t)cJSON_GetArraySize(size);
    if (t->ndim && !(t->sizes = sg__malloc(t->ndim * sizeof *t->sizes)))
        return oom(S);
    cJSON_ArrayForEach(it, size) {
        sg_int d = 0;
        sg__json_int(it, &d);
        t->sizes[k++] = (long long)d;
    }
    return 0;
}

static int on_describe_source(tt_state *S, const cJSON *v)
{
    const char *src = sg__json_str(sg__json_get(v, "source"));
    tt_tensor *t;

    if (!S->collecting || !src)
        return 0;
    t = find_tensor(&S->f, get_long(v, "describer_id", 0), get_long(v, "id", -1));
    if (t && !t->source && !(t->source = sg__strdup(src)))
        return oom(S);
    return 0;
}

static int on_str(tt_state *S, const cJSON *v)
{
    const char *s = sg__json_str(cJSON_GetArrayItem(v, 0));
    size_t idx;
    sg_int i;

    if (!cJSON_IsArray(v) || !s || !sg__json_int(cJSON_GetArrayItem(v, 1), &i))
        return fail(S, SG_EINVALID, "str: expected [\"text\", index]");
    if (i < 0 || i >= MAX_STRS)
        return fail(S, SG_ELIMIT, "str: index %lld out of range (0..%d)", (long long)i, MAX_STRS - 1);
    idx = (size_t)i;
    if (idx >= S->nstrs) {
        if (sg__grow((void **)&S->strs, &S->cstrs, idx + 1, sizeof *S->strs))
            return oom(S);
        memset(S->strs + S->nstrs, 0, (idx + 1 - S->nstrs) * sizeof *S->strs);
        S->nstrs = idx + 1;
    }
    sg_free(S->strs[idx]);
    if (!(S->strs[idx] = sg__strdup(s)))
        return oom(S);
    return 0;
}

/* One record (the JSON after "] "). */
static int on_record(tt_state *S, const cJSON *rec)
{
    const cJSON *v;

    if (!cJSON_IsObject(rec))
        return fail(S, SG_EINVALID, "a record is not a JSON object");
    if ((v = sg__json_get(rec, "str")))
        return on_str(S, v);
    if ((v = sg__json_get(rec, "artifact"))) {
        const char *name = sg__json_str(sg__json_get(v, "name"));
        S->payload_kind = !name                                      ? PAYLOAD_NONE
                          : strcmp(name, "torch_version") == 0        ? PAYLOAD_VERSION
                          : strcmp(name, "make_fx_fail_partial") == 0 ? PAYLOAD_FAIL_PARTIAL
                                                                      : PAYLOAD_NONE;
        if (S->payload_kind == PAYLOAD_FAIL_PARTIAL && !(S->collecting && S->content))
            S->payload_kind = PAYLOAD_NONE; /* not the wanted frame */
        S->payload.len = 0;
        S->partial_node[0] = S->partial_where[0] = '\0';
        return 0;
    }
    if ((v = sg__json_get(rec, "describe_tensor")) || (v = sg__json_get(rec, "describe_source"))
        || (v = sg__json_get(rec, "describe_storage"))) {
        enter_frame(S, rec, get_long(v, "describer_id", 0));
        if (sg__json_get(rec, "describe_tensor")) {
            mark_content(S, rec);
            return on_describe_tensor(S, v);
        }
        return sg__json_get(rec, "describe_source") ? on_describe_source(S, v) : 0;
    }
    if ((v = sg__json_get(rec, "create_symbol")) || (v = sg__json_get(rec, "create_unbacked_symbol"))) {
        enter_frame(S, rec, -1);
        mark_content(S, rec);
        return on_symbol(S, v, sg__json_get(rec, "create_unbacked_symbol") != NULL);
    }
    if ((v = sg__json_get(rec, "guard_added_fast")) || (v = sg__json_get(rec, "guard_added"))) {
        /* torch emits both for one guard when TORCH_DTRACE is on: keep guard_added_fast only */
        if (sg__json_get(rec, "guard_added") && !sg__json_get(rec, "guard_added_fast") && S->collecting
            && S->f.nguards && strcmp(S->f.guards[S->f.nguards - 1].expr,
                                      sg__json_str(sg__json_get(v, "expr")) ? sg__json_str(sg__json_get(v, "expr")) : "") == 0)
            return 0;
        enter_frame(S, rec, -1);
        mark_content(S, rec);
        return on_guard(S, v, sg__json_get(rec, "guard_added_fast") ? "guard_added_fast" : "guard_added");
    }
    if ((v = sg__json_get(rec, "symbolic_shape_specialization"))) {
        enter_frame(S, rec, -1);
        mark_content(S, rec);
        return on_specialization(S, v);
    }
    if ((v = sg__json_get(rec, "compilation_metrics"))) {
        const char *ft = sg__json_str(sg__json_get(v, "fail_type"));
        if (S->collecting && S->content && ft && !S->f.error && !(S->f.error = sg__strdup(ft)))
            return oom(S);
    }
    return 0;
}

/* Whether `s` (n bytes) names an unbacked symbol as a whole word: u<digits> (an int), zuf<digits>
 * (a float). */
static bool names_unbacked(const char *s, size_t n)
{
    size_t i, k;
    for (i = 0; i < n; i++) {
        if (i > 0 && (s[i - 1] == '_' || (s[i - 1] >= 'a' && s[i - 1] <= 'z') || (s[i - 1] >= 'A' && s[i - 1] <= 'Z')
                      || (s[i - 1] >= '0' && s[i - 1] <= '9')))
            continue;
        k = s[i] == 'u' ? i + 1 : (n - i > 3 && strncmp(s + i, "zuf", 3) == 0) ? i + 3 : n;
        if (k < n && s[k] >= '0' && s[k] <= '9')
            return true;
    }
    return false;
}

/* Copy n bytes of s into dst (cap bytes), clipped, NUL-terminated. */
static void clip_copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* One line of a make_fx_fail_partial payload (the FX graph traced before the trace stopped):
 * remember the last node and the "# File: F:L in FN, code: C" comment above it. */
static void fail_partial_line(tt_state *S, const char *a, size_t n)
{
    const char *semi;
    while (n && (*a == ' ' || *a == '\t'))
        a++, n--;
    if (!n || (n >= 4 && strncmp(a, "def ", 4) == 0) || (n >= 6 && strncmp(a, "return", 6) == 0))
        return; /* blank, the signature, the output */
    if (n >= 8 && strncmp(a, "# File: ", 8) == 0) {
        clip_copy(S->partial_where, sizeof S->partial_where, a + 8, n - 8);
    } else if (*a == '#') {
        S->partial_where[0] = '\0'; /* "# No stacktrace found for following nodes" */
    } else {
        if ((semi = memchr(a, ';', n))) /* drop the "x = y = None" clean-up */
            n = (size_t)(semi - a);
        clip_copy(S->partial_node, sizeof S->partial_node, a, n);
    }
}

/*
 * The end of a make_fx_fail_partial payload. Its last node is the last one traced, and the
 * "# File:" line above it (when there is one) the user's line. When that node's value is over an
 * unbacked symbol (`lt: "Sym(u0 < s77)"`, `view: "f32[(u0//2), 2]"`), the step that failed used
 * data torch cannot see: the GuardOnDataDependentSymNode the log does not record. Otherwise only
 * that tracing stopped is known.
 */
static int end_fail_partial(tt_state *S)
{
    const char *node = S->partial_node[0] ? S->partial_node : "(an empty graph)";
    const char *where = S->partial_where;
    char msg[1024];
    bool dd = names_unbacked(node, strlen(node));

    snprintf(msg, sizeof msg, "tracing stopped after `%s`%s%s (the log records no exception, only the graph "
             "traced so far%s)", node, *where ? " at " : "", where,
             dd ? ", whose last value depends on data-dependent symbols torch cannot guard on" : "");
    sg_free(S->f.error);
    sg_free(S->f.error_message);
    S->f.error = sg__strdup(dd ? "GuardOnDataDependentSymNode" : "make_fx_fail_partial");
    S->f.error_message = sg__strdup(msg);
    return S->f.error && S->f.error_message ? 0 : oom(S);
}

/* The end of an artifact's payload: the torch_version one ({"pytorch_version": "2.14.1+debian",
 * ...}), or a make_fx_fail_partial graph. */
static int end_payload(tt_state *S)
{
    cJSON *j = NULL;
    sg_error e2 = SG_ERROR_INIT;
    const char *ver;
    int kind = S->payload_kind;

    S->payload_kind = PAYLOAD_NONE;
    if (kind == PAYLOAD_FAIL_PARTIAL)
        return end_fail_partial(S);
    if (kind != PAYLOAD_VERSION)
        return 0;
    if (sg__json_parse(&j, S->payload.data ? S->payload.data : "", S->payload.len, 1 << 20, 16, "payload", &e2) == 0
        && (ver = sg__json_str(sg__json_get(j, "pytorch_version"))) && !S->torch_version
        && !(S->torch_version = sg__strdup(ver))) {
        cJSON_Delete(j);
        return oom(S);
    }
    cJSON_Delete(j);
    S->payload.len = 0;
    return 0;
}

/* Whether `s` starts like a glog line: a level letter and four digits (MMDD). */
static bool glog_head(const char *s, size_t n)
{
    return n >= 6 && strchr("VIWEDC", s[0]) && s[0] && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
           && s[3] >= '0' && s[3] <= '9' && s[4] >= '0' && s[4] <= '9' && s[5] == ' ';
}

static int on_line(tt_state *S, char *s, size_t n)
{
    const char *body;
    cJSON *rec = NULL;
    int rc;

    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    if (n && s[0] == '\t') { /* a payload line */
        if (S->payload_kind == PAYLOAD_FAIL_PARTIAL) {
            fail_partial_line(S, s + 1, n - 1);
            return 0;
        }
        if (S->payload_kind == PAYLOAD_VERSION && S->payload.len < (1 << 20)) {
            sg_buf_append(&S->payload, s + 1, n - 1);
            sg_buf_putc(&S->payload, '\n');
            if (S->payload.failed == SG_ENOMEM)
                return oom(S);
        }
        return 0;
    }
    if ((rc = end_payload(S)) != 0)
        return rc;
    if (n == 0)
        return 0;
    if (!glog_head(s, n) || !(body = strstr(s, "] ")) || body[2] != '{')
        return fail(S, SG_EINVALID, "not a TORCH_TRACE record (expected \"V1201 12:00:00.000000 PID file.py:LINE] {...}\")");
    body += 2;
    if ((rc = sg__json_parse(&rec, body, n - (size_t)(body - s), MAX_LINE, SG_TRACE_MAX_JSON_DEPTH, "record",
                             S->err)) != 0) {
        char msg[SG_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", S->err->msg);
        return fail(S, rc, "%s", msg);
    }
    rc = on_record(S, rec);
    cJSON_Delete(rec);
    return rc;
}

/* Read one log file (plain or gzip: zlib reads both) line by line. */
static int read_log(tt_state *S, const char *path)
{
    gzFile gz;
    sg_buf line;
    char chunk[1 << 16];
    int rc = 0, zerr;

    S->path = path;
    S->line = 0;
    if (!(gz = gzopen(path, "rb"))) {
        S->line = 0;
        return fail(S, errno == ENOMEM ? SG_ENOMEM : SG_EIO, "%s", errno ? strerror(errno) : "cannot open");
    }
    sg_buf_init(&line, MAX_LINE);
    for (;;) {
        char *got = gzgets(gz, chunk, sizeof chunk);
        size_t n;
        if (!got)
            break;
        n = strlen(chunk);
        sg_buf_append(&line, chunk, n);
        if (line.failed) {
            rc = line.failed == SG_ENOMEM ? oom(S) : fail(S, SG_ELIMIT, "a line longer than %zu bytes", MAX_LINE);
            goto cleanup;
        }
        if (n && chunk[n - 1] != '\n')
            continue; /* the rest of a long line, or a last line without '\n' (after the loop) */
        S->line++;
        if (memchr(line.data, '\0', line.len)) {
            rc = fail(S, SG_EINVALID, "a NUL byte: not a text log");
            goto cleanup;
        }
        if ((rc = on_line(S, line.data, line.len)) != 0)
            goto cleanup;
        line.len = 0;
        line.data[0] = '\0';
    }
    gzerror(gz, &zerr);
    if (zerr != Z_OK && zerr != Z_STREAM_END)
        rc = fail(S, zerr == Z_MEM_ERROR ? SG_ENOMEM : SG_EINVALID, "%s",
                  zerr == Z_ERRNO ? strerror(errno) : "corrupt or truncated gzip data");
    else if (line.len) { /* a last line without '\n' */
        S->line++;
        rc = on_line(S, line.data, line.len);
    }
    if (rc == 0)
        rc = end_payload(S);
cleanup:
    gzclose(gz);
    sg_buf_dispose(&line);
    return rc;
}

/* ---- files and directories ----------------------------------------------------------------- */

static bool log_name(const char *n)
{
    size_t l = strlen(n);
    return (l > 4 && strcmp(n + l - 4, ".log") == 0) || (l > 7 && strcmp(n + l - 7, ".log.gz") == 0);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The log files of directory `dir`, sorted by name, into `*files` (`*n`; free each and the array). */
static int list_logs(const char *dir, char ***files, size_t *n, sg_error *err)
{
    DIR *d;
    struct dirent *e;
    size_t cap = 0;
    int rc = 0;

    *files = NULL;
    *n = 0;
    if (!(d = opendir(dir)))
        return sg_error_set(err, SG_EIO, "%s: %s", dir, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        char *p;
        size_t len;
        if (!log_name(e->d_name))
            continue;
        len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(p = sg__malloc(len))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            break;
        }
        snprintf(p, len, "%s/%s", dir, e->d_name);
        if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            sg_free(p);
            continue;
        }
        if (*n >= MAX_FILES || sg__grow((void **)files, &cap, *n + 1, sizeof **files)) {
            sg_free(p);
            rc = *n >= MAX_FILES ? sg_error_set(err, SG_ELIMIT, "%s: more than %d log files", dir, MAX_FILES)
                                 : sg_error_set(err, SG_ENOMEM, "out of memory");
            break;
        }
        (*files)[(*n)++] = p;
    }
    closedir(d);
    if (rc == 0 && *n == 0)
        rc = sg_error_set(err, SG_EIO, "%s: no TORCH_TRACE log (*.log, *.log.gz) in this folder", dir);
    if (rc == 0)
        qsort(*files, *n, sizeof **files, cmp_str);
    return rc;
}

bool sg_trace__is_torch_trace_dir(const char *dir)
{
    DIR *d;
    struct dirent *e;
    bool found = false;
    char gj[4096];
    struct stat st;

    snprintf(gj, sizeof gj, "%s/guards.json", dir);
    if (stat(gj, &st) == 0)
        return false;
    if (!(d = opendir(dir)))
        return false;
    while (!found && (e = readdir(d)) != NULL)
        found = log_name(e->d_name);
    closedir(d);
    return found;
}

sg_trace__file_kind sg_trace__sniff_file(const char *path)
{
    unsigned char h[8];
    size_t n;
    FILE *fp = fopen(path, "rb");

    if (!fp)
        return SG_TRACE_FILE_UNKNOWN;
    n = fread(h, 1, sizeof h, fp);
    if (n && (h[0] == ' ' || h[0] == '\n' || h[0] == '\t' || h[0] == '\r')) {
        int c;
        while ((c = fgetc(fp)) == ' ' || c == '\n' || c == '\t' || c == '\r')
            ;
        fclose(fp);
        return c == '{' ? SG_TRACE_FILE_JSON : SG_TRACE_FILE_UNKNOWN;
    }
    fclose(fp);
    if (n >= 1 && h[0] == '{')
        return SG_TRACE_FILE_JSON;
    if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
        return SG_TRACE_FILE_LOG;
    if (n >= 4 && h[0] == 'P' && h[1] == 'K' && h[2] == 3 && h[3] == 4)
        return SG_TRACE_FILE_PT2;
    if (n >= 6 && glog_head((const char *)h, n))
        return SG_TRACE_FILE_LOG;
    return SG_TRACE_FILE_UNKNOWN;
}

bool sg_trace_is_torch_trace_path(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return false;
    if (S_ISDIR(st.st_mode))
        return sg_trace__is_torch_trace_dir(path);
    return S_ISREG(st.st_mode) && sg_trace__sniff_file(path) == SG_TRACE_FILE_LOG;
}

int sg_trace_load_torch_trace(sg_trace **out, const char *path, unsigned frame, sg_error *err)
{
    tt_state S;
    struct stat st;
    char **files = NULL;
    size_t nfiles = 0, i;
    int rc = 0;

    *out = NULL;
    memset(&S, 0, sizeof S);
    S.err = err;
    S.want = frame;
    S.path = path ? path : "";
    sg_buf_init(&S.payload, 1 << 20);
    if (!path)
        return sg_error_set(err, SG_EINVALID, "no TORCH_TRACE path given");
    if (stat(path, &st) != 0) {
        rc = sg_error_set(err, SG_EIO, "%s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(st.st_mode)) {
        if ((rc = list_logs(path, &files, &nfiles, err)) != 0)
            goto cleanup;
        for (i = 0; i < nfiles && rc == 0; i++)
            rc = read_log(&S, files[i]);
    } else {
        rc = read_log(&S, path);
    }
    if (rc)
        goto cleanup;
    S.path = path;
    S.line = 0;
    if (S.nframes == 0)
        rc = fail(&S, SG_EINVALID, "no export frame in this TORCH_TRACE log (no tensor, symbol or guard record)");
    else if (frame == 0 && S.nframes > 1)
        rc = fail(&S, SG_EINVALID, "the log holds %u export frames: pick one with --frame 1..%u", S.nframes,
                  S.nframes);
    else if (frame > S.nframes)
        rc = fail(&S, SG_EINVALID, "no frame %u: the log holds %u export frame%s", frame, S.nframes,
                  S.nframes == 1 ? "" : "s");
    if (rc == 0) {
        char what[512];
        snprintf(what, sizeof what, "%s (frame %u)", path, frame ? frame : 1);
        if ((rc = sg_trace__build_torch_frame(out, &S.f, S.torch_version, what, err)) == 0
            && !((*out)->name = sg_trace__strdup(*out, path))) {
            sg_trace_free(*out);
            *out = NULL;
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        }
    }
cleanup:
    sg__free_array(files, nfiles);
    sg__free_array(S.strs, S.nstrs);
    sg_free(S.torch_version);
    sg_buf_dispose(&S.payload);
    free_frame(&S.f);
    if (rc)
        sg__error_one_line(err);
    return rc;
}
