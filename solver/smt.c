/*
 * smt.c - the Z3 encoding of guard expressions (include/shapegate/smt.h),
 * with exactly the semantics of sg_expr_eval(): Python floor division and
 * modulo for every sign, exact reals, strict definedness. docs/smt.md gives
 * the encoding of every kind.
 *
 * Terms: the encoding builds terms of the encoder's store (solver/term.h),
 * which makes them in Z3 only when a question needs Z3 (most checks never
 * do). References follow Z3's discipline all the same, so that the store's
 * replay is exactly the calls Z3 would have seen: each new term goes through
 * tmp(), which takes a reference and pushes it on a stack of temporaries;
 * encoding one node (and every public call) marks the stack and releases back
 * to the mark at its end, so intermediates stay alive exactly while they are
 * in use. Terms kept beyond that (the memo) get a reference of their own from
 * keep(), released in sg_smt_free().
 *
 * Errors: a builder returns NULL when memory runs out or Z3 reported an error
 * (solver/term.h); the first failure is kept in `s->failed` and every builder
 * returns NULL for a NULL argument, so a chain of builders is checked once, at
 * the end of the node.
 */
#include <string.h>

#include "solver/smt.h"
#include "solver/term.h"
#include "util/util.h"

#define SG_SMT_MAX_POW 4096                     /* largest literal exponent expanded */
#define SG_SMT_MAX_TEXT (4 * SG_EXPR_MAX_PRINT) /* bytes of one SMT-LIB rendering */

/* The terms of one expression id, each holding a reference (NULL: none). */
typedef struct sg_smt_memo {
    const sg_term *val;   /* value: Int, Real or Bool; NULL while not encoded */
    const sg_term *def;   /* definedness; NULL when always defined */
    const sg_term *holds; /* and(def, val) of a boolean, made by sg_smt_holds */
} sg_smt_memo;

struct sg_smt {
    sg_pool *pool;
    sg_terms *ts;                /* the terms, and the Z3 context once one is needed */
    const sg_term *tru;          /* referenced `true`: the definedness of total terms */
    sg_smt_memo *memo;           /* by expression id */
    size_t cap;
    const sg_term **tmp; /* referenced temporaries of the work in progress */
    size_t ntmp, tmpcap;
    int failed;          /* first failure of the current call: 0, SG_ERROR (Z3) or SG_ENOMEM */
};

/* ---- References and errors ---------------------------------------------------------------- */

static void set_failed(sg_smt *s, int code)
{
    if (!s->failed)
        s->failed = code;
}

/* The fresh result `a` of a builder, referenced until release(); NULL if the builder failed. */
static const sg_term *tmp(sg_smt *s, const sg_term *a)
{
    if (!a) {
        set_failed(s, sg_terms_failed(s->ts) == SG_ERROR ? SG_ERROR : SG_ENOMEM);
        return NULL;
    }
    if (sg__grow((void **)&s->tmp, &s->tmpcap, s->ntmp + 1, sizeof *s->tmp)) {
        set_failed(s, SG_ENOMEM);
        return NULL;
    }
    sg_t_ref(s->ts, a);
    s->tmp[s->ntmp++] = a;
    return a;
}

/* Drop the temporaries made since `mark`. */
static void release(sg_smt *s, size_t mark)
{
    while (s->ntmp > mark)
        sg_t_unref(s->ts, s->tmp[--s->ntmp]);
}

/* A reference of its own for a term the memo keeps, given back by unref(). NULL-safe. */
static const sg_term *keep(sg_smt *s, const sg_term *a)
{
    sg_t_ref(s->ts, a);
    return a;
}

static void unref(sg_smt *s, const sg_term *a) { sg_t_unref(s->ts, a); }

