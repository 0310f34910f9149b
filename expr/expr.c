/*
 * expr.c - the expression pool: hash-consed DAG nodes, the smart constructors
 * that normalise as sympy does on construction, and inspection.
 *
 * Invariants kept by every constructor:
 *   - one node per structure: (kind, payload, argument pointers) is unique in a pool;
 *   - arguments are in canonical order for commutative kinds (Add: terms sorted,
 *     constant last; Mul: coefficient first, factors sorted; And/Or/Max/Min sorted);
 *   - no infinity below the root: int_oo is folded away or rejected;
 *   - depth <= SG_EXPR_MAX_DEPTH, so every recursive walk is bounded.
 */
#include <stdlib.h>
#include <string.h>

#include "expr/expr_impl.h"
#include "expr/num.h"

/* ---- Pool ------------------------------------------------------------------- */

int sg_pool_overlay_new(sg_pool **out, const sg_pool *parent, sg_error *err)
{
    int rc = sg_pool_new(out, err);
    if (rc == 0 && parent) {
        (*out)->parent = parent;
        (*out)->base = sg_pool_size(parent);
        (*out)->sym_base = sg_pool_nsymbols(parent);
    }
    return rc;
}

int sg_pool_new(sg_pool **out, sg_error *err)
{
    sg_pool *p = sg__calloc(1, sizeof *p);
    *out = NULL;
    if (!p)
        return sg_error_set(err, SG_ENOMEM, "out of memory creating an expression pool");
    *out = p;
    return 0;
}

void sg_pool_free(sg_pool *p)
{
    if (!p)
        return;
    sg_arena_dispose(&p->arena);
    SG_FREE_ALL(p->table, p->syms, p->scratch_stamp, p->scratch_val);
    sg_free(p);
}

const sg_error *sg_pool_error(const sg_pool *p) { return p->error.code ? &p->error : NULL; }

void sg_pool_clear_error(sg_pool *p) { sg_error_clear(&p->error); }

size_t sg_pool_size(const sg_pool *p) { return p->base + p->count; }

size_t sg_pool_nsymbols(const sg_pool *p) { return p->sym_base + p->nsyms; }

const sg_expr *sg_pool_symbol(const sg_pool *p, size_t i)
{
    if (i < p->sym_base)
        return sg_pool_symbol(p->parent, i);
    i -= p->sym_base;
    return i < p->nsyms ? p->syms[i] : NULL;
}

const sg_pool *sg_pool_parent(const sg_pool *p) { return p->parent; }

/* Record the first failure; always returns NULL for `return fail(...)`. */
static const sg_expr *fail(sg_pool *p, int code, const char *fmt, ...) SG_PRINTF(3, 4);
static const sg_expr *fail(sg_pool *p, int code, const char *fmt, ...)
{
    va_list ap;
    if (p->error.code)
        return NULL;
    p->error.code = code;
    p->error.col = 0;
    va_start(ap, fmt);
    vsnprintf(p->error.msg, sizeof p->error.msg, fmt, ap);
    va_end(ap);
    return NULL;
}

/* ---- Hash-consing ------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    while (n--)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

/* The node being looked up: everything but id, depth and flags. */
typedef struct probe {
    sg_kind kind;
    sg_sort sort;
    sg_int a, b;        /* INT: a; RAT: a/b; INF: a = sign, b = integer flag */
    const char *name;   /* SYM */
    size_t name_len;
    const sg_expr *const *args;
    size_t nargs;
} probe;

static uint64_t probe_hash(const probe *q)
{
    uint64_t h = mix((uint64_t)q->sort, (uint64_t)q->kind);
    size_t i;
    h = mix(h, (uint64_t)q->a);
    h = mix(h, (uint64_t)(q->a >> 64));
    h = mix(h, (uint64_t)q->b);
    h = mix(h, (uint64_t)(q->b >> 64));
    if (q->name)
        h = mix(h, hash_bytes(q->name, q->name_len));
    for (i = 0; i < q->nargs; i++)
        h = mix(h, q->args[i]->id);
    return h;
}

static bool probe_matches(const sg_expr *e, const probe *q, uint64_t h)
{
    if (e->hash != h || e->kind != q->kind || e->sort != q->sort || e->nargs != q->nargs)
        return false;
    switch (q->kind) {
    case SG_INT: return e->u.ival == q->a;
    case SG_RAT: return e->u.rat.num == q->a && e->u.rat.den == q->b;
    case SG_INF: return e->u.inf.sign == (int)q->a && e->u.inf.integer == (int)q->b;
    case SG_SYM: return strlen(e->u.sym.name) == q->name_len && !memcmp(e->u.sym.name, q->name, q->name_len);
    default: return q->nargs == 0 || !memcmp(e->args, q->args, q->nargs * sizeof *q->args);
    }
}

static int table_insert(sg_pool *p, sg_expr *e)
{
    size_t i;
    if ((p->count + 1) * 2 > p->table_cap) {
        size_t ncap = p->table_cap ? p->table_cap * 2 : 1024, k;
        sg_expr **nt = sg__calloc(ncap, sizeof *nt);
        if (!nt)
            return SG_ENOMEM;
        for (k = 0; k < p->table_cap; k++) {
            sg_expr *x = p->table[k];
            if (!x)
                continue;
            for (i = x->hash & (ncap - 1); nt[i]; i = (i + 1) & (ncap - 1))
                ;
            nt[i] = x;
        }
        sg_free(p->table);
        p->table = nt;
        p->table_cap = ncap;
    }
    for (i = e->hash & (p->table_cap - 1); p->table[i]; i = (i + 1) & (p->table_cap - 1))
        ;
    p->table[i] = e;
    return 0;
}

/* The node described by `q` (hash `h`) in `p` or its parent chain, or NULL. Reads only. */
static sg_expr *lookup(const sg_pool *p, const probe *q, uint64_t h)
{
    size_t i;
    for (; p; p = p->parent) {
        if (!p->table_cap)
            continue;
        for (i = h & (p->table_cap - 1); p->table[i]; i = (i + 1) & (p->table_cap - 1))
            if (probe_matches(p->table[i], q, h))
                return p->table[i];
    }
    return NULL;
}

