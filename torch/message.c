/*
 * message.c - torch's own "Constraints violated" text for a trace (message.h),
 * reproduced by re-running torch's reporting algorithm on the trace:
 *
 *   - ShapeEnv.produce_guards_verbose: track_symint over every input dim
 *     (specialised-to-a-constant and "inferred to be equal to" violations),
 *     the input-guards loop ("must always be equal" / "must always be
 *     related"), the shape guards in trace order (skipped when statically
 *     decided by the final ranges; deduplicated; a violation when a guard on
 *     one named-Dim symbol is not "trivial"), and the final per-symbol range
 *     check;
 *   - DimConstraints.add's "trivial" flag (rewrite_with_congruences with the
 *     hints) and the equality part of DimConstraints.solve, for the forced
 *     specialisations ("Specializations unexpectedly required").
 * Guards print as torch's Python guard printer does: the expression printer's
 * SG_SYNTAX_TORCH (expr/print.c).
 *
 * The wording follows the torch version recorded in the trace (2.6 and older:
 * "Not all values of ... are valid because ... was inferred to be a
 * constant"). docs/message.md describes the algorithm and its limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "torch/message.h"
#include "expr/expr_impl.h"
#include "expr/num.h"
#include "expr/interval.h"
#include "torch/validate.h"
#include "util/util.h"

/* ---- the rendered range ------------------------------------------------------------------------ */

/* torch's default value range of a size: [2, int_oo] (specialize_zero_one). */
#define DEFAULT_LO 2

static void render_range(sg_buf *b, const char *name, const char *source, sg_bound lo, sg_bound hi)
{
    char x[SG_INT_STRLEN], y[SG_INT_STRLEN];
    bool has_lo = lo.inf > 0 || (lo.inf == 0 && lo.v > DEFAULT_LO);
    bool has_hi = hi.inf < 0 || hi.inf == 0;
    sg_buf_printf(b, "%s = %s in the specified range", name, source);
    if (has_lo && has_hi)
        sg_buf_printf(b, " %s <= %s <= %s", lo.inf ? "int_oo" : sg_int_format(x, lo.v), name,
                      hi.inf ? "-int_oo" : sg_int_format(y, hi.v));
    else if (has_hi)
        sg_buf_printf(b, " %s <= %s", name, hi.inf ? "-int_oo" : sg_int_format(y, hi.v));
    else if (has_lo)
        sg_buf_printf(b, " %s <= %s", lo.inf ? "int_oo" : sg_int_format(x, lo.v), name);
}

int sg_torch_render_range(char **out, const char *name, const char *source, sg_bound lo, sg_bound hi,
                          sg_error *err)
{
    sg_buf b;
    sg_buf_init(&b, SG_EXPR_MAX_PRINT);
    render_range(&b, name, source, lo, hi);
    *out = b.failed ? NULL : sg_buf_take(&b);
    sg_buf_dispose(&b);
    return *out ? 0 : sg_error_set(err, SG_ENOMEM, "out of memory rendering a range");
}

/* ---- the model of torch's state ------------------------------------------------------------------ */

/* What one input dim is to produce_guards. */
typedef struct mdim {
    const sg_input_dim *d;
    const char *key;    /* the debug name under the source torch traced (sorting, as torch sorts) */
    const char *dname;  /* the debug name as the message shows it: Dim name, else source */
    const char *src;    /* the source as the message shows it */
    bool strict;        /* StrictMinMaxConstraint: a named or derived Dim */
    bool relaxed;       /* Dim.AUTO / Dim.DYNAMIC: in EqualityConstraint.relaxed_sources */
    bool unspec;        /* RelaxedUnspecConstraint: Dim.DYNAMIC */
    size_t parent;      /* union-find over source pairs (one Dim name) */
    size_t next_same;   /* the next dim whose value is the same bare symbol (from ctx.first), or SIZE_MAX */
    bool has_def;       /* a derived dim: _defs[find(self)] */
    size_t def_root;    /* the root: a dim index (a class), or SIZE_MAX for a phantom root */
    const char *def_phantom;
    sg_int def_a, def_b; /* definition A*root + B */
} mdim;

/* A canonical form of EqualityConstraint._rewrite: A*root + B. */
typedef struct canon {
    size_t root;          /* class representative, or SIZE_MAX */
    const char *phantom;  /* phantom root name when root == SIZE_MAX */
    sg_int a, b;
} canon;

typedef struct viol {
    const char *key;
    const char *dname;
    char *msg;
} viol;

typedef struct congr {
    uint32_t sym;
    char *key;
} congr;

typedef struct ctx {
    const sg_trace *t;
    sg_pool *pool;
    bool legacy;
    mdim *dims;
    size_t ndims;
    size_t nsyms;           /* symbols of the pool when the build started */
    size_t *first;          /* per symbol index: first input dim whose value it is, or SIZE_MAX */
    const sg_symbol_info **info; /* per symbol index, or NULL */
    const sg_expr **repl;   /* per symbol index: replacement, or NULL */
    sg_interval *box;       /* per symbol index: var_to_range */
    sg_interval *sbox;      /* per symbol index: var_to_range within the named Dims' specified ranges */
    sg_int *hints;          /* per symbol index */
    bool *has_hint;
    size_t *order;          /* symbols in symbol_to_source insertion order */
    size_t norder;
    viol *viols;
    size_t nviols, cviols;
    congr *congrs;
    size_t ncongrs, ccongrs;
    bool *has_eq;           /* per symbol index: an equality reached DimConstraints */
    sg_int *subst;          /* per symbol index: solve()'s substitution (valid when subst_set) */
    bool *subst_set;
    char **own_src;         /* per dim: a source name made here (torch 2.6 without a ShapeEnv), or NULL */
    const sg_expr **divisible; /* ShapeEnv.divisible: Mod(a, b) known to be 0 */
    size_t ndivisible;
    const sg_expr **multi;  /* multivariate expressions kept by DimConstraints.add */
    size_t nmulti, cmulti;
    int rc;                 /* first failure (SG_ENOMEM, SG_ELIMIT) */
    sg_error *err;
} ctx;

static void fail(ctx *c, int rc)
{
    if (!c->rc)
        c->rc = rc;
}

static bool parse_legacy(const char *v)
{
    long major = 0, minor = 0;
    char *end = NULL;
    if (!v || !*v)
        return false;
    major = strtol(v, &end, 10);
    if (!end || *end != '.')
        return false;
    minor = strtol(end + 1, NULL, 10);
    return major < 2 || (major == 2 && minor < 7);
}

/* The source a symbol prints as: its first input dim's source, else what torch recorded. */
static const char *sym_source(const sg_expr *sym, void *payload)
{
    ctx *c = payload;
    uint32_t i = sg_expr_symbol_index(sym);
    if (i < c->nsyms && c->first[i] != SIZE_MAX)
        return c->dims[c->first[i]].src;
    if (i < c->nsyms && c->info[i] && c->info[i]->nsources)
        return c->info[i]->sources[0];
    return NULL;
}

/* The symbol as sympy.Symbol(debug name): the Dim name of its first dim. */
static const char *sym_debug_name(const sg_expr *sym, void *payload)
{
    ctx *c = payload;
    uint32_t i = sg_expr_symbol_index(sym);
    if (i < c->nsyms && c->first[i] != SIZE_MAX)
        return c->dims[c->first[i]].dname;
    return NULL;
}

static char *print_torch(ctx *c, const sg_expr *e)
{
    char *s = NULL;
    int rc = sg_expr_print(&s, e, c->legacy ? SG_SYNTAX_TORCH_LEGACY : SG_SYNTAX_TORCH, sym_source, c, c->err);
    if (rc)
        fail(c, rc);
    return s;
}

static void add_viol(ctx *c, const mdim *m, sg_buf *b)
{
    if (b->failed) {
        fail(c, b->failed);
        sg_buf_dispose(b);
        return;
    }
    if (sg__grow((void **)&c->viols, &c->cviols, c->nviols + 1, sizeof *c->viols)) {
        fail(c, SG_ENOMEM);
        sg_buf_dispose(b);
        return;
    }
    c->viols[c->nviols].key = m->key;
    c->viols[c->nviols].dname = m->dname;
    c->viols[c->nviols].msg = sg_buf_take(b);
    if (!c->viols[c->nviols].msg) {
        fail(c, SG_ENOMEM);
        return;
    }
    c->nviols++;
}

/* _render_range_for_constraint_violation for dim `m` (its own constraint). */
static void render_constraint(sg_buf *b, const mdim *m)
{
    if (m->unspec)
        sg_buf_printf(b, "RelaxedUnspecConstraint(%s)", m->src);
    else
        render_range(b, m->dname, m->src, m->d->min, m->d->max);
}

static size_t uf_find(ctx *c, size_t i)
{
    while (c->dims[i].parent != i)
        i = c->dims[i].parent;
    return i;
}

