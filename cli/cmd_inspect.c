/*
 * cmd_inspect.c - `shapegate inspect MODEL.pt2 [--json]`: the container
 * format and versions, the graph's inputs with symbolic shapes and dtypes,
 * the symbols with their ranges and input dims, the guards_code entries
 * (torch >= 2.8) over the input sizes, the runtime asserts (also
 * those of control-flow subgraphs, tagged with the subgraph), the count of
 * tensor-metadata checks and the member list with sizes. Exit 0, 2 usage, 3 unreadable or invalid input,
 * 5 internal.
 */
#include <stdlib.h>

#include "cli.h"
#include "shapegate/graph.h"

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

int sg_cmd_inspect(int argc, char **argv)
{
    sg_error err = SG_ERROR_INIT;
    sg_archive *a = NULL;
    sg_graph *g = NULL;
    bool json = false;
    char *text = NULL;
    int rc;

    if ((rc = sg_cli_parse(&inspect_spec, argc, argv, sg_cli_on_flag, &json)) >= 0) /* --json sets `json` */
        return rc;
    if (optind != argc - 1)
        return sg_cli_usage_error(CMD, optind >= argc ? "no MODEL.pt2 given" : "exactly one MODEL.pt2 expected");

    if ((rc = sg_archive_open(&a, argv[optind], NULL, &err)) != 0
        || (rc = sg_graph_load(&g, a, NULL, &err)) != 0) {
        sg_cli_path_error(CMD, argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_READING);
        goto cleanup;
    }
    rc = json ? sg_graph_inspect_json(&text, a, g, &err) : sg_graph_inspect_text(&text, argv[optind], a, g, &err);
    if (rc != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    fputs(text, stdout);
    rc = sg_cli_finish_output(CMD, SG_EXIT_OK);
cleanup:
    sg_free(text);
    sg_graph_free(g);
    sg_archive_free(a);
    return rc;
}
