/*
 * eval.c - exact evaluation of expressions under an assignment, with Python's
 * integer semantics (floor division, modulo with the sign of the divisor) and
 * exact rationals for true division.
 *
 * Evaluation is strict and memoised per node (so a DAG with sharing costs its
 * number of distinct nodes). Precedence of failures: a missing symbol value
 * (SG_EINVALID) over "undefined" (SG_EUNDEFINED, Python would raise) over
 * overflow (SG_EOVERFLOW, a value left the 128-bit range): an overflowed
 * intermediate does not hide a division by zero elsewhere.
 */
#include <string.h>

#include "expr/expr_impl.h"
#include "expr/num.h"

typedef struct slot {
    sg_value v;
    int rc;
} slot;

typedef struct evaluator {
    sg_pool *pool;
    const sg_int *values;
    size_t nvalues;
    slot *memo;
    uint32_t *stamp;
    uint32_t gen;
    const sg_expr *missing; /* first symbol without a value */
    const sg_expr *undef;   /* first node whose own operation is undefined */
} evaluator;

static sg_value v_int(sg_int n)
{
    sg_value v = {SG_VAL_INT, n, 1};
    return v;
}

static sg_value v_bool(bool b)
{
    sg_value v = {SG_VAL_BOOL, b, 1};
    return v;
}

static sg_rat as_rat(const sg_value *v)
{
    sg_rat r = {v->num, v->kind == SG_VAL_REAL ? v->den : 1};
    return r;
}

/* A number of the node's sort. */
static sg_value v_num(const sg_expr *e, sg_rat r)
{
    sg_value v;
    v.kind = e->sort == SG_SORT_REAL ? SG_VAL_REAL : SG_VAL_INT;
    v.num = r.num;
    v.den = r.den;
    return v;
}

static int eval_node(evaluator *ev, const sg_expr *e, sg_value *out);

/* The node's own operation, all arguments evaluated successfully into a[]. */
static int apply(const sg_expr *e, const sg_value *a, sg_value *out)
{
    sg_rat r, t;
    sg_int x;
    size_t i;

    switch ((sg_kind)e->kind) {
    case SG_ADD: case SG_MUL:
        r = as_rat(&a[0]);
        for (i = 1; i < e->nargs; i++)
            if (!(e->kind == SG_ADD ? sg_rat_add(&r, r, as_rat(&a[i])) : sg_rat_mul(&r, r, as_rat(&a[i]))))
                return SG_EOVERFLOW;
        *out = v_num(e, r);
        return 0;
    case SG_POW:
        t = as_rat(&a[0]);
        if (!sg_int_pow(&r.num, t.num, a[1].num) || !sg_int_pow(&r.den, t.den, a[1].num))
            return SG_EOVERFLOW;
        *out = v_num(e, r);
        return 0;
    case SG_POWNAT:
        if (a[1].num < 0)
            return SG_EUNDEFINED;
        if (!sg_int_pow(&x, a[0].num, a[1].num))
            return SG_EOVERFLOW;
        *out = v_int(x);
        return 0;
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_CEILDIV: case SG_MOD: case SG_PYMOD:
        if (a[1].num == 0)
            return SG_EUNDEFINED;
        if (e->kind == SG_MOD || e->kind == SG_PYMOD)
            sg__pymod(a[0].num, a[1].num, &x);
        else if (e->kind == SG_CEILDIV) {
            if (a[0].num == SG_INT_MIN || !sg__floordiv(-a[0].num, a[1].num, &x) || !sg__mul(x, -1, &x))
                return SG_EOVERFLOW;
        } else if (!sg__floordiv(a[0].num, a[1].num, &x))
            return SG_EOVERFLOW;
        *out = v_int(x);
        return 0;
    case SG_MODIDX:
        if (a[1].num == 0 || a[2].num == 0)
            return SG_EUNDEFINED;
        if (!sg__floordiv(a[0].num, a[1].num, &x))
            return SG_EOVERFLOW;
        sg__pymod(x, a[2].num, &x);
        *out = v_int(x);
        return 0;
    case SG_TRUEDIV:
        if (a[1].num == 0)
            return SG_EUNDEFINED;
        if (!sg_rat_div(&r, as_rat(&a[0]), as_rat(&a[1])))
            return SG_EOVERFLOW;
        *out = v_num(e, r);
        return 0;
    case SG_TRUNC: case SG_FLOOR: case SG_CEIL:
        r = as_rat(&a[0]);
        *out = v_int(e->kind == SG_FLOOR ? sg_rat_floor(r) : e->kind == SG_CEIL ? sg_rat_ceil(r) : sg_rat_trunc(r));
        return 0;
    case SG_MAX: case SG_MIN:
        r = as_rat(&a[0]);
        for (i = 1; i < e->nargs; i++) {
            int c = sg_rat_cmp(as_rat(&a[i]), r);
            if (e->kind == SG_MAX ? c > 0 : c < 0)
                r = as_rat(&a[i]);
        }
        *out = v_num(e, r);
        return 0;
    case SG_WHERE:
        *out = a[0].num ? a[1] : a[2];
        if (e->sort != SG_SORT_BOOL)
            *out = v_num(e, as_rat(out));
        return 0;
    case SG_PIECEWISE:
        for (i = 0; i < e->nargs; i += 2)
            if (a[i + 1].num) {
                *out = e->sort == SG_SORT_BOOL ? a[i] : v_num(e, as_rat(&a[i]));
                return 0;
            }
        return SG_EUNDEFINED;
    case SG_IDENTITY:
        *out = a[0];
        return 0;
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE: {
        int c = a[0].kind == SG_VAL_BOOL ? (int)(a[0].num - a[1].num) : sg_rat_cmp(as_rat(&a[0]), as_rat(&a[1]));
        bool b = e->kind == SG_EQ ? c == 0 : e->kind == SG_NE ? c != 0 : e->kind == SG_LT ? c < 0
               : e->kind == SG_LE ? c <= 0 : e->kind == SG_GT ? c > 0 : c >= 0;
        *out = v_bool(b);
        return 0;
    }
    case SG_AND: case SG_OR: {
        bool b = e->kind == SG_AND;
        for (i = 0; i < e->nargs; i++)
            b = e->kind == SG_AND ? (b && a[i].num) : (b || a[i].num);
        *out = v_bool(b);
        return 0;
    }
    case SG_NOT:
        *out = v_bool(!a[0].num);
        return 0;
    default:
        return SG_ERROR;
    }
}

