/*
 * print.c - the one expression printer, in three forms: the canonical sympy
 * str() form (which re-parses to the same DAG node), a Python form, and
 * torch's own Python guard printer (ShapeGuardPythonPrinter: sympy's
 * precedence rules and argument order), which torch's message text quotes
 * byte for byte (torch/message.c). The leaves, symbol naming and calls are
 * shared; each form has its own precedence rules.
 *
 * The sympy and Python forms parenthesise by Python's precedence (the
 * parser's grammar), so every printed text parses back to what was printed.
 * Output is bounded by SG_EXPR_MAX_PRINT; recursion by the node depth
 * (<= SG_EXPR_MAX_DEPTH).
 */
#include <string.h>

#include "expr/expr_impl.h"
#include "util/util.h"

/* Python precedence levels, low to high. */
enum {
    P_TERNARY = 1, P_OR, P_AND, P_NOT, P_CMP, P_BOR, P_BAND, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM
};

typedef struct printer {
    sg_buf b;
    sg_syntax syntax;
    sg_symbol_namer namer;
    void *payload;
} printer;

static void emit(printer *pr, const sg_expr *e, int ctx);
static void emit_call(printer *pr, const char *name, const sg_expr *e);
static void tp_emit(printer *p, const sg_expr *e);

static void put(printer *pr, const char *s) { sg_buf_puts(&pr->b, s); }

static void put_int(printer *pr, sg_int v)
{
    char buf[SG_INT_STRLEN];
    put(pr, sg_int_format(buf, v));
}

/* |v| of a negative v, printed without negating (v may be SG_INT_MIN). */
static void put_abs_neg(printer *pr, sg_int v)
{
    char buf[SG_INT_STRLEN];
    put(pr, sg_int_format(buf, v) + 1);
}

/* |v|, printed without negating (v may be SG_INT_MIN). */
static void put_abs(printer *pr, sg_int v)
{
    if (v < 0)
        put_abs_neg(pr, v);
    else
        put_int(pr, v);
}

/* A symbol, renamed by the namer when it has a name for it. */
static void put_symbol(printer *pr, const sg_expr *e)
{
    const char *name = pr->namer ? pr->namer(e, pr->payload) : NULL;
    put(pr, name ? name : e->u.sym.name);
}

static bool is_neg_lit(const sg_expr *e)
{
    return (e->kind == SG_INT && e->u.ival < 0) || (e->kind == SG_RAT && e->u.rat.num < 0);
}

/*
 * A Mul whose leading coefficient is negative prints with a leading '-'; as a
 * later term of a sum it prints " - |t|". Not when the magnitude is 2**127
 * (SG_INT_MIN) inside a product or fraction: " - 2**127*x" would not re-parse,
 * so such a term prints " + -2**127*x", which does (parse.c, min_magnitude_next).
 */
static bool is_neg_term(const sg_expr *e)
{
    if (e->kind == SG_MUL && e->args[0]->kind == SG_INT && e->args[0]->u.ival == SG_INT_MIN)
        return false;
    if ((e->kind == SG_RAT && e->u.rat.num == SG_INT_MIN)
        || (e->kind == SG_MUL && e->args[0]->kind == SG_RAT && e->args[0]->u.rat.num == SG_INT_MIN))
        return false;
    return is_neg_lit(e) || (e->kind == SG_MUL && is_neg_lit(e->args[0]));
}

static bool lit_is_minus_one(const sg_expr *e) { return e->kind == SG_INT && e->u.ival == -1; }

static bool python(const printer *pr) { return pr->syntax == SG_SYNTAX_PYTHON; }

