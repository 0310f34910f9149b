/*
 * json.c - the JSON helpers of util/json.h: bounded file reading, parsing with
 * cJSON under size and nesting limits with exact big integers, read-only
 * documents parsed into an arena by a parser of its own that gives the same
 * trees and errors, typed member access, and a compact JSON writer into an
 * sg_buf.
 */
#define _POSIX_C_SOURCE 200809L

#include "util/json.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Largest integer a double holds exactly. */
#define EXACT_DOUBLE_MAX 9007199254740992.0

/* Integer literals with more digits than this are quoted before parsing. */
#define BIG_DIGITS 15

int sg__read_file(char **out, size_t *len, const char *path, size_t max, const char *what,
                  sg_error *err)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, first = 65536;
    struct stat st;
    int rc = 0;

    *out = NULL;
    *len = 0;
    if (!what)
        what = path;
    f = fopen(path, "rb");
    if (!f) {
        rc = sg_error_set(err, SG_EIO, "%s: %s", what, strerror(errno));
        goto cleanup;
    }
    /* a regular file is read into one buffer of its size (and a byte to see it end): a
     * model-sized trace's megabytes were otherwise copied through every doubling */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        first = (uintmax_t)st.st_size < (uintmax_t)max ? (size_t)st.st_size + 2 : max + 2;
    for (;;) {
        size_t want, got;
        if (cap - n < 2) {
            size_t ncap = cap ? cap * 2 : first;
            /* Never grow far past the limit: one byte over it is enough to know. */
            if (ncap > max + 2)
                ncap = max + 2;
            if (ncap <= cap) {
                rc = sg_error_set(err, SG_ELIMIT, "%s: larger than %zu bytes", what, max);
                goto cleanup;
            }
            if (sg__grow((void **)&buf, &cap, ncap, 1)) {
                rc = sg_error_set(err, SG_ENOMEM, "%s: out of memory", what);
                goto cleanup;
            }
        }
        want = cap - n - 1;
        errno = 0;
        got = fread(buf + n, 1, want, f);
        n += got;
        if (n > max) {
            rc = sg_error_set(err, SG_ELIMIT, "%s: larger than %zu bytes", what, max);
            goto cleanup;
        }
        if (got < want)
            break;
    }
    if (ferror(f)) {
        rc = sg_error_set(err, SG_EIO, "%s: %s", what, errno ? strerror(errno) : "read error");
        goto cleanup;
    }
    if (!buf && sg__grow((void **)&buf, &cap, 1, 1)) {
        rc = sg_error_set(err, SG_ENOMEM, "%s: out of memory", what);
        goto cleanup;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
cleanup:
    sg_free(buf);
    if (f)
        fclose(f);
    return rc;
}

/* 1-based line and column of byte `off` of `text`. */
static void line_col(const char *text, size_t len, size_t off, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/*
 * The number token starting at `i` (a '-' or a digit outside strings):
 * [-]digits[.digits][(e|E)[+|-]digits], as far as it goes. Returns the offset
 * just after it (at least i + 1). `*big` tells whether it is a plain integer
 * (no fraction, no exponent, no leading zero) of more than BIG_DIGITS digits,
 * the only kind quoted; anything malformed is left for cJSON to reject.
 */
static size_t number_token(const char *text, size_t len, size_t i, bool *big)
{
    size_t j = i, digits = 0, first;
    bool plain = true;

    if (text[j] == '-')
        j++;
    first = j;
    while (j < len && text[j] >= '0' && text[j] <= '9') {
        j++;
        digits++;
    }
    if (j < len && text[j] == '.') {
        plain = false;
        for (j++; j < len && text[j] >= '0' && text[j] <= '9'; j++)
            ;
    }
    if (j < len && (text[j] == 'e' || text[j] == 'E')) {
        plain = false;
        j++;
        if (j < len && (text[j] == '+' || text[j] == '-'))
            j++;
        while (j < len && text[j] >= '0' && text[j] <= '9')
            j++;
    }
    *big = plain && digits > BIG_DIGITS && text[first] != '0';
    return j > i ? j : i + 1;
}

/*
 * The closing quote of the string whose contents start at `i` (just after its opening quote): its
 * offset, or `len` when it has none. A quote closes the string when an even number of backslashes
 * precede it (each pair is one escaped backslash), which is also where cJSON ends it; memchr finds
 * the quotes, so the contents (most of a trace's bytes: source lines and stacks) are not walked
 * byte by byte.
 */
static size_t close_quote(const char *text, size_t len, size_t i)
{
    const char *q;
    size_t start = i;
    while (i < len && (q = memchr(text + i, '"', len - i)) != NULL) {
        size_t j = (size_t)(q - text), k = j;
        while (k > start && text[k - 1] == '\\')
            k--;
        if ((j - k) % 2 == 0)
            return j;
        i = j + 1;
    }
    return len;
}

/* The offset just after the closing quote of the string whose contents start at `i`, or `len`
 * when it has none (close_quote). */
static size_t string_end(const char *text, size_t len, size_t i)
{
    size_t q = close_quote(text, len, i);
    return q < len ? q + 1 : len;
}

/*
 * One pass over the text outside strings: checks the nesting depth (SG_ELIMIT
 * with the offset of the bracket that goes too deep) and counts the integer
 * literals that need quoting. String contents are skipped, honouring escapes.
 */
static int scan(const char *text, size_t len, int max_depth, size_t *nbig, size_t *bad_off)
{
    int depth = 0;
    size_t i = 0;

    *nbig = 0;
    while (i < len) {
        char ch = text[i];
        if (ch == '"') {
            i = string_end(text, len, i + 1);
            continue;
        }
        if (ch == '[' || ch == '{') {
            if (++depth > max_depth) {
                *bad_off = i;
                return SG_ELIMIT;
            }
        } else if (ch == ']' || ch == '}') {
            depth--;
        } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
            bool big;
            i = number_token(text, len, i, &big);
            *nbig += big;
            continue;
        }
        i++;
    }
    return 0;
}

