/*
 * query.h - the solver's question interface for the analyses: the terms of
 * one problem (solver/problem.h) as opaque handles, and budgeted questions
 * over them. An analysis that includes this header, and not <z3.h>, asks
 * everything it needs of Z3 here (docs/query.md):
 *
 *   - is a set of hard terms satisfiable under a set of named assumptions,
 *     within the call's budget? with a model (integer values of terms) when
 *     it is, a core (indices of the assumptions) when it is not, and Z3's
 *     reason when it cannot tell (sg_q_check);
 *   - the least or greatest value of an integer term over the points of a
 *     set of hard terms (sg_q_extreme), and "is there a point with t <= v"
 *     as its single step (sg_q_check with sg_q_le);
 *   - whether a candidate relation or congruence holds at every point:
 *     sg_q_check of the hard terms and sg_q_not(candidate), unsat = it holds.
 *
 * Terms. A `const sg_term *` names one term of the problem's Z3 context.
 * The problem's own terms (sg_q_dim, sg_q_spec, ...) live as long as the
 * problem. Every term a builder returns is kept by the problem until the
 * problem is freed or the caller releases it with sg_q_release (mark/release
 * brackets, for callers that build many short-lived terms: an inference
 * loop). Builders take NULL for "no term" and return NULL when an argument
 * is NULL, memory ran out or Z3 reported an error (sg_q_failed); a NULL
 * never reaches Z3, and a question with a NULL hard term is an error.
 * Building costs no Z3 call: terms reach a Z3 context only when a question
 * (or a model read) needs them (solver/term.h), so a check that is decided
 * without Z3 never makes one.
 *
 * Budgets. Every question runs under an sg_budget (problem.h): Z3's
 * resource limit per query (deterministic: tests decide by it), a wall-clock
 * limit per query, the call's deadline and its cancel token. An exhausted
 * budget is an answer (SG_Q_UNKNOWN with the reason), never an error.
 *
 * Answers are three-valued and sound: SG_Q_UNSAT only when Z3 proved it,
 * SG_Q_SAT only with a point Z3 found; anything else is SG_Q_UNKNOWN.
 *
 * Threads: a problem and its terms belong to one thread at a time (the
 * calling thread of one check); separate problems are independent.
 */
#ifndef SG_SOLVER_QUERY_H
#define SG_SOLVER_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "expr/expr.h"
#include "expr/num.h"
#include "report/report.h"

struct sg_problem;
struct sg_budget;

/* One term of a problem (opaque). */
typedef struct sg_term sg_term;
/* A model Z3 found (opaque; owned by an sg_q_result). */
typedef struct sg_q_model sg_q_model;

/* ---- The problem's own terms (borrowed: valid while the problem lives) ---------------- */

/* D_i, the runtime size of input dim i (Int). */
const sg_term *sg_q_dim(struct sg_problem *p, size_t i);
/* The spec item of input dim i (Bool), NULL when it has none. */
const sg_term *sg_q_spec(struct sg_problem *p, size_t i);
/* The tracking literal of dim i's spec item (Bool), NULL when it has none. */
const sg_term *sg_q_spec_lit(struct sg_problem *p, size_t i);
/* Constraint k holds (Bool). */
const sg_term *sg_q_holds(struct sg_problem *p, size_t k);
/* The tracking literal of constraint k (Bool). */
const sg_term *sg_q_lit(struct sg_problem *p, size_t k);
/* The definition of symbol k (Bool: s == D_i or its replacement), NULL when none. */
const sg_term *sg_q_def(struct sg_problem *p, size_t k);
/* The conjunction of every definition (Bool), NULL when there is none. */
const sg_term *sg_q_defs(struct sg_problem *p);
/* The Int constant standing for ShapeEnv symbol `sym`, NULL when `sym` is not a symbol. */
const sg_term *sg_q_symbol(struct sg_problem *p, const sg_expr *sym);
/* The X variable of spec root name j (0 <= j < p->nx). */
const sg_term *sg_q_xvar(struct sg_problem *p, size_t j);

/* ---- Builders (kept by the problem; NULL in, NULL out) --------------------------------- */

/*
 * The value of expression `e` (of the problem's pool or an overlay of it) as
 * a term, into `*out`. Returns 0; SG_EUNSUPPORTED for what has no finite
 * encoding; SG_ERROR with Z3's message. The term is borrowed from the
 * encoder's memo (valid while the problem lives; sg_q_release leaves it).
 */
int sg_q_expr(struct sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err);
/* For a boolean `e`: "defined(e) and e" (as sg_q_expr otherwise). */
int sg_q_expr_holds(struct sg_problem *p, const sg_expr *e, const sg_term **out, sg_error *err);

