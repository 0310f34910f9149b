/*
 * test_pack.c - writing archives (archive/write.c) and the record `pack`
 * stores (graph/verify.c), plus util/sha256.c:
 * - SHA-256 against the FIPS 180-4 example vectors and Python's hashlib;
 * - every corpus model.pt2 (torch 2.14 PT2 and torch 2.6 flat) packed into
 *   the build tree: every original member's local header, data and data
 *   descriptor byte for byte identical and its central entry fields equal,
 *   the new member present (stored; PT2: flags 0x0808 and 64-byte aligned
 *   data) and valid JSON with the SHA-256 of the model JSON, the archive
 *   reading back with our reader (with libzip's consistency check) and
 *   with Python's zipfile;
 * - packing a packed archive replaces the record instead of adding one;
 * - failures (missing or unusable output folder, output = input, unsafe
 *   member name, the source failing mid-copy) leave no file behind and an
 *   existing output untouched;
 * - the committed fixtures tests/data/packed/ against their sources.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "shapegate/archive.h"
#include "analysis/check.h"
#include "shapegate/graph.h"
#include "corpus_walk.h"
#include "test.h"
#include "util/sha256.h"

#ifndef SG_PACK_TMP
#define SG_PACK_TMP "/tmp/sg_test_pack"
#endif

/* ---- SHA-256 ---------------------------------------------------------------------- */

