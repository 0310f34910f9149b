/*
 * bench_corpus.h - reading the corpus' case folders, shared by the benchmarks that
 * compare with torch's own time (header-only, bench/ only; needs cJSON and util/json.h).
 */
#ifndef SG_BENCH_CORPUS_H
#define SG_BENCH_CORPUS_H

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "util/json.h"

/* qsort order of strings. */
static inline int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* torch's own time for a case folder: case.json timing.dim_constraints_total_s + produce_guards_s; < 0 if absent. */
static inline double torch_seconds(const char *dir)
{
    char path[4096];
    cJSON *j = NULL, *t, *a, *b;
    double s = -1.0;
    snprintf(path, sizeof path, "%.4000s/case.json", dir);
    if (sg__json_load_file(&j, path, "case.json", NULL) != 0)
        return -1.0;
    t = cJSON_GetObjectItemCaseSensitive(j, "timing");
    a = t ? cJSON_GetObjectItemCaseSensitive(t, "dim_constraints_total_s") : NULL;
    b = t ? cJSON_GetObjectItemCaseSensitive(t, "produce_guards_s") : NULL;
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        s = a->valuedouble + b->valuedouble;
    cJSON_Delete(j);
    return s;
}

#endif
