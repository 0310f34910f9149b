/*
 * check_probe.c - phase 2 before Z3 on large non-linear components: one-dim
 * counterexamples (analysis/check_values.c calls it; check_impl.h).
 *
 * Does: for a component of at least PROBE_MIN_DIMS open named dims with a
 * non-linear checked guard (prod300: 452 dims tied by the hub dims A and B
 * through n_i % (A*B) == 0, where Z3's non-linear arithmetic gives up), try
 * shapes that differ from the example sizes in one open dim, moved to a few
 * values of its spec range (its ends, next to them, next to the example
 * size). Every constraint the moved dim reaches is evaluated exactly
 * (expr/eval.c, Python's integer semantics): a shape that passes the assumed
 * constraints and fails a checked one is a counterexample of the spec as it
 * stands (the dims refuted so far pinned to their example sizes, which the
 * shape keeps). Its explanation is the minimal core values_in would look
 * for, minimised over the sub-problem of the dims the failing constraint and
 * the assumed constraints reach (see "Why the sub-problem" below); the dims
 * whose values the core keeps are refuted and pinned, and the next round
 * starts. Among the shapes found, each round takes the one whose failing
 * constraint involves the fewest open dims (a guard of the moved dim alone
 * first: torch's "n0 % 4 == 0"), so that cores stay small.
 *
 * Does not: prove anything (no shape left means values_in asks Z3 as
 * before, about the dims still open); handle derived dims, adopted
 * relations, a Dim name shared by several open dims, or a symbol that is
 * not the size of an input dim of the component (then the probe stands
 * aside and values_in runs as before).
 *
 * Why the sub-problem gives the same answers. A question of the
 * minimisation is "are the hard facts of the component (definitions, pins,
 * assumed constraints) with the kept literals satisfiable?". Let V1 be the
 * dims the start literals mention, closed under the assumed constraints
 * (and the definitions, which tie a symbol to its dim); no hard fact and no
 * literal spans V1 and the rest. The facts over the rest hold at the
 * counterexample itself (it is a shape of S': it passes every assumed
 * constraint and every pin), so the whole question is satisfiable exactly
 * when its part over V1 is. That part is asked of Z3 over V1 only, or
 * answered here by enumeration when every dim it reaches is fixed (a pin, a
 * kept value literal) or bounded by a kept spec item and the points are few
 * (PROBE_VISITS): satisfiable with the point found, unsatisfiable when none
 * of the points is a model. A question enumeration cannot finish goes to Z3;
 * an "unknown" keeps the member, as values_in's minimisation does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check_impl.h"
#include "util/util.h"

#ifndef PROBE_MIN_DIMS
#define PROBE_MIN_DIMS 32     /* open named dims of a component worth probing (-D for test builds) */
#endif
#define PROBE_VISITS (1u << 16) /* points one explanation question may visit */
#define PROBE_WALK 4096       /* nodes of one guard the linearity walk visits */
#define PROBE_CANDS 10        /* values tried per dim */

/* One shape found: dim `dim` at `v`, failing the checked constraints fail[k0 .. k0 + nk - 1]. */
typedef struct cand {
    size_t dim;
    sg_int v;
    size_t k0, nk;
    size_t score, bu;       /* pick's: its lowest score and the first constraint scoring it */
    bool dirty;             /* ... to be scored again */
} cand;

/* What the probe knows of one component (local indices: positions in dims[] and cons[]). */
typedef struct probe {
    long comp;
    size_t nb;              /* value slots of the pool (symbol indices) */
    sg_int *ev;             /* [nb] symbol values: the example sizes outside an evaluation */
    sg_int *val;            /* [ninputs] dim values: the example sizes outside an evaluation */
    size_t *loc;            /* [ninputs] local index of an input dim of the component, else SIZE_MAX */
    size_t *cloc;           /* [ncons] local index of a constraint of the component, else SIZE_MAX */
    size_t *dims, nd;       /* the component's input dims */
    size_t *ds_start, *ds;  /* symbols (problem index) sized by local dim j: ds[ds_start[j] ..] */
    size_t *cons, nc;       /* its constraints, unbacked ones left out */
    size_t *cd_start, *cd;  /* local dims constraint t touches */
    size_t *dc_start, *dc;  /* local constraints touching local dim j */
    cand *cands;
    size_t ncand, capc;
    size_t *fail, nfail, capf;
    unsigned char *mark;    /* [nd] scratch */
    unsigned char *cmark;   /* [nc] scratch */
    /* pick's scores, kept from round to round (pick_init) */
    size_t *nopen;          /* [nc] open dims constraint t touches */
    unsigned char *was_open; /* [nd] dim j open at the last round */
    size_t *uc_start, *uc;  /* candidates failing constraint t: uc[uc_start[t] ..] */
    size_t *stack;          /* [nd] scratch */
    /* the explanation being minimised (sg_check__probe_ask) */
    const sg_term *const *lits;
    const int *kind_of;
    const size_t *index_of;
    size_t nlits;
    const sg_int *cex;
} probe;

static void probe_free(probe *pr)
{
    SG_FREE_ALL(pr->ev, pr->val, pr->loc, pr->cloc, pr->dims, pr->ds_start, pr->ds, pr->cons, pr->cd_start, pr->cd,
                pr->dc_start, pr->dc, pr->cands, pr->fail, pr->mark, pr->cmark, pr->stack,
                pr->nopen, pr->was_open, pr->uc_start, pr->uc);
}