static void test_sha256_vectors(void)
{
    static const struct {
        const char *msg, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[SG_SHA256_HEX_LEN + 1];
    unsigned char d[SG_SHA256_LEN];
    char chunk[1000];
    sg_sha256 c;
    size_t i, fed = 0, step = 1;

    for (i = 0; i < sizeof v / sizeof v[0]; i++) {
        sg__sha256_hex(hex, v[i].msg, strlen(v[i].msg));
        CHECK_EQ_STR(hex, v[i].hex);
    }
    /* one million 'a', fed in uneven pieces */
    memset(chunk, 'a', sizeof chunk);
    sg__sha256_init(&c);
    while (fed < 1000000) {
        size_t k = step % 997 + 1;
        if (k > 1000000 - fed)
            k = 1000000 - fed;
        sg__sha256_update(&c, chunk, k);
        fed += k;
        step = step * 31 + 7;
    }
    sg__sha256_final(&c, d);
    for (i = 0; i < SG_SHA256_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    CHECK_EQ_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* Every length 0..200 and a few larger ones, pseudo-random bytes, against hashlib. */
static void test_sha256_hashlib(void)
{
    static const size_t extra[] = {447, 448, 511, 512, 513, 4096 + 13, 100003};
    char path[512], line[256], hex[SG_SHA256_HEX_LEN + 1], cmd[1024];
    unsigned char *buf = malloc(100003 + 8);
    uint32_t x = 12345;
    size_t n, i, count = 0, total = 201 + sizeof extra / sizeof extra[0];
    FILE *f, *p;

    mkdir(SG_PACK_TMP, 0755);
    snprintf(path, sizeof path, "%s/sha_inputs.bin", SG_PACK_TMP);
    f = fopen(path, "wb");
    CHECK(f && buf);
    if (!f || !buf) {
        free(buf);
        return;
    }
    for (i = 0; i < 100003 + 8; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    /* the file: for each case a 4-byte little-endian length, then the bytes */
    for (i = 0; i < total; i++) {
        n = i <= 200 ? i : extra[i - 201];
        fputc((int)(n & 255), f), fputc((int)((n >> 8) & 255), f), fputc((int)((n >> 16) & 255), f), fputc(0, f);
        fwrite(buf + (i % 7), 1, n, f);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import hashlib,struct,sys\nd=open(sys.argv[1],'rb').read();p=0\n"
             "while p<len(d):\n n=struct.unpack('<I',d[p:p+4])[0];print(hashlib.sha256(d[p+4:p+4+n]).hexdigest());p+=4+n\" %s",
             path);
    p = popen(cmd, "r");
    CHECK(p != NULL);
    for (i = 0; p && i < total && fgets(line, sizeof line, p); i++) {
        n = i <= 200 ? i : extra[i - 201];
        line[strcspn(line, "\n")] = '\0';
        sg__sha256_hex(hex, buf + (i % 7), n);
        CHECK_MSG(strcmp(hex, line) == 0, "length %zu: %s != %s", n, hex, line);
        count++;
    }
    if (p)
        CHECK_EQ_INT(pclose(p), 0);
    CHECK_EQ_INT(count, total);
    free(buf);
}

/* ---- packing ---------------------------------------------------------------------- */

/* Pack `src` into `out` the way `shapegate pack` does; returns the status (err filled). */
static int pack(const char *src, const char *out, sg_error *err)
{
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_graph_record_info info;
    char *json = NULL, *rec = NULL;
    size_t len = 0;
    int rc;

    memset(&info, 0, sizeof info);
    if ((rc = sg_archive_open(&a, src, NULL, err)) == 0 && (rc = sg_archive_read_model(&json, &len, NULL, a, NULL, err)) == 0
        && (rc = sg_graph_parse(&g, json, len, err)) == 0 && (rc = sg_graph_to_trace(&t, g, err)) == 0
        && (rc = sg_check(&r, t, &opts, err)) == 0) {
        info.model_member = sg_archive_model_at(a, 0)->json_member;
        info.model_json = json;
        info.model_len = len;
        info.tool_version = "test";
        info.opts = &opts;
        if ((rc = sg_graph_constraints_json(&rec, g, r, &info, err)) == 0)
            rc = sg_archive_write_with(a, out, sg_archive_constraints_member(sg_archive_format_of(a)), rec,
                                       strlen(rec), err);
    }
    sg_free(rec);
    sg_report_free(r);
    sg_trace_free(t);
    sg_graph_free(g);
    sg_free(json);
    sg_archive_free(a);
    return rc;
}

/* `n` bytes at `off` of the file `fd` into `buf`; false on a short read. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
    return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* The bytes of member `m` as written: local header, data, and a 16-byte data
 * descriptor when flag bit 3 is set. New buffer (free) of `*n` bytes. */
static unsigned char *member_bytes(int fd, const sg_archive_member *m, size_t *n)
{
    size_t k = (size_t)(m->data_offset + m->comp_size - m->header_offset) + ((m->flags & 8) ? 16 : 0);
    unsigned char *b = malloc(k ? k : 1);

    if (b && !read_at(fd, b, k, m->header_offset)) {
        free(b);
        return NULL;
    }
    *n = k;
    return b;
}

/* How many members of `a` have relative name `rel`. */
static size_t count_named(const sg_archive *a, const char *rel)
{
    size_t i, n = 0;
    for (i = 0; i < sg_archive_member_count(a); i++)
        n += strcmp(sg_archive_member_at(a, i)->rel, rel) == 0;
    return n;
}

/*
 * Check `out` against its source `src`: every member of `src` other than the
 * record is in `out` with identical bytes and central fields; the record is
 * there once, valid, naming the model JSON's SHA-256. Returns the number of
 * members compared.
 */
static size_t compare(const char *src, const char *out)
{
    sg_archive_limits lim = SG_ARCHIVE_LIMITS_INIT;
    sg_archive *a = NULL, *b = NULL;
    sg_graph *g = NULL;
    sg_error err = SG_ERROR_INIT;
    const sg_archive_member *rm;
    const char *rel;
    char *json = NULL, *rec = NULL, hex[SG_SHA256_HEX_LEN + 1];
    size_t len = 0, rlen = 0, i, same = 0;
    int fa = -1, fb = -1;
    cJSON *j = NULL;

    lim.flags = SG_ARCHIVE_CHECKCONS;
    CHECK_MSG(sg_archive_open(&a, src, NULL, &err) == 0, "%s: %s", src, err.msg);
    CHECK_MSG(sg_archive_open(&b, out, &lim, &err) == 0, "%s: %s", out, err.msg);
    fa = open(src, O_RDONLY);
    fb = open(out, O_RDONLY);
    if (!a || !b || fa < 0 || fb < 0)
        goto cleanup;
    rel = sg_archive_constraints_member(sg_archive_format_of(a));
    CHECK_EQ_INT(sg_archive_format_of(b), sg_archive_format_of(a));
    CHECK_EQ_STR(sg_archive_root(b), sg_archive_root(a));
    CHECK_EQ_INT(sg_archive_member_count(b), sg_archive_member_count(a) + (count_named(a, rel) ? 0 : 1));
    CHECK_EQ_INT(count_named(b, rel), 1);
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i), *n;
        unsigned char *x, *y;
        size_t nx = 0, ny = 0;
        if (strcmp(m->rel, rel) == 0)
            continue;
        n = sg_archive_find(b, m->rel);
        CHECK_MSG(n != NULL, "%s: member %s missing", out, m->name);
        if (!n)
            continue;
        CHECK(n->size == m->size && n->comp_size == m->comp_size && n->crc == m->crc && n->method == m->method
              && n->flags == m->flags);
        CHECK_EQ_INT(n->data_offset - n->header_offset, m->data_offset - m->header_offset);
        CHECK_EQ_INT(n->data_offset % 64, m->data_offset % 64); /* alignment kept */
        x = member_bytes(fa, m, &nx);
        y = member_bytes(fb, n, &ny);
        CHECK_MSG(x && y && nx == ny && memcmp(x, y, nx) == 0, "%s: member %s differs", out, m->name);
        same += x && y && nx == ny && memcmp(x, y, nx) == 0;
        free(x);
        free(y);
    }
    /* the record */
    rm = sg_archive_find(b, rel);
    CHECK(rm != NULL);
    if (!rm)
        goto cleanup;
    CHECK_EQ_INT(rm->method, 0);
    if (sg_archive_format_of(b) == SG_ARCHIVE_PT2) {
        CHECK_EQ_INT(rm->flags, 0x0808);
        CHECK_EQ_INT(rm->data_offset % 64, 0);
    }
    CHECK_MSG(sg_archive_read_member(&rec, &rlen, b, rel, 0, &err) == 0, "%s", err.msg);
    CHECK_MSG(sg_archive_read_model(&json, &len, NULL, b, NULL, &err) == 0, "%s", err.msg);
    CHECK_MSG(sg_graph_load(&g, b, NULL, &err) == 0, "%s", err.msg);
    if (!rec || !json)
        goto cleanup;
    j = cJSON_ParseWithLengthOpts(rec, rlen, NULL, 0);
    CHECK_MSG(cJSON_IsObject(j), "%s: the record is not a JSON object", out);
    sg__sha256_hex(hex, json, len);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "model"), "sha256")), hex);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "format")), "shapegate-constraints");
    { /* the record's verdict is the one the loaded module's behaviour in torch calls for */
        char dir[1024], want[64];
        const char *slash;
        snprintf(dir, sizeof dir, "%s", src);
        if ((slash = strrchr(dir, '/')))
            dir[slash - dir] = '\0';
        if (corpus_expected_verify(dir, want, sizeof want))
            CHECK_MSG(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(j, "verdict")), want) == 0, "%s: verdict %s, want %s",
                      src, cJSON_GetStringValue(cJSON_GetObjectItem(j, "verdict")), want);
    }
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(j, "inputs")));
cleanup:
    cJSON_Delete(j);
    sg_free(rec);
    sg_free(json);
    sg_graph_free(g);
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    sg_archive_free(a);
    sg_archive_free(b);
    return same;
}

