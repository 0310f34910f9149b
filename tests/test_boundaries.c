/*
 * test_boundaries.c - `verify` against what the loaded module did in real torch, from the
 * committed results of tools/verify_boundaries.py (tests/data/boundaries/<2.14|2.6>/NAME.json:
 * per archive the shapes tried at the boundaries of its declared ranges, whether each is
 * declared, and what torch's loaded module did with it; no torch needed here).
 *
 * For every archive torch loaded, sg_engine_verify() on it now (deterministic: Z3's resource
 * limit only, no wall-clock limit) must agree with torch:
 * - a proved dim is a claim about every declared shape: no declared shape with sizes >= 2
 *   (the sizes verify analyses; torch specialises 0 and 1) may have been rejected, unless
 *   verify refutes or leaves something unknown;
 * - a counterexample is a claim that the module rejects that shape: where torch ran it (it is
 *   one of the shapes tried, or one of the counterexamples the last `verify_boundaries.py run`
 *   took from verify.json), torch must have rejected it.
 * A counterexample torch did not run is counted as not covered (rerun the tool to cover it).
 * One test case per archive; the figures at the end.
 */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "shapegate/archive.h"
#include "shapegate/engine.h"
#include "shapegate/graph.h"
#include "shapegate/report.h"
#include "shapegate/trace.h"
#include "test.h"
#include "util/json.h"

static int n_agree, n_unknown, n_cex_confirmed, n_cex_uncovered, n_proved_checked;
static int n_kernel_archives, n_kernel_rows, n_kernel_false, n_kernel_caught, n_kernel_missed;

/* `shape` (a JSON array of sizes) appended as "[a,b]" to `buf`; false when not one. */
static bool put_shape(char *buf, size_t cap, const cJSON *shape)
{
    const cJSON *s;
    size_t n = strlen(buf);

    if (!cJSON_IsArray(shape))
        return false;
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "[");
    cJSON_ArrayForEach(s, shape) {
        sg_int v;
        if (!sg__json_int(s, &v))
            return false;
        n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "%s%lld", s == shape->child ? "" : ",", (long long)v);
    }
    n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]");
    return n < cap;
}

/* The key of a row: "path=[sizes];..." over the inputs with a non-empty shape, in order. */
static bool row_key(char *buf, size_t cap, const cJSON *inputs, const cJSON *shapes)
{
    const cJSON *in = inputs ? inputs->child : NULL, *sh = shapes ? shapes->child : NULL;

    buf[0] = '\0';
    for (; in && sh; in = in->next, sh = sh->next) {
        const char *path = sg__json_str(sg__json_get(in, "path"));
        size_t n = strlen(buf);
        if (!path || !cJSON_IsArray(sh) || cJSON_GetArraySize(sh) == 0)
            continue;
        snprintf(buf + n, cap - n, "%s=", path);
        if (!put_shape(buf, cap, sh))
            return false;
        n = strlen(buf);
        snprintf(buf + n, cap - n, ";");
    }
    return true;
}

/* The same key for a counterexample object {"path": [sizes], ...} in the inputs' order. */
static bool cex_key(char *buf, size_t cap, const cJSON *inputs, const cJSON *cex)
{
    const cJSON *in;

    buf[0] = '\0';
    cJSON_ArrayForEach(in, inputs) {
        const char *path = sg__json_str(sg__json_get(in, "path"));
        const cJSON *sh = path ? cJSON_GetObjectItemCaseSensitive(cex, path) : NULL;
        size_t n = strlen(buf);
        if (!sh || !cJSON_IsArray(sh) || cJSON_GetArraySize(sh) == 0)
            continue;
        snprintf(buf + n, cap - n, "%s=", path);
        if (!put_shape(buf, cap, sh))
            return false;
        n = strlen(buf);
        snprintf(buf + n, cap - n, ";");
    }
    return true;
}

/* The key of violation `v`'s counterexample: each input's sizes from the report's trace. */
static bool report_key(char *buf, size_t cap, const sg_report *r, size_t v, const cJSON *inputs)
{
    const sg_trace *t = sg_report_trace(r);
    size_t n = sg_trace_input_count(t), i;
    const cJSON *in;

    buf[0] = '\0';
    cJSON_ArrayForEach(in, inputs) {
        const char *path = sg__json_str(sg__json_get(in, "path"));
        bool any = false;
        for (i = 0; path && i < n; i++) {
            sg_num size;
            size_t len = strlen(buf);
            if (strcmp(sg_trace_input_path(t, i), path) != 0)
                continue;
            if (!sg_report_violation_counterexample(r, v, i, &size) || size.big || size.inf)
                return false;
            if (!any)
                len += (size_t)snprintf(buf + len, cap - len, "%s=[", path);
            else
                len += (size_t)snprintf(buf + len, cap - len, ",");
            if (len < cap)
                snprintf(buf + len, cap - len, "%lld", (long long)size.value);
            any = true;
        }
        if (any) {
            size_t len = strlen(buf);
            snprintf(buf + len, cap - len, "];");
        }
    }
    return strlen(buf) + 1 < cap;
}

