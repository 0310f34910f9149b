/*
 * test_json.c - the arena document parser of util/json.h (sg__json_doc_parse) against the cJSON
 * based sg__json_parse, differentially: every JSON file under tests/ (corpus cases, data,
 * regress, attacks), truncations and byte mutations of them, hand-written malformed texts (bad
 * escapes and surrogates, deep nesting, big integers, leading zeros, trailing text, empty text,
 * NUL bytes) and random token soups. For each text both parsers must agree on the status and
 * message, and on success on the tree, node by node: type, key, string, valuedouble (bitwise, or
 * both NaN), valueint, child / next / prev links. Then allocation failures at every allocation
 * of a document parse, and the file loader.
 *
 * SG_JSON_DIFF_FULL=1 in the environment multiplies the truncations, mutations and random texts
 * (a longer run for when the parser changes); SG_JSON_DIFF_SEED=N draws other random texts;
 * SG_JSON_DIFF_EXTRA=file1:file2 adds files.
 */
#define _XOPEN_SOURCE 700

#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/json.h"
#include "test.h"

/* Totals over the run, printed at the end. */
static unsigned long n_texts, n_ok, n_err, n_diff;
static int scale = 1; /* SG_JSON_DIFF_FULL: 8 */

/* ---- comparing ------------------------------------------------------------------- */

/* A small deterministic generator (xorshift64*), so a failure reproduces. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/*
 * Compare the trees `a` (cJSON) and `b` (document) node by node, siblings included; `where`
 * names the place for the message. Returns true when they are the same.
 */
static bool same_tree(const cJSON *a, const cJSON *b, const char *label, const char *where)
{
    for (; a || b; a = a->next, b = b->next) {
        bool nan_a, nan_b;
        if (!a || !b) {
            fprintf(stderr, "%s: %s: one list is longer\n", label, where);
            return false;
        }
        nan_a = isnan(a->valuedouble);
        nan_b = isnan(b->valuedouble);
        if (a->type != b->type || !same_str(a->string, b->string)
            || !same_str(a->valuestring, b->valuestring) || a->valueint != b->valueint
            || (nan_a != nan_b)
            || (!nan_a && memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0)) {
            fprintf(stderr,
                    "%s: %s: node differs: type %d/%d key %s/%s string %.40s/%.40s int %d/%d "
                    "double %.17g/%.17g\n",
                    label, where, a->type, b->type, a->string ? a->string : "-",
                    b->string ? b->string : "-", a->valuestring ? a->valuestring : "-",
                    b->valuestring ? b->valuestring : "-", a->valueint, b->valueint, a->valuedouble,
                    b->valuedouble);
            return false;
        }
        /* cJSON's links: the first child's prev is the last child, the last's next NULL */
        if (!a->child != !b->child
            || (a->child && (!a->child->prev != !b->child->prev || (a->child->prev == a->child)
                                                                      != (b->child->prev == b->child)))) {
            fprintf(stderr, "%s: %s: child links differ\n", label, where);
            return false;
        }
        if (a->child) {
            const cJSON *la = a->child, *lb = b->child;
            while (la->next)
                la = la->next;
            while (lb->next)
                lb = lb->next;
            if (a->child->prev != la || b->child->prev != lb) {
                fprintf(stderr, "%s: %s: first child's prev is not the last child\n", label, where);
                return false;
            }
            if (!same_tree(a->child, b->child, label, a->string ? a->string : "[]"))
                return false;
        }
        if ((a->next && a->next->prev != a) || (b->next && b->next->prev != b)) {
            fprintf(stderr, "%s: %s: prev links differ\n", label, where);
            return false;
        }
    }
    return true;
}

/* What the differential drops: "k" in the objects at odd depths up to 7, "a" at depths 1 and 2. */
static const sg__json_drop drop_test[] = {{1, "k"}, {3, "k"}, {5, "k"}, {7, "k"}, {1, "a"}, {2, "a"}, {0, NULL}};

static bool drops(int depth, const char *key)
{
    return (strcmp(key, "k") == 0 && depth % 2 == 1 && depth <= 7) || (strcmp(key, "a") == 0 && depth <= 2);
}

/* cJSON's tree `a` (an object or array at nesting depth `depth`) with the values drop_test drops
 * made nulls, as a parse dropping them gives it. */
static void null_dropped(cJSON *a, int depth)
{
    cJSON *c;
    for (c = a ? a->child : NULL; c; c = c->next) {
        if (cJSON_IsObject(a) && c->string && drops(depth, c->string)) {
            cJSON *n = cJSON_CreateNull();
            if (n && !(n->string = strdup(c->string))) {
                cJSON_Delete(n);
                n = NULL;
            }
            if (n && cJSON_ReplaceItemViaPointer(a, c, n))
                c = n;
            else
                cJSON_Delete(n);
            continue;
        }
        null_dropped(c, depth + 1);
    }
}

/* `text` parsed dropping drop_test's members (their values skipped without nodes, util/json.c
 * skip_value): the status and message cJSON's parse gives, and cJSON's tree with those values null. */