/* Call `fn(src, tag)` for every corpus model.pt2; returns how many. */
static int each_corpus(void (*fn)(const char *src, const char *tag))
{
    static const char *const vers[] = {"cases", "cases-2.6"};
    char src[1024], tag[512];
    size_t v;
    int n = 0;

    for (v = 0; v < 2; v++) {
        char dir[600];
        struct dirent **list = NULL;
        int k, nl;
        snprintf(dir, sizeof dir, "%s/%s", SG_CORPUS, vers[v]);
        nl = scandir(dir, &list, NULL, alphasort);
        for (k = 0; k < nl; k++) {
            snprintf(src, sizeof src, "%s/%s", dir, list[k]->d_name);
            /* an archive torch's save left half-written is not one (test_archive: refused) */
            bool saved = list[k]->d_name[0] != '.' && !corpus_save_failed(src);
            snprintf(src, sizeof src, "%s/%s/model.pt2", dir, list[k]->d_name);
            if (saved && access(src, R_OK) == 0) {
                snprintf(tag, sizeof tag, "%s__%s", vers[v], list[k]->d_name);
                fn(src, tag);
                n++;
            }
            free(list[k]);
        }
        free(list);
    }
    return n;
}

static size_t members_same;

static void pack_and_compare(const char *src, const char *tag)
{
    char out[1024];
    sg_error err = SG_ERROR_INIT;
    int rc;

    snprintf(out, sizeof out, "%s/packed/%s.pt2", SG_PACK_TMP, tag);
    rc = pack(src, out, &err);
    CHECK_MSG(rc == 0, "%s: %s", src, err.msg);
    if (rc == 0)
        members_same += compare(src, out);
}

