/*
 * engine.c - the engine (include/shapegate/engine.h): one handle shared by
 * threads, holding the optional warm Z3 contexts (solver/ctxpool.c), the
 * result cache and the counters; each public call is a job run on it, with
 * contexts of its own unless the engine keeps warm ones (engine.h says why).
 *
 * A job is (kind, input, options). Running one: the options are read as
 * their version says (analysis/analysis.h), the cache is asked, the analyses
 * run with the engine's runtime (contexts, counters) and the report is
 * composed from their parts (check, fixes, torch's text, torch's lines
 * re-checked, the program's side of a verify). Nothing here prints, parses
 * a report back, or touches Z3; the engine only composes.
 *
 * Seams for what comes next: a release gate is a job over two traces
 * (check old and new, compare what each accepts); a batch is many jobs run
 * by a few threads on the one engine (every piece below is thread-safe);
 * component parallelism would split one check's independent components
 * (sg_problem's input_comp) into jobs of their own.
 *
 * The cache: a report the engine made for (kind, options, trace content and
 * name) is kept, shared by reference count, and given to a later identical
 * call. Only reports in which nothing is unknown are kept: an unknown may be
 * a budget's or a cancel's doing, and a later call deserves its own try.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/gate.h"
#include "graph/verify.h"
#include "report/report.h"
#include "shapegate/engine.h"
#include "shapegate/graph.h"
#include "torch/message.h"
#include "solver/ctxpool.h"
#include "solver/point.h"
#include "solver/problem.h"
#include "solver/query.h"
#include "trace/trace_impl.h"
#include "util/sha256.h"
#include "util/util.h"

typedef struct cache_entry {
    unsigned char key[SG_SHA256_LEN];
    sg_report *report; /* one reference held by the cache; NULL: empty slot */
    uint64_t used;     /* last use, for eviction */
} cache_entry;

struct sg_engine {
    sg_engine_options opts;
    sg_ctxpool *contexts; /* warm contexts shared by calls (opts.warm_contexts > 0), else NULL */
    sg_counters counters;
    atomic_ullong requests, errors, canceled, cache_hits, cache_misses;
    atomic_ullong call_created, call_reused; /* contexts of the calls' own pools */
    pthread_mutex_t cache_lock;
    cache_entry *cache; /* [opts.cache_entries] */
    uint64_t clock;     /* cache use counter, under cache_lock */
};

/* ---- options and life cycle ---------------------------------------------------------- */

int sg_engine_options_init(sg_engine_options *o, unsigned version)
{
    sg_engine_options d = SG_ENGINE_OPTIONS_INIT;
    if (!o || version != SG_ENGINE_OPTIONS_VERSION)
        return SG_EINVALID;
    *o = d;
    return 0;
}

int sg_engine_new(sg_engine **out, const sg_engine_options *opts, sg_error *err)
{
    sg_engine_options d = SG_ENGINE_OPTIONS_INIT;
    sg_engine *e;
    int rc;

    if (!out)
        return sg_error_set(err, SG_EINVALID, "sg_engine_new: no output");
    *out = NULL;
    if (opts && opts->version != SG_ENGINE_OPTIONS_VERSION)
        return sg_error_set(err, SG_EINVALID, "sg_engine_options version %u is not supported (this library reads %d)",
                            opts->version, SG_ENGINE_OPTIONS_VERSION);
    if (!(e = sg__calloc(1, sizeof *e)))
        return sg_error_set(err, SG_ENOMEM, "out of memory creating the engine");
    e->opts = opts ? *opts : d;
    if (e->opts.warm_contexts && (rc = sg_ctxpool_new(&e->contexts, e->opts.warm_contexts, err)) != 0) {
        sg_free(e);
        return rc;
    }
    sg_ctxpool_keep_solvers(e->contexts, true); /* warm contexts, warm solvers (ctxpool.h) */
    if (e->opts.cache_entries && !(e->cache = sg__calloc(e->opts.cache_entries, sizeof *e->cache))) {
        sg_ctxpool_free(e->contexts);
        sg_free(e);
        return sg_error_set(err, SG_ENOMEM, "out of memory creating the engine's cache");
    }
    pthread_mutex_init(&e->cache_lock, NULL);
    *out = e;
    return 0;
}

