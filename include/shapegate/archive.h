/**
 * @file archive.h
 * @brief Reading torch.export `.pt2` containers: layouts, members, versions,
 *        limits. Hands the raw model JSON to the graph layer; never reads weights.
 *
 * Two container layouts are recognised (docs/archive.md, PT2-FORMAT.md §1):
 * - **SG_ARCHIVE_FLAT**, torch 2.1 – 2.7: members at the top level,
 *   `serialized_exported_program.json` plus a `version` member holding the
 *   schema version ("8.2", "8.7").
 * - **SG_ARCHIVE_PT2**, torch 2.8 and later: every member below one root folder
 *   (`model/` for `model.pt2`), the markers `archive_format` = `pt2`,
 *   `archive_version` = `0`, `.data/version`, and one `models/<name>.json` per
 *   model. Weights are torch.save pickles in 2.8 (`data/weights/<m>.pt`) and
 *   raw files with a JSON config from 2.9 on.
 *
 * Opening validates the whole container before anything is handed out: the
 * zip structure (read by shapegate itself and cross-checked with libzip), every
 * member name (no `..`, no absolute or control-character names, no
 * duplicates), the declared sizes against the limits, the layout, the marker
 * files and the versions torch checks. Nothing is decompressed at open except
 * the few-byte marker members.
 *
 * Member names handed in and out are *relative to the root folder*
 * (`models/model.json`); for the flat layout they are the zip names.
 *
 * Errors: SG_EINVALID (malformed zip or container), SG_ELIMIT (over a limit;
 * nothing over a limit is ever decompressed), SG_EUNSUPPORTED (a well-formed
 * torch container of a version or kind shapegate does not read), SG_EIO (the
 * file cannot be read), SG_ENOMEM. Messages are one line and name the member.
 *
 * Ownership: an `sg_archive` owns everything it hands out as `const`; those
 * pointers stay valid until sg_archive_free(). `char **out` results are the
 * caller's, freed with sg_free().
 *
 * Threading: one `sg_archive` is used from one thread at a time (reads move a
 * shared file position). Different archives are independent.
 */
#ifndef SHAPEGATE_ARCHIVE_H
#define SHAPEGATE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "shapegate/common.h"
#include "shapegate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sg_archive sg_archive;

/** Container layout of an opened archive. */
typedef enum sg_archive_format {
    SG_ARCHIVE_FLAT = 1, /**< legacy ExportedProgram zip, torch 2.1 – 2.7 */
    SG_ARCHIVE_PT2 = 2   /**< PT2 archive with a root folder, torch 2.8+ */
} sg_archive_format;

/** How a model's weights and constants are stored (never read by shapegate). */
typedef enum sg_archive_payload {
    SG_ARCHIVE_PAYLOAD_NONE = 0,   /**< no weights member (flat archive without one) */
    SG_ARCHIVE_PAYLOAD_PICKLE = 1, /**< torch.save blobs: flat layout and PT2 from torch 2.8 */
    SG_ARCHIVE_PAYLOAD_RAW = 2     /**< `<m>_weights_config.json` + raw files: torch 2.9+ */
} sg_archive_payload;

/** The only schema major version torch 2.6 – 2.14 write and read. */
#define SG_ARCHIVE_SCHEMA_MAJOR 8

/**
 * Size limits applied when opening and reading. Any field left 0 takes the
 * default shown in SG_ARCHIVE_LIMITS_INIT, so a zeroed struct is valid.
 */
typedef struct sg_archive_limits {
    size_t max_members;       /**< members in the zip (default 100000) */
    size_t max_name_len;      /**< bytes in one member name (default 1024) */
    uint64_t max_total_size;  /**< sum of declared uncompressed sizes (default 1 TiB) */
    size_t max_member_size;   /**< default bound for sg_archive_read_member (default 64 MiB) */
    size_t max_json_size;     /**< bound for a model JSON member (default 256 MiB) */
    unsigned flags;           /**< SG_ARCHIVE_* flags below */
} sg_archive_limits;

/**
 * Also open with libzip's ZIP_CHECKCONS (compares every local header with the
 * central directory: one seek and read per member). shapegate's own checks
 * already cover this; the flag adds libzip's, whose strictness varies between
 * libzip releases.
 */
#define SG_ARCHIVE_CHECKCONS 1u

/** Defaults, for `sg_archive_limits lim = SG_ARCHIVE_LIMITS_INIT;`. */
#define SG_ARCHIVE_LIMITS_INIT \
    {100000, 1024, (uint64_t)1 << 40, (size_t)64 << 20, (size_t)256 << 20, 0u}

/**
 * The version markers found at open, as torch checks them. Fields that the
 * layout does not have are -1 (integers) or "" (strings).
 */
typedef struct sg_archive_versions {
    char archive_format[8];   /**< PT2: content of `archive_format` ("pt2") */
    int archive_version;      /**< PT2: `archive_version` (0) */
    int container_version;    /**< PT2: `.data/version` or `version` (6), 1..10 */
    int schema_major;         /**< flat: from the `version` member ("8.7" -> 8) */
    int schema_minor;         /**< flat: 7 for "8.7" */
} sg_archive_versions;

