/*
 * infer_rel.c - affine relations between input-dim symbols
 * (analysis/infer_ctx.h, docs/infer.md): the relations every point satisfies
 * are fitted exactly (an integer nullspace, kept in echelon form with the
 * latest symbol as pivot), and each is reported only after "F and not
 * relation" is unsat; a model of a failed proof is a new point that refines
 * the fit.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/infer_ctx.h"
#include "solver/presolve.h"

/* Divide vector v (w entries) by the gcd of its entries. */
static void normalize(sg_int *v, size_t w)
{
    sg_int g = 0;
    size_t i;
    for (i = 0; i < w; i++)
        if (v[i] != SG_INT_MIN)
            g = sg__gcd(g, v[i]);
    if (g > 1)
        for (i = 0; i < w; i++)
            v[i] /= g;
}

/* dst = a*dst - b*src, false on overflow. */
static bool combine(sg_int *dst, sg_int a, const sg_int *src, sg_int b, size_t w)
{
    size_t i;
    for (i = 0; i < w; i++) {
        sg_int t1, t2;
        if (!sg__mul(a, dst[i], &t1) || !sg__mul(b, src[i], &t2) || !sg__sub(t1, t2, &dst[i]))
            return false;
    }
    normalize(dst, w);
    return true;
}

/*
 * Restrict the basis B (nb vectors of w entries: relation coefficients, the
 * last one the constant) to the relations that hold at point `pt` (w
 * entries, the last one 1). False on overflow.
 */
bool sg__infer_basis_restrict(sg_int *B, size_t *nb, size_t w, const sg_int *pt)
{
    sg_int *d = sg__calloc(*nb + 1, sizeof *d);
    size_t i, j, piv = SIZE_MAX;
    bool ok = d != NULL;
    for (i = 0; ok && i < *nb; i++) {
        sg_int acc = 0, t;
        for (j = 0; ok && j < w; j++)
            ok = sg__mul(B[i * w + j], pt[j], &t) && sg__add(acc, t, &acc);
        d[i] = acc;
        if (ok && acc != 0 && acc != SG_INT_MIN &&
            (piv == SIZE_MAX || (acc < 0 ? -acc : acc) < (d[piv] < 0 ? -d[piv] : d[piv])))
            piv = i;
    }
    if (ok && piv != SIZE_MAX) {
        for (i = 0; ok && i < *nb; i++)
            if (i != piv && d[i] != 0)
                ok = combine(&B[i * w], d[piv], &B[piv * w], d[i], w);
        if (ok) {
            memmove(&B[piv * w], &B[(*nb - 1) * w], w * sizeof *B);
            (*nb)--;
        }
    }
    sg_free(d);
    return ok;
}

/*
 * Gauss-Jordan on the rows of R (nr x w) with pivots taken from the last
 * symbol column down to the first (the constant column w-1 never pivots).
 * pivot[i] gets the pivot column of row i, SIZE_MAX for a zero row. False
 * on overflow.
 */
bool sg__infer_echelon(sg_int *R, size_t nr, size_t w, size_t *pivot)
{
    size_t r = 0, i, col;
    for (i = 0; i < nr; i++)
        pivot[i] = SIZE_MAX;
    for (col = w - 1; col-- > 0 && r < nr;) {
        size_t best = SIZE_MAX;
        for (i = r; i < nr; i++)
            if (R[i * w + col] != 0 &&
                (best == SIZE_MAX || (R[i * w + col] < 0 ? -R[i * w + col] : R[i * w + col]) <
                                         (R[best * w + col] < 0 ? -R[best * w + col] : R[best * w + col])))
                best = i;
        if (best == SIZE_MAX)
            continue;
        if (best != r)
            for (i = 0; i < w; i++) {
                sg_int t = R[r * w + i];
                R[r * w + i] = R[best * w + i];
                R[best * w + i] = t;
            }
        for (i = 0; i < nr; i++)
            if (i != r && R[i * w + col] != 0 && !combine(&R[i * w], R[r * w + col], &R[r * w], R[i * w + col], w))
                return false;
        if (R[r * w + col] < 0)
            for (i = 0; i < w; i++)
                R[r * w + i] = -R[r * w + i];
        pivot[r++] = col;
    }
    return true;
}

/* Are the w-entry vectors a and b equal? */
static bool same_vec(const sg_int *a, const sg_int *b, size_t w)
{
    return memcmp(a, b, w * sizeof *a) == 0;
}