/* Find or create the node described by `q`. */
static const sg_expr *intern(sg_pool *p, const probe *q)
{
    uint64_t h = probe_hash(q);
    uint32_t depth = 0;
    bool has_sym = q->kind == SG_SYM;
    sg_expr *e;
    size_t i;

    if ((e = lookup(p, q, h)) != NULL)
        return e;
    for (i = 0; i < q->nargs; i++) {
        if (q->args[i]->depth > depth)
            depth = q->args[i]->depth;
        has_sym |= q->args[i]->has_sym;
    }
    if (depth + 1 > SG_EXPR_MAX_DEPTH)
        return fail(p, SG_ELIMIT, "expression nested deeper than %d levels", SG_EXPR_MAX_DEPTH);
    if (p->base + p->count >= UINT32_MAX - 1)
        return fail(p, SG_ELIMIT, "too many distinct expressions in one pool");
    if (q->kind == SG_SYM &&
        sg__grow((void **)&p->syms, &p->syms_cap, p->nsyms + 1, sizeof *p->syms))
        return fail(p, SG_ENOMEM, "out of memory building an expression");
    e = sg_arena_alloc(&p->arena, sizeof *e + q->nargs * sizeof(sg_expr *));
    if (!e)
        return fail(p, SG_ENOMEM, "out of memory building an expression");
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)q->kind;
    e->sort = (uint8_t)q->sort;
    e->has_sym = has_sym;
    e->nargs = (uint32_t)q->nargs;
    e->depth = depth + 1;
    e->hash = h;
    e->id = (uint32_t)(p->base + p->count);
    e->sym_index = UINT32_MAX;
    switch (q->kind) {
    case SG_INT: e->u.ival = q->a; break;
    case SG_RAT: e->u.rat.num = q->a; e->u.rat.den = q->b; break;
    case SG_INF: e->u.inf.sign = (int)q->a; e->u.inf.integer = (int)q->b; break;
    case SG_SYM: {
        char *name = sg_arena_alloc(&p->arena, q->name_len + 1);
        if (!name)
            return fail(p, SG_ENOMEM, "out of memory building an expression");
        memcpy(name, q->name, q->name_len);
        name[q->name_len] = '\0';
        e->u.sym.name = name;
        e->sym_index = (uint32_t)(p->sym_base + p->nsyms);
        break;
    }
    default:
        if (q->nargs)
            memcpy(e->args, q->args, q->nargs * sizeof *q->args);
        break;
    }
    if (table_insert(p, e))
        return fail(p, SG_ENOMEM, "out of memory building an expression");
    p->count++;
    if (q->kind == SG_SYM)
        p->syms[p->nsyms++] = e;
    return e;
}

static const sg_expr *node(sg_pool *p, sg_kind kind, sg_sort sort, const sg_expr *const *args, size_t n)
{
    probe q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.sort = sort;
    q.args = args;
    q.nargs = n;
    return intern(p, &q);
}

/* ---- Leaves ---------------------------------------------------------------------- */

const sg_expr *sg_expr_int(sg_pool *p, sg_int v)
{
    probe q;
    memset(&q, 0, sizeof q);
    q.kind = SG_INT;
    q.sort = SG_SORT_INT;
    q.a = v;
    return intern(p, &q);
}

const sg_expr *sg_expr_rational(sg_pool *p, sg_int num, sg_int den)
{
    sg_rat r;
    probe q;
    if (den == 0)
        return fail(p, SG_EUNDEFINED, "division by zero in a constant");
    if (!sg_rat_make(&r, num, den))
        return fail(p, SG_EOVERFLOW, "constant outside the 128-bit range");
    memset(&q, 0, sizeof q);
    q.kind = SG_RAT;
    q.sort = SG_SORT_REAL;
    q.a = r.num;
    q.b = r.den;
    return intern(p, &q);
}

const sg_expr *sg_expr_bool(sg_pool *p, bool v) { return node(p, v ? SG_TRUE : SG_FALSE, SG_SORT_BOOL, NULL, 0); }

const sg_expr *sg_expr_inf(sg_pool *p, int sign, bool integer)
{
    probe q;
    memset(&q, 0, sizeof q);
    q.kind = SG_INF;
    q.sort = integer ? SG_SORT_INT : SG_SORT_REAL;
    q.a = sign < 0 ? -1 : 1;
    q.b = integer;
    return intern(p, &q);
}

const sg_expr *sg_expr_symbol(sg_pool *p, const char *name, size_t len)
{
    probe q;
    if (len == 0)
        return fail(p, SG_EINVALID, "empty symbol name");
    memset(&q, 0, sizeof q);
    q.kind = SG_SYM;
    q.sort = SG_SORT_INT;
    q.name = name;
    q.name_len = len;
    return intern(p, &q);
}

const sg_expr *sg_pool_find_symbol(const sg_pool *p, const char *name, size_t len)
{
    probe q;
    memset(&q, 0, sizeof q);
    q.kind = SG_SYM;
    q.sort = SG_SORT_INT;
    q.name = name;
    q.name_len = len;
    return len ? lookup(p, &q, probe_hash(&q)) : NULL;
}

/* ---- Literal helpers --------------------------------------------------------------- */

static bool is_lit(const sg_expr *e) { return e->kind == SG_INT || e->kind == SG_RAT; }
static bool is_num(const sg_expr *e) { return e->sort != SG_SORT_BOOL; }

static sg_rat lit_value(const sg_expr *e)
{
    if (e->kind == SG_RAT) {
        sg_rat r = {e->u.rat.num, e->u.rat.den};
        return r;
    }
    return sg_rat_int(e->u.ival);
}

static bool lit_is(const sg_expr *e, sg_int v) { return e->kind == SG_INT && e->u.ival == v; }

/* A literal with value r: Integer when `real` is false and r is integral. */
static const sg_expr *mk_lit(sg_pool *p, sg_rat r, bool real)
{
    if (!real && r.den == 1)
        return sg_expr_int(p, r.num);
    return sg_expr_rational(p, r.num, r.den);
}

static sg_sort num_sort(const sg_expr *const *args, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (args[i]->sort == SG_SORT_REAL)
            return SG_SORT_REAL;
    return SG_SORT_INT;
}

static const sg_expr *overflow(sg_pool *p) { return fail(p, SG_EOVERFLOW, "constant outside the 128-bit range"); }

/* ---- Canonical order ------------------------------------------------------------------ */

/* Names compare as (letters, number, rest): s2 < s10, u0 < u1. */
static int name_cmp(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i] && !(a[i] >= '0' && a[i] <= '9'))
        i++;
    if (a[i] >= '0' && a[i] <= '9' && b[i] >= '0' && b[i] <= '9') {
        size_t ea = i, eb = i;
        while (a[ea] >= '0' && a[ea] <= '9')
            ea++;
        while (b[eb] >= '0' && b[eb] <= '9')
            eb++;
        if (ea != eb)
            return ea < eb ? -1 : 1;
        {
            int c = strncmp(a + i, b + i, ea - i);
            if (c)
                return c;
        }
        return name_cmp(a + ea, b + eb);
    }
    return strcmp(a + i, b + i);
}

int sg_expr_compare(const sg_expr *a, const sg_expr *b)
{
    size_t i;
    if (a == b)
        return 0;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    switch (a->kind) {
    case SG_INT: return a->u.ival < b->u.ival ? -1 : 1;
    case SG_RAT: return sg_rat_cmp(lit_value(a), lit_value(b));
    case SG_INF:
        if (a->u.inf.sign != b->u.inf.sign)
            return a->u.inf.sign < b->u.inf.sign ? -1 : 1;
        return a->u.inf.integer < b->u.inf.integer ? -1 : 1;
    case SG_SYM: {
        int c = name_cmp(a->u.sym.name, b->u.sym.name);
        return c ? c : strcmp(a->u.sym.name, b->u.sym.name);
    }
    default: break;
    }
    if (a->nargs != b->nargs)
        return a->nargs < b->nargs ? -1 : 1;
    for (i = 0; i < a->nargs; i++) {
        int c = sg_expr_compare(a->args[i], b->args[i]);
        if (c)
            return c;
    }
    return 0; /* unreachable for distinct hash-consed nodes */
}

static int cmp_ptr(const void *x, const void *y)
{
    return sg_expr_compare(*(const sg_expr *const *)x, *(const sg_expr *const *)y);
}

/* The arguments of a flattening kind: `args`, each argument of that same kind replaced by its
 * own arguments, into a new array (`*total` entries; sg_free); NULL when out of memory. */
