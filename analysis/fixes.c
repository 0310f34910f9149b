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
#include "analysis/infer.h"
#include "analysis/spec_repair.h"
#include "torch/message.h"
#include "solver/problem.h"
#include "torch/fixlines.h"
#include "trace/edit.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_ROUNDS 4
#define MAX_CHAIN 8 /* relation hops followed through `equals` */

typedef enum mode { MODE_FIX, MODE_SPEC } mode;

/* One input dim in a group: its traced value is a*sym + b. */
typedef struct member {
    size_t input;
    const sg_expr *sym;
    sg_int a, b;
} member;

/* Growing list of owned strings. */
typedef struct strs {
    char **s;
    size_t n, cap;
    bool failed;
} strs;

static void strs_push(strs *v, char *s)
{
    if (!s || sg__grow((void **)&v->s, &v->cap, v->n + 1, sizeof *v->s)) {
        sg_free(s);
        v->failed = true;
        return;
    }
    v->s[v->n++] = s;
}

static void strs_pushf(strs *v, const char *fmt, ...) SG_PRINTF(2, 3);
static void strs_pushf(strs *v, const char *fmt, ...)
{
    va_list ap;
    char tmp[1024];
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    strs_push(v, sg__strndup(tmp, strlen(tmp)));
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

/* ceil / floor of p/q for q > 0 */
static sg_int div_ceil(sg_int p, sg_int q)
{
    sg_int f;
    sg__floordiv(p, q, &f);
    return f * q == p ? f : f + 1;
}

static sg_int div_floor(sg_int p, sg_int q)
{
    sg_int f;
    sg__floordiv(p, q, &f);
    return f;
}


static void fmt_bound(char *buf, sg_bound v)
{
    if (v.inf)
        buf[0] = '\0';
    else
        sg_int_format(buf, v.v);
}

/* Does the report say input dim i was specialised to a constant? */
static bool specialized(const sg_report *r, size_t i)
{
    size_t k;
    for (k = 0; k < r->nviolations; k++)
        if (r->violations[k].input == i && r->violations[k].kind == SG_VIOL_SPECIALIZED)
            return true;
    return false;
}

/* ---- deriving one round of overrides ------------------------------------------------- */

typedef struct deriver {
    const sg_trace *t;
    const sg_report *r;
    mode m;
    const sg_input_dim *in;
    size_t nin;
    sg_spec_edits edits; /* the spec edits of this round */
    bool failed;         /* out of memory building them */
    strs *notes;  /* shared across rounds */
    char **names; /* per input: the Dim name used for it in SPEC mode (owned) */
    const bool *keep; /* per input, or NULL: left as it is (a Dim.AUTO the AUTO attempt chose) */
    /* by symbol index (sg_expr_symbol_index), `nsym` of them, built by derive(): */
    const sg_inferred **facts; /* the report's facts about the symbol, or NULL */
    bool *dim_value;           /* the symbol is the traced value of some input dim */
    size_t nsym;
    bool fit_on;               /* fit the groups' ranges inside the joint guards (run(): when no AUTO attempt) */
    sg_fit_var *fit;           /* the groups' ranges fitted inside the joint guards (fix_box.h) */
    long *fit_of;              /* by symbol index: its group's entry in fit[], or -1 */
} deriver;

/* The edit "dim `input` = A*ROOT + B" (the Dim ROOT itself when a = 1, b = 0). */
static void push_derived(deriver *d, size_t input, sg_int a, const char *root, sg_int b)
{
    if (sg_spec_edits__derived(&d->edits, input, a, root, b, NULL) != 0)
        d->failed = true;
}

/* The edit "dim `input` is static, of size `size`". */
static void push_static(deriver *d, size_t input, sg_int size)
{
    if (sg_spec_edits__static(&d->edits, input, true, size, NULL) != 0)
        d->failed = true;
}

/* The edit "dim `input` is Dim.AUTO" (no range). */
static void push_auto(deriver *d, size_t input)
{
    sg_bound none = {0};
    if (sg_spec_edits__hint(&d->edits, input, SG_SPEC_AUTO, false, none, none, NULL) != 0)
        d->failed = true;
}

/* The edit "Dim `name` has range [lo, hi]" (an infinite lo: Dim's default, 0). */
static void push_range(deriver *d, const char *name, sg_bound lo, sg_bound hi)
{
    if (lo.inf) {
        lo.inf = 0;
        lo.v = 0;
    }
    if (hi.inf) {
        hi.inf = 1;
        hi.v = 0;
    }
    if (sg_spec_edits__range(&d->edits, name, lo, hi, NULL) != 0)
        d->failed = true;
}

/* May dim i be redefined? (A Dim.DYNAMIC the guards specialise may also become static: see derive().) */
static bool eligible(const deriver *d, size_t i)
{
    sg_spec_kind k = d->in[i].kind;
    if (d->m == MODE_SPEC)
        return k == SG_SPEC_DIM || k == SG_SPEC_AUTO || k == SG_SPEC_DYNAMIC || k == SG_SPEC_DERIVED;
    return k == SG_SPEC_DIM || k == SG_SPEC_DERIVED;
}

/* The Dim name a dim goes by (a DERIVED dim: none of its own). */
static const char *dim_name(const deriver *d, size_t i)
{
    if (d->in[i].kind == SG_SPEC_DIM)
        return d->in[i].name;
    if (d->m == MODE_SPEC && d->names && d->names[i])
        return d->names[i];
    return NULL;
}

/* A fresh name for dim i: its path's identifier characters and its index ("x_0", "inputs_b_1_0"). */
static char *made_name(const sg_input_dim *d)
{
    char buf[256];
    size_t k = 0;
    const char *p;
    bool sep = false;
    for (p = d->path; *p && k + 24 < sizeof buf; p++) {
        char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_') {
            if (sep && k)
                buf[k++] = '_';
            if (k == 0 && ch >= '0' && ch <= '9') {
                buf[k++] = 'd';
                buf[k++] = '_';
            }
            buf[k++] = ch;
            sep = false;
        } else {
            sep = true;
        }
    }
    if (k == 0)
        buf[k++] = 'd';
    snprintf(buf + k, sizeof buf - k, "_%d", d->dim);
    return sg__strndup(buf, strlen(buf));
}

