/*
 * query.c - the question interface over a problem's Z3 context (query.h).
 *
 * An sg_term is a Z3_ast of the problem's context and an sg_q_model a
 * Z3_model, both passed through opaque pointer types: the handles cost
 * nothing, and the questions an analysis asks through them are exactly the
 * Z3 calls it made before (same terms, same order, so the same models and
 * cores). Every built term goes on the problem's keep list
 * (sg_problem_keep), which is what sg_q_mark / sg_q_release bracket.
 */
#include <stdio.h>
#include <string.h>

#include "solver/problem.h"
#include "solver/query.h"
#include "util/util.h"

#define Z(t) ((Z3_ast)(t))
#define T(a) ((const sg_term *)(a))
#define K(x) sg_problem_keep(p, (x))

const sg_term *sg_q_dim(sg_problem *p, size_t i) { return i < p->ninputs ? T(p->dvar[i]) : NULL; }
const sg_term *sg_q_spec(sg_problem *p, size_t i) { return i < p->ninputs ? T(p->spec[i]) : NULL; }
const sg_term *sg_q_spec_lit(sg_problem *p, size_t i) { return i < p->ninputs ? T(p->spec_lit[i]) : NULL; }
const sg_term *sg_q_holds(sg_problem *p, size_t k) { return k < p->ncons ? T(p->cons[k].holds) : NULL; }
const sg_term *sg_q_lit(sg_problem *p, size_t k) { return k < p->ncons ? T(p->cons[k].lit) : NULL; }
const sg_term *sg_q_def(sg_problem *p, size_t k) { return k < p->nsyms ? T(p->sym_def[k]) : NULL; }
const sg_term *sg_q_defs(sg_problem *p) { return T(p->defs); }
const sg_term *sg_q_symbol(sg_problem *p, const sg_expr *sym) { return T(sg_smt_symbol(p->smt, sym)); }
const sg_term *sg_q_xvar(sg_problem *p, size_t j) { return j < p->nx ? T(p->xvar[j]) : NULL; }

int sg_q_expr(sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err)
{
    Z3_ast v = NULL;
    int rc = sg_smt_encode(p->smt, e, &v, NULL, err);
    *out = rc ? NULL : T(v);
    return rc;
}

int sg_q_expr_holds(sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err)
{
    Z3_ast v = NULL;
    int rc = sg_smt_holds(p->smt, e, &v, err);
    *out = rc ? NULL : T(v);
    return rc;
}

const sg_term *sg_q_true(sg_problem *p) { return T(K(Z3_mk_true(p->ctx))); }
const sg_term *sg_q_num(sg_problem *p, sg_int v) { return T(sg_problem_num(p, v)); }
const sg_term *sg_q_not(sg_problem *p, const sg_term *a) { return a ? T(K(Z3_mk_not(p->ctx, Z(a)))) : NULL; }

#define BINARY(name, mk)                                                                           \
    const sg_term *name(sg_problem *p, const sg_term *a, const sg_term *b)                         \
    {                                                                                              \
        return a && b ? T(K(mk(p->ctx, Z(a), Z(b)))) : NULL;                                       \
    }
BINARY(sg_q_eq, Z3_mk_eq)
BINARY(sg_q_le, Z3_mk_le)
BINARY(sg_q_ge, Z3_mk_ge)
BINARY(sg_q_implies, Z3_mk_implies)
BINARY(sg_q_mod, Z3_mk_mod)
#undef BINARY

const sg_term *sg_q_and2(sg_problem *p, const sg_term *a, const sg_term *b)
{
    return T(sg_problem_and2(p, Z(a), Z(b)));
}

const sg_term *sg_q_and(sg_problem *p, const sg_term *const *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!v[i])
            return NULL;
    if (n == 0)
        return sg_q_true(p);
    return T(K(Z3_mk_and(p->ctx, (unsigned)n, (const Z3_ast *)v)));
}

