/*
 * paths.c - pytree paths of tensor inputs ("['inputs']['b'][1]"), their dotted
 * form ("inputs.b.1") and the small lexical helpers the spec readers share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_impl.h"

/*
 * One component of a pytree path at `p`: "['key']" / "[\"key\"]" (`*key`,
 * `*keylen`; returns 1), "[N]" (`*index`; returns 2); 0 at the end of the
 * path, -1 for anything else. `*next` is set past the component.
 */
int sg_trace__path_component(const char *p, const char **key, size_t *keylen, long *index,
                          const char **next)
{
    if (*p == '\0')
        return 0;
    if (p[0] != '[')
        return -1;
    if (p[1] == '\'' || p[1] == '"') {
        const char *end = p + 2;
        while (*end && !(end[0] == p[1] && end[1] == ']'))
            end++;
        if (!*end)
            return -1;
        *key = p + 2;
        *keylen = (size_t)(end - (p + 2));
        *next = end + 2;
        return 1;
    } else {
        char *end;
        long v;
        if (p[1] < '0' || p[1] > '9')
            return -1;
        errno = 0;
        v = strtol(p + 1, &end, 10);
        if (errno || *end != ']')
            return -1;
        *index = v;
        *next = end + 1;
        return 2;
    }
}

/* Whether the pytree path `path` written dotted ("inputs.b.1") is `s[0..len)`. */
static bool dotted_equals(const char *path, const char *s, size_t len)
{
    const char *p = path, *key, *next;
    size_t keylen, at = 0;
    long index;
    int kind;
    char num[32];

    while ((kind = sg_trace__path_component(p, &key, &keylen, &index, &next)) > 0) {
        if (at > 0) {
            if (at >= len || s[at] != '.')
                return false;
            at++;
        }
        if (kind == 2) {
            snprintf(num, sizeof num, "%ld", index);
            key = num;
            keylen = strlen(num);
        }
        if (len - at < keylen || memcmp(s + at, key, keylen) != 0)
            return false;
        at += keylen;
        p = next;
    }
    return kind == 0 && at == len && at > 0;
}

/* Append the dotted form of `path` ("inputs.b.1"), or `path` itself when it has no such form. */
static void put_dotted(sg_buf *b, const char *path)
{
    const char *p = path, *key, *next;
    size_t keylen;
    long index;
    int kind, k = 0;
    sg_buf tmp;

    sg_buf_init(&tmp, 4096);
    while ((kind = sg_trace__path_component(p, &key, &keylen, &index, &next)) > 0) {
        if (k++)
            sg_buf_putc(&tmp, '.');
        if (kind == 1)
            sg_buf_append(&tmp, key, keylen);
        else
            sg_buf_printf(&tmp, "%ld", index);
        p = next;
    }
    if (kind == 0 && !tmp.failed && tmp.len)
        sg_buf_puts(b, tmp.data);
    else
        sg_buf_puts(b, path);
    sg_buf_dispose(&tmp);
}

/* "x (2 dims), y (1 dim)": the tensor inputs, cut short past about 120 bytes. */
void sg_trace__put_input_list(sg_buf *b, const sg_input_dim *in, size_t n)
{
    size_t i = 0, start = b->len;
    int k = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && strcmp(in[j].path, in[i].path) == 0)
            j++;
        if (b->len - start > 120) {
            sg_buf_puts(b, ", ...");
            return;
        }
        if (k++)
            sg_buf_puts(b, ", ");
        put_dotted(b, in[i].path);
        sg_buf_printf(b, " (%zu dim%s)", j - i, j - i == 1 ? "" : "s");
        i = j;
    }
    if (k == 0)
        sg_buf_puts(b, "none");
}

/* The first input dim of the tensor at `path[0..len)` (bracketed exactly, or dotted) and its
 * number of dims; false when there is none. */
bool sg_trace__find_tensor(const sg_input_dim *in, size_t n, const char *path, size_t len, size_t *first,
                        size_t *rank)
{
    size_t i, j;
    for (i = 0; i < n; i = j) {
        for (j = i; j < n && strcmp(in[j].path, in[i].path) == 0; j++)
            ;
        if ((strlen(in[i].path) == len && memcmp(in[i].path, path, len) == 0)
            || dotted_equals(in[i].path, path, len)) {
            *first = i;
            *rank = j - i;
            return true;
        }
    }
    return false;
}

/* A non-negative decimal integer `s[0..len)` into `*out`; false when it is not one or too large. */
bool sg_trace__parse_nat(const char *s, size_t len, sg_int *out)
{
    sg_int v = 0;
    size_t i;
    if (len == 0 || len > 36)
        return false;
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || !sg__mul(v, 10, &v) || !sg__add(v, s[i] - '0', &v))
            return false;
    }
    *out = v;
    return true;
}

/* Whether `s[0..len)` is an identifier. */
bool sg_trace__is_ident(const char *s, size_t len)
{
    size_t i;
    if (len == 0 || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return false;
    for (i = 1; i < len; i++)
        if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')
              || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* Whether some tensor's path is `path` or lies below it. */
bool sg_trace__path_known(const sg_input_dim *in, size_t n, const char *path, size_t len)
{
    size_t i;
    if (!path)
        return false;
    for (i = 0; i < n; i++)
        if (strncmp(in[i].path, path, len) == 0 && (in[i].path[len] == '\0' || in[i].path[len] == '[' || in[i].path[len] == '.'))
            return true;
    return false;
}

