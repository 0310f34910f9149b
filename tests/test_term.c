/*
 * test_term.c - the term store (solver/term.h): hash-consing and reading
 * without a Z3 context; the replay of a record making exactly the asts that
 * the same calls make on a live context (ids, text, a solver's model);
 * substitution against Z3_substitute, on a recording store and on a live one
 * (siblings rebuilt together must survive Z3's next call); a power's sort
 * from Z3; builders' NULL and arity contract; evaluation at a point
 * (sg_t_eval) against Z3's own evaluation in a model, on random terms.
 */
#include <string.h>

#include "solver/term.h"
#include "test.h"

/* Hash-consed terms, read without a context: nothing reaches Z3. */
static void test_consing_and_reading(void)
{
    sg_terms *ts = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_term *x, *y, *three, *s1, *s2, *f1, *f2, *le;
    sg_int v = 0;

    CHECK_EQ_INT(sg_terms_new(&ts, NULL, &err), 0);
    x = sg_t_const(ts, "x", SG_TS_INT);
    y = sg_t_const(ts, "y", SG_TS_INT);
    three = sg_t_int(ts, 3);
    s1 = sg_t_app2(ts, SG_T_ADD, x, three);
    s2 = sg_t_app2(ts, SG_T_ADD, x, sg_t_int(ts, 3));
    CHECK(x && y && three && s1 && s1 == s2);
    CHECK(x == sg_t_const(ts, "x", SG_TS_INT));
    CHECK(x != sg_t_const(ts, "x", SG_TS_BOOL)); /* the sort is part of a constant */
    CHECK(s1 != sg_t_app2(ts, SG_T_ADD, three, x));
    f1 = sg_t_fresh(ts, "t", SG_TS_INT);
    f2 = sg_t_fresh(ts, "t", SG_TS_INT);
    CHECK(f1 && f2 && f1 != f2);
    CHECK(sg_t_op(s1) == SG_T_ADD && sg_t_nargs(s1) == 2 && sg_t_arg(s1, 0) == x && sg_t_arg(s1, 1) == three);
    CHECK(sg_t_arg(s1, 2) == NULL);
    CHECK(sg_t_int_value(three, &v) && v == 3);
    CHECK(!sg_t_int_value(x, &v));
    CHECK(sg_t_int_value(sg_t_int(ts, (sg_int)1 << 100), &v) && v == (sg_int)1 << 100);
    CHECK(sg_t_sort(ts, s1) == SG_TS_INT);
    CHECK(sg_t_sort(ts, sg_t_app1(ts, SG_T_TO_REAL, x)) == SG_TS_REAL);
    CHECK(sg_t_sort(ts, sg_t_app2(ts, SG_T_ADD, sg_t_num(ts, "1/2", SG_TS_REAL), sg_t_app1(ts, SG_T_TO_REAL, x))) ==
          SG_TS_REAL);
    le = sg_t_app2(ts, SG_T_LE, s1, y);
    CHECK(sg_t_sort(ts, le) == SG_TS_BOOL);
    CHECK(sg_t_sort(ts, sg_t_ite(ts, le, x, y)) == SG_TS_INT);
    CHECK(strcmp(sg_t_text(x), "x") == 0 && strcmp(sg_t_text(three), "3") == 0 && sg_t_text(s1) == NULL);
    CHECK(sg_t_id(x) != sg_t_id(y) && sg_t_id(s1) == sg_t_id(s2));
    CHECK(!sg_terms_live(ts));
    CHECK_EQ_INT(sg_terms_failed(ts), 0);
    sg_terms_free(ts);
}

