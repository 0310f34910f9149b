/*
 * json.h - library-internal JSON helpers over cJSON: bounded reading of a
 * file, parsing with size and nesting limits and exact big integers, the same
 * parse into a read-only arena document (sg__json_doc, for large inputs), safe
 * typed access to object members, and a small writer for JSON text into an
 * sg_buf. Not installed; never included by cli/ or service/.
 *
 * Big integers. cJSON keeps numbers as doubles, exact only up to 2^53, but
 * torch writes 9223372036854775807 (sys.maxsize) in guards and ranges. So
 * sg__json_parse() hands every integer literal of more than 15 digits (outside
 * strings) to cJSON as a marked string and turns it into a cJSON_Raw node of
 * its digits afterwards; sg__json_int() reads an integer exactly from a number
 * node, such a raw node or a decimal string, and sg__json_put_value() writes a
 * raw node back as the number it was. Code that reads integers must use
 * sg__json_int(), never `valuedouble`.
 *
 * Thread safety: only per-call state is used; cJSON_GetErrorPtr() (a process
 * global) is never called.
 */
#ifndef SG_JSON_H
#define SG_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "shapegate/common.h"
#include "shapegate/error.h"
#include "util/util.h"

/** Default limits: bytes of one JSON text (and file), nesting of arrays and objects. */
#define SG_JSON_MAX_BYTES ((size_t)64 << 20)
#define SG_JSON_MAX_DEPTH 512

/*
 * Read the whole file `path` into a new NUL-terminated buffer `*out` (free
 * with sg_free()) of `*len` bytes (the NUL not counted). `what` names the file
 * in messages (e.g. "case_dir/guards.json"). Returns 0, SG_EIO (cannot open or
 * read; the message names the file and strerror), SG_ELIMIT (more than `max`
 * bytes) or SG_ENOMEM.
 */
int sg__read_file(char **out, size_t *len, const char *path, size_t max, const char *what,
                  sg_error *err);

/*
 * Parse `len` bytes of JSON text (need not be NUL-terminated) into `*out`
 * (free with cJSON_Delete()). The whole text must be one JSON value, with
 * nothing but white space after it. Integer literals of more than 15 digits
 * become cJSON_Raw nodes holding their digits (see above): sg__json_int()
 * reads them, sg__json_put_value() writes them back as numbers. `what` prefixes messages.
 * Returns 0; SG_ELIMIT when the text is over `max_bytes` or nested deeper than
 * `max_depth` (the message gives the byte offset); SG_EINVALID for a syntax
 * error ("what: invalid JSON at byte 123 (line 4, column 9)"); SG_ENOMEM.
 */
int sg__json_parse(cJSON **out, const char *text, size_t len, size_t max_bytes, int max_depth,
                   const char *what, sg_error *err);

/* sg__read_file() then sg__json_parse() with the default limits. */
int sg__json_load_file(cJSON **out, const char *path, const char *what, sg_error *err);

/* ---- read-only documents ------------------------------------------------------ */

/*
 * A parsed JSON document whose tree lives in one arena: every node and string
 * is carved from a few large blocks the document owns, and sg__json_doc_free()
 * releases them all at once. Loading a model-sized capture (hundreds of
 * thousands of nodes) spent as long in cJSON's per-node malloc and free as in
 * reading the text; a document costs a handful of allocations.
 *
 * The tree is built by shapegate's own parser (util/json.c), node for node what
 * sg__json_parse() gives for the same text: the same cJSON layout, types, keys
 * (duplicates kept, in order: the first wins for sg__json_get), strings,
 * numbers (valuedouble and valueint as cJSON sets them), big integer literals
 * as cJSON_Raw nodes, and the same acceptance and errors. So every reader of
 * cJSON trees (sg__json_get, cJSON_GetArraySize, ->child / ->next,
 * sg__json_int, sg__json_put_value, cJSON_Print*) works on it unchanged.
 *
 * Ownership: the tree is read-only and belongs to the document. Never pass it
 * or any node of it to cJSON_Delete(), and never change it with cJSON's
 * mutating functions (cJSON_Add*, cJSON_Detach*, cJSON_Delete*, cJSON_Replace*,
 * cJSON_Insert*, cJSON_SetValuestring, ...): they would free or realloc arena
 * memory. Pointers into the tree (nodes, keys, strings) are valid until
 * sg__json_doc_free(); copy what must outlive it. Code that needs a mutable
 * tree uses sg__json_parse().
 */
typedef struct sg__json_doc sg__json_doc;