/* What torch did with the shape `key`: "ok", an error id, or NULL when it did not run it. */
static const char *torch_result(const cJSON *rec, const char *key)
{
    static char k2[8192];
    const cJSON *inputs = sg__json_get(rec, "inputs"), *x;

    cJSON_ArrayForEach(x, sg__json_get(rec, "rows"))
        if (row_key(k2, sizeof k2, inputs, sg__json_get(x, "shapes")) && strcmp(k2, key) == 0)
            return sg__json_str(sg__json_get(x, "result"));
    cJSON_ArrayForEach(x, sg__json_get(rec, "verify_counterexamples"))
        if (cex_key(k2, sizeof k2, inputs, sg__json_get(x, "counterexample")) && strcmp(k2, key) == 0)
            return sg__json_str(sg__json_get(x, "result"));
    return NULL;
}

/* One archive: verify it and hold the verdicts against torch's runs. */
/* The hand-made archives are generated, not committed: the records name them under
 * GEN_PREFIX (where tools/verify_boundaries.py writes them); the test finds them in the
 * folder $SG_BOUNDARIES_GEN, made by the same generators (tests/CMakeLists.txt). */
#define GEN_PREFIX "build/boundaries-gen/"
static const char *gen_dir;

/* `shapegate verify` of the archive at `path` (named `rel`), on Z3's resource limit only: the report,
 * or NULL after a failed CHECK. The report owns what it says: the archive is closed here. */
static sg_report *verify_archive(sg_engine *eng, const char *path, const char *rel)
{
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    sg_verify_input in = SG_VERIFY_INPUT_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    sg_report *r = NULL;
    int rc;

    o.timeout_ms = 0;
    o.query_timeout_ms = 0;
    o.fixes = o.torch_fixes = o.torch_message = false;
    if ((rc = sg_archive_open(&a, path, NULL, &err)) == 0 && (rc = sg_graph_load(&g, a, NULL, &err)) == 0) {
        in.graph = g;
        in.name = rel;
        rc = sg_engine_verify(eng, &in, &o, &r, &err);
    }
    CHECK_MSG(rc == 0, "%s: %s", rel, err.msg);
    sg_graph_free(g);
    sg_archive_free(a);
    return rc == 0 ? r : NULL;
}

/*
 * The kernels' shape conditions (graph/kernels.c) against every shape torch ran on the archive:
 * a condition false at a shape means the kernel raises there, so torch must have rejected it
 * (never a shape the module ran). Also counted: declared shapes whose rejection was a kernel's
 * error (torch's `kind` "kernel") that some condition catches, and those none does.
 */
static void check_kernels(const char *path, const char *name, const cJSON *rec)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    sg_pool *scratch = NULL;
    sg_num *vals = NULL;
    const cJSON *x;
    size_t ns, i;

    if (sg_archive_open(&a, path, NULL, &err) != 0 || sg_graph_load(&g, a, NULL, &err) != 0
        || sg_graph_kernel_check_count(g) == 0)
        goto cleanup;
    n_kernel_archives++;
    ns = sg_pool_nsymbols(sg_graph_pool(g));
    if (sg_pool_overlay_new(&scratch, sg_graph_pool(g), &err) != 0 || !(vals = calloc(ns + 1, sizeof *vals))) {
        CHECK_MSG(false, "%s: out of memory", name);
        goto cleanup;
    }
    cJSON_ArrayForEach(x, sg__json_get(rec, "rows")) {
        const char *res = sg__json_str(sg__json_get(x, "result"));
        const char *kind = res ? sg__json_str(sg__json_get(sg__json_get(sg__json_get(rec, "errors"), res), "kind")) : NULL;
        const cJSON *as = sg__json_get(x, "assign");
        bool rejects = false;
        for (i = 0; i < ns; i++) {
            const sg_expr *sym = sg_pool_symbol(sg_graph_pool(g), i);
            sg_int v;
            vals[i] = sg_num_of(0);
            vals[i].inf = 1; /* no value: a condition over it does not evaluate */
            if (sg__json_int(sg__json_get(as, sg_expr_symbol_name(sym)), &v))
                vals[i] = sg_num_of((int64_t)v);
        }
        for (i = 0; i < sg_graph_kernel_check_count(g); i++) {
            const sg_graph_kernel_check *kc = sg_graph_kernel_check_at(g, i);
            sg_eval ev;
            sg_error e2 = SG_ERROR_INIT;
            if (sg_expr_evaluate(&ev, scratch, kc->expr, vals, ns, &e2) != 0 || ev.kind != SG_VAL_BOOL || ev.num.value)
                continue;
            rejects = true;
            CHECK_MSG(res && strcmp(res, "ok") != 0, "%s: kernel condition false where the module runs: %s", name,
                      kc->what);
        }
        n_kernel_rows++;
        n_kernel_false += rejects;
        if (cJSON_IsTrue(sg__json_get(x, "declared")) && kind && strcmp(kind, "kernel") == 0) {
            n_kernel_caught += rejects;
            n_kernel_missed += !rejects;
        }
    }
