/*
 * test_trace.c - the trace adapters (include/shapegate/trace.h): every capture
 * folder of the corpus (tests/corpus/cases and cases-2.6) loads, its input
 * dims map consistently to the traced values, it survives a JSON round trip
 * byte for byte; spot checks of single cases; the JSON helpers of util/json.h;
 * hostile inputs (missing files, bad JSON, wrong types, limits, bad
 * expressions, allocation failures), each a one-line error.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"
#include "trace/trace_impl.h"
#include "corpus_walk.h"
#include "test.h"
#include "util/json.h"
#include "util/strmap.h"

#ifndef SG_TRACE_TMP
#define SG_TRACE_TMP "/tmp/sg_test_trace"
#endif

static const char *const versions[2] = {"cases", "cases-2.6"};

/* ---- helpers --------------------------------------------------------------------------- */

static sg_trace *load_case(const char *version, const char *name, sg_error *err)
{
    char path[512];
    sg_trace *t = NULL;
    snprintf(path, sizeof path, "%s/%s/%s", SG_CORPUS, version, name);
    if (sg_trace_load_dir(&t, path, err) != 0)
        fprintf(stderr, "  %s/%s: %s\n", version, name, err->msg);
    return t;
}

/* The sympy print of `e` into `buf` ("(null)" for NULL). */
static const char *show(char *buf, size_t cap, const sg_expr *e)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;
    if (!e) {
        snprintf(buf, cap, "(null)");
        return buf;
    }
    if (sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) != 0)
        snprintf(buf, cap, "(print failed: %.200s)", err.msg);
    else
        snprintf(buf, cap, "%s", s);
    sg_free(s);
    return buf;
}

static const sg_input_dim *find_dim(const sg_trace *t, const char *path, int dim)
{
    size_t n;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(in[i].path, path) == 0 && in[i].dim == dim)
            return &in[i];
    return NULL;
}

static const sg_symbol_info *find_symbol(const sg_trace *t, const char *name)
{
    size_t n;
    const sg_symbol_info *s = sg_trace_symbols(t, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(sg_expr_symbol_name(s[i].sym), name) == 0)
            return &s[i];
    return NULL;
}

