/*
 * trace_seeds.c - seed helper for the fuzz corpora (fuzz/make_seeds.sh): loads
 * each capture folder named on the command line with sg_trace_load_dir and
 * writes it as a single-file JSON trace into OUTDIR/<folder name>.json.
 * Usage: trace_seeds OUTDIR CASEDIR...  Exit status 0, or 1 when nothing was
 * written. Folders that do not load are reported on stderr and skipped.
 */
#include <stdio.h>
#include <string.h>

#include "shapegate/trace.h"

/* Write one case folder's trace as JSON; returns 1 when written, else 0. */
static int write_seed(const char *outdir, const char *dir)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    char *json = NULL, path[4096];
    const char *base = strrchr(dir, '/');
    FILE *f = NULL;
    int ok = 0;

    base = base ? base + 1 : dir;
    if (sg_trace_load_dir(&t, dir, &err) != 0 || sg_trace_to_json(&json, t, &err) != 0) {
        fprintf(stderr, "trace_seeds: %s: %s\n", dir, err.msg);
        goto cleanup;
    }
    snprintf(path, sizeof path, "%s/%s.json", outdir, base);
    f = fopen(path, "w");
    if (!f || fputs(json, f) == EOF)
        goto cleanup;
    ok = 1;
cleanup:
    if (f)
        fclose(f);
    sg_free(json);
    sg_trace_free(t);
    return ok;
}

/* See the file comment. */
int main(int argc, char **argv)
{
    int i, n = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: trace_seeds OUTDIR CASEDIR...\n");
        return 2;
    }
    for (i = 2; i < argc; i++)
        n += write_seed(argv[1], argv[i]);
    return n ? 0 : 1;
}
