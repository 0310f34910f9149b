/*
 * edit.h - typed spec edits inside the library: the layout of sg_spec_edits
 * and builders with the library's 128-bit integers, for the modules that
 * derive a spec (analysis/fixes.c, torch's fix lines) and for the --dim
 * reader (trace/dims.c). The public, int64 builders are in trace.h;
 * sg_trace_edit() applies either.
 */
#ifndef SG_TRACE_EDIT_H
#define SG_TRACE_EDIT_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace.h"

/* One typed edit of the spec (sg_spec_edits). */
typedef struct sg_spec_edit {
    char *text;         /* the --dim item it was read from, or NULL (messages render one) */
    bool checked;       /* read by the --dim grammar, which checked it already */
    size_t input;       /* the input dim, or SIZE_MAX: only the range of Dim `name` */
    sg_spec_kind kind;  /* DIM, DERIVED, AUTO, DYNAMIC or STATIC */
    char *name;         /* DIM, and a range alone: the Dim name */
    char *root;         /* DERIVED: the root Dim's name */
    sg_int a, b;        /* DERIVED: A*root + B */
    bool has_range;     /* DIM: MIN..MAX given (else the Dim's definition); AUTO/DYNAMIC: with a range */
    sg_bound min, max;
    bool has_size;      /* STATIC: with a size */
    sg_int size;
} sg_spec_edit;

struct sg_spec_edits {
    sg_spec_edit *v;
    size_t n, cap;
};

/* Free the edits of `e` (not `e`); it is left empty. */
void sg_spec_edits__dispose(sg_spec_edits *e);
/* A new zeroed edit at the end (max = int_oo); NULL when out of memory. */
sg_spec_edit *sg_spec_edits__push(sg_spec_edits *e, size_t input, sg_spec_kind kind);
/* The typed builders with the library's own integers (the public ones take int64). */
int sg_spec_edits__dim(sg_spec_edits *e, size_t input, const char *name, bool has_range, sg_bound min,
                       sg_bound max, sg_error *err);
int sg_spec_edits__range(sg_spec_edits *e, const char *name, sg_bound min, sg_bound max, sg_error *err);
int sg_spec_edits__derived(sg_spec_edits *e, size_t input, sg_int a, const char *root, sg_int b, sg_error *err);
int sg_spec_edits__static(sg_spec_edits *e, size_t input, bool has_size, sg_int size, sg_error *err);
int sg_spec_edits__hint(sg_spec_edits *e, size_t input, sg_spec_kind kind, bool has_range, sg_bound min,
                        sg_bound max, sg_error *err);
/*
 * Drop the guards `drop[k]` says (one flag per sg_trace_guards entry) from `t`, a copy the caller
 * owns (sg_trace_clone / sg_trace_edit): for a guard torch recorded while checking the spec itself
 * against the examples, not the model (analysis/spec_repair.c). The others keep their order.
 */
void sg_trace__drop_guards(sg_trace *t, const bool *drop);
#endif