/* ---- Which components ------------------------------------------------------------------- */

/* Does `e` mention a symbol? *nl set when it multiplies two such factors or divides by one (a
 * power of one too); *work counts the nodes visited (over PROBE_WALK: counted non-linear). */
static bool walk_nl(const sg_expr *e, bool *nl, unsigned *work, int depth)
{
    sg_kind k = sg_expr_kind(e);
    size_t i, n = sg_expr_nargs(e), nsym = 0;
    bool any = false;
    if (++*work > PROBE_WALK || depth > 64) {
        *nl = true;
        return true;
    }
    if (k == SG_SYM)
        return true;
    for (i = 0; i < n; i++) {
        bool s = walk_nl(sg_expr_arg(e, i), nl, work, depth + 1);
        any |= s;
        nsym += s;
        if (s && i > 0 && (k == SG_FLOORDIV || k == SG_CLEANDIV || k == SG_CEILDIV || k == SG_MOD ||
                           k == SG_PYMOD || k == SG_MODIDX || k == SG_TRUEDIV || k == SG_POWNAT))
            *nl = true;
    }
    if ((k == SG_MUL && nsym >= 2) || ((k == SG_POW || k == SG_POWNAT) && any))
        *nl = true;
    return any;
}

bool sg_check__expr_nonlinear(const sg_expr *e)
{
    bool nl = false;
    unsigned work = 0;
    walk_nl(e, &nl, &work, 0);
    return nl;
}

static _Thread_local size_t probe_min_dims = PROBE_MIN_DIMS;

void sg_check__set_probe_min_dims(size_t n) { probe_min_dims = n ? n : PROBE_MIN_DIMS; }
size_t sg_check__probe_min_dims(void) { return probe_min_dims; }

/* A large component with a non-linear checked guard: where Z3 struggles, and where no corpus
 * trace lies (its outputs stay Z3's). */
static bool worth_probing(checker *c, long comp)
{
    sg_problem *p = c->p;
    size_t j, i, open = 0;
    FOR_MEMBERS(c->inputs, comp, j, i)
        open += p->named[i] && !c->decided[i] && c->fixed_kind[i] == FIX_NONE;
    if (open < probe_min_dims)
        return false;
    FOR_MEMBERS(c->cons, comp, j, i) {
        const sg_constraint *cn = &p->cons[i];
        if (cn->checked && cn->kind == SG_CORE_GUARD && cn->expr && sg_check__expr_nonlinear(cn->expr))
            return true;
    }
    return false;
}

/* What spec item of dim i allows: D = a*R + b for R in [lo, hi] (an infinite side: lo_ok / hi_ok
 * false) with D >= dmin when dmin_ok. A Dim is R itself; a derived dim A*root + B is its root's
 * value R from the root's floor (problem.c's encoding: the root from 2, the size itself from 2);
 * a static dim R = its size; AUTO/DYNAMIC their bounds. r0: R at the example size. */
typedef struct dom {
    sg_int a, b, lo, hi, dmin, r0;
    bool lo_ok, hi_ok, dmin_ok, r0_ok;
    const char *root; /* the spec root a Dim or derived dim ties its size to, or NULL */
} dom;

/* Fill *d for dim i; false when the probe does not read that spec (a derived dim not affine). */
static bool spec_domain(checker *c, size_t i, dom *d)
{
    const sg_input_dim *in = &c->p->inputs[i];
    sg_bound l, h, zero = {0, 0};
    memset(d, 0, sizeof *d);
    d->a = 1;
    switch (in->kind) {
    case SG_SPEC_DIM:
        l = sg_trace__dim_floor(c->p->trace, in->min);
        h = in->max;
        d->root = in->name;
        break;
    case SG_SPEC_DERIVED: {
        sg_bound m;
        if (!sg_trace__derived_affine(in, &d->a, &d->b) || d->a < 1)
            return false;
        l = sg_trace__root_floor(c->p->trace, in);
        h = in->root_max;
        m = sg_trace__dim_floor(c->p->trace, zero);
        d->dmin = m.v;
        d->dmin_ok = m.inf == 0;
        d->root = in->root_name;
        break;
    }
    case SG_SPEC_STATIC: case SG_SPEC_UNSET:
        l.v = h.v = in->has_static_size ? in->static_size : in->size;
        l.inf = h.inf = 0;
        break;
    case SG_SPEC_AUTO: case SG_SPEC_DYNAMIC:
        if (in->has_bounds) {
            l = in->min;
            h = in->max;
        } else {
            l.inf = -1;
            h.inf = 1;
            l.v = h.v = 0;
        }
        break;
    default:
        return false;
    }
    d->lo = l.v;
    d->lo_ok = l.inf == 0;
    d->hi = h.v;
    d->hi_ok = h.inf == 0;
    /* the example size's R (a >= 1); sizes are far inside 128 bits */
    d->r0_ok = (in->size - d->b) % d->a == 0;
    d->r0 = (in->size - d->b) / d->a;
    return true;
}

/* Is R = r in d's range, and its size a*r + b >= dmin? */
static bool dom_has(const dom *d, sg_int r)
{
    return (!d->lo_ok || r >= d->lo) && (!d->hi_ok || r <= d->hi) && (!d->dmin_ok || d->a * r + d->b >= d->dmin);
}

