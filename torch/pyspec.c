/*
 * pyspec.c - a structured dynamic_shapes spec as paste-ready Python
 * (sg_spec_to_python, include/shapegate/fixes.h).
 *
 * The structured form (tests/corpus/README.md) is walked beside the example
 * inputs' pytree (case.json `inputs`), so dicts, lists, tuples and kwargs come
 * out as the inputs have them: `{'x': {0: dx}, 'ys': [{0: dy}, None]}`. Every
 * Dim root is defined once, before the literal, in order of first use.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "torch/pyspec.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_OUT ((size_t)16 << 20)

typedef struct printer {
    sg_buf defs; /* "dx = Dim('dx', ...)\n" lines */
    sg_buf body; /* the literal */
    const char **roots;
    size_t nroots, cap;
    sg_error *err;
    int rc;
    char path[1024];   /* the input's pytree path being printed ("['p']"), for a namedtuple placeholder */
    size_t plen;
} printer;

/* Append a path component (printf-style) to p->path; returns the old length to restore. */
static size_t path_push(printer *p, const char *fmt, const char *s, long i)
{
    size_t old = p->plen;
    int n = s ? snprintf(p->path + old, sizeof p->path - old, fmt, s) : snprintf(p->path + old, sizeof p->path - old, fmt, i);
    if (n > 0 && old + (size_t)n < sizeof p->path)
        p->plen = old + (size_t)n;
    else
        p->path[old] = '\0';
    return old;
}

static void path_pop(printer *p, size_t old)
{
    p->plen = old;
    p->path[old] = '\0';
}

/* The placeholder for the class of the namedtuple at `path`: its identifier characters, "_type". */
static void placeholder(char *buf, size_t cap, const char *path)
{
    size_t k = sg_pyspec__ident(buf, cap - 8, path, "T");
    snprintf(buf + k, cap - k, "_type");
}

size_t sg_pyspec__ident(char *buf, size_t max, const char *path, const char *lead)
{
    size_t k = 0, nl = strlen(lead);
    for (; *path && k < max; path++)
        if ((*path >= 'a' && *path <= 'z') || (*path >= 'A' && *path <= 'Z') || (*path >= '0' && *path <= '9') || *path == '_')
            buf[k++] = *path;
        else if (k && buf[k - 1] != '_')
            buf[k++] = '_';
    while (k && buf[k - 1] == '_')
        k--;
    if (!k || (buf[0] >= '0' && buf[0] <= '9')) {
        nl = nl < max ? nl : max;
        k = k + nl <= max ? k : max - nl;
        memmove(buf + nl, buf, k);
        memcpy(buf, lead, nl);
        k += nl;
    }
    return k;
}

static void py_str(sg_buf *b, const char *s)
{
    sg_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\\' || *s == '\'')
            sg_buf_putc(b, '\\');
        sg_buf_putc(b, *s);
    }
    sg_buf_putc(b, '\'');
}

static void py_bound_args(sg_buf *b, const cJSON *min, const cJSON *max, bool *first)
{
    char num[SG_INT_STRLEN];
    sg_int v;
    if (sg__json_int(min, &v) && v != 0) {
        sg_buf_printf(b, "%smin=%s", *first ? "" : ", ", sg_int_format(num, v));
        *first = false;
    }
    if (sg__json_int(max, &v)) {
        sg_buf_printf(b, "%smax=%s", *first ? "" : ", ", sg_int_format(num, v));
        *first = false;
    }
}

