/*
 * test_message.c - torch's "Constraints violated" text (include/shapegate/message.h):
 *   - every case of both corpus versions: sg_torch_text_build() against torch's
 *     own message (case.json `error_msg_attr`, else `error_message`, up to
 *     "\nSuggested fixes:") for constraint violations, and no text for every
 *     other case; per-version figures and every mismatch are printed;
 *   - unit tests of the pieces: the torch printer's forms, the rendered range,
 *     the "trivial" test of DimConstraints.add, the 2.6 wording, forced
 *     specialisations, on small single-file JSON traces.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "torch/message.h"
#include "util/json.h"
#include "test.h"

/* ---- helpers ------------------------------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* torch's expected text for a case: the message before "\nSuggested fixes:" when it is a batch of
 * constraint violations (or forced specialisations), else NULL; `*is_cv` says which. */
static char *expected_text(const cJSON *cj, int *is_cv)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cj, "error_msg_attr");
    const char *s, *cut;
    char *out;
    *is_cv = 0;
    if (!cJSON_IsString(m))
        m = cJSON_GetObjectItemCaseSensitive(cj, "error_message");
    if (!cJSON_IsString(m))
        return NULL;
    s = m->valuestring;
    if (strncmp(s, "Constraints violated (", 22) != 0 && strncmp(s, "Specializations unexpectedly required (", 39) != 0)
        return NULL;
    *is_cv = 1;
    cut = strstr(s, "\nSuggested fixes:");
    if (!cut)
        cut = strstr(s, "\n\nThe error above occurred");
    if (!cut)
        cut = s + strlen(s);
    out = malloc((size_t)(cut - s) + 1);
    if (out) {
        memcpy(out, s, (size_t)(cut - s));
        out[cut - s] = '\0';
    }
    return out;
}

