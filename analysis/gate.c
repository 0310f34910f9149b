/*
 * gate.c - the release gate: does NEW accept every input shape OLD accepts?
 *
 * Each version is an exported program (an sg_graph read from a .pt2) or a
 * trace (sg_trace: a v1 JSON trace, a capture folder, a TORCH_TRACE log),
 * first read into one model, a `prog`: its tensor inputs with their sizes
 * (expressions over the version's own symbols) and the conditions its
 * accepted domain is made of, each with its kind, where it is ("source") and
 * the user code line it came from when the input records one. After that
 * nothing here knows what the version was read from.
 *
 * What a version accepts is what its loaded module checks on every call
 * (torch/export/_unlift.py, torch/_export/utils.py):
 *   archive: every input dim equals its symbolic or static size, the
 *     range_constraints entry of an input dim's size (its max, and its min
 *     when above 2: 0 and 1 are let through), every guards_code entry, every
 *     runtime assert over input sizes;
 *   trace: the program the export makes of it: every input dim equals what
 *     torch traced for it, the range torch's range_constraints would give the
 *     dim (the spec's Dim bounds, else var_to_range: its max, its min above
 *     2), every shape guard and every runtime assert over input sizes (the
 *     guards torch emitted are the program's input constraints; 2.8+ writes
 *     them as guards_code).
 *
 * Both domains are written over one set of variables, one per input dim of
 * OLD, named by torch's source for it (`L['x'].size()[0]`), so a printed
 * condition reads as torch prints guards. A version's symbols are expressed
 * through those variables: a symbol some input dim is exactly is that dim's
 * variable; the root `s` of a dim `A*s + B` is `(D - B) // A` (the dim's own
 * condition `D == A*s + B` then asks for the divisibility). Z3
 * (solver/sat.h) answers "OLD holds and NEW does not" (a regression) and the
 * converse (a widening); an undefined NEW condition (Python would raise)
 * rejects. The rejecting condition is found by exact evaluation of each at
 * the witness. Dynamic sizes are compared from 2 on: torch.export
 * specialises 0 and 1 when it exports, and the module's kernels may not run
 * on them (a view(-1, n) of zero elements raises), so a difference at 0 or 1
 * alone is not a finding.
 *
 * The parts (analysis/gate_ctx.h): a version into a prog (gate_prog.c), the
 * comparison and sg_gate_run (here), NEW's serving descriptors
 * (gate_serving.c), a Python policy (gate_policy.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate_ctx.h"
#include "analysis/gate_policy.h"
#include "expr/expr.h"
#include "shapegate/graph.h"
#include "solver/sat.h"
#include "trace/trace.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_VARS 4096

/* ---- the gate over two progs ---------------------------------------------------------------- */

/* The variable of (path, dim), or NULL. */
const sg_expr *sg_gate__var_of(const gate_ctx *c, const char *path, size_t dim)
{
    size_t i;
    for (i = 0; i < c->nvars; i++)
        if (c->vdim[i] == dim && strcmp(c->vpath[i], path) == 0)
            return c->var[i];
    return NULL;
}

/* `e` of the prog's pool rebuilt over the variables; NULL when a symbol has no expression
 * (`*missing`) or a constructor failed. `memo` by expression id. */
static const sg_expr *over_vars(gate_ctx *c, side *s, sg_expr_copier *cp, const sg_expr **memo, const sg_expr *e,
                                bool *missing)
{
    const sg_expr *stack[16], **args = stack, *res = NULL;
    size_t n = sg_expr_nargs(e), i;
    uint32_t id = sg_expr_id(e);

    if (memo[id])
        return memo[id];
    if (sg_expr_kind(e) == SG_SYM) {
        res = s->map[sg_expr_symbol_index(e)];
        if (!res)
            *missing = true;
        return memo[id] = res;
    }
    if (n == 0)
        return memo[id] = sg_expr_copy(cp, e);
    if (n > 16 && !(args = sg__malloc(n * sizeof *args)))
        return NULL;
    for (i = 0; i < n; i++)
        if (!(args[i] = over_vars(c, s, cp, memo, sg_expr_arg(e, i), missing)))
            goto cleanup;
    res = sg_expr_apply(c->pool, sg_expr_kind(e), args, n);
cleanup:
    if (args != stack)
        sg_free((void *)args);
    return memo[id] = res;
}

