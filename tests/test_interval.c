/*
 * test_interval.c - tests of the cheap pre-pass before Z3 (analysis/interval.c):
 * sound interval and congruence evaluation of guard expressions over a box.
 *
 * 1. Unit cases for every kind: the enclosure sg_interval_of computes, and the
 *    verdict sg_interval_holds gives, for hand-picked expressions and boxes.
 * 2. A soundness property test: thousands of random well-sorted expressions
 *    over every kind, each on a random small box (some sides half- or fully
 *    unbounded, some far from 0). Every point of a finite box is evaluated with
 *    sg_expr_eval (an unbounded side is sampled), and
 *      (a) every defined value lies in the computed enclosure, and a defined
 *          point never meets an "undefined everywhere" answer;
 *      (b) TRUE => the guard holds (is defined and true) at every point,
 *          FALSE => it holds at no point.
 *    Points where sg_expr_eval overflows 128 bits are skipped (their exact value
 *    is unknown to the test). Zero violations are allowed. On a box that is a
 *    single point the pass must also be exact (every verdict decided).
 * 3. The torch.export corpus (tests/corpus): every guard of every capture on
 *    the box of its traced ranges must not be FALSE (it held at the example
 *    sizes, which lie in the ranges), and on the point box of the example
 *    sizes it must be TRUE; the share decided TRUE on the ranges is printed.
 *
 * Environment:
 *   SG_INTERVAL_SEED   PRNG seed (decimal or 0x-hex); default 0x1e7e2024
 *   SG_INTERVAL_COUNT  number of random expressions (default 30000)
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expr/expr.h"
#include "trace/trace.h"
#include "expr/interval.h"
#include "test.h"

#define NSYM 4           /* symbols s0 .. s3 in the unit tests */
#define PROP_NSYM 3      /* symbols of the property test */
#define PROP_COUNT 30000 /* default number of random expressions (about 0.4 s; 3 s under ASan) */
#define PROP_SEED 0x1e7e2024u
#define MAX_DEPTH 5
#define MAX_SHOWN 20
#define MAX_SAMPLES 8    /* values per symbol side in the property test */

/* ---- unit-test helpers -------------------------------------------------------------- */

static struct unit_state {
    sg_pool *pool;
    sg_interval box[NSYM];
    char text[256];
} U;

/* Every symbol unbounded. */
static void box_reset(void)
{
    for (int i = 0; i < NSYM; i++) {
        U.box[i].lo = U.box[i].hi = 0;
        U.box[i].lo_inf = U.box[i].hi_inf = true;
    }
}

/* s<i> in [lo, hi]. */
static void box_set(int i, long long lo, long long hi)
{
    U.box[i].lo = lo;
    U.box[i].hi = hi;
    U.box[i].lo_inf = U.box[i].hi_inf = false;
}

/* s<i> in [lo, +inf). */
static void box_from(int i, long long lo)
{
    U.box[i].lo = lo;
    U.box[i].lo_inf = false;
    U.box[i].hi_inf = true;
}

/* Parse `text` in the unit pool; NULL (and a failed check) when it does not parse. */
static const sg_expr *parse(const char *text)
{
    const sg_expr *e = NULL;
    sg_error err = SG_ERROR_INIT;
    int rc = sg_expr_parse(&e, U.pool, text, strlen(text), &err);
    CHECK_MSG(rc == 0, "parse %s: %s", text, err.msg);
    return rc == 0 ? e : NULL;
}

/* Render an sg_int bound. */
static const char *bound_text(char *buf, sg_int v, bool inf, int sign)
{
    if (inf)
        return sign < 0 ? "-oo" : "oo";
    return sg_int_format(buf, v);
}

/* The enclosure of `text` on U.box as "[lo, hi]", or the status name. */
static const char *iv_text(const char *text)
{
    const sg_expr *e = parse(text);
    sg_interval iv;
    sg_error err = SG_ERROR_INIT;
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    int rc;
    if (!e)
        return "parse error";
    rc = sg_interval_of(&iv, U.pool, e, U.box, NSYM, &err);
    if (rc == SG_EUNDEFINED)
        return "undefined";
    if (rc)
        return sg_strerror(rc);
    snprintf(U.text, sizeof U.text, "[%s, %s]", bound_text(a, iv.lo, iv.lo_inf, -1),
             bound_text(b, iv.hi, iv.hi_inf, 1));
    return U.text;
}

/* "TRUE", "FALSE" or "UNKNOWN". */
static const char *tri_name(sg_tri t)
{
    return t == SG_TRI_TRUE ? "TRUE" : t == SG_TRI_FALSE ? "FALSE" : "UNKNOWN";
}

/* The verdict on `text` over U.box. */
static const char *holds(const char *text)
{
    const sg_expr *e = parse(text);
    if (!e)
        return "parse error";
    return tri_name(sg_interval_holds(U.pool, e, U.box, NSYM));
}

/* ---- unit cases ---------------------------------------------------------------------- */

/* Literals, symbols in and beyond the box, infinities, non-boolean guards. */
static void test_leaves(void)
{
    box_reset();
    box_set(0, 2, 5);
    CHECK_EQ_STR(iv_text("7"), "[7, 7]");
    CHECK_EQ_STR(iv_text("-12"), "[-12, -12]");
    CHECK_EQ_STR(iv_text("s0"), "[2, 5]");
    CHECK_EQ_STR(iv_text("s1"), "[-oo, oo]");
    CHECK_EQ_STR(iv_text("True"), "[1, 1]");
    CHECK_EQ_STR(iv_text("False"), "[0, 0]");
    CHECK_EQ_STR(holds("True"), "TRUE");
    CHECK_EQ_STR(holds("False"), "FALSE");
    CHECK_EQ_STR(iv_text("int_oo"), sg_strerror(SG_EUNSUPPORTED));
    CHECK_EQ_STR(holds("s0"), "UNKNOWN"); /* not a boolean */
    /* a symbol beyond the box is unbounded; a NULL box bounds nothing */
    {
        const sg_expr *e = parse("s3 + 1");
        sg_interval iv;
        CHECK_EQ_INT(sg_interval_of(&iv, U.pool, e, U.box, 2, NULL), 0);
        CHECK(iv.lo_inf && iv.hi_inf);
        e = parse("s0 >= 2");
        CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, 1), SG_TRI_TRUE);
        CHECK_EQ_INT(sg_interval_holds(U.pool, e, NULL, 0), SG_TRI_UNKNOWN);
        CHECK_EQ_INT(sg_interval_holds(U.pool, NULL, U.box, NSYM), SG_TRI_UNKNOWN);
    }
}

