/*
 * server.c - libmicrohttpd's side of the service: the daemon, the life of a
 * request on a connection, the spool of archive bodies, the access log, and
 * draining at shutdown.
 *
 * A request's life: libmicrohttpd calls on_request() first with the header
 * (route, method, content type and length are checked there, so that a bad
 * request is answered before its body is read), then once per chunk of the
 * body (appended to memory for JSON, written to an unlinked temporary file
 * for an archive, counted against --max-body), then with no data once the
 * body is complete: the request then goes to the worker pool and its
 * connection is suspended; the worker leaves its answer and resumes it, and
 * libmicrohttpd calls on_request() a last time to send the answer. GET routes
 * are answered on the I/O thread at the second call (a response queued at the
 * first, with the header only, made libmicrohttpd 0.9.75 close the connection
 * after every GET: no keep-alive for probes and scrapes). on_completed() logs, counts and
 * frees the request, whichever way it ended.
 */
#define _GNU_SOURCE /* O_TMPFILE, mkdtemp */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "internal.h"

double sv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- requests ---------------------------------------------------------------------------------- */

static sv_request *request_new(sg_service *s, struct MHD_Connection *conn, const char *url, const char *method)
{
    sv_request *q = calloc(1, sizeof *q);

    if (!q)
        return NULL;
    q->svc = s;
    q->conn = conn;
    q->t0 = sv_now();
    q->fd = -1;
    q->fd2 = -1;
    q->resp_fd = -1;
    q->route = sv_route_find(url);
    snprintf(q->method, sizeof q->method, "%s", method);
    snprintf(q->path, sizeof q->path, "%s", url);
    atomic_init(&q->state, SV_RECEIVING);
    return q;
}

void sv_body_release(sv_request *q)
{
    atomic_fetch_sub(&q->svc->buffered, q->cap);
    free(q->body);
    q->body = NULL;
    q->len = q->cap = 0;
}

static void request_free(sv_request *q)
{
    sv_body_release(q);
    if (q->pp)
        MHD_destroy_post_processor(q->pp);
    if (q->fd >= 0)
        close(q->fd);
    if (q->fd2 >= 0)
        close(q->fd2);
    atomic_fetch_sub(&q->svc->buffered, q->policy_len);
    free(q->policy);
    if (q->resp_fd >= 0)
        close(q->resp_fd);
    sg_cancel_free(q->cancel);
    free(q->resp);
    free(q);
}

/* An unlinked temporary file in `dir` for an archive body: a descriptor, or -1. */
static int spool_file(const char *dir)
{
    char path[400];
    int fd;

#ifdef O_TMPFILE
    if ((fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) >= 0)
        return fd;
#endif
    snprintf(path, sizeof path, "%s/body-XXXXXX", dir);
    if ((fd = mkostemp(path, O_CLOEXEC)) < 0)
        return -1;
    unlink(path);
    return fd;
}

/* Write `n` bytes to spool file `fd`: 0, or -1 with an answer set. */
static int spool_write(sv_request *q, int fd, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, data, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            sv_error(q, 503, "spool_failed", "cannot spool the archive: %s", strerror(errno));
            return -1;
        }
        data += k;
        n -= (size_t)k;
    }
    return 0;
}

/* libmicrohttpd's multipart parser hands each part's bytes here (POST /v1/gate): "old" and "new"
 * to their spool files, "policy" to memory; anything else is a 400. MHD_NO (with an answer set)
 * stops the parsing. */
