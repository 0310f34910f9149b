/*
 * spec_repair.h - the nearest valid spec for a spec torch refused before it
 * traced the model (docs/fixes.md, "Specs torch refuses before tracing"):
 * its structure rebuilt on the inputs' pytree, dims beyond a tensor's rank
 * dropped, unknown argument names renamed or dropped, Dims whose examples
 * disagree split, and a Dim torch refused to build (min >= max) rewritten.
 * Internal to the library (analysis/fixes.c calls it); it never prints.
 */
#ifndef SG_ANALYSIS_SPEC_REPAIR_H
#define SG_ANALYSIS_SPEC_REPAIR_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"

typedef struct sg_spec_repair {
    sg_trace *trace;  /* a copy of the trace with the repaired spec (owned), or NULL: nothing repaired */
    char *python;     /* a Dim torch refused to build before recording any input (no spec to rebuild):
                       * paste-ready Python defining `repaired_Dim`, a drop-in for `Dim` (owned), or NULL */
    char **notes;     /* what was changed and why, one line each (owned) */
    size_t nnotes;
    char **split;     /* the new Dim names given to dims split off a shared or derived Dim (owned): no
                       * line of torch's fix language says "this use of d only", the Python does */
    size_t nsplit;
} sg_spec_repair;

/*
 * Repair the spec of `t` (a trace whose check says invalid_spec) as far as its
 * structure and its Dims' examples go; the range rules (an example outside
 * the range, two definitions of one name, ...) stay with the caller. The
 * repaired spec is read back through the trace's spec reader (the same
 * validator then sees it). `out` is zeroed first and owns what it gets.
 * Returns 0 or an error code (SG_ENOMEM).
 */
int sg_spec_repair_structure(sg_spec_repair *out, const sg_trace *t, sg_error *err);

/* Free what `r` owns; it is left zeroed. NULL-safe. */
void sg_spec_repair_dispose(sg_spec_repair *r);

#endif
