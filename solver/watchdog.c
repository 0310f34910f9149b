#define _POSIX_C_SOURCE 200809L /* clock_gettime, pthread_condattr_setclock */
/*
 * watchdog.c - the wall-clock limit of a Z3 query (solver/watchdog.h): one
 * timer thread for every armed query of the process.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "solver/watchdog.h"

#define WATCH_REPEAT_MS 20L

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;     /* a watchdog armed earlier than the timer waits for */
    sg_watchdog *armed;
    bool running;          /* the timer thread runs (in this process: a fork's child starts its own) */
    bool atfork;
    bool waits;            /* the timer sleeps until `wakes` (else until signalled) */
    struct timespec wakes;
} wd = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, false, false, false, {0, 0}};

static void ts_add_ms(struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The timer: sleep until the earliest deadline; interrupt every query past its own, and again
 * every WATCH_REPEAT_MS until it is disarmed: a Z3_interrupt that lands before the check has
 * installed its handler (a budget's last millisecond) does nothing, and the query would run on
 * under the rlimit alone. (It does not help where Z3 does not poll at all: Z3 4.8.12's QF_NIA
 * preprocessing, docs/presolve.md "Budget".) */
static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wd.lock);
    for (;;) {
        struct timespec now, first;
        sg_watchdog *w;
        bool any = false;
        for (w = wd.armed; w; w = w->next)
            if (!any || ts_before(&w->until, &first)) {
                first = w->until;
                any = true;
            }
        if (!any) {
            wd.waits = false;
            pthread_cond_wait(&wd.cv, &wd.lock);
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ts_before(&now, &first)) {
            wd.waits = true;
            wd.wakes = first;
            pthread_cond_timedwait(&wd.cv, &wd.lock, &first);
            continue;
        }
        for (w = wd.armed; w; w = w->next)
            if (!ts_before(&now, &w->until)) {
                w->fired = true;
                Z3_interrupt(w->ctx);
                w->until = now;
                ts_add_ms(&w->until, WATCH_REPEAT_MS);
            }
    }
    return NULL;
}

/* In a fork's child the timer thread is gone: the first query there starts one. */
static void wd_after_fork(void)
{
    pthread_mutex_init(&wd.lock, NULL);
    pthread_cond_init(&wd.cv, NULL);
    wd.armed = NULL;
    wd.running = false;
    wd.waits = false;
}

/* Start the timer thread unless it runs; false when it cannot be started. Under wd.lock. */
static bool wd_start(void)
{
    pthread_condattr_t ca;
    pthread_attr_t ta;
    pthread_t th;
    if (wd.running)
        return true;
    if (!wd.atfork)
        wd.atfork = pthread_atfork(NULL, NULL, wd_after_fork) == 0;
    /* the deadlines are monotonic: the condition variable waits on that clock */
    if (pthread_condattr_init(&ca) == 0) {
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_destroy(&wd.cv);
        pthread_cond_init(&wd.cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if (pthread_attr_init(&ta) != 0)
        return false;
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    wd.running = pthread_create(&th, &ta, watch, NULL) == 0;
    pthread_attr_destroy(&ta);
    return wd.running;
}

void sg_watchdog_arm(sg_watchdog *w, Z3_context ctx, unsigned ms)
{
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    clock_gettime(CLOCK_MONOTONIC, &w->until);
    ts_add_ms(&w->until, (long)ms);
    pthread_mutex_lock(&wd.lock);
    if (wd_start()) {
        w->armed = true;
        w->next = wd.armed;
        wd.armed = w;
        /* wake the timer only when it would sleep past this deadline (queries of equal budgets
         * arm in deadline order: most never wake it) */
        if (!wd.waits || ts_before(&w->until, &wd.wakes))
            pthread_cond_signal(&wd.cv);
    }
    pthread_mutex_unlock(&wd.lock);
}

bool sg_watchdog_disarm(sg_watchdog *w)
{
    sg_watchdog **pp;
    bool fired;
    if (!w->armed)
        return false;
    pthread_mutex_lock(&wd.lock);
    for (pp = &wd.armed; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    w->armed = false;
    fired = w->fired;
    pthread_mutex_unlock(&wd.lock);
    return fired;
}
