/*
 * bench_engine.c - the in-process reference for bench/serve.sh: what the
 * service's workers do for one POST /v1/check (load the JSON trace, check it
 * with the request's default options, write the report's JSON), without
 * HTTP, on N threads sharing one engine with one warm context each and no
 * cache, for S seconds. Prints checks/s and the median and p99 latency.
 *
 *   bench_engine TRACE.json [THREADS] [SECONDS]      (defaults 2 and 5)
 *
 * Corpus mode: every case of tests/corpus/cases and cases-2.6 with a ShapeEnv
 * (or the paths given), one after another on one thread, each checked RUNS
 * times (default 5) as `shapegate check --json` does it (load, the CLI's
 * default options, the report's JSON): the median microseconds per case, its
 * Z3 queries and contexts made, and torch's own time on the same trace
 * (case.json: produce_guards_s + dim_constraints_total_s) side by side.
 * --warm keeps one warm context in the engine (as a service worker has),
 * else every call makes its own (the CLI's engine).
 *
 *   bench_engine --corpus [--warm] [-n RUNS] [PATH...]
 *
 * The allocator is set as `shapegate serve` sets it (sg_service_tune_memory in
 * service/service.h: 64 MiB trim threshold, 16 MiB top pad, 32 MiB mmap threshold), so that the two
 * compare like for like; SG_BENCH_MALLOC_DEFAULTS=1 keeps glibc's defaults.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

#include <cjson/cJSON.h>
#include <dirent.h>
#include <sys/stat.h>

#include "shapegate/shapegate.h"
#include "util/json.h"
#include "bench_corpus.h"

#ifndef SG_CORPUS
#define SG_CORPUS "tests/corpus"
#endif

#define MAX_SAMPLES 2000000

typedef struct job {
    sg_engine *e;
    const char *json;
    size_t len;
    double end;
    double *lat;
    size_t n, cap;
    int failed;
} job;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
    job *j = arg;
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;

    o.timeout_ms = 30000; /* the service's default budget */
    while (now() < j->end && j->n < j->cap) {
        double t0 = now();
        sg_trace *t = NULL;
        sg_report *r = NULL;
        char *out = NULL;
        if (sg_trace_load_json(&t, j->json, j->len, &err) != 0 || sg_engine_check(j->e, t, &o, &r, &err) != 0
            || sg_report_to_json(&out, r, 0, &err) != 0) {
            fprintf(stderr, "bench_engine: %s\n", err.msg);
            j->failed = 1;
        }
        sg_free(out);
        sg_report_free(r);
        sg_trace_free(t);
        if (j->failed)
            break;
        j->lat[j->n++] = now() - t0;
    }
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- corpus mode ------------------------------------------------------------------------- */

#define MAX_CASES 1024

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* The case folders of the corpus with a ShapeEnv, sorted per version folder, into `out`. */
static size_t corpus_cases(char **out, size_t cap)
{
    static const char *versions[] = {"cases", "cases-2.6"};
    size_t n = 0, v, first;
    for (v = 0; v < 2; v++) {
        char vdir[4096];
        DIR *d;
        struct dirent *de;
        snprintf(vdir, sizeof vdir, "%s/%s", SG_CORPUS, versions[v]);
        if (!(d = opendir(vdir)))
            continue;
        first = n;
        while ((de = readdir(d)) != NULL && n < cap) {
            char path[4096 + 256];
            struct stat st;
            sg_trace *t = NULL;
            sg_error err = SG_ERROR_INIT;
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", vdir, de->d_name);
            if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || sg_trace_load_dir(&t, path, &err) != 0)
                continue;
            if (sg_trace_has_shape_env(t))
                out[n++] = strdup(path);
            sg_trace_free(t);
        }
        closedir(d);
        qsort(out + first, n - first, sizeof *out, cmp_str);
    }
    return n;
}

