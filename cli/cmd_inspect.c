/*
 * cmd_inspect.c - `shapegate inspect MODEL.pt2 [--json]`: the container
 * format and versions, the graph's inputs with symbolic shapes and dtypes,
 * the symbols with their ranges and input dims, the guards_code entries
 * (torch >= 2.8) over the input sizes, the runtime asserts (also
 * those of control-flow subgraphs, tagged with the subgraph), the count of
 * tensor-metadata checks and the member list with sizes. Exit 0, 2 usage, 3 unreadable or invalid input,
 * 5 internal.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shapegate/archive.h"

#define CMD "inspect"

static const sg_cli_opt inspect_opts[] = {
    {"json", 'j', false, false, "--json    print one JSON object (docs/graph.md) instead of text"},
    {"help", SG_CLI_KEY_HELP, false, true, "--help    show this help"},
    SG_CLI_OPT_END,
};

static const sg_cli_spec inspect_spec = {
    CMD,
    "usage: shapegate inspect [--json] MODEL.pt2\n"
    "\n"
    "Show what a torch.export archive declares: format and versions, inputs with\n"
    "symbolic shapes and dtypes, symbols with their ranges and input dims, runtime\n"
    "asserts, and the member list with sizes. Weights are never read.\n"
    "\n"
    "Options:\n",
    inspect_opts,
    "\n"
    "Exit codes: 0 ok, 2 usage, 3 unreadable or invalid archive, 5 internal error.\n",
    false,
    NULL,
};

static int on_inspect_opt(int key, const char *arg, void *ctx)
{
    (void)key;
    (void)arg;
    *(bool *)ctx = true; /* --json */
    return -1;
}

/* Write `s` as a JSON string literal (null when NULL). */
static void sg_cli_put_json_str(FILE *out, const char *s)
{
    const unsigned char *p;

    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* Print `e` in sympy form (or `?` when printing fails) as text or a JSON string. */
static void put_expr(FILE *out, const sg_expr *e, bool json)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;

    if (e && sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) == 0) {
        if (json)
            sg_cli_put_json_str(out, s);
        else
            fputs(s, out);
    } else {
        fputs(json ? "null" : "?", out);
    }
    sg_free(s);
}

/* One bound: the integer, or null / -oo / oo when absent. */
static void put_bound(FILE *out, bool has, const sg_num *v, bool json, const char *inf)
{
    if (has)
        fputs(v->text, out);
    else
        fputs(json ? "null" : inf, out);
}

/* The shape of an input: "[s77, 3]" (text) or ["s77", "3"] (JSON). */
static void put_shape(FILE *out, const sg_graph_tensor *t, bool json)
{
    size_t d;

    fputc('[', out);
    for (d = 0; t && d < t->ndim; d++) {
        if (d)
            fputs(", ", out);
        put_expr(out, t->sizes[d], json);
    }
    fputc(']', out);
}

/* Short names of the input kinds. */
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