const sg_term *sg_q_true(struct sg_problem *p);
const sg_term *sg_q_num(struct sg_problem *p, sg_int v);
const sg_term *sg_q_not(struct sg_problem *p, const sg_term *a);
const sg_term *sg_q_eq(struct sg_problem *p, const sg_term *a, const sg_term *b);
const sg_term *sg_q_le(struct sg_problem *p, const sg_term *a, const sg_term *b);
const sg_term *sg_q_ge(struct sg_problem *p, const sg_term *a, const sg_term *b);
const sg_term *sg_q_implies(struct sg_problem *p, const sg_term *a, const sg_term *b);
/* and(a, b) where a NULL side counts as "true" (both NULL: NULL). */
const sg_term *sg_q_and2(struct sg_problem *p, const sg_term *a, const sg_term *b);
/* and(v[0..n-1]) (n == 0: "true"; n == 1 is still an "and" of one term: a caller that wants
 * v[0] itself passes it). NULL when any v[i] is NULL. */
const sg_term *sg_q_and(struct sg_problem *p, const sg_term *const *v, size_t n);
const sg_term *sg_q_add(struct sg_problem *p, const sg_term *a, const sg_term *b);
const sg_term *sg_q_mul(struct sg_problem *p, const sg_term *a, const sg_term *b);
/* Z3's (SMT-LIB) mod: the result lies in [0, |b|) for b != 0. */
const sg_term *sg_q_mod(struct sg_problem *p, const sg_term *a, const sg_term *b);
/* A Bool constant named `name`: the same name gives the same constant (an assumption literal). */
const sg_term *sg_q_literal(struct sg_problem *p, const char *name);
/* A new Int / Bool constant, distinct from every other (its name starts with `prefix`). */
const sg_term *sg_q_fresh_int(struct sg_problem *p, const char *prefix);
const sg_term *sg_q_fresh_bool(struct sg_problem *p, const char *prefix);
/* `t` with from[j] replaced by to[j] (from[j]: constants). NULL when any argument is NULL. */
const sg_term *sg_q_substitute(struct sg_problem *p, const sg_term *t, const sg_term *const *from,
                               const sg_term *const *to, size_t n);

/* Lifetime brackets: terms built after `sg_q_mark` are released by `sg_q_release(p, mark)`
 * (the caller must not use them afterwards; the problem's own terms and expression encodings
 * are never released). */
size_t sg_q_mark(const struct sg_problem *p);
void sg_q_release(struct sg_problem *p, size_t mark);

/* Why builders return NULL: SG_ENOMEM (memory ran out) or SG_ERROR (Z3 reported an error in
 * the problem's context); every builder then returns NULL. 0 when neither happened. */
int sg_q_failed(const struct sg_problem *p);
/* Whether the problem runs on the engine's warm contexts (solver/ctxpool.h, sg_ctxpool_warm): its
 * answers may depend on what ran before, so a caller may answer questions by other exact means
 * than Z3's (models and cores of its own choosing); with contexts of the call's own it may not. */
bool sg_q_warm(const struct sg_problem *p);
/* Z3's message for the error sg_q_failed reports ("" when there is none); borrowed, valid
 * until the next Z3 call on the problem. */
const char *sg_q_error_msg(const struct sg_problem *p);

/* ---- Looking into terms (for analyses that read the structure of the constraints) ------- */

typedef enum sg_q_op {
    SG_QOP_OTHER = 0, /* anything not listed */
    SG_QOP_CONST,     /* an uninterpreted constant (a symbol, D_i, X, a literal) */
    SG_QOP_NUM,       /* an integer numeral */
    SG_QOP_TRUE, SG_QOP_FALSE,
    SG_QOP_NOT, SG_QOP_AND, SG_QOP_OR, SG_QOP_IMPLIES, SG_QOP_ITE,
    SG_QOP_EQ, SG_QOP_LE, SG_QOP_LT, SG_QOP_GE, SG_QOP_GT,
    SG_QOP_ADD, SG_QOP_SUB, SG_QOP_MUL, SG_QOP_DIV, SG_QOP_MOD, SG_QOP_UMINUS
} sg_q_op;

sg_q_op sg_q_op_of(struct sg_problem *p, const sg_term *t);
/* Number of arguments of an application (0 for constants and numerals). */
size_t sg_q_nargs(struct sg_problem *p, const sg_term *t);
/* Argument j of an application (borrowed from `t`: valid while `t` is). */
const sg_term *sg_q_arg(struct sg_problem *p, const sg_term *t, size_t j);
/* A number unique to the term within its problem (equal terms share it: hash-consing). */
unsigned sg_q_id(struct sg_problem *p, const sg_term *t);
/* An Int constant (uninterpreted, no arguments)? */
bool sg_q_is_int_const(struct sg_problem *p, const sg_term *t);
/* The value of an integer numeral; false when `t` is none or it does not fit sg_int. */
bool sg_q_num_value(struct sg_problem *p, const sg_term *t, sg_int *out);
/* An application of an uninterpreted symbol (a constant of any sort, or a function with
 * arguments): true also for what sg_q_is_int_const accepts. */
