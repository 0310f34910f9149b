/*
 * test_archive.c - the .pt2 container layer: every corpus archive of torch
 * 2.14 (PT2 layout) and 2.6 (flat layout) opens with the right format and
 * versions and its model JSON parses; the samples and hostile files written by
 * make_hostile_archives.py (listed with their expected outcome in its
 * manifest.tsv) open or fail with the right code and message; zip bombs are
 * never decompressed; allocation failures are reported and leak nothing.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shapegate/archive.h"
#include "corpus_walk.h"
#include "test.h"

#ifndef SG_ARCHIVE_TMP
#define SG_ARCHIVE_TMP "archive_samples"
#endif

#define SAMPLES SG_ARCHIVE_TMP

/* Whole file into a NUL-terminated buffer, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
            if (len)
                *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

static int count_keys(const cJSON *obj)
{
    int n = 0;
    const cJSON *c;
    if (!cJSON_IsObject(obj))
        return -1;
    for (c = obj->child; c; c = c->next)
        n++;
    return n;
}

/* Open one corpus archive and check it against its case folder. */
static void check_corpus_case(const char *dir, const char *name, sg_archive_format want)
{
    char path[1024], rcpath[1024];
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_archive_schema sv = {-1, -1};
    char *json = NULL, *rctext = NULL, *marker = NULL;
    size_t len = 0, mlen = 0, nquoted = 0, i;
    cJSON *root = NULL, *rc = NULL;
    const sg_archive_versions *v;
    const sg_archive_model *m;
    int r;

    snprintf(path, sizeof path, "%s/%s/model.pt2", dir, name);
    snprintf(rcpath, sizeof rcpath, "%s/%s/range_constraints.json", dir, name);
    r = sg_archive_open(&a, path, NULL, &err);
    CHECK_MSG(r == 0, "%s: %s", path, err.msg);
    if (r != 0)
        return;
    CHECK_EQ_INT(sg_archive_format_of(a), want);
    v = sg_archive_versions_of(a);
    CHECK_EQ_INT(sg_archive_model_count(a), 1);
    m = sg_archive_model_at(a, 0);
    CHECK(m && strcmp(m->name, "model") == 0);
    if (want == SG_ARCHIVE_PT2) {
        CHECK_EQ_STR(sg_archive_root(a), "model");
        CHECK_EQ_STR(v->archive_format, "pt2");
        CHECK_EQ_INT(v->archive_version, 0);
        CHECK_EQ_INT(v->container_version, 6);
        CHECK_EQ_INT(v->schema_major, -1);
        CHECK_EQ_STR(sg_archive_byteorder(a), "little");
        CHECK(sg_archive_member_count(a) >= 9);
        CHECK(m && strcmp(m->json_member, "models/model.json") == 0);
        CHECK(m && m->payload == SG_ARCHIVE_PAYLOAD_RAW);
        CHECK(m && strcmp(m->weights_member, "data/weights/model_weights_config.json") == 0);
        CHECK(m && strcmp(m->sample_inputs_member, "data/sample_inputs/model.pt") == 0);
        /* torch's writer: stored, flags 0x0808, data on 64-byte boundaries */
        for (i = 0; i < sg_archive_member_count(a); i++) {
            const sg_archive_member *mb = sg_archive_member_at(a, i);
            CHECK_MSG(mb->data_offset % 64 == 0, "%s: %s at %llu", path, mb->name,
                      (unsigned long long)mb->data_offset);
            CHECK_EQ_INT(mb->method, 0);
            CHECK_EQ_INT(mb->flags, 0x0808);
            CHECK(strncmp(mb->name, "model/", 6) == 0 && strcmp(mb->rel, mb->name + 6) == 0);
        }
        r = sg_archive_read_member(&marker, &mlen, a, "archive_format", 0, &err);
        CHECK(r == 0 && mlen == 3 && marker && strcmp(marker, "pt2") == 0);
        sg_free(marker);
        r = sg_archive_read_member(&marker, &mlen, a, ".data/version", 0, &err);
        CHECK(r == 0 && mlen == 2 && marker && strcmp(marker, "6\n") == 0);
        sg_free(marker);
    } else {
        CHECK_EQ_STR(sg_archive_root(a), "");
        CHECK_EQ_STR(v->archive_format, "");
        CHECK_EQ_INT(v->archive_version, -1);
        CHECK_EQ_INT(v->schema_major, 8);
        CHECK_EQ_INT(v->schema_minor, 2);
        CHECK(sg_archive_byteorder(a) == NULL);
        CHECK(m && strcmp(m->json_member, "serialized_exported_program.json") == 0);
        CHECK(m && m->payload == SG_ARCHIVE_PAYLOAD_PICKLE);
        CHECK(sg_archive_find(a, "version") != NULL);
    }
    r = sg_archive_read_model(&json, &len, &sv, a, NULL, &err);
    CHECK_MSG(r == 0, "%s: %s", path, err.msg);
    if (r == 0) {
        CHECK_EQ_INT(sv.major, 8);
        CHECK_EQ_INT(sv.minor, want == SG_ARCHIVE_PT2 ? 20 : 2);
        CHECK_EQ_INT(strlen(json), len);
        CHECK(sg_archive_find(a, m->json_member)->size == len);
        r = sg_archive_json_quote_nonfinite(&json, &len, &nquoted, &err);
        CHECK_EQ_INT(r, 0);
        root = cJSON_ParseWithLength(json, len);
        CHECK_MSG(root != NULL, "%s: model JSON does not parse", path);
        rctext = slurp(rcpath, NULL);
        CHECK_MSG(rctext != NULL, "cannot read %s", rcpath);
        rc = rctext ? cJSON_Parse(rctext) : NULL;
        if (root && rc) {
            int n1 = count_keys(cJSON_GetObjectItemCaseSensitive(root, "range_constraints"));
            int n2 = count_keys(rc);
            CHECK_MSG(n1 == n2 && n1 >= 0, "%s: %d range constraints, %d in range_constraints.json", path, n1, n2);
        }
    }
    cJSON_Delete(root);
    cJSON_Delete(rc);
    free(rctext);
    sg_free(json);
    sg_archive_free(a);
}

