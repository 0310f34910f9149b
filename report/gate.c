/*
 * gate.c - the release gate's renderers (engine.h: sg_gate_to_json,
 * sg_gate_to_text): JSON for tools and CI, text for people. They only read
 * the result analysis/gate.c built.
 */
#include <stdio.h>
#include <string.h>

#include "analysis/gate.h"
#include "util/json.h"
#include "util/util.h"

sg_gate_verdict sg_gate_verdict_of(const sg_gate *g) { return g ? g->verdict : SG_GATE_UNKNOWN; }

const char *sg_gate_verdict_name(sg_gate_verdict v)
{
    return v == SG_GATE_PASS ? "pass" : v == SG_GATE_REGRESSION ? "regression" : "unknown";
}

/* [{"path": ..., "shape": [...]}, ...] */
static void put_witness(sg_buf *b, const sg_gate_finding *f)
{
    size_t i, d;

    sg_buf_putc(b, '[');
    for (i = 0; i < f->nwitness; i++) {
        sg_buf_puts(b, i ? ", {\"path\": " : "{\"path\": ");
        sg__json_put_str(b, f->witness[i].path);
        sg_buf_puts(b, ", \"shape\": [");
        for (d = 0; d < f->witness[i].ndim; d++) {
            sg_buf_puts(b, d ? ", " : "");
            sg__json_put_int(b, f->witness[i].sizes[d]);
        }
        sg_buf_puts(b, "]}");
    }
    sg_buf_putc(b, ']');
}

/* {"found": ..., "witness": [...], "rejected_by": {...}} or {"found": false, "unknown": reason} */
static void put_finding(sg_buf *b, const sg_gate_finding *f, const char *kind, const char *rejecting)
{
    sg_buf_printf(b, "{\"kind\": \"%s\", \"found\": %s", kind, f->found ? "true" : "false");
    if (f->unknown) {
        sg_buf_puts(b, ", \"unknown\": ");
        sg__json_put_str(b, f->reason);
    }
    if (f->found) {
        sg_buf_puts(b, ", \"witness\": ");
        put_witness(b, f);
        sg_buf_printf(b, ", \"rejected_by\": {\"version\": \"%s\", \"kind\": ", rejecting);
        sg__json_put_str_or_null(b, f->kind);
        sg_buf_puts(b, ", \"condition\": ");
        sg__json_put_str_or_null(b, f->rejected_by);
        sg_buf_puts(b, ", \"source\": ");
        sg__json_put_str_or_null(b, f->source);
        sg_buf_putc(b, '}');
    }
    sg_buf_putc(b, '}');
}

int sg_gate_to_json(char **out, const sg_gate *g, sg_error *err)
{
    sg_buf b;
    size_t i;

    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "sg_gate_to_json: missing argument");
    *out = NULL;
    sg_buf_init(&b, (size_t)1 << 28);
    sg_buf_puts(&b, "{\"old\": ");
    sg__json_put_str_or_null(&b, g->old_name);
    sg_buf_puts(&b, ", \"new\": ");
    sg__json_put_str_or_null(&b, g->new_name);
    sg_buf_printf(&b, ", \"verdict\": \"%s\"", sg_gate_verdict_name(g->verdict));
    if (g->verdict == SG_GATE_UNKNOWN) {
        sg_buf_puts(&b, ", \"reason\": ");
        sg__json_put_str(&b, g->reason);
    }
    sg_buf_printf(&b, ", \"signature\": {\"changed\": %s, \"changes\": [", g->signature_changed ? "true" : "false");
    for (i = 0; i < g->nchanges; i++) {
        sg_buf_puts(&b, i ? ", " : "");
        sg__json_put_str(&b, g->changes[i]);
    }
    sg_buf_puts(&b, "]}");
    if (g->regression.found) {
        sg_buf_puts(&b, ", \"witness\": ");
        put_witness(&b, &g->regression);
    }
    sg_buf_puts(&b, ", \"regression\": ");
    put_finding(&b, &g->regression, "regression", "new");
    sg_buf_puts(&b, ", \"widening\": ");
    put_finding(&b, &g->widening, "widening", "old");
    sg_buf_puts(&b, ", \"dims\": [");
    for (i = 0; i < g->ndims; i++) {
        sg_buf_puts(&b, i ? ", {\"path\": " : "{\"path\": ");
        sg__json_put_str(&b, g->dims[i].path);
        sg_buf_printf(&b, ", \"dim\": %zu, \"old\": ", g->dims[i].dim);
        sg__json_put_str_or_null(&b, g->dims[i].old_size);
        sg_buf_puts(&b, ", \"new\": ");
        sg__json_put_str_or_null(&b, g->dims[i].new_size);
        sg_buf_putc(&b, '}');
    }
    sg_buf_puts(&b, "]}");
    return sg_buf_finish(&b, out, "the gate report", err);
}

