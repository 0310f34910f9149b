/*
 * test_diff.c - the differential test of the guard expression language.
 *
 * Tens of thousands of random, well-sorted expressions over every sg_kind, each
 * under three random assignments of its symbols (negatives and zero weighted up,
 * occasional values near 2^40 and 2^62 so the overflow paths run), are evaluated
 * three ways that must agree:
 *   - our evaluator, sg_expr_eval (128-bit, exact or SG_EOVERFLOW);
 *   - Python 3's own arithmetic: tests/oracle.py, run once over the whole batch,
 *     reads the sympy-form text with Python's `ast` and evaluates it strictly with
 *     Python ints, //, %, ** and fractions.Fraction, independently of the C code;
 *     it also runs the Python-form text through Python's eval() (the printer check);
 *   - Z3's model evaluation of the encoding, sg_smt_eval (unbounded, so it must
 *     give the exact value wherever the value is defined).
 * Each expression must also re-parse from its sympy form to the same pointer.
 *
 * Environment:
 *   SG_DIFF_SEED   PRNG seed (decimal or 0x-hex); default 0x5eed2024
 *   SG_DIFF_COUNT  number of expressions (default 30000, about 10 s with or without
 *                  sanitizers); lower it for a quick run, raise it for a soak
 *   SG_DIFF_KEEP   when set, keep the oracle's input and output files (paths printed)
 *   SG_DIFF_VERBOSE=1  also print the cases accepted through a 128-bit allowance
 *   SG_PYTHON      the interpreter to run (default "python3" from PATH); when it
 *                  cannot be run the test fails, it does not skip
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "expr/expr.h"
#include "solver/smt.h"
#include "test.h"

#ifndef SG_SOURCE_DIR
#define SG_SOURCE_DIR "."
#endif

/* About 10 s in all, most of it in the Python oracle; about the same under ASan+UBSan. */
#define DIFF_DEFAULT_COUNT 30000
#define DIFF_DEFAULT_SEED 0x5eed2024u

#define NSYM 4          /* symbols s0 .. s3 */
#define NASSIGN 3       /* assignments per expression */
#define MAX_DEPTH 5     /* depth of a generated expression (a leaf is 1) */
#define GEN_ATTEMPTS 8  /* constructor refusals tolerated per node before a fallback leaf */
#define MAX_SHOWN 20    /* mismatches printed in full per category */
#define MIN_COVERAGE_COUNT 5000 /* runs this long must contain every sg_kind */
#define VALUE_TEXT 128  /* sg_value_format buffer: two 128-bit numbers and a slash */

/* ---- random numbers: splitmix64, fully determined by the seed -------------------- */

typedef struct rng {
    uint64_t state;
} rng;

/* Next 64 random bits. */
static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi] (hi - lo small). */
static int rng_range(rng *r, int lo, int hi)
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* True with probability percent/100. */
static bool rng_chance(rng *r, int percent)
{
    return (int)(rng_next(r) % 100u) < percent;
}

/* ---- the expression generator ---------------------------------------------------------- */

/* What sort a generated subexpression must have. */
typedef enum want { W_INT, W_REAL, W_NUM, W_BOOL } want;

typedef struct gen {
    sg_pool *pool;
    rng r;
    const sg_expr *sym[NSYM];
    unsigned long refused[SG_KIND_COUNT];  /* constructor returned NULL, by kind */
    unsigned long invalid_total;           /* refusals with SG_EINVALID: well-sorted args refused */
    unsigned long wrong_sort;              /* an integer or boolean node of another sort */
    unsigned long fallbacks;               /* nodes replaced by a leaf after GEN_ATTEMPTS */
} gen;

static const sg_expr *gen_expr(gen *g, want w, int depth);

/* An integer literal in [-10, 10]. */
static const sg_expr *gen_int_literal(gen *g)
{
    return sg_expr_int(g->pool, rng_range(&g->r, -10, 10));
}

/* A non-integral rational p/q, 2 <= q <= 6, |p| <= 12. */
static const sg_expr *gen_rational(gen *g)
{
    int q = rng_range(&g->r, 2, 6);
    int p;
    do {
        p = rng_range(&g->r, -12, 12);
    } while (p % q == 0);
    return sg_expr_rational(g->pool, p, q);
}

/* +-int_oo. */
static const sg_expr *gen_int_inf(gen *g)
{
    return sg_expr_inf(g->pool, rng_chance(&g->r, 50) ? 1 : -1, true);
}

/* A leaf of sort `w`. */
static const sg_expr *gen_leaf(gen *g, want w)
{
    if (w == W_NUM)
        w = rng_chance(&g->r, 80) ? W_INT : W_REAL;
    switch (w) {
    case W_INT:
        if (rng_chance(&g->r, 65))
            return g->sym[rng_range(&g->r, 0, NSYM - 1)];
        return gen_int_literal(g);
    case W_REAL:
        return gen_rational(g);
    default:
        return sg_expr_bool(g->pool, rng_chance(&g->r, 50));
    }
}