cleanup:
    free(vals);
    sg_pool_free(scratch);
    sg_graph_free(g);
    sg_archive_free(a);
}

static void check_archive(sg_engine *eng, const cJSON *rec)
{
    const char *rel = sg__json_str(sg__json_get(rec, "archive")), *name = sg__json_str(sg__json_get(rec, "name"));
    const cJSON *inputs = sg__json_get(rec, "inputs"), *x;
    sg_report *r;
    char path[4096], key[8192];
    size_t v, rejected = 0;

    if (rel && gen_dir && strncmp(rel, GEN_PREFIX, strlen(GEN_PREFIX)) == 0)
        snprintf(path, sizeof path, "%s/%s", gen_dir, rel + strlen(GEN_PREFIX));
    else
        snprintf(path, sizeof path, "%s/%s", SG_SOURCE_DIR, rel ? rel : "?");
    check_kernels(path, name, rec);
    if (!(r = verify_archive(eng, path, rel)))
        return;
    for (v = 0; v < sg_report_violation_count(r); v++) {
        const char *res;
        if (sg_report_violation_kind(r, v) != SG_VIOL_GUARD)
            continue;
        if (!report_key(key, sizeof key, r, v, inputs)) {
            CHECK_MSG(false, "%s: violation %zu: counterexample without sizes", name, v);
            continue;
        }
        if (!(res = torch_result(rec, key))) {
            n_cex_uncovered++;
            printf("  %s: counterexample %s not run in torch (rerun tools/verify_boundaries.py)\n", name, key);
            continue;
        }
        CHECK_MSG(strcmp(res, "ok") != 0, "%s: verify refutes with %s, but the loaded module runs it", name, key);
        n_cex_confirmed += strcmp(res, "ok") != 0;
    }
    /* a declared shape the module rejects: at any size >= 2, and at size 0 or 1 when its guards do (an
     * archive's dims are analysed from their declared min; a kernel's failure there is no guard's) */
    cJSON_ArrayForEach(x, sg__json_get(rec, "rows")) {
        const char *res = sg__json_str(sg__json_get(x, "result"));
        const char *kind = res ? sg__json_str(sg__json_get(sg__json_get(sg__json_get(rec, "errors"), res), "kind")) : NULL;
        if (cJSON_IsTrue(sg__json_get(x, "declared")) && res && strcmp(res, "ok") != 0 &&
            (cJSON_IsTrue(sg__json_get(x, "ge2")) || (kind && strcmp(kind, "guard") == 0)))
            rejected++;
    }
    switch (sg_report_verdict(r)) {
    case SG_VERDICT_OK:
        CHECK_MSG(rejected == 0, "%s: verify proves every dim, but the loaded module rejects %zu declared shape(s)",
                  name, rejected);
        n_proved_checked++;
        break;
    case SG_VERDICT_UNKNOWN:
        n_unknown++;
        printf("  %s: unknown (%s)\n", name, sg_report_dim_count(r) ? sg_report_dim_reason(r, 0) : "");
        break;
    default:
        break;
    }
    if (!test_cur_failed_)
        n_agree++;
    sg_report_free(r);
}

static sg_engine *engine;

/* Every record of one torch version's folder, one test case each. */
static void run_folder(const char *version)
{
    char dir[4096];
    struct dirent **list = NULL;
    int n, i;

    snprintf(dir, sizeof dir, "%s/tests/data/boundaries/%s", SG_SOURCE_DIR, version);
    n = scandir(dir, &list, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "%s: cannot read\n", dir);
        test_failed_++;
        return;
    }
    for (i = 0; i < n; i++) {
        char file[8192];
        cJSON *rec = NULL;
        sg_error err = SG_ERROR_INIT;
        size_t len = strlen(list[i]->d_name);
        if (len < 6 || strcmp(list[i]->d_name + len - 5, ".json") != 0) {
            free(list[i]);
            continue;
        }
        snprintf(file, sizeof file, "%s/%s", dir, list[i]->d_name);
        test_cur_name_ = list[i]->d_name;
        test_cur_failed_ = 0;
        if (sg__json_load_file(&rec, file, "boundary record", &err) != 0) {
            CHECK_MSG(false, "%s", err.msg);
        } else if (sg__json_get(rec, "rows")) { /* torch loaded it */
            check_archive(engine, rec);
        } else {
            cJSON_Delete(rec);
            free(list[i]);
            continue;
        }
        if (test_cur_failed_) {
            test_failed_++;
            fprintf(stderr, "FAIL %s/%s\n", version, list[i]->d_name);
        } else {
            test_passed_++;
        }
        cJSON_Delete(rec);
        free(list[i]);
    }
    free(list);
}

