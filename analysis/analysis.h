/*
 * analysis.h - the analyses as the engine runs them: with the engine's warm
 * Z3 contexts and counters (sg_runtime, solver/ctxpool.h). The public
 * entry points are sg_engine_check / spec / verify (engine.h); these are
 * what they call, and what white-box tests call with a NULL runtime.
 */
#ifndef SG_ANALYSIS_H
#define SG_ANALYSIS_H

#include "analysis/check.h"
#include "analysis/fixes.h"
#include "solver/ctxpool.h"

/*
 * The options a call runs with: `in` (NULL: the defaults) read as the
 * version it says (a version-1 struct has no switches past minimize_cores:
 * those get their defaults) into `*out`. SG_EINVALID for a version this
 * library does not know.
 */
int sg_check__options(sg_check_options *out, const sg_check_options *in, sg_error *err);

/* sg_check() with the engine's runtime (`rt` NULL: private contexts, nothing counted). */
int sg_check_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err);

/* sg_check_rt() for a caller that reads only the verdict, the dims' statuses, the violations'
 * kinds and counterexamples, and inferred facts (fixes' re-checks of a derived spec): the same
 * refuted dims and counterexamples, but explanation cores as Z3 gives them (not minimised:
 * minimisation is most of a large refuted component's queries, issue 14). */
int sg_check__lean_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts, const sg_runtime *rt,
                      sg_error *err);

/* sg_check_rt() for a caller that reads only the verdict and the first violation (torch's own
 * lines re-checked): the check stops once a violation is recorded, that violation made in full
 * (the same text, core and counterexample as sg_check_rt's first); dims it did not reach are
 * unknown ("not decided"), and no inference runs after a stop. */
int sg_check__first_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts, const sg_runtime *rt,
                       sg_error *err);

/* sg_fixes_suggest(), sg_spec_generate(), sg_fixes_check_lines() with the engine's runtime. */
int sg_fixes_suggest_rt(sg_fixes **out, const sg_trace *t, const sg_report *r, const sg_check_options *opts,
                        const sg_runtime *rt, sg_error *err);
int sg_spec_generate_rt(sg_fixes **out, const sg_trace *t, const sg_check_options *opts, const sg_runtime *rt,
                        sg_error *err);
int sg_fixes_check_lines_rt(sg_verdict *verdict, char **why, const sg_trace *t, const char *const *lines,
                            size_t n, const sg_check_options *opts, const sg_runtime *rt, const sg_trace *ok,
                            sg_error *err);

/* The fixes of a job whose budget was spent before they could start: none, not verified, and the
 * note "time budget spent before the first check" (`*out` new; SG_ENOMEM). */
int sg_fixes__budget_spent(sg_fixes **out, sg_error *err);

/* torch's own suggested fixes of `t` (sg_trace_torch_fixes_json) applied as torch's refine step
 * reads them and re-checked into `*out` (NULL when the trace has none). `ok`, when not NULL, is a
 * copy of `t` a check found OK (the verified fixes' sg_fixes.checked): lines that make a trace of
 * the same content (sg_trace__same_content) are OK without a check (sg_fixes_check_lines_rt too).
 * Returns 0, SG_ENOMEM, SG_ERROR (Z3), SG_EINVALID (bad options). */
int sg_torch_recheck_rt(sg_torch_recheck **out, const sg_trace *t, const sg_check_options *opts,
                        const sg_runtime *rt, const sg_trace *ok, sg_error *err);

/* Does `e` multiply two factors that mention symbols, or divide by (or raise to) one? What Z3's
 * non-linear arithmetic has to decide (a walk of at most 4,096 nodes; past that: true). */
bool sg_check__expr_nonlinear(const sg_expr *e);

/* The open named dims from which a component with a non-linear guard counts as large: phase 2
 * tries one-dim counterexamples before Z3 there (analysis/check_probe.c), and inference does not
 * ask Z3 about a trace that has one (analysis/infer.c). Per thread; 0 restores the default (32).
 * Tests set it low to run those paths on small traces. */
void sg_check__set_probe_min_dims(size_t n);
size_t sg_check__probe_min_dims(void);

/* The literals from which phase 2's explanation answers its satisfiable minimisation questions
 * without Z3 when the presolve reads them exactly (analysis/check_values.c). Per thread; 0
 * restores the default (256). Tests set it to 1 to run that path on small traces. */
void sg_check__set_exact_min_lits(size_t n);

#endif
