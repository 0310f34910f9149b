/*
 * error.c - the sg_error record and status names.
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
