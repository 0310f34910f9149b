/*
 * test_probe.c - phase 2's one-dim counterexamples (analysis/check_probe.c) on
 * small product traces that brute force decides.
 *
 * The traces are prod300's model (bench/traces/prod300) with G groups: g (A, B),
 * us[i] (n_i) reshaped to (A, B, -1), ws[i] (p_i, q_i) with n_i == 4*p_i*q_i:
 * per group the 13 guards torch 2.14 records there (n_i % (A*B) == 0, ...,
 * p_i*q_i == n_i // 4). The probe runs on them with its size threshold
 * lowered (sg_check__set_probe_min_dims), and the report is judged here,
 * independently of the library's evaluator: the guards are computed in plain
 * C with Python's floor division and modulo, a division by zero making a
 * guard fail (it is not defined).
 *
 *   - every dim is decided, none proved (every one of them can be moved to a
 *     failing shape), the verdict is "violations";
 *   - every counterexample is a shape of the spec (the dims refuted in
 *     earlier rounds at their example sizes) that fails some guard;
 *   - every core is a conflict: no assignment meets its guards, its spec
 *     items and the values of its round's dims (the earlier rounds' dims
 *     pinned), each other variable over a box around its range; and it is
 *     minimal: dropping any one member (a guard, a spec item, a value) leaves
 *     a set some point of that box meets;
 *   - the same trace without the probe (Z3's path, small enough here, its
 *     cores not minimised) reaches the same statuses.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/check.h"
#include "trace/trace.h"
#include "oracle_model.h"
#include "test.h"

#define MAXG 4               /* groups */
#define NG 13                /* guards per group */
#define NDIM (2 + 3 * MAXG)  /* named dims: A, B, then n_i, p_i, q_i per group */
#define BOX_LO (-12)         /* the box a variable without a kept spec item ranges over */
#define BOX_HI 260

/* ---- the model: dims, guards in plain C --------------------------------------------------- */

typedef struct prod {
    int groups;
    long lo[NDIM], hi[NDIM]; /* spec: Dim(min=lo, max=hi), analysed from 2 */
    long ex[NDIM];           /* example sizes */
} prod;

/* Python's // and %: false when b == 0 (undefined). */
static bool py_div(long a, long b, long *q)
{
    long d;
    if (b == 0)
        return false;
    d = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        d--;
    *q = d;
    return true;
}

static bool py_mod(long a, long b, long *r)
{
    long q;
    if (!py_div(a, b, &q))
        return false;
    *r = a - q * b;
    return true;
}

/* Guard k of group i over the values v[] (A = v[0], B = v[1]): holds (defined and true). */
static bool pguard_holds(const long *v, int i, int k)
{
    long A = v[0], B = v[1], n = v[2 + 3 * i], p = v[3 + 3 * i], q = v[4 + 3 * i], x, y, z;
    switch (k) {
    case 0: return py_mod(n, A * B, &x) && x == 0;
    case 1: return py_div(n, A * B, &x) && n == A * B * x;
    case 2: return A != n;
    case 3: return py_mod(n, A, &x) && x == 0;
    case 4: return py_div(n, A, &x) && B != x;
    case 5: return py_div(n, A, &x) && py_mod(x, B, &y) && y == 0;
    case 6: return py_div(n, A * B, &x) && A * B * x >= 2;
    case 7: return py_div(n, A * B, &x) && x != 1;
    case 8: return py_div(n, A, &x) && py_div(n, A * B, &y) && x == B * y;
    case 9: return py_mod(n, 4, &x) && x == 0;
    case 10: return py_div(n, 4, &x) && 4 * x >= 2;
    case 11: return py_div(n, 4, &x) && x != 1;
    case 12: return py_div(n, 4, &z) && p * q == z;
    default: return false;
    }
}

