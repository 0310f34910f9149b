/*
 * json.c - the JSON helpers of util/json.h: bounded file reading, parsing with
 * cJSON under size and nesting limits with exact big integers, typed member
 * access, and a compact JSON writer into an sg_buf.
 */
#define _POSIX_C_SOURCE 200809L

#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
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
 * The end of the string whose contents start at `i` (just after its opening quote): the offset
 * just after its closing quote, or `len` when it has none. A quote closes the string when an even
 * number of backslashes precede it (each pair is one escaped backslash); memchr finds the quotes,
 * so the contents (most of a trace's bytes: source lines and stacks) are not walked byte by byte.
 */
static size_t string_end(const char *text, size_t len, size_t i)
{
    const char *q;
    while (i < len && (q = memchr(text + i, '"', len - i)) != NULL) {
        size_t j = (size_t)(q - text), k = j;
        while (k > i && text[k - 1] == '\\')
            k--;
        if ((j - k) % 2 == 0)
            return j + 1;
        i = j + 1;
    }
    return len;
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
