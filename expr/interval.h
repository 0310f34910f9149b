/*
 * interval.h - the cheap reasoning pass that runs before Z3: sound interval
 * (and simple congruence) evaluation of guard expressions over a box of symbol
 * values. A guard that provably holds on the whole box never reaches Z3.
 * Solver-internal (check.c, infer.c). See docs/interval.md.
 */
#ifndef SG_ANALYSIS_INTERVAL_H
#define SG_ANALYSIS_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>

#include "expr/expr.h"

/*
 * A closed range of integers [lo, hi]; lo_inf means lo = -infinity (lo is then
 * ignored), hi_inf means hi = +infinity. For a real-sorted expression it is an
 * integer enclosure (lo <= every value <= hi); for a boolean one a subset of
 * [0, 1] (False = 0, True = 1).
 */
typedef struct sg_interval {
    sg_int lo, hi;
    bool lo_inf, hi_inf;
} sg_interval;

/* A three-valued verdict. */
typedef enum sg_tri { SG_TRI_FALSE, SG_TRI_TRUE, SG_TRI_UNKNOWN } sg_tri;

/*
 * Enclose the values of `e` over the box: every symbol with sg_expr_symbol_index
 * i ranges over box[i] (nbox entries; a symbol with an index >= nbox, or every
 * symbol when box is NULL, is unbounded). On success, 0 and *out contains the
 * value of `e` at every point of the box where `e` is defined (Python would not
 * raise). Returns SG_EUNDEFINED when `e` is defined at no point of the box,
 * SG_EINVALID for a box entry with lo > hi (an empty box), SG_EUNSUPPORTED for an
 * infinity inside an expression (sg_expr_eval rejects those too) or an infinite
 * expression, SG_ENOMEM. Does not modify the pool. Cost: linear in the number
 * of distinct nodes of `e`.
 */
int sg_interval_of(sg_interval *out, sg_pool *pool, const sg_expr *e, const sg_interval *box,
                   size_t nbox, sg_error *err);

/*
 * Decide a boolean guard on the box: SG_TRI_TRUE when it holds (is defined and
 * true) at every point of the box, SG_TRI_FALSE when it holds at no point
 * (false or undefined everywhere), SG_TRI_UNKNOWN otherwise or when the cheap
 * reasoning cannot tell. Sound: never TRUE (FALSE) unless the guard really
 * holds (fails) everywhere, with unbounded integer semantics. An empty box, a
 * non-boolean `guard`, NULL or an allocation failure give SG_TRI_UNKNOWN.
 */
sg_tri sg_interval_holds(sg_pool *pool, const sg_expr *guard, const sg_interval *box, size_t nbox);

/* *r narrowed to its intersection with *x; false when that is empty. */
bool sg_interval_meet(sg_interval *r, const sg_interval *x);

#endif
