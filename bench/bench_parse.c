/*
 * bench_parse.c - micro-benchmark of the expression front end on real torch
 * guards: loads every expression string of the reference corpus once (through
 * tests/corpus_walk.c), then times N repetitions of
 *   1. parse every expression into a fresh pool,
 *   2. parse + print (sympy form),
 *   3. parse + Z3 encode (one sg_smt per repetition, sg_smt_encode per expression),
 * and, as a reference, runs the `z3` binary on the SMT-LIB text of all the
 * expressions (sg_smt_to_smtlib) to compare with phase 3. Prints rates,
 * expression and node counts, and peak RSS. See bench/README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "expr/expr.h"
#include "solver/smt.h"

#include "corpus_walk.h"
#include "bench_util.h"

#ifndef SG_CORPUS
#define SG_CORPUS "tests/corpus"
#endif

#define DEFAULT_REPS 20
#define Z3_RUNS 3

/* The corpus's expression texts. */
typedef struct texts {
    char **s;
    size_t *len;
    size_t n, cap;
    size_t bytes;
} texts;

/* One timed phase: seconds of each repetition. */
typedef struct phase {
    const char *name;
    double *secs;
    size_t reps;
} phase;


/* Walk callback: keep a copy of every expression text. */
static int collect(const corpus_case *c, const corpus_expr *x, void *payload)
{
    texts *t = payload;
    (void)c;
    if (t->n == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        char **ns = realloc(t->s, ncap * sizeof *ns);
        if (!ns)
            return -1;
        t->s = ns;
        size_t *nl = realloc(t->len, ncap * sizeof *nl);
        if (!nl)
            return -1;
        t->len = nl;
        t->cap = ncap;
    }
    t->s[t->n] = malloc(x->len + 1);
    if (!t->s[t->n])
        return -1;
    memcpy(t->s[t->n], x->text, x->len + 1);
    t->len[t->n] = x->len;
    t->bytes += x->len;
    t->n++;
    return 0;
}

static void texts_free(texts *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->len);
    memset(t, 0, sizeof *t);
}

/* The work of one repetition. */
enum { WORK_PARSE, WORK_PRINT, WORK_ENCODE };

/*
 * One repetition of `work` over all texts in a fresh pool. Returns the seconds
 * taken, or -1 when the library fails in a way parsing alone does not explain.
 * `unsupported` counts expressions the Z3 encoding rejects (infinities).
 */
static double run_once(const texts *t, int work, size_t *unsupported)
{
    sg_error err = SG_ERROR_INIT;
    sg_pool *pool = NULL;
    sg_smt *smt = NULL;
    double t0 = now(), secs = -1.0;

    if (sg_pool_new(&pool, &err) < 0)
        goto cleanup;
    if (work == WORK_ENCODE && sg_smt_new(&smt, pool, &err) < 0)
        goto cleanup;
    if (work == WORK_ENCODE && !sg_smt_context(smt)) /* into Z3 as it goes, not only as terms */
        goto cleanup;
    for (size_t i = 0; i < t->n; i++) {
        const sg_expr *e = NULL;
        if (sg_expr_parse(&e, pool, t->s[i], t->len[i], &err) < 0)
            continue;
        if (work == WORK_PRINT) {
            char *s = NULL;
            if (sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) < 0)
                goto cleanup;
            sg_free(s);
        } else if (work == WORK_ENCODE) {
            const sg_term *value = NULL, *defined = NULL;
            int rc = sg_smt_encode(smt, e, &value, &defined, &err);
            if (rc == SG_EUNSUPPORTED)
                (*unsupported)++;
            else if (rc < 0)
                goto cleanup;
        }
    }
    sg_smt_free(smt);
    smt = NULL;
    sg_pool_free(pool);
    pool = NULL;
    secs = now() - t0;
cleanup:
    if (secs < 0)
        fprintf(stderr, "bench_parse: %s\n", err.msg[0] ? err.msg : "failed");
    sg_smt_free(smt);
    sg_pool_free(pool);
    return secs;
}

