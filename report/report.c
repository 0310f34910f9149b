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
    SG_FREE_ALL(f->name, f->source, f->root, f->line);
}

void sg_fixes_free(sg_fixes *f)
{
    size_t i;
    if (!f)
        return;
    for (i = 0; i < f->nfixes; i++)
        sg_fix__dispose(&f->fixes[i]);
    sg_free(f->fixes);
    sg__free_array(f->notes, f->nnotes);
    sg_free(f->spec_json);
    sg_free(f->python);
    sg_trace_free(f->checked);
    sg_free(f);
}

void sg_fixes__release_checked(sg_fixes *f)
{
    if (f) {
        sg_trace_free(f->checked);
        f->checked = NULL;
    }
}

void sg_torch_recheck_free(sg_torch_recheck *k)
{
    if (!k)
        return;
    sg__free_array(k->lines, k->nlines);
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
    sg_free(r->torch_failed);
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
    case SG_VERDICT_TORCH_FAILED: return "torch_failed";
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
    case SG_VIOL_RANGE: return "range_conflict";
    case SG_VIOL_TORCH: return "torch";
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

/* ---- the accessors (include/shapegate/report.h) -------------------------------------------- */

sg_report_kind sg_report_kind_of(const sg_report *r) { return r ? r->kind : SG_REPORT_CHECK; }

sg_verdict sg_report_verdict(const sg_report *r) { return r ? r->verdict : SG_VERDICT_UNKNOWN; }

const sg_trace *sg_report_trace(const sg_report *r) { return r ? r->trace : NULL; }

bool sg_report_no_spec(const sg_report *r) { return r && r->no_spec; }

size_t sg_report_dim_count(const sg_report *r) { return r ? r->ndims : 0; }

sg_dim_status sg_report_dim_status(const sg_report *r, size_t i)
{
    return r && i < r->ndims ? r->dims[i].status : SG_DIM_STATIC;
}

const char *sg_report_dim_reason(const sg_report *r, size_t i)
{
    return r && i < r->ndims ? r->dims[i].reason : NULL;
}

static const sg_violation *violation(const sg_report *r, size_t v)
{
    return r && v < r->nviolations ? &r->violations[v] : NULL;
}

size_t sg_report_violation_count(const sg_report *r) { return r ? r->nviolations : 0; }

sg_violation_kind sg_report_violation_kind(const sg_report *r, size_t v)
{
    const sg_violation *x = violation(r, v);
    return x ? x->kind : SG_VIOL_GUARD;
}

const char *sg_report_violation_dim(const sg_report *r, size_t v)
{
    const sg_violation *x = violation(r, v);
    return x ? x->dim : NULL;
}

const char *sg_report_violation_message(const sg_report *r, size_t v)
{
    const sg_violation *x = violation(r, v);
    return x ? x->message : NULL;
}

size_t sg_report_violation_input(const sg_report *r, size_t v)
{
    const sg_violation *x = violation(r, v);
    return x ? x->input : SIZE_MAX;
}

bool sg_report_violation_counterexample(const sg_report *r, size_t v, size_t input, sg_num *size)
{
    const sg_violation *x = violation(r, v);
    if (!x || !x->has_counterexample || input >= r->ndims)
        return false;
    if (size)
        *size = sg__num(x->counterexample[input]);
    return true;
}

static const sg_core_item *core(const sg_report *r, size_t v, size_t k)
{
    const sg_violation *x = violation(r, v);
    return x && k < x->ncore ? &x->core[k] : NULL;
}

size_t sg_report_core_count(const sg_report *r, size_t v)
{
    const sg_violation *x = violation(r, v);
    return x ? x->ncore : 0;
}

sg_core_kind sg_report_core_kind(const sg_report *r, size_t v, size_t k)
{
    const sg_core_item *c = core(r, v, k);
    return c ? c->kind : SG_CORE_GUARD;
}

size_t sg_report_core_index(const sg_report *r, size_t v, size_t k)
{
    const sg_core_item *c = core(r, v, k);
    return c ? c->index : SIZE_MAX;
}

const char *sg_report_core_text(const sg_report *r, size_t v, size_t k)
{
    const sg_core_item *c = core(r, v, k);
    return c ? c->text : NULL;
}

const char *sg_report_core_loc(const sg_report *r, size_t v, size_t k)
{
    const sg_core_item *c = core(r, v, k);
    return c ? c->loc : NULL;
}

static const sg_inferred *inferred(const sg_report *r, size_t i)
{
    return r && i < r->ninferred ? &r->inferred[i] : NULL;
}

size_t sg_report_inferred_count(const sg_report *r) { return r ? r->ninferred : 0; }

const char *sg_report_inferred_symbol(const sg_report *r, size_t i)
{
    const sg_inferred *f = inferred(r, i);
    return f ? sg_expr_symbol_name(f->sym) : NULL;
}

bool sg_report_inferred_range(const sg_report *r, size_t i, sg_num *lo, sg_num *hi, bool *exact)
{
    const sg_inferred *f = inferred(r, i);
    if (!f)
        return false;
    if (lo)
        *lo = sg__num_bound(f->lo);
    if (hi)
        *hi = sg__num_bound(f->hi);
    if (exact)
        *exact = f->range_exact;
    return true;
}

bool sg_report_inferred_congruence(const sg_report *r, size_t i, sg_num *modulus, sg_num *residue)
{
    const sg_inferred *f = inferred(r, i);
    if (!f || f->modulus <= 1)
        return false;
    if (modulus)
        *modulus = sg__num(f->modulus);
    if (residue)
        *residue = sg__num(f->residue);
    return true;
}

size_t sg_report_inferred_hole_count(const sg_report *r, size_t i)
{
    const sg_inferred *f = inferred(r, i);
    return f ? f->nholes : 0;
}

bool sg_report_inferred_hole(const sg_report *r, size_t i, size_t k, sg_num *value)
{
    const sg_inferred *f = inferred(r, i);
    if (!f || k >= f->nholes)
        return false;
    if (value)
        *value = sg__num(f->holes[k]);
    return true;
}

bool sg_report_has_fixes(const sg_report *r) { return r && r->fixes; }

bool sg_report_fixes_verified(const sg_report *r) { return r && r->fixes && r->fixes->verified; }

sg_verdict sg_report_fixes_recheck(const sg_report *r)
{
    return r && r->fixes ? r->fixes->recheck : SG_VERDICT_UNKNOWN;
}

size_t sg_report_fix_count(const sg_report *r) { return r && r->fixes ? r->fixes->nfixes : 0; }

const char *sg_report_fix_line(const sg_report *r, size_t i)
{
    return r && r->fixes && i < r->fixes->nfixes ? r->fixes->fixes[i].line : NULL;
}

size_t sg_report_note_count(const sg_report *r) { return r && r->fixes ? r->fixes->nnotes : 0; }

const char *sg_report_note(const sg_report *r, size_t i)
{
    return r && r->fixes && i < r->fixes->nnotes ? r->fixes->notes[i] : NULL;
}

const char *sg_report_fixed_spec_json(const sg_report *r) { return r && r->fixes ? r->fixes->spec_json : NULL; }

const char *sg_report_torch_message(const sg_report *r) { return r ? r->torch_message : NULL; }

void sg_report_stats(const sg_report *r, unsigned *queries, unsigned *decided_cheaply, double *seconds)
{
    if (queries)
        *queries = r ? r->stats.queries : 0;
    if (decided_cheaply)
        *decided_cheaply = r ? r->stats.decided_cheaply : 0;
    if (seconds)
        *seconds = r ? r->stats.seconds : 0;
}