/* A depth for a child of a node at `depth`: mostly one less, sometimes shallower. */
static int child_depth(gen *g, int depth)
{
    if (depth <= 2 || rng_chance(&g->r, 60))
        return depth - 1;
    return rng_range(&g->r, 1, depth - 1);
}

/* A divisor-like integer argument: often a small literal (zero included), else any int. */
static const sg_expr *gen_divisor(gen *g, int depth)
{
    if (rng_chance(&g->r, 40))
        return sg_expr_int(g->pool, rng_range(&g->r, -5, 5));
    return gen_expr(g, W_INT, child_depth(g, depth));
}

/*
 * Fill `args[0..n-1]` with numbers for an n-ary Add/Mul/Max/Min of sort `w`:
 * all integers for W_INT, at least one real for W_REAL. With `inf_ok`, one
 * argument is occasionally +-int_oo.
 */
static void gen_numbers(gen *g, want w, int depth, const sg_expr **args, size_t n, bool inf_ok)
{
    size_t real_at = (size_t)rng_range(&g->r, 0, (int)n - 1);
    for (size_t i = 0; i < n; i++) {
        want wi = w == W_INT ? W_INT : (w == W_REAL && i == real_at) ? W_REAL : W_NUM;
        args[i] = gen_expr(g, wi, child_depth(g, depth));
    }
    if (inf_ok && w == W_INT && rng_chance(&g->r, 4))
        args[rng_range(&g->r, 0, (int)n - 1)] = gen_int_inf(g);
}

/* One attempt at a node of sort `w` and depth at most `depth`; NULL when a constructor refused. */
static const sg_expr *gen_once(gen *g, want w, int depth)
{
    static const sg_kind int_kinds[] = {
        SG_ADD, SG_MUL, SG_POW, SG_POWNAT, SG_FLOORDIV, SG_CLEANDIV, SG_CEILDIV, SG_MOD,
        SG_PYMOD, SG_MODIDX, SG_TRUNC, SG_FLOOR, SG_CEIL, SG_MAX, SG_MIN, SG_WHERE,
        SG_PIECEWISE, SG_IDENTITY};
    static const sg_kind real_kinds[] = {
        SG_ADD, SG_MUL, SG_POW, SG_TRUEDIV, SG_TRUEDIV, SG_MAX, SG_MIN, SG_WHERE,
        SG_PIECEWISE, SG_IDENTITY};
    static const sg_kind bool_kinds[] = {
        SG_EQ, SG_NE, SG_LT, SG_LE, SG_GT, SG_GE, SG_AND, SG_OR, SG_NOT, SG_WHERE,
        SG_PIECEWISE, SG_IDENTITY};
    const sg_expr *args[8];
    size_t n = 0;
    sg_kind kind;

    if (w == W_NUM)
        w = rng_chance(&g->r, 70) ? W_INT : W_REAL;
    if (depth <= 1 || (w != W_BOOL && rng_chance(&g->r, 15)) || (w == W_BOOL && rng_chance(&g->r, 3)))
        return gen_leaf(g, w);

    if (w == W_INT)
        kind = int_kinds[rng_range(&g->r, 0, (int)(sizeof int_kinds / sizeof *int_kinds) - 1)];
    else if (w == W_REAL)
        kind = real_kinds[rng_range(&g->r, 0, (int)(sizeof real_kinds / sizeof *real_kinds) - 1)];
    else
        kind = bool_kinds[rng_range(&g->r, 0, (int)(sizeof bool_kinds / sizeof *bool_kinds) - 1)];

    switch (kind) {
    case SG_ADD:
    case SG_MUL:
    case SG_MAX:
    case SG_MIN:
        n = (size_t)rng_range(&g->r, 2, rng_chance(&g->r, 20) ? 4 : 3);
        gen_numbers(g, w, depth, args, n, kind != SG_MUL);
        break;
    case SG_POW:
        args[n++] = gen_expr(g, w, child_depth(g, depth));
        args[n++] = sg_expr_int(g->pool, rng_range(&g->r, 2, 4));
        break;
    case SG_POWNAT: {
        int d = depth - 1 < 2 ? depth - 1 : 2;
        args[n++] = gen_expr(g, W_INT, d);
        if (rng_chance(&g->r, 40))
            args[n++] = sg_expr_int(g->pool, rng_range(&g->r, 0, 5));
        else
            args[n++] = gen_expr(g, W_INT, d);
        break;
    }
    case SG_FLOORDIV:
    case SG_CLEANDIV:
    case SG_CEILDIV:
    case SG_MOD:
    case SG_PYMOD:
        args[n++] = gen_expr(g, W_INT, child_depth(g, depth));
        args[n++] = gen_divisor(g, depth);
        break;
    case SG_MODIDX:
        args[n++] = gen_expr(g, W_INT, child_depth(g, depth));
        args[n++] = gen_divisor(g, depth);
        args[n++] = gen_divisor(g, depth);
        break;
    case SG_TRUEDIV:
        args[n++] = gen_expr(g, W_NUM, child_depth(g, depth));
        args[n++] = rng_chance(&g->r, 30) ? gen_divisor(g, depth)
                                           : gen_expr(g, W_NUM, child_depth(g, depth));
        break;
    case SG_TRUNC:
    case SG_FLOOR:
    case SG_CEIL:
        args[n++] = gen_expr(g, rng_chance(&g->r, 70) ? W_REAL : W_NUM, child_depth(g, depth));
        break;
    case SG_WHERE:
        args[n++] = gen_expr(g, W_BOOL, child_depth(g, depth));
        args[n++] = gen_expr(g, w, child_depth(g, depth));
        args[n++] = gen_expr(g, w, child_depth(g, depth));
        break;
    case SG_PIECEWISE: {
        size_t pairs = (size_t)rng_range(&g->r, 1, 3);
        for (size_t i = 0; i < pairs; i++) {
            args[n++] = gen_expr(g, w, child_depth(g, depth));
            if (i + 1 == pairs && rng_chance(&g->r, 50))
                args[n++] = sg_expr_bool(g->pool, true);
            else
                args[n++] = gen_expr(g, W_BOOL, child_depth(g, depth));
        }
        break;
    }
    case SG_IDENTITY:
        args[n++] = gen_expr(g, w, child_depth(g, depth));
        break;
    case SG_EQ:
    case SG_NE:
        if (rng_chance(&g->r, 20)) {
            args[n++] = gen_expr(g, W_BOOL, child_depth(g, depth));
            args[n++] = gen_expr(g, W_BOOL, child_depth(g, depth));
            break;
        }
        /* fall through */
    case SG_LT:
    case SG_LE:
    case SG_GT:
    case SG_GE:
        args[n++] = gen_expr(g, W_NUM, child_depth(g, depth));
        args[n++] = gen_expr(g, W_NUM, child_depth(g, depth));
        if (rng_chance(&g->r, 4))
            args[rng_range(&g->r, 0, 1)] = gen_int_inf(g);
        break;
    case SG_AND:
    case SG_OR:
        n = (size_t)rng_range(&g->r, 2, 3);
        for (size_t i = 0; i < n; i++)
            args[i] = gen_expr(g, W_BOOL, child_depth(g, depth));
        break;
    case SG_NOT:
        args[n++] = gen_expr(g, W_BOOL, child_depth(g, depth));
        break;
    default:
        return gen_leaf(g, w);
    }

    const sg_expr *e = sg_expr_apply(g->pool, kind, args, n);
    if (!e) {
        const sg_error *perr = sg_pool_error(g->pool);
        g->refused[kind]++;
        if (perr && perr->code == SG_EINVALID && g->invalid_total++ < MAX_SHOWN) {
            fprintf(stderr, "test_diff: %s refused well-sorted arguments: %s\n",
                    sg_kind_name(kind), perr->msg);
            for (size_t i = 0; i < n; i++) {
                char *t = NULL;
                sg_expr_print(&t, args[i], SG_SYNTAX_SYMPY, NULL, NULL, NULL);
                fprintf(stderr, "    argument %zu: %s (sort %d)\n", i + 1, t ? t : "?",
                        (int)sg_expr_sort(args[i]));
                sg_free(t);
            }
        }
    }
    return e;
}