static void text_witness(sg_buf *b, const sg_gate_finding *f)
{
    size_t i, d;

    for (i = 0; i < f->nwitness; i++) {
        sg_buf_printf(b, "%s%s=[", i ? ", " : "", f->witness[i].path);
        for (d = 0; d < f->witness[i].ndim; d++) {
            char num[SG_INT_STRLEN];
            sg_buf_printf(b, "%s%s", d ? ", " : "", sg_int_format(num, f->witness[i].sizes[d]));
        }
        sg_buf_putc(b, ']');
    }
}

int sg_gate_to_text(char **out, const sg_gate *g, sg_error *err)
{
    sg_buf b;
    size_t i;

    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "sg_gate_to_text: missing argument");
    *out = NULL;
    sg_buf_init(&b, (size_t)1 << 28);
    sg_buf_printf(&b, "%s -> %s: %s", g->old_name ? g->old_name : "OLD", g->new_name ? g->new_name : "NEW",
                  sg_gate_verdict_name(g->verdict));
    if (g->verdict == SG_GATE_UNKNOWN)
        sg_buf_printf(&b, " (%s)", g->reason);
    sg_buf_putc(&b, '\n');
    for (i = 0; i < g->nchanges; i++)
        sg_buf_printf(&b, "signature: %s\n", g->changes[i]);
    for (i = 0; i < g->ndims; i++)
        if (!g->dims[i].new_size || strcmp(g->dims[i].old_size, g->dims[i].new_size) != 0)
            sg_buf_printf(&b, "  %s.size()[%zu]: %s -> %s\n", g->dims[i].path, g->dims[i].dim, g->dims[i].old_size,
                          g->dims[i].new_size ? g->dims[i].new_size : "(none)");
    if (g->regression.found) {
        sg_buf_puts(&b, "regression: NEW rejects ");
        text_witness(&b, &g->regression);
        sg_buf_puts(&b, ", which OLD accepts\n");
        if (g->regression.rejected_by)
            sg_buf_printf(&b, "  rejected by: %s  (%s)\n", g->regression.rejected_by, g->regression.source);
        else if (g->regression.source)
            sg_buf_printf(&b, "  rejected by: %s\n", g->regression.source);
    } else if (g->regression.unknown) {
        sg_buf_printf(&b, "regression: not decided (%s)\n", g->regression.reason);
    } else if (g->verdict != SG_GATE_UNKNOWN) {
        sg_buf_puts(&b, "regression: none (NEW accepts every shape OLD accepts)\n");
    }
    if (g->widening.found) {
        sg_buf_puts(&b, "widening: NEW also accepts ");
        text_witness(&b, &g->widening);
        sg_buf_puts(&b, ", which OLD rejects\n");
        if (g->widening.rejected_by)
            sg_buf_printf(&b, "  OLD rejected it by: %s  (%s)\n", g->widening.rejected_by, g->widening.source);
    } else if (g->widening.unknown) {
        sg_buf_printf(&b, "widening: not decided (%s)\n", g->widening.reason);
    }
    return sg_buf_finish(&b, out, "the gate report", err);
}