/* The report's facts about symbol `sym`, or NULL. */
static const sg_inferred *inferred_of(const deriver *d, const sg_expr *sym)
{
    uint32_t k = sg_expr_symbol_index(sym);
    return k < d->nsym ? d->facts[k] : NULL;
}

/* Is `sym` the traced value of some input dim? */
static bool is_dim_value(const deriver *d, const sg_expr *sym)
{
    uint32_t k = sg_expr_symbol_index(sym);
    return k < d->nsym && d->dim_value[k];
}

/*
 * Resolve a*sym + b through proved relations sym = a'*sym' + b' to an earlier
 * symbol that is some dim's own size (a relation through a symbol torch
 * replaced would make a dim that is no input the root).
 */
static void follow_equals(const deriver *d, member *mb)
{
    int hops;
    for (hops = 0; hops < MAX_CHAIN; hops++) {
        const sg_inferred *inf = inferred_of(d, mb->sym);
        const sg_expr *s2;
        sg_int a2, b2, na, nb, t;
        if (!inf || !inf->equals || !sg_expr_affine(inf->equals, &s2, &a2, &b2) || !s2 || a2 <= 0
            || !is_dim_value(d, s2))
            return;
        if (!sg__mul(mb->a, a2, &na) || !sg__mul(mb->a, b2, &t) || !sg__add(t, mb->b, &nb))
            return;
        mb->sym = s2;
        mb->a = na;
        mb->b = nb;
    }
}

/* The piece of [lo, hi] between holes that holds `at` (all in the same units). */
static void avoid_holes(sg_bound *lo, sg_bound *hi, const sg_int *holes, size_t nholes, sg_int at, bool *cut)
{
    size_t k;
    *cut = false;
    for (k = 0; k < nholes; k++) {
        if (holes[k] < at && (lo->inf || holes[k] >= lo->v)) {
            lo->inf = 0;
            lo->v = holes[k] + 1;
            *cut = true;
        } else if (holes[k] > at && (hi->inf || holes[k] <= hi->v)) {
            hi->inf = 0;
            hi->v = holes[k] - 1;
            *cut = true;
            break;
        }
    }
}

/* torch's largest size, sys.maxsize: a tensor dim is an int64. */
#define TORCH_MAX_SIZE ((sg_int)INT64_MAX)

/* The widest piece of [lo, hi] between the holes (the first of equal ones), widths counted in
 * torch's sizes [0, sys.maxsize]: a piece above sys.maxsize holds none. */
static void widest_piece(sg_bound lo, sg_bound hi, const sg_int *holes, size_t nholes, sg_bound *blo, sg_bound *bhi)
{
    sg_bound plo = lo, phi;
    size_t k;
    bool have = false;
    sg_int best = -1;
    for (k = 0; k <= nholes; k++) {
        sg_int w;
        if (k < nholes) {
            phi.inf = 0;
            phi.v = holes[k] - 1;
        } else {
            phi = hi;
        }
        {
            sg_int l = plo.inf ? 0 : plo.v, h = phi.inf ? TORCH_MAX_SIZE : phi.v;
            if (h > TORCH_MAX_SIZE)
                h = TORCH_MAX_SIZE;
            w = h >= l ? h - l + 1 : 0;
        }
        if (w > best) {
            best = w;
            *blo = plo;
            *bhi = phi;
            have = true;
        }
        if (k < nholes) {
            plo.inf = 0;
            plo.v = holes[k] + 1;
        }
    }
    if (!have) {
        *blo = lo;
        *bhi = hi;
    }
}

/*
 * Number of sizes = r (mod m) in [lo, hi], an unbounded side read as torch's
 * size range [0, sys.maxsize]: a class over [2, int_oo] holds half as many
 * sizes as [2, sys.maxsize - 1], never "infinitely many" more.
 */
static sg_int class_count(sg_int m, sg_int r, sg_bound lo, sg_bound hi)
{
    sg_int first, last, l = lo.inf ? 0 : lo.v, h = hi.inf ? TORCH_MAX_SIZE : hi.v;
    first = div_ceil(l - r, m);
    last = div_floor(h - r, m);
    return last >= first ? last - first + 1 : 0;
}

