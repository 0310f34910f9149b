/*
 * corpus_walk.c - the corpus walker of corpus_walk.h: lists the case folders of
 * tests/corpus/cases and cases-2.6, loads case.json and guards.json with cJSON, and hands
 * every expression text (guards, deferred asserts, replacements, axioms,
 * divisibility facts, range bounds, solver summary fields, guards quoted in
 * torch's error message, suggested-fix right-hand sides) to a callback.
 */
#define _POSIX_C_SOURCE 200809L

#include "corpus_walk.h"
#include "trace/trace.h"
#include "util/json.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const corpus_versions[CORPUS_NVERSIONS] = {"cases", "cases-2.6"};

/* The marker before a guard in a violation line, and the paragraph torch 2.6 glues to it. */
#define GUARD_MARKER "satisfy the generated guard "
#define SPECIALIZATION_QUIRK "Specializations unexpectedly required"

const char *corpus_origin_name(corpus_origin o)
{
    static const char *const names[CORPUS_ORIGIN_COUNT] = {
        "guard", "deferred", "replacement", "axiom", "divisible",
        "range", "dimcons", "summary", "message", "fix",
    };
    return (unsigned)o < CORPUS_ORIGIN_COUNT ? names[o] : "?";
}

int corpus_read_file(char **out, size_t *len, const char *path)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int rc = -1;

    *out = NULL;
    *len = 0;
    f = fopen(path, "rb");
    if (!f)
        goto cleanup;
    for (;;) {
        if (cap - n < 4096 + 1) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                errno = ENOMEM;
                goto cleanup;
            }
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (ferror(f)) {
        errno = EIO;
        goto cleanup;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
    rc = 0;
cleanup:
    free(buf);
    if (f)
        fclose(f);
    return rc;
}

/*
 * cJSON keeps numbers only as doubles, exact up to 2^53, but torch writes
 * larger integers (sys.maxsize in `Ne(s2, 9223372036854775807)`). The
 * library's sg__json_load_file() (util/json.h) turns every integer literal of
 * more than 15 digits into a string of its digits before parsing, which
 * corpus_json_int() reads exactly; it also bounds the file size and nesting.
 */
cJSON *corpus_load_json(const char *path, char *why, size_t cap)
{
    sg_error err = SG_ERROR_INIT;
    cJSON *json = NULL;

    if (sg__json_load_file(&json, path, path, &err) != 0) {
        snprintf(why, cap, "%s", err.msg);
        return NULL;
    }
    return json;
}

/* Sort helper for names. */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Join three path parts with '/'; returns a new string or NULL. */
static char *path_join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
    char *p = malloc(n);
    if (!p)
        return NULL;
    if (c)
        snprintf(p, n, "%s/%s/%s", a, b, c);
    else
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

void corpus_free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int corpus_list_cases(char ***out, size_t *nout, const char *corpus_dir, const char *version)
{
    char *dirpath = NULL, *sub = NULL;
    DIR *d = NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    struct dirent *ent;

    *out = NULL;
    *nout = 0;
    dirpath = path_join3(corpus_dir, version, NULL);
    if (!dirpath) {
        errno = ENOMEM;
        goto cleanup;
    }
    d = opendir(dirpath);
    if (!d)
        goto cleanup;
    while ((errno = 0, ent = readdir(d)) != NULL) {
        struct stat st;
        if (ent->d_name[0] == '.')
            continue;
        free(sub);
        sub = path_join3(dirpath, ent->d_name, NULL);
        if (!sub) {
            errno = ENOMEM;
            goto cleanup;
        }
        if (stat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) {
                errno = ENOMEM;
                goto cleanup;
            }
            names = nn;
            cap = ncap;
        }
        names[n] = strdup(ent->d_name);
        if (!names[n]) {
            errno = ENOMEM;
            goto cleanup;
        }
        n++;
    }
    if (errno != 0)
        goto cleanup;
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    *nout = n;
    names = NULL;
    n = 0;
    rc = 0;