/* ---- Exact evaluation ---------------------------------------------------------------------- */

/* Local dim j at value v (its symbols too). */
static void set_dim(checker *c, probe *pr, size_t j, sg_int v)
{
    size_t t;
    pr->val[pr->dims[j]] = v;
    for (t = pr->ds_start[j]; t < pr->ds_start[j + 1]; t++)
        pr->ev[sg_expr_symbol_index(c->p->syms[pr->ds[t]].sym)] = v;
}

/* Local constraint t at the values set: 1 it holds, 0 it does not, -1 cannot tell
 * (sg_check__holds_at). */
static int holds(checker *c, probe *pr, size_t t)
{
    const sg_constraint *cn = &c->p->cons[pr->cons[t]];
    return sg_check__holds_at(c->p, cn, pr->ev, pr->nb, cn->kind == SG_CORE_INPUT ? pr->val[cn->index] : 0);
}

int sg_check__holds_at(const sg_problem *p, const sg_constraint *cn, const sg_int *ev, size_t nb, sg_int dval)
{
    const sg_symbol_info *si;
    sg_value v;
    int rc;
    switch (cn->kind) {
    case SG_CORE_GUARD:
        if (!cn->expr)
            return -1;
        rc = sg_expr_eval(&v, p->pool, cn->expr, ev, nb, NULL);
        if (rc == SG_EUNDEFINED)
            return 0;
        if (rc || v.kind != SG_VAL_BOOL)
            return -1;
        return v.num != 0;
    case SG_CORE_RANGE: {
        sg_int x;
        si = &p->syms[cn->index];
        if (sg_expr_symbol_index(si->sym) >= nb)
            return -1;
        x = ev[sg_expr_symbol_index(si->sym)];
        return (si->lo.inf || x >= si->lo.v) && (si->hi.inf || x <= si->hi.v);
    }
    case SG_CORE_REPLACEMENT:
        si = &p->syms[cn->index];
        if (!si->replacement || sg_expr_symbol_index(si->sym) >= nb ||
            sg_expr_eval(&v, p->pool, si->replacement, ev, nb, NULL) || v.kind != SG_VAL_INT)
            return -1;
        return ev[sg_expr_symbol_index(si->sym)] == v.num;
    case SG_CORE_INPUT:
        if (!p->inputs[cn->index].value ||
            sg_expr_eval(&v, p->pool, p->inputs[cn->index].value, ev, nb, NULL) || v.kind != SG_VAL_INT)
            return -1;
        return dval == v.num;
    default:
        return -1;
    }
}

/* ---- Building the probe ------------------------------------------------------------------- */

/* Add local dim of symbol expression `s` to cd (via the symbol's defining dim); false when the
 * symbol is none of the component's dims' sizes. */
static bool push_sym_dim(checker *c, probe *pr, const long *symk, const sg_expr *s, size_t **v, size_t *n, size_t *cap)
{
    size_t idx = sg_expr_symbol_index(s), *slot;
    long k, i;
    if (idx >= pr->nb || (k = symk[idx]) < 0 || (i = c->p->sym_input[k]) < 0 || pr->loc[i] == SIZE_MAX)
        return false;
    if (!(slot = sg__push((void **)v, cap, n, sizeof **v)))
        return false;
    *slot = pr->loc[i];
    return true;
}

/* The dims each constraint touches (symbols mapped to their dims; a traced shape also its dim);
 * false when a constraint reaches a symbol the probe cannot value, or out of memory. */
static bool build_touch(checker *c, probe *pr, const long *symk)
{
    sg_problem *p = c->p;
    size_t t, m, cap = 0, n = 0, *v = NULL;
    bool ok = true;
    pr->cd_start[0] = 0;
    for (t = 0; t < pr->nc && ok; t++) {
        const sg_constraint *cn = &p->cons[pr->cons[t]];
        const sg_expr *es[2] = {cn->expr, NULL};
        size_t e, from = n, a, b;
        if (cn->kind == SG_CORE_REPLACEMENT)
            es[1] = p->syms[cn->index].replacement;
        if (cn->kind == SG_CORE_INPUT) {
            size_t *slot = sg__push((void **)&v, &cap, &n, sizeof *v);
            if (!slot || pr->loc[cn->index] == SIZE_MAX) {
                ok = false;
                break;
            }
            *slot = pr->loc[cn->index];
        }
        for (e = 0; e < 2 && ok; e++) {
            const sg_expr **syms = NULL;
            size_t ns = 0;
            if (!es[e])
                continue;
            if (sg_expr_symbols(&syms, &ns, p->pool, es[e], NULL)) {
                ok = false;
                break;
            }
            for (m = 0; m < ns && ok; m++)
                ok = push_sym_dim(c, pr, symk, syms[m], &v, &n, &cap);
            sg_free((void *)syms);
        }
        /* distinct dims only */
        for (a = from, m = from; a < n; a++) {
            for (b = from; b < m && v[b] != v[a]; b++)
                ;
            if (b == m)
                v[m++] = v[a];
        }
        n = m;
        pr->cd_start[t + 1] = n;
    }
    pr->cd = v;
    return ok && (n == 0 || v);
}

