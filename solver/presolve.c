/*
 * presolve.c - the presolve proper (solver/presolve.h): facts read into a
 * union-find over affine equalities, class domains and congruences, and
 * questions decided over the box of class roots (affine ones exactly, products
 * by sign through expr/poly.h, the rest by the interval evaluator).
 *
 * Nodes are numbered as problem.c's components: input dim i is node i,
 * symbol k is node ninputs + k, spec root n is node ninputs + nsyms + n.
 * Every node x of a class carries a map x = a * root + b with a = +-1 (so a
 * map inverts exactly); the root carries the class domain, an interval.
 * Nodes are reset lazily (an epoch stamp), so a new question set costs what
 * its facts touch, not the size of the trace.
 *
 * Not here: evaluating a question or the constraints at every point of a small
 * box (presolve_enum.c), the proof forest that explains relations
 * (presolve_forest.c). What the three share is in presolve_impl.h.
 */
#include <string.h>

#include "expr/poly.h"
#include "solver/presolve_impl.h"
#include "trace/trace_impl.h"
#include "util/lin.h"
#include "util/util.h"

#define ELIM_DEPTH 8  /* nesting of substitutions read through; deeper is left to Z3 */

static void fact_eq(struct sg_presolve *ps, const lin *f);
static void propagate(struct sg_presolve *ps, size_t r);

static _Thread_local bool presolve_off;

void sg_presolve_enable(bool on) { presolve_off = !on; }
bool sg_presolve_enabled(void) { return !presolve_off; }

/* ---- Names of spec roots ------------------------------------------------------------------ */

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    return h;
}

long sg_presolve__x_of(const sg_presolve *ps, const char *name)
{
    size_t h;
    if (!name || !ps->xcap)
        return -1;
    for (h = hash_str(name) & (ps->xcap - 1); ps->xmap[h].name; h = (h + 1) & (ps->xcap - 1))
        if (strcmp(ps->xmap[h].name, name) == 0)
            return (long)ps->xmap[h].x;
    return -1;
}

int sg_presolve_new(sg_presolve **out, sg_problem *p, sg_error *err)
{
    sg_presolve *ps = sg__calloc(1, sizeof *ps);
    size_t i;
    *out = NULL;
    if (!ps)
        return sg_error_set(err, SG_ENOMEM, "out of memory in presolve");
    ps->p = p;
    ps->nnodes = p->ninputs + p->nsyms + p->nx;
    ps->nbox = sg_pool_nsymbols(p->pool);
    for (ps->xcap = 16; ps->xcap < 2 * p->nx + 2; ps->xcap *= 2)
        ;
    if (!SG_CALLOC_ALL(SG_SLOT(ps->nodes, ps->nnodes + 1), SG_SLOT(ps->box, ps->nbox + 1), SG_SLOT(ps->xmap, ps->xcap),
                       SG_SLOT(ps->fepoch, ps->nnodes + 1), SG_SLOT(ps->fpar, ps->nnodes + 1),
                       SG_SLOT(ps->fdist, ps->nnodes + 1), SG_SLOT(ps->tree.seen, ps->nnodes + 1),
                       SG_SLOT(ps->tree.done, ps->nnodes + 1), SG_SLOT(ps->tree.par, ps->nnodes + 1),
                       SG_SLOT(ps->tree.dist, ps->nnodes + 1))) {
        sg_presolve_free(ps);
        return sg_error_set(err, SG_ENOMEM, "out of memory in presolve");
    }
    for (i = 0; i < ps->nbox; i++)
        ps->box[i].lo_inf = ps->box[i].hi_inf = true;
    for (i = 0; i < p->nx; i++) {
        size_t h;
        for (h = hash_str(p->names[i]) & (ps->xcap - 1); ps->xmap[h].name; h = (h + 1) & (ps->xcap - 1))
            ;
        ps->xmap[h].name = p->names[i];
        ps->xmap[h].x = i;
    }
    ps->epoch = 1;
    ps->tree.root = SIZE_MAX;
    *out = ps;
    return 0;
}

void sg_presolve_free(sg_presolve *ps)
{
    if (!ps)
        return;
    SG_FREE_ALL(ps->nodes, ps->touched, ps->defs, ps->box, ps->boxset, ps->xmap, ps->fepoch, ps->fpar,
                ps->fdist, ps->hseq, ps->edges, ps->estart, ps->eadj, ps->queue, ps->evals, ps->left,
                ps->tree.seen, ps->tree.done, ps->tree.par, ps->tree.dist, ps->tree.heap);
    sg_free(ps);
}

void sg_presolve_begin(sg_presolve *ps)
{
    ps->epoch++;
    ps->empty = false;
    ps->dropped = false;
    ps->ntouched = 0;
    ps->ndefs = 0;
    ps->box_stale = true;
    ps->nleft = 0;
    ps->inexact = false;
}

/* Bracket the reading of one fact: the dropped flag of this fact alone, kept apart from the
 * epoch's (sg_presolve_take_dropped), which it joins at the end. */
static bool fact_start(sg_presolve *ps)
{
    bool before = ps->dropped;
    ps->dropped = false;
    return before;
}

/* The fact read since fact_start: left out or read wider? `left` >= 0: an expression fact,
 * noted for sg_presolve_enumerate; < 0: one it cannot evaluate (the epoch becomes inexact). */
static void fact_end(sg_presolve *ps, bool before, long left)
{
    if (ps->dropped) {
        if (left < 0 ||
            sg__grow((void **)&ps->left, &ps->left_cap, ps->nleft + 1, sizeof *ps->left) != 0)
            ps->inexact = true;
        else
            ps->left[ps->nleft++] = (size_t)left;
    }
    ps->dropped |= before;
}

/* ---- Union-find ------------------------------------------------------------------------------ */

