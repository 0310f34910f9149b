/*
 * write.c - writing a copy of an open archive with one member added or
 * replaced (what `shapegate pack` does): every other member's local header,
 * data, data descriptor and alignment padding are copied byte for byte from
 * the source, in the source's order; the new member is appended in the
 * style of the writer that made the source (torch's PyTorchStreamWriter for
 * the PT2 layout: stored, flags 0x0808, "FB" padding to a 64-byte boundary,
 * a data descriptor; Python's zipfile for the flat layout); the central
 * directory is the source's entries, copied raw (only a local-header offset
 * is rewritten when a replaced member's bytes were dropped before it), plus
 * the new entry, then the end records (with the zip64 end record and locator
 * when the source has them or the sizes need them). The output is written to
 * a temporary file in the destination's folder and renamed into place (only
 * over a regular file, never through a symbolic link, keeping its mode); on
 * any failure the temporary file is removed. sg_archive_write_with_fd()
 * streams the same bytes to an open descriptor (`pack -o -`).
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_int.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u
#define LOCAL_LEN 30
#define CENTRAL_LEN 46
#define ALIGN 64            /* torch's kFieldAlignment */
#define COPY_CHUNK (1u << 20)
#define MAX_NEW_MEMBER ((size_t)64 << 20)

const char *sg_archive_constraints_member(sg_archive_format f)
{
    return f == SG_ARCHIVE_FLAT ? SG_ARCHIVE_CONSTRAINTS_FLAT : SG_ARCHIVE_CONSTRAINTS_PT2;
}

/* Little-endian fields. */
static void wr16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void wr32(unsigned char *p, uint32_t v)
{
    wr16(p, v & 0xFFFFu);
    wr16(p + 2, v >> 16);
}

static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* The output being written: its descriptor, temporary name and position. */
typedef struct out_file {
    int fd;
    char *tmp;     /* temporary path, NULL once renamed or removed */
    uint64_t pos;  /* bytes written */
} out_file;

/* Write `n` bytes to the output. Returns 0 or SG_EIO. */
static int put(out_file *o, const void *buf, size_t n, sg_error *err)
{
    const unsigned char *p = buf;

    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return sg_error_set(err, SG_EIO, "cannot write the output archive: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
        o->pos += (uint64_t)w;
    }
    return 0;
}

/* Copy `n` bytes of the source at `off` to the output through `buf` (COPY_CHUNK bytes). */
static int copy_span(out_file *o, sg_archive *a, uint64_t off, uint64_t n, unsigned char *buf, sg_error *err)
{
    int rc;

    while (n > 0) {
        size_t k = n < COPY_CHUNK ? (size_t)n : COPY_CHUNK;
        if ((rc = sg_archive__pread(&a->io, buf, k, off, "member data", err)) < 0
            || (rc = put(o, buf, k, err)) < 0)
            return rc;
        off += k;
        n -= k;
    }
    return 0;
}

/* A member name torch and shapegate accept: relative, no empty, '.' or '..'
 * component, no backslash or control character, not a folder. */
static bool safe_name(const char *rel)
{
    const char *p = rel, *c;

    if (!*rel || rel[strlen(rel) - 1] == '/')
        return false;
    for (c = rel; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F || *c == '\\' || *c == ':')
            return false;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n;
        if (*p == '/')
            p++;
    }
    return true;
}

/* Entry pointers by local header offset. */
static int cmp_offset(const void *x, const void *y)
{
    const sg_archive_entry *const *a = x, *const *b = y;
    uint64_t u = (*a)->pub.header_offset, v = (*b)->pub.header_offset;
    return u < v ? -1 : u > v;
}

/* Patch the local-header offset of a raw central entry `ce` (`len` bytes) to `off`. */
static int patch_offset(unsigned char *ce, size_t len, uint64_t off, const char *name, sg_error *err)
{
    size_t nlen = rd16(ce + 28), elen = rd16(ce + 30), p = 0;
    const unsigned char *extra = ce + CENTRAL_LEN + nlen;

    if (rd32(ce + 42) != 0xFFFFFFFFu) {
        wr32(ce + 42, (uint32_t)off); /* offsets only move down: it still fits */
        return 0;
    }
    while (p + 4 <= elen && CENTRAL_LEN + nlen + elen <= len) {
        uint16_t id = rd16(extra + p), flen = rd16(extra + p + 2);
        size_t q = 0;
        if (p + 4 + flen > elen)
            break;
        if (id == 1) {
            q += rd32(ce + 24) == 0xFFFFFFFFu ? 8 : 0;
            q += rd32(ce + 20) == 0xFFFFFFFFu ? 8 : 0;
            if (q + 8 > flen)
                break;
            wr64(ce + CENTRAL_LEN + nlen + p + 4 + q, off);
            return 0;
        }
        p += 4 + (size_t)flen;
    }
    return sg_error_set(err, SG_EINVALID, "member '%.200s': no zip64 offset to rewrite in its central entry", name);
}