static sv_mhd_result on_part(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                             const char *content_type, const char *transfer_encoding, const char *data,
                             uint64_t off, size_t size)
{
    static const char *const names[SV_NPARTS] = {"old", "new", "policy"};
    sv_request *q = cls;
    unsigned i;

    (void)kind;
    (void)content_type;
    (void)transfer_encoding;
    for (i = 0; i < SV_NPARTS && strcmp(key, names[i]) != 0; i++)
        ;
    if (i == SV_NPARTS) {
        sv_error(q, 400, "bad_multipart", "unknown part '%.60s': POST /v1/gate takes the parts old, new and policy",
                 key);
        return MHD_NO;
    }
    if (off == 0 && q->part_bytes[i] > 0) {
        sv_error(q, 400, "bad_multipart", "part '%s' given twice", names[i]);
        return MHD_NO;
    }
    if (!q->part_seen[i] && i < SV_PART_POLICY && filename)
        snprintf(q->part_file[i], sizeof q->part_file[i], "%s", filename);
    q->part_seen[i] = true;
    q->part_bytes[i] += size;
    if (i < SV_PART_POLICY)
        return size == 0 || spool_write(q, i == SV_PART_OLD ? q->fd : q->fd2, data, size) == 0 ? MHD_YES : MHD_NO;
    if (q->policy_len + size > SV_MAX_POLICY) {
        sv_error(q, 413, "body_too_large", "the policy part is larger than %zu bytes", SV_MAX_POLICY);
        return MHD_NO;
    }
    if (size) {
        sg_service *sv = q->svc;
        char *np;
        /* the policy is held in memory: it counts against --max-buffered as JSON bodies do */
        if (atomic_fetch_add(&sv->buffered, size) + size > sv->cfg.max_buffered) {
            atomic_fetch_sub(&sv->buffered, size);
            sv_error(q, 503, "overloaded", "the bodies being read fill the service's memory budget; retry later");
            return MHD_NO;
        }
        if (!(np = realloc(q->policy, q->policy_len + size + 1))) {
            atomic_fetch_sub(&sv->buffered, size);
            sv_error(q, 503, "out_of_memory", "out of memory reading the policy");
            return MHD_NO;
        }
        q->policy = np;
        memcpy(q->policy + q->policy_len, data, size);
        q->policy_len += size;
        q->policy[q->policy_len] = '\0';
    }
    return MHD_YES;
}

/* The end of a multipart body: 0 when it was whole, with both archives; -1 with an answer set. */
static int multipart_done(sv_request *q)
{
    sv_mhd_result whole = MHD_destroy_post_processor(q->pp);

    q->pp = NULL;
    if (whole != MHD_YES) {
        sv_error(q, 400, "bad_multipart", "the multipart/form-data body is truncated or malformed");
        return -1;
    }
    if (!q->part_bytes[SV_PART_OLD] || !q->part_bytes[SV_PART_NEW]) {
        sv_error(q, 400, "empty_body", "POST /v1/gate needs the parts old and new, each a .pt2 archive or a trace%s",
                 q->part_seen[SV_PART_OLD] && q->part_seen[SV_PART_NEW] ? " (one is empty)" : "");
        return -1;
    }
    if (q->policy && strlen(q->policy) != q->policy_len) {
        sv_error(q, 400, "malformed_policy", "a NUL byte in the policy part");
        return -1;
    }
    return 0;
}

/* Keep `n` more body bytes: 0, or -1 with an answer set. */
static int take_body(sv_request *q, const char *data, size_t n)
{
    const sg_service_config *c = &q->svc->cfg;

    if (q->received + n > c->max_body) {
        sv_error(q, 413, "body_too_large", "the body is larger than the limit of %zu bytes", c->max_body);
        return -1;
    }
    q->received += n;
    atomic_fetch_add(&q->svc->metrics.bytes_in, n);
    if (q->route->body == SV_BODY_ARCHIVE)
        return spool_write(q, q->fd, data, n);
    if (q->route->body == SV_BODY_MULTIPART) {
        if (MHD_post_process(q->pp, data, n) == MHD_YES)
            return 0;
        if (!q->status)
            sv_error(q, 400, "bad_multipart", "the multipart/form-data body is malformed");
        return -1;
    }
    if (q->len + n + 1 > q->cap) {
        size_t cap = q->cap ? q->cap : 16384;
        char *nb;
        while (cap < q->len + n + 1)
            cap *= 2;
        /* all bodies in memory together stay under --max-buffered: beyond, this one waits for none */
        if (atomic_fetch_add(&q->svc->buffered, cap - q->cap) + (cap - q->cap) > c->max_buffered) {
            atomic_fetch_sub(&q->svc->buffered, cap - q->cap);
            sv_error(q, 503, "overloaded", "the bodies being read fill the service's memory budget; retry later");
            return -1;
        }
        if (!(nb = realloc(q->body, cap))) {
            atomic_fetch_sub(&q->svc->buffered, cap - q->cap);
            sv_error(q, 503, "out_of_memory", "out of memory reading the body");
            return -1;
        }
        q->body = nb;
        q->cap = cap;
    }
    memcpy(q->body + q->len, data, n);
    q->len += n;
    q->body[q->len] = '\0';
    return 0;
}

