/*
 * test_smt.c - the Z3 encoding (solver/smt.c): for every kind, every sign
 * combination of its operands, the value Z3's model evaluation gives for the
 * encoding (sg_smt_eval) must equal Python's; definedness where Python raises;
 * a few proofs through a Z3 solver; SMT-LIB output; error handling.
 *
 * The expected strings below were computed with CPython 3 (`//`, `%`,
 * fractions.Fraction, math.floor/ceil/trunc), one entry per point of the grid
 * s0 in A, s1 in B, s2 in C (s0 varying slowest). "U" means Python raises;
 * reals print as num/den, booleans as True/False.
 */
#include <stdlib.h>
#include <string.h>

#include "solver/smt.h"
#include "test.h"

static const sg_int A[] = {-7, -1, 0, 1, 6};
static const sg_int B[] = {-3, -1, 0, 2, 4};
static const sg_int C[] = {-2, 0, 3};

typedef struct fixture {
    sg_pool *pool;
    sg_smt *smt;
    const sg_expr *s[3]; /* symbols s0, s1, s2 */
} fixture;

/* Open a pool with symbols s0, s1, s2 and an encoder; -1 when out of memory (always closable). */
static int fx_open(fixture *f)
{
    memset(f, 0, sizeof *f);
    if (sg_pool_new(&f->pool, NULL) < 0 || sg_smt_new(&f->smt, f->pool, NULL) < 0)
        return -1;
    f->s[0] = sg_expr_symbol(f->pool, "s0", 2);
    f->s[1] = sg_expr_symbol(f->pool, "s1", 2);
    f->s[2] = sg_expr_symbol(f->pool, "s2", 2);
    return f->s[2] ? 0 : -1;
}

static void fx_close(fixture *f)
{
    sg_smt_free(f->smt);
    sg_pool_free(f->pool);
}

/* ---- Builders for every kind --------------------------------------------------------------- */

typedef const sg_expr *(*builder)(sg_pool *p, const sg_expr *const *s);

#define I(v) sg_expr_int(p, (v))
#define E2(k, a, b) sg_expr_2(p, (k), (a), (b))
#define E1(k, a) sg_expr_1(p, (k), (a))
#define TD(a, b) E2(SG_TRUEDIV, (a), (b))

static const sg_expr *e3(sg_pool *p, sg_kind k, const sg_expr *a, const sg_expr *b, const sg_expr *c)
{
    const sg_expr *args[3] = {a, b, c};
    return sg_expr_apply(p, k, args, 3);
}