/* The builders' contract: NULL in, NULL out; a wrong number of arguments is refused. */
static void test_contract(void)
{
    sg_terms *ts = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_term *x, *args[3];

    CHECK_EQ_INT(sg_terms_new(&ts, NULL, &err), 0);
    x = sg_t_const(ts, "x", SG_TS_INT);
    CHECK(sg_t_app2(ts, SG_T_ADD, x, NULL) == NULL);
    CHECK(sg_t_app1(ts, SG_T_NOT, NULL) == NULL);
    CHECK(sg_t_ite(ts, NULL, x, x) == NULL);
    CHECK(sg_t_substitute(ts, NULL, 0, NULL, NULL) == NULL);
    args[0] = args[1] = args[2] = x;
    CHECK(sg_t_app(ts, SG_T_EQ, 3, args) == NULL);
    CHECK(sg_t_app(ts, SG_T_ITE, 2, args) == NULL);
    CHECK(sg_t_app(ts, SG_T_ADD, 0, args) == NULL);
    CHECK(sg_t_app(ts, SG_T_NUM, 0, args) == NULL);
    CHECK(sg_t_app(ts, SG_T_ADD, 3, args) != NULL);
    CHECK(sg_t_app(ts, SG_T_AND, 0, args) != NULL); /* Z3's and() of nothing: true */
    CHECK_EQ_INT(sg_terms_failed(ts), 0);
    sg_t_ref(ts, NULL);
    sg_t_unref(ts, NULL);
    sg_terms_free(ts);
    sg_terms_free(NULL);
}

/*
 * One script of builder calls and references, as an encoder makes them: temporaries referenced
 * and dropped, terms re-made after Z3 freed them, fresh constants. Returns the terms it keeps.
 */
#define NKEPT 6

static void script(sg_terms *ts, const sg_term **kept)
{
    const sg_term *x = sg_t_const(ts, "x", SG_TS_INT), *y, *t1, *t2, *g;
    sg_t_ref(ts, x);
    y = sg_t_const(ts, "y", SG_TS_INT);
    sg_t_ref(ts, y);
    t1 = sg_t_app2(ts, SG_T_MUL, x, y); /* a temporary, dropped: Z3 frees it */
    sg_t_ref(ts, t1);
    t2 = sg_t_app2(ts, SG_T_MOD, t1, sg_t_int(ts, 7));
    sg_t_ref(ts, t2);
    sg_t_unref(ts, t2);
    sg_t_unref(ts, t1);
    t1 = sg_t_app2(ts, SG_T_MUL, x, y); /* made again: a new ast in Z3 */
    sg_t_ref(ts, t1);
    g = sg_t_app2(ts, SG_T_GE, t1, sg_t_int(ts, 12));
    sg_t_ref(ts, g);
    kept[0] = x;
    kept[1] = y;
    kept[2] = t1;
    kept[3] = g;
    kept[4] = sg_t_fresh(ts, "f", SG_TS_INT);
    sg_t_ref(ts, kept[4]);
    kept[5] = sg_t_app2(ts, SG_T_LE, sg_t_app2(ts, SG_T_ADD, x, kept[4]), sg_t_int(ts, 20));
    sg_t_ref(ts, kept[5]);
}

static void drop(sg_terms *ts, const sg_term **kept)
{
    size_t i;
    for (i = 0; i < NKEPT; i++)
        sg_t_unref(ts, kept[i]);
}

/* A model of kept[3] and kept[5] with x, y >= 2, as text. */
static void model_text(sg_terms *ts, const sg_term **kept, char *out, size_t cap)
{
    Z3_context c = sg_terms_context(ts);
    Z3_solver s = Z3_mk_solver(c);
    const sg_term *two = sg_t_int(ts, 2);
    Z3_model m;
    Z3_solver_inc_ref(c, s);
    sg_t_ref(ts, two);
    Z3_solver_assert(c, s, sg_t_z3(ts, kept[3]));
    Z3_solver_assert(c, s, sg_t_z3(ts, kept[5]));
    Z3_solver_assert(c, s, Z3_mk_ge(c, sg_t_z3(ts, kept[0]), sg_t_z3(ts, two)));
    Z3_solver_assert(c, s, Z3_mk_ge(c, sg_t_z3(ts, kept[1]), sg_t_z3(ts, two)));
    CHECK(Z3_solver_check(c, s) == Z3_L_TRUE);
    m = Z3_solver_get_model(c, s);
    Z3_model_inc_ref(c, m);
    snprintf(out, cap, "%s", Z3_model_to_string(c, m));
    Z3_model_dec_ref(c, m);
    Z3_solver_dec_ref(c, s);
    sg_t_unref(ts, two);
}

