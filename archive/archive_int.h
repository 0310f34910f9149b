/*
 * archive_int.h - private to archive/: the sg_archive record, the file reader
 * shared by shapegate's own zip parser (zipdir.c) and libzip (io.c), and the
 * small JSON scanner (json.c).
 */
#ifndef SG_ARCHIVE_INT_H
#define SG_ARCHIVE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "archive/zipfns.h"
#include "shapegate/archive.h"
#include "util/util.h"

/* The archive file: a descriptor read with pread, and libzip's error record
 * for the zip_source built on it. `pos` is libzip's read position. */
typedef struct sg_archive_io {
    int fd;
    uint64_t size;
    uint64_t pos;
    uint64_t bytes_read;
    zip_error_t error;
} sg_archive_io;

/* One member as shapegate's own parser read it; `name` is NUL-terminated. */
typedef struct sg_archive_entry {
    sg_archive_member pub; /* what sg_archive_member_at hands out */
    size_t name_len;
    bool encrypted;
    uint64_t central_offset; /* offset of its central directory entry (write.c copies it) */
    size_t central_len;      /* bytes of that entry: fixed part, name, extra, comment */
} sg_archive_entry;

struct sg_archive {
    sg_archive_io io;
    sg_archive_limits limits;
    zip_t *za;                 /* libzip's view, used for reading data */
    sg_archive_format format;
    char *root;                /* "model", or "" for the flat layout */
    sg_archive_entry *entries; /* central-directory order */
    size_t nentries;
    sg_archive_entry **sorted; /* entries sorted by name (= by relative name) */
    uint64_t total_size;
    sg_archive_versions versions;
    char byteorder[8];         /* "" when absent */
    sg_archive_model *models;  /* sorted by name */
    size_t nmodels;
    uint64_t cd_offset, cd_size; /* the central directory (write.c) */
    bool zip64_end;            /* a zip64 end record and locator precede the end record */
};

/* Read exactly `n` bytes at `off`; SG_EIO on a read error, SG_EINVALID when
 * the file ends first (the message names `what`). */
int sg_archive__pread(sg_archive_io *io, void *buf, size_t n, uint64_t off, const char *what,
                      sg_error *err);

/* A zip_source reading `io` (borrowed: it must outlive the source). */
zip_source_t *sg_archive__source(sg_archive_io *io, zip_error_t *zerr);

/* Parse the end records and the central directory, read every local header,
 * fill a->entries / a->nentries, and check sizes, offsets and overlaps
 * against the file and a->limits. */
int sg_archive__read_dir(sg_archive *a, sg_error *err);

/* CRC-32 (zip / zlib polynomial) of `n` bytes. */
uint32_t sg_archive__crc32(const void *data, size_t n);

/* Find the top-level "schema_version" of a model JSON text. Returns 0;
 * SG_EINVALID when the text is not an object or the field is missing or
 * malformed; SG_EUNSUPPORTED for torch 2.1/2.2's single integer. */
int sg_archive__scan_schema(const char *json, size_t len, sg_archive_schema *out, sg_error *err);

/* Write `len` bytes of a member name into `out` (size `cap`) for an error
 * message: printable ASCII kept, other bytes as \xNN, long names cut with
 * "...". Returns `out`. */
const char *sg_archive__quote(char *out, size_t cap, const char *name, size_t len);

/* Buffer size for sg_archive__quote: up to 96 shown characters. */
#define SG_ARCHIVE_QUOTE_MAX 400

#endif
