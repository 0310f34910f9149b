/*
 * report.h - the report model inside the library. The analyses fill its
 * parts (the check its verdicts, the fixes module its sg_fixes), the engine
 * composes them, the writers (report/json.c, report/text.c) and the
 * accessors (report/report.c) only read them. Public readers see the opaque
 * sg_report of include/shapegate/report.h.
 */
#ifndef SG_REPORT_REPORT_H
#define SG_REPORT_REPORT_H

#include <stdatomic.h>

#include "shapegate/report.h"
#include "trace/trace.h"

typedef struct sg_core_item {
    sg_core_kind kind;
    size_t index;
    char *text;      /*< the constraint, printed (sympy form; spec items as `dx in [2, 100]`) */
    const char *loc; /*< user location of a guard, or NULL */
} sg_core_item;

typedef struct sg_violation {
    char *dim;                /*< the name torch uses in its header: the Dim name, else the source */
    size_t input;             /*< index of the input dim (sg_trace_inputs) */
    sg_violation_kind kind;
    char *message;            /*< one line */
    const sg_expr *relation;  /*< EQUAL/RELATED/SPECIALIZED: the forced value of the dim, over the root dim's size symbol, or an integer */
    size_t root;              /*< EQUAL/RELATED: index of the input dim it is related to */
    bool has_counterexample;
    sg_int *counterexample;   /*< GUARD: a size for every input dim (sg_trace_inputs order) */
    bool later_round;         /*< GUARD: found with dims of its component refuted in earlier rounds pinned to
                                  their example sizes (analysis/check_values.c), so the counterexample may fail
                                  only because of those pins */
    sg_core_item *core;       /*< the minimal conflicting set */
    size_t ncore;
} sg_violation;

/* The verdict on one input dim. */
typedef struct sg_dim_result {
    size_t input;            /*< index into sg_trace_inputs */
    sg_dim_status status;
    char reason[64];         /*< UNKNOWN: why (Z3's reason, "time budget", "invalid spec"); else "" */
} sg_dim_result;

/* What the guards imply about one symbol (or input dim size). */
typedef struct sg_inferred {
    const sg_expr *sym;      /*< the symbol */
    size_t input;            /*< the first input dim whose size it is, or SIZE_MAX */
    sg_bound lo, hi;         /*< widest valid range */
    bool range_exact;        /*< both bounds proved optimal (else a sound over-approximation) */
    bool is_constant;
    sg_int constant;
    sg_int modulus, residue; /*< sym = residue (mod modulus); modulus 1: none */
    sg_int *holes;           /*< values inside [lo, hi] that are not valid, ascending */
    size_t nholes;
    bool holes_complete;     /*< every hole was found (else the list may be partial) */
    const sg_expr *equals;   /*< a proved relation sym = equals (over other symbols), or NULL */
} sg_inferred;

typedef struct sg_check_stats {
    unsigned queries;        /*< Z3 checks run */
    unsigned decided_cheaply;/*< guards decided by interval/congruence reasoning, never sent to Z3 */
    double seconds;
    uint64_t rlimit_spent;
} sg_check_stats;

/* What one suggested line does. */
typedef enum sg_fix_kind {
    SG_FIX_RANGE,    /*< `dx = Dim('dx', min=.., max=..)`: a (new) root and its range */
    SG_FIX_CONSTANT, /*< `dx = 4`: the dim is static */
    SG_FIX_DERIVED   /*< `dy = dx`, `dy = 2*dx + 1`, `dx = 8*_dx`: derived from a root */
} sg_fix_kind;

/* One line of the "Suggested fixes:" block. */
typedef struct sg_fix {
    sg_fix_kind kind;
    char *name;         /*< the Dim name the line assigns: "dx", or a new root "_dx" */
    char *source;       /*< source name of the dim it concerns (torch orders lines by it) */
    bool new_root;      /*< RANGE: a root the user's spec did not have */
    sg_bound min, max;  /*< RANGE */
    sg_int value;       /*< CONSTANT */
    char *root;         /*< DERIVED: name = a*root + b */
    sg_int a, b;
    char *line;         /*< the line as printed: "dx = Dim('dx', min=16, max=100)" */
} sg_fix;

