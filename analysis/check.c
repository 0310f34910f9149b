/*
 * check.c - deciding a trace against its dynamic_shapes spec (check.h).
 *
 * The spec S is valid when every shape it allows passes every checked
 * constraint. The decision runs in two phases that mirror torch's
 * attribution, each answered by Z3 (sound) and explained by minimal cores:
 *
 *   1. relations: a named dim whose traced value is a constant, or the size
 *      of an earlier dim (possibly affinely: 2*s0 + 1), while the spec keeps
 *      them independent, is charged with an EQUAL / RELATED / SPECIALIZED
 *      violation; the relation is then adopted, as torch's fix would.
 *   2. values: with the relations adopted, find a shape of S that fails a
 *      checked constraint (S and not G satisfiable). Its minimal core over
 *      (dim values, spec items, constraints) names the dims whose values
 *      matter; those are refuted and pinned to their example sizes, and the
 *      search repeats until no counterexample is left (the rest is proved)
 *      or Z3 cannot decide (the rest is unknown, with the reason).
 *
 * This file asks the queries, splits the problem into
 * components and runs phase 1, phase 1b (the bounds of Dim.AUTO /
 * Dim.DYNAMIC) and the entry points; phase 2 and its small components'
 * model enumeration are in check_values.c, the report's parts in check_report.c,
 * what they share in check_impl.h.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/check_impl.h"
#include "analysis/infer.h"
#include "expr/interval.h"
#include "report/report.h"
#include "solver/presolve.h"
#include "solver/problem.h"
#include "solver/query.h"
#include "trace/trace_impl.h"
#include "torch/message.h"
#include "torch/validate.h"
#include "util/util.h"

/* ---- Queries -------------------------------------------------------------------------- */

void sg_check__tv_push(tvec *v, const sg_term *t)
{
    if (v->failed || !t)
        return;
    if (sg__grow((void **)&v->a, &v->cap, v->n + 1, sizeof *v->a)) {
        v->failed = SG_ENOMEM;
        return;
    }
    v->a[v->n++] = t;
}

void sg_check__tv_free(tvec *v)
{
    sg_free(v->a);
    v->a = NULL;
    v->n = v->cap = 0;
}

const sg_term *sg_check__spec_item(checker *c, size_t i) { return c->fixed[i] ? c->fixed[i] : sg_q_spec(c->p, i); }

int sg_check__ask(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume, size_t nassume,
                  bool model, bool core, sg_q_result *r)
{
    sg_question q;
    if (c->orc && !model && sg_check__oracle_ask(c, assume, nassume, core, r))
        return 0;
    if (c->prb && !model && sg_check__probe_ask(c, assume, nassume, core, r))
        return 0;
    q.hard = hard;
    q.nhard = nhard;
    q.assume = assume;
    q.nassume = nassume;
    q.want_model = model;
    q.want_core = core;
    return sg_q_check(c->p, &q, &c->budget, &c->r->stats, r, c->err);
}

/* One minimisation (sg_check__minimize_passes): its question and what a guided one found. */
typedef struct shrink {
    checker *c;
    const sg_term *const *hard, *const *assume;
    size_t nhard, n;
    const sg_term **sub; /* [n] the question's assumptions, sub[i] = assume[of[i]] */
    size_t *of;
    bool *in;            /* [n] QuickXplain's question */
    bool *core;          /* [n] a core smaller than the question Z3 answered with (guided), when found */
    bool found, unknown;
} shrink;

/* Is the question over the members in[] but `skip` unsat, into *unsat? Guided: an unsat answer's
 * core smaller than the question goes to s->core (s->found); an unknown one sets s->unknown. */
static int shrink_ask(shrink *s, const bool *in, size_t skip, bool *unsat)
{
    sg_q_result r;
    size_t k, m = 0;
    int rc;
    for (k = 0; k < s->n; k++)
        if (in[k] && k != skip) {
            s->of[m] = k;
            s->sub[m++] = s->assume[k];
        }
    rc = sg_check__ask(s->c, s->hard, s->nhard, s->sub, m, false, s->c->guided, &r);
    *unsat = !rc && r.answer == SG_Q_UNSAT;
    s->unknown |= !rc && r.answer == SG_Q_UNKNOWN;
    if (*unsat && s->c->guided && r.ncore < m) {
        memset(s->core, 0, s->n * sizeof *s->core);
        for (k = 0; k < r.ncore; k++)
            s->core[s->of[r.core[k]]] = true;
        s->found = true;
    }
    sg_q_result_dispose(s->c->p, &r);
    return rc;
}

/*
 * QuickXplain (Junker, AAAI 2004) over the candidates cand[0..m-1], the ones to keep rather first,
 * with the members s->in[] assumed: adds to s->in[] the candidates of the preferred core, the
 * one deleting them in the opposite order (sg_check__minimize_passes' loop) keeps when every
 * answer is exact, in about 2 k log2(m / k) questions for a core of k instead of m. `test`: ask
 * whether s->in[] alone is unsat first. Stops (leaving s->in[] partial) at s->found or s->unknown.
 */
static int quickxplain(shrink *s, const size_t *cand, size_t m, bool test)
{
    size_t h = m / 2, k;
    bool unsat = false, any = false;
    int rc;
    if (test) {
        if ((rc = shrink_ask(s, s->in, SIZE_MAX, &unsat)) != 0 || s->found || s->unknown || unsat)
            return rc;
    }
    if (m == 1) {
        s->in[cand[0]] = true;
        return 0;
    }
    for (k = 0; k < h; k++) /* the preferred half assumed: the core's share of the rest */
        s->in[cand[k]] = true;
    rc = quickxplain(s, cand + h, m - h, true);
    for (k = 0; k < h; k++)
        s->in[cand[k]] = false;
    if (rc || s->found || s->unknown)
        return rc;
    for (k = h; k < m; k++)
        any |= s->in[cand[k]];
    return quickxplain(s, cand, h, any); /* then the preferred half's share, with that */
}

/* Guided minimisation of pass `pass` by QuickXplain: true when keep[] is done with it (else the
 * deletion loop goes on from keep[], which a smaller core Z3 found may have replaced). */
static int guided_pass(shrink *s, const int *order, bool *keep, int pass, size_t *cand, bool *done)
{
    size_t k, m = 0;
    bool any = false;
    int rc;
    *done = false;
    for (k = s->n; k-- > 0;) /* the last ones are the ones to keep rather */
        if (keep[k] && order[k] == pass)
            cand[m++] = k;
    if (m < 8) /* deleting one by one asks no more */
        return 0;
    for (k = 0; k < s->n; k++) {
        s->in[k] = keep[k] && order[k] != pass;
        any |= s->in[k];
    }
    s->found = s->unknown = false;
    if ((rc = quickxplain(s, cand, m, any)) != 0)
        return rc;
    if (s->found)
        memcpy(keep, s->core, s->n * sizeof *keep);
    else if (!s->unknown) { /* every answer exact: s->in[] is the core */
        memcpy(keep, s->in, s->n * sizeof *keep);
        *done = true;
    }
    s->found = s->unknown = false;
    return 0;
}

