/*
 * query.c - the question interface over a problem's Z3 context (query.h).
 *
 * An sg_term is a term of the problem's store (solver/term.h), read
 * without Z3 and made in Z3 only when a question needs it, and an
 * sg_q_model a Z3_model. The store replays the calls in the order they were
 * made, so the questions an analysis asks are exactly the Z3 calls it made
 * before (same terms, same order, so the same models and cores). Every built
 * term goes on the problem's keep list (sg_problem_keep), which is what
 * sg_q_mark / sg_q_release bracket.
 */
#include <stdio.h>
#include <string.h>

#include "solver/problem.h"
#include "solver/query.h"
#include "util/util.h"

#define K(x) sg_problem_keep(p, (x))
#define Z(t) sg_t_z3(p->ts, (t))

const sg_term *sg_q_dim(sg_problem *p, size_t i) { return i < p->ninputs ? p->dvar[i] : NULL; }
const sg_term *sg_q_spec(sg_problem *p, size_t i) { return i < p->ninputs ? p->spec[i] : NULL; }
const sg_term *sg_q_spec_lit(sg_problem *p, size_t i) { return i < p->ninputs ? p->spec_lit[i] : NULL; }
const sg_term *sg_q_holds(sg_problem *p, size_t k) { return k < p->ncons ? p->cons[k].holds : NULL; }
const sg_term *sg_q_lit(sg_problem *p, size_t k) { return k < p->ncons ? p->cons[k].lit : NULL; }
const sg_term *sg_q_def(sg_problem *p, size_t k) { return k < p->nsyms ? p->sym_def[k] : NULL; }
const sg_term *sg_q_defs(sg_problem *p) { return p->defs; }
const sg_term *sg_q_symbol(sg_problem *p, const sg_expr *sym) { return sg_smt_symbol(p->smt, sym); }
const sg_term *sg_q_xvar(sg_problem *p, size_t j) { return j < p->nx ? p->xvar[j] : NULL; }

int sg_q_expr(sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err)
{
    const sg_term *v = NULL;
    int rc = sg_smt_encode(p->smt, e, &v, NULL, err);
    *out = rc ? NULL : v;
    return rc;
}

int sg_q_expr_holds(sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err)
{
    const sg_term *v = NULL;
    int rc = sg_smt_holds(p->smt, e, &v, err);
    *out = rc ? NULL : v;
    return rc;
}

const sg_term *sg_q_true(sg_problem *p) { return K(sg_t_true(p->ts)); }
const sg_term *sg_q_num(sg_problem *p, sg_int v) { return sg_problem_num(p, v); }
const sg_term *sg_q_not(sg_problem *p, const sg_term *a) { return K(sg_t_app1(p->ts, SG_T_NOT, a)); }

#define BINARY(name, op)                                                                           \
    const sg_term *name(sg_problem *p, const sg_term *a, const sg_term *b)                         \
    {                                                                                              \
        return K(sg_t_app2(p->ts, op, a, b));                                                      \
    }
BINARY(sg_q_eq, SG_T_EQ)
BINARY(sg_q_le, SG_T_LE)
BINARY(sg_q_ge, SG_T_GE)
BINARY(sg_q_implies, SG_T_IMPLIES)
BINARY(sg_q_mod, SG_T_MOD)
BINARY(sg_q_add, SG_T_ADD)
BINARY(sg_q_mul, SG_T_MUL)
#undef BINARY

const sg_term *sg_q_and2(sg_problem *p, const sg_term *a, const sg_term *b) { return sg_problem_and2(p, a, b); }

const sg_term *sg_q_and(sg_problem *p, const sg_term *const *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!v[i])
            return NULL;
    if (n == 0)
        return sg_q_true(p);
    return K(sg_t_app(p->ts, SG_T_AND, n, v));
}

const sg_term *sg_q_literal(sg_problem *p, const char *name) { return K(sg_t_const(p->ts, name, SG_TS_BOOL)); }
const sg_term *sg_q_fresh_int(sg_problem *p, const char *prefix) { return K(sg_t_fresh(p->ts, prefix, SG_TS_INT)); }
const sg_term *sg_q_fresh_bool(sg_problem *p, const char *prefix) { return K(sg_t_fresh(p->ts, prefix, SG_TS_BOOL)); }

const sg_term *sg_q_substitute(sg_problem *p, const sg_term *t, const sg_term *const *from, const sg_term *const *to,
                               size_t n)
{
    return K(sg_t_substitute(p->ts, t, n, from, to));
}

