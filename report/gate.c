/*
 * gate.c - the release gate's renderers (engine.h: sg_gate_to_json,
 * sg_gate_to_text): JSON for tools and CI, text for people. They only read
 * the result analysis/gate.c built.
 */
#include <stdio.h>
#include <string.h>

#include "report/gate.h"
#include "util/json.h"
#include "util/util.h"

void sg_gate_free(sg_gate *g)
{
    size_t i, k;
    sg_gate_finding *fs[3];

    if (!g)
        return;
    fs[0] = &g->regression;
    fs[1] = &g->widening;
    fs[2] = &g->policy;
    for (k = 0; k < 3; k++) {
        for (i = 0; i < fs[k]->nwitness; i++) {
            sg_free(fs[k]->witness[i].path);
            sg_free(fs[k]->witness[i].sizes);
        }
        SG_FREE_ALL(fs[k]->witness, fs[k]->rejected_by, fs[k]->kind, fs[k]->source, fs[k]->loc);
    }
    for (i = 0; i < g->serving.ninputs; i++) {
        sg_free(g->serving.inputs[i].path);
        sg_free(g->serving.inputs[i].name);
        sg_free(g->serving.inputs[i].dims);
    }
    sg_free(g->serving.inputs);
    sg_free(g->serving.dynamic_shapes);
    for (i = 0; i < g->nchanges; i++)
        sg_free(g->changes[i]);
    sg_free(g->changes);
    for (i = 0; i < g->ndims; i++) {
        sg_free(g->dims[i].path);
        sg_free(g->dims[i].old_size);
        sg_free(g->dims[i].new_size);
    }
    sg_free(g->dims);
    sg_free(g->old_name);
    sg_free(g->new_name);
    sg_free(g);
}

sg_gate_verdict sg_gate_verdict_of(const sg_gate *g) { return g ? g->verdict : SG_GATE_UNKNOWN; }

const char *sg_gate_verdict_name(sg_gate_verdict v)
{
    return v == SG_GATE_PASS ? "pass" : v == SG_GATE_REGRESSION ? "regression" : "unknown";
}

/* "1x3x224" */
static void shape_x(sg_buf *b, const sg_gate_serving_input *in, int which)
{
    size_t d;
    char num[SG_INT_STRLEN];
    for (d = 0; d < in->ndim; d++) {
        const sg_gate_serving_dim *sd = &in->dims[d];
        sg_buf_printf(b, "%s%s", d ? "x" : "", sg_int_format(num, which == 0 ? sd->min : which == 1 ? sd->opt : sd->max));
    }
}

/* trtexec's flags: --minShapes=x:2x4,y:2x4 --optShapes=... --maxShapes=... (0-dim inputs are left out),
 * then a comment line saying which sizes the opt ones are */
static int serving_tensorrt(char **out, const sg_gate_serving *sv, sg_error *err)
{
    static const char *const flag[3] = {"--minShapes=", "--optShapes=", "--maxShapes="};
    sg_buf b;
    size_t i, w, n;

    sg_buf_init(&b, (size_t)1 << 24);
    for (w = 0; w < 3; w++) {
        sg_buf_puts(&b, w ? " \\\n" : "");
        sg_buf_puts(&b, flag[w]);
        for (i = 0, n = 0; i < sv->ninputs; i++) {
            if (!sv->inputs[i].ndim)
                continue;
            sg_buf_printf(&b, "%s%s:", n++ ? "," : "", sv->inputs[i].name);
            shape_x(&b, &sv->inputs[i], (int)w);
        }
    }
    sg_buf_putc(&b, '\n');
    if (sv->opt_source[0]) /* a shell comment after the flags: which sizes --optShapes are */
        sg_buf_printf(&b, "# --optShapes: %s\n", sv->opt_source);
    return sg_buf_finish(&b, out, "the TensorRT profile", err);
}

/* Triton's TYPE_ name of a torch dtype name, or NULL. */
static const char *triton_type(const char *dt)
{
    static const char *const map[][2] = {
        {"float32", "TYPE_FP32"}, {"float16", "TYPE_FP16"}, {"bfloat16", "TYPE_BF16"}, {"float64", "TYPE_FP64"},
        {"int64", "TYPE_INT64"}, {"int32", "TYPE_INT32"}, {"int16", "TYPE_INT16"}, {"int8", "TYPE_INT8"},
        {"uint8", "TYPE_UINT8"}, {"bool", "TYPE_BOOL"},
    };
    size_t i;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(map[i][0], dt) == 0)
            return map[i][1];
    return NULL;
}

