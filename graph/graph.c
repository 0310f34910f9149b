/*
 * graph.c - the graph model of one ExportedProgram JSON (include/shapegate/
 * graph.h): the graph signature with input paths from the pytree in_spec,
 * tensor metas of the inputs with symbolic sizes, range_constraints, the
 * runtime-check nodes of the top-level graph and of every control-flow
 * subgraph turned back into guard expressions (from the message, or rebuilt
 * from the node chain by graph/chain.c), and the map from
 * each symbol to the first user input dim that is exactly that symbol.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "shapegate/graph.h"
#include "graph/chain.h"
#include "graph/graph_int.h"
#include "graph/kernels.h"
#include "util/json.h"
#include "util/util.h"

struct sg_graph {
    sg_pool *pool;
    int schema_major, schema_minor;
    const char *torch_version;
    sg_graph_input *inputs;
    size_t ninputs;
    sg_graph_output *outputs;
    size_t noutputs;
    sg_graph_range *ranges;
    size_t nranges;
    sg_graph_assert *asserts;
    size_t nasserts, capasserts;
    sg_graph_symbol *symbols;
    size_t nsymbols, capsymbols;
    sg_graph_guard *guards;     /* guards_code */
    size_t nguards;
    bool has_guards_code;
    sg_graph_kernel_check *kernels; /* the kernels' shape conditions (kernels.c) */
    size_t nkernels;
    size_t nnodes, nsubgraphs, nmetachecks;
    void **owned; /* every other block the graph handed out */
    size_t nowned, capowned;
};

/* Take ownership of `p` (freed with the graph). Frees `p` and returns NULL on failure. */
static void *keep(sg_graph *g, void *p)
{
    if (!p)
        return NULL;
    if (sg__grow((void **)&g->owned, &g->capowned, g->nowned + 1, sizeof *g->owned) != 0) {
        sg_free(p);
        return NULL;
    }
    g->owned[g->nowned++] = p;
    return p;
}

/* A graph-owned copy of `s`, or NULL on allocation failure. */
static const char *dup(sg_graph *g, const char *s)
{
    return keep(g, sg__strndup(s, strlen(s)));
}

/* A graph-owned formatted string (bounded). */
static const char *dupf(sg_graph *g, const char *fmt, const char *a, const char *b)
{
    char buf[1024];

    snprintf(buf, sizeof buf, fmt, a, b);
    return dup(g, buf);
}

void sg_graph_free(sg_graph *g)
{
    if (!g)
        return;
    sg__free_array(g->owned, g->nowned);
    sg_graph__kernels_free(g->kernels, g->nkernels);
    SG_FREE_ALL(g->inputs, g->outputs, g->ranges, g->asserts, g->symbols, g->guards);
    sg_pool_free(g->pool);
    sg_free(g);
}

/* The single member of a one-member object ({"user_input": {...}}): its key and value. */
static const cJSON *tagged(const cJSON *j, const char **tag)
{
    if (!cJSON_IsObject(j) || !j->child)
        return NULL;
    *tag = j->child->string;
    return j->child;
}

/* The value name an Argument refers to: as_tensor.name, as_sym_int.as_name, ... or "". */
static const char *arg_name(const cJSON *arg)
{
    const char *tag;
    const cJSON *v = tagged(arg, &tag);
    const char *s;

    if ((s = sg__json_str(sg__json_get(arg, "name")))) /* a bare TensorArgument {"name": ...} */
        return s;
    if (!v)
        return "";
    if ((s = sg__json_str(sg__json_get(v, "name"))))
        return s;
    if ((s = sg__json_str(sg__json_get(v, "as_name"))))
        return s;
    return "";
}

/* Read one SymInt ({"as_int": n} | {"as_expr": {"expr_str": ...}}). */
static int read_symint(const sg_expr **out, sg_graph *g, const cJSON *j, const char *field,
                       sg_error *err)
{
    const cJSON *e;
    const char *s;
    sg_int v;

    if (sg__json_int(sg__json_get(j, "as_int"), &v)) {
        *out = sg_expr_int(g->pool, v);
        return *out ? 0 : sg_error_set(err, SG_ENOMEM, "%s: out of memory", field);
    }
    e = sg__json_get(j, "as_expr");
    if (e && (s = sg__json_str(sg__json_get(e, "expr_str"))))
        return sg_graph__read_expr(out, g->pool, s, field, err);
    return sg_error_set(err, SG_EINVALID, "%s: expected as_int or as_expr.expr_str", field);
}

/* The tensor meta `tensor_values[name]` as a graph-owned sg_graph_tensor, or NULL when absent. */
static int read_tensor(const sg_graph_tensor **out, sg_graph *g, const cJSON *values,
                       const char *name, sg_error *err)
{
    const cJSON *m = sg__json_get(values, name), *sizes, *s;
    sg_graph_tensor *t;
    const sg_expr **dims;
    long long *hints;
    char field[256];
    size_t i = 0;
    sg_int dt;
    int rc;

    *out = NULL;
    if (!m)
        return 0;
    if (sg__json_get(m, "meta")) /* torch 2.1 wrapped metas */
        m = sg__json_get(m, "meta");
    sizes = sg__json_get(m, "sizes");
    if (!cJSON_IsArray(sizes) || !sg__json_int(sg__json_get(m, "dtype"), &dt))
        return sg_error_set(err, SG_EINVALID, "graph_module.graph.tensor_values.%.64s: %s", name,
                            cJSON_IsArray(sizes) ? "dtype is not an integer" : "sizes is not a list");
    t = keep(g, sg__calloc(1, sizeof *t));
    dims = keep(g, sg__calloc((size_t)cJSON_GetArraySize(sizes) + 1, sizeof *dims));
    if (!t || !dims)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading tensor metas");
    hints = keep(g, sg__calloc((size_t)cJSON_GetArraySize(sizes) + 1, sizeof *hints));
    if (!hints)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading tensor metas");
    cJSON_ArrayForEach(s, sizes) {
        sg_int hv;
        snprintf(field, sizeof field, "graph_module.graph.tensor_values.%.64s.sizes[%zu]", name, i);
        if ((rc = read_symint(&dims[i], g, s, field, err)) != 0)
            return rc;
        hints[i] = -1;
        if (sg__json_int(sg__json_get(s, "as_int"), &hv)
            || sg__json_int(sg__json_get(sg__json_get(sg__json_get(s, "as_expr"), "hint"), "as_int"), &hv))
            hints[i] = hv >= 0 && hv <= (sg_int)1 << 62 ? (long long)hv : -1;
        i++;
    }
    t->name = dup(g, name);
    t->dtype = (int)dt;
    t->ndim = i;
    t->sizes = dims;
    t->hints = hints;
    if (!t->name)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading tensor metas");
    *out = t;
    return 0;
}

