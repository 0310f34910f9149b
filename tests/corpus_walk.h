/*
 * corpus_walk.h - walking the torch.export reference corpus (tests/corpus/cases and cases-2.6)
 * for the guard-language expressions it contains. Shared by tests/test_corpus.c
 * and bench/bench_parse.c; not part of the library (it prints nothing, but it
 * does file I/O and uses cJSON directly).
 *
 * A walk visits every case folder of every version directory in sorted order,
 * loads its case.json and guards.json, and hands each expression text to a
 * callback together with where it came from, the sympy `tree` torch recorded
 * for it (if any), and what torch's own run says about its value at the
 * example sizes (the "hints").
 */
#ifndef SG_TESTS_CORPUS_WALK_H
#define SG_TESTS_CORPUS_WALK_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "util/int.h"

/** The version folders of the corpus, in walk order. */
#define CORPUS_NVERSIONS 2
extern const char *const corpus_versions[CORPUS_NVERSIONS];

/**
 * The case folder names of `root`/`version` (e.g. SG_CORPUS, "cases"), sorted;
 * at most `cap` of them into `names` (each a new string: free()). Returns how
 * many, or -1 when the folder cannot be read.
 */
int corpus_case_names(const char *root, const char *version, char **names, size_t cap);

/**
 * Each case of every version under `root` that this build reads as a trace (sg_trace_load),
 * loaded and given to fn with its label ("cases/NAME"); the others are skipped (test_trace covers
 * them). Returns how many were given, or -1 when a version folder cannot be read.
 */
struct sg_trace;
int corpus_each_trace(const char *root, void (*fn)(const char *label, const struct sg_trace *t, void *ctx), void *ctx);

/** Where an expression was found. */
typedef enum corpus_origin {
    CORPUS_GUARD,       /**< shape_envs[].guards[].expr (has a tree) */
    CORPUS_DEFERRED,    /**< shape_envs[].deferred_runtime_asserts[*][].expr (has a tree) */
    CORPUS_REPLACEMENT, /**< shape_envs[].replacements values (has a tree); subject = replaced symbol */
    CORPUS_AXIOM,       /**< shape_envs[].axioms keys */
    CORPUS_DIVISIBLE,   /**< shape_envs[].divisible entries (has a tree) */
    CORPUS_RANGE,       /**< shape_envs[].var_to_range bounds ("oo" read as int_oo); subject = symbol */
    CORPUS_DIMCONS,     /**< dim_constraints[].add[] / add_equality[] (DimConstraints inputs, with trees) */
    CORPUS_SUMMARY,     /**< summary: guards, dim_constraints_add*, solve_*, produced_guards_python */
    CORPUS_MESSAGE,     /**< case.json: a guard quoted in torch's error message (Python printer form) */
    CORPUS_FIX,         /**< case.json: right-hand side of a suggested fix (`dy = 2*dx`) */
    CORPUS_ORIGIN_COUNT
} corpus_origin;

/** What torch's run says about the expression's value at the hints. */
typedef enum corpus_expect {
    CORPUS_EXPECT_NONE,  /**< nothing known (or symbols torch never gave hints) */
    CORPUS_EXPECT_TRUE,  /**< recorded as a guard or assertion: it held at the example sizes */
    CORPUS_EXPECT_FALSE, /**< an axiom recorded with value False */
    CORPUS_EXPECT_ZERO,  /**< a divisibility fact Mod(a, b): a % b == 0 at the example sizes */
    CORPUS_EXPECT_HINT   /**< a replacement: equals the hint of `subject` */
} corpus_expect;

/** One expression handed to the callback. Everything is borrowed for the call only. */
typedef struct corpus_expr {
    corpus_origin origin;
    const char *field;         /**< e.g. "shape_envs[0].guards", "summary.solve_dynamic_results" */
    size_t index;              /**< position within `field` */
    const char *text;          /**< NUL-terminated expression text */
    size_t len;                /**< strlen(text) */
    const cJSON *tree;         /**< torch's sympy tree, or NULL */
    const cJSON *shape_env;    /**< the ShapeEnv whose hints apply, or NULL when none does */
    const char *subject;       /**< replaced symbol or ranged symbol, or NULL */
    corpus_expect expect;
} corpus_expr;

/** One loaded case folder. */
typedef struct corpus_case {
    const char *version;  /**< "cases" or "cases-2.6" (static string) */
    char *name;           /**< folder name */
    char *dir;            /**< full path of the folder */
    cJSON *case_json;     /**< parsed case.json, or NULL when absent */
    cJSON *guards_json;   /**< parsed guards.json, or NULL when absent */
    bool note_only;       /**< guards.json holds only a "note" (no shape_envs) */
} corpus_case;

/**
 * Callbacks of a walk; any may be NULL. A non-zero return stops the walk and
 * is returned by corpus_walk(). `end_case` is called for every case whose
 * `begin_case` was called, even when the walk stops inside that case.
 */
typedef struct corpus_visitor {
    int (*begin_case)(const corpus_case *c, void *payload);
    int (*expr)(const corpus_case *c, const corpus_expr *x, void *payload);
    int (*end_case)(const corpus_case *c, void *payload);
    void *payload;
} corpus_visitor;

