/*
 * fuzz_trace.c - libFuzzer target for the single-file JSON trace loader.
 *
 * Arbitrary bytes go to sg_trace_load_json. When they load, the trace is
 * written with sg_trace_to_json, that text must load again, and writing the
 * reloaded trace must give the same bytes (the format's determinism promise).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "shapegate/trace.h"

/* Load, write, reload, write again (see the file comment). Returns 0. */
int sg_fuzz_trace(const uint8_t *data, size_t size)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL, *t2 = NULL;
    char *json = NULL, *json2 = NULL;
    int rc;

    rc = sg_trace_load_json(&t, (const char *)data, size, &err);
    if (rc != 0) {
        if (t)
            SG_FUZZ_FAIL("failed load (%d) left a trace", rc);
        goto cleanup;
    }
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
    sg_trace_free(t);
    sg_trace_free(t2);
    return 0;
}

#ifndef SG_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return sg_fuzz_trace(data, size); }
#endif
