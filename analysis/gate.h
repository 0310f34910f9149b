/*
 * gate.h - building the release gate's result (report/gate.h) from two
 * exported programs or traces: analysis/gate*.c (gate_ctx.h lists the parts),
 * behind sg_engine_gate (engine.h).
 */
#ifndef SG_ANALYSIS_GATE_H
#define SG_ANALYSIS_GATE_H

#include <stdbool.h>

#include "report/gate.h"
#include "solver/ctxpool.h"

/* Build the gate of OLD against NEW (engine.h, sg_engine_gate_run): each an exported program or
 * a trace. Returns 0 and `*out`, SG_EINVALID (a side with neither or both, a bad policy),
 * SG_ELIMIT, SG_ENOMEM, SG_ERROR (Z3). */
int sg_gate_run(sg_gate **out, const sg_gate_input *in, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err);

#endif