bool sg_q_is_uninterpreted(struct sg_problem *p, const sg_term *t);
/* A division by a literal: t is mod, integer div or rem with an integer numeral as its
 * second argument; *divisor is that numeral (it may be 0 or negative). False otherwise, or
 * when the numeral does not fit sg_int. */
bool sg_q_divisor(struct sg_problem *p, const sg_term *t, sg_int *divisor);

/* ---- Questions ------------------------------------------------------------------------- */

typedef enum sg_q_answer {
    SG_Q_UNSAT = 0, /* proved: no point */
    SG_Q_SAT,       /* a point (in the model when one was asked for) */
    SG_Q_UNKNOWN    /* the budget ran out, the call was cancelled, or Z3 gave up: see reason */
} sg_q_answer;

/* One question: is the conjunction of hard[] satisfiable with every assume[] true? */
typedef struct sg_question {
    const sg_term *const *hard;   /* NULL entries are not allowed */
    size_t nhard;
    const sg_term *const *assume; /* Bool constants (named items: sg_q_lit, sg_q_spec_lit, sg_q_literal) */
    size_t nassume;
    bool want_model;              /* on SAT: result.model */
    bool want_core;               /* on UNSAT: result.core */
} sg_question;

typedef struct sg_q_result {
    sg_q_answer answer;
    sg_q_model *model;  /* on SAT when asked; freed by sg_q_result_dispose */
    size_t *core;       /* on UNSAT when asked: indices into assume[] of an unsat core (sg_free) */
    size_t ncore;
    bool core_all;      /* that core is every assumption because the solver tracked none (a solver of
                         * tactics, problem_run.c): it says nothing about which ones conflict */
    char reason[64];    /* on UNKNOWN: Z3's reason, "time budget", "canceled", ... */
} sg_q_result;

/*
 * Answer `q` under budget `b` (NULL: none), counting into `stats` (may be
 * NULL). Z3 picks its incremental core for linear questions and the full
 * solver otherwise (problem.h); the answer is the same. Returns 0 (any
 * answer), SG_ENOMEM or SG_ERROR (Z3 failed: not an "unknown"). The result
 * must be given to sg_q_result_dispose even on error.
 */
int sg_q_check(struct sg_problem *p, const sg_question *q, const struct sg_budget *b, sg_check_stats *stats,
               sg_q_result *out, sg_error *err);

/* Release what a result holds (model, core); NULL-safe, idempotent. */
void sg_q_result_dispose(struct sg_problem *p, sg_q_result *r);

/* The integer value of `t` in `m` (model completion: an unconstrained term gets a value);
 * false when it is not an integer that fits sg_int. */
bool sg_q_model_int(struct sg_problem *p, const sg_q_model *m, const sg_term *t, sg_int *out);

/*
 * The least (dir < 0) or greatest (dir > 0) value of Int term `t` over the
 * points of hard[0..nhard-1], starting from `start`, a value of `t` at some
 * point (a model's, or the traced one). Searches "t <= target" (or >=):
 * galloping away from the best value attained by 1, 4, 16, ... up to
 * `gallop_limit` (0: 2^20), then halving the gap between the proved bound
 * and the best value until they meet; at most `max_queries` questions
 * (0: 64). `*out` is the exact extreme when `*exact`; otherwise a proved
 * bound when one was found (out->inf == 0), else infinity in direction
 * `dir` (out->inf == dir) meaning "no bound proved", not "unbounded".
 * Returns 0, SG_ENOMEM or SG_ERROR.
 */
int sg_q_extreme(struct sg_problem *p, const sg_term *const *hard, size_t nhard, const sg_term *t, int dir,
                 sg_int start, sg_int gallop_limit, unsigned max_queries, const struct sg_budget *b,
                 sg_check_stats *stats, sg_bound *out, bool *exact, sg_error *err);

/*
 * How a search for an extreme ends (sg_q_extreme's, and inference's own, analysis/infer_range.c),
 * from its costs: the cost of a value v is v for a minimum (dir < 0) and -v for a maximum,
 * minimised. `bestc` is the least cost a point attained, `lbc` a proved lower bound of the
 * cost when `lb_known`. When they meet the extreme is exact; otherwise `*out` is the proved
 * bound, or infinity in direction `dir` when none was proved.
 */
void sg_q_extreme_end(int dir, bool lb_known, sg_int lbc, sg_int bestc, sg_bound *out, bool *exact);

/* The solver's name and version ("z3", "4.8.12"), for records of what decided. The version is the
 * loaded libz3's: asking for it loads libz3 (z3fns.h), "unavailable" when it cannot be. */
const char *sg_solver_name(void);
void sg_solver_version(char *buf, size_t cap);

#endif