static bool drop_alike(const char *text, size_t len, size_t max_bytes, int max_depth, const char *label)
{
    sg_error e = SG_ERROR_INIT, e1 = SG_ERROR_INIT;
    sg__json_doc *doc = NULL;
    const cJSON *b = NULL;
    cJSON *want = NULL;
    bool same = true;
    int r1 = sg__json_parse(&want, text, len, max_bytes, max_depth, "t", &e1);
    int r = sg__json_doc_parse_drop(&doc, &b, text, len, max_bytes, max_depth, drop_test, "t", &e);
    if (r != r1 || (r && strcmp(e1.msg, e.msg) != 0)) {
        fprintf(stderr, "%s: dropping: status %d (%s) vs %d (%s)\n", label, r1, r1 ? e1.msg : "", r, r ? e.msg : "");
        same = false;
    } else if (r == 0) {
        null_dropped(want, 1);
        same = same_tree(want, b, label, "(root, dropping)");
    }
    cJSON_Delete(want);
    sg__json_doc_free(doc);
    return same;
}

/* drop_alike on `text` and on `{"k": text}` (the whole text a dropped value). */
static bool drop_both(const char *text, size_t len, size_t max_bytes, int max_depth, const char *label)
{
    char *w = malloc(len + 8);
    bool same = drop_alike(text, len, max_bytes, max_depth, label);
    if (w) {
        memcpy(w, "{\"k\":", 5);
        memcpy(w + 5, text, len);
        w[len + 5] = '}';
        same = drop_alike(w, len + 6, max_bytes + 6, max_depth, label) && same;
        free(w);
    }
    return same;
}

/*
 * Parse `len` bytes of `text` with both parsers (limits `max_bytes`, `max_depth`) and compare.
 * Returns true when they agree; prints the first differences.
 */
static bool diff_text(const char *text, size_t len, size_t max_bytes, int max_depth, const char *label)
{
    sg_error e1 = SG_ERROR_INIT, e2 = SG_ERROR_INIT;
    cJSON *a = NULL;
    sg__json_doc *doc = (sg__json_doc *)&doc; /* must be set to NULL on failure */
    const cJSON *b = (const cJSON *)&b;
    int r1, r2;
    bool same = true;

    n_texts++;
    r1 = sg__json_parse(&a, text, len, max_bytes, max_depth, "t", &e1);
    r2 = sg__json_doc_parse(&doc, &b, text, len, max_bytes, max_depth, "t", &e2);
    if (r1 != r2) {
        fprintf(stderr, "%s: status %d (%s) vs %d (%s)\n", label, r1, r1 ? e1.msg : "",
                r2, r2 ? e2.msg : "");
        same = false;
    } else if (r1 != 0) {
        n_err++;
        if (strcmp(e1.msg, e2.msg) != 0) {
            fprintf(stderr, "%s: message \"%s\" vs \"%s\"\n", label, e1.msg, e2.msg);
            same = false;
        }
        if (doc || b) {
            fprintf(stderr, "%s: failed parse left outputs\n", label);
            same = false;
        }
    } else {
        n_ok++;
        if (!doc || !b || !same_tree(a, b, label, "(root)"))
            same = false;
    }
    if (!drop_both(text, len, max_bytes, max_depth, label))
        same = false;
    cJSON_Delete(a);
    sg__json_doc_free(r2 == 0 ? doc : NULL);
    if (!same) {
        n_diff++;
        if (n_diff <= 20)
            fprintf(stderr, "%s: text (%zu bytes): %.*s\n", label, len, (int)(len < 200 ? len : 200), text);
    }
    return same;
}

/* diff_text with the default limits. */
static bool diff_default(const char *text, size_t len, const char *label)
{
    return diff_text(text, len, SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, label);
}

/* ---- the files ------------------------------------------------------------------- */

/* The JSON files found under tests/, collected by nftw(). */
static char **files;
static size_t nfiles, capfiles;