node *sg_presolve__get(sg_presolve *ps, size_t x)
{
    node *n = &ps->nodes[x];
    if (n->epoch != ps->epoch) {
        n->epoch = ps->epoch;
        n->par = x;
        n->size = 1;
        n->a = 1;
        n->b = 0;
        n->dom.lo_inf = n->dom.hi_inf = true;
        n->dom.lo = n->dom.hi = 0;
        n->elim = false;
        n->def = 0;
        if (sg__grow((void **)&ps->touched, &ps->touched_cap, ps->ntouched + 1, sizeof *ps->touched) == 0)
            ps->touched[ps->ntouched++] = x;
        else
            ps->empty = true; /* cannot track the box: decide nothing */
    }
    return n;
}

/* The root of x, with x = *a * root + *b; false on overflow (then nothing is decided). */
bool sg_presolve__find(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b)
{
    node *n = sg_presolve__get(ps, x);
    size_t r;
    sg_int pa, pb, nb;
    if (n->par == x) {
        *root = x;
        *a = 1;
        *b = 0;
        return true;
    }
    if (!sg_presolve__find(ps, n->par, &r, &pa, &pb))
        return false;
    /* x = a (pa r + pb) + b */
    if (!sg__mul(n->a, pb, &nb) || !sg__add(nb, n->b, &nb)) {
        ps->empty = true;
        return false;
    }
    n->a *= pa;
    n->b = nb;
    n->par = r;
    *root = r;
    *a = n->a;
    *b = n->b;
    return true;
}

/* The interval c * (iv - d), c = +-1; an overflowing side becomes infinite (wider: sound,
 * and *wide is set). */
static sg_interval map_iv(sg_interval iv, sg_int c, sg_int d, bool *wide)
{
    sg_interval r = iv;
    if (!r.lo_inf && !sg__sub(r.lo, d, &r.lo))
        r.lo_inf = *wide = true;
    if (!r.hi_inf && !sg__sub(r.hi, d, &r.hi))
        r.hi_inf = *wide = true;
    if (c < 0) {
        sg_interval s = r;
        if ((!s.hi_inf && s.hi == SG_INT_MIN) || (!s.lo_inf && s.lo == SG_INT_MIN))
            *wide = true;
        r.lo_inf = s.hi_inf || s.hi == SG_INT_MIN;
        r.lo = r.lo_inf ? 0 : -s.hi;
        r.hi_inf = s.lo_inf || s.lo == SG_INT_MIN;
        r.hi = r.hi_inf ? 0 : -s.lo;
    }
    return r;
}

static void meet(sg_presolve *ps, node *root, sg_interval iv)
{
    if (!sg_interval_meet(&root->dom, &iv))
        ps->empty = true;
    ps->box_stale = true;
}

/* x in iv. */
static void bound(sg_presolve *ps, size_t x, sg_interval iv)
{
    size_t r;
    sg_int a, b;
    if (!sg_presolve__find(ps, x, &r, &a, &b)) {
        ps->dropped = true;
        return;
    }
    /* x = a r + b: r = a (x - b) */
    meet(ps, sg_presolve__get(ps, r), map_iv(iv, a, b, &ps->dropped));
    if (sg_presolve__get(ps, r)->elim) /* r = def: the bound narrows def's variables */
        propagate(ps, r);
}

static void bound_point(sg_presolve *ps, size_t x, sg_int v)
{
    sg_interval iv = {v, v, false, false};
    bound(ps, x, iv);
}

/* x = a * y + b, a = +-1. */
static void unite(sg_presolve *ps, size_t x, sg_int a, size_t y, sg_int b)
{
    size_t rx, ry;
    sg_int ax, bx, ay, by, c, d, t;
    node *nx, *ny;
    if ((a != 1 && a != -1) || !sg_presolve__find(ps, x, &rx, &ax, &bx) || !sg_presolve__find(ps, y, &ry, &ay, &by)) {
        ps->dropped = true;
        return;
    }
    if (sg_presolve__get(ps, rx)->elim || sg_presolve__get(ps, ry)->elim) { /* a substituted class: x - a y - b = 0 over the roots left */
        lin f, g;
        if (!sg_presolve__lin_node(ps, x, &f) || !sg_presolve__lin_node(ps, y, &g) || !sg_lin_axpy(&f, -a, &g) || !sg__sub(f.k, b, &f.k))
            ps->dropped = true;
        else
            fact_eq(ps, &f);
        return;
    }
    /* ax rx + bx = a (ay ry + by) + b  =>  rx = c ry + d */
    c = ax * a * ay;
    if (!sg__mul(a, by, &t) || !sg__add(t, b, &t) || !sg__sub(t, bx, &t) || !sg__mul(ax, t, &d)) {
        ps->dropped = true; /* dropped: sound */
        return;
    }
    if (rx == ry) {
        if (c == 1 && d != 0)
            ps->empty = true; /* rx = rx + d: the facts contradict each other */
        else if (c == -1) {   /* 2 rx = d */
            sg_int h;
            if (d % 2 != 0)
                ps->empty = true;
            else if (sg__floordiv(d, 2, &h))
                bound_point(ps, rx, h);
            else
                ps->dropped = true;
        }
        return;
    }
    nx = sg_presolve__get(ps, rx);
    ny = sg_presolve__get(ps, ry);
    if (nx->size > ny->size) { /* attach ry under rx: ry = c (rx - d) */
        sg_int nd;
        if (!sg__mul(c, d, &nd)) {
            ps->dropped = true;
            return;
        }
        ny->par = rx;
        ny->a = c;
        ny->b = -nd;
        nx->size += ny->size;
        meet(ps, nx, map_iv(ny->dom, c, -nd, &ps->dropped));
    } else { /* attach rx under ry: rx = c ry + d */
        nx->par = ry;
        nx->a = c;
        nx->b = d;
        ny->size += nx->size;
        meet(ps, ny, map_iv(nx->dom, c, d, &ps->dropped));
    }
}

/* ---- Linear forms ---------------------------------------------------------------------------- */

long sg_presolve__sym_node(const sg_presolve *ps, const sg_expr *sym)
{
    const sg_symbol_info *si = sg_trace_symbol_info(ps->p->trace, sym);
    return si ? (long)(ps->p->ninputs + (size_t)(si - ps->p->syms)) : -1;
}

