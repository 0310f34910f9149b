/*
 * fuzz_dir.c - libFuzzer target for the capture-folder loader (sg_trace_load_dir).
 *
 * The bytes are split at the first NUL: what comes before is written as
 * guards.json, what comes after as case.json (no NUL: no case.json at all), in
 * a new temporary folder that is removed afterwards. Properties: the load
 * returns 0 or a documented code with a one-line message naming a file, and
 * leaves no trace on failure; a loaded trace writes as JSON, reloads and writes
 * the same bytes (sg_fuzz_trace_roundtrip).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "trace/trace.h"

/* Write `len` bytes to `dir`/`name`; aborts when it cannot (the fuzzer's own failure). */
static void put_file(const char *dir, const char *name, const uint8_t *data, size_t len)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        SG_FUZZ_FAIL("cannot write %s", path);
}

/* Remove `dir`/`name` when it exists. */
static void drop_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* Load the two files as a capture folder (see the file comment). Returns 0. */
int sg_fuzz_dir(const uint8_t *data, size_t size)
{
    char dir[] = "/tmp/sg_fuzz_dir_XXXXXX";
    const uint8_t *nul = memchr(data, 0, size);
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    int rc;

    if (!mkdtemp(dir))
        SG_FUZZ_FAIL("cannot make a temporary folder");
    put_file(dir, "guards.json", data, nul ? (size_t)(nul - data) : size);
    if (nul)
        put_file(dir, "case.json", nul + 1, size - (size_t)(nul - data) - 1);
    rc = sg_trace_load_dir(&t, dir, &err);
    if (rc != 0) {
        if (rc != SG_EIO && rc != SG_ELIMIT && rc != SG_EINVALID && rc != SG_EUNSUPPORTED && rc != SG_ENOMEM)
            SG_FUZZ_FAIL("sg_trace_load_dir returned undocumented code %d (%s)", rc, err.msg);
        if (t)
            SG_FUZZ_FAIL("failed load (%d) left a trace", rc);
        if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, ".json"))
            SG_FUZZ_FAIL("error %d without a one-line message naming the file: '%s'", rc, err.msg);
        goto cleanup;
    }
    sg_fuzz_trace_roundtrip(t);
cleanup:
    sg_trace_free(t);
    drop_file(dir, "guards.json");
    drop_file(dir, "case.json");
    rmdir(dir);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_dir)
