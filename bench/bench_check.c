/*
 * bench_check.c - benchmark of `shapegate check` (sg_trace_load_dir + sg_check):
 *   1. corpus: for every case folder of tests/corpus/cases and cases-2.6 that has
 *      a ShapeEnv, the median of N runs of load + check (default options, and
 *      with inference off), against the time torch itself spent deciding the
 *      same constraints: case.json timing.dim_constraints_total_s +
 *      timing.produce_guards_s. Per case and in total, with the ratio.
 *   2. scaling: generated single-file JSON traces with about 100, 1,000 and
 *      10,000 guards (many dims with derived specs 8*r, divisibility guards
 *      Eq(Mod(s_i, 8), 0), bounds s_i <= 4096, pairwise equalities within
 *      groups of dims sharing a root), each size in its own child process
 *      (fork + exec of this program) so that the peak RSS (getrusage ru_maxrss)
 *      is per size.
 * See bench/README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "analysis/check.h"
#include "trace/trace.h"
#include "bench_corpus.h"
#include "bench_util.h"
#include "util/json.h"

#ifndef SG_CORPUS
#define SG_CORPUS "tests/corpus"
#endif

#define DEFAULT_RUNS 5
#define MAX_CASES 512
#define GROUP 4 /* dims sharing one root in the scaling traces */

/* One load + check of a folder; seconds, or < 0 on failure. Fills verdict and queries. */
static double time_case(const char *dir, bool infer, const char **verdict, unsigned *queries)
{
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    double t0 = now(), t1;
    int rc;
    opts.infer = infer;
    rc = sg_trace_load_dir(&t, dir, &err);
    if (!rc)
        rc = sg_check(&r, t, &opts, &err);
    t1 = now();
    if (rc) {
        fprintf(stderr, "%s: %s\n", dir, err.msg);
        sg_trace_free(t);
        return -1.0;
    }
    *verdict = sg_verdict_name(r->verdict);
    *queries = r->stats.queries;
    sg_report_free(r);
    sg_trace_free(t);
    return t1 - t0;
}

/* Does the folder's trace have a ShapeEnv? */
static bool has_shape_env(const char *dir)
{
    sg_trace *t = NULL;
    sg_error err = SG_ERROR_INIT;
    bool has;
    if (sg_trace_load_dir(&t, dir, &err))
        return false;
    has = sg_trace_has_shape_env(t);
    sg_trace_free(t);
    return has;
}

/* The case folders of one version directory, sorted; returns how many (at most `cap`). */
static size_t list_cases(const char *vdir, char **out, size_t cap)
{
    DIR *d = opendir(vdir);
    struct dirent *e;
    size_t n = 0;
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        char path[4096];
        struct stat st;
        int len;
        if (e->d_name[0] == '.')
            continue;
        len = snprintf(path, sizeof path, "%.3800s/%.255s", vdir, e->d_name);
        if (len > 0 && (size_t)len < sizeof path && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            out[n++] = strdup(path);
    }
    closedir(d);
    qsort(out, n, sizeof *out, cmp_str);
    return n;
}

