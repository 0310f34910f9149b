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
#include <string.h>

#include <cjson/cJSON.h>

#include "report/report.h"
#include "torch/pyspec.h"
#include "util/json.h"
#include "util/util.h"

/* An integer as its exact decimal: a raw JSON number (cJSON would print it through a double and
 * read it back, 15x slower on a large report), a string past 2**53. */
static cJSON *num(sg_int v)
{
    char buf[SG_INT_STRLEN];
    if (v <= ((sg_int)1 << 53) && v >= -((sg_int)1 << 53))
        return cJSON_CreateRaw(sg_int_format(buf, v));
    return cJSON_CreateString(sg_int_format(buf, v));
}

static cJSON *bound(sg_bound b) { return b.inf ? cJSON_CreateNull() : num(b.v); }

/* The keys of shapes(): key[i] is input i's path as a JSON string ("\"['x']\"", escaped by
 * cJSON's own printer) when input i starts a run of one path, NULL inside a run; and piece[i],
 * what shapes() writes for input i at its example size (most of a counterexample's entries: a
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
        cJSON_free(k->key[i]);
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
        cJSON *str;
        if (path && strcmp(path, in[i].path) == 0)
            continue;
        path = in[i].path;
        str = cJSON_CreateString(path);
        k->key[i] = str ? cJSON_PrintUnformatted(str) : NULL;
        cJSON_Delete(str);
        if (!k->key[i])
            return SG_ENOMEM;
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

/* {"['x']": [2, 3], ...}: the sizes of every input, grouped by tensor path, as the raw JSON text
 * cJSON would print for that object (a counterexample of a 1,000-input trace has 1,000 numbers:
 * as cJSON nodes that was four allocations each, most of a large report's rendering). */
