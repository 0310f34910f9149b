/**
 * @file trace.h
 * @brief A trace: what torch's ShapeEnv held at the end of tracing, plus the
 *        user's dynamic_shapes spec — the input of every check.
 *
 * Adapters turn each input (a corpus/capture folder with guards.json and
 * case.json, or the single-file JSON trace of docs/trace-format.md) into one
 * in-memory `sg_trace`; nothing downstream knows where a trace came from.
 *
 * Immutability: a loaded trace never changes. A different spec is a new
 * trace: sg_trace_edit() (typed edits), sg_trace_with_dims() (the --dim
 * text) and sg_trace_with_spec_json() each return a structured copy
 * (sg_trace_clone) and leave their input as it was.
 *
 * Ownership: a trace owns its expression pool and every string and array
 * reachable from it; all pointers handed out are borrowed and live until the
 * last reference goes (sg_trace_free(); a report holds one). The structs
 * below are plain data: read them, do not modify them.
 *
 * Threading: every function here that takes a `const sg_trace *` only reads
 * it; any number of threads may use one trace at once.
 */
#ifndef SHAPEGATE_TRACE_H
#define SHAPEGATE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/common.h"
#include "shapegate/error.h"
#include "shapegate/expr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_trace sg_trace;

/** What the user's spec says about one tensor dimension. */
typedef enum sg_spec_kind {
    SG_SPEC_UNSET,   /**< no spec for the dim (None / missing): static in export */
    SG_SPEC_STATIC,  /**< an int or Dim.STATIC: static; `static_size` when an int was given */
    SG_SPEC_DIM,     /**< a named Dim: name, min, max */
    SG_SPEC_DERIVED, /**< a derived Dim: `derived` = A*root + B over the symbol named `root_name` */
    SG_SPEC_AUTO,    /**< Dim.AUTO, optionally with min/max */
    SG_SPEC_DYNAMIC  /**< Dim.DYNAMIC, optionally with min/max */
} sg_spec_kind;

/** Largest input file (guards.json, case.json, a JSON trace) the loaders read: SG_ELIMIT above. */
#define SG_TRACE_MAX_FILE ((size_t)64 << 20)
/** Deepest nesting of JSON arrays and objects the loaders accept: SG_ELIMIT above. */
#define SG_TRACE_MAX_JSON_DEPTH 512
/** The single-file JSON trace format version written (and the newest read). */
#define SG_TRACE_FORMAT_VERSION 1

/**
 * Load a capture folder (guards.json + case.json, as in tests/corpus/cases/NAME/;
 * docs/trace-format.md says what is read and how).
 * Returns 0 and a new trace in `*out` (free with sg_trace_free()), or, with a
 * one-line message naming the file and field ("NAME/guards.json:
 * shape_envs[0].guards[3].expr: column 5: unknown function 'foo'"):
 * SG_EIO (missing or unreadable file), SG_ELIMIT (file or nesting over the
 * limits above, an expression over the parser's limits or a literal beyond
 * the 128-bit range), SG_EINVALID (malformed JSON, a field of the wrong type,
 * an expression that does not parse or is not a number: `nan`, `zoo`, a
 * constant 1/0), SG_EUNSUPPORTED (an expression using what shapegate does not
 * handle), SG_ENOMEM. `*out` is NULL on failure.
 */
SG_API int sg_trace_load_dir(sg_trace **out, const char *dir, sg_error *err);

/**
 * Load a single-file JSON trace (docs/trace-format.md) from `len` bytes (need
 * not be NUL-terminated). Same returns as sg_trace_load_dir(); also
 * SG_EUNSUPPORTED for a format version newer than SG_TRACE_FORMAT_VERSION.
 */
SG_API int sg_trace_load_json(sg_trace **out, const char *json, size_t len, sg_error *err);

/** Load a trace from a path: a capture folder (sg_trace_load_dir), a single-file JSON trace, or a
 *  TORCH_TRACE folder or log holding one export frame (sg_trace_load_frame with frame 0). */
SG_API int sg_trace_load(sg_trace **out, const char *path, sg_error *err);

