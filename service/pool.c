/*
 * pool.c - the solver workers: a bounded queue of requests and N threads
 * that take them in order. The queue's bound is the service's concurrency
 * limit: a request that finds it full is answered 429 at once rather than
 * waiting behind work it cannot overtake.
 */
#include <stdlib.h>

#include "internal.h"

struct sv_pool {
    pthread_mutex_t lock;
    pthread_cond_t more;
    sv_request **ring;
    unsigned cap, head, n;    /* ring of `cap`, `n` queued from `head` */
    unsigned busy;
    bool stopping;            /* no more submissions; the workers leave */
    bool stopped;             /* the workers joined and the queue emptied */
    sv_request **running;     /* [nthreads]: the request each worker runs, or NULL */
    pthread_t *threads;
    unsigned nthreads;
    sv_job_fn fn, finish;
    void *ctx;
};

typedef struct worker_arg {
    sv_pool *p;
    unsigned id;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    sv_pool *p = w->p;
    unsigned id = w->id;
    sv_request *q;

    free(w);
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stopping && p->n == 0)
            pthread_cond_wait(&p->more, &p->lock);
        if (p->stopping)
            break;
        q = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->n--;
        p->busy++;
        p->running[id] = q;
        q->worker = id;
        pthread_mutex_unlock(&p->lock);
        p->fn(q, p->ctx);
        /* off the running list before `finish` hands the request back: from then on it may be
         * freed by another thread at any moment */
        pthread_mutex_lock(&p->lock);
        p->running[id] = NULL;
        p->busy--;
        pthread_mutex_unlock(&p->lock);
        p->finish(q, p->ctx);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int sv_pool_new(sv_pool **out, unsigned n, unsigned max_queue, sv_job_fn fn, sv_job_fn finish, void *ctx)
{
    sv_pool *p;
    unsigned i;

    *out = NULL;
    if (!(p = calloc(1, sizeof *p)))
        return SG_ENOMEM;
    p->cap = max_queue ? max_queue : 1;
    p->fn = fn;
    p->finish = finish;
    p->ctx = ctx;
    p->ring = calloc(p->cap, sizeof *p->ring);
    p->running = calloc(n, sizeof *p->running);
    p->threads = calloc(n, sizeof *p->threads);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    if (!p->ring || !p->running || !p->threads)
        goto fail;
    for (i = 0; i < n; i++) {
        worker_arg *w = malloc(sizeof *w);
        if (!w)
            goto fail;
        w->p = p;
        w->id = i;
        if (pthread_create(&p->threads[i], NULL, worker, w) != 0) {
            free(w);
            goto fail;
        }
        p->nthreads++;
    }
    *out = p;
    return 0;
fail:
    sv_pool_free(p);
    return SG_ENOMEM;
}

int sv_pool_submit(sv_pool *p, sv_request *q)
{
    int rc = -1;

    pthread_mutex_lock(&p->lock);
    if (!p->stopping && p->n < p->cap) {
        p->ring[(p->head + p->n) % p->cap] = q;
        p->n++;
        pthread_cond_signal(&p->more);
        rc = 0;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

void sv_pool_load(sv_pool *p, unsigned *queued, unsigned *busy)
{
    pthread_mutex_lock(&p->lock);
    *queued = p->n;
    *busy = p->busy;
    pthread_mutex_unlock(&p->lock);
}

void sv_pool_stop(sv_pool *p, void (*drop)(sv_request *q, void *ctx))
{
    unsigned i, head, n;

    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->stopped) {
        pthread_mutex_unlock(&p->lock);
        return;
    }
    p->stopping = true;
    for (i = 0; i < p->nthreads; i++)
        if (p->running[i] && p->running[i]->cancel)
            sg_cancel_request(p->running[i]->cancel);
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
    for (i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    /* the workers are gone, but I/O threads still call sv_pool_submit() (which fails now) and
     * sv_pool_load(): the queue is taken off under the lock, and dropped outside it (`drop`
     * resumes connections: libmicrohttpd's locks are never taken under ours) */
    pthread_mutex_lock(&p->lock);
    head = p->head;
    n = p->n;
    p->n = 0;
    p->stopped = true;
    pthread_mutex_unlock(&p->lock);
    for (i = 0; i < n; i++)
        if (drop)
            drop(p->ring[(head + i) % p->cap], p->ctx);
}

void sv_pool_free(sv_pool *p)
{
    if (!p)
        return;
    sv_pool_stop(p, NULL);
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->lock);
    free(p->ring);
    free(p->running);
    free(p->threads);
    free(p);
}
