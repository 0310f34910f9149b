/*
 * witness.h - does a counterexample shape really fail the trace? Evaluated
 * exactly (sg_expr_eval), never with Z3: every symbol gets the size of the
 * input dim it is the size of (replaced symbols their replacement's value),
 * then the traced shapes, ranges and guards are evaluated at those values.
 * Shared by test_check and test_engine.
 */
#ifndef SG_TESTS_WITNESS_H
#define SG_TESTS_WITNESS_H

#include <stdbool.h>

#include "trace/trace.h"

/* Does the shape `cex` (a size per input dim, sg_trace_inputs order) fail some constraint of
 * `t` (a guard, a traced range or shape) on the backed symbols? */
bool witness_fails(const sg_trace *t, const sg_int *cex);

#endif
