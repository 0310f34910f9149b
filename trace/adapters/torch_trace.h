/*
 * torch_trace.h - the TORCH_TRACE input adapter (trace/adapters/torch_trace.c):
 * torch's structured trace log (what `TORCH_TRACE=DIR` writes and tlparse
 * reads) turned into one trace per export frame. Library-internal; the public
 * entry points are sg_trace_load_torch_trace() and sg_trace_load_frame()
 * (include/shapegate/trace.h). docs/trace-format.md §3 says what is read.
 */
#ifndef SG_TRACE_ADAPTERS_TORCH_TRACE_H
#define SG_TRACE_ADAPTERS_TORCH_TRACE_H

#include <stdbool.h>

#include "shapegate/error.h"

/* What a file looks like from its first bytes. */
typedef enum sg_trace__file_kind {
    SG_TRACE_FILE_JSON,     /* starts (after white space) with '{': a JSON trace */
    SG_TRACE_FILE_LOG,      /* a glog line ("V1201 23:48:54.940000 17641 file.py:22] ...") or gzip */
    SG_TRACE_FILE_PT2,      /* a zip archive: a .pt2 */
    SG_TRACE_FILE_UNKNOWN   /* anything else (also an empty file) */
} sg_trace__file_kind;

/* The kind of the regular file `path` (SG_TRACE_FILE_UNKNOWN when it cannot be read). */
sg_trace__file_kind sg_trace__sniff_file(const char *path);

/* Whether folder `dir` is a TORCH_TRACE directory: no guards.json, and at least one
 * regular file named *.log or *.log.gz. */
bool sg_trace__is_torch_trace_dir(const char *dir);

#endif
