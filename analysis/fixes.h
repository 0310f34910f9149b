/*
 * fixes.h - suggested fixes and generated specs: a corrected dynamic_shapes
 * spec derived from what the guards imply, applied to a structured copy of
 * the trace (typed spec edits, trace/edit.h) and re-checked before it is
 * offered, printed in torch's own text forms. Analysis-internal; the engine
 * attaches the result to its reports (sg_engine_check, sg_engine_spec).
 *
 * A fix is derived from the facts a check inferred (docs/infer.md): a dim the
 * guards pin becomes that size (`dx = 4`), a dim the guards tie to another
 * becomes derived from it (`dy = dx`, `dz = 2*dx + 1`), a divisibility becomes a
 * new root (`_dx = Dim('_dx', min=2, max=12)`, `dx = 8*_dx`), and a range the
 * guards narrow becomes the widest valid range (`dx = Dim('dx', min=16,
 * max=100)`). Only a spec that checks clean is offered (docs/fixes.md).
 * Generated specs (sg_spec_generate) do the same for every dynamic dim,
 * Dim.AUTO and Dim.DYNAMIC included, which makes explicit what AUTO discovered.
 */
#ifndef SG_ANALYSIS_FIXES_H
#define SG_ANALYSIS_FIXES_H

#include "analysis/check.h"

/*
 * Derive fixes for the named dims of trace `t` from its check report `r` (made
 * by sg_check() on `t`; when `r` has no inferred facts they are computed), apply
 * them to a copy of the trace and check it again with `opts` (NULL: defaults),
 * repeating from the new report at most a few rounds. `*out` gets the result
 * whatever it is: `verified` says whether the lines may be offered; `notes`
 * says why not. A report without violations gets an empty, verified set.
 * Returns 0, or SG_ENOMEM / SG_ERROR (Z3) / SG_EINVALID when the work could not
 * be done; `*out` is then NULL.
 */
int sg_fixes_suggest(sg_fixes **out, const sg_trace *t, const sg_report *r, const sg_check_options *opts,
                     sg_error *err);

/*
 * The widest valid spec for every dynamic dim of `t` (named Dims, Dim.AUTO and
 * Dim.DYNAMIC; static dims stay as they are): ranges, relations and
 * divisibility made explicit as Dims, verified like sg_fixes_suggest(). Dims
 * without a Dim name get one made from their path (`x_0`, `inputs_a_1`).
 * `lines` in `*out` are the Dim definitions; `spec_json` the spec.
 * Same returns as sg_fixes_suggest().
 */
int sg_spec_generate(sg_fixes **out, const sg_trace *t, const sg_check_options *opts, sg_error *err);

/*
 * Apply suggested-fix lines in torch's text form (`lines`, `n` of them: e.g.
 * torch's own, sg_trace_torch_fixes_json()) to a copy of `t` the way torch's
 * refine_dynamic_shapes_from_suggested_fixes reads them — `Dim(...)` with
 * min/max taken from `min=N` / `max=N` (a missing min is 0, a missing or
 * non-numeric max int_oo), `NAME = N`, `NAME = A*ROOT + B`, derived dims over a
 * fixed root re-derived — and check the result. `*verdict` gets its verdict;
 * `*why` (new string, free with sg_free(); NULL when ok) the first violation
 * with its counterexample, or why a line could not be applied. Returns 0 or
 * SG_ENOMEM / SG_ERROR.
 */
int sg_fixes_check_lines(sg_verdict *verdict, char **why, const sg_trace *t, const char *const *lines, size_t n,
                         const sg_check_options *opts, sg_error *err);

#endif
