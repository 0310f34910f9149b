/**
 * @file report.h
 * @brief What the engine answers: a report, read through accessors and
 *        written as JSON or text by the library's one writer of each.
 *
 * A report (engine.h: sg_engine_check, sg_engine_spec, sg_engine_verify) is
 * immutable once returned; it holds a reference to the trace it was made from
 * (sg_report_trace), so the caller may free the trace first. Its parts:
 *   - the verdict, and per input dim (sg_trace_input_count order) a status
 *     with the reason of an unknown;
 *   - violations: kind, message, counterexample shape, the minimal
 *     conflicting set (guards, ranges, spec items with source lines);
 *   - inferred facts per symbol: widest valid range, congruence, holes;
 *   - fixes: suggested lines re-checked (a CHECK report after a refutation),
 *     or the generated spec (a SPEC report), with notes and the fixed spec;
 *   - torch's own error text and torch's own suggested fixes re-checked.
 * Accessors take indices; an index out of range gives NULL, 0 or false.
 * Strings are borrowed from the report.
 *
 * Threading: a report is only read; any number of threads may read one.
 */
#ifndef SHAPEGATE_REPORT_H
#define SHAPEGATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/common.h"
#include "shapegate/error.h"
#include "shapegate/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_report sg_report;

typedef enum sg_verdict {
    SG_VERDICT_OK,           /**< every dynamic dim proved */
    SG_VERDICT_VIOLATIONS,   /**< some dim refuted */
    SG_VERDICT_UNKNOWN,      /**< none refuted, some unknown */
    SG_VERDICT_INVALID_SPEC, /**< the spec itself is invalid (torch rejects it before tracing) */
    SG_VERDICT_TORCH_FAILED  /**< torch stopped on a data-dependent guard: the export did not complete, nothing is
                                  proved (refutations from the guards recorded before it still hold) */
} sg_verdict;

typedef enum sg_dim_status {
    SG_DIM_PROVED,
    SG_DIM_REFUTED,
    SG_DIM_UNKNOWN,
    SG_DIM_STATIC    /**< not dynamic in the spec: nothing to decide */
} sg_dim_status;

typedef enum sg_violation_kind {
    SG_VIOL_SPEC,        /**< the spec is invalid (validation message) */
    SG_VIOL_SPECIALIZED, /**< the guards force the dim to a constant */
    SG_VIOL_EQUAL,       /**< the guards force it equal to another dim the spec keeps independent */
    SG_VIOL_RELATED,     /**< the guards force an affine relation the spec does not state */
    SG_VIOL_GUARD,       /**< some value the spec allows fails a guard */
    SG_VIOL_RANGE,       /**< a Dim.AUTO/DYNAMIC's min/max admit no size the guards allow (torch's range conflict) */
    SG_VIOL_TORCH        /**< every size passes the guards, but torch raised on this Dim all the same (a guard
                              its value ranges cannot decide, `(n // 2) <= n`): the export fails; no counterexample */
} sg_violation_kind;

/** A member of a minimal conflicting set. */
typedef enum sg_core_kind {
    SG_CORE_GUARD,       /**< trace guard `index` (sg_trace_guards) */
    SG_CORE_RANGE,       /**< the traced range of symbol `index` (sg_trace_symbols) */
    SG_CORE_REPLACEMENT, /**< the replacement of symbol `index` */
    SG_CORE_INPUT,       /**< the traced shape of input dim `index` (sg_trace_inputs) */
    SG_CORE_SPEC         /**< the spec of input dim `index` */
} sg_core_kind;

/** What a report answers. */
typedef enum sg_report_kind {
    SG_REPORT_CHECK,  /**< sg_engine_check: the verdicts, fixes after a refutation */
    SG_REPORT_SPEC,   /**< sg_engine_spec: a generated spec (the fixes part) */
    SG_REPORT_VERIFY  /**< sg_engine_verify: the verdicts on an exported program's declared ranges */
} sg_report_kind;

/** Free the caller's report. NULL-safe. */
SG_API void sg_report_free(sg_report *r);

/** What the report answers. */
SG_API sg_report_kind sg_report_kind_of(const sg_report *r);
/** The verdict (a SPEC report: the verdict of its generated spec's re-check). */
SG_API sg_verdict sg_report_verdict(const sg_report *r);
/** The trace the report was made from (borrowed; the report holds a reference). */
SG_API const sg_trace *sg_report_trace(const sg_report *r);
/** True when the trace carried no per-dim spec (torch failed before building it). */
SG_API bool sg_report_no_spec(const sg_report *r);

/* ---- per input dim ----------------------------------------------------------------- */

/** Number of dims with a status (the trace's input dims; 0 for a SPEC report). */
SG_API size_t sg_report_dim_count(const sg_report *r);
/** The status of input dim `i`. */
SG_API sg_dim_status sg_report_dim_status(const sg_report *r, size_t i);
/** Why input dim `i` is unknown (Z3's reason, "time budget", "canceled", ...), else "". */
SG_API const char *sg_report_dim_reason(const sg_report *r, size_t i);

/* ---- violations ----------------------------------------------------------------------- */

SG_API size_t sg_report_violation_count(const sg_report *r);
SG_API sg_violation_kind sg_report_violation_kind(const sg_report *r, size_t v);
/** The name torch uses in its header: the Dim name, else the source. */
SG_API const char *sg_report_violation_dim(const sg_report *r, size_t v);
/** One line. */
SG_API const char *sg_report_violation_message(const sg_report *r, size_t v);
/** The input dim the violation is charged to. */
SG_API size_t sg_report_violation_input(const sg_report *r, size_t v);
/** The counterexample's size of input dim `input` (a GUARD violation); false when none. */
SG_API bool sg_report_violation_counterexample(const sg_report *r, size_t v, size_t input, sg_num *size);
/** The minimal conflicting set: its size, and member `k`'s kind, index (into the trace's
 *  guards, symbols or input dims), text and user location (NULL when none). */
