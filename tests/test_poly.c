/*
 * test_poly.c - expressions read as polynomials and relations decided by sign
 * (expr/poly.c), against exact evaluation (expr/eval.c: Python's integers):
 *
 * 1. Unit cases: the identities and factored signs the presolve relies on
 *    (products of dims once a derived dim is substituted), and what is not read.
 * 2. A property test: random integer expressions (sums, products, powers, //, %
 *    and CeilDiv by literals of either sign) over three symbols, each an affine
 *    form c*v + k of a variable, on random small boxes. Whenever an expression
 *    is read, its polynomial equals the expression at every point of the box;
 *    whenever a relation is decided, TRUE (FALSE) means it holds (fails) at
 *    every point. Points where evaluation overflows are skipped.
 *
 *   SG_POLY_SEED   PRNG seed (default 1)
 *   SG_POLY_COUNT  random relations (default 20000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "expr/poly.h"
#include "test.h"

#define NVAR 3

/* symbol s<i> = coef[i] * v<i> + off[i]; v<i> in box[i] */
static struct {
    sg_pool *pool;
    sg_int coef[NVAR], off[NVAR];
    sg_interval box[NVAR];
} S;

static bool sym_form(void *ctx, const sg_expr *sym, sg_lin *f, int depth)
{
    size_t i = sg_expr_symbol_index(sym);
    (void)ctx;
    (void)depth;
    memset(f, 0, sizeof *f);
    if (i >= NVAR)
        return false;
    f->k = S.off[i];
    return S.coef[i] == 0 || sg_lin_add_term(f, i, S.coef[i]);
}

static bool box_dom(void *ctx, size_t v, sg_interval *out)
{
    (void)ctx;
    if (v >= NVAR)
        return false;
    *out = S.box[v];
    return true;
}

static const sg_expr *parse(const char *text)
{
    const sg_expr *e = NULL;
    sg_error err = SG_ERROR_INIT;
    if (sg_expr_parse(&e, S.pool, text, strlen(text), &err) != 0) {
        fprintf(stderr, "parse %s: %s\n", text, err.msg);
        return NULL;
    }
    return e;
}

/* The relation `text` decided over the current box through its polynomial (UNKNOWN when not read). */
static sg_tri decide(const char *text)
{
    const sg_expr *e = parse(text);
    sg_poly a, b;
    unsigned work = 0;
    if (!e || sg_expr_nargs(e) != 2 || !sg_expr_poly(sg_expr_arg(e, 0), sym_form, NULL, &work, 4096, &a, 0) ||
        !sg_expr_poly(sg_expr_arg(e, 1), sym_form, NULL, &work, 4096, &b, 0) || !sg_poly_sub(&a, &b))
        return SG_TRI_UNKNOWN;
    return sg_poly_decide(sg_expr_kind(e), &a, box_dom, NULL);
}

static void setup(void)
{
    int i;
    sg_pool_free(S.pool);
    S.pool = NULL;
    CHECK(sg_pool_new(&S.pool, NULL) == 0);
    /* intern s0, s1, s2 in order: symbol index i is s<i> */
    for (i = 0; i < NVAR; i++) {
        char name[8];
        snprintf(name, sizeof name, "s%d", i);
        CHECK(sg_expr_symbol(S.pool, name, strlen(name)) != NULL);
        S.coef[i] = 1;
        S.off[i] = 0;
        S.box[i].lo = 2;
        S.box[i].hi = 64;
        S.box[i].lo_inf = S.box[i].hi_inf = false;
    }
}

/* attention_heads_nontensor's guards once D = 4*_D (s1 = 4*v1), B = s0, T = s2: each is decided
 * without enumerating the 63^3 points */