int sg_check__minimize_passes(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume,
                              size_t n, const int *order, bool *keep, int first, int last)
{
    shrink s;
    size_t *cand = NULL;
    int pass, rc = 0;
    size_t j, k;

    memset(&s, 0, sizeof s);
    s.c = c;
    s.hard = hard;
    s.nhard = nhard;
    s.assume = assume;
    s.n = n;
    if (!SG_CALLOC_ALL(SG_SLOT(s.sub, n + 1), SG_SLOT(s.of, n + 1), SG_SLOT(s.in, n + 1), SG_SLOT(s.core, n + 1),
                       SG_SLOT(cand, n + 1))) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory minimising a core");
        goto cleanup;
    }
    for (pass = first; pass <= last && !rc; pass++) {
        bool done = false;
        if (c->guided && ((rc = guided_pass(&s, order, keep, pass, cand, &done)) != 0 || done))
            continue;
        for (j = 0; j < n && !rc; j++) {
            bool unsat = false;
            if (!keep[j] || order[j] != pass)
                continue;
            rc = shrink_ask(&s, keep, j, &unsat);
            if (unsat)
                keep[j] = false;
            if (s.found) /* the rest is unsat already: only its core stays */
                for (k = 0; k < n; k++)
                    keep[k] = s.core[k];
            s.found = s.unknown = false;
        }
    }
cleanup:
    SG_FREE_ALL(s.sub, s.of, s.in, s.core, cand);
    return rc;
}

int sg_check__minimize_core(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume,
                            size_t n, const int *order, bool *keep)
{
    return sg_check__minimize_passes(c, hard, nhard, assume, n, order, keep, 0, 3);
}

/* ---- Components ----------------------------------------------------------------------- */

static int make_bucket(bucket *b, const long *comp, size_t n, size_t nnodes)
{
    size_t i;
    b->start = sg__calloc(nnodes + 2, sizeof *b->start);
    b->idx = sg__malloc((n + 1) * sizeof *b->idx);
    if (!b->start || !b->idx)
        return SG_ENOMEM;
    for (i = 0; i < n; i++)
        if (comp[i] >= 0)
            b->start[comp[i] + 1]++;
    for (i = 0; i < nnodes; i++)
        b->start[i + 1] += b->start[i];
    {
        size_t *fill = sg__malloc((nnodes + 1) * sizeof *fill);
        if (!fill)
            return SG_ENOMEM;
        memcpy(fill, b->start, (nnodes + 1) * sizeof *fill);
        for (i = 0; i < n; i++)
            if (comp[i] >= 0)
                b->idx[fill[comp[i]]++] = i;
        sg_free(fill);
    }
    return 0;
}

static void free_bucket(bucket *b)
{
    sg_free(b->start);
    sg_free(b->idx);
}

void sg_check__push_defs(checker *c, tvec *v, long comp)
{
    size_t j, k;
    FOR_MEMBERS(c->syms, comp, j, k)
        sg_check__tv_push(v, sg_q_def(c->p, k));
}

static void set_unknown(sg_dim_result *d, const char *why)
{
    d->status = SG_DIM_UNKNOWN;
    snprintf(d->reason, sizeof d->reason, "%.*s", (int)sizeof d->reason - 1, why);
}

void sg_check__set_unknown_in(checker *c, size_t d, long comp, const char *why)
{
    size_t n = c->inputs.start[comp + 1] - c->inputs.start[comp];
    sg_dim_result *r = &c->r->dims[d];
    r->status = SG_DIM_UNKNOWN;
    if (n < 2 || strcmp(why, "canceled") == 0) /* a cancel is the caller's, not the component's */
        snprintf(r->reason, sizeof r->reason, "%.*s", (int)sizeof r->reason - 1, why);
    else
        snprintf(r->reason, sizeof r->reason, "%s; component of %s, %zu dims", why,
                 sg_check__dim_name(&c->p->inputs[c->inputs.idx[c->inputs.start[comp]]]), n);
}

bool sg_check__stop(const checker *c) { return c->first && c->r->nviolations > 0; }

/* ---- Phase 1: relations ---------------------------------------------------------------------- */

/*
 * The dim that dim i's traced value is charged against, as torch does it: the
 * first input (in input order) whose traced shape is the bare symbol that
 * dim i's value uses owns that symbol; dim i is related to the owner when its
 * value is that symbol but it is not the owner ("must always be equal"), or
 * when its value is another expression of that one symbol ("must always be
 * related"). Only owners with a named spec count (torch's strict constraints).
 * owner[symbol index]: that first input, or SIZE_MAX (symbol_owners).
 */
/* For each symbol of the pool (by symbol index), the first input whose traced value is that
 * bare symbol, or SIZE_MAX: a new array (sg_free), NULL when out of memory. */
static size_t *symbol_owners(const sg_problem *p)
{
    size_t nsyms = sg_pool_nsymbols(p->pool), j, *owner = sg__malloc((nsyms + 1) * sizeof *owner);
    if (!owner)
        return NULL;
    for (j = 0; j < nsyms; j++)
        owner[j] = SIZE_MAX;
    for (j = p->ninputs; j-- > 0;)
        if (p->inputs[j].value && sg_expr_kind(p->inputs[j].value) == SG_SYM)
            owner[sg_expr_symbol_index(p->inputs[j].value)] = j;
    return owner;
}

static bool related_root(checker *c, const size_t *owner, size_t i, size_t *root)
{
    const sg_problem *p = c->p;
    const sg_expr **syms = NULL;
    size_t n = 0, j;
    bool ok = false;
    if (sg_expr_symbols(&syms, &n, p->pool, p->inputs[i].value, NULL) || n != 1) {
        sg_free((void *)syms);
        return false;
    }
    j = owner[sg_expr_symbol_index(syms[0])];
    if (j < p->ninputs && p->inputs[j].value == syms[0] && j != i && p->named[j]) {
        *root = j;
        ok = true;
    }
    sg_free((void *)syms);
    return ok;
}

/* Does the spec already state D_i == value (same Dim, or the same derivation)? Checked by Z3:
 * spec items of i and root imply the relation. */
/* Cheap answers to spec_states for two plain Dims: the same name states equality;
 * different names with a range of more than one value cannot (their X variables are
 * independent). SG_TRI_UNKNOWN: ask Z3. */
static sg_tri spec_states_cheaply(const sg_problem *p, size_t i, size_t root, bool equal)
{
    const sg_input_dim *a = &p->inputs[i], *b = root < p->ninputs ? &p->inputs[root] : NULL;
    if (!b || a->kind != SG_SPEC_DIM || b->kind != SG_SPEC_DIM)
        return SG_TRI_UNKNOWN;
    if (strcmp(a->name, b->name) == 0)
        return equal ? SG_TRI_TRUE : SG_TRI_UNKNOWN;
    if (a->min.inf || a->max.inf || a->min.v < a->max.v)
        return SG_TRI_FALSE;
    return SG_TRI_UNKNOWN;
}

/*
 * spec_states without Z3: the definitions and the user's spec items of i's component (the facts
 * of spec_states' question, given to c->spec_ps once per component) read by the presolve, and the
 * relation D_i = a * D_root + b (root SIZE_MAX: D_i = b) asked of them. TRUE only when proved.
 */
static sg_tri spec_states_by_presolve(checker *c, size_t i, size_t root)
{
    sg_problem *p = c->p;
    const sg_input_dim *d = &p->inputs[i];
    long comp = p->input_comp[i];
    const sg_expr *sym = NULL;
    sg_int a = 0, b = 0;
    size_t j, k;
    if (!sg_presolve_enabled() || !d->value || !sg_expr_affine(d->value, &sym, &a, &b))
        return SG_TRI_UNKNOWN;
    if (sym && (root >= p->ninputs || p->inputs[root].value != sym))
        return SG_TRI_UNKNOWN; /* D_i over the root's traced shape, not its size: Z3 */
    if (!c->spec_ps && sg_presolve_new(&c->spec_ps, p, NULL) != 0)
        return SG_TRI_UNKNOWN;
    if (c->spec_comp != comp) {
        sg_presolve_begin(c->spec_ps);
        FOR_MEMBERS(c->syms, comp, j, k)
            if (sg_q_def(p, k))
                sg_presolve_def(c->spec_ps, k);
        FOR_MEMBERS(c->inputs, comp, j, k)
            if (sg_q_spec(p, k))
                sg_presolve_spec(c->spec_ps, k);
        c->spec_comp = comp;
    }
    return sg_presolve_implies(c->spec_ps, i, a, sym ? root : SIZE_MAX, b);
}