/* Queue q's answer with libmicrohttpd. */
static sv_mhd_result send_answer(sv_request *q)
{
    struct MHD_Response *resp;
    sv_mhd_result ok;
    size_t i;

    if (q->resp_fd >= 0) {
        resp = MHD_create_response_from_fd64(q->resp_fd_len, q->resp_fd);
        if (resp)
            q->resp_fd = -1; /* the response owns it now */
        q->sent = q->resp_fd_len;
    } else {
        resp = MHD_create_response_from_buffer_with_free_callback(q->resp_len, q->resp, free);
        if (resp)
            q->resp = NULL;
        q->sent = q->resp_len;
    }
    atomic_store(&q->state, SV_SENT);
    if (!resp)
        return MHD_NO; /* out of memory: close the connection */
    if (q->ctype)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, q->ctype);
    for (i = 0; i < 2; i++) {
        char *colon = strchr(q->extra_header[i], ':');
        if (colon) {
            *colon = '\0';
            MHD_add_response_header(resp, q->extra_header[i], colon + 2);
        }
    }
    if (q->status == 405)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, q->route->body == SV_BODY_NONE ? "GET, HEAD" : "POST");
    if (q->failed_body || atomic_load(&q->svc->draining))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    ok = MHD_queue_response(q->conn, q->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* Does the request's Content-Type name `want` (its media type, parameters ignored)? */
static bool content_type_is(struct MHD_Connection *conn, const char *const *want)
{
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    size_t n;

    if (!ct)
        return false;
    n = strcspn(ct, "; \t");
    for (; *want; want++)
        if (strlen(*want) == n && strncasecmp(ct, *want, n) == 0)
            return true;
    return false;
}

static const char *const json_types[] = {"application/json", NULL};
static const char *const archive_types[] = {"application/octet-stream", "application/zip", NULL};
static const char *const multipart_types[] = {"multipart/form-data", NULL};

/* The checks on a request's header: 0 to read its body, or -1 with an answer set. */
static int admit(sv_request *q)
{
    sg_service *s = q->svc;
    const char *cl;
    unsigned long long n;
    char *end;

    if (!q->route) {
        sv_error(q, 404, "not_found", "no route %s (GET /v1/openapi.json lists them)", q->path);
        return -1;
    }
    /* HEAD is GET without the body (libmicrohttpd leaves the body out) */
    if (strcmp(q->method, q->route->method) != 0 && !(!strcmp(q->method, "HEAD") && q->route->body == SV_BODY_NONE)) {
        sv_error(q, 405, "method_not_allowed", "%s takes %s, not %s", q->route->path, q->route->method, q->method);
        return -1;
    }
    if (atomic_load(&s->draining)) {
        sv_error(q, 503, "draining", "the service is shutting down");
        return -1;
    }
    if (q->route->body == SV_BODY_NONE)
        return 0;
    if (sv_read_params(q) != 0)
        return -1;
    if (!content_type_is(q->conn, q->route->body == SV_BODY_JSON        ? json_types
                                  : q->route->body == SV_BODY_MULTIPART ? multipart_types
                                                                        : archive_types)) {
        sv_error(q, 415, "unsupported_media_type", "%s takes Content-Type %s", q->route->path,
                 q->route->body == SV_BODY_JSON        ? "application/json"
                 : q->route->body == SV_BODY_MULTIPART ? "multipart/form-data (parts old, new, policy)"
                                                       : "application/octet-stream or application/zip");
        return -1;
    }
    cl = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        errno = 0;
        n = strtoull(cl, &end, 10);
        if (errno == 0 && *end == '\0' && n > s->cfg.max_body) {
            sv_error(q, 413, "body_too_large", "the body (%llu bytes) is larger than the limit of %zu bytes", n,
                     s->cfg.max_body);
            return -1;
        }
    }
    if ((q->route->body == SV_BODY_ARCHIVE || q->route->body == SV_BODY_MULTIPART)
        && (q->fd = spool_file(s->spool)) < 0) {
        sv_error(q, 503, "spool_failed", "cannot create a spool file in %s: %s", s->spool, strerror(errno));
        return -1;
    }
    if (q->route->body == SV_BODY_MULTIPART) {
        if ((q->fd2 = spool_file(s->spool)) < 0) {
            sv_error(q, 503, "spool_failed", "cannot create a spool file in %s: %s", s->spool, strerror(errno));
            return -1;
        }
        /* NULL: no boundary in the Content-Type (or out of memory) */
        if (!(q->pp = MHD_create_post_processor(q->conn, 16384, on_part, q))) {
            sv_error(q, 400, "bad_multipart", "multipart/form-data without a boundary");
            return -1;
        }
    }
    if (sg_cancel_new(&q->cancel, NULL) != 0) {
        sv_error(q, 503, "out_of_memory", "out of memory");
        return -1;
    }
    q->opts.cancel = q->cancel;
    return 0;
}