/* Print the first differing line of `want` and `got`. */
static void show_diff(const char *want, const char *got)
{
    const char *a = want ? want : "(no text)", *b = got ? got : "(no text)";
    size_t line = 1;
    while (*a && *a == *b) {
        if (*a == '\n')
            line++;
        a++;
        b++;
    }
    while (a > (want ? want : "") && a[-1] != '\n' && b > (got ? got : "")) {
        a--;
        b--;
    }
    fprintf(stderr, "      line %zu\n      torch:     %.*s\n      shapegate: %.*s\n", line,
            (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
}

/* ---- the corpus ---------------------------------------------------------------------------------- */

static void corpus_version(const char *version)
{
    char dir[4096], path[4200];
    struct dirent *de;
    DIR *d;
    char **names = NULL;
    size_t n = 0, cap = 0, i, same = 0, cv = 0, cv_same = 0;

    /* SG_MESSAGE_CORPUS=tests/corpus/staging compares the staged cases the same way */
    snprintf(dir, sizeof dir, "%s/%s", getenv("SG_MESSAGE_CORPUS") ? getenv("SG_MESSAGE_CORPUS") : SG_CORPUS, version);
    d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strcmp(de->d_name, "index.json") == 0)
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = dup_str(de->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);

    for (i = 0; i < n; i++) {
        sg_trace *t = NULL;
        sg_torch_text *m = NULL;
        sg_error err = SG_ERROR_INIT;
        char *want = NULL;
        cJSON *cj;
        int is_cv = 0, rc;
        bool ok;

        snprintf(path, sizeof path, "%s/%s/case.json", dir, names[i]);
        if (sg__json_load_file(&cj, path, "case.json", NULL) != 0) /* not a case folder */
            continue;
        want = expected_text(cj, &is_cv);
        cJSON_Delete(cj);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = sg_trace_load_dir(&t, path, &err);
        if (rc == 0)
            rc = sg_torch_text_build(&m, t, &err);
        if (rc != 0) {
            ok = false;
            fprintf(stderr, "  %s/%s: error: %s\n", version, names[i], err.msg);
        } else {
            const char *got = m->text;
            ok = (want == NULL && got == NULL) || (want && got && strcmp(want, got) == 0);
            if (!ok) {
                fprintf(stderr, "  %s/%s: differs (%s)\n", version, names[i],
                        is_cv ? "constraint violation" : "torch has no violation text");
                show_diff(want, got);
            }
            /* the parts agree with the text */
            if (got) {
                size_t k;
                CHECK(m->nlines > 0 || m->nforced > 0);
                for (k = 0; k < m->nlines; k++)
                    CHECK(strstr(got, m->lines[k]) != NULL);
                for (k = 0; k + 1 < m->nnames; k++)
                    CHECK(strcmp(m->names[k], m->names[k + 1]) != 0);
            } else {
                CHECK(m->nlines == 0 && m->nnames == 0 && m->nforced == 0);
            }
        }
        same += ok;
        cv += is_cv;
        cv_same += is_cv && ok;
        CHECK_MSG(ok, "%s/%s", version, names[i]);
        free(want);
        sg_torch_text_free(m);
        sg_trace_free(t);
        free(names[i]);
    }
    printf("%s: %zu of %zu cases identical (constraint violations: %zu of %zu; other cases without text: %zu of "
           "%zu)\n",
           version, same, n, cv_same, cv, same - cv_same, n - cv);
    free(names);
}

static void test_corpus_2_14(void) { corpus_version("cases"); }
static void test_corpus_2_6(void) { corpus_version("cases-2.6"); }

/* ---- units --------------------------------------------------------------------------------------- */

static const char *rename_s0(const sg_expr *sym, void *payload)
{
    (void)payload;
    return strcmp(sg_expr_symbol_name(sym), "s0") == 0 ? "L['x'].size()[0]" : NULL;
}

static void check_print_as(const char *in, sg_syntax syntax, const char *want)
{
    sg_pool *pool = NULL;
    const sg_expr *e = NULL;
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;
    CHECK(sg_pool_new(&pool, &err) == 0);
    CHECK_MSG(sg_expr_parse(&e, pool, in, strlen(in), &err) == 0, "%s: %s", in, err.msg);
    if (e) {
        CHECK(sg_expr_print(&s, e, syntax, rename_s0, NULL, &err) == 0);
        CHECK_EQ_STR(s, want);
    }
    sg_free(s);
    sg_pool_free(pool);
}

static void check_print(const char *in, const char *want) { check_print_as(in, SG_SYNTAX_TORCH, want); }

static void test_printer_forms(void)
{
    check_print("Eq(Mod(s0, 8), 0)", "(L['x'].size()[0] % 8) == 0");
    check_print("8*((s0//8)) >= 2", "8*(L['x'].size()[0] // 8) >= 2");
    check_print("Ne(((s0 - 1)//4), 1)", "(((-1) + L['x'].size()[0]) // 4) != 1");
    check_print("Ne(8*((s0//8)), 0)", "(8*(L['x'].size()[0] // 8)) != 0");
    check_print("Ne(s0 - 1, 1)", "((-1) + L['x'].size()[0]) != 1");
    check_print("Eq(6*s0, 4*((3*s0//2)))", "(6*L['x'].size()[0]) == (4*((3*L['x'].size()[0]) // 2))");
    check_print("s0 <= 6", "L['x'].size()[0] <= 6");
    check_print("(2 <= s0) & (s0 <= 5)", "2 <= L['x'].size()[0] and L['x'].size()[0] <= 5");
    check_print("Max(2, s0) > 3", "torch.sym_max(2, L['x'].size()[0]) > 3");
    check_print_as("Max(2, s0) > 3", SG_SYNTAX_TORCH_LEGACY, "max(2, L['x'].size()[0]) > 3");
    check_print("Ne(s0, Max(1, s0//4, s0 - 3))",
                "L['x'].size()[0] != torch.sym_max(1, torch.sym_max((-3) + L['x'].size()[0], L['x'].size()[0] // 4))");
    /* sympy 1.14 (torch 2.14): a product over a floor division is a Mul even with a minus sign */
    check_print("-3*((s0 + 1)//2) + 3*s0 >= 2", "(-3)*((1 + L['x'].size()[0]) // 2) + 3*L['x'].size()[0] >= 2");
    check_print_as("-3*((s0 + 1)//2) + 3*s0 >= 2", SG_SYNTAX_TORCH_LEGACY,
                   "((-3)*((1 + L['x'].size()[0]) // 2)) + 3*L['x'].size()[0] >= 2");
    check_print("-2*s0 + 7 >= 1", "7 + ((-2)*L['x'].size()[0]) >= 1");
    check_print("s0**2 >= 4", "L['x'].size()[0]*L['x'].size()[0] >= 4");
}

static void check_range(sg_int lo, int lo_inf, sg_int hi, int hi_inf, const char *want)
{
    sg_bound a, b;
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;
    a.v = lo;
    a.inf = lo_inf;
    b.v = hi;
    b.inf = hi_inf;
    CHECK(sg_torch_render_range(&s, "dx", "L['x'].size()[0]", a, b, &err) == 0);
    CHECK_EQ_STR(s, want);
    sg_free(s);
}

static void test_rendered_range(void)
{
    check_range(3, 0, 100, 0, "dx = L['x'].size()[0] in the specified range 3 <= dx <= 100");
    check_range(2, 0, 100, 0, "dx = L['x'].size()[0] in the specified range dx <= 100");
    check_range(0, 0, 100, 0, "dx = L['x'].size()[0] in the specified range dx <= 100");
    check_range(16, 0, 0, 1, "dx = L['x'].size()[0] in the specified range 16 <= dx");
    check_range(0, 0, 0, 1, "dx = L['x'].size()[0] in the specified range");
}

/* A one-input JSON trace: x of size `size` with spec Dim dx[min, max] (max < 0: int_oo), the
 * symbol s0 in `range`, and the guards given. */
static char *mk_trace(const char *version, int size, int min, int max, const char *range, const char *guards)
{
    char *buf = malloc(8192);
    char maxs[32];
    if (max < 0)
        snprintf(maxs, sizeof maxs, "\"int_oo\"");
    else
        snprintf(maxs, sizeof maxs, "%d", max);
    snprintf(buf, 8192,
             "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"%s\", \"strict\": false,"
             " \"shape_env\": true,"
             " \"symbols\": [{\"name\": \"s0\", \"range\": %s, \"hint\": %d, \"sources\": [\"L['x'].size()[0]\"]}],"
             " \"guards\": [%s],"
             " \"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": %d, \"source\": \"L['x'].size()[0]\","
             " \"traced_source\": \"L['x'].size()[0]\", \"value\": \"s0\","
             " \"spec\": {\"kind\": \"dim\", \"name\": \"dx\", \"min\": %d, \"max\": %s}}],"
             " \"spec\": {\"flat\": true, \"dynamic_shapes\": {\"x\": {\"0\": {\"name\": \"dx\", \"min\": %d,"
             " \"max\": %s}}}, \"inputs\": {\"arg_names\": [\"x\"], \"args\": [{\"tensor\": [%d], \"dtype\":"
             " \"float32\"}], \"kwargs\": {}, \"flat\": [{\"path\": \"['x']\", \"tensor\": [%d], \"dtype\":"
             " \"float32\"}]}}}",
             version, range, size, guards, size, min, maxs, min, max < 0 ? "\"oo\"" : maxs, size, size);
    return buf;
}

static sg_torch_text *build_json(const char *json)
{
    sg_trace *t = NULL;
    sg_torch_text *m = NULL;
    sg_error err = SG_ERROR_INIT;
    CHECK_MSG(sg_trace_load_json(&t, json, strlen(json), &err) == 0, "%s", err.msg);
    if (t)
        CHECK_MSG(sg_torch_text_build(&m, t, &err) == 0, "%s", err.msg);
    sg_trace_free(t);
    return m;
}

static const char *guard(const char *expr)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "{\"origin\": \"shape\", \"expr\": \"%s\"}", expr);
    return buf;
}

