/*
 * kernels.c - the shape rules of the kernels of an exported graph (kernels.h).
 *
 * One pass over the top-level nodes in order. Each value's sizes at run time
 * are its tensor meta, except where a rule recomputed them (`fixed`): slice
 * and narrow, and the ops that carry such sizes on (elementwise ops, views,
 * cat, expand). A rule adds a condition only where its op raises: sizes that
 * do not broadcast, a view whose element count does not fit, a narrow past
 * the end, inner dims of mm / bmm / matmul / linear / addmm, the trailing dims
 * of layer_norm, non-cat dims of cat. Every rule is exact for what it reads
 * and reads only what it can: an index or size argument that could be
 * negative (other than a literal), a rank above MAX_RANK, or a meta that does
 * not parse leaves the node without a condition (never a guessed one), so a
 * condition that is false is a shape the kernel rejects.
 */
#include <stdio.h>
#include <string.h>

#include "graph/chain.h"
#include "graph/graph_int.h"
#include "graph/kernels.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_RANK 16
#define MAX_FIXED 65536 /* values whose run-time sizes were recomputed */
#define MAX_WHAT 4096   /* bytes of one condition's description: names (200 each) and sizes
                           (MAX_SHOWN each) are clipped, so it always fits */
#define MAX_SHOWN 160   /* bytes of one size shown in it */
#define MAX_TREE 2000   /* nodes of a value's recomputed sizes, as trees: past it they are unknown */
#define UNKNOWN ((size_t)-1) /* shape.ndim of a value whose sizes are unknown */

typedef struct shape {
    size_t ndim;
    const sg_expr *d[MAX_RANK];
} shape;

/* A value whose sizes at run time are not its meta's. */
typedef struct fixed {
    const char *name; /* borrowed from the JSON */
    shape s;
} fixed;

typedef struct kstate {
    sg_pool *pool;
    const sg_graph__scope *scope;
    fixed *fx;
    size_t nfx, capfx;
    sg_graph_kernel_check *out;
    size_t n, cap;
    const cJSON *node;  /* the node being read */
    const char *op;     /* its target after "torch.ops.aten." */
    const char *oname;  /* its first output's name, or "" */
    bool set;           /* set_sizes() accounted for the node's result */
    bool full;          /* MAX_FIXED values recomputed: no rule applies from there on */
    int rc;             /* SG_ENOMEM once out of memory */
} kstate;

/* A constructor's result; a failure other than out of memory is a value not read. */
static const sg_expr *ok(kstate *k, const sg_expr *e)
{
    bool nomem = false;

    e = sg_graph__made(k->pool, e, &nomem);
    if (nomem)
        k->rc = SG_ENOMEM;
    return e;
}

static const sg_expr *mk2(kstate *k, sg_kind kind, const sg_expr *a, const sg_expr *b)
{
    return a && b ? ok(k, sg_expr_2(k->pool, kind, a, b)) : NULL;
}

static const sg_expr *lit(kstate *k, sg_int v) { return ok(k, sg_expr_int(k->pool, v)); }

/* The argument named `name` of the node, or NULL. */
static const cJSON *arg_of(const kstate *k, const char *name)
{
    const cJSON *in;

    cJSON_ArrayForEach(in, sg__json_get(k->node, "inputs")) {
        const char *n = sg__json_str(sg__json_get(in, "name"));
        if (n && strcmp(n, name) == 0)
            return sg__json_get(in, "arg");
    }
    return NULL;
}

static const char *tensor_of(const cJSON *arg) { return sg__json_str(sg__json_get(sg__json_get(arg, "as_tensor"), "name")); }

/* An integer argument: its value, `dflt` when absent or None; false when of another kind. */
static bool int_arg(const kstate *k, const char *name, sg_int dflt, sg_int *v)
{
    const cJSON *a = arg_of(k, name);

    *v = dflt;
    if (!a || sg__json_get(a, "as_none"))
        return true;
    return sg__json_int(sg__json_get(a, "as_int"), v);
}

/* True when `e` is >= 0 by its form: literals >= 0 and size symbols (s<N>) under +, *, //, %, Max, Min. */
static bool nonneg(const sg_expr *e)
{
    size_t i, n = sg_expr_nargs(e);
    const char *name;

    switch (sg_expr_kind(e)) {
    case SG_INT:
        return sg_expr_int_value(e) >= 0;
    case SG_SYM:
        name = sg_expr_symbol_name(e);
        if (name[0] != 's' || !name[1])
            return false;
        for (i = 1; name[i]; i++)
            if (name[i] < '0' || name[i] > '9')
                return false;
        return true;
    case SG_ADD: case SG_MUL: case SG_FLOORDIV: case SG_CLEANDIV: case SG_CEILDIV: case SG_MOD: case SG_PYMOD:
    case SG_MAX: case SG_MIN:
        for (i = 0; i < n; i++)
            if (!nonneg(sg_expr_arg(e, i)))
                return false;
        return true;
    default:
        return false;
    }
}

