/*
 * check.h - deciding a trace against the user's dynamic_shapes spec: a sound,
 * three-valued verdict per dynamic dim, with counterexamples, minimal
 * conflicting sets, and what the guards imply (ranges, relations,
 * congruences, holes). Analysis-internal; the engine (sg_engine_check) is
 * the public way in.
 *
 * The spec is valid when every shape it allows passes every guard (a guard
 * passes when it is defined and true, see docs/guard-language.md). The check
 * mirrors torch's attribution so that the dims it names are the dims torch
 * names: relations the guards force but the spec does not state are charged to
 * the later dim of the pair, values the guards reject to the dims whose values
 * matter (found through minimal unsat cores). See docs/check.md.
 *
 * Ownership: a report owns everything reachable from it, and holds a
 * reference to its trace (expressions in it live in an overlay of the trace's
 * pool that the report keeps), so the trace may be freed first.
 *
 * Threading: sg_check() never modifies the trace; any number of threads may
 * check one trace at once.
 */
#ifndef SG_ANALYSIS_CHECK_H
#define SG_ANALYSIS_CHECK_H

#include "report/report.h"
#include "shapegate/engine.h"

/*
 * Check trace `t` against its spec. Returns 0 with a report in `*out` (free with
 * sg_report_free()) whatever the verdict; an error code only when the check
 * could not run (SG_ENOMEM, SG_ERROR from Z3, SG_EINVALID for a trace that is
 * not self-consistent). A guard with no finite Z3 encoding (an exponent over
 * 4096) is not an error: every dim is unknown, its reason "guard N: ...".
 */
int sg_check(sg_report **out, const sg_trace *t, const sg_check_options *opts, sg_error *err);

#endif