/*
 * Holes cut the range: is there a congruence class, finer than the proved
 * modulus m and holding the example size, that no known hole is in and that
 * holds more sizes than the hole-free piece [plo, phi]? (A stride-2 conv keeps
 * sizes = 0 or 3 (mod 4): the class 0 (mod 4) beats any interval.) The
 * smallest such modulus, up to 64*m, goes to *m2, *r2.
 */
static bool class_beats_piece(const sg_inferred *inf, sg_int m, sg_int hint, sg_bound plo, sg_bound phi,
                              sg_int *m2, sg_int *r2)
{
    sg_int piece = class_count(m, ((hint % m) + m) % m, plo, phi), k;
    size_t h;
    for (k = 2; k <= 64; k++) {
        sg_int mm = m * k, rr = ((hint % mm) + mm) % mm;
        bool clear = true;
        for (h = 0; h < inf->nholes && clear; h++)
            if ((((inf->holes[h] - rr) % mm) + mm) % mm == 0)
                clear = false;
        if (!clear)
            continue;
        if (class_count(mm, rr, inf->lo, inf->hi) > piece) {
            *m2 = mm;
            *r2 = rr;
            return true;
        }
        return false;
    }
    return false;
}

/*
 * The group's symbol has one valid value `v`: every member becomes static,
 * `dx = 4` (torch refuses Dim(min=4, max=4)).
 */
static void pin_group(deriver *d, const member *g, size_t ng, sg_int v)
{
    size_t k;
    for (k = 0; k < ng; k++) {
        sg_int x;
        if (!eligible(d, g[k].input))
            continue;
        if (!sg__mul(g[k].a, v, &x) || !sg__add(x, g[k].b, &x)) {
            strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
            continue;
        }
        push_static(d, g[k].input, x);
    }
}

static bool one_value(sg_bound lo, sg_bound hi) { return !lo.inf && !hi.inf && lo.v == hi.v; }

/*
 * A joint hole no single-symbol fact shows ((H//2 - 3)*(W//2 - 3) != 1 rejects
 * H = W = 8 only): when a counterexample of the report puts the group's symbol
 * at a bound of its range, that bound moves past it. The re-check decides
 * whether the narrower box holds.
 */
static void corner_cut(const deriver *d, const member *g, size_t ng, sg_bound *lo, sg_bound *hi)
{
    size_t k, j;
    for (k = 0; k < d->r->nviolations; k++) {
        const sg_violation *v = &d->r->violations[k];
        if (!v->has_counterexample || !v->counterexample)
            continue;
        for (j = 0; j < ng && g[j].input != v->input; j++)
            ;
        if (j == ng)
            continue; /* a violation of some other dim: its counterexample says nothing of this one */
        for (j = 0; j < ng; j++) {
            if (g[j].input != v->input)
                continue;
            sg_int x = v->counterexample[g[j].input] - g[j].b, sv;
            if (g[j].a <= 0 || x % g[j].a != 0)
                continue;
            sv = x / g[j].a;
            if (!lo->inf && sv == lo->v && (hi->inf || sv < hi->v))
                lo->v = sv + 1;
            else if (!hi->inf && sv == hi->v && (lo->inf || sv > lo->v))
                hi->v = sv - 1;
            break;
        }
    }
}

/* [lo, hi] narrowed to the group's range fitted inside the joint guards (fit_groups). */
static void fitted_range(const deriver *d, const sg_expr *sym, sg_bound *lo, sg_bound *hi)
{
    uint32_t k = sg_expr_symbol_index(sym);
    const sg_fit_var *f;
    if (!d->fit_of || k >= d->nsym || d->fit_of[k] < 0)
        return;
    f = &d->fit[d->fit_of[k]];
    if (!f->lo.inf && (lo->inf || f->lo.v > lo->v))
        *lo = f->lo;
    if (!f->hi.inf && (hi->inf || f->hi.v < hi->v))
        *hi = f->hi;
}