static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    size_t n = strlen(path);
    (void)st;
    (void)ftw;
    if (flag == FTW_F && n > 5 && strcmp(path + n - 5, ".json") == 0) {
        if (nfiles == capfiles) {
            capfiles = capfiles ? 2 * capfiles : 256;
            files = realloc(files, capfiles * sizeof *files);
        }
        files[nfiles++] = strdup(path);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read `path` whole (sg_free the result), NULL on failure. */
static char *slurp(const char *path, size_t *len)
{
    sg_error err = SG_ERROR_INIT;
    char *text = NULL;
    if (sg__read_file(&text, len, path, SG_JSON_MAX_BYTES, path, &err) != 0)
        return NULL;
    return text;
}

/* Interesting bytes for mutations: structure, escapes, number parts, white space, NUL. */
static const char mut_bytes[] = "\"\\[]{},:0123456789-+.eEu/bfnrtxa \t\n\r\x01\xef\xbb";

/* Truncations and mutations of one file's text. */
static void vary(const char *text, size_t len, const char *path)
{
    char label[600];
    char *buf = malloc(len + 2);
    size_t ntrunc, nmut, i;

    if (!buf)
        return;
    /* truncations: every offset of a small file, else spread ones and random ones */
    ntrunc = len <= 300u * scale ? len : (len > 65536 ? 12 : 48) * (size_t)scale;
    for (i = 0; i < ntrunc; i++) {
        size_t at = len <= 300u * scale ? i : (i % 2 ? rnd_below(len) : i * len / ntrunc);
        snprintf(label, sizeof label, "%s[:%zu]", path, at);
        memcpy(buf, text, at);
        diff_default(buf, at, label);
    }
    /* one-byte changes: replace, insert, delete (a few per file; more for small ones) */
    nmut = (len > 65536 ? 4 : 24) * (size_t)scale;
    for (i = 0; i < nmut && len > 0; i++) {
        size_t at = rnd_below(len), n = len;
        char c = mut_bytes[rnd_below(sizeof mut_bytes)]; /* the final NUL included */
        memcpy(buf, text, len);
        switch (i % 3) {
        case 0:
            buf[at] = c;
            break;
        case 1:
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = c;
            n = len + 1;
            break;
        default:
            memmove(buf + at, buf + at + 1, len - at - 1);
            n = len - 1;
            break;
        }
        snprintf(label, sizeof label, "%s mutation %zu at %zu (%d)", path, i, at, (int)(unsigned char)c);
        diff_default(buf, n, label);
    }
    free(buf);
}

/* Every JSON file under tests/ (and SG_JSON_DIFF_EXTRA): whole, truncated, mutated. */
static void test_files(void)
{
    const char *extra = getenv("SG_JSON_DIFF_EXTRA");
    unsigned long diff0 = n_diff, texts0 = n_texts;
    size_t i, whole_ok = 0;

    CHECK(nftw(SG_SOURCE_DIR "/tests", collect, 16, FTW_PHYS) == 0);
    if (extra) {
        char *list = strdup(extra), *save = NULL;
        for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save))
            collect(p, NULL, FTW_F, NULL);
        free(list);
    }
    qsort(files, nfiles, sizeof *files, cmp_str);
    CHECK_MSG(nfiles > 1000, "only %zu JSON files under tests/", nfiles);
    for (i = 0; i < nfiles; i++) {
        size_t len = 0;
        char *text = slurp(files[i], &len);
        CHECK_MSG(text != NULL, "cannot read %s", files[i]);
        if (!text)
            continue;
        if (diff_default(text, len, files[i])) {
            sg__json_doc *doc = NULL;
            const cJSON *root = NULL;
            sg_error err = SG_ERROR_INIT;
            whole_ok += sg__json_doc_parse(&doc, &root, text, len, SG_JSON_MAX_BYTES,
                                           SG_JSON_MAX_DEPTH, "t", &err) == 0;
            sg__json_doc_free(doc);
        }
        vary(text, len, files[i]);
        sg_free(text);
    }
    CHECK_EQ_INT(n_diff - diff0, 0);
    printf("files: %zu JSON files (%zu parse), %lu texts with truncations and mutations\n", nfiles,
           whole_ok, n_texts - texts0);
    for (i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
}

/* ---- hand-written texts ------------------------------------------------------------ */

/* A text given with its length (NUL bytes inside). */
#define T(s) {s, sizeof(s) - 1}