static canon rewrite_src(ctx *c, size_t i)
{
    canon r;
    size_t f = uf_find(c, i);
    memset(&r, 0, sizeof r);
    if (c->dims[f].has_def) {
        r.root = c->dims[f].def_root;
        r.phantom = c->dims[f].def_phantom;
        r.a = c->dims[f].def_a;
        r.b = c->dims[f].def_b;
    } else {
        r.root = f;
        r.a = 1;
    }
    return r;
}

static bool canon_eq(canon x, canon y)
{
    if (x.a != y.a || x.b != y.b || x.root != y.root)
        return false;
    return x.root != SIZE_MAX || (x.phantom && y.phantom && strcmp(x.phantom, y.phantom) == 0);
}

/* `e` as A*sym + B with integer A, B; false when it is not of that form. */
static bool as_affine(ctx *c, const sg_expr *e, const sg_expr *sym, sg_int *a, sg_int *b)
{
    sg_int v0, v1;
    sg_value r;
    sg_int *vals = c->hints;
    uint32_t k = sg_expr_symbol_index(sym);
    sg_int saved;
    bool ok;
    int rc;
    if (e == sym) {
        *a = 1;
        *b = 0;
        return true;
    }
    if (e->kind != SG_ADD && e->kind != SG_MUL)
        return false;
    if (e->kind == SG_ADD && !(e->nargs == 2 && e->args[1]->kind == SG_INT &&
                               (e->args[0] == sym || (e->args[0]->kind == SG_MUL && e->args[0]->nargs == 2 &&
                                                      e->args[0]->args[0]->kind == SG_INT &&
                                                      e->args[0]->args[1] == sym))))
        return false;
    if (e->kind == SG_MUL && !(e->nargs == 2 && e->args[0]->kind == SG_INT && e->args[1] == sym))
        return false;
    if (k >= c->nsyms)
        return false;
    saved = vals[k];
    vals[k] = 0;
    rc = sg_expr_eval(&r, c->pool, e, vals, c->nsyms, NULL);
    ok = rc == 0 && r.kind == SG_VAL_INT;
    v0 = r.num;
    vals[k] = 1;
    if (ok) {
        rc = sg_expr_eval(&r, c->pool, e, vals, c->nsyms, NULL);
        ok = rc == 0 && r.kind == SG_VAL_INT;
    }
    v1 = r.num;
    vals[k] = saved;
    if (rc == SG_ENOMEM)
        fail(c, rc);
    if (!ok || !sg__sub(v1, v0, a))
        return false;
    *b = v0;
    return true;
}

/* ---- building the model ---------------------------------------------------------------------- */

/*
 * The ranges torch decides guards statically over (ShapeEnv._maybe_evaluate_static):
 * var_to_range, which torch made from the spec when it created the symbol, so
 * within every named Dim's specified range whose size the symbol is.
 * A recorded trace's var_to_range already is; a trace whose spec a fix edited
 * (narrowed) keeps the var_to_range of the spec it was traced with, and this
 * is what torch would have with the new one.
 */
static void within_specs(ctx *c)
{
    size_t i;
    memcpy(c->sbox, c->box, c->nsyms * sizeof *c->sbox);
    for (i = 0; i < c->ndims; i++) {
        const sg_input_dim *d = c->dims[i].d;
        sg_interval *b;
        uint32_t k;
        if (d->kind != SG_SPEC_DIM || !d->value || sg_expr_kind(d->value) != SG_SYM ||
            (k = sg_expr_symbol_index(d->value)) >= c->nsyms)
            continue;
        b = &c->sbox[k];
        if (!d->min.inf && d->min.v > DEFAULT_LO && (b->lo_inf || b->lo < d->min.v)) {
            b->lo = d->min.v;
            b->lo_inf = false;
        }
        if (d->max.inf == 0 && (b->hi_inf || b->hi > d->max.v)) {
            b->hi = d->max.v;
            b->hi_inf = false;
        }
    }
}

static int build_model_with(ctx *c, const sg_input_dim *in, size_t n, const sg_symbol_info *syms, size_t ns,
                            size_t *last, const sg_strmap *first);

static int build_model(ctx *c)
{
    size_t n = 0, ns, *last = NULL;
    const sg_input_dim *in = sg_trace_inputs(c->t, &n);
    const sg_symbol_info *syms = sg_trace_symbols(c->t, &ns);
    sg_strmap first = SG_STRMAP_INIT;
    int rc;

    c->nsyms = sg_pool_nsymbols(c->pool);
    c->ndims = n;
    last = sg__calloc(c->nsyms + 1, sizeof *last);
    rc = !last ? SG_ENOMEM : sg_spec__first_dims(&first, in, n);
    if (!rc)
        rc = build_model_with(c, in, n, syms, ns, last, &first);
    sg_free(last);
    sg_strmap_dispose(&first);
    return rc;
}

/* build_model's work, with its scratch: last[nsyms] (the last dim seen per symbol), first (each Dim
 * name's first use, sg_spec__first_dims). */
static int build_model_with(ctx *c, const sg_input_dim *in, size_t n, const sg_symbol_info *syms, size_t ns,
                            size_t *last, const sg_strmap *first)
{
    size_t i, j;

    if (!SG_CALLOC_ALL(SG_SLOT(c->dims, n ? n : 1), SG_SLOT(c->first, c->nsyms + 1), SG_SLOT(c->info, c->nsyms + 1),
                       SG_SLOT(c->repl, c->nsyms + 1), SG_SLOT(c->box, c->nsyms + 1), SG_SLOT(c->sbox, c->nsyms + 1),
                       SG_SLOT(c->hints, c->nsyms + 1), SG_SLOT(c->has_hint, c->nsyms + 1),
                       SG_SLOT(c->order, c->nsyms + 1), SG_SLOT(c->has_eq, c->nsyms + 1),
                       SG_SLOT(c->subst, c->nsyms + 1), SG_SLOT(c->subst_set, c->nsyms + 1)))
        return SG_ENOMEM;
    for (i = 0; i < c->nsyms; i++) {
        c->first[i] = SIZE_MAX;
        c->box[i].lo_inf = c->box[i].hi_inf = true;
    }
    for (i = 0; i < ns; i++) {
        uint32_t k = sg_expr_symbol_index(syms[i].sym);
        if (k >= c->nsyms)
            continue;
        c->info[k] = &syms[i];
        c->repl[k] = syms[i].replacement;
        c->box[k].lo_inf = syms[i].lo.inf != 0;
        c->box[k].lo = syms[i].lo.v;
        c->box[k].hi_inf = syms[i].hi.inf != 0;
        c->box[k].hi = syms[i].hi.v;
        c->hints[k] = syms[i].hint;
        c->has_hint[k] = syms[i].has_hint;
    }
    for (i = 0; i < n; i++) {
        mdim *m = &c->dims[i];
        const sg_input_dim *d = &in[i];
        m->d = d;
        m->src = d->source;
        m->parent = i;
        m->strict = d->kind == SG_SPEC_DIM || d->kind == SG_SPEC_DERIVED;
        m->relaxed = d->kind == SG_SPEC_AUTO || d->kind == SG_SPEC_DYNAMIC;
        m->unspec = d->kind == SG_SPEC_DYNAMIC;
        m->dname = m->strict && d->name ? d->name : m->src;
        m->key = m->strict && d->name ? d->name : (d->traced_source ? d->traced_source : d->source);
        m->next_same = SIZE_MAX;
        if (d->value && sg_expr_kind(d->value) == SG_SYM) {
            uint32_t k = sg_expr_symbol_index(d->value);
            if (k < c->nsyms && c->first[k] == SIZE_MAX) {
                c->first[k] = i;
                c->order[c->norder++] = k;
            } else if (k < c->nsyms) {
                c->dims[last[k]].next_same = i;
            }
            if (k < c->nsyms)
                last[k] = i;
        }
    }
    within_specs(c);
    /* source pairs: every later use of a Dim name joins the first */
    for (i = 0; i < n; i++) {
        size_t a, b;
        if (in[i].kind != SG_SPEC_DIM || !in[i].name || (j = sg_strmap_get(first, in[i].name)) >= i)
            continue;
        a = uf_find(c, i);
        b = uf_find(c, j);
        if (a != b)
            c->dims[a].parent = b;
    }
    /* derived equalities: _defs[find(src)] = fn(rewrite(root)) */
    for (i = 0; i < n; i++) {
        const sg_input_dim *d = &in[i];
        sg_int a = 0, b = 0;
        canon r;
        const sg_expr *root;
        if (d->kind != SG_SPEC_DERIVED || !d->derived || !d->root_name)
            continue;
        root = sg_expr_symbol(c->pool, d->root_name, strlen(d->root_name));
        if (!root)
            return SG_ENOMEM;
        if (sg_expr_symbol_index(root) >= c->nsyms || !as_affine(c, d->derived, root, &a, &b))
            continue;
        for (j = 0; j < n; j++)
            if (in[j].kind == SG_SPEC_DIM && in[j].name && strcmp(in[j].name, d->root_name) == 0)
                break;
        if (j < n) {
            r = rewrite_src(c, j);
        } else {
            memset(&r, 0, sizeof r);
            r.root = SIZE_MAX;
            r.phantom = d->root_name;
            r.a = 1;
        }
        {
            mdim *f = &c->dims[uf_find(c, i)];
            f->has_def = true;
            f->def_root = r.root;
            f->def_phantom = r.phantom;
            if (!sg__mul(a, r.a, &f->def_a) || !sg__mul(a, r.b, &f->def_b) || !sg__add(f->def_b, b, &f->def_b))
                f->has_def = false;
        }
    }
    return 0;
}