/*
 * A check or spec whose body bytes were answered before (answers.c): the answer set from the
 * cache of answers on the I/O thread, no worker, no parse. Otherwise the key is kept for the
 * worker to store its answer under. True when answered.
 */
static bool answered_before(sv_request *q)
{
    char *body = NULL;
    size_t len = 0;
    const char *verdict = NULL;

    if (!q->svc->answers || q->len == 0 || (q->route->id != SV_ROUTE_CHECK && q->route->id != SV_ROUTE_SPEC))
        return false;
    sv_answers_key(q->answer_key, q->route->id, &q->opts, q->body, q->len);
    q->answer_keyed = true;
    if (!sv_answers_get(q->svc->answers, q->answer_key, &body, &len, &verdict))
        return false;
    sv_answer(q, 200, "ok", body, len, "application/json");
    q->verdict = verdict;
    q->from_answers = true;
    sv_body_release(q);
    return true;
}

static sv_mhd_result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    sg_service *s = cls;
    sv_request *q = *con_cls;
    int state;

    (void)version;
    if (!q) {
        if (!(q = request_new(s, conn, url, method)))
            return MHD_NO;
        *con_cls = q;
        atomic_fetch_add(&s->metrics.in_flight, 1);
        if (admit(q) != 0)
            return send_answer(q);
        return MHD_YES; /* a GET is answered on the next call, once libmicrohttpd has the whole request */
    }
    if (q->route && q->route->body == SV_BODY_NONE && atomic_load(&q->state) == SV_RECEIVING) {
        if (*upload_size) { /* a body on a GET: read and dropped, at most --max-body of it */
            q->dropped += *upload_size;
            *upload_size = 0;
            return q->dropped > q->svc->cfg.max_body ? MHD_NO : MHD_YES;
        }
        sv_handle_get(q);
        return send_answer(q);
    }
    state = atomic_load(&q->state);
    if (state == SV_SENT) {
        *upload_size = 0; /* answered early (413, ...): the rest of the body is dropped */
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (q->failed_body) {
            /* libmicrohttpd 0.9.75 sends no answer queued while a body is still coming: the rest is
             * read and dropped, up to the size of a body we would have taken, then the connection
             * is closed without one */
            q->dropped += n;
            return q->dropped > q->svc->cfg.max_body ? MHD_NO : MHD_YES;
        }
        if (take_body(q, upload_data, n) != 0) {
            q->failed_body = true;
            sv_body_release(q);
        }
        return MHD_YES;
    }
    if (!q->failed_body && state == SV_RECEIVING && q->pp && multipart_done(q) != 0)
        q->failed_body = true;
    if (q->failed_body && state == SV_RECEIVING)
        return send_answer(q);
    if (state == SV_RECEIVING && answered_before(q))
        return send_answer(q);
    if (state == SV_RECEIVING) {
        atomic_store(&q->state, SV_QUEUED);
        MHD_suspend_connection(conn);
        if (sv_pool_submit(s->pool, q) != 0) {
            atomic_fetch_add(&s->metrics.rejected_busy, 1);
            if (atomic_load(&s->draining))
                sv_error(q, 503, "draining", "the service is shutting down");
            else
                sv_error(q, 429, "busy", "every worker is busy and the queue is full; retry later");
            atomic_store(&q->state, SV_ANSWERED);
            MHD_resume_connection(conn);
        }
        return MHD_YES;
    }
    if (state == SV_ANSWERED)
        return send_answer(q);
    return MHD_YES; /* SV_QUEUED: not ours to act on yet */
}