/* Append to `*path` (graph-owned) the pytree leaves of treespec node `spec` below `prefix`. */
static int spec_leaves(sg_graph *g, const cJSON *spec, const char *prefix, const char ***paths,
                       size_t *n, size_t *cap, const cJSON *argnames, int depth)
{
    const cJSON *children = sg__json_get(spec, "children_spec"), *c;
    const char *type = sg__json_str(sg__json_get(spec, "type"));
    const char *ctx = sg__json_str(sg__json_get(spec, "context"));
    cJSON *keys = NULL;
    size_t i = 0;
    int rc = 0;

    if (depth > 64)
        return SG_ELIMIT;
    if (!type) {
        if (sg__grow((void **)paths, cap, *n + 1, sizeof **paths) != 0)
            return SG_ENOMEM;
        (*paths)[(*n)++] = prefix;
        return 0;
    }
    if (ctx && strstr(type, "dict") && sg__json_parse(&keys, ctx, strlen(ctx), 1 << 20, 8, "context", NULL) != 0)
        keys = NULL;
    cJSON_ArrayForEach(c, children) {
        const cJSON *key = keys ? cJSON_GetArrayItem(keys, (int)i) : NULL;
        const cJSON *an = argnames ? cJSON_GetArrayItem(argnames, (int)i) : NULL;
        char idx[32];
        const char *p;

        snprintf(idx, sizeof idx, "%zu", i);
        if (an && sg__json_str(an))
            p = dupf(g, "%s['%s']", prefix, sg__json_str(an));
        else if (key && sg__json_str(key))
            p = dupf(g, "%s['%s']", prefix, sg__json_str(key));
        else
            p = dupf(g, "%s[%s]", prefix, idx);
        if (!p) {
            rc = SG_ENOMEM;
            break;
        }
        if ((rc = spec_leaves(g, c, p, paths, n, cap, NULL, depth + 1)) != 0)
            break;
        i++;
    }
    cJSON_Delete(keys);
    return rc;
}

/*
 * The pytree path of every user input from the root module's in_spec
 * ((args, kwargs) with forward_arg_names). Leaves `*paths` NULL when the spec
 * is absent or does not match the number of user inputs (callers fall back to
 * the input name).
 */
static int input_paths(const char ***paths, size_t *n, sg_graph *g, const cJSON *root,
                       size_t nuser)
{
    const cJSON *mcg = sg__json_get(sg__json_get(root, "graph_module"), "module_call_graph"), *e;
    const cJSON *sig = NULL, *tree, *args, *kwargs;
    const char *in_spec;
    cJSON *spec = NULL;
    size_t cap = 0;
    int rc = 0;

    *paths = NULL;
    *n = 0;
    cJSON_ArrayForEach(e, mcg) {
        const char *fqn = sg__json_str(sg__json_get(e, "fqn"));
        if (fqn && fqn[0] == '\0') {
            sig = sg__json_get(e, "signature");
            break;
        }
    }
    in_spec = sg__json_str(sg__json_get(sig, "in_spec"));
    if (!in_spec || sg__json_parse(&spec, in_spec, strlen(in_spec), (size_t)16 << 20, 256, "in_spec", NULL) != 0)
        return 0;
    tree = cJSON_GetArrayItem(spec, 1);
    args = cJSON_GetArrayItem(sg__json_get(tree, "children_spec"), 0);
    kwargs = cJSON_GetArrayItem(sg__json_get(tree, "children_spec"), 1);
    if (args && (rc = spec_leaves(g, args, "", paths, n, &cap, sg__json_get(sig, "forward_arg_names"), 0)) == 0
        && kwargs)
        rc = spec_leaves(g, kwargs, "", paths, n, &cap, NULL, 0);
    cJSON_Delete(spec);
    if (rc != 0 || *n != nuser) {
        sg_free(*paths);
        *paths = NULL;
        *n = 0;
    }
    return rc == SG_ENOMEM ? rc : 0;
}