static void test_triviality(void)
{
    char *j;
    sg_torch_text *m;
    char two[1024];
    /* a divisibility guard adds a congruence: not trivial; the FloorDiv guard after it reuses the
     * congruence but rewrites to s0 >= 2: not trivial either */
    snprintf(two, sizeof two, "{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s0, 8), 0)\"}, "
                              "{\"origin\": \"shape\", \"expr\": \"8*((s0//8)) >= 2\"}");
    j = mk_trace("2.14.1", 16, 0, -1, "[2, \"int_oo\"]", two);
    m = build_json(j);
    CHECK(m && m->nlines == 2);
    free(j);
    sg_torch_text_free(m);
    /* once Mod(s0, 8) is known to be 0, s0 // 8 is a CleanDiv, which DimConstraints does not
     * support: never trivial */
    snprintf(two, sizeof two, "{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s0, 8), 0)\"}, "
                              "{\"origin\": \"shape\", \"expr\": \"8*((s0//8)) >= 1\"}");
    j = mk_trace("2.14.1", 16, 0, -1, "[2, \"int_oo\"]", two);
    m = build_json(j);
    CHECK(m && m->nlines == 2);
    if (m && m->nlines == 2)
        CHECK_EQ_STR(m->lines[1], "Not all values of dx = L['x'].size()[0] in the specified range satisfy the "
                                  "generated guard 8*(L['x'].size()[0] // 8) >= 1.");
    free(j);
    sg_torch_text_free(m);
    /* the same congruence again, rewritten to a tautology: trivial, no violation for it */
    snprintf(two, sizeof two, "{\"origin\": \"shape\", \"expr\": \"Eq(Mod(s0, 8), 0)\"}, "
                              "{\"origin\": \"shape\", \"expr\": \"Eq(s0 + Mod(s0, 8), s0)\"}");
    j = mk_trace("2.14.1", 16, 0, -1, "[2, \"int_oo\"]", two);
    m = build_json(j);
    CHECK(m && m->nlines == 1);
    if (m && m->nlines == 1)
        CHECK_EQ_STR(m->lines[0], "Not all values of dx = L['x'].size()[0] in the specified range satisfy the "
                                  "generated guard (L['x'].size()[0] % 8) == 0.");
    free(j);
    sg_torch_text_free(m);
    /* true for every positive integer (sympy decides it from the symbol's assumptions): trivial */
    j = mk_trace("2.14.1", 16, 0, -1, "[\"-int_oo\", \"int_oo\"]", guard("2*s0 + 3 >= 5"));
    m = build_json(j);
    CHECK(m && m->text == NULL);
    free(j);
    sg_torch_text_free(m);
    j = mk_trace("2.14.1", 16, 0, -1, "[\"-int_oo\", \"int_oo\"]", guard("2*s0 + 3 >= 6"));
    m = build_json(j);
    CHECK(m && m->nlines == 1);
    if (m && m->nlines == 1)
        CHECK_EQ_STR(m->lines[0], "Not all values of dx = L['x'].size()[0] in the specified range satisfy the "
                                  "generated guard 3 + 2*L['x'].size()[0] >= 6.");
    free(j);
    sg_torch_text_free(m);
    /* decided by the final range: never issued, only the range line */
    j = mk_trace("2.14.1", 20, 0, 100, "[16, 100]", guard("s0 >= 16"));
    m = build_json(j);
    CHECK(m && m->text);
    if (m && m->text)
        CHECK_EQ_STR(m->text, "Constraints violated (dx)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
                              "  - Not all values of dx = L['x'].size()[0] in the specified range dx <= 100 satisfy "
                              "the generated guard 16 <= L['x'].size()[0] and L['x'].size()[0] <= 100");
    free(j);
    sg_torch_text_free(m);
    /* Ne is never trivial */
    j = mk_trace("2.6.0", 20, 0, 100, "[2, 100]", guard("Ne(s0, 5)"));
    m = build_json(j);
    CHECK(m && m->nlines == 1);
    free(j);
    sg_torch_text_free(m);
    /* no guard, range as specified: no text */
    j = mk_trace("2.14.1", 20, 0, 100, "[2, 100]", "");
    m = build_json(j);
    CHECK(m && m->text == NULL);
    free(j);
    sg_torch_text_free(m);
}

