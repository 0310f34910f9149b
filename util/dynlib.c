/*
 * dynlib.c - a shared library bound at its first use (util/dynlib.h).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"
#include "util/util.h"

/* The library being loaded by pthread_once's routine, which takes no argument. */
static _Thread_local sg_dynlib *loading;

static void load_once(void)
{
    sg_dynlib *l = loading;
    size_t i;

    l->rc = SG_ERROR;
    if (!dlopen(l->soname, RTLD_NOW | RTLD_GLOBAL)) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s", e ? e : "not found");
        return;
    }
    for (i = 0; i < l->n; i++) {
        void *f = dlsym(RTLD_DEFAULT, l->names[i]);
        if (!f) {
            snprintf(l->why, sizeof l->why, "it has no %s", l->names[i]);
            return;
        }
        /* POSIX: a function's address from dlsym() converts to its pointer type; copied, as ISO C
         * has no conversion from void * to a function pointer (every slot has that size) */
        memcpy((char *)l->table + i * sizeof f, &f, sizeof f);
    }
    l->rc = 0;
}

int sg_dynlib_load(sg_dynlib *lib, sg_error *err)
{
#ifdef SG_BIND_EAGERLY /* (the tables were filled at link time) */
    (void)lib;
    (void)err;
    (void)load_once;
    return 0;
#else
    loading = lib;
    pthread_once(&lib->once, load_once);
    loading = NULL;
    return lib->rc ? sg_error_set(err, lib->rc, "cannot load %s: %s", lib->soname, lib->why) : 0;
#endif
}
