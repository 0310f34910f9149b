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

#include "expr/expr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_trace sg_trace;

/** An integer bound that may be infinite (`inf` = -1 for -int_oo, +1 for int_oo, 0 finite). */
typedef struct sg_bound {
    sg_int v;
    int inf;
} sg_bound;

/** What the user's spec says about one tensor dimension. */
typedef enum sg_spec_kind {
    SG_SPEC_UNSET,   /**< no spec for the dim (None / missing): static in export */
    SG_SPEC_STATIC,  /**< an int or Dim.STATIC: static; `static_size` when an int was given */
    SG_SPEC_DIM,     /**< a named Dim: name, min, max */
    SG_SPEC_DERIVED, /**< a derived Dim: `derived` = A*root + B over the symbol named `root_name` */
    SG_SPEC_AUTO,    /**< Dim.AUTO, optionally with min/max */
    SG_SPEC_DYNAMIC  /**< Dim.DYNAMIC, optionally with min/max */
} sg_spec_kind;

/** One dimension of one tensor input: where it is, its example size, its spec, what torch traced. */
typedef struct sg_input_dim {
    const char *path;        /**< pytree path of the tensor: "['x']", "['inputs']['b'][1]" */
    int dim;                 /**< dimension index */
    /** torch's source name in messages: "L['x'].size()[0]" (torch 2.14, and strict
     *  mode of 2.6); torch 2.6 non-strict names what it traced: "L['args'][0][0].size()[0]" */
    const char *source;
    sg_int size;             /**< the example input's size */
    sg_spec_kind kind;
    const char *name;        /**< DIM: the Dim name; DERIVED: its printed name ("2*dx + 1") */
    bool has_bounds;         /**< DIM, DERIVED; AUTO/DYNAMIC when given min/max */
    sg_bound min, max;       /**< the spec's bounds (DERIVED: the derived bounds) */
    /** DERIVED (in practice): torch's "<unavailable: ...>" text when it raised while
     *  computing that bound (e.g. a negative derived min); the bound is then infinite. */
    const char *min_unavailable, *max_unavailable;
    const sg_expr *derived;  /**< DERIVED: the expression over the root symbol */
    const char *root_name;   /**< DERIVED: name of the root Dim */
    sg_bound root_min, root_max; /**< DERIVED: the root's bounds */
    bool has_static_size;    /**< STATIC given as an int */
    sg_int static_size;
    /** What torch's ShapeEnv traced for this dim: a symbol, an expression over
     *  symbols (after replacements), or an integer; NULL when not traced. */
    const sg_expr *value;
    /** The source torch traced the dim under, as in sg_symbol_info.sources
     *  ("L['flat_args'][0].size()[0]" in strict mode of torch 2.14, where `source`
     *  is "L['x'].size()[0]"); NULL when not traced. */
    const char *traced_source;
} sg_input_dim;

/** A symbol of the ShapeEnv. */
typedef struct sg_symbol_info {
    const sg_expr *sym;
    sg_bound lo, hi;           /**< var_to_range; -int_oo, int_oo when it has no entry */
    bool has_hint;
    sg_int hint;               /**< the example value (backed_var_to_val / unbacked_var_to_val) */
    bool unbacked;             /**< u<N>: data-dependent */
    bool size_like;
    const sg_expr *replacement; /**< what torch replaced it by, or NULL */
    const char *const *sources; /**< torch source names ("L['x'].size()[0]"), as recorded */
    size_t nsources;
} sg_symbol_info;

/** Where a constraint came from. */
typedef enum sg_guard_origin {
    SG_GUARD_SHAPE,          /**< a shape guard (ShapeEnv.guards) */
    SG_GUARD_RUNTIME_ASSERT  /**< a deferred runtime assert */
} sg_guard_origin;

