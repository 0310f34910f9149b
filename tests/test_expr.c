/*
 * test_expr.c - unit tests of the expression layer: hash-consing, the
 * normalising constructors, the parser (both printed forms, every error
 * class with its column), printing, and exact evaluation with Python
 * semantics at the edges (signs, zero, 128-bit overflow).
 */
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "test.h"

static sg_pool *pool;

static const sg_expr *P(const char *text)
{
    const sg_expr *e = NULL;
    sg_error err = SG_ERROR_INIT;
    if (sg_expr_parse(&e, pool, text, strlen(text), &err))
        fprintf(stderr, "parse failed: %s: %d:%d %s\n", text, err.code, err.col, err.msg);
    return e;
}

/* Canonical sympy (or Python) text of `text`, in a static buffer. */
static const char *canon(const char *text, sg_syntax syntax)
{
    static char buf[4096];
    const sg_expr *e = P(text);
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;
    if (!e || sg_expr_print(&s, e, syntax, NULL, NULL, &err))
        return "(error)";
    snprintf(buf, sizeof buf, "%s", s);
    sg_free(s);
    return buf;
}

static const char *S(const char *text) { return canon(text, SG_SYNTAX_SYMPY); }
static const char *PY(const char *text) { return canon(text, SG_SYNTAX_PYTHON); }

/* Parse must fail with `code` at column `col`. */
static void parse_fails(const char *text, size_t len, int code, int col)
{
    const sg_expr *e = NULL;
    sg_error err = SG_ERROR_INIT;
    int rc = sg_expr_parse(&e, pool, text, len, &err);
    CHECK_MSG(rc == code, "'%.60s': rc %d (%s), expected %d", text, rc, err.msg, code);
    CHECK_EQ_INT(err.code, code);
    if (col)
        CHECK_MSG(err.col == col, "'%.60s': col %d, expected %d (%s)", text, err.col, col, err.msg);
    CHECK(e == NULL);
    CHECK(strchr(err.msg, '\n') == NULL && err.msg[0]);
}

/* Evaluate `text` with s0..s3 = v[0..3] (symbols bound by name); the formatted value or the error. */
static const char *E(const char *text, long long s0, long long s1)
{
    static char buf[128];
    const sg_expr *e = P(text), *syms[2];
    sg_int *vals;
    sg_value v;
    sg_error err = SG_ERROR_INIT;
    size_t n, i;
    int rc;

    syms[0] = sg_expr_symbol(pool, "s0", 2);
    syms[1] = sg_expr_symbol(pool, "s1", 2);
    if (!e)
        return "(parse error)";
    n = sg_pool_nsymbols(pool);
    vals = calloc(n, sizeof *vals);
    for (i = 0; i < n; i++)
        vals[i] = 0;
    vals[sg_expr_symbol_index(syms[0])] = s0;
    vals[sg_expr_symbol_index(syms[1])] = s1;
    rc = sg_expr_eval(&v, pool, e, vals, n, &err);
    free(vals);
    if (rc == SG_EUNDEFINED)
        return "undefined";
    if (rc == SG_EOVERFLOW)
        return "overflow";
    if (rc)
        return "(error)";
    sg_value_format(buf, sizeof buf, &v);
    return buf;
}

static void test_hash_consing(void)
{
    const sg_expr *a = P("s0 + 2*s1"), *b = P("2*s1 + s0"), *c = P("s0 + s1 + s1");
    CHECK(a && a == b && a == c);
    CHECK(P("Eq(Mod(s0, 2), 0)") == P("(s0 % 2) == 0"));
    CHECK(P("(s0//2)") == P("FloorDiv(s0, 2)"));
    CHECK(P("((s0//2))") == P("s0 // 2"));
    CHECK(P("Max(s0, s1)") == P("max(s1, s0)"));
    CHECK(P("s0") != P("s1"));
    CHECK(sg_expr_symbol(pool, "s0", 2) == P("s0"));
    CHECK(sg_expr_id(P("s0")) < sg_pool_size(pool));
}

