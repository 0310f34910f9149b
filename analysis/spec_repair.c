/*
 * spec_repair.c - the nearest valid spec for a spec torch refused before
 * tracing (analysis/spec_repair.h, docs/fixes.md). Three steps, each only
 * when it has something to do:
 *
 *  1. structure: the spec is rebuilt on the example inputs' pytree (case.json
 *     `inputs`), as torch's _check_dynamic_shapes compares them: a dict keyed
 *     by unknown names gets the signature's names where the match is
 *     unambiguous (one unknown key, one unnamed argument with tensors) and
 *     loses them otherwise; a positional spec of the wrong length is padded
 *     with None or cut; a dict of dims (one tensor's spec) given for a list or
 *     tuple of tensors goes to each tensor; a list given for a dict maps by
 *     position; a namedtuple's spec becomes that namedtuple (torch matches its
 *     class: the printer names it); a tensor's spec entries beyond its rank are
 *     dropped and a short list padded. The result is read back by the trace's
 *     spec reader (sg_trace_with_spec_json), so it passes the same reader and,
 *     in the caller, the same validator as any spec.
 *  2. examples: a Dim name whose example sizes differ, or a derived dim whose
 *     example is not the derived value of its root's example, is split: the
 *     dims that disagree get a Dim of their own with the same range (typed
 *     edits, sg_trace_edit).
 *  3. a Dim torch refused to build (`Cannot create Dim with inconsistent
 *     min=.., max=..`), when the trace recorded no input at all (the spec
 *     raised before export): there is no spec to rebuild, so the repair is a
 *     drop-in for `Dim` (`repaired_Dim`) that rewrites the refused call:
 *     min == max is the size itself, min > max keeps the larger bound as the
 *     max (which one is wrong cannot be told without the example).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/spec_repair.h"
#include "expr/expr.h"
#include "torch/pyspec.h"
#include "trace/edit.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_DEPTH 64

typedef struct ctx {
    const cJSON *flat;   /* inputs.flat: the leaves' paths (a namedtuple's show its fields) */
    bool lengths;        /* torch 2.7 and later: a tensor's spec list must have its rank */
    sg_spec_repair *out;
    size_t cap;          /* of out->notes */
    size_t cap_split;    /* of out->split */
    bool changed;
    int rc;
} ctx;

static void note(ctx *c, const char *fmt, ...) SG_PRINTF(2, 3);
static void note(ctx *c, const char *fmt, ...)
{
    char buf[1024], *s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->rc)
        return;
    s = sg__strndup(buf, strlen(buf));
    if (!s || sg__grow((void **)&c->out->notes, &c->cap, c->out->nnotes + 1, sizeof *c->out->notes)) {
        sg_free(s);
        c->rc = SG_ENOMEM;
        return;
    }
    c->out->notes[c->out->nnotes++] = s;
}

/* A spec leaf: None, a size, a hint ("AUTO"), a Dim, a derived dim. */
static bool is_leaf(const cJSON *s)
{
    return !s || cJSON_IsNull(s) || cJSON_IsNumber(s) || cJSON_IsString(s)
           || (cJSON_IsObject(s) && (sg__json_get(s, "name") || sg__json_get(s, "derived") || sg__json_get(s, "hint")));
}

/* A short text of a spec leaf for the notes: the Dim's name, its derived form, or the JSON. */
static void leaf_text(char *buf, size_t cap, const cJSON *j)
{
    const char *s = sg__json_str(sg__json_get(j, "name"));
    char *p;
    if (!s)
        s = sg__json_str(sg__json_get(j, "derived"));
    if (s) {
        snprintf(buf, cap, "%s", s);
        return;
    }
    if (!j || cJSON_IsNull(j)) {
        snprintf(buf, cap, "None");
        return;
    }
    p = cJSON_PrintUnformatted(j);
    snprintf(buf, cap, "%s", p ? p : "None");
    cJSON_free(p);
}

static cJSON *dup(ctx *c, const cJSON *j)
{
    cJSON *d = j ? cJSON_Duplicate(j, 1) : cJSON_CreateNull();
    if (!d)
        c->rc = SG_ENOMEM;
    return d;
}

/* A new container like `like` (a list, or {"__tuple__": [...]}) holding `items`. */
static cJSON *wrap_like(ctx *c, const cJSON *like, cJSON *items)
{
    cJSON *o;
    if (!items || cJSON_IsArray(like))
        return items;
    if (!(o = cJSON_CreateObject())) {
        cJSON_Delete(items);
        c->rc = SG_ENOMEM;
        return NULL;
    }
    cJSON_AddItemToObject(o, "__tuple__", items);
    return o;
}

