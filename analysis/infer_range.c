/*
 * infer_range.c - the range of each symbol (analysis/infer_ctx.h,
 * docs/infer.md): its least and greatest valid values by model-guided
 * bisection from the traced bounds, exact when attained and the complement
 * proved empty; an unbounded side is proved by a ray of valid points.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_ctx.h"

/* cost of value v when searching the minimum (dir < 0) or the maximum (dir > 0): minimised. */
static sg_int cost_of(int dir, sg_int v) { return dir < 0 ? v : -v; }

/* cost(s) <= target, as a term. */
static const sg_term *cost_le(ictx *x, const sg_term *s, int dir, sg_int target)
{
    return dir < 0 ? mk_le(x, s, num(x, target)) : mk_ge(x, s, num(x, -target));
}

/*
 * Prove that the points P0 + t * period * (P2 - P1), t = 0, 1, 2, ... are all
 * valid: one unsat query of "t >= 0 and not F[x := P0 + t*r]". *proved on
 * unsat only.
 */
static int ray_check(ictx *x, size_t p0, size_t p1, size_t p2, bool *proved)
{
    size_t mark = sg_q_mark(x->p), j;
    const sg_term **to = NULL, *t, *G, *hard[2];
    sg_q_answer res;
    int rc = 0;

    *proved = false;
    if (x->dead)
        return 0;
    to = sg__calloc(x->nvars + 1, sizeof *to);
    if (!to)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    t = fresh_int(x, "ray!t");
    for (j = 0; j < x->nvars; j++) {
        sg_int d, r;
        if (!sg__sub(PT(x, p2)[j], PT(x, p1)[j], &d) || !sg__mul(d, x->period, &r))
            goto cleanup; /* too far apart to write down: no proof */
        to[j] = r == 0 ? num(x, PT(x, p0)[j]) : mk_add(x, num(x, PT(x, p0)[j]), mk_mul(x, num(x, r), t));
    }
    if (x->failed) {
        rc = failure(x);
        goto cleanup;
    }
    G = substitute(x, scoped_f(x), x->vars, to, x->nvars);
    hard[0] = mk_ge(x, t, num(x, 0));
    hard[1] = mk_not(x, G);
    if ((rc = sg_infer__query(x, hard, 2, NULL, 0, &res, NULL, NULL, NULL)))
        goto cleanup;
    *proved = res == SG_Q_UNSAT;
cleanup:
    sg_free(to);
    sg_q_release(x->p, mark);
    return rc;
}

/*
 * A valid point strictly better than point p1 for symbol variable `sv` in
 * direction `dir` that keeps as many other variables as possible at their
 * values in p1: alias classes (variables equated by a var = var conjunct)
 * are held or let go together; while the query is unsat, one class named by
 * the unsat core is let go, INF_STICKY_ROUNDS rounds at most. *out = -1 when
 * none was found.
 */
static int sticky_point(ictx *x, size_t sv, int dir, size_t p1, long *out)
{
    size_t mark = sg_q_mark(x->p), j, round, nh, na;
    const sg_term **lits = NULL, **hard = NULL, **as = NULL;
    size_t *asv = NULL;
    bool *loose = NULL;
    int rc = 0;

    *out = -1;
    if (!SG_CALLOC_ALL(SG_SLOT(lits, x->nvars + 1), SG_SLOT(hard, x->nvars + 3), SG_SLOT(as, x->nvars + 1),
                       SG_SLOT(asv, x->nvars + 1), SG_SLOT(loose, x->nvars + 1))) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    loose[uf_find(x->arep, sv)] = true;
    for (j = 0; j < x->nvars; j++) {
        size_t r = uf_find(x->arep, j);
        if (!loose[r] && !lits[r] && in_scope(x, j))
            lits[r] = fresh_bool(x, "stay");
    }
    for (round = 0; round < INF_STICKY_ROUNDS && !x->dead; round++) {
        size_t *core = NULL, ncore = 0;
        sg_q_answer res;
        nh = na = 0;
        hard[nh++] = scoped_f(x);
        hard[nh++] = cost_le(x, x->vars[sv], dir, cost_of(dir, PT(x, p1)[sv]) - 1);
        for (j = 0; j < x->nvars; j++) {
            size_t r = uf_find(x->arep, j);
            if (loose[r] || !in_scope(x, j))
                continue;
            hard[nh++] = mk_implies(x, lits[r], mk_eq(x, x->vars[j], num(x, PT(x, p1)[j])));
            if (r == j) {
                asv[na] = j;
                as[na++] = lits[j];
            }
        }
        if ((rc = sg_infer__query(x, hard, nh, as, na, &res, out, &core, &ncore)))
            goto cleanup;
        if (res != SG_Q_UNSAT || ncore == 0) {
            sg_free(core);
            break; /* a point (or -1: unknown, not kept, or nothing better at all) */
        }
        loose[asv[core[0]]] = true;
        sg_free(core);
    }
cleanup:
    sg_free(lits);
    sg_free(hard);
    sg_free(as);
    sg_free(asv);
    sg_free(loose);
    sg_q_release(x->p, mark);
    return rc;
}