/* An archive torch's save left half-written (case.json pt2_error): reading its model fails with a
 * one-line error naming the missing member, never a crash or a model. */
static void check_partial_case(const char *dir, const char *name)
{
    char path[1024];
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_archive_schema sv = {-1, -1};
    char *json = NULL;
    size_t len = 0;
    int r;

    snprintf(path, sizeof path, "%s/%s/model.pt2", dir, name);
    r = sg_archive_open(&a, path, NULL, &err);
    if (r == 0)
        r = sg_archive_read_model(&json, &len, &sv, a, NULL, &err);
    CHECK_MSG(r != 0 && json == NULL, "%s: a partial archive read as a model", path);
    CHECK_MSG(strstr(err.msg, "model.json") != NULL, "%s: %s", path, err.msg);
    sg_free(json);
    sg_archive_free(a);
}

static int run_corpus(const char *sub, sg_archive_format want)
{
    char dir[512], path[1024];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/%s", SG_CORPUS, sub);
    d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d)
        return 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/model.pt2", dir, de->d_name);
        if (access(path, R_OK) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (corpus_save_failed(path)) { /* torch's save raised: what it left has no model, refused */
            check_partial_case(dir, de->d_name);
            continue;
        }
        check_corpus_case(dir, de->d_name, want);
        n++;
    }
    closedir(d);
    return n;
}

/* Every archive the corpus records as saved (index.json, case.json) is found and read. */
static void test_corpus_pt2(void)
{
    char why[512] = "";
    int want = corpus_saved_archives(SG_CORPUS, "cases", why, sizeof why);
    CHECK_MSG(want > 0, "cases/index.json: %s", why);
    CHECK_EQ_INT(run_corpus("cases", SG_ARCHIVE_PT2), want);
}