/* Sums and products, signs and infinities; real enclosures. */
static void test_add_mul(void)
{
    box_reset();
    box_set(0, 2, 5);
    box_set(1, -3, 4);
    CHECK_EQ_STR(iv_text("s0 + s1"), "[-1, 9]");
    CHECK_EQ_STR(iv_text("s0 - s1 + 10"), "[8, 18]");
    CHECK_EQ_STR(iv_text("3*s0"), "[6, 15]");
    CHECK_EQ_STR(iv_text("-2*s1"), "[-8, 6]");
    box_set(0, -2, 3);
    box_set(1, -5, 4);
    CHECK_EQ_STR(iv_text("s0*s1"), "[-15, 12]");
    box_set(0, 0, 0);
    box_reset();
    box_set(0, 0, 0);
    CHECK_EQ_STR(iv_text("s0*s1"), "[0, 0]"); /* 0 times anything */
    box_from(0, 1);
    box_set(1, 2, 3);
    CHECK_EQ_STR(iv_text("s0*s1"), "[2, oo]");
    box_set(1, -3, 2);
    CHECK_EQ_STR(iv_text("s0*s1"), "[-oo, oo]");
    box_set(1, 0, 2);
    CHECK_EQ_STR(iv_text("s0*s1"), "[0, oo]");
    /* reals: exact rational bounds inside, integer enclosure outside */
    box_reset();
    box_set(0, 1, 3);
    CHECK_EQ_STR(iv_text("s0/2"), "[0, 2]");    /* [1/2, 3/2] */
    CHECK_EQ_STR(holds("s0/2 < 2"), "TRUE");
    CHECK_EQ_STR(holds("s0/2 > 1/2"), "UNKNOWN");
    CHECK_EQ_STR(holds("s0/2 >= 1/2"), "TRUE");
    CHECK_EQ_STR(holds("2*s0/3 > 1/2"), "TRUE"); /* >= 2/3 */
}

/* Pow with a literal exponent, PowByNatural with its definedness. */
static void test_pow(void)
{
    box_reset();
    box_set(0, -3, 2);
    CHECK_EQ_STR(iv_text("s0**2"), "[0, 9]");
    CHECK_EQ_STR(iv_text("s0**3"), "[-27, 8]");
    box_set(0, -5, -2);
    CHECK_EQ_STR(iv_text("s0**2"), "[4, 25]");
    CHECK_EQ_STR(iv_text("s0**3"), "[-125, -8]");
    box_from(0, 2);
    CHECK_EQ_STR(iv_text("s0**2"), "[4, oo]");
    /* PowByNatural: defined for exponents >= 0 */
    box_reset();
    box_set(0, 2, 3);
    box_set(1, 0, 3);
    CHECK_EQ_STR(iv_text("PowByNatural(s0, s1)"), "[1, 27]");
    CHECK_EQ_STR(holds("PowByNatural(s0, s1) >= 1"), "TRUE");
    box_set(1, -1, 3);
    CHECK_EQ_STR(holds("PowByNatural(s0, s1) >= 1"), "UNKNOWN"); /* undefined at s1 = -1 */
    box_set(1, -3, -1);
    CHECK_EQ_STR(iv_text("PowByNatural(s0, s1)"), "undefined");
    CHECK_EQ_STR(holds("PowByNatural(s0, s1) >= 1"), "FALSE");
    box_set(0, -2, 2);
    box_set(1, 3, 3);
    CHECK_EQ_STR(iv_text("PowByNatural(s0, s1)"), "[-8, 8]");
    box_set(1, 0, 4);
    CHECK_EQ_STR(iv_text("PowByNatural(s0, s1)"), "[-16, 16]");
    box_set(0, 0, 0);
    box_set(1, 0, 0);
    CHECK_EQ_STR(iv_text("PowByNatural(s0, s1)"), "[1, 1]"); /* 0**0 = 1 */
}

/* FloorDiv, CleanDiv, CeilDiv, ModularIndexing, IntTrueDiv; divisors containing 0. */
static void test_division(void)
{
    box_reset();
    box_set(0, -7, 8);
    CHECK_EQ_STR(iv_text("s0//3"), "[-3, 2]");
    CHECK_EQ_STR(iv_text("s0//(-3)"), "[-3, 2]");
    CHECK_EQ_STR(iv_text("CeilDiv(s0, 4)"), "[-1, 2]");
    CHECK_EQ_STR(iv_text("CleanDiv(s0, 2)"), "[-4, 4]");
    box_set(0, 1, 9);
    CHECK_EQ_STR(iv_text("CeilDiv(s0, 4)"), "[1, 3]");
    box_set(0, 10, 20);
    box_set(1, 2, 5);
    CHECK_EQ_STR(iv_text("s0//s1"), "[2, 10]");
    box_from(1, 1);
    CHECK_EQ_STR(iv_text("s0//s1"), "[0, 20]");
    box_set(0, -20, -10);
    CHECK_EQ_STR(iv_text("s0//s1"), "[-20, -1]");
    /* a divisor range containing 0: possibly undefined, the rest still enclosed */
    box_set(0, 6, 6);
    box_set(1, -2, 3);
    CHECK_EQ_STR(iv_text("s0//s1"), "[-6, 6]");
    CHECK_EQ_STR(holds("s0//s1 <= 6"), "UNKNOWN");
    box_set(1, 0, 0);
    CHECK_EQ_STR(iv_text("s0//s1"), "undefined");
    CHECK_EQ_STR(holds("s0//s1 <= 6"), "FALSE");
    /* ModularIndexing(a, b, c) = (a // b) % c */
    box_set(0, 0, 100);
    CHECK_EQ_STR(iv_text("ModularIndexing(s0, 2, 4)"), "[0, 3]");
    box_set(0, 8, 9);
    CHECK_EQ_STR(iv_text("ModularIndexing(s0, 2, 4)"), "[0, 0]");
    box_set(1, 0, 1);
    CHECK_EQ_STR(holds("ModularIndexing(s0, 2, s1) >= 0"), "UNKNOWN");
    /* IntTrueDiv */
    box_set(0, 1, 7);
    box_set(1, 0, 2);
    CHECK_EQ_STR(iv_text("IntTrueDiv(s0, s1)"), "[0, 7]"); /* [1/2, 7] */
    CHECK_EQ_STR(holds("IntTrueDiv(s0, s1) > 0"), "UNKNOWN");
    box_set(1, 1, 2);
    CHECK_EQ_STR(holds("IntTrueDiv(s0, s1) > 0"), "TRUE");
    box_set(1, -2, -1);
    CHECK_EQ_STR(iv_text("IntTrueDiv(s0, s1)"), "[-7, 0]"); /* [-7, -1/2] */
    CHECK_EQ_STR(holds("IntTrueDiv(s0, s1) < 0"), "TRUE");
}

