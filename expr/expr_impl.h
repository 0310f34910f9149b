/*
 * expr_impl.h - the layout of expression nodes and pools, shared by the
 * solver's own files (expr.c, parse.c, print.c, eval.c, smt.c). Everything
 * else uses the accessors of include/shapegate/expr.h.
 */
#ifndef SG_EXPR_IMPL_H
#define SG_EXPR_IMPL_H

#include <stdarg.h>
#include <stdio.h>

#include "expr/expr.h"
#include "util/arena.h"
#include "util/util.h"

struct sg_expr {
    uint32_t id;        /* dense, creation order */
    uint32_t depth;     /* 1 for leaves */
    uint64_t hash;
    uint8_t kind;       /* sg_kind */
    uint8_t sort;       /* sg_sort */
    uint8_t has_sym;    /* some symbol below */
    uint32_t nargs;
    uint32_t sym_index; /* SG_SYM: dense index; UINT32_MAX otherwise */
    union {
        sg_int ival;                          /* SG_INT */
        struct { sg_int num, den; } rat;      /* SG_RAT */
        struct { int sign, integer; } inf;    /* SG_INF */
        struct { const char *name; } sym;     /* SG_SYM */
    } u;
    const sg_expr *args[];
};

/*
 * A pool, or an overlay on a frozen parent pool: an overlay finds every node
 * its parent chain already has (so hash-consing and `a == b` hold across the
 * chain) and adds new nodes only to itself, with ids and symbol indices
 * continuing after the parent's. Nothing of the parent is ever written, so any
 * number of overlays (one per thread) may sit on one parent that no one
 * modifies any more.
 */
struct sg_pool {
    const sg_pool *parent;     /* frozen parent, or NULL */
    size_t base, sym_base;     /* parent's size and symbol count when the overlay was made */
    sg_arena arena;            /* nodes and names */
    sg_expr **table;           /* open-addressing hash set, power-of-two capacity */
    size_t table_cap;
    size_t count;              /* nodes of this pool (ids base .. base + count - 1) */
    const sg_expr **syms;      /* this pool's symbols, by symbol index - sym_base */
    size_t nsyms, syms_cap;
    sg_error error;            /* first constructor failure */
    /* evaluation scratch (eval.c): per-node generation stamp and value */
    uint32_t *scratch_stamp;
    void *scratch_val;
    size_t scratch_cap;
    uint32_t scratch_gen;
};

#endif
