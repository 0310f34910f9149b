/*
 * gate_policy.c - the gate's policy in the Python `dynamic_shapes` form, read without running
 * Python (docs/gate.md, "Policy"): the text is translated into the JSON policy analysis/gate.c
 * reads ({"require": {DIM: [MIN, MAX]}, "relations": [TEXT]}).
 *
 * The subset read, line by line:
 *   - `from ... import ...` and `import ...` lines, blank lines and `#` comments: skipped;
 *   - `NAME = LEAF`: a name for a leaf (Dim('batch', min=1, max=64), a derived 2*batch + 1);
 *   - the spec itself, last, optionally as `dynamic_shapes = SPEC` (it may span lines):
 *       SPEC  := {'arg': TREE, ...} | (TREE, ...) | [TREE, ...]
 *       TREE  := {'key': TREE, ...} | [TREE, ...] | (TREE, ...)        a pytree level
 *              | {INT: LEAF, ...} | [LEAF, ...] | (LEAF, ...) | None    one tensor's dims
 *       LEAF  := Dim('n'[, min=INT][, max=INT]) | NAME | INT*NAME [+|- INT] | NAME [+|- INT]
 *              | Dim.AUTO | Dim.DYNAMIC | Dim.STATIC (each optionally called with min=, max=)
 *              | INT | None
 * (`torch.export.Dim` is read as `Dim`; a top-level tuple or list is in argument order and its
 * entries are named by position, `[0]`, as a trace names positional inputs only when it has no
 * names: prefer the dict.) A named Dim requires its range at every dim it is; its second and later
 * dims, and derived dims, are relations NEW may require (`==`). AUTO and DYNAMIC with a range
 * require the range; without one, and None and STATIC, require nothing; an int requires that size.
 * Anything else is SG_EINVALID with "policy: LINE:COL: what was expected".
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "analysis/gate_policy.h"
#include "util/util.h"

#define MAX_NAMES 256
#define MAX_DEPTH 32

typedef struct leaf {
    int kind;              /* 0 none, 1 dim (name), 2 derived (a*root + b), 3 int, 4 hint with range */
    char name[64];         /* dim or root name */
    long long a, b, v;
    bool has_min, has_max;
    long long min, max;
} leaf;

typedef struct named {
    char name[64];
    leaf l;
    char first[600];       /* the first dim that is it, as "L['x'].size()[0]", or "" */
} named;

typedef struct pp {
    const char *s, *p;
    sg_error *err;
    int rc;
    named names[MAX_NAMES];
    size_t nnames;
    sg_buf req, rel;
    size_t nreq, nrel;
} pp;

static void pos_of(const pp *x, const char *at, int *line, int *col)
{
    const char *q;
    *line = 1;
    *col = 1;
    for (q = x->s; q < at; q++) {
        if (*q == '\n') {
            (*line)++;
            *col = 1;
        } else
            (*col)++;
    }
}

static int fail(pp *x, const char *what)
{
    int line, col;
    if (x->rc)
        return x->rc;
    pos_of(x, x->p, &line, &col);
    x->rc = sg_error_set(x->err, SG_EINVALID, "policy: %d:%d: %s", line, col, what);
    return x->rc;
}

/* Skip spaces, newlines and comments. */
static void ws(pp *x)
{
    for (;;) {
        while (*x->p && isspace((unsigned char)*x->p))
            x->p++;
        if (*x->p != '#')
            return;
        while (*x->p && *x->p != '\n')
            x->p++;
    }
}

static bool eat(pp *x, const char *tok)
{
    size_t n = strlen(tok);
    ws(x);
    if (strncmp(x->p, tok, n) != 0)
        return false;
    if (isalpha((unsigned char)tok[n - 1]) && (isalnum((unsigned char)x->p[n]) || x->p[n] == '_'))
        return false;
    x->p += n;
    return true;
}

static bool ident(pp *x, char *out, size_t cap)
{
    size_t n = 0;
    ws(x);
    if (!isalpha((unsigned char)*x->p) && *x->p != '_')
        return false;
    while ((isalnum((unsigned char)x->p[n]) || x->p[n] == '_') && n + 1 < cap)
        n++;
    memcpy(out, x->p, n);
    out[n] = '\0';
    x->p += n;
    while (isalnum((unsigned char)*x->p) || *x->p == '_')
        x->p++;
    return true;
}

static bool integer(pp *x, long long *v)
{
    const char *q;
    bool neg = false;
    long long r = 0;
    ws(x);
    q = x->p;
    if (*q == '-') {
        neg = true;
        q++;
    }
    if (!isdigit((unsigned char)*q))
        return false;
    for (; isdigit((unsigned char)*q); q++) {
        if (r > (long long)1 << 58)
            return false;
        r = r * 10 + (*q - '0');
    }
    x->p = q;
    *v = neg ? -r : r;
    return true;
}