/*
 * Parse `len` bytes of JSON text (need not be NUL-terminated) into a new
 * document `*doc_out` (free with sg__json_doc_free()) whose root is `*root_out`.
 * Same contract as sg__json_parse(): the whole text is one JSON value with
 * nothing but white space after it; `what` prefixes messages. Returns 0;
 * SG_ELIMIT over `max_bytes` or nested deeper than `max_depth`; SG_EINVALID for
 * a syntax error (message, byte, line and column as sg__json_parse() reports
 * them); SG_ENOMEM. On failure both outputs are NULL.
 */
int sg__json_doc_parse(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                       size_t max_bytes, int max_depth, const char *what, sg_error *err);

/* A member whose value a reader never looks at: key `key` of the objects at nesting depth `depth`
 * (1: the top-level object; 2: an object inside it or inside a top-level array; ...). Only there:
 * a user's argument named "summary", deeper in a capture, is kept. Lists end with {0, NULL}. */
typedef struct sg__json_drop {
    int depth;
    const char *key;
} sg__json_drop;

/* sg__json_doc_parse() with the values of the members in `drop` read and not kept (as
 * sg__json_doc_load_file() below). */
int sg__json_doc_parse_drop(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                            size_t max_bytes, int max_depth, const sg__json_drop *drop, const char *what,
                            sg_error *err);

/*
 * sg__read_file() then sg__json_doc_parse() with the default limits (as sg__json_load_file()). The
 * values of the members listed in `drop` (NULL: none) are read and checked as any other but not kept: each becomes a null, its nodes' memory reused (a torch capture's
 * guards.json is half source locations and summaries no reader looks at; building them cost eq1000
 * a tenth of its run in first touches of memory).
 */
int sg__json_doc_load_file(sg__json_doc **doc_out, const cJSON **root_out, const char *path,
                           const sg__json_drop *drop, const char *what, sg_error *err);

/* Free `doc` and its whole tree. NULL-safe. */
void sg__json_doc_free(sg__json_doc *doc);

/* Member `key` of object `obj` (case-sensitive), or NULL when `obj` is not an
 * object or has no such member. NULL-safe. */
const cJSON *sg__json_get(const cJSON *obj, const char *key);

/* True when `j` is absent (NULL) or JSON null. */
bool sg__json_is_none(const cJSON *j);

/* The string of a string node, or NULL for anything else. NULL-safe. */
const char *sg__json_str(const cJSON *j);

/*
 * An exact integer from `j`: a number node holding an integer of magnitude at
 * most 2^53, or a string node of a decimal integer (optional '-', digits) that
 * fits an sg_int. Returns true and sets `*out`; false for anything else.
 */
bool sg__json_int(const cJSON *j, sg_int *out);

/* The array of a JSON list, or of {"__tuple__": [...]} (how a spec writes a tuple); NULL for
 * anything else. */
const cJSON *sg__json_seq(const cJSON *j);

/* Is `s` a non-empty string of decimal digits only (a dict spec's dim index key)? NULL: false. */
bool sg__json_index_key(const char *s);

/* ---- writing ---------------------------------------------------------------- */

/* Append `s` as a JSON string literal (quotes and escapes added, as cJSON's printer escapes: \" \\
 * \b \f \n \r \t, other bytes below 0x20 as \u00XX, the rest as they are). */
int sg__json_put_str(sg_buf *b, const char *s);

/* Append `s` as a JSON string literal, or `null` when `s` is NULL. */
int sg__json_put_str_or_null(sg_buf *b, const char *s);

/* Append `lead` (a separator and key as the writer spells them: `, "source": ` or `,"source":`),
 * then `s` as a JSON string literal, or `null` when `s` is NULL: one string member. */
int sg__json_put_field(sg_buf *b, const char *lead, const char *s);

/* Append `, "key": "s"` when `s` is not NULL (an optional member); nothing otherwise. */
int sg__json_put_opt_member(sg_buf *b, const char *key, const char *s);

/* Append `v` as an exact JSON integer literal (any magnitude sg_int holds). */
int sg__json_put_int(sg_buf *b, sg_int v);

/*
 * Append `j` as compact JSON (no white space; `", "` and `": "` are not used).
 * Numbers that are integers of magnitude at most 2^53 are written as integer
 * literals, other finite numbers with 17 significant digits, non-finite ones
 * as null. Fails with SG_ELIMIT past SG_JSON_MAX_DEPTH levels.
 */
int sg__json_put_value(sg_buf *b, const cJSON *j);

#endif
