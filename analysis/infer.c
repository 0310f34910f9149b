/*
 * infer.c - what the guards imply about every symbol (analysis/infer.h,
 * docs/infer.md): exact ranges by model-guided bisection with proved
 * unboundedness (rays), congruences from the gcd of observed differences,
 * holes from Ne constants, enumeration and univariate elimination, and affine
 * relations fitted exactly on sampled models, each proved by one unsat query.
 *
 * Every valid model Z3 returns is kept as a *point* (the value of every Int
 * variable of the constraint set); later steps reuse them: the extremes seen
 * so far seed each search, their differences give candidate moduli, and they
 * span the affine hull the relations are fitted on.
 *
 * Queries about one symbol carry only the conjuncts of its connected
 * component (variables linked through shared conjuncts): the whole set is
 * satisfiable, so the other components can keep the values of the first
 * model, and each query stays as small as the dims it is about.
 *
 * Terms: every question is asked through solver/query.h (no Z3 here). The
 * terms built for one step are released at its end (sg_q_mark /
 * sg_q_release); F, the components and their reductions live until the end
 * of sg_infer, which releases everything built here.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_impl.h"
#include "solver/query.h"
#include "util/util.h"

#define INF_MAX_VALUES ((size_t)1 << 20)   /* sg_ints stored for points, all together */
#define INF_MAX_UNKNOWN 8                  /* unknown answers before inference stops asking */
#define INF_VALUE_LIMIT ((sg_int)1 << 100) /* points with a larger |value| are not kept */
#define INF_GALLOP_LIMIT ((sg_int)1 << 64) /* farthest step of the unbounded search */
#define INF_LCM_MAX ((sg_int)1 << 20)      /* largest period used for rays */
#define INF_RAY_TRIES 8                    /* ray proofs tried per unbounded search */
#define INF_STICKY_ROUNDS 8                /* classes let go by one sticky search */
#define INF_CONG_ROUNDS 8                  /* refinements of a congruence candidate */
#define INF_ENUM_MAX 64                    /* values enumerated for complete holes */
#define INF_ENUM_BUDGET 512                /* enumeration queries, all symbols together */
#define INF_MAX_HOLES 64                   /* holes reported per symbol */
#define INF_UNI_MAX_VARS 32                /* variables a component may keep for elimination */
#define INF_UNI_MAX_CONJ 512               /* conjuncts of a component for elimination */
#define INF_REL_ROUNDS 8                   /* fit / verify rounds of the relation search */
#define INF_MAX_CANDS 4096                 /* hole candidates from Ne / Eq guards */

/* ---- A hash map from term ids to indices, with O(1) clearing ----------------------------- */

typedef struct idmap {
    unsigned *key;  /* term id (sg_q_id) */
    unsigned *gen;  /* the generation that wrote the slot; other generations are empty */
    size_t *val;
    size_t cap, n;  /* cap: a power of two, or 0 */
    unsigned cur;   /* current generation, >= 1 */
} idmap;

/* Release the map's arrays; it is empty (and reusable) afterwards. */
static void idmap_free(idmap *m)
{
    sg_free(m->key);
    sg_free(m->gen);
    sg_free(m->val);
    memset(m, 0, sizeof *m);
}

/* Forget every entry. */
static void idmap_clear(idmap *m)
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
static bool idmap_get(const idmap *m, unsigned key, size_t *val)
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
static int idmap_put(idmap *m, unsigned key, size_t val)
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
            idmap_free(&big);
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
        idmap_free(m);
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

/* ---- The inference context ----------------------------------------------------------------- */

/* What the elimination learned about one connected component of the constraint set. */
typedef struct component {
    const sg_term *F; /* conjunction of the component's conjuncts */
    int state;     /* 0: not analysed, 1: univariate, 2: not univariate / too big */
    size_t w;      /* univariate: the variable that remains */
    const sg_term *G; /* univariate: formula over w alone, equivalent to the component */
} component;

typedef struct ictx {
    sg_problem *p;
    const sg_budget *b;
    sg_check_stats *stats;
    sg_error *err;
    int failed;               /* first failure building terms: SG_ERROR or SG_ENOMEM */
    size_t mark0;             /* sg_q_mark before anything was built here */
    const sg_term *F;         /* the constraint set: definitions and every constraint */
    size_t scope;             /* component root the current queries are about, SIZE_MAX: all of F */
    bool exotic;              /* F has free symbols other than Int constants: no components */
    const sg_term **vars;     /* the Int constants of F and every symbol */
    size_t nvars, cvars;
    idmap varmap;             /* term id -> index into vars */
    idmap seen;               /* scratch visited set for walks */
    size_t *symvar;           /* [nsyms] index of the symbol's variable */
    sg_int period;            /* lcm of the literal divisors of F (capped), >= 1 */
    sg_int *pts;              /* points, row-major: npts x nvars */
    size_t npts, cpts, maxpts;
    unsigned unknowns;
    bool dead;                /* budget exhausted: every further query is unknown */
    unsigned enum_budget;
    /* components, for complete holes */
    bool comp_ready;
    size_t *uf;               /* [nvars] union-find parents */
    const sg_term **conj;     /* conjuncts of F */
    size_t nconj, cconj;
    size_t *conj_comp;        /* [nconj] component root of each conjunct (SIZE_MAX: ground) */
    component *comps;         /* [nvars] by root */
    unsigned char *alias;     /* [nvars] 0: not analysed, 1: alias of its component's w, 2: not */
    size_t *arep;             /* [nvars] union-find of the alias classes (var = var conjuncts) */
} ictx;

static size_t uf_find(size_t *uf, size_t i);

#define PT(x, i) ((x)->pts + (size_t)(i) * (x)->nvars)

/*
 * The formula queries are about: F, or when a scope is set, the conjuncts of
 * one connected component. F is satisfiable (the base point), so a value of a
 * variable is valid for F iff it is valid for its component: the other
 * components keep their values of the base point (record_point fills them in).
 */
static const sg_term *scoped_f(const ictx *x)
{
    return x->scope == SIZE_MAX || x->exotic ? x->F : x->comps[x->scope].F;
}

/* Is variable v part of the formula queries are currently about? */
static bool in_scope(ictx *x, size_t v)
{
    return x->scope == SIZE_MAX || x->exotic || uf_find(x->uf, v) == x->scope;
}

/* The result `t` of a builder (solver/query.h): NULL, and failed set, when it failed. */
static const sg_term *ok(ictx *x, const sg_term *t)
{
    if (x->failed)
        return NULL;
    if (!t) {
        x->failed = SG_ERROR;
        sg_error_set(x->err, SG_ERROR, "Z3 error while inferring: %s",
                     sg_q_failed(x->p) ? sg_q_error_msg(x->p) : "no term");
    }
    return t;
}

