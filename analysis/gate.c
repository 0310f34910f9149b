/*
 * gate.c - the release gate: does NEW accept every input shape OLD accepts?
 *
 * Both programs' accepted domains are written over one set of variables, one
 * per input dim of OLD, named by torch's source for it (`L['x'].size()[0]`),
 * so that a printed condition reads as torch prints guards. A program's
 * symbols are expressed through those variables: a symbol some input dim is
 * exactly is that dim's variable; the root `s` of a dim `A*s + B` is
 * `(D - B) // A` (the dim's own condition `D == A*s + B` then asks for the
 * divisibility). The domain is what the module checks on every call
 * (torch/export/_unlift.py, torch/_export/utils.py): every input dim equals
 * its symbolic or static size, the range_constraints entry of an input dim's
 * size (its max, and its min when above 2: 0 and 1 are let through), every
 * guards_code entry, every runtime assert over input sizes. Z3 (solver/sat.h) answers
 * "OLD holds and NEW does not" (a regression) and the converse (a widening);
 * an undefined NEW condition (Python would raise) rejects. The rejecting
 * condition is found by exact evaluation of each at the witness. Dynamic
 * sizes are compared from 2 on: torch.export specialises 0 and 1 when it
 * exports, and the module's kernels may not run on them (a view(-1, n) of
 * zero elements raises), so a difference at 0 or 1 alone is not a finding.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/gate.h"
#include "expr/expr.h"
#include "shapegate/graph.h"
#include "solver/sat.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_VARS 4096

/* One condition of a program's domain, with where it comes from. */
typedef struct cond {
    const sg_expr *e;     /* over the variables */
    const char *kind;     /* static string */
    char source[240];
} cond;

typedef struct side {
    const sg_graph *g;
    const sg_expr **map;  /* per symbol index of g's pool: the expression over the variables, or NULL */
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

static char *dupstr(const char *s) { return s ? sg__strndup(s, strlen(s)) : NULL; }

/* The variable of (path, dim), or NULL. */
static const sg_expr *var_of(const gate_ctx *c, const char *path, size_t dim)
{
    size_t i;
    for (i = 0; i < c->nvars; i++)
        if (c->vdim[i] == dim && strcmp(c->vpath[i], path) == 0)
            return c->var[i];
    return NULL;
}

/* `e` of g's pool rebuilt over the variables; NULL when a symbol has no expression (`*missing`)
 * or a constructor failed. `memo` by expression id. */
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

static bool add_cond(side *s, const sg_expr *e, const char *kind, const char *fmt, const char *a, const char *b)
{
    if (!e)
        return false;
    if (sg_expr_kind(e) == SG_TRUE)
        return true;
    if (sg__grow((void **)&s->conds, &s->cap, s->n + 1, sizeof *s->conds) != 0)
        return false;
    s->conds[s->n].e = e;
    s->conds[s->n].kind = kind;
    snprintf(s->conds[s->n].source, sizeof s->conds[s->n].source, fmt, a, b ? b : "");
    s->n++;
    return true;
}

/* Is `e` the size of some user tensor input dim of `g`? */
static bool is_input_size(const sg_graph *g, const sg_expr *e)
{
    size_t i, d;

    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        for (d = 0; d < in->tensor->ndim; d++)
            if (in->tensor->sizes[d] == e)
                return true;
    }
    return false;
}

/* The domain of one program over the variables. Returns 0, SG_ENOMEM; `s->unread` says when
 * the domain cannot be written exactly. */
