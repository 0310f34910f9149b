/*
 * error.c - the sg_error record, status names, and 128-bit integer helpers
 * (decimal conversion, Python floor division and modulo).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static int vset(sg_error *err, int code, int col, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->col = col;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

int sg_error_set(sg_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

void sg__error_one_line(sg_error *err)
{
    if (!err)
        return;
    for (char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

int sg__input_code(int rc)
{
    return rc == SG_EUNDEFINED ? SG_EINVALID : rc == SG_EOVERFLOW ? SG_ELIMIT : rc;
}

int sg_error_set_at(sg_error *err, int code, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, col, fmt, ap);
    va_end(ap);
    return code;
}

void sg_error_clear(sg_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

const char *sg_strerror(int code)
{
    switch (code) {
    case SG_OK: return "ok";
    case SG_EINVALID: return "invalid input";
    case SG_ELIMIT: return "over a limit";
    case SG_ENOMEM: return "out of memory";
    case SG_EUNDEFINED: return "undefined";
    case SG_EOVERFLOW: return "overflow";
    case SG_EUNSUPPORTED: return "unsupported";
    case SG_EIO: return "i/o error";
    default: return "error";
    }
}

char *sg_int_format(char buf[SG_INT_STRLEN], sg_int v)
{
    char tmp[SG_INT_STRLEN];
    size_t n = 0, i = 0;
    sg_uint u = v < 0 ? (sg_uint)0 - (sg_uint)v : (sg_uint)v;

    do {
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0)
        buf[i++] = '-';
    while (n)
        buf[i++] = tmp[--n];
    buf[i] = '\0';
    return buf;
}

int sg_int_parse(sg_int *out, const char *text, size_t len)
{
    size_t i = 0;
    bool neg = false;
    sg_int v = 0;

    if (i < len && text[i] == '-') {
        neg = true;
        i++;
    }
    if (i == len)
        return SG_EINVALID;
    for (; i < len; i++) {
        int d = text[i] - '0';
        if (d < 0 || d > 9)
            return SG_EINVALID;
        /* accumulate negatively so that SG_INT_MIN is reachable */
        if (!sg__mul(v, 10, &v) || !sg__sub(v, d, &v))
            return SG_EOVERFLOW;
    }
    if (!neg && !sg__mul(v, -1, &v))
        return SG_EOVERFLOW;
    *out = v;
    return 0;
}

bool sg__floordiv(sg_int a, sg_int b, sg_int *r)
{
    sg_int q, m;
    if (b == -1)
        return sg__mul(a, -1, r);
    q = a / b;
    m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        q -= 1;
    *r = q;
    return true;
}

bool sg__pymod(sg_int a, sg_int b, sg_int *r)
{
    sg_int m;
    if (b == -1) {
        *r = 0;
        return true;
    }
    m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    *r = m;
    return true;
}

sg_int sg__gcd(sg_int a, sg_int b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        sg_int t = a % b;
        a = b;
        b = t;
    }
    return a;
}