/* The precedence at which `e` prints (its outermost operator). */
static int prec_of(const printer *pr, const sg_expr *e)
{
    switch (e->kind) {
    case SG_INT: return e->u.ival < 0 ? P_UNARY : P_ATOM;
    case SG_RAT: return python(pr) ? P_ATOM : P_MUL; /* sympy: 1/2, -1/2 */
    case SG_INF: return e->u.inf.sign < 0 ? P_UNARY : P_ATOM;
    case SG_ADD: return P_ADD;
    case SG_MUL: /* -x is unary; -2*x and 2*x are products */
        return e->nargs == 2 && lit_is_minus_one(e->args[0]) ? P_UNARY : P_MUL;
    case SG_POW: return P_POW;
    case SG_AND: return python(pr) ? P_AND : P_BAND;
    case SG_OR: return python(pr) ? P_OR : P_BOR;
    case SG_NOT: return python(pr) ? P_NOT : P_UNARY;
    case SG_LT: case SG_LE: case SG_GT: case SG_GE: return P_CMP;
    case SG_EQ: case SG_NE: return python(pr) ? P_CMP : P_ATOM;
    case SG_IDENTITY: return python(pr) ? prec_of(pr, e->args[0]) : P_ATOM;
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_MOD: case SG_PYMOD: return python(pr) ? P_MUL : P_ATOM;
    case SG_POWNAT: return python(pr) ? P_POW : P_ATOM;
    case SG_CEILDIV: return python(pr) ? P_UNARY : P_ATOM;
    default: return P_ATOM; /* calls and fully parenthesised forms */
    }
}

/* Print `e` in a context of precedence `ctx`, parenthesised if it binds looser. */
static void emit_in(printer *pr, const sg_expr *e, int ctx)
{
    if (prec_of(pr, e) < ctx) {
        put(pr, "(");
        emit(pr, e, 0);
        put(pr, ")");
    } else {
        emit(pr, e, ctx);
    }
}

static void emit_call(printer *pr, const char *name, const sg_expr *e)
{
    size_t i;
    put(pr, name);
    put(pr, "(");
    for (i = 0; i < e->nargs; i++) {
        if (i)
            put(pr, ", ");
        emit(pr, e->args[i], 0);
    }
    put(pr, ")");
}

/* num/den, in parentheses in the Python form; the numerator negated when `negate`. */
static void put_ratio(printer *pr, sg_int num, sg_int den, bool negate)
{
    if (python(pr))
        put(pr, "(");
    if (negate)
        put_abs_neg(pr, num);
    else
        put_int(pr, num);
    put(pr, "/");
    put_int(pr, den);
    if (python(pr))
        put(pr, ")");
}

static void emit_rat(printer *pr, const sg_expr *e) { put_ratio(pr, e->u.rat.num, e->u.rat.den, false); }

/* Mul: [-]coef*f1*f2 ... ; `neg` drops the sign of a negative coefficient. */
static void emit_mul(printer *pr, const sg_expr *e, bool drop_sign)
{
    size_t i = 0;
    bool first = true, has_sum = false;
    for (i = 1; i < e->nargs; i++)
        has_sum |= e->args[i]->kind == SG_ADD;
    if (has_sum && (e->args[0]->kind == SG_INT || e->args[0]->kind == SG_RAT)) {
        /* c*(a + b)*f would re-parse with c distributed over the sum (as sympy
         * does for c*(a + b)); printing the coefficient last keeps the product:
         * (a + b)*f*(-2) */
        for (i = 1; i < e->nargs; i++) {
            if (i > 1)
                put(pr, "*");
            emit_in(pr, e->args[i], P_MUL + 1);
        }
        put(pr, "*");
        if (drop_sign && is_neg_lit(e->args[0])) { /* the caller printed " - " */
            if (e->args[0]->kind == SG_INT)
                put_abs(pr, e->args[0]->u.ival);
            else {
                put(pr, "(");
                put_abs(pr, e->args[0]->u.rat.num);
                put(pr, "/");
                put_int(pr, e->args[0]->u.rat.den);
                put(pr, ")");
            }
        } else {
            put(pr, "(");
            emit(pr, e->args[0], 0);
            put(pr, ")");
        }
        return;
    }
    i = 0;
    if (is_neg_lit(e->args[0]) && !drop_sign)
        put(pr, "-");
    if (e->args[0]->kind == SG_INT) {
        sg_int c = e->args[0]->u.ival;
        i = 1;
        if (c != 1 && c != -1) {
            put_abs(pr, c);
            first = false;
        }
    } else if (e->args[0]->kind == SG_RAT) {
        i = 1;
        if (python(pr))
            put(pr, "(");
        put_abs(pr, e->args[0]->u.rat.num);
        put(pr, "/");
        put_int(pr, e->args[0]->u.rat.den);
        if (python(pr))
            put(pr, ")");
        first = false;
    }
    for (; i < e->nargs; i++) {
        if (!first)
            put(pr, "*");
        first = false;
        emit_in(pr, e->args[i], P_MUL + 1);
    }
}