static void test_corpus_flat(void)
{
    char why[512] = "";
    int want = corpus_saved_archives(SG_CORPUS, "cases-2.6", why, sizeof why);
    CHECK_MSG(want > 0, "cases-2.6/index.json: %s", why);
    CHECK_EQ_INT(run_corpus("cases-2.6", SG_ARCHIVE_FLAT), want);
}

/* ---- generated samples ------------------------------------------------------------ */

static int samples_ready;

static void test_generate_samples(void)
{
    char cmd[2048];
    int r;
    snprintf(cmd, sizeof cmd, "python3 '%s/tests/make_hostile_archives.py' '%s' '%s' > /dev/null", SG_SOURCE_DIR,
             SAMPLES, SG_CORPUS);
    r = system(cmd);
    CHECK_MSG(r == 0, "%s failed (%d)", cmd, r);
    samples_ready = r == 0;
}

static int code_of(const char *s)
{
    if (strcmp(s, "OK") == 0)
        return 0;
    if (strcmp(s, "EINVALID") == 0)
        return SG_EINVALID;
    if (strcmp(s, "ELIMIT") == 0)
        return SG_ELIMIT;
    if (strcmp(s, "EUNSUPPORTED") == 0)
        return SG_EUNSUPPORTED;
    if (strcmp(s, "EIO") == 0)
        return SG_EIO;
    return 999;
}

/* "key=value;key=value" onto `lim`. */
static void parse_limits(sg_archive_limits *lim, char *spec)
{
    char *tok, *save = NULL;
    if (strcmp(spec, "-") == 0)
        return;
    for (tok = strtok_r(spec, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(tok, '=');
        unsigned long long v;
        if (!eq)
            continue;
        *eq = '\0';
        v = strtoull(eq + 1, NULL, 10);
        if (strcmp(tok, "max_members") == 0)
            lim->max_members = (size_t)v;
        else if (strcmp(tok, "max_name_len") == 0)
            lim->max_name_len = (size_t)v;
        else if (strcmp(tok, "max_total_size") == 0)
            lim->max_total_size = v;
        else if (strcmp(tok, "max_member_size") == 0)
            lim->max_member_size = (size_t)v;
        else if (strcmp(tok, "max_json_size") == 0)
            lim->max_json_size = (size_t)v;
        else if (strcmp(tok, "flags") == 0)
            lim->flags = (unsigned)v;
    }
}

/* One manifest row: open, then the stage, and compare the outcome. */
static void check_row(char *file, char *stage, char *code, char *needle, char *limits)
{
    char path[1024];
    sg_archive_limits lim = SG_ARCHIVE_LIMITS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    char *data = NULL;
    size_t len = 0;
    int want = code_of(code), got;
    bool at_open = strcmp(stage, "open") == 0;

    snprintf(path, sizeof path, "%s/%s", SAMPLES, file);
    parse_limits(&lim, limits);
    got = sg_archive_open(&a, path, &lim, &err);
    if (at_open || got != 0) {
        CHECK_MSG(got == (at_open ? want : 0), "%s: open returned %d (%s), expected %s", file, got, err.msg,
                  at_open ? code : "OK");
        CHECK(got == 0 ? a != NULL : a == NULL);
    } else {
        if (strcmp(stage, "model") == 0)
            got = sg_archive_read_model(&data, &len, NULL, a, NULL, &err);
        else if (strncmp(stage, "member:", 7) == 0)
            got = sg_archive_read_member(&data, &len, a, stage + 7, 0, &err);
        CHECK_MSG(got == want, "%s: %s returned %d (%s), expected %s", file, stage, got, err.msg, code);
        CHECK(got == 0 ? data != NULL : data == NULL && len == 0);
    }
    if (got != 0) {
        CHECK_EQ_INT(err.code, got);
        CHECK_MSG(err.msg[0] != '\0' && strchr(err.msg, '\n') == NULL, "%s: message '%s'", file, err.msg);
        CHECK_MSG(strcmp(needle, "-") == 0 || strstr(err.msg, needle) != NULL,
                  "%s: message '%s' lacks '%s'", file, err.msg, needle);
    }
    sg_free(data);
    sg_archive_free(a);
}

static void test_manifest(void)
{
    char path[1024], line[4096];
    FILE *f;
    int rows = 0;

    if (!samples_ready) {
        CHECK_MSG(0, "no samples");
        return;
    }
    snprintf(path, sizeof path, "%s/manifest.tsv", SAMPLES);
    f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char *fields[5], *save = NULL, *p = line;
        int n = 0;
        line[strcspn(line, "\n")] = '\0';
        while (n < 5 && (fields[n] = strtok_r(p, "\t", &save)) != NULL) {
            p = NULL;
            n++;
        }
        CHECK_MSG(n == 5, "bad manifest line '%s'", line);
        if (n != 5)
            continue;
        check_row(fields[0], fields[1], fields[2], fields[3], fields[4]);
        rows++;
    }
    fclose(f);
    CHECK(rows >= 80);
}