static const sg_term *arith2(sg_problem *p, const sg_term *a, const sg_term *b, bool mul)
{
    Z3_ast v[2];
    if (!a || !b)
        return NULL;
    v[0] = Z(a);
    v[1] = Z(b);
    return T(K(mul ? Z3_mk_mul(p->ctx, 2, v) : Z3_mk_add(p->ctx, 2, v)));
}

const sg_term *sg_q_add(sg_problem *p, const sg_term *a, const sg_term *b) { return arith2(p, a, b, false); }
const sg_term *sg_q_mul(sg_problem *p, const sg_term *a, const sg_term *b) { return arith2(p, a, b, true); }

const sg_term *sg_q_literal(sg_problem *p, const char *name)
{
    return T(K(Z3_mk_const(p->ctx, Z3_mk_string_symbol(p->ctx, name), Z3_mk_bool_sort(p->ctx))));
}

const sg_term *sg_q_fresh_int(sg_problem *p, const char *prefix)
{
    return T(K(Z3_mk_fresh_const(p->ctx, prefix, Z3_mk_int_sort(p->ctx))));
}

const sg_term *sg_q_fresh_bool(sg_problem *p, const char *prefix)
{
    return T(K(Z3_mk_fresh_const(p->ctx, prefix, Z3_mk_bool_sort(p->ctx))));
}

const sg_term *sg_q_substitute(sg_problem *p, const sg_term *t, const sg_term *const *from, const sg_term *const *to,
                               size_t n)
{
    size_t i;
    if (!t)
        return NULL;
    for (i = 0; i < n; i++)
        if (!from[i] || !to[i])
            return NULL;
    return T(K(Z3_substitute(p->ctx, Z(t), (unsigned)n, (const Z3_ast *)from, (const Z3_ast *)to)));
}

size_t sg_q_mark(const sg_problem *p) { return p->nkeep; }

void sg_q_release(sg_problem *p, size_t mark)
{
    while (p->nkeep > mark)
        Z3_dec_ref(p->ctx, p->keep[--p->nkeep]);
}

bool sg_q_warm(const sg_problem *p) { return p && sg_ctxpool_warm(p->contexts); }

int sg_q_failed(const sg_problem *p) { return Z3_get_error_code(p->ctx) != Z3_OK ? SG_ERROR : 0; }

/* ---- Looking into terms -------------------------------------------------------------------- */

static bool app_of(sg_problem *p, const sg_term *t, Z3_app *out)
{
    if (!t || Z3_get_ast_kind(p->ctx, Z(t)) != Z3_APP_AST)
        return false;
    *out = Z3_to_app(p->ctx, Z(t));
    return true;
}

sg_q_op sg_q_op_of(sg_problem *p, const sg_term *t)
{
    Z3_app app;
    if (t && Z3_get_ast_kind(p->ctx, Z(t)) == Z3_NUMERAL_AST)
        return SG_QOP_NUM;
    if (!app_of(p, t, &app))
        return SG_QOP_OTHER;
    switch (Z3_get_decl_kind(p->ctx, Z3_get_app_decl(p->ctx, app))) {
    case Z3_OP_UNINTERPRETED: return Z3_get_app_num_args(p->ctx, app) == 0 ? SG_QOP_CONST : SG_QOP_OTHER;
    case Z3_OP_ANUM: return SG_QOP_NUM;
    case Z3_OP_TRUE: return SG_QOP_TRUE;
    case Z3_OP_FALSE: return SG_QOP_FALSE;
    case Z3_OP_NOT: return SG_QOP_NOT;
    case Z3_OP_AND: return SG_QOP_AND;
    case Z3_OP_OR: return SG_QOP_OR;
    case Z3_OP_IMPLIES: return SG_QOP_IMPLIES;
    case Z3_OP_ITE: return SG_QOP_ITE;
    case Z3_OP_EQ: return SG_QOP_EQ;
    case Z3_OP_LE: return SG_QOP_LE;
    case Z3_OP_LT: return SG_QOP_LT;
    case Z3_OP_GE: return SG_QOP_GE;
    case Z3_OP_GT: return SG_QOP_GT;
    case Z3_OP_ADD: return SG_QOP_ADD;
    case Z3_OP_SUB: return SG_QOP_SUB;
    case Z3_OP_MUL: return SG_QOP_MUL;
    case Z3_OP_IDIV: return SG_QOP_DIV;
    case Z3_OP_MOD: return SG_QOP_MOD;
    case Z3_OP_UMINUS: return SG_QOP_UMINUS;
    default: return SG_QOP_OTHER;
    }
}