/* A record replayed makes what the same calls make on a live context: ids, text, answers. */
static void test_replay(void)
{
    sg_terms *rec = NULL, *live = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_term *a[NKEPT], *b[NKEPT];
    char ma[4096], mb[4096];
    size_t i;

    CHECK_EQ_INT(sg_terms_new(&rec, NULL, &err), 0);
    CHECK_EQ_INT(sg_terms_new(&live, NULL, &err), 0);
    CHECK(sg_terms_context(live) != NULL); /* live from the start: every call goes to Z3 at once */
    script(rec, a);
    script(live, b);
    CHECK(!sg_terms_live(rec));
    CHECK(sg_terms_context(rec) != NULL);
    for (i = 0; i < NKEPT; i++) {
        Z3_ast za = sg_t_z3(rec, a[i]), zb = sg_t_z3(live, b[i]);
        CHECK(za && zb);
        if (!za || !zb)
            continue;
        CHECK_EQ_INT(Z3_get_ast_id(sg_terms_context(rec), za), Z3_get_ast_id(sg_terms_context(live), zb));
        CHECK_EQ_STR(Z3_ast_to_string(sg_terms_context(rec), za), Z3_ast_to_string(sg_terms_context(live), zb));
    }
    model_text(rec, a, ma, sizeof ma);
    model_text(live, b, mb, sizeof mb);
    CHECK_EQ_STR(ma, mb);
    drop(rec, a);
    drop(live, b);
    CHECK_EQ_INT(sg_terms_failed(rec), 0);
    sg_terms_free(rec);
    sg_terms_free(live);
}

/* The substitution is Z3_substitute's term, recorded or live; rebuilt siblings survive. */
static void test_substitute(void)
{
    int live;
    for (live = 0; live < 2; live++) {
        sg_terms *ts = NULL;
        sg_error err = SG_ERROR_INIT;
        const sg_term *x, *y, *a, *b, *parts[4], *f, *r, *from[2], *to[2], *big, *rbig;
        Z3_context c;
        Z3_ast zfrom[2], zto[2], expect;
        int i;

        CHECK_EQ_INT(sg_terms_new(&ts, NULL, &err), 0);
        if (live)
            CHECK(sg_terms_context(ts) != NULL);
        x = sg_t_const(ts, "x", SG_TS_INT);
        sg_t_ref(ts, x);
        y = sg_t_const(ts, "y", SG_TS_INT);
        sg_t_ref(ts, y);
        a = sg_t_const(ts, "a", SG_TS_INT);
        sg_t_ref(ts, a);
        b = sg_t_app2(ts, SG_T_ADD, a, sg_t_int(ts, 1));
        sg_t_ref(ts, b);
        parts[0] = sg_t_app2(ts, SG_T_GE, x, sg_t_int(ts, 1));
        sg_t_ref(ts, parts[0]);
        parts[1] = sg_t_app2(ts, SG_T_LE, y, sg_t_int(ts, 9));
        sg_t_ref(ts, parts[1]);
        parts[2] = sg_t_app2(ts, SG_T_EQ, x, y);
        sg_t_ref(ts, parts[2]);
        parts[3] = sg_t_app2(ts, SG_T_GE, a, sg_t_int(ts, 0)); /* untouched */
        sg_t_ref(ts, parts[3]);
        f = sg_t_app(ts, SG_T_AND, 4, parts);
        sg_t_ref(ts, f);
        from[0] = x;
        from[1] = y;
        to[0] = a;
        to[1] = b;
        r = sg_t_substitute(ts, f, 2, from, to);
        CHECK(r != NULL);
        sg_t_ref(ts, r);
        CHECK(sg_t_op(r) == SG_T_AND && sg_t_arg(r, 3) == parts[3]);
        CHECK(sg_t_arg(sg_t_arg(r, 2), 0) == a && sg_t_arg(sg_t_arg(r, 2), 1) == b);
        CHECK(sg_t_substitute(ts, parts[3], 2, from, to) == parts[3]); /* nothing to replace */
        big = x; /* hundreds of distinct subterms: the substitution's memo grows */
        sg_t_ref(ts, big);
        for (i = 0; i < 300; i++) {
            const sg_term *next = sg_t_app2(ts, SG_T_ADD, big, sg_t_app2(ts, SG_T_MUL, y, sg_t_int(ts, i)));
            sg_t_ref(ts, next);
            sg_t_unref(ts, big);
            big = next;
        }
        rbig = sg_t_substitute(ts, big, 2, from, to);
        CHECK(rbig != NULL && rbig != big);
        sg_t_ref(ts, rbig);
        c = sg_terms_context(ts);
        CHECK(c != NULL);
        if (c) {
            zfrom[0] = sg_t_z3(ts, x);
            zfrom[1] = sg_t_z3(ts, y);
            zto[0] = sg_t_z3(ts, a);
            zto[1] = sg_t_z3(ts, b);
            expect = Z3_substitute(c, sg_t_z3(ts, f), 2, zfrom, zto);
            Z3_inc_ref(c, expect);
            CHECK(Z3_is_eq_ast(c, expect, sg_t_z3(ts, r)));
            Z3_dec_ref(c, expect);
            expect = Z3_substitute(c, sg_t_z3(ts, big), 2, zfrom, zto);
            Z3_inc_ref(c, expect);
            CHECK(Z3_is_eq_ast(c, expect, sg_t_z3(ts, rbig)));
            Z3_dec_ref(c, expect);
        }
        sg_t_unref(ts, r);
        sg_t_unref(ts, rbig);
        sg_t_unref(ts, big);
        CHECK_EQ_INT(sg_terms_failed(ts), 0);
        sg_terms_free(ts);
    }
}

