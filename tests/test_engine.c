/*
 * test_engine.c - the engine shared by threads (include/shapegate/engine.h).
 *
 *   - the whole corpus (tests/corpus/cases and cases-2.6) checked on 8 threads
 *     at once on one engine, the largest traces by every thread at the same
 *     time, each report's JSON identical to a sequential run's but for the
 *     counterexample sizes, and every counterexample a real one (evaluated
 *     exactly): Z3 4.8.12 picks other models while other threads solve, even
 *     in new contexts (docs/engine.md), so the sizes of a witness are the one
 *     thing a run on threads may answer differently; the suite runs this
 *     under ThreadSanitizer too (build.sh, build-tsan/);
 *   - the traces are never modified: each writes the same JSON before and after;
 *   - one warm context for every case in turn: the cold report byte for byte where the
 *     cold run asked Z3 nothing (small components are decided by their models on any
 *     context), the same verdict elsewhere;
 *   - warm contexts shared by the threads: the same verdicts;
 *   - the cache: an identical call is answered from it, with the same JSON;
 *   - cancellation from another thread: a check Z3 would take seconds on stops
 *     promptly, its dims unknown with the reason "canceled";
 *   - versioned options: version 1 structs are read as version 1, unknown
 *     versions refused; the counters;
 *   - torch's lines that make the very spec our verified fixes make are OK without a
 *     check of their own (the same verdict as their check); other lines are checked.
 *
 * Budgets are Z3 resource limits, never wall-clock ones, so that every run
 * gives the same answers (and a sanitizer's slowness changes nothing).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corpus_walk.h"
#include "analysis/fixes.h"
#include "report/report.h"
#include "shapegate/shapegate.h"
#include "test.h"
#include "witness.h"

#define NTHREADS 8
#define MAX_CASES 256
#define BURST 3 /* traces every thread checks at the same time */

typedef struct engine_case {
    char name[256];
    sg_trace *trace;
    char *before;   /* the trace's JSON before any check */
    char *expected; /* the sequential run's report */
    size_t guards;
} engine_case;

static engine_case cases[MAX_CASES];
static size_t ncases;

/* The options of every check here: deterministic budgets, everything on. */
static sg_check_options options(void)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    o.timeout_ms = 0;
    o.query_timeout_ms = 0;
    o.query_rlimit = 50000000;
    return o;
}

/* The report of a check of `t` on `e` as JSON without timings (NULL on error, with `err`);
 * the report itself into `*keep` when not NULL. */
static char *check_json_keep(sg_engine *e, const sg_trace *t, sg_report **keep, sg_error *err)
{
    sg_check_options o = options();
    sg_report *r = NULL;
    char *js = NULL;
    if (sg_engine_check(e, t, &o, &r, err) == 0)
        sg_report_to_json(&js, r, SG_JSON_NO_TIMES, err);
    if (keep)
        *keep = r;
    else
        sg_report_free(r);
    return js;
}

static char *check_json(sg_engine *e, const sg_trace *t, sg_error *err) { return check_json_keep(e, t, NULL, err); }

/* `js` with every number inside a "counterexample" object replaced by '#' (in place). */
static void mask_witnesses(char *js)
{
    char *p = js, *w;
    while (js && (p = strstr(p, "\"counterexample\":{")) != NULL) {
        p += strlen("\"counterexample\":{");
        for (w = p; *p && *p != '}'; p++) {
            if ((*p >= '0' && *p <= '9') || *p == '-') {
                while (p[1] >= '0' && p[1] <= '9')
                    p++;
                *w++ = '#';
            } else {
                *w++ = *p;
            }
        }
        memmove(w, p, strlen(p) + 1);
        p = w;
    }
}

/* Every counterexample of `r` fails the trace when evaluated exactly. */
static bool witnesses_fail(const sg_report *r)
{
    size_t i;
    for (i = 0; i < r->nviolations; i++)
        if (r->violations[i].has_counterexample && !witness_fails(r->trace, r->violations[i].counterexample))
            return false;
    return true;
}

