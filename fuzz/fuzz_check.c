/*
 * fuzz_check.c - libFuzzer target for the whole check pipeline on small inputs.
 *
 * The bytes are read as a single-file JSON trace (inputs over 16 KiB are
 * skipped: the point is many small traces); a trace that loads is checked with
 * a tight budget (query rlimit 200000, 200 ms per query, 2 s in all, no
 * inference), and the report must serialise. Properties: sg_check returns 0
 * or a documented error; the verdict and per-dim statuses are in range; every
 * dim marked proved is not also named by a violation.
 *
 * Not checked here: confirming "proved" by brute force. tests/test_oracle.c
 * does that on generated traces whose domains are small by construction;
 * arbitrary fuzzed traces rarely have such domains, so it is left out.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "shapegate/check.h"

/* Load the bytes as a trace and check it under a tight budget. Returns 0. */
int sg_fuzz_check(const uint8_t *data, size_t size)
{
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    char *json = NULL;
    size_t i, j;
    int rc;

    if (size > (size_t)16 << 10)
        return 0;
    if (sg_trace_load_json(&t, (const char *)data, size, &err) != 0)
        goto cleanup;
    opts.timeout_ms = 2000;
    opts.query_timeout_ms = 200;
    opts.query_rlimit = 200000;
    opts.infer = false;
    rc = sg_check(&r, t, &opts, &err);
    if (rc != 0) {
        if (rc != SG_ENOMEM && rc != SG_ERROR && rc != SG_EINVALID)
            SG_FUZZ_FAIL("sg_check returned undocumented code %d (%s)", rc, err.msg);
        if (r)
            SG_FUZZ_FAIL("failed check left a report");
        goto cleanup;
    }
    if ((int)r->verdict < SG_VERDICT_OK || r->verdict > SG_VERDICT_INVALID_SPEC)
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
    rc = sg_report_to_json(&json, r, t, &err);
    if (rc != 0 && rc != SG_ENOMEM && rc != SG_ELIMIT)
        SG_FUZZ_FAIL("report does not serialise (%d: %s)", rc, err.msg);
cleanup:
    sg_free(json);
    sg_report_free(r);
    sg_trace_free(t);
    return 0;
}

#ifndef SG_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sg_fuzz_check(data, size); }
#endif