/* dc: the constraints touching each local dim (the transpose of cd). */
static bool build_dc(probe *pr)
{
    size_t t, m, *fill;
    if (!(pr->dc = sg__malloc((pr->cd_start[pr->nc] + 1) * sizeof *pr->dc)) ||
        !(fill = sg__calloc(pr->nd + 2, sizeof *fill)))
        return false;
    for (t = 0; t < pr->nc; t++)
        for (m = pr->cd_start[t]; m < pr->cd_start[t + 1]; m++)
            pr->dc_start[pr->cd[m] + 1]++;
    for (m = 0; m < pr->nd; m++)
        pr->dc_start[m + 1] += pr->dc_start[m];
    memcpy(fill, pr->dc_start, (pr->nd + 1) * sizeof *fill);
    for (t = 0; t < pr->nc; t++)
        for (m = pr->cd_start[t]; m < pr->cd_start[t + 1]; m++)
            pr->dc[fill[pr->cd[m]]++] = t;
    sg_free(fill);
    return true;
}

/*
 * Fill the probe of component `comp`: 1 when the probe can read it (every dim a Dim, a static,
 * AUTO/DYNAMIC or pinned one; no adopted relation; each open Dim name once; every symbol the size
 * of one of its dims; the example sizes a shape of S' that passes every constraint), 0 when it
 * cannot, SG_ENOMEM.
 */
static int probe_init(checker *c, probe *pr, long comp)
{
    sg_problem *p = c->p;
    size_t j, i, k, t, n;
    long *symk = NULL;
    int rc = 0;

    pr->comp = comp;
    pr->nb = sg_pool_nsymbols(p->pool);
    pr->nd = c->inputs.start[comp + 1] - c->inputs.start[comp];
    if (!SG_CALLOC_ALL(SG_SLOT(pr->ev, pr->nb + 1), SG_SLOT(pr->val, p->ninputs + 1), SG_SLOT(pr->loc, p->ninputs + 1),
                       SG_SLOT(pr->cloc, p->ncons + 1), SG_SLOT(pr->dims, pr->nd + 1), SG_SLOT(pr->ds_start, pr->nd + 2),
                       SG_SLOT(pr->dc_start, pr->nd + 2), SG_SLOT(pr->mark, pr->nd + 1), SG_SLOT(pr->stack, pr->nd + 1),
                       SG_SLOT(pr->cons, c->cons.start[comp + 1] - c->cons.start[comp] + 1),
                       SG_SLOT(pr->cd_start, c->cons.start[comp + 1] - c->cons.start[comp] + 2),
                       SG_SLOT(pr->cmark, c->cons.start[comp + 1] - c->cons.start[comp] + 1),
                       SG_SLOT(symk, pr->nb + 1)))
        goto nomem;
    for (i = 0; i < p->ninputs; i++) {
        pr->loc[i] = SIZE_MAX;
        pr->val[i] = p->inputs[i].size;
    }
    for (k = 0; k < p->ncons; k++)
        pr->cloc[k] = SIZE_MAX;
    for (k = 0; k < pr->nb; k++)
        symk[k] = -1;
    n = 0;
    FOR_MEMBERS(c->inputs, comp, j, i) {
        size_t m;
        dom d, e;
        pr->loc[i] = n;
        pr->dims[n++] = i;
        if (c->fixed_kind[i] == FIX_PIN)
            continue;
        if (c->fixed_kind[i] != FIX_NONE || !spec_domain(c, i, &d))
            goto cannot;
        if (!d.r0_ok || !dom_has(&d, d.r0))
            goto cannot; /* the example sizes are no shape of S' */
        if (d.root) /* one open dim per spec root: no root ties two dims */
            for (m = 0; m + 1 < n; m++)
                if (c->fixed_kind[pr->dims[m]] == FIX_NONE && spec_domain(c, pr->dims[m], &e) && e.root &&
                    strcmp(e.root, d.root) == 0)
                    goto cannot;
    }
    /* a pinned Dim pins its root once it is the root's last plain dim (sg_check__pin): the derived
     * dims of that root then follow it, and moving one alone would leave S'; the probe stands aside
     * when an open dim shares its root with a pinned Dim */
    for (j = 0; j < n; j++) {
        const sg_input_dim *dj = &p->inputs[pr->dims[j]];
        long x;
        size_t m;
        if (c->fixed_kind[pr->dims[j]] != FIX_NONE || dj->kind != SG_SPEC_DERIVED ||
            (x = sg_problem_x_index(p, dj->root_name)) < 0 || p->x_nplain[x] == 0)
            continue; /* only a derived dim of a root some Dim names can follow a pin */
        for (m = 0; m < n; m++)
            if (c->fixed_kind[pr->dims[m]] == FIX_PIN && p->inputs[pr->dims[m]].kind == SG_SPEC_DIM &&
                strcmp(p->inputs[pr->dims[m]].name, dj->root_name) == 0)
                goto cannot;
    }
    /* symbols: each the size of a dim of the component, an integer with a value slot */
    FOR_MEMBERS(c->syms, comp, j, k) {
        const sg_symbol_info *si = &p->syms[k];
        size_t idx = sg_expr_symbol_index(si->sym);
        long i2 = p->sym_input[k];
        if (sg_expr_sort(si->sym) != SG_SORT_INT || idx >= pr->nb || i2 < 0 || pr->loc[i2] == SIZE_MAX ||
            !sg_q_def(p, k))
            goto cannot;
        symk[idx] = (long)k;
        pr->ds_start[pr->loc[i2] + 1]++;
    }
    for (j = 0; j < pr->nd; j++)
        pr->ds_start[j + 1] += pr->ds_start[j];
    if (!(pr->ds = sg__malloc((pr->ds_start[pr->nd] + 1) * sizeof *pr->ds)))
        goto nomem;
    {
        size_t *fill = sg__malloc((pr->nd + 1) * sizeof *fill);
        if (!fill)
            goto nomem;
        memcpy(fill, pr->ds_start, (pr->nd + 1) * sizeof *fill);
        FOR_MEMBERS(c->syms, comp, j, k)
            pr->ds[fill[pr->loc[p->sym_input[k]]]++] = k;
        sg_free(fill);
    }
    for (j = 0; j < pr->nd; j++)
        set_dim(c, pr, j, p->inputs[pr->dims[j]].size);
    pr->nc = 0;
    FOR_MEMBERS(c->cons, comp, j, k)
        if (!p->cons[k].unbacked) {
            pr->cloc[k] = pr->nc;
            pr->cons[pr->nc++] = k;
        }
    if (!build_touch(c, pr, symk))
        goto cannot; /* (out of memory here only makes the probe stand aside) */
    if (!build_dc(pr))
        goto nomem;
    for (t = 0; t < pr->nc; t++) /* the example sizes pass every constraint */
        if (holds(c, pr, t) != 1)
            goto cannot;
    rc = 1;
    goto cleanup;
cannot:
    rc = 0;
    goto cleanup;
nomem:
    rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
cleanup:
    sg_free(symk);
    return rc;
}