/* verify of the staged case `name`'s archive, which must be refuted: the report, or NULL. */
static sg_report *refuted_staged(const char *name)
{
    char rel[512], path[4096];
    sg_report *r;

    snprintf(rel, sizeof rel, "tests/corpus/staging/%s/model.pt2", name);
    snprintf(path, sizeof path, "%s/%s", SG_SOURCE_DIR, rel);
    if ((r = verify_archive(engine, path, rel)) != NULL)
        CHECK_EQ_INT((int)sg_report_verdict(r), (int)SG_VERDICT_VIOLATIONS);
    return r;
}

/*
 * An archive's dims are analysed from their declared min (graph/verify.c sets sizes_from_min): the
 * staged torch 2.14 export cr_cat_reshape_shared_ok declares d in [0, 32] for x and y, and its
 * guards_code divides by (x + y) // 2, which is 0 at size 0; the loaded module rejects that shape,
 * so verify must refute d with a witness of size 0 (it said proved while it analysed from 2).
 */
static void test_sizes_from_declared_min(void)
{
    sg_report *r = refuted_staged("cases/cr_cat_reshape_shared_ok");
    size_t v, zero = 0;

    if (r) {
        for (v = 0; v < sg_report_violation_count(r); v++) {
            sg_num n;
            if (sg_report_violation_counterexample(r, v, sg_report_violation_input(r, v), &n) && !n.inf && n.value == 0)
                zero++;
        }
        CHECK_MSG(zero > 0, "no witness of size 0 among %zu violations", sg_report_violation_count(r));
    }
    sg_report_free(r);
}

/*
 * A kernel's failure torch 2.6 kept no guard for (graph/kernels.c): the staged export
 * so_min_of_sizes_slice_ok computes x[:n] + y[:n] with n = x.size(0), Dims in [0, 20]; the
 * slice of y has Min(s0, s1) rows at run time where its meta says s0, and the add raises
 * unless they broadcast. The loaded module rejects x=[3, 2], y=[2, 2]; verify must refute
 * (it said ok: the archive has no guards_code and no assert), with y shorter than x.
 */
static void test_kernel_slice_broadcast(void)
{
    sg_report *r = refuted_staged("cases-2.6/so_min_of_sizes_slice_ok");
    size_t v, shorter = 0;

    if (r) {
        for (v = 0; v < sg_report_violation_count(r); v++) {
            sg_num nx, ny; /* input dims: x.size(0), x.size(1), y.size(0), y.size(1) */
            if (sg_report_violation_counterexample(r, v, 0, &nx) && sg_report_violation_counterexample(r, v, 2, &ny))
                shorter += ny.value < nx.value && ny.value != 1;
        }
        CHECK_MSG(shorter == sg_report_violation_count(r) && shorter > 0,
                  "%zu of %zu witnesses have y shorter than x (and not 1)", shorter, sg_report_violation_count(r));
    }
    sg_report_free(r);
}

int main(void)
{
    sg_error err = SG_ERROR_INIT;

    gen_dir = getenv("SG_BOUNDARIES_GEN");

    if (sg_engine_new(&engine, NULL, &err) != 0) {
        fprintf(stderr, "sg_engine_new: %s\n", err.msg);
        return 1;
    }
    run_folder("2.14");
    run_folder("2.6");
    RUN(test_sizes_from_declared_min);
    RUN(test_kernel_slice_broadcast);
    sg_engine_free(engine);
    printf("kernel shape rules: %d archives with conditions, %d shapes run in torch, %d rejected by a condition "
           "(each rejected by torch too); declared shapes torch rejected in a kernel: %d caught, %d not modelled\n",
           n_kernel_archives, n_kernel_rows, n_kernel_false, n_kernel_caught, n_kernel_missed);
    printf("boundaries: %d archives agree with torch (%d proved and checked against the rejected shapes, "
           "%d unknown); counterexamples: %d rejected by torch, %d not run in torch\n",
           n_agree, n_proved_checked, n_unknown, n_cex_confirmed, n_cex_uncovered);
    return test_summary();
}