/* Text output. */
static void print_text(FILE *out, const char *path, sg_archive *a, const sg_graph *g)
{
    const sg_archive_versions *v = sg_archive_versions_of(a);
    int major, minor;
    size_t i, nsub, nparams = 0;

    sg_graph_schema_version(g, &major, &minor);
    fprintf(out, "%s: %s archive, schema %d.%d", path, sg_archive_format_name(sg_archive_format_of(a)),
            major, minor);
    if (sg_graph_torch_version(g))
        fprintf(out, ", torch %s", sg_graph_torch_version(g));
    if (v->container_version >= 0)
        fprintf(out, ", container version %d", v->container_version);
    fputc('\n', out);

    fputs("inputs:\n", out);
    for (i = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER) {
            nparams++;
            continue;
        }
        fprintf(out, "  %s %s ", in->path, in->tensor ? sg_graph_dtype_name(in->tensor->dtype) : "(not a tensor)");
        if (in->tensor)
            put_shape(out, in->tensor, false);
        fprintf(out, "  (%s)\n", in->name);
    }
    if (nparams) {
        fprintf(out, "parameters, buffers and constants: %zu\n", nparams);
        for (i = 0; i < sg_graph_input_count(g); i++) {
            const sg_graph_input *in = sg_graph_input_at(g, i);
            if (in->kind == SG_GRAPH_IN_USER)
                continue;
            fprintf(out, "  %s %s", input_kind_name(in->kind), in->target ? in->target : in->name);
            if (in->tensor) {
                fprintf(out, " %s ", sg_graph_dtype_name(in->tensor->dtype));
                put_shape(out, in->tensor, false);
            }
            fputc('\n', out);
        }
    }

    fputs("symbols:\n", out);
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        fprintf(out, "  %s", sg_expr_symbol_name(s->sym));
        if (s->range) {
            fputs(" in [", out);
            put_bound(out, s->range->has_min, &s->range->min, false, "-oo");
            fputs(", ", out);
            put_bound(out, s->range->has_max, &s->range->max, false, "oo");
            fputc(']', out);
        }
        if (s->path)
            fprintf(out, "  = %s.size()[%zu]", s->path, s->dim);
        fputc('\n', out);
    }
    fputs("range constraints:\n", out);
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        fprintf(out, "  %s: [", r->key);
        put_bound(out, r->has_min, &r->min, false, "-oo");
        fputs(", ", out);
        put_bound(out, r->has_max, &r->max, false, "oo");
        fputs("]\n", out);
    }
    fprintf(out, "runtime asserts: %zu", sg_graph_assert_count(g));
    for (i = nsub = 0; i < sg_graph_assert_count(g); i++)
        nsub += sg_graph_assert_at(g, i)->graph[0] != '\0';
    if (sg_graph_subgraph_count(g))
        fprintf(out, " (%zu in %zu control-flow subgraphs)", nsub, sg_graph_subgraph_count(g));
    fputc('\n', out);
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *as = sg_graph_assert_at(g, i);
        fputs("  ", out);
        put_expr(out, as->expr, false);
        fprintf(out, "  (%s on '%s'", as->target, as->node);
        if (as->graph[0])
            fprintf(out, " in %s of %s", as->graph, as->hop ? as->hop : "?");
        if (as->source != SG_GRAPH_EXPR_MESSAGE && as->kind == SG_GRAPH_ASSERT_SCALAR)
            fputs(as->source == SG_GRAPH_EXPR_NODES ? ", rebuilt from the nodes" : ", not recovered", out);
        fputs(")\n", out);
    }
    if (sg_graph_has_guards_code(g)) {
        fprintf(out, "guards_code: %zu (checked on every call)\n", sg_graph_guard_count(g));
        for (i = 0; i < sg_graph_guard_count(g); i++) {
            const sg_graph_guard *gd = sg_graph_guard_at(g, i);
            fprintf(out, "  %s", gd->text);
            if (gd->expr) {
                fputs("  [", out);
                put_expr(out, gd->expr, false);
                fputc(']', out);
            } else {
                fprintf(out, "  (not read: %s)", gd->reason ? gd->reason : "?");
            }
            fputc('\n', out);
        }
    }
    fprintf(out, "metadata checks (_assert_tensor_metadata): %zu\n", sg_graph_metadata_check_count(g));
    fprintf(out, "members: %zu, %" PRIu64 " bytes\n", sg_archive_member_count(a), sg_archive_total_size(a));
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i);
        fprintf(out, "  %12" PRIu64 "  %s\n", m->size, m->name);
    }
}

