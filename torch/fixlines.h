/*
 * fixlines.h - torch's "Suggested fixes:" lines: ours printed in torch's text
 * (the lines sg_fixes carries), and torch's own read the way torch's
 * refine_dynamic_shapes_from_suggested_fixes reads them — `Dim(...)` with
 * min/max taken from `min=N` / `max=N` (a missing min is 0, a missing or
 * non-numeric max int_oo), `NAME = N`, `NAME = A*ROOT + B`, a derived dim
 * over a fixed root re-derived — into typed spec edits (trace/edit.h).
 */
#ifndef SG_TORCH_FIXLINES_H
#define SG_TORCH_FIXLINES_H

#include <stdbool.h>

#include "trace/edit.h"
#include "trace/trace.h"

/* Bounds equal as torch compares a fixed range with the spec's: a min at or below 2 is the
 * analysis default. */
bool sg_torch_same_range(sg_bound a0, sg_bound a1, sg_bound b0, sg_bound b1);

/* "dx = Dim('dx', min=16, max=100)" (min left out at the default 2 unless `new_root`, max
 * at int_oo), "dx = 4", "dz = 2*dx + 1" (the right-hand side as sympy prints a*root + b).
 * New strings (free with sg_free()), NULL when out of memory. */
char *sg_torch_range_line(const char *name, sg_bound lo, sg_bound hi, bool new_root);
char *sg_torch_constant_line(const char *name, sg_int v);
char *sg_torch_derived_line(const char *name, sg_int a, const char *root, sg_int b);

/* torch's lines `lines` (n of them) for trace `t` as edits appended to `out`. A line torch's
 * refine step could not read sets `*why` ("cannot read suggested fix '...'"; free it) and
 * stops there. Returns 0 or SG_ENOMEM. */
int sg_torch_read_fix_lines(sg_spec_edits *out, char **why, const sg_trace *t, const char *const *lines, size_t n,
                            sg_error *err);

#endif