/*
 * A random expression of sort `w` and depth at most `depth`, never NULL: a
 * constructor may refuse (constant division by zero, an infinity that cannot
 * fold, ...); then the pool error is cleared and the node is generated again,
 * falling back to a leaf after GEN_ATTEMPTS refusals.
 */
static const sg_expr *gen_expr(gen *g, want w, int depth)
{
    for (int attempt = 0; attempt < GEN_ATTEMPTS; attempt++) {
        const sg_expr *e = gen_once(g, w, depth);
        if (e && ((w == W_INT && sg_expr_sort(e) != SG_SORT_INT) ||
                  (w == W_BOOL && sg_expr_sort(e) != SG_SORT_BOOL))) {
            char *t = NULL;
            sg_expr_print(&t, e, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
            if (g->wrong_sort++ < MAX_SHOWN)
                fprintf(stderr, "test_diff: built from %s arguments, %s has sort %d\n",
                        w == W_INT ? "integer" : "boolean", t ? t : "?", (int)sg_expr_sort(e));
            sg_free(t);
        }
        if (e)
            return e;
        sg_pool_clear_error(g->pool);
    }
    g->fallbacks++;
    return gen_leaf(g, w == W_NUM ? W_INT : w);
}

/* A symbol value: mostly small, weighted on -1, 0, 1, sometimes near 2^40 or 2^62. */
static sg_int gen_value(rng *r)
{
    static const int shifts[] = {20, 31, 40, 62, 62, 63};
    int pick = rng_range(r, 0, 99);
    if (pick < 7) {
        int sh = shifts[rng_range(r, 0, (int)(sizeof shifts / sizeof *shifts) - 1)];
        sg_int v = (sg_int)1 << sh;
        v += rng_range(r, -2, 2);
        return rng_chance(r, 50) ? -v : v;
    }
    if (pick < 37)
        return rng_range(r, -1, 1);
    return rng_range(r, -20, 20);
}

/* ---- the cases and the oracle's answers ------------------------------------------------ */

typedef enum ostatus { O_MISSING, O_VALUE, O_OVERFLOW, O_UNDEF, O_HUGE, O_ERROR } ostatus;

typedef struct diff_expr {
    const sg_expr *e;
    char *sympy;        /* sympy form, NULL when printing failed */
    char *python;       /* python form, NULL when printing failed */
    bool big_exponent;  /* has a literal exponent over 4096 (no finite Z3 encoding) */
} diff_expr;

typedef struct diff_case {
    size_t expr;           /* index into the expressions */
    sg_int val[NSYM];      /* the assignment */
    int crc;               /* sg_expr_eval's status ... */
    sg_value cval;         /* ... and value */
    ostatus ost;           /* the oracle's status ... */
    char *ovalue;          /* ... value (or reason for O_ERROR) ... */
    char oflags[8];        /* ... flags (letters g, o, f, h: see oracle.py) ... */
    char *pycheck;         /* ... and python-form verdict */
} diff_case;

/* Everything the RUN() functions look at (test.h's RUN takes no arguments). */
static struct diff_state {
    unsigned long long seed;
    size_t nexpr;
    diff_expr *exprs;
    size_t ncase;
    diff_case *cases;
    sg_pool *pool;
    sg_pool *fresh;  /* a second pool for parsing the printed forms only */
    sg_smt *smt;
    gen g;
    bool kinds_seen[SG_KIND_COUNT];
    bool oracle_ran;
    bool verbose;  /* SG_DIFF_VERBOSE: also show the cases accepted by an allowance */
    char oracle_failure[4096];
    unsigned long print_failures, roundtrip_failures, fresh_failures;
    unsigned long outcome[O_ERROR + 1];
} S;

/* Does the oracle's flag string contain `f`? */
static bool has_flag(const diff_case *c, char f)
{
    return strchr(c->oflags, f) != NULL;
}

/* Mark every kind occurring in `e` (recursively) and note exponents Z3 cannot encode. */
static void mark_kinds(diff_expr *x, const sg_expr *e)
{
    sg_kind k = sg_expr_kind(e);
    S.kinds_seen[k] = true;
    if ((k == SG_POW || k == SG_POWNAT) && sg_expr_kind(sg_expr_arg(e, 1)) == SG_INT &&
        sg_expr_int_value(sg_expr_arg(e, 1)) > 4096)
        x->big_exponent = true;
    for (size_t i = 0; i < sg_expr_nargs(e); i++)
        mark_kinds(x, sg_expr_arg(e, i));
}

/* Render a status/value pair for messages: the value, or the error's name. */
static const char *result_text(char *buf, size_t cap, int rc, const sg_value *v)
{
    if (rc == 0)
        sg_value_format(buf, cap, v);
    else
        snprintf(buf, cap, "<%s>", sg_strerror(rc));
    return buf;
}

/* The assignment of case `c` as "s0=V;s1=V;..." into `buf`. */
static const char *assignment_text(char *buf, size_t cap, const diff_case *c)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NSYM && used < cap; i++) {
        char num[SG_INT_STRLEN];
        int k = snprintf(buf + used, cap - used, "%ss%d=%s", i ? ";" : "", i,
                         sg_int_format(num, c->val[i]));
        if (k < 0)
            break;
        used += (size_t)k;
    }
    return buf;
}

