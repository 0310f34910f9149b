/**
 * @file common.h
 * @brief Things every shapegate module shares: the integer type, memory release,
 *        and the allocation-failure hook used by tests.
 */
#ifndef SHAPEGATE_COMMON_H
#define SHAPEGATE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The integer shapegate computes with: signed 128 bits. Python integers are
 * unbounded; every operation on `sg_int` checks for overflow and reports
 * `SG_EOVERFLOW` instead of wrapping, so a result is either exact or an error.
 */
__extension__ typedef __int128 sg_int;
__extension__ typedef unsigned __int128 sg_uint;

/** Largest and smallest `sg_int`. */
#define SG_INT_MAX ((sg_int)(((sg_uint)1 << 127) - 1))
#define SG_INT_MIN (-SG_INT_MAX - 1)

/** Longest decimal rendering of an `sg_int`, with sign and NUL. */
#define SG_INT_STRLEN 42

/**
 * Write `v` in decimal into `buf` (at least SG_INT_STRLEN bytes).
 * Returns `buf`.
 */
char *sg_int_format(char buf[SG_INT_STRLEN], sg_int v);

/**
 * Parse a decimal integer (optional leading '-', digits only) of `len` bytes.
 * Returns 0 and sets `*out`, or SG_EOVERFLOW when it does not fit, or
 * SG_EINVALID when the text is not a decimal integer.
 */
int sg_int_parse(sg_int *out, const char *text, size_t len);

/** Release memory that a shapegate function handed over (`char **out` results). NULL-safe. */
void sg_free(void *p);

/**
 * Allocation-failure injection for tests (see docs/robustness.md): after
 * `n` more successful allocations through shapegate's allocator, every
 * further one fails until this is called again. `n < 0` turns injection off
 * (the default). Process-global; for single-threaded test programs only.
 */
void sg_alloc_fail_after(long n);

/** Number of allocations shapegate's allocator has made since start-up. */
unsigned long sg_alloc_count(void);

#ifdef __cplusplus
}
#endif

#endif