static void test_corpus_pack(void)
{
    char cmd[2048], why[512] = "";
    int n, rc, want, want2;

    mkdir(SG_PACK_TMP, 0755);
    (void)system("rm -rf " SG_PACK_TMP "/packed");
    mkdir(SG_PACK_TMP "/packed", 0755);
    members_same = 0;
    n = each_corpus(pack_and_compare);
    want = corpus_saved_archives(SG_CORPUS, "cases", why, sizeof why);
    want2 = corpus_saved_archives(SG_CORPUS, "cases-2.6", why, sizeof why);
    CHECK_MSG(want > 0 && want2 > 0, "corpus index: %s", why);
    CHECK_EQ_INT(n, want + want2);
    printf("corpus archives packed: %d, original members byte-identical: %zu\n", n, members_same);
    /* Python's zipfile reads every packed archive: CRCs good, the record's SHA-256 right */
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import glob,hashlib,json,sys,zipfile\n"
             "n=0\n"
             "for p in sorted(glob.glob(sys.argv[1]+'/*.pt2')):\n"
             " z=zipfile.ZipFile(p); assert z.testzip() is None, p\n"
             " names=z.namelist(); rec=[x for x in names if x.endswith('shapegate/constraints.json')]\n"
             " assert len(rec)==1, p\n"
             " r=json.loads(z.read(rec[0])); root=names[0].split('/')[0]+'/' if rec[0].startswith(names[0].split('/')[0]+'/extra/') else ''\n"
             " m=z.read(root+r['model']['member']); assert hashlib.sha256(m).hexdigest()==r['model']['sha256'], p\n"
             " n+=1\n"
             "assert n==%d, n\" %s/packed",
             n, SG_PACK_TMP);
    rc = system(cmd);
    CHECK_EQ_INT(rc, 0);
}

/* Packing a packed archive replaces the record: same members, the record once. */
static void test_repack(void)
{
    const char *src = SG_CORPUS "/cases/ok_derived_spec_2x/model.pt2";
    const char *flat = SG_CORPUS "/cases-2.6/ok_nonzero/model.pt2";
    sg_error err = SG_ERROR_INIT;

    mkdir(SG_PACK_TMP, 0755);
    CHECK(pack(src, SG_PACK_TMP "/re1.pt2", &err) == 0);
    CHECK_MSG(pack(SG_PACK_TMP "/re1.pt2", SG_PACK_TMP "/re2.pt2", &err) == 0, "%s", err.msg);
    compare(src, SG_PACK_TMP "/re2.pt2");
    compare(SG_PACK_TMP "/re1.pt2", SG_PACK_TMP "/re2.pt2");
    CHECK(pack(flat, SG_PACK_TMP "/re3.pt2", &err) == 0);
    CHECK_MSG(pack(SG_PACK_TMP "/re3.pt2", SG_PACK_TMP "/re4.pt2", &err) == 0, "%s", err.msg);
    compare(flat, SG_PACK_TMP "/re4.pt2");
}

/* Files in `dir` whose name starts with `prefix`. */
static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Copy file `a` to `b`. */
static bool copy_file(const char *a, const char *b)
{
    char buf[65536];
    FILE *f = fopen(a, "rb"), *g = fopen(b, "wb");
    size_t n;
    bool ok = f && g;

    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
        ok = fwrite(buf, 1, n, g) == n;
    if (f)
        fclose(f);
    if (g && fclose(g) != 0)
        ok = false;
    return ok;
}

