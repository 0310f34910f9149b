/*
 * term.c - terms outside Z3 until a question needs Z3 (term.h).
 *
 * Terms live in blocks of BLOCK entries (their addresses never move), their
 * argument arrays and texts in an arena; a hash table of term ids finds an
 * equal term before a new one is made. Until the store has a context, every
 * builder call, reference taken and reference dropped is one 32-bit entry of
 * the record (term index << 2 | what); sg_terms_context() replays the record
 * in order and frees it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "solver/term.h"
#include "util/arena.h"
#include "util/util.h"

#define BLOCK_BITS 10
#define BLOCK ((size_t)1 << BLOCK_BITS)
#define MAX_TERMS ((size_t)1 << 29) /* a term index and what was done fit 32 bits */

enum { EV_MAKE = 0, EV_REF = 1, EV_UNREF = 2 };

struct sg_term {
    const sg_term **args;
    const char *text; /* numeral text, constant name, fresh prefix; NULL otherwise */
    Z3_ast z;         /* the ast of the term's last making, once there is a context */
    sg_int ival;      /* an Int numeral's value, when has_ival */
    uint32_t id;      /* index + 1 */
    uint32_t nargs;
    uint8_t op, sort;
    bool has_ival;
};

struct sg_terms {
    sg_ctxpool *contexts;
    Z3_context ctx;        /* NULL until a context is asked for */
    Z3_sort sorts[4];      /* by sg_tsort, once there is a context */
    sg_term **blocks;      /* blocks of BLOCK terms */
    size_t nblocks, blocks_cap;
    size_t n;              /* terms made */
    uint64_t *slot;        /* hash table: a term's hash's high 32 bits, then its id (0: empty), so
                            * that a probe and a rehash read no term but the one they match */
    size_t slot_cap, nslot;
    uint32_t *rec;         /* the record, until the context exists */
    size_t nrec, rec_cap;
    sg_arena arena;        /* the terms' arguments and texts */
    Z3_ast *argv;          /* scratch for an n-ary application's arguments */
    size_t argv_cap;
    int failed;            /* 0, SG_ENOMEM or SG_ERROR */
    char msg[SG_ERROR_MSG_MAX];
    bool no_reuse;
};

/* ---- Memory -------------------------------------------------------------------------------- */

static void fail(sg_terms *ts, int code, const char *msg)
{
    if (!ts->failed) {
        ts->failed = code;
        snprintf(ts->msg, sizeof ts->msg, "%s", msg);
    }
}

static sg_term *term_at(const sg_terms *ts, size_t index) { return &ts->blocks[index >> BLOCK_BITS][index & (BLOCK - 1)]; }

/* A new zeroed term with the next id; NULL when out of memory. */
static sg_term *new_term(sg_terms *ts)
{
    sg_term *t;
    if (ts->n >= MAX_TERMS)
        return NULL;
    if ((ts->n & (BLOCK - 1)) == 0 && (ts->n >> BLOCK_BITS) == ts->nblocks) {
        sg_term *b;
        if (sg__grow((void **)&ts->blocks, &ts->blocks_cap, ts->nblocks + 1, sizeof *ts->blocks) ||
            !(b = sg__malloc(BLOCK * sizeof *b)))
            return NULL;
        ts->blocks[ts->nblocks++] = b;
    }
    t = term_at(ts, ts->n);
    memset(t, 0, sizeof *t);
    t->id = (uint32_t)++ts->n;
    return t;
}

/* Append to the record; false when out of memory. */
static bool record(sg_terms *ts, const sg_term *t, unsigned what)
{
    if (sg__grow((void **)&ts->rec, &ts->rec_cap, ts->nrec + 1, sizeof *ts->rec)) {
        fail(ts, SG_ENOMEM, "out of memory recording the solver's terms");
        return false;
    }
    ts->rec[ts->nrec++] = ((t->id - 1) << 2) | what;
    return true;
}