static const sg_expr *b_floordiv(sg_pool *p, const sg_expr *const *s) { return E2(SG_FLOORDIV, s[0], s[1]); }
static const sg_expr *b_floordiv_pos(sg_pool *p, const sg_expr *const *s) { return E2(SG_FLOORDIV, s[0], I(3)); }
static const sg_expr *b_floordiv_neg(sg_pool *p, const sg_expr *const *s) { return E2(SG_FLOORDIV, s[0], I(-3)); }
static const sg_expr *b_cleandiv(sg_pool *p, const sg_expr *const *s) { return E2(SG_CLEANDIV, s[0], s[1]); }
static const sg_expr *b_ceildiv(sg_pool *p, const sg_expr *const *s) { return E2(SG_CEILDIV, s[0], s[1]); }
static const sg_expr *b_ceildiv_neg(sg_pool *p, const sg_expr *const *s) { return E2(SG_CEILDIV, s[0], I(-2)); }
static const sg_expr *b_ceildiv_pos(sg_pool *p, const sg_expr *const *s) { return E2(SG_CEILDIV, s[0], I(4)); }
static const sg_expr *b_mod(sg_pool *p, const sg_expr *const *s) { return E2(SG_MOD, s[0], s[1]); }
static const sg_expr *b_mod_pos(sg_pool *p, const sg_expr *const *s) { return E2(SG_MOD, s[0], I(3)); }
static const sg_expr *b_mod_neg(sg_pool *p, const sg_expr *const *s) { return E2(SG_MOD, s[0], I(-3)); }
static const sg_expr *b_pymod(sg_pool *p, const sg_expr *const *s) { return E2(SG_PYMOD, s[0], s[1]); }
static const sg_expr *b_modidx(sg_pool *p, const sg_expr *const *s) { return e3(p, SG_MODIDX, s[0], s[1], s[2]); }
static const sg_expr *b_modidx_lit(sg_pool *p, const sg_expr *const *s) { return e3(p, SG_MODIDX, s[0], I(-2), I(3)); }
static const sg_expr *b_truediv(sg_pool *p, const sg_expr *const *s) { return TD(s[0], s[1]); }
static const sg_expr *b_floor_real(sg_pool *p, const sg_expr *const *s) { return E1(SG_FLOOR, TD(s[0], s[1])); }
static const sg_expr *b_ceil_real(sg_pool *p, const sg_expr *const *s) { return E1(SG_CEIL, TD(s[0], s[1])); }
static const sg_expr *b_trunc_real(sg_pool *p, const sg_expr *const *s) { return E1(SG_TRUNC, TD(s[0], s[1])); }
static const sg_expr *b_floor_int(sg_pool *p, const sg_expr *const *s) { return E1(SG_FLOOR, s[0]); }
static const sg_expr *b_pow3(sg_pool *p, const sg_expr *const *s) { return E2(SG_POW, s[0], I(3)); }
static const sg_expr *b_pow5(sg_pool *p, const sg_expr *const *s) { return E2(SG_POW, s[0], I(5)); }
static const sg_expr *b_pow_real(sg_pool *p, const sg_expr *const *s) { return E2(SG_POW, TD(s[0], I(2)), I(3)); }
static const sg_expr *b_pownat(sg_pool *p, const sg_expr *const *s) { return E2(SG_POWNAT, s[0], s[1]); }
static const sg_expr *b_pownat_lit(sg_pool *p, const sg_expr *const *s) { return E2(SG_POWNAT, s[0], I(4)); }
static const sg_expr *b_add(sg_pool *p, const sg_expr *const *s) { return E2(SG_ADD, s[0], E2(SG_MUL, I(2), s[1])); }
static const sg_expr *b_mul(sg_pool *p, const sg_expr *const *s) { return E2(SG_MUL, s[0], s[1]); }
static const sg_expr *b_add_real(sg_pool *p, const sg_expr *const *s) { return E2(SG_ADD, s[0], TD(s[1], I(2))); }
static const sg_expr *b_mul_real(sg_pool *p, const sg_expr *const *s) { return E2(SG_MUL, s[0], TD(s[1], I(3))); }
static const sg_expr *b_rat_lit(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_ADD, s[0], sg_expr_rational(p, 1, 3));
}
static const sg_expr *b_max(sg_pool *p, const sg_expr *const *s) { return E2(SG_MAX, s[0], s[1]); }
static const sg_expr *b_min3(sg_pool *p, const sg_expr *const *s) { return e3(p, SG_MIN, s[0], s[1], s[2]); }
static const sg_expr *b_max_real(sg_pool *p, const sg_expr *const *s) { return E2(SG_MAX, s[0], TD(s[1], I(2))); }
static const sg_expr *b_where(sg_pool *p, const sg_expr *const *s)
{
    return e3(p, SG_WHERE, E2(SG_GT, s[0], s[1]), s[0], s[1]);
}
static const sg_expr *b_where_real(sg_pool *p, const sg_expr *const *s)
{
    return e3(p, SG_WHERE, E2(SG_LT, s[0], I(0)), s[0], TD(s[1], I(2)));
}
static const sg_expr *b_piecewise(sg_pool *p, const sg_expr *const *s)
{
    const sg_expr *args[4] = {s[0], E2(SG_GT, s[1], I(0)), s[1], E2(SG_GT, s[0], I(0))};
    return sg_expr_apply(p, SG_PIECEWISE, args, 4);
}
static const sg_expr *b_piecewise_strict(sg_pool *p, const sg_expr *const *s)
{
    const sg_expr *args[4] = {E2(SG_FLOORDIV, s[0], s[1]), E2(SG_NE, s[1], I(0)), I(0), sg_expr_bool(p, true)};
    return sg_expr_apply(p, SG_PIECEWISE, args, 4);
}
static const sg_expr *b_identity(sg_pool *p, const sg_expr *const *s) { return E1(SG_IDENTITY, s[0]); }
static const sg_expr *b_eq(sg_pool *p, const sg_expr *const *s) { return E2(SG_EQ, s[0], s[1]); }
static const sg_expr *b_ne(sg_pool *p, const sg_expr *const *s) { return E2(SG_NE, s[0], s[1]); }
static const sg_expr *b_lt(sg_pool *p, const sg_expr *const *s) { return E2(SG_LT, s[0], s[1]); }
static const sg_expr *b_le(sg_pool *p, const sg_expr *const *s) { return E2(SG_LE, s[0], s[1]); }
static const sg_expr *b_gt(sg_pool *p, const sg_expr *const *s) { return E2(SG_GT, s[0], s[1]); }
static const sg_expr *b_ge(sg_pool *p, const sg_expr *const *s) { return E2(SG_GE, s[0], s[1]); }
static const sg_expr *b_eq_mixed(sg_pool *p, const sg_expr *const *s) { return E2(SG_EQ, TD(s[0], I(2)), s[1]); }
static const sg_expr *b_lt_mixed(sg_pool *p, const sg_expr *const *s) { return E2(SG_LT, s[0], TD(s[1], I(2))); }
static const sg_expr *b_lt_undef(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_LT, E2(SG_FLOORDIV, s[0], s[1]), I(1));
}
static const sg_expr *b_eq_bool(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_EQ, E2(SG_GT, s[0], I(0)), E2(SG_GT, s[1], I(0)));
}
static const sg_expr *b_ne_bool(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_NE, E2(SG_GT, s[0], I(0)), E2(SG_LT, s[1], I(0)));
}
static const sg_expr *b_and(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_AND, E2(SG_GT, s[0], I(0)), E2(SG_LT, s[1], I(3)));
}
static const sg_expr *b_or_strict(sg_pool *p, const sg_expr *const *s)
{
    return E2(SG_OR, E2(SG_GT, s[0], I(0)), E2(SG_EQ, E2(SG_MOD, s[0], s[1]), I(0)));
}
static const sg_expr *b_not(sg_pool *p, const sg_expr *const *s) { return E1(SG_NOT, b_or_strict(p, s)); }