/*
 * torch 2.6's non-strict export names an input by its place in (args, kwargs):
 * L['args'][0][i] for the i-th positional argument, L['args'][1]['k'] for a
 * keyword one. The trace has those names only when torch traced; without a
 * ShapeEnv they are made here from the dim's pytree path.
 */
static int legacy_sources(ctx *c)
{
    const char *ij = sg_trace_inputs_json(c->t);
    cJSON *in = ij ? cJSON_ParseWithLengthOpts(ij, strlen(ij), NULL, 0) : NULL; /* no global error state */
    const cJSON *names = in ? cJSON_GetObjectItemCaseSensitive(in, "arg_names") : NULL;
    const cJSON *kwargs = in ? cJSON_GetObjectItemCaseSensitive(in, "kwargs") : NULL;
    size_t i;
    int rc = 0;
    if (!in)
        return ij ? SG_ENOMEM : 0;
    if (!(c->own_src = sg__calloc(c->ndims ? c->ndims : 1, sizeof *c->own_src))) {
        rc = SG_ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < c->ndims; i++) {
        const char *path = c->dims[i].d->path, *end;
        const cJSON *it;
        char name[256], buf[1024];
        int pos = 0;
        bool found = false;
        if (!path || strncmp(path, "['", 2) != 0 || !(end = strstr(path + 2, "']")) ||
            (size_t)(end - path - 2) >= sizeof name)
            continue;
        memcpy(name, path + 2, (size_t)(end - path - 2));
        name[end - path - 2] = '\0';
        cJSON_ArrayForEach(it, names) {
            if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0) {
                found = true;
                break;
            }
            pos++;
        }
        if (found)
            snprintf(buf, sizeof buf, "L['args'][0][%d]%s.size()[%d]", pos, end + 2, c->dims[i].d->dim);
        else if (cJSON_GetObjectItemCaseSensitive(kwargs, name))
            snprintf(buf, sizeof buf, "L['args'][1]['%s']%s.size()[%d]", name, end + 2, c->dims[i].d->dim);
        else
            continue;
        if (!(c->own_src[i] = sg__strndup(buf, strlen(buf)))) {
            rc = SG_ENOMEM;
            goto cleanup;
        }
        if (c->dims[i].dname == c->dims[i].src)
            c->dims[i].dname = c->own_src[i];
        c->dims[i].src = c->own_src[i];
    }
cleanup:
    cJSON_Delete(in);
    return rc;
}

/* ---- simplify: torch's ShapeEnv.replace ------------------------------------------------------- */

/* One step of a rewrite that recurses into arguments (`env`: its parameters). */
typedef const sg_expr *(*arg_rewrite)(ctx *c, const sg_expr *e, const void *env, int depth);

/* `e` with every argument rewritten by `f` at depth + 1: `e` itself when no argument changed,
 * NULL when `f` or the constructor fails. */
static const sg_expr *rewrite_args(ctx *c, const sg_expr *e, arg_rewrite f, const void *env, int depth)
{
    const sg_expr *small[8], **args = small, *r;
    size_t i;
    bool changed = false;
    if (e->nargs > 8 && !(args = sg__calloc(e->nargs, sizeof *args)))
        return NULL;
    for (i = 0; i < e->nargs; i++) {
        if (!(args[i] = f(c, e->args[i], env, depth + 1))) {
            r = NULL;
            goto cleanup;
        }
        changed |= args[i] != e->args[i];
    }
    r = changed ? sg_expr_apply(c->pool, (sg_kind)e->kind, args, e->nargs) : e;
cleanup:
    if (args != small)
        sg_free(args);
    return r;
}

typedef struct subst_env {
    const sg_int *vals;
    const bool *set;
} subst_env;

static const sg_expr *subst_rec(ctx *c, const sg_expr *e, const sg_int *vals, const bool *set, int depth);

static const sg_expr *subst_arg(ctx *c, const sg_expr *e, const void *env, int depth)
{
    const subst_env *s = env;
    return subst_rec(c, e, s->vals, s->set, depth);
}

/* ---- torch's FloorDiv.eval and Mod.eval on a rebuilt division --------------------------------- */

/* The terms of `e` (Add.make_args) and the factors of a term (Mul.make_args). */
static const sg_expr *const *terms_of(const sg_expr *const *e, size_t *n)
{
    *n = (*e)->kind == SG_ADD ? (*e)->nargs : 1;
    return (*e)->kind == SG_ADD ? (*e)->args : e;
}

static const sg_expr *const *factors_of(const sg_expr *const *t, size_t *n)
{
    *n = (*t)->kind == SG_MUL ? (*t)->nargs : 1;
    return (*t)->kind == SG_MUL ? (*t)->args : t;
}

/* The integer coefficient of a term: its literal factor's absolute value, 1 without one, 0 on overflow. */
static sg_int term_coef(const sg_expr *t)
{
    size_t n, i;
    const sg_expr *const *f = factors_of(&t, &n);
    for (i = 0; i < n; i++)
        if (f[i]->kind == SG_INT)
            return f[i]->u.ival == SG_INT_MIN ? 0 : f[i]->u.ival < 0 ? -f[i]->u.ival : f[i]->u.ival;
    return 1;
}

static bool has_factor(const sg_expr *t, const sg_expr *x)
{
    size_t n, i;
    const sg_expr *const *f = factors_of(&t, &n);
    for (i = 0; i < n; i++)
        if (f[i] == x)
            return true;
    return false;
}

#define DIV_MAX_ARGS 16 /* terms of a sum, factors of a term: larger ones are left as they are */

/* Term `t` divided by the integer `g` and the factors `x` (each once), rebuilt. NULL on failure. */
static const sg_expr *term_div(ctx *c, const sg_expr *t, sg_int g, const sg_expr *const *x, size_t nx)
{
    const sg_expr *out[DIV_MAX_ARGS];
    bool used[DIV_MAX_ARGS] = {false};
    size_t n, i, j, no = 0;
    const sg_expr *const *f = factors_of(&t, &n);

    if (n > DIV_MAX_ARGS)
        return NULL;
    for (i = 0; i < n; i++) {
        bool drop = false;
        for (j = 0; j < nx && !drop; j++)
            if (!used[j] && x[j] == f[i])
                used[j] = drop = true;
        if (drop)
            continue;
        if (f[i]->kind == SG_INT && g != 1) {
            if (!(out[no++] = sg_expr_int(c->pool, f[i]->u.ival / g)))
                return NULL;
            g = 1;
        } else {
            out[no++] = f[i];
        }
    }
    if (g != 1) /* no literal factor: a coefficient of 1 is divisible by g = 1 only */
        return NULL;
    return no == 0 ? sg_expr_int(c->pool, 1) : no == 1 ? out[0] : sg_expr_apply(c->pool, SG_MUL, out, no);
}

/* The sum `e` divided by `g` and the factors `x`; NULL on failure. */
static const sg_expr *sum_div(ctx *c, const sg_expr *e, sg_int g, const sg_expr *const *x, size_t nx)
{
    const sg_expr *out[DIV_MAX_ARGS];
    size_t n, i;
    const sg_expr *const *t = terms_of(&e, &n);

    if (n > DIV_MAX_ARGS)
        return NULL;
    for (i = 0; i < n; i++)
        if (!(out[i] = term_div(c, t[i], g, x, nx)))
            return NULL;
    return n == 1 ? out[0] : sg_expr_apply(c->pool, SG_ADD, out, n);
}

/*
 * A FloorDiv or Mod that a replacement rebuilt, simplified as torch's own
 * classes do when sympy rebuilds them (torch/utils/_sympy/functions.py):
 * FloorDiv(p, q) by simple_floordiv_gcd (the gcd of the terms' integer
 * coefficients, times each factor of q found syntactically in every term of
 * p: `(2*s0)//s0` is 2), and Mod(p, q) is 0 when p/q is a polynomial with
 * integer coefficients (`Mod(2*s0, s0)`). These are torch's rewrites, not
 * Python's: they hold where q is not 0, and torch makes them unconditionally.
 * `e` itself when nothing applies or a step fails.
 */