/* The error for the recorded failure. */
static int failure(sg_smt *s, sg_error *err)
{
    if (s->failed == SG_ENOMEM || sg_terms_failed(s->ts) == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory encoding for Z3");
    return sg_error_set(err, SG_ERROR, "Z3 error: %s", sg_terms_error_msg(s->ts));
}

/* ---- Term builders: borrowed arguments, temporary result, NULL in -> NULL out --------------- */

static const sg_term *mk1(sg_smt *s, sg_top op, const sg_term *a) { return a ? tmp(s, sg_t_app1(s->ts, op, a)) : NULL; }

static const sg_term *mk2(sg_smt *s, sg_top op, const sg_term *a, const sg_term *b)
{
    return a && b ? tmp(s, sg_t_app2(s->ts, op, a, b)) : NULL;
}

static const sg_term *ite(sg_smt *s, const sg_term *c, const sg_term *t, const sg_term *e)
{
    return c && t && e ? tmp(s, sg_t_ite(s->ts, c, t, e)) : NULL;
}

static const sg_term *neg(sg_smt *s, const sg_term *a) { return mk1(s, SG_T_UMINUS, a); }

static bool is_real(sg_smt *s, const sg_term *a) { return a && sg_t_sort(s->ts, a) == SG_TS_REAL; }

/* `a` made Real when `real` and it is an Int term; else `a` itself. */
static const sg_term *conv(sg_smt *s, const sg_term *a, bool real)
{
    return real && a && !is_real(s, a) ? mk1(s, SG_T_TO_REAL, a) : a;
}

typedef const sg_term *term;

/* A numeral from decimal text ("-7", "7/2" for a Real). */
static term numeral(sg_smt *s, const char *text, bool real)
{
    return tmp(s, sg_t_num(s->ts, text, real ? SG_TS_REAL : SG_TS_INT));
}

static term num(sg_smt *s, sg_int v, bool real)
{
    char buf[SG_INT_STRLEN];
    return numeral(s, sg_int_format(buf, v), real);
}

/* True with `*v` set when `e` is an integer literal. */
static bool int_lit(const sg_expr *e, sg_int *v)
{
    *v = sg_expr_int_value(e);
    return sg_expr_kind(e) == SG_INT;
}

/* "t != 0" for the divisor `t` of expression `be`: NULL (no condition) for a nonzero literal. */
static term nonzero(sg_smt *s, const sg_expr *be, term t)
{
    sg_int p, q;
    if (sg_expr_rational_value(be, &p, &q) && p != 0)
        return NULL;
    return mk1(s, SG_T_NOT, mk2(s, SG_T_EQ, t, num(s, 0, is_real(s, t))));
}

/*
 * Python's a // b; `lit` says b is the integer literal `v`. SMT-LIB div is
 * Euclidean, which is floor division when b > 0; for b < 0, a // b == (-a) //
 * (-b) with -b > 0.
 */
static term floordiv_lit(sg_smt *s, bool lit, sg_int v, term a, term b)
{
    char buf[SG_INT_STRLEN];
    if (lit && v > 0)
        return mk2(s, SG_T_DIV, a, b);
    if (lit && v < 0) /* -v is the literal's text without its sign */
        return mk2(s, SG_T_DIV, neg(s, a), numeral(s, sg_int_format(buf, v) + 1, false));
    return ite(s, mk2(s, SG_T_GT, b, num(s, 0, false)), mk2(s, SG_T_DIV, a, b),
               mk2(s, SG_T_DIV, neg(s, a), neg(s, b)));
}

/* Python's a % b (the divisor's sign): Euclidean mod when b is a positive literal, else a - b*(a//b). */
static term pymod_lit(sg_smt *s, bool lit, sg_int v, term a, term b)
{
    if (lit && v > 0)
        return mk2(s, SG_T_MOD, a, b);
    return mk2(s, SG_T_SUB, a, mk2(s, SG_T_MUL, b, floordiv_lit(s, lit, v, a, b)));
}

/* Python's a // b and a % b, `be` being b's expression. */
static term floordiv(sg_smt *s, const sg_expr *be, term a, term b)
{
    sg_int v;
    bool lit = int_lit(be, &v);
    return floordiv_lit(s, lit, v, a, b);
}

static term pymod(sg_smt *s, const sg_expr *be, term a, term b)
{
    sg_int v;
    bool lit = int_lit(be, &v);
    return pymod_lit(s, lit, v, a, b);
}

/* b**k for a literal 0 <= k, by square-and-multiply. */
static term pow_lit(sg_smt *s, term b, sg_int k)
{
    term acc = NULL, sq = b;
    if (k == 0)
        return num(s, 1, is_real(s, b));
    for (; k > 0; k >>= 1) {
        if (k & 1)
            acc = acc ? mk2(s, SG_T_MUL, acc, sq) : sq;
        if (k > 1)
            sq = mk2(s, SG_T_MUL, sq, sq);
    }
    return acc;
}

/* ---- Encoding of one node ------------------------------------------------------------------- */

/* The value term of an encoded expression (held by the memo). */
static term val_of(sg_smt *s, const sg_expr *e) { return s->memo[sg_expr_id(e)].val; }

/* ---- Common factors of a division ----------------------------------------------------------- */

/*
 * torch writes divisions whose dividend and divisor share a factor:
 * `Mod(8*s9*s31, 8*s31)`, `(4*s31*s9) // (2*s31)`. In Python, for every g != 0,
 * (g*x) // (g*y) == x // y and (g*x) % (g*y) == g*(x % y) (floor(gx/gy) is
 * floor(x/y)); g == 0 makes the divisor 0, undefined either way (the
 * definedness condition is the original divisor's). Z3's non-linear integer
 * reasoning is weak on such terms and strong on `x % 2`, so the encoding
 * divides the common monomial factor out: the integer gcd of the
 * coefficients and every factor (a subexpression, by node identity, with a
 * literal power) that all monomials of both sides share.
 */
#define CF_MONOS 16   /* monomials per side at most */
#define CF_FACTORS 8  /* factors per monomial at most */

typedef struct cf_mono {
    sg_int coef;
    size_t n;
    const sg_expr *f[CF_FACTORS];
    sg_int e[CF_FACTORS];
} cf_mono;

/* `m` as coef * prod f[i]**e[i]; false when it does not fit or holds a rational. */
static bool cf_read(const sg_expr *m, cf_mono *out)
{
    size_t i, j, n = sg_expr_kind(m) == SG_MUL ? sg_expr_nargs(m) : 1;
    out->coef = 1;
    out->n = 0;
    for (i = 0; i < n; i++) {
        const sg_expr *a = sg_expr_kind(m) == SG_MUL ? sg_expr_arg(m, i) : m, *base = a;
        sg_int v, k = 1;
        if (int_lit(a, &v)) {
            if (!sg__mul(out->coef, v, &out->coef))
                return false;
            continue;
        }
        if (sg_expr_kind(a) == SG_RAT)
            return false;
        if ((sg_expr_kind(a) == SG_POW || sg_expr_kind(a) == SG_POWNAT) && int_lit(sg_expr_arg(a, 1), &k) && k >= 1)
            base = sg_expr_arg(a, 0);
        else
            k = 1;
        for (j = 0; j < out->n && out->f[j] != base; j++)
            ;
        if (j == out->n) {
            if (out->n == CF_FACTORS)
                return false;
            out->f[out->n] = base;
            out->e[out->n++] = 0;
        }
        out->e[j] += k;
    }
    return true;
}

/* The monomials of `e` into `m` (at most CF_MONOS); how many, or 0 when they do not fit. */
static size_t cf_monos(const sg_expr *e, cf_mono *m)
{
    size_t i, n = sg_expr_kind(e) == SG_ADD ? sg_expr_nargs(e) : 1;
    if (n > CF_MONOS)
        return 0;
    for (i = 0; i < n; i++)
        if (!cf_read(sg_expr_kind(e) == SG_ADD ? sg_expr_arg(e, i) : e, &m[i]))
            return 0;
    return n;
}

/* The exponent of `f` in `m`, 0 when absent. */
static sg_int cf_exp(const cf_mono *m, const sg_expr *f)
{
    size_t j;
    for (j = 0; j < m->n; j++)
        if (m->f[j] == f)
            return m->e[j];
    return 0;
}

/* f**k as a term (the factor's encoded value). */
static term cf_pow(sg_smt *s, const sg_expr *f, sg_int k) { return pow_lit(s, val_of(s, f), k); }

/* sum over `m` of coef/g * prod f**(e - common), the common exponents those of `g0` (`ge`). */
static term cf_quot(sg_smt *s, const cf_mono *m, size_t n, sg_int g, const cf_mono *g0, const sg_int *ge)
{
    term sum = NULL;
    size_t i, j;
    for (i = 0; i < n; i++) {
        term t = num(s, m[i].coef / g, false);
        for (j = 0; j < m[i].n; j++) {
            sg_int k = m[i].e[j], c = 0;
            size_t q;
            for (q = 0; q < g0->n; q++)
                if (g0->f[q] == m[i].f[j])
                    c = ge[q];
            if (k > c)
                t = mk2(s, SG_T_MUL, t, cf_pow(s, m[i].f[j], k - c));
        }
        sum = sum ? mk2(s, SG_T_ADD, sum, t) : t;
    }
    return sum;
}

/*
 * Python's p // q (`mod` false) or p % q (`mod` true) of the Int terms of
 * `pe` and `qe`, with their common factor divided out; NULL when they have
 * none (or do not fit), and the caller encodes the division as it stands.
 */
static term cf_division(sg_smt *s, bool mod, const sg_expr *pe, const sg_expr *qe)
{
    cf_mono *pm, *qm;
    size_t np, nq, i, j;
    sg_int g = 0, ge[CF_FACTORS], v = 0;
    term r = NULL, x, y, gt;
    bool any = false, lit;

    if (!(pm = sg__calloc(2 * CF_MONOS, sizeof *pm))) {
        set_failed(s, SG_ENOMEM);
        return NULL;
    }
    qm = pm + CF_MONOS;
    if (!(np = cf_monos(pe, pm)) || !(nq = cf_monos(qe, qm)))
        goto cleanup;
    for (i = 0; i < np + nq; i++) {
        const cf_mono *m = i < np ? &pm[i] : &qm[i - np];
        if (m->coef == SG_INT_MIN)
            goto cleanup;
        g = sg__gcd(g, m->coef);
    }
    if (g == 0)
        goto cleanup;
    /* the factors every monomial has, at their least exponent (those of the first monomial) */
    for (j = 0; j < pm[0].n; j++) {
        ge[j] = pm[0].e[j];
        for (i = 1; i < np + nq; i++) {
            sg_int k = cf_exp(i < np ? &pm[i] : &qm[i - np], pm[0].f[j]);
            ge[j] = k < ge[j] ? k : ge[j];
        }
        any |= ge[j] > 0;
    }
    if (g == 1 && !any)
        goto cleanup;
    for (i = 0; i < np + nq; i++) /* every factor is an Int term */
        for (j = 0; j < (i < np ? pm[i].n : qm[i - np].n); j++)
            if (is_real(s, val_of(s, i < np ? pm[i].f[j] : qm[i - np].f[j])))
                goto cleanup;
    x = cf_quot(s, pm, np, g, &pm[0], ge);
    y = cf_quot(s, qm, nq, g, &pm[0], ge);
    /* the divisor left is a literal when it is one monomial whose every factor went into g */
    lit = nq == 1;
    for (i = 0; lit && i < qm[0].n; i++) {
        sg_int c = 0;
        for (j = 0; j < pm[0].n; j++)
            if (pm[0].f[j] == qm[0].f[i])
                c = ge[j];
        lit = c == qm[0].e[i];
    }
    v = lit ? qm[0].coef / g : 0;
    gt = num(s, g, false);
    for (j = 0; j < pm[0].n; j++)
        if (ge[j] > 0)
            gt = mk2(s, SG_T_MUL, gt, cf_pow(s, pm[0].f[j], ge[j]));
    if (lit && v == 1) /* x // 1 == x, x % 1 == 0 */
        r = mod ? num(s, 0, false) : x;
    else
        r = mod ? mk2(s, SG_T_MUL, gt, pymod_lit(s, lit, v, x, y)) : floordiv_lit(s, lit, v, x, y);
cleanup:
    sg_free(pm);
    return r;
}

/* Add, Mul, And or Or of all arguments, Int ones made Real when `real`. */
static term enc_nary(sg_smt *s, const sg_expr *e, sg_top op, bool real)
{
    size_t i, n = sg_expr_nargs(e);
    term *args = sg__calloc(n, sizeof *args), r = NULL;
    if (!args) {
        set_failed(s, SG_ENOMEM);
        return NULL;
    }
    for (i = 0; i < n; i++)
        args[i] = conv(s, val_of(s, sg_expr_arg(e, i)), real);
    if (!s->failed)
        r = tmp(s, sg_t_app(s->ts, op, n, args));
    sg_free(args);
    return r;
}

/* Max or Min as an ite chain. */
static term enc_maxmin(sg_smt *s, const sg_expr *e, bool real)
{
    size_t i;
    sg_top better = sg_expr_kind(e) == SG_MAX ? SG_T_GT : SG_T_LT;
    term m = conv(s, val_of(s, sg_expr_arg(e, 0)), real);
    for (i = 1; i < sg_expr_nargs(e); i++) {
        term a = conv(s, val_of(s, sg_expr_arg(e, i)), real);
        m = ite(s, mk2(s, better, a, m), a, m);
    }
    return m;
}

/* Piecewise((e1, c1), ..., (en, cn)) = ite(c1, e1, ite(c2, e2, ... en)); *cond = "some ci holds". */
static term enc_piecewise(sg_smt *s, const sg_expr *e, bool real, term *cond)
{
    size_t i = sg_expr_nargs(e);
    term v = conv(s, val_of(s, sg_expr_arg(e, i - 2)), real);
    term any = val_of(s, sg_expr_arg(e, i - 1));
    for (i -= 2; i >= 2; i -= 2) {
        term c = val_of(s, sg_expr_arg(e, i - 1));
        v = ite(s, c, conv(s, val_of(s, sg_expr_arg(e, i - 2)), real), v);
        any = mk2(s, SG_T_OR, c, any);
    }
    *cond = any;
    return v;
}

/* TruncToInt, FloorToInt or CeilToInt of a Real term (to_int is floor). */
static term enc_round(sg_smt *s, sg_kind k, term x)
{
    term fl = k != SG_CEIL ? mk1(s, SG_T_TO_INT, x) : NULL;
    term ce = k != SG_FLOOR ? neg(s, mk1(s, SG_T_TO_INT, neg(s, x))) : NULL;
    return k == SG_FLOOR ? fl : k == SG_CEIL ? ce : ite(s, mk2(s, SG_T_GE, x, num(s, 0, true)), fl, ce);
}

/*
 * PowByNatural(b, e). A literal e is expanded; otherwise Z3's ^, which leaves
 * 0^0 unspecified and on Ints yields a Real in Z3 4.8 (an Int in later ones).
 */
static int enc_pownat(sg_smt *s, const sg_expr *ee, term b, term e, term *out, term *cond,
                      sg_error *err)
{
    sg_int k;
    term p;
    if (int_lit(ee, &k)) {
        if (k > SG_SMT_MAX_POW)
            return sg_error_set(err, SG_EUNSUPPORTED, "an exponent over %d", SG_SMT_MAX_POW);
        *cond = k < 0 ? tmp(s, sg_t_false(s->ts)) : NULL;
        *out = k < 0 ? num(s, 0, false) : pow_lit(s, b, k);
        return 0;
    }
    p = mk2(s, SG_T_POWER, b, e);
    p = is_real(s, p) ? mk1(s, SG_T_TO_INT, p) : p;
    /* bases -1, 0 and 1 explicitly: Z3 evaluates b^e itself only for small e */
    p = ite(s, mk2(s, SG_T_EQ, b, num(s, -1, false)),
            ite(s, mk2(s, SG_T_EQ, mk2(s, SG_T_MOD, e, num(s, 2, false)), num(s, 0, false)), num(s, 1, false),
                num(s, -1, false)),
            ite(s, mk2(s, SG_T_EQ, b, num(s, 0, false)), num(s, 0, false),
                ite(s, mk2(s, SG_T_EQ, b, num(s, 1, false)), num(s, 1, false), p)));
    *out = ite(s, mk2(s, SG_T_EQ, e, num(s, 0, false)), num(s, 1, false), p);
    *cond = mk2(s, SG_T_GE, e, num(s, 0, false));
    return 0;
}

/* A relation of two numbers (as Reals when mixed) or, for Eq/Ne, of two booleans. */
static term enc_rel(sg_smt *s, sg_kind k, term a, term b)
{
    static const sg_top ops[] = {SG_T_EQ, SG_T_EQ, SG_T_LT, SG_T_LE, SG_T_GT, SG_T_GE};
    bool real = is_real(s, a) || is_real(s, b);
    term r = mk2(s, ops[k - SG_EQ], conv(s, a, real), conv(s, b, real));
    return k == SG_NE ? mk1(s, SG_T_NOT, r) : r;
}

/* The Real numeral p/q of an SG_RAT. */
static term rat_lit(sg_smt *s, const sg_expr *e)
{
    sg_int p = 0, q = 1;
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN], text[2 * SG_INT_STRLEN + 1];
    sg_expr_rational_value(e, &p, &q);
    snprintf(text, sizeof text, "%s/%s", sg_int_format(a, p), sg_int_format(b, q));
    return numeral(s, text, true);
}

