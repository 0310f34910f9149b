/*
 * presolve_forest.c - explaining relations without Z3 (solver/presolve.h:
 * sg_presolve_forest, sg_presolve_explain).
 *
 * Does: a proof forest over the unit affine equalities of one component
 * (definitions, then constraints in the caller's order), the shortest path
 * between two input dims in it, and the core that path gives, re-proved and
 * minimised by the presolve (presolve.c) itself.
 *
 * Does not: hold the presolve's facts or decide questions (presolve.c), or
 * enumerate boxes (presolve_enum.c); touch Z3. A relation it cannot prove
 * this way is left to Z3's cores (analysis/check.c).
 */
#include <string.h>

#include "solver/presolve_impl.h"
#include "util/util.h"

typedef struct fedge {
    size_t x, y, label;
} fedge;

/* A unit equality x = +-y + b between two distinct nodes read off a fact, in a fresh epoch
 * (so that forms are over the nodes themselves). */
static bool edge_of_form(sg_presolve *ps, const lin *f, size_t label, fedge *e)
{
    if (f->n != 2 || (f->c[0] != 1 && f->c[0] != -1) || (f->c[1] != 1 && f->c[1] != -1))
        return false;
    e->x = f->v[0];
    e->y = f->v[1];
    e->label = label;
    return true;
}

static bool edge_of_cons(sg_presolve *ps, size_t k, fedge *e)
{
    const sg_problem *p = ps->p;
    const sg_constraint *c = &p->cons[k];
    lin f, g;
    sg_presolve_begin(ps);
    ps->work = 0;
    switch (c->kind) {
    case SG_CORE_GUARD:
        if (!c->expr || sg_expr_kind(c->expr) != SG_EQ || !sg_presolve__rel_form(ps, c->expr, &f))
            return false;
        break;
    case SG_CORE_REPLACEMENT:
        if (!sg_presolve__lin_node(ps, p->ninputs + c->index, &f) || !sg_presolve__lin_of(ps, p->syms[c->index].replacement, NULL, 0, &g, 0) ||
            !sg_lin_axpy(&f, -1, &g))
            return false;
        break;
    case SG_CORE_INPUT:
        if (!p->inputs[c->index].value || !sg_presolve__lin_node(ps, c->index, &f) ||
            !sg_presolve__lin_of(ps, p->inputs[c->index].value, NULL, 0, &g, 0) || !sg_lin_axpy(&f, -1, &g))
            return false;
        break;
    default:
        return false;
    }
    return edge_of_form(ps, &f, k, e);
}

static bool edge_of_def(sg_presolve *ps, size_t k, fedge *e)
{
    const sg_problem *p = ps->p;
    const sg_symbol_info *si = &p->syms[k];
    size_t sn = p->ninputs + k, i;
    long x = -1;
    lin f, g;
    sg_presolve_begin(ps);
    ps->work = 0;
    for (i = 0; i < si->nsources && x < 0; i++)
        x = sg_presolve__x_of(ps, si->sources[i]);
    e->x = sn;
    e->label = p->ncons + k;
    if (p->sym_input[k] >= 0) {
        e->y = (size_t)p->sym_input[k];
        return true;
    }
    if (x >= 0) {
        e->y = p->ninputs + p->nsyms + (size_t)x;
        return true;
    }
    if (!si->replacement || si->unbacked || !sg_presolve__lin_node(ps, sn, &f) || !sg_presolve__lin_of(ps, si->replacement, NULL, 0, &g, 0) ||
        !sg_lin_axpy(&f, -1, &g))
        return false;
    return edge_of_form(ps, &f, p->ncons + k, e);
}

