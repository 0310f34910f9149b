/*
 * json.c - the one JSON writer of reports (sg_report_to_json; the output
 * contracts of docs/check.md and docs/fixes.md): the check object, the fixes
 * object (with torch's text and its re-checked lines as the engine attached
 * them), and the verify wrapper. It only reads the report.
 *
 * Integers are JSON numbers when they are exact in a double (|v| <= 2**53),
 * else decimal strings; an infinite bound is null, as in torch's
 * range_constraints.
 */
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "torch/pyspec.h"
#include "util/json.h"
#include "util/util.h"

/*
 * The writer: members straight into one buffer, in the text cJSON_PrintUnformatted gave for the
 * tree this file built before (same keys, order, escapes and numbers; a NULL string leaves its
 * member out, as cJSON_AddStringToObject did), without a node per value (eq1000's report: 1 MB,
 * a seventh of its in-process time as a tree and its printing).
 */
typedef struct jw {
    sg_buf *b;
    int depth;
    bool first[8];  /* per open object or array: nothing written in it yet (the report nests 5 deep) */
} jw;

/* A double as cJSON 1.7's print_number writes it: an int when it is one, else 15 significant
 * digits when they read back as the same double (within its epsilon), else 17. */
static void put_double(sg_buf *b, double d)
{
    char buf[32], point = localeconv()->decimal_point[0], *c;
    int vi = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
    if (isnan(d) || isinf(d)) {
        sg_buf_puts(b, "null");
        return;
    }
    if (d == (double)vi) {
        snprintf(buf, sizeof buf, "%d", vi);
    } else {
        double back, big;
        snprintf(buf, sizeof buf, "%1.15g", d);
        back = strtod(buf, NULL);
        big = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
        if (fabs(back - d) > big * DBL_EPSILON)
            snprintf(buf, sizeof buf, "%1.17g", d);
    }
    for (c = buf; *c; c++)
        if (*c == point)
            *c = '.';
    sg_buf_puts(b, buf);
}

static void jw_open(jw *w, char c)
{
    sg_buf_putc(w->b, c);
    w->first[++w->depth] = true;
}

static void jw_close(jw *w, char c)
{
    sg_buf_putc(w->b, c);
    w->depth--;
}

/* The comma before a value, and its key when inside an object (`key` NULL in an array). */
static void jw_key(jw *w, const char *key)
{
    if (!w->first[w->depth])
        sg_buf_putc(w->b, ',');
    w->first[w->depth] = false;
    if (key) {
        sg__json_put_str(w->b, key);
        sg_buf_putc(w->b, ':');
    }
}

static void jw_str(jw *w, const char *key, const char *s)
{
    if (!s)
        return; /* (cJSON made no node of a NULL string) */
    jw_key(w, key);
    sg__json_put_str(w->b, s);
}

static void jw_str_or_null(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    if (s)
        sg__json_put_str(w->b, s);
    else
        sg_buf_puts(w->b, "null");
}

static void jw_raw(jw *w, const char *key, const char *raw)
{
    jw_key(w, key);
    sg_buf_puts(w->b, raw);
}

static void jw_bool(jw *w, const char *key, bool v) { jw_raw(w, key, v ? "true" : "false"); }

static void jw_double(jw *w, const char *key, double d)
{
    jw_key(w, key);
    put_double(w->b, d);
}

/* An integer as its exact decimal: a JSON number when a double holds it exactly, a string past 2**53. */
static void jw_int(jw *w, const char *key, sg_int v)
{
    char buf[SG_INT_STRLEN];
    jw_key(w, key);
    sg_int_format(buf, v);
    if (v <= ((sg_int)1 << 53) && v >= -((sg_int)1 << 53))
        sg_buf_puts(w->b, buf);
    else
        sg__json_put_str(w->b, buf);
}

static void jw_bound(jw *w, const char *key, sg_bound x)
{
    if (x.inf)
        jw_raw(w, key, "null");
    else
        jw_int(w, key, x.v);
}

static void jw_open_member(jw *w, const char *key, char c)
{
    jw_key(w, key);
    jw_open(w, c);
}

/* The keys of shapes(): key[i] is input i's path as a JSON string ("\"['x']\"", sg__json_put_str)
 * when input i starts a run of one path, NULL inside a run; and piece[i], what shapes() writes for input i at its example size (most of a counterexample's entries: a
 * 1,000-input trace's counterexample moves a few). Made once per report: every counterexample has
 * the same keys. */