/* One Dim on x and y (s1 replaced by s0) and the guard `g` over both, as torch recorded it before
 * the replacement. */
static char *mk_shared(const char *g)
{
    char *buf = malloc(8192);
    CHECK(buf != NULL);
    if (!buf)
        return NULL;
    snprintf(buf, 8192,
             "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"2.14.1\", \"strict\": false,"
             " \"shape_env\": true, \"symbols\": ["
             "{\"name\": \"s0\", \"range\": [2, 32], \"hint\": 3, \"sources\": [\"L['x'].size()[0]\"]},"
             "{\"name\": \"s1\", \"range\": [2, 32], \"hint\": 3, \"replacement\": \"s0\","
             " \"sources\": [\"L['y'].size()[0]\"]}],"
             " \"guards\": [{\"origin\": \"shape\", \"expr\": \"%s\"}],"
             " \"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 3, \"source\": \"L['x'].size()[0]\","
             " \"traced_source\": \"L['x'].size()[0]\", \"value\": \"s0\","
             " \"spec\": {\"kind\": \"dim\", \"name\": \"d\", \"min\": 0, \"max\": 32}},"
             " {\"path\": \"['y']\", \"dim\": 0, \"size\": 3, \"source\": \"L['y'].size()[0]\","
             " \"traced_source\": \"L['y'].size()[0]\", \"value\": \"s0\","
             " \"spec\": {\"kind\": \"dim\", \"name\": \"d\", \"min\": 0, \"max\": 32}}],"
             " \"spec\": {\"flat\": true, \"dynamic_shapes\": {\"x\": {\"0\": {\"name\": \"d\", \"min\": 0,"
             " \"max\": 32}}, \"y\": {\"0\": {\"name\": \"d\", \"min\": 0, \"max\": 32}}}, \"inputs\":"
             " {\"arg_names\": [\"x\", \"y\"], \"args\": [{\"tensor\": [3], \"dtype\": \"float32\"},"
             " {\"tensor\": [3], \"dtype\": \"float32\"}], \"kwargs\": {}, \"flat\": [{\"path\": \"['x']\","
             " \"tensor\": [3], \"dtype\": \"float32\"}, {\"path\": \"['y']\", \"tensor\": [3], \"dtype\":"
             " \"float32\"}]}}}",
             g);
    return buf;
}

