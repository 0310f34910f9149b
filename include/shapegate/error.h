/**
 * @file error.h
 * @brief Status codes and the error record every shapegate call reports through.
 *
 * Functions that can fail return an `int`: 0 on success, one of the negative
 * `SG_E*` codes below on failure. Details go into a caller-owned `sg_error`
 * (never a global), so two threads with two error records never interfere.
 * Messages are one line of plain English and name what failed and where.
 */
#ifndef SHAPEGATE_ERROR_H
#define SHAPEGATE_ERROR_H

#include <stddef.h>

#include "shapegate/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes. Results (proved / refuted / unknown) are never errors. */
enum {
    SG_OK = 0,
    SG_ERROR = -1,        /**< anything not listed below (internal, solver misuse) */
    SG_EINVALID = -2,     /**< malformed input: syntax, type, schema */
    SG_ELIMIT = -3,       /**< input or output over a configured size or depth limit */
    SG_ENOMEM = -4,       /**< an allocation failed */
    SG_EUNDEFINED = -5,   /**< evaluation where Python would raise (division by zero, nan) */
    SG_EOVERFLOW = -6,    /**< a value outside the 128-bit range shapegate computes in */
    SG_EUNSUPPORTED = -7, /**< well-formed torch input that shapegate does not handle */
    SG_EIO = -8           /**< a file could not be read or written */
};

/** Longest message kept, including the terminating NUL; longer ones are cut. */
#define SG_ERROR_MSG_MAX 256

/**
 * An error record, owned by the caller. `code` is 0 while nothing failed.
 * `col` is the 1-based byte column of the offending input when the error is
 * about a position in a text (0 otherwise).
 */
typedef struct sg_error {
    int code;
    int col;
    char msg[SG_ERROR_MSG_MAX];
} sg_error;

/** A zeroed error record, for `sg_error err = SG_ERROR_INIT;`. */
#define SG_ERROR_INIT {0, 0, {0}}

/** Reset `err` to "no error". NULL-safe. */
SG_API void sg_error_clear(sg_error *err);

/** A short constant name for a status code: "ok", "invalid input", ... */
SG_API const char *sg_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
