/**
 * @file graph.h
 * @brief A model of one torch.export ExportedProgram, read from its JSON:
 *        the graph signature (user inputs, parameters, buffers, constants),
 *        tensor metas with symbolic sizes as guard expressions, dtypes,
 *        range_constraints, the runtime asserts (also those inside
 *        control-flow subgraphs, with conditions read from their message or
 *        rebuilt from the nodes computing them), and which input dim each
 *        symbol stands for.
 *
 * Input: the raw model JSON bytes (sg_archive_read_model()). torch <= 2.6's
 * bare `Infinity` tokens are accepted (quoted on a private copy); integers are
 * read exactly (util/json.h). torch's JSON is never re-serialised. Sizes are
 * read from both `expr_str` forms: sympy `srepr` (torch >= 2.6,
 * `Symbol('s77', integer=True, positive=True)`) and `str` (<= 2.5, `2*s0`).
 *
 * Carried, not rejected: unknown ops, unknown fields and unknown signature
 * kinds (SG_GRAPH_IN_OTHER). What is not modelled yet is listed in docs/graph.md.
 *
 * Errors: SG_EINVALID (not the schema; the one-line message names the field,
 * e.g. "graph_module.graph.tensor_values.x.sizes[0]: ..."), SG_ELIMIT (JSON
 * too large or nested), SG_EUNSUPPORTED (an expression shapegate cannot
 * represent), SG_ENOMEM.
 *
 * Ownership: an `sg_graph` owns everything it hands out (strings, arrays,
 * expressions in its pool) until sg_graph_free(). Threading: one thread at a
 * time per graph.
 */
#ifndef SHAPEGATE_GRAPH_H
#define SHAPEGATE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "shapegate/archive.h"
#include "shapegate/report.h"
#include "shapegate/common.h"
#include "shapegate/error.h"
#include "shapegate/expr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_graph sg_graph;

/** The kind of one graph input, from the graph signature's `input_specs`. */
typedef enum sg_graph_input_kind {
    SG_GRAPH_IN_USER = 0,     /**< user_input */
    SG_GRAPH_IN_PARAMETER,    /**< parameter (target: parameter_name) */
    SG_GRAPH_IN_BUFFER,       /**< buffer (target: buffer_name) */
    SG_GRAPH_IN_CONSTANT,     /**< tensor_constant (target: tensor_constant_name) */
    SG_GRAPH_IN_CUSTOM_OBJ,   /**< custom_obj (target: custom_obj_name) */
    SG_GRAPH_IN_TOKEN,        /**< token */
    SG_GRAPH_IN_CONSTANT_INPUT, /**< constant_input (a non-tensor value baked in) */
    SG_GRAPH_IN_OTHER         /**< a kind this version does not know (carried) */
} sg_graph_input_kind;

/** One tensor meta (`tensor_values[name]`). */
typedef struct sg_graph_tensor {
    const char *name;             /**< the graph value name */
    int dtype;                    /**< torch ScalarType code (7 = float32) */
    size_t ndim;
    const sg_expr *const *sizes;  /**< ndim sizes: SG_INT literals or symbolic expressions */
    /**
     * ndim example sizes: the size torch traced the dim with (a symbolic size's
     * `as_expr.hint`, a static size itself), -1 when the archive records none.
     */
    const long long *hints;
} sg_graph_tensor;

/** One graph input, in signature order. */
typedef struct sg_graph_input {
    sg_graph_input_kind kind;
    const char *spec;             /**< the input_specs tag as written ("user_input", ...) */
    const char *name;             /**< graph value name ("x", "p_weight"), "" when none */
    const char *target;           /**< fqn of a parameter/buffer/constant/object, else NULL */
    const char *path;             /**< user and constant inputs: pytree path ("['inputs']['b'][0]"), else NULL */
    const sg_graph_tensor *tensor; /**< the tensor meta, NULL for non-tensor inputs */
    /**
     * constant_input (a non-tensor argument torch specialised; its `path` is set
     * as for user inputs): the value as compact JSON text (`3`, `0.5`, `true`,
     * `"relu"`, `null`), NULL when the value is of another kind. Else NULL.
     */
    const char *value;
} sg_graph_input;

/** One graph output, in signature order. */
typedef struct sg_graph_output {
    const char *spec;             /**< output_specs tag ("user_output", "buffer_mutation", ...) */
    const char *name;             /**< graph value name, "" for a constant output */
} sg_graph_output;

