/**
 * @file engine.h
 * @brief The engine: one handle that any number of threads share to check
 *        traces, generate specs and verify exported programs.
 *
 * An `sg_engine` owns what is worth keeping between calls: optionally warm Z3
 * contexts (sg_engine_options.warm_contexts: faster, at the price of answers
 * that depend on history), an optional cache of results for identical calls,
 * and engine-wide counters. Everything a call needs beyond
 * that is its own: its options (budgets, switches, a cancel token), the
 * trace it reads (never modified, see trace.h) and the report it returns.
 *
 *     sg_engine *e = NULL;
 *     sg_engine_new(&e, NULL, &err);                       // defaults
 *     sg_check_options o = SG_CHECK_OPTIONS_INIT;
 *     o.timeout_ms = 2000;
 *     if (sg_engine_check(e, trace, &o, &report, &err) == 0) {
 *         char *json = NULL;
 *         sg_report_to_json(&json, report, 0, &err);
 *         ...
 *     }
 *
 * Threading: every sg_engine_* call may run on any thread at the same time
 * as any other on the same engine, except sg_engine_free(), which must be
 * the last. A trace may be checked by several threads at once. A cancel
 * token may be shared by several calls and requested from any thread.
 *
 * Errors: a call returns 0 with a report whatever the verdict (proved,
 * refuted, unknown are results, not errors); a negative status only when it
 * could not run (SG_EINVALID for bad options, SG_ENOMEM, SG_ERROR from Z3),
 * with a one-line message in `err`.
 */
#ifndef SHAPEGATE_ENGINE_H
#define SHAPEGATE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/cancel.h"
#include "shapegate/error.h"
#include "shapegate/graph.h"
#include "shapegate/report.h"
#include "shapegate/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_engine sg_engine;

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
SG_API int sg_check_options_init(sg_check_options *o, unsigned version);

/** What an engine keeps. Fill with SG_ENGINE_OPTIONS_INIT (or sg_engine_options_init), then change fields. */
typedef struct sg_engine_options {
    unsigned version;        /**< SG_ENGINE_OPTIONS_VERSION */
    /**
     * Z3 contexts kept warm between calls (default 0). With 0 every call starts
     * from new contexts (reused only within the call, in a fixed order), so a
     * report depends only on the call's trace and options: the same call gives
     * the same bytes on any thread, after any other call. With N > 0 up to N
     * contexts serve calls one after another, saving a context's creation per
     * call (about 7% on the corpus), but Z3's answers then depend on what a
     * context answered before: which counterexample and which minimal set a
     * report names may change, and under a tight resource limit whether a dim
     * is decided. Verdicts stay sound either way.
     */
    unsigned warm_contexts;
    unsigned cache_entries;  /**< reports kept for repeated identical calls (default 0: no cache) */
} sg_engine_options;

#define SG_ENGINE_OPTIONS_VERSION 1
#define SG_ENGINE_OPTIONS_INIT {SG_ENGINE_OPTIONS_VERSION, 0, 0}

/** Fill `o` with the defaults of options version `version`. Returns 0, or SG_EINVALID for a version
 *  this library does not know. */
SG_API int sg_engine_options_init(sg_engine_options *o, unsigned version);

/**
 * A new engine with options `opts` (NULL: the defaults). Returns 0 and the
 * engine in `*out` (free with sg_engine_free()), SG_EINVALID (an options
 * version this library does not know), or SG_ENOMEM.
 */
SG_API int sg_engine_new(sg_engine **out, const sg_engine_options *opts, sg_error *err);

/** Free the engine, its warm contexts and its cache. No call may be running on it. NULL-safe. */
SG_API void sg_engine_free(sg_engine *e);

/**
 * Check trace `t` against its spec (check.h): a verdict per dynamic dim;
 * after a refutation, when `opts->fixes`, suggested fixes re-checked on a
 * copy of the trace (docs/fixes.md); when `opts->torch_fixes` and the trace
 * carries torch's own suggested fixes, those re-checked as torch's refine
 * step reads them; when `opts->torch_message`, torch's own error text with
 * the verified fixes (message.h). `opts` NULL: the defaults. Returns 0 and a
 * report in `*out` (free with sg_report_free()), SG_EINVALID (bad options,
 * or a trace that is not self-consistent), SG_ENOMEM, SG_ERROR (Z3).
 * A budget spent or a cancel request gives "unknown" dims with the reason,
 * not an error.
 */
SG_API int sg_engine_check(sg_engine *e, const sg_trace *t, const sg_check_options *opts, sg_report **out,
                    sg_error *err);

