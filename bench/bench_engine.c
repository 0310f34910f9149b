/*
 * bench_engine.c - the in-process reference for bench/serve.sh: what the
 * service's workers do for one POST /v1/check (load the JSON trace, check it
 * with the request's default options, write the report's JSON), without
 * HTTP, on N threads sharing one engine with one warm context each and no
 * cache, for S seconds. Prints checks/s and the median and p99 latency.
 *
 *   bench_engine TRACE.json [THREADS] [SECONDS]      (defaults 2 and 5)
 *
 * The allocator is set as `shapegate serve` sets it (sg_service_tune_memory in
 * service/service.h: 64 MiB trim threshold, 16 MiB top pad), so that the two
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

#include "shapegate/shapegate.h"

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
    }
#endif
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