typedef struct shape_keys {
    char **key;
    char **piece;
    size_t *plen;
    sg_int *example;
    size_t n;
} shape_keys;

static void shape_keys_free(shape_keys *k)
{
    size_t i;
    for (i = 0; k->key && i < k->n; i++)
        sg_free(k->key[i]);
    for (i = 0; k->piece && i < k->n; i++)
        sg_free(k->piece[i]);
    SG_FREE_ALL(k->key, k->piece, k->plen, k->example);
    memset(k, 0, sizeof *k);
}

/* What shapes() writes for input i at size v (before its closing brackets). */
static void shape_entry(sg_buf *b, const shape_keys *k, size_t i, sg_int v)
{
    char num_s[SG_INT_STRLEN];
    bool exact = v <= ((sg_int)1 << 53) && v >= -((sg_int)1 << 53); /* as num() */
    if (k->key[i]) {
        if (i > 0)
            sg_buf_puts(b, "],");
        sg_buf_puts(b, k->key[i]);
        sg_buf_puts(b, ":[");
    } else {
        sg_buf_putc(b, ',');
    }
    sg_int_format(num_s, v);
    if (exact)
        sg_buf_puts(b, num_s);
    else
        sg_buf_printf(b, "\"%s\"", num_s);
}

/* Returns 0 or SG_ENOMEM. */
static int shape_keys_make(shape_keys *k, const sg_trace *t)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    const char *path = NULL;
    k->n = n;
    if (!SG_CALLOC_ALL(SG_SLOT(k->key, n + 1), SG_SLOT(k->piece, n + 1), SG_SLOT(k->plen, n + 1),
                       SG_SLOT(k->example, n + 1)))
        return SG_ENOMEM;
    for (i = 0; i < n; i++) {
        sg_buf b;
        if (path && strcmp(path, in[i].path) == 0)
            continue;
        path = in[i].path;
        sg_buf_init(&b, (size_t)1 << 20);
        sg__json_put_str(&b, path);
        if (b.failed || !(k->key[i] = sg_buf_take(&b))) {
            sg_buf_dispose(&b);
            return SG_ENOMEM;
        }
    }
    for (i = 0; i < n; i++) {
        sg_buf b;
        sg_buf_init(&b, (size_t)1 << 20);
        k->example[i] = in[i].size;
        shape_entry(&b, k, i, in[i].size);
        if (b.failed) {
            sg_buf_dispose(&b);
            return SG_ENOMEM;
        }
        k->plen[i] = b.len;
        if (!(k->piece[i] = sg_buf_take(&b)))
            return SG_ENOMEM;
    }
    return 0;
}

/* {"['x']":[2,3],...}: the sizes of every input, grouped by tensor path (a counterexample of a
 * 1,000-input trace has 1,000 numbers, most of them the example's: written from k's pieces). */
static void jw_shapes(jw *w, const char *key, const shape_keys *k, const sg_int *sizes)
{
    size_t i;
    jw_key(w, key);
    sg_buf_putc(w->b, '{');
    for (i = 0; i < k->n; i++)
        if (sizes[i] == k->example[i])
            sg_buf_append(w->b, k->piece[i], k->plen[i]);
        else
            shape_entry(w->b, k, i, sizes[i]);
    sg_buf_puts(w->b, k->n ? "]}" : "}");
}

/* A symbol as the source of the first input whose traced shape it is (else its own first
 * source), so that relations read in terms of the inputs: L['x'].size()[0]. */
static const char *input_name(const sg_expr *sym, void *trace)
{
    const sg_trace *t = trace;
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    const sg_symbol_info *si;
    for (i = 0; i < n; i++)
        if (in[i].value == sym)
            return in[i].source;
    si = sg_trace_symbol_info(t, sym);
    return si && si->nsources ? si->sources[0] : NULL;
}

static char *print_expr(const sg_expr *e, const sg_trace *t)
{
    char *s = NULL;
    if (e)
        sg_expr_print(&s, e, SG_SYNTAX_PYTHON, input_name, (void *)t, NULL);
    return s;
}

static void jw_expr(jw *w, const char *key, const sg_expr *e, const sg_trace *t)
{
    char *s = print_expr(e, t);
    jw_str_or_null(w, key, s);
    sg_free(s);
}

