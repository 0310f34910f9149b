/*
 * infer_values.c - which values inside a symbol's range are valid
 * (analysis/infer_ctx.h, docs/infer.md): congruences s = r (mod m) from the
 * gcd of observed differences, proved by one unsat question; holes from Ne /
 * Eq constants, by enumeration of a small class, or complete through the
 * univariate reduction of the symbol's component.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_ctx.h"

/* ---- Congruences --------------------------------------------------------------------------- */

/* gcd of |v_i - v_0| over the points for variable sv (0 when all equal). */
static sg_int spread_gcd(const ictx *x, size_t sv)
{
    sg_int g = 0, d;
    size_t i;
    for (i = 1; i < x->npts; i++)
        if (sg__sub(PT(x, i)[sv], PT(x, 0)[sv], &d) && d != SG_INT_MIN)
            g = sg__gcd(g, d);
    return g;
}

/*
 * The largest modulus of symbol k: every valid modulus divides the gcd g of
 * the differences of observed values, so g is the candidate; a failed proof
 * yields a new value and a smaller g. Leaves modulus 1 when nothing is proved.
 */
int sg_infer__congruence(ictx *x, size_t k, sg_inferred *o)
{
    size_t sv = x->symvar[k], mark = sg_q_mark(x->p);
    sg_int g = spread_gcd(x, sv);
    unsigned round;
    int rc = 0;

    o->modulus = 1;
    o->residue = 0;
    for (round = 0; round < INF_CONG_ROUNDS && g >= 2 && !x->dead; round++) {
        sg_int r, d;
        sg_q_answer res;
        long pt = -1;
        if (!sg__pymod(PT(x, 0)[sv], g, &r))
            break;
        rc = sg_infer__query_f(x, mk_not(x, mk_eq(x, mk_mod(x, x->vars[sv], num(x, g)), num(x, r))), &res, &pt);
        sg_q_release(x->p, mark);
        if (rc)
            return rc;
        if (res == SG_Q_UNSAT) {
            o->modulus = g;
            o->residue = r;
            break;
        }
        if (res != SG_Q_SAT || pt < 0 || !sg__sub(PT(x, pt)[sv], PT(x, 0)[sv], &d) || d == SG_INT_MIN)
            break;
        g = sg__gcd(g, d);
    }
    return 0;
}

/* ---- Holes --------------------------------------------------------------------------------- */

/* e = a*sym + b with one symbol at most: accumulates into *a, *b (scaled by `scale`). */
static bool lin1(const sg_expr *e, sg_int scale, const sg_expr **sym, sg_int *a, sg_int *b)
{
    size_t i;
    sg_int t;
    switch (sg_expr_kind(e)) {
    case SG_INT:
        return sg__mul(scale, sg_expr_int_value(e), &t) && sg__add(*b, t, b);
    case SG_SYM:
        if (*sym && *sym != e)
            return false;
        *sym = e;
        return sg__add(*a, scale, a);
    case SG_MUL:
        if (sg_expr_nargs(e) != 2 || sg_expr_kind(sg_expr_arg(e, 0)) != SG_INT ||
            !sg__mul(scale, sg_expr_int_value(sg_expr_arg(e, 0)), &t))
            return false;
        return lin1(sg_expr_arg(e, 1), t, sym, a, b);
    case SG_ADD:
        for (i = 0; i < sg_expr_nargs(e); i++)
            if (!lin1(sg_expr_arg(e, i), scale, sym, a, b))
                return false;
        return true;
    default:
        return false;
    }
}