/*
 * Copy `text` with every big integer literal put in double quotes behind a
 * \u0001 mark (`nbig` of them), so that cJSON keeps its digits; unmark_big()
 * turns the marked strings back into numbers (cJSON_Raw) after parsing.
 */
#define BIG_MARK "\\u0001"
#define BIG_MARK_LEN 6

static char *quote_big(const char *text, size_t len, size_t nbig, size_t *outlen)
{
    char *out = sg__malloc(len + (2 + BIG_MARK_LEN) * nbig + 1);
    size_t i = 0, o = 0;

    if (!out)
        return NULL;
    while (i < len) {
        char ch = text[i];
        if (ch == '"') {
            size_t j = string_end(text, len, i + 1);
            memcpy(out + o, text + i, j - i);
            o += j - i;
            i = j;
            continue;
        }
        if (ch == '-' || (ch >= '0' && ch <= '9')) {
            bool quote;
            size_t j = number_token(text, len, i, &quote);
            if (quote) {
                out[o++] = '"';
                memcpy(out + o, BIG_MARK, BIG_MARK_LEN);
                o += BIG_MARK_LEN;
            }
            memcpy(out + o, text + i, j - i);
            o += j - i;
            if (quote)
                out[o++] = '"';
            i = j;
            continue;
        }
        out[o++] = text[i++];
    }
    out[o] = '\0';
    *outlen = o;
    return out;
}

/* A marked big integer (quote_big) back into a number: a cJSON_Raw holding its digits. */
static void unmark_big(cJSON *j)
{
    cJSON *it;
    for (it = j; it; it = it->next) {
        if (cJSON_IsString(it) && it->valuestring && it->valuestring[0] == '\x01') {
            const char *d = it->valuestring + 1;
            size_t k = *d == '-' ? 1 : 0;
            bool digits = d[k] != '\0';
            for (; d[k]; k++)
                digits &= d[k] >= '0' && d[k] <= '9';
            if (digits) {
                memmove(it->valuestring, it->valuestring + 1, strlen(it->valuestring));
                it->type = (it->type & ~0xFF) | cJSON_Raw;
            }
        }
        if (it->child)
            unmark_big(it->child); /* depth already bounded by scan() */
    }
}

