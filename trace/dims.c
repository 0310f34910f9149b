/*
 * dims.c - the text form of spec overrides, `shapegate check --dim ITEM`
 * (sg_trace_override_dims; docs/check.md, "Spec overrides").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_impl.h"
#include "util/json.h"

/* One parsed override item. */
typedef struct dim_item {
    const char *text;   /* as given */
    size_t input;       /* index into the trace's inputs */
    sg_input_dim spec;  /* the new spec fields */
    bool has_range;     /* DIM: NAME:MIN..MAX */
} dim_item;

/* SG_EINVALID (or `code`) "dim override 'TEXT': <message>". */
static int item_fail(sg_error *err, int code, const char *text, const char *fmt, ...) SG_PRINTF(4, 5);
static int item_fail(sg_error *err, int code, const char *text, const char *fmt, ...)
{
    char msg[SG_ERROR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sg_error_set(err, code, "dim override '%.80s%s': %s", text, strlen(text) > 80 ? "..." : "", msg);
    sg__error_one_line(err);
    return code;
}

/* `s[0..len)` without white space around it. */
static void trim(const char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

/* "MIN..MAX" (each may be empty: `dmin` / +int_oo; MAX also "oo" or "int_oo"). */
static bool parse_range(const char *s, size_t len, sg_bound dmin, sg_bound *lo, sg_bound *hi)
{
    const char *dots = NULL, *mx;
    size_t i, nlo, nhi;

    for (i = 0; i + 1 < len; i++)
        if (s[i] == '.' && s[i + 1] == '.') {
            dots = s + i;
            break;
        }
    if (!dots)
        return false;
    nlo = (size_t)(dots - s);
    mx = dots + 2;
    nhi = len - nlo - 2;
    trim(&s, &nlo);
    trim(&mx, &nhi);
    memset(lo, 0, sizeof *lo);
    memset(hi, 0, sizeof *hi);
    if (nlo == 0)
        *lo = dmin;
    else if (!sg_trace__parse_nat(s, nlo, &lo->v))
        return false;
    if (nhi == 0 || (nhi == 2 && memcmp(mx, "oo", 2) == 0) || (nhi == 6 && memcmp(mx, "int_oo", 6) == 0))
        hi->inf = 1;
    else if (!sg_trace__parse_nat(mx, nhi, &hi->v))
        return false;
    return true;
}

/* Whether `name` can be a Dim name: an identifier that reads back as a bare symbol. */
static int check_name(sg_trace *t, const char *text, const char *name, size_t len, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL;
    int rc;

    if (!sg_trace__is_ident(name, len))
        return item_fail(err, SG_EINVALID, text, "'%.*s' is not a name", (int)(len > 60 ? 60 : len), name);
    rc = sg_expr_parse(&e, t->pool, name, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc || sg_expr_kind(e) != SG_SYM)
        return item_fail(err, SG_EINVALID, text, "'%.*s' cannot be a Dim name (it reads as %s)",
                         (int)(len > 60 ? 60 : len), name, rc ? "something else" : "a constant or function");
    return 0;
}

/* The derived right-hand side `s[0..len)`: an affine A*root + B with A >= 1. */
static int parse_derived(sg_trace *t, dim_item *it, const char *s, size_t len, sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL, **syms = NULL;
    size_t nsyms = 0;
    sg_int a, b;
    char *name = NULL;
    int rc;

    rc = sg_expr_parse(&e, t->pool, s, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc)
        return item_fail(err, SG_EINVALID, it->text,
                         "expected NAME[:MIN..MAX], A*NAME+B, AUTO, DYNAMIC, STATIC or a size (%s)",
                         perr.msg);
    if (sg_expr_sort(e) != SG_SORT_INT)
        return item_fail(err, SG_EINVALID, it->text, "'%.*s' is not an integer expression",
                         (int)(len > 60 ? 60 : len), s);
    if ((rc = sg_expr_symbols(&syms, &nsyms, t->pool, e, err)) != 0)
        return rc;
    if (nsyms != 1 || !sg_trace__affine_in(e, syms[0], &a, &b) || a < 1) {
        sg_free((void *)syms);
        return item_fail(err, SG_EINVALID, it->text,
                         "a derived dim must be A*NAME + B with integers A >= 1 and B, over one name");
    }
    it->spec.root_name = sg_trace__strdup(t, sg_expr_symbol_name(syms[0]));
    sg_free((void *)syms);
    if (!it->spec.root_name)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if ((rc = check_name(t, it->text, it->spec.root_name, strlen(it->spec.root_name), err)) != 0)
        return rc;
    if (a == 1 && b == 0) { /* just the name */
        it->spec.kind = SG_SPEC_DIM;
        it->spec.name = it->spec.root_name;
        it->spec.root_name = NULL;
        return 0;
    }
    if ((rc = sg_expr_print(&name, e, SG_SYNTAX_SYMPY, NULL, NULL, err)) != 0)
        return rc;
    it->spec.kind = SG_SPEC_DERIVED;
    it->spec.derived = e;
    it->spec.name = sg_trace__strdup(t, name);
    sg_free(name);
    if (!it->spec.name)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    return 0;
}

/* Parse one item: which input dim, and its new spec (bounds of bare names resolved later). */
static int parse_item(sg_trace *t, dim_item *it, const char *text, sg_error *err)
{
    const sg_bound zero = {0, 0}, ninf = {0, -1};
    const char *eq = strchr(text, '='), *lhs = text, *rhs, *dot = NULL, *colon;
    size_t nl, nr, first, rank, i;
    sg_int dim;
    sg_buf list;

    memset(it, 0, sizeof *it);
    it->text = text;
    sg_trace__clear_spec(&it->spec);
    if (!eq) { /* NAME:MIN..MAX alone: the range of a Dim (a derived dim's root) */
        const char *name = text, *c = strchr(text, ':');
        size_t nn = c ? (size_t)(c - text) : 0;
        int rc;
        trim(&name, &nn);
        if (!c || !sg_trace__is_ident(name, nn))
            return item_fail(err, SG_EINVALID, text, "expected INPUT.DIM=SPEC or NAME:MIN..MAX");
        if ((rc = check_name(t, text, name, nn, err)) != 0)
            return rc;
        it->input = SIZE_MAX;
        it->spec.kind = SG_SPEC_DIM;
        it->spec.has_bounds = true;
        it->has_range = true;
        if (!(it->spec.name = sg_trace__strndup(t, name, nn)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (!parse_range(c + 1, strlen(c + 1), zero, &it->spec.min, &it->spec.max))
            return item_fail(err, SG_EINVALID, text, "expected NAME:MIN..MAX (MIN, MAX optional)");
        return 0;
    }
    nl = (size_t)(eq - text);
    rhs = eq + 1;
    nr = strlen(rhs);
    trim(&lhs, &nl);
    trim(&rhs, &nr);

    /* which dim: a source name, or INPUT.DIM */
    for (i = 0; i < t->ninputs; i++) {
        const sg_input_dim *d = &t->inputs[i];
        if ((d->source && strlen(d->source) == nl && memcmp(d->source, lhs, nl) == 0)
            || (d->traced_source && strlen(d->traced_source) == nl && memcmp(d->traced_source, lhs, nl) == 0))
            break;
    }
    if (i < t->ninputs) {
        it->input = i;
    } else {
        for (i = nl; i > 0; i--)
            if (lhs[i - 1] == '.') {
                dot = lhs + i - 1;
                break;
            }
        if (!dot || dot == lhs)
            return item_fail(err, SG_EINVALID, text, "expected INPUT.DIM before '=' (e.g. x.0)");
        if (!sg_trace__parse_nat(dot + 1, nl - (size_t)(dot + 1 - lhs), &dim))
            return item_fail(err, SG_EINVALID, text, "'%.*s' is not a dim index", (int)(nl - (size_t)(dot + 1 - lhs)),
                             dot + 1);
        if (!sg_trace__find_tensor(t->inputs, t->ninputs, lhs, (size_t)(dot - lhs), &first, &rank)) {
            int rc;
            sg_buf_init(&list, 4096);
            sg_trace__put_input_list(&list, t->inputs, t->ninputs);
            rc = list.failed ? sg_error_set(err, SG_ENOMEM, "out of memory")
                             : item_fail(err, SG_EINVALID, text, "no tensor input '%.*s'; the inputs are %s",
                                         (int)((size_t)(dot - lhs) > 60 ? 60 : (size_t)(dot - lhs)), lhs, list.data);
            sg_buf_dispose(&list);
            return rc;
        }
        if (dim >= (sg_int)rank)
            return item_fail(err, SG_EINVALID, text, "'%.*s' has %zu dim%s (0..%zu), not %d",
                             (int)((size_t)(dot - lhs) > 60 ? 60 : (size_t)(dot - lhs)), lhs, rank,
                             rank == 1 ? "" : "s", rank - 1, (int)(dim > 99999 ? 99999 : dim));
        it->input = first + (size_t)dim;
    }

    /* the spec */
    if (nr > 4 && memcmp(rhs, "Dim.", 4) == 0) {
        rhs += 4;
        nr -= 4;
    }
    if (nr == 0)
        return item_fail(err, SG_EINVALID, text, "nothing after '='");
    colon = memchr(rhs, ':', nr);
    {
        size_t nh = colon ? (size_t)(colon - rhs) : nr;
        const char *head = rhs;
        trim(&head, &nh);
        if ((nh == 4 && memcmp(head, "AUTO", 4) == 0) || (nh == 7 && memcmp(head, "DYNAMIC", 7) == 0)) {
            it->spec.kind = head[0] == 'A' ? SG_SPEC_AUTO : SG_SPEC_DYNAMIC;
            if (colon) {
                it->spec.has_bounds = true;
                if (!parse_range(colon + 1, nr - nh - 1 - (size_t)(head - rhs), ninf, &it->spec.min, &it->spec.max))
                    return item_fail(err, SG_EINVALID, text, "expected %.*s:MIN..MAX", (int)nh, head);
            }
            return 0;
        }
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0 && colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0) {
            it->spec.kind = SG_SPEC_STATIC;
            return 0;
        }
        if (!colon && nh > 1 && head[0] == '-' && sg_trace__parse_nat(head + 1, nh - 1, &it->spec.static_size))
            return item_fail(err, SG_EINVALID, text, "a size cannot be negative");
        if (!colon && sg_trace__parse_nat(head, nh, &it->spec.static_size)) {
            it->spec.kind = SG_SPEC_STATIC;
            it->spec.has_static_size = true;
            return 0;
        }
        if (sg_trace__is_ident(head, nh)) {
            int rc;
            if ((rc = check_name(t, text, head, nh, err)) != 0)
                return rc;
            it->spec.kind = SG_SPEC_DIM;
            it->spec.has_bounds = true;
            if (!(it->spec.name = sg_trace__strndup(t, head, nh)))
                return sg_error_set(err, SG_ENOMEM, "out of memory");
            if (colon) {
                it->has_range = true;
                if (!parse_range(colon + 1, nr - (size_t)(colon + 1 - rhs), zero, &it->spec.min, &it->spec.max))
                    return item_fail(err, SG_EINVALID, text, "expected NAME:MIN..MAX (MIN, MAX optional)");
            }
            return 0;
        }
        if (colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
    }
    return parse_derived(t, it, rhs, nr, err);
}

/* The bounds of the Dim called `name`: an item's range, else the trace's (original)
 * definition as a Dim or as a derived dim's root, else the defaults 0 .. int_oo. */
static void resolve_dim(const sg_trace *t, const dim_item *its, size_t nits, const char *name, sg_bound *lo,
                        sg_bound *hi)
{
    size_t i;
    for (i = 0; i < nits; i++)
        if (its[i].spec.kind == SG_SPEC_DIM && its[i].has_range && strcmp(its[i].spec.name, name) == 0) {
            *lo = its[i].spec.min;
            *hi = its[i].spec.max;
            return;
        }
    for (i = 0; i < t->ninputs; i++)
        if (t->inputs[i].kind == SG_SPEC_DIM && t->inputs[i].name && strcmp(t->inputs[i].name, name) == 0) {
            *lo = t->inputs[i].min;
            *hi = t->inputs[i].max;
            return;
        }
    for (i = 0; i < t->ninputs; i++)
        if (t->inputs[i].kind == SG_SPEC_DERIVED && t->inputs[i].root_name
            && strcmp(t->inputs[i].root_name, name) == 0) {
            *lo = t->inputs[i].root_min;
            *hi = t->inputs[i].root_max;
            return;
        }
    memset(lo, 0, sizeof *lo);
    memset(hi, 0, sizeof *hi);
    hi->inf = 1;
}

static bool same_bounds(sg_bound a, sg_bound b) { return a.inf == b.inf && (a.inf || a.v == b.v); }

/* "2..100", "16..int_oo" */
static const char *range_text(char *buf, size_t cap, sg_bound lo, sg_bound hi)
{
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];
    snprintf(buf, cap, "%s..%s", lo.inf ? "-int_oo" : sg_int_format(a, lo.v), hi.inf ? "int_oo" : sg_int_format(b, hi.v));
    return buf;
}

int sg_trace_override_dims(sg_trace *t, const char *const *items, size_t n, sg_error *err)
{
    dim_item *its = NULL;
    sg_input_dim *in = NULL;
    unsigned char *mark = NULL; /* per input: 1 set by an item, 2 its root or name redefined */
    const char *js = NULL;
    size_t i, j;
    int rc = 0;

    if (!t || (n && !items))
        return sg_error_set(err, SG_EINVALID, "no trace or no items");
    if (n == 0)
        return 0;
    its = sg__calloc(n, sizeof *its);
    in = sg__malloc((t->ninputs + 1) * sizeof *in);
    mark = sg__calloc(t->ninputs + 1, 1);
    if (!its || !in || !mark) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        if (!items[i]) {
            rc = sg_error_set(err, SG_EINVALID, "dim override %zu is NULL", i);
            goto cleanup;
        }
        if ((rc = parse_item(t, &its[i], items[i], err)) != 0)
            goto cleanup;
        for (j = 0; j < i; j++) {
            char r1[96], r2[96];
            if (its[j].input == its[i].input && its[i].input != SIZE_MAX) {
                rc = item_fail(err, SG_EINVALID, items[i], "that dim is also set by '%.60s'", items[j]);
                goto cleanup;
            }
            if (its[i].has_range && its[j].has_range && strcmp(its[i].spec.name, its[j].spec.name) == 0
                && (!same_bounds(its[i].spec.min, its[j].spec.min) || !same_bounds(its[i].spec.max, its[j].spec.max))) {
                rc = item_fail(err, SG_EINVALID, items[i], "Dim '%.40s' is given two ranges, %s and %s",
                               its[i].spec.name, range_text(r1, sizeof r1, its[j].spec.min, its[j].spec.max),
                               range_text(r2, sizeof r2, its[i].spec.min, its[i].spec.max));
                goto cleanup;
            }
        }
    }

    if (t->ninputs)
        memcpy(in, t->inputs, t->ninputs * sizeof *in);
    for (i = 0; i < n; i++) {
        sg_input_dim *d;
        if (its[i].input == SIZE_MAX)
            continue; /* a range only */
        d = &in[its[i].input];
        if (its[i].spec.kind == SG_SPEC_DIM && !its[i].has_range)
            resolve_dim(t, its, n, its[i].spec.name, &its[i].spec.min, &its[i].spec.max);
        if (its[i].spec.kind == SG_SPEC_DERIVED)
            resolve_dim(t, its, n, its[i].spec.root_name, &its[i].spec.root_min, &its[i].spec.root_max);
        sg_trace__copy_spec(d, &its[i].spec);
        mark[its[i].input] = 1;
    }
    /* a range given for a name redefines that Dim everywhere */
    for (i = 0; i < n; i++) {
        if (!its[i].has_range)
            continue;
        for (j = 0; j < t->ninputs; j++) {
            sg_input_dim *d = &in[j];
            if (mark[j] == 1)
                continue;
            if (d->kind == SG_SPEC_DIM && d->name && strcmp(d->name, its[i].spec.name) == 0) {
                d->min = its[i].spec.min;
                d->max = its[i].spec.max;
                d->min_unavailable = d->max_unavailable = NULL;
                mark[j] = 2;
            } else if (d->kind == SG_SPEC_DERIVED && d->root_name && strcmp(d->root_name, its[i].spec.name) == 0) {
                d->root_min = its[i].spec.min;
                d->root_max = its[i].spec.max;
                mark[j] = 2;
            }
        }
    }
    for (j = 0; j < t->ninputs; j++)
        if (mark[j] && in[j].kind == SG_SPEC_DERIVED && (rc = sg_trace__derive_bounds(t, &in[j], err)) != 0)
            goto cleanup;
    if ((rc = sg_trace__rebuild_spec_json(t, in, t->ninputs, &js, err)) != 0)
        goto cleanup;
    if (t->ninputs)
        memcpy(t->inputs, in, t->ninputs * sizeof *in);
    t->has_flat_spec = true;
    t->spec_overridden = true;
    t->dynamic_shapes_json = js;
cleanup:
    sg_free(its);
    sg_free(in);
    sg_free(mark);
    return rc;
}