/* A term of a sum after the first: " + t" or " - |t|". */
static void emit_term(printer *pr, const sg_expr *t)
{
    if (!is_neg_term(t)) {
        put(pr, " + ");
        emit_in(pr, t, P_ADD + 1);
    } else if (t->kind == SG_INT) {
        put(pr, " - ");
        put_abs_neg(pr, t->u.ival);
    } else if (t->kind == SG_RAT) {
        put(pr, " - ");
        put_ratio(pr, t->u.rat.num, t->u.rat.den, true);
    } else {
        put(pr, " - ");
        emit_mul(pr, t, true);
    }
}

static void emit_add(printer *pr, const sg_expr *e)
{
    size_t i, n = e->nargs;
    /* torch's Python printer puts the constant first ("4 + x"); sympy's str() last */
    if (python(pr) && (e->args[n - 1]->kind == SG_INT || e->args[n - 1]->kind == SG_RAT)) {
        emit_in(pr, e->args[n - 1], P_ADD);
        for (i = 0; i + 1 < n; i++)
            emit_term(pr, e->args[i]);
        return;
    }
    emit_in(pr, e->args[0], P_ADD);
    for (i = 1; i < n; i++)
        emit_term(pr, e->args[i]);
}

static void emit_infix(printer *pr, const sg_expr *e, const char *op, int prec)
{
    size_t i;
    for (i = 0; i < e->nargs; i++) {
        if (i)
            put(pr, op);
        emit_in(pr, e->args[i], prec + 1);
    }
}

/* sympy's & and |: every non-atomic operand in parentheses, as sympy prints them. */
static void emit_bool_sympy(printer *pr, const sg_expr *e, const char *op)
{
    size_t i;
    for (i = 0; i < e->nargs; i++) {
        if (i)
            put(pr, op);
        emit_in(pr, e->args[i], P_ATOM);
    }
}

static const char *rel_text(sg_kind k)
{
    switch (k) {
    case SG_EQ: return " == ";
    case SG_NE: return " != ";
    case SG_LT: return " < ";
    case SG_LE: return " <= ";
    case SG_GT: return " > ";
    default: return " >= ";
    }
}

/* Operands of == and != in torch's Python printer: compound ones in parentheses;
 * of the order relations: // and % (precedence of a relation there) in parentheses. */
static void emit_rel_operand(printer *pr, const sg_expr *x, sg_kind rel)
{
    bool call = x->kind == SG_MAX || x->kind == SG_MIN || x->kind == SG_TRUNC || x->kind == SG_FLOOR ||
                x->kind == SG_CEIL;
    bool divmod = x->kind == SG_FLOORDIV || x->kind == SG_CLEANDIV || x->kind == SG_MOD || x->kind == SG_PYMOD;
    if (python(pr) && ((((rel == SG_EQ || rel == SG_NE) && x->nargs > 0 && !call)) || divmod)) {
        put(pr, "(");
        emit(pr, x, 0);
        put(pr, ")");
        return;
    }
    emit_in(pr, x, P_CMP + 1);
}

/* `open` a `op` b `close`, the operands printed at precedences `pa` and `pb`. */
static void emit_bin(printer *pr, const char *open, const sg_expr *a, int pa, const char *op, const sg_expr *b, int pb,
                     const char *close)
{
    put(pr, open);
    emit_in(pr, a, pa);
    put(pr, op);
    emit_in(pr, b, pb);
    put(pr, close);
}