static const sg_expr **flatten(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n, size_t *total)
{
    const sg_expr **out;
    size_t i, j;

    for (*total = 0, i = 0; i < n; i++)
        *total += args[i]->kind == kind ? args[i]->nargs : 1;
    if (!(out = sg__malloc((*total + 1) * sizeof *out))) {
        fail(p, SG_ENOMEM, "out of memory building an expression");
        return NULL;
    }
    for (*total = 0, i = 0; i < n; i++) {
        if (args[i]->kind != kind)
            out[(*total)++] = args[i];
        else
            for (j = 0; j < args[i]->nargs; j++)
                out[(*total)++] = args[i]->args[j];
    }
    return out;
}

/* ---- Add and Mul ------------------------------------------------------------------------ */

typedef struct term {
    sg_rat coef;          /* Add: coefficient; Mul: exponent (integral) */
    const sg_expr *e;
} term;

static int cmp_term(const void *x, const void *y)
{
    return sg_expr_compare(((const term *)x)->e, ((const term *)y)->e);
}

/* Split a term of a sum into coefficient * rest. */
static const sg_expr *split_coef(sg_pool *p, const sg_expr *e, sg_rat *coef)
{
    *coef = sg_rat_int(1);
    if (e->kind == SG_MUL && is_lit(e->args[0])) {
        *coef = lit_value(e->args[0]);
        if (e->nargs == 2)
            return e->args[1];
        return node(p, SG_MUL, num_sort(e->args + 1, e->nargs - 1), e->args + 1, e->nargs - 1);
    }
    return e;
}

/* flatten() for a sum or a product, and room for its terms in `*t` (nf + 1
 * entries; sg_free); NULL, with nothing allocated, when out of memory. */
static const sg_expr **flatten_terms(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n,
                                     size_t *nf, term **t)
{
    const sg_expr **out = flatten(p, kind, args, n, nf);

    if (out && !(*t = sg__malloc((*nf + 1) * sizeof **t))) {
        sg_free((void *)out);
        fail(p, SG_ENOMEM, "out of memory building an expression");
        return NULL;
    }
    return out;
}

static const sg_expr *mk_infinity_result(sg_pool *p, int pos, int neg, bool integer)
{
    if (pos && neg)
        return fail(p, SG_EUNDEFINED, "int_oo - int_oo is undefined (nan)");
    return sg_expr_inf(p, pos ? 1 : -1, integer);
}

/* Sort the `*nt` terms of `t` by base and merge equal bases, adding their coefficients (a sum's)
 * or exponents (a product's); false on overflow (recorded in the pool). */
static bool combine_terms(sg_pool *p, term *t, size_t *nt)
{
    size_t i, k;

    if (*nt > 1)
        qsort(t, *nt, sizeof *t, cmp_term);
    for (i = 0, k = 0; i < *nt; i++) {
        if (k > 0 && t[k - 1].e == t[i].e) {
            if (!sg_rat_add(&t[k - 1].coef, t[k - 1].coef, t[i].coef)) {
                overflow(p);
                return false;
            }
        } else {
            t[k++] = t[i];
        }
    }
    *nt = k;
    return true;
}

static const sg_expr *mk_add(sg_pool *p, const sg_expr *const *args, size_t n)
{
    term *t = NULL;
    const sg_expr **out, *res = NULL; /* out: the flattened arguments, then the result's */
    size_t nt = 0, nf, i, no = 0;
    sg_rat cst = sg_rat_int(0);
    bool real = num_sort(args, n) == SG_SORT_REAL, inf_int = true;
    int pos = 0, neg = 0;

    if (!(out = flatten_terms(p, SG_ADD, args, n, &nf, &t)))
        return NULL;
    for (i = 0; i < nf; i++) {
        const sg_expr *x = out[i];
        if (is_lit(x)) {
            if (!sg_rat_add(&cst, cst, lit_value(x))) {
                overflow(p);
                goto cleanup;
            }
        } else if (x->kind == SG_INF) {
            pos |= x->u.inf.sign > 0;
            neg |= x->u.inf.sign < 0;
            inf_int &= x->u.inf.integer;
        } else {
            t[nt].e = split_coef(p, x, &t[nt].coef);
            if (!t[nt].e)
                goto cleanup;
            nt++;
        }
    }
    if (pos || neg) {
        res = mk_infinity_result(p, pos, neg, inf_int);
        goto cleanup;
    }
    if (!combine_terms(p, t, &nt)) /* like terms */
        goto cleanup;
    for (i = 0; i < nt; i++) {
        const sg_expr *c, *x;
        if (t[i].coef.num == 0)
            continue;
        if (t[i].coef.num == 1 && t[i].coef.den == 1) {
            out[no++] = t[i].e;
            continue;
        }
        c = mk_lit(p, t[i].coef, false);
        x = c ? sg_expr_2(p, SG_MUL, c, t[i].e) : NULL;
        if (!x)
            goto cleanup;
        out[no++] = x;
    }
    if (cst.num != 0 || no == 0) {
        out[no] = mk_lit(p, cst, real && no == 0);
        if (!out[no])
            goto cleanup;
        no++;
    }
    res = no == 1 ? out[0] : node(p, SG_ADD, num_sort(out, no), out, no);
cleanup:
    sg_free(t);
    sg_free((void *)out);
    return res;
}

static const sg_expr *mk_pow(sg_pool *p, const sg_expr *b, const sg_expr *k);

static const sg_expr *mk_mul(sg_pool *p, const sg_expr *const *args, size_t n)
{
    term *t = NULL;
    const sg_expr **out, *res = NULL; /* out: the flattened arguments, then the result's */
    size_t nt = 0, nf, i, no = 0;
    sg_rat coef = sg_rat_int(1);
    bool real = num_sort(args, n) == SG_SORT_REAL, inf_int = true, zero = false;
    int infs = 0, inf_sign = 1;

    if (!(out = flatten_terms(p, SG_MUL, args, n, &nf, &t)))
        return NULL;
    for (i = 0; i < nf; i++) {
        const sg_expr *x = out[i];
        if (is_lit(x)) {
            zero |= lit_value(x).num == 0;
            if (!zero && !sg_rat_mul(&coef, coef, lit_value(x))) {
                overflow(p);
                goto cleanup;
            }
        } else if (x->kind == SG_INF) {
            infs++;
            inf_sign *= x->u.inf.sign;
            inf_int &= x->u.inf.integer;
        } else {
            if (x->kind == SG_POW) {
                t[nt].e = x->args[0];
                t[nt].coef = sg_rat_int(x->args[1]->u.ival);
            } else {
                t[nt].e = x;
                t[nt].coef = sg_rat_int(1);
            }
            nt++;
        }
    }
    if (infs) {
        if (zero)
            res = fail(p, SG_EUNDEFINED, "0 * int_oo is undefined (nan)");
        else if (nt)
            res = fail(p, SG_EUNSUPPORTED, "int_oo times a non-constant factor");
        else
            res = sg_expr_inf(p, coef.num < 0 ? -inf_sign : inf_sign, inf_int);
        goto cleanup;
    }
    if (zero) {
        res = mk_lit(p, sg_rat_int(0), real);
        goto cleanup;
    }
    if (!combine_terms(p, t, &nt)) /* equal bases: their (integer) exponents added */
        goto cleanup;
    /* sympy distributes a number over a sum: 2*(x + 1) -> 2*x + 2 */
    if (nt == 1 && t[0].coef.num == 1 && t[0].e->kind == SG_ADD && !(coef.num == 1 && coef.den == 1)) {
        const sg_expr *s = t[0].e, **terms = sg__malloc(s->nargs * sizeof *terms), *c = mk_lit(p, coef, false);
        if (!terms || !c) {
            sg_free(terms);
            if (c)
                fail(p, SG_ENOMEM, "out of memory building an expression");
            goto cleanup;
        }
        for (i = 0; i < s->nargs; i++) {
            terms[i] = sg_expr_2(p, SG_MUL, c, s->args[i]);
            if (!terms[i])
                break;
        }
        res = i == s->nargs ? mk_add(p, terms, s->nargs) : NULL;
        sg_free(terms);
        goto cleanup;
    }
    if (!(coef.num == 1 && coef.den == 1) || nt == 0) {
        out[no] = mk_lit(p, coef, real && nt == 0);
        if (!out[no])
            goto cleanup;
        no++;
    }
    for (i = 0; i < nt; i++) {
        const sg_expr *x = t[i].e;
        if (t[i].coef.num != 1) {
            x = mk_pow(p, x, sg_expr_int(p, t[i].coef.num));
            if (!x)
                goto cleanup;
        }
        out[no++] = x;
    }
    res = no == 1 ? out[0] : node(p, SG_MUL, num_sort(out, no), out, no);
cleanup:
    sg_free(t);
    sg_free((void *)out);
    return res;
}