/* ---- Hash-consing -------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15u;
    return h ^ (h >> 31);
}

static uint64_t hash_key(sg_top op, sg_tsort sort, size_t n, const sg_term *const *args, const char *text)
{
    uint64_t h = mix(mix(mix(0x243f6a8885a308d3u, op), sort), n);
    size_t i;
    for (i = 0; i < n; i++)
        h = mix(h, args[i]->id);
    if (text)
        for (; *text; text++)
            h = mix(h, (unsigned char)*text);
    return h;
}

static bool same_key(const sg_term *t, sg_top op, sg_tsort sort, size_t n, const sg_term *const *args,
                     const char *text)
{
    size_t i;
    if (t->op != op || t->sort != sort || t->nargs != n)
        return false;
    for (i = 0; i < n; i++)
        if (t->args[i] != args[i])
            return false;
    return text ? t->text && strcmp(t->text, text) == 0 : !t->text;
}

/* A table entry: the hash's high half, then the id. */
static uint64_t slot_entry(uint64_t h, uint32_t id) { return (h & 0xffffffff00000000u) | id; }

/* Where the probe for an entry (or a hash: its high half) starts in a table of `cap` slots: the
 * top bits of the hash, so that the entries keep the bits that place them. */
static size_t slot_start(uint64_t e, size_t cap) { return (size_t)(e >> 32) & (cap - 1); }

/* Grow the table to keep it at most half full; false when out of memory. */
static bool table_room(sg_terms *ts)
{
    size_t cap, i, j;
    uint64_t *slot;
    if (2 * (ts->nslot + 1) <= ts->slot_cap)
        return true;
    cap = ts->slot_cap ? 2 * ts->slot_cap : 1024;
    if (!(slot = sg__calloc(cap, sizeof *slot)))
        return false;
    for (i = 0; i < ts->slot_cap; i++) {
        uint64_t e = ts->slot[i];
        if (!e)
            continue;
        for (j = slot_start(e, cap); slot[j]; j = (j + 1) & (cap - 1))
            ;
        slot[j] = e;
    }
    sg_free(ts->slot);
    ts->slot = slot;
    ts->slot_cap = cap;
    return true;
}

/* ---- Making in Z3 -------------------------------------------------------------------------- */

/* Make `t` in the context from its arguments' asts; NULL on a Z3 error or no memory. */
static Z3_ast make(sg_terms *ts, const sg_term *t)
{
    Z3_context c = ts->ctx;
    Z3_ast a = t->nargs > 0 ? t->args[0]->z : NULL, b = t->nargs > 1 ? t->args[1]->z : NULL, r = NULL;
    size_t i;

    switch ((sg_top)t->op) {
    case SG_T_NUM: r = Z3_mk_numeral(c, t->text, ts->sorts[t->sort]); break;
    case SG_T_CONST: r = Z3_mk_const(c, Z3_mk_string_symbol(c, t->text), ts->sorts[t->sort]); break;
    case SG_T_FRESH: r = Z3_mk_fresh_const(c, t->text, ts->sorts[t->sort]); break;
    case SG_T_TRUE: r = Z3_mk_true(c); break;
    case SG_T_FALSE: r = Z3_mk_false(c); break;
    case SG_T_NOT: r = Z3_mk_not(c, a); break;
    case SG_T_UMINUS: r = Z3_mk_unary_minus(c, a); break;
    case SG_T_TO_REAL: r = Z3_mk_int2real(c, a); break;
    case SG_T_TO_INT: r = Z3_mk_real2int(c, a); break;
    case SG_T_IMPLIES: r = Z3_mk_implies(c, a, b); break;
    case SG_T_EQ: r = Z3_mk_eq(c, a, b); break;
    case SG_T_LE: r = Z3_mk_le(c, a, b); break;
    case SG_T_LT: r = Z3_mk_lt(c, a, b); break;
    case SG_T_GE: r = Z3_mk_ge(c, a, b); break;
    case SG_T_GT: r = Z3_mk_gt(c, a, b); break;
    case SG_T_DIV: r = Z3_mk_div(c, a, b); break;
    case SG_T_MOD: r = Z3_mk_mod(c, a, b); break;
    case SG_T_POWER: r = Z3_mk_power(c, a, b); break;
    case SG_T_ITE: r = Z3_mk_ite(c, a, b, t->args[2]->z); break;
    case SG_T_AND: case SG_T_OR: case SG_T_ADD: case SG_T_SUB: case SG_T_MUL:
        if (sg__grow((void **)&ts->argv, &ts->argv_cap, (size_t)t->nargs + 1, sizeof *ts->argv)) {
            fail(ts, SG_ENOMEM, "out of memory making a term in Z3");
            return NULL;
        }
        for (i = 0; i < t->nargs; i++)
            ts->argv[i] = t->args[i]->z;
        r = t->op == SG_T_AND   ? Z3_mk_and(c, t->nargs, ts->argv)
            : t->op == SG_T_OR  ? Z3_mk_or(c, t->nargs, ts->argv)
            : t->op == SG_T_ADD ? Z3_mk_add(c, t->nargs, ts->argv)
            : t->op == SG_T_SUB ? Z3_mk_sub(c, t->nargs, ts->argv)
                                : Z3_mk_mul(c, t->nargs, ts->argv);
        break;
    }
    if (Z3_get_error_code(c) != Z3_OK || !r) {
        Z3_error_code code = Z3_get_error_code(c);
        fail(ts, SG_ERROR, code != Z3_OK ? Z3_get_error_msg(c, code) : "Z3 made no term");
        ts->no_reuse = true;
        return NULL;
    }
    return r;
}

