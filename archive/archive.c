/*
 * archive.c - sg_archive: opening a torch.export `.pt2` file, validating it
 * (member names, duplicates, limits, libzip's agreement with shapegate's own
 * directory reading, the layout, its marker files and versions, the members
 * each model needs), listing members and models, and bounded, CRC-checked
 * reads of single members. Layouts and rules: docs/archive.md.
 */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/archive_int.h"

/* Marker members (archive_format, versions, byteorder) are at most this long. */
#define MARKER_MAX 64

#define FLAT_JSON "serialized_exported_program.json"

/* ---- small helpers ------------------------------------------------------------ */

/* `src` (may be NULL) over the defaults: zero fields keep the default. */
static void set_limits(sg_archive_limits *dst, const sg_archive_limits *src)
{
    const sg_archive_limits def = SG_ARCHIVE_LIMITS_INIT;
    *dst = def;
    if (!src)
        return;
    if (src->max_members)
        dst->max_members = src->max_members;
    if (src->max_name_len)
        dst->max_name_len = src->max_name_len;
    if (src->max_total_size)
        dst->max_total_size = src->max_total_size;
    if (src->max_member_size)
        dst->max_member_size = src->max_member_size;
    if (src->max_json_size)
        dst->max_json_size = src->max_json_size;
    dst->flags = src->flags;
}

/* The member's name quoted for a message, in `buf` (SG_ARCHIVE_QUOTE_MAX). */
static const char *quote_entry(char *buf, const sg_archive_entry *e)
{
    return sg_archive__quote(buf, SG_ARCHIVE_QUOTE_MAX, e->pub.name, e->name_len);
}

/* A libzip error code as a shapegate status. */
static int map_zip_error(int ze)
{
    switch (ze) {
    case ZIP_ER_MEMORY:
        return SG_ENOMEM;
    case ZIP_ER_READ:
    case ZIP_ER_SEEK:
    case ZIP_ER_OPEN:
    case ZIP_ER_TELL:
        return SG_EIO;
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_MULTIDISK:
        return SG_EUNSUPPORTED;
    default:
        return SG_EINVALID;
    }
}

/* qsort order of entry pointers: by full name (= by relative name). */
static int cmp_entry_name(const void *x, const void *y)
{
    const sg_archive_entry *const *a = x, *const *b = y;
    return strcmp((*a)->pub.name, (*b)->pub.name);
}

/* bsearch: a relative name against an entry pointer. */
static int cmp_key_rel(const void *key, const void *elem)
{
    const sg_archive_entry *const *e = elem;
    return strcmp((const char *)key, (*e)->pub.rel);
}

/* The entry whose relative name is `rel` (before the root is known: whose
 * full name is `rel`), or NULL. */
static sg_archive_entry *lookup(const sg_archive *a, const char *rel)
{
    sg_archive_entry **hit;
    if (!a->sorted)
        return NULL;
    hit = bsearch(rel, a->sorted, a->nentries, sizeof *a->sorted, cmp_key_rel);
    return hit ? *hit : NULL;
}

/* As lookup(), for the name `prefix` + `rest` (both NUL-terminated). */
static sg_archive_entry *lookup2(const sg_archive *a, const char *prefix, const char *rest)
{
    char small[256];
    size_t n1 = strlen(prefix), n2 = strlen(rest);
    char *name = n1 + n2 < sizeof small ? small : sg__malloc(n1 + n2 + 1);
    sg_archive_entry *e;

    if (!name)
        return NULL;
    memcpy(name, prefix, n1);
    memcpy(name + n1, rest, n2 + 1);
    e = lookup(a, name);
    if (name != small)
        free(name);
    return e;
}

/* ---- member names ---------------------------------------------------------- */

