/*
 * gate.h - the release gate's result model: analysis/gate.c builds it,
 * report/gate.c renders it and frees it; the public handle is sg_gate in
 * include/shapegate/engine.h. Immutable once built; any thread may read it.
 */
#ifndef SG_REPORT_GATE_H
#define SG_REPORT_GATE_H

#include <stdbool.h>

#include "shapegate/engine.h"
#include "expr/num.h"

/* One tensor input of a witness: its pytree path and sizes. */
typedef struct sg_gate_shape {
    char *path;
    size_t ndim;
    sg_int *sizes;
} sg_gate_shape;

/* One direction of the comparison: a shape one version accepts and the other rejects. */
typedef struct sg_gate_finding {
    bool found;
    bool unknown;          /* not decided (reason says why) */
    char reason[160];
    sg_gate_shape *witness; /* every tensor input of the accepting version, in signature order */
    size_t nwitness;
    char *rejected_by;     /* the rejecting version's condition, printed as torch does, or NULL */
    const struct sg_expr *cond; /* that condition (in the gate's pool: valid only while it runs) */
    char *kind;            /* "guards_code", "range_constraints", "runtime_assert", "shape", "signature" */
    char *source;          /* where it is in the archive ("guards_code[2]", "range_constraints['s53']", ...) */
} sg_gate_finding;

/* One input dim of OLD and its sizes in both versions. */
typedef struct sg_gate_dim {
    char *path;
    size_t dim;
    char *old_size, *new_size; /* sympy text; new_size NULL when NEW has no such dim */
    bool regressed;            /* the condition rejecting the regression witness is about this dim */
    bool widened;              /* the condition OLD rejected the widening witness by is about this dim */
} sg_gate_dim;

struct sg_gate {
    sg_gate_verdict verdict;
    char *old_name, *new_name;
    bool signature_changed;
    char **changes;            /* what changed in the signature, one line each */
    size_t nchanges, capchanges;
    sg_gate_finding regression; /* OLD accepts, NEW rejects */
    sg_gate_finding widening;   /* NEW accepts, OLD rejects */
    bool has_policy;
    sg_gate_finding policy;     /* the policy admits, NEW rejects */
    sg_gate_dim *dims;
    size_t ndims;
    char reason[200];          /* UNKNOWN: why */
};

#endif