static bool lin_node_d(sg_presolve *ps, size_t x, lin *f, int depth);

/* g with every node replaced by its form over the class roots left (not substituted). */
static bool lin_resolve(sg_presolve *ps, const lin *g, lin *out, int depth)
{
    int j;
    lin h;
    sg_lin_zero(out);
    out->k = g->k;
    for (j = 0; j < g->n; j++)
        if (!lin_node_d(ps, g->v[j], &h, depth + 1) || !sg_lin_axpy(out, g->c[j], &h))
            return false;
    return true;
}

/* node x as a form over its root, or, when the root is substituted, over the roots of its
 * definition (recursively: a definition is made over roots that may be substituted later). */
static bool lin_node_d(sg_presolve *ps, size_t x, lin *f, int depth)
{
    size_t r;
    sg_int a, b;
    node *n;
    sg_lin_zero(f);
    if (depth > ELIM_DEPTH || !sg_presolve__find(ps, x, &r, &a, &b))
        return false;
    n = sg_presolve__get(ps, r);
    if (!n->elim) {
        f->k = b;
        return sg_lin_add_term(f, r, a);
    }
    {
        lin d = ps->defs[n->def], e;
        if (++ps->work > WORK_MAX || !lin_resolve(ps, &d, &e, depth))
            return false;
        f->k = b;
        return sg_lin_axpy(f, a, &e);
    }
}

bool sg_presolve__lin_node(sg_presolve *ps, size_t x, lin *f) { return lin_node_d(ps, x, f, 0); }

typedef struct lin_env {
    sg_presolve *ps;
    const sg_expr *over;
    size_t over_node;
} lin_env;

/* A symbol as a form over class roots: integer symbols only (floors, gcds and bounds below are
 * integer reasoning); `over` is read as node `over_node`. */
static bool lin_sym(void *ctx, const sg_expr *e, lin *f, int depth)
{
    const lin_env *env = ctx;
    long x = e == env->over ? (long)env->over_node : sg_presolve__sym_node(env->ps, e);
    (void)depth;
    if (sg_expr_sort(e) != SG_SORT_INT)
        return false;
    return x >= 0 && sg_presolve__lin_node(env->ps, (size_t)x, f);
}

/* `e` as a form over class roots; `over` (when non-NULL) is read as node `over_node`. */
bool sg_presolve__lin_of(sg_presolve *ps, const sg_expr *e, const sg_expr *over, size_t over_node, lin *f, int depth)
{
    lin_env env = {ps, over, over_node};
    return sg_expr_linear(e, lin_sym, &env, &ps->work, WORK_MAX, f, depth);
}

/* [min, max] of f over the box of root domains; false on overflow. */
static bool lin_range(sg_presolve *ps, const lin *f, sg_interval *out)
{
    int j;
    out->lo = out->hi = f->k;
    out->lo_inf = out->hi_inf = false;
    for (j = 0; j < f->n; j++) {
        const sg_interval *d = &sg_presolve__get(ps, f->v[j])->dom;
        sg_int c = f->c[j], t;
        bool lo_inf = c > 0 ? d->lo_inf : d->hi_inf, hi_inf = c > 0 ? d->hi_inf : d->lo_inf;
        sg_int lo = c > 0 ? d->lo : d->hi, hi = c > 0 ? d->hi : d->lo;
        if (lo_inf)
            out->lo_inf = true;
        else if (!out->lo_inf && (!sg__mul(c, lo, &t) || !sg__add(out->lo, t, &out->lo)))
            return false;
        if (hi_inf)
            out->hi_inf = true;
        else if (!out->hi_inf && (!sg__mul(c, hi, &t) || !sg__add(out->hi, t, &out->hi)))
            return false;
    }
    return true;
}

/* f ⋈ 0 for ⋈ one of EQ NE LT LE GT GE, decided over the box. */
sg_tri sg_presolve__decide_lin(sg_presolve *ps, sg_kind op, const lin *f)
{
    sg_interval r;
    sg_tri eq = SG_TRI_UNKNOWN;
    if (!lin_range(ps, f, &r))
        return SG_TRI_UNKNOWN;
    switch (op) {
    case SG_GE:
        return !r.lo_inf && r.lo >= 0 ? SG_TRI_TRUE : !r.hi_inf && r.hi < 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_GT:
        return !r.lo_inf && r.lo > 0 ? SG_TRI_TRUE : !r.hi_inf && r.hi <= 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_LE:
        return !r.hi_inf && r.hi <= 0 ? SG_TRI_TRUE : !r.lo_inf && r.lo > 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_LT:
        return !r.hi_inf && r.hi < 0 ? SG_TRI_TRUE : !r.lo_inf && r.lo >= 0 ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    case SG_EQ: case SG_NE: {
        sg_int g = 0;
        int j;
        if (!r.lo_inf && !r.hi_inf && r.lo == 0 && r.hi == 0)
            eq = SG_TRI_TRUE;
        else if ((!r.lo_inf && r.lo > 0) || (!r.hi_inf && r.hi < 0))
            eq = SG_TRI_FALSE;
        else {
            for (j = 0; j < f->n; j++) {
                if (f->c[j] == SG_INT_MIN)
                    return SG_TRI_UNKNOWN;
                g = sg__gcd(g, f->c[j] < 0 ? -f->c[j] : f->c[j]);
            }
            if (g > 1 && f->k % g != 0) /* no integer point solves it */
                eq = SG_TRI_FALSE;
        }
        if (op == SG_EQ || eq == SG_TRI_UNKNOWN)
            return eq;
        return eq == SG_TRI_TRUE ? SG_TRI_FALSE : SG_TRI_TRUE;
    }
    default:
        return SG_TRI_UNKNOWN;
    }
}

static bool is_rel(sg_kind k) { return k == SG_EQ || k == SG_NE || k == SG_LT || k == SG_LE || k == SG_GT || k == SG_GE; }

