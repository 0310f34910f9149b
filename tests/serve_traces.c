/*
 * serve_traces.c - write corpus capture folders as single-file JSON traces
 * (sg_trace_to_json), the bodies tests/test_serve.py sends to /v1/check.
 *
 *     serve_traces OUTDIR CASEDIR...   -> OUTDIR/<basename of CASEDIR>.json
 */
#include <stdio.h>
#include <string.h>

#include "shapegate/shapegate.h"

int main(int argc, char **argv)
{
    int i, failed = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: serve_traces OUTDIR CASEDIR...\n");
        return 2;
    }
    for (i = 2; i < argc; i++) {
        sg_error err = SG_ERROR_INIT;
        sg_trace *t = NULL;
        char *json = NULL, path[4096];
        const char *base = strrchr(argv[i], '/');
        FILE *f;

        base = base && base[1] ? base + 1 : argv[i];
        if (sg_trace_load(&t, argv[i], &err) != 0 || sg_trace_to_json(&json, t, &err) != 0) {
            fprintf(stderr, "serve_traces: %s: %s\n", argv[i], err.msg);
            failed++;
        } else {
            snprintf(path, sizeof path, "%s/%s.json", argv[1], base);
            if (!(f = fopen(path, "w")) || fputs(json, f) < 0 || fclose(f) != 0) {
                fprintf(stderr, "serve_traces: cannot write %s\n", path);
                failed++;
            }
        }
        sg_free(json);
        sg_trace_free(t);
    }
    return failed ? 1 : 0;
}