/** One guard or runtime assert with its provenance. */
typedef struct sg_guard {
    const sg_expr *expr;       /**< boolean */
    sg_guard_origin origin;
    const char *text;          /**< the expression as torch printed it */
    const char *user_loc;      /**< user code line ("return x + y  # model.py:77 in forward"), or NULL */
    const char *framework_loc; /**< torch code ("File \"...\", line 1118, in infer_size\n    ..."), or NULL */
    const char *sloc;          /**< torch's short location, as its messages print it
                                    ("(model.py:41 in forward)"), or NULL */
    const char *msg;           /**< RUNTIME_ASSERT: the message recorded with it (often a
                                    torch "file.py:line"), or NULL */
} sg_guard;

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
int sg_trace_load_dir(sg_trace **out, const char *dir, sg_error *err);

/**
 * Load a single-file JSON trace (docs/trace-format.md) from `len` bytes (need
 * not be NUL-terminated). Same returns as sg_trace_load_dir(); also
 * SG_EUNSUPPORTED for a format version newer than SG_TRACE_FORMAT_VERSION.
 */
int sg_trace_load_json(sg_trace **out, const char *json, size_t len, sg_error *err);

/** Load a trace from a path: a folder (sg_trace_load_dir) or a single-file JSON trace. */
int sg_trace_load(sg_trace **out, const char *path, sg_error *err);

/* ---- copies and spec edits: a loaded trace is never modified -------------------------- */

/**
 * A structured copy of `t` into `*out` (free with sg_trace_free()): the
 * per-dim spec tables are its own, everything else (guards, symbols,
 * expressions, strings) is shared with `t`, which the copy keeps alive.
 * Returns 0, SG_EINVALID (no trace), SG_ENOMEM.
 */
int sg_trace_clone(sg_trace **out, const sg_trace *t, sg_error *err);

/** A list of typed spec edits, applied as one set by sg_trace_edit(). */
typedef struct sg_spec_edits sg_spec_edits;

/** As a bound of the plain-typed builders below: int_oo (no maximum). */
#define SG_SPEC_UNBOUNDED INT64_MAX

/** An empty list (free with sg_spec_edits_free()). Returns 0 or SG_ENOMEM. */
int sg_spec_edits_new(sg_spec_edits **out, sg_error *err);
/** Free a list. NULL-safe. */
void sg_spec_edits_free(sg_spec_edits *e);
/** Number of edits in the list. */
size_t sg_spec_edits_count(const sg_spec_edits *e);

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
int sg_spec_edits_set_dim(sg_spec_edits *e, size_t input, const char *name, sg_error *err);
int sg_spec_edits_set_dim_range(sg_spec_edits *e, size_t input, const char *name, int64_t min, int64_t max,
                                sg_error *err);
int sg_spec_edits_set_derived(sg_spec_edits *e, size_t input, int64_t a, const char *root, int64_t b,
                              sg_error *err);
