/*
 * test_oracle.c - the brute-force oracle for `shapegate check` (sg_check).
 *
 * Thousands of random small traces are generated as single-file JSON text
 * (docs/trace-format.md) and loaded with sg_trace_load_json(): 1..3 tensor
 * inputs, each with one dynamic dim (a named Dim with random bounds inside
 * [0, 64], sometimes sharing a name with an earlier dim, sometimes a derived
 * dim 2*d, d + 1 or 2*d + 1 of an earlier or of a phantom root) and maybe a
 * static second dim; every dynamic dim is traced as its own symbol s0..s2 with
 * a random var_to_range inside [2, R] and 1..4 random guards over the whole
 * guard language (built with the constructors of expr.h, printed in sympy
 * form). The example sizes (hints) are a shape the spec allows that passes
 * every guard when one exists; otherwise a random allowed shape, keeping only
 * the guards true there, as torch does.
 *
 * Ground truth is exhaustive enumeration with sg_expr_eval. The model of the
 * spec is the engine's documented one (solver/problem.h, analysis/check.c):
 * a named Dim takes the values [max(min, 2), max], a derived dim a*X + b >= 2
 * for its root X in the root's bounds, one Dim name is one value; a shape passes
 * when every symbol lies in its traced range and every guard is defined and
 * true. The report must agree:
 *   - verdict "ok" exactly when every allowed shape passes (never "ok" on a
 *     failing spec: soundness; "violations" unless a dim is "unknown");
 *   - every counterexample really fails, and is a shape the spec allows (with
 *     the dims refuted in earlier rounds pinned to their example sizes, as
 *     check.c's phase 2 does);
 *   - every round's minimal conflicting set (its dims at their counterexample
 *     values, the spec items and constraints of the core) admits no shape;
 *   - with the refuted dims pinned to their example sizes, no allowed shape
 *     fails a constraint of a proved dim's component (dims sharing a name, a
 *     symbol or a guard; check.c decides components apart);
 *   - inference (analysis/infer.h; the guards and traced ranges alone, not the
 *     spec): ranges contain every valid value and are exact when range_exact,
 *     constants, congruences and relations hold on every valid point, holes
 *     are invalid values, and all of them when holes_complete.
 * The model and its enumeration are in tests/oracle_model.c (shared with fuzz/fuzz_check.c).
 * The budget is a Z3 resource limit, so every run of a seed is the same (unless
 * the wall-clock safety net fires: such traces are printed as slow).
 * A mismatch prints the trace's JSON in full, so it can be replayed.
 *
 * Environment:
 *   SG_ORACLE_SEED   PRNG seed (decimal or 0x-hex); default 0x0dac1e5
 *   SG_ORACLE_COUNT  number of traces (default 2000, in both test builds)
 *   SG_ORACLE_JOBS   worker processes (fork) sharing the traces (default 2)
 *   SG_ORACLE_ONLY   run only trace number N of the seed (replays a printed mismatch)
 *   SG_ORACLE_INFER  run inference on every N-th trace (default 5; 1: every trace)
 *   SG_ORACLE_WARM   check every N-th trace (from the first) on an engine with a warm context
 *                    instead of sg_check (default 2; 0: none): warm solvers and witnesses
 *                    meet the oracle too (small components are decided by their models,
 *                    analysis/check_values.c, on both)
 *   SG_ORACLE_FILE   check one JSON trace file against the oracle instead (inference on)
 *   SG_ORACLE_VERBOSE=1  print every trace's JSON and verdict
 *   SG_ORACLE_SLOW_MS   print every trace whose sg_check takes longer than this (default 5000)
 *   SG_ORACLE_RLIMIT  Z3 resource limit per query (default 500000); the wall-clock limits
 *                    (20 s per check, 10 s per query) are only a safety net
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/check.h"
#include "expr/expr.h"
#include "trace/trace.h"
#include "oracle_model.h"
#include "test.h"

#define ORACLE_DEFAULT_SEED 0x0dac1e5u
#define ORACLE_DEFAULT_COUNT 2000
#define ORACLE_DEFAULT_INFER 5
#define ORACLE_DEFAULT_JOBS 2
#define ORACLE_DEFAULT_RLIMIT 500000
#define ORACLE_SAFETY_MS 20000  /* wall-clock limit of one check, half per query */
#define ORACLE_DEFAULT_SLOW_MS 5000

#define MAX_GEN_GUARDS 4  /* guards generated per trace */
#define MAX_DEPTH 4       /* depth of a random guard (a leaf is 1) */
#define MAX_SHOWN 5       /* mismatches printed in full */
#define GEN_ATTEMPTS 12   /* attempts at a non-constant guard / an allowed example */

/* ---- random numbers: splitmix64 --------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

/* The next 64 random bits. */
static uint64_t rnd(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]; lo when hi < lo. */
static long rnd_in(rng *r, long lo, long hi)
{
    if (hi <= lo)
        return lo;
    return lo + (long)(rnd(r) % (uint64_t)(hi - lo + 1));
}

/* True with probability pct/100. */
static bool chance(rng *r, int pct) { return (int)(rnd(r) % 100u) < pct; }

/* ---- the oracle: a report against the model ---------------------------------------------------------- */

typedef struct tally {
    unsigned long traces, skipped, valid, invalid, infer_runs;
    unsigned long unknown_valid, unknown_invalid; /* verdict unknown */
    unsigned long dims_proved, dims_refuted, dims_unknown;
    unsigned long cex_checked, cex_later_round_outside_spec, cores_checked, cores_skipped;
    unsigned long inferred_checked, ranges_exact, holes_checked, congruences, relations;
    unsigned long mismatches;
    unsigned long kinds[SG_KIND_COUNT]; /* guards of checked traces using each kind */
    double check_seconds, max_check_seconds;
} tally;

/* The word check.h's docs use for a dim status. */
static const char *status_name(sg_dim_status s)
{
    switch (s) {
    case SG_DIM_PROVED: return "proved";
    case SG_DIM_REFUTED: return "refuted";
    case SG_DIM_UNKNOWN: return "unknown";
    default: return "static";
    }
}

/* Python's a % b for b > 0. */
static long pymod(long a, long b)
{
    long r = a % b;
    return r < 0 ? r + b : r;
}

