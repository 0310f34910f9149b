/*
 * chain.c - rebuilding a runtime assert's condition from the nodes that
 * compute it (graph/chain.h): a per-graph index from SymInt/SymBool value
 * names to their producing node, and a bounded walk down that chain turning
 * size queries (`aten.sym_size.int`, `sym_numel`, `sym_stride.int`,
 * `sym_storage_offset`) into the tensor meta's size expressions and Python
 * operators (`_operator.*`, `torch.sym_*`) into guard-language functions.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "graph/chain.h"
#include "graph/graph_int.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_DEPTH 64    /* nodes along one chain */
#define MAX_STEPS 4096  /* values visited for one rebuilt condition (a DAG can share operands) */

/* qsort / bsearch order of index entries. */
static int def_cmp(const void *a, const void *b)
{
    return strcmp(((const sg_graph__def *)a)->name, ((const sg_graph__def *)b)->name);
}

/* The value name of a SymInt/SymBool output Argument, or NULL. */
static const char *sym_out_name(const cJSON *out)
{
    const cJSON *v = sg__json_get(out, "as_sym_int");

    if (!v)
        v = sg__json_get(out, "as_sym_bool");
    return sg__json_str(sg__json_get(v, "as_name"));
}

int sg_graph__scope_init(sg_graph__scope *s, const cJSON *graph)
{
    const cJSON *node, *o;
    size_t cap = 0;

    memset(s, 0, sizeof *s);
    s->nodes = sg__json_get(graph, "nodes");
    s->tensor_values = sg__json_get(graph, "tensor_values");
    s->sym_int_values = sg__json_get(graph, "sym_int_values");
    s->sym_bool_values = sg__json_get(graph, "sym_bool_values");
    cJSON_ArrayForEach(node, s->nodes) {
        cJSON_ArrayForEach(o, sg__json_get(node, "outputs")) {
            const char *name = sym_out_name(o);
            if (!name)
                continue;
            if (sg__grow((void **)&s->defs, &cap, s->ndefs + 1, sizeof *s->defs) != 0) {
                sg_graph__scope_free(s);
                return SG_ENOMEM;
            }
            s->defs[s->ndefs].name = name;
            s->defs[s->ndefs++].node = node;
        }
    }
    if (s->ndefs > 1)
        qsort(s->defs, s->ndefs, sizeof *s->defs, def_cmp);
    return 0;
}

void sg_graph__scope_free(sg_graph__scope *s)
{
    if (!s)
        return;
    sg_free(s->defs);
    s->defs = NULL;
    s->ndefs = 0;
}

/* The node producing value `name` in scope `s`, or NULL (the first one when a name repeats). */
static const cJSON *producer(const sg_graph__scope *s, const char *name)
{
    sg_graph__def key, *d;

    key.name = name;
    key.node = NULL;
    d = s->ndefs ? bsearch(&key, s->defs, s->ndefs, sizeof *s->defs, def_cmp) : NULL;
    while (d && d > s->defs && strcmp(d[-1].name, name) == 0)
        d--;
    return d ? d->node : NULL;
}

/* Walk state for one rebuilt condition. */
typedef struct walk {
    sg_pool *pool;
    const sg_graph__scope *s;
    size_t steps;
    bool nomem;
} walk;

const sg_expr *sg_graph__made(sg_pool *pool, const sg_expr *e, bool *nomem)
{
    const sg_error *pe;

    if (e)
        return e;
    pe = sg_pool_error(pool);
    if (pe && pe->code == SG_ENOMEM)
        *nomem = true;
    else if (pe)
        sg_pool_clear_error(pool);
    return NULL;
}

static const sg_expr *checked(walk *w, const sg_expr *e) { return sg_graph__made(w->pool, e, &w->nomem); }

/* Read a SymInt/SymBool record ({"as_int"}|{"as_bool"}|{"as_expr": {"expr_str"}}), or NULL. */
static const sg_expr *record(walk *w, const cJSON *j)
{
    const char *text = sg__json_str(sg__json_get(sg__json_get(j, "as_expr"), "expr_str"));
    const sg_expr *e = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_int v;
    int rc;

    if (sg__json_int(sg__json_get(j, "as_int"), &v))
        return checked(w, sg_expr_int(w->pool, v));
    if (cJSON_IsBool(sg__json_get(j, "as_bool")))
        return checked(w, sg_expr_bool(w->pool, cJSON_IsTrue(sg__json_get(j, "as_bool"))));
    if (!text)
        return NULL;
    if ((rc = sg_graph__read_expr(&e, w->pool, text, "sym value", &err)) != 0) {
        if (rc == SG_ENOMEM)
            w->nomem = true;
        else
            sg_pool_clear_error(w->pool);
        return NULL;
    }
    return e;
}

/* The tensor meta (`tensor_values[name]`, unwrapped from torch 2.1's {"meta": ...}) or NULL. */
static const cJSON *tensor_meta(const walk *w, const char *name)
{
    const cJSON *m = name ? sg__json_get(w->s->tensor_values, name) : NULL;

    if (sg__json_get(m, "meta"))
        m = sg__json_get(m, "meta");
    return m;
}

