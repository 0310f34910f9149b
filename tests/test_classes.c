/*
 * test_classes.c - isomorphic components (analysis/check_classes.c, analysis/infer_fast.c): a
 * component decided by replaying the decision of an earlier one with the same signature, in phase 2
 * and in inference's enumeration, gives the report deciding it itself gives (the JSON report, with
 * inference).
 *
 * Traces: lists of items made from one random template (one to three dims, random guards over
 * them) with the items' example sizes, spec bounds and Dim names mostly the template's and
 * sometimes not (so some items share a class and some do not), Dim names shared inside an item or
 * across items, derived dims, and the corpus. Each is checked with the classes on and off
 * (sg_check__set_classes); the replays are counted, so the comparison is known to cover them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/check_impl.h"
#include "corpus_walk.h"
#include "oracle_model.h"
#include "report/report.h"
#include "test.h"
#include "witness.h"

static sg_check_options options(void)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    o.timeout_ms = 0;
    o.query_timeout_ms = 0;
    o.query_rlimit = 20000000;
    o.infer = true;
    return o;
}

/* The report of `t` with the classes on or off and its JSON without the "seconds" figure; false
 * when the check failed (then *why says why). */
static bool run(const sg_trace *t, bool classes, sg_report **r, char **js, char *why, size_t cap)
{
    sg_check_options o = options();
    sg_error err = SG_ERROR_INIT;
    char *s;
    *r = NULL;
    *js = NULL;
    sg_check__set_classes(classes);
    if (sg_check(r, t, &o, &err) != 0 || sg_report_to_json(js, *r, 0, &err) != 0) {
        snprintf(why, cap, "%s", err.msg);
        sg_check__set_classes(true);
        return false;
    }
    sg_check__set_classes(true);
    for (s = strstr(*js, "\"seconds\":"); s; s = strstr(s + 1, "\"seconds\":")) { /* drop the figure */
        char *e = s + 10;
        while (*e && *e != ',' && *e != '}')
            e++;
        memmove(s + 10, e, strlen(e) + 1);
    }
    return true;
}

/*
 * Whether `t`'s reports with the classes on and off agree; counts the replays, and in *z3 the
 * traces where they differ only as Z3 may. Byte for byte when Z3 was asked nothing. When it was,
 * the replays made fewer terms before Z3's later questions, so Z3 saw other ids: it may choose
 * another model or core, or give up (rlimit) where it decided - the same as any other history of
 * its context. Then the verdicts agree unless one side has an unknown, every dim's status agrees
 * unless one is unknown, and every counterexample of the classes' report fails the trace.
 */
static bool same_both_ways(const sg_trace *t, const char *label, size_t *replays, size_t *z3)
{
    char why[256] = "", *on = NULL, *off = NULL;
    sg_report *ron = NULL, *roff = NULL;
    bool same, ok;
    size_t i;
    (void)sg_check__classes_replays();
    ok = run(t, true, &ron, &on, why, sizeof why);
    *replays += sg_check__classes_replays();
    ok = ok && run(t, false, &roff, &off, why, sizeof why);
    CHECK_MSG(ok, "%s: %s", label, why);
    same = ok && strcmp(on, off) == 0;
    if (ok && !same && ron->stats.queries > 0 && roff->stats.queries > 0) {
        bool unknown = false;
        same = ron->ndims == roff->ndims;
        for (i = 0; same && i < ron->ndims; i++) {
            bool u = ron->dims[i].status == SG_DIM_UNKNOWN || roff->dims[i].status == SG_DIM_UNKNOWN;
            unknown |= u;
            same = u || ron->dims[i].status == roff->dims[i].status;
        }
        same = same && (unknown || ron->verdict == roff->verdict);
        for (i = 0; same && i < ron->nviolations; i++)
            if (ron->violations[i].has_counterexample)
                same = witness_fails(t, ron->violations[i].counterexample);
        *z3 += same;
    }
    if (ok && !same) {
        size_t k = 0;
        while (on[k] && on[k] == off[k])
            k++;
        fprintf(stderr, "%s: the reports differ at byte %zu:\n  on:  %.160s\n  off: %.160s\n", label, k,
                on + (k > 40 ? k - 40 : 0), off + (k > 40 ? k - 40 : 0));
    }
    sg_free(on);
    sg_free(off);
    sg_report_free(ron);
    sg_report_free(roff);
    return same;
}

/* ---- Lists of items from one template ----------------------------------------------------------- */

static unsigned long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ul + 1442695040888963407ul;
    return n ? (unsigned)((rng_state >> 33) % n) : 0;
}

#define MAXD 3
#define MAXG 6

/* A template: its dims' traced ranges, example sizes, spec kinds and bounds, and guards (texts with
 * %0, %1, %2 standing for its dims' symbols). */
typedef struct tmpl {
    unsigned nd, ng;
    unsigned hi[MAXD], size[MAXD], kind[MAXD], lo[MAXD], max[MAXD], name[MAXD];
    char guard[MAXG][96];
} tmpl;

