/*
 * inspect.c - the archive renderers (graph.h: sg_graph_inspect_text,
 * sg_graph_inspect_json): what a .pt2 declares, for `shapegate inspect` and
 * POST /v1/archives/inspect (docs/graph.md gives the JSON object). They only
 * read the archive and its loaded graph.
 */
#include <inttypes.h>
#include <string.h>

#include "shapegate/archive.h"
#include "shapegate/graph.h"
#include "util/json.h"
#include "util/util.h"

/* The largest answer: far above any archive the loaders accept. */
#define INSPECT_MAX ((size_t)1 << 28)

/* `e` in sympy form (`?` in text, null in JSON when it cannot be printed). */
static void put_expr(sg_buf *b, const sg_expr *e, bool json)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;

    if (e && sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) == 0) {
        if (json)
            sg__json_put_str(b, s);
        else
            sg_buf_puts(b, s);
    } else {
        sg_buf_puts(b, json ? "null" : "?");
    }
    sg_free(s);
}

/* One bound: the integer, or `absent` (null, -oo or oo). */
static void put_bound(sg_buf *b, bool has, const sg_num *v, const char *absent)
{
    sg_buf_puts(b, has ? v->text : absent);
}

/* "[min, max]" (text) or "[min,max]" (JSON, null for an infinite end). */
static void put_range(sg_buf *b, bool has_min, const sg_num *min, bool has_max, const sg_num *max, bool json)
{
    sg_buf_putc(b, '[');
    put_bound(b, has_min, min, json ? "null" : "-oo");
    sg_buf_puts(b, json ? "," : ", ");
    put_bound(b, has_max, max, json ? "null" : "oo");
    sg_buf_putc(b, ']');
}

/* The shape of a tensor: "[s77, 3]" (text) or ["s77", "3"] (JSON); null in JSON for no tensor. */
static void put_shape(sg_buf *b, const sg_graph_tensor *t, bool json)
{
    size_t d;

    if (!t && json) {
        sg_buf_puts(b, "null");
        return;
    }
    sg_buf_putc(b, '[');
    for (d = 0; t && d < t->ndim; d++) {
        if (d)
            sg_buf_puts(b, ", ");
        put_expr(b, t->sizes[d], json);
    }
    sg_buf_putc(b, ']');
}

static const char *input_kind_name(sg_graph_input_kind k)
{
    switch (k) {
    case SG_GRAPH_IN_USER: return "user_input";
    case SG_GRAPH_IN_PARAMETER: return "parameter";
    case SG_GRAPH_IN_BUFFER: return "buffer";
    case SG_GRAPH_IN_CONSTANT: return "tensor_constant";
    case SG_GRAPH_IN_CUSTOM_OBJ: return "custom_obj";
    case SG_GRAPH_IN_TOKEN: return "token";
    case SG_GRAPH_IN_CONSTANT_INPUT: return "constant_input";
    default: return "other";
    }
}

static void text_inputs(sg_buf *b, const sg_graph *g)
{
    size_t i, nparams = 0;

    sg_buf_puts(b, "inputs:\n");
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER) {
            nparams++;
            continue;
        }
        sg_buf_printf(b, "  %s %s ", in->path, in->tensor ? sg_graph_dtype_name(in->tensor->dtype) : "(not a tensor)");
        if (in->tensor)
            put_shape(b, in->tensor, false);
        sg_buf_printf(b, "  (%s)\n", in->name);
    }
    if (!nparams)
        return;
    sg_buf_printf(b, "parameters, buffers and constants: %zu\n", nparams);
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind == SG_GRAPH_IN_USER)
            continue;
        sg_buf_printf(b, "  %s %s", input_kind_name(in->kind), in->target ? in->target : in->name);
        if (in->tensor) {
            sg_buf_printf(b, " %s ", sg_graph_dtype_name(in->tensor->dtype));
            put_shape(b, in->tensor, false);
        }
        sg_buf_putc(b, '\n');
    }
}

static void text_symbols(sg_buf *b, const sg_graph *g)
{
    size_t i;

    sg_buf_puts(b, "symbols:\n");
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        sg_buf_printf(b, "  %s", sg_expr_symbol_name(s->sym));
        if (s->range) {
            sg_buf_puts(b, " in ");
            put_range(b, s->range->has_min, &s->range->min, s->range->has_max, &s->range->max, false);
        }
        if (s->path)
            sg_buf_printf(b, "  = %s.size()[%zu]", s->path, s->dim);
        sg_buf_putc(b, '\n');
    }
    sg_buf_puts(b, "range constraints:\n");
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        sg_buf_printf(b, "  %s: ", r->key);
        put_range(b, r->has_min, &r->min, r->has_max, &r->max, false);
        sg_buf_putc(b, '\n');
    }
}

