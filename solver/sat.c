/*
 * sat.c - one satisfiability question (solver/sat.h): the pos conditions'
 * "holds" terms and the negations of the neg conditions' asserted in one Z3
 * solver with a resource limit; the wishes pushed on top first.
 */
#include <stdio.h>
#include <string.h>

#include "solver/sat.h"
#include "solver/smt.h"
#include "util/util.h"

/* holds(e), or its negation, asserted in `s`. */
static int assert_holds(sg_smt *smt, Z3_solver s, const sg_expr *e, bool negate, sg_error *err)
{
    Z3_context c = sg_smt_context(smt);
    const sg_term *t = NULL;
    Z3_ast h;
    int rc = sg_smt_holds(smt, e, &t, err);

    if (rc)
        return rc;
    if (!c || !(h = sg_smt_z3(smt, t)))
        return sg_error_set(err, SG_ERROR, "Z3: %s", sg_terms_error_msg(sg_smt_terms(smt)));
    if (negate)
        h = Z3_mk_not(c, h);
    if (!h || Z3_get_error_code(c) != Z3_OK)
        return sg_error_set(err, SG_ERROR, "Z3: %s", Z3_get_error_msg(c, Z3_get_error_code(c)));
    Z3_solver_assert(c, s, h);
    return 0;
}

int sg_sat_find(sg_sat_answer *answer, sg_int *vals, const sg_sat_query *q, char *reason, size_t cap,
                sg_error *err)
{
    size_t ns = sg_pool_nsymbols(q->pool), i;
    sg_smt *smt = NULL;
    Z3_solver s = NULL;
    Z3_params prm = NULL;
    Z3_context c;
    Z3_lbool res = Z3_L_UNDEF;
    int rc = 0, round;

    *answer = SG_SAT_UNKNOWN;
    if (reason && cap)
        reason[0] = '\0';
    if ((rc = sg_smt_new_in(&smt, q->pool, q->contexts, err)) != 0)
        return rc;
    c = sg_smt_context(smt);
    if (!c) {
        int code = sg_terms_failed(sg_smt_terms(smt));
        rc = sg_error_set(err, code ? code : SG_ENOMEM, "%s",
                          code ? sg_terms_error_msg(sg_smt_terms(smt)) : "out of memory: Z3 could not create a context");
        sg_smt_free(smt);
        return rc;
    }
    s = Z3_mk_solver(c);
    Z3_solver_inc_ref(c, s);
    prm = Z3_mk_params(c);
    Z3_params_inc_ref(c, prm);
    if (q->rlimit)
        Z3_params_set_uint(c, prm, Z3_mk_string_symbol(c, "rlimit"),
                           q->rlimit > 0xffffffffu ? 0xffffffffu : (unsigned)q->rlimit);
    Z3_solver_set_params(c, s, prm);
    for (i = 0; i < q->npos && !rc; i++)
        rc = assert_holds(smt, s, q->pos[i], false, err);
    for (i = 0; i < q->nneg && !rc; i++)
        rc = assert_holds(smt, s, q->neg[i], true, err);
    /* with the wishes first, then without them */
    for (round = q->nwish ? 0 : 1; round < 2 && !rc; round++) {
        Z3_solver_push(c, s);
        for (i = 0; round == 0 && i < q->nwish && !rc; i++)
            rc = assert_holds(smt, s, q->wish[i], false, err);
        if (!rc)
            res = Z3_solver_check(c, s);
        if (!rc && res == Z3_L_TRUE) {
            Z3_model m = Z3_solver_get_model(c, s);
            Z3_model_inc_ref(c, m);
            for (i = 0; i < ns; i++) {
                Z3_ast v = sg_smt_z3(smt, sg_smt_symbol(smt, sg_pool_symbol(q->pool, i))), r = NULL;
                const char *txt;
                sg_int x = 0;
                vals[i] = 0;
                if (v && Z3_model_eval(c, m, v, true, &r) && r && Z3_is_numeral_ast(c, r)
                    && (txt = Z3_get_numeral_string(c, r)) && sg_int_parse(&x, txt, strlen(txt)) == 0)
                    vals[i] = x;
            }
            Z3_model_dec_ref(c, m);
            *answer = SG_SAT_YES;
        } else if (!rc && res == Z3_L_UNDEF && reason && cap) {
            snprintf(reason, cap, "%s", Z3_solver_get_reason_unknown(c, s));
        }
        Z3_solver_pop(c, s, 1);
        if (res == Z3_L_TRUE)
            break;
        if (res == Z3_L_UNDEF && round == 0)
            continue; /* without the wishes it may still be decided */
    }
    if (!rc && res == Z3_L_FALSE)
        *answer = SG_SAT_NO;
    Z3_params_dec_ref(c, prm);
    Z3_solver_dec_ref(c, s);
    sg_smt_free(smt);
    return rc;
}