/* The input called `name` of `node`, else its `i`-th input; the Argument, or NULL. */
static const cJSON *input(const cJSON *node, const char *name, int i)
{
    const cJSON *in;

    cJSON_ArrayForEach(in, sg__json_get(node, "inputs")) {
        const char *n = sg__json_str(sg__json_get(in, "name"));
        if (n && name && strcmp(n, name) == 0)
            return sg__json_get(in, "arg");
    }
    return sg__json_get(cJSON_GetArrayItem(sg__json_get(node, "inputs"), i), "arg");
}

static const sg_expr *value(walk *w, const cJSON *arg, int depth);
static const sg_expr *sym_value(walk *w, const cJSON *sym, const cJSON *table, int depth);

/* A size query node: the tensor's size / stride / offset / element count, or NULL. */
static const sg_expr *size_query(walk *w, const cJSON *node, const char *op)
{
    const char *tname = sg__json_str(sg__json_get(sg__json_get(input(node, "self", 0), "as_tensor"), "name"));
    const cJSON *meta = tensor_meta(w, tname);
    const cJSON *list;
    sg_int dim;
    int n;

    if (!meta)
        return NULL;
    if (strcmp(op, "sym_storage_offset") == 0)
        return record(w, sg__json_get(meta, "storage_offset"));
    list = sg__json_get(meta, strcmp(op, "sym_stride") == 0 ? "strides" : "sizes");
    if (!cJSON_IsArray(list))
        return NULL;
    n = cJSON_GetArraySize(list);
    if (strcmp(op, "sym_numel") == 0) {
        const sg_expr *prod = checked(w, sg_expr_int(w->pool, 1)), *d;
        const cJSON *j;
        cJSON_ArrayForEach(j, list) {
            if (!(d = record(w, j)))
                return NULL;
            prod = checked(w, sg_expr_2(w->pool, SG_MUL, prod, d));
        }
        return prod;
    }
    if (!sg__json_int(sg__json_get(input(node, "dim", 1), "as_int"), &dim))
        return NULL;
    if (dim < 0)
        dim += n;
    if (dim < 0 || dim >= n)
        return NULL;
    return record(w, cJSON_GetArrayItem(list, (int)dim));
}

/* Python operators and torch.sym_* functions over SymInt/SymBool, by the name after the module. */
static const struct {
    const char *name;
    sg_kind kind;
    int nargs; /* 0: any number >= 1 (a list argument or several) */
} ops[] = {
    {"add", SG_ADD, 2},       {"sub", SG_ADD, 2},       {"mul", SG_MUL, 2},      {"floordiv", SG_FLOORDIV, 2},
    {"mod", SG_MOD, 2},       {"truediv", SG_TRUEDIV, 2}, {"pow", SG_POWNAT, 2}, {"neg", SG_MUL, 1},
    {"eq", SG_EQ, 2},         {"ne", SG_NE, 2},         {"lt", SG_LT, 2},        {"le", SG_LE, 2},
    {"gt", SG_GT, 2},         {"ge", SG_GE, 2},         {"and_", SG_AND, 2},     {"or_", SG_OR, 2},
    {"not_", SG_NOT, 1},      {"sym_not", SG_NOT, 1},   {"sym_max", SG_MAX, 2},  {"sym_min", SG_MIN, 2},
    {"sym_sum", SG_ADD, 0},   {"sym_ite", SG_WHERE, 3},
};

/* The operator name of a target (`_operator.mul`, `operator.mul`, `torch.sym_not`), or NULL. */
static const char *op_name(const char *target)
{
    static const char *const prefixes[] = {"_operator.", "operator.", "torch.", "torch.fx.experimental.sym_node."};
    size_t i;

    for (i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(target, prefixes[i], strlen(prefixes[i])) == 0 && !strchr(target + strlen(prefixes[i]), '.'))
            return target + strlen(prefixes[i]);
    return NULL;
}

