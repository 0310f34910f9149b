/*
 * oracle_model.h - the brute-force model of a small trace, shared by the check
 * oracle (tests/test_oracle.c) and the check fuzz target (fuzz/fuzz_check.c).
 * Not part of the library: it allocates with malloc and exits on exhaustion.
 *
 * The model of the spec is the engine's documented one (solver/problem.h,
 * docs/check.md): a named Dim takes the values [max(min, 2), max], a derived
 * dim a*X + b >= 2 for its root X in the root's bounds, one Dim name is one
 * value; a shape passes when every symbol lies in its traced range and every
 * guard is defined and true (sg_expr_eval). model_from_trace() accepts only
 * traces it models exactly: at most MAX_IN input dims, each a named Dim or
 * increasing affine derived dim traced as a bare symbol, or static traced as
 * its size; at most MAX_DYN symbols, each some dim's, backed, not replaced,
 * with a finite traced range; at most MAX_GUARDS guards over those symbols;
 * all bounds and sizes within +-1000000; a symbol box of at most MAX_BOX
 * points on which no guard overflows 128 bits.
 */
#ifndef SG_TESTS_ORACLE_MODEL_H
#define SG_TESTS_ORACLE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr/expr.h"
#include "trace/trace.h"

#define MAX_DYN 3         /* dynamic dims (= symbols) per trace */
#define MAX_IN 6          /* input dims: one dynamic and maybe one static per tensor */
#define MAX_GUARDS 8      /* guards a model holds (replayed files too) */
#define MAX_NAMES 3       /* Dim names (and phantom roots) */
#define MAX_BOX 300000    /* points of the symbol box a model enumerates */
/* A derived dim takes values >= 2 only, as solver/problem.h documents ("DERIVED D_i == f(X_root),
 * X_root in [root bounds], D_i >= 2"): torch analyses every dynamic size from 2 on. */
#ifndef DERIVED_FROM_2
#define DERIVED_FROM_2 1
#endif
/* Every symbol: the `syms` argument of spec_fails() that counts all constraints. */
#define ALL_SYMS (~0u)

/* ---- settings and clocks of the test programs ------------------------------------------------ */

/* An unsigned environment variable (decimal or 0x-hex), or `dflt` when unset or malformed
 * (the test programs' settings). */
unsigned long env_ulong(const char *name, unsigned long dflt);
/* Seconds on the monotonic clock. */
double now_seconds(void);

/* ---- a growable string --------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

/* Append formatted text; exits the program when memory runs out (tests may). */
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Release the text; the buffer is empty and reusable afterwards. */
void sb_free(sbuf *b);
/* The text so far ("" when none; borrowed). */
const char *sb_str(const sbuf *b);

/* ---- the model ------------------------------------------------------------------------------ */

enum { OD_DIM, OD_DERIVED, OD_STATIC };

/* One input dim as the oracle sees it. */
typedef struct odim {
    int kind;      /* OD_DIM, OD_DERIVED, OD_STATIC */
    int sym;       /* the symbol its size is traced as (model index), or -1 (static) */
    int name;      /* DIM: its name; DERIVED: its root's name */
    long lo, hi;   /* DIM: the Dim's min and max; DERIVED: the root's */
    long a, b;     /* DERIVED: size = a*root + b */
    long size;     /* the example size */
} odim;

/*
 * A trace reduced to what enumeration needs: input dims, symbols with traced
 * ranges, guards (in `pool`, evaluated with `vals`), and the table `mask`: for
 * every point of the symbol box, bit g set when guard g holds there.
 */
typedef struct model {
    int nin;
    odim in[MAX_IN];
    int nsym;
    long rlo[MAX_DYN], rhi[MAX_DYN];
    int nname;
    sg_pool *pool;
    sg_pool *own_pool;             /* an overlay of a trace's frozen pool, freed by model_dispose */
    uint32_t slot[MAX_DYN];        /* value slot of symbol k in pool */
    const sg_expr *guard[MAX_GUARDS];
    unsigned gsyms[MAX_GUARDS];    /* bit k: guard g mentions symbol k */
    int ng;
    sg_int *vals;
    size_t nvals;
    unsigned char *mask;
    size_t npts;
    size_t stride[MAX_DYN];
} model;

/* Called for each allowed shape; returns true to stop the enumeration. */
typedef bool (*shape_fn)(const model *m, const long *D, void *arg);

/* Free what the model allocated (its overlay pool too; not a pool the generator lent it). */
void model_dispose(model *m);
/* The table value of a point where every guard holds. */
unsigned full_mask(const model *m);
/* Does guard `g` hold (defined and true) at the values in m->vals? -1 on overflow or error. */
int guard_holds(model *m, const sg_expr *g);
/* Fill the table over the box of the traced ranges: 0, or -1 when too large or a guard overflows. */
int model_table(model *m);
/* The table entry of the symbol values shape D gives, or -1 (a symbol off its range, dims disagree). */
long shape_point(const model *m, const long *D);
/* Does shape D pass every checked constraint (traced ranges and guards)? */
bool shape_passes(const model *m, const long *D);
/* Does shape D fail a constraint (traced range or guard) of the symbols in `syms` (bit k: symbol k)? */
bool shape_fails_on(const model *m, const long *D, unsigned syms);
/* The independent parts: comp[i] is dim i's component (-1 static), syms[c] its symbols (bit k). */
void components(const model *m, int *comp, unsigned *syms);
/* The value domain [lo, hi] of each name under the spec (dims in `pinned`, may be NULL, dropped). */
void name_domains(const model *m, const bool *pinned, long *lo, long *hi, bool *used);
/* Is name j pinned with its plain dims (all of them pinned, at an example size inside the dim's own
 * range: check.c's pin settles the root and the derived dims of the name follow)? Its value in *v. */
bool name_pinned(const model *m, const bool *pinned, int j, long *v);
/* The size of dim i when its name (root) takes value x, pins applied. */
long dim_size(const model *m, const bool *pinned, int i, const long *x);
/* Visit every shape the spec allows (pinned dims at their example sizes); true when `fn` stopped it. */
bool spec_each(const model *m, const bool *pinned, shape_fn fn, void *arg);
/* Does the spec (dims in `pinned` fixed to their example sizes) allow shape D? */
bool spec_allows(const model *m, const bool *pinned, const long *D);
/* Some allowed shape (pins applied) failing a constraint of `syms`: true and its sizes in out[] (may be NULL). */
bool spec_fails(const model *m, const bool *pinned, unsigned syms, long *out);
/* Append shape D as "[s0, s1, ...]" (every input dim, in input order). */
void format_shape(sbuf *b, const model *m, const long *D);
/* The model index of the trace symbol `sym`, or -1. */
int model_sym(const model *m, const sg_expr *sym);
/*
 * Build the model of trace `t` (the header comment says which traces it accepts).
 * Returns 0, or -1 with the reason in `why`; either way release it with model_dispose().
 */
int model_from_trace(model *m, const sg_trace *t, sbuf *why);
/*
 * As model_from_trace(), but traced ranges may be infinite: each symbol's box is
 * its traced range narrowed to the hull of the values its dims take under the
 * spec and their example sizes. Enough to enumerate the spec (spec_each,
 * spec_fails, with pins) and to judge shapes within it; a shape outside the
 * box counts as failing its traced range even where the range is wider.
 */
int model_from_trace_spec_box(model *m, const sg_trace *t, sbuf *why);

#endif
