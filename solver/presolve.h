/*
 * presolve.h - exact cheap reasoning on the hard facts of a check, before Z3
 * (issue 14; design in bench/DESIGN-presolve.md, docs/presolve.md).
 *
 * A presolve is filled, per question, with facts that hold on every model of
 * the hard system H (definitions, spec items or adopted relations and pins,
 * assumed constraints), then asked whether a checked constraint holds on
 * every model. Facts are read at the expression level (no Z3):
 *
 *   equalities  x = +-y + b between two variables (input dims D_i, symbols,
 *               spec roots X): weighted union-find, 1000 equal dims = one class;
 *   constants   x = v, and bounds lo <= x <= hi, folded into the class domain
 *               (an interval over the class root);
 *
 * and a question is decided by substituting every variable by its class
 * root: an affine question exactly over the box of root domains (min / max of
 * a linear form, gcd for Eq / Ne), any other by the interval evaluator
 * (expr/interval.h) on the substituted expression.
 *
 * Soundness: a fact the presolve cannot read exactly (a non-unit coefficient,
 * a product, an equality that contradicts an earlier one) is left out, which
 * only weakens what it knows; every point of H is a point of the presolve's
 * box, so TRUE (FALSE) on the box is TRUE (FALSE) on H. When a domain becomes
 * empty (H may be unsatisfiable) nothing is decided. All arithmetic is checked
 * 128-bit; an overflow leaves the question UNKNOWN (to Z3).
 *
 * Solver-internal (analysis/check.c); no Z3 here. Not thread-safe: one
 * presolve per check.
 */
#ifndef SG_SOLVER_PRESOLVE_H
#define SG_SOLVER_PRESOLVE_H

#include <stdbool.h>
#include <stddef.h>

#include "expr/interval.h"
#include "solver/problem.h"
#include "util/lin.h"

typedef struct sg_presolve sg_presolve;

/* A presolve over the variables of `p` (borrowed: it must outlive the presolve). */
int sg_presolve_new(sg_presolve **out, sg_problem *p, sg_error *err);
void sg_presolve_free(sg_presolve *ps);

/* Forget every fact: the start of a new question set (O(1): nodes are reset when touched). */
void sg_presolve_begin(sg_presolve *ps);

/* Facts of H, as problem.h defines them. Each returns nothing: a fact that cannot be read
 * exactly is dropped (sound, see above). */
void sg_presolve_def(sg_presolve *ps, size_t sym);               /* symbol `sym`'s definition */
void sg_presolve_spec(sg_presolve *ps, size_t input);            /* dim `input`'s spec item */
void sg_presolve_pin(sg_presolve *ps, size_t input, sg_int size); /* D_input = size */
void sg_presolve_pin_root(sg_presolve *ps, size_t x, sg_int value); /* spec root X_x = value */
/* The relation phase 1 adopts: D_input = value of `input` over D_root (root's traced value a
 * bare symbol) or, else, D_input = value and D_root = root's value; `root` SIZE_MAX: value is
 * a constant. */
void sg_presolve_relation(sg_presolve *ps, size_t input, size_t root);
void sg_presolve_constraint(sg_presolve *ps, size_t cons);       /* an assumed constraint */

/*
 * Exactness, for inference over F (analysis/infer_fast.c): sg_presolve_take_dropped says whether
 * a fact given since the last call (or sg_presolve_begin) was left out or read wider than it is,
 * and clears the flag. When every fact of a set of nodes was read exactly, the models of those
 * facts are exactly the product of the class domains (x = a * root + b, root in dom).
 * sg_presolve_consistent: no domain became empty and no equality contradicted another.
 * sg_presolve_class: node x's class root, map and the root's domain; false when inconsistent or
 * on overflow. Nodes are numbered as in presolve.c: input dim i, then ninputs + symbol k, then
 * ninputs + nsyms + spec root n.
 */
bool sg_presolve_take_dropped(sg_presolve *ps);
/* Node x as a * root + b over one class root (read through substitutions: a may be any nonzero
 * integer, 2*r + 1), or a constant (*root SIZE_MAX, a = 0); false when it is over several roots,
 * on overflow, or when inconsistent. The root's domain: sg_presolve_class(root). */
bool sg_presolve_form1(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b);
bool sg_presolve_consistent(const sg_presolve *ps);
/* Every fact given since sg_presolve_begin was read exactly (none left out, read wider or
 * substituted) and they are consistent: their models are then exactly the product of the class
 * domains, none of them empty, so the facts are satisfiable (an exact "sat" without Z3). False
 * says nothing (an inconsistency may also be an overflow). */
bool sg_presolve_exact(const sg_presolve *ps);
/* Whether an equality was substituted since sg_presolve_begin (a fact with several variables or a
 * non-unit coefficient): the models are then no longer the product of the class domains. */
bool sg_presolve_substituted(const sg_presolve *ps);
bool sg_presolve_class(sg_presolve *ps, size_t x, size_t *root, sg_int *a, sg_int *b, sg_interval *dom);
/* Node x as a form over the class roots left (not substituted; any number of them, at most
 * SG_LIN_MAX terms), and when x's class root is itself substituted, that root in *sub (else
 * SIZE_MAX) with its domain in *sdom: on every model the form of node *sub lies in *sdom, a fact
 * the box of the roots left does not state. False on overflow, a longer form, or inconsistency. */