static void emit_python(printer *pr, const sg_expr *e)
{
    const sg_expr *const *a = e->args;
    switch (e->kind) {
    case SG_FLOORDIV: case SG_CLEANDIV: emit_bin(pr, "", a[0], P_MUL, " // ", a[1], P_MUL + 1, ""); break;
    case SG_MOD: case SG_PYMOD: emit_bin(pr, "", a[0], P_MUL, " % ", a[1], P_MUL + 1, ""); break;
    case SG_CEILDIV: emit_bin(pr, "-(-", a[0], P_UNARY, " // ", a[1], P_MUL + 1, ")"); break; /* -(-a // b) */
    case SG_MODIDX: /* ((a // b) % c) */
        emit_bin(pr, "((", a[0], P_MUL, " // ", a[1], P_MUL + 1, ") % ");
        emit_in(pr, a[2], P_MUL + 1);
        put(pr, ")");
        break;
    case SG_TRUEDIV: emit_bin(pr, "(", a[0], P_MUL, " / ", a[1], P_MUL + 1, ")"); break;
    case SG_POWNAT: emit_bin(pr, "", a[0], P_POW + 1, " ** ", a[1], P_UNARY, ""); break;
    case SG_TRUNC: emit_call(pr, "math.trunc", e); break;
    case SG_FLOOR: emit_call(pr, "math.floor", e); break;
    case SG_CEIL: emit_call(pr, "math.ceil", e); break;
    case SG_MAX: emit_call(pr, "max", e); break;
    case SG_MIN: emit_call(pr, "min", e); break;
    case SG_WHERE: /* (b if c else e) */
        emit_bin(pr, "(", a[1], P_OR, " if ", a[0], P_OR, " else ");
        emit_in(pr, a[2], P_TERNARY);
        put(pr, ")");
        break;
    case SG_IDENTITY: emit(pr, e->args[0], 0); break;
    case SG_AND: emit_infix(pr, e, " and ", P_AND); break;
    case SG_OR: emit_infix(pr, e, " or ", P_OR); break;
    case SG_NOT:
        put(pr, "not ");
        emit_in(pr, e->args[0], P_NOT);
        break;
    default: break;
    }
}

static void emit_piecewise(printer *pr, const sg_expr *e)
{
    size_t i, n = e->nargs;
    if (python(pr) && e->args[n - 1]->kind == SG_TRUE) { /* (e1 if c1 else (e2 if c2 else e3)) */
        for (i = 0; i + 2 < n; i += 2) {
            put(pr, "(");
            emit_in(pr, e->args[i], P_OR);
            put(pr, " if ");
            emit_in(pr, e->args[i + 1], P_OR);
            put(pr, " else ");
        }
        emit_in(pr, e->args[n - 2], P_TERNARY);
        for (i = 0; i + 2 < n; i += 2)
            put(pr, ")");
        return;
    }
    /* no final True branch: no Python equivalent (it is undefined where no
     * condition holds), so the sympy call form is printed */
    put(pr, "Piecewise(");
    for (i = 0; i < e->nargs; i += 2) {
        if (i)
            put(pr, ", ");
        put(pr, "(");
        emit(pr, e->args[i], 0);
        put(pr, ", ");
        emit(pr, e->args[i + 1], 0);
        put(pr, ")");
    }
    put(pr, ")");
}