/* lhs - rhs of a relation as a form; false when either side is not affine. */
bool sg_presolve__rel_form(sg_presolve *ps, const sg_expr *e, lin *f)
{
    lin r;
    if (sg_expr_nargs(e) != 2 || !sg_presolve__lin_of(ps, sg_expr_arg(e, 0), NULL, 0, f, 0) ||
        !sg_presolve__lin_of(ps, sg_expr_arg(e, 1), NULL, 0, &r, 0))
        return false;
    return sg_lin_axpy(f, -1, &r);
}

/* ---- The interval fallback -------------------------------------------------------------------- */

/* Every touched symbol's projected domain into the box; every other symbol unbounded. */
static void refresh_box(sg_presolve *ps)
{
    size_t i;
    for (i = 0; i < ps->nboxset; i++)
        ps->box[ps->boxset[i]].lo_inf = ps->box[ps->boxset[i]].hi_inf = true;
    ps->nboxset = 0;
    for (i = 0; i < ps->ntouched; i++) {
        size_t x = ps->touched[i], r, idx;
        sg_int a, b;
        const sg_expr *sym;
        if (x < ps->p->ninputs || x >= ps->p->ninputs + ps->p->nsyms)
            continue;
        sym = ps->p->syms[x - ps->p->ninputs].sym;
        idx = sg_expr_symbol_index(sym);
        if (idx >= ps->nbox || !sg_presolve__find(ps, x, &r, &a, &b))
            continue;
        if (sg__grow((void **)&ps->boxset, &ps->boxset_cap, ps->nboxset + 1, sizeof *ps->boxset)) {
            ps->empty = true;
            return;
        }
        ps->boxset[ps->nboxset++] = idx;
        /* x = a r + b, r in dom: x in a * (dom - (-b)) ... map_iv computes c (iv - d) */
        {
            bool wide = false; /* the box is an over-approximation anyway */
            ps->box[idx] = map_iv(sg_presolve__get(ps, r)->dom, a, 0, &wide);
        }
        {
            sg_interval *bx = &ps->box[idx];
            if (!bx->lo_inf && !sg__add(bx->lo, b, &bx->lo))
                bx->lo_inf = true;
            if (!bx->hi_inf && !sg__add(bx->hi, b, &bx->hi))
                bx->hi_inf = true;
            if (sg_presolve__get(ps, r)->elim) { /* substituted: its definition's range narrows it too */
                lin f;
                sg_interval rng;
                ps->work = 0;
                if (sg_presolve__lin_node(ps, x, &f) && lin_range(ps, &f, &rng))
                    (void)sg_interval_meet(bx, &rng);
                if (!bx->lo_inf && !bx->hi_inf && bx->lo > bx->hi)
                    ps->empty = true; /* no model: decide nothing */
            }
        }
    }
    ps->box_stale = false;
}

/* ---- Facts ----------------------------------------------------------------------------------- */

/* ---- Substitution of affine equalities with several variables -------------------------------- */

/* ceil(a / c), floor(a / c) for c > 0; false on overflow. */
static bool div_ceil(sg_int a, sg_int c, sg_int *q)
{
    if (a == SG_INT_MIN || !sg__floordiv(-a, c, q))
        return false;
    *q = -*q;
    return true;
}

/*
 * r is substituted by r = def; r's domain holds on every model, so each variable v of def
 * (coefficient c) satisfies c v in dom(r) - range(def - c v): v's domain is narrowed by it
 * (one pass; every narrowing is implied by the facts, so sound). An overflow skips a side.
 */
static void propagate(sg_presolve *ps, size_t r)
{
    node *n = sg_presolve__get(ps, r);
    sg_interval dom = n->dom;
    lin d, e;
    int j;
    if (dom.lo_inf && dom.hi_inf)
        return;
    d = ps->defs[n->def];
    if (!lin_resolve(ps, &d, &e, 0))
        return;
    for (j = 0; j < e.n; j++) {
        lin rest = e;
        sg_interval rr, t, iv = {0, 0, true, true};
        sg_int c = e.c[j], lo, hi;
        rest.v[j] = rest.v[rest.n - 1];
        rest.c[j] = rest.c[rest.n - 1];
        rest.n--;
        if (!lin_range(ps, &rest, &rr))
            continue;
        /* c v = r - rest in [dom.lo - rr.hi, dom.hi - rr.lo] */
        t.lo_inf = dom.lo_inf || rr.hi_inf || !sg__sub(dom.lo, rr.hi, &t.lo);
        t.hi_inf = dom.hi_inf || rr.lo_inf || !sg__sub(dom.hi, rr.lo, &t.hi);
        if (c < 0) { /* (-c) v in [-t.hi, -t.lo] */
            sg_interval u = t;
            if (c == SG_INT_MIN)
                continue;
            c = -c;
            t.lo_inf = u.hi_inf || u.hi == SG_INT_MIN;
            t.lo = t.lo_inf ? 0 : -u.hi;
            t.hi_inf = u.lo_inf || u.lo == SG_INT_MIN;
            t.hi = t.hi_inf ? 0 : -u.lo;
        }
        if (!t.lo_inf && div_ceil(t.lo, c, &lo)) {
            iv.lo = lo;
            iv.lo_inf = false;
        }
        if (!t.hi_inf && sg__floordiv(t.hi, c, &hi)) {
            iv.hi = hi;
            iv.hi_inf = false;
        }
        if (!iv.lo_inf || !iv.hi_inf)
            meet(ps, sg_presolve__get(ps, e.v[j]), iv);
    }
}

/*
 * f = 0 with several variables (all class roots not substituted, as forms are read): the
 * variable of coefficient +-1 with the highest node number (spec roots, then symbols, then
 * dims) is substituted by the rest, exactly over the integers. The models are then no longer
 * a product of class domains (dom(v) only narrows the others, propagate), so the fact counts
 * as read wider (sg_presolve_take_dropped) for inference; questions are decided over the
 * roots left, every model being a point of their box. No unit coefficient: left out.
 */