/* True when only JSON white space follows `end` up to `stop`. */
static bool only_space(const char *end, const char *stop)
{
    for (; end < stop; end++)
        if (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\r')
            return false;
    return true;
}

int sg__json_parse(cJSON **out, const char *text, size_t len, size_t max_bytes, int max_depth,
                   const char *what, sg_error *err)
{
    char *quoted = NULL;
    const char *src = text, *end = NULL;
    size_t srclen = len, nbig = 0, bad = 0, line, col;
    cJSON *json = NULL;
    int rc = 0;

    *out = NULL;
    if (!what)
        what = "JSON";
    if (!text)
        return sg_error_set(err, SG_EINVALID, "%s: no JSON text", what);
    if (len > max_bytes)
        return sg_error_set(err, SG_ELIMIT, "%s: %zu bytes of JSON, over the limit of %zu", what,
                            len, max_bytes);
    if (scan(text, len, max_depth, &nbig, &bad) < 0) {
        line_col(text, len, bad, &line, &col);
        return sg_error_set(err, SG_ELIMIT,
                            "%s: JSON nested deeper than %d levels at byte %zu (line %zu, column %zu)",
                            what, max_depth, bad, line, col);
    }
    if (nbig > 0) {
        quoted = quote_big(text, len, nbig, &srclen);
        if (!quoted)
            return sg_error_set(err, SG_ENOMEM, "%s: out of memory", what);
        src = quoted;
    }
    json = cJSON_ParseWithLengthOpts(src, srclen, &end, 0);
    if (json && only_space(end, src + srclen)) {
        if (nbig > 0)
            unmark_big(json);
        *out = json;
        json = NULL;
        goto cleanup;
    }
    /* Locate the error in the caller's text: quoting shifts offsets, so parse
     * the original (which fails at the corresponding place) to find it. */
    if (json) {
        bad = (size_t)(end - src);
        if (quoted) {
            /* Trailing garbage after a whole value: find it in the original. */
            cJSON *again = cJSON_ParseWithLengthOpts(text, len, &end, 0);
            bad = again ? (size_t)(end - text) : bad;
            cJSON_Delete(again);
        }
        while (bad < len && only_space(text + bad, text + bad + 1))
            bad++;
    } else if (quoted) {
        cJSON *again = cJSON_ParseWithLengthOpts(text, len, &end, 0);
        bad = (!again && end) ? (size_t)(end - text) : 0;
        cJSON_Delete(again);
    } else {
        bad = end ? (size_t)(end - src) : 0;
    }
    if (bad > len)
        bad = len;
    line_col(text, len, bad, &line, &col);
    if (len == 0 || only_space(text, text + len))
        rc = sg_error_set(err, SG_EINVALID, "%s: empty JSON text", what);
    else if (json)
        rc = sg_error_set(err, SG_EINVALID,
                          "%s: invalid JSON: unexpected text after the value at byte %zu (line %zu, column %zu)",
                          what, bad, line, col);
    else
        rc = sg_error_set(err, SG_EINVALID, "%s: invalid JSON at byte %zu (line %zu, column %zu)",
                          what, bad, line, col);
cleanup:
    cJSON_Delete(json);
    sg_free(quoted);
    return rc;
}

int sg__json_load_file(cJSON **out, const char *path, const char *what, sg_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    *out = NULL;
    rc = sg__read_file(&text, &len, path, SG_JSON_MAX_BYTES, what, err);
    if (rc == 0)
        rc = sg__json_parse(out, text, len, SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, what ? what : path,
                            err);
    sg_free(text);
    return rc;
}

/* ---- read-only documents ------------------------------------------------------ */

/*
 * A document's arena: blocks carved front to back (nodes 8-aligned, strings
 * packed), the newest first in the list. The first block is sized from the
 * text (a pretty-printed torch dump needs about 3 bytes of tree per byte of
 * text; blocks are malloc'd, and pages never touched cost nothing), each next
 * one twice the last, up to DOC_BLOCK_MAX unless one item needs more.
 */
#define DOC_BLOCK_MIN ((size_t)4096)
#define DOC_BLOCK_MAX ((size_t)64 << 20)

typedef struct doc_block {
    struct doc_block *next; /* the block filled before this one */
    size_t cap;             /* bytes after the header */
} doc_block;

struct sg__json_doc {
    doc_block *blocks; /* newest first */
    char *cur, *end;   /* the free bytes of the newest block */
    size_t next_cap;   /* size of the next block */
};

/* A new block of at least `need` bytes (from `d->next_cap`) made current; false when out of
 * memory (nothing changed). */
static bool doc_grow(sg__json_doc *d, size_t need)
{
    size_t cap = d->next_cap > need ? d->next_cap : need;
    doc_block *b;

    if (cap > SIZE_MAX - sizeof *b || !(b = sg__malloc(sizeof *b + cap)))
        return false;
    b->next = d->blocks;
    b->cap = cap;
    d->blocks = b;
    d->cur = (char *)(b + 1);
    d->end = d->cur + cap;
    if (d->next_cap < DOC_BLOCK_MAX)
        d->next_cap = d->next_cap > DOC_BLOCK_MAX / 2 ? DOC_BLOCK_MAX : d->next_cap * 2;
    return true;
}

/* `n` bytes aligned to `align` (a power of two) from the arena, or NULL when out of memory. */
static void *doc_alloc(sg__json_doc *d, size_t n, size_t align)
{
    uintptr_t p = ((uintptr_t)d->cur + (align - 1)) & ~(uintptr_t)(align - 1);

    if (!d->cur || p > (uintptr_t)d->end || n > (uintptr_t)d->end - p) {
        if (n > SIZE_MAX - align || !doc_grow(d, n + align))
            return NULL;
        p = ((uintptr_t)d->cur + (align - 1)) & ~(uintptr_t)(align - 1);
    }
    d->cur = (char *)p + n;
    return (void *)p;
}

void sg__json_doc_free(sg__json_doc *doc)
{
    doc_block *b, *next;

    if (!doc)
        return;
    for (b = doc->blocks; b; b = next) {
        next = b->next;
        sg_free(b);
    }
    sg_free(doc);
}

/* cJSON's limit on nested arrays and objects (CJSON_NESTING_LIMIT): a deeper one is a syntax
 * error to cJSON, at its bracket. */
#define CJSON_DEPTH 1000

/*
 * The parser's state. It reads the caller's text as cJSON 1.7.15 reads the
 * text sg__json_parse() hands it (the big integer literals quoted, see
 * quote_big), so that it accepts the same texts, builds the same trees and
 * stops where cJSON stops (`pos` is then cJSON's error offset).
 */
typedef struct jp {
    const unsigned char *s;
    size_t len, pos;
    sg__json_doc *doc;
    int depth, max_depth;
    size_t nbig;    /* big integer literals read, as values and as keys */
    size_t big_key; /* 1 + the offset of the first big literal read as a key; 0: none */
    bool marked;    /* a string value starts with \x01 (unmark_big may make it a Raw) */
    bool nomem;
    char point;     /* the locale's decimal point, which cJSON hands strtod */
    const sg__json_drop *drop; /* members whose values are read and dropped ({0, NULL}-terminated), or NULL */
} jp;

static bool read_value(jp *P, cJSON *item);

/* A zeroed node from the arena (NULL and P->nomem when out of memory). */
static cJSON *new_node(jp *P)
{
    cJSON *n = doc_alloc(P->doc, sizeof *n, _Alignof(cJSON));
    if (!n) {
        P->nomem = true;
        return NULL;
    }
    memset(n, 0, sizeof *n);
    return n;
}

/* cJSON's white space skip: every byte up to 32 (NUL and control bytes too); when it runs to
 * the end it stops on the last byte. At the end already: nothing. */
static void skip_ws(jp *P)
{
    if (P->pos >= P->len)
        return;
    while (P->pos < P->len && P->s[P->pos] <= 32)
        P->pos++;
    if (P->pos == P->len)
        P->pos--;
}

/* Four hex digits as a number, 0 when one is not a hex digit (as cJSON reads them). */
static unsigned hex4(const unsigned char *h)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = h[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else
            return 0;
        v = v << 4 | d;
    }
    return v;
}