/* The override items for one group of members over one symbol. */
static void derive_group(deriver *d, const member *g, size_t ng)
{
    const sg_inferred *inf = inferred_of(d, g[0].sym);
    const sg_symbol_info *si = sg_trace_symbol_info(d->t, g[0].sym);
    char lo_s[SG_INT_STRLEN], hi_s[SG_INT_STRLEN];
    sg_bound lo, hi;
    sg_int m = 1, res = 0, hint;
    size_t k, root = SIZE_MAX;
    bool have_hint, cut = false;
    const char *rname = NULL;
    char newname[256];

    if (!inf) {
        strs_pushf(d->notes, "no inferred facts for %s: its dims are left as they are", sg_expr_symbol_name(g[0].sym));
        return;
    }
    lo = inf->lo;
    hi = inf->hi;
    if (inf->modulus > 1) {
        m = inf->modulus;
        res = inf->residue;
    }
    have_hint = si && si->has_hint;
    hint = have_hint ? si->hint : 0;
    if (!have_hint) /* the example size of a member gives the symbol's value */
        for (k = 0; k < ng && !have_hint; k++)
            if (g[k].a == 1) {
                hint = d->in[g[k].input].size - g[k].b;
                have_hint = true;
            }
    corner_cut(d, g, ng, &lo, &hi);
    fitted_range(d, g[0].sym, &lo, &hi);
    if (have_hint && inf->nholes) {
        sg_bound l0 = lo, h0 = hi;
        sg_int m2 = 0, r2 = 0;
        avoid_holes(&lo, &hi, inf->holes, inf->nholes, hint, &cut);
        if (cut && class_beats_piece(inf, m, hint, lo, hi, &m2, &r2)) {
            /* a finer congruence class avoids every hole and holds more sizes than the piece */
            char ms[SG_INT_STRLEN], rs[SG_INT_STRLEN];
            lo = l0;
            hi = h0;
            m = m2;
            res = r2;
            strs_pushf(d->notes,
                       "%s: the guards leave holes in its range%s; chose the sizes = %s (mod %s), which avoid "
                       "them, over the widest hole-free interval",
                       d->in[g[0].input].source, inf->holes_complete ? "" : " (maybe more)",
                       sg_int_format(rs, r2), sg_int_format(ms, m2));
        } else if (cut) {
            char l0s[SG_INT_STRLEN] = "-int_oo", h0s[SG_INT_STRLEN] = "int_oo", ls[SG_INT_STRLEN] = "",
                 hs[SG_INT_STRLEN] = "", wl[SG_INT_STRLEN] = "", wh[SG_INT_STRLEN] = "", wide[160] = "";
            sg_bound blo, bhi;
            if (!l0.inf)
                sg_int_format(l0s, l0.v);
            if (!h0.inf)
                sg_int_format(h0s, h0.v);
            fmt_bound(ls, lo);
            fmt_bound(hs, hi);
            widest_piece(l0, h0, inf->holes, inf->nholes, &blo, &bhi);
            if (blo.inf != lo.inf || blo.v != lo.v || bhi.inf != hi.inf || bhi.v != hi.v) {
                fmt_bound(wl, blo);
                fmt_bound(wh, bhi);
                snprintf(wide, sizeof wide, "; the widest piece is [%s, %s], but torch needs the example inside "
                         "the range", wl[0] ? wl : "-int_oo", wh[0] ? wh : "int_oo");
            }
            strs_pushf(d->notes,
                       "%s: the guards leave holes in [%s, %s]%s; chose the piece [%s, %s] that holds the "
                       "example size%s",
                       d->in[g[0].input].source, l0s, h0s, inf->holes_complete ? "" : " (maybe more)",
                       ls[0] ? ls : "-int_oo", hs[0] ? hs : "int_oo", wide);
        }
    }

    /* the root: the dim whose value is the symbol itself, else one with a = 1 */
    for (k = 0; k < ng && root == SIZE_MAX; k++)
        if (g[k].a == 1 && g[k].b == 0 && eligible(d, g[k].input) && dim_name(d, g[k].input))
            root = k;
    for (k = 0; k < ng && root == SIZE_MAX; k++)
        if (g[k].a == 1 && eligible(d, g[k].input) && dim_name(d, g[k].input))
            root = k;

    if (m > 1 || root == SIZE_MAX) {
        /* a new root R with sym = m*R + res */
        const char *base = NULL, *reuse = NULL;
        sg_bound rlo, rhi;
        for (k = 0; k < ng && !base; k++)
            if (eligible(d, g[k].input) && dim_name(d, g[k].input))
                base = dim_name(d, g[k].input);
        for (k = 0; k < ng && !base; k++) /* a later round: the root an earlier one made, re-ranged */
            if (eligible(d, g[k].input) && d->in[g[k].input].kind == SG_SPEC_DERIVED && d->in[g[k].input].root_name)
                reuse = d->in[g[k].input].root_name;
        if (!base && !reuse) {
            strs_pushf(d->notes, "%s: no Dim name to derive from", d->in[g[0].input].source);
            return;
        }
        snprintf(newname, sizeof newname, reuse && !base ? "%s" : "_%s", reuse && !base ? reuse : base);
        rname = newname;
        if (have_hint) {
            /* torch specialises a root whose example is 0 or 1: write the same sizes over a root whose
             * example is at least 2 (dx = 8*_dx - 8 rather than dx = 8*_dx at x = 8) */
            sg_int rex = div_floor(hint - res, m), shift;
            if (rex < 2 && sg__mul(m, 2 - rex, &shift) && sg__sub(res, shift, &shift)) {
                res = shift;
                strs_pushf(d->notes, "%s: the new root %s would have the example size %s, which torch specialises; "
                           "written with offset %s so that its example is 2", d->in[g[0].input].source, rname,
                           sg_int_format(lo_s, rex), sg_int_format(hi_s, res));
            }
        }
        rlo.inf = lo.inf;
        rhi.inf = hi.inf;
        rlo.v = lo.inf ? 0 : div_ceil(lo.v - res, m);
        rhi.v = hi.inf ? 0 : div_floor(hi.v - res, m);
        if (rlo.inf) { /* a root's size is never negative */
            rlo.inf = 0;
            rlo.v = div_ceil(-res, m);
        }
        if (one_value(rlo, rhi)) {
            sg_int v;
            if (sg__mul(m, rlo.v, &v) && sg__add(v, res, &v))
                pin_group(d, g, ng, v);
            return;
        }
        push_range(d, rname, rlo, rhi);
        for (k = 0; k < ng; k++) {
            sg_int a, b, t;
            if (!eligible(d, g[k].input))
                continue;
            if (!sg__mul(g[k].a, m, &a) || !sg__mul(g[k].a, res, &t) || !sg__add(t, g[k].b, &b)) {
                strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
                continue;
            }
            push_derived(d, g[k].input, a, rname, b);
        }
        if (m > 1)
            strs_pushf(d->notes, "%s: every valid size is %s (mod %s); new root %s",
                       d->in[g[0].input].source, sg_int_format(lo_s, res), sg_int_format(hi_s, m), rname);
        return;
    }

    /* root member: range of sym shifted by its b */
    rname = dim_name(d, g[root].input);
    if (one_value(lo, hi)) {
        pin_group(d, g, ng, lo.v);
        return;
    }
    {
        sg_bound rlo = lo, rhi = hi;
        if (!rlo.inf)
            rlo.v += g[root].b;
        if (!rhi.inf)
            rhi.v += g[root].b;
        push_range(d, rname, rlo, rhi);
        if (!inf->range_exact)
            strs_pushf(d->notes, "%s: range not proved optimal (budget): the fix may be narrower than needed",
                       d->in[g[root].input].source);
    }
    for (k = 0; k < ng; k++) {
        sg_int b, t;
        if (!eligible(d, g[k].input))
            continue;
        /* value = a*sym + b = a*(R - b_root) + b */
        if (!sg__mul(g[k].a, g[root].b, &t) || !sg__sub(g[k].b, t, &b)) {
            strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
            continue;
        }
        push_derived(d, g[k].input, g[k].a, rname, b);
    }
}