typedef struct kind_case {
    const char *name;
    int nsyms; /* grid A, A x B, or A x B x C */
    builder build;
    const char *expect;
} kind_case;

static const kind_case CASES[] = {
    {"floordiv", 2, b_floordiv, "2 7 U -4 -2 0 1 U -1 -1 0 0 U 0 0 -1 -1 U 0 0 -2 -6 U 3 1"},
    {"floordiv_pos", 1, b_floordiv_pos, "-3 -1 0 0 2"},
    {"floordiv_neg", 1, b_floordiv_neg, "2 0 0 -1 -2"},
    {"cleandiv", 2, b_cleandiv, "2 7 U -4 -2 0 1 U -1 -1 0 0 U 0 0 -1 -1 U 0 0 -2 -6 U 3 1"},
    {"ceildiv", 2, b_ceildiv, "3 7 U -3 -1 1 1 U 0 0 0 0 U 0 0 0 -1 U 1 1 -2 -6 U 3 2"},
    {"ceildiv_neg", 1, b_ceildiv_neg, "4 1 0 0 -3"},
    {"ceildiv_pos", 1, b_ceildiv_pos, "-1 0 0 1 2"},
    {"mod", 2, b_mod, "-1 0 U 1 1 -1 0 U 1 3 0 0 U 0 0 -2 0 U 1 1 0 0 U 0 2"},
    {"mod_pos", 1, b_mod_pos, "2 2 0 1 0"},
    {"mod_neg", 1, b_mod_neg, "-1 -1 0 -2 0"},
    {"pymod", 2, b_pymod, "-1 0 U 1 1 -1 0 U 1 3 0 0 U 0 0 -2 0 U 1 1 0 0 U 0 2"},
    {"modidx", 3, b_modidx,
     "0 U 2 -1 U 1 U U U 0 U 2 0 U 1 0 U 0 -1 U 1 U U U -1 U 2 -1 U 2 0 U 0 0 U 0 U U U 0 U 0 0 U 0 "
     "-1 U 2 -1 U 2 U U U 0 U 0 0 U 0 0 U 1 0 U 0 U U U -1 U 0 -1 U 1"},
    {"modidx_lit", 1, b_modidx_lit, "0 0 0 2 0"},
    {"truediv", 2, b_truediv,
     "7/3 7/1 U -7/2 -7/4 1/3 1/1 U -1/2 -1/4 0/1 0/1 U 0/1 0/1 -1/3 -1/1 U 1/2 1/4 -2/1 -6/1 U 3/1 3/2"},
    {"floor_real", 2, b_floor_real, "2 7 U -4 -2 0 1 U -1 -1 0 0 U 0 0 -1 -1 U 0 0 -2 -6 U 3 1"},
    {"ceil_real", 2, b_ceil_real, "3 7 U -3 -1 1 1 U 0 0 0 0 U 0 0 0 -1 U 1 1 -2 -6 U 3 2"},
    {"trunc_real", 2, b_trunc_real, "2 7 U -3 -1 0 1 U 0 0 0 0 U 0 0 0 -1 U 0 0 -2 -6 U 3 1"},
    {"floor_int", 1, b_floor_int, "-7 -1 0 1 6"},
    {"pow3", 1, b_pow3, "-343 -1 0 1 216"},
    {"pow5", 1, b_pow5, "-16807 -1 0 1 7776"},
    {"pow_real", 1, b_pow_real, "-343/8 -1/8 0/1 1/8 27/1"},
    {"pownat", 2, b_pownat, "U U 1 49 2401 U U 1 1 1 U U 1 0 0 U U 1 1 1 U U 1 36 1296"},
    {"pownat_lit", 1, b_pownat_lit, "2401 1 0 1 1296"},
    {"add", 2, b_add, "-13 -9 -7 -3 1 -7 -3 -1 3 7 -6 -2 0 4 8 -5 -1 1 5 9 0 4 6 10 14"},
    {"mul", 2, b_mul, "21 7 0 -14 -28 3 1 0 -2 -4 0 0 0 0 0 -3 -1 0 2 4 -18 -6 0 12 24"},
    {"add_real", 2, b_add_real,
     "-17/2 -15/2 -7/1 -6/1 -5/1 -5/2 -3/2 -1/1 0/1 1/1 -3/2 -1/2 0/1 1/1 2/1 -1/2 1/2 1/1 2/1 3/1 "
     "9/2 11/2 6/1 7/1 8/1"},
    {"mul_real", 2, b_mul_real,
     "7/1 7/3 0/1 -14/3 -28/3 1/1 1/3 0/1 -2/3 -4/3 0/1 0/1 0/1 0/1 0/1 -1/1 -1/3 0/1 2/3 4/3 "
     "-6/1 -2/1 0/1 4/1 8/1"},
    {"rat_lit", 1, b_rat_lit, "-20/3 -2/3 1/3 4/3 19/3"},
    {"max", 2, b_max, "-3 -1 0 2 4 -1 -1 0 2 4 0 0 0 2 4 1 1 1 2 4 6 6 6 6 6"},
    {"min3", 3, b_min3,
     "-7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -7 -3 -3 -3 -2 -1 -1 -2 -1 -1 -2 -1 -1 -2 -1 -1 "
     "-3 -3 -3 -2 -1 -1 -2 0 0 -2 0 0 -2 0 0 -3 -3 -3 -2 -1 -1 -2 0 0 -2 0 1 -2 0 1 "
     "-3 -3 -3 -2 -1 -1 -2 0 0 -2 0 2 -2 0 3"},
    {"max_real", 2, b_max_real,
     "-3/2 -1/2 0/1 1/1 2/1 -1/1 -1/2 0/1 1/1 2/1 0/1 0/1 0/1 1/1 2/1 1/1 1/1 1/1 1/1 2/1 "
     "6/1 6/1 6/1 6/1 6/1"},
    {"where", 2, b_where, "-3 -1 0 2 4 -1 -1 0 2 4 0 0 0 2 4 1 1 1 2 4 6 6 6 6 6"},
    {"where_real", 2, b_where_real,
     "-7/1 -7/1 -7/1 -7/1 -7/1 -1/1 -1/1 -1/1 -1/1 -1/1 -3/2 -1/2 0/1 1/1 2/1 -3/2 -1/2 0/1 1/1 2/1 "
     "-3/2 -1/2 0/1 1/1 2/1"},
    {"piecewise", 2, b_piecewise, "U U U -7 -7 U U U -1 -1 U U U 0 0 -3 -1 0 1 1 -3 -1 0 6 6"},
    {"piecewise_strict", 2, b_piecewise_strict,
     "2 7 U -4 -2 0 1 U -1 -1 0 0 U 0 0 -1 -1 U 0 0 -2 -6 U 3 1"},
    {"identity", 1, b_identity, "-7 -1 0 1 6"},
    {"eq", 2, b_eq,
     "False False False False False False True False False False False False True False False "
     "False False False False False False False False False False"},
    {"ne", 2, b_ne,
     "True True True True True True False True True True True True False True True "
     "True True True True True True True True True True"},
    {"lt", 2, b_lt,
     "True True True True True False False True True True False False False True True "
     "False False False True True False False False False False"},
    {"le", 2, b_le,
     "True True True True True False True True True True False False True True True "
     "False False False True True False False False False False"},
    {"gt", 2, b_gt,
     "False False False False False True False False False False True True False False False "
     "True True True False False True True True True True"},
    {"ge", 2, b_ge,
     "False False False False False True True False False False True True True False False "
     "True True True False False True True True True True"},
    {"eq_mixed", 2, b_eq_mixed,
     "False False False False False False False False False False False False True False False "
     "False False False False False False False False False False"},
    {"lt_mixed", 2, b_lt_mixed,
     "True True True True True False True True True True False False False True True "
     "False False False False True False False False False False"},
    {"lt_undef", 2, b_lt_undef,
     "False False U True True True False U True True True True U True True "
     "True True U True True True True U False False"},
    {"eq_bool", 2, b_eq_bool,
     "True True True False False True True True False False True True True False False "
     "False False False True True False False False True True"},
    {"ne_bool", 2, b_ne_bool,
     "True True False False False True True False False False True True False False False "
     "False False True True True False False True True True"},
    {"and", 2, b_and,
     "False False False False False False False False False False False False False False False "
     "True True True True False True True True True False"},
    {"or_strict", 2, b_or_strict,
     "False True U False False False True U False False True True U True True "
     "True True U True True True True U True True"},
    {"not", 2, b_not, /* not ((s0 > 0) or s0 % s1 == 0) */
     "True False U True True True False U True True False False U False False "
     "False False U False False False False U False False"},
};

