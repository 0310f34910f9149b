/*
 * infer_impl.h - what the parts of inference share (analysis/infer.c: the Z3
 * searches; analysis/infer_fast.c: what the presolve decides exactly).
 * Internal to analysis/infer*.c.
 */
#ifndef SG_ANALYSIS_INFER_IMPL_H
#define SG_ANALYSIS_INFER_IMPL_H

#include "analysis/infer.h"

#define INF_REL_MAX_SYMS 256 /* symbols the relation search looks at */

/*
 * The symbols inference decided without Z3: those whose component of the
 * problem (problem.h: sym_comp) consists only of facts the presolve reads
 * exactly (unit affine equalities, univariate bounds). Their valid values
 * are then exactly a * dom + b, the class domain of their union-find class.
 */
typedef struct sg_infer_fast {
    bool *done;     /* [nsyms] decided here */
    size_t *root;   /* [nsyms] when done: the class root node */
    sg_int *a, *b;  /* [nsyms] when done: symbol = a * root + b, a = +-1 */
    size_t ndone;
    bool all;       /* every symbol done, and F is satisfiable: no Z3 query is needed */
    struct sg_presolve *ps; /* the facts of F it read (each implied by F), or NULL: what it proves
                             * holds on every model of F (sg_infer__relations' candidates) */
    /* symbols of components enumerated jointly over several roots (their map is not a*root + b):
     * jcomp[k] the component (-1: not such a symbol), jval[k * SG_INFER_JW + t] its value at the
     * t-th of jn[k] valid points that span the affine hull of the component's models */
    long *jcomp;
    sg_int *jval;
    size_t *jn;
} sg_infer_fast;
#define SG_INFER_JW 5 /* points kept per jointly enumerated symbol: its roots (at most 4) + 1 */

/*
 * Fill `f` and, for every symbol it decides, res[k] (range exact, constant,
 * no holes, holes complete; `equals` is left to sg__infer_fast_relations).
 * With the presolve disabled (sg_presolve_enable) nothing is decided.
 * Returns 0 or SG_ENOMEM; sg__infer_fast_free releases `f` either way.
 */
int sg__infer_fast(sg_problem *p, sg_inferred *res, sg_infer_fast *f, sg_error *err);

/* Whether isomorphic components are decided once (analysis/check_classes.c's switch, a test hook),
 * and the count of replays the tests read. */
bool sg_check__classes_on(void);
void sg_check__classes_count(void);
void sg__infer_fast_free(sg_infer_fast *f);

/*
 * The relation columns: the non-constant symbols linked to input dims, in
 * input order, the first INF_REL_MAX_SYMS of them. New array in *colk.
 */
int sg__infer_rel_columns(const sg_problem *p, const sg_inferred *out, size_t **colk, size_t *ncol, sg_error *err);

/*
 * The relations among the decided columns (colk[0..ncol-1], the full column
 * list): within a class, every member but the first column is reported over
 * the first, as the exact affine hull's reduced echelon form would (pivot:
 * the later symbol). Returns 0, or SG_ENOMEM / the pool's error.
 */
int sg__infer_fast_relations(sg_problem *p, const sg_infer_fast *f, const size_t *colk, size_t ncol,
                             sg_inferred *out, sg_error *err);

/*
 * The integer relations that hold at points (infer_rel.c): restrict basis B (nb vectors of w
 * entries, the constant last) to those vanishing at `pt` (w entries, the last 1); put rows R
 * (nr x w) in reduced echelon form, pivots from the last column down (pivot[i], SIZE_MAX for a
 * zero row), each row gcd-normalised with its pivot positive. False on overflow.
 */
bool sg__infer_basis_restrict(sg_int *B, size_t *nb, size_t w, const sg_int *pt);
bool sg__infer_echelon(sg_int *R, size_t nr, size_t w, size_t *pivot);
/* sym_p = (-(sum_{i != p} c_i s_i) - c_const) / c_p over the columns, in p->pool; NULL when out of memory. */
const sg_expr *sg__infer_relation_expr(sg_problem *p, const sg_int *row, const size_t *colk, size_t ncol, size_t piv);

#endif