cleanup:
    corpus_free_names(names, n);
    if (d)
        closedir(d);
    free(sub);
    free(dirpath);
    return rc;
}

void corpus_case_close(corpus_case *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->dir);
    cJSON_Delete(c->case_json);
    cJSON_Delete(c->guards_json);
    memset(c, 0, sizeof *c);
}

/* Load `dir`/`file` into `*out` when the file exists; 0, or -1 with `why` set. */
static int load_optional(cJSON **out, const char *dir, const char *file, char *why, size_t cap)
{
    char *path = path_join3(dir, file, NULL);
    struct stat st;
    int rc = 0;

    *out = NULL;
    if (!path) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    if (stat(path, &st) == 0) {
        *out = corpus_load_json(path, why, cap);
        if (!*out)
            rc = -1;
    }
    free(path);
    return rc;
}

int corpus_case_open(corpus_case *c, const char *corpus_dir, const char *version, const char *name,
                     char *why, size_t cap)
{
    size_t i;

    memset(c, 0, sizeof *c);
    for (i = 0; i < CORPUS_NVERSIONS; i++)
        if (strcmp(version, corpus_versions[i]) == 0)
            c->version = corpus_versions[i];
    if (!c->version) {
        snprintf(why, cap, "unknown corpus version folder '%s'", version);
        return -1;
    }
    c->name = strdup(name);
    c->dir = path_join3(corpus_dir, version, name);
    if (!c->name || !c->dir) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    if (load_optional(&c->case_json, c->dir, "case.json", why, cap) < 0)
        return -1;
    if (load_optional(&c->guards_json, c->dir, "guards.json", why, cap) < 0)
        return -1;
    c->note_only = c->guards_json && !cJSON_GetObjectItemCaseSensitive(c->guards_json, "shape_envs")
                   && cJSON_GetObjectItemCaseSensitive(c->guards_json, "note");
    return 0;
}

bool corpus_json_int(const cJSON *j, sg_int *out) { return sg__json_int(j, out); }

const cJSON *corpus_main_shape_env(const corpus_case *c)
{
    const cJSON *envs, *idx;
    sg_int i = 0;

    if (!c->guards_json)
        return NULL;
    envs = cJSON_GetObjectItemCaseSensitive(c->guards_json, "shape_envs");
    if (!cJSON_IsArray(envs))
        return NULL;
    idx = cJSON_GetObjectItemCaseSensitive(c->guards_json, "main_shape_env_index");
    if (!corpus_json_int(idx, &i))
        i = 0;
    if (i < 0 || i >= cJSON_GetArraySize(envs))
        return NULL;
    return cJSON_GetArrayItem(envs, (int)i);
}

/* Look `name` up in the hint tables of `se` (no source mapping). */
static bool hint_of_symbol(sg_int *out, const cJSON *se, const char *name)
{
    const char *tables[3] = {"backed_var_to_val", NULL, "unbacked_var_to_val"};
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(se, "attribute_fallbacks");
    const cJSON *alt = cJSON_GetObjectItemCaseSensitive(fb, "backed_var_to_val");

    /* torch 2.6 keeps the backed hints under the older name var_to_val. */
    if (cJSON_IsString(alt))
        tables[1] = alt->valuestring;
    for (size_t i = 0; i < 3; i++) {
        const cJSON *t;
        if (!tables[i])
            continue;
        t = cJSON_GetObjectItemCaseSensitive(se, tables[i]);
        if (cJSON_IsObject(t) && corpus_json_int(cJSON_GetObjectItemCaseSensitive(t, name), out))
            return true;
    }
    return false;
}

bool corpus_hint(sg_int *out, const cJSON *shape_env, const char *name)
{
    const cJSON *s2v, *sym;

    if (!shape_env || !name)
        return false;
    if (hint_of_symbol(out, shape_env, name))
        return true;
    s2v = cJSON_GetObjectItemCaseSensitive(shape_env, "source_to_var");
    sym = cJSON_GetObjectItemCaseSensitive(s2v, name);
    return cJSON_IsString(sym) && hint_of_symbol(out, shape_env, sym->valuestring);
}

