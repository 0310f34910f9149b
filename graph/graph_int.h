/*
 * graph_int.h - private header of graph/: the sympy `srepr` reader that
 * graph.c uses for tensor sizes and symbolic values.
 */
#ifndef SG_GRAPH_INT_H
#define SG_GRAPH_INT_H

#include <stddef.h>

#include "shapegate/error.h"
#include "expr/expr.h"

/*
 * Read one symbolic value as torch serialises `expr_str`: sympy `srepr`
 * (torch >= 2.6: `Add(Symbol('s0', integer=True, positive=True), Integer(1))`;
 * keyword arguments are ignored) or, when that does not read, sympy `str`
 * through sg_expr_parse() (torch <= 2.5: `s0 + 1`). `field` names the JSON
 * field in the one-line message. Returns 0 and sets `*out` (owned by `pool`),
 * or the error of the reader that applies (SG_EINVALID, SG_EUNSUPPORTED,
 * SG_ELIMIT, SG_ENOMEM).
 */
int sg_graph__read_expr(const sg_expr **out, sg_pool *pool, const char *text, const char *field,
                        sg_error *err);

#endif