bool sg_gate__add_cond(side *s, const sg_expr *e, const char *kind, const char *loc, const char *fmt, const char *a,
                       const char *b)
{
    if (!e)
        return false;
    if (sg_expr_kind(e) == SG_TRUE)
        return true;
    if (sg__grow((void **)&s->conds, &s->cap, s->n + 1, sizeof *s->conds) != 0)
        return false;
    s->conds[s->n].e = e;
    s->conds[s->n].kind = kind;
    s->conds[s->n].loc = loc;
    snprintf(s->conds[s->n].source, sizeof s->conds[s->n].source, fmt, a, b ? b : "");
    s->n++;
    return true;
}

/* The domain of one version over the variables. Returns 0, SG_ENOMEM; `s->unread` says when the
 * domain cannot be written exactly. */
static int build_side(gate_ctx *c, side *s)
{
    const prog *p = s->p;
    size_t ns = sg_pool_nsymbols(p->pool), i, d, k;
    const sg_expr **memo = NULL;
    sg_expr_copier cp;
    char buf[64];
    int rc = 0;

    sg_expr_copier_init(&cp, c->pool);
    if (p->unread[0]) {
        snprintf(s->unread, sizeof s->unread, "%s", p->unread);
        goto cleanup;
    }
    s->map = sg__calloc(ns + 1, sizeof *s->map);
    memo = sg__calloc(sg_pool_size(p->pool) + 1, sizeof *memo);
    if (!s->map || !memo)
        goto oom;
    /* symbols: the first input dim that is exactly the symbol, else the root of an affine dim */
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            const sg_expr *sz = p->inputs[i].sizes[d], *v = sg_gate__var_of(c, p->inputs[i].path, d);
            if (v && sg_expr_kind(sz) == SG_SYM && !s->map[sg_expr_symbol_index(sz)])
                s->map[sg_expr_symbol_index(sz)] = v;
        }
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            const sg_expr *root = NULL, *v = sg_gate__var_of(c, p->inputs[i].path, d);
            sg_int a, b;
            uint32_t idx;
            if (!v || !sg_expr_affine(p->inputs[i].sizes[d], &root, &a, &b) || !root || a < 1)
                continue;
            idx = sg_expr_symbol_index(root);
            if (s->map[idx])
                continue;
            s->map[idx] = sg_expr_2(c->pool, SG_FLOORDIV, sg_expr_sub(c->pool, v, sg_expr_int(c->pool, b)),
                                    sg_expr_int(c->pool, a));
            if (!s->map[idx])
                goto oom;
        }
    /* symbols torch replaced: what replaced them, as far as that is determined (chains resolve
     * over the rounds) */
    for (k = 0; k < p->nreps + 1 && p->nreps; k++) {
        bool progress = false;
        for (i = 0; i < p->nreps; i++) {
            bool missing = false;
            const sg_expr *e;
            uint32_t idx = sg_expr_symbol_index(p->rep_sym[i]);
            if (s->map[idx])
                continue;
            e = over_vars(c, s, &cp, memo, p->rep_by[i], &missing);
            if (!missing && e) {
                s->map[idx] = e;
                memo[sg_expr_id(p->rep_sym[i])] = NULL;
                progress = true;
            }
        }
        if (!progress)
            break;
    }
    /* every input dim equals its size */
    for (i = 0; i < p->ninputs; i++)
        for (d = 0; d < p->inputs[i].ndim; d++) {
            bool missing = false;
            const sg_expr *v = sg_gate__var_of(c, p->inputs[i].path, d), *sz;
            if (!v)
                continue; /* a signature change: not compared */
            sz = over_vars(c, s, &cp, memo, p->inputs[i].sizes[d], &missing);
            if (missing) {
                snprintf(s->unread, sizeof s->unread, "the size of %.100s dim %zu is not determined by input dims",
                         p->inputs[i].path, d);
                goto cleanup;
            }
            snprintf(buf, sizeof buf, "%zu", d);
            if (!sg_gate__add_cond(s, sg_expr_2(c->pool, SG_EQ, v, sz),
                                   sg_expr_kind(p->inputs[i].sizes[d]) == SG_INT ? "static size" : "shape", NULL,
                                   "input %s dim %s", p->inputs[i].path, buf))
                goto oom;
        }
    for (k = 0; k < p->nconds; k++) {
        const prog_cond *pc = &p->conds[k];
        bool missing = false;
        const sg_expr *e = over_vars(c, s, &cp, memo, pc->e, &missing);
        if (missing) {
            if (pc->skip_missing)
                continue; /* over a data-dependent symbol */
            snprintf(s->unread, sizeof s->unread, "%.120s names a symbol no input dim determines", pc->source);
            goto cleanup;
        }
        if (e && pc->op)
            e = sg_expr_2(c->pool, pc->op, e, sg_expr_int(c->pool, pc->bound));
        if (!sg_gate__add_cond(s, e, pc->kind, pc->loc, "%s%s", pc->source, NULL))
            goto oom;
    }
    goto cleanup;
