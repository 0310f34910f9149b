/*
 * ctxpool.c - the pool of warm Z3 contexts and the cancel token
 * (solver/ctxpool.h, sg_cancel in include/shapegate/engine.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "shapegate/cancel.h"
#include "solver/ctxpool.h"
#include "util/util.h"

/* A context's warm solver: parked by its last user, handed to the next one. */
typedef struct warm {
    Z3_context ctx;   /* NULL: a free slot */
    Z3_solver solver; /* referenced */
    unsigned uses;    /* users it served */
    bool taken;       /* handed out with the context being used now */
    uint64_t tag;     /* its last user's (sg_ctxpool_park_solver) */
} warm;

struct sg_ctxpool {
    pthread_mutex_t lock;
    Z3_context *idle; /* [max_idle] */
    size_t nidle, max_idle;
    atomic_ulong created, reused;
    bool keep_solvers;
    warm *warm;       /* [max_idle + 1] solvers of contexts, idle or in use */
};

/* The slot of context c's solver, or NULL. Under the lock. */
static warm *warm_of(sg_ctxpool *p, Z3_context c)
{
    size_t i;
    for (i = 0; p->warm && i <= p->max_idle; i++)
        if (p->warm[i].ctx == c)
            return &p->warm[i];
    return NULL;
}

/* Drop context c's solver (before c is deleted). Under the lock. */
static void warm_drop(sg_ctxpool *p, Z3_context c)
{
    warm *w = warm_of(p, c);
    if (!w)
        return;
    Z3_solver_dec_ref(c, w->solver);
    memset(w, 0, sizeof *w);
}

/* Z3 leaves the code in the context; callers read it. Installed so Z3 never exits the process. */
static void on_z3_error(Z3_context ctx, Z3_error_code code)
{
    (void)ctx;
    (void)code;
}

int sg_ctxpool_new(sg_ctxpool **out, unsigned max_idle, sg_error *err)
{
    sg_ctxpool *p = sg__calloc(1, sizeof *p);
    *out = NULL;
    if (!p || !(p->idle = sg__calloc(max_idle + 1, sizeof *p->idle))) {
        sg_free(p);
        return sg_error_set(err, SG_ENOMEM, "out of memory creating the Z3 context pool");
    }
    pthread_mutex_init(&p->lock, NULL);
    p->max_idle = max_idle;
    atomic_init(&p->created, 0);
    atomic_init(&p->reused, 0);
    *out = p;
    return 0;
}

void sg_ctxpool_free(sg_ctxpool *p)
{
    size_t i;
    if (!p)
        return;
    for (i = 0; i < p->nidle; i++) {
        warm_drop(p, p->idle[i]);
        Z3_del_context(p->idle[i]);
    }
    pthread_mutex_destroy(&p->lock);
    sg_free(p->idle);
    sg_free(p->warm);
    sg_free(p);
}

void sg_ctxpool_keep_solvers(sg_ctxpool *p, bool on)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    if (on && !p->warm)
        p->warm = sg__calloc(p->max_idle + 1, sizeof *p->warm);
    p->keep_solvers = on && p->warm;
    pthread_mutex_unlock(&p->lock);
}

bool sg_ctxpool_warm(const sg_ctxpool *p) { return p && p->keep_solvers; }

Z3_solver sg_ctxpool_take_solver(sg_ctxpool *p, Z3_context c, uint64_t *tag)
{
    Z3_solver s = NULL;
    warm *w;
    *tag = 0;
    if (!p)
        return NULL;
    pthread_mutex_lock(&p->lock);
    if ((w = warm_of(p, c)) != NULL && !w->taken) {
        w->taken = true;
        w->uses++;
        s = w->solver;
        *tag = w->tag;
    }
    pthread_mutex_unlock(&p->lock);
    return s;
}