static int build_side(gate_ctx *c, side *s)
{
    const sg_graph *g = s->g;
    const sg_pool *gp = sg_graph_pool(g);
    size_t ns = sg_pool_nsymbols(gp), i, d, k;
    const sg_expr **memo = NULL;
    sg_expr_copier cp;
    char buf[64];
    int rc = 0;

    sg_expr_copier_init(&cp, c->pool);
    s->map = sg__calloc(ns + 1, sizeof *s->map);
    memo = sg__calloc(sg_pool_size(gp) + 1, sizeof *memo);
    if (!s->map || !memo)
        goto oom;
    /* symbols: an input dim that is exactly the symbol, else the root of an affine dim */
    for (k = 0; k < sg_graph_symbol_count(g); k++) {
        const sg_graph_symbol *sy = sg_graph_symbol_at(g, k);
        uint32_t idx = sg_expr_symbol_index(sy->sym);
        if (sy->path) {
            s->map[idx] = var_of(c, sy->path, sy->dim);
            continue;
        }
        for (i = 0; i < sg_graph_input_count(g) && !s->map[idx]; i++) {
            const sg_graph_input *in = sg_graph_input_at(g, i);
            if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
                continue;
            for (d = 0; d < in->tensor->ndim && !s->map[idx]; d++) {
                const sg_expr *root = NULL, *v = var_of(c, in->path, d);
                sg_int a, b;
                if (!v || !sg_expr_affine(in->tensor->sizes[d], &root, &a, &b) || root != sy->sym || a < 1)
                    continue;
                s->map[idx] = sg_expr_2(c->pool, SG_FLOORDIV, sg_expr_sub(c->pool, v, sg_expr_int(c->pool, b)),
                                        sg_expr_int(c->pool, a));
                if (!s->map[idx])
                    goto oom;
            }
        }
    }
    /* every input dim equals its size */
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        for (d = 0; d < in->tensor->ndim; d++) {
            bool missing = false;
            const sg_expr *v = var_of(c, in->path, d), *sz;
            if (!v)
                continue; /* a signature change: not compared */
            sz = over_vars(c, s, &cp, memo, in->tensor->sizes[d], &missing);
            if (missing) {
                snprintf(s->unread, sizeof s->unread, "the size of %.100s dim %zu is not determined by input dims",
                         in->path, d);
                goto cleanup;
            }
            snprintf(buf, sizeof buf, "%zu", d);
            if (!add_cond(s, sg_expr_2(c->pool, SG_EQ, v, sz),
                          sg_expr_kind(in->tensor->sizes[d]) == SG_INT ? "static size" : "shape",
                          "input %s dim %s", in->path, buf))
                goto oom;
        }
    }
    /* the range of an input dim's size, as torch checks it on every call: the max when finite, the
     * min only above 2 (0 and 1 are let through); ranges of other expressions (the root of a
     * derived dim) are not checked */
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        bool missing = false;
        const sg_expr *k2;
        sg_int v;
        if (!is_input_size(g, r->expr))
            continue;
        k2 = over_vars(c, s, &cp, memo, r->expr, &missing);
        if (missing)
            continue;
        if (!k2)
            goto oom;
        if (r->has_min && sg__num_int(&r->min, &v) && v > 2
            && !add_cond(s, sg_expr_2(c->pool, SG_GE, k2, sg_expr_int(c->pool, v)), "range_constraints",
                         "range_constraints['%s'] min", r->key, NULL))
            goto oom;
        if (r->has_max && sg__num_int(&r->max, &v)
            && !add_cond(s, sg_expr_2(c->pool, SG_LE, k2, sg_expr_int(c->pool, v)), "range_constraints",
                         "range_constraints['%s'] max", r->key, NULL))
            goto oom;
    }
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        bool missing = false;
        const sg_expr *e;
        if (!gd->expr) {
            snprintf(s->unread, sizeof s->unread, "guards_code[%zu] not read: %.120s", i, gd->reason ? gd->reason : "");
            goto cleanup;
        }
        e = over_vars(c, s, &cp, memo, gd->expr, &missing);
        if (missing) {
            snprintf(s->unread, sizeof s->unread, "guards_code[%zu] names a symbol no input dim determines", i);
            goto cleanup;
        }
        snprintf(buf, sizeof buf, "%zu", i);
        if (!add_cond(s, e, "guards_code", "guards_code[%s]: %s", buf, gd->text))
            goto oom;
    }
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        bool missing = false;
        const sg_expr *e;
        if (!a->expr) { /* it may be about shapes: the domain is not known without it */
            snprintf(s->unread, sizeof s->unread, "the runtime assert on node '%.80s' was not recovered",
                     a->node ? a->node : "?");
            goto cleanup;
        }
        e = over_vars(c, s, &cp, memo, a->expr, &missing);
        if (missing)
            continue; /* over a data-dependent symbol */
        if (!add_cond(s, e, "runtime_assert", "runtime assert on node '%s'%s", a->node ? a->node : "?",
                      a->message ? "" : NULL))
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
static const sg_expr *domain(gate_ctx *c, const side *s)
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