static const struct {
    const char *text;
    size_t len;
} cases[] = {
    /* empty, white space, nothing after the value */
    T(""), T(" "), T(" \t\r\n"), T("\x01"), T(" \x01 "), T("\0"), T("1 "), T("1 x"), T("{} {}"),
    T("[] \x01"), T("null\0"), T("1\0 "), T("\"a\"\"b\""), T("truex"), T("nul"), T("nulll"),
    T("tru"), T("fals"), T("false"), T("true"), T("null"), T("[null,true,false]"), T("NULL"),
    /* byte order marks */
    T("\xEF\xBB\xBF" "1"), T("\xEF\xBB\xBF" "12"), T("\xEF\xBB\xBF" "[1]"), T("\xEF\xBB\xBF"),
    T("\xEF\xBB\xBF "), T(" \xEF\xBB\xBF" "12"), T("\xEF\xBB" "12345"),
    /* numbers: leading zeros, signs, fractions, exponents, extremes */
    T("0"), T("-0"), T("00"), T("007"), T("-007"), T("01.5"), T("1."), T("-.5"), T(".5"), T("-"),
    T("--1"), T("+1"), T("1e"), T("1e+"), T("1e-"), T("1e5"), T("1E+5"), T("1e-5"), T("1.e3"),
    T("1.5e"), T("1.5e+x"), T("-."), T("-.e1"), T("1e999"), T("-1e999"), T("1e-999"),
    T("2147483647"), T("2147483648"), T("-2147483648"), T("-2147483649"), T("123456789012345"),
    T("999999999999999"), T("1234567890123456"), T("-1234567890123456"), T("0.1"),
    T("0.30000000000000004"), T("4.9e-324"), T("1.7976931348623157e308"), T("[1,-0,0.0,-0.0]"),
    T("1-2"), T("1+2"), T("1.2.3"), T("1e5e5"), T("0x10"), T("1_000"), T("[1 2]"), T("[-]"),
    T("1.0000000000000000000000000000000000000000000000000000000000000000000000000001"),
    T("0.00000000000000000000000000000000000000000000000000000000000000000000001e70"),
    T("123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"),
    /* big integer literals: values, keys, after signs, next to fractions, marked strings */
    T("12345678901234567890"), T("-12345678901234567890"), T("9223372036854775807"),
    T("[9223372036854775807, -9223372036854775808]"), T("00000000000000000001"),
    T("12345678901234567890.5"), T("12345678901234567890e2"), T("12345678901234567890e"),
    T("12345678901234567890E+"), T("12345678901234567890-1"), T("[12345678901234567890-1]"),
    T("[12345678901234567890+1]"), T("{\"a\": 12345678901234567890}"),
    T("{12345678901234567890: 1}"), T("{-12345678901234567890: 1}"), T("{123: 1}"),
    T("{12345678901234567890: 1} x"), T("{12345678901234567890: 1, \"b\": 12345678901234567890} x"),
    T("{12345678901234567890: 1, \"b\": x}"), T("[{12345678901234567890: [12345678901234567890]}] ]"),
    T("{\"a\": 1, 12345678901234567890 : 2, \"a\": 3}"), T("{12345678901234567890}"),
    T("{12345678901234567890:}"), T("[\"\\u000112345\", 12345678901234567890]"),
    T("[\"\\u000112345\", 1]"), T("[\"\\u0001-12345\", 12345678901234567890]"),
    T("[\"\\u0001-\", \"\\u0001\", \"\\u00011x\", \"\\u000112\\u00003\", 12345678901234567890]"),
    T("{\"\\u000112\": \"\\u000112\", \"k\": -12345678901234567890}"),
    T("[1234567890123456789012345678901234567890]"), T("--12345678901234567890"),
    T("1-12345678901234567890"), T("1e5+12345678901234567890"), T("true12345678901234567890"),
    T("[\"a\\\\\", \"[[[12345678901234567890\\\"]]\", 12345678901234567890, \"\\\\\"]"),
    T("\"12345678901234567890"), T("[\"x\" 12345678901234567890]"), T("12345678901234567890 12345678901234567890"),
    /* strings: escapes, surrogates, control bytes, NUL, unterminated */
    T("\"\""), T("\"a"), T("\""), T("\"\\"), T("\"\\\""), T("\"a\\\"]"), T("[\"a\\\"]"),
    T("\"\\b\\f\\n\\r\\t\\\"\\\\\\/\""), T("\"\\x\""), T("\"\\a\""), T("\"\\'\""), T("\"\\0\""),
    T("\"\\u\""), T("\"\\u1\""), T("\"\\u12\""), T("\"\\u123\""), T("\"\\u1234\""),
    T("\"\\u0041\\u00e9\\u20AC\""), T("\"\\uZZZZab\""), T("\"\\u12G4\""), T("\"\\u0000x\""),
    T("\"\\uD83D\\uDE00\""), T("\"\\uD83D\""), T("\"\\uD83Dx\""), T("\"\\uD83D\\u0041\""),
    T("\"\\uD83D\\uD83D\""), T("\"\\uDE00\""), T("\"\\uDBFF\\uDFFF\""), T("\"\\uD800\\uDC00\""),
    T("\"\\uD800\\\\uDC00\""), T("\"\\uD800\\uDC0\""), T("\"\\uD800\\uDC\""), T("\"\\uD800\\u\""),
    T("\"\\uD800\\"), T("\"\\uABC\\\\\""), T("\"\\uAB\\\\\\\\\""), T("\"\\u\\\"abc\""),
    T("\"\\u\\\\\\\\x\""), T("\"a\0b\""), T("[\"a\0b\", \"c\"]"), T("\"\x01\x1f\x7f\xff\""),
    T("\"\xc3\xa9\""), T("\"\xed\xa0\x80\""), T("\"tab\there\""), T("\"new\nline\""),
    /* arrays and objects: commas, colons, truncations, NUL and control bytes between tokens */
    T("["), T("[ "), T("[1"), T("[1 "), T("[1,"), T("[1, "), T("[,1]"), T("[1,]"), T("[1,,2]"),
    T("[]"), T("[ ]"), T("[\x01]"), T("[1,\x01 2]"), T("[\0 1\0]"), T("[1\0,\0 2]"), T("]"),
    T("{"), T("{ "), T("{\"a\""), T("{\"a\" "), T("{\"a\":"), T("{\"a\": "), T("{\"a\":1"),
    T("{\"a\":1,"), T("{\"a\":1, "), T("{\"a\":1,}"), T("{,}"), T("{}"), T("{ }"), T("{a:1}"),
    T("{\"a\" 1}"), T("{\"a\"::1}"), T("{\"a\":1 \"b\":2}"), T("{\"a\":1}}"), T("{\"a\":1]"),
    T("[1}"), T("{\"a\":1,\"a\":2,\"a\":3}"), T("{\"\":1}"), T("{\"a\\u0000b\":1}"), T("}"),
    T("{\0\"a\"\0:\0 1\0}"), T("{\"a\":[{\"b\":[{\"c\":{}}]}]}"), T("[[[[[[]]]]]]"), T("[[[[[["),
    T("{\"a\":{\"b\":{\"c\":"), T("[\"a\",{\"b\":[1,2,{\"c\":null}]}]"), T("['a']"), T("{'a':1}"),
    T("[1]\n\n  x"), T("[1]\r\n"), T("\n\n  [1,\n  2,\n  x]"), T("[1,\n2,\n\n  ]"),
    T("[1, 2,, 3]"), T("[12345678901234567890,\n x]"), T("[\"\\q\", 12345678901234567890]"),
    T("[12345678901234567890, \"\\q\"]"), T("[\"\\q\"] 12345678901234567890"),
    T("{12345678901234567890: 1, \"x\": \"\\q\"}"),
};

