/*
 * metrics.c - the counters behind GET /metrics and their Prometheus text
 * exposition: requests by route and status, a latency histogram per route,
 * requests in flight, the pool's queue, and the engine's own counters
 * (solver queries, cache hits, budget stops, warm contexts).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The statuses the service answers; 0 is a request the client abandoned before its answer. */
static const unsigned statuses[SV_NSTATUS] = {200, 400, 404, 405, 413, 415, 422, 429, 500, 501, 503, 504, 0};
static const double bounds[SV_NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                           0.1,    0.25,  0.5,    1,     2.5,  5,     10};

static unsigned status_slot(unsigned status)
{
    unsigned i;
    for (i = 0; i < SV_NSTATUS; i++)
        if (statuses[i] == status)
            return i;
    return 8; /* anything else is counted as 500 */
}

void sv_metrics_observe(sv_metrics *m, sv_route_id r, unsigned status, double seconds)
{
    unsigned b = 0;

    atomic_fetch_add(&m->requests[r][status_slot(status)], 1);
    while (b < SV_NBUCKETS && seconds > bounds[b])
        b++;
    atomic_fetch_add(&m->buckets[r][b], 1);
    atomic_fetch_add(&m->latency_us[r], (uint64_t)(seconds * 1e6));
    atomic_fetch_add(&m->count[r], 1);
}

typedef struct out_buf {
    char *s;
    size_t n, cap;
    bool failed;
} out_buf;

static void put(out_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_buf *b, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (b->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        char *ns = realloc(b->s, b->cap * 2 + (size_t)k);
        if (!ns) {
            b->failed = true;
            return;
        }
        b->s = ns;
        b->cap = b->cap * 2 + (size_t)k;
    }
}

