/*
 * problem.h - the normalised constraint set the checker and the inference
 * work on, built once from a trace and encoded into one Z3 context.
 * Solver-internal (check.c, infer.c, spec.c, interval.c).
 *
 * Variables
 *   D_i    the runtime size of input dim i (a Z3 Int), for every input dim;
 *   s      every ShapeEnv symbol (sg_smt_symbol);
 *   X_n    one per Dim name / derived root name of the spec.
 *
 * Constraints, each with a tracking literal for unsat cores:
 *   definitions (hard)   s == D_i for the first input dim among s's sources;
 *                        for a symbol without an input source, s == its replacement;
 *   constraints          every guard, runtime assert, traced range, replacement,
 *                        and input binding D_i == traced value of dim i;
 *                        `checked` ones are what the spec must satisfy; the others
 *                        (over auto/static/unbacked symbols only) are assumptions:
 *                        torch chose those dims from the guards, so they hold;
 *   spec items           per input dim: DIM  D_i == X_name, X_name in [max(min, 2), max];
 *                        DERIVED D_i == f(X_root), X_root in [max(root min, 2), root max]
 *                        (torch creates a root like a size: range_constraints [2, max];
 *                        `root - k` alone keeps the root's min: torch re-roots it), D_i >= 2;
 *                        STATIC/UNSET D_i == size; AUTO/DYNAMIC with bounds D_i in [min, max].
 */
#ifndef SG_SOLVER_PROBLEM_H
#define SG_SOLVER_PROBLEM_H

#include "solver/z3fns.h"

#include "report/report.h"
#include "solver/smt.h"
#include "solver/ctxpool.h"

/* One constraint of the trace, encoded. */
typedef struct sg_constraint {
    sg_core_kind kind;      /* GUARD, RANGE, REPLACEMENT or INPUT */
    size_t index;           /* into sg_trace_guards / sg_trace_symbols / sg_trace_inputs */
    const sg_expr *expr;    /* the boolean expression (for INPUT: Eq(value-symbol..)); may be NULL */
    const sg_term *holds;   /* referenced: the constraint holds */
    const sg_term *lit;     /* referenced: its tracking literal */
    bool checked;           /* the spec must satisfy it (else it is assumed) */
    bool unbacked;          /* mentions a data-dependent symbol: never checked */
} sg_constraint;

typedef struct sg_problem {
    const sg_trace *trace;
    sg_pool *pool;
    sg_smt *smt;
    sg_terms *ts;            /* the encoder's terms (borrowed from smt); Z3 only once asked */
    const sg_input_dim *inputs;
    size_t ninputs;
    const sg_symbol_info *syms;
    size_t nsyms;
    const sg_term **dvar;    /* [ninputs] referenced D_i */
    const sg_term **spec;    /* [ninputs] referenced spec item of dim i, NULL when none */
    const sg_term **spec_lit; /* [ninputs] referenced tracking literal of the spec item, NULL when none */
    bool *named;             /* [ninputs] DIM or DERIVED: a dim whose freedom the user claims */
    long *sym_input;         /* [nsyms] index of the defining input dim, -1 when none */
    bool *sym_checked;       /* [nsyms] linked to a named input dim */
    const sg_term *defs;     /* referenced conjunction of the definitions */
    sg_constraint *cons;
    size_t ncons;
    const char **names;      /* spec root names of X variables (borrowed from the trace) */
    const sg_term **xvar;    /* referenced X variables */
    size_t *x_nplain;        /* [nx] how many input dims the spec names plainly by it */
    size_t nx;
    long *x_slot;            /* names -> X index, open addressing (-1: empty), x_cap slots */
    size_t x_cap;
    long *src_slot;          /* input source -> first input dim of that source, src_cap slots */
    size_t src_cap;
    sg_ctxpool *contexts;    /* where the context came from and goes back (NULL: private) */
    Z3_solver inc;           /* referenced incremental solver: linear queries, each in a scope of its own */
    Z3_solver solver;        /* referenced full solver: the other queries (reset in between) */
    Z3_solver nia;           /* referenced full solver without Z3's nlsat step: queries with many
                              * non-linear divisions (problem_run.c "Many divisions") */
    Z3_solver nl;            /* referenced incremental solver with the full one's arithmetic: non-linear
                              * queries with assumptions (problem_run.c "Non-linear questions with assumptions") */
    uint64_t rlimit_set[4];  /* inc, solver, nia, nl: 1 + the rlimit their parameters say; 0: none yet */
    /* The incremental solvers' open scopes (problem_run.c "The same hard terms again"): the hard
     * terms of the last query, asserted there, kept for a next query with the same ones. */
    struct sg_scope {
        const sg_term **hard;
        size_t n, cap;
        bool open;           /* the solver has a query's scope open */
    } inc_scope, nl_scope;
    Z3_model witness;        /* referenced: the last model a question asked for, or NULL (query.c) */
    Z3_model example;        /* referenced: the example sizes as a model, made at first use, or NULL */
    bool example_tried;
    struct sg_ex_value {     /* [nex] the example sizes by term id, for sg_t_eval (query.c), made at first use */
        sg_int v;
        bool set;
    } *ex;
    size_t nex;
    unsigned *amark, astamp; /* the current question's assumptions by term id (query.c's witnesses) */
    size_t namark;
    unsigned *seen, stamp;   /* marks by term id of the linearity walk (stamp: the current walk) */
    size_t nseen;
    const sg_term **keep;    /* every term made here, referenced until sg_problem_free */
    size_t nkeep, keep_cap;
    /* Independent components: input dims, symbols and constraints that share no
     * variable (through definitions, spec names, or a constraint mentioning both)
     * are decided separately, so a check costs the sum of its parts. */
    const sg_term **sym_def; /* [nsyms] the definition of symbol k, or NULL */
    long *input_comp;        /* [ninputs] component of input dim i */
    long *sym_comp;          /* [nsyms] component of symbol k */
    long *cons_comp;         /* [ncons] component of constraint c; -1 when it touches no input */
} sg_problem;