/* The outcome of deriving and verifying fixes (or a generated spec). */
typedef struct sg_fixes {
    sg_fix *fixes;        /*< in torch's order: Dim lines first, each group by source name */
    size_t nfixes;
    bool verified;        /*< the fixed spec was re-checked and every dynamic dim proved */
    bool repaired;        /*< the fix repairs a spec torch refused (its structure, its examples), as the notes say;
                           *  the Python is the fix (a split Dim has no fix line) */
    bool untraced;        /*< not verified: a spec torch refused before tracing the model, repaired so that it
                           *  passes torch's spec checks; no guard was recorded to check it against */
    sg_verdict recheck;   /*< the verdict of that re-check (SG_VERDICT_OK when verified) */
    unsigned rounds;      /*< derive-and-check rounds it took (1 when the first derivation held) */
    char *spec_json;      /*< the fixed spec, structured JSON (tests/corpus/README.md), or NULL */
    char *python;         /*< untraced only, when there is no spec to print (a Dim torch refused to build before it
                           *  recorded any input): paste-ready Python of the repair (`repaired_Dim`), else NULL */
    char **notes;         /*< one line each: holes avoided, choices made, why no fix was found */
    size_t nnotes;
    sg_trace *checked;    /* verified (not untraced): the fixed trace the re-check found OK, referenced until the
                           * engine has compared torch's lines with it (sg_fixes__release_checked), else NULL */
} sg_fixes;

/* torch's own suggested fixes (sg_trace_torch_fixes_json), applied as torch's refine step reads them and re-checked. */
typedef struct sg_torch_recheck {
    char **lines;        /*< torch's lines */
    size_t nlines;
    sg_verdict verdict;  /*< the verdict of the spec they make */
    char *why;           /*< the first violation with its counterexample, or why a line could not be read; NULL when ok */
} sg_torch_recheck;

/* What a verify report knows of the program (SG_REPORT_VERIFY). */
typedef struct sg_verify_info {
    char *name;            /*< the program's name (the archive path), or NULL */
    bool against_spec;     /*< decided a given spec, not the declared range_constraints */
    size_t asserts;        /*< runtime check nodes in the graph */
    size_t checked;        /*< of them, recovered as expressions */
    size_t data_dependent; /*< of the recovered, those over an unbacked (data-dependent) symbol */
    bool has_guards_code;  /*< the program has a guards_code list (torch >= 2.8) */
    size_t guards;         /*< its entries */
    size_t guards_read;    /*< of them, read over the input sizes (the others make proved dims unknown) */
    size_t kernels_all;    /*< the kernels' shape conditions read from the graph (graph.h) */
    size_t kernels;        /*< of them, over input sizes: shape guards after guards_code's (the others are data-dependent) */
} sg_verify_info;

struct sg_report {
    sg_verdict verdict;
    sg_violation *violations;
    size_t nviolations;
    sg_dim_result *dims;
    size_t ndims;
    sg_inferred *inferred;
    size_t ninferred;
    sg_check_stats stats;
    bool no_spec;            /*< the trace carries no per-dim spec (torch failed building it): unknown */
    char *torch_failed;      /*< TORCH_FAILED: what torch hit and why nothing is proved, or NULL */
    sg_report_kind kind;
    sg_fixes *fixes;  /*< CHECK: fixes after a refutation; SPEC: the generated spec; or NULL */
    char *torch_message;     /*< torch's whole error text with the verified fixes, or NULL */
    sg_torch_recheck *torch; /*< torch's own lines re-checked, or NULL */
    sg_verify_info *verify;  /*< VERIFY: the program's side, else NULL */
    char solver_name[16];    /*< the solver that decided ("z3"), for records of what decided; "" when none ran */
    char solver_version[32]; /*< VERIFY: its version ("4.8.12"), for the pack's record (the engine asks: it loads libz3) */
    /* private: the overlay of the trace's pool the check built expressions in, and the
     * reference to the trace the report holds */
    sg_pool *pool;
    sg_trace *trace;
    atomic_uint refs;        /* holders: the caller, the engine's cache */
};

/* A new empty report of `kind` on trace `t` (a reference is taken; NULL for none), with an
 * overlay of the trace's pool when `with_pool`. Returns 0 or SG_ENOMEM. */
int sg_report__new(sg_report **out, sg_report_kind kind, const sg_trace *t, bool with_pool, sg_error *err);

/* One more reference to `r` (released by sg_report_free); a finished report is immutable, so
 * holders on several threads only read it. NULL-safe. */
sg_report *sg_report__ref(const sg_report *r);

/* Free one fix line's strings (not the struct). */
void sg_fix__dispose(sg_fix *f);

/* Free fixes. NULL-safe. */
void sg_fixes_free(sg_fixes *f);
/* Drop f->checked (a report kept in the engine's cache keeps no trace copy). NULL-safe. */
void sg_fixes__release_checked(sg_fixes *f);

/* Free a re-check of torch's lines. NULL-safe. */
void sg_torch_recheck_free(sg_torch_recheck *k);

#endif