static cJSON *shapes(const shape_keys *k, const sg_int *sizes)
{
    sg_buf b;
    size_t i;
    cJSON *raw;
    sg_buf_init(&b, (size_t)1 << 30);
    sg_buf_putc(&b, '{');
    for (i = 0; i < k->n; i++)
        if (sizes[i] == k->example[i])
            sg_buf_append(&b, k->piece[i], k->plen[i]);
        else
            shape_entry(&b, k, i, sizes[i]);
    sg_buf_puts(&b, k->n ? "]}" : "}");
    if (b.failed) {
        sg_buf_dispose(&b);
        return NULL;
    }
    raw = cJSON_CreateRaw(b.data);
    sg_buf_dispose(&b);
    return raw;
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

static void add_expr(cJSON *o, const char *key, const sg_expr *e, const sg_trace *t)
{
    char *s = print_expr(e, t);
    if (s)
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
    sg_free(s);
}

/* The fixes object: {"verified", "untraced", "repaired", "recheck", "rounds", "lines", "spec", "python", "notes",
 * "torch_message"} and "torch" {"lines", "verdict", "why"} when torch's lines were re-checked. */
static cJSON *fixes_object(const sg_report *r, sg_error *err, int *rc)
{
    const sg_fixes *f = r->fixes;
    cJSON *root = cJSON_CreateObject(), *arr, *tobj;
    char *py = NULL;
    size_t i;

    *rc = 0;
    if (!root) {
        *rc = sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
        return NULL;
    }
    cJSON_AddBoolToObject(root, "verified", f->verified);
    cJSON_AddBoolToObject(root, "untraced", f->untraced);
    cJSON_AddBoolToObject(root, "repaired", f->repaired);
    cJSON_AddStringToObject(root, "recheck", sg_verdict_name(f->recheck));
    cJSON_AddNumberToObject(root, "rounds", f->rounds);
    arr = cJSON_AddArrayToObject(root, "lines");
    for (i = 0; arr && i < f->nfixes; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(f->fixes[i].line));
    if (f->spec_json) {
        cJSON_AddItemToObject(root, "spec", cJSON_CreateRaw(f->spec_json));
        if ((*rc = sg_spec_to_python(&py, r->trace, f->spec_json, err)) != 0) {
            cJSON_Delete(root);
            return NULL;
        }
        cJSON_AddStringToObject(root, "python", py);
        sg_free(py);
    } else {
        cJSON_AddNullToObject(root, "spec");
        if (f->python)
            cJSON_AddStringToObject(root, "python", f->python);
        else
            cJSON_AddNullToObject(root, "python");
    }
    arr = cJSON_AddArrayToObject(root, "notes");
    for (i = 0; arr && i < f->nnotes; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(f->notes[i]));
    if (r->torch_message)
        cJSON_AddStringToObject(root, "torch_message", r->torch_message);
    else
        cJSON_AddNullToObject(root, "torch_message");
    if (r->torch && (tobj = cJSON_AddObjectToObject(root, "torch")) != NULL) {
        arr = cJSON_AddArrayToObject(tobj, "lines");
        for (i = 0; arr && i < r->torch->nlines; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateString(r->torch->lines[i]));
        cJSON_AddStringToObject(tobj, "verdict", sg_verdict_name(r->torch->verdict));
        if (r->torch->why)
            cJSON_AddStringToObject(tobj, "why", r->torch->why);
        else
            cJSON_AddNullToObject(tobj, "why");
    }
    return root;
}

/* The check object (with "fixes" when the report has them). */
static cJSON *check_object(const sg_report *r, unsigned flags, sg_error *err, int *rc)
{
    const sg_trace *t = r->trace;
    cJSON *root = cJSON_CreateObject(), *arr, *o, *x;
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    shape_keys keys;

    memset(&keys, 0, sizeof keys);
    *rc = 0;
    if (!root || shape_keys_make(&keys, t) != 0)
        goto oom;
    cJSON_AddStringToObject(root, "verdict", sg_verdict_name(r->verdict));
    if (r->no_spec)
        cJSON_AddStringToObject(root, "reason", "the trace carries no per-dim spec (torch failed before building it)");
    else if (r->torch_failed)
        cJSON_AddStringToObject(root, "reason", r->torch_failed);
    arr = cJSON_AddArrayToObject(root, "violations");
    for (i = 0; arr && i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o))
            goto oom;
        cJSON_AddStringToObject(o, "dim", v->dim);
        cJSON_AddStringToObject(o, "source", v->input < n ? in[v->input].source : "");
        cJSON_AddStringToObject(o, "kind", sg_violation_kind_name(v->kind));
        cJSON_AddStringToObject(o, "message", v->message ? v->message : "");
        if (v->relation)
            add_expr(o, "forced_value", v->relation, t);
        if (v->root < n)
            cJSON_AddStringToObject(o, "related_to", in[v->root].source);
        if (v->has_counterexample)
            cJSON_AddItemToObject(o, "counterexample", shapes(&keys, v->counterexample));
        else
            cJSON_AddNullToObject(o, "counterexample");
        x = cJSON_AddArrayToObject(o, "core");
        for (k = 0; x && k < v->ncore; k++) {
            cJSON *c = cJSON_CreateObject();
            if (!c || !cJSON_AddItemToArray(x, c))
                goto oom;
            cJSON_AddStringToObject(c, "kind", sg_core_kind_name(v->core[k].kind));
            cJSON_AddNumberToObject(c, "index", (double)v->core[k].index);
            cJSON_AddStringToObject(c, "text", v->core[k].text);
            if (v->core[k].loc)
                cJSON_AddStringToObject(c, "loc", v->core[k].loc);
            else
                cJSON_AddNullToObject(c, "loc");
        }
    }
    arr = cJSON_AddArrayToObject(root, "dims");
    for (i = 0; arr && i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        const sg_input_dim *id = &in[d->input];
        if (d->status == SG_DIM_STATIC)
            continue;
        o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o))
            goto oom;
        cJSON_AddStringToObject(o, "source", id->source);
        if (id->name)
            cJSON_AddStringToObject(o, "name", id->name);
        else
            cJSON_AddNullToObject(o, "name");
        cJSON_AddStringToObject(o, "status", sg_dim_status_name(d->status));
        if (d->reason[0])
            cJSON_AddStringToObject(o, "reason", d->reason);
    }
    o = cJSON_AddObjectToObject(root, "inferred");
    for (i = 0; o && i < r->ninferred; i++) {
        const sg_inferred *f = &r->inferred[i];
        cJSON *s = cJSON_AddObjectToObject(o, sg_expr_symbol_name(f->sym));
        if (!s)
            goto oom;
        if (f->input < n)
            cJSON_AddStringToObject(s, "source", in[f->input].source);
        x = cJSON_AddArrayToObject(s, "range");
        if (x) {
            cJSON_AddItemToArray(x, bound(f->lo));
            cJSON_AddItemToArray(x, bound(f->hi));
        }
        cJSON_AddBoolToObject(s, "range_exact", f->range_exact);
        if (f->is_constant)
            cJSON_AddItemToObject(s, "constant", num(f->constant));
        if (f->modulus > 1) {
            cJSON *c = cJSON_AddObjectToObject(s, "congruence");
            if (c) {
                cJSON_AddItemToObject(c, "modulus", num(f->modulus));
                cJSON_AddItemToObject(c, "residue", num(f->residue));
            }
        }
        x = cJSON_AddArrayToObject(s, "holes");
        for (k = 0; x && k < f->nholes; k++)
            cJSON_AddItemToArray(x, num(f->holes[k]));
        cJSON_AddBoolToObject(s, "holes_complete", f->holes_complete);
        if (f->equals)
            add_expr(s, "equals", f->equals, t);
    }
    arr = cJSON_AddArrayToObject(root, "suggested_fixes");
    for (i = 0; arr && r->fixes && r->fixes->verified && i < r->fixes->nfixes; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(r->fixes->fixes[i].line));
    o = cJSON_AddObjectToObject(root, "stats");
    if (o) {
        cJSON_AddNumberToObject(o, "queries", r->stats.queries);
        cJSON_AddNumberToObject(o, "decided_cheaply", r->stats.decided_cheaply);
        if (!(flags & SG_JSON_NO_TIMES))
            cJSON_AddNumberToObject(o, "seconds", r->stats.seconds);
    }
    if (r->fixes) {
        cJSON *fx = fixes_object(r, err, rc);
        if (!fx) {
            shape_keys_free(&keys);
            cJSON_Delete(root);
            return NULL;
        }
        cJSON_AddItemToObject(root, "fixes", fx);
    }
    shape_keys_free(&keys);
    return root;
