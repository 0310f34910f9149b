/*
 * zipdir.c - shapegate's own reading of a zip's structure: the end of central
 * directory record (and its zip64 twin), every central directory entry
 * (with zip64 sizes and offsets), and every local header. It gives what
 * libzip does not expose (data offsets, raw flags) and checks what a hostile
 * file could lie about before libzip or anyone else trusts it: entry counts
 * against the limits before allocating, names without NUL bytes, local
 * headers that agree with the directory, data inside the file and before the
 * directory, stored sizes that agree, and members that do not overlap.
 */
#include <stdlib.h>
#include <string.h>

#include "archive/archive_int.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u

#define EOCD_LEN 22
#define LOC64_LEN 20
#define EOCD64_LEN 56
#define CENTRAL_LEN 46
#define LOCAL_LEN 30
#define MAX_COMMENT 65535

/* Little-endian fields. */
static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

/* Where the central directory is, from the end records. */
typedef struct cdir_loc {
    uint64_t count;
    uint64_t offset;
    uint64_t size;
    uint64_t end; /* offset of the first end record (zip64 or classic) after the directory */
} cdir_loc;

/* Read the zip64 end record that the locator at `loc_off` points to. */
static int read_eocd64(sg_archive *a, uint64_t loc_off, const unsigned char *eocd, cdir_loc *cd,
                       sg_error *err)
{
    unsigned char loc[LOC64_LEN], rec[EOCD64_LEN];
    uint64_t rec_off, n_disk, n_total, size, offset;
    uint32_t disk, cd_disk;
    int rc;

    if ((rc = sg_archive__pread(&a->io, loc, sizeof loc, loc_off, "zip64 end locator", err)) < 0)
        return rc;
    if (rd32(loc + 16) != 1 || rd32(loc + 4) != 0)
        return sg_error_set(err, SG_EUNSUPPORTED, "multi-disk (split) zip archives are not supported");
    rec_off = rd64(loc + 8);
    if (rec_off > loc_off || loc_off - rec_off < EOCD64_LEN)
        return sg_error_set(err, SG_EINVALID, "zip64 end of central directory offset %llu is not before its locator at %llu",
                            (unsigned long long)rec_off, (unsigned long long)loc_off);
    if ((rc = sg_archive__pread(&a->io, rec, sizeof rec, rec_off, "zip64 end of central directory", err)) < 0)
        return rc;
    if (rd32(rec) != SIG_EOCD64)
        return sg_error_set(err, SG_EINVALID, "no zip64 end of central directory record at offset %llu",
                            (unsigned long long)rec_off);
    disk = rd32(rec + 16);
    cd_disk = rd32(rec + 20);
    n_disk = rd64(rec + 24);
    n_total = rd64(rec + 32);
    size = rd64(rec + 40);
    offset = rd64(rec + 48);
    if (disk != 0 || cd_disk != 0 || n_disk != n_total)
        return sg_error_set(err, SG_EUNSUPPORTED, "multi-disk (split) zip archives are not supported");
    /* the classic record must agree wherever it is not the 0xFFFF.. placeholder */
    if ((rd16(eocd + 10) != 0xFFFFu && rd16(eocd + 10) != n_total) ||
        (rd32(eocd + 12) != 0xFFFFFFFFu && rd32(eocd + 12) != size) ||
        (rd32(eocd + 16) != 0xFFFFFFFFu && rd32(eocd + 16) != offset))
        return sg_error_set(err, SG_EINVALID, "the zip64 and classic end of central directory records disagree");
    a->zip64_end = true;
    cd->count = n_total;
    cd->size = size;
    cd->offset = offset;
    cd->end = rec_off;
    return 0;
}