/* Pow with an integer literal exponent. */
static const sg_expr *mk_pow(sg_pool *p, const sg_expr *b, const sg_expr *k)
{
    sg_int kv;
    if (!b || !k)
        return NULL;
    if (k->kind != SG_INT)
        return fail(p, SG_EUNSUPPORTED,
                    "a power with a non-integer-literal exponent (torch writes PowByNatural for those)");
    kv = k->u.ival;
    if (b->kind == SG_INF)
        return fail(p, SG_EUNSUPPORTED, "a power of int_oo");
    if (kv == 0)
        return mk_lit(p, sg_rat_int(1), b->sort == SG_SORT_REAL);
    if (kv == 1)
        return b;
    if (kv < 0) {
        const sg_expr *pos;
        if (kv == SG_INT_MIN)
            return overflow(p);
        pos = mk_pow(p, b, sg_expr_int(p, -kv));
        return sg_expr_2(p, SG_TRUEDIV, sg_expr_int(p, 1), pos);
    }
    if (is_lit(b)) {
        sg_rat r = lit_value(b), acc;
        if (!sg_int_pow(&acc.num, r.num, kv) || !sg_int_pow(&acc.den, r.den, kv))
            return overflow(p);
        return mk_lit(p, acc, b->sort == SG_SORT_REAL);
    }
    if (b->kind == SG_POW) {
        sg_int e;
        if (!sg__mul(b->args[1]->u.ival, kv, &e))
            return overflow(p);
        return mk_pow(p, b->args[0], sg_expr_int(p, e));
    }
    if (b->kind == SG_MUL) { /* (c*x*y)**k -> c**k * x**k * y**k */
        const sg_expr **f = sg__malloc(b->nargs * sizeof *f), *res = NULL;
        size_t i;
        if (!f)
            return fail(p, SG_ENOMEM, "out of memory building an expression");
        for (i = 0; i < b->nargs; i++)
            if (!(f[i] = mk_pow(p, b->args[i], k)))
                break;
        if (i == b->nargs)
            res = mk_mul(p, f, b->nargs);
        sg_free(f);
        return res;
    }
    {
        const sg_expr *a[2] = {b, k};
        return node(p, SG_POW, b->sort, a, 2);
    }
}

/* ---- Division family ----------------------------------------------------------------------- */

static const sg_expr *div_by_zero(sg_pool *p, sg_kind kind)
{
    return fail(p, SG_EUNDEFINED, "division by zero in %s", sg_kind_name(kind));
}

/* The integer coefficient of a term of a sum (1 when it has none); false for a rational one. */
static bool term_int_coef(const sg_expr *t, sg_int *k)
{
    if (t->kind == SG_INT)
        *k = t->u.ival;
    else if (t->kind == SG_MUL && is_lit(t->args[0]))
        return t->args[0]->kind == SG_INT && (*k = t->args[0]->u.ival, true);
    else
        *k = 1;
    return true;
}

/*
 * a / c for an integer-valued `a` every term of which has an integer coefficient that the
 * literal c >= 2 divides (`8*x*y + 4` / 4 = `2*x*y + 1`); `a` itself when some term's is not
 * divisible (or `a` is not integer-valued); NULL on failure (recorded in the pool). Where it
 * applies, a // c is exactly the quotient and a % c is 0 for every value of the symbols
 * (torch's FloorDiv simplifies the same way).
 */
static const sg_expr *exact_quotient(sg_pool *p, const sg_expr *a, sg_int c)
{
    const sg_expr *one = a, *const *ts = &one, **out = NULL, *res = NULL;
    size_t n = 1, i;
    sg_int k;

    if (a->sort != SG_SORT_INT || c < 2)
        return a;
    if (a->kind == SG_ADD) {
        ts = a->args;
        n = a->nargs;
    }
    for (i = 0; i < n; i++)
        if (!term_int_coef(ts[i], &k) || k % c != 0)
            return a; /* not applicable: `a` itself */
    if (!(out = sg__malloc(n * sizeof *out)))
        return fail(p, SG_ENOMEM, "out of memory building an expression");
    for (i = 0; i < n; i++) {
        const sg_expr *t = ts[i];
        term_int_coef(t, &k);
        if (t->kind == SG_INT) {
            out[i] = sg_expr_int(p, k / c);
        } else {
            const sg_expr *rest = t->nargs == 2 ? t->args[1] : node(p, SG_MUL, num_sort(t->args + 1, t->nargs - 1),
                                                                     t->args + 1, t->nargs - 1);
            out[i] = rest ? sg_expr_2(p, SG_MUL, sg_expr_int(p, k / c), rest) : NULL;
        }
        if (!out[i])
            goto cleanup;
    }
    res = n == 1 ? out[0] : sg_expr_apply(p, SG_ADD, out, n);
cleanup:
    sg_free((void *)out);
    return res;
}

static const sg_expr *mk_intdiv(sg_pool *p, sg_kind kind, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    if (lit_is(b, 0))
        return div_by_zero(p, kind);
    if (a->kind == SG_INT && b->kind == SG_INT) {
        sg_int r;
        bool ok;
        switch (kind) {
        case SG_CEILDIV: ok = sg__floordiv(-a->u.ival, b->u.ival, &r) && sg__mul(r, -1, &r); break;
        case SG_MOD: case SG_PYMOD: ok = sg__pymod(a->u.ival, b->u.ival, &r); break;
        default: ok = a->u.ival != SG_INT_MIN && sg__floordiv(a->u.ival, b->u.ival, &r); break;
        }
        if (!ok || a->u.ival == SG_INT_MIN)
            return overflow(p);
        return sg_expr_int(p, r);
    }
    if (lit_is(b, 1) || lit_is(b, -1)) {
        if (kind == SG_MOD || kind == SG_PYMOD)
            return sg_expr_int(p, 0);
        return lit_is(b, 1) ? a : sg_expr_neg(p, a);
    }
    if (b->kind == SG_INT && b->u.ival >= 2 && kind != SG_CEILDIV) {
        const sg_expr *q = exact_quotient(p, a, b->u.ival);
        if (!q)
            return NULL;
        if (q != a)
            return kind == SG_MOD || kind == SG_PYMOD ? sg_expr_int(p, 0) : q;
    }
    return node(p, kind, SG_SORT_INT, args, 2);
}