/* The user tensor inputs of `g` as a witness filled from `vals`. */
static int fill_witness(gate_ctx *c, sg_gate_finding *f, const sg_graph *g, const sg_int *vals)
{
    size_t i, d, n = 0;

    for (i = 0; i < sg_graph_input_count(g); i++)
        n += sg_graph_input_at(g, i)->kind == SG_GRAPH_IN_USER && sg_graph_input_at(g, i)->tensor;
    if (!(f->witness = sg__calloc(n + 1, sizeof *f->witness)))
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        sg_gate_shape *w;
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        w = &f->witness[f->nwitness++];
        w->path = dupstr(in->path);
        w->ndim = in->tensor->ndim;
        w->sizes = sg__calloc(w->ndim + 1, sizeof *w->sizes);
        if (!w->path || !w->sizes)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        for (d = 0; d < w->ndim; d++) {
            const sg_expr *v = var_of(c, in->path, d);
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
    size_t i, ns = sg_pool_nsymbols(c->pool);

    for (i = 0; i < rej->n; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        char *txt = NULL;
        if (sg_expr_eval(&v, c->pool, rej->conds[i].e, vals, ns, &e2) == 0 && v.kind == SG_VAL_BOOL && v.num)
            continue;
        if (sg_expr_print(&txt, rej->conds[i].e, SG_SYNTAX_TORCH, NULL, NULL, c->err) != 0)
            return c->err ? c->err->code : SG_ENOMEM;
        f->rejected_by = txt;
        f->cond = rej->conds[i].e;
        f->kind = dupstr(rej->conds[i].kind);
        f->source = dupstr(rej->conds[i].source);
        if (!f->kind || !f->source)
            return sg_error_set(c->err, SG_ENOMEM, "out of memory");
        return 0;
    }
    return 0;
}

/* One direction: a point `acc` accepts and `rej` rejects. `rej` NULL: any point `acc` accepts. */
static int direction(gate_ctx *c, sg_gate_finding *f, const side *acc, const side *rej, const sg_check_options *o,
                     const sg_runtime *rt)
{
    const sg_expr *pos[3], *neg[1], **ge2 = NULL;
    sg_sat_query q;
    sg_sat_answer ans;
    sg_int *vals = NULL;
    size_t i, k, nw = 0;
    int rc;

    memset(&q, 0, sizeof q);
    ge2 = sg__calloc(c->nvars + 1, sizeof *ge2);
    vals = sg__calloc(sg_pool_nsymbols(c->pool) + c->nvars + 1, sizeof *vals);
    if (!ge2 || !vals) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    pos[0] = domain(c, acc);
    /* dynamic sizes from 2 on: torch.export promises nothing for 0 and 1 (it specialises them when
     * it exports, and kernels such as a view(-1, n) may not run on them) */
    neg[0] = rej ? domain(c, rej) : NULL;
    for (i = 0; i < c->nvars; i++)
        if (c->dynamic[i])
            ge2[nw++] = sg_expr_2(c->pool, SG_GE, c->var[i], sg_expr_int(c->pool, 2));
    pos[2] = nw ? sg_expr_apply(c->pool, SG_AND, ge2, nw) : NULL;
    if (!pos[0] || (rej && !neg[0]) || (nw && !pos[2])) {
        rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
        goto cleanup;
    }
    /* sizes are never negative */
    {
        const sg_expr **nn = sg__calloc(c->nvars + 1, sizeof *nn);
        if (!nn) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        for (i = 0; i < c->nvars; i++)
            nn[i] = sg_expr_2(c->pool, SG_GE, c->var[i], sg_expr_int(c->pool, 0));
        pos[1] = c->nvars ? sg_expr_apply(c->pool, SG_AND, nn, c->nvars) : sg_expr_bool(c->pool, true);
        sg_free((void *)nn);
        if (!pos[1]) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory building the gate");
            goto cleanup;
        }
    }
    q.pool = c->pool;
    q.neg = neg;
    q.nneg = rej ? 1 : 0;
    q.pos = pos;
    q.npos = nw ? 3 : 2;
    q.rlimit = o->query_rlimit;
    q.contexts = rt ? rt->contexts : NULL;
    if ((rc = sg_sat_find(&ans, vals, &q, f->reason, sizeof f->reason, c->err)) != 0) {
        if (rc == SG_EUNSUPPORTED) { /* a condition Z3 cannot take: not decided */
            f->unknown = true;
            snprintf(f->reason, sizeof f->reason, "%.150s", c->err ? c->err->msg : "unsupported");
            rc = 0;
        }
        goto cleanup;
    }
    if (ans == SG_SAT_UNKNOWN) {
        f->unknown = true;
        if (!f->reason[0])
            snprintf(f->reason, sizeof f->reason, "the solver's budget ran out");
        goto cleanup;
    }
    if (ans == SG_SAT_NO)
        goto cleanup;
    /* the point re-checked by exact evaluation: every accepting condition true, sizes >= 0 */
    for (i = 0; i < acc->n; i++) {
        sg_value v;
        sg_error e2 = SG_ERROR_INIT;
        if (sg_expr_eval(&v, c->pool, acc->conds[i].e, vals, sg_pool_nsymbols(c->pool), &e2) != 0
            || v.kind != SG_VAL_BOOL || !v.num)
            break;
    }
    for (k = 0; k < c->nvars && i == acc->n; k++)
        if (vals[sg_expr_symbol_index(c->var[k])] < 0)
            i = 0;
    if (i != acc->n) {
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point does not pass exact evaluation");
        goto cleanup;
    }
    f->found = true;
    if ((rc = fill_witness(c, f, acc->g, vals)) != 0)
        goto cleanup;
    if (rej && (rc = blame(c, f, rej, vals)) == 0 && !f->rejected_by) {
        f->found = false; /* no rejecting condition fails on it exactly: not a finding */
        f->unknown = true;
        snprintf(f->reason, sizeof f->reason, "the solver's point passes every condition by exact evaluation");
    }
cleanup:
    sg_free((void *)ge2);
    sg_free(vals);
    return rc;
}

