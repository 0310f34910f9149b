/*
 * fix_box.h - fitting the box a derived spec makes inside the trace's joint
 * linear guards (analysis/fixes.c, docs/fixes.md "Joint bounds").
 *
 * A fix gives every group of dims one root with a range of its own: the
 * spec's shapes are a box over the groups' symbols. Inference finds each
 * symbol's widest range alone, so a guard over two groups (`T + l <= 128`,
 * a position table sliced at the cache length plus the new tokens) can fail
 * at a corner of the box although every range is right on its own. Before
 * the re-check, the box is narrowed until every such guard holds on all of
 * it: the guard's largest value over the box is exact for a linear form, so
 * the narrowing is computed, not searched.
 *
 * What is read: every guard and runtime assert `lhs <op> rhs` with op one of
 * <=, <, >=, > whose sides are linear over the trace's symbols, and every
 * symbol's traced range, each symbol written over the groups' symbols through
 * torch's replacements and the report's proved relations (`equals`). A guard
 * over one group, over a symbol no group reaches, or over a group the fix does
 * not change is left as it is. Which bound moves: the group of the latest
 * input first (cat(x, y): y depends on x), as little as the guard needs and
 * never past the group's example value (torch wants the example inside the
 * range), then the next group. Shrinking a box lowers the largest value of
 * every linear form over it, so guards fitted earlier stay fitted: one pass.
 *
 * It is a derivation step, not a decision: the re-check of the derived spec
 * is what verifies it. No Z3 here.
 */
#ifndef SG_ANALYSIS_FIX_BOX_H
#define SG_ANALYSIS_FIX_BOX_H

#include <stdbool.h>
#include <stddef.h>

#include "report/report.h"
#include "trace/trace.h"

/* One group of the derivation: the symbol whose range the derived spec sets. */
typedef struct sg_fit_var {
    const sg_expr *sym;   /* the group's symbol (a symbol of the trace's pool) */
    sg_bound lo, hi;      /* its range, in the symbol's units: narrowed in place */
    bool has_example;
    sg_int example;       /* the symbol's example value: the bounds never move past it */
    size_t order;         /* the group's first input dim: the largest is narrowed first */
    bool changeable;      /* the fix may change this group's range (else guards over it are skipped) */
} sg_fit_var;

/*
 * Narrow vars[0..nvars-1] so that every joint linear guard of `t` (read as
 * above, symbols resolved through replacements and `facts`, the report's
 * inferred facts, `nfacts` of them) holds on the box. *nchanged gets the
 * number of bounds moved. Returns 0 or SG_ENOMEM.
 */
int sg_fix_fit_box(const sg_trace *t, const sg_inferred *facts, size_t nfacts, sg_fit_var *vars, size_t nvars,
                   size_t *nchanged, sg_error *err);

#endif