/* ---- emitting ----------------------------------------------------------------- */

/* The state of one case's walk. */
typedef struct walk {
    const corpus_case *c;
    const corpus_visitor *v;
    char field[128];
} walk;

/* Hand one expression to the callback. */
static int emit(walk *w, corpus_origin origin, size_t index, const char *text, size_t len,
                const cJSON *tree, const cJSON *se, const char *subject, corpus_expect expect)
{
    corpus_expr x;
    char *copy = NULL;
    int rc;

    if (!w->v->expr)
        return 0;
    /* The callback gets a NUL-terminated string even for a slice of a message line. */
    if (text[len] != '\0') {
        copy = malloc(len + 1);
        if (!copy)
            return -1;
        memcpy(copy, text, len);
        copy[len] = '\0';
        text = copy;
    }
    x.origin = origin;
    x.field = w->field;
    x.index = index;
    x.text = text;
    x.len = len;
    x.tree = cJSON_IsArray(tree) ? tree : NULL;
    x.shape_env = se;
    x.subject = subject;
    x.expect = expect;
    rc = w->v->expr(w->c, &x, w->v->payload);
    free(copy);
    return rc;
}

/* Emit an entry that is either a string or an object {"expr": text, "tree": ...}. */
static int emit_entry(walk *w, corpus_origin origin, size_t index, const cJSON *entry,
                      const cJSON *se, const char *subject, corpus_expect expect)
{
    const cJSON *tree = NULL;

    if (cJSON_IsObject(entry)) {
        tree = cJSON_GetObjectItemCaseSensitive(entry, "tree");
        entry = cJSON_GetObjectItemCaseSensitive(entry, "expr");
    }
    if (!cJSON_IsString(entry))
        return 0;
    return emit(w, origin, index, entry->valuestring, strlen(entry->valuestring), tree, se, subject,
                expect);
}

/* Emit every string found (recursively) in the values of `j`. */
static int emit_strings(walk *w, corpus_origin origin, size_t *index, const cJSON *j,
                        const cJSON *se, corpus_expect expect)
{
    const cJSON *it;
    int rc;

    if (cJSON_IsString(j))
        return emit(w, origin, (*index)++, j->valuestring, strlen(j->valuestring), NULL, se, NULL,
                    expect);
    if (!cJSON_IsArray(j) && !cJSON_IsObject(j))
        return 0;
    cJSON_ArrayForEach(it, j) {
        if ((rc = emit_strings(w, origin, index, it, se, expect)) != 0)
            return rc;
    }
    return 0;
}

