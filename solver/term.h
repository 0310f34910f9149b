/*
 * term.h - the solver's terms outside Z3 until a question needs Z3.
 *
 * A term store (sg_terms) holds the terms one encoder and its problem build
 * (solver/smt.h, solver/problem.h, solver/query.h): integer and real
 * numerals, named and fresh constants, and applications of the Boolean and
 * arithmetic operators the encoding uses. Terms are hash-consed (equal
 * operator, sort, arguments and text give the same `const sg_term *`, so
 * pointer equality is term equality, as it is for Z3's asts) and readable
 * without Z3 (operator, sort, arguments, numeral value, a number per term).
 *
 * No Z3 context exists until one is asked for (sg_terms_context, sg_t_z3):
 * most checks are decided by the presolve and by enumeration and never ask
 * Z3, and then neither a context nor a single Z3 term is made. Until then the
 * store records every Z3 call the terms stand for - making a term, taking and
 * dropping a reference, in the order the callers made them; the first request
 * takes a context (the engine's pool's, or a new one) and replays the record,
 * so Z3 sees exactly the calls it would have seen had they been made at once
 * (the same ids, hence the same models and cores). From then on every call
 * goes straight to Z3 as well.
 *
 * References follow Z3's discipline: a term a builder returns has none; the
 * caller takes one (sg_t_ref) before the next builder call it needs the term
 * to survive and drops it when done (sg_t_unref). The store itself keeps
 * every term it ever made readable until it is freed (a dropped reference
 * frees the Z3 ast, never the sg_term).
 *
 * Errors: a builder returns NULL for a NULL argument and when memory runs out
 * (sg_terms_failed says SG_ENOMEM); Z3's errors, which can only surface once
 * a context exists, make sg_terms_failed say SG_ERROR, with Z3's message.
 *
 * Threads: a store belongs to one thread at a time.
 */
#ifndef SG_SOLVER_TERM_H
#define SG_SOLVER_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "solver/z3fns.h"

#include "expr/num.h"
#include "shapegate/error.h"
#include "solver/ctxpool.h"

typedef struct sg_terms sg_terms;
typedef struct sg_term sg_term;

typedef enum sg_tsort {
    SG_TS_UNKNOWN = 0, /* only a power's (Z3 4.8 makes Int^Int a Real, later ones an Int): ask sg_t_sort */
    SG_TS_BOOL,
    SG_TS_INT,
    SG_TS_REAL
} sg_tsort;

typedef enum sg_top {
    SG_T_NUM,    /* a numeral: text "-7" (Int) or "7/2" (Real) */
    SG_T_CONST,  /* a named constant: the same name and sort give the same term */
    SG_T_FRESH,  /* a constant distinct from every other (Z3_mk_fresh_const; text: its prefix) */
    SG_T_TRUE, SG_T_FALSE,
    SG_T_NOT, SG_T_AND, SG_T_OR, SG_T_IMPLIES, SG_T_ITE,
    SG_T_EQ, SG_T_LE, SG_T_LT, SG_T_GE, SG_T_GT,
    SG_T_ADD, SG_T_SUB, SG_T_MUL,
    SG_T_DIV,    /* Int / Int: Euclidean division (Z3's div); Real / Real: division */
    SG_T_MOD, SG_T_UMINUS,
    SG_T_TO_REAL, SG_T_TO_INT, SG_T_POWER
} sg_top;

/* A store whose context, once needed, comes from `contexts` (NULL: a context of its own).
 * Returns 0 or SG_ENOMEM. */
int sg_terms_new(sg_terms **out, sg_ctxpool *contexts, sg_error *err);
/* Free the store; its context (when one was made) goes back to the pool, reusable when Z3 saw
 * no error, every reference was dropped and sg_terms_no_reuse was not called. NULL-safe. */
void sg_terms_free(sg_terms *ts);
/* Delete the context at the end instead of reusing it (a caller that leaves references). */
void sg_terms_no_reuse(sg_terms *ts);

/* ---- Builders (no reference; NULL in, NULL out) ----------------------------------------- */