/*
 * The \u escape at s[p] (its backslash) of a string whose closing quote is at `e`: one UTF-16
 * unit, or a high surrogate followed by a \u low one, written to `out` as UTF-8 (`*w` bytes).
 * Returns the bytes of text it takes (6 or 12), or 0 where cJSON fails: fewer than 6 bytes left,
 * a lone low surrogate, a high one without a \u low one after it. Bad hex digits read as 0.
 */
static size_t utf16_escape(const unsigned char *s, size_t p, size_t e, unsigned char *out, size_t *w)
{
    unsigned long cp;
    unsigned hi, lo;
    size_t took = 6, n;

    if (e - p < 6)
        return 0;
    hi = hex4(s + p + 2);
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return 0;
    if (hi >= 0xD800 && hi <= 0xDBFF) {
        size_t q = p + 6;
        if (e - q < 6 || s[q] != '\\' || s[q + 1] != 'u')
            return 0;
        lo = hex4(s + q + 2);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return 0;
        cp = 0x10000 + (((unsigned long)(hi & 0x3FF) << 10) | (lo & 0x3FF));
        took = 12;
    } else {
        cp = hi;
    }
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (unsigned char)(0xF0 | cp >> 18);
        out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    *w = n;
    return took;
}

/* The closing quote of a string literal whose text starts at `p` when it has no escape (the
 * common case: the text is the value), else NULL. */
static const unsigned char *plain_end(const jp *P, size_t p)
{
    const unsigned char *q = memchr(P->s + p, '"', P->len - p);
    return q && !memchr(P->s + p, '\\', (size_t)(q - (P->s + p))) ? q : NULL;
}

/*
 * The string literal at P->pos, unescaped into the arena as cJSON unescapes it: the string ends
 * at its first unescaped quote; then escapes are read left to right (a \u takes 6 or 12 bytes
 * even where that splits a later escape pair), and \b \f \n \r \t \" \\ \/ \uXXXX are the only
 * ones. Returns the string with P->pos after the closing quote, or NULL with P->pos where cJSON
 * stops: just after the opening quote (none there, or no closing quote), or at the backslash of
 * a bad escape; P->nomem when out of memory.
 */
static char *read_string(jp *P)
{
    const unsigned char *s = P->s, *q;
    size_t open = P->pos, e, p, o = 0;
    unsigned char *out;

    if (open >= P->len || s[open] != '"') {
        P->pos = open + 1;
        return NULL;
    }
    p = open + 1;
    if ((q = plain_end(P, p)) != NULL) { /* no escapes: the common case */
        e = (size_t)(q - s);
    } else {
        e = close_quote((const char *)s, P->len, p);
        if (e >= P->len) {
            P->pos = p;
            return NULL;
        }
    }
    if (!(out = doc_alloc(P->doc, e - p + 1, 1))) {
        P->nomem = true;
        return NULL;
    }
    while (p < e) {
        const unsigned char *b = memchr(s + p, '\\', e - p);
        size_t run = b ? (size_t)(b - (s + p)) : e - p, w;
        memcpy(out + o, s + p, run);
        o += run;
        p += run;
        if (p >= e)
            break;
        switch (s[p + 1]) { /* p + 1 <= e: at worst the closing quote */
        case 'b': out[o++] = '\b'; p += 2; break;
        case 'f': out[o++] = '\f'; p += 2; break;
        case 'n': out[o++] = '\n'; p += 2; break;
        case 'r': out[o++] = '\r'; p += 2; break;
        case 't': out[o++] = '\t'; p += 2; break;
        case '"':
        case '\\':
        case '/': out[o++] = s[p + 1]; p += 2; break;
        case 'u':
            if (!(run = utf16_escape(s, p, e, out + o, &w))) {
                P->pos = p;
                return NULL;
            }
            o += w;
            p += run;
            break;
        default:
            P->pos = p;
            return NULL;
        }
    }
    out[o] = '\0';
    P->doc->cur = (char *)out + o + 1; /* give back what the escapes saved */
    P->pos = e + 1;
    return (char *)out;
}