int sg_presolve_forest(sg_presolve *ps, const size_t *syms, size_t nsyms, const size_t *cons, size_t ncons)
{
    size_t i, *fill = NULL;
    int pass;
    sg_free(ps->edges);
    sg_free(ps->estart);
    sg_free(ps->eadj);
    sg_free(ps->queue);
    sg_free(ps->hseq);
    ps->eadj = ps->queue = ps->hseq = NULL;
    ps->nedges = ps->qcap = 0;
    ps->edges = sg__malloc((nsyms + ncons + 1) * sizeof *ps->edges);
    ps->estart = sg__calloc(ps->nnodes + 2, sizeof *ps->estart);
    if (!ps->edges || !ps->estart)
        goto oom;
    /* definitions, then the constraints in the caller's order: a node's edges are tried in
     * that order by the search, so ties between equally short paths go to earlier edges */
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < (pass ? ncons : nsyms); i++) {
            fedge e;
            if ((pass ? edge_of_cons(ps, cons[i], &e) : edge_of_def(ps, syms[i], &e)) && e.x != e.y)
                ps->edges[ps->nedges++] = e;
        }
    sg_presolve_begin(ps);
    ps->eadj = sg__malloc((2 * ps->nedges + 1) * sizeof *ps->eadj);
    ps->qcap = 2 * ps->nedges + 2;
    ps->queue = sg__malloc(ps->qcap * sizeof *ps->queue);
    ps->hseq = sg__malloc(ps->qcap * sizeof *ps->hseq);
    fill = sg__malloc((ps->nnodes + 1) * sizeof *fill);
    if (!ps->eadj || !ps->queue || !ps->hseq || !fill)
        goto oom;
    for (i = 0; i < ps->nedges; i++) {
        ps->estart[ps->edges[i].x + 1]++;
        ps->estart[ps->edges[i].y + 1]++;
    }
    for (i = 0; i < ps->nnodes; i++)
        ps->estart[i + 1] += ps->estart[i];
    memcpy(fill, ps->estart, (ps->nnodes + 1) * sizeof *fill);
    for (i = 0; i < ps->nedges; i++) { /* edge indices, in insertion order per node */
        ps->eadj[fill[ps->edges[i].x]++] = i;
        ps->eadj[fill[ps->edges[i].y]++] = i;
    }
    sg_free(fill);
    ps->has_forest = true;
    return 0;
oom:
    sg_free(fill);
    ps->has_forest = false;
    return SG_ENOMEM;
}

/* The facts of labels[0..n-1] but `skip_at` (SIZE_MAX: none), then: does D_input = value over D_root hold? */
static bool proves(sg_presolve *ps, const size_t *labels, size_t n, size_t skip_at, size_t input, size_t root)
{
    const sg_problem *p = ps->p;
    size_t j;
    lin f, g;
    sg_presolve_begin(ps);
    for (j = 0; j < n; j++) {
        if (j == skip_at)
            continue;
        if (labels[j] >= p->ncons)
            sg_presolve_def(ps, labels[j] - p->ncons);
        else
            sg_presolve_constraint(ps, labels[j]);
    }
    ps->work = 0;
    if (ps->empty || !sg_presolve__lin_node(ps, input, &f) ||
        !sg_presolve__lin_of(ps, p->inputs[input].value, p->inputs[root].value, root, &g, 0) || !sg_lin_axpy(&f, -1, &g))
        return false;
    return sg_presolve__decide_lin(ps, SG_EQ, &f) == SG_TRI_TRUE && !ps->empty;
}

static int drop_rank(const sg_problem *p, size_t label)
{
    if (label >= p->ncons)
        return -1; /* a definition: hard, never in a core */
    return p->cons[label].kind == SG_CORE_GUARD ? 2 : p->cons[label].kind == SG_CORE_RANGE ? 1 : 0;
}

#define EDGE_OTHER 3 /* a shape or replacement weighs three guards: guards are preferred, not at any length */

static size_t edge_cost(const sg_problem *p, size_t label)
{
    if (label >= p->ncons)
        return 0;
    return p->cons[label].kind == SG_CORE_GUARD ? 1 : EDGE_OTHER;
}

/* A binary min-heap of nodes by fdist in ps->queue (lazy deletion: a node may be pushed again
 * with a smaller distance; a stale entry pops later and is expanded again harmlessly). Ties go
 * to the node pushed first (a sequence number), so the search is deterministic. */
static bool heap_less(const sg_presolve *ps, size_t i, size_t j)
{
    size_t a = ps->queue[i], b = ps->queue[j];
    if (ps->fdist[a] != ps->fdist[b])
        return ps->fdist[a] < ps->fdist[b];
    return ps->hseq[i] < ps->hseq[j];
}