/* Every expression of one ShapeEnv dump. */
static int walk_shape_env(walk *w, const cJSON *se, int k)
{
    const cJSON *arr, *it, *sub;
    size_t i;
    int rc;

    snprintf(w->field, sizeof w->field, "shape_envs[%d].guards", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "guards");
    cJSON_ArrayForEach(it, arr) {
        if ((rc = emit_entry(w, CORPUS_GUARD, i++, it, se, NULL, CORPUS_EXPECT_TRUE)) != 0)
            return rc;
    }

    /* {symbol or "null": [{expr, tree, msg}, ...]} */
    snprintf(w->field, sizeof w->field, "shape_envs[%d].deferred_runtime_asserts", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "deferred_runtime_asserts");
    cJSON_ArrayForEach(sub, arr) {
        cJSON_ArrayForEach(it, sub) {
            if ((rc = emit_entry(w, CORPUS_DEFERRED, i++, it, se, sub->string, CORPUS_EXPECT_TRUE))
                != 0)
                return rc;
        }
    }

    snprintf(w->field, sizeof w->field, "shape_envs[%d].replacements", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "replacements");
    cJSON_ArrayForEach(it, arr) {
        if ((rc = emit_entry(w, CORPUS_REPLACEMENT, i++, it, se, it->string, CORPUS_EXPECT_HINT))
            != 0)
            return rc;
    }

    /* {expr: "True" | "False"} */
    snprintf(w->field, sizeof w->field, "shape_envs[%d].axioms", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "axioms");
    cJSON_ArrayForEach(it, arr) {
        corpus_expect e = CORPUS_EXPECT_NONE;
        if (cJSON_IsString(it) && strcmp(it->valuestring, "True") == 0)
            e = CORPUS_EXPECT_TRUE;
        else if (cJSON_IsString(it) && strcmp(it->valuestring, "False") == 0)
            e = CORPUS_EXPECT_FALSE;
        if (!it->string)
            continue;
        if ((rc = emit(w, CORPUS_AXIOM, i++, it->string, strlen(it->string), NULL, se, NULL, e))
            != 0)
            return rc;
    }

    snprintf(w->field, sizeof w->field, "shape_envs[%d].divisible", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "divisible");
    cJSON_ArrayForEach(it, arr) {
        if ((rc = emit_entry(w, CORPUS_DIVISIBLE, i++, it, se, NULL, CORPUS_EXPECT_ZERO)) != 0)
            return rc;
    }

    /* {symbol: [lo, hi]}, bounds are integers or "oo" / "-oo" (torch's int_oo). */
    snprintf(w->field, sizeof w->field, "shape_envs[%d].var_to_range", k);
    i = 0;
    arr = cJSON_GetObjectItemCaseSensitive(se, "var_to_range");
    cJSON_ArrayForEach(sub, arr) {
        cJSON_ArrayForEach(it, sub) {
            char buf[SG_INT_STRLEN + 8];
            sg_int v;
            if (cJSON_IsString(it) && strcmp(it->valuestring, "oo") == 0)
                snprintf(buf, sizeof buf, "int_oo");
            else if (cJSON_IsString(it) && strcmp(it->valuestring, "-oo") == 0)
                snprintf(buf, sizeof buf, "-int_oo");
            else if (cJSON_IsString(it))
                snprintf(buf, sizeof buf, "%.40s", it->valuestring);
            else if (corpus_json_int(it, &v))
                sg_int_format(buf, v);
            else
                continue;
            if ((rc = emit(w, CORPUS_RANGE, i++, buf, strlen(buf), NULL, se, sub->string,
                           CORPUS_EXPECT_NONE)) != 0)
                return rc;
        }
    }
    return 0;
}

/*
 * The recorded DimConstraints calls: add(expr) inputs were true at the hints
 * (from produce_guards, or rewritten inside solve); add_equality(source, expr)
 * gives a source's value, often a static size with no hint, so no expectation.
 */
static int walk_dim_constraints(walk *w, const cJSON *dcs, const cJSON *se)
{
    const cJSON *dc, *it;
    int rc, k = 0;

    cJSON_ArrayForEach(dc, dcs) {
        size_t i = 0;
        snprintf(w->field, sizeof w->field, "dim_constraints[%d].add", k);
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(dc, "add")) {
            if ((rc = emit_entry(w, CORPUS_DIMCONS, i++, it, se, NULL, CORPUS_EXPECT_TRUE)) != 0)
                return rc;
        }
        i = 0;
        snprintf(w->field, sizeof w->field, "dim_constraints[%d].add_equality", k);
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(dc, "add_equality")) {
            if ((rc = emit_entry(w, CORPUS_DIMCONS, i++, it, se, NULL, CORPUS_EXPECT_NONE)) != 0)
                return rc;
        }
        k++;
    }
    return 0;
}