/* When an argument overflowed, is the node still certainly undefined? (A divisor
 * that overflowed is nonzero; one known to be zero makes the node undefined.) */
static bool undefined_anyway(const sg_expr *e, const sg_value *a, const int *rc)
{
    switch ((sg_kind)e->kind) {
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_CEILDIV: case SG_MOD: case SG_PYMOD: case SG_TRUEDIV:
        return rc[1] == 0 && a[1].num == 0;
    case SG_MODIDX:
        return (rc[1] == 0 && a[1].num == 0) || (rc[2] == 0 && a[2].num == 0);
    case SG_POWNAT:
        return rc[1] == 0 && a[1].num < 0;
    default:
        return false;
    }
}

static int eval_leaf(evaluator *ev, const sg_expr *e, sg_value *out)
{
    switch ((sg_kind)e->kind) {
    case SG_INT: *out = v_int(e->u.ival); return 0;
    case SG_RAT: out->kind = SG_VAL_REAL; out->num = e->u.rat.num; out->den = e->u.rat.den; return 0;
    case SG_TRUE: case SG_FALSE: *out = v_bool(e->kind == SG_TRUE); return 0;
    case SG_INF: out->kind = SG_VAL_INF; out->num = e->u.inf.sign; out->den = e->u.inf.integer; return 0;
    case SG_SYM:
        if (e->sym_index >= ev->nvalues) {
            if (!ev->missing)
                ev->missing = e;
            return SG_EINVALID;
        }
        *out = v_int(ev->values[e->sym_index]);
        return 0;
    default: return SG_ERROR;
    }
}

static int eval_node(evaluator *ev, const sg_expr *e, sg_value *out)
{
    sg_value small[4], *a = small;
    int small_rc[4], *rc = small_rc, worst = 0, res;
    size_t i;

    if (ev->stamp[e->id] == ev->gen) {
        *out = ev->memo[e->id].v;
        return ev->memo[e->id].rc;
    }
    if (e->nargs == 0) {
        res = eval_leaf(ev, e, out);
        goto done;
    }
    if (e->nargs > 4) {
        a = sg__malloc(e->nargs * sizeof *a);
        rc = sg__malloc(e->nargs * sizeof *rc);
        if (!a || !rc) {
            res = SG_ENOMEM;
            goto cleanup;
        }
    }
    for (i = 0; i < e->nargs; i++) {
        rc[i] = eval_node(ev, e->args[i], &a[i]);
        if (rc[i] == SG_ENOMEM || rc[i] == SG_EINVALID || rc[i] == SG_ERROR) {
            res = rc[i];
            goto cleanup;
        }
        if (rc[i] == SG_EUNDEFINED)
            worst = SG_EUNDEFINED;
        else if (rc[i] && !worst)
            worst = rc[i];
        if (rc[i] == 0 && a[i].kind == SG_VAL_INF) {
            res = SG_EUNSUPPORTED; /* constructors keep infinities at the root */
            goto cleanup;
        }
    }
    if (worst == SG_EOVERFLOW && undefined_anyway(e, a, rc))
        worst = SG_EUNDEFINED;
    res = worst ? worst : apply(e, a, out);
    if (res == SG_EUNDEFINED && (!worst || undefined_anyway(e, a, rc)) && !ev->undef)
        ev->undef = e;
cleanup:
    if (a != small)
        sg_free(a);
    if (rc != small_rc)
        sg_free(rc);
done:
    ev->stamp[e->id] = ev->gen;
    ev->memo[e->id].rc = res;
    if (res == 0)
        ev->memo[e->id].v = *out;
    return res;
}

