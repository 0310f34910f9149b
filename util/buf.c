/*
 * buf.c - sg_buf, a bounded growable string (see util.h for the contract).
 */
#include <stdio.h>
#include <string.h>

#include "util.h"

void sg_buf_init(sg_buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

void sg_buf_dispose(sg_buf *b)
{
    sg_free(b->data);
    memset(b, 0, sizeof *b);
}

int sg_buf_append(sg_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return b->failed;
    if (n > b->max || b->len > b->max - n)
        return b->failed = SG_ELIMIT;
    if (b->len + n + 1 > b->cap && sg__grow((void **)&b->data, &b->cap, b->len + n + 1, 1))
        return b->failed = SG_ENOMEM;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int sg_buf_puts(sg_buf *b, const char *s) { return sg_buf_append(b, s, strlen(s)); }

int sg_buf_putc(sg_buf *b, char c) { return sg_buf_append(b, &c, 1); }

int sg_buf_put_size(sg_buf *b, size_t n, char end)
{
    char t[24];
    size_t i = sizeof t;
    t[--i] = end;
    do {
        t[--i] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    return sg_buf_append(b, t + i, sizeof t - i);
}

int sg__vformat(char *small, size_t cap, char **out, size_t *len, const char *fmt, va_list ap)
{
    va_list again;
    char *big;
    int n;

    *out = NULL;
    *len = 0;
    va_copy(again, ap);
    n = vsnprintf(small, cap, fmt, again);
    va_end(again);
    if (n < 0)
        return SG_ERROR;
    *len = (size_t)n;
    if ((size_t)n < cap) {
        *out = small;
        return 0;
    }
    if (!(big = sg__malloc((size_t)n + 1)))
        return SG_ENOMEM;
    va_copy(again, ap);
    vsnprintf(big, (size_t)n + 1, fmt, again);
    va_end(again);
    *out = big;
    return 0;
}

int sg_buf_printf(sg_buf *b, const char *fmt, ...)
{
    char small[256], *s;
    size_t n;
    va_list ap;
    int rc;

    if (b->failed)
        return b->failed;
    va_start(ap, fmt);
    rc = sg__vformat(small, sizeof small, &s, &n, fmt, ap);
    va_end(ap);
    if (rc)
        return b->failed = rc;
    rc = sg_buf_append(b, s, n);
    if (s != small)
        sg_free(s);
    return rc;
}

int sg_buf_put_int(sg_buf *b, sg_int v, char end)
{
    char t[SG_INT_STRLEN + 1];
    size_t n = strlen(sg_int_format(t, v));
    t[n] = end;
    return sg_buf_append(b, t, n + 1);
}

int sg_buf_put_bound(sg_buf *b, sg_bound x, char end)
{
    char t[2] = {x.inf < 0 ? '-' : '+', end};
    return x.inf ? sg_buf_append(b, t, 2) : sg_buf_put_int(b, x.v, end);
}

char *sg_buf_take(sg_buf *b)
{
    char *s;
    if (b->failed)
        return NULL;
    if (!b->data && sg_buf_append(b, "", 0))
        return NULL;
    s = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

int sg_buf_finish(sg_buf *b, char **out, const char *what, sg_error *err)
{
    int rc = b->failed;
    size_t max = b->max;
    *out = rc ? NULL : sg_buf_take(b);
    if (*out)
        return 0;
    sg_buf_dispose(b);
    if (rc == SG_ELIMIT)
        return sg_error_set(err, rc, "%s longer than %zu bytes", what, max);
    return sg_error_set(err, SG_ENOMEM, "out of memory making %s", what);
}