/* The meta sizes of value `name` (tensor_values), false when absent, above MAX_RANK or unread. */
static bool meta_of(kstate *k, const char *name, shape *s)
{
    const cJSON *m = name ? sg__json_get(k->scope->tensor_values, name) : NULL, *sizes, *j;
    sg_error err = SG_ERROR_INIT;

    if (sg__json_get(m, "meta"))
        m = sg__json_get(m, "meta");
    sizes = sg__json_get(m, "sizes");
    if (!cJSON_IsArray(sizes) || cJSON_GetArraySize(sizes) > MAX_RANK)
        return false;
    s->ndim = 0;
    cJSON_ArrayForEach(j, sizes) {
        const char *text = sg__json_str(sg__json_get(sg__json_get(j, "as_expr"), "expr_str"));
        sg_int v;
        if (sg__json_int(sg__json_get(j, "as_int"), &v))
            s->d[s->ndim] = lit(k, v);
        else if (!text)
            return false;
        else if (sg_graph__read_expr(&s->d[s->ndim], k->pool, text, "size", &err) != 0) {
            if (err.code == SG_ENOMEM)
                k->rc = SG_ENOMEM;
            sg_pool_clear_error(k->pool);
            return false;
        }
        if (!s->d[s->ndim++])
            return false;
    }
    return true;
}

/* The index of value `name` among the recomputed ones (the latest record), or k->nfx. */
static size_t find_fixed(const kstate *k, const char *name)
{
    size_t i;

    for (i = k->nfx; name && i-- > 0;)
        if (strcmp(k->fx[i].name, name) == 0)
            return i;
    return k->nfx;
}

/* The sizes value `name` has at run time: recomputed by a rule, else its meta; false when
 * unknown (a recomputed size grew past MAX_TREE: the value's consumers get no rule). */
static bool sizes_of(kstate *k, const char *name, shape *s)
{
    size_t i = find_fixed(k, name);

    if (!name)
        return false;
    if (i == k->nfx)
        return meta_of(k, name, s);
    *s = k->fx[i].s;
    return s->ndim != UNKNOWN;
}

/* The number of nodes of `e` as a tree (shared arguments counted each time), up to `cap` + 1. */
static size_t tree_size(const sg_expr *e, size_t cap)
{
    size_t n = 1, i;

    for (i = 0; i < sg_expr_nargs(e) && n <= cap; i++)
        n += tree_size(sg_expr_arg(e, i), cap - n);
    return n;
}

static bool same_shape(const shape *a, const shape *b)
{
    size_t i;

    if (a->ndim != b->ndim)
        return false;
    for (i = 0; i < a->ndim; i++)
        if (a->d[i] != b->d[i])
            return false;
    return true;
}

/* Record sizes `s` for the node's result `k->oname` (NULL: unknown sizes). */
static void push_fixed(kstate *k, const shape *s)
{
    size_t i, budget = MAX_TREE;

    if (k->nfx >= MAX_FIXED) {
        k->full = true;
        return;
    }
    if (sg__grow((void **)&k->fx, &k->capfx, k->nfx + 1, sizeof *k->fx) != 0) {
        k->rc = SG_ENOMEM;
        return;
    }
    k->fx[k->nfx].name = k->oname;
    k->fx[k->nfx].s.ndim = UNKNOWN;
    if (s) {
        k->fx[k->nfx].s = *s;
        for (i = 0; i < s->ndim; i++) {
            size_t n = tree_size(s->d[i], budget);
            if (n > budget) {
                k->fx[k->nfx].s.ndim = UNKNOWN;
                break;
            }
            budget -= n;
        }
    }
    k->nfx++;
}

/* The node's result has sizes `s` at run time: remembered when they are not its meta's. */
static void set_sizes(kstate *k, const shape *s)
{
    shape meta;

    if (!k->oname[0])
        return;
    k->set = true;
    if (!(meta_of(k, k->oname, &meta) && same_shape(&meta, s)))
        push_fixed(k, s);
}

/* The node's result `k->oname` has sizes the rules do not know. */
static void set_unknown(kstate *k)
{
    if (k->oname[0])
        push_fixed(k, NULL);
}