static void test_normalisation(void)
{
    CHECK_EQ_STR(S("s0 + s0*2 - 3*s1 + 1/2"), "3*s0 - 3*s1 + 1/2");
    CHECK_EQ_STR(S("-(s0 + 1)*2"), "-2*s0 - 2");
    CHECK_EQ_STR(S("s0*s0*s1"), "s0**2*s1");
    CHECK_EQ_STR(S("(2*s0)**2"), "4*s0**2");
    CHECK_EQ_STR(S("s0 - s0"), "0");
    CHECK_EQ_STR(S("0*(s0//s1)"), "0");
    CHECK_EQ_STR(S("s0**0"), "1");
    CHECK_EQ_STR(S("s0**-1"), "IntTrueDiv(1, s0)");
    CHECK_EQ_STR(S("7 // -2"), "-4");
    CHECK_EQ_STR(S("7 % -2"), "-1");
    CHECK_EQ_STR(S("-7 // 2"), "-4");
    CHECK_EQ_STR(S("CeilDiv(7, 2)"), "4");
    CHECK_EQ_STR(S("FloorDiv(s0, 1)"), "s0");
    CHECK_EQ_STR(S("FloorDiv(s0, -1)"), "-s0");
    CHECK_EQ_STR(S("Mod(s0, 1)"), "0");
    CHECK_EQ_STR(S("Max(s0, 3, Max(2, s1))"), "Max(3, s0, s1)");
    CHECK_EQ_STR(S("Min(s0, s0)"), "s0");
    CHECK_EQ_STR(S("s0 <= int_oo"), "True");
    CHECK_EQ_STR(S("s0 >= -int_oo"), "True");
    CHECK_EQ_STR(S("Eq(s0, int_oo)"), "False");
    CHECK_EQ_STR(S("Max(s0, int_oo)"), "int_oo");
    CHECK_EQ_STR(S("Min(s0, int_oo)"), "s0");
    CHECK_EQ_STR(S("-int_oo + 5"), "-int_oo");
    CHECK_EQ_STR(S("IntInfinity()"), "int_oo");
    CHECK_EQ_STR(S("NegativeIntInfinity()"), "-int_oo");
    CHECK_EQ_STR(S("Ne(s0 + 1, s0)"), "True");
    CHECK_EQ_STR(S("s0 + 1 > s0"), "True");
    CHECK_EQ_STR(S("Eq(s0, s0)"), "True");
    CHECK_EQ_STR(S("~(s0 > 2)"), "s0 <= 2");
    CHECK_EQ_STR(S("not Eq(s0, 2)"), "Ne(s0, 2)");
    CHECK_EQ_STR(S("~~(s0 > 2)"), "s0 > 2");
    CHECK_EQ_STR(S("(s0 > 2) & True"), "s0 > 2");
    CHECK_EQ_STR(S("(s0 > 2) & False"), "False");
    CHECK_EQ_STR(S("(s0 > 2) | True"), "True");
    CHECK_EQ_STR(S("(s0 >= 2) & (s0 <= 10) & (s0 >= 2)"), "(s0 >= 2) & (s0 <= 10)");
    CHECK_EQ_STR(S("2 <= s0 <= 16"), "(2 <= s0) & (s0 <= 16)");
    CHECK_EQ_STR(S("Piecewise((1, s0 > 3), (0, True))"), "Piecewise((1, s0 > 3), (0, True))");
    CHECK_EQ_STR(S("Piecewise((1, False), (2, True))"), "2");
    CHECK_EQ_STR(S("Where(True, s0, s1)"), "s0");
    CHECK_EQ_STR(S("(s0 if s1 > 2 else 3)"), "Where(s1 > 2, s0, 3)");
    CHECK_EQ_STR(S("PowByNatural(s0, 3)"), "s0**3");
    CHECK_EQ_STR(S("s0 ** s1"), "PowByNatural(s0, s1)");
    CHECK_EQ_STR(S("FloorToInt(s0)"), "s0");
    CHECK_EQ_STR(S("FloorToInt(IntTrueDiv(7, 2))"), "3");
    CHECK_EQ_STR(S("CeilToInt(IntTrueDiv(-7, 2))"), "-3");
    CHECK_EQ_STR(S("TruncToInt(IntTrueDiv(-7, 2))"), "-3");
    CHECK_EQ_STR(S("IntTrueDiv(4, 2)"), "2/1");
    CHECK_EQ_STR(S("Identity(s0)"), "Identity(s0)");
    CHECK_EQ_STR(S("Identity(4)"), "4");
    CHECK_EQ_STR(S("ModularIndexing(13, 2, 4)"), "2");
    CHECK_EQ_STR(S("9223372036854775807 + 1"), "9223372036854775808");
}

static void test_sources(void)
{
    CHECK_EQ_STR(S("(L['x'].size()[0] % 8) == 0"), "Eq(Mod(L['x'].size()[0], 8), 0)");
    CHECK_EQ_STR(S("L[\"x\"].size()[0]"), "L['x'].size()[0]");
    CHECK_EQ_STR(S("L['args'][1]['input_ids'].size()[1] != 512"), "Ne(L['args'][1]['input_ids'].size()[1], 512)");
    CHECK_EQ_STR(S("L['x'].stride()[0] + L['x'].storage_offset()"), "L['x'].storage_offset() + L['x'].stride()[0]");
    CHECK(P("L['x'].size()[0]") == P("L[ 'x' ] . size ( ) [ 0 ]"));
}

