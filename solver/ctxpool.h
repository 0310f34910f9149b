/*
 * ctxpool.h - warm Z3 contexts and cancellation, the solver module's share
 * of the engine (engine/engine.c owns one pool; any number of threads take
 * and give contexts concurrently).
 *
 * Making a Z3 context costs about 0.5 ms (Z3 registers the parameters of all
 * its modules), as much as a small check. So an encoder (sg_smt) hands its
 * context back when it is freed, every term of its own released, and the next
 * encoder takes it: a context with no live terms is as good as a new one (Z3
 * clears an interrupt at the next check; the error handler and print mode are
 * set once, at creation). A context that saw a Z3 failure, or whose user could
 * not release all its terms, is deleted instead. At most `max_idle` contexts
 * wait; the pool deletes them when it is freed.
 *
 * A cancel token (sg_cancel, engine.h) interrupts the Z3 queries running
 * under it from any thread: a query registers its context for its duration
 * (sg_cancel__enter / sg_cancel__leave) and sg_cancel_request() calls
 * Z3_interrupt on every registered context.
 */
#ifndef SG_SOLVER_CTXPOOL_H
#define SG_SOLVER_CTXPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "solver/z3fns.h"

#include "shapegate/cancel.h"
#include "shapegate/error.h"

typedef struct sg_ctxpool sg_ctxpool;

/* What a pool did so far (a snapshot). */
typedef struct sg_ctxpool_stats {
    unsigned long created;  /* contexts made */
    unsigned long reused;   /* takes answered by a warm context */
    unsigned long idle;     /* contexts waiting now */
} sg_ctxpool_stats;

/* A pool keeping at most `max_idle` warm contexts. Returns 0 or SG_ENOMEM. */
int sg_ctxpool_new(sg_ctxpool **out, unsigned max_idle, sg_error *err);
/* Delete every idle context and the pool; every taken context must be given back first. NULL-safe. */
void sg_ctxpool_free(sg_ctxpool *p);
/* A warm context or a new one (NULL when Z3 cannot make one). `p` NULL: always a new one. */
Z3_context sg_ctxpool_take(sg_ctxpool *p);
/* Give `c` back: kept for the next take when `reuse` and it saw no error and there is room,
 * else deleted. `p` NULL: deleted. */
void sg_ctxpool_give(sg_ctxpool *p, Z3_context c, bool reuse);

/*
 * Warm solvers (a pool of the engine's warm contexts: sg_ctxpool_keep_solvers). Making Z3's
 * incremental solver and its SMT kernel costs about as much as a small query, at every check.
 * A pool that keeps solvers keeps, with an idle context, the incremental solver its last user
 * left at scope 0 with no assertion (sg_ctxpool_park_solver, before the context is given
 * back), and hands it to the next user of that context (sg_ctxpool_take_solver). Like the
 * context itself, a warm solver's answers may depend on what it answered before (engine.h);
 * a solver is dropped after SG_CTXPOOL_SOLVER_USES users, so that what it accumulates stays
 * bounded. Pools that do not keep solvers (the calls' own) park nothing: their answers stay
 * those of fresh solvers.
 */
#define SG_CTXPOOL_SOLVER_USES 256
void sg_ctxpool_keep_solvers(sg_ctxpool *p, bool on);
/* Whether `p` keeps warm solvers: its users' answers may depend on their history anyway, so
 * they may also skip Z3 where the answer is known (query.c's witnesses). False for NULL. */
bool sg_ctxpool_warm(const sg_ctxpool *p);
/* The warm solver that came with context `c` (its reference now the caller's), or NULL; `*tag`
 * gets what its last user parked with it (the parameters it set), 0 with NULL. */
Z3_solver sg_ctxpool_take_solver(sg_ctxpool *p, Z3_context c, uint64_t *tag);
/* The user of context `c` is done with its incremental solver `s`: when `usable` (scope 0, no
 * assertion, no Z3 error) the pool may keep it, with `tag`, for the context's next user and
 * returns true (the reference is the pool's); false when the pool keeps no solvers, `s` is not
 * usable or was used SG_CTXPOOL_SOLVER_USES times: the caller releases its reference, the pool
 * has forgotten `s`. */
bool sg_ctxpool_park_solver(sg_ctxpool *p, Z3_context c, Z3_solver s, bool usable, uint64_t tag);
/* A snapshot of the counters (zeros for NULL). */
void sg_ctxpool_stats_get(const sg_ctxpool *p, sg_ctxpool_stats *out);

/* Engine-wide counters the solver and the analyses add to (any thread). */
typedef struct sg_counters {
    atomic_ullong checks;          /* checks run */
    atomic_ullong queries;         /* Z3 queries */
    atomic_ullong decided_cheaply; /* guards decided without Z3 */
    atomic_ullong budget_stops;    /* queries a budget stopped */
} sg_counters;

/* What a call runs with beyond its options: the engine's warm contexts and counters (either
 * NULL: a private context per encoder, nothing counted). */
typedef struct sg_runtime {
    sg_ctxpool *contexts;
    sg_counters *counters;
} sg_runtime;

/* Add `n` to counter `c` when there is one. */
#define SG_COUNT(rt, field, n)                                                                     \
    do {                                                                                           \
        if ((rt) && (rt)->counters)                                                                \
            atomic_fetch_add_explicit(&(rt)->counters->field, (n), memory_order_relaxed);          \
    } while (0)

/* sg_smt_new() with its context, once one is needed, from `contexts` (given back by sg_smt_free;
 * NULL: private). */
struct sg_smt;
struct sg_pool;
int sg_smt_new_in(struct sg_smt **out, struct sg_pool *pool, sg_ctxpool *contexts, sg_error *err);

/* Register `c` as running a query under `k` (NULL-safe). False when `k` was already
 * cancelled: then the query must not start (nothing is registered). */
bool sg_cancel__enter(sg_cancel *k, Z3_context c);
/* The query on `c` is done: no interrupt reaches it any more once this returns. */
void sg_cancel__leave(sg_cancel *k, Z3_context c);

#endif
