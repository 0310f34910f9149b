/*
 * torch_trace_impl.h - the frame model the two halves of the TORCH_TRACE adapter
 * share: torch_trace.c reads a log into frames and keeps the selected one;
 * torch_trace_frame.c turns it into a trace. Internal to trace/adapters/.
 */
#ifndef SG_TRACE_ADAPTERS_TORCH_TRACE_IMPL_H
#define SG_TRACE_ADAPTERS_TORCH_TRACE_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/trace_impl.h"

/* A symbol as its create_symbol / create_unbacked_symbol record says (strings owned). */
typedef struct tt_sym {
    char *name, *lo, *hi, *hint, *source, *repl;
    bool unbacked;
} tt_sym;

/* A guard_added(_fast) record; `runtime`: from defer_runtime_assert. */
typedef struct tt_guard {
    char *expr, *user_loc;
    bool runtime;
} tt_guard;

/* A describe_tensor record, with its describe_source. */
typedef struct tt_tensor {
    long describer, id;
    char *source;       /* "L['x']", NULL until its describe_source */
    long long *sizes;
    size_t ndim;
} tt_tensor;

/* The frame being collected (only the selected one keeps its records). */
typedef struct tt_frame {
    tt_sym *syms;
    size_t nsyms, csyms;
    tt_guard *guards;
    size_t nguards, cguards;
    tt_tensor *tensors;
    size_t ntensors, ctensors;
    char *error;        /* compilation_metrics fail_type, or what a make_fx_fail_partial graph says */
    char *error_message; /* its message (make_fx_fail_partial), or NULL */
    bool strict;
} tt_frame;

/*
 * The frame `f` as a trace into `*out` (free with sg_trace_free), named `what` in messages
 * ("LOG (frame N)"), of torch version `torch_version` (NULL: unknown). Symbols whose Eq guards
 * torch solves by a replacement get it in `f` first. Returns 0, SG_EINVALID (a record the v1
 * reader would refuse), SG_ELIMIT or SG_ENOMEM; `*out` NULL then.
 */
int sg_trace__build_torch_frame(sg_trace **out, tt_frame *f, const char *torch_version, const char *what,
                                sg_error *err);

#endif
