/*
 * infer_ctx.h - the inference context that the parts of the Z3 search share
 * (analysis/infer*.c, docs/infer.md): the constraint set F and its
 * variables, the points models left, the connected components, and the term
 * builders and questions over solver/query.h. Internal to analysis/infer*.c.
 *
 *   infer.c         the driver: F, its variables and components, the steps in order
 *   infer_query.c   term ids, variables and walks over F, questions and the points they leave
 *   infer_comp.c    connected components of F and their univariate reduction
 *   infer_range.c   ranges: extremes by model-guided bisection, rays for unbounded sides
 *   infer_values.c  the values inside a range: congruences and holes
 *   infer_rel.c     affine relations fitted on the points, each proved by one unsat query
 *
 * Every function here takes the context of one sg_infer call (one thread).
 * Errors: SG_ENOMEM, or SG_ERROR when Z3 failed; a failed builder sets
 * x->failed and every later question returns that error (never a weaker
 * question).
 */
#ifndef SG_ANALYSIS_INFER_CTX_H
#define SG_ANALYSIS_INFER_CTX_H

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

/* ---- A hash map from term ids to indices, with O(1) clearing (infer_query.c) -------------- */

typedef struct idmap {
    unsigned *key;  /* term id (sg_q_id) */
    unsigned *gen;  /* the generation that wrote the slot; other generations are empty */
    size_t *val;
    size_t cap, n;  /* cap: a power of two, or 0 */
    unsigned cur;   /* current generation, >= 1 */
} idmap;

/* Release the map's arrays; it is empty (and reusable) afterwards. */
void sg_infer__idmap_free(idmap *m);
/* Forget every entry. */
void sg_infer__idmap_clear(idmap *m);
/* True and *val when `key` is present. */
bool sg_infer__idmap_get(const idmap *m, unsigned key, size_t *val);
/* Insert or overwrite. Returns 0 or SG_ENOMEM. */
int sg_infer__idmap_put(idmap *m, unsigned key, size_t val);

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
    const bool *ranged;       /* [nsyms] the symbol has a traced-range constraint (sg_infer__traced_bound) */
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

/* A candidate hole: value v of symbol k, named by an Eq / Ne guard. */
typedef struct cand {
    size_t k;
    sg_int v;
} cand;

typedef struct walk_out {
    size_t *idx;   /* variable indices found */
    size_t n, cap;
} walk_out;

#define PT(x, i) ((x)->pts + (size_t)(i) * (x)->nvars)

/* The root of i in union-find array uf (with path halving). */
static inline size_t uf_find(size_t *uf, size_t i)
{
    while (uf[i] != i) {
        uf[i] = uf[uf[i]];
        i = uf[i];
    }
    return i;
}

/*
 * The formula queries are about: F, or when a scope is set, the conjuncts of
 * one connected component. F is satisfiable (the base point), so a value of a
 * variable is valid for F iff it is valid for its component: the other
 * components keep their values of the base point (record_point fills them in).
 */
static inline const sg_term *scoped_f(const ictx *x)
{
    return x->scope == SIZE_MAX || x->exotic ? x->F : x->comps[x->scope].F;
}

/* Is variable v part of the formula queries are currently about? */
static inline bool in_scope(ictx *x, size_t v)
{
    return x->scope == SIZE_MAX || x->exotic || uf_find(x->uf, v) == x->scope;
}

/* The result `t` of a builder (solver/query.h): NULL, and failed set, when it failed. */
static inline const sg_term *ok(ictx *x, const sg_term *t)
{
    if (x->failed)
        return NULL;
    if (!t) {
        x->failed = sg_q_failed(x->p) == SG_ENOMEM ? SG_ENOMEM : SG_ERROR;
        sg_error_set(x->err, x->failed, "%s while inferring: %s", x->failed == SG_ENOMEM ? "out of memory" : "Z3 error",
                     sg_q_failed(x->p) ? sg_q_error_msg(x->p) : "no term");
    }
    return t;
}

/* The error to return once `failed` is set. */
static inline int failure(ictx *x)
{
    if (x->err && x->err->code == 0)
        sg_error_set(x->err, x->failed ? x->failed : SG_ERROR, "inference failed");
    return x->failed ? x->failed : SG_ERROR;
}

/* ---- Term builders: NULL in -> NULL out, failed set when one fails ------------------------- */

static inline const sg_term *num(ictx *x, sg_int v) { return x->failed ? NULL : ok(x, sg_q_num(x->p, v)); }

#define INF_BINARY(name, q)                                                                        \
    static inline const sg_term *name(ictx *x, const sg_term *a, const sg_term *b)                        \
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

static inline const sg_term *mk_not(ictx *x, const sg_term *a) { return a ? ok(x, sg_q_not(x->p, a)) : NULL; }