/* Σ c_i * sym_i + c_const as a term over the relation columns. */
static const sg_term *lin_term(ictx *x, const sg_int *row, const size_t *colk, size_t ncol)
{
    const sg_term *acc = num(x, row[ncol]);
    size_t i;
    for (i = 0; i < ncol; i++)
        if (row[i] != 0)
            acc = mk_add(x, acc, mk_mul(x, num(x, row[i]), x->vars[x->symvar[colk[i]]]));
    return acc;
}

/* sym_p = (-(Σ_{i != p} c_i s_i) - c_const) / c_p as an expression in the pool. */
const sg_expr *sg__infer_relation_expr(sg_problem *prob, const sg_int *row, const size_t *colk, size_t ncol, size_t p)
{
    sg_pool *pool = prob->pool;
    const sg_expr **terms = sg__calloc(ncol + 2, sizeof *terms), *num_e, *res = NULL;
    sg_int cp = row[p];
    bool divisible = true;
    size_t i, n = 0;
    if (!terms)
        return NULL;
    for (i = 0; i <= ncol; i++)
        if (i != p && row[i] % cp != 0)
            divisible = false;
    for (i = 0; i < ncol; i++)
        if (i != p && row[i] != 0)
            terms[n++] = sg_expr_2(pool, SG_MUL, sg_expr_int(pool, divisible ? -row[i] / cp : -row[i]),
                                   prob->syms[colk[i]].sym);
    if (row[ncol] != 0)
        terms[n++] = sg_expr_int(pool, divisible ? -row[ncol] / cp : -row[ncol]);
    num_e = n == 1 ? terms[0] : sg_expr_apply(pool, SG_ADD, terms, n);
    res = divisible ? num_e : sg_expr_2(pool, SG_FLOORDIV, num_e, sg_expr_int(pool, cp));
    sg_free(terms);
    return res;
}

/* Is row (over the columns, the constant last) = 0 on every model of F, by the presolve of
 * infer_fast (facts of F only: TRUE is Z3's UNSAT of "F and not row")? */
static bool proved_by_presolve(ictx *x, const sg_infer_fast *fast, const sg_int *row, const size_t *colk,
                               size_t ncol)
{
    size_t *nodes, j;
    bool ok;
    if (!fast->ps)
        return false;
    if (!(nodes = sg__malloc((ncol + 1) * sizeof *nodes)))
        return false;
    for (j = 0; j < ncol; j++)
        nodes[j] = x->p->ninputs + colk[j];
    ok = sg_presolve_implies_lin(fast->ps, nodes, row, ncol, row[ncol]) == SG_TRI_TRUE;
    sg_free(nodes);
    return ok;
}

