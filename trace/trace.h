/*
 * trace.h - a trace inside the library: the public include/shapegate/trace.h
 * plus its plain-data tables (input dims, symbols, guards) with their 128-bit
 * sizes and bounds, which every analysis reads directly. The tables are
 * read-only for everyone but the trace module's own builders
 * (trace/trace_impl.h).
 */
#ifndef SG_TRACE_TRACE_H
#define SG_TRACE_TRACE_H

#include "expr/expr.h"
#include "shapegate/trace.h"

/* One dimension of one tensor input: where it is, its example size, its spec, what torch traced. */
typedef struct sg_input_dim {
    const char *path;        /* pytree path of the tensor: "['x']", "['inputs']['b'][1]" */
    int dim;                 /* dimension index */
    /* torch's source name in messages: "L['x'].size()[0]" (torch 2.14, and strict
     *  mode of 2.6); torch 2.6 non-strict names what it traced: "L['args'][0][0].size()[0]" */
    const char *source;
    sg_int size;             /* the example input's size */
    sg_spec_kind kind;
    const char *name;        /* DIM: the Dim name; DERIVED: its printed name ("2*dx + 1") */
    bool has_bounds;         /* DIM, DERIVED; AUTO/DYNAMIC when given min/max */
    sg_bound min, max;       /* the spec's bounds (DERIVED: the derived bounds) */
    /* DERIVED (in practice): torch's "<unavailable: ...>" text when it raised while
     *  computing that bound (e.g. a negative derived min); the bound is then infinite. */
    const char *min_unavailable, *max_unavailable;
    const sg_expr *derived;  /* DERIVED: the expression over the root symbol */
    const char *root_name;   /* DERIVED: name of the root Dim */
    sg_bound root_min, root_max; /* DERIVED: the root's bounds */
    bool has_static_size;    /* STATIC given as an int */
    sg_int static_size;
    /* What torch's ShapeEnv traced for this dim: a symbol, an expression over
     *  symbols (after replacements), or an integer; NULL when not traced. */
    const sg_expr *value;
    /* The source torch traced the dim under, as in sg_symbol_info.sources
     *  ("L['flat_args'][0].size()[0]" in strict mode of torch 2.14, where `source`
     *  is "L['x'].size()[0]"); NULL when not traced. */
    const char *traced_source;
} sg_input_dim;

/* A symbol of the ShapeEnv. */
typedef struct sg_symbol_info {
    const sg_expr *sym;
    sg_bound lo, hi;           /* var_to_range; -int_oo, int_oo when it has no entry */
    bool has_hint;
    sg_int hint;               /* the example value (backed_var_to_val / unbacked_var_to_val) */
    bool unbacked;             /* u<N>: data-dependent */
    bool size_like;
    const sg_expr *replacement; /* what torch replaced it by, or NULL */
    const char *const *sources; /* torch source names ("L['x'].size()[0]"), as recorded */
    size_t nsources;
} sg_symbol_info;

/* Where a constraint came from. */
typedef enum sg_guard_origin {
    SG_GUARD_SHAPE,          /* a shape guard (ShapeEnv.guards) */
    SG_GUARD_RUNTIME_ASSERT  /* a deferred runtime assert */
} sg_guard_origin;

/* One guard or runtime assert with its provenance. */
typedef struct sg_guard {
    const sg_expr *expr;       /* boolean */
    sg_guard_origin origin;
    const char *text;          /* the expression as torch printed it */
    const char *user_loc;      /* user code line ("return x + y  # model.py:77 in forward"), or NULL */
    const char *framework_loc; /* torch code ("File \"...\", line 1118, in infer_size\n    ..."), or NULL */
    const char *sloc;          /* torch's short location, as its messages print it
                                    ("(model.py:41 in forward)"), or NULL */
    const char *msg;           /* RUNTIME_ASSERT: the message recorded with it (often a
                                    torch "file.py:line"), or NULL */
} sg_guard;

/* Every dim of every tensor input, in input order then dim order (`*n` entries). */
const sg_input_dim *sg_trace_inputs(const sg_trace *t, size_t *n);
/* Every symbol of the ShapeEnv (`*n` entries): var_to_range's order, then any other symbol
 * a table names (sources, hints, replacements, unbacked lists) in the order first seen. */
const sg_symbol_info *sg_trace_symbols(const sg_trace *t, size_t *n);
/* The shape guards in torch's order, then the deferred runtime asserts (`*n` entries). */
const sg_guard *sg_trace_guards(const sg_trace *t, size_t *n);
/* The info of symbol `sym` (an expression of this trace's pool), or NULL when the trace does
 * not know it. */
const sg_symbol_info *sg_trace_symbol_info(const sg_trace *t, const sg_expr *sym);

/* The derived expression of a DERIVED dim `d` as a*root + b (a >= 1); false when it has none. */
bool sg_trace__derived_affine(const sg_input_dim *d, sg_int *a, sg_int *b);

/* a and b, copies of one loaded trace (sg_trace_clone, sg_trace_edit, at any depth), hold the same
 * content: every flag, JSON text, symbol, guard and input dim, its spec included. A check of one
 * is a check of the other. False when not sure (different origins, an expression that does not
 * print). */
bool sg_trace__same_content(const sg_trace *a, const sg_trace *b);

/* The least size a Dim (or a derived dim's root) with declared min `lo` is analysed from: at
 * least 2 on a trace of an export (torch specialises 0 and 1), `lo` itself (or 0) on a trace
 * built from an archive, whose loaded module checks its guards at every size. */
sg_bound sg_trace__dim_floor(const sg_trace *t, sg_bound lo);

/* The least value derived dim `d`'s root is analysed from: its declared min raised as a Dim's
 * (torch creates a phantom root like a size), except for `root - k`, which torch re-roots at the
 * derived dim (that dim's own floor, sg_trace__dim_floor of 0, covers it). */
sg_bound sg_trace__root_floor(const sg_trace *t, const sg_input_dim *d);

#endif