/* After a worker's job (sv_handle): wake the connection, which then sends the answer and frees q. */
static void finish_job(sv_request *q, void *ctx)
{
    (void)ctx;
    atomic_store(&q->state, SV_ANSWERED);
    MHD_resume_connection(q->conn);
}

/* A request the pool never ran (shutdown): 503, and wake the connection. */
static void drop_job(sv_request *q, void *ctx)
{
    (void)ctx;
    sv_error(q, 503, "draining", "the service is shutting down");
    atomic_store(&q->state, SV_ANSWERED);
    MHD_resume_connection(q->conn);
}

/* ---- the access log ----------------------------------------------------------------------------- */

/* Write `len` bytes of log to the current log stream, if any, in one call (lines of two threads
 * do not mix; sg_service_set_log() waits for the writers). */
static void log_write(sg_service *s, const char *line, size_t len)
{
    pthread_mutex_lock(&s->log_lock);
    if (s->log) {
        fwrite(line, 1, len, s->log);
        if (s->log != stderr)
            fflush(s->log);
    }
    pthread_mutex_unlock(&s->log_lock);
}

FILE *sg_service_set_log(sg_service *s, FILE *f)
{
    FILE *old;

    pthread_mutex_lock(&s->log_lock);
    old = s->log;
    if (old)
        fflush(old);
    s->log = f;
    pthread_mutex_unlock(&s->log_lock);
    return old;
}

static const char *ended_name(enum MHD_RequestTerminationCode toe)
{
    switch (toe) {
    case MHD_REQUEST_TERMINATED_COMPLETED_OK: return NULL;
    case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "timeout";
    case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client_abort";
    case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "shutdown";
    case MHD_REQUEST_TERMINATED_READ_ERROR: return "read_error";
    default: return "error";
    }
}

/* One JSON line per request, built in a buffer of its own (no allocation). */
static void access_log(sg_service *s, sv_request *q, unsigned status, double secs,
                       enum MHD_RequestTerminationCode toe)
{
    const union MHD_ConnectionInfo *ci;
    char line[1024], ts[40], addr[INET6_ADDRSTRLEN + 8] = "";
    const char *ended = ended_name(toe);
    size_t n;
    struct timespec now;
    struct tm tm;
    int k;

    if (!s->log_on)
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    ci = MHD_get_connection_info(q->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr) {
        const struct sockaddr *sa = ci->client_addr;
        if (sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, sizeof addr);
        else if (sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr, sizeof addr);
    }
    n = (size_t)snprintf(line, sizeof line, "{\"ts\": \"%s.%03ldZ\", \"remote\": \"%s\", \"method\": ", ts,
                         now.tv_nsec / 1000000, addr);
    sv_json_put(line, sizeof line, &n, q->method);
    memcpy(line + n, ", \"path\": ", sizeof ", \"path\": " - 1);
    n += sizeof ", \"path\": " - 1;
    sv_json_put(line, sizeof line, &n, q->path);
    /* the rest is bounded: codes, verdicts and names are short and ours */
    k = snprintf(line + n, sizeof line - n,
                 ", \"status\": %u, \"code\": \"%s\", \"ms\": %.3f, \"in\": %llu, \"out\": %llu%s%s%s%s%s%s%s}\n",
                 status, status ? q->code : "client_closed", secs * 1000.0, (unsigned long long)q->received,
                 (unsigned long long)q->sent, q->verdict ? ", \"verdict\": \"" : "", q->verdict ? q->verdict : "",
                 q->verdict ? "\"" : "", q->from_redis     ? ", \"cache\": \"redis\""
                 : q->from_answers ? ", \"cache\": \"answers\""
                                   : "",
                 ended ? ", \"ended\": \"" : "", ended ? ended : "", ended ? "\"" : "");
    if (k < 0 || (size_t)k >= sizeof line - n)
        return;
    n += (size_t)k;
    log_write(s, line, n);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    sg_service *s = cls;
    sv_request *q = *con_cls;
    unsigned status;
    double secs;

    (void)conn;
    if (!q)
        return;
    *con_cls = NULL;
    secs = sv_now() - q->t0;
    status = atomic_load(&q->state) == SV_SENT ? q->status : 0;
    /* an answer the client did not take whole is still counted under its status */
    sv_metrics_observe(&s->metrics, q->route ? q->route->id : SV_ROUTE_OTHER, status, secs);
    access_log(s, q, status, secs, toe);
    atomic_fetch_sub(&s->metrics.in_flight, 1);
    request_free(q);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    sg_service *s = cls;
    char msg[512];
    size_t n;