static const sg_expr *torch_div(ctx *c, const sg_expr *e)
{
    const sg_expr *p, *q, *x[DIV_MAX_ARGS], *const *qf, *const *pt, *r;
    size_t nq, np, nx = 0, i, j;
    sg_int g = 0;
    bool mod;

    if (e->kind != SG_FLOORDIV && e->kind != SG_MOD && e->kind != SG_PYMOD)
        return e;
    mod = e->kind != SG_FLOORDIV;
    p = e->args[0];
    q = e->args[1];
    if (sg_expr_sort(p) != SG_SORT_INT || sg_expr_sort(q) != SG_SORT_INT)
        return e;
    pt = terms_of(&p, &np);
    for (i = 0; i < np; i++)
        g = sg__gcd(g, term_coef(pt[i]));
    if (mod) { /* p / q an integer polynomial: q one term whose coefficient and factors every term of p has */
        size_t nt;
        sg_int qc = term_coef(q);
        terms_of(&q, &nt);
        if (nt != 1 || qc == 0 || g % qc != 0 || q->kind == SG_INT)
            return e;
        qf = factors_of(&q, &nq);
        for (i = 0; i < np; i++) {
            if (term_coef(pt[i]) % qc != 0)
                return e;
            for (j = 0; j < nq; j++)
                if (qf[j]->kind != SG_INT && !has_factor(pt[i], qf[j]))
                    return e;
        }
        r = sg_expr_int(c->pool, 0);
        return r ? r : e;
    }
    {
        size_t nt;
        const sg_expr *const *qt = terms_of(&q, &nt);
        for (i = 0; i < nt; i++)
            g = sg__gcd(g, term_coef(qt[i]));
    }
    if (g == 0)
        return e;
    qf = factors_of(&q, &nq);
    if (q->kind != SG_ADD)
        for (j = 0; j < nq && nx < DIV_MAX_ARGS; j++) {
            bool all = qf[j]->kind != SG_INT;
            for (i = 0; i < np && all; i++)
                all = has_factor(pt[i], qf[j]);
            if (all)
                x[nx++] = qf[j];
        }
    if (g == 1 && nx == 0)
        return e;
    {
        const sg_expr *a = sum_div(c, p, g, x, nx), *b = sum_div(c, q, g, x, nx);
        if (!a || !b || !(r = sg_expr_2(c->pool, SG_FLOORDIV, a, b))) {
            sg_pool_clear_error(c->pool);
            return e;
        }
    }
    return r;
}

static const sg_expr *subst_rec(ctx *c, const sg_expr *e, const sg_int *vals, const bool *set, int depth)
{
    subst_env env;
    const sg_expr *r;
    if (depth > SG_EXPR_MAX_DEPTH)
        return NULL;
    if (!e->has_sym)
        return e;
    if (e->kind == SG_SYM) {
        uint32_t k = e->sym_index;
        if (k >= c->nsyms)
            return e;
        if (set) /* a substitution by value */
            return set[k] ? sg_expr_int(c->pool, vals[k]) : e;
        if (c->repl[k] && c->repl[k] != e)
            return subst_rec(c, c->repl[k], vals, set, depth + 1);
        return e;
    }
    env.vals = vals;
    env.set = set;
    r = rewrite_args(c, e, subst_arg, &env, depth);
    return r && r != e ? torch_div(c, r) : r; /* sympy re-evaluates what it rebuilds */
}

/* A constructor failed: out of memory or over a limit fails the build; a value error (a
 * constant division by zero after a substitution) only drops the expression. */
static void pool_failure(ctx *c)
{
    const sg_error *pe = sg_pool_error(c->pool);
    int code = pe && pe->code ? pe->code : SG_ENOMEM;
    if (code == SG_ENOMEM || code == SG_ELIMIT)
        fail(c, code);
}

static bool is_divisible(ctx *c, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *m;
    size_t i;
    if (!c->ndivisible)
        return false;
    if (!(m = sg_expr_2(c->pool, SG_MOD, a, b))) {
        pool_failure(c);
        return false;
    }
    for (i = 0; i < c->ndivisible; i++)
        if (c->divisible[i] == m)
            return true;
    return false;
}

/* xreplace of every FloorDiv(a, b) whose Mod(a, b) is divisible by CleanDiv(a, b) (outermost first). */
static const sg_expr *clean_divs(ctx *c, const sg_expr *e, int depth);

static const sg_expr *clean_arg(ctx *c, const sg_expr *e, const void *env, int depth) { return clean_divs(c, e, depth); }

static const sg_expr *clean_divs(ctx *c, const sg_expr *e, int depth)
{
    if (depth > SG_EXPR_MAX_DEPTH)
        return NULL;
    if (e->kind == SG_FLOORDIV && is_divisible(c, e->args[0], e->args[1]))
        return sg_expr_2(c->pool, SG_CLEANDIV, e->args[0], e->args[1]);
    if (!e->nargs)
        return e;
    return rewrite_args(c, e, clean_arg, NULL, depth);
}

static bool has_kind(const sg_expr *e, sg_kind k, int depth)
{
    size_t i;
    if (e->kind == k)
        return true;
    for (i = 0; i < e->nargs && depth < SG_EXPR_MAX_DEPTH; i++)
        if (has_kind(e->args[i], k, depth + 1))
            return true;
    return false;
}

/* ShapeEnv.simplify as far as it matters here: the replacements, then a FloorDiv whose
 * division is known exact becomes a CleanDiv (kept when that brings no new fraction).
 * NULL on failure. */
static const sg_expr *simplify(ctx *c, const sg_expr *e)
{
    const sg_expr *r = subst_rec(c, e, NULL, NULL, 0), *cd;
    if (r && c->ndivisible && has_kind(r, SG_FLOORDIV, 0)) {
        cd = clean_divs(c, r, 0);
        if (!cd)
            r = NULL;
        else if (!has_kind(cd, SG_RAT, 0) || has_kind(r, SG_RAT, 0))
            r = cd;
    }
    if (!r)
        pool_failure(c);
    sg_pool_clear_error(c->pool);
    return r;
}

/* ShapeEnv.divisible: every Mod(a, b) that a guard or runtime assert says is 0. */
static int collect_divisible(ctx *c)
{
    size_t n = 0, i, k;
    const sg_guard *g = sg_trace_guards(c->t, &n);
    c->divisible = sg__calloc(n + 1, sizeof *c->divisible);
    if (!c->divisible)
        return SG_ENOMEM;
    for (i = 0; i < n; i++) {
        const sg_expr *e = g[i].expr, *m = NULL;
        if (sg_expr_kind(e) != SG_EQ)
            continue;
        for (k = 0; k < 2; k++)
            if (sg_expr_kind(e->args[k]) == SG_MOD && e->args[1 - k]->kind == SG_INT && e->args[1 - k]->u.ival == 0)
                m = e->args[k];
        if (m && !(m = subst_rec(c, m, NULL, NULL, 0)))
            pool_failure(c);
        else if (m && m->kind == SG_MOD)
            c->divisible[c->ndivisible++] = m;
        sg_pool_clear_error(c->pool);
    }
    return 0;
}

/* ---- DimConstraints.add ---------------------------------------------------------------------- */

/* A rewritten value: a*s + c over the one symbol, or opaque (ok false). The rationals are the
 * expression language's (expr/num.h). */
typedef sg_rat rat;

typedef struct lin {
    bool ok;
    rat a, c;
} lin;

static sg_int iabs(sg_int x) { return x < 0 ? -x : x; }

static bool rat_make(sg_int n, sg_int d, rat *out) { return d != 0 && sg_rat_make(out, n, d); }
static bool rat_add(rat x, rat y, rat *out) { return sg_rat_add(out, x, y); }
static bool rat_mul(rat x, rat y, rat *out) { return sg_rat_mul(out, x, y); }
static bool rat_div(rat x, rat y, rat *out) { return y.num != 0 && sg_rat_div(out, x, y); }
static int rat_sign(rat x) { return x.num > 0 ? 1 : x.num < 0 ? -1 : 0; }

static lin lin_const(sg_int v)
{
    lin l;
    l.ok = true;
    l.a.num = 0;
    l.a.den = 1;
    l.c.num = v;
    l.c.den = 1;
    return l;
}

static lin lin_opaque(void)
{
    lin l;
    memset(&l, 0, sizeof l);
    return l;
}

static bool lin_add(lin x, lin y, lin *out)
{
    out->ok = x.ok && y.ok && rat_add(x.a, y.a, &out->a) && rat_add(x.c, y.c, &out->c);
    return out->ok;
}