static int cmp_member(const void *x, const void *y)
{
    const member *a = x, *b = y;
    uint32_t ia = sg_expr_id(a->sym), ib = sg_expr_id(b->sym);
    if (ia != ib)
        return ia < ib ? -1 : 1;
    return a->input < b->input ? -1 : a->input > b->input;
}

/*
 * A Dim.AUTO / Dim.DYNAMIC whose min/max the guards contradict (torch's range conflict):
 * the same hint over the widest valid range of its symbol (min/max left out where torch's
 * defaults say as much), or, for DYNAMIC over a single value, the static size.
 */
static void fix_hint(deriver *d, size_t i)
{
    const sg_input_dim *in = &d->in[i];
    uint32_t s = sg_expr_symbol_index(in->value);
    const sg_inferred *f = s < d->nsym ? d->facts[s] : NULL;
    sg_bound lo, hi;
    char a[SG_INT_STRLEN], b[SG_INT_STRLEN];

    if (!f) {
        strs_pushf(d->notes, "%s: nothing inferred about its size: no bounds to suggest", in->source);
        return;
    }
    lo = f->lo;
    hi = f->hi;
    if (f->is_constant || (!lo.inf && !hi.inf && lo.v == hi.v)) {
        sg_int v = f->is_constant ? f->constant : lo.v;
        if (in->kind == SG_SPEC_DYNAMIC) {
            push_static(d, i, v);
            strs_pushf(d->notes, "%s: Dim.DYNAMIC, but the guards allow only %s: static now", in->source,
                       sg_int_format(a, v));
            return;
        }
        lo.inf = hi.inf = 0;
        lo.v = hi.v = v;
    }
    if (lo.inf || lo.v <= 2) { /* torch analyses sizes from 2: min=None says the same */
        lo.inf = -1;
        lo.v = 0;
    }
    if (sg_spec_edits__hint(&d->edits, i, in->kind, !lo.inf || !hi.inf, lo, hi, NULL) != 0) {
        d->failed = true;
        return;
    }
    strs_pushf(d->notes, "%s: Dim.%s(min=%s, max=%s), the range the guards allow (the given bounds conflict with it)",
               in->source, in->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC", lo.inf ? "None" : sg_int_format(a, lo.v),
               hi.inf ? "None" : sg_int_format(b, hi.v));
}

/*
 * The ranges of the groups (members sorted by symbol) fitted inside the trace's joint linear
 * guards (fix_box.h): each group with facts is one variable over [lo, hi] of its symbol, the
 * ones this round may change (FIX mode: a refuted dim, and a member the fix may redefine)
 * narrowed; derive_group reads the result through fitted_range. Returns 0 or SG_ENOMEM.
 */
static int fit_groups(deriver *d, const member *mb, size_t nmb, sg_error *err)
{
    size_t i, k, n = 0, nchanged = 0;
    if (nmb < 2 || !d->fit_on)
        return 0;
    d->fit = sg__calloc(nmb + 1, sizeof *d->fit);
    d->fit_of = sg__malloc((d->nsym + 1) * sizeof *d->fit_of);
    if (!d->fit || !d->fit_of)
        return sg_error_set(err, SG_ENOMEM, "out of memory deriving fixes");
    for (i = 0; i < d->nsym; i++)
        d->fit_of[i] = -1;
    for (i = 0; i < nmb; i = k) {
        const sg_inferred *inf = inferred_of(d, mb[i].sym);
        const sg_symbol_info *si = sg_trace_symbol_info(d->t, mb[i].sym);
        sg_fit_var *f = &d->fit[n];
        bool refuted = false, eligible_member = false;
        for (k = i; k < nmb && mb[k].sym == mb[i].sym; k++) {
            refuted |= mb[k].input < d->r->ndims && d->r->dims[mb[k].input].status == SG_DIM_REFUTED;
            eligible_member |= eligible(d, mb[k].input);
            if (!f->has_example && mb[k].a == 1) { /* as derive_group: a member's example */
                f->has_example = true;
                f->example = d->in[mb[k].input].size - mb[k].b;
            }
        }
        if (!inf || sg_expr_symbol_index(mb[i].sym) >= d->nsym)
            continue;
        f->sym = mb[i].sym;
        f->lo = inf->lo;
        f->hi = inf->hi;
        if (si && si->has_hint) {
            f->has_example = true;
            f->example = si->hint;
        }
        f->order = mb[i].input;
        f->changeable = eligible_member && (d->m == MODE_SPEC || refuted);
        d->fit_of[sg_expr_symbol_index(mb[i].sym)] = (long)n++;
    }
    return sg_fix_fit_box(d->t, d->r->inferred, d->r->ninferred, d->fit, n, &nchanged, err);
}