/* The guard texts torch records, over s0 = A, s1 = B, s(2+3i) = n_i, s(3+3i) = p_i, s(4+3i) = q_i. */
static void guard_text(char *buf, size_t cap, int i, int k)
{
    int n = 2 + 3 * i, p = 3 + 3 * i, q = 4 + 3 * i;
    switch (k) {
    case 0: snprintf(buf, cap, "Eq(Mod(s%d, s0*s1), 0)", n); break;
    case 1: snprintf(buf, cap, "Eq(s%d, s0*s1*((s%d//(s0*s1))))", n, n); break;
    case 2: snprintf(buf, cap, "Ne(s0, s%d)", n); break;
    case 3: snprintf(buf, cap, "Eq(Mod(s%d, s0), 0)", n); break;
    case 4: snprintf(buf, cap, "Ne(s1, (s%d//s0))", n); break;
    case 5: snprintf(buf, cap, "Eq(Mod((s%d//s0), s1), 0)", n); break;
    case 6: snprintf(buf, cap, "s0*s1*((s%d//(s0*s1))) >= 2", n); break;
    case 7: snprintf(buf, cap, "Ne((s%d//(s0*s1)), 1)", n); break;
    case 8: snprintf(buf, cap, "Eq((s%d//s0), s1*((s%d//(s0*s1))))", n, n); break;
    case 9: snprintf(buf, cap, "Eq(Mod(s%d, 4), 0)", n); break;
    case 10: snprintf(buf, cap, "4*((s%d//4)) >= 2", n); break;
    case 11: snprintf(buf, cap, "Ne((s%d//4), 1)", n); break;
    default: snprintf(buf, cap, "Eq(s%d*s%d, (s%d//4))", p, q, n); break;
    }
}

static const char *dim_name(int d, char *buf, size_t cap)
{
    if (d < 2)
        snprintf(buf, cap, "%s", d ? "B" : "A");
    else
        snprintf(buf, cap, "%c%d", "npq"[(d - 2) % 3], (d - 2) / 3);
    return buf;
}

/* The trace as single-file JSON (docs/trace-format.md), inputs in the order A, B, n_i, p_i, q_i. */

/* Dim d of the model's inputs: g's two dims, then per group u_i (n_i), w_i (p_i, q_i); its pytree
 * path into path, its index in its tensor returned. */
static int dim_path(char *path, size_t cap, int d)
{
    if (d < 2) {
        snprintf(path, cap, "['g']");
        return d;
    }
    snprintf(path, cap, "['%s'][%d]", (d - 2) % 3 ? "ws" : "us", (d - 2) / 3);
    return (d - 2) % 3 == 2 ? 1 : 0;
}
static void trace_json(const prod *m, sbuf *out)
{
    int d, i, k, nd = 2 + 3 * m->groups;
    char name[16], path[32], txt[128];
    sb_printf(out, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"\", \"strict\": false, "
                   "\"shape_env\": true,\n\"symbols\": [\n");
    for (d = 0; d < nd; d++) {
        int dim = dim_path(path, sizeof path, d);
        sb_printf(out,
                  "  {\"name\": \"s%d\", \"range\": [2, %ld], \"hint\": %ld, \"unbacked\": false, \"size_like\": false, "
                  "\"replacement\": null, \"sources\": [\"L%s.size()[%d]\"]}%s\n",
                  d, m->hi[d], m->ex[d], path, dim, d + 1 < nd ? "," : "");
    }
    sb_printf(out, "],\n\"guards\": [\n");
    for (i = 0; i < m->groups; i++)
        for (k = 0; k < NG; k++) {
            guard_text(txt, sizeof txt, i, k);
            sb_printf(out, "  {\"origin\": \"shape\", \"expr\": \"%s\"}%s\n", txt,
                      i + 1 < m->groups || k + 1 < NG ? "," : "");
        }
    sb_printf(out, "],\n\"inputs\": [\n");
    for (d = 0; d < nd; d++) {
        int dim = dim_path(path, sizeof path, d);
        sb_printf(out,
                  "  {\"path\": \"%s\", \"dim\": %d, \"size\": %ld, \"source\": \"L%s.size()[%d]\", \"traced_source\": "
                  "\"L%s.size()[%d]\", \"value\": \"s%d\", \"spec\": {\"kind\": \"dim\", \"name\": \"%s\", \"min\": %ld, "
                  "\"max\": %ld}}%s\n",
                  path, dim, m->ex[d], path, dim, path, dim, d, dim_name(d, name, sizeof name), m->lo[d], m->hi[d],
                  d + 1 < nd ? "," : "");
    }
    sb_printf(out, "],\n\"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": null}\n}\n");
}