size_t sg_q_nargs(sg_problem *p, const sg_term *t)
{
    Z3_app app;
    return app_of(p, t, &app) ? Z3_get_app_num_args(p->ctx, app) : 0;
}

const sg_term *sg_q_arg(sg_problem *p, const sg_term *t, size_t j)
{
    Z3_app app;
    if (!app_of(p, t, &app) || j >= Z3_get_app_num_args(p->ctx, app))
        return NULL;
    return T(Z3_get_app_arg(p->ctx, app, (unsigned)j));
}

unsigned sg_q_id(sg_problem *p, const sg_term *t) { return t ? Z3_get_ast_id(p->ctx, Z(t)) : 0; }

bool sg_q_is_int_const(sg_problem *p, const sg_term *t)
{
    return sg_q_op_of(p, t) == SG_QOP_CONST && Z3_get_sort_kind(p->ctx, Z3_get_sort(p->ctx, Z(t))) == Z3_INT_SORT;
}

bool sg_q_num_value(sg_problem *p, const sg_term *t, sg_int *out)
{
    const char *txt;
    if (!t || !Z3_is_numeral_ast(p->ctx, Z(t)) ||
        Z3_get_sort_kind(p->ctx, Z3_get_sort(p->ctx, Z(t))) != Z3_INT_SORT)
        return false;
    txt = Z3_get_numeral_string(p->ctx, Z(t));
    return txt && sg_int_parse(out, txt, strlen(txt)) == 0;
}

/* ---- Questions ------------------------------------------------------------------------------ */

/*
 * Witnesses. A question that wants no model only asks "satisfiable?" (a core, when it wants one,
 * is for an unsat answer), and a point that satisfies it answers SAT as Z3 would: the check's core minimisation asks mostly
 * such questions (is the core still unsat without this member?), and most are answered by the
 * counterexample just found or by the example sizes torch traced. So before Z3 is asked, the
 * last model a question asked for (p->witness) and the example sizes (p->example) are tried:
 * with every assumption made true, each hard term and assumption is evaluated in the model
 * (Z3_model_eval, model completion); all true is a model of the question. Only SAT is ever
 * concluded this way, and it is what Z3 would answer (or better: Z3 might have run out of its
 * budget). Only on warm contexts (sg_ctxpool_warm): a question not asked changes what the
 * incremental solver has seen, hence the models and cores of later questions, which a call
 * with contexts of its own must not (its report is the same whatever ran before); a warm
 * context's answers depend on its history anyway (engine.h).
 */

/* The example sizes as a model: D_i = size, a symbol = its dim's size (else its hint), a spec
 * root = the size of the first Dim named after it. NULL when Z3 fails. */