/* True when `s` (n bytes) is valid UTF-8 (no overlongs, surrogates or values
 * past U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t k, len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            cp = c & 0x1Fu;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            cp = c & 0x0Fu;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            cp = c & 0x07u;
        } else {
            return false;
        }
        if (n - i < len)
            return false;
        for (k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3Fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

/* A member name must be a relative path that stays inside the archive. */
static int check_name(const sg_archive_entry *e, size_t idx, sg_error *err)
{
    const char *s = e->pub.name;
    size_t n = e->name_len, i, start = 0;
    char q[SG_ARCHIVE_QUOTE_MAX];

    if (n == 0)
        return sg_error_set(err, SG_EINVALID, "member %zu has an empty name", idx);
    quote_entry(q, e);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7F)
            return sg_error_set(err, SG_EINVALID, "member '%s': control character in the name", q);
        if (c == '\\')
            return sg_error_set(err, SG_EINVALID, "member '%s': backslash in the name", q);
    }
    if (s[0] == '/' || (n >= 2 && s[1] == ':' && ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'))))
        return sg_error_set(err, SG_EINVALID, "member '%s': absolute path", q);
    for (i = 0; i <= n; i++) {
        if (i < n && s[i] != '/')
            continue;
        /* component s[start, i) */
        if (i == start && i != n)
            return sg_error_set(err, SG_EINVALID, "member '%s': empty path component", q);
        if ((i - start == 2 && s[start] == '.' && s[start + 1] == '.') || (i - start == 1 && s[start] == '.'))
            return sg_error_set(err, SG_EINVALID, "member '%s': '%.*s' path component", q, (int)(i - start), s + start);
        start = i + 1;
    }
    if (!valid_utf8((const unsigned char *)s, n))
        return sg_error_set(err, SG_EINVALID, "member '%s': the name is not valid UTF-8", q);
    return 0;
}

/* Every name acceptable, then the sorted index, with duplicates refused. */
static int check_names(sg_archive *a, sg_error *err)
{
    size_t i;
    int rc;

    for (i = 0; i < a->nentries; i++)
        if ((rc = check_name(&a->entries[i], i, err)) < 0)
            return rc;
    if (!(a->sorted = sg__malloc(a->nentries * sizeof *a->sorted)))
        return sg_error_set(err, SG_ENOMEM, "out of memory indexing members");
    for (i = 0; i < a->nentries; i++)
        a->sorted[i] = &a->entries[i];
    qsort(a->sorted, a->nentries, sizeof *a->sorted, cmp_entry_name);
    for (i = 0; i + 1 < a->nentries; i++) {
        if (strcmp(a->sorted[i]->pub.name, a->sorted[i + 1]->pub.name) == 0) {
            char q[SG_ARCHIVE_QUOTE_MAX];
            return sg_error_set(err, SG_EINVALID, "duplicate member '%s'", quote_entry(q, a->sorted[i]));
        }
    }
    return 0;
}

/* ---- libzip ------------------------------------------------------------------- */

/* Open the file with libzip through our own source, and check that libzip
 * sees the same members as shapegate's reading of the directory. */
static int open_libzip(sg_archive *a, sg_error *err)
{
    zip_error_t zerr;
    zip_source_t *src = NULL;
    int flags = ZIP_RDONLY, rc = 0;
    zip_uint64_t i;

    zip_error_init(&zerr);
    if (a->limits.flags & SG_ARCHIVE_CHECKCONS)
        flags |= ZIP_CHECKCONS;
    if (!(src = sg_archive__source(&a->io, &zerr))) {
        rc = sg_error_set(err, map_zip_error(zip_error_code_zip(&zerr)), "libzip: %s", zip_error_strerror(&zerr));
        goto cleanup;
    }
    if (!(a->za = zip_open_from_source(src, flags, &zerr))) {
        zip_source_free(src);
        rc = sg_error_set(err, map_zip_error(zip_error_code_zip(&zerr)), "libzip cannot open the archive: %s",
                          zip_error_strerror(&zerr));
        goto cleanup;
    }
    if (zip_get_num_entries(a->za, 0) != (zip_int64_t)a->nentries) {
        rc = sg_error_set(err, SG_EINVALID, "libzip lists %lld members where the central directory has %zu",
                          (long long)zip_get_num_entries(a->za, 0), a->nentries);
        goto cleanup;
    }
    for (i = 0; i < a->nentries; i++) {
        const sg_archive_entry *e = &a->entries[i];
        zip_stat_t st;
        zip_stat_init(&st);
        if (zip_stat_index(a->za, i, ZIP_FL_ENC_RAW, &st) < 0 || !(st.valid & ZIP_STAT_NAME) ||
            strcmp(st.name, e->pub.name) != 0 || st.size != e->pub.size || st.comp_size != e->pub.comp_size ||
            st.crc != e->pub.crc || st.comp_method != e->pub.method) {
            char q[SG_ARCHIVE_QUOTE_MAX];
            rc = sg_error_set(err, SG_EINVALID, "member '%s': libzip reads its directory entry differently",
                              quote_entry(q, e));
            goto cleanup;
        }
    }

cleanup:
    zip_error_fini(&zerr);
    return rc;
}

/* ---- reading ------------------------------------------------------------------ */

/* Read entry `e` (index `idx`) fully: declared size at most `max`, then at
 * most one byte past the declared size, CRC checked. */
static int read_entry(sg_archive *a, const sg_archive_entry *e, size_t max, char **data, size_t *len,
                      sg_error *err)
{
    char q[SG_ARCHIVE_QUOTE_MAX];
    zip_file_t *zf = NULL;
    char *buf = NULL;
    size_t size, got = 0;
    int rc = 0;

    *data = NULL;
    *len = 0;
    quote_entry(q, e);
    if (e->encrypted)
        return sg_error_set(err, SG_EUNSUPPORTED, "member '%s' is encrypted", q);
    if (e->pub.size > max)
        return sg_error_set(err, SG_ELIMIT, "member '%s' declares %llu bytes, over the limit of %zu", q,
                            (unsigned long long)e->pub.size, max);
    if (!zip_compression_method_supported((zip_int32_t)e->pub.method, 0))
        return sg_error_set(err, SG_EUNSUPPORTED, "member '%s': compression method %u is not supported", q,
                            (unsigned)e->pub.method);
    if (e->pub.size > SIZE_MAX - 2)
        return sg_error_set(err, SG_ELIMIT, "member '%s' is too large to read", q);
    size = (size_t)e->pub.size;
    if (!(buf = sg__malloc(size + 2))) {
        rc = sg_error_set(err, SG_ENOMEM, "out of memory reading member '%s' (%zu bytes)", q, size);
        goto cleanup;
    }
    if (!(zf = zip_fopen_index(a->za, (zip_uint64_t)(e - a->entries), 0))) {
        zip_error_t *ze = zip_get_error(a->za);
        rc = sg_error_set(err, map_zip_error(zip_error_code_zip(ze)), "member '%s': %s", q, zip_error_strerror(ze));
        goto cleanup;
    }
    while (got <= size) {
        zip_int64_t r = zip_fread(zf, buf + got, (zip_uint64_t)(size + 1 - got));
        if (r < 0) {
            zip_error_t *ze = zip_file_get_error(zf);
            int code = zip_error_code_zip(ze);
            if (code == ZIP_ER_CRC)
                rc = sg_error_set(err, SG_EINVALID, "member '%s': CRC mismatch (corrupt data)", q);
            else
                rc = sg_error_set(err, map_zip_error(code), "member '%s': %s", q, zip_error_strerror(ze));
            goto cleanup;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got > size) {
        rc = sg_error_set(err, SG_EINVALID, "member '%s' holds more data than its declared %zu bytes", q, size);
        goto cleanup;
    }
    if (got < size) {
        rc = sg_error_set(err, SG_EINVALID, "member '%s' holds %zu of its declared %zu bytes", q, got, size);
        goto cleanup;
    }
    if (sg_archive__crc32(buf, got) != e->pub.crc) {
        rc = sg_error_set(err, SG_EINVALID, "member '%s': CRC mismatch (corrupt data)", q);
        goto cleanup;
    }
    buf[got] = '\0';
    *data = buf;
    *len = got;
    buf = NULL;

cleanup:
    if (zf)
        zip_fclose(zf);
    free(buf);
    return rc;
}

/* Read a marker member (a few bytes of text). */
static int read_marker(sg_archive *a, const sg_archive_entry *e, char out[MARKER_MAX + 1], size_t *len,
                       sg_error *err)
{
    char *data = NULL;
    int rc;

    if (e->pub.size > MARKER_MAX) {
        char q[SG_ARCHIVE_QUOTE_MAX];
        return sg_error_set(err, SG_EINVALID, "member '%s' has %llu bytes; a marker has at most %d",
                            quote_entry(q, e), (unsigned long long)e->pub.size, MARKER_MAX);
    }
    if ((rc = read_entry(a, e, MARKER_MAX, &data, len, err)) < 0)
        return rc;
    memcpy(out, data, *len + 1);
    free(data);
    return 0;
}

/* Quote marker content for a message. */
static const char *quote_text(char *buf, const char *s, size_t n)
{
    return sg_archive__quote(buf, SG_ARCHIVE_QUOTE_MAX, s, n);
}

/* Drop leading and trailing whitespace (as Python's int() and C's stoull
 * tolerate); returns the new start. */
static char *trim(char *s, size_t *n)
{
    while (*n > 0 && (s[*n - 1] == '\n' || s[*n - 1] == '\r' || s[*n - 1] == ' ' || s[*n - 1] == '\t'))
        (*n)--;
    while (*n > 0 && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')) {
        s++;
        (*n)--;
    }
    return s;
}

/* Digits only: the value (up to 9 digits), or -1. */
static long parse_digits(const char *s, size_t n)
{
    long v = 0;
    size_t i;
    if (n == 0 || n > 9)
        return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* ---- layouts --------------------------------------------------------------------- */

/* SG_EINVALID naming the full name of the absent member `rel`; `why` is appended. */
static int missing(const sg_archive *a, const char *rel, const char *why, sg_error *err)
{
    char q[SG_ARCHIVE_QUOTE_MAX];
    char full[SG_ARCHIVE_QUOTE_MAX];
    if (snprintf(full, sizeof full, "%s%s%s", a->root, a->root[0] ? "/" : "", rel) >= (int)sizeof full)
        full[sizeof full - 1] = '\0'; /* a cut name still names the member */
    return sg_error_set(err, SG_EINVALID, "missing required member '%s'%s", quote_text(q, full, strlen(full)), why);
}

/* archive_format, archive_version, .data/version, byteorder of a PT2 archive. */
static int check_pt2_markers(sg_archive *a, sg_error *err)
{
    char buf[MARKER_MAX + 1], q[SG_ARCHIVE_QUOTE_MAX], qe[SG_ARCHIVE_QUOTE_MAX], *txt;
    const sg_archive_entry *e;
    size_t n;
    long v;
    int rc;

    e = lookup(a, "archive_format");
    if ((rc = read_marker(a, e, buf, &n, err)) < 0)
        return rc;
    if (n != 3 || memcmp(buf, "pt2", 3) != 0)
        return sg_error_set(err, SG_EINVALID, "member '%s' is '%s', expected 'pt2'", quote_entry(qe, e),
                            quote_text(q, buf, n));
    memcpy(a->versions.archive_format, "pt2", 4);

    if (!(e = lookup(a, "archive_version")))
        return missing(a, "archive_version", "", err);
    if ((rc = read_marker(a, e, buf, &n, err)) < 0)
        return rc;
    v = parse_digits(buf, n);
    if (v < 0)
        return sg_error_set(err, SG_EINVALID, "member '%s' is '%s', expected '0'", quote_entry(qe, e),
                            quote_text(q, buf, n));
    if (v != 0 || n != 1)
        return sg_error_set(err, SG_EUNSUPPORTED,
                            "member '%s': archive version %s is not supported (torch 2.8 - 2.14 write and read 0)",
                            quote_entry(qe, e), quote_text(q, buf, n));
    a->versions.archive_version = 0;

    if (!(e = lookup(a, ".data/version")) && !(e = lookup(a, "version")))
        return missing(a, ".data/version", "", err);
    if ((rc = read_marker(a, e, buf, &n, err)) < 0)
        return rc;
    txt = trim(buf, &n);
    v = parse_digits(txt, n);
    if (v < 0)
        return sg_error_set(err, SG_EINVALID, "member '%s' is '%s', not a number", quote_entry(qe, e),
                            quote_text(q, txt, n));
    if (v < 1 || v > 10)
        return sg_error_set(err, SG_EUNSUPPORTED,
                            "member '%s': container version %ld is not supported (torch reads 1 to 10)",
                            quote_entry(qe, e), v);
    a->versions.container_version = (int)v;

    if ((e = lookup(a, "byteorder"))) {
        if ((rc = read_marker(a, e, buf, &n, err)) < 0)
            return rc;
        if (!((n == 6 && memcmp(buf, "little", 6) == 0) || (n == 3 && memcmp(buf, "big", 3) == 0)))
            return sg_error_set(err, SG_EINVALID, "member '%s' is '%s', expected 'little' or 'big'",
                                quote_entry(qe, e), quote_text(q, buf, n));
        memcpy(a->byteorder, buf, n + 1);
    }
    return 0;
}

/* Models by name. */
static int cmp_model(const void *x, const void *y)
{
    const sg_archive_model *a = x, *b = y;
    return strcmp(a->name, b->name);
}

/* Find the members a PT2 model needs, the way torch's load_pt2 does. */
static int fill_pt2_model(sg_archive *a, sg_archive_model *m, sg_error *err)
{
    char rel[SG_ARCHIVE_QUOTE_MAX];
    char why[SG_ARCHIVE_QUOTE_MAX + 16];
    const sg_archive_entry *e;
    char qm[SG_ARCHIVE_QUOTE_MAX];

    quote_text(qm, m->name, strlen(m->name));
    snprintf(why, sizeof why, " (model '%s')", qm);
    snprintf(rel, sizeof rel, "data/sample_inputs/%s.pt", m->name);
    if (!(e = lookup(a, rel)))
        return missing(a, rel, why, err);
    m->sample_inputs_member = e->pub.rel;

    snprintf(rel, sizeof rel, "data/weights/%s.pt", m->name);
    if ((e = lookup(a, rel))) {
        m->payload = SG_ARCHIVE_PAYLOAD_PICKLE;
    } else {
        snprintf(rel, sizeof rel, "data/weights/%s_weights_config.json", m->name);
        if (!(e = lookup(a, rel)))
            return missing(a, rel, why, err);
        m->payload = SG_ARCHIVE_PAYLOAD_RAW;
    }
    m->weights_member = e->pub.rel;

    snprintf(rel, sizeof rel, "data/constants/%s.pt", m->name);
    if (!(e = lookup(a, rel))) {
        snprintf(rel, sizeof rel, "data/constants/%s_constants_config.json", m->name);
        if (!(e = lookup(a, rel)))
            return missing(a, rel, why, err);
    }
    m->constants_member = e->pub.rel;
    return 0;
}

/* The models of a PT2 archive: one per models/<name>.json. */
static int find_pt2_models(sg_archive *a, sg_error *err)
{
    size_t i, n = 0;
    bool aoti = false;
    int rc;

    for (i = 0; i < a->nentries; i++) {
        const char *rel = a->entries[i].pub.rel;
        if (strncmp(rel, "models/", 7) == 0)
            n++;
        if (strncmp(rel, "data/aotinductor/", 17) == 0)
            aoti = true;
    }
    if (n == 0) {
        if (aoti)
            return sg_error_set(err, SG_EUNSUPPORTED,
                                "an AOTInductor package without an exported program (no models/<name>.json)");
        return missing(a, "models/model.json", ": the archive holds no model", err);
    }
    if (!(a->models = sg__calloc(n, sizeof *a->models)))
        return sg_error_set(err, SG_ENOMEM, "out of memory listing models");
    for (i = 0; i < a->nentries; i++) {
        const sg_archive_entry *e = &a->entries[i];
        const char *rel = e->pub.rel, *stem;
        size_t slen;
        char q[SG_ARCHIVE_QUOTE_MAX];
        if (strncmp(rel, "models/", 7) != 0)
            continue;
        stem = rel + 7;
        slen = strlen(stem);
        if (slen <= 5 || strcmp(stem + slen - 5, ".json") != 0 || memchr(stem, '/', slen))
            return sg_error_set(err, SG_EINVALID,
                                "unexpected member '%s': torch loads every file under models/ as a model, and only models/<name>.json is one",
                                quote_entry(q, e));
        slen -= 5;
        if (memchr(stem, '.', slen))
            return sg_error_set(err, SG_EINVALID, "member '%s': a model name cannot contain '.'", quote_entry(q, e));
        if (slen + 64 > SG_ARCHIVE_QUOTE_MAX)
            return sg_error_set(err, SG_ELIMIT, "member '%s': model name too long", quote_entry(q, e));
        if (!(a->models[a->nmodels].name = sg__strndup(stem, slen)))
            return sg_error_set(err, SG_ENOMEM, "out of memory listing models");
        a->models[a->nmodels].json_member = rel;
        a->nmodels++;
    }
    qsort(a->models, a->nmodels, sizeof *a->models, cmp_model);
    for (i = 0; i < a->nmodels; i++)
        if ((rc = fill_pt2_model(a, &a->models[i], err)) < 0)
            return rc;
    return 0;
}

/* The PT2 layout with root folder `root`: relative names, markers, models. */
static int open_pt2(sg_archive *a, const char *root, size_t root_len, sg_error *err)
{
    size_t i;
    int rc;

    if (!(a->root = sg__strndup(root, root_len)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    for (i = 0; i < a->nentries; i++) {
        sg_archive_entry *e = &a->entries[i];
        char q[SG_ARCHIVE_QUOTE_MAX], qr[SG_ARCHIVE_QUOTE_MAX];
        if (e->name_len <= root_len + 1 || memcmp(e->pub.name, root, root_len) != 0 || e->pub.name[root_len] != '/')
            return sg_error_set(err, SG_EINVALID, "member '%s' is not inside the root folder '%s/'", quote_entry(q, e),
                                quote_text(qr, root, root_len));
        e->pub.rel = e->pub.name + root_len + 1;
    }
    if (lookup(a, "models/"))
        return sg_error_set(err, SG_EINVALID, "directory entry 'models/' would be loaded by torch as a model");
    a->format = SG_ARCHIVE_PT2;
    if ((rc = check_pt2_markers(a, err)) < 0)
        return rc;
    return find_pt2_models(a, err);
}

/* The flat layout: the `version` member, and the one model "model". */
static int open_flat(sg_archive *a, sg_error *err)
{
    char buf[MARKER_MAX + 1], q[SG_ARCHIVE_QUOTE_MAX], *txt;
    const sg_archive_entry *e;
    sg_archive_model *m;
    const char *dot;
    long major, minor;
    size_t n;
    int rc;

    if (!(a->root = sg__strndup("", 0)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    a->format = SG_ARCHIVE_FLAT;
    if (!(e = lookup(a, "version")))
        return missing(a, "version", " (the schema version of a flat archive)", err);
    if ((rc = read_marker(a, e, buf, &n, err)) < 0)
        return rc;
    txt = trim(buf, &n);
    dot = memchr(txt, '.', n);
    if (!dot) {
        if (parse_digits(txt, n) >= 0)
            return sg_error_set(err, SG_EUNSUPPORTED,
                                "member 'version': schema version '%s' is the single-number form of torch 2.1/2.2, which shapegate does not read",
                                quote_text(q, txt, n));
        return sg_error_set(err, SG_EINVALID, "member 'version' is '%s', expected '<major>.<minor>'",
                            quote_text(q, txt, n));
    }
    major = parse_digits(txt, (size_t)(dot - txt));
    minor = parse_digits(dot + 1, n - (size_t)(dot - txt) - 1);
    if (major < 0 || minor < 0)
        return sg_error_set(err, SG_EINVALID, "member 'version' is '%s', expected '<major>.<minor>'",
                            quote_text(q, txt, n));
    a->versions.schema_major = (int)major;
    a->versions.schema_minor = (int)minor;
    if (major != SG_ARCHIVE_SCHEMA_MAJOR)
        return sg_error_set(err, SG_EUNSUPPORTED,
                            "member 'version': schema version %ld.%ld is not supported (shapegate reads major %d: torch 2.6 and later)",
                            major, minor, SG_ARCHIVE_SCHEMA_MAJOR);

    if (!(a->models = sg__calloc(1, sizeof *a->models)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    m = &a->models[0];
    if (!(m->name = sg__strndup("model", 5)))
        return sg_error_set(err, SG_ENOMEM, "out of memory");
    a->nmodels = 1;
    m->json_member = lookup(a, FLAT_JSON)->pub.rel;
    if ((e = lookup(a, "serialized_state_dict.pt"))) {
        m->weights_member = e->pub.rel;
        m->payload = SG_ARCHIVE_PAYLOAD_PICKLE;
    }
    if ((e = lookup(a, "serialized_constants.pt")))
        m->constants_member = e->pub.rel;
    if ((e = lookup(a, "serialized_example_inputs.pt")))
        m->sample_inputs_member = e->pub.rel;
    return 0;
}

/* Decide the layout (PT2-FORMAT.md §1.4 detection order) and check it. */
static int open_layout(sg_archive *a, sg_error *err)
{
    const char *first = a->entries[0].pub.name;
    const char *slash = strchr(first, '/');
    size_t root_len = slash ? (size_t)(slash - first) : 0;
    char root[SG_ARCHIVE_QUOTE_MAX], q[SG_ARCHIVE_QUOTE_MAX];

    if (slash && root_len + 1 < sizeof root) {
        memcpy(root, first, root_len);
        root[root_len] = '/';
        root[root_len + 1] = '\0';
        if (lookup2(a, root, "archive_format"))
            return open_pt2(a, first, root_len, err);
        if (lookup2(a, root, "data.pkl"))
            return sg_error_set(err, SG_EUNSUPPORTED,
                                "a torch.save checkpoint ('%sdata.pkl'), not a torch.export archive", quote_text(q, root, root_len + 1));
    }
    if (lookup(a, "archive_format"))
        return sg_error_set(err, SG_EUNSUPPORTED,
                            "an early AOTInductor package (top-level 'archive_format'), which holds no exported program");
    if (lookup(a, FLAT_JSON))
        return open_flat(a, err);
    if (slash && root_len + 1 < sizeof root)
        return sg_error_set(err, SG_EINVALID, "not a torch.export archive: neither '%sarchive_format' nor '" FLAT_JSON "' is in it",
                            quote_text(q, root, root_len + 1));
    return sg_error_set(err, SG_EINVALID, "not a torch.export archive: no '<root>/archive_format' and no '" FLAT_JSON "'");
}

/* ---- public API ------------------------------------------------------------------- */

/* Open the archive on `fd` (taken over: closed on failure and by sg_archive_free). */
static int open_common(sg_archive **out, int fd, const sg_archive_limits *limits, sg_error *err)
{
    sg_archive *a = NULL;
    struct stat st;
    int rc = 0;

    if ((rc = sg_archive__zip_load(err)) != 0) { /* libzip, at the first archive (zipfns.h) */
        close(fd);
        return rc;
    }
    if (fstat(fd, &st) < 0) {
        rc = sg_error_set(err, SG_EIO, "cannot stat the archive: %s", strerror(errno));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sg_error_set(err, SG_EIO, "the archive is not a regular file");
    }
    if (!(a = sg__calloc(1, sizeof *a))) {
        close(fd);
        return sg_error_set(err, SG_ENOMEM, "out of memory opening the archive");
    }
    a->io.fd = fd;
    a->io.size = (uint64_t)st.st_size;
    zip_error_init(&a->io.error);
    set_limits(&a->limits, limits);
    a->versions.archive_version = a->versions.container_version = -1;
    a->versions.schema_major = a->versions.schema_minor = -1;

    if ((rc = sg_archive__read_dir(a, err)) < 0)
        goto cleanup;
    if ((rc = check_names(a, err)) < 0)
        goto cleanup;
    if ((rc = open_libzip(a, err)) < 0)
        goto cleanup;
    if ((rc = open_layout(a, err)) < 0)
        goto cleanup;

cleanup:
    if (rc < 0) {
        sg_archive_free(a);
        a = NULL;
    }
    *out = a;
    return rc;
}

int sg_archive_open(sg_archive **out, const char *path, const sg_archive_limits *limits, sg_error *err)
{
    int fd;

    *out = NULL;
    if (!path)
        return sg_error_set(err, SG_EINVALID, "no archive path given");
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return sg_error_set(err, SG_EIO, "cannot open the archive: %s", strerror(errno));
    return open_common(out, fd, limits, err);
}

int sg_archive_open_fd(sg_archive **out, int fd, const sg_archive_limits *limits, sg_error *err)
{
    int dup_fd;

    *out = NULL;
    if (fd < 0)
        return sg_error_set(err, SG_EINVALID, "invalid file descriptor %d", fd);
    if ((dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
        return sg_error_set(err, SG_EIO, "cannot duplicate the archive descriptor: %s", strerror(errno));
    return open_common(out, dup_fd, limits, err);
}

void sg_archive_free(sg_archive *a)
{
    size_t i;

    if (!a)
        return;
    if (a->za)
        zip_discard(a->za);
    zip_error_fini(&a->io.error);
    if (a->io.fd >= 0)
        close(a->io.fd);
    for (i = 0; i < a->nentries; i++)
        free((char *)a->entries[i].pub.name);
    free(a->entries);
    free(a->sorted);
    for (i = 0; i < a->nmodels; i++)
        free((char *)a->models[i].name);
    free(a->models);
    free(a->root);
    free(a);
}

sg_archive_format sg_archive_format_of(const sg_archive *a) { return a->format; }

const char *sg_archive_format_name(sg_archive_format f)
{
    switch (f) {
    case SG_ARCHIVE_FLAT:
        return "flat";
    case SG_ARCHIVE_PT2:
        return "pt2";
    default:
        return "unknown";
    }
}

const char *sg_archive_root(const sg_archive *a) { return a->root; }

const sg_archive_versions *sg_archive_versions_of(const sg_archive *a) { return &a->versions; }

const char *sg_archive_byteorder(const sg_archive *a) { return a->byteorder[0] ? a->byteorder : NULL; }

size_t sg_archive_member_count(const sg_archive *a) { return a->nentries; }

const sg_archive_member *sg_archive_member_at(const sg_archive *a, size_t i)
{
    return i < a->nentries ? &a->entries[i].pub : NULL;
}

const sg_archive_member *sg_archive_find(const sg_archive *a, const char *rel)
{
    const sg_archive_entry *e = rel ? lookup(a, rel) : NULL;
    return e ? &e->pub : NULL;
}

uint64_t sg_archive_total_size(const sg_archive *a) { return a->total_size; }

uint64_t sg_archive_bytes_read(const sg_archive *a) { return a->io.bytes_read; }

size_t sg_archive_model_count(const sg_archive *a) { return a->nmodels; }

const sg_archive_model *sg_archive_model_at(const sg_archive *a, size_t i)
{
    return i < a->nmodels ? &a->models[i] : NULL;
}

const sg_archive_model *sg_archive_find_model(const sg_archive *a, const char *name)
{
    sg_archive_model key;
    if (!name)
        return NULL;
    key.name = name;
    return bsearch(&key, a->models, a->nmodels, sizeof *a->models, cmp_model);
}

int sg_archive_read_member(char **data, size_t *len, sg_archive *a, const char *rel, size_t max, sg_error *err)
{
    const sg_archive_entry *e;

    *data = NULL;
    *len = 0;
    if (!rel)
        return sg_error_set(err, SG_EINVALID, "no member name given");
    if (!(e = lookup(a, rel))) {
        char q[SG_ARCHIVE_QUOTE_MAX];
        return sg_error_set(err, SG_EINVALID, "no member '%s' in the archive", quote_text(q, rel, strlen(rel)));
    }
    return read_entry(a, e, max ? max : a->limits.max_member_size, data, len, err);
}

int sg_archive_read_model(char **json, size_t *len, sg_archive_schema *schema, sg_archive *a, const char *name,
                          sg_error *err)
{
    const sg_archive_model *m;
    const sg_archive_entry *e;
    sg_archive_schema sv;
    sg_error scan_err = SG_ERROR_INIT;
    char q[SG_ARCHIVE_QUOTE_MAX];
    int rc;

    *json = NULL;
    *len = 0;
    if (name) {
        m = sg_archive_find_model(a, name);
    } else {
        m = sg_archive_find_model(a, "model");
        if (!m && a->nmodels == 1)
            m = &a->models[0];
    }
    if (!m) {
        if (!name)
            return sg_error_set(err, SG_EINVALID, "the archive holds %zu models and none is called 'model': name one", a->nmodels);
        return sg_error_set(err, SG_EINVALID, "no model '%s' in the archive", quote_text(q, name, strlen(name)));
    }
    e = lookup(a, m->json_member);
    quote_entry(q, e);
    if ((rc = read_entry(a, e, a->limits.max_json_size, json, len, err)) < 0)
        return rc;
    if ((rc = sg_archive__scan_schema(*json, *len, &sv, &scan_err)) < 0) {
        sg_error_set_at(err, rc, scan_err.col, "member '%s': %s", q, scan_err.msg);
        goto fail;
    }
    if (sv.major != SG_ARCHIVE_SCHEMA_MAJOR && !(sv.major == 0 && sv.minor == 0)) {
        rc = sg_error_set(err, SG_EUNSUPPORTED,
                          "member '%s': schema version %d.%d is not supported (shapegate reads major %d: torch 2.6 and later)",
                          q, sv.major, sv.minor, SG_ARCHIVE_SCHEMA_MAJOR);
        goto fail;
    }
    if (schema)
        *schema = sv;
    return 0;

fail:
    free(*json);
    *json = NULL;
    *len = 0;
    return rc;
}
