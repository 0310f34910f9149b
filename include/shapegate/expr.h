/**
 * @file expr.h
 * @brief The guard expression language: a hash-consed DAG of integer, real and
 *        boolean expressions with torch's functions and Python integer semantics.
 *
 * Ownership: every expression belongs to the `sg_pool` that made it and lives
 * until the pool is freed; expressions are immutable and handed out as
 * `const sg_expr *`. Structurally equal expressions built in one pool are the
 * same pointer, so equality is `a == b`.
 *
 * Construction normalises the way sympy does on construction (flattening and
 * sorting of `+`, `*`, `Max`, `Min`; like terms and equal factors combined;
 * constants folded; relations whose sides differ by a constant decided;
 * `&` and `|` flattened with repeats dropped, keeping the written order, which
 * torch's messages show), so `parse(print(e)) == e` for every expression.
 *
 * Errors: constructors return NULL on failure and record the first failure in
 * the pool (`sg_pool_error`). A NULL argument makes a constructor return NULL
 * without touching the recorded error, so a whole expression can be built and
 * checked once at the end.
 *
 * Threading: a pool is built from one thread at a time; a pool that no one
 * builds in any more (a loaded trace's) may be read, and overlaid
 * (sg_pool_overlay_new), from any number of threads at once.
 * The semantics of every operation are in docs/guard-language.md.
 */
#ifndef SHAPEGATE_EXPR_H
#define SHAPEGATE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/common.h"
#include "shapegate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_pool sg_pool;
typedef struct sg_expr sg_expr;

/** Node kinds. The comment gives the sympy class name that `tree` fields use. */
typedef enum sg_kind {
    /* leaves */
    SG_INT,       /**< Integer literal */
    SG_RAT,       /**< Real literal p/q (reduced, q >= 1): sympy Rational, or an exact real quotient */
    SG_TRUE,      /**< BooleanTrue */
    SG_FALSE,     /**< BooleanFalse */
    SG_INF,       /**< int_oo / -int_oo (integer) or oo / -oo (real) */
    SG_SYM,       /**< Symbol: s<N>, u<N>, a Dim name, or a source such as L['x'].size()[0] */
    /* arithmetic */
    SG_ADD,       /**< Add, n-ary */
    SG_MUL,       /**< Mul, n-ary; a numeric coefficient comes first */
    SG_POW,       /**< Pow with a literal exponent >= 2 */
    SG_POWNAT,    /**< PowByNatural(base, exp), exp >= 0 */
    SG_FLOORDIV,  /**< FloorDiv: Python // */
    SG_CLEANDIV,  /**< CleanDiv: a FloorDiv known to be exact */
    SG_CEILDIV,   /**< CeilDiv: -(-a // b) */
    SG_MOD,       /**< Mod: Python % */
    SG_PYMOD,     /**< PythonMod: Python % */
    SG_MODIDX,    /**< ModularIndexing(a, b, c) = (a // b) % c */
    SG_TRUEDIV,   /**< IntTrueDiv: exact real quotient a / b */
    SG_TRUNC,     /**< TruncToInt: round toward zero */
    SG_FLOOR,     /**< FloorToInt */
    SG_CEIL,      /**< CeilToInt */
    SG_MAX,       /**< Max, n-ary */
    SG_MIN,       /**< Min, n-ary */
    SG_WHERE,     /**< Where(cond, then, else) */
    SG_PIECEWISE, /**< Piecewise((e1, c1), ..., (en, cn)); args are e1, c1, ..., en, cn */
    SG_IDENTITY,  /**< Identity(x) */
    /* relations */
    SG_EQ, SG_NE, SG_LT, SG_LE, SG_GT, SG_GE,
    /* connectives */
    SG_AND, SG_OR, SG_NOT,
    SG_KIND_COUNT
} sg_kind;

/** What an expression denotes. */
typedef enum sg_sort { SG_SORT_INT, SG_SORT_REAL, SG_SORT_BOOL } sg_sort;

/** Limits on what is accepted; over them is SG_ELIMIT. */
#define SG_EXPR_MAX_TEXT ((size_t)1 << 20)  /**< bytes of one expression's text */
#define SG_EXPR_MAX_NESTING 256             /**< parentheses and calls nested in one text */
#define SG_EXPR_MAX_DEPTH 1024              /**< depth of a DAG node */
#define SG_EXPR_MAX_ARGS 65536              /**< arguments of one n-ary node */
#define SG_EXPR_MAX_PRINT ((size_t)16 << 20) /**< bytes of one printed expression */

/* ---- Pool ------------------------------------------------------------------ */

/** Create an empty pool. Returns 0, or SG_ENOMEM. Free with sg_pool_free(). */
SG_API int sg_pool_new(sg_pool **out, sg_error *err);

/**
 * Create an overlay on `parent`: a pool that sees every expression of
 * `parent` (constructors return the parent's node when it has one, so
 * equality stays `a == b`) and keeps what is new to itself; ids and symbol
 * indices continue after the parent's. `parent` is only read and must not
 * change while the overlay lives (a loaded trace's pool never does), so any
 * number of threads may each build in an overlay of their own on one parent.
 * Returns 0 or SG_ENOMEM. Free with sg_pool_free() before the parent.
 */
