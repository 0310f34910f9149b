/*
 * infer_query.c - the questions of inference (analysis/infer_ctx.h): term ids,
 * the variables of the constraint set F and walks over its terms, and every
 * budgeted question through solver/query.h with the points its models leave.
 * Every valid model is kept as a point (the value of every variable of F);
 * the other steps reuse them (docs/infer.md).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_ctx.h"

/* ---- Term ids -------------------------------------------------------------------------------- */

/* Release the map's arrays; it is empty (and reusable) afterwards. */
void sg_infer__idmap_free(idmap *m)
{
    sg_free(m->key);
    sg_free(m->gen);
    sg_free(m->val);
    memset(m, 0, sizeof *m);
}

/* Forget every entry. */
void sg_infer__idmap_clear(idmap *m)
{
    m->cur++;
    m->n = 0;
}

/* The slot of `key`, or the empty slot where it would go (linear probing; cap > 0). */
static size_t idmap_slot(const idmap *m, unsigned key)
{
    size_t i = ((size_t)key * 2654435761u) & (m->cap - 1);
    while (m->gen[i] == m->cur && m->key[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* True and *val when `key` is present. */
bool sg_infer__idmap_get(const idmap *m, unsigned key, size_t *val)
{
    size_t i;
    if (!m->cap)
        return false;
    i = idmap_slot(m, key);
    if (m->gen[i] != m->cur)
        return false;
    if (val)
        *val = m->val[i];
    return true;
}

/* Insert or overwrite. Returns 0 or SG_ENOMEM. */
int sg_infer__idmap_put(idmap *m, unsigned key, size_t val)
{
    size_t i;
    if (m->cur == 0)
        m->cur = 1;
    if ((m->n + 1) * 2 > m->cap) {
        idmap big;
        size_t j;
        memset(&big, 0, sizeof big);
        big.cap = m->cap ? m->cap * 2 : 64;
        big.cur = 1;
        big.key = sg__calloc(big.cap, sizeof *big.key);
        big.gen = sg__calloc(big.cap, sizeof *big.gen);
        big.val = sg__calloc(big.cap, sizeof *big.val);
        if (!big.key || !big.gen || !big.val) {
            sg_infer__idmap_free(&big);
            return SG_ENOMEM;
        }
        for (j = 0; j < m->cap; j++)
            if (m->gen[j] == m->cur) {
                size_t k = idmap_slot(&big, m->key[j]);
                big.key[k] = m->key[j];
                big.gen[k] = 1;
                big.val[k] = m->val[j];
                big.n++;
            }
        sg_infer__idmap_free(m);
        *m = big;
    }
    i = idmap_slot(m, key);
    if (m->gen[i] != m->cur) {
        m->gen[i] = m->cur;
        m->key[i] = key;
        m->n++;
    }
    m->val[i] = val;
    return 0;
}

/* ---- Variables and walks ------------------------------------------------------------------- */

/* Add `a` (an Int constant) to the variables unless present. */
int sg_infer__add_var(ictx *x, const sg_term *a, size_t *idx)
{
    size_t i;
    unsigned id = sg_q_id(x->p, a);
    if (sg_infer__idmap_get(&x->varmap, id, &i)) {
        if (idx)
            *idx = i;
        return 0;
    }
    if (sg__grow((void **)&x->vars, &x->cvars, x->nvars + 1, sizeof *x->vars) ||
        sg_infer__idmap_put(&x->varmap, id, x->nvars))
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    x->vars[x->nvars] = a;
    if (idx)
        *idx = x->nvars;
    x->nvars++;
    return 0;
}

/*
 * Walk term `t` (depth-first, every shared node once). With `collect`, add the
 * Int constants met to the variables; with `out`, list the indices of the
 * known variables met; with `period`, fold literal divisors of div/mod/rem
 * into x->period. Returns 0 or SG_ENOMEM.
 */
int sg_infer__walk(ictx *x, const sg_term *t, bool collect, walk_out *out, bool period)
{
    const sg_term **stack = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    sg_infer__idmap_clear(&x->seen);
    if (sg__grow((void **)&stack, &cap, 1, sizeof *stack))
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    stack[n++] = t;
    while (n > 0) {
        const sg_term *a = stack[--n];
        unsigned id = sg_q_id(x->p, a);
        size_t k, na;
        sg_int d;
        if (sg_infer__idmap_get(&x->seen, id, NULL))
            continue;
        if ((rc = sg_infer__idmap_put(&x->seen, id, 0)))
            break;
        if (sg_q_is_int_const(x->p, a)) {
            size_t vi;
            if (collect && (rc = sg_infer__add_var(x, a, NULL)))
                break;
            if (out && sg_infer__idmap_get(&x->varmap, id, &vi)) {
                if (sg__grow((void **)&out->idx, &out->cap, out->n + 1, sizeof *out->idx)) {
                    rc = SG_ENOMEM;
                    break;
                }
                out->idx[out->n++] = vi;
            }
            continue;
        }
        na = sg_q_nargs(x->p, a); /* 0 for numerals */
        if (collect && sg_q_is_uninterpreted(x->p, a))
            x->exotic = true; /* an uninterpreted function or a non-Int constant */
        if (period && sg_q_divisor(x->p, a, &d) && d != 0 && d != SG_INT_MIN) {
            sg_int g, l;
            if (d < 0)
                d = -d;
            g = sg__gcd(x->period, d);
            if (sg__mul(x->period / g, d, &l) && l <= INF_LCM_MAX)
                x->period = l;
        }
        if (sg__grow((void **)&stack, &cap, n + na, sizeof *stack)) {
            rc = SG_ENOMEM;
            break;
        }
        for (k = 0; k < na; k++)
            stack[n++] = sg_q_arg(x->p, a, k);
    }
    sg_free(stack);
    if (rc == SG_ENOMEM)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    return rc;
}

/* ---- Queries and points -------------------------------------------------------------------- */

/* Store the values of every variable in `m` as a new point; *idx = -1 when it cannot be kept. */
static int record_point(ictx *x, const sg_q_model *m, long *idx)
{
    size_t j;
    sg_int *row;
    *idx = -1;
    if (x->npts >= x->maxpts)
        return 0;
    if (sg__grow((void **)&x->pts, &x->cpts, (x->npts + 1) * x->nvars + 1, sizeof *x->pts))
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    row = PT(x, x->npts);
    for (j = 0; j < x->nvars; j++) {
        sg_int v;
        if (x->npts > 0 && !in_scope(x, j)) {
            row[j] = PT(x, 0)[j]; /* another component: its base values */
            continue;
        }
        if (!sg_q_model_int(x->p, m, x->vars[j], &v) || v > INF_VALUE_LIMIT || v < -INF_VALUE_LIMIT)
            return 0;
        row[j] = v;
    }
    *idx = (long)x->npts++;
    return 0;
}

/* Count an unknown answer; after INF_MAX_UNKNOWN of them, or when the time budget is gone,
 * inference stops asking. */
void sg_infer__note_unknown(ictx *x, const char *reason)
{
    x->unknowns++;
    if (x->unknowns >= INF_MAX_UNKNOWN || strcmp(reason, "time budget") == 0)
        x->dead = true;
}

/*
 * One budgeted question over hard[0..nh-1] (callers add scoped_f() themselves)
 * under `as[0..na-1]`. On SAT with `pt`, the index of the model's point in
 * *pt (-1 when it could not be kept); on UNSAT with `core`, the core as in
 * sg_q_check (the caller frees it). After INF_MAX_UNKNOWN unknowns, or when
 * the time budget is gone, every further question answers UNKNOWN unasked.
 */
int sg_infer__query(ictx *x, const sg_term *const *hard, size_t nh, const sg_term *const *as, size_t na,
                 sg_q_answer *res, long *pt, size_t **core, size_t *ncore)
{
    sg_question q;
    sg_q_result r;
    size_t i;
    int rc;

    *res = SG_Q_UNKNOWN;
    if (pt)
        *pt = -1;
    if (core) {
        *core = NULL;
        *ncore = 0;
    }
    if (x->failed)
        return failure(x);
    for (i = 0; i < nh; i++)
        if (!hard[i])
            return failure(x);
    if (x->dead)
        return 0;
    memset(&q, 0, sizeof q);
    q.hard = hard;
    q.nhard = nh;
    q.assume = as;
    q.nassume = na;
    q.want_model = pt != NULL;
    q.want_core = core != NULL;
    rc = sg_q_check(x->p, &q, x->b, x->stats, &r, x->err);
    if (!rc) {
        *res = r.answer;
        if (r.answer == SG_Q_UNKNOWN) {
            sg_infer__note_unknown(x, r.reason);
        } else if (r.answer == SG_Q_SAT && r.model) {
            rc = record_point(x, r.model, pt);
        } else if (r.answer == SG_Q_UNSAT && core) {
            *core = r.core;
            *ncore = r.ncore;
            r.core = NULL;
        }
    }
    sg_q_result_dispose(x->p, &r);
    return rc;
}

/* Query scoped_f() and `extra` (may be NULL for the formula alone). */
int sg_infer__query_f(ictx *x, const sg_term *extra, sg_q_answer *res, long *pt)
{
    const sg_term *hard[2];
    hard[0] = scoped_f(x);
    hard[1] = extra;
    if (!extra && x->failed)
        return failure(x);
    return sg_infer__query(x, hard, extra ? 2 : 1, NULL, 0, res, pt, NULL, NULL);
}