/* Each hand-written text with the default limits, and with depth and size limits around it. */
static void test_cases(void)
{
    unsigned long diff0 = n_diff;
    char label[64];
    size_t i;
    int depths[] = {0, 1, 2, 3, 512};

    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(label, sizeof label, "case %zu", i);
        diff_default(cases[i].text, cases[i].len, label);
        for (size_t d = 0; d < sizeof depths / sizeof *depths; d++)
            diff_text(cases[i].text, cases[i].len, SG_JSON_MAX_BYTES, depths[d], label);
        if (cases[i].len > 0)
            diff_text(cases[i].text, cases[i].len, cases[i].len - 1, 8, label);
        diff_text(cases[i].text, cases[i].len, cases[i].len, 8, label);
    }
    /* no text at all */
    {
        sg_error e1 = SG_ERROR_INIT, e2 = SG_ERROR_INIT;
        cJSON *a = NULL;
        sg__json_doc *doc = NULL;
        const cJSON *b = NULL;
        CHECK_EQ_INT(sg__json_parse(&a, NULL, 3, 10, 8, NULL, &e1), SG_EINVALID);
        CHECK_EQ_INT(sg__json_doc_parse(&doc, &b, NULL, 3, 10, 8, NULL, &e2), SG_EINVALID);
        CHECK_EQ_STR(e1.msg, e2.msg);
        CHECK(doc == NULL && b == NULL);
    }
    CHECK_EQ_INT(n_diff - diff0, 0);
    printf("cases: %zu hand-written texts\n", sizeof cases / sizeof *cases);
}

/* Nesting: every depth around the limits, cJSON's own 1000 under a larger limit, brackets in
 * strings and after the value, unbalanced closers. */
static void test_depth(void)
{
    unsigned long diff0 = n_diff;
    static char buf[2000 * 5 + 16];
    char label[64];
    int limits[] = {1, 2, 5, 64, 512, 999, 1000, 1001, 2000};
    size_t li, n;

    for (li = 0; li < sizeof limits / sizeof *limits; li++) {
        int lim = limits[li];
        size_t opens[] = {(size_t)lim - 1, (size_t)lim, (size_t)lim + 1, 999, 1000, 1001, 1500};
        for (size_t oi = 0; oi < sizeof opens / sizeof *opens; oi++) {
            size_t k = opens[oi];
            if (k == 0 || k > 2000)
                continue;
            for (int form = 0; form < 4; form++) {
                /* 0: [[..]]; 1: [{"a":[{"a": .. }]}]; 2: [[..]] then " [[["; 3: [[.. never closed */
                n = 0;
                for (size_t j = 0; j < k; j++) {
                    if (form == 1 && j % 2) {
                        memcpy(buf + n, "{\"a\":", 5);
                        n += 5;
                    } else {
                        buf[n++] = '[';
                    }
                }
                if (form != 3)
                    for (size_t j = k; j-- > 0;)
                        buf[n++] = form == 1 && j % 2 ? '}' : ']';
                if (form == 2) {
                    memcpy(buf + n, " [[[", 4);
                    n += 4;
                }
                snprintf(label, sizeof label, "depth %zu form %d limit %d", k, form, lim);
                diff_text(buf, n, SG_JSON_MAX_BYTES, lim, label);
            }
        }
    }
    /* closers first, then openers: the depth check counts the whole text */
    n = 0;
    for (int j = 0; j < 600; j++)
        buf[n++] = ']';
    for (int j = 0; j < 1000; j++)
        buf[n++] = '[';
    diff_text(buf, n, SG_JSON_MAX_BYTES, 512, "closers then openers");
    buf[0] = '1';
    diff_text(buf, n, SG_JSON_MAX_BYTES, 512, "value, closers, openers");
    /* brackets inside strings count for nothing */
    buf[0] = '"';
    memset(buf + 1, '[', 999);
    buf[1000] = '"';
    diff_text(buf, 1001, SG_JSON_MAX_BYTES, 4, "brackets in a string");
    CHECK_EQ_INT(n_diff - diff0, 0);
}

/* Random token soups: mostly-valid JSON with noise, short, many of them. */
static void test_random(void)
{
    static const char *const toks[] = {
        "[", "]", "{", "}", ",", ":", " ", "\n", "\t", "\0", "\x01", "null", "true", "false", "nul",
        "0", "1", "-", "-0", "12", "1.5", "1e5", "1e", "1.", ".5", "e", "E", "+", "00",
        "12345678901234567", "-12345678901234567890", "123456789012345", "1234567890123456",
        "\"", "\"a\"", "\"k\"", "\"\"", "\"\\", "\\", "\\n", "\\u", "\\u00", "\\u0041", "\\uD83D",
        "\\uDE00", "\\uD83D\\uDE00", "\\u0001", "\\u000112", "\"\\u000112\"", "\"\\u0001-3\"",
        "u", "x", "\xEF\xBB\xBF", "\xc3\xa9", "/", "\\/", "\\\"",
    };
    unsigned long diff0 = n_diff;
    char buf[512], label[64];
    int count = 40000 * scale;

    for (int i = 0; i < count; i++) {
        size_t n = 0, ntok = 1 + rnd_below(i % 4 ? 12 : 40);
        for (size_t t = 0; t < ntok; t++) {
            const char *s = toks[rnd_below(sizeof toks / sizeof *toks)];
            size_t l = s[0] ? strlen(s) : 1;
            if (n + l >= sizeof buf)
                break;
            memcpy(buf + n, s, l);
            n += l;
        }
        snprintf(label, sizeof label, "random %d", i);
        diff_text(buf, n, SG_JSON_MAX_BYTES, i % 7 ? SG_JSON_MAX_DEPTH : 3, label);
    }
    CHECK_EQ_INT(n_diff - diff0, 0);
    printf("random: %d token soups\n", count);
}