/* An operator node applied to its rebuilt operands, or NULL. */
static const sg_expr *apply_op(walk *w, const cJSON *node, const char *name, int depth)
{
    const sg_expr *args[8], *e;
    const cJSON *in, *list;
    size_t k, n = 0;

    for (k = 0; k < sizeof ops / sizeof ops[0] && strcmp(ops[k].name, name) != 0; k++)
        ;
    if (k == sizeof ops / sizeof ops[0])
        return NULL;
    cJSON_ArrayForEach(in, sg__json_get(node, "inputs")) {
        const cJSON *arg = sg__json_get(in, "arg");
        const cJSON *item;
        if ((list = sg__json_get(arg, "as_sym_ints")) != NULL || (list = sg__json_get(arg, "as_ints")) != NULL) {
            cJSON_ArrayForEach(item, list) {
                sg_int v;
                if (n == sizeof args / sizeof args[0])
                    return NULL;
                if (sg__json_int(item, &v)) /* as_ints: bare integers */
                    args[n] = checked(w, sg_expr_int(w->pool, v));
                else /* as_sym_ints: SymIntArguments */
                    args[n] = sym_value(w, item, w->s->sym_int_values, depth + 1);
                if (!args[n++])
                    return NULL;
            }
            continue;
        }
        if (n == sizeof args / sizeof args[0] || !(args[n++] = value(w, arg, depth + 1)))
            return NULL;
    }
    if (ops[k].nargs ? n != (size_t)ops[k].nargs : n == 0)
        return NULL;
    if (strcmp(name, "sub") == 0)
        return checked(w, sg_expr_sub(w->pool, args[0], args[1]));
    if (strcmp(name, "neg") == 0)
        return checked(w, sg_expr_neg(w->pool, args[0]));
    if (strcmp(name, "pow") == 0 && sg_expr_kind(args[1]) == SG_INT && sg_expr_int_value(args[1]) >= 2)
        return checked(w, sg_expr_2(w->pool, SG_POW, args[0], args[1]));
    e = sg_expr_apply(w->pool, ops[k].kind, args, n);
    return checked(w, e);
}

/* The expression of Argument `arg`, or NULL when it cannot be rebuilt. */
static const sg_expr *value(walk *w, const cJSON *arg, int depth)
{
    const cJSON *sym;
    sg_int v;

    if (sg__json_int(sg__json_get(arg, "as_int"), &v))
        return checked(w, sg_expr_int(w->pool, v));
    if (cJSON_IsBool(sg__json_get(arg, "as_bool")))
        return checked(w, sg_expr_bool(w->pool, cJSON_IsTrue(sg__json_get(arg, "as_bool"))));
    if ((sym = sg__json_get(arg, "as_sym_int")) != NULL)
        return sym_value(w, sym, w->s->sym_int_values, depth);
    if ((sym = sg__json_get(arg, "as_sym_bool")) != NULL)
        return sym_value(w, sym, w->s->sym_bool_values, depth);
    return NULL;
}

/*
 * A SymIntArgument / SymBoolArgument (`{"as_name": n}` or a literal): the
 * chain that produces `n`, else the record of `n` in `table`; NULL when
 * neither gives an expression.
 */
static const sg_expr *sym_value(walk *w, const cJSON *sym, const cJSON *table, int depth)
{
    static const char *const queries[] = {"sym_size", "sym_numel", "sym_stride", "sym_storage_offset"};
    const char *name, *target, *op;
    const cJSON *node;
    size_t q;
    sg_int v;

    if (w->nomem || depth > MAX_DEPTH || ++w->steps > MAX_STEPS)
        return NULL;
    if (sg__json_int(sg__json_get(sym, "as_int"), &v))
        return checked(w, sg_expr_int(w->pool, v));
    if (cJSON_IsBool(sg__json_get(sym, "as_bool")))
        return checked(w, sg_expr_bool(w->pool, cJSON_IsTrue(sg__json_get(sym, "as_bool"))));
    if (!(name = sg__json_str(sg__json_get(sym, "as_name"))))
        return NULL;
    node = producer(w->s, name);
    target = node ? sg__json_str(sg__json_get(node, "target")) : NULL;
    if (target) {
        for (q = 0; q < sizeof queries / sizeof queries[0]; q++) {
            static const char aten[] = "torch.ops.aten.";
            size_t lq = strlen(queries[q]);
            if (strncmp(target, aten, sizeof aten - 1) == 0 && strncmp(target + sizeof aten - 1, queries[q], lq) == 0
                && target[sizeof aten - 1 + lq] == '.')
                return size_query(w, node, queries[q]);
        }
        if ((op = op_name(target)) != NULL) {
            const sg_expr *e = apply_op(w, node, op, depth);
            if (e || w->nomem)
                return e;
        }
    }
    /* any other producer, or a subgraph input: what the graph records for the value */
    return record(w, sg__json_get(table, name));
}

/* Rebuild `j`: an Argument (`symint` false) or a SymIntArgument. */
static int rebuild(const sg_expr **out, sg_pool *pool, const sg_graph__scope *s, const cJSON *j, bool symint)
{
    walk w;

    w.pool = pool;
    w.s = s;
    w.steps = 0;
    w.nomem = false;
    *out = symint ? sym_value(&w, j, s->sym_int_values, 0) : value(&w, j, 0);
    if (w.nomem) {
        *out = NULL;
        return SG_ENOMEM;
    }
    return 0;
}

int sg_graph__rebuild(const sg_expr **out, sg_pool *pool, const sg_graph__scope *s, const cJSON *arg)
{
    return rebuild(out, pool, s, arg, false);
}

int sg_graph__rebuild_symint(const sg_expr **out, sg_pool *pool, const sg_graph__scope *s, const cJSON *sym)
{
    return rebuild(out, pool, s, sym, true);
}