/* The signature: graph inputs (with tensor metas and paths) and outputs. */
static int read_signature(sg_graph *g, const cJSON *root, sg_error *err)
{
    const cJSON *gm = sg__json_get(root, "graph_module");
    const cJSON *sig = sg__json_get(gm, "signature");
    const cJSON *values = sg__json_get(sg__json_get(gm, "graph"), "tensor_values");
    const cJSON *ins = sg__json_get(sig, "input_specs"), *outs = sg__json_get(sig, "output_specs"), *s;
    static const struct {
        const char *tag, *target;
        sg_graph_input_kind kind;
    } kinds[] = {
        {"user_input", NULL, SG_GRAPH_IN_USER},
        {"parameter", "parameter_name", SG_GRAPH_IN_PARAMETER},
        {"buffer", "buffer_name", SG_GRAPH_IN_BUFFER},
        {"tensor_constant", "tensor_constant_name", SG_GRAPH_IN_CONSTANT},
        {"custom_obj", "custom_obj_name", SG_GRAPH_IN_CUSTOM_OBJ},
        {"token", NULL, SG_GRAPH_IN_TOKEN},
        {"constant_input", NULL, SG_GRAPH_IN_CONSTANT_INPUT},
    };
    const char **paths = NULL;
    size_t npaths = 0, nuser = 0, i = 0, k;
    int rc = 0;

    if (!cJSON_IsArray(ins) || !cJSON_IsArray(outs))
        return sg_error_set(err, SG_EINVALID, "graph_module.signature.%s: missing or not a list",
                            cJSON_IsArray(ins) ? "output_specs" : "input_specs");
    g->inputs = sg__calloc((size_t)cJSON_GetArraySize(ins) + 1, sizeof *g->inputs);
    g->outputs = sg__calloc((size_t)cJSON_GetArraySize(outs) + 1, sizeof *g->outputs);
    if (!g->inputs || !g->outputs)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading the signature");
    cJSON_ArrayForEach(s, ins) {
        sg_graph_input *in = &g->inputs[g->ninputs];
        const char *tag = NULL;
        const cJSON *v = tagged(s, &tag), *cv;
        const char *t;

        if (!v || !tag)
            return sg_error_set(err, SG_EINVALID, "graph_module.signature.input_specs[%zu]: not a tagged object",
                                g->ninputs);
        in->kind = SG_GRAPH_IN_OTHER;
        for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            if (strcmp(tag, kinds[k].tag) == 0) {
                in->kind = kinds[k].kind;
                if (kinds[k].target && (t = sg__json_str(sg__json_get(v, kinds[k].target)))
                    && !(in->target = dup(g, t)))
                    return sg_error_set(err, SG_ENOMEM, "out of memory reading the signature");
            }
        }
        in->spec = dup(g, tag);
        in->name = dup(g, in->kind == SG_GRAPH_IN_CONSTANT_INPUT
                              ? (sg__json_str(sg__json_get(v, "name")) ? sg__json_str(sg__json_get(v, "name")) : "")
                              : arg_name(sg__json_get(v, "arg")));
        if (!in->spec || !in->name)
            return sg_error_set(err, SG_ENOMEM, "out of memory reading the signature");
        if ((rc = read_tensor(&in->tensor, g, values, in->name, err)) != 0)
            return rc;
        if (in->kind == SG_GRAPH_IN_CONSTANT_INPUT && (cv = sg__json_get(v, "value")) && cv->child
            && (cv->child->string && (strcmp(cv->child->string, "as_int") == 0 || strcmp(cv->child->string, "as_float") == 0
                                      || strcmp(cv->child->string, "as_bool") == 0
                                      || strcmp(cv->child->string, "as_string") == 0
                                      || strcmp(cv->child->string, "as_none") == 0))) {
            char *txt = strcmp(cv->child->string, "as_none") == 0 ? NULL : cJSON_PrintUnformatted(cv->child);
            in->value = strcmp(cv->child->string, "as_none") == 0 ? dup(g, "null") : txt ? dup(g, txt) : NULL;
            if (txt)
                cJSON_free(txt);
            if (!in->value)
                return sg_error_set(err, SG_ENOMEM, "out of memory reading the signature");
        }
        /* the in_spec's leaves are the user inputs and the constant inputs (non-tensor
         * arguments torch specialised), in signature order */
        if (in->kind == SG_GRAPH_IN_USER || in->kind == SG_GRAPH_IN_CONSTANT_INPUT)
            nuser++;
        g->ninputs++;
    }
    cJSON_ArrayForEach(s, outs) {
        sg_graph_output *o = &g->outputs[g->noutputs];
        const char *tag = NULL;
        const cJSON *v = tagged(s, &tag);

        if (!v || !tag)
            return sg_error_set(err, SG_EINVALID, "graph_module.signature.output_specs[%zu]: not a tagged object",
                                g->noutputs);
        o->spec = dup(g, tag);
        o->name = dup(g, arg_name(sg__json_get(v, "arg")));
        if (!o->spec || !o->name)
            return sg_error_set(err, SG_ENOMEM, "out of memory reading the signature");
        g->noutputs++;
    }
    if ((rc = input_paths(&paths, &npaths, g, root, nuser)) != 0)
        return sg_error_set(err, rc, "out of memory reading input paths");
    for (k = 0; k < g->ninputs; k++) {
        sg_graph_input *in = &g->inputs[k];
        if (in->kind != SG_GRAPH_IN_USER && in->kind != SG_GRAPH_IN_CONSTANT_INPUT)
            continue;
        in->path = paths ? paths[i++] : dupf(g, "%s['%s']", "", in->name);
        if (!in->path) {
            sg_free(paths);
            return sg_error_set(err, SG_ENOMEM, "out of memory reading input paths");
        }
    }
    sg_free(paths);
    return 0;
}

/* One bound of a range constraint: integer, null, or +-Infinity (string or number). */
static int read_bound(bool *has, sg_num *out, const cJSON *j, const char *key, const char *which,
                      sg_error *err)
{
    const char *s = sg__json_str(j);
    sg_int v;

    *has = false;
    if (sg__json_is_none(j))
        return 0;
    if (sg__json_int(j, &v)) {
        *has = true;
        *out = sg__num(v);
        return 0;
    }
    if (s && (strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0 || strcmp(s, "inf") == 0
              || strcmp(s, "-inf") == 0))
        return 0;
    return sg_error_set(err, SG_EINVALID, "range_constraints.%.64s.%s: not an integer, null or Infinity",
                        key, which);
}