/* Candidate holes: for every Eq / Ne node a*s + b (=|!=) c of a guard, the value of s it names. */
int sg_infer__collect_candidates(ictx *x, cand **out, size_t *nout)
{
    sg_problem *p = x->p;
    size_t nsym = sg_pool_nsymbols(p->pool), psize = sg_pool_size(p->pool), i, cap = 0, n = 0, scap = 0;
    size_t *symk = sg__calloc(nsym + 1, sizeof *symk);
    unsigned char *seen = sg__calloc(psize + 1, 1);
    const sg_expr **stack = NULL;
    int rc = 0;

    *out = NULL;
    *nout = 0;
    if (!symk || !seen) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = 0; i < p->nsyms; i++) {
        uint32_t si = sg_expr_symbol_index(p->syms[i].sym);
        if (si < nsym && !symk[si])
            symk[si] = i + 1;
    }
    for (i = 0; i < p->ncons && n < INF_MAX_CANDS; i++) {
        size_t top = 0;
        if (p->cons[i].kind != SG_CORE_GUARD || !p->cons[i].expr)
            continue;
        if (sg__grow((void **)&stack, &scap, 1, sizeof *stack)) {
            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        stack[top++] = p->cons[i].expr;
        while (top > 0 && n < INF_MAX_CANDS) {
            const sg_expr *e = stack[--top];
            uint32_t id = sg_expr_id(e);
            size_t j, na = sg_expr_nargs(e);
            sg_kind kd = sg_expr_kind(e);
            if (id < psize) {
                if (seen[id])
                    continue;
                seen[id] = 1;
            }
            if ((kd == SG_EQ || kd == SG_NE) && na == 2) {
                const sg_expr *s = NULL;
                sg_int a = 0, b = 0;
                if (lin1(sg_expr_arg(e, 0), 1, &s, &a, &b) && lin1(sg_expr_arg(e, 1), -1, &s, &a, &b) && s &&
                    a != 0 && b != SG_INT_MIN && (-b) % a == 0) {
                    uint32_t si = sg_expr_symbol_index(s);
                    if (si < nsym && symk[si]) {
                        if (sg__grow((void **)out, &cap, n + 1, sizeof **out)) {
                            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
                            goto cleanup;
                        }
                        (*out)[n].k = symk[si] - 1;
                        (*out)[n].v = (-b) / a;
                        n++;
                    }
                }
            }
            if (kd >= SG_ADD && na) {
                if (sg__grow((void **)&stack, &scap, top + na, sizeof *stack)) {
                    rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
                    goto cleanup;
                }
                for (j = 0; j < na; j++)
                    stack[top++] = sg_expr_arg(e, j);
            }
        }
    }
    *nout = n;
cleanup:
    sg_free(symk);
    sg_free(seen);
    sg_free(stack);
    if (rc) {
        sg_free(*out);
        *out = NULL;
    }
    return rc;
}

/* qsort order of sg_int values, ascending. */
static int cmp_int(const void *a, const void *b)
{
    sg_int x = *(const sg_int *)a, y = *(const sg_int *)b;
    return x < y ? -1 : x > y;
}

/* Is v inside o's range and congruence class? */
static bool in_range(sg_int v, const sg_inferred *o)
{
    sg_int d;
    if ((!o->lo.inf && v < o->lo.v) || (!o->hi.inf && v > o->hi.v))
        return false;
    return o->modulus <= 1 || (sg__pymod(v, o->modulus, &d) && d == o->residue);
}

/* Does some point give variable sv the value v (so v is valid)? */
static bool attained(const ictx *x, size_t sv, sg_int v)
{
    size_t i;
    for (i = 0; i < x->npts; i++)
        if (PT(x, i)[sv] == v)
            return true;
    return false;
}

/* Is v among a[0..n-1]? */
static bool has_value(const sg_int *a, size_t n, sg_int v)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (a[i] == v)
            return true;
    return false;
}

/* Append hole v to o (once). Returns 0 or SG_ENOMEM. */
static int add_hole(sg_inferred *o, size_t *cap, sg_int v, sg_error *err)
{
    if (has_value(o->holes, o->nholes, v))
        return 0;
    if (sg__grow((void **)&o->holes, cap, o->nholes + 1, sizeof *o->holes))
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    o->holes[o->nholes++] = v;
    return 0;
}

/* Conjunction: s within o's range (finite sides) and congruence. */
static int range_terms(ictx *x, const sg_term *s, const sg_inferred *o, const sg_term **v, size_t *n)
{
    if (!o->lo.inf)
        v[(*n)++] = mk_ge(x, s, num(x, o->lo.v));
    if (!o->hi.inf)
        v[(*n)++] = mk_le(x, s, num(x, o->hi.v));
    if (o->modulus > 1)
        v[(*n)++] = mk_eq(x, mk_mod(x, s, num(x, o->modulus)), num(x, o->residue));
    return x->failed ? failure(x) : 0;
}

/* The first value >= lo in o's congruence class. */
static bool first_in_class(const sg_inferred *o, sg_int lo, sg_int *v)
{
    sg_int d, off;
    if (o->modulus <= 1) {
        *v = lo;
        return true;
    }
    return sg__sub(o->residue, lo, &d) && sg__pymod(d, o->modulus, &off) && sg__add(lo, off, v);
}

/*
 * Enumeration: every value of the class in range that no point attains is
 * asked about on its own ("s = v": with s fixed, even nonlinear guards are
 * easy); unsat ones are holes. Complete when every answer is known.
 */
static int holes_enumerate(ictx *x, size_t sv, sg_inferred *o, size_t *cap)
{
    size_t mark = sg_q_mark(x->p);
    sg_int v;
    bool ok = first_in_class(o, o->lo.v, &v), complete = true;
    int rc = 0;

    for (; ok && v <= o->hi.v; ok = sg__add(v, o->modulus, &v)) {
        sg_q_answer res;
        long pt = -1;
        if (attained(x, sv, v))
            continue;
        if (x->enum_budget == 0 || x->dead) {
            complete = false;
            break;
        }
        x->enum_budget--;
        rc = sg_infer__query_f(x, mk_eq(x, x->vars[sv], num(x, v)), &res, &pt);
        sg_q_release(x->p, mark);
        if (rc)
            return rc;
        if (res == SG_Q_UNSAT) {
            if ((rc = add_hole(o, cap, v, x->err)))
                return rc;
        } else if (res != SG_Q_SAT) {
            complete = false;
        }
    }
    o->holes_complete = ok && complete;
    return 0;
}