static bool lin_mul(lin x, lin y, lin *out)
{
    rat t1, t2;
    if (!x.ok || !y.ok || (x.a.num != 0 && y.a.num != 0)) {
        out->ok = false;
        return false;
    }
    /* (ax s + cx)(ay s + cy) with ax*ay = 0 */
    out->ok = rat_mul(x.a, y.c, &t1) && rat_mul(y.a, x.c, &t2) && rat_add(t1, t2, &out->a) &&
              rat_mul(x.c, y.c, &out->c);
    return out->ok;
}

/* The value of `e` at the hints, as an exact integer. */
static bool hint_value(ctx *c, const sg_expr *e, sg_int *out)
{
    sg_value v;
    int rc = sg_expr_eval(&v, c->pool, e, c->hints, c->nsyms, NULL);
    if (rc == SG_ENOMEM)
        fail(c, rc);
    if (rc != 0 || v.kind != SG_VAL_INT)
        return false;
    *out = v.num;
    return true;
}

/* Record the congruence `key` for symbol `sym`; `*added` when it is new. */
static void add_congruence(ctx *c, uint32_t sym, const char *key, bool *added)
{
    size_t i;
    for (i = 0; i < c->ncongrs; i++)
        if (c->congrs[i].sym == sym && strcmp(c->congrs[i].key, key) == 0)
            return;
    if (sg__grow((void **)&c->congrs, &c->ccongrs, c->ncongrs + 1, sizeof *c->congrs) ||
        !(c->congrs[c->ncongrs].key = sg__strndup(key, strlen(key)))) {
        fail(c, SG_ENOMEM);
        return;
    }
    c->congrs[c->ncongrs++].sym = sym;
    *added = true;
}

/*
 * The congruence (base - k) % divisor that rewrite_with_congruences records,
 * as a key that is equal for the forms sympy's Mod makes equal: for an
 * integer-linear base and a constant divisor q, Mod(a*s + b, q) with the
 * common factor G of a, b, q taken out and a, b reduced modulo q/G; otherwise
 * the original node and k. Nothing is recorded when the congruence is 0.
 */
static void congruence(ctx *c, uint32_t sym, const sg_expr *node, lin base, lin div, sg_int k, bool *added)
{
    char key[4 * SG_INT_STRLEN + 16], x[SG_INT_STRLEN], y[SG_INT_STRLEN], z[SG_INT_STRLEN], w[SG_INT_STRLEN];
    lin mk = lin_const(-k);
    if (lin_add(base, mk, &base) && div.ok && div.a.num == 0 && div.c.den == 1 && div.c.num != 0 && base.a.den == 1 &&
        base.c.den == 1) {
        sg_int q = div.c.num, a = base.a.num, b = base.c.num, g, ra, rb;
        if (q == SG_INT_MIN || a == SG_INT_MIN || b == SG_INT_MIN)
            goto opaque;
        g = sg__gcd(sg__gcd(iabs(a), iabs(b)), iabs(q));
        if (g == 0)
            goto opaque;
        if (!sg__pymod(a / g, q / g, &ra) || !sg__pymod(b / g, q / g, &rb))
            goto opaque;
        if (ra == 0 && rb == 0) /* sympy: Mod(8*s, 8) is 0 */
            return;
        snprintf(key, sizeof key, "L %s %s %s %s", sg_int_format(x, g), sg_int_format(y, ra), sg_int_format(z, rb),
                 sg_int_format(w, q / g));
        add_congruence(c, sym, key, added);
        return;
    }
opaque:
    /* sympy's Mod(p, q) is 0 when p/q is an integer: (b - k) = t * divisor for an integer t */
    if (base.ok && div.ok && (div.a.num != 0 || div.c.num != 0)) {
        rat t, u;
        bool prop;
        if (div.a.num != 0)
            prop = rat_div(base.a, div.a, &t) && rat_mul(t, div.c, &u) && u.num == base.c.num && u.den == base.c.den;
        else
            prop = base.a.num == 0 && rat_div(base.c, div.c, &t);
        if (prop && t.den == 1)
            return;
    }
    snprintf(key, sizeof key, "E %lu %s", (unsigned long)node->id, sg_int_format(x, k));
    add_congruence(c, sym, key, added);
}

/* rewrite_with_congruences(s, e): Mod(b, d) becomes its value k at the hints,
 * FloorDiv(b, d) becomes (b - k)/d, each recording the congruence (b - k) % d. */
static lin rewrite(ctx *c, const sg_expr *e, const sg_expr *sym, bool *added, int depth)
{
    lin r = lin_const(0), x;
    size_t i;
    if (depth > SG_EXPR_MAX_DEPTH)
        return lin_opaque();
    switch (e->kind) {
    case SG_INT: return lin_const(e->u.ival);
    case SG_RAT:
        r.ok = rat_make(e->u.rat.num, e->u.rat.den, &r.c);
        return r;
    case SG_SYM:
        if (e != sym)
            return lin_opaque();
        r.a.num = 1;
        return r;
    case SG_ADD:
        for (i = 0; i < e->nargs; i++) {
            x = rewrite(c, e->args[i], sym, added, depth + 1);
            if (r.ok)
                lin_add(r, x, &r);
        }
        return r;
    case SG_MUL:
        r = lin_const(1);
        for (i = 0; i < e->nargs; i++) {
            x = rewrite(c, e->args[i], sym, added, depth + 1);
            if (r.ok)
                lin_mul(r, x, &r);
        }
        return r;
    case SG_MOD: case SG_PYMOD: case SG_FLOORDIV: {
        lin base = rewrite(c, e->args[0], sym, added, depth + 1);
        lin div = rewrite(c, e->args[1], sym, added, depth + 1);
        sg_int bh, dh, k;
        if (!hint_value(c, e->args[0], &bh) || !hint_value(c, e->args[1], &dh) || dh == 0 || !sg__pymod(bh, dh, &k))
            return lin_opaque();
        congruence(c, sg_expr_symbol_index(sym), e, base, div, k, added);
        if (e->kind != SG_FLOORDIV)
            return lin_const(k);
        /* (b - k) / d, a rational function unless d is a constant */
        if (!div.ok || div.a.num != 0 || div.c.num == 0 || !lin_add(base, lin_const(-k), &base))
            return lin_opaque();
        r.ok = rat_make(div.c.den, div.c.num, &r.a); /* 1/d */
        x.ok = r.ok;
        x.a.num = 0;
        x.a.den = 1;
        x.c = r.a;
        lin_mul(base, x, &r);
        return r;
    }
    default:
        for (i = 0; i < e->nargs; i++)
            (void)rewrite(c, e->args[i], sym, added, depth + 1);
        return lin_opaque();
    }
}

/* Functions DimConstraints does not support (everything of torch's but Mod, PythonMod, FloorDiv). */
static bool has_unsupported(const sg_expr *e, int depth)
{
    size_t i;
    if (depth > SG_EXPR_MAX_DEPTH)
        return true;
    switch (e->kind) {
    case SG_CLEANDIV: case SG_CEILDIV: case SG_MODIDX: case SG_TRUEDIV: case SG_TRUNC: case SG_FLOOR: case SG_CEIL:
    case SG_POWNAT: case SG_WHERE: case SG_PIECEWISE: case SG_IDENTITY:
        return true;
    default: break;
    }
    for (i = 0; i < e->nargs; i++)
        if (has_unsupported(e->args[i], depth + 1))
            return true;
    return false;
}

static bool keep_multi(ctx *c, const sg_expr *e)
{
    size_t i;
    for (i = 0; i < c->nmulti; i++)
        if (c->multi[i] == e)
            return true;
    if (sg__grow((void **)&c->multi, &c->cmulti, c->nmulti + 1, sizeof *c->multi)) {
        fail(c, SG_ENOMEM);
        return false;
    }
    c->multi[c->nmulti++] = e;
    return true;
}

/*
 * DimConstraints.add(e): true when `e` is "trivial". A univariate relation
 * is rewritten with congruences; it is trivial when the rewritten relation is
 * identically true for the symbol's positive integer values and no new
 * congruence was recorded. Ne, Or, And, unsupported functions and
 * multivariate expressions are never trivial. An equality that survives the
 * rewriting marks its symbol as having equalities (solve() then specialises it).
 */