static void test_python_form(void)
{
    CHECK_EQ_STR(PY("Eq(Mod(s77, 8), 0)"), "(s77 % 8) == 0");
    CHECK_EQ_STR(PY("8*((s77//8)) >= 2"), "8*(s77 // 8) >= 2");
    CHECK_EQ_STR(PY("Ne((s77//8), 1)"), "(s77 // 8) != 1");
    CHECK_EQ_STR(PY("Eq(2*s0, s0 + 4)"), "(2*s0) == (4 + s0)");
    CHECK_EQ_STR(PY("(2 <= s0) & (s0 <= 16)"), "2 <= s0 and s0 <= 16");
    CHECK_EQ_STR(PY("~((s0 > 2) | (s1 > 2))"), "not (s0 > 2 or s1 > 2)");
    CHECK_EQ_STR(PY("Max(s0, 2)"), "max(2, s0)");
    CHECK_EQ_STR(PY("-(s0//s1)"), "-(s0 // s1)");
    CHECK_EQ_STR(PY("FloorDiv(-s0, s1)"), "-s0 // s1");
    CHECK_EQ_STR(PY("FloorDiv(s0, 2*s1)"), "s0 // (2*s1)");
    CHECK_EQ_STR(PY("Where(s0 > 1, s0, 1)"), "(s0 if s0 > 1 else 1)");
    CHECK_EQ_STR(PY("int_oo"), "int_oo");
}

static void test_errors(void)
{
    static char deep[20001];
    parse_fails("", 0, SG_EINVALID, 1);
    parse_fails("   ", 3, SG_EINVALID, 1);
    parse_fails("Eq(s0", 5, SG_EINVALID, 6);
    parse_fails("(s0 + 1", 7, SG_EINVALID, 8);
    parse_fails("s0 + 1)", 7, SG_EINVALID, 7);
    parse_fails("foo(s0)", 7, SG_EUNSUPPORTED, 1);
    parse_fails("s0 + frobnicate(1)", 18, SG_EUNSUPPORTED, 6);
    parse_fails("s0 +", 4, SG_EINVALID, 5);
    parse_fails("1.5 * s0", 8, SG_EUNSUPPORTED, 1);
    parse_fails("s0 \xff", 4, SG_EINVALID, 4);
    parse_fails("s0 $ 2", 6, SG_EINVALID, 4);
    parse_fails("s0 % 0", 6, SG_EUNDEFINED, 4);
    parse_fails("FloorDiv(s0, 0)", 15, SG_EUNDEFINED, 1);
    parse_fails("s0 & s1", 7, SG_EUNSUPPORTED, 4);
    parse_fails("~s0", 3, SG_EUNSUPPORTED, 1);
    parse_fails("Eq(s0)", 6, SG_EINVALID, 1);
    parse_fails("Mod(s0 > 1, 2)", 14, SG_EINVALID, 1);
    parse_fails("(s0 > 1) + 1", 12, SG_EINVALID, 10);
    parse_fails("int_oo - int_oo", 15, SG_EUNDEFINED, 8);
    parse_fails("s0*int_oo", 9, SG_EUNSUPPORTED, 3);
    parse_fails("FloorDiv(int_oo, 2)", 19, SG_EUNSUPPORTED, 1);
    parse_fails("s0 ** 1.5", 9, SG_EUNSUPPORTED, 7);
    parse_fails("nan", 3, SG_EUNDEFINED, 1);
    parse_fails("s0 if s1 > 2", 12, SG_EINVALID, 13);
    parse_fails("Piecewise((1, False))", 21, SG_EUNDEFINED, 1);
    parse_fails("170141183460469231731687303715884105728", 39, SG_EOVERFLOW, 1);
    parse_fails("L['x", 4, SG_EINVALID, 3);
    memset(deep, '(', sizeof deep - 1);
    parse_fails(deep, sizeof deep - 1, SG_ELIMIT, 0);
    memset(deep, '-', sizeof deep - 1);
    parse_fails(deep, sizeof deep - 1, SG_ELIMIT, 0);
    {
        /* a long left-associative chain: no recursion, but a node depth limit */
        size_t n = 3 * 2000 + 2, i;
        char *chain = malloc(n + 1);
        chain[0] = 's';
        chain[1] = '0';
        for (i = 2; i < n; i += 3)
            memcpy(chain + i, "//2", 3);
        parse_fails(chain, n, SG_ELIMIT, 0);
        free(chain);
    }
    {
        size_t n = SG_EXPR_MAX_TEXT + 1;
        char *big = malloc(n);
        memset(big, ' ', n);
        parse_fails(big, n, SG_ELIMIT, 0);
        free(big);
    }
    /* the pool is still usable after errors */
    CHECK(P("s0 + 1") != NULL);
    CHECK(sg_pool_error(pool) == NULL);
}