/* ---- Max and Min ------------------------------------------------------------------------------- */

static const sg_expr *mk_minmax(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n)
{
    const sg_expr **out, *best = NULL, *res = NULL;
    size_t no = 0, i, k, total;
    int want = kind == SG_MAX ? 1 : -1;
    sg_sort sort = num_sort(args, n);

    if (!(out = flatten(p, kind, args, n, &total)))
        return NULL;
    for (i = 0; i < total; i++) {
        const sg_expr *x = out[i];
        if (x->kind == SG_INF) {
            if (x->u.inf.sign == want) { /* Max(.., int_oo) = int_oo */
                res = x;
                goto cleanup;
            }
            continue; /* Max(.., -int_oo): the identity */
        }
        if (is_lit(x)) {
            if (!best || sg_rat_cmp(lit_value(x), lit_value(best)) * want > 0)
                best = x;
            continue;
        }
        out[no++] = x;
    }
    if (best)
        out[no++] = best;
    if (no == 0) { /* only identities: Max(-int_oo) */
        res = sg_expr_inf(p, -want, sort == SG_SORT_INT);
        goto cleanup;
    }
    qsort(out, no, sizeof *out, cmp_ptr);
    for (i = 0, k = 0; i < no; i++)
        if (k == 0 || out[k - 1] != out[i])
            out[k++] = out[i];
    res = k == 1 ? out[0] : node(p, kind, num_sort(out, k), out, k);
cleanup:
    sg_free((void *)out);
    return res;
}

/* ---- Relations and connectives ------------------------------------------------------------------ */

static bool rel_holds(sg_kind kind, int c)
{
    switch (kind) {
    case SG_EQ: return c == 0;
    case SG_NE: return c != 0;
    case SG_LT: return c < 0;
    case SG_LE: return c <= 0;
    case SG_GT: return c > 0;
    default: return c >= 0;
    }
}

static int inf_rank(const sg_expr *e) { return e->kind == SG_INF ? e->u.inf.sign : 0; }

static const sg_expr *mk_rel(sg_pool *p, sg_kind kind, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    if (a->sort == SG_SORT_BOOL || b->sort == SG_SORT_BOOL) {
        if (a->sort != b->sort || (kind != SG_EQ && kind != SG_NE))
            return fail(p, SG_EINVALID, "%s compares a boolean with %s", sg_kind_name(kind),
                        a->sort == b->sort ? "an order" : "a number");
        if (a == b || ((a->kind == SG_TRUE || a->kind == SG_FALSE) && (b->kind == SG_TRUE || b->kind == SG_FALSE)))
            return sg_expr_bool(p, (a == b) == (kind == SG_EQ));
        return node(p, kind, SG_SORT_BOOL, args, 2);
    }
    if (a->kind == SG_INF || b->kind == SG_INF) /* a finite value is strictly between -oo and oo */
        return sg_expr_bool(p, rel_holds(kind, inf_rank(a) - inf_rank(b)));
    if (is_lit(a) && is_lit(b))
        return sg_expr_bool(p, rel_holds(kind, sg_rat_cmp(lit_value(a), lit_value(b))));
    if (a == b)
        return sg_expr_bool(p, rel_holds(kind, 0));
    if (!is_lit(a) && !is_lit(b)) { /* sides that differ by a constant decide the relation */
        sg_error saved = p->error;
        const sg_expr *d = sg_expr_sub(p, a, b);
        if (d && is_lit(d))
            return sg_expr_bool(p, rel_holds(kind, sg_rat_cmp(lit_value(d), sg_rat_int(0))));
        p->error = saved;
    }
    return node(p, kind, SG_SORT_BOOL, args, 2);
}

static sg_kind negate_rel(sg_kind k)
{
    switch (k) {
    case SG_EQ: return SG_NE;
    case SG_NE: return SG_EQ;
    case SG_LT: return SG_GE;
    case SG_LE: return SG_GT;
    case SG_GT: return SG_LE;
    default: return SG_LT;
    }
}

static const sg_expr *mk_not(sg_pool *p, const sg_expr *a)
{
    switch (a->kind) {
    case SG_TRUE: return sg_expr_bool(p, false);
    case SG_FALSE: return sg_expr_bool(p, true);
    case SG_NOT: return a->args[0];
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        return node(p, negate_rel(a->kind), SG_SORT_BOOL, a->args, 2);
    default: return node(p, SG_NOT, SG_SORT_BOOL, &a, 1);
    }
}

typedef struct ranked {
    const sg_expr *e;
    size_t pos;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->e != b->e)
        return a->e->id < b->e->id ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Remove repeated pointers from v[0..n-1], keeping first occurrences in order,
 * in O(n log n). Returns the new length, or SIZE_MAX when out of memory. */
static size_t dedupe_keep_order(const sg_expr **v, size_t n)
{
    ranked *r;
    size_t i, k;
    if (n < 2)
        return n;
    r = sg__malloc(n * sizeof *r);
    if (!r)
        return SIZE_MAX;
    for (i = 0; i < n; i++) {
        r[i].e = v[i];
        r[i].pos = i;
    }
    qsort(r, n, sizeof *r, cmp_ranked);
    for (i = 1; i < n; i++)
        if (r[i].e == r[i - 1].e)
            v[r[i].pos] = NULL;
    sg_free(r);
    for (i = 0, k = 0; i < n; i++)
        if (v[i])
            v[k++] = v[i];
    return k;
}

static const sg_expr *mk_andor(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n)
{
    sg_kind absorb = kind == SG_AND ? SG_FALSE : SG_TRUE;
    const sg_expr **out, *res = NULL;
    size_t no = 0, i, k, total;

    if (!(out = flatten(p, kind, args, n, &total)))
        return NULL;
    for (i = 0; i < total; i++) {
        if (out[i]->kind == absorb) {
            res = out[i];
            goto cleanup;
        }
        if (out[i]->kind != SG_TRUE && out[i]->kind != SG_FALSE)
            out[no++] = out[i];
    }
    /* keep the order the guard was written in (torch prints it so); drop repeats */
    k = dedupe_keep_order(out, no);
    if (k == SIZE_MAX) {
        fail(p, SG_ENOMEM, "out of memory building an expression");
        goto cleanup;
    }
    if (k == 0)
        res = sg_expr_bool(p, kind == SG_AND);
    else
        res = k == 1 ? out[0] : node(p, kind, SG_SORT_BOOL, out, k);
cleanup:
    sg_free((void *)out);
    return res;
}

/* ---- Conditionals ------------------------------------------------------------------------------- */

static bool same_family(const sg_expr *a, const sg_expr *b) { return is_num(a) == is_num(b); }

