/*
 * recheck.c - torch's own suggested fixes re-checked: its lines read as its
 * refine step reads them (torch/fixlines.c), applied to a structured copy of
 * the trace and checked; the verdict, and the first violation with its
 * counterexample or why a line could not be read. Lines that make the very
 * trace our verified fixes made (sg_trace__same_content) are OK without a
 * check: that trace's check found it OK, a proof that holds for its copy.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "analysis/fixes.h"
#include "report/report.h"
#include "torch/fixlines.h"
#include "util/json.h"
#include "util/util.h"

int sg_fixes_check_lines(sg_verdict *verdict, char **why, const sg_trace *t, const char *const *lines, size_t n,
                         const sg_check_options *opts, sg_error *err)
{
    return sg_fixes_check_lines_rt(verdict, why, t, lines, n, opts, NULL, NULL, err);
}

/* A guard violation of a derived dim of `t` (the trace with torch's lines applied). */
static bool derived_guard(const sg_violation *v, const sg_trace *t)
{
    size_t n = 0;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    return v->kind == SG_VIOL_GUARD && v->input < n && in[v->input].kind == SG_SPEC_DERIVED;
}

/* The violation a re-check shows: the first, or the first guard violation of a plain dim when the
 * first charges a derived dim (explained by its values, check_values.c charges every dim the
 * failing guard reads, derived ones too, where torch names the root). */
static const sg_violation *shown_violation(const sg_report *rep, const sg_trace *t)
{
    size_t j;
    if (derived_guard(&rep->violations[0], t))
        for (j = 1; j < rep->nviolations; j++)
            if (rep->violations[j].kind == SG_VIOL_GUARD && !derived_guard(&rep->violations[j], t))
                return &rep->violations[j];
    return &rep->violations[0];
}

int sg_fixes_check_lines_rt(sg_verdict *verdict, char **why, const sg_trace *t, const char *const *lines,
                            size_t n, const sg_check_options *opts, const sg_runtime *rt, const sg_trace *ok,
                            sg_error *err)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_trace *copy = NULL;
    sg_report *rep = NULL;
    sg_spec_edits items;
    size_t nin = 0, j;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    char num[SG_INT_STRLEN];
    int rc = 0;

    *verdict = SG_VERDICT_UNKNOWN;
    *why = NULL;
    memset(&items, 0, sizeof items);
    if ((rc = sg_check__options(&o, opts, err)) != 0)
        return rc;
    o.infer = false;
    if ((rc = sg_torch_read_fix_lines(&items, why, t, lines, n, err)) != 0)
        goto cleanup;
    if (*why) { /* a line torch's refine step cannot read: the spec it makes is invalid */
        *verdict = SG_VERDICT_INVALID_SPEC;
        goto cleanup;
    }
    if ((rc = sg_trace_edit(&copy, t, &items, err)) != 0) {
        if (rc == SG_ENOMEM)
            goto cleanup;
        *verdict = SG_VERDICT_INVALID_SPEC;
        *why = sg__strndup(err->msg, strlen(err->msg));
        rc = 0;
        goto cleanup;
    }
    if (sg_trace__same_content(copy, ok)) { /* the spec our fixes make, checked OK already: a proof */
        *verdict = SG_VERDICT_OK;
        goto cleanup;
    }
    if ((rc = sg_check__first_rt(&rep, copy, &o, rt, err)) != 0) /* the verdict and the first violation */
        goto cleanup;
    *verdict = rep->verdict;
    if (rep->nviolations) {
        const sg_violation *v = shown_violation(rep, copy);
        sg_buf b2;
        sg_buf_init(&b2, 1 << 20);
        sg_buf_puts(&b2, v->message ? v->message : "violation");
        if (v->has_counterexample) {
            sg_buf_puts(&b2, " (counterexample:");
            for (j = 0; j < nin; j++)
                if (in[j].kind != SG_SPEC_UNSET && in[j].kind != SG_SPEC_STATIC)
                    sg_buf_printf(&b2, " %s = %s", in[j].source, sg_int_format(num, v->counterexample[j]));
            sg_buf_puts(&b2, ")");
        }
        if (b2.failed) {
            sg_buf_dispose(&b2);
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        *why = sg_buf_take(&b2);
    }
cleanup:
    sg_spec_edits__dispose(&items);
    sg_report_free(rep);
    sg_trace_free(copy);
    return rc;
}

/* ---- torch's own lines of a trace ------------------------------------------------------- */

int sg_torch_recheck_rt(sg_torch_recheck **out, const sg_trace *t, const sg_check_options *opts,
                        const sg_runtime *rt, const sg_trace *ok, sg_error *err)
{
    const char *js = sg_trace_torch_fixes_json(t);
    sg_torch_recheck *k = NULL;
    cJSON *arr = NULL;
    const cJSON *it;
    int rc;

    *out = NULL;
    if (!js)
        return 0;
    if ((rc = sg__json_parse(&arr, js, strlen(js), (size_t)1 << 26, 16, "torch_suggested_fixes", err)) != 0)
        return rc;
    if (!(k = sg__calloc(1, sizeof *k)) || !(k->lines = sg__calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof *k->lines))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    cJSON_ArrayForEach(it, arr) {
        const char *line = sg__json_str(it);
        if (!line)
            continue;
        if (!(k->lines[k->nlines] = sg__strndup(line, strlen(line)))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        k->nlines++;
    }
    if (k->nlines == 0)
        goto cleanup; /* no lines: nothing to re-check */
    if ((rc = sg_fixes_check_lines_rt(&k->verdict, &k->why, t, (const char *const *)k->lines, k->nlines, opts, rt,
                                      ok, err)) != 0)
        goto cleanup;
    *out = k;
    k = NULL;
cleanup:
    sg_torch_recheck_free(k);
    cJSON_Delete(arr);
    return rc;
}