/* One tensor's spec, its entries fitted to the tensor's rank. */
static cJSON *tensor(ctx *c, const cJSON *shape, const cJSON *spec, const char *path)
{
    int rank = cJSON_GetArraySize(shape), n, k;
    const cJSON *items = sg__json_seq(spec), *it;
    cJSON *res, *arr;
    char lt[256];

    if (!spec || cJSON_IsNull(spec))
        return dup(c, spec);
    if (items) {
        n = cJSON_GetArraySize(items);
        if (n == rank || (n < rank && !c->lengths) || (n > rank && !c->lengths))
            return dup(c, spec);
        if (!(arr = cJSON_CreateArray())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        for (k = 0; k < rank; k++) {
            cJSON *e = k < n ? dup(c, cJSON_GetArrayItem(items, k)) : cJSON_CreateNull();
            if (!e) {
                cJSON_Delete(arr);
                c->rc = SG_ENOMEM;
                return NULL;
            }
            cJSON_AddItemToArray(arr, e);
        }
        for (k = rank; k < n; k++) {
            it = cJSON_GetArrayItem(items, k);
            leaf_text(lt, sizeof lt, it);
            note(c, "`dynamic_shapes%s` has %d entries for a tensor of %d dim%s: entry %d (%s) dropped", path, n, rank,
                 rank == 1 ? "" : "s", k, lt);
        }
        if (n < rank)
            note(c, "`dynamic_shapes%s` has %d entries for a tensor of %d dims: padded with None (static)", path, n, rank);
        c->changed = true;
        return wrap_like(c, spec, arr);
    }
    if (is_leaf(spec) || !cJSON_IsObject(spec))
        return dup(c, spec);
    if (!(res = cJSON_CreateObject())) {
        c->rc = SG_ENOMEM;
        return NULL;
    }
    cJSON_ArrayForEach(it, spec) {
        char *end;
        long d = strtol(it->string, &end, 10);
        cJSON *e;
        if (*end == '\0' && (d >= rank || d < -rank)) {
            leaf_text(lt, sizeof lt, it);
            note(c, "`dynamic_shapes%s` names dim %ld (%s) of a tensor of %d dim%s: dropped", path, d, lt, rank,
                 rank == 1 ? "" : "s");
            c->changed = true;
            continue;
        }
        if (!(e = dup(c, it))) {
            cJSON_Delete(res);
            return NULL;
        }
        cJSON_AddItemToObject(res, it->string, e);
    }
    return res;
}

/* The fields of the namedtuple input at `path` (its leaves' paths go through ".field"), or NULL. */
static cJSON *nt_fields(ctx *c, const char *path)
{
    const cJSON *it;
    size_t n = strlen(path);
    cJSON *arr = NULL;
    cJSON_ArrayForEach(it, c->flat) {
        const char *p = sg__json_str(sg__json_get(it, "path")), *f;
        size_t len = 0;
        const cJSON *x;
        bool seen = false;
        if (!p || strncmp(p, path, n) != 0 || p[n] != '.')
            continue;
        f = p + n + 1;
        while ((f[len] >= 'a' && f[len] <= 'z') || (f[len] >= 'A' && f[len] <= 'Z') || (f[len] >= '0' && f[len] <= '9')
               || f[len] == '_')
            len++;
        if (!len)
            continue;
        if (!arr && !(arr = cJSON_CreateArray())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        cJSON_ArrayForEach(x, arr)
            seen |= strlen(x->valuestring) == len && strncmp(x->valuestring, f, len) == 0;
        if (!seen) {
            char buf[256];
            snprintf(buf, sizeof buf, "%.*s", (int)(len < 200 ? len : 200), f);
            cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
        }
    }
    return arr;
}

static cJSON *node(ctx *c, const cJSON *in, const cJSON *spec, const char *path, int depth);
static cJSON *auto_spec(ctx *c, const cJSON *in, int depth);

/* Do two inputs have the same tensor shape? */
static bool same_shape(const cJSON *a, const cJSON *b)
{
    const cJSON *sa = sg__json_get(a, "tensor"), *sb = sg__json_get(b, "tensor");
    int k, n = cJSON_GetArraySize(sa);
    if (!cJSON_IsArray(sa) || !cJSON_IsArray(sb) || n != cJSON_GetArraySize(sb))
        return false;
    for (k = 0; k < n; k++)
        if (cJSON_GetArrayItem(sa, k)->valuedouble != cJSON_GetArrayItem(sb, k)->valuedouble)
            return false;
    return true;
}

/*
 * The spec of entry `k` (input `in`) that a short spec left out, `done` holding the entries before it
 * and `input_of(j)` their inputs: the spec of the last earlier tensor of the same shape (a shared Dim
 * is always accepted where the examples agree, and torch reports its range as given), else Dim.AUTO
 * for each dim (auto_spec). `*copied` says which.
 */
static cJSON *pad_spec(ctx *c, const cJSON *in, int k, const cJSON *done, const cJSON *inputs, const cJSON *more,
                       bool *copied)
{
    int j, na = cJSON_GetArraySize(inputs);
    *copied = false;
    for (j = k - 1; j >= 0 && sg__json_get(in, "tensor"); j--) {
        const cJSON *pj = j < na ? cJSON_GetArrayItem(inputs, j) : cJSON_GetArrayItem(more, j - na);
        const cJSON *sj = cJSON_GetArrayItem(done, j);
        if (sj && !cJSON_IsNull(sj) && same_shape(pj, in)) {
            *copied = true;
            return dup(c, sj);
        }
    }
    return auto_spec(c, in, 0);
}

/*
 * The spec of an input the spec left out (a short tuple): Dim.AUTO for every dim of its tensors,
 * None elsewhere. Not None for a tensor: a static dim that the model relates to a Dim of another
 * input (x + z) makes torch specialise that Dim and refuse the spec; AUTO lets torch decide.
 */
static cJSON *auto_spec(ctx *c, const cJSON *in, int depth)
{
    const cJSON *kids, *it;
    cJSON *res;
    int k, rank;
    if (!in || depth > MAX_DEPTH)
        return cJSON_CreateNull();
    if ((kids = sg__json_get(in, "tensor")) != NULL) {
        char key[32];
        rank = cJSON_GetArraySize(kids);
        if (!rank || !(res = cJSON_CreateObject()))
            return rank ? NULL : cJSON_CreateNull();
        for (k = 0; k < rank; k++) {
            snprintf(key, sizeof key, "%d", k);
            cJSON_AddItemToObject(res, key, cJSON_CreateString("AUTO"));
        }
        return res;
    }
    if ((kids = sg__json_get(in, "list")) != NULL || (kids = sg__json_get(in, "tuple")) != NULL) {
        cJSON *arr = cJSON_CreateArray();
        if (!arr)
            return NULL;
        cJSON_ArrayForEach(it, kids)
            cJSON_AddItemToArray(arr, auto_spec(c, it, depth + 1));
        if (sg__json_get(in, "list"))
            return arr;
        if (!(res = cJSON_CreateObject())) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToObject(res, "__tuple__", arr);
        return res;
    }
    if ((kids = sg__json_get(in, "dict")) != NULL) {
        if (!(res = cJSON_CreateObject()))
            return NULL;
        cJSON_ArrayForEach(it, kids)
            cJSON_AddItemToObject(res, it->string, auto_spec(c, it, depth + 1));
        return res;
    }
    return cJSON_CreateNull();
}

/* A list or tuple input (`kids`) and its spec. */
static cJSON *sequence(ctx *c, const cJSON *in, const cJSON *kids, const cJSON *spec, const char *path, int depth)
{
    int n = cJSON_GetArraySize(kids), ns, k;
    const cJSON *sitems = sg__json_seq(spec), *sit, *it;
    bool tuple = sg__json_get(in, "tuple") != NULL, per_tensor = true, by_index = true;
    cJSON *arr, *fields, *res;
    char sub[1024];

    if (!sitems && cJSON_IsObject(spec) && !is_leaf(spec)) {
        /* a dict for a list: one tensor's dims, or positions as keys */
        cJSON_ArrayForEach(it, spec) {
            per_tensor &= sg__json_index_key(it->string) && is_leaf(it);
            by_index &= sg__json_index_key(it->string) && atol(it->string) < n;
        }
        cJSON_ArrayForEach(it, kids)
            per_tensor &= sg__json_get(it, "tensor") != NULL;
        if (!per_tensor && !by_index)
            return dup(c, spec);
        if (!(arr = cJSON_CreateArray())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        k = 0;
        cJSON_ArrayForEach(it, kids) {
            char key[32];
            snprintf(sub, sizeof sub, "%.900s[%d]", path, k);
            snprintf(key, sizeof key, "%d", k);
            cJSON_AddItemToArray(arr, node(c, it, per_tensor ? spec : sg__json_get(spec, key), sub, depth + 1));
            k++;
        }
        if (per_tensor)
            note(c, "`dynamic_shapes%s` is a dict of dims (one tensor's spec) for a %s of %d tensors: rebuilt as a %s "
                    "with that spec for each tensor", path, tuple ? "tuple" : "list", n, tuple ? "tuple" : "list");
        else
            note(c, "`dynamic_shapes%s` is a dict keyed by position for a %s: rebuilt as a %s", path,
                 tuple ? "tuple" : "list", tuple ? "tuple" : "list");
        c->changed = true;
        sitems = NULL;
    } else if (sitems) {
        ns = cJSON_GetArraySize(sitems);
        if (!(arr = cJSON_CreateArray())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        bool copied = false, any_copied = false;
        k = 0;
        sit = sitems->child; /* item k of sitems, walked along (not looked up: O(k) each) */
        cJSON_ArrayForEach(it, kids) {
            snprintf(sub, sizeof sub, "%.900s[%d]", path, k);
            cJSON_AddItemToArray(arr, k < ns ? node(c, it, sit, sub, depth + 1)
                                             : pad_spec(c, it, k, arr, kids, NULL, &copied));
            sit = sit ? sit->next : NULL;
            any_copied |= copied;
            k++;
        }
        if (ns < n) {
            note(c, "`dynamic_shapes%s` has %d entries for %d inputs: padded, %s (None, static, would make torch "
                    "specialise a Dim the model relates it to)", path, ns, n,
                 any_copied ? "a left-out tensor with the spec of the last earlier tensor of its shape (its Dims shared)"
                            : "Dim.AUTO for each dim of a left-out tensor");
            c->changed = true;
        } else if (ns > n) {
            note(c, "`dynamic_shapes%s` has %d entries for %d inputs: the last %d dropped", path, ns, n, ns - n);
            c->changed = true;
        }
    } else {
        return dup(c, spec);
    }
    if (c->rc) {
        cJSON_Delete(arr);
        return NULL;
    }
    fields = tuple ? nt_fields(c, path) : NULL;
    if (fields && cJSON_GetArraySize(fields) != n) {
        cJSON_Delete(fields);
        fields = NULL;
    }
    if (!tuple && !fields)
        return arr;
    if (!(res = cJSON_CreateObject())) {
        cJSON_Delete(arr);
        cJSON_Delete(fields);
        c->rc = SG_ENOMEM;
        return NULL;
    }
    cJSON_AddItemToObject(res, "__tuple__", arr);
    if (fields) {
        /* torch matches a namedtuple's spec by its class: the printer writes that class */
        if (!sg__json_get(spec, "__fields__")) {
            note(c, "`inputs%s` is a namedtuple: its spec must be that namedtuple (a plain tuple or list is refused)",
                 path);
            c->changed = true;
        }
        cJSON_AddItemToObject(res, "__fields__", fields);
    }
    return res;
}

/* A dict input (`kids`) and its spec. */
static cJSON *mapping(ctx *c, const cJSON *kids, const cJSON *spec, const char *path, int depth)
{
    const cJSON *sitems = sg__json_seq(spec), *it;
    cJSON *res;
    char sub[1024];
    int k = 0;

    if (!sitems && (is_leaf(spec) || !cJSON_IsObject(spec)))
        return dup(c, spec);
    if (!(res = cJSON_CreateObject())) {
        c->rc = SG_ENOMEM;
        return NULL;
    }
    cJSON_ArrayForEach(it, kids) {
        const cJSON *s = sitems ? cJSON_GetArrayItem(sitems, k) : sg__json_get(spec, it->string);
        snprintf(sub, sizeof sub, "%.900s['%.100s']", path, it->string);
        cJSON_AddItemToObject(res, it->string, node(c, it, s, sub, depth + 1));
        k++;
    }
    if (sitems) {
        note(c, "`dynamic_shapes%s` is a list for a dict: rebuilt as a dict by the inputs' keys, in order", path);
        c->changed = true;
    } else {
        cJSON_ArrayForEach(it, spec)
            if (!sg__json_get(kids, it->string)) {
                note(c, "`dynamic_shapes%s` has key '%s' that `inputs%s` does not have: dropped", path, it->string, path);
                c->changed = true;
            }
    }
    return res;
}

static cJSON *node(ctx *c, const cJSON *in, const cJSON *spec, const char *path, int depth)
{
    const cJSON *kids;
    if (c->rc)
        return NULL;
    if (depth > MAX_DEPTH || !in || cJSON_IsNull(in) || !spec || cJSON_IsNull(spec))
        return dup(c, spec);
    if ((kids = sg__json_get(in, "tensor")) != NULL)
        return tensor(c, kids, spec, path);
    if ((kids = sg__json_get(in, "list")) != NULL || (kids = sg__json_get(in, "tuple")) != NULL)
        return sequence(c, in, kids, spec, path, depth);
    if ((kids = sg__json_get(in, "dict")) != NULL)
        return mapping(c, kids, spec, path, depth);
    return dup(c, spec);
}

/* Does the input subtree `in` hold a tensor? */
static bool has_tensor(const cJSON *in, int depth)
{
    const cJSON *it, *kids;
    if (!in || depth > MAX_DEPTH)
        return false;
    if (sg__json_get(in, "tensor"))
        return true;
    if (!(kids = sg__json_get(in, "list")) && !(kids = sg__json_get(in, "tuple")) && !(kids = sg__json_get(in, "dict")))
        return false;
    cJSON_ArrayForEach(it, kids)
        if (has_tensor(it, depth + 1))
            return true;
    return false;
}

/* The input of argument `name` (args by arg_names, then kwargs), or NULL. */
static const cJSON *arg_input(const cJSON *ij, const char *name)
{
    const cJSON *names = sg__json_get(ij, "arg_names"), *args = sg__json_get(ij, "args"), *it;
    int i = 0;
    cJSON_ArrayForEach(it, names) {
        if (sg__json_str(it) && strcmp(sg__json_str(it), name) == 0)
            return cJSON_GetArrayItem(args, i);
        i++;
    }
    return sg__json_get(sg__json_get(ij, "kwargs"), name);
}

/* Is `name` a *args / **kwargs parameter of the signature? */
static bool starred(const cJSON *ij, const char *name)
{
    const char *sig = sg__json_str(sg__json_get(ij, "signature")), *p;
    size_t n = strlen(name);
    for (p = sig; p && (p = strchr(p, '*')) != NULL; p++) {
        const char *q = p[1] == '*' ? p + 2 : p + 1;
        if (strncmp(q, name, n) == 0 && (q[n] == ',' || q[n] == ')' || q[n] == ':'))
            return true;
    }
    return false;
}

/* The top level: by argument name, or positional over args then kwargs. */
static cJSON *top(ctx *c, const cJSON *ij, const cJSON *spec)
{
    const cJSON *names = sg__json_get(ij, "arg_names"), *args = sg__json_get(ij, "args"),
                *kwargs = sg__json_get(ij, "kwargs"), *sitems = sg__json_seq(spec), *it;
    cJSON *res, *arr;
    char sub[512];
    int k = 0, n, ns;

    if (sitems) {
        n = cJSON_GetArraySize(args) + (cJSON_IsObject(kwargs) ? cJSON_GetArraySize(kwargs) : 0);
        ns = cJSON_GetArraySize(sitems);
        if (!(arr = cJSON_CreateArray())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        bool copied = false, any_copied = false;
        for (k = 0; k < n; k++) {
            const cJSON *in = k < cJSON_GetArraySize(args) ? cJSON_GetArrayItem(args, k)
                                                            : cJSON_GetArrayItem(kwargs, k - cJSON_GetArraySize(args));
            snprintf(sub, sizeof sub, "[%d]", k);
            cJSON_AddItemToArray(arr, k < ns ? node(c, in, cJSON_GetArrayItem(sitems, k), sub, 0)
                                             : pad_spec(c, in, k, arr, args, kwargs, &copied));
            any_copied |= copied;
        }
        if (ns < n) {
            note(c, "`dynamic_shapes` has %d entries for %d inputs: padded, %s (None, static, would make torch "
                    "specialise a Dim the model relates it to)", ns, n,
                 any_copied ? "a left-out tensor with the spec of the last earlier tensor of its shape (its Dims shared)"
                            : "Dim.AUTO for each dim of a left-out tensor");
            c->changed = true;
        } else if (ns > n) {
            note(c, "`dynamic_shapes` has %d entries for %d inputs: the last %d dropped", ns, n, ns - n);
            c->changed = true;
        }
        return wrap_like(c, spec, arr);
    }
    if (!cJSON_IsObject(spec) || !cJSON_IsArray(names))
        return dup(c, spec);
    {
        /* unknown keys: renamed to the one argument with tensors the spec does not name, when there is
         * exactly one of each; dropped otherwise */
        const char *unnamed = NULL;
        int nunknown = 0, nunnamed = 0;
        cJSON_ArrayForEach(it, spec)
            nunknown += !arg_input(ij, it->string) && !starred(ij, it->string);
        cJSON_ArrayForEach(it, names) {
            const char *nm = sg__json_str(it);
            if (nm && !sg__json_get(spec, nm) && has_tensor(arg_input(ij, nm), 0)) {
                unnamed = nm;
                nunnamed++;
            }
        }
        if (cJSON_IsObject(kwargs))
            cJSON_ArrayForEach(it, kwargs)
                if (!sg__json_get(spec, it->string) && has_tensor(it, 0)) {
                    unnamed = it->string;
                    nunnamed++;
                }
        if (!(res = cJSON_CreateObject())) {
            c->rc = SG_ENOMEM;
            return NULL;
        }
        cJSON_ArrayForEach(it, spec) {
            const char *key = it->string;
            const cJSON *in = arg_input(ij, key);
            if (!in && !starred(ij, key)) {
                if (nunknown == 1 && nunnamed == 1) {
                    note(c, "`dynamic_shapes` key '%s' is not an argument of the signature %s: renamed to '%s', the one "
                            "argument with tensors it does not name", key,
                         sg__json_str(sg__json_get(ij, "signature")) ? sg__json_str(sg__json_get(ij, "signature")) : "",
                         unnamed);
                    key = unnamed;
                    in = arg_input(ij, key);
                } else {
                    note(c, "`dynamic_shapes` key '%s' is not an argument of the signature%s: dropped", key,
                         nunknown > 1 || nunnamed > 1 ? " (which argument it means is ambiguous)" : "");
                    c->changed = true;
                    continue;
                }
                c->changed = true;
            }
            snprintf(sub, sizeof sub, "['%.400s']", key);
            cJSON_AddItemToObject(res, key, starred(ij, key) ? dup(c, it) : node(c, in, it, sub, 0));
        }
    }
    return res;
}

/* One split: input dim `i` was stated equal to a*(dim j) + b by the spec, and its example is not. */
typedef struct split_rec {
    size_t i, j;
    sg_int a, b;
} split_rec;

/*
 * Is guard `g` exactly the negation of the relation the spec stated, vi == a*vj + b (Ne(X, Y) with
 * X - Y = +-(vi - a*vj - b) over the two symbols)? torch records that guard when it checks the
 * spec's equality against the examples (it fails there): it says nothing about the model.
 */
static bool spec_relation_guard(const sg_expr *g, const sg_expr *vi, const sg_expr *vj, sg_int a, sg_int b)
{
    const sg_expr *si, *sj, *sx, *sy;
    sg_int pi, qi, pj, qj, ax, bx, ay, by;
    int k, c;
    if (!g || !vi || !vj || sg_expr_kind(g) != SG_NE || sg_expr_nargs(g) != 2 || !sg_expr_affine(vi, &si, &pi, &qi)
        || !sg_expr_affine(vj, &sj, &pj, &qj) || !si || !sj || si == sj)
        return false;
    for (k = 0; k < 2; k++) {
        const sg_expr *x = sg_expr_arg(g, (size_t)k), *y = sg_expr_arg(g, (size_t)(1 - k));
        if (!sg_expr_affine(x, &sx, &ax, &bx) || !sg_expr_affine(y, &sy, &ay, &by) || !sx || !sy)
            continue;
        if (sx != si || sy != sj)
            continue;
        /* X - Y = ax*si - ay*sj + (bx - by) against c*(pi*si - a*pj*sj + qi - a*qj - b) */
        for (c = -1; c <= 1; c += 2)
            if (ax == c * pi && ay == c * a * pj && bx - by == c * (qi - a * qj - b))
                return true;
    }
    return false;
}

/* Step 2: split the Dims whose examples disagree. */
static int split_dims(sg_trace **out, const sg_trace *t, ctx *c, sg_error *err)
{
    size_t n = 0, i, j;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    char **newname = NULL, buf[300];
    split_rec *sp = NULL;
    size_t nsp = 0;
    sg_spec_edits e;
    int rc = 0;

    *out = NULL;
    memset(&e, 0, sizeof e);
    if (!n)
        return 0;
    newname = sg__calloc(n, sizeof *newname);
    sp = sg__calloc(n, sizeof *sp);
    if (!newname || !sp) {
        sg_free(newname);
        sg_free(sp);
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    }
    for (i = 0; i < n && !rc; i++) {
        const sg_input_dim *d = &in[i];
        sg_int a, b, rs = 0;
        bool split = false, have_root = false;
        if (d->kind == SG_SPEC_DIM) {
            for (j = 0; j < i; j++)
                if (in[j].kind == SG_SPEC_DIM && strcmp(in[j].name, d->name) == 0)
                    break;
            split = j < i && in[j].size != d->size;
            if (split) {
                /* another dim of this name and size already split: the same new Dim */
                size_t k;
                for (k = j + 1; k < i; k++)
                    if (newname[k] && in[k].kind == SG_SPEC_DIM && strcmp(in[k].name, d->name) == 0
                        && in[k].size == d->size)
                        break;
                if (k < i) {
                    if (!(newname[i] = sg__strndup(newname[k], strlen(newname[k]))))
                        rc = SG_ENOMEM;
                } else {
                    int m = 1;
                    bool taken;
                    do {
                        snprintf(buf, sizeof buf, "%.200s_%d", d->name, m++);
                        taken = false;
                        for (k = 0; k < n; k++)
                            taken |= (in[k].kind == SG_SPEC_DIM && strcmp(in[k].name, buf) == 0)
                                     || (newname[k] && strcmp(newname[k], buf) == 0);
                    } while (taken);
                    if (!(newname[i] = sg__strndup(buf, strlen(buf))))
                        rc = SG_ENOMEM;
                    else {
                        char x[SG_INT_STRLEN], y[SG_INT_STRLEN];
                        note(c, "%s = %s but %s = %s share Dim '%s': %s gets a Dim of its own, '%s' (same range); a "
                                "shared Dim needs equal example sizes", d->source, sg_int_format(x, d->size),
                             in[j].source, sg_int_format(y, in[j].size), d->name, d->source, buf);
                    }
                }
                if (!rc) {
                    sp[nsp].i = i;
                    sp[nsp].j = j;
                    sp[nsp].a = 1;
                    sp[nsp++].b = 0;
                    rc = sg_spec_edits__dim(&e, i, newname[i], true, d->min, d->max, err);
                }
            }
        } else if (d->kind == SG_SPEC_DERIVED && d->root_name && sg_trace__derived_affine(d, &a, &b)) {
            for (j = 0; j < n; j++)
                if (in[j].kind == SG_SPEC_DIM && strcmp(in[j].name, d->root_name) == 0) {
                    rs = in[j].size;
                    have_root = true;
                    break;
                }
            if (have_root && a * rs + b != d->size) {
                size_t k = sg_pyspec__ident(buf, sizeof buf - 24, d->path, "d");
                snprintf(buf + k, sizeof buf - k, "_%d", d->dim);
                if (!(newname[i] = sg__strndup(buf, strlen(buf))))
                    rc = SG_ENOMEM;
                else {
                    char x[SG_INT_STRLEN], y[SG_INT_STRLEN];
                    note(c, "%s = %s is not %s at %s = %s: it gets a Dim of its own, '%s', with the derived range "
                            "(or write the derived form its example has)", d->source, sg_int_format(x, d->size), d->name,
                         d->root_name, sg_int_format(y, rs), buf);
                    sp[nsp].i = i;
                    sp[nsp].j = j;
                    sp[nsp].a = a;
                    sp[nsp++].b = b;
                    rc = sg_spec_edits__dim(&e, i, buf, true, d->min, d->max, err);
                }
            }
        }
    }
    for (i = 0; i < n && !rc; i++) {
        size_t k;
        bool seen = false;
        if (!newname[i])
            continue;
        for (k = 0; k < c->out->nsplit; k++)
            seen |= strcmp(c->out->split[k], newname[i]) == 0;
        if (seen)
            continue;
        if (sg__grow((void **)&c->out->split, &c->cap_split, c->out->nsplit + 1, sizeof *c->out->split))
            rc = SG_ENOMEM;
        else
            c->out->split[c->out->nsplit++] = newname[i];
        newname[i] = NULL;
    }
    if (!rc && e.n && (rc = sg_trace_edit(out, t, &e, err)) != 0 && rc != SG_ENOMEM) {
        note(c, "split Dims rejected: %s", err ? err->msg : "invalid");
        rc = 0;
    }
    if (!rc && *out && nsp) {
        /* the guards torch recorded for the relations the spec stated and the examples broke go */
        size_t ng = 0, nin2 = 0, k, dropped = 0;
        const sg_guard *g = sg_trace_guards(*out, &ng);
        const sg_input_dim *in2 = sg_trace_inputs(*out, &nin2);
        bool *drop = sg__calloc(ng + 1, sizeof *drop);
        if (!drop) {
            rc = SG_ENOMEM;
        } else {
            for (k = 0; k < ng; k++)
                for (j = 0; j < nsp && !drop[k]; j++)
                    if (sp[j].i < nin2 && sp[j].j < nin2
                        && spec_relation_guard(g[k].expr, in2[sp[j].i].value, in2[sp[j].j].value, sp[j].a, sp[j].b)) {
                        drop[k] = true;
                        dropped++;
                        note(c, "guard %s dropped from the re-check: torch recorded it checking the spec's own "
                                "relation %s = %s against the examples, not the model", g[k].text ? g[k].text : "?",
                             in[sp[j].i].source, in[sp[j].i].name);
                    }
            sg_trace__drop_guards(*out, drop);
            sg_free(drop);
        }
        (void)dropped;
    }
    sg_spec_edits__dispose(&e);
    for (i = 0; i < n; i++)
        sg_free(newname[i]);
    sg_free(newname);
    sg_free(sp);
    return rc == SG_ENOMEM ? sg_error_set(err, SG_ENOMEM, "out of memory") : rc;
}

/* Step 3: "Cannot create Dim with inconsistent min=A, max=B" with nothing recorded after it. */
static int dim_rewrite(ctx *c, const sg_trace *t)
{
    const char *m = sg_trace_torch_error_message(t), *p;
    static const char KEY[] = "Cannot create Dim with inconsistent min=";
    long long lo = 0, hi;
    char lo_txt[32];
    bool lo_none = false;
    char *end;
    sg_buf b;
    size_t n = 0;

    sg_trace_inputs(t, &n);
    if (!m || n || !(p = strstr(m, KEY)))
        return 0;
    p += sizeof KEY - 1;
    if (strncmp(p, "None", 4) == 0) {
        lo_none = true;
        p += 4;
    } else {
        lo = strtoll(p, &end, 10);
        if (end == p)
            return 0;
        p = end;
    }
    if (strncmp(p, ", max=", 6) != 0)
        return 0;
    hi = strtoll(p + 6, &end, 10);
    if (end == p + 6)
        return 0;
    if (lo_none)
        lo = 0;
    if (lo_none)
        snprintf(lo_txt, sizeof lo_txt, "None");
    else
        snprintf(lo_txt, sizeof lo_txt, "%lld", lo);
    sg_buf_init(&b, 1 << 14);
    sg_buf_puts(&b, "from torch.export import Dim\n\n\n");
    sg_buf_puts(&b, "def repaired_Dim(name, min=None, max=None):\n");
    if (lo == hi) {
        sg_buf_printf(&b, "    \"\"\"Dim, except for Dim(name, min=%s, max=%lld), which torch refuses (a Dim needs "
                          "min < max): a dim of one size is written as that size.\"\"\"\n", lo_txt, hi);
        sg_buf_printf(&b, "    if (min, max) == (%s, %lld):\n        return %lld\n", lo_txt, hi, hi);
        note(c, "torch refused Dim(..., min=%s, max=%lld) before recording the inputs: a dim of one size is that size, "
                "`%lld` in place of the Dim (repaired_Dim does it where the spec calls Dim)", lo_txt, hi, hi);
    } else {
        sg_buf_printf(&b, "    \"\"\"Dim, except for Dim(name, min=%s, max=%lld), which torch refuses (a Dim needs "
                          "min < max): the larger bound is kept as the max, the min dropped.\"\"\"\n", lo_txt, hi);
        sg_buf_printf(&b, "    if (min, max) == (%s, %lld):\n        return Dim(name, max=%lld)\n", lo_txt, hi,
                      lo > hi ? lo : hi);
        note(c, "torch refused Dim(..., min=%s, max=%lld) before recording the inputs: min > max cannot both hold, and "
                "without the example which bound is wrong cannot be told: the repair keeps the larger bound as the max "
                "and drops the min, Dim(name, max=%lld); if the bounds were swapped, Dim(name, min=%lld, max=%lld) with "
                "the example inside (repaired_Dim does it where the spec calls Dim)", lo_txt, hi, lo > hi ? lo : hi,
             lo < hi ? lo : hi, lo > hi ? lo : hi);
    }
    sg_buf_puts(&b, "    return Dim(name, min=min, max=max)\n");
    if (b.failed) {
        sg_buf_dispose(&b);
        return SG_ENOMEM;
    }
    c->out->python = sg_buf_take(&b);
    return c->out->python ? 0 : SG_ENOMEM;
}

int sg_spec_repair_structure(sg_spec_repair *out, const sg_trace *t, sg_error *err)
{
    const char *spec = t ? sg_trace_dynamic_shapes_json(t) : NULL, *ij = t ? sg_trace_inputs_json(t) : NULL,
               *v = t ? sg_trace_torch_version(t) : NULL;
    cJSON *sj = NULL, *ijj = NULL, *fixed = NULL;
    sg_trace *tr = NULL, *tr2 = NULL;
    char *text = NULL;
    ctx c;
    int rc = 0;

    if (!out)
        return sg_error_set(err, SG_EINVALID, "sg_spec_repair_structure: no output");
    memset(out, 0, sizeof *out);
    if (!t)
        return sg_error_set(err, SG_EINVALID, "sg_spec_repair_structure: no trace");
    memset(&c, 0, sizeof c);
    c.out = out;
    c.lengths = !(v && v[0] == '2' && v[1] == '.' && (v[2] >= '0' && v[2] <= '6') && (v[3] < '0' || v[3] > '9'));
    if ((rc = dim_rewrite(&c, t)) != 0 || c.rc)
        goto cleanup;
    if (out->python)
        goto cleanup;
    if (spec && ij) {
        /* sg__json_parse: a bound such as sys.maxsize stays an exact integer (a Raw node, printed
         * back as its digits), where cJSON's double wrote 9.2233720368547758e+18 */
        if ((rc = sg__json_parse(&sj, spec, strlen(spec), SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, "spec", err)) != 0 ||
            (rc = sg__json_parse(&ijj, ij, strlen(ij), SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, "inputs", err)) != 0)
            goto cleanup;
        c.flat = sg__json_get(ijj, "flat");
        fixed = top(&c, ijj, sj);
        if (c.rc || !fixed) {
            rc = c.rc ? c.rc : SG_ENOMEM;
            goto cleanup;
        }
        if (c.changed) {
            if (!(text = cJSON_PrintUnformatted(fixed))) {
                rc = SG_ENOMEM;
                goto cleanup;
            }
            if ((rc = sg_trace_with_spec_json(&tr, t, text, strlen(text), "repaired spec", err)) != 0) {
                if (rc == SG_ENOMEM)
                    goto cleanup;
                note(&c, "repaired spec rejected: %s", err ? err->msg : "invalid");
                rc = 0;
                tr = NULL;
            }
        }
    }
    if ((rc = split_dims(&tr2, tr ? tr : t, &c, err)) != 0)
        goto cleanup;
    if (tr2) {
        sg_trace_free(tr);
        tr = tr2;
        tr2 = NULL;
    }
    out->trace = tr;
    tr = NULL;
cleanup:
    if (!rc && c.rc)
        rc = c.rc;
    cJSON_free(text);
    cJSON_Delete(sj);
    cJSON_Delete(ijj);
    cJSON_Delete(fixed);
    sg_trace_free(tr);
    sg_trace_free(tr2);
    if (rc) {
        sg_spec_repair_dispose(out);
        return rc == SG_ENOMEM ? sg_error_set(err, SG_ENOMEM, "out of memory repairing the spec") : rc;
    }
    return 0;
}

void sg_spec_repair_dispose(sg_spec_repair *r)
{
    size_t i;
    if (!r)
        return;
    sg_trace_free(r->trace);
    sg_free(r->python);
    for (i = 0; i < r->nnotes; i++)
        sg_free(r->notes[i]);
    sg_free(r->notes);
    for (i = 0; i < r->nsplit; i++)
        sg_free(r->split[i]);
    sg_free(r->split);
    memset(r, 0, sizeof *r);
}