static void eliminate(sg_presolve *ps, const lin *f)
{
    int j, piv = -1;
    sg_int c, t;
    lin d;
    node *n;
    for (j = 0; j < f->n; j++)
        if ((f->c[j] == 1 || f->c[j] == -1) && (piv < 0 || f->v[j] > f->v[piv]))
            piv = j;
    ps->dropped = true;
    if (piv < 0 || sg_presolve__get(ps, f->v[piv])->elim || sg_presolve__get(ps, f->v[piv])->par != f->v[piv])
        return;
    c = f->c[piv]; /* v = -c * (f - c v) */
    memset(&d, 0, sizeof d);
    for (j = 0; j < f->n; j++)
        if (j != piv && (!sg__mul(-c, f->c[j], &t) || !sg_lin_add_term(&d, f->v[j], t)))
            return;
    if (!sg__mul(-c, f->k, &d.k))
        return;
    if (sg__grow((void **)&ps->defs, &ps->defs_cap, ps->ndefs + 1, sizeof *ps->defs))
        return;
    ps->defs[ps->ndefs] = d;
    n = sg_presolve__get(ps, f->v[piv]);
    n->elim = true;
    n->def = ps->ndefs++;
    ps->box_stale = true;
    propagate(ps, f->v[piv]);
}

/* f = 0 as a fact. */
static void fact_eq(sg_presolve *ps, const lin *f)
{
    sg_int v;
    if (f->n == 0) {
        if (f->k != 0)
            ps->empty = true;
        return;
    }
    if (f->n == 1) { /* c x + k = 0 */
        if (f->k == SG_INT_MIN || f->c[0] == SG_INT_MIN)
            ps->dropped = true;
        else if (f->k % f->c[0] != 0)
            ps->empty = true;
        else if (sg__floordiv(-f->k, f->c[0], &v))
            bound_point(ps, f->v[0], v);
        else
            ps->dropped = true;
        return;
    }
    if (f->n == 2 && (f->c[0] == 1 || f->c[0] == -1) && (f->c[1] == 1 || f->c[1] == -1)) {
        sg_int k;
        if (sg__mul(-f->c[0], f->k, &k)) /* x = -c0 c1 y - c0 k */
            unite(ps, f->v[0], -f->c[0] * f->c[1], f->v[1], k);
        else
            ps->dropped = true;
        return;
    }
    eliminate(ps, f); /* several variables, or a non-unit coefficient */
}

/* f >= 0 as a fact (univariate only). */
static void fact_ge(sg_presolve *ps, const lin *f)
{
    sg_interval iv = {0, 0, true, true};
    sg_int c, q;
    if (f->n == 0) {
        if (f->k < 0)
            ps->empty = true;
        return;
    }
    if (f->n != 1 || f->k == SG_INT_MIN) {
        ps->dropped = true; /* several variables: left out */
        return;
    }
    c = f->c[0]; /* c x + k >= 0 */
    if (c > 0) { /* x >= ceil(-k / c) */
        if (!sg__floordiv(f->k, c, &q)) {
            ps->dropped = true;
            return;
        }
        iv.lo = -q;
        iv.lo_inf = false;
    } else { /* x <= floor(-k / c) = floor(k / -c) */
        if (c == SG_INT_MIN || !sg__floordiv(f->k, -c, &q)) {
            ps->dropped = true;
            return;
        }
        iv.hi = q;
        iv.hi_inf = false;
    }
    bound(ps, f->v[0], iv);
}

static void fact_expr(sg_presolve *ps, const sg_expr *e, int depth)
{
    sg_kind k = sg_expr_kind(e);
    lin f;
    size_t i;
    if (depth > 16 || ++ps->work > WORK_MAX) {
        ps->dropped = true;
        return;
    }
    if (k == SG_AND) {
        for (i = 0; i < sg_expr_nargs(e); i++)
            fact_expr(ps, sg_expr_arg(e, i), depth + 1);
        return;
    }
    if (k == SG_FALSE) {
        ps->empty = true;
        return;
    }
    if (k == SG_TRUE)
        return;
    if (!is_rel(k) || !sg_presolve__rel_form(ps, e, &f)) {
        ps->dropped = true;
        return;
    }
    switch (k) {
    case SG_EQ:
        fact_eq(ps, &f);
        break;
    case SG_GE:
        fact_ge(ps, &f);
        break;
    case SG_GT:
        if (sg__sub(f.k, 1, &f.k))
            fact_ge(ps, &f);
        else
            ps->dropped = true;
        break;
    case SG_LE: case SG_LT: {
        lin g;
        memset(&g, 0, sizeof g);
        if (sg_lin_axpy(&g, -1, &f) && (k == SG_LE || sg__sub(g.k, 1, &g.k)))
            fact_ge(ps, &g);
        else
            ps->dropped = true;
        break;
    }
    default:
        ps->dropped = true; /* Ne: left out */
        break;
    }
}

/* node x = e (over `over` read as `over_node`) */
static void fact_node_eq(sg_presolve *ps, size_t x, const sg_expr *e, const sg_expr *over, size_t over_node)
{
    lin f, g;
    if (!sg_presolve__lin_node(ps, x, &f) || !sg_presolve__lin_of(ps, e, over, over_node, &g, 0) || !sg_lin_axpy(&f, -1, &g)) {
        ps->dropped = true;
        return;
    }
    fact_eq(ps, &f);
}

static sg_interval iv_of(sg_bound lo, sg_bound hi)
{
    sg_interval iv = {lo.v, hi.v, lo.inf != 0, hi.inf != 0};
    return iv;
}

