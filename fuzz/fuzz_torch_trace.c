/*
 * fuzz_torch_trace.c - libFuzzer target for the TORCH_TRACE adapter
 * (sg_trace_load_torch_trace): the bytes are written as one log file (plain;
 * zlib reads gzip the same way) and loaded as export frame 0, then 1 and 2.
 * Properties: the load returns 0 or a documented code with a one-line message
 * naming the file, and leaves no trace on failure; a loaded trace writes as
 * JSON, reloads and writes the same bytes (sg_fuzz_trace_roundtrip).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "trace/trace.h"

int sg_fuzz_torch_trace(const uint8_t *data, size_t size)
{
    char path[] = "/tmp/sg_fuzz_tt_XXXXXX";
    int fd = mkstemp(path);
    unsigned frame;
    FILE *f;

    if (fd < 0 || !(f = fdopen(fd, "wb")))
        SG_FUZZ_FAIL("cannot make a temporary file");
    if ((size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        SG_FUZZ_FAIL("cannot write %s", path);
    for (frame = 0; frame < 3; frame++) {
        sg_error err = SG_ERROR_INIT;
        sg_trace *t = NULL;
        int rc = sg_trace_load_torch_trace(&t, path, frame, &err);
        if (rc != 0) {
            if (rc != SG_EIO && rc != SG_ELIMIT && rc != SG_EINVALID && rc != SG_EUNSUPPORTED && rc != SG_ENOMEM)
                SG_FUZZ_FAIL("sg_trace_load_torch_trace returned undocumented code %d (%s)", rc, err.msg);
            if (t)
                SG_FUZZ_FAIL("failed load (%d) left a trace", rc);
            if (!err.msg[0] || strchr(err.msg, '\n') || !strstr(err.msg, "/tmp/sg_fuzz_tt_"))
                SG_FUZZ_FAIL("error %d without a one-line message naming the file: '%s'", rc, err.msg);
            continue;
        }
        sg_fuzz_trace_roundtrip(t);
        sg_trace_free(t);
    }
    unlink(path);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_torch_trace)
