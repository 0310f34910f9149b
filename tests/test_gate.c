/*
 * test_gate.c - the release gate (sg_engine_gate) on the 30 real-torch pairs of
 * tests/data/gate/ (tools/make_gate_pairs.py) against what real torch did with both archives
 * (truth.json, tools/gate_truth.py: both modules run on a grid of shapes around every bound):
 * - the outcome: "regression" (OLD accepts a shape NEW rejects), "widening" (the converse, and
 *   it passes), "equal", "signature" (a changed signature is a regression), and the pairs that
 *   are both (truth's `also`);
 * - every witness torch ran (it is one of the grid's shapes) did what the gate says: a
 *   regression witness runs in OLD and raises in NEW, a widening witness the other way;
 * - a witness covers every tensor input of the accepting version, in signature order, and
 *   a regression names the NEW condition that rejects it.
 * The same for the pairs' v1 traces (captured in real torch, tools/make_gate_pairs.py traces):
 * trace against trace, archive against trace, trace against archive.
 * Decided by Z3's resource limit only. One test case per pair.
 */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/gate.h"
#include "analysis/gate_policy.h"
#include "shapegate/archive.h"
#include "shapegate/engine.h"
#include "shapegate/graph.h"
#include "shapegate/trace.h"
#include "test.h"
#include "util/json.h"

static int n_right, n_witness_run, n_witness_not_run;

/* "[[a,b],[c]]" of a truth row's shapes, or of a witness in the same input order. */
static void row_key(char *buf, size_t cap, const cJSON *shapes)
{
    const cJSON *s, *v;
    size_t n = 0;

    n += (size_t)snprintf(buf + n, cap - n, "[");
    cJSON_ArrayForEach(s, shapes) {
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s[", s == shapes->child ? "" : ",");
        cJSON_ArrayForEach(v, s) {
            sg_int x = 0;
            sg__json_int(v, &x);
            n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%lld", v == s->child ? "" : ",", (long long)x);
        }
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]");
    }
    snprintf(buf + n, n < cap ? cap - n : 0, "]");
}

/* The witness's key in the order of truth's `paths` (NULL when a path is missing). */
static bool witness_key(char *buf, size_t cap, const sg_gate_finding *f, const cJSON *paths)
{
    const cJSON *p;
    size_t n = 0, i, d;

    n += (size_t)snprintf(buf + n, cap - n, "[");
    cJSON_ArrayForEach(p, paths) {
        const char *path = sg__json_str(p);
        for (i = 0; i < f->nwitness && strcmp(f->witness[i].path, path ? path : ""); i++)
            ;
        if (i == f->nwitness)
            return false;
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s[", p == paths->child ? "" : ",");
        for (d = 0; d < f->witness[i].ndim; d++)
            n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%lld", d ? "," : "",
                                  (long long)f->witness[i].sizes[d]);
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]");
    }
    snprintf(buf + n, n < cap ? cap - n : 0, "]");
    return n < cap;
}

/* What torch did with the witness (the row), or NULL when it did not run it. */
static const cJSON *truth_row(const cJSON *truth, const char *key)
{
    static char k2[8192];
    const cJSON *r;

    cJSON_ArrayForEach(r, sg__json_get(truth, "rows")) {
        row_key(k2, sizeof k2, sg__json_get(r, "shapes"));
        if (strcmp(k2, key) == 0)
            return r;
    }
    return NULL;
}

/* A witness covers every user tensor input of `g`, in signature order. */
static bool covers(const sg_gate_finding *f, const sg_graph *g)
{
    size_t i, k = 0;

    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER || !in->tensor)
            continue;
        if (k >= f->nwitness || strcmp(f->witness[k].path, in->path) || f->witness[k].ndim != in->tensor->ndim)
            return false;
        k++;
    }
    return k == f->nwitness;
}

/* Hold one witness against torch's runs: `acc` must run it, the other raise. */
static void check_witness(const char *pair, const char *what, const sg_gate_finding *f, const cJSON *truth,
                          const char *acc, const char *rej)
{
    char key[8192];
    const cJSON *row;

    if (!witness_key(key, sizeof key, f, sg__json_get(truth, "paths"))) {
        n_witness_not_run++; /* a signature change: truth's rows are OLD's inputs */
        return;
    }
    if (!(row = truth_row(truth, key))) {
        n_witness_not_run++;
        return;
    }
    n_witness_run++;
    CHECK_MSG(strcmp(sg__json_str(sg__json_get(row, acc)) ? sg__json_str(sg__json_get(row, acc)) : "", "ok") == 0,
              "%s: %s witness %s: %s did not run it in torch", pair, what, key, acc);
    CHECK_MSG(strcmp(sg__json_str(sg__json_get(row, rej)) ? sg__json_str(sg__json_get(row, rej)) : "ok", "ok") != 0,
              "%s: %s witness %s: %s ran it in torch", pair, what, key, rej);
}

