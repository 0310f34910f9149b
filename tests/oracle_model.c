/*
 * oracle_model.c - the brute-force model of a small trace, shared by the check
 * oracle (tests/test_oracle.c) and the check fuzz target (fuzz/fuzz_check.c):
 * a trace reduced to its input dims, symbols, traced ranges and guards, a table
 * of which guards hold at every point of the symbol box (sg_expr_eval), and
 * enumeration of the shapes the spec allows. What it models is in
 * oracle_model.h.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oracle_model.h"

/* ---- settings and clocks of the test programs ------------------------------------------------ */

unsigned long env_ulong(const char *name, unsigned long dflt)
{
    const char *s = getenv(name);
    char *end = NULL;
    unsigned long v;
    if (!s || !*s)
        return dflt;
    v = strtoul(s, &end, 0);
    return end && *end == '\0' ? v : dflt;
}

double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- a growable string --------------------------------------------------------------------- */

/* Append formatted text; aborts the test program when memory runs out (tests may). */
void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int need;
    va_start(ap, fmt);
    need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *q;
        while (cap < b->n + (size_t)need + 1)
            cap *= 2;
        q = realloc(b->p, cap);
        if (!q) {
            fprintf(stderr, "oracle_model: out of memory\n");
            exit(2);
        }
        b->p = q;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