/* The builders' common end: record the making of `t`, or make it now. */
static const sg_term *made(sg_terms *ts, sg_term *t)
{
    if (!ts->ctx)
        return record(ts, t, EV_MAKE) ? t : NULL;
    if (ts->failed == SG_ERROR)
        return NULL;
    return (t->z = make(ts, t)) != NULL ? t : NULL;
}

/* The term (op, sort, args, text), found or new; `cons` false: always new (a fresh constant). */
static const sg_term *intern(sg_terms *ts, sg_top op, sg_tsort sort, size_t n, const sg_term *const *args,
                             const char *text, bool cons)
{
    uint64_t h = 0;
    size_t j = 0, i;
    sg_term *t;

    if (ts->failed == SG_ENOMEM)
        return NULL;
    if (cons) {
        h = hash_key(op, sort, n, args, text);
        if (!table_room(ts)) {
            fail(ts, SG_ENOMEM, "out of memory indexing the solver's terms");
            return NULL;
        }
        for (j = slot_start(h, ts->slot_cap); ts->slot[j]; j = (j + 1) & (ts->slot_cap - 1)) {
            if ((ts->slot[j] ^ h) >> 32)
                continue; /* another hash */
            t = term_at(ts, (uint32_t)ts->slot[j] - 1);
            if (same_key(t, op, sort, n, args, text))
                return made(ts, t);
        }
    }
    if (!(t = new_term(ts)) || (n && !(t->args = sg_arena_alloc(&ts->arena, n * sizeof *t->args))) ||
        (text && !(t->text = sg_arena_alloc(&ts->arena, strlen(text) + 1)))) {
        fail(ts, SG_ENOMEM, "out of memory making the solver's terms");
        return NULL;
    }
    for (i = 0; i < n; i++)
        t->args[i] = args[i];
    if (text)
        memcpy((char *)t->text, text, strlen(text) + 1);
    t->op = (uint8_t)op;
    t->sort = (uint8_t)sort;
    t->nargs = (uint32_t)n;
    if (op == SG_T_NUM && sort == SG_TS_INT && text)
        t->has_ival = sg_int_parse(&t->ival, text, strlen(text)) == 0;
    if (cons) {
        ts->slot[j] = slot_entry(h, t->id);
        ts->nslot++;
    }
    return made(ts, t);
}

/* ---- Store --------------------------------------------------------------------------------- */

int sg_terms_new(sg_terms **out, sg_ctxpool *contexts, sg_error *err)
{
    sg_terms *ts = sg__calloc(1, sizeof *ts);
    *out = ts;
    if (!ts)
        return sg_error_set(err, SG_ENOMEM, "out of memory creating the solver's term store");
    ts->contexts = contexts;
    return 0;
}

void sg_terms_free(sg_terms *ts)
{
    size_t i;
    if (!ts)
        return;
    if (ts->ctx)
        sg_ctxpool_give(ts->contexts, ts->ctx, !ts->no_reuse && ts->failed != SG_ERROR);
    for (i = 0; i < ts->nblocks; i++)
        sg_free(ts->blocks[i]);
    sg_arena_dispose(&ts->arena);
    SG_FREE_ALL(ts->blocks, ts->slot, ts->rec, ts->argv);
    sg_free(ts);
}

void sg_terms_no_reuse(sg_terms *ts)
{
    if (ts)
        ts->no_reuse = true;
}

/* ---- Builders ------------------------------------------------------------------------------ */

const sg_term *sg_t_num(sg_terms *ts, const char *text, sg_tsort sort)
{
    return text ? intern(ts, SG_T_NUM, sort, 0, NULL, text, true) : NULL;
}

