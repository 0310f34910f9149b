/*
 * gate_policy.h - the release gate's policy in the Python dynamic_shapes form
 * (analysis/gate_policy.c): translated into the JSON policy analysis/gate.c reads.
 */
#ifndef SG_ANALYSIS_GATE_POLICY_H
#define SG_ANALYSIS_GATE_POLICY_H

#include <stdbool.h>

#include "shapegate/error.h"

/* Is `text` a policy in the Python form (not the JSON one)? */
bool sg_gate__policy_is_python(const char *text);

/* The JSON policy of the Python-form `text` into `*out` (sg_free()). Returns 0, SG_EINVALID
 * ("policy: LINE:COL: what was expected"), SG_ELIMIT, SG_ENOMEM. */
int sg_gate__policy_from_python(char **out, const char *text, sg_error *err);

#endif
