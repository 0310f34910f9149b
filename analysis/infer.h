/*
 * infer.h - what the guards imply about every symbol of a trace, whatever the
 * user's spec says: the widest valid range (exact, or a sound
 * over-approximation), forced constants, congruences s = r (mod m), holes
 * (values inside the range that no valid shape takes) and affine relations
 * between input-dim symbols (s_j = a*s_i + b, and over three or more symbols).
 * Solver-internal (check.c). Method and guarantees: docs/infer.md.
 */
#ifndef SG_ANALYSIS_INFER_H
#define SG_ANALYSIS_INFER_H

#include "solver/problem.h"

/*
 * Infer, for every symbol of `p` (p->syms order), what the constraint set
 * "definitions + every constraint of p->cons" implies; spec items are not
 * used. A value v of symbol s is *valid* when some assignment of all
 * variables with s = v satisfies the whole set.
 *
 * Every question goes through solver/query.h (sg_q_check) under `b`, counted into
 * `stats` (may be NULL). Nothing reported is a guess: a relation, congruence
 * or hole is reported only once proved by an unsat query; a bound is flagged
 * range_exact only when it is attained and its complement proved empty (or,
 * for an infinite bound, a ray of valid points is proved); on `unknown` or an
 * exhausted budget the sound over-approximation found so far is reported.
 *
 * On success returns 0 with a new array of p->nsyms entries in `*out` / `*n`
 * (free with sg_inferred_free_array()); expressions in it (`equals`) live in
 * p->pool. Errors: SG_ENOMEM, SG_ERROR (Z3 failed, not "unknown"); then
 * *out is NULL and *n is 0.
 */
int sg_infer(sg_problem *p, const sg_budget *b, sg_check_stats *stats, sg_inferred **out, size_t *n,
             sg_error *err);

/* Free an array made by sg_infer() and the hole lists it owns. NULL-safe. */
void sg_inferred_free_array(sg_inferred *a, size_t n);

#endif