oom:
    rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
cleanup:
    sg_expr_copier_dispose(&cp);
    sg_free((void *)memo);
    return rc;
}

/* The conjunction of a side's conditions. */
const sg_expr *sg_gate__domain(gate_ctx *c, const side *s)
{
    const sg_expr **a;
    const sg_expr *res;
    size_t i;

    if (s->n == 0)
        return sg_expr_bool(c->pool, true);
    if (s->n == 1)
        return s->conds[0].e;
    if (!(a = sg__malloc(s->n * sizeof *a)))
        return NULL;
    for (i = 0; i < s->n; i++)
        a[i] = s->conds[i].e;
    res = sg_expr_apply(c->pool, SG_AND, a, s->n);
    sg_free((void *)a);
    return res;
}

/* The tensor inputs of `p` as a witness filled from `vals`. */
static int fill_witness(gate_ctx *c, sg_gate_finding *f, const prog *p, const sg_int *vals)
{
    size_t i, d, n = 0;

    for (i = 0; i < p->ninputs; i++)
        n += p->inputs[i].tensor;
    if (!(f->witness = sg__calloc(n + 1, sizeof *f->witness)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < p->ninputs; i++) {
        const prog_input *in = &p->inputs[i];
        sg_gate_shape *w;
        if (!in->tensor)
            continue;
        w = &f->witness[f->nwitness++];
        w->path = sg__strdup(in->path);
        w->ndim = in->ndim;
        w->sizes = sg__calloc(w->ndim + 1, sizeof *w->sizes);
        if (!w->path || !w->sizes)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        for (d = 0; d < w->ndim; d++) {
            const sg_expr *v = sg_gate__var_of(c, in->path, d);
            w->sizes[d] = v ? vals[sg_expr_symbol_index(v)] : 0;
        }
    }
    return 0;
}

/* Flag (in `gt->dims`, through `which`) the dims whose variables `e` mentions. */
static int flag_dims(gate_ctx *c, sg_gate *gt, const sg_expr *e, bool widening)
{
    const sg_expr **syms = NULL;
    size_t n = 0, i, k;
    int rc = sg_expr_symbols(&syms, &n, c->pool, e, c->err);

    for (i = 0; rc == 0 && i < n; i++)
        for (k = 0; k < c->nvars && k < gt->ndims; k++)
            if (c->var[k] == syms[i]) {
                if (widening)
                    gt->dims[k].widened = true;
                else
                    gt->dims[k].regressed = true;
            }
    sg_free((void *)syms);
    return rc;
}

/* The first condition of `rej` that fails (false or undefined) at `vals`, into the finding. */
static int blame(gate_ctx *c, sg_gate_finding *f, const side *rej, const sg_int *vals)
{
    size_t i, ns = sg_pool_nsymbols(c->pool), pass;

    /* a failing condition with a user code line first (a guard says where the model requires it), else the first */
    for (pass = 0; pass < 2; pass++)
    for (i = 0; i < rej->n; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        char *txt = NULL;
        if (pass == 0 && !rej->conds[i].loc)
            continue;
        if (sg_expr_eval(&v, c->pool, rej->conds[i].e, vals, ns, &e2) == 0 && v.kind == SG_VAL_BOOL && v.num)
            continue;
        if (sg_expr_print(&txt, rej->conds[i].e, SG_SYNTAX_TORCH, NULL, NULL, c->err) != 0)
            return c->err ? c->err->code : SG_ENOMEM;
        f->rejected_by = txt;
        f->cond = rej->conds[i].e;
        f->kind = sg__strdup(rej->conds[i].kind);
        f->source = sg__strdup(rej->conds[i].source);
        f->loc = rej->conds[i].loc ? sg__strdup(rej->conds[i].loc) : NULL;
        if (!f->kind || !f->source || (rej->conds[i].loc && !f->loc))
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        return 0;
    }
    return 0;
}

/*
 * Is there a point `acc` accepts (with `extra`, when not NULL) that `rej` rejects (`rej` NULL:
 * any point)? Sizes are never negative; dynamic sizes (`dyn`, per variable) from 2 on. On
 * SG_SAT_YES `vals` (one per symbol of the gate's pool) is the point, re-checked by exact
 * evaluation (`*exact` false when it does not pass). Returns 0 or an error; a condition Z3 cannot
 * take is SG_SAT_UNKNOWN with the reason.
 */
int sg_gate__query(gate_ctx *c, const side *acc, const side *rej, const sg_expr *extra, const bool *dyn,
                   const sg_check_options *o, const sg_runtime *rt, sg_sat_answer *ans, sg_int *vals, bool *exact,
                   char *reason, size_t cap)
{
    const sg_expr *pos[4], *neg[1], **ge = NULL;
    sg_sat_query q;
    size_t i, nw = 0, np = 0;
    int rc = 0;

    memset(&q, 0, sizeof q);
    *exact = false;
    *ans = SG_SAT_UNKNOWN;
    if (!(ge = sg__calloc(2 * c->nvars + 1, sizeof *ge)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    pos[np++] = sg_gate__domain(c, acc);
    neg[0] = rej ? sg_gate__domain(c, rej) : NULL;
    /* dynamic sizes from 2 on: torch.export promises nothing for 0 and 1 (it specialises them when
     * it exports, and kernels such as a view(-1, n) may not run on them); sizes are never negative */
    for (i = 0; i < c->nvars; i++)
        ge[nw++] = sg_expr_2(c->pool, SG_GE, c->var[i], sg_expr_int(c->pool, dyn[i] ? 2 : 0));
    pos[np++] = nw ? sg_expr_apply(c->pool, SG_AND, ge, nw) : sg_expr_bool(c->pool, true);
    if (extra)
        pos[np++] = extra;
    if (!pos[0] || !pos[1] || (rej && !neg[0])) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
        goto cleanup;
    }
    q.pool = c->pool;
    q.neg = neg;
    q.nneg = rej ? 1 : 0;
    q.pos = pos;
    q.npos = np;
    q.rlimit = o->query_rlimit;
    q.contexts = rt ? rt->contexts : NULL;
    if ((rc = sg_sat_find(ans, vals, &q, reason, cap, c->err)) != 0) {
        if (rc == SG_EUNSUPPORTED) { /* a condition Z3 cannot take: not decided */
            *ans = SG_SAT_UNKNOWN;
            snprintf(reason, cap, "%.150s", c->err ? c->err->msg : "unsupported");
            rc = 0;
        }
        goto cleanup;
    }
    if (*ans == SG_SAT_UNKNOWN && !reason[0])
        snprintf(reason, cap, "the solver's budget ran out");
    if (*ans != SG_SAT_YES)
        goto cleanup;
    /* the point re-checked by exact evaluation: every accepting condition true, sizes >= 0 */
    *exact = true;
    for (i = 0; i < acc->n && *exact; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        if (sg_expr_eval(&v, c->pool, acc->conds[i].e, vals, sg_pool_nsymbols(c->pool), &e2) != 0
            || v.kind != SG_VAL_BOOL || !v.num)
            *exact = false;
    }
    for (i = 0; i < c->nvars; i++)
        if (vals[sg_expr_symbol_index(c->var[i])] < 0)
            *exact = false;
cleanup:
    sg_free((void *)ge);
    return rc;
}

/* One direction: a point `acc` accepts and `rej` rejects. `rej` NULL: any point `acc` accepts. */
static int direction(gate_ctx *c, sg_gate_finding *f, const side *acc, const side *rej, const sg_check_options *o,
                     const sg_runtime *rt)
{
    sg_sat_answer ans;
    sg_int *vals = sg__calloc(sg_pool_nsymbols(c->pool) + c->nvars + 1, sizeof *vals);
    bool exact;
    int rc;

    if (!vals)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if ((rc = sg_gate__query(c, acc, rej, NULL, c->dynamic, o, rt, &ans, vals, &exact, f->reason,
                             sizeof f->reason)) != 0)
        goto cleanup;
    if (ans == SG_SAT_UNKNOWN) {
        f->unknown = true;
        goto cleanup;
    }
    if (ans == SG_SAT_NO)
        goto cleanup;
    if (!exact) {
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point does not pass exact evaluation");
        goto cleanup;
    }
    f->found = true;
    if ((rc = fill_witness(c, f, acc->p, vals)) != 0)
        goto cleanup;
    if (rej && (rc = blame(c, f, rej, vals)) == 0 && !f->rejected_by) {
        f->found = false; /* no rejecting condition fails on it exactly: not a finding */
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point passes every condition by exact evaluation");
    }
cleanup:
    sg_free(vals);
    return rc;
}


/* A line of what changed in the signature (at most 400 bytes). */
static bool note_line(sg_gate *gt, const char *line)
{
    if (sg__grow((void **)&gt->changes, &gt->capchanges, gt->nchanges + 1, sizeof *gt->changes) != 0)
        return false;
    if (!(gt->changes[gt->nchanges] = sg__strdup(line)))
        return false;
    gt->nchanges++;
    return true;
}

/*
 * Compare the signatures: every user input of OLD in NEW by path, the same kind (tensor, a
 * constant torch specialised, a dynamic int) and rank, a constant with the same value (torch
 * checks it on every call: "Expected input at *args[1] to be equal to 3", 2.14's guard
 * `n == 3`), and no new one. A version that does not list its non-tensor inputs (a trace
 * without a capture record) is compared on its tensors only, with a note.
 */
static int signature(sg_gate *gt, const prog *o, const prog *n, sg_error *err)
{
    size_t i, skipped = 0;
    char line[600], first[200] = "";

    for (i = 0; i < o->ninputs; i++) {
        const prog_input *a = &o->inputs[i], *hit = sg_gate__input_named(n, a->path);
        line[0] = '\0';
        if (!hit) {
            if (!a->tensor && !n->nontensor_known) {
                if (!skipped++)
                    snprintf(first, sizeof first, "%.150s", a->path);
                continue;
            }
            snprintf(line, sizeof line, "input %.300s removed (or renamed)", a->path);
        } else if (a->tensor != hit->tensor)
            snprintf(line, sizeof line, "input %.300s: %s -> %s", a->path, a->tensor ? "a tensor" : "not a tensor",
                     hit->tensor ? "a tensor" : "not a tensor");
        else if (a->tensor && a->ndim != hit->ndim)
            snprintf(line, sizeof line, "input %.300s: rank %zu -> %zu", a->path, a->ndim, hit->ndim);
        else if (!a->tensor && a->value && hit->value && strcmp(a->value, "?") != 0 && strcmp(hit->value, "?") != 0
                 && strcmp(a->value, hit->value) != 0)
            snprintf(line, sizeof line, "input %.200s: constant %.80s -> %.80s (torch checks the value on every call)",
                     a->path, a->value, hit->value);
        else if (!a->tensor && !a->value && hit->value && o->nontensor_known && n->nontensor_known
                 && strcmp(hit->value, "?") != 0)
            snprintf(line, sizeof line, "input %.200s: a dynamic int -> the constant %.80s", a->path, hit->value);
        if (line[0] && !note_line(gt, line))
            goto oom;
    }
    for (i = 0; i < n->ninputs; i++) {
        const prog_input *b = &n->inputs[i];
        if (sg_gate__input_named(o, b->path))
            continue;
        if (!b->tensor && !o->nontensor_known) {
            if (!skipped++)
                snprintf(first, sizeof first, "%.150s", b->path);
            continue;
        }
        snprintf(line, sizeof line, "input %.300s added", b->path);
        if (!note_line(gt, line))
            goto oom;
    }
    if (skipped) {
        bool old_blind = !o->nontensor_known;
        char *note = old_blind ? gt->old_note : gt->new_note;
        char add[400];
        snprintf(add, sizeof add, "its non-tensor inputs are not recorded (a trace without a capture record): "
                 "%s's %zu non-tensor input%s (%.100s%s) not compared", old_blind ? "NEW" : "OLD", skipped,
                 skipped == 1 ? "" : "s", first, skipped > 1 ? ", ..." : "");
        if (!note[0])
            snprintf(note, 240, "%.239s", add);
    }
    gt->signature_changed = gt->nchanges > 0;
    return 0;
oom:
    return sg_error_set(err, SG_ENOMEM, "out of memory");
}

/* The sympy text of `e`, or NULL. */
static char *text_of(const sg_expr *e)
{
    char *s = NULL;
    sg_error e2 = SG_ERROR_INIT;
    if (!e || sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &e2) != 0)
        return NULL;
    return s;
}

/* The variables: one per dim of OLD's tensor inputs, and the per-dim sizes of both. */
static int make_vars(gate_ctx *c, sg_gate *gt, const prog *o, const prog *n)
{
    size_t i, d, total = 0;
    char name[1200];

    for (i = 0; i < o->ninputs; i++)
        total += o->inputs[i].ndim;
    if (total > MAX_VARS)
        return sg_error_set(c->err, SG_ELIMIT, "OLD has %zu input dims (at most %d)", total, MAX_VARS);
    if (!SG_CALLOC_ALL(SG_SLOT(c->vpath, total + 1), SG_SLOT(c->vdim, total + 1), SG_SLOT(c->var, total + 1),
                       SG_SLOT(c->dynamic, total + 1), SG_SLOT(gt->dims, total + 1)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < o->ninputs; i++) {
        const prog_input *in = &o->inputs[i], *nin = sg_gate__input_named(n, in->path);
        for (d = 0; d < in->ndim; d++) {
            sg_gate_dim *gd = &gt->dims[gt->ndims++];
            snprintf(name, sizeof name, "L%s.size()[%zu]", in->path, d);
            c->vpath[c->nvars] = in->path;
            c->vdim[c->nvars] = d;
            c->dynamic[c->nvars] = sg_expr_kind(in->sizes[d]) != SG_INT;
            if (!(c->var[c->nvars++] = sg_expr_symbol(c->pool, name, strlen(name))))
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            gd->path = sg__strdup(in->path);
            gd->dim = d;
            gd->old_size = text_of(in->sizes[d]);
            gd->new_size = nin && d < nin->ndim ? text_of(nin->sizes[d]) : NULL;
            if (!gd->path || !gd->old_size)
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        }
    }
    return 0;
}

/*
 * The policy's side: OLD's shape conditions (static sizes, shared and derived dims), OLD's range
 * conditions on dims the policy does not range, the policy's ranges and relations (kind
 * "relation": NEW may require them, so the regression question takes them too). OLD's
 * guards_code and asserts are not part of it: the policy says what NEW must accept.
 * {"require": {"['x'].size()[0]": [1, 64], ...}, "relations": ["L['x'].size()[0] == L['y'].size()[0]"]}
 */
static int policy_side(gate_ctx *c, side *pol, const side *so, const char *json)
{
    cJSON *root = NULL;
    const cJSON *req, *rel, *it;
    bool *ranged = sg__calloc(c->nvars + 1, sizeof *ranged);
    size_t i, k;
    int rc = 0;
    char name[1200];

    if (!ranged)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    if ((rc = sg__json_parse(&root, json, strlen(json), (size_t)1 << 24, 64, "policy", c->err)) != 0)
        goto cleanup;
    req = sg__json_get(root, "require");
    rel = sg__json_get(root, "relations");
    if (!cJSON_IsObject(root) || (req && !cJSON_IsObject(req)) || (rel && !cJSON_IsArray(rel))) {
        rc = sg_error_set(c->err, SG_EINVALID, "policy: expected {\"require\": {DIM: [MIN, MAX]}, \"relations\": [TEXT]}");
        goto cleanup;
    }
    pol->p = so->p;
    cJSON_ArrayForEach(it, req) {
        const sg_expr *v;
        sg_int lo, hi;
        snprintf(name, sizeof name, "L%s", it->string);
        if (!(v = sg_pool_find_symbol(c->pool, name, strlen(name)))) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: '%.200s' is not an input dim of OLD (write ['x'].size()[0])",
                              it->string);
            goto cleanup;
        }
        if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 || !sg__json_int(it->child, &lo)
            || !(sg__json_int(it->child->next, &hi) || cJSON_IsNull(it->child->next)) || lo < 0) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: '%.200s': expected [MIN, MAX] (MAX may be null)", it->string);
            goto cleanup;
        }
        for (k = 0; k < c->nvars; k++)
            ranged[k] |= c->var[k] == v;
        if (!sg_gate__add_cond(pol, sg_expr_2(c->pool, SG_GE, v, sg_expr_int(c->pool, lo)), "policy", NULL,
                               "policy require %s min", it->string, NULL)
            || (!cJSON_IsNull(it->child->next)
                && !sg_gate__add_cond(pol, sg_expr_2(c->pool, SG_LE, v, sg_expr_int(c->pool, hi)), "policy", NULL,
                                      "policy require %s max", it->string, NULL))) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    cJSON_ArrayForEach(it, rel) {
        const sg_expr *e = NULL;
        const char *t = sg__json_str(it);
        sg_error pe = SG_ERROR_INIT;
        const sg_expr **syms = NULL;
        size_t n = 0;
        if (!t || sg_expr_parse(&e, c->pool, t, strlen(t), &pe) != 0 || sg_expr_sort(e) != SG_SORT_BOOL) {
            rc = sg_error_set(c->err, SG_EINVALID, "policy: relation '%.200s': %s", t ? t : "(not a string)",
                              pe.code ? pe.msg : "not a condition");
            goto cleanup;
        }
        if ((rc = sg_expr_symbols(&syms, &n, c->pool, e, c->err)) != 0)
            goto cleanup;
        for (i = 0; i < n; i++) {
            for (k = 0; k < c->nvars && c->var[k] != syms[i]; k++)
                ;
            if (k == c->nvars) {
                rc = sg_error_set(c->err, SG_EINVALID, "policy: relation '%.200s' names '%.100s', not an input dim of OLD",
                                  t, sg_expr_symbol_name(syms[i]));
                sg_free((void *)syms);
                goto cleanup;
            }
        }
        sg_free((void *)syms);
        if (!sg_gate__add_cond(pol, e, "relation", NULL, "policy relation %s", t, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    for (i = 0; i < so->n; i++) {
        const cond *cd = &so->conds[i];
        bool keep = strcmp(cd->kind, "shape") == 0 || strcmp(cd->kind, "static size") == 0;
        if ((strcmp(cd->kind, "range_constraints") == 0 || strcmp(cd->kind, "dynamic_shapes") == 0 || strcmp(cd->kind, "range") == 0)) {
            const sg_expr **syms = NULL;
            size_t n = 0;
            if ((rc = sg_expr_symbols(&syms, &n, c->pool, cd->e, c->err)) != 0)
                goto cleanup;
            for (k = 0; k < n && !keep; k++) {
                size_t j;
                for (j = 0; j < c->nvars && c->var[j] != syms[k]; j++)
                    ;
                keep = j < c->nvars && !ranged[j];
            }
            sg_free((void *)syms);
        }
        if (keep && !sg_gate__add_cond(pol, cd->e, cd->kind, cd->loc, "%s%s", cd->source, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
cleanup:
    cJSON_Delete(root);
    sg_free(ranged);
    return rc;
}

/* ---- the gate --------------------------------------------------------------------------------- */

/* Read one version into `p`: its graph or its trace. */
static int read_version(prog *p, const sg_graph *g, const sg_trace *t, const char *which, sg_error *err)
{
    if ((g != NULL) == (t != NULL))
        return sg_error_set(err, SG_EINVALID, "sg_engine_gate_run: %s needs a program or a trace (one of them)", which);
    return g ? sg_gate__prog_from_graph(p, g, err) : sg_gate__prog_from_trace(p, t, err);
}

int sg_gate_run(sg_gate **out, const sg_gate_input *in, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err)
{
    side sp;
    sg_gate *gt = NULL;
    gate_ctx c;
    side so, sn;
    prog po, pn;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&so, 0, sizeof so);
    memset(&sn, 0, sizeof sn);
    memset(&sp, 0, sizeof sp);
    memset(&po, 0, sizeof po);
    memset(&pn, 0, sizeof pn);
    c.err = err;
    so.p = &po;
    sn.p = &pn;
    if (!(gt = sg__calloc(1, sizeof *gt)) || (in->old_name && !(gt->old_name = sg__strdup(in->old_name)))
        || (in->new_name && !(gt->new_name = sg__strdup(in->new_name)))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = read_version(&po, in->old_graph, in->old_trace, "OLD", err)) != 0
        || (rc = read_version(&pn, in->new_graph, in->new_trace, "NEW", err)) != 0)
        goto cleanup;
    snprintf(gt->old_note, sizeof gt->old_note, "%s", po.note);
    snprintf(gt->new_note, sizeof gt->new_note, "%s", pn.note);
    gt->old_kind = in->old_graph ? "archive" : "trace";
    gt->new_kind = in->new_graph ? "archive" : "trace";
    /* a version not read at all (a trace whose export stopped early) has no known inputs either: no
     * signature comparison */
    if ((rc = sg_pool_new(&c.pool, err)) != 0 || (!po.inputs_unknown && !pn.inputs_unknown && (rc = signature(gt, &po, &pn, err)) != 0)
        || (rc = make_vars(&c, gt, &po, &pn)) != 0 || (rc = build_side(&c, &so)) != 0)
        goto cleanup;
    if (!gt->signature_changed && (rc = build_side(&c, &sn)) != 0)
        goto cleanup;
    if (so.unread[0] || sn.unread[0] || po.unread[0] || pn.unread[0]) {
        const char *why = po.unread[0] ? po.unread : pn.unread[0] ? pn.unread : so.unread[0] ? so.unread : sn.unread;
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "%s: %.180s", po.unread[0] || (!pn.unread[0] && so.unread[0]) ? "OLD" : "NEW",
                 why);
        /* a version that is not read at all (a trace whose export stopped early): its inputs are
         * not known either, so neither is a signature change */
        if (!gt->signature_changed || po.unread[0] || pn.unread[0])
            goto done;
    }
    if (gt->signature_changed) {
        /* any shape OLD accepts: NEW cannot be called as OLD was */
        if ((rc = direction(&c, &gt->regression, &so, NULL, opts, rt)) != 0)
            goto cleanup;
        if (gt->regression.found) {
            gt->regression.kind = sg__strdup("signature");
            gt->regression.source = sg__strdup(gt->changes[0]);
            if (!gt->regression.kind || !gt->regression.source) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
        }
        gt->verdict = SG_GATE_REGRESSION;
        if (in->serving)
            snprintf(gt->serving.reason, sizeof gt->serving.reason, "the signature changed");
        gt->has_serving = in->serving;
        goto done;
    }
    /* the widening against OLD as it is; the regression and the policy with the relations the
     * policy lets NEW require (a shape outside them is not one NEW must accept) */
    if ((rc = direction(&c, &gt->widening, &sn, &so, opts, rt)) != 0)
        goto cleanup;
    if (in->policy) {
        size_t i;
        gt->has_policy = true;
        if (sg_gate__policy_is_python(in->policy)) {
            char *js = NULL;
            if ((rc = sg_gate__policy_from_python(&js, in->policy, err)) == 0)
                rc = policy_side(&c, &sp, &so, js);
            sg_free(js);
        } else
            rc = policy_side(&c, &sp, &so, in->policy);
        if (rc != 0)
            goto cleanup;
        for (i = 0; i < sp.n; i++)
            if (strcmp(sp.conds[i].kind, "relation") == 0
                && !sg_gate__add_cond(&so, sp.conds[i].e, "relation", NULL, "%s%s", sp.conds[i].source, NULL)) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
        if ((rc = direction(&c, &gt->policy, &sp, &sn, opts, rt)) != 0)
            goto cleanup;
    }
    if ((rc = direction(&c, &gt->regression, &so, &sn, opts, rt)) != 0)
        goto cleanup;
    if ((gt->regression.cond && (rc = flag_dims(&c, gt, gt->regression.cond, false)) != 0)
        || (gt->widening.cond && (rc = flag_dims(&c, gt, gt->widening.cond, true)) != 0)
        || (gt->policy.cond && (rc = flag_dims(&c, gt, gt->policy.cond, false)) != 0))
        goto cleanup;
    if (gt->regression.found || gt->policy.found)
        gt->verdict = SG_GATE_REGRESSION;
    else if (gt->policy.unknown) {
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "policy query: %.160s", gt->policy.reason);
    }
    else if (gt->regression.unknown) {
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "regression query: %.160s", gt->regression.reason);
    } else
        gt->verdict = SG_GATE_PASS;
    if (in->serving && (rc = sg_gate__serving(&c, gt, &sn, in, opts, rt)) != 0)
        goto cleanup;
done:
    if (in->serving && !gt->has_serving) {
        gt->has_serving = true;
        if (!gt->serving.reason[0])
            snprintf(gt->serving.reason, sizeof gt->serving.reason, "%.180s", gt->reason);
    }
    gt->regression.cond = gt->widening.cond = gt->policy.cond = NULL; /* they live in the pool freed below */
    *out = gt;
    gt = NULL;
    rc = 0;
cleanup:
    sg_gate_free(gt);
    SG_FREE_ALL(so.map, so.conds, sn.map, sn.conds, sp.conds);
    sg_free((void *)c.vpath);
    sg_free(c.vdim);
    sg_free((void *)c.var);
    sg_free(c.dynamic);
    sg_pool_free(c.pool);
    sg_gate__prog_dispose(&po);
    sg_gate__prog_dispose(&pn);
    return rc;
}
