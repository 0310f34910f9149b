/*
 * fixes_impl.h - what the two parts of fixes share (analysis/fixes.c: the
 * driver - rounds of apply and re-check, repairs, torch's acceptance, the
 * lines; analysis/fix_derive.c: deriving one round of overrides from a
 * report's facts). Internal to analysis/fixes.c and analysis/fix_derive.c.
 */
#ifndef SG_ANALYSIS_FIXES_IMPL_H
#define SG_ANALYSIS_FIXES_IMPL_H

#include "analysis/fix_box.h"
#include "analysis/fixes.h"
#include "report/report.h"
#include "trace/edit.h"
#include "util/util.h"

typedef enum mode { MODE_FIX, MODE_SPEC } mode;

/* Growing list of owned strings. */
typedef struct strs {
    char **s;
    size_t n, cap;
    bool failed;
} strs;

/* One round of derivation (fix_derive.c), set up and read by the driver (fixes.c: run()). */
typedef struct deriver {
    const sg_trace *t;
    const sg_report *r;
    mode m;
    const sg_input_dim *in;
    size_t nin;
    sg_spec_edits edits; /* the spec edits of this round */
    bool failed;         /* out of memory building them */
    strs *notes;  /* shared across rounds */
    char **names; /* per input: the Dim name used for it in SPEC mode (owned) */
    const bool *keep; /* per input, or NULL: left as it is (a Dim.AUTO the AUTO attempt chose) */
    /* by symbol index (sg_expr_symbol_index), `nsym` of them, built by derive(): */
    const sg_inferred **facts; /* the report's facts about the symbol, or NULL */
    bool *dim_value;           /* the symbol is the traced value of some input dim */
    size_t nsym;
    bool fit_on;               /* fit the groups' ranges inside the joint guards (run(): when no AUTO attempt) */
    sg_fit_var *fit;           /* the groups' ranges fitted inside the joint guards (fix_box.h) */
    long *fit_of;              /* by symbol index: its group's entry in fit[], or -1 */
} deriver;

/* A bound pair that allows one value. */
static inline bool one_value(sg_bound lo, sg_bound hi) { return !lo.inf && !hi.inf && lo.v == hi.v; }

/* Push an owned string (NULL or no room: freed, `failed` set); push a formatted one. */
void sg_fixes__strs_push(strs *v, char *s);
void sg_fixes__strs_pushf(strs *v, const char *fmt, ...) SG_PRINTF(2, 3);
/* A fresh name for dim `d`: its path's identifier characters and its index ("x_0"). */
char *sg_fixes__made_name(const sg_input_dim *d);
/* One round: the override items that make every eligible dim of `d->t` what the report's facts
 * say, into d->edits and d->notes (fix_derive.c). Returns 0 or SG_ENOMEM. */
int sg_fixes__derive(deriver *d, sg_error *err);
#endif
