/*
 * expr.h - the expression language inside the library: what the public
 * include/shapegate/expr.h offers, plus its 128-bit face (literals, values
 * and evaluation with sg_int) and copying between pools. Every module works
 * with this header; the CLI and bindings with the public one.
 */
#ifndef SG_EXPR_EXPR_H
#define SG_EXPR_EXPR_H

#include "shapegate/expr.h"
#include "util/int.h"
#include "util/lin.h"

const sg_expr *sg_expr_int(sg_pool *pool, sg_int v);
/* The real literal p/q, reduced (sort REAL even when q divides p). q != 0. */
const sg_expr *sg_expr_rational(sg_pool *pool, sg_int p, sg_int q);
/* The value of an SG_INT (0 for other kinds). */
sg_int sg_expr_int_value(const sg_expr *e);
/* Numerator and denominator of an SG_INT or SG_RAT; false for other kinds. */
bool sg_expr_rational_value(const sg_expr *e, sg_int *num, sg_int *den);

/* `e` as a*sym + b with integers a != 0 and b over one symbol (`*sym` NULL and a = 0 for an
 * integer `e`); false when it is not of that form or a sum overflows. */
bool sg_expr_affine(const sg_expr *e, const sg_expr **sym, sg_int *a, sg_int *b);

/* A symbol as a form over the caller's variables (`depth`: the walk's, for the caller's own
 * recursion); false when it is none. */
typedef bool (*sg_expr_linear_sym)(void *ctx, const sg_expr *sym, sg_lin *f, int depth);

/* `e` (integers, symbols, sums, products with at most one non-constant factor) as a linear form
 * over the variables `sym` gives symbols; false when it is not linear, a form overflows, or the
 * walk visits more than `work_max` nodes counted in `*work` (shared by the caller's walks). */
bool sg_expr_linear(const sg_expr *e, sg_expr_linear_sym sym, void *ctx, unsigned *work, unsigned work_max,
                    sg_lin *f, int depth);

/* A value: kind as sg_eval's, the numbers as sg_int. */
typedef struct sg_value {
    sg_value_kind kind;
    sg_int num;
    sg_int den;
} sg_value;

/*
 * sg_expr_evaluate() with sg_int values (`values[sg_expr_symbol_index(s)]`,
 * `nvalues` entries): same returns.
 */
int sg_expr_eval(sg_value *out, sg_pool *pool, const sg_expr *e, const sg_int *values, size_t nvalues,
                 sg_error *err);

/* Render a value: "7", "True", "int_oo", "-oo", "7/2" (exact real), "3/1" (integral real). */
void sg_value_format(char *buf, size_t cap, const sg_value *v);

/*
 * Copying expressions into another pool: sg_expr_copy() rebuilds `e` (of any
 * pool) in `c->dst` through the constructors, so the copy is the same
 * expression there (`a == b` holds among copies), each shared subterm built
 * once. NULL with the pool's recorded error on failure. A copier remembers
 * ids of one source pool chain only.
 */
typedef struct sg_expr_copier {
    sg_pool *dst;
    const sg_expr **memo; /* by source id */
    size_t cap;
} sg_expr_copier;

void sg_expr_copier_init(sg_expr_copier *c, sg_pool *dst);
const sg_expr *sg_expr_copy(sg_expr_copier *c, const sg_expr *e);
void sg_expr_copier_dispose(sg_expr_copier *c);

/*
 * The structure of `e` appended to `b` as text, to tell expressions equal up to a renaming of
 * their symbols (isomorphic components, analysis/check_classes.c): every node's kind and sort and
 * a literal's value, a DAG written as a tree, a symbol as "v" and pos(sym, ctx); no expression
 * (NULL) as "_". Two expressions write the same text exactly when they are the same tree with
 * symbols of the same positions.
 * False (b then holds part of it) when a symbol has no position (pos gives SIZE_MAX), past
 * *budget nodes (each node spends one), or at an infinity.
 */
struct sg_buf;
typedef size_t (*sg_expr_sym_pos)(const sg_expr *sym, void *ctx);
bool sg_expr_shape(struct sg_buf *b, const sg_expr *e, sg_expr_sym_pos pos, void *ctx, unsigned *budget);

#endif