/* `n` bytes of the text at `at` as a new arena string, `lead` (when not NUL) before them. */
static char *copy_token(jp *P, size_t at, size_t n, char lead)
{
    size_t k = lead ? 1 : 0;
    char *out = doc_alloc(P->doc, n + k + 1, 1);
    if (!out) {
        P->nomem = true;
        return NULL;
    }
    out[0] = lead;
    memcpy(out + k, P->s + at, n);
    out[n + k] = '\0';
    return out;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/*
 * The number at P->pos (a '-' or a digit) into `item`. An integer literal of more than 15 digits
 * (no leading zero, no fraction or exponent: number_token) becomes a cJSON_Raw node of its text,
 * as unmark_big leaves it. Any other is what cJSON reads: the longest prefix strtod takes,
 * [-]digits[.digits][(e|E)[+|-]digits] with a digit in the mantissa, its value by strtod (with
 * the locale's decimal point) and valueint saturated to int. False at P->pos when there is no
 * digit (cJSON's error); P->nomem when out of memory.
 */
static bool read_number(jp *P, cJSON *item)
{
    const unsigned char *s = P->s;
    size_t start = P->pos, len = P->len, i = start, d0, nd, k;
    bool neg = false, frac = false, expo = false;
    uint64_t u = 0;
    double v;

    if (s[i] == '-') {
        neg = true;
        i++;
    }
    for (d0 = i; i < len && is_digit(s[i]); i++)
        if (i - d0 < BIG_DIGITS)
            u = u * 10 + (uint64_t)(s[i] - '0');
    nd = i - d0;
    if (nd > BIG_DIGITS && s[d0] != '0' && !(i < len && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))) {
        if (!(item->valuestring = copy_token(P, start, i - start, '\0')))
            return false;
        item->type = cJSON_Raw;
        P->nbig++;
        P->pos = i;
        return true;
    }
    k = i;
    if (k < len && s[k] == '.') {
        size_t f = k + 1;
        while (f < len && is_digit(s[f]))
            f++;
        if (nd > 0 || f > k + 1) { /* "1." and "-.5" are numbers to strtod; "-." is not */
            frac = true;
            k = f;
        }
    }
    if (nd == 0 && !frac)
        return false; /* "-" alone: cJSON fails at it */
    if (k < len && (s[k] == 'e' || s[k] == 'E')) {
        size_t t = k + 1;
        if (t < len && (s[t] == '+' || s[t] == '-'))
            t++;
        if (t < len && is_digit(s[t])) {
            while (t < len && is_digit(s[t]))
                t++;
            k = t;
            expo = true;
        }
    }
    if (!frac && !expo && nd <= BIG_DIGITS) {
        v = (double)u; /* exact: below 2^53, as strtod rounds it */
        if (neg)
            v = -v;
    } else {
        char small[64], *buf = small, *end = NULL;
        size_t n = k - start;
        if (n >= sizeof small && !(buf = sg__malloc(n + 1))) {
            P->nomem = true;
            return false;
        }
        for (size_t j = 0; j < n; j++)
            buf[j] = s[start + j] == '.' ? P->point : (char)s[start + j];
        buf[n] = '\0';
        v = strtod(buf, &end);
        if (buf != small)
            sg_free(buf);
    }
    item->valuedouble = v;
    if (v >= INT_MAX)
        item->valueint = INT_MAX;
    else if (v <= (double)INT_MIN)
        item->valueint = INT_MIN;
    else
        item->valueint = (int)v;
    item->type = cJSON_Number;
    P->pos = k;
    return true;
}

/* The depth check of an array or object at P->pos: false (P->pos left at its bracket) past
 * `max_depth` (scan() then reports it) or past cJSON's own limit (a syntax error there). */
static bool enter(jp *P)
{
    if (P->depth >= P->max_depth || P->depth >= CJSON_DEPTH)
        return false;
    P->depth++;
    return true;
}

/* Link `n` after `*last` in the list headed by `*head`. */
static void append(cJSON **head, cJSON **last, cJSON *n)
{
    if (!*head) {
        *head = n;
    } else {
        (*last)->next = n;
        n->prev = *last;
    }
    *last = n;
}

/* Close an array or object read into `item` (type `type`, members `head` .. `last`): cJSON's
 * links (the first member's prev is the last one) and P->pos past the closing bracket. */
static bool leave(jp *P, cJSON *item, int type, cJSON *head, cJSON *last)
{
    P->depth--;
    if (head)
        head->prev = last;
    item->type = type;
    item->child = head;
    P->pos++;
    return true;
}

/* The array at P->pos (a '['), with cJSON's steps and error offsets. */
static bool read_array(jp *P, cJSON *item)
{
    cJSON *head = NULL, *last = NULL, *n;

    if (!enter(P))
        return false;
    P->pos++;
    skip_ws(P);
    if (P->pos < P->len && P->s[P->pos] == ']')
        return leave(P, item, cJSON_Array, NULL, NULL);
    if (P->pos >= P->len) {
        P->pos--;
        return false;
    }
    P->pos--; /* cJSON steps back, then forward at each member */
    do {
        if (!(n = new_node(P)))
            return false;
        append(&head, &last, n);
        P->pos++;
        skip_ws(P);
        if (!read_value(P, n))
            return false;
        skip_ws(P);
    } while (P->pos < P->len && P->s[P->pos] == ',');
    if (P->pos >= P->len || P->s[P->pos] != ']')
        return false;
    return leave(P, item, cJSON_Array, head, last);
}

/*
 * A member's key at P->pos into `n`: a string, or what sg__json_parse() hands cJSON for a big
 * integer literal there (a string of \x01 and its digits; cJSON itself fails at it, and
 * P->big_key keeps where).
 */
static bool read_key(jp *P, cJSON *n)
{
    size_t at = P->pos;
    bool big = false;

    if (at < P->len && (P->s[at] == '-' || is_digit(P->s[at]))) {
        size_t end = number_token((const char *)P->s, P->len, at, &big);
        if (big) {
            if (!(n->string = copy_token(P, at, end - at, '\x01')))
                return false;
            P->nbig++;
            if (!P->big_key)
                P->big_key = at + 1;
            P->pos = end;
            return true;
        }
    }
    return (n->string = read_string(P)) != NULL;
}

/* The object at P->pos (a '{'), with cJSON's steps and error offsets; members in text order,
 * duplicate keys kept. */
static bool dropped(const sg__json_drop *drop, int depth, const char *key)
{
    for (; key && drop->key; drop++)
        if (drop->depth == depth && *drop->key == *key && strcmp(drop->key, key) == 0)
            return true;
    return false;
}

