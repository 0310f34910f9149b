/*
 * poly.c - integer expressions as polynomials, and relations decided by their
 * sign over a box (expr/poly.h).
 */
#include <string.h>

#include "expr/poly.h"

#define POLY_DEPTH 32

/* ---- Monomials and sums ------------------------------------------------------------------------- */

static int mono_cmp(const sg_mono *a, const sg_mono *b)
{
    int i;
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (i = 0; i < a->n; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}

/* f += s * m, keeping f canonical; false on overflow or too many terms. */
static bool add_term(sg_poly *f, const sg_mono *m, sg_int s)
{
    sg_int c;
    int i, cmp = 1;
    if (!sg__mul(m->c, s, &c))
        return false;
    if (c == 0)
        return true;
    for (i = 0; i < f->n && (cmp = mono_cmp(&f->t[i], m)) < 0; i++)
        ;
    if (i < f->n && cmp == 0) {
        if (!sg__add(f->t[i].c, c, &f->t[i].c))
            return false;
        if (f->t[i].c == 0) {
            memmove(&f->t[i], &f->t[i + 1], (size_t)(f->n - i - 1) * sizeof f->t[0]);
            f->n--;
        }
        return true;
    }
    if (f->n == SG_POLY_TERMS)
        return false;
    memmove(&f->t[i + 1], &f->t[i], (size_t)(f->n - i) * sizeof f->t[0]);
    f->t[i] = *m;
    f->t[i].c = c;
    f->n++;
    return true;
}

/* f += s * g */
static bool add_poly(sg_poly *f, const sg_poly *g, sg_int s)
{
    int i;
    for (i = 0; i < g->n; i++)
        if (!add_term(f, &g->t[i], s))
            return false;
    return true;
}

bool sg_poly_sub(sg_poly *f, const sg_poly *g) { return add_poly(f, g, -1); }

static void constant(sg_poly *f, sg_int k)
{
    memset(f, 0, sizeof *f);
    if (k != 0) {
        f->n = 1;
        f->t[0].c = k;
    }
}

/* out = f * g (out distinct from both) */
static bool mul_poly(sg_poly *out, const sg_poly *f, const sg_poly *g)
{
    int i, j;
    constant(out, 0);
    for (i = 0; i < f->n; i++)
        for (j = 0; j < g->n; j++) {
            const sg_mono *a = &f->t[i], *b = &g->t[j];
            sg_mono m;
            int x = 0, y = 0, k = 0;
            if (a->n + b->n > SG_POLY_DEG || !sg__mul(a->c, b->c, &m.c))
                return false;
            while (x < a->n || y < b->n) /* merge the sorted variable lists */
                m.v[k++] = y == b->n || (x < a->n && a->v[x] <= b->v[y]) ? a->v[x++] : b->v[y++];
            m.n = (unsigned char)k;
            if (!add_term(out, &m, 1))
                return false;
        }
    return true;
}

/* The constant term of f (0 when there is none). */
static sg_int const_term(const sg_poly *f) { return f->n && f->t[0].n == 0 ? f->t[0].c : 0; }

/*
 * (f = c*m + k) // c as m + k // c, and f % c as k % c, when c divides every non-constant
 * coefficient (exact for every integer value of m); false otherwise.
 */
static bool divide(sg_poly *f, sg_int c, bool mod, bool ceil)
{
    sg_int k = const_term(f), q, r;
    int i;
    if (c == 0 || c == -1 || c == SG_INT_MIN) /* (x // -1 is -x: not worth an overflow check per term) */
        return false;
    for (i = 0; i < f->n; i++)
        if (f->t[i].n && f->t[i].c % c != 0)
            return false;
    if (mod) {
        if (!sg__pymod(k, c, &r))
            return false;
        constant(f, r);
        return true;
    }
    /* ceil: -((-f) // c) = m - ((-k) // c) */
    if (k == SG_INT_MIN || !sg__floordiv(ceil ? -k : k, c, &q) || (ceil && q == SG_INT_MIN))
        return false;
    for (i = 0; i < f->n; i++)
        f->t[i].c /= c; /* the constant term too: replaced below */
    if (f->n && f->t[0].n == 0) {
        memmove(&f->t[0], &f->t[1], (size_t)(f->n - 1) * sizeof f->t[0]);
        f->n--;
    }
    {
        sg_mono one = {0};
        one.c = ceil ? -q : q;
        return add_term(f, &one, 1);
    }
}

/* ---- Reading an expression ---------------------------------------------------------------------- */

bool sg_expr_poly(const sg_expr *e, sg_expr_linear_sym sym, void *ctx, unsigned *work, unsigned work_max,
                  sg_poly *out, int depth)
{
    size_t i, n = sg_expr_nargs(e);
    sg_kind k = sg_expr_kind(e);
    sg_poly a, b;
    constant(out, 0);
    if (depth > POLY_DEPTH || ++*work > work_max)
        return false;
    switch (k) {
    case SG_INT:
        constant(out, sg_expr_int_value(e));
        return true;
    case SG_SYM: {
        sg_lin l;
        int j;
        sg_mono m = {0};
        if (sg_expr_sort(e) != SG_SORT_INT || !sym(ctx, e, &l, depth))
            return false;
        constant(out, l.k);
        m.n = 1;
        for (j = 0; j < l.n; j++) {
            if (l.v[j] > UINT32_MAX)
                return false;
            m.v[0] = (uint32_t)l.v[j];
            m.c = l.c[j];
            if (!add_term(out, &m, 1))
                return false;
        }
        return true;
    }
    case SG_IDENTITY:
        return n == 1 && sg_expr_poly(sg_expr_arg(e, 0), sym, ctx, work, work_max, out, depth + 1);
    case SG_ADD:
        for (i = 0; i < n; i++)
            if (!sg_expr_poly(sg_expr_arg(e, i), sym, ctx, work, work_max, &a, depth + 1) || !add_poly(out, &a, 1))
                return false;
        return true;
    case SG_MUL:
        constant(out, 1);
        for (i = 0; i < n; i++) {
            if (!sg_expr_poly(sg_expr_arg(e, i), sym, ctx, work, work_max, &a, depth + 1) || !mul_poly(&b, out, &a))
                return false;
            *out = b;
        }
        return true;
    case SG_POW:
    case SG_POWNAT: {
        const sg_expr *x = n == 2 ? sg_expr_arg(e, 1) : NULL;
        sg_int p;
        if (!x || sg_expr_kind(x) != SG_INT || (p = sg_expr_int_value(x)) < 0 || p > SG_POLY_DEG ||
            !sg_expr_poly(sg_expr_arg(e, 0), sym, ctx, work, work_max, &a, depth + 1))
            return false;
        constant(out, 1);
        for (; p > 0; p--) {
            if (!mul_poly(&b, out, &a))
                return false;
            *out = b;
        }
        return true;
    }
    case SG_FLOORDIV:
    case SG_CLEANDIV:
    case SG_CEILDIV:
    case SG_MOD:
    case SG_PYMOD: {
        const sg_expr *d = n == 2 ? sg_expr_arg(e, 1) : NULL;
        if (!d || sg_expr_kind(d) != SG_INT || !sg_expr_poly(sg_expr_arg(e, 0), sym, ctx, work, work_max, out, depth + 1))
            return false;
        return divide(out, sg_expr_int_value(d), k == SG_MOD || k == SG_PYMOD, k == SG_CEILDIV);
    }
    default:
        return false;
    }
}

/* ---- Ranges over the box ------------------------------------------------------------------------ */

/* An end of a range: inf -1 / +1 for -oo / +oo, else the value v. */
typedef struct ext {
    int inf;
    sg_int v;
} ext;

static bool ext_mul(ext a, ext b, ext *r)
{
    bool az = !a.inf && a.v == 0, bz = !b.inf && b.v == 0;
    r->inf = 0;
    r->v = 0;
    if (az || bz) /* the values are finite: 0 times an unbounded factor is 0 */
        return true;
    if (a.inf || b.inf) {
        int sa = a.inf ? a.inf : (a.v > 0 ? 1 : -1), sb = b.inf ? b.inf : (b.v > 0 ? 1 : -1);
        r->inf = sa * sb;
        return true;
    }
    return sg__mul(a.v, b.v, &r->v);
}

static bool ext_less(ext a, ext b)
{
    if (a.inf != b.inf)
        return a.inf < b.inf;
    return !a.inf && a.v < b.v;
}

/* r = x * y over intervals (the extreme products of the ends); false on overflow. */
static bool iv_mul(const sg_interval *x, const sg_interval *y, sg_interval *r)
{
    ext xe[2] = {{x->lo_inf ? -1 : 0, x->lo}, {x->hi_inf ? 1 : 0, x->hi}};
    ext ye[2] = {{y->lo_inf ? -1 : 0, y->lo}, {y->hi_inf ? 1 : 0, y->hi}};
    ext lo = {0, 0}, hi = {0, 0}, p;
    int i, j;
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++) {
            if (!ext_mul(xe[i], ye[j], &p))
                return false;
            if ((i == 0 && j == 0) || ext_less(p, lo))
                lo = p;
            if ((i == 0 && j == 0) || ext_less(hi, p))
                hi = p;
        }
    r->lo_inf = lo.inf < 0;
    r->hi_inf = hi.inf > 0;
    r->lo = lo.v;
    r->hi = hi.v;
    return lo.inf <= 0 && hi.inf >= 0; /* never [+oo, ..] or [.., -oo] for finite values */
}