/* Find the end records and locate the central directory. */
static int find_cdir(sg_archive *a, cdir_loc *cd, sg_error *err)
{
    uint64_t fsize = a->io.size, tail_off, eocd_off = 0, last_off = 0, last_end = 0;
    size_t tail_len, i;
    unsigned char *tail = NULL;
    const unsigned char *eocd;
    bool found = false, exact = false;
    int rc = 0;

    if (fsize == 0)
        return sg_error_set(err, SG_EINVALID, "empty file (0 bytes), not a zip archive");
    if (fsize < EOCD_LEN) {
        unsigned char head[4] = {0};
        if ((rc = sg_archive__pread(&a->io, head, fsize < 4 ? (size_t)fsize : 4, 0, "file start", err)) < 0)
            return rc;
        return sg_error_set(err, SG_EINVALID, "%s: the file has only %llu bytes",
                            fsize >= 4 && rd32(head) == SIG_LOCAL ? "truncated zip archive" : "not a zip archive",
                            (unsigned long long)fsize);
    }
    tail_len = fsize < EOCD_LEN + MAX_COMMENT + LOC64_LEN ? (size_t)fsize : EOCD_LEN + MAX_COMMENT + LOC64_LEN;
    tail_off = fsize - tail_len;
    if (!(tail = sg__malloc(tail_len)))
        return sg_error_set(err, SG_ENOMEM, "out of memory reading the zip end records");
    if ((rc = sg_archive__pread(&a->io, tail, tail_len, tail_off, "zip end records", err)) < 0)
        goto cleanup;
    /* The last end signature whose record (with its comment) ends the file.
     * Members can be zips themselves (torch's sample inputs are), so an
     * earlier signature may belong to a nested archive. */
    for (i = tail_len - EOCD_LEN + 1; i-- > 0;) {
        if (rd32(tail + i) != SIG_EOCD)
            continue;
        if (!found) {
            last_off = tail_off + i;
            last_end = last_off + EOCD_LEN + rd16(tail + i + 20);
        }
        found = true;
        if (tail_off + i + EOCD_LEN + rd16(tail + i + 20) == fsize) {
            eocd_off = tail_off + i;
            exact = true;
            break;
        }
    }
    if (!exact) {
        unsigned char head[4];
        if ((rc = sg_archive__pread(&a->io, head, 4, 0, "file start", err)) < 0)
            goto cleanup;
        if (!found)
            rc = sg_error_set(err, SG_EINVALID, "%s: no end of central directory record",
                              rd32(head) == SIG_LOCAL ? "truncated or damaged zip archive" : "not a zip archive");
        else if (last_end <= fsize)
            rc = sg_error_set(err, SG_EINVALID,
                              "truncated or damaged zip archive: no end of central directory record ends the file (the last one, at offset %llu, is followed by %llu bytes)",
                              (unsigned long long)last_off, (unsigned long long)(fsize - last_end));
        else
            rc = sg_error_set(err, SG_EINVALID,
                              "truncated or damaged zip archive: the end of central directory record at offset %llu runs past the end of the file",
                              (unsigned long long)last_off);
        goto cleanup;
    }
    eocd = tail + (eocd_off - tail_off);
    if (eocd_off >= LOC64_LEN && eocd_off - LOC64_LEN >= tail_off &&
        rd32(tail + (eocd_off - LOC64_LEN - tail_off)) == SIG_LOC64) {
        if ((rc = read_eocd64(a, eocd_off - LOC64_LEN, eocd, cd, err)) < 0)
            goto cleanup;
    } else {
        if (rd16(eocd + 4) != 0 || rd16(eocd + 6) != 0 || rd16(eocd + 8) != rd16(eocd + 10)) {
            rc = sg_error_set(err, SG_EUNSUPPORTED, "multi-disk (split) zip archives are not supported");
            goto cleanup;
        }
        if (rd16(eocd + 10) == 0xFFFFu || rd32(eocd + 12) == 0xFFFFFFFFu || rd32(eocd + 16) == 0xFFFFFFFFu) {
            rc = sg_error_set(err, SG_EINVALID, "the end of central directory record needs a zip64 record, and there is none");
            goto cleanup;
        }
        cd->count = rd16(eocd + 10);
        cd->size = rd32(eocd + 12);
        cd->offset = rd32(eocd + 16);
        cd->end = eocd_off;
    }
    if (cd->offset > cd->end || cd->size != cd->end - cd->offset) {
        rc = sg_error_set(err, SG_EINVALID, "the central directory (offset %llu, %llu bytes) does not end at its end record (offset %llu)",
                          (unsigned long long)cd->offset, (unsigned long long)cd->size, (unsigned long long)cd->end);
        goto cleanup;
    }
    if (cd->count == 0) {
        rc = sg_error_set(err, SG_EINVALID, "the zip archive has no members");
        goto cleanup;
    }
    if (cd->count > a->limits.max_members) {
        rc = sg_error_set(err, SG_ELIMIT, "the zip archive lists %llu members, over the limit of %zu",
                          (unsigned long long)cd->count, a->limits.max_members);
        goto cleanup;
    }
    if (cd->count > cd->size / CENTRAL_LEN) {
        rc = sg_error_set(err, SG_EINVALID, "the end record lists %llu members, more than a %llu-byte central directory can hold",
                          (unsigned long long)cd->count, (unsigned long long)cd->size);
        goto cleanup;
    }

cleanup:
    free(tail);
    return rc;
}