/* G groups: A, B in [0, ab], n in [0, nmax], p, q in [0, pq]; examples A = 2, B = 3, p_i = 2 + i,
 * q_i = 3, n_i = 4*p_i*q_i (a multiple of A*B = 6: every guard holds there). */
static void make_prod(prod *m, int groups, long ab, long nmax, long pq)
{
    int i;
    memset(m, 0, sizeof *m);
    m->groups = groups;
    m->hi[0] = m->hi[1] = ab;
    m->ex[0] = 2;
    m->ex[1] = 3;
    for (i = 0; i < groups; i++) {
        m->hi[2 + 3 * i] = nmax;
        m->hi[3 + 3 * i] = m->hi[4 + 3 * i] = pq;
        m->ex[3 + 3 * i] = 2 + i;
        m->ex[4 + 3 * i] = 3;
        m->ex[2 + 3 * i] = 4 * m->ex[3 + 3 * i] * m->ex[4 + 3 * i];
    }
}

/* ---- judging a report ------------------------------------------------------------------- */

/* The variables a core's search ranges over: fixed[d] at val[d], else over [lo[d], hi[d]]. */
typedef struct box {
    int nd;
    bool fixed[NDIM];
    long val[NDIM], lo[NDIM], hi[NDIM];
    bool guard[MAXG][NG]; /* the guards the set holds */
    bool used[NDIM];      /* variables the guards mention (the others do not matter) */
} box;

static void mark_used(box *b, int i, int k)
{
    b->used[0] = b->used[1] = b->used[2 + 3 * i] = true;
    if (k == 12)
        b->used[3 + 3 * i] = b->used[4 + 3 * i] = true;
    (void)k;
}

/* Does some point of the box meet every guard of the set? (Recursion over the used variables.) */
static bool box_meets(const box *b, const prod *m, long *v, int d)
{
    int i, k;
    if (d == b->nd) {
        for (i = 0; i < m->groups; i++)
            for (k = 0; k < NG; k++)
                if (b->guard[i][k] && !pguard_holds(v, i, k))
                    return false;
        return true;
    }
    if (!b->used[d]) {
        v[d] = m->ex[d];
        return box_meets(b, m, v, d + 1);
    }
    if (b->fixed[d]) {
        v[d] = b->val[d];
        return box_meets(b, m, v, d + 1);
    }
    for (v[d] = b->lo[d]; v[d] <= b->hi[d]; v[d]++)
        if (box_meets(b, m, v, d + 1))
            return true;
    return false;
}

/* The statuses of a report, as a string ("rrrp..."). */
static void statuses(const sg_report *r, char *out)
{
    size_t d;
    for (d = 0; d < r->ndims; d++)
        out[d] = r->dims[d].status == SG_DIM_REFUTED ? 'r' : r->dims[d].status == SG_DIM_PROVED ? 'p' : 'u';
    out[r->ndims] = '\0';
}

