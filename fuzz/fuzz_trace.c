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
#include "trace/trace.h"

/* Load, then write, reload and write again (see the file comment). Returns 0. */
int sg_fuzz_trace(const uint8_t *data, size_t size)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    int rc;

    rc = sg_trace_load_json(&t, (const char *)data, size, &err);
    if (rc != 0) {
        if (rc != SG_ELIMIT && rc != SG_EINVALID && rc != SG_EUNSUPPORTED && rc != SG_ENOMEM)
            SG_FUZZ_FAIL("sg_trace_load_json returned undocumented code %d (%s)", rc, err.msg);
        if (t)
            SG_FUZZ_FAIL("failed load (%d) left a trace", rc);
        return 0;
    }
    sg_fuzz_trace_roundtrip(t);
    sg_trace_free(t);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_trace)