/* A power's sort is Z3's to say: asking makes the context. */
static void test_power_sort(void)
{
    sg_terms *ts = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_term *x, *p;
    sg_tsort s;

    CHECK_EQ_INT(sg_terms_new(&ts, NULL, &err), 0);
    x = sg_t_const(ts, "x", SG_TS_INT);
    sg_t_ref(ts, x);
    p = sg_t_app2(ts, SG_T_POWER, x, x);
    sg_t_ref(ts, p);
    CHECK(!sg_terms_live(ts));
    s = sg_t_sort(ts, p);
    CHECK(sg_terms_live(ts));
    CHECK(s == SG_TS_INT || s == SG_TS_REAL);
    CHECK(sg_t_sort(ts, sg_t_app2(ts, SG_T_ADD, p, p)) == s);
    sg_terms_free(ts); /* references left: a private context is deleted with them */
}

/* ---- sg_t_eval against Z3_model_eval ----------------------------------------------------------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

/* The random terms' references (Z3's discipline: each referenced before the next builder call),
 * dropped after each round. */
static sg_terms *held_ts;
static const sg_term *held[1 << 16];
static size_t nheld;

static const sg_term *hold(const sg_term *t)
{
    if (t && nheld < sizeof held / sizeof *held) {
        sg_t_ref(held_ts, t);
        held[nheld++] = t;
    }
    return t;
}

static void drop_held(void)
{
    while (nheld)
        sg_t_unref(held_ts, held[--nheld]);
}

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng_state >> 33) % n;
}

static const sg_term *rand_int(sg_terms *ts, const sg_term *const *vars, const sg_term *p, int depth);

static const sg_term *rand_bool(sg_terms *ts, const sg_term *const *vars, const sg_term *p, int depth)
{
    static const sg_top cmp[] = {SG_T_EQ, SG_T_LE, SG_T_LT, SG_T_GE, SG_T_GT};
    const sg_term *a[3];
    unsigned k = depth <= 0 ? 0 : rnd(7);
    switch (k) {
    case 0: return rnd(4) == 0 ? p : hold(sg_t_app2(ts, cmp[rnd(5)], rand_int(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1)));
    case 1: return hold(sg_t_app1(ts, SG_T_NOT, rand_bool(ts, vars, p, depth - 1)));
    case 2: case 3: { /* and / or of 0 to 3 */
        size_t n = rnd(4), i;
        for (i = 0; i < n; i++)
            a[i] = rand_bool(ts, vars, p, depth - 1);
        return hold(sg_t_app(ts, k == 2 ? SG_T_AND : SG_T_OR, n, a));
    }
    case 4: return hold(sg_t_app2(ts, SG_T_IMPLIES, rand_bool(ts, vars, p, depth - 1), rand_bool(ts, vars, p, depth - 1)));
    case 5: return hold(sg_t_app2(ts, SG_T_EQ, rand_bool(ts, vars, p, depth - 1), rand_bool(ts, vars, p, depth - 1)));
    default:
        return hold(sg_t_app2(ts, cmp[rnd(5)], rand_int(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1)));
    }
}