static void load_corpus(void)
{
    size_t v, i;
    for (v = 0; v < CORPUS_NVERSIONS; v++) {
        char *names[MAX_CASES];
        int n = corpus_case_names(SG_CORPUS, corpus_versions[v], names, MAX_CASES);
        for (i = 0; n > 0 && i < (size_t)n; i++) {
            char dir[1024];
            sg_error err = SG_ERROR_INIT;
            engine_case *c = &cases[ncases];
            snprintf(dir, sizeof dir, "%s/%s/%s", SG_CORPUS, corpus_versions[v], names[i]);
            if (ncases < MAX_CASES && sg_trace_load(&c->trace, dir, &err) == 0) {
                snprintf(c->name, sizeof c->name, "%s/%s", corpus_versions[v], names[i]);
                c->guards = sg_trace_guard_count(c->trace);
                CHECK(sg_trace_to_json(&c->before, c->trace, &err) == 0);
                ncases++;
            }
        }
        for (i = 0; n > 0 && i < (size_t)n; i++)
            free(names[i]);
    }
}

/* ---- the corpus on 8 threads ---------------------------------------------------------- */

typedef struct job {
    size_t c;          /* the case */
    char *got;         /* its report in this run, as JSON */
    sg_report *report; /* and itself, for its counterexamples */
    char err[SG_ERROR_MSG_MAX];
} job;

typedef struct pool {
    sg_engine *engine;
    job *jobs;
    size_t njobs;
    atomic_size_t next;
    pthread_barrier_t burst; /* the threads start the burst jobs together */
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    size_t k;
    /* first the burst: every thread checks the same large traces at once */
    pthread_barrier_wait(&p->burst);
    while ((k = atomic_fetch_add(&p->next, 1)) < p->njobs) {
        sg_error err = SG_ERROR_INIT;
        job *j = &p->jobs[k];
        j->got = check_json_keep(p->engine, cases[j->c].trace, &j->report, &err);
        if (!j->got)
            snprintf(j->err, sizeof j->err, "%s", err.msg);
    }
    return NULL;
}

/* The `BURST` cases with the most guards. */
static void largest(size_t *out)
{
    size_t i, k;
    for (k = 0; k < BURST; k++) {
        size_t best = SIZE_MAX;
        for (i = 0; i < ncases; i++) {
            bool taken = false;
            size_t q;
            for (q = 0; q < k; q++)
                taken |= out[q] == i;
            if (!taken && (best == SIZE_MAX || cases[i].guards > cases[best].guards))
                best = i;
        }
        out[k] = best;
    }
}