/* Build and encode the problem of `t`; new expressions go into `pool`, an
 * overlay of the trace's frozen pool (borrowed: it must outlive the problem).
 * SG_EUNSUPPORTED when part of it has no finite Z3 encoding (an exponent over
 * 4096, an infinity inside arithmetic); for a guard the message starts "guard N: ". */
int sg_problem_build(sg_problem **out, const sg_trace *t, sg_pool *pool, const sg_runtime *rt, sg_error *err);
void sg_problem_free(sg_problem *p);

/* The budget a query runs under, and what it reports to. */
typedef struct sg_budget {
    unsigned query_timeout_ms; /* 0: none */
    uint64_t query_rlimit;     /* 0: none */
    double deadline;           /* sg_problem_now() value after which no query starts; 0: none */
    sg_cancel *cancel;         /* the call's cancel token, or NULL */
    const sg_runtime *rt;      /* counters, or NULL */
} sg_budget;

/* Reference `a` until the problem is freed (Z3's RC discipline: a fresh term
 * must be referenced before the next builder call). Returns `a`, or NULL when
 * `a` is NULL. */
const sg_term *sg_problem_keep(sg_problem *p, const sg_term *a);
/* The X index of spec root `name`, -1 when no input names it. */
long sg_problem_x_index(const sg_problem *p, const char *name);

/* Symbols by their position in one component (the isomorphic components' signatures,
 * sg_expr_shape): pos[k] for symbol k of component `comp`. sg_problem_sym_pos(sym, ctx) with ctx
 * an sg_comp_pos: sym's position, SIZE_MAX for a symbol of another component or none of p's. */
typedef struct sg_comp_pos {
    const sg_problem *p;
    const size_t *pos; /* [nsyms] */
    long comp;
} sg_comp_pos;
size_t sg_problem_sym_pos(const sg_expr *sym, void *ctx);
const sg_term *sg_problem_num(sg_problem *p, sg_int v);
/* and(a, b); a NULL side is "true". */
const sg_term *sg_problem_and2(sg_problem *p, const sg_term *a, const sg_term *b);
/* The problem's Z3 context, made now (solver/term.h) when no question needed it yet; NULL when
 * Z3 failed. */
Z3_context sg_problem_context(sg_problem *p);

/* Seconds on a monotonic clock. */
double sg_problem_now(void);

/*
 * Check the conjunction of `hard[0..nhard-1]` under `assumptions[0..nassume-1]`.
 * Returns 0 and sets *res to Z3_L_TRUE / Z3_L_FALSE / Z3_L_UNDEF; on TRUE and
 * `model` non-NULL, a referenced model (Z3_model_dec_ref it); on FALSE and
 * `core` non-NULL, the indices into `assumptions` of an unsat core (new array,
 * sg_free) in *core and *ncore, and *core_all true when that core is every
 * assumption because the solver tracked none (many divisions: problem_run.c);
 * on UNDEF, Z3's reason (or "time budget") copied into `reason` (64 bytes).
 * Counts into `stats`.
 */
int sg_problem_check(sg_problem *p, const sg_term *const *hard, size_t nhard, const sg_term *const *assumptions,
                     size_t nassume, const sg_budget *b, sg_check_stats *stats, Z3_lbool *res,
                     Z3_model *model, size_t **core, size_t *ncore, bool *core_all, char reason[64], sg_error *err);

/* The integer value of `term` in `model` (model completion on); false when not a 128-bit integer. */
bool sg_problem_model_int(sg_problem *p, Z3_model model, const sg_term *term, sg_int *out);

/* The torch source name of a symbol (its first source), or NULL. For printing guards. */
const char *sg_problem_source_of(const sg_expr *sym, void *problem);

#endif
