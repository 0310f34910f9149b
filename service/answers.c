/*
 * answers.c - the service's cache of answers by body bytes (internal.h,
 * docs/service.md "Caches").
 *
 * The engine's cache (engine.c) is keyed by the canonical trace, so a hit
 * there still parses the body, writes the trace canonically, hashes it and
 * writes the report's JSON. This one sits in front of it: the key is the
 * SHA-256 of the route, every option that shapes the answer and the body's
 * raw bytes, the value the answer's bytes. The same bytes load as the same
 * trace (the loader is a function of the bytes), hence the same canonical
 * trace and the same engine cache key: an entry here is what the engine's
 * cache would have answered, written once. Only answers the engine would
 * keep are kept (200, nothing unknown, not canceled: sv_answers_cacheable).
 *
 * A hash table of chains over the key's first bytes (already uniform) and a
 * doubly linked LRU list, under one lock; bounded by entries (--cache) and by
 * bytes (SV_ANSWERS_MAX_BYTES, an answer over SV_ANSWERS_MAX_ONE never kept).
 */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util/sha256.h"

typedef struct entry {
    unsigned char key[SG_SHA256_LEN];
    char *body;
    size_t len;
    const char *verdict; /* a static name (sg_verdict_name), or NULL */
    struct entry *next;  /* in its bucket */
    struct entry *newer, *older;
} entry;

struct sv_answers {
    pthread_mutex_t lock;
    entry **bucket;
    size_t nbuckets; /* a power of 2 */
    size_t n, max, bytes;
    entry *newest, *oldest;
    _Atomic uint64_t hits, misses, stores;
};

int sv_answers_new(sv_answers **out, unsigned entries)
{
    sv_answers *a;
    size_t nb = 16;

    *out = NULL;
    if (entries == 0)
        return 0;
    while (nb < 2 * (size_t)entries)
        nb *= 2;
    if (!(a = calloc(1, sizeof *a)) || !(a->bucket = calloc(nb, sizeof *a->bucket))) {
        free(a);
        return SG_ENOMEM;
    }
    pthread_mutex_init(&a->lock, NULL);
    a->nbuckets = nb;
    a->max = entries;
    *out = a;
    return 0;
}

void sv_answers_free(sv_answers *a)
{
    entry *e, *next;
    if (!a)
        return;
    for (e = a->newest; e; e = next) {
        next = e->older;
        free(e->body);
        free(e);
    }
    pthread_mutex_destroy(&a->lock);
    free(a->bucket);
    free(a);
}

void sv_answers_key(unsigned char key[SG_SHA256_LEN], sv_route_id route, const sg_check_options *o, const char *body,
                    size_t len)
{
    char head[160];
    sg_sha256 c;
    int n = snprintf(head, sizeof head, "%d|%u|%u|%llu|%d%d%d%d%d|%zu|", (int)route, o->timeout_ms,
                     o->query_timeout_ms, (unsigned long long)o->query_rlimit, o->infer, o->minimize_cores, o->fixes,
                     o->torch_fixes, o->torch_message, len);
    sg__sha256_init(&c);
    sg__sha256_update(&c, head, (size_t)n);
    sg__sha256_update(&c, body, len);
    sg__sha256_final(&c, key);
}

static size_t slot_of(const sv_answers *a, const unsigned char key[SG_SHA256_LEN])
{
    size_t h;
    memcpy(&h, key, sizeof h);
    return h & (a->nbuckets - 1);
}

static entry *find(sv_answers *a, const unsigned char key[SG_SHA256_LEN], entry ***link)
{
    entry **l = &a->bucket[slot_of(a, key)];
    for (; *l; l = &(*l)->next)
        if (memcmp((*l)->key, key, SG_SHA256_LEN) == 0)
            break;
    if (link)
        *link = l;
    return *l;
}

static void lru_unlink(sv_answers *a, entry *e)
{
    if (e->newer)
        e->newer->older = e->older;
    else
        a->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        a->oldest = e->newer;
    e->newer = e->older = NULL;
}

static void lru_front(sv_answers *a, entry *e)
{
    e->newer = NULL;
    e->older = a->newest;
    if (a->newest)
        a->newest->newer = e;
    a->newest = e;
    if (!a->oldest)
        a->oldest = e;
}

/* Drop entry `e` (in the table and the list). */
static void drop(sv_answers *a, entry *e)
{
    entry **l;
    find(a, e->key, &l);
    *l = e->next;
    lru_unlink(a, e);
    a->n--;
    a->bytes -= e->len;
    free(e->body);
    free(e);
}

bool sv_answers_get(sv_answers *a, const unsigned char key[SG_SHA256_LEN], char **body, size_t *len,
                    const char **verdict)
{
    entry *e;
    char *copy = NULL;

    *body = NULL;
    if (!a)
        return false;
    pthread_mutex_lock(&a->lock);
    if ((e = find(a, key, NULL)) != NULL && (copy = malloc(e->len ? e->len : 1)) != NULL) {
        memcpy(copy, e->body, e->len);
        *len = e->len;
        *verdict = e->verdict;
        lru_unlink(a, e);
        lru_front(a, e);
    }
    pthread_mutex_unlock(&a->lock);
    atomic_fetch_add_explicit(copy ? &a->hits : &a->misses, 1, memory_order_relaxed);
    *body = copy;
    return copy != NULL;
}

bool sv_answers_cacheable(const sv_request *q)
{
    static const char unknown[] = "\"unknown\"";
    return q->status == 200 && q->resp && q->resp_fd < 0 && !sg_cancel_requested(q->cancel)
           && !memmem(q->resp, q->resp_len, unknown, sizeof unknown - 1);
}

void sv_answers_put(sv_answers *a, const unsigned char key[SG_SHA256_LEN], const char *body, size_t len,
                    const char *verdict)
{
    entry *e, **l;

    if (!a || len > SV_ANSWERS_MAX_ONE)
        return;
    if (!(e = calloc(1, sizeof *e)) || !(e->body = malloc(len ? len : 1))) {
        free(e);
        return; /* out of memory: not kept, nothing else changes */
    }
    memcpy(e->key, key, SG_SHA256_LEN);
    memcpy(e->body, body, len);
    e->len = len;
    e->verdict = verdict;
    pthread_mutex_lock(&a->lock);
    if (find(a, key, &l) != NULL) { /* two workers answered the same body: keep the first */
        pthread_mutex_unlock(&a->lock);
        free(e->body);
        free(e);
        return;
    }
    while (a->oldest && (a->n >= a->max || a->bytes + len > SV_ANSWERS_MAX_BYTES))
        drop(a, a->oldest);
    find(a, key, &l); /* the drops may have changed the chain */
    *l = e;
    lru_front(a, e);
    a->n++;
    a->bytes += len;
    pthread_mutex_unlock(&a->lock);
    atomic_fetch_add_explicit(&a->stores, 1, memory_order_relaxed);
}

void sv_answers_stats(sv_answers *a, uint64_t *hits, uint64_t *misses, uint64_t *stores, uint64_t *entries,
                      uint64_t *bytes)
{
    *hits = *misses = *stores = *entries = *bytes = 0;
    if (!a)
        return;
    *hits = atomic_load_explicit(&a->hits, memory_order_relaxed);
    *misses = atomic_load_explicit(&a->misses, memory_order_relaxed);
    *stores = atomic_load_explicit(&a->stores, memory_order_relaxed);
    pthread_mutex_lock(&a->lock);
    *entries = a->n;
    *bytes = a->bytes;
    pthread_mutex_unlock(&a->lock);
}
