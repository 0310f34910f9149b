/*
 * handlers.c - what each endpoint does with its request: a JSON body read
 * into a trace and checked (or its spec generated), an archive body opened
 * from its spool file and inspected, verified or packed; the GET routes; the
 * query parameters; and the JSON error bodies every failure answers with.
 *
 * The report JSON is the library's own writer's (sg_report_to_json), sent as
 * it comes: the same object `shapegate check --json` prints. A request whose
 * solving ran out of its budget gets 504 with that report as "partial".
 */
#define _GNU_SOURCE /* open_memstream, strcasestr */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static const sv_route routes[] = {
    {SV_ROUTE_CHECK, "/v1/check", "POST", SV_BODY_JSON},
    {SV_ROUTE_SPEC, "/v1/spec", "POST", SV_BODY_JSON},
    {SV_ROUTE_INSPECT, "/v1/archives/inspect", "POST", SV_BODY_ARCHIVE},
    {SV_ROUTE_VERIFY, "/v1/archives/verify", "POST", SV_BODY_ARCHIVE},
    {SV_ROUTE_PACK, "/v1/archives/pack", "POST", SV_BODY_ARCHIVE},
    {SV_ROUTE_GATE, "/v1/gate", "POST", SV_BODY_MULTIPART},
    {SV_ROUTE_HEALTHZ, "/healthz", "GET", SV_BODY_NONE},
    {SV_ROUTE_READYZ, "/readyz", "GET", SV_BODY_NONE},
    {SV_ROUTE_VERSION, "/v1/version", "GET", SV_BODY_NONE},
    {SV_ROUTE_METRICS, "/metrics", "GET", SV_BODY_NONE},
    {SV_ROUTE_OPENAPI, "/v1/openapi.json", "GET", SV_BODY_NONE},
};

static const char *const labels[SV_NROUTES] = {
    "/v1/check", "/v1/spec", "/v1/archives/inspect", "/v1/archives/verify", "/v1/archives/pack", "/v1/gate",
    "/healthz", "/readyz", "/v1/version", "/metrics", "/v1/openapi.json", "other",
};