static bool iv_add(sg_interval *r, const sg_interval *x)
{
    if (x->lo_inf)
        r->lo_inf = true;
    else if (!r->lo_inf && !sg__add(r->lo, x->lo, &r->lo))
        return false;
    if (x->hi_inf)
        r->hi_inf = true;
    else if (!r->hi_inf && !sg__add(r->hi, x->hi, &r->hi))
        return false;
    return true;
}

/* The range of monomial m over the box, the variables in `drop` (a sorted sub-multiset of m's,
 * or NULL) left out. */
static bool mono_range(const sg_mono *m, const sg_mono *drop, sg_poly_dom dom, void *ctx, sg_interval *r)
{
    int i, d = 0;
    r->lo = r->hi = m->c;
    r->lo_inf = r->hi_inf = false;
    for (i = 0; i < m->n; i++) {
        sg_interval x, t;
        if (drop && d < drop->n && drop->v[d] == m->v[i]) {
            d++;
            continue;
        }
        if (!dom(ctx, m->v[i], &x) || !iv_mul(r, &x, &t))
            return false;
        *r = t;
    }
    return true;
}

/* The enclosure of f / drop (each monomial without `drop`'s variables), or of f when drop is NULL. */
static bool poly_range(const sg_poly *f, const sg_mono *drop, sg_poly_dom dom, void *ctx, sg_interval *r)
{
    int i;
    memset(r, 0, sizeof *r);
    for (i = 0; i < f->n; i++) {
        sg_interval t;
        if (!mono_range(&f->t[i], drop, dom, ctx, &t) || !iv_add(r, &t))
            return false;
    }
    return true;
}