/* The sizes tried for local dim j: its spec range's ends and their neighbours, the example's
 * neighbours (a congruence the example keeps breaks next to it), over the dim's R (a derived
 * dim's root); n returned. */
static size_t cand_values(checker *c, probe *pr, size_t j, sg_int *out)
{
    size_t i = pr->dims[j], n = 0, m, nt = 0;
    sg_int e = c->p->inputs[i].size, try[PROBE_CANDS];
    dom d;
    if (!spec_domain(c, i, &d) || !d.r0_ok)
        return 0;
    if (d.lo_ok) {
        try[nt++] = d.lo;
        try[nt++] = d.lo + 1;
        try[nt++] = d.lo + 2;
        try[nt++] = d.lo + 3;
    }
    try[nt++] = d.r0 + 1;
    try[nt++] = d.r0 - 1;
    try[nt++] = d.r0 + 2;
    try[nt++] = d.r0 - 2;
    if (d.hi_ok) {
        try[nt++] = d.hi;
        try[nt++] = d.hi - 1;
    }
    for (m = 0; m < nt; m++) {
        sg_int v = d.a * try[m] + d.b;
        size_t q;
        if (v == e || !dom_has(&d, try[m]))
            continue;
        for (q = 0; q < n && out[q] != v; q++)
            ;
        if (q == n)
            out[n++] = v;
    }
    return n;
}

/* Every one-dim shape of the open dims (each dim at each of its cand_values) that passes the
 * assumed constraints and fails a checked one, into pr->cands (in dim order, then value order).
 * 0 or SG_ENOMEM. */
static int scan(checker *c, probe *pr)
{
    sg_problem *p = c->p;
    size_t j;
    for (j = 0; j < pr->nd; j++) {
        size_t i = pr->dims[j], nv, m, t;
        sg_int vals[PROBE_CANDS];
        if (!p->named[i] || c->decided[i] || c->fixed_kind[i] != FIX_NONE)
            continue;
        nv = cand_values(c, pr, j, vals);
        for (m = 0; m < nv; m++) {
            size_t k0 = pr->nfail;
            bool ok = true;
            set_dim(c, pr, j, vals[m]);
            for (t = pr->dc_start[j]; t < pr->dc_start[j + 1] && ok; t++) {
                size_t u = pr->dc[t];
                int h = holds(c, pr, u);
                if (h < 0 || (h == 0 && !p->cons[pr->cons[u]].checked))
                    ok = false; /* cannot tell, or no shape of S' */
                else if (h == 0) {
                    size_t *slot = sg__push((void **)&pr->fail, &pr->capf, &pr->nfail, sizeof *pr->fail);
                    if (!slot) {
                        set_dim(c, pr, j, p->inputs[i].size);
                        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
                    }
                    *slot = u;
                }
            }
            set_dim(c, pr, j, p->inputs[i].size);
            if (!ok || pr->nfail == k0) {
                pr->nfail = k0;
                continue;
            }
            {
                cand *cd = sg__push((void **)&pr->cands, &pr->capc, &pr->ncand, sizeof *pr->cands);
                if (!cd)
                    return sg_error_set(c->err, SG_ENOMEM, "out of memory");
                cd->dim = j;
                cd->v = vals[m];
                cd->k0 = k0;
                cd->nk = pr->nfail - k0;
            }
        }
    }
    return 0;
}

/* Is local dim j open: named, not decided, not pinned? */
static bool open_dim(checker *c, probe *pr, size_t j)
{
    size_t i = pr->dims[j];
    return c->p->named[i] && !c->decided[i] && c->fixed_kind[i] == FIX_NONE;
}