/* Append the sympy text of `e` to `b`. */
static void put(sg_buf *b, const sg_expr *e)
{
    char *t = NULL;
    sg_error err = SG_ERROR_INIT;

    if (e && sg_expr_print(&t, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) == 0) {
        if (strlen(t) > MAX_SHOWN) /* a long product of sizes: its head */
            strcpy(t + MAX_SHOWN - 3, "...");
        sg_buf_puts(b, t);
    } else
        sg_buf_puts(b, "?");
    sg_free(t);
}

/* A description buffer headed "aten.OP NODE: ". */
static void head(const kstate *k, sg_buf *b)
{
    sg_buf_init(b, MAX_WHAT);
    sg_buf_printf(b, "aten.%.120s %.200s: ", k->op, k->oname);
}

/* Add condition `cond` (NULL: not read, nothing added) described by `b` (disposed). */
static void add(kstate *k, const sg_expr *cond, sg_buf *b)
{
    sg_graph_kernel_check *c;
    const char *st = sg__json_str(sg__json_get(sg__json_get(k->node, "metadata"), "stack_trace"));
    const char *target = sg__json_str(sg__json_get(k->node, "target"));

    if (!cond || sg_expr_kind(cond) == SG_TRUE || k->rc) {
        sg_buf_dispose(b);
        return;
    }
    if (sg__grow((void **)&k->out, &k->cap, k->n + 1, sizeof *k->out) != 0) {
        sg_buf_dispose(b);
        k->rc = SG_ENOMEM;
        return;
    }
    c = &k->out[k->n];
    memset(c, 0, sizeof *c);
    c->expr = cond;
    c->what = sg_buf_take(b);
    c->node = sg__strdup(k->oname);
    c->target = sg__strdup(target ? target : "");
    c->stack_trace = st ? sg__strdup(st) : NULL;
    k->n++;
    if (!c->what || !c->node || !c->target || (st && !c->stack_trace))
        k->rc = SG_ENOMEM;
}

/* Or(Eq(a, b), Eq(a, 1), Eq(b, 1)): sizes a and b broadcast. */
static const sg_expr *broadcasts(kstate *k, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *one = lit(k, 1);
    const sg_expr *alts[3];

    alts[0] = mk2(k, SG_EQ, a, b);
    alts[1] = mk2(k, SG_EQ, a, one);
    alts[2] = mk2(k, SG_EQ, b, one);
    if (!alts[0] || !alts[1] || !alts[2])
        return NULL;
    return ok(k, sg_expr_apply(k->pool, SG_OR, alts, 3));
}

/* ---- the rules ----------------------------------------------------------------------------- */

/* Elementwise ops over tensors that broadcast: every pair of sizes at a position. */
static void rule_broadcast(kstate *k)
{
    const char *names[4];
    shape s[4], out;
    const cJSON *in;
    size_t m = 0, i, j, pos;
    bool changed = false;

    cJSON_ArrayForEach(in, sg__json_get(k->node, "inputs")) {
        const char *t = tensor_of(sg__json_get(in, "arg"));
        if (!t)
            continue;
        if (m == 4 || !sizes_of(k, t, &s[m]))
            return;
        names[m++] = t;
    }
    if (m < 2)
        return;
    out.ndim = 0;
    for (i = 0; i < m; i++) {
        shape meta;
        out.ndim = s[i].ndim > out.ndim ? s[i].ndim : out.ndim;
        changed |= !meta_of(k, names[i], &meta) || !same_shape(&meta, &s[i]);
    }
    for (pos = 1; pos <= out.ndim; pos++) {
        const sg_expr *r = NULL;
        for (i = 0; i < m; i++) {
            const sg_expr *a;
            if (s[i].ndim < pos)
                continue;
            a = s[i].d[s[i].ndim - pos];
            for (j = i + 1; j < m; j++) {
                const sg_expr *b;
                sg_buf w;
                if (s[j].ndim < pos)
                    continue;
                b = s[j].d[s[j].ndim - pos];
                if (a == b)
                    continue;
                head(k, &w);
                sg_buf_printf(&w, "dim %zu of %.200s (", out.ndim - pos, names[i]);
                put(&w, a);
                sg_buf_printf(&w, ") and of %.200s (", names[j]);
                put(&w, b);
                sg_buf_puts(&w, ") broadcast (equal, or one of them 1)");
                add(k, broadcasts(k, a, b), &w);
            }
            /* the size of the result: the first size that is not 1 */
            if (!changed)
                continue;
            r = r ? ok(k, sg_expr_apply(k->pool, SG_WHERE,
                                        (const sg_expr *[]){mk2(k, SG_EQ, r, lit(k, 1)), a, r}, 3))
                  : a;
            if (!r)
                return;
        }
        if (changed)
            out.d[out.ndim - pos] = r;
    }
    if (changed)
        set_sizes(k, &out);
}

