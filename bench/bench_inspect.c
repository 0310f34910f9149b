/*
 * bench_inspect.c - `shapegate inspect` on a large archive against the I/O
 * limit. Generates (with libzip, in a child process, into a temporary
 * directory) a copy of a corpus model.pt2 (PT2 layout) with large stored
 * weight members in front of it (default 8 x 64 MiB of pseudo-random bytes
 * under <root>/data/bench/), opens it, unlinks it at once (so the file is
 * gone whatever happens next: only the open descriptor keeps it), and times
 *   1. the inspect path in-process: sg_archive_open_fd, sg_archive_read_model,
 *      sg_graph_parse and the --json printout (to /dev/null), per phase;
 *   2. the limit: the end record, the central directory and the model JSON
 *      member read with raw pread() calls and nothing else; and the same
 *      through libzip (zip_fdopen, zip_fopen, zip_fread);
 *   3. `shapegate inspect --json /proc/self/fd/N` as a process, against the
 *      process start-up alone (`shapegate --version`);
 *   4. reading every byte of the file, for scale.
 * Best of N warm-cache runs, plus one cold run of 1 and 2 after dropping this
 * file's pages from the page cache (posix_fadvise DONTNEED on our file only).
 * Prints the bytes each path reads (/proc/self/io rchar, and
 * sg_archive_bytes_read) and peak RSS (getrusage). See bench/README.md.
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE /* wait4 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "util/int.h"
#include "shapegate/archive.h"
#include "shapegate/graph.h"

#include "bench_util.h"

#ifndef SG_CORPUS
#define SG_CORPUS "tests/corpus"
#endif
#ifndef SG_SHAPEGATE
#define SG_SHAPEGATE "shapegate"
#endif

#define DEFAULT_MODEL SG_CORPUS "/cases/large_transformer_8layers_auto/model.pt2"

/* Options. */
typedef struct opts {
    const char *model;     /* source corpus model.pt2 */
    const char *tmp;       /* parent of the temporary directory */
    const char *shapegate; /* the CLI binary, or NULL to skip the process timing */
    int runs;
    int nbig;              /* large members */
    size_t bigsize;        /* bytes per large member */
} opts;

/* ---- generating the archive (child process) ------------------------------------- */

/* Fill `buf` with xorshift64 bytes. */
static void fill_random(unsigned char *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed ? seed : 88172645463325252ULL;
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(buf + i, &x, 8);
    }
    for (; i < n; i++)
        buf[i] = (unsigned char)(x >> (i % 8));
}

/*
 * Write `dst`: `nbig` stored members of `bigsize` pseudo-random bytes under
 * <root>/data/bench/, then every member of `src` (stored, in order). The
 * members share one buffer (their bytes are never read by what is measured).
 * Returns 0, or -1 with a message on stderr.
 */