size_t sg_q_mark(const sg_problem *p) { return p->nkeep; }

void sg_q_release(sg_problem *p, size_t mark)
{
    while (p->nkeep > mark)
        sg_t_unref(p->ts, p->keep[--p->nkeep]);
}

bool sg_q_warm(const sg_problem *p) { return p && sg_ctxpool_warm(p->contexts); }

int sg_q_failed(const sg_problem *p) { return sg_terms_failed(p->ts); }

/* ---- Looking into terms (no Z3) ------------------------------------------------------------- */

sg_q_op sg_q_op_of(sg_problem *p, const sg_term *t)
{
    if (!t)
        return SG_QOP_OTHER;
    switch (sg_t_op(t)) {
    case SG_T_NUM: return SG_QOP_NUM;
    case SG_T_CONST: case SG_T_FRESH: return SG_QOP_CONST;
    case SG_T_TRUE: return SG_QOP_TRUE;
    case SG_T_FALSE: return SG_QOP_FALSE;
    case SG_T_NOT: return SG_QOP_NOT;
    case SG_T_AND: return SG_QOP_AND;
    case SG_T_OR: return SG_QOP_OR;
    case SG_T_IMPLIES: return SG_QOP_IMPLIES;
    case SG_T_ITE: return SG_QOP_ITE;
    case SG_T_EQ: return SG_QOP_EQ;
    case SG_T_LE: return SG_QOP_LE;
    case SG_T_LT: return SG_QOP_LT;
    case SG_T_GE: return SG_QOP_GE;
    case SG_T_GT: return SG_QOP_GT;
    case SG_T_ADD: return SG_QOP_ADD;
    case SG_T_SUB: return SG_QOP_SUB;
    case SG_T_MUL: return SG_QOP_MUL;
    case SG_T_DIV: return sg_t_sort(p->ts, t) == SG_TS_INT ? SG_QOP_DIV : SG_QOP_OTHER; /* Z3's idiv, not / */
    case SG_T_MOD: return SG_QOP_MOD;
    case SG_T_UMINUS: return SG_QOP_UMINUS;
    default: return SG_QOP_OTHER;
    }
}

size_t sg_q_nargs(sg_problem *p, const sg_term *t) { return sg_t_nargs(t); }
const sg_term *sg_q_arg(sg_problem *p, const sg_term *t, size_t j) { return sg_t_arg(t, j); }
unsigned sg_q_id(sg_problem *p, const sg_term *t) { return sg_t_id(t); }

bool sg_q_is_int_const(sg_problem *p, const sg_term *t)
{
    return sg_q_op_of(p, t) == SG_QOP_CONST && sg_t_sort(p->ts, t) == SG_TS_INT;
}

bool sg_q_num_value(sg_problem *p, const sg_term *t, sg_int *out) { return sg_t_int_value(t, out); }

/* ---- Questions ------------------------------------------------------------------------------ */

/*
 * Witnesses. A question that wants no model only asks "satisfiable?" (a core, when it wants one,
 * is for an unsat answer), and a point that satisfies it answers SAT as Z3 would: the check's core minimisation asks mostly
 * such questions (is the core still unsat without this member?), and most are answered by the
 * counterexample just found or by the example sizes torch traced. So before Z3 is asked, the
 * last model a question asked for (p->witness) and the example sizes (p->example) are tried:
 * with every assumption made true, each hard term and assumption is evaluated at that point
 * (sg_t_eval over the store's terms, below; Z3_model_eval with model completion where it cannot
 * tell); all true is a model of the question. Only SAT is ever
 * concluded this way, and it is what Z3 would answer (or better: Z3 might have run out of its
 * budget). Only on warm contexts (sg_ctxpool_warm): a question not asked changes what the
 * incremental solver has seen, hence the models and cores of later questions, which a call
 * with contexts of its own must not (its report is the same whatever ran before); a warm
 * context's answers depend on its history anyway (engine.h).
 */

/* The example sizes, one (constant, value) at a time to `put` (false stops the walk): D_i = its
 * size, a spec root = the size of the first Dim named after it, an Int symbol = its dim's size
 * (else its hint). False when `put` stopped it or out of memory. */