/**
 * The widest valid spec for every dynamic dim of `t` (fixes.h,
 * sg_spec_generate), verified, into a report whose fixes part holds it (and
 * torch's text and the re-check of torch's lines as for sg_engine_check).
 * Same returns as sg_engine_check().
 */
SG_API int sg_engine_spec(sg_engine *e, const sg_trace *t, const sg_check_options *opts, sg_report **out,
                   sg_error *err);

/** What sg_engine_verify() decides. Fill with SG_VERIFY_INPUT_INIT, then set `graph`. */
typedef struct sg_verify_input {
    unsigned version;        /**< SG_VERIFY_INPUT_VERSION */
    const sg_graph *graph;   /**< the exported program (borrowed for the call) */
    const char *name;        /**< what the report calls it (the archive path), or NULL */
    const char *spec;        /**< a dynamic_shapes spec (the corpus's structured JSON) to decide instead of
                                  the declared range_constraints, or NULL */
    size_t spec_len;         /**< bytes of `spec` */
    const char *spec_name;   /**< what messages call the spec (its file), or NULL */
} sg_verify_input;

#define SG_VERIFY_INPUT_VERSION 1
#define SG_VERIFY_INPUT_INIT {SG_VERIFY_INPUT_VERSION, NULL, NULL, NULL, 0, NULL}

/**
 * Verify an exported program: do the shapes its declared range_constraints
 * admit (or those `in->spec` admits) pass every runtime assert of the graph?
 * The report (SG_REPORT_VERIFY) carries the verdicts and how many asserts
 * were recovered. Same returns as sg_engine_check(); also SG_EINVALID /
 * SG_ELIMIT for a program or spec that cannot be read into a trace.
 */
SG_API int sg_engine_verify(sg_engine *e, const sg_verify_input *in, const sg_check_options *opts, sg_report **out,
                     sg_error *err);

/* ---- release gate ------------------------------------------------------------------------------ */

/** The result of sg_engine_gate() (opaque; free with sg_gate_free()). */
typedef struct sg_gate sg_gate;

/** The gate's decision. */
typedef enum sg_gate_verdict {
    SG_GATE_PASS = 0,       /**< NEW accepts every shape OLD accepts (it may accept more: a widening) */
    SG_GATE_REGRESSION,     /**< some shape OLD accepts, NEW rejects (or the signature changed) */
    SG_GATE_UNKNOWN         /**< not decided (the reason says why) */
} sg_gate_verdict;

/**
 * Does NEW accept every input shape OLD accepts? Each program's accepted
 * domain is what its loaded module checks on every call: the inputs'
 * symbolic and static sizes, range_constraints, guards_code and the runtime
 * asserts over input sizes (data-dependent ones are not about shapes). User
 * inputs are matched by pytree path; a different list of paths or ranks is a
 * signature change (a regression). Z3 decides `domain(OLD) ⊆ domain(NEW)`
 * and the other direction (a widening, which passes), each under
 * `opts->query_rlimit`; a shape on either side comes as a witness covering
 * every tensor input, with the condition of the rejecting version that
 * fails on it. `policy` (NUL-terminated JSON, or NULL; docs/gate.md) names
 * ranges of OLD's input dims NEW must accept whatever OLD did, and relations
 * NEW may require: a shape they admit that NEW rejects is a policy
 * violation, reported and decided like a regression. Returns 0 and `*out`,
 * SG_EINVALID (missing argument, bad options, a policy that does not read
 * or names no input dim of OLD), SG_ENOMEM, SG_ERROR (Z3).
 */
SG_API int sg_engine_gate(sg_engine *e, const sg_graph *old_prog, const sg_graph *new_prog, const char *old_name,
                          const char *new_name, const char *policy, const sg_check_options *opts, sg_gate **out,
                          sg_error *err);

/**
 * The two versions of sg_engine_gate_run(): each an exported program (`*_graph`, from a .pt2) or
 * a trace (`*_trace`: a v1 JSON trace, a capture folder, a TORCH_TRACE log; trace.h), one of
 * the two. A trace's accepted domain is the program its export makes: every input dim equals
 * what torch traced, the spec's Dim ranges (else the traced ranges), every shape guard and
 * runtime assert over input sizes (docs/gate.md). Fill with SG_GATE_INPUT_INIT.
 */
