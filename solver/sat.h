/*
 * sat.h - one exact satisfiability question over guard expressions, for
 * analyses that compare two programs (analysis/gate.c): is there an integer
 * point where every `pos` condition holds (defined and true) and no `neg`
 * condition holds (false, or undefined: Python would raise)? Z3 answers under
 * a resource limit; the caller never sees Z3.
 */
#ifndef SG_SOLVER_SAT_H
#define SG_SOLVER_SAT_H

#include <stdbool.h>
#include <stdint.h>

#include "expr/expr.h"
#include "expr/num.h"
#include "solver/ctxpool.h"

typedef enum sg_sat_answer {
    SG_SAT_NO = 0,     /* no such point */
    SG_SAT_YES,        /* a point, in the values */
    SG_SAT_UNKNOWN     /* the budget ran out or Z3 gave up (reason says which) */
} sg_sat_answer;

typedef struct sg_sat_query {
    sg_pool *pool;                 /* the expressions' pool (an overlay the call may build in) */
    const sg_expr *const *pos;     /* must hold */
    size_t npos;
    const sg_expr *const *neg;     /* must not hold */
    size_t nneg;
    const sg_expr *const *wish;    /* wished to hold as well: tried first, dropped when no point meets them */
    size_t nwish;
    uint64_t rlimit;               /* Z3 resource limit per try (0: none) */
    sg_ctxpool *contexts;          /* where the Z3 context comes from, or NULL */
} sg_sat_query;

/*
 * Answer `q` into `*answer`; on SG_SAT_YES `vals[i]` (one per symbol of the
 * pool, by symbol index) is the point. `reason` (`cap` bytes, may be NULL)
 * says why on SG_SAT_UNKNOWN. Returns 0, SG_EUNSUPPORTED (a condition with no
 * finite encoding), SG_ENOMEM or SG_ERROR (Z3).
 */
int sg_sat_find(sg_sat_answer *answer, sg_int *vals, const sg_sat_query *q, char *reason, size_t cap,
                sg_error *err);

#endif