static int generate(const char *src, const char *dst, int nbig, size_t bigsize)
{
    zip_t *in = NULL, *out = NULL;
    unsigned char *buf = NULL;
    char root[256], name[512];
    const char *first, *slash;
    zip_int64_t i, n;
    int zerr = 0, rc = -1;

    if (!(in = zip_open(src, ZIP_RDONLY, &zerr))) {
        fprintf(stderr, "bench_inspect: cannot open %s (libzip error %d)\n", src, zerr);
        goto cleanup;
    }
    n = zip_get_num_entries(in, 0);
    first = n > 0 ? zip_get_name(in, 0, 0) : NULL;
    if (!first || !(slash = strchr(first, '/')) || (size_t)(slash - first) >= sizeof root) {
        fprintf(stderr, "bench_inspect: %s is not a PT2 archive (no root folder)\n", src);
        goto cleanup;
    }
    memcpy(root, first, (size_t)(slash - first));
    root[slash - first] = '\0';
    if (!(out = zip_open(dst, ZIP_CREATE | ZIP_EXCL, &zerr))) {
        fprintf(stderr, "bench_inspect: cannot create %s (libzip error %d)\n", dst, zerr);
        goto cleanup;
    }
    if (!(buf = malloc(bigsize))) {
        fprintf(stderr, "bench_inspect: out of memory\n");
        goto cleanup;
    }
    fill_random(buf, bigsize, 0x5eed);
    for (i = 0; i < nbig; i++) {
        zip_source_t *zs = zip_source_buffer(out, buf, bigsize, 0);
        zip_int64_t idx;
        snprintf(name, sizeof name, "%s/data/bench/weight_big_%d", root, (int)i);
        if (!zs || (idx = zip_file_add(out, name, zs, ZIP_FL_ENC_UTF_8)) < 0) {
            zip_source_free(zs);
            fprintf(stderr, "bench_inspect: adding %s: %s\n", name, zip_strerror(out));
            goto cleanup;
        }
        zip_set_file_compression(out, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    }
    for (i = 0; i < n; i++) {
        zip_source_t *zs = zip_source_zip(out, in, (zip_uint64_t)i, 0, 0, -1);
        const char *nm = zip_get_name(in, (zip_uint64_t)i, 0);
        zip_int64_t idx;
        if (!zs || !nm || (idx = zip_file_add(out, nm, zs, ZIP_FL_ENC_UTF_8)) < 0) {
            zip_source_free(zs);
            fprintf(stderr, "bench_inspect: copying member %d: %s\n", (int)i, zip_strerror(out));
            goto cleanup;
        }
        zip_set_file_compression(out, (zip_uint64_t)idx, ZIP_CM_STORE, 0);
    }
    if (zip_close(out) != 0) {
        fprintf(stderr, "bench_inspect: writing %s: %s\n", dst, zip_strerror(out));
        goto cleanup;
    }
    out = NULL;
    rc = 0;
cleanup:
    if (out)
        zip_discard(out);
    if (in)
        zip_discard(in);
    free(buf);
    return rc;
}

/* Remove every entry of directory `dir`, then `dir`. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4096 + 260];

    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/*
 * Generate the archive in a child process (so its 64 MiB buffer does not
 * count in this process's peak RSS) under a new temporary directory, open
 * it, and remove the file and the directory before returning, on success or
 * failure. SIGINT/SIGTERM/SIGHUP are ignored here meanwhile (the child keeps
 * the defaults), so an interrupted run still cleans up. Returns the open
 * descriptor, or -1.
 */
static int make_archive(const opts *o, double *secs)
{
    char dir[4096], path[4200];
    struct sigaction ign, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    pid_t pid;
    int status = 0, fd = -1, k;
    double t0 = now();

    snprintf(dir, sizeof dir, "%s/sg_bench_inspect.XXXXXX", o->tmp);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "bench_inspect: cannot create a directory under %s: %s\n", o->tmp, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof path, "%s/big.pt2", dir);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    for (k = 0; k < 3; k++)
        sigaction(sigs[k], &ign, &old[k]);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        for (k = 0; k < 3; k++)
            sigaction(sigs[k], &old[k], NULL);
        _exit(generate(o->model, path, o->nbig, o->bigsize) == 0 ? 0 : 1);
    }
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        fd = open(path, O_RDONLY);
    remove_dir(dir); /* the open descriptor keeps the data until it is closed */
    for (k = 0; k < 3; k++)
        sigaction(sigs[k], &old[k], NULL);
    if (pid < 0)
        fprintf(stderr, "bench_inspect: fork: %s\n", strerror(errno));
    else if (fd < 0)
        fprintf(stderr, "bench_inspect: generating the archive failed\n");
    *secs = now() - t0;
    return fd;
}

/* ---- measuring -------------------------------------------------------------------- */

/* rchar of /proc/self/io (bytes read by read()/pread() calls), or 0 when unavailable. */
static uint64_t rchar_of(const char *io)
{
    FILE *f = fopen(io, "r");
    char line[128];
    unsigned long long v = 0;

    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %llu", &v) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)v;
}