/* Ops whose result has their one tensor input's sizes: carry recomputed sizes on. */
static void rule_same(kstate *k, const char *input)
{
    const char *t = tensor_of(arg_of(k, input));
    shape s;

    if (t && sizes_of(k, t, &s))
        set_sizes(k, &s);
}

/* A slice bound clamped into [0, n] as the kernel does: `start` (is_end false) or `end`; NULL when not read. */
static const sg_expr *clamped(kstate *k, const char *name, const sg_expr *n, bool is_end)
{
    const cJSON *a = arg_of(k, name);
    const sg_expr *e = NULL;
    sg_int v;

    if (!a || sg__json_get(a, "as_none"))
        return is_end ? n : lit(k, 0);
    if (sg__json_int(sg__json_get(a, "as_int"), &v)) {
        if (v >= ((sg_int)1 << 62))
            return n; /* sys.maxsize: to the end */
        if (v < 0) /* from the end, at least 0 */
            return ok(k, sg_expr_2(k->pool, SG_MAX, mk2(k, SG_ADD, n, lit(k, v)), lit(k, 0)));
        return v == 0 ? lit(k, 0) : mk2(k, SG_MIN, lit(k, v), n);
    }
    if (sg__json_get(a, "as_sym_int") && sg_graph__rebuild_symint(&e, k->pool, k->scope, sg__json_get(a, "as_sym_int")) != 0)
        k->rc = SG_ENOMEM;
    return e && nonneg(e) ? mk2(k, SG_MIN, e, n) : NULL;
}

/* slice.Tensor: no condition (it clamps); its result's size is recomputed. */
static void rule_slice(kstate *k)
{
    const sg_expr *start, *end, *len;
    shape s;
    sg_int dim, step;

    if (!sizes_of(k, tensor_of(arg_of(k, "self")), &s) || !int_arg(k, "dim", 0, &dim) || !int_arg(k, "step", 1, &step)
        || step < 1 || step > ((sg_int)1 << 40))
        return;
    if (dim < 0)
        dim += (sg_int)s.ndim;
    if (dim < 0 || dim >= (sg_int)s.ndim)
        return;
    start = clamped(k, "start", s.d[dim], false);
    end = clamped(k, "end", s.d[dim], true);
    /* every clamped end is >= 0, so from 0 the length is the end itself */
    if (start && sg_expr_kind(start) == SG_INT && sg_expr_int_value(start) == 0)
        len = end;
    else
        len = ok(k, sg_expr_2(k->pool, SG_MAX, mk2(k, SG_ADD, end, ok(k, sg_expr_neg(k->pool, start))), lit(k, 0)));
    if (len && step > 1)
        len = mk2(k, SG_FLOORDIV, mk2(k, SG_ADD, len, lit(k, step - 1)), lit(k, step));
    if (!start || !end || !len)
        return;
    s.d[dim] = len;
    set_sizes(k, &s);
}

/* A size argument that is a literal >= 0 or a size expression; NULL otherwise. */
static const sg_expr *size_arg(kstate *k, const cJSON *sym)
{
    const sg_expr *e = NULL;
    sg_int v;

    if (sg__json_int(sym, &v)) /* as_ints: bare integers */
        return v >= 0 ? lit(k, v) : NULL;
    if (sg_graph__rebuild_symint(&e, k->pool, k->scope, sym) != 0)
        k->rc = SG_ENOMEM;
    return e && nonneg(e) ? e : NULL;
}