const sv_route *sv_route_find(const char *path)
{
    size_t i;
    for (i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (strcmp(routes[i].path, path) == 0)
            return &routes[i];
    return NULL;
}

const sv_route *sv_route_of(sv_route_id id)
{
    size_t i;
    for (i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (routes[i].id == id && routes[i].body != SV_BODY_NONE)
            return &routes[i];
    return NULL;
}

const char *sv_route_label(sv_route_id id) { return id < SV_NROUTES ? labels[id] : "other"; }

/* ---- answers ----------------------------------------------------------------------------------- */

void sv_json_put(char *dst, size_t cap, size_t *n, const char *src)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p;
    size_t k = *n;

    if (k + 3 > cap)
        return;
    dst[k++] = '"';
    for (p = (const unsigned char *)src; *p && k + 8 < cap; p++) {
        if (*p == '"' || *p == '\\') {
            dst[k++] = '\\';
            dst[k++] = (char)*p;
        } else if (*p == '\n') {
            dst[k++] = '\\';
            dst[k++] = 'n';
        } else if (*p < 0x20 || *p >= 0x7f) {
            memcpy(dst + k, "\\u00", 4);
            dst[k + 4] = hex[*p >> 4];
            dst[k + 5] = hex[*p & 15];
            k += 6;
        } else {
            dst[k++] = (char)*p;
        }
    }
    dst[k++] = '"';
    dst[k] = '\0';
    *n = k;
}

void sv_answer(sv_request *q, unsigned status, const char *code, char *body, size_t len, const char *ctype)
{
    free(q->resp);
    q->status = status;
    snprintf(q->code, sizeof q->code, "%s", code);
    q->resp = body;
    q->resp_len = len;
    q->ctype = ctype;
}

void sv_error(sv_request *q, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[512], text[2048], *body;
    size_t n;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    n = (size_t)snprintf(text, sizeof text, "{\"error\": {\"code\": \"%.40s\", \"status\": %u, \"message\": ", code,
                         status);
    sv_json_put(text, sizeof text - 4, &n, msg);
    memcpy(text + n, "}}\n", 4);
    n += 3;
    /* out of memory: an answer with no body, which needs none */
    if ((body = malloc(n + 1)))
        memcpy(body, text, n + 1);
    sv_answer(q, status, code, body, body ? n : 0, "application/json");
}

/* The status and code for a library error while reading the request's input. */
static void input_error(sv_request *q, int rc, const sg_error *err, const char *invalid_code)
{
    switch (rc) {
    case SG_EINVALID:
        if (strstr(err->msg, "invalid JSON") || strstr(err->msg, "empty JSON text"))
            sv_error(q, 400, "malformed_json", "%s", err->msg);
        else
            sv_error(q, 422, invalid_code, "%s", err->msg);
        return;
    case SG_EIO:
        sv_error(q, 422, invalid_code, "%s", err->msg);
        return;
    case SG_EUNDEFINED:
    case SG_EOVERFLOW:
        sv_error(q, 422, invalid_code, "%s", err->msg);
        return;
    case SG_EUNSUPPORTED:
        sv_error(q, 422, "unsupported", "%s", err->msg);
        return;
    case SG_ELIMIT:
        sv_error(q, 413, "limit_exceeded", "%s", err->msg);
        return;
    case SG_ENOMEM:
        sv_error(q, 503, "out_of_memory", "%s", err->msg);
        return;
    default:
        sv_error(q, 500, "internal", "%s", err->msg);
    }
}

/* True when the report is unknown because a budget ran out (time, resource limit, cancel). */
static bool budget_spent(const sg_report *r, double seconds, unsigned timeout_ms)
{
    size_t i, n = sg_report_dim_count(r);

    if (sg_report_verdict(r) != SG_VERDICT_UNKNOWN)
        return false;
    for (i = 0; i < n; i++) {
        const char *why = sg_report_dim_reason(r, i);
        if (sg_report_dim_status(r, i) == SG_DIM_UNKNOWN && why
            && (strstr(why, "budget") || strstr(why, "timeout") || strstr(why, "canceled")
                || strstr(why, "resource limit")))
            return true;
    }
    return timeout_ms && seconds * 1000.0 >= timeout_ms * 0.95;
}

/* Answer with report `r`: 200, or 504 {"error": ..., "partial": REPORT} when its budget ran out. */
static void report_answer(sv_request *q, const sg_report *r, double t0)
{
    sg_error err = SG_ERROR_INIT;
    char *json = NULL, *body = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if ((rc = sg_report_to_json(&json, r, 0, &err)) != 0) {
        sv_error(q, 503, "out_of_memory", "%s", err.msg);
        return;
    }
    q->verdict = sg_verdict_name(sg_report_verdict(r));
    if (!budget_spent(r, sv_now() - t0, q->opts.timeout_ms)) {
        size_t n = strlen(json);
        /* the library's string is its allocator's: copy it into ours with the final newline */
        if ((body = malloc(n + 2))) {
            memcpy(body, json, n);
            body[n] = '\n';
            body[n + 1] = '\0';
            sv_answer(q, 200, "ok", body, n + 1, "application/json");
        } else {
            sv_error(q, 503, "out_of_memory", "out of memory writing the answer");
        }
        sg_free(json);
        return;
    }
    atomic_fetch_add(&q->svc->metrics.budget_exceeded, 1);
    if ((f = open_memstream(&body, &len))) {
        fprintf(f, "{\"error\": {\"code\": \"budget_exceeded\", \"status\": 504, \"message\": "
                   "\"the solving budget (%u ms) ran out; 'partial' has what was decided\"}, \"partial\": ",
                q->opts.timeout_ms);
        fputs(json, f);
        fputs("}\n", f);
        if (fclose(f) != 0) {
            free(body);
            body = NULL;
        }
    }
    sg_free(json);
    if (body)
        sv_answer(q, 504, "budget_exceeded", body, len, "application/json");
    else
        sv_error(q, 503, "out_of_memory", "out of memory writing the answer");
}

/* ---- the endpoints ----------------------------------------------------------------------------- */

/* Keep q's answer in the cache of answers by body bytes when it may be (sv_answers_cacheable). */
static void keep_answer(sv_request *q)
{
    if (q->answer_keyed && sv_answers_cacheable(q))
        sv_answers_put(q->svc->answers, q->answer_key, q->resp, q->resp_len, q->verdict);
}

static void do_trace(sv_request *q, sg_engine *e, bool spec)
{
    const sg_service_config *c = &q->svc->cfg;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    double t0 = sv_now();
    char key[80] = "";
    int rc;

    if (q->len == 0) {
        sv_error(q, 400, "empty_body", "the request has no body: a JSON trace (docs/trace-format.md) expected");
        return;
    }
    if ((rc = sg_trace_load_json(&t, q->body, q->len, &err)) != 0) {
        input_error(q, rc, &err, "invalid_trace");
        return;
    }
    sv_body_release(q); /* the trace holds what it needs */
    if (sg_trace_guard_count(t) > c->max_guards || sg_trace_symbol_count(t) > c->max_symbols) {
        sv_error(q, 413, "limit_exceeded", "the trace has %zu guards and %zu symbols; the limits are %zu and %zu",
                 sg_trace_guard_count(t), sg_trace_symbol_count(t), c->max_guards, c->max_symbols);
        goto cleanup;
    }
    /* the shared cache first: a replica may have answered this already */
    if (q->svc->redis && sv_redis_key(key, q->route->id, &q->opts, t)) {
        size_t len = 0;
        char *body = sv_redis_get(q->svc->redis, key, &len);
        if (body) {
            sv_answer(q, 200, "ok", body, len, "application/json");
            q->from_redis = true;
            keep_answer(q);
            goto cleanup;
        }
    } else {
        key[0] = '\0';
    }
    rc = spec ? sg_engine_spec(e, t, &q->opts, &r, &err) : sg_engine_check(e, t, &q->opts, &r, &err);
    if (rc != 0) {
        input_error(q, rc == SG_ERROR ? SG_ERROR : rc, &err, "invalid_trace");
        goto cleanup;
    }
    report_answer(q, r, t0);
    if (key[0] && q->status == 200)
        sv_redis_put(q->svc->redis, key, q->resp, q->resp_len);
    keep_answer(q);
cleanup:
    sg_report_free(r);
    sg_trace_free(t);
}

/* An archive body: opened, its model JSON read and its program parsed. */
typedef struct opened {
    sg_archive *a;
    char *json;
    size_t len;
    sg_graph *g;
} opened;

static int open_archive(sv_request *q, opened *o)
{
    sg_error err = SG_ERROR_INIT;
    int rc;

    memset(o, 0, sizeof *o);
    if (q->received == 0) {
        sv_error(q, 400, "empty_body", "the request has no body: a .pt2 archive expected");
        return -1;
    }
    if ((rc = sg_archive_open_fd(&o->a, q->fd, NULL, &err)) != 0
        || (rc = sg_archive_read_model(&o->json, &o->len, NULL, o->a, NULL, &err)) != 0
        || (rc = sg_graph_parse(&o->g, o->json, o->len, &err)) != 0) {
        input_error(q, rc, &err, "invalid_archive");
        return -1;
    }
    return 0;
}

static void close_archive(opened *o)
{
    sg_graph_free(o->g);
    sg_free(o->json);
    sg_archive_free(o->a);
}

static void do_inspect(sv_request *q)
{
    sg_error err = SG_ERROR_INIT;
    char *json = NULL, *body;
    size_t n;
    opened o;

    if (open_archive(q, &o) != 0)
        goto cleanup;
    if (sg_graph_inspect_json(&json, o.a, o.g, &err) != 0) {
        sv_error(q, 503, "out_of_memory", "%s", err.msg);
        goto cleanup;
    }
    /* the library's string is its allocator's: the answer is ours */
    n = strlen(json);
    if (!(body = malloc(n + 1))) {
        sv_error(q, 503, "out_of_memory", "out of memory writing the answer");
        goto cleanup;
    }
    memcpy(body, json, n + 1);
    sv_answer(q, 200, "ok", body, n, "application/json");
cleanup:
    sg_free(json);
    close_archive(&o);
}

/* verify (and, with `pack`, write the archive with its record and answer with it) */
static void do_verify(sv_request *q, sg_engine *e, bool pack)
{
    sg_verify_input in = SG_VERIFY_INPUT_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_report *r = NULL;
    char *record = NULL, path[400];
    double t0 = sv_now();
    opened o;
    int rc, fd;
    struct stat st;

    if (open_archive(q, &o) != 0)
        goto cleanup;
    in.graph = o.g;
    in.name = "request.pt2";
    if ((rc = sg_engine_verify(e, &in, &q->opts, &r, &err)) != 0) {
        input_error(q, rc, &err, "invalid_archive");
        goto cleanup;
    }
    if (!pack) {
        report_answer(q, r, t0);
        goto cleanup;
    }
    {
        const sg_archive_model *m = sg_archive_find_model(o.a, "model");
        sg_graph_record_info info;
        const char *member = sg_archive_constraints_member(sg_archive_format_of(o.a));

        if (!m)
            m = sg_archive_model_at(o.a, 0);
        memset(&info, 0, sizeof info);
        info.model_member = m ? m->json_member : NULL;
        info.model_json = o.json;
        info.model_len = o.len;
        info.tool_version = sg_version();
        info.opts = &q->opts;
        if ((rc = sg_graph_constraints_json(&record, o.g, r, &info, &err)) != 0) {
            input_error(q, rc, &err, "invalid_archive");
            goto cleanup;
        }
        snprintf(path, sizeof path, "%s/%llu.pt2", q->svc->spool,
                 (unsigned long long)atomic_fetch_add(&q->svc->seq, 1));
        if ((rc = sg_archive_write_with(o.a, path, member, record, strlen(record), &err)) != 0) {
            unlink(path);
            sv_error(q, 500, "write_failed", "%s", err.msg);
            goto cleanup;
        }
        fd = open(path, O_RDONLY | O_CLOEXEC);
        unlink(path);
        if (fd < 0 || fstat(fd, &st) != 0) {
            if (fd >= 0)
                close(fd);
            sv_error(q, 500, "write_failed", "cannot reopen the packed archive: %s", strerror(errno));
            goto cleanup;
        }
        q->verdict = sg_verdict_name(sg_report_verdict(r));
        sv_answer(q, 200, "ok", NULL, 0, "application/zip");
        q->resp_fd = fd;
        q->resp_fd_len = (uint64_t)st.st_size;
        snprintf(q->extra_header[0], sizeof q->extra_header[0], "X-Shapegate-Verdict: %s", q->verdict);
    }
cleanup:
    sg_free(record);
    sg_report_free(r);
    close_archive(&o);
}

/* One side of a gate, as its part came: a .pt2 (an archive and its program) or a trace. */
typedef struct gate_side {
    sg_archive *a;
    sg_graph *g;
    sg_trace *t;
    char name[96];
} gate_side;

/*
 * Read part `which` (spooled in `fd`) by its content, as `shapegate gate` reads a path: a zip is a
 * .pt2 archive; anything else is a trace, through the trace loader's own sniffing of the
 * file (a v1 JSON trace, or a TORCH_TRACE log, plain or gzip), read back by the spool file's
 * /proc/self/fd name. Its name in the answer: the part's filename, else "old.pt2" / "old.json" /
 * "old.log" by kind. 0, or -1 with an answer set (422 invalid_archive / invalid_trace naming the
 * part, 413 for a trace over the loader's limits).
 */
static int gate_load(sv_request *q, int fd, const char *which, const char *filename, gate_side *side)
{
    sg_error err = SG_ERROR_INIT;
    unsigned char m[4] = {0};
    char path[64], msg[sizeof err.msg];
    bool log;
    ssize_t n;
    int rc;

    if ((n = pread(fd, m, sizeof m, 0)) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
        sv_error(q, 503, "spool_failed", "cannot read the spooled part '%s': %s", which, strerror(errno));
        return -1;
    }
    if (n == 4 && m[0] == 'P' && m[1] == 'K' && m[2] == 3 && m[3] == 4) {
        snprintf(side->name, sizeof side->name, "%s", filename[0] ? filename : which[0] == 'o' ? "old.pt2" : "new.pt2");
        if ((rc = sg_archive_open_fd(&side->a, fd, NULL, &err)) == 0
            && (rc = sg_graph_load(&side->g, side->a, NULL, &err)) == 0)
            return 0;
        snprintf(msg, sizeof msg, "%s", err.msg);
        snprintf(err.msg, sizeof err.msg, "part '%.3s': %.200s", which, msg);
        input_error(q, rc, &err, "invalid_archive");
        return -1;
    }
    /* only for the default name: the loader decides what the bytes are */
    log = n >= 1 && !strchr("{ \t\r\n", m[0]);
    if (filename[0])
        snprintf(side->name, sizeof side->name, "%s", filename);
    else
        snprintf(side->name, sizeof side->name, "%s.%s", which, log ? "log" : "json");
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if ((rc = sg_trace_load_frame(&side->t, path, 0, &err)) == 0) {
        const sg_service_config *c = &q->svc->cfg;
        if (sg_trace_guard_count(side->t) <= c->max_guards && sg_trace_symbol_count(side->t) <= c->max_symbols)
            return 0;
        sv_error(q, 413, "limit_exceeded",
                 "part '%s': the trace has %zu guards and %zu symbols; the limits are %zu and %zu", which,
                 sg_trace_guard_count(side->t), sg_trace_symbol_count(side->t), c->max_guards, c->max_symbols);
        return -1;
    }
    { /* the loader names the file: the client knows it as the part */
        size_t pl = strlen(path);
        const char *rest = strncmp(err.msg, path, pl) == 0 ? err.msg + pl : NULL;
        snprintf(msg, sizeof msg, "%s", rest ? rest : err.msg);
        snprintf(err.msg, sizeof err.msg, "part '%.3s'%s%.240s", which, rest ? "" : ": ", msg);
    }
    input_error(q, rc, &err, "invalid_trace");
    return -1;
}

static void gate_side_dispose(gate_side *side)
{
    sg_graph_free(side->g);
    sg_archive_free(side->a);
    sg_trace_free(side->t);
}

/* POST /v1/gate: the object `shapegate gate --json OLD NEW` prints, 200 whatever the decision. Each
 * part a .pt2 or a trace, in any mix, as the CLI's OLD and NEW. */
static void do_gate(sv_request *q, sg_engine *e)
{
    sg_error err = SG_ERROR_INIT;
    sg_gate_input in = SG_GATE_INPUT_INIT;
    gate_side so, sn;
    sg_gate *gt = NULL;
    char *json = NULL, *body;
    size_t n;
    int rc;

    memset(&so, 0, sizeof so);
    memset(&sn, 0, sizeof sn);
    if (gate_load(q, q->fd, "old", q->part_file[0], &so) != 0 || gate_load(q, q->fd2, "new", q->part_file[1], &sn) != 0)
        goto cleanup;
    in.old_graph = so.g;
    in.old_trace = so.t;
    in.old_name = so.name;
    in.new_graph = sn.g;
    in.new_trace = sn.t;
    in.new_name = sn.name;
    in.policy = q->policy;
    if ((rc = sg_engine_gate_run(e, &in, &q->opts, &gt, &err)) != 0) {
        /* SG_EINVALID: the policy (the parts were read above); text that does not parse as a
           policy at all ("policy: LINE:COL: ...") is a malformed request, one that parses but names
           what OLD lacks is unprocessable */
        int line, col;
        if (rc == SG_EINVALID && sscanf(err.msg, "policy: %d:%d:", &line, &col) == 2)
            sv_error(q, 400, "malformed_policy", "%s", err.msg);
        else
            input_error(q, rc, &err, "invalid_policy");
        goto cleanup;
    }
    if ((rc = sg_gate_to_json(&json, gt, &err)) != 0) {
        sv_error(q, 503, "out_of_memory", "%s", err.msg);
        goto cleanup;
    }
    q->verdict = sg_gate_verdict_name(sg_gate_verdict_of(gt));
    n = strlen(json);
    if (!(body = malloc(n + 2))) {
        sv_error(q, 503, "out_of_memory", "out of memory writing the answer");
        goto cleanup;
    }
    memcpy(body, json, n);
    body[n] = '\n';
    body[n + 1] = '\0';
    sv_answer(q, 200, "ok", body, n + 1, "application/json");
    snprintf(q->extra_header[0], sizeof q->extra_header[0], "X-Shapegate-Verdict: %s", q->verdict);
cleanup:
    sg_free(json);
    sg_gate_free(gt);
    gate_side_dispose(&so);
    gate_side_dispose(&sn);
}

void sv_handle(sv_request *q, void *ctx)
{
    sg_service *s = ctx;

    if (s->iso) {
        /* the solver process answers (isolate.c); what the service keeps and counts is done here */
        sv_iso_run(s->iso, q);
        if (q->status == 504 && !strcmp(q->code, "budget_exceeded"))
            atomic_fetch_add(&s->metrics.budget_exceeded, 1);
        keep_answer(q);
        return;
    }
    switch (q->route->id) {
    case SV_ROUTE_CHECK: do_trace(q, s->engine, false); break;
    case SV_ROUTE_SPEC: do_trace(q, s->engine, true); break;
    case SV_ROUTE_INSPECT: do_inspect(q); break;
    case SV_ROUTE_VERIFY: do_verify(q, s->engine, false); break;
    case SV_ROUTE_PACK: do_verify(q, s->engine, true); break;
    case SV_ROUTE_GATE: do_gate(q, s->engine); break;
    default: sv_error(q, 500, "internal", "route %s has no worker handler", q->route->path);
    }
}

/* ---- GET ------------------------------------------------------------------------------------- */

extern const char sv_openapi_json[];

static void text_answer(sv_request *q, unsigned status, const char *code, const char *text, const char *ctype)
{
    char *body = strdup(text);
    if (!body) {
        sv_error(q, 503, "out_of_memory", "out of memory");
        return;
    }
    sv_answer(q, status, code, body, strlen(body), ctype);
}

void sv_handle_get(sv_request *q)
{
    sg_service *s = q->svc;
    char buf[512];
    unsigned queued = 0, busy = 0;

    switch (q->route->id) {
    case SV_ROUTE_HEALTHZ:
        text_answer(q, 200, "ok", "{\"status\": \"ok\"}\n", "application/json");
        return;
    case SV_ROUTE_READYZ:
        sv_pool_load(s->pool, &queued, &busy);
        if (atomic_load(&s->draining)) {
            sv_error(q, 503, "draining", "the service is shutting down");
        } else if (queued >= s->cfg.max_queue) {
            sv_error(q, 503, "busy", "every worker is busy and the queue is full (%u waiting)", queued);
        } else {
            snprintf(buf, sizeof buf, "{\"status\": \"ready\", \"workers\": %u, \"busy\": %u, \"queued\": %u}\n",
                     s->cfg.threads, busy, queued);
            text_answer(q, 200, "ok", buf, "application/json");
        }
        return;
    case SV_ROUTE_VERSION:
        snprintf(buf, sizeof buf,
                 "{\"shapegate\": \"%s\", \"api\": \"v1\", \"trace_format\": %d, \"libmicrohttpd\": \"%s\"}\n",
                 sg_version(), SG_TRACE_FORMAT_VERSION, MHD_get_version());
        text_answer(q, 200, "ok", buf, "application/json");
        return;
    case SV_ROUTE_METRICS: {
        char *text = NULL;
        size_t len = 0;
        sg_engine_stats st;
        if (s->iso)
            sv_iso_stats(s->iso, &st, NULL, NULL);
        else
            sg_engine_stats_get(s->engine, &st);
        if (sv_metrics_render(&text, &len, &s->metrics, &st, s->pool, s->cfg.threads, s->redis, s->answers,
                              s->iso) != 0) {
            sv_error(q, 503, "out_of_memory", "out of memory writing the metrics");
            return;
        }
        sv_answer(q, 200, "ok", text, len, "text/plain; version=0.0.4; charset=utf-8");
        return;
    }
    case SV_ROUTE_OPENAPI:
        text_answer(q, 200, "ok", sv_openapi_json, "application/json");
        return;
    default:
        sv_error(q, 500, "internal", "route %s has no GET handler", q->route->path);
    }
}

/* ---- query parameters -------------------------------------------------------------------------- */

typedef struct param_ctx {
    sv_request *q;
    bool bad;
} param_ctx;

static bool read_bool(const char *v, bool *out)
{
    if (!v || !strcmp(v, "1") || !strcmp(v, "true")) {
        *out = true;
        return true;
    }
    if (!strcmp(v, "0") || !strcmp(v, "false")) {
        *out = false;
        return true;
    }
    return false;
}

static bool read_uint(const char *v, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (!v || *v < '0' || *v > '9')
        return false;
    errno = 0;
    *out = strtoull(v, &end, 10);
    return errno == 0 && *end == '\0' && *out <= max;
}

static sv_mhd_result on_param(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    param_ctx *p = cls;
    sg_check_options *o = &p->q->opts;
    unsigned server_ms = p->q->svc->cfg.timeout_ms;
    unsigned long long n;
    bool b;

    (void)kind;
    if (!strcmp(key, "timeout_ms") && read_uint(value, 86400000, &n)) {
        /* a request may ask for less time than the server gives, never more */
        o->timeout_ms = server_ms && (n == 0 || n > server_ms) ? server_ms : (unsigned)n;
        return MHD_YES;
    }
    if (!strcmp(key, "rlimit") && read_uint(value, UINT64_MAX, &n)) {
        o->query_rlimit = n;
        return MHD_YES;
    }
    if (read_bool(value, &b)) {
        if (!strcmp(key, "infer")) { o->infer = b; return MHD_YES; }
        if (!strcmp(key, "fixes")) { o->fixes = b; return MHD_YES; }
        if (!strcmp(key, "minimize")) { o->minimize_cores = b; return MHD_YES; }
        if (!strcmp(key, "torch")) { o->torch_fixes = o->torch_message = b; return MHD_YES; }
    }
    sv_error(p->q, 400, "bad_parameter",
             "query parameter '%s': unknown, or a bad value (timeout_ms and rlimit take integers; infer, "
             "fixes, minimize, torch take 0/1/true/false)", key);
    p->bad = true;
    return MHD_NO;
}

int sv_read_params(sv_request *q)
{
    param_ctx p = {q, false};
    sg_check_options d = SG_CHECK_OPTIONS_INIT;

    q->opts = d;
    q->opts.timeout_ms = q->svc->cfg.timeout_ms;
    if (q->opts.timeout_ms && q->opts.query_timeout_ms > q->opts.timeout_ms)
        q->opts.query_timeout_ms = q->opts.timeout_ms;
    MHD_get_connection_values(q->conn, MHD_GET_ARGUMENT_KIND, on_param, &p);
    if (q->opts.timeout_ms && q->opts.query_timeout_ms > q->opts.timeout_ms)
        q->opts.query_timeout_ms = q->opts.timeout_ms;
    return p.bad ? -1 : 0;
}