/* Check the inference part of the report; mismatches appended to `why`. */
static void compare_inferred(model *m, const sg_report *r, tally *ty, sbuf *why)
{
    /* valid[k][v - rlo[k]]: some point of the box with s_k = v passes every guard */
    bool *valid[MAX_DYN] = {NULL};
    long vmin[MAX_DYN], vmax[MAX_DYN];
    size_t idx, h;
    int k;

    if (r->ninferred != (size_t)m->nsym) {
        sb_printf(why, "inferred: %zu entries for %d symbols\n", r->ninferred, m->nsym);
        return;
    }
    for (k = 0; k < m->nsym; k++) {
        valid[k] = calloc((size_t)(m->rhi[k] - m->rlo[k] + 1), sizeof **valid);
        vmin[k] = m->rhi[k] + 1;
        vmax[k] = m->rlo[k] - 1;
        if (!valid[k])
            goto cleanup;
    }
    for (idx = 0; idx < m->npts; idx++) {
        if (m->mask[idx] != full_mask(m))
            continue;
        for (k = 0; k < m->nsym; k++) {
            long v = m->rlo[k] + (long)((idx / m->stride[k]) % (size_t)(m->rhi[k] - m->rlo[k] + 1));
            valid[k][v - m->rlo[k]] = true;
            if (v < vmin[k])
                vmin[k] = v;
            if (v > vmax[k])
                vmax[k] = v;
        }
    }
    for (h = 0; h < r->ninferred; h++) {
        const sg_inferred *f = &r->inferred[h];
        const char *name = sg_expr_symbol_name(f->sym);
        char lo[SG_INT_STRLEN], hi[SG_INT_STRLEN];
        size_t j;
        k = model_sym(m, f->sym);
        if (k < 0) {
            sb_printf(why, "inferred[%zu]: symbol %s is not in the trace\n", h, name ? name : "?");
            continue;
        }
        ty->inferred_checked++;
        if (vmin[k] > vmax[k]) {
            sb_printf(why, "inferred %s: the oracle finds no valid point (generator bug)\n", name);
            continue;
        }
        sg_int_format(lo, f->lo.v);
        sg_int_format(hi, f->hi.v);
        if ((f->lo.inf == 0 && f->lo.v > vmin[k]) || f->lo.inf > 0 || (f->hi.inf == 0 && f->hi.v < vmax[k]) ||
            f->hi.inf < 0)
            sb_printf(why, "inferred %s in [%s, %s] excludes valid values (valid range [%ld, %ld])\n", name,
                      f->lo.inf ? "-int_oo" : lo, f->hi.inf ? "int_oo" : hi, vmin[k], vmax[k]);
        if (f->range_exact) {
            ty->ranges_exact++;
            if (f->lo.inf || f->hi.inf || f->lo.v != vmin[k] || f->hi.v != vmax[k])
                sb_printf(why, "inferred %s in [%s, %s] flagged exact, valid range is [%ld, %ld]\n", name,
                          f->lo.inf ? "-int_oo" : lo, f->hi.inf ? "int_oo" : hi, vmin[k], vmax[k]);
        }
        if (f->is_constant && (vmin[k] != vmax[k] || f->constant != vmin[k]))
            sb_printf(why, "inferred %s constant, valid range is [%ld, %ld]\n", name, vmin[k], vmax[k]);
        if (f->modulus < 1) {
            sb_printf(why, "inferred %s: modulus < 1\n", name);
            continue;
        }
        if (f->modulus > 1) {
            long mod = (long)f->modulus, res = (long)f->residue;
            long v;
            ty->congruences++;
            for (v = vmin[k]; v <= vmax[k]; v++)
                if (valid[k][v - m->rlo[k]] && pymod(v - res, mod) != 0) {
                    sb_printf(why, "inferred %s = %ld mod %ld, but %ld is valid\n", name, res, mod, v);
                    break;
                }
        }
        for (j = 0; j < f->nholes; j++) {
            sg_int hv = f->holes[j];
            bool in_box = hv >= m->rlo[k] && hv <= m->rhi[k];
            ty->holes_checked++;
            if ((in_box && valid[k][(long)hv - m->rlo[k]]) || (f->lo.inf == 0 && hv < f->lo.v) ||
                (f->hi.inf == 0 && hv > f->hi.v)) {
                char hb[SG_INT_STRLEN];
                sb_printf(why, "inferred %s: hole %s is a valid value or outside the range\n", name,
                          sg_int_format(hb, hv));
            }
        }
        if (f->holes_complete && !f->lo.inf && !f->hi.inf && f->hi.v - f->lo.v < 100000) {
            long v, mod = f->modulus > 1 ? (long)f->modulus : 1, res = (long)f->residue;
            for (v = (long)f->lo.v; v <= (long)f->hi.v; v++) {
                bool is_valid = v >= m->rlo[k] && v <= m->rhi[k] && valid[k][v - m->rlo[k]];
                bool listed = false;
                if (is_valid || (mod > 1 && pymod(v - res, mod) != 0))
                    continue;
                for (j = 0; j < f->nholes; j++)
                    listed |= f->holes[j] == v;
                if (!listed) {
                    sb_printf(why, "inferred %s: holes flagged complete but invalid value %ld is not listed\n", name,
                              v);
                    break;
                }
            }
        }
        if (f->equals) {
            ty->relations++;
            for (idx = 0; idx < m->npts; idx++) {
                sg_value v;
                long sv = 0;
                int q, rc;
                if (m->mask[idx] != full_mask(m))
                    continue;
                for (q = 0; q < m->nsym; q++) {
                    long x = m->rlo[q] + (long)((idx / m->stride[q]) % (size_t)(m->rhi[q] - m->rlo[q] + 1));
                    m->vals[m->slot[q]] = x;
                    if (q == k)
                        sv = x;
                }
                rc = sg_expr_eval(&v, r->pool, f->equals, m->vals, m->nvals, NULL);
                if (rc || v.kind != SG_VAL_INT || v.num != sv) {
                    char *txt = NULL;
                    sg_expr_print(&txt, f->equals, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
                    sb_printf(why, "inferred %s = %s fails at a valid point (there %s = %ld)\n", name,
                              txt ? txt : "?", name, sv);
                    sg_free(txt);
                    break;
                }
            }
        }
    }
cleanup:
    for (k = 0; k < m->nsym; k++)
        free(valid[k]);
}

/*
 * The conflicting set of one round of guard violations (g0 .. g1-1, one
 * counterexample): its flagged dims at their counterexample values, the dims
 * refuted in earlier rounds at their example sizes (check.c pins them, and a
 * name with them when all its plain dims are pinned), the
 * spec items and the constraints of the core must admit no shape. A dim the
 * core says nothing about but whose symbol a core constraint reads is a free
 * integer: it is searched over the window [FREE_LO, FREE_HI] only (a shape
 * found there is still a real mismatch; none found is counted as partial).
 */
#define FREE_LO (-16)
#define FREE_HI 160
#define NVARS (MAX_NAMES + MAX_IN)

static void check_core(model *m, const sg_report *r, size_t g0, size_t g1, const bool *pinned, tally *ty, sbuf *why)
{
    bool flagged[MAX_IN] = {false}, spec_in[MAX_IN] = {false}, guard_in[MAX_GUARDS] = {false};
    bool range_in[MAX_DYN] = {false}, used_var[NVARS] = {false}, free_dim[MAX_IN] = {false}, partial = false;
    const sg_int *cex = r->violations[g0].counterexample;
    long lo[NVARS], hi[NVARS], x[NVARS];
    unsigned used = 0;
    size_t v, c;
    int i, j, k, g;

    for (v = g0; v < g1; v++) {
        const sg_violation *vi = &r->violations[v];
        if (vi->input < (size_t)m->nin)
            flagged[vi->input] = true;
        for (c = 0; c < vi->ncore; c++) {
            const sg_core_item *it = &vi->core[c];
            if (it->kind == SG_CORE_GUARD && it->index < (size_t)m->ng)
                guard_in[it->index] = true;
            else if (it->kind == SG_CORE_RANGE && it->index < (size_t)m->nsym)
                range_in[it->index] = true;
            else if (it->kind == SG_CORE_SPEC && it->index < (size_t)m->nin)
                spec_in[it->index] = true;
            else if (it->kind != SG_CORE_INPUT) {
                sb_printf(why, "violation %zu: core item of kind %d, index %zu unexpected here\n", v, (int)it->kind,
                          it->index);
                return;
            }
        }
    }
    for (g = 0; g < m->ng; g++)
        if (guard_in[g])
            used |= m->gsyms[g];
    for (k = 0; k < m->nsym; k++)
        if (range_in[k])
            used |= 1u << k;
    for (j = 0; j < NVARS; j++) {
        lo[j] = -1000000;
        hi[j] = 1000000;
    }
    for (i = 0; i < m->nin; i++) {
        const odim *d = &m->in[i];
        /* the spec item's root from 2 as the model reads it (oracle_model.c): a Dim, and a derived
         * dim's root but for `root - k` */
        long l = (d->kind == OD_DIM || (d->kind == OD_DERIVED && !(d->a == 1 && d->b < 0))) && d->lo < 2 ? 2 : d->lo;
        if (d->kind == OD_STATIC || pinned[i])
            continue;
        if (!spec_in[i] && !flagged[i] && d->sym >= 0 && (used & (1u << d->sym))) {
            free_dim[i] = partial = true; /* variable MAX_NAMES + i */
            used_var[MAX_NAMES + i] = true;
            lo[MAX_NAMES + i] = FREE_LO;
            hi[MAX_NAMES + i] = FREE_HI;
        }
        if (!spec_in[i])
            continue;
        used_var[d->name] = true;
        if (l > lo[d->name])
            lo[d->name] = l;
        if (d->hi < hi[d->name])
            hi[d->name] = d->hi;
    }
    /* a name whose plain dims are all pinned is pinned with them (check.c's pin settles the root:
     * oracle_model.c name_domains), which the spec items of its derived dims then read */
    for (j = 0; j < MAX_NAMES; j++) {
        long pv;
        if (used_var[j] && name_pinned(m, pinned, j, &pv)) {
            lo[j] = pv > lo[j] ? pv : lo[j];
            hi[j] = pv < hi[j] ? pv : hi[j];
        }
    }
    for (j = 0; j < NVARS; j++) {
        if (!used_var[j])
            lo[j] = hi[j] = 0;
        if (hi[j] < lo[j]) { /* the spec items alone conflict */
            ty->cores_checked++;
            return;
        }
        x[j] = lo[j];
    }
    if (partial)
        ty->cores_skipped++;
    else
        ty->cores_checked++;
    for (;;) {
        long D[MAX_IN];
        bool sat = true;
        for (i = 0; i < m->nin && sat; i++) {
            const odim *d = &m->in[i];
            long f = d->kind == OD_STATIC ? d->size : d->kind == OD_DIM ? x[d->name] : d->a * x[d->name] + d->b;
            if (d->kind == OD_STATIC || pinned[i])
                D[i] = d->size;
            else if (flagged[i])
                D[i] = (long)cex[i];
            else if (spec_in[i])
                D[i] = f;
            else if (free_dim[i])
                D[i] = x[MAX_NAMES + i];
            else
                D[i] = d->size; /* no core constraint reads it */
            if (!pinned[i] && flagged[i] && spec_in[i] && d->kind != OD_STATIC && D[i] != f)
                sat = false;
            if (DERIVED_FROM_2 && !pinned[i] && spec_in[i] && d->kind == OD_DERIVED && f < 2)
                sat = false; /* the derived spec item includes D_i >= 2 */
        }
        for (k = 0; k < m->nsym; k++)
            m->vals[m->slot[k]] = m->rlo[k];
        for (i = 0; i < m->nin && sat; i++) {
            const odim *d = &m->in[i];
            if (d->sym < 0)
                continue;
            m->vals[m->slot[d->sym]] = D[i];
            if (range_in[d->sym] && (D[i] < m->rlo[d->sym] || D[i] > m->rhi[d->sym]))
                sat = false;
        }
        for (g = 0; g < m->ng && sat; g++)
            if (guard_in[g])
                sat = guard_holds(m, m->guard[g]) == 1; /* overflow (-1): not a witness */
        if (sat) {
            sb_printf(why, "violation %zu (%s): its conflicting set is satisfiable: shape ", g0, r->violations[g0].dim);
            format_shape(why, m, D);
            sb_printf(why, " meets every member\n");
            return;
        }
        for (j = 0; j < NVARS; j++) {
            if (x[j] < hi[j]) {
                x[j]++;
                break;
            }
            x[j] = lo[j];
        }
        if (j == NVARS)
            return;
    }
}

/*
 * Compare report `r` with the ground truth of model `m`. Mismatches are
 * appended to `why`, one per line; returns their number.
 */
static size_t compare_report(model *m, const sg_report *r, bool inferred, tally *ty, sbuf *why)
{
    bool pinned[MAX_IN] = {false}, any_proved = false, any_unknown = false;
    long D[MAX_IN];
    size_t before = why->n, i, v, lines = 0;
    bool valid = !spec_fails(m, NULL, ALL_SYMS, D);

    if (valid)
        ty->valid++;
    else
        ty->invalid++;
    if (r->ndims != (size_t)m->nin) {
        sb_printf(why, "report has %zu dims, the trace %d\n", r->ndims, m->nin);
        goto done;
    }
    for (i = 0; i < r->ndims; i++) {
        sg_dim_status s = r->dims[i].status;
        bool dynamic = m->in[i].kind != OD_STATIC;
        if (dynamic != (s != SG_DIM_STATIC))
            sb_printf(why, "dim %zu: status %s for a %s dim\n", i, status_name(s), dynamic ? "named" : "static");
        any_proved |= s == SG_DIM_PROVED;
        any_unknown |= s == SG_DIM_UNKNOWN;
        pinned[i] = s == SG_DIM_REFUTED;
        ty->dims_proved += s == SG_DIM_PROVED;
        ty->dims_refuted += s == SG_DIM_REFUTED;
        ty->dims_unknown += s == SG_DIM_UNKNOWN;
    }
    /* the verdict */
    if (r->verdict == SG_VERDICT_INVALID_SPEC)
        sb_printf(why, "verdict invalid_spec, but the generated spec is valid for torch\n");
    else if (valid && r->verdict == SG_VERDICT_VIOLATIONS)
        sb_printf(why, "verdict violations, but every allowed shape passes (false alarm)\n");
    else if (!valid && r->verdict == SG_VERDICT_OK) {
        sb_printf(why, "UNSOUND: verdict ok, but the allowed shape ");
        format_shape(why, m, D);
        sb_printf(why, " fails\n");
    } else if (r->verdict == SG_VERDICT_UNKNOWN && !any_unknown)
        sb_printf(why, "verdict unknown without an unknown dim\n");
    if (r->verdict == SG_VERDICT_UNKNOWN) {
        if (valid)
            ty->unknown_valid++;
        else
            ty->unknown_invalid++;
    }
    /* the violations: each counterexample really fails and is an allowed shape of its round */
    {
        bool earlier[MAX_IN] = {false}, round_pins[MAX_IN] = {false};
        const sg_int *prev = NULL;
        for (v = 0; v < r->nviolations; v++) {
            const sg_violation *x = &r->violations[v];
            long cex[MAX_IN];
            if (x->kind != SG_VIOL_GUARD) {
                sb_printf(why, "violation %zu (%s): kind %d, expected a guard violation: %s\n", v, x->dim,
                          (int)x->kind, x->message ? x->message : "");
                continue;
            }
            if (x->input >= (size_t)m->nin || r->dims[x->input].status != SG_DIM_REFUTED)
                sb_printf(why, "violation %zu (%s): its dim is not refuted\n", v, x->dim);
            if (!x->has_counterexample || !x->counterexample) {
                sb_printf(why, "violation %zu (%s): no counterexample\n", v, x->dim);
                continue;
            }
            /* a new round starts with a different counterexample: the dims refuted so far are pinned */
            if (prev && memcmp(prev, x->counterexample, (size_t)m->nin * sizeof *prev) != 0)
                memcpy(round_pins, earlier, sizeof round_pins);
            prev = x->counterexample;
            if (x->input < (size_t)m->nin)
                earlier[x->input] = true;
            for (i = 0; i < (size_t)m->nin; i++)
                cex[i] = (long)x->counterexample[i];
            ty->cex_checked++;
            if (shape_passes(m, cex)) {
                sb_printf(why, "violation %zu (%s): counterexample ", v, x->dim);
                format_shape(why, m, cex);
                sb_printf(why, " passes every guard and range\n");
            }
            if (!spec_allows(m, round_pins, cex)) {
                sb_printf(why, "violation %zu (%s): counterexample ", v, x->dim);
                format_shape(why, m, cex);
                sb_printf(why, " is not a shape the spec allows (earlier refuted dims pinned)\n");
            } else if (!spec_allows(m, NULL, cex)) {
                ty->cex_later_round_outside_spec++;
            }
        }
    }
    /* each round's conflicting set really conflicts */
    {
        bool prior[MAX_IN] = {false};
        size_t g0 = 0, g1;
        while (g0 < r->nviolations) {
            const sg_violation *a = &r->violations[g0];
            if (a->kind != SG_VIOL_GUARD || !a->counterexample) {
                g0++;
                continue;
            }
            for (g1 = g0 + 1; g1 < r->nviolations; g1++) {
                const sg_violation *b = &r->violations[g1];
                if (b->kind != SG_VIOL_GUARD || !b->counterexample ||
                    memcmp(a->counterexample, b->counterexample, (size_t)m->nin * sizeof *a->counterexample) != 0)
                    break;
            }
            check_core(m, r, g0, g1, prior, ty, why);
            for (; g0 < g1; g0++)
                if (r->violations[g0].input < (size_t)m->nin)
                    prior[r->violations[g0].input] = true;
        }
    }
    /* proved dims: with the refuted dims pinned to their example sizes, no allowed shape
     * fails a constraint of the proved dim's component (components are decided apart) */
    if (any_proved) {
        int comp[MAX_IN];
        unsigned csyms[MAX_IN];
        components(m, comp, csyms);
        for (i = 0; i < (size_t)m->nin; i++) {
            size_t e;
            bool first = true;
            if (r->dims[i].status != SG_DIM_PROVED || comp[i] < 0)
                continue;
            for (e = 0; e < i; e++) /* once per component */
                first &= !(comp[e] == comp[i] && r->dims[e].status == SG_DIM_PROVED);
            if (first && spec_fails(m, pinned, csyms[comp[i]], D)) {
                sb_printf(why, "UNSOUND: dim %zu proved, but with the refuted dims pinned the allowed shape ", i);
                format_shape(why, m, D);
                sb_printf(why, " fails a constraint of its component\n");
            }
        }
    }
    if (inferred)
        compare_inferred(m, r, ty, why);
done:
    for (i = before; i < why->n; i++)
        lines += why->p[i] == '\n';
    return lines;
}

/* ---- the random guard generator ---------------------------------------------------------------- */

typedef struct gen {
    rng *r;
    sg_pool *pool;
    const sg_expr *sym[MAX_DYN];
    int nsym;
    long R;  /* largest size */
} gen;

/* Forward declarations: the generators recurse into each other. */
static const sg_expr *g_int(gen *g, int depth);
static const sg_expr *g_bool(gen *g, int depth);

/* An integer literal. */
static const sg_expr *lit(gen *g, long v) { return sg_expr_int(g->pool, v); }

/* One of the trace's symbols, uniformly. */
static const sg_expr *any_sym(gen *g) { return g->sym[rnd_in(g->r, 0, g->nsym - 1)]; }

/* A constructor result, or NULL after clearing the pool's recorded error (the caller falls back). */
static const sg_expr *ok_or_clear(gen *g, const sg_expr *e)
{
    if (!e)
        sg_pool_clear_error(g->pool);
    return e;
}

/* A small size-like literal: around the sizes the spec allows. */
static const sg_expr *size_lit(gen *g) { return lit(g, rnd_in(g->r, 0, g->R + 4)); }

/* A divisor: mostly a nonzero literal, sometimes an expression that may be zero somewhere. */
static const sg_expr *divisor(gen *g, int depth)
{
    static const long small[] = {2, 3, 4, 8, 5, -3, 7, 16, -2, 6};
    if (depth <= 1 || chance(g->r, 75))
        return lit(g, small[rnd_in(g->r, 0, (long)(sizeof small / sizeof *small) - 1)]);
    const sg_expr *x = any_sym(g);
    return sg_expr_sub(g->pool, x, lit(g, rnd_in(g->r, 0, g->R / 2)));
}

/* A symbol (mostly) or a small literal. */
static const sg_expr *g_leaf(gen *g)
{
    if (chance(g->r, 70))
        return any_sym(g);
    return chance(g->r, 70) ? lit(g, rnd_in(g->r, -3, 12)) : size_lit(g);
}

/* A real-sorted expression. */
static const sg_expr *g_real(gen *g, int depth)
{
    const sg_expr *a[2];
    long num;
    switch (depth <= 1 ? 0 : rnd_in(g->r, 0, 4)) {
    case 0:
        num = rnd_in(g->r, 1, 4 * g->R);
        return sg_expr_rational(g->pool, num, rnd_in(g->r, 2, 5));
    case 1: case 2:
        a[0] = g_int(g, depth - 1);
        a[1] = chance(g->r, 80) ? divisor(g, 1) : g_int(g, depth - 1);
        return sg_expr_apply(g->pool, SG_TRUEDIV, a, 2);
    case 3:
        a[0] = g_real(g, depth - 1);
        a[1] = g_int(g, depth - 1);
        return sg_expr_apply(g->pool, chance(g->r, 50) ? SG_ADD : SG_MAX, a, 2);
    default:
        num = rnd_in(g->r, 1, 7);
        a[0] = sg_expr_rational(g->pool, num, rnd_in(g->r, 2, 3));
        a[1] = g_int(g, depth - 1);
        return sg_expr_apply(g->pool, SG_MUL, a, 2);
    }
}

/* One attempt at an integer-sorted expression of depth at most `depth`; may be NULL. */
static const sg_expr *g_int_once(gen *g, int depth)
{
    sg_pool *p = g->pool;
    const sg_expr *a[6];
    size_t n, i;
    int c;
    if (depth <= 1 || chance(g->r, 20))
        return g_leaf(g);
    c = (int)rnd_in(g->r, 0, 21);
    switch (c) {
    case 0: case 1: /* Add */
        n = (size_t)rnd_in(g->r, 2, 3);
        for (i = 0; i < n; i++)
            a[i] = g_int(g, depth - 1);
        return sg_expr_apply(p, SG_ADD, a, n);
    case 2: /* a - b */
        a[0] = g_int(g, depth - 1);
        a[1] = g_int(g, depth - 1);
        return sg_expr_sub(p, a[0], a[1]);
    case 3: case 4: /* Mul: mostly a coefficient times something */
        a[0] = chance(g->r, 70) ? lit(g, rnd_in(g->r, -3, 4)) : g_int(g, depth - 1);
        a[1] = g_int(g, depth - 1);
        return sg_expr_apply(p, SG_MUL, a, 2);
    case 5: /* Pow with a literal exponent */
        a[0] = g_leaf(g);
        return sg_expr_2(p, SG_POW, a[0], lit(g, rnd_in(g->r, 2, 3)));
    case 6: /* PowByNatural: small exponents, sometimes negative somewhere */
        a[0] = chance(g->r, 50) ? lit(g, rnd_in(g->r, 2, 3)) : g_leaf(g);
        if (chance(g->r, 50)) {
            a[1] = sg_expr_2(p, SG_MOD, any_sym(g), lit(g, 4));
        } else {
            a[2] = lit(g, rnd_in(g->r, 2, 6));
            a[1] = sg_expr_sub(p, a[2], any_sym(g));
        }
        return sg_expr_2(p, SG_POWNAT, a[0], a[1]);
    case 7: case 8: case 9: case 10: case 11: case 12: case 13: {
        static const sg_kind dk[] = {SG_FLOORDIV, SG_FLOORDIV, SG_CLEANDIV, SG_CEILDIV, SG_MOD, SG_MOD, SG_PYMOD};
        a[0] = g_int(g, depth - 1);
        a[1] = divisor(g, depth);
        return sg_expr_2(p, dk[c - 7], a[0], a[1]);
    }
    case 14:
        a[0] = g_int(g, depth - 1);
        a[1] = divisor(g, depth);
        a[2] = divisor(g, depth);
        return sg_expr_apply(p, SG_MODIDX, a, 3);
    case 15: {
        static const sg_kind rk[] = {SG_TRUNC, SG_FLOOR, SG_CEIL};
        sg_kind k = rk[rnd_in(g->r, 0, 2)];
        return sg_expr_1(p, k, g_real(g, depth - 1));
    }
    case 16: case 17: /* Max / Min, n-ary, sometimes with an infinity that folds away */
        n = (size_t)rnd_in(g->r, 2, 3);
        for (i = 0; i < n; i++)
            a[i] = chance(g->r, 8) ? sg_expr_inf(p, chance(g->r, 50) ? 1 : -1, true) : g_int(g, depth - 1);
        return sg_expr_apply(p, chance(g->r, 50) ? SG_MAX : SG_MIN, a, n);
    case 18:
        a[0] = g_bool(g, depth - 1);
        a[1] = g_int(g, depth - 1);
        a[2] = g_int(g, depth - 1);
        return sg_expr_apply(p, SG_WHERE, a, 3);
    case 19: /* Piecewise, with or without a final True branch */
        n = (size_t)rnd_in(g->r, 1, 2);
        for (i = 0; i < n; i++) {
            a[2 * i] = g_int(g, depth - 1);
            a[2 * i + 1] = g_bool(g, depth - 1);
        }
        if (chance(g->r, 60)) {
            a[2 * n] = g_int(g, depth - 1);
            a[2 * n + 1] = sg_expr_bool(p, true);
            n++;
        }
        return sg_expr_apply(p, SG_PIECEWISE, a, 2 * n);
    case 20: return sg_expr_1(p, SG_IDENTITY, g_int(g, depth - 1));
    default: return sg_expr_neg(p, g_int(g, depth - 1));
    }
}

/* An integer-sorted expression, never NULL (a symbol as the fallback). */
static const sg_expr *g_int(gen *g, int depth)
{
    int t;
    for (t = 0; t < GEN_ATTEMPTS; t++) {
        const sg_expr *e = ok_or_clear(g, g_int_once(g, depth));
        if (e && sg_expr_sort(e) == SG_SORT_INT && sg_expr_kind(e) != SG_INF)
            return e;
    }
    return any_sym(g);
}

/* A relation between numbers: one side a sizes expression, the other often a literal. */
static const sg_expr *g_rel(gen *g, int depth)
{
    static const sg_kind rel[] = {SG_EQ, SG_NE, SG_LT, SG_LE, SG_GT, SG_GE};
    sg_kind k = rel[rnd_in(g->r, 0, 5)];
    const sg_expr *l = g_int(g, depth - 1), *r;
    int c = (int)rnd_in(g->r, 0, 9);
    if (c < 4)
        r = size_lit(g);
    else if (c < 8)
        r = g_int(g, depth - 1);
    else
        r = g_real(g, depth - 1);
    if (chance(g->r, 30)) {
        const sg_expr *t = l;
        l = r;
        r = t;
    }
    return sg_expr_2(g->pool, k, l, r);
}

/* One attempt at a boolean expression; may be NULL. */
static const sg_expr *g_bool_once(gen *g, int depth)
{
    sg_pool *p = g->pool;
    const sg_expr *a[3];
    size_t n, i;
    int c;
    if (depth <= 1)
        return sg_expr_bool(p, chance(g->r, 50));
    c = (int)rnd_in(g->r, 0, 9);
    if (c < 6 || depth <= 2)
        return g_rel(g, depth);
    if (c < 8) {
        n = (size_t)rnd_in(g->r, 2, 3);
        for (i = 0; i < n; i++)
            a[i] = chance(g->r, 10) ? sg_expr_bool(p, chance(g->r, 50)) : g_bool(g, depth - 1);
        return sg_expr_apply(p, c == 6 ? SG_AND : SG_OR, a, n);
    }
    if (c == 8)
        return sg_expr_1(p, SG_NOT, g_bool(g, depth - 1));
    /* Eq / Ne of two booleans */
    a[0] = sg_expr_bool(p, chance(g->r, 50)); /* EQ or NE */
    a[1] = g_bool(g, depth - 1);
    a[2] = g_bool(g, depth - 1);
    return sg_expr_2(p, a[0] == sg_expr_bool(p, true) ? SG_EQ : SG_NE, a[1], a[2]);
}

/* A boolean expression of depth at most `depth`, never NULL (True as the fallback). */
static const sg_expr *g_bool(gen *g, int depth)
{
    int t;
    for (t = 0; t < GEN_ATTEMPTS; t++) {
        const sg_expr *e = ok_or_clear(g, g_bool_once(g, depth));
        if (e && sg_expr_sort(e) == SG_SORT_BOOL)
            return e;
    }
    return sg_expr_bool(g->pool, true);
}

/* A guard in the shape torch usually emits. */
static const sg_expr *g_template(gen *g)
{
    sg_pool *p = g->pool;
    const sg_expr *x = any_sym(g), *y = any_sym(g);
    long c = rnd_in(g->r, 2, g->R);
    static const long mods[] = {2, 3, 4, 8};
    long k = mods[rnd_in(g->r, 0, 3)];
    switch (rnd_in(g->r, 0, 11)) {
    case 11: {
        static const sg_kind rk[] = {SG_TRUNC, SG_FLOOR, SG_CEIL};
        const sg_expr *q = sg_expr_2(p, SG_TRUEDIV, x, lit(g, k + 1));
        const sg_expr *f = sg_expr_1(p, rk[rnd_in(g->r, 0, 2)], q);
        return sg_expr_2(p, chance(g->r, 50) ? SG_LE : SG_NE, f, lit(g, c / (k + 1)));
    }
    case 0: return sg_expr_2(p, SG_LE, x, lit(g, c));
    case 1: return sg_expr_2(p, SG_GE, x, lit(g, c / 2 + 1));
    case 2: return sg_expr_2(p, SG_NE, x, lit(g, c));
    case 3: return sg_expr_2(p, SG_EQ, sg_expr_2(p, SG_MOD, x, lit(g, k)), lit(g, rnd_in(g->r, 0, 1) ? 0 : k - 1));
    case 4: return sg_expr_2(p, SG_EQ, x, y);
    case 5: return sg_expr_2(p, SG_EQ, y, sg_expr_2(p, SG_MUL, lit(g, 2), x));
    case 6: return sg_expr_2(p, SG_LE, sg_expr_2(p, SG_MUL, x, y), lit(g, c * rnd_in(g->r, 2, 8)));
    case 7: return sg_expr_2(p, SG_EQ, sg_expr_2(p, SG_MUL, lit(g, k), sg_expr_2(p, SG_FLOORDIV, x, lit(g, k))), x);
    case 8: return sg_expr_2(p, SG_LE, sg_expr_2(p, SG_ADD, x, y), lit(g, c + rnd_in(g->r, 0, g->R)));
    case 9: return sg_expr_2(p, SG_EQ, y, sg_expr_2(p, SG_ADD, x, lit(g, 1)));
    default: return sg_expr_2(p, SG_NE, sg_expr_2(p, SG_MOD, x, lit(g, k)), lit(g, 0));
    }
}

/* A non-constant boolean guard, or NULL. */
static const sg_expr *g_guard(gen *g)
{
    int t;
    for (t = 0; t < GEN_ATTEMPTS; t++) {
        const sg_expr *e = chance(g->r, 40) ? g_template(g) : g_bool(g, (int)rnd_in(g->r, 2, MAX_DEPTH));
        e = ok_or_clear(g, e);
        if (e && sg_expr_sort(e) == SG_SORT_BOOL && !sg_expr_is_constant(e))
            return e;
    }
    return NULL;
}

/* ---- the random trace generator ------------------------------------------------------------ */

typedef struct reservoir {
    rng *r;
    unsigned long seen;
    long D[MAX_IN];
} reservoir;

/* Keep a uniformly chosen passing allowed shape. */
static bool pick_passing(const model *m, const long *D, void *arg)
{
    reservoir *s = arg;
    if (!shape_passes(m, D))
        return false;
    s->seen++;
    if (rnd(s->r) % s->seen == 0)
        memcpy(s->D, D, sizeof s->D);
    return false;
}

/* Print an integer bound of a spec; JSON text. */
static void json_str(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else
            sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\"");
}