static void test_corpus_threads(void)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    pthread_t th[NTHREADS];
    size_t i, k, big[BURST], mismatches = 0, witness_other = 0;
    pool p;
    sg_engine_stats st;

    CHECK(ncases >= 90);
    /* no warm contexts: each call's answers depend on its trace and options only (engine.h) */
    CHECK_EQ_INT(sg_engine_new(&e, &eo, &err), 0);
    if (!e)
        return;
    /* the sequential run */
    for (i = 0; i < ncases; i++) {
        cases[i].expected = check_json(e, cases[i].trace, &err);
        CHECK_MSG(cases[i].expected != NULL, "%s: %s", cases[i].name, err.msg);
    }
    /* the same on 8 threads: the largest traces by every thread at once, then every case */
    memset(&p, 0, sizeof p);
    p.engine = e;
    largest(big);
    p.njobs = NTHREADS * BURST + ncases;
    p.jobs = calloc(p.njobs, sizeof *p.jobs);
    CHECK(p.jobs != NULL);
    if (!p.jobs) {
        sg_engine_free(e);
        return;
    }
    for (k = 0; k < BURST; k++)
        for (i = 0; i < NTHREADS; i++)
            p.jobs[k * NTHREADS + i].c = big[k];
    for (i = 0; i < ncases; i++)
        p.jobs[NTHREADS * BURST + i].c = i;
    atomic_init(&p.next, 0);
    pthread_barrier_init(&p.burst, NULL, NTHREADS);
    for (i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &p) == 0);
    for (i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&p.burst);
    for (k = 0; k < p.njobs; k++) {
        const job *j = &p.jobs[k];
        const engine_case *c = &cases[j->c];
        bool same = j->got && c->expected && strcmp(j->got, c->expected) == 0, masked = same;
        if (!same && j->got && c->expected) {
            char *want = strdup(c->expected);
            mask_witnesses(want);
            mask_witnesses(j->got);
            masked = want && strcmp(j->got, want) == 0;
            free(want);
        }
        witness_other += same != masked;
        CHECK_MSG(j->report && witnesses_fail(j->report), "%s: a counterexample passes the trace", c->name);
        sg_report_free(j->report);
        same = masked;
        mismatches += !same;
        if (!same && getenv("SG_ENGINE_DUMP") && j->got) { /* for a look at what differs */
            FILE *f = fopen(getenv("SG_ENGINE_DUMP"), "a");
            if (f) {
                fprintf(f, "%s\n%s\n%s\n", c->name, c->expected ? c->expected : "", j->got);
                fclose(f);
            }
        }
        CHECK_MSG(same, "%s: the threaded report differs from the sequential one (%s)", c->name,
                  j->got ? "different JSON" : j->err);
        sg_free(j->got);
    }
    printf("corpus on %d threads: %zu checks (%zu cases, %d x %d at once), %zu differ, %zu with other "
           "counterexample sizes (each checked to fail)\n",
           NTHREADS, p.njobs, ncases, NTHREADS, BURST, mismatches, witness_other);
    /* nothing wrote into a trace */
    for (i = 0; i < ncases; i++) {
        char *after = NULL;
        CHECK(sg_trace_to_json(&after, cases[i].trace, &err) == 0);
        CHECK_MSG(after && cases[i].before && strcmp(after, cases[i].before) == 0, "%s: the trace changed",
                  cases[i].name);
        sg_free(after);
    }
    sg_engine_stats_get(e, &st);
    CHECK_EQ_INT(st.requests, ncases + p.njobs);
    CHECK_EQ_INT(st.errors, 0);
    CHECK(st.checks >= st.requests && st.solver_queries > 0);
    CHECK(st.contexts_created > 0 && st.contexts_created <= st.checks && st.contexts_reused > 0);
    CHECK_EQ_INT(st.contexts_idle, 0);
    printf("counters: %llu requests, %llu checks, %llu queries, %llu decided cheaply, %llu contexts made, %llu "
           "reused\n",
           (unsigned long long)st.requests, (unsigned long long)st.checks, (unsigned long long)st.solver_queries,
           (unsigned long long)st.decided_cheaply, (unsigned long long)st.contexts_created,
           (unsigned long long)st.contexts_reused);
    free(p.jobs);
    sg_engine_free(e);
}

/* One warm context for every case in turn (a service worker's life): where the cold run asked Z3
 * nothing (the presolve, and small components decided by their models, check.md), the report is
 * the cold one byte for byte, whatever the context answered before; elsewhere the verdict is. */
static void test_warm_sequential(void)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    size_t i, without_z3 = 0;

    eo.warm_contexts = 1;
    CHECK_EQ_INT(sg_engine_new(&e, &eo, &err), 0);
    if (!e)
        return;
    for (i = 0; i < ncases; i++) {
        const char *want = cases[i].expected, *v1, *v2;
        char *got = check_json(e, cases[i].trace, &err);
        CHECK_MSG(got != NULL, "%s: %s", cases[i].name, err.msg);
        if (got && want && strstr(want, "\"queries\":0,")) {
            without_z3++;
            CHECK_MSG(strcmp(got, want) == 0, "%s: the warm report differs from the cold one without a Z3 query",
                      cases[i].name);
        }
        v1 = got ? strstr(got, "\"verdict\":") : NULL;
        v2 = want ? strstr(want, "\"verdict\":") : NULL;
        CHECK_MSG(v1 && v2 && strncmp(v1, v2, strcspn(v2, ",")) == 0, "%s: another verdict on a warm context",
                  cases[i].name);
        sg_free(got);
    }
    printf("one warm context, sequentially: %zu cases, %zu of them without a Z3 query (same report)\n", ncases,
           without_z3);
    CHECK(without_z3 >= ncases / 2);
    sg_engine_free(e);
}