void sg_engine_free(sg_engine *e)
{
    size_t i;
    if (!e)
        return;
    for (i = 0; e->cache && i < e->opts.cache_entries; i++)
        sg_report_free(e->cache[i].report);
    sg_free(e->cache);
    pthread_mutex_destroy(&e->cache_lock);
    sg_ctxpool_free(e->contexts);
    sg_free(e);
}

void sg_engine_stats_get(const sg_engine *e, sg_engine_stats *out)
{
    sg_ctxpool_stats cs;
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!e)
        return;
    out->requests = atomic_load(&e->requests);
    out->errors = atomic_load(&e->errors);
    out->checks = atomic_load(&e->counters.checks);
    out->solver_queries = atomic_load(&e->counters.queries);
    out->decided_cheaply = atomic_load(&e->counters.decided_cheaply);
    out->budget_stops = atomic_load(&e->counters.budget_stops);
    out->canceled = atomic_load(&e->canceled);
    out->cache_hits = atomic_load(&e->cache_hits);
    out->cache_misses = atomic_load(&e->cache_misses);
    sg_ctxpool_stats_get(e->contexts, &cs);
    out->contexts_created = cs.created + atomic_load(&e->call_created);
    out->contexts_reused = cs.reused + atomic_load(&e->call_reused);
    out->contexts_idle = cs.idle;
}

/* ---- the cache ----------------------------------------------------------------------- */

/* The key of a job on trace `t`: the kind, every option that shapes the result, the trace's
 * name and its content (the deterministic JSON form). False when `t` cannot be written. */
static bool cache_key(unsigned char key[SG_SHA256_LEN], sg_report_kind kind, const sg_check_options *o,
                      const sg_trace *t)
{
    sg_sha256 c;
    char *js = NULL;
    unsigned char flags[6];
    uint64_t nums[3];
    const char *name = sg_trace_name(t);

    if (sg_trace_to_json(&js, t, NULL) != 0)
        return false;
    nums[0] = o->timeout_ms;
    nums[1] = o->query_timeout_ms;
    nums[2] = o->query_rlimit;
    flags[0] = (unsigned char)kind;
    flags[1] = o->infer;
    flags[2] = o->minimize_cores;
    flags[3] = o->fixes;
    flags[4] = o->torch_fixes;
    flags[5] = o->torch_message;
    sg__sha256_init(&c);
    sg__sha256_update(&c, flags, sizeof flags);
    sg__sha256_update(&c, nums, sizeof nums);
    sg__sha256_update(&c, name ? name : "", strlen(name ? name : "") + 1);
    sg__sha256_update(&c, js, strlen(js));
    sg__sha256_final(&c, key);
    sg_free(js);
    return true;
}

/* A report held for `key` (a new reference), or NULL. */
static sg_report *cache_get(sg_engine *e, const unsigned char key[SG_SHA256_LEN])
{
    sg_report *r = NULL;
    size_t i;
    pthread_mutex_lock(&e->cache_lock);
    for (i = 0; i < e->opts.cache_entries; i++)
        if (e->cache[i].report && memcmp(e->cache[i].key, key, SG_SHA256_LEN) == 0) {
            e->cache[i].used = ++e->clock;
            r = sg_report__ref(e->cache[i].report);
            break;
        }
    pthread_mutex_unlock(&e->cache_lock);
    return r;
}

/* Whether nothing in `r` is unknown (so that another run would say the same). */
static bool decided(const sg_report *r)
{
    size_t i;
    if (r->verdict == SG_VERDICT_UNKNOWN)
        return false;
    for (i = 0; i < r->ndims; i++)
        if (r->dims[i].status == SG_DIM_UNKNOWN)
            return false;
    if (r->fixes && r->fixes->recheck == SG_VERDICT_UNKNOWN && !r->fixes->verified)
        return false;
    return !r->torch || r->torch->verdict != SG_VERDICT_UNKNOWN;
}