static void test_eval(void)
{
    CHECK_EQ_STR(E("FloorDiv(s0, s1)", -7, 2), "-4");
    CHECK_EQ_STR(E("FloorDiv(s0, s1)", 7, -2), "-4");
    CHECK_EQ_STR(E("FloorDiv(s0, s1)", -7, -2), "3");
    CHECK_EQ_STR(E("Mod(s0, s1)", 7, -2), "-1");
    CHECK_EQ_STR(E("Mod(s0, s1)", -7, 2), "1");
    CHECK_EQ_STR(E("PythonMod(s0, s1)", -7, -2), "-1");
    CHECK_EQ_STR(E("CeilDiv(s0, s1)", 7, 2), "4");
    CHECK_EQ_STR(E("CeilDiv(s0, s1)", -7, 2), "-3");
    CHECK_EQ_STR(E("CeilDiv(s0, s1)", 7, -2), "-3");
    CHECK_EQ_STR(E("ModularIndexing(s0, s1, 3)", -7, 2), "2");
    CHECK_EQ_STR(E("FloorDiv(s0, s1)", 1, 0), "undefined");
    CHECK_EQ_STR(E("Mod(s0, s1)", 1, 0), "undefined");
    CHECK_EQ_STR(E("IntTrueDiv(s0, s1)", 7, 2), "7/2");
    CHECK_EQ_STR(E("IntTrueDiv(s0, s1)", -7, 0), "undefined");
    CHECK_EQ_STR(E("TruncToInt(IntTrueDiv(s0, s1))", -7, 2), "-3");
    CHECK_EQ_STR(E("FloorToInt(IntTrueDiv(s0, s1))", -7, 2), "-4");
    CHECK_EQ_STR(E("CeilToInt(IntTrueDiv(s0, s1))", -7, 2), "-3");
    CHECK_EQ_STR(E("PowByNatural(s0, s1)", -3, 3), "-27");
    CHECK_EQ_STR(E("PowByNatural(s0, s1)", 0, 0), "1");
    CHECK_EQ_STR(E("PowByNatural(s0, s1)", 2, -1), "undefined");
    CHECK_EQ_STR(E("PowByNatural(s0, s1)", 2, 127), "overflow");
    CHECK_EQ_STR(E("PowByNatural(s0, s1)", 2, 126), "85070591730234615865843651857942052864");
    CHECK_EQ_STR(E("s0*s0*s0*s1", 1LL << 40, 1LL << 40), "overflow");
    CHECK_EQ_STR(E("s0*s1", 1LL << 62, 1LL << 62), "21267647932558653966460912964485513216");
    /* strict: an undefined argument wins over overflow elsewhere */
    CHECK_EQ_STR(E("Max(s0**4, FloorDiv(1, s1))", 1LL << 40, 0), "undefined");
    CHECK_EQ_STR(E("Where(Eq(s1, 0), 0, FloorDiv(s0, s1))", 5, 0), "undefined");
    CHECK_EQ_STR(E("Where(Eq(s1, 0), 0, FloorDiv(s0, s1))", 5, 2), "2");
    CHECK_EQ_STR(E("Piecewise((1, s0 > 3), (2, s0 > 1))", 0, 0), "undefined");
    CHECK_EQ_STR(E("Piecewise((1, s0 > 3), (2, s0 > 1))", 2, 0), "2");
    CHECK_EQ_STR(E("Max(s0, IntTrueDiv(s1, 2))", 1, 3), "3/2");
    CHECK_EQ_STR(E("Max(s0, IntTrueDiv(s1, 2))", 2, 3), "2/1");
    CHECK_EQ_STR(E("(s0 > 2) & Ne(s1, 3)", 3, 3), "False");
    CHECK_EQ_STR(E("(s0 > 2) | Ne(s1, 3)", 3, 3), "True");
    CHECK_EQ_STR(E("Eq(IntTrueDiv(s0, 2), 2)", 4, 0), "True");
    CHECK_EQ_STR(E("int_oo", 0, 0), "int_oo");
    CHECK_EQ_STR(E("Identity(s0 - 1)", 5, 0), "4");
    {
        const sg_expr *e = P("s0 + s1 + s2_unbound");
        sg_value v;
        sg_error err = SG_ERROR_INIT;
        sg_int vals[2] = {1, 2};
        /* a symbol without a value is an error naming it */
        CHECK_EQ_INT(sg_expr_eval(&v, pool, e, vals, 2, &err), SG_EINVALID);
        CHECK(strstr(err.msg, "s2_unbound") != NULL);
    }
}