/* The derived dim's printed form over root `root`: "2*d0", "d0 + 1", "2*d0 + 1". */
static void derived_text(char *buf, size_t cap, long a, long b, const char *root)
{
    if (a == 1)
        snprintf(buf, cap, "%s + %ld", root, b);
    else if (b == 0)
        snprintf(buf, cap, "%ld*%s", a, root);
    else
        snprintf(buf, cap, "%ld*%s + %ld", a, root, b);
}

/*
 * Generate random trace number `n` of the run as JSON text into `out`, and the
 * guard texts (sympy form) into texts[]. Returns false when this draw gives no
 * usable trace (skipped).
 */
static bool gen_trace(uint64_t seed, unsigned long n, sbuf *out, char texts[][4096], int *ntexts)
{
    rng r = {seed ^ (0xA5A5A5A5DEADBEEFu * (n + 1))};
    sg_pool *pool = NULL;
    sg_error err = SG_ERROR_INIT;
    model m;
    gen g;
    int nd, i, k, j, nnames = 0, ng;
    long R;
    bool ok = false, has_static[MAX_DYN];
    long static_size[MAX_DYN];
    int static_kind[MAX_DYN];
    const sg_expr *guards[MAX_GEN_GUARDS];
    char names[MAX_NAMES][16];
    bool name_direct[MAX_NAMES] = {false};

    rnd(&r);
    memset(&m, 0, sizeof m);
    *ntexts = 0;
    if (sg_pool_new(&pool, &err))
        return false;
    nd = (int)rnd_in(&r, 1, MAX_DYN);
    R = nd == 1 ? 64 : nd == 2 ? 40 : 20;

    /* the spec: one dynamic dim per tensor */
    for (i = 0; i < nd; i++) {
        odim *d = &m.in[m.nin];
        int shared = -1, c = (int)rnd_in(&r, 0, 99);
        for (j = 0; j < nnames; j++)
            if (name_direct[j] && (shared < 0 || chance(&r, 50)))
                shared = j;
        d->sym = i;
        if (c < 20 && shared >= 0) { /* the same Dim as an earlier dim */
            int e;
            for (e = 0; e < m.nin && !(m.in[e].kind == OD_DIM && m.in[e].name == shared); e++)
                ;
            *d = m.in[e];
            d->sym = i;
        } else if (c < 38) { /* derived: of an earlier Dim, or of a new phantom root */
            static const long forms[][2] = {{2, 0}, {1, 1}, {2, 1}};
            int f = (int)rnd_in(&r, 0, 2);
            d->kind = OD_DERIVED;
            d->a = forms[f][0];
            d->b = forms[f][1];
            if (shared >= 0 && chance(&r, 60)) {
                int e;
                for (e = 0; e < m.nin && !(m.in[e].kind == OD_DIM && m.in[e].name == shared); e++)
                    ;
                d->name = shared;
                d->lo = m.in[e].lo;
                d->hi = m.in[e].hi;
            } else {
                if (nnames >= MAX_NAMES)
                    goto done;
                d->name = nnames++;
                d->hi = rnd_in(&r, 2, (R - d->b) / d->a);
                /* torch's Dim() asserts max > min */
                d->lo = chance(&r, 10) ? rnd_in(&r, 0, 1) : rnd_in(&r, 1, d->hi - 1);
            }
        } else { /* a new Dim */
            if (nnames >= MAX_NAMES)
                goto done;
            d->kind = OD_DIM;
            d->name = nnames++;
            name_direct[d->name] = true;
            c = (int)rnd_in(&r, 0, 9);
            d->lo = c < 4 ? 2 : c < 6 ? rnd_in(&r, 0, 1) : rnd_in(&r, 2, R - 1);
            d->hi = chance(&r, 30) ? R : rnd_in(&r, d->lo < 2 ? 2 : d->lo, R);
            if (d->hi == d->lo) /* torch's Dim() asserts max > min */
                d->hi = d->lo + 1;
        }
        m.nin++;
        has_static[i] = chance(&r, 25);
        static_size[i] = rnd_in(&r, 2, 9);
        static_kind[i] = (int)rnd_in(&r, 0, 1);
    }
    m.nsym = nd;
    m.nname = nnames;
    for (j = 0; j < nnames; j++)
        snprintf(names[j], sizeof names[j], "d%d", j);

    /* an example: a random value of every name in its domain, all sizes in [2, R] */
    {
        long lo[MAX_NAMES], hi[MAX_NAMES];
        bool used[MAX_NAMES];
        int t;
        name_domains(&m, NULL, lo, hi, used);
        for (t = 0; t < GEN_ATTEMPTS && !ok; t++) {
            long x[MAX_NAMES] = {0};
            ok = true;
            for (j = 0; j < nnames; j++) {
                if (hi[j] < lo[j])
                    goto done;
                x[j] = rnd_in(&r, lo[j], hi[j]);
            }
            for (i = 0; i < m.nin; i++) {
                m.in[i].size = dim_size(&m, NULL, i, x);
                ok &= m.in[i].size >= 2 && m.in[i].size <= R;
            }
        }
        if (!ok)
            goto done;
        ok = false;
    }
    /* traced ranges around the example */
    for (k = 0; k < nd; k++) {
        long e = m.in[k].size, c = rnd_in(&r, 0, 9);
        if (c < 6) {
            m.rlo[k] = 2;
            m.rhi[k] = R;
        } else if (c < 8 && m.in[k].kind == OD_DIM) {
            m.rlo[k] = m.in[k].lo < 2 ? 2 : m.in[k].lo;
            m.rhi[k] = m.in[k].hi;
        } else {
            m.rlo[k] = rnd_in(&r, 2, e);
            m.rhi[k] = rnd_in(&r, e, R);
        }
    }
    /* guards, then an example that satisfies them (or only the guards true at a random one) */
    g.r = &r;
    g.pool = pool;
    g.nsym = nd;
    g.R = R;
    for (k = 0; k < nd; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "s%d", k);
        g.sym[k] = sg_expr_symbol(pool, nm, strlen(nm));
        m.slot[k] = sg_expr_symbol_index(g.sym[k]);
    }
    ng = (int)rnd_in(&r, 1, MAX_GEN_GUARDS);
    m.ng = 0;
    for (j = 0; j < ng; j++) {
        const sg_expr *e = g_guard(&g);
        if (e)
            guards[m.ng++] = e;
    }
    memcpy(m.guard, guards, sizeof guards);
    m.pool = pool;
    m.nvals = sg_pool_nsymbols(pool);
    m.vals = calloc(m.nvals + 1, sizeof *m.vals);
    if (!m.vals || model_table(&m))
        goto done;
    {
        reservoir s;
        memset(&s, 0, sizeof s);
        s.r = &r;
        spec_each(&m, NULL, pick_passing, &s);
        if (s.seen > 0) {
            for (i = 0; i < m.nin; i++)
                m.in[i].size = s.D[i];
        } else { /* keep the random example and the guards true there */
            long idx;
            long D[MAX_IN];
            int kept = 0;
            for (i = 0; i < m.nin; i++)
                D[i] = m.in[i].size;
            idx = shape_point(&m, D);
            if (idx < 0)
                goto done;
            for (j = 0; j < m.ng; j++)
                if (m.mask[idx] & (1u << j))
                    m.guard[kept++] = m.guard[j];
            m.ng = kept;
        }
    }

    /* the JSON text */
    sb_printf(out, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"\", \"strict\": false, "
                   "\"shape_env\": true,\n\"symbols\": [\n");
    for (k = 0; k < nd; k++)
        sb_printf(out,
                  "  {\"name\": \"s%d\", \"range\": [%ld, %ld], \"hint\": %ld, \"unbacked\": false, \"size_like\": "
                  "false, \"replacement\": null, \"sources\": [\"L['x%d'].size()[0]\"]}%s\n",
                  k, m.rlo[k], m.rhi[k], m.in[k].size, k, k + 1 < nd ? "," : "");
    sb_printf(out, "],\n\"guards\": [\n");
    for (j = 0; j < m.ng; j++) {
        char *txt = NULL;
        if (sg_expr_print(&txt, m.guard[j], SG_SYNTAX_SYMPY, NULL, NULL, &err) || strlen(txt) >= 4096) {
            sg_free(txt);
            goto done;
        }
        snprintf(texts[(*ntexts)++], 4096, "%s", txt);
        sb_printf(out, "  {\"origin\": \"%s\", \"expr\": ", chance(&r, 80) ? "shape" : "runtime_assert");
        json_str(out, txt);
        sb_printf(out, "}%s\n", j + 1 < m.ng ? "," : "");
        sg_free(txt);
    }
    sb_printf(out, "],\n\"inputs\": [\n");
    for (i = 0; i < nd; i++) {
        const odim *d = &m.in[i];
        sb_printf(out,
                  "  {\"path\": \"['x%d']\", \"dim\": 0, \"size\": %ld, \"source\": \"L['x%d'].size()[0]\", "
                  "\"traced_source\": \"L['x%d'].size()[0]\", \"value\": \"s%d\", \"spec\": ",
                  i, d->size, i, i, i);
        if (d->kind == OD_DIM) {
            sb_printf(out, "{\"kind\": \"dim\", \"name\": \"%s\", \"min\": %ld, \"max\": %ld}", names[d->name], d->lo,
                      d->hi);
        } else {
            char dt[64];
            derived_text(dt, sizeof dt, d->a, d->b, names[d->name]);
            sb_printf(out,
                      "{\"kind\": \"derived\", \"name\": \"%s\", \"expr\": \"%s\", \"root\": {\"name\": \"%s\", "
                      "\"min\": %ld, \"max\": %ld}, \"min\": %ld, \"max\": %ld}",
                      dt, dt, names[d->name], d->lo, d->hi, d->a * d->lo + d->b, d->a * d->hi + d->b);
        }
        sb_printf(out, "}%s\n", i + 1 < nd || has_static[i] ? "," : "");
        if (has_static[i]) {
            sb_printf(out,
                      "  {\"path\": \"['x%d']\", \"dim\": 1, \"size\": %ld, \"source\": \"L['x%d'].size()[1]\", "
                      "\"traced_source\": \"L['x%d'].size()[1]\", \"value\": \"%ld\", \"spec\": ",
                      i, static_size[i], i, i, static_size[i]);
            if (static_kind[i])
                sb_printf(out, "{\"kind\": \"static\", \"size\": %ld}", static_size[i]);
            else
                sb_printf(out, "{\"kind\": \"unset\"}");
            sb_printf(out, "}%s\n", i + 1 < nd ? "," : "");
        }
    }
    sb_printf(out, "],\n\"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": null}\n}\n");
    ok = true;
