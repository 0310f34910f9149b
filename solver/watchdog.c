#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/*
 * watchdog.c - the wall-clock limit of a Z3 query (solver/watchdog.h).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "solver/watchdog.h"
#include "util/util.h"

#define WATCH_REPEAT_MS 20L

struct sg_watchdog {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool started, failed, quit, armed, fired;
    struct timespec until; /* CLOCK_REALTIME, as pthread_cond_timedwait reads it */
    Z3_context ctx;
};

static void advance(struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static bool passed(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *watch(void *arg)
{
    sg_watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        if (!w->armed) {
            pthread_cond_wait(&w->cv, &w->lock);
            continue;
        }
        /* armed: wait for the deadline (re-read after every wake: a new query re-arms it) */
        pthread_cond_timedwait(&w->cv, &w->lock, &w->until);
        if (w->armed && !w->quit && passed(&w->until)) {
            w->fired = true;
            Z3_interrupt(w->ctx);
            advance(&w->until, WATCH_REPEAT_MS);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

sg_watchdog *sg_watchdog_new(void)
{
    sg_watchdog *w = sg__calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        sg_free(w);
        return NULL;
    }
    if (pthread_cond_init(&w->cv, NULL) != 0) {
        pthread_mutex_destroy(&w->lock);
        sg_free(w);
        return NULL;
    }
    return w;
}

void sg_watchdog_free(sg_watchdog *w)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->quit = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->lock);
    sg_free(w);
}

void sg_watchdog_arm(sg_watchdog *w, Z3_context ctx, unsigned ms)
{
    if (!w || w->failed)
        return;
    if (!w->started) {
        if (pthread_create(&w->thread, NULL, watch, w) != 0) {
            w->failed = true;
            return;
        }
        w->started = true;
    }
    pthread_mutex_lock(&w->lock);
    w->ctx = ctx;
    clock_gettime(CLOCK_REALTIME, &w->until);
    advance(&w->until, (long)ms);
    w->fired = false;
    w->armed = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->lock);
}

bool sg_watchdog_disarm(sg_watchdog *w)
{
    bool fired;
    if (!w || !w->started)
        return false;
    pthread_mutex_lock(&w->lock);
    w->armed = false;
    fired = w->fired;
    w->fired = false;
    pthread_mutex_unlock(&w->lock);
    return fired;
}