/** The schema version written inside one model JSON (`schema_version`). */
typedef struct sg_archive_schema {
    int major;
    int minor;
} sg_archive_schema;

/** One zip member, as listed by the central directory (for `inspect`). */
typedef struct sg_archive_member {
    const char *name;        /**< full zip name, e.g. "model/models/model.json" */
    const char *rel;         /**< name below the root folder ("models/model.json") */
    uint64_t size;           /**< declared uncompressed size */
    uint64_t comp_size;      /**< declared compressed size */
    uint64_t header_offset;  /**< offset of the local header in the file */
    uint64_t data_offset;    /**< offset of the first data byte (64-aligned in torch's writer) */
    uint32_t crc;            /**< CRC-32 from the central directory */
    uint16_t method;         /**< 0 stored, 8 deflated, ... */
    uint16_t flags;          /**< general-purpose bit flags (torch: 0x0808) */
} sg_archive_member;

/** One exported program in the archive. Member names are relative, or NULL. */
typedef struct sg_archive_model {
    const char *name;             /**< "model" (flat archives have exactly this one) */
    const char *json_member;      /**< "models/model.json" or "serialized_exported_program.json" */
    const char *weights_member;   /**< weights config JSON or torch.save blob, NULL if absent */
    const char *constants_member; /**< constants config JSON or torch.save blob, NULL if absent */
    const char *sample_inputs_member; /**< "data/sample_inputs/<m>.pt", NULL if absent */
    sg_archive_payload payload;   /**< how weights are stored */
} sg_archive_model;

/**
 * Open and validate the archive at `path`. `limits` may be NULL (defaults).
 * On success `*out` owns the open file; free it with sg_archive_free().
 * Returns 0, SG_EIO (cannot open or read the file), SG_EINVALID, SG_ELIMIT,
 * SG_EUNSUPPORTED (a torch container shapegate does not read: a wrong archive
 * or schema version, an AOTInductor-only package, a torch.save checkpoint,
 * a multi-disk zip) or SG_ENOMEM. `*out` is NULL on failure.
 */
SG_API int sg_archive_open(sg_archive **out, const char *path, const sg_archive_limits *limits,
                    sg_error *err);

/**
 * As sg_archive_open(), from an open file descriptor. The descriptor stays the
 * caller's (the archive works on a duplicate); it must be seekable.
 */
SG_API int sg_archive_open_fd(sg_archive **out, int fd, const sg_archive_limits *limits, sg_error *err);

/** Close the archive and free everything it handed out. NULL-safe. */
SG_API void sg_archive_free(sg_archive *a);

/** The layout of an open archive. */
SG_API sg_archive_format sg_archive_format_of(const sg_archive *a);

/** "flat" or "pt2". */
SG_API const char *sg_archive_format_name(sg_archive_format f);

/** The root folder name without slash ("model"); "" for the flat layout. Borrowed. */
SG_API const char *sg_archive_root(const sg_archive *a);

/** The version markers read at open. Borrowed. */
SG_API const sg_archive_versions *sg_archive_versions_of(const sg_archive *a);

/** Content of the `byteorder` member ("little" or "big"), or NULL when absent. Borrowed. */
SG_API const char *sg_archive_byteorder(const sg_archive *a);

/** Number of members in the zip. */
SG_API size_t sg_archive_member_count(const sg_archive *a);

/** Member `i` (0-based, central-directory order), or NULL if out of range. Borrowed. */
SG_API const sg_archive_member *sg_archive_member_at(const sg_archive *a, size_t i);

/** The member with relative name `rel`, or NULL when there is none. Borrowed. */
SG_API const sg_archive_member *sg_archive_find(const sg_archive *a, const char *rel);

/** Sum of the declared uncompressed sizes of all members. */
SG_API uint64_t sg_archive_total_size(const sg_archive *a);

/** Number of models (exported programs) in the archive: at least 1. */
SG_API size_t sg_archive_model_count(const sg_archive *a);

/** Model `i`, in name order, or NULL if out of range. Borrowed. */
SG_API const sg_archive_model *sg_archive_model_at(const sg_archive *a, size_t i);

/** The model called `name`, or NULL. Borrowed. */
SG_API const sg_archive_model *sg_archive_find_model(const sg_archive *a, const char *name);

/**
 * Read member `rel` fully into a new NUL-terminated buffer `*data` of `*len`
 * bytes (the NUL not counted), checking its CRC-32. `max` bounds the size
 * (0: the limits' max_member_size); a member declared larger is SG_ELIMIT and
 * is not read at all, and reading stops as soon as the data would pass its
 * declared size. Returns 0; SG_EINVALID when `rel` is absent, the data is
 * corrupt, shorter or longer than declared, or fails its CRC; SG_ELIMIT;
 * SG_EUNSUPPORTED (encrypted, or a compression method libzip cannot
 * decompress); SG_EIO; SG_ENOMEM. On failure `*data` is NULL and `*len` 0.
 */