/* The fixes object: {"verified", "untraced", "repaired", "recheck", "rounds", "lines", "spec", "python", "notes",
 * "torch_message"} and "torch" {"lines", "verdict", "why"} when torch's lines were re-checked. */
static int fixes_object(jw *w, const char *key, const sg_report *r, sg_error *err)
{
    const sg_fixes *f = r->fixes;
    char *py = NULL;
    size_t i;
    int rc;

    jw_open_member(w, key, '{');
    jw_bool(w, "verified", f->verified);
    jw_bool(w, "untraced", f->untraced);
    jw_bool(w, "repaired", f->repaired);
    jw_str(w, "recheck", sg_verdict_name(f->recheck));
    jw_double(w, "rounds", f->rounds);
    jw_open_member(w, "lines", '[');
    for (i = 0; i < f->nfixes; i++)
        jw_str(w, NULL, f->fixes[i].line);
    jw_close(w, ']');
    if (f->spec_json) {
        jw_raw(w, "spec", f->spec_json);
        if ((rc = sg_spec_to_python(&py, r->trace, f->spec_json, err)) != 0)
            return rc;
        jw_str(w, "python", py);
        sg_free(py);
    } else {
        jw_raw(w, "spec", "null");
        jw_str_or_null(w, "python", f->python);
    }
    jw_open_member(w, "notes", '[');
    for (i = 0; i < f->nnotes; i++)
        jw_str(w, NULL, f->notes[i]);
    jw_close(w, ']');
    jw_str_or_null(w, "torch_message", r->torch_message);
    if (r->torch) {
        jw_open_member(w, "torch", '{');
        jw_open_member(w, "lines", '[');
        for (i = 0; i < r->torch->nlines; i++)
            jw_str(w, NULL, r->torch->lines[i]);
        jw_close(w, ']');
        jw_str(w, "verdict", sg_verdict_name(r->torch->verdict));
        jw_str_or_null(w, "why", r->torch->why);
        jw_close(w, '}');
    }
    jw_close(w, '}');
    return 0;
}

/* The check object (with "fixes" when the report has them) into w. */
static int check_object(jw *w, const sg_report *r, unsigned flags, sg_error *err)
{
    const sg_trace *t = r->trace;
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    shape_keys keys;
    int rc = 0;

    memset(&keys, 0, sizeof keys);
    if (shape_keys_make(&keys, t) != 0) {
        shape_keys_free(&keys);
        return sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
    }
    jw_open(w, '{');
    jw_str(w, "verdict", sg_verdict_name(r->verdict));
    if (r->no_spec)
        jw_str(w, "reason", "the trace carries no per-dim spec (torch failed before building it)");
    else if (r->torch_failed)
        jw_str(w, "reason", r->torch_failed);
    jw_open_member(w, "violations", '[');
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        jw_open_member(w, NULL, '{');
        jw_str(w, "dim", v->dim);
        jw_str(w, "source", v->input < n ? in[v->input].source : "");
        jw_str(w, "kind", sg_violation_kind_name(v->kind));
        jw_str(w, "message", v->message ? v->message : "");
        if (v->relation)
            jw_expr(w, "forced_value", v->relation, t);
        if (v->root < n)
            jw_str(w, "related_to", in[v->root].source);
        if (v->has_counterexample)
            jw_shapes(w, "counterexample", &keys, v->counterexample);
        else
            jw_raw(w, "counterexample", "null");
        jw_open_member(w, "core", '[');
        for (k = 0; k < v->ncore; k++) {
            jw_open_member(w, NULL, '{');
            jw_str(w, "kind", sg_core_kind_name(v->core[k].kind));
            jw_double(w, "index", (double)v->core[k].index);
            jw_str(w, "text", v->core[k].text);
            jw_str_or_null(w, "loc", v->core[k].loc);
            jw_close(w, '}');
        }
        jw_close(w, ']');
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_open_member(w, "dims", '[');
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        const sg_input_dim *id = &in[d->input];
        if (d->status == SG_DIM_STATIC)
            continue;
        jw_open_member(w, NULL, '{');
        jw_str(w, "source", id->source);
        jw_str_or_null(w, "name", id->name);
        jw_str(w, "status", sg_dim_status_name(d->status));
        if (d->reason[0])
            jw_str(w, "reason", d->reason);
        jw_close(w, '}');
    }
    jw_close(w, ']');
    jw_open_member(w, "inferred", '{');
    for (i = 0; i < r->ninferred; i++) {
        const sg_inferred *f = &r->inferred[i];
        jw_open_member(w, sg_expr_symbol_name(f->sym), '{');
        if (f->input < n)
            jw_str(w, "source", in[f->input].source);
        jw_open_member(w, "range", '[');
        jw_bound(w, NULL, f->lo);
        jw_bound(w, NULL, f->hi);
        jw_close(w, ']');
        jw_bool(w, "range_exact", f->range_exact);
        if (f->is_constant)
            jw_int(w, "constant", f->constant);
        if (f->modulus > 1) {
            jw_open_member(w, "congruence", '{');
            jw_int(w, "modulus", f->modulus);
            jw_int(w, "residue", f->residue);
            jw_close(w, '}');
        }
        jw_open_member(w, "holes", '[');
        for (k = 0; k < f->nholes; k++)
            jw_int(w, NULL, f->holes[k]);
        jw_close(w, ']');
        jw_bool(w, "holes_complete", f->holes_complete);
        if (f->equals)
            jw_expr(w, "equals", f->equals, t);
        jw_close(w, '}');
    }
    jw_close(w, '}');
    jw_open_member(w, "suggested_fixes", '[');
    for (i = 0; r->fixes && r->fixes->verified && i < r->fixes->nfixes; i++)
        jw_str(w, NULL, r->fixes->fixes[i].line);
    jw_close(w, ']');
    jw_open_member(w, "stats", '{');
    jw_double(w, "queries", (double)r->stats.queries);
    jw_double(w, "decided_cheaply", (double)r->stats.decided_cheaply);
    if (!(flags & SG_JSON_NO_TIMES))
        jw_double(w, "seconds", r->stats.seconds);
    jw_close(w, '}');
    if (r->fixes)
        rc = fixes_object(w, "fixes", r, err);
    jw_close(w, '}');
    shape_keys_free(&keys);
    return rc;
}

