/*
 * check_impl.h - what the two parts of the check share: analysis/check.c
 * (report building, queries, components, phase 1: relations, phase 1b: the
 * bounds of Dim.AUTO / Dim.DYNAMIC, the entry points) and
 * analysis/check_values.c (phase 2: values, and small components decided by
 * their models). Internal: only check.c and check_values.c
 * include it; everything else goes through check.h and analysis.h.
 */
#ifndef SG_ANALYSIS_CHECK_IMPL_H
#define SG_ANALYSIS_CHECK_IMPL_H

#include "analysis/analysis.h"
#include "expr/interval.h"
#include "report/report.h"
#include "solver/presolve.h"
#include "solver/problem.h"
#include "solver/query.h"

/* Members of each component, bucketed: for component id `comp`, the members
 * idx[start[comp] .. start[comp + 1] - 1] (ids are union-find roots < nnodes). */
typedef struct bucket {
    size_t *start; /* [nnodes + 1] */
    size_t *idx;
} bucket;

typedef struct checker {
    sg_problem *p;
    bucket inputs, syms, cons;
    size_t nnodes;
    sg_interval *box;  /* the symbol box of the cheap pass */
    size_t nbox;
    const sg_check_options *opts;
    sg_budget budget;
    sg_report *r;
    const sg_term **fixed; /* [ninputs] replacement spec item (adopted relation / pin), or NULL */
    bool *decided;     /* [ninputs] refuted or unknown already */
    /* what c->fixed[i] says, for the presolve: FIX_RELATION with rel_root[i] (SIZE_MAX: a
     * constant), or FIX_PIN to the example size */
    unsigned char *fixed_kind;
    size_t *rel_root;
    size_t *pin_root;  /* [ninputs] FIX_PIN: the spec root X the pin settled too (sg_check__pin), else SIZE_MAX */
    sg_presolve *ps;   /* the hard facts of a phase-2 round, decided without Z3 */
    sg_presolve *spec_ps; /* the spec items of one component (spec_comp), for phase 1's spec_states */
    long spec_comp;
    long forest_comp;  /* the component the presolve's proof forest is built for, or -1 */
    size_t *own_shape; /* [ninputs] dim i's traced shape (its SG_CORE_INPUT constraint) when i is in
                          forest_comp, else SIZE_MAX or a stale entry; NULL until the first forest */
    bool lean;         /* sg_check__lean_rt: cores minimised only where the verdict depends on them */
    bool first;        /* sg_check__first_rt: stop at the first violation (its own work done in full) */
    bool enumerate;    /* the presolve on: a small component's questions answered by its models */
    struct lit_oracle *orc; /* the explanation being minimised by enumeration (check_values.c), or NULL */
    struct sg_check_classes *classes; /* phase 2's isomorphic components (check_classes.c), or NULL */
    bool guided;       /* minimising a core of every literal (lit_oracle): Z3's cores shrink it */
    struct probe *prb;      /* the probe's explanation being minimised (check_probe.c), or NULL */
    sg_error *err;
} checker;

/* FIX_DROPPED: a refuted hint's bounds, gone for the rest of the check (fixed[i] is true) */
enum { FIX_NONE, FIX_RELATION, FIX_PIN, FIX_DROPPED };

/* An array of terms of the problem (kept by it: the array holds no references). A NULL term is
 * skipped, as a missing spec item or definition is. */
typedef struct tvec {
    const sg_term **a;
    size_t n, cap;
    int failed;
} tvec;

#define TVEC_INIT {NULL, 0, 0, 0}

/* Each member x of component `comp` in bucket b, its position in b.idx in j. */
#define FOR_MEMBERS(b, comp, j, x) \
    for (j = (b).start[(comp)]; j < (b).start[(comp) + 1] && ((x) = (b).idx[j], 1); j++)

/* ---- Report building (check_report.c) ------------------------------------------------------------ */

/* The name a dim goes by in the report: its Dim's name, else its source ("?" without one). */
const char *sg_check__dim_name(const sg_input_dim *d);

/* The spec as torch validates it (torch/validate.c): each issue a violation of its dim. */
int sg_check__spec_issues(sg_report *r, const sg_trace *t, sg_error *err);

/* torch raised while the spec was being built or validated, before it could be matched to the
 * inputs (no per-dim spec): an assertion of Dim() ("Cannot create Dim with inconsistent min=4,
 * max=4") or a UserError of its validation. */
bool sg_check__spec_construction_failed(const sg_trace *t);

/* That failure as the spec's one issue, in torch's words: verdict invalid_spec. */
int sg_check__construction_issue(sg_report *r, const sg_trace *t, sg_error *err);