/* The finite traced bound of symbol k on side `dir`, when a RANGE constraint states it. */
bool sg_infer__traced_bound(const ictx *x, size_t k, int dir, sg_int *v)
{
    const sg_symbol_info *si = &x->p->syms[k];
    sg_bound b = dir < 0 ? si->lo : si->hi;
    if (b.inf || !x->ranged[k])
        return false;
    *v = b.v;
    return true;
}

/* The steps of sg_infer__extreme(). */
enum { STEP_HINT, STEP_TIGHT, STEP_NEAR, STEP_BISECT, STEP_AWAY };

/*
 * The minimum (dir < 0) or maximum (dir > 0) of symbol k over the valid
 * points. Works on cost = dir < 0 ? s : -s, minimised: `lbc` is a proved lower
 * bound of the cost, `bestc` the least cost attained by a point. Queries
 * "cost <= target", in steps:
 *   HINT   the traced bound itself (often attained);
 *   TIGHT  one below the best seen (often unsat: the best is the optimum);
 *   NEAR   galloping up from the proved bound, first by the period of the
 *          guards' divisors (the optimum is often the last multiple inside
 *          the traced range), doubling on each unsat;
 *   BISECT halving [lbc, bestc) until they meet (exact);
 *   AWAY   with no proved bound: galloping down from the best by 1, 4, 16,
 *          ..., trying after each sat to prove a ray of valid points along
 *          which the cost decreases without end (exact, infinite); an unsat
 *          answer gives a bound and BISECT follows.
 * Stops inexact on unknown or past INF_GALLOP_LIMIT: the proved bound, or
 * infinity.
 */
int sg_infer__extreme(ictx *x, size_t k, int dir, sg_bound *out, bool *exact)
{
    size_t sv = x->symvar[k], i, best = 0, mark = sg_q_mark(x->p);
    sg_int lbc = 0, bestc, away = 1, near = 0, hint = 0;
    bool lb_known = false;
    int step = STEP_TIGHT;
    unsigned rays = 0;
    int rc = 0;

    *exact = false;
    if (sg_infer__traced_bound(x, k, dir, &hint)) {
        lb_known = true;
        lbc = cost_of(dir, hint);
        step = STEP_HINT;
        near = x->period > 1 ? x->period : 2;
    }
    bestc = cost_of(dir, PT(x, 0)[sv]);
    for (i = 1; i < x->npts; i++)
        if (cost_of(dir, PT(x, i)[sv]) < bestc) {
            bestc = cost_of(dir, PT(x, i)[sv]);
            best = i;
        }
    while (!(lb_known && lbc >= bestc)) {
        sg_int target;
        sg_q_answer res;
        long pt = -1;
        if (!lb_known)
            step = STEP_AWAY;
        switch (step) {
        case STEP_HINT: target = lbc; break;
        case STEP_TIGHT: target = bestc - 1; break;
        case STEP_NEAR: target = lbc + near - 1 < bestc - 1 ? lbc + near - 1 : bestc - 1; break;
        case STEP_BISECT: target = lbc + (bestc - 1 - lbc) / 2; break;
        default:
            if (away > INF_GALLOP_LIMIT)
                goto finish;
            target = bestc - away;
            break;
        }
        rc = sg_infer__query_f(x, cost_le(x, x->vars[sv], dir, target), &res, &pt);
        sg_q_release(x->p, mark);
        if (rc)
            return rc;
        if (res == SG_Q_UNSAT) {
            lbc = target + 1;
            lb_known = true;
            if (step == STEP_HINT || step == STEP_TIGHT)
                step = near ? step + 1 : STEP_BISECT;
            else if (step == STEP_NEAR)
                near = near > INF_GALLOP_LIMIT ? 0 : near * 2, step = near ? STEP_NEAR : STEP_BISECT;
            else if (step == STEP_AWAY)
                step = STEP_BISECT;
            continue;
        }
        if (res != SG_Q_SAT || pt < 0)
            break;
        if (step == STEP_AWAY && rays < INF_RAY_TRIES) {
            /* from the new point on, in the direction it moved; the first and fourth
               time also along a point that keeps the other variables still */
            bool proved = false;
            long p3 = -1;
            rays++;
            if ((rc = ray_check(x, (size_t)pt, best, (size_t)pt, &proved)))
                return rc;
            if (!proved && (rays == 1 || rays == 4) && (rc = sticky_point(x, sv, dir, (size_t)pt, &p3)))
                return rc;
            if (!proved && p3 >= 0 && (rc = ray_check(x, (size_t)p3, (size_t)pt, (size_t)p3, &proved)))
                return rc;
            if (proved) {
                out->inf = dir;
                out->v = 0;
                *exact = true;
                return 0;
            }
        }
        if (step == STEP_AWAY)
            away *= 4;
        else if (step == STEP_HINT)
            step = STEP_TIGHT;
        else if (step == STEP_TIGHT)
            step = near ? STEP_NEAR : STEP_BISECT;
        else
            step = STEP_BISECT;
        bestc = cost_of(dir, PT(x, pt)[sv]);
        best = (size_t)pt;
    }
finish:
    sg_q_extreme_end(dir, lb_known, lbc, bestc, out, exact);
    return 0;
}