/* ---- Helpers ------------------------------------------------------------------------------------ */

/* Append the test's rendering of an evaluation result (value or status) to `out`. */
static void put_result(char *out, size_t cap, int rc, const sg_value *v)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN], item[2 * SG_INT_STRLEN + 8];
    if (rc == SG_EUNDEFINED)
        snprintf(item, sizeof item, "U");
    else if (rc < 0)
        snprintf(item, sizeof item, "E%d", rc);
    else if (v->kind == SG_VAL_BOOL)
        snprintf(item, sizeof item, "%s", v->num ? "True" : "False");
    else if (v->kind == SG_VAL_REAL)
        snprintf(item, sizeof item, "%s/%s", sg_int_format(a, v->num), sg_int_format(b, v->den));
    else
        snprintf(item, sizeof item, "%s", sg_int_format(a, v->num));
    if (*out)
        strncat(out, " ", cap - strlen(out) - 1);
    strncat(out, item, cap - strlen(out) - 1);
}

/* Evaluate `e` through Z3 with s0..s2 = a, b, c. */
static int eval3(fixture *f, const sg_expr *e, sg_int a, sg_int b, sg_int c, sg_value *v, sg_error *err)
{
    sg_int values[3];
    values[sg_expr_symbol_index(f->s[0])] = a;
    values[sg_expr_symbol_index(f->s[1])] = b;
    values[sg_expr_symbol_index(f->s[2])] = c;
    return sg_smt_eval(v, f->smt, e, values, 3, err);
}