done:
    model_dispose(&m);
    sg_pool_free(pool);
    return ok;
}

/* ---- running one trace ---------------------------------------------------------------------- */

/* Mark every kind occurring in `e` (seen_kinds[kind] = 1). */
static void count_kinds(const sg_expr *e, unsigned long *seen_kinds)
{
    size_t i;
    seen_kinds[sg_expr_kind(e)] = 1;
    for (i = 0; i < sg_expr_nargs(e); i++)
        count_kinds(sg_expr_arg(e, i), seen_kinds);
}

/*
 * Load `json`, check it and compare with the oracle. `texts` (may be NULL) are
 * the generator's guard texts, which the loaded guards must print back to.
 * Returns the number of mismatches (printed when `shown` is under MAX_SHOWN),
 * or 0 when the trace was skipped.
 */
/* The warm engine of this process (run_one makes it, run_range frees it). */
static sg_engine *warm_engine;

static size_t run_one(const char *label, const char *json, char texts[][4096], int ntexts, bool infer,
                      bool minimize, bool warm, tally *ty, int *shown, bool verbose, double slow)
{
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    model m;
    sbuf why = {0}, skip = {0};
    size_t bad = 0, ng = 0;
    int rc, j;
    struct timespec t0, t1;
    double secs;

    memset(&m, 0, sizeof m);
    rc = sg_trace_load_json(&t, json, strlen(json), &err);
    if (rc) {
        sb_printf(&why, "sg_trace_load_json: %s: %s\n", sg_strerror(rc), err.msg);
        goto report;
    }
    {
        const sg_guard *gs = sg_trace_guards(t, &ng);
        for (j = 0; texts && j < ntexts && j < (int)ng; j++) {
            char *txt = NULL;
            if (sg_expr_print(&txt, gs[j].expr, SG_SYNTAX_SYMPY, NULL, NULL, NULL) || strcmp(txt, texts[j]) != 0)
                sb_printf(&why, "guard %d does not round-trip: wrote %s, read back %s\n", j, texts[j],
                          txt ? txt : "(print failed)");
            sg_free(txt);
        }
    }
    if (model_from_trace(&m, t, &skip)) {
        if (!texts) /* a replayed file the oracle cannot decide */
            fprintf(stderr, "%s: not decidable by the oracle: %s\n", label, sb_str(&skip));
        ty->skipped++;
        goto cleanup;
    }
    ty->traces++;
    {
        unsigned long seen_kinds[SG_KIND_COUNT] = {0};
        int q;
        for (j = 0; j < m.ng; j++)
            count_kinds(m.guard[j], seen_kinds);
        for (q = 0; q < SG_KIND_COUNT; q++)
            ty->kinds[q] += seen_kinds[q];
    }
    opts.infer = infer;
    opts.minimize_cores = minimize;
    /* The budget is Z3's resource limit, deterministic, so a printed trace replays the same
     * way. Some Z3 loops do not count resources, though, so generous wall-clock limits stay
     * on as a safety net; a trace that reaches them is printed (slow) and gives "unknown",
     * which is still checked. */
    opts.timeout_ms = ORACLE_SAFETY_MS;
    opts.query_timeout_ms = ORACLE_SAFETY_MS / 2;
    opts.query_rlimit = env_ulong("SG_ORACLE_RLIMIT", ORACLE_DEFAULT_RLIMIT);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (warm) { /* the same check, on a warm engine: nothing more than sg_check does */
        sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
        opts.fixes = opts.torch_fixes = opts.torch_message = false;
        eo.warm_contexts = 1;
        rc = warm_engine ? 0 : sg_engine_new(&warm_engine, &eo, &err);
        if (!rc)
            rc = sg_engine_check(warm_engine, t, &opts, &r, &err);
    } else {
        rc = sg_check(&r, t, &opts, &err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    ty->check_seconds += secs;
    if (secs > ty->max_check_seconds)
        ty->max_check_seconds = secs;
    ty->infer_runs += infer;
    if (slow > 0 && secs > slow)
        fprintf(stderr, "==== %s: slow: sg_check took %.2f s (infer %s, %u queries)\n%s", label, secs,
                infer ? "on" : "off", r ? r->stats.queries : 0, json);
    if (rc) {
        sb_printf(&why, "sg_check failed: %s: %s\n", sg_strerror(rc), err.msg);
        goto report;
    }
    compare_report(&m, r, infer, ty, &why);
report:
    for (j = 0; j < (int)why.n; j++)
        bad += why.p[j] == '\n';
    if (verbose || (bad && *shown < MAX_SHOWN)) {
        char *rj = NULL;
        if (r && t)
            sg_report_to_json(&rj, r, 0, NULL);
        fprintf(stderr, "==== %s: %zu mismatch%s (infer %s, minimize %s%s)\n%s---- trace:\n%s---- report:\n%s\n", label,
                bad, bad == 1 ? "" : "es", infer ? "on" : "off", minimize ? "on" : "off", warm ? ", warm engine" : "",
                sb_str(&why), json, rj ? rj : "(none)");
        sg_free(rj);
        if (bad)
            (*shown)++;
    } else if (bad) {
        fprintf(stderr, "==== %s: %zu mismatch%s (not shown in full): %s", label, bad, bad == 1 ? "" : "es",
                sb_str(&why));
    }
    ty->mismatches += bad;
cleanup:
    model_dispose(&m);
    sg_report_free(r);
    sg_trace_free(t);
    sb_free(&why);
    sb_free(&skip);
    return bad;
}

/* ---- tests ---------------------------------------------------------------------------------------- */

/* Print the run's counts (stdout), so a passing run still shows what it covered. */
static void print_tally(const tally *ty, double wall)
{
    int q;
    printf("traces checked: %lu (skipped %lu), valid %lu, invalid %lu; inference on %lu\n", ty->traces, ty->skipped,
           ty->valid, ty->invalid, ty->infer_runs);
    printf("verdict unknown: %lu on valid, %lu on invalid traces\n", ty->unknown_valid, ty->unknown_invalid);
    printf("dims: %lu proved, %lu refuted, %lu unknown; %lu counterexamples checked (%lu of later rounds outside "
           "the unpinned spec); %lu conflicting sets checked (%lu of them with free dims only in a window)\n",
           ty->dims_proved, ty->dims_refuted, ty->dims_unknown, ty->cex_checked, ty->cex_later_round_outside_spec,
           ty->cores_checked, ty->cores_skipped);
    printf("inferred: %lu symbols checked, %lu exact ranges, %lu holes, %lu congruences, %lu relations\n",
           ty->inferred_checked, ty->ranges_exact, ty->holes_checked, ty->congruences, ty->relations);
    printf("time: %.1f s in all, %.1f s in sg_check (slowest %.2f s)\n", wall, ty->check_seconds,
           ty->max_check_seconds);
    printf("traces with a guard using each kind:");
    for (q = 0; q < SG_KIND_COUNT; q++)
        printf(" %s=%lu", sg_kind_name((sg_kind)q), ty->kinds[q]);
    printf("\nmismatches: %lu\n", ty->mismatches);
}

/* What one run over traces needs to know. */
typedef struct run_cfg {
    uint64_t seed;
    unsigned long first, last, every, warm;
    bool verbose;
    double slow;
} run_cfg;

/* Run traces first .. last-1 whose number is `offset` modulo `step`, into `ty`. */
static void run_range(const run_cfg *cfg, unsigned long step, unsigned long offset, tally *ty)
{
    static char texts[MAX_GEN_GUARDS][4096];
    unsigned long n;
    int shown = 0;
    for (n = cfg->first; n < cfg->last; n++) {
        sbuf json = {0};
        int ntexts = 0;
        char label[128];
        if (n % step != offset)
            continue;
        if (gen_trace(cfg->seed, n, &json, texts, &ntexts)) {
            rng r = {cfg->seed + n};
            bool minimize = rnd(&r) % 4 != 0;
            snprintf(label, sizeof label,
                     "seed 0x%" PRIx64 " trace %lu (SG_ORACLE_SEED=0x%" PRIx64 " SG_ORACLE_ONLY=%lu)", cfg->seed, n,
                     cfg->seed, n);
            run_one(label, json.p, texts, ntexts, n % cfg->every == 0, minimize, cfg->warm && n % cfg->warm == 0, ty,
                    &shown, cfg->verbose, cfg->slow);
        } else {
            ty->skipped++;
        }
        sb_free(&json);
    }
    sg_engine_free(warm_engine);
    warm_engine = NULL;
}

/* Add a worker's counts into `to`. */
static void tally_add(tally *to, const tally *from)
{
    int q;
    to->traces += from->traces;
    to->skipped += from->skipped;
    to->valid += from->valid;
    to->invalid += from->invalid;
    to->infer_runs += from->infer_runs;
    to->unknown_valid += from->unknown_valid;
    to->unknown_invalid += from->unknown_invalid;
    to->dims_proved += from->dims_proved;
    to->dims_refuted += from->dims_refuted;
    to->dims_unknown += from->dims_unknown;
    to->cex_checked += from->cex_checked;
    to->cex_later_round_outside_spec += from->cex_later_round_outside_spec;
    to->cores_checked += from->cores_checked;
    to->cores_skipped += from->cores_skipped;
    to->inferred_checked += from->inferred_checked;
    to->ranges_exact += from->ranges_exact;
    to->holes_checked += from->holes_checked;
    to->congruences += from->congruences;
    to->relations += from->relations;
    to->mismatches += from->mismatches;
    for (q = 0; q < SG_KIND_COUNT; q++)
        to->kinds[q] += from->kinds[q];
    to->check_seconds += from->check_seconds;
    if (from->max_check_seconds > to->max_check_seconds)
        to->max_check_seconds = from->max_check_seconds;
}

/*
 * Run the traces in `jobs` worker processes (fork), each taking every jobs-th
 * trace and sending its tally back through a pipe. Returns false when a worker
 * died or sent nothing (its traces then count as failed).
 */
static bool run_parallel(const run_cfg *cfg, unsigned long jobs, tally *ty)
{
    pid_t pid[16];
    int fd[16];
    unsigned long w;
    bool ok = true;
    fflush(stdout);
    fflush(stderr);
    for (w = 0; w < jobs; w++) {
        int p[2];
        fd[w] = -1;
        pid[w] = -1;
        if (pipe(p) != 0)
            return false;
        pid[w] = fork();
        if (pid[w] < 0) {
            close(p[0]);
            close(p[1]);
            return false;
        }
        if (pid[w] == 0) { /* the worker */
            tally mine;
            size_t off = 0;
            close(p[0]);
            memset(&mine, 0, sizeof mine);
            run_range(cfg, jobs, w, &mine);
            while (off < sizeof mine) {
                ssize_t k = write(p[1], (const char *)&mine + off, sizeof mine - off);
                if (k <= 0)
                    break;
                off += (size_t)k;
            }
            close(p[1]);
            fflush(stderr);
            exit(0); /* exit, not _exit: LeakSanitizer checks the worker too */
        }
        close(p[1]);
        fd[w] = p[0];
    }
    for (w = 0; w < jobs; w++) {
        tally part;
        size_t off = 0;
        int status = 0;
        memset(&part, 0, sizeof part);
        while (off < sizeof part) {
            ssize_t k = read(fd[w], (char *)&part + off, sizeof part - off);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
        close(fd[w]);
        waitpid(pid[w], &status, 0);
        if (off != sizeof part || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "test_oracle: worker %lu died (status 0x%x); rerun with SG_ORACLE_JOBS=1\n", w, status);
            ok = false;
            continue;
        }
        tally_add(ty, &part);
    }
    return ok;
}

/* The random traces of the seed; every mismatch fails the test. */
static void test_random_traces(void)
{
    run_cfg cfg;
    unsigned long count = env_ulong("SG_ORACLE_COUNT", ORACLE_DEFAULT_COUNT);
    unsigned long jobs = env_ulong("SG_ORACLE_JOBS", ORACLE_DEFAULT_JOBS);
    const char *only = getenv("SG_ORACLE_ONLY");
    tally ty;
    struct timespec t0, t1;
    bool ok = true;

    memset(&ty, 0, sizeof ty);
    cfg.seed = env_ulong("SG_ORACLE_SEED", ORACLE_DEFAULT_SEED);
    cfg.every = env_ulong("SG_ORACLE_INFER", ORACLE_DEFAULT_INFER);
    cfg.warm = env_ulong("SG_ORACLE_WARM", 2);
    cfg.verbose = env_ulong("SG_ORACLE_VERBOSE", 0) != 0;
    cfg.slow = (double)env_ulong("SG_ORACLE_SLOW_MS", ORACLE_DEFAULT_SLOW_MS) / 1000.0;
    cfg.first = 0;
    cfg.last = count;
    if (cfg.every == 0)
        cfg.every = 1;
    if (only && *only) {
        cfg.first = env_ulong("SG_ORACLE_ONLY", 0);
        cfg.last = cfg.first + 1;
        jobs = 1;
    }
    if (jobs < 1)
        jobs = 1;
    if (jobs > 16)
        jobs = 16;
    printf("seed 0x%" PRIx64 ", traces %lu..%lu, inference on every %lu-th, %lu worker%s\n", cfg.seed, cfg.first,
           cfg.last - 1, cfg.every, jobs, jobs == 1 ? "" : "s");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (jobs == 1)
        run_range(&cfg, 1, 0, &ty);
    else
        ok = run_parallel(&cfg, jobs, &ty);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_tally(&ty, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    CHECK(ok);
    CHECK_EQ_INT(ty.mismatches, 0);
    CHECK(ty.traces > 0);
    if (cfg.last - cfg.first >= 1000) { /* a long run covers the whole language and both outcomes */
        int q;
        for (q = 0; q < SG_KIND_COUNT; q++)
            if (q != SG_INF && q != SG_TRUE && q != SG_FALSE) /* folded away by the constructors */
                CHECK_MSG(ty.kinds[q] > 0, "no checked guard used %s", sg_kind_name((sg_kind)q));
        CHECK(ty.valid > count / 20 && ty.invalid > count / 20);
    }
}

/* A handful of fixed traces whose truth is known by hand: the oracle itself must get them right. */
static void test_oracle_self(void)
{
    static const char *head =
        "{\"format\": \"shapegate-trace\", \"version\": 1, \"shape_env\": true, \"symbols\": [{\"name\": \"s0\", "
        "\"range\": [2, 64], \"hint\": 8, \"sources\": [\"L['x'].size()[0]\"]}], \"guards\": [";
    static const char *tail =
        "], \"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 8, \"source\": \"L['x'].size()[0]\", "
        "\"value\": \"s0\", \"spec\": {\"kind\": \"dim\", \"name\": \"dx\", \"min\": %d, \"max\": %d}}], "
        "\"spec\": {\"flat\": true}}";
    static const struct {
        const char *guard;
        int min, max;
        bool valid;
    } cases[] = {
        {"{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s0, 4), 0)\"}", 8, 8, true},
        {"{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s0, 4), 0)\"}", 0, 16, false},
        {"{\"origin\": \"shape\", \"expr\": \"s0 <= 30\"}", 0, 30, true},
        {"{\"origin\": \"shape\", \"expr\": \"s0 <= 30\"}", 0, 31, false},
        {"{\"origin\": \"shape\", \"expr\": \"Ne(s0, 1)\"}", 0, 64, true},      /* 0 and 1 are not analysed */
        {"{\"origin\": \"shape\", \"expr\": \"Ne(s0, 2)\"}", 0, 64, false},
        {"{\"origin\": \"shape\", \"expr\": \"Eq(Mod(64, s0 - 1), 0)\"}", 2, 64, false}, /* 64 % 3 != 0 */
        {"{\"origin\": \"shape\", \"expr\": \"(s0//(s0 - 8)) >= -100\"}", 8, 8, false},  /* undefined at 8 */
        {"", 2, 65, false},                                                            /* the traced range */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        sbuf json = {0}, why = {0};
        sg_trace *t = NULL;
        sg_error err = SG_ERROR_INIT;
        model m;
        long D[MAX_IN];
        sb_printf(&json, "%s%s", head, cases[i].guard);
        sb_printf(&json, tail, cases[i].min, cases[i].max);
        memset(&m, 0, sizeof m);
        CHECK_MSG(sg_trace_load_json(&t, json.p, json.n, &err) == 0, "case %zu: %s", i, err.msg);
        if (t && model_from_trace(&m, t, &why) == 0) {
            bool valid = !spec_fails(&m, NULL, ALL_SYMS, D);
            CHECK_MSG(valid == cases[i].valid, "case %zu: the oracle says %s", i, valid ? "valid" : "invalid");
        } else {
            CHECK_MSG(false, "case %zu: no model: %s", i, sb_str(&why));
        }
        model_dispose(&m);
        sg_trace_free(t);
        sb_free(&json);
        sb_free(&why);
    }
    /* and the shared-name / derived enumeration: d + 1 with d in [3, 5] allows exactly 4..6 */
    {
        model m;
        long D[MAX_IN] = {0};
        memset(&m, 0, sizeof m);
        m.nin = 2;
        m.in[0].kind = OD_DIM;
        m.in[0].lo = 3;
        m.in[0].hi = 5;
        m.in[1].kind = OD_DERIVED;
        m.in[1].a = 1;
        m.in[1].b = 1;
        m.in[1].lo = 3;
        m.in[1].hi = 5;
        D[0] = 4;
        D[1] = 5;
        CHECK(spec_allows(&m, NULL, D));
        D[1] = 6;
        CHECK(!spec_allows(&m, NULL, D));
        m.in[0].size = 4;
        m.in[1].size = 5;
        {
            bool pins[MAX_IN] = {true, false};
            D[0] = 4;
            D[1] = 5;
            CHECK(spec_allows(&m, pins, D)); /* dim 0 pinned, the only plain dim of its root: */
            D[1] = 6;                        /* the root is pinned with it, d + 1 follows */
            CHECK(!spec_allows(&m, pins, D));
            D[0] = 5;
            CHECK(!spec_allows(&m, pins, D));
        }
    }
}

/* One JSON trace file against the oracle, inference on. */
static void replay_file(const char *path)
{
    FILE *f;
    sbuf json = {0};
    char chunk[4096];
    size_t got;
    tally ty;
    int shown = 0;
    memset(&ty, 0, sizeof ty);
    f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    while ((got = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[got] = '\0';
        sb_printf(&json, "%s", chunk);
    }
    fclose(f);
    run_one(path, sb_str(&json), NULL, 0, true, true, false, &ty, &shown, true, 0);
    print_tally(&ty, ty.check_seconds);
    CHECK_MSG(ty.mismatches == 0, "%s: %lu mismatches", path, ty.mismatches);
    CHECK_EQ_INT(ty.traces, 1);
    sb_free(&json);
}

/* SG_ORACLE_FILE: one JSON trace, inference on. */
static void test_replay_file(void)
{
    const char *path = getenv("SG_ORACLE_FILE");
    if (path && *path)
        replay_file(path);
}

/* The traces of tests/data/oracle/: mismatches random seeds found once, kept as regressions. */
static void test_found_traces(void)
{
    char dir[1024], path[2048];
    DIR *d;
    struct dirent *e;
    size_t n = 0;
    snprintf(dir, sizeof dir, "%s/tests/data/oracle", SG_SOURCE_DIR);
    d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        replay_file(path);
        n++;
    }
    closedir(d);
    CHECK(n >= 1);
}

int main(void)
{
    if (getenv("SG_ORACLE_FILE") && *getenv("SG_ORACLE_FILE")) {
        RUN(test_replay_file);
        return test_summary();
    }
    RUN(test_oracle_self);
    RUN(test_found_traces);
    RUN(test_random_traces);
    return test_summary();
}
