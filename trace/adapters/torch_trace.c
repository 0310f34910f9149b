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
 *
 * Frames: records with a frame_id (strict export: dynamo) belong to that
 * frame; the others (non-strict) to the describer (one MetaConverter per
 * export) of the latest describe_* record. A later attempt of one dynamo
 * frame replaces the earlier one. Frames without any tensor, symbol or guard
 * are not counted.
 *
 * The frame is built into a trace directly (the trace module's builders), in
 * the order and with the checks of the v1 JSON reader (trace/adapters/json.c),
 * so a log and the v1 trace `shapegate trace` prints of it give the same model.
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
#include "trace/trace_impl.h"
#include "util/json.h"

/* Longest log line read (a record with its stack), and most log files in a directory. */
#define MAX_LINE ((size_t)64 << 20)
#define MAX_FILES 4096
/* Largest index of the file-name table ("str" records; one per source file torch saw). */
#define MAX_STRS (1 << 20)

typedef struct tt_sym {
    char *name, *lo, *hi, *hint, *source, *repl;
    bool unbacked;
} tt_sym;

typedef struct tt_guard {
    char *expr, *user_loc;
    bool runtime;
} tt_guard;

typedef struct tt_tensor {
    long describer, id;
    char *source;       /* "L['x']", NULL until its describe_source */
    long long *sizes;
    size_t ndim;
} tt_tensor;

/* The frame being collected (only the selected one keeps its records). */
typedef struct tt_frame {
    tt_sym *syms;
    size_t nsyms, csyms;
    tt_guard *guards;
    size_t nguards, cguards;
    tt_tensor *tensors;
    size_t ntensors, ctensors;
    char *error;        /* compilation_metrics fail_type */
    bool strict;
} tt_frame;

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
    bool in_version_payload;
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
        S->in_version_payload = name && strcmp(name, "torch_version") == 0;
        S->payload.len = 0;
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

/* The torch_version artifact's payload ({"pytorch_version": "2.14.1+debian", ...}). */
static int end_payload(tt_state *S)
{
    cJSON *j = NULL;
    sg_error e2 = SG_ERROR_INIT;
    const char *ver;

    if (!S->in_version_payload)
        return 0;
    S->in_version_payload = false;
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
        if (S->in_version_payload && S->payload.len < (1 << 20)) {
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

/* ---- the frame into a trace: input paths, torch's replacements, the builders ------------------------ */

/* The input path of a tensor source ("L['x']", "L['args'][0][1]", "L['flat_args'][0]") into `b`;
 * false for a source that is not a user input (parameters, globals). `*positional` is set when
 * the source names an argument by position only. */
static bool input_path(const char *src, sg_buf *b, bool *positional)
{
    const char *p;
    char *end;
    long k;

    if (strncmp(src, "L[", 2) != 0)
        return false;
    src++;
    if (strncmp(src, "['self']", 8) == 0)
        return false;
    if ((strncmp(src, "['args'][0][", 12) == 0 && (p = src + 12)) || (strncmp(src, "['flat_args'][", 14) == 0 && (p = src + 14))) {
        k = strtol(p, &end, 10);
        if (end == p || *end != ']' || k < 0)
            return false;
        *positional = true;
        sg_buf_printf(b, "['arg%ld']%s", k, end + 1);
        return true;
    }
    if (strncmp(src, "['args'][1]['", 13) == 0) {
        sg_buf_puts(b, src + 11);
        return true;
    }
    if (strncmp(src, "['", 2) != 0)
        return false;
    sg_buf_puts(b, src);
    return true;
}

/* Attribute components (".features" of a dataclass or namedtuple field) have no index in
 * the log; pytree paths do. Fakification visits the leaves in flatten order, so the fields
 * of one parent are numbered in the order they first appear. */
typedef struct tt_attr {
    char *parent, *name;
    long index;
} tt_attr;

typedef struct tt_attrs {
    tt_attr *a;
    size_t n, cap;
} tt_attrs;

static void free_attrs(tt_attrs *m)
{
    size_t i;
    for (i = 0; i < m->n; i++) {
        sg_free(m->a[i].parent);
        sg_free(m->a[i].name);
    }
    sg_free(m->a);
}

/* `in` (a path whose components may be ".name") into `out`, with ".name" as "[index]". */
static void index_attrs(const char *in, tt_attrs *m, sg_buf *out)
{
    const char *p = in;
    while (*p && !out->failed) {
        size_t n = *p == '.' ? strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") : 0;
        if (n) {
            size_t i;
            long idx = 0;
            bool found = false;
            for (i = 0; i < m->n && !found; i++)
                if (strcmp(m->a[i].parent, out->data ? out->data : "") == 0) {
                    if (strlen(m->a[i].name) == n && strncmp(m->a[i].name, p + 1, n) == 0) {
                        idx = m->a[i].index;
                        found = true;
                    } else {
                        idx = m->a[i].index + 1 > idx ? m->a[i].index + 1 : idx;
                    }
                }
            if (!found) {
                tt_attr *a;
                if (sg__grow((void **)&m->a, &m->cap, m->n + 1, sizeof *m->a)) {
                    out->failed = SG_ENOMEM;
                    return;
                }
                a = &m->a[m->n];
                a->parent = sg__strndup(out->data ? out->data : "", out->len);
                a->name = sg__strndup(p + 1, n);
                a->index = idx;
                if (!a->parent || !a->name) {
                    sg_free(a->parent);
                    sg_free(a->name);
                    out->failed = SG_ENOMEM;
                    return;
                }
                m->n++;
            }
            sg_buf_printf(out, "[%ld]", idx);
            p += 1 + n;
        } else {
            sg_buf_putc(out, *p++);
        }
    }
}

/* The symbol of the frame whose source is `src` (a dim's "...size()[d]"), or NULL. */
static const tt_sym *symbol_for(const tt_frame *f, const char *src)
{
    size_t i;
    for (i = 0; i < f->nsyms; i++)
        if (f->syms[i].source && strcmp(f->syms[i].source, src) == 0)
            return &f->syms[i];
    return NULL;
}

static tt_sym *sym_named(tt_frame *f, const char *name, size_t n)
{
    size_t i;
    for (i = 0; i < f->nsyms; i++)
        if (strlen(f->syms[i].name) == n && strncmp(f->syms[i].name, name, n) == 0)
            return &f->syms[i];
    return NULL;
}

/* Python's comparison of the two hints (absent: sys.maxsize, as torch sorts) then names. */
static int sym_order(const tt_sym *a, const tt_sym *b)
{
    long long ha = a->hint ? strtoll(a->hint, NULL, 10) : 0x7fffffffffffffffLL;
    long long hb = b->hint ? strtoll(b->hint, NULL, 10) : 0x7fffffffffffffffLL;
    if (ha != hb)
        return ha < hb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/*
 * The replacements torch makes for guards Eq(a, b) of two backed symbols (the log records
 * the guard, not the replacement; ShapeEnv._maybe_guard_rel): of the two, the one with the
 * larger hint, then the larger name, is replaced by the other. Equalities torch solves in
 * other forms (Eq(s0, 2*s1)) are not replayed: their guards stay, so the check still decides
 * them, but the dims keep their own symbols.
 */
static int replay_replacements(tt_state *S)
{
    tt_frame *f = &S->f;
    size_t i;

    for (i = 0; i < f->nguards; i++) {
        const char *e = f->guards[i].expr, *comma;
        size_t n = strlen(e);
        tt_sym *a, *b, *t;
        if (strncmp(e, "Eq(", 3) != 0 || e[n - 1] != ')' || !(comma = strstr(e, ", ")))
            continue;
        a = sym_named(f, e + 3, (size_t)(comma - e - 3));
        b = sym_named(f, comma + 2, (size_t)(e + n - 1 - comma - 2));
        if (!a || !b || a == b || a->unbacked || b->unbacked || a->repl || b->repl)
            continue;
        if (sym_order(a, b) < 0) {
            t = a;
            a = b;
            b = t;
        }
        if (!(a->repl = sg__strdup(b->name)))
            return oom(S);
    }
    return 0;
}

/* A bound the log wrote (bound_text accepted it: an integer, "oo"/"int_oo", "-oo"/"-int_oo"). */
static int frame_bound(sg_trace__reader *R, sg_bound *b, const char *s)
{
    b->v = 0;
    b->inf = 0;
    if (strcmp(s, "oo") == 0 || strcmp(s, "int_oo") == 0)
        b->inf = 1;
    else if (strcmp(s, "-oo") == 0 || strcmp(s, "-int_oo") == 0)
        b->inf = -1;
    else if (sg_int_parse(&b->v, s, strlen(s)) != 0)
        return sg_trace__fail(R, SG_EINVALID, "range: expected an integer, \"int_oo\" or \"-int_oo\"");
    return 0;
}

/* One symbol of the frame into the trace, as the v1 reader reads a symbol (json.c: the same
 * order of pool insertions, the same messages). */
static int frame_symbol(sg_trace__reader *R, const tt_sym *s)
{
    sg_symbol_info si = {.lo = {0, -1}, .hi = {0, 1}, .unbacked = s->unbacked, .nsources = s->source ? 1 : 0};
    const char **list;
    int rc;

    if ((rc = sg_trace__symbol_named(&si.sym, R->t, s->name, R->what, R->field, R->err)) != 0)
        return rc;
    if (s->lo && ((rc = frame_bound(R, &si.lo, s->lo)) != 0 || (rc = frame_bound(R, &si.hi, s->hi)) != 0))
        return rc;
    if (s->repl && (rc = sg_trace__read_replacement(R, s->repl, &si.replacement)) != 0)
        return rc;
    if (!(list = sg_trace__alloc(R->t, 2 * sizeof *list)) || (s->source && !(list[0] = sg_trace__strdup(R->t, s->source))))
        return sg_trace__oom(R);
    si.sources = list;
    if (s->hint && !(si.has_hint = sg_int_parse(&si.hint, s->hint, strlen(s->hint)) == 0))
        return sg_trace__fail(R, SG_EINVALID, "hint: expected an integer or null");
    return sg_trace__add_symbol(R, &si, s->name);
}

/* One guard of the frame into the trace (as the v1 reader reads one). */
static int frame_guard(sg_trace__reader *R, const tt_guard *g)
{
    const char *text, *uloc = NULL;
    sg_guard *gd;
    int rc;

    if (!(text = sg_trace__strdup(R->t, g->expr)) || (g->user_loc && !(uloc = sg_trace__strdup(R->t, g->user_loc))))
        return sg_trace__oom(R);
    if ((rc = sg_trace__read_guard(R, text, g->runtime ? SG_GUARD_RUNTIME_ASSERT : SG_GUARD_SHAPE, &gd)) != 0)
        return rc;
    gd->user_loc = uloc;
    return 0;
}

/* Dim `d` of tensor `t` (its input path `path`, source `src`) into the trace: its value the
 * symbol (after replacements, as a capture) or the size; no spec in the log, so every traced
 * dim is Dim.AUTO (torch picks) until --spec/--dim, the others unset. */
static int frame_input(sg_trace__reader *R, const tt_frame *f, const tt_tensor *t, size_t d, const char *path,
                       const char *src)
{
    const tt_sym *s = symbol_for(f, src);
    char num[32];
    sg_input_dim *x;

    if (!(x = sg_trace__add_input(R->t)) || !(x->path = sg_trace__strdup(R->t, path)) ||
        !(x->source = sg_trace__strdup(R->t, src)) || (s && !(x->traced_source = sg_trace__strdup(R->t, src))))
        return sg_trace__oom(R);
    if (d > 65535)
        return sg_trace__fail(R, SG_EINVALID, "dim: expected a dim number (0 .. 65535)");
    x->dim = (int)d;
    x->size = t->sizes[d];
    x->kind = s ? SG_SPEC_AUTO : SG_SPEC_UNSET;
    snprintf(num, sizeof num, "%lld", t->sizes[d]);
    return sg_trace__read_value(R, x, s ? (s->repl ? s->repl : s->name) : num);
}

/*
 * The selected frame as a trace, built directly (the trace module's builders) in the order and
 * with the checks of the v1 reader (trace/adapters/json.c), so a TORCH_TRACE log and the v1 JSON
 * trace of it give the same model: symbols; shape guards, then runtime asserts; per tensor (first
 * of each source) its dims; the spec flat, without dynamic_shapes, the positional argument names
 * when the sources say them.
 */
static int build_frame(tt_state *S, sg_trace **out, const char *what)
{
    tt_frame *f = &S->f;
    sg_trace__reader R;
    sg_buf path, raw, src, names, args;
    tt_attrs attrs = {0};
    size_t i, d, nin = 0, ng = 0;
    int pass, rc;
    long maxarg = -1;
    bool positional = false;

    *out = NULL;
    if ((rc = replay_replacements(S)) != 0)
        return rc;
    memset(&R, 0, sizeof R);
    R.err = S->err;
    R.what = what;
    if ((rc = sg_trace__new(&R.t, S->err)) != 0)
        return rc;
    sg_buf_init(&path, 1 << 16);
    sg_buf_init(&raw, 1 << 16);
    sg_buf_init(&src, 1 << 16);
    sg_buf_init(&names, 1 << 20);
    sg_buf_init(&args, SG_TRACE_MAX_FILE);
    sg_trace__set_field(&R, "(top level)");
    if (!(R.t->torch_version = sg_trace__strdup(R.t, S->torch_version ? S->torch_version : ""))) {
        rc = sg_trace__oom(&R);
        goto cleanup;
    }
    R.t->strict = f->strict;
    R.t->has_shape_env = true;
    for (i = 0; i < f->nsyms && !rc; i++) {
        sg_trace__set_field(&R, "symbols[%zu]", i);
        rc = frame_symbol(&R, &f->syms[i]);
    }
    /* shape guards first, then runtime asserts, as in a capture */
    for (pass = 0; pass < 2 && !rc; pass++)
        for (i = 0; i < f->nguards && !rc; i++) {
            if (f->guards[i].runtime != (pass == 1))
                continue;
            sg_trace__set_field(&R, "guards[%zu]", ng++);
            rc = frame_guard(&R, &f->guards[i]);
        }
    for (i = 0; i < f->ntensors && !rc; i++) {
        const tt_tensor *t = &f->tensors[i];
        size_t j;
        bool dup = false, pos = false;
        if (!t->source)
            continue;
        for (j = 0; j < i && !dup; j++)
            dup = f->tensors[j].source && strcmp(f->tensors[j].source, t->source) == 0;
        raw.len = 0;
        path.len = 0;
        if (dup || !input_path(t->source, &raw, &pos))
            continue;
        index_attrs(raw.data, &attrs, &path);
        if (path.failed)
            break;
        positional |= pos;
        /* the argument's name (first path component), once */
        {
            const char *key, *next;
            size_t keylen;
            long index;
            if (sg_trace__path_component(path.data, &key, &keylen, &index, &next) == 1) {
                char nm[256];
                bool seen = false;
                const char *q;
                snprintf(nm, sizeof nm, "%.*s", (int)(keylen < 255 ? keylen : 255), key);
                if (strncmp(nm, "arg", 3) == 0 && pos) {
                    long k = strtol(nm + 3, NULL, 10);
                    if (k > maxarg)
                        maxarg = k;
                } else {
                    for (q = names.data; q && q < names.data + names.len && !seen; q += strlen(q) + 1)
                        seen = strcmp(q, nm) == 0;
                    if (!seen)
                        sg_buf_append(&names, nm, strlen(nm) + 1);
                }
            }
        }
        for (d = 0; d < t->ndim && !rc; d++) {
            src.len = 0;
            sg_buf_printf(&src, "%s.size()[%zu]", t->source, d);
            if (src.failed)
                break;
            sg_trace__set_field(&R, "inputs[%zu]", nin++);
            rc = frame_input(&R, f, t, d, path.data, src.data);
        }
    }
    if (rc)
        goto cleanup;
    if (path.failed || raw.failed || src.failed || names.failed) {
        rc = sg_error_set(S->err, SG_ENOMEM, "out of memory writing the trace of the frame");
        goto cleanup;
    }
    sg_trace__set_field(&R, "spec");
    R.t->has_flat_spec = true;
    /* Argument names: only the positional ones are known (arg0, arg1, ...); otherwise none, so
     * that a spec naming non-tensor arguments is matched by the tensors' paths alone. The
     * trace keeps them as JSON text (spec.inputs), as the reader keeps what it read. */
    if (positional) {
        long k;
        const char *q;
        sg_buf_puts(&args, "{\"arg_names\":[");
        for (k = 0; k <= maxarg; k++)
            sg_buf_printf(&args, "%s\"arg%ld\"", k ? "," : "", k);
        for (q = names.data; q && q < names.data + names.len; q += strlen(q) + 1) {
            if (maxarg >= 0 || q != names.data)
                sg_buf_putc(&args, ',');
            sg__json_put_str(&args, q);
        }
        sg_buf_puts(&args, "]}");
        if (args.failed) {
            rc = args.failed == SG_ELIMIT ? sg_trace__fail(&R, SG_ELIMIT, "too large or too deep") : sg_trace__oom(&R);
            goto cleanup;
        }
        if (!(R.t->inputs_json = sg_trace__strndup(R.t, args.data, args.len))) {
            rc = sg_trace__oom(&R);
            goto cleanup;
        }
    }
    sg_trace__set_field(&R, "spec.torch_error");
    if (f->error && !(R.t->torch_error = sg_trace__strdup(R.t, f->error))) {
        rc = sg_trace__oom(&R);
        goto cleanup;
    }
    *out = R.t;
    R.t = NULL;
cleanup:
    sg_trace_free(R.t);
    sg_buf_dispose(&path);
    sg_buf_dispose(&raw);
    free_attrs(&attrs);
    sg_buf_dispose(&src);
    sg_buf_dispose(&names);
    sg_buf_dispose(&args);
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
        if ((rc = build_frame(&S, out, what)) == 0 && !((*out)->name = sg_trace__strdup(*out, path))) {
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
