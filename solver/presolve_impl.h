/*
 * presolve_impl.h - the inside of sg_presolve, shared by its three files:
 * solver/presolve.c (the facts: union-find classes, domains, substitutions,
 * and the decisions over the box), solver/presolve_enum.c (exact evaluation
 * at every point of a small box: enum_decide, sg_presolve_enumerate) and
 * solver/presolve_forest.c (the proof forest of sg_presolve_forest and
 * sg_presolve_explain). Solver-internal: only these three include it.
 *
 * Nodes are numbered as problem.c's components: input dim i is node i,
 * symbol k is node ninputs + k, spec root n is node ninputs + nsyms + n.
 */
#ifndef SG_SOLVER_PRESOLVE_IMPL_H
#define SG_SOLVER_PRESOLVE_IMPL_H

#include "solver/presolve.h"
#include "util/lin.h"

#define WORK_MAX 4096 /* nodes one question or fact may visit (a shared DAG is not unfolded) */

typedef struct node {
    unsigned epoch;  /* valid when == ps->epoch */
    size_t par;      /* parent in the union-find */
    size_t size;     /* class size (at a root) */
    sg_int a, b;     /* node = a * par + b, a = +-1 */
    sg_interval dom; /* at a root: the class domain over the root */
    bool elim;       /* at a root: substituted by `def` (an affine equality with several variables) */
    size_t def;      /* root = ps->defs[def], a form over other nodes (resolved through find when read) */
} node;

/* Σ coef[j] * root v[j] + k over class roots (util/lin.h). */
typedef sg_lin lin;


/* An entry of the shortest-path tree's heap: node at distance key, pushed seq-th. */
typedef struct fentry {
    size_t key, seq, node;
} fentry;

/* The shortest-path tree of sg_presolve_explain over the forest, grown from `root` by a Dijkstra
 * that stops when the node asked about is settled and resumes at the next question of the same
 * root (presolve_forest.c). par[x] (the edge x was reached by) and dist[x] are valid when
 * seen[x] == epoch and final when done[x] == epoch. */
typedef struct ftree {
    size_t root; /* SIZE_MAX: no tree */
    unsigned epoch;
    unsigned *seen, *done;
    size_t *par, *dist;
    fentry *heap;
    size_t nheap, cap, nseq;
} ftree;

typedef struct strslot {
    const char *name;
    size_t x;
} strslot;

struct sg_presolve {
    sg_problem *p;
    size_t nnodes;
    node *nodes;
    unsigned epoch;
    bool empty;           /* a domain became empty or an equality contradicted: decide nothing */
    bool dropped;         /* a fact was left out or read wider than it is (sg_presolve_take_dropped) */
    size_t *touched;      /* nodes touched this epoch */
    size_t ntouched, touched_cap;
    sg_interval *box;     /* [pool symbols] for the interval fallback */
    size_t nbox;
    size_t *boxset;       /* box entries set, to reset */
    size_t nboxset, boxset_cap;
    bool box_stale;
    lin *defs;            /* storage of the substitutions of this epoch */
    size_t ndefs, defs_cap;
    unsigned work;        /* nodes visited by the current question or fact */
    strslot *xmap;        /* spec root name -> X index, open addressing */
    size_t xcap;
    /* the equality graph of sg_presolve_forest: edges (label: constraint id, or ncons + k for
     * symbol k's definition), adjacency by node (CSR); the search's marks per node */
    struct fedge *edges;
    size_t nedges, *estart, *eadj, *queue;
    bool has_forest;
    unsigned *fepoch, forest; /* fpar, fdist valid when fepoch == forest */
    size_t *fpar, *fdist, *hseq, qcap, nseq;
    ftree tree;           /* the tree from a relation's root, shared by its questions */
    sg_int *evals;        /* [nbox] symbol values of an enumerated point (enum_decide), or NULL */
    unsigned long long enum_spent; /* evaluations spent of enum_budget() (presolve_enum.c) */
    /* what sg_presolve_enumerate needs to know of this epoch's facts: the constraints and the
     * definitions left out or read wider (left[]: constraint k, or ncons + symbol k), which it
     * evaluates at each point; a spec item, pin or relation not read exactly makes it give up */
    size_t *left;
    size_t nleft, left_cap;
    bool inexact;
};

/* What presolve.c lends the other two files (defined there). */
node *sg_presolve__get(sg_presolve *ps, size_t x);
bool sg_presolve__find(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b);
long sg_presolve__sym_node(const sg_presolve *ps, const sg_expr *sym);
bool sg_presolve__lin_node(sg_presolve *ps, size_t x, lin *f);
bool sg_presolve__lin_of(sg_presolve *ps, const sg_expr *e, const sg_expr *over, size_t over_node, lin *f,
                         int depth);
sg_tri sg_presolve__decide_lin(sg_presolve *ps, sg_kind op, const lin *f);
long sg_presolve__x_of(const sg_presolve *ps, const char *name);
bool sg_presolve__rel_form(sg_presolve *ps, const sg_expr *e, lin *f);

/* `e` at every point of a small box, exactly (presolve_enum.c): TRUE or UNKNOWN, never FALSE. */
sg_tri sg_presolve__enum_decide(sg_presolve *ps, const sg_expr *e);

#endif