static const sg_term *rand_int(sg_terms *ts, const sg_term *const *vars, const sg_term *p, int depth)
{
    static const sg_top bin[] = {SG_T_ADD, SG_T_SUB, SG_T_MUL, SG_T_DIV, SG_T_MOD};
    unsigned k = depth <= 0 ? rnd(2) : rnd(6);
    if (k == 0)
        return vars[rnd(3)];
    if (k == 1) /* small, negative, zero and huge numerals (products past sg_int: cannot tell) */
        return hold(rnd(8) == 0 ? sg_t_int(ts, (sg_int)1 << 100) : sg_t_int(ts, (sg_int)rnd(17) - 8));
    if (k == 2)
        return hold(sg_t_app1(ts, SG_T_UMINUS, rand_int(ts, vars, p, depth - 1)));
    if (k == 3)
        return hold(sg_t_ite(ts, rand_bool(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1),
                             rand_int(ts, vars, p, depth - 1)));
    if (k == 4) {
        const sg_term *a[3] = {rand_int(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1)};
        return hold(sg_t_app(ts, rnd(2) ? SG_T_ADD : SG_T_MUL, 3, a));
    }
    return hold(sg_t_app2(ts, bin[rnd(5)], rand_int(ts, vars, p, depth - 1), rand_int(ts, vars, p, depth - 1)));
}

typedef struct point {
    const sg_term *vars[3], *p;
    sg_int val[3];
    int pval, calls;
} point;

static int point_value(void *arg, const sg_term *c, sg_int *v)
{
    point *pt = arg;
    int i;
    pt->calls++;
    for (i = 0; i < 3; i++)
        if (c == pt->vars[i]) {
            *v = pt->val[i];
            return 1;
        }
    if (c == pt->p) {
        *v = pt->pval;
        return 1;
    }
    return -1;
}

/* Every value sg_t_eval gives is Z3's in the model of the same point; it decides most terms
 * (what it cannot tell: a division by zero, a value past sg_int). */