/* One check as `shapegate check --json PATH` makes it; false on failure. `*check_us` gets the
 * microseconds of sg_engine_check alone (the trace already in memory, as torch's own figure is
 * produce_guards on the ShapeEnv it holds). */
static bool check_once(sg_engine *e, const char *path, const char **verdict, double *check_us)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    char *out = NULL;
    bool ok = sg_trace_load(&t, path, &err) == 0;
    double t0 = now();
    ok = ok && sg_engine_check(e, t, &o, &r, &err) == 0;
    *check_us = (now() - t0) * 1e6;
    ok = ok && sg_report_to_json(&out, r, 0, &err) == 0;
    if (!ok)
        fprintf(stderr, "bench_engine: %s: %s\n", path, err.msg);
    else
        *verdict = sg_verdict_name(sg_report_verdict(r));
    sg_free(out);
    sg_report_free(r);
    sg_trace_free(t);
    return ok;
}

static int corpus_main(int argc, char **argv)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_engine *e = NULL;
    static char *cases[MAX_CASES];
    size_t n = 0, i;
    int runs = 5, k, failed = 0, a;
    double tot = 0, tot_chk = 0, tot_torch = 0, tot_small = 0, cpu0, wall0;
    size_t nsmall = 0, nsub1 = 0;

    for (a = 2; a < argc; a++) {
        if (strcmp(argv[a], "--warm") == 0)
            eo.warm_contexts = 1;
        else if (strcmp(argv[a], "-n") == 0 && a + 1 < argc)
            runs = atoi(argv[++a]);
        else if (n < MAX_CASES)
            cases[n++] = strdup(argv[a]);
    }
    if (runs < 1 || runs > 1000) {
        fprintf(stderr, "usage: bench_engine --corpus [--warm] [-n RUNS] [PATH...]\n");
        return 2;
    }
    if (n == 0)
        n = corpus_cases(cases, MAX_CASES);
    if (sg_engine_new(&e, &eo, &err) != 0) {
        fprintf(stderr, "bench_engine: %s\n", err.msg);
        return 5;
    }
    printf("%s engine, median of %d runs per case (load + check + JSON, the CLI's default options; wall and CPU; \"check us\": sg_engine_check alone)\n",
           eo.warm_contexts ? "warm" : "cold", runs);
    printf("%-46s %-12s %8s %6s %6s %10s %10s %8s %8s %9s\n", "case", "verdict", "us", "qry", "ctx", "torch us",
           "cpu us", "torch/sg", "check us", "torch/chk");
    cpu0 = cpu_now();
    wall0 = now();
    for (i = 0; i < n; i++) {
        double us[1000], cpus[1000], chk[1000], cpu, med, medc, torch = torch_seconds(cases[i]);
        sg_engine_stats s0, s1;
        const char *verdict = "?", *label = strstr(cases[i], "cases");
        sg_engine_stats_get(e, &s0);
        for (k = 0; k < runs; k++) {
            double t0 = now(), c0 = cpu_now();
            if (!check_once(e, cases[i], &verdict, &chk[k]))
                failed = 1;
            us[k] = (now() - t0) * 1e6;
            cpus[k] = (cpu_now() - c0) * 1e6;
        }
        qsort(cpus, (size_t)runs, sizeof *cpus, cmp);
        cpu = cpus[runs / 2];
        sg_engine_stats_get(e, &s1);
        qsort(us, (size_t)runs, sizeof *us, cmp);
        med = us[runs / 2];
        qsort(chk, (size_t)runs, sizeof *chk, cmp);
        medc = chk[runs / 2];
        tot += med;
        tot_chk += medc;
        if (torch > 0)
            tot_torch += torch;
        if (s1.solver_queries == s0.solver_queries) {
            nsmall++;
            tot_small += med;
        }
        nsub1 += med < 1000;
        printf("%-46s %-12s %8.0f %6llu %6llu %10.0f %10.0f %8.1f %8.0f %9.1f\n", label ? label : cases[i], verdict, med,
               (unsigned long long)(s1.solver_queries - s0.solver_queries) / (unsigned)runs,
               (unsigned long long)(s1.contexts_created - s0.contexts_created) / (unsigned)runs,
               torch > 0 ? torch * 1e6 : 0.0, cpu, torch > 0 ? torch * 1e6 / med : 0.0, medc,
               torch > 0 ? torch * 1e6 / medc : 0.0);
        fflush(stdout);
        free(cases[i]);
    }
    printf("TOTAL %zu cases: %.1f ms (sum of medians), torch %.1f ms, torch/sg %.2f; %zu cases under 1 ms; "
           "%zu without a Z3 query (%.0f us on average)\n", n, tot / 1e3, tot_torch * 1e3,
           tot > 0 ? tot_torch * 1e6 / tot : 0.0, nsub1, nsmall, nsmall ? tot_small / (double)nsmall : 0.0);
    printf("CHECK ALONE (trace in memory, no JSON): %.1f ms, torch/sg %.2f\n", tot_chk / 1e3,
           tot_chk > 0 ? tot_torch * 1e6 / tot_chk : 0.0);
    printf("process: %.2f s wall, %.2f s CPU for all runs\n", now() - wall0, cpu_now() - cpu0);
    sg_engine_free(e);
    return failed ? 5 : 0;
}