static int spec_states(checker *c, size_t i, size_t root, const sg_term *rel, sg_tri *states)
{
    sg_problem *p = c->p;
    long comp = p->input_comp[i];
    tvec hard = TVEC_INIT;
    size_t j, k;
    sg_q_result r;
    int rc;
    memset(&r, 0, sizeof r);
    r.answer = SG_Q_UNKNOWN;
    *states = SG_TRI_UNKNOWN;
    if (spec_states_by_presolve(c, i, root) == SG_TRI_TRUE) { /* the same answer as Z3's UNSAT */
        *states = SG_TRI_TRUE;
        c->r->stats.decided_cheaply++;
        return 0;
    }
    sg_check__push_defs(c, &hard, comp);
    sg_check__tv_push(&hard, sg_q_not(p, rel));
    FOR_MEMBERS(c->inputs, comp, j, k)
        sg_check__tv_push(&hard, sg_q_spec(p, k));
    rc = hard.failed ? sg_error_set(c->err, SG_ENOMEM, "out of memory")
                     : sg_check__ask(c, hard.a, hard.n, NULL, 0, false, false, &r);
    sg_check__tv_free(&hard);
    if (!rc) /* UNSAT: the spec states it; SAT: it does not; UNKNOWN: cannot tell */
        *states = r.answer == SG_Q_UNSAT ? SG_TRI_TRUE : r.answer == SG_Q_SAT ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    if (*states == SG_TRI_UNKNOWN)
        snprintf(c->r->dims[i].reason, sizeof c->r->dims[i].reason, "%s", r.reason[0] ? r.reason : "unknown");
    sg_q_result_dispose(p, &r);
    return rc;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* The relation D_i = value over D_root explained by the presolve's proof forest of i's component
 * (built on first use): 1 with the core added to v, 0 when it cannot (then Z3 explains it). */
static int explain_by_forest(checker *c, sg_violation *v, size_t i, size_t root)
{
    sg_problem *p = c->p;
    long comp = p->input_comp[i];
    size_t j, k, n = 0, skip = SIZE_MAX, *core = NULL, ncore = 0;
    int rc;
    if (root >= p->ninputs || !sg_presolve_enabled())
        return 0;
    if (c->forest_comp != comp) {
        size_t nsyms = c->syms.start[comp + 1] - c->syms.start[comp];
        size_t *order = sg__malloc((c->cons.start[comp + 1] - c->cons.start[comp] + 1) * sizeof *order);
        int pass;
        if (!c->own_shape && (c->own_shape = sg__malloc((p->ninputs + 1) * sizeof *c->own_shape)) != NULL)
            for (j = 0; j < p->ninputs; j++)
                c->own_shape[j] = SIZE_MAX;
        if (!order || !c->own_shape) {
            sg_free(order);
            return sg_error_set(c->err, SG_ENOMEM, "out of memory explaining a relation");
        }
        FOR_MEMBERS(c->cons, comp, j, k) /* the last one, if several */
            if (p->cons[k].kind == SG_CORE_INPUT && p->cons[k].index < p->ninputs)
                c->own_shape[p->cons[k].index] = k;
        for (pass = 0; pass < 2; pass++) /* guards first: a core should rather keep them */
            FOR_MEMBERS(c->cons, comp, j, k)
                if (!p->cons[k].unbacked && (p->cons[k].kind == SG_CORE_GUARD) == (pass == 0))
                    order[n++] = k;
        rc = sg_presolve_forest(c->ps, &c->syms.idx[c->syms.start[comp]], nsyms, order, n);
        sg_free(order);
        if (rc)
            return sg_error_set(c->err, rc, "out of memory explaining a relation");
        c->forest_comp = comp;
    }
    k = c->own_shape[i];
    if (k < p->ncons && p->cons_comp[k] == comp) /* never stale: dim i's shape is in i's component */
        skip = k;
    rc = sg_presolve_explain(c->ps, i, root, skip, &core, &ncore);
    if (rc < 0)
        return sg_error_set(c->err, rc, "out of memory explaining a relation");
    if (rc == 1) {
        qsort(core, ncore, sizeof *core, cmp_size);
        for (j = 0; j < ncore; j++)
            if (!sg_check__add_constraint_core(c, v, &p->cons[core[j]])) {
                sg_free(core);
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            }
        c->r->stats.decided_cheaply++;
    }
    sg_free(core);
    return rc;
}

/* The guards (without dim i's own binding) that force `rel`; into v's core. */
static int explain_relation(checker *c, sg_violation *v, size_t i, size_t root, const sg_term *rel)
{
    sg_problem *p = c->p;
    tvec hard = TVEC_INIT, lits = TVEC_INIT;
    size_t j, k, *map = NULL, nmap = 0;
    bool *keep = NULL;
    int *order = NULL, rc = 0;
    sg_q_result r;

    memset(&r, 0, sizeof r);
    if ((rc = explain_by_forest(c, v, i, root)) != 0)
        return rc < 0 ? rc : 0;
    sg_check__push_defs(c, &hard, p->input_comp[i]);
    sg_check__tv_push(&hard, sg_q_not(p, rel));
    map = sg__malloc((p->ncons + 1) * sizeof *map);
    if (!map) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory explaining a relation");
        goto cleanup;
    }
    FOR_MEMBERS(c->cons, p->input_comp[i], j, k) {
        const sg_constraint *cn = &p->cons[k];
        if (cn->unbacked || (cn->kind == SG_CORE_INPUT && cn->index == i))
            continue;
        sg_check__tv_push(&hard, sg_q_implies(p, sg_q_lit(p, k), sg_q_holds(p, k)));
        sg_check__tv_push(&lits, sg_q_lit(p, k));
        map[nmap++] = k;
    }
    if (hard.failed || lits.failed) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory explaining a relation");
        goto cleanup;
    }
    rc = sg_check__ask(c, hard.a, hard.n, lits.a, lits.n, false, true, &r);
    if (rc)
        goto cleanup;
    if (r.answer != SG_Q_UNSAT) { /* only the traced shape of dim i itself states it */
        FOR_MEMBERS(c->cons, p->input_comp[i], j, k)
            if (p->cons[k].kind == SG_CORE_INPUT && p->cons[k].index == i &&
                !sg_check__add_constraint_core(c, v, &p->cons[k]))
                rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    keep = sg__calloc(lits.n + 1, sizeof *keep);
    order = sg__calloc(lits.n + 1, sizeof *order);
    if (!keep || !order) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory explaining a relation");
        goto cleanup;
    }
    for (k = 0; k < r.ncore; k++)
        keep[r.core[k]] = true;
    for (k = 0; k < lits.n; k++) /* keep guards rather than the shapes and ranges they caused */
        order[k] = p->cons[map[k]].kind == SG_CORE_GUARD ? 2 : p->cons[map[k]].kind == SG_CORE_RANGE ? 1 : 0;
    if (c->opts->minimize_cores && !c->lean &&
        (rc = sg_check__minimize_core(c, hard.a, hard.n, lits.a, lits.n, order, keep)))
        goto cleanup;
    for (k = 0; k < lits.n; k++)
        if (keep[k] && !sg_check__add_constraint_core(c, v, &p->cons[map[k]])) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
