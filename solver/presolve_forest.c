/*
 * presolve_forest.c - explaining relations without Z3 (solver/presolve.h:
 * sg_presolve_forest, sg_presolve_explain).
 *
 * Does: a proof forest over the unit affine equalities of one component
 * (definitions, then constraints in the caller's order), the cheapest path
 * from an input dim to a root dim in it, and the core that path gives,
 * re-proved and minimised by the presolve (presolve.c) itself. The paths of
 * one root come from one shortest-path tree, grown only as far as the
 * questions need and kept for the next question of that root, so explaining
 * every dim of a component costs about one search of it, not one per dim.
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
    sg_free(ps->tree.heap);
    ps->eadj = ps->queue = ps->hseq = NULL;
    ps->tree.heap = NULL;
    ps->tree.root = SIZE_MAX;
    ps->nedges = ps->qcap = ps->tree.cap = 0;
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
    ps->tree.cap = ps->qcap;
    ps->tree.heap = sg__malloc(ps->tree.cap * sizeof *ps->tree.heap);
    fill = sg__malloc((ps->nnodes + 1) * sizeof *fill);
    if (!ps->eadj || !ps->queue || !ps->hseq || !ps->tree.heap || !fill)
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

/* ---- The search from one dim (the fallback: its own marks fepoch, fpar, fdist) ---------------- */

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

/* The labels of a path, in the order proves() reads them. */
typedef struct labelvec {
    size_t *a, n, cap;
} labelvec;

static bool label_push(labelvec *v, size_t label)
{
    if (sg__grow((void **)&v->a, &v->cap, v->n + 1, sizeof *v->a))
        return false;
    v->a[v->n++] = label;
    return true;
}

static size_t other_end(const fedge *e, size_t x)
{
    return e->x == x ? e->y : e->x;
}

/* The cheapest path from node a to node b that avoids edge `skip`, by a Dijkstra from a of its
 * own (fpar, fdist, ps->queue): its labels from b's end into *out. 1 found, 0 none, SG_ENOMEM.
 * The fallback of tree_path, where the tree's path from a needs `skip`. */
static int search_path(sg_presolve *ps, size_t a, size_t b, size_t skip, labelvec *out)
{
    const sg_problem *p = ps->p;
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
            size_t y = other_end(e, x), d = ps->fdist[x] + edge_cost(p, e->label);
            if (e->label == skip || (ps->fepoch[y] == ps->forest && ps->fdist[y] <= d))
                continue;
            ps->fepoch[y] = ps->forest;
            ps->fpar[y] = ps->eadj[t];
            ps->fdist[y] = d;
            heap_push(ps, &nheap, y);
        }
    }
    if (!found)
        return 0;
    for (; b != a; b = other_end(&ps->edges[ps->fpar[b]], b))
        if (!label_push(out, ps->edges[ps->fpar[b]].label))
            return SG_ENOMEM;
    return 1;
}

/* ---- The shortest-path tree from a root, shared by the questions of that root ---------------- */

/* A binary min-heap of fentry by (key, seq): ties go to the entry pushed first. A node is pushed
 * again when found cheaper; its older entry is stale and skipped when it pops. */
static bool fentry_less(const fentry *u, const fentry *v)
{
    return u->key != v->key ? u->key < v->key : u->seq < v->seq;
}