/* The corpus part: one line per case with a ShapeEnv, then the totals. Returns 1 when a case failed to check. */
static int bench_corpus(const char *corpus, int runs)
{
    static const char *versions[] = {"cases", "cases-2.6"};
    double tot_sg = 0, tot_noinf = 0, tot_torch = 0;
    size_t ncases = 0, v, i;
    int failed = 0;

    printf("corpus %s: median of %d runs of sg_trace_load_dir + sg_check per case\n", corpus, runs);
    printf("%-44s %-11s %5s %10s %10s %10s %8s\n", "case", "verdict", "qry", "sg ms", "no-inf ms", "torch ms",
           "sg/torch");
    for (v = 0; v < sizeof versions / sizeof *versions; v++) {
        char vdir[3801], *cases[MAX_CASES];
        size_t n;
        snprintf(vdir, sizeof vdir, "%.3700s/%s", corpus, versions[v]);
        n = list_cases(vdir, cases, MAX_CASES);
        for (i = 0; i < n; i++) {
            double secs[64], secs2[64], sg, noinf, torch;
            const char *verdict = "?", *base = strrchr(cases[i], '/');
            unsigned queries = 0, q2 = 0;
            char label[128];
            int k;
            if (!has_shape_env(cases[i]) || (torch = torch_seconds(cases[i])) < 0) {
                free(cases[i]);
                continue;
            }
            for (k = 0; k < runs; k++) {
                const char *v2;
                secs[k] = time_case(cases[i], true, &verdict, &queries);
                secs2[k] = time_case(cases[i], false, &v2, &q2);
                if (secs[k] < 0 || secs2[k] < 0)
                    failed = 1;
            }
            sg = median(secs, (size_t)runs);
            noinf = median(secs2, (size_t)runs);
            snprintf(label, sizeof label, "%s/%s", versions[v], base ? base + 1 : cases[i]);
            if (torch >= 1e-5)
                printf("%-44s %-11s %5u %10.2f %10.2f %10.2f %8.1f\n", label, verdict, queries, sg * 1e3, noinf * 1e3,
                       torch * 1e3, sg / torch);
            else
                printf("%-44s %-11s %5u %10.2f %10.2f %10.2f %8s\n", label, verdict, queries, sg * 1e3, noinf * 1e3,
                       torch * 1e3, "-");
            fflush(stdout);
            tot_sg += sg;
            tot_noinf += noinf;
            tot_torch += torch;
            ncases++;
            free(cases[i]);
        }
    }
    printf("%-44s %-11s %5s %10.2f %10.2f %10.2f %8.1f\n", "TOTAL", "", "", tot_sg * 1e3, tot_noinf * 1e3,
           tot_torch * 1e3, tot_torch > 0 ? tot_sg / tot_torch : 0.0);
    printf("%zu cases with a ShapeEnv; sg/torch without inference: %.1f\n\n", ncases,
           tot_torch > 0 ? tot_noinf / tot_torch : 0.0);
    return failed;
}

/* ---- scaling ----------------------------------------------------------------------------- */

/* A growable string for the generated traces. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

/* Append formatted text; exits when memory runs out (a benchmark may). */
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int need;
    va_start(ap, fmt);
    need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0)
        return;
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + (size_t)need + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) {
            fprintf(stderr, "bench_check: out of memory\n");
            exit(2);
        }
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

/*
 * A trace with `ndims` dims in groups of GROUP sharing a root r_g in [1, 512]:
 * every dim is 8*r_g (derived), traced as its own symbol with range [2, 4096];
 * guards: Eq(Mod(s_i, 8), 0) and s_i <= 4096 per dim, Eq(s_first, s_i) for the
 * others of a group. A valid spec: every dim is proved. About 3 guards per dim.
 */
