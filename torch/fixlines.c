/*
 * fixlines.c - torch's "Suggested fixes:" lines (torch/fixlines.h): printing
 * ours in torch's text, and reading torch's own the way its
 * refine_dynamic_shapes_from_suggested_fixes reads them, into typed spec edits.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "torch/fixlines.h"
#include "util/strmap.h"
#include "util/util.h"

/* ---- printing ------------------------------------------------------------------------- */

bool sg_torch_same_range(sg_bound a0, sg_bound a1, sg_bound b0, sg_bound b1)
{
    bool lo = (a0.inf && b0.inf) || (!a0.inf && !b0.inf && (a0.v == b0.v || (a0.v <= 2 && b0.v <= 2)));
    bool hi = (a1.inf && b1.inf) || (!a1.inf && !b1.inf && a1.v == b1.v);
    return lo && hi;
}

char *sg_torch_range_line(const char *name, sg_bound lo, sg_bound hi, bool new_root)
{
    char num[SG_INT_STRLEN];
    sg_buf b;
    sg_buf_init(&b, 4096);
    sg_buf_printf(&b, "%s = Dim('%s'", name, name);
    if (!lo.inf && (new_root || lo.v != 2))
        sg_buf_printf(&b, ", min=%s", sg_int_format(num, lo.v));
    if (!hi.inf)
        sg_buf_printf(&b, ", max=%s", sg_int_format(num, hi.v));
    sg_buf_putc(&b, ')');
    return b.failed ? (sg_buf_dispose(&b), (char *)NULL) : sg_buf_take(&b);
}

char *sg_torch_constant_line(const char *name, sg_int v)
{
    char num[SG_INT_STRLEN];
    sg_buf b;
    sg_buf_init(&b, 4096);
    sg_buf_printf(&b, "%s = %s", name, sg_int_format(num, v));
    return b.failed ? (sg_buf_dispose(&b), (char *)NULL) : sg_buf_take(&b);
}

char *sg_torch_derived_line(const char *name, sg_int a, const char *root, sg_int b)
{
    sg_pool *pool = NULL;
    const sg_expr *e;
    char *rhs = NULL, *line = NULL;
    sg_buf buf;

    /* torch prints the right-hand side with sympy's str(): the expression printer's sympy form */
    if (sg_pool_new(&pool, NULL) != 0)
        return NULL;
    e = sg_expr_2(pool, SG_ADD, sg_expr_2(pool, SG_MUL, sg_expr_int(pool, a), sg_expr_symbol(pool, root, strlen(root))),
                  sg_expr_int(pool, b));
    if (e && sg_expr_print(&rhs, e, SG_SYNTAX_SYMPY, NULL, NULL, NULL) == 0) {
        sg_buf_init(&buf, 4096);
        sg_buf_printf(&buf, "%s = %s", name, rhs);
        line = buf.failed ? (sg_buf_dispose(&buf), (char *)NULL) : sg_buf_take(&buf);
    }
    sg_free(rhs);
    sg_pool_free(pool);
    return line;
}

/* ---- reading torch's ---------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* An identifier at p: its length (0 when none). */
static size_t ident_len(const char *p)
{
    size_t k = 0;
    if (!((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == '_'))
        return 0;
    while ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= '0' && p[k] <= '9') || p[k] == '_')
        k++;
    return k;
}

static bool read_int(const char **pp, sg_int *v)
{
    const char *p = *pp;
    size_t k = 0;
    while (p[k] >= '0' && p[k] <= '9')
        k++;
    if (k == 0 || k > 38 || sg_int_parse(v, p, k) != 0)
        return false;
    *pp = p + k;
    return true;
}

/* "A*R + B", "R - B", "R", "A*R": into a, root (length rl at *root), b. */
static bool parse_affine_text(const char *p, sg_int *a, const char **root, size_t *rl, sg_int *b)
{
    *a = 1;
    *b = 0;
    p = skip_ws(p);
    if (*p >= '0' && *p <= '9') {
        if (!read_int(&p, a) || *p != '*')
            return false;
        p++;
    }
    if (!(*rl = ident_len(p)))
        return false;
    *root = p;
    p = skip_ws(p + *rl);
    if (*p == '+' || *p == '-') {
        bool neg = *p == '-';
        p = skip_ws(p + 1);
        if (!read_int(&p, b))
            return false;
        if (neg)
            *b = -*b;
        p = skip_ws(p);
    }
    return *p == '\0';
}

/* `min=N` / `max=N` inside a Dim(...) text, as refine's regular expressions read them. */
static bool find_bound(const char *text, const char *key, sg_int *v)
{
    const char *p = strstr(text, key);
    if (!p)
        return false;
    p += strlen(key);
    return read_int(&p, v);
}