    vsnprintf(msg, sizeof msg, fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    if (!atomic_load(&s->running)) { /* while starting (this thread): kept for the one-line error, if it fails */
        snprintf(s->start_msg, sizeof s->start_msg, "%.*s", (int)sizeof s->start_msg - 1, msg);
        return;
    }
    if (s->log_on) {
        static const char head[] = "{\"level\": \"libmicrohttpd\", \"message\": ";
        char line[700];
        size_t k = sizeof head - 1;
        memcpy(line, head, k);
        sv_json_put(line, sizeof line - 2, &k, msg);
        line[k++] = '}';
        line[k++] = '\n';
        log_write(s, line, k);
    }
}

/* ---- the service ------------------------------------------------------------------------------- */

int sg_service_start(sg_service **out, const sg_service_config *c, sg_error *err)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    struct sockaddr_storage ss;
    socklen_t sl;
    const char *tmp;
    const union MHD_DaemonInfo *di;
    sg_service *s;
    int rc;

    *out = NULL;
    memset(&ss, 0, sizeof ss);
    if (c->port > 65535 || c->threads == 0 || c->threads > 256 || c->io_threads == 0 || c->io_threads > 64
        || c->max_body == 0 || c->max_queue == 0) {
        snprintf(err->msg, sizeof err->msg, "bad service options (port, threads, io threads, max body, queue)");
        return err->code = SG_EINVALID;
    }
    if (inet_pton(AF_INET, c->host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
        ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
        ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)c->port);
    } else if (inet_pton(AF_INET6, c->host, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
        ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)c->port);
    } else {
        /* a name ("localhost"): its first address */
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE;
        if (getaddrinfo(c->host, NULL, &hints, &res) != 0 || !res || res->ai_addrlen > sizeof ss) {
            if (res)
                freeaddrinfo(res);
            snprintf(err->msg, sizeof err->msg, "listen address '%.100s': no such host", c->host);
            return err->code = SG_EINVALID;
        }
        memcpy(&ss, res->ai_addr, res->ai_addrlen);
        freeaddrinfo(res);
        if (ss.ss_family == AF_INET6)
            ((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)c->port);
        else
            ((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)c->port);
    }
    if (!(s = calloc(1, sizeof *s))) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return err->code = SG_ENOMEM;
    }
    s->cfg = *c;
    s->quiesced_fd = -1;
    s->log = c->access_log;
    s->log_on = c->access_log != NULL;
    pthread_mutex_init(&s->log_lock, NULL);
    s->started = sv_now();
    tmp = c->tmpdir ? c->tmpdir : getenv("TMPDIR");
    snprintf(s->spool, sizeof s->spool, "%s/shapegate-serve-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->spool)) {
        snprintf(err->msg, sizeof err->msg, "cannot create the spool folder %.200s: %s", s->spool, strerror(errno));
        s->spool[0] = '\0';
        rc = err->code = SG_EIO;
        goto fail;
    }
    if (c->isolate) {
        /* the solving in one process per worker, each with its own engine (isolate.c) */
        if ((rc = sv_iso_new(&s->iso, s, err)) != 0)
            goto fail;
    } else {
        eo.warm_contexts = c->threads; /* one warm Z3 context per worker */
        eo.cache_entries = c->cache_entries;
        if ((rc = sg_engine_new(&s->engine, &eo, err)) != 0)
            goto fail;
    }
    if (sv_answers_new(&s->answers, c->cache_entries) != 0) {
        snprintf(err->msg, sizeof err->msg, "out of memory creating the answer cache");
        rc = err->code = SG_ENOMEM;
        goto fail;
    }
    if (c->redis_url && (rc = sv_redis_new(&s->redis, c->redis_url, c->redis_ttl_s, err)) != 0)
        goto fail;
    if ((rc = sv_pool_new(&s->pool, c->threads, c->max_queue, sv_handle, finish_job, s)) != 0) {
        snprintf(err->msg, sizeof err->msg, "cannot start %u workers", c->threads);
        err->code = rc;
        goto fail;
    }
    {
        /* the logger first, so that it sees every message; a pool of one I/O thread is no pool
         * (libmicrohttpd warns), so the pool is asked for only above one */
        struct MHD_OptionItem o[12];
        size_t n = 0;
#define SV_OPT(opt, val, ptr) (o[n].option = (opt), o[n].value = (intptr_t)(val), o[n].ptr_value = (ptr), n++)
        SV_OPT(MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s);
        SV_OPT(MHD_OPTION_SOCK_ADDR, 0, &ss);
        if (c->io_threads > 1)
            SV_OPT(MHD_OPTION_THREAD_POOL_SIZE, c->io_threads, NULL);
        SV_OPT(MHD_OPTION_CONNECTION_LIMIT, c->max_connections, NULL);
        SV_OPT(MHD_OPTION_CONNECTION_TIMEOUT, c->idle_timeout_s, NULL);
        SV_OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, 0, NULL);
        SV_OPT(MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, NULL);
        SV_OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, s);
        SV_OPT(MHD_OPTION_END, 0, NULL);