static void scaling_trace(sbuf *b, size_t ndims)
{
    size_t i;
    sb_printf(b, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"\", \"strict\": false, "
                 "\"shape_env\": true,\n\"symbols\": [\n");
    for (i = 0; i < ndims; i++)
        sb_printf(b,
                  "{\"name\": \"s%zu\", \"range\": [2, 4096], \"hint\": %zu, "
                  "\"sources\": [\"L['x%zu'].size()[0]\"]}%s\n",
                  i, 8 * (i / GROUP % 500 + 2), i, i + 1 < ndims ? "," : "");
    sb_printf(b, "],\n\"guards\": [\n");
    for (i = 0; i < ndims; i++) {
        sb_printf(b, "{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s%zu, 8), 0)\"},\n", i);
        sb_printf(b, "{\"origin\": \"shape\", \"expr\": \"s%zu <= 4096\"}", i);
        if (i % GROUP)
            sb_printf(b, ",\n{\"origin\": \"shape\", \"expr\": \"Eq(s%zu, s%zu)\"}", i - i % GROUP, i);
        sb_printf(b, "%s\n", i + 1 < ndims ? "," : "");
    }
    sb_printf(b, "],\n\"inputs\": [\n");
    for (i = 0; i < ndims; i++)
        sb_printf(b,
                  "{\"path\": \"['x%zu']\", \"dim\": 0, \"size\": %zu, \"source\": \"L['x%zu'].size()[0]\", "
                  "\"traced_source\": \"L['x%zu'].size()[0]\", \"value\": \"s%zu\", \"spec\": {\"kind\": \"derived\", "
                  "\"name\": \"8*r%zu\", \"expr\": \"8*r%zu\", "
                  "\"root\": {\"name\": \"r%zu\", \"min\": 1, \"max\": 512}, "
                  "\"min\": 8, \"max\": 4096}}%s\n",
                  i, 8 * (i / GROUP % 500 + 2), i, i, i, i / GROUP, i / GROUP, i / GROUP, i + 1 < ndims ? "," : "");
    sb_printf(b, "],\n\"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": null}\n}\n");
}

/* What a child reports for one size. */
typedef struct scale_result {
    int ok;
    size_t guards, bytes;
    double gen_s, load_s, check_s;
    unsigned queries, cheap;
    long maxrss_kb;
    char verdict[16];
    size_t proved, unknown;
} scale_result;

/* In the child process: generate, load and check one size, write the result to `fd`; never returns. */
static void scale_child(int fd, size_t ndims, bool infer, unsigned timeout_ms)
{
    scale_result res;
    sbuf b = {0};
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    struct rusage ru;
    double t0;
    size_t i, ng = 0;
    ssize_t w;

    memset(&res, 0, sizeof res);
    t0 = now();
    scaling_trace(&b, ndims);
    res.gen_s = now() - t0;
    res.bytes = b.n;
    t0 = now();
    if (sg_trace_load_json(&t, b.p, b.n, &err)) {
        fprintf(stderr, "load: %s\n", err.msg);
        goto out;
    }
    res.load_s = now() - t0;
    sg_trace_guards(t, &ng);
    res.guards = ng;
    opts.infer = infer;
    opts.timeout_ms = timeout_ms;
    t0 = now();
    if (sg_check(&r, t, &opts, &err)) {
        fprintf(stderr, "check: %s\n", err.msg);
        goto out;
    }
    res.check_s = now() - t0;
    res.queries = r->stats.queries;
    res.cheap = r->stats.decided_cheaply;
    snprintf(res.verdict, sizeof res.verdict, "%s", sg_verdict_name(r->verdict));
    for (i = 0; i < r->ndims; i++) {
        res.proved += r->dims[i].status == SG_DIM_PROVED;
        res.unknown += r->dims[i].status == SG_DIM_UNKNOWN;
    }
    res.ok = 1;
out:
    getrusage(RUSAGE_SELF, &ru);
    res.maxrss_kb = ru.ru_maxrss;
    w = write(fd, &res, sizeof res);
    (void)w;
    sg_report_free(r);
    sg_trace_free(t);
    free(b.p);
    _exit(res.ok ? 0 : 1);
}

/*
 * Run every size in a fresh process: fork, then exec this program again in its
 * child mode (--scale-child), so that the peak RSS is that size's alone and not
 * the parent's pages inherited through fork. The child writes a scale_result
 * to the pipe on its standard output.
 */