/* The error to return once `failed` is set. */
static int failure(ictx *x)
{
    if (x->err && x->err->code == 0)
        sg_error_set(x->err, x->failed ? x->failed : SG_ERROR, "inference failed");
    return x->failed ? x->failed : SG_ERROR;
}

/* ---- Term builders: NULL in -> NULL out, failed set when one fails ------------------------- */

static const sg_term *num(ictx *x, sg_int v) { return x->failed ? NULL : ok(x, sg_q_num(x->p, v)); }

#define INF_BINARY(name, q)                                                                        \
    static const sg_term *name(ictx *x, const sg_term *a, const sg_term *b)                        \
    {                                                                                              \
        return a && b ? ok(x, q(x->p, a, b)) : NULL;                                               \
    }
INF_BINARY(mk_le, sg_q_le)
INF_BINARY(mk_ge, sg_q_ge)
INF_BINARY(mk_eq, sg_q_eq)
INF_BINARY(mk_mod, sg_q_mod)
INF_BINARY(mk_implies, sg_q_implies)
INF_BINARY(mk_add, sg_q_add)
INF_BINARY(mk_mul, sg_q_mul)
#undef INF_BINARY

static const sg_term *mk_not(ictx *x, const sg_term *a) { return a ? ok(x, sg_q_not(x->p, a)) : NULL; }

/* The conjunction of v[0..n-1] (true when n is 0, v[0] itself when n is 1); NULL when any is NULL. */
static const sg_term *mk_and(ictx *x, const sg_term *const *v, size_t n)
{
    size_t i;
    if (n == 0)
        return ok(x, sg_q_true(x->p));
    for (i = 0; i < n; i++)
        if (!v[i])
            return NULL;
    return n == 1 ? v[0] : ok(x, sg_q_and(x->p, v, n));
}

static const sg_term *fresh_int(ictx *x, const char *prefix)
{
    return x->failed ? NULL : ok(x, sg_q_fresh_int(x->p, prefix));
}

static const sg_term *fresh_bool(ictx *x, const char *prefix)
{
    return x->failed ? NULL : ok(x, sg_q_fresh_bool(x->p, prefix));
}

static const sg_term *substitute(ictx *x, const sg_term *t, const sg_term *const *from, const sg_term *const *to,
                                 size_t n)
{
    return x->failed ? NULL : ok(x, sg_q_substitute(x->p, t, from, to, n));
}

/* ---- Variables and walks ------------------------------------------------------------------- */

/* Add `a` (an Int constant) to the variables unless present. */
static int add_var(ictx *x, const sg_term *a, size_t *idx)
{
    size_t i;
    unsigned id = sg_q_id(x->p, a);
    if (idmap_get(&x->varmap, id, &i)) {
        if (idx)
            *idx = i;
        return 0;
    }
    if (sg__grow((void **)&x->vars, &x->cvars, x->nvars + 1, sizeof *x->vars) ||
        idmap_put(&x->varmap, id, x->nvars))
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    x->vars[x->nvars] = a;
    if (idx)
        *idx = x->nvars;
    x->nvars++;
    return 0;
}

typedef struct walk_out {
    size_t *idx;   /* variable indices found */
    size_t n, cap;
} walk_out;

/*
 * Walk term `t` (depth-first, every shared node once). With `collect`, add the
 * Int constants met to the variables; with `out`, list the indices of the
 * known variables met; with `period`, fold literal divisors of div/mod/rem
 * into x->period. Returns 0 or SG_ENOMEM.
 */