bool sg_ctxpool_park_solver(sg_ctxpool *p, Z3_context c, Z3_solver s, bool usable, uint64_t tag)
{
    bool parked = false;
    warm *w;
    size_t i;
    if (!p || !s)
        return false;
    pthread_mutex_lock(&p->lock);
    if ((w = warm_of(p, c)) != NULL && w->solver == s) { /* the one it was handed, back */
        if (usable && p->keep_solvers && w->taken && w->uses < SG_CTXPOOL_SOLVER_USES) {
            w->taken = false;
            w->tag = tag;
            parked = true;
        } else {
            memset(w, 0, sizeof *w); /* not usable or worn out: the caller releases it */
        }
    } else if (usable && p->keep_solvers && !w) { /* a new one: the context's from now on */
        for (i = 0; i <= p->max_idle && p->warm[i].ctx; i++)
            ;
        if (i <= p->max_idle) {
            p->warm[i].ctx = c;
            p->warm[i].solver = s;
            p->warm[i].uses = 1;
            p->warm[i].taken = false;
            p->warm[i].tag = tag;
            parked = true;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return parked;
}

Z3_context sg_ctxpool_take(sg_ctxpool *p)
{
    Z3_context c = NULL;
    Z3_config cfg;

    if (p) {
        pthread_mutex_lock(&p->lock);
        if (p->nidle > 0)
            c = p->idle[--p->nidle];
        pthread_mutex_unlock(&p->lock);
        if (c) {
            atomic_fetch_add_explicit(&p->reused, 1, memory_order_relaxed);
            return c;
        }
    }
    if (sg_z3_load(NULL) != 0 || (cfg = Z3_mk_config()) == NULL) /* libz3, at the first context (z3fns.h) */
        return NULL;
    c = Z3_mk_context_rc(cfg);
    Z3_del_config(cfg);
    if (c) {
        Z3_set_error_handler(c, on_z3_error);
        Z3_set_ast_print_mode(c, Z3_PRINT_SMTLIB2_COMPLIANT);
        if (p)
            atomic_fetch_add_explicit(&p->created, 1, memory_order_relaxed);
    }
    return c;
}

void sg_ctxpool_give(sg_ctxpool *p, Z3_context c, bool reuse)
{
    if (!c)
        return;
    if (p) {
        pthread_mutex_lock(&p->lock);
        if (reuse && Z3_get_error_code(c) == Z3_OK && p->nidle < p->max_idle) {
            p->idle[p->nidle++] = c;
            c = NULL;
        } else {
            warm_drop(p, c);
        }
        pthread_mutex_unlock(&p->lock);
    }
    if (c)
        Z3_del_context(c);
}

void sg_ctxpool_stats_get(const sg_ctxpool *p, sg_ctxpool_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!p)
        return;
    out->created = atomic_load_explicit(&p->created, memory_order_relaxed);
    out->reused = atomic_load_explicit(&p->reused, memory_order_relaxed);
    pthread_mutex_lock((pthread_mutex_t *)&p->lock);
    out->idle = p->nidle;
    pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
}

/* ---- cancellation --------------------------------------------------------------------- */

#define CANCEL_SLOTS 16 /* queries running at once under one token before more wait their turn */

struct sg_cancel {
    pthread_mutex_t lock;
    pthread_cond_t room;
    atomic_bool requested;
    Z3_context running[CANCEL_SLOTS];
    size_t nrunning;
};

int sg_cancel_new(sg_cancel **out, sg_error *err)
{
    sg_cancel *k;
    if (!out)
        return sg_error_set(err, SG_EINVALID, "sg_cancel_new: no output");
    if (!(k = sg__calloc(1, sizeof *k)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    pthread_mutex_init(&k->lock, NULL);
    pthread_cond_init(&k->room, NULL);
    atomic_init(&k->requested, false);
    *out = k;
    return 0;
}

void sg_cancel_free(sg_cancel *k)
{
    if (!k)
        return;
    pthread_mutex_destroy(&k->lock);
    pthread_cond_destroy(&k->room);
    sg_free(k);
}

void sg_cancel_request(sg_cancel *k)
{
    size_t i;
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    atomic_store(&k->requested, true);
    for (i = 0; i < k->nrunning; i++)
        Z3_interrupt(k->running[i]);
    pthread_cond_broadcast(&k->room); /* queries waiting for a slot give up */
    pthread_mutex_unlock(&k->lock);
}

bool sg_cancel_requested(const sg_cancel *k) { return k && atomic_load(&k->requested); }

void sg_cancel_reset(sg_cancel *k)
{
    if (k)
        atomic_store(&k->requested, false);
}

bool sg_cancel__enter(sg_cancel *k, Z3_context c)
{
    bool ok;
    if (!k)
        return true;
    pthread_mutex_lock(&k->lock);
    while (k->nrunning == CANCEL_SLOTS && !atomic_load(&k->requested))
        pthread_cond_wait(&k->room, &k->lock);
    ok = !atomic_load(&k->requested);
    if (ok)
        k->running[k->nrunning++] = c;
    pthread_mutex_unlock(&k->lock);
    return ok;
}

void sg_cancel__leave(sg_cancel *k, Z3_context c)
{
    size_t i;
    if (!k)
        return;
    pthread_mutex_lock(&k->lock);
    for (i = 0; i < k->nrunning; i++)
        if (k->running[i] == c) {
            k->running[i] = k->running[--k->nrunning];
            pthread_cond_signal(&k->room);
            break;
        }
    pthread_mutex_unlock(&k->lock);
}