static void emit(printer *pr, const sg_expr *e, int ctx)
{
    (void)ctx;
    if (pr->b.failed)
        return;
    if (pr->syntax == SG_SYNTAX_TORCH || pr->syntax == SG_SYNTAX_TORCH_LEGACY) {
        tp_emit(pr, e);
        return;
    }
    switch (e->kind) {
    case SG_INT: put_int(pr, e->u.ival); return;
    case SG_RAT: emit_rat(pr, e); return;
    case SG_TRUE: put(pr, "True"); return;
    case SG_FALSE: put(pr, "False"); return;
    case SG_INF:
        put(pr, e->u.inf.sign < 0 ? "-" : "");
        put(pr, e->u.inf.integer ? "int_oo" : (python(pr) ? "math.inf" : "oo"));
        return;
    case SG_SYM: put_symbol(pr, e); return;
    case SG_ADD: emit_add(pr, e); return;
    case SG_MUL: emit_mul(pr, e, false); return;
    case SG_POW:
        emit_in(pr, e->args[0], P_POW + 1);
        put(pr, "**");
        put_int(pr, e->args[1]->u.ival);
        return;
    case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        emit_rel_operand(pr, e->args[0], (sg_kind)e->kind);
        put(pr, rel_text((sg_kind)e->kind));
        emit_rel_operand(pr, e->args[1], (sg_kind)e->kind);
        return;
    case SG_EQ: case SG_NE:
        if (python(pr)) {
            emit_rel_operand(pr, e->args[0], (sg_kind)e->kind);
            put(pr, rel_text((sg_kind)e->kind));
            emit_rel_operand(pr, e->args[1], (sg_kind)e->kind);
        } else {
            emit_call(pr, e->kind == SG_EQ ? "Eq" : "Ne", e);
        }
        return;
    case SG_PIECEWISE: emit_piecewise(pr, e); return;
    default: break;
    }
    if (python(pr)) {
        if (e->kind != SG_AND && e->kind != SG_OR && e->kind != SG_NOT && e->kind != SG_FLOORDIV &&
            e->kind != SG_CLEANDIV && e->kind != SG_MOD && e->kind != SG_PYMOD && e->kind != SG_CEILDIV &&
            e->kind != SG_MODIDX && e->kind != SG_TRUEDIV && e->kind != SG_POWNAT && e->kind != SG_TRUNC &&
            e->kind != SG_FLOOR && e->kind != SG_CEIL && e->kind != SG_MAX && e->kind != SG_MIN &&
            e->kind != SG_WHERE && e->kind != SG_IDENTITY)
            emit_call(pr, sg_kind_name((sg_kind)e->kind), e);
        else
            emit_python(pr, e);
        return;
    }
    switch (e->kind) {
    case SG_FLOORDIV: /* sympy prints FloorDiv as (a//b) */
        put(pr, "(");
        emit_in(pr, e->args[0], P_ATOM);
        put(pr, "//");
        emit_in(pr, e->args[1], P_ATOM);
        put(pr, ")");
        return;
    case SG_AND: emit_bool_sympy(pr, e, " & "); return;
    case SG_OR: emit_bool_sympy(pr, e, " | "); return;
    case SG_NOT:
        put(pr, "~");
        emit_in(pr, e->args[0], P_ATOM);
        return;
    default: emit_call(pr, sg_kind_name((sg_kind)e->kind), e); return;
    }
}

/* ---- torch's Python guard printer (SG_SYNTAX_TORCH) ------------------------------------------------ */

/* sympy's precedence values (sympy/printing/precedence.py), and torch's
 * FloorDiv/Mod/PythonMod/IntTrueDiv (precedence 35, below Add). */
enum { PR_OR = 20, PR_AND = 30, PR_REL = 35, PR_ADD = 40, PR_MUL = 50, PR_POW = 60, PR_FUNC = 70,
       PR_NOT = 100, PR_ATOM = 1000 };

/* ---- sympy's argument order (Basic.compare), which torch's printer follows ---------------------- */

/* sympy's class name of a node (Integer literals have singleton classes). */
static const char *sy_class(const sg_expr *e)
{
    if (e->kind == SG_INT)
        return e->u.ival == 0 ? "Zero" : e->u.ival == 1 ? "One" : e->u.ival == -1 ? "NegativeOne" : "Integer";
    if (e->kind == SG_RAT)
        return e->u.rat.num == 1 && e->u.rat.den == 2 ? "Half" : "Rational";
    if (e->kind == SG_INF)
        return e->u.inf.sign < 0 ? "NegativeIntInfinity" : "IntInfinity";
    return sg_kind_name((sg_kind)e->kind);
}

/* sympy's ordering_of_classes (sympy/core/basic.py), as far as guards use it. */
static int sy_class_rank(const char *n)
{
    static const char *const order[] = {"Zero", "One", "Half", "Infinity", "NaN", "NegativeOne", "NegativeInfinity",
                                        "Integer", "Rational", "Float", "Exp1", "Pi", "ImaginaryUnit", "Symbol",
                                        "Wild", "Pow", "Mul", "Add"};
    size_t i;
    for (i = 0; i < sizeof order / sizeof *order; i++)
        if (strcmp(order[i], n) == 0)
            return (int)i;
    return -1;
}

