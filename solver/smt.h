/**
 * @file smt.h
 * @brief The Z3 encoding of guard expressions, with exactly the semantics of
 *        sg_expr_eval() (Python floor division and modulo for every sign).
 *
 * An `sg_smt` owns a term store (solver/term.h: terms outside Z3 until a
 * question needs Z3; then one Z3 context, reference-counted, with an error
 * handler that records instead of exiting) and a memo from expression ids to
 * terms, so encoding a shared subterm twice costs nothing. Every expression is encoded
 * as a pair: its value, and its *definedness* — a Boolean that is false exactly
 * where sg_expr_eval() reports SG_EUNDEFINED (Python would raise). A guard
 * "holds" when it is defined and true.
 *
 * Ownership: terms returned here are borrowed; they stay valid until the
 * `sg_smt` is freed. Threading: one `sg_smt` per thread.
 */
#ifndef SHAPEGATE_SMT_H
#define SHAPEGATE_SMT_H

#include "solver/z3fns.h"

#include "expr/expr.h"
#include "solver/term.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_smt sg_smt;

/**
 * Create an encoder for expressions of `pool` (borrowed: it must outlive the
 * encoder), with a private context once one is needed. Returns 0 or
 * SG_ENOMEM (Z3 is not started here: sg_smt_context() says whether it can).
 */
int sg_smt_new(sg_smt **out, sg_pool *pool, sg_error *err);

/**
 * Free the encoder, its memo and its terms. Its Z3 context, when one was
 * made, goes back to the engine's pool when it came from one
 * (solver/ctxpool.h; a new context costs about 0.5 ms) unless Z3 failed in it
 * or sg_smt_no_reuse() was called, else it is deleted; so every term, solver
 * and model made in the context by the caller must be released first.
 * NULL-safe.
 */
void sg_smt_free(sg_smt *smt);

/**
 * Delete the context with the encoder instead of reusing it: for a caller
 * that had to leave references behind (an allocation failure while
 * remembering a term). NULL-safe.
 */
void sg_smt_no_reuse(sg_smt *smt);

/** The Z3 context (borrowed), made now when the terms had none (solver/term.h); NULL when Z3
 * failed. */
Z3_context sg_smt_context(sg_smt *smt);

/** The encoder's term store (borrowed): the terms of a problem built over this encoder. */
sg_terms *sg_smt_terms(sg_smt *smt);

/** The Z3 ast of term `t` (borrowed), making the context when needed; NULL when Z3 failed. */
Z3_ast sg_smt_z3(sg_smt *smt, const sg_term *t);

/**
 * Encode `e`. `*value` gets a term of sort Int, Real or Bool (following
 * sg_expr_sort), `*defined` a Bool term. Either pointer may be NULL.
 * Returns 0; SG_EUNSUPPORTED for what has no finite encoding (an infinity
 * left inside arithmetic, an exponent over 4096); SG_ENOMEM; SG_ERROR with
 * Z3's message when Z3 reported an error (only once the context exists).
 */
int sg_smt_encode(sg_smt *smt, const sg_expr *e, const sg_term **value, const sg_term **defined, sg_error *err);

/** For a boolean `e`: the term `defined(e) and e`. */
int sg_smt_holds(sg_smt *smt, const sg_expr *e, const sg_term **out, sg_error *err);

/** The Int constant standing for symbol `sym` (borrowed), or NULL if `sym` is not a symbol. */
const sg_term *sg_smt_symbol(sg_smt *smt, const sg_expr *sym);

/**
 * SMT-LIB 2 text of `e`: `(declare-const ...)` lines for its symbols, then
 * for a boolean `e` `(assert <holds>)`, for a number `(define-fun value ...)`
 * and `(define-fun defined () Bool ...)`. New string in `*out`, free with
 * sg_free().
 */
int sg_smt_to_smtlib(char **out, sg_smt *smt, const sg_expr *e, sg_error *err);

/**
 * Evaluate the *encoding* of `e` in a Z3 model that gives each symbol its
 * value from `values` (indexed by symbol index), through Z3's model
 * evaluation. Same contract as sg_expr_eval() (SG_EUNDEFINED when the
 * definedness term is false), so the two can be compared. For tests.
 */
int sg_smt_eval(sg_value *out, sg_smt *smt, const sg_expr *e, const sg_int *values, size_t nvalues,
                sg_error *err);

#ifdef __cplusplus
}
#endif

#endif