static bool one_line(const char *msg) { return msg[0] && !strchr(msg, '\n'); }

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case folder names of one version, sorted; returns the count. */
static size_t list_cases(char ***out, const char *version)
{
    char dir[512];
    DIR *d;
    struct dirent *ent;
    char **names = NULL;
    size_t n = 0;

    snprintf(dir, sizeof dir, "%s/%s", SG_CORPUS, version);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((ent = readdir(d)) != NULL) {
        char sub[1024];
        struct stat st;
        if (ent->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, ent->d_name);
        if (stat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        names = realloc(names, (n + 1) * sizeof *names);
        names[n++] = strdup(ent->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    return n;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The value of `e` with every trace symbol at its hint; false when some symbol has none. */
static bool eval_at_hints(const sg_trace *t, const sg_expr *e, sg_int *out)
{
    sg_pool *pool = NULL;
    size_t nsyms = sg_pool_nsymbols(sg_trace_pool(t));
    const sg_expr **used = NULL;
    size_t nused = 0;
    sg_int *vals = calloc(nsyms ? nsyms : 1, sizeof *vals);
    sg_value v;
    sg_error err = SG_ERROR_INIT;
    bool ok = vals && sg_pool_overlay_new(&pool, sg_trace_pool(t), &err) == 0
              && sg_expr_symbols(&used, &nused, pool, e, &err) == 0;

    for (size_t i = 0; ok && i < nused; i++) {
        const sg_symbol_info *si = sg_trace_symbol_info(t, used[i]);
        if (!si || !si->has_hint)
            ok = false;
        else
            vals[sg_expr_symbol_index(used[i])] = si->hint;
    }
    if (ok && (sg_expr_eval(&v, pool, e, vals, nsyms, &err) != 0 || v.kind != SG_VAL_INT))
        ok = false;
    if (ok)
        *out = v.num;
    sg_free((void *)used);
    sg_pool_free(pool);
    free(vals);
    return ok;
}

/* ---- the whole corpus ------------------------------------------------------------------ */

/* Mapping problems of one dim, printed; returns how many. */
static int check_dim(const char *version, const char *name, const sg_trace *t,
                     const sg_input_dim *d)
{
    size_t n;
    const sg_symbol_info *syms = sg_trace_symbols(t, &n), *owner = NULL;
    char buf[256], want[600];
    sg_int v;
    int bad = 0;

    if (!sg_trace_has_shape_env(t))
        return d->value != NULL;
    if (!d->value || !d->traced_source) {
        fprintf(stderr, "  note: %s/%s: %s dim %d: no traced value%s\n", version, name, d->path,
                d->dim, sg_trace_torch_error(t) ? " (torch raised before tracing it)" : "");
        return sg_trace_torch_error(t) ? 0 : 1; /* e.g. an example outside its Dim's range, rejected in fakify */
    }
    /* torch 2.14 (both modes) and 2.6 strict name the user's path; 2.6 non-strict what it traced */
    if (!(sg_trace_strict(t) && strncmp(d->traced_source, "L['flat_args']", 14) == 0)
        && strcmp(d->source, d->traced_source) != 0) {
        fprintf(stderr, "  note: %s/%s: source %s != traced %s\n", version, name, d->source,
                d->traced_source);
        bad++;
    }
    snprintf(want, sizeof want, "L%s.size()[%d]", d->path, d->dim);
    if (strncmp(version, "cases-2.6", 9) != 0 && strcmp(d->source, want) != 0) {
        fprintf(stderr, "  note: %s/%s: source %s, expected %s\n", version, name, d->source, want);
        bad++;
    }
    for (size_t i = 0; i < n && !owner; i++)
        for (size_t k = 0; k < syms[i].nsources; k++)
            if (strcmp(syms[i].sources[k], d->traced_source) == 0)
                owner = &syms[i];
    if (owner) {
        /* the traced value is the source's symbol, or what torch replaced it by */
        if (d->value != owner->sym && d->value != owner->replacement) {
            const sg_symbol_info *r = sg_trace_symbol_info(t, owner->replacement);
            if (!(r && d->value == r->replacement)) {
                fprintf(stderr, "  note: %s/%s: %s: value %s is neither %s nor its replacement\n",
                        version, name, d->traced_source, show(buf, sizeof buf, d->value),
                        sg_expr_symbol_name(owner->sym));
                bad++;
            }
        }
        if (owner->has_hint && owner->hint != d->size) {
            fprintf(stderr, "  note: %s/%s: %s: hint != example size\n", version, name,
                    d->traced_source);
            bad++;
        }
    } else if (!sg_expr_is_constant(d->value)) {
        fprintf(stderr, "  note: %s/%s: %s: no symbol has this source, value %s\n", version, name,
                d->traced_source, show(buf, sizeof buf, d->value));
        bad++;
    }
    if (!eval_at_hints(t, d->value, &v) || v != d->size) {
        fprintf(stderr, "  note: %s/%s: %s: value %s is not the example size at the hints\n",
                version, name, d->traced_source, show(buf, sizeof buf, d->value));
        bad++;
    }
    return bad;
}

static void test_corpus_loads(void)
{
    size_t total = 0, no_env = 0, no_flat = 0, dims = 0, guards = 0, asserts = 0, syms = 0;
    size_t roundtrips = 0, orphans = 0, indexed = 0;
    int problems = 0;

    for (size_t v = 0; v < 2; v++) {
        char **names = NULL;
        size_t n = list_cases(&names, versions[v]);
        char why[256] = "";
        int listed = corpus_indexed_cases(SG_CORPUS, versions[v], why, sizeof why);
        CHECK_MSG(listed > 0, "%s/index.json: %s", versions[v], why);
        CHECK_EQ_INT(n, listed); /* every case folder is one index.json lists, none lost */
        indexed += listed > 0 ? (size_t)listed : 0;
        for (size_t i = 0; i < n; i++) {
            sg_error err = SG_ERROR_INIT;
            sg_trace *t = load_case(versions[v], names[i], &err), *t2 = NULL;
            char *a = NULL, *b = NULL;
            size_t nd, ng, ns;
            const sg_input_dim *in;
            const sg_guard *g;

            CHECK_MSG(t != NULL, "%s/%s: %s", versions[v], names[i], err.msg);
            if (!t)
                continue;
            total++;
            no_env += !sg_trace_has_shape_env(t);
            no_flat += !sg_trace_has_flat_spec(t);
            in = sg_trace_inputs(t, &nd);
            g = sg_trace_guards(t, &ng);
            sg_trace_symbols(t, &ns);
            dims += nd;
            syms += ns;
            for (size_t k = 0; k < ng; k++) {
                const sg_expr **used = NULL;
                size_t nu = 0;
                guards += g[k].origin == SG_GUARD_SHAPE;
                asserts += g[k].origin == SG_GUARD_RUNTIME_ASSERT;
                CHECK(g[k].expr && sg_expr_sort(g[k].expr) == SG_SORT_BOOL && g[k].text);
                /* every symbol a guard mentions is a symbol of the trace */
                if (sg_expr_symbols(&used, &nu, sg_trace_pool(t), g[k].expr, &err) == 0)
                    for (size_t u = 0; u < nu; u++)
                        if (!sg_trace_symbol_info(t, used[u])) {
                            fprintf(stderr, "  note: %s/%s: guard %zu: unknown symbol %s\n",
                                    versions[v], names[i], k, sg_expr_symbol_name(used[u]));
                            orphans++;
                        }
                sg_free((void *)used);
            }
            if (!sg_trace_has_shape_env(t))
                CHECK(ns == 0 && ng == 0);
            for (size_t k = 0; k < nd; k++) {
                CHECK(in[k].source != NULL);
                problems += check_dim(versions[v], names[i], t, &in[k]);
            }

            /* folder -> JSON -> trace -> JSON is byte-identical */
            CHECK_MSG(sg_trace_to_json(&a, t, &err) == 0, "%s", err.msg);
            if (a) {
                CHECK_MSG(sg_trace_load_json(&t2, a, strlen(a), &err) == 0, "%s/%s: %s",
                          versions[v], names[i], err.msg);
                if (t2 && sg_trace_to_json(&b, t2, &err) == 0) {
                    bool same = strcmp(a, b) == 0;
                    CHECK_MSG(same, "%s/%s: round trip differs", versions[v], names[i]);
                    roundtrips += same;
                }
                if (t2) {
                    size_t n1, n2;
                    sg_trace_inputs(t2, &n1);
                    CHECK_EQ_INT(n1, nd);
                    sg_trace_guards(t2, &n2);
                    CHECK_EQ_INT(n2, ng);
                    CHECK(sg_trace_has_shape_env(t2) == sg_trace_has_shape_env(t));
                    CHECK(sg_trace_strict(t2) == sg_trace_strict(t));
                    CHECK_EQ_STR(sg_trace_torch_version(t2), sg_trace_torch_version(t));
                }
            }
            sg_free(a);
            sg_free(b);
            sg_trace_free(t2);
            sg_trace_free(t);
        }
        free_names(names, n);
    }
    printf("corpus: %zu cases loaded (%zu without a shape env, %zu without a flat spec), "
           "%zu symbols, %zu shape guards, %zu runtime asserts, %zu input dims, "
           "%zu byte-identical JSON round trips, %d dim mapping problems, %zu unknown guard symbols\n",
           total, no_env, no_flat, syms, guards, asserts, dims, roundtrips, problems, orphans);
    CHECK_EQ_INT(total, indexed);
    CHECK_EQ_INT(roundtrips, total);
    CHECK_EQ_INT(problems, 0);
    CHECK_EQ_INT(orphans, 0);
}

/* ---- spot checks --------------------------------------------------------------------------- */

static void test_div_view_8(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_div_view_8", &err);
    const sg_symbol_info *s;
    const sg_input_dim *d;
    const sg_guard *g;
    size_t n;
    char buf[256];

    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(sg_trace_has_shape_env(t));
    CHECK(!sg_trace_strict(t));
    CHECK_EQ_STR(sg_trace_torch_version(t), "2.14.1+debian");
    s = sg_trace_symbols(t, &n);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_STR(sg_expr_symbol_name(s[0].sym), "s77");
    CHECK(s[0].has_hint && s[0].hint == 16);
    CHECK(s[0].lo.inf == 0 && s[0].lo.v == 2 && s[0].hi.inf == 1);
    CHECK(!s[0].unbacked && !s[0].size_like && !s[0].replacement);
    CHECK(s[0].nsources == 1 && strcmp(s[0].sources[0], "L['x'].size()[0]") == 0);
    CHECK(sg_trace_symbol_info(t, s[0].sym) == &s[0]);
    g = sg_trace_guards(t, &n);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_STR(g[0].text, "Eq(Mod(s77, 8), 0)");
    CHECK_EQ_STR(show(buf, sizeof buf, g[0].expr), "Eq(Mod(s77, 8), 0)");
    CHECK(g[0].origin == SG_GUARD_SHAPE && g[0].user_loc == NULL);
    CHECK_EQ_STR(g[0].sloc, "(_prims_common/__init__.py:1118 in infer_size)");
    CHECK(g[0].framework_loc && strstr(g[0].framework_loc, "line 1118, in infer_size"));
    sg_trace_inputs(t, &n);
    CHECK_EQ_INT(n, 1);
    d = find_dim(t, "['x']", 0);
    CHECK(d != NULL);
    if (d) {
        CHECK_EQ_STR(d->source, "L['x'].size()[0]");
        CHECK_EQ_STR(d->traced_source, "L['x'].size()[0]");
        CHECK(d->kind == SG_SPEC_DIM);
        CHECK_EQ_STR(d->name, "dx");
        CHECK(d->has_bounds && d->min.inf == 0 && d->min.v == 0 && d->max.inf == 1);
        CHECK(d->size == 16);
        CHECK(d->value == s[0].sym);
    }
    CHECK(sg_trace_has_flat_spec(t));
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":0,\"max\":\"oo\"}}}");
    CHECK(sg_trace_inputs_json(t) && strstr(sg_trace_inputs_json(t), "\"flat\":[{\"path\":\"['x']\""));
    sg_trace_free(t);
}

static void test_nested_dict_list(void)
{
    sg_error err = SG_ERROR_INIT;
    static const char *const paths[4] = {"['inputs']['a']", "['inputs']['b'][0]",
                                          "['inputs']['b'][1]", "['scale']"};
    sg_trace *t = load_case("cases", "ok_nested_dict_list", &err);
    const sg_symbol_info *b;
    char buf[64];

    CHECK(t != NULL);
    if (!t)
        return;
    b = find_symbol(t, "s49");
    CHECK(b != NULL);
    for (int i = 0; i < 4 && b; i++) {
        const sg_input_dim *d = find_dim(t, paths[i], 0);
        CHECK(d && d->kind == SG_SPEC_DIM && strcmp(d->name, "B") == 0);
        CHECK(d && d->value == b->sym);
        CHECK(d && d->min.v == 2 && d->max.v == 64);
    }
    {
        const sg_input_dim *d = find_dim(t, "['inputs']['b'][1]", 1), *u;
        CHECK(d && d->kind == SG_SPEC_DIM && strcmp(d->name, "T") == 0);
        CHECK_EQ_STR(d ? show(buf, sizeof buf, d->value) : "", "s74");
        u = find_dim(t, "['scale']", 1);
        CHECK(u && u->kind == SG_SPEC_UNSET && u->size == 3);
        CHECK_EQ_STR(u ? show(buf, sizeof buf, u->value) : "", "3");
    }
    /* s63, s50, s98 were replaced by s49 */
    b = find_symbol(t, "s98");
    CHECK(b && b->replacement && strcmp(sg_expr_symbol_name(b->replacement), "s49") == 0);
    sg_trace_free(t);

    /* torch 2.6 non-strict traces L['args'][0][0]... and names that in its messages */
    t = load_case("cases-2.6", "ok_nested_dict_list", &err);
    CHECK(t != NULL);
    if (!t)
        return;
    {
        const sg_input_dim *d = find_dim(t, "['scale']", 0);
        CHECK(d && strcmp(d->source, "L['args'][1]['scale'].size()[0]") == 0);
        CHECK_EQ_STR(d ? show(buf, sizeof buf, d->value) : "", "s0");
        d = find_dim(t, "['inputs']['b'][1]", 1);
        CHECK(d && strcmp(d->source, "L['args'][0][0]['b'][1].size()[1]") == 0);
    }
    sg_trace_free(t);
}

static void test_derived(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "ok_derived_spec_2x", &err);
    const sg_input_dim *d;
    char buf[64];

    CHECK(t != NULL);
    if (!t)
        return;
    d = find_dim(t, "['y']", 0);
    CHECK(d != NULL);
    if (d) {
        CHECK(d->kind == SG_SPEC_DERIVED);
        CHECK_EQ_STR(d->name, "2*dx");
        CHECK_EQ_STR(show(buf, sizeof buf, d->derived), "2*dx");
        CHECK_EQ_STR(d->root_name, "dx");
        CHECK(d->root_min.v == 2 && d->root_max.v == 32 && !d->root_max.inf);
        CHECK(d->min.v == 4 && d->max.v == 64 && !d->min_unavailable);
        CHECK_EQ_STR(show(buf, sizeof buf, d->value), "2*s77");
        CHECK(d->size == 8);
    }
    CHECK(find_symbol(t, "s17") && find_symbol(t, "s17")->replacement);
    sg_trace_free(t);

    /* torch could not compute the derived min: recorded as unavailable, bound infinite */
    t = load_case("cases", "err_derived_negative_min", &err);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!sg_trace_has_shape_env(t));
    d = find_dim(t, "['y']", 0);
    CHECK(d && d->kind == SG_SPEC_DERIVED && d->min_unavailable
          && strncmp(d->min_unavailable, "<unavailable: AssertionError", 28) == 0);
    CHECK(d && d->min.inf == -1 && d->max.v == 9 && !d->max_unavailable);
    CHECK(d && d->value == NULL && d->traced_source == NULL);
    CHECK_EQ_STR(d ? d->source : "", "L['y'].size()[0]");
    sg_trace_free(t);
}

static void test_torch26_hints(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases-2.6", "err_check_ge", &err);
    const sg_symbol_info *s;
    const sg_guard *g;
    size_t n;

    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_STR(sg_trace_torch_version(t), "2.6.0+debian");
    s = find_symbol(t, "s0");
    CHECK(s && s->has_hint && s->hint == 20);
    CHECK(s && s->lo.v == 16 && s->hi.v == 100);
    g = sg_trace_guards(t, &n);
    CHECK_EQ_INT(n, 1);
    CHECK(n == 1 && g[0].origin == SG_GUARD_RUNTIME_ASSERT && strcmp(g[0].text, "16 <= s0") == 0);
    CHECK(n == 1 && g[0].msg && strstr(g[0].msg, "torch/__init__.py:1619"));
    CHECK(find_dim(t, "['x']", 0) && strcmp(find_dim(t, "['x']", 0)->source,
                                            "L['args'][0][0].size()[0]") == 0);
    sg_trace_free(t);

    /* varargs: ['xs'][5] is the sixth positional argument */
    t = load_case("cases-2.6", "large_40_varargs_chain_derived_err", &err);
    CHECK(t != NULL);
    if (t) {
        const sg_input_dim *d = find_dim(t, "['xs'][5]", 0);
        CHECK(d && strcmp(d->source, "L['args'][0][5].size()[0]") == 0);
        sg_trace_free(t);
    }
}

static void test_unbacked(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "ok_nonzero", &err);
    const sg_symbol_info *u;
    const sg_guard *g;
    size_t n;

    CHECK(t != NULL);
    if (!t)
        return;
    u = find_symbol(t, "u0");
    CHECK(u && u->unbacked && u->size_like && !u->has_hint);
    CHECK(u && u->lo.v == 0 && u->hi.v == 100 && u->nsources == 0);
    CHECK(find_symbol(t, "s77") && !find_symbol(t, "s77")->unbacked);
    g = sg_trace_guards(t, &n);
    CHECK_EQ_INT(n, 1);
    CHECK(n == 1 && g[0].origin == SG_GUARD_RUNTIME_ASSERT);
    CHECK(n == 1 && strcmp(g[0].text, "u0 <= s77") == 0);
    CHECK(n == 1 && g[0].msg && strcmp(g[0].msg, "/usr/lib/python3/dist-packages/torch/__init__.py:2097") == 0);
    sg_trace_free(t);
}

static void test_strict(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_eq_add_strict", &err);
    const sg_input_dim *d;
    char buf[64];

    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(sg_trace_strict(t));
    d = find_dim(t, "['y']", 0);
    CHECK(d && strcmp(d->source, "L['y'].size()[0]") == 0);
    CHECK(d && strcmp(d->traced_source, "L['flat_args'][1].size()[0]") == 0);
    CHECK_EQ_STR(d ? show(buf, sizeof buf, d->value) : "", "s27");
    sg_trace_free(t);

    /* strict tracked_fakes also hold parameters: they are skipped */
    t = load_case("cases", "large_transformer_ok_strict", &err);
    CHECK(t != NULL);
    if (t) {
        d = find_dim(t, "['mask']", 0);
        CHECK(d && d->value && strcmp(d->traced_source, "L['flat_args'][1].size()[0]") == 0);
        sg_trace_free(t);
    }
}

