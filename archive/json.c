/*
 * json.c - the two things the archive layer does to model JSON text without
 * parsing it into a tree: find the top-level "schema_version" (a linear scan
 * that skips every other value, tolerant of torch <= 2.6's bare Infinity/NaN
 * tokens), and quote those bare tokens so that strict parsers accept them.
 */
#include <stdlib.h>
#include <string.h>

#include "archive/archive_int.h"

typedef struct scan {
    const char *p;
    const char *start;
    const char *end;
} scan;

/* Past JSON whitespace. */
static void skip_ws(scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* A byte that ends a bare token (number, literal). */
static bool is_delim(char c)
{
    return c == ',' || c == '}' || c == ']' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* At a '"': move past the closing quote. False when the text ends first. */
static bool skip_string(scan *s)
{
    s->p++;
    while (s->p < s->end) {
        char c = *s->p++;
        if (c == '\\') {
            if (s->p == s->end)
                return false;
            s->p++;
        } else if (c == '"') {
            return true;
        }
    }
    return false;
}

/* Skip one value of any kind. Brackets are only counted, not matched: the
 * graph layer's parser validates; this scan only has to stay in step. */
static bool skip_value(scan *s)
{
    skip_ws(s);
    if (s->p == s->end)
        return false;
    if (*s->p == '"')
        return skip_string(s);
    if (*s->p == '{' || *s->p == '[') {
        size_t depth = 0;
        while (s->p < s->end) {
            char c = *s->p;
            if (c == '"') {
                if (!skip_string(s))
                    return false;
                continue;
            }
            s->p++;
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return true;
            }
        }
        return false;
    }
    {
        const char *start = s->p;
        while (s->p < s->end && !is_delim(*s->p))
            s->p++;
        return s->p > start;
    }
}

/* A small non-negative or negative integer (|v| < 10^9). */
static bool parse_int(scan *s, int *out)
{
    long v = 0;
    bool neg = false;
    const char *start;

    skip_ws(s);
    if (s->p < s->end && *s->p == '-') {
        neg = true;
        s->p++;
    }
    start = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
        if (s->p - start >= 9)
            return false;
        v = v * 10 + (*s->p - '0');
        s->p++;
    }
    if (s->p == start || (s->p < s->end && !is_delim(*s->p)))
        return false;
    *out = (int)(neg ? -v : v);
    return true;
}

/* At a '"': the key's raw bytes (escapes not decoded), then past the ':'. */
static bool read_key(scan *s, const char **key, size_t *klen)
{
    const char *k;
    skip_ws(s);
    if (s->p == s->end || *s->p != '"')
        return false;
    k = s->p + 1;
    if (!skip_string(s))
        return false;
    *key = k;
    *klen = (size_t)(s->p - 1 - k);
    skip_ws(s);
    if (s->p == s->end || *s->p != ':')
        return false;
    s->p++;
    return true;
}

/* The raw key equals `want`. */
static bool key_is(const char *key, size_t klen, const char *want)
{
    return klen == strlen(want) && memcmp(key, want, klen) == 0;
}

/* SG_EINVALID for the position the scan stopped at. */
static int malformed(scan *s, sg_error *err)
{
    size_t at = (size_t)(s->p - s->start);
    return sg_error_set_at(err, SG_EINVALID, at < 0x7fffffff ? (int)at + 1 : 0,
                           "malformed near byte %zu", at);
}