SG_API int sg_pool_overlay_new(sg_pool **out, const sg_pool *parent, sg_error *err);

/** The parent of an overlay, or NULL. */
SG_API const sg_pool *sg_pool_parent(const sg_pool *pool);

/** Free a pool and every expression in it. NULL-safe. */
SG_API void sg_pool_free(sg_pool *pool);

/** The first failure a constructor recorded since the last clear, or NULL. */
SG_API const sg_error *sg_pool_error(const sg_pool *pool);

/** Forget the recorded failure. */
SG_API void sg_pool_clear_error(sg_pool *pool);

/** Number of distinct expressions in the pool (ids are 0 .. size-1). */
SG_API size_t sg_pool_size(const sg_pool *pool);

/** Number of distinct symbols in the pool (symbol indices are 0 .. n-1). */
SG_API size_t sg_pool_nsymbols(const sg_pool *pool);

/** The symbol with index `i`, or NULL when out of range. */
SG_API const sg_expr *sg_pool_symbol(const sg_pool *pool, size_t i);

/** The symbol named `name` (`len` bytes) when the pool or its parent chain has it, else
 *  NULL. Only reads: safe on a frozen pool shared by threads. */
SG_API const sg_expr *sg_pool_find_symbol(const sg_pool *pool, const char *name, size_t len);

/* ---- Construction ------------------------------------------------------------ */

/** The integer literal `v`. */
SG_API const sg_expr *sg_expr_int64(sg_pool *pool, int64_t v);
SG_API const sg_expr *sg_expr_bool(sg_pool *pool, bool v);
/** `sign` is +1 or -1; `integer` selects int_oo over oo. */
SG_API const sg_expr *sg_expr_inf(sg_pool *pool, int sign, bool integer);
/** A symbol by name (copied); the same name gives the same symbol. */
SG_API const sg_expr *sg_expr_symbol(sg_pool *pool, const char *name, size_t len);

/**
 * The general constructor: `kind` applied to `args[0..n-1]`, normalised.
 * Checks arity and sorts (SG_EINVALID), depth and size (SG_ELIMIT), and
 * folds constants (SG_EUNDEFINED for a constant division by zero).
 * Leaf kinds are rejected: use the leaf constructors above.
 */
SG_API const sg_expr *sg_expr_apply(sg_pool *pool, sg_kind kind, const sg_expr *const *args, size_t n);

/** Binary and unary conveniences over sg_expr_apply(). */
SG_API const sg_expr *sg_expr_2(sg_pool *pool, sg_kind kind, const sg_expr *a, const sg_expr *b);
SG_API const sg_expr *sg_expr_1(sg_pool *pool, sg_kind kind, const sg_expr *a);
/** -a, i.e. Mul(-1, a). */
SG_API const sg_expr *sg_expr_neg(sg_pool *pool, const sg_expr *a);
/** a - b, i.e. Add(a, Mul(-1, b)). */
SG_API const sg_expr *sg_expr_sub(sg_pool *pool, const sg_expr *a, const sg_expr *b);

/* ---- Inspection -------------------------------------------------------------- */

SG_API sg_kind sg_expr_kind(const sg_expr *e);
SG_API sg_sort sg_expr_sort(const sg_expr *e);
SG_API size_t sg_expr_nargs(const sg_expr *e);
/** Argument `i` (borrowed), or NULL when out of range. */
SG_API const sg_expr *sg_expr_arg(const sg_expr *e, size_t i);
/** Dense id within the pool, 0 .. sg_pool_size()-1. */
SG_API uint32_t sg_expr_id(const sg_expr *e);
/** 1 for leaves, 1 + the deepest argument otherwise. */
SG_API uint32_t sg_expr_depth(const sg_expr *e);
/** True when no SG_SYM occurs in `e`. */
SG_API bool sg_expr_is_constant(const sg_expr *e);
/** The value of an SG_INT or SG_RAT into `num` and `den` (1 for an SG_INT; either may be
 *  NULL); false for other kinds. */
SG_API bool sg_expr_number(const sg_expr *e, sg_num *num, sg_num *den);
/** +1 or -1 for SG_INF, 0 otherwise. */
SG_API int sg_expr_inf_sign(const sg_expr *e);
/** Name of an SG_SYM (NUL-terminated, borrowed), NULL otherwise. */
SG_API const char *sg_expr_symbol_name(const sg_expr *e);
/** Dense symbol index of an SG_SYM within its pool, UINT32_MAX otherwise. */
SG_API uint32_t sg_expr_symbol_index(const sg_expr *e);
/** sympy's class name of a kind: "Add", "FloorDiv", "Equality", ... */
SG_API const char *sg_kind_name(sg_kind kind);
/** Structural total order used for canonical argument order (<0, 0, >0). */
SG_API int sg_expr_compare(const sg_expr *a, const sg_expr *b);

/**
 * The distinct symbols of `e`, ordered by symbol index, into a new array
 * `*out` (free with sg_free()) of `*n` entries. Returns 0 or SG_ENOMEM.
 */