static void text_checks(sg_buf *b, const sg_graph *g)
{
    size_t i, nsub = 0;

    sg_buf_printf(b, "runtime asserts: %zu", sg_graph_assert_count(g));
    for (i = 0; i < sg_graph_assert_count(g); i++)
        nsub += sg_graph_assert_at(g, i)->graph[0] != '\0';
    if (sg_graph_subgraph_count(g))
        sg_buf_printf(b, " (%zu in %zu control-flow subgraphs)", nsub, sg_graph_subgraph_count(g));
    sg_buf_putc(b, '\n');
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *as = sg_graph_assert_at(g, i);
        sg_buf_puts(b, "  ");
        put_expr(b, as->expr, false);
        sg_buf_printf(b, "  (%s on '%s'", as->target, as->node);
        if (as->graph[0])
            sg_buf_printf(b, " in %s of %s", as->graph, as->hop ? as->hop : "?");
        if (as->source != SG_GRAPH_EXPR_MESSAGE && as->kind == SG_GRAPH_ASSERT_SCALAR)
            sg_buf_puts(b, as->source == SG_GRAPH_EXPR_NODES ? ", rebuilt from the nodes" : ", not recovered");
        sg_buf_puts(b, ")\n");
    }
    if (sg_graph_has_guards_code(g)) {
        sg_buf_printf(b, "guards_code: %zu (checked on every call)\n", sg_graph_guard_count(g));
        for (i = 0; i < sg_graph_guard_count(g); i++) {
            const sg_graph_guard *gd = sg_graph_guard_at(g, i);
            sg_buf_printf(b, "  %s", gd->text);
            if (gd->expr) {
                sg_buf_puts(b, "  [");
                put_expr(b, gd->expr, false);
                sg_buf_putc(b, ']');
            } else {
                sg_buf_printf(b, "  (not read: %s)", gd->reason ? gd->reason : "?");
            }
            sg_buf_putc(b, '\n');
        }
    }
    sg_buf_printf(b, "metadata checks (_assert_tensor_metadata): %zu\n", sg_graph_metadata_check_count(g));
}

int sg_graph_inspect_text(char **out, const char *path, const sg_archive *a, const sg_graph *g, sg_error *err)
{
    const sg_archive_versions *v = sg_archive_versions_of(a);
    int major, minor;
    size_t i;
    sg_buf b;

    *out = NULL;
    sg_buf_init(&b, INSPECT_MAX);
    sg_graph_schema_version(g, &major, &minor);
    sg_buf_printf(&b, "%s: %s archive, schema %d.%d", path, sg_archive_format_name(sg_archive_format_of(a)), major,
                  minor);
    if (sg_graph_torch_version(g))
        sg_buf_printf(&b, ", torch %s", sg_graph_torch_version(g));
    if (v->container_version >= 0)
        sg_buf_printf(&b, ", container version %d", v->container_version);
    sg_buf_putc(&b, '\n');
    text_inputs(&b, g);
    text_symbols(&b, g);
    text_checks(&b, g);
    sg_buf_printf(&b, "members: %zu, %" PRIu64 " bytes\n", sg_archive_member_count(a), sg_archive_total_size(a));
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i);
        sg_buf_printf(&b, "  %12" PRIu64 "  %s\n", m->size, m->name);
    }
    return sg_buf_finish(&b, out, "the inspect text", err);
}

/* "inputs" and "parameters": the user inputs, then everything else the graph takes. */
static void json_inputs(sg_buf *b, const sg_graph *g)
{
    size_t i, n, pass;

    for (pass = 0; pass < 2; pass++) {
        bool user = pass == 0;
        sg_buf_puts(b, user ? ",\"inputs\":[" : "],\"parameters\":[");
        for (i = n = 0; i < sg_graph_input_count(g); i++) {
            const sg_graph_input *in = sg_graph_input_at(g, i);
            if ((in->kind == SG_GRAPH_IN_USER) != user)
                continue;
            sg_buf_puts(b, n++ ? ",{" : "{");
            if (user)
                sg__json_put_field(b, "\"path\":", in->path);
            else
                sg__json_put_field(b, "\"kind\":", in->spec);
            sg__json_put_field(b, ",\"name\":", in->name);
            if (user)
                sg__json_put_field(b, ",\"dtype\":", in->tensor ? sg_graph_dtype_name(in->tensor->dtype) : NULL);
            else
                sg__json_put_field(b, ",\"target\":", in->target);
            sg_buf_puts(b, ",\"shape\":");
            put_shape(b, in->tensor, true);
            sg_buf_putc(b, '}');
        }
    }
    sg_buf_putc(b, ']');
}

