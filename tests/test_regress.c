/*
 * test_regress.c - replays every committed fuzz regression input
 * (every file of tests/data/regress/<target>/, see docs/robustness.md; targets expr, trace,
 * archive, graph, check, spec, dir) through the same code
 * the libFuzzer targets run (fuzz/fuzz_*.c compiled with SG_FUZZ_NO_MAIN), so
 * that the ordinary suite, and its ASan+UBSan build, catch a crash coming back.
 * A property failure aborts the program (the fuzz bodies call abort()); a clean
 * run counts one check per file replayed, and an input that takes longer than
 * the fuzz runs' own timeout (10 s, fuzz/common.sh) fails: hangs come back too.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oracle_model.h"
#include "shapegate/archive.h"
#include "shapegate/graph.h"
#include "test.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

/* The longest one input may take, in seconds: libFuzzer's -timeout in fuzz/common.sh. */
#define REPLAY_MAX_S 10.0

/* Read the whole file `path` into a new buffer; returns NULL on failure. */
static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        goto cleanup;
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    *len = (size_t)n;
cleanup:
    fclose(f);
    return buf;
}

/* Feed every file of tests/data/regress/<target>/ (but *.md notes) to `fn`. */
static void replay(const char *target, fuzz_fn fn)
{
    char dir[4096], path[8192];
    struct dirent *de;
    DIR *d;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/tests/data/regress/%s", SG_SOURCE_DIR, target);
    d = opendir(dir);
    if (!d)
        return; /* no inputs for this target yet */
    while ((de = readdir(d)) != NULL) {
        size_t len = 0, nl = strlen(de->d_name);
        uint8_t *data;

        if (de->d_name[0] == '.' || (nl > 3 && strcmp(de->d_name + nl - 3, ".md") == 0))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        data = read_all(path, &len);
        CHECK_MSG(data != NULL, "cannot read %s", path);
        if (data) {
            double t0 = now_seconds(), secs;
            fn(data, len);
            secs = now_seconds() - t0;
            CHECK_MSG(secs < REPLAY_MAX_S, "%s took %.1f s (a hang: over %.0f s)", path, secs, REPLAY_MAX_S);
            n++;
        }
        free(data);
    }
    closedir(d);
    printf("%s: %d regression inputs replayed\n", target, n);
}

/* One test per target: replay its folder. */
static void test_expr(void) { replay("expr", sg_fuzz_expr); }
static void test_trace(void) { replay("trace", sg_fuzz_trace); }
static void test_archive(void) { replay("archive", sg_fuzz_archive); }
static void test_graph(void) { replay("graph", sg_fuzz_graph); }
static void test_check(void) { replay("check", sg_fuzz_check); }
static void test_spec(void) { replay("spec", sg_fuzz_spec); }
static void test_dir(void) { replay("dir", sg_fuzz_dir); }

/* A few fixed inputs through every body, so each runs even with no regressions. */
static void test_smoke(void)
{
    static const char *const texts[] = {"", "Eq(Mod(s0, 2), 0)", "{}", "PK\x05\x06", "[[[[",
                                        "\x09x.0=dx:2..16", "\x0b['y'].0=2*dx+1\ndx:3..9",
                                        "\x08{\"x\": {\"0\": {\"name\": \"dx\", \"min\": 2, \"max\": 8}}}"};
    size_t i;

    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const uint8_t *p = (const uint8_t *)texts[i];
        size_t n = strlen(texts[i]);
        sg_fuzz_expr(p, n);
        sg_fuzz_trace(p, n);
        sg_fuzz_archive(p, n);
        sg_fuzz_graph(p, n);
        sg_fuzz_check(p, n);
        sg_fuzz_spec(p, n);
        sg_fuzz_dir(p, n);
    }
    CHECK(1);
}

/* The graph body on real models (a torch 2.14 and a torch 2.6 archive), so its success path runs. */
static void test_graph_models(void)
{
    static const char *const cases[] = {"cases/ok_nonzero", "cases-2.6/ok_nonzero"};
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sg_error err = SG_ERROR_INIT;
        sg_archive *a = NULL;
        char path[4096], *json = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/tests/corpus/%s/model.pt2", SG_SOURCE_DIR, cases[i]);
        CHECK_MSG(sg_archive_open(&a, path, NULL, &err) == 0 && sg_archive_read_model(&json, &len, NULL, a, NULL, &err) == 0
                      && sg_archive_json_quote_nonfinite(&json, &len, NULL, &err) == 0,
                  "%s: %s", path, err.msg);
        if (json) {
            sg_graph *g = NULL;
            /* the model parses and converts, so the body below runs its whole success path */
            CHECK_MSG(sg_graph_parse(&g, json, len, &err) == 0, "%s: %s", path, err.msg);
            sg_graph_free(g);
            sg_fuzz_graph((const uint8_t *)json, len);
        }
        sg_free(json);
        sg_archive_free(a);
    }
}

/* Runs every test; exit status 1 when one failed. */
int main(void)
{
    RUN(test_smoke);
    RUN(test_graph_models);
    RUN(test_expr);
    RUN(test_trace);
    RUN(test_archive);
    RUN(test_graph);
    RUN(test_check);
    RUN(test_spec);
    RUN(test_dir);
    return test_summary();
}