/* The colon after a member's key, with the white space around it; false (at cJSON's offset) when
 * there is none. */
static bool colon(jp *P)
{
    skip_ws(P);
    if (P->pos >= P->len || P->s[P->pos] != ':')
        return false;
    P->pos++;
    skip_ws(P);
    return true;
}

/*
 * Skipping a value: read_value's steps without its nodes, for the values of dropped keys. Each
 * function is its read_* twin with every node and string left out; where a twin must make one to
 * decide (a string with escapes, a number, a key that is a big integer literal) it is called on a
 * scratch node, its copies going to the arena read_dropped rewinds. So a text is accepted, refused
 * and stopped at exactly where read_value does.
 */
static bool skip_value(jp *P);

static bool skip_string(jp *P)
{
    const unsigned char *q;
    if (P->pos < P->len && P->s[P->pos] == '"' && (q = plain_end(P, P->pos + 1)) != NULL) {
        P->pos = (size_t)(q - P->s) + 1;
        return true;
    }
    return read_string(P) != NULL;
}

/* An array (`close` ']') or an object ('}') at P->pos, as read_array and read_object step. */
static bool skip_container(jp *P, char close)
{
    if (!enter(P))
        return false;
    P->pos++;
    skip_ws(P);
    if (P->pos < P->len && P->s[P->pos] == close) {
        P->depth--;
        P->pos++;
        return true;
    }
    if (P->pos >= P->len) {
        P->pos--;
        return false;
    }
    P->pos--;
    do {
        if (close == '}' && P->pos + 1 >= P->len)
            return false; /* (read_object: nothing after the comma) */
        P->pos++;
        skip_ws(P);
        if (close == '}') { /* the key and its colon */
            if (P->pos < P->len && (P->s[P->pos] == '-' || is_digit(P->s[P->pos]))) {
                cJSON key;
                memset(&key, 0, sizeof key);
                if (!read_key(P, &key))
                    return false;
            } else if (!skip_string(P)) {
                return false;
            }
            if (!colon(P))
                return false;
        }
        if (!skip_value(P))
            return false;
        skip_ws(P);
    } while (P->pos < P->len && P->s[P->pos] == ',');
    if (P->pos >= P->len || P->s[P->pos] != close)
        return false;
    P->depth--;
    P->pos++;
    return true;
}

static bool skip_value(jp *P)
{
    size_t left = P->len - P->pos;
    cJSON scratch;

    if (left == 0)
        return false;
    switch (P->s[P->pos]) {
    case '"':
        return skip_string(P);
    case '[':
        return skip_container(P, ']');
    case '{':
        return skip_container(P, '}');
    case 'n':
    case 'f':
    case 't':
        break;
    default:
        if (P->s[P->pos] != '-' && !is_digit(P->s[P->pos]))
            return false;
    }
    memset(&scratch, 0, sizeof scratch); /* a literal or a number: read_value's own steps */
    return read_value(P, &scratch);
}

/* A dropped key's value: read and checked as any other (the same texts are accepted and refused,
 * skip_value), what it made given back to the arena (when it fits in the block it started in),
 * and `item` left a null. */
static bool read_dropped(jp *P, cJSON *item)
{
    sg__json_doc *d = P->doc;
    doc_block *b = d->blocks;
    char *cur = d->cur;

    if (!skip_value(P))
        return false;
    if (d->blocks == b) /* (a block begun inside it keeps what it holds until the document goes) */
        d->cur = cur;
    item->type = cJSON_NULL;
    item->child = NULL;
    item->valuestring = NULL;
    return true;
}

static bool read_object(jp *P, cJSON *item)
{
    cJSON *head = NULL, *last = NULL, *n;

    if (!enter(P))
        return false;
    P->pos++;
    skip_ws(P);
    if (P->pos < P->len && P->s[P->pos] == '}')
        return leave(P, item, cJSON_Object, NULL, NULL);
    if (P->pos >= P->len) {
        P->pos--;
        return false;
    }
    P->pos--;
    do {
        if (!(n = new_node(P)))
            return false;
        append(&head, &last, n);
        if (P->pos + 1 >= P->len)
            return false; /* nothing after the comma */
        P->pos++;
        skip_ws(P);
        if (!read_key(P, n) || !colon(P))
            return false;
        if (P->drop && dropped(P->drop, P->depth, n->string)) { /* (P->depth: this object's) */
            if (!read_dropped(P, n))
                return false;
        } else if (!read_value(P, n)) {
            return false;
        }
        skip_ws(P);
    } while (P->pos < P->len && P->s[P->pos] == ',');
    if (P->pos >= P->len || P->s[P->pos] != '}')
        return false;
    return leave(P, item, cJSON_Object, head, last);
}

/* The value at P->pos into `item`: literals, strings, numbers, arrays, objects, tried in
 * cJSON's order; false at P->pos for anything else. */