/* JSON output: one object. */
void sg_cli_inspect_json(FILE *out, sg_archive *a, const sg_graph *g)
{
    const sg_archive_versions *v = sg_archive_versions_of(a);
    int major, minor;
    size_t i, n;

    sg_graph_schema_version(g, &major, &minor);
    fputs("{\"format\":", out);
    sg_cli_put_json_str(out, sg_archive_format_name(sg_archive_format_of(a)));
    fprintf(out, ",\"schema_version\":[%d,%d],\"torch_version\":", major, minor);
    sg_cli_put_json_str(out, sg_graph_torch_version(g));
    fprintf(out, ",\"container_version\":%d,\"inputs\":[", v->container_version);
    for (i = n = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind != SG_GRAPH_IN_USER)
            continue;
        fputs(n++ ? ",{\"path\":" : "{\"path\":", out);
        sg_cli_put_json_str(out, in->path);
        fputs(",\"name\":", out);
        sg_cli_put_json_str(out, in->name);
        fputs(",\"dtype\":", out);
        sg_cli_put_json_str(out, in->tensor ? sg_graph_dtype_name(in->tensor->dtype) : NULL);
        fputs(",\"shape\":", out);
        if (in->tensor)
            put_shape(out, in->tensor, true);
        else
            fputs("null", out);
        fputc('}', out);
    }
    fputs("],\"parameters\":[", out);
    for (i = n = 0; i < sg_graph_input_count(g); i++) {
        const sg_graph_input *in = sg_graph_input_at(g, i);
        if (in->kind == SG_GRAPH_IN_USER)
            continue;
        fputs(n++ ? ",{\"kind\":" : "{\"kind\":", out);
        sg_cli_put_json_str(out, in->spec);
        fputs(",\"name\":", out);
        sg_cli_put_json_str(out, in->name);
        fputs(",\"target\":", out);
        sg_cli_put_json_str(out, in->target);
        fputs(",\"shape\":", out);
        if (in->tensor)
            put_shape(out, in->tensor, true);
        else
            fputs("null", out);
        fputc('}', out);
    }
    fputs("],\"range_constraints\":{", out);
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        if (i)
            fputc(',', out);
        sg_cli_put_json_str(out, r->key);
        fputs(":[", out);
        put_bound(out, r->has_min, &r->min, true, NULL);
        fputc(',', out);
        put_bound(out, r->has_max, &r->max, true, NULL);
        fputc(']', out);
    }
    fputs("},\"symbols\":[", out);
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        fputs(i ? ",{\"symbol\":" : "{\"symbol\":", out);
        sg_cli_put_json_str(out, sg_expr_symbol_name(s->sym));
        fputs(",\"input\":", out);
        sg_cli_put_json_str(out, s->path);
        if (s->path)
            fprintf(out, ",\"dim\":%zu", s->dim);
        else
            fputs(",\"dim\":null", out);
        fputs(",\"range\":", out);
        if (s->range) {
            fputc('[', out);
            put_bound(out, s->range->has_min, &s->range->min, true, NULL);
            fputc(',', out);
            put_bound(out, s->range->has_max, &s->range->max, true, NULL);
            fputc(']', out);
        } else {
            fputs("null", out);
        }
        fputc('}', out);
    }
    fputs("],\"runtime_asserts\":[", out);
    for (i = 0; i < sg_graph_assert_count(g); i++) {
        const sg_graph_assert *as = sg_graph_assert_at(g, i);
        fputs(i ? ",{\"target\":" : "{\"target\":", out);
        sg_cli_put_json_str(out, as->target);
        fputs(",\"node\":", out);
        sg_cli_put_json_str(out, as->node);
        fputs(",\"expr\":", out);
        put_expr(out, as->expr, true);
        fputs(",\"message\":", out);
        sg_cli_put_json_str(out, as->message);
        fputs(",\"source\":", out);
        sg_cli_put_json_str(out, as->source == SG_GRAPH_EXPR_MESSAGE ? "message"
                          : as->source == SG_GRAPH_EXPR_NODES ? "nodes" : NULL);
        fputs(",\"rebuilt\":", out);
        put_expr(out, as->rebuilt, true);
        fputs(",\"graph\":", out);
        sg_cli_put_json_str(out, as->graph);
        fputs(",\"hop\":", out);
        sg_cli_put_json_str(out, as->hop);
        fputc('}', out);
    }
    fputs("],\"guards_code\":", out);
    if (sg_graph_has_guards_code(g)) {
        fputc('[', out);
        for (i = 0; i < sg_graph_guard_count(g); i++) {
            const sg_graph_guard *gd = sg_graph_guard_at(g, i);
            fputs(i ? ",{\"text\":" : "{\"text\":", out);
            sg_cli_put_json_str(out, gd->text);
            fputs(",\"expr\":", out);
            put_expr(out, gd->expr, true);
            fputs(",\"reason\":", out);
            sg_cli_put_json_str(out, gd->reason);
            fputc('}', out);
        }
        fputc(']', out);
    } else {
        fputs("null", out);
    }
    fprintf(out, ",\"subgraphs\":%zu,\"metadata_checks\":%zu", sg_graph_subgraph_count(g),
            sg_graph_metadata_check_count(g));
    fputs(",\"members\":[", out);
    for (i = 0; i < sg_archive_member_count(a); i++) {
        const sg_archive_member *m = sg_archive_member_at(a, i);
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        sg_cli_put_json_str(out, m->name);
        fprintf(out, ",\"size\":%" PRIu64 ",\"compressed_size\":%" PRIu64 ",\"method\":%u}", m->size,
                m->comp_size, (unsigned)m->method);
    }
    fputs("]}\n", out);
}

int sg_cmd_inspect(int argc, char **argv)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    bool json = false;
    int rc;

    if ((rc = sg_cli_parse(&inspect_spec, argc, argv, on_inspect_opt, &json)) >= 0)
        return rc;
    if (optind != argc - 1)
        return sg_cli_usage_error(CMD, optind >= argc ? "no MODEL.pt2 given" : "exactly one MODEL.pt2 expected");

    if ((rc = sg_archive_open(&a, argv[optind], NULL, &err)) != 0
        || (rc = sg_graph_load(&g, a, NULL, &err)) != 0) {
        sg_cli_path_error(CMD, argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_READING);
        goto cleanup;
    }
    if (json)
        sg_cli_inspect_json(stdout, a, g);
    else
        print_text(stdout, argv[optind], a, g);
    rc = sg_cli_finish_output(CMD, SG_EXIT_OK);
cleanup:
    sg_graph_free(g);
    sg_archive_free(a);
    return rc;
}