static const char *ostatus_name(ostatus s)
{
    static const char *names[] = {"missing", "value", "overflow", "undef", "huge", "error"};
    return names[s];
}

/* Print case `c` in full to stderr, with `what` disagreed and the three answers. */
static void show_case(const char *what, unsigned long nth, const diff_case *c, const char *smt_text)
{
    const diff_expr *x = &S.exprs[c->expr];
    char asg[256], cbuf[VALUE_TEXT];
    fprintf(stderr, "test_diff: %s mismatch #%lu\n", what, nth);
    fprintf(stderr, "    sympy:  %s\n", x->sympy ? x->sympy : "(print failed)");
    fprintf(stderr, "    python: %s\n", x->python ? x->python : "(print failed)");
    fprintf(stderr, "    at      %s\n", assignment_text(asg, sizeof asg, c));
    fprintf(stderr, "    sg_expr_eval: %s\n", result_text(cbuf, sizeof cbuf, c->crc, &c->cval));
    fprintf(stderr, "    oracle:       %s %s [flags %s] python-form %s\n", ostatus_name(c->ost),
            c->ovalue ? c->ovalue : "-", c->oflags, c->pycheck ? c->pycheck : "-");
    if (smt_text)
        fprintf(stderr, "    sg_smt_eval:  %s\n", smt_text);
}

/* ---- setup: generate, print, evaluate in C ---------------------------------------------- */

/* Read an unsigned number from the environment variable `name`, or return `dflt`. */
static unsigned long long env_number(const char *name, unsigned long long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (!end || *end) {
        fprintf(stderr, "test_diff: ignoring %s=%s (not a number)\n", name, s);
        return dflt;
    }
    return v;
}