/* Sequential reads of the central directory through a 64 KiB window, so a
 * directory of many entries costs few system calls. */
#define WINDOW 65536

typedef struct cd_reader {
    sg_archive_io *io;
    uint64_t end;     /* end of the directory */
    uint64_t win_off; /* file offset of buf[0] */
    size_t win_len;
    unsigned char *buf;
} cd_reader;

/* `n` bytes at `off` through the window (refilled at `off` on a miss). */
static int cd_get(cd_reader *r, void *dst, size_t n, uint64_t off, const char *what, sg_error *err)
{
    int rc;
    if (off >= r->win_off && n <= r->win_len && off - r->win_off <= r->win_len - n) {
        memcpy(dst, r->buf + (off - r->win_off), n);
        return 0;
    }
    if (n > WINDOW || off >= r->end)
        return sg_archive__pread(r->io, dst, n, off, what, err);
    r->win_len = r->end - off < WINDOW ? (size_t)(r->end - off) : WINDOW;
    r->win_off = off;
    if ((rc = sg_archive__pread(r->io, r->buf, r->win_len, off, what, err)) < 0) {
        r->win_len = 0;
        return rc;
    }
    if (n > r->win_len)
        return sg_error_set(err, SG_EINVALID, "%s at offset %llu runs past the central directory", what,
                            (unsigned long long)off);
    memcpy(dst, r->buf, n);
    return 0;
}

/* Apply the zip64 extra field (id 1) of a central entry: it holds, in this
 * order, each of size / compressed size / offset that is 0xFFFFFFFF. */
static int apply_zip64(sg_archive_entry *e, const unsigned char *extra, size_t n, bool need_usize,
                       bool need_csize, bool need_off, const char *qname, sg_error *err)
{
    size_t p = 0;
    while (p + 4 <= n) {
        uint16_t id = rd16(extra + p), len = rd16(extra + p + 2);
        const unsigned char *d = extra + p + 4;
        size_t q = 0;
        if (p + 4 + len > n)
            break;
        if (id == 1) {
            if (need_usize) {
                if (q + 8 > len)
                    goto bad;
                e->pub.size = rd64(d + q);
                q += 8;
            }
            if (need_csize) {
                if (q + 8 > len)
                    goto bad;
                e->pub.comp_size = rd64(d + q);
                q += 8;
            }
            if (need_off) {
                if (q + 8 > len)
                    goto bad;
                e->pub.header_offset = rd64(d + q);
            }
            return 0;
        }
        p += 4 + (size_t)len;
    }
bad:
    return sg_error_set(err, SG_EINVALID, "member '%s': zip64 sizes are missing from its central directory entry", qname);
}