/* {"archive": ..., "against": ..., "verdict": ..., "runtime_asserts": {...}, "guards_code": {...} | null,
 *  "report": {...}} */
static int verify_json(jw *w, const sg_report *r, unsigned flags, sg_error *err)
{
    const sg_verify_info *v = r->verify;
    sg_buf *b = w->b;

    sg__json_put_field(b, "{\"archive\": ", v->name);
    sg_buf_printf(b, ", \"against\": \"%s\", \"verdict\": \"%s\", \"runtime_asserts\": {\"count\": %zu, "
                     "\"checked\": %zu, \"data_dependent\": %zu, \"unrecovered\": %zu}%s",
                  v->against_spec ? "spec" : "range_constraints", sg_verdict_name(r->verdict), v->asserts,
                  v->checked - v->data_dependent, v->data_dependent, v->asserts - v->checked, "");
    if (v->has_guards_code)
        sg_buf_printf(b, ", \"guards_code\": {\"count\": %zu, \"checked\": %zu, \"unrecovered\": %zu}",
                      v->guards, v->guards_read, v->guards - v->guards_read);
    else
        sg_buf_puts(b, ", \"guards_code\": null");
    sg_buf_printf(b, ", \"kernel_checks\": {\"count\": %zu, \"checked\": %zu, \"data_dependent\": %zu}",
                  v->kernels_all, v->kernels, v->kernels_all - v->kernels);
    sg_buf_puts(b, ", \"report\": ");
    w->first[0] = true;
    return check_object(w, r, flags, err) ? err->code : (sg_buf_putc(b, '}'), 0);
}

int sg_report_to_json(char **out, const sg_report *r, unsigned flags, sg_error *err)
{
    sg_buf b;
    jw w;
    int rc;

    SG_ENTRY_CHECK("sg_report_to_json", out, r, "sg_report_to_json: no report", err);
    memset(&w, 0, sizeof w);
    w.b = &b;
    w.first[0] = true;
    sg_buf_init(&b, (size_t)1 << 30);
    if (r->kind == SG_REPORT_VERIFY && r->verify)
        rc = verify_json(&w, r, flags, err);
    else if (r->kind == SG_REPORT_SPEC && r->fixes)
        rc = fixes_object(&w, NULL, r, err);
    else
        rc = check_object(&w, r, flags, err);
    if (rc) {
        sg_buf_dispose(&b);
        return rc;
    }
    return sg_buf_finish(&b, out, "the report", err);
}