/* range_constraints: key -> {min_val, max_val}. */
static int read_ranges(sg_graph *g, const cJSON *root, sg_error *err)
{
    const cJSON *rcs = sg__json_get(root, "range_constraints"), *c;
    sg_error perr = SG_ERROR_INIT;
    int rc;

    if (sg__json_is_none(rcs))
        return 0;
    if (!cJSON_IsObject(rcs))
        return sg_error_set(err, SG_EINVALID, "range_constraints: not an object");
    g->ranges = sg__calloc((size_t)cJSON_GetArraySize(rcs) + 1, sizeof *g->ranges);
    if (!g->ranges)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading range_constraints");
    cJSON_ArrayForEach(c, rcs) {
        sg_graph_range *r = &g->ranges[g->nranges];

        if (!cJSON_IsObject(c))
            return sg_error_set(err, SG_EINVALID, "range_constraints.%.64s: not an object", c->string);
        if ((rc = sg_expr_parse(&r->expr, g->pool, c->string, strlen(c->string), &perr)) != 0)
            return sg_error_set(err, sg__input_code(rc), "range_constraints key '%.64s': %s", c->string, perr.msg);
        if ((rc = read_bound(&r->has_min, &r->min, sg__json_get(c, "min_val"), c->string, "min_val", err)) != 0
            || (rc = read_bound(&r->has_max, &r->max, sg__json_get(c, "max_val"), c->string, "max_val", err)) != 0)
            return rc;
        if (!(r->key = dup(g, c->string)))
            return sg_error_set(err, SG_ENOMEM, "out of memory reading range_constraints");
        g->nranges++;
    }
    return 0;
}

/*
 * torch.export.load re-creates each input symbol from its example size (the hint) and asserts it
 * lies in the symbol's declared range ("16 not in VR[2, 7]"): an archive where it does not cannot
 * be loaded at all (torch saves one when a bounded Dim.AUTO excludes the example). SG_EINVALID.
 */
static int check_hints(const sg_graph *g, sg_error *err)
{
    size_t i, d, k;
    for (i = 0; i < g->ninputs; i++) {
        const sg_graph_tensor *t = g->inputs[i].tensor;
        if (g->inputs[i].kind != SG_GRAPH_IN_USER || !t || !t->hints)
            continue;
        for (d = 0; d < t->ndim; d++) {
            long long h = t->hints[d];
            if (h < 0 || sg_expr_kind(t->sizes[d]) != SG_SYM)
                continue;
            for (k = 0; k < g->nranges; k++) {
                const sg_graph_range *r = &g->ranges[k];
                bool below, above;
                if (r->expr != t->sizes[d])
                    continue;
                below = r->has_min && !r->min.inf && !r->min.big && h < r->min.value;
                above = r->has_max && !r->max.inf && !r->max.big && h > r->max.value;
                if (below || above)
                    return sg_error_set(err, SG_EINVALID, "range_constraints.%.64s: the example size %lld of %s%.64s.shape[%zu] "
                                        "is outside its declared range [%s, %s]: torch.export.load refuses this archive",
                                        r->key, h, g->inputs[i].path ? "inputs" : "", g->inputs[i].path ? g->inputs[i].path : g->inputs[i].name,
                                        d, r->has_min ? r->min.text : "-int_oo", r->has_max ? r->max.text : "int_oo");
            }
        }
    }
    return 0;
}

/* The node input called `name`: its `arg`, or NULL. */
static const cJSON *node_input(const cJSON *node, const char *name)
{
    const cJSON *i;

    cJSON_ArrayForEach(i, sg__json_get(node, "inputs")) {
        const char *n = sg__json_str(sg__json_get(i, "name"));
        if (n && strcmp(n, name) == 0)
            return sg__json_get(i, "arg");
    }
    return NULL;
}

/* The expression text inside torch's "Runtime assertion failed for expression E on node 'N'". */
static bool assert_text(const char *msg, const char **s, size_t *n)
{
    static const char pre[] = "Runtime assertion failed for expression ";
    const char *b = strstr(msg, pre), *e, *q;

    if (!b)
        return false;
    b += sizeof pre - 1;
    e = NULL;
    for (q = strstr(b, " on node '"); q; q = strstr(q + 1, " on node '"))
        e = q;
    if (!e)
        return false;
    *s = b;
    *n = (size_t)(e - b);
    return true;
}

/* A constrain node's condition: min <= v <= max. */
static int constrain_expr(const sg_expr **out, sg_graph *g, const cJSON *node, sg_graph_assert_kind kind,
                          const cJSON *symints, const char *field, sg_error *err)
{
    const char *name = arg_name(node_input(node, "size"));
    const cJSON *v = sg__json_get(symints, name);
    const sg_expr *val = NULL, *parts[2];
    size_t np = 0;
    sg_int lo, hi;
    bool has_lo, has_hi;
    int rc;

    if (!v)
        return sg_error_set(err, SG_EINVALID, "%s: size '%.64s' is not a sym_int value", field, name);
    if ((rc = read_symint(&val, g, v, field, err)) != 0)
        return rc;
    has_lo = sg__json_int(sg__json_get(node_input(node, "min"), "as_int"), &lo);
    has_hi = sg__json_int(sg__json_get(node_input(node, "max"), "as_int"), &hi);
    if (!has_lo && kind == SG_GRAPH_CONSTRAIN_RANGE_FOR_SIZE) {
        has_lo = true;
        lo = 0;
    }
    if (has_lo)
        parts[np++] = sg_expr_2(g->pool, SG_GE, val, sg_expr_int(g->pool, lo));
    if (has_hi)
        parts[np++] = sg_expr_2(g->pool, SG_LE, val, sg_expr_int(g->pool, hi));
    *out = np == 0 ? sg_expr_bool(g->pool, true) : np == 1 ? parts[0] : sg_expr_apply(g->pool, SG_AND, parts, np);
    if (!*out) {
        const sg_error *pe = sg_pool_error(g->pool);
        return sg_error_set(err, pe && pe->code ? pe->code : SG_ENOMEM, "%s: %s", field,
                            pe ? pe->msg : "out of memory");
    }
    return 0;
}