/* The solver-oriented summary: fields that hold expressions (sympy or Python text). */
static int walk_summary(walk *w, const cJSON *summary, const cJSON *se)
{
    /* Guards and DimConstraints.add inputs were true at the hints; solver results
     * mention new roots (_dx) and static sources that have no hints. */
    static const struct {
        const char *key;
        corpus_expect expect;
    } fields[] = {
        {"guards", CORPUS_EXPECT_TRUE},
        {"dim_constraints_add", CORPUS_EXPECT_TRUE},
        {"dim_constraints_add_equality", CORPUS_EXPECT_TRUE},
        {"produced_guards_python", CORPUS_EXPECT_TRUE},
        {"solve_static_results", CORPUS_EXPECT_NONE},
        {"solve_dynamic_results", CORPUS_EXPECT_NONE},
        {"solve_multivariate_inequalities", CORPUS_EXPECT_NONE},
        {"solve_congruences", CORPUS_EXPECT_NONE},
        {"solve_substitutions", CORPUS_EXPECT_NONE},
        {"forced_specializations", CORPUS_EXPECT_NONE},
    };
    int rc;

    for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        size_t i = 0;
        snprintf(w->field, sizeof w->field, "summary.%s", fields[f].key);
        rc = emit_strings(w, CORPUS_SUMMARY, &i,
                          cJSON_GetObjectItemCaseSensitive(summary, fields[f].key), se,
                          fields[f].expect);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/*
 * The guards torch quotes in a violation line: the rest of every line after
 * "satisfy the generated guard ", cut before a glued "Specializations
 * unexpectedly required" paragraph, trailing blanks and a final "." dropped.
 */
static int walk_message(walk *w, const char *msg, const cJSON *se)
{
    const char *line = msg;
    size_t i = 0;
    int rc;

    while (line && *line) {
        const char *eol = strchr(line, '\n');
        const char *end = eol ? eol : line + strlen(line);
        const char *m = strstr(line, GUARD_MARKER);
        if (m && m < end) {
            const char *g = m + strlen(GUARD_MARKER);
            const char *q = strstr(g, SPECIALIZATION_QUIRK);
            const char *e = (q && q < end) ? q : end;
            while (e > g && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t'))
                e--;
            if (e > g && e[-1] == '.')
                e--;
            if (e > g && (rc = emit(w, CORPUS_MESSAGE, i++, g, (size_t)(e - g), NULL, se, NULL,
                                    se ? CORPUS_EXPECT_TRUE : CORPUS_EXPECT_NONE)) != 0)
                return rc;
        }
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* Right-hand sides of "NAME = RHS" fix lines, except range fixes "NAME = Dim(...)". */
static int walk_fixes(walk *w, const cJSON *fixes)
{
    const cJSON *it;
    size_t i = 0;
    int rc;

    cJSON_ArrayForEach(it, fixes) {
        const char *s, *eq;
        if (!cJSON_IsString(it))
            continue;
        s = it->valuestring;
        eq = strstr(s, " = ");
        if (!eq)
            continue;
        eq += 3;
        while (*eq == ' ')
            eq++;
        if (strncmp(eq, "Dim(", 4) == 0 || *eq == '\0')
            continue;
        if ((rc = emit(w, CORPUS_FIX, i++, eq, strlen(eq), NULL, NULL, NULL, CORPUS_EXPECT_NONE))
            != 0)
            return rc;
    }
    return 0;
}

/* Messages and fixes of case.json, including those of refine-and-retry rounds. */
static int walk_case_json(walk *w, const cJSON *cj, const cJSON *main_se)
{
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(cj, "error_message");
    const cJSON *refined = cJSON_GetObjectItemCaseSensitive(cj, "refined");
    const cJSON *round;
    int rc, k = 0;

    snprintf(w->field, sizeof w->field, "case.error_message");
    if (cJSON_IsString(msg) && (rc = walk_message(w, msg->valuestring, main_se)) != 0)
        return rc;
    snprintf(w->field, sizeof w->field, "case.suggested_fixes");
    if ((rc = walk_fixes(w, cJSON_GetObjectItemCaseSensitive(cj, "suggested_fixes"))) != 0)
        return rc;
    /* A retry is another export with another ShapeEnv: no hints apply. */
    cJSON_ArrayForEach(round, cJSON_GetObjectItemCaseSensitive(refined, "rounds")) {
        msg = cJSON_GetObjectItemCaseSensitive(round, "error_message");
        snprintf(w->field, sizeof w->field, "case.refined.rounds[%d].error_message", k);
        if (cJSON_IsString(msg) && (rc = walk_message(w, msg->valuestring, NULL)) != 0)
            return rc;
        snprintf(w->field, sizeof w->field, "case.refined.rounds[%d].suggested_fixes", k);
        if ((rc = walk_fixes(w, cJSON_GetObjectItemCaseSensitive(round, "suggested_fixes"))) != 0)
            return rc;
        k++;
    }
    return 0;
}

int corpus_case_walk(const corpus_case *c, const corpus_visitor *v)
{
    walk w;
    const cJSON *envs, *se, *main_se;
    int rc, k = 0;

    memset(&w, 0, sizeof w);
    w.c = c;
    w.v = v;
    main_se = corpus_main_shape_env(c);
    if (c->guards_json) {
        envs = cJSON_GetObjectItemCaseSensitive(c->guards_json, "shape_envs");
        cJSON_ArrayForEach(se, envs) {
            if ((rc = walk_shape_env(&w, se, k++)) != 0)
                return rc;
        }
        rc = walk_dim_constraints(
            &w, cJSON_GetObjectItemCaseSensitive(c->guards_json, "dim_constraints"), main_se);
        if (rc != 0)
            return rc;
        rc = walk_summary(&w, cJSON_GetObjectItemCaseSensitive(c->guards_json, "summary"),
                          main_se);
        if (rc != 0)
            return rc;
    }
    if (c->case_json && (rc = walk_case_json(&w, c->case_json, main_se)) != 0)
        return rc;
    return 0;
}

int corpus_walk(const char *corpus_dir, const corpus_visitor *v, char *why, size_t cap)
{
    char **names = NULL;
    size_t n = 0;
    corpus_case c;
    int rc = 0;

    memset(&c, 0, sizeof c);
    for (size_t vi = 0; vi < CORPUS_NVERSIONS && rc == 0; vi++) {
        if (corpus_list_cases(&names, &n, corpus_dir, corpus_versions[vi]) < 0) {
            snprintf(why, cap, "%s/%s: %s", corpus_dir, corpus_versions[vi], strerror(errno));
            return -1;
        }
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (corpus_case_open(&c, corpus_dir, corpus_versions[vi], names[i], why, cap) < 0) {
                rc = -1;
                break;
            }
            if (v->begin_case)
                rc = v->begin_case(&c, v->payload);
            if (rc == 0)
                rc = corpus_case_walk(&c, v);
            if (v->end_case) {
                int rc2 = v->end_case(&c, v->payload);
                if (rc == 0)
                    rc = rc2;
            }
            corpus_case_close(&c);
        }
        corpus_free_names(names, n);
        names = NULL;
        n = 0;
    }
    corpus_case_close(&c);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int corpus_case_names(const char *root, const char *version, char **names, size_t cap)
{
    char path[4096];
    size_t n = 0;
    DIR *d;
    struct dirent *e;
    snprintf(path, sizeof path, "%s/%s", root, version);
    if (!(d = opendir(path)))
        return -1;
    while ((e = readdir(d)) && n < cap)
        if (e->d_name[0] != '.' && !strchr(e->d_name, '.') && (names[n] = strdup(e->d_name)) != NULL)
            n++;
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    return (int)n;
}

int corpus_saved_archives(const char *corpus_dir, const char *version, char *why, size_t cap)
{
    char path[4096];
    cJSON *index, *e;
    int n = 0;

    snprintf(path, sizeof path, "%s/%s/index.json", corpus_dir, version);
    if (!(index = corpus_load_json(path, why, cap)))
        return -1;
    cJSON_ArrayForEach(e, index) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        const char *outcome = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "outcome"));
        cJSON *cj;
        if (!name || !outcome || strcmp(outcome, "ok") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s/%s/case.json", corpus_dir, version, name);
        if (!(cj = corpus_load_json(path, why, cap))) {
            n = -1;
            break;
        }
        if (!cJSON_GetObjectItemCaseSensitive(cj, "pt2_error"))
            n++;
        cJSON_Delete(cj);
    }
    cJSON_Delete(index);
    return n;
}

bool corpus_save_failed(const char *case_dir)
{
    char path[4096], why[256];
    cJSON *cj;
    bool failed;

    snprintf(path, sizeof path, "%s/case.json", case_dir);
    if (!(cj = corpus_load_json(path, why, sizeof why)))
        return false;
    failed = cJSON_GetObjectItemCaseSensitive(cj, "pt2_error") != NULL;
    cJSON_Delete(cj);
    return failed;
}

const char *corpus_expected_verify(const char *case_dir, char *buf, size_t cap)
{
    char path[4096], why[256];
    cJSON *e;
    const char *v;

    snprintf(path, sizeof path, "%s/expect.json", case_dir);
    if (access(path, F_OK) != 0) {
        snprintf(buf, cap, "ok");
        return buf;
    }
    if (!(e = corpus_load_json(path, why, sizeof why)))
        return NULL;
    v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "expected_verify"));
    if (v)
        snprintf(buf, cap, "%s", v);
    cJSON_Delete(e);
    return v ? buf : NULL;
}

