/*
 * report.h - the report model inside the library: how reports are made and
 * what the one JSON writer and the text renderers share. The model itself
 * (sg_report and its parts) is declared in include/shapegate/check.h and
 * fixes.h; the analyses fill it, the engine composes it, the writers
 * (report/json.c, report/text.c) only read it.
 */
#ifndef SG_REPORT_REPORT_H
#define SG_REPORT_REPORT_H

#include "analysis/check.h"
#include "analysis/fixes.h"

/* A new empty report of `kind` on trace `t` (a reference is taken; NULL for none), with an
 * overlay of the trace's pool when `with_pool`. Returns 0 or SG_ENOMEM. */
int sg_report__new(sg_report **out, sg_report_kind kind, const sg_trace *t, bool with_pool, sg_error *err);

/* One more reference to `r` (released by sg_report_free); a finished report is immutable, so
 * holders on several threads only read it. NULL-safe. */
sg_report *sg_report__ref(const sg_report *r);

/* Free one fix line's strings (not the struct). */
void sg_fix__dispose(sg_fix *f);

/* Free a re-check of torch's lines. NULL-safe. */
void sg_torch_recheck_free(sg_torch_recheck *k);

/* The names the JSON and text forms use. */
const char *sg_dim_status_name(sg_dim_status s);        /* "proved", "refuted", "unknown", "static" */
const char *sg_violation_kind_name(sg_violation_kind k); /* "invalid_spec", "specialized", "equal", "related", "guard" */
const char *sg_core_kind_name(sg_core_kind k);           /* "guard", "range", "replacement", "input", "spec" */

#endif