/* Order of symbol indices by input dim (key), then by index. */
static int cmp_col(const void *a, const void *b, const long *key)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (key[i] != key[j])
        return key[i] < key[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* qsort order of uint64 keys, ascending. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int sg__infer_rel_columns(const sg_problem *p, const sg_inferred *out, size_t **colk_out, size_t *ncol_out,
                          sg_error *err)
{
    size_t *colk = sg__calloc(p->nsyms + 1, sizeof *colk), ncol = 0, i;
    *colk_out = NULL;
    *ncol_out = 0;
    if (!colk)
        return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
    for (i = 0; i < p->nsyms; i++)
        if (p->sym_input[i] >= 0 && !out[i].is_constant)
            colk[ncol++] = i;
    /* input order, then index: a total order, so any sort gives the same list (insertion for a
     * short list, else qsort on the distinct (input, index) keys: 10,000 symbols) */
    {
        if (ncol <= 64) {
            size_t j;
            for (i = 1; i < ncol; i++)
                for (j = i; j > 0 && cmp_col(&colk[j - 1], &colk[j], p->sym_input) > 0; j--) {
                    size_t t = colk[j];
                    colk[j] = colk[j - 1];
                    colk[j - 1] = t;
                }
        } else {
            uint64_t *key = sg__calloc(ncol + 1, sizeof *key);
            if (!key) {
                sg_free(colk);
                return sg_error_set(err, SG_ENOMEM, "out of memory while inferring");
            }
            for (i = 0; i < ncol; i++)
                key[i] = ((uint64_t)(uint32_t)p->sym_input[colk[i]] << 32) | (uint32_t)colk[i];
            qsort(key, ncol, sizeof *key, cmp_u64);
            for (i = 0; i < ncol; i++)
                colk[i] = (size_t)(uint32_t)key[i];
            sg_free(key);
        }
    }
    if (ncol > INF_REL_MAX_SYMS)
        ncol = INF_REL_MAX_SYMS;
    *colk_out = colk;
    *ncol_out = ncol;
    return 0;
}

/*
 * Affine relations among the non-constant symbols linked to input dims: the
 * relations every point satisfies are fitted exactly (integer nullspace),
 * put in echelon form with the latest symbol (input order) as pivot, and each
 * is reported only after "F and not relation" is unsat; a model of a failed
 * proof is a new point that refines the fit.
 */
int sg_infer__relations(ictx *x, sg_inferred *out, const size_t *allk, size_t nall, const sg_infer_fast *fast)
{
    sg_problem *p = x->p;
    size_t *colk = NULL, ncol = 0, w, nb, i, j, round, *pivot = NULL, nproved = 0, done_pts = 0;
    sg_int *B = NULL, *R = NULL, *aug = NULL, *proved = NULL;
    int rc = 0;
    bool overflow = false;

    /* the columns the presolve did not decide: the decided ones are independent of them */
    colk = sg__calloc(nall + 1, sizeof *colk);
    if (!colk)
        return sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
    for (i = 0; i < nall; i++)
        if (!fast->done[allk[i]])
            colk[ncol++] = allk[i];
    if (ncol < 2)
        goto cleanup;
    w = ncol + 1;
    B = sg__calloc(w * w, sizeof *B);
    R = sg__calloc(w * w, sizeof *R);
    aug = sg__calloc(w, sizeof *aug);
    pivot = sg__calloc(w, sizeof *pivot);
    proved = sg__calloc(w * w, sizeof *proved);
    if (!B || !R || !aug || !pivot || !proved) {
        rc = sg_error_set(x->err, SG_ENOMEM, "out of memory while inferring");
        goto cleanup;
    }
    nb = w;
    for (i = 0; i < w; i++)
        B[i * w + i] = 1;
    for (round = 0; round < INF_REL_ROUNDS && !overflow; round++) {
        bool failed_one = false;
        size_t nr;
        for (; done_pts < x->npts && nb > 0 && !overflow; done_pts++) {
            for (j = 0; j < ncol; j++)
                aug[j] = PT(x, done_pts)[x->symvar[colk[j]]];
            aug[ncol] = 1;
            overflow = !sg__infer_basis_restrict(B, &nb, w, aug);
        }
        if (overflow || nb == 0)
            break;
        nr = nb;
        memcpy(R, B, nb * w * sizeof *R);
        if (!sg__infer_echelon(R, nr, w, pivot)) {
            overflow = true;
            break;
        }
        for (i = 0; i < nr && !x->dead; i++) {
            size_t nfree = 0, mark = sg_q_mark(x->p);
            bool known = false;
            sg_q_answer res;
            long pt = -1;
            if (pivot[i] == SIZE_MAX)
                continue;
            for (j = 0; j < ncol; j++)
                nfree += j != pivot[i] && R[i * w + j] != 0;
            if (nfree == 0)
                continue; /* a constant: reported as such, not as a relation */
            for (j = 0; j < nproved && !known; j++)
                known = same_vec(&proved[j * w], &R[i * w], w);
            if (known)
                continue;
            if (proved_by_presolve(x, fast, &R[i * w], colk, ncol)) {
                res = SG_Q_UNSAT; /* what Z3 would answer: the presolve read only facts of F */
                if (x->stats)
                    x->stats->decided_cheaply++;
            } else {
                rc = sg_infer__query_f(x, mk_not(x, mk_eq(x, lin_term(x, &R[i * w], colk, ncol), num(x, 0))), &res,
                                       &pt);
                sg_q_release(x->p, mark);
                if (rc)
                    goto cleanup;
            }
            if (res == SG_Q_UNSAT && nproved < w) {
                memcpy(&proved[nproved++ * w], &R[i * w], w * sizeof *R);
            } else if (res == SG_Q_SAT && pt >= 0) {
                failed_one = true; /* the point joins the fit next round */
            }
        }
        if (!failed_one)
            break;
    }
    /* report: each proved row on its pivot symbol */
    for (j = 0; j < nproved; j++) {
        const sg_int *row = &proved[j * w];
        size_t pc = SIZE_MAX, c;
        for (c = ncol; c-- > 0;)
            if (row[c] != 0) {
                pc = c;
                break;
            }
        if (pc == SIZE_MAX || out[colk[pc]].equals)
            continue;
        out[colk[pc]].equals = sg__infer_relation_expr(p, row, colk, ncol, pc);
        if (!out[colk[pc]].equals) {
            const sg_error *pe = sg_pool_error(p->pool);
            rc = sg_error_set(x->err, pe ? pe->code : SG_ENOMEM, "building a relation: %s",
                              pe ? pe->msg : "out of memory");
            goto cleanup;
        }
    }
cleanup:
    sg_free(colk);
    sg_free(B);
    sg_free(R);
    sg_free(aug);
    sg_free(pivot);
    sg_free(proved);
    return rc;
}