const char *corpus_expected_verdict_over_torch(const char *case_dir, char *buf, size_t cap)
{
    char path[4096], why[256];
    cJSON *e;
    const char *v, *torch;
    const char *res = NULL;

    snprintf(path, sizeof path, "%s/expect.json", case_dir);
    if (access(path, F_OK) != 0)
        return NULL;
    if (!(e = corpus_load_json(path, why, sizeof why)))
        return NULL;
    v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "expected_verdict"));
    torch = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "torch_outcome"));
    /* torch exported: its outcome says "ok"; a correct checker refutes the spec ("ok" is not one of
     * the verdicts expect.json accepts) */
    if (v && torch && strcmp(torch, "ok") == 0 && strcmp(v, "ok") != 0) {
        const cJSON *acc = cJSON_GetObjectItemCaseSensitive(e, "accept"), *a;
        bool ok_accepted = false;
        cJSON_ArrayForEach(a, acc)
            ok_accepted |= cJSON_IsString(a) && strcmp(a->valuestring, "ok") == 0;
        if (ok_accepted)
            v = NULL;
    }
    if (v && torch && strcmp(torch, "ok") == 0 && strcmp(v, "ok") != 0) {
        snprintf(buf, cap, "%s", v);
        res = buf;
    }
    cJSON_Delete(e);
    return res;
}