/* True when `n` arguments suit kind `k` (constructors guarantee it; checked before indexing). */
static bool arity_ok(sg_kind k, size_t n)
{
    switch (k) {
    case SG_INT: case SG_RAT: case SG_TRUE: case SG_FALSE: case SG_INF: case SG_SYM: return n == 0;
    case SG_ADD: case SG_MUL: case SG_MAX: case SG_MIN: case SG_AND: case SG_OR: return n >= 1;
    case SG_PIECEWISE: return n >= 2 && n % 2 == 0;
    case SG_MODIDX: case SG_WHERE: return n == 3;
    case SG_TRUNC: case SG_FLOOR: case SG_CEIL: case SG_IDENTITY: case SG_NOT: return n == 1;
    default: return n == 2;
    }
}

/*
 * The value of node `e`, whose arguments are encoded, into *out, and its own
 * definedness condition beyond its arguments' into *cond (NULL for none).
 * Both are temporaries.
 */
static int enc_node(sg_smt *s, const sg_expr *e, term *out, term *cond, sg_error *err)
{
    sg_kind k = sg_expr_kind(e);
    size_t n = sg_expr_nargs(e);
    bool real = sg_expr_sort(e) == SG_SORT_REAL;
    const sg_expr *e0 = sg_expr_arg(e, 0), *e1 = sg_expr_arg(e, 1), *e2 = sg_expr_arg(e, 2);
    term x = n > 0 ? val_of(s, sg_expr_arg(e, 0)) : NULL;
    term y = n > 1 ? val_of(s, e1) : NULL, z = n > 2 ? val_of(s, e2) : NULL, c1, c2;
    sg_int v;

    *out = *cond = NULL;
    if (!arity_ok(k, n))
        return sg_error_set(err, SG_EINVALID, "%s with %zu arguments", sg_kind_name(k), n);
    switch (k) {
    case SG_INT: *out = num(s, sg_expr_int_value(e), false); break;
    case SG_RAT: *out = rat_lit(s, e); break;
    case SG_TRUE: *out = tmp(s, sg_t_true(s->ts)); break;
    case SG_FALSE: *out = tmp(s, sg_t_false(s->ts)); break;
    case SG_INF: return sg_error_set(err, SG_EUNSUPPORTED, "an infinity has no finite Z3 encoding");
    case SG_SYM:
        *out = tmp(s, sg_t_const(s->ts, sg_expr_symbol_name(e), SG_TS_INT));
        break;
    case SG_ADD: *out = enc_nary(s, e, SG_T_ADD, real); break;
    case SG_MUL: *out = enc_nary(s, e, SG_T_MUL, real); break;
    case SG_AND: *out = enc_nary(s, e, SG_T_AND, false); break;
    case SG_OR: *out = enc_nary(s, e, SG_T_OR, false); break;
    case SG_POW:
        if (!int_lit(e1, &v) || v < 0 || v > SG_SMT_MAX_POW)
            return sg_error_set(err, SG_EUNSUPPORTED, "Pow needs a literal exponent 0..%d", SG_SMT_MAX_POW);
        *out = pow_lit(s, x, v);
        break;
    case SG_POWNAT: return enc_pownat(s, e1, x, y, out, cond, err);
    case SG_FLOORDIV: case SG_CLEANDIV:
        if (is_real(s, x) || is_real(s, y) || !(*out = cf_division(s, false, e0, e1)))
            *out = floordiv(s, e1, x, y);
        break;
    case SG_CEILDIV: *out = neg(s, floordiv(s, e1, neg(s, x), y)); break;
    case SG_MOD: case SG_PYMOD:
        if (is_real(s, x) || is_real(s, y) || !(*out = cf_division(s, true, e0, e1)))
            *out = pymod(s, e1, x, y);
        break;
    case SG_MODIDX: *out = pymod(s, e2, floordiv(s, e1, x, y), z); break;
    case SG_TRUEDIV: *out = mk2(s, SG_T_DIV, conv(s, x, true), conv(s, y, true)); break;
    case SG_TRUNC: case SG_FLOOR: case SG_CEIL: *out = is_real(s, x) ? enc_round(s, k, x) : x; break;
    case SG_MAX: case SG_MIN: *out = enc_maxmin(s, e, real); break;
    case SG_WHERE: *out = ite(s, x, conv(s, y, real), conv(s, z, real)); break;
    case SG_PIECEWISE: *out = enc_piecewise(s, e, real, cond); break;
    case SG_IDENTITY: *out = x; break;
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE: *out = enc_rel(s, k, x, y); break;
    case SG_NOT: *out = mk1(s, SG_T_NOT, x); break;
    default: return sg_error_set(err, SG_EINVALID, "unknown expression kind %d", (int)k);
    }
    if (k >= SG_FLOORDIV && k <= SG_TRUEDIV) { /* the division family: divisors must be nonzero */
        c1 = nonzero(s, e1, y);
        c2 = k == SG_MODIDX ? nonzero(s, e2, z) : NULL;
        *cond = c1 && c2 ? mk2(s, SG_T_AND, c1, c2) : c1 ? c1 : c2;
    }
    return 0;
}