static void random_guard(char *out, size_t cap, unsigned n)
{
    unsigned i = rnd(n), j = rnd(n), c = 1 + rnd(12);
    switch (rnd(11)) {
    case 0: snprintf(out, cap, "Eq(%%%u, %%%u)", i, j); break;
    case 1: snprintf(out, cap, "Eq(%%%u, %%%u + %u)", i, j, c); break;
    case 2: snprintf(out, cap, "%%%u >= %u", i, c); break;
    case 3: snprintf(out, cap, "%%%u <= %u", i, 4 + c * 2); break;
    case 4: snprintf(out, cap, "Ne(%%%u, %u)", i, c); break;
    case 5: snprintf(out, cap, "Eq(Mod(%%%u, %u), 0)", i, 1 + rnd(4)); break;
    case 6: snprintf(out, cap, "%%%u + %%%u <= %u", i, j, 10 + 2 * c); break;
    case 7: snprintf(out, cap, "8*((%%%u//8)) >= 2", i); break;
    case 8: snprintf(out, cap, "Or(Eq(%%%u, %u), %%%u >= %u)", i, c, i, c + 2); break;
    case 9: snprintf(out, cap, "Ne((%%%u//2), 1)", i); break;
    default: snprintf(out, cap, "%%%u*%%%u >= %u", i, j, c * 3); break;
    }
}

static void random_tmpl(tmpl *t)
{
    unsigned j;
    t->nd = 1 + rnd(MAXD);
    t->ng = 1 + rnd(MAXG);
    for (j = 0; j < t->nd; j++) {
        t->hi[j] = 8 + rnd(24);
        t->size[j] = 2 + rnd(t->hi[j] - 1);
        t->kind[j] = rnd(10); /* 0 static, 1 auto, else a Dim */
        t->lo[j] = 2 + rnd(3);
        t->max[j] = 8 + rnd(30);
        t->name[j] = rnd(t->nd); /* shared inside the item when two dims draw the same */
    }
    for (j = 0; j < t->ng; j++)
        random_guard(t->guard[j], sizeof t->guard[j], t->nd);
}

/* Guard text g with %j replaced by symbol s<base + j>. */
static void put_guard(sbuf *b, const char *g, unsigned base)
{
    for (; *g; g++)
        if (*g == '%' && g[1] >= '0' && g[1] <= '9')
            sb_printf(b, "s%u", base + (unsigned)(*++g - '0'));
        else
            sb_printf(b, "%c", *g);
}

/* A trace of k items of template t; `vary` in 0..100: the chance in percent that an item's size,
 * bound or Dim name differs from the template's; `cross`: some Dim names shared across items. */
static void item_trace(sbuf *b, const tmpl *t, unsigned k, unsigned vary, bool cross)
{
    unsigned it, j, first = 1, size[64][MAXD];
    sb_printf(b, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"2.14.1\", \"strict\": false, "
                 "\"shape_env\": true, \"symbols\": [");
    for (it = 0; it < k; it++)
        for (j = 0; j < t->nd; j++) {
            unsigned hi = t->hi[j];
            size[it][j] = rnd(100) < vary ? 2 + rnd(hi - 1) : t->size[j];
            sb_printf(b, "%s{\"name\": \"s%u\", \"range\": [2, %u], \"hint\": %u, \"unbacked\": false, "
                         "\"size_like\": false, \"replacement\": null, \"sources\": [\"L['xs'][%u].size()[0]\"]}",
                      first ? "" : ", ", it * t->nd + j, hi, size[it][j], it * t->nd + j);
            first = 0;
        }
    sb_printf(b, "], \"guards\": [");
    first = 1;
    for (it = 0; it < k; it++)
        for (j = 0; j < t->ng; j++) {
            sb_printf(b, "%s{\"origin\": \"shape\", \"expr\": \"", first ? "" : ", ");
            put_guard(b, t->guard[j], it * t->nd);
            sb_printf(b, "\", \"user_loc\": \"m.py:%u in forward\"}", j + 1);
            first = 0;
        }
    sb_printf(b, "], \"inputs\": [");
    first = 1;
    for (it = 0; it < k; it++)
        for (j = 0; j < t->nd; j++) {
            unsigned x = it * t->nd + j, max = rnd(100) < vary ? 8 + rnd(30) : t->max[j];
            unsigned owner = cross && rnd(4) == 0 && it > 0 ? it - 1 : it; /* a name of the item before */
            sb_printf(b, "%s{\"path\": \"['xs'][%u]\", \"dim\": 0, \"size\": %u, \"source\": \"L['xs'][%u].size()[0]\", "
                         "\"traced_source\": \"L['xs'][%u].size()[0]\", \"value\": \"s%u\", \"spec\": ",
                      first ? "" : ", ", x, size[it][j], x, x, x);
            first = 0;
            if (t->kind[j] == 0)
                sb_printf(b, "{\"kind\": \"static\"}}");
            else if (t->kind[j] == 1)
                sb_printf(b, "{\"kind\": \"auto\"}}");
            else
                sb_printf(b, "{\"kind\": \"dim\", \"name\": \"d%u_%u\", \"min\": %u, \"max\": %u}}", owner,
                          rnd(100) < vary ? rnd(t->nd) : t->name[j], t->lo[j], max);
        }
    sb_printf(b, "], \"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": null}}");
}