/* The writer style of the source, taken from the model JSON member's headers. */
typedef struct style {
    unsigned made_by, needed, flags, time, date;
    uint32_t ext_attr;
    bool descriptor; /* bit 3: sizes and CRC in a data descriptor after the data */
    bool pad;        /* torch's "FB" alignment padding */
} style;

/* Read the template member's local and central headers into `s`. */
static int read_style(style *s, sg_archive *a, const sg_archive_entry *t, sg_error *err)
{
    unsigned char lh[LOCAL_LEN], ch[CENTRAL_LEN];
    int rc;

    if ((rc = sg_archive__pread(&a->io, lh, sizeof lh, t->pub.header_offset, "local header", err)) < 0
        || (rc = sg_archive__pread(&a->io, ch, sizeof ch, t->central_offset, "central directory entry", err)) < 0)
        return rc;
    s->made_by = rd16(ch + 4);
    s->needed = rd16(lh + 4);
    s->flags = rd16(lh + 6) & 0x0808u; /* keep only data descriptor and UTF-8 */
    s->time = rd16(lh + 10);
    s->date = rd16(lh + 12);
    s->ext_attr = rd32(ch + 38);
    s->descriptor = (s->flags & 0x0008u) != 0;
    s->pad = a->format == SG_ARCHIVE_PT2;
    return 0;
}

/* Write the new member's local header, data and descriptor at the output's position. */
static int put_member(out_file *o, const style *s, const char *name, const void *data, size_t len, uint32_t crc,
                      sg_error *err)
{
    unsigned char h[LOCAL_LEN + 4], pad[ALIGN], dd[16];
    size_t nlen = strlen(name), padlen = 0;
    bool known = !s->descriptor;
    int rc;

    if (s->pad) {
        uint64_t start = o->pos + LOCAL_LEN + nlen + 4;
        padlen = start % ALIGN ? ALIGN - (size_t)(start % ALIGN) : 0;
    }
    wr32(h, SIG_LOCAL);
    wr16(h + 4, s->needed);
    wr16(h + 6, s->flags);
    wr16(h + 8, 0); /* stored */
    wr16(h + 10, s->time);
    wr16(h + 12, s->date);
    wr32(h + 14, known ? crc : 0);
    wr32(h + 18, known ? (uint32_t)len : 0);
    wr32(h + 22, known ? (uint32_t)len : 0);
    wr16(h + 26, (unsigned)nlen);
    wr16(h + 28, s->pad ? (unsigned)(4 + padlen) : 0);
    if ((rc = put(o, h, LOCAL_LEN, err)) < 0 || (rc = put(o, name, nlen, err)) < 0)
        return rc;
    if (s->pad) {
        h[0] = 'F';
        h[1] = 'B';
        wr16(h + 2, (unsigned)padlen);
        memset(pad, 'Z', sizeof pad);
        if ((rc = put(o, h, 4, err)) < 0 || (rc = put(o, pad, padlen, err)) < 0)
            return rc;
    }
    if ((rc = put(o, data, len, err)) < 0)
        return rc;
    if (s->descriptor) {
        wr32(dd, SIG_DESCRIPTOR);
        wr32(dd + 4, crc);
        wr32(dd + 8, (uint32_t)len);
        wr32(dd + 12, (uint32_t)len);
        if ((rc = put(o, dd, sizeof dd, err)) < 0)
            return rc;
    }
    return 0;
}