const sg_term *sg_t_int(sg_terms *ts, sg_int v)
{
    char buf[SG_INT_STRLEN];
    return sg_t_num(ts, sg_int_format(buf, v), SG_TS_INT);
}

const sg_term *sg_t_const(sg_terms *ts, const char *name, sg_tsort sort)
{
    return name ? intern(ts, SG_T_CONST, sort, 0, NULL, name, true) : NULL;
}

const sg_term *sg_t_fresh(sg_terms *ts, const char *prefix, sg_tsort sort)
{
    return prefix ? intern(ts, SG_T_FRESH, sort, 0, NULL, prefix, false) : NULL;
}

const sg_term *sg_t_true(sg_terms *ts) { return intern(ts, SG_T_TRUE, SG_TS_BOOL, 0, NULL, NULL, true); }
const sg_term *sg_t_false(sg_terms *ts) { return intern(ts, SG_T_FALSE, SG_TS_BOOL, 0, NULL, NULL, true); }

/* The sort of an arithmetic result: Real when an argument is, unknown when one is unknown. */
static sg_tsort arith_sort(size_t n, const sg_term *const *args)
{
    sg_tsort s = SG_TS_INT;
    size_t i;
    for (i = 0; i < n; i++) {
        if (args[i]->sort == SG_TS_REAL)
            return SG_TS_REAL;
        if (args[i]->sort == SG_TS_UNKNOWN)
            s = SG_TS_UNKNOWN;
    }
    return s;
}

const sg_term *sg_t_app(sg_terms *ts, sg_top op, size_t n, const sg_term *const *args)
{
    sg_tsort sort;
    int arity; /* the number of arguments: exactly that, or -1: one or more, -2: any */
    size_t i;
    for (i = 0; i < n; i++)
        if (!args[i])
            return NULL;
    switch (op) {
    case SG_T_NOT: sort = SG_TS_BOOL, arity = 1; break;
    case SG_T_AND: case SG_T_OR: sort = SG_TS_BOOL, arity = -2; break;
    case SG_T_IMPLIES: case SG_T_EQ: case SG_T_LE: case SG_T_LT: case SG_T_GE: case SG_T_GT:
        sort = SG_TS_BOOL, arity = 2;
        break;
    case SG_T_ITE: sort = n == 3 ? (sg_tsort)args[1]->sort : SG_TS_UNKNOWN, arity = 3; break;
    case SG_T_TO_REAL: sort = SG_TS_REAL, arity = 1; break;
    case SG_T_TO_INT: sort = SG_TS_INT, arity = 1; break;
    case SG_T_MOD: sort = SG_TS_INT, arity = 2; break;
    case SG_T_POWER: sort = SG_TS_UNKNOWN, arity = 2; break; /* Z3's to say: sg_t_sort */
    case SG_T_UMINUS: sort = arith_sort(n, args), arity = 1; break;
    case SG_T_DIV: sort = arith_sort(n, args), arity = 2; break;
    case SG_T_ADD: case SG_T_SUB: case SG_T_MUL: sort = arith_sort(n, args), arity = -1; break;
    default: return NULL; /* leaves are made by their own builders */
    }
    if (arity >= 0 ? n != (size_t)arity : arity == -1 && n == 0)
        return NULL;
    return intern(ts, op, sort, n, args, NULL, true);
}

const sg_term *sg_t_app1(sg_terms *ts, sg_top op, const sg_term *a) { return a ? sg_t_app(ts, op, 1, &a) : NULL; }

const sg_term *sg_t_app2(sg_terms *ts, sg_top op, const sg_term *a, const sg_term *b)
{
    const sg_term *v[2];
    v[0] = a;
    v[1] = b;
    return a && b ? sg_t_app(ts, op, 2, v) : NULL;
}

const sg_term *sg_t_ite(sg_terms *ts, const sg_term *c, const sg_term *t, const sg_term *e)
{
    const sg_term *v[3];
    v[0] = c;
    v[1] = t;
    v[2] = e;
    return c && t && e ? sg_t_app(ts, SG_T_ITE, 3, v) : NULL;
}

/* The rebuilt terms of one substitution, by term id (open addressing; 0: empty), and the
 * references taken on rebuilt arguments: Z3 keeps an unreferenced term only until its next call
 * that makes one, so each stays referenced until its parent holds it. */