/* ---- Tests -------------------------------------------------------------------------------------- */

static void test_kinds_all_signs(void)
{
    fixture f;
    size_t k, i, j, l;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    for (k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const kind_case *kc = &CASES[k];
        const sg_expr *e = kc->build(f.pool, f.s);
        size_t nb = kc->nsyms > 1 ? 5 : 1, nc = kc->nsyms > 2 ? 3 : 1;
        char got[1024] = "";
        CHECK_MSG(e != NULL, "%s: %s", kc->name, sg_pool_error(f.pool) ? sg_pool_error(f.pool)->msg : "?");
        if (!e) {
            sg_pool_clear_error(f.pool);
            continue;
        }
        for (i = 0; i < 5; i++)
            for (j = 0; j < nb; j++)
                for (l = 0; l < nc; l++) {
                    sg_error err = SG_ERROR_INIT;
                    sg_value v;
                    int rc = eval3(&f, e, A[i], B[j], C[l], &v, &err);
                    CHECK_MSG(rc == 0 || rc == SG_EUNDEFINED, "%s: %d %s", kc->name, rc, err.msg);
                    put_result(got, sizeof got, rc, &v);
                }
        CHECK_MSG(strcmp(got, kc->expect) == 0, "%s:\n  got    %s\n  expect %s", kc->name, got, kc->expect);
    }
    fx_close(&f);
}

/* Terms are memoized per expression; definedness is omitted where it always holds. */
static void test_memo_and_definedness(void)
{
    fixture f;
    sg_pool *p;
    sg_error err = SG_ERROR_INIT;
    const sg_term *v1 = NULL, *d1 = NULL, *v2 = NULL, *d2 = NULL, *h = NULL;
    const sg_expr *fd, *fd3, *sum;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    p = f.pool;
    fd = E2(SG_FLOORDIV, f.s[0], f.s[1]);
    fd3 = E2(SG_FLOORDIV, f.s[0], I(3));
    sum = E2(SG_ADD, fd, E2(SG_MUL, I(2), fd));
    CHECK(fd && fd3 && sum);
    CHECK_EQ_INT(sg_smt_encode(f.smt, fd, &v1, &d1, &err), 0);
    CHECK_EQ_INT(sg_smt_encode(f.smt, fd, &v2, &d2, &err), 0);
    CHECK(v1 && v1 == v2 && d1 == d2);
    CHECK(sg_t_op(d1) != SG_T_TRUE);
    CHECK_EQ_INT(sg_smt_encode(f.smt, fd3, &v1, &d1, &err), 0);
    CHECK(sg_t_op(d1) == SG_T_TRUE); /* 3 != 0: no condition */
    CHECK_EQ_INT(sg_smt_encode(f.smt, sum, NULL, &d2, &err), 0);
    CHECK(d2 != NULL);
    /* holds() of an always-defined boolean is its value */
    CHECK_EQ_INT(sg_smt_holds(f.smt, E2(SG_LT, f.s[0], f.s[1]), &h, &err), 0);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_LT, f.s[0], f.s[1]), &v1, NULL, &err), 0);
    CHECK(h == v1);
    CHECK_EQ_INT(sg_smt_holds(f.smt, fd, &h, &err), SG_EINVALID);
    CHECK(sg_smt_symbol(f.smt, f.s[1]) != NULL);
    CHECK(sg_smt_symbol(f.smt, fd) == NULL);
    fx_close(&f);
}

/* Check with a fresh Z3 solver whether `t` is satisfiable. */
static Z3_lbool check_sat(Z3_context ctx, Z3_ast t)
{
    Z3_solver s = Z3_mk_solver(ctx);
    Z3_lbool r;
    Z3_solver_inc_ref(ctx, s);
    Z3_solver_assert(ctx, s, t);
    r = Z3_solver_check(ctx, s);
    Z3_solver_dec_ref(ctx, s);
    return r;
}