/*
 * One round: the override items that make every eligible dim of `d->t` what
 * the report's facts say. In FIX mode only groups with a refuted dim change.
 */
static int derive(deriver *d, sg_error *err)
{
    member *mb = NULL;
    size_t nmb = 0, i, k;
    int rc = 0;

    d->nsym = sg_pool_nsymbols(sg_trace_pool(d->t));
    mb = sg__calloc(d->nin + 1, sizeof *mb);
    d->facts = sg__calloc(d->nsym + 1, sizeof *d->facts);
    d->dim_value = sg__calloc(d->nsym + 1, sizeof *d->dim_value);
    if (!mb || !d->facts || !d->dim_value) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory deriving fixes");
        goto cleanup;
    }
    for (i = 0; i < d->r->ninferred; i++) {
        uint32_t s = sg_expr_symbol_index(d->r->inferred[i].sym);
        if (s < d->nsym)
            d->facts[s] = &d->r->inferred[i];
    }
    for (i = 0; i < d->nin; i++) {
        uint32_t s = d->in[i].value ? sg_expr_symbol_index(d->in[i].value) : UINT32_MAX;
        if (s < d->nsym)
            d->dim_value[s] = true;
    }
    for (i = 0; i < d->nin; i++) {
        const sg_input_dim *in = &d->in[i];
        const sg_expr *sym;
        sg_int a, b;
        bool refuted = i < d->r->ndims && d->r->dims[i].status == SG_DIM_REFUTED;

        if (d->m == MODE_FIX && in->kind == SG_SPEC_DYNAMIC && refuted && in->value
            && sg_expr_kind(in->value) == SG_INT) {
            /* Dim.DYNAMIC specialised: torch says use Dim.STATIC; the size it was traced at */
            char num[SG_INT_STRLEN];
            push_static(d, i, sg_expr_int_value(in->value));
            sg_int_format(num, sg_expr_int_value(in->value));
            strs_pushf(d->notes, "%s: Dim.DYNAMIC, but the guards make it %s: static now (no Dim name, so no line)",
                       in->source, num);
            continue;
        }
        if (d->m == MODE_FIX && in->kind == SG_SPEC_DYNAMIC && refuted && !in->value && specialized(d->r, i)) {
            /* Dim.DYNAMIC on a 0/1 example: torch specialised it before tracing (2.14 raises, 2.6 keeps
             * the constant silently); what torch can export is that size, static */
            char num[SG_INT_STRLEN];
            push_static(d, i, in->size);
            strs_pushf(d->notes, "%s: Dim.DYNAMIC on an example of size %s, which torch specialises: static now "
                       "(an example of size >= 2 keeps it dynamic)", in->source, sg_int_format(num, in->size));
            continue;
        }
        if (d->m == MODE_FIX && refuted && (in->kind == SG_SPEC_AUTO || in->kind == SG_SPEC_DYNAMIC)
            && in->has_bounds && in->value && sg_expr_kind(in->value) == SG_SYM) {
            fix_hint(d, i);
            continue;
        }
        if (!eligible(d, i) || (d->keep && d->keep[i]))
            continue;
        if (!in->value) {
            /* never traced: torch made a 0/1 example size a constant before tracing */
            if (specialized(d->r, i) && in->kind == SG_SPEC_DIM)
                push_static(d, i, in->size);
            else if (d->m == MODE_SPEC && (in->kind == SG_SPEC_AUTO || in->kind == SG_SPEC_DYNAMIC))
                push_static(d, i, in->size); /* a hint torch specialised (a batch of 1): the spec says the size */
            continue;
        }
        if (d->m == MODE_FIX && !refuted && in->kind != SG_SPEC_DERIVED && in->kind != SG_SPEC_DIM)
            continue;
        if (!sg_expr_affine(in->value, &sym, &a, &b)) {
            if ((d->m == MODE_SPEC || refuted) && in->kind != SG_SPEC_AUTO) {
                /* the nearest spec torch can take: Dim.AUTO for the dependent dim (torch infers the
                 * relation and keeps it in the program) */
                char *txt = NULL;
                sg_expr_print(&txt, in->value, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
                strs_pushf(d->notes, "%s: traced as %s, which no Dim can express: Dim.AUTO for it (torch infers "
                           "the relation)", in->source, txt ? txt : "?");
                sg_free(txt);
                push_auto(d, i);
            }
            continue;
        }
        if (!sym) { /* a constant: a derived dim too (its root's line says it, diff_lines()) */
            if (d->m == MODE_FIX && !refuted)
                continue;
            push_static(d, i, b);
            continue;
        }
        mb[nmb].input = i;
        mb[nmb].sym = sym;
        mb[nmb].a = a;
        mb[nmb].b = b;
        follow_equals(d, &mb[nmb]);
        if (mb[nmb].a <= 0)
            continue;
        nmb++;
    }
    qsort(mb, nmb, sizeof *mb, cmp_member);
    if ((rc = fit_groups(d, mb, nmb, err)) != 0)
        goto cleanup;
    /* FIX mode: a group changes only when it holds a refuted dim */
    for (i = 0; i < nmb; i = k) {
        bool refuted = false;
        for (k = i; k < nmb && mb[k].sym == mb[i].sym; k++)
            if (mb[k].input < d->r->ndims && d->r->dims[mb[k].input].status == SG_DIM_REFUTED)
                refuted = true;
        if (d->m == MODE_SPEC || refuted)
            derive_group(d, mb + i, k - i);
    }
    if (d->failed || d->notes->failed)
        rc = sg_error_set(err, SG_ENOMEM, "out of memory deriving fixes");
cleanup:
    sg_free(mb);
    sg_free((void *)d->facts);
    sg_free(d->dim_value);
    sg_free(d->fit);
    sg_free(d->fit_of);
    d->fit = NULL;
    d->fit_of = NULL;
    d->facts = NULL;
    d->dim_value = NULL;
    d->nsym = 0;
    return rc;
}

