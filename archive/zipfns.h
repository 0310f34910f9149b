/*
 * zipfns.h - private to archive/: libzip, bound at the first archive opened
 * (util/dynlib.h) rather than at every process start, so that the commands that
 * read no .pt2 do not load it (nor libcrypto, bzip2 and zlib, which it links).
 *
 * Include this instead of <zip.h>: every libzip function archive/ calls is listed
 * below and named by a macro that calls through its slot, so call sites read as
 * plain libzip calls. sg_archive__zip_load() must have returned 0 before any of
 * them is called (sg_archive_open does it first).
 */
#ifndef SG_ARCHIVE_ZIPFNS_H
#define SG_ARCHIVE_ZIPFNS_H

#include <zip.h>

#include "shapegate/error.h"

/* The libzip functions archive/ calls; a new call adds its name here and its macro below. */
#define SG_ZIP_FUNCTIONS(X)                                                                              \
    X(zip_compression_method_supported) X(zip_discard) X(zip_error_code_zip) X(zip_error_fini)          \
    X(zip_error_init) X(zip_error_set) X(zip_error_strerror) X(zip_error_to_data) X(zip_fclose)         \
    X(zip_file_get_error) X(zip_fopen_index) X(zip_fread) X(zip_get_error) X(zip_get_num_entries)       \
    X(zip_open_from_source) X(zip_source_free) X(zip_source_function_create)                            \
    X(zip_source_make_command_bitmap) X(zip_source_seek_compute_offset) X(zip_stat_index) X(zip_stat_init)

/* A slot per function, of its own pointer type. */
typedef struct sg_zip_fns {
#define SG_ZIP_SLOT(f) __typeof__(&f) f;
    SG_ZIP_FUNCTIONS(SG_ZIP_SLOT)
#undef SG_ZIP_SLOT
} sg_zip_fns;

extern sg_zip_fns sg_archive__zip;

/* Load libzip (once per process): 0, or SG_ERROR "cannot load libzip.so.N: ..." in err. */
int sg_archive__zip_load(sg_error *err);

#ifndef SG_ZIPFNS_IMPL
#define zip_compression_method_supported (*sg_archive__zip.zip_compression_method_supported)
#define zip_discard (*sg_archive__zip.zip_discard)
#define zip_error_code_zip (*sg_archive__zip.zip_error_code_zip)
#define zip_error_fini (*sg_archive__zip.zip_error_fini)
#define zip_error_init (*sg_archive__zip.zip_error_init)
#define zip_error_set (*sg_archive__zip.zip_error_set)
#define zip_error_strerror (*sg_archive__zip.zip_error_strerror)
#define zip_error_to_data (*sg_archive__zip.zip_error_to_data)
#define zip_fclose (*sg_archive__zip.zip_fclose)
#define zip_file_get_error (*sg_archive__zip.zip_file_get_error)
#define zip_fopen_index (*sg_archive__zip.zip_fopen_index)
#define zip_fread (*sg_archive__zip.zip_fread)
#define zip_get_error (*sg_archive__zip.zip_get_error)
#define zip_get_num_entries (*sg_archive__zip.zip_get_num_entries)
#define zip_open_from_source (*sg_archive__zip.zip_open_from_source)
#define zip_source_free (*sg_archive__zip.zip_source_free)
#define zip_source_function_create (*sg_archive__zip.zip_source_function_create)
#define zip_source_make_command_bitmap (*sg_archive__zip.zip_source_make_command_bitmap)
#define zip_source_seek_compute_offset (*sg_archive__zip.zip_source_seek_compute_offset)
#define zip_stat_index (*sg_archive__zip.zip_stat_index)
#define zip_stat_init (*sg_archive__zip.zip_stat_init)
#endif

#endif