/* The variables every monomial of f has (with their least multiplicity), into *m (c = 1);
 * false when there are none. */
static bool common_factor(const sg_poly *f, sg_mono *m)
{
    int i;
    if (f->n == 0)
        return false;
    *m = f->t[0];
    m->c = 1;
    for (i = 1; i < f->n && m->n; i++) {
        const sg_mono *t = &f->t[i];
        int x = 0, y = 0, k = 0;
        while (x < m->n && y < t->n) { /* intersect the sorted multisets */
            if (m->v[x] == t->v[y]) {
                m->v[k++] = m->v[x];
                x++;
                y++;
            } else if (m->v[x] < t->v[y]) {
                x++;
            } else {
                y++;
            }
        }
        m->n = (unsigned char)k;
    }
    return m->n > 0;
}

sg_tri sg_poly_decide(sg_kind op, const sg_poly *f, sg_poly_dom dom, void *ctx)
{
    sg_interval r, q, mr;
    sg_mono m;
    bool pos, neg, zero, nonzero_only = false;
    int i;

    if (!poly_range(f, NULL, dom, ctx, &r))
        return SG_TRI_UNKNOWN;
    if (common_factor(f, &m) && poly_range(f, &m, dom, ctx, &q) && mono_range(&m, NULL, dom, ctx, &mr)) {
        sg_interval fr;
        /* f = m * (f / m): the product of the two enclosures encloses f too */
        if (iv_mul(&mr, &q, &fr) && !sg_interval_meet(&r, &fr))
            return SG_TRI_UNKNOWN; /* disjoint enclosures: an empty box, which is not ours to judge */
    }
    pos = !r.lo_inf && r.lo > 0;
    neg = !r.hi_inf && r.hi < 0;
    zero = !r.lo_inf && !r.hi_inf && r.lo == 0 && r.hi == 0;
    if (!pos && !neg && !zero && (op == SG_EQ || op == SG_NE)) {
        /* no integer point solves c1*x1 + ... = -k when the gcd of the c's does not divide k */
        sg_int g = 0, k = const_term(f);
        for (i = 0; i < f->n; i++) {
            if (f->t[i].n == 0)
                continue;
            if (f->t[i].c == SG_INT_MIN)
                return SG_TRI_UNKNOWN;
            g = sg__gcd(g, f->t[i].c < 0 ? -f->t[i].c : f->t[i].c);
        }
        nonzero_only = g > 1 && k % g != 0;
    }
    switch (op) {
    case SG_EQ:
        return zero ? SG_TRI_TRUE : (pos || neg || nonzero_only) ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_NE:
        return zero ? SG_TRI_FALSE : (pos || neg || nonzero_only) ? SG_TRI_TRUE : SG_TRI_UNKNOWN;
    case SG_GE:
        return !r.lo_inf && r.lo >= 0 ? SG_TRI_TRUE : neg ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_GT:
        return pos ? SG_TRI_TRUE : !r.hi_inf && r.hi <= 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_LE:
        return !r.hi_inf && r.hi <= 0 ? SG_TRI_TRUE : pos ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_LT:
        return neg ? SG_TRI_TRUE : !r.lo_inf && r.lo >= 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    default:
        return SG_TRI_UNKNOWN;
    }
}