/* Random white space as cJSON skips it between tokens (any byte up to 32), or none. */
static void gen_ws(sg_buf *b)
{
    static const char ws[] = " \t\n\r\x01\x1f";
    switch (rnd_below(6)) {
    case 0:
        sg_buf_putc(b, ' ');
        break;
    case 1:
        sg_buf_puts(b, "\n  ");
        break;
    case 2:
        sg_buf_putc(b, ws[rnd_below(sizeof ws - 1)]);
        break;
    default:
        break;
    }
}

/* A random string literal: plain bytes, every escape, \u forms (surrogate pairs, lone and bad
 * ones sometimes), UTF-8, the \u0001 mark of sg__json_parse's big literals. */
static void gen_string(sg_buf *b)
{
    static const char *const parts[] = {
        "a", "key", "s0", " ", "L['x'].size()[0]", "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b",
        "\\f", "\\r", "\\u0041", "\\u00e9", "\\u20ac", "\\uD83D\\uDE00", "\\u0000", "\\u0001",
        "\\u000112", "\xc3\xa9", "\xe2\x82\xac", "/", "[", "]", "{", "}", ",", ":", "12345678901234567890",
        "\\uDBFF\\uDFFF", "\\uFFFF", "\\u007f", "\\u0080", "\\u07FF", "\\u0800",
    };
    static const char *const rare[] = {"\\uD83D", "\\uDE00", "\\uZZZZ", "\\q", "\x01", "\\u12"};
    size_t n = rnd_below(5);
    sg_buf_putc(b, '"');
    if (rnd_below(8) == 0) /* a mark then digits: a Raw when the text has a big literal */
        sg_buf_puts(b, rnd_below(2) ? "\\u000112345" : "\\u0001-7");
    for (size_t i = 0; i < n; i++)
        sg_buf_puts(b, rnd_below(200) ? parts[rnd_below(sizeof parts / sizeof *parts)]
                                      : rare[rnd_below(sizeof rare / sizeof *rare)]);
    sg_buf_putc(b, '"');
}

/* A random number literal in every form cJSON reads (and a few it does not, rarely). */
static void gen_number(sg_buf *b)
{
    static const char *const forms[] = {
        "0", "-0", "7", "-42", "1.5", "-0.25", "1e5", "1E-5", "2.5e+300", "1e999", "-1e-999", "007",
        "1.", "-.5", "1.e3", "2147483647", "2147483648", "-2147483649", "123456789012345",
        "1234567890123456", "-9223372036854775808", "9223372036854775807", "00000000000000000001",
        "12345678901234567890.5", "4.9e-324", "0.1", "3.141592653589793238462643383279",
        "123456789012345678901234567890123456789012345678901234567890123456789012345",
    };
    if (rnd_below(3) == 0) { /* one call per statement: the draws stay in order in any build */
        const char *sign = rnd_below(2) ? "-" : "";
        unsigned shift = (unsigned)rnd_below(64);
        unsigned long long v = rnd() >> shift;
        sg_buf_printf(b, "%s%llu", sign, v);
    } else
        sg_buf_puts(b, forms[rnd_below(sizeof forms / sizeof *forms)]);
}

/* A random JSON value nested at most `depth` more levels. Keys are strings, and sometimes a big
 * integer literal (which sg__json_parse lets through as a key). */
static void gen_value(sg_buf *b, int depth)
{
    size_t kind = rnd_below(depth > 0 ? 8 : 5), n;
    switch (kind) {
    case 0:
        sg_buf_puts(b, rnd_below(3) == 0 ? "null" : rnd_below(2) ? "true" : "false");
        break;
    case 1:
    case 2:
        gen_number(b);
        break;
    case 3:
    case 4:
        gen_string(b);
        break;
    case 5:
    case 6:
        n = rnd_below(5);
        sg_buf_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
            if (i)
                sg_buf_putc(b, ',');
            gen_ws(b);
            if (rnd_below(40) == 0)
                sg_buf_puts(b, "12345678901234567890");
            else if (rnd_below(6) == 0)
                sg_buf_puts(b, "\"dup\"");
            else
                gen_string(b);
            gen_ws(b);
            sg_buf_putc(b, ':');
            gen_ws(b);
            gen_value(b, depth - 1);
            gen_ws(b);
        }
        sg_buf_putc(b, '}');
        break;
    default:
        n = rnd_below(6);
        sg_buf_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                sg_buf_putc(b, ',');
            gen_ws(b);
            gen_value(b, depth - 1);
            gen_ws(b);
        }
        sg_buf_putc(b, ']');
        break;
    }
}

/* Random JSON documents (mostly valid: the trees are compared), each also truncated and with a
 * byte changed. */
