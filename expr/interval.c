/*
 * interval.c - the cheap pass before Z3: sound interval and congruence
 * evaluation of guard expressions over a box of symbol values (interval.h,
 * docs/interval.md).
 *
 * Every node gets an abstract value (`iv`):
 *   - a closed enclosure [lo, hi] of its values, bounds exact rationals or
 *     +-infinity (integer nodes have integer bounds, booleans are in [0, 1]);
 *   - for integer nodes a congruence "value = r (mod m)" (m = 0: exactly r);
 *   - two definedness bits: `empty` (defined at no point of the box) and
 *     `maybe_undef` (possibly undefined at some point).
 * The enclosure covers the node's values at the points where it is defined.
 * Evaluation is strict, so a node is defined only where all its arguments
 * are: combining the arguments' enclosures is sound even though they ignore
 * the correlation between arguments. Bound arithmetic is exact; a bound that
 * leaves the 128-bit range widens toward infinity (or to 0 when only its sign
 * is known), it never wraps. Relations whose two sides share linear terms are
 * also decided on the difference of the sides, with the shared terms
 * cancelled (so `3*s0 >= 2*s0 + 1` is decided from `s0 - 1`).
 *
 * Results are memoised per node id in a small hash table that grows with the
 * number of distinct nodes visited (not with the pool), and recursion follows
 * the DAG depth, which constructors bound by SG_EXPR_MAX_DEPTH.
 */
#include <string.h>

#include "expr/interval.h"
#include "expr/num.h"

/* Helpers with large frames are kept out of the recursive evaluator's frame,
 * whose size times the DAG depth (up to SG_EXPR_MAX_DEPTH) is the stack used. */
#define IV_NOINLINE __attribute__((noinline))

/* ---- extended rationals: a finite rational or an infinity ------------------------------ */

typedef struct xr {
    sg_rat v; /* the value when inf == 0 */
    int inf;  /* -1: -infinity, +1: +infinity, 0: finite */
} xr;

/* The integer v. */
static xr x_int(sg_int v)
{
    xr x;
    x.v = sg_rat_int(v);
    x.inf = 0;
    return x;
}

/* The rational v (reduced, den > 0). */
static xr x_rat(sg_rat v)
{
    xr x;
    x.v = v;
    x.inf = 0;
    return x;
}

/* +infinity (sign > 0) or -infinity (sign < 0). */
static xr x_inf(int sign)
{
    xr x = x_int(0);
    x.inf = sign;
    return x;
}

/* -1, 0 or +1. */
static int x_sign(xr a)
{
    if (a.inf)
        return a.inf;
    return (a.v.num > 0) - (a.v.num < 0);
}

/* floor(p/q) for q > 0; never overflows. */
static sg_int floor_q(sg_int p, sg_int q)
{
    sg_int r;
    sg__floordiv(p, q, &r);
    return r;
}

/* p mod q in [0, q) for q > 0. */
static sg_int mod_q(sg_int p, sg_int q)
{
    sg_int r;
    sg__pymod(p, q, &r);
    return r;
}

/*
 * Three-way comparison of two reduced rationals, exact for the whole 128-bit
 * range: compares integer parts, then the fractional parts by comparing their
 * reciprocals (Euclid). Remainders come from a modulo, not from q*den, so no
 * intermediate product can overflow.
 */