static void test_products_of_dims(void)
{
    setup();
    S.coef[1] = 4;
    S.box[1].hi = 4096;
    CHECK_EQ_INT(decide("Eq(s2*s1*s0, 4*s2*s0*((s1//4)))"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("Eq(s2*s1, 4*s2*((s1//4)))"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("Ne((s1//4), s2*s1)"), SG_TRI_TRUE);       /* v1*(1 - 4*s2) != 0 */
    CHECK_EQ_INT(decide("Ne(s2*s1, 4*((s1//4)))"), SG_TRI_TRUE);   /* 4*v1*(s2 - 1) != 0 */
    CHECK_EQ_INT(decide("4*s2*s0*((s1//4)) >= 2"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("Eq(Mod(s1, 4), 0)"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("Eq(Mod(s1 + 6, 4), 2)"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("Eq(s1, 4*((s1//4)) + 1)"), SG_TRI_FALSE);
    CHECK_EQ_INT(decide("s2*s1 < 4*s0"), SG_TRI_UNKNOWN);           /* holds somewhere, fails somewhere */
    CHECK_EQ_INT(decide("Eq(2*s0*s2, 2*s0 + 1)"), SG_TRI_FALSE);    /* odd = even: by the gcd */
    /* not read: a division the dividend's coefficients do not carry, a division by a symbol */
    S.coef[1] = 1;
    CHECK_EQ_INT(decide("Eq(s2*s1, 4*s2*((s1//4)))"), SG_TRI_UNKNOWN);
    CHECK_EQ_INT(decide("Eq(s2*s1, s2*(s1//s0)*s0)"), SG_TRI_UNKNOWN);
    /* a sign that changes on the box: no conclusion from the factor */
    S.box[0].lo = -3;
    CHECK_EQ_INT(decide("Ne(s0*s2, s0)"), SG_TRI_UNKNOWN);
    /* unbounded: s0*s2 >= 4 on s0, s2 >= 2 */
    S.box[0].lo = 2;
    S.box[0].hi_inf = S.box[2].hi_inf = true;
    CHECK_EQ_INT(decide("s0*s2 >= 4"), SG_TRI_TRUE);
    CHECK_EQ_INT(decide("s0*s2 <= 10**6"), SG_TRI_UNKNOWN);
}

/* ---- property test ---------------------------------------------------------------------------- */

static uint64_t rng = 1;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}
static int rnd_in(int lo, int hi) { return lo + (int)rnd((unsigned)(hi - lo + 1)); }

typedef struct sbuf {
    char s[2048];
    size_t n;
} sbuf;

static void put(sbuf *b, const char *fmt, int v)
{
    int w = snprintf(b->s + b->n, sizeof b->s - b->n, fmt, v);
    if (w > 0 && (size_t)w < sizeof b->s - b->n)
        b->n += (size_t)w;
}

static void puts_b(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (n < sizeof b->s - b->n) {
        memcpy(b->s + b->n, s, n + 1);
        b->n += n;
    }
}

static void gen(sbuf *b, int depth)
{
    static const char *const div[] = {"FloorDiv(", "Mod(", "CeilDiv("};
    int k = depth >= 4 ? rnd(2) : rnd(8);
    switch (k) {
    case 0:
        put(b, "%d", rnd_in(-9, 9));
        return;
    case 1:
        put(b, "s%d", rnd(NVAR));
        return;
    case 2: case 3:
        puts_b(b, "(");
        gen(b, depth + 1);
        puts_b(b, rnd(3) ? " + " : " - ");
        gen(b, depth + 1);
        puts_b(b, ")");
        return;
    case 4: case 5:
        puts_b(b, "(");
        gen(b, depth + 1);
        puts_b(b, "*");
        gen(b, depth + 1);
        puts_b(b, ")");
        return;
    case 6: {
        int d = rnd_in(-6, 6);
        puts_b(b, div[rnd(3)]);
        gen(b, depth + 1);
        put(b, ", %d)", d == 0 ? 4 : d);
        return;
    }
    default:
        puts_b(b, "(");
        gen(b, depth + 1);
        put(b, ")**%d", rnd_in(2, 3));
        return;
    }
}

/* The value of f at v (false on overflow). */
static bool poly_at(const sg_poly *f, const sg_int *v, sg_int *out)
{
    int i, j;
    *out = 0;
    for (i = 0; i < f->n; i++) {
        sg_int t = f->t[i].c;
        for (j = 0; j < f->t[i].n; j++)
            if (!sg__mul(t, v[f->t[i].v[j]], &t))
                return false;
        if (!sg__add(*out, t, out))
            return false;
    }
    return true;
}

static void test_random_against_eval(void)
{
    static const char *const rel[][2] = {{"Eq(", ", "}, {"Ne(", ", "}, {"(", " < "}, {"(", " <= "}, {"(", " > "},
                                         {"(", " >= "}};
    const char *seed = getenv("SG_POLY_SEED"), *count = getenv("SG_POLY_COUNT");
    unsigned long n = count ? strtoul(count, NULL, 10) : 20000, k;
    unsigned long read = 0, decided = 0, bad = 0;
    rng = seed ? strtoull(seed, NULL, 0) | 1 : 1;
    setup();
    for (k = 0; k < n && bad < 10; k++) {
        sbuf b = {{0}, 0};
        const sg_expr *e;
        sg_poly p, q;
        unsigned work = 0;
        sg_int v[NVAR], s[NVAR];
        bool any_true = false, any_false = false, exact = true;
        sg_tri t;
        int i;
        for (i = 0; i < NVAR; i++) {
            S.coef[i] = rnd(3) ? rnd_in(1, 4) : -rnd_in(1, 3);
            S.off[i] = rnd_in(-3, 3);
            S.box[i].lo = rnd_in(-4, 8);
            S.box[i].hi = S.box[i].lo + rnd_in(0, 4);
            S.box[i].lo_inf = S.box[i].hi_inf = false;
        }
        {
            int r = (int)rnd(6);
            puts_b(&b, rel[r][0]);
            gen(&b, 1);
            puts_b(&b, rel[r][1]);
            gen(&b, 1);
            puts_b(&b, ")");
        }
        if (!(e = parse(b.s)) || sg_expr_nargs(e) != 2)
            continue;
        if (!sg_expr_poly(sg_expr_arg(e, 0), sym_form, NULL, &work, 4096, &p, 0) ||
            !sg_expr_poly(sg_expr_arg(e, 1), sym_form, NULL, &work, 4096, &q, 0) || !sg_poly_sub(&p, &q))
            continue;
        read++;
        /* every point of the box */
        for (i = 0; i < NVAR; i++)
            v[i] = S.box[i].lo;
        for (;;) {
            sg_value val, lv;
            sg_int pv;
            for (i = 0; i < NVAR; i++)
                s[i] = S.coef[i] * v[i] + S.off[i];
            if (sg_expr_eval(&val, S.pool, e, s, NVAR, NULL) == 0 && val.kind == SG_VAL_BOOL) {
                any_true |= val.num != 0;
                any_false |= val.num == 0;
                /* the polynomial of lhs - rhs equals the difference of the sides */
                if (sg_expr_eval(&lv, S.pool, sg_expr_arg(e, 0), s, NVAR, NULL) == 0 && poly_at(&p, v, &pv)) {
                    sg_value rv;
                    if (sg_expr_eval(&rv, S.pool, sg_expr_arg(e, 1), s, NVAR, NULL) == 0 && rv.den == 1 &&
                        lv.den == 1 && lv.num - rv.num != pv) {
                        exact = false;
                    }
                }
            } else {
                any_true = any_false = true; /* an overflow: nothing to compare at this point */
            }
            for (i = 0; i < NVAR && v[i] == S.box[i].hi; i++)
                v[i] = S.box[i].lo;
            if (i == NVAR)
                break;
            v[i]++;
        }
        t = sg_poly_decide(sg_expr_kind(e), &p, box_dom, NULL);
        decided += t != SG_TRI_UNKNOWN;
        if (!exact || (t == SG_TRI_TRUE && any_false) || (t == SG_TRI_FALSE && any_true)) {
            bad++;
            fprintf(stderr, "%s: poly %s, decided %d, holds somewhere %d, fails somewhere %d (box v0 [%d, %d])\n",
                    b.s, exact ? "exact" : "WRONG", (int)t, any_true, any_false, (int)S.box[0].lo, (int)S.box[0].hi);
        }
    }
    printf("poly: %lu relations, %lu read, %lu decided, %lu wrong\n", n, read, decided, bad);
    CHECK(read > n / 10);
    CHECK(decided > read / 4);
    CHECK(bad == 0);
}

int main(void)
{
    RUN(test_products_of_dims);
    RUN(test_random_against_eval);
    sg_pool_free(S.pool);
    return test_summary();
}