/* Proofs that use the encoding: Python's division identity holds for every sign. */
static void test_solver_proofs(void)
{
    fixture f;
    sg_pool *p;
    sg_error err = SG_ERROR_INIT;
    Z3_context ctx;
    const sg_term *tq, *tr, *tc, *th;
    Z3_ast x, y, q, r, c, prod, sum, eq, args[3], goal, zero, ynz, holds;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    p = f.pool;
    ctx = sg_smt_context(f.smt);
    x = sg_smt_z3(f.smt, sg_smt_symbol(f.smt, f.s[0]));
    y = sg_smt_z3(f.smt, sg_smt_symbol(f.smt, f.s[1]));
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_FLOORDIV, f.s[0], f.s[1]), &tq, NULL, &err), 0);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_MOD, f.s[0], f.s[1]), &tr, NULL, &err), 0);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_CEILDIV, f.s[0], f.s[1]), &tc, NULL, &err), 0);
    q = sg_smt_z3(f.smt, tq);
    r = sg_smt_z3(f.smt, tr);
    c = sg_smt_z3(f.smt, tc);
    /* FloorDiv(x, y)*y + Mod(x, y) == x whenever y != 0: the negation is unsat */
    args[0] = q;
    args[1] = y;
    prod = Z3_mk_mul(ctx, 2, args);
    Z3_inc_ref(ctx, prod);
    args[0] = prod;
    args[1] = r;
    sum = Z3_mk_add(ctx, 2, args);
    Z3_inc_ref(ctx, sum);
    eq = Z3_mk_eq(ctx, sum, x);
    Z3_inc_ref(ctx, eq);
    zero = Z3_mk_int(ctx, 0, Z3_mk_int_sort(ctx));
    Z3_inc_ref(ctx, zero);
    ynz = Z3_mk_not(ctx, Z3_mk_eq(ctx, y, zero));
    Z3_inc_ref(ctx, ynz);
    args[0] = ynz;
    args[1] = Z3_mk_not(ctx, eq);
    Z3_inc_ref(ctx, args[1]);
    goal = Z3_mk_and(ctx, 2, args);
    Z3_inc_ref(ctx, goal);
    CHECK_EQ_INT(check_sat(ctx, goal), Z3_L_FALSE);
    Z3_dec_ref(ctx, args[1]);
    Z3_dec_ref(ctx, goal);
    /* the remainder has the divisor's sign: y < 0 and Mod(x, y) > 0 is unsat */
    args[0] = Z3_mk_lt(ctx, y, zero);
    Z3_inc_ref(ctx, args[0]);
    args[1] = Z3_mk_gt(ctx, r, zero);
    Z3_inc_ref(ctx, args[1]);
    goal = Z3_mk_and(ctx, 2, args);
    Z3_inc_ref(ctx, goal);
    CHECK_EQ_INT(check_sat(ctx, goal), Z3_L_FALSE);
    Z3_dec_ref(ctx, args[0]);
    Z3_dec_ref(ctx, args[1]);
    Z3_dec_ref(ctx, goal);
    /* CeilDiv differs from FloorDiv somewhere (sat), e.g. 7 and 2 */
    goal = Z3_mk_not(ctx, Z3_mk_eq(ctx, c, q));
    Z3_inc_ref(ctx, goal);
    CHECK_EQ_INT(check_sat(ctx, goal), Z3_L_TRUE);
    Z3_dec_ref(ctx, goal);
    /* a guard that holds implies its divisions are defined: holds(Mod(x, y) == 0) and y == 0 is unsat */
    CHECK_EQ_INT(sg_smt_holds(f.smt, E2(SG_EQ, E2(SG_MOD, f.s[0], f.s[1]), I(0)), &th, &err), 0);
    holds = sg_smt_z3(f.smt, th);
    args[0] = holds;
    args[1] = Z3_mk_eq(ctx, y, zero);
    Z3_inc_ref(ctx, args[1]);
    goal = Z3_mk_and(ctx, 2, args);
    Z3_inc_ref(ctx, goal);
    CHECK_EQ_INT(check_sat(ctx, goal), Z3_L_FALSE);
    Z3_dec_ref(ctx, args[1]);
    Z3_dec_ref(ctx, goal);
    Z3_dec_ref(ctx, prod);
    Z3_dec_ref(ctx, sum);
    Z3_dec_ref(ctx, eq);
    Z3_dec_ref(ctx, zero);
    Z3_dec_ref(ctx, ynz);
    CHECK_EQ_INT(Z3_get_error_code(ctx), Z3_OK);
    fx_close(&f);
}

/* SMT-LIB text: declarations, then an assert or define-funs; Z3 parses it back. */
static void test_smtlib(void)
{
    fixture f;
    sg_pool *p;
    sg_error err = SG_ERROR_INIT;
    char *text = NULL;
    const sg_expr *src, *guard, *num;
    Z3_ast_vector vec;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    p = f.pool;
    src = sg_expr_symbol(p, "L['x'].size()[0]", strlen("L['x'].size()[0]"));
    guard = E2(SG_EQ, E2(SG_MOD, src, f.s[1]), I(0));
    CHECK_EQ_INT(sg_smt_to_smtlib(&text, f.smt, guard, &err), 0);
    CHECK(text && strstr(text, "(declare-const |L['x'].size()[0]| Int)"));
    CHECK(text && strstr(text, "(declare-const s1 Int)"));
    CHECK(text && strstr(text, "(assert "));
    if (text) {
        vec = Z3_parse_smtlib2_string(sg_smt_context(f.smt), text, 0, NULL, NULL, 0, NULL, NULL);
        CHECK_MSG(Z3_get_error_code(sg_smt_context(f.smt)) == Z3_OK, "Z3 rejected:\n%s", text);
        if (vec) {
            Z3_ast_vector_inc_ref(sg_smt_context(f.smt), vec);
            CHECK_EQ_INT(Z3_ast_vector_size(sg_smt_context(f.smt), vec), 1);
            Z3_ast_vector_dec_ref(sg_smt_context(f.smt), vec);
        }
    }
    sg_free(text);
    text = NULL;
    num = TD(E2(SG_FLOORDIV, f.s[0], f.s[1]), I(2));
    CHECK_EQ_INT(sg_smt_to_smtlib(&text, f.smt, num, &err), 0);
    CHECK(text && strstr(text, "(declare-const s0 Int)\n(declare-const s1 Int)\n"));
    CHECK(text && strstr(text, "(define-fun value () Real "));
    CHECK(text && strstr(text, "(define-fun defined () Bool "));
    sg_free(text);
    fx_close(&f);
}