/* narrow(self, dim, start, length): start + length <= the dim's size. */
static void rule_narrow(kstate *k)
{
    const cJSON *sa = arg_of(k, "start"), *la = arg_of(k, "length");
    const sg_expr *start, *length;
    shape s;
    sg_buf w;
    sg_int dim;

    if (!sizes_of(k, tensor_of(arg_of(k, "self")), &s) || !int_arg(k, "dim", 0, &dim) || !sa || !la)
        return;
    if (dim < 0)
        dim += (sg_int)s.ndim;
    if (dim < 0 || dim >= (sg_int)s.ndim)
        return;
    start = size_arg(k, sg__json_get(sa, "as_int") ? sg__json_get(sa, "as_int") : sg__json_get(sa, "as_sym_int"));
    length = size_arg(k, sg__json_get(la, "as_int") ? sg__json_get(la, "as_int") : sg__json_get(la, "as_sym_int"));
    if (!start || !length)
        return;
    head(k, &w);
    sg_buf_puts(&w, "start + length (");
    put(&w, mk2(k, SG_ADD, start, length));
    sg_buf_printf(&w, ") within dim %d (", (int)dim);
    put(&w, s.d[dim]);
    sg_buf_puts(&w, ")");
    add(k, mk2(k, SG_LE, mk2(k, SG_ADD, start, length), s.d[dim]), &w);
    s.d[dim] = length;
    set_sizes(k, &s);
}

/* The product of `n` sizes. */
static const sg_expr *product(kstate *k, const sg_expr *const *d, size_t n)
{
    const sg_expr *p = lit(k, 1);
    size_t i;

    for (i = 0; i < n && p; i++)
        p = mk2(k, SG_MUL, p, d[i]);
    return p;
}

/* view / _unsafe_view / reshape: the element count fits the requested sizes (one may be -1). */
static void rule_view(kstate *k)
{
    const cJSON *a = arg_of(k, "size") ? arg_of(k, "size") : arg_of(k, "shape"), *list, *item;
    const sg_expr *numel, *rest, *cond;
    shape s, out;
    size_t infer = MAX_RANK, i;
    sg_buf w;

    if (!sizes_of(k, tensor_of(arg_of(k, "self")), &s))
        return;
    if (!(list = sg__json_get(a, "as_ints")) && !(list = sg__json_get(a, "as_sym_ints")))
        return;
    if (cJSON_GetArraySize(list) > MAX_RANK)
        return;
    out.ndim = 0;
    cJSON_ArrayForEach(item, list) {
        sg_int v;
        if ((sg__json_int(item, &v) || sg__json_int(sg__json_get(item, "as_int"), &v)) && v == -1) {
            if (infer != MAX_RANK)
                return;
            infer = out.ndim;
            out.d[out.ndim++] = NULL;
            continue;
        }
        if (!(out.d[out.ndim] = size_arg(k, item)))
            return;
        out.ndim++;
    }
    numel = product(k, s.d, s.ndim);
    rest = lit(k, 1);
    for (i = 0; i < out.ndim && rest; i++)
        if (i != infer)
            rest = mk2(k, SG_MUL, rest, out.d[i]);
    if (!numel || !rest)
        return;
    if (infer == MAX_RANK)
        cond = mk2(k, SG_EQ, numel, rest);
    else {
        cond = mk2(k, SG_AND, mk2(k, SG_NE, rest, lit(k, 0)), mk2(k, SG_EQ, mk2(k, SG_MOD, numel, rest), lit(k, 0)));
        out.d[infer] = mk2(k, SG_FLOORDIV, numel, rest);
        if (!out.d[infer])
            return;
    }
    head(k, &w);
    sg_buf_printf(&w, "the element count of %.200s (", tensor_of(arg_of(k, "self")));
    put(&w, numel);
    sg_buf_puts(&w, infer == MAX_RANK ? ") equals the product of the sizes asked (" : ") is a multiple of the product of the other sizes asked (");
    put(&w, rest);
    sg_buf_puts(&w, infer == MAX_RANK ? ")" : ", not 0)");
    add(k, cond, &w);
    set_sizes(k, &out);
}

/* expand(self, size): each size of self equals its target or is 1 (-1 keeps it). */
static void rule_expand(kstate *k)
{
    const cJSON *a = arg_of(k, "size"), *list, *item;
    shape s, out;
    size_t lead, i = 0;

    if (!sizes_of(k, tensor_of(arg_of(k, "self")), &s))
        return;
    if (!(list = sg__json_get(a, "as_ints")) && !(list = sg__json_get(a, "as_sym_ints")))
        return;
    if (cJSON_GetArraySize(list) > MAX_RANK || (size_t)cJSON_GetArraySize(list) < s.ndim)
        return;
    out.ndim = (size_t)cJSON_GetArraySize(list);
    lead = out.ndim - s.ndim;
    cJSON_ArrayForEach(item, list) {
        const sg_expr *t;
        sg_int v;
        if ((sg__json_int(item, &v) || sg__json_int(sg__json_get(item, "as_int"), &v)) && v == -1) {
            if (i < lead)
                return;
            out.d[i] = s.d[i - lead];
            i++;
            continue;
        }
        if (!(t = size_arg(k, item)))
            return;
        out.d[i] = t;
        if (i >= lead && s.d[i - lead] != t) {
            sg_buf w;
            const sg_expr *one = lit(k, 1);
            head(k, &w);
            sg_buf_printf(&w, "dim %zu of %.200s (", i - lead, tensor_of(arg_of(k, "self")));
            put(&w, s.d[i - lead]);
            sg_buf_puts(&w, ") equals the expanded size (");
            put(&w, t);
            sg_buf_puts(&w, ") or is 1");
            add(k, mk2(k, SG_OR, mk2(k, SG_EQ, s.d[i - lead], t), mk2(k, SG_EQ, s.d[i - lead], one)), &w);
        }
        i++;
    }
    set_sizes(k, &out);
}