/* Peak RSS of this process in MiB. */
static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Little-endian readers. */
static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* pread exactly `n` bytes; 0 or -1. */
static int pread_all(int fd, void *buf, size_t n, off_t off)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

/*
 * The limit: read the end record (the last <= 65,557 bytes), the central
 * directory, the local header of member `name` and its data, nothing else
 * (no zip64: the generated file is under 4 GiB). `*json_len` gets the
 * member's size. With `parse`, the bytes are then parsed with cJSON (torch
 * >= 2.7 writes strict JSON). Returns 0 or -1.
 */
static int raw_limit(int fd, const char *name, size_t *json_len, bool parse)
{
    unsigned char tail[65557], lh[30], *cd = NULL;
    struct stat st;
    size_t tn, i, nlen = strlen(name);
    uint32_t cd_size, cd_off;
    uint64_t lho = 0, csize = 0;
    char *data = NULL;
    bool found = false;
    int rc = -1;

    if (fstat(fd, &st) != 0 || st.st_size < 22)
        return -1;
    tn = (size_t)(st.st_size < (off_t)sizeof tail ? st.st_size : (off_t)sizeof tail);
    if (pread_all(fd, tail, tn, st.st_size - (off_t)tn) != 0)
        return -1;
    for (i = tn - 22 + 1; i-- > 0;)
        if (le32(tail + i) == 0x06054b50)
            break;
    if (i == (size_t)-1)
        return -1;
    cd_size = le32(tail + i + 12);
    cd_off = le32(tail + i + 16);
    if (!(cd = malloc(cd_size)) || pread_all(fd, cd, cd_size, (off_t)cd_off) != 0)
        goto cleanup;
    for (i = 0; i + 46 <= cd_size && le32(cd + i) == 0x02014b50;) {
        size_t n = le16(cd + i + 28), m = le16(cd + i + 30), k = le16(cd + i + 32);
        if (i + 46 + n > cd_size)
            break;
        if (n == nlen && memcmp(cd + i + 46, name, n) == 0) {
            csize = le32(cd + i + 20);
            lho = le32(cd + i + 42);
            found = true;
            break;
        }
        i += 46 + n + m + k;
    }
    if (!found || pread_all(fd, lh, sizeof lh, (off_t)lho) != 0 || le32(lh) != 0x04034b50)
        goto cleanup;
    if (!(data = malloc(csize + 1))
        || pread_all(fd, data, csize, (off_t)(lho + 30 + le16(lh + 26) + le16(lh + 28))) != 0)
        goto cleanup;
    *json_len = csize;
    rc = 0;
    if (parse) { /* the least any reader of the model must do with the bytes: parse them as JSON */
        cJSON *root = cJSON_ParseWithLength(data, csize);
        rc = root ? 0 : -1;
        cJSON_Delete(root);
    }
cleanup:
    free(cd);
    free(data);
    return rc;
}

/* The same through libzip: open over a duplicate of `fd`, read member `name`. Returns 0 or -1. */
static int libzip_limit(int fd, const char *name, size_t *json_len)
{
    int zerr = 0, dfd = dup(fd), rc = -1;
    zip_t *za;
    zip_file_t *zf = NULL;
    zip_stat_t zs;
    char *buf = NULL;

    if (dfd < 0 || lseek(dfd, 0, SEEK_SET) != 0)
        return -1;
    if (!(za = zip_fdopen(dfd, ZIP_RDONLY, &zerr))) {
        close(dfd);
        return -1;
    }
    if (zip_stat(za, name, 0, &zs) == 0 && (buf = malloc(zs.size + 1)) && (zf = zip_fopen(za, name, 0))
        && zip_fread(zf, buf, zs.size) == (zip_int64_t)zs.size) {
        *json_len = zs.size;
        rc = 0;
    }
    if (zf)
        zip_fclose(zf);
    zip_discard(za);
    free(buf);
    return rc;
}