static int bench_scaling(const char *self, bool infer, unsigned timeout_ms)
{
    static const size_t targets[] = {100, 1000, 10000};
    size_t s;
    int failed = 0;
    printf("scaling: generated traces, each size in its own process; inference %s, time budget %u ms\n",
           infer ? "on" : "off", timeout_ms);
    printf("%8s %7s %9s %9s %9s %9s %11s %8s %7s %10s\n", "guards", "dims", "KiB json", "load s", "check s", "queries",
           "no-Z3", "proved", "unknown", "peak RSS");
    for (s = 0; s < sizeof targets / sizeof *targets; s++) {
        size_t ndims = (targets[s] * GROUP + 3 * GROUP - 2) / (3 * GROUP - 1); /* (3*GROUP - 1) guards per group */
        int fds[2], status = 0;
        pid_t pid;
        scale_result res;
        size_t off = 0;
        fflush(stdout);
        if (pipe(fds) != 0)
            return 1;
        pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            char nd[32], inf[8], tm[32];
            close(fds[0]);
            if (dup2(fds[1], STDOUT_FILENO) < 0)
                _exit(1);
            close(fds[1]);
            snprintf(nd, sizeof nd, "%zu", ndims);
            snprintf(inf, sizeof inf, "%d", infer ? 1 : 0);
            snprintf(tm, sizeof tm, "%u", timeout_ms);
            execl(self, self, "--scale-child", nd, inf, tm, (char *)NULL);
            _exit(127);
        }
        close(fds[1]);
        memset(&res, 0, sizeof res);
        while (off < sizeof res) {
            ssize_t k = read(fds[0], (char *)&res + off, sizeof res - off);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (off != sizeof res || !res.ok) {
            printf("%8zu: the child failed (status %d)\n", targets[s], status);
            failed = 1;
            continue;
        }
        printf("%8zu %7zu %9.0f %9.3f %9.3f %9u %11u %8zu %7zu %7.1f MiB  %s\n", res.guards, ndims,
               (double)res.bytes / 1024.0, res.load_s, res.check_s, res.queries, res.cheap, res.proved, res.unknown,
               (double)res.maxrss_kb / 1024.0, res.verdict);
    }
    printf("\n");
    return failed;
}

/* The help text, to stdout. */
static void usage(void)
{
    printf("usage: bench_check [-n RUNS] [-c CORPUS] [-S] [-C] [-t MS]\n"
           "  -n RUNS    runs per corpus case, median reported (default %d)\n"
           "  -c CORPUS  corpus directory holding cases/ and cases-2.6/ (default %s)\n"
           "  -C         skip the corpus part\n"
           "  -S         skip the scaling part\n"
           "  -t MS      time budget of each scaling check (default 60000, the CLI's)\n",
           DEFAULT_RUNS, SG_CORPUS);
}

int main(int argc, char **argv)
{
    int runs = DEFAULT_RUNS, opt, failed = 0;
    const char *corpus = SG_CORPUS;
    bool corpus_part = true, scaling_part = true;
    unsigned timeout_ms = 60000;
    if (argc == 5 && strcmp(argv[1], "--scale-child") == 0) /* internal: one size of the scaling run */
        scale_child(STDOUT_FILENO, (size_t)strtoul(argv[2], NULL, 10), strcmp(argv[3], "1") == 0,
                    (unsigned)strtoul(argv[4], NULL, 10));
    while ((opt = getopt(argc, argv, "n:c:SCt:h")) != -1) {
        switch (opt) {
        case 'n': runs = atoi(optarg); break;
        case 'c': corpus = optarg; break;
        case 'S': scaling_part = false; break;
        case 'C': corpus_part = false; break;
        case 't': timeout_ms = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'h': usage(); return 0;
        default: usage(); return 2;
        }
    }
    if (runs < 1 || runs > 64) {
        fprintf(stderr, "bench_check: -n takes 1..64\n");
        return 2;
    }
    if (scaling_part) { /* first: the children exec afresh anyway, but keep the parent small */
        failed |= bench_scaling("/proc/self/exe", false, timeout_ms);
        failed |= bench_scaling("/proc/self/exe", true, timeout_ms);
    }
    if (corpus_part)
        failed |= bench_corpus(corpus, runs);
    return failed;
}