/* Define root {"name","min","max"} once. */
static void define_root(printer *p, const cJSON *root)
{
    const char *name = sg__json_str(sg__json_get(root, "name"));
    bool first = false;
    size_t i;
    if (!name) {
        p->rc = sg_error_set(p->err, SG_EINVALID, "spec: a Dim without a name");
        return;
    }
    for (i = 0; i < p->nroots; i++)
        if (strcmp(p->roots[i], name) == 0)
            return;
    if (sg__grow((void **)&p->roots, &p->cap, p->nroots + 1, sizeof *p->roots)) {
        p->rc = sg_error_set(p->err, SG_ENOMEM, "out of memory");
        return;
    }
    p->roots[p->nroots++] = name;
    sg_buf_printf(&p->defs, "%s = Dim(", name);
    py_str(&p->defs, name);
    py_bound_args(&p->defs, sg__json_get(root, "min"), sg__json_get(root, "max"), &first);
    sg_buf_puts(&p->defs, ")\n");
}

/* One dim's leaf. */
static void leaf(printer *p, const cJSON *j)
{
    char num[SG_INT_STRLEN];
    sg_int v;
    const char *s;
    if (!j || cJSON_IsNull(j)) {
        sg_buf_puts(&p->body, "None");
    } else if (sg__json_int(j, &v)) {
        sg_buf_puts(&p->body, sg_int_format(num, v));
    } else if ((s = sg__json_str(j)) != NULL) {
        if (strcmp(s, "AUTO") && strcmp(s, "DYNAMIC") && strcmp(s, "STATIC"))
            p->rc = sg_error_set(p->err, SG_EINVALID, "spec: unknown dim hint '%s'", s);
        sg_buf_printf(&p->body, "Dim.%s", s);
    } else if ((s = sg__json_str(sg__json_get(j, "hint"))) != NULL) {
        bool first = true;
        sg_buf_printf(&p->body, "Dim.%s(", s);
        py_bound_args(&p->body, sg__json_get(j, "min"), sg__json_get(j, "max"), &first);
        sg_buf_putc(&p->body, ')');
    } else if ((s = sg__json_str(sg__json_get(j, "derived"))) != NULL) {
        define_root(p, sg__json_get(j, "root"));
        sg_buf_puts(&p->body, s);
    } else if (cJSON_IsObject(j) && sg__json_get(j, "name")) {
        define_root(p, j);
        sg_buf_puts(&p->body, sg__json_str(sg__json_get(j, "name")) ? sg__json_str(sg__json_get(j, "name")) : "?");
    } else {
        p->rc = sg_error_set(p->err, SG_EINVALID, "spec: a dim leaf of unknown form");
    }
}