static void json_symbols(sg_buf *b, const sg_graph *g)
{
    size_t i;

    sg_buf_puts(b, ",\"range_constraints\":{");
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        if (i)
            sg_buf_putc(b, ',');
        sg__json_put_str(b, r->key);
        sg_buf_putc(b, ':');
        put_range(b, r->has_min, &r->min, r->has_max, &r->max, true);
    }
    sg_buf_puts(b, "},\"symbols\":[");
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        sg__json_put_field(b, i ? ",{\"symbol\":" : "{\"symbol\":", sg_expr_symbol_name(s->sym));
        sg__json_put_field(b, ",\"input\":", s->path);
        if (s->path)
            sg_buf_printf(b, ",\"dim\":%zu", s->dim);
        else
            sg_buf_puts(b, ",\"dim\":null");
        sg_buf_puts(b, ",\"range\":");
        if (s->range)
            put_range(b, s->range->has_min, &s->range->min, s->range->has_max, &s->range->max, true);
        else
            sg_buf_puts(b, "null");
        sg_buf_putc(b, '}');
    }
    sg_buf_putc(b, ']');
}

static void json_checks(sg_buf *b, const sg_graph *g)
{
    size_t i;

    sg_buf_puts(b, ",\"runtime_asserts\":[");
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *as = sg_graph_assert_at(g, i);
        sg__json_put_field(b, i ? ",{\"target\":" : "{\"target\":", as->target);
        sg__json_put_field(b, ",\"node\":", as->node);
        sg_buf_puts(b, ",\"expr\":");
        put_expr(b, as->expr, true);
        sg__json_put_field(b, ",\"message\":", as->message);
        sg__json_put_field(b, ",\"source\":", as->source == SG_GRAPH_EXPR_MESSAGE ? "message"
                                               : as->source == SG_GRAPH_EXPR_NODES ? "nodes"
                                                                                   : NULL);
        sg_buf_puts(b, ",\"rebuilt\":");
        put_expr(b, as->rebuilt, true);
        sg__json_put_field(b, ",\"graph\":", as->graph);
        sg__json_put_field(b, ",\"hop\":", as->hop);
        sg_buf_putc(b, '}');
    }
    sg_buf_puts(b, "],\"guards_code\":");
    if (!sg_graph_has_guards_code(g)) {
        sg_buf_puts(b, "null");
        return;
    }
    sg_buf_putc(b, '[');
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        sg__json_put_field(b, i ? ",{\"text\":" : "{\"text\":", gd->text);
        sg_buf_puts(b, ",\"expr\":");
        put_expr(b, gd->expr, true);
        sg__json_put_field(b, ",\"reason\":", gd->reason);
        sg_buf_putc(b, '}');
    }
    sg_buf_putc(b, ']');
}

int sg_graph_inspect_json(char **out, const sg_archive *a, const sg_graph *g, sg_error *err)
{
    const sg_archive_versions *v = sg_archive_versions_of(a);
    int major, minor;
    size_t i;
    sg_buf b;

    *out = NULL;
    sg_buf_init(&b, INSPECT_MAX);
    sg_graph_schema_version(g, &major, &minor);
    sg_buf_puts(&b, "{\"format\":");
    sg__json_put_str(&b, sg_archive_format_name(sg_archive_format_of(a)));
    sg_buf_printf(&b, ",\"schema_version\":[%d,%d],\"torch_version\":", major, minor);
    sg__json_put_str_or_null(&b, sg_graph_torch_version(g));
    sg_buf_printf(&b, ",\"container_version\":%d", v->container_version);
    json_inputs(&b, g);
    json_symbols(&b, g);
    json_checks(&b, g);
    sg_buf_printf(&b, ",\"subgraphs\":%zu,\"metadata_checks\":%zu,\"members\":[", sg_graph_subgraph_count(g),
                  sg_graph_metadata_check_count(g));
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i);
        sg__json_put_field(&b, i ? ",{\"name\":" : "{\"name\":", m->name);
        sg_buf_printf(&b, ",\"size\":%" PRIu64 ",\"compressed_size\":%" PRIu64 ",\"method\":%u}", m->size,
                      m->comp_size, (unsigned)m->method);
    }
    sg_buf_puts(&b, "]}\n");
    return sg_buf_finish(&b, out, "the inspect answer", err);
}