/* Keep `r` for `key` (a reference of the cache's own), evicting the least recently used. */
static void cache_put(sg_engine *e, const unsigned char key[SG_SHA256_LEN], sg_report *r)
{
    size_t i, victim = 0;
    pthread_mutex_lock(&e->cache_lock);
    for (i = 0; i < e->opts.cache_entries; i++) {
        if (!e->cache[i].report) {
            victim = i;
            break;
        }
        if (e->cache[i].used < e->cache[victim].used)
            victim = i;
    }
    sg_report_free(e->cache[victim].report);
    memcpy(e->cache[victim].key, key, SG_SHA256_LEN);
    e->cache[victim].report = sg_report__ref(r);
    e->cache[victim].used = ++e->clock;
    pthread_mutex_unlock(&e->cache_lock);
}

/* ---- jobs ---------------------------------------------------------------------------- */

/*
 * The runtime of one call: the engine's warm contexts when it keeps them, else a pool of the
 * call's own (its contexts made new and reused only by the call's analyses, in their fixed
 * order: the same call then gives the same answers whatever ran before).
 */
#define CALL_CONTEXTS 4

static int call_begin(sg_engine *e, sg_runtime *rt, sg_error *err)
{
    rt->counters = &e->counters;
    rt->contexts = e->contexts;
    return e->contexts ? 0 : sg_ctxpool_new(&rt->contexts, CALL_CONTEXTS, err);
}

static void call_end(sg_engine *e, sg_runtime *rt)
{
    sg_ctxpool_stats cs;
    if (!rt->contexts || rt->contexts == e->contexts)
        return;
    sg_ctxpool_stats_get(rt->contexts, &cs);
    atomic_fetch_add(&e->call_created, cs.created);
    atomic_fetch_add(&e->call_reused, cs.reused);
    sg_ctxpool_free(rt->contexts);
    rt->contexts = NULL;
}