/* True when the printed text can go on one tab-separated line. */
static bool one_line(const char *s)
{
    return s && !strpbrk(s, "\t\n\r");
}

/*
 * Parse the sympy form of `x` in the second pool, which only ever sees parsed
 * text: the result must have the same sort and print the same. (In the first
 * pool a parse can return an existing node, so this catches a node whose sort
 * depends on how it was built rather than on what it prints as.)
 */
static void check_fresh_roundtrip(const diff_expr *x)
{
    const sg_expr *back = NULL;
    char *again = NULL;
    sg_error err = SG_ERROR_INIT;
    int rc = sg_expr_parse(&back, S.fresh, x->sympy, strlen(x->sympy), &err);
    if (rc == 0)
        rc = sg_expr_print(&again, back, SG_SYNTAX_SYMPY, NULL, NULL, &err);
    if (rc != 0 || strcmp(again, x->sympy) != 0 || sg_expr_sort(back) != sg_expr_sort(x->e)) {
        if (S.fresh_failures++ < MAX_SHOWN)
            fprintf(stderr,
                    "test_diff: fresh-pool round-trip mismatch #%lu\n    printed:  %s (sort %d)\n"
                    "    parsed:   %s (sort %d)\n    status:   %s%s%s\n",
                    S.fresh_failures, x->sympy, (int)sg_expr_sort(x->e), again ? again : "(none)",
                    back ? (int)sg_expr_sort(back) : -1, sg_strerror(rc), rc ? ": " : "",
                    rc ? err.msg : "");
    }
    sg_free(again);
    sg_pool_clear_error(S.fresh);
}

/* Generate the expressions and their cases and evaluate each case with sg_expr_eval. */
static int setup(void)
{
    sg_error err = SG_ERROR_INIT;
    if (sg_pool_new(&S.pool, &err) != 0 || sg_pool_new(&S.fresh, &err) != 0 ||
        sg_smt_new(&S.smt, S.pool, &err) != 0) {
        fprintf(stderr, "test_diff: setup failed: %s\n", err.msg);
        return -1;
    }
    S.g.pool = S.pool;
    S.g.r.state = S.seed;
    for (int i = 0; i < NSYM; i++) {
        char name[8];
        int len = snprintf(name, sizeof name, "s%d", i);
        S.g.sym[i] = sg_expr_symbol(S.pool, name, (size_t)len);
        if (!S.g.sym[i] || sg_expr_symbol_index(S.g.sym[i]) != (uint32_t)i) {
            fprintf(stderr, "test_diff: symbol s%d did not get index %d\n", i, i);
            return -1;
        }
    }
    S.exprs = calloc(S.nexpr, sizeof *S.exprs);
    S.cases = calloc(S.nexpr * NASSIGN, sizeof *S.cases);
    if (!S.exprs || !S.cases)
        return -1;

    for (size_t i = 0; i < S.nexpr; i++) {
        static const want tops[] = {W_BOOL, W_BOOL, W_INT, W_INT, W_REAL};
        want w = tops[rng_range(&S.g.r, 0, (int)(sizeof tops / sizeof *tops) - 1)];
        diff_expr *x = &S.exprs[i];
        x->e = gen_expr(&S.g, w, MAX_DEPTH);
        mark_kinds(x, x->e);

        sg_error_clear(&err);
        if (sg_expr_print(&x->sympy, x->e, SG_SYNTAX_SYMPY, NULL, NULL, &err) != 0 ||
            !one_line(x->sympy)) {
            if (S.print_failures++ < MAX_SHOWN)
                fprintf(stderr, "test_diff: sympy print failed (id %u): %s\n", sg_expr_id(x->e),
                        err.msg);
            sg_free(x->sympy);
            x->sympy = NULL;
        }
        sg_error_clear(&err);
        if (sg_expr_print(&x->python, x->e, SG_SYNTAX_PYTHON, NULL, NULL, &err) != 0 ||
            !one_line(x->python)) {
            if (S.print_failures++ < MAX_SHOWN)
                fprintf(stderr, "test_diff: python print failed for %s: %s\n",
                        x->sympy ? x->sympy : "?", err.msg);
            sg_free(x->python);
            x->python = NULL;
        }
        if (x->sympy) {
            const sg_expr *back = NULL;
            sg_error_clear(&err);
            int rc = sg_expr_parse(&back, S.pool, x->sympy, strlen(x->sympy), &err);
            if (rc != 0 || back != x->e) {
                char *again = NULL;
                if (back)
                    sg_expr_print(&again, back, SG_SYNTAX_SYMPY, NULL, NULL, NULL);
                if (S.roundtrip_failures++ < MAX_SHOWN)
                    fprintf(stderr,
                            "test_diff: round-trip mismatch #%lu\n    printed:  %s\n"
                            "    parsed:   %s\n    status:   %s%s%s\n",
                            S.roundtrip_failures, x->sympy, again ? again : "(none)",
                            sg_strerror(rc), rc ? ": " : "", rc ? err.msg : "");
                sg_free(again);
            }
            sg_pool_clear_error(S.pool);
            check_fresh_roundtrip(x);
        }
        for (int k = 0; k < NASSIGN; k++) {
            diff_case *c = &S.cases[S.ncase++];
            c->expr = i;
            for (int s = 0; s < NSYM; s++)
                c->val[s] = gen_value(&S.g.r);
            sg_error_clear(&err);
            c->crc = sg_expr_eval(&c->cval, S.pool, x->e, c->val, NSYM, &err);
        }
    }
    return 0;
}

