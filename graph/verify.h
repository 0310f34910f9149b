/*
 * verify.h - turning a graph into a trace (graph/verify.c), for the engine.
 *
 * The example sizes of the trace must pass the program's runtime asserts
 * where it can; when the declared lower bounds do not, a point search finds
 * others. graph/ does not search itself (it holds no solver): it states what
 * it looks for (an sg_graph_point_query) and asks the caller's point finder,
 * which the engine answers with the solver's (engine/engine.c). The public
 * sg_graph_to_trace() and sg_graph_to_trace_spec() are these with the
 * solver's finder (the engine module defines them).
 *
 * Threads: as sg_graph_to_trace() (the graph is only read); the finder is
 * called on the calling thread.
 */
#ifndef SG_GRAPH_VERIFY_H
#define SG_GRAPH_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "expr/expr.h"
#include "shapegate/graph.h"
#include "shapegate/trace.h"
#include "util/util.h"

/* An optional closed interval (a side is open when its flag is false). */
typedef struct sg_graph_bound {
    bool has_lo, has_hi;
    sg_int lo, hi;
} sg_graph_bound;

/* What the point search is asked: values for the symbols of `pool` whose `active` flag is set
 * (every array has one entry per symbol of `pool`). */
typedef struct sg_graph_point_query {
    sg_pool *pool;                  /* an overlay of the graph's pool the finder may build in */
    const bool *active;             /* symbols to find values for (the backed ones) */
    const sg_graph_bound *hard;     /* bounds every answer meets (a spec's), or NULL */
    const sg_graph_bound *ranges;   /* wished ranges (layer 1: the declared ones), or NULL */
    const sg_expr *const *guards;   /* wished true (layer 1): runtime asserts and guards_code */
    size_t nguards;
    sg_int floor;                   /* wished lower bound of every active symbol (layer 2) */
    uint64_t rlimit;                /* the solver's resource limit per try */
} sg_graph_point_query;

/*
 * A point finder: look for a point inside `hard` meeting both wish layers;
 * failing that, the first layer alone, then the second alone, then neither.
 * The first point found overwrites vals[i] for every active symbol i (the
 * rest, and every value when nothing is found, stay as given). Returns 0
 * (found or not), SG_ENOMEM or SG_ERROR.
 */
typedef int (*sg_graph_find_point)(void *ctx, sg_int *vals, const sg_graph_point_query *q, sg_error *err);

typedef struct sg_graph_points {
    sg_graph_find_point find;
    void *ctx;
} sg_graph_points;

/* sg_graph_to_trace() / sg_graph_to_trace_spec() with example points from `pts` (not NULL). */
int sg_graph__to_trace(sg_trace **out, const sg_graph *g, const sg_graph_points *pts, sg_error *err);
int sg_graph__to_trace_spec(sg_trace **out, const sg_graph *g, const char *spec, size_t len, const char *what,
                            const sg_graph_points *pts, sg_error *err);

#endif
