/*
 * internal.h - what the files of service/ share: the request record, the
 * routes, the worker pool (pool.c), the metrics (metrics.c) and the
 * endpoint handlers (handlers.c). server.c holds libmicrohttpd's side.
 */
#ifndef SG_SERVICE_INTERNAL_H
#define SG_SERVICE_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "service.h"

/* MHD_Result appeared in 0.9.71; older headers return int. */
#if MHD_VERSION < 0x00097002
typedef int sv_mhd_result;
#else
typedef enum MHD_Result sv_mhd_result;
#endif

/* ---- routes ------------------------------------------------------------------------------------ */

typedef enum sv_route_id {
    SV_ROUTE_CHECK,
    SV_ROUTE_SPEC,
    SV_ROUTE_INSPECT,
    SV_ROUTE_VERIFY,
    SV_ROUTE_PACK,
    SV_ROUTE_GATE,
    SV_ROUTE_HEALTHZ,
    SV_ROUTE_READYZ,
    SV_ROUTE_VERSION,
    SV_ROUTE_METRICS,
    SV_ROUTE_OPENAPI,
    SV_ROUTE_OTHER, /* no such route (404): counted under one label */
    SV_NROUTES
} sv_route_id;

typedef enum sv_body {
    SV_BODY_NONE,
    SV_BODY_JSON,     /* application/json, in memory */
    SV_BODY_ARCHIVE,  /* a .pt2, spooled to a file */
    SV_BODY_MULTIPART /* multipart/form-data: parts "old" and "new" (.pt2, spooled), "policy" (JSON) */
} sv_body;

/* The parts of a multipart body (POST /v1/gate). */
typedef enum sv_part { SV_PART_OLD, SV_PART_NEW, SV_PART_POLICY, SV_NPARTS } sv_part;
#define SV_MAX_POLICY ((size_t)1 << 20) /* bytes of a gate's policy part: 413 beyond */

typedef struct sv_route {
    sv_route_id id;
    const char *path;
    const char *method; /* "GET" or "POST" */
    sv_body body;       /* what a POST carries */
} sv_route;

/* The route for `path`, or NULL. */
const sv_route *sv_route_find(const char *path);
/* The route of POST route `id` (a worker's side of isolation), or NULL. */
const sv_route *sv_route_of(sv_route_id id);
/* The label /metrics gives route `id`. */
const char *sv_route_label(sv_route_id id);

/* ---- one request ------------------------------------------------------------------------------- */

typedef enum sv_state {
    SV_RECEIVING, /* reading the body on an I/O thread */
    SV_QUEUED,    /* with the pool; the connection suspended */
    SV_ANSWERED,  /* the worker left its answer; the connection resumed */
    SV_SENT       /* a response was queued with libmicrohttpd */
} sv_state;

typedef struct sv_request {
    sg_service *svc;
    struct MHD_Connection *conn;
    const sv_route *route;
    double t0;               /* monotonic seconds at the first byte of the header */
    char method[8];
    char path[128];          /* the URL path as logged (cut) */
    /* the body: JSON in memory, an archive in an unlinked temporary file */
    char *body;
    size_t len, cap;         /* `cap` bytes counted in the service's `buffered` */
    int fd;
    uint64_t received;
    /* a multipart body: its parser, the second archive's spool file, the policy, what came */
    struct MHD_PostProcessor *pp;
    int fd2;
    char *policy;
    size_t policy_len;
    uint64_t part_bytes[SV_NPARTS];
    bool part_seen[SV_NPARTS];
    char part_file[2][96];   /* the filename of "old" and "new", as the client named them, or "" */
    bool failed_body;        /* answered (413, 503) while the body was coming: the rest is dropped */
    uint64_t dropped;        /* bytes of body dropped since */
    /* the call */
    sg_check_options opts;
    sg_cancel *cancel;
    _Atomic int state;       /* sv_state */
    /* the answer, set by whoever made it */
    unsigned status;
    char code[40];           /* "ok" or the error code, for the log */
    const char *verdict;     /* the report's verdict name (the library's static string), or NULL */
    unsigned worker;         /* the pool worker running the request (pool.c sets it) */
    bool from_redis;         /* the answer came from the shared cache */
    bool from_answers;       /* the answer came from the cache of answers by body bytes (answers.c) */
    bool answer_keyed;       /* answer_key is set: a check or spec body the answer cache may keep */
    unsigned char answer_key[32];
    char *resp;              /* response body (malloc'd), or NULL with resp_fd >= 0 */
    size_t resp_len;
    int resp_fd;             /* a file to send (pack), or -1 */
    uint64_t resp_fd_len;
    const char *ctype;
    char extra_header[2][96];/* "Name: value" pairs set on the response, or "" */
    uint64_t sent;           /* bytes of body queued */
} sv_request;