static void test_no_shape_env(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_dim_min_gt_max", &err);
    size_t n;

    CHECK(t != NULL);
    if (t) {
        CHECK(!sg_trace_has_shape_env(t) && !sg_trace_has_flat_spec(t));
        sg_trace_inputs(t, &n);
        CHECK_EQ_INT(n, 0);
        CHECK(sg_trace_dynamic_shapes_json(t) == NULL && sg_trace_inputs_json(t) == NULL);
        sg_trace_free(t);
    }
    /* the spec could not be matched to the inputs: dims from inputs.flat, raw spec kept */
    t = load_case("cases", "err_spec_bad_keys", &err);
    CHECK(t != NULL);
    if (t) {
        const sg_input_dim *d = find_dim(t, "['x']", 0);
        CHECK(!sg_trace_has_shape_env(t) && !sg_trace_has_flat_spec(t));
        CHECK(d && d->kind == SG_SPEC_UNSET && d->size == 7 && !d->value);
        CHECK(sg_trace_dynamic_shapes_json(t) && strstr(sg_trace_dynamic_shapes_json(t), "\"inp\""));
        sg_trace_free(t);
    }
    /* a ShapeEnv exists but is not the main one */
    t = load_case("cases", "err_example_size0", &err);
    CHECK(t != NULL);
    if (t) {
        CHECK(!sg_trace_has_shape_env(t) && sg_trace_has_flat_spec(t));
        CHECK(find_dim(t, "['x']", 0) && find_dim(t, "['x']", 0)->size == 0);
        sg_trace_free(t);
    }
}

/* An input of a trace JSON without "source" (optional in docs/trace-format.md) gets the name the
 * capture would give it: the traced source, else L + path + .size()[dim]. Every input has one, so
 * torch's message (which names dims by it) never meets a NULL: fuzz_check found that crash
 * (tests/data/regress/check/input_without_source). */
static void test_source_default(void)
{
    static const char js[] =
        "{\"format\": \"shapegate-trace\", \"version\": 1, \"shape_env\": true, \"symbols\": [{\"name\": \"s0\", "
        "\"range\": [2, 40], \"sources\": [\"L['args'][0][0].size()[0]\"]}], \"inputs\": ["
        "{\"path\": \"['x']\", \"dim\": 0, \"size\": 6, \"traced_source\": \"L['args'][0][0].size()[0]\", "
        "\"value\": \"s0\", \"spec\": {\"kind\": \"dim\", \"name\": \"dx\", \"max\": 36}},"
        "{\"path\": \"['y']['b'][1]\", \"dim\": 2, \"size\": 6, \"value\": \"s0\"}], \"spec\": {\"flat\": true}}";
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    size_t n = 0;

    CHECK_MSG(sg_trace_load_json(&t, js, sizeof js - 1, &err) == 0, "%s", err.msg);
    if (!t)
        return;
    {
        const sg_input_dim *in = sg_trace_inputs(t, &n);
        CHECK_EQ_INT(n, 2);
        if (n == 2) {
            CHECK_EQ_STR(in[0].source, "L['args'][0][0].size()[0]");
            CHECK_EQ_STR(in[1].source, "L['y']['b'][1].size()[2]");
        }
    }
    sg_trace_free(t);
}

static void test_big_integers(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases-2.6", "large_transformer_8layers_auto", &err), *t2 = NULL;
    const sg_guard *g;
    size_t n;
    bool found = false;
    char *js = NULL, buf[128];

    CHECK(t != NULL);
    if (!t)
        return;
    g = sg_trace_guards(t, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(g[i].text, "Ne(s2, 9223372036854775807)") == 0) {
            found = true;
            CHECK_EQ_STR(show(buf, sizeof buf, g[i].expr), "Ne(s2, 9223372036854775807)");
            CHECK(sg_expr_int_value(sg_expr_arg(g[i].expr, 1)) == (sg_int)9223372036854775807LL
                  || sg_expr_int_value(sg_expr_arg(g[i].expr, 0)) == (sg_int)9223372036854775807LL);
        }
    CHECK(found);
    CHECK(sg_trace_to_json(&js, t, &err) == 0 && strstr(js, "9223372036854775807"));
    sg_free(js);
    sg_trace_free(t);

    /* ranges and hints beyond 2^53 and beyond 64 bits stay exact through the JSON format */
    {
        static const char big[] =
            "{\"format\": \"shapegate-trace\", \"version\": 1, \"symbols\": ["
            "{\"name\": \"s0\", \"range\": [-170141183460469231731687303715884105728, "
            "170141183460469231731687303715884105727], \"hint\": 9007199254740993}]}";
        const sg_symbol_info *s;
        CHECK_MSG(sg_trace_load_json(&t2, big, strlen(big), &err) == 0, "%s", err.msg);
        s = t2 ? sg_trace_symbols(t2, &n) : NULL;
        CHECK(s && n == 1 && s[0].hint == (sg_int)9007199254740993LL);
        CHECK(s && s[0].lo.v == SG_INT_MIN && s[0].hi.v == SG_INT_MAX);
        if (t2 && sg_trace_to_json(&js, t2, &err) == 0) {
            CHECK(strstr(js, "[-170141183460469231731687303715884105728, 170141183460469231731687303715884105727]"));
            CHECK(strstr(js, "\"hint\": 9007199254740993"));
        }
        sg_free(js);
        sg_trace_free(t2);
    }
}

/* ---- util/json.h --------------------------------------------------------------------------- */

/* sg_strmap (util/strmap.h): slots stay with their key through the table's growth; a missing
 * key has none; a disposed map is empty and usable again. */
static void test_strmap(void)
{
    static char names[600][8];
    sg_strmap m = SG_STRMAP_INIT;
    size_t i, *at;
    CHECK(sg_strmap_get(&m, "d0") == SIZE_MAX);
    for (i = 0; i < 600; i++) {
        snprintf(names[i], sizeof names[i], "d%zu", i);
        at = sg_strmap_slot(&m, names[i]);
        CHECK(at && *at == SIZE_MAX);
        if (at)
            *at = 1000 + i;
    }
    at = sg_strmap_slot(&m, "d17"); /* an equal string, not the same pointer */
    CHECK(at && *at == 1017);
    CHECK_EQ_INT((int)m.n, 600);
    for (i = 0; i < 600; i++)
        CHECK_MSG(sg_strmap_get(&m, names[i]) == 1000 + i, "%s", names[i]);
    CHECK(sg_strmap_get(&m, "d600") == SIZE_MAX && sg_strmap_get(&m, "") == SIZE_MAX);
    sg_strmap_dispose(&m);
    CHECK(m.n == 0 && sg_strmap_get(&m, "d1") == SIZE_MAX);
    at = sg_strmap_slot(&m, "");
    CHECK(at && *at == SIZE_MAX);
    sg_strmap_dispose(&m);
    sg_strmap_dispose(NULL);
}

static void test_json_helpers(void)
{
    sg_error err = SG_ERROR_INIT;
    cJSON *j = NULL;
    sg_int v;
    sg_buf b;
    char deep[2100];
    static const char text[] = "{\"a\": [9223372036854775807, -12345678901234567890, 3, 1.5, 1e300,"
                               " \"12345678901234567890\", \"x\"], \"s\": \"q\\\"\\n\\u0001\"}";

    CHECK(sg__json_parse(&j, text, strlen(text), SG_JSON_MAX_BYTES, 8, "t", &err) == 0);
    if (j) {
        const cJSON *a = sg__json_get(j, "a");
        CHECK(sg__json_int(cJSON_GetArrayItem(a, 0), &v) && v == (sg_int)9223372036854775807LL);
        CHECK(sg__json_int(cJSON_GetArrayItem(a, 1), &v) && v == -(sg_int)12345678901234567890ULL);
        CHECK(sg__json_int(cJSON_GetArrayItem(a, 2), &v) && v == 3);
        CHECK(!sg__json_int(cJSON_GetArrayItem(a, 3), &v));
        CHECK(!sg__json_int(cJSON_GetArrayItem(a, 4), &v));
        CHECK(sg__json_int(cJSON_GetArrayItem(a, 5), &v) && v == (sg_int)12345678901234567890ULL);
        CHECK(!sg__json_int(cJSON_GetArrayItem(a, 6), &v));
        CHECK(!sg__json_int(NULL, &v));
        CHECK(sg__json_get(a, "x") == NULL && sg__json_get(NULL, "a") == NULL);
        CHECK(sg__json_str(sg__json_get(j, "a")) == NULL);
        sg_buf_init(&b, 1 << 20);
        sg__json_put_value(&b, j);
        /* big integer literals come back as numbers, digit for digit; quoted ones stay strings */
        CHECK_EQ_STR(b.data, "{\"a\":[9223372036854775807,-12345678901234567890,3,1.5,"
                             "1.0000000000000001e+300,\"12345678901234567890\",\"x\"],"
                             "\"s\":\"q\\\"\\n\\u0001\"}");
        sg_buf_dispose(&b);
        cJSON_Delete(j);
        j = NULL;
    }
    sg_buf_init(&b, 100);
    sg__json_put_int(&b, SG_INT_MIN);
    CHECK_EQ_STR(b.data, "-170141183460469231731687303715884105728");
    sg_buf_dispose(&b);

    /* errors: syntax with its byte offset, trailing text, empty, depth, size */
    CHECK_EQ_INT(sg__json_parse(&j, "{\"a\": [1, 2,, 3]}", 17, SG_JSON_MAX_BYTES, 8, "f.json", &err),
                 SG_EINVALID);
    CHECK_EQ_STR(err.msg, "f.json: invalid JSON at byte 12 (line 1, column 13)");
    CHECK_EQ_INT(sg__json_parse(&j, "[12345678901234567890,\n x]", 26, SG_JSON_MAX_BYTES, 8, "f",
                                &err), SG_EINVALID);
    CHECK_EQ_STR(err.msg, "f: invalid JSON at byte 24 (line 2, column 2)");
    CHECK_EQ_INT(sg__json_parse(&j, "{} {}", 5, SG_JSON_MAX_BYTES, 8, "f", &err), SG_EINVALID);
    CHECK_EQ_STR(err.msg, "f: invalid JSON: unexpected text after the value at byte 3 (line 1, column 4)");
    CHECK_EQ_INT(sg__json_parse(&j, "  \n", 3, SG_JSON_MAX_BYTES, 8, "f", &err), SG_EINVALID);
    CHECK_EQ_STR(err.msg, "f: empty JSON text");
    /* a leading-zero literal is not quoted (cJSON reads it as a number) */
    CHECK_EQ_INT(sg__json_parse(&j, "00000000000000000001", 20, SG_JSON_MAX_BYTES, 8, "f", &err), 0);
    CHECK(cJSON_IsNumber(j) && sg__json_int(j, &v) && v == 1);
    cJSON_Delete(j);
    j = NULL;
    memset(deep, '[', 1000);
    memset(deep + 1000, ']', 1000);
    CHECK_EQ_INT(sg__json_parse(&j, deep, 2000, SG_JSON_MAX_BYTES, 512, "f", &err), SG_ELIMIT);
    CHECK_EQ_STR(err.msg, "f: JSON nested deeper than 512 levels at byte 512 (line 1, column 513)");
    CHECK_EQ_INT(sg__json_parse(&j, deep, 1024, SG_JSON_MAX_BYTES, 512, "f", &err), SG_ELIMIT);
    /* brackets inside strings do not count */
    deep[0] = '"';
    memset(deep + 1, '[', 999);
    deep[1000] = '"';
    CHECK_EQ_INT(sg__json_parse(&j, deep, 1001, SG_JSON_MAX_BYTES, 4, "f", &err), 0);
    cJSON_Delete(j);
    j = NULL;
    CHECK_EQ_INT(sg__json_parse(&j, "[1, 2]", 6, 5, 8, "f", &err), SG_ELIMIT);
    CHECK(j == NULL);
    /* a string ends at a quote after an even run of backslashes (escaped backslashes), not at an
     * escaped quote: brackets and big literals inside it count for nothing, those after it do */
    {
        static const char esc[] = "[\"a\\\\\", \"[[[12345678901234567890\\\"]]\", 12345678901234567890, \"\\\\\"]";
        CHECK_EQ_INT(sg__json_parse(&j, esc, strlen(esc), SG_JSON_MAX_BYTES, 2, "f", &err), 0);
        if (j) {
            CHECK_EQ_STR(cJSON_GetArrayItem(j, 0)->valuestring, "a\\");
            CHECK_EQ_STR(cJSON_GetArrayItem(j, 1)->valuestring, "[[[12345678901234567890\"]]");
            CHECK(sg__json_int(cJSON_GetArrayItem(j, 2), &v) && v == (sg_int)12345678901234567890ULL);
            CHECK_EQ_STR(cJSON_GetArrayItem(j, 3)->valuestring, "\\");
            cJSON_Delete(j);
            j = NULL;
        }
        /* an unterminated string after an escaped quote: cJSON's error, no read past the end */
        CHECK_EQ_INT(sg__json_parse(&j, "[\"a\\\"]", 6, SG_JSON_MAX_BYTES, 8, "f", &err), SG_EINVALID);
        CHECK(j == NULL);
    }
}