/* Judge every violation of `r` against the model (the header's list). */
static void judge(const prod *m, const sg_trace *t, const sg_report *r)
{
    int nd = 2 + 3 * m->groups, d;
    bool pinned[NDIM] = {false}, round[NDIM];
    size_t a = 0, b, c, nin = 0;

    (void)sg_trace_inputs(t, &nin);
    CHECK_EQ_INT(nin, nd);
    CHECK_EQ_INT(r->verdict, SG_VERDICT_VIOLATIONS);
    for (d = 0; d < nd && d < (int)r->ndims; d++)
        CHECK_MSG(r->dims[d].status == SG_DIM_REFUTED, "dim %d status %d (%s)", d, r->dims[d].status,
                  r->dims[d].reason);
    while (a < r->nviolations) { /* one round: the violations that share a counterexample */
        const sg_violation *v = &r->violations[a];
        long cex[NDIM];
        bool fails = false;
        int i, k;
        CHECK(v->kind == SG_VIOL_GUARD && v->has_counterexample);
        if (v->kind != SG_VIOL_GUARD || !v->has_counterexample)
            return;
        for (d = 0; d < nd; d++)
            cex[d] = (long)v->counterexample[d];
        memset(round, 0, sizeof round);
        for (b = a; b < r->nviolations && r->violations[b].has_counterexample &&
                    memcmp(r->violations[b].counterexample, v->counterexample, nd * sizeof *v->counterexample) == 0;
             b++)
            round[r->violations[b].input] = true;
        /* the counterexample: a shape of the spec, earlier rounds pinned, that fails a guard */
        for (d = 0; d < nd; d++) {
            CHECK_MSG(cex[d] >= (m->lo[d] > 2 ? m->lo[d] : 2) && cex[d] <= m->hi[d], "%s: dim %d = %ld outside its spec",
                      v->dim, d, cex[d]);
            CHECK_MSG(!pinned[d] || cex[d] == m->ex[d], "%s: pinned dim %d moved to %ld", v->dim, d, cex[d]);
        }
        for (i = 0; i < m->groups; i++)
            for (k = 0; k < NG; k++)
                fails |= !pguard_holds(cex, i, k);
        CHECK_MSG(fails, "%s: the counterexample passes every guard", v->dim);
        /* each violation's core: a conflict, and a minimal one */
        for (c = a; c < b; c++) {
            const sg_violation *w = &r->violations[c];
            box bx;
            long pt[NDIM];
            size_t j;
            int members = 0, drop;

            memset(&bx, 0, sizeof bx);
            bx.nd = nd;
            for (j = 0; j < w->ncore; j++) {
                const sg_core_item *it = &w->core[j];
                if (it->kind == SG_CORE_GUARD) {
                    CHECK(it->index < (size_t)(m->groups * NG));
                    bx.guard[it->index / NG][it->index % NG] = true;
                    mark_used(&bx, (int)(it->index / NG), (int)(it->index % NG));
                } else
                    CHECK_MSG(it->kind == SG_CORE_SPEC, "%s: core item of kind %d", w->dim, it->kind);
            }
            /* members: the values of the round's dims, the spec items of the other dims, the
             * guards; drop = -1 judges the whole set, then each member is left out in turn */
            {
                int kind[NDIM + MAXG * NG], idx[NDIM + MAXG * NG], g;
                bool spec[NDIM] = {false};
                for (j = 0; j < w->ncore; j++)
                    if (w->core[j].kind == SG_CORE_SPEC && w->core[j].index < (size_t)nd)
                        spec[w->core[j].index] = true;
                for (d = 0; d < nd; d++)
                    if (round[d] || spec[d]) {
                        kind[members] = round[d] ? 0 : 1;
                        idx[members++] = d;
                    }
                for (g = 0; g < m->groups * NG; g++)
                    if (bx.guard[g / NG][g % NG]) {
                        kind[members] = 2;
                        idx[members++] = g;
                    }
                for (drop = -1; drop < members; drop++) {
                    box x = bx;
                    int q;
                    for (d = 0; d < nd; d++) {
                        /* a round dim's own spec item is printed whether or not the core kept it */
                        bool sp = spec[d] && (!round[d] || (size_t)d != w->input);
                        x.fixed[d] = pinned[d] || round[d];
                        x.val[d] = pinned[d] ? m->ex[d] : cex[d];
                        x.lo[d] = sp ? (m->lo[d] > 2 ? m->lo[d] : 2) : BOX_LO;
                        x.hi[d] = sp ? m->hi[d] : BOX_HI;
                    }
                    if (drop >= 0) {
                        q = idx[drop];
                        if (kind[drop] == 0)
                            x.fixed[q] = false;
                        else if (kind[drop] == 1) {
                            x.lo[q] = BOX_LO;
                            x.hi[q] = BOX_HI;
                        } else
                            x.guard[q / NG][q % NG] = false;
                    }
                    if (drop == -1)
                        CHECK_MSG(!box_meets(&x, m, pt, 0), "%s: its core admits a shape", w->dim);
                    else
                        CHECK_MSG(box_meets(&x, m, pt, 0), "%s: its core less member %d (kind %d, %d) still conflicts",
                                  w->dim, drop, kind[drop], idx[drop]);
                }
            }
        }
        for (d = 0; d < nd; d++)
            pinned[d] |= round[d];
        a = b;
    }
}