static void test_symbols_and_depth(void)
{
    const sg_expr **syms = NULL;
    size_t n = 0;
    sg_error err = SG_ERROR_INIT;
    const sg_expr *e = P("Max(s1, s0) + FloorDiv(s1, s9) - u3");
    CHECK_EQ_INT(sg_expr_symbols(&syms, &n, pool, e, &err), 0);
    CHECK_EQ_INT(n, 4);
    sg_free(syms);
    CHECK(sg_expr_depth(P("s0")) == 1);
    CHECK(sg_expr_depth(P("Eq(Mod(s0, 2), 0)")) == 3);
    CHECK(sg_expr_is_constant(P("3")) && !sg_expr_is_constant(P("s0 + 3")));
}

static void test_round_trip_random_shapes(void)
{
    /* every kind, printed both ways and parsed back */
    static const char *const texts[] = {
        "Eq(Mod(s0, 2), 0)", "PythonMod(s0, -3)", "CleanDiv(s0, 4)", "CeilDiv(s0 + 1, s1)",
        "ModularIndexing(s0, 2, 4)", "IntTrueDiv(s0, s1) > 1/3", "TruncToInt(IntTrueDiv(s0, s1))",
        "Max(s0, s1, 4) <= Min(s1, 7)", "Where(s0 > 1, s0, s1) + 1", "Piecewise((s0, s1 > 2), (s1, True))",
        "PowByNatural(s0, s1 + 1)", "s0**3 - 2*s0*s1 + 7", "~((s0 > 2) | (s1 < 3))", "Identity(s0*s1)",
        "Ne(FloorDiv(-s0, s1), -3)", "-(s0//s1) + s1", "Eq(s0 > 1, s1 > 1)", "s0/2 + s1",
    };
    size_t i;
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const sg_expr *e = P(texts[i]), *back = NULL;
        char *s = NULL;
        sg_error err = SG_ERROR_INIT;
        CHECK_MSG(e != NULL, "%s", texts[i]);
        if (!e)
            continue;
        CHECK_EQ_INT(sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err), 0);
        CHECK_EQ_INT(sg_expr_parse(&back, pool, s, strlen(s), &err), 0);
        CHECK_MSG(back == e, "%s -> %s", texts[i], s);
        sg_free(s);
    }
}

static const char *rename_sym(const sg_expr *sym, void *payload)
{
    (void)payload;
    return strcmp(sg_expr_symbol_name(sym), "s77") == 0 ? "L['x'].size()[0]" : NULL;
}

static void test_namer(void)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;
    CHECK_EQ_INT(sg_expr_print(&s, P("Eq(Mod(s77, 8), 0)"), SG_SYNTAX_PYTHON, rename_sym, NULL, &err), 0);
    CHECK_EQ_STR(s, "(L['x'].size()[0] % 8) == 0");
    sg_free(s);
}

static void test_alloc_failure(void)
{
    /* every allocation of a parse failing in turn: a clean SG_ENOMEM, never a crash */
    long n;
    int ok = 0;
    for (n = 0; n < 200 && !ok; n++) {
        sg_pool *p = NULL;
        sg_error err = SG_ERROR_INIT;
        const sg_expr *e = NULL;
        int rc;
        sg_alloc_fail_after(n);
        rc = sg_pool_new(&p, &err);
        if (rc == 0)
            rc = sg_expr_parse(&e, p, "Eq(Mod(s0, 8), 0) & (s1 >= 2*s0 + 1)", 36, &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "n=%ld rc=%d %s", n, rc, err.msg);
        ok = rc == 0;
        sg_pool_free(p);
    }
    CHECK(ok);
}

int main(void)
{
    sg_error err = SG_ERROR_INIT;
    if (sg_pool_new(&pool, &err))
        return 2;
    RUN(test_hash_consing);
    RUN(test_normalisation);
    RUN(test_sources);
    RUN(test_python_form);
    RUN(test_errors);
    RUN(test_eval);
    RUN(test_symbols_and_depth);
    RUN(test_round_trip_random_shapes);
    RUN(test_namer);
    RUN(test_alloc_failure);
    sg_pool_free(pool);
    return test_summary();
}