static bool dc_add(ctx *c, const sg_expr *e)
{
    const sg_expr **fs = NULL;
    size_t nfs = 0;
    bool added = false, holds = false;
    lin l, r, d;
    sg_kind k = (sg_kind)e->kind;
    if (k == SG_TRUE)
        return true;
    if (k == SG_NE || k == SG_OR || k == SG_AND || has_unsupported(e, 0))
        return false;
    if (sg_expr_symbols(&fs, &nfs, c->pool, e, NULL)) {
        fail(c, SG_ENOMEM);
        return false;
    }
    if (nfs != 1) {
        if (nfs > 1)
            keep_multi(c, e);
        sg_free(fs);
        return false;
    }
    if (k != SG_EQ && k != SG_LT && k != SG_LE && k != SG_GT && k != SG_GE) {
        (void)rewrite(c, e, fs[0], &added, 0);
        sg_free(fs);
        return false;
    }
    l = rewrite(c, e->args[0], fs[0], &added, 0);
    r = rewrite(c, e->args[1], fs[0], &added, 0);
    d.ok = false;
    if (l.ok && r.ok) {
        lin neg = r;
        neg.a.num = -neg.a.num;
        neg.c.num = -neg.c.num;
        lin_add(l, neg, &d);
    }
    if (d.ok) {
        rat at1; /* the value at s = 1, the least positive integer */
        bool ok1 = rat_add(d.a, d.c, &at1);
        int sa = rat_sign(d.a), s1 = ok1 ? rat_sign(at1) : 0;
        switch (k) {
        case SG_EQ: holds = d.a.num == 0 && d.c.num == 0; break;
        case SG_GE: holds = ok1 && sa >= 0 && s1 >= 0; break;
        case SG_GT: holds = ok1 && sa >= 0 && s1 > 0; break;
        case SG_LE: holds = ok1 && sa <= 0 && s1 <= 0; break;
        default: holds = ok1 && sa <= 0 && s1 < 0; break;
        }
    }
    /* an equality sympy does not decide: the symbol "has equalities" */
    if (k == SG_EQ && !(d.ok && d.a.num == 0)) {
        uint32_t si = sg_expr_symbol_index(fs[0]);
        if (si < c->nsyms)
            c->has_eq[si] = true;
    }
    sg_free(fs);
    return holds && !added;
}

/* ---- produce_guards ---------------------------------------------------------------------------- */

/* The single free symbol of `e`, or NULL (none, several, or out of memory). */
static const sg_expr *single_symbol(ctx *c, const sg_expr *e, size_t *count)
{
    const sg_expr **fs = NULL, *s = NULL;
    size_t n = 0;
    if (sg_expr_symbols(&fs, &n, c->pool, e, NULL)) {
        fail(c, SG_ENOMEM);
        *count = 0;
        return NULL;
    }
    *count = n;
    if (n == 1)
        s = fs[0];
    sg_free(fs);
    return s;
}

/* Does some symbol of `e` have an input dim's size among its sources? */
static bool has_dim_source(ctx *c, const sg_expr *e)
{
    const sg_expr **fs = NULL;
    size_t n = 0, i;
    bool any = false;
    if (sg_expr_symbols(&fs, &n, c->pool, e, NULL)) {
        fail(c, SG_ENOMEM);
        return false;
    }
    for (i = 0; i < n; i++) {
        uint32_t k = sg_expr_symbol_index(fs[i]);
        any |= k < c->nsyms && c->first[k] != SIZE_MAX;
    }
    sg_free(fs);
    return any;
}

/* Is `e` decided by the final ranges alone (ShapeEnv._maybe_evaluate_static with no axioms)? */
static bool statically_known(ctx *c, const sg_expr *e)
{
    const sg_expr *s = simplify(c, e);
    if (!s)
        return false;
    if (s->kind == SG_TRUE || s->kind == SG_FALSE)
        return true;
    if (sg_interval_holds(c->pool, s, c->sbox, c->nsyms) != SG_TRI_UNKNOWN)
        return true;
    { /* UNKNOWN is also the answer when out of memory: ask again for the status */
        sg_interval iv;
        if (sg_interval_of(&iv, c->pool, s, c->sbox, c->nsyms, NULL) == SG_ENOMEM)
            fail(c, SG_ENOMEM);
    }
    return false;
}

/* The strict constraints on symbol `k`: the dims whose value it is, one per distinct range. */
static size_t strict_dims(ctx *c, uint32_t k, size_t *out, size_t cap)
{
    size_t i, j, n = 0;
    /* only the dims whose value is symbol k: first[k], then their next_same chain (index order) */
    for (i = k < c->nsyms ? c->first[k] : SIZE_MAX; i != SIZE_MAX && n < cap; i = c->dims[i].next_same) {
        const mdim *m = &c->dims[i];
        bool dup = false;
        if (!m->strict || !m->d->value || sg_expr_kind(m->d->value) != SG_SYM ||
            sg_expr_symbol_index(m->d->value) != k)
            continue;
        for (j = 0; j < n; j++) {
            const sg_input_dim *o = c->dims[out[j]].d;
            dup |= o->min.inf == m->d->min.inf && o->max.inf == m->d->max.inf && o->min.v == m->d->min.v &&
                   o->max.v == m->d->max.v;
        }
        if (!dup)
            out[n++] = i;
    }
    return n;
}

static void track_symint(ctx *c)
{
    size_t i;
    char a[SG_INT_STRLEN];
    for (i = 0; i < c->ndims && !c->rc; i++) {
        mdim *m = &c->dims[i];
        const sg_expr *v = m->d->value;
        sg_buf b;
        if (!v || (!m->strict && !m->unspec))
            continue;
        if (sg_expr_kind(v) == SG_INT) {
            sg_int val = sg_expr_int_value(v);
            bool violated = m->strict ? !(!m->d->min.inf && !m->d->max.inf && m->d->min.v == val && m->d->max.v == val)
                                      : !(val == 0 || val == 1);
            if (!violated)
                continue;
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            if (c->legacy) {
                sg_buf_puts(&b, "Not all values of ");
                render_constraint(&b, m);
                sg_buf_printf(&b, " are valid because %s was inferred to be a constant (%s).", m->dname,
                              sg_int_format(a, val));
            } else {
                sg_buf_printf(&b,
                              "You marked %s as dynamic but your code specialized it to be a constant (%s). If "
                              "you're using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're "
                              "using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO.",
                              m->dname, sg_int_format(a, val));
            }
            add_viol(c, m, &b);
        } else if (sg_expr_kind(v) != SG_SYM && m->strict) {
            /* an expression: a violation only when one of its symbols has no range */
            const sg_expr **fs = NULL;
            size_t n = 0, j;
            bool unranged = false;
            char *s;
            if (sg_expr_symbols(&fs, &n, c->pool, v, NULL)) {
                fail(c, SG_ENOMEM);
                return;
            }
            for (j = 0; j < n; j++) {
                uint32_t k = sg_expr_symbol_index(fs[j]);
                unranged |= k >= c->nsyms || !c->info[k] || (c->box[k].lo_inf && c->box[k].hi_inf);
            }
            sg_free(fs);
            if (!unranged || !(s = print_torch(c, v)))
                continue;
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            sg_buf_puts(&b, "Not all values of ");
            render_constraint(&b, m);
            sg_buf_printf(&b, " are valid because %s was inferred to be equal to %s.", m->dname, s);
            sg_free(s);
            add_viol(c, m, &b);
        }
    }
}

static void input_guards(ctx *c)
{
    size_t i;
    for (i = 0; i < c->ndims && !c->rc; i++) {
        mdim *m = &c->dims[i];
        const sg_expr *v = m->d->value, *sym;
        size_t nfs = 0, f;
        uint32_t k;
        sg_buf b;
        if (!v || sg_expr_kind(v) == SG_INT)
            continue;
        if (sg_expr_kind(v) == SG_SYM) {
            k = sg_expr_symbol_index(v);
            if (k >= c->nsyms || (f = c->first[k]) == i || f == SIZE_MAX)
                continue;
            if (!c->dims[f].strict && !(c->legacy && c->dims[f].unspec))
                continue; /* not in symbol_to_constraints */
            {
                size_t r1 = uf_find(c, i), r2 = uf_find(c, f);
                if (c->dims[r1].relaxed || c->dims[r2].relaxed || r1 == r2 ||
                    canon_eq(rewrite_src(c, i), rewrite_src(c, f)))
                    continue;
            }
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            sg_buf_printf(&b, "The values of %s = %s and %s = %s must always be equal.", m->dname, m->src,
                          c->dims[f].dname, c->dims[f].src);
            add_viol(c, m, &b);
            continue;
        }
        sym = single_symbol(c, v, &nfs);
        if (!sym)
            continue;
        k = sg_expr_symbol_index(sym);
        if (k >= c->nsyms || (f = c->first[k]) == SIZE_MAX)
            continue;
        if (!c->dims[f].strict && !(c->legacy && c->dims[f].unspec))
            continue;
        {
            sg_int ea, eb;
            canon want = rewrite_src(c, f), have = rewrite_src(c, i);
            char *rel = NULL;
            if (as_affine(c, v, sym, &ea, &eb)) {
                canon got = want;
                if (sg__mul(ea, want.a, &got.a) && sg__mul(ea, want.b, &got.b) && sg__add(got.b, eb, &got.b) &&
                    canon_eq(got, have))
                    continue;
            }
            if (sg_expr_print(&rel, v, SG_SYNTAX_SYMPY, sym_debug_name, c, c->err)) {
                fail(c, SG_ENOMEM);
                return;
            }
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            sg_buf_printf(&b,
                          "The values of %s = %s must always be related to the values of %s = %s by %s = %s.",
                          m->dname, m->src, c->dims[f].dname, c->dims[f].src, m->dname, rel);
            sg_free(rel);
            add_viol(c, m, &b);
        }
    }
}