/* The user inputs of `g`: paths (tensor or not) and ranks (0 for non-tensors). */
static bool same_input(const sg_graph_input *a, const sg_graph_input *b)
{
    return a->path && b->path && strcmp(a->path, b->path) == 0 && (a->tensor != NULL) == (b->tensor != NULL)
           && (!a->tensor || a->tensor->ndim == b->tensor->ndim);
}

static bool note_change(sg_gate *gt, const char *fmt, const char *a, size_t x, size_t y)
{
    char line[400];

    if (sg__grow((void **)&gt->changes, &gt->capchanges, gt->nchanges + 1, sizeof *gt->changes) != 0)
        return false;
    snprintf(line, sizeof line, fmt, a, x, y);
    if (!(gt->changes[gt->nchanges] = dupstr(line)))
        return false;
    gt->nchanges++;
    return true;
}

/* Compare the signatures: every user input of OLD in NEW by path, same kind and rank, and no new one. */
static int signature(sg_gate *gt, const sg_graph *o, const sg_graph *n, sg_error *err)
{
    size_t i, k;

    for (i = 0; i < sg_graph_input_count(o); i++) {
        const sg_graph_input *a = sg_graph_input_at(o, i);
        const sg_graph_input *hit = NULL;
        if (a->kind != SG_GRAPH_IN_USER)
            continue;
        for (k = 0; k < sg_graph_input_count(n) && !hit; k++) {
            const sg_graph_input *b = sg_graph_input_at(n, k);
            if (b->kind == SG_GRAPH_IN_USER && b->path && a->path && strcmp(a->path, b->path) == 0)
                hit = b;
        }
        if (!hit) {
            if (!note_change(gt, "input %s removed (or renamed)", a->path ? a->path : "?", 0, 0))
                goto oom;
        } else if (!same_input(a, hit)) {
            if (!note_change(gt, "input %s: rank %zu -> %zu", a->path, a->tensor ? a->tensor->ndim : 0,
                             hit->tensor ? hit->tensor->ndim : 0))
                goto oom;
        }
    }
    for (k = 0; k < sg_graph_input_count(n); k++) {
        const sg_graph_input *b = sg_graph_input_at(n, k);
        bool seen = false;
        if (b->kind != SG_GRAPH_IN_USER)
            continue;
        for (i = 0; i < sg_graph_input_count(o) && !seen; i++) {
            const sg_graph_input *a = sg_graph_input_at(o, i);
            seen = a->kind == SG_GRAPH_IN_USER && a->path && b->path && strcmp(a->path, b->path) == 0;
        }
        if (!seen && !note_change(gt, "input %s added", b->path ? b->path : "?", 0, 0))
            goto oom;
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

/* The variables: one per dim of OLD's user tensor inputs, and the per-dim sizes of both. */
static int make_vars(gate_ctx *c, sg_gate *gt, const sg_graph *o, const sg_graph *n)
{
    size_t i, d, total = 0, k;
    char name[1200];

    for (i = 0; i < sg_graph_input_count(o); i++) {
        const sg_graph_input *in = sg_graph_input_at(o, i);
        if (in->kind == SG_GRAPH_IN_USER && in->tensor && in->path)
            total += in->tensor->ndim;
    }
    if (total > MAX_VARS)
        return sg_error_set(c->err, SG_ELIMIT, "OLD has %zu input dims (at most %d)", total, MAX_VARS);
    c->vpath = sg__calloc(total + 1, sizeof *c->vpath);
    c->vdim = sg__calloc(total + 1, sizeof *c->vdim);
    c->var = sg__calloc(total + 1, sizeof *c->var);
    c->dynamic = sg__calloc(total + 1, sizeof *c->dynamic);
    gt->dims = sg__calloc(total + 1, sizeof *gt->dims);
    if (!c->vpath || !c->vdim || !c->var || !c->dynamic || !gt->dims)
        return sg_error_set(c->err, SG_ENOMEM, "out of memory");
    for (i = 0; i < sg_graph_input_count(o); i++) {
        const sg_graph_input *in = sg_graph_input_at(o, i), *nin = NULL;
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor || !in->path)
            continue;
        for (k = 0; k < sg_graph_input_count(n) && !nin; k++) {
            const sg_graph_input *b = sg_graph_input_at(n, k);
            if (b->kind == SG_GRAPH_IN_USER && b->path && b->tensor && strcmp(b->path, in->path) == 0)
                nin = b;
        }
        for (d = 0; d < in->tensor->ndim; d++) {
            sg_gate_dim *gd = &gt->dims[gt->ndims++];
            snprintf(name, sizeof name, "L%s.size()[%zu]", in->path, d);
            c->vpath[c->nvars] = in->path;
            c->vdim[c->nvars] = d;
            c->dynamic[c->nvars] = sg_expr_kind(in->tensor->sizes[d]) != SG_INT;
            if (!(c->var[c->nvars++] = sg_expr_symbol(c->pool, name, strlen(name))))
                return sg_error_set(c->err, SG_ENOMEM, "out of memory");
            gd->path = dupstr(in->path);
            gd->dim = d;
            gd->old_size = text_of(in->tensor->sizes[d]);
            gd->new_size = nin && d < nin->tensor->ndim ? text_of(nin->tensor->sizes[d]) : NULL;
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
    pol->g = so->g;
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
        if (!add_cond(pol, sg_expr_2(c->pool, SG_GE, v, sg_expr_int(c->pool, lo)), "policy", "policy require %s min",
                      it->string, NULL)
            || (!cJSON_IsNull(it->child->next)
                && !add_cond(pol, sg_expr_2(c->pool, SG_LE, v, sg_expr_int(c->pool, hi)), "policy",
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
        if (!add_cond(pol, e, "relation", "policy relation %s", t, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
    for (i = 0; i < so->n; i++) {
        const cond *cd = &so->conds[i];
        bool keep = strcmp(cd->kind, "shape") == 0 || strcmp(cd->kind, "static size") == 0;
        if (strcmp(cd->kind, "range_constraints") == 0) {
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
        if (keep && !add_cond(pol, cd->e, cd->kind, "%s%s", cd->source, NULL)) {
            rc = sg_error_set(c->err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
    }
cleanup:
    cJSON_Delete(root);
    sg_free(ranged);
    return rc;
}

int sg_gate_run(sg_gate **out, const sg_graph *old_prog, const sg_graph *new_prog, const char *old_name,
                const char *new_name, const char *policy, const sg_check_options *opts, const sg_runtime *rt,
                sg_error *err)
{
    side sp;
    sg_gate *gt = NULL;
    gate_ctx c;
    side so, sn;
    int rc;

    *out = NULL;
    memset(&c, 0, sizeof c);
    memset(&so, 0, sizeof so);
    memset(&sn, 0, sizeof sn);
    memset(&sp, 0, sizeof sp);
    c.err = err;
    so.g = old_prog;
    sn.g = new_prog;
    if (!(gt = sg__calloc(1, sizeof *gt)) || (old_name && !(gt->old_name = dupstr(old_name)))
        || (new_name && !(gt->new_name = dupstr(new_name)))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = sg_pool_new(&c.pool, err)) != 0 || (rc = signature(gt, old_prog, new_prog, err)) != 0
        || (rc = make_vars(&c, gt, old_prog, new_prog)) != 0 || (rc = build_side(&c, &so)) != 0)
        goto cleanup;
    if (!gt->signature_changed && (rc = build_side(&c, &sn)) != 0)
        goto cleanup;
    if (so.unread[0] || sn.unread[0]) {
        gt->verdict = SG_GATE_UNKNOWN;
        snprintf(gt->reason, sizeof gt->reason, "%s: %.180s", so.unread[0] ? "OLD" : "NEW",
                 so.unread[0] ? so.unread : sn.unread);
        if (!gt->signature_changed)
            goto done;
    }
    if (gt->signature_changed) {
        /* any shape OLD accepts: NEW cannot be called as OLD was */
        if ((rc = direction(&c, &gt->regression, &so, NULL, opts, rt)) != 0)
            goto cleanup;
        if (gt->regression.found) {
            gt->regression.kind = dupstr("signature");
            gt->regression.source = dupstr(gt->changes[0]);
            if (!gt->regression.kind || !gt->regression.source) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
        }
        gt->verdict = SG_GATE_REGRESSION;
        goto done;
    }
    /* the widening against OLD as it is; the regression and the policy with the relations the
     * policy lets NEW require (a shape outside them is not one NEW must accept) */
    if ((rc = direction(&c, &gt->widening, &sn, &so, opts, rt)) != 0)
        goto cleanup;
    if (policy) {
        size_t i;
        gt->has_policy = true;
        if ((rc = policy_side(&c, &sp, &so, policy)) != 0)
            goto cleanup;
        for (i = 0; i < sp.n; i++)
            if (strcmp(sp.conds[i].kind, "relation") == 0
                && !add_cond(&so, sp.conds[i].e, "relation", "%s%s", sp.conds[i].source, NULL)) {
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
done:
    gt->regression.cond = gt->widening.cond = gt->policy.cond = NULL; /* they live in the pool freed below */
    *out = gt;
    gt = NULL;
    rc = 0;
cleanup:
    sg_gate_free(gt);
    sg_free(so.map);
    sg_free(so.conds);
    sg_free(sn.map);
    sg_free(sn.conds);
    sg_free(sp.conds);
    sg_free((void *)c.vpath);
    sg_free(c.vdim);
    sg_free((void *)c.var);
    sg_free(c.dynamic);
    sg_pool_free(c.pool);
    return rc;
}