/* The conjunction of v[0..n-1] (true when n is 0, v[0] itself when n is 1); NULL when any is NULL. */
static inline const sg_term *mk_and(ictx *x, const sg_term *const *v, size_t n)
{
    size_t i;
    if (n == 0)
        return ok(x, sg_q_true(x->p));
    for (i = 0; i < n; i++)
        if (!v[i])
            return NULL;
    return n == 1 ? v[0] : ok(x, sg_q_and(x->p, v, n));
}

static inline const sg_term *fresh_int(ictx *x, const char *prefix)
{
    return x->failed ? NULL : ok(x, sg_q_fresh_int(x->p, prefix));
}

static inline const sg_term *fresh_bool(ictx *x, const char *prefix)
{
    return x->failed ? NULL : ok(x, sg_q_fresh_bool(x->p, prefix));
}

static inline const sg_term *substitute(ictx *x, const sg_term *t, const sg_term *const *from, const sg_term *const *to,
                                 size_t n)
{
    return x->failed ? NULL : ok(x, sg_q_substitute(x->p, t, from, to, n));
}

/* ---- Variables, walks and questions (infer_query.c) ------------------------------------------ */

/* Add `a` (an Int constant) to the variables unless present; its index in *idx (may be NULL). */
int sg_infer__add_var(ictx *x, const sg_term *a, size_t *idx);
/*
 * Walk term `t` (depth-first, every shared node once). With `collect`, add the
 * Int constants met to the variables; with `out`, list the indices of the
 * known variables met; with `period`, fold literal divisors of div/mod/rem
 * into x->period. Returns 0 or SG_ENOMEM.
 */
int sg_infer__walk(ictx *x, const sg_term *t, bool collect, walk_out *out, bool period);
/* Count an unknown answer; after INF_MAX_UNKNOWN of them, or when the time budget is gone,
 * inference stops asking (x->dead). */
void sg_infer__note_unknown(ictx *x, const char *reason);
/*
 * One budgeted question over hard[0..nh-1] (callers add scoped_f() themselves)
 * under `as[0..na-1]`. On SAT with `pt`, the index of the model's point in
 * *pt (-1 when it could not be kept); on UNSAT with `core`, the core as in
 * sg_q_check (the caller frees it). Once x->dead, every question answers
 * UNKNOWN unasked.
 */
int sg_infer__query(ictx *x, const sg_term *const *hard, size_t nh, const sg_term *const *as, size_t na,
                    sg_q_answer *res, long *pt, size_t **core, size_t *ncore);
/* Query scoped_f() and `extra` (may be NULL for the formula alone). */
int sg_infer__query_f(ictx *x, const sg_term *extra, sg_q_answer *res, long *pt);

/* ---- Components (infer_comp.c) ---------------------------------------------------------------- */

/*
 * Split F into conjuncts, its variables into connected components and alias
 * classes (once: the conjuncts, parts of F, live for the whole run).
 */
int sg_infer__prepare_components(ictx *x);
/*
 * The formula G over variable *w such that "symbol variable sv = c is valid"
 * iff G(c), or *G = NULL when the component of sv does not reduce to one.
 * Must not run inside a sg_q_mark/sg_q_release scope: G is cached for the run.
 */
int sg_infer__univariate_of(ictx *x, size_t sv, const sg_term **G, size_t *w);

/* ---- The steps (infer_range.c, infer_values.c, infer_rel.c) ---------------------------------- */

/* The finite traced bound of symbol k on side `dir`, when a RANGE constraint states it. */
bool sg_infer__traced_bound(const ictx *x, size_t k, int dir, sg_int *v);
/* The minimum (dir < 0) or maximum (dir > 0) of symbol k over the valid points: exact
 * (*exact), or a proved bound, or infinity when none was proved. */
int sg_infer__extreme(ictx *x, size_t k, int dir, sg_bound *out, bool *exact);
/* The largest modulus (and residue) of symbol k proved; modulus 1 when none. */
int sg_infer__congruence(ictx *x, size_t k, sg_inferred *o);
/* Candidate holes: for every Eq / Ne node a*s + b (=|!=) c of a guard, the value of s it names. */
int sg_infer__collect_candidates(ictx *x, cand **out, size_t *nout);
/* The holes of symbol k within o's range and congruence class (o->holes_complete when all). */
int sg_infer__holes(ictx *x, size_t k, const cand *cands, size_t ncands, sg_inferred *o);
/* Affine relations among the relation columns allk[0..nall-1] the presolve did not decide,
 * each proved by an unsat question, into out[].equals. */
int sg_infer__relations(ictx *x, sg_inferred *out, const size_t *allk, size_t nall, const sg_infer_fast *fast);

#endif
