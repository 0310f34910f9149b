/*
 * test_spec_repair.c - the structural spec repair (analysis/spec_repair.c,
 * docs/fixes.md) on the corpus cases whose spec torch refused before tracing,
 * torch 2.14 (tests/corpus/cases) and 2.6 (cases-2.6), one class each:
 *
 *  - a tensor's spec naming a dim beyond its rank (dict key, list entry):
 *    the entry dropped, the note says which;
 *  - a dict spec for a list input, a plain tuple for a namedtuple, a short
 *    positional tuple, a dict keyed by a name that is not an argument;
 *  - one Dim on two examples of different sizes, a derived dim whose example
 *    is not the derived value: split into a Dim of its own;
 *  - a Dim torch refused to build (min == max, min > max) before it recorded
 *    any input: the drop-in `repaired_Dim`.
 *
 * Each repair must pass the library's own spec validation again (the repaired
 * spec is checked: never invalid_spec), be untraced (never verified) when no
 * guard was recorded, and show in the report's text and JSON.
 * Budgets are Z3's resource limit only (no wall clock). First, the identifier a
 * path becomes (a split Dim's name, sg_pyspec__ident).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis/fixes.h"
#include "shapegate/engine.h"
#include "torch/pyspec.h"
#include "test.h"

#define NEED 4

typedef struct want {
    const char *name;
    bool verified;              /* re-checked against recorded guards (else untraced) */
    const char *python[NEED];   /* substrings of the printed Python, both torch versions */
    const char *note;           /* a substring of some note */
    const char *not_in;         /* a substring the Python must not hold */
} want;

static const want WANT[] = {
    {"spec_dim_beyond_rank_dict", false, {"dynamic_shapes = {'x': {0: dx}}"}, "names dim 2 (dz)", "dz"},
    {"spec_structure_dict_for_list", false, {"dynamic_shapes = {'xs': [{0: d}, {0: d}]}"}, "rebuilt as a list", NULL},
    {"spec_structure_namedtuple_as_tuple", false,
     {"# p_type: the namedtuple class of input ['p']", "dynamic_shapes = {'p': p_type(img={0: d}, mask={0: d})}"},
     "is a namedtuple", NULL},
    {"spec_structure_short_tuple", false, {"dynamic_shapes = ({0: d}, {0: d}, {0: d})"}, "2 entries for 3 inputs",
     NULL},
    {"err_spec_bad_keys", false, {"dynamic_shapes = {'x': {0: dx}}"}, "renamed to 'x'", "'inp'"},
    {"err_shared_dim_example_mismatch", true, {"d_1 = Dim('d_1', max=10)", "{'x': {0: d}, 'y': {0: d_1}}"},
     "a Dim of its own, 'd_1'", NULL},
    {"err_derived_example_mismatch", true, {"y_0 = Dim('y_0', min=3, max=33)", "{'x': {0: dx}, 'y': {0: y_0}}"},
     "a Dim of its own, 'y_0'", "dx + 1"},
};

static void load(sg_trace **t, const char *set, const char *name)
{
    char dir[1024];
    sg_error err = SG_ERROR_INIT;
    snprintf(dir, sizeof dir, "%s/%s/%s", SG_CORPUS, set, name);
    *t = NULL;
    CHECK_MSG(sg_trace_load(t, dir, &err) == 0, "%s: %s", dir, err.msg);
}

static bool has_note(const sg_fixes *f, const char *s)
{
    size_t i;
    for (i = 0; s && i < f->nnotes; i++)
        if (strstr(f->notes[i], s))
            return true;
    return !s;
}