static void test_generated(void)
{
    unsigned long diff0 = n_diff, ok0 = n_ok;
    int count = 6000 * scale;
    char label[64];

    for (int i = 0; i < count; i++) {
        sg_buf b;
        sg_buf_init(&b, 1 << 20);
        if (i % 5 == 0)
            sg_buf_puts(&b, "\xEF\xBB\xBF");
        gen_ws(&b);
        gen_value(&b, 1 + (int)rnd_below(6));
        if (i % 3 == 0)
            sg_buf_puts(&b, rnd_below(4) ? " \n" : " x");
        CHECK(!b.failed);
        snprintf(label, sizeof label, "generated %d", i);
        diff_default(b.data, b.len, label);
        if (b.len > 1) {
            size_t at = rnd_below(b.len);
            snprintf(label, sizeof label, "generated %d[:%zu]", i, at);
            diff_default(b.data, at, label);
            b.data[at] = mut_bytes[rnd_below(sizeof mut_bytes)];
            snprintf(label, sizeof label, "generated %d changed at %zu", i, at);
            diff_default(b.data, b.len, label);
        }
        sg_buf_dispose(&b);
    }
    CHECK_EQ_INT(n_diff - diff0, 0);
    printf("generated: %d random documents (%lu texts parsed alike)\n", count, n_ok - ok0);
}

/* ---- documents on their own ------------------------------------------------------- */

/* What a document gives readers: members, duplicate keys (the first wins), big integers, the
 * writer; and that the tree reads back as the same JSON. */
static void test_doc_reads(void)
{
    static const char text[] = "{\"a\": [9223372036854775807, -12345678901234567890, 3, 1.5],"
                               " \"d\": 1, \"d\": 2, \"s\": \"q\\\"\\n\\u00e9\", \"o\": {}}";
    sg_error err = SG_ERROR_INIT;
    sg__json_doc *doc = NULL;
    const cJSON *root = NULL, *a;
    sg_int v;
    sg_buf b;

    CHECK_EQ_INT(sg__json_doc_parse(&doc, &root, text, strlen(text), SG_JSON_MAX_BYTES, 8, "t", &err), 0);
    if (!root)
        return;
    a = sg__json_get(root, "a");
    CHECK_EQ_INT(cJSON_GetArraySize(a), 4);
    CHECK(cJSON_IsRaw(cJSON_GetArrayItem(a, 0)));
    CHECK(sg__json_int(cJSON_GetArrayItem(a, 0), &v) && v == (sg_int)9223372036854775807LL);
    CHECK(sg__json_int(cJSON_GetArrayItem(a, 1), &v) && v == -(sg_int)12345678901234567890ULL);
    CHECK(sg__json_int(cJSON_GetArrayItem(a, 2), &v) && v == 3);
    CHECK(sg__json_int(sg__json_get(root, "d"), &v) && v == 1);
    CHECK_EQ_STR(sg__json_str(sg__json_get(root, "s")), "q\"\n\xc3\xa9");
    CHECK_EQ_INT(cJSON_GetArraySize(sg__json_get(root, "o")), 0);
    sg_buf_init(&b, 1 << 16);
    sg__json_put_value(&b, root);
    CHECK_EQ_STR(b.data, "{\"a\":[9223372036854775807,-12345678901234567890,3,1.5],\"d\":1,\"d\":2,"
                         "\"s\":\"q\\\"\\n\xc3\xa9\",\"o\":{}}");
    sg_buf_dispose(&b);
    {
        char *printed = cJSON_PrintUnformatted(root); /* printing allocates its own output */
        CHECK(printed != NULL);
        cJSON_free(printed);
    }
    sg__json_doc_free(doc);
    sg__json_doc_free(NULL);
}

/* Allocation failures: the document parser fails cleanly with SG_ENOMEM at each of its
 * allocations (a document of several blocks), leaving no outputs and no leaks (ASan). */
static void test_doc_nomem(void)
{
    sg_buf text;
    unsigned long before, count, n, enomem = 0;
    int rc;

    sg_buf_init(&text, 1 << 24);
    sg_buf_puts(&text, "{\"items\": [");
    for (int i = 0; i < 3000; i++)
        sg_buf_printf(&text, "%s{\"k%d\": [\"v\\n%d\", %d.5, 123456789012345678%d, null]}", i ? "," : "",
                      i, i, i, i % 10);
    sg_buf_puts(&text, "]}");
    CHECK(!text.failed);
    for (int pass = 0; pass < 2; pass++) { /* 0: the doc parser; 1: the file loader */
        const char *path = SG_SOURCE_DIR "/tests/corpus/cases/err_div_view_8/guards.json";
        sg__json_doc *doc = NULL;
        const cJSON *root = NULL;
        sg_error err = SG_ERROR_INIT;

        before = sg_alloc_count();
        rc = pass ? sg__json_doc_load_file(&doc, &root, path, NULL, "g", &err)
                  : sg__json_doc_parse(&doc, &root, text.data, text.len, SG_JSON_MAX_BYTES, 8, "t", &err);
        count = sg_alloc_count() - before;
        CHECK_EQ_INT(rc, 0);
        CHECK(pass || count >= 3); /* the document and its first blocks */
        sg__json_doc_free(doc);
        for (n = 0; n < count; n++) {
            sg_alloc_fail_after((long)n);
            doc = (sg__json_doc *)&doc;
            root = (const cJSON *)&root;
            rc = pass ? sg__json_doc_load_file(&doc, &root, path, NULL, "g", &err)
                      : sg__json_doc_parse(&doc, &root, text.data, text.len, SG_JSON_MAX_BYTES, 8, "t", &err);
            sg_alloc_fail_after(-1);
            CHECK_MSG(rc == SG_ENOMEM, "allocation %lu of %lu failing: status %d", n, count, rc);
            CHECK(doc == NULL && root == NULL);
            if (rc == SG_ENOMEM)
                enomem++;
            if (rc == 0)
                sg__json_doc_free(doc);
        }
        printf("nomem %s: %lu allocations, each failing gives SG_ENOMEM\n", pass ? "load_file" : "parse",
               count);
    }
    CHECK(enomem > 0);
    sg_buf_dispose(&text);
}