/** One entry of `range_constraints`. A missing side is unbounded. */
typedef struct sg_graph_range {
    const char *key;              /**< the key as written ("s77", "2*s77") */
    const sg_expr *expr;          /**< the key parsed */
    bool has_min, has_max;
    sg_num min, max;              /**< the bounds (valid when has_min / has_max) */
} sg_graph_range;

/** The kinds of runtime check nodes (`aten._assert_tensor_metadata` is counted apart). */
typedef enum sg_graph_assert_kind {
    SG_GRAPH_ASSERT_SCALAR = 0,          /**< aten._assert_scalar */
    SG_GRAPH_CONSTRAIN_RANGE,            /**< aten.sym_constrain_range */
    SG_GRAPH_CONSTRAIN_RANGE_FOR_SIZE    /**< aten.sym_constrain_range_for_size */
} sg_graph_assert_kind;

/** Where the condition of a runtime check was read from. */
typedef enum sg_graph_expr_source {
    SG_GRAPH_EXPR_NONE = 0,   /**< not recovered (expr is NULL) */
    SG_GRAPH_EXPR_MESSAGE,    /**< the expression text of _assert_scalar's message */
    SG_GRAPH_EXPR_NODES       /**< rebuilt from the graph nodes computing the checked value */
} sg_graph_expr_source;

/** One runtime check node, of the top-level graph or of a control-flow subgraph. */
typedef struct sg_graph_assert {
    sg_graph_assert_kind kind;
    const char *target;           /**< the node's target as written */
    const char *node;             /**< name of the checked value ("ge", "item") */
    const char *message;          /**< _assert_scalar's assert_msg, else NULL */
    /**
     * The checked condition: for _assert_scalar the expression of its
     * message, or, when the message is missing or does not read, the
     * condition rebuilt from the nodes (`rebuilt`); for the constrain nodes
     * `min <= v <= max` over the value's expression (for_size: min defaults
     * to 0). NULL when it could not be recovered.
     */
    const sg_expr *expr;
    /**
     * The condition rebuilt from the chain of `sym_size`/`sym_numel`/operator
     * nodes that compute the checked value (docs/graph.md), or NULL when the
     * chain cannot be followed. For _assert_scalar only.
     */
    const sg_expr *rebuilt;
    sg_graph_expr_source source;  /**< where `expr` comes from */
    /**
     * Where the node is: "" in the top-level graph, else the path of
     * subgraph names from the top ("true_graph_0", "body_graph_0/true_graph_1").
     */
    const char *graph;
    const char *hop;              /**< target of the higher-order op holding that subgraph, NULL at top level */
    const char *stack_trace;      /**< the node's `metadata.stack_trace` (Python frames, outermost first), or NULL */
} sg_graph_assert;

/**
 * One entry of the top-level `guards_code` (torch >= 2.8, schema 8.20): a
 * Python condition over the user inputs' sizes (`L['x'].size()[0] % 8 == 0`)
 * that the loaded module's guards function checks on every call.
 */
typedef struct sg_graph_guard {
    const char *text;             /**< the entry as written */
    /**
     * The condition over the program's symbols, each `L[path].size()[d]`
     * replaced by that input dim's symbolic size; NULL when it could not be
     * read (`reason` says why: it names something other than a user tensor
     * input's size, or does not parse).
     */
    const sg_expr *expr;
    const char *reason;           /**< why `expr` is NULL, else NULL */
} sg_graph_guard;

/**
 * One condition a kernel of the top-level graph needs of its input sizes to
 * run (docs/graph.md "Kernel shape rules"): two sizes that must broadcast, an
 * element count a view must divide, inner dims of a product that must agree.
 * Read from the nodes and their tensor metas; the loaded module raises where
 * it is false.
 */
typedef struct sg_graph_kernel_check {
    const char *node;             /**< the node's output ("add", "view_1") */
    const char *target;           /**< its op as written ("torch.ops.aten.add.Tensor") */
    const sg_expr *expr;          /**< the condition over the program's symbols */
    const char *what;             /**< one line: what must hold, with the operands' names and sizes */
    const char *stack_trace;      /**< the node's `metadata.stack_trace`, or NULL */
} sg_graph_kernel_check;