int sg_spec_edits_set_static(sg_spec_edits *e, size_t input, bool has_size, int64_t size, sg_error *err);
int sg_spec_edits_set_hint(sg_spec_edits *e, size_t input, sg_spec_kind kind, sg_error *err);
int sg_spec_edits_set_range(sg_spec_edits *e, const char *name, int64_t min, int64_t max, sg_error *err);

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
int sg_spec_edits_parse_dims(sg_spec_edits *e, const sg_trace *t, const char *const *items, size_t n,
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
int sg_trace_edit(sg_trace **out, const sg_trace *t, const sg_spec_edits *e, sg_error *err);

/** sg_spec_edits_parse_dims() then sg_trace_edit(): a copy of `t` with `n` --dim items applied. */
int sg_trace_with_dims(sg_trace **out, const sg_trace *t, const char *const *items, size_t n, sg_error *err);

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
int sg_trace_with_spec_json(sg_trace **out, const sg_trace *t, const char *json, size_t len, const char *what,
                            sg_error *err);

/** sg_trace_with_spec_json() on the contents of the file `path`; also SG_EIO. */
int sg_trace_with_spec_file(sg_trace **out, const sg_trace *t, const char *path, sg_error *err);

/**
 * Write the trace as a single-file JSON trace (docs/trace-format.md) into a new
 * NUL-terminated string `*out` (free with sg_free()). The output is
 * deterministic: loading it and writing again gives the same bytes.
 * Returns 0, SG_ENOMEM, or SG_ELIMIT (an expression too long to print).
 */
int sg_trace_to_json(char **out, const sg_trace *t, sg_error *err);

/**
 * Release the caller's reference to a trace. A report made from the trace
 * holds a reference of its own, so the memory goes with the last holder.
 * NULL-safe.
 */
void sg_trace_free(sg_trace *t);

/**
 * The expression pool every expression of the trace lives in (borrowed). It is
 * frozen: build new expressions in an overlay of it (sg_pool_overlay_new).
 */
const sg_pool *sg_trace_pool(const sg_trace *t);

/** The path the trace was loaded from (sg_trace_load, sg_trace_load_dir; a copy keeps it), or NULL. */
const char *sg_trace_name(const sg_trace *t);

/** torch version that produced the trace ("2.14.1"), or "" when unknown. */
const char *sg_trace_torch_version(const sg_trace *t);

/**
 * The lines of torch's own "Suggested fixes:" block for this trace as a JSON
 * array of strings (case.json `suggested_fixes`; `spec.torch_suggested_fixes`
 * in a JSON trace), or NULL when torch printed none or the trace does not say.
 * sg_fixes_compare_torch() re-checks them.
 */
const char *sg_trace_torch_fixes_json(const sg_trace *t);

/**
 * The exception torch raised when it produced the trace (case.json
 * `error_type`, `spec.torch_error` in a JSON trace: "torch._dynamo.exc.UserError",
 * "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode", ...), or
 * NULL when the export succeeded or the trace does not say. A data-dependent
 * error means tracing stopped early: the guards are only those recorded so far.
 */
const char *sg_trace_torch_error(const sg_trace *t);

/** True when the export ran in strict mode. */
bool sg_trace_strict(const sg_trace *t);

/** False when torch never reached tracing (the spec was rejected first): no symbols or guards. */
bool sg_trace_has_shape_env(const sg_trace *t);

/**
 * True when the spec was flattened per dim (case.json `dynamic_shapes_flat`).
 * False when torch could not match it to the inputs (e.g. wrong top-level
 * keys) or never built it: every dim's kind is then SG_SPEC_UNSET and only
 * sg_trace_dynamic_shapes_json() has the spec.
 */
bool sg_trace_has_flat_spec(const sg_trace *t);

/**
 * True for a copy whose spec sg_trace_edit() or sg_trace_with_spec_json() changed: the
 * spec: the guards, ranges and traced values were recorded under another spec.
 * What torch never recorded because it was statically true under the original
 * spec's ranges is missing, and each symbol's range (sg_symbol_info lo, hi)
 * still carries the original spec's bounds, so a spec wider than the traced
 * range fails that range. Not kept by sg_trace_to_json().
 */
bool sg_trace_spec_overridden(const sg_trace *t);

/**
 * The user's dynamic_shapes spec as compact JSON in the corpus's structured
 * form (dict keys as strings, tuples as {"__tuple__": [...]}, Dim leaves as
 * {"name","min","max"}, ...; see tests/corpus/README.md), or NULL when unknown.
 * For validating the spec's structure against the inputs.
 */
const char *sg_trace_dynamic_shapes_json(const sg_trace *t);

/**
 * The example inputs as compact JSON (case.json `inputs`: arg_names, args,
 * kwargs as pytree JSON, flat, signature), or NULL when unknown.
 */
const char *sg_trace_inputs_json(const sg_trace *t);

/** Every dim of every tensor input, in input order then dim order (`*n` entries). */
const sg_input_dim *sg_trace_inputs(const sg_trace *t, size_t *n);
/** Every symbol of the ShapeEnv (`*n` entries): var_to_range's order, then any other symbol
 *  a table names (sources, hints, replacements, unbacked lists) in the order first seen. */
const sg_symbol_info *sg_trace_symbols(const sg_trace *t, size_t *n);

/** The shape guards in torch's order, then the deferred runtime asserts (`*n` entries). */
const sg_guard *sg_trace_guards(const sg_trace *t, size_t *n);

/** The info of symbol `sym` (an expression of this trace's pool), or NULL when the
 *  trace does not know it. */
const sg_symbol_info *sg_trace_symbol_info(const sg_trace *t, const sg_expr *sym);

#ifdef __cplusplus
}
#endif

#endif