static sg_sort join_sort(const sg_expr *a, const sg_expr *b)
{
    if (a->sort == SG_SORT_BOOL)
        return SG_SORT_BOOL;
    return a->sort == SG_SORT_REAL || b->sort == SG_SORT_REAL ? SG_SORT_REAL : SG_SORT_INT;
}

static const sg_expr *mk_piecewise(sg_pool *p, const sg_expr *const *args, size_t n)
{
    const sg_expr **out, *res = NULL;
    size_t no = 0, i;
    sg_sort sort = args[0]->sort;

    for (i = 0; i < n; i += 2) {
        if (args[i + 1]->sort != SG_SORT_BOOL)
            return fail(p, SG_EINVALID, "Piecewise condition %zu is not a boolean", i / 2 + 1);
        if (!same_family(args[i], args[0]))
            return fail(p, SG_EINVALID, "Piecewise mixes boolean and numeric branches");
        sort = join_sort(args[i], args[0]) == SG_SORT_REAL ? SG_SORT_REAL : sort;
    }
    out = sg__malloc(n * sizeof *out);
    if (!out)
        return fail(p, SG_ENOMEM, "out of memory building an expression");
    for (i = 0; i < n; i += 2) {
        if (args[i + 1]->kind == SG_FALSE)
            continue;
        out[no++] = args[i];
        out[no++] = args[i + 1];
        if (args[i + 1]->kind == SG_TRUE)
            break;
    }
    if (no == 0)
        res = fail(p, SG_EUNDEFINED, "Piecewise with no true branch");
    else if (out[1]->kind == SG_TRUE)
        res = out[0];
    else {
        for (i = 0, sort = out[0]->sort; i < no; i += 2) /* the sort of what is left */
            if (out[i]->sort == SG_SORT_REAL)
                sort = SG_SORT_REAL;
        res = node(p, SG_PIECEWISE, sort, out, no);
    }
    sg_free(out);
    return res;
}

/* ---- The general constructor -------------------------------------------------------------------- */

static const char *sort_name(sg_sort s)
{
    return s == SG_SORT_BOOL ? "a boolean" : s == SG_SORT_REAL ? "a real" : "an integer";
}

/* Check that argument i has an acceptable sort: 'i' integer, 'n' number, 'b' boolean. */
static bool want_sort(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n, char want)
{
    size_t i;
    for (i = 0; i < n; i++) {
        sg_sort s = args[i]->sort;
        bool ok = want == 'b' ? s == SG_SORT_BOOL : want == 'n' ? s != SG_SORT_BOOL : s == SG_SORT_INT;
        if (!ok) {
            fail(p, SG_EINVALID, "argument %zu of %s is %s, expected %s", i + 1, sg_kind_name(kind),
                 sort_name(s), want == 'b' ? "a boolean" : want == 'n' ? "a number" : "an integer");
            return false;
        }
    }
    return true;
}

static bool arity(sg_pool *p, sg_kind kind, size_t n, size_t lo, size_t hi)
{
    if (n >= lo && n <= hi)
        return true;
    if (lo == hi)
        fail(p, SG_EINVALID, "%s takes %zu argument%s, got %zu", sg_kind_name(kind), lo, lo == 1 ? "" : "s", n);
    else
        fail(p, SG_EINVALID, "%s takes at least %zu arguments, got %zu", sg_kind_name(kind), lo, n);
    return false;
}

const sg_expr *sg_expr_apply(sg_pool *p, sg_kind kind, const sg_expr *const *args, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!args[i])
            return NULL;
    if (n > SG_EXPR_MAX_ARGS)
        return fail(p, SG_ELIMIT, "%s with more than %d arguments", sg_kind_name(kind), SG_EXPR_MAX_ARGS);
    /* Infinities survive only where they fold: sums, products by constants, Max/Min,
     * relations and Identity. */
    switch (kind) {
    case SG_ADD: case SG_MUL: case SG_MAX: case SG_MIN: case SG_IDENTITY:
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        break;
    default:
        for (i = 0; i < n; i++)
            if (args[i]->kind == SG_INF)
                return fail(p, SG_EUNSUPPORTED, "int_oo as an argument of %s", sg_kind_name(kind));
    }
    switch (kind) {
    case SG_ADD:
        if (!arity(p, kind, n, 1, SIZE_MAX) || !want_sort(p, kind, args, n, 'n'))
            return NULL;
        return mk_add(p, args, n);
    case SG_MUL:
        if (!arity(p, kind, n, 1, SIZE_MAX) || !want_sort(p, kind, args, n, 'n'))
            return NULL;
        return mk_mul(p, args, n);
    case SG_POW:
        if (!arity(p, kind, n, 2, 2) || !want_sort(p, kind, args, 1, 'n') || !want_sort(p, kind, args + 1, 1, 'i'))
            return NULL;
        return mk_pow(p, args[0], args[1]);
    case SG_POWNAT:
        if (!arity(p, kind, n, 2, 2) || !want_sort(p, kind, args, n, 'i'))
            return NULL;
        if (args[1]->kind == SG_INT) {
            if (args[1]->u.ival < 0)
                return fail(p, SG_EUNDEFINED, "PowByNatural with a negative exponent");
            return mk_pow(p, args[0], args[1]);
        }
        return node(p, kind, SG_SORT_INT, args, 2);
    case SG_FLOORDIV: case SG_CLEANDIV: case SG_CEILDIV: case SG_MOD: case SG_PYMOD:
        if (!arity(p, kind, n, 2, 2) || !want_sort(p, kind, args, n, 'i'))
            return NULL;
        return mk_intdiv(p, kind, args[0], args[1]);
    case SG_MODIDX:
        if (!arity(p, kind, n, 3, 3) || !want_sort(p, kind, args, n, 'i'))
            return NULL;
        if (lit_is(args[1], 0) || lit_is(args[2], 0))
            return div_by_zero(p, kind);
        if (args[0]->kind == SG_INT && args[1]->kind == SG_INT && args[2]->kind == SG_INT)
            return mk_intdiv(p, SG_PYMOD, mk_intdiv(p, SG_FLOORDIV, args[0], args[1]), args[2]);
        return node(p, kind, SG_SORT_INT, args, 3);
    case SG_TRUEDIV:
        if (!arity(p, kind, n, 2, 2) || !want_sort(p, kind, args, n, 'n'))
            return NULL;
        if (is_lit(args[1]) && lit_value(args[1]).num == 0)
            return div_by_zero(p, kind);
        if (is_lit(args[0]) && is_lit(args[1])) {
            sg_rat r;
            if (!sg_rat_div(&r, lit_value(args[0]), lit_value(args[1])))
                return overflow(p);
            return mk_lit(p, r, true);
        }
        return node(p, kind, SG_SORT_REAL, args, 2);
    case SG_TRUNC: case SG_FLOOR: case SG_CEIL:
        if (!arity(p, kind, n, 1, 1) || !want_sort(p, kind, args, n, 'n'))
            return NULL;
        if (args[0]->sort == SG_SORT_INT)
            return args[0];
        if (is_lit(args[0])) {
            sg_rat r = lit_value(args[0]);
            return sg_expr_int(p, kind == SG_FLOOR ? sg_rat_floor(r) : kind == SG_CEIL ? sg_rat_ceil(r) : sg_rat_trunc(r));
        }
        return node(p, kind, SG_SORT_INT, args, 1);
    case SG_MAX: case SG_MIN:
        if (!arity(p, kind, n, 1, SIZE_MAX) || !want_sort(p, kind, args, n, 'n'))
            return NULL;
        return mk_minmax(p, kind, args, n);
    case SG_WHERE:
        if (!arity(p, kind, n, 3, 3) || !want_sort(p, kind, args, 1, 'b'))
            return NULL;
        if (!same_family(args[1], args[2]))
            return fail(p, SG_EINVALID, "Where mixes a boolean and a number");
        if (args[0]->kind == SG_TRUE || args[0]->kind == SG_FALSE)
            return args[0]->kind == SG_TRUE ? args[1] : args[2];
        return node(p, kind, join_sort(args[1], args[2]), args, 3);
    case SG_PIECEWISE:
        if (n < 2 || n % 2)
            return fail(p, SG_EINVALID, "Piecewise takes (value, condition) pairs");
        return mk_piecewise(p, args, n);
    case SG_IDENTITY:
        if (!arity(p, kind, n, 1, 1))
            return NULL;
        if (args[0]->nargs == 0 && args[0]->kind != SG_SYM)
            return args[0];
        return node(p, kind, args[0]->sort, args, 1);
    case SG_EQ: case SG_NE: case SG_LT: case SG_LE: case SG_GT: case SG_GE:
        if (!arity(p, kind, n, 2, 2))
            return NULL;
        return mk_rel(p, kind, args[0], args[1]);
    case SG_AND: case SG_OR:
        if (!arity(p, kind, n, 1, SIZE_MAX) || !want_sort(p, kind, args, n, 'b'))
            return NULL;
        return mk_andor(p, kind, args, n);
    case SG_NOT:
        if (!arity(p, kind, n, 1, 1) || !want_sort(p, kind, args, n, 'b'))
            return NULL;
        return mk_not(p, args[0]);
    default:
        return fail(p, SG_EINVALID, "%s is a leaf kind, not a function", sg_kind_name(kind));
    }
}