int main(int argc, char **argv)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 2, i;
    double secs = argc > 3 ? atof(argv[3]) : 5, t0, el, cpu;
    struct rusage ru;
    job jobs[64];
    pthread_t th[64];
    char *json = NULL;
    size_t len = 0, total = 0, k = 0;
    double *all;
    sg_engine *e = NULL;
    FILE *f;
    int failed = 0;

#ifdef __GLIBC__
    if (!getenv("SG_BENCH_MALLOC_DEFAULTS")) {
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        mallopt(M_TOP_PAD, 16 << 20);
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
    }
#endif
    if (argc > 1 && strcmp(argv[1], "--corpus") == 0)
        return corpus_main(argc, argv);
    if (argc < 2 || threads == 0 || threads > 64 || !(f = fopen(argv[1], "rb"))) {
        fprintf(stderr, "usage: bench_engine TRACE.json [THREADS] [SECONDS]\n");
        return 2;
    }
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    rewind(f);
    json = malloc(len + 1);
    if (!json || fread(json, 1, len, f) != len) {
        fprintf(stderr, "bench_engine: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    eo.warm_contexts = threads;
    if (sg_engine_new(&e, &eo, &err) != 0) {
        fprintf(stderr, "bench_engine: %s\n", err.msg);
        return 5;
    }
    t0 = now();
    for (i = 0; i < threads; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].e = e;
        jobs[i].json = json;
        jobs[i].len = len;
        jobs[i].end = t0 + secs;
        jobs[i].cap = MAX_SAMPLES / threads;
        jobs[i].lat = malloc(jobs[i].cap * sizeof(double));
        pthread_create(&th[i], NULL, run, &jobs[i]);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(th[i], NULL);
        total += jobs[i].n;
        failed |= jobs[i].failed;
    }
    el = now() - t0;
    getrusage(RUSAGE_SELF, &ru);
    cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    all = malloc((total + 1) * sizeof(double));
    for (i = 0; i < threads; i++) {
        memcpy(all + k, jobs[i].lat, jobs[i].n * sizeof(double));
        k += jobs[i].n;
        free(jobs[i].lat);
    }
    qsort(all, total, sizeof(double), cmp);
    if (total)
        printf("in-process engine, %u threads: %.0f checks/s, p50 %.2f ms, p99 %.2f ms, %.3f ms CPU/check (%zu checks in "
               "%.1f s)\n", threads, total / el, all[total / 2] * 1e3, all[(size_t)(total * 0.99)] * 1e3,
               cpu * 1e3 / (double)total, total, el);
    free(all);
    free(json);
    sg_engine_free(e);
    return failed ? 5 : 0;
}