/* input [ { name: "x" data_type: TYPE_FP32 dims: [ -1, 4 ] }, ... ] with full shapes (max_batch_size: 0) */
static int serving_triton(char **out, const sg_gate_serving *sv, sg_error *err)
{
    sg_buf b;
    size_t i, d;
    char num[SG_INT_STRLEN];

    sg_buf_init(&b, (size_t)1 << 24);
    sg_buf_puts(&b, "max_batch_size: 0\ninput [\n");
    for (i = 0; i < sv->ninputs; i++) {
        const sg_gate_serving_input *in = &sv->inputs[i];
        const char *ty = triton_type(in->dtype);
        sg_buf_printf(&b, "  {\n    name: \"%s\"\n    data_type: %s\n    dims: [ ", in->name, ty ? ty : "TYPE_FP32");
        for (d = 0; d < in->ndim; d++)
            sg_buf_printf(&b, "%s%s", d ? ", " : "",
                          in->dims[d].dynamic && in->dims[d].min != in->dims[d].max ? "-1"
                                                                                    : sg_int_format(num, in->dims[d].min));
        sg_buf_printf(&b, " ]\n  }%s%s\n", i + 1 < sv->ninputs ? "," : "",
                      ty ? "" : in->dtype[0] ? "  # dtype not mapped: set data_type" : "  # dtype unknown: set data_type");
    }
    sg_buf_puts(&b, "]\n");
    return sg_buf_finish(&b, out, "the Triton input block", err);
}

int sg_gate_to_serving(char **out, const sg_gate *g, sg_gate_serving_kind kind, sg_error *err)
{
    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "sg_gate_to_serving: missing argument");
    *out = NULL;
    if (!g->has_serving)
        return sg_error_set(err, SG_EINVALID, "the gate was run without serving descriptors");
    if (!g->serving.ok)
        return sg_error_set(err, SG_EINVALID, "no serving descriptors: %s", g->serving.reason);
    if (kind == SG_GATE_SERVING_TENSORRT)
        return serving_tensorrt(out, &g->serving, err);
    if (kind == SG_GATE_SERVING_TRITON)
        return serving_triton(out, &g->serving, err);
    if (kind == SG_GATE_SERVING_DYNAMIC_SHAPES && g->serving.dynamic_shapes) {
        if (!(*out = sg__strndup(g->serving.dynamic_shapes, strlen(g->serving.dynamic_shapes))))
            return sg_error_set(err, SG_ENOMEM, "out of memory");
        return 0;
    }
    return sg_error_set(err, SG_EINVALID, "sg_gate_to_serving: unknown kind %d", (int)kind);
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
        sg__json_put_field(b, ", \"condition\": ", f->rejected_by);
        sg__json_put_field(b, ", \"source\": ", f->source);
        sg__json_put_field(b, ", \"user_loc\": ", f->loc);
        sg_buf_putc(b, '}');
    }
    sg_buf_putc(b, '}');
}

static void put_sizes(sg_buf *b, const sg_gate_serving_input *in, int which)
{
    size_t d;
    sg_buf_putc(b, '[');
    for (d = 0; d < in->ndim; d++) {
        const sg_gate_serving_dim *sd = &in->dims[d];
        sg_buf_puts(b, d ? ", " : "");
        sg__json_put_int(b, which == 0 ? sd->min : which == 1 ? sd->opt : sd->max);
    }
    sg_buf_putc(b, ']');
}

