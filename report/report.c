/*
 * report.c - the report model's life cycle (report/report.h): making a report,
 * freeing it and every part the engine attached (fixes, torch's text and its
 * re-checked lines, the program's side of a verify report), and the names of
 * its enumerations shared by every writer.
 */
#include <string.h>

#include "report/report.h"
#include "trace/trace_impl.h"
#include "util/util.h"

int sg_report__new(sg_report **out, sg_report_kind kind, const sg_trace *t, bool with_pool, sg_error *err)
{
    sg_report *r = sg__calloc(1, sizeof *r);
    int rc;

    *out = NULL;
    if (!r)
        return sg_error_set(err, SG_ENOMEM, "out of memory creating a report");
    r->kind = kind;
    atomic_init(&r->refs, 1);
    if (with_pool && (rc = sg_pool_overlay_new(&r->pool, sg_trace_pool(t), err)) != 0) {
        sg_free(r);
        return rc;
    }
    r->trace = sg_trace__ref(t);
    *out = r;
    return 0;
}

void sg_fix__dispose(sg_fix *f)
{
    sg_free(f->name);
    sg_free(f->source);
    sg_free(f->root);
    sg_free(f->line);
}

void sg_fixes_free(sg_fixes *f)
{
    size_t i;
    if (!f)
        return;
    for (i = 0; i < f->nfixes; i++)
        sg_fix__dispose(&f->fixes[i]);
    sg_free(f->fixes);
    for (i = 0; i < f->nnotes; i++)
        sg_free(f->notes[i]);
    sg_free(f->notes);
    sg_free(f->spec_json);
    sg_free(f);
}

void sg_torch_recheck_free(sg_torch_recheck *k)
{
    size_t i;
    if (!k)
        return;
    for (i = 0; i < k->nlines; i++)
        sg_free(k->lines[i]);
    sg_free(k->lines);
    sg_free(k->why);
    sg_free(k);
}

sg_report *sg_report__ref(const sg_report *r)
{
    sg_report *m = (sg_report *)r; /* the count is the one mutable field */
    if (m)
        atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

void sg_report_free(sg_report *r)
{
    size_t i, k;
    if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (i = 0; i < r->nviolations; i++) {
        sg_violation *v = &r->violations[i];
        sg_free(v->dim);
        sg_free(v->message);
        sg_free(v->counterexample);
        for (k = 0; k < v->ncore; k++)
            sg_free(v->core[k].text);
        sg_free(v->core);
    }
    sg_free(r->violations);
    sg_free(r->dims);
    for (i = 0; i < r->ninferred; i++)
        sg_free(r->inferred[i].holes);
    sg_free(r->inferred);
    sg_fixes_free(r->fixes);
    sg_free(r->torch_message);
    sg_torch_recheck_free(r->torch);
    if (r->verify)
        sg_free(r->verify->name);
    sg_free(r->verify);
    sg_pool_free(r->pool);
    sg_trace_free(r->trace);
    sg_free(r);
}

const char *sg_verdict_name(sg_verdict v)
{
    switch (v) {
    case SG_VERDICT_OK: return "ok";
    case SG_VERDICT_VIOLATIONS: return "violations";
    case SG_VERDICT_UNKNOWN: return "unknown";
    default: return "invalid_spec";
    }
}

const char *sg_dim_status_name(sg_dim_status s)
{
    switch (s) {
    case SG_DIM_PROVED: return "proved";
    case SG_DIM_REFUTED: return "refuted";
    case SG_DIM_UNKNOWN: return "unknown";
    default: return "static";
    }
}

const char *sg_violation_kind_name(sg_violation_kind k)
{
    switch (k) {
    case SG_VIOL_SPEC: return "invalid_spec";
    case SG_VIOL_SPECIALIZED: return "specialized";
    case SG_VIOL_EQUAL: return "equal";
    case SG_VIOL_RELATED: return "related";
    default: return "guard";
    }
}

const char *sg_core_kind_name(sg_core_kind k)
{
    switch (k) {
    case SG_CORE_GUARD: return "guard";
    case SG_CORE_RANGE: return "range";
    case SG_CORE_REPLACEMENT: return "replacement";
    case SG_CORE_INPUT: return "input";
    default: return "spec";
    }
}
