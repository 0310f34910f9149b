/*
 * sha256.h - library-internal SHA-256 (FIPS 180-4): an incremental context
 * and a one-call helper giving the 64-character lowercase hex digest. Used to
 * record which model JSON `pack` verified. Not installed; never included by
 * cli/ or service/.
 */
#ifndef SG_SHA256_H
#define SG_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Bytes in a digest, and characters in its hex form (NUL not counted). */
#define SG_SHA256_LEN 32
#define SG_SHA256_HEX_LEN 64

/* Running state; plain data, no resources. */
typedef struct sg_sha256 {
    uint32_t h[8];
    uint64_t total;          /* bytes absorbed so far */
    unsigned char block[64]; /* pending partial block */
    size_t fill;             /* bytes in `block` */
} sg_sha256;

/* Start a new digest in `c`. */
void sg__sha256_init(sg_sha256 *c);

/* Absorb `n` bytes at `data` (`data` may be NULL when `n` is 0). */
void sg__sha256_update(sg_sha256 *c, const void *data, size_t n);

/* Finish: write the 32-byte digest into `out`; `c` must be re-initialised before reuse. */
void sg__sha256_final(sg_sha256 *c, unsigned char out[SG_SHA256_LEN]);

/* The digest of `n` bytes as 64 lowercase hex digits plus a NUL in `hex`. */
void sg__sha256_hex(char hex[SG_SHA256_HEX_LEN + 1], const void *data, size_t n);

#endif