/* Append `src` to `dst` (`*n` bytes used of `cap`, NUL-terminated) as a JSON string literal, every
 * byte outside printable ASCII escaped, so that the result is valid JSON whatever the input
 * (client paths, messages quoting client bytes); cut, still a valid literal, when it does not
 * fit (`cap` at least *n + 3). No allocation: the access log and the error bodies use it. */
void sv_json_put(char *dst, size_t cap, size_t *n, const char *src);
/* Set `q`'s answer to the JSON error {"error": {"code", "message", "status"}}. */
void sv_error(sv_request *q, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Set `q`'s answer to `body` (taken: malloc'd) with `ctype`. */
void sv_answer(sv_request *q, unsigned status, const char *code, char *body, size_t len, const char *ctype);

/* ---- the worker pool --------------------------------------------------------------------------- */

typedef struct sv_pool sv_pool;
typedef void (*sv_job_fn)(sv_request *q, void *ctx);

/* Start `n` workers calling `fn(q, ctx)` for each submitted request, then `finish(q, ctx)`, which
 * hands the request back (after it the pool never touches `q`). */
int sv_pool_new(sv_pool **out, unsigned n, unsigned max_queue, sv_job_fn fn, sv_job_fn finish, void *ctx);
/* Hand `q` to a worker: 0, or -1 when the queue is full or the pool stopping. */
int sv_pool_submit(sv_pool *p, sv_request *q);
/* Requests waiting, and being worked on. */
void sv_pool_load(sv_pool *p, unsigned *queued, unsigned *busy);
/* Stop: running requests get their cancel token requested, the workers are joined, then the
 * requests still queued get `drop(q, ctx)` (under the pool's lock). Submissions fail from the
 * start of the call on; sv_pool_submit() and sv_pool_load() stay callable until sv_pool_free(),
 * so that the I/O threads may run while the pool stops. Idempotent. */
void sv_pool_stop(sv_pool *p, void (*drop)(sv_request *q, void *ctx));
/* Stop (without a drop callback, when not stopped yet) and free. NULL-safe. */
void sv_pool_free(sv_pool *p);

/* ---- metrics ----------------------------------------------------------------------------------- */

#define SV_NBUCKETS 14
#define SV_NSTATUS 13
typedef struct sv_metrics {
    _Atomic uint64_t requests[SV_NROUTES][SV_NSTATUS]; /* by route and status (metrics.c) */
    _Atomic uint64_t buckets[SV_NROUTES][SV_NBUCKETS + 1];
    _Atomic uint64_t latency_us[SV_NROUTES];
    _Atomic uint64_t count[SV_NROUTES];
    _Atomic uint64_t in_flight;
    _Atomic uint64_t rejected_busy;
    _Atomic uint64_t budget_exceeded;
    _Atomic uint64_t bytes_in, bytes_out;
} sv_metrics;

void sv_metrics_observe(sv_metrics *m, sv_route_id r, unsigned status, double seconds);
/* The Prometheus text exposition (version 0.0.4) of `m`, the engine's counters and the pool. */
typedef struct sv_redis sv_redis;
typedef struct sv_answers sv_answers;
typedef struct sv_iso sv_iso;
int sv_metrics_render(char **out, size_t *len, const sv_metrics *m, const sg_engine_stats *st, sv_pool *p,
                      unsigned workers, sv_redis *redis, sv_answers *answers, sv_iso *iso);

/* ---- solver processes (isolate.c) -------------------------------------------------------------- */

/* Why a solver process was replaced (shapegate_worker_restarts_total{reason}). */
typedef enum sv_restart {
    SV_RESTART_TIMEOUT,  /* killed at its request's budget plus the grace */
    SV_RESTART_MEMORY,   /* an allocation failed under its memory cap */
    SV_RESTART_SIGNAL,   /* died of a signal it was not sent by us (a crash, the OOM killer) */
    SV_RESTART_EXIT,     /* exited, or broke the protocol */
    SV_RESTART_SHUTDOWN, /* killed with its request at shutdown */
    SV_NRESTART
} sv_restart;

/* One solver process per worker of `s` (s->cfg.threads), each started and ready: 0, or SG_ERROR /
 * SG_ENOMEM with a message. */
int sv_iso_new(sv_iso **out, sg_service *s, sg_error *err);
/* Run request `q` on its worker's (q->worker) process and set its answer, whatever happens: the
 * process's own answer; 504 "timeout" after killing it at the budget plus the grace; 503
 * "worker_failed" when it died; 503 "draining" when q's cancel token was requested (shutdown). A
 * process killed or dead is replaced before the call returns. Only q's worker thread calls it. */
void sv_iso_run(sv_iso *iso, sv_request *q);
/* The engine counters summed over the processes (those replaced included), restarts by reason,
 * processes running. Any thread. */
