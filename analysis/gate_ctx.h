/*
 * gate_ctx.h - what the parts of the release gate share (docs/gate.md); internal
 * to analysis/gate*.c:
 *
 *   gate_prog.c     one version (an exported program or a trace) read into one
 *                   model, a `prog`: its inputs and the conditions of its domain
 *   gate.c          the gate over two progs: the variables, each side's domain
 *                   over them, Z3's answers (solver/sat.h), findings, sg_gate_run
 *   gate_serving.c  serving descriptors: NEW's per-dim bounds as TensorRT
 *                   shapes, a Triton input block and a dynamic_shapes spec
 *   gate_policy.c   a policy in the Python dynamic_shapes form, as JSON
 *
 * Every function takes the state of one sg_gate_run call (one thread).
 */
#ifndef SG_ANALYSIS_GATE_CTX_H
#define SG_ANALYSIS_GATE_CTX_H

#include <stdbool.h>

#include "analysis/gate.h"
#include "expr/expr.h"
#include "shapegate/graph.h"
#include "solver/sat.h"
#include "trace/trace.h"
#include "util/util.h"

/* ---- one version (gate_prog.c) ---------------------------------------------------------------- */

/* One user input: a tensor (sizes over the version's pool) or not (ndim 0, sizes NULL). */
typedef struct prog_input {
    const char *path;
    const char *name;            /* the name the served model gives it (the placeholder's), or NULL */
    const char *value;           /* a non-tensor input torch specialised: its value as JSON text ("3",
                                  * "\"relu\"", "null"); NULL for a tensor or a dynamic (SymInt) one */
    bool tensor;
    size_t ndim;
    const sg_expr *const *sizes; /* borrowed from the version, or prog-owned (`own_sizes`) */
    const sg_int *examples;      /* the example input's sizes (traces), or NULL */
    char dtype[24];              /* torch's dtype name ("float32"), "" when unknown */
} prog_input;

/* One condition of the version's domain over its own symbols. `op` SG_GE / SG_LE: `e OP bound`
 * (a range entry; the comparison is built over the variables), else `e` itself. */
typedef struct prog_cond {
    const sg_expr *e;
    int op;
    sg_int bound;
    const char *kind;            /* static string */
    char source[240];
    char *loc;                   /* the user code line it came from (owned), or NULL */
    bool skip_missing;           /* a symbol no input dim determines: data-dependent, not about shapes */
} prog_cond;

typedef struct prog {
    const sg_pool *pool;         /* the version's expressions */
    prog_input *inputs;
    size_t ninputs, capinputs;
    const sg_expr **own_sizes;   /* sizes the adapter gathered (traces), freed with the prog */
    sg_int *own_examples;
    char **own_text;             /* names and values the adapter made (traces), freed with the prog */
    size_t ntext, captext;
    bool nontensor_known;        /* its non-tensor inputs are listed (an archive, a capture record) */
    bool inputs_unknown;         /* not read at all (`unread`): its inputs are not known either */
    const char *example_from;    /* where the examples come from (static string), or NULL */
    prog_cond *conds;
    size_t nconds, capconds;
    const sg_expr **rep_sym;     /* traces: symbols torch replaced, and by what (over its symbols) */
    const sg_expr **rep_by;
    size_t nreps;
    char unread[200];            /* why the domain cannot be written, or "" */
    char note[240];              /* what the report should say about this version, or "" */
    const char *torch_version;   /* or NULL */
} prog;

/* An exported program as a prog (`p` zeroed first). Returns 0 or SG_ENOMEM. */
int sg_gate__prog_from_graph(prog *p, const sg_graph *g, sg_error *err);
/* A trace as the program its export makes of it (`p` zeroed first). Returns 0 or SG_ENOMEM. */
int sg_gate__prog_from_trace(prog *p, const sg_trace *t, sg_error *err);
/* Free what `p` owns; it is zeroed. */
void sg_gate__prog_dispose(prog *p);
/* The input of `p` at `path`, or NULL. */
const prog_input *sg_gate__input_named(const prog *p, const char *path);

/* ---- the gate over two progs (gate.c) ---------------------------------------------------------- */

/* One condition of a side over the variables, with where it comes from. */
typedef struct cond {
    const sg_expr *e;     /* over the variables */
    const char *kind;     /* static string */
    char source[240];
    const char *loc;      /* borrowed from the prog, or NULL */
} cond;

typedef struct side {
    const prog *p;
    const sg_expr **map;  /* per symbol index of p's pool: the expression over the variables, or NULL */
    cond *conds;
    size_t n, cap;
    char unread[200];     /* why the domain cannot be written, or "" */
} side;

typedef struct gate_ctx {
    sg_pool *pool;        /* the variables and both domains */
    const char **vpath;   /* per variable: OLD's input path and dim */
    size_t *vdim;
    size_t nvars;
    const sg_expr **var;
    bool *dynamic;        /* the variable's size in OLD is not a literal */
    sg_error *err;
} gate_ctx;

/* The variable of (path, dim), or NULL. */
const sg_expr *sg_gate__var_of(const gate_ctx *c, const char *path, size_t dim);
/* Add condition `e` (over the variables; True adds nothing) to side `s`, of kind `kind` (static)
 * from user line `loc` (borrowed, or NULL), its source formatted from `fmt` with `a` and `b`
 * (NULL: ""). False when `e` is NULL (a constructor failed) or out of memory. */
bool sg_gate__add_cond(side *s, const sg_expr *e, const char *kind, const char *loc, const char *fmt, const char *a,
                       const char *b);
/* The conjunction of a side's conditions; NULL when a constructor failed. */
const sg_expr *sg_gate__domain(gate_ctx *c, const side *s);
/*
 * Is there a point `acc` accepts (with `extra`, when not NULL) that `rej` rejects (`rej` NULL:
 * any point)? Sizes are never negative; dynamic sizes (`dyn`, per variable) from 2 on. On
 * SG_SAT_YES `vals` (one per symbol of the gate's pool) is the point, re-checked by exact
 * evaluation (`*exact` false when it does not pass). Returns 0 or an error; a condition Z3 cannot
 * take is SG_SAT_UNKNOWN with the reason.
 */
int sg_gate__query(gate_ctx *c, const side *acc, const side *rej, const sg_expr *extra, const bool *dyn,
                   const sg_check_options *o, const sg_runtime *rt, sg_sat_answer *ans, sg_int *vals, bool *exact,
                   char *reason, size_t cap);

/* ---- serving descriptors (gate_serving.c) ----------------------------------------------------- */

/*
 * The serving descriptors of NEW into gt->serving (signatures equal, so NEW's dims are OLD's
 * variables; `sn` its side): per tensor input and dim the least and greatest size NEW's domain
 * admits, an optimum, the min / opt / max shape sets checked against the domain, and a
 * dynamic_shapes spec whose shapes NEW all accepts. Returns 0 (gt->serving.ok, or its reason)
 * or an error.
 */
int sg_gate__serving(gate_ctx *c, sg_gate *gt, const side *sn, const sg_gate_input *in, const sg_check_options *o,
                     const sg_runtime *rt);

#endif