/** Short name of an origin: "guard", "deferred", ... */
const char *corpus_origin_name(corpus_origin o);

/**
 * Read the whole file `path` into a new NUL-terminated buffer `*out` (free
 * with free()), its length (without the NUL) in `*len`. Returns 0, or -1 with
 * errno set.
 */
int corpus_read_file(char **out, size_t *len, const char *path);

/**
 * Read and parse the JSON file `path`. Returns the tree (free with
 * cJSON_Delete()), or NULL with a one-line reason in `why` (`cap` bytes).
 */
cJSON *corpus_load_json(const char *path, char *why, size_t cap);

/**
 * The names of the case folders in `corpus_dir`/`version`, sorted bytewise,
 * into a new array `*out` of `*n` strings (free with corpus_free_names()).
 * A case folder is a sub-directory whose name does not start with '.'.
 * Returns 0, or -1 with errno set.
 */
int corpus_list_cases(char ***out, size_t *n, const char *corpus_dir, const char *version);

/**
 * How many `model.pt2` torch saved in `corpus_dir`/`version`, by the corpus's own record rather
 * than the files: the cases of its index.json whose outcome is "ok" and whose case.json has no
 * `pt2_error` (the export succeeded and torch.export.save wrote the archive). A walker that counts
 * the archives it found compares with this, so a lost or added archive fails it. Returns the count,
 * or -1 when index.json or a listed case.json cannot be read (the reason in `why`).
 */
int corpus_saved_archives(const char *corpus_dir, const char *version, char *why, size_t cap);

/**
 * Did torch.export.save fail on the case in folder `case_dir` (its case.json has `pt2_error`)? Its
 * model.pt2, when present, is what torch left behind: a partial archive, not one of the saved ones.
 */
bool corpus_save_failed(const char *case_dir);

/**
 * What `verify` must answer on the case's model.pt2, from what its loaded module did in torch: the
 * `expected_verify` of the case's expect.json (tools/expect_12.py ran the module at the bounds of
 * the declared ranges: "ok", "violations", "invalid_archive"), copied into `buf`; "ok" for a case
 * without expect.json (the original corpus, whose modules accept every declared boundary shape:
 * tests/data/boundaries); NULL when expect.json gives none (the module failed on its own example).
 */
const char *corpus_expected_verify(const char *case_dir, char *buf, size_t cap);

/**
 * The verdict a correct checker gives on the case, where it is not torch's own outcome: the
 * `expected_verdict` of the case's expect.json (tools/expect_12.py: brute force over the spec's
 * domain with the recorded guards, run-time confirmation in torch) when it differs from what torch's
 * export did (e.g. torch exported, silently narrowing a spec its own guards contradict), copied into
 * `buf`; NULL for a case without expect.json or where expect.json accepts torch's outcome.
 */
const char *corpus_expected_verdict_over_torch(const char *case_dir, char *buf, size_t cap);

/** How many cases `corpus_dir`/`version`/index.json lists, or -1 (the reason in `why`). */
int corpus_indexed_cases(const char *corpus_dir, const char *version, char *why, size_t cap);

/** Free an array from corpus_list_cases(). NULL-safe. */
void corpus_free_names(char **names, size_t n);

/**
 * Load case `name` of `version` (case.json and guards.json; either may be
 * absent). Returns 0, or -1 with a reason in `why` when a file exists but
 * cannot be read or parsed. `c` is always safe to pass to corpus_case_close().
 */
int corpus_case_open(corpus_case *c, const char *corpus_dir, const char *version, const char *name,
                     char *why, size_t cap);

/** Release what corpus_case_open() loaded. NULL-safe, idempotent. */
void corpus_case_close(corpus_case *c);

/** Visit every expression of one loaded case. Returns 0 or the first non-zero callback result. */
int corpus_case_walk(const corpus_case *c, const corpus_visitor *v);

/**
 * Walk every case of every version under `corpus_dir`. Returns 0, the first
 * non-zero callback result, or -1 when a directory or file cannot be read
 * (the reason in `why`).
 */
int corpus_walk(const char *corpus_dir, const corpus_visitor *v, char *why, size_t cap);

/** The ShapeEnv torch's summary describes (main_shape_env_index), or NULL. */
const cJSON *corpus_main_shape_env(const corpus_case *c);

/**
 * The hint (example value) of `name` in `shape_env`: looked up in
 * backed_var_to_val (or the table attribute_fallbacks names for it, torch 2.6's
 * var_to_val), then unbacked_var_to_val; a source name such as
 * `L['x'].size()[0]` is first mapped to its symbol through source_to_var.
 * Returns true and sets `*out` when found.
 */
bool corpus_hint(sg_int *out, const cJSON *shape_env, const char *name);

/**
 * An exact integer out of JSON: true when `j` is a number holding an integer
 * of magnitude at most 2^53 (beyond that cJSON's double is not exact), or a
 * string of decimal digits -- corpus_load_json() turns integer literals of
 * more than 15 digits into such strings so that they stay exact (sg__json_parse).
 */
bool corpus_json_int(const cJSON *j, sg_int *out);

#endif