void sv_iso_stats(sv_iso *iso, sg_engine_stats *st, uint64_t restarts[SV_NRESTART], unsigned *running);
const char *sv_restart_name(sv_restart r);
/* Close every process's socket, let it exit (or kill it after a second), reap it. After the pool
 * stopped. NULL-safe. */
void sv_iso_free(sv_iso *iso);

/* ---- the shared cache (redis.c) ---------------------------------------------------------------- */

/* Parse `url` (redis://HOST[:PORT][/DB]); nothing is connected yet. 0, or SG_EINVALID / SG_ENOMEM. */
int sv_redis_new(sv_redis **out, const char *url, unsigned ttl_s, sg_error *err);
void sv_redis_free(sv_redis *r);
/* The key of an answer of `route` for `o` and trace `t`; false when the trace cannot be written. */
bool sv_redis_key(char key[80], sv_route_id route, const sg_check_options *o, const sg_trace *t);
/* The answer kept under `key` (malloc'd, `*len` bytes), or NULL: none, or Redis down. */
char *sv_redis_get(sv_redis *r, const char *key, size_t *len);
/* Keep `len` bytes of `val` under `key` (best effort). */
void sv_redis_put(sv_redis *r, const char *key, const char *val, size_t len);
void sv_redis_stats(sv_redis *r, uint64_t *hits, uint64_t *misses, uint64_t *errors, uint64_t *stores, bool *up);

/* ---- the cache of answers by body bytes (answers.c) --------------------------------------------- */

#define SV_ANSWERS_MAX_ONE ((size_t)1 << 20)    /* an answer larger than this is never kept */
#define SV_ANSWERS_MAX_BYTES ((size_t)64 << 20) /* the bytes of all kept answers together */
/* A cache of `entries` answers (0: none, `*out` NULL). 0, or SG_ENOMEM. */
int sv_answers_new(sv_answers **out, unsigned entries);
void sv_answers_free(sv_answers *a);
/* The key of a `route` request with options `o` and body `body[0..len-1]`: SHA-256 over them. */
void sv_answers_key(unsigned char key[32], sv_route_id route, const sg_check_options *o, const char *body,
                    size_t len);
/* The answer kept for `key`: true and a malloc'd copy in `*body` (`*len` bytes) and its verdict name. */
bool sv_answers_get(sv_answers *a, const unsigned char key[32], char **body, size_t *len, const char **verdict);
/* Whether q's answer may be kept: 200 in memory, not canceled, nothing "unknown" in it (the
 * engine keeps only decided reports; an unknown verdict, dim or re-check is written "unknown"). */
bool sv_answers_cacheable(const sv_request *q);
/* Keep a copy of `len` bytes of `body` for `key` (best effort; the oldest make room). */
void sv_answers_put(sv_answers *a, const unsigned char key[32], const char *body, size_t len, const char *verdict);
void sv_answers_stats(sv_answers *a, uint64_t *hits, uint64_t *misses, uint64_t *stores, uint64_t *entries,
                      uint64_t *bytes);

/* ---- the service ------------------------------------------------------------------------------- */

struct sg_service {
    sg_service_config cfg;
    struct MHD_Daemon *daemon;
    sg_engine *engine;       /* in-process solving; NULL with cfg.isolate */
    sv_iso *iso;             /* the solver processes with cfg.isolate, else NULL */
    sv_pool *pool;
    sv_redis *redis;         /* or NULL */
    sv_answers *answers;     /* the cache of answers by body bytes, or NULL (--cache 0) */
    sv_metrics metrics;
    unsigned port;
    int quiesced_fd;         /* the listening socket after sg_service_drain() (closed last), or -1 */
    char spool[256];         /* private folder for pack outputs */
    _Atomic uint64_t seq;    /* request numbers, for spool names */
    _Atomic int draining;
    _Atomic uint64_t buffered; /* bytes of JSON bodies held now (cfg.max_buffered) */
    double started;
    pthread_mutex_t log_lock; /* held while a line is written, and by sg_service_set_log() */
    FILE *log;               /* the access log now (cfg.access_log, then what sg_service_set_log() gave) */
    bool log_on;             /* a log was configured: lines are made at all */
    _Atomic bool running;    /* libmicrohttpd started: its messages go to the log, not start_msg */
    char start_msg[200];     /* its last message while starting */
};

/* Free q's JSON body and return its bytes to the service's budget. */
void sv_body_release(sv_request *q);
/* Run request `q` on a worker (handlers.c): fills its answer. */
void sv_handle(sv_request *q, void *ctx);
/* Answer a GET route on the I/O thread (handlers.c). */
void sv_handle_get(sv_request *q);
/* Read the request's query parameters into q->opts: 0, or -1 with a 400 answer set. */
int sv_read_params(sv_request *q);

double sv_now(void);

#endif