/* ---- hostile inputs ------------------------------------------------------------------------ */

static const char good_case[] =
    "{\"torch_version\": \"2.14.1\", \"strict\": false, \"inputs\": {\"arg_names\": [\"x\"], "
    "\"args\": [], \"kwargs\": {}, \"flat\": [{\"path\": \"['x']\", \"tensor\": [8], \"dtype\": "
    "\"float32\"}], \"signature\": \"(x)\"}, \"dynamic_shapes\": {\"x\": {\"0\": {\"name\": \"dx\", "
    "\"min\": 0, \"max\": \"oo\"}}}, \"dynamic_shapes_flat\": [{\"path\": \"['x']\", \"dim\": 0, "
    "\"size\": 8, \"spec\": SPEC}]}";

static const char good_guards[] =
    "{\"shape_envs\": [{\"var_to_range\": {\"s0\": RANGE}, \"var_to_sources\": {\"s0\": "
    "[\"L['x'].size()[0]\"]}, \"backed_var_to_val\": {\"s0\": 8}, \"guards\": [{\"expr\": GUARD, "
    "\"user_loc\": null, \"framework_loc\": null, \"sloc\": null}], \"tracked_fakes\": "
    "[{\"source\": \"L['x']\", \"fake\": {\"tensor\": [\"s0\"]}}]}], \"main_shape_env_index\": 0}";

/* `tmpl` with the placeholder `key` replaced by `val` (only the first occurrence); static buffer. */
static const char *subst(const char *tmpl, const char *key, const char *val)
{
    static char out[4][8192];
    static int which;
    char *o = out[which++ & 3];
    const char *p = strstr(tmpl, key);
    if (!p) {
        snprintf(o, 8192, "%s", tmpl);
        return o;
    }
    snprintf(o, 8192, "%.*s%s%s", (int)(p - tmpl), tmpl, val, p + strlen(key));
    return o;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[1200];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

/* Write a capture folder NAME under the temp dir; NULL text leaves that file out. */
static const char *make_case(const char *name, const char *case_json, const char *guards_json)
{
    static char dir[1024];
    char path[1100];
    mkdir(SG_TRACE_TMP, 0755);
    snprintf(dir, sizeof dir, "%s/%s", SG_TRACE_TMP, name);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/case.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/guards.json", dir);
    unlink(path);
    if (case_json)
        write_file(dir, "case.json", case_json);
    if (guards_json)
        write_file(dir, "guards.json", guards_json);
    return dir;
}

/* Fill the good templates: spec, range, guard. */
static const char *case_with(const char *spec)
{
    return subst(good_case, "SPEC", spec);
}

static const char *guards_with(const char *range, const char *guard)
{
    return subst(subst(good_guards, "RANGE", range), "GUARD", guard);
}

/* Load folder `name` made of the given texts; expect `code` and a message containing `want`. */
static void expect_dir(const char *name, const char *cj, const char *gj, int code, const char *want)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    const char *dir = make_case(name, cj, gj);
    int rc = sg_trace_load_dir(&t, dir, &err);

    CHECK_MSG(rc == code, "%s: rc %d (%s), expected %d", name, rc, err.msg, code);
    if (code) {
        CHECK(t == NULL);
        CHECK_MSG(strstr(err.msg, want) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err.msg,
                  want);
        CHECK_MSG(one_line(err.msg), "%s: not one line", name);
    }
    sg_trace_free(t);
}

static void test_hostile_dirs(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    static char good_g[8192], good_c[8192];

    /* copies: subst() hands out rotating static buffers */
    snprintf(good_g, sizeof good_g, "%s", guards_with("[2, \"oo\"]", "\"Eq(Mod(s0, 2), 0)\""));
    snprintf(good_c, sizeof good_c, "%s", case_with("{\"name\": \"dx\", \"min\": 0, \"max\": \"oo\"}"));

    /* the templates themselves load */
    expect_dir("good", good_c, good_g, 0, NULL);
    t = NULL;
    CHECK_EQ_INT(sg_trace_load_dir(&t, SG_TRACE_TMP "/good", &err), 0);
    if (t) {
        size_t n;
        const sg_input_dim *d = sg_trace_inputs(t, &n);
        CHECK(n == 1 && d[0].value && d[0].kind == SG_SPEC_DIM);
        sg_trace_free(t);
        t = NULL;
    }

    CHECK_EQ_INT(sg_trace_load_dir(&t, SG_TRACE_TMP "/no-such-folder", &err), SG_EIO);
    CHECK(strstr(err.msg, "no-such-folder/case.json: No such file or directory") && one_line(err.msg));
    expect_dir("no_guards", good_c, NULL, SG_EIO, "no_guards/guards.json: No such file");
    expect_dir("bad_json", good_c, "{\"shape_envs\": [}", SG_EINVALID,
               "bad_json/guards.json: invalid JSON at byte 16 (line 1, column 17)");
    expect_dir("empty", good_c, "", SG_EINVALID, "empty/guards.json: empty JSON text");
    expect_dir("not_object", "[1]", good_g, SG_EINVALID, "not_object/case.json: (top level): expected an object");
    /* JSON that is not a recording at all: one line naming the file and what is missing */
    expect_dir("hello_case", "{\"hello\": \"world\"}", good_g, SG_EINVALID,
               "hello_case/case.json: inputs: missing: not a torch.export capture");
    expect_dir("hello_guards", good_c, "{\"hello\": \"world\"}", SG_EINVALID,
               "hello_guards/guards.json: shape_envs: missing: not a recording of torch's ShapeEnvs");
    expect_dir("bad_guard", good_c, guards_with("[2, \"oo\"]", "\"foo(s0) == 1\""), SG_EUNSUPPORTED,
               "bad_guard/guards.json: shape_envs[0].guards[0].expr: column 1: unknown function 'foo'");
    expect_dir("bad_guard2", good_c, guards_with("[2, \"oo\"]", "\"Eq(s0, \""), SG_EINVALID,
               "bad_guard2/guards.json: shape_envs[0].guards[0].expr: column 8:");
    expect_dir("int_guard", good_c, guards_with("[2, \"oo\"]", "\"s0 + 1\""), SG_EINVALID,
               "shape_envs[0].guards[0].expr: 's0 + 1' is not a boolean expression");
    expect_dir("guard_type", good_c, guards_with("[2, \"oo\"]", "17"), SG_EINVALID,
               "shape_envs[0].guards[0].expr: expected a string");
    expect_dir("range_type", good_c, guards_with("\"x\"", "\"True\""), SG_EINVALID,
               "guards.json: shape_envs[0].var_to_range['s0']: expected [lo, hi]");
    expect_dir("range_bound", good_c, guards_with("[2, \"many\"]", "\"True\""), SG_EINVALID,
               "var_to_range['s0']: expected an integer, \"oo\" or \"-oo\"");
    expect_dir("range_float", good_c, guards_with("[2.5, 3]", "\"True\""), SG_EINVALID,
               "var_to_range['s0']: expected an integer");
    expect_dir("spec_kind", case_with("\"SOMETIMES\""), good_g, SG_EINVALID,
               "case.json: dynamic_shapes_flat[0].spec: unknown spec 'SOMETIMES'");
    expect_dir("spec_obj", case_with("{\"nam\": 1}"), good_g, SG_EINVALID,
               "dynamic_shapes_flat[0].spec: unknown spec object");
    expect_dir("spec_bound", case_with("{\"name\": \"dx\", \"min\": \"lots\"}"), good_g, SG_EINVALID,
               "dynamic_shapes_flat[0].spec: min: expected an integer");
    expect_dir("spec_derived", case_with("{\"derived\": \"2*dx\", \"expr\": \"2*\", \"root\": "
                                         "{\"name\": \"dx\", \"min\": 2, \"max\": 8}}"),
               good_g, SG_EINVALID, "dynamic_shapes_flat[0].spec.expr: column 3:");
    expect_dir("main_index", good_c,
               "{\"shape_envs\": [], \"main_shape_env_index\": 3}", SG_EINVALID,
               "main_shape_env_index: not the index of a shape_envs entry");
    expect_dir("envs_type", good_c, "{\"shape_envs\": 7, \"main_shape_env_index\": 0}", SG_EINVALID,
               "guards.json: shape_envs: expected an array");
    expect_dir("strict_type", subst(good_c, "\"strict\": false", "\"strict\": \"no\""), good_g,
               SG_EINVALID, "case.json: strict: expected true or false");
    expect_dir("bad_symbol", good_c, subst(good_g, "\"var_to_range\": {\"s0\"", "\"var_to_range\": {\"Max(\""),
               SG_EINVALID, "var_to_range['Max(']: 'Max(' is not a symbol name");
    expect_dir("bad_repl", good_c,
               subst(good_g, "\"guards\": [", "\"replacements\": {\"s0\": {\"expr\": \"s0 +* 2\"}}, \"guards\": ["),
               SG_EINVALID, "shape_envs[0].replacements['s0'].expr: column");
    expect_dir("bad_fake", good_c, subst(good_g, "[\"s0\"]}}", "[\"bar(1)\"]}}"), SG_EUNSUPPORTED,
               "tracked_fakes['L['x']'].fake.tensor[0]: column 1: unknown function 'bar'");
    expect_dir("fakes_type", good_c, subst(good_g, "\"tracked_fakes\": [", "\"tracked_fakes\": 5, \"x\": ["),
               SG_EINVALID, "fakes_type/guards.json: shape_envs[0].tracked_fakes: expected an array");
    expect_dir("spec_bound_type", case_with("{\"name\": \"dx\", \"max\": [3]}"), good_g, SG_EINVALID,
               "case.json: dynamic_shapes_flat[0].spec: max: expected an integer, \"oo\" or \"-oo\"");
    expect_dir("bad_hint", good_c, subst(good_g, "{\"s0\": 8}", "{\"s0\": \"eight\"}"), SG_EINVALID,
               "backed_var_to_val['s0']: expected an integer hint");
    {
        /* nesting 600 deep inside an ignored field */
        static char deep[4096];
        char *p = deep;
        p += sprintf(p, "{\"x\": ");
        for (int i = 0; i < 600; i++)
            *p++ = '[';
        for (int i = 0; i < 600; i++)
            *p++ = ']';
        sprintf(p, "}");
        expect_dir("deep", good_c, deep, SG_ELIMIT, "deep/guards.json: JSON nested deeper than 512 levels");
    }
    {
        /* a file over the 64 MiB limit (sparse) */
        char path[1200];
        const char *dir = make_case("huge", good_c, NULL);
        FILE *f;
        snprintf(path, sizeof path, "%s/guards.json", dir);
        f = fopen(path, "wb");
        if (f) {
            CHECK(fseek(f, (long)SG_TRACE_MAX_FILE, SEEK_SET) == 0);
            fputc(' ', f);
            fclose(f);
        }
        CHECK_EQ_INT(sg_trace_load_dir(&t, dir, &err), SG_ELIMIT);
        CHECK(strstr(err.msg, "huge/guards.json: larger than 67108864 bytes") && one_line(err.msg));
        unlink(path);
    }
}

