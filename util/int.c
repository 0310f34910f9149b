/*
 * int.c - the 128-bit integers inside (util/int.h): decimal conversion,
 * Python floor division and modulo, and the API's sg_num (common.h); the
 * library's version string.
 */
#include <stdio.h>
#include <string.h>

#include "util/util.h"

const char *sg_version(void) { return SG_VERSION_STRING; }

char *sg_int_format(char buf[SG_INT_STRLEN], sg_int v)
{
    char tmp[SG_INT_STRLEN];
    size_t n = 0, i = 0;
    sg_uint u = v < 0 ? (sg_uint)0 - (sg_uint)v : (sg_uint)v;

    while (u > UINT64_MAX) { /* 128-bit division (a library call) only for the high digits */
        tmp[n++] = (char)('0' + (int)(u % 10));
        u /= 10;
    }
    {
        uint64_t w = (uint64_t)u;
        do {
            tmp[n++] = (char)('0' + (int)(w % 10));
            w /= 10;
        } while (w);
    }
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

sg_num sg__num(sg_int v)
{
    sg_num n;
    memset(&n, 0, sizeof n);
    n.big = v < INT64_MIN || v > INT64_MAX;
    n.value = n.big ? 0 : (int64_t)v;
    sg_int_format(n.text, v);
    return n;
}

sg_num sg__num_bound(sg_bound b)
{
    sg_num n;
    if (!b.inf)
        return sg__num(b.v);
    memset(&n, 0, sizeof n);
    n.inf = b.inf < 0 ? -1 : 1;
    snprintf(n.text, sizeof n.text, "%s", b.inf < 0 ? "-int_oo" : "int_oo");
    return n;
}

bool sg__num_int(const sg_num *n, sg_int *out)
{
    if (n->inf)
        return false;
    if (!n->big) {
        *out = n->value;
        return true;
    }
    return sg_int_parse(out, n->text, strlen(n->text)) == 0;
}

sg_num sg_num_of(int64_t v) { return sg__num(v); }

int sg_num_parse(sg_num *out, const char *text)
{
    sg_bound b = {0, 0};
    int rc;
    if (!out || !text)
        return SG_EINVALID;
    if (strcmp(text, "int_oo") == 0 || strcmp(text, "oo") == 0)
        b.inf = 1;
    else if (strcmp(text, "-int_oo") == 0 || strcmp(text, "-oo") == 0)
        b.inf = -1;
    else if ((rc = sg_int_parse(&b.v, text, strlen(text))) != 0)
        return rc;
    *out = sg__num_bound(b);
    return 0;
}