/* Mod and PythonMod: constant, narrow, negative and varying divisors. */
static void test_mod(void)
{
    box_reset();
    box_set(0, 0, 100);
    CHECK_EQ_STR(iv_text("Mod(s0, 8)"), "[0, 7]");
    box_set(0, 9, 12);
    CHECK_EQ_STR(iv_text("Mod(s0, 8)"), "[1, 4]");
    CHECK_EQ_STR(iv_text("s0 % 8"), "[1, 4]");
    box_set(0, 2, 5);
    CHECK_EQ_STR(iv_text("Mod(s0, 8)"), "[2, 5]");
    box_set(0, -7, -5);
    CHECK_EQ_STR(iv_text("Mod(s0, 8)"), "[1, 3]");
    CHECK_EQ_STR(iv_text("PythonMod(s0, -3)"), "[-2, 0]");
    box_reset();
    CHECK_EQ_STR(iv_text("Mod(s0, 8)"), "[0, 7]");
    CHECK_EQ_STR(iv_text("Mod(s0, -8)"), "[-7, 0]");
    box_set(1, 3, 10);
    CHECK_EQ_STR(iv_text("Mod(s0, s1)"), "[0, 9]");
    box_set(0, 0, 4);
    CHECK_EQ_STR(iv_text("Mod(s0, s1)"), "[0, 4]");
    box_set(0, 0, 2);
    CHECK_EQ_STR(iv_text("Mod(s0, s1)"), "[0, 2]"); /* below every divisor: the identity */
    box_set(1, -4, 4);
    CHECK_EQ_STR(iv_text("Mod(s0, s1)"), "[-3, 2]");
    CHECK_EQ_STR(holds("Eq(Mod(s0, s1), 0) | (s0 >= 0)"), "UNKNOWN");
    box_set(1, 0, 0);
    CHECK_EQ_STR(iv_text("Mod(s0, s1)"), "undefined");
    CHECK_EQ_STR(holds("Eq(Mod(s0, s1), 0)"), "FALSE");
    CHECK_EQ_STR(holds("Ne(Mod(s0, s1), 0)"), "FALSE");
}

/* FloorToInt, CeilToInt, TruncToInt of real quotients. */
static void test_rounding(void)
{
    box_reset();
    box_set(0, 1, 7);
    CHECK_EQ_STR(iv_text("FloorToInt(IntTrueDiv(s0, 3))"), "[0, 2]");
    CHECK_EQ_STR(iv_text("CeilToInt(IntTrueDiv(s0, 3))"), "[1, 3]");
    CHECK_EQ_STR(iv_text("TruncToInt(IntTrueDiv(s0, 3))"), "[0, 2]");
    box_set(0, -7, -1);
    CHECK_EQ_STR(iv_text("TruncToInt(IntTrueDiv(s0, 3))"), "[-2, 0]");
    CHECK_EQ_STR(iv_text("FloorToInt(IntTrueDiv(s0, 3))"), "[-3, -1]");
    CHECK_EQ_STR(iv_text("CeilToInt(IntTrueDiv(s0, 3))"), "[-2, 0]");
    CHECK_EQ_STR(iv_text("FloorToInt(s0/2 + 1/3)"), "[-4, -1]");
}

/* Max, Min, Where, Piecewise (with its definedness), Identity. */
static void test_choice(void)
{
    box_reset();
    box_set(0, 2, 5);
    box_set(1, -3, 4);
    CHECK_EQ_STR(iv_text("Max(s0, s1)"), "[2, 5]");
    CHECK_EQ_STR(iv_text("Min(s0, s1)"), "[-3, 4]");
    CHECK_EQ_STR(iv_text("Max(s0, s1, 7)"), "[7, 7]");
    CHECK_EQ_STR(iv_text("Min(s0, s1, -7)"), "[-7, -7]");
    CHECK_EQ_STR(iv_text("Where(s0 > 3, s1, 10)"), "[-3, 10]");
    CHECK_EQ_STR(iv_text("Where(s0 > 1, s1, 10)"), "[-3, 4]");
    CHECK_EQ_STR(iv_text("Where(s0 > 5, s1, 10)"), "[10, 10]");
    CHECK_EQ_STR(iv_text("Piecewise((1, s1 > 0), (2, True))"), "[1, 2]");
    CHECK_EQ_STR(iv_text("Piecewise((1, s0 > 0), (2, True))"), "[1, 1]");
    CHECK_EQ_STR(iv_text("Piecewise((1, s0 > 9), (2, s1 > 0))"), "[2, 2]");
    CHECK_EQ_STR(holds("Piecewise((1, s0 > 9), (2, s1 > 0)) >= 2"), "UNKNOWN"); /* no branch at s1 <= 0 */
    CHECK_EQ_STR(holds("Piecewise((1, s1 > 0), (2, True)) >= 1"), "TRUE");
    box_set(1, -3, 0);
    CHECK_EQ_STR(iv_text("Piecewise((1, s0 > 9), (2, s1 > 0))"), "undefined");
    CHECK_EQ_STR(iv_text("Identity(s0)"), "[2, 5]");
}

/* Relations and connectives, three-valued. */
static void test_relations(void)
{
    box_reset();
    box_set(0, 2, 10);
    box_set(1, 11, 20);
    CHECK_EQ_STR(holds("s0 >= 2"), "TRUE");
    CHECK_EQ_STR(holds("s0 > 2"), "UNKNOWN");
    CHECK_EQ_STR(holds("s0 > 10"), "FALSE");
    CHECK_EQ_STR(holds("s0 <= 10"), "TRUE");
    CHECK_EQ_STR(holds("s0 < 10"), "UNKNOWN");
    CHECK_EQ_STR(holds("s0 < s1"), "TRUE");
    CHECK_EQ_STR(holds("s0 >= s1"), "FALSE");
    CHECK_EQ_STR(holds("Eq(s0, s1)"), "FALSE");
    CHECK_EQ_STR(holds("Ne(s0, s1)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(s0, 5)"), "UNKNOWN");
    CHECK_EQ_STR(holds("(s0 >= 2) & (s1 <= 20)"), "TRUE");
    CHECK_EQ_STR(holds("(s0 >= 2) & (s1 < 20)"), "UNKNOWN");
    CHECK_EQ_STR(holds("(s0 > 10) & (s1 < 20)"), "FALSE");
    CHECK_EQ_STR(holds("(s0 > 10) | (s1 < 20)"), "UNKNOWN");
    CHECK_EQ_STR(holds("(s0 > 10) | (s1 <= 20)"), "TRUE");
    CHECK_EQ_STR(holds("(s0 > 10) | (s1 > 20)"), "FALSE");
    CHECK_EQ_STR(holds("~(s0 > 10)"), "TRUE");
    CHECK_EQ_STR(holds("Not(Eq(s0, 5))"), "UNKNOWN");
    CHECK_EQ_STR(holds("Eq(s0 > 1, s1 > 1)"), "TRUE");
    CHECK_EQ_STR(holds("Ne(s0 > 1, s1 > 1)"), "FALSE");
    CHECK_EQ_STR(holds("Eq(s0 > 5, s1 > 1)"), "UNKNOWN");
    box_set(0, 7, 7);
    box_set(1, 7, 7);
    CHECK_EQ_STR(holds("Eq(s0, s1)"), "TRUE");
    /* the Python printer's form */
    box_set(0, 2, 10);
    CHECK_EQ_STR(holds("2 <= s0 and s0 <= 16"), "TRUE");
    /* mixed int/real comparisons are exact */
    box_set(0, 1, 1);
    CHECK_EQ_STR(holds("s0/3 < 1/2"), "TRUE");
    CHECK_EQ_STR(holds("Eq(s0/3, 1/3)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(IntTrueDiv(s0, 3), 1/3)"), "TRUE");
}