/* {"tensorrt": {"inputs": [{"name", "min", "opt", "max"}], "trtexec": "..."}, "triton": "...", "dynamic_shapes": ...} */
static void put_serving_json(sg_buf *b, const sg_gate_serving *sv)
{
    size_t i, d;
    char *txt = NULL;
    sg_error e2 = SG_ERROR_INIT;

    sg_buf_printf(b, "{\"ok\": %s", sv->ok ? "true" : "false");
    if (!sv->ok) {
        sg_buf_puts(b, ", \"reason\": ");
        sg__json_put_str(b, sv->reason);
        sg_buf_putc(b, '}');
        return;
    }
    sg_buf_puts(b, ", \"inputs\": [");
    for (i = 0; i < sv->ninputs; i++) {
        const sg_gate_serving_input *in = &sv->inputs[i];
        sg_buf_puts(b, i ? ", {\"path\": " : "{\"path\": ");
        sg__json_put_str(b, in->path);
        sg_buf_puts(b, ", \"name\": ");
        sg__json_put_str(b, in->name);
        sg__json_put_field(b, ", \"dtype\": ", in->dtype[0] ? in->dtype : NULL);
        sg_buf_puts(b, ", \"min\": ");
        put_sizes(b, in, 0);
        sg_buf_puts(b, ", \"opt\": ");
        put_sizes(b, in, 1);
        sg_buf_puts(b, ", \"max\": ");
        put_sizes(b, in, 2);
        sg_buf_puts(b, ", \"dynamic\": [");
        for (d = 0; d < in->ndim; d++)
            sg_buf_printf(b, "%s%s", d ? ", " : "", in->dims[d].dynamic ? "true" : "false");
        sg_buf_puts(b, "], \"unbounded\": [");
        for (d = 0; d < in->ndim; d++)
            sg_buf_printf(b, "%s%s", d ? ", " : "", in->dims[d].unbounded ? "true" : "false");
        sg_buf_puts(b, "]}");
    }
    sg_buf_printf(b, "], \"opt_is_example\": %s, \"opt_source\": ", sv->opt_is_example ? "true" : "false");
    sg__json_put_str(b, sv->opt_source);
    sg_buf_printf(b, ", \"accepted\": {\"min\": %s, \"opt\": %s, \"max\": %s}", sv->accepted[0] ? "true" : "false",
                  sv->accepted[1] ? "true" : "false", sv->accepted[2] ? "true" : "false");
    sg_buf_puts(b, ", \"rejected\": [");
    for (i = 0, d = 0; i < 3; i++)
        if (!sv->accepted[i]) {
            sg_buf_puts(b, d++ ? ", " : "");
            sg__json_put_str(b, sv->rejected[i]);
        }
    serving_tensorrt(&txt, sv, &e2); /* NULL when it cannot be written */
    sg__json_put_field(b, "], \"tensorrt\": ", txt);
    sg_free(txt);
    serving_triton(&txt, sv, &e2);
    sg__json_put_field(b, ", \"triton\": ", txt);
    sg_free(txt);
    sg__json_put_field(b, ", \"dynamic_shapes\": ", sv->dynamic_shapes);
    sg_buf_printf(b, ", \"dynamic_shapes_verified\": %s", sv->spec_verified ? "true" : "false");
    if (sv->spec_note[0]) {
        sg_buf_puts(b, ", \"dynamic_shapes_note\": ");
        sg__json_put_str(b, sv->spec_note);
    }
    sg_buf_putc(b, '}');
}

/* How every gate writer runs: its arguments checked, `body` written into a bounded buffer, the
 * text handed over as `*out` (NULL on failure). */
static int write_gate(char **out, const sg_gate *g, void (*body)(sg_buf *b, const sg_gate *g), const char *fn,
                      const char *what, sg_error *err)
{
    sg_buf b;

    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "%s: missing argument", fn);
    *out = NULL;
    sg_buf_init(&b, (size_t)1 << 28);
    body(&b, g);
    return sg_buf_finish(&b, out, what, err);
}

