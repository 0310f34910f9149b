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

#ifdef SG_BIND_EAGERLY /* (a sanitizer build: linked, the table filled at link time; CMakeLists.txt says why) */
#define SG_ADDR(f) f,
sg_zip_fns sg_archive__zip = {SG_ZIP_FUNCTIONS(SG_ADDR)};
#undef SG_ADDR
#else
sg_zip_fns sg_archive__zip;
#endif

static sg_dynlib zip_lib = {SG_LIBZIP_SONAME, names, sizeof names / sizeof names[0], &sg_archive__zip,
                            PTHREAD_ONCE_INIT, 0, ""};

int sg_archive__zip_load(sg_error *err)
{
#ifdef SG_BIND_EAGERLY
    (void)err;
    (void)&zip_lib;
    return 0;
#else
    return sg_dynlib_load(&zip_lib, err);
#endif
}