static void test_eval(void)
{
    sg_terms *ts = NULL;
    sg_error err = SG_ERROR_INIT;
    point pt;
    Z3_context c;
    Z3_model m;
    int i, round, decided = 0, total = 0;

    CHECK_EQ_INT(sg_terms_new(&ts, NULL, &err), 0);
    held_ts = ts;
    c = sg_terms_context(ts);
    CHECK(c != NULL);
    if (!c)
        return;
    pt.vars[0] = sg_t_const(ts, "x", SG_TS_INT); /* each referenced before the next builder call */
    sg_t_ref(ts, pt.vars[0]);
    pt.vars[1] = sg_t_const(ts, "y", SG_TS_INT);
    sg_t_ref(ts, pt.vars[1]);
    pt.vars[2] = sg_t_fresh(ts, "z", SG_TS_INT);
    sg_t_ref(ts, pt.vars[2]);
    pt.p = sg_t_const(ts, "p", SG_TS_BOOL);
    sg_t_ref(ts, pt.p);
    for (round = 0; round < 40; round++) {
        m = Z3_mk_model(c);
        Z3_model_inc_ref(c, m);
        for (i = 0; i < 3; i++) { /* values around zero, negative ones and divisors among them */
            char txt[SG_INT_STRLEN];
            pt.val[i] = round % 5 == 4 ? (sg_int)rnd(2000001) - 1000000 : (sg_int)rnd(21) - 10;
            Z3_add_const_interp(c, m, Z3_get_app_decl(c, Z3_to_app(c, sg_t_z3(ts, pt.vars[i]))),
                                Z3_mk_numeral(c, sg_int_format(txt, pt.val[i]), Z3_mk_int_sort(c)));
        }
        pt.pval = (int)rnd(2);
        Z3_add_const_interp(c, m, Z3_get_app_decl(c, Z3_to_app(c, sg_t_z3(ts, pt.p))),
                            pt.pval ? Z3_mk_true(c) : Z3_mk_false(c));
        for (i = 0; i < 250; i++) {
            const sg_term *t = rnd(2) ? rand_bool(ts, pt.vars, pt.p, 4) : rand_int(ts, pt.vars, pt.p, 4);
            size_t budget = 100000;
            sg_int v;
            Z3_ast zv = NULL;
            char mine[SG_INT_STRLEN];
            CHECK_MSG(t != NULL, "%d %s", sg_terms_failed(ts), sg_terms_error_msg(ts));
            if (!t)
                continue;
            total++;
            if (sg_t_eval(t, point_value, &pt, &budget, &v)) {
                decided++;
                CHECK_MSG(Z3_model_eval(c, m, sg_t_z3(ts, t), false, &zv) && zv != NULL, "%s", Z3_ast_to_string(c, sg_t_z3(ts, t)));
                if (zv && sg_t_sort(ts, t) == SG_TS_BOOL)
                    CHECK_MSG(Z3_get_bool_value(c, zv) == (v ? Z3_L_TRUE : Z3_L_FALSE), "%s = %d",
                              Z3_ast_to_string(c, sg_t_z3(ts, t)), (int)v);
                else if (zv)
                    CHECK_MSG(Z3_is_numeral_ast(c, zv) && strcmp(Z3_get_numeral_string(c, zv), sg_int_format(mine, v)) == 0,
                              "%s = %s, Z3: %s", Z3_ast_to_string(c, sg_t_z3(ts, t)), mine, Z3_ast_to_string(c, zv));
            }
            drop_held();
        }
        Z3_model_dec_ref(c, m);
    }
    CHECK_MSG(decided * 10 > total * 7, "decided %d of %d", decided, total);
    {   /* the budget and the callback's answers: out of budget and "cannot tell" are 0; the
         * default reads 0; and(false, x) is false whatever x is */
        const sg_term *w = hold(sg_t_const(ts, "w", SG_TS_INT)), *f, *g;
        size_t budget = 100000, none = 0;
        sg_int v = 7;
        f = hold(sg_t_app2(ts, SG_T_LE, pt.vars[0], pt.vars[0]));
        CHECK(sg_t_eval(f, point_value, &pt, &none, &v) == 0);
        CHECK(sg_t_eval(w, point_value, &pt, &budget, &v) == 0); /* -1 from the callback */
        g = hold(sg_t_app2(ts, SG_T_AND, hold(sg_t_false(ts)), hold(sg_t_app2(ts, SG_T_EQ, w, w))));
        CHECK(sg_t_eval(g, point_value, &pt, &budget, &v) == 1 && v == 0);
        g = hold(sg_t_app2(ts, SG_T_DIV, pt.vars[0], hold(sg_t_int(ts, 0))));
        CHECK(sg_t_eval(g, point_value, &pt, &budget, &v) == 0); /* SMT-LIB leaves x div 0 open */
        g = hold(sg_t_app2(ts, SG_T_MOD, hold(sg_t_int(ts, -7)), hold(sg_t_int(ts, -2))));
        CHECK(sg_t_eval(g, point_value, &pt, &budget, &v) == 1 && v == 1);
        g = hold(sg_t_app2(ts, SG_T_DIV, hold(sg_t_int(ts, -7)), hold(sg_t_int(ts, 2))));
        CHECK(sg_t_eval(g, point_value, &pt, &budget, &v) == 1 && v == -4);
        g = hold(sg_t_app1(ts, SG_T_TO_REAL, pt.vars[0]));
        CHECK(sg_t_eval(hold(sg_t_app2(ts, SG_T_LE, g, g)), point_value, &pt, &budget, &v) == 0); /* a Real */
        drop_held();
    }
    for (i = 0; i < 3; i++)
        sg_t_unref(ts, pt.vars[i]);
    sg_t_unref(ts, pt.p);
    CHECK_EQ_INT(sg_terms_failed(ts), 0);
    sg_terms_free(ts);
}

int main(void)
{
    RUN(test_consing_and_reading);
    RUN(test_contract);
    RUN(test_replay);
    RUN(test_substitute);
    RUN(test_power_sort);
    RUN(test_eval);
    return test_summary();
}