static bool each_example(sg_problem *p, bool (*put)(sg_problem *, const sg_term *, sg_int, void *), void *arg)
{
    bool *xset = NULL, ok = true;
    size_t i, k, x;

    if (p->nx && !(xset = sg__calloc(p->nx, sizeof *xset)))
        return false;
    for (i = 0; i < p->ninputs && ok; i++) {
        const sg_input_dim *d = &p->inputs[i];
        ok = put(p, p->dvar[i], d->size, arg);
        if (d->kind == SG_SPEC_DIM && d->name && (x = (size_t)sg_problem_x_index(p, d->name)) < p->nx && !xset[x]) {
            xset[x] = true;
            ok = ok && put(p, p->xvar[x], d->size, arg);
        }
    }
    for (k = 0; k < p->nsyms && ok; k++) {
        const sg_symbol_info *si = &p->syms[k];
        const sg_term *s = sg_q_symbol(p, si->sym);
        sg_top op = s ? sg_t_op(s) : SG_T_TRUE;
        if ((op != SG_T_CONST && op != SG_T_FRESH) || sg_expr_sort(si->sym) != SG_SORT_INT)
            continue;
        if (p->sym_input[k] >= 0)
            ok = put(p, s, p->inputs[p->sym_input[k]].size, arg);
        else if (si->has_hint)
            ok = put(p, s, si->hint, arg);
    }
    sg_free(xset);
    return ok;
}

static bool put_interp(sg_problem *p, const sg_term *t, sg_int v, void *arg)
{
    Z3_context c = sg_problem_context(p);
    Z3_ast a = Z(t), n = Z(sg_problem_num(p, v));
    if (!a || !n)
        return false;
    Z3_add_const_interp(c, (Z3_model)arg, Z3_get_app_decl(c, Z3_to_app(c, a)), n);
    return Z3_get_error_code(c) == Z3_OK;
}

/* The example sizes as a Z3 model; NULL when Z3 fails. */
static Z3_model example_model(sg_problem *p)
{
    Z3_context c = sg_problem_context(p);
    Z3_model m = c ? Z3_mk_model(c) : NULL;

    if (!m)
        return NULL;
    Z3_model_inc_ref(c, m);
    if (each_example(p, put_interp, m))
        return m;
    Z3_model_dec_ref(c, m);
    return NULL;
}