/* Nesting limit of control-flow subgraphs (cond inside while_loop inside ...). */
#define MAX_SUBGRAPH_DEPTH 32

static int read_graph_asserts(sg_graph *g, const cJSON *graph, const char *field, const char *path,
                              const char *hop, int depth, sg_error *err);

/* An _assert_scalar node: message, condition from the message or rebuilt from the nodes. */
static int read_assert_scalar(sg_graph *g, sg_graph_assert *a, const cJSON *node,
                              const sg_graph__scope *scope, const char *field, sg_error *err)
{
    const char *msg = sg__json_str(sg__json_get(node_input(node, "assert_msg"), "as_string"));
    const cJSON *self = node_input(node, "self");
    sg_error perr = SG_ERROR_INIT;
    const char *s;
    size_t n;
    int rc, prc = 0;

    a->node = dup(g, arg_name(self));
    if (msg && !(a->message = dup(g, msg)))
        return sg_error_set(err, SG_ENOMEM, "out of memory reading asserts");
    if (self && (rc = sg_graph__rebuild(&a->rebuilt, g->pool, scope, self)) != 0)
        return sg_error_set(err, rc, "out of memory reading asserts");
    if (a->rebuilt && sg_expr_sort(a->rebuilt) != SG_SORT_BOOL)
        a->rebuilt = NULL; /* a chain that does not end in a condition */
    if (msg && assert_text(msg, &s, &n)) {
        if ((prc = sg_expr_parse(&a->expr, g->pool, s, n, &perr)) == SG_ENOMEM)
            return sg_error_set(err, prc, "%s assert_msg: %s", field, perr.msg);
        if (prc != 0)
            sg_pool_clear_error(g->pool);
        else
            a->source = SG_GRAPH_EXPR_MESSAGE;
    }
    if (!a->expr && a->rebuilt) {
        a->expr = a->rebuilt;
        a->source = SG_GRAPH_EXPR_NODES;
    } else if (prc != 0) {
        /* the text is there but does not read, and the nodes do not give the condition either */
        return sg_error_set(err, sg__input_code(prc), "%s assert_msg: %s", field, perr.msg);
    }
    return 0;
}

/* The subgraphs of a node's arguments (`{"as_graph": {"name", "graph"}}`): read their asserts. */
static int read_subgraphs(sg_graph *g, const cJSON *node, const char *field, const char *path, int depth,
                          sg_error *err)
{
    const char *target = sg__json_str(sg__json_get(node, "target")), *hop = NULL;
    const cJSON *in;
    size_t k = 0;
    int rc;

    cJSON_ArrayForEach(in, sg__json_get(node, "inputs")) {
        const cJSON *sub = sg__json_get(sg__json_get(in, "arg"), "as_graph");
        const char *name, *subpath;
        char subfield[512];

        k++;
        if (!sub)
            continue;
        name = sg__json_str(sg__json_get(sub, "name"));
        snprintf(subfield, sizeof subfield, "%.300s.inputs[%zu].as_graph", field, k - 1);
        if (!name || !cJSON_IsObject(sg__json_get(sub, "graph")))
            return sg_error_set(err, SG_EINVALID, "%s: %s", subfield,
                                name ? "graph missing or not an object" : "name missing or not a string");
        if (depth >= MAX_SUBGRAPH_DEPTH)
            return sg_error_set(err, SG_ELIMIT, "%s: subgraphs nested deeper than %d", subfield,
                                MAX_SUBGRAPH_DEPTH);
        subpath = path[0] ? dupf(g, "%s/%s", path, name) : dup(g, name);
        if (!hop && target)
            hop = dup(g, target);
        if (!subpath || (target && !hop))
            return sg_error_set(err, SG_ENOMEM, "out of memory reading subgraphs");
        g->nsubgraphs++;
        snprintf(subfield, sizeof subfield, "subgraph %.400s", subpath);
        if ((rc = read_graph_asserts(g, sg__json_get(sub, "graph"), subfield, subpath, hop, depth + 1, err)) != 0)
            return rc;
    }
    return 0;
}

/*
 * The runtime-check nodes of one graph (`field` names it in messages, `path`
 * and `hop` tag its asserts), then those of its subgraphs, in node order.
 */
static int read_graph_asserts(sg_graph *g, const cJSON *graph, const char *field, const char *path,
                              const char *hop, int depth, sg_error *err)
{
    const cJSON *nodes = sg__json_get(graph, "nodes"), *node;
    const cJSON *symints = sg__json_get(graph, "sym_int_values");
    sg_graph__scope scope;
    char nfield[600];
    size_t i = 0;
    int rc = 0;

    if (!cJSON_IsArray(nodes))
        return sg_error_set(err, SG_EINVALID, "%s.nodes: missing or not a list", field);
    if (sg_graph__scope_init(&scope, graph) != 0)
        return sg_error_set(err, SG_ENOMEM, "out of memory reading asserts");
    cJSON_ArrayForEach(node, nodes) {
        const char *target = sg__json_str(sg__json_get(node, "target"));
        sg_graph_assert a;

        memset(&a, 0, sizeof a);
        snprintf(nfield, sizeof nfield, "%.500s.nodes[%zu]", field, i++);
        if (depth == 0)
            g->nnodes++;
        if (!target) {
            rc = sg_error_set(err, SG_EINVALID, "%s.target: missing or not a string", nfield);
            goto cleanup;
        }
        if (strstr(target, "aten._assert_scalar"))
            a.kind = SG_GRAPH_ASSERT_SCALAR;
        else if (strstr(target, "aten.sym_constrain_range_for_size"))
            a.kind = SG_GRAPH_CONSTRAIN_RANGE_FOR_SIZE;
        else if (strstr(target, "aten.sym_constrain_range"))
            a.kind = SG_GRAPH_CONSTRAIN_RANGE;
        else {
            if (strstr(target, "aten._assert_tensor_metadata"))
                g->nmetachecks++;
            /* every other op is carried, not modelled; its subgraphs are read */
            if ((rc = read_subgraphs(g, node, nfield, path, depth, err)) != 0)
                goto cleanup;
            continue;
        }
        a.target = dup(g, target);
        {
            const char *st = sg__json_str(sg__json_get(sg__json_get(node, "metadata"), "stack_trace"));
            if (st && !(a.stack_trace = dup(g, st))) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory reading asserts");
                goto cleanup;
            }
        }
        a.graph = path;
        a.hop = hop;
        if (a.kind == SG_GRAPH_ASSERT_SCALAR) {
            if ((rc = read_assert_scalar(g, &a, node, &scope, nfield, err)) != 0)
                goto cleanup;
        } else {
            a.node = dup(g, arg_name(node_input(node, "size")));
            if ((rc = constrain_expr(&a.expr, g, node, a.kind, symints, nfield, err)) != 0)
                goto cleanup;
            a.source = SG_GRAPH_EXPR_NODES;
        }
        if (!a.target || !a.node
            || sg__grow((void **)&g->asserts, &g->capasserts, g->nasserts + 1, sizeof *g->asserts) != 0) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading asserts");
            goto cleanup;
        }
        g->asserts[g->nasserts++] = a;
    }