/**
 * Load export frame `frame` (numbered from 1 in log order; 0: the only one) of
 * a TORCH_TRACE log: a folder TORCH_TRACE=DIR wrote (its *.log and *.log.gz
 * files, in name order) or one such file (docs/trace-format.md §3). Symbols
 * come from create_symbol / create_unbacked_symbol, guards from
 * guard_added_fast / guard_added, specialisations, input sizes and sources
 * from describe_tensor / describe_source, the torch version from its artifact
 * (torch >= 2.7). The log has no dynamic_shapes spec: every traced dim gets
 * SG_SPEC_AUTO (give the spec with sg_trace_with_spec_json / sg_trace_edit).
 * Arguments the log names by position only (torch 2.6 non-strict
 * L['args'][0][k], strict L['flat_args'][k]) get the names "arg0", "arg1", ...
 * Returns 0, or SG_EIO (unreadable), SG_EINVALID ("PATH:LINE: ..." for a line
 * that is not a record or not JSON, a corrupt gzip stream, no export frame, a
 * missing `frame`, several frames and `frame` 0), SG_ELIMIT, SG_EUNSUPPORTED
 * (a guard shapegate does not handle), SG_ENOMEM.
 */
SG_API int sg_trace_load_torch_trace(sg_trace **out, const char *path, unsigned frame, sg_error *err);

/**
 * sg_trace_load() for every input kind: a capture folder, a JSON trace, a
 * TORCH_TRACE folder or log file (export frame `frame`, 0: the only one; for
 * the other kinds `frame` must be 0 or 1). A .pt2 archive or a file of no
 * known kind is SG_EINVALID with a message saying what is accepted.
 */
SG_API int sg_trace_load_frame(sg_trace **out, const char *path, unsigned frame, sg_error *err);

/** Whether `path` is a TORCH_TRACE folder or log file (what sg_trace_load_frame reads as one). */
SG_API bool sg_trace_is_torch_trace_path(const char *path);

/* ---- copies and spec edits: a loaded trace is never modified -------------------------- */

/**
 * A structured copy of `t` into `*out` (free with sg_trace_free()): the
 * per-dim spec tables are its own, everything else (guards, symbols,
 * expressions, strings) is shared with `t`, which the copy keeps alive.
 * Returns 0, SG_EINVALID (no trace), SG_ENOMEM.
 */
SG_API int sg_trace_clone(sg_trace **out, const sg_trace *t, sg_error *err);

/** A list of typed spec edits, applied as one set by sg_trace_edit(). */
typedef struct sg_spec_edits sg_spec_edits;

/** As a bound of the plain-typed builders below: int_oo (no maximum). */
#define SG_SPEC_UNBOUNDED INT64_MAX

/** An empty list (free with sg_spec_edits_free()). Returns 0 or SG_ENOMEM. */
SG_API int sg_spec_edits_new(sg_spec_edits **out, sg_error *err);
/** Free a list. NULL-safe. */
SG_API void sg_spec_edits_free(sg_spec_edits *e);
/** Number of edits in the list. */
SG_API size_t sg_spec_edits_count(const sg_spec_edits *e);

/**
 * Builders: each appends one edit. `input` indexes sg_trace_inputs(); names
 * are copied. Edits are checked when applied (sg_trace_edit): a name must
 * read as a bare symbol, a derived dim is A*ROOT + B with A >= 1, sizes and
 * bounds are non-negative. Each returns 0, SG_EINVALID (a NULL name), SG_ENOMEM.
 *
 *     set_dim          dim `input` becomes Dim `name`, with the range given for
 *                      `name` in this list, else the trace's definition of
 *                      `name`, else Dim's defaults (0 .. int_oo)
 *     set_dim_range    dim `input` becomes Dim(name, min, max)
 *     set_derived      dim `input` becomes a*root + b
 *     set_static       dim `input` becomes static (with `size` when has_size)
 *     set_hint         dim `input` becomes Dim.AUTO or Dim.DYNAMIC
 *     set_range        Dim `name` gets [min, max] wherever the trace uses it,
 *                      as a Dim or as a derived dim's root
 */
SG_API int sg_spec_edits_set_dim(sg_spec_edits *e, size_t input, const char *name, sg_error *err);
SG_API int sg_spec_edits_set_dim_range(sg_spec_edits *e, size_t input, const char *name, int64_t min, int64_t max,
                                sg_error *err);