typedef struct subst_memo {
    uint32_t *key;
    const sg_term **val;
    size_t cap, n;
    const sg_term **held;
    size_t nheld, held_cap;
} subst_memo;

static const sg_term **memo_slot(subst_memo *m, const sg_term *t, bool *found)
{
    size_t j;
    for (j = (t->id * (size_t)0x9e3779b1u) & (m->cap - 1); m->key[j]; j = (j + 1) & (m->cap - 1))
        if (m->key[j] == t->id) {
            *found = true;
            return &m->val[j];
        }
    *found = false;
    m->key[j] = t->id;
    m->n++;
    return &m->val[j];
}

static bool memo_room(subst_memo *m)
{
    size_t cap, i, j;
    uint32_t *key;
    const sg_term **val;
    if (2 * (m->n + 1) <= m->cap)
        return true;
    cap = m->cap ? 2 * m->cap : 64;
    key = sg__calloc(cap, sizeof *key);
    val = sg__calloc(cap, sizeof *val);
    if (!key || !val) {
        SG_FREE_ALL(key, val);
        return false;
    }
    for (i = 0; i < m->cap; i++)
        if (m->key[i]) {
            for (j = (m->key[i] * (size_t)0x9e3779b1u) & (cap - 1); key[j]; j = (j + 1) & (cap - 1))
                ;
            key[j] = m->key[i];
            val[j] = m->val[i];
        }
    SG_FREE_ALL(m->key, m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return true;
}

/* `t` rebuilt bottom-up (recursion bounded by the term's depth, which its expression's bounds). */
static const sg_term *subst(sg_terms *ts, subst_memo *m, const sg_term *t, size_t n, const sg_term *const *from,
                            const sg_term *const *to)
{
    const sg_term **slot, *r = t, *small[4], **args = small;
    bool found, changed = false;
    size_t i;

    for (i = 0; i < n; i++)
        if (from[i] == t)
            return to[i];
    if (t->nargs == 0)
        return t;
    if (!memo_room(m)) {
        fail(ts, SG_ENOMEM, "out of memory substituting in a term");
        return NULL;
    }
    slot = memo_slot(m, t, &found);
    if (found)
        return *slot;
    if (t->nargs > 4 && !(args = sg__malloc(t->nargs * sizeof *args))) {
        fail(ts, SG_ENOMEM, "out of memory substituting in a term");
        return NULL;
    }
    for (i = 0; i < t->nargs && r; i++) {
        if (!(args[i] = subst(ts, m, t->args[i], n, from, to)))
            r = NULL;
        else if (args[i] != t->args[i]) {
            changed = true;
            if (sg__grow((void **)&m->held, &m->held_cap, m->nheld + 1, sizeof *m->held)) {
                fail(ts, SG_ENOMEM, "out of memory substituting in a term");
                r = NULL;
            } else {
                sg_t_ref(ts, args[i]);
                m->held[m->nheld++] = args[i];
            }
        }
    }
    if (r && changed)
        r = sg_t_app(ts, (sg_top)t->op, t->nargs, args);
    if (args != small)
        sg_free(args);
    /* the memo may have moved while the arguments were rebuilt */
    *memo_slot(m, t, &found) = r;
    return r;
}

const sg_term *sg_t_substitute(sg_terms *ts, const sg_term *t, size_t n, const sg_term *const *from,
                               const sg_term *const *to)
{
    subst_memo m;
    const sg_term *r;
    size_t i;
    if (!t)
        return NULL;
    for (i = 0; i < n; i++)
        if (!from[i] || !to[i])
            return NULL;
    memset(&m, 0, sizeof m);
    r = subst(ts, &m, t, n, from, to);
    for (i = 0; i < m.nheld; i++) /* the result holds what it needs */
        sg_t_unref(ts, m.held[i]);
    SG_FREE_ALL(m.key, m.val, m.held);
    return r;
}

void sg_t_ref(sg_terms *ts, const sg_term *t)
{
    if (!t || ts->failed == SG_ERROR) /* after a failed replay the counts are not Z3's */
        return;
    if (!ts->ctx)
        record(ts, t, EV_REF);
    else if (t->z)
        Z3_inc_ref(ts->ctx, t->z);
}

void sg_t_unref(sg_terms *ts, const sg_term *t)
{
    if (!t || ts->failed == SG_ERROR)
        return;
    if (!ts->ctx)
        record(ts, t, EV_UNREF);
    else if (t->z)
        Z3_dec_ref(ts->ctx, t->z);
}

/* ---- Evaluating at a point ------------------------------------------------------------------- */

#define EVAL_DEPTH 512

/* Euclidean division (SMT-LIB's div and mod): the remainder is Python's modulo by |b|, in
 * [0, |b|). false for b = 0 and past sg_int. */
static bool euclid(sg_int a, sg_int b, sg_int *q, sg_int *r)
{
    if (b == 0 || b == SG_INT_MIN || a == SG_INT_MIN || !sg__pymod(a, b < 0 ? -b : b, r) || !sg__sub(a, *r, q))
        return false;
    *q /= b; /* exact: a - r is a multiple of b */
    return true;
}

static int eval_at(const sg_term *t, sg_t_value_fn val, void *arg, size_t *budget, int depth, sg_int *out)
{
    sg_int a, b, q, r;
    size_t i;
    int e;

    if (*budget == 0 || depth > EVAL_DEPTH)
        return 0;
    --*budget;
    if (t->sort != SG_TS_BOOL && t->sort != SG_TS_INT)
        return 0; /* a Real, or a power (its sort is Z3's) */
    switch ((sg_top)t->op) {
    case SG_T_NUM: return sg_t_int_value(t, out) ? 1 : 0;
    case SG_T_CONST: case SG_T_FRESH:
        if ((e = val(arg, t, out)) < 0)
            return 0;
        if (e == 0)
            *out = 0;
        return 1;
    case SG_T_TRUE: *out = 1; return 1;
    case SG_T_FALSE: *out = 0; return 1;
    case SG_T_NOT:
        if (!eval_at(t->args[0], val, arg, budget, depth + 1, &a))
            return 0;
        *out = !a;
        return 1;
    case SG_T_AND: case SG_T_OR: case SG_T_IMPLIES: {
        /* and: false decides; or: true decides; implies: a false premise or a true conclusion */
        bool open = false;
        for (i = 0; i < t->nargs; i++) {
            sg_int decides = t->op == SG_T_AND ? 0 : t->op == SG_T_OR ? 1 : i == 0 ? 0 : 1;
            if (!eval_at(t->args[i], val, arg, budget, depth + 1, &a))
                open = true;
            else if (a == decides) {
                *out = t->op != SG_T_AND;
                return 1;
            }
        }
        if (open)
            return 0;
        *out = t->op == SG_T_AND;
        return 1;
    }
    case SG_T_ITE:
        if (!eval_at(t->args[0], val, arg, budget, depth + 1, &a))
            return 0;
        return eval_at(t->args[a ? 1 : 2], val, arg, budget, depth + 1, out);
    case SG_T_EQ: case SG_T_LE: case SG_T_LT: case SG_T_GE: case SG_T_GT:
        if (!eval_at(t->args[0], val, arg, budget, depth + 1, &a) ||
            !eval_at(t->args[1], val, arg, budget, depth + 1, &b))
            return 0;
        *out = t->op == SG_T_EQ ? a == b : t->op == SG_T_LE ? a <= b : t->op == SG_T_LT ? a < b
             : t->op == SG_T_GE ? a >= b : a > b;
        return 1;
    case SG_T_UMINUS:
        if (!eval_at(t->args[0], val, arg, budget, depth + 1, &a) || a == SG_INT_MIN)
            return 0;
        *out = -a;
        return 1;
    case SG_T_ADD: case SG_T_SUB: case SG_T_MUL:
        if ((t->nargs == 1 && t->op == SG_T_SUB) || !eval_at(t->args[0], val, arg, budget, depth + 1, &a))
            return 0; /* (one-argument subtraction: Z3's API and SMT-LIB read it differently) */
        for (i = 1; i < t->nargs; i++) {
            if (!eval_at(t->args[i], val, arg, budget, depth + 1, &b))
                return 0;
            if (!(t->op == SG_T_ADD ? sg__add(a, b, &a) : t->op == SG_T_SUB ? sg__sub(a, b, &a) : sg__mul(a, b, &a)))
                return 0;
        }
        *out = a;
        return 1;
    case SG_T_DIV: case SG_T_MOD:
        if (!eval_at(t->args[0], val, arg, budget, depth + 1, &a) ||
            !eval_at(t->args[1], val, arg, budget, depth + 1, &b) || !euclid(a, b, &q, &r))
            return 0;
        *out = t->op == SG_T_DIV ? q : r;
        return 1;
    case SG_T_TO_REAL: case SG_T_TO_INT: case SG_T_POWER: return 0;
    }
    return 0;
}

int sg_t_eval(const sg_term *t, sg_t_value_fn val, void *arg, size_t *budget, sg_int *out)
{
    return t ? eval_at(t, val, arg, budget, 0, out) : 0;
}

/* ---- Reading ------------------------------------------------------------------------------- */

sg_top sg_t_op(const sg_term *t) { return (sg_top)t->op; }
size_t sg_t_nargs(const sg_term *t) { return t ? t->nargs : 0; }
const sg_term *sg_t_arg(const sg_term *t, size_t j) { return t && j < t->nargs ? t->args[j] : NULL; }
unsigned sg_t_id(const sg_term *t) { return t ? t->id : 0; }
const char *sg_t_text(const sg_term *t) { return t ? t->text : NULL; }

bool sg_t_int_value(const sg_term *t, sg_int *out)
{
    if (!t || !t->has_ival)
        return false;
    *out = t->ival;
    return true;
}

sg_tsort sg_t_sort(sg_terms *ts, const sg_term *t)
{
    Z3_ast z;
    if (!t)
        return SG_TS_UNKNOWN;
    if (t->sort != SG_TS_UNKNOWN || !(z = sg_t_z3(ts, t)))
        return (sg_tsort)t->sort;
    /* Z3's answer is kept in the term (a cache: the term it names does not change) */
    switch (Z3_get_sort_kind(ts->ctx, Z3_get_sort(ts->ctx, z))) {
    case Z3_BOOL_SORT: ((sg_term *)t)->sort = SG_TS_BOOL; break;
    case Z3_INT_SORT: ((sg_term *)t)->sort = SG_TS_INT; break;
    case Z3_REAL_SORT: ((sg_term *)t)->sort = SG_TS_REAL; break;
    default: break;
    }
    return (sg_tsort)t->sort;
}

/* ---- Z3 ------------------------------------------------------------------------------------ */

bool sg_terms_live(const sg_terms *ts) { return ts && ts->ctx; }

Z3_context sg_terms_context(sg_terms *ts)
{
    size_t i;
    if (!ts)
        return NULL;
    if (ts->ctx)
        return ts->failed == SG_ERROR ? NULL : ts->ctx;
    if (ts->failed) /* a record cut short by a lack of memory cannot be replayed */
        return NULL;
    {
        sg_error e = SG_ERROR_INIT;
        if (sg_z3_load(&e) != 0) { /* libz3, at the first context (z3fns.h) */
            fail(ts, SG_ERROR, e.msg);
            return NULL;
        }
    }
    if (!(ts->ctx = sg_ctxpool_take(ts->contexts))) {
        /* (Z3_mk_context fails for want of memory: under serve's --worker-memory cap, say) */
        fail(ts, SG_ENOMEM, "out of memory: Z3 could not create a context");
        return NULL;
    }
    ts->sorts[SG_TS_BOOL] = Z3_mk_bool_sort(ts->ctx);
    ts->sorts[SG_TS_INT] = Z3_mk_int_sort(ts->ctx);
    ts->sorts[SG_TS_REAL] = Z3_mk_real_sort(ts->ctx);
    for (i = 0; i < ts->nrec; i++) {
        sg_term *t = term_at(ts, ts->rec[i] >> 2);
        switch (ts->rec[i] & 3) {
        case EV_MAKE:
            if (!(t->z = make(ts, t)))
                goto done; /* the context is deleted at the end: the references taken go with it */
            break;
        case EV_REF: Z3_inc_ref(ts->ctx, t->z); break;
        default: Z3_dec_ref(ts->ctx, t->z); break;
        }
    }
done:
    sg_free(ts->rec);
    ts->rec = NULL;
    ts->nrec = ts->rec_cap = 0;
    return ts->failed == SG_ERROR ? NULL : ts->ctx;
}

Z3_ast sg_t_z3(sg_terms *ts, const sg_term *t)
{
    if (!t || !sg_terms_context(ts))
        return NULL;
    return t->z;
}

int sg_terms_failed(const sg_terms *ts) { return ts ? ts->failed : 0; }

const char *sg_terms_error_msg(const sg_terms *ts) { return ts && ts->failed ? ts->msg : ""; }