static size_t sy_args(const sg_expr *e, const sg_expr **out);

/* sympy's Basic.compare: class (ordering_of_classes, else by name), then the hashable
 * content (a literal's value, a symbol's name, else the number of arguments and the
 * arguments in sympy's order). */
static int sy_compare(const sg_expr *a, const sg_expr *b, int depth)
{
    const char *na, *nb;
    int ra, rb, c = 0;
    size_t i, n;
    const sg_expr *sa[64], *sb[64], **xa = sa, **xb = sb;
    if (a == b || depth > SG_EXPR_MAX_DEPTH)
        return 0;
    na = sy_class(a);
    nb = sy_class(b);
    if (strcmp(na, nb) != 0) {
        ra = sy_class_rank(na);
        rb = sy_class_rank(nb);
        if (ra < 0 && rb < 0)
            return strcmp(na, nb) < 0 ? -1 : 1;
        if (ra < 0 || rb < 0)
            return ra < 0 ? 1 : -1;
        return ra < rb ? -1 : 1;
    }
    switch (a->kind) {
    case SG_INT: return a->u.ival < b->u.ival ? -1 : a->u.ival > b->u.ival;
    case SG_RAT:
        if (a->u.rat.num != b->u.rat.num)
            return a->u.rat.num < b->u.rat.num ? -1 : 1;
        return a->u.rat.den < b->u.rat.den ? -1 : a->u.rat.den > b->u.rat.den;
    case SG_SYM: return strcmp(a->u.sym.name, b->u.sym.name);
    case SG_INF: case SG_TRUE: case SG_FALSE: return 0;
    default: break;
    }
    if (a->nargs != b->nargs)
        return a->nargs < b->nargs ? -1 : 1;
    n = a->nargs;
    if (n > 64) {
        xa = sg__calloc(n, sizeof *xa);
        xb = sg__calloc(n, sizeof *xb);
        if (!xa || !xb) {
            c = 0;
            goto cleanup;
        }
    }
    sy_args(a, xa);
    sy_args(b, xb);
    for (i = 0; i < n && !c; i++)
        c = sy_compare(xa[i], xb[i], depth + 1);
cleanup:
    if (xa != sa)
        sg_free(xa);
    if (xb != sb)
        sg_free(xb);
    return c;
}

/* The arguments of `e` in sympy's order: Add and Mul keep their numeric term or coefficient
 * first and sort the rest with Basic.compare; other nodes keep the pool's order. Returns the
 * count; `out` has room for e->nargs entries. */
static size_t sy_args(const sg_expr *e, const sg_expr **out)
{
    size_t n = e->nargs, i, j, lo = 0;
    if (e->kind == SG_ADD && n && (e->args[n - 1]->kind == SG_INT || e->args[n - 1]->kind == SG_RAT)) {
        out[0] = e->args[n - 1];
        for (i = 0; i + 1 < n; i++)
            out[i + 1] = e->args[i];
        lo = 1;
    } else {
        for (i = 0; i < n; i++)
            out[i] = e->args[i];
        if (e->kind == SG_MUL && n && (e->args[0]->kind == SG_INT || e->args[0]->kind == SG_RAT))
            lo = 1;
    }
    if (e->kind != SG_ADD && e->kind != SG_MUL)
        return n;
    for (i = lo + 1; i < n; i++) { /* insertion sort: guards have few terms */
        const sg_expr *x = out[i];
        for (j = i; j > lo && sy_compare(out[j - 1], x, 0) > 0; j--)
            out[j] = out[j - 1];
        out[j] = x;
    }
    return n;
}

static bool neg_coef(const sg_expr *e)
{
    return (e->kind == SG_INT && e->u.ival < 0) || (e->kind == SG_RAT && e->u.rat.num < 0);
}

/* torch's sympy functions whose `precedence` is below Mul's (35: "lower precedence than add";
 * Identity 10). */
static bool tp_low_function(const sg_expr *e)
{
    switch (e->kind) {
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_MOD: case SG_PYMOD: case SG_TRUEDIV: case SG_MODIDX:
    case SG_WHERE: case SG_IDENTITY:
        return true;
    default:
        return false;
    }
}

