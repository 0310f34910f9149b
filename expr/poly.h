/*
 * poly.h - an integer expression read as a polynomial over the caller's
 * variables, and a relation `p ⋈ 0` decided over a box by its sign: the
 * presolve's reasoning on products of dims (B*T*D == 4*B*T*(D//4) once
 * D = 4*_D, _D != 4*H*_D), which affine forms and intervals cannot read.
 * Library-internal, no state; see docs/presolve.md "Polynomials".
 */
#ifndef SG_EXPR_POLY_H
#define SG_EXPR_POLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr/expr.h"
#include "expr/interval.h"

#define SG_POLY_TERMS 24 /* monomials of one polynomial; more is "not read" */
#define SG_POLY_DEG 6    /* variable factors of one monomial (with repetition) */

/* c * v[0] * ... * v[n-1], the variables sorted (repeated for powers); n = 0 is a constant. */
typedef struct sg_mono {
    sg_int c;
    uint32_t v[SG_POLY_DEG];
    unsigned char n;
} sg_mono;

/* The sum of `n` monomials, each variable list at most once and no coefficient 0, in a
 * canonical order (equal polynomials are equal term by term). */
typedef struct sg_poly {
    int n;
    sg_mono t[SG_POLY_TERMS];
} sg_poly;

/*
 * `e` as a polynomial: integers, symbols (each read by `sym` as a linear form over the caller's
 * variables), sums, products, powers with a literal exponent, and Python's // and % (FloorDiv,
 * CleanDiv, CeilDiv, Mod, PythonMod) by a non-zero literal c when every non-constant coefficient
 * of the dividend is a multiple of c (then (c*m + k) // c = m + k // c exactly). Every operation
 * read is total, so the polynomial equals `e` at every integer point. False when `e` is anything
 * else, a coefficient overflows, a polynomial outgrows SG_POLY_TERMS / SG_POLY_DEG, or the walk
 * visits more than `work_max` nodes counted in `*work`.
 */
bool sg_expr_poly(const sg_expr *e, sg_expr_linear_sym sym, void *ctx, unsigned *work, unsigned work_max,
                  sg_poly *out, int depth);

/* f -= g; false on overflow or too many terms (f is then unspecified). */
bool sg_poly_sub(sg_poly *f, const sg_poly *g);

/* The range of variable `v` over the box; false when unknown. */
typedef bool (*sg_poly_dom)(void *ctx, size_t v, sg_interval *out);

/*
 * f ⋈ 0 (⋈ one of SG_EQ SG_NE SG_LT SG_LE SG_GT SG_GE) at every point of the box the variables
 * range over: TRUE (FALSE) when it holds (fails) at each point, else UNKNOWN. By the identity
 * f = 0; by the enclosure of f, a sum of monomial ranges; and, when every monomial shares a factor
 * m whose variables keep one sign on the box, by sign(m) times the enclosure of f / m
 * (D - 4*H*D = D*(1 - 4*H)). Exact arithmetic: an overflow gives UNKNOWN.
 */
sg_tri sg_poly_decide(sg_kind op, const sg_poly *f, sg_poly_dom dom, void *ctx);

#endif
