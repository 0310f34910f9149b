/*
 * parse.c - the parser for guard expressions in both forms torch prints them
 * (sympy str() and the Python printer's), one grammar for both.
 *
 * Precedence climbs as in Python: ternary < or < and < not < comparisons
 * (chained) < | < & < + - < * / // % < unary + - ~ < ** < calls and atoms.
 * Every error carries the 1-based byte column of the offending token.
 * Recursion is bounded by SG_EXPR_MAX_NESTING and the text by SG_EXPR_MAX_TEXT.
 */
#include <string.h>

#include "expr/expr_impl.h"

typedef enum tok_type {
    T_END, T_INT, T_IDENT, T_STRING, T_OP
} tok_type;

typedef struct token {
    tok_type type;
    size_t start, len; /* byte range in the text */
} token;

typedef struct parser {
    sg_pool *pool;
    const char *s;
    size_t n, pos;
    token tok;
    int nesting;
    sg_error *err;
    int failed;
} parser;

/* ---- Errors ------------------------------------------------------------------- */

static int col_of(const parser *ps, size_t off) { return off >= (size_t)0x7fffffff ? 0x7fffffff : (int)off + 1; }

static int perr(parser *ps, size_t off, int code, const char *fmt, ...) SG_PRINTF(4, 5);
static int perr(parser *ps, size_t off, int code, const char *fmt, ...)
{
    va_list ap;
    if (ps->failed)
        return ps->failed;
    ps->failed = code;
    if (ps->err) {
        ps->err->code = code;
        ps->err->col = col_of(ps, off);
        va_start(ap, fmt);
        vsnprintf(ps->err->msg, sizeof ps->err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* A constructor returned NULL: move the pool's error to the token at `off`. */
static const sg_expr *built(parser *ps, const sg_expr *e, size_t off)
{
    const sg_error *pe;
    if (e || ps->failed)
        return e;
    pe = sg_pool_error(ps->pool);
    if (pe)
        perr(ps, off, pe->code, "%s", pe->msg);
    else
        perr(ps, off, SG_ERROR, "could not build the expression");
    sg_pool_clear_error(ps->pool);
    return NULL;
}

/* ---- Lexer ---------------------------------------------------------------------- */

static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static const char *const OPS[] = {"**", "//", "==", "!=", "<=", ">=", "(", ")", "[", "]", ",", ".",
                                  "+", "-", "*", "/", "%", "<", ">", "&", "|", "~", NULL};

static void next(parser *ps)
{
    const char *s = ps->s;
    size_t i = ps->pos;
    int k;

    if (ps->failed) {
        ps->tok.type = T_END;
        return;
    }
    while (i < ps->n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    ps->tok.start = i;
    ps->tok.len = 0;
    if (i >= ps->n) {
        ps->tok.type = T_END;
        ps->pos = i;
        return;
    }
    if (is_digit(s[i])) {
        size_t j = i;
        while (j < ps->n && is_digit(s[j]))
            j++;
        if (j < ps->n && (s[j] == '.' || s[j] == 'e' || s[j] == 'E' || is_alpha(s[j]))) {
            perr(ps, i, SG_EUNSUPPORTED, "float or malformed number literal '%.*s' is not supported",
                 (int)(j - i + 1 > 32 ? 32 : j - i + 1), s + i);
            ps->tok.type = T_END;
            return;
        }
        ps->tok.type = T_INT;
        ps->tok.len = j - i;
        ps->pos = j;
        return;
    }
    if (is_alpha(s[i])) {
        size_t j = i;
        while (j < ps->n && (is_alpha(s[j]) || is_digit(s[j])))
            j++;
        ps->tok.type = T_IDENT;
        ps->tok.len = j - i;
        ps->pos = j;
        return;
    }
    if (s[i] == '\'' || s[i] == '"') {
        size_t j = i + 1;
        while (j < ps->n && s[j] != s[i] && s[j] != '\\' && (unsigned char)s[j] >= 0x20 && (unsigned char)s[j] < 0x7f)
            j++;
        if (j >= ps->n || s[j] != s[i]) {
            perr(ps, i, SG_EINVALID, "unterminated or unsupported string literal");
            ps->tok.type = T_END;
            return;
        }
        ps->tok.type = T_STRING;
        ps->tok.len = j + 1 - i;
        ps->pos = j + 1;
        return;
    }
    for (k = 0; OPS[k]; k++) {
        size_t l = strlen(OPS[k]);
        if (i + l <= ps->n && !memcmp(s + i, OPS[k], l)) {
            ps->tok.type = T_OP;
            ps->tok.len = l;
            ps->pos = i + l;
            return;
        }
    }
    if ((unsigned char)s[i] >= 0x80 || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
        perr(ps, i, SG_EINVALID, "unexpected byte 0x%02x", (unsigned char)s[i]);
    else
        perr(ps, i, SG_EINVALID, "unexpected character '%c'", s[i]);
    ps->tok.type = T_END;
}

static bool tok_is(const parser *ps, tok_type t, const char *text)
{
    size_t l = strlen(text);
    return ps->tok.type == t && ps->tok.len == l && !memcmp(ps->s + ps->tok.start, text, l);
}

static bool is_op(const parser *ps, const char *op) { return tok_is(ps, T_OP, op); }
static bool is_kw(const parser *ps, const char *kw) { return tok_is(ps, T_IDENT, kw); }

static void describe(const parser *ps, char *buf, size_t cap)
{
    if (ps->tok.type == T_END)
        snprintf(buf, cap, "end of input");
    else
        snprintf(buf, cap, "'%.*s'", (int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->s + ps->tok.start);
}

static bool expect(parser *ps, const char *op, const char *what)
{
    char d[64];
    if (is_op(ps, op)) {
        next(ps);
        return true;
    }
    describe(ps, d, sizeof d);
    perr(ps, ps->tok.start, SG_EINVALID, "expected '%s' %s, found %s", op, what, d);
    return false;
}

/* ---- Grammar ---------------------------------------------------------------------- */

static const sg_expr *p_ternary(parser *ps);
static const sg_expr *p_or(parser *ps);
static const sg_expr *p_factor(parser *ps);

static bool enter(parser *ps)
{
    if (++ps->nesting > SG_EXPR_MAX_NESTING) {
        perr(ps, ps->tok.start, SG_ELIMIT, "expression nested deeper than %d levels", SG_EXPR_MAX_NESTING);
        return false;
    }
    return true;
}

static void leave(parser *ps) { ps->nesting--; }

/* `f` one nesting level deeper: NULL when it fails or the nesting is over its limit. */
static const sg_expr *nested(parser *ps, const sg_expr *(*f)(parser *))
{
    const sg_expr *e;
    if (!enter(ps))
        return NULL;
    e = f(ps);
    leave(ps);
    return e;
}

/* Function names accepted in call syntax (besides sg_kind_name of every kind). */
static const struct {
    const char *name;
    sg_kind kind;
} FUNCS[] = {
    {"Eq", SG_EQ}, {"Ne", SG_NE}, {"Lt", SG_LT}, {"Le", SG_LE}, {"Gt", SG_GT}, {"Ge", SG_GE},
    {"max", SG_MAX}, {"min", SG_MIN}, {"sym_max", SG_MAX}, {"sym_min", SG_MIN},
    {"math.floor", SG_FLOOR}, {"math.ceil", SG_CEIL}, {"math.trunc", SG_TRUNC},
    {"torch.sym_max", SG_MAX}, {"torch.sym_min", SG_MIN}, /* guards_code of torch >= 2.8 */
    {"floor", SG_FLOOR}, {"ceiling", SG_CEIL},
};

static bool lookup_func(const char *name, size_t len, sg_kind *kind)
{
    size_t i;
    int k;
    for (i = 0; i < sizeof FUNCS / sizeof FUNCS[0]; i++)
        if (strlen(FUNCS[i].name) == len && !memcmp(FUNCS[i].name, name, len)) {
            *kind = FUNCS[i].kind;
            return true;
        }
    for (k = SG_ADD; k < SG_KIND_COUNT; k++) {
        const char *kn = sg_kind_name((sg_kind)k);
        if (strlen(kn) == len && !memcmp(kn, name, len)) {
            *kind = (sg_kind)k;
            return true;
        }
    }
    return false;
}

/* Arguments of a call, after '(' was consumed; Piecewise takes (value, cond) tuples. */
static const sg_expr *p_call(parser *ps, sg_kind kind, size_t at, const char *name, size_t nlen)
{
    const sg_expr **args = NULL, *res = NULL;
    size_t n = 0, cap = 0;

    if (!enter(ps))
        return NULL;
    while (!is_op(ps, ")")) {
        size_t want = kind == SG_PIECEWISE ? 2 : 1, k;
        if (n > 0 && !expect(ps, ",", "between arguments"))
            goto cleanup;
        if (is_op(ps, ")")) /* trailing comma */
            break;
        if (kind == SG_PIECEWISE && !expect(ps, "(", "to open a Piecewise (value, condition) pair"))
            goto cleanup;
        for (k = 0; k < want; k++) {
            const sg_expr *a;
            if (k > 0 && !expect(ps, ",", "inside a Piecewise pair"))
                goto cleanup;
            a = p_ternary(ps);
            if (!a)
                goto cleanup;
            if (n >= SG_EXPR_MAX_ARGS) {
                perr(ps, at, SG_ELIMIT, "more than %d arguments", SG_EXPR_MAX_ARGS);
                goto cleanup;
            }
            if (sg__grow((void **)&args, &cap, n + 1, sizeof *args)) {
                perr(ps, at, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
            args[n++] = a;
        }
        if (kind == SG_PIECEWISE && !expect(ps, ")", "to close a Piecewise pair"))
            goto cleanup;
    }
    next(ps); /* ')' */
    if (n == 0 && kind != SG_INF) {
        perr(ps, at, SG_EINVALID, "%.*s() takes arguments", (int)nlen, name);
        goto cleanup;
    }
    res = built(ps, sg_expr_apply(ps->pool, kind, args, n), at);
cleanup:
    sg_free(args);
    leave(ps);
    return res;
}

/* A torch source such as L['x'].size()[0] or L['args'][0][1].stride()[2]: a symbol
 * named by its canonical text (no blanks). `at` is the start of the root name. */
static const sg_expr *p_source(parser *ps, size_t at)
{
    sg_buf b;
    const sg_expr *res = NULL;
    sg_buf_init(&b, 4096);
    sg_buf_append(&b, ps->s + ps->tok.start, ps->tok.len);
    next(ps);
    for (;;) {
        if (is_op(ps, "[")) {
            next(ps);
            if (ps->tok.type != T_INT && ps->tok.type != T_STRING) {
                perr(ps, ps->tok.start, SG_EINVALID, "expected an index or a key inside [] of a source");
                goto cleanup;
            }
            sg_buf_putc(&b, '[');
            if (ps->tok.type == T_STRING) { /* canonical quotes: '...' */
                sg_buf_putc(&b, '\'');
                sg_buf_append(&b, ps->s + ps->tok.start + 1, ps->tok.len - 2);
                sg_buf_putc(&b, '\'');
            } else {
                sg_buf_append(&b, ps->s + ps->tok.start, ps->tok.len);
            }
            next(ps);
            if (!expect(ps, "]", "to close a source index"))
                goto cleanup;
            sg_buf_putc(&b, ']');
        } else if (is_op(ps, ".")) {
            next(ps);
            if (ps->tok.type != T_IDENT) {
                perr(ps, ps->tok.start, SG_EINVALID, "expected an attribute name after '.'");
                goto cleanup;
            }
            sg_buf_putc(&b, '.');
            sg_buf_append(&b, ps->s + ps->tok.start, ps->tok.len);
            next(ps);
            if (is_op(ps, "(")) {
                next(ps);
                if (!expect(ps, ")", "(source methods take no arguments)"))
                    goto cleanup;
                sg_buf_puts(&b, "()");
            }
        } else {
            break;
        }
    }
    if (b.failed) {
        perr(ps, at, b.failed, "source name too long");
        goto cleanup;
    }
    res = built(ps, sg_expr_symbol(ps->pool, b.data, b.len), at);
cleanup:
    sg_buf_dispose(&b);
    return res;
}

static const sg_expr *p_atom(parser *ps)
{
    size_t at = ps->tok.start;
    const char *t = ps->s + at;
    size_t len = ps->tok.len;
    char d[64];

    if (ps->tok.type == T_INT) {
        sg_int v;
        int rc = sg_int_parse(&v, t, len);
        if (rc) {
            perr(ps, at, rc == SG_EOVERFLOW ? SG_EOVERFLOW : SG_EINVALID,
                 "integer literal of %zu digits is outside the 128-bit range", len);
            return NULL;
        }
        next(ps);
        return built(ps, sg_expr_int(ps->pool, v), at);
    }
    if (is_op(ps, "(")) {
        const sg_expr *e;
        if (!enter(ps))
            return NULL;
        next(ps);
        e = p_ternary(ps);
        if (e && !expect(ps, ")", "to close '('"))
            e = NULL;
        leave(ps);
        return e;
    }
    if (ps->tok.type == T_IDENT) {
        sg_kind kind;
        size_t nlen = len;
        /* dotted module functions and constants: math.floor(...), math.inf, torch.sym_max(...) */
        if ((len == 4 && !memcmp(t, "math", 4)) || (len == 5 && !memcmp(t, "torch", 5))) {
            next(ps);
            if (!expect(ps, ".", len == 4 ? "after 'math'" : "after 'torch'"))
                return NULL;
            if (ps->tok.type != T_IDENT) {
                perr(ps, ps->tok.start, SG_EINVALID, "expected a name after '%.*s.'", (int)len, t);
                return NULL;
            }
            nlen = ps->tok.start + ps->tok.len - at;
            if (len == 4 && tok_is(ps, T_IDENT, "inf")) {
                next(ps);
                return built(ps, sg_expr_inf(ps->pool, 1, false), at);
            }
        }
        if (nlen == len) {
            static const char *const KW[] = {"and", "or", "not", "if", "else", "in", "is", "lambda", NULL};
            int k;
            if (tok_is(ps, T_IDENT, "True") || tok_is(ps, T_IDENT, "true")) {
                next(ps);
                return built(ps, sg_expr_bool(ps->pool, true), at);
            }
            if (tok_is(ps, T_IDENT, "False") || tok_is(ps, T_IDENT, "false")) {
                next(ps);
                return built(ps, sg_expr_bool(ps->pool, false), at);
            }
            if (tok_is(ps, T_IDENT, "int_oo") || tok_is(ps, T_IDENT, "oo")) {
                bool integer = len == 6;
                next(ps);
                return built(ps, sg_expr_inf(ps->pool, 1, integer), at);
            }
            if (tok_is(ps, T_IDENT, "nan") || tok_is(ps, T_IDENT, "zoo")) {
                perr(ps, at, SG_EUNDEFINED, "'%.*s' (not a number) is not a value", (int)len, t);
                return NULL;
            }
            for (k = 0; KW[k]; k++)
                if (tok_is(ps, T_IDENT, KW[k])) {
                    perr(ps, at, SG_EINVALID, "expected an expression, found keyword '%s'", KW[k]);
                    return NULL;
                }
        }
        next(ps);
        if (is_op(ps, "(")) {
            next(ps);
            if ((nlen == 11 && !memcmp(t, "IntInfinity", 11)) || (nlen == 19 && !memcmp(t, "NegativeIntInfinity", 19))) {
                if (!expect(ps, ")", "(IntInfinity takes no arguments)"))
                    return NULL;
                return built(ps, sg_expr_inf(ps->pool, nlen == 11 ? 1 : -1, true), at);
            }
            if (!lookup_func(t, nlen, &kind) || kind < SG_ADD) {
                perr(ps, at, SG_EUNSUPPORTED, "unknown function '%.*s'", (int)(nlen > 48 ? 48 : nlen), t);
                return NULL;
            }
            return p_call(ps, kind, at, t, nlen);
        }
        if (nlen != len) {
            perr(ps, at, SG_EUNSUPPORTED, "unknown name '%.*s'", (int)(nlen > 48 ? 48 : nlen), t);
            return NULL;
        }
        if (is_op(ps, "[") || (is_op(ps, ".") && len == 1 && t[0] == 'L')) {
            ps->pos = at;           /* re-lex the root name for p_source */
            next(ps);
            return p_source(ps, at);
        }
        return built(ps, sg_expr_symbol(ps->pool, t, len), at);
    }
    describe(ps, d, sizeof d);
    perr(ps, at, SG_EINVALID, ps->tok.type == T_END ? "expected an expression, found %s" : "expected an expression, found %s", d);
    return NULL;
}

/* power := atom ['**' factor] ; the exponent binds as in Python (right-assoc, unary allowed) */
static const sg_expr *p_power(parser *ps)
{
    const sg_expr *b = p_atom(ps), *e;
    size_t at;
    if (!b || !is_op(ps, "**"))
        return b;
    at = ps->tok.start;
    next(ps);
    if (!(e = nested(ps, p_factor)))
        return NULL;
    /* a literal exponent is sympy's Pow; anything else is PowByNatural (the Python printer's b ** e) */
    return built(ps, sg_expr_2(ps->pool, sg_expr_kind(e) == SG_INT ? SG_POW : SG_POWNAT, b, e), at);
}

/*
 * Is the current token the literal 2**127, and not an operand of what binds
 * tighter than the '-' before it (`**` after a unary minus; also `*`, `/`,
 * `//`, `%` after a binary one)? Then "-" and it are -2**127 = SG_INT_MIN, the
 * one 128-bit value whose magnitude is no 128-bit literal; the printers write
 * it that way ("s0 - 170141183460469231731687303715884105728").
 */
static bool min_magnitude_next(parser *ps, bool binary)
{
    static const char MAG[] = "170141183460469231731687303715884105728";
    parser peek;
    if (ps->tok.type != T_INT || ps->tok.len != sizeof MAG - 1 || memcmp(ps->s + ps->tok.start, MAG, sizeof MAG - 1))
        return false;
    peek = *ps;
    peek.err = NULL; /* a peek reports nothing */
    next(&peek);
    if (is_op(&peek, "**"))
        return false;
    return !binary || !(is_op(&peek, "*") || is_op(&peek, "/") || is_op(&peek, "//") || is_op(&peek, "%"));
}

/* factor := ('+' | '-' | '~') factor | power */
static const sg_expr *p_factor(parser *ps)
{
    size_t at = ps->tok.start;
    const sg_expr *a, *r = NULL;
    char op;
    if (!is_op(ps, "-") && !is_op(ps, "+") && !is_op(ps, "~"))
        return p_power(ps);
    op = ps->s[at];
    next(ps);
    if (op == '-' && min_magnitude_next(ps, false)) {
        next(ps);
        return built(ps, sg_expr_int(ps->pool, SG_INT_MIN), at);
    }
    if (!(a = nested(ps, p_factor)))
        return NULL;
    if (op == '+')
        r = a;
    else if (op == '-')
        r = sg_expr_neg(ps->pool, a);
    else if (sg_expr_sort(a) != SG_SORT_BOOL) {
        perr(ps, at, SG_EUNSUPPORTED, "'~' on an integer (bitwise not) is not supported");
        return NULL;
    } else
        r = sg_expr_1(ps->pool, SG_NOT, a);
    return built(ps, r, at);
}

/* term := factor (('*' | '/' | '//' | '%') factor)* */
static const sg_expr *p_term(parser *ps)
{
    const sg_expr *a = p_factor(ps);
    while (a && (is_op(ps, "*") || is_op(ps, "/") || is_op(ps, "//") || is_op(ps, "%"))) {
        size_t at = ps->tok.start;
        sg_kind k = is_op(ps, "*") ? SG_MUL : is_op(ps, "/") ? SG_TRUEDIV : is_op(ps, "//") ? SG_FLOORDIV : SG_MOD;
        const sg_expr *b;
        next(ps);
        b = p_factor(ps);
        if (!b)
            return NULL;
        a = built(ps, sg_expr_2(ps->pool, k, a, b), at);
    }
    return a;
}

/* arith := term (('+' | '-') term)* */
static const sg_expr *p_arith(parser *ps)
{
    const sg_expr *a = p_term(ps);
    while (a && (is_op(ps, "+") || is_op(ps, "-"))) {
        size_t at = ps->tok.start;
        bool minus = is_op(ps, "-");
        const sg_expr *b;
        next(ps);
        if (minus && min_magnitude_next(ps, true)) { /* a - 2**127 is a + SG_INT_MIN */
            next(ps);
            a = built(ps, sg_expr_2(ps->pool, SG_ADD, a, sg_expr_int(ps->pool, SG_INT_MIN)), at);
            continue;
        }
        b = p_term(ps);
        if (!b)
            return NULL;
        a = built(ps, minus ? sg_expr_sub(ps->pool, a, b) : sg_expr_2(ps->pool, SG_ADD, a, b), at);
    }
    return a;
}

/*
 * The boolean connectives, each level `operand (tok operand)*`, left-associative:
 *   or := and ('or' and)* ; and := not ('and' not)*            (keywords)
 *   bitor := bitand ('|' bitand)* ; bitand := arith ('&' arith)* (operators: boolean And/Or,
 *   an error on integers)
 */
enum { CONN_OR, CONN_AND, CONN_BITOR, CONN_BITAND };
static const struct {
    const char *tok;
    bool keyword;
    sg_kind kind;
} CONN[] = {{"or", true, SG_OR}, {"and", true, SG_AND}, {"|", false, SG_OR}, {"&", false, SG_AND}};

static const sg_expr *p_not(parser *ps);
static const sg_expr *p_connective(parser *ps, int level);

static const sg_expr *connective_operand(parser *ps, int level)
{
    switch (level) {
    case CONN_OR: return p_connective(ps, CONN_AND);
    case CONN_AND: return p_not(ps);
    case CONN_BITOR: return p_connective(ps, CONN_BITAND);
    default: return p_arith(ps);
    }
}

static const sg_expr *p_connective(parser *ps, int level)
{
    const char *tok = CONN[level].tok;
    const sg_expr *a = connective_operand(ps, level);
    while (a && (CONN[level].keyword ? is_kw(ps, tok) : is_op(ps, tok))) {
        size_t at = ps->tok.start;
        const sg_expr *b;
        next(ps);
        b = connective_operand(ps, level);
        if (!b)
            return NULL;
        if (!CONN[level].keyword && (sg_expr_sort(a) != SG_SORT_BOOL || sg_expr_sort(b) != SG_SORT_BOOL)) {
            perr(ps, at, SG_EUNSUPPORTED, "'%s' on integers (bitwise) is not supported", tok);
            return NULL;
        }
        a = built(ps, sg_expr_2(ps->pool, CONN[level].kind, a, b), at);
    }
    return a;
}

static bool rel_op(const parser *ps, sg_kind *k)
{
    static const struct { const char *op; sg_kind kind; } R[] = {
        {"==", SG_EQ}, {"!=", SG_NE}, {"<", SG_LT}, {"<=", SG_LE}, {">", SG_GT}, {">=", SG_GE}};
    size_t i;
    for (i = 0; i < 6; i++)
        if (is_op(ps, R[i].op)) {
            *k = R[i].kind;
            return true;
        }
    return false;
}

/* comparison := bitor (relop bitor)* ; a chain a < b <= c means (a < b) and (b <= c) */
static const sg_expr *p_comparison(parser *ps)
{
    const sg_expr *a = p_connective(ps, CONN_BITOR), *acc = NULL;
    sg_kind k;
    while (a && rel_op(ps, &k)) {
        size_t at = ps->tok.start;
        const sg_expr *b, *r;
        next(ps);
        b = p_connective(ps, CONN_BITOR);
        if (!b)
            return NULL;
        r = built(ps, sg_expr_2(ps->pool, k, a, b), at);
        if (!r)
            return NULL;
        acc = acc ? built(ps, sg_expr_2(ps->pool, SG_AND, acc, r), at) : r;
        if (!acc)
            return NULL;
        a = b;
    }
    return acc ? acc : a;
}

/* not := 'not' not | comparison */
static const sg_expr *p_not(parser *ps)
{
    size_t at = ps->tok.start;
    const sg_expr *a;
    if (!is_kw(ps, "not"))
        return p_comparison(ps);
    next(ps);
    if (!(a = nested(ps, p_not)))
        return NULL;
    return built(ps, sg_expr_1(ps->pool, SG_NOT, a), at);
}

static const sg_expr *p_or(parser *ps) { return p_connective(ps, CONN_OR); }

/* ternary := or ['if' or 'else' ternary] */
static const sg_expr *p_ternary(parser *ps)
{
    const sg_expr *a = p_or(ps), *c, *b;
    size_t at;
    if (!a || !is_kw(ps, "if"))
        return a;
    at = ps->tok.start;
    next(ps);
    c = p_or(ps);
    if (!c)
        return NULL;
    if (!is_kw(ps, "else")) {
        char d[64];
        describe(ps, d, sizeof d);
        perr(ps, ps->tok.start, SG_EINVALID, "expected 'else' in a conditional expression, found %s", d);
        return NULL;
    }
    next(ps);
    if (!(b = nested(ps, p_ternary)))
        return NULL;
    {
        const sg_expr *args[3] = {c, a, b};
        return built(ps, sg_expr_apply(ps->pool, SG_WHERE, args, 3), at);
    }
}

int sg_expr_parse(const sg_expr **out, sg_pool *pool, const char *text, size_t len, sg_error *err)
{
    parser ps;
    const sg_expr *e;

    *out = NULL;
    if (len > SG_EXPR_MAX_TEXT)
        return sg_error_set(err, SG_ELIMIT, "expression longer than %zu bytes", (size_t)SG_EXPR_MAX_TEXT);
    memset(&ps, 0, sizeof ps);
    ps.pool = pool;
    ps.s = text;
    ps.n = len;
    ps.err = err;
    sg_pool_clear_error(pool);
    next(&ps);
    if (ps.tok.type == T_END && !ps.failed)
        return sg_error_set_at(err, SG_EINVALID, 1, "empty expression");
    e = p_ternary(&ps);
    if (ps.failed)
        e = NULL;
    if (e && ps.tok.type != T_END) {
        char d[64];
        describe(&ps, d, sizeof d);
        perr(&ps, ps.tok.start, SG_EINVALID, "unexpected %s after the end of the expression", d);
        e = NULL;
    }
    if (!e) {
        if (!ps.failed)
            perr(&ps, ps.tok.start, SG_ERROR, "could not parse the expression");
        return ps.failed;
    }
    *out = e;
    return 0;
}
