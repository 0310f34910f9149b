/*
 * z3fns.c - libz3 bound at its first use (solver/z3fns.h).
 */
#define SG_Z3FNS_IMPL
#include "solver/z3fns.h"
#include "util/dynlib.h"

SG_DYNLIB_DEFINE(sg_z3_table, sg_z3_fns, SG_Z3_FUNCTIONS, SG_LIBZ3_SONAME, sg_z3_load)