/* Load a JSON trace text; expect `code` and a message containing `want`. */
static void expect_json(const char *text, int code, const char *want)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    int rc = sg_trace_load_json(&t, text, strlen(text), &err);

    CHECK_MSG(rc == code, "rc %d (%s), expected %d for %s", rc, err.msg, code, text);
    if (code) {
        CHECK(t == NULL);
        CHECK_MSG(strstr(err.msg, want) != NULL, "message \"%s\" lacks \"%s\"", err.msg, want);
        CHECK_MSG(one_line(err.msg), "not one line: %s", err.msg);
    }
    sg_trace_free(t);
}

#define HDR "{\"format\": \"shapegate-trace\", \"version\": 1, "

static void test_hostile_json(void)
{
    expect_json(HDR "\"symbols\": []}", 0, NULL);
    expect_json("[]", SG_EINVALID, "trace JSON: (top level): expected an object");
    expect_json("{\"format\": \"other\"}", SG_EINVALID, "format: not a shapegate trace");
    expect_json("{\"format\": \"shapegate-trace\"}", SG_EINVALID, "version: expected a positive integer");
    expect_json("{\"format\": \"shapegate-trace\", \"version\": 2}", SG_EUNSUPPORTED,
                "version: format version 2 is newer than this shapegate reads (1)");
    expect_json(HDR "\"strict\": 1}", SG_EINVALID, "strict: expected true or false");
    expect_json(HDR "\"symbols\": {}}", SG_EINVALID, "symbols: expected an array");
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\"}, {\"name\": \"s0\"}]}", SG_EINVALID,
                "symbols[1]: symbol 's0' listed twice");
    expect_json(HDR "\"symbols\": [{\"name\": \"2\"}]}", SG_EINVALID, "symbols[0]: '2' is not a symbol name");
    expect_json(HDR "\"symbols\": [{}]}", SG_EINVALID, "symbols[0]: name: missing");
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\", \"range\": [1, \"oo\"]}]}", SG_EINVALID,
                "symbols[0]: range: expected an integer, \"int_oo\" or \"-int_oo\"");
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\", \"hint\": 1.5}]}", SG_EINVALID,
                "symbols[0]: hint: expected an integer or null");
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\", \"replacement\": \"s0 <\"}]}", SG_EINVALID,
                "symbols[0].replacement: column");
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\", \"sources\": [1]}]}", SG_EINVALID,
                "symbols[0]: sources: expected strings");
    expect_json(HDR "\"guards\": [{\"origin\": \"shape\", \"expr\": \"s0\"}]}", SG_EINVALID,
                "guards[0].expr: 's0' is not a boolean expression");
    expect_json(HDR "\"guards\": [{\"origin\": \"elsewhere\", \"expr\": \"True\"}]}", SG_EINVALID,
                "guards[0]: origin: expected \"shape\" or \"runtime_assert\"");
    expect_json(HDR "\"guards\": [{\"origin\": \"shape\", \"expr\": \"Foo(s0)\"}]}", SG_EUNSUPPORTED,
                "trace JSON: guards[0].expr: column 1: unknown function 'Foo'");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": -1, \"size\": 3}]}", SG_EINVALID,
                "inputs[0]: dim: expected a dim number");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"spec\": "
                "{\"kind\": \"maybe\"}}]}", SG_EINVALID, "inputs[0]: spec.kind: unknown kind 'maybe'");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"spec\": "
                "{\"kind\": \"dim\", \"name\": \"dx\", \"min\": {\"x\": 1}}}]}", SG_EINVALID,
                "inputs[0]: min: expected {\"unavailable\": text}");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"value\": \"x > 1\"}]}",
                SG_EINVALID, "inputs[0]: value: 'x > 1' is not an integer expression");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"spec\": "
                "{\"kind\": \"derived\", \"name\": \"d\", \"expr\": \"dx//0\", \"root\": {\"name\": \"dx\"}}}]}",
                SG_EINVALID, "inputs[0].spec.expr: column 3: division by zero");
    expect_json(HDR "\"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"spec\": "
                "{\"kind\": \"derived\", \"name\": \"d\", \"expr\": \"2*dx + int_oo\", \"root\": {\"name\": \"dx\"}}}]}",
                SG_EINVALID, "inputs[0]: spec.expr: '2*dx + int_oo' is not A*dx + B with integers A >= 1 and B");
    expect_json(HDR "\"guards\": [{\"origin\": \"shape\", \"expr\": \"Eq(s0, zoo)\"}]}", SG_EINVALID,
                "guards[0].expr: column 8: 'zoo' (not a number) is not a value");
    expect_json(HDR "\"guards\": [{\"origin\": \"shape\", \"expr\": \"Eq(s0, 2**200)\"}]}", SG_ELIMIT,
                "guards[0].expr:");
    expect_json(HDR "\"spec\": []}", SG_EINVALID, "spec: expected an object");
    expect_json(HDR "\"symbols\": [", SG_EINVALID, "trace JSON: invalid JSON at byte");
    /* control characters of hostile names do not break the one-line message */
    expect_json(HDR "\"symbols\": [{\"name\": \"s0\\nnext line\"}]}", SG_EINVALID,
                "symbols[0]: 's0?next line' is not a symbol name");
}

/* Every allocation failure on the way is SG_ENOMEM and leaks nothing (ASan checks the leaks). */
static void test_alloc_failures(void)
{
    char path[512];
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL, *t2 = NULL;
    char *js = NULL;
    long n, steps[3] = {0, 0, 0};
    int rc = -1;

    snprintf(path, sizeof path, "%s/cases/ok_derived_spec_2x", SG_CORPUS);
    for (n = 0; n < 100000 && rc != 0; n++) {
        sg_alloc_fail_after(n);
        rc = sg_trace_load_dir(&t, path, &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "fail after %ld: rc %d: %s", n, rc, err.msg);
        CHECK(rc == 0 || t == NULL);
        if (rc != 0 && rc != SG_ENOMEM)
            break;
    }
    steps[0] = n;
    CHECK(t != NULL);
    if (!t)
        return;
    rc = -1;
    for (n = 0; n < 100000 && rc != 0; n++) {
        sg_alloc_fail_after(n);
        rc = sg_trace_to_json(&js, t, &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "to_json, fail after %ld: rc %d: %s", n, rc, err.msg);
        if (rc != 0 && rc != SG_ENOMEM)
            break;
    }
    steps[1] = n;
    CHECK(js != NULL);
    rc = -1;
    for (n = 0; js && n < 100000 && rc != 0; n++) {
        sg_alloc_fail_after(n);
        rc = sg_trace_load_json(&t2, js, strlen(js), &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "load_json, fail after %ld: rc %d: %s", n, rc, err.msg);
        if (rc != 0 && rc != SG_ENOMEM)
            break;
    }
    steps[2] = n;
    CHECK(t2 != NULL);
    printf("allocation failures: every earlier failure is SG_ENOMEM; load_dir, to_json and "
           "load_json succeed from %ld, %ld and %ld allowed allocations\n",
           steps[0] - 1, steps[1] - 1, steps[2] - 1);
    sg_trace_free(t2);
    sg_free(js);
    sg_trace_free(t);
}

/* sg_trace_load() on a folder and on a JSON file. */
static void test_load_path(void)
{
    char path[512], file[600];
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL, *t2 = NULL;
    char *a = NULL, *b = NULL;
    FILE *f;

    snprintf(path, sizeof path, "%s/cases/err_eq_add", SG_CORPUS);
    CHECK_EQ_INT(sg_trace_load(&t, path, &err), 0);
    if (!t)
        return;
    CHECK_EQ_INT(sg_trace_to_json(&a, t, &err), 0);
    mkdir(SG_TRACE_TMP, 0755);
    snprintf(file, sizeof file, "%s/err_eq_add.trace.json", SG_TRACE_TMP);
    f = fopen(file, "wb");
    if (f && a) {
        fputs(a, f);
        fclose(f);
        CHECK_EQ_INT(sg_trace_load(&t2, file, &err), 0);
        if (t2 && sg_trace_to_json(&b, t2, &err) == 0)
            CHECK_EQ_STR(a, b);
    }
    sg_trace_free(t2);
    t2 = NULL;
    CHECK_EQ_INT(sg_trace_load(&t2, SG_TRACE_TMP "/nothing-here.json", &err), SG_EIO);
    CHECK(strstr(err.msg, "nothing-here.json: No such file or directory"));
    sg_free(a);
    sg_free(b);
    sg_trace_free(t);
    sg_trace_free(t2);
    unlink(file);
}