/* `why` = "cannot read suggested fix 'LINE'"; returns 0 (the spec is invalid, not the call). */
static int unreadable(char **why, const char *line, sg_error *err)
{
    sg_buf b;
    sg_buf_init(&b, 4096);
    sg_buf_printf(&b, "cannot read suggested fix '%s'", line);
    if (b.failed || !(*why = sg_buf_take(&b))) {
        sg_buf_dispose(&b);
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    }
    return 0;
}

/* The input dims a fix line's name edits, by name: a Dim of that name, or a derived dim with that
 * root. *head (name -> first such dim) and next[j] (the next one after dim j, or SIZE_MAX) list
 * them in input order. 0 or SG_ENOMEM. */
static int dims_by_name(sg_strmap *head, size_t *next, const sg_input_dim *in, size_t nin)
{
    size_t j = nin, *at;
    while (j-- > 0) {
        const char *key = in[j].kind == SG_SPEC_DIM ? in[j].name : in[j].kind == SG_SPEC_DERIVED ? in[j].root_name : NULL;
        next[j] = SIZE_MAX;
        if (!key)
            continue;
        if (!(at = sg_strmap_slot(head, key)))
            return SG_ENOMEM;
        next[j] = *at;
        *at = j;
    }
    return 0;
}

/* sg_torch_read_fix_lines over the name index of dims_by_name. */
static int read_lines(sg_spec_edits *out, char **why, const sg_input_dim *in, const sg_strmap *head,
                      const size_t *next, const char *const *lines, size_t n, sg_error *err)
{
    size_t i, j;
    bool failed = false;

    for (i = 0; i < n; i++) {
        const char *line = skip_ws(lines[i]), *eq, *rhs, *root = NULL;
        size_t nl = ident_len(line), rl = 0;
        sg_int a, b, lo, hi;
        char name[256];

        eq = strstr(line, " = ");
        if (!nl || nl >= sizeof name || !eq || (size_t)(eq - line) != nl) {
            return unreadable(why, lines[i], err);
        }
        memcpy(name, line, nl);
        name[nl] = '\0';
        rhs = skip_ws(eq + 3);
        if (strncmp(rhs, "Dim(", 4) == 0) {
            bool has_lo = find_bound(rhs, "min=", &lo), has_hi = find_bound(rhs, "max=", &hi);
            sg_bound blo = {has_lo ? lo : 0, 0}, bhi = {has_hi ? hi : 0, has_hi ? 0 : 1};
            failed |= sg_spec_edits__range(out, name, blo, bhi, NULL) != 0;
            continue;
        }
        if (parse_affine_text(rhs, &a, &root, &rl, &b) || (*rhs >= '0' && *rhs <= '9')) {
            bool constant = !root;
            const char *p = rhs;
            if (constant && (!read_int(&p, &b) || *skip_ws(p))) {
                return unreadable(why, lines[i], err);
            }
            for (j = sg_strmap_get(head, name); j != SIZE_MAX; j = next[j]) {
                sg_int da, db, na, nb, tt;
                if (in[j].kind == SG_SPEC_DIM) {
                    da = 1;
                    db = 0;
                } else if (sg_trace__derived_affine(&in[j], &da, &db)) {
                    /* refine re-applies the derived dim's function to the fixed root */
                } else {
                    continue;
                }
                if (constant) {
                    if (!sg__mul(da, b, &tt) || !sg__add(tt, db, &nb))
                        continue;
                    failed |= sg_spec_edits__static(out, j, true, nb, NULL) != 0;
                } else {
                    char r[256];
                    if (rl >= sizeof r || !sg__mul(da, a, &na) || !sg__mul(da, b, &tt) || !sg__add(tt, db, &nb))
                        continue;
                    memcpy(r, root, rl);
                    r[rl] = '\0';
                    failed |= sg_spec_edits__derived(out, j, na, r, nb, NULL) != 0;
                }
            }
            continue;
        }
        return unreadable(why, lines[i], err);
    }
    return failed ? sg_error_set(err, SG_ENOMEM, "out of memory") : 0;
}

int sg_torch_read_fix_lines(sg_spec_edits *out, char **why, const sg_trace *t, const char *const *lines, size_t n,
                            sg_error *err)
{
    size_t nin = 0, *next;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    sg_strmap head = SG_STRMAP_INIT;
    int rc;

    *why = NULL;
    if (!(next = sg__malloc((nin + 1) * sizeof *next)) || dims_by_name(&head, next, in, nin))
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
    else
        rc = read_lines(out, why, in, &head, next, lines, n, err);
    sg_strmap_dispose(&head);
    sg_free(next);
    return rc;
}