static Z3_model example_model(sg_problem *p)
{
    Z3_context c = p->ctx;
    Z3_model m = Z3_mk_model(c);
    bool *xset = NULL;
    size_t i, k;

    if (!m)
        return NULL;
    Z3_model_inc_ref(c, m);
    if (p->nx && !(xset = sg__calloc(p->nx, sizeof *xset)))
        goto fail;
    for (i = 0; i < p->ninputs; i++) {
        const sg_input_dim *d = &p->inputs[i];
        Z3_ast v = sg_problem_num(p, d->size);
        if (!v)
            goto fail;
        Z3_add_const_interp(c, m, Z3_get_app_decl(c, Z3_to_app(c, p->dvar[i])), v);
        if (d->kind == SG_SPEC_DIM && d->name) {
            size_t x;
            for (x = 0; x < p->nx && strcmp(p->names[x], d->name) != 0; x++)
                ;
            if (x < p->nx && !xset[x]) {
                xset[x] = true;
                Z3_add_const_interp(c, m, Z3_get_app_decl(c, Z3_to_app(c, p->xvar[x])), v);
            }
        }
    }
    for (k = 0; k < p->nsyms; k++) {
        const sg_symbol_info *si = &p->syms[k];
        Z3_ast s = Z(sg_q_symbol(p, si->sym)), v;
        if (!s || !Z3_is_app(c, s) || sg_expr_sort(si->sym) != SG_SORT_INT)
            continue;
        if (p->sym_input[k] >= 0)
            v = sg_problem_num(p, p->inputs[p->sym_input[k]].size);
        else if (si->has_hint)
            v = sg_problem_num(p, si->hint);
        else
            continue;
        if (!v)
            goto fail;
        Z3_add_const_interp(c, m, Z3_get_app_decl(c, Z3_to_app(c, s)), v);
    }
    sg_free(xset);
    if (Z3_get_error_code(c) == Z3_OK)
        return m;
fail:
    sg_free(xset);
    Z3_model_dec_ref(c, m);
    return NULL;
}

/* Is model `m`, with every assumption of `q` true, a model of `q`? */
static bool witnessed(sg_problem *p, Z3_model m, const sg_question *q)
{
    Z3_context c = p->ctx;
    Z3_model w;
    Z3_func_decl *ad = NULL;
    unsigned n, j;
    size_t i, a;
    bool ok = false;

    if (!(w = Z3_mk_model(c)))
        return false;
    Z3_model_inc_ref(c, w);
    if (q->nassume && !(ad = sg__malloc(q->nassume * sizeof *ad)))
        goto done;
    for (a = 0; a < q->nassume; a++) { /* the assumptions: named Bool constants, made true */
        Z3_ast t = Z(q->assume[a]);
        if (!Z3_is_app(c, t) || Z3_get_app_num_args(c, Z3_to_app(c, t)) != 0)
            goto done;
        ad[a] = Z3_get_app_decl(c, Z3_to_app(c, t));
        Z3_add_const_interp(c, w, ad[a], Z3_mk_true(c));
    }
    n = Z3_model_get_num_consts(c, m);
    for (j = 0; j < n; j++) { /* the candidate's values of everything else */
        Z3_func_decl d = Z3_model_get_const_decl(c, m, j);
        Z3_ast v = Z3_model_get_const_interp(c, m, d);
        for (a = 0; a < q->nassume && ad[a] != d; a++)
            ;
        if (a == q->nassume && v)
            Z3_add_const_interp(c, w, d, v);
    }
    if (Z3_get_error_code(c) != Z3_OK)
        goto done;
    for (i = 0; i < q->nhard + q->nassume; i++) {
        Z3_ast t = Z(i < q->nhard ? q->hard[i] : q->assume[i - q->nhard]), v = NULL;
        if (!Z3_model_eval(c, w, t, true, &v) || !v || Z3_get_bool_value(c, v) != Z3_L_TRUE)
            goto done;
    }
    ok = Z3_get_error_code(c) == Z3_OK;
done:
    sg_free(ad);
    Z3_model_dec_ref(c, w);
    return ok;
}

/* SAT by a witness when one satisfies `q` (which wants neither model nor core). */
static bool answer_by_witness(sg_problem *p, const sg_question *q)
{
    if (p->witness && witnessed(p, p->witness, q))
        return true;
    if (!p->example_tried) {
        p->example_tried = true;
        p->example = example_model(p);
    }
    return p->example && witnessed(p, p->example, q);
}

