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
        sg_free(fs[k]->witness);
        sg_free(fs[k]->rejected_by);
        sg_free(fs[k]->kind);
        sg_free(fs[k]->source);
    }
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
    if (g->has_policy) {
        sg_buf_puts(&b, ", \"policy\": ");
        put_finding(&b, &g->policy, "policy", "new");
    }
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
    if (g->policy.found) {
        sg_buf_puts(&b, "policy: NEW rejects ");
        text_witness(&b, &g->policy);
        sg_buf_puts(&b, ", which the policy requires\n");
        if (g->policy.rejected_by)
            sg_buf_printf(&b, "  rejected by: %s  (%s)\n", g->policy.rejected_by, g->policy.source);
    } else if (g->policy.unknown) {
        sg_buf_printf(&b, "policy: not decided (%s)\n", g->policy.reason);
    } else if (g->has_policy) {
        sg_buf_puts(&b, "policy: holds (NEW accepts every shape it requires)\n");
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

int sg_gate_to_junit(char **out, const sg_gate *g, sg_error *err)
{
    char w[2048];
    sg_buf b;
    size_t i, fails = 0, errors = 0, tests = g ? g->ndims + 1 : 0;

    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "sg_gate_to_junit: missing argument");
    *out = NULL;
    for (i = 0; i < g->ndims; i++)
        fails += g->dims[i].regressed;
    fails += g->signature_changed;
    if (g->verdict == SG_GATE_UNKNOWN)
        errors = g->ndims, fails = g->signature_changed;
    witness_text(w, sizeof w, &g->regression);
    sg_buf_init(&b, (size_t)1 << 28);
    sg_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"shapegate gate\" tests=\"%zu\" "
                      "failures=\"%zu\" errors=\"%zu\">\n  <testsuite name=\"", tests, fails, errors);
    put_xml(&b, g->old_name ? g->old_name : "OLD");
    sg_buf_puts(&b, " -> ");
    put_xml(&b, g->new_name ? g->new_name : "NEW");
    sg_buf_printf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n", tests, fails, errors);
    sg_buf_puts(&b, "    <testcase classname=\"shapegate.gate\" name=\"signature\">");
    if (g->signature_changed) {
        sg_buf_puts(&b, "<failure type=\"signature\" message=\"");
        put_xml(&b, g->nchanges ? g->changes[0] : "changed");
        sg_buf_puts(&b, "\">");
        for (i = 0; i < g->nchanges; i++) {
            put_xml(&b, g->changes[i]);
            sg_buf_putc(&b, '\n');
        }
        sg_buf_puts(&b, "</failure>");
    }
    sg_buf_puts(&b, "</testcase>\n");
    for (i = 0; i < g->ndims; i++) {
        const sg_gate_dim *d = &g->dims[i];
        sg_buf_puts(&b, "    <testcase classname=\"shapegate.gate\" name=\"");
        put_xml(&b, d->path);
        sg_buf_printf(&b, ".size()[%zu]\">", d->dim);
        if (g->verdict == SG_GATE_UNKNOWN) {
            sg_buf_puts(&b, "<error type=\"unknown\" message=\"");
            put_xml(&b, g->reason);
            sg_buf_puts(&b, "\"/>");
        } else if (d->regressed && !g->signature_changed) {
            sg_buf_puts(&b, "<failure type=\"regression\" message=\"NEW rejects ");
            put_xml(&b, w);
            sg_buf_puts(&b, ", which OLD accepts\">rejected by: ");
            put_xml(&b, g->regression.rejected_by);
            sg_buf_puts(&b, " (");
            put_xml(&b, g->regression.source);
            sg_buf_puts(&b, ")</failure>");
        } else if (d->widened) {
            witness_text(w, sizeof w, &g->widening);
            sg_buf_puts(&b, "<system-out>widening: NEW also accepts ");
            put_xml(&b, w);
            sg_buf_puts(&b, "</system-out>");
            witness_text(w, sizeof w, &g->regression);
        }
        sg_buf_puts(&b, "</testcase>\n");
    }
    sg_buf_puts(&b, "  </testsuite>\n</testsuites>\n");
    return sg_buf_finish(&b, out, "the JUnit report", err);
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

int sg_gate_to_annotations(char **out, const sg_gate *g, sg_error *err)
{
    char w[2048], line[4096];
    sg_buf b;
    size_t i;

    if (!out || !g)
        return sg_error_set(err, SG_EINVALID, "sg_gate_to_annotations: missing argument");
    *out = NULL;
    sg_buf_init(&b, (size_t)1 << 28);
    if (g->verdict == SG_GATE_UNKNOWN) {
        annot_head(&b, "warning", g, "shapegate gate: unknown");
        put_annot(&b, g->reason, false);
        sg_buf_putc(&b, '\n');
    }
    for (i = 0; i < g->nchanges; i++) {
        annot_head(&b, "error", g, "shapegate gate: signature changed");
        put_annot(&b, g->changes[i], false);
        sg_buf_putc(&b, '\n');
    }
    if (g->regression.found && !g->signature_changed) {
        witness_text(w, sizeof w, &g->regression);
        snprintf(line, sizeof line, "NEW rejects %s, which OLD accepts: %s (%s)", w,
                 g->regression.rejected_by ? g->regression.rejected_by : "?", g->regression.source ? g->regression.source : "?");
        annot_head(&b, "error", g, "shapegate gate: regression");
        put_annot(&b, line, false);
        sg_buf_putc(&b, '\n');
    }
    if (g->policy.found) {
        witness_text(w, sizeof w, &g->policy);
        snprintf(line, sizeof line, "NEW rejects %s, which the policy requires: %s (%s)", w,
                 g->policy.rejected_by ? g->policy.rejected_by : "?", g->policy.source ? g->policy.source : "?");
        annot_head(&b, "error", g, "shapegate gate: policy");
        put_annot(&b, line, false);
        sg_buf_putc(&b, '\n');
    }
    if (g->widening.found) {
        witness_text(w, sizeof w, &g->widening);
        snprintf(line, sizeof line, "NEW also accepts %s, which OLD rejected by %s (%s)", w,
                 g->widening.rejected_by ? g->widening.rejected_by : "?", g->widening.source ? g->widening.source : "?");
        annot_head(&b, "notice", g, "shapegate gate: widening");
        put_annot(&b, line, false);
        sg_buf_putc(&b, '\n');
    }
    return sg_buf_finish(&b, out, "the annotations", err);
}