/* ---- the oracle ------------------------------------------------------------------------- */

/* Make an empty temporary file from `tmpl` (modified in place); false on failure. */
static bool make_temp(char *tmpl)
{
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* Write every case whose expression printed to `path`, one tab-separated line each. */
static bool write_oracle_input(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    for (size_t i = 0; i < S.ncase; i++) {
        const diff_case *c = &S.cases[i];
        const diff_expr *x = &S.exprs[c->expr];
        char asg[256];
        if (!x->sympy)
            continue;
        fprintf(f, "%zu\t%s\t%s\t%s\n", i, x->sympy, x->python ? x->python : "?",
                assignment_text(asg, sizeof asg, c));
    }
    return fclose(f) == 0;
}

/* Duplicate `n` bytes of `s` as a C string. */
static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* Parse one answer line "id status value flags pycheck" into its case. */
static void read_answer(char *line)
{
    char *field[5];
    size_t nf = 0;
    char *p = line;
    line[strcspn(line, "\n")] = '\0';
    while (nf < 5) {
        field[nf++] = p;
        p = strchr(p, '\t');
        if (!p)
            break;
        *p++ = '\0';
    }
    if (nf != 5)
        return;
    char *end = NULL;
    unsigned long long id = strtoull(field[0], &end, 10);
    if (*end || id >= S.ncase)
        return;
    diff_case *c = &S.cases[id];
    static const struct { const char *name; ostatus st; } names[] = {
        {"value", O_VALUE}, {"overflow", O_OVERFLOW}, {"undef", O_UNDEF},
        {"huge", O_HUGE}, {"error", O_ERROR}};
    c->ost = O_ERROR;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(field[1], names[i].name) == 0)
            c->ost = names[i].st;
    c->ovalue = dup_n(field[2], strlen(field[2]));
    snprintf(c->oflags, sizeof c->oflags, "%s", field[3]);
    c->pycheck = dup_n(field[4], strlen(field[4]));
}

/* Run tests/oracle.py over every case; on failure describe it in S.oracle_failure. */
static void run_oracle(void)
{
    const char *tmpdir = getenv("TMPDIR");
    const char *python = getenv("SG_PYTHON");
    char in[512], out[512], cmd[2048];
    bool keep = getenv("SG_DIFF_KEEP") != NULL;
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    if (!python || !*python)
        python = "python3";
    snprintf(in, sizeof in, "%s/sg_diff_in_XXXXXX", tmpdir);
    snprintf(out, sizeof out, "%s/sg_diff_out_XXXXXX", tmpdir);
    if (!make_temp(in) || !make_temp(out)) {
        snprintf(S.oracle_failure, sizeof S.oracle_failure, "cannot create temporary files in %s",
                 tmpdir);
        goto cleanup; /* removing a template that was never made is harmless */
    }
    if (!write_oracle_input(in)) {
        snprintf(S.oracle_failure, sizeof S.oracle_failure, "cannot write %s", in);
        goto cleanup;
    }
    snprintf(cmd, sizeof cmd, "'%s' '%s/tests/oracle.py' < '%s' > '%s'", python, SG_SOURCE_DIR,
             in, out);
    int status = system(cmd);
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
        snprintf(S.oracle_failure, sizeof S.oracle_failure, "%s (exit status %d)%s", cmd, code,
                 code == 127 ? ": python3 is not installed or not on PATH" : "");
        goto cleanup;
    }
    FILE *f = fopen(out, "r");
    if (!f) {
        snprintf(S.oracle_failure, sizeof S.oracle_failure, "cannot read %s", out);
        goto cleanup;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) != -1)
        read_answer(line);
    free(line);
    fclose(f);
    S.oracle_ran = true;
cleanup:
    if (keep) {
        printf("test_diff: oracle input %s, output %s\n", in, out);
    } else {
        remove(in);
        remove(out);
    }
}

/* ---- the comparisons --------------------------------------------------------------------- */

/* sg_value `v` (status `rc`) formatted equals the oracle's exact value? */
static bool same_value(int rc, const sg_value *v, const diff_case *c)
{
    char buf[VALUE_TEXT];
    if (rc != 0 || !c->ovalue)
        return false;
    sg_value_format(buf, sizeof buf, v);
    return strcmp(buf, c->ovalue) == 0;
}

/*
 * Does sg_expr_eval's answer agree with the oracle? Besides the exact match, a
 * 128-bit evaluator may report overflow in the grey zone (magnitudes near 2^127
 * where the order of operations decides), may give the exact value where only a
 * differently ordered intermediate overflowed, and may report overflow instead
 * of undefined where an overflowing value sits next to the undefined one.
 * `*lenient` tells whether one of these allowances was used.
 */