/* The repair of case `w` in corpus `set`. */
static void check_case(const char *set, const want *w)
{
    sg_trace *t = NULL, *t2 = NULL;
    sg_report *r = NULL, *r2 = NULL;
    sg_fixes *f = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options o = SG_CHECK_OPTIONS_INIT;
    char *py = NULL;
    size_t i;

    o.timeout_ms = 0;
    o.query_timeout_ms = 0;
    load(&t, set, w->name);
    if (!t)
        return;
    CHECK_MSG(sg_check(&r, t, &o, &err) == 0, "%s/%s: %s", set, w->name, err.msg);
    if (!r)
        goto cleanup;
    CHECK_MSG(r->verdict == SG_VERDICT_INVALID_SPEC, "%s/%s: verdict %s", set, w->name, sg_verdict_name(r->verdict));
    CHECK_MSG(sg_fixes_suggest(&f, t, r, &o, &err) == 0, "%s/%s: %s", set, w->name, err.msg);
    if (!f)
        goto cleanup;
    if (w->verified)
        CHECK_MSG(f->verified && !f->untraced && f->repaired, "%s/%s: verified %d untraced %d repaired %d", set, w->name,
                  f->verified, f->untraced, f->repaired);
    else
        CHECK_MSG(!f->verified && f->untraced, "%s/%s: verified %d untraced %d", set, w->name, f->verified, f->untraced);
    CHECK_MSG(f->spec_json != NULL, "%s/%s: no repaired spec", set, w->name);
    CHECK_MSG(has_note(f, w->note), "%s/%s: no note with '%s' (first: %s)", set, w->name, w->note,
              f->nnotes ? f->notes[0] : "none");
    if (!f->spec_json)
        goto cleanup;
    CHECK_MSG(sg_spec_to_python(&py, t, f->spec_json, &err) == 0, "%s/%s: python: %s", set, w->name, err.msg);
    for (i = 0; py && i < NEED && w->python[i]; i++)
        CHECK_MSG(strstr(py, w->python[i]) != NULL, "%s/%s: the Python lacks '%s':\n%s", set, w->name, w->python[i], py);
    CHECK_MSG(!py || !w->not_in || !strstr(py, w->not_in), "%s/%s: the Python holds '%s':\n%s", set, w->name, w->not_in,
              py);
    /* the repaired spec, read back like any --spec file, passes the spec checks */
    CHECK_MSG(sg_trace_with_spec_json(&t2, t, f->spec_json, strlen(f->spec_json), "repair", &err) == 0,
              "%s/%s: the repaired spec is unreadable: %s", set, w->name, err.msg);
    if (t2) {
        CHECK(sg_check(&r2, t2, &o, &err) == 0);
        CHECK_MSG(r2 && r2->verdict != SG_VERDICT_INVALID_SPEC, "%s/%s: the repaired spec is invalid again", set,
                  w->name);
    }
cleanup:
    sg_free(py);
    sg_fixes_free(f);
    sg_report_free(r);
    sg_report_free(r2);
    sg_trace_free(t2);
    sg_trace_free(t);
}

static void test_structure_and_examples(void)
{
    size_t i;
    for (i = 0; i < sizeof WANT / sizeof WANT[0]; i++) {
        check_case("cases", &WANT[i]);
        check_case("cases-2.6", &WANT[i]);
    }
}

/* torch 2.14 refuses a tensor's spec list longer than its rank (2.6 ignores the extra entries). */
static void test_list_beyond_rank(void)
{
    static const want w = {"spec_dim_beyond_rank_list", false, {"dynamic_shapes = {'x': [dx, None], 'y': [dx, None]}"},
                           "entry 2 (None) dropped", NULL};
    check_case("cases", &w);
}

/* A Dim torch refused to build before recording any input: the drop-in repaired_Dim, untraced, no spec. */
static void test_dim_rewrite(void)
{
    static const struct {
        const char *name, *cond, *ret, *note;
    } W[] = {
        {"pin_dim_min_eq_max", "if (min, max) == (4, 4):", "return 4\n", "a dim of one size is that size"},
        {"err_dim_min_gt_max", "if (min, max) == (10, 5):", "return Dim(name, max=10)\n", "Dim(name, min=5, max=10)"},
    };
    const char *sets[] = {"cases", "cases-2.6"};
    size_t i, k;
    for (k = 0; k < 2; k++)
        for (i = 0; i < sizeof W / sizeof W[0]; i++) {
            sg_trace *t = NULL;
            sg_report *r = NULL;
            sg_fixes *f = NULL;
            sg_error err = SG_ERROR_INIT;
            sg_check_options o = SG_CHECK_OPTIONS_INIT;
            load(&t, sets[k], W[i].name);
            if (!t)
                continue;
            CHECK(sg_check(&r, t, &o, &err) == 0);
            if (r && sg_fixes_suggest(&f, t, r, &o, &err) == 0 && f) {
                CHECK_MSG(f->untraced && !f->verified && !f->spec_json && f->python, "%s/%s", sets[k], W[i].name);
                CHECK_MSG(f->python && strstr(f->python, "def repaired_Dim(name, min=None, max=None):")
                          && strstr(f->python, W[i].cond) && strstr(f->python, W[i].ret)
                          && strstr(f->python, "    return Dim(name, min=min, max=max)\n"),
                          "%s/%s: %s", sets[k], W[i].name, f->python ? f->python : "(none)");
                CHECK_MSG(has_note(f, W[i].note), "%s/%s: no note '%s'", sets[k], W[i].name, W[i].note);
            } else {
                CHECK_MSG(0, "%s/%s: %s", sets[k], W[i].name, err.msg);
            }
            sg_fixes_free(f);
            sg_report_free(r);
            sg_trace_free(t);
        }
}

