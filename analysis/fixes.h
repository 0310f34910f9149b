/**
 * @file fixes.h
 * @brief Suggested fixes and generated specs: a corrected dynamic_shapes spec
 *        derived from what the guards imply, re-checked before it is offered,
 *        printed in torch's own text forms.
 *
 * A fix is derived from the facts a check inferred (docs/infer.md): a dim the
 * guards pin becomes that size (`dx = 4`), a dim the guards tie to another
 * becomes derived from it (`dy = dx`, `dz = 2*dx + 1`), a divisibility becomes a
 * new root (`_dx = Dim('_dx', min=2, max=12)`, `dx = 8*_dx`), and a range the
 * guards narrow becomes the widest valid range (`dx = Dim('dx', min=16,
 * max=100)`). The fixes are then applied to the trace and checked again; only
 * a spec that checks clean is offered (docs/fixes.md). Generated specs
 * (sg_spec_generate) do the same for every dynamic dim, Dim.AUTO and
 * Dim.DYNAMIC included, which makes explicit what AUTO discovered.
 *
 * Ownership: a sg_fixes owns all its strings; free with sg_fixes_free().
 */
#ifndef SHAPEGATE_FIXES_H
#define SHAPEGATE_FIXES_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/check.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What one suggested line does. */
typedef enum sg_fix_kind {
    SG_FIX_RANGE,    /**< `dx = Dim('dx', min=.., max=..)`: a (new) root and its range */
    SG_FIX_CONSTANT, /**< `dx = 4`: the dim is static */
    SG_FIX_DERIVED   /**< `dy = dx`, `dy = 2*dx + 1`, `dx = 8*_dx`: derived from a root */
} sg_fix_kind;

/** One line of the "Suggested fixes:" block. */
typedef struct sg_fix {
    sg_fix_kind kind;
    char *name;         /**< the Dim name the line assigns: "dx", or a new root "_dx" */
    char *source;       /**< source name of the dim it concerns (torch orders lines by it) */
    bool new_root;      /**< RANGE: a root the user's spec did not have */
    sg_bound min, max;  /**< RANGE */
    sg_int value;       /**< CONSTANT */
    char *root;         /**< DERIVED: name = a*root + b */
    sg_int a, b;
    char *line;         /**< the line as printed: "dx = Dim('dx', min=16, max=100)" */
} sg_fix;

/** The outcome of deriving and verifying fixes (or a generated spec). */
typedef struct sg_fixes {
    sg_fix *fixes;        /**< in torch's order: Dim lines first, each group by source name */
    size_t nfixes;
    bool verified;        /**< the fixed spec was re-checked and every dynamic dim proved */
    sg_verdict recheck;   /**< the verdict of that re-check (SG_VERDICT_OK when verified) */
    unsigned rounds;      /**< derive-and-check rounds it took (1 when the first derivation held) */
    char *spec_json;      /**< the fixed spec, structured JSON (tests/corpus/README.md), or NULL */
    char **notes;         /**< one line each: holes avoided, choices made, why no fix was found */
    size_t nnotes;
} sg_fixes;

/**
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

/**
 * The widest valid spec for every dynamic dim of `t` (named Dims, Dim.AUTO and
 * Dim.DYNAMIC; static dims stay as they are): ranges, relations and
 * divisibility made explicit as Dims, verified like sg_fixes_suggest(). Dims
 * without a Dim name get one made from their path (`x_0`, `inputs_a_1`).
 * `lines` in `*out` are the Dim definitions; `spec_json` the spec.
 * Same returns as sg_fixes_suggest().
 */
int sg_spec_generate(sg_fixes **out, const sg_trace *t, const sg_check_options *opts, sg_error *err);

/**
 * Paste-ready Python for the structured spec `spec_json`: the Dim definitions
 * (`dx = Dim('dx', min=16, max=100)`, derived ones inline) then
 * `dynamic_shapes = {...}` following the inputs of `t` (dicts, lists, tuples,
 * kwargs). New string in `*out`; free with sg_free(). Returns 0, SG_EINVALID
 * for a spec that is not of the structured form, SG_ENOMEM.
 */
int sg_spec_to_python(char **out, const sg_trace *t, const char *spec_json, sg_error *err);

/**
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

/** Free fixes. NULL-safe. */
void sg_fixes_free(sg_fixes *f);

#ifdef __cplusplus
}
#endif

#endif