/* Median milliseconds of creating and freeing an empty pool and encoder, over `reps` runs. */
static double smt_new_ms(size_t reps)
{
    double *secs = calloc(reps, sizeof *secs), med;
    size_t n = 0;

    if (!secs)
        return -1.0;
    for (size_t r = 0; r < reps; r++) {
        sg_error err = SG_ERROR_INIT;
        sg_pool *pool = NULL;
        sg_smt *smt = NULL;
        double t0 = now();
        bool ok = sg_pool_new(&pool, &err) == 0 && sg_smt_new(&smt, pool, &err) == 0;
        sg_smt_free(smt);
        sg_pool_free(pool);
        if (ok)
            secs[n++] = now() - t0;
    }
    med = median(secs, n) * 1e3;
    free(secs);
    return med;
}

/* Print one phase's line: median per repetition, rates per expression. */
static double report_phase(phase *p, size_t nexpr)
{
    double best, med;
    qsort(p->secs, p->reps, sizeof *p->secs, cmp_double);
    best = p->secs[0];
    med = median(p->secs, p->reps);
    printf("%-16s %10.2f ms %10.2f ms %14.0f %10.3f\n", p->name, med * 1e3, best * 1e3,
           (double)nexpr / med, med * 1e6 / (double)nexpr);
    return med;
}

/*
 * Write the SMT-LIB text of every expression that parses into `path`: each
 * as its own scope, `(push 1)` <declarations and assertion> `(pop 1)`, since
 * each expression declares its own symbols. Counts what was written and what
 * the encoding rejected.
 */
static int write_smtlib(const texts *t, const char *path, size_t *written, size_t *unsupported)
{
    sg_error err = SG_ERROR_INIT;
    sg_pool *pool = NULL;
    sg_smt *smt = NULL;
    FILE *f = NULL;
    int rc = -1;

    *written = *unsupported = 0;
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_parse: %s: %s\n", path, strerror(errno));
        goto cleanup;
    }
    if (sg_pool_new(&pool, &err) < 0 || sg_smt_new(&smt, pool, &err) < 0) {
        fprintf(stderr, "bench_parse: %s\n", err.msg);
        goto cleanup;
    }
    for (size_t i = 0; i < t->n; i++) {
        const sg_expr *e = NULL;
        char *s = NULL;
        int r;
        if (sg_expr_parse(&e, pool, t->s[i], t->len[i], &err) < 0)
            continue;
        r = sg_smt_to_smtlib(&s, smt, e, &err);
        if (r == SG_EUNSUPPORTED) {
            (*unsupported)++;
            continue;
        }
        if (r < 0) {
            fprintf(stderr, "bench_parse: sg_smt_to_smtlib(%s): %s\n", t->s[i], err.msg);
            goto cleanup;
        }
        fprintf(f, "(push 1)\n%s%s(pop 1)\n", s, (s[0] && s[strlen(s) - 1] != '\n') ? "\n" : "");
        sg_free(s);
        (*written)++;
    }
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "bench_parse: %s: %s\n", path, strerror(errno));
        goto cleanup;
    }
    f = NULL;
    rc = 0;
cleanup:
    if (f)
        fclose(f);
    sg_smt_free(smt);
    sg_pool_free(pool);
    return rc;
}

/*
 * Run `z3 -smt2 path` once; returns wall seconds or -1. Lines of output that
 * start with "(error" are counted into `*errors` and the first shown.
 */
static double run_z3(const char *path, size_t *errors)
{
    char cmd[512], line[1024];
    FILE *p;
    double t0, secs;
    int status;

    snprintf(cmd, sizeof cmd, "z3 -smt2 '%s' 2>&1", path);
    t0 = now();
    p = popen(cmd, "r");
    if (!p)
        return -1.0;
    while (fgets(line, sizeof line, p)) {
        if (strncmp(line, "(error", 6) == 0) {
            if ((*errors)++ == 0)
                fprintf(stderr, "z3: %s", line);
        }
    }
    status = pclose(p);
    secs = now() - t0;
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
        fprintf(stderr, "bench_parse: could not run z3 (status %d)\n", status);
        return -1.0;
    }
    return secs;
}