cleanup:
    sg_q_result_dispose(p, &r);
    sg_free(keep);
    sg_free(order);
    sg_free(map);
    sg_check__tv_free(&hard);
    sg_check__tv_free(&lits);
    return rc;
}

/* A violation of phase 1 waiting for its explanation. */
typedef struct {
    long comp;      /* its dim's component */
    size_t root;    /* the dim it is related to, SIZE_MAX for a constant */
    size_t input;   /* its dim */
    size_t viol;    /* index into the report's violations */
    const sg_term *rel;
} unexplained;

/* Component, then root, then dim: one proof forest per component, one path tree per root. */
static int cmp_unexplained(const void *a, const void *b)
{
    const unexplained *x = a, *y = b;
    if (x->comp != y->comp)
        return x->comp < y->comp ? -1 : 1;
    if (x->root != y->root)
        return x->root < y->root ? -1 : 1;
    return x->input < y->input ? -1 : x->input > y->input;
}

/* phase_relations over the inputs, owner[] from symbol_owners. The violations are found in the
 * inputs' order and explained afterwards by component and root: the presolve keeps one proof forest
 * (a component's) and one path tree (a root's) at a time, and the dims of interleaved components
 * (a model's K and V caches) would rebuild them at every dim. */
static int relations_of_inputs(checker *c, const size_t *owner)
{
    sg_problem *p = c->p;
    unexplained *todo = NULL;
    size_t i, ntodo = 0, cap = 0;
    int rc = 0;

    for (i = 0; i < p->ninputs && !rc && !sg_check__stop(c); i++) {
        const sg_input_dim *d = &p->inputs[i];
        const sg_term *rel = NULL, *val = NULL;
        size_t root = SIZE_MAX;
        sg_tri states = SG_TRI_UNKNOWN;
        bool constant;
        sg_violation *v;
        char *txt;

        if (!d->value || (!p->named[i] && d->kind != SG_SPEC_DYNAMIC))
            continue;
        constant = sg_expr_kind(d->value) == SG_INT;
        if (d->kind == SG_SPEC_DYNAMIC && !constant)
            continue; /* DYNAMIC only objects to a specialisation */
        if (!constant && !related_root(c, owner, i, &root))
            continue;
        /* the relation between the runtime sizes: D_i = value with the root's size for its
         * symbol when the root's traced value is that bare symbol, else both traced shapes */
        if ((rc = sg_q_expr(p, d->value, &val, c->err)))
            break;
        if (!constant && sg_expr_kind(p->inputs[root].value) == SG_SYM) {
            const sg_term *from = sg_q_symbol(p, p->inputs[root].value), *to = sg_q_dim(p, root);
            val = sg_q_substitute(p, val, &from, &to, 1);
            rel = sg_q_eq(p, sg_q_dim(p, i), val);
        } else if (!constant) {
            const sg_term *rv = NULL;
            if ((rc = sg_q_expr(p, p->inputs[root].value, &rv, c->err)))
                break;
            rel = sg_q_and2(p, sg_q_eq(p, sg_q_dim(p, i), val), sg_q_eq(p, sg_q_dim(p, root), rv));
        } else {
            rel = sg_q_eq(p, sg_q_dim(p, i), val);
        }
        if (!rel) {
            rc = sg_error_set(c->err, sg_q_failed(p) == SG_ERROR ? SG_ERROR : SG_ENOMEM, "the solver failed building a relation");
            break;
        }
        states = constant ? SG_TRI_UNKNOWN : spec_states_cheaply(p, i, root, sg_expr_kind(d->value) == SG_SYM);
        if (states == SG_TRI_UNKNOWN)
            rc = spec_states(c, i, root, rel, &states);
        if (rc || states != SG_TRI_FALSE) {
            if (!rc && states == SG_TRI_UNKNOWN) {
                c->r->dims[i].status = SG_DIM_UNKNOWN;
                c->decided[i] = true;
            }
            continue;
        }
        v = sg_check__new_violation(c, i, constant ? SG_VIOL_SPECIALIZED : SG_VIOL_RELATED);
        if (!v) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            break;
        }
        v->relation = d->value;
        v->root = root;
        txt = constant ? sg_check__print_py(c, d->value) : sg_check__print_named(c, d->value);
        if (constant && d->kind == SG_SPEC_DYNAMIC && sg_expr_int_value(d->value) <= 1) {
            /* torch 2.6 lets Dim.DYNAMIC 0/1-specialise silently; the spec's claim is false
             * all the same (docs/torch-differences.md); torch 2.14's words */
            char num[SG_INT_STRLEN];
            sg_int_format(num, sg_expr_int_value(d->value));
            v->message = sg__malloc(512);
            if (v->message)
                snprintf(v->message, 512,
                         "Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but export 0/1 "
                         "specialized due to hint of %s for dimension inputs%s.shape[%d].", num, d->path, d->dim);
        } else if (constant) {
            char num[SG_INT_STRLEN];
            sg_int_format(num, sg_expr_int_value(d->value));
            v->message = sg__malloc(512);
            if (v->message)
                snprintf(v->message, 512,
                         "You marked %s as dynamic but your code specialized it to be a constant (%s). If you're "
                         "using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're using "
                         "Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO.", v->dim, num);
        } else {
            const sg_input_dim *rd = &p->inputs[root];
            bool equal = sg_expr_kind(d->value) == SG_SYM;
            v->kind = equal ? SG_VIOL_EQUAL : SG_VIOL_RELATED;
            v->message = sg__malloc(1024);
            if (v->message && equal)
                snprintf(v->message, 1024, "The values of %s = %s and %s = %s must always be equal.", v->dim, d->source,
                         sg_check__dim_name(rd), rd->source);
            else if (v->message)
                snprintf(v->message, 1024,
                         "The values of %s = %s must always be related to the values of %s = %s by %s = %s.", v->dim,
                         d->source, sg_check__dim_name(rd), rd->source, v->dim, txt ? txt : "?");
        }
        sg_free(txt);
        if (!v->message || sg__grow((void **)&todo, &cap, ntodo + 1, sizeof *todo)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            break;
        }
        todo[ntodo++] = (unexplained){p->input_comp[i], constant ? SIZE_MAX : root, i, (size_t)(v - c->r->violations), rel};
        c->fixed[i] = rel; /* adopt the relation for phase 2 */
        c->fixed_kind[i] = FIX_RELATION;
        c->rel_root[i] = constant ? SIZE_MAX : root;
        c->decided[i] = true;
        c->r->dims[i].status = SG_DIM_REFUTED;
    }
    if (ntodo > 1)
        qsort(todo, ntodo, sizeof *todo, cmp_unexplained);
    for (i = 0; i < ntodo && !rc; i++)
        rc = explain_relation(c, &c->r->violations[todo[i].viol], todo[i].input, todo[i].root, todo[i].rel);
    sg_free(todo);
    return rc;
}

/* Phase 1: every dim whose traced value is a constant (a specialisation) or charged against
 * another dim (related_root) while its spec does not state it becomes a violation, explained
 * and adopted for phase 2. */
static int phase_relations(checker *c)
{
    size_t *owner = symbol_owners(c->p);
    int rc;
    if (!owner)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    rc = relations_of_inputs(c, owner);
    sg_free(owner);
    return rc;
}

