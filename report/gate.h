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
    char *loc;             /* the user code line it came from ("CODE  # model.py:72 in forward"), or NULL */
} sg_gate_finding;

/* One dim of a serving descriptor: NEW's least and greatest size (dynamic ones from 2). */
typedef struct sg_gate_serving_dim {
    bool dynamic;
    sg_int min, opt, max;  /* max: `serving_cap` (or min when larger) when NEW leaves it unbounded */
    bool unbounded;
    bool has_example;      /* the example size NEW records (a trace's example input, an archive's tensor meta hint) */
    sg_int example;
} sg_gate_serving_dim;

typedef struct sg_gate_serving_input {
    char *path;            /* pytree path */
    char *name;            /* the name the served model expects: the placeholder's ("x", "inputs_b_0") */
    char dtype[24];        /* torch's dtype name, "" when unknown */
    size_t ndim;
    sg_gate_serving_dim *dims;
} sg_gate_serving_input;

/* The serving descriptors of NEW (docs/gate.md, "Serving descriptors"). */
typedef struct sg_gate_serving {
    bool ok;               /* computed; else `reason` */
    char reason[200];
    sg_gate_serving_input *inputs;
    size_t ninputs;
    bool accepted[3];      /* the min / opt / max shape sets are accepted by NEW */
    char rejected[3][240]; /* else the condition that rejects each */
    bool opt_is_example;   /* opt: NEW's example sizes (clamped into [min, max]), else the max */
    char opt_source[160];  /* which opt is: "the trace's example inputs", "the max (...)", ... */
    char *dynamic_shapes;  /* Python text, or NULL */
    bool spec_verified;    /* Z3: every shape the spec admits is one NEW accepts */
    char spec_note[240];
} sg_gate_serving;

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
    const char *old_kind, *new_kind; /* "archive" or "trace" (static strings) */
    char old_note[240], new_note[240]; /* what to know about a version ("torch raised ..."), or "" */
    bool has_serving;
    sg_gate_serving serving;
};

#endif
