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

#endif
