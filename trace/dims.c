/*
 * dims.c - the text form of spec overrides, `shapegate check --dim ITEM`
 * (sg_spec_edits_parse_dims, sg_trace_with_dims; docs/check.md, "Spec
 * overrides"): each item is read into a typed edit (edit.c applies them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_impl.h"
#include "util/json.h"

/* "dim override 'TEXT': <message>" (edit.c). */
#define item_fail sg_trace__edit_fail

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

/* The derived right-hand side `s[0..len)` of item `text`: an affine A*root + B with A >= 1,
 * read in `pool` (a scratch overlay). */
static int parse_derived(sg_pool *pool, sg_spec_edit *it, const char *text, const char *s, size_t len,
                         sg_error *err)
{
    sg_error perr = SG_ERROR_INIT;
    const sg_expr *e = NULL, **syms = NULL;
    size_t nsyms = 0;
    sg_int a, b;
    int rc;

    rc = sg_expr_parse(&e, pool, s, len, &perr);
    if (rc == SG_ENOMEM)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if (rc)
        return item_fail(err, SG_EINVALID, text,
                         "expected NAME[:MIN..MAX], A*NAME+B, AUTO, DYNAMIC, STATIC or a size (%s)",
                         perr.msg);
    if (sg_expr_sort(e) != SG_SORT_INT)
        return item_fail(err, SG_EINVALID, text, "'%.*s' is not an integer expression",
                         (int)(len > 60 ? 60 : len), s);
    if ((rc = sg_expr_symbols(&syms, &nsyms, pool, e, err)) != 0)
        return rc;
    if (nsyms != 1 || !sg_trace__affine_in(e, syms[0], &a, &b) || a < 1) {
        sg_free((void *)syms);
        return item_fail(err, SG_EINVALID, text,
                         "a derived dim must be A*NAME + B with integers A >= 1 and B, over one name");
    }
    it->root = sg__strndup(sg_expr_symbol_name(syms[0]), strlen(sg_expr_symbol_name(syms[0])));
    sg_free((void *)syms);
    if (!it->root)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    if ((rc = sg_trace__check_dim_name(pool, text, it->root, strlen(it->root), err)) != 0)
        return rc;
    it->kind = SG_SPEC_DERIVED; /* A*root + B; edit.c makes a bare root (1*root + 0) a Dim */
    it->a = a;
    it->b = b;
    return 0;
}

/* Parse one item: which input dim, and its new spec (bounds of bare names resolved later). */
static int parse_item(const sg_trace *t, sg_pool *pool, sg_spec_edit *it, const char *text, sg_error *err)
{
    const sg_bound zero = {0, 0}, ninf = {0, -1};
    const char *eq = strchr(text, '='), *lhs = text, *rhs, *dot = NULL, *colon;
    size_t nl, nr, first, rank, i;
    sg_int dim;
    sg_buf list;

    if (!eq) { /* NAME:MIN..MAX alone: the range of a Dim (a derived dim's root) */
        const char *name = text, *c = strchr(text, ':');
        size_t nn = c ? (size_t)(c - text) : 0;
        int rc;
        trim(&name, &nn);
        if (!c || !sg_trace__is_ident(name, nn))
            return item_fail(err, SG_EINVALID, text, "expected INPUT.DIM=SPEC or NAME:MIN..MAX");
        if ((rc = sg_trace__check_dim_name(pool, text, name, nn, err)) != 0)
            return rc;
        it->input = SIZE_MAX;
        it->kind = SG_SPEC_DIM;
        it->has_range = true;
        if (!(it->name = sg__strndup(name, nn)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (!parse_range(c + 1, strlen(c + 1), zero, &it->min, &it->max))
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
            it->kind = head[0] == 'A' ? SG_SPEC_AUTO : SG_SPEC_DYNAMIC;
            if (colon) {
                it->has_range = true;
                if (!parse_range(colon + 1, nr - nh - 1 - (size_t)(head - rhs), ninf, &it->min, &it->max))
                    return item_fail(err, SG_EINVALID, text, "expected %.*s:MIN..MAX", (int)nh, head);
            }
            return 0;
        }
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0 && colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
        if (nh == 6 && memcmp(head, "STATIC", 6) == 0) {
            it->kind = SG_SPEC_STATIC;
            return 0;
        }
        if (!colon && nh > 1 && head[0] == '-' && sg_trace__parse_nat(head + 1, nh - 1, &it->size))
            return item_fail(err, SG_EINVALID, text, "a size cannot be negative");
        if (!colon && sg_trace__parse_nat(head, nh, &it->size)) {
            it->kind = SG_SPEC_STATIC;
            it->has_size = true;
            return 0;
        }
        if (sg_trace__is_ident(head, nh)) {
            int rc;
            if ((rc = sg_trace__check_dim_name(pool, text, head, nh, err)) != 0)
                return rc;
            it->kind = SG_SPEC_DIM;
            if (!(it->name = sg__strndup(head, nh)))
                return sg_error_set(err, SG_ENOMEM, "out of memory");
            if (colon) {
                it->has_range = true;
                if (!parse_range(colon + 1, nr - (size_t)(colon + 1 - rhs), zero, &it->min, &it->max))
                    return item_fail(err, SG_EINVALID, text, "expected NAME:MIN..MAX (MIN, MAX optional)");
            }
            return 0;
        }
        if (colon)
            return item_fail(err, SG_EINVALID, text, "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only");
    }
    return parse_derived(pool, it, text, rhs, nr, err);
}

int sg_spec_edits_parse_dims(sg_spec_edits *e, const sg_trace *t, const char *const *items, size_t n,
                             sg_error *err)
{
    sg_pool *pool = NULL;
    size_t i, n0;
    int rc = 0;

    if (!e || !t || (n && !items))
        return sg_error_set(err, SG_EINVALID, "no edits, no trace or no items");
    if (n == 0)
        return 0;
    /* names and derived forms are read in a scratch overlay: the trace's pool is frozen */
    if ((rc = sg_pool_overlay_new(&pool, t->pool, err)) != 0)
        return rc;
    n0 = e->n;
    for (i = 0; i < n; i++) {
        sg_spec_edit *it;
        if (!items[i]) {
            rc = sg_error_set(err, SG_EINVALID, "dim override %zu is NULL", i);
            break;
        }
        if (!(it = sg_spec_edits__push(e, 0, SG_SPEC_UNSET)) || !(it->text = sg__strndup(items[i], strlen(items[i])))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            break;
        }
        it->checked = true;
        if ((rc = parse_item(t, pool, it, items[i], err)) != 0 || (rc = sg_trace__edit_conflict(t, e, e->n - 1, err)) != 0)
            break;
    }
    if (rc) { /* all or nothing */
        while (e->n > n0) {
            sg_spec_edit *x = &e->v[--e->n];
            sg_free(x->text);
            sg_free(x->name);
            sg_free(x->root);
        }
    }
    sg_pool_free(pool);
    return rc;
}

int sg_trace_with_dims(sg_trace **out, const sg_trace *t, const char *const *items, size_t n, sg_error *err)
{
    sg_spec_edits *e = NULL;
    int rc;

    SG_ENTRY_CHECK("sg_trace_with_dims", out, t && (!n || items), "no trace or no items", err);
    if ((rc = sg_spec_edits_new(&e, err)) == 0 && (rc = sg_spec_edits_parse_dims(e, t, items, n, err)) == 0)
        rc = n ? sg_trace_edit(out, t, e, err) : sg_trace__clone(out, t, err);
    sg_spec_edits_free(e);
    return rc;
}
