/*
 * chain.h - private header of graph/: rebuilding a runtime assert's condition
 * from the graph nodes that compute it (graph/chain.c).
 *
 * torch computes the checked value of `aten._assert_scalar` with a chain of
 * symbolic nodes: `aten.sym_size.int` / `sym_numel` / `sym_stride.int` /
 * `sym_storage_offset` read sizes off a tensor's meta, and Python operators
 * (`_operator.mul`, `_operator.ge`, `torch.sym_not`, ...) combine them. A
 * scope is one graph (the top-level graph or a control-flow subgraph) with an
 * index from SymInt/SymBool value names to the node producing them.
 */
#ifndef SG_GRAPH_CHAIN_H
#define SG_GRAPH_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "expr/expr.h"

/* One value name -> producing node entry of a scope's index. */
typedef struct sg_graph__def {
    const char *name;
    const cJSON *node;
} sg_graph__def;

/* One graph of the program: its nodes and value tables, and the producer index. */
typedef struct sg_graph__scope {
    const cJSON *nodes;           /* Graph.nodes */
    const cJSON *tensor_values;   /* Graph.tensor_values */
    const cJSON *sym_int_values;  /* Graph.sym_int_values */
    const cJSON *sym_bool_values; /* Graph.sym_bool_values */
    sg_graph__def *defs;          /* sorted by name (owned) */
    size_t ndefs;
} sg_graph__scope;

/*
 * Set up `s` over the Graph object `graph` (borrowed; it must outlive `s`):
 * index every node output of kind as_sym_int / as_sym_bool by value name.
 * Returns 0 or SG_ENOMEM (then `s` holds nothing to free).
 */
int sg_graph__scope_init(sg_graph__scope *s, const cJSON *graph);

/* Free the index of `s`. NULL-safe. */
void sg_graph__scope_free(sg_graph__scope *s);

/*
 * Rebuild the value of Argument `arg` (`{"as_sym_bool": {"as_name": "ge"}}`,
 * `{"as_sym_int": ...}`, `{"as_int": 3}`, `{"as_bool": true}`) as an
 * expression in `pool`, following the chain of producing nodes in scope `s`:
 * size queries become the queried tensor's size expressions, known operators
 * the matching guard-language function, and any other producer (or a value
 * no node of the scope produces, such as a subgraph input) the value the
 * scope records for it in sym_int_values / sym_bool_values. `*out` is NULL
 * when the value cannot be rebuilt (an argument of another kind, a value with
 * no record, an unknown operator's operands, a chain deeper than 64 nodes or
 * of more than 4,096 steps, an expression the guard language rejects).
 * Returns 0, or SG_ENOMEM (out of memory; the pool's error is left set).
 */
int sg_graph__rebuild(const sg_expr **out, sg_pool *pool, const sg_graph__scope *s, const cJSON *arg);

/*
 * A pool constructor's result `e`: itself, or NULL when it failed; a failure
 * other than out of memory (a value the guard language rejects) is cleared
 * from the pool, out of memory sets `*nomem`.
 */
const sg_expr *sg_graph__made(sg_pool *pool, const sg_expr *e, bool *nomem);

/*
 * The same for one SymIntArgument (`{"as_name": "sym_size_int_2"}` or
 * `{"as_int": 8}`), the items of an `as_sym_ints` list.
 */
int sg_graph__rebuild_symint(const sg_expr **out, sg_pool *pool, const sg_graph__scope *s, const cJSON *sym);

#endif