typedef struct sg_gate_input {
    unsigned version;            /**< SG_GATE_INPUT_VERSION */
    const sg_graph *old_graph;   /**< OLD as a program (borrowed for the call), or NULL */
    const sg_trace *old_trace;   /**< OLD as a trace, or NULL */
    const char *old_name;        /**< what the report calls OLD (its path), or NULL */
    const sg_graph *new_graph;
    const sg_trace *new_trace;
    const char *new_name;
    const char *policy;          /**< NUL-terminated policy (JSON or Python dynamic_shapes form), or NULL */
    bool serving;                /**< also compute NEW's serving descriptors (sg_gate_to_serving) */
    int64_t serving_cap;         /**< the max a descriptor gives a dim NEW leaves unbounded (0: 4096) */
} sg_gate_input;

#define SG_GATE_INPUT_VERSION 1
#define SG_GATE_INPUT_INIT {SG_GATE_INPUT_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, 0}

/**
 * sg_engine_gate() over any mix of programs and traces, with serving descriptors on request.
 * Same returns; also SG_EINVALID for an input version this library does not know or a side
 * with neither (or both) of a program and a trace. sg_engine_gate() is this with two programs.
 */
SG_API int sg_engine_gate_run(sg_engine *e, const sg_gate_input *in, const sg_check_options *opts, sg_gate **out,
                              sg_error *err);

/** The serving descriptors sg_gate_to_serving() writes. */
typedef enum sg_gate_serving_kind {
    SG_GATE_SERVING_TENSORRT = 0, /**< trtexec's --minShapes/--optShapes/--maxShapes */
    SG_GATE_SERVING_TRITON,       /**< a Triton config.pbtxt `input [...]` block (max_batch_size: 0) */
    SG_GATE_SERVING_DYNAMIC_SHAPES /**< torch's dynamic_shapes as Python text */
} sg_gate_serving_kind;

/**
 * One serving descriptor of NEW's verified domain as text into `*out` (sg_free()). Returns 0,
 * SG_EINVALID (the gate was run without `serving`, or NEW's descriptors could not be computed:
 * the message says why), SG_ENOMEM.
 */
SG_API int sg_gate_to_serving(char **out, const sg_gate *g, sg_gate_serving_kind kind, sg_error *err);

/** The decision (SG_GATE_UNKNOWN for NULL). */
SG_API sg_gate_verdict sg_gate_verdict_of(const sg_gate *g);
/** "pass", "regression", "unknown". */
SG_API const char *sg_gate_verdict_name(sg_gate_verdict v);
/** The gate as JSON (docs/gate.md) / as text for people, into a new string `*out` (sg_free()). */
SG_API int sg_gate_to_json(char **out, const sg_gate *g, sg_error *err);
SG_API int sg_gate_to_text(char **out, const sg_gate *g, sg_error *err);
/**
 * JUnit XML for CI: one test case per input dim of OLD (failing when the
 * condition NEW rejects the regression witness by is about that dim; an
 * error when the gate is unknown) and one for the signature.
 */
SG_API int sg_gate_to_junit(char **out, const sg_gate *g, sg_error *err);
/**
 * One GitHub-style workflow annotation line per finding (`::error` for a
 * regression or a changed signature, `::notice` for a widening, `::warning`
 * for unknown), none when NEW accepts exactly what OLD does.
 */
SG_API int sg_gate_to_annotations(char **out, const sg_gate *g, sg_error *err);
/** Free a gate result. NULL-safe. */
SG_API void sg_gate_free(sg_gate *g);

/* Batches of traces sit on the same call path (engine/engine.c, "jobs"); not part of this API yet. */

/* ---- counters --------------------------------------------------------------------------------- */

/** Engine-wide counters since sg_engine_new(), read by sg_engine_stats_get(). */
typedef struct sg_engine_stats {
    uint64_t requests;         /**< sg_engine_check / spec / verify calls */
    uint64_t errors;           /**< calls that returned an error */
    uint64_t checks;           /**< checks run (fixes and spec generation re-check, so more than requests) */
    uint64_t solver_queries;   /**< Z3 queries */
    uint64_t decided_cheaply;  /**< guards decided without Z3 */
    uint64_t budget_stops;     /**< queries stopped by a budget (time, resource limit) */
    uint64_t canceled;         /**< calls that saw a cancel request */
    uint64_t cache_hits;       /**< calls answered from the cache */
    uint64_t cache_misses;     /**< calls the cache could have answered but did not hold */
    uint64_t contexts_created; /**< Z3 contexts made */
    uint64_t contexts_reused;  /**< Z3 contexts taken warm */
    uint64_t contexts_idle;    /**< Z3 contexts warm now */
} sg_engine_stats;

/** A snapshot of the counters (zeros for NULL). Safe while calls run. */
SG_API void sg_engine_stats_get(const sg_engine *e, sg_engine_stats *out);

#ifdef __cplusplus
}
#endif

#endif