/*
 * pick's scores are kept from round to round: a round closes a few dims (refuted and pinned), which
 * lowers the open-dim count of the constraints touching them, and only the candidates failing one of
 * those constraints are scored again (scoring every candidate's every failing constraint each round
 * was quadratic in the component: a hub guard fails for every candidate). 0 or SG_ENOMEM.
 */
static int pick_init(checker *c, probe *pr)
{
    size_t a, m, t, *fill = NULL;
    if (!SG_CALLOC_ALL(SG_SLOT(pr->nopen, pr->nc + 1), SG_SLOT(pr->was_open, pr->nd + 1),
                       SG_SLOT(pr->uc_start, pr->nc + 2), SG_SLOT(pr->uc, pr->nfail + 1), SG_SLOT(fill, pr->nc + 1)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (a = 0; a < pr->ncand; a++) {
        pr->cands[a].dirty = true;
        for (m = pr->cands[a].k0; m < pr->cands[a].k0 + pr->cands[a].nk; m++)
            pr->uc_start[pr->fail[m] + 1]++;
    }
    for (t = 0; t < pr->nc; t++)
        pr->uc_start[t + 1] += pr->uc_start[t];
    memcpy(fill, pr->uc_start, pr->nc * sizeof *fill);
    for (a = 0; a < pr->ncand; a++)
        for (m = pr->cands[a].k0; m < pr->cands[a].k0 + pr->cands[a].nk; m++)
            pr->uc[fill[pr->fail[m]]++] = a;
    sg_free(fill);
    for (t = 0; t < pr->nc; t++)
        for (m = pr->cd_start[t]; m < pr->cd_start[t + 1]; m++)
            pr->nopen[t] += open_dim(c, pr, pr->cd[m]);
    for (m = 0; m < pr->nd; m++)
        pr->was_open[m] = open_dim(c, pr, m);
    return 0;
}

/* The dims opened or closed since the last round: the counts of their constraints, and the
 * candidates failing those scored again. */
static void pick_update(checker *c, probe *pr)
{
    size_t j, t, m;
    for (j = 0; j < pr->nd; j++) {
        bool now = open_dim(c, pr, j);
        if (now == (pr->was_open[j] != 0))
            continue;
        pr->was_open[j] = now;
        for (t = pr->dc_start[j]; t < pr->dc_start[j + 1]; t++) {
            size_t u = pr->dc[t];
            pr->nopen[u] = now ? pr->nopen[u] + 1 : pr->nopen[u] - 1;
            for (m = pr->uc_start[u]; m < pr->uc_start[u + 1]; m++)
                pr->cands[pr->uc[m]].dirty = true;
        }
    }
}

/* The shape of this round: the open dim's shape whose failing constraint involves the fewest open
 * dims, then one of the moved dim alone (torch's "n0 % 4 == 0" rather than "n0 % (A*B) == 0" with
 * A and B pinned), then a guard before a traced range or shape; the first of the lowest score;
 * false when none is left. */
static bool pick(checker *c, probe *pr, size_t *ci, size_t *ti)
{
    size_t a, m, best = SIZE_MAX;
    pick_update(c, pr);
    for (a = 0; a < pr->ncand; a++) {
        cand *cd = &pr->cands[a];
        if (!pr->was_open[cd->dim])
            continue;
        if (cd->dirty) {
            cd->score = SIZE_MAX;
            for (m = cd->k0; m < cd->k0 + cd->nk; m++) {
                size_t u = pr->fail[m];
                size_t score = 4 * pr->nopen[u] + 2 * (pr->cd_start[u + 1] - pr->cd_start[u] > 1) +
                               (c->p->cons[pr->cons[u]].kind != SG_CORE_GUARD);
                if (score < cd->score) {
                    cd->score = score;
                    cd->bu = u;
                }
            }
            cd->dirty = false;
        }
        if (cd->score < best) {
            best = cd->score;
            *ci = a;
            *ti = cd->bu;
        }
    }
    return best != SIZE_MAX;
}

/* ---- Explanation questions by enumeration ---------------------------------------------------- */

/* Mark in pr->mark the dims reached from the marked ones through the assumed constraints (the
 * definitions are inside a dim: its symbols); marks the constraints used in pr->cmark. */
static void close_dims(checker *c, probe *pr)
{
    size_t top = 0, j, t;
    for (j = 0; j < pr->nd; j++)
        if (pr->mark[j])
            pr->stack[top++] = j;
    while (top) {
        size_t d = pr->stack[--top];
        for (t = pr->dc_start[d]; t < pr->dc_start[d + 1]; t++) {
            size_t u = pr->dc[t], q;
            if (c->p->cons[pr->cons[u]].checked || pr->cmark[u])
                continue;
            pr->cmark[u] = 1;
            for (q = pr->cd_start[u]; q < pr->cd_start[u + 1]; q++)
                if (!pr->mark[pr->cd[q]]) {
                    pr->mark[pr->cd[q]] = 1;
                    pr->stack[top++] = pr->cd[q];
                }
        }
    }
}

bool sg_check__probe_ask(checker *c, const sg_term *const *assume, size_t nassume, bool core, sg_q_result *r)
{
    probe *pr = c->prb;
    sg_problem *p = c->p;
    size_t a, j, t, nw = 0, *w = NULL, visits = 0;
    sg_int *at = NULL, *step = NULL;
    dom *dm = NULL;
    bool *kept = NULL, *vkept = NULL, *skept = NULL, answered = false, found = false;

    if (!SG_CALLOC_ALL(SG_SLOT(kept, pr->nlits + 1), SG_SLOT(vkept, pr->nd + 1), SG_SLOT(skept, pr->nd + 1),
                       SG_SLOT(w, pr->nd + 1), SG_SLOT(dm, pr->nd + 1), SG_SLOT(at, pr->nd + 1),
                       SG_SLOT(step, pr->nd + 1)))
        goto done;
    memset(pr->mark, 0, pr->nd);
    memset(pr->cmark, 0, pr->nc);
    for (a = 0; a < nassume; a++) {
        size_t m;
        for (m = 0; m < pr->nlits && pr->lits[m] != assume[a]; m++)
            ;
        if (m == pr->nlits)
            goto done; /* not one of the explanation's literals */
        kept[m] = true;
        if (pr->kind_of[m] == 2) {
            size_t u = pr->cloc[pr->index_of[m]], q;
            for (q = pr->cd_start[u]; q < pr->cd_start[u + 1]; q++)
                pr->mark[pr->cd[q]] = 1;
        } else {
            size_t d = pr->loc[pr->index_of[m]];
            pr->mark[d] = 1;
            if (pr->kind_of[m] == 0)
                vkept[d] = true;
            else
                skept[d] = true;
        }
    }
    close_dims(c, pr);
    /* each dim reached: fixed (a pin, a kept value: R is the size), or bounded by its kept spec
     * item (D = a*R + b, R over a finite range) */
    for (j = 0; j < pr->nd; j++) {
        size_t i = pr->dims[j];
        dom *d = &dm[j];
        if (!pr->mark[j])
            continue;
        w[nw++] = j;
        if (c->fixed_kind[i] == FIX_PIN || vkept[j]) {
            memset(d, 0, sizeof *d);
            d->a = 1;
            d->lo = d->hi = d->r0 = c->fixed_kind[i] == FIX_PIN ? p->inputs[i].size : pr->cex[i];
            d->lo_ok = d->hi_ok = true;
        } else if (!skept[j] || !spec_domain(c, i, d) || !d->lo_ok || !d->hi_ok || d->lo > d->hi || !d->r0_ok) {
            goto done; /* unbounded (or a range the probe does not read): Z3's question */
        }
        /* R from the example's outwards: r0, r0+1, r0-1, r0+2, ... within [lo, hi] */
        if (d->r0 < d->lo)
            d->r0 = d->lo;
        if (d->r0 > d->hi)
            d->r0 = d->hi;
        at[j] = d->r0;
        step[j] = 0;
    }
    /* odometer over the reached dims, each visiting its values in the order above */
    for (;;) {
        bool model = true;
        if (++visits > PROBE_VISITS)
            goto restore;
        for (a = 0; a < nw && model; a++) {
            const dom *d = &dm[w[a]];
            model = !d->dmin_ok || d->a * at[w[a]] + d->b >= d->dmin; /* the spec's D >= 2 */
            set_dim(c, pr, w[a], d->a * at[w[a]] + d->b);
        }
        for (a = 0; a < pr->nlits && model; a++) {
            int h;
            if (!kept[a] || pr->kind_of[a] != 2)
                continue;
            h = holds(c, pr, pr->cloc[pr->index_of[a]]);
            if (h < 0)
                goto restore;
            model = h == 1;
        }
        for (t = 0; t < pr->nc && model; t++) {
            int h;
            if (!pr->cmark[t])
                continue;
            h = holds(c, pr, t);
            if (h < 0)
                goto restore;
            model = h == 1;
        }
        if (model) {
            found = true;
            break;
        }
        /* the next point: the first dim that has a next value moves, the ones before restart */
        for (a = 0; a < nw; a++) {
            size_t d = w[a];
            sg_int s0 = dm[d].r0, nx;
            bool moved = false;
            /* value sequence s0, s0+1, s0-1, s0+2, ...: step counts the values visited */
            while (!moved) {
                sg_int k = ++step[d], off = (k + 1) / 2;
                if (off > dm[d].hi - dm[d].lo + 1)
                    break;
                nx = k % 2 ? s0 + off : s0 - off;
                if (nx >= dm[d].lo && nx <= dm[d].hi) {
                    at[d] = nx;
                    moved = true;
                }
            }
            if (moved)
                break;
            step[d] = 0;
            at[d] = s0;
        }
        if (a == nw)
            break; /* every point visited */
    }
    answered = true;
restore:
    for (a = 0; a < nw; a++)
        set_dim(c, pr, w[a], p->inputs[pr->dims[w[a]]].size);
    if (answered) {
        memset(r, 0, sizeof *r);
        r->answer = found ? SG_Q_SAT : SG_Q_UNSAT;
        if (!found && core) {
            if (!(r->core = sg__malloc((nassume + 1) * sizeof *r->core))) {
                answered = false;
                r->answer = SG_Q_UNKNOWN;
            } else {
                for (a = 0; a < nassume; a++)
                    r->core[a] = a;
                r->ncore = nassume;
            }
        }
    }
done:
    SG_FREE_ALL(kept, vkept, skept, w, dm, at, step);
    return answered;
}

/* ---- Rounds -------------------------------------------------------------------------------------- */

/*
 * One round: the shape of cand `ci` failing local constraint `u`, explained over its sub-problem
 * and recorded, its dims pinned. *stop set when the explanation did not come out unsatisfiable
 * (then the probe stops and values_in asks Z3 as before). 0 or an error code.
 */
static int explain(checker *c, probe *pr, size_t ci, size_t u, bool *stop)
{
    sg_problem *p = c->p;
    const cand *cd = &pr->cands[ci];
    tvec hard = TVEC_INIT, lits = TVEC_INIT;
    int *kind_of = NULL, *order = NULL, rc = 0;
    size_t *index_of = NULL, nlits, j, t, k;
    bool *keep = NULL, *flag = NULL, any;
    sg_int *cex = NULL;
    sg_q_result r;

    memset(&r, 0, sizeof r);
    memset(pr->mark, 0, pr->nd);
    memset(pr->cmark, 0, pr->nc);
    for (k = pr->cd_start[u]; k < pr->cd_start[u + 1]; k++)
        pr->mark[pr->cd[k]] = 1;
    pr->mark[cd->dim] = 1;
    close_dims(c, pr);
    nlits = 1 + 2 * pr->nd;
    if (!SG_CALLOC_ALL(SG_SLOT(cex, p->ninputs + 1), SG_SLOT(flag, p->ninputs + 1), SG_SLOT(kind_of, nlits + 1),
                       SG_SLOT(index_of, nlits + 1), SG_SLOT(keep, nlits + 1), SG_SLOT(order, nlits + 1))) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (k = 0; k < p->ninputs; k++)
        cex[k] = p->inputs[k].size;
    cex[pr->dims[cd->dim]] = cd->v;
    /* the sub-problem: definitions, pins and assumed constraints of the dims reached; the literals
     * of the failing constraint, the spec items and the values of those dims (values_in's order) */
    kind_of[lits.n] = 2;
    index_of[lits.n] = pr->cons[u];
    sg_check__tv_push(&hard, sg_q_implies(p, sg_q_lit(p, pr->cons[u]), sg_q_holds(p, pr->cons[u])));
    sg_check__tv_push(&lits, sg_q_lit(p, pr->cons[u]));
    for (t = 0; t < pr->nc; t++)
        if (pr->cmark[t])
            sg_check__tv_push(&hard, sg_q_holds(p, pr->cons[t]));
    for (j = 0; j < pr->nd; j++) {
        size_t i = pr->dims[j];
        if (!pr->mark[j])
            continue;
        for (t = pr->ds_start[j]; t < pr->ds_start[j + 1]; t++)
            sg_check__tv_push(&hard, sg_q_def(p, pr->ds[t]));
        sg_check__dim_lits(c, i, cex, &hard, &lits, kind_of, index_of);
    }
    if (hard.failed || lits.failed) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    pr->lits = lits.a;
    pr->kind_of = kind_of;
    pr->index_of = index_of;
    pr->nlits = lits.n;
    pr->cex = cex;
    c->prb = pr;
    if ((rc = sg_check__ask(c, hard.a, hard.n, lits.a, lits.n, false, true, &r)))
        goto cleanup;
    if (r.answer != SG_Q_UNSAT) {
        *stop = true; /* (cannot happen when the evaluation is exact; Z3 decides as before) */
        goto cleanup;
    }
    for (k = 0; k < r.ncore; k++)
        keep[r.core[k]] = true;
    for (k = 0; k < lits.n; k++) /* drop dim values first, then spec items, then the constraint */
        order[k] = kind_of[k];
    rc = sg_check__minimize(c, &hard, &lits, kind_of, order, keep);
    if (rc)
        goto cleanup;
    any = false;
    for (k = 0; k < lits.n; k++)
        if (keep[k] && kind_of[k] == 0)
            any = flag[index_of[k]] = true;
    if (!any) /* (the moved dim's value always stays: without it the example sizes are a model) */
        flag[pr->dims[cd->dim]] = true;
    rc = sg_check__record_cex(c, cex, flag, &lits, kind_of, index_of, keep);
    for (j = 0; j < pr->nd && !rc; j++)
        if (flag[pr->dims[j]])
            sg_check__pin(c, pr->dims[j]);
cleanup:
    c->prb = NULL;
    pr->lits = NULL;
    pr->nlits = 0;
    pr->cex = NULL;
    sg_q_result_dispose(p, &r);
    sg_check__tv_free(&hard);
    sg_check__tv_free(&lits);
    SG_FREE_ALL(kind_of, order, index_of, keep, flag, cex);
    return rc;
}

int sg_check__probe_component(checker *c, long comp)
{
    probe pr;
    int rc;
    bool stop = false;
    size_t ci, u;

    if (!sg_presolve_enabled() || !worth_probing(c, comp))
        return 0;
    memset(&pr, 0, sizeof pr);
    if ((rc = probe_init(c, &pr, comp)) <= 0 || (rc = scan(c, &pr)) != 0 || (rc = pick_init(c, &pr)) != 0)
        goto cleanup;
    while (!stop && !sg_check__stop(c) && pick(c, &pr, &ci, &u)) {
        if (c->budget.deadline > 0 && sg_problem_now() >= c->budget.deadline)
            break; /* values_in marks what is open "time budget" */
        if ((rc = explain(c, &pr, ci, u, &stop)))
            break;
    }
cleanup:
    probe_free(&pr);
    return rc < 0 ? rc : 0;
}