/* Bounds past 128 bits widen, never wrap. */
static void test_overflow(void)
{
    const sg_expr *e, *big;
    sg_interval iv;
    box_reset();
    /* bounds past 128 bits widen to infinity, they never wrap */
    U.box[0].lo = U.box[0].hi = (sg_int)1 << 100;
    U.box[0].lo_inf = U.box[0].hi_inf = false;
    U.box[1] = U.box[0];
    CHECK_EQ_STR(iv_text("s0*s1"), "[170141183460469231731687303715884105727, oo]");
    CHECK_EQ_STR(holds("s0*s1 > 0"), "TRUE");
    CHECK_EQ_STR(holds("s0*s1 < 0"), "FALSE");
    CHECK_EQ_STR(iv_text("-s0*s1"), "[-oo, -170141183460469231731687303715884105728]");
    CHECK_EQ_STR(iv_text("s0**2"), "[170141183460469231731687303715884105727, oo]");
    CHECK_EQ_STR(iv_text("s0/3*s1"), "[0, oo]"); /* a rational overflow knows only its sign */
    CHECK_EQ_STR(iv_text("s0 + s1"), "[2535301200456458802993406410752, 2535301200456458802993406410752]");
    U.box[0].lo = U.box[0].hi = (sg_int)1 << 126;
    U.box[1] = U.box[0];
    CHECK_EQ_STR(iv_text("s0 + s1"), "[170141183460469231731687303715884105727, oo]");
    CHECK_EQ_STR(iv_text("-s0 - s1"), "[-170141183460469231731687303715884105728, -170141183460469231731687303715884105728]");
    CHECK_EQ_STR(iv_text("-s0 - s1 - 1"), "[-oo, -170141183460469231731687303715884105728]");
    CHECK_EQ_STR(holds("s0 + s1 > 0"), "TRUE");
    CHECK_EQ_STR(iv_text("Mod(s0*s1, 8)"), "[0, 7]");
    /* the extreme 128-bit values */
    U.box[0].lo = SG_INT_MIN;
    U.box[0].hi = SG_INT_MAX;
    e = parse("-s0"); /* -SG_INT_MIN is past the top */
    CHECK(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL) == 0 && iv.lo == -SG_INT_MAX && iv.hi_inf);
    e = parse("s0//s1");
    box_set(1, -1, -1);
    CHECK(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL) == 0 && iv.lo == -SG_INT_MAX && iv.hi_inf);
    U.box[0].lo = U.box[0].hi = SG_INT_MIN;
    e = parse("Mod(s0, 3)");
    CHECK(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL) == 0 && iv.lo == 1 && iv.hi == 1);
    e = parse("s0//3 + 1");
    CHECK(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL) == 0 && !iv.lo_inf);
    e = parse("IntTrueDiv(s0 + 1, 3) > -56713727820156410577229101238628035243");
    CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, NSYM), SG_TRI_TRUE);
    e = parse("IntTrueDiv(s0 + 1, 3) > -56713727820156410577229101238628035242");
    CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, NSYM), SG_TRI_FALSE);
    big = sg_expr_int(U.pool, SG_INT_MAX);
    e = sg_expr_2(U.pool, SG_LT, sg_expr_2(U.pool, SG_MUL, big, sg_pool_symbol(U.pool, 1)), big);
    box_set(1, 2, 3);
    CHECK(e != NULL);
    CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, NSYM), SG_TRI_FALSE);
    box_set(1, -3, -2);
    CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, NSYM), SG_TRI_TRUE);
}

/* Congruence reasoning: Mod of linear forms, parity, exact points. */
static void test_congruence(void)
{
    box_reset();
    /* holds for every s0 although s0 is unbounded */
    CHECK_EQ_STR(holds("Eq(Mod(4*s0 + 2, 2), 0)"), "TRUE");
    CHECK_EQ_STR(iv_text("Mod(6*s0 + 4, 3)"), "[1, 1]");
    CHECK_EQ_STR(holds("Eq(Mod(2*s0, 4), 1)"), "FALSE");
    CHECK_EQ_STR(iv_text("Mod(2*s0, 4)"), "[0, 2]");
    CHECK_EQ_STR(holds("Eq(2*s0, 2*s1 + 1)"), "FALSE");
    CHECK_EQ_STR(holds("Ne(2*s0, 2*s1 + 1)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod(s0*s1*6, 3), 0)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod((4*s0 + 8)//2, 2), 0)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod((2*s0 + 1)**2, 4), 1)"), "UNKNOWN"); /* needs more than a congruence */
    CHECK_EQ_STR(holds("Eq(Mod((4*s0 + 1)**2, 4), 1)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod(Max(4*s0, 4*s1 + 8), 4), 0)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod(Where(s2 > 0, 6*s0, 9*s1), 3), 0)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod(s0, 3), 0)"), "UNKNOWN");
    /* a fixed symbol makes everything exact */
    box_set(0, 5, 5);
    CHECK_EQ_STR(holds("Eq(Mod(3*s0 + 1, 8), 0)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(Mod(3*s0 + 2, 8), 0)"), "FALSE");
    CHECK_EQ_STR(holds("Eq(Mod(3*s0*s1 + 1, 8), 0)"), "UNKNOWN");
    /* a congruence tightens bounds: even values in [1, 9] */
    box_set(0, 1, 4);
    CHECK_EQ_STR(iv_text("2*s0 + 1"), "[3, 9]");
    CHECK_EQ_STR(iv_text("ModularIndexing(8*s0, 4, 2)"), "[0, 0]");
}

/* Relations decided on the difference of their sides. */
static void test_difference(void)
{
    box_reset();
    box_set(0, 2, 10);
    box_set(1, 0, 100);
    /* the shared term cancels: 3*s0 - (2*s0 + 1) = s0 - 1 >= 1 */
    CHECK_EQ_STR(holds("3*s0 >= 2*s0 + 1"), "TRUE");
    CHECK_EQ_STR(holds("3*s0 < 2*s0 + 1"), "FALSE");
    CHECK_EQ_STR(holds("s0 + s1 <= s1 + 10"), "TRUE");
    CHECK_EQ_STR(holds("s0 + s1 < s1 + 10"), "UNKNOWN");
    CHECK_EQ_STR(holds("2*s0*s1 >= s0*s1"), "TRUE");
    CHECK_EQ_STR(holds("Ne(3*s0 + s1, 2*s0 + s1)"), "TRUE");
    CHECK_EQ_STR(holds("Eq(2*s0 + s1, s1 + 2*s0 + 0)"), "TRUE"); /* folded by the constructor */
}

/* An empty box entry is an error (UNKNOWN for holds) only where it is used. */
static void test_empty_box(void)
{
    const sg_expr *e;
    sg_interval iv;
    sg_error err = SG_ERROR_INIT;
    box_reset();
    box_set(0, 5, 4);
    e = parse("s0 + 1");
    CHECK_EQ_INT(sg_interval_of(&iv, U.pool, e, U.box, NSYM, &err), SG_EINVALID);
    CHECK(strstr(err.msg, "s0") != NULL);
    CHECK_EQ_STR(holds("s0 >= 0"), "UNKNOWN");
    CHECK_EQ_STR(holds("s1 >= 0"), "UNKNOWN"); /* the empty side is not looked at */
    CHECK_EQ_INT(sg_interval_of(NULL, U.pool, e, U.box, NSYM, NULL), SG_EINVALID);
}

