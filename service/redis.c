/*
 * redis.c - the shared verdict cache (--redis URL): answers of /v1/check and
 * /v1/spec kept in Redis under a SHA-256 of the shapegate version, the route,
 * the options that shape the answer and the canonical trace (the trace's own
 * deterministic JSON, so that two bodies that load to the same trace share a
 * key), so that replicas behind a load balancer answer a repeated request
 * without solving it again.
 *
 * Redis is an accelerator, never a dependency: every call has a short
 * timeout, and after a failure the cache is left alone for a second
 * (requests are solved meanwhile, slower); then a new connection is tried.
 * Connections are pooled: a worker takes one for a call and gives it back.
 */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "util/sha256.h"

#define SV_REDIS_POOL 64
#define SV_REDIS_BACKOFF 1.0   /* seconds without Redis after a failure */
#define SV_REDIS_TIMEOUT_MS 200

struct sv_redis {
    char host[256];
    int port;
    int db;
    unsigned ttl_s;
    pthread_mutex_t lock;
    redisContext *idle[SV_REDIS_POOL];
    unsigned nidle;
    _Atomic uint64_t down_until_us;
    _Atomic uint64_t hits, misses, errors, stores;
};

int sv_redis_new(sv_redis **out, const char *url, unsigned ttl_s, sg_error *err)
{
    sv_redis *r;
    const char *p = url, *colon, *slash;
    size_t n;
    char *end;

    *out = NULL;
    if (strncmp(p, "redis://", 8) != 0)
        goto bad;
    p += 8;
    slash = strchr(p, '/');
    colon = strchr(p, ':');
    if (colon && slash && colon > slash)
        colon = NULL;
    n = colon ? (size_t)(colon - p) : slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || n >= sizeof r->host || memchr(p, '@', n))
        goto bad;
    if (!(r = calloc(1, sizeof *r))) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return err->code = SG_ENOMEM;
    }
    memcpy(r->host, p, n);
    r->port = 6379;
    if (colon) {
        long v = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || v < 1 || v > 65535 || (*end && *end != '/'))
            goto bad_free;
        r->port = (int)v;
    }
    if (slash && slash[1]) {
        long v = strtol(slash + 1, &end, 10);
        if (*end || v < 0 || v > 1000)
            goto bad_free;
        r->db = (int)v;
    }
    r->ttl_s = ttl_s;
    pthread_mutex_init(&r->lock, NULL);
    *out = r;
    return 0;
bad_free:
    free(r);
bad:
    snprintf(err->msg, sizeof err->msg, "--redis '%.180s': expected redis://HOST[:PORT][/DB]", url);
    return err->code = SG_EINVALID;
}

void sv_redis_free(sv_redis *r)
{
    unsigned i;

    if (!r)
        return;
    for (i = 0; i < r->nidle; i++)
        redisFree(r->idle[i]);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static uint64_t now_us(void) { return (uint64_t)(sv_now() * 1e6); }

/* A connection (pooled or new), or NULL while Redis is down. */
static redisContext *take(sv_redis *r)
{
    struct timeval tv = {0, SV_REDIS_TIMEOUT_MS * 1000};
    redisContext *c = NULL;
    redisReply *rep;

    if (now_us() < atomic_load(&r->down_until_us))
        return NULL;
    pthread_mutex_lock(&r->lock);
    if (r->nidle)
        c = r->idle[--r->nidle];
    pthread_mutex_unlock(&r->lock);
    if (c)
        return c;
    c = redisConnectWithTimeout(r->host, r->port, tv);
    if (!c || c->err || redisSetTimeout(c, tv) != REDIS_OK)
        goto fail;
    if (r->db) {
        rep = redisCommand(c, "SELECT %d", r->db);
        if (!rep || rep->type == REDIS_REPLY_ERROR) {
            if (rep)
                freeReplyObject(rep);
            goto fail;
        }
        freeReplyObject(rep);
    }
    return c;
fail:
    if (c)
        redisFree(c);
    atomic_fetch_add(&r->errors, 1);
    atomic_store(&r->down_until_us, now_us() + (uint64_t)(SV_REDIS_BACKOFF * 1e6));
    return NULL;
}

/* Give `c` back; `broken`: it failed, drop it and leave Redis alone for a while. */
static void give(sv_redis *r, redisContext *c, bool broken)
{
    if (broken) {
        redisFree(c);
        atomic_fetch_add(&r->errors, 1);
        atomic_store(&r->down_until_us, now_us() + (uint64_t)(SV_REDIS_BACKOFF * 1e6));
        return;
    }
    pthread_mutex_lock(&r->lock);
    if (r->nidle < SV_REDIS_POOL) {
        r->idle[r->nidle++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (c)
        redisFree(c);
}

bool sv_redis_key(char key[80], sv_route_id route, const sg_check_options *o, const sg_trace *t)
{
    char head[256], hex[SG_SHA256_HEX_LEN + 1];
    unsigned char digest[SG_SHA256_LEN];
    sg_sha256 c;
    char *js = NULL;
    size_t i;

    if (sg_trace_to_json(&js, t, NULL) != 0)
        return false;
    snprintf(head, sizeof head, "%s|%d|%u|%u|%llu|%d%d%d%d%d|", sg_version(), (int)route, o->timeout_ms,
             o->query_timeout_ms, (unsigned long long)o->query_rlimit, o->infer, o->minimize_cores, o->fixes,
             o->torch_fixes, o->torch_message);
    sg__sha256_init(&c);
    sg__sha256_update(&c, head, strlen(head));
    sg__sha256_update(&c, js, strlen(js));
    sg__sha256_final(&c, digest);
    sg_free(js);
    for (i = 0; i < SG_SHA256_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    snprintf(key, 80, "shapegate:v1:%s", hex);
    return true;
}

char *sv_redis_get(sv_redis *r, const char *key, size_t *len)
{
    redisContext *c = take(r);
    redisReply *rep;
    char *out = NULL;

    if (!c)
        return NULL;
    rep = redisCommand(c, "GET %s", key);
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        if (rep)
            freeReplyObject(rep);
        give(r, c, true);
        return NULL;
    }
    if (rep->type == REDIS_REPLY_STRING && (out = malloc(rep->len + 1))) {
        memcpy(out, rep->str, rep->len);
        out[rep->len] = '\0';
        *len = rep->len;
        atomic_fetch_add(&r->hits, 1);
    } else {
        atomic_fetch_add(&r->misses, 1);
    }
    freeReplyObject(rep);
    give(r, c, false);
    return out;
}

void sv_redis_put(sv_redis *r, const char *key, const char *val, size_t len)
{
    redisContext *c = take(r);
    redisReply *rep;

    if (!c)
        return;
    rep = r->ttl_s ? redisCommand(c, "SET %s %b EX %u", key, val, len, r->ttl_s)
                   : redisCommand(c, "SET %s %b", key, val, len);
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        if (rep)
            freeReplyObject(rep);
        give(r, c, true);
        return;
    }
    freeReplyObject(rep);
    atomic_fetch_add(&r->stores, 1);
    give(r, c, false);
}

void sv_redis_stats(sv_redis *r, uint64_t *hits, uint64_t *misses, uint64_t *errors, uint64_t *stores, bool *up)
{
    *hits = atomic_load(&r->hits);
    *misses = atomic_load(&r->misses);
    *errors = atomic_load(&r->errors);
    *stores = atomic_load(&r->stores);
    *up = now_us() >= atomic_load(&r->down_until_us);
}
