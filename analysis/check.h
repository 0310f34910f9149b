/**
 * @file check.h
 * @brief Deciding a trace against the user's dynamic_shapes spec: a sound,
 *        three-valued verdict per dynamic dim, with counterexamples, minimal
 *        conflicting sets, and what the guards imply (ranges, relations,
 *        congruences, holes).
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
#ifndef SHAPEGATE_CHECK_H
#define SHAPEGATE_CHECK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/cancel.h"
#include "trace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The options of one call (sg_engine_check, sg_engine_spec, sg_engine_verify,
 * and the analyses below them): budgets and switches. Fill with
 * SG_CHECK_OPTIONS_INIT (or sg_check_options_init), then change fields; a
 * call refuses a version it does not know (SG_EINVALID).
 */
typedef struct sg_check_options {
    unsigned version;          /**< SG_CHECK_OPTIONS_VERSION */
    unsigned timeout_ms;       /**< wall-clock limit for the whole call; 0: none */
    unsigned query_timeout_ms; /**< Z3 time limit per query; 0: none */
    uint64_t query_rlimit;     /**< Z3 resource limit per query (deterministic); 0: none */
    bool infer;                /**< compute inferred ranges, relations, congruences, holes */
    bool minimize_cores;       /**< shrink unsat cores until no member can be dropped */
    bool fixes;                /**< check: derive and verify fixes after a refutation */
    bool torch_fixes;          /**< re-check torch's own suggested fixes when the trace has them */
    bool torch_message;        /**< build torch's own error text (with the verified fixes) */
    sg_cancel *cancel;         /**< a token that stops the call from another thread (engine.h), or NULL */
} sg_check_options;

#define SG_CHECK_OPTIONS_VERSION 2
#define SG_CHECK_OPTIONS_INIT {SG_CHECK_OPTIONS_VERSION, 60000, 10000, 50000000, true, true, true, true, true, NULL}

/** Fill `o` with the defaults of options version `version`. Returns 0, or SG_EINVALID for a
 *  version this library does not know. */
int sg_check_options_init(sg_check_options *o, unsigned version);

typedef enum sg_verdict {
    SG_VERDICT_OK,           /**< every dynamic dim proved */
    SG_VERDICT_VIOLATIONS,   /**< some dim refuted */
    SG_VERDICT_UNKNOWN,      /**< none refuted, some unknown */
    SG_VERDICT_INVALID_SPEC  /**< the spec itself is invalid (torch rejects it before tracing) */
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
    SG_VIOL_GUARD        /**< some value the spec allows fails a guard */
} sg_violation_kind;

/** A member of a minimal conflicting set. */
typedef enum sg_core_kind {
    SG_CORE_GUARD,       /**< trace guard `index` (sg_trace_guards) */
    SG_CORE_RANGE,       /**< the traced range of symbol `index` (sg_trace_symbols) */
    SG_CORE_REPLACEMENT, /**< the replacement of symbol `index` */
    SG_CORE_INPUT,       /**< the traced shape of input dim `index` (sg_trace_inputs) */
    SG_CORE_SPEC         /**< the spec of input dim `index` */
} sg_core_kind;

typedef struct sg_core_item {
    sg_core_kind kind;
    size_t index;
    char *text;      /**< the constraint, printed (sympy form; spec items as `dx in [2, 100]`) */
    const char *loc; /**< user location of a guard, or NULL */
} sg_core_item;

typedef struct sg_violation {
    char *dim;                /**< the name torch uses in its header: the Dim name, else the source */
    size_t input;             /**< index of the input dim (sg_trace_inputs) */
    sg_violation_kind kind;
    char *message;            /**< one line */
    const sg_expr *relation;  /**< EQUAL/RELATED/SPECIALIZED: the forced value of the dim, over the root dim's size symbol, or an integer */
    size_t root;              /**< EQUAL/RELATED: index of the input dim it is related to */
    bool has_counterexample;
    sg_int *counterexample;   /**< GUARD: a size for every input dim (sg_trace_inputs order) */
    sg_core_item *core;       /**< the minimal conflicting set */
    size_t ncore;
} sg_violation;

/** The verdict on one input dim. */
typedef struct sg_dim_result {
    size_t input;            /**< index into sg_trace_inputs */
    sg_dim_status status;
    char reason[64];         /**< UNKNOWN: why (Z3's reason, "time budget", "invalid spec"); else "" */
} sg_dim_result;