/* Print `e` as a JSON string (what `inspect --json` does for every expression). */
static void put_expr(FILE *out, const sg_expr *e)
{
    char *s = NULL;

    if (e && sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, NULL) == 0)
        fprintf(out, "\"%s\"", s);
    else
        fputs("null", out);
    sg_free(s);
}

/* The substance of `inspect --json`: every input shape, range, symbol, assert and member. */
static void emit_json(FILE *out, sg_archive *a, const sg_graph *g)
{
    size_t i, d;

    fputs("{\"inputs\":[", out);
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        fprintf(out, "{\"name\":\"%s\",\"dtype\":\"%s\",\"shape\":[", in->name,
                in->tensor ? sg_graph_dtype_name(in->tensor->dtype) : "");
        for (d = 0; in->tensor && d < in->tensor->ndim; d++)
            put_expr(out, in->tensor->sizes[d]);
        fputs("]}", out);
    }
    fputs("],\"range_constraints\":{", out);
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        fprintf(out, "\"%s\":[%s,", r->key, r->has_min ? r->min.text : "null");
        fprintf(out, "%s]", r->has_max ? r->max.text : "null");
    }
    fputs("},\"symbols\":[", out);
    for (i = 0; i < sg_graph_symbol_count(g); i++)
        put_expr(out, sg_graph_symbol_at(g, i)->sym);
    fputs("],\"runtime_asserts\":[", out);
    for (i = 0; i < sg_graph_assert_count(g); i++)
        put_expr(out, sg_graph_assert_at(g, i)->expr);
    fputs("],\"members\":[", out);
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i);
        fprintf(out, "{\"name\":\"%s\",\"size\":%" PRIu64 "}", m->name, m->size);
    }
    fputs("]}\n", out);
}

/* Seconds of each inspect phase of one run. */
typedef struct phases {
    double open, read, parse, emit, total;
    uint64_t sg_bytes;  /* sg_archive_bytes_read after the run */
    size_t nmembers, nasserts;
} phases;

/* One in-process inspect run: open, read the model JSON, parse it, print. Returns 0 or -1. */
static int inspect_once(int fd, FILE *devnull, phases *p)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    char *json = NULL;
    size_t len = 0;
    double t0 = now(), t1, t2, t3;
    int rc = -1;

    if (sg_archive_open_fd(&a, fd, NULL, &err) != 0)
        goto cleanup;
    t1 = now();
    if (sg_archive_read_model(&json, &len, NULL, a, NULL, &err) != 0)
        goto cleanup;
    t2 = now();
    if (sg_graph_parse(&g, json, len, &err) != 0)
        goto cleanup;
    t3 = now();
    emit_json(devnull, a, g);
    fflush(devnull);
    p->total = now() - t0;
    p->open = t1 - t0;
    p->read = t2 - t1;
    p->parse = t3 - t2;
    p->emit = p->total - (t3 - t0);
    p->sg_bytes = sg_archive_bytes_read(a);
    p->nmembers = sg_archive_member_count(a);
    p->nasserts = sg_graph_assert_count(g);
    rc = 0;
cleanup:
    if (rc != 0)
        fprintf(stderr, "bench_inspect: inspect failed: %s\n", err.msg);
    sg_graph_free(g);
    sg_archive_free(a);
    sg_free(json);
    return rc;
}