int sg_q_check(sg_problem *p, const sg_question *q, const sg_budget *b, sg_check_stats *stats, sg_q_result *out,
               sg_error *err)
{
    Z3_lbool res = Z3_L_UNDEF;
    Z3_model model = NULL;
    size_t i;
    int rc;

    memset(out, 0, sizeof *out);
    out->answer = SG_Q_UNKNOWN;
    for (i = 0; i < q->nhard; i++)
        if (!q->hard[i])
            return sg_error_set(err, sg_q_failed(p) ? SG_ERROR : SG_EINVALID,
                                "sg_q_check: hard term %zu is missing (a builder failed)", i);
    if (!q->want_model && sg_ctxpool_warm(p->contexts) && answer_by_witness(p, q)) { /* (SAT has no core) */
        out->answer = SG_Q_SAT;
        return 0;
    }
    rc = sg_problem_check(p, (const Z3_ast *)q->hard, q->nhard, (const Z3_ast *)q->assume, q->nassume, b, stats,
                          &res, q->want_model ? &model : NULL, q->want_core ? &out->core : NULL, &out->ncore,
                          out->reason, err);
    out->model = (sg_q_model *)model;
    if (model && sg_ctxpool_warm(p->contexts)) { /* the next questions' first witness */
        Z3_model_inc_ref(p->ctx, model);
        if (p->witness)
            Z3_model_dec_ref(p->ctx, p->witness);
        p->witness = model;
    }
    if (!rc)
        out->answer = res == Z3_L_TRUE ? SG_Q_SAT : res == Z3_L_FALSE ? SG_Q_UNSAT : SG_Q_UNKNOWN;
    return rc;
}

void sg_q_result_dispose(sg_problem *p, sg_q_result *r)
{
    if (!r)
        return;
    if (r->model)
        Z3_model_dec_ref(p->ctx, (Z3_model)r->model);
    sg_free(r->core);
    r->model = NULL;
    r->core = NULL;
    r->ncore = 0;
}

bool sg_q_model_int(sg_problem *p, const sg_q_model *m, const sg_term *t, sg_int *out)
{
    if (!m || !t)
        return false;
    return sg_problem_model_int(p, (Z3_model)m, Z(t), out);
}

/* ---- Extremes ------------------------------------------------------------------------------- */

/* cost of value v when searching the minimum (dir < 0) or the maximum (dir > 0): minimised. */
static sg_int cost_of(int dir, sg_int v) { return dir < 0 ? v : -v; }

/* One step: a point with cost(t) <= target? On SAT, *value is t's value there. */
static int at_most(sg_problem *p, const sg_term *const *hard, size_t nhard, const sg_term *t, int dir, sg_int target,
                   const sg_budget *b, sg_check_stats *stats, sg_q_answer *ans, sg_int *value, sg_error *err)
{
    size_t mark = sg_q_mark(p), i;
    const sg_term **all = sg__malloc((nhard + 1) * sizeof *all);
    sg_question q;
    sg_q_result r;
    int rc;

    *ans = SG_Q_UNKNOWN;
    if (!all)
        return sg_error_set(err, SG_ENOMEM, "out of memory searching an extreme");
    for (i = 0; i < nhard; i++)
        all[i] = hard[i];
    all[nhard] = dir < 0 ? sg_q_le(p, t, sg_q_num(p, target)) : sg_q_ge(p, t, sg_q_num(p, -target));
    memset(&q, 0, sizeof q);
    q.hard = all;
    q.nhard = nhard + 1;
    q.want_model = true;
    rc = sg_q_check(p, &q, b, stats, &r, err);
    if (!rc) {
        *ans = r.answer;
        if (r.answer == SG_Q_SAT && !sg_q_model_int(p, r.model, t, value))
            *ans = SG_Q_UNKNOWN; /* a value beyond sg_int: no step */
    }
    sg_q_result_dispose(p, &r);
    sg_free(all);
    sg_q_release(p, mark);
    return rc;
}

