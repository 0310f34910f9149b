/*
 * fuzz_graph.c - libFuzzer target for the graph model on ExportedProgram JSON.
 *
 * The bytes are a model JSON as sg_graph_load parses it (what
 * sg_archive_read_model hands over, torch <= 2.6 floats quoted; the seeds are
 * the corpus archives' models, written so by trace_seeds --models), given to
 * sg_graph_parse without a terminating NUL. A parse that fails must
 * leave no graph and say why on one line; a graph that parses is read back
 * through every accessor (each entry's strings and expressions must be there)
 * and turned into a trace (sg_graph_to_trace: symbols, runtime asserts as
 * guards, input dims with the declared ranges as the spec), which must write,
 * reload and write the same JSON. The archive target reaches the same code
 * only through mutated zip files; this one mutates the JSON itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "shapegate/graph.h"

/* Every accessor of a parsed graph; aborts when an entry lacks what graph.h promises. */
static void read_back(const sg_graph *g)
{
    size_t i;
    int major, minor;

    sg_graph_schema_version(g, &major, &minor);
    for (i = 0; i < sg_graph_input_count(g); i++)
        if (!sg_graph_input_at(g, i))
            SG_FUZZ_FAIL("input %zu missing", i);
    for (i = 0; i < sg_graph_output_count(g); i++)
        if (!sg_graph_output_at(g, i))
            SG_FUZZ_FAIL("output %zu missing", i);
    for (i = 0; i < sg_graph_range_count(g); i++) {
        const sg_graph_range *r = sg_graph_range_at(g, i);
        if (!r || !r->key || !r->expr)
            SG_FUZZ_FAIL("range %zu without its key or expression", i);
    }
    for (i = 0; i < sg_graph_assert_count(g); i++)
        if (!sg_graph_assert_at(g, i))
            SG_FUZZ_FAIL("assert %zu missing", i);
    for (i = 0; i < sg_graph_symbol_count(g); i++) {
        const sg_graph_symbol *s = sg_graph_symbol_at(g, i);
        if (!s || !s->sym || sg_expr_kind(s->sym) != SG_SYM)
            SG_FUZZ_FAIL("symbol %zu is not a symbol", i);
        if (s->path && s->input >= sg_graph_input_count(g))
            SG_FUZZ_FAIL("symbol %zu names input %zu of %zu", i, s->input, sg_graph_input_count(g));
    }
    for (i = 0; i < sg_graph_guard_count(g); i++) {
        const sg_graph_guard *gd = sg_graph_guard_at(g, i);
        if (!gd || !gd->text || !gd->expr == !gd->reason)
            SG_FUZZ_FAIL("guards_code[%zu]: needs its text and either an expression or a reason", i);
        if (gd->expr && sg_expr_sort(gd->expr) != SG_SORT_BOOL)
            SG_FUZZ_FAIL("guards_code[%zu] read as a non-boolean expression", i);
        if (gd->reason && strchr(gd->reason, '\n'))
            SG_FUZZ_FAIL("guards_code[%zu]: a reason of more than one line", i);
    }
    if (!sg_graph_has_guards_code(g) && sg_graph_guard_count(g))
        SG_FUZZ_FAIL("guards_code entries without a guards_code list");
    (void)sg_graph_node_count(g);
    (void)sg_graph_subgraph_count(g);
    (void)sg_graph_metadata_check_count(g);
}

/* Parse the bytes as a model JSON; read back and convert what parses. Returns 0. */
int sg_fuzz_graph(const uint8_t *data, size_t size)
{
    sg_error err = SG_ERROR_INIT;
    sg_graph *g = NULL;
    sg_trace *t = NULL;
    int rc;

    if (size > (size_t)1 << 20)
        return 0;
    rc = sg_graph_parse(&g, (const char *)data, size, &err);
    if (rc != 0) {
        if (rc != SG_EINVALID && rc != SG_ELIMIT && rc != SG_EUNSUPPORTED && rc != SG_ENOMEM)
            SG_FUZZ_FAIL("sg_graph_parse returned undocumented code %d (%s)", rc, err.msg);
        if (g)
            SG_FUZZ_FAIL("failed graph parse (%d) left a graph", rc);
        if (!err.msg[0] || strchr(err.msg, '\n'))
            SG_FUZZ_FAIL("error %d without a one-line message: '%s'", rc, err.msg);
        goto cleanup;
    }
    read_back(g);
    rc = sg_graph_to_trace(&t, g, &err);
    if (rc != 0) {
        if (t)
            SG_FUZZ_FAIL("failed sg_graph_to_trace (%d) left a trace", rc);
        goto cleanup;
    }
    sg_fuzz_trace_roundtrip(t);
cleanup:
    sg_trace_free(t);
    sg_graph_free(g);
    return 0;
}

SG_FUZZ_ENTRY(sg_fuzz_graph)