static sg_archive *open_sample(const char *file)
{
    char path[1024];
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    snprintf(path, sizeof path, "%s/%s", SAMPLES, file);
    if (sg_archive_open(&a, path, NULL, &err) != 0)
        fprintf(stderr, "%s: %s\n", file, err.msg);
    return a;
}

static void check_schema(sg_archive *a, const char *model, int major, int minor)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive_schema sv = {-1, -1};
    char *json = NULL;
    size_t len = 0;
    int r = sg_archive_read_model(&json, &len, &sv, a, model, &err);
    CHECK_MSG(r == 0, "%s", err.msg);
    CHECK_EQ_INT(sv.major, major);
    CHECK_EQ_INT(sv.minor, minor);
    sg_free(json);
}

static void test_layouts(void)
{
    sg_archive *a;
    const sg_archive_model *m;
    char *data = NULL;
    size_t len = 0;
    sg_error err = SG_ERROR_INIT;

    if (!samples_ready)
        return;
    /* torch 2.8: pickled weights */
    CHECK((a = open_sample("pt2_28_pickled.pt2")) != NULL);
    if (a) {
        CHECK_EQ_STR(sg_archive_root(a), "m28");
        m = sg_archive_model_at(a, 0);
        CHECK(m && m->payload == SG_ARCHIVE_PAYLOAD_PICKLE);
        CHECK(m && strcmp(m->weights_member, "data/weights/model.pt") == 0);
        CHECK(m && strcmp(m->constants_member, "data/constants/model.pt") == 0);
        check_schema(a, NULL, 8, 8);
        sg_archive_free(a);
    }
    /* torch 2.9+: raw weights, written to a buffer (root "archive") */
    CHECK((a = open_sample("pt2_29_raw.pt2")) != NULL);
    if (a) {
        CHECK_EQ_STR(sg_archive_root(a), "archive");
        m = sg_archive_find_model(a, "model");
        CHECK(m && m->payload == SG_ARCHIVE_PAYLOAD_RAW);
        CHECK(m && strcmp(m->constants_member, "data/constants/model_constants_config.json") == 0);
        check_schema(a, "model", 8, 14);
        sg_archive_free(a);
    }
    /* a Python zipfile rewrite: no alignment, deflated model JSON */
    CHECK((a = open_sample("pt2_212_pyzip.pt2")) != NULL);
    if (a) {
        const sg_archive_member *mb = sg_archive_find(a, "models/model.json");
        CHECK_EQ_STR(sg_archive_root(a), "state_and_constants");
        CHECK(mb && mb->method == 8 && mb->comp_size < mb->size);
        CHECK(mb && mb->flags == 0);
        check_schema(a, NULL, 8, 20);
        sg_archive_free(a);
    }
    /* two models, one of them called "model" */
    CHECK((a = open_sample("pt2_multi.pt2")) != NULL);
    if (a) {
        CHECK_EQ_INT(sg_archive_model_count(a), 2);
        CHECK_EQ_STR(sg_archive_model_at(a, 0)->name, "aux");
        CHECK_EQ_STR(sg_archive_model_at(a, 1)->name, "model");
        CHECK(sg_archive_model_at(a, 2) == NULL);
        CHECK(sg_archive_find_model(a, "aux")->payload == SG_ARCHIVE_PAYLOAD_PICKLE);
        CHECK(sg_archive_find_model(a, "model")->payload == SG_ARCHIVE_PAYLOAD_RAW);
        CHECK(sg_archive_find_model(a, "nope") == NULL);
        check_schema(a, "aux", 8, 20);
        CHECK_EQ_INT(sg_archive_read_model(&data, &len, NULL, a, "nope", &err), SG_EINVALID);
        CHECK(strstr(err.msg, "no model 'nope'") != NULL);
        sg_archive_free(a);
    }
    CHECK((a = open_sample("pt2_big_endian.pt2")) != NULL);
    if (a) {
        CHECK_EQ_STR(sg_archive_byteorder(a), "big");
        sg_archive_free(a);
    }
    CHECK((a = open_sample("pt2_old_container.pt2")) != NULL);
    if (a) {
        CHECK_EQ_INT(sg_archive_versions_of(a)->container_version, 3);
        sg_archive_free(a);
    }
    CHECK((a = open_sample("pt2_extra.pt2")) != NULL);
    if (a) {
        CHECK_EQ_INT(sg_archive_read_member(&data, &len, a, "extra/shapegate.json", 0, &err), 0);
        CHECK(data && strcmp(data, "{\"note\": \"hello\"}") == 0 && len == 17);
        sg_free(data);
        data = NULL;
        /* a bound below the declared size refuses before reading */
        CHECK_EQ_INT(sg_archive_read_member(&data, &len, a, "extra/shapegate.json", 16, &err), SG_ELIMIT);
        CHECK(data == NULL && len == 0);
        sg_archive_free(a);
    }
    CHECK((a = open_sample("flat_27.pt2")) != NULL);
    if (a) {
        CHECK_EQ_INT(sg_archive_format_of(a), SG_ARCHIVE_FLAT);
        CHECK_EQ_STR(sg_archive_format_name(sg_archive_format_of(a)), "flat");
        CHECK_EQ_INT(sg_archive_versions_of(a)->schema_minor, 7);
        CHECK_EQ_STR(sg_archive_model_at(a, 0)->sample_inputs_member, "serialized_example_inputs.pt");
        check_schema(a, NULL, 8, 7);
        sg_archive_free(a);
    }
}

