/*
 * torch_trace_frame.c - the TORCH_TRACE adapter's second half: one export
 * frame, as its reader (torch_trace.c) collected it, into a trace through the
 * trace module's builders (trace/trace_impl.h), in the order and with the
 * checks of the v1 JSON reader (trace/adapters/json.c), so a log and the v1
 * trace `shapegate trace` prints of it give the same model. What torch did
 * but did not log is reproduced here: the input path of each tensor source,
 * and the replacements ShapeEnv makes for Eq(a, b) guards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/adapters/torch_trace_impl.h"
#include "util/json.h"

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
static int replay_replacements(tt_frame *f, sg_error *err)
{
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
            return sg_error_set(err, SG_ENOMEM, "out of memory");
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
int sg_trace__build_torch_frame(sg_trace **out, tt_frame *f, const char *torch_version, const char *what,
                                sg_error *err)
{
    sg_trace__reader R;
    sg_buf path, raw, src, names, args;
    tt_attrs attrs = {0};
    size_t i, d, nin = 0, ng = 0;
    int pass, rc;
    long maxarg = -1;
    bool positional = false;

    *out = NULL;
    if ((rc = replay_replacements(f, err)) != 0)
        return rc;
    memset(&R, 0, sizeof R);
    R.err = err;
    R.what = what;
    if ((rc = sg_trace__new(&R.t, err)) != 0)
        return rc;
    sg_buf_init(&path, 1 << 16);
    sg_buf_init(&raw, 1 << 16);
    sg_buf_init(&src, 1 << 16);
    sg_buf_init(&names, 1 << 20);
    sg_buf_init(&args, SG_TRACE_MAX_FILE);
    sg_trace__set_field(&R, "(top level)");
    if (!(R.t->torch_version = sg_trace__strdup(R.t, torch_version ? torch_version : ""))) {
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
        rc = sg_error_set(err, SG_ENOMEM, "out of memory writing the trace of the frame");
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
    if (f->error_message && !(R.t->torch_error_message = sg_trace__strdup(R.t, f->error_message))) {
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