static void test_failures(void)
{
    const char *src = SG_CORPUS "/cases/ok_nonzero/model.pt2";
    const char *dir = SG_PACK_TMP "/fail";
    sg_archive *a = NULL;
    sg_error err = SG_ERROR_INIT;
    char before[SG_SHA256_HEX_LEN + 1], after[SG_SHA256_HEX_LEN + 1], buf[64];
    FILE *f;
    int fd;

    (void)system("rm -rf " SG_PACK_TMP "/fail");
    mkdir(SG_PACK_TMP, 0755);
    mkdir(dir, 0755);
    /* an output folder that does not exist, or is a file */
    CHECK_EQ_INT(pack(src, SG_PACK_TMP "/fail/nodir/out.pt2", &err), SG_EIO);
    f = fopen(SG_PACK_TMP "/fail/afile", "w");
    if (f)
        fclose(f);
    CHECK_EQ_INT(pack(src, SG_PACK_TMP "/fail/afile/out.pt2", &err), SG_EIO);
    /* the output is a folder: refused before anything is written */
    mkdir(SG_PACK_TMP "/fail/isdir.pt2", 0755);
    CHECK_EQ_INT(pack(src, SG_PACK_TMP "/fail/isdir.pt2", &err), SG_EINVALID);
    CHECK(strstr(err.msg, "not a regular file (a folder)") != NULL);
    CHECK_EQ_INT(count_files(dir, "."), 2); /* only . and .. */
    /* the output is the input */
    CHECK(copy_file(src, SG_PACK_TMP "/fail/self.pt2"));
    f = fopen(SG_PACK_TMP "/fail/self.pt2", "rb");
    if (f) {
        static unsigned char data[1 << 20];
        size_t n = fread(data, 1, sizeof data, f);
        fclose(f);
        sg__sha256_hex(before, data, n);
    }
    CHECK_EQ_INT(pack(SG_PACK_TMP "/fail/self.pt2", SG_PACK_TMP "/fail/self.pt2", &err), SG_EINVALID);
    CHECK(strstr(err.msg, "is the input archive") != NULL);
    f = fopen(SG_PACK_TMP "/fail/self.pt2", "rb");
    if (f) {
        static unsigned char data[1 << 20];
        size_t n = fread(data, 1, sizeof data, f);
        fclose(f);
        sg__sha256_hex(after, data, n);
        CHECK_EQ_STR(after, before);
    }
    /* unsafe member names */
    CHECK(sg_archive_open(&a, src, NULL, &err) == 0);
    if (a) {
        CHECK_EQ_INT(sg_archive_write_with(a, SG_PACK_TMP "/fail/bad.pt2", "../evil", "x", 1, &err), SG_EINVALID);
        CHECK_EQ_INT(sg_archive_write_with(a, SG_PACK_TMP "/fail/bad.pt2", "/abs", "x", 1, &err), SG_EINVALID);
        CHECK_EQ_INT(sg_archive_write_with(a, SG_PACK_TMP "/fail/bad.pt2", "extra/", "x", 1, &err), SG_EINVALID);
        CHECK_EQ_INT(access(SG_PACK_TMP "/fail/bad.pt2", F_OK), -1);
        sg_archive_free(a);
        a = NULL;
    }
    /* the source fails while it is copied (truncated after open): an existing
     * output keeps its content, no temporary file is left */
    f = fopen(SG_PACK_TMP "/fail/keep.pt2", "w");
    if (f) {
        fputs("old", f);
        fclose(f);
    }
    CHECK(copy_file(src, SG_PACK_TMP "/fail/shrinks.pt2"));
    CHECK(sg_archive_open(&a, SG_PACK_TMP "/fail/shrinks.pt2", NULL, &err) == 0);
    if (a) {
        CHECK(truncate(SG_PACK_TMP "/fail/shrinks.pt2", 5000) == 0);
        CHECK(sg_archive_write_with(a, SG_PACK_TMP "/fail/keep.pt2", "extra/x.json", "{}", 2, &err) < 0);
        sg_archive_free(a);
    }
    fd = open(SG_PACK_TMP "/fail/keep.pt2", O_RDONLY);
    memset(buf, 0, sizeof buf);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) == 3 && strcmp(buf, "old") == 0);
    if (fd >= 0)
        close(fd);
    CHECK_EQ_INT(count_files(dir, "."), 2);
    CHECK_EQ_INT(count_files(dir, "out"), 0);
}

/* Each committed fixture tests/data/packed/<tag>.pt2 against tests/corpus/<ver>/<case>/model.pt2. */
static void test_fixtures(void)
{
    char dirp[1024], src[1400], out[1400];
    struct dirent **list = NULL;
    int k, nl, n = 0;

    snprintf(dirp, sizeof dirp, "%s/tests/data/packed", SG_SOURCE_DIR);
    nl = scandir(dirp, &list, NULL, alphasort);
    for (k = 0; k < nl; k++) {
        const char *name = list[k]->d_name;
        size_t len = strlen(name);
        if (len > 4 && strcmp(name + len - 4, ".pt2") == 0) {
            /* "cases-2.6__ok_nonzero.pt2" -> cases-2.6/ok_nonzero */
            const char *sep = strstr(name, "__");
            if (sep) {
                snprintf(src, sizeof src, "%s/%.*s/%.*s/model.pt2", SG_CORPUS, (int)(sep - name), name,
                         (int)(len - 4 - (size_t)(sep + 2 - name)), sep + 2);
                snprintf(out, sizeof out, "%s/%s", dirp, name);
                CHECK_MSG(compare(src, out) > 0, "%s", name);
                n++;
            }
        }
        free(list[k]);
    }
    free(list);
    CHECK_MSG(n >= 4, "only %d fixtures in tests/data/packed", n);
    printf("committed packed fixtures checked: %d\n", n);
}

int main(void)
{
    RUN(test_sha256_vectors);
    RUN(test_sha256_hashlib);
    RUN(test_corpus_pack);
    RUN(test_repack);
    RUN(test_failures);
    RUN(test_fixtures);
    return test_summary();
}