/*
 * Univariate: validity of s is G(w) with w an alias of s, so every value in
 * range where G fails is a hole; they are found one by one, without F, until
 * none is left (complete) or INF_MAX_HOLES are listed.
 */
static int holes_univariate(ictx *x, const sg_term *G, size_t w, sg_inferred *o, size_t *cap)
{
    size_t mark = sg_q_mark(x->p), i;
    const sg_term **hard = sg__calloc(INF_MAX_HOLES + 8, sizeof *hard);
    int rc = 0;

    if (!hard)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    while (!x->dead) {
        size_t nh = 0;
        sg_question q;
        sg_q_result r;
        sg_int v;
        bool got;
        if ((rc = range_terms(x, x->vars[w], o, hard, &nh)))
            break;
        for (i = 0; i < o->nholes; i++)
            hard[nh++] = mk_not(x, mk_eq(x, x->vars[w], num(x, o->holes[i])));
        hard[nh++] = mk_not(x, G);
        if (x->failed) {
            rc = failure(x);
            break;
        }
        memset(&q, 0, sizeof q);
        q.hard = hard;
        q.nhard = nh;
        q.want_model = true;
        rc = sg_q_check(x->p, &q, x->b, x->stats, &r, x->err);
        sg_q_release(x->p, mark);
        if (rc) {
            sg_q_result_dispose(x->p, &r);
            break;
        }
        if (r.answer == SG_Q_UNSAT) {
            sg_q_result_dispose(x->p, &r);
            o->holes_complete = true;
            break;
        }
        if (r.answer != SG_Q_SAT) {
            sg_infer__note_unknown(x, r.reason);
            sg_q_result_dispose(x->p, &r);
            break;
        }
        got = sg_q_model_int(x->p, r.model, x->vars[w], &v);
        sg_q_result_dispose(x->p, &r);
        if (!got || o->nholes >= INF_MAX_HOLES || has_value(o->holes, o->nholes, v))
            break;
        if ((rc = add_hole(o, cap, v, x->err)))
            break;
    }
    sg_q_release(x->p, mark);
    sg_free(hard);
    return rc;
}

/*
 * Holes of symbol k within [lo, hi] and its congruence class. Complete by a
 * univariate reduction of the symbol's component when there is one (cheap:
 * no query carries F); else by enumeration when the class has at most
 * INF_ENUM_MAX values there; else only the candidates of Ne/Eq guards, each
 * proved by an unsat query, and the list may be partial.
 */
int sg_infer__holes(ictx *x, size_t k, const cand *cands, size_t ncands, sg_inferred *o)
{
    size_t sv = x->symvar[k], cap = 0, i, w = 0, mark;
    sg_int span, count = -1;
    const sg_term *G = NULL;
    int rc = 0;

    o->holes_complete = false;
    if (!o->lo.inf && !o->hi.inf && sg__sub(o->hi.v, o->lo.v, &span))
        count = span / o->modulus + 1;
    if ((rc = sg_infer__univariate_of(x, sv, &G, &w))) /* outside any release() scope: G is cached */
        goto done;
    if (G) {
        if ((rc = holes_univariate(x, G, w, o, &cap)) || o->holes_complete)
            goto done;
    }
    if (count >= 0 && count <= INF_ENUM_MAX && x->enum_budget > 0) {
        if ((rc = holes_enumerate(x, sv, o, &cap)) || o->holes_complete)
            goto done;
    }
    mark = sg_q_mark(x->p);
    for (i = 0; i < ncands && o->nholes < INF_MAX_HOLES && !x->dead; i++) {
        sg_q_answer res;
        long pt = -1;
        if (cands[i].k != k || !in_range(cands[i].v, o) || attained(x, sv, cands[i].v) ||
            has_value(o->holes, o->nholes, cands[i].v))
            continue;
        rc = sg_infer__query_f(x, mk_eq(x, x->vars[sv], num(x, cands[i].v)), &res, &pt);
        sg_q_release(x->p, mark);
        if (rc)
            goto done;
        if (res == SG_Q_UNSAT && (rc = add_hole(o, &cap, cands[i].v, x->err)))
            goto done;
    }
done:
    if (o->nholes > 1)
        qsort(o->holes, o->nholes, sizeof *o->holes, cmp_int);
    return rc;
}