cleanup:
    sg_graph__scope_free(&scope);
    return rc;
}

/* The runtime-check nodes of the top-level graph and of every control-flow subgraph. */
static int read_asserts(sg_graph *g, const cJSON *root, sg_error *err)
{
    const cJSON *graph = sg__json_get(sg__json_get(root, "graph_module"), "graph");

    return read_graph_asserts(g, graph, "graph_module.graph", "", NULL, 0, err);
}

/* ---- guards_code ---------------------------------------------------------------- */

#define MAX_GUARDS 100000
#define MAX_GUARD_TEXT 65536

/* The symbolic size of the user input dim a guards_code source `L[path].size()[d]` names,
 * or NULL (another source, a dim beyond the rank, no such input). */
static const sg_expr *source_size(const sg_graph *g, const char *name)
{
    const char *at = NULL, *p, *q;
    size_t plen, i, d = 0;

    if (strncmp(name, "L[", 2) != 0)
        return NULL;
    for (p = strstr(name, ".size()["); p; p = strstr(p + 1, ".size()["))
        at = p; /* the last one: a dict key may hold anything */
    if (!at)
        return NULL;
    for (q = at + 8; *q >= '0' && *q <= '9' && d < 100000; q++)
        d = d * 10 + (size_t)(*q - '0');
    if (q == at + 8 || strcmp(q, "]") != 0)
        return NULL;
    plen = (size_t)(at - name - 1);
    for (i = 0; i < g->ninputs; i++) {
        const sg_graph_input *in = &g->inputs[i];
        if (in->kind == SG_GRAPH_IN_USER && in->tensor && in->path && strlen(in->path) == plen
            && memcmp(in->path, name + 1, plen) == 0)
            return d < in->tensor->ndim ? in->tensor->sizes[d] : NULL;
    }
    /* strict export (dynamo) names the flattened user inputs: L['flat_args'][k] is the k-th
     * input leaf of the signature */
    if (strncmp(name, "L['flat_args'][", 15) == 0) {
        size_t k = 0, n = 0;
        for (q = name + 15; *q >= '0' && *q <= '9' && k < 100000; q++)
            k = k * 10 + (size_t)(*q - '0');
        if (q == name + 15 || q != at - 1 || *q != ']')
            return NULL;
        for (i = 0; i < g->ninputs; i++) {
            const sg_graph_input *in = &g->inputs[i];
            if (in->kind != SG_GRAPH_IN_USER && in->kind != SG_GRAPH_IN_CONSTANT_INPUT)
                continue;
            if (n++ == k)
                return in->kind == SG_GRAPH_IN_USER && in->tensor && d < in->tensor->ndim ? in->tensor->sizes[d] : NULL;
        }
    }
    return NULL;
}

/*
 * `e` (parsed into a scratch pool) rebuilt in the graph's pool with each source replaced by
 * the size it names. NULL when a source names no user input size (`*why` set to its name)
 * or a constructor failed (the pool's recorded error).
 */
static const sg_expr *over_sizes(sg_graph *g, sg_expr_copier *cp, const sg_expr *e, const char **why)
{
    const sg_expr *stack[16], **args = stack, *res = NULL;
    size_t n = sg_expr_nargs(e), i;

    if (sg_expr_kind(e) == SG_SYM) {
        if (!(res = source_size(g, sg_expr_symbol_name(e))))
            *why = sg_expr_symbol_name(e);
        return res;
    }
    if (n == 0)
        return sg_expr_copy(cp, e);
    if (n > 16 && !(args = sg__malloc(n * sizeof *args)))
        return NULL;
    for (i = 0; i < n; i++)
        if (!(args[i] = over_sizes(g, cp, sg_expr_arg(e, i), why)))
            goto cleanup;
    res = sg_expr_apply(g->pool, sg_expr_kind(e), args, n);
cleanup:
    if (args != stack)
        sg_free((void *)args);
    return res;
}