/* Sizes `x` (dim `dx` of value `a`) and `y` (dim `dy` of `b`) must be equal. */
static void need_equal(kstate *k, const char *a, size_t dx, const sg_expr *x, const char *b, size_t dy,
                       const sg_expr *y)
{
    sg_buf w;

    head(k, &w);
    sg_buf_printf(&w, "dim %zu of %.200s (", dx, a);
    put(&w, x);
    sg_buf_printf(&w, ") equals dim %zu of %.200s (", dy, b);
    put(&w, y);
    sg_buf_puts(&w, ")");
    add(k, mk2(k, SG_EQ, x, y), &w);
}

/* cat(tensors, dim): inputs of one rank agree on every other dim. */
static void rule_cat(kstate *k)
{
    const cJSON *list = sg__json_get(arg_of(k, "tensors"), "as_tensors"), *item;
    shape first, s;
    const char *fname = NULL;
    sg_int dim;
    size_t d;

    if (!cJSON_IsArray(list) || !int_arg(k, "dim", 0, &dim))
        return;
    cJSON_ArrayForEach(item, list) {
        const char *t = sg__json_str(sg__json_get(item, "name"));
        if (!sizes_of(k, t, fname ? &s : &first))
            return;
        if (!fname) {
            fname = t;
            if (dim < 0)
                dim += (sg_int)first.ndim;
            if (dim < 0 || dim >= (sg_int)first.ndim)
                return;
            continue;
        }
        if (s.ndim != first.ndim)
            return; /* torch skips legacy empty 1-D inputs: not modelled */
        for (d = 0; d < s.ndim; d++) {
            if ((sg_int)d == dim) {
                first.d[d] = mk2(k, SG_ADD, first.d[d], s.d[d]);
                if (!first.d[d])
                    return;
                continue;
            }
            if (first.d[d] == s.d[d])
                continue;
            need_equal(k, fname, d, first.d[d], t, d, s.d[d]);
        }
    }
    if (fname)
        set_sizes(k, &first);
}

/* Two sizes that must be equal: dim `da` of input `a`'s tensor and `db` of `b`'s (negative: from the end). */
static void equal_dims(kstate *k, const char *a, long da, const char *b, long db)
{
    const char *ta = tensor_of(arg_of(k, a)), *tb = tensor_of(arg_of(k, b));
    shape sa, sb;

    if (!sizes_of(k, ta, &sa) || !sizes_of(k, tb, &sb))
        return;
    if (da < 0)
        da += (long)sa.ndim;
    if (db < 0)
        db += (long)sb.ndim;
    if (da < 0 || db < 0 || (size_t)da >= sa.ndim || (size_t)db >= sb.ndim || sa.d[da] == sb.d[db])
        return;
    need_equal(k, ta, (size_t)da, sa.d[da], tb, (size_t)db, sb.d[db]);
}

/* matmul(self, other): the contracted dims agree (batch dims are not modelled). */
static void rule_matmul(kstate *k)
{
    shape b;

    if (!sizes_of(k, tensor_of(arg_of(k, "other")), &b) || b.ndim == 0)
        return;
    equal_dims(k, "self", -1, "other", b.ndim >= 2 ? -2 : 0);
}

/* layer_norm(input, normalized_shape): the input's trailing dims are normalized_shape. */
static void rule_layer_norm(kstate *k)
{
    const cJSON *a = arg_of(k, "normalized_shape"), *list, *item;
    const char *t = tensor_of(arg_of(k, "input"));
    shape s;
    size_t i = 0, lead;

    if (!sizes_of(k, t, &s))
        return;
    if (!(list = sg__json_get(a, "as_ints")) && !(list = sg__json_get(a, "as_sym_ints")))
        return;
    if ((size_t)cJSON_GetArraySize(list) > s.ndim)
        return;
    lead = s.ndim - (size_t)cJSON_GetArraySize(list);
    cJSON_ArrayForEach(item, list) {
        const sg_expr *e = size_arg(k, item);
        sg_buf w;
        if (e && e != s.d[lead + i]) {
            head(k, &w);
            sg_buf_printf(&w, "dim %zu of %.200s (", lead + i, t);
            put(&w, s.d[lead + i]);
            sg_buf_puts(&w, ") equals normalized_shape (");
            put(&w, e);
            sg_buf_puts(&w, ")");
            add(k, mk2(k, SG_EQ, s.d[lead + i], e), &w);
        }
        i++;
    }
}

