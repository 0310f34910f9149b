/*
 * fix_derive.c - deriving one round of overrides for fixes and generated specs
 * (analysis/fixes_impl.h: sg_fixes__derive).
 *
 * Does: from a check report's inferred facts, every input dim whose traced
 * value is affine in one symbol (a*s + b) joins the group of s; a group gets
 * one root (the dim whose value is s itself, else one with a = 1, else a new
 * root `_<name>`), the widest valid range of s that avoids its holes, and a
 * proved congruence s = r (mod m) becomes a new root with s = m*_<name> + r.
 * The result is typed spec edits (trace/edit.h) and notes; the groups' ranges
 * are fitted inside the joint linear guards by fix_box.c.
 *
 * Does not: apply the edits, check the edited trace again, run the rounds, try
 * torch's own acceptance or write the lines (fixes.c, the driver); run a Z3
 * query.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fixes_impl.h"
#include "expr/expr.h"

#define MAX_CHAIN 8 /* relation hops followed through `equals` */

/* One input dim in a group: its traced value is a*sym + b. */
typedef struct member {
    size_t input;
    const sg_expr *sym;
    sg_int a, b;
} member;

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

/* May dim i be redefined? (A Dim.DYNAMIC the guards specialise may also become static: see sg_fixes__derive().) */
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
char *sg_fixes__made_name(const sg_input_dim *d)
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
            sg_fixes__strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
            continue;
        }
        push_static(d, g[k].input, x);
    }
}

/*
 * A joint hole no single-symbol fact shows ((H//2 - 3)*(W//2 - 3) != 1 rejects
 * H = W = 8 only): when a counterexample of the report puts the group's symbol
 * at a bound of its range, that bound moves past it. The re-check decides
 * whether the narrower box holds. Only a first round's counterexample counts: a
 * later one may fail only because a dim refuted before it is pinned to its
 * example size (c of c = a*b, which the fix makes Dim.AUTO anyway), and would
 * cut a valid size off the box.
 */
static void corner_cut(const deriver *d, const member *g, size_t ng, sg_bound *lo, sg_bound *hi)
{
    size_t k, j;
    for (k = 0; k < d->r->nviolations; k++) {
        const sg_violation *v = &d->r->violations[k];
        if (!v->has_counterexample || !v->counterexample || v->later_round)
            continue; /* a later round's counterexample may fail only by the pins of refuted dims */
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
        sg_fixes__strs_pushf(d->notes, "no inferred facts for %s: its dims are left as they are", sg_expr_symbol_name(g[0].sym));
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
            sg_fixes__strs_pushf(d->notes,
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
            sg_fixes__strs_pushf(d->notes,
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
            sg_fixes__strs_pushf(d->notes, "%s: no Dim name to derive from", d->in[g[0].input].source);
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
                sg_fixes__strs_pushf(d->notes, "%s: the new root %s would have the example size %s, which torch specialises; "
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
                sg_fixes__strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
                continue;
            }
            push_derived(d, g[k].input, a, rname, b);
        }
        if (m > 1)
            sg_fixes__strs_pushf(d->notes, "%s: every valid size is %s (mod %s); new root %s",
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
            sg_fixes__strs_pushf(d->notes, "%s: range not proved optimal (budget): the fix may be narrower than needed",
                       d->in[g[root].input].source);
    }
    for (k = 0; k < ng; k++) {
        sg_int b, t;
        if (!eligible(d, g[k].input))
            continue;
        /* value = a*sym + b = a*(R - b_root) + b */
        if (!sg__mul(g[k].a, g[root].b, &t) || !sg__sub(g[k].b, t, &b)) {
            sg_fixes__strs_pushf(d->notes, "%s: coefficients overflow", d->in[g[k].input].source);
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
        sg_fixes__strs_pushf(d->notes, "%s: nothing inferred about its size: no bounds to suggest", in->source);
        return;
    }
    lo = f->lo;
    hi = f->hi;
    if (!f->range_exact && !f->is_constant && in->has_bounds && !lo.inf && !hi.inf && !in->min.inf && !in->max.inf &&
        lo.v >= in->min.v && hi.v <= in->max.v) {
        /* nothing inside the given bounds is known to pass, and the trace (made with them as the
         * symbol's range) cannot say which sizes outside do: the hint without bounds, torch infers */
        sg_bound none = {0, 1};
        if (sg_spec_edits__hint(&d->edits, i, in->kind, false, none, none, NULL) != 0) {
            d->failed = true;
            return;
        }
        sg_fixes__strs_pushf(d->notes, "%s: Dim.%s without min/max: no size of the given bounds passes the guards, and "
                   "the trace, made with those bounds, cannot say which sizes outside them do (torch infers the range)",
                   in->source, in->kind == SG_SPEC_AUTO ? "AUTO" : "DYNAMIC");
        return;
    }
    if (f->is_constant || (!lo.inf && !hi.inf && lo.v == hi.v)) {
        sg_int v = f->is_constant ? f->constant : lo.v;
        if (in->kind == SG_SPEC_DYNAMIC) {
            push_static(d, i, v);
            sg_fixes__strs_pushf(d->notes, "%s: Dim.DYNAMIC, but the guards allow only %s: static now", in->source,
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
    sg_fixes__strs_pushf(d->notes, "%s: Dim.%s(min=%s, max=%s), the range the guards allow (the given bounds conflict with it)",
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
int sg_fixes__derive(deriver *d, sg_error *err)
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
            sg_fixes__strs_pushf(d->notes, "%s: Dim.DYNAMIC, but the guards make it %s: static now (no Dim name, so no line)",
                       in->source, num);
            continue;
        }
        if (d->m == MODE_FIX && in->kind == SG_SPEC_DYNAMIC && refuted && !in->value && specialized(d->r, i)) {
            /* Dim.DYNAMIC on a 0/1 example: torch specialised it before tracing (2.14 raises, 2.6 keeps
             * the constant silently); what torch can export is that size, static */
            char num[SG_INT_STRLEN];
            push_static(d, i, in->size);
            sg_fixes__strs_pushf(d->notes, "%s: Dim.DYNAMIC on an example of size %s, which torch specialises: static now "
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
                sg_fixes__strs_pushf(d->notes, "%s: traced as %s, which no Dim can express: Dim.AUTO for it (torch infers "
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

