/*
 * srepr.c - a reader for sympy's `srepr` text, the form torch >= 2.6 writes
 * in `expr_str` (Symbol('s0', integer=True), Integer(4), Add(...), Mul(...),
 * FloorDiv(...), StrictLessThan(...), Piecewise(ExprCondPair(...), ...)),
 * building guard expressions with sg_expr_apply(). Keyword arguments are
 * skipped. Text that is not srepr falls back to sg_expr_parse() (sympy str).
 */
#include <stdbool.h>
#include <string.h>

#include "graph/graph_int.h"
#include "util/util.h"

/* Reader state over one text. `fail` holds the first problem found. */
typedef struct rd {
    const char *p;
    const char *start;
    const char *end;
    sg_pool *pool;
    int depth;
    const char *fail;
} rd;

/* Skip blanks. */
static void skip_ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n'))
        r->p++;
}

/* Consume `c` after blanks; false (nothing consumed) when the next byte differs. */
static bool eat(rd *r, char c)
{
    skip_ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

/* An identifier at the cursor into [*s, *s + *n); false when there is none. */
static bool ident(rd *r, const char **s, size_t *n)
{
    const char *q;

    skip_ws(r);
    q = r->p;
    if (q == r->end || !((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_'))
        return false;
    while (q < r->end && ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_'
                          || (*q >= '0' && *q <= '9')))
        q++;
    *s = r->p;
    *n = (size_t)(q - r->p);
    r->p = q;
    return true;
}

/* A decimal integer literal (optional '-'). */
static bool integer(rd *r, sg_int *v)
{
    const char *q;

    skip_ws(r);
    q = r->p;
    if (q < r->end && *q == '-')
        q++;
    while (q < r->end && *q >= '0' && *q <= '9')
        q++;
    if (q == r->p || sg_int_parse(v, r->p, (size_t)(q - r->p)) != 0)
        return false;
    r->p = q;
    return true;
}

/* A quoted name 'abc' (no escapes: symbol names torch makes have none). */
static bool quoted(rd *r, const char **s, size_t *n)
{
    const char *q;
    char quote;

    skip_ws(r);
    if (r->p == r->end || (*r->p != '\'' && *r->p != '"'))
        return false;
    quote = *r->p;
    q = r->p + 1;
    while (q < r->end && *q != quote && *q != '\\')
        q++;
    if (q == r->end || *q != quote)
        return false;
    *s = r->p + 1;
    *n = (size_t)(q - r->p - 1);
    r->p = q + 1;
    return true;
}

/* The symbol named [q, q+qn), or NULL when that name would not read back as
 * this symbol in the expression language (not an identifier, or a constant
 * such as `oo` or `True`, or a keyword; `*oom` set when reading it ran out of
 * memory): traces are written in that language. */
static const sg_expr *symbol_named(sg_pool *pool, const char *q, size_t qn, bool *oom)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    const char *name;

    if (sg_expr_parse(&e, pool, q, qn, &perr) != 0 || sg_expr_kind(e) != SG_SYM) {
        *oom = perr.code == SG_ENOMEM;
        return NULL;
    }
    name = sg_expr_symbol_name(e);
    return strlen(name) == qn && memcmp(name, q, qn) == 0 ? e : NULL;
}

/* True when [s, s+n) equals the C string `w`. */
static bool is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

/* The kind of a sympy/torch class name, or SG_KIND_COUNT when unknown. */
static sg_kind kind_of(const char *s, size_t n)
{
    static const struct {
        const char *name;
        sg_kind kind;
    } alias[] = {
        {"Eq", SG_EQ}, {"Ne", SG_NE}, {"Lt", SG_LT}, {"Le", SG_LE}, {"Gt", SG_GT}, {"Ge", SG_GE},
    };
    size_t i;

    for (i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (is(s, n, alias[i].name))
            return alias[i].kind;
    for (i = SG_ADD; i < SG_KIND_COUNT; i++)
        if (is(s, n, sg_kind_name((sg_kind)i)))
            return (sg_kind)i;
    return SG_KIND_COUNT;
}

static const sg_expr *read_expr(rd *r);

/* Skip a keyword argument's value (True, False, None, a number, a name). */
static bool skip_kwvalue(rd *r)
{
    const char *s;
    size_t n;
    sg_int v;

    return ident(r, &s, &n) || integer(r, &v);
}

/*
 * The arguments of a call, after its '(' up to and including ')', into a new
 * array `*args` of `*n` (sg_free). ExprCondPair(e, c) arguments are flattened
 * into e, c when `pairs` is set (Piecewise). Keyword arguments are skipped.
 */
static bool read_args(rd *r, const sg_expr ***args, size_t *n, bool pairs)
{
    size_t cap = 0;

    *args = NULL;
    *n = 0;
    if (eat(r, ')'))
        return true;
    for (;;) {
        const char *save = r->p, *s;
        size_t len;

        if (ident(r, &s, &len) && eat(r, '=')) {
            if (!skip_kwvalue(r))
                return false;
        } else {
            const sg_expr *e[2] = {NULL, NULL};
            size_t k = 1, j;

            r->p = save;
            if (pairs && ident(r, &s, &len) && is(s, len, "ExprCondPair")) {
                if (!eat(r, '(') || !(e[0] = read_expr(r)) || !eat(r, ',') || !(e[1] = read_expr(r))
                    || !eat(r, ')'))
                    return false;
                k = 2;
            } else {
                r->p = save;
                if (!(e[0] = read_expr(r)))
                    return false;
            }
            if (sg__grow((void **)args, &cap, *n + k, sizeof **args) != 0) {
                r->fail = "out of memory";
                return false;
            }
            for (j = 0; j < k; j++)
                (*args)[(*n)++] = e[j];
        }
        if (eat(r, ')'))
            return true;
        if (!eat(r, ','))
            return false;
    }
}

/* One srepr expression at the cursor, or NULL (r->fail may say why). */
static const sg_expr *read_expr(rd *r)
{
    const sg_expr *res = NULL, **args = NULL;
    const char *s, *q;
    size_t n, nargs = 0, qn;
    bool neg = false;
    sg_int v, w;
    sg_kind k;

    if (++r->depth > SG_EXPR_MAX_NESTING) {
        r->fail = "nested too deeply";
        goto done;
    }
    if (eat(r, '-'))
        neg = true;
    if (!ident(r, &s, &n))
        goto done;
    if (!eat(r, '(')) {
        /* constants written without a call */
        if (is(s, n, "oo") || is(s, n, "int_oo"))
            res = sg_expr_inf(r->pool, neg ? -1 : 1, s[0] == 'i');
        else if (is(s, n, "true") || is(s, n, "false"))
            res = neg ? NULL : sg_expr_bool(r->pool, s[0] == 't');
        else if (is(s, n, "NegativeIntInfinity"))
            res = neg ? NULL : sg_expr_inf(r->pool, -1, true);
        goto done;
    }
    if (neg)
        goto done;
    if (is(s, n, "Symbol")) {
        bool oom = false;
        if (!quoted(r, &q, &qn))
            goto done;
        while (eat(r, ',')) {
            const char *ks;
            size_t kn;
            if (!ident(r, &ks, &kn) || !eat(r, '=') || !skip_kwvalue(r))
                goto done;
        }
        if (eat(r, ')') && !(res = symbol_named(r->pool, q, qn, &oom)))
            r->fail = oom ? "out of memory" : "a Symbol name that is not an identifier";
    } else if (is(s, n, "Integer")) {
        if (integer(r, &v) && eat(r, ')'))
            res = sg_expr_int(r->pool, v);
    } else if (is(s, n, "Rational")) {
        if (integer(r, &v) && eat(r, ',') && integer(r, &w) && eat(r, ')') && w != 0)
            res = sg_expr_rational(r->pool, v, w);
    } else if ((k = kind_of(s, n)) != SG_KIND_COUNT) {
        if (read_args(r, &args, &nargs, k == SG_PIECEWISE))
            res = sg_expr_apply(r->pool, k, args, nargs);
    } else {
        r->fail = "unknown function";
    }
done:
    r->depth--;
    sg_free(args);
    return res;
}

int sg_graph__read_expr(const sg_expr **out, sg_pool *pool, const char *text, const char *field,
                        sg_error *err)
{
    rd r;
    const sg_expr *e;
    int rc;
    sg_error perr = SG_ERROR_INIT, serr = SG_ERROR_INIT;

    *out = NULL;
    r.p = r.start = text;
    r.end = text + strlen(text);
    r.pool = pool;
    r.depth = 0;
    r.fail = NULL;
    sg_pool_clear_error(pool);
    e = read_expr(&r);
    skip_ws(&r);
    if (e && r.p == r.end) {
        *out = e;
        return 0;
    }
    /* What the srepr attempt ran into, before the fallback touches the pool. */
    if (sg_pool_error(pool))
        serr = *sg_pool_error(pool);
    if (serr.code == SG_ENOMEM || (r.fail && strcmp(r.fail, "out of memory") == 0))
        return sg_error_set(err, SG_ENOMEM, "%s: out of memory", field);
    /* Not srepr (or not readable as srepr): the sympy str form. */
    rc = sg_expr_parse(&e, pool, text, strlen(text), &perr);
    if (rc == 0) {
        *out = e;
        return 0;
    }
    if (rc != SG_ENOMEM && (strstr(text, "Symbol(") || strstr(text, "Integer("))) {
        if (serr.code)
            return sg_error_set(err, SG_EUNSUPPORTED, "%s: cannot read expression at byte %zu: %s", field,
                                (size_t)(r.p - r.start) + 1, serr.msg);
        return sg_error_set(err, SG_EINVALID, "%s: cannot read expression at byte %zu%s%s", field,
                            (size_t)(r.p - r.start) + 1, r.fail ? ": " : "", r.fail ? r.fail : "");
    }
    return sg_error_set(err, sg__input_code(rc), "%s: %s", field, perr.msg);
}