static int rat_cmp(sg_rat a, sg_rat b)
{
    for (;;) {
        sg_int qa = floor_q(a.num, a.den), qb = floor_q(b.num, b.den);
        sg_int ra, rb;
        if (qa != qb)
            return qa < qb ? -1 : 1;
        ra = mod_q(a.num, a.den);
        rb = mod_q(b.num, b.den);
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

/* Three-way comparison with -inf < every finite value < +inf. */
static int x_cmp(xr a, xr b)
{
    if (a.inf || b.inf)
        return (a.inf > b.inf) - (a.inf < b.inf);
    return rat_cmp(a.v, b.v);
}

/* The smaller / larger of two bounds. */
static xr x_min(xr a, xr b) { return x_cmp(a, b) <= 0 ? a : b; }
static xr x_max(xr a, xr b) { return x_cmp(a, b) >= 0 ? a : b; }

/* -a; `widen` (+-1) is the infinity returned when -a leaves the 128-bit range. */
static xr x_neg(xr a, int widen)
{
    sg_rat r;
    if (a.inf)
        return x_inf(-a.inf);
    if (!sg_rat_neg(&r, a.v))
        return x_inf(widen);
    return x_rat(r);
}

/* a + b into *r; false on overflow or for +inf + -inf. */
static bool x_add(xr *r, xr a, xr b)
{
    if (a.inf || b.inf) {
        if (a.inf && b.inf && a.inf != b.inf)
            return false;
        *r = x_inf(a.inf ? a.inf : b.inf);
        return true;
    }
    if (!sg_rat_add(&r->v, a.v, b.v))
        return false;
    r->inf = 0;
    return true;
}

/* a * b into *r with 0 * inf = 0 (interval convention); false on overflow, when
 * the product is nonzero with the sign x_sign(a) * x_sign(b). */
static bool x_mul(xr *r, xr a, xr b)
{
    int s = x_sign(a) * x_sign(b);
    if (s == 0) {
        *r = x_int(0);
        return true;
    }
    if (a.inf || b.inf) {
        *r = x_inf(s);
        return true;
    }
    if (!sg_rat_mul(&r->v, a.v, b.v))
        return false;
    r->inf = 0;
    return true;
}

/* a ** k (k >= 0) into *r; false on overflow (sign: + for even k, a's for odd k). */
static bool x_pow(xr *r, xr a, sg_int k)
{
    if (k == 0) {
        *r = x_int(1);
        return true;
    }
    if (a.inf) {
        *r = x_inf((k & 1) ? a.inf : 1);
        return true;
    }
    if (!sg_int_pow(&r->v.num, a.v.num, k) || !sg_int_pow(&r->v.den, a.v.den, k))
        return false;
    r->inf = 0;
    return true;
}

/*
 * Sound bounds for a result that left the 128-bit range, known by its sign.
 * An integer result is then beyond SG_INT_MAX (or below SG_INT_MIN); a
 * rational one may merely have an unrepresentable denominator, so only its
 * sign is known: 0 bounds a positive value below, -inf a negative one.
 */
static xr lo_of_overflow(int sign, bool integral)
{
    if (sign < 0)
        return x_inf(-1);
    return x_int(integral ? SG_INT_MAX : 0);
}

static xr hi_of_overflow(int sign, bool integral)
{
    if (sign > 0)
        return x_inf(1);
    return x_int(integral ? SG_INT_MIN : 0);
}

/* A finite integer bound? */
static bool x_integral(xr a) { return !a.inf && a.v.den == 1; }

/* Integer rounding of a bound (floor, then ceil); infinities stay. */
static xr x_floor(xr a)
{
    return a.inf ? a : x_int(floor_q(a.v.num, a.v.den));
}

static xr x_ceil(xr a)
{
    if (a.inf)
        return a;
    return x_int(floor_q(a.v.num, a.v.den) + (mod_q(a.v.num, a.v.den) != 0));
}

/* Rounding toward 0 (nondecreasing, like floor and ceil). */
static xr x_trunc(xr a) { return x_sign(a) >= 0 ? x_floor(a) : x_ceil(a); }

/* ---- congruences: value = r (mod m) -------------------------------------------------- */

/* m == 0: the value is exactly r; m >= 1: 0 <= r < m (m == 1 says nothing). */
typedef struct cong {
    sg_int m, r;
} cong;

/* "Nothing known": value = 0 (mod 1). */
static cong c_none(void)
{
    cong c = {1, 0};
    return c;
}

/* The value is exactly v. */
static cong c_exact(sg_int v)
{
    cong c = {0, v};
    return c;
}

/* value = r (mod |m|), normalised; c_none() when |m| is not representable. */
static cong c_make(sg_int m, sg_int r)
{
    cong c;
    if (m == SG_INT_MIN)
        return c_none();
    if (m < 0)
        m = -m;
    if (m == 0)
        return c_exact(r);
    c.m = m;
    c.r = mod_q(r, m);
    return c;
}

/* gcd(|a|, |b|) into *g; false when either is SG_INT_MIN. */
static bool gcd_of(sg_int *g, sg_int a, sg_int b)
{
    if (a == SG_INT_MIN || b == SG_INT_MIN)
        return false;
    *g = sg__gcd(a, b);
    return true;
}

/* The congruence of x + y. */
static cong c_add(cong a, cong b)
{
    sg_int g = sg__gcd(a.m, b.m), r;
    if (g == 0)
        return sg__add(a.r, b.r, &r) ? c_exact(r) : c_none();
    /* both residues reduced into [0, g): ra - (g - rb) lies in (-g, g) */
    return c_make(g, mod_q(a.r, g) - (g - mod_q(b.r, g)));
}

/* The congruence of -x. */
static cong c_neg(cong a)
{
    if (a.m == 0)
        return a.r == SG_INT_MIN ? c_none() : c_exact(-a.r);
    return c_make(a.m, -a.r);
}

/* The congruence of x * y: (m1 k + r1)(m2 j + r2) = r1 r2 (mod gcd(m1 m2, m1 r2, m2 r1)). */
static cong c_mul(cong a, cong b)
{
    sg_int p1, p2, p3, g, r;
    if (a.m == 0 && b.m == 0)
        return sg__mul(a.r, b.r, &r) ? c_exact(r) : c_none();
    if (!sg__mul(a.m, b.m, &p1) || !sg__mul(a.m, b.r, &p2) || !sg__mul(b.m, a.r, &p3) ||
        !gcd_of(&g, p1, p2) || !gcd_of(&g, g, p3))
        return c_none();
    if (g == 0)
        return sg__mul(a.r, b.r, &r) ? c_exact(r) : c_none();
    if (!sg__mul(mod_q(a.r, g), mod_q(b.r, g), &r))
        return c_none();
    return c_make(g, r);
}

/* A congruence holding for both x and y (the value is one or the other). */
static cong c_union(cong a, cong b)
{
    sg_int d, g;
    if (!sg__sub(a.r, b.r, &d) || !gcd_of(&g, sg__gcd(a.m, b.m), d))
        return c_none();
    return c_make(g, a.r);
}

/* The congruence of x ** k, k >= 0. */
static cong c_pow(cong a, sg_int k)
{
    sg_int acc = 1, base;
    if (k == 0)
        return c_exact(1);
    if (a.m == 0)
        return sg_int_pow(&acc, a.r, k) ? c_exact(acc) : c_none();
    if (a.m == 1)
        return c_none();
    base = a.r; /* in [0, m) */
    while (k > 0) {
        if ((k & 1) && !sg__mul(acc, base, &acc))
            return c_none();
        acc = mod_q(acc, a.m);
        k >>= 1;
        if (k > 0) {
            if (!sg__mul(base, base, &base))
                return c_none();
            base = mod_q(base, a.m);
        }
    }
    return c_make(a.m, acc);
}

/* The congruence of x // y. Only known when y is an exact c dividing x's modulus:
 * (m k + r) // c = (m/c) k + r // c. */
static cong c_floordiv(cong a, cong b)
{
    sg_int q;
    if (b.m != 0 || b.r == 0)
        return c_none();
    if (a.m == 0)
        return sg__floordiv(a.r, b.r, &q) ? c_exact(q) : c_none();
    if (a.m % b.r != 0 || !sg__floordiv(a.r, b.r, &q))
        return c_none();
    return c_make(a.m / b.r, q);
}

/* The congruence of x % y = x - y*q for some integer q: y*q = 0 (mod gcd(my, ry)),
 * so x % y = rx (mod gcd(mx, my, ry)). */
static cong c_mod(cong a, cong b)
{
    sg_int g;
    if (!gcd_of(&g, sg__gcd(a.m, b.m), b.r))
        return c_none();
    return c_make(g, a.r);
}

/* True when no integer satisfies both congruences. */
static bool c_disjoint(cong a, cong b)
{
    sg_int g = sg__gcd(a.m, b.m);
    if (g == 0)
        return a.r != b.r;
    return g > 1 && mod_q(a.r, g) != mod_q(b.r, g);
}

/* ---- abstract values -------------------------------------------------------------------- */

typedef struct iv {
    xr lo, hi;        /* lo.inf is 0 or -1, hi.inf is 0 or +1 */
    cong c;           /* integer nodes only; c_none() otherwise */
    bool empty;       /* defined at no point of the box */
    bool maybe_undef; /* possibly undefined at some point */
} iv;

/* [lo, hi], everywhere defined, no congruence. */
static iv iv_range(xr lo, xr hi)
{
    iv v;
    v.lo = lo;
    v.hi = hi;
    v.c = c_none();
    v.empty = false;
    v.maybe_undef = false;
    return v;
}

/* The whole line, everywhere defined. */
static iv iv_whole(void) { return iv_range(x_inf(-1), x_inf(1)); }

/* The boolean value set {False}, {True} or {False, True}. */
static void set_bool(iv *v, bool can_false, bool can_true)
{
    v->lo = x_int(can_false ? 0 : 1);
    v->hi = x_int(can_true ? 1 : 0);
}

/* Copy the value part (bounds and congruence) of `src` into `dst`, keeping
 * dst's definedness. */
static void set_value(iv *dst, const iv *src)
{
    dst->lo = src->lo;
    dst->hi = src->hi;
    dst->c = src->c;
}

/* Widen dst's value to cover src's value too. */
static void join_value(iv *dst, const iv *src)
{
    dst->lo = x_min(dst->lo, src->lo);
    dst->hi = x_max(dst->hi, src->hi);
    dst->c = c_union(dst->c, src->c);
}

/* Strict evaluation: the node is undefined wherever an argument is. */
static void strict(iv *node, const iv *arg)
{
    node->empty |= arg->empty;
    node->maybe_undef |= arg->maybe_undef;
}

/* A single finite value? */
static bool is_point(const iv *v) { return !v->lo.inf && !v->hi.inf && x_cmp(v->lo, v->hi) == 0; }

/* The value set of -x. */
static iv iv_neg(const iv *a)
{
    iv v = iv_range(x_neg(a->hi, -1), x_neg(a->lo, 1));
    v.c = c_neg(a->c);
    return v;
}

/* acc := acc + b (values). */
static void v_add(iv *acc, const iv *b)
{
    xr r;
    /* an overflowed sum of two integers has the sign of either */
    if (!x_add(&r, acc->lo, b->lo))
        r = lo_of_overflow(x_integral(acc->lo) && x_integral(b->lo) ? x_sign(b->lo) : -1, true);
    acc->lo = r;
    if (!x_add(&r, acc->hi, b->hi))
        r = hi_of_overflow(x_integral(acc->hi) && x_integral(b->hi) ? x_sign(b->hi) : 1, true);
    acc->hi = r;
    acc->c = c_add(acc->c, b->c);
}

/* acc := acc * b (values): the extremes are among the four corner products. */
static void v_mul(iv *acc, const iv *b)
{
    xr ca[4], cb[4], lo = x_int(0), hi = x_int(0);
    int i;
    ca[0] = ca[1] = acc->lo;
    ca[2] = ca[3] = acc->hi;
    cb[0] = cb[2] = b->lo;
    cb[1] = cb[3] = b->hi;
    for (i = 0; i < 4; i++) {
        xr p, plo, phi;
        if (x_mul(&p, ca[i], cb[i]))
            plo = phi = p;
        else {
            int s = x_sign(ca[i]) * x_sign(cb[i]);
            bool integral = x_integral(ca[i]) && x_integral(cb[i]);
            plo = lo_of_overflow(s, integral);
            phi = hi_of_overflow(s, integral);
        }
        lo = i == 0 ? plo : x_min(lo, plo);
        hi = i == 0 ? phi : x_max(hi, phi);
    }
    acc->lo = lo;
    acc->hi = hi;
    acc->c = c_mul(acc->c, b->c);
}

/* x ** k bounded below / above, overflow widened by the known sign of the power. */
static xr pow_lo(xr x, sg_int k)
{
    xr p;
    return x_pow(&p, x, k) ? p : lo_of_overflow((k & 1) ? x_sign(x) : 1, x_integral(x));
}

static xr pow_hi(xr x, sg_int k)
{
    xr p;
    return x_pow(&p, x, k) ? p : hi_of_overflow((k & 1) ? x_sign(x) : 1, x_integral(x));
}

/* out := b ** k for a literal k >= 0: monotone for odd k; for even k the
 * minimum is at the endpoint nearest 0 (0 when the range straddles it). */
static void v_pow(iv *out, const iv *b, sg_int k)
{
    if (k == 0) {
        out->lo = out->hi = x_int(1);
    } else if (k & 1) {
        out->lo = pow_lo(b->lo, k);
        out->hi = pow_hi(b->hi, k);
    } else if (x_sign(b->lo) >= 0) {
        out->lo = pow_lo(b->lo, k);
        out->hi = pow_hi(b->hi, k);
    } else if (x_sign(b->hi) <= 0) {
        out->lo = pow_lo(b->hi, k);
        out->hi = pow_hi(b->lo, k);
    } else {
        out->lo = x_int(0);
        out->hi = x_max(pow_hi(b->lo, k), pow_hi(b->hi, k));
    }
    out->c = c_pow(b->c, k);
}

/* out := b ** e for integers b, e (PowByNatural, defined iff e >= 0). */
static void v_pownat(iv *out, const iv *b, const iv *e)
{
    xr el = x_max(e->lo, x_int(0)), eh = e->hi, m;
    if (x_sign(eh) < 0) {
        out->empty = true;
        return;
    }
    if (x_sign(e->lo) < 0)
        out->maybe_undef = true;
    if (!eh.inf && x_cmp(el, eh) == 0) {
        v_pow(out, b, eh.v.num);
        return;
    }
    /* the exponent varies over [el, eh], el >= 0, eh >= 1 */
    out->c = c_none();
    if (x_sign(b->lo) >= 0) {
        /* b >= 0: monotone in both arguments once b >= 1; b^0 = 1 is always reachable */
        out->lo = x_cmp(b->lo, x_int(1)) >= 0 ? pow_lo(b->lo, el.v.num) : x_int(0);
        if (x_cmp(b->hi, x_int(1)) <= 0)
            out->hi = x_int(1);
        else
            out->hi = eh.inf ? x_inf(1) : pow_hi(b->hi, eh.v.num);
        return;
    }
    /* some negative base: |b^e| <= M^eh with M = max(|b|, 1) */
    m = x_max(x_max(x_neg(b->lo, 1), b->hi), x_int(1));
    if (x_cmp(m, x_int(1)) == 0)
        out->hi = x_int(1);
    else
        out->hi = eh.inf || m.inf ? x_inf(1) : pow_hi(m, eh.v.num);
    out->lo = x_neg(out->hi, -1);
}

/* ---- division -------------------------------------------------------------------------- */

/* The nonzero values of a divisor, split by sign. For an integer divisor the
 * parts are b n [1, +inf) and b n (-inf, -1]; for a real one b n [0, +inf) and
 * b n (-inf, 0] (0 itself excluded, so reciprocals there are unbounded). */
typedef struct split {
    bool has_pos, has_neg, has_zero;
    iv pos, neg;
} split;

static void split_divisor(split *s, const iv *b, bool integer)
{
    xr unit = x_int(integer ? 1 : 0);
    s->has_zero = x_sign(b->lo) <= 0 && x_sign(b->hi) >= 0;
    s->has_pos = x_sign(b->hi) > 0;
    s->has_neg = x_sign(b->lo) < 0;
    s->pos = iv_range(x_max(b->lo, unit), b->hi);
    s->neg = iv_range(b->lo, x_min(b->hi, x_neg(unit, -1)));
}

/* a // p for integers, p >= 1. For fixed p, a // p rises with a; for fixed
 * a >= 0 it falls as p grows and for a < 0 it rises, toward 0 and -1. */
static iv fd_pos(const iv *a, const iv *p)
{
    xr bl = x_max(p->lo, x_int(1)), bh = p->hi, lo, hi;
    if (a->lo.inf)
        lo = x_inf(-1);
    else if (x_sign(a->lo) >= 0)
        lo = bh.inf ? x_int(0) : x_int(floor_q(a->lo.v.num, bh.v.num));
    else
        lo = x_int(floor_q(a->lo.v.num, bl.v.num));
    if (a->hi.inf)
        hi = x_inf(1);
    else if (x_sign(a->hi) >= 0)
        hi = x_int(floor_q(a->hi.v.num, bl.v.num));
    else
        hi = bh.inf ? x_int(-1) : x_int(floor_q(a->hi.v.num, bh.v.num));
    return iv_range(lo, hi);
}

/* a % p for integers, p >= 1: in [0, p - 1]; a itself when 0 <= a < p; exact
 * when p is one constant and a stays within one multiple of it. */
static iv mod_pos(const iv *a, const iv *p)
{
    xr bl = x_max(p->lo, x_int(1)), bh = p->hi;
    iv r = iv_range(x_int(0), bh.inf ? x_inf(1) : x_int(bh.v.num - 1));
    if (!a->lo.inf && x_sign(a->lo) >= 0) {
        if (!a->hi.inf && x_cmp(a->hi, bl) < 0)
            return iv_range(a->lo, a->hi);
        r.hi = x_min(r.hi, a->hi);
    }
    if (!bh.inf && x_cmp(bl, bh) == 0 && !a->lo.inf && !a->hi.inf) {
        sg_int c = bl.v.num;
        if (floor_q(a->lo.v.num, c) == floor_q(a->hi.v.num, c))
            return iv_range(x_int(mod_q(a->lo.v.num, c)), x_int(mod_q(a->hi.v.num, c)));
    }
    return r;
}

/* Integer a // b or a % b over the nonzero divisor values (at least one part):
 * a negative divisor reduces to a positive one, a // b = (-a) // (-b) and
 * a % b = -((-a) % (-b)). */
static iv div_parts(const iv *a, const split *s, bool modulo)
{
    iv r = iv_whole(), t, na, np;
    if (s->has_pos)
        r = modulo ? mod_pos(a, &s->pos) : fd_pos(a, &s->pos);
    if (s->has_neg) {
        na = iv_neg(a);
        np = iv_neg(&s->neg);
        t = modulo ? mod_pos(&na, &np) : fd_pos(&na, &np);
        if (modulo)
            t = iv_neg(&t);
        if (s->has_pos)
            join_value(&r, &t);
        else
            r = t;
    }
    return r;
}

/* out := a // b (floor) or a % b for integers, with definedness b != 0. */
static void v_divmod(iv *out, const iv *a, const iv *b, bool modulo)
{
    split s;
    iv r;
    split_divisor(&s, b, true);
    if (!s.has_pos && !s.has_neg) {
        out->empty = true;
        return;
    }
    if (s.has_zero)
        out->maybe_undef = true;
    r = div_parts(a, &s, modulo);
    set_value(out, &r);
    out->c = modulo ? c_mod(a->c, b->c) : c_floordiv(a->c, b->c);
}

/* 1/x over a part with x >= 0 and x != 0. */
static iv recip_pos(const iv *p)
{
    xr lo = x_int(0), hi = x_inf(1), pl = x_max(p->lo, x_int(0));
    sg_rat r;
    if (!p->hi.inf && x_sign(p->hi) > 0 && sg_rat_div(&r, sg_rat_int(1), p->hi.v))
        lo = x_rat(r);
    if (x_sign(pl) > 0 && sg_rat_div(&r, sg_rat_int(1), pl.v))
        hi = x_rat(r);
    return iv_range(lo, hi);
}

/* out := a / b exactly (IntTrueDiv), with definedness b != 0. */
static void v_truediv(iv *out, const iv *a, const iv *b, bool int_divisor)
{
    split s;
    iv r = iv_whole(), t, q;
    split_divisor(&s, b, int_divisor);
    if (!s.has_pos && !s.has_neg) {
        out->empty = true;
        return;
    }
    if (s.has_zero)
        out->maybe_undef = true;
    if (s.has_pos) {
        r = recip_pos(&s.pos);
        q = *a;
        v_mul(&q, &r);
        r = q;
    }
    if (s.has_neg) {
        t = iv_neg(&s.neg);
        t = recip_pos(&t);
        t = iv_neg(&t);
        q = *a;
        v_mul(&q, &t);
        if (s.has_pos)
            join_value(&r, &q);
        else
            r = q;
    }
    set_value(out, &r);
    out->c = c_none();
}

/* ---- relations ------------------------------------------------------------------------- */

/* 1 when `a k b` is true at every point where both are defined, 0 when it is
 * false at every such point, -1 when the enclosures cannot tell. */
static int compare(sg_kind k, const iv *a, const iv *b, bool ints)
{
    int eq = -1;
    switch (k) {
    case SG_LT:
        return x_cmp(a->hi, b->lo) < 0 ? 1 : x_cmp(a->lo, b->hi) >= 0 ? 0 : -1;
    case SG_LE:
        return x_cmp(a->hi, b->lo) <= 0 ? 1 : x_cmp(a->lo, b->hi) > 0 ? 0 : -1;
    case SG_GT:
        return compare(SG_LT, b, a, ints);
    case SG_GE:
        return compare(SG_LE, b, a, ints);
    case SG_EQ:
    case SG_NE:
        if (x_cmp(a->hi, b->lo) < 0 || x_cmp(b->hi, a->lo) < 0)
            eq = 0;
        else if (is_point(a) && is_point(b))
            eq = x_cmp(a->lo, b->lo) == 0;
        else if (ints && c_disjoint(a->c, b->c))
            eq = 0;
        return k == SG_EQ || eq < 0 ? eq : !eq;
    default:
        return -1;
    }
}

/* ---- the evaluator ---------------------------------------------------------------------- */

typedef struct slot {
    uint32_t key; /* node id + 1; 0 marks a free slot */
    int rc;
    iv v;
} slot;

typedef struct ictx {
    const sg_interval *box;
    size_t nbox;
    slot *tab; /* open addressing, power-of-two capacity, at most half full */
    size_t cap, used;
    const sg_expr *bad_sym; /* a symbol whose box entry is empty */
} ictx;

/* The slot of node `id`: its entry, or the free slot where it belongs. */
static slot *memo_find(ictx *c, uint32_t id)
{
    size_t mask = c->cap - 1, i = ((size_t)id * 2654435761u) & mask;
    while (c->tab[i].key && c->tab[i].key != id + 1)
        i = (i + 1) & mask;
    return &c->tab[i];
}

/* Record the result of node `id` (not present yet). Returns 0 or SG_ENOMEM. */
static int memo_put(ictx *c, uint32_t id, int rc, const iv *v)
{
    slot *s;
    if ((c->used + 1) * 2 > c->cap) {
        size_t old_cap = c->cap, i;
        slot *old = c->tab, *tab = sg__calloc(old_cap * 2, sizeof *tab);
        if (!tab)
            return SG_ENOMEM;
        c->tab = tab;
        c->cap = old_cap * 2;
        for (i = 0; i < old_cap; i++)
            if (old[i].key)
                *memo_find(c, old[i].key - 1) = old[i];
        sg_free(old);
    }
    s = memo_find(c, id);
    s->key = id + 1;
    s->rc = rc;
    s->v = *v;
    c->used++;
    return 0;
}

static int eval(ictx *c, const sg_expr *e, iv *out);

/* Normalise a node's value for its sort: booleans within [0, 1]; integers with
 * integer bounds tightened by the congruence (and exact when a point); an
 * enclosure with no admissible value means the node is defined nowhere. */
IV_NOINLINE static void finish(iv *v, sg_sort sort)
{
    if (!v->empty && sort == SG_SORT_INT) {
        if (!v->lo.inf)
            v->lo = x_ceil(v->lo);
        if (!v->hi.inf)
            v->hi = x_floor(v->hi);
        if (v->c.m == 0) {
            xr p = x_int(v->c.r);
            if (x_cmp(p, v->lo) < 0 || x_cmp(p, v->hi) > 0)
                v->empty = true;
            v->lo = v->hi = p;
        } else if (v->c.m > 1) {
            sg_int m = v->c.m, r = v->c.r, t;
            if (!v->lo.inf && sg__add(v->lo.v.num, mod_q(r - mod_q(v->lo.v.num, m), m), &t))
                v->lo = x_int(t);
            if (!v->hi.inf && sg__sub(v->hi.v.num, mod_q(mod_q(v->hi.v.num, m) - r, m), &t))
                v->hi = x_int(t);
        }
        if (!v->empty && is_point(v))
            v->c = c_exact(v->lo.v.num);
    } else {
        v->c = c_none();
        if (sort == SG_SORT_BOOL) {
            v->lo = x_max(v->lo, x_int(0));
            v->hi = x_min(v->hi, x_int(1));
        }
    }
    if (x_cmp(v->lo, v->hi) > 0)
        v->empty = true;
    if (v->empty)
        v->maybe_undef = true;
}

/* The box range of a symbol. */
static int eval_symbol(ictx *c, const sg_expr *e, iv *out)
{
    uint32_t i = sg_expr_symbol_index(e);
    *out = iv_whole();
    if (c->box && i < c->nbox) {
        const sg_interval *b = &c->box[i];
        if (!b->lo_inf && !b->hi_inf && b->lo > b->hi) {
            c->bad_sym = e;
            return SG_EINVALID;
        }
        if (!b->lo_inf)
            out->lo = x_int(b->lo);
        if (!b->hi_inf)
            out->hi = x_int(b->hi);
    }
    return 0;
}

/* Piecewise((e1, c1), ...): the union of the branches that can be taken (a
 * condition that can be true, before any condition that is always true);
 * defined everywhere only when some condition is always true. */
static int eval_piecewise(ictx *c, const sg_expr *e, iv *out)
{
    size_t n = sg_expr_nargs(e), i;
    bool have = false, decided = false;
    iv v, cond;
    int rc;
    *out = iv_whole();
    for (i = 0; i + 1 < n; i += 2) {
        if ((rc = eval(c, sg_expr_arg(e, i), &v)) || (rc = eval(c, sg_expr_arg(e, i + 1), &cond)))
            return rc;
        strict(out, &v);
        strict(out, &cond);
        if (decided || x_sign(cond.hi) <= 0)
            continue;
        if (have)
            join_value(out, &v);
        else
            set_value(out, &v);
        have = true;
        decided = x_sign(cond.lo) > 0;
    }
    if (!have)
        out->empty = true;
    if (!decided)
        out->maybe_undef = true;
    return 0;
}

/* One argument `t` folded into an n-ary node's running value `acc`. */
IV_NOINLINE static void fold(sg_kind k, iv *acc, const iv *t)
{
    strict(acc, t);
    switch (k) {
    case SG_ADD:
        v_add(acc, t);
        break;
    case SG_MUL:
        v_mul(acc, t);
        break;
    case SG_MAX:
    case SG_OR: /* on [0, 1], Or is Max and And is Min */
        acc->lo = x_max(acc->lo, t->lo);
        acc->hi = x_max(acc->hi, t->hi);
        acc->c = c_union(acc->c, t->c);
        break;
    default: /* SG_MIN, SG_AND */
        acc->lo = x_min(acc->lo, t->lo);
        acc->hi = x_min(acc->hi, t->hi);
        acc->c = c_union(acc->c, t->c);
        break;
    }
}

static int decide_by_difference(ictx *c, sg_kind k, const sg_expr *l, const sg_expr *r);

/* The value of a node of fixed arity from its arguments' abstract values
 * a[0..n-1]; out already carries their definedness. */
IV_NOINLINE static int apply_fixed(ictx *c, const sg_expr *e, const iv *a, iv *out)
{
    sg_kind k = sg_expr_kind(e);
    const sg_expr *x = sg_expr_arg(e, 1);
    iv t;
    int d;
    switch (k) {
    case SG_POW:
        if (sg_expr_kind(x) == SG_INT && sg_expr_int_value(x) >= 0)
            v_pow(out, &a[0], sg_expr_int_value(x));
        break; /* any other exponent: keep the whole line */
    case SG_POWNAT:
        v_pownat(out, &a[0], &a[1]);
        break;
    case SG_FLOORDIV:
    case SG_CLEANDIV:
        v_divmod(out, &a[0], &a[1], false);
        break;
    case SG_CEILDIV: /* -((-a) // b) */
        t = iv_neg(&a[0]);
        v_divmod(out, &t, &a[1], false);
        t = iv_neg(out);
        set_value(out, &t);
        break;
    case SG_MOD:
    case SG_PYMOD:
        v_divmod(out, &a[0], &a[1], true);
        break;
    case SG_MODIDX: /* (a // b) % c */
        t = *out;
        v_divmod(&t, &a[0], &a[1], false);
        finish(&t, SG_SORT_INT);
        if (t.empty) {
            out->empty = true;
            break;
        }
        out->maybe_undef |= t.maybe_undef;
        v_divmod(out, &t, &a[2], true);
        break;
    case SG_TRUEDIV:
        v_truediv(out, &a[0], &a[1], sg_expr_sort(x) == SG_SORT_INT);
        break;
    case SG_TRUNC:
    case SG_FLOOR:
    case SG_CEIL:
        out->lo = k == SG_FLOOR ? x_floor(a[0].lo) : k == SG_CEIL ? x_ceil(a[0].lo) : x_trunc(a[0].lo);
        out->hi = k == SG_FLOOR ? x_floor(a[0].hi) : k == SG_CEIL ? x_ceil(a[0].hi) : x_trunc(a[0].hi);
        out->c = a[0].c; /* an integer argument keeps its congruence; finish() drops a real's */
        if (sg_expr_sort(sg_expr_arg(e, 0)) != SG_SORT_INT)
            out->c = c_none();
        break;
    case SG_WHERE:
        if (x_sign(a[0].lo) > 0)
            set_value(out, &a[1]);
        else if (x_sign(a[0].hi) <= 0)
            set_value(out, &a[2]);
        else {
            set_value(out, &a[1]);
            join_value(out, &a[2]);
        }
        break;
    case SG_IDENTITY:
        set_value(out, &a[0]);
        break;
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        d = compare(k, &a[0], &a[1],
                    sg_expr_sort(sg_expr_arg(e, 0)) == SG_SORT_INT && sg_expr_sort(x) == SG_SORT_INT);
        if (d < 0 && sg_expr_sort(x) != SG_SORT_BOOL) {
            d = decide_by_difference(c, k, sg_expr_arg(e, 0), x);
            if (d == SG_ENOMEM)
                return d;
        }
        set_bool(out, d != 1, d != 0);
        break;
    case SG_NOT:
        out->lo = x_int(x_cmp(a[0].hi, x_int(1)) >= 0 ? 0 : 1);
        out->hi = x_int(x_sign(a[0].lo) > 0 ? 0 : 1);
        break;
    default:
        return SG_ERROR;
    }
    return 0;
}

/* Evaluate node `e` (not memoised yet) into *out. */
static int eval_node(ictx *c, const sg_expr *e, iv *out)
{
    sg_kind k = sg_expr_kind(e);
    size_t n = sg_expr_nargs(e), i;
    sg_int p, q;
    iv a[3], t;
    int rc;

    *out = iv_whole();
    switch (k) {
    case SG_INT:
    case SG_RAT:
        sg_expr_rational_value(e, &p, &q);
        {
            sg_rat r = {p, q};
            out->lo = out->hi = x_rat(r);
        }
        break;
    case SG_TRUE:
    case SG_FALSE:
        set_bool(out, k == SG_FALSE, k == SG_TRUE);
        break;
    case SG_INF:
        return SG_EUNSUPPORTED; /* constructors keep infinities at the root only */
    case SG_SYM:
        if ((rc = eval_symbol(c, e, out)))
            return rc;
        break;
    case SG_ADD: case SG_MUL: case SG_MAX: case SG_MIN: case SG_AND: case SG_OR:
        for (i = 0; i < n; i++) {
            if ((rc = eval(c, sg_expr_arg(e, i), &t)))
                return rc;
            if (i == 0)
                *out = t;
            else
                fold(k, out, &t);
        }
        break;
    case SG_PIECEWISE:
        if ((rc = eval_piecewise(c, e, out)))
            return rc;
        break;
    default:
        if (n == 0 || n > 3)
            return SG_ERROR;
        for (i = 0; i < n; i++) {
            if ((rc = eval(c, sg_expr_arg(e, i), &a[i])))
                return rc;
            strict(out, &a[i]);
        }
        if ((rc = apply_fixed(c, e, a, out)))
            return rc;
        break;
    }
    finish(out, sg_expr_sort(e));
    return 0;
}

/* Memoised evaluation of `e`. Returns 0, SG_EUNSUPPORTED, SG_EINVALID (empty
 * box entry), SG_ENOMEM or SG_ERROR (a malformed node). */
static int eval(ictx *c, const sg_expr *e, iv *out)
{
    uint32_t id = sg_expr_id(e);
    slot *s = memo_find(c, id);
    int rc;
    if (s->key) {
        *out = s->v;
        return s->rc;
    }
    rc = eval_node(c, e, out);
    if (rc == SG_ENOMEM || rc == SG_ERROR)
        return rc;
    if (memo_put(c, id, rc, out))
        return SG_ENOMEM;
    return rc;
}

/* ---- relations decided on the difference of their sides --------------------------------- */

/* Linear terms per side considered; longer sums are not compared term by term. */
#define SG_IV_MAX_TERMS 64

/* One linear term coef * part, where part is the product of the factors
 * args[from..] of a Mul (mul) or the node itself; node NULL: a constant. */
typedef struct term {
    sg_rat coef;
    const sg_expr *node;
    bool mul;
    size_t from;
} term;

/* Number of factors of a non-constant term's part, and factor i. */
static size_t part_count(const term *t) { return t->mul ? sg_expr_nargs(t->node) - t->from : 1; }

static const sg_expr *part_at(const term *t, size_t i)
{
    return t->mul ? sg_expr_arg(t->node, t->from + i) : t->node;
}

/* Split `e` into linear terms, each times `sign`, appended to t[*n]; false
 * when there are too many or a coefficient cannot be negated. */
static bool linear_terms(const sg_expr *e, term *t, size_t *n, int sign)
{
    bool sum = sg_expr_kind(e) == SG_ADD;
    size_t nt = sum ? sg_expr_nargs(e) : 1, i;
    for (i = 0; i < nt; i++) {
        const sg_expr *x = sum ? sg_expr_arg(e, i) : e;
        term *u;
        sg_int p, q;
        if (*n >= SG_IV_MAX_TERMS)
            return false;
        u = &t[(*n)++];
        u->node = x;
        u->mul = sg_expr_kind(x) == SG_MUL;
        u->from = 0;
        u->coef = sg_rat_int(1);
        if (sg_expr_rational_value(x, &p, &q)) {
            u->node = NULL;
            u->mul = false;
            u->coef.num = p;
            u->coef.den = q;
        } else if (u->mul && sg_expr_rational_value(sg_expr_arg(x, 0), &p, &q)) {
            u->coef.num = p;
            u->coef.den = q;
            u->from = 1;
        }
        if (sign < 0 && !sg_rat_neg(&u->coef, u->coef))
            return false;
    }
    return true;
}

/* Same non-constant part (the same factors), or both constants. */
static bool same_part(const term *a, const term *b)
{
    size_t na, i;
    if (!a->node || !b->node)
        return a->node == b->node;
    na = part_count(a);
    if (na != part_count(b))
        return false;
    for (i = 0; i < na; i++)
        if (part_at(a, i) != part_at(b, i))
            return false;
    return true;
}

/*
 * Decide `l k r` from the enclosure of l - r with the terms the two sides share
 * cancelled: both sides are split into coef * part terms, equal parts are
 * merged, and sum(coef * enclosure(part)) is compared with 0. Where l and r
 * are defined, so are their parts, and l - r equals that sum at the same
 * point, so the verdict is sound. Returns 1, 0, -1 (no verdict, also when
 * nothing cancels) or SG_ENOMEM. Kept out of line: its term arrays must not
 * join the frame of the recursive evaluator.
 */
IV_NOINLINE static int decide_by_difference(ictx *c, sg_kind k, const sg_expr *l, const sg_expr *r)
{
    term t[2 * SG_IV_MAX_TERMS];
    bool used[2 * SG_IV_MAX_TERMS];
    size_t n = 0, nl, i, j, f;
    bool cancelled = false, ints = sg_expr_sort(l) == SG_SORT_INT && sg_expr_sort(r) == SG_SORT_INT;
    iv sum = iv_range(x_int(0), x_int(0)), part, x, zero = iv_range(x_int(0), x_int(0));
    int rc;

    if (!linear_terms(l, t, &n, 1))
        return -1;
    nl = n;
    if (!linear_terms(r, t, &n, -1))
        return -1;
    memset(used, 0, sizeof used);
    sum.c = zero.c = c_exact(0);
    for (i = 0; i < n; i++) {
        sg_rat coef = t[i].coef;
        if (used[i])
            continue;
        for (j = i + 1; j < n; j++) {
            if (used[j] || !same_part(&t[i], &t[j]))
                continue;
            if (!sg_rat_add(&coef, coef, t[j].coef))
                return -1;
            used[j] = true;
            if (i < nl && j >= nl && t[i].node)
                cancelled = true;
        }
        if (coef.num == 0)
            continue;
        part = iv_range(x_rat(coef), x_rat(coef));
        part.c = coef.den == 1 ? c_exact(coef.num) : c_none();
        if (t[i].node) {
            for (f = 0; f < part_count(&t[i]); f++) {
                if ((rc = eval(c, part_at(&t[i], f), &x)))
                    return rc == SG_ENOMEM ? rc : -1;
                if (x.empty)
                    return -1;
                v_mul(&part, &x);
            }
        }
        v_add(&sum, &part);
    }
    if (!cancelled)
        return -1;
    return compare(k, &sum, &zero, ints);
}

/* ---- public entry points ------------------------------------------------------------------- */

/* Evaluate `e` over the box into *v. Returns what eval() returns. */
static int run(const sg_expr *e, const sg_interval *box, size_t nbox, iv *v, const sg_expr **bad_sym)
{
    ictx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.box = box;
    c.nbox = box ? nbox : 0;
    c.cap = 16; /* grown by memo_put; a guard has a few nodes, and the table is cleared at each call */
    c.tab = sg__calloc(c.cap, sizeof *c.tab);
    if (!c.tab)
        return SG_ENOMEM;
    rc = eval(&c, e, v);
    *bad_sym = c.bad_sym;
    sg_free(c.tab);
    return rc;
}

int sg_interval_of(sg_interval *out, sg_pool *pool, const sg_expr *e, const sg_interval *box,
                   size_t nbox, sg_error *err)
{
    const sg_expr *bad = NULL;
    iv v;
    int rc;
    (void)pool;
    if (!out || !e)
        return sg_error_set(err, SG_EINVALID, "sg_interval_of: no expression or no output");
    memset(out, 0, sizeof *out);
    rc = run(e, box, nbox, &v, &bad);
    switch (rc) {
    case 0:
        break;
    case SG_EINVALID:
        return sg_error_set(err, rc, "the box is empty: symbol %s has lower bound > upper bound",
                            bad ? sg_expr_symbol_name(bad) : "?");
    case SG_EUNSUPPORTED:
        return sg_error_set(err, rc, "an infinite expression has no interval");
    case SG_ENOMEM:
        return sg_error_set(err, rc, "out of memory evaluating intervals");
    default:
        return sg_error_set(err, rc, "malformed expression node in interval evaluation");
    }
    if (v.empty)
        return sg_error_set(err, SG_EUNDEFINED, "the expression is undefined at every point of the box");
    out->lo_inf = v.lo.inf != 0;
    out->hi_inf = v.hi.inf != 0;
    if (!out->lo_inf)
        out->lo = x_floor(v.lo).v.num;
    if (!out->hi_inf)
        out->hi = x_ceil(v.hi).v.num;
    return 0;
}

bool sg_interval_meet(sg_interval *r, const sg_interval *x)
{
    if (!x->lo_inf && (r->lo_inf || x->lo > r->lo)) {
        r->lo = x->lo;
        r->lo_inf = false;
    }
    if (!x->hi_inf && (r->hi_inf || x->hi < r->hi)) {
        r->hi = x->hi;
        r->hi_inf = false;
    }
    return r->lo_inf || r->hi_inf || r->lo <= r->hi;
}

sg_tri sg_interval_holds(sg_pool *pool, const sg_expr *guard, const sg_interval *box, size_t nbox)
{
    const sg_expr *bad = NULL;
    iv v;
    (void)pool;
    if (!guard || sg_expr_sort(guard) != SG_SORT_BOOL || run(guard, box, nbox, &v, &bad))
        return SG_TRI_UNKNOWN;
    if (v.empty || x_sign(v.hi) <= 0)
        return SG_TRI_FALSE;
    if (x_sign(v.lo) > 0 && !v.maybe_undef)
        return SG_TRI_TRUE;
    return SG_TRI_UNKNOWN;
}