static void test_random_items(void)
{
    const char *seed = getenv("SG_CLASSES_SEED"), *count = getenv("SG_CLASSES_TRACES");
    unsigned n = count ? (unsigned)atoi(count) : 300, i, differ = 0;
    size_t replays = 0, z3 = 0;
    rng_state = seed ? strtoul(seed, NULL, 0) : 1;
    for (i = 0; i < n; i++) {
        tmpl t;
        sbuf b = {0};
        sg_trace *tr = NULL;
        sg_error err = SG_ERROR_INIT;
        char label[64];
        unsigned k = 2 + rnd(30), vary = rnd(3) == 0 ? 0 : rnd(40);
        random_tmpl(&t);
        item_trace(&b, &t, k, vary, rnd(5) == 0);
        snprintf(label, sizeof label, "items %u (%u items, vary %u)", i, k, vary);
        if (sg_trace_load_json(&tr, sb_str(&b), strlen(sb_str(&b)), &err) != 0) {
            CHECK_MSG(0, "%s: %s", label, err.msg);
        } else if (!same_both_ways(tr, label, &replays, &z3)) {
            differ++;
            if (differ == 1)
                fprintf(stderr, "%s: %s\n", label, sb_str(&b));
        }
        sg_trace_free(tr);
        sb_free(&b);
    }
    printf("random items: %u traces, %zu components replayed, %zu differ as Z3 may, %u differ\n", n, replays, z3,
           differ);
    CHECK(replays > (size_t)n); /* the comparison covers replays */
    CHECK_MSG(differ == 0, "%u traces differ", differ);
}

/* A list of 200 view(-1, 8) items of one example size: one decision and 199 replays in phase 2
 * and in inference, the texts of every item its own. */
static void test_list_of_views(void)
{
    sbuf b = {0};
    sg_trace *t = NULL;
    sg_error err = SG_ERROR_INIT;
    size_t replays = 0, z3 = 0;
    unsigned i;
    sb_printf(&b, "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"2.14.1\", \"strict\": false, "
                  "\"shape_env\": true, \"symbols\": [");
    for (i = 0; i < 200; i++)
        sb_printf(&b, "%s{\"name\": \"s%u\", \"range\": [2, 2000], \"hint\": 16, \"unbacked\": false, "
                      "\"size_like\": false, \"replacement\": null, \"sources\": [\"L['xs'][%u].size()[0]\"]}",
                  i ? ", " : "", i, i);
    sb_printf(&b, "], \"guards\": [");
    for (i = 0; i < 200; i++)
        sb_printf(&b, "%s{\"origin\": \"shape\", \"expr\": \"s%u <= 2000\"}, {\"origin\": \"shape\", \"expr\": "
                      "\"Eq(Mod(s%u, 8), 0)\"}, {\"origin\": \"shape\", \"expr\": \"Ne((s%u//8), 1)\"}",
                  i ? ", " : "", i, i, i);
    sb_printf(&b, "], \"inputs\": [");
    for (i = 0; i < 200; i++)
        sb_printf(&b, "%s{\"path\": \"['xs'][%u]\", \"dim\": 0, \"size\": 16, \"source\": \"L['xs'][%u].size()[0]\", "
                      "\"traced_source\": \"L['xs'][%u].size()[0]\", \"value\": \"s%u\", \"spec\": {\"kind\": \"dim\", "
                      "\"name\": \"d%u\", \"min\": 2, \"max\": 4096}}",
                  i ? ", " : "", i, i, i, i, i);
    sb_printf(&b, "], \"spec\": {\"flat\": true, \"dynamic_shapes\": null, \"inputs\": null}}");
    CHECK_MSG(sg_trace_load_json(&t, sb_str(&b), strlen(sb_str(&b)), &err) == 0, "%s", err.msg);
    if (t) {
        CHECK(same_both_ways(t, "list of views", &replays, &z3));
        CHECK_EQ_INT((long)replays, 2 * 199); /* phase 2 and inference's enumeration */
        CHECK_EQ_INT((long)z3, 0); /* byte for byte */
    }
    sg_trace_free(t);
    sb_free(&b);
}

typedef struct corpus_tally {
    size_t replays, z3;
    int differ;
} corpus_tally;

static void on_off_case(const char *label, const sg_trace *t, void *ctx)
{
    corpus_tally *c = ctx;
    c->differ += !same_both_ways(t, label, &c->replays, &c->z3);
}

static void test_corpus(void)
{
    corpus_tally c = {0, 0, 0};
    int ncases = corpus_each_trace(SG_CORPUS, on_off_case, &c);
    printf("corpus: %d cases with the classes on and off, %zu components replayed, %zu differ as Z3 may, %d differ\n",
           ncases, c.replays, c.z3, c.differ);
    CHECK(ncases >= 80);
    CHECK_MSG(c.differ == 0, "%d corpus cases differ", c.differ);
}

int main(void)
{
    RUN(test_list_of_views);
    RUN(test_random_items);
    RUN(test_corpus);
    return test_summary();
}