/* ---- applying and checking ---------------------------------------------------------- */


/* ---- the lines: what changed between the user's spec and the fixed one --------------- */

static bool same_name(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Was `name` a Dim name of the user's spec? */
static bool original_name(const sg_input_dim *in, size_t n, const char *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((in[i].kind == SG_SPEC_DIM && same_name(in[i].name, name))
            || (in[i].kind == SG_SPEC_DERIVED && same_name(in[i].root_name, name)))
            return true;
    return false;
}

/* Is `name` a Dim name of some input of `in` (a Dim, or a derived dim's root)? */
static bool dim_in(const sg_input_dim *in, size_t n, const char *name)
{
    return original_name(in, n, name);
}

typedef struct fixvec {
    sg_fix *f;
    size_t n, cap;
    bool failed;
} fixvec;

static sg_fix *add_fix(fixvec *v, sg_fix_kind kind, const char *name, const char *source)
{
    sg_fix *f;
    size_t i;
    for (i = 0; i < v->n; i++)
        if (strcmp(v->f[i].name, name) == 0 && (v->f[i].kind == SG_FIX_RANGE) == (kind == SG_FIX_RANGE))
            return NULL; /* one line per name */
    if (sg__grow((void **)&v->f, &v->cap, v->n + 1, sizeof *v->f)) {
        v->failed = true;
        return NULL;
    }
    f = &v->f[v->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->name = sg__strndup(name, strlen(name));
    f->source = sg__strndup(source, strlen(source));
    if (!f->name || !f->source)
        v->failed = true;
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
    for (i = 0; i < n && !v->failed; i++) {
        const sg_input_dim *o = &orig[i], *f = &fixed[i];
        const char *name = o->kind == SG_SPEC_DIM ? o->name : NULL;
        sg_fix *x;
        sg_int a, b;

        if (m == MODE_SPEC && f->kind == SG_SPEC_DIM)
            name = f->name;
        if (f->kind == SG_SPEC_DERIVED && sg_trace__derived_affine(f, &a, &b) && !original_name(orig, n, f->root_name)
            && (m == MODE_SPEC || name)) {
            if ((x = add_fix(v, SG_FIX_RANGE, f->root_name, o->source)) != NULL) {
                x->new_root = true;
                x->min = f->root_min;
                x->max = f->root_max;
                x->line = sg_torch_range_line(f->root_name, f->root_min, f->root_max, true);
            }
        }
        if (!name && o->kind == SG_SPEC_DERIVED && f->kind == SG_SPEC_STATIC && f->has_static_size
            && sg_trace__derived_affine(o, &a, &b) && a > 0 && !dim_in(fixed, n, o->root_name)) {
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
        strs_pushf(notes, "time budget spent before the first check");
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
            strs_pushf(notes, "%s: Dim('%s', min=%s, max=%s) is refused by torch; a dim of one size is written as that size",
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
            strs_pushf(notes, "Dim '%s' has two definitions: one, with the %s of their ranges", in[i].name,
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
            strs_pushf(notes, "%s: the example size is outside Dim '%s' [%s, %s]: its range widened to [%s, %s] to hold "
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
            strs_pushf(notes, "%s = %s: its min at %s's min %s is negative: %s's min raised to %s", in[j].source,
                       in[j].name, in[i].name, sg_int_format(num, lo.v), in[i].name, sg_int_format(n2, need));
            lo.v = need;
            widen = true;
        }
        if ((other || widen) && (rc = sg_spec_edits__range(&e, in[i].name, lo, hi, err)) != 0)
            goto cleanup;
    }
    if (e.n && (rc = sg_trace_edit(out, t, &e, err)) != 0 && rc != SG_ENOMEM) {
        strs_pushf(notes, "repaired spec rejected: %s", err ? err->msg : "invalid");
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
    size_t n = 0, nin = 0, i, k, pass;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    for (pass = 0; pass < 2; pass++)
        for (i = nin; i-- > 0;) {
            bool dep = false, seen = false;
            const sg_expr *s2;
            sg_int a, b;
            if (i >= r->ndims || r->dims[i].status != SG_DIM_REFUTED
                || (in[i].kind != SG_SPEC_DIM && in[i].kind != SG_SPEC_DERIVED) || !in[i].value)
                continue;
            for (k = 0; k < r->ninferred; k++)
                if (r->inferred[k].sym == in[i].value && r->inferred[k].equals
                    && !sg_expr_affine(r->inferred[k].equals, &s2, &a, &b))
                    dep = true;
            if (dep != (pass == 0))
                continue;
            for (k = 0; k < n; k++)
                seen |= out[k] == i;
            if (seen)
                continue;
            if (n == cap)
                return cap;
            out[n++] = i;
        }
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
        strs_push(split, sr.split[i]);
        sr.split[i] = NULL;
    }
    res->repaired = sr.trace != NULL;
    for (i = 0; i < sr.nnotes; i++) {
        strs_push(notes, sr.notes[i]);
        sr.notes[i] = NULL;
    }
    if (sr.python && untraced(t)) {
        res->untraced = true;
        res->rounds = 1;
        res->recheck = SG_VERDICT_INVALID_SPEC;
        res->python = sr.python;
        sr.python = NULL;
        strs_pushf(notes, "torch stopped before recording the inputs (%s): nothing was traced to check the repair "
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
        if (!(name = made_name(d)))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        if (lo.inf || lo.v < 2) {
            lo.inf = 0;
            lo.v = 2;
        }
        strs_pushf(notes, "%s = %s: the root %s has the example size %s, which torch specialises to a constant "
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
                        strs_pushf(notes, "%s: torch %s would raise on this Dim although every size of it passes "
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
                strs_pushf(notes, "the spec torch accepts could not be built: %s", err ? err->msg : "invalid");
                refused = true;
                rc = 0;
            }
        } else if (!budget_left(o, total_ms, start)) {
            strs_pushf(notes, "time budget spent before the spec torch accepts was checked");
            refused = true;
        } else if ((rc = sg_check__lean_rt(&rep, next, o, rt, err)) == 0 && !clean(rep)) {
            refused = true;
        }
        sg_spec_edits__dispose(&ae);
        if (refused) {
            res->verified = false;
            strs_pushf(notes, "torch %s would still refuse the fixed spec: %s", ver ? ver : "", why);
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
            if ((orig[i].kind == SG_SPEC_AUTO || orig[i].kind == SG_SPEC_DYNAMIC) && !(names[i] = made_name(&orig[i]))) {
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
        strs_pushf(&notes, "torch's tracing stopped at a data-dependent guard (%s): the trace is incomplete and no "
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
            strs_pushf(&notes, "torch stopped before tracing the model (%s): nothing was traced to check the "
                       "repaired spec against; export with it and check the new trace", sg_trace_torch_error(t));
        } else {
            res->recheck = SG_VERDICT_TORCH_FAILED;
            strs_pushf(&notes, "torch failed inside its own code before tracing the model (%s); no change of the "
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
                    strs_pushf(&notes, "the spec itself is invalid and torch stopped before tracing the model (%s): "
                               "`check` offers a repair; nothing was traced to generate a spec from",
                               sg_trace_torch_error(t));
                    goto cleanup;
                }
                res->untraced = true;
                res->rounds = 1;
                strs_pushf(&notes, "torch stopped before tracing the model (%s): the repaired spec passes torch's spec "
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
        strs_pushf(&notes, r->no_spec ? "the trace carries no per-dim spec: nothing to fix from"
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
        if ((rc = derive(&d, err)) != 0) {
            sg_spec_edits__dispose(&d.edits);
            goto cleanup;
        }
        if (d.edits.n == 0) {
            sg_spec_edits__dispose(&d.edits);
            strs_pushf(&notes, "no fix derived for what is still refuted");
            break;
        }
        /* the derived spec, applied to a structured copy of the trace `r` was made from */
        rc = sg_trace_edit(&next, base, &d.edits, err);
        sg_spec_edits__dispose(&d.edits);
        if (rc) {
            if (rc == SG_ENOMEM)
                goto cleanup;
            strs_pushf(&notes, "derived spec rejected: %s", err ? err->msg : "invalid");
            rc = 0;
            break;
        }
        /* `r` may be `rep`: kept until the re-check has taken what it needs of it */
        prev = rep;
        rep = NULL;
        /* the re-check needs no inference unless another round must derive from it */
        o.infer = false;
        if (!budget_left(&o, total_ms, start)) {
            strs_pushf(&notes, "time budget spent after %u round(s)", round - 1);
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
                    strs_pushf(&notes, "%s: related to other dims in a way no Dim can express: Dim.AUTO for it "
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
    } else if (res->rounds) {
        strs_pushf(&notes, "no verified fix: after %u round(s) the re-check still says %s", res->rounds,
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

int sg_fixes_suggest(sg_fixes **out, const sg_trace *t, const sg_report *r, const sg_check_options *opts,
                     sg_error *err)
{
    return sg_fixes_suggest_rt(out, t, r, opts, NULL, err);
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
    return sg_spec_generate_rt(out, t, opts, NULL, err);
}