/* The value of "schema_version": {"major": M, "minor": m, ...}. */
static int read_schema_value(scan *s, sg_archive_schema *out, sg_error *err)
{
    bool have_major = false, have_minor = false;
    const char *key;
    size_t klen;

    skip_ws(s);
    if (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || *s->p == '-')) {
        int v;
        if (!parse_int(s, &v))
            return malformed(s, err);
        return sg_error_set(err, SG_EUNSUPPORTED,
                            "schema_version is the single number %d of torch 2.1/2.2, which shapegate does not read", v);
    }
    if (s->p == s->end || *s->p != '{')
        return sg_error_set(err, SG_EINVALID, "schema_version is not an object {major, minor}");
    s->p++;
    skip_ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            if (!read_key(s, &key, &klen))
                return malformed(s, err);
            if (key_is(key, klen, "major")) {
                if (!parse_int(s, &out->major))
                    return sg_error_set(err, SG_EINVALID, "schema_version.major is not an integer");
                have_major = true;
            } else if (key_is(key, klen, "minor")) {
                if (!parse_int(s, &out->minor))
                    return sg_error_set(err, SG_EINVALID, "schema_version.minor is not an integer");
                have_minor = true;
            } else if (!skip_value(s)) {
                return malformed(s, err);
            }
            skip_ws(s);
            if (s->p < s->end && *s->p == ',') {
                s->p++;
                continue;
            }
            if (s->p < s->end && *s->p == '}') {
                s->p++;
                break;
            }
            return malformed(s, err);
        }
    }
    if (!have_major || !have_minor)
        return sg_error_set(err, SG_EINVALID, "schema_version lacks its %s", have_major ? "minor" : "major");
    return 0;
}

int sg_archive__scan_schema(const char *json, size_t len, sg_archive_schema *out, sg_error *err)
{
    scan s = {json, json, json + len};
    const char *key;
    size_t klen;

    out->major = out->minor = -1;
    skip_ws(&s);
    if (s.p == s.end || *s.p != '{')
        return sg_error_set(err, SG_EINVALID, "the text is not a JSON object");
    s.p++;
    skip_ws(&s);
    if (s.p < s.end && *s.p == '}')
        return sg_error_set(err, SG_EINVALID, "no schema_version field");
    for (;;) {
        if (!read_key(&s, &key, &klen))
            return malformed(&s, err);
        if (key_is(key, klen, "schema_version"))
            return read_schema_value(&s, out, err);
        if (!skip_value(&s))
            return malformed(&s, err);
        skip_ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            continue;
        }
        if (s.p < s.end && *s.p == '}')
            return sg_error_set(err, SG_EINVALID, "no schema_version field");
        return malformed(&s, err);
    }
}

/* Length of the bare non-finite token at json[i] ("NaN", "Infinity",
 * "-Infinity"), or 0. */
static size_t nonfinite_at(const char *json, size_t len, size_t i)
{
    static const char *const tokens[] = {"NaN", "Infinity", "-Infinity"};
    size_t t;
    for (t = 0; t < 3; t++) {
        size_t n = strlen(tokens[t]);
        if (len - i >= n && memcmp(json + i, tokens[t], n) == 0 && (len - i == n || is_delim(json[i + n])))
            return n;
    }
    return 0;
}

int sg_archive_json_quote_nonfinite(char **json, size_t *len, size_t *count, sg_error *err)
{
    const char *in = *json;
    size_t n = *len, i, found = 0, o = 0;
    char *out;

    if (count)
        *count = 0;
    for (i = 0; i < n; i++) {
        if (in[i] == '"') {
            for (i++; i < n && in[i] != '"'; i++)
                if (in[i] == '\\')
                    i++;
            continue;
        }
        if (in[i] == 'N' || in[i] == 'I' || in[i] == '-') {
            size_t t = nonfinite_at(in, n, i);
            if (t) {
                found++;
                i += t - 1;
            }
        }
    }
    if (found == 0)
        return 0;
    if (!(out = sg__malloc(n + 2 * found + 1)))
        return sg_error_set(err, SG_ENOMEM, "out of memory quoting non-finite numbers");
    for (i = 0; i < n;) {
        size_t t;
        if (in[i] == '"') {
            size_t j = i + 1;
            while (j < n && in[j] != '"')
                j += in[j] == '\\' ? 2 : 1;
            j = j < n ? j + 1 : n;
            memcpy(out + o, in + i, j - i);
            o += j - i;
            i = j;
            continue;
        }
        if ((in[i] == 'N' || in[i] == 'I' || in[i] == '-') && (t = nonfinite_at(in, n, i)) != 0) {
            out[o++] = '"';
            memcpy(out + o, in + i, t);
            o += t;
            out[o++] = '"';
            i += t;
            continue;
        }
        out[o++] = in[i++];
    }
    out[o] = '\0';
    free(*json);
    *json = out;
    *len = o;
    if (count)
        *count = found;
    return 0;
}