static void json_body(sg_buf *b, const sg_gate *g)
{
    size_t i;

    sg__json_put_field(b, "{\"old\": ", g->old_name);
    sg__json_put_field(b, ", \"new\": ", g->new_name);
    sg_buf_printf(b, ", \"old_kind\": \"%s\", \"new_kind\": \"%s\"", g->old_kind ? g->old_kind : "archive",
                  g->new_kind ? g->new_kind : "archive");
    sg_buf_printf(b, ", \"verdict\": \"%s\"", sg_gate_verdict_name(g->verdict));
    if (g->old_note[0] || g->new_note[0]) {
        sg__json_put_field(b, ", \"notes\": {\"old\": ", g->old_note[0] ? g->old_note : NULL);
        sg__json_put_field(b, ", \"new\": ", g->new_note[0] ? g->new_note : NULL);
        sg_buf_putc(b, '}');
    }
    if (g->verdict == SG_GATE_UNKNOWN) {
        sg_buf_puts(b, ", \"reason\": ");
        sg__json_put_str(b, g->reason);
    }
    sg_buf_printf(b, ", \"signature\": {\"changed\": %s, \"changes\": [", g->signature_changed ? "true" : "false");
    for (i = 0; i < g->nchanges; i++) {
        sg_buf_puts(b, i ? ", " : "");
        sg__json_put_str(b, g->changes[i]);
    }
    sg_buf_puts(b, "]}");
    if (g->regression.found) {
        sg_buf_puts(b, ", \"witness\": ");
        put_witness(b, &g->regression);
    }
    sg_buf_puts(b, ", \"regression\": ");
    put_finding(b, &g->regression, "regression", "new");
    sg_buf_puts(b, ", \"widening\": ");
    put_finding(b, &g->widening, "widening", "old");
    if (g->has_policy) {
        sg_buf_puts(b, ", \"policy\": ");
        put_finding(b, &g->policy, "policy", "new");
    }
    sg_buf_puts(b, ", \"dims\": [");
    for (i = 0; i < g->ndims; i++) {
        sg_buf_puts(b, i ? ", {\"path\": " : "{\"path\": ");
        sg__json_put_str(b, g->dims[i].path);
        sg_buf_printf(b, ", \"dim\": %zu, \"old\": ", g->dims[i].dim);
        sg__json_put_str_or_null(b, g->dims[i].old_size);
        sg__json_put_field(b, ", \"new\": ", g->dims[i].new_size);
        sg_buf_putc(b, '}');
    }
    sg_buf_putc(b, ']');
    if (g->has_serving) {
        sg_buf_puts(b, ", \"serving\": ");
        put_serving_json(b, &g->serving);
    }
    sg_buf_putc(b, '}');
}

int sg_gate_to_json(char **out, const sg_gate *g, sg_error *err)
{
    return write_gate(out, g, json_body, "sg_gate_to_json", "the gate report", err);
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

/* A finding in the text report, "NAME: LEAD<witness>THEN", then the condition rejecting it (`by`) and its
 * user line; or "NAME: not decided (why)". False when there is neither (nothing written). */
static bool text_finding(sg_buf *b, const sg_gate_finding *f, const char *name, const char *lead, const char *then,
                         const char *by)
{
    if (f->unknown && !f->found) {
        sg_buf_printf(b, "%s: not decided (%s)\n", name, f->reason);
        return true;
    }
    if (!f->found)
        return false;
    sg_buf_printf(b, "%s: %s", name, lead);
    text_witness(b, f);
    sg_buf_printf(b, "%s\n", then);
    if (f->rejected_by)
        sg_buf_printf(b, "  %s: %s  (%s)\n", by, f->rejected_by, f->source);
    else if (f->source)
        sg_buf_printf(b, "  %s: %s\n", by, f->source);
    if (f->loc)
        sg_buf_printf(b, "  at: %s\n", f->loc);
    return true;
}

static void text_body(sg_buf *b, const sg_gate *g)
{
    size_t i;

    sg_buf_printf(b, "%s -> %s: %s", g->old_name ? g->old_name : "OLD", g->new_name ? g->new_name : "NEW",
                  sg_gate_verdict_name(g->verdict));
    if (g->verdict == SG_GATE_UNKNOWN)
        sg_buf_printf(b, " (%s)", g->reason);
    sg_buf_putc(b, '\n');
    if (g->old_note[0])
        sg_buf_printf(b, "note: OLD: %s\n", g->old_note);
    if (g->new_note[0])
        sg_buf_printf(b, "note: NEW: %s\n", g->new_note);
    for (i = 0; i < g->nchanges; i++)
        sg_buf_printf(b, "signature: %s\n", g->changes[i]);
    for (i = 0; i < g->ndims; i++)
        if (!g->dims[i].new_size || strcmp(g->dims[i].old_size, g->dims[i].new_size) != 0)
            sg_buf_printf(b, "  %s.size()[%zu]: %s -> %s\n", g->dims[i].path, g->dims[i].dim, g->dims[i].old_size,
                          g->dims[i].new_size ? g->dims[i].new_size : "(none)");
    if (!text_finding(b, &g->regression, "regression", "NEW rejects ", ", which OLD accepts", "rejected by") &&
        g->verdict != SG_GATE_UNKNOWN)
        sg_buf_puts(b, "regression: none (NEW accepts every shape OLD accepts)\n");
    if (!text_finding(b, &g->policy, "policy", "NEW rejects ", ", which the policy requires", "rejected by") &&
        g->has_policy)
        sg_buf_puts(b, "policy: holds (NEW accepts every shape it requires)\n");
    text_finding(b, &g->widening, "widening", "NEW also accepts ", ", which OLD rejects", "OLD rejected it by");
}

int sg_gate_to_text(char **out, const sg_gate *g, sg_error *err)
{
    return write_gate(out, g, text_body, "sg_gate_to_text", "the gate report", err);
}

/* `s` with XML's five special characters escaped; control characters but tab dropped. */
static void put_xml(sg_buf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sg_buf_puts(b, "&amp;"); break;
        case '<': sg_buf_puts(b, "&lt;"); break;
        case '>': sg_buf_puts(b, "&gt;"); break;
        case '"': sg_buf_puts(b, "&quot;"); break;
        case '\'': sg_buf_puts(b, "&apos;"); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                sg_buf_putc(b, *s);
        }
    }
}

