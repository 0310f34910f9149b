/*
 * num.h - exact rationals over sg_int for constant folding (expr.c) and
 * evaluation (eval.c). Every operation reports overflow instead of wrapping.
 * Solver-internal.
 */
#ifndef SG_EXPR_NUM_H
#define SG_EXPR_NUM_H

#include <stdbool.h>

#include "util/util.h"

/* num/den with den > 0 and gcd(num, den) == 1. */
typedef struct sg_rat {
    sg_int num;
    sg_int den;
} sg_rat;

static inline sg_rat sg_rat_int(sg_int v)
{
    sg_rat r = {v, 1};
    return r;
}

/* Reduce num/den (den != 0) into *r; false on overflow. */
static inline bool sg_rat_make(sg_rat *r, sg_int num, sg_int den)
{
    sg_int g;
    if (num == SG_INT_MIN || den == SG_INT_MIN)
        return false;
    if (den < 0) {
        num = -num;
        den = -den;
    }
    g = sg__gcd(num, den);
    if (g > 1) {
        num /= g;
        den /= g;
    }
    r->num = num;
    r->den = den;
    return true;
}

static inline bool sg_rat_add(sg_rat *r, sg_rat a, sg_rat b)
{
    sg_int x, y, d;
    if (a.den == 1 && b.den == 1) {
        if (!sg__add(a.num, b.num, &x))
            return false;
        *r = sg_rat_int(x);
        return true;
    }
    if (!sg__mul(a.num, b.den, &x) || !sg__mul(b.num, a.den, &y) || !sg__add(x, y, &x) ||
        !sg__mul(a.den, b.den, &d))
        return false;
    return sg_rat_make(r, x, d);
}

static inline bool sg_rat_neg(sg_rat *r, sg_rat a)
{
    if (a.num == SG_INT_MIN)
        return false;
    r->num = -a.num;
    r->den = a.den;
    return true;
}

static inline bool sg_rat_mul(sg_rat *r, sg_rat a, sg_rat b)
{
    sg_int x, d;
    if (a.den == 1 && b.den == 1) {
        if (!sg__mul(a.num, b.num, &x))
            return false;
        *r = sg_rat_int(x);
        return true;
    }
    if (!sg__mul(a.num, b.num, &x) || !sg__mul(a.den, b.den, &d))
        return false;
    return sg_rat_make(r, x, d);
}

/* a / b for b != 0. */
static inline bool sg_rat_div(sg_rat *r, sg_rat a, sg_rat b)
{
    sg_int x, d;
    if (!sg__mul(a.num, b.den, &x) || !sg__mul(a.den, b.num, &d))
        return false;
    return sg_rat_make(r, x, d);
}

static inline sg_int sg_rat_floor(sg_rat a)
{
    sg_int q;
    sg__floordiv(a.num, a.den, &q); /* den > 0: cannot overflow */
    return q;
}

static inline sg_int sg_rat_ceil(sg_rat a)
{
    sg_int q = sg_rat_floor(a), r;
    sg__pymod(a.num, a.den, &r); /* no product that could overflow near SG_INT_MIN */
    return r == 0 ? q : q + 1;
}

static inline sg_int sg_rat_trunc(sg_rat a) { return a.num >= 0 ? sg_rat_floor(a) : sg_rat_ceil(a); }

/* Exact three-way comparison without overflow (Euclid on the fractional parts). */
static inline int sg_rat_cmp(sg_rat a, sg_rat b)
{
    for (;;) {
        sg_int qa = sg_rat_floor(a), qb = sg_rat_floor(b);
        sg_int ra, rb;
        if (qa != qb)
            return qa < qb ? -1 : 1;
        sg__pymod(a.num, a.den, &ra); /* 0 <= ra < a.den, without overflow */
        sg__pymod(b.num, b.den, &rb);
        if (ra == 0 || rb == 0)
            return ra == rb ? 0 : (ra == 0 ? -1 : 1);
        /* ra/a.den < rb/b.den  <=>  b.den/rb < a.den/ra */
        {
            sg_rat na = {b.den, rb}, nb = {a.den, ra};
            a = na;
            b = nb;
        }
    }
}

/* base**k for k >= 0 by squaring; false on overflow. */
static inline bool sg_int_pow(sg_int *r, sg_int base, sg_int k)
{
    sg_int acc = 1;
    while (k > 0) {
        if (k & 1) {
            if (!sg__mul(acc, base, &acc))
                return false;
        }
        k >>= 1;
        if (k > 0 && !sg__mul(base, base, &base))
            return false;
    }
    *r = acc;
    return true;
}

#endif