SG_API int sg_archive_read_member(char **data, size_t *len, sg_archive *a, const char *rel, size_t max,
                           sg_error *err);

/**
 * Read the model JSON of model `name` (NULL: the model called "model", or the
 * only one) as raw bytes, bounded by the limits' max_json_size, and check its
 * `schema_version` the way torch does: the major must be
 * SG_ARCHIVE_SCHEMA_MAJOR ((0, 0) is accepted as torch's wildcard).
 * `schema` (may be NULL) receives the version. The bytes are handed over
 * unchanged; see sg_archive_json_quote_nonfinite() for torch <= 2.6 floats.
 * Returns as sg_archive_read_member(), plus SG_EINVALID when the text is not a
 * JSON object or has no usable schema_version, SG_EUNSUPPORTED for another
 * major version, and SG_EINVALID when no model is called `name`.
 */
SG_API int sg_archive_read_model(char **json, size_t *len, sg_archive_schema *schema, sg_archive *a,
                          const char *name, sg_error *err);

/**
 * Rewrite the bare `Infinity`, `-Infinity` and `NaN` tokens that torch <= 2.6
 * writes (not JSON) into the strings torch >= 2.7 writes (`"Infinity"` ...),
 * outside string literals, so that strict JSON parsers accept the text.
 * `*json` (from sg_archive_read_model) is replaced by a new buffer when
 * anything changed, and `*len` updated; `*count` (may be NULL) gets the
 * number of tokens quoted. Returns 0 or SG_ENOMEM (then nothing changed).
 */
SG_API int sg_archive_json_quote_nonfinite(char **json, size_t *len, size_t *count, sg_error *err);

/** Bytes shapegate has read from the archive file so far (open included). */
SG_API uint64_t sg_archive_bytes_read(const sg_archive *a);

/* ---- writing (archive/write.c) --------------------------------------------------- */

/** Where `shapegate pack` puts its record, relative to the root folder (PT2 layout). */
#define SG_ARCHIVE_CONSTRAINTS_PT2 "extra/shapegate/constraints.json"
/** The same in the flat layout, where torch 2.1 - 2.7 keep extra files. */
#define SG_ARCHIVE_CONSTRAINTS_FLAT "extra_files/shapegate/constraints.json"

/** SG_ARCHIVE_CONSTRAINTS_FLAT for the flat layout, else SG_ARCHIVE_CONSTRAINTS_PT2. Static. */
SG_API const char *sg_archive_constraints_member(sg_archive_format f);

/**
 * Write a copy of the open archive `a` to `path` with member `rel` (relative
 * to the root folder, e.g. SG_ARCHIVE_CONSTRAINTS_PT2) set to the `len` bytes
 * at `data` (at most 64 MiB), stored. Every other member's local header,
 * data, data descriptor and padding are copied byte for byte, in the same
 * order; a member already called `rel` is dropped (its bytes are not copied,
 * later local-header offsets in the copied central entries are rewritten) and
 * the new one is appended after the others, in the source writer's style:
 * PT2 (torch's PyTorchStreamWriter) with flags 0x0808, an "FB" extra field
 * padding the data to a 64-byte boundary and a data descriptor; flat
 * (Python's zipfile) with the sizes in the local header. Version, time, date
 * and attribute fields are taken from the model JSON member. The central
 * directory is the source's entries (raw) plus the new one last, then a
 * zip64 end record and locator when the source has them or the sizes need
 * them, and the end record (without the source's comment, if any).
 *
 * The file is written to a temporary file "<dir>/.<name>.XXXXXX" next to
 * `path`, flushed to disk and renamed onto `path`; the source is only read.
 * An existing `path` must be a regular file its owner may write: a symbolic
 * link is neither followed nor replaced, and a device, FIFO, socket, folder
 * or read-only file is never replaced (checked before writing and again
 * before the rename); the new
 * file keeps an existing file's mode (and, written by root, its owner), else
 * gets 0644. On failure no file is left behind and `path` is untouched.
 * Returns 0; SG_EINVALID (an unsafe `rel`; `path` is the source archive
 * itself, a symbolic link, read-only or not a regular file); SG_ELIMIT (`data` over 64
 * MiB, a name over the limits' max_name_len); SG_EIO (cannot create, write
 * or rename; reading the source); SG_ENOMEM.
 */
SG_API int sg_archive_write_with(sg_archive *a, const char *path, const char *rel, const void *data, size_t len,
                          sg_error *err);

/**
 * As sg_archive_write_with(), the same bytes streamed to the open descriptor
 * `fd` (not closed, not synced; e.g. standard output). A failure part way
 * leaves what was written. Returns as sg_archive_write_with() (SG_EINVALID
 * also when `fd` is the source archive).
 */
SG_API int sg_archive_write_with_fd(sg_archive *a, int fd, const char *rel, const void *data, size_t len,
                                    sg_error *err);

#ifdef __cplusplus
}
#endif

#endif