/*
 * index_select(self, dim, index), embedding(weight, indices), gather(self, dim, index): an index
 * into an empty dim fails whatever its values ("self indexing axis dim should be positive"), so a
 * non-empty index needs the indexed dim at least 1. (The values themselves are data, not sizes.)
 */
static void rule_indexed(kstate *k, const char *self, const char *index, sg_int dflt_dim)
{
    const char *ts = tensor_of(arg_of(k, self)), *ti = tensor_of(arg_of(k, index));
    shape a, b;
    sg_int dim = dflt_dim;
    const sg_expr *n, *cond;
    sg_buf w;

    if ((dflt_dim < 0 && !int_arg(k, "dim", 0, &dim)) || !sizes_of(k, ts, &a) || !sizes_of(k, ti, &b))
        return;
    if (dim < 0)
        dim += (sg_int)a.ndim;
    if (dim < 0 || (size_t)dim >= a.ndim || !nonneg(a.d[dim]))
        return;
    n = product(k, b.d, b.ndim);
    cond = mk2(k, SG_OR, mk2(k, SG_EQ, n, lit(k, 0)), mk2(k, SG_GE, a.d[dim], lit(k, 1)));
    head(k, &w);
    sg_buf_printf(&w, "dim %lld of %.200s (", (long long)dim, ts);
    put(&w, a.d[dim]);
    sg_buf_printf(&w, ") is at least 1 when %.200s is not empty (", ti);
    put(&w, n);
    sg_buf_puts(&w, " elements)");
    add(k, cond, &w);
}

/* Elementwise ops that broadcast all their tensor inputs (out-of-place). */
static const char *const broadcast_ops[] = {
    "add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "div.Tensor_mode", "maximum.default",
    "minimum.default", "where.self", "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor",
    "ge.Tensor", "pow.Tensor_Tensor", "remainder.Tensor", "fmod.Tensor", "atan2.default",
    "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor", "logical_and.default",
    "logical_or.default", "logical_xor.default", "floor_divide.default",
};

/* Ops whose result has the sizes of their input `self` (or `input`). */
static const char *const same_ops[] = {
    "relu.default", "gelu.default", "silu.default", "sigmoid.default", "tanh.default", "neg.default",
    "exp.default", "log.default", "abs.default", "sqrt.default", "rsqrt.default", "clone.default",
    "contiguous.default", "to.dtype", "_to_copy.default", "detach.default", "alias.default",
    "softmax.int", "_softmax.default", "log_softmax.int", "dropout.default", "add.Scalar", "sub.Scalar",
    "mul.Scalar", "div.Scalar", "pow.Tensor_Scalar", "clamp.default", "clamp_min.default",
    "clamp_max.default", "eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar", "gt.Scalar", "ge.Scalar",
    "bitwise_not.default", "logical_not.default", "sin.default", "cos.default", "erf.default",
    "hardtanh.default", "leaky_relu.default", "elu.default", "square.default",
};

static bool listed(const char *op, const char *const *list, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (strcmp(op, list[i]) == 0)
            return true;
    return false;
}

/*
 * Apply the rule of the current node's op, if it has one. A rule that
 * accounts for the sizes of the node's result sets them with set_sizes();
 * the caller makes the result's sizes unknown when none did and an input's
 * sizes were recomputed.
 */