static bool read_value(jp *P, cJSON *item)
{
    const unsigned char *at = P->s + P->pos;
    size_t left = P->len - P->pos; /* P->pos <= P->len always */

    if (left == 0)
        return false;
    switch (*at) {
    case 'n':
        if (left >= 4 && memcmp(at, "null", 4) == 0) {
            item->type = cJSON_NULL;
            P->pos += 4;
            return true;
        }
        return false;
    case 'f':
        if (left >= 5 && memcmp(at, "false", 5) == 0) {
            item->type = cJSON_False;
            P->pos += 5;
            return true;
        }
        return false;
    case 't':
        if (left >= 4 && memcmp(at, "true", 4) == 0) {
            item->type = cJSON_True;
            item->valueint = 1;
            P->pos += 4;
            return true;
        }
        return false;
    case '"':
        if (!(item->valuestring = read_string(P)))
            return false;
        item->type = cJSON_String;
        P->marked |= item->valuestring[0] == '\x01';
        return true;
    case '[':
        return read_array(P, item);
    case '{':
        return read_object(P, item);
    default:
        if (*at == '-' || is_digit(*at))
            return read_number(P, item);
        return false;
    }
}

/*
 * Report why sg__json_doc_parse() failed, as sg__json_parse() reports the same text: its depth
 * check over the whole text first, then an empty text, then (P->nomem) out of memory, then a
 * value with more after it (`ok`) or a syntax error at cJSON's offset, in the caller's text.
 * Returns the error code.
 */
static int doc_error(const jp *P, bool ok, const char *text, size_t len, int max_depth,
                     const char *what, sg_error *err)
{
    size_t nbig = 0, bad = 0, line, col;

    if (scan(text, len, max_depth, &nbig, &bad) < 0) {
        line_col(text, len, bad, &line, &col);
        return sg_error_set(err, SG_ELIMIT,
                            "%s: JSON nested deeper than %d levels at byte %zu (line %zu, column %zu)",
                            what, max_depth, bad, line, col);
    }
    if (len == 0 || only_space(text, text + len))
        return sg_error_set(err, SG_EINVALID, "%s: empty JSON text", what);
    if (P->nomem)
        return sg_error_set(err, SG_ENOMEM, "%s: out of memory", what);
    if (ok) {
        /* sg__json_parse() finds the end of the value in the original text when cJSON reads
         * that too; with a big literal as a key it cannot, and the offset stays one in the
         * quoted text (each big literal 2 + BIG_MARK_LEN bytes longer) */
        bad = P->pos;
        if (P->big_key)
            bad += (2 + BIG_MARK_LEN) * P->nbig;
        while (bad < len && only_space(text + bad, text + bad + 1))
            bad++;
        if (bad > len)
            bad = len;
        line_col(text, len, bad, &line, &col);
        return sg_error_set(err, SG_EINVALID,
                            "%s: invalid JSON: unexpected text after the value at byte %zu (line %zu, column %zu)",
                            what, bad, line, col);
    }
    /* cJSON on the original text stops at a big literal key, just after its first byte */
    bad = P->big_key ? P->big_key : P->pos;
    if (bad >= len)
        bad = len - 1;
    line_col(text, len, bad, &line, &col);
    return sg_error_set(err, SG_EINVALID, "%s: invalid JSON at byte %zu (line %zu, column %zu)", what,
                        bad, line, col);
}

static int doc_parse(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                     size_t max_bytes, int max_depth, const sg__json_drop *drop, const char *what, sg_error *err);

int sg__json_doc_parse(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                       size_t max_bytes, int max_depth, const char *what, sg_error *err)
{
    return doc_parse(doc_out, root_out, text, len, max_bytes, max_depth, NULL, what, err);
}

int sg__json_doc_parse_drop(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                            size_t max_bytes, int max_depth, const sg__json_drop *drop, const char *what,
                            sg_error *err)
{
    return doc_parse(doc_out, root_out, text, len, max_bytes, max_depth, drop, what, err);
}