const sg_expr *sg_expr_2(sg_pool *p, sg_kind kind, const sg_expr *a, const sg_expr *b)
{
    const sg_expr *args[2] = {a, b};
    return sg_expr_apply(p, kind, args, 2);
}

const sg_expr *sg_expr_1(sg_pool *p, sg_kind kind, const sg_expr *a) { return sg_expr_apply(p, kind, &a, 1); }

const sg_expr *sg_expr_neg(sg_pool *p, const sg_expr *a) { return sg_expr_2(p, SG_MUL, sg_expr_int(p, -1), a); }

const sg_expr *sg_expr_sub(sg_pool *p, const sg_expr *a, const sg_expr *b)
{
    return sg_expr_2(p, SG_ADD, a, sg_expr_neg(p, b));
}

/* ---- Inspection ------------------------------------------------------------------------------------ */

sg_kind sg_expr_kind(const sg_expr *e) { return (sg_kind)e->kind; }
sg_sort sg_expr_sort(const sg_expr *e) { return (sg_sort)e->sort; }
size_t sg_expr_nargs(const sg_expr *e) { return e->nargs; }
const sg_expr *sg_expr_arg(const sg_expr *e, size_t i) { return i < e->nargs ? e->args[i] : NULL; }
uint32_t sg_expr_id(const sg_expr *e) { return e->id; }
uint32_t sg_expr_depth(const sg_expr *e) { return e->depth; }
bool sg_expr_is_constant(const sg_expr *e) { return !e->has_sym; }
sg_int sg_expr_int_value(const sg_expr *e) { return e->kind == SG_INT ? e->u.ival : 0; }
int sg_expr_inf_sign(const sg_expr *e) { return e->kind == SG_INF ? e->u.inf.sign : 0; }
const char *sg_expr_symbol_name(const sg_expr *e) { return e->kind == SG_SYM ? e->u.sym.name : NULL; }
uint32_t sg_expr_symbol_index(const sg_expr *e) { return e->sym_index; }

bool sg_expr_rational_value(const sg_expr *e, sg_int *num, sg_int *den)
{
    if (!is_lit(e))
        return false;
    *num = lit_value(e).num;
    *den = lit_value(e).den;
    return true;
}

const char *sg_kind_name(sg_kind kind)
{
    static const char *const names[SG_KIND_COUNT] = {
        [SG_INT] = "Integer", [SG_RAT] = "Rational", [SG_TRUE] = "BooleanTrue",
        [SG_FALSE] = "BooleanFalse", [SG_INF] = "IntInfinity", [SG_SYM] = "Symbol",
        [SG_ADD] = "Add", [SG_MUL] = "Mul", [SG_POW] = "Pow", [SG_POWNAT] = "PowByNatural",
        [SG_FLOORDIV] = "FloorDiv", [SG_CLEANDIV] = "CleanDiv", [SG_CEILDIV] = "CeilDiv",
        [SG_MOD] = "Mod", [SG_PYMOD] = "PythonMod", [SG_MODIDX] = "ModularIndexing",
        [SG_TRUEDIV] = "IntTrueDiv", [SG_TRUNC] = "TruncToInt", [SG_FLOOR] = "FloorToInt",
        [SG_CEIL] = "CeilToInt", [SG_MAX] = "Max", [SG_MIN] = "Min", [SG_WHERE] = "Where",
        [SG_PIECEWISE] = "Piecewise", [SG_IDENTITY] = "Identity", [SG_EQ] = "Equality",
        [SG_NE] = "Unequality", [SG_LT] = "StrictLessThan", [SG_LE] = "LessThan",
        [SG_GT] = "StrictGreaterThan", [SG_GE] = "GreaterThan", [SG_AND] = "And",
        [SG_OR] = "Or", [SG_NOT] = "Not",
    };
    return (unsigned)kind < SG_KIND_COUNT ? names[kind] : "?";
}

static int cmp_sym_index(const void *x, const void *y)
{
    uint32_t a = (*(const sg_expr *const *)x)->sym_index, b = (*(const sg_expr *const *)y)->sym_index;
    return a < b ? -1 : a > b;
}

/*
 * The nodes a walk has visited: an open-addressing set of node ids sized to the walk (not to the
 * pool), so that listing the symbols of one small expression of a large trace costs the expression,
 * not the pool (a pool-sized array cleared per call made trace loading quadratic: issue 14).
 */
typedef struct idset {
    uint32_t *slot; /* id + 1; 0: empty */
    size_t cap, n;  /* cap a power of two, n < cap / 2 */
} idset;

/* Add `id`; 1 when it was new, 0 when already there, SG_ENOMEM. */
static int idset_add(idset *s, uint32_t id)
{
    size_t i;
    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 64, j;
        uint32_t *ns = sg__calloc(ncap, sizeof *ns);
        if (!ns)
            return SG_ENOMEM;
        for (j = 0; j < s->cap; j++)
            if (s->slot[j])
                for (i = (s->slot[j] * 2654435761u) & (ncap - 1);; i = (i + 1) & (ncap - 1))
                    if (!ns[i]) {
                        ns[i] = s->slot[j];
                        break;
                    }
        sg_free(s->slot);
        s->slot = ns;
        s->cap = ncap;
    }
    for (i = ((id + 1u) * 2654435761u) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slot[i] == id + 1u)
            return 0;
        if (!s->slot[i]) {
            s->slot[i] = id + 1u;
            s->n++;
            return 1;
        }
    }
}

