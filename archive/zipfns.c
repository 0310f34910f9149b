/*
 * zipfns.c - libzip bound at its first use (archive/zipfns.h).
 */
#define SG_ZIPFNS_IMPL
#include "archive/zipfns.h"
#include "util/dynlib.h"

SG_DYNLIB_DEFINE(sg_zip_fns, sg_archive__zip, SG_ZIP_FUNCTIONS, SG_LIBZIP_SONAME, sg_archive__zip_load)