static bool eval_agrees(const diff_case *c, bool *lenient)
{
    *lenient = false;
    switch (c->ost) {
    case O_VALUE:
        if (same_value(c->crc, &c->cval, c))
            return true;
        *lenient = true;
        return c->crc == SG_EOVERFLOW && has_flag(c, 'g');
    case O_OVERFLOW:
        if (c->crc == SG_EOVERFLOW)
            return true;
        *lenient = true;
        return has_flag(c, 'f') && has_flag(c, 'g') && same_value(c->crc, &c->cval, c);
    case O_UNDEF:
        if (c->crc == SG_EUNDEFINED)
            return true;
        *lenient = true;
        return c->crc == SG_EOVERFLOW && (has_flag(c, 'o') || has_flag(c, 'g'));
    case O_HUGE:
        return c->crc == SG_EOVERFLOW || c->crc == SG_EUNDEFINED;
    default:
        return false;
    }
}

static void test_oracle_ran(void)
{
    CHECK_MSG(S.oracle_ran, "the Python oracle could not run: %s", S.oracle_failure);
    unsigned long missing = 0, errors = 0;
    for (size_t i = 0; i < S.ncase; i++) {
        const diff_case *c = &S.cases[i];
        if (!S.exprs[c->expr].sympy)
            continue;
        if (c->ost == O_MISSING)
            missing++;
        if (c->ost == O_ERROR && errors++ < MAX_SHOWN)
            show_case("oracle could not evaluate", errors, c, NULL);
    }
    CHECK_MSG(!S.oracle_ran || missing == 0, "%lu cases have no answer from the oracle", missing);
    CHECK_MSG(errors == 0, "the oracle could not evaluate %lu cases", errors);
}

static void test_print_and_roundtrip(void)
{
    CHECK_MSG(S.print_failures == 0, "%lu expressions failed to print", S.print_failures);
    CHECK_MSG(S.roundtrip_failures == 0, "%lu of %zu expressions do not re-parse to themselves",
              S.roundtrip_failures, S.nexpr);
    CHECK_MSG(S.fresh_failures == 0, "%lu of %zu expressions re-parse in a fresh pool to a "
              "different sort or text", S.fresh_failures, S.nexpr);
}

static void test_generator(void)
{
    /* A short run (SG_DIFF_COUNT) need not reach every kind; the default one must. */
    for (int k = 0; k < SG_KIND_COUNT && S.nexpr >= MIN_COVERAGE_COUNT; k++)
        CHECK_MSG(S.kinds_seen[k], "no generated expression contains a %s (kind %d)",
                  sg_kind_name((sg_kind)k), k);
    CHECK_MSG(S.g.invalid_total == 0, "constructors refused %lu well-sorted argument lists",
              S.g.invalid_total);
    CHECK_MSG(S.g.wrong_sort == 0, "%lu nodes built from integer (boolean) arguments are not "
              "integer (boolean)", S.g.wrong_sort);
}

static void test_eval_vs_python(void)
{
    unsigned long bad = 0, lenient = 0, compared = 0;
    for (size_t i = 0; i < S.ncase; i++) {
        const diff_case *c = &S.cases[i];
        bool used_allowance;
        if (c->ost == O_MISSING || c->ost == O_ERROR)
            continue;
        compared++;
        S.outcome[c->ost]++;
        if (eval_agrees(c, &used_allowance)) {
            lenient += used_allowance;
            if (used_allowance && S.verbose)
                show_case("(accepted by a 128-bit allowance) sg_expr_eval vs Python", lenient, c,
                          NULL);
        } else if (++bad <= MAX_SHOWN) {
            show_case("sg_expr_eval vs Python", bad, c, NULL);
        }
    }
    printf("test_diff: sg_expr_eval vs Python: %lu cases compared (%lu values, %lu overflow, "
           "%lu undefined, %lu huge), %lu via a 128-bit allowance, %lu mismatches\n",
           compared, S.outcome[O_VALUE], S.outcome[O_OVERFLOW], S.outcome[O_UNDEF],
           S.outcome[O_HUGE], lenient, bad);
    CHECK_MSG(bad == 0, "%lu cases where sg_expr_eval disagrees with Python", bad);
    CHECK_MSG(compared > 0 || !S.oracle_ran, "nothing was compared");
}

/*
 * Z3's model evaluation against the oracle. Z3 is exact, so where every
 * intermediate value fits in 128 bits it must give exactly the oracle's value
 * (or undefined); where some intermediate does not, it may give the exact value
 * (or undefined) or report SG_EOVERFLOW (smt.c does not expand powers beyond an
 * exponent of 4096); a final value beyond 128 bits must be SG_EOVERFLOW.
 * One documented exception is counted, not failed: a literal exponent over 4096
 * has no finite encoding (SG_EUNSUPPORTED, smt.h). Cases where Python met a
 * power too large to compute (flag h) are not given to Z3 either.
 */