/* ---- Phase 1b: the bounds of Dim.AUTO / Dim.DYNAMIC ------------------------------------------------ */

/* A bounded hint: Dim.AUTO / Dim.DYNAMIC given min or max, traced, not decided yet. */
static bool bounded_hint(const checker *c, size_t i)
{
    const sg_input_dim *d = &c->p->inputs[i];
    return (d->kind == SG_SPEC_AUTO || d->kind == SG_SPEC_DYNAMIC) && d->has_bounds && d->value;
}

/* A bound as torch prints a hint's min/max ("None" when not given) or a range end ("int_oo"). */
static const char *hint_bound(char buf[SG_INT_STRLEN], sg_bound b, bool user)
{
    if (b.inf)
        return user ? "None" : b.inf < 0 ? "-int_oo" : "int_oo";
    return sg_int_format(buf, b.v);
}

/* torch's user range of a hint: [min or 0, max or int_oo] (_constrain_user_specified_dimhint_range). */
static void hint_range(const sg_input_dim *d, sg_bound *lo, sg_bound *hi)
{
    *lo = d->min;
    *hi = d->max;
    if (lo->inf) {
        lo->inf = 0;
        lo->v = 0;
    }
}

/* The traced range torch compares the hint with: the symbol's var_to_range, or the constant. */
static bool traced_range(const checker *c, const sg_input_dim *d, sg_bound *lo, sg_bound *hi)
{
    size_t k;
    if (sg_expr_kind(d->value) == SG_INT) {
        lo->inf = hi->inf = 0;
        lo->v = hi->v = sg_expr_int_value(d->value);
        return true;
    }
    if (sg_expr_kind(d->value) != SG_SYM)
        return false;
    for (k = 0; k < c->p->nsyms; k++)
        if (c->p->syms[k].sym == d->value) {
            *lo = c->p->syms[k].lo;
            *hi = c->p->syms[k].hi;
            return true;
        }
    return false;
}

static bool disjoint(sg_bound alo, sg_bound ahi, sg_bound blo, sg_bound bhi)
{
    /* [alo, ahi] and [blo, bhi] (inf < 0: -oo, > 0: +oo) share no integer */
    if (!ahi.inf && !blo.inf && ahi.v < blo.v)
        return true;
    if (!bhi.inf && !alo.inf && bhi.v < alo.v)
        return true;
    return (ahi.inf < 0 || bhi.inf < 0 || alo.inf > 0 || blo.inf > 0);
}

/* Record a refuted hint: the message, a counterexample (the example sizes, the dim moved into
 * its bounds), the conflicting constraints (core over `lits`, mapped by `map`), and its bounds
 * dropped for the rest of the check (torch's fix widens or removes them). */
