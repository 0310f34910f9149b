/*
 * spec.h - validating a dynamic_shapes spec the way torch does before and
 * while it creates symbols, with torch's messages. Solver-internal.
 */
#ifndef SG_SOLVER_SPEC_H
#define SG_SOLVER_SPEC_H

#include "shapegate/check.h"

/*
 * Append to `r` a violation for every way the spec of `t` is invalid
 * (SG_VIOL_SPEC: verdict invalid_spec), or specialises a named dim because
 * its example size is 0 or 1 (SG_VIOL_SPECIALIZED). Returns 0 or SG_ENOMEM.
 */
int sg_spec_validate(const sg_trace *t, sg_report *r, sg_error *err);

#endif