/* A Python identifier (a namedtuple's type or field name printed as code)? */
static bool is_identifier(const char *s)
{
    size_t k;
    if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    for (k = 1; s[k]; k++)
        if (!((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') || s[k] == '_'))
            return false;
    return k < 128;
}

/* The elements of a list spec: a JSON array or {"__tuple__": [...]}. */
static const cJSON *seq_items(const cJSON *j)
{
    if (cJSON_IsArray(j))
        return j;
    if (cJSON_IsObject(j) && cJSON_IsArray(sg__json_get(j, "__tuple__")))
        return sg__json_get(j, "__tuple__");
    return NULL;
}

static void node(printer *p, const cJSON *spec, const cJSON *input, int depth);

/* A tensor's spec: {"0": leaf} as {0: leaf}, a list of leaves as a list. */
static void tensor(printer *p, const cJSON *spec)
{
    const cJSON *it, *items = seq_items(spec);
    int k = 0;
    if (items) {
        sg_buf_putc(&p->body, cJSON_IsArray(spec) ? '[' : '(');
        cJSON_ArrayForEach(it, items) {
            if (k++)
                sg_buf_puts(&p->body, ", ");
            leaf(p, it);
        }
        sg_buf_puts(&p->body, cJSON_IsArray(spec) ? "]" : k == 1 ? ",)" : ")");
        return;
    }
    sg_buf_putc(&p->body, '{');
    cJSON_ArrayForEach(it, spec) {
        if (!sg__json_index_key(it->string)) {
            p->rc = sg_error_set(p->err, SG_EINVALID, "spec: tensor dim key '%s' is not an index", it->string);
            return;
        }
        sg_buf_printf(&p->body, "%s%s: ", k++ ? ", " : "", it->string);
        leaf(p, it);
    }
    sg_buf_putc(&p->body, '}');
}

/* Is `j` a list or tuple of dim leaves only (a tensor's spec in list form)? */
static bool leaf_items(const cJSON *j)
{
    const cJSON *items = seq_items(j), *it;
    if (!items)
        return false;
    cJSON_ArrayForEach(it, items)
        if (!(cJSON_IsNull(it) || cJSON_IsNumber(it) || cJSON_IsString(it)
              || (cJSON_IsObject(it) && (sg__json_get(it, "name") || sg__json_get(it, "derived") || sg__json_get(it, "hint")))))
            return false;
    return true;
}

/* Is `j` a tensor's spec (dim keys and leaves) when the inputs do not say? */
static bool looks_like_tensor(const cJSON *j)
{
    const cJSON *it;
    if (!cJSON_IsObject(j) || !j->child)
        return false;
    cJSON_ArrayForEach(it, j)
        if (!sg__json_index_key(it->string) || cJSON_IsArray(it) || (cJSON_IsObject(it) && !sg__json_get(it, "name")
                                                          && !sg__json_get(it, "derived") && !sg__json_get(it, "hint")))
            return false;
    return true;
}

/* `cls(f0=..., f1=...)`: a namedtuple's spec, its fields in order (the inputs' `in_items` or NULL). */
static void namedtuple(printer *p, const char *cls, const cJSON *items, const cJSON *fields, const cJSON *in_items,
                       int depth)
{
    const cJSON *it;
    int i = 0;

    sg_buf_printf(&p->body, "%s(", cls);
    cJSON_ArrayForEach(it, items) {
        const char *f = sg__json_str(cJSON_GetArrayItem(fields, i));
        size_t old;
        if (i)
            sg_buf_puts(&p->body, ", ");
        if (f && is_identifier(f))
            sg_buf_printf(&p->body, "%s=", f);
        old = f ? path_push(p, ".%s", f, 0) : path_push(p, "[%ld]", NULL, (long)i);
        node(p, it, in_items ? cJSON_GetArrayItem(in_items, i) : NULL, depth + 1);
        path_pop(p, old);
        i++;
    }
    sg_buf_putc(&p->body, ')');
}

static void node(printer *p, const cJSON *spec, const cJSON *input, int depth)
{
    const cJSON *it, *items, *sub;
    int k = 0;
    size_t i;

    if (p->rc)
        return;
    if (depth > 256) {
        p->rc = sg_error_set(p->err, SG_ELIMIT, "spec: nested too deeply");
        return;
    }
    if (!spec || cJSON_IsNull(spec)) {
        sg_buf_puts(&p->body, "None");
        return;
    }
    if (input && sg__json_get(input, "tensor") && seq_items(spec) && !looks_like_tensor(spec) && !leaf_items(spec))
        input = NULL; /* the inputs and the spec disagree: follow the spec */
    if ((input && sg__json_get(input, "tensor")) || (!input && looks_like_tensor(spec))) {
        tensor(p, spec);
        return;
    }
    if (input && sg__json_get(input, "int")) {
        leaf(p, spec);
        return;
    }
    if ((items = seq_items(spec)) != NULL) {
        const cJSON *in_items = input ? sg__json_get(input, "list") : NULL, *in_it;
        bool tuple = input ? sg__json_get(input, "tuple") != NULL : !cJSON_IsArray(spec);
        if (!in_items && input)
            in_items = sg__json_get(input, "tuple");
        const char *nt = input ? sg__json_str(sg__json_get(input, "namedtuple")) : NULL;
        const cJSON *fields = input ? sg__json_get(input, "fields") : NULL;
        if (nt && is_identifier(nt) && cJSON_IsArray(fields) && cJSON_GetArraySize(fields) == cJSON_GetArraySize(items)) {
            /* a namedtuple input: torch matches the spec's type, so the spec is the user's type too */
            namedtuple(p, nt, items, fields, in_items, depth);
            return;
        }
        if (cJSON_IsArray(fields = sg__json_get(spec, "__fields__")) && cJSON_GetArraySize(fields) == cJSON_GetArraySize(items)
            && p->plen) {
            /* a namedtuple whose class the trace does not name (a repaired spec: "__fields__"): torch
             * matches the class, so the spec is written with a placeholder for it, defined by a comment */
            char cls[160];
            placeholder(cls, sizeof cls, p->path);
            sg_buf_printf(&p->defs, "# %s: the namedtuple class of input %s (the trace does not record its name): "
                                    "use yours\n", cls, p->path);
            namedtuple(p, cls, items, fields, in_items, depth);
            return;
        }
        sg_buf_putc(&p->body, tuple ? '(' : '[');
        i = 0;
        in_it = in_items ? in_items->child : NULL; /* item i of in_items, walked along */
        cJSON_ArrayForEach(it, items) {
            size_t old = path_push(p, "[%ld]", NULL, (long)i);
            if (k++)
                sg_buf_puts(&p->body, ", ");
            node(p, it, in_it, depth + 1);
            in_it = in_it ? in_it->next : NULL;
            path_pop(p, old);
            i++;
        }
        sg_buf_puts(&p->body, tuple ? (k == 1 ? ",)" : ")") : "]");
        return;
    }
    if (cJSON_IsObject(spec)) {
        sub = input ? sg__json_get(input, "dict") : NULL;
        sg_buf_putc(&p->body, '{');
        cJSON_ArrayForEach(it, spec) {
            if (k++)
                sg_buf_puts(&p->body, ", ");
            size_t old = path_push(p, "['%s']", it->string ? it->string : "", 0);
            py_str(&p->body, it->string ? it->string : "");
            sg_buf_puts(&p->body, ": ");
            node(p, it, sub ? sg__json_get(sub, it->string) : NULL, depth + 1);
            path_pop(p, old);
        }
        sg_buf_putc(&p->body, '}');
        return;
    }
    leaf(p, spec);
}

/* Is `name` the *args parameter of `signature` ("(*xs)", "(x, *rest, k=1)")? */
static bool varargs(const cJSON *inputs, const char *name)
{
    const char *sig = sg__json_str(sg__json_get(inputs, "signature")), *p;
    size_t n = name ? strlen(name) : 0;
    for (p = sig; p && n && (p = strchr(p, '*')) != NULL; p++)
        if (p[1] != '*' && strncmp(p + 1, name, n) == 0 && (p[1 + n] == ',' || p[1 + n] == ')' || p[1 + n] == ':'))
            return true;
    return false;
}

/* The *args parameter `name`'s spec: a tuple, element k beside positional input args[first + k]. */
static void varargs_node(printer *p, const cJSON *spec, const cJSON *inputs, const char *name)
{
    const cJSON *names = sg__json_get(inputs, "arg_names"), *args = sg__json_get(inputs, "args"), *it;
    int first = 0, k = 0;
    cJSON_ArrayForEach(it, names) {
        if (sg__json_str(it) && strcmp(sg__json_str(it), name) == 0)
            break;
        first++;
    }
    sg_buf_putc(&p->body, '(');
    cJSON_ArrayForEach(it, seq_items(spec)) {
        if (k)
            sg_buf_puts(&p->body, ", ");
        node(p, it, cJSON_GetArrayItem(args, first + k), 1);
        k++;
    }
    sg_buf_puts(&p->body, k == 1 ? ",)" : ")");
}

/* The input node of argument `name`: args[i] where arg_names[i] == name, else kwargs[name]. */
static const cJSON *arg_input(const cJSON *inputs, const char *name)
{
    const cJSON *names = sg__json_get(inputs, "arg_names"), *args = sg__json_get(inputs, "args"), *it;
    int i = 0;
    cJSON_ArrayForEach(it, names) {
        const char *s = sg__json_str(it);
        if (s && name && strcmp(s, name) == 0)
            return cJSON_GetArrayItem(args, i);
        i++;
    }
    return sg__json_get(sg__json_get(inputs, "kwargs"), name);
}

int sg_spec_to_python(char **out, const sg_trace *t, const char *spec_json, sg_error *err)
{
    cJSON *spec = NULL, *inputs = NULL;
    const char *ij = t ? sg_trace_inputs_json(t) : NULL;
    const cJSON *it;
    printer p;
    int rc, k = 0;

    *out = NULL;
    memset(&p, 0, sizeof p);
    p.err = err;
    sg_buf_init(&p.defs, MAX_OUT);
    sg_buf_init(&p.body, MAX_OUT);
    if (!spec_json)
        return sg_error_set(err, SG_EINVALID, "spec: none");
    if ((rc = sg__json_parse(&spec, spec_json, strlen(spec_json), MAX_OUT, 512, "spec", err)) != 0)
        goto cleanup;
    if (ij && (rc = sg__json_parse(&inputs, ij, strlen(ij), MAX_OUT, 512, "inputs", err)) != 0)
        goto cleanup;
    sg_buf_puts(&p.body, "dynamic_shapes = ");
    if (cJSON_IsObject(spec) && !seq_items(spec) && inputs) {
        sg_buf_putc(&p.body, '{');
        cJSON_ArrayForEach(it, spec) {
            if (k++)
                sg_buf_puts(&p.body, ", ");
            py_str(&p.body, it->string ? it->string : "");
            sg_buf_puts(&p.body, ": ");
            size_t old = path_push(&p, "['%s']", it->string ? it->string : "", 0);
            if (varargs(inputs, it->string) && seq_items(it))
                varargs_node(&p, it, inputs, it->string);
            else
                node(&p, it, arg_input(inputs, it->string), 1);
            path_pop(&p, old);
        }
        sg_buf_putc(&p.body, '}');
    } else if (seq_items(spec) && inputs) {
        const cJSON *args = sg__json_get(inputs, "args");
        int i = 0;
        bool tuple = !cJSON_IsArray(spec);
        sg_buf_putc(&p.body, tuple ? '(' : '[');
        cJSON_ArrayForEach(it, seq_items(spec)) {
            const char *an = sg__json_str(cJSON_GetArrayItem(sg__json_get(inputs, "arg_names"), i));
            size_t old = an ? path_push(&p, "['%s']", an, 0) : p.plen;
            if (k++)
                sg_buf_puts(&p.body, ", ");
            node(&p, it, cJSON_GetArrayItem(args, i++), 1);
            path_pop(&p, old);
        }
        sg_buf_puts(&p.body, tuple ? (k == 1 ? ",)" : ")") : "]");
    } else {
        node(&p, spec, NULL, 0);
    }
    sg_buf_putc(&p.body, '\n');
    if ((rc = p.rc) != 0)
        goto cleanup;
    if (p.defs.failed || p.body.failed) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory printing the spec");
        goto cleanup;
    }
    {
        sg_buf all;
        sg_buf_init(&all, 2 * MAX_OUT);
        sg_buf_puts(&all, "from torch.export import Dim\n\n");
        if (p.defs.len)
            sg_buf_append(&all, p.defs.data, p.defs.len);
        sg_buf_append(&all, p.body.data, p.body.len);
        if (all.failed) {
            sg_buf_dispose(&all);
            rc = sg_error_set(err, SG_ENOMEM, "out of memory printing the spec");
            goto cleanup;
        }
        *out = sg_buf_take(&all);
    }
cleanup:
    cJSON_Delete(spec);
    cJSON_Delete(inputs);
    sg_free((void *)p.roots);
    sg_buf_dispose(&p.defs);
    sg_buf_dispose(&p.body);
    return rc;
}