/* A chain of depth close to SG_EXPR_MAX_DEPTH: memoised, no stack trouble. */
static void test_deep(void)
{
    const sg_expr *e = sg_pool_symbol(U.pool, 0), *s1 = sg_pool_symbol(U.pool, 1);
    sg_interval iv;
    int i;
    box_reset();
    box_set(0, 0, 6);
    box_set(1, 0, 1);
    for (i = 0; i < 500 && e; i++)
        e = sg_expr_2(U.pool, SG_MOD, sg_expr_2(U.pool, SG_ADD, e, i % 2 ? s1 : sg_expr_int(U.pool, 1)),
                      sg_expr_int(U.pool, 7));
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK(sg_expr_depth(e) >= 1000);
    CHECK_EQ_INT(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL), 0);
    CHECK(!iv.lo_inf && !iv.hi_inf && iv.lo >= 0 && iv.hi <= 6);
    e = sg_expr_2(U.pool, SG_LE, e, sg_expr_int(U.pool, 6));
    CHECK_EQ_INT(sg_interval_holds(U.pool, e, U.box, NSYM), SG_TRI_TRUE);
    /* a wide DAG with heavy sharing stays linear */
    e = sg_pool_symbol(U.pool, 0);
    for (i = 0; i < 200 && e; i++)
        e = sg_expr_2(U.pool, SG_MAX, sg_expr_2(U.pool, SG_ADD, e, s1), sg_expr_2(U.pool, SG_MUL, e, s1));
    CHECK(e != NULL);
    CHECK_EQ_INT(sg_interval_of(&iv, U.pool, e, U.box, NSYM, NULL), 0);
}

/* ---- the soundness property test ------------------------------------------------------- */

typedef struct rng {
    uint64_t state;
} rng;

/* splitmix64: the next 64 random bits. */
static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi] (small range). */
static int rng_range(rng *r, int lo, int hi)
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* True with probability percent/100. */
static bool rng_chance(rng *r, int percent)
{
    return (int)(rng_next(r) % 100u) < percent;
}

typedef enum want { W_INT, W_REAL, W_BOOL } want;

/* The property test's generator, current box (with the values evaluated per side) and counts. */
static struct prop_state {
    sg_pool *pool;
    rng r;
    const sg_expr *sym[PROP_NSYM];
    sg_interval box[PROP_NSYM];
    sg_int samples[PROP_NSYM][MAX_SAMPLES];
    int nsamples[PROP_NSYM];
    unsigned long exprs, points, overflow_points, violations, shown, point_boxes;
    unsigned long verdict[3], undefined_everywhere, finite_enclosures;
    bool kinds_seen[SG_KIND_COUNT];
} Q;

static const sg_expr *gen_expr(want w, int depth);

/* A small integer literal. */
static const sg_expr *lit(int lo, int hi)
{
    return sg_expr_int(Q.pool, rng_range(&Q.r, lo, hi));
}

/* A leaf: a symbol, a linear a*s + b (for congruences and cancellations), a literal. */
static const sg_expr *gen_leaf(want w)
{
    const sg_expr *s = Q.sym[rng_range(&Q.r, 0, PROP_NSYM - 1)];
    int p = rng_range(&Q.r, 0, 99), q;
    if (w == W_BOOL)
        return sg_expr_bool(Q.pool, rng_chance(&Q.r, 50));
    if (w == W_REAL) {
        q = rng_range(&Q.r, 2, 5);
        if (p < 50)
            return sg_expr_2(Q.pool, SG_TRUEDIV, s, sg_expr_int(Q.pool, q));
        return sg_expr_rational(Q.pool, rng_range(&Q.r, -9, 9), q);
    }
    if (p < 50)
        return s;
    if (p < 75)
        return sg_expr_2(Q.pool, SG_ADD, sg_expr_2(Q.pool, SG_MUL, lit(-4, 4), s), lit(-5, 5));
    return lit(-8, 8);
}

/* A depth for an argument of a node at `depth`. */
static int sub(int depth)
{
    return depth <= 2 || rng_chance(&Q.r, 60) ? depth - 1 : rng_range(&Q.r, 1, depth - 1);
}

/* A divisor: often a small literal (zero included: the constructor refuses a constant
 * division by zero and the node is drawn again), else any integer. */
static const sg_expr *gen_divisor(int depth)
{
    if (rng_chance(&Q.r, 45))
        return lit(-6, 6);
    return gen_expr(W_INT, sub(depth));
}

/* A number: mostly an integer, sometimes a real. */
static const sg_expr *gen_num(int depth)
{
    return gen_expr(rng_chance(&Q.r, 80) ? W_INT : W_REAL, depth);
}