SG_API int sg_spec_edits_set_derived(sg_spec_edits *e, size_t input, int64_t a, const char *root, int64_t b,
                              sg_error *err);
SG_API int sg_spec_edits_set_static(sg_spec_edits *e, size_t input, bool has_size, int64_t size, sg_error *err);
SG_API int sg_spec_edits_set_hint(sg_spec_edits *e, size_t input, sg_spec_kind kind, sg_error *err);
SG_API int sg_spec_edits_set_range(sg_spec_edits *e, const char *name, int64_t min, int64_t max, sg_error *err);

/**
 * Read `n` items in the text form of `shapegate check --dim` (docs/check.md,
 * "Spec overrides") against trace `t` and append them to `e` as typed edits:
 *
 *     INPUT.DIM=NAME:MIN..MAX   a named Dim; MIN (default 0) or MAX (default
 *                               int_oo; also "oo") may be empty: "dx:16..", "dx:.."
 *     INPUT.DIM=NAME            the Dim called NAME as another item or the trace
 *                               defines it, else Dim(NAME) with the defaults
 *     INPUT.DIM=2*NAME+1        a derived Dim A*NAME + B (A >= 1) over the root
 *                               NAME, whose bounds are found as for NAME alone
 *     INPUT.DIM=AUTO | DYNAMIC  a hint, optionally with a range ("AUTO:4..64")
 *     INPUT.DIM=STATIC | <int>  static (with the size given)
 *     NAME:MIN..MAX             only the range of Dim NAME (e.g. a derived dim's root)
 *
 * INPUT is the tensor's pytree path as the trace has it ("['inputs']['a']") or
 * dotted without brackets ("inputs.a", "xs.3"); "INPUT.DIM" may also be the
 * dim's source name ("L['x'].size()[0]"). All or nothing: on failure `e` is
 * unchanged. Returns 0, SG_EINVALID with a one-line message quoting the item
 * (malformed text, an unknown input, listing the inputs, or dim index, a dim
 * given twice, two ranges for one name), or SG_ENOMEM.
 */
SG_API int sg_spec_edits_parse_dims(sg_spec_edits *e, const sg_trace *t, const char *const *items, size_t n,
                             sg_error *err);

/**
 * A copy of `t` (sg_trace_clone) with the edits `e` applied as one set into
 * `*out`: a range given for NAME applies to every dim of the trace named NAME
 * and to every derived dim over root NAME, whose derived bounds are
 * recomputed as torch does (a negative derived min becomes torch's
 * "<unavailable: ...>" note). The copy has a flat spec, its
 * sg_trace_dynamic_shapes_json() rebuilt from the per-dim specs (keyed by the
 * argument names), and sg_trace_spec_overridden() true. `t` is not changed.
 * Returns 0, SG_EINVALID with a one-line message naming the edit in the
 * --dim text form (a dim set twice, two ranges for one name, a bad name,
 * size or bound), SG_ENOMEM; `*out` is NULL on failure.
 */
SG_API int sg_trace_edit(sg_trace **out, const sg_trace *t, const sg_spec_edits *e, sg_error *err);

/** sg_spec_edits_parse_dims() then sg_trace_edit(): a copy of `t` with `n` --dim items applied. */
SG_API int sg_trace_with_dims(sg_trace **out, const sg_trace *t, const char *const *items, size_t n, sg_error *err);

/**
 * A copy of `t` whose whole spec is `json` (`len` bytes): a dynamic_shapes
 * spec in the corpus's structured form (tests/corpus/README.md): a dict keyed
 * by argument name or a list (or {"__tuple__": [...]}) in argument order;
 * below it dicts, lists and tuples following the inputs; per tensor a dict
 * {"0": leaf} or a list of leaves, or null; leaves {"name","min","max"},
 * "AUTO" / "DYNAMIC" / "STATIC", {"hint": "AUTO", "min", "max"}, {"derived":
 * "2*dx", "root": {"name","min","max"}}, an integer, or null. An object
 * {"dynamic_shapes": spec} (a case.json, a refined round) is read as its spec
 * unless "dynamic_shapes" is an argument name; {"dynamic_shapes": null} there
 * means no spec is known (torch never built it), a bare null means None. `what` names the text in
 * messages (a file name). A dict whose top-level keys are not argument names
 * is kept as torch would see it: no flat spec, every dim SG_SPEC_UNSET (the
 * check then reports torch's error). Derived bounds are recomputed.
 * Returns 0, SG_EINVALID ("what: field: message": bad JSON,
 * a leaf of the wrong form, a derived "expr" that does not parse or uses what
 * shapegate does not handle, a path or dim index the inputs do not have),
 * SG_ELIMIT (over SG_TRACE_MAX_FILE or SG_TRACE_MAX_JSON_DEPTH, a literal
 * beyond 128 bits), SG_ENOMEM; `*out` is NULL on failure.
 */