static int refute_hint(checker *c, size_t i, const char *msg, sg_int value, const size_t *core, size_t ncore,
                       const size_t *map)
{
    sg_problem *p = c->p;
    sg_violation *v = sg_check__new_violation(c, i, SG_VIOL_RANGE);
    const sg_term *t;
    size_t k;
    if (!v || !(v->message = sg__strndup(msg, strlen(msg))))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    v->has_counterexample = true;
    if (!(v->counterexample = sg__malloc((p->ninputs + 1) * sizeof *v->counterexample)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (k = 0; k < p->ninputs; k++)
        v->counterexample[k] = p->inputs[k].size;
    v->counterexample[i] = value;
    for (k = 0; k < ncore; k++)
        if (!sg_check__add_constraint_core(c, v, &p->cons[map[core[k]]]))
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if (!sg_check__add_core(c, v, SG_CORE_SPEC, i, sg_check__spec_text(p->trace, &p->inputs[i]), NULL))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if (!(t = sg_q_true(p)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    c->fixed[i] = t;
    c->fixed_kind[i] = FIX_DROPPED; /* nor may the presolve read them as a fact */
    c->decided[i] = true;
    c->r->dims[i].status = SG_DIM_REFUTED;
    return 0;
}

/* The size of the counterexample of a refuted hint: a value within its bounds, the example when it is. */
static sg_int inside(const sg_input_dim *d, sg_bound lo, sg_bound hi, bool avoid, sg_int not_this)
{
    sg_int v = d->size;
    if (!lo.inf && v < lo.v)
        v = lo.v;
    if (!hi.inf && v > hi.v)
        v = hi.v;
    if (avoid && v == not_this)
        v = (hi.inf || v < hi.v) ? v + 1 : v - 1;
    return v;
}

/*
 * One bounded hint against what the guards allow for it, as torch 2.14's make_constraints
 * does after tracing: torch raises when the user's range and the traced range are disjoint
 * ("conflicts between user-specified ranges and inferred ranges"), and for Dim.DYNAMIC when
 * their intersection is one value ("tracing inferred a static shape"). Decided by Z3 over every
 * recorded constraint and the static dims: no size within the bounds passes them (or, for
 * DYNAMIC, exactly one does). Without this, the bounds and the assumed guards contradict each
 * other and every later query is vacuous.
 */
static int hint_in(checker *c, size_t i)
{
    sg_problem *p = c->p;
    const sg_input_dim *d = &p->inputs[i];
    long comp = p->input_comp[i];
    tvec hard = TVEC_INIT, lits = TVEC_INIT;
    size_t j, k, *map = NULL, nmap = 0, *core = NULL, ncore = 0;
    sg_bound ulo, uhi, tlo, thi;
    sg_q_result r, r2;
    char msg[1024], a[SG_INT_STRLEN], b[SG_INT_STRLEN], x[SG_INT_STRLEN], y[SG_INT_STRLEN];
    sg_int only = 0;
    int rc = 0;

    memset(&r, 0, sizeof r);
    memset(&r2, 0, sizeof r2);
    hint_range(d, &ulo, &uhi);
    sg_check__push_defs(c, &hard, comp);
    FOR_MEMBERS(c->inputs, comp, j, k)
        if (k != i && (p->inputs[k].kind == SG_SPEC_STATIC || p->inputs[k].kind == SG_SPEC_UNSET))
            sg_check__tv_push(&hard, sg_check__spec_item(c, k));
    sg_check__tv_push(&hard, sg_q_ge(p, sg_q_dim(p, i), sg_q_num(p, ulo.v)));
    if (!uhi.inf)
        sg_check__tv_push(&hard, sg_q_le(p, sg_q_dim(p, i), sg_q_num(p, uhi.v)));
    if (!(map = sg__malloc((p->ncons + 1) * sizeof *map))) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    FOR_MEMBERS(c->cons, comp, j, k) {
        sg_check__tv_push(&hard, sg_q_implies(p, sg_q_lit(p, k), sg_q_holds(p, k)));
        sg_check__tv_push(&lits, sg_q_lit(p, k));
        map[nmap++] = k;
    }
    if (hard.failed || lits.failed) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = sg_check__ask(c, hard.a, hard.n, lits.a, lits.n, true, true, &r)))
        goto cleanup;
    core = r.core;
    ncore = r.ncore;
    if (r.answer == SG_Q_UNKNOWN) {
        set_unknown(&c->r->dims[i], r.reason[0] ? r.reason : "unknown");
        c->decided[i] = true;
        goto cleanup;
    }
    if (r.answer == SG_Q_UNSAT) { /* no size within the bounds passes: torch's range conflict */
        if (c->opts->minimize_cores) {
            bool *keep = sg__calloc(lits.n + 1, sizeof *keep);
            int *order = sg__calloc(lits.n + 1, sizeof *order);
            if (!keep || !order) {
                sg_free(keep);
                sg_free(order);
                rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
            for (k = 0; k < ncore; k++)
                keep[core[k]] = true;
            for (k = 0; k < lits.n; k++)
                order[k] = p->cons[map[k]].kind == SG_CORE_GUARD ? 2 : p->cons[map[k]].kind == SG_CORE_RANGE ? 1 : 0;
            rc = sg_check__minimize_core(c, hard.a, hard.n, lits.a, lits.n, order, keep);
            for (k = 0, ncore = 0; k < lits.n && !rc; k++)
                if (keep[k])
                    core[ncore++] = k;
            sg_free(keep);
            sg_free(order);
            if (rc)
                goto cleanup;
        }
        if (traced_range(c, d, &tlo, &thi) && disjoint(ulo, uhi, tlo, thi))
            snprintf(msg, sizeof msg,
                     "Received user-specified min/max range of [%s, %s], conflicting with the inferred min/max range "
                     "of [%s, %s], for inputs%s.shape[%d].", hint_bound(a, d->min, true), hint_bound(b, d->max, true),
                     hint_bound(x, tlo, false), hint_bound(y, thi, false), d->path, d->dim);
        else /* torch's interval test misses it (a hole, a congruence, a relation): our words */
            snprintf(msg, sizeof msg,
                     "Received user-specified min/max range of [%s, %s] for inputs%s.shape[%d], but no size in it "
                     "passes the recorded guards.", hint_bound(a, d->min, true), hint_bound(b, d->max, true), d->path,
                     d->dim);
        rc = refute_hint(c, i, msg, inside(d, ulo, uhi, false, 0), core, ncore, map);
        goto cleanup;
    }
    if (d->kind != SG_SPEC_DYNAMIC || !sg_q_model_int(p, r.model, sg_q_dim(p, i), &only))
        goto cleanup;
    /* DYNAMIC: is that the only size within the bounds? */
    sg_check__tv_push(&hard, sg_q_not(p, sg_q_eq(p, sg_q_dim(p, i), sg_q_num(p, only))));
    if (hard.failed) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = sg_check__ask(c, hard.a, hard.n, NULL, 0, false, false, &r2)))
        goto cleanup;
    if (r2.answer == SG_Q_UNKNOWN) {
        set_unknown(&c->r->dims[i], r2.reason[0] ? r2.reason : "unknown");
        c->decided[i] = true;
    } else if (r2.answer == SG_Q_UNSAT) {
        snprintf(msg, sizeof msg,
                 "Received user-specified dim hint Dim.DYNAMIC(min=%s, max=%s), but tracing inferred a static shape "
                 "of %s for dimension inputs%s.shape[%d].", hint_bound(a, d->min, true), hint_bound(b, d->max, true),
                 sg_int_format(x, only), d->path, d->dim);
        rc = refute_hint(c, i, msg, inside(d, ulo, uhi, true, only), NULL, 0, map);
    }
cleanup:
    sg_q_result_dispose(p, &r);
    sg_q_result_dispose(p, &r2);
    sg_check__tv_free(&hard);
    sg_check__tv_free(&lits);
    sg_free(map);
    return rc;
}

/*
 * The bounded hints of one component together: the assumed constraints hold by
 * construction, so the hints' bounds, the other dims' specs and those constraints
 * must admit one shape, or every later "proved" would be vacuous. When they do not,
 * the hints of a minimal conflicting set are refuted.
 */
static int hints_jointly(checker *c, long comp)
{
    sg_problem *p = c->p;
    tvec hard = TVEC_INIT, lits = TVEC_INIT;
    size_t j, k, *idx = NULL, *core = NULL, ncore = 0;
    sg_q_result r;
    char msg[1024], a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    int rc = 0;

    memset(&r, 0, sizeof r);
    if (!(idx = sg__malloc((p->ninputs + 1) * sizeof *idx)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    sg_check__push_defs(c, &hard, comp);
    FOR_MEMBERS(c->cons, comp, j, k)
        if (!p->cons[k].checked)
            sg_check__tv_push(&hard, sg_q_holds(p, k));
    FOR_MEMBERS(c->inputs, comp, j, k) {
        const sg_term *item = sg_check__spec_item(c, k);
        if (!item)
            continue;
        if (!bounded_hint(c, k) || c->decided[k]) {
            sg_check__tv_push(&hard, item);
            continue;
        }
        sg_check__tv_push(&hard, sg_q_implies(p, sg_q_spec_lit(p, k), item));
        idx[lits.n] = k;
        sg_check__tv_push(&lits, sg_q_spec_lit(p, k));
    }
    if (hard.failed || lits.failed) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (lits.n < 2)
        goto cleanup;
    if ((rc = sg_check__ask(c, hard.a, hard.n, lits.a, lits.n, false, true, &r)))
        goto cleanup;
    core = r.core;
    ncore = r.ncore;
    if (r.answer == SG_Q_UNKNOWN) {
        for (k = 0; k < lits.n; k++) {
            set_unknown(&c->r->dims[idx[k]], r.reason[0] ? r.reason : "unknown");
            c->decided[idx[k]] = true;
        }
        goto cleanup;
    }
    for (j = 0; r.answer == SG_Q_UNSAT && j < ncore && !rc; j++) {
        const sg_input_dim *d = &p->inputs[idx[core[j]]];
        sg_bound lo, hi;
        hint_range(d, &lo, &hi);
        snprintf(msg, sizeof msg,
                 "Received user-specified min/max range of [%s, %s] for inputs%s.shape[%d], but no shape within the "
                 "bounds of the other dims passes the recorded guards.", hint_bound(a, d->min, true),
                 hint_bound(b, d->max, true), d->path, d->dim);
        rc = refute_hint(c, idx[core[j]], msg, inside(d, lo, hi, false, 0), NULL, 0, NULL);
        if (!rc) { /* the counterexample puts every hint of the conflict inside its bounds */
            sg_violation *v = &c->r->violations[c->r->nviolations - 1];
            for (k = 0; k < ncore; k++) {
                const sg_input_dim *e = &p->inputs[idx[core[k]]];
                hint_range(e, &lo, &hi);
                v->counterexample[idx[core[k]]] = inside(e, lo, hi, false, 0);
            }
        }
    }
cleanup:
    sg_q_result_dispose(p, &r);
    sg_check__tv_free(&hard);
    sg_check__tv_free(&lits);
    sg_free(idx);
    return rc;
}

static int phase_hints(checker *c)
{
    sg_problem *p = c->p;
    size_t i;
    int rc = 0;
    for (i = 0; i < p->ninputs && !rc && !sg_check__stop(c); i++)
        if (bounded_hint(c, i) && !c->decided[i])
            rc = hint_in(c, i);
    for (i = 0; i < p->ninputs && !rc && !sg_check__stop(c); i++) /* each component once, at its first dim */
        if (c->inputs.idx[c->inputs.start[p->input_comp[i]]] == i)
            rc = hints_jointly(c, p->input_comp[i]);
    return rc;
}

/* ---- Entry points ------------------------------------------------------------------------------- */



/*
 * Did torch stop exporting for a reason of its own, not one check interprets? The errors check
 * reads as an answer are: a UserError (constraint violations, spec validation), torch's
 * ConstraintViolationError (an example outside its range), a ValueError (the range conflict of a
 * bounded hint, spec checks), Dim's AssertionError and the bare IndexError of a dim beyond the rank
 * (invalid specs). Anything else
 * (AttributeError, TypeError, KeyError inside torch, a kernel's RuntimeError, ...) means that the
 * export did not complete: torch_internal is set to true for those, false for a data-dependent
 * guard (sg_trace_torch_failed_data_dependent).
 */
static bool torch_did_not_complete(const sg_trace *t, bool *torch_internal)
{
    const char *e = sg_trace_torch_error(t);
    *torch_internal = false;
    if (!e || !*e)
        return false;
    if (sg_trace_torch_failed_data_dependent(t))
        return true;
    if (strstr(e, "UserError") || strstr(e, "ConstraintViolationError") || strstr(e, "AssertionError") ||
        strstr(e, "IndexError") || strstr(e, "ValueError"))
        return false;
    *torch_internal = true;
    return true;
}

/*
 * torch stopped on a data-dependent guard, or raised inside its own code: the guards after it
 * were never recorded, so a "proved" is not one (a refuted dim stays refuted: a recorded guard
 * is still one the export needs). The verdict says what torch hit.
 */
static int torch_failed(sg_report *r, const sg_trace *t, bool torch_internal, sg_error *err)
{
    const char *what = sg_trace_torch_error(t), *msg = sg_trace_torch_error_message(t), *dot;
    char buf[1400];
    size_t i;
    for (i = 0; i < r->ndims; i++)
        if (r->dims[i].status == SG_DIM_PROVED)
            set_unknown(&r->dims[i], "the export did not complete");
    dot = strrchr(what, '.');
    snprintf(buf, sizeof buf,
             "torch failed %s (%s): %s; the export did not complete, so only the guards "
             "recorded before it are known and nothing is proved",
             strcmp(what, "make_fx_fail_partial") == 0 ? "while tracing"
             : torch_internal                         ? "inside its own code"
                                                      : "on a data-dependent guard",
             dot ? dot + 1 : what,
             msg ? msg : "(no message recorded)");
    if (!(r->torch_failed = sg__strndup(buf, strlen(buf))))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    return 0;
}

/*
 * torch raised "Constraints violated (names)!" on this very spec, yet every dim it names is proved:
 * every size passes the guards, but torch's value ranges cannot decide one of them (`(n // 2) <= n`).
 * The export fails all the same, so each such dim is charged (SG_VIOL_TORCH) with torch's own line
 * (the replay's, torch/message.c, else a line naming the header), without a counterexample; the
 * fixes then offer the spec torch accepts. Only on the spec torch ran (not --spec / --dim).
 */
static int torch_refusal(checker *c, const sg_trace *t, sg_error *err)
{
    sg_report *r = c->r;
    const char *exc = sg_trace_torch_error(t), *msg = sg_trace_torch_error_message(t), *lead = "Constraints violated (";
    const char *p, *end;
    sg_torch_text *tm = NULL;
    size_t i, k;
    int rc = 0;

    if (r->nviolations || r->torch_failed || sg_trace_spec_overridden(t) || !exc || !msg ||
        !(strstr(exc, "UserError") || strstr(exc, "ConstraintViolation")) || !(p = strstr(msg, lead)) ||
        !(end = strstr(p, ")!")))
        return 0;
    for (i = 0; i < r->ndims; i++)
        if (r->dims[i].status == SG_DIM_UNKNOWN)
            return 0; /* a dim not decided might be what torch saw */
    if ((rc = sg_torch_text_build(&tm, t, err)) != 0)
        return rc;
    for (p += strlen(lead); p < end && !rc;) {
        const char *q = strstr(p, ", ");
        size_t len = (size_t)((q && q < end ? q : end) - p);
        for (i = 0; i < c->p->ninputs && !rc; i++) {
            const sg_input_dim *d = &c->p->inputs[i];
            sg_violation *v;
            char line[1400], pre[200];
            const char *why = NULL;
            if (d->kind != SG_SPEC_DIM || strlen(d->name) != len || strncmp(d->name, p, len) != 0 ||
                r->dims[i].status != SG_DIM_PROVED)
                continue;
            snprintf(pre, sizeof pre, "Not all values of %s = ", d->name);
            for (k = 0; tm && k < tm->nlines && !why; k++)
                if (strncmp(tm->lines[k], pre, strlen(pre)) == 0)
                    why = tm->lines[k];
            if (why)
                snprintf(line, sizeof line, "%s (torch raises on it although every size of it passes that guard)", why);
            else
                snprintf(line, sizeof line, "torch raised on %s (%.*s) although every size of it passes the guards",
                         d->name, (int)(end + 1 - msg > 600 ? 600 : end + 1 - msg), msg);
            if (!(v = sg_check__new_violation(c, i, SG_VIOL_TORCH)) || !(v->message = sg__strndup(line, strlen(line))))
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            else
                r->dims[i].status = SG_DIM_REFUTED;
            break; /* one violation per Dim name, on its first input */
        }
        p += len + (q && q < end ? 2 : 0);
    }
    sg_torch_text_free(tm);
    return rc;
}

static void finish_verdict(sg_report *r)
{
    size_t i;
    bool unknown = r->no_spec;
    if (r->verdict == SG_VERDICT_INVALID_SPEC)
        return;
    if (r->torch_failed) {
        r->verdict = SG_VERDICT_TORCH_FAILED;
        return;
    }
    if (r->nviolations) {
        r->verdict = SG_VERDICT_VIOLATIONS;
        return;
    }
    for (i = 0; i < r->ndims; i++)
        unknown |= r->dims[i].status == SG_DIM_UNKNOWN;
    r->verdict = unknown ? SG_VERDICT_UNKNOWN : SG_VERDICT_OK;
}

/* The options of version 1, as a binding compiled against that header lays them out. */
typedef struct options_v1 {
    unsigned version;
    unsigned timeout_ms;
    unsigned query_timeout_ms;
    uint64_t query_rlimit;
    bool infer;
    bool minimize_cores;
} options_v1;

int sg_check_options_init(sg_check_options *o, unsigned version)
{
    sg_check_options d = SG_CHECK_OPTIONS_INIT;
    if (!o || version < 1 || version > SG_CHECK_OPTIONS_VERSION)
        return SG_EINVALID;
    if (version == 1) {
        options_v1 v1 = {1, d.timeout_ms, d.query_timeout_ms, d.query_rlimit, d.infer, d.minimize_cores};
        memcpy(o, &v1, sizeof v1);
        return 0;
    }
    *o = d;
    return 0;
}

int sg_check__options(sg_check_options *out, const sg_check_options *in, sg_error *err)
{
    sg_check_options d = SG_CHECK_OPTIONS_INIT;
    *out = d;
    if (!in)
        return 0;
    if (in->version == 1) {
        const options_v1 *v1 = (const options_v1 *)(const void *)in;
        out->timeout_ms = v1->timeout_ms;
        out->query_timeout_ms = v1->query_timeout_ms;
        out->query_rlimit = v1->query_rlimit;
        out->infer = v1->infer;
        out->minimize_cores = v1->minimize_cores;
        return 0;
    }
    if (in->version != SG_CHECK_OPTIONS_VERSION)
        return sg_error_set(err, SG_EINVALID, "sg_check_options version %u is not supported (this library reads 1 to %d)",
                            in->version, SG_CHECK_OPTIONS_VERSION);
    *out = *in;
    return 0;
}

int sg_check(sg_report **out, const sg_trace *t, const sg_check_options *opts, sg_error *err)
{
    return sg_check_rt(out, t, opts, NULL, err);
}

/* How much of the report a caller reads (check_rt). */
enum { CHECK_FULL, CHECK_LEAN, CHECK_FIRST };

static int check_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts_in, const sg_runtime *rt,
                    int mode, sg_error *err);

int sg_check_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts_in, const sg_runtime *rt,
                sg_error *err)
{
    return check_rt(out, t, opts_in, rt, CHECK_FULL, err);
}

int sg_check__lean_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts_in, const sg_runtime *rt,
                      sg_error *err)
{
    return check_rt(out, t, opts_in, rt, CHECK_LEAN, err);
}

