/*
 * io.c - the archive file as shapegate reads it: bounded pread, a read-only
 * seekable zip_source over the same descriptor for libzip (so the descriptor
 * stays ours and every byte read is counted), CRC-32, and quoting of member
 * names for one-line error messages.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive_int.h"

/* See archive_int.h. */
int sg_archive__pread(sg_archive_io *io, void *buf, size_t n, uint64_t off, const char *what,
                      sg_error *err)
{
    unsigned char *p = buf;
    size_t got = 0;

    if (off > io->size || n > io->size - off)
        return sg_error_set(err, SG_EINVALID, "%s at offset %llu runs past the end of the file (%llu bytes)",
                            what, (unsigned long long)off, (unsigned long long)io->size);
    while (got < n) {
        ssize_t r = pread(io->fd, p + got, n - got, (off_t)(off + got));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return sg_error_set(err, SG_EIO, "cannot read %s at offset %llu: %s", what,
                                (unsigned long long)(off + got), strerror(errno));
        }
        if (r == 0)
            return sg_error_set(err, SG_EINVALID, "%s at offset %llu: the file ended early (changed while reading?)",
                                what, (unsigned long long)(off + got));
        got += (size_t)r;
        io->bytes_read += (uint64_t)r;
    }
    return 0;
}

/* libzip's callback: a read-only, seekable source over io->fd. */
static zip_int64_t source_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
    sg_archive_io *io = ud;

    switch (cmd) {
    case ZIP_SOURCE_OPEN:
        io->pos = 0;
        return 0;
    case ZIP_SOURCE_READ: {
        size_t want, got = 0;
        if (io->pos >= io->size)
            return 0;
        want = len < io->size - io->pos ? (size_t)len : (size_t)(io->size - io->pos);
        if (want > ((size_t)1 << 30))
            want = (size_t)1 << 30;
        while (got < want) {
            ssize_t r = pread(io->fd, (unsigned char *)data + got, want - got, (off_t)(io->pos + got));
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                zip_error_set(&io->error, ZIP_ER_READ, errno);
                return -1;
            }
            if (r == 0)
                break; /* the file shrank: a short read, libzip reports the EOF */
            got += (size_t)r;
        }
        io->pos += got;
        io->bytes_read += got;
        return (zip_int64_t)got;
    }
    case ZIP_SOURCE_CLOSE:
        return 0;
    case ZIP_SOURCE_STAT: {
        zip_stat_t *st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &io->error);
        if (!st)
            return -1;
        zip_stat_init(st);
        st->valid = ZIP_STAT_SIZE;
        st->size = io->size;
        return (zip_int64_t)sizeof *st;
    }
    case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&io->error, data, len);
    case ZIP_SOURCE_FREE:
        return 0; /* io belongs to the sg_archive */
    case ZIP_SOURCE_SEEK: {
        zip_int64_t pos = zip_source_seek_compute_offset(io->pos, io->size, data, len, &io->error);
        if (pos < 0)
            return -1;
        io->pos = (uint64_t)pos;
        return 0;
    }
    case ZIP_SOURCE_TELL:
        return (zip_int64_t)io->pos;
    case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE,
                                              ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE,
                                              ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL, ZIP_SOURCE_SUPPORTS,
                                              -1);
    default:
        zip_error_set(&io->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
}

zip_source_t *sg_archive__source(sg_archive_io *io, zip_error_t *zerr)
{
    return zip_source_function_create(source_cb, io, zerr);
}

uint32_t sg_archive__crc32(const void *data, size_t n)
{
    uint32_t table[256];
    const unsigned char *p = data;
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;

    for (i = 0; i < 256; i++) {
        uint32_t c = (uint32_t)i;
        int k;
        for (k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    for (i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

const char *sg_archive__quote(char *out, size_t cap, const char *name, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, i, shown = 0;

    if (cap == 0)
        return out;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (shown == 96 || o + 8 >= cap) {
            if (o + 4 <= cap) {
                memcpy(out + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (c >= 0x20 && c < 0x7F && c != '\\') {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
        shown++;
    }
    out[o] = '\0';
    return out;
}