/* Z3 errors are recorded, not fatal; unsupported and invalid inputs are reported. */
static void test_errors(void)
{
    fixture f;
    sg_pool *p;
    sg_error err = SG_ERROR_INIT;
    Z3_context ctx;
    Z3_ast bad;
    const sg_term *v;
    sg_value val;
    sg_int big = (sg_int)1 << 100, one = 1;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    p = f.pool;
    ctx = sg_smt_context(f.smt);
    /* a sort mismatch through the API: the handler records it, the process goes on */
    bad = Z3_mk_eq(ctx, sg_smt_z3(f.smt, sg_smt_symbol(f.smt, f.s[0])), Z3_mk_true(ctx));
    CHECK(bad == NULL);
    CHECK(Z3_get_error_code(ctx) != Z3_OK);
    Z3_parse_smtlib2_string(ctx, "(assert (", 0, NULL, NULL, 0, NULL, NULL);
    CHECK(Z3_get_error_code(ctx) != Z3_OK);
    /* the encoder still works afterwards */
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_MOD, f.s[0], f.s[1]), &v, NULL, &err), 0);
    /* unsupported: an infinity, an exponent over 4096 */
    CHECK_EQ_INT(sg_smt_encode(f.smt, sg_expr_inf(p, 1, true), &v, NULL, &err), SG_EUNSUPPORTED);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_POW, f.s[0], I(5000)), &v, NULL, &err), SG_EUNSUPPORTED);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_POWNAT, f.s[0], I(4097)), &v, NULL, &err), SG_EUNSUPPORTED);
    CHECK_EQ_INT(sg_smt_encode(f.smt, E2(SG_POW, f.s[0], I(4096)), &v, NULL, &err), 0);
    /* a missing symbol value; a result beyond 128 bits */
    CHECK_EQ_INT(sg_smt_eval(&val, f.smt, E2(SG_ADD, f.s[0], f.s[2]), &one, 1, &err), SG_EINVALID);
    CHECK_EQ_INT(sg_smt_eval(&val, f.smt, E2(SG_POW, f.s[0], I(2)), &big, 1, &err), SG_EOVERFLOW);
    CHECK_EQ_INT(sg_smt_eval(&val, f.smt, E2(SG_MUL, f.s[0], I(2)), &big, 1, &err), 0);
    CHECK(val.kind == SG_VAL_INT && val.num == big * 2);
    sg_smt_free(NULL);
    fx_close(&f);
}

/* Symbolic exponents and a deep shared DAG (linear in its size thanks to the memo). */
static void test_pownat_and_depth(void)
{
    fixture f;
    sg_pool *p;
    sg_error err = SG_ERROR_INIT;
    const sg_expr *e;
    sg_value v;
    sg_int vals[3] = {2, 100, 0};
    int i;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    p = f.pool;
    e = E2(SG_POWNAT, f.s[0], f.s[1]); /* 2**100 */
    CHECK_MSG(sg_smt_eval(&v, f.smt, e, vals, 3, &err) == 0, "%s", err.msg);
    CHECK(v.kind == SG_VAL_INT && v.num == (sg_int)1 << 100);
    vals[0] = -3;
    vals[1] = 127; /* (-3)**127 is beyond 128 bits */
    CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), SG_EOVERFLOW);
    vals[1] = 5000; /* beyond what Z3 expands */
    CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), SG_EOVERFLOW);
    vals[0] = 0;
    CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), 0);
    CHECK(v.kind == SG_VAL_INT && v.num == 0);
    /* a relation over a power Z3's evaluator does not expand by itself (exponent > 64) */
    e = E2(SG_EQ, E2(SG_ADD, E2(SG_POWNAT, f.s[0], f.s[1]), I(2)), I(7));
    vals[0] = -15;
    vals[1] = 225;
    CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), 0);
    CHECK(v.kind == SG_VAL_BOOL && v.num == 0);
    vals[1] = 5000;
    CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), SG_EOVERFLOW);
    /* e = e//2 + e%3 + s1, 300 times: e occurs twice, so the tree has 2**300 leaves */
    e = f.s[0];
    for (i = 0; i < 300 && e; i++) {
        const sg_expr *args[3] = {E2(SG_FLOORDIV, e, I(2)), E2(SG_MOD, e, I(3)), f.s[1]};
        e = sg_expr_apply(p, SG_ADD, args, 3);
    }
    CHECK_MSG(e != NULL, "%s", sg_pool_error(p) ? sg_pool_error(p)->msg : "?");
    if (e) {
        vals[0] = 1000;
        vals[1] = 1;
        CHECK_EQ_INT(sg_smt_eval(&v, f.smt, e, vals, 3, &err), 0);
        CHECK(v.kind == SG_VAL_INT && v.num == 5); /* computed with CPython */
    }
    fx_close(&f);
}