/* Write the new member's central entry (local header at `hoff`). */
static int put_central(out_file *o, const style *s, const char *name, size_t len, uint32_t crc, uint64_t hoff,
                       sg_error *err)
{
    unsigned char h[CENTRAL_LEN], x[12];
    size_t nlen = strlen(name);
    bool big = hoff >= 0xFFFFFFFFu;
    int rc;

    memset(h, 0, sizeof h);
    wr32(h, SIG_CENTRAL);
    wr16(h + 4, s->made_by);
    wr16(h + 6, big && s->needed < 45 ? 45 : s->needed);
    wr16(h + 8, s->flags);
    wr16(h + 12, s->time);
    wr16(h + 14, s->date);
    wr32(h + 16, crc);
    wr32(h + 20, (uint32_t)len);
    wr32(h + 24, (uint32_t)len);
    wr16(h + 28, (unsigned)nlen);
    wr16(h + 30, big ? 12 : 0);
    wr32(h + 38, s->ext_attr);
    wr32(h + 42, big ? 0xFFFFFFFFu : (uint32_t)hoff);
    if ((rc = put(o, h, sizeof h, err)) < 0 || (rc = put(o, name, nlen, err)) < 0)
        return rc;
    if (big) {
        wr16(x, 1);
        wr16(x + 2, 8);
        wr64(x + 4, hoff);
        if ((rc = put(o, x, sizeof x, err)) < 0)
            return rc;
    }
    return 0;
}

/* The end records: zip64 end record and locator when `zip64`, then the classic one. */
static int put_end(out_file *o, uint64_t count, uint64_t cd_off, uint64_t cd_size, bool zip64, sg_error *err)
{
    unsigned char e64[56], loc[20], e[22];
    uint64_t e64_off = o->pos;
    int rc;

    zip64 = zip64 || count >= 0xFFFFu || cd_off >= 0xFFFFFFFFu || cd_size >= 0xFFFFFFFFu;
    if (zip64) {
        memset(e64, 0, sizeof e64);
        wr32(e64, SIG_EOCD64);
        wr64(e64 + 4, sizeof e64 - 12);
        wr16(e64 + 12, 30); /* made by: as torch's writer */
        wr16(e64 + 14, 45); /* needed: zip64 */
        wr64(e64 + 24, count);
        wr64(e64 + 32, count);
        wr64(e64 + 40, cd_size);
        wr64(e64 + 48, cd_off);
        memset(loc, 0, sizeof loc);
        wr32(loc, SIG_LOC64);
        wr64(loc + 8, e64_off);
        wr32(loc + 16, 1);
        if ((rc = put(o, e64, sizeof e64, err)) < 0 || (rc = put(o, loc, sizeof loc, err)) < 0)
            return rc;
    }
    memset(e, 0, sizeof e);
    wr32(e, SIG_EOCD);
    wr16(e + 8, count >= 0xFFFFu ? 0xFFFFu : (unsigned)count);
    wr16(e + 10, count >= 0xFFFFu ? 0xFFFFu : (unsigned)count);
    wr32(e + 12, cd_size >= 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)cd_size);
    wr32(e + 16, cd_off >= 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)cd_off);
    return put(o, e, sizeof e, err);
}