/* and(definedness of e's arguments, cond), or NULL when that is trivially true. */
static term enc_defined(sg_smt *s, const sg_expr *e, term cond)
{
    size_t i, m = 0, n = sg_expr_nargs(e);
    term *parts, r;
    if (!(parts = sg__calloc(n + 1, sizeof *parts))) {
        set_failed(s, SG_ENOMEM);
        return NULL;
    }
    for (i = 0; i < n; i++) {
        term d = s->memo[sg_expr_id(sg_expr_arg(e, i))].def;
        if (d && (m == 0 || parts[m - 1] != d)) /* skip a repeat of the previous argument's */
            parts[m++] = d;
    }
    if (cond)
        parts[m++] = cond;
    r = m == 0 ? NULL : m == 1 ? parts[0] : tmp(s, sg_t_app(s->ts, SG_T_AND, m, parts));
    sg_free(parts);
    return r;
}

/* Encode `e` and everything below it into the memo; recursion is bounded by sg_expr_depth(). */
static int enc(sg_smt *s, const sg_expr *e, sg_error *err)
{
    uint32_t id = sg_expr_id(e);
    size_t i, mark = s->ntmp;
    term v = NULL, cond = NULL, d = NULL;
    int rc;

    if (id >= s->cap)
        return sg_error_set(err, SG_EINVALID, "expression %u is not from the encoder's pool", (unsigned)id);
    if (s->memo[id].val)
        return 0;
    for (i = 0; i < sg_expr_nargs(e); i++)
        if ((rc = enc(s, sg_expr_arg(e, i), err)) < 0)
            return rc;
    rc = enc_node(s, e, &v, &cond, err);
    if (rc == 0)
        d = enc_defined(s, e, cond);
    if (rc == 0 && (s->failed || !v))
        rc = failure(s, err);
    if (rc == 0) {
        s->memo[id].val = keep(s, v);
        s->memo[id].def = keep(s, d);
    }
    release(s, mark);
    return rc;
}

