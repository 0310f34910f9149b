/*
 * service.h - `shapegate serve`: an HTTP JSON service over the engine, on
 * libmicrohttpd (docs/service.md has the API, the statuses and the metrics).
 *
 * The service is a thin client of the public headers, like the CLI: a request
 * body becomes a trace (or an archive in a temporary file), the engine
 * answers, and the report's own JSON writer makes the response, the same
 * object `shapegate check --json` prints. libmicrohttpd's threads only move
 * bytes; solving runs on a pool of workers that share one engine (one warm
 * Z3 context per worker), so a slow client or a long solve never holds up
 * the reading and writing of other connections. With `isolate` each worker
 * hands its requests to a solver process of its own instead (isolate.c),
 * which it kills when the process overruns the request's budget.
 *
 *     sg_service_config c = SG_SERVICE_CONFIG_INIT;
 *     c.port = 8080;
 *     sg_service *s = NULL;
 *     if (sg_service_start(&s, &c, &err) == 0) {
 *         ... wait for SIGTERM ...
 *         sg_service_drain(s, 30000);
 *         sg_service_free(s);
 *     }
 *
 * Threading: sg_service_start() starts the threads and returns; the other
 * calls may come from any one thread (the one that started it).
 */
#ifndef SG_SERVICE_H
#define SG_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "shapegate/shapegate.h"

typedef struct sg_service sg_service;

/* What the service listens on and the limits it holds. Fill with SG_SERVICE_CONFIG_INIT. */
typedef struct sg_service_config {
    const char *host;          /* address to bind ("127.0.0.1", "::1", "0.0.0.0"; a name: its first address) */
    unsigned port;             /* 0: any free port (sg_service_port() says which) */
    unsigned threads;          /* solver workers, each with a warm Z3 context (default 2) */
    unsigned io_threads;       /* libmicrohttpd polling threads (default 1) */
    size_t max_body;           /* largest request body in bytes, JSON or archive: 413 above */
    unsigned timeout_ms;       /* wall-clock budget of one request's solving: 504 past it (0: none) */
    unsigned cache_entries;    /* reports the engine keeps for identical requests (0: none) */
    unsigned max_queue;        /* requests waiting for a worker: 429 beyond */
    unsigned max_connections;  /* open connections at once: refused beyond */
    unsigned idle_timeout_s;   /* a connection with no traffic for this long is closed */
    size_t max_guards;         /* guards in one trace: 413 beyond */
    size_t max_symbols;        /* symbols in one trace: 413 beyond */
    size_t max_buffered;       /* JSON body bytes held in memory by all requests together: 503 beyond */
    const char *tmpdir;        /* where archive bodies are spooled (NULL: $TMPDIR or /tmp) */
    const char *redis_url;     /* redis://HOST[:PORT][/DB]: a verdict cache shared by replicas, or NULL */
    unsigned redis_ttl_s;      /* how long Redis keeps an answer (0: until evicted) */
    FILE *access_log;          /* one JSON line per request, or NULL for none */
    /*
     * Solve in child processes (docs/service.md, "Isolation"): each worker thread owns one
     * long-lived solver process (this executable run again as `shapegate __serve-worker`, its
     * own engine with one warm context) and hands it each request over a socket. A process
     * that has not answered by the request's budget plus SG_SERVICE_GRACE_MS (and a tenth of
     * the budget) is killed (504 "timeout"), one that dies or runs out of `worker_memory_mib`
     * answers 503 "worker_failed"; either is replaced. false: solving runs in this process.
     */
    bool isolate;
    unsigned worker_memory_mib; /* with `isolate`: memory a solver process may add after its start (0: no cap) */
} sg_service_config;

#define SG_SERVICE_CONFIG_INIT                                                                       \
    {"127.0.0.1", 8080, 2, 1, (size_t)64 << 20, 30000, 1024, 64, 1024, 15, 100000, 100000,          \
     (size_t)512 << 20, NULL, NULL, 86400, NULL, false, 0}

/* With `isolate`: how long past a request's budget its solver process may take to answer. */
#define SG_SERVICE_GRACE_MS 1000u

/*
 * Bind, start the I/O threads and the workers. Returns 0 and the service in
 * `*out` (free with sg_service_free()), SG_EINVALID (a bad address or
 * option), SG_EIO (cannot bind or create the spool folder), SG_ENOMEM,
 * SG_ERROR (libmicrohttpd would not start), with a one-line message.
 */
int sg_service_start(sg_service **out, const sg_service_config *c, sg_error *err);

/* The port the service listens on. */
unsigned sg_service_port(const sg_service *s);

/*
 * Stop accepting connections, answer new requests on open ones with 503, and
 * wait up to `wait_ms` for the requests in flight to be answered. Returns the
 * number still in flight at the end (0: drained).
 */
unsigned sg_service_drain(sg_service *s, unsigned wait_ms);

/*
 * Make `f` the access log from now on (NULL: none; lines are made only when
 * the service started with a log) and return the one before, which no
 * thread writes to any more: the caller may close it (SIGHUP's log
 * reopening). `f` stays the caller's.
 */
FILE *sg_service_set_log(sg_service *s, FILE *f);

/*
 * The process's allocator set for a server (glibc; elsewhere nothing): freed memory is kept up
 * to SG_SERVICE_TRIM_BYTES per arena instead of being handed back to the kernel at every free that
 * empties a heap's top, and heaps grow SG_SERVICE_TOP_PAD at a time. A small check allocates and frees
 * a few hundred kB; with glibc's defaults each request paid page faults and madvise calls for
 * it (about 10-25% of a small check's CPU, bench/serve.sh). Costs at most that much resident
 * memory per arena once touched. Setting either makes glibc stop raising its mmap threshold as
 * it would (128 kB up to 32 MiB), so the threshold is set to that ceiling too: left at 128 kB,
 * every block over it is an mmap, page faults and an munmap, and making a Z3 context (tables of a
 * few hundred kB) cost 35 ms of CPU instead of 1.5 ms (verify's and gate's point searches make
 * one per request; bench_engine --corpus). Called by `shapegate serve` before sg_service_start().
 */
#define SG_SERVICE_TRIM_BYTES ((size_t)64 << 20)
#define SG_SERVICE_TOP_PAD ((size_t)16 << 20)
#define SG_SERVICE_MMAP_BYTES ((size_t)32 << 20)
void sg_service_tune_memory(void);

/*
 * The solver process's side of `isolate` (`shapegate __serve-worker`): reads its settings,
 * then requests, from socket `fd` (inherited from the service that started it) and answers
 * each, until the socket closes. Returns the process's exit status: 0 at the socket's end,
 * SG_SERVICE_EXIT_MEMORY when an allocation failed (its memory cap; the request is then not
 * answered, the service reports it), 1 on a broken socket or a failed start. Prints nothing.
 */
#define SG_SERVICE_EXIT_MEMORY 75
int sg_service_worker_main(int fd);

/* Stop everything and free the service (after sg_service_drain(), or at once). NULL-safe. */
void sg_service_free(sg_service *s);

#endif