void sg_presolve_def(sg_presolve *ps, size_t k)
{
    const sg_problem *p = ps->p;
    const sg_symbol_info *si = &p->syms[k];
    size_t sn = p->ninputs + k, i;
    long x = -1;
    bool before = fact_start(ps);
    ps->work = 0;
    for (i = 0; i < si->nsources && x < 0; i++)
        x = sg_presolve__x_of(ps, si->sources[i]);
    if (p->sym_input[k] >= 0)
        unite(ps, sn, 1, (size_t)p->sym_input[k], 0);
    else if (x >= 0)
        unite(ps, sn, 1, p->ninputs + p->nsyms + (size_t)x, 0);
    else if (si->replacement && !si->unbacked)
        fact_node_eq(ps, sn, si->replacement, NULL, 0);
    /* only the replacement is an expression; the unions above never drop */
    fact_end(ps, before, p->sym_input[k] < 0 && x < 0 ? (long)(p->ncons + k) : -1);
}

static void spec_item(sg_presolve *ps, size_t i);

void sg_presolve_spec(sg_presolve *ps, size_t i)
{
    bool before = fact_start(ps);
    spec_item(ps, i);
    fact_end(ps, before, -1);
}

/* Dim i's spec item; one that cannot be read is left out (dropped). */
static void spec_item(sg_presolve *ps, size_t i)
{
    const sg_problem *p = ps->p;
    const sg_input_dim *d = &p->inputs[i];
    long x;
    ps->work = 0;
    switch (d->kind) {
    case SG_SPEC_DIM: {
        sg_bound lo = d->min;
        if ((x = sg_presolve__x_of(ps, d->name)) < 0) {
            ps->dropped = true;
            return;
        }
        lo = sg_trace__dim_floor(p->trace, lo);
        unite(ps, i, 1, p->ninputs + p->nsyms + (size_t)x, 0);
        bound(ps, i, iv_of(lo, d->max));
        break;
    }
    case SG_SPEC_DERIVED: {
        const sg_expr *sym = NULL;
        sg_int a = 0, b = 0;
        sg_bound none = {0, 1}, zero = {0, 0};
        sg_bound rlo = sg_trace__root_floor(p->trace, d), dlo = sg_trace__dim_floor(p->trace, zero);
        if ((x = sg_presolve__x_of(ps, d->root_name)) < 0) {
            ps->dropped = true;
            return;
        }
        /* the root and the size as problem.c encodes them (trace/spec.c) */
        bound(ps, p->ninputs + p->nsyms + (size_t)x, iv_of(rlo, d->root_max));
        bound(ps, i, iv_of(dlo, none));
        if (d->derived && sg_expr_affine(d->derived, &sym, &a, &b)) {
            if (!sym)
                bound_point(ps, i, b);
            else if (strcmp(sg_expr_symbol_name(sym), d->root_name) == 0 && (a == 1 || a == -1))
                unite(ps, i, a, p->ninputs + p->nsyms + (size_t)x, b);
            else if (strcmp(sg_expr_symbol_name(sym), d->root_name) == 0) { /* D = a X + b: substituted */
                lin f, g;
                if (!sg_presolve__lin_node(ps, i, &f) || !sg_presolve__lin_node(ps, p->ninputs + p->nsyms + (size_t)x, &g) ||
                    !sg_lin_axpy(&f, -a, &g) || !sg__sub(f.k, b, &f.k))
                    ps->dropped = true;
                else
                    fact_eq(ps, &f);
            } else {
                ps->dropped = true; /* over another symbol */
            }
        } else {
            ps->dropped = true; /* not affine */
        }
        break;
    }
    case SG_SPEC_STATIC: case SG_SPEC_UNSET:
        bound_point(ps, i, d->has_static_size ? d->static_size : d->size);
        break;
    case SG_SPEC_AUTO: case SG_SPEC_DYNAMIC:
        if (d->has_bounds)
            bound(ps, i, iv_of(d->min, d->max));
        break;
    }
}

void sg_presolve_pin(sg_presolve *ps, size_t i, sg_int size)
{
    bool before = fact_start(ps);
    bound_point(ps, i, size);
    fact_end(ps, before, -1);
}

void sg_presolve_pin_root(sg_presolve *ps, size_t x, sg_int value)
{
    bool before = fact_start(ps);
    if (x < ps->p->nx)
        bound_point(ps, ps->p->ninputs + ps->p->nsyms + x, value);
    else
        ps->dropped = true;
    fact_end(ps, before, -1);
}

static void relation(sg_presolve *ps, size_t i, size_t root);

void sg_presolve_relation(sg_presolve *ps, size_t i, size_t root)
{
    bool before = fact_start(ps);
    relation(ps, i, root);
    fact_end(ps, before, -1);
}

static void relation(sg_presolve *ps, size_t i, size_t root)
{
    const sg_problem *p = ps->p;
    const sg_expr *v = p->inputs[i].value;
    ps->work = 0;
    if (!v) {
        ps->dropped = true;
        return;
    }
    if (root == SIZE_MAX || root >= p->ninputs) {
        if (sg_expr_kind(v) == SG_INT)
            bound_point(ps, i, sg_expr_int_value(v));
        else
            ps->dropped = true;
        return;
    }
    if (sg_expr_kind(p->inputs[root].value) == SG_SYM) { /* D_i = value[sym := D_root] */
        fact_node_eq(ps, i, v, p->inputs[root].value, root);
        return;
    }
    fact_node_eq(ps, i, v, NULL, 0);
    fact_node_eq(ps, root, p->inputs[root].value, NULL, 0);
}

static void constraint(sg_presolve *ps, size_t k);

void sg_presolve_constraint(sg_presolve *ps, size_t k)
{
    bool before = fact_start(ps);
    constraint(ps, k);
    fact_end(ps, before, (long)k);
}

static void constraint(sg_presolve *ps, size_t k)
{
    const sg_problem *p = ps->p;
    const sg_constraint *c = &p->cons[k];
    const sg_symbol_info *si;
    ps->work = 0;
    switch (c->kind) {
    case SG_CORE_GUARD:
        if (c->expr)
            fact_expr(ps, c->expr, 0);
        else
            ps->dropped = true;
        break;
    case SG_CORE_RANGE:
        si = &p->syms[c->index];
        bound(ps, p->ninputs + c->index, iv_of(si->lo, si->hi));
        break;
    case SG_CORE_REPLACEMENT:
        fact_node_eq(ps, p->ninputs + c->index, p->syms[c->index].replacement, NULL, 0);
        break;
    case SG_CORE_INPUT:
        if (p->inputs[c->index].value)
            fact_node_eq(ps, c->index, p->inputs[c->index].value, NULL, 0);
        else
            ps->dropped = true;
        break;
    default:
        ps->dropped = true;
        break;
    }
}

