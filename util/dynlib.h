/*
 * dynlib.h - a shared library bound at its first use instead of at start.
 *
 * A program that links a library pays for it at every start (mapping, relocation,
 * the page faults of both: libzip with libcrypto about 3 ms a process on the
 * reference VM) whether or not it calls it. A library a command may not need is
 * therefore opened here, by its soname, the first time it is needed, and its
 * functions resolved into a table of typed pointers; the module's own header
 * lists them (archive/zipfns.h) and maps each name to its slot, so call sites
 * read as plain calls.
 *
 * Functions are resolved in the global scope after the library is opened with
 * RTLD_GLOBAL, so a library preloaded to interpose on them still sees the calls.
 * Thread-safe (once per process); the library is never closed.
 */
#ifndef SG_UTIL_DYNLIB_H
#define SG_UTIL_DYNLIB_H

#include <pthread.h>
#include <stddef.h>

#include "shapegate/error.h"

typedef struct sg_dynlib {
    const char *soname;       /* what dlopen is given ("libzip.so.4": the build's, CMake) */
    const char *const *names; /* the functions to resolve, in the table's order */
    size_t n;
    void *table;              /* n function pointers, of any types (a struct of them) */
    pthread_once_t once;      /* PTHREAD_ONCE_INIT */
    int rc;                   /* after the first load: 0, or SG_ERROR */
    char why[200];            /* what failed: dlerror()'s text */
} sg_dynlib;

/* Open the library and fill its table, once per process. 0, or SG_ERROR with "cannot load
 * SONAME: ..." in err (every later call fails the same way). In a build with SG_BIND_EAGERLY (the
 * sanitizer builds: CMakeLists.txt says why) the tables are filled at link time: 0 at once. */
int sg_dynlib_load(sg_dynlib *lib, sg_error *err);

/*
 * In a module's .c file: the table `var` (of the struct type `type`, one slot per function) for
 * the functions the X-macro LIST names, the library `soname` behind it, and `int load(sg_error *)`
 * that binds it (sg_dynlib_load). With SG_BIND_EAGERLY the table holds the functions' addresses.
 */
#define SG_DYNLIB_NAME(f) #f,
#define SG_DYNLIB_ADDR(f) f,
#ifdef SG_BIND_EAGERLY
#define SG_DYNLIB_TABLE(type, var, LIST) type var = {LIST(SG_DYNLIB_ADDR)}
#else
#define SG_DYNLIB_TABLE(type, var, LIST) type var
#endif
#define SG_DYNLIB_DEFINE(type, var, LIST, soname, load)                                                \
    static const char *const load##_names[] = {LIST(SG_DYNLIB_NAME)};                                  \
    _Static_assert(sizeof(type) == sizeof load##_names / sizeof load##_names[0] * sizeof(void *),      \
                   "every slot is a function pointer the size of an object pointer");                  \
    SG_DYNLIB_TABLE(type, var, LIST);                                                                  \
    static sg_dynlib load##_lib = {soname, load##_names, sizeof load##_names / sizeof load##_names[0], \
                                   &var, PTHREAD_ONCE_INIT, 0, ""};                                     \
    int load(sg_error *err) { return sg_dynlib_load(&load##_lib, err); }

#endif