/* Release the text; the buffer is empty and reusable afterwards. */
void sb_free(sbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* The text so far ("" when none; borrowed). */
const char *sb_str(const sbuf *b) { return b->p ? b->p : ""; }

/* ---- the model: what the oracle enumerates ---------------------------------------------------- */

/* Free what the model allocated (its overlay pool too; not a pool the generator lent it). */
void model_dispose(model *m)
{
    free(m->vals);
    free(m->mask);
    sg_pool_free(m->own_pool);
    m->vals = NULL;
    m->mask = NULL;
    m->own_pool = NULL;
}

/* The table value of a point where every guard holds. */
unsigned full_mask(const model *m) { return (1u << m->ng) - 1u; }

/* Does guard `g` hold (defined and true) at the values in m->vals? -1 on overflow or error. */
int guard_holds(model *m, const sg_expr *g)
{
    sg_value v;
    int rc = sg_expr_eval(&v, m->pool, g, m->vals, m->nvals, NULL);
    if (rc == SG_EUNDEFINED)
        return 0;
    if (rc)
        return -1;
    return v.kind == SG_VAL_BOOL && v.num == 1;
}

/*
 * Fill the table over the box of the traced ranges. Returns 0, or -1 when the
 * box is too large or some guard overflows 128 bits somewhere in it (the
 * trace is skipped: the oracle cannot decide it).
 */
int model_table(model *m)
{
    size_t idx, npts = 1;
    int k, g;
    if (m->ng > MAX_GUARDS)
        return -1;
    for (k = m->nsym - 1; k >= 0; k--) {
        size_t w;
        if (m->rhi[k] < m->rlo[k])
            return -1;
        w = (size_t)(m->rhi[k] - m->rlo[k] + 1);
        m->stride[k] = npts;
        npts *= w;
        if (npts > MAX_BOX)
            return -1;
    }
    free(m->mask);
    m->mask = calloc(npts, 1);
    if (!m->mask)
        return -1;
    m->npts = npts;
    for (idx = 0; idx < npts; idx++) {
        unsigned bits = 0;
        for (k = 0; k < m->nsym; k++) {
            size_t w = (size_t)(m->rhi[k] - m->rlo[k] + 1);
            m->vals[m->slot[k]] = m->rlo[k] + (long)((idx / m->stride[k]) % w);
        }
        for (g = 0; g < m->ng; g++) {
            int h = guard_holds(m, m->guard[g]);
            if (h < 0)
                return -1;
            if (h)
                bits |= 1u << g;
        }
        m->mask[idx] = (unsigned char)bits;
    }
    return 0;
}

/*
 * The table entry of the symbol values that shape D gives (every dynamic dim's
 * size is its symbol's value), or -1 when a symbol leaves its traced range or
 * two dims of one symbol differ. Static dims must have their size.
 */
long shape_point(const model *m, const long *D)
{
    long val[MAX_DYN];
    bool set[MAX_DYN] = {false};
    size_t idx = 0;
    int i, k;
    for (i = 0; i < m->nin; i++) {
        const odim *d = &m->in[i];
        if (d->sym < 0) {
            if (D[i] != d->size)
                return -1;
            continue;
        }
        if (set[d->sym] && val[d->sym] != D[i])
            return -1;
        set[d->sym] = true;
        val[d->sym] = D[i];
    }
    for (k = 0; k < m->nsym; k++) {
        if (!set[k]) /* a symbol no dim defines: not generated */
            return -1;
        if (val[k] < m->rlo[k] || val[k] > m->rhi[k])
            return -1;
        idx += (size_t)(val[k] - m->rlo[k]) * m->stride[k];
    }
    return (long)idx;
}

/* Does shape D pass every checked constraint (traced ranges and guards)? */
bool shape_passes(const model *m, const long *D)
{
    long idx = shape_point(m, D);
    return idx >= 0 && m->mask[idx] == full_mask(m);
}

/*
 * Does shape D fail a constraint of the symbols in `syms` (bit k: symbol k):
 * the traced range of one of them, or a guard over them? The other symbols do
 * not matter (they sit at the bottom of their ranges for the table lookup).
 */
bool shape_fails_on(const model *m, const long *D, unsigned syms)
{
    long val[MAX_DYN];
    size_t idx = 0;
    unsigned seen = 0;
    int i, k, g;
    for (k = 0; k < m->nsym; k++)
        val[k] = m->rlo[k];
    for (i = 0; i < m->nin; i++) {
        const odim *d = &m->in[i];
        if (d->sym < 0 || !(syms & (1u << d->sym)))
            continue;
        if (D[i] < m->rlo[d->sym] || D[i] > m->rhi[d->sym] || (seen & (1u << d->sym) && val[d->sym] != D[i]))
            return true;
        val[d->sym] = D[i];
        seen |= 1u << d->sym;
    }
    for (k = 0; k < m->nsym; k++)
        idx += (size_t)(val[k] - m->rlo[k]) * m->stride[k];
    for (g = 0; g < m->ng; g++)
        if ((m->gsyms[g] & syms) && !(m->mask[idx] & (1u << g)))
            return true;
    return false;
}

/*
 * The independent parts of the trace, as solver/problem.c builds them: dims
 * sharing a Dim name (or root), a symbol, or a guard are in one component.
 * comp[i] is the component of dim i (-1 for static dims); returns in syms[c]
 * the symbols of component c (bit k).
 */
void components(const model *m, int *comp, unsigned *syms)
{
    int par[MAX_IN], i, j, g;
    for (i = 0; i < m->nin; i++)
        par[i] = i;
    for (i = 0; i < m->nin; i++)
        for (j = 0; j < i; j++) {
            const odim *a = &m->in[i], *b = &m->in[j];
            bool join = a->kind != OD_STATIC && b->kind != OD_STATIC && (a->name == b->name || a->sym == b->sym);
            for (g = 0; g < m->ng && !join && a->sym >= 0 && b->sym >= 0; g++)
                join = (m->gsyms[g] & (1u << a->sym)) && (m->gsyms[g] & (1u << b->sym));
            if (join) {
                int ra = i, rb = j;
                while (par[ra] != ra)
                    ra = par[ra];
                while (par[rb] != rb)
                    rb = par[rb];
                par[ra] = rb;
            }
        }
    for (i = 0; i < m->nin; i++) {
        int r = i;
        while (par[r] != r)
            r = par[r];
        comp[i] = m->in[i].kind == OD_STATIC ? -1 : r;
        syms[i] = 0;
    }
    for (i = 0; i < m->nin; i++)
        if (comp[i] >= 0 && m->in[i].sym >= 0)
            syms[comp[i]] |= 1u << m->in[i].sym;
}

/* The value domain of each name under the spec, dims in `pinned` (may be NULL) dropped; a name
 * pinned with its plain dims (name_pinned) takes their example size. */
void name_domains(const model *m, const bool *pinned, long *lo, long *hi, bool *used)
{
    int i, j;
    for (j = 0; j < MAX_NAMES; j++) {
        lo[j] = -1000000;
        hi[j] = 1000000;
        used[j] = false;
    }
    for (i = 0; i < m->nin; i++) {
        const odim *d = &m->in[i];
        long l;
        if (d->kind == OD_STATIC || (pinned && pinned[i]))
            continue;
        /* torch analyses named dims from 2 on: 0 and 1 specialise; a derived dim's root too (a
         * phantom root is created like a size), except `root - k`, re-rooted at the derived dim */
        l = (d->kind == OD_DIM || (d->kind == OD_DERIVED && !(d->a == 1 && d->b < 0))) && d->lo < 2 ? 2 : d->lo;
        used[d->name] = true;
        if (l > lo[d->name])
            lo[d->name] = l;
        if (d->hi < hi[d->name])
            hi[d->name] = d->hi;
    }
    for (j = 0; pinned && j < MAX_NAMES; j++) {
        long v;
        if (name_pinned(m, pinned, j, &v)) {
            lo[j] = hi[j] = v;
            used[j] = true;
        }
    }
}

bool name_pinned(const model *m, const bool *pinned, int j, long *v)
{
    const odim *first = NULL;
    bool all = true;
    int i;
    for (i = 0; i < m->nin; i++)
        if (m->in[i].kind == OD_DIM && m->in[i].name == j) {
            first = first ? first : &m->in[i];
            all &= pinned[i];
        }
    if (!first || !all || first->size < (first->lo < 2 ? 2 : first->lo) || first->size > first->hi)
        return false;
    *v = first->size;
    return true;
}

/* The size of dim i when its name (root) takes value x, pins applied. */
long dim_size(const model *m, const bool *pinned, int i, const long *x)
{
    const odim *d = &m->in[i];
    if (d->kind == OD_STATIC || (pinned && pinned[i]))
        return d->size;
    if (d->kind == OD_DIM)
        return x[d->name];
    return d->a * x[d->name] + d->b;
}

/*
 * Visit every shape the spec allows, the dims flagged in `pinned` (may be
 * NULL) fixed to their example sizes instead of their spec. Returns true when
 * `fn` stopped it.
 */
bool spec_each(const model *m, const bool *pinned, shape_fn fn, void *arg)
{
    long lo[MAX_NAMES], hi[MAX_NAMES], x[MAX_NAMES] = {0}, D[MAX_IN];
    bool used[MAX_NAMES];
    int j, i;
    name_domains(m, pinned, lo, hi, used);
    for (j = 0; j < MAX_NAMES; j++) {
        if (!used[j])
            lo[j] = hi[j] = 0;
        if (hi[j] < lo[j])
            return false; /* no allowed shape at all */
        x[j] = lo[j];
    }
    for (;;) {
        bool allowed = true;
        for (i = 0; i < m->nin; i++) {
            D[i] = dim_size(m, pinned, i, x);
            /* a derived dim is analysed from 2 on too (problem.h: D_i >= 2) */
            allowed &= m->in[i].kind != OD_DERIVED || (pinned && pinned[i]) || D[i] >= 2 || !DERIVED_FROM_2;
        }
        if (allowed && fn(m, D, arg))
            return true;
        for (j = 0; j < MAX_NAMES; j++) { /* odometer */
            if (x[j] < hi[j]) {
                x[j]++;
                break;
            }
            x[j] = lo[j];
        }
        if (j == MAX_NAMES)
            return false;
    }
}

/* Does the spec (dims in `pinned` fixed to their example sizes) allow shape D? */
bool spec_allows(const model *m, const bool *pinned, const long *D)
{
    long lo[MAX_NAMES], hi[MAX_NAMES], x[MAX_NAMES];
    bool used[MAX_NAMES], set[MAX_NAMES] = {false};
    int i;
    name_domains(m, pinned, lo, hi, used);
    for (i = 0; i < m->nin; i++) {
        const odim *d = &m->in[i];
        long v;
        if (d->kind == OD_STATIC || (pinned && pinned[i])) {
            if (D[i] != d->size)
                return false;
            continue;
        }
        if (d->kind == OD_DIM) {
            v = D[i];
        } else {
            if ((D[i] - d->b) % d->a != 0 || (DERIVED_FROM_2 && D[i] < 2))
                return false;
            v = (D[i] - d->b) / d->a;
        }
        if (v < lo[d->name] || v > hi[d->name] || (set[d->name] && x[d->name] != v))
            return false;
        set[d->name] = true;
        x[d->name] = v;
    }
    return true;
}

typedef struct find_arg {
    unsigned syms; /* the symbols whose constraints count */
    long D[MAX_IN];
    bool found;
} find_arg;

/* spec_each() callback: stop at the first shape failing a constraint of f->syms. */
static bool find_failing(const model *m, const long *D, void *arg)
{
    find_arg *f = arg;
    if (!shape_fails_on(m, D, f->syms))
        return false;
    memcpy(f->D, D, sizeof f->D);
    f->found = true;
    return true;
}

/*
 * Some allowed shape (pins applied) that fails a constraint of the symbols in
 * `syms`: true and its sizes in out[].
 */
bool spec_fails(const model *m, const bool *pinned, unsigned syms, long *out)
{
    find_arg f;
    memset(&f, 0, sizeof f);
    f.syms = syms;
    spec_each(m, pinned, find_failing, &f);
    if (f.found && out)
        memcpy(out, f.D, sizeof f.D);
    return f.found;
}

/* Append shape D as "[s0, s1, ...]" (every input dim, in input order). */
void format_shape(sbuf *b, const model *m, const long *D)
{
    int i;
    sb_printf(b, "[");
    for (i = 0; i < m->nin; i++)
        sb_printf(b, "%s%ld", i ? ", " : "", D[i]);
    sb_printf(b, "]");
}

/* The model index of the trace symbol `sym`, or -1. */
int model_sym(const model *m, const sg_expr *sym)
{
    int k;
    for (k = 0; k < m->nsym; k++)
        if (sg_expr_symbol_index(sym) == m->slot[k])
            return k;
    return -1;
}

/* ---- the model of a loaded trace ----------------------------------------------------------------- */

/* A finite bound of modest size into *out; false for int_oo or a huge bound. */
static bool bound_finite(sg_bound b, long *out)
{
    if (b.inf || b.v < -1000000 || b.v > 1000000)
        return false;
    *out = (long)b.v;
    return true;
}

/* Index of name `s` in names[], added when new; -1 when there are too many. */
static int name_index(char names[][64], int *n, const char *s)
{
    int j;
    for (j = 0; j < *n; j++)
        if (strcmp(names[j], s) == 0)
            return j;
    if (*n >= MAX_NAMES || strlen(s) >= 64)
        return -1;
    snprintf(names[*n], 64, "%s", s);
    return (*n)++;
}

/*
 * Narrow each symbol's box to the values its dims can take (the hull of their
 * spec values and example sizes) within its traced range; an infinite traced
 * bound arrives as -+SPEC_BOX_INF. Returns 0, or -1 with the reason in `why`
 * when some symbol's box is left empty.
 */
#define SPEC_BOX_INF 10000000L
static int clamp_to_spec(model *m, sbuf *why)
{
    int i, k;
    for (k = 0; k < m->nsym; k++) {
        long lo = SPEC_BOX_INF, hi = -SPEC_BOX_INF;
        for (i = 0; i < m->nin; i++) {
            const odim *d = &m->in[i];
            long a, b;
            if (d->sym != k)
                continue;
            if (d->kind == OD_DIM) {
                a = d->lo < 2 ? 2 : d->lo;
                b = d->hi;
            } else { /* derived, a > 0 */
                a = d->a * d->lo + d->b;
                b = d->a * d->hi + d->b;
            }
            if (a < lo)
                lo = a;
            if (b > hi)
                hi = b;
            if (d->size < lo)
                lo = d->size;
            if (d->size > hi)
                hi = d->size;
        }
        if (lo > m->rlo[k])
            m->rlo[k] = lo;
        if (hi < m->rhi[k])
            m->rhi[k] = hi;
        if (m->rlo[k] > m->rhi[k]) {
            sb_printf(why, "symbol %d: no value its dims can take is in its traced range", k);
            return -1;
        }
    }
    return 0;
}

/*
 * Build the model of trace `t` (see model_from_trace(); `spec_box`: infinite
 * traced ranges allowed, every box narrowed by clamp_to_spec()).
 */
static int model_build_in(model *m, const sg_trace *t, bool spec_box, sbuf *why)
{
    size_t nin = 0, nsym = 0, ng = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &nin);
    const sg_symbol_info *syms = sg_trace_symbols(t, &nsym);
    const sg_guard *guards = sg_trace_guards(t, &ng);
    char names[MAX_NAMES][64];
    int nnames = 0;

    memset(m, 0, sizeof *m);
    /* guards are evaluated in an overlay: the trace's own pool is frozen */
    if (sg_pool_overlay_new(&m->own_pool, sg_trace_pool(t), NULL) != 0) {
        sb_printf(why, "out of memory");
        return -1;
    }
    m->pool = m->own_pool;
    if (nin > MAX_IN || nsym > MAX_DYN || ng > MAX_GUARDS) {
        sb_printf(why, "too many inputs, symbols or guards");
        return -1;
    }
    m->nsym = (int)nsym;
    for (k = 0; k < nsym; k++) {
        bool lo_ok = spec_box && syms[k].lo.inf < 0, hi_ok = spec_box && syms[k].hi.inf > 0;
        if (lo_ok)
            m->rlo[k] = -SPEC_BOX_INF;
        if (hi_ok)
            m->rhi[k] = SPEC_BOX_INF;
        lo_ok = lo_ok || bound_finite(syms[k].lo, &m->rlo[k]);
        hi_ok = hi_ok || bound_finite(syms[k].hi, &m->rhi[k]);
        if (!lo_ok || !hi_ok || syms[k].unbacked || syms[k].replacement) {
            sb_printf(why, "symbol %zu: infinite range, unbacked or replaced", k);
            return -1;
        }
        m->slot[k] = sg_expr_symbol_index(syms[k].sym);
    }
    m->nin = (int)nin;
    for (i = 0; i < nin; i++) {
        odim *d = &m->in[i];
        const sg_input_dim *s = &in[i];
        d->sym = -1;
        if (s->size < -1000000 || s->size > 1000000 || (s->has_static_size && (s->static_size < -1000000 ||
                                                                               s->static_size > 1000000))) {
            sb_printf(why, "dim %zu: example size out of range", i);
            return -1;
        }
        d->size = (long)s->size;
        if (s->kind == SG_SPEC_DIM || s->kind == SG_SPEC_DERIVED) {
            const sg_symbol_info *si = s->value ? sg_trace_symbol_info(t, s->value) : NULL;
            if (!si || sg_expr_kind(s->value) != SG_SYM) {
                sb_printf(why, "dim %zu: a named dim not traced as a bare symbol", i);
                return -1;
            }
            d->sym = (int)(si - syms);
        }
        if (s->kind == SG_SPEC_DIM) {
            d->kind = OD_DIM;
            d->name = s->name ? name_index(names, &nnames, s->name) : -1;
            if (d->name < 0 || !bound_finite(s->min, &d->lo) || !bound_finite(s->max, &d->hi)) {
                sb_printf(why, "dim %zu: too many names or unbounded", i);
                return -1;
            }
        } else if (s->kind == SG_SPEC_DERIVED) {
            /* a*root + b over the root alone, read off at root = 0, 1 and checked at 2 */
            const sg_expr *root = s->root_name ? sg_expr_symbol(m->pool, s->root_name, strlen(s->root_name)) : NULL;
            sg_int *vals = calloc(sg_pool_nsymbols(m->pool) + 1, sizeof *vals);
            sg_value v0, v1, v2;
            bool ok = vals && root && s->derived;
            if (ok) {
                const sg_expr **ds = NULL;
                size_t nds = 0;
                ok = sg_expr_symbols(&ds, &nds, m->pool, s->derived, NULL) == 0 && nds == 1 && ds[0] == root;
                sg_free((void *)ds);
            }
            if (ok) {
                uint32_t r = sg_expr_symbol_index(root);
                vals[r] = 0;
                ok = sg_expr_eval(&v0, m->pool, s->derived, vals, sg_pool_nsymbols(m->pool), NULL) == 0;
                vals[r] = 1;
                ok = ok && sg_expr_eval(&v1, m->pool, s->derived, vals, sg_pool_nsymbols(m->pool), NULL) == 0;
                vals[r] = 2;
                ok = ok && sg_expr_eval(&v2, m->pool, s->derived, vals, sg_pool_nsymbols(m->pool), NULL) == 0;
                ok = ok && v0.kind == SG_VAL_INT && v1.kind == SG_VAL_INT && v2.kind == SG_VAL_INT &&
                     v0.num >= -1000000 && v0.num <= 1000000 && v1.num >= -1000000 && v1.num <= 1000000 &&
                     v2.num >= -1000000 && v2.num <= 1000000 && v1.num > v0.num &&
                     v2.num - v1.num == v1.num - v0.num;
            }
            free(vals);
            d->kind = OD_DERIVED;
            d->name = name_index(names, &nnames, s->root_name);
            if (!ok || d->name < 0 || !bound_finite(s->root_min, &d->lo) || !bound_finite(s->root_max, &d->hi)) {
                sb_printf(why, "dim %zu: derived dim not increasing affine, or unbounded root", i);
                return -1;
            }
            d->b = (long)v0.num;
            d->a = (long)(v1.num - v0.num);
        } else if (s->kind == SG_SPEC_STATIC || s->kind == SG_SPEC_UNSET) {
            d->kind = OD_STATIC;
            if (s->has_static_size)
                d->size = (long)s->static_size;
            if (!s->value || sg_expr_kind(s->value) != SG_INT || sg_expr_int_value(s->value) != d->size) {
                sb_printf(why, "dim %zu: static dim not traced as its size", i);
                return -1;
            }
        } else {
            sb_printf(why, "dim %zu: AUTO/DYNAMIC dims are not modelled", i);
            return -1;
        }
    }
    m->nname = nnames;
    for (k = 0; k < (size_t)m->nsym; k++) { /* every symbol is some dim's */
        bool any = false;
        for (i = 0; i < nin; i++)
            any |= m->in[i].sym == (int)k;
        if (!any) {
            sb_printf(why, "symbol %zu is no dim's size", k);
            return -1;
        }
    }
    /* the check binds a symbol to every input dim its sources name; model only traces where
     * those dims are the symbol's own (a mutated trace can give one source to two symbols) */
    for (k = 0; k < nsym; k++) {
        size_t q;
        for (q = 0; q < syms[k].nsources; q++) {
            const char *src = syms[k].sources[q];
            if (strncmp(src, "L['flat_args'][", 15) == 0) {
                sb_printf(why, "symbol %zu: a flat_args source", k);
                return -1;
            }
            for (i = 0; i < nin; i++)
                if (in[i].source && strcmp(in[i].source, src) == 0 && m->in[i].sym != (int)k) {
                    sb_printf(why, "symbol %zu: its source %zu is dim %zu, which is not traced as it", k, q, i);
                    return -1;
                }
        }
    }
    m->ng = (int)ng;
    for (i = 0; i < ng; i++) {
        const sg_expr **gs = NULL;
        size_t n = 0, q;
        m->guard[i] = guards[i].expr;
        if (sg_expr_symbols(&gs, &n, m->pool, guards[i].expr, NULL)) {
            sb_printf(why, "out of memory");
            return -1;
        }
        for (q = 0; q < n; q++) {
            int ks = model_sym(m, gs[q]);
            if (ks < 0) {
                sg_free((void *)gs);
                sb_printf(why, "guard %zu mentions a symbol that is no dim's size", i);
                return -1;
            }
            m->gsyms[i] |= 1u << ks;
        }
        sg_free((void *)gs);
    }
    if (spec_box && clamp_to_spec(m, why))
        return -1;
    m->nvals = sg_pool_nsymbols(m->pool);
    m->vals = calloc(m->nvals + 1, sizeof *m->vals);
    if (!m->vals || model_table(m)) {
        sb_printf(why, "the symbol box is too large or a guard overflows 128 bits in it");
        return -1;
    }
    return 0;
}

/*
 * Build the model of trace `t`: every dim a named Dim or derived dim traced as a
 * bare symbol, or static with an integer value; guards over those symbols with
 * finite small traced ranges. Returns 0, or -1 with the reason in `why` when
 * the trace is outside what the oracle decides.
 */
static int model_build(model *m, const sg_trace *t, bool spec_box, sbuf *why)
{
    int rc = model_build_in(m, t, spec_box, why);
    if (rc)
        model_dispose(m);
    return rc;
}

int model_from_trace(model *m, const sg_trace *t, sbuf *why) { return model_build(m, t, false, why); }

/*
 * As model_from_trace(), but a traced range may be infinite: each symbol's box
 * is its traced range narrowed to the values its dims can take under the spec
 * (or as example sizes), which is all that enumerating the spec visits.
 */
int model_from_trace_spec_box(model *m, const sg_trace *t, sbuf *why) { return model_build(m, t, true, why); }