/** A symbol of the program and the first user input dim it stands for. */
typedef struct sg_graph_symbol {
    const sg_expr *sym;           /**< the SG_SYM */
    const char *path;             /**< path of the user input, NULL when no input dim is exactly it */
    size_t input;                 /**< index into the inputs (valid when path != NULL) */
    size_t dim;                   /**< the dim (valid when path != NULL) */
    const sg_graph_range *range;  /**< its range_constraints entry, or NULL */
} sg_graph_symbol;

/**
 * Parse `len` bytes of ExportedProgram JSON into a new graph `*out` (free
 * with sg_graph_free()). The text is not modified. Returns 0, SG_EINVALID,
 * SG_ELIMIT, SG_EUNSUPPORTED or SG_ENOMEM; `*out` is NULL on failure.
 */
SG_API int sg_graph_parse(sg_graph **out, const char *json, size_t len, sg_error *err);

/**
 * Read the model `name` of an open archive (NULL: the default model, as
 * sg_archive_read_model()) and parse it. Returns as sg_archive_read_model()
 * and sg_graph_parse().
 */
SG_API int sg_graph_load(sg_graph **out, sg_archive *a, const char *name, sg_error *err);

/** Free a graph and everything it handed out. NULL-safe. */
SG_API void sg_graph_free(sg_graph *g);

/** The expression pool of the graph (borrowed; expressions live in it). */
sg_pool *sg_graph_pool(const sg_graph *g);

/** Top-level `schema_version` ({0, 0} when absent), `torch_version` (NULL when absent). */
SG_API void sg_graph_schema_version(const sg_graph *g, int *major, int *minor);
SG_API const char *sg_graph_torch_version(const sg_graph *g);

SG_API size_t sg_graph_input_count(const sg_graph *g);
/** Input `i`, or NULL when out of range. Borrowed. */
SG_API const sg_graph_input *sg_graph_input_at(const sg_graph *g, size_t i);

SG_API size_t sg_graph_output_count(const sg_graph *g);
SG_API const sg_graph_output *sg_graph_output_at(const sg_graph *g, size_t i);

SG_API size_t sg_graph_range_count(const sg_graph *g);
SG_API const sg_graph_range *sg_graph_range_at(const sg_graph *g, size_t i);

SG_API size_t sg_graph_assert_count(const sg_graph *g);
SG_API const sg_graph_assert *sg_graph_assert_at(const sg_graph *g, size_t i);

/**
 * The `guards_code` entries in order (none for torch <= 2.7 archives, which
 * write no `guards_code`; sg_graph_has_guards_code() tells the two apart).
 */
SG_API size_t sg_graph_guard_count(const sg_graph *g);
/** Entry `i`, or NULL when out of range. Borrowed. */
SG_API const sg_graph_guard *sg_graph_guard_at(const sg_graph *g, size_t i);
/** True when the model JSON has a `guards_code` array (possibly empty). */
SG_API bool sg_graph_has_guards_code(const sg_graph *g);

/**
 * Symbols: every symbol of a range_constraints key, of a user input's sizes,
 * of a runtime assert and of a guards_code entry, in that order of first
 * appearance.
 */
/** The kernel shape conditions of the top-level graph, in node order. */
SG_API size_t sg_graph_kernel_check_count(const sg_graph *g);
/** Kernel condition `i`, or NULL when out of range. Borrowed. */
SG_API const sg_graph_kernel_check *sg_graph_kernel_check_at(const sg_graph *g, size_t i);

SG_API size_t sg_graph_symbol_count(const sg_graph *g);
SG_API const sg_graph_symbol *sg_graph_symbol_at(const sg_graph *g, size_t i);

/** Number of nodes in the top-level graph (carried, not modelled yet). */
SG_API size_t sg_graph_node_count(const sg_graph *g);

/**
 * Number of control-flow subgraphs (`as_graph` arguments of `cond`,
 * `while_loop`, `map_impl`, ... at any depth) whose runtime checks were read.
 */
SG_API size_t sg_graph_subgraph_count(const sg_graph *g);

/**
 * Number of `aten._assert_tensor_metadata` nodes (dtype/device/layout checks,
 * not shape constraints), in every graph. They are not runtime asserts here.
 */
SG_API size_t sg_graph_metadata_check_count(const sg_graph *g);

/** torch's name of a ScalarType code ("float32", "int64"), "unknown" for others. */
SG_API const char *sg_graph_dtype_name(int dtype);

/* ---- verifying the declared constraints (graph/verify.c; example points from the solver, asked through the engine module) */