const sg_term *sg_t_num(sg_terms *ts, const char *text, sg_tsort sort);
const sg_term *sg_t_int(sg_terms *ts, sg_int v);
const sg_term *sg_t_const(sg_terms *ts, const char *name, sg_tsort sort);
const sg_term *sg_t_fresh(sg_terms *ts, const char *prefix, sg_tsort sort);
const sg_term *sg_t_true(sg_terms *ts);
const sg_term *sg_t_false(sg_terms *ts);
/* An application of `op` (not NUM, CONST, FRESH, TRUE or FALSE) to args[0..n-1]: NOT, UMINUS,
 * TO_REAL, TO_INT take one argument, ITE three, AND, OR, ADD, SUB, MUL any number >= 1 (AND and
 * OR also 0), the others two. */
const sg_term *sg_t_app(sg_terms *ts, sg_top op, size_t n, const sg_term *const *args);
const sg_term *sg_t_app1(sg_terms *ts, sg_top op, const sg_term *a);
const sg_term *sg_t_app2(sg_terms *ts, sg_top op, const sg_term *a, const sg_term *b);
const sg_term *sg_t_ite(sg_terms *ts, const sg_term *c, const sg_term *t, const sg_term *e);

/* `t` with every from[j] (constants) replaced by to[j], all at once (Z3_substitute's meaning);
 * `t` itself when none occurs. NULL when an argument is NULL or memory ran out. */
const sg_term *sg_t_substitute(sg_terms *ts, const sg_term *t, size_t n, const sg_term *const *from,
                               const sg_term *const *to);

/* Take and drop a reference (Z3_inc_ref / Z3_dec_ref of the term's ast). NULL-safe. */
void sg_t_ref(sg_terms *ts, const sg_term *t);
void sg_t_unref(sg_terms *ts, const sg_term *t);

/* ---- Reading terms (no Z3, but for a power's sort) ----------------------------------------- */

sg_top sg_t_op(const sg_term *t);
size_t sg_t_nargs(const sg_term *t);
const sg_term *sg_t_arg(const sg_term *t, size_t j);
/* A number unique to the term within its store (from 1). */
unsigned sg_t_id(const sg_term *t);
/* The sort; a power's is Z3's, which takes a context (SG_TS_UNKNOWN when Z3 failed). */
sg_tsort sg_t_sort(sg_terms *ts, const sg_term *t);
/* A numeral's text, a constant's name or a fresh constant's prefix; NULL otherwise. */
const char *sg_t_text(const sg_term *t);
/* The value of an Int numeral that fits sg_int. */
bool sg_t_int_value(const sg_term *t, sg_int *out);

/* ---- Evaluating at a point (no Z3) ---------------------------------------------------------- */

/* How sg_t_eval reads a constant (named or fresh) `c`: 1 with its value in *v (a Bool's is 0 or
 * 1), 0 for the default (0, false: any value of an unassigned constant completes the point into
 * a model), -1 when it cannot tell. */
typedef int (*sg_t_value_fn)(void *arg, const sg_term *c, sg_int *v);

/*
 * The value of Bool or Int term `t` (a Bool's is 0 or 1) where each constant has the value
 * `val` gives, with SMT-LIB's meaning (div and mod Euclidean: a = b*q + r, 0 <= r < |b|).
 * Returns 1 with *out set, or 0 when it cannot tell: a Real or a power inside, a division by zero
 * (which SMT-LIB leaves to the model), a value beyond sg_int, a nesting deeper than 512, or more
 * than *budget nodes visited in all (counted down; the caller's cap on the work). What decides
 * a connective or an ite is read first: and(false, x) is false whatever x is.
 */
int sg_t_eval(const sg_term *t, sg_t_value_fn val, void *arg, size_t *budget, sg_int *out);

/* ---- Z3 -------------------------------------------------------------------------------------- */

/* The context, made now (and the record replayed) when there is none yet; NULL when Z3 cannot
 * make one or the replay failed (sg_terms_failed says why). */
Z3_context sg_terms_context(sg_terms *ts);
/* Whether the context exists already (nothing is made). */
bool sg_terms_live(const sg_terms *ts);
/* The Z3 ast of `t` (borrowed: alive while the caller's reference on `t` is), making the context
 * first when needed; NULL when `t` is NULL or Z3 failed. */
Z3_ast sg_t_z3(sg_terms *ts, const sg_term *t);
/* 0, SG_ENOMEM (a builder ran out of memory) or SG_ERROR (Z3 reported an error). */
int sg_terms_failed(const sg_terms *ts);
/* Z3's message for SG_ERROR, "out of memory" for SG_ENOMEM, "" otherwise (borrowed). */
const char *sg_terms_error_msg(const sg_terms *ts);

#endif