/* Refusing a bomb reads none of its data. */
static void test_bomb_not_read(void)
{
    static const char *const files[] = {"bomb_real.pt2", "bomb_declared_member.pt2"};
    size_t i;

    if (!samples_ready)
        return;
    for (i = 0; i < 2; i++) {
        sg_archive *a = open_sample(files[i]);
        sg_error err = SG_ERROR_INIT;
        char *data = NULL;
        size_t len = 0;
        uint64_t before;
        const char *rel = i == 0 ? "extra/zeros.bin" : "extra/bomb.bin";
        CHECK(a != NULL);
        if (!a)
            continue;
        before = sg_archive_bytes_read(a);
        CHECK(sg_archive_find(a, rel)->size >= ((uint64_t)32 << 20));
        CHECK_EQ_INT(sg_archive_read_member(&data, &len, a, rel, (size_t)1 << 20, &err), SG_ELIMIT);
        CHECK_EQ_INT(sg_archive_bytes_read(a), before);
        sg_archive_free(a);
    }
}

/* Open, read the model and every member of a damaged file: any outcome but a
 * crash, a leak or an unknown code is fine. Returns the status of open. */
static int open_and_read_all(const char *path)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    char *data = NULL;
    size_t len = 0, i;
    int r = sg_archive_open(&a, path, NULL, &err), r2;

    CHECK_MSG(r == 0 || r == SG_EINVALID || r == SG_ELIMIT || r == SG_EUNSUPPORTED, "open: %d %s", r, err.msg);
    CHECK(r == 0 || (err.msg[0] && !strchr(err.msg, '\n')));
    if (r != 0)
        return r;
    r2 = sg_archive_read_model(&data, &len, NULL, a, NULL, &err);
    CHECK_MSG(r2 == 0 || r2 == SG_EINVALID || r2 == SG_ELIMIT || r2 == SG_EUNSUPPORTED, "model: %d %s", r2, err.msg);
    sg_free(data);
    for (i = 0; i < sg_archive_member_count(a); i++) {
        data = NULL;
        r2 = sg_archive_read_member(&data, &len, a, sg_archive_member_at(a, i)->rel, 1 << 20, &err);
        CHECK_MSG(r2 == 0 || r2 == SG_EINVALID || r2 == SG_ELIMIT || r2 == SG_EUNSUPPORTED, "member: %d %s", r2,
                  err.msg);
        sg_free(data);
    }
    sg_archive_free(a);
    return 0;
}