static int doc_parse(sg__json_doc **doc_out, const cJSON **root_out, const char *text, size_t len,
                     size_t max_bytes, int max_depth, const sg__json_drop *drop, const char *what, sg_error *err)
{
    sg__json_doc *doc = NULL;
    cJSON *root = NULL;
    jp P;
    bool ok = false;
    int rc = 0;

    *doc_out = NULL;
    *root_out = NULL;
    if (!what)
        what = "JSON";
    if (!text)
        return sg_error_set(err, SG_EINVALID, "%s: no JSON text", what);
    if (len > max_bytes)
        return sg_error_set(err, SG_ELIMIT, "%s: %zu bytes of JSON, over the limit of %zu", what,
                            len, max_bytes);
    memset(&P, 0, sizeof P);
    P.s = (const unsigned char *)text;
    P.len = len;
    P.max_depth = max_depth;
    P.drop = drop;
    P.point = localeconv()->decimal_point[0];
    P.doc = doc = sg__calloc(1, sizeof *doc);
    if (doc) {
        doc->next_cap = len < DOC_BLOCK_MAX / 4 ? 4 * len : DOC_BLOCK_MAX;
        if (doc->next_cap < DOC_BLOCK_MIN)
            doc->next_cap = DOC_BLOCK_MIN;
        root = new_node(&P);
    }
    if (root) {
        /* cJSON skips a UTF-8 byte order mark at the start of a text of 5 bytes or more */
        if (len >= 5 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
            P.pos = 3;
        skip_ws(&P);
        ok = read_value(&P, root);
    } else {
        P.nomem = true;
    }
    if (!ok || !only_space(text + P.pos, text + len)) {
        rc = doc_error(&P, ok, text, len, max_depth, what, err);
        goto cleanup;
    }
    if (P.nbig > 0 && P.marked)
        unmark_big(root); /* as sg__json_parse() does, to such strings of the text too */
    *doc_out = doc;
    *root_out = root;
    doc = NULL;
cleanup:
    sg__json_doc_free(doc);
    return rc;
}

int sg__json_doc_load_file(sg__json_doc **doc_out, const cJSON **root_out, const char *path,
                           const sg__json_drop *drop, const char *what, sg_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc;

    *doc_out = NULL;
    *root_out = NULL;
    rc = sg__read_file(&text, &len, path, SG_JSON_MAX_BYTES, what, err);
    if (rc == 0)
        rc = doc_parse(doc_out, root_out, text, len, SG_JSON_MAX_BYTES, SG_JSON_MAX_DEPTH, drop,
                       what ? what : path, err);
    sg_free(text);
    return rc;
}

/* ---- reading members ----------------------------------------------------------- */

const cJSON *sg__json_get(const cJSON *obj, const char *key)
{
    if (!cJSON_IsObject(obj) || !key)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

bool sg__json_is_none(const cJSON *j) { return !j || cJSON_IsNull(j); }

const char *sg__json_str(const cJSON *j) { return cJSON_IsString(j) ? j->valuestring : NULL; }

bool sg__json_int(const cJSON *j, sg_int *out)
{
    double v;

    if (cJSON_IsString(j) || cJSON_IsRaw(j)) { /* Raw: a big integer literal (quote_big) */
        const char *s = j->valuestring;
        return s && sg_int_parse(out, s, strlen(s)) == 0;
    }
    if (!cJSON_IsNumber(j))
        return false;
    v = j->valuedouble;
    /* The range test also rejects NaN; then the cast is exact for integers. */
    if (!(v >= -EXACT_DOUBLE_MAX && v <= EXACT_DOUBLE_MAX) || (double)(long long)v != v)
        return false;
    *out = (sg_int)(long long)v;
    return true;
}

/* ---- writing ---------------------------------------------------------------- */

const cJSON *sg__json_seq(const cJSON *j)
{
    const cJSON *tu;
    if (cJSON_IsArray(j))
        return j;
    tu = sg__json_get(j, "__tuple__");
    return cJSON_IsArray(tu) ? tu : NULL;
}

bool sg__json_index_key(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int sg__json_put_str(sg_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const char *run = s;

    sg_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *esc = NULL;
        char u[7];
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\b')
            esc = "\\b";
        else if (c == '\f')
            esc = "\\f";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\r')
            esc = "\\r";
        else if (c < 0x20) {
            u[0] = '\\';
            u[1] = 'u';
            u[2] = '0';
            u[3] = '0';
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            u[6] = '\0';
            esc = u;
        }
        if (esc) {
            sg_buf_append(b, run, (size_t)(s - run));
            sg_buf_puts(b, esc);
            run = s + 1;
        }
    }
    sg_buf_append(b, run, (size_t)(s - run));
    return sg_buf_putc(b, '"');
}

int sg__json_put_str_or_null(sg_buf *b, const char *s)
{
    return s ? sg__json_put_str(b, s) : sg_buf_puts(b, "null");
}

int sg__json_put_field(sg_buf *b, const char *lead, const char *s)
{
    sg_buf_puts(b, lead);
    return sg__json_put_str_or_null(b, s);
}

int sg__json_put_opt_member(sg_buf *b, const char *key, const char *s)
{
    if (!s)
        return 0;
    sg_buf_printf(b, ", \"%s\": ", key);
    return sg__json_put_str(b, s);
}

int sg__json_put_int(sg_buf *b, sg_int v)
{
    char tmp[SG_INT_STRLEN];
    return sg_buf_puts(b, sg_int_format(tmp, v));
}

/* The writer of sg__json_put_value(), with the nesting level. */
static int put_value(sg_buf *b, const cJSON *j, int depth)
{
    const cJSON *it;
    bool first = true;

    if (depth > SG_JSON_MAX_DEPTH)
        return b->failed = SG_ELIMIT;
    if (!j || cJSON_IsNull(j) || cJSON_IsInvalid(j))
        return sg_buf_puts(b, "null");
    if (cJSON_IsTrue(j))
        return sg_buf_puts(b, "true");
    if (cJSON_IsFalse(j))
        return sg_buf_puts(b, "false");
    if (cJSON_IsString(j))
        return sg__json_put_str(b, j->valuestring ? j->valuestring : "");
    if (cJSON_IsRaw(j)) /* a big integer literal, digits as read */
        return sg_buf_puts(b, j->valuestring ? j->valuestring : "null");
    if (cJSON_IsNumber(j)) {
        sg_int v;
        if (sg__json_int(j, &v))
            return sg__json_put_int(b, v);
        if (!isfinite(j->valuedouble))
            return sg_buf_puts(b, "null");
        return sg_buf_printf(b, "%.17g", j->valuedouble);
    }
    if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
        bool object = cJSON_IsObject(j);
        sg_buf_putc(b, object ? '{' : '[');
        cJSON_ArrayForEach(it, j) {
            if (!first)
                sg_buf_putc(b, ',');
            first = false;
            if (object) {
                sg__json_put_str(b, it->string ? it->string : "");
                sg_buf_putc(b, ':');
            }
            put_value(b, it, depth + 1);
        }
        return sg_buf_putc(b, object ? '}' : ']');
    }
    /* cJSON_Raw never comes out of the parser. */
    return sg_buf_puts(b, "null");
}

int sg__json_put_value(sg_buf *b, const cJSON *j) { return put_value(b, j, 1); }
