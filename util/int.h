/*
 * int.h - the integers shapegate computes with inside: signed 128 bits,
 * checked (every operation reports overflow instead of wrapping, so a result
 * is exact or an error), and their conversion to the API's sg_num
 * (shapegate/common.h). Library-internal: no public header mentions sg_int.
 */
#ifndef SG_UTIL_INT_H
#define SG_UTIL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "shapegate/common.h"
#include "shapegate/error.h"

__extension__ typedef __int128 sg_int;
__extension__ typedef unsigned __int128 sg_uint;

/* Largest and smallest sg_int. */
#define SG_INT_MAX ((sg_int)(((sg_uint)1 << 127) - 1))
#define SG_INT_MIN (-SG_INT_MAX - 1)

/* Longest decimal rendering of an sg_int, with sign and NUL. */
#define SG_INT_STRLEN 42

/* Write `v` in decimal into `buf` (at least SG_INT_STRLEN bytes); returns `buf`. */
char *sg_int_format(char buf[SG_INT_STRLEN], sg_int v);

/* Parse a decimal integer (optional leading '-', digits only) of `len` bytes: 0 and `*out`,
 * SG_EOVERFLOW when it does not fit, SG_EINVALID when the text is not a decimal integer. */
int sg_int_parse(sg_int *out, const char *text, size_t len);

/* An integer bound that may be infinite (`inf` = -1 for -int_oo, +1 for int_oo, 0 finite). */
typedef struct sg_bound {
    sg_int v;
    int inf;
} sg_bound;

/* The API's form of `v` / of bound `b`. */
sg_num sg__num(sg_int v);
sg_num sg__num_bound(sg_bound b);
/* `n` as an sg_int; false for an infinite one. */
bool sg__num_int(const sg_num *n, sg_int *out);

/* Checked 128-bit arithmetic: return false on overflow. */
static inline bool sg__add(sg_int a, sg_int b, sg_int *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool sg__sub(sg_int a, sg_int b, sg_int *r) { return !__builtin_sub_overflow(a, b, r); }
static inline bool sg__mul(sg_int a, sg_int b, sg_int *r) { return !__builtin_mul_overflow(a, b, r); }

/* Python's a // b and a % b for b != 0 (the caller checks b); false on overflow. */
bool sg__floordiv(sg_int a, sg_int b, sg_int *r);
bool sg__pymod(sg_int a, sg_int b, sg_int *r);
sg_int sg__gcd(sg_int a, sg_int b); /* non-negative; gcd(0, 0) = 0; arguments > SG_INT_MIN */

#endif
