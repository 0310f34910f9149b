/*
 * fixes.c - suggested fixes and generated specs (include/shapegate/fixes.h).
 *
 * One engine serves both: from a check report's inferred facts, every input
 * dim whose traced value is affine in one symbol (a*s + b) joins the group of
 * s; a group gets one root — the dim whose value is s itself, else one with
 * a = 1, else a new root `_<name>` — its range is the widest valid range of s
 * (avoiding holes: the hole-free piece that holds the example size), and a
 * proved congruence s = r (mod m) becomes a new root `_<name>` with s =
 * m*_<name> + r. The derivation is written as typed spec edits
 * (trace/edit.h), applied to a copy of the trace (sg_trace_edit) and checked again;
 * a new report that still refutes something gives another round. What is
 * offered is the difference between the user's spec and the last spec, and
 * only when that spec checked clean. docs/fixes.md.
 *
 * This file is the driver: the rounds of apply and re-check, the repairs
 * before them, torch's own acceptance, and the lines (the difference between
 * the user's spec and the last one). Deriving one round's overrides from a
 * report is fix_derive.c; what the two share is in fixes_impl.h.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/analysis.h"
#include "report/report.h"
#include "analysis/fix_box.h"
#include "analysis/fixes.h"
#include "analysis/fixes_impl.h"
#include "analysis/infer.h"
#include "analysis/spec_repair.h"
#include "torch/message.h"
#include "solver/problem.h"
#include "torch/fixlines.h"
#include "trace/edit.h"
#include "util/json.h"
#include "util/strmap.h"
#include "util/util.h"

#define MAX_ROUNDS 4

void sg_fixes__strs_push(strs *v, char *s)
{
    if (!s || sg__grow((void **)&v->s, &v->cap, v->n + 1, sizeof *v->s)) {
        sg_free(s);
        v->failed = true;
        return;
    }
    v->s[v->n++] = s;
}

void sg_fixes__strs_pushf(strs *v, const char *fmt, ...)
{
    va_list ap;
    char tmp[1024];
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sg_fixes__strs_push(v, sg__strndup(tmp, strlen(tmp)));
}

static void strs_free(strs *v)
{
    size_t i;
    for (i = 0; i < v->n; i++)
        sg_free(v->s[i]);
    sg_free(v->s);
    v->s = NULL;
    v->n = v->cap = 0;
}

/* ---- applying and checking ---------------------------------------------------------- */


/* ---- the lines: what changed between the user's spec and the fixed one --------------- */