static void tree_push(ftree *t, size_t x, size_t key)
{
    size_t i;
    if (t->nheap >= t->cap)
        return; /* cannot happen: each edge pushes at most once from each end, plus the root */
    i = t->nheap++;
    t->heap[i] = (fentry){key, t->nseq++, x};
    while (i && fentry_less(&t->heap[i], &t->heap[(i - 1) / 2])) {
        fentry tmp = t->heap[i];
        t->heap[i] = t->heap[(i - 1) / 2];
        t->heap[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

static fentry tree_pop(ftree *t)
{
    fentry top = t->heap[0];
    size_t i = 0;
    t->heap[0] = t->heap[--t->nheap];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        fentry tmp;
        if (l < t->nheap && fentry_less(&t->heap[l], &t->heap[m]))
            m = l;
        if (r < t->nheap && fentry_less(&t->heap[r], &t->heap[m]))
            m = r;
        if (m == i)
            break;
        tmp = t->heap[i];
        t->heap[i] = t->heap[m];
        t->heap[m] = tmp;
        i = m;
    }
    return top;
}

/* Make the tree the one from `root`: kept when it already is, else started afresh. */
static void tree_root(sg_presolve *ps, size_t root)
{
    ftree *t = &ps->tree;
    if (t->root == root)
        return;
    t->root = root;
    t->epoch++;
    t->nheap = t->nseq = 0;
    t->seen[root] = t->epoch;
    t->par[root] = SIZE_MAX;
    t->dist[root] = 0;
    tree_push(t, root, 0);
}

/* Settle the next node of the tree (its dist and par final: the first edge that reached it at
 * that distance, relaxed in the order nodes settle and each node's edges in forest order).
 * false when every node reachable from the root is settled. */
static bool tree_step(sg_presolve *ps)
{
    const sg_problem *p = ps->p;
    ftree *t = &ps->tree;
    size_t x = 0, k;
    for (;;) {
        fentry top;
        if (!t->nheap)
            return false;
        top = tree_pop(t);
        x = top.node;
        if (t->done[x] != t->epoch && top.key == t->dist[x])
            break; /* else stale: x was settled, or found cheaper after this push */
    }
    t->done[x] = t->epoch;
    for (k = ps->estart[x]; k < ps->estart[x + 1]; k++) {
        const fedge *e = &ps->edges[ps->eadj[k]];
        size_t y = other_end(e, x), d = t->dist[x] + edge_cost(p, e->label);
        if (t->seen[y] == t->epoch && t->dist[y] <= d)
            continue;
        t->seen[y] = t->epoch;
        t->par[y] = ps->eadj[k];
        t->dist[y] = d;
        tree_push(t, y, d);
    }
    return true;
}

/* Grow the tree until x is settled (true) or cannot be (false: x is not reachable). */
static bool tree_settle(sg_presolve *ps, size_t x)
{
    while (ps->tree.done[x] != ps->tree.epoch)
        if (!tree_step(ps))
            return false;
    return true;
}

/* Append the labels of the tree's path from x up to the root to out. false (out's length then
 * undefined) when the path passes node `avoid` or edge `skip`, or on SG_ENOMEM (*oom set). */
static bool tree_walk(sg_presolve *ps, size_t x, size_t avoid, size_t skip, labelvec *out, bool *oom)
{
    const ftree *t = &ps->tree;
    for (; x != t->root; x = other_end(&ps->edges[t->par[x]], x)) {
        const fedge *e = &ps->edges[t->par[x]];
        if (e->label == skip || other_end(e, x) == avoid)
            return false;
        if (!label_push(out, e->label)) {
            *oom = true;
            return false;
        }
    }
    return true;
}

/* The tree path from a through a's edge number k (in forest order), which must avoid `skip` and
 * be as cheap as a's own distance: into out. 1 found, 0 not, SG_ENOMEM. */
static int tree_path_via(sg_presolve *ps, size_t a, size_t k, size_t skip, labelvec *out)
{
    const ftree *t = &ps->tree;
    const fedge *e = &ps->edges[ps->eadj[k]];
    size_t y = other_end(e, a);
    bool oom = false;
    if (e->label == skip || t->done[y] != t->epoch || t->dist[y] + edge_cost(ps->p, e->label) != t->dist[a])
        return 0;
    out->n = 0;
    if (!label_push(out, e->label))
        return SG_ENOMEM;
    if (tree_walk(ps, y, a, skip, out, &oom))
        return 1;
    return oom ? SG_ENOMEM : 0;
}

/* The cheapest path from node a to the root avoiding edge `skip`, labels from the root's end
 * into out: 1 found, 0 none, SG_ENOMEM. The tree's own path from a when it avoids skip (a
 * cheapest path of the whole forest, so of the forest without skip); else, when skip is a's own
 * edge (a dim's traced shape), the first of a's other edges, in forest order, that leads to a
 * tree path as cheap and not back through a; else a search from a of its own. */
static int tree_path(sg_presolve *ps, size_t a, size_t root, size_t skip, labelvec *out)
{
    ftree *t = &ps->tree;
    size_t k, i;
    bool oom = false;
    int rc = 0;
    tree_root(ps, root);
    if (!tree_settle(ps, a))
        return 0; /* not reachable in the whole forest, so not without skip */
    out->n = 0;
    if (tree_walk(ps, a, SIZE_MAX, skip, out, &oom))
        rc = 1;
    else if (oom)
        return SG_ENOMEM;
    while (!rc && t->nheap && t->heap[0].key <= t->dist[a]) /* settle every node as close as a */
        tree_step(ps);
    for (k = ps->estart[a]; k < ps->estart[a + 1] && !rc; k++)
        rc = tree_path_via(ps, a, k, skip, out);
    if (rc < 0)
        return rc;
    if (!rc) {
        out->n = 0;
        return search_path(ps, a, root, skip, out);
    }
    for (i = 0; i < out->n / 2; i++) { /* from the root's end, as search_path gives them */
        size_t tmp = out->a[i];
        out->a[i] = out->a[out->n - 1 - i];
        out->a[out->n - 1 - i] = tmp;
    }
    return 1;
}

/* Shrink labels[0..*n-1], which prove the relation, by dropping each member whose removal keeps
 * it proved: shapes and replacements first, then ranges, then guards; definitions last removed
 * from the list (they are hard, never in a core). */
static size_t shrink_core(sg_presolve *ps, size_t *labels, size_t n, size_t input, size_t root)
{
    const sg_problem *p = ps->p;
    size_t j, m;
    int pass;
    for (pass = 0; pass < 3; pass++)
        for (j = 0; j < n; j++)
            if (drop_rank(p, labels[j]) == pass && proves(ps, labels, n, j, input, root)) {
                labels[j] = labels[--n];
                j--;
            }
    for (j = m = 0; j < n; j++)
        if (labels[j] < p->ncons)
            labels[m++] = labels[j];
    return m;
}

int sg_presolve_explain(sg_presolve *ps, size_t input, size_t root, size_t skip, size_t **core, size_t *ncore)
{
    const sg_problem *p = ps->p;
    labelvec path = {NULL, 0, 0};
    int rc;
    *core = NULL;
    *ncore = 0;
    if (!sg_presolve_enabled() || input >= p->ninputs || root >= p->ninputs || !p->inputs[input].value ||
        !p->inputs[root].value || sg_expr_kind(p->inputs[root].value) != SG_SYM)
        return 0;
    if (!ps->has_forest)
        return 0;
    /* the cheapest path from D_input to D_root that avoids `skip`: definitions cost nothing
     * (they are hard), guards 1, traced shapes and replacements EDGE_OTHER (explain_relation
     * keeps guards rather than the shapes they caused) */
    rc = tree_path(ps, input, root, skip, &path);
    if (rc == 1 && !proves(ps, path.a, path.n, SIZE_MAX, input, root))
        rc = 0;
    if (rc != 1) {
        sg_free(path.a);
        return rc;
    }
    *ncore = shrink_core(ps, path.a, path.n, input, root);
    sg_presolve_begin(ps);
    *core = path.a;
    return 1;
}