SG_API size_t sg_report_core_count(const sg_report *r, size_t v);
SG_API sg_core_kind sg_report_core_kind(const sg_report *r, size_t v, size_t k);
SG_API size_t sg_report_core_index(const sg_report *r, size_t v, size_t k);
SG_API const char *sg_report_core_text(const sg_report *r, size_t v, size_t k);
SG_API const char *sg_report_core_loc(const sg_report *r, size_t v, size_t k);

/* ---- inferred facts --------------------------------------------------------------------- */

SG_API size_t sg_report_inferred_count(const sg_report *r);
/** The symbol fact `i` is about. */
SG_API const char *sg_report_inferred_symbol(const sg_report *r, size_t i);
/** Its widest valid range; `exact` says both bounds were proved optimal (may be NULL). */
SG_API bool sg_report_inferred_range(const sg_report *r, size_t i, sg_num *lo, sg_num *hi, bool *exact);
/** Its congruence sym = residue (mod modulus); false when none (modulus 1). */
SG_API bool sg_report_inferred_congruence(const sg_report *r, size_t i, sg_num *modulus, sg_num *residue);
/** Values inside the range that are not valid: how many, and hole `k`. */
SG_API size_t sg_report_inferred_hole_count(const sg_report *r, size_t i);
SG_API bool sg_report_inferred_hole(const sg_report *r, size_t i, size_t k, sg_num *value);

/* ---- fixes or the generated spec ---------------------------------------------------------- */

/** True when the report has a fixes part (fixes after a refutation, or a generated spec). */
SG_API bool sg_report_has_fixes(const sg_report *r);
/** The fixed spec was re-checked and every dynamic dim proved. */
SG_API bool sg_report_fixes_verified(const sg_report *r);
/** The verdict of that re-check. */
SG_API sg_verdict sg_report_fixes_recheck(const sg_report *r);
/** The lines, in torch's text and order ("dx = Dim('dx', min=16, max=100)"). */
SG_API size_t sg_report_fix_count(const sg_report *r);
SG_API const char *sg_report_fix_line(const sg_report *r, size_t i);
/** Notes: holes avoided, choices made, why no fix was found. */
SG_API size_t sg_report_note_count(const sg_report *r);
SG_API const char *sg_report_note(const sg_report *r, size_t i);
/** The fixed spec in the corpus's structured JSON (tests/corpus/README.md), or NULL. */
SG_API const char *sg_report_fixed_spec_json(const sg_report *r);
/** torch's whole error text with the verified fixes, or NULL (not asked for, or torch raises none). */
SG_API const char *sg_report_torch_message(const sg_report *r);

/* ---- cost ------------------------------------------------------------------------------- */

/** Z3 queries, guards decided without Z3, and seconds of the check (any may be NULL). */
SG_API void sg_report_stats(const sg_report *r, unsigned *queries, unsigned *decided_cheaply, double *seconds);

/* ---- writers ---------------------------------------------------------------------------- */

/** Leave the timings ("seconds") out of the JSON, so that equal reports write equal bytes. */
#define SG_JSON_NO_TIMES 1u

/**
 * The report as one JSON object into a new string `*out` (free with
 * sg_free()); the one writer of every report (docs/check.md, docs/fixes.md):
 * a CHECK report is the check object, with "fixes" when fixes were derived;
 * a SPEC report is the fixes object of the generated spec; a VERIFY report
 * is {"archive", "against", "verdict", "runtime_asserts", "report"}. Pure:
 * it only reads the report. `flags`: SG_JSON_NO_TIMES. Returns 0 or SG_ENOMEM.
 */
SG_API int sg_report_to_json(char **out, const sg_report *r, unsigned flags, sg_error *err);

/** sg_report_to_text() flags: a check's fixed spec as paste-ready Python; how the fixes were
 *  found, and torch's own lines re-checked; torch's own error text instead of the diagnosis. */
#define SG_TEXT_PYTHON 1u
#define SG_TEXT_EXPLAIN 2u
#define SG_TEXT_TORCH 4u

/**
 * The report as text into a new string `*out` (free with sg_free()): what the
 * CLI prints without --json (docs/cli.md). A CHECK report is the diagnosis
 * (verdict per dim, violations with counterexamples and conflicting
 * constraints, inferred facts, then the fixes); with SG_TEXT_TORCH torch's own
 * error text instead. A SPEC report is the generated spec as Python; a VERIFY
 * report the program's verdicts. Pure, as sg_report_to_json(). Returns 0,
 * SG_ENOMEM, SG_ELIMIT.
 */
SG_API int sg_report_to_text(char **out, const sg_report *r, unsigned flags, sg_error *err);

/** "ok", "violations", "unknown", "invalid_spec". */
SG_API const char *sg_verdict_name(sg_verdict v);

/** "proved", "refuted", "unknown", "static". */
SG_API const char *sg_dim_status_name(sg_dim_status s);
/** "invalid_spec", "specialized", "equal", "related", "guard", "range_conflict", "torch". */
SG_API const char *sg_violation_kind_name(sg_violation_kind k);
/** "guard", "range", "replacement", "input", "spec". */
SG_API const char *sg_core_kind_name(sg_core_kind k);

#ifdef __cplusplus
}
#endif

#endif