int sg_expr_eval(sg_value *out, sg_pool *p, const sg_expr *e, const sg_int *values, size_t nvalues, sg_error *err)
{
    evaluator ev;
    int rc;
    char buf[64];

    memset(out, 0, sizeof *out);
    if (e->id >= sg_pool_size(p)) /* the scratch is by id: only the pool's own chain */
        return sg_error_set(err, SG_EINVALID, "sg_expr_eval: an expression of another pool");
    if (p->scratch_cap < sg_pool_size(p)) {
        size_t cap = sg_pool_size(p) * 2;
        uint32_t *st = sg__realloc(p->scratch_stamp, cap * sizeof *st);
        slot *m;
        if (!st)
            return sg_error_set(err, SG_ENOMEM, "out of memory evaluating an expression");
        p->scratch_stamp = st;
        m = sg__realloc(p->scratch_val, cap * sizeof *m);
        if (!m)
            return sg_error_set(err, SG_ENOMEM, "out of memory evaluating an expression");
        p->scratch_val = m;
        memset(st + p->scratch_cap, 0, (cap - p->scratch_cap) * sizeof *st);
        p->scratch_cap = cap;
    }
    if (++p->scratch_gen == 0) { /* wrapped: forget every stamp */
        memset(p->scratch_stamp, 0, p->scratch_cap * sizeof *p->scratch_stamp);
        p->scratch_gen = 1;
    }
    memset(&ev, 0, sizeof ev);
    ev.pool = p;
    ev.values = values;
    ev.nvalues = values ? nvalues : 0;
    ev.memo = p->scratch_val;
    ev.stamp = p->scratch_stamp;
    ev.gen = p->scratch_gen;
    rc = eval_node(&ev, e, out);
    switch (rc) {
    case 0: return 0;
    case SG_EINVALID:
        return sg_error_set(err, rc, "no value for symbol %s", ev.missing ? ev.missing->u.sym.name : "?");
    case SG_EUNDEFINED: {
        char *text = NULL;
        const char *why = "division or modulo by zero";
        if (ev.undef && ev.undef->kind == SG_POWNAT)
            why = "negative exponent";
        else if (ev.undef && ev.undef->kind == SG_PIECEWISE)
            why = "no branch of a Piecewise holds";
        if (ev.undef)
            sg_expr_print(&text, ev.undef, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
        sg_error_set(err, rc, "%s in %.120s%s", why, text ? text : "?",
                     text && strlen(text) > 120 ? "..." : "");
        sg_free(text);
        return rc;
    }
    case SG_EOVERFLOW:
        return sg_error_set(err, rc, "a value leaves the 128-bit range (|v| >= 2**127)");
    case SG_ENOMEM:
        return sg_error_set(err, rc, "out of memory evaluating an expression");
    default:
        sg_value_format(buf, sizeof buf, out);
        return sg_error_set(err, rc, "cannot evaluate a %s below the root", sg_kind_name(SG_INF));
    }
}

void sg_value_format(char *buf, size_t cap, const sg_value *v)
{
    char n[SG_INT_STRLEN], d[SG_INT_STRLEN];
    switch (v->kind) {
    case SG_VAL_INT: snprintf(buf, cap, "%s", sg_int_format(n, v->num)); break;
    case SG_VAL_REAL: snprintf(buf, cap, "%s/%s", sg_int_format(n, v->num), sg_int_format(d, v->den)); break;
    case SG_VAL_BOOL: snprintf(buf, cap, "%s", v->num ? "True" : "False"); break;
    case SG_VAL_INF:
        snprintf(buf, cap, "%s%s", v->num < 0 ? "-" : "", v->den ? "int_oo" : "oo");
        break;
    }
}

/* The API's value: numbers as sg_num. */
static sg_eval to_eval(const sg_value *v)
{
    sg_eval r;
    r.kind = v->kind;
    r.num = sg__num(v->num);
    r.den = sg__num(v->den);
    return r;
}

int sg_expr_evaluate(sg_eval *out, sg_pool *p, const sg_expr *e, const sg_num *values, size_t nvalues,
                     sg_error *err)
{
    sg_int *vals = NULL;
    sg_value v;
    size_t i;
    int rc;

    memset(out, 0, sizeof *out);
    if (nvalues && !(vals = sg__calloc(nvalues, sizeof *vals)))
        return sg_error_set(err, SG_ENOMEM, "out of memory evaluating an expression");
    for (i = 0; i < nvalues; i++)
        if (!sg__num_int(&values[i], &vals[i])) {
            sg_free(vals);
            return sg_error_set(err, SG_EINVALID, "value %zu is not a finite integer", i);
        }
    rc = sg_expr_eval(&v, p, e, vals, nvalues, err);
    sg_free(vals);
    if (rc == 0)
        *out = to_eval(&v);
    return rc;
}

void sg_eval_format(char *buf, size_t cap, const sg_eval *v)
{
    sg_value x;
    x.kind = v->kind;
    x.num = 0;
    x.den = 1;
    if (!sg__num_int(&v->num, &x.num) || !sg__num_int(&v->den, &x.den)) {
        snprintf(buf, cap, "?");
        return;
    }
    sg_value_format(buf, cap, &x);
}