/* A Python string literal ('...' or "...", no escapes) into `out`. */
static bool string(pp *x, char *out, size_t cap)
{
    char q;
    size_t n = 0;
    ws(x);
    if (*x->p != '\'' && *x->p != '"')
        return false;
    q = *x->p++;
    while (*x->p && *x->p != q && *x->p != '\n' && *x->p != '\\') {
        if (n + 1 < cap)
            out[n++] = *x->p;
        x->p++;
    }
    out[n] = '\0';
    if (*x->p != q)
        return fail(x, "a string literal without its closing quote (escapes are not read)"), false;
    x->p++;
    return true;
}

/* (min=INT, max=INT) keywords after "(" (already eaten) up to ")"; `first_name` for Dim(NAME, ...). */
static int dim_args(pp *x, leaf *l, bool want_name)
{
    char kw[16];
    long long v;
    if (want_name) {
        if (!string(x, l->name, sizeof l->name))
            return fail(x, "Dim(...): expected its name as a string");
        if (!eat(x, ",")) {
            if (!eat(x, ")"))
                return fail(x, "Dim(...): expected ',' or ')'");
            return 0;
        }
    }
    while (!eat(x, ")")) {
        if (!ident(x, kw, sizeof kw) || (strcmp(kw, "min") != 0 && strcmp(kw, "max") != 0) || !eat(x, "="))
            return fail(x, "expected min=INT or max=INT");
        if (eat(x, "None")) {
            /* no bound */
        } else if (!integer(x, &v) || v < 0) {
            return fail(x, "expected a non-negative integer or None");
        } else if (kw[1] == 'i') {
            l->has_min = true;
            l->min = v;
        } else {
            l->has_max = true;
            l->max = v;
        }
        if (!eat(x, ",") && (ws(x), *x->p != ')'))
            return fail(x, "expected ',' or ')'");
    }
    return 0;
}

static named *find_name(pp *x, const char *n)
{
    size_t i;
    for (i = 0; i < x->nnames; i++)
        if (strcmp(x->names[i].name, n) == 0)
            return &x->names[i];
    return NULL;
}

/* A leaf, or false (not one) without consuming. */
static int parse_leaf(pp *x, leaf *l, bool *is_leaf)
{
    char id[64];
    long long v;
    const char *save;

    memset(l, 0, sizeof *l);
    *is_leaf = true;
    ws(x);
    save = x->p;
    if (eat(x, "None"))
        return 0;
    if (integer(x, &v)) {
        if (eat(x, "*")) { /* INT*NAME [+- INT] */
            named *nm;
            if (!ident(x, id, sizeof id) || !(nm = find_name(x, id)) || nm->l.kind != 1)
                return fail(x, "expected a Dim name defined above after '*'");
            l->kind = 2;
            snprintf(l->name, sizeof l->name, "%s", id);
            l->a = v;
        } else {
            if (v < 0)
                return fail(x, "a negative size");
            l->kind = 3;
            l->v = v;
            return 0;
        }
    } else if (ident(x, id, sizeof id)) {
        if (strcmp(id, "torch") == 0) { /* torch.export.Dim */
            if (!eat(x, ".") || !ident(x, id, sizeof id) || strcmp(id, "export") != 0 || !eat(x, ".")
                || !ident(x, id, sizeof id) || strcmp(id, "Dim") != 0)
                return fail(x, "expected torch.export.Dim");
        }
        if (strcmp(id, "Dim") == 0) {
            if (eat(x, ".")) {
                if (!ident(x, id, sizeof id) || (strcmp(id, "AUTO") && strcmp(id, "DYNAMIC") && strcmp(id, "STATIC")))
                    return fail(x, "expected Dim.AUTO, Dim.DYNAMIC or Dim.STATIC");
                if (eat(x, "(") && dim_args(x, l, false) != 0)
                    return x->rc;
                l->kind = (l->has_min || l->has_max) && strcmp(id, "STATIC") != 0 ? 4 : 0;
                return 0;
            }
            if (!eat(x, "("))
                return fail(x, "expected Dim(...)");
            if (dim_args(x, l, true) != 0)
                return x->rc;
            l->kind = 1;
            return 0;
        }
        {
            named *nm = find_name(x, id);
            if (!nm) {
                x->p = save;
                return fail(x, "a name not defined above (define it with NAME = Dim(...))");
            }
            if (nm->l.kind != 1) {
                *l = nm->l;
                return 0;
            }
            l->kind = 2;
            snprintf(l->name, sizeof l->name, "%s", id);
            l->a = 1;
            if (eat(x, "*")) {
                if (!integer(x, &l->a) || l->a < 1)
                    return fail(x, "expected a positive integer after '*'");
            }
        }
    } else {
        *is_leaf = false;
        return 0;
    }
    /* [+- INT] of a derived dim */
    ws(x);
    if (*x->p == '+' || *x->p == '-') {
        bool neg = *x->p == '-';
        x->p++;
        if (!integer(x, &v) || v < 0)
            return fail(x, "expected an integer after '+' or '-'");
        l->b = neg ? -v : v;
    }
    if (l->a == 1 && l->b == 0) { /* the Dim itself */
        named *nm = find_name(x, l->name);
        *l = nm->l;
    }
    return 0;
}

