/*
 * fuzz_check.c - libFuzzer target for the whole check pipeline on small inputs.
 *
 * The bytes are read as a single-file JSON trace (inputs over 16 KiB are
 * skipped: the point is many small traces); a trace that loads goes through
 * sg_fuzz_check_trace() (fuzz/props.c): sg_check under a tight budget, the
 * report's invariants, and brute-force confirmation of its verdicts where the
 * spec's domain is small.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "trace/trace.h"

/* Load the bytes as a trace and check it under a tight budget. Returns 0. */
int sg_fuzz_check(const uint8_t *data, size_t size)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;

    if (size > (size_t)16 << 10)
        return 0;
    if (sg_trace_load_json(&t, (const char *)data, size, &err) == 0)
        sg_fuzz_check_trace(t);
    sg_trace_free(t);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_check)