/* Is model `m`, with every assumption of `q` true, a model of `q`? */
static bool witnessed(sg_problem *p, Z3_model m, const sg_question *q)
{
    Z3_context c = sg_problem_context(p);
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

/*
 * The same test without Z3 (sg_t_eval): each hard term and assumption evaluated at the witness's
 * values, with the question's assumptions true. Z3's way above copies the whole model per
 * question, which made a check of hundreds of small components quadratic (view800: 800 one-dim
 * components, 2,400 constants copied per question); this reads only the constants the question
 * mentions. 1: a model of q; 0: not one; -1: it cannot tell (a Real, a power, a division by
 * zero...), and Z3's way answers. The example's values (m NULL) are p->ex; a model's are
 * read from Z3 one constant at a time.
 */
typedef struct wit_point {
    sg_problem *p;
    Z3_model m;
} wit_point;

#define WITNESS_NODES ((size_t)1 << 20) /* nodes one question's evaluation visits at most */

static int wit_value(void *arg, const sg_term *t, sg_int *v)
{
    wit_point *w = arg;
    sg_problem *p = w->p;
    unsigned id = sg_t_id(t);
    Z3_context c;
    Z3_ast a, val;
    int64_t i64;

    if (id < p->namark && p->amark[id] == p->astamp) {
        *v = 1; /* an assumption: true */
        return 1;
    }
    if (!w->m) {
        if (id < p->nex && p->ex[id].set) {
            *v = p->ex[id].v;
            return 1;
        }
        return 0;
    }
    c = sg_problem_context(p);
    if (!c || !(a = sg_t_z3(p->ts, t)) || !Z3_is_app(c, a))
        return -1;
    val = Z3_model_get_const_interp(c, w->m, Z3_get_app_decl(c, Z3_to_app(c, a)));
    if (!val)
        return 0; /* not in the model: any value completes it */
    switch (Z3_get_sort_kind(c, Z3_get_sort(c, val))) {
    case Z3_BOOL_SORT:
        switch (Z3_get_bool_value(c, val)) {
        case Z3_L_TRUE: *v = 1; return 1;
        case Z3_L_FALSE: *v = 0; return 1;
        default: return -1;
        }
    case Z3_INT_SORT:
        if (!Z3_is_numeral_ast(c, val) || !Z3_get_numeral_int64(c, val, &i64))
            return -1;
        *v = i64;
        return 1;
    default: return -1;
    }
}

/* Term t's example value is v, into p->ex (entries of a grown table unset); false: out of memory. */
static bool put_example(sg_problem *p, const sg_term *t, sg_int v, void *arg)
{
    unsigned id = sg_t_id(t);
    (void)arg;
    if (sg__grow_zeroed((void **)&p->ex, &p->nex, (size_t)id + 1, sizeof *p->ex))
        return false;
    if (id) {
        p->ex[id].v = v;
        p->ex[id].set = true;
    }
    return true;
}

static int evaluated(sg_problem *p, Z3_model m, const sg_question *q)
{
    wit_point w = {p, m};
    size_t budget = WITNESS_NODES, i;
    int res = 1;
    for (i = 0; i < q->nhard + q->nassume; i++) {
        sg_int v;
        if (!sg_t_eval(i < q->nhard ? q->hard[i] : q->assume[i - q->nhard], wit_value, &w, &budget, &v))
            res = -1; /* a later term may still be false */
        else if (!v)
            return 0;
    }
    return res;
}

/* SAT by a witness when one satisfies `q` (which wants neither model nor core). */
static bool answer_by_witness(sg_problem *p, const sg_question *q)
{
    size_t a;
    int e;

    /* mark the assumptions (sg_t_eval reads them true) */
    if (++p->astamp == 0) {
        memset(p->amark, 0, p->namark * sizeof *p->amark);
        p->astamp = 1;
    }
    for (a = 0; a < q->nassume; a++) {
        unsigned id = sg_t_id(q->assume[a]);
        if (sg__grow_zeroed((void **)&p->amark, &p->namark, (size_t)id + 1, sizeof *p->amark))
            return false;
        p->amark[id] = p->astamp;
    }
    if (p->witness && ((e = evaluated(p, p->witness, q)) > 0 || (e < 0 && witnessed(p, p->witness, q))))
        return true;
    if (!p->example_tried) {
        p->example_tried = true;
        if (!each_example(p, put_example, NULL))
            return false;
    }
    if ((e = evaluated(p, NULL, q)) >= 0)
        return e > 0;
    if (!p->example)
        p->example = example_model(p);
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
            return sg_error_set(err, sg_q_failed(p) ? sg_q_failed(p) : SG_EINVALID,
                                "sg_q_check: hard term %zu is missing (a builder failed)", i);
    if (!q->want_model && sg_ctxpool_warm(p->contexts) && answer_by_witness(p, q)) { /* (SAT has no core) */
        out->answer = SG_Q_SAT;
        return 0;
    }
    rc = sg_problem_check(p, q->hard, q->nhard, q->assume, q->nassume, b, stats,
                          &res, q->want_model ? &model : NULL, q->want_core ? &out->core : NULL, &out->ncore,
                          &out->core_all, out->reason, err);
    out->model = (sg_q_model *)model;
    if (model && sg_ctxpool_warm(p->contexts)) { /* the next questions' first witness */
        Z3_context c = sg_problem_context(p);
        Z3_model_inc_ref(c, model);
        if (p->witness)
            Z3_model_dec_ref(c, p->witness);
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
        Z3_model_dec_ref(sg_problem_context(p), (Z3_model)r->model);
    sg_free(r->core);
    r->model = NULL;
    r->core = NULL;
    r->ncore = 0;
}

bool sg_q_model_int(sg_problem *p, const sg_q_model *m, const sg_term *t, sg_int *out)
{
    if (!m || !t)
        return false;
    return sg_problem_model_int(p, (Z3_model)m, t, out);
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
    if (sg_z3_load(NULL) != 0) { /* (libz3 bound at first use: z3fns.h) */
        snprintf(buf, cap, "unavailable");
        return;
    }
    Z3_get_version(&major, &minor, &build, &rev);
    snprintf(buf, cap, "%u.%u.%u", major, minor, build);
}

/* ---- Added for analysis/infer.c: structure and errors ---------------------------------------- */

bool sg_q_is_uninterpreted(sg_problem *p, const sg_term *t)
{
    return t && (sg_t_op(t) == SG_T_CONST || sg_t_op(t) == SG_T_FRESH);
}

bool sg_q_divisor(sg_problem *p, const sg_term *t, sg_int *divisor)
{
    /* Z3's rem is never made here: mod and integer div are the divisions */
    if (!t || (sg_t_op(t) != SG_T_MOD && sg_q_op_of(p, t) != SG_QOP_DIV) || sg_t_op(sg_t_arg(t, 1)) != SG_T_NUM)
        return false;
    return sg_t_int_value(sg_t_arg(t, 1), divisor);
}

const char *sg_q_error_msg(const sg_problem *p) { return sg_terms_error_msg(p->ts); }
