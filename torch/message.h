/**
 * @file message.h
 * @brief torch's own "Constraints violated" text for a trace, byte for byte,
 *        in the wording of the torch version that produced the trace.
 *
 * shapegate's check (check.h) decides a trace soundly and words its findings
 * its own way. Users also need the text torch itself printed (or would print):
 * the part of the error message before "Suggested fixes:". This module
 * re-runs torch's reporting algorithm (ShapeEnv.produce_guards and the
 * "trivial" test of DimConstraints.add) on the trace; see docs/message.md.
 *
 *     Constraints violated (<names, sorted, ", "-joined>)! For more information, run with TORCH_LOGS="+dynamic".
 *       - <violation 1>
 *       - <violation N>
 *
 * followed, without a newline, by the "Specializations unexpectedly
 * required (...)! ..." paragraph when torch's solver forces a named Dim to a
 * value.
 *
 * Ownership: an sg_torch_text owns every string and array reachable from it;
 * free it with sg_torch_text_free().
 */
#ifndef SHAPEGATE_MESSAGE_H
#define SHAPEGATE_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "shapegate/error.h"
#include "expr/expr.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A named Dim that torch's solver forced to a value ("Specializations unexpectedly required"). */
typedef struct sg_torch_forced {
    char *name;    /**< the Dim name ("dx"; a derived dim's root name in the header) */
    char *source;  /**< the source ("L['x'].size()[0]") */
    sg_int value;
} sg_torch_forced;

/** What torch reports for a trace. */
typedef struct sg_torch_text {
    /** Parts (1) and (2) exactly as torch's exc.msg has them before "\nSuggested fixes:",
     *  or NULL when torch raises no constraint violation for the trace. */
    char *text;
    char **names;             /**< header debug names (Dim name, else source), sorted as torch sorts */
    size_t nnames;
    char **lines;             /**< violation texts without the "  - " prefix, in torch's order */
    size_t nlines;
    sg_torch_forced *forced;  /**< forced specializations, sorted by source as torch sorts them */
    size_t nforced;
    /** True when the trace comes from torch before 2.7 (2.6's wording: "Not all values of ...
     *  are valid because ... was inferred to be a constant"); false for newer or unknown. */
    bool legacy_wording;
} sg_torch_text;

/**
 * Build torch's constraint-violation text for trace `t` into a new
 * `*out` (free with sg_torch_text_free()). `(*out)->text` is NULL (and the
 * arrays empty) when torch raises no constraint violation: the export
 * passed, the spec was rejected before tracing with another error (those
 * messages are the check's, analysis/validate.c), or torch raised something else.
 * Returns 0, SG_ENOMEM, or SG_ELIMIT (an expression too long to print).
 * `*out` is NULL on failure.
 */
int sg_torch_text_build(sg_torch_text **out, const sg_trace *t, sg_error *err);

/** Free a result of sg_torch_text_build(). NULL-safe. */
void sg_torch_text_free(sg_torch_text *m);

/**
 * torch's whole error text for trace `t` with suggested-fix lines: the
 * "Constraints violated" part exactly as the trace's torch version prints it
 * (sg_torch_text_build), then, when `n` > 0, "\nSuggested fixes:" and each
 * line as "\n  LINE", as torch lays them out. `*out` is NULL when torch
 * raises no constraint violation for the trace. Free with sg_free().
 * Returns 0, SG_ENOMEM, SG_ELIMIT.
 */
int sg_torch_message(char **out, const sg_trace *t, const char *const *lines, size_t n, sg_error *err);

/**
 * torch's rendering of a named Dim's specified range in a violation:
 * "dx = L['x'].size()[0] in the specified range 3 <= dx <= 100"; a bound at or
 * below torch's default range [2, int_oo] is omitted ("dx <= 100", "16 <= dx",
 * or nothing: "... in the specified range"). `lo`/`hi` are the spec's bounds.
 * Returns 0 and a new string in `*out` (free with sg_free()), or SG_ENOMEM.
 */
int sg_torch_render_range(char **out, const char *name, const char *source, sg_bound lo, sg_bound hi,
                          sg_error *err);

#ifdef __cplusplus
}
#endif

#endif
