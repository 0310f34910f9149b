/*
 * kernels.h - private header of graph/: the shape rules of the kernels of the
 * top-level graph (graph/kernels.c, docs/graph.md "Kernel shape rules").
 *
 * An exported program replays its kernels on the sizes it is called with; a
 * kernel raises when those sizes do not fit it (two sizes that do not
 * broadcast, a view whose element count does not divide, inner dims of a
 * product that differ). torch checks none of that up front when the guard
 * that made it hold was not kept in the archive (torch <= 2.7 keeps no
 * guards_code; a relation between two dims never becomes a range). These
 * rules say, per node, the condition on the input sizes under which its
 * kernel runs, computed from the sizes the node is actually given: the
 * recorded tensor metas, except after ops whose result size at run time is
 * not what the meta says (a slice clamps to its input: `y[:x.size(0)]` has
 * Min(s0, s1) rows where the meta says s0), which are recomputed.
 */
#ifndef SG_GRAPH_KERNELS_H
#define SG_GRAPH_KERNELS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "shapegate/graph.h"

/*
 * The conditions the kernels of Graph object `graph` need (borrowed) into
 * `*out` (`*n` entries, NULL when none; free with sg_graph__kernels_free()),
 * each a boolean expression in `pool` over the program's symbols, in node
 * order. A condition that folds to true is left out. Nodes of ops with no
 * rule, or whose arguments or metas do not read, give none. Returns 0 or
 * SG_ENOMEM (nothing is returned then).
 */
int sg_graph__read_kernels(sg_graph_kernel_check **out, size_t *n, sg_pool *pool, const cJSON *graph,
                           sg_error *err);

/* Free what sg_graph__read_kernels() returned. NULL-safe. */
void sg_graph__kernels_free(sg_graph_kernel_check *k, size_t n);

#endif