/* The witness as text into `out` (`cap` bytes, truncated), for messages. */
static void witness_text(char *out, size_t cap, const sg_gate_finding *f)
{
    size_t i, d, n = 0;
    char num[SG_INT_STRLEN];

    out[0] = '\0';
    for (i = 0; i < f->nwitness && n < cap; i++) {
        n += (size_t)snprintf(out + n, cap - n, "%s%s=[", i ? ", " : "", f->witness[i].path);
        for (d = 0; d < f->witness[i].ndim && n < cap; d++)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", d ? ", " : "", sg_int_format(num, f->witness[i].sizes[d]));
        if (n < cap)
            n += (size_t)snprintf(out + n, cap - n, "]");
    }
}

static void junit_body(sg_buf *b, const sg_gate *g)
{
    char w[2048];
    size_t i, fails = 0, errors = 0, tests = g->ndims + 1;

    for (i = 0; i < g->ndims; i++)
        fails += g->dims[i].regressed;
    fails += g->signature_changed;
    if (g->verdict == SG_GATE_UNKNOWN)
        errors = g->ndims, fails = g->signature_changed;
    witness_text(w, sizeof w, &g->regression);
    sg_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"shapegate gate\" tests=\"%zu\" "
                      "failures=\"%zu\" errors=\"%zu\">\n  <testsuite name=\"", tests, fails, errors);
    put_xml(b, g->old_name ? g->old_name : "OLD");
    sg_buf_puts(b, " -> ");
    put_xml(b, g->new_name ? g->new_name : "NEW");
    sg_buf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n", tests, fails, errors);
    sg_buf_puts(b, "    <testcase classname=\"shapegate.gate\" name=\"signature\">");
    if (g->signature_changed) {
        sg_buf_puts(b, "<failure type=\"signature\" message=\"");
        put_xml(b, g->nchanges ? g->changes[0] : "changed");
        sg_buf_puts(b, "\">");
        for (i = 0; i < g->nchanges; i++) {
            put_xml(b, g->changes[i]);
            sg_buf_putc(b, '\n');
        }
        sg_buf_puts(b, "</failure>");
    }
    sg_buf_puts(b, "</testcase>\n");
    for (i = 0; i < g->ndims; i++) {
        const sg_gate_dim *d = &g->dims[i];
        sg_buf_puts(b, "    <testcase classname=\"shapegate.gate\" name=\"");
        put_xml(b, d->path);
        sg_buf_printf(b, ".size()[%zu]\">", d->dim);
        if (g->verdict == SG_GATE_UNKNOWN) {
            sg_buf_puts(b, "<error type=\"unknown\" message=\"");
            put_xml(b, g->reason);
            sg_buf_puts(b, "\"/>");
        } else if (d->regressed && !g->signature_changed) {
            sg_buf_puts(b, "<failure type=\"regression\" message=\"NEW rejects ");
            put_xml(b, w);
            sg_buf_puts(b, ", which OLD accepts\">rejected by: ");
            put_xml(b, g->regression.rejected_by);
            sg_buf_puts(b, " (");
            put_xml(b, g->regression.source);
            sg_buf_puts(b, ")");
            if (g->regression.loc) {
                sg_buf_puts(b, "\nat: ");
                put_xml(b, g->regression.loc);
            }
            sg_buf_puts(b, "</failure>");
        } else if (d->widened) {
            witness_text(w, sizeof w, &g->widening);
            sg_buf_puts(b, "<system-out>widening: NEW also accepts ");
            put_xml(b, w);
            sg_buf_puts(b, "</system-out>");
            witness_text(w, sizeof w, &g->regression);
        }
        sg_buf_puts(b, "</testcase>\n");
    }
    sg_buf_puts(b, "  </testsuite>\n</testsuites>\n");
}