static void rule(kstate *k)
{
    const char *op = k->op;

    if (!op)
        return;
    if (listed(op, broadcast_ops, sizeof broadcast_ops / sizeof *broadcast_ops))
        rule_broadcast(k);
    else if (listed(op, same_ops, sizeof same_ops / sizeof *same_ops))
        rule_same(k, arg_of(k, "self") ? "self" : "input");
    else if (strcmp(op, "slice.Tensor") == 0)
        rule_slice(k);
    else if (strcmp(op, "narrow.default") == 0)
        rule_narrow(k);
    else if (strcmp(op, "view.default") == 0 || strcmp(op, "_unsafe_view.default") == 0
             || strcmp(op, "reshape.default") == 0)
        rule_view(k);
    else if (strcmp(op, "expand.default") == 0)
        rule_expand(k);
    else if (strcmp(op, "cat.default") == 0)
        rule_cat(k);
    else {
        if (strcmp(op, "mm.default") == 0)
            equal_dims(k, "self", 1, "mat2", 0);
        else if (strcmp(op, "bmm.default") == 0) {
            equal_dims(k, "self", 0, "mat2", 0);
            equal_dims(k, "self", 2, "mat2", 1);
        } else if (strcmp(op, "addmm.default") == 0)
            equal_dims(k, "mat1", 1, "mat2", 0);
        else if (strcmp(op, "matmul.default") == 0)
            rule_matmul(k);
        else if (strcmp(op, "linear.default") == 0)
            equal_dims(k, "input", -1, "weight", -1);
        else if (strcmp(op, "layer_norm.default") == 0)
            rule_layer_norm(k);
        else if (strcmp(op, "index_select.default") == 0 || strcmp(op, "gather.default") == 0)
            rule_indexed(k, "self", "index", -1);
        else if (strcmp(op, "embedding.default") == 0)
            rule_indexed(k, "weight", "indices", 0);
    }
}

/* Whether value `name` has recomputed (or unknown) sizes. */
static bool is_fixed(const kstate *k, const char *name) { return name && find_fixed(k, name) < k->nfx; }

/* Whether a tensor input of the node has recomputed (or unknown) sizes. */
static bool input_recomputed(const kstate *k)
{
    const cJSON *in, *item;

    cJSON_ArrayForEach(in, sg__json_get(k->node, "inputs")) {
        const cJSON *arg = sg__json_get(in, "arg");
        if (is_fixed(k, tensor_of(arg)))
            return true;
        cJSON_ArrayForEach(item, sg__json_get(arg, "as_tensors"))
            if (is_fixed(k, sg__json_str(sg__json_get(item, "name"))))
                return true;
    }
    return false;
}

/* Every tensor result of the node gets unknown sizes: its meta may assume what its inputs break. */
static void results_unknown(kstate *k)
{
    const cJSON *o, *item;

    cJSON_ArrayForEach(o, sg__json_get(k->node, "outputs")) {
        const char *t = tensor_of(o);
        const cJSON *list = sg__json_get(o, "as_tensors");
        if (t) {
            k->oname = t;
            set_unknown(k);
        }
        cJSON_ArrayForEach(item, list) {
            const char *n = sg__json_str(sg__json_get(item, "name"));
            if (n) {
                k->oname = n;
                set_unknown(k);
            }
        }
    }
}

int sg_graph__read_kernels(sg_graph_kernel_check **out, size_t *n, sg_pool *pool, const cJSON *graph,
                           sg_error *err)
{
    static const char aten[] = "torch.ops.aten.";
    sg_graph__scope scope;
    const cJSON *node;
    kstate k;

    *out = NULL;
    *n = 0;
    memset(&k, 0, sizeof k);
    if (sg_graph__scope_init(&scope, graph) != 0)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading the kernels' shapes");
    k.pool = pool;
    k.scope = &scope;
    cJSON_ArrayForEach(node, sg__json_get(graph, "nodes")) {
        const char *target = sg__json_str(sg__json_get(node, "target"));
        const char *oname = tensor_of(cJSON_GetArrayItem(sg__json_get(node, "outputs"), 0));
        k.node = node;
        k.op = target && oname && strncmp(target, aten, sizeof aten - 1) == 0 ? target + sizeof aten - 1 : NULL;
        k.oname = oname ? oname : "";
        k.set = false;
        rule(&k);
        if (!k.set && input_recomputed(&k))
            results_unknown(&k);
        if (k.rc || k.full)
            break;
    }
    sg_graph__scope_free(&scope);
    sg_free(k.fx);
    if (k.rc) {
        sg_graph__kernels_free(k.out, k.n);
        return sg_error_set(err, SG_ENOMEM, "out of memory reading the kernels' shapes");
    }
    *out = k.out;
    *n = k.n;
    return 0;
}

void sg_graph__kernels_free(sg_graph_kernel_check *k, size_t n)
{
    size_t i;

    if (!k)
        return;
    for (i = 0; i < n; i++) {
        sg_free((void *)k[i].what);
        sg_free((void *)k[i].node);
        sg_free((void *)k[i].target);
        sg_free((void *)k[i].stack_trace);
    }
    sg_free(k);
}