static bool same_name(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The Dim names of `in` (a Dim's name, a derived dim's root) into the set `m` (names borrowed).
 * 0 or SG_ENOMEM. */
static int dim_names(sg_strmap *m, const sg_input_dim *in, size_t n)
{
    size_t i, *at;
    for (i = 0; i < n; i++) {
        const char *name = in[i].kind == SG_SPEC_DIM ? in[i].name : in[i].kind == SG_SPEC_DERIVED ? in[i].root_name : NULL;
        if (name && !(at = sg_strmap_slot(m, name)))
            return SG_ENOMEM;
        if (name)
            *at = i;
    }
    return 0;
}

/* Is `name` in the set of dim_names? */
static bool named_in(const sg_strmap *m, const char *name)
{
    return name && sg_strmap_get(m, name) != SIZE_MAX;
}

/* The lines being made; lines[r] (r: a range line or not) the names that have one, each name's
 * line index (names borrowed from f[]). */
typedef struct fixvec {
    sg_fix *f;
    size_t n, cap;
    sg_strmap lines[2];
    bool failed;
} fixvec;

/* A new line for `name` of this kind, unless the name has one of its kind already (NULL then, or
 * out of memory: v->failed). One line per name: a range line and another may share it. */
static sg_fix *add_fix(fixvec *v, sg_fix_kind kind, const char *name, const char *source)
{
    sg_fix *f;
    size_t *at;
    sg_strmap *lines = &v->lines[kind == SG_FIX_RANGE];
    if (sg_strmap_get(lines, name) != SIZE_MAX)
        return NULL;
    if (sg__grow((void **)&v->f, &v->cap, v->n + 1, sizeof *v->f)) {
        v->failed = true;
        return NULL;
    }
    f = &v->f[v->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->name = sg__strndup(name, strlen(name));
    f->source = sg__strndup(source, strlen(source));
    if (!f->name || !f->source || !(at = sg_strmap_slot(lines, f->name)))
        v->failed = true;
    else
        *at = v->n - 1;
    return f;
}

/* torch's order: the Dim lines first, then the others, each group by name (strcmp: "d10" < "d2"). */
static int cmp_fix(const void *x, const void *y)
{
    const sg_fix *a = x, *b = y;
    int ga = a->kind == SG_FIX_RANGE ? 0 : 1, gb = b->kind == SG_FIX_RANGE ? 0 : 1;
    if (ga != gb)
        return ga - gb;
    return strcmp(a->name, b->name);
}


/*
 * The lines that turn the user's spec (`orig`) into the fixed one (`fixed`,
 * same dims in the same order). In SPEC mode every root gets its Dim line.
 */
static int diff_lines(fixvec *v, const sg_input_dim *orig, const sg_input_dim *fixed, size_t n, mode m,
                      sg_error *err)
{
    size_t i;
    sg_strmap orig_names = SG_STRMAP_INIT, fixed_names = SG_STRMAP_INIT;
    if (dim_names(&orig_names, orig, n) || dim_names(&fixed_names, fixed, n))
        v->failed = true;
    for (i = 0; i < v->n && !v->failed; i++) { /* lines already there (none today) */
        size_t *at = sg_strmap_slot(&v->lines[v->f[i].kind == SG_FIX_RANGE], v->f[i].name);
        if (!at)
            v->failed = true;
        else if (*at == SIZE_MAX)
            *at = i;
    }
    for (i = 0; i < n && !v->failed; i++) {
        const sg_input_dim *o = &orig[i], *f = &fixed[i];
        const char *name = o->kind == SG_SPEC_DIM ? o->name : NULL;
        sg_fix *x;
        sg_int a, b;

        if (m == MODE_SPEC && f->kind == SG_SPEC_DIM)
            name = f->name;
        if (f->kind == SG_SPEC_DERIVED && sg_trace__derived_affine(f, &a, &b) && !named_in(&orig_names, f->root_name)
            && (m == MODE_SPEC || name)) {
            if ((x = add_fix(v, SG_FIX_RANGE, f->root_name, o->source)) != NULL) {
                x->new_root = true;
                x->min = f->root_min;
                x->max = f->root_max;
                x->line = sg_torch_range_line(f->root_name, f->root_min, f->root_max, true);
            }
        }
        if (!name && o->kind == SG_SPEC_DERIVED && f->kind == SG_SPEC_STATIC && f->has_static_size
            && sg_trace__derived_affine(o, &a, &b) && a > 0 && !named_in(&fixed_names, o->root_name)) {
            /* a derived dim made a constant, over a root that no input names: torch's line is the root's */
            sg_int q = 0, rem = 1;
            if (sg__sub(f->static_size, b, &q)) {
                sg__floordiv(q, a, &rem);
                if (rem * a == q && (x = add_fix(v, SG_FIX_CONSTANT, o->root_name, o->source)) != NULL) {
                    x->value = rem;
                    x->line = sg_torch_constant_line(o->root_name, rem);
                }
            }
        }
        if (!name)
            continue;
        if (f->kind == SG_SPEC_STATIC && f->has_static_size) {
            if ((x = add_fix(v, SG_FIX_CONSTANT, name, o->source)) != NULL) {
                x->value = f->static_size;
                x->line = sg_torch_constant_line(name, f->static_size);
            }
        } else if (f->kind == SG_SPEC_DIM && same_name(f->name, name)) {
            if ((m == MODE_SPEC || !sg_torch_same_range(o->min, o->max, f->min, f->max))
                && (x = add_fix(v, SG_FIX_RANGE, name, o->source)) != NULL) {
                x->min = f->min;
                x->max = f->max;
                x->new_root = o->kind != SG_SPEC_DIM;
                x->line = sg_torch_range_line(name, f->min, f->max, false);
            }
        } else if (f->kind == SG_SPEC_DIM) {
            if ((x = add_fix(v, SG_FIX_DERIVED, name, o->source)) != NULL) {
                x->root = sg__strndup(f->name, strlen(f->name));
                x->a = 1;
                x->line = sg_torch_derived_line(name, 1, f->name, 0);
            }
        } else if (f->kind == SG_SPEC_DERIVED && sg_trace__derived_affine(f, &a, &b)) {
            if ((x = add_fix(v, SG_FIX_DERIVED, name, o->source)) != NULL) {
                x->root = sg__strndup(f->root_name, strlen(f->root_name));
                x->a = a;
                x->b = b;
                x->line = sg_torch_derived_line(name, a, f->root_name, b);
            }
        }
    }
    sg_strmap_dispose(&orig_names);
    sg_strmap_dispose(&fixed_names);
    sg_strmap_dispose(&v->lines[0]); /* the line indices would not survive the sort */
    sg_strmap_dispose(&v->lines[1]);
    for (i = 0; i < v->n; i++)
        if (!v->f[i].line || (v->f[i].kind == SG_FIX_DERIVED && !v->f[i].root))
            v->failed = true;
    if (v->failed)
        return sg_error_set(err, SG_ENOMEM, "out of memory printing fixes");
    if (v->n)
        qsort(v->f, v->n, sizeof *v->f, cmp_fix);
    return 0;
}

/* ---- the driver ---------------------------------------------------------------------- */


/*
 * Inference is about F, the trace's definitions and constraints, never its spec (analysis/
 * infer.h), and a spec edit copies guards, symbols and input values as they are (trace/edit.c).
 * The one way a spec reaches F is a symbol with no input source whose source names a spec root
 * (a phantom root: problem.c's definitions). False when that may be so for `a` or `b` (or when
 * looking would cost more than a check: then the caller infers again).
 */
static bool same_facts(const sg_trace *a, const sg_trace *b)
{
    size_t ns = 0, na = 0, nb = 0, k, j, i;
    const sg_symbol_info *si = sg_trace_symbols(a, &ns);
    const sg_input_dim *ia = sg_trace_inputs(a, &na), *ib = sg_trace_inputs(b, &nb);
    if (na != nb || (double)ns * (double)(na + 1) > 1e7)
        return false;
    for (k = 0; k < ns; k++)
        for (j = 0; j < si[k].nsources; j++)
            for (i = 0; i < 2 * na; i++) {
                const sg_input_dim *d = i < na ? &ia[i] : &ib[i - na];
                const char *nm = d->kind == SG_SPEC_DIM ? d->name : d->kind == SG_SPEC_DERIVED ? d->root_name : NULL;
                if (nm && si[k].sources[j] && strcmp(nm, si[k].sources[j]) == 0)
                    return false;
            }
    return true;
}

/*
 * `to` (checked without inference) gets a deep copy of `from`'s inferred facts, expressions
 * copied into to's pool. Returns 0, SG_ENOMEM, or 1 when it cannot (no pool): then infer again.
 */
static int copy_inferred(sg_report *to, const sg_report *from, sg_error *err)
{
    sg_inferred *a;
    sg_expr_copier cp;
    size_t k;
    int rc = 0;
    if (!to->pool || !from->inferred || from->ninferred == 0)
        return 1;
    a = sg__calloc(from->ninferred + 1, sizeof *a);
    if (!a)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    sg_expr_copier_init(&cp, to->pool);
    for (k = 0; k < from->ninferred && !rc; k++) {
        a[k] = from->inferred[k];
        a[k].holes = NULL;
        a[k].equals = NULL;
        if (from->inferred[k].nholes) {
            a[k].holes = sg__calloc(from->inferred[k].nholes, sizeof *a[k].holes);
            if (!a[k].holes)
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            else
                memcpy(a[k].holes, from->inferred[k].holes, from->inferred[k].nholes * sizeof *a[k].holes);
        }
        if (!rc && from->inferred[k].equals && !(a[k].equals = sg_expr_copy(&cp, from->inferred[k].equals)))
            rc = sg_error_set(err, SG_ENOMEM, "out of memory copying inferred facts");
    }
    sg_expr_copier_dispose(&cp);
    if (rc) {
        sg_inferred_free_array(a, from->ninferred);
        return rc;
    }
    sg_inferred_free_array(to->inferred, to->ninferred);
    to->inferred = a;
    to->ninferred = from->ninferred;
    return 0;
}

/* Any refuted, unknown or invalid dim left in `r`? */
static bool clean(const sg_report *r) { return r->verdict == SG_VERDICT_OK; }

/* The note of fixes not tried because the job's budget was spent first (first_check; the engine's
 * sg_fixes__budget_spent). */
#define NOTE_BUDGET_SPENT "time budget spent before the first check"

/*
 * The whole derivation shares one wall-clock budget, opts->timeout_ms: each
 * check gets what is left of it. False when nothing is left (then `o` is unchanged).
 */
static bool budget_left(sg_check_options *o, unsigned total_ms, double start)
{
    double left;
    if (total_ms == 0)
        return true;
    left = total_ms - (sg_problem_now() - start) * 1000.0;
    if (left < 1)
        return false;
    o->timeout_ms = (unsigned)left;
    return true;
}

/* The first check of `t` (the trace, or its repaired spec) on what is left of the budget: 0 with
 * `*out` NULL and a note when nothing is left. */
static int first_check(sg_report **out, const sg_trace *t, sg_check_options *o, unsigned total_ms, double start,
                       const sg_runtime *rt, strs *notes, sg_error *err)
{
    *out = NULL;
    if (!budget_left(o, total_ms, start)) {
        sg_fixes__strs_pushf(notes, "%s", NOTE_BUDGET_SPENT);
        return 0;
    }
    return sg_check_rt(out, t, o, rt, err);
}

/* Is there an earlier Dim `name` in in[0 .. i)? */
static bool seen_before(const sg_input_dim *in, size_t i, const char *name)
{
    size_t j;
    for (j = 0; j < i; j++)
        if (in[j].kind == SG_SPEC_DIM && strcmp(in[j].name, name) == 0)
            return true;
    return false;
}

/*
 * A spec torch refuses, repaired where what it refuses says what it means
 * (torch/validate.c has the rules and torch's words):
 *   - Dim('dx', min=4, max=4): torch's Dim() refuses min == max; the spec means
 *     the size itself (when the example is that size): `dx = 4`;
 *   - an example size outside its Dim's range ("20 not in range [2, 10]"): the
 *     range is widened to hold the example (the other way out, an example
 *     inside the range, is the user's to choose);
 *   - one Dim name with two definitions: one definition, the intersection of the
 *     two ranges when it holds every example of the name, else their union;
 *   - a derived dim whose derived min is negative: its root's min raised to the
 *     least value that makes every derived min of that root >= 0 (>= 2 for
 *     `root - k`, which torch re-roots at the derived dim).
 * A copy of `t` with those edits goes to *out (NULL when there is none).
 * Returns 0 or SG_ENOMEM.
 */
static int repair_spec(sg_trace **out, const sg_trace *t, strs *notes, sg_error *err)
{
    size_t n = 0, i, j;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    sg_spec_edits e;
    char num[SG_INT_STRLEN], n2[SG_INT_STRLEN], n3[SG_INT_STRLEN], n4[SG_INT_STRLEN];
    int rc = 0;

    *out = NULL;
    memset(&e, 0, sizeof e);
    for (i = 0; i < n; i++) {
        sg_bound lo = in[i].min, hi = in[i].max, ilo, ihi, ulo, uhi;
        bool other = false, widen = false, fits = true;
        if (in[i].kind != SG_SPEC_DIM || seen_before(in, i, in[i].name))
            continue;
        if (one_value(in[i].min, in[i].max) && in[i].size == in[i].min.v) {
            if ((rc = sg_spec_edits__static(&e, i, true, in[i].size, err)) != 0)
                goto cleanup;
            sg_fixes__strs_pushf(notes, "%s: Dim('%s', min=%s, max=%s) is refused by torch; a dim of one size is written as that size",
                       in[i].source, in[i].name, sg_int_format(num, in[i].size), num);
            continue;
        }
        /* the name's definitions: their intersection and their union, and every example of it */
        ilo = ulo = lo;
        ihi = uhi = hi;
        for (j = i + 1; j < n; j++) {
            if (in[j].kind != SG_SPEC_DIM || strcmp(in[j].name, in[i].name) != 0)
                continue;
            if (in[j].min.inf != lo.inf || in[j].min.v != lo.v || in[j].max.inf != hi.inf || in[j].max.v != hi.v)
                other = true;
            if (!in[j].min.inf && (ilo.inf || in[j].min.v > ilo.v))
                ilo = in[j].min;
            if (in[j].min.inf || (!ulo.inf && in[j].min.v < ulo.v))
                ulo = in[j].min;
            if (!in[j].max.inf && (ihi.inf || in[j].max.v < ihi.v))
                ihi = in[j].max;
            if (in[j].max.inf || (!uhi.inf && in[j].max.v > uhi.v))
                uhi = in[j].max;
        }
        for (j = i; j < n; j++)
            if (in[j].kind == SG_SPEC_DIM && strcmp(in[j].name, in[i].name) == 0)
                fits &= (ilo.inf || in[j].size >= ilo.v) && (ihi.inf || in[j].size <= ihi.v);
        if (other) {
            lo = fits ? ilo : ulo;
            hi = fits ? ihi : uhi;
            sg_fixes__strs_pushf(notes, "Dim '%s' has two definitions: one, with the %s of their ranges", in[i].name,
                       fits ? "intersection" : "union");
        }
        /* every example of the name inside the range */
        for (j = i; j < n; j++) {
            if (in[j].kind != SG_SPEC_DIM || strcmp(in[j].name, in[i].name) != 0)
                continue;
            if (!lo.inf && in[j].size < lo.v) {
                lo.v = in[j].size;
                widen = true;
            }
            if (!hi.inf && in[j].size > hi.v) {
                hi.v = in[j].size;
                widen = true;
            }
        }
        if (widen)
            sg_fixes__strs_pushf(notes, "%s: the example size is outside Dim '%s' [%s, %s]: its range widened to [%s, %s] to hold "
                       "it (or give an example inside the range)", in[i].source, in[i].name,
                       in[i].min.inf ? "-oo" : sg_int_format(num, in[i].min.v), in[i].max.inf ? "oo" : sg_int_format(n2, in[i].max.v),
                       lo.inf ? "-oo" : sg_int_format(n3, lo.v), hi.inf ? "oo" : sg_int_format(n4, hi.v));
        /*
         * derived dims of this root: torch wants a*root + b >= 0 at the root's min. For root - k
         * torch makes the derived dim's symbol the root (x = s + k) and gives it min 2 like any
         * root: below that its program rejects the sizes its range admits, so the min is 2 there.
         */
        for (j = 0; j < n; j++) {
            sg_int a, b, need, want;
            if (in[j].kind != SG_SPEC_DERIVED || !in[j].root_name || strcmp(in[j].root_name, in[i].name) != 0
                || !sg_trace__derived_affine(&in[j], &a, &b) || a <= 0 || lo.inf || a * lo.v + b >= 0)
                continue;
            want = a == 1 ? 2 : 0;
            need = (want - b + a - 1) / a;
            sg_fixes__strs_pushf(notes, "%s = %s: its min at %s's min %s is negative: %s's min raised to %s", in[j].source,
                       in[j].name, in[i].name, sg_int_format(num, lo.v), in[i].name, sg_int_format(n2, need));
            lo.v = need;
            widen = true;
        }
        if ((other || widen) && (rc = sg_spec_edits__range(&e, in[i].name, lo, hi, err)) != 0)
            goto cleanup;
    }
    if (e.n && (rc = sg_trace_edit(out, t, &e, err)) != 0 && rc != SG_ENOMEM) {
        sg_fixes__strs_pushf(notes, "repaired spec rejected: %s", err ? err->msg : "invalid");
        rc = 0;
    }
cleanup:
    sg_spec_edits__dispose(&e);
    return rc;
}

/*
 * Did torch stop before it traced the model? It raised (the trace records the
 * exception) and recorded no guard: a spec it refused while creating the
 * inputs' symbols ("20 not in range [2, 10]") or before. Nothing about the
 * model is known then, so a repaired spec can pass torch's spec checks but is
 * never "verified" (a check against no guards proves nothing about the model).
 */
static bool untraced(const sg_trace *t) { return sg_trace_torch_error(t) && sg_trace_guard_count(t) == 0; }

#define MAX_AUTO 3       /* attempts with Dim.AUTO for dependent dims */
#define MAX_AUTO_DIMS 16 /* more refuted dims than this: no attempt */

/*
 * The refuted named dims of `r` (Dims and derived dims of `t`) in the order
 * they are made Dim.AUTO: those the facts relate to others by a relation no
 * Dim can say (a non-affine `equals`) first, then the later inputs first
 * (cat(x, y): y depends on x). Returns how many (at most `cap`; `cap` when more).
 */
static size_t auto_candidates(const sg_trace *t, const sg_report *r, size_t *out, size_t cap)
{
    size_t n = 0, nin = 0, i, k, pass, nx = 0;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    const sg_expr **dep_sym = NULL; /* by symbol index: the symbol when an inferred fact of it is such an equality */
    for (k = 0; k < r->ninferred; k++)
        if (sg_expr_symbol_index(r->inferred[k].sym) + 1 > nx)
            nx = sg_expr_symbol_index(r->inferred[k].sym) + 1;
    if (nx && !(dep_sym = sg__calloc(nx, sizeof *dep_sym)))
        return 0; /* (out of memory: no candidates, so no Dim.AUTO attempt) */
    for (k = 0; k < r->ninferred; k++) {
        const sg_expr *s2;
        sg_int a, b;
        if (r->inferred[k].equals && !sg_expr_affine(r->inferred[k].equals, &s2, &a, &b))
            dep_sym[sg_expr_symbol_index(r->inferred[k].sym)] = r->inferred[k].sym;
    }
    for (pass = 0; pass < 2; pass++)
        for (i = nin; i-- > 0;) {
            bool dep, seen = false;
            size_t x;
            if (i >= r->ndims || r->dims[i].status != SG_DIM_REFUTED
                || (in[i].kind != SG_SPEC_DIM && in[i].kind != SG_SPEC_DERIVED) || !in[i].value)
                continue;
            x = sg_expr_kind(in[i].value) == SG_SYM ? sg_expr_symbol_index(in[i].value) : SIZE_MAX;
            dep = x < nx && dep_sym[x] == in[i].value;
            if (dep != (pass == 0))
                continue;
            for (k = 0; k < n; k++)
                seen |= out[k] == i;
            if (seen)
                continue;
            if (n == cap) {
                sg_free(dep_sym);
                return cap;
            }
            out[n++] = i;
        }
    sg_free(dep_sym);
    return n;
}

/* A split Dim (analysis/spec_repair.c) has no line: `d = d_1` would rename d for every use. */
static void drop_split_lines(fixvec *v, const strs *split)
{
    size_t i, k, j = 0;
    for (i = 0; i < v->n; i++) {
        bool named = false;
        for (k = 0; k < split->n; k++)
            named |= (v->f[i].name && strcmp(v->f[i].name, split->s[k]) == 0)
                     || (v->f[i].root && strcmp(v->f[i].root, split->s[k]) == 0);
        if (named)
            sg_fix__dispose(&v->f[i]);
        else
            v->f[j++] = v->f[i];
    }
    v->n = j;
}

/*
 * The structural repair of an invalid spec (analysis/spec_repair.c): a copy of
 * `t` with the repaired spec into *cur (NULL when there is nothing to repair),
 * or, for a Dim torch refused to build before recording any input, the Python
 * drop-in in `res` (untraced). Its notes join `notes`. Returns 0 or an error.
 */
static int structural_repair(sg_trace **cur, sg_fixes *res, const sg_trace *t, strs *notes, strs *split, sg_error *err)
{
    sg_spec_repair sr;
    size_t i;
    int rc = sg_spec_repair_structure(&sr, t, err);
    *cur = NULL;
    if (rc)
        return rc;
    for (i = 0; i < sr.nsplit; i++) {
        sg_fixes__strs_push(split, sr.split[i]);
        sr.split[i] = NULL;
    }
    res->repaired = sr.trace != NULL;
    for (i = 0; i < sr.nnotes; i++) {
        sg_fixes__strs_push(notes, sr.notes[i]);
        sr.notes[i] = NULL;
    }
    if (sr.python && untraced(t)) {
        res->untraced = true;
        res->rounds = 1;
        res->recheck = SG_VERDICT_INVALID_SPEC;
        res->python = sr.python;
        sr.python = NULL;
        sg_fixes__strs_pushf(notes, "torch stopped before recording the inputs (%s): nothing was traced to check the repair "
                   "against; use repaired_Dim in place of Dim, export, and check the new trace", sg_trace_torch_error(t));
    }
    *cur = sr.trace;
    sr.trace = NULL;
    sg_spec_repair_dispose(&sr);
    return 0;
}

/* Does some input dim of `in[0..n-1]` other than `skip` name Dim `root` (as itself or as a root)? */
static bool root_shared(const sg_input_dim *in, size_t n, size_t skip, const char *root)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (i != skip && ((in[i].kind == SG_SPEC_DIM && in[i].name && strcmp(in[i].name, root) == 0) ||
                          (in[i].kind == SG_SPEC_DERIVED && in[i].root_name && strcmp(in[i].root_name, root) == 0)))
            return true;
    return false;
}

/*
 * torch stopped inside its own code before tracing the model (torch 2.6:
 * "'One' object has no attribute 'name'" from EqualityConstraint): a derived
 * dim `A*root + B` whose root's example, (size - B)/A, is 0 or 1 is the one
 * cause a spec can avoid (torch specialises that root to a constant, then
 * builds the derived dim over it). Each such dim over a root no other input
 * names becomes a Dim of its own over the derived dim's range (from 2). A copy
 * of `t` with that spec into *out; NULL when no dim has that cause. Notes say
 * what changed. Returns 0 or an error (SG_ENOMEM, ...).
 */
static int zero_one_roots(sg_trace **out, const sg_trace *t, strs *notes, sg_error *err)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    sg_spec_edits ae;
    int rc = 0;

    *out = NULL;
    memset(&ae, 0, sizeof ae);
    for (i = 0; i < n && !rc; i++) {
        const sg_input_dim *d = &in[i];
        sg_int a = 0, b = 0, q = 0, root = 0;
        sg_bound lo = d->min, hi = d->max;
        char *name;
        char num[SG_INT_STRLEN];
        if (d->kind != SG_SPEC_DERIVED || !d->root_name || !sg_trace__derived_affine(d, &a, &b) || a <= 0 ||
            !sg__sub(d->size, b, &q) || q % a != 0 || (root = q / a) < 0 || root > 1 ||
            root_shared(in, n, i, d->root_name))
            continue;
        if (!(name = sg_fixes__made_name(d)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (lo.inf || lo.v < 2) {
            lo.inf = 0;
            lo.v = 2;
        }
        sg_fixes__strs_pushf(notes, "%s = %s: the root %s has the example size %s, which torch specialises to a constant "
                   "before tracing (and torch 2.6 then fails inside its own code): a Dim of its own, %s, over the "
                   "same sizes", d->source, d->name ? d->name : "the derived dim", d->root_name,
                   sg_int_format(num, root), name);
        rc = sg_spec_edits__dim(&ae, i, name, true, lo, hi, err);
        sg_free(name);
    }
    if (!rc && ae.n)
        rc = sg_trace_edit(out, t, &ae, err);
    sg_spec_edits__dispose(&ae);
    return rc;
}

/* How often torch's own check may send a verified spec back (each time more dims become Dim.AUTO). */
#define MAX_TORCH_ROUNDS 3

/*
 * Is input dim `d` a plain Dim that torch names `name` in a "Constraints
 * violated (...)" header? Only those are read: a Dim the fix keeps over the
 * traced symbol meets the recorded guards as torch would record them again. A
 * derived dim's guards torch re-traces over the new root and simplifies (`(6*B)
 * % 4 == 0` is true for B = 2*_B), which the recorded ones do not show.
 */
static bool torch_names(const sg_input_dim *d, const char *name)
{
    return d->kind == SG_SPEC_DIM && d->name && d->value && sg_expr_kind(d->value) == SG_SYM &&
           strcmp(d->name, name) == 0;
}

/*
 * Does torch/message.c's replay give torch's own answer on the spec `t` was
 * traced with? torch accepted it (no exception recorded) and the replay has no
 * text, or torch raised "Constraints violated (names)!" and the replay names
 * the same dims. A trace that does not say what torch answered (no torch
 * version, or torch never traced) gives no evidence against the replay. The
 * replay reproduces torch's text on every corpus case but not on every trace
 * (sympy rewrites it does not know): where it contradicts torch on the traced
 * spec, its verdict on a new spec is not evidence either. Sets *trusted.
 */
static int replay_trusted(const sg_trace *t, bool *trusted, sg_error *err)
{
    const char *ver = sg_trace_torch_version(t), *exc = sg_trace_torch_error(t);
    const char *msg = sg_trace_torch_error_message(t), *lead = "Constraints violated (", *p, *end;
    sg_torch_text *tm = NULL;
    size_t k, count = 0;
    int rc;

    *trusted = true;
    if (!ver || !*ver || !sg_trace_has_shape_env(t))
        return 0;
    if ((rc = sg_torch_text_build(&tm, t, err)) != 0)
        return rc;
    if (!exc) {
        *trusted = tm->text == NULL;
    } else if (msg && (p = strstr(msg, lead)) && (end = strstr(p, ")!"))) {
        p += strlen(lead); /* torch's names, ", "-joined: each must be the replay's, and as many */
        while (p < end) {
            const char *q = strstr(p, ", ");
            size_t len = (size_t)((q && q < end ? q : end) - p);
            bool found = false;
            for (k = 0; k < tm->nnames && !found; k++)
                found = strlen(tm->names[k]) == len && strncmp(tm->names[k], p, len) == 0;
            *trusted &= found;
            count++;
            p += len + (q && q < end ? 2 : 0);
        }
        *trusted &= count == tm->nnames;
    }
    sg_torch_text_free(tm);
    return 0;
}

/*
 * torch's own check of a spec shapegate verified: torch/message.c replays
 * produce_guards on it. A guard that every size passes (proved) but that
 * torch's value ranges cannot decide over a named Dim's range makes torch
 * raise "Constraints violated" all the same (torch 2.6 on
 * `-n + 8*((n + 7)//8) >= 0`, 2.6 on `s != sys.maxsize` without a max): the
 * dims torch would name become Dim.AUTO (torch then infers their range and
 * checks the guards at run time), and the spec is checked again, exactly and
 * by torch's rules, up to MAX_TORCH_ROUNDS times. `*cur` is replaced by the
 * accepted spec; when torch would still refuse, res->verified becomes false
 * and a note says why. Returns 0 or an error (SG_ENOMEM, ...).
 */
static int torch_accepts(sg_trace **cur, sg_fixes *res, strs *notes, sg_check_options *o, unsigned total_ms,
                         double start, const sg_runtime *rt, sg_error *err)
{
    unsigned round;
    int rc = 0;

    for (round = 0;; round++) {
        sg_torch_text *tm = NULL;
        sg_spec_edits ae;
        sg_trace *next = NULL;
        sg_report *rep = NULL;
        size_t nin = 0, i, k, nauto = 0;
        const sg_input_dim *in = sg_trace_inputs(*cur, &nin);
        const char *ver = sg_trace_torch_version(*cur), *why;
        bool refused = false;

        if ((rc = sg_torch_text_build(&tm, *cur, err)) != 0)
            return rc;
        why = tm->nlines ? tm->lines[0] : tm->text;
        memset(&ae, 0, sizeof ae);
        for (i = 0; tm->text && i < nin && !rc; i++)
            for (k = 0; k < tm->nnames; k++)
                if (torch_names(&in[i], tm->names[k])) {
                    sg_bound none = {0};
                    if (round < MAX_TORCH_ROUNDS)
                        sg_fixes__strs_pushf(notes, "%s: torch %s would raise on this Dim although every size of it passes "
                                   "the guards (%s): Dim.AUTO for it, torch infers its range and checks the guards "
                                   "at run time", in[i].source, ver ? ver : "", why);
                    rc = sg_spec_edits__hint(&ae, i, SG_SPEC_AUTO, false, none, none, err);
                    nauto++;
                    break;
                }
        if (rc || nauto == 0) { /* accepted, or only dims whose re-traced guards this cannot replay */
            sg_spec_edits__dispose(&ae);
            sg_torch_text_free(tm);
            return rc;
        }
        if (round == MAX_TORCH_ROUNDS) {
            refused = true;
        } else if ((rc = sg_trace_edit(&next, *cur, &ae, err)) != 0) {
            if (rc != SG_ENOMEM) {
                sg_fixes__strs_pushf(notes, "the spec torch accepts could not be built: %s", err ? err->msg : "invalid");
                refused = true;
                rc = 0;
            }
        } else if (!budget_left(o, total_ms, start)) {
            sg_fixes__strs_pushf(notes, "time budget spent before the spec torch accepts was checked");
            refused = true;
        } else if ((rc = sg_check__lean_rt(&rep, next, o, rt, err)) == 0 && !clean(rep)) {
            refused = true;
        }
        sg_spec_edits__dispose(&ae);
        if (refused) {
            res->verified = false;
            sg_fixes__strs_pushf(notes, "torch %s would still refuse the fixed spec: %s", ver ? ver : "", why);
        }
        sg_torch_text_free(tm);
        sg_report_free(rep);
        if (rc || refused) {
            sg_trace_free(next);
            return rc;
        }
        sg_trace_free(*cur);
        *cur = next;
    }
}

/* The fix's state after a round (or a restart): `next` is the current spec (`*cur` freed), `rep`
 * its re-check, `rounds` the rounds behind it. */
static void round_from(sg_trace **cur, sg_trace *next, const sg_report **r, const sg_report *rep, sg_fixes *res,
                       unsigned rounds)
{
    sg_trace_free(*cur);
    *cur = next;
    *r = rep;
    res->rounds = rounds;
    res->recheck = rep->verdict;
}

static int run(sg_fixes **out, const sg_trace *t, const sg_report *r0, const sg_check_options *opts, mode m,
               const sg_runtime *rt, sg_error *err)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_fixes *res = NULL;
    sg_trace *cur = NULL, *next = NULL;
    sg_report *rep = NULL, *own0 = NULL, *prev = NULL;
    const sg_report *r = r0;
    strs notes = {0}, split = {0};
    fixvec fv = {0};
    deriver d;
    char **names = NULL;
    size_t nin = 0, i;
    const sg_input_dim *orig = sg_trace_inputs(t, &nin);
    unsigned round, total_ms, attempt = 0;
    double start;
    int rc = 0;
    const sg_report *rfirst;       /* the report the first round derived from */
    const sg_trace *from = t;      /* the trace the rounds start from */
    sg_trace *auto_t = NULL;       /* `t` with Dim.AUTO for dependent dims (owned) */
    sg_report *auto_r = NULL;      /* its check */
    bool *keep = NULL;             /* per input: made Dim.AUTO by the AUTO attempt (spec mode keeps it) */
    bool repaired;
    bool fit;                      /* fit the groups' boxes inside the joint guards (fix_box.h) */
    size_t nnotes0;

    *out = NULL;
    if ((rc = sg_check__options(&o, opts, err)) != 0)
        return rc;
    o.infer = true;
    total_ms = o.timeout_ms;
    start = sg_problem_now();
    res = sg__calloc(1, sizeof *res);
    if (!res)
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    res->recheck = SG_VERDICT_UNKNOWN;

    if (m == MODE_SPEC) {
        /* name every dynamic dim that has no Dim name yet */
        names = sg__calloc(nin + 1, sizeof *names);
        if (!names) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        for (i = 0; i < nin; i++)
            if ((orig[i].kind == SG_SPEC_AUTO || orig[i].kind == SG_SPEC_DYNAMIC) && !(names[i] = sg_fixes__made_name(&orig[i]))) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
    }
    if (!r || r->ninferred == 0 || m == MODE_SPEC) {
        if ((rc = first_check(&own0, t, &o, total_ms, start, rt, &notes, err)) != 0 || !own0)
            goto cleanup;
        r = own0;
    }
    if (m == MODE_FIX && clean(r)) {
        res->verified = true;
        res->recheck = SG_VERDICT_OK;
        goto cleanup;
    }
    if (sg_trace_torch_failed_data_dependent(t)) {
        /* tracing stopped at a data-dependent guard: what was recorded is not the whole model */
        sg_fixes__strs_pushf(&notes, "torch's tracing stopped at a data-dependent guard (%s): the trace is incomplete and no "
                   "dynamic_shapes can fix that; fix the model (torch._check, ...)", sg_trace_torch_error(t));
        goto cleanup;
    }
    if (r->verdict == SG_VERDICT_TORCH_FAILED && untraced(t) && m == MODE_FIX) {
        /* torch crashed before tracing: a spec can avoid it only when a 0/1 root is the cause */
        if ((rc = zero_one_roots(&cur, t, &notes, err)) != 0)
            goto cleanup;
        if (cur) {
            res->untraced = true;
            res->rounds = 1;
            res->recheck = SG_VERDICT_TORCH_FAILED;
            sg_fixes__strs_pushf(&notes, "torch stopped before tracing the model (%s): nothing was traced to check the "
                       "repaired spec against; export with it and check the new trace", sg_trace_torch_error(t));
        } else {
            res->recheck = SG_VERDICT_TORCH_FAILED;
            sg_fixes__strs_pushf(&notes, "torch failed inside its own code before tracing the model (%s); no change of the "
                       "spec is known to avoid it", sg_trace_torch_error(t));
            goto cleanup;
        }
    }
    if (r->verdict == SG_VERDICT_INVALID_SPEC && m == MODE_FIX) {
        /* the structure, the examples' agreement, a Dim torch refused to build (analysis/spec_repair.c) */
        if ((rc = structural_repair(&cur, res, t, &notes, &split, err)) != 0)
            goto cleanup;
        if (res->untraced)
            goto cleanup; /* a Dim rewrite: no spec to check */
    }
    if (r->verdict == SG_VERDICT_INVALID_SPEC && (!r->no_spec || cur)) {
        /* a spec torch refuses to build, repaired where what it refuses says what it means */
        sg_trace *structural = cur;
        cur = NULL;
        rc = repair_spec(&cur, structural ? structural : t, &notes, err);
        if (!cur) {
            cur = structural;
            structural = NULL;
        }
        sg_trace_free(structural);
        if (rc != 0)
            goto cleanup;
        if (cur) {
            if ((rc = first_check(&rep, cur, &o, total_ms, start, rt, &notes, err)) != 0 || !rep)
                goto cleanup;
            r = rep;
            res->recheck = rep->verdict;
            if (untraced(t) && (clean(rep) || (rep->verdict == SG_VERDICT_UNKNOWN && !sg_trace_has_shape_env(cur)))) {
                /* passes torch's spec checks; the model was never traced: offered as a fix, not verified
                 * (a generated spec is only ever a verified one: none) */
                if (m == MODE_SPEC) {
                    res->recheck = SG_VERDICT_INVALID_SPEC;
                    sg_fixes__strs_pushf(&notes, "the spec itself is invalid and torch stopped before tracing the model (%s): "
                               "`check` offers a repair; nothing was traced to generate a spec from",
                               sg_trace_torch_error(t));
                    goto cleanup;
                }
                res->untraced = true;
                res->rounds = 1;
                sg_fixes__strs_pushf(&notes, "torch stopped before tracing the model (%s): the repaired spec passes torch's spec "
                           "checks, but no guard was recorded to check it against; export with it and check the new trace",
                           sg_trace_torch_error(t));
            } else if (clean(rep)) {
                res->verified = true;
                res->rounds = 1;
            }
        }
    }
    if (res->verified || res->untraced) {
        /* repaired: nothing left to derive */
    } else if (r->verdict == SG_VERDICT_INVALID_SPEC || r->no_spec) {
        res->recheck = r->verdict;
        sg_fixes__strs_pushf(&notes, r->no_spec ? "the trace carries no per-dim spec: nothing to fix from"
                                      : "the spec itself is invalid: fix it as the message says, then check again");
        goto cleanup;
    }
    rfirst = r;
    repaired = cur != NULL;
    nnotes0 = notes.n;
    {
        /* a box fitted inside the joint guards is tried first only when no Dim.AUTO attempt will be
         * (too many refuted dims for one, or a repaired spec); else after those attempts failed */
        size_t cand[MAX_AUTO_DIMS], nc = auto_candidates(t, rfirst, cand, MAX_AUTO_DIMS);
        fit = repaired || nc == 0 || nc >= MAX_AUTO_DIMS;
    }
again:
    for (round = res->rounds + 1; round <= MAX_ROUNDS && !res->verified && !res->untraced; round++) {
        const sg_trace *base = cur ? cur : from; /* the trace `r` was made from */
        size_t ncur = 0;
        memset(&d, 0, sizeof d);
        d.t = base;
        d.r = r;
        d.m = m;
        d.in = sg_trace_inputs(base, &ncur);
        d.nin = ncur;
        d.notes = &notes;
        d.names = round == 1 ? names : NULL;
        d.keep = keep;
        d.fit_on = fit;
        if ((rc = sg_fixes__derive(&d, err)) != 0) {
            sg_spec_edits__dispose(&d.edits);
            goto cleanup;
        }
        if (d.edits.n == 0) {
            sg_spec_edits__dispose(&d.edits);
            sg_fixes__strs_pushf(&notes, "no fix derived for what is still refuted");
            break;
        }
        /* the derived spec, applied to a structured copy of the trace `r` was made from */
        rc = sg_trace_edit(&next, base, &d.edits, err);
        sg_spec_edits__dispose(&d.edits);
        if (rc) {
            if (rc == SG_ENOMEM)
                goto cleanup;
            sg_fixes__strs_pushf(&notes, "derived spec rejected: %s", err ? err->msg : "invalid");
            rc = 0;
            break;
        }
        /* `r` may be `rep`: kept until the re-check has taken what it needs of it */
        prev = rep;
        rep = NULL;
        /* the re-check needs no inference unless another round must derive from it */
        o.infer = false;
        if (!budget_left(&o, total_ms, start)) {
            sg_fixes__strs_pushf(&notes, "time budget spent after %u round(s)", round - 1);
            sg_report_free(prev);
            prev = NULL;
            r = NULL;
            break;
        }
        if ((rc = sg_check__lean_rt(&rep, next, &o, rt, err)) != 0) {
            sg_report_free(prev);
            goto cleanup;
        }
        o.infer = true;
        if (!clean(rep) && round < MAX_ROUNDS) {
            /* the facts are the same as `r`'s when the edit did not reach F: no second check */
            int cr = r && r->ninferred && same_facts(base, next) ? copy_inferred(rep, r, err) : 1;
            if (cr < 0) {
                sg_report_free(prev);
                rc = cr;
                goto cleanup;
            }
            if (cr != 0 && budget_left(&o, total_ms, start)) {
                sg_report_free(rep);
                rep = NULL;
                if ((rc = sg_check__lean_rt(&rep, next, &o, rt, err)) != 0) {
                    sg_report_free(prev);
                    goto cleanup;
                }
            }
        }
        sg_report_free(prev);
        prev = NULL;
        round_from(&cur, next, &r, rep, res, round);
        next = NULL;
        if (clean(rep)) {
            res->verified = true;
            break;
        }
    }
    if (!res->verified && !repaired && attempt < MAX_AUTO) {
        /*
         * Nothing over Dims checks clean: the refuted dims are related in a way no Dim can say
         * (dz = dx + dy kept as a guard, a conv's output size, dx + dy even). The nearest spec
         * torch takes: Dim.AUTO for the dependent dim(s) (torch infers the relation and checks
         * it at run time), the others fixed as usual. One more dim each attempt.
         */
        size_t cand[MAX_AUTO_DIMS], nc = auto_candidates(t, rfirst, cand, MAX_AUTO_DIMS), k;
        sg_spec_edits ae;
        attempt++;
        if (nc >= attempt && nc < MAX_AUTO_DIMS) {
            memset(&ae, 0, sizeof ae);
            if (!keep && !(keep = sg__calloc(nin + 1, sizeof *keep))) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory");
                goto cleanup;
            }
            for (k = 0; k < attempt && !rc; k++) {
                sg_bound none = {0};
                keep[cand[k]] = true;
                rc = sg_spec_edits__hint(&ae, cand[k], SG_SPEC_AUTO, false, none, none, err);
            }
            if (!rc) {
                sg_trace_free(auto_t);
                auto_t = NULL;
                rc = sg_trace_edit(&auto_t, t, &ae, err);
            }
            sg_spec_edits__dispose(&ae);
            if (rc == SG_ENOMEM)
                goto cleanup;
            if (rc == 0 && budget_left(&o, total_ms, start)) {
                while (notes.n > nnotes0) /* what the failed attempt said no longer applies */
                    sg_free(notes.s[--notes.n]);
                sg_report_free(auto_r);
                auto_r = NULL;
                if ((rc = sg_check_rt(&auto_r, auto_t, &o, rt, err)) != 0)
                    goto cleanup;
                for (k = 0; k < attempt; k++)
                    sg_fixes__strs_pushf(&notes, "%s: related to other dims in a way no Dim can express: Dim.AUTO for it "
                               "(torch infers the relation and checks it at run time)", orig[cand[k]].source);
                round_from(&cur, NULL, &r, auto_r, res, 0);
                from = auto_t;
                if (clean(auto_r)) {
                    res->verified = true;
                    res->rounds = 1;
                    cur = auto_t;
                    auto_t = NULL;
                    from = t;
                } else {
                    goto again;
                }
            }
            rc = 0;
        }
    }
    if (!res->verified && !res->untraced && !fit && !rc) {
        /* the Dim.AUTO attempts failed too: the Dims once more, their box fitted inside the joint
         * guards (a relation no Dim says, T + l <= 128, kept by narrowing a range instead) */
        fit = true;
        while (notes.n > nnotes0)
            sg_free(notes.s[--notes.n]);
        sg_free(keep);
        keep = NULL;
        round_from(&cur, NULL, &r, rfirst, res, 0);
        from = t;
        goto again;
    }
    if (res->verified && !res->untraced && cur) {
        bool trusted = true;
        if ((rc = replay_trusted(t, &trusted, err)) != 0 ||
            (trusted && (rc = torch_accepts(&cur, res, &notes, &o, total_ms, start, rt, err)) != 0))
            goto cleanup;
    }
    if (res->verified || res->untraced) {
        size_t nfixed = 0;
        const sg_input_dim *fixed = sg_trace_inputs(cur, &nfixed);
        const char *js = sg_trace_dynamic_shapes_json(cur);
        if (nfixed != nin) {
            rc = sg_error_set(err, SG_ERROR, "fixed trace lost input dims");
            goto cleanup;
        }
        if ((rc = diff_lines(&fv, orig, fixed, nin, m, err)) != 0)
            goto cleanup;
        drop_split_lines(&fv, &split);
        if (js && !(res->spec_json = sg__strndup(js, strlen(js)))) {
            rc = sg_error_set(err, SG_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (res->verified && !res->untraced) { /* torch's lines that make this very trace need no re-check */
            res->checked = cur;
            cur = NULL;
        }
    } else if (res->rounds) {
        sg_fixes__strs_pushf(&notes, "no verified fix: after %u round(s) the re-check still says %s", res->rounds,
                   sg_verdict_name(res->recheck));
    }
cleanup:
    if (notes.failed && !rc)
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
    if (!rc) {
        res->fixes = fv.f;
        res->nfixes = fv.n;
        res->notes = notes.s;
        res->nnotes = notes.n;
        *out = res;
    } else {
        for (i = 0; i < fv.n; i++)
            sg_fix__dispose(&fv.f[i]);
        sg_free(fv.f);
        strs_free(&notes);
        sg_fixes_free(res);
    }
    strs_free(&split);
    if (names)
        for (i = 0; i < nin; i++)
            sg_free(names[i]);
    sg_free(names);
    sg_report_free(rep);
    sg_report_free(own0);
    sg_report_free(auto_r);
    sg_trace_free(auto_t);
    sg_free(keep);
    sg_trace_free(cur);
    sg_trace_free(next);
    return rc;
}

int sg_fixes_suggest_rt(sg_fixes **out, const sg_trace *t, const sg_report *r, const sg_check_options *opts,
                        const sg_runtime *rt, sg_error *err)
{
    if (!out || !t)
        return sg_error_set(err, SG_EINVALID, "sg_fixes_suggest: NULL argument");
    return run(out, t, r, opts, MODE_FIX, rt, err);
}

int sg_fixes__budget_spent(sg_fixes **out, sg_error *err)
{
    sg_fixes *res = sg__calloc(1, sizeof *res);
    strs notes = {0};

    *out = NULL;
    if (res)
        sg_fixes__strs_pushf(&notes, "%s", NOTE_BUDGET_SPENT);
    if (!res || notes.failed) {
        strs_free(&notes);
        sg_free(res);
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    }
    res->recheck = SG_VERDICT_UNKNOWN;
    res->notes = notes.s;
    res->nnotes = notes.n;
    *out = res;
    return 0;
}

int sg_fixes_suggest(sg_fixes **out, const sg_trace *t, const sg_report *r, const sg_check_options *opts,
                     sg_error *err)
{
    int rc = sg_fixes_suggest_rt(out, t, r, opts, NULL, err);
    if (rc == 0)
        sg_fixes__release_checked(*out); /* (only the engine compares torch's lines with it) */
    return rc;
}

int sg_spec_generate_rt(sg_fixes **out, const sg_trace *t, const sg_check_options *opts, const sg_runtime *rt,
                        sg_error *err)
{
    if (!out || !t)
        return sg_error_set(err, SG_EINVALID, "sg_spec_generate: NULL argument");
    return run(out, t, NULL, opts, MODE_SPEC, rt, err);
}

int sg_spec_generate(sg_fixes **out, const sg_trace *t, const sg_check_options *opts, sg_error *err)
{
    int rc = sg_spec_generate_rt(out, t, opts, NULL, err);
    if (rc == 0)
        sg_fixes__release_checked(*out);
    return rc;
}