SG_API int sg_trace_with_spec_json(sg_trace **out, const sg_trace *t, const char *json, size_t len, const char *what,
                            sg_error *err);

/** sg_trace_with_spec_json() on the contents of the file `path`; also SG_EIO. */
SG_API int sg_trace_with_spec_file(sg_trace **out, const sg_trace *t, const char *path, sg_error *err);

/**
 * Write the trace as a single-file JSON trace (docs/trace-format.md) into a new
 * NUL-terminated string `*out` (free with sg_free()). The output is
 * deterministic: loading it and writing again gives the same bytes.
 * Returns 0, SG_ENOMEM, or SG_ELIMIT (an expression too long to print).
 */
SG_API int sg_trace_to_json(char **out, const sg_trace *t, sg_error *err);

/**
 * Release the caller's reference to a trace. A report made from the trace
 * holds a reference of its own, so the memory goes with the last holder.
 * NULL-safe.
 */
SG_API void sg_trace_free(sg_trace *t);

/**
 * The expression pool every expression of the trace lives in (borrowed). It is
 * frozen: build new expressions in an overlay of it (sg_pool_overlay_new).
 */
SG_API const sg_pool *sg_trace_pool(const sg_trace *t);

/** The path the trace was loaded from (sg_trace_load, sg_trace_load_dir; a copy keeps it), or NULL. */
SG_API const char *sg_trace_name(const sg_trace *t);

/** torch version that produced the trace ("2.14.1"), or "" when unknown. */
SG_API const char *sg_trace_torch_version(const sg_trace *t);

/**
 * The lines of torch's own "Suggested fixes:" block for this trace as a JSON
 * array of strings (case.json `suggested_fixes`; `spec.torch_suggested_fixes`
 * in a JSON trace), or NULL when torch printed none or the trace does not say.
 * sg_fixes_compare_torch() re-checks them.
 */
SG_API const char *sg_trace_torch_fixes_json(const sg_trace *t);

/**
 * The exception torch raised when it produced the trace (case.json
 * `error_type`, `spec.torch_error` in a JSON trace: "torch._dynamo.exc.UserError",
 * "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode", ...), or
 * NULL when the export succeeded or the trace does not say. A data-dependent
 * error means tracing stopped early: the guards are only those recorded so far.
 */
SG_API const char *sg_trace_torch_error(const sg_trace *t);

/**
 * The first line of the message of that exception (case.json `error_message`,
 * `spec.torch_error_message` in a JSON trace), or NULL.
 */
SG_API const char *sg_trace_torch_error_message(const sg_trace *t);

/**
 * Did torch stop on a data-dependent guard (GuardOnDataDependentSymNode, also
 * when a UserError wraps it)? Then the export did not complete: the trace holds
 * only the guards recorded before that point, so nothing about the spec can be
 * proved from it (a refutation still holds).
 */
SG_API bool sg_trace_torch_failed_data_dependent(const sg_trace *t);

/** True when the export ran in strict mode. */
SG_API bool sg_trace_strict(const sg_trace *t);

/** False when torch never reached tracing (the spec was rejected first): no symbols or guards. */
SG_API bool sg_trace_has_shape_env(const sg_trace *t);

/**
 * True when the spec was flattened per dim (case.json `dynamic_shapes_flat`).
 * False when torch could not match it to the inputs (e.g. wrong top-level
 * keys) or never built it: every dim's kind is then SG_SPEC_UNSET and only
 * sg_trace_dynamic_shapes_json() has the spec.
 */