/* The file loader: the same document as sg__json_load_file, the same errors. */
static void test_doc_load_file(void)
{
    const char *paths[] = {SG_SOURCE_DIR "/tests/corpus/cases/err_div_view_8/case.json",
                           SG_SOURCE_DIR "/tests/no/such/file.json", SG_SOURCE_DIR "/tests"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        sg_error e1 = SG_ERROR_INIT, e2 = SG_ERROR_INIT;
        cJSON *a = NULL;
        sg__json_doc *doc = NULL;
        const cJSON *b = NULL;
        int r1 = sg__json_load_file(&a, paths[i], NULL, &e1);
        int r2 = sg__json_doc_load_file(&doc, &b, paths[i], NULL, NULL, &e2);
        CHECK_EQ_INT(r1, r2);
        if (r1 == 0)
            CHECK(same_tree(a, b, paths[i], "(root)"));
        else
            CHECK_EQ_STR(e1.msg, e2.msg);
        cJSON_Delete(a);
        sg__json_doc_free(doc);
    }
}

/* Dropped keys: their values are read and checked (a syntax error inside one is the same error,
 * at the same byte, as without the drop) but become nulls, at any depth; the other members are
 * kept. */
static void test_doc_drop(void)
{
    static const sg__json_drop drop[] = {{1, "slocs"}, {1, "summary"}, {3, "summary"}, {0, NULL}};
    static const char *const texts[] = {
        "{\"a\": 1, \"slocs\": {\"x\": [1, 2, {\"y\": \"z\"}]}, \"b\": [{\"summary\": [3, 4], \"c\": \"d\"}], "
        "\"summary\": \"s\", \"e\": {\"summary\": 5}}",
        "{\"a\": 1, \"slocs\": {\"x\": [1, 2, {\"y\": \"z\"}], \"b\": [true]}", /* unclosed inside a dropped value */
        "{\"slocs\": [1, 2,], \"a\": 2}",                                        /* a trailing comma inside one */
    };
    char path[] = "/tmp/sg_test_json_drop_XXXXXX";
    int fd = mkstemp(path);
    size_t i;
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        FILE *f = fopen(path, "w");
        sg_error e1 = SG_ERROR_INIT, e2 = SG_ERROR_INIT;
        sg__json_doc *d1 = NULL, *d2 = NULL;
        const cJSON *a = NULL, *b = NULL;
        int r1, r2;
        CHECK(f != NULL);
        if (!f)
            break;
        fputs(texts[i], f);
        fclose(f);
        r1 = sg__json_doc_load_file(&d1, &a, path, NULL, "t", &e1);
        r2 = sg__json_doc_load_file(&d2, &b, path, drop, "t", &e2);
        CHECK_EQ_INT(r1, r2);
        if (r1 != 0) {
            CHECK_EQ_STR(e1.msg, e2.msg);
        } else {
            const cJSON *inner = cJSON_GetArrayItem(sg__json_get(b, "b"), 0);
            CHECK(cJSON_IsNull(sg__json_get(b, "slocs")) && cJSON_IsNull(sg__json_get(b, "summary")));
            CHECK(cJSON_IsNull(sg__json_get(inner, "summary")));
            CHECK(cJSON_IsNumber(sg__json_get(b, "a")) && sg__json_get(b, "a")->valuedouble == 1);
            CHECK_EQ_STR(sg__json_str(sg__json_get(inner, "c")), "d");
            CHECK(cJSON_IsNumber(sg__json_get(sg__json_get(b, "e"), "summary"))); /* depth 2: not listed, kept */
            CHECK(!cJSON_IsNull(sg__json_get(a, "slocs")));
        }
        sg__json_doc_free(d1);
        sg__json_doc_free(d2);
    }
    unlink(path);
}

/* Runs every test; exit status 1 when one failed. */
int main(void)
{
    const char *full = getenv("SG_JSON_DIFF_FULL");
    const char *seed = getenv("SG_JSON_DIFF_SEED");
    if (full && *full && strcmp(full, "0") != 0)
        scale = 8;
    if (seed && *seed)
        rng_state ^= strtoull(seed, NULL, 10) * 0xD1B54A32D192ED03ULL + 1;
    RUN(test_cases);
    RUN(test_depth);
    RUN(test_random);
    RUN(test_generated);
    RUN(test_files);
    RUN(test_doc_reads);
    RUN(test_doc_nomem);
    RUN(test_doc_load_file);
    RUN(test_doc_drop);
    printf("differential: %lu texts (%lu parsed, %lu rejected alike), %lu differences\n", n_texts,
           n_ok, n_err, n_diff);
    return test_summary();
}