int sg_gate_to_junit(char **out, const sg_gate *g, sg_error *err)
{
    return write_gate(out, g, junit_body, "sg_gate_to_junit", "the JUnit report", err);
}

/* A workflow command's message: %, CR and LF escaped as GitHub reads them. */
static void put_annot(sg_buf *b, const char *s, bool property)
{
    for (; s && *s; s++) {
        if (*s == '%')
            sg_buf_puts(b, "%25");
        else if (*s == '\r')
            sg_buf_puts(b, "%0D");
        else if (*s == '\n')
            sg_buf_puts(b, "%0A");
        else if (property && *s == ':')
            sg_buf_puts(b, "%3A");
        else if (property && *s == ',')
            sg_buf_puts(b, "%2C");
        else
            sg_buf_putc(b, *s);
    }
}

static void annot_head(sg_buf *b, const char *level, const sg_gate *g, const char *title)
{
    sg_buf_printf(b, "::%s file=", level);
    put_annot(b, g->new_name ? g->new_name : "NEW", true);
    sg_buf_puts(b, ",title=");
    put_annot(b, title, true);
    sg_buf_puts(b, "::");
}

/* One finding's line: `lead`, the witness, `then`, the condition, where it is, its user line. */
static void annot_finding(sg_buf *b, const char *level, const sg_gate *g, const char *what, const sg_gate_finding *f,
                          const char *lead, const char *then)
{
    char w[2048], line[4096], title[64];
    int n;

    witness_text(w, sizeof w, f);
    snprintf(title, sizeof title, "shapegate gate: %s", what);
    n = snprintf(line, sizeof line, "%s%s%s", lead, w, then);
    if (n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "%s (%s)%s%s", f->rejected_by ? f->rejected_by : "?",
                 f->source ? f->source : "?", f->loc ? " at " : "", f->loc ? f->loc : "");
    annot_head(b, level, g, title);
    put_annot(b, line, false);
    sg_buf_putc(b, '\n');
}

static void annotations_body(sg_buf *b, const sg_gate *g)
{
    size_t i;

    if (g->verdict == SG_GATE_UNKNOWN) {
        annot_head(b, "warning", g, "shapegate gate: unknown");
        put_annot(b, g->reason, false);
        sg_buf_putc(b, '\n');
    }
    for (i = 0; i < g->nchanges; i++) {
        annot_head(b, "error", g, "shapegate gate: signature changed");
        put_annot(b, g->changes[i], false);
        sg_buf_putc(b, '\n');
    }
    if (g->regression.found && !g->signature_changed)
        annot_finding(b, "error", g, "regression", &g->regression, "NEW rejects ", ", which OLD accepts: ");
    if (g->policy.found)
        annot_finding(b, "error", g, "policy", &g->policy, "NEW rejects ", ", which the policy requires: ");
    if (g->widening.found)
        annot_finding(b, "notice", g, "widening", &g->widening, "NEW also accepts ", ", which OLD rejected by ");
}

int sg_gate_to_annotations(char **out, const sg_gate *g, sg_error *err)
{
    return write_gate(out, g, annotations_body, "sg_gate_to_annotations", "the annotations", err);
}