SG_API bool sg_trace_has_flat_spec(const sg_trace *t);

/**
 * True for a copy whose spec sg_trace_edit() or sg_trace_with_spec_json() changed: the
 * spec: the guards, ranges and traced values were recorded under another spec.
 * What torch never recorded because it was statically true under the original
 * spec's ranges is missing, and each symbol's range (sg_symbol_info lo, hi)
 * still carries the original spec's bounds, so a spec wider than the traced
 * range fails that range. Not kept by sg_trace_to_json().
 */
SG_API bool sg_trace_spec_overridden(const sg_trace *t);

/**
 * The user's dynamic_shapes spec as compact JSON in the corpus's structured
 * form (dict keys as strings, tuples as {"__tuple__": [...]}, Dim leaves as
 * {"name","min","max"}, ...; see tests/corpus/README.md), or NULL when unknown.
 * For validating the spec's structure against the inputs.
 */
SG_API const char *sg_trace_dynamic_shapes_json(const sg_trace *t);

/**
 * The example inputs as compact JSON (case.json `inputs`: arg_names, args,
 * kwargs as pytree JSON, flat, signature), or NULL when unknown.
 */
SG_API const char *sg_trace_inputs_json(const sg_trace *t);

/* ---- reading a trace: plain-typed accessors (`i` out of range: NULL, 0 or false) ------ */

/** Number of input dims: every dim of every tensor input, in input order then dim order. */
SG_API size_t sg_trace_input_count(const sg_trace *t);
/** The pytree path of input dim `i`'s tensor ("['x']", "['inputs']['b'][1]"). */
SG_API const char *sg_trace_input_path(const sg_trace *t, size_t i);
/** The dim index of input dim `i` within its tensor. */
SG_API int sg_trace_input_dim(const sg_trace *t, size_t i);
/** torch's source name of input dim `i` in its messages ("L['x'].size()[0]"). */
SG_API const char *sg_trace_input_source(const sg_trace *t, size_t i);
/** The example input's size of input dim `i`. */
SG_API bool sg_trace_input_size(const sg_trace *t, size_t i, sg_num *out);
/** What the spec says about input dim `i`. */
SG_API sg_spec_kind sg_trace_input_spec(const sg_trace *t, size_t i);
/** The Dim name of input dim `i` (a derived dim's printed form, "2*dx + 1"), or NULL. */
SG_API const char *sg_trace_input_spec_name(const sg_trace *t, size_t i);
/** The spec's bounds of input dim `i` into `min`, `max` (either may be NULL); false when the
 *  spec gives none (a static or unset dim, a hint without a range). */
SG_API bool sg_trace_input_spec_range(const sg_trace *t, size_t i, sg_num *min, sg_num *max);
/** What torch traced for input dim `i` (an expression of sg_trace_pool()), or NULL. */
SG_API const sg_expr *sg_trace_input_value(const sg_trace *t, size_t i);

/** Number of symbols of the ShapeEnv. */
SG_API size_t sg_trace_symbol_count(const sg_trace *t);
/** Symbol `i` (an expression of sg_trace_pool()). */
SG_API const sg_expr *sg_trace_symbol_at(const sg_trace *t, size_t i);
/** The traced range of symbol `i` (var_to_range; infinite sides as int_oo). */
SG_API bool sg_trace_symbol_range(const sg_trace *t, size_t i, sg_num *lo, sg_num *hi);

/** Number of guards: torch's shape guards in its order, then the deferred runtime asserts. */
SG_API size_t sg_trace_guard_count(const sg_trace *t);
/** Guard `i` (a boolean expression of sg_trace_pool()). */
SG_API const sg_expr *sg_trace_guard_expr(const sg_trace *t, size_t i);
/** Guard `i` as torch printed it. */
SG_API const char *sg_trace_guard_text(const sg_trace *t, size_t i);
/** The user code line guard `i` came from ("model.py:77 in forward"), or NULL. */
SG_API const char *sg_trace_guard_user_loc(const sg_trace *t, size_t i);
/** True when guard `i` is a deferred runtime assert, not a shape guard. */
SG_API bool sg_trace_guard_is_runtime_assert(const sg_trace *t, size_t i);

#ifdef __cplusplus
}
#endif

#endif