/* Read central entry `idx` at `*off`; advance `*off` past it. */
static int read_central(sg_archive *a, cd_reader *rd, sg_archive_entry *e, size_t idx, uint64_t *off,
                        unsigned char *extra, sg_error *err)
{
    unsigned char h[CENTRAL_LEN];
    char q[SG_ARCHIVE_QUOTE_MAX];
    size_t nlen, elen, clen;
    char *name = NULL;
    int rc;

    uint64_t cd_end = rd->end;

    if (*off + CENTRAL_LEN > cd_end)
        return sg_error_set(err, SG_EINVALID, "central directory entry %zu runs past the end of the directory", idx);
    if ((rc = cd_get(rd, h, sizeof h, *off, "central directory entry", err)) < 0)
        return rc;
    if (rd32(h) != SIG_CENTRAL)
        return sg_error_set(err, SG_EINVALID, "central directory entry %zu (offset %llu) has a bad signature",
                            idx, (unsigned long long)*off);
    nlen = rd16(h + 28);
    elen = rd16(h + 30);
    clen = rd16(h + 32);
    if (*off + CENTRAL_LEN + nlen + elen + clen > cd_end)
        return sg_error_set(err, SG_EINVALID, "central directory entry %zu runs past the end of the directory", idx);
    if (nlen > a->limits.max_name_len)
        return sg_error_set(err, SG_ELIMIT, "central directory entry %zu: name of %zu bytes, over the limit of %zu",
                            idx, nlen, a->limits.max_name_len);
    if (!(name = sg__malloc(nlen + 1)))
        return sg_error_set(err, SG_ENOMEM, "out of memory reading member names");
    if ((rc = cd_get(rd, name, nlen, *off + CENTRAL_LEN, "member name", err)) < 0) {
        free(name);
        return rc;
    }
    name[nlen] = '\0';
    e->pub.name = name;
    e->pub.rel = name;
    e->name_len = nlen;
    sg_archive__quote(q, sizeof q, name, nlen);
    if (memchr(name, '\0', nlen))
        return sg_error_set(err, SG_EINVALID, "member '%s': the name contains a NUL byte", q);
    e->pub.flags = rd16(h + 8);
    e->pub.method = rd16(h + 10);
    e->pub.crc = rd32(h + 16);
    e->pub.comp_size = rd32(h + 20);
    e->pub.size = rd32(h + 24);
    e->pub.header_offset = rd32(h + 42);
    e->encrypted = (e->pub.flags & 1u) != 0;
    if (rd16(h + 34) != 0 && rd16(h + 34) != 0xFFFFu)
        return sg_error_set(err, SG_EUNSUPPORTED, "member '%s' is on another disk: multi-disk zips are not supported", q);
    if (e->pub.size == 0xFFFFFFFFu || e->pub.comp_size == 0xFFFFFFFFu || e->pub.header_offset == 0xFFFFFFFFu) {
        if ((rc = cd_get(rd, extra, elen, *off + CENTRAL_LEN + nlen, "extra field", err)) < 0)
            return rc;
        if ((rc = apply_zip64(e, extra, elen, e->pub.size == 0xFFFFFFFFu, e->pub.comp_size == 0xFFFFFFFFu,
                              e->pub.header_offset == 0xFFFFFFFFu, q, err)) < 0)
            return rc;
    }
    e->central_offset = *off;
    e->central_len = CENTRAL_LEN + nlen + elen + clen;
    *off += CENTRAL_LEN + nlen + elen + clen;
    return 0;
}

/* Read the local header of `e`, set its data offset, check it against the
 * central entry and the directory position. `buf` holds LOCAL_LEN +
 * max_name_len bytes. */
static int read_local(sg_archive *a, sg_archive_entry *e, uint64_t cd_offset, unsigned char *buf, sg_error *err)
{
    const unsigned char *h = buf;
    char q[SG_ARCHIVE_QUOTE_MAX];
    uint64_t hoff = e->pub.header_offset;
    size_t nlen, elen, room;
    int rc;

    sg_archive__quote(q, sizeof q, e->pub.name, e->name_len);
    if (hoff > cd_offset || cd_offset - hoff < LOCAL_LEN)
        return sg_error_set(err, SG_EINVALID, "member '%s': local header offset %llu is not before the central directory",
                            q, (unsigned long long)hoff);
    /* the header and the name it should carry, in one read */
    room = cd_offset - hoff - LOCAL_LEN < e->name_len ? 0 : e->name_len;
    if ((rc = sg_archive__pread(&a->io, buf, LOCAL_LEN + room, hoff, "local header", err)) < 0)
        return rc;
    if (rd32(h) != SIG_LOCAL)
        return sg_error_set(err, SG_EINVALID, "member '%s': no local header at offset %llu", q,
                            (unsigned long long)hoff);
    nlen = rd16(h + 26);
    elen = rd16(h + 28);
    if (nlen != e->name_len || room != nlen || memcmp(buf + LOCAL_LEN, e->pub.name, nlen) != 0)
        return sg_error_set(err, SG_EINVALID, "member '%s': the local header names another file", q);
    if (rd16(h + 8) != e->pub.method)
        return sg_error_set(err, SG_EINVALID, "member '%s': local header and central directory disagree on the compression method", q);
    e->pub.data_offset = hoff + LOCAL_LEN + nlen + elen;
    if (e->pub.data_offset > cd_offset || e->pub.comp_size > cd_offset - e->pub.data_offset)
        return sg_error_set(err, SG_EINVALID, "member '%s': its %llu bytes of data at offset %llu run into the central directory (offset %llu)",
                            q, (unsigned long long)e->pub.comp_size, (unsigned long long)e->pub.data_offset,
                            (unsigned long long)cd_offset);
    if (e->pub.method == 0 && e->pub.comp_size != e->pub.size)
        return sg_error_set(err, SG_EINVALID, "member '%s' is stored but declares %llu bytes compressed and %llu uncompressed",
                            q, (unsigned long long)e->pub.comp_size, (unsigned long long)e->pub.size);
    return 0;
}

