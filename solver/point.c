/*
 * point.c - one integer point meeting layered wishes (solver/point.h).
 */
#include <stdio.h>
#include <string.h>

#include "solver/smt.h"
#include "solver/point.h"
#include "util/util.h"

/* Terms asserted and kept referenced until the end. */
typedef struct kept {
    Z3_context c;
    Z3_solver s;
    Z3_ast *a;
    size_t n, cap;
    bool failed;
} kept;

static void keep_assert(kept *k, Z3_ast t)
{
    if (!t || k->failed)
        return;
    if (sg__grow((void **)&k->a, &k->cap, k->n + 1, sizeof *k->a) != 0) {
        k->failed = true;
        return;
    }
    Z3_inc_ref(k->c, t);
    k->a[k->n++] = t;
    Z3_solver_assert(k->c, k->s, t);
}

/* `v >= lo` / `v <= hi` for a bound that fits in 64 bits (a wider one is no constraint). */
static void bound(kept *k, Z3_ast v, Z3_sort is, const sg_point_bound *b)
{
    if (b->has_lo && b->lo >= INT64_MIN && b->lo <= INT64_MAX)
        keep_assert(k, Z3_mk_ge(k->c, v, Z3_mk_int64(k->c, (int64_t)b->lo, is)));
    if (b->has_hi && b->hi >= INT64_MIN && b->hi <= INT64_MAX)
        keep_assert(k, Z3_mk_le(k->c, v, Z3_mk_int64(k->c, (int64_t)b->hi, is)));
}

int sg_point_find(sg_int *vals, const sg_point_query *q, sg_error *err)
{
    size_t ns = sg_pool_nsymbols(q->pool), i;
    sg_smt *smt = NULL;
    Z3_context c;
    Z3_params prm = NULL;
    Z3_model m = NULL;
    Z3_sort is;
    kept k;
    int rc, round;

    memset(&k, 0, sizeof k);
    if ((rc = sg_smt_new_in(&smt, q->pool, q->contexts, err)) != 0)
        return rc;
    c = k.c = sg_smt_context(smt);
    if (!c) {
        int code = sg_terms_failed(sg_smt_terms(smt));
        rc = sg_error_set(err, code ? code : SG_ENOMEM, "%s",
                          code ? sg_terms_error_msg(sg_smt_terms(smt)) : "out of memory: Z3 could not create a context");
        sg_smt_free(smt);
        return rc;
    }
    is = Z3_mk_int_sort(c);
    k.s = Z3_mk_solver(c);
    Z3_solver_inc_ref(c, k.s);
    prm = Z3_mk_params(c);
    Z3_params_inc_ref(c, prm);
    Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "rlimit"),
                       q->rlimit > 0xffffffffu ? 0xffffffffu : (unsigned)q->rlimit);
    Z3_solver_set_params(c, k.s, prm);
    for (i = 0; q->hard && i < ns; i++) { /* hard: the given bounds */
        Z3_ast v = sg_smt_z3(smt, sg_smt_symbol(smt, sg_pool_symbol(q->pool, i)));
        if (q->active[i] && v)
            bound(&k, v, is, &q->hard[i]);
    }
    /* wishes, in layers: 0 ranges, guards and the floor; 1 ranges and guards; 2 the floor; 3 none */
    for (round = 0; round < 4 && !k.failed; round++) {
        Z3_lbool res;
        Z3_solver_push(c, k.s);
        for (i = 0; q->ranges && i < ns && round < 2; i++) {
            Z3_ast v = sg_smt_z3(smt, sg_smt_symbol(smt, sg_pool_symbol(q->pool, i)));
            if (q->active[i] && v)
                bound(&k, v, is, &q->ranges[i]);
        }
        for (i = 0; i < q->nguards && round < 2; i++) {
            const sg_term *h;
            Z3_ast z;
            sg_error e2 = SG_ERROR_INIT;
            if (sg_smt_holds(smt, q->guards[i], &h, &e2) == 0 && (z = sg_smt_z3(smt, h)))
                Z3_solver_assert(c, k.s, z);
        }
        for (i = 0; i < ns && (round == 0 || round == 2); i++) {
            Z3_ast v = sg_smt_z3(smt, sg_smt_symbol(smt, sg_pool_symbol(q->pool, i)));
            sg_point_bound fl;
            memset(&fl, 0, sizeof fl);
            fl.has_lo = true;
            fl.lo = q->floor;
            if (q->active[i] && v)
                bound(&k, v, is, &fl);
        }
        res = Z3_solver_check(c, k.s);
        if (res == Z3_L_TRUE) {
            m = Z3_solver_get_model(c, k.s);
            Z3_model_inc_ref(c, m);
            for (i = 0; i < ns; i++) {
                Z3_ast v = sg_smt_z3(smt, sg_smt_symbol(smt, sg_pool_symbol(q->pool, i))), r = NULL;
                const char *txt;
                sg_int x;
                if (!q->active[i] || !v || !Z3_model_eval(c, m, v, true, &r) || !r || !Z3_is_numeral_ast(c, r))
                    continue;
                txt = Z3_get_numeral_string(c, r);
                if (txt && sg_int_parse(&x, txt, strlen(txt)) == 0)
                    vals[i] = x;
            }
        }
        Z3_solver_pop(c, k.s, 1);
        if (res == Z3_L_TRUE)
            break;
    }
    rc = k.failed ? sg_error_set(err, SG_ENOMEM, "out of memory") : 0; /* without a model the values stay */
    for (i = 0; i < k.n; i++)
        Z3_dec_ref(c, k.a[i]);
    if (m)
        Z3_model_dec_ref(c, m);
    Z3_params_dec_ref(c, prm);
    Z3_solver_dec_ref(c, k.s);
    sg_free(k.a);
    sg_smt_free(smt);
    return rc;
}