/** What the guards imply about one symbol (or input dim size). */
typedef struct sg_inferred {
    const sg_expr *sym;      /**< the symbol */
    size_t input;            /**< the first input dim whose size it is, or SIZE_MAX */
    sg_bound lo, hi;         /**< widest valid range */
    bool range_exact;        /**< both bounds proved optimal (else a sound over-approximation) */
    bool is_constant;
    sg_int constant;
    sg_int modulus, residue; /**< sym = residue (mod modulus); modulus 1: none */
    sg_int *holes;           /**< values inside [lo, hi] that are not valid, ascending */
    size_t nholes;
    bool holes_complete;     /**< every hole was found (else the list may be partial) */
    const sg_expr *equals;   /**< a proved relation sym = equals (over other symbols), or NULL */
} sg_inferred;

typedef struct sg_check_stats {
    unsigned queries;        /**< Z3 checks run */
    unsigned decided_cheaply;/**< guards decided by interval/congruence reasoning, never sent to Z3 */
    double seconds;
    uint64_t rlimit_spent;
} sg_check_stats;

/** What a report answers. */
typedef enum sg_report_kind {
    SG_REPORT_CHECK,  /**< sg_engine_check: the verdicts, fixes after a refutation */
    SG_REPORT_SPEC,   /**< sg_engine_spec: a generated spec (the fixes part) */
    SG_REPORT_VERIFY  /**< sg_engine_verify: the verdicts on an exported program's declared ranges */
} sg_report_kind;

/** torch's own suggested fixes (sg_trace_torch_fixes_json), applied as torch's refine step reads them and re-checked. */
typedef struct sg_torch_recheck {
    char **lines;        /**< torch's lines */
    size_t nlines;
    sg_verdict verdict;  /**< the verdict of the spec they make */
    char *why;           /**< the first violation with its counterexample, or why a line could not be read; NULL when ok */
} sg_torch_recheck;

/** What a verify report knows of the program (SG_REPORT_VERIFY). */
typedef struct sg_verify_info {
    char *name;            /**< the program's name (the archive path), or NULL */
    bool against_spec;     /**< decided a given spec, not the declared range_constraints */
    size_t asserts;        /**< runtime check nodes in the graph */
    size_t checked;        /**< of them, recovered as expressions */
    size_t data_dependent; /**< of the recovered, those over an unbacked (data-dependent) symbol */
} sg_verify_info;

struct sg_fixes;

typedef struct sg_report {
    sg_verdict verdict;
    sg_violation *violations;
    size_t nviolations;
    sg_dim_result *dims;
    size_t ndims;
    sg_inferred *inferred;
    size_t ninferred;
    sg_check_stats stats;
    bool no_spec;            /**< the trace carries no per-dim spec (torch failed building it): unknown */
    sg_report_kind kind;
    struct sg_fixes *fixes;  /**< CHECK: fixes after a refutation; SPEC: the generated spec; or NULL */
    char *torch_message;     /**< torch's whole error text with the verified fixes, or NULL */
    sg_torch_recheck *torch; /**< torch's own lines re-checked, or NULL */
    sg_verify_info *verify;  /**< VERIFY: the program's side, else NULL */
    /* private: the overlay of the trace's pool the check built expressions in, and the
     * reference to the trace the report holds */
    sg_pool *pool;
    sg_trace *trace;
    atomic_uint refs;        /* holders: the caller, the engine's cache */
} sg_report;

/**
 * Check trace `t` against its spec. Returns 0 with a report in `*out` (free with
 * sg_report_free()) whatever the verdict; an error code only when the check
 * could not run (SG_ENOMEM, SG_ERROR from Z3, SG_EINVALID for a trace that is
 * not self-consistent). A guard with no finite Z3 encoding (an exponent over
 * 4096) is not an error: every dim is unknown, its reason "guard N: ...".
 */
int sg_check(sg_report **out, const sg_trace *t, const sg_check_options *opts, sg_error *err);

void sg_report_free(sg_report *r);

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
int sg_report_to_json(char **out, const sg_report *r, unsigned flags, sg_error *err);

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
int sg_report_to_text(char **out, const sg_report *r, unsigned flags, sg_error *err);

/** "ok", "violations", "unknown", "invalid_spec". */
const char *sg_verdict_name(sg_verdict v);

#ifdef __cplusplus
}
#endif

#endif