/* ---- spec overrides (sg_trace_with_dims, sg_trace_with_spec_json) ------------------------------ */

/* A trace is never changed: each override gives a new one. These put it in place of `*t` on
 * success (and leave `*t` as it was on failure), so the checks read as a sequence of edits. */
static int replace_trace(sg_trace **t, sg_trace *next, int rc)
{
    if (rc == 0) {
        sg_trace_free(*t);
        *t = next;
    }
    return rc;
}

static int override_dims(sg_trace **t, const char *const *items, size_t n, sg_error *err)
{
    sg_trace *next = NULL;
    int rc = sg_trace_with_dims(&next, *t, items, n, err);
    return replace_trace(t, next, rc);
}

/* Apply one override item; returns the status. */
static int override1(sg_trace **t, const char *item, sg_error *err)
{
    const char *items[1];
    items[0] = item;
    return override_dims(t, items, 1, err);
}

static int set_spec(sg_trace **t, const char *json, size_t len, const char *what, sg_error *err)
{
    sg_trace *next = NULL;
    int rc = sg_trace_with_spec_json(&next, *t, json, len, what, err);
    return replace_trace(t, next, rc);
}

static int load_spec(sg_trace **t, const char *path, sg_error *err)
{
    sg_trace *next = NULL;
    int rc = sg_trace_with_spec_file(&next, *t, path, err);
    return replace_trace(t, next, rc);
}

/* Whether bound `b` is the finite value `v`. */
static bool is_bound(sg_bound b, long long v) { return b.inf == 0 && b.v == v; }