/* A division the replacement rebuilds is simplified as torch's FloorDiv and Mod do (the gcd rule of
 * simple_floordiv_gcd, Mod of a multiple): the guard becomes a constant, never issued; a division
 * without a common factor stays and is reported (cr_cat_reshape_shared_ok, torch 2.14). */
static void test_rebuilt_divisions(void)
{
    static const struct {
        const char *guard;
        bool issued;
    } cases[] = {
        {"Ne(((s0 + s1)//(((s0 + s1)//2))), 4)", false}, /* (2*s0)//s0 is 2 */
        {"Eq(Mod(s0 + s1, ((s0 + s1)//2)), 0)", false},  /* Mod(2*s0, s0) is 0 */
        {"Ne((6*s0 + 4*s1)//(2*s0), 4)", false},          /* (10*s0)//(2*s0) is 5 */
        {"Ne((s0 + s1 + 2)//s0, 3)", true},             /* (2*s0 + 2)//s0, 3 at s0 = 2 */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *j = mk_shared(cases[i].guard);
        sg_torch_text *m = j ? build_json(j) : NULL;
        CHECK_MSG(m && (m->text != NULL) == cases[i].issued, "%s", cases[i].guard);
        free(j);
        sg_torch_text_free(m);
    }
}

static void test_forced_specialization(void)
{
    /* an equality on a named Dim that sympy cannot decide: solve() specialises dx to its hint */
    char *j = mk_trace("2.14.1", 16, 0, 100, "[2, 100]", guard("Eq((s0//8), 2)"));
    sg_torch_text *m = build_json(j);
    CHECK(m && m->nforced == 1);
    if (m && m->text)
        CHECK_EQ_STR(m->text,
                     "Constraints violated (dx)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
                     "  - Not all values of dx = L['x'].size()[0] in the specified range dx <= 100 satisfy the "
                     "generated guard (L['x'].size()[0] // 8) == 2.Specializations unexpectedly required (dx)! For "
                     "more information, run with TORCH_LOGS=\"+dynamic\".\n"
                     "  - solving the guards generated for dx = L['x'].size()[0] resulted in a specialized value "
                     "of 16.\n");
    free(j);
    sg_torch_text_free(m);
}