static void test_smt_vs_python(void)
{
    unsigned long bad = 0, compared = 0, inf_skipped = 0, unsupported = 0;
    for (size_t i = 0; i < S.ncase; i++) {
        const diff_case *c = &S.cases[i];
        const sg_expr *e = S.exprs[c->expr].e;
        sg_value v;
        sg_error err = SG_ERROR_INIT;
        char text[VALUE_TEXT + SG_ERROR_MSG_MAX + 8];
        bool ok;
        /* A power too large for Python is too large for Z3's evaluator as well. */
        if (c->ost == O_MISSING || c->ost == O_ERROR || c->ost == O_HUGE || has_flag(c, 'h'))
            continue;
        int rc = sg_smt_eval(&v, S.smt, e, c->val, NSYM, &err);
        const diff_expr *x = &S.exprs[c->expr];
        if (rc == SG_EUNSUPPORTED && x->big_exponent) {
            unsupported++;
            continue;
        }
        if (sg_expr_kind(e) == SG_INF) {
            /* An infinity survives only as a whole expression, which Z3 cannot encode. */
            ok = rc == SG_EUNSUPPORTED;
            inf_skipped++;
        } else if (c->ost == O_UNDEF) {
            ok = rc == SG_EUNDEFINED || (rc == SG_EOVERFLOW && has_flag(c, 'o'));
        } else if (c->ost == O_VALUE) {
            ok = same_value(rc, &v, c);
        } else if (has_flag(c, 'f')) {
            /* an intermediate left 128 bits: exact, or an honest overflow */
            ok = same_value(rc, &v, c) || rc == SG_EOVERFLOW;
        } else {
            ok = rc == SG_EOVERFLOW; /* Z3 is exact; the value just does not fit an sg_value */
        }
        compared++;
        if (!ok && ++bad <= MAX_SHOWN) {
            char vbuf[VALUE_TEXT];
            snprintf(text, sizeof text, "%s%s%s", result_text(vbuf, sizeof vbuf, rc, &v),
                     rc ? " " : "", rc ? err.msg : "");
            show_case("sg_smt_eval vs Python", bad, c, text);
        }
    }
    printf("test_diff: sg_smt_eval vs Python: %lu cases compared (%lu whole infinities), "
           "%lu mismatches; %lu not compared (a literal exponent over 4096)\n", compared,
           inf_skipped, bad, unsupported);
    CHECK_MSG(bad == 0, "%lu cases where Z3's evaluation of the encoding disagrees with Python",
              bad);
    CHECK_MSG(compared > 0 || !S.oracle_ran, "nothing was compared");
}

static void test_python_printer(void)
{
    unsigned long bad = 0, checked = 0;
    for (size_t i = 0; i < S.ncase; i++) {
        const diff_case *c = &S.cases[i];
        if (!c->pycheck || strcmp(c->pycheck, "skip") == 0)
            continue;
        checked++;
        if (strcmp(c->pycheck, "ok") != 0 && ++bad <= MAX_SHOWN)
            show_case("python-form eval()", bad, c, NULL);
    }
    printf("test_diff: python form through eval(): %lu cases checked, %lu mismatches\n", checked,
           bad);
    CHECK_MSG(bad == 0, "%lu cases where the python form evaluates differently", bad);
    CHECK_MSG(checked > 0 || !S.oracle_ran, "no python-form case was checked");
}

/* Free everything setup() and run_oracle() made. */
static void teardown(void)
{
    for (size_t i = 0; i < S.ncase; i++) {
        free(S.cases[i].ovalue);
        free(S.cases[i].pycheck);
    }
    for (size_t i = 0; S.exprs && i < S.nexpr; i++) {
        sg_free(S.exprs[i].sympy);
        sg_free(S.exprs[i].python);
    }
    free(S.cases);
    free(S.exprs);
    sg_smt_free(S.smt);
    sg_pool_free(S.pool);
    sg_pool_free(S.fresh);
}

int main(void)
{
    S.seed = env_number("SG_DIFF_SEED", DIFF_DEFAULT_SEED);
    S.nexpr = (size_t)env_number("SG_DIFF_COUNT", DIFF_DEFAULT_COUNT);
    S.verbose = env_number("SG_DIFF_VERBOSE", 0) != 0;
    printf("test_diff: seed 0x%llx, %zu expressions x %d assignments (SG_DIFF_SEED, "
           "SG_DIFF_COUNT)\n", S.seed, S.nexpr, NASSIGN);
    clock_t t0 = clock();
    if (setup() != 0) {
        teardown();
        printf("0 passed, 1 failed\n");
        return 1;
    }
    printf("test_diff: generated and evaluated in %.1fs; %zu nodes in the pool; %lu fallback "
           "leaves\n", (double)(clock() - t0) / CLOCKS_PER_SEC, sg_pool_size(S.pool),
           S.g.fallbacks);
    run_oracle();

    RUN(test_generator);
    RUN(test_print_and_roundtrip);
    RUN(test_oracle_ran);
    RUN(test_eval_vs_python);
    RUN(test_smt_vs_python);
    RUN(test_python_printer);
    printf("test_diff: total %.1fs CPU in this process (the oracle runs in its own)\n",
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    teardown();
    return test_summary();
}