static void test_override_forms(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_check_ge", &err);
    const sg_input_dim *d0, *d1;

    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!sg_trace_spec_overridden(t));
    CHECK_EQ_INT(override1(&t, "x.0=dx:16..100", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    d0 = find_dim(t, "['x']", 0);
    d1 = find_dim(t, "['x']", 1);
    CHECK(d0 && d1);
    if (!d0 || !d1) {
        sg_trace_free(t);
        return;
    }
    CHECK(d0->kind == SG_SPEC_DIM && d0->has_bounds && is_bound(d0->min, 16) && is_bound(d0->max, 100));
    CHECK_EQ_STR(d0->name, "dx");
    CHECK_EQ_STR(d0->source, "L['x'].size()[0]"); /* where it is and what torch traced stay */
    CHECK(d0->value != NULL && d0->size == 20);
    CHECK(sg_trace_has_flat_spec(t) && sg_trace_spec_overridden(t));
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":16,\"max\":100}}}");

    /* empty bounds: the defaults 0 and int_oo */
    CHECK_EQ_INT(override1(&t, "x.0=dx:..", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(is_bound(d0->min, 0) && d0->max.inf == 1);
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":0,\"max\":\"oo\"}}}");
    CHECK_EQ_INT(override1(&t, "x.0=dx:5..", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(is_bound(d0->min, 5) && d0->max.inf == 1);
    CHECK_EQ_INT(override1(&t, "x.0=dx:..int_oo", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(is_bound(d0->min, 0) && d0->max.inf == 1);
    CHECK_EQ_INT(override1(&t, " x.0 = dx : 3 .. 7 ", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(is_bound(d0->min, 3) && is_bound(d0->max, 7));
    /* hints, static, sizes; the bracketed path; the source name; Dim. prefix */
    CHECK_EQ_INT(override1(&t, "['x'].0=AUTO", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_AUTO && !d0->has_bounds && d0->name == NULL);
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":\"AUTO\"}}");
    CHECK_EQ_INT(override1(&t, "x.0=Dim.DYNAMIC:4..64", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_DYNAMIC && d0->has_bounds && is_bound(d0->min, 4) && is_bound(d0->max, 64));
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"hint\":\"DYNAMIC\",\"min\":4,\"max\":64}}}");
    CHECK_EQ_INT(override1(&t, "x.0=AUTO:..8", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_AUTO && d0->min.inf == -1 && is_bound(d0->max, 8));
    CHECK_EQ_INT(override1(&t, "L['x'].size()[0]=STATIC", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_STATIC && !d0->has_static_size);
    CHECK_EQ_INT(override1(&t, "x.1=3", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d1->kind == SG_SPEC_STATIC && d1->has_static_size && d1->static_size == 3);
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":\"STATIC\",\"1\":3}}");
    sg_trace_free(t);

    /* a bare name is the Dim the trace defines (dx: 2..100 here) */
    t = load_case("cases", "err_check_ge", &err);
    if (!t)
        return;
    CHECK_EQ_INT(override1(&t, "x.1=dx", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    d1 = find_dim(t, "['x']", 1);
    CHECK(d1 && d1->kind == SG_SPEC_DIM && is_bound(d1->min, 2) && is_bound(d1->max, 100));
    /* ... else Dim(name) with the defaults */
    CHECK_EQ_INT(override1(&t, "x.1=other", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d1 && d1->kind == SG_SPEC_DIM && is_bound(d1->min, 0) && d1->max.inf == 1);
    sg_trace_free(t);
}

static void test_override_derived(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "ok_derived_spec_2x", &err);
    const sg_input_dim *x, *y;
    char buf[64];
    const char *set1[2] = {"x.0=2*b+1", "y.0=b:1..8"};

    CHECK(t != NULL);
    if (!t)
        return;
    x = find_dim(t, "['x']", 0);
    y = find_dim(t, "['y']", 0);
    CHECK(x && y);
    if (!x || !y) {
        sg_trace_free(t);
        return;
    }
    /* the root's bounds come from the trace's Dim dx: 2..32 */
    CHECK_EQ_INT(override1(&t, "y.0=2*dx+1", &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(y->kind == SG_SPEC_DERIVED);
    CHECK_EQ_STR(y->name, "2*dx + 1");
    CHECK_EQ_STR(show(buf, sizeof buf, y->derived), "2*dx + 1");
    CHECK_EQ_STR(y->root_name, "dx");
    CHECK(is_bound(y->root_min, 2) && is_bound(y->root_max, 32));
    CHECK(is_bound(y->min, 5) && is_bound(y->max, 65) && !y->min_unavailable);
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t),
                 "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":2,\"max\":32}},\"y\":{\"0\":{\"derived\":\"2*dx + 1\","
                 "\"expr\":\"2*dx + 1\",\"root\":{\"name\":\"dx\",\"min\":2,\"max\":32},\"min\":5,\"max\":65}}}");
    /* a range given for dx redefines it everywhere: the derived bounds follow */
    CHECK_EQ_INT(override1(&t, "x.0=dx:4..16", &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(is_bound(x->min, 4) && is_bound(x->max, 16));
    CHECK(is_bound(y->root_min, 4) && is_bound(y->root_max, 16) && is_bound(y->min, 9) && is_bound(y->max, 33));
    /* a negative derived min: torch's note, and -int_oo */
    CHECK_EQ_INT(override1(&t, "y.0=dx - 5", &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(y->kind == SG_SPEC_DERIVED && y->min.inf == -1 && y->min_unavailable && is_bound(y->max, 11));
    CHECK(y->min_unavailable && strstr(y->min_unavailable, "Expected derived min value of dx - 5 to be >= 0")
          && strstr(y->min_unavailable, "(currently 4)"));
    /* an expression that is just the name is the Dim itself */
    CHECK_EQ_INT(override1(&t, "y.0=1*dx+0", &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(y->kind == SG_SPEC_DIM && strcmp(y->name, "dx") == 0 && is_bound(y->min, 4));
    /* a set: the root's range from another item, whatever the order */
    CHECK_EQ_INT(override_dims(&t, set1, 2, &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(x->kind == SG_SPEC_DERIVED && strcmp(x->root_name, "b") == 0);
    CHECK(is_bound(x->root_min, 1) && is_bound(x->root_max, 8) && is_bound(x->min, 3) && is_bound(x->max, 17));
    CHECK(y->kind == SG_SPEC_DIM && is_bound(y->min, 1) && is_bound(y->max, 8));
    /* a root's range alone, NAME:MIN..MAX */
    {
        const char *set2[2] = {"y.0=3*r", "r:2..5"};
        CHECK_EQ_INT(override_dims(&t, set2, 2, &err), 0);
        (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
        CHECK(y->kind == SG_SPEC_DERIVED && is_bound(y->root_min, 2) && is_bound(y->root_max, 5));
        CHECK(is_bound(y->min, 6) && is_bound(y->max, 15));
    }
    /* a root nobody defines: the defaults 0 .. int_oo */
    CHECK_EQ_INT(override1(&t, "x.0=4*q - 3", &err), 0);
    (void)(x = find_dim(t, "['x']", 0), y = find_dim(t, "['y']", 0));
    CHECK(x->kind == SG_SPEC_DERIVED && x->root_min.inf == 0 && x->root_min.v == 0 && x->root_max.inf == 1);
    CHECK(x->min.inf == -1 && x->min_unavailable && x->max.inf == 1);
    sg_trace_free(t);
}

static void test_override_paths(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "ok_nested_dict_list", &err);
    const sg_input_dim *d;
    const char *set[2] = {"inputs.b.1.1=T:0..16", "['inputs']['b'][1].0=B"};

    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_INT(override_dims(&t, set, 2, &err), 0);
    d = find_dim(t, "['inputs']['b'][1]", 1);
    CHECK(d && d->kind == SG_SPEC_DIM && strcmp(d->name, "T") == 0 && is_bound(d->max, 16));
    d = find_dim(t, "['inputs']['b'][1]", 0);
    CHECK(d && d->kind == SG_SPEC_DIM && strcmp(d->name, "B") == 0 && is_bound(d->min, 2) && is_bound(d->max, 64));
    /* rebuilt in the structure of the inputs, keyed by every argument name */
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t),
                 "{\"inputs\":{\"a\":{\"0\":{\"name\":\"B\",\"min\":2,\"max\":64}},\"b\":[{\"0\":{\"name\":\"B\","
                 "\"min\":2,\"max\":64}},{\"0\":{\"name\":\"B\",\"min\":2,\"max\":64},\"1\":{\"name\":\"T\",\"min\":0,"
                 "\"max\":16}}]},\"scale\":{\"0\":{\"name\":\"B\",\"min\":2,\"max\":64}}}");
    CHECK_EQ_INT(override1(&t, "inputs.q.0=B", &err), SG_EINVALID);
    CHECK(one_line(err.msg) && strstr(err.msg, "no tensor input 'inputs.q'")
          && strstr(err.msg, "inputs.a (2 dims), inputs.b.0 (2 dims), inputs.b.1 (3 dims), scale (2 dims)"));
    sg_trace_free(t);

    /* a trace whose spec torch rejected (bad keys, no flat spec): the override supplies one */
    t = load_case("cases", "err_spec_bad_keys", &err);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!sg_trace_has_flat_spec(t));
    CHECK_EQ_INT(override1(&t, "x.0=dx", &err), 0);
    CHECK(sg_trace_has_flat_spec(t));
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":0,\"max\":\"oo\"}}}");
    sg_trace_free(t);

    /* lists of tensors: xs.3 */
    t = load_case("cases", "large_60_list_separate_err", &err);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ_INT(override1(&t, "xs.3.0=d3:4..64", &err), 0);
    d = find_dim(t, "['xs'][3]", 0);
    CHECK(d && d->kind == SG_SPEC_DIM && is_bound(d->min, 4) && is_bound(d->max, 64));
    CHECK(sg_trace_dynamic_shapes_json(t)
          && strstr(sg_trace_dynamic_shapes_json(t), "{\"xs\":[{\"0\":{\"name\":\"d0\",\"min\":0,\"max\":4096}},")
                 == sg_trace_dynamic_shapes_json(t)
          && strstr(sg_trace_dynamic_shapes_json(t), ",{\"0\":{\"name\":\"d3\",\"min\":4,\"max\":64}},"));
    CHECK_EQ_INT(override1(&t, "xs.60.0=AUTO", &err), SG_EINVALID);
    CHECK(one_line(err.msg) && strstr(err.msg, "xs.0 (2 dims), xs.1 (2 dims)") && strstr(err.msg, ", ..."));
    sg_trace_free(t);
}

static void test_override_errors(void)
{
    static const struct {
        const char *item, *msg;
    } bad[] = {
        {"z.0=dx", "no tensor input 'z'; the inputs are x (2 dims)"},
        {"x.2=dx", "'x' has 2 dims (0..1), not 2"},
        {"x.a=dx", "'a' is not a dim index"},
        {"x0=dx", "expected INPUT.DIM before '='"},
        {".0=dx", "expected INPUT.DIM before '='"},
        {"x.0", "expected INPUT.DIM=SPEC or NAME:MIN..MAX"},
        {"r:1..x", "expected NAME:MIN..MAX"},
        {":1..2", "expected INPUT.DIM=SPEC or NAME:MIN..MAX"},
        {"oo:1..2", "'oo' cannot be a Dim name"},
        {"x.0=", "nothing after '='"},
        {"x.0=dx:5", "expected NAME:MIN..MAX"},
        {"x.0=dx:a..b", "expected NAME:MIN..MAX"},
        {"x.0=dx:-1..4", "expected NAME:MIN..MAX"},
        {"x.0=AUTO:1", "expected AUTO:MIN..MAX"},
        {"x.0=STATIC:1..2", "a range ':MIN..MAX' follows a name, AUTO or DYNAMIC only"},
        {"x.0=dx**2", "a derived dim must be A*NAME + B"},
        {"x.0=dx+dy", "a derived dim must be A*NAME + B"},
        {"x.0=3 - dx", "a derived dim must be A*NAME + B"},
        {"x.0=dx//2", "a derived dim must be A*NAME + B"},
        {"x.0=2*dx+", "expected NAME[:MIN..MAX], A*NAME+B"},
        {"x.0=dx > 2", "is not an integer expression"},
        {"x.0=oo", "'oo' cannot be a Dim name"},
        {"x.0=True", "'True' cannot be a Dim name"},
        {"x.0=-3", "a size cannot be negative"},
        {"x.0=99999999999999999999999999999999999999999", "expected NAME[:MIN..MAX]"},
    };
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_check_ge", &err);
    const sg_input_dim *d0;
    const char *js;
    const char *dup[2] = {"x.0=a", "L['x'].size()[0]=b"};
    const char *two[2] = {"x.0=d:1..2", "x.1=d:1..3"};
    const char *same[2] = {"x.0=d:1..20", "x.1=d:1..20"};
    const char *with_null[2] = {"x.0=AUTO", NULL};
    char longitem[600];
    size_t i;

    CHECK(t != NULL);
    if (!t)
        return;
    d0 = find_dim(t, "['x']", 0);
    js = sg_trace_dynamic_shapes_json(t);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_error_clear(&err);
        CHECK_EQ_INT(override1(&t, bad[i].item, &err), SG_EINVALID);
        CHECK_MSG(one_line(err.msg) && strstr(err.msg, bad[i].msg) && strncmp(err.msg, "dim override '", 14) == 0,
                  "%s: %s", bad[i].item, err.msg);
    }
    CHECK_EQ_INT(override_dims(&t, dup, 2, &err), SG_EINVALID);
    CHECK(strstr(err.msg, "that dim is also set by 'x.0=a'"));
    CHECK_EQ_INT(override_dims(&t, two, 2, &err), SG_EINVALID);
    CHECK(strstr(err.msg, "Dim 'd' is given two ranges, 1..2 and 1..3"));
    CHECK_EQ_INT(override_dims(&t, with_null, 2, &err), SG_EINVALID);
    {
        sg_trace *none = NULL;
        CHECK_EQ_INT(sg_trace_with_dims(&none, NULL, with_null, 1, &err), SG_EINVALID);
        CHECK(none == NULL);
    }
    memset(longitem, 'a', sizeof longitem - 1);
    longitem[sizeof longitem - 1] = '\0';
    longitem[0] = '\n';
    CHECK_EQ_INT(override1(&t, longitem, &err), SG_EINVALID);
    CHECK(one_line(err.msg) && strstr(err.msg, "...'"));
    /* all or nothing: nothing above changed the spec */
    CHECK(d0 && d0->kind == SG_SPEC_DIM && is_bound(d0->min, 2) && is_bound(d0->max, 100));
    CHECK(find_dim(t, "['x']", 1) && find_dim(t, "['x']", 1)->kind == SG_SPEC_UNSET);
    CHECK(!sg_trace_spec_overridden(t) && sg_trace_dynamic_shapes_json(t) == js);
    /* no items: nothing to do */
    CHECK_EQ_INT(override_dims(&t, NULL, 0, &err), 0);
    CHECK(!sg_trace_spec_overridden(t));
    /* one range given twice alike is fine */
    CHECK_EQ_INT(override_dims(&t, same, 2, &err), 0);
    sg_trace_free(t);
}

static void test_set_spec(void)
{
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"x\": {\"5\": {\"name\": \"dx\"}}}", "spec: ['x']['5']: the tensor has 2 dims, no dim 5"},
        {"{\"x\": {\"a\": \"AUTO\"}}", "spec: ['x']['a']: expected a dim index as the key"},
        {"{\"x\": [1, 2, 3]}", "spec: ['x']: the tensor has 2 dims, the spec gives 3"},
        {"{\"x\": \"AUTO\"}", "spec: ['x']: expected a dict of dims, a list or null for a tensor"},
        {"{\"x\": {\"0\": {\"nme\": \"dx\"}}}", "spec: ['x']['0']: unknown spec object"},
        {"{\"x\": {\"0\": \"AUTOMATIC\"}}", "spec: ['x']['0']: unknown spec 'AUTOMATIC'"},
        {"{\"x\": {\"0\": {\"name\": \"dx\", \"min\": \"many\"}}}", "spec: ['x']['0']: min: expected an integer"},
        {"[null, null]", "spec: (top level): 2 entries for 1 arguments"},
        {"5", "spec: (top level): expected a dict keyed by argument name, a list, or null"},
        {"{\"x\": {\"0\": ", "spec: invalid JSON at byte"},
        {"{\"x\": {\"0\": {\"derived\": \"2*dx+\", \"root\": {\"name\": \"dx\"}}}}", "spec: ['x']['0'].expr: column"},
        /* what the expression parser calls unsupported or undefined is a wrong leaf here */
        {"{\"x\": {\"0\": {\"derived\": \"d\", \"expr\": \"2*dx+1x\", \"root\": {\"name\": \"dx\"}}}}",
         "spec: ['x']['0'].expr: column 6: float or malformed number literal '1x'"},
        {"{\"x\": {\"0\": {\"derived\": \"dx//0\", \"root\": {\"name\": \"dx\"}}}}",
         "spec: ['x']['0'].expr: column 3: division by zero"},
        /* torch's derived Dims are A*root + B; anything else would reach Z3 as it cannot be encoded */
        {"{\"x\": {\"0\": {\"derived\": \"dx*dx\", \"root\": {\"name\": \"dx\"}}}}",
         "spec: ['x']['0']: expr: 'dx*dx' is not A*dx + B"},
        {"{\"x\": {\"0\": {\"derived\": \"dx - int_oo\", \"root\": {\"name\": \"dx\"}}}}",
         "is not A*dx + B with integers A >= 1 and B"},
    };
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "err_check_ge", &err), *t2 = NULL;
    const sg_input_dim *d0, *d1;
    char *js = NULL;
    const char *text;
    size_t i;

    CHECK(t != NULL);
    if (!t)
        return;
    d0 = find_dim(t, "['x']", 0);
    d1 = find_dim(t, "['x']", 1);
    if (!d0 || !d1) {
        sg_trace_free(t);
        return;
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sg_error_clear(&err);
        CHECK_EQ_INT(set_spec(&t, bad[i].json, strlen(bad[i].json), "spec", &err), SG_EINVALID);
        CHECK_MSG(one_line(err.msg) && strstr(err.msg, bad[i].msg), "%s: %s", bad[i].json, err.msg);
    }
    CHECK(!sg_trace_spec_overridden(t) && d0->kind == SG_SPEC_DIM && is_bound(d0->max, 100));

    text = "{\"x\": {\"0\": {\"name\": \"dx\", \"min\": 16, \"max\": 100}}}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_DIM && is_bound(d0->min, 16) && is_bound(d0->max, 100) && d1->kind == SG_SPEC_UNSET);
    CHECK(sg_trace_spec_overridden(t) && sg_trace_has_flat_spec(t));
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"x\":{\"0\":{\"name\":\"dx\",\"min\":16,\"max\":100}}}");
    /* a list per tensor, min defaulting to 0 */
    text = "[[{\"name\": \"dx\"}, 3]]";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_DIM && is_bound(d0->min, 0) && d0->max.inf == 1);
    CHECK(d1->kind == SG_SPEC_STATIC && d1->has_static_size && d1->static_size == 3);
    /* tuples, hints, the case.json wrapper */
    text = "{\"__tuple__\": [{\"0\": {\"hint\": \"AUTO\", \"min\": 4}, \"1\": \"STATIC\"}]}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_AUTO && d0->has_bounds && is_bound(d0->min, 4) && d0->max.inf == 1);
    CHECK(d1->kind == SG_SPEC_STATIC && !d1->has_static_size);
    text = "{\"name\": \"a case\", \"dynamic_shapes\": {\"x\": {\"1\": \"DYNAMIC\"}}}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_UNSET && d1->kind == SG_SPEC_DYNAMIC);
    /* None: every dim static; a wrapped null: no spec known */
    CHECK_EQ_INT(set_spec(&t, "null", 4, NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(d0->kind == SG_SPEC_UNSET && d1->kind == SG_SPEC_UNSET && sg_trace_has_flat_spec(t));
    text = "{\"dynamic_shapes\": null}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(!sg_trace_has_flat_spec(t));
    /* keys that are not argument names: kept as torch saw them, no flat spec */
    text = "{\"inp\": {\"0\": {\"name\": \"dx\"}}}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), NULL, &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(!sg_trace_has_flat_spec(t) && d0->kind == SG_SPEC_UNSET);
    CHECK_EQ_STR(sg_trace_dynamic_shapes_json(t), "{\"inp\":{\"0\":{\"name\":\"dx\"}}}");
    /* then --dim on top of it supplies a flat spec */
    CHECK_EQ_INT(override1(&t, "x.0=dx:16..", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    CHECK(sg_trace_has_flat_spec(t) && d0->kind == SG_SPEC_DIM && is_bound(d0->min, 16));
    /* the file form */
    CHECK_EQ_INT(load_spec(&t, SG_TRACE_TMP "/no-such-spec.json", &err), SG_EIO);
    CHECK(one_line(err.msg) && strstr(err.msg, "no-such-spec.json"));
    /* an overridden trace writes and reads back with its new spec */
    CHECK_EQ_INT(sg_trace_to_json(&js, t, &err), 0);
    if (js) {
        CHECK_EQ_INT(sg_trace_load_json(&t2, js, strlen(js), &err), 0);
        CHECK(t2 && find_dim(t2, "['x']", 0) && find_dim(t2, "['x']", 0)->kind == SG_SPEC_DIM
              && is_bound(find_dim(t2, "['x']", 0)->min, 16));
    }
    sg_free(js);
    sg_trace_free(t2);
    sg_trace_free(t);

    /* derived leaves: bounds recomputed from the root */
    t = load_case("cases", "ok_derived_spec_2x", &err);
    if (!t)
        return;
    text = "{\"x\": {\"0\": {\"name\": \"dx\", \"min\": 4, \"max\": 8}}, "
           "\"y\": {\"0\": {\"derived\": \"2*dx\", \"root\": {\"name\": \"dx\", \"min\": 4, \"max\": 8}}}}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), "f.json", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    d1 = find_dim(t, "['y']", 0);
    CHECK(d1 && d1->kind == SG_SPEC_DERIVED && is_bound(d1->min, 8) && is_bound(d1->max, 16));
    sg_trace_free(t);

    /* nested containers: paths the inputs do not have */
    t = load_case("cases", "ok_nested_dict_list", &err);
    if (!t)
        return;
    text = "{\"inputs\": {\"q\": {\"0\": \"AUTO\"}}, \"scale\": null}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), "f.json", &err), SG_EINVALID);
    CHECK(one_line(err.msg) && strstr(err.msg, "f.json: ['inputs']['q']: no tensor input at this path"));
    text = "{\"inputs\": {\"b\": [null, {\"2\": \"AUTO\"}]}, \"scale\": null}";
    CHECK_EQ_INT(set_spec(&t, text, strlen(text), "f.json", &err), 0);
    (void)(d0 = find_dim(t, "['x']", 0), d1 = find_dim(t, "['x']", 1));
    d0 = find_dim(t, "['inputs']['b'][1]", 2);
    CHECK(d0 && d0->kind == SG_SPEC_AUTO);
    d0 = find_dim(t, "['inputs']['a']", 0);
    CHECK(d0 && d0->kind == SG_SPEC_UNSET);
    sg_trace_free(t);
}

/* Allocation failures while overriding: SG_ENOMEM and the spec unchanged, until it succeeds. */
static void test_override_alloc_failures(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "ok_nested_dict_list", &err);
    const char *set[3] = {"inputs.b.1.1=2*T+1", "inputs.a.0=T:2..8", "scale.1=AUTO"};
    const char *spec = "{\"inputs\": {\"a\": {\"0\": {\"name\": \"B\", \"max\": 9}}, \"b\": [null, "
                       "{\"1\": {\"derived\": \"T + 1\", \"root\": {\"name\": \"T\"}}}]}, \"scale\": null}";
    long n;
    int rc = -1;

    CHECK(t != NULL);
    if (!t)
        return;
    for (n = 0; n < 100000 && rc != 0; n++) {
        sg_alloc_fail_after(n);
        rc = override_dims(&t, set, 3, &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "fail after %ld: rc %d: %s", n, rc, err.msg);
        if (rc != 0)
            CHECK(!sg_trace_spec_overridden(t) && find_dim(t, "['scale']", 1)->kind == SG_SPEC_UNSET);
        if (rc != 0 && rc != SG_ENOMEM)
            break;
    }
    CHECK(rc == 0 && find_dim(t, "['scale']", 1)->kind == SG_SPEC_AUTO);
    rc = -1;
    for (n = 0; n < 100000 && rc != 0; n++) {
        sg_alloc_fail_after(n);
        rc = set_spec(&t, spec, strlen(spec), NULL, &err);
        sg_alloc_fail_after(-1);
        CHECK_MSG(rc == 0 || rc == SG_ENOMEM, "set_spec, fail after %ld: rc %d: %s", n, rc, err.msg);
        if (rc != 0 && rc != SG_ENOMEM)
            break;
    }
    CHECK(rc == 0 && find_dim(t, "['scale']", 1)->kind == SG_SPEC_UNSET);
    CHECK(find_dim(t, "['inputs']['b'][1]", 1)->kind == SG_SPEC_DERIVED);
    sg_trace_free(t);
}

/* Typed edits in random sets (a dim set twice, one name given two ranges, or none of that): the
 * one-pass check of sg_trace_edit reports the conflict sg_trace__edit_conflict(i), i = 0, 1, ...,
 * finds first, with its message, and accepts the sets it accepts. */
static void test_edit_conflicts(void)
{
    static const char *const names[] = {"a", "b", "c"};
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = load_case("cases", "large_60_list_separate_err", &err);
    uint64_t rng = 0x2545F4914F6CDD1DULL;
    size_t nin = 0, round, nconf = 0;
    CHECK(t != NULL);
    if (!t)
        return;
    sg_trace_inputs(t, &nin);
    for (round = 0; round < 2000 && nin > 0; round++) {
        sg_spec_edits *e = NULL;
        sg_trace *out = NULL;
        sg_error want = SG_ERROR_INIT, got = SG_ERROR_INIT;
        size_t n = 1 + round % 12, i;
        int rw = 0, rg;
        CHECK_EQ_INT(sg_spec_edits_new(&e, &err), 0);
        for (i = 0; e && i < n; i++) {
            size_t in;
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            in = (size_t)(rng % (round % 3 ? nin : 4)); /* often the same few dims */
            if ((rng >> 20) % 3 == 0)
                sg_spec_edits_set_dim(e, in, names[(rng >> 24) % 3], &err);
            else
                sg_spec_edits_set_dim_range(e, in, names[(rng >> 24) % 3], 2, 8 + (int64_t)((rng >> 28) % 2), &err);
        }
        for (i = 0; e && i < e->n && !rw; i++)
            rw = sg_trace__edit_conflict(t, e, i, &want);
        rg = sg_trace_edit(&out, t, e, &got);
        CHECK_EQ_INT(rg, rw);
        if (rw && rg) {
            nconf++;
            CHECK_EQ_STR(got.msg, want.msg);
        }
        sg_trace_free(out);
        sg_spec_edits_free(e);
    }
    CHECK(nconf > 100 && nconf < 1900); /* both kinds of sets were made */
    sg_trace_free(t);
}

/* `in` with every `from` replaced by `to`, into the new file `out`; false on an I/O error. */
static bool copy_replacing(const char *in, const char *out, const char *from, const char *to)
{
    FILE *f = fopen(in, "rb"), *g = NULL;
    char *text = NULL, *at, *p;
    long n;
    bool ok = false;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(text = calloc((size_t)n + 1, 1)) || fread(text, 1, (size_t)n, f) != (size_t)n || !(g = fopen(out, "wb")))
        goto done;
    for (p = text; (at = strstr(p, from)) != NULL; p = at + strlen(from)) {
        fwrite(p, 1, (size_t)(at - p), g);
        fputs(to, g);
    }
    fputs(p, g);
    ok = true;
done:
    if (f)
        fclose(f);
    if (g && fclose(g) != 0)
        ok = false;
    free(text);
    return ok;
}

/* A capture whose argument is called like a member the loader skips at the top level
 * ("summary"): its spec and inputs are kept, the skipped names apply at their own depth only. */
static void test_argument_named_like_skipped(void)
{
    char dir[] = "/tmp/sg_test_trace_XXXXXX", src[600], dst[600];
    static const char *const files[] = {"case.json", "guards.json"};
    sg_trace *t = NULL;
    sg_error err = SG_ERROR_INIT;
    const char *js;
    size_t i;
    CHECK(mkdtemp(dir) != NULL);
    for (i = 0; i < 2; i++) {
        snprintf(src, sizeof src, "%s/cases/err_check_ge/%s", SG_CORPUS, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        CHECK(copy_replacing(src, dst, "'x'", "'summary'"));
        CHECK(copy_replacing(dst, dst, "\"x\"", "\"summary\"")); /* (read whole before rewriting) */
    }
    CHECK_EQ_INT(sg_trace_load_dir(&t, dir, &err), 0);
    js = t ? sg_trace_dynamic_shapes_json(t) : NULL;
    CHECK_MSG(js && strstr(js, "\"summary\":{") != NULL, "dynamic_shapes: %s", js ? js : "-");
    sg_trace_free(t);
    for (i = 0; i < 2; i++) {
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        unlink(dst);
    }
    rmdir(dir);
}

int main(void)
{
    RUN(test_json_helpers);
    RUN(test_strmap);
    RUN(test_corpus_loads);
    RUN(test_div_view_8);
    RUN(test_nested_dict_list);
    RUN(test_derived);
    RUN(test_torch26_hints);
    RUN(test_unbacked);
    RUN(test_strict);
    RUN(test_no_shape_env);
    RUN(test_big_integers);
    RUN(test_source_default);
    RUN(test_hostile_dirs);
    RUN(test_hostile_json);
    RUN(test_alloc_failures);
    RUN(test_load_path);
    RUN(test_override_forms);
    RUN(test_override_derived);
    RUN(test_override_paths);
    RUN(test_override_errors);
    RUN(test_set_spec);
    RUN(test_override_alloc_failures);
    RUN(test_edit_conflicts);
    RUN(test_argument_named_like_skipped);
    return test_summary();
}