/* Warm contexts shared by threads: the answers may depend on what a context answered before
 * (engine.h), but the verdicts do not, and nothing breaks. */
static void test_warm_threads(void)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    pthread_t th[NTHREADS];
    sg_engine_stats st;
    size_t i, k;
    pool p;

    eo.warm_contexts = NTHREADS;
    CHECK_EQ_INT(sg_engine_new(&e, &eo, &err), 0);
    if (!e)
        return;
    memset(&p, 0, sizeof p);
    p.engine = e;
    p.njobs = ncases;
    p.jobs = calloc(p.njobs, sizeof *p.jobs);
    for (i = 0; p.jobs && i < ncases; i++)
        p.jobs[i].c = i;
    atomic_init(&p.next, 0);
    pthread_barrier_init(&p.burst, NULL, NTHREADS);
    for (i = 0; p.jobs && i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, &p) == 0);
    for (i = 0; p.jobs && i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&p.burst);
    for (k = 0; p.jobs && k < p.njobs; k++) {
        const char *got = p.jobs[k].got, *want = cases[p.jobs[k].c].expected, *v1, *v2;
        CHECK_MSG(got != NULL, "%s: %s", cases[p.jobs[k].c].name, p.jobs[k].err);
        /* the verdict is the first member of the report's JSON */
        v1 = got ? strstr(got, "\"verdict\":") : NULL;
        v2 = want ? strstr(want, "\"verdict\":") : NULL;
        CHECK_MSG(v1 && v2 && strncmp(v1, v2, strcspn(v2, ",")) == 0, "%s: another verdict with warm contexts",
                  cases[p.jobs[k].c].name);
        CHECK_MSG(p.jobs[k].report && witnesses_fail(p.jobs[k].report), "%s: a counterexample passes the trace",
                  cases[p.jobs[k].c].name);
        sg_report_free(p.jobs[k].report);
        sg_free(p.jobs[k].got);
    }
    sg_engine_stats_get(e, &st);
    CHECK(st.contexts_created <= NTHREADS + 1 && st.contexts_idle <= NTHREADS && st.contexts_reused > 0);
    free(p.jobs);
    sg_engine_free(e);
}

/* ---- the cache -------------------------------------------------------------------------- */

static void test_cache(void)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_engine_stats st;
    size_t i, n = ncases < 12 ? ncases : 12;
    char *first[12] = {0};

    eo.cache_entries = 8; /* fewer than the cases: eviction */
    CHECK_EQ_INT(sg_engine_new(&e, &eo, &err), 0);
    if (!e)
        return;
    for (i = 0; i < n; i++)
        first[i] = check_json(e, cases[i].trace, &err);
    for (i = n; i-- > 0;) { /* the last ones are still held */
        char *again = check_json(e, cases[i].trace, &err);
        CHECK_MSG(again && first[i] && strcmp(again, first[i]) == 0, "%s: the cached report differs", cases[i].name);
        sg_free(again);
        sg_free(first[i]);
    }
    sg_engine_stats_get(e, &st);
    CHECK(st.cache_hits >= 4 && st.cache_hits <= 8);
    CHECK_EQ_INT(st.cache_hits + st.cache_misses, 2 * n);
    /* a copy with another spec is another trace: no hit */
    {
        const char *items[1] = {"x.0=AUTO"};
        sg_trace *t2 = NULL;
        size_t hits = st.cache_hits;
        for (i = 0; i < ncases && !t2; i++)
            if (strstr(cases[i].name, "err_div_view_8"))
                sg_trace_with_dims(&t2, cases[i].trace, items, 1, &err);
        CHECK(t2 != NULL);
        if (t2) {
            char *js = check_json(e, t2, &err);
            CHECK(js != NULL);
            sg_free(js);
            sg_engine_stats_get(e, &st);
            CHECK_EQ_INT(st.cache_hits, hits);
        }
        sg_trace_free(t2);
    }
    sg_engine_free(e);
}

