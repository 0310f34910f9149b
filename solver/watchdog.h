/*
 * watchdog.h - the wall-clock limit of a Z3 query: one thread per problem,
 * armed before each check and disarmed after it (solver/problem.c).
 *
 * Z3 4.8.12's own "timeout" parameter can deadlock when it fires (its
 * scoped_timer, fixed upstream later), so a query's wall-clock limit is this
 * thread calling Z3_interrupt when time is up, and again every 20 ms until
 * the query is disarmed (an interrupt that lands before the check has
 * installed its handler does nothing). It interrupts only while armed and
 * holds its lock while it does, so it never reaches a later query: an
 * interrupt between a check's return and the disarm lands outside a running
 * check, where Z3_interrupt does nothing. The thread is made on the first
 * arm and lives until sg_watchdog_free: a check of a 1,000-input trace asks
 * thousands of queries, and a thread per query cost more than the query
 * (view800: 3,202 thread creations).
 *
 * Solver-internal. A watchdog belongs to one problem, used by one thread at
 * a time (its own thread aside).
 */
#ifndef SG_SOLVER_WATCHDOG_H
#define SG_SOLVER_WATCHDOG_H

#include <stdbool.h>

#include <z3.h>

typedef struct sg_watchdog sg_watchdog;

/* A new watchdog, its thread not started yet; NULL when out of memory (queries then run under
 * their resource limit and the call's deadline only). */
sg_watchdog *sg_watchdog_new(void);

/* Stop its thread (joined) and free it; NULL-safe. Must not be armed. */
void sg_watchdog_free(sg_watchdog *w);

/* Interrupt `ctx` once `ms` milliseconds have passed, until disarmed. When the thread cannot be
 * started the watchdog stays silent (as a NULL one). */
void sg_watchdog_arm(sg_watchdog *w, Z3_context ctx, unsigned ms);

/* Disarm; true when it interrupted since it was armed. */
bool sg_watchdog_disarm(sg_watchdog *w);

#endif