bool sg_presolve_take_dropped(sg_presolve *ps)
{
    bool d = ps->dropped;
    ps->dropped = false;
    return d;
}

bool sg_presolve_consistent(const sg_presolve *ps) { return !ps->empty; }

bool sg_presolve_exact(const sg_presolve *ps) { return !ps->empty && !ps->dropped && !ps->inexact && ps->ndefs == 0; }

bool sg_presolve_form1(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b)
{
    lin f;
    if (ps->empty || x >= ps->nnodes)
        return false;
    ps->work = 0;
    if (!sg_presolve__lin_node(ps, x, &f) || f.n > 1 || ps->empty)
        return false;
    *root = f.n ? f.v[0] : SIZE_MAX;
    *a = f.n ? f.c[0] : 0;
    *b = f.k;
    return f.n == 0 || !sg_presolve__get(ps, f.v[0])->elim;
}

bool sg_presolve_substituted(const sg_presolve *ps) { return ps->ndefs > 0; }

bool sg_presolve_lin(sg_presolve *ps, size_t x, sg_lin *f, size_t *sub, sg_interval *sdom)
{
    size_t r;
    sg_int a, b;
    if (ps->empty || x >= ps->nnodes || !sg_presolve__find(ps, x, &r, &a, &b))
        return false;
    ps->work = 0;
    if (!sg_presolve__lin_node(ps, x, f) || ps->empty)
        return false;
    *sub = sg_presolve__get(ps, r)->elim ? r : SIZE_MAX;
    *sdom = sg_presolve__get(ps, r)->dom;
    return true;
}

bool sg_presolve_class(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b, sg_interval *dom)
{
    if (ps->empty || x >= ps->nnodes || !sg_presolve__find(ps, x, root, a, b) || sg_presolve__get(ps, *root)->elim)
        return false;
    *dom = sg_presolve__get(ps, *root)->dom;
    return !ps->empty;
}

/* ---- Questions ---------------------------------------------------------------------------------- */

/* The domain of class root v (sg_poly_dom). */
static bool root_dom(void *ctx, size_t v, sg_interval *out)
{
    *out = sg_presolve__get(ctx, v)->dom;
    return true;
}

/* A relation `a ⋈ b` between polynomials over class roots (expr/poly.h), decided by the sign of
 * a - b over the box: B*T*D == 4*B*T*(D//4) once D = 4*_D, _D != 4*H*_D. Total when read: every
 * operation a polynomial reads is defined everywhere. */
static sg_tri decide_poly(sg_presolve *ps, const sg_expr *e)
{
    lin_env env = {ps, NULL, 0};
    sg_poly a, b;
    if (sg_expr_nargs(e) != 2 ||
        !sg_expr_poly(sg_expr_arg(e, 0), lin_sym, &env, &ps->work, WORK_MAX, &a, 0) ||
        !sg_expr_poly(sg_expr_arg(e, 1), lin_sym, &env, &ps->work, WORK_MAX, &b, 0) || !sg_poly_sub(&a, &b))
        return SG_TRI_UNKNOWN;
    return sg_poly_decide(sg_expr_kind(e), &a, root_dom, ps);
}

/* `e` decided; *total: e is defined at every point (so Not / Or may use a FALSE). */
static sg_tri decide_bool(sg_presolve *ps, const sg_expr *e, bool *total, int depth)
{
    sg_kind k = sg_expr_kind(e);
    size_t i, n = sg_expr_nargs(e);
    lin f;
    *total = false;
    if (depth > 16 || ++ps->work > WORK_MAX)
        return SG_TRI_UNKNOWN;
    if (k == SG_TRUE || k == SG_FALSE) {
        *total = true;
        return k == SG_TRUE ? SG_TRI_TRUE : SG_TRI_FALSE;
    }
    if (is_rel(k) && sg_presolve__rel_form(ps, e, &f)) {
        *total = true;
        return sg_presolve__decide_lin(ps, k, &f);
    }
    if (is_rel(k)) {
        sg_tri r = decide_poly(ps, e);
        if (r != SG_TRI_UNKNOWN) {
            *total = true;
            return r;
        }
    }
    if (k == SG_AND || k == SG_OR) {
        bool all_total = true, any_true = false, any_false = false, all_true = true, all_false = true, t;
        for (i = 0; i < n; i++) {
            sg_tri r = decide_bool(ps, sg_expr_arg(e, i), &t, depth + 1);
            all_total &= t;
            any_true |= r == SG_TRI_TRUE;
            any_false |= r == SG_TRI_FALSE;
            all_true &= r == SG_TRI_TRUE;
            all_false &= r == SG_TRI_FALSE;
        }
        *total = all_total;
        if (k == SG_AND)
            return all_true ? SG_TRI_TRUE : any_false ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
        return (any_true && all_total) ? SG_TRI_TRUE : all_false ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
    }
    if (k == SG_NOT && n == 1) {
        bool t;
        sg_tri r = decide_bool(ps, sg_expr_arg(e, 0), &t, depth + 1);
        *total = t;
        if (r == SG_TRI_TRUE)
            return SG_TRI_FALSE;
        return r == SG_TRI_FALSE && t ? SG_TRI_TRUE : SG_TRI_UNKNOWN;
    }
    if (ps->box_stale)
        refresh_box(ps);
    if (ps->empty)
        return SG_TRI_UNKNOWN;
    return sg_interval_holds(ps->p->pool, e, ps->box, ps->nbox);
}

