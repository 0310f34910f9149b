/*
 * props.c - properties shared by the fuzz targets (declared in fuzz.h).
 *
 * sg_fuzz_trace_roundtrip(): a loaded trace writes as JSON, the text loads
 * again, and writing that gives the same bytes.
 *
 * sg_fuzz_check_trace(): the trace is checked with
 * a tight budget (query rlimit 10000, 10 ms per query, 100 ms in all, no
 * inference), and the report must serialise. Properties: sg_check returns 0
 * or a documented error; the verdict and per-dim statuses are in range; every
 * dim marked proved is not also named by a violation; verdict ok has no
 * violations.
 *
 * Brute force where the domain is small: when the trace is one the check
 * oracle models exactly (tests/oracle_model.h: named, derived and static dims
 * over backed symbols; traced ranges may be infinite, the box is narrowed to
 * what the spec gives) and every Dim name of the spec takes at most
 * CONFIRM_MAX_VALUES values (at most 3 names), every shape the spec allows is
 * enumerated and evaluated with sg_expr_eval:
 *   - verdict ok: every allowed shape passes every guard and traced range;
 *   - a proved dim (when every violation is a guard violation, so that the
 *     refuted dims are pinned to their example sizes as check.c does): no
 *     allowed shape fails a constraint of the proved dim's component;
 *   - every guard violation's counterexample keeps the static dims at their
 *     sizes and fails a guard or traced range.
 * A counterexample to any of these is printed and aborts. With the environment
 * variable SG_FUZZ_CONFIRM_LOG set, each input prints what was confirmed (or
 * why the trace is not modelled) to stderr.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oracle_model.h"
#include "analysis/check.h"

/* Most values a Dim name may take for the brute-force confirmation. */
#define CONFIRM_MAX_VALUES 64

/* Print the model's shape D and the reason, then abort (a broken property). */
static void confirm_fail(const model *m, const long *D, const char *what)
{
    sbuf b = {0};
    format_shape(&b, m, D);
    SG_FUZZ_FAIL("%s: shape %s", what, sb_str(&b));
}

/*
 * Confirm report `r` on trace `t` by enumeration when the trace is one the
 * oracle models and its spec domain is small (see the file comment); aborts on
 * a counterexample, otherwise returns having checked what applies.
 */
static void confirm(const sg_trace *t, const sg_report *r)
{
    model m;
    sbuf why = {0};
    long lo[MAX_NAMES], hi[MAX_NAMES], D[MAX_IN];
    bool used[MAX_NAMES], pinned[MAX_IN] = {false}, all_guard = true;
    size_t v, i, ncex = 0, nproved = 0;
    int j;
    bool log = getenv("SG_FUZZ_CONFIRM_LOG") != NULL;

    if (model_from_trace_spec_box(&m, t, &why) != 0 || r->ndims != (size_t)m.nin)
        goto cleanup;
    for (i = 0; i < r->ndims; i++)
        if (r->dims[i].input != i)
            goto cleanup;
    name_domains(&m, NULL, lo, hi, used);
    for (j = 0; j < MAX_NAMES; j++)
        if (used[j] && hi[j] - lo[j] + 1 > CONFIRM_MAX_VALUES) {
            sb_printf(&why, "Dim name %d takes %ld values", j, hi[j] - lo[j] + 1);
            goto cleanup;
        }
    /* counterexamples: static dims at their sizes, and some constraint fails */
    for (v = 0; v < r->nviolations; v++) {
        const sg_violation *x = &r->violations[v];
        bool in_box = true;
        if (x->kind != SG_VIOL_GUARD) {
            all_guard = false;
            continue;
        }
        if (!x->has_counterexample || !x->counterexample)
            continue;
        for (i = 0; i < (size_t)m.nin; i++) {
            sg_int c = x->counterexample[i];
            if (m.in[i].kind == OD_STATIC && c != m.in[i].size)
                SG_FUZZ_FAIL("violation %zu: counterexample changes static input dim %zu", v, i);
            in_box &= c >= -1000000 && c <= 1000000;
            D[i] = in_box ? (long)c : 0;
        }
        if (in_box && shape_passes(&m, D))
            confirm_fail(&m, D, "a guard violation's counterexample passes every guard and traced range");
        ncex++;
    }
    for (i = 0; i < (size_t)m.nin; i++)
        pinned[i] = r->dims[i].status == SG_DIM_REFUTED;
    if (r->verdict == SG_VERDICT_OK && spec_fails(&m, NULL, ALL_SYMS, D))
        confirm_fail(&m, D, "verdict ok, but an allowed shape fails");
    /* Known, reported: with no flat spec (r->no_spec) check.c leaves the named dims "proved"
     * though nothing was decided (tests/data/regress/check/no_flat_spec_dims_proved). */
    if (all_guard && !r->no_spec) {
        int comp[MAX_IN];
        unsigned csyms[MAX_IN];
        components(&m, comp, csyms);
        for (i = 0; i < (size_t)m.nin; i++) {
            if (r->dims[i].status != SG_DIM_PROVED || comp[i] < 0)
                continue;
            nproved++;
            if (spec_fails(&m, pinned, csyms[comp[i]], D)) {
                char what[128];
                snprintf(what, sizeof what, "input dim %zu proved, but with the refuted dims pinned an allowed "
                         "shape fails a constraint of its component", i);
                confirm_fail(&m, D, what);
            }
        }
    }
    if (log)
        fprintf(stderr, "confirm: verdict %d: %zu counterexamples, %zu proved dims confirmed\n", (int)r->verdict,
                ncex, nproved);
cleanup:
    if (log && why.n)
        fprintf(stderr, "confirm: not modelled: %s\n", sb_str(&why));
    model_dispose(&m);
    sb_free(&why);
}