/* Entry pointers by local header offset. */
static int cmp_offset(const void *x, const void *y)
{
    const sg_archive_entry *const *a = x, *const *b = y;
    uint64_t u = (*a)->pub.header_offset, v = (*b)->pub.header_offset;
    return u < v ? -1 : u > v;
}

/* No member's local header or data may reach into the next member's. */
static int check_overlap(sg_archive *a, sg_error *err)
{
    sg_archive_entry **order;
    size_t i;
    int rc = 0;

    if (!(order = sg__malloc(a->nentries * sizeof *order)))
        return sg_error_set(err, SG_ENOMEM, "out of memory checking member offsets");
    for (i = 0; i < a->nentries; i++)
        order[i] = &a->entries[i];
    qsort(order, a->nentries, sizeof *order, cmp_offset);
    for (i = 0; i + 1 < a->nentries; i++) {
        const sg_archive_entry *x = order[i], *y = order[i + 1];
        if (x->pub.data_offset + x->pub.comp_size > y->pub.header_offset) {
            char qx[SG_ARCHIVE_QUOTE_MAX], qy[SG_ARCHIVE_QUOTE_MAX];
            rc = sg_error_set(err, SG_EINVALID, "members '%s' and '%s' overlap in the file",
                              sg_archive__quote(qx, 120, x->pub.name, x->name_len),
                              sg_archive__quote(qy, 120, y->pub.name, y->name_len));
            break;
        }
    }
    free(order);
    return rc;
}

int sg_archive__read_dir(sg_archive *a, sg_error *err)
{
    cdir_loc cd = {0, 0, 0, 0};
    cd_reader rd = {NULL, 0, 0, 0, NULL};
    unsigned char *extra = NULL;
    unsigned char *namebuf = NULL;
    uint64_t off;
    size_t i;
    int rc;

    if ((rc = find_cdir(a, &cd, err)) < 0)
        return rc;
    a->cd_offset = cd.offset;
    a->cd_size = cd.size;
    a->entries = sg__calloc((size_t)cd.count, sizeof *a->entries);
    extra = sg__malloc(65536);
    namebuf = sg__malloc(LOCAL_LEN + a->limits.max_name_len + 1);
    rd.buf = sg__malloc(WINDOW);
    if (!a->entries || !extra || !namebuf || !rd.buf) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading the central directory");
        goto cleanup;
    }
    rd.io = &a->io;
    rd.end = cd.offset + cd.size;
    off = cd.offset;
    for (i = 0; i < (size_t)cd.count; i++) {
        a->nentries = i + 1; /* so that sg_archive_free releases the name */
        if ((rc = read_central(a, &rd, &a->entries[i], i, &off, extra, err)) < 0)
            goto cleanup;
    }
    if (off != cd.offset + cd.size) {
        rc = sg_error_set(err, SG_EINVALID, "the central directory has %llu bytes after its %llu listed entries",
                          (unsigned long long)(cd.offset + cd.size - off), (unsigned long long)cd.count);
        goto cleanup;
    }
    for (i = 0; i < a->nentries; i++) {
        sg_archive_entry *e = &a->entries[i];
        if ((rc = read_local(a, e, cd.offset, namebuf, err)) < 0)
            goto cleanup;
        if (e->pub.size > UINT64_MAX - a->total_size) {
            a->total_size = UINT64_MAX;
        } else {
            a->total_size += e->pub.size;
        }
    }
    if ((rc = check_overlap(a, err)) < 0)
        goto cleanup;
    if (a->total_size > a->limits.max_total_size) {
        rc = sg_error_set(err, SG_ELIMIT, "the members declare %llu bytes in total, over the limit of %llu",
                          (unsigned long long)a->total_size, (unsigned long long)a->limits.max_total_size);
        goto cleanup;
    }

cleanup:
    free(rd.buf);
    free(extra);
    free(namebuf);
    return rc;
}