/* `e` in Python syntax over the inputs' sources (new string; NULL when out of memory). */
char *sg_check__print_py(checker *c, const sg_expr *e);

/* `e` in Python syntax over Dim names where a symbol is a named dim's size. */
char *sg_check__print_named(checker *c, const sg_expr *e);

/* A new violation of kind `kind` of input dim `input`, appended to the report with its dim's
 * name (the other fields zero, root SIZE_MAX); NULL when out of memory. */
sg_violation *sg_check__new_violation(checker *c, size_t input, sg_violation_kind kind);

/* The text of a spec item: "dx in [2, 100]", "dy = 2*dx + 1", "x.size()[1] = 3". */
char *sg_check__spec_text(const sg_trace *t, const sg_input_dim *d);

/* A constraint as torch quotes it in "... satisfy the generated guard G": a guard in
 * Python form, a traced range as "lo <= src and src <= hi", a traced shape as "src == value". */
char *sg_check__guard_text(checker *c, const sg_constraint *k);

/* Append a core item; returns false when out of memory. `text` is the item's from then on
 * (freed here when the item cannot be added, or when it is NULL: out of memory). */
bool sg_check__add_core(checker *c, sg_violation *v, sg_core_kind kind, size_t index, char *text, const char *loc);

/* Append constraint `k` as a core item of v (sg_check__add_core), with its source location (the
 * user's, else the framework's) when it is a guard; false when out of memory. */
bool sg_check__add_constraint_core(checker *c, sg_violation *v, const sg_constraint *k);

/* ---- Queries (check.c) -------------------------------------------------------------------- */

/* Append t to v (a NULL t is skipped); out of memory sets v->failed, after which nothing is added. */
void sg_check__tv_push(tvec *v, const sg_term *t);

/* Release v's array; v is empty afterwards. */
void sg_check__tv_free(tvec *v);

/* The spec item of dim i in this phase: an adopted relation or pin, else the user's. */
const sg_term *sg_check__spec_item(checker *c, size_t i);

/* One question over hard[] under assume[] (either may be NULL), with the check's budget and stats.
 * While c->orc is set, a question without a model is answered by sg_check__oracle_ask when it can. */
int sg_check__ask(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume, size_t nassume,
                  bool model, bool core, sg_q_result *r);

/*
 * Shrink an unsat core: try to drop each member, in the order given by
 * `order` (lower first), keeping the drop when the rest is still unsat.
 * `keep[j]` marks assumption j as in the core on entry and on exit. While
 * c->guided, each question asks for a core too, and an unsat answer keeps only
 * its core (Z3's cores are small where the oracle's are every literal, which
 * would otherwise cost a question per literal).
 * sg_check__minimize_passes tries only the members whose order is in [first, last];
 * sg_check__minimize_core all of them (orders 0 to 3).
 */
int sg_check__minimize_passes(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume,
                              size_t n, const int *order, bool *keep, int first, int last);
int sg_check__minimize_core(checker *c, const sg_term *const *hard, size_t nhard, const sg_term *const *assume,
                            size_t n, const int *order, bool *keep);

/* ---- Components (check.c) ----------------------------------------------------------------- */

/* The definitions of the symbols of component `comp`. */
void sg_check__push_defs(checker *c, tvec *v, long comp);

/*
 * Dim `d` of component `comp` unknown for `why`; a component of several dims is named by its
 * first dim and its size ("timeout (9916 ms); component of A, 452 dims"), so the reader knows which
 * independent part of the problem ran out and how much of it. "canceled" stays as it is.
 */
void sg_check__set_unknown_in(checker *c, size_t d, long comp, const char *why);

/* sg_check__first_rt's stop: a violation is recorded, so the verdict is known and the rest is not read. */
bool sg_check__stop(const checker *c);

/* ---- Phase 2: values (check_values.c) ----------------------------------------------------- */

/* An explanation question: are the hard facts with the kept literals of assume[] satisfiable? True when
 * the presolve reads them exactly (sat), or, on an enumerated component, its models answer it (into
 * *r; a core is every assumption); false to ask Z3. A core question is Z3's on other components. */
bool sg_check__oracle_ask(checker *c, const sg_term *const *assume, size_t nassume, bool core, sg_q_result *r);

/* Turn a counterexample into a GUARD violation for each flagged dim: cex[] the sizes of every input
 * dim, flag[] the dims charged, lits/kind_of/index_of/keep the explanation's literals (kind 0 a dim
 * value, 1 a spec item, 2 a constraint) and the ones its core kept. Returns 0 or SG_ENOMEM. */
int sg_check__record_cex(checker *c, const sg_int *cex, const bool *flag, const tvec *lits, const int *kind_of,
                         const size_t *index_of, const bool *keep);