static void add_require(pp *x, const char *dim, bool has_min, long long lo, bool has_max, long long hi)
{
    sg_buf_printf(&x->req, "%s\"%s\": [%lld, ", x->nreq++ ? ", " : "", dim, has_min ? lo : 0);
    if (has_max)
        sg_buf_printf(&x->req, "%lld]", hi);
    else
        sg_buf_puts(&x->req, "null]");
}

static void add_relation(pp *x, const char *lhs, long long a, const char *rhs, long long b)
{
    sg_buf_printf(&x->rel, "%s\"L%s == ", x->nrel++ ? ", " : "", lhs);
    if (a != 1)
        sg_buf_printf(&x->rel, "%lld*", a);
    sg_buf_printf(&x->rel, "L%s", rhs);
    if (b)
        sg_buf_printf(&x->rel, " %c %lld", b < 0 ? '-' : '+', b < 0 ? -b : b);
    sg_buf_puts(&x->rel, "\"");
}

/* What one tensor dim `dim` ("['x'].size()[0]", its JSON text) requires. */
static int use_leaf(pp *x, const leaf *l, const char *dim)
{
    named *nm;
    if (l->kind == 3) {
        add_require(x, dim, true, l->v, true, l->v);
    } else if (l->kind == 4) {
        add_require(x, dim, l->has_min, l->min, l->has_max, l->max);
    } else if (l->kind == 1) {
        nm = find_name(x, l->name);
        if (!nm) { /* an inline Dim('n', ...): its own name */
            if (x->nnames >= MAX_NAMES)
                return fail(x, "too many Dim names");
            nm = &x->names[x->nnames++];
            snprintf(nm->name, sizeof nm->name, "%s", l->name);
            nm->l = *l;
        }
        add_require(x, dim, nm->l.has_min, nm->l.min, nm->l.has_max, nm->l.max);
        if (nm->first[0])
            add_relation(x, dim, 1, nm->first, 0);
        else
            snprintf(nm->first, sizeof nm->first, "%.*s", (int)sizeof nm->first - 1, dim); /* cut to fit */
    } else if (l->kind == 2) {
        nm = find_name(x, l->name);
        if (!nm)
            return fail(x, "a derived dim over an unknown Dim");
        add_require(x, dim, nm->l.has_min, l->a * (nm->l.has_min ? nm->l.min : 0) + l->b, nm->l.has_max,
                    l->a * nm->l.max + l->b);
        if (nm->first[0])
            add_relation(x, dim, l->a, nm->first, l->b);
        else if (l->a > 1) { /* only derived dims of this root: the sizes are A*k + B */
            sg_buf_printf(&x->rel, "%s\"((L%s - %lld) %% %lld) == 0\"", x->nrel++ ? ", " : "", dim, l->b, l->a);
        }
    }
    return 0;
}

/* The LEAF of dim `d` of the tensor at `path`. */
static int dim_leaf(pp *x, const char *path, long long d)
{
    char dim[640];
    leaf l;
    bool is_leaf;

    if (parse_leaf(x, &l, &is_leaf) != 0)
        return x->rc;
    if (!is_leaf)
        return fail(x, "expected a Dim, a derived dim, Dim.AUTO, an int or None");
    snprintf(dim, sizeof dim, "%s.size()[%lld]", path, d);
    return use_leaf(x, &l, dim);
}