int corpus_indexed_cases(const char *corpus_dir, const char *version, char *why, size_t cap)
{
    char path[4096];
    cJSON *index;
    int n;

    snprintf(path, sizeof path, "%s/%s/index.json", corpus_dir, version);
    if (!(index = corpus_load_json(path, why, cap)))
        return -1;
    n = cJSON_IsArray(index) ? cJSON_GetArraySize(index) : -1;
    cJSON_Delete(index);
    return n;
}

int corpus_each_trace(const char *root, void (*fn)(const char *label, const struct sg_trace *t, void *ctx), void *ctx)
{
    size_t v;
    int count = 0;
    for (v = 0; v < CORPUS_NVERSIONS; v++) {
        char *names[512];
        int n = corpus_case_names(root, corpus_versions[v], names, 512), k;
        if (n < 0)
            return -1;
        for (k = 0; k < n; k++) {
            char dir[4096], label[600];
            sg_trace *t = NULL;
            sg_error err = SG_ERROR_INIT;
            snprintf(dir, sizeof dir, "%s/%s/%s", root, corpus_versions[v], names[k]);
            snprintf(label, sizeof label, "%s/%s", corpus_versions[v], names[k]);
            free(names[k]);
            if (sg_trace_load(&t, dir, &err) != 0)
                continue;
            fn(label, t, ctx);
            count++;
            sg_trace_free(t);
        }
    }
    return count;
}