/* Pin dim i to its example size for the rest of the search (and in the box). */
void sg_check__pin(checker *c, size_t i);
/* Minimise the explanation (lits under hard, keep[] in/out, order by kind_of) as the options say:
 * fully (sg_check__minimize_core), or on lean checks only the dim values and spec items. */
int sg_check__minimize(checker *c, const tvec *hard, const tvec *lits, const int *kind_of, const int *order, bool *keep);
/* The explanation literals of input dim i for counterexample cex: its spec item (hard when fixed,
 * else behind its tracking literal, kind 1) and, for an open named dim, the literal pinning it to
 * cex[i] (kind 0); kind_of / index_of get one entry per literal pushed to lits. */
void sg_check__dim_lits(checker *c, size_t i, const sg_int *cex, tvec *hard, tvec *lits, int *kind_of,
                        size_t *index_of);

/* ---- Phase 2 before Z3: one-dim counterexamples (check_probe.c) ----------------------------- */

/* Constraint `cn` at symbol values ev[0..nb-1] (by symbol index; every symbol it reads must be
 * valued) and, for a traced shape, its dim's value `dval`: 1 it holds, 0 it does not (a guard false
 * or undefined there: "holds" is "defined and true", as solver/problem.c encodes it), -1 cannot
 * tell (an overflow, a replacement or traced value undefined there, an expression missing). */
int sg_check__holds_at(const sg_problem *p, const sg_constraint *cn, const sg_int *ev, size_t nb, sg_int dval);

/*
 * For a large component with non-linear checked guards (where Z3's non-linear arithmetic gives
 * up), refute what shapes one dim away from the example sizes can refute, before Z3 is asked: a
 * shape that moves one open dim to a value of its spec range and fails a checked constraint,
 * evaluated exactly, is a counterexample; its core is minimised over the dims that constraint and
 * the assumed constraints reach (docs/check.md "One-dim counterexamples"). Each round refutes and
 * pins the dims of one core, as values_in does; returns 0 when no such shape is left (values_in
 * then asks Z3 about what is open), or an error code.
 */
int sg_check__probe_component(checker *c, long comp);

/* A question of the probe's explanation (c->prb set): answered exactly by enumeration when every
 * variable it reaches has a finite domain (true, into *r; a core is every assumption), false to
 * ask Z3. */
bool sg_check__probe_ask(checker *c, const sg_term *const *assume, size_t nassume, bool core, sg_q_result *r);

/*
 * Phase 2, after phases 1 and 1b: each component once (at its first dim) searched for a shape
 * that fails a checked constraint, explained, its refuted dims pinned, until none is left (the
 * rest proved) or Z3 cannot decide (the rest unknown); a component reached once the time budget
 * is spent has its open dims unknown ("time budget") without a query. Sets c->box. Returns 0,
 * SG_ENOMEM, or a query's error.
 */
int sg_check__phase_values(checker *c);

/* ---- Isomorphic components (check_classes.c) ----------------------------------------------------- */

typedef struct sg_check_classes sg_check_classes;

/* The classes of phase 2 of c's problem, none yet; NULL when out of memory (then phase 2 decides
 * every component itself). Free with sg_check__classes_free (NULL-safe). */
sg_check_classes *sg_check__classes_new(const checker *c);
void sg_check__classes_free(sg_check_classes *k);

/* Before component comp is decided (c->classes set): 1 when it was decided here, by replaying the
 * decision of an earlier component with the same signature; 0 when values_in must decide it (then
 * recorded if it is the first of its class: call sg_check__classes_end after); SG_ENOMEM or an
 * error of the replay. */
int sg_check__classes_begin(checker *c, long comp);
/* After values_in(c, comp) returned rc: the record is kept only when the decision is replayable. */
void sg_check__classes_end(checker *c, long comp, int rc);

/* The recording hooks (no-ops unless a component is being recorded): a refutation
 * (sg_check__record_cex's arguments), a pin (sg_check__pin) or a proof (`pin` false) of dim i. */
void sg_check__rec_cex(checker *c, const sg_int *cex, const bool *flag, size_t nlits, const int *kind_of,
                       const size_t *index_of, const bool *keep);
void sg_check__rec_dim(checker *c, size_t i, bool pin);

/* Test hooks: whether phase 2 uses the classes at all (default true; per thread), and how many
 * components were replayed on this thread since the last call. */
void sg_check__set_classes(bool on);
size_t sg_check__classes_replays(void);
/* Whether the classes are on (phase 2 here, inference's enumeration in infer_fast.c). */
bool sg_check__classes_on(void);
/* One more component replayed, for sg_check__classes_replays (inference's count). */
void sg_check__classes_count(void);

#endif