/* Every allocation failing in turn: calls report SG_ENOMEM (or succeed) and leak nothing (ASan). */
static void test_alloc_failures(void)
{
    long n;
    int completed = 0;
    for (n = 0; n < 400 && !completed; n++) {
        fixture f;
        sg_pool *p;
        sg_error err = SG_ERROR_INIT;
        sg_value v;
        sg_int vals[3] = {7, -2, 3};
        char *text = NULL;
        const sg_expr *e = NULL;
        int rc = -1, rc2 = -1;
        sg_alloc_fail_after(n);
        if (fx_open(&f) == 0) {
            p = f.pool;
            e = E2(SG_LT, E2(SG_ADD, e3(p, SG_MODIDX, f.s[0], f.s[1], f.s[2]), TD(f.s[0], I(3))), I(4));
        }
        if (e) {
            rc = sg_smt_eval(&v, f.smt, e, vals, 3, &err);
            CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "rc %d at n=%ld: %s", rc, n, err.msg);
            rc2 = sg_smt_to_smtlib(&text, f.smt, e, &err);
            CHECK_MSG(rc2 == 0 || rc2 == SG_ENOMEM, "rc %d at n=%ld: %s", rc2, n, err.msg);
            sg_free(text);
        }
        sg_alloc_fail_after(-1);
        if (rc == 0 && rc2 == 0) { /* (7 // -2) % 3 + 7/3 = 2 + 7/3 < 4 is False */
            completed = 1;
            CHECK(v.kind == SG_VAL_BOOL && v.num == 0);
        }
        fx_close(&f);
    }
    CHECK(completed);
}

/*
 * Divisions whose dividend and divisor share a factor are encoded with it
 * divided out (solver/smt.c, "Common factors"): (g*x) // (g*y) == x // y and
 * (g*x) % (g*y) == g*(x % y) for g != 0. Every form against the exact
 * evaluator (Python's semantics) at every point of [-5, 5]^3, a zero divisor
 * included: the same value or both undefined.
 */
static void test_common_factors(void)
{
    static const char *const forms[] = {
        "Mod(8*s0*s1, 8*s0)", "FloorDiv(8*s0*s1, 8*s0)", "Mod(4*s0*s1, 8*s0)", "FloorDiv(4*s0*s1, -8*s0)",
        "Mod(6*s0*s1 + 3*s0, 4*s0)", "FloorDiv(6*s0*s1 + 3*s0*s2, -3*s0)", "Mod(s0**2*s1, s0*s1)",
        "FloorDiv(s0**3*s1 + s0**2, s0**2*s2)", "Mod(s0, s0*s1)", "Mod(-9*s0*s2, 6*s2)", "FloorDiv(2*s0, s0)",
        "Mod(2*s1, FloorDiv(2*s1, 2))", "FloorDiv(4*s0*FloorDiv(s1, 2), 2*FloorDiv(s1, 2))",
        "Mod(s2*Mod(s0, 3), -2*Mod(s0, 3))", "Mod(12*s0 + 18*s1, 6)", "FloorDiv(12*s0 + 18*s1, -6*s2)",
    };
    fixture f;
    size_t k;
    sg_int a, b, c;
    if (fx_open(&f) < 0) {
        CHECK(!"fixture");
        return;
    }
    for (k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        const sg_expr *e = NULL;
        sg_error err = SG_ERROR_INIT;
        int bad = 0;
        CHECK_MSG(sg_expr_parse(&e, f.pool, forms[k], strlen(forms[k]), &err) == 0, "%s: %s", forms[k], err.msg);
        if (!e)
            continue;
        for (a = -5; a <= 5; a++)
            for (b = -5; b <= 5; b++)
                for (c = -5; c <= 5; c++) {
                    sg_value z, x;
                    sg_int vals[3];
                    int rz = eval3(&f, e, a, b, c, &z, &err), rx;
                    vals[sg_expr_symbol_index(f.s[0])] = a;
                    vals[sg_expr_symbol_index(f.s[1])] = b;
                    vals[sg_expr_symbol_index(f.s[2])] = c;
                    rx = sg_expr_eval(&x, f.pool, e, vals, 3, &err);
                    if (rz != rx || (rz == 0 && (z.kind != x.kind || z.num != x.num || z.den != x.den)))
                        bad++;
                }
        CHECK_MSG(bad == 0, "%s: %d points where Z3's value differs from Python's", forms[k], bad);
    }
    fx_close(&f);
}

int main(void)
{
    RUN(test_kinds_all_signs);
    RUN(test_common_factors);
    RUN(test_memo_and_definedness);
    RUN(test_solver_proofs);
    RUN(test_smtlib);
    RUN(test_errors);
    RUN(test_pownat_and_depth);
    RUN(test_alloc_failures);
    return test_summary();
}