/* The verified fix lines of `f` (borrowed strings in a new array), for torch's text. */
static int verified_lines(const sg_fixes *f, const char ***lines, size_t *n, sg_error *err)
{
    size_t i;
    *lines = NULL;
    *n = 0;
    if (!f || !f->verified || !f->nfixes)
        return 0;
    if (!(*lines = sg__calloc(f->nfixes, sizeof **lines)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    for (i = 0; i < f->nfixes; i++)
        (*lines)[i] = f->fixes[i].line;
    *n = f->nfixes;
    return 0;
}

/* The parts a check or spec report gets after its analysis: torch's text, torch's lines. */
static int attach_torch(sg_report *r, const sg_trace *t, const sg_check_options *o, const sg_runtime *rt,
                        sg_error *err)
{
    const char **lines = NULL;
    size_t n = 0;
    int rc = 0;

    if (o->torch_message) {
        if ((rc = verified_lines(r->fixes, &lines, &n, err)) != 0)
            return rc;
        rc = sg_torch_message(&r->torch_message, t, lines, n, err);
        sg_free((void *)lines);
        if (rc)
            return rc;
    }
    /* torch's lines next to ours: only where there are ours (fixes after a refutation, a spec) */
    if (o->torch_fixes && (r->fixes || r->kind == SG_REPORT_SPEC) && (rc = sg_torch_recheck_rt(&r->torch, t, o, rt, r->fixes ? r->fixes->checked : NULL, err)) != 0)
        return rc;
    return 0;
}

/*
 * One total budget for the whole job (issue 14): the check, the fixes and the re-check of
 * torch's lines each get what is left of the caller's timeout_ms, so the job ends within it
 * (plus the last query's granularity). Returns false when nothing is left: the step is not
 * started (its derivation and problem building alone outlast a spent budget on a large trace).
 * 0 (no budget) stays 0.
 */
static bool budget_rest(sg_check_options *o, unsigned total_ms, double start)
{
    double left;
    if (total_ms == 0)
        return true;
    left = total_ms - (sg_problem_now() - start) * 1000.0;
    o->timeout_ms = left < 1 ? 1u : (unsigned)left;
    return left >= 1;
}

/* One check or spec job on `t`. */
static int run_trace_job(sg_engine *e, sg_report_kind kind, const sg_trace *t, const sg_check_options *in,
                         sg_report **out, sg_error *err)
{
    sg_runtime rt = {NULL, NULL};
    sg_check_options o;
    sg_report *r = NULL;
    sg_fixes *f = NULL;
    unsigned char key[SG_SHA256_LEN];
    bool keyed = false;
    double start = sg_problem_now();
    unsigned total_ms;
    int rc;

    SG_ENTRY_CHECK("sg_engine", out, e && t, "sg_engine: no engine or no trace", err);
    atomic_fetch_add(&e->requests, 1);
    if ((rc = sg_check__options(&o, in, err)) != 0)
        goto fail;
    if (e->cache && (keyed = cache_key(key, kind, &o, t))) {
        if ((r = cache_get(e, key)) != NULL) {
            atomic_fetch_add(&e->cache_hits, 1);
            *out = r;
            return 0;
        }
        atomic_fetch_add(&e->cache_misses, 1);
    }
    if ((rc = call_begin(e, &rt, err)) != 0)
        goto fail;
    total_ms = o.timeout_ms;
    if (kind == SG_REPORT_CHECK) {
        if ((rc = sg_check_rt(&r, t, &o, &rt, err)) != 0)
            goto fail;
        /* a refuted or invalid spec (torch's own refusal of a valid one included: check.c); or torch
         * crashing before it traced anything, which a spec may avoid */
        if (o.fixes && (r->verdict == SG_VERDICT_VIOLATIONS || r->verdict == SG_VERDICT_INVALID_SPEC ||
                        (r->verdict == SG_VERDICT_TORCH_FAILED && !sg_trace_torch_failed_data_dependent(t) &&
                         sg_trace_guard_count(t) == 0))) {
            rc = budget_rest(&o, total_ms, start) ? sg_fixes_suggest_rt(&r->fixes, t, r, &o, &rt, err)
                                                  : sg_fixes__budget_spent(&r->fixes, err);
            if (rc != 0)
                goto fail;
        }
    } else {
        if ((rc = sg_spec_generate_rt(&f, t, &o, &rt, err)) != 0 || (rc = sg_report__new(&r, kind, t, false, err)) != 0)
            goto fail;
        r->fixes = f;
        f = NULL;
        r->verdict = r->fixes->recheck;
    }
    if (!budget_rest(&o, total_ms, start))
        o.torch_fixes = false; /* torch's lines are not re-checked: no budget left */
    if ((rc = attach_torch(r, t, &o, &rt, err)) != 0)
        goto fail;
    sg_fixes__release_checked(r->fixes);
    if (sg_cancel_requested(o.cancel))
        atomic_fetch_add(&e->canceled, 1);
    else if (keyed && decided(r))
        cache_put(e, key, r);
    call_end(e, &rt);
    *out = r;
    return 0;
fail:
    call_end(e, &rt);
    atomic_fetch_add(&e->errors, 1);
    sg_fixes_free(f);
    sg_report_free(r);
    return rc;
}

int sg_engine_check(sg_engine *e, const sg_trace *t, const sg_check_options *opts, sg_report **out, sg_error *err)
{
    return run_trace_job(e, SG_REPORT_CHECK, t, opts, out, err);
}

int sg_engine_spec(sg_engine *e, const sg_trace *t, const sg_check_options *opts, sg_report **out, sg_error *err)
{
    return run_trace_job(e, SG_REPORT_SPEC, t, opts, out, err);
}

/* How many recovered asserts of `g` mention an unbacked (data-dependent) symbol of `t`. */
static int data_dependent(const sg_graph *g, const sg_trace *t, size_t *out, sg_error *err)
{
    size_t i, k, ns;
    const sg_expr **syms = NULL;
    int rc;

    *out = 0;
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(g, i);
        bool dd = false;
        if (!a->expr)
            continue;
        if ((rc = sg_expr_symbols(&syms, &ns, sg_graph_pool(g), a->expr, err)) != 0)
            return rc;
        for (k = 0; k < ns; k++) {
            const char *name = sg_expr_symbol_name(syms[k]);
            const sg_expr *s2 = sg_pool_find_symbol(sg_trace_pool(t), name, strlen(name));
            const sg_symbol_info *si = s2 ? sg_trace_symbol_info(t, s2) : NULL;
            dd |= si && si->unbacked;
        }
        sg_free((void *)syms);
        syms = NULL;
        *out += dd;
    }
    return 0;
}

/*
 * Some guards_code entry could not be read: the loaded module checks it on every call, so no
 * dim the check proved is proved (it may be the one the entry rejects); they become unknown,
 * naming the first such entry, and so does an ok verdict. Refutations stand: they hold
 * whatever the unread entry says.
 */
static void unread_guards(sg_report *r, const sg_graph *g)
{
    size_t i, first = 0;

    while (sg_graph_guard_at(g, first)->expr)
        first++;
    for (i = 0; i < r->ndims; i++)
        if (r->dims[i].status == SG_DIM_PROVED) {
            r->dims[i].status = SG_DIM_UNKNOWN;
            snprintf(r->dims[i].reason, sizeof r->dims[i].reason, "guards_code[%zu] not read", first);
        }
    if (r->verdict == SG_VERDICT_OK)
        r->verdict = SG_VERDICT_UNKNOWN;
}

/* ---- Example points for a program's trace: graph/ asks, the solver answers ------------------- */

/* The solver's point search for graph/verify.c (verify.h); `ctx` is the context pool, or NULL. */
static int solver_points(void *ctx, sg_int *vals, const sg_graph_point_query *gq, sg_error *err)
{
    size_t ns = sg_pool_nsymbols(gq->pool), i;
    sg_point_bound *hard = NULL, *ranges = NULL;
    sg_point_query q;
    int rc;

    if ((gq->hard && !(hard = sg__calloc(ns + 1, sizeof *hard))) ||
        (gq->ranges && !(ranges = sg__calloc(ns + 1, sizeof *ranges)))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (i = 0; i < ns; i++) {
        if (hard) {
            hard[i].has_lo = gq->hard[i].has_lo;
            hard[i].has_hi = gq->hard[i].has_hi;
            hard[i].lo = gq->hard[i].lo;
            hard[i].hi = gq->hard[i].hi;
        }
        if (ranges) {
            ranges[i].has_lo = gq->ranges[i].has_lo;
            ranges[i].has_hi = gq->ranges[i].has_hi;
            ranges[i].lo = gq->ranges[i].lo;
            ranges[i].hi = gq->ranges[i].hi;
        }
    }
    memset(&q, 0, sizeof q);
    q.pool = gq->pool;
    q.active = gq->active;
    q.hard = hard;
    q.ranges = ranges;
    q.guards = gq->guards;
    q.nguards = gq->nguards;
    q.floor = gq->floor;
    q.rlimit = gq->rlimit;
    q.contexts = ctx;
    rc = sg_point_find(vals, &q, err);
cleanup:
    sg_free(hard);
    sg_free(ranges);
    return rc;
}

/* A private context per search, as the point search always had (a warm context from the engine's
 * pool could lead Z3 to another, equally valid, first point: the examples would change). */
static const sg_graph_points solver_finder = {solver_points, NULL};

int sg_graph_to_trace(sg_trace **out, const sg_graph *g, sg_error *err)
{
    return sg_graph__to_trace(out, g, &solver_finder, err);
}

int sg_graph_to_trace_spec(sg_trace **out, const sg_graph *g, const char *spec, size_t len, const char *what,
                           sg_error *err)
{
    return sg_graph__to_trace_spec(out, g, spec, len, what, &solver_finder, err);
}

int sg_engine_verify(sg_engine *e, const sg_verify_input *in, const sg_check_options *opts, sg_report **out,
                     sg_error *err)
{
    sg_runtime rt = {NULL, NULL};
    sg_check_options o;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_verify_info *v = NULL;
    size_t i;
    int rc;

    SG_ENTRY_CHECK("sg_engine_verify", out, e && in && in->graph, "sg_engine_verify: no engine or no program",
                   err);
    atomic_fetch_add(&e->requests, 1);
    if (in->version != SG_VERIFY_INPUT_VERSION) {
        rc = sg_error_set(err, SG_EINVALID, "sg_verify_input version %u is not supported (this library reads %d)",
                          in->version, SG_VERIFY_INPUT_VERSION);
        goto fail;
    }
    if ((rc = sg_check__options(&o, opts, err)) != 0 || (rc = call_begin(e, &rt, err)) != 0)
        goto fail;
    rc = in->spec ? sg_graph_to_trace_spec(&t, in->graph, in->spec, in->spec_len, in->spec_name, err)
                  : sg_graph_to_trace(&t, in->graph, err);
    if (rc)
        goto fail;
    if ((rc = sg_check_rt(&r, t, &o, &rt, err)) != 0)
        goto fail;
    if (!(v = sg__calloc(1, sizeof *v)) || (in->name && !(v->name = sg__strndup(in->name, strlen(in->name))))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory");
        goto fail;
    }
    r->kind = SG_REPORT_VERIFY;
    r->verify = v;
    sg_solver_version(r->solver_version, sizeof r->solver_version); /* (loads libz3: solver/z3fns.h) */
    v->against_spec = in->spec != NULL;
    v->asserts = sg_graph_assert_count(in->graph);
    for (i = 0; i < v->asserts; i++)
        v->checked += sg_graph_assert_at(in->graph, i)->expr != NULL;
    v->has_guards_code = sg_graph_has_guards_code(in->graph);
    v->guards = sg_graph_guard_count(in->graph);
    for (i = 0; i < v->guards; i++)
        v->guards_read += sg_graph_guard_at(in->graph, i)->expr != NULL;
    {
        /* the trace's shape guards are guards_code's read entries, then the kernels' over input sizes */
        size_t ng = 0, k, shape = 0;
        const sg_guard *gs = sg_trace_guards(t, &ng);
        for (k = 0; k < ng; k++)
            shape += gs[k].origin == SG_GUARD_SHAPE;
        v->kernels = shape - v->guards_read;
    }
    v->kernels_all = sg_graph_kernel_check_count(in->graph);
    if (v->guards_read < v->guards)
        unread_guards(r, in->graph);
    v = NULL;
    if ((rc = data_dependent(in->graph, t, &r->verify->data_dependent, err)) != 0)
        goto fail;
    if (sg_cancel_requested(o.cancel))
        atomic_fetch_add(&e->canceled, 1);
    call_end(e, &rt);
    sg_trace_free(t);
    *out = r;
    return 0;
fail:
    call_end(e, &rt);
    atomic_fetch_add(&e->errors, 1);
    if (v)
        sg_free(v->name);
    sg_free(v);
    sg_report_free(r);
    sg_trace_free(t);
    return rc;
}

int sg_engine_gate(sg_engine *e, const sg_graph *old_prog, const sg_graph *new_prog, const char *old_name,
                   const char *new_name, const char *policy, const sg_check_options *opts, sg_gate **out,
                   sg_error *err)
{
    sg_gate_input in = SG_GATE_INPUT_INIT;

    SG_ENTRY_CHECK("sg_engine_gate", out, e && old_prog && new_prog, "sg_engine_gate: no engine or no program",
                   err);
    in.old_graph = old_prog;
    in.new_graph = new_prog;
    in.old_name = old_name;
    in.new_name = new_name;
    in.policy = policy;
    return sg_engine_gate_run(e, &in, opts, out, err);
}

int sg_engine_gate_run(sg_engine *e, const sg_gate_input *in, const sg_check_options *opts, sg_gate **out,
                       sg_error *err)
{
    sg_runtime rt = {NULL, NULL};
    sg_check_options o;
    int rc;

    SG_ENTRY_CHECK("sg_engine_gate_run", out, e && in, "sg_engine_gate_run: no engine or no input", err);
    if (in->version != SG_GATE_INPUT_VERSION)
        return sg_error_set(err, SG_EINVALID, "sg_engine_gate_run: input version %u unknown (this library: %u)",
                            in->version, SG_GATE_INPUT_VERSION);
    atomic_fetch_add(&e->requests, 1);
    if ((rc = sg_check__options(&o, opts, err)) == 0 && (rc = call_begin(e, &rt, err)) == 0) {
        rc = sg_gate_run(out, in, &o, &rt, err);
        call_end(e, &rt);
    }
    if (rc)
        atomic_fetch_add(&e->errors, 1);
    return rc;
}