/* The CLI's renderers: JSON carries the repair (`untraced`, `repaired`, `python`), text prints the Python. */
static void test_rendered(void)
{
    static const struct {
        const char *name, *py;
        bool untraced;
    } W[] = {
        {"spec_structure_dict_for_list", "dynamic_shapes = {'xs': [{0: d}, {0: d}]}", true},
        {"err_shared_dim_example_mismatch", "dynamic_shapes = {'x': {0: d}, 'y': {0: d_1}}", false},
        {"pin_dim_min_eq_max", "def repaired_Dim(", true},
    };
    sg_engine *e = NULL;
    sg_error err = SG_ERROR_INIT;
    size_t i;
    if (sg_engine_new(&e, NULL, &err) != 0) {
        CHECK_MSG(0, "engine: %s", err.msg);
        return;
    }
    for (i = 0; i < sizeof W / sizeof W[0]; i++) {
        sg_trace *t = NULL;
        sg_report *r = NULL;
        sg_check_options o = SG_CHECK_OPTIONS_INIT;
        char *js = NULL, *txt = NULL;
        cJSON *j = NULL;
        const cJSON *fx;
        o.fixes = true;
        o.timeout_ms = 0;
        o.query_timeout_ms = 0;
        load(&t, "cases", W[i].name);
        if (!t)
            continue;
        CHECK(sg_engine_check(e, t, &o, &r, &err) == 0);
        if (r) {
            CHECK(sg_report_to_json(&js, r, SG_JSON_NO_TIMES, &err) == 0);
            CHECK(sg_report_to_text(&txt, r, 0, &err) == 0);
        }
        j = js ? cJSON_Parse(js) : NULL;
        fx = cJSON_GetObjectItemCaseSensitive(j, "fixes");
        CHECK_MSG(fx && cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(fx, "untraced"))
                  && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fx, "untraced")) == W[i].untraced
                  && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(fx, "python"))
                  && strstr(cJSON_GetObjectItemCaseSensitive(fx, "python")->valuestring, W[i].py),
                  "%s: JSON fixes: %s", W[i].name, js ? js : "(none)");
        CHECK_MSG(txt && strstr(txt, W[i].py), "%s: the text lacks the Python:\n%s", W[i].name, txt ? txt : "(none)");
        cJSON_Delete(j);
        sg_free(js);
        sg_free(txt);
        sg_report_free(r);
        sg_trace_free(t);
    }
    sg_engine_free(e);
}

/* The identifier a split Dim, a namedtuple placeholder and a serving input are named by. */
static void test_path_ident(void)
{
    static const struct {
        const char *path, *lead;
        size_t max;
        const char *want;
    } c[] = {
        {"['inputs']['a'][0]", "d", 64, "inputs_a_0"},
        {"['x']", "T", 64, "x"},
        {"", "d", 64, "d"},
        {"[0]['x']", "in_", 64, "in_0_x"},   /* no identifier starts with a digit: the lead goes first */
        {"['0x']", "d", 64, "d0x"},
        {"['abcdef']", "T", 4, "abcd"},      /* cut at `max` */
        {"[0]['abcdef']", "in_", 5, "in_0_"}, /* the lead first, the rest cut (its '_' is kept) */
    };
    size_t i;

    for (i = 0; i < sizeof c / sizeof c[0]; i++) {
        char buf[128];
        size_t n = sg_pyspec__ident(buf, c[i].max, c[i].path, c[i].lead);
        buf[n] = '\0';
        CHECK_MSG(strcmp(buf, c[i].want) == 0, "ident of \"%s\" (lead %s, max %zu): '%s', expected '%s'", c[i].path,
                  c[i].lead, c[i].max, buf, c[i].want);
    }
}

int main(void)
{
    RUN(test_path_ident);
    RUN(test_structure_and_examples);
    RUN(test_list_beyond_rank);
    RUN(test_dim_rewrite);
    RUN(test_rendered);
    return test_summary();
}
