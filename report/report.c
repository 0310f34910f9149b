/*
 * report.c - the check report as JSON (the output contract of docs/check.md).
 *
 * Integers are JSON numbers when they are exact in a double (|v| <= 2**53),
 * else decimal strings; an infinite bound is null, as in torch's
 * range_constraints.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "shapegate/check.h"
#include "solver/problem.h"
#include "util/util.h"

static cJSON *num(sg_int v)
{
    char buf[SG_INT_STRLEN];
    if (v <= ((sg_int)1 << 53) && v >= -((sg_int)1 << 53))
        return cJSON_CreateNumber((double)v);
    return cJSON_CreateString(sg_int_format(buf, v));
}

static cJSON *bound(sg_bound b) { return b.inf ? cJSON_CreateNull() : num(b.v); }

static const char *kind_name(sg_violation_kind k)
{
    switch (k) {
    case SG_VIOL_SPEC: return "invalid_spec";
    case SG_VIOL_SPECIALIZED: return "specialized";
    case SG_VIOL_EQUAL: return "equal";
    case SG_VIOL_RELATED: return "related";
    default: return "guard";
    }
}

static const char *core_kind_name(sg_core_kind k)
{
    switch (k) {
    case SG_CORE_GUARD: return "guard";
    case SG_CORE_RANGE: return "range";
    case SG_CORE_REPLACEMENT: return "replacement";
    case SG_CORE_INPUT: return "input";
    default: return "spec";
    }
}

static const char *status_name(sg_dim_status s)
{
    switch (s) {
    case SG_DIM_PROVED: return "proved";
    case SG_DIM_REFUTED: return "refuted";
    case SG_DIM_UNKNOWN: return "unknown";
    default: return "static";
    }
}

/* {"['x']": [2, 3], ...}: the sizes of every input, grouped by tensor path. */
static cJSON *shapes(const sg_trace *t, const sg_int *sizes)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    cJSON *o = cJSON_CreateObject(), *arr = NULL;
    const char *path = NULL;
    if (!o)
        return NULL;
    for (i = 0; i < n; i++) {
        if (!path || strcmp(path, in[i].path) != 0) {
            path = in[i].path;
            arr = cJSON_AddArrayToObject(o, path);
            if (!arr)
                break;
        }
        cJSON_AddItemToArray(arr, num(sizes[i]));
    }
    return o;
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

int sg_report_to_json(char **out, const sg_report *r, const sg_trace *t, sg_error *err)
{
    cJSON *root = cJSON_CreateObject(), *arr, *o, *x;
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    char *txt;

    *out = NULL;
    if (!root)
        goto oom;
    cJSON_AddStringToObject(root, "verdict", sg_verdict_name(r->verdict));
    if (r->no_spec)
        cJSON_AddStringToObject(root, "reason", "the trace carries no per-dim spec (torch failed before building it)");
    arr = cJSON_AddArrayToObject(root, "violations");
    for (i = 0; arr && i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o))
            goto oom;
        cJSON_AddStringToObject(o, "dim", v->dim);
        cJSON_AddStringToObject(o, "source", v->input < n ? in[v->input].source : "");
        cJSON_AddStringToObject(o, "kind", kind_name(v->kind));
        cJSON_AddStringToObject(o, "message", v->message ? v->message : "");
        if (v->relation)
            add_expr(o, "forced_value", v->relation, t);
        if (v->root < n)
            cJSON_AddStringToObject(o, "related_to", in[v->root].source);
        if (v->has_counterexample)
            cJSON_AddItemToObject(o, "counterexample", shapes(t, v->counterexample));
        else
            cJSON_AddNullToObject(o, "counterexample");
        x = cJSON_AddArrayToObject(o, "core");
        for (k = 0; x && k < v->ncore; k++) {
            cJSON *c = cJSON_CreateObject();
            if (!c || !cJSON_AddItemToArray(x, c))
                goto oom;
            cJSON_AddStringToObject(c, "kind", core_kind_name(v->core[k].kind));
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
        cJSON_AddStringToObject(o, "status", status_name(d->status));
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
    for (i = 0; arr && i < r->nfixes; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(r->suggested_fixes[i]));
    o = cJSON_AddObjectToObject(root, "stats");
    if (o) {
        cJSON_AddNumberToObject(o, "queries", r->stats.queries);
        cJSON_AddNumberToObject(o, "decided_cheaply", r->stats.decided_cheaply);
        cJSON_AddNumberToObject(o, "seconds", r->stats.seconds);
    }
    txt = cJSON_PrintUnformatted(root);
    if (!txt)
        goto oom;
    *out = sg__strndup(txt, strlen(txt));
    cJSON_free(txt);
    cJSON_Delete(root);
    return *out ? 0 : sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
oom:
    cJSON_Delete(root);
    return sg_error_set(err, SG_ENOMEM, "out of memory writing the report");
}
