/**
 * @file common.h
 * @brief What every shapegate module shares: the library version, memory
 *        release, and exact integers as a binding sees them (`sg_num`).
 *
 * Inside, shapegate computes with exact 128-bit integers and reports
 * SG_EOVERFLOW rather than wrap. At the API every integer is an `sg_num`:
 * an int64 when it fits, else a flag saying it does not, and always its
 * decimal text — so a C caller reads `value`, a binding reads `text`, and
 * nothing is rounded.
 */
#ifndef SHAPEGATE_COMMON_H
#define SHAPEGATE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shapegate/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the headers; sg_version() says the library's. */
#define SG_VERSION_MAJOR 0
#define SG_VERSION_MINOR 1
#define SG_VERSION_PATCH 0
#define SG_VERSION_STRING "0.1.0"

/** The library's version, "MAJOR.MINOR.PATCH" (static storage). */
SG_API const char *sg_version(void);

/** Release memory that a shapegate function handed over (`char **out` results and the like). NULL-safe. */
SG_API void sg_free(void *p);

/** Bytes of sg_num.text, NUL included: a sign and 39 digits, or "-int_oo". */
#define SG_NUM_TEXT_MAX 48

/**
 * An exact integer, or an infinite bound (torch's int_oo). `text` is always
 * exact: decimal ("-12"), or "int_oo" / "-int_oo"; `value` is the value when
 * `big` is false and `inf` is 0.
 */
typedef struct sg_num {
    int64_t value;              /**< the value, when it fits (not big) and is finite */
    bool big;                   /**< outside int64: only `text` holds it */
    int inf;                    /**< 0 finite, -1 -int_oo, +1 int_oo */
    char text[SG_NUM_TEXT_MAX]; /**< the decimal text, or "int_oo" / "-int_oo" */
} sg_num;

/** The sg_num of `v`. */
SG_API sg_num sg_num_of(int64_t v);

/**
 * Read `text` (NUL-terminated): a decimal integer with an optional '-'
 * (within shapegate's 128 bits), or "int_oo" / "oo" / "-int_oo" / "-oo".
 * Returns 0 and sets `*out`; SG_EOVERFLOW beyond 128 bits; SG_EINVALID otherwise.
 */
SG_API int sg_num_parse(sg_num *out, const char *text);

#ifdef __cplusplus
}
#endif

#endif