static int walk(ictx *x, const sg_term *t, bool collect, walk_out *out, bool period)
{
    const sg_term **stack = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    idmap_clear(&x->seen);
    if (sg__grow((void **)&stack, &cap, 1, sizeof *stack))
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    stack[n++] = t;
    while (n > 0) {
        const sg_term *a = stack[--n];
        unsigned id = sg_q_id(x->p, a);
        size_t k, na;
        sg_int d;
        if (idmap_get(&x->seen, id, NULL))
            continue;
        if ((rc = idmap_put(&x->seen, id, 0)))
            break;
        if (sg_q_is_int_const(x->p, a)) {
            size_t vi;
            if (collect && (rc = add_var(x, a, NULL)))
                break;
            if (out && idmap_get(&x->varmap, id, &vi)) {
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
static void note_unknown(ictx *x, const char *reason)
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
static int query(ictx *x, const sg_term *const *hard, size_t nh, const sg_term *const *as, size_t na,
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
            note_unknown(x, r.reason);
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
static int query_f(ictx *x, const sg_term *extra, sg_q_answer *res, long *pt)
{
    const sg_term *hard[2];
    hard[0] = scoped_f(x);
    hard[1] = extra;
    if (!extra && x->failed)
        return failure(x);
    return query(x, hard, extra ? 2 : 1, NULL, 0, res, pt, NULL, NULL);
}

/* ---- Ranges -------------------------------------------------------------------------------- */

/* cost of value v when searching the minimum (dir < 0) or the maximum (dir > 0): minimised. */
static sg_int cost_of(int dir, sg_int v) { return dir < 0 ? v : -v; }

/* cost(s) <= target, as a term. */
static const sg_term *cost_le(ictx *x, const sg_term *s, int dir, sg_int target)
{
    return dir < 0 ? mk_le(x, s, num(x, target)) : mk_ge(x, s, num(x, -target));
}

/*
 * Prove that the points P0 + t * period * (P2 - P1), t = 0, 1, 2, ... are all
 * valid: one unsat query of "t >= 0 and not F[x := P0 + t*r]". *proved on
 * unsat only.
 */
static int ray_check(ictx *x, size_t p0, size_t p1, size_t p2, bool *proved)
{
    size_t mark = sg_q_mark(x->p), j;
    const sg_term **to = NULL, *t, *G, *hard[2];
    sg_q_answer res;
    int rc = 0;

    *proved = false;
    if (x->dead)
        return 0;
    to = sg__calloc(x->nvars + 1, sizeof *to);
    if (!to)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    t = fresh_int(x, "ray!t");
    for (j = 0; j < x->nvars; j++) {
        sg_int d, r;
        if (!sg__sub(PT(x, p2)[j], PT(x, p1)[j], &d) || !sg__mul(d, x->period, &r))
            goto cleanup; /* too far apart to write down: no proof */
        to[j] = r == 0 ? num(x, PT(x, p0)[j]) : mk_add(x, num(x, PT(x, p0)[j]), mk_mul(x, num(x, r), t));
    }
    if (x->failed) {
        rc = failure(x);
        goto cleanup;
    }
    G = substitute(x, scoped_f(x), x->vars, to, x->nvars);
    hard[0] = mk_ge(x, t, num(x, 0));
    hard[1] = mk_not(x, G);
    if ((rc = query(x, hard, 2, NULL, 0, &res, NULL, NULL, NULL)))
        goto cleanup;
    *proved = res == SG_Q_UNSAT;
cleanup:
    sg_free(to);
    sg_q_release(x->p, mark);
    return rc;
}

/*
 * A valid point strictly better than point p1 for symbol variable `sv` in
 * direction `dir` that keeps as many other variables as possible at their
 * values in p1: alias classes (variables equated by a var = var conjunct)
 * are held or let go together; while the query is unsat, one class named by
 * the unsat core is let go, INF_STICKY_ROUNDS rounds at most. *out = -1 when
 * none was found.
 */
static int sticky_point(ictx *x, size_t sv, int dir, size_t p1, long *out)
{
    size_t mark = sg_q_mark(x->p), j, round, nh, na;
    const sg_term **lits = NULL, **hard = NULL, **as = NULL;
    size_t *asv = NULL;
    bool *loose = NULL;
    int rc = 0;

    *out = -1;
    lits = sg__calloc(x->nvars + 1, sizeof *lits);
    hard = sg__calloc(x->nvars + 3, sizeof *hard);
    as = sg__calloc(x->nvars + 1, sizeof *as);
    asv = sg__calloc(x->nvars + 1, sizeof *asv);
    loose = sg__calloc(x->nvars + 1, sizeof *loose);
    if (!lits || !hard || !as || !asv || !loose) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    loose[uf_find(x->arep, sv)] = true;
    for (j = 0; j < x->nvars; j++) {
        size_t r = uf_find(x->arep, j);
        if (!loose[r] && !lits[r] && in_scope(x, j))
            lits[r] = fresh_bool(x, "stay");
    }
    for (round = 0; round < INF_STICKY_ROUNDS && !x->dead; round++) {
        size_t *core = NULL, ncore = 0;
        sg_q_answer res;
        nh = na = 0;
        hard[nh++] = scoped_f(x);
        hard[nh++] = cost_le(x, x->vars[sv], dir, cost_of(dir, PT(x, p1)[sv]) - 1);
        for (j = 0; j < x->nvars; j++) {
            size_t r = uf_find(x->arep, j);
            if (loose[r] || !in_scope(x, j))
                continue;
            hard[nh++] = mk_implies(x, lits[r], mk_eq(x, x->vars[j], num(x, PT(x, p1)[j])));
            if (r == j) {
                asv[na] = j;
                as[na++] = lits[j];
            }
        }
        if ((rc = query(x, hard, nh, as, na, &res, out, &core, &ncore)))
            goto cleanup;
        if (res != SG_Q_UNSAT || ncore == 0) {
            sg_free(core);
            break; /* a point (or -1: unknown, not kept, or nothing better at all) */
        }
        loose[asv[core[0]]] = true;
        sg_free(core);
    }
cleanup:
    sg_free(lits);
    sg_free(hard);
    sg_free(as);
    sg_free(asv);
    sg_free(loose);
    sg_q_release(x->p, mark);
    return rc;
}

/* The finite traced bound of symbol k on side `dir`, when a RANGE constraint states it. */
static bool traced_bound(const ictx *x, size_t k, int dir, sg_int *v)
{
    const sg_symbol_info *si = &x->p->syms[k];
    size_t i;
    sg_bound b = dir < 0 ? si->lo : si->hi;
    if (b.inf)
        return false;
    for (i = 0; i < x->p->ncons; i++)
        if (x->p->cons[i].kind == SG_CORE_RANGE && x->p->cons[i].index == k) {
            *v = b.v;
            return true;
        }
    return false;
}

/* The steps of extreme(). */
enum { STEP_HINT, STEP_TIGHT, STEP_NEAR, STEP_BISECT, STEP_AWAY };

/*
 * The minimum (dir < 0) or maximum (dir > 0) of symbol k over the valid
 * points. Works on cost = dir < 0 ? s : -s, minimised: `lbc` is a proved lower
 * bound of the cost, `bestc` the least cost attained by a point. Queries
 * "cost <= target", in steps:
 *   HINT   the traced bound itself (often attained);
 *   TIGHT  one below the best seen (often unsat: the best is the optimum);
 *   NEAR   galloping up from the proved bound, first by the period of the
 *          guards' divisors (the optimum is often the last multiple inside
 *          the traced range), doubling on each unsat;
 *   BISECT halving [lbc, bestc) until they meet (exact);
 *   AWAY   with no proved bound: galloping down from the best by 1, 4, 16,
 *          ..., trying after each sat to prove a ray of valid points along
 *          which the cost decreases without end (exact, infinite); an unsat
 *          answer gives a bound and BISECT follows.
 * Stops inexact on unknown or past INF_GALLOP_LIMIT: the proved bound, or
 * infinity.
 */
static int extreme(ictx *x, size_t k, int dir, sg_bound *out, bool *exact)
{
    size_t sv = x->symvar[k], i, best = 0, mark = sg_q_mark(x->p);
    sg_int lbc = 0, bestc, away = 1, near = 0, hint = 0;
    bool lb_known = false;
    int step = STEP_TIGHT;
    unsigned rays = 0;
    int rc = 0;

    *exact = false;
    if (traced_bound(x, k, dir, &hint)) {
        lb_known = true;
        lbc = cost_of(dir, hint);
        step = STEP_HINT;
        near = x->period > 1 ? x->period : 2;
    }
    bestc = cost_of(dir, PT(x, 0)[sv]);
    for (i = 1; i < x->npts; i++)
        if (cost_of(dir, PT(x, i)[sv]) < bestc) {
            bestc = cost_of(dir, PT(x, i)[sv]);
            best = i;
        }
    while (!(lb_known && lbc >= bestc)) {
        sg_int target;
        sg_q_answer res;
        long pt = -1;
        if (!lb_known)
            step = STEP_AWAY;
        switch (step) {
        case STEP_HINT: target = lbc; break;
        case STEP_TIGHT: target = bestc - 1; break;
        case STEP_NEAR: target = lbc + near - 1 < bestc - 1 ? lbc + near - 1 : bestc - 1; break;
        case STEP_BISECT: target = lbc + (bestc - 1 - lbc) / 2; break;
        default:
            if (away > INF_GALLOP_LIMIT)
                goto finish;
            target = bestc - away;
            break;
        }
        rc = query_f(x, cost_le(x, x->vars[sv], dir, target), &res, &pt);
        sg_q_release(x->p, mark);
        if (rc)
            return rc;
        if (res == SG_Q_UNSAT) {
            lbc = target + 1;
            lb_known = true;
            if (step == STEP_HINT || step == STEP_TIGHT)
                step = near ? step + 1 : STEP_BISECT;
            else if (step == STEP_NEAR)
                near = near > INF_GALLOP_LIMIT ? 0 : near * 2, step = near ? STEP_NEAR : STEP_BISECT;
            else if (step == STEP_AWAY)
                step = STEP_BISECT;
            continue;
        }
        if (res != SG_Q_SAT || pt < 0)
            break;
        if (step == STEP_AWAY && rays < INF_RAY_TRIES) {
            /* from the new point on, in the direction it moved; the first and fourth
               time also along a point that keeps the other variables still */
            bool proved = false;
            long p3 = -1;
            rays++;
            if ((rc = ray_check(x, (size_t)pt, best, (size_t)pt, &proved)))
                return rc;
            if (!proved && (rays == 1 || rays == 4) && (rc = sticky_point(x, sv, dir, (size_t)pt, &p3)))
                return rc;
            if (!proved && p3 >= 0 && (rc = ray_check(x, (size_t)p3, (size_t)pt, (size_t)p3, &proved)))
                return rc;
            if (proved) {
                out->inf = dir;
                out->v = 0;
                *exact = true;
                return 0;
            }
        }
        if (step == STEP_AWAY)
            away *= 4;
        else if (step == STEP_HINT)
            step = STEP_TIGHT;
        else if (step == STEP_TIGHT)
            step = near ? STEP_NEAR : STEP_BISECT;
        else
            step = STEP_BISECT;
        bestc = cost_of(dir, PT(x, pt)[sv]);
        best = (size_t)pt;
    }
finish:
    if (lb_known && lbc >= bestc) {
        out->inf = 0;
        out->v = cost_of(dir, bestc);
        *exact = true;
    } else if (lb_known) {
        out->inf = 0;
        out->v = cost_of(dir, lbc);
    } else {
        out->inf = dir;
        out->v = 0;
    }
    return 0;
}

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
static int congruence(ictx *x, size_t k, sg_inferred *o)
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
        rc = query_f(x, mk_not(x, mk_eq(x, mk_mod(x, x->vars[sv], num(x, g)), num(x, r))), &res, &pt);
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

typedef struct cand {
    size_t k;
    sg_int v;
} cand;

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
static int collect_candidates(ictx *x, cand **out, size_t *nout)
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

/* The root of i in union-find array uf (with path halving). */
static size_t uf_find(size_t *uf, size_t i)
{
    while (uf[i] != i) {
        uf[i] = uf[uf[i]];
        i = uf[i];
    }
    return i;
}

/* Is `a` an equation between two Int constants? */
static bool is_var_eq(ictx *x, const sg_term *a)
{
    return sg_q_op_of(x->p, a) == SG_QOP_EQ && sg_q_nargs(x->p, a) == 2 && sg_q_is_int_const(x->p, sg_q_arg(x->p, a, 0)) &&
           sg_q_is_int_const(x->p, sg_q_arg(x->p, a, 1));
}

/*
 * Split F into conjuncts, its variables into connected components and alias
 * classes (once, from setup: the conjuncts, parts of F, live for the whole run).
 */
static int prepare_components(ictx *x)
{
    const sg_term **stack = NULL;
    size_t n = 0, cap = 0, i, j;
    walk_out wo;
    int rc = 0;

    if (x->comp_ready)
        return 0;
    memset(&wo, 0, sizeof wo);
    x->uf = sg__calloc(x->nvars + 1, sizeof *x->uf);
    x->comps = sg__calloc(x->nvars + 1, sizeof *x->comps);
    x->alias = sg__calloc(x->nvars + 1, sizeof *x->alias);
    x->arep = sg__calloc(x->nvars + 1, sizeof *x->arep);
    if (!x->uf || !x->comps || !x->alias || !x->arep || sg__grow((void **)&stack, &cap, 1, sizeof *stack)) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = 0; i < x->nvars; i++)
        x->uf[i] = x->arep[i] = i;
    stack[n++] = x->F;
    while (n > 0) {
        const sg_term *a = stack[--n];
        if (sg_q_op_of(x->p, a) == SG_QOP_AND) {
            size_t na = sg_q_nargs(x->p, a), k;
            if (sg__grow((void **)&stack, &cap, n + na, sizeof *stack)) {
                rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
                goto cleanup;
            }
            for (k = na; k > 0; k--)
                stack[n++] = sg_q_arg(x->p, a, k - 1);
            continue;
        }
        if (sg__grow((void **)&x->conj, &x->cconj, x->nconj + 1, sizeof *x->conj)) {
            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        x->conj[x->nconj++] = a;
    }
    x->conj_comp = sg__calloc(x->nconj + 1, sizeof *x->conj_comp);
    if (!x->conj_comp) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    for (i = 0; i < x->nconj; i++) {
        wo.n = 0;
        if ((rc = walk(x, x->conj[i], false, &wo, false)))
            goto cleanup;
        x->conj_comp[i] = SIZE_MAX;
        for (j = 1; j < wo.n; j++) {
            size_t a = uf_find(x->uf, wo.idx[0]), b = uf_find(x->uf, wo.idx[j]);
            if (a != b)
                x->uf[a < b ? b : a] = a < b ? a : b;
        }
        if (wo.n)
            x->conj_comp[i] = wo.idx[0];
        if (wo.n == 2 && is_var_eq(x, x->conj[i])) {
            size_t a = uf_find(x->arep, wo.idx[0]), b = uf_find(x->arep, wo.idx[1]);
            if (a != b)
                x->arep[a < b ? b : a] = a < b ? a : b;
        }
    }
    for (i = 0; i < x->nconj; i++)
        if (x->conj_comp[i] != SIZE_MAX)
            x->conj_comp[i] = uf_find(x->uf, x->conj_comp[i]);
    /* the formula of every component: its conjuncts, bucketed by root */
    {
        size_t *start = sg__calloc(x->nvars + 2, sizeof *start), *fill = NULL;
        const sg_term **sorted = sg__calloc(x->nconj + 1, sizeof *sorted);
        fill = sg__calloc(x->nvars + 1, sizeof *fill);
        if (!start || !sorted || !fill) {
            sg_free(start);
            sg_free(sorted);
            sg_free(fill);
            rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
            goto cleanup;
        }
        for (i = 0; i < x->nconj; i++)
            if (x->conj_comp[i] != SIZE_MAX)
                start[x->conj_comp[i] + 1]++;
        for (i = 0; i < x->nvars; i++)
            start[i + 1] += start[i];
        for (i = 0; i < x->nconj; i++)
            if (x->conj_comp[i] != SIZE_MAX) {
                size_t r = x->conj_comp[i];
                sorted[start[r] + fill[r]++] = x->conj[i];
            }
        for (i = 0; i < x->nvars && !x->failed; i++)
            if (uf_find(x->uf, i) == i)
                x->comps[i].F = mk_and(x, sorted + start[i], start[i + 1] - start[i]);
        sg_free(start);
        sg_free(sorted);
        sg_free(fill);
        if (x->failed) {
            rc = failure(x);
            goto cleanup;
        }
    }
    x->comp_ready = true;
cleanup:
    sg_free(stack);
    sg_free(wo.idx);
    return rc;
}

/* The variables of term t, as a list (in wo). */
static int vars_of(ictx *x, const sg_term *t, walk_out *wo)
{
    wo->n = 0;
    return walk(x, t, false, wo, false);
}

/*
 * Reduce the component of variable sv to a formula over one variable w, by
 * eliminating variables through equations y = T (y not in T): first every
 * var = var equation at once (aliases; the representative of a class is its
 * lowest variable index, and symbols come first), then one equation at a time.
 * On success comps[root] holds w and G (kept until the end of sg_infer), and
 * x->alias[v] is 1 for every variable of the component in w's alias class
 * (for those, "v = c is valid" is exactly G(c)), 2 for the others.
 * Must not run inside a release() scope: G outlives it.
 */
static int analyse_component(ictx *x, size_t sv)
{
    size_t root = uf_find(x->uf, sv), i, j, nvc = 0, nc = 0, round, w = SIZE_MAX;
    component *cp = &x->comps[root];
    size_t *cvars = NULL, *rep = NULL;
    const sg_term **cj = NULL, **from = NULL, **to = NULL;
    walk_out wo;
    int rc = 0;

    if (cp->state)
        return 0;
    cp->state = 2;
    memset(&wo, 0, sizeof wo);
    for (i = 0; i < x->nvars; i++)
        if (uf_find(x->uf, i) == root) {
            nvc++;
            x->alias[i] = 2;
        }
    for (i = 0; i < x->nconj; i++)
        nc += x->conj_comp[i] == root;
    if (nc > INF_UNI_MAX_CONJ)
        return 0;
    cvars = sg__calloc(nvc + 1, sizeof *cvars);
    rep = sg__calloc(x->nvars + 1, sizeof *rep);
    cj = sg__calloc(nc + 1, sizeof *cj);
    from = sg__calloc(nvc + 1, sizeof *from);
    to = sg__calloc(nvc + 1, sizeof *to);
    if (!cvars || !rep || !cj || !from || !to) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    nvc = nc = 0;
    for (i = 0; i < x->nvars; i++) {
        rep[i] = i;
        if (uf_find(x->uf, i) == root)
            cvars[nvc++] = i;
    }
    for (i = 0; i < x->nconj; i++)
        if (x->conj_comp[i] == root)
            cj[nc++] = x->conj[i];
    /* aliases: var = var */
    for (i = 0; i < nc; i++) {
        const sg_term *a, *b;
        size_t ia, ib;
        if (sg_q_op_of(x->p, cj[i]) != SG_QOP_EQ || sg_q_nargs(x->p, cj[i]) != 2)
            continue;
        a = sg_q_arg(x->p, cj[i], 0);
        b = sg_q_arg(x->p, cj[i], 1);
        if (!sg_q_is_int_const(x->p, a) || !sg_q_is_int_const(x->p, b) ||
            !idmap_get(&x->varmap, sg_q_id(x->p, a), &ia) || !idmap_get(&x->varmap, sg_q_id(x->p, b), &ib))
            continue;
        ia = uf_find(rep, ia);
        ib = uf_find(rep, ib);
        if (ia != ib)
            rep[ia < ib ? ib : ia] = ia < ib ? ia : ib;
    }
    {
        size_t nf = 0, nr = 0;
        for (i = 0; i < nvc; i++) {
            size_t r = uf_find(rep, cvars[i]);
            nr += r == cvars[i];
            if (r != cvars[i]) {
                from[nf] = x->vars[cvars[i]];
                to[nf++] = x->vars[r];
            }
        }
        if (nr > INF_UNI_MAX_VARS)
            goto cleanup;
        if (nf)
            for (i = 0; i < nc; i++)
                cj[i] = substitute(x, cj[i], from, to, nf);
        if (x->failed) {
            rc = failure(x);
            goto cleanup;
        }
    }
    /* general elimination, one equation y = T at a time, never of the lowest variable left */
    for (round = 0; round <= INF_UNI_MAX_VARS; round++) {
        size_t keepv = SIZE_MAX, elim = SIZE_MAX, y = 0;
        bool others = false;
        const sg_term *T = NULL;
        for (i = 0; i < nc; i++) {
            if ((rc = vars_of(x, cj[i], &wo)))
                goto cleanup;
            for (j = 0; j < wo.n; j++)
                if (wo.idx[j] < keepv)
                    keepv = wo.idx[j];
        }
        for (i = 0; i < nc && elim == SIZE_MAX; i++) {
            unsigned side;
            if (sg_q_op_of(x->p, cj[i]) != SG_QOP_EQ || sg_q_nargs(x->p, cj[i]) != 2)
                continue;
            for (side = 0; side < 2 && elim == SIZE_MAX; side++) {
                const sg_term *a = sg_q_arg(x->p, cj[i], side), *other = sg_q_arg(x->p, cj[i], 1 - side);
                size_t ya;
                bool inside = false;
                if (!sg_q_is_int_const(x->p, a) || !idmap_get(&x->varmap, sg_q_id(x->p, a), &ya) || ya == keepv)
                    continue;
                if ((rc = vars_of(x, other, &wo)))
                    goto cleanup;
                for (j = 0; j < wo.n; j++)
                    inside |= wo.idx[j] == ya;
                if (!inside) {
                    elim = i;
                    y = ya;
                    T = other;
                }
            }
        }
        if (elim != SIZE_MAX) {
            cj[elim] = cj[--nc];
            for (i = 0; i < nc; i++)
                cj[i] = substitute(x, cj[i], &x->vars[y], &T, 1);
            if (x->failed) {
                rc = failure(x);
                goto cleanup;
            }
            continue;
        }
        /* no equation left: univariate when only keepv remains */
        for (i = 0; i < nc && !others; i++) {
            if ((rc = vars_of(x, cj[i], &wo)))
                goto cleanup;
            for (j = 0; j < wo.n; j++)
                others |= wo.idx[j] != keepv;
        }
        if (!others && keepv != SIZE_MAX)
            w = keepv;
        break;
    }
    if (w != SIZE_MAX) {
        cp->G = mk_and(x, cj, nc);
        if (!cp->G) {
            rc = failure(x);
            goto cleanup;
        }
        cp->state = 1;
        cp->w = w;
        for (i = 0; i < nvc; i++)
            x->alias[cvars[i]] = uf_find(rep, cvars[i]) == w ? 1 : 2;
    }
cleanup:
    sg_free(cvars);
    sg_free(rep);
    sg_free(cj);
    sg_free(from);
    sg_free(to);
    sg_free(wo.idx);
    return rc;
}

/*
 * The formula G over variable *w such that "symbol variable sv = c is valid"
 * iff G(c), or *G = NULL when the component of sv does not reduce to one.
 * Must not run inside a release() scope (see analyse_component).
 */
static int univariate_of(ictx *x, size_t sv, const sg_term **G, size_t *w)
{
    size_t root;
    int rc;
    *G = NULL;
    if (x->exotic)
        return 0;
    if ((rc = prepare_components(x)))
        return rc;
    root = uf_find(x->uf, sv);
    if ((rc = analyse_component(x, sv)))
        return rc;
    if (x->comps[root].state != 1 || x->alias[sv] != 1)
        return 0;
    *G = x->comps[root].G;
    *w = x->comps[root].w;
    return 0;
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
        rc = query_f(x, mk_eq(x, x->vars[sv], num(x, v)), &res, &pt);
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
            note_unknown(x, r.reason);
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
static int holes(ictx *x, size_t k, const cand *cands, size_t ncands, sg_inferred *o)
{
    size_t sv = x->symvar[k], cap = 0, i, w = 0, mark;
    sg_int span, count = -1;
    const sg_term *G = NULL;
    int rc = 0;

    o->holes_complete = false;
    if (!o->lo.inf && !o->hi.inf && sg__sub(o->hi.v, o->lo.v, &span))
        count = span / o->modulus + 1;
    if ((rc = univariate_of(x, sv, &G, &w))) /* outside any release() scope: G is cached */
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
        rc = query_f(x, mk_eq(x, x->vars[sv], num(x, cands[i].v)), &res, &pt);
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

/* ---- Relations ----------------------------------------------------------------------------- */

/* Divide vector v (w entries) by the gcd of its entries. */
static void normalize(sg_int *v, size_t w)
{
    sg_int g = 0;
    size_t i;
    for (i = 0; i < w; i++)
        if (v[i] != SG_INT_MIN)
            g = sg__gcd(g, v[i]);
    if (g > 1)
        for (i = 0; i < w; i++)
            v[i] /= g;
}

/* dst = a*dst - b*src, false on overflow. */
static bool combine(sg_int *dst, sg_int a, const sg_int *src, sg_int b, size_t w)
{
    size_t i;
    for (i = 0; i < w; i++) {
        sg_int t1, t2;
        if (!sg__mul(a, dst[i], &t1) || !sg__mul(b, src[i], &t2) || !sg__sub(t1, t2, &dst[i]))
            return false;
    }
    normalize(dst, w);
    return true;
}

/*
 * Restrict the basis B (nb vectors of w entries: relation coefficients, the
 * last one the constant) to the relations that hold at point `pt` (w
 * entries, the last one 1). False on overflow.
 */
static bool basis_restrict(sg_int *B, size_t *nb, size_t w, const sg_int *pt)
{
    sg_int *d = sg__calloc(*nb + 1, sizeof *d);
    size_t i, j, piv = SIZE_MAX;
    bool ok = d != NULL;
    for (i = 0; ok && i < *nb; i++) {
        sg_int acc = 0, t;
        for (j = 0; ok && j < w; j++)
            ok = sg__mul(B[i * w + j], pt[j], &t) && sg__add(acc, t, &acc);
        d[i] = acc;
        if (ok && acc != 0 && acc != SG_INT_MIN &&
            (piv == SIZE_MAX || (acc < 0 ? -acc : acc) < (d[piv] < 0 ? -d[piv] : d[piv])))
            piv = i;
    }
    if (ok && piv != SIZE_MAX) {
        for (i = 0; ok && i < *nb; i++)
            if (i != piv && d[i] != 0)
                ok = combine(&B[i * w], d[piv], &B[piv * w], d[i], w);
        if (ok) {
            memmove(&B[piv * w], &B[(*nb - 1) * w], w * sizeof *B);
            (*nb)--;
        }
    }
    sg_free(d);
    return ok;
}

/*
 * Gauss-Jordan on the rows of R (nr x w) with pivots taken from the last
 * symbol column down to the first (the constant column w-1 never pivots).
 * pivot[i] gets the pivot column of row i, SIZE_MAX for a zero row. False
 * on overflow.
 */
static bool echelon(sg_int *R, size_t nr, size_t w, size_t *pivot)
{
    size_t r = 0, i, col;
    for (i = 0; i < nr; i++)
        pivot[i] = SIZE_MAX;
    for (col = w - 1; col-- > 0 && r < nr;) {
        size_t best = SIZE_MAX;
        for (i = r; i < nr; i++)
            if (R[i * w + col] != 0 &&
                (best == SIZE_MAX || (R[i * w + col] < 0 ? -R[i * w + col] : R[i * w + col]) <
                                         (R[best * w + col] < 0 ? -R[best * w + col] : R[best * w + col])))
                best = i;
        if (best == SIZE_MAX)
            continue;
        if (best != r)
            for (i = 0; i < w; i++) {
                sg_int t = R[r * w + i];
                R[r * w + i] = R[best * w + i];
                R[best * w + i] = t;
            }
        for (i = 0; i < nr; i++)
            if (i != r && R[i * w + col] != 0 && !combine(&R[i * w], R[r * w + col], &R[r * w], R[i * w + col], w))
                return false;
        if (R[r * w + col] < 0)
            for (i = 0; i < w; i++)
                R[r * w + i] = -R[r * w + i];
        pivot[r++] = col;
    }
    return true;
}

/* Are the w-entry vectors a and b equal? */
static bool same_vec(const sg_int *a, const sg_int *b, size_t w)
{
    return memcmp(a, b, w * sizeof *a) == 0;
}

/* Σ c_i * sym_i + c_const as a term over the relation columns. */
static const sg_term *lin_term(ictx *x, const sg_int *row, const size_t *colk, size_t ncol)
{
    const sg_term *acc = num(x, row[ncol]);
    size_t i;
    for (i = 0; i < ncol; i++)
        if (row[i] != 0)
            acc = mk_add(x, acc, mk_mul(x, num(x, row[i]), x->vars[x->symvar[colk[i]]]));
    return acc;
}

/* sym_p = (-(Σ_{i != p} c_i s_i) - c_const) / c_p as an expression in the pool. */
const sg_expr *sg__infer_relation_expr(sg_problem *prob, const sg_int *row, const size_t *colk, size_t ncol, size_t p)
{
    sg_pool *pool = prob->pool;
    const sg_expr **terms = sg__calloc(ncol + 2, sizeof *terms), *num_e, *res = NULL;
    sg_int cp = row[p];
    bool divisible = true;
    size_t i, n = 0;
    if (!terms)
        return NULL;
    for (i = 0; i <= ncol; i++)
        if (i != p && row[i] % cp != 0)
            divisible = false;
    for (i = 0; i < ncol; i++)
        if (i != p && row[i] != 0)
            terms[n++] = sg_expr_2(pool, SG_MUL, sg_expr_int(pool, divisible ? -row[i] / cp : -row[i]),
                                   prob->syms[colk[i]].sym);
    if (row[ncol] != 0)
        terms[n++] = sg_expr_int(pool, divisible ? -row[ncol] / cp : -row[ncol]);
    num_e = n == 1 ? terms[0] : sg_expr_apply(pool, SG_ADD, terms, n);
    res = divisible ? num_e : sg_expr_2(pool, SG_FLOORDIV, num_e, sg_expr_int(pool, cp));
    sg_free(terms);
    return res;
}

/* Order of symbol indices by input dim (key), then by index. */
static int cmp_col(const void *a, const void *b, const long *key)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (key[i] != key[j])
        return key[i] < key[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/*
 * Affine relations among the non-constant symbols linked to input dims: the
 * relations every point satisfies are fitted exactly (integer nullspace),
 * put in echelon form with the latest symbol (input order) as pivot, and each
 * is reported only after "F and not relation" is unsat; a model of a failed
 * proof is a new point that refines the fit.
 */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int sg__infer_rel_columns(const sg_problem *p, const sg_inferred *out, size_t **colk_out, size_t *ncol_out,
                          sg_error *err)
{
    size_t *colk = sg__calloc(p->nsyms + 1, sizeof *colk), ncol = 0, i;
    *colk_out = NULL;
    *ncol_out = 0;
    if (!colk)
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    for (i = 0; i < p->nsyms; i++)
        if (p->sym_input[i] >= 0 && !out[i].is_constant)
            colk[ncol++] = i;
    /* input order, then index: a total order, so any sort gives the same list (insertion for a
     * short list, else qsort on the distinct (input, index) keys: 10,000 symbols) */
    {
        if (ncol <= 64) {
            size_t j;
            for (i = 1; i < ncol; i++)
                for (j = i; j > 0 && cmp_col(&colk[j - 1], &colk[j], p->sym_input) > 0; j--) {
                    size_t t = colk[j];
                    colk[j] = colk[j - 1];
                    colk[j - 1] = t;
                }
        } else {
            uint64_t *key = sg__calloc(ncol + 1, sizeof *key);
            if (!key) {
                sg_free(colk);
                return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            }
            for (i = 0; i < ncol; i++)
                key[i] = ((uint64_t)(uint32_t)p->sym_input[colk[i]] << 32) | (uint32_t)colk[i];
            qsort(key, ncol, sizeof *key, cmp_u64);
            for (i = 0; i < ncol; i++)
                colk[i] = (size_t)(uint32_t)key[i];
            sg_free(key);
        }
    }
    if (ncol > INF_REL_MAX_SYMS)
        ncol = INF_REL_MAX_SYMS;
    *colk_out = colk;
    *ncol_out = ncol;
    return 0;
}

static int relations(ictx *x, sg_inferred *out, const size_t *allk, size_t nall, const sg_infer_fast *fast)
{
    sg_problem *p = x->p;
    size_t *colk = NULL, ncol = 0, w, nb, i, j, round, *pivot = NULL, nproved = 0, done_pts = 0;
    sg_int *B = NULL, *R = NULL, *aug = NULL, *proved = NULL;
    int rc = 0;
    bool overflow = false;

    /* the columns the presolve did not decide: the decided ones are independent of them */
    colk = sg__calloc(nall + 1, sizeof *colk);
    if (!colk)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    for (i = 0; i < nall; i++)
        if (!fast->done[allk[i]])
            colk[ncol++] = allk[i];
    if (ncol < 2)
        goto cleanup;
    w = ncol + 1;
    B = sg__calloc(w * w, sizeof *B);
    R = sg__calloc(w * w, sizeof *R);
    aug = sg__calloc(w, sizeof *aug);
    pivot = sg__calloc(w, sizeof *pivot);
    proved = sg__calloc(w * w, sizeof *proved);
    if (!B || !R || !aug || !pivot || !proved) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    nb = w;
    for (i = 0; i < w; i++)
        B[i * w + i] = 1;
    for (round = 0; round < INF_REL_ROUNDS && !overflow; round++) {
        bool failed_one = false;
        size_t nr;
        for (; done_pts < x->npts && nb > 0 && !overflow; done_pts++) {
            for (j = 0; j < ncol; j++)
                aug[j] = PT(x, done_pts)[x->symvar[colk[j]]];
            aug[ncol] = 1;
            overflow = !basis_restrict(B, &nb, w, aug);
        }
        if (overflow || nb == 0)
            break;
        nr = nb;
        memcpy(R, B, nb * w * sizeof *R);
        if (!echelon(R, nr, w, pivot)) {
            overflow = true;
            break;
        }
        for (i = 0; i < nr && !x->dead; i++) {
            size_t nfree = 0, mark = sg_q_mark(x->p);
            bool known = false;
            sg_q_answer res;
            long pt = -1;
            if (pivot[i] == SIZE_MAX)
                continue;
            for (j = 0; j < ncol; j++)
                nfree += j != pivot[i] && R[i * w + j] != 0;
            if (nfree == 0)
                continue; /* a constant: reported as such, not as a relation */
            for (j = 0; j < nproved && !known; j++)
                known = same_vec(&proved[j * w], &R[i * w], w);
            if (known)
                continue;
            rc = query_f(x, mk_not(x, mk_eq(x, lin_term(x, &R[i * w], colk, ncol), num(x, 0))), &res, &pt);
            sg_q_release(x->p, mark);
            if (rc)
                goto cleanup;
            if (res == SG_Q_UNSAT && nproved < w) {
                memcpy(&proved[nproved++ * w], &R[i * w], w * sizeof *R);
            } else if (res == SG_Q_SAT && pt >= 0) {
                failed_one = true; /* the point joins the fit next round */
            }
        }
        if (!failed_one)
            break;
    }
    /* report: each proved row on its pivot symbol */
    for (j = 0; j < nproved; j++) {
        const sg_int *row = &proved[j * w];
        size_t pc = SIZE_MAX, c;
        for (c = ncol; c-- > 0;)
            if (row[c] != 0) {
                pc = c;
                break;
            }
        if (pc == SIZE_MAX || out[colk[pc]].equals)
            continue;
        out[colk[pc]].equals = sg__infer_relation_expr(p, row, colk, ncol, pc);
        if (!out[colk[pc]].equals) {
            const sg_error *pe = sg_pool_error(p->pool);
            rc = sg_error_set(x->err, pe ? pe->code : SG_ENOMEM, "building a relation: %s",
                              pe ? pe->msg : "out of memory");
            goto cleanup;
        }
    }
cleanup:
    sg_free(colk);
    sg_free(B);
    sg_free(R);
    sg_free(aug);
    sg_free(pivot);
    sg_free(proved);
    return rc;
}

/* ---- Driver -------------------------------------------------------------------------------- */

/*
 * Build F (definitions and every constraint), list its variables (symbols
 * first), fold the period of its literal divisors, and split it into
 * components. Everything kept here lives until the end of sg_infer.
 */
static int setup(ictx *x)
{
    sg_problem *p = x->p;
    size_t i;
    const sg_term **parts = NULL;
    int rc = 0;

    x->period = 1;
    x->enum_budget = INF_ENUM_BUDGET;
    parts = sg__calloc(p->ncons + 2, sizeof *parts);
    x->symvar = sg__calloc(p->nsyms + 1, sizeof *x->symvar);
    if (!parts || !x->symvar) {
        sg_free(parts);
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    }
    parts[0] = sg_q_defs(p);
    for (i = 0; i < p->ncons; i++)
        parts[i + 1] = sg_q_holds(p, i);
    x->F = mk_and(x, parts, p->ncons + 1);
    sg_free(parts);
    if (!x->F)
        return failure(x);
    /* symbols first (so that they represent their aliases), then the rest of F */
    for (i = 0; i < p->nsyms; i++) {
        const sg_term *s = sg_q_symbol(p, p->syms[i].sym);
        if (!s)
            return sg_error_set(x->err, SG_ERROR, "inference: symbol %zu has no solver constant", i);
        if ((rc = add_var(x, s, &x->symvar[i])))
            return rc;
    }
    if ((rc = walk(x, x->F, true, NULL, true)))
        return rc;
    x->maxpts = INF_MAX_VALUES / (x->nvars ? x->nvars : 1);
    if (x->maxpts < 64)
        x->maxpts = 64;
    return prepare_components(x);
}

/* What is known without a model: the traced ranges, nothing proved. */
static void fallback(const ictx *x, sg_inferred *out)
{
    size_t k;
    for (k = 0; k < x->p->nsyms; k++) {
        sg_int v;
        out[k].lo.inf = -1;
        out[k].hi.inf = 1;
        if (traced_bound(x, k, -1, &v)) {
            out[k].lo.inf = 0;
            out[k].lo.v = v;
        }
        if (traced_bound(x, k, 1, &v)) {
            out[k].hi.inf = 0;
            out[k].hi.v = v;
        }
    }
}

int sg_infer(sg_problem *p, const sg_budget *b, sg_check_stats *stats, sg_inferred **out, size_t *n,
             sg_error *err)
{
    ictx x;
    sg_inferred *res = NULL, *fres = NULL;
    sg_infer_fast fast;
    cand *cands = NULL;
    size_t ncands = 0, k, *colk = NULL, ncol = 0;
    sg_q_answer r0;
    long pt0 = -1;
    int rc = 0;

    *out = NULL;
    *n = 0;
    memset(&x, 0, sizeof x);
    memset(&fast, 0, sizeof fast);
    x.p = p;
    x.scope = SIZE_MAX;
    x.mark0 = sg_q_mark(p);
    x.b = b;
    x.stats = stats;
    x.err = err;
    res = sg__calloc(p->nsyms + 1, sizeof *res);
    if (!res)
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    for (k = 0; k < p->nsyms; k++) {
        res[k].sym = p->syms[k].sym;
        res[k].input = p->sym_input[k] >= 0 ? (size_t)p->sym_input[k] : SIZE_MAX;
        res[k].modulus = 1;
    }
    /* what the presolve decides exactly (no Z3), into a copy until F is known satisfiable */
    fres = sg__calloc(p->nsyms + 1, sizeof *fres);
    if (!fres) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    memcpy(fres, res, p->nsyms * sizeof *res);
    if ((rc = sg__infer_fast(p, fres, &fast, err)))
        goto cleanup;
    if (fast.all) { /* every component exact and consistent: F is satisfiable, no query */
        memcpy(res, fres, p->nsyms * sizeof *res);
        for (k = 0; k < p->nsyms; k++)
            fres[k].holes = NULL; /* res owns them now */
        goto relations;
    }
    if ((rc = setup(&x)))
        goto cleanup;
    fallback(&x, res);
    if ((rc = query_f(&x, NULL, &r0, &pt0)))
        goto cleanup;
    if (r0 != SG_Q_SAT || pt0 != 0)
        goto done; /* inconsistent, unknown, or unrepresentable: the traced ranges, nothing proved */
    for (k = 0; k < p->nsyms; k++)
        if (fast.done[k]) {
            res[k] = fres[k];
            fres[k].holes = NULL; /* res owns them now */
        }
    for (k = 0; k < p->nsyms; k++) {
        bool ex_lo = false, ex_hi = false;
        if (fast.done[k])
            continue;
        x.scope = uf_find(x.uf, x.symvar[k]);
        if ((rc = extreme(&x, k, -1, &res[k].lo, &ex_lo)) || (rc = extreme(&x, k, 1, &res[k].hi, &ex_hi)))
            goto cleanup;
        res[k].range_exact = ex_lo && ex_hi;
        if (res[k].range_exact && !res[k].lo.inf && !res[k].hi.inf && res[k].lo.v == res[k].hi.v) {
            res[k].is_constant = true;
            res[k].constant = res[k].lo.v;
        }
    }
    for (k = 0; k < p->nsyms; k++) {
        if (fast.done[k])
            continue;
        x.scope = uf_find(x.uf, x.symvar[k]);
        if (!res[k].is_constant && (rc = congruence(&x, k, &res[k])))
            goto cleanup;
    }
    if ((rc = collect_candidates(&x, &cands, &ncands)))
        goto cleanup;
    for (k = 0; k < p->nsyms; k++) {
        if (fast.done[k])
            continue;
        if (res[k].is_constant) {
            res[k].holes_complete = true;
            continue;
        }
        x.scope = uf_find(x.uf, x.symvar[k]);
        if ((rc = holes(&x, k, cands, ncands, &res[k])))
            goto cleanup;
    }
    x.scope = SIZE_MAX;
relations:
    if ((rc = sg__infer_rel_columns(p, res, &colk, &ncol, err)))
        goto cleanup;
    if ((rc = sg__infer_fast_relations(p, &fast, colk, ncol, res, err)))
        goto cleanup;
    if (!fast.all && (rc = relations(&x, res, colk, ncol, &fast)))
        goto cleanup;
done:
    *out = res;
    *n = p->nsyms;
    res = NULL;
cleanup:
    sg_q_release(p, x.mark0);
    sg_free(x.vars);
    idmap_free(&x.varmap);
    idmap_free(&x.seen);
    sg_free(x.symvar);
    sg_free(x.pts);
    sg_free(x.uf);
    sg_free(x.conj);
    sg_free(x.conj_comp);
    sg_free(x.comps);
    sg_free(x.alias);
    sg_free(x.arep);
    sg_free(cands);
    sg_free(colk);
    if (fres)
        for (k = 0; k < p->nsyms; k++)
            sg_free(fres[k].holes);
    sg_free(fres);
    sg__infer_fast_free(&fast);
    sg_inferred_free_array(res, p->nsyms);
    return rc;
}

void sg_inferred_free_array(sg_inferred *a, size_t n)
{
    size_t i;
    if (!a)
        return;
    for (i = 0; i < n; i++)
        sg_free(a[i].holes);
    sg_free(a);
}