oom:
    shape_keys_free(&keys);
    cJSON_Delete(root);
    *rc = sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
    return NULL;
}

/* cJSON's compact text of `j` (deleted) into a string of ours. */
static int print_object(char **out, cJSON *j, sg_error *err)
{
    char *txt = j ? cJSON_PrintUnformatted(j) : NULL;
    *out = txt ? sg__strndup(txt, strlen(txt)) : NULL;
    cJSON_free(txt);
    cJSON_Delete(j);
    return *out ? 0 : sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
}

/* {"archive": ..., "against": ..., "verdict": ..., "runtime_asserts": {...}, "guards_code": {...} | null,
 *  "report": {...}} */
static int verify_json(char **out, const sg_report *r, unsigned flags, sg_error *err)
{
    const sg_verify_info *v = r->verify;
    char *inner = NULL;
    sg_buf b;
    int rc;

    *out = NULL;
    if ((rc = print_object(&inner, check_object(r, flags, err, &rc), err)) != 0)
        return rc;
    sg_buf_init(&b, (size_t)1 << 30);
    sg__json_put_field(&b, "{\"archive\": ", v->name);
    sg_buf_printf(&b, ", \"against\": \"%s\", \"verdict\": \"%s\", \"runtime_asserts\": {\"count\": %zu, "
                      "\"checked\": %zu, \"data_dependent\": %zu, \"unrecovered\": %zu}%s",
                  v->against_spec ? "spec" : "range_constraints", sg_verdict_name(r->verdict), v->asserts,
                  v->checked - v->data_dependent, v->data_dependent, v->asserts - v->checked, "");
    if (v->has_guards_code)
        sg_buf_printf(&b, ", \"guards_code\": {\"count\": %zu, \"checked\": %zu, \"unrecovered\": %zu}",
                      v->guards, v->guards_read, v->guards - v->guards_read);
    else
        sg_buf_puts(&b, ", \"guards_code\": null");
    sg_buf_printf(&b, ", \"kernel_checks\": {\"count\": %zu, \"checked\": %zu, \"data_dependent\": %zu}",
                  v->kernels_all, v->kernels, v->kernels_all - v->kernels);
    sg_buf_printf(&b, ", \"report\": %s}", inner);
    sg_free(inner);
    return sg_buf_finish(&b, out, "the report", err);
}

int sg_report_to_json(char **out, const sg_report *r, unsigned flags, sg_error *err)
{
    int rc = 0;
    cJSON *j;

    SG_ENTRY_CHECK("sg_report_to_json", out, r, "sg_report_to_json: no report", err);
    if (r->kind == SG_REPORT_VERIFY && r->verify)
        return verify_json(out, r, flags, err);
    if (r->kind == SG_REPORT_SPEC && r->fixes)
        j = fixes_object(r, err, &rc);
    else
        j = check_object(r, flags, err, &rc);
    if (!j)
        return rc ? rc : sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
    return print_object(out, j, err);
}