/* Start a public call on `e`: reset the failure, grow the memo to the pool, encode `e`. */
static int begin(sg_smt *s, const sg_expr *e, sg_error *err)
{
    if (!s || !e)
        return sg_error_set(err, SG_EINVALID, "sg_smt: NULL argument");
    s->failed = 0;
    if (sg_expr_id(e) >= sg_pool_size(s->pool)) /* the memo is by id: only the pool's own chain */
        return sg_error_set(err, SG_EINVALID, "sg_smt: an expression of another pool");
    if (sg__grow_zeroed((void **)&s->memo, &s->cap, sg_pool_size(s->pool), sizeof *s->memo))
        return sg_error_set(err, SG_ENOMEM, "out of memory growing the Z3 term memo");
    return enc(s, e, err);
}

/* ---- Public API ---------------------------------------------------------------------------- */

int sg_smt_new(sg_smt **out, sg_pool *pool, sg_error *err) { return sg_smt_new_in(out, pool, NULL, err); }

int sg_smt_new_in(sg_smt **out, sg_pool *pool, sg_ctxpool *contexts, sg_error *err)
{
    sg_smt *s;
    int rc;

    *out = NULL;
    if (!(s = sg__calloc(1, sizeof *s)))
        return sg_error_set(err, SG_ENOMEM, "out of memory creating the Z3 encoder");
    s->pool = pool;
    if ((rc = sg_terms_new(&s->ts, contexts, err))) {
        sg_free(s);
        return rc;
    }
    s->tru = keep(s, tmp(s, sg_t_true(s->ts)));
    release(s, 0);
    if (!s->tru) {
        rc = failure(s, err);
        sg_smt_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void sg_smt_free(sg_smt *s)
{
    size_t i;
    if (!s)
        return;
    if (sg_terms_live(s->ts)) { /* else no reference was taken in Z3: nothing to give back */
        release(s, 0);
        for (i = 0; i < s->cap; i++) {
            unref(s, s->memo[i].val);
            unref(s, s->memo[i].def);
            unref(s, s->memo[i].holds);
        }
        unref(s, s->tru);
    }
    sg_terms_free(s->ts);
    sg_free(s->memo);
    sg_free(s->tmp);
    sg_free(s);
}

Z3_context sg_smt_context(sg_smt *smt) { return smt ? sg_terms_context(smt->ts) : NULL; }

sg_terms *sg_smt_terms(sg_smt *smt) { return smt ? smt->ts : NULL; }

Z3_ast sg_smt_z3(sg_smt *smt, const sg_term *t) { return smt ? sg_t_z3(smt->ts, t) : NULL; }

void sg_smt_no_reuse(sg_smt *smt)
{
    if (smt)
        sg_terms_no_reuse(smt->ts);
}

int sg_smt_encode(sg_smt *smt, const sg_expr *e, const sg_term **value, const sg_term **defined, sg_error *err)
{
    int rc = begin(smt, e, err);
    if (rc < 0)
        return rc;
    if (value)
        *value = smt->memo[sg_expr_id(e)].val;
    if (defined)
        *defined = smt->memo[sg_expr_id(e)].def ? smt->memo[sg_expr_id(e)].def : smt->tru;
    return 0;
}

int sg_smt_holds(sg_smt *smt, const sg_expr *e, const sg_term **out, sg_error *err)
{
    sg_smt_memo *m;
    int rc = begin(smt, e, err);
    if (rc < 0)
        return rc;
    if (sg_expr_sort(e) != SG_SORT_BOOL)
        return sg_error_set(err, SG_EINVALID, "sg_smt_holds needs a boolean expression");
    m = &smt->memo[sg_expr_id(e)];
    if (m->def && !m->holds) {
        m->holds = keep(smt, mk2(smt, SG_T_AND, m->def, m->val));
        release(smt, 0);
        if (!m->holds)
            return failure(smt, err);
    }
    *out = m->def ? m->holds : m->val;
    return 0;
}

const sg_term *sg_smt_symbol(sg_smt *smt, const sg_expr *sym)
{
    if (!sym || sg_expr_kind(sym) != SG_SYM || begin(smt, sym, NULL) < 0)
        return NULL;
    return smt->memo[sg_expr_id(sym)].val;
}

/* Append the SMT-LIB text of term `t`, copied at once (Z3 reuses its buffer on the next call). */
static void put_term(sg_smt *s, sg_buf *b, const char *before, const sg_term *t, const char *after)
{
    Z3_ast a = sg_t_z3(s->ts, t);
    Z3_context c = sg_terms_context(s->ts);
    Z3_string text = a ? Z3_ast_to_string(c, a) : NULL;
    if (!text || Z3_get_error_code(c) != Z3_OK)
        set_failed(s, SG_ERROR);
    else
        sg_buf_printf(b, "%s%s%s", before, text, after);
}

int sg_smt_to_smtlib(char **out, sg_smt *smt, const sg_expr *e, sg_error *err)
{
    const sg_expr **syms = NULL;
    size_t i, nsyms = 0;
    term value = NULL, defined = NULL;
    sg_buf b;
    int rc;

    *out = NULL;
    sg_buf_init(&b, SG_SMT_MAX_TEXT);
    if ((rc = sg_smt_encode(smt, e, &value, &defined, err)) < 0 ||
        (rc = sg_expr_symbols(&syms, &nsyms, smt->pool, e, err)) < 0)
        goto cleanup;
    if (sg_expr_sort(e) == SG_SORT_BOOL && (rc = sg_smt_holds(smt, e, &value, err)) < 0)
        goto cleanup;
    for (i = 0; i < nsyms; i++) /* Z3 prints the name as in the terms, |quoted| where needed */
        put_term(smt, &b, "(declare-const ", smt->memo[sg_expr_id(syms[i])].val, " Int)\n");
    if (sg_expr_sort(e) == SG_SORT_BOOL) {
        put_term(smt, &b, "(assert ", value, ")\n");
    } else {
        put_term(smt, &b, sg_expr_sort(e) == SG_SORT_INT ? "(define-fun value () Int " : "(define-fun value () Real ",
                 value, ")\n");
        put_term(smt, &b, "(define-fun defined () Bool ", defined, ")\n");
    }
    if (smt->failed)
        rc = failure(smt, err);
    else if (b.failed == SG_ELIMIT)
        rc = sg_error_set(err, SG_ELIMIT, "SMT-LIB text over %zu bytes", (size_t)SG_SMT_MAX_TEXT);
    else if (b.failed || !(*out = sg_buf_take(&b)))
        rc = sg_error_set(err, b.failed ? b.failed : SG_ENOMEM, "cannot build the SMT-LIB text");
cleanup:
    sg_free(syms);
    sg_buf_dispose(&b);
    return rc;
}

/* Parse the Z3 integer numeral `a`: SG_EOVERFLOW beyond 128 bits. */
static int numeral_int(Z3_context c, Z3_ast a, sg_int *out, sg_error *err)
{
    Z3_string text = a ? Z3_get_numeral_string(c, a) : NULL;
    int rc;
    if (!text || Z3_get_error_code(c) != Z3_OK)
        return sg_error_set(err, SG_ERROR, "Z3 did not give a numeral");
    if ((rc = sg_int_parse(out, text, strlen(text))) == SG_EOVERFLOW)
        return sg_error_set(err, rc, "Z3 value %.60s is beyond 128 bits", text);
    return rc < 0 ? sg_error_set(err, SG_ERROR, "Z3 numeral %.60s is not an integer", text) : 0;
}

/* What is left unevaluated after model_eval() is a power b^e with e > SG_SMT_MAX_POW (and |b| > 1). */
static int unevaluated(sg_error *err)
{
    return sg_error_set(err, SG_EOVERFLOW, "a power with an exponent over %d (beyond 128 bits)", SG_SMT_MAX_POW);
}

/* `a` referenced, or NULL on a Z3 error (then nothing is referenced). */
static Z3_ast z3_ref(Z3_context c, Z3_ast a)
{
    if (!a || Z3_get_error_code(c) != Z3_OK)
        return NULL;
    Z3_inc_ref(c, a);
    return a;
}

/* Convert the evaluated term `r` into an sg_value. */
static int to_value(Z3_context c, Z3_ast r, sg_value *out, sg_error *err)
{
    Z3_sort_kind sk = Z3_get_sort_kind(c, Z3_get_sort(c, r));
    Z3_ast num_ast, den_ast;
    int rc;
    out->den = 1;
    if (sk == Z3_BOOL_SORT ? Z3_get_bool_value(c, r) == Z3_L_UNDEF : !Z3_is_numeral_ast(c, r))
        return unevaluated(err);
    if (sk == Z3_BOOL_SORT) {
        out->kind = SG_VAL_BOOL;
        out->num = Z3_get_bool_value(c, r) == Z3_L_TRUE;
        return 0;
    }
    if (sk == Z3_INT_SORT) {
        out->kind = SG_VAL_INT;
        return numeral_int(c, r, &out->num, err);
    }
    out->kind = SG_VAL_REAL; /* Z3 keeps rationals reduced, with a positive denominator */
    num_ast = z3_ref(c, Z3_get_numerator(c, r));
    den_ast = z3_ref(c, Z3_get_denominator(c, r));
    rc = numeral_int(c, num_ast, &out->num, err);
    if (rc == 0)
        rc = numeral_int(c, den_ast, &out->den, err);
    if (num_ast)
        Z3_dec_ref(c, num_ast);
    if (den_ast)
        Z3_dec_ref(c, den_ast);
    return rc;
}

/*
 * Evaluate `a` in model `m` with completion, referenced (NULL on failure).
 * Z3's evaluator leaves b^e unexpanded for e > 64 (its rewriter's max_degree),
 * so a result that is not a numeral or true/false is simplified again with
 * max_degree raised to SG_SMT_MAX_POW.
 */
static Z3_ast model_eval(Z3_context c, Z3_model m, Z3_ast a)
{
    Z3_ast r = NULL, simple;
    Z3_params ps;
    if (!a || !Z3_model_eval(c, m, a, true, &r) || !(r = z3_ref(c, r)))
        return NULL;
    if (Z3_is_numeral_ast(c, r) || Z3_get_bool_value(c, r) != Z3_L_UNDEF)
        return r;
    ps = Z3_mk_params(c);
    Z3_params_inc_ref(c, ps);
    Z3_params_set_uint(c, ps, Z3_mk_string_symbol(c, "max_degree"), SG_SMT_MAX_POW);
    simple = z3_ref(c, Z3_simplify_ex(c, r, ps));
    Z3_params_dec_ref(c, ps);
    Z3_dec_ref(c, r);
    return simple;
}

int sg_smt_eval(sg_value *out, sg_smt *smt, const sg_expr *e, const sg_int *values, size_t nvalues,
                sg_error *err)
{
    const sg_expr **syms = NULL;
    size_t i, nsyms = 0;
    Z3_context c;
    Z3_model model = NULL;
    Z3_ast rd = NULL, rv = NULL;
    term value, defined;
    int rc;

    if ((rc = sg_smt_encode(smt, e, &value, &defined, err)) < 0 ||
        (rc = sg_expr_symbols(&syms, &nsyms, smt->pool, e, err)) < 0)
        return rc;
    if (!(c = sg_smt_context(smt))) {
        rc = failure(smt, err);
        goto cleanup;
    }
    model = Z3_mk_model(c);
    if (!model || Z3_get_error_code(c) != Z3_OK) {
        model = NULL;
        rc = sg_error_set(err, SG_ERROR, "Z3 could not create a model");
        goto cleanup;
    }
    Z3_model_inc_ref(c, model);
    for (i = 0; i < nsyms; i++) {
        uint32_t idx = sg_expr_symbol_index(syms[i]);
        Z3_app sym = Z3_to_app(c, sg_t_z3(smt->ts, smt->memo[sg_expr_id(syms[i])].val));
        term lit = idx < nvalues && values ? num(smt, values[idx], false) : NULL;
        if (!lit) {
            rc = smt->failed ? failure(smt, err)
                             : sg_error_set(err, SG_EINVALID, "no value for symbol %s", sg_expr_symbol_name(syms[i]));
            goto cleanup;
        }
        Z3_add_const_interp(c, model, Z3_get_app_decl(c, sym), sg_t_z3(smt->ts, lit));
        if (Z3_get_error_code(c) != Z3_OK) {
            rc = sg_error_set(err, SG_ERROR, "Z3 rejected the value of %s", sg_expr_symbol_name(syms[i]));
            goto cleanup;
        }
    }
    if (!(rd = model_eval(c, model, sg_t_z3(smt->ts, defined)))) {
        rc = sg_error_set(err, SG_ERROR, "Z3 could not evaluate the definedness");
    } else if (Z3_get_bool_value(c, rd) == Z3_L_FALSE) {
        rc = sg_error_set(err, SG_EUNDEFINED, "undefined under these values (Python would raise)");
    } else if (Z3_get_bool_value(c, rd) != Z3_L_TRUE) {
        rc = unevaluated(err);
    } else if (!(rv = model_eval(c, model, sg_t_z3(smt->ts, value)))) {
        rc = sg_error_set(err, SG_ERROR, "Z3 could not evaluate the value");
    } else {
        rc = to_value(c, rv, out, err);
    }
cleanup:
    release(smt, 0);
    if (rd)
        Z3_dec_ref(c, rd);
    if (rv)
        Z3_dec_ref(c, rv);
    if (model)
        Z3_model_dec_ref(c, model);
    sg_free(syms);
    return rc;
}

int sg_expr_to_smtlib(char **out, sg_pool *pool, const sg_expr *e, sg_error *err)
{
    sg_smt *smt = NULL;
    int rc;

    *out = NULL;
    if ((rc = sg_smt_new(&smt, pool, err)) != 0)
        return rc;
    rc = sg_smt_to_smtlib(out, smt, e, err);
    sg_smt_free(smt);
    return rc;
}