/* sympy 1.14's precedence_Mul: a product with such a function among its factors is a Mul even
 * when it could extract a minus sign (older sympy: an Add then). */
static bool tp_mul_binds_as_add(const printer *p, const sg_expr *e)
{
    size_t i;
    if (!neg_coef(e->args[0]))
        return false;
    if (p->syntax == SG_SYNTAX_TORCH)
        for (i = 0; i < e->nargs; i++)
            if (tp_low_function(e->args[i]))
                return false;
    return true;
}

/* sympy's precedence(e), with torch's classes. Twice the value, so that
 * "Atom - 0.5" (torch's FloorDiv and Mod operands) is an integer. */
static int tp_prec2(const printer *p, const sg_expr *e)
{
    switch (e->kind) {
    case SG_INT: return 2 * (e->u.ival < 0 ? PR_ADD : PR_ATOM);
    case SG_RAT: return 2 * (e->u.rat.num < 0 ? PR_ADD : PR_MUL);
    case SG_INF: return 2 * (e->u.inf.sign < 0 ? PR_ADD : PR_ATOM);
    case SG_ADD: return 2 * PR_ADD;
    case SG_MUL: return 2 * (tp_mul_binds_as_add(p, e) ? PR_ADD : PR_MUL); /* could_extract_minus_sign */
    case SG_POW: return 2 * PR_POW;
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_MOD: case SG_PYMOD: case SG_TRUEDIV: case SG_CEILDIV:
    case SG_MODIDX:
        return 2 * PR_REL;
    case SG_POWNAT: return 2 * PR_MUL;
    case SG_EQ: case SG_NE: return 2 * PR_MUL; /* sympy: "Equality" and "Unequality" bind like Mul */
    case SG_LT: case SG_LE: case SG_GT: case SG_GE: return 2 * PR_REL;
    case SG_AND: return 2 * PR_AND;
    case SG_OR: return 2 * PR_OR;
    case SG_NOT: return 2 * PR_NOT;
    case SG_SYM: case SG_TRUE: case SG_FALSE: return 2 * PR_ATOM;
    default: return 2 * PR_FUNC;
    }
}

/* sympy's Printer.parenthesize(item, level) (not strict): parentheses when
 * precedence(item) <= level. `level2` is twice the level. */
static void tp_paren(printer *p, const sg_expr *e, int level2)
{
    if (tp_prec2(p, e) <= level2) {
        put(p, "(");
        tp_emit(p, e);
        put(p, ")");
    } else {
        tp_emit(p, e);
    }
}

/* sympy's stringify: the arguments joined by `sep`, each parenthesised at `level2`. */
static void tp_join(printer *p, const sg_expr *const *args, size_t n, const char *sep, int level2)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (i)
            put(p, sep);
        tp_paren(p, args[i], level2);
    }
}

