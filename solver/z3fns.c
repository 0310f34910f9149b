/*
 * z3fns.c - libz3 bound at its first use (solver/z3fns.h).
 */
#define SG_Z3FNS_IMPL
#include "solver/z3fns.h"
#include "util/dynlib.h"

#define SG_Z3_NAME(f) #f,
static const char *const names[] = {SG_Z3_FUNCTIONS(SG_Z3_NAME)};
#undef SG_Z3_NAME

_Static_assert(sizeof(sg_z3_table) == sizeof names / sizeof names[0] * sizeof(void *),
               "every slot is a function pointer the size of an object pointer");

#ifdef SG_BIND_EAGERLY /* (a sanitizer build: linked, the table filled at link time; CMakeLists.txt says why) */
#define SG_ADDR(f) f,
sg_z3_table sg_z3_fns = {SG_Z3_FUNCTIONS(SG_ADDR)};
#undef SG_ADDR
#else
sg_z3_table sg_z3_fns;
#endif

static sg_dynlib z3_lib = {SG_LIBZ3_SONAME, names, sizeof names / sizeof names[0], &sg_z3_fns,
                           PTHREAD_ONCE_INIT, 0, ""};

int sg_z3_load(sg_error *err)
{
#ifdef SG_BIND_EAGERLY
    (void)err;
    (void)&z3_lib;
    return 0;
#else
    return sg_dynlib_load(&z3_lib, err);
#endif
}
