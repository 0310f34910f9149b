/*
 * zipfns.c - libzip bound at its first use (archive/zipfns.h).
 */
#define SG_ZIPFNS_IMPL
#include "archive/zipfns.h"
#include "util/dynlib.h"

#define SG_ZIP_NAME(f) #f,
static const char *const names[] = {SG_ZIP_FUNCTIONS(SG_ZIP_NAME)};
#undef SG_ZIP_NAME

_Static_assert(sizeof(sg_zip_fns) == sizeof names / sizeof names[0] * sizeof(void *),
               "every slot is a function pointer the size of an object pointer");

sg_zip_fns sg_archive__zip;

static sg_dynlib zip_lib = {SG_LIBZIP_SONAME, names, sizeof names / sizeof names[0], &sg_archive__zip,
                            PTHREAD_ONCE_INIT, 0, ""};

int sg_archive__zip_load(sg_error *err) { return sg_dynlib_load(&zip_lib, err); }