static void tp_emit(printer *p, const sg_expr *e)
{
    size_t i;
    if (p->b.failed)
        return;
    switch (e->kind) {
    case SG_INT: put_int(p, e->u.ival); return;
    case SG_RAT:
        put_int(p, e->u.rat.num);
        put(p, "/");
        put_int(p, e->u.rat.den);
        return;
    case SG_TRUE: put(p, "True"); return;
    case SG_FALSE: put(p, "False"); return;
    case SG_INF:
        put(p, e->u.inf.sign < 0 ? "-" : "");
        put(p, e->u.inf.integer ? "int_oo" : "math.inf");
        return;
    case SG_SYM: put_symbol(p, e); return;
    case SG_ADD: case SG_MUL: { /* sympy's argument order */
        const sg_expr *small[16], **args = small;
        if (e->nargs > 16 && !(args = sg__calloc(e->nargs, sizeof *args))) {
            p->b.failed = SG_ENOMEM;
            return;
        }
        sy_args(e, args);
        tp_join(p, args, e->nargs, e->kind == SG_ADD ? " + " : "*", e->kind == SG_ADD ? 2 * PR_ADD : tp_prec2(p, e));
        if (args != small)
            sg_free(args);
        return;
    }
    case SG_POW: { /* torch prints x**3 as x*x*x */
        sg_int k = e->args[1]->u.ival;
        for (i = 0; (sg_int)i < k; i++) {
            if (i)
                put(p, "*");
            tp_paren(p, e->args[0], 2 * PR_MUL);
        }
        return;
    }
    case SG_FLOORDIV: case SG_CLEANDIV:
        tp_paren(p, e->args[0], 2 * PR_ATOM - 1);
        put(p, " // ");
        tp_paren(p, e->args[1], 2 * PR_ATOM - 1);
        return;
    case SG_MOD: case SG_PYMOD: tp_join(p, e->args, 2, " % ", 2 * PR_ATOM - 1); return;
    case SG_TRUEDIV: tp_join(p, e->args, 2, " / ", 2 * PR_ATOM - 1); return;
    case SG_POWNAT: tp_join(p, e->args, 2, " ** ", 2 * PR_POW); return;
    case SG_MODIDX: {
        bool div1 = e->args[1]->kind == SG_INT && e->args[1]->u.ival == 1;
        put(p, div1 ? "(" : "((");
        tp_paren(p, e->args[0], 2 * PR_ATOM - 1);
        if (!div1) {
            put(p, " // ");
            tp_paren(p, e->args[1], 2 * PR_ATOM - 1);
            put(p, ")");
        }
        put(p, " % ");
        tp_paren(p, e->args[2], 2 * PR_ATOM - 1);
        put(p, ")");
        return;
    }
    case SG_TRUNC: emit_call(p, "math.trunc", e); return;
    case SG_FLOOR: emit_call(p, "math.floor", e); return;
    case SG_CEIL: emit_call(p, "math.ceil", e); return;
    case SG_MAX: case SG_MIN:
        if (p->syntax == SG_SYNTAX_TORCH_LEGACY) {
            emit_call(p, e->kind == SG_MAX ? "max" : "min", e);
        } else { /* torch.sym_max(a, torch.sym_max(b, c)): guards may be eval'd on unbacked values */
            for (i = 0; i + 1 < e->nargs; i++) {
                put(p, e->kind == SG_MAX ? "torch.sym_max(" : "torch.sym_min(");
                tp_emit(p, e->args[i]);
                put(p, ", ");
            }
            tp_emit(p, e->args[e->nargs - 1]);
            for (i = 0; i + 1 < e->nargs; i++)
                put(p, ")");
        }
        return;
    case SG_IDENTITY: tp_emit(p, e->args[0]); return;
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        tp_join(p, e->args, 2, rel_text((sg_kind)e->kind), tp_prec2(p, e));
        return;
    case SG_AND: tp_join(p, e->args, e->nargs, " and ", 2 * PR_AND); return;
    case SG_OR: tp_join(p, e->args, e->nargs, " or ", 2 * PR_OR); return;
    case SG_NOT:
        put(p, "not (");
        tp_emit(p, e->args[0]);
        put(p, ")");
        return;
    case SG_PIECEWISE: { /* e1 if c1 else (e2 if c2 else ... eN) */
        size_t n = e->nargs, open = 0;
        for (i = 0; i + 2 < n; i += 2) {
            put(p, i ? "(" : "");
            tp_emit(p, e->args[i]);
            put(p, " if ");
            tp_emit(p, e->args[i + 1]);
            put(p, " else ");
            open += i ? 1 : 0;
        }
        tp_emit(p, e->args[n - 2]);
        for (; open; open--)
            put(p, ")");
        return;
    }
    default: emit_call(p, sg_kind_name((sg_kind)e->kind), e); return; /* sympy's function form */
    }
}

int sg_expr_print(char **out, const sg_expr *e, sg_syntax syntax, sg_symbol_namer namer, void *payload,
                  sg_error *err)
{
    printer pr;
    *out = NULL;
    memset(&pr, 0, sizeof pr);
    sg_buf_init(&pr.b, SG_EXPR_MAX_PRINT);
    pr.syntax = syntax;
    pr.namer = namer;
    pr.payload = payload;
    emit(&pr, e, 0);
    return sg_buf_finish(&pr.b, out, "printed expression", err);
}