#undef SV_OPT
        s->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG
                                         | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
                                     (uint16_t)c->port, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, o,
                                     MHD_OPTION_END);
    }
    if (!s->daemon) {
        snprintf(err->msg, sizeof err->msg, "cannot listen on %.60s:%u: %.160s", c->host, c->port,
                 s->start_msg[0] ? s->start_msg : "libmicrohttpd would not start");
        rc = err->code = SG_EIO;
        goto fail;
    }
    atomic_store(&s->running, true);
    di = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_LISTEN_FD);
    sl = sizeof ss;
    if (di && getsockname(di->listen_fd, (struct sockaddr *)&ss, &sl) == 0)
        s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
    else
        s->port = c->port;
    *out = s;
    return 0;
fail:
    sg_service_free(s);
    return rc;
}

unsigned sg_service_port(const sg_service *s) { return s->port; }

void sg_service_tune_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, (int)SG_SERVICE_TRIM_BYTES);
    mallopt(M_TOP_PAD, (int)SG_SERVICE_TOP_PAD);
    mallopt(M_MMAP_THRESHOLD, (int)SG_SERVICE_MMAP_BYTES);
#endif
}

/* Wait until no request is in flight or sv_now() passes `end`; the requests still in flight. */
static unsigned wait_in_flight(sg_service *s, double end)
{
    uint64_t n;

    while ((n = atomic_load(&s->metrics.in_flight)) > 0 && sv_now() < end) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return (unsigned)n;
}

unsigned sg_service_drain(sg_service *s, unsigned wait_ms)
{
    double end = sv_now() + wait_ms / 1000.0;
    MHD_socket fd;

    atomic_store(&s->draining, 1);
    /* libmicrohttpd's I/O threads may still be inside accept() on the listening socket: it must
     * stay open until MHD_stop_daemon() has joined them (microhttpd.h, MHD_quiesce_daemon), or a
     * thread accepts on a closed descriptor, or on whatever file reuses its number. shutdown()
     * refuses new connections now (Linux: a listening socket shut down stops listening) and
     * keeps the descriptor; sg_service_free() closes it. */
    if (s->daemon && s->quiesced_fd < 0 && (fd = MHD_quiesce_daemon(s->daemon)) != MHD_INVALID_SOCKET) {
        s->quiesced_fd = fd;
        shutdown(fd, SHUT_RDWR);
    }
    return wait_in_flight(s, end);
}

void sg_service_free(sg_service *s)
{
    if (!s)
        return;
    atomic_store(&s->draining, 1);
    /* the workers first (running calls canceled, queued requests answered 503 and resumed), so
     * that no connection is suspended when the daemon stops; the pool itself stays until the
     * I/O threads are gone, since they still submit (refused) and read its load (/readyz) */
    sv_pool_stop(s->pool, drop_job);
    /* the answers the stop just made (503 draining, a partial report) are queued on resumed
     * connections: let the I/O threads send them (at most a second) before the daemon closes them */
    wait_in_flight(s, sv_now() + 1.0);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->quiesced_fd >= 0)
        close(s->quiesced_fd);
    sv_pool_free(s->pool);
    sv_iso_free(s->iso); /* after the workers: none is talking to its process any more */
    sg_engine_free(s->engine);
    sv_redis_free(s->redis);
    sv_answers_free(s->answers);
    if (s->spool[0])
        rmdir(s->spool);
    pthread_mutex_destroy(&s->log_lock);
    free(s);
}