SG_API int sg_expr_symbols(const sg_expr ***out, size_t *n, const sg_pool *pool, const sg_expr *e, sg_error *err);

/* ---- Parsing and printing ------------------------------------------------------ */

/**
 * Parse one expression in either printed form torch uses — sympy `str()`
 * (`Eq(Mod(s0, 2), 0)`, `(s0//2)`, `(a) & (b)`) or the Python printer's
 * (`(L['x'].size()[0] % 2) == 0`, `a and b`, `max(a, b)`) — or a mix.
 * `len` bytes of `text` are read; it need not be NUL-terminated.
 * Returns 0 and sets `*out` (owned by `pool`), or SG_EINVALID /
 * SG_EUNSUPPORTED / SG_ELIMIT / SG_EUNDEFINED / SG_EOVERFLOW (a literal beyond
 * 128 bits) / SG_ENOMEM with a one-line message and `err->col` set to the
 * 1-based column. See docs/guard-language.md.
 */
SG_API int sg_expr_parse(const sg_expr **out, sg_pool *pool, const char *text, size_t len, sg_error *err);

/** Printed forms. */
typedef enum sg_syntax {
    SG_SYNTAX_SYMPY,  /**< canonical sympy str() form; re-parses to the same expression */
    SG_SYNTAX_PYTHON, /**< a Python form that re-parses (`==`, `and`, `//`, `%`, `max`) */
    SG_SYNTAX_TORCH,  /**< torch's own guard printer, byte for byte as its messages quote guards:
                           sympy's precedence and argument order, e.g. `(L['x'].size()[0] % 8) == 0`,
                           `8*(L['x'].size()[0] // 8) >= 2`, `((-1) + L['x'].size()[0]) != 1`; as
                           torch 2.7+ with sympy 1.14 prints: `torch.sym_max(a, b)`, and a product
                           with a floor division in it binds like a product, `(-3)*(x // 2) + 3*x` */
    SG_SYNTAX_TORCH_LEGACY /**< the same as torch 2.6 and older (sympy 1.13) print: `max(a, b)`,
                           and any product with a negative sign binds like a sum, `((-3)*(x // 2)) + 3*x` */
} sg_syntax;

/** Renames symbols when printing, e.g. s77 -> L['x'].size()[0]; NULL keeps the name. */
typedef const char *(*sg_symbol_namer)(const sg_expr *sym, void *payload);

/**
 * Print `e` into a new NUL-terminated string `*out` (free with sg_free()).
 * `namer` may be NULL. Returns 0, SG_ELIMIT when the text would exceed
 * SG_EXPR_MAX_PRINT bytes, or SG_ENOMEM.
 */
SG_API int sg_expr_print(char **out, const sg_expr *e, sg_syntax syntax, sg_symbol_namer namer,
                  void *payload, sg_error *err);

/* ---- Evaluation ------------------------------------------------------------------ */

typedef enum sg_value_kind {
    SG_VAL_INT,  /**< num */
    SG_VAL_REAL, /**< the exact real num/den, reduced, den >= 1 */
    SG_VAL_BOOL, /**< num is 0 or 1 */
    SG_VAL_INF   /**< num is +1 or -1; den is 1 for int_oo, 0 for oo */
} sg_value_kind;

/** A value of sg_expr_evaluate(). */
typedef struct sg_eval {
    sg_value_kind kind;
    sg_num num;
    sg_num den;
} sg_eval;

/**
 * Evaluate `e` exactly with Python semantics, every symbol `s` taking the
 * value `values[sg_expr_symbol_index(s)]` (`nvalues` entries; infinite
 * entries are not values). Evaluation is strict: every argument is
 * evaluated, as sympy does when it substitutes. Returns 0 and sets `*out`;
 * SG_EUNDEFINED where Python would raise (division or modulo by zero, a
 * negative PowByNatural exponent, int_oo - int_oo, no Piecewise branch);
 * SG_EOVERFLOW when a value leaves the 128-bit range; SG_EINVALID when a
 * symbol has no value. Uses scratch space in `pool` (a pool `e` lives in, or
 * an overlay of it), so not reentrant on one pool.
 */
SG_API int sg_expr_evaluate(sg_eval *out, sg_pool *pool, const sg_expr *e, const sg_num *values, size_t nvalues,
                     sg_error *err);

/** Render a value: "7", "True", "int_oo", "-oo", "7/2" (exact real), "3/1" (integral real). */
SG_API void sg_eval_format(char *buf, size_t cap, const sg_eval *v);

/**
 * SMT-LIB 2 text of `e`'s Z3 encoding (docs/smt.md): `(declare-const ...)`
 * lines for its symbols, then for a boolean `e` `(assert <holds>)`, for a
 * number `(define-fun value ...)` and `(define-fun defined () Bool ...)`.
 * New string in `*out` (free with sg_free()). Returns 0, SG_EUNSUPPORTED (no
 * finite encoding), SG_ELIMIT, SG_ENOMEM, SG_ERROR (Z3).
 */
SG_API int sg_expr_to_smtlib(char **out, sg_pool *pool, const sg_expr *e, sg_error *err);

#ifdef __cplusplus
}
#endif

#endif