static void heap_swap(sg_presolve *ps, size_t i, size_t j)
{
    size_t t = ps->queue[i];
    ps->queue[i] = ps->queue[j];
    ps->queue[j] = t;
    t = ps->hseq[i];
    ps->hseq[i] = ps->hseq[j];
    ps->hseq[j] = t;
}

static void heap_push(sg_presolve *ps, size_t *n, size_t x)
{
    size_t i;
    if (*n >= ps->qcap)
        return; /* cannot happen: at most one entry per edge end plus the start */
    i = (*n)++;
    ps->queue[i] = x;
    ps->hseq[i] = ps->nseq++;
    while (i && heap_less(ps, i, (i - 1) / 2)) {
        heap_swap(ps, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static size_t heap_pop(sg_presolve *ps, size_t *n)
{
    size_t top = ps->queue[0], i = 0;
    ps->queue[0] = ps->queue[--(*n)];
    ps->hseq[0] = ps->hseq[*n];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && heap_less(ps, l, m))
            m = l;
        if (r < *n && heap_less(ps, r, m))
            m = r;
        if (m == i)
            break;
        heap_swap(ps, i, m);
        i = m;
    }
    return top;
}

int sg_presolve_explain(sg_presolve *ps, size_t input, size_t root, size_t skip, size_t **core, size_t *ncore)
{
    const sg_problem *p = ps->p;
    size_t a = input, b = root, n = 0, cap = 16, *labels, j, m;
    int pass;
    *core = NULL;
    *ncore = 0;
    if (!sg_presolve_enabled() || input >= p->ninputs || root >= p->ninputs || !p->inputs[input].value ||
        !p->inputs[root].value || sg_expr_kind(p->inputs[root].value) != SG_SYM)
        return 0;
    if (!ps->has_forest)
        return 0;
    if (!(labels = sg__malloc(cap * sizeof *labels)))
        return SG_ENOMEM;
    /* the cheapest path from D_input to D_root that avoids `skip`: definitions cost nothing
     * (they are hard), guards 1, traced shapes and replacements EDGE_OTHER (explain_relation
     * keeps guards rather than the shapes they caused); Dijkstra, fpar[y] the edge y was
     * reached by, fdist[y] its distance */
    {
        size_t nheap = 0;
        bool found = false;
        ps->forest++;
        ps->fepoch[a] = ps->forest;
        ps->fpar[a] = SIZE_MAX;
        ps->fdist[a] = 0;
        ps->queue[nheap++] = a;
        while (nheap && !found) {
            size_t x = heap_pop(ps, &nheap), t;
            if (x == b) {
                found = true;
                break;
            }
            for (t = ps->estart[x]; t < ps->estart[x + 1]; t++) {
                const fedge *e = &ps->edges[ps->eadj[t]];
                size_t y = e->x == x ? e->y : e->x, d = ps->fdist[x] + edge_cost(p, e->label);
                if (e->label == skip || (ps->fepoch[y] == ps->forest && ps->fdist[y] <= d))
                    continue;
                ps->fepoch[y] = ps->forest;
                ps->fpar[y] = ps->eadj[t];
                ps->fdist[y] = d;
                heap_push(ps, &nheap, y);
            }
        }
        if (!found) {
            sg_free(labels);
            return 0;
        }
        for (; b != a; b = ps->edges[ps->fpar[b]].x == b ? ps->edges[ps->fpar[b]].y : ps->edges[ps->fpar[b]].x) {
            if (sg__grow((void **)&labels, &cap, n + 1, sizeof *labels)) {
                sg_free(labels);
                return SG_ENOMEM;
            }
            labels[n++] = ps->edges[ps->fpar[b]].label;
        }
    }
    if (!proves(ps, labels, n, SIZE_MAX, input, root)) {
        sg_free(labels);
        return 0;
    }
    /* drop what is not needed: shapes and replacements first, then ranges, then guards */
    for (pass = 0; pass < 3; pass++)
        for (j = 0; j < n; j++)
            if (drop_rank(p, labels[j]) == pass && proves(ps, labels, n, j, input, root)) {
                labels[j] = labels[--n];
                j--;
            }
    for (j = m = 0; j < n; j++)
        if (labels[j] < p->ncons)
            labels[m++] = labels[j];
    sg_presolve_begin(ps);
    *core = labels;
    *ncore = m;
    return 1;
}
