/*
 * point.h - finding one integer point that meets as many wishes as it can:
 * the example sizes of a trace built from an exported program (graph/verify.c)
 * when the declared lower bounds fail a runtime assert. Z3 answers; the caller
 * never sees Z3.
 */
#ifndef SG_SOLVER_POINT_H
#define SG_SOLVER_POINT_H

#include <stdbool.h>
#include <stdint.h>

#include "expr/num.h"
#include "expr/expr.h"
#include "solver/ctxpool.h"

/* An optional closed interval (a side is open when its flag is false). */
typedef struct sg_point_bound {
    bool has_lo, has_hi;
    sg_int lo, hi;
} sg_point_bound;

/* What to look for: values for the symbols of `pool` whose `active` flag is set. */
typedef struct sg_point_query {
    sg_pool *pool;                      /* the expressions' pool (an overlay the call may build in) */
    const bool *active;                 /* [nsymbols] symbols to find values for */
    const sg_point_bound *hard;         /* [nsymbols] bounds every answer meets, or NULL */
    const sg_point_bound *ranges;       /* [nsymbols] wished ranges (layer 1), or NULL */
    const sg_expr *const *guards;       /* wished true (layer 1), over active symbols only */
    size_t nguards;
    sg_int floor;                       /* wished lower bound of every active symbol (layer 2) */
    uint64_t rlimit;                    /* Z3 resource limit per try */
    sg_ctxpool *contexts;               /* where the Z3 context comes from, or NULL */
} sg_point_query;

/*
 * Look for a point inside `hard` meeting both wish layers; failing that, the
 * first layer alone, then the second alone, then neither. The first point
 * found overwrites `vals[i]` for every active symbol i (the others, and every
 * value when nothing is found, stay as the caller set them). Returns 0 (found
 * or not), SG_ENOMEM, or SG_ERROR when Z3 cannot start.
 */
int sg_point_find(sg_int *vals, const sg_point_query *q, sg_error *err);

#endif
