/**
 * @file cancel.h
 * @brief Cancel tokens: stop running calls from another thread.
 */
#ifndef SHAPEGATE_CANCEL_H
#define SHAPEGATE_CANCEL_H

#include <stdbool.h>

#include "shapegate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A cancel token: put it in sg_check_options.cancel, and sg_cancel_request()
 * from any thread stops the calls running under it: the Z3 query running is
 * interrupted, no new one starts, and the dims left undecided are unknown
 * with the reason "canceled". A token may serve several calls.
 */
typedef struct sg_cancel sg_cancel;

/** A new token, not requested. Returns 0 or SG_ENOMEM. */
SG_API int sg_cancel_new(sg_cancel **out, sg_error *err);
/** Free a token no call uses any more. NULL-safe. */
SG_API void sg_cancel_free(sg_cancel *k);
/** Request cancellation; any thread, any time, any number of times. NULL-safe. */
SG_API void sg_cancel_request(sg_cancel *k);
/** Whether cancellation was requested. */
SG_API bool sg_cancel_requested(const sg_cancel *k);
/** Clear a request, for reusing the token in later calls (no call may be running under it). */
SG_API void sg_cancel_reset(sg_cancel *k);

#ifdef __cplusplus
}
#endif

#endif
