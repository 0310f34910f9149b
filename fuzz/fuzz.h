/*
 * fuzz.h - the bodies of shapegate's libFuzzer targets (fuzz/fuzz_*.c), shared
 * with tests/test_regress.c, which replays the committed crash inputs under
 * tests/data/regress/<target>/ through the same code in the ordinary suite.
 *
 * Each body takes arbitrary bytes, must never crash, hang or leak, and calls
 * abort() (after printing what broke) when a property it checks fails.
 * Compiled with -DSG_FUZZ_NO_MAIN the files omit LLVMFuzzerTestOneInput.
 */
#ifndef SG_FUZZ_H
#define SG_FUZZ_H
#include <stddef.h>
#include <stdint.h>

/** Parser round trip on `size` bytes of expression text. Returns 0. */
int sg_fuzz_expr(const uint8_t *data, size_t size);
/** Single-file JSON trace loader, and to_json/reload when it loads. Returns 0. */
int sg_fuzz_trace(const uint8_t *data, size_t size);
/** Archive reader on the bytes as a .pt2 file. Returns 0. */
int sg_fuzz_archive(const uint8_t *data, size_t size);
/** The check pipeline under a tight budget on the bytes as a JSON trace. Returns 0. */
int sg_fuzz_check(const uint8_t *data, size_t size);

/** Print a property failure to stderr and abort(). */
#define SG_FUZZ_FAIL(...)                                                   \
    do {                                                                    \
        fprintf(stderr, "fuzz property failed at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                       \
        fputc('\n', stderr);                                                \
        abort();                                                            \
    } while (0)

#endif