sg_tri sg_presolve_decide_expr(sg_presolve *ps, const sg_expr *e)
{
    bool total;
    sg_tri r;
    if (presolve_off || ps->empty || !e)
        return SG_TRI_UNKNOWN;
    ps->work = 0;
    r = decide_bool(ps, e, &total, 0);
    if (r == SG_TRI_UNKNOWN && !ps->empty)
        r = sg_presolve__enum_decide(ps, e);
    return ps->empty ? SG_TRI_UNKNOWN : r;
}

sg_tri sg_presolve_implies_lin(sg_presolve *ps, const size_t *nodes, const sg_int *coef, size_t n, sg_int k)
{
    lin f, g;
    sg_interval r;
    size_t i;
    if (presolve_off || ps->empty)
        return SG_TRI_UNKNOWN;
    ps->work = 0;
    memset(&f, 0, sizeof f);
    f.k = k;
    for (i = 0; i < n; i++)
        if (coef[i] != 0 && (nodes[i] >= ps->nnodes || !sg_presolve__lin_node(ps, nodes[i], &g) || !sg_lin_axpy(&f, coef[i], &g)))
            return SG_TRI_UNKNOWN;
    if (ps->empty)
        return SG_TRI_UNKNOWN;
    if (f.n == 0)
        return f.k == 0 ? SG_TRI_TRUE : SG_TRI_UNKNOWN;
    if (lin_range(ps, &f, &r) && !r.lo_inf && !r.hi_inf && r.lo == 0 && r.hi == 0)
        return SG_TRI_TRUE;
    return SG_TRI_UNKNOWN;
}

sg_tri sg_presolve_implies(sg_presolve *ps, size_t x, sg_int a, size_t y, sg_int b)
{
    lin f, g;
    sg_interval r;
    if (presolve_off || ps->empty || x >= ps->nnodes || (y != SIZE_MAX && y >= ps->nnodes))
        return SG_TRI_UNKNOWN;
    ps->work = 0;
    if (!sg_presolve__lin_node(ps, x, &f))
        return SG_TRI_UNKNOWN;
    if (y != SIZE_MAX && (!sg_presolve__lin_node(ps, y, &g) || !sg_lin_axpy(&f, -a, &g)))
        return SG_TRI_UNKNOWN;
    if (!sg__sub(f.k, b, &f.k) || ps->empty)
        return SG_TRI_UNKNOWN;
    if (f.n == 0) /* the same form on both sides: it holds identically */
        return f.k == 0 ? SG_TRI_TRUE : SG_TRI_UNKNOWN;
    /* a form over roots whose box is the single point 0 */
    if (lin_range(ps, &f, &r) && !r.lo_inf && !r.hi_inf && r.lo == 0 && r.hi == 0)
        return SG_TRI_TRUE;
    return SG_TRI_UNKNOWN;
}

/* The values node x takes in the models, enclosed: its form's range over the box, met, when its
 * class root was substituted, with that root's own domain (a bound read before or after the
 * substitution, which the definition's range over the other roots does not carry). false when
 * the form cannot be read, on overflow, or when the two do not meet (then nothing is decided). */
static bool node_range(sg_presolve *ps, size_t x, sg_interval *out)
{
    size_t r;
    sg_int a, b, nb;
    lin f;
    if (!sg_presolve__lin_node(ps, x, &f) || !lin_range(ps, &f, out) || !sg_presolve__find(ps, x, &r, &a, &b))
        return false;
    if (sg_presolve__get(ps, r)->elim && sg__mul(-a, b, &nb)) { /* x = a r + b = a (r - nb) */
        bool wide = false;
        sg_interval own = map_iv(sg_presolve__get(ps, r)->dom, a, nb, &wide);
        return sg_interval_meet(out, &own);
    }
    return true;
}

sg_tri sg_presolve_decide(sg_presolve *ps, size_t k)
{
    const sg_problem *p = ps->p;
    const sg_constraint *c = &p->cons[k];
    lin f, g;
    sg_tri r = SG_TRI_UNKNOWN;
    if (presolve_off || ps->empty)
        return SG_TRI_UNKNOWN;
    ps->work = 0;
    switch (c->kind) {
    case SG_CORE_GUARD:
        return sg_presolve_decide_expr(ps, c->expr);
    case SG_CORE_RANGE: { /* lo <= s <= hi */
        const sg_symbol_info *si = &p->syms[c->index];
        sg_tri lo = SG_TRI_TRUE, hi = SG_TRI_TRUE;
        sg_interval x;
        if (!node_range(ps, p->ninputs + c->index, &x))
            return SG_TRI_UNKNOWN;
        if (!si->lo.inf)
            lo = !x.lo_inf && x.lo >= si->lo.v ? SG_TRI_TRUE : !x.hi_inf && x.hi < si->lo.v ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
        if (!si->hi.inf)
            hi = !x.hi_inf && x.hi <= si->hi.v ? SG_TRI_TRUE : !x.lo_inf && x.lo > si->hi.v ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
        r = lo == SG_TRI_TRUE && hi == SG_TRI_TRUE ? SG_TRI_TRUE
            : lo == SG_TRI_FALSE || hi == SG_TRI_FALSE ? SG_TRI_FALSE : SG_TRI_UNKNOWN;
        break;
    }
    case SG_CORE_REPLACEMENT:
        if (sg_presolve__lin_node(ps, p->ninputs + c->index, &f) && sg_presolve__lin_of(ps, p->syms[c->index].replacement, NULL, 0, &g, 0) &&
            sg_lin_axpy(&f, -1, &g))
            r = sg_presolve__decide_lin(ps, SG_EQ, &f);
        break;
    case SG_CORE_INPUT:
        if (p->inputs[c->index].value && sg_presolve__lin_node(ps, c->index, &f) &&
            sg_presolve__lin_of(ps, p->inputs[c->index].value, NULL, 0, &g, 0) && sg_lin_axpy(&f, -1, &g))
            r = sg_presolve__decide_lin(ps, SG_EQ, &f);
        break;
    default:
        break;
    }
    return ps->empty ? SG_TRI_UNKNOWN : r;
}