bool sg_presolve_lin(sg_presolve *ps, size_t x, sg_lin *f, size_t *sub, sg_interval *sdom);

/*
 * The models themselves, for small components (phase 2 of the check, analysis/check_values.c): when every fact
 * given since sg_presolve_begin was read exactly, or is an expression left out (a guard, a traced
 * range, shape or replacement, a definition by replacement: evaluated at each point, expr/eval.c),
 * and the nodes[0..nn-1] (a component's input dims and symbols) are forms over at most 4 class
 * roots left (not substituted) with finite domains of at most 4,096 points together, the models
 * of the facts restricted to those nodes are exactly the points of the box where every substituted
 * root's value (its definition's) lies in its own domain and the facts left out hold (an equality
 * over several roots substitutes one of them: kv48's mask M = T + L). They are visited in odometer order (the first root fastest), each root
 * from its value at the sizes dvals[] holds on entry (the example sizes: the nearest shapes
 * first) outwards, s, s+1, s-1, s+2, ...; `violation`: the first model at which some constraint
 * cons[0..nc-1] does not hold; else the first at which all do. Returns 1 with that point's input
 * dim sizes in dvals[] (indexed by input dim; entries of other dims untouched), 0 when there is
 * none, -1 when this cannot tell (the conditions above, an evaluation undefined somewhere, the
 * budget of 2^20 points per presolve, which the visits are charged to).
 */
int sg_presolve_enumerate(sg_presolve *ps, const size_t *nodes, size_t nn, const size_t *cons, size_t nc,
                          bool violation, sg_int *dvals);

/*
 * A model failing a constraint, for components too large to enumerate (the check's counterexample
 * without Z3). Under sg_presolve_enumerate's conditions on the facts (over any number of class
 * roots, finite or not), the points of the box where the substituted roots lie in their domains
 * and the facts left out hold are the models. The
 * example point (each root at its value at dvals[], clamped into its domain; a root no input dim
 * gives a value at its low end) is tried, then the points that differ from it in one root, moved
 * to a neighbour or to an end of its domain, each by exact evaluation of the facts left out and the
 * constraints cons[0..nc-1] that read that root. Returns 1 with the model's input dim sizes in
 * dvals[] (entries of other dims untouched), -1 when it found none (a failing model may need two
 * roots moved: ask Z3) or cannot tell; charged to the enumeration budget.
 */
int sg_presolve_violate(sg_presolve *ps, const size_t *nodes, size_t nn, const size_t *cons, size_t nc, sg_int *dvals);
/* Does checked constraint `cons` hold on every model of the facts given since
 * sg_presolve_begin? TRUE / FALSE only when certain; UNKNOWN otherwise. */
sg_tri sg_presolve_decide(sg_presolve *ps, size_t cons);

/* Does node x = a * node y + b hold on every model of the facts (y SIZE_MAX: x = b)? TRUE when
 * the union-find (and its substitutions) writes both sides as the same form over class roots, or
 * their difference is 0 over the whole box; UNKNOWN otherwise (never FALSE: a relation the facts
 * do not force may still hold on every model of facts the presolve left out). */
sg_tri sg_presolve_implies(sg_presolve *ps, size_t x, sg_int a, size_t y, sg_int b);

/* Does sum coef[i] * node nodes[i] + k = 0 hold on every model of the facts? As
 * sg_presolve_implies: TRUE or UNKNOWN. */
sg_tri sg_presolve_implies_lin(sg_presolve *ps, const size_t *nodes, const sg_int *coef, size_t n, sg_int k);

/* Does boolean `e` (over the trace's symbols) hold on every model of the facts? */
sg_tri sg_presolve_decide_expr(sg_presolve *ps, const sg_expr *e);

/*
 * Explaining relations without Z3: a proof forest over the unit affine
 * equalities of one component (definitions first, then `cons` in the order
 * given: the ones a core should rather keep first), and the path between two
 * input dims in it.
 *
 * sg_presolve_forest builds it (forgets every fact: call it between question
 * sets). sg_presolve_explain finds the constraints on a cheapest path between
 * D_input and D_root avoiding `skip` (the relation phase 1 adopts, root's
 * traced value a bare symbol), re-proves the relation from exactly them by the
 * presolve, and drops each member whose removal keeps it proved, traced shapes
 * and replacements first, then traced ranges, then guards (explain_relation's
 * order). Returns 1 with the core (indices into the problem's constraints; new
 * array, sg_free) when the relation is proved this way, 0 when not (ask Z3),
 * SG_ENOMEM. A core never contains `skip`. The paths of one root come from one
 * shortest-path tree, grown as far as the questions need and kept until the
 * next sg_presolve_forest or a question about another root: ask a root's
 * questions together.
 */
int sg_presolve_forest(sg_presolve *ps, const size_t *syms, size_t nsyms, const size_t *cons, size_t ncons);
int sg_presolve_explain(sg_presolve *ps, size_t input, size_t root, size_t skip, size_t **core, size_t *ncore);

/* Per thread: presolve on (the default) or off (every question UNKNOWN, so everything
 * goes to Z3). For the differential tests that compare the two. */
void sg_presolve_enable(bool on);
bool sg_presolve_enabled(void);

#endif