/* One attempt at a node; NULL when a constructor refuses. */
static const sg_expr *gen_once(want w, int depth)
{
    static const sg_kind ik[] = {SG_ADD, SG_MUL, SG_POW, SG_POWNAT, SG_FLOORDIV, SG_CLEANDIV, SG_CEILDIV,
                                 SG_MOD, SG_PYMOD, SG_MOD, SG_MODIDX, SG_TRUNC, SG_FLOOR, SG_CEIL, SG_MAX,
                                 SG_MIN, SG_WHERE, SG_PIECEWISE, SG_IDENTITY};
    static const sg_kind rk[] = {SG_ADD, SG_MUL, SG_POW, SG_TRUEDIV, SG_TRUEDIV, SG_MAX, SG_MIN, SG_WHERE,
                                 SG_PIECEWISE};
    static const sg_kind bk[] = {SG_EQ, SG_EQ, SG_NE, SG_LT, SG_LE, SG_GT, SG_GE, SG_AND, SG_OR, SG_NOT,
                                 SG_WHERE, SG_PIECEWISE, SG_IDENTITY};
    const sg_expr *a[8];
    size_t n = 0, i;
    sg_kind k;

    if (depth <= 1 || (w != W_BOOL && rng_chance(&Q.r, 12)))
        return gen_leaf(w);
    if (w == W_INT)
        k = ik[rng_range(&Q.r, 0, (int)(sizeof ik / sizeof *ik) - 1)];
    else if (w == W_REAL)
        k = rk[rng_range(&Q.r, 0, (int)(sizeof rk / sizeof *rk) - 1)];
    else
        k = bk[rng_range(&Q.r, 0, (int)(sizeof bk / sizeof *bk) - 1)];

    switch (k) {
    case SG_ADD: case SG_MUL: case SG_MAX: case SG_MIN:
        n = (size_t)rng_range(&Q.r, 2, 3);
        for (i = 0; i < n; i++)
            a[i] = w == W_INT ? gen_expr(W_INT, sub(depth)) : gen_num(sub(depth));
        if (w == W_REAL)
            a[rng_range(&Q.r, 0, (int)n - 1)] = gen_expr(W_REAL, sub(depth));
        break;
    case SG_POW:
        a[n++] = gen_expr(w, sub(depth));
        a[n++] = lit(2, 3);
        break;
    case SG_POWNAT:
        a[n++] = gen_expr(W_INT, depth - 1 < 2 ? depth - 1 : 2);
        a[n++] = rng_chance(&Q.r, 40) ? lit(0, 4) : gen_expr(W_INT, depth - 1 < 2 ? depth - 1 : 2);
        break;
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_CEILDIV: case SG_MOD: case SG_PYMOD:
        a[n++] = gen_expr(W_INT, sub(depth));
        a[n++] = gen_divisor(depth);
        break;
    case SG_MODIDX:
        a[n++] = gen_expr(W_INT, sub(depth));
        a[n++] = gen_divisor(depth);
        a[n++] = gen_divisor(depth);
        break;
    case SG_TRUEDIV:
        a[n++] = gen_num(sub(depth));
        a[n++] = rng_chance(&Q.r, 40) ? gen_divisor(depth) : gen_num(sub(depth));
        break;
    case SG_TRUNC: case SG_FLOOR: case SG_CEIL:
        a[n++] = gen_expr(W_REAL, sub(depth));
        break;
    case SG_WHERE:
        a[n++] = gen_expr(W_BOOL, sub(depth));
        a[n++] = gen_expr(w, sub(depth));
        a[n++] = gen_expr(w, sub(depth));
        break;
    case SG_PIECEWISE: {
        size_t pairs = (size_t)rng_range(&Q.r, 1, 3);
        for (i = 0; i < pairs; i++) {
            a[n++] = gen_expr(w, sub(depth));
            a[n++] = i + 1 == pairs && rng_chance(&Q.r, 50) ? sg_expr_bool(Q.pool, true)
                                                            : gen_expr(W_BOOL, sub(depth));
        }
        break;
    }
    case SG_IDENTITY:
        a[n++] = gen_expr(w, sub(depth));
        break;
    case SG_EQ: case SG_NE:
        if (rng_chance(&Q.r, 15)) {
            a[n++] = gen_expr(W_BOOL, sub(depth));
            a[n++] = gen_expr(W_BOOL, sub(depth));
            break;
        }
        if (rng_chance(&Q.r, 30)) { /* Eq(Mod(x, c), r): the congruence path */
            a[n++] = sg_expr_2(Q.pool, SG_MOD, gen_expr(W_INT, sub(depth)), lit(2, 8));
            a[n++] = lit(0, 3);
            break;
        }
        /* fall through */
    case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        a[n++] = gen_num(sub(depth));
        a[n++] = gen_num(sub(depth));
        if (rng_chance(&Q.r, 20)) /* a shared term on both sides: the difference path */
            a[1] = sg_expr_2(Q.pool, SG_ADD, a[1], sg_expr_2(Q.pool, SG_MUL, lit(-3, 3), a[0]));
        break;
    case SG_AND: case SG_OR:
        n = (size_t)rng_range(&Q.r, 2, 3);
        for (i = 0; i < n; i++)
            a[i] = gen_expr(W_BOOL, sub(depth));
        break;
    default: /* SG_NOT */
        a[n++] = gen_expr(W_BOOL, sub(depth));
        break;
    }
    return sg_expr_apply(Q.pool, k, a, n);
}

/* A random expression of sort `w` (an integer where a number of either sort came out). */
static const sg_expr *gen_expr(want w, int depth)
{
    for (int attempt = 0; attempt < 8; attempt++) {
        const sg_expr *e = gen_once(w, depth);
        if (e && (w != W_INT || sg_expr_sort(e) == SG_SORT_INT) &&
            (w != W_BOOL || sg_expr_sort(e) == SG_SORT_BOOL) && (w != W_REAL || sg_expr_sort(e) != SG_SORT_BOOL))
            return e;
        sg_pool_clear_error(Q.pool);
    }
    return w == W_BOOL ? sg_expr_bool(Q.pool, true) : Q.sym[0];
}

/* A random box side and the values of it the test evaluates (all of a finite side). */
static void gen_side(int i)
{
    static const int shifts[] = {31, 40, 62, 100};
    sg_interval *b = &Q.box[i];
    sg_int *s = Q.samples[i];
    int p = rng_range(&Q.r, 0, 99), w, k = 0;
    sg_int lo;
    b->lo_inf = b->hi_inf = false;
    if (p < 80) { /* finite, all points evaluated */
        if (p < 12)
            lo = (sg_int)1 << shifts[rng_range(&Q.r, 0, 3)];
        else if (p < 20)
            lo = rng_range(&Q.r, 0, 3);
        else
            lo = rng_range(&Q.r, -7, 7);
        if (p < 8)
            lo = -lo;
        w = rng_chance(&Q.r, 15) ? 0 : rng_range(&Q.r, 1, 5);
        b->lo = lo;
        b->hi = lo + w;
        for (k = 0; k <= w; k++)
            s[k] = lo + k;
    } else if (p < 92) { /* [lo, +inf): sampled */
        lo = rng_range(&Q.r, -3, 3);
        b->lo = lo;
        b->hi_inf = true;
        for (k = 0; k < 4; k++)
            s[k] = lo + k;
        s[k++] = lo + 17;
        s[k++] = lo + 1000003;
        s[k++] = lo + ((sg_int)1 << 40);
    } else { /* unbounded: sampled */
        static const int vals[] = {-1000003, -9, -2, -1, 0, 1, 2, 1000003};
        b->lo_inf = true;
        b->hi_inf = true;
        for (k = 0; k < 8; k++)
            s[k] = vals[k];
    }
    Q.nsamples[i] = k;
}

