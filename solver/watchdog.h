/*
 * watchdog.h - the wall-clock limit of a Z3 query: one timer thread for the
 * whole process, a watchdog armed before each check and disarmed after it
 * (solver/problem_run.c).
 *
 * Z3 4.8.12's own "timeout" parameter can deadlock when it fires (its
 * scoped_timer, fixed upstream later), so a query's wall-clock limit is a
 * timer thread calling Z3_interrupt when time is up, and again every 20 ms
 * until the watchdog is disarmed (an interrupt that lands before the check
 * has installed its handler does nothing). The deterministic budget is Z3's
 * "rlimit".
 *
 * One detached timer thread serves every query of the process: started by
 * the first arm, sleeping until the earliest armed deadline, woken only by a
 * watchdog armed earlier than that. A thread created and joined per query
 * cost as much as a small query itself (issue 16), and a thread per problem
 * still one per small check; a check of a 1,000-input trace asks thousands
 * of queries (view800: 3,202 thread creations with a thread per query). In a
 * fork's child the first arm starts the child's own timer.
 *
 * The timer holds its lock while it interrupts and only reaches armed
 * watchdogs, so once disarmed a watchdog never reaches its context again: an
 * interrupt between a check's return and the disarm lands outside a running
 * check, where Z3_interrupt does nothing.
 *
 * Solver-internal. A watchdog is the caller's (on its stack: one per running
 * query); any thread may arm its own while others are armed.
 */
#ifndef SG_SOLVER_WATCHDOG_H
#define SG_SOLVER_WATCHDOG_H

#include <stdbool.h>
#include <time.h>

#include "solver/z3fns.h"

/* One armed query. Fields are private to watchdog.c. */
typedef struct sg_watchdog {
    Z3_context ctx;
    struct timespec until;     /* CLOCK_MONOTONIC */
    bool fired;
    bool armed;
    struct sg_watchdog *next; /* in the timer's armed list, under its lock */
} sg_watchdog;

/* Interrupt `ctx` once `ms` milliseconds have passed, until disarmed. When the timer thread
 * cannot be started the watchdog is not armed: the query runs under its rlimit and the call's
 * deadline only. */
void sg_watchdog_arm(sg_watchdog *w, Z3_context ctx, unsigned ms);

/* Disarm `w` (armed or not); true when it interrupted the query. */
bool sg_watchdog_disarm(sg_watchdog *w);

#endif