static int n_modes;

/* Load a v1 trace `path` into `*t` when the file exists (else leave it NULL). */
static int load_trace_if_any(sg_trace **t, const char *path, sg_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fclose(f);
    return sg_trace_load(t, path, err);
}

static void check_pair(sg_engine *eng, const char *pair)
{
    char dir[4096], po[4200], pn[4200], pt[4200], tro[4200], trn[4200];
    sg_trace *to = NULL, *tn = NULL;
    int mode;
    sg_error err = SG_ERROR_INIT;
    sg_archive *ao = NULL, *an = NULL;
    sg_graph *go = NULL, *gn = NULL;
    sg_gate *gt = NULL;
    cJSON *truth = NULL;
    const cJSON *x;
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    bool want_reg = false, want_wid = false, want_sig = false;
    const char *expected;
    int rc;

    snprintf(dir, sizeof dir, "%s/tests/data/gate/%s", SG_SOURCE_DIR, pair);
    snprintf(po, sizeof po, "%s/old.pt2", dir);
    snprintf(pn, sizeof pn, "%s/new.pt2", dir);
    snprintf(pt, sizeof pt, "%s/truth.json", dir);
    snprintf(tro, sizeof tro, "%s/old.trace.json", dir);
    snprintf(trn, sizeof trn, "%s/new.trace.json", dir);
    o.timeout_ms = o.query_timeout_ms = 0; /* Z3's resource limit only */
    rc = sg__json_load_file(&truth, pt, "truth.json", &err);
    if (rc == 0)
        rc = sg_archive_open(&ao, po, NULL, &err);
    if (rc == 0)
        rc = sg_graph_load(&go, ao, NULL, &err);
    if (rc == 0)
        rc = sg_archive_open(&an, pn, NULL, &err);
    if (rc == 0)
        rc = sg_graph_load(&gn, an, NULL, &err);
    if (rc == 0)
        rc = load_trace_if_any(&to, tro, &err);
    if (rc == 0)
        rc = load_trace_if_any(&tn, trn, &err);
    CHECK_MSG(rc == 0, "%s: %s", pair, err.msg);
    if (rc)
        goto cleanup;
    /* archives (the two-program entry), then with traces: both, and each mix */
    for (mode = 0; mode < 4; mode++) {
    sg_gate_input in = SG_GATE_INPUT_INIT;
    if (mode > 0 && (!to || !tn))
        break;
    in.old_graph = mode == 1 || mode == 3 ? NULL : go;
    in.old_trace = mode == 1 || mode == 3 ? to : NULL;
    in.new_graph = mode == 1 || mode == 2 ? NULL : gn;
    in.new_trace = mode == 1 || mode == 2 ? tn : NULL;
    in.old_name = "old";
    in.new_name = "new";
    sg_gate_free(gt);
    gt = NULL;
    rc = mode == 0 ? sg_engine_gate(eng, go, gn, "old.pt2", "new.pt2", NULL, &o, &gt, &err)
                   : sg_engine_gate_run(eng, &in, &o, &gt, &err);
    CHECK_MSG(rc == 0, "%s mode %d: %s", pair, mode, err.msg);
    if (rc)
        goto cleanup;
    n_modes++;
    expected = sg__json_str(sg__json_get(truth, "expected"));
    want_reg = expected && strcmp(expected, "regression") == 0;
    want_wid = expected && strcmp(expected, "widening") == 0;
    want_sig = expected && strcmp(expected, "signature") == 0;
    cJSON_ArrayForEach(x, sg__json_get(truth, "also")) {
        want_reg |= sg__json_str(x) && strcmp(sg__json_str(x), "regression") == 0;
        want_wid |= sg__json_str(x) && strcmp(sg__json_str(x), "widening") == 0;
    }
    CHECK_MSG(gt->signature_changed == want_sig, "%s: signature changed %d, torch says %d", pair,
              gt->signature_changed, want_sig);
    CHECK_MSG(sg_gate_verdict_of(gt) == (want_reg || want_sig ? SG_GATE_REGRESSION : SG_GATE_PASS),
              "%s: verdict %s, expected %s", pair, sg_gate_verdict_name(sg_gate_verdict_of(gt)), expected);
    CHECK_MSG(gt->regression.found == (want_reg || want_sig), "%s: regression found %d", pair, gt->regression.found);
    if (!want_sig)
        CHECK_MSG(gt->widening.found == want_wid, "%s: widening found %d, expected %d", pair, gt->widening.found,
                  want_wid);
    if (gt->regression.found) {
        CHECK_MSG(covers(&gt->regression, go), "%s: the regression witness does not cover OLD's inputs", pair);
        CHECK_MSG(gt->regression.source != NULL, "%s: no rejecting condition named", pair);
        CHECK_MSG(want_sig || gt->regression.rejected_by != NULL, "%s: no NEW condition rejects the witness", pair);
        check_witness(pair, "regression", &gt->regression, truth, "old", "new");
    }
    if (gt->widening.found) {
        CHECK_MSG(covers(&gt->widening, gn), "%s: the widening witness does not cover NEW's inputs", pair);
        check_witness(pair, "widening", &gt->widening, truth, "new", "old");
    }
    }
    if (!test_cur_failed_)
        n_right++;
cleanup:
    sg_trace_free(to);
    sg_trace_free(tn);
    sg_gate_free(gt);
    sg_graph_free(go);
    sg_graph_free(gn);
    sg_archive_free(ao);
    sg_archive_free(an);
    cJSON_Delete(truth);
}