/* Add `e` to the open-addressing set tab[cap] (cap a power of two, never more than half full):
 * false when it was there already. */
static bool issued_add(const sg_expr **tab, size_t cap, const sg_expr *e)
{
    size_t i;
    for (i = ((size_t)sg_expr_id(e) * 2654435761u) & (cap - 1); tab[i]; i = (i + 1) & (cap - 1))
        if (tab[i] == e)
            return false;
    tab[i] = e;
    return true;
}

static void issue_guards(ctx *c)
{
    size_t n = 0, i, cap = 16;
    const sg_guard *g = sg_trace_guards(c->t, &n);
    const sg_expr **issued;
    while (cap < 2 * (n + 1))
        cap *= 2;
    if (!(issued = sg__calloc(cap, sizeof *issued))) {
        fail(c, SG_ENOMEM);
        return;
    }
    for (i = 0; i < n && !c->rc; i++) {
        const sg_expr *e, *sym;
        size_t nfs = 0, cons[64], ncons, q;
        bool trivial = false;
        if (g[i].origin != SG_GUARD_SHAPE || statically_known(c, g[i].expr))
            continue;
        if (!(e = simplify(c, g[i].expr)))
            continue;
        if (!issued_add(issued, cap, e)) /* issued already */
            continue;
        if (has_dim_source(c, e))
            trivial = dc_add(c, e);
        sym = single_symbol(c, e, &nfs);
        if (trivial || !sym)
            continue;
        ncons = strict_dims(c, sg_expr_symbol_index(sym), cons, sizeof cons / sizeof *cons);
        for (q = 0; q < ncons; q++) {
            const mdim *m = &c->dims[cons[q]], *src;
            size_t f = c->first[sg_expr_symbol_index(sym)];
            char *s = print_torch(c, e);
            sg_buf b;
            if (!s)
                break;
            src = &c->dims[f];
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            sg_buf_puts(&b, "Not all values of ");
            render_range(&b, src->dname, src->src, m->d->min, m->d->max);
            sg_buf_printf(&b, " satisfy the generated guard %s.", s);
            sg_free(s);
            add_viol(c, src, &b);
        }
    }
    sg_free(issued);
}

/* DimConstraints.add of the runtime asserts and the final ranges: only for the solver's state. */
static void feed_solver(ctx *c)
{
    size_t n = 0, i;
    const sg_guard *g = sg_trace_guards(c->t, &n);
    for (i = 0; i < n && !c->rc; i++) {
        const sg_expr *e;
        if (g[i].origin != SG_GUARD_RUNTIME_ASSERT || statically_known(c, g[i].expr))
            continue;
        if ((e = simplify(c, g[i].expr)))
            (void)dc_add(c, e);
    }
    /* the range additions (Ge(s, lower), Le(s, upper)) never add equalities or congruences */
}

static void range_checks(ctx *c)
{
    size_t o;
    char x[SG_INT_STRLEN], y[SG_INT_STRLEN];
    for (o = 0; o < c->norder && !c->rc; o++) {
        uint32_t k = (uint32_t)c->order[o];
        const sg_interval *r = &c->box[k];
        size_t cons[64], ncons, q;
        const mdim *src = &c->dims[c->first[k]];
        if (!c->info[k] || (r->lo_inf && r->hi_inf))
            continue;
        ncons = strict_dims(c, k, cons, sizeof cons / sizeof *cons);
        for (q = 0; q < ncons; q++) {
            const sg_input_dim *d = c->dims[cons[q]].d;
            /* (c.vr & [2, int_oo]).issubset(var_to_range) */
            sg_int lo = d->min.inf == 0 && d->min.v > DEFAULT_LO ? d->min.v : DEFAULT_LO;
            bool hi_inf = d->max.inf > 0;
            bool inside = (r->lo_inf || r->lo <= lo) && (r->hi_inf || (!hi_inf && d->max.v <= r->hi));
            sg_buf b;
            if (inside)
                continue;
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            sg_buf_puts(&b, "Not all values of ");
            render_range(&b, src->dname, src->src, d->min, d->max);
            sg_buf_puts(&b, " satisfy the generated guard ");
            /* torch prints And(Le(lower, s), Le(s, upper)) whole: an unbounded upper is int_oo,
             * which sympy leaves unevaluated ("8 <= x and x <= IntInfinity()") */
            if (!r->lo_inf)
                sg_buf_printf(&b, "%s <= %s and %s <= %s", sg_int_format(x, r->lo), src->src, src->src,
                              r->hi_inf ? "IntInfinity()" : sg_int_format(y, r->hi));
            else
                sg_buf_printf(&b, "%s <= %s", src->src, sg_int_format(y, r->hi));
            add_viol(c, src, &b);
        }
    }
}

/* DimConstraints.solve's equality loop: each symbol with an equality is solved (to its hint,
 * which satisfies every guard) and substituted into the multivariate expressions, which may
 * become univariate and add equalities in turn. */
static void solve_equalities(ctx *c)
{
    bool progress = true;
    while (progress && !c->rc) {
        size_t k, i, n;
        progress = false;
        for (k = 0; k < c->nsyms; k++) {
            if (!c->has_eq[k] || c->subst_set[k] || !c->has_hint[k])
                continue;
            c->subst[k] = c->hints[k];
            c->subst_set[k] = true;
            progress = true;
            n = c->nmulti;
            for (i = 0; i < n; i++) {
                const sg_expr *e = subst_rec(c, c->multi[i], c->subst, c->subst_set, 0);
                if (!e) {
                    pool_failure(c);
                    sg_pool_clear_error(c->pool);
                    continue;
                }
                if (e != c->multi[i])
                    (void)dc_add(c, e);
            }
        }
    }
}

/* ---- assembling the text ------------------------------------------------------------------------ */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

typedef struct named {
    const char *key, *shown;
    size_t at; /* the violation that named it */
} named;