/* The text of a box for messages. */
static void box_text(char *buf, size_t cap)
{
    size_t used = 0;
    for (int i = 0; i < PROP_NSYM && used < cap; i++) {
        char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
        int n = snprintf(buf + used, cap - used, "%ss%d in [%s, %s]", i ? ", " : "", i,
                         bound_text(a, Q.box[i].lo, Q.box[i].lo_inf, -1),
                         bound_text(b, Q.box[i].hi, Q.box[i].hi_inf, 1));
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Report one violation (the first MAX_SHOWN in full). */
static void violation(const sg_expr *e, const sg_int *pt, const char *what)
{
    char *t = NULL, bx[512];
    char v0[SG_INT_STRLEN], v1[SG_INT_STRLEN], v2[SG_INT_STRLEN];
    Q.violations++;
    if (Q.shown++ >= MAX_SHOWN)
        return;
    sg_expr_print(&t, e, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
    box_text(bx, sizeof bx);
    fprintf(stderr, "test_interval: %s\n    expr: %s\n    box: %s\n    point: s0=%s s1=%s s2=%s\n", what,
            t ? t : "?", bx, sg_int_format(v0, pt[0]), sg_int_format(v1, pt[1]), sg_int_format(v2, pt[2]));
    sg_free(t);
}

/* Is the value v inside the enclosure iv? (An unverifiable case counts as inside.) */
static bool value_inside(const sg_value *v, const sg_interval *iv)
{
    sg_int num = v->num, den = v->kind == SG_VAL_REAL ? v->den : 1, t;
    if (!iv->lo_inf && (__builtin_mul_overflow(iv->lo, den, &t) ? false : t > num))
        return false;
    if (!iv->hi_inf && (__builtin_mul_overflow(iv->hi, den, &t) ? false : t < num))
        return false;
    return true;
}

/* Mark the kinds in e. */
static void mark(const sg_expr *e)
{
    Q.kinds_seen[sg_expr_kind(e)] = true;
    for (size_t i = 0; i < sg_expr_nargs(e); i++)
        mark(sg_expr_arg(e, i));
}

/* Check one expression against every (sampled) point of the current box. */
static void check_expr(const sg_expr *e)
{
    sg_interval iv;
    sg_error err = SG_ERROR_INIT;
    int irc = sg_interval_of(&iv, Q.pool, e, Q.box, PROP_NSYM, &err);
    bool is_bool = sg_expr_sort(e) == SG_SORT_BOOL;
    sg_tri tri = is_bool ? sg_interval_holds(Q.pool, e, Q.box, PROP_NSYM) : SG_TRI_UNKNOWN;
    int idx[PROP_NSYM] = {0};
    sg_int pt[PROP_NSYM];
    bool point_box = true;

    for (int i = 0; i < PROP_NSYM; i++)
        point_box &= Q.nsamples[i] == 1 && !Q.box[i].lo_inf && !Q.box[i].hi_inf;
    Q.point_boxes += point_box;
    Q.exprs++;
    mark(e);
    if (is_bool)
        Q.verdict[tri]++;
    if (irc == SG_EUNDEFINED)
        Q.undefined_everywhere++;
    else if (irc == 0 && !iv.lo_inf && !iv.hi_inf)
        Q.finite_enclosures++;
    if (irc != 0 && irc != SG_EUNDEFINED && irc != SG_EUNSUPPORTED) {
        violation(e, pt, "sg_interval_of failed");
        fprintf(stderr, "    error: %s\n", err.msg);
        return;
    }
    for (;;) {
        sg_value v;
        int rc;
        for (int i = 0; i < PROP_NSYM; i++)
            pt[i] = Q.samples[i][idx[i]];
        rc = sg_expr_eval(&v, Q.pool, e, pt, PROP_NSYM, NULL);
        Q.points++;
        if (rc == SG_EOVERFLOW)
            Q.overflow_points++;
        else if (rc == 0 && v.kind != SG_VAL_INF) {
            if (irc == SG_EUNDEFINED)
                violation(e, pt, "defined at a point of a box said to be undefined everywhere");
            else if (irc == 0 && !value_inside(&v, &iv)) {
                char vb[128], a[SG_INT_STRLEN], b[SG_INT_STRLEN];
                sg_value_format(vb, sizeof vb, &v);
                violation(e, pt, "value outside the enclosure");
                if (Q.shown <= MAX_SHOWN)
                    fprintf(stderr, "    value %s, enclosure [%s, %s]\n", vb, bound_text(a, iv.lo, iv.lo_inf, -1),
                            bound_text(b, iv.hi, iv.hi_inf, 1));
            }
            if (is_bool && tri == SG_TRI_FALSE && v.num)
                violation(e, pt, "FALSE, but the guard holds at this point");
            if (is_bool && tri == SG_TRI_TRUE && !v.num)
                violation(e, pt, "TRUE, but the guard is false at this point");
            if (point_box && is_bool && tri == SG_TRI_UNKNOWN)
                violation(e, pt, "UNKNOWN on a single point where the guard is defined");
            if (point_box && !is_bool && v.kind == SG_VAL_INT && irc == 0 && (iv.lo != v.num || iv.hi != v.num))
                violation(e, pt, "not exact on a single point");
        } else if (rc == SG_EUNDEFINED) {
            if (is_bool && tri == SG_TRI_TRUE)
                violation(e, pt, "TRUE, but the guard is undefined at this point");
            if (point_box && is_bool && tri != SG_TRI_FALSE)
                violation(e, pt, "not FALSE on a single point where the guard is undefined");
        } else if (rc != 0) {
            violation(e, pt, "sg_expr_eval failed");
        }
        /* next point */
        int i = 0;
        while (i < PROP_NSYM && ++idx[i] == Q.nsamples[i])
            idx[i++] = 0;
        if (i == PROP_NSYM)
            break;
    }
}

/* An environment number (decimal or 0x-hex), or `def`. */
static unsigned long long env_number(const char *name, unsigned long long def)
{
    const char *s = getenv(name);
    return s && *s ? strtoull(s, NULL, 0) : def;
}

/* The property test (see the file comment). */
static void test_soundness(void)
{
    unsigned long long seed = env_number("SG_INTERVAL_SEED", PROP_SEED);
    unsigned long long count = env_number("SG_INTERVAL_COUNT", PROP_COUNT);
    sg_error err = SG_ERROR_INIT;
    char name[8];

    memset(&Q, 0, sizeof Q);
    Q.r.state = seed;
    if (sg_pool_new(&Q.pool, &err) != 0) {
        CHECK_MSG(false, "sg_pool_new: %s", err.msg);
        return;
    }
    for (int i = 0; i < PROP_NSYM; i++) {
        snprintf(name, sizeof name, "s%d", i);
        Q.sym[i] = sg_expr_symbol(Q.pool, name, strlen(name));
        CHECK(Q.sym[i] && sg_expr_symbol_index(Q.sym[i]) == (uint32_t)i);
    }
    for (unsigned long long n = 0; n < count; n++) {
        want w = rng_chance(&Q.r, 60) ? W_BOOL : rng_chance(&Q.r, 75) ? W_INT : W_REAL;
        const sg_expr *e = gen_expr(w, rng_range(&Q.r, 2, MAX_DEPTH));
        bool point = rng_chance(&Q.r, 10);
        for (int i = 0; i < PROP_NSYM; i++) {
            gen_side(i);
            if (point && Q.nsamples[i] > 1) { /* a single point of the side */
                Q.box[i].lo = Q.box[i].hi = Q.samples[i][rng_range(&Q.r, 0, Q.nsamples[i] - 1)];
                Q.box[i].lo_inf = Q.box[i].hi_inf = false;
                Q.samples[i][0] = Q.box[i].lo;
                Q.nsamples[i] = 1;
            }
        }
        check_expr(e);
        /* a fresh pool now and then keeps memory flat */
        if (sg_pool_size(Q.pool) > 200000) {
            sg_pool_free(Q.pool);
            if (sg_pool_new(&Q.pool, &err) != 0)
                break;
            for (int i = 0; i < PROP_NSYM; i++) {
                snprintf(name, sizeof name, "s%d", i);
                Q.sym[i] = sg_expr_symbol(Q.pool, name, strlen(name));
            }
        }
    }
    printf("test_interval: seed 0x%llx, %lu expressions, %lu points (%lu overflowed, skipped), "
           "verdicts TRUE %lu / FALSE %lu / UNKNOWN %lu, %lu undefined everywhere, %lu finite enclosures, "
           "%lu point boxes, %lu violations\n",
           seed, Q.exprs, Q.points, Q.overflow_points, Q.verdict[SG_TRI_TRUE], Q.verdict[SG_TRI_FALSE],
           Q.verdict[SG_TRI_UNKNOWN], Q.undefined_everywhere, Q.finite_enclosures, Q.point_boxes, Q.violations);
    CHECK_EQ_INT(Q.violations, 0);
    /* the generator reaches every non-leaf kind (a leaf is always reachable) */
    for (int k = SG_ADD; k < SG_KIND_COUNT; k++)
        CHECK_MSG(Q.kinds_seen[k] || count < 1000, "kind %s never generated", sg_kind_name((sg_kind)k));
    /* the pass decides something: a pre-pass that always says UNKNOWN is useless */
    CHECK(count < 1000 || (Q.verdict[SG_TRI_TRUE] > count / 20 && Q.verdict[SG_TRI_FALSE] > count / 20));
    sg_pool_free(Q.pool);
}


/* ---- the torch.export corpus ----------------------------------------------------------------- */

#ifndef SG_CORPUS
#define SG_CORPUS "tests/corpus"
#endif

/* Counts of the corpus run. */
static struct corpus_state {
    unsigned long cases, load_failures, guards, range_true, range_false, range_unknown, point_checked;
} C;

/* Check every guard of one capture folder. */
static void corpus_case(const char *dir)
{
    sg_trace *t = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_symbol_info *syms;
    const sg_guard *guards;
    sg_interval *range = NULL, *point = NULL;
    sg_int *hint = NULL;
    bool *has_hint = NULL;
    size_t nsyms, nguards, nbox, i;
    sg_pool *pool = NULL;

    if (sg_trace_load_dir(&t, dir, &err) != 0) {
        C.load_failures++;
        return;
    }
    C.cases++;
    if (sg_pool_overlay_new(&pool, sg_trace_pool(t), &err) != 0) { /* evaluation scratch */
        sg_trace_free(t);
        return;
    }
    syms = sg_trace_symbols(t, &nsyms);
    guards = sg_trace_guards(t, &nguards);
    nbox = sg_pool_nsymbols(pool);
    range = calloc(nbox + 1, sizeof *range);
    point = calloc(nbox + 1, sizeof *point);
    hint = calloc(nbox + 1, sizeof *hint);
    has_hint = calloc(nbox + 1, sizeof *has_hint);
    if (!range || !point || !hint || !has_hint) {
        CHECK(false);
        goto cleanup;
    }
    for (i = 0; i < nbox; i++)
        range[i].lo_inf = range[i].hi_inf = point[i].lo_inf = point[i].hi_inf = true;
    for (i = 0; i < nsyms; i++) {
        uint32_t k = sg_expr_symbol_index(syms[i].sym);
        if (k >= nbox)
            continue;
        range[k].lo_inf = syms[i].lo.inf != 0;
        range[k].lo = syms[i].lo.v;
        range[k].hi_inf = syms[i].hi.inf != 0;
        range[k].hi = syms[i].hi.v;
        if (syms[i].has_hint) {
            point[k].lo = point[k].hi = hint[k] = syms[i].hint;
            point[k].lo_inf = point[k].hi_inf = false;
            has_hint[k] = true;
        }
    }
    for (i = 0; i < nguards; i++) {
        const sg_expr *g = guards[i].expr;
        const sg_expr **gs = NULL;
        size_t ngs = 0, j;
        bool all_hinted = true;
        sg_value v;
        sg_tri on_range = sg_interval_holds(pool, g, range, nbox);
        C.guards++;
        C.range_true += on_range == SG_TRI_TRUE;
        C.range_unknown += on_range == SG_TRI_UNKNOWN;
        if (sg_expr_symbols(&gs, &ngs, pool, g, NULL) != 0)
            continue;
        for (j = 0; j < ngs; j++)
            all_hinted &= sg_expr_symbol_index(gs[j]) < nbox && has_hint[sg_expr_symbol_index(gs[j])];
        sg_free(gs);
        if (!all_hinted || sg_expr_eval(&v, pool, g, hint, nbox, NULL) != 0 || !v.num)
            continue; /* only guards that held at the example sizes */
        C.point_checked++;
        C.range_false += on_range == SG_TRI_FALSE;
        CHECK_MSG(on_range != SG_TRI_FALSE, "%s: guard %s is FALSE on the traced ranges", dir, guards[i].text);
        CHECK_MSG(sg_interval_holds(pool, g, point, nbox) == SG_TRI_TRUE, "%s: guard %s is not TRUE at the hints",
                  dir, guards[i].text);
    }
cleanup:
    free(range);
    free(point);
    free(hint);
    free(has_hint);
    sg_pool_free(pool);
    sg_trace_free(t);
}

/* Every capture folder of both corpus versions. */
static void test_corpus(void)
{
    static const char *const versions[] = {"cases", "cases-2.6"};
    memset(&C, 0, sizeof C);
    for (size_t v = 0; v < sizeof versions / sizeof *versions; v++) {
        char path[1024];
        struct dirent *de;
        DIR *d;
        snprintf(path, sizeof path, "%s/%s", SG_CORPUS, versions[v]);
        d = opendir(path);
        CHECK_MSG(d != NULL, "cannot open %s", path);
        if (!d)
            continue;
        while ((de = readdir(d)) != NULL) {
            char dir[2048];
            struct stat st;
            if (de->d_name[0] == '.')
                continue;
            snprintf(dir, sizeof dir, "%s/%s", path, de->d_name);
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) /* index.json sits beside the folders */
                corpus_case(dir);
        }
        closedir(d);
    }
    printf("test_interval: corpus: %lu captures (%lu not loadable), %lu guards: on the traced ranges "
           "TRUE %lu / UNKNOWN %lu; %lu held at the hints (FALSE on the ranges: %lu)\n",
           C.cases, C.load_failures, C.guards, C.range_true, C.range_unknown, C.point_checked, C.range_false);
    CHECK(C.cases > 0);
}

int main(void)
{
    sg_error err = SG_ERROR_INIT;
    char name[8];
    if (sg_pool_new(&U.pool, &err) != 0) {
        fprintf(stderr, "test_interval: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < NSYM; i++) {
        snprintf(name, sizeof name, "s%d", i);
        if (!sg_expr_symbol(U.pool, name, strlen(name)))
            return 1;
    }
    RUN(test_leaves);
    RUN(test_add_mul);
    RUN(test_pow);
    RUN(test_division);
    RUN(test_mod);
    RUN(test_rounding);
    RUN(test_choice);
    RUN(test_relations);
    RUN(test_overflow);
    RUN(test_congruence);
    RUN(test_difference);
    RUN(test_empty_box);
    RUN(test_deep);
    RUN(test_soundness);
    RUN(test_corpus);
    sg_pool_free(U.pool);
    return test_summary();
}