/**
 * Build a trace (include/shapegate/trace.h) from the program's declared facts,
 * so that sg_check() decides whether every shape the range_constraints admit
 * passes every runtime assert (docs/graph.md, "verify"):
 * - symbols: every symbol of the graph, with its range_constraints entry as
 *   its range (a backed symbol without one: [0, int_oo]); a symbol that no
 *   user input's size mentions is unbacked (data-dependent: asserts over it
 *   are assumed, never checked);
 * - guards: every runtime assert whose condition was recovered, as a
 *   deferred runtime assert;
 * - inputs: every dim of every user tensor input, its value the symbolic
 *   size, its spec the declared range: a bare symbol is a Dim named after it
 *   with its range; `A*s + B` a derived Dim over `s`; an integer static; any
 *   other expression Dim.DYNAMIC. Example sizes are a point inside the
 *   ranges where the asserts hold (found with Z3), else the lower bounds;
 * - spec.inputs.arg_names: the argument names heading the input paths, so
 *   that sg_trace_with_spec_json() can replace the spec.
 * Returns 0 with a new trace in `*out` (free with sg_trace_free(); it has
 * its own pool), or SG_EUNSUPPORTED (a size with no example value),
 * SG_ENOMEM, or an error of sg_trace_load_json().
 */
SG_API int sg_graph_to_trace(sg_trace **out, const sg_graph *g, sg_error *err);

/**
 * As sg_graph_to_trace(), then the spec replaced by `spec` (`len` bytes, the
 * form of sg_trace_set_spec_json(); `what` names it in messages), with example
 * sizes chosen inside the spec's bounds (so that torch's example-in-range
 * validation concerns the spec, not made-up examples). The symbols' ranges
 * stay the declared range_constraints: a spec wider than them is refuted.
 * Returns as sg_graph_to_trace() and sg_trace_set_spec_json().
 */
SG_API int sg_graph_to_trace_spec(sg_trace **out, const sg_graph *g, const char *spec, size_t len, const char *what,
                           sg_error *err);

struct sg_check_options;

/** What the record of sg_graph_constraints_json() names besides the verdicts. */
typedef struct sg_graph_record_info {
    const char *model_member;      /**< relative name of the model JSON member, or NULL */
    const char *model_json;        /**< its raw bytes (hashed with SHA-256) */
    size_t model_len;
    const char *tool_version;      /**< the shapegate version ("0.1.0") */
    const struct sg_check_options *opts; /**< the budget the check ran with, or NULL */
} sg_graph_record_info;

/**
 * The JSON record `shapegate pack` stores (docs/archive.md, "pack"): format
 * and version, shapegate version, the model member with the SHA-256 of its
 * bytes, the solver (Z3 version, budget), the verdict, the runtime-assert
 * counts, per input dim (trace `t` from sg_graph_to_trace(), report `r` from
 * sg_check() on it) the status, the declared and the verified range (exact or
 * not), divisibility (`divisible_by`, `residue`), holes, relations (`equals`,
 * `same_as`), and the violations with witnesses. New NUL-terminated string in
 * `*out` (free with sg_free()). Returns 0, SG_EINVALID (missing argument),
 * SG_ELIMIT (over 64 MiB), SG_ENOMEM.
 */
SG_API int sg_graph_constraints_json(char **out, const sg_graph *g, const sg_report *r, const sg_graph_record_info *info,
                              sg_error *err);

/**
 * What archive `a` and its loaded graph `g` declare, as `shapegate inspect`
 * prints it: format and versions, user inputs with symbolic shapes and dtypes,
 * parameters, symbols with ranges and input dims, range constraints, runtime
 * asserts (with their control-flow subgraph), guards_code, metadata-check
 * count and members. sg_graph_inspect_text() starts with `path` (the name to
 * show); sg_graph_inspect_json() writes one JSON object and a newline
 * (docs/graph.md, "inspect"). Pure: they only read `a` and `g`, so any thread
 * may call them on objects no one is changing. New NUL-terminated string in
 * `*out` (free with sg_free()). Returns 0, SG_ELIMIT (over 256 MiB), SG_ENOMEM.
 */
SG_API int sg_graph_inspect_text(char **out, const char *path, const sg_archive *a, const sg_graph *g, sg_error *err);
SG_API int sg_graph_inspect_json(char **out, const sg_archive *a, const sg_graph *g, sg_error *err);

#ifdef __cplusplus
}
#endif

#endif