/* By key, then the first violation first. */
static int cmp_named(const void *x, const void *y)
{
    const named *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

static int cmp_forced(const void *x, const void *y)
{
    return strcmp(((const sg_torch_forced *)x)->source, ((const sg_torch_forced *)y)->source);
}

static int assemble(ctx *c, sg_torch_text *m)
{
    size_t i, j, nn = 0, cap = 0;
    named *nm = NULL;
    sg_buf b;
    char v[SG_INT_STRLEN];
    int rc = 0;
    bool any_named = false;

    /* forced specializations: solved symbols of named Dims */
    for (i = 0; i < c->ndims; i++)
        any_named |= c->dims[i].strict && c->dims[i].d->name;
    if (any_named) {
        for (i = 0; i < c->norder; i++) {
            uint32_t k = (uint32_t)c->order[i];
            const mdim *f = &c->dims[c->first[k]];
            sg_torch_forced *fo;
            size_t cons[4];
            if (!c->subst_set[k] || strict_dims(c, k, cons, 4) == 0)
                continue;
            if (sg__grow((void **)&m->forced, &cap, m->nforced + 1, sizeof *m->forced))
                return SG_ENOMEM;
            fo = &m->forced[m->nforced];
            memset(fo, 0, sizeof *fo);
            /* the header names the root of a derived dim */
            fo->name = sg__strndup(f->d->kind == SG_SPEC_DERIVED && f->d->root_name ? f->d->root_name : f->dname,
                                   strlen(f->d->kind == SG_SPEC_DERIVED && f->d->root_name ? f->d->root_name
                                                                                           : f->dname));
            fo->source = sg__strndup(f->src, strlen(f->src));
            fo->value = c->subst[k];
            m->nforced++;
            if (!fo->name || !fo->source)
                return SG_ENOMEM;
        }
        if (m->nforced > 1)
            qsort(m->forced, m->nforced, sizeof *m->forced, cmp_forced);
    }
    if (!c->nviols && !m->nforced)
        return 0;

    if (c->nviols) {
        nm = sg__calloc(c->nviols, sizeof *nm);
        m->lines = sg__calloc(c->nviols, sizeof *m->lines);
        if (!nm || !m->lines) {
            sg_free(nm);
            return SG_ENOMEM;
        }
        for (i = 0; i < c->nviols; i++) {
            m->lines[i] = c->viols[i].msg;
            c->viols[i].msg = NULL;
            m->nlines++;
            nm[i].key = c->viols[i].key;
            nm[i].shown = c->viols[i].dname;
            nm[i].at = i;
        }
        /* each name once, as its first violation shows it, in key order (sorted, not searched: a
         * thousand violations compared pairwise cost eq1000 2% of its run, twice) */
        qsort(nm, c->nviols, sizeof *nm, cmp_named);
        for (i = 0; i < c->nviols; i++)
            if (nn == 0 || strcmp(nm[nn - 1].key, nm[i].key) != 0)
                nm[nn++] = nm[i];
        m->names = sg__calloc(nn, sizeof *m->names);
        if (!m->names) {
            sg_free(nm);
            return SG_ENOMEM;
        }
        for (i = 0; i < nn; i++) {
            if (!(m->names[i] = sg__strndup(nm[i].shown, strlen(nm[i].shown)))) {
                sg_free(nm);
                return SG_ENOMEM;
            }
            m->nnames++;
        }
        sg_free(nm);
    }

    sg_buf_init(&b, (size_t)64 << 20);
    if (m->nlines) {
        sg_buf_puts(&b, "Constraints violated (");
        for (i = 0; i < m->nnames; i++)
            sg_buf_printf(&b, "%s%s", i ? ", " : "", m->names[i]);
        sg_buf_puts(&b, ")! For more information, run with TORCH_LOGS=\"+dynamic\".\n");
        for (i = 0; i < m->nlines; i++)
            sg_buf_printf(&b, "%s  - %s", i ? "\n" : "", m->lines[i]);
        if (c->legacy && sg_trace_strict(c->t)) /* torch 2.6's strict export (dynamo) adds a newline */
            sg_buf_putc(&b, '\n');
    }
    if (m->nforced) {
        const char **roots = sg__calloc(m->nforced, sizeof *roots);
        size_t nr = 0;
        if (!roots) {
            sg_buf_dispose(&b);
            return SG_ENOMEM;
        }
        for (i = 0; i < m->nforced; i++) {
            for (j = 0; j < nr && strcmp(roots[j], m->forced[i].name) != 0; j++)
                ;
            if (j == nr)
                roots[nr++] = m->forced[i].name;
        }
        qsort(roots, nr, sizeof *roots, cmp_str);
        sg_buf_puts(&b, "Specializations unexpectedly required (");
        for (i = 0; i < nr; i++)
            sg_buf_printf(&b, "%s%s", i ? ", " : "", roots[i]);
        sg_buf_puts(&b, ")! For more information, run with TORCH_LOGS=\"+dynamic\".\n");
        sg_free(roots);
        for (i = 0; i < m->nforced; i++) {
            const char *dn = m->forced[i].name;
            for (j = 0; j < c->ndims; j++) /* "{debug name} = {source}": the dim's own debug name */
                if (strcmp(c->dims[j].src, m->forced[i].source) == 0) {
                    dn = c->dims[j].dname;
                    break;
                }
            sg_buf_printf(&b, "  - solving the guards generated for %s = %s resulted in a specialized value of %s.\n",
                          dn, m->forced[i].source, sg_int_format(v, m->forced[i].value));
        }
    }
    if (b.failed) {
        rc = b.failed;
        sg_buf_dispose(&b);
        return rc;
    }
    m->text = sg_buf_take(&b);
    return m->text ? 0 : SG_ENOMEM;
}

/* ---- entry points ------------------------------------------------------------------------------- */

/* Errors torch raises before or instead of its batch of violations (analysis/validate.c), and the one
 * constraint violation it reports without a recorded ShapeEnv: a named dim whose example size is
 * 0 or 1. Returns 1 when torch raises something else, 0 to go on, or a negative status. */
static int pre_checks(ctx *c, sg_error *err)
{
    sg_spec_issues issues, *r = &issues;
    size_t i;
    int rc = 0;
    memset(&issues, 0, sizeof issues);
    if ((rc = sg_spec_validate(c->t, c->pool, r, err)) != 0)
        goto cleanup;
    if (r->invalid) {
        rc = 1;
        goto cleanup;
    }
    if (!sg_trace_has_shape_env(c->t)) {
        /* torch specialised the named dims of size 0/1 when it created their symbols */
        for (i = 0; i < r->n; i++) {
            const sg_spec_issue *v = &r->v[i];
            mdim *m;
            sg_buf b;
            char a[SG_INT_STRLEN];
            if (!v->specialized || v->input >= c->ndims)
                continue;
            m = &c->dims[v->input];
            sg_buf_init(&b, SG_EXPR_MAX_PRINT);
            if (c->legacy) {
                sg_buf_puts(&b, "Not all values of ");
                render_constraint(&b, m);
                sg_buf_printf(&b, " are valid because %s was inferred to be a constant (%s).", m->dname,
                              sg_int_format(a, m->d->size));
                add_viol(c, m, &b);
            } else {
                sg_buf_puts(&b, v->message);
                add_viol(c, m, &b);
            }
        }
        rc = 1;
    }
cleanup:
    sg_spec_issues_dispose(r);
    return rc;
}

static void ctx_dispose(ctx *c)
{
    size_t i;
    for (i = 0; i < c->nviols; i++)
        sg_free(c->viols[i].msg);
    for (i = 0; i < c->ncongrs; i++)
        sg_free(c->congrs[i].key);
    SG_FREE_ALL(c->viols, c->congrs, c->dims, c->first, c->info, c->repl, c->box, c->sbox, c->hints, c->has_hint,
                c->order, c->has_eq, c->subst, c->subst_set, c->multi, c->divisible);
    for (i = 0; c->own_src && i < c->ndims; i++)
        sg_free(c->own_src[i]);
    sg_free(c->own_src);
}

int sg_torch_text_build(sg_torch_text **out, const sg_trace *t, sg_error *err)
{
    ctx c;
    sg_torch_text *m = NULL;
    int rc = 0;

    *out = NULL;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.err = err;
    /* the rewriting below builds expressions: in an overlay, never in the trace's frozen pool */
    if ((rc = sg_pool_overlay_new(&c.pool, sg_trace_pool(t), err)) != 0)
        return rc;
    c.legacy = parse_legacy(sg_trace_torch_version(t));
    if (!(m = sg__calloc(1, sizeof *m))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory building torch's message");
        goto cleanup;
    }
    m->legacy_wording = c.legacy;
    if (!sg_trace_has_flat_spec(t))
        goto done;
    if ((rc = build_model(&c)) != 0) {
        rc = sg_error_set(err, rc, "out of memory building torch's message");
        goto cleanup;
    }
    if (c.legacy && !sg_trace_strict(t) && !sg_trace_has_shape_env(t) && (rc = legacy_sources(&c)) != 0) {
        rc = sg_error_set(err, rc, "out of memory building torch's message");
        goto cleanup;
    }
    if ((rc = collect_divisible(&c)) != 0 || (rc = c.rc) != 0) {
        rc = sg_error_set(err, rc, "out of memory building torch's message");
        goto cleanup;
    }
    rc = pre_checks(&c, err);
    if (rc < 0)
        goto cleanup;
    if (rc == 0) {
        track_symint(&c);
        input_guards(&c);
        issue_guards(&c);
        feed_solver(&c);
        range_checks(&c);
        solve_equalities(&c);
    }
    rc = 0;
    if (c.rc) {
        rc = c.rc == SG_ELIMIT ? c.rc : sg_error_set(err, c.rc, "out of memory building torch's message");
        goto cleanup;
    }
    if ((rc = assemble(&c, m)) != 0) {
        rc = sg_error_set(err, rc, rc == SG_ELIMIT ? "torch's message is too long" : "out of memory building "
                                                                                     "torch's message");
        goto cleanup;
    }
done:
    *out = m;
    m = NULL;
cleanup:
    sg_torch_text_free(m);
    ctx_dispose(&c);
    sg_pool_free(c.pool);
    return rc;
}

void sg_torch_text_free(sg_torch_text *m)
{
    size_t i;
    if (!m)
        return;
    sg_free(m->text);
    sg__free_array(m->names, m->nnames);
    sg__free_array(m->lines, m->nlines);
    for (i = 0; i < m->nforced; i++) {
        sg_free(m->forced[i].name);
        sg_free(m->forced[i].source);
    }
    sg_free(m->forced);
    sg_free(m);
}

int sg_torch_message(char **out, const sg_trace *t, const char *const *lines, size_t n, sg_error *err)
{
    sg_torch_text *m = NULL;
    sg_buf b;
    size_t i;
    int rc;

    *out = NULL;
    if ((rc = sg_torch_text_build(&m, t, err)) != 0)
        return rc;
    if (!m->text) {
        sg_torch_text_free(m);
        return 0;
    }
    sg_buf_init(&b, (size_t)1 << 28);
    sg_buf_puts(&b, m->text);
    if (n) {
        sg_buf_puts(&b, "\nSuggested fixes:");
        for (i = 0; i < n; i++)
            sg_buf_printf(&b, "\n  %s", lines[i]);
    }
    sg_torch_text_free(m);
    return sg_buf_finish(&b, out, "torch's message", err);
}