/* Check the trace of `m` with the probe on (threshold 1) and off, and judge both. */
static void run_prod(const prod *m, bool infer)
{
    sbuf js = {0};
    sg_trace *t = NULL;
    sg_report *r1 = NULL, *r2 = NULL;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    char st1[NDIM + 1], st2[NDIM + 1];
    int rc;

    trace_json(m, &js);
    rc = sg_trace_load_json(&t, sb_str(&js), js.n, &err);
    CHECK_MSG(rc == 0, "load: %s", err.msg);
    if (rc)
        goto cleanup;
    opts.infer = infer;
    opts.fixes = opts.torch_fixes = opts.torch_message = false;
    sg_check__set_probe_min_dims(1);
    rc = sg_check(&r1, t, &opts, &err);
    sg_check__set_probe_min_dims(0);
    CHECK_MSG(rc == 0, "check: %s", err.msg);
    if (rc)
        goto cleanup;
    judge(m, t, r1);
    sg_check__set_probe_min_dims((size_t)-1); /* Z3's path; its cores as Z3 gives them (the minimisation
                                                * is 25 s of Z3 here): the statuses are compared */
    opts.minimize_cores = false;
    rc = sg_check(&r2, t, &opts, &err);
    sg_check__set_probe_min_dims(0);
    CHECK_MSG(rc == 0, "check without the probe: %s", err.msg);
    if (rc)
        goto cleanup;
    statuses(r1, st1);
    statuses(r2, st2);
    CHECK_EQ_STR(st1, st2);
cleanup:
    sg_report_free(r1);
    sg_report_free(r2);
    sg_trace_free(t);
    sb_free(&js);
}

/* 3 groups, A, B in [0, 6], n in [0, 200], p, q in [0, 8]: the brief's small case. */
static void test_three_groups(void)
{
    prod m;
    make_prod(&m, 3, 6, 200, 8);
    run_prod(&m, false);
}

/* 2 groups, wider hub ranges; inference on (it must not change what is decided). */
static void test_two_groups_infer(void)
{
    prod m;
    make_prod(&m, 2, 12, 120, 6);
    run_prod(&m, true);
}

/* The default threshold leaves a small trace to Z3: the same statuses, no probe needed. */
static void test_threshold(void)
{
    CHECK_EQ_INT(sg_check__probe_min_dims(), 32);
    sg_check__set_probe_min_dims(5);
    CHECK_EQ_INT(sg_check__probe_min_dims(), 5);
    sg_check__set_probe_min_dims(0);
    CHECK_EQ_INT(sg_check__probe_min_dims(), 32);
}

int main(void)
{
    RUN(test_threshold);
    RUN(test_three_groups);
    RUN(test_two_groups_infer);
    return test_summary();
}