static int write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    return ok;
}

/* Every byte of the directory and end records flipped, random flips
 * elsewhere, and truncation at many lengths: no crash, no leak, and every
 * truncation is refused. */
static void test_mutations(void)
{
    char src[1024], dst[1024];
    char *orig, *buf;
    size_t n = 0, i;
    unsigned long seed = 12345;
    int opened = 0, refused = 0;

    if (!samples_ready)
        return;
    snprintf(src, sizeof src, "%s/ok_torch_layout.pt2", SAMPLES);
    snprintf(dst, sizeof dst, "%s/mutant.bin", SAMPLES);
    orig = slurp(src, &n);
    CHECK(orig != NULL && n > 1000);
    if (!orig)
        return;
    buf = malloc(n);
    for (i = 0; i < 3000; i++) {
        size_t at;
        memcpy(buf, orig, n);
        if (i < 1000) {
            at = n - 1 - i; /* the tail: end records and central directory */
        } else {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            at = (size_t)(seed >> 33) % n;
        }
        buf[at] = (char)(buf[at] ^ (1 << (i % 8)));
        if (!write_file(dst, buf, n)) {
            CHECK_MSG(0, "cannot write %s", dst);
            break;
        }
        if (open_and_read_all(dst) == 0)
            opened++;
        else
            refused++;
    }
    for (i = 0; i < n; i += 3) {
        if (!write_file(dst, orig, i))
            break;
        CHECK_MSG(open_and_read_all(dst) != 0, "truncated to %zu bytes and still opens", i);
    }
    CHECK(opened > 0 && refused > 0);
    remove(dst);
    free(buf);
    free(orig);
}

/* ---- API edges ------------------------------------------------------------------ */

static void test_open_fd(void)
{
    char path[1024];
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    int fd;

    snprintf(path, sizeof path, "%s/cases/ok_conv2d_stride2/model.pt2", SG_CORPUS);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_EQ_INT(sg_archive_open_fd(&a, fd, NULL, &err), 0);
    close(fd); /* the archive keeps its own duplicate */
    if (a) {
        const sg_archive_member *mb = sg_archive_find(a, "data/weights/weight_0");
        CHECK(mb && mb->size == 432 && mb->data_offset == 64 && mb->header_offset == 0);
        mb = sg_archive_find(a, "models/model.json");
        CHECK(mb && mb->size == 16270 && mb->data_offset == 4032);
        CHECK(sg_archive_find(a, "model/models/model.json") == NULL);
        CHECK(sg_archive_find(a, NULL) == NULL);
        CHECK(sg_archive_member_at(a, sg_archive_member_count(a)) == NULL);
        CHECK_EQ_INT(sg_archive_member_count(a), 17);
        check_schema(a, NULL, 8, 20);
    }
    sg_archive_free(a);
    CHECK_EQ_INT(sg_archive_open_fd(&a, -1, NULL, &err), SG_EINVALID);
    CHECK(a == NULL);
}

