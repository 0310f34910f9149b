/*
 * pyspec.h - a structured dynamic_shapes spec as paste-ready Python, the
 * way torch users write it (Dim definitions, then dynamic_shapes = {...}).
 */
#ifndef SG_TORCH_PYSPEC_H
#define SG_TORCH_PYSPEC_H

#include "trace/trace.h"

/*
 * Paste-ready Python for the structured spec `spec_json`: the Dim definitions
 * (`dx = Dim('dx', min=16, max=100)`, derived ones inline) then
 * `dynamic_shapes = {...}` following the inputs of `t` (dicts, lists, tuples,
 * kwargs). New string in `*out`; free with sg_free(). Returns 0, SG_EINVALID
 * for a spec that is not of the structured form, SG_ENOMEM.
 */
int sg_spec_to_python(char **out, const sg_trace *t, const char *spec_json, sg_error *err);

/*
 * A Python identifier made of pytree path `path` ("['x'][0]" -> "x_0") into `buf`, at most
 * `max` characters (the end of a longer one cut): the path's identifier characters, each
 * other run as one '_', none at the end, after `lead` when that leaves nothing or a leading
 * digit. Returns its length; no NUL is written (callers add a suffix, or the NUL).
 */
size_t sg_pyspec__ident(char *buf, size_t max, const char *path, const char *lead);

#endif