int sg_expr_symbols(const sg_expr ***out, size_t *n, const sg_pool *p, const sg_expr *e, sg_error *err)
{
    idset seen = {NULL, 0, 0};
    const sg_expr **stack = NULL, **res = NULL;
    size_t sp = 0, scap = 0, nres = 0, rcap = 0, i;
    int rc = 0, added;

    (void)p;
    *out = NULL;
    *n = 0;
    if (sg__grow((void **)&stack, &scap, 16, sizeof *stack) || sg__grow((void **)&res, &rcap, 8, sizeof *res) ||
        idset_add(&seen, e->id) < 0) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory listing symbols");
        goto cleanup;
    }
    stack[sp++] = e;
    while (sp) {
        const sg_expr *x = stack[--sp];
        if (x->kind == SG_SYM) {
            if (sg__grow((void **)&res, &rcap, nres + 1, sizeof *res)) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory listing symbols");
                goto cleanup;
            }
            res[nres++] = x;
        }
        if (!x->has_sym)
            continue;
        for (i = 0; i < x->nargs; i++) {
            if ((added = idset_add(&seen, x->args[i]->id)) < 0 ||
                (added && sg__grow((void **)&stack, &scap, sp + 1, sizeof *stack))) {
                rc = sg_error_set(err, SG_ENOMEM, "out of memory listing symbols");
                goto cleanup;
            }
            if (added)
                stack[sp++] = x->args[i];
        }
    }
    qsort(res, nres, sizeof *res, cmp_sym_index);
    *out = res;
    *n = nres;
    res = NULL;
cleanup:
    sg_free(seen.slot);
    sg_free(stack);
    sg_free(res);
    return rc;
}

/* ---- Copying between pools ----------------------------------------------------------------- */

void sg_expr_copier_init(sg_expr_copier *c, sg_pool *dst)
{
    memset(c, 0, sizeof *c);
    c->dst = dst;
}

void sg_expr_copier_dispose(sg_expr_copier *c)
{
    sg_free((void *)c->memo);
    memset(c, 0, sizeof *c);
}

const sg_expr *sg_expr_copy(sg_expr_copier *c, const sg_expr *e)
{
    const sg_expr *args[64], **heap = NULL, *r;
    size_t i;

    if (!e)
        return NULL;
    if (e->id < c->cap && c->memo[e->id])
        return c->memo[e->id];
    switch (e->kind) {
    case SG_INT: r = sg_expr_int(c->dst, e->u.ival); break;
    case SG_RAT: r = sg_expr_rational(c->dst, e->u.rat.num, e->u.rat.den); break;
    case SG_TRUE: r = sg_expr_bool(c->dst, true); break;
    case SG_FALSE: r = sg_expr_bool(c->dst, false); break;
    case SG_INF: r = sg_expr_inf(c->dst, e->u.inf.sign, e->u.inf.integer); break;
    case SG_SYM: r = sg_expr_symbol(c->dst, e->u.sym.name, strlen(e->u.sym.name)); break;
    default:
        if (e->nargs > sizeof args / sizeof args[0] && !(heap = sg__malloc(e->nargs * sizeof *heap)))
            return fail(c->dst, SG_ENOMEM, "out of memory copying an expression");
        for (i = 0; i < e->nargs; i++)
            if (!((heap ? heap : args)[i] = sg_expr_copy(c, e->args[i]))) {
                sg_free((void *)heap);
                return NULL;
            }
        r = sg_expr_apply(c->dst, (sg_kind)e->kind, heap ? heap : args, e->nargs);
        sg_free((void *)heap);
        break;
    }
    if (r && sg__grow_zeroed((void **)&c->memo, &c->cap, (size_t)e->id + 1, sizeof *c->memo))
        return fail(c->dst, SG_ENOMEM, "out of memory copying an expression");
    if (r)
        c->memo[e->id] = r;
    return r;
}

/* ---- Affine forms -------------------------------------------------------------------------------- */

bool sg_expr_affine(const sg_expr *e, const sg_expr **sym, sg_int *a, sg_int *b)
{
    size_t i;
    *sym = NULL;
    *a = 0;
    *b = 0;
    switch (sg_expr_kind(e)) {
    case SG_INT:
        *b = sg_expr_int_value(e);
        return true;
    case SG_SYM:
        *sym = e;
        *a = 1;
        return true;
    case SG_MUL:
        if (sg_expr_nargs(e) == 2 && sg_expr_kind(sg_expr_arg(e, 0)) == SG_INT
            && sg_expr_kind(sg_expr_arg(e, 1)) == SG_SYM) {
            *a = sg_expr_int_value(sg_expr_arg(e, 0));
            *sym = sg_expr_arg(e, 1);
            return *a != 0;
        }
        return false;
    case SG_ADD:
        for (i = 0; i < sg_expr_nargs(e); i++) {
            const sg_expr *x = sg_expr_arg(e, i), *s;
            sg_int ta, tb;
            if (!sg_expr_affine(x, &s, &ta, &tb) || (s && *sym && s != *sym))
                return false;
            if (s) {
                *sym = s;
                *a = ta;
            }
            if (!sg__add(*b, tb, b))
                return false;
        }
        return *sym != NULL;
    default:
        return false;
    }
}

/* ---- The API's integers ------------------------------------------------------------------- */

const sg_expr *sg_expr_int64(sg_pool *p, int64_t v) { return sg_expr_int(p, v); }

bool sg_expr_number(const sg_expr *e, sg_num *num, sg_num *den)
{
    sg_int n, d;
    if (!sg_expr_rational_value(e, &n, &d))
        return false;
    if (num)
        *num = sg__num(n);
    if (den)
        *den = sg__num(d);
    return true;
}

/* ---- Structure up to renaming (sg_expr_shape) ---------------------------------------------------- */

bool sg_expr_shape(sg_buf *b, const sg_expr *e, sg_expr_sym_pos pos, void *ctx, unsigned *budget)
{
    char t[SG_INT_STRLEN + 2], head[3];
    size_t i;
    if (!e)
        return sg_buf_putc(b, '_') == 0;
    if (*budget == 0)
        return false;
    --*budget;
    head[0] = '(';
    head[1] = (char)('A' + (int)e->kind); /* (kinds and sorts are a few dozen: one letter each) */
    head[2] = (char)('a' + (int)e->sort);
    sg_buf_append(b, head, 3);
    switch ((sg_kind)e->kind) {
    case SG_INT:
        sg_buf_puts(b, sg_int_format(t, e->u.ival));
        break;
    case SG_RAT:
        sg_buf_puts(b, sg_int_format(t, e->u.rat.num));
        sg_buf_putc(b, '/');
        sg_buf_puts(b, sg_int_format(t, e->u.rat.den));
        break;
    case SG_SYM: {
        size_t at = pos(e, ctx);
        if (at == SIZE_MAX)
            return false;
        sg_buf_putc(b, 'v');
        sg_buf_put_size(b, at, ' ');
        break;
    }
    case SG_TRUE: case SG_FALSE:
        break;
    default:
        if (e->nargs == 0)
            return false; /* an infinity */
    }
    for (i = 0; i < e->nargs; i++)
        if (!sg_expr_shape(b, e->args[i], pos, ctx, budget))
            return false;
    sg_buf_putc(b, ')');
    return !b->failed;
}