int sg_check__first_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts_in, const sg_runtime *rt,
                       sg_error *err)
{
    return check_rt(out, t, opts_in, rt, CHECK_FIRST, err);
}

static int check_rt(sg_report **out, const sg_trace *t, const sg_check_options *opts_in, const sg_runtime *rt,
                    int mode, sg_error *err)
{
    sg_check_options opts;
    checker c;
    sg_report *r = NULL;
    sg_error why = SG_ERROR_INIT;
    size_t n = 0, i;
    const sg_input_dim *inputs = sg_trace_inputs(t, &n);
    double start = sg_problem_now();
    int rc = 0;
    bool internal = false;

    *out = NULL;
    if (!t)
        return sg_error_set(err, SG_EINVALID, "sg_check: no trace");
    if ((rc = sg_check__options(&opts, opts_in, err)) != 0)
        return rc;
    memset(&c, 0, sizeof c);
    c.lean = mode == CHECK_LEAN;
    c.first = mode == CHECK_FIRST;
    c.opts = &opts;
    c.err = err;
    c.budget.query_timeout_ms = c.opts->query_timeout_ms;
    c.budget.query_rlimit = c.opts->query_rlimit;
    c.budget.deadline = c.opts->timeout_ms ? start + c.opts->timeout_ms / 1000.0 : 0;
    c.budget.cancel = c.opts->cancel;
    c.budget.rt = rt;
    SG_COUNT(rt, checks, 1);
    /* the check builds expressions (relations, forced values) in an overlay of the trace's
     * frozen pool that the report keeps; the report holds a reference to the trace */
    if ((rc = sg_report__new(&r, SG_REPORT_CHECK, t, true, err)) != 0)
        return rc;
    c.r = r;
    snprintf(r->solver_name, sizeof r->solver_name, "%s", sg_solver_name());
    r->dims = sg__calloc(n + 1, sizeof *r->dims);
    c.fixed = sg__calloc(n + 1, sizeof *c.fixed);
    c.decided = sg__calloc(n + 1, sizeof *c.decided);
    c.fixed_kind = sg__calloc(n + 1, sizeof *c.fixed_kind);
    c.rel_root = sg__calloc(n + 1, sizeof *c.rel_root);
    c.pin_root = sg__calloc(n + 1, sizeof *c.pin_root);
    if (!r->dims || !c.fixed || !c.decided || !c.fixed_kind || !c.rel_root || !c.pin_root) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory creating a report");
        goto cleanup;
    }
    r->ndims = n;
    for (i = 0; i < n; i++) {
        r->dims[i].input = i;
        r->dims[i].status = inputs[i].kind == SG_SPEC_DIM || inputs[i].kind == SG_SPEC_DERIVED ||
                                    inputs[i].kind == SG_SPEC_DYNAMIC
                                ? SG_DIM_PROVED
                                : SG_DIM_STATIC;
    }
    /* 0. the spec itself, as torch validates it before tracing */
    if ((rc = sg_check__spec_issues(r, t, err)))
        goto cleanup;
    if (r->nviolations) { /* torch stops here too: the other dims are not decided */
        for (i = 0; i < n; i++)
            if (r->dims[i].status == SG_DIM_PROVED)
                set_unknown(&r->dims[i], r->verdict == SG_VERDICT_INVALID_SPEC ? "invalid spec" : "not traced");
        goto done;
    }
    if (!sg_trace_has_flat_spec(t) && sg_check__spec_construction_failed(t)) {
        if ((rc = sg_check__construction_issue(r, t, err)))
            goto cleanup;
        for (i = 0; i < n; i++)
            if (r->dims[i].status == SG_DIM_PROVED)
                set_unknown(&r->dims[i], "invalid spec");
        goto done;
    }
    if (!sg_trace_has_flat_spec(t)) {
        r->verdict = SG_VERDICT_UNKNOWN;
        r->no_spec = true;
        for (i = 0; i < n; i++) /* no per-dim spec: nothing was decided */
            if (r->dims[i].status == SG_DIM_PROVED)
                set_unknown(&r->dims[i], "no per-dim spec");
        goto done;
    }
    if (!sg_trace_has_shape_env(t)) {
        for (i = 0; i < n; i++)
            if (r->dims[i].status != SG_DIM_STATIC)
                set_unknown(&r->dims[i], "the trace has no ShapeEnv");
        goto done;
    }
    if ((rc = sg_problem_build(&c.p, t, r->pool, rt, &why))) {
        if (rc != SG_EUNSUPPORTED) {
            if (err)
                *err = why;
            goto cleanup;
        }
        /* a guard (or value) with no finite Z3 encoding: nothing is decided, and the report says why */
        rc = 0;
        for (i = 0; i < n; i++)
            if (r->dims[i].status != SG_DIM_STATIC)
                set_unknown(&r->dims[i], why.msg);
        goto done;
    }
    c.nnodes = c.p->ninputs + c.p->nsyms + c.p->nx;
    if (make_bucket(&c.inputs, c.p->input_comp, c.p->ninputs, c.nnodes) ||
        make_bucket(&c.syms, c.p->sym_comp, c.p->nsyms, c.nnodes) ||
        make_bucket(&c.cons, c.p->cons_comp, c.p->ncons, c.nnodes)) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory splitting the problem");
        goto cleanup;
    }
    if ((rc = sg_presolve_new(&c.ps, c.p, err)))
        goto cleanup;
    c.forest_comp = -1;
    c.spec_comp = -1;
    c.enumerate = sg_presolve_enabled(); /* small components by their models, on any context */
    /* 1. relations the guards force, 1b. the bounds of hints, 2. values the guards reject */
    if ((rc = phase_relations(&c)) || (rc = phase_hints(&c)) || (rc = sg_check__phase_values(&c)))
        goto cleanup;
    if (sg_check__stop(&c)) { /* the rest was not looked at: what is still "proved" is not */
        for (i = 0; i < n; i++)
            if (r->dims[i].status == SG_DIM_PROVED && !c.decided[i])
                set_unknown(&r->dims[i], "not decided (the check stopped at the first violation)");
    } else if ((c.opts->infer && (rc = sg_infer(c.p, &c.budget, &r->stats, &r->inferred, &r->ninferred, err))) ||
               (rc = torch_refusal(&c, t, err)))
        goto cleanup;
done:
    /* (an internal error before the spec was built leaves nothing to decide: no_spec says so) */
    if (r->verdict != SG_VERDICT_INVALID_SPEC && torch_did_not_complete(t, &internal) && !(internal && r->no_spec) &&
        (rc = torch_failed(r, t, internal, err)))
        goto cleanup;
    finish_verdict(r);
    r->stats.seconds = sg_problem_now() - start;
    SG_COUNT(rt, decided_cheaply, r->stats.decided_cheaply);
    *out = r;
    r = NULL;
cleanup:
    sg_presolve_free(c.ps);
    sg_presolve_free(c.spec_ps);
    sg_problem_free(c.p);
    free_bucket(&c.inputs);
    free_bucket(&c.syms);
    free_bucket(&c.cons);
    SG_FREE_ALL(c.box, c.fixed, c.decided, c.fixed_kind, c.rel_root, c.pin_root, c.own_shape);
    sg_report_free(r);
    return rc;
}