/* Check trace `t` under a tight budget and test the report (see the file comment). */
void sg_fuzz_check_trace(const sg_trace *t)
{
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_report *r = NULL;
    char *json = NULL;
    size_t i, j;
    int rc;

    opts.timeout_ms = 100;
    opts.query_timeout_ms = 10;
    opts.query_rlimit = 10000;
    opts.infer = false;
    rc = sg_check(&r, t, &opts, &err);
    if (rc != 0) {
        if (rc != SG_ENOMEM && rc != SG_ERROR && rc != SG_EINVALID)
            SG_FUZZ_FAIL("sg_check returned undocumented code %d (%s)", rc, err.msg);
        if (r)
            SG_FUZZ_FAIL("failed check left a report");
        goto cleanup;
    }
    if ((int)r->verdict < SG_VERDICT_OK || r->verdict > SG_VERDICT_TORCH_FAILED)
        SG_FUZZ_FAIL("verdict out of range: %d", (int)r->verdict);
    for (i = 0; i < r->ndims; i++) {
        if ((int)r->dims[i].status < SG_DIM_PROVED || r->dims[i].status > SG_DIM_STATIC)
            SG_FUZZ_FAIL("dim status out of range");
        if (r->dims[i].status != SG_DIM_PROVED)
            continue;
        for (j = 0; j < r->nviolations; j++)
            if (r->violations[j].input == r->dims[i].input)
                SG_FUZZ_FAIL("input dim %zu is proved and violated", r->dims[i].input);
    }
    if (r->verdict == SG_VERDICT_OK && r->nviolations)
        SG_FUZZ_FAIL("verdict ok with %zu violations", r->nviolations);
    rc = sg_report_to_json(&json, r, 0, &err);
    if (rc != 0 && rc != SG_ENOMEM && rc != SG_ELIMIT)
        SG_FUZZ_FAIL("report does not serialise (%d: %s)", rc, err.msg);
    confirm(t, r);
cleanup:
    sg_free(json);
    sg_report_free(r);
}

/* Write `t` as JSON, reload, write again: the two texts must be equal. */
void sg_fuzz_trace_roundtrip(const sg_trace *t)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t2 = NULL;
    char *json = NULL, *json2 = NULL;
    int rc;

    if (sg_trace_to_json(&json, t, &err) != 0)
        goto cleanup; /* SG_ELIMIT: an expression too long to print */
    rc = sg_trace_load_json(&t2, json, strlen(json), &err);
    if (rc != 0)
        SG_FUZZ_FAIL("written trace does not reload (%d: %s):\n%s", rc, err.msg, json);
    rc = sg_trace_to_json(&json2, t2, &err);
    if (rc != 0)
        SG_FUZZ_FAIL("reloaded trace does not write (%d: %s)", rc, err.msg);
    if (strcmp(json, json2) != 0)
        SG_FUZZ_FAIL("writing is not stable:\n%s\n---\n%s", json, json2);
cleanup:
    sg_free(json);
    sg_free(json2);
    sg_trace_free(t2);
}