/* One guards_code entry into `gd`: its condition over the symbols, or why it does not read. */
static int read_guard(sg_graph *g, sg_graph_guard *gd, const char *text, sg_error *err)
{
    sg_pool *scratch = NULL;
    sg_expr_copier cp;
    const sg_expr *e = NULL;
    const char *why = NULL;
    sg_error pe = SG_ERROR_INIT;
    char reason[SG_ERROR_MSG_MAX + 64];
    int rc;

    reason[0] = '\0';
    sg_expr_copier_init(&cp, g->pool);
    if (!(gd->text = dup(g, text))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading guards_code");
        goto cleanup;
    }
    if ((rc = sg_pool_new(&scratch, err)) != 0)
        goto cleanup;
    if ((rc = sg_expr_parse(&e, scratch, text, strlen(text), &pe)) != 0) {
        rc = 0;
        if (pe.code == SG_ENOMEM) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading guards_code");
            goto cleanup;
        }
        snprintf(reason, sizeof reason, "does not parse: %s", pe.msg);
    } else if (sg_expr_sort(e) != SG_SORT_BOOL) {
        snprintf(reason, sizeof reason, "not a condition");
    } else if (!(gd->expr = over_sizes(g, &cp, e, &why))) {
        const sg_error *fe = sg_pool_error(g->pool);
        if (fe && fe->code == SG_ENOMEM) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory reading guards_code");
            goto cleanup;
        }
        if (why)
            snprintf(reason, sizeof reason, "'%.200s' is not the size of a user tensor input", why);
        else
            snprintf(reason, sizeof reason, "cannot be rebuilt over the input sizes: %s", fe ? fe->msg : "?");
        sg_pool_clear_error(g->pool);
    }
    if (reason[0] && !(gd->reason = dup(g, reason)))
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading guards_code");
cleanup:
    sg_expr_copier_dispose(&cp);
    sg_pool_free(scratch);
    return rc;
}

/* The top-level `guards_code` (torch >= 2.8): absent, or an array of strings. */
static int read_guards_code(sg_graph *g, const cJSON *root, sg_error *err)
{
    const cJSON *gc = sg__json_get(root, "guards_code"), *it;
    size_t n, i = 0;
    int rc;

    if (!gc || cJSON_IsNull(gc))
        return 0;
    if (!cJSON_IsArray(gc))
        return sg_error_set(err, SG_EINVALID, "guards_code: not an array");
    g->has_guards_code = true;
    n = (size_t)cJSON_GetArraySize(gc);
    if (n > MAX_GUARDS)
        return sg_error_set(err, SG_ELIMIT, "guards_code: %zu entries (at most %d)", n, MAX_GUARDS);
    if (n && !(g->guards = sg__calloc(n, sizeof *g->guards)))
        return sg_error_set(err, SG_ENOMEM, "out of memory reading guards_code");
    cJSON_ArrayForEach(it, gc) {
        const char *text = sg__json_str(it);
        if (!text)
            return sg_error_set(err, SG_EINVALID, "guards_code[%zu]: not a string", i);
        if (strlen(text) > MAX_GUARD_TEXT)
            return sg_error_set(err, SG_ELIMIT, "guards_code[%zu]: longer than %d bytes", i, MAX_GUARD_TEXT);
        if ((rc = read_guard(g, &g->guards[i], text, err)) != 0)
            return rc;
        g->nguards = ++i;
    }
    return 0;
}

