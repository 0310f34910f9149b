/*
 * fuzz_spec.c - libFuzzer target for the two ways a spec reaches a trace from
 * outside: the override text of `shapegate check --dim` (sg_trace_with_dims)
 * and a whole spec as JSON (sg_trace_with_spec_json), applied to a fixed trace.
 *
 * The first byte picks what the rest is:
 *   bit 0      0: the rest is a spec JSON; 1: override items, one per line
 *              (at most 16, at most 256 bytes each; longer lines are cut)
 *   bits 1-2   the fixed trace (the value mod 3), a corpus capture folder:
 *              0 ok_nested_dict_list (dicts, lists, a shared Dim), 1
 *              ok_derived_spec_2x (a derived dim), 2 err_spec_bad_keys (no flat spec)
 *   bit 3      1: also check the trace afterwards (sg_fuzz_check_trace)
 * Properties: the call returns 0 or a documented code with a one-line message;
 * the trace edited from never changes (it writes the same JSON as before and
 * is not marked overridden); failure returns no copy; a successful copy is
 * marked overridden, overrides leave it a flat spec, and it still writes,
 * reloads and writes the same bytes (sg_fuzz_trace_roundtrip).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/trace.h"

#ifndef SG_SOURCE_DIR
#error "SG_SOURCE_DIR must name the source tree (the fixed traces are corpus folders)"
#endif

#define SPEC_MAX_ITEMS 16
#define SPEC_MAX_ITEM 256

/* The corpus folders the first byte picks from. */
static const char *const spec_traces[] = {
    SG_SOURCE_DIR "/tests/corpus/cases/ok_nested_dict_list",
    SG_SOURCE_DIR "/tests/corpus/cases/ok_derived_spec_2x",
    SG_SOURCE_DIR "/tests/corpus/cases/err_spec_bad_keys",
};

/*
 * A fresh copy of fixed trace `k`: the folder is loaded and written as a JSON
 * trace once (reading the capture folder's ShapeEnv dumps on every input cost
 * more than the rest of the target), each input then loads that text. The
 * JSON round trip is exact (sg_fuzz_trace_roundtrip checks it), so the copy is
 * the folder's trace. The texts live until the process exits.
 */
static sg_trace *fixed_trace(size_t k)
{
    static char *json[sizeof spec_traces / sizeof spec_traces[0]];
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;

    if (!json[k]) {
        if (sg_trace_load_dir(&t, spec_traces[k], &err) != 0 || sg_trace_to_json(&json[k], t, &err) != 0)
            SG_FUZZ_FAIL("the fixed trace %s does not load or write (%s)", spec_traces[k], err.msg);
        sg_trace_free(t);
        t = NULL;
    }
    if (sg_trace_load_json(&t, json[k], strlen(json[k]), &err) != 0)
        SG_FUZZ_FAIL("the fixed trace %s does not reload (%s)", spec_traces[k], err.msg);
    return t;
}

/* Abort unless `err` holds a one-line message (non-empty, no newline). */
static void one_line(const sg_error *err, int rc)
{
    if (!err->msg[0] || strchr(err->msg, '\n'))
        SG_FUZZ_FAIL("error %d without a one-line message: '%s'", rc, err->msg);
}

/*
 * Split `text` (`len` bytes) at newlines into at most SPEC_MAX_ITEMS items of
 * at most SPEC_MAX_ITEM - 1 bytes each (NUL-terminated copies in `buf`,
 * pointers in `items`). Returns the number of items.
 */
static size_t split_items(const char *text, size_t len, char buf[][SPEC_MAX_ITEM], const char **items)
{
    size_t n = 0, at = 0;
    while (at <= len && n < SPEC_MAX_ITEMS) {
        size_t end = at, k;
        while (end < len && text[end] != '\n')
            end++;
        k = end - at < SPEC_MAX_ITEM - 1 ? end - at : SPEC_MAX_ITEM - 1;
        memcpy(buf[n], text + at, k);
        buf[n][k] = '\0';
        items[n] = buf[n];
        n++;
        at = end + 1;
    }
    return n;
}

/* Apply the bytes to a fixed trace as the first byte says (see the file comment). Returns 0. */
int sg_fuzz_spec(const uint8_t *data, size_t size)
{
    char buf[SPEC_MAX_ITEMS][SPEC_MAX_ITEM];
    const char *items[SPEC_MAX_ITEMS];
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL, *e = NULL;
    char *before = NULL, *after = NULL;
    bool overrides, check;
    int rc;

    if (size < 1 || size > (size_t)64 << 10)
        return 0;
    overrides = data[0] & 1;
    check = (data[0] >> 3) & 1;
    t = fixed_trace((size_t)((data[0] >> 1) % 3));
    if (sg_trace_to_json(&before, t, &err) != 0)
        SG_FUZZ_FAIL("the fixed trace does not write (%s)", err.msg);
    if (overrides) {
        size_t n = split_items((const char *)data + 1, size - 1, buf, items);
        rc = sg_trace_with_dims(&e, t, items, n, &err);
        if (rc != 0 && rc != SG_EINVALID && rc != SG_ENOMEM)
            SG_FUZZ_FAIL("sg_trace_with_dims returned undocumented code %d (%s)", rc, err.msg);
    } else {
        rc = sg_trace_with_spec_json(&e, t, (const char *)data + 1, size - 1, "fuzz.json", &err);
        if (rc != 0 && rc != SG_EINVALID && rc != SG_ELIMIT && rc != SG_ENOMEM)
            SG_FUZZ_FAIL("sg_trace_with_spec_json returned undocumented code %d (%s)", rc, err.msg);
    }
    /* the trace edited from is never changed, whatever the outcome */
    if (sg_trace_spec_overridden(t))
        SG_FUZZ_FAIL("a %s marked the original trace overridden", overrides ? "override" : "spec JSON");
    if (sg_trace_to_json(&after, t, &err) != 0 || strcmp(before, after) != 0)
        SG_FUZZ_FAIL("a %s changed the original trace (%s):\n%s\n---\n%s", overrides ? "override" : "spec JSON",
                     err.msg, before, after ? after : "(does not write)");
    if (rc != 0) {
        one_line(&err, rc);
        if (e)
            SG_FUZZ_FAIL("a failed %s returned a trace", overrides ? "override" : "spec JSON");
        goto cleanup;
    }
    if (!sg_trace_spec_overridden(e))
        SG_FUZZ_FAIL("a successful %s did not mark the copy overridden", overrides ? "override" : "spec JSON");
    if (overrides && !sg_trace_has_flat_spec(e))
        SG_FUZZ_FAIL("the trace has no flat spec after overrides");
    sg_fuzz_trace_roundtrip(e); /* big integers too (util/json.c keeps them numbers) */
    if (check)
        sg_fuzz_check_trace(e);
cleanup:
    sg_free(before);
    sg_free(after);
    sg_trace_free(e);
    sg_trace_free(t);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_spec)
