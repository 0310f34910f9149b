/*
 * gate.h - building the release gate's result (report/gate.h) from two
 * exported programs: analysis/gate.c, behind sg_engine_gate (engine.h).
 */
#ifndef SG_ANALYSIS_GATE_H
#define SG_ANALYSIS_GATE_H

#include <stdbool.h>

#include "report/gate.h"
#include "solver/ctxpool.h"

/* Build the gate of OLD against NEW (engine.h, sg_engine_gate). */
int sg_gate_run(sg_gate **out, const sg_graph *old_prog, const sg_graph *new_prog, const char *old_name,
                const char *new_name, const char *policy, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err);

#endif