/* Add the symbols of `e` not seen yet. */
static int add_symbols(sg_graph *g, const sg_expr *e, sg_error *err)
{
    const sg_expr **syms = NULL;
    size_t n = 0, i, j;
    int rc;

    if (!e)
        return 0;
    if ((rc = sg_expr_symbols(&syms, &n, g->pool, e, err)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        for (j = 0; j < g->nsymbols && g->symbols[j].sym != syms[i]; j++)
            ;
        if (j < g->nsymbols)
            continue;
        if (sg__grow((void **)&g->symbols, &g->capsymbols, g->nsymbols + 1, sizeof *g->symbols) != 0) {
            sg_free(syms);
            return sg_error_set(err, SG_ENOMEM, "out of memory listing symbols");
        }
        memset(&g->symbols[g->nsymbols], 0, sizeof *g->symbols);
        g->symbols[g->nsymbols++].sym = syms[i];
    }
    sg_free(syms);
    return 0;
}

/* Collect the symbols and map each one to its input dim and range. */
static int map_symbols(sg_graph *g, sg_error *err)
{
    size_t i, d, k;
    int rc;

    for (i = 0; i < g->nranges; i++)
        if ((rc = add_symbols(g, g->ranges[i].expr, err)) != 0)
            return rc;
    for (i = 0; i < g->ninputs; i++)
        if (g->inputs[i].kind == SG_GRAPH_IN_USER && g->inputs[i].tensor)
            for (d = 0; d < g->inputs[i].tensor->ndim; d++)
                if ((rc = add_symbols(g, g->inputs[i].tensor->sizes[d], err)) != 0)
                    return rc;
    for (i = 0; i < g->nasserts; i++)
        if ((rc = add_symbols(g, g->asserts[i].expr, err)) != 0)
            return rc;
    for (i = 0; i < g->nguards; i++)
        if ((rc = add_symbols(g, g->guards[i].expr, err)) != 0)
            return rc;
    for (k = 0; k < g->nsymbols; k++) {
        sg_graph_symbol *s = &g->symbols[k];
        for (i = 0; i < g->nranges && !s->range; i++)
            if (g->ranges[i].expr == s->sym)
                s->range = &g->ranges[i];
        for (i = 0; i < g->ninputs && !s->path; i++) {
            const sg_graph_input *in = &g->inputs[i];
            if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
                continue;
            for (d = 0; d < in->tensor->ndim; d++) {
                if (in->tensor->sizes[d] == s->sym) {
                    s->path = in->path;
                    s->input = i;
                    s->dim = d;
                    break;
                }
            }
        }
    }
    return 0;
}

int sg_graph_parse(sg_graph **out, const char *json, size_t len, sg_error *err)
{
    sg_graph *g = NULL;
    cJSON *root = NULL;
    char *copy = NULL;
    size_t clen = len;
    const cJSON *sv;
    sg_int v;
    int rc;

    *out = NULL;
    if (!(copy = sg__strndup(json, len))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading the model JSON");
        goto cleanup;
    }
    if ((rc = sg_archive_json_quote_nonfinite(&copy, &clen, NULL, err)) != 0)
        goto cleanup;
    if ((rc = sg__json_parse(&root, copy, clen, (size_t)1 << 30, SG_JSON_MAX_DEPTH, "model JSON", err)) != 0)
        goto cleanup;
    if (!cJSON_IsObject(root) || !cJSON_IsObject(sg__json_get(root, "graph_module"))
        || !cJSON_IsObject(sg__json_get(sg__json_get(root, "graph_module"), "graph"))) {
        rc = sg_error_set(err, SG_EINVALID, "graph_module.graph: missing or not an object");
        goto cleanup;
    }
    if (!(g = sg__calloc(1, sizeof *g))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading the model JSON");
        goto cleanup;
    }
    if ((rc = sg_pool_new(&g->pool, err)) != 0)
        goto cleanup;
    sv = sg__json_get(root, "schema_version");
    if (sg__json_int(sg__json_get(sv, "major"), &v))
        g->schema_major = (int)v;
    if (sg__json_int(sg__json_get(sv, "minor"), &v))
        g->schema_minor = (int)v;
    if (sg__json_str(sg__json_get(root, "torch_version"))
        && !(g->torch_version = dup(g, sg__json_str(sg__json_get(root, "torch_version"))))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading the model JSON");
        goto cleanup;
    }
    if ((rc = read_signature(g, root, err)) != 0 || (rc = read_ranges(g, root, err)) != 0
        || (rc = read_asserts(g, root, err)) != 0 || (rc = read_guards_code(g, root, err)) != 0
        || (rc = sg_graph__read_kernels(&g->kernels, &g->nkernels, g->pool,
                                        sg__json_get(sg__json_get(root, "graph_module"), "graph"), err)) != 0
        || (rc = map_symbols(g, err)) != 0 || (rc = check_hints(g, err)) != 0)
        goto cleanup;
    *out = g;
    g = NULL;
cleanup:
    if (rc)
        sg__error_one_line(err); /* keys and names come from the file */
    sg_graph_free(g);
    cJSON_Delete(root);
    sg_free(copy);
    return rc;
}

int sg_graph_load(sg_graph **out, sg_archive *a, const char *name, sg_error *err)
{
    char *json = NULL;
    size_t len = 0;
    int rc;

    *out = NULL;
    if ((rc = sg_archive_read_model(&json, &len, NULL, a, name, err)) == 0)
        rc = sg_graph_parse(out, json, len, err);
    sg_free(json);
    return rc;
}

sg_pool *sg_graph_pool(const sg_graph *g) { return g->pool; }

void sg_graph_schema_version(const sg_graph *g, int *major, int *minor)
{
    *major = g->schema_major;
    *minor = g->schema_minor;
}

const char *sg_graph_torch_version(const sg_graph *g) { return g->torch_version; }
size_t sg_graph_input_count(const sg_graph *g) { return g->ninputs; }
const sg_graph_input *sg_graph_input_at(const sg_graph *g, size_t i) { return i < g->ninputs ? &g->inputs[i] : NULL; }
size_t sg_graph_output_count(const sg_graph *g) { return g->noutputs; }
const sg_graph_output *sg_graph_output_at(const sg_graph *g, size_t i) { return i < g->noutputs ? &g->outputs[i] : NULL; }
size_t sg_graph_range_count(const sg_graph *g) { return g->nranges; }
const sg_graph_range *sg_graph_range_at(const sg_graph *g, size_t i) { return i < g->nranges ? &g->ranges[i] : NULL; }
size_t sg_graph_assert_count(const sg_graph *g) { return g->nasserts; }
const sg_graph_assert *sg_graph_assert_at(const sg_graph *g, size_t i) { return i < g->nasserts ? &g->asserts[i] : NULL; }
size_t sg_graph_guard_count(const sg_graph *g) { return g->nguards; }
const sg_graph_guard *sg_graph_guard_at(const sg_graph *g, size_t i) { return i < g->nguards ? &g->guards[i] : NULL; }
bool sg_graph_has_guards_code(const sg_graph *g) { return g->has_guards_code; }
size_t sg_graph_kernel_check_count(const sg_graph *g) { return g->nkernels; }
const sg_graph_kernel_check *sg_graph_kernel_check_at(const sg_graph *g, size_t i)
{
    return i < g->nkernels ? &g->kernels[i] : NULL;
}
size_t sg_graph_symbol_count(const sg_graph *g) { return g->nsymbols; }
const sg_graph_symbol *sg_graph_symbol_at(const sg_graph *g, size_t i) { return i < g->nsymbols ? &g->symbols[i] : NULL; }
size_t sg_graph_node_count(const sg_graph *g) { return g->nnodes; }
size_t sg_graph_subgraph_count(const sg_graph *g) { return g->nsubgraphs; }
size_t sg_graph_metadata_check_count(const sg_graph *g) { return g->nmetachecks; }

const char *sg_graph_dtype_name(int dtype)
{
    static const char *const names[] = {
        [1] = "uint8", [2] = "int8", [3] = "int16", [4] = "int32", [5] = "int64", [6] = "float16",
        [7] = "float32", [8] = "float64", [9] = "complex32", [10] = "complex64", [11] = "complex128",
        [12] = "bool", [13] = "bfloat16", [28] = "uint16", [29] = "float8_e4m3fn", [30] = "float8_e5m2",
        [31] = "float8_e4m3fnuz", [32] = "float8_e5m2fnuz", [33] = "float8_e8m0fnu", [34] = "uint32",
        [35] = "uint64",
    };

    if (dtype > 0 && (size_t)dtype < sizeof names / sizeof names[0] && names[dtype])
        return names[dtype];
    return "unknown";
}