/* Best of Z3_RUNS runs of z3 on `path`; -1 if it cannot run. */
static double best_z3(const char *path, size_t *errors)
{
    double best = -1.0;
    for (int i = 0; i < Z3_RUNS; i++) {
        size_t e = 0;
        double s = run_z3(path, &e);
        if (s < 0)
            return -1.0;
        *errors = e;
        if (best < 0 || s < best)
            best = s;
    }
    return best;
}

/* A new empty temporary file from `tmpl` (modified in place); 0 or -1. */
static int make_temp(char *tmpl)
{
    int fd = mkstemp(tmpl);
    if (fd < 0) {
        fprintf(stderr, "bench_parse: mkstemp: %s\n", strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

/*
 * The z3 reference run: SMT-LIB of all expressions against our parse + encode
 * (`ours` seconds, `ours_net` without creating the Z3 context). Returns 0, or -1 when the file cannot be written or z3 reports errors in it
 * (which would be a bug in sg_smt_to_smtlib).
 */
static int z3_reference(const texts *t, double ours, double ours_net, bool keep)
{
    char smt2[] = "/tmp/sg_bench_XXXXXX";
    char empty[] = "/tmp/sg_bench_empty_XXXXXX";
    size_t written = 0, unsupported = 0, errors = 0, e0 = 0;
    double full, base;
    int rc = -1;

    if (make_temp(smt2) < 0)
        return -1;
    if (make_temp(empty) < 0) {
        remove(smt2);
        return -1;
    }
    if (write_smtlib(t, smt2, &written, &unsupported) < 0)
        goto cleanup;
    base = best_z3(empty, &e0);
    full = base < 0 ? -1.0 : best_z3(smt2, &errors);
    if (base < 0 || full < 0) {
        /* No z3 binary (Debian package z3) is not a failure of the benchmark. */
        printf("\nreference: the z3 binary could not be run; reference skipped\n");
        rc = 0;
        goto cleanup;
    }
    printf("\nreference: z3 -smt2 on the SMT-LIB of %zu expressions (%zu not encodable), "
           "best of %d runs\n", written, unsupported, Z3_RUNS);
    printf("  z3 on the file       %10.2f ms   (%zu error lines)\n", full * 1e3, errors);
    printf("  z3 on an empty file  %10.2f ms   (process start-up)\n", base * 1e3);
    printf("  z3 net               %10.2f ms   %10.3f us/expression\n", (full - base) * 1e3,
           (full - base) * 1e6 / (double)(written ? written : 1));
    printf("  shapegate parse+encode     %10.2f ms   (median, with sg_smt_new)\n", ours * 1e3);
    printf("  shapegate parse+encode net %10.2f ms   (without sg_smt_new)\n", ours_net * 1e3);
    printf("  ratio z3 / shapegate: %.2f with start-up (z3 file vs parse+encode), "
           "%.2f net of start-up\n", full / ours, (full - base) / ours_net);
    if (keep)
        printf("  SMT-LIB kept in %s\n", smt2);
    rc = errors ? -1 : 0;
cleanup:
    if (!keep)
        remove(smt2);
    remove(empty);
    return rc;
}

static void usage(FILE *to, const char *argv0)
{
    fprintf(to,
            "usage: %s [-n REPS] [-c CORPUS_DIR] [-k] [-Z]\n"
            "  -n REPS  repetitions of each phase (default %d)\n"
            "  -c DIR   corpus directory holding cases/ and cases-2.6/ (default %s)\n"
            "  -k       keep the generated .smt2 file\n"
            "  -Z       skip the z3 reference run\n",
            argv0, DEFAULT_REPS, SG_CORPUS);
}

int main(int argc, char **argv)
{
    const char *corpus = SG_CORPUS;
    long reps = DEFAULT_REPS;
    bool keep = false, no_z3 = false;
    texts t;
    corpus_visitor v = {NULL, collect, NULL, &t};
    char why[512];
    sg_error err = SG_ERROR_INIT;
    sg_pool *pool = NULL;
    size_t parse_failures = 0, unsupported = 0, nodes = 0;
    phase phases[3] = {{"parse", NULL, 0}, {"parse+print", NULL, 0}, {"parse+z3 encode", NULL, 0}};
    double encode_med = 0.0, new_ms = 0.0;
    struct rusage ru;
    int opt, status = 1;

    memset(&t, 0, sizeof t);
    while ((opt = getopt(argc, argv, "n:c:kZh")) != -1) {
        switch (opt) {
        case 'n':
            reps = strtol(optarg, NULL, 10);
            if (reps < 1) {
                usage(stderr, argv[0]);
                return 2;
            }
            break;
        case 'c':
            corpus = optarg;
            break;
        case 'k':
            keep = true;
            break;
        case 'Z':
            no_z3 = true;
            break;
        case 'h':
            usage(stdout, argv[0]);
            return 0;
        default:
            usage(stderr, argv[0]);
            return 2;
        }
    }

    if (corpus_walk(corpus, &v, why, sizeof why) != 0) {
        fprintf(stderr, "bench_parse: cannot load the corpus: %s\n", why);
        goto cleanup;
    }
    if (t.n == 0) {
        fprintf(stderr, "bench_parse: no expressions under %s\n", corpus);
        goto cleanup;
    }

    /* All expressions into one pool: parse failures and distinct nodes. */
    if (sg_pool_new(&pool, &err) < 0) {
        fprintf(stderr, "bench_parse: %s\n", err.msg);
        goto cleanup;
    }
    for (size_t i = 0; i < t.n; i++) {
        const sg_expr *e = NULL;
        if (sg_expr_parse(&e, pool, t.s[i], t.len[i], &err) < 0)
            parse_failures++;
    }
    nodes = sg_pool_size(pool);
    sg_pool_free(pool);
    pool = NULL;

    printf("corpus %s: %zu expressions (%zu bytes of text), %zu do not parse\n", corpus, t.n,
           t.bytes, parse_failures);
    printf("distinct nodes when all share one pool: %zu\n", nodes);
    printf("repetitions: %ld, each in a fresh pool\n\n", reps);
    printf("%-16s %13s %13s %14s %10s\n", "phase", "median/rep", "best/rep", "expressions/s",
           "us/expr");

    for (int k = 0; k < 3; k++) {
        phases[k].secs = calloc((size_t)reps, sizeof *phases[k].secs);
        if (!phases[k].secs)
            goto cleanup;
        for (long r = 0; r < reps; r++) {
            size_t u = 0;
            double s = run_once(&t, k, &u);
            if (s < 0)
                goto cleanup;
            phases[k].secs[phases[k].reps++] = s;
            unsupported = u;
        }
        double med = report_phase(&phases[k], t.n);
        if (k == WORK_ENCODE)
            encode_med = med;
    }
    new_ms = smt_new_ms((size_t)reps);
    printf("(the encode phase includes one sg_smt_new per repetition, %.2f ms alone; "
           "%zu expressions are not encodable)\n", new_ms, unsupported);

    if (!no_z3 && z3_reference(&t, encode_med, encode_med - new_ms * 1e-3, keep) < 0)
        goto cleanup;

    getrusage(RUSAGE_SELF, &ru);
    printf("\npeak RSS: %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    status = 0;
cleanup:
    for (int k = 0; k < 3; k++)
        free(phases[k].secs);
    sg_pool_free(pool);
    texts_free(&t);
    return status;
}