static void test_wording_by_version(void)
{
    /* a named dim specialised to a constant */
    const char *fmt =
        "{\"format\": \"shapegate-trace\", \"version\": 1, \"torch_version\": \"%s\", \"strict\": false,"
        " \"shape_env\": true, \"symbols\": [], \"guards\": [],"
        " \"inputs\": [{\"path\": \"['x']\", \"dim\": 0, \"size\": 4, \"source\": \"L['x'].size()[0]\","
        " \"traced_source\": \"L['x'].size()[0]\", \"value\": \"4\","
        " \"spec\": {\"kind\": \"dim\", \"name\": \"dx\", \"min\": 0, \"max\": 64}}],"
        " \"spec\": {\"flat\": true, \"dynamic_shapes\": {\"x\": {\"0\": {\"name\": \"dx\", \"min\": 0, \"max\": 64}}},"
        " \"inputs\": {\"arg_names\": [\"x\"], \"args\": [{\"tensor\": [4], \"dtype\": \"float32\"}], \"kwargs\": {},"
        " \"flat\": [{\"path\": \"['x']\", \"tensor\": [4], \"dtype\": \"float32\"}]}}}";
    char json[4096];
    sg_torch_text *m;
    snprintf(json, sizeof json, fmt, "2.6.0+debian");
    m = build_json(json);
    CHECK(m && m->legacy_wording && m->nlines == 1);
    if (m && m->nlines == 1)
        CHECK_EQ_STR(m->lines[0], "Not all values of dx = L['x'].size()[0] in the specified range dx <= 64 are valid "
                                  "because dx was inferred to be a constant (4).");
    sg_torch_text_free(m);
    snprintf(json, sizeof json, fmt, "2.14.1+debian");
    m = build_json(json);
    CHECK(m && !m->legacy_wording && m->nlines == 1);
    if (m && m->nlines == 1)
        CHECK_EQ_STR(m->lines[0], "You marked dx as dynamic but your code specialized it to be a constant (4). If "
                                  "you're using mark_dynamic, either remove it or use maybe_mark_dynamic. If you're "
                                  "using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO.");
    sg_torch_text_free(m);
    sg_torch_text_free(NULL);
}

int main(void)
{
    RUN(test_printer_forms);
    RUN(test_rendered_range);
    RUN(test_triviality);
    RUN(test_rebuilt_divisions);
    RUN(test_forced_specialization);
    RUN(test_wording_by_version);
    RUN(test_corpus_2_14);
    RUN(test_corpus_2_6);
    return test_summary();
}