/* Drop the file's pages from the page cache (this file only). */
static void drop_cache(int fd)
{
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/* Read every byte of the file once (1 MiB reads). Returns the seconds taken, or -1. */
static double read_all(int fd)
{
    static char buf[1 << 20];
    off_t off = 0;
    ssize_t r;
    double t0 = now();

    while ((r = pread(fd, buf, sizeof buf, off)) > 0)
        off += r;
    return r < 0 ? -1.0 : now() - t0;
}

/* A child process result. */
typedef struct proc {
    double secs;
    uint64_t rchar;
    double maxrss_mib;
    int status;
} proc;

/*
 * Run `argv` with stdout and stderr to /dev/null; its wall time, the bytes it
 * read (its /proc/PID/io rchar, read while it is a zombie) and its peak RSS.
 * Returns 0 or -1.
 */
static int run_proc(char *const argv[], proc *p)
{
    char io[64];
    siginfo_t si;
    struct rusage ru;
    int status = 0;
    double t0 = now();
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0) {
            dup2(dn, 1);
            dup2(dn, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    p->secs = now() - t0;
    snprintf(io, sizeof io, "/proc/%d/io", (int)pid);
    p->rchar = rchar_of(io);
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    p->maxrss_mib = (double)ru.ru_maxrss / 1024.0;
    p->status = status;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Best (minimum) of `n` values. */
static double best(const double *v, int n)
{
    double b = v[0];
    int i;

    for (i = 1; i < n; i++)
        if (v[i] < b)
            b = v[i];
    return b;
}

static void usage(FILE *out)
{
    fputs("usage: bench_inspect [-n RUNS] [-m MODEL.pt2] [-k MEMBERS] [-s MIB] [-d TMPDIR] [-x SHAPEGATE | -P]\n"
          "  -n RUNS     warm runs per path, best taken (default 5)\n"
          "  -m MODEL    source PT2 archive (default tests/corpus/cases/large_transformer_8layers_auto)\n"
          "  -k MEMBERS  large stored members (default 8)\n"
          "  -s MIB      MiB per large member (default 64; total under 3.5 GiB)\n"
          "  -d TMPDIR   parent of the temporary directory (default $TMPDIR or /tmp)\n"
          "  -x PATH     the shapegate binary (default: the one built with this benchmark)\n"
          "  -P          skip timing the shapegate process\n",
          out);
}

int main(int argc, char **argv)
{
    opts o = {DEFAULT_MODEL, NULL, SG_SHAPEGATE, 5, 8, (size_t)64 << 20};
    double tgen, *t_inspect = NULL, *t_raw = NULL, *t_zip = NULL, *t_proc = NULL, *t_start = NULL, *t_json = NULL;
    double cold_raw = 0, cold_inspect = 0, cold_all, warm_all;
    phases ph, bestph, coldph;
    proc pr, prs;
    FILE *devnull = NULL;
    char fdpath[64], json_name[512];
    const sg_archive_member *jm;
    sg_archive *a = NULL;
    sg_error err = SG_ERROR_INIT;
    uint64_t r0, r1, overhead, by_inspect, by_raw, by_zip;
    size_t json_len = 0;
    struct stat st;
    int c, fd = -1, rc = 1, r;

    o.tmp = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    while ((c = getopt(argc, argv, "n:m:k:s:d:x:Ph")) != -1) {
        switch (c) {
        case 'n': o.runs = atoi(optarg); break;
        case 'm': o.model = optarg; break;
        case 'k': o.nbig = atoi(optarg); break;
        case 's': o.bigsize = (size_t)atol(optarg) << 20; break;
        case 'd': o.tmp = optarg; break;
        case 'x': o.shapegate = optarg; break;
        case 'P': o.shapegate = NULL; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (o.runs < 1 || o.nbig < 0 || o.bigsize == 0 || (double)o.nbig * (double)o.bigsize > 3.5 * 1073741824.0) {
        usage(stderr);
        return 2;
    }
    memset(&ph, 0, sizeof ph);
    bestph = coldph = ph;
    if ((fd = make_archive(&o, &tgen)) < 0)
        return 1;
    t_inspect = calloc((size_t)o.runs, sizeof *t_inspect);
    t_raw = calloc((size_t)o.runs, sizeof *t_raw);
    t_zip = calloc((size_t)o.runs, sizeof *t_zip);
    t_proc = calloc((size_t)o.runs, sizeof *t_proc);
    t_start = calloc((size_t)o.runs, sizeof *t_start);
    t_json = calloc((size_t)o.runs, sizeof *t_json);
    devnull = fopen("/dev/null", "w");
    if (!t_inspect || !t_raw || !t_zip || !t_proc || !t_start || !t_json || !devnull || fstat(fd, &st) != 0)
        goto cleanup;

    /* the model JSON member's name, as the archive layer finds it */
    if (sg_archive_open_fd(&a, fd, NULL, &err) != 0) {
        fprintf(stderr, "bench_inspect: the generated archive does not open: %s\n", err.msg);
        goto cleanup;
    }
    jm = sg_archive_find(a, sg_archive_model_at(a, 0)->json_member);
    snprintf(json_name, sizeof json_name, "%s", jm ? jm->name : "");
    sg_archive_free(a);
    a = NULL;

    printf("archive: %s + %d stored members of %zu MiB = %.1f MiB (%" PRIu64 " bytes), generated in %.1f s\n",
           o.model, o.nbig, o.bigsize >> 20, (double)st.st_size / 1048576.0, (uint64_t)st.st_size, tgen);
    printf("the file was unlinked after opening; model JSON member %s\n", json_name);

    /* cold: this file's pages dropped before each path */
    drop_cache(fd);
    {
        double t0 = now();
        if (raw_limit(fd, json_name, &json_len, false) != 0) {
            fprintf(stderr, "bench_inspect: the raw reader failed\n");
            goto cleanup;
        }
        cold_raw = now() - t0;
    }
    drop_cache(fd);
    if (inspect_once(fd, devnull, &ph) != 0)
        goto cleanup;
    cold_inspect = ph.total;
    coldph = ph;

    /* warm: best of N */
    for (r = 0; r < o.runs; r++) {
        double t0;
        if (inspect_once(fd, devnull, &ph) != 0)
            goto cleanup;
        t_inspect[r] = ph.total;
        if (r == 0 || ph.total < bestph.total)
            bestph = ph;
        t0 = now();
        if (raw_limit(fd, json_name, &json_len, false) != 0)
            goto cleanup;
        t_raw[r] = now() - t0;
        t0 = now();
        if (libzip_limit(fd, json_name, &json_len) != 0) {
            fprintf(stderr, "bench_inspect: libzip could not read %s\n", json_name);
            goto cleanup;
        }
        t_zip[r] = now() - t0;
        t0 = now();
        if (raw_limit(fd, json_name, &json_len, true) != 0) {
            fprintf(stderr, "bench_inspect: cJSON could not parse %s\n", json_name);
            goto cleanup;
        }
        t_json[r] = now() - t0;
    }

    /* bytes read by each path: rchar deltas, net of reading /proc/self/io itself */
    r0 = rchar_of("/proc/self/io");
    r1 = rchar_of("/proc/self/io");
    overhead = r1 - r0;
    r0 = rchar_of("/proc/self/io");
    inspect_once(fd, devnull, &ph);
    by_inspect = rchar_of("/proc/self/io") - r0 - overhead;
    r0 = rchar_of("/proc/self/io");
    raw_limit(fd, json_name, &json_len, false);
    by_raw = rchar_of("/proc/self/io") - r0 - overhead;
    r0 = rchar_of("/proc/self/io");
    libzip_limit(fd, json_name, &json_len);
    by_zip = rchar_of("/proc/self/io") - r0 - overhead;

    printf("\nwarm page cache, best of %d runs; cold = one run after posix_fadvise(DONTNEED) on this file\n", o.runs);
    printf("%-44s %10s %10s %14s\n", "path", "warm ms", "cold ms", "bytes read");
    printf("%-44s %10.3f %10.3f %14" PRIu64 "\n", "inspect (open + read JSON + parse + print)", best(t_inspect, o.runs) * 1e3,
           cold_inspect * 1e3, by_inspect);
    printf("  %-42s %10.3f %10.3f\n", "sg_archive_open_fd", bestph.open * 1e3, coldph.open * 1e3);
    printf("  %-42s %10.3f %10.3f\n", "sg_archive_read_model", bestph.read * 1e3, coldph.read * 1e3);
    printf("  %-42s %10.3f %10.3f\n", "sg_graph_parse", bestph.parse * 1e3, coldph.parse * 1e3);
    printf("  %-42s %10.3f %10.3f\n", "print the JSON (to /dev/null)", bestph.emit * 1e3, coldph.emit * 1e3);
    printf("%-44s %10.3f %10.3f %14" PRIu64 "\n", "limit: raw pread (end record, dir, JSON)", best(t_raw, o.runs) * 1e3,
           cold_raw * 1e3, by_raw);
    printf("%-44s %10.3f %10s %14" PRIu64 "\n", "limit: libzip (fdopen, fopen, fread JSON)", best(t_zip, o.runs) * 1e3, "-",
           by_zip);
    printf("%-44s %10.3f %10s %14" PRIu64 "\n", "limit + cJSON parse of the JSON", best(t_json, o.runs) * 1e3, "-",
           by_raw);
    printf("ratio inspect / raw limit: %.2f warm, %.2f cold; inspect / libzip limit: %.2f warm; "
           "inspect / (limit + cJSON parse): %.2f warm\n",
           best(t_inspect, o.runs) / best(t_raw, o.runs), cold_inspect / cold_raw,
           best(t_inspect, o.runs) / best(t_zip, o.runs), best(t_inspect, o.runs) / best(t_json, o.runs));
    printf("members %zu, runtime asserts %zu, model JSON %zu bytes; sg_archive_bytes_read %" PRIu64
           " (%.4f%% of the file)\n", bestph.nmembers, bestph.nasserts, json_len, bestph.sg_bytes,
           100.0 * (double)bestph.sg_bytes / (double)st.st_size);

    if (o.shapegate) {
        char *av[5], *sv[3];
        snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
        av[0] = (char *)o.shapegate;
        av[1] = "inspect";
        av[2] = "--json";
        av[3] = fdpath;
        av[4] = NULL;
        sv[0] = (char *)o.shapegate;
        sv[1] = "--version";
        sv[2] = NULL;
        for (r = 0; r < o.runs; r++) {
            if (run_proc(av, &pr) != 0 || run_proc(sv, &prs) != 0) {
                fprintf(stderr, "bench_inspect: %s inspect --json %s failed (status %d)\n", o.shapegate, fdpath,
                        pr.status);
                goto cleanup;
            }
            t_proc[r] = pr.secs;
            t_start[r] = prs.secs;
        }
        printf("\nprocess `shapegate inspect --json` (best of %d): %.3f ms; start-up alone (`--version`) %.3f ms; "
               "net %.3f ms\n", o.runs, best(t_proc, o.runs) * 1e3, best(t_start, o.runs) * 1e3,
               (best(t_proc, o.runs) - best(t_start, o.runs)) * 1e3);
        printf("  bytes read by the process (rchar, shared libraries included): %" PRIu64 "; by `--version`: %" PRIu64
               "; peak RSS %.1f MiB (`--version`: %.1f MiB)\n", pr.rchar, prs.rchar, pr.maxrss_mib, prs.maxrss_mib);
    }

    /* for scale: every byte of the file */
    drop_cache(fd);
    cold_all = read_all(fd);
    warm_all = read_all(fd);
    printf("\nreading every byte of the file: %.1f ms cold, %.1f ms warm (%.0fx / %.0fx the inspect path)\n",
           cold_all * 1e3, warm_all * 1e3, cold_all / cold_inspect, warm_all / best(t_inspect, o.runs));
    printf("peak RSS of this benchmark: %.1f MiB (the archive was generated in a child process)\n", peak_rss_mib());
    rc = 0;
cleanup:
    if (devnull)
        fclose(devnull);
    if (fd >= 0) {
        drop_cache(fd);
        close(fd);
    }
    free(t_inspect);
    free(t_raw);
    free(t_zip);
    free(t_proc);
    free(t_start);
    free(t_json);
    return rc;
}
