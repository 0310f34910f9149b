/*
 * validate.h - validating a dynamic_shapes spec the way torch does before and
 * while it creates symbols, with torch's messages. Internal to the library:
 * the check (analysis/check.c) turns the issues into violations, torch's
 * message text (torch/message.c) stops where torch stops.
 */
#ifndef SG_TORCH_VALIDATE_H
#define SG_TORCH_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"
#include "util/strmap.h"

/* One way the spec is invalid, or a named dim torch specialises. */
typedef struct sg_spec_issue {
    size_t input;       /* the input dim (sg_trace_inputs), SIZE_MAX for the spec as a whole */
    bool specialized;   /* a named dim of example size 0 or 1 torch makes a constant; else invalid */
    char *dim;          /* the name torch uses: the Dim name, else the source */
    char *message;      /* torch's message */
} sg_spec_issue;

typedef struct sg_spec_issues {
    sg_spec_issue *v;
    size_t n, cap;
    bool invalid;       /* some issue is not `specialized`: torch rejects the spec */
} sg_spec_issues;

/*
 * Append to `r` (zeroed, or from an earlier call) every way the spec of `t` is
 * invalid, or specialises a named dim because its example size is 0 or 1 (only
 * when nothing is invalid). `pool` is a scratch overlay of the trace's pool
 * (derived dims are evaluated in it). Returns 0 or SG_ENOMEM.
 */
int sg_spec_validate(const sg_trace *t, sg_pool *pool, sg_spec_issues *r, sg_error *err);

/* Each Dim name of in[0..n) (kind SG_SPEC_DIM) mapped to the index of its first use, into `m`
 * (empty on entry; names borrowed from `in`). What torch's spec checks and its message pair a
 * later use of a name with. 0 or SG_ENOMEM. */
int sg_spec__first_dims(sg_strmap *m, const sg_input_dim *in, size_t n);

/* Free the issues' strings and array; `r` is left empty. NULL-safe. */
void sg_spec_issues_dispose(sg_spec_issues *r);

#endif
