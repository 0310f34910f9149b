/*
 * trace_seeds.c - seed helper for the fuzz corpora (fuzz/make_seeds.sh).
 *
 *   trace_seeds OUTDIR CASEDIR...            each capture folder (sg_trace_load_dir)
 *                                            as a JSON trace, OUTDIR/<folder>.json
 *   trace_seeds --models OUTDIR PT2 NAME ... each archive's default model JSON, as
 *                                            sg_graph_load parses it, OUTDIR/NAME.json
 *
 * Exit status 0, or 1 when nothing was written; inputs that do not load are
 * reported on stderr and skipped.
 */
#include <stdio.h>
#include <string.h>

#include "shapegate/archive.h"
#include "trace/trace.h"

/* Write `len` bytes to OUTDIR/NAME.json; returns 1 when written, else 0. */
static int put(const char *outdir, const char *name, const char *bytes, size_t len)
{
    char path[4096];
    FILE *f;
    int ok;

    snprintf(path, sizeof path, "%s/%s.json", outdir, name);
    if (!(f = fopen(path, "w")))
        return 0;
    ok = fwrite(bytes, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* Write the default model JSON of archive `pt2` (torch <= 2.6 floats quoted); 1 when written. */
static int write_model(const char *outdir, const char *pt2, const char *name)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    char *json = NULL;
    size_t len = 0;
    int ok = 0;

    if (sg_archive_open(&a, pt2, NULL, &err) != 0 || sg_archive_read_model(&json, &len, NULL, a, NULL, &err) != 0
        || sg_archive_json_quote_nonfinite(&json, &len, NULL, &err) != 0) {
        fprintf(stderr, "trace_seeds: %s: %s\n", pt2, err.msg);
        goto cleanup;
    }
    ok = put(outdir, name, json, len);
cleanup:
    sg_free(json);
    sg_archive_free(a);
    return ok;
}

/* Write one case folder's trace as JSON; returns 1 when written, else 0. */
static int write_seed(const char *outdir, const char *dir)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    char *json = NULL;
    const char *base = strrchr(dir, '/');
    int ok = 0;

    base = base ? base + 1 : dir;
    if (sg_trace_load_dir(&t, dir, &err) != 0 || sg_trace_to_json(&json, t, &err) != 0) {
        fprintf(stderr, "trace_seeds: %s: %s\n", dir, err.msg);
        goto cleanup;
    }
    ok = put(outdir, base, json, strlen(json));
cleanup:
    sg_free(json);
    sg_trace_free(t);
    return ok;
}

/* See the file comment. */
int main(int argc, char **argv)
{
    int i, n = 0;

    if (argc >= 2 && strcmp(argv[1], "--models") == 0) {
        if (argc < 5 || (argc - 3) % 2) {
            fprintf(stderr, "usage: trace_seeds --models OUTDIR PT2 NAME [PT2 NAME]...\n");
            return 2;
        }
        for (i = 3; i + 1 < argc; i += 2)
            n += write_model(argv[2], argv[i], argv[i + 1]);
        return n ? 0 : 1;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: trace_seeds OUTDIR CASEDIR...\n");
        return 2;
    }
    for (i = 2; i < argc; i++)
        n += write_seed(argv[1], argv[i]);
    return n ? 0 : 1;
}