/* ---- cancellation ------------------------------------------------------------------------- */

typedef struct cancel_run {
    sg_engine *engine;
    sg_trace *trace;
    sg_cancel *cancel;
    sg_report *report;
    int rc;
    double seconds;
} cancel_run;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *cancel_worker(void *arg)
{
    cancel_run *c = arg;
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    double t0 = now();
    /* no budget that would stop it first: without a cancel this takes Z3 seconds; a query
     * time limit far away keeps the watchdog thread running next to the interrupt */
    o.timeout_ms = 0;
    o.query_timeout_ms = 600000;
    o.query_rlimit = 0;
    o.fixes = false;
    o.cancel = c->cancel;
    c->rc = sg_engine_check(c->engine, c->trace, &o, &c->report, &err);
    c->seconds = now() - t0;
    return NULL;
}

static void test_cancel(void)
{
    sg_error err = SG_ERROR_INIT;
    cancel_run c;
    pthread_t th;
    sg_engine_stats st;
    size_t i, unknown = 0;

    memset(&c, 0, sizeof c);
    CHECK_EQ_INT(sg_engine_new(&c.engine, NULL, &err), 0);
    CHECK_EQ_INT(sg_trace_load(&c.trace, SG_SOURCE_DIR "/tests/data/hard_nonlinear.json", &err), 0);
    CHECK_EQ_INT(sg_cancel_new(&c.cancel, &err), 0);
    if (!c.engine || !c.trace || !c.cancel)
        goto cleanup;
    CHECK(!sg_cancel_requested(c.cancel));
    CHECK(pthread_create(&th, NULL, cancel_worker, &c) == 0);
    {
        struct timespec d = {0, 300 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
    sg_cancel_request(c.cancel);
    pthread_join(th, NULL);
    CHECK_EQ_INT(c.rc, 0);
    CHECK_MSG(c.seconds < 8, "the canceled check took %.1f s", c.seconds);
    if (c.report) {
        CHECK_EQ_INT(sg_report_verdict(c.report), SG_VERDICT_UNKNOWN);
        for (i = 0; i < sg_report_dim_count(c.report); i++)
            if (sg_report_dim_status(c.report, i) == SG_DIM_UNKNOWN) {
                unknown++;
                CHECK_EQ_STR(sg_report_dim_reason(c.report, i), "canceled");
            }
        CHECK(unknown > 0);
    }
    sg_engine_stats_get(c.engine, &st);
    CHECK_EQ_INT(st.canceled, 1);
    /* a token already requested stops a call before its first query */
    sg_report_free(c.report);
    c.report = NULL;
    cancel_worker(&c);
    CHECK(c.rc == 0 && c.report && sg_report_verdict(c.report) == SG_VERDICT_UNKNOWN);
    sg_cancel_reset(c.cancel);
    CHECK(!sg_cancel_requested(c.cancel));
cleanup:
    sg_report_free(c.report);
    sg_cancel_free(c.cancel);
    sg_trace_free(c.trace);
    sg_engine_free(c.engine);
}

/* ---- options and the report's accessors --------------------------------------------------- */

/* The version-1 layout a binding compiled against the first header would pass. */
typedef struct options_v1 {
    unsigned version;
    unsigned timeout_ms, query_timeout_ms;
    uint64_t query_rlimit;
    bool infer, minimize_cores;
} options_v1;

static void test_options(void)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_check_options o;
    options_v1 v1 = {1, 0, 0, 50000000, true, true};
    sg_engine *e = NULL;
    sg_report *r = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_trace *t = ncases ? cases[0].trace : NULL;

    CHECK_EQ_INT(sg_check_options_init(&o, SG_CHECK_OPTIONS_VERSION), 0);
    CHECK_EQ_INT(o.version, SG_CHECK_OPTIONS_VERSION);
    CHECK_EQ_INT(sg_check_options_init(&o, 99), SG_EINVALID);
    CHECK_EQ_INT(sg_engine_options_init(&eo, 7), SG_EINVALID);
    eo.version = 7;
    CHECK_EQ_INT(sg_engine_new(&e, &eo, &err), SG_EINVALID);
    CHECK(e == NULL && strstr(err.msg, "version 7"));
    CHECK_EQ_INT(sg_engine_new(&e, NULL, &err), 0);
    if (!e || !t)
        return;
    o = options();
    o.version = 3;
    CHECK_EQ_INT(sg_engine_check(e, t, &o, &r, &err), SG_EINVALID);
    CHECK(r == NULL && strstr(err.msg, "sg_check_options version 3"));
    /* a version-1 struct: the switches it does not have get their defaults */
    CHECK_EQ_INT(sg_engine_check(e, t, (const sg_check_options *)(const void *)&v1, &r, &err), 0);
    if (r) {
        char *js = NULL;
        CHECK(sg_report_to_json(&js, r, SG_JSON_NO_TIMES, &err) == 0 && js && strcmp(js, cases[0].expected) == 0);
        sg_free(js);
    }
    sg_report_free(r);
    sg_engine_free(e);
    CHECK(strcmp(sg_version(), SG_VERSION_STRING) == 0);
}

/* The accessors say what the JSON says (one refuted case, its fixes verified). */
static void test_accessors(void)
{
    sg_engine *e = NULL;
    sg_report *r = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options o = options();
    const sg_trace *t = NULL;
    sg_num n;
    size_t i;

    for (i = 0; i < ncases && !t; i++)
        if (strcmp(cases[i].name, "cases/err_div_view_8") == 0)
            t = cases[i].trace;
    CHECK(t != NULL);
    if (!t || sg_engine_new(&e, NULL, &err) != 0)
        return;
    CHECK_EQ_INT(sg_engine_check(e, t, &o, &r, &err), 0);
    if (r) {
        CHECK_EQ_INT(sg_report_verdict(r), SG_VERDICT_VIOLATIONS);
        CHECK_EQ_INT(sg_report_kind_of(r), SG_REPORT_CHECK);
        CHECK(sg_report_trace(r) == t);
        CHECK_EQ_INT(sg_report_dim_count(r), sg_trace_input_count(t));
        CHECK_EQ_INT(sg_report_dim_status(r, 0), SG_DIM_REFUTED);
        CHECK_EQ_INT(sg_report_violation_count(r), 1);
        CHECK_EQ_INT(sg_report_violation_kind(r, 0), SG_VIOL_GUARD);
        CHECK_EQ_STR(sg_report_violation_dim(r, 0), "dx");
        /* the failing shape nearest the example 16 (check.md): 17 */
        CHECK(sg_report_violation_counterexample(r, 0, 0, &n) && n.value == 17 && !n.big && strcmp(n.text, "17") == 0);
        CHECK_EQ_INT(sg_report_core_count(r, 0), 2);
        CHECK_EQ_INT(sg_report_core_kind(r, 0, 1), SG_CORE_SPEC);
        CHECK_EQ_INT(sg_report_inferred_count(r), 1);
        CHECK_EQ_STR(sg_report_inferred_symbol(r, 0), "s77");
        {
            sg_num lo, hi, m, res;
            bool exact = false;
            CHECK(sg_report_inferred_range(r, 0, &lo, &hi, &exact) && lo.value == 16 && hi.inf == 1 && exact);
            CHECK_EQ_STR(hi.text, "int_oo");
            CHECK(sg_report_inferred_congruence(r, 0, &m, &res) && m.value == 8 && res.value == 0);
        }
        CHECK(sg_report_has_fixes(r) && sg_report_fixes_verified(r));
        CHECK_EQ_INT(sg_report_fix_count(r), 2);
        CHECK_EQ_STR(sg_report_fix_line(r, 1), "dx = 8*_dx");
        CHECK(sg_report_fixed_spec_json(r) && strstr(sg_report_fixed_spec_json(r), "8*_dx"));
        CHECK(sg_report_torch_message(r) && strstr(sg_report_torch_message(r), "Suggested fixes:"));
        /* out of range: NULL, 0, false */
        CHECK(sg_report_violation_message(r, 9) == NULL && sg_report_core_count(r, 9) == 0);
        CHECK(!sg_report_violation_counterexample(r, 0, 99, &n) && sg_report_fix_line(r, 9) == NULL);
    }
    sg_report_free(r);
    sg_engine_free(e);
}

static const sg_trace *loaded_case(const char *name)
{
    size_t i;
    for (i = 0; i < ncases; i++)
        if (strcmp(cases[i].name, name) == 0)
            return cases[i].trace;
    return NULL;
}

/* The checks one sg_engine_check of `t` runs, with torch's lines re-checked or not; its report. */
static uint64_t checks_run(const sg_trace *t, bool torch_fixes, sg_report **out)
{
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options o = options();
    sg_engine_stats st;
    *out = NULL;
    o.torch_fixes = torch_fixes;
    if (sg_engine_new(&e, NULL, &err) != 0)
        return 0;
    CHECK_EQ_INT(sg_engine_check(e, t, &o, out, &err), 0);
    sg_engine_stats_get(e, &st);
    sg_engine_free(e);
    return st.checks;
}

static void test_torch_lines_of_our_spec(void)
{
    static const struct {
        const char *name;
        bool same; /* torch's lines make the spec of our verified fixes, byte for byte */
    } cs[] = {{"cases/err_check_ge", true}, {"cases/err_eq_add", false}};
    size_t k;
    for (k = 0; k < sizeof cs / sizeof *cs; k++) {
        const sg_trace *t = loaded_case(cs[k].name);
        sg_report *without = NULL, *with = NULL;
        sg_verdict full = SG_VERDICT_UNKNOWN;
        sg_error err = SG_ERROR_INIT;
        char *why = NULL;
        uint64_t c0, c1;
        CHECK_MSG(t != NULL, "%s not in the corpus", cs[k].name);
        if (!t)
            continue;
        c0 = checks_run(t, false, &without);
        c1 = checks_run(t, true, &with);
        CHECK_MSG(with && with->fixes && with->fixes->verified && with->torch, "%s: verified fixes and torch's lines",
                  cs[k].name);
        if (with && with->torch) {
            /* what a check of torch's lines says on its own (sg_fixes_check_lines compares with nothing) */
            CHECK_EQ_INT(sg_fixes_check_lines(&full, &why, t, (const char *const *)with->torch->lines,
                                              with->torch->nlines, NULL, &err), 0);
            CHECK_EQ_INT(with->torch->verdict, full);
            CHECK_MSG(c1 == c0 + (cs[k].same ? 0 : 1), "%s: %llu checks with torch's lines, %llu without", cs[k].name,
                      (unsigned long long)c1, (unsigned long long)c0);
            if (cs[k].same)
                CHECK(with->torch->verdict == SG_VERDICT_OK && with->torch->why == NULL);
        }
        CHECK(!with || !with->fixes || with->fixes->checked == NULL); /* released by the engine */
        sg_free(why);
        sg_report_free(without);
        sg_report_free(with);
    }
}

int main(void)
{
    size_t i;
    load_corpus();
    RUN(test_corpus_threads);
    RUN(test_warm_sequential);
    RUN(test_warm_threads);
    RUN(test_cache);
    RUN(test_cancel);
    RUN(test_options);
    RUN(test_accessors);
    RUN(test_torch_lines_of_our_spec);
    for (i = 0; i < ncases; i++) {
        sg_trace_free(cases[i].trace);
        sg_free(cases[i].before);
        sg_free(cases[i].expected);
    }
    return test_summary();
}