static void test_open_errors(void)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;

    CHECK_EQ_INT(sg_archive_open(&a, SG_CORPUS "/no/such/model.pt2", NULL, &err), SG_EIO);
    CHECK(a == NULL && strstr(err.msg, "No such file") != NULL);
    CHECK_EQ_INT(sg_archive_open(&a, SG_CORPUS, NULL, &err), SG_EIO);
    CHECK(strstr(err.msg, "regular file") != NULL);
    CHECK_EQ_INT(sg_archive_open(&a, NULL, NULL, &err), SG_EINVALID);
    CHECK(a == NULL);
    sg_archive_free(NULL);
    CHECK_EQ_STR(sg_archive_format_name(SG_ARCHIVE_PT2), "pt2");
}

static void test_quote_nonfinite(void)
{
    static const char text[] = "{\"a\": -Infinity, \"b\": \"NaN\", \"c\": [NaN, Infinity], \"d\": \"x\\\"Infinity\"}";
    sg_error err = SG_ERROR_INIT;
    char *json = malloc(sizeof text);
    size_t len = sizeof text - 1, n = 99;
    cJSON *root;

    memcpy(json, text, sizeof text);
    CHECK_EQ_INT(sg_archive_json_quote_nonfinite(&json, &len, &n, &err), 0);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_STR(json, "{\"a\": \"-Infinity\", \"b\": \"NaN\", \"c\": [\"NaN\", \"Infinity\"], \"d\": \"x\\\"Infinity\"}");
    CHECK_EQ_INT(len, strlen(json));
    root = cJSON_ParseWithLength(json, len);
    CHECK(root != NULL);
    cJSON_Delete(root);
    /* nothing to quote: unchanged */
    CHECK_EQ_INT(sg_archive_json_quote_nonfinite(&json, &len, &n, &err), 0);
    CHECK_EQ_INT(n, 0);
    sg_free(json);
}

/* Every allocation of open + read may fail: SG_ENOMEM each time, no leak. */
static void test_alloc_failures(void)
{
    static const char *const files[] = {"cases-2.6/large_transformer_ok/model.pt2",
                                        "cases/ok_conv2d_stride2/model.pt2"};
    size_t f;

    for (f = 0; f < 2; f++) {
        char path[1024];
        long n;
        int ok = 0;
        snprintf(path, sizeof path, "%s/%s", SG_CORPUS, files[f]);
        for (n = 0; n < 500 && !ok; n++) {
            sg_error err = SG_ERROR_INIT;
            sg_archive *a = NULL;
            char *json = NULL;
            size_t len = 0;
            int r;
            sg_alloc_fail_after(n);
            r = sg_archive_open(&a, path, NULL, &err);
            if (r == 0)
                r = sg_archive_read_model(&json, &len, NULL, a, NULL, &err);
            if (r == 0)
                r = sg_archive_json_quote_nonfinite(&json, &len, NULL, &err);
            sg_alloc_fail_after(-1);
            CHECK_MSG(r == 0 || r == SG_ENOMEM, "%s after %ld allocations: %d %s", files[f], n, r, err.msg);
            ok = r == 0;
            sg_free(json);
            sg_archive_free(a);
        }
        CHECK(ok);
        CHECK(n > 5);
    }
}

int main(void)
{
    RUN(test_corpus_pt2);
    RUN(test_corpus_flat);
    RUN(test_generate_samples);
    RUN(test_manifest);
    RUN(test_layouts);
    RUN(test_bomb_not_read);
    RUN(test_mutations);
    RUN(test_open_fd);
    RUN(test_open_errors);
    RUN(test_quote_nonfinite);
    RUN(test_alloc_failures);
    return test_summary();
}