/* A tensor's dims: {INT: LEAF}, [LEAF, ...], (LEAF, ...) at `path`; or a pytree level. */
static int parse_tree(pp *x, const char *path, int depth)
{
    char key[200], sub[600];
    char close;

    if (depth > MAX_DEPTH)
        return fail(x, "nested too deep");
    ws(x);
    if (eat(x, "None"))
        return 0;
    if (eat(x, "{")) {
        ws(x);
        if (isdigit((unsigned char)*x->p)) { /* {0: LEAF, ...}: one tensor */
            while (!eat(x, "}")) {
                long long d;
                if (!integer(x, &d) || d < 0 || !eat(x, ":"))
                    return fail(x, "expected DIM: LEAF");
                if (dim_leaf(x, path, d) != 0)
                    return x->rc;
                if (!eat(x, ",") && (ws(x), *x->p != '}'))
                    return fail(x, "expected ',' or '}'");
            }
            return 0;
        }
        while (!eat(x, "}")) {
            if (!string(x, key, sizeof key) || !eat(x, ":"))
                return x->rc ? x->rc : fail(x, "expected 'key': ...");
            if (strpbrk(key, "\"'\\"))
                return fail(x, "a key with a quote or a backslash");
            snprintf(sub, sizeof sub, "%s['%s']", path, key);
            if (parse_tree(x, sub, depth + 1) != 0)
                return x->rc;
            if (!eat(x, ",") && (ws(x), *x->p != '}'))
                return fail(x, "expected ',' or '}'");
        }
        return 0;
    }
    if (eat(x, "[") || eat(x, "(")) {
        const char *start = x->p - 1;
        size_t i = 0;
        bool leaves = true;
        close = *start == '[' ? ']' : ')';
        /* a list of leaves (one tensor's dims) or of subtrees: decided by the first entry */
        ws(x);
        leaves = !(*x->p == '{' || *x->p == '[' || *x->p == '(');
        while (!eat(x, close == ']' ? "]" : ")")) {
            if (leaves) {
                if (dim_leaf(x, path, (long long)i) != 0)
                    return x->rc;
            } else {
                snprintf(sub, sizeof sub, "%s[%zu]", path, i);
                if (parse_tree(x, sub, depth + 1) != 0)
                    return x->rc;
            }
            i++;
            if (!eat(x, ",") && (ws(x), *x->p != close))
                return fail(x, "expected ',' or a closing bracket");
        }
        return 0;
    }
    return fail(x, "expected a dict, a list, a tuple or None");
}

bool sg_gate__policy_is_python(const char *text)
{
    const char *p = text;
    while (*p && isspace((unsigned char)*p))
        p++;
    /* JSON objects quote their keys with '"' and use no Dim(...): anything else is Python */
    return !(*p == '{' && (p[1] == '"' || isspace((unsigned char)p[1]) || p[1] == '}') && !strstr(text, "Dim"));
}

int sg_gate__policy_from_python(char **out, const char *text, sg_error *err)
{
    pp *x = sg__calloc(1, sizeof *x);
    char id[64];
    sg_buf b;
    int rc = 0;

    *out = NULL;
    if (!x)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    x->s = x->p = text;
    x->err = err;
    sg_buf_init(&x->req, (size_t)1 << 24);
    sg_buf_init(&x->rel, (size_t)1 << 24);
    for (;;) {
        const char *line;
        ws(x);
        line = x->p;
        if (!*x->p)
            break;
        if (eat(x, "from") || eat(x, "import")) {
            while (*x->p && *x->p != '\n')
                x->p++;
            continue;
        }
        if (ident(x, id, sizeof id) && eat(x, "=")) {
            leaf l;
            bool is_leaf;
            if (strcmp(id, "dynamic_shapes") == 0)
                break; /* the spec follows */
            if (parse_leaf(x, &l, &is_leaf) != 0)
                goto fail;
            if (!is_leaf)
                rc = fail(x, "expected NAME = Dim(...) or a derived dim");
            else if (x->nnames >= MAX_NAMES)
                rc = fail(x, "too many Dim names");
            if (rc)
                goto fail;
            snprintf(x->names[x->nnames].name, sizeof x->names[x->nnames].name, "%s", id);
            x->names[x->nnames++].l = l;
            continue;
        }
        x->p = line; /* the spec itself */
        break;
    }
    ws(x);
    if (!*x->p) {
        fail(x, "no spec (a dict of the inputs' dims, last)");
        goto fail;
    }
    if (parse_tree(x, "", 0) != 0)
        goto fail;
    ws(x);
    if (*x->p) {
        fail(x, "text after the spec");
        goto fail;
    }
    sg_buf_init(&b, (size_t)1 << 25);
    sg_buf_printf(&b, "{\"require\": {%s}, \"relations\": [%s]}", x->req.data ? x->req.data : "",
                  x->rel.data ? x->rel.data : "");
    rc = sg_buf_finish(&b, out, "the policy", err);
    goto cleanup;
fail:
    rc = x->rc ? x->rc : sg_error_set(err, SG_EINVALID, "policy: not read");
cleanup:
    sg_buf_dispose(&x->req);
    sg_buf_dispose(&x->rel);
    sg_free(x);
    return rc;
}