/* The Python policy reader on every prefix of a valid policy and on byte flips of it: never a crash
 * (ASan build), every failure a one-line "policy: LINE:COL: ..." SG_EINVALID, every success JSON. */
static void check_policy_reader(void)
{
    static const char text[] = "from torch.export import Dim\n# production\nbatch = Dim('batch', min=1, max=64)\n"
                               "seq = Dim('seq', max=None)\ndynamic_shapes = {'inputs': {'a': {0: batch, 1: 2*seq + 1}, "
                               "'b': [(batch, None), {0: batch, 1: Dim.AUTO(min=2, max=8)}]}, 'mask': (batch, 7)}\n";
    char buf[sizeof text];
    size_t n, i;
    unsigned x = 12345;
    int bad = 0, ok = 0;

    static const char flips[] = "{}[](),:=*+-'\"#\n 0aD.";

    test_cur_name_ = "python policy reader";
    test_cur_failed_ = 0;
    for (n = 0; n <= strlen(text) + 400; n++) {
        sg_error err = SG_ERROR_INIT;
        char *js = NULL;
        int rc;
        memcpy(buf, text, sizeof text);
        if (n < strlen(text))
            buf[n] = '\0'; /* a prefix */
        else
            for (i = 0; i < 3; i++) { /* flips */
                x = x * 1103515245u + 12345u;
                buf[(x >> 8) % strlen(text)] = flips[(x >> 20) % (sizeof flips - 1)];
            }
        rc = sg_gate__policy_from_python(&js, buf, &err);
        if (rc == 0) {
            cJSON *j = cJSON_Parse(js);
            CHECK_MSG(j && cJSON_IsObject(cJSON_GetObjectItem(j, "require")), "policy JSON does not read: %s", js);
            cJSON_Delete(j);
            ok++;
        } else {
            CHECK_MSG(rc == SG_EINVALID && strncmp(err.msg, "policy: ", 8) == 0 && !strchr(err.msg, '\n'),
                      "policy error %d '%s'", rc, err.msg);
            bad++;
        }
        sg_free(js);
    }
    CHECK_MSG(ok > 0 && bad > 0, "policy reader: %d read, %d refused", ok, bad);
    if (test_cur_failed_) {
        test_failed_++;
        fprintf(stderr, "FAIL python policy reader\n");
    } else
        test_passed_++;
}

int main(void)
{
    char dir[4096];
    struct dirent **list = NULL;
    sg_engine *eng = NULL;
    sg_error err = SG_ERROR_INIT;
    int n, i, pairs = 0;

    check_policy_reader();
    if (sg_engine_new(&eng, NULL, &err) != 0) {
        fprintf(stderr, "sg_engine_new: %s\n", err.msg);
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/tests/data/gate", SG_SOURCE_DIR);
    n = scandir(dir, &list, NULL, alphasort);
    for (i = 0; i < n; i++) {
        char truth[8192];
        FILE *f;
        snprintf(truth, sizeof truth, "%s/%s/truth.json", dir, list[i]->d_name);
        if (list[i]->d_name[0] != '.' && (f = fopen(truth, "rb"))) {
            fclose(f);
            test_cur_name_ = list[i]->d_name;
            test_cur_failed_ = 0;
            check_pair(eng, list[i]->d_name);
            pairs++;
            if (test_cur_failed_) {
                test_failed_++;
                fprintf(stderr, "FAIL %s\n", list[i]->d_name);
            } else {
                test_passed_++;
            }
        }
        free(list[i]);
    }
    free(list);
    sg_engine_free(eng);
    if (pairs < 30) {
        fprintf(stderr, "only %d pairs under %s\n", pairs, dir);
        test_failed_++;
    }
    printf("gate: %d of %d pairs right (%d gates: archives, and traces and mixes where captured); witnesses torch "
           "ran: %d (all as the gate says unless FAIL above), not on torch's grid: %d\n", n_right, pairs, n_modes,
           n_witness_run, n_witness_not_run);
    return test_summary();
}