/* Create the temporary output next to `path`: "<dir>/.<base>.XXXXXX". */
static int open_tmp(out_file *o, const char *path, sg_error *err)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + 16;

    if (!*base)
        return sg_error_set(err, SG_EINVALID, "output path '%.200s' names a folder", path);
    if (!(o->tmp = sg__malloc(n)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    snprintf(o->tmp, n, "%.*s.%s.XXXXXX", (int)dlen, path, base);
    if ((o->fd = mkstemp(o->tmp)) < 0) {
        int e = errno;
        sg_free(o->tmp);
        o->tmp = NULL;
        return sg_error_set(err, SG_EIO, "cannot create a temporary file next to '%.200s': %s", path, strerror(e));
    }
    return 0;
}

/* Refuse what the new file must not replace: `path`, when it exists, must be a regular file
 * (not a symbolic link, device, FIFO, socket or folder) that its owner may write (a read-only
 * file is kept, even for root) and not the source archive. `*st` is
 * its status and `*exists` whether it is there. Returns 0, SG_EINVALID or SG_EIO. */
static int check_dest(sg_archive *a, const char *path, struct stat *st, bool *exists, sg_error *err)
{
    struct stat si;

    *exists = false;
    if (lstat(path, st) != 0) {
        if (errno == ENOENT)
            return 0;
        return sg_error_set(err, SG_EIO, "cannot look at the output '%.200s': %s", path, strerror(errno));
    }
    if (S_ISLNK(st->st_mode))
        return sg_error_set(err, SG_EINVALID, "the output '%.200s' is a symbolic link: not followed, not replaced", path);
    if (!S_ISREG(st->st_mode))
        return sg_error_set(err, SG_EINVALID, "the output '%.200s' is not a regular file (%s): not replaced", path,
                            S_ISDIR(st->st_mode) ? "a folder" : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device"
                            : S_ISFIFO(st->st_mode) ? "a FIFO" : S_ISSOCK(st->st_mode) ? "a socket" : "not a file");
    if (fstat(a->io.fd, &si) == 0 && si.st_dev == st->st_dev && si.st_ino == st->st_ino)
        return sg_error_set(err, SG_EINVALID, "the output '%.200s' is the input archive itself", path);
    if (!(st->st_mode & S_IWUSR))
        return sg_error_set(err, SG_EINVALID, "the output '%.200s' is read-only (mode %03o): not replaced", path,
                            (unsigned)(st->st_mode & 0777));
    *exists = true;
    return 0;
}

/* Checks of the arguments both writers share, and the new member's full name in `*full`. */
static int prepare(sg_archive *a, const char *rel, const void *data, size_t len, char **full, sg_error *err)
{
    size_t flen;

    *full = NULL;
    if (!a || !rel || (!data && len))
        return sg_error_set(err, SG_EINVALID, "sg_archive_write_with: missing argument");
    if (!safe_name(rel))
        return sg_error_set(err, SG_EINVALID, "new member name '%.200s' is not a safe relative file name", rel);
    if (len > MAX_NEW_MEMBER)
        return sg_error_set(err, SG_ELIMIT, "new member '%.200s' has %zu bytes, over the limit of %zu", rel, len,
                            MAX_NEW_MEMBER);
    flen = strlen(a->root) + strlen(rel) + 2;
    if (!(*full = sg__malloc(flen)))
        return sg_error_set(err, SG_ENOMEM, "out of memory writing the archive");
    snprintf(*full, flen, "%s%s%s", a->root, a->root[0] ? "/" : "", rel);
    if (strlen(*full) > a->limits.max_name_len) {
        int rc = sg_error_set(err, SG_ELIMIT, "new member name '%.200s' is over the name limit of %zu bytes", *full,
                              a->limits.max_name_len);
        sg_free(*full);
        *full = NULL;
        return rc;
    }
    return 0;
}

/* The whole archive, the source's members with `full` set to `data`, written to `o`. */
static int emit(out_file *o, sg_archive *a, const char *full, const void *data, size_t len, sg_error *err)
{
    sg_archive_entry **order = NULL, *skip = NULL, *tmpl = NULL;
    const sg_archive_model *m;
    unsigned char *buf = NULL;
    uint64_t skip_off = 0, skip_len = 0, hoff, cd_off, pos;
    uint32_t crc;
    size_t i, count = 0;
    style s;
    int rc = 0;

    if (!(order = sg__malloc((a->nentries + 1) * sizeof *order)) || !(buf = sg__malloc(COPY_CHUNK))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory writing the archive");
        goto cleanup;
    }
    /* the template for the new member's headers: the (first) model JSON */
    m = sg_archive_model_at(a, 0);
    for (i = 0; i < a->nentries; i++) {
        order[i] = &a->entries[i];
        if (strcmp(a->entries[i].pub.name, full) == 0)
            skip = &a->entries[i];
        if (m && !tmpl && strcmp(a->entries[i].pub.rel, m->json_member) == 0)
            tmpl = &a->entries[i];
    }
    if (!tmpl)
        tmpl = &a->entries[0];
    if ((rc = read_style(&s, a, tmpl, err)) < 0)
        goto cleanup;
    qsort(order, a->nentries, sizeof *order, cmp_offset);
    if (skip) {
        for (i = 0; order[i] != skip; i++)
            ;
        skip_off = skip->pub.header_offset;
        skip_len = (i + 1 < a->nentries ? order[i + 1]->pub.header_offset : a->cd_offset) - skip_off;
    }
    /* everything before the central directory, minus the replaced member */
    if (skip)
        rc = copy_span(o, a, 0, skip_off, buf, err);
    if (rc == 0)
        rc = copy_span(o, a, skip_off + skip_len, a->cd_offset - skip_off - skip_len, buf, err);
    if (rc < 0)
        goto cleanup;
    hoff = o->pos;
    crc = sg_archive__crc32(data, len);
    if ((rc = put_member(o, &s, full, data, len, crc, err)) < 0)
        goto cleanup;
    /* the central directory: the source's entries, then the new one */
    cd_off = o->pos;
    for (i = 0; i < a->nentries; i++) {
        sg_archive_entry *e = &a->entries[i];
        unsigned char *ce;
        if (e == skip)
            continue;
        if (e->central_len > COPY_CHUNK) {
            rc = sg_error_set(err, SG_ELIMIT, "member '%.200s': central entry too large", e->pub.name);
            goto cleanup;
        }
        ce = buf;
        if ((rc = sg_archive__pread(&a->io, ce, e->central_len, e->central_offset, "central directory entry", err)) < 0)
            goto cleanup;
        if (skip && e->pub.header_offset > skip_off
            && (rc = patch_offset(ce, e->central_len, e->pub.header_offset - skip_len, e->pub.name, err)) < 0)
            goto cleanup;
        if ((rc = put(o, ce, e->central_len, err)) < 0)
            goto cleanup;
        count++;
    }
    if ((rc = put_central(o, &s, full, len, crc, hoff, err)) < 0)
        goto cleanup;
    count++;
    pos = o->pos;
    rc = put_end(o, count, cd_off, pos - cd_off, a->zip64_end, err);
cleanup:
    sg_free(buf);
    sg_free(order);
    return rc < 0 ? rc : 0;
}

int sg_archive_write_with(sg_archive *a, const char *path, const char *rel, const void *data, size_t len,
                          sg_error *err)
{
    out_file o = {-1, NULL, 0};
    char *full = NULL;
    struct stat st, now;
    bool exists = false, again = false;
    int rc;

    if (!path)
        return sg_error_set(err, SG_EINVALID, "sg_archive_write_with: missing argument");
    if ((rc = prepare(a, rel, data, len, &full, err)) != 0 || (rc = check_dest(a, path, &st, &exists, err)) != 0)
        goto cleanup;
    if ((rc = open_tmp(&o, path, err)) < 0)
        goto cleanup;
    /* an existing file keeps its permissions (and, for root, its owner); a new one is 0644 */
    if (fchmod(o.fd, exists ? st.st_mode & 07777 : 0644) != 0) {
        rc = sg_error_set(err, SG_EIO, "cannot set the output's permissions: %s", strerror(errno));
        goto cleanup;
    }
    if (exists && geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0) && fchown(o.fd, st.st_uid, st.st_gid) != 0) {
        rc = sg_error_set(err, SG_EIO, "cannot keep the output's owner: %s", strerror(errno));
        goto cleanup;
    }
    if ((rc = emit(&o, a, full, data, len, err)) < 0)
        goto cleanup;
    if (fsync(o.fd) != 0) {
        rc = sg_error_set(err, SG_EIO, "cannot write the output archive: %s", strerror(errno));
        goto cleanup;
    }
    if (close(o.fd) != 0) {
        o.fd = -1;
        rc = sg_error_set(err, SG_EIO, "cannot write the output archive: %s", strerror(errno));
        goto cleanup;
    }
    o.fd = -1;
    /* what is there now must still be what may be replaced (it could have changed meanwhile) */
    if ((rc = check_dest(a, path, &now, &again, err)) != 0)
        goto cleanup;
    if (rename(o.tmp, path) != 0) {
        rc = sg_error_set(err, SG_EIO, "cannot rename the output into '%.200s': %s", path, strerror(errno));
        goto cleanup;
    }
    sg_free(o.tmp);
    o.tmp = NULL;
cleanup:
    if (o.fd >= 0)
        close(o.fd);
    if (o.tmp) {
        unlink(o.tmp);
        sg_free(o.tmp);
    }
    sg_free(full);
    return rc < 0 ? rc : 0;
}

int sg_archive_write_with_fd(sg_archive *a, int fd, const char *rel, const void *data, size_t len, sg_error *err)
{
    out_file o = {-1, NULL, 0};
    struct stat st;
    char *full = NULL;
    int rc;

    if (fd < 0)
        return sg_error_set(err, SG_EINVALID, "sg_archive_write_with_fd: no descriptor");
    if ((rc = prepare(a, rel, data, len, &full, err)) != 0)
        return rc;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        struct stat si;
        if (fstat(a->io.fd, &si) == 0 && si.st_dev == st.st_dev && si.st_ino == st.st_ino) {
            rc = sg_error_set(err, SG_EINVALID, "the output is the input archive itself");
            goto cleanup;
        }
    }
    o.fd = fd;
    rc = emit(&o, a, full, data, len, err);
cleanup:
    sg_free(full);
    return rc < 0 ? rc : 0;
}
