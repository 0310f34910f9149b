/*
 * fuzz.h - the bodies of shapegate's libFuzzer targets (fuzz/fuzz_*.c), shared
 * with tests/test_regress.c, which replays the committed crash inputs under
 * tests/data/regress/<target>/ through the same code in the ordinary suite.
 *
 * Each body takes arbitrary bytes, must never crash, hang or leak, and calls
 * abort() (after printing what broke) when a property it checks fails.
 * Compiled with -DSG_FUZZ_NO_MAIN the files omit LLVMFuzzerTestOneInput.
 * fuzz_spec.c and fuzz_dir.c read corpus files under SG_SOURCE_DIR.
 */
#ifndef SG_FUZZ_H
#define SG_FUZZ_H
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/** Parser round trip on `size` bytes of expression text. Returns 0. */
int sg_fuzz_expr(const uint8_t *data, size_t size);
/** Single-file JSON trace loader, and to_json/reload when it loads. Returns 0. */
int sg_fuzz_trace(const uint8_t *data, size_t size);
/** Archive reader on the bytes as a .pt2 file. Returns 0. */
int sg_fuzz_archive(const uint8_t *data, size_t size);
/** The graph model on the bytes as an ExportedProgram JSON, and the trace built from it. Returns 0. */
int sg_fuzz_graph(const uint8_t *data, size_t size);
/** The check pipeline under a tight budget on the bytes as a JSON trace. Returns 0. */
int sg_fuzz_check(const uint8_t *data, size_t size);
/** Spec overrides (sg_trace_with_dims) or a spec JSON (sg_trace_with_spec_json) on a
 *  fixed corpus trace; the first byte picks the operation and the trace. Returns 0. */
int sg_fuzz_spec(const uint8_t *data, size_t size);
/** The capture-folder loader on guards.json and case.json (the bytes split at the
 *  first NUL) written to a temporary folder. Returns 0. */
int sg_fuzz_dir(const uint8_t *data, size_t size);
/** The TORCH_TRACE adapter on the bytes as one log file, frames 0..2. Returns 0. */
int sg_fuzz_torch_trace(const uint8_t *data, size_t size);

/* ---- shared properties (fuzz/props.c) ---- */

/** sg_check `t` under a tight budget; the report's invariants and brute-force
 *  confirmation where the spec's domain is small (aborts on a broken property). */
void sg_fuzz_check_trace(const sg_trace *t);
/** Write `t` as JSON, reload, write again: the texts must be equal (aborts otherwise). */
void sg_fuzz_trace_roundtrip(const sg_trace *t);

/*
 * The libFuzzer entry point of a target whose body is `body`:
 * `SG_FUZZ_ENTRY(sg_fuzz_expr)` at the end of fuzz_expr.c. Nothing under
 * SG_FUZZ_NO_MAIN (the regression replay links every body into one program).
 */
#ifdef SG_FUZZ_NO_MAIN
#define SG_FUZZ_ENTRY(body)
#else
#define SG_FUZZ_ENTRY(body)                                                                        \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                  \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return body(data, size); }
#endif

/** Print a property failure to stderr and abort(). */
#define SG_FUZZ_FAIL(...)                                                   \
    do {                                                                    \
        fprintf(stderr, "fuzz property failed at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                       \
        fputc('\n', stderr);                                                \
        abort();                                                            \
    } while (0)

#endif