int sg_q_extreme(sg_problem *p, const sg_term *const *hard, size_t nhard, const sg_term *t, int dir, sg_int start,
                 sg_int gallop_limit, unsigned max_queries, const sg_budget *b, sg_check_stats *stats, sg_bound *out,
                 bool *exact, sg_error *err)
{
    sg_int bestc, lbc = 0, away = 1, limit = gallop_limit > 0 ? gallop_limit : (sg_int)1 << 20;
    bool lb_known = false;
    unsigned n = 0, cap = max_queries ? max_queries : 64;
    int rc = 0;

    *exact = false;
    out->inf = dir;
    out->v = 0;
    if (!t || dir == 0 || start == SG_INT_MIN)
        return sg_error_set(err, SG_EINVALID, "sg_q_extreme: no term, direction or start");
    bestc = cost_of(dir, start);
    while (!(lb_known && lbc >= bestc) && n < cap) {
        sg_int target, value = 0;
        sg_q_answer ans;
        if (!lb_known) {
            if (away > limit || !sg__sub(bestc, away, &target))
                break;
        } else {
            target = lbc + (bestc - 1 - lbc) / 2;
        }
        n++;
        if ((rc = at_most(p, hard, nhard, t, dir, target, b, stats, &ans, &value, err)))
            return rc;
        if (ans == SG_Q_UNKNOWN)
            break;
        if (ans == SG_Q_UNSAT) {
            lbc = target + 1;
            lb_known = true;
            continue;
        }
        if (cost_of(dir, value) >= bestc) /* Z3 met the bound with the same cost: no progress */
            break;
        bestc = cost_of(dir, value);
        if (!lb_known)
            away *= 4;
    }
    sg_q_extreme_end(dir, lb_known, lbc, bestc, out, exact);
    return 0;
}

void sg_q_extreme_end(int dir, bool lb_known, sg_int lbc, sg_int bestc, sg_bound *out, bool *exact)
{
    *exact = lb_known && lbc >= bestc;
    out->inf = lb_known ? 0 : dir;
    out->v = !lb_known ? 0 : cost_of(dir, *exact ? bestc : lbc);
}

/* ---- What decided ---------------------------------------------------------------------------- */

const char *sg_solver_name(void) { return "z3"; }

void sg_solver_version(char *buf, size_t cap)
{
    unsigned major, minor, build, rev;
    Z3_get_version(&major, &minor, &build, &rev);
    snprintf(buf, cap, "%u.%u.%u", major, minor, build);
}

/* ---- Added for analysis/infer.c: structure and errors ---------------------------------------- */

bool sg_q_is_uninterpreted(sg_problem *p, const sg_term *t)
{
    Z3_app app;
    return app_of(p, t, &app) && Z3_get_decl_kind(p->ctx, Z3_get_app_decl(p->ctx, app)) == Z3_OP_UNINTERPRETED;
}

bool sg_q_divisor(sg_problem *p, const sg_term *t, sg_int *divisor)
{
    Z3_app app;
    Z3_decl_kind dk;
    Z3_ast d;
    const char *txt;
    if (!app_of(p, t, &app) || Z3_get_app_num_args(p->ctx, app) != 2)
        return false;
    dk = Z3_get_decl_kind(p->ctx, Z3_get_app_decl(p->ctx, app));
    if (dk != Z3_OP_MOD && dk != Z3_OP_IDIV && dk != Z3_OP_REM)
        return false;
    d = Z3_get_app_arg(p->ctx, app, 1);
    if (Z3_get_ast_kind(p->ctx, d) != Z3_NUMERAL_AST)
        return false;
    txt = Z3_get_numeral_string(p->ctx, d);
    return txt && sg_int_parse(divisor, txt, strlen(txt)) == 0;
}

const char *sg_q_error_msg(const sg_problem *p)
{
    Z3_error_code code = Z3_get_error_code(p->ctx);
    return code == Z3_OK ? "" : Z3_get_error_msg(p->ctx, code);
}