static void counter(out_buf *b, const char *name, const char *help, uint64_t v)
{
    put(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

static void gauge(out_buf *b, const char *name, const char *help, uint64_t v)
{
    put(b, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

/* The engine's counters (sg_engine_stats), one series each. */
typedef struct series {
    const char *name, *help;
    size_t offset; /* of its uint64_t in sg_engine_stats */
    bool gauge;
} series;

#define SV_STAT(field) offsetof(sg_engine_stats, field)
static const series engine_series[] = {
    {"shapegate_engine_calls_total", "Engine calls (check, spec, verify).", SV_STAT(requests), false},
    {"shapegate_engine_errors_total", "Engine calls that could not run.", SV_STAT(errors), false},
    {"shapegate_engine_checks_total", "Checks run, counting the re-checks of fixes.", SV_STAT(checks), false},
    {"shapegate_solver_queries_total", "Z3 queries.", SV_STAT(solver_queries), false},
    {"shapegate_solver_decided_cheaply_total", "Guards decided without Z3.", SV_STAT(decided_cheaply), false},
    {"shapegate_solver_budget_stops_total", "Z3 queries stopped by a budget.", SV_STAT(budget_stops), false},
    {"shapegate_engine_canceled_total", "Calls that saw a cancel request.", SV_STAT(canceled), false},
    {"shapegate_cache_misses_total", "Calls the cache did not hold.", SV_STAT(cache_misses), false},
    {"shapegate_solver_contexts_created_total", "Z3 contexts made.", SV_STAT(contexts_created), false},
    {"shapegate_solver_contexts_reused_total", "Z3 contexts taken warm.", SV_STAT(contexts_reused), false},
    {"shapegate_solver_contexts_idle", "Z3 contexts warm now.", SV_STAT(contexts_idle), true},
};
#undef SV_STAT

int sv_metrics_render(char **out, size_t *len, const sv_metrics *m, const sg_engine_stats *stp, sv_pool *p,
                      unsigned workers, sv_redis *redis, sv_answers *answers, sv_iso *iso)
{
    uint64_t ahits, amisses, astores, aentries, abytes;
    out_buf b = {malloc(8192), 0, 8192, false};
    const sg_engine_stats st = *stp;
    unsigned r, k, queued = 0, busy = 0;
    uint64_t cum;

    *out = NULL;
    if (!b.s)
        return SG_ENOMEM;
    put(&b, "# HELP shapegate_http_requests_total HTTP requests answered, by route and status "
            "(status 0: the client left before the answer).\n"
            "# TYPE shapegate_http_requests_total counter\n");
    for (r = 0; r < SV_NROUTES; r++)
        for (k = 0; k < SV_NSTATUS; k++) {
            uint64_t v = atomic_load(&m->requests[r][k]);
            if (v)
                put(&b, "shapegate_http_requests_total{route=\"%s\",status=\"%u\"} %llu\n", sv_route_label(r),
                    statuses[k], (unsigned long long)v);
        }
    put(&b, "# HELP shapegate_http_request_duration_seconds Time from the request's header to its "
            "answer being sent, by route.\n"
            "# TYPE shapegate_http_request_duration_seconds histogram\n");
    for (r = 0; r < SV_NROUTES; r++) {
        uint64_t n = atomic_load(&m->count[r]);
        if (!n)
            continue;
        cum = 0;
        for (k = 0; k < SV_NBUCKETS; k++) {
            cum += atomic_load(&m->buckets[r][k]);
            put(&b, "shapegate_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                sv_route_label(r), bounds[k], (unsigned long long)cum);
        }
        cum += atomic_load(&m->buckets[r][SV_NBUCKETS]);
        put(&b, "shapegate_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
            sv_route_label(r), (unsigned long long)cum);
        put(&b, "shapegate_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", sv_route_label(r),
            (double)atomic_load(&m->latency_us[r]) / 1e6);
        put(&b, "shapegate_http_request_duration_seconds_count{route=\"%s\"} %llu\n", sv_route_label(r),
            (unsigned long long)cum);
    }
    gauge(&b, "shapegate_http_in_flight", "Requests received and not yet answered.",
          atomic_load(&m->in_flight));
    counter(&b, "shapegate_http_rejected_busy_total", "Requests answered 429 because every worker and "
            "queue slot was taken.", atomic_load(&m->rejected_busy));
    counter(&b, "shapegate_http_budget_exceeded_total", "Requests answered 504: their solving ran out of "
            "its budget.", atomic_load(&m->budget_exceeded));
    counter(&b, "shapegate_http_received_bytes_total", "Request body bytes read.", atomic_load(&m->bytes_in));
    if (p) {
        sv_pool_load(p, &queued, &busy);
        gauge(&b, "shapegate_pool_workers", "Solver workers.", workers);
        gauge(&b, "shapegate_pool_busy", "Workers solving now.", busy);
        gauge(&b, "shapegate_pool_queued", "Requests waiting for a worker.", queued);
    }
    if (iso) {
        uint64_t restarts[SV_NRESTART];
        unsigned running = 0;
        sv_iso_stats(iso, NULL, restarts, &running);
        gauge(&b, "shapegate_worker_processes", "Solver processes running (--isolate).", running);
        put(&b, "# HELP shapegate_worker_restarts_total Solver processes replaced, by reason (timeout: killed "
                "at the budget plus the grace; memory: out of --worker-memory; signal: died of a signal; "
                "exit: exited or broke the protocol; shutdown: killed with its request at shutdown).\n"
                "# TYPE shapegate_worker_restarts_total counter\n");
        for (k = 0; k < SV_NRESTART; k++)
            put(&b, "shapegate_worker_restarts_total{reason=\"%s\"} %llu\n", sv_restart_name((sv_restart)k),
                (unsigned long long)restarts[k]);
    }
    for (k = 0; k < sizeof engine_series / sizeof engine_series[0]; k++) {
        const series *x = &engine_series[k];
        uint64_t v = *(const uint64_t *)((const char *)&st + x->offset);
        put(&b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", x->name, x->help, x->name, x->gauge ? "gauge" : "counter",
            x->name, (unsigned long long)v);
    }
    /* both in-process caches: the answers by body bytes (no engine call) and the engine's reports */
    sv_answers_stats(answers, &ahits, &amisses, &astores, &aentries, &abytes);
    counter(&b, "shapegate_cache_hits_total", "Requests answered from a cache of this process: the answers "
            "by body bytes, or the engine's reports.", ahits + st.cache_hits);
    if (answers) {
        counter(&b, "shapegate_answer_cache_hits_total", "Requests answered from the cache of answers by body "
                "bytes, without parsing the body.", ahits);
        counter(&b, "shapegate_answer_cache_stores_total", "Answers kept in the cache of answers.", astores);
        gauge(&b, "shapegate_answer_cache_entries", "Answers held in the cache of answers now.", aentries);
        gauge(&b, "shapegate_answer_cache_bytes", "Bytes of the answers held now.", abytes);
    }
    if (redis) {
        uint64_t hits, misses, errors, stores;
        bool up;
        sv_redis_stats(redis, &hits, &misses, &errors, &stores, &up);
        counter(&b, "shapegate_redis_hits_total", "Answers taken from the shared Redis cache.", hits);
        counter(&b, "shapegate_redis_misses_total", "Redis lookups that found nothing.", misses);
        counter(&b, "shapegate_redis_stores_total", "Answers written to Redis.", stores);
        counter(&b, "shapegate_redis_errors_total", "Redis connections or commands that failed.", errors);
        gauge(&b, "shapegate_redis_up", "1 while Redis is used, 0 while it is left alone after a failure.", up);
    }
    if (b.failed) {
        free(b.s);
        return SG_ENOMEM;
    }
    *out = b.s;
    *len = b.n;
    return 0;
}
