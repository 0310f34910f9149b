/*
 * cmd_pack.c - `shapegate pack MODEL.pt2 -o OUT.pt2`: verify the archive's
 * declared constraints (as `verify`), then write a copy whose torch members
 * are byte for byte the source's, plus the record of what was verified in
 * extra/shapegate/constraints.json (extra_files/shapegate/constraints.json
 * in the flat layout). The output is written to a temporary file and renamed;
 * the input is never modified; on any error no output file is left.
 *
 * Exit codes: 0 written, 1 / 4 with --strict when the verdict is refuted /
 * unknown (nothing written), 2 usage, 3 unreadable or invalid input, 5
 * internal or output error.
 */
#include <string.h>

#include "cli.h"
#include "shapegate/archive.h"
#include "analysis/check.h"
#include "shapegate/common.h"
#include "shapegate/graph.h"

#define CMD "pack"

enum { OPT_STRICT = 256 };

static void pack_help(FILE *out)
{
    fputs("usage: shapegate pack [options] MODEL.pt2 -o OUT.pt2\n"
          "\n"
          "Verify the archive's declared range_constraints against its runtime asserts\n"
          "(as `shapegate verify`) and write OUT.pt2: every member of MODEL.pt2 copied\n"
          "byte for byte, plus extra/shapegate/constraints.json (extra_files/... in the\n"
          "flat layout of torch <= 2.7) recording per input dim the verified range,\n"
          "divisibility, relations and verdict, the solver and budget, and the SHA-256 of\n"
          "the model JSON. An existing record is replaced.\n"
          "\n"
          "Options:\n"
          "  -o, --output FILE    the archive to write (required; not MODEL.pt2 itself)\n"
          "  --strict             write nothing unless every dynamic dim is proved\n"
          "  --timeout MS         wall-clock limit for the whole check (default 60000; 0: none)\n"
          "  --query-timeout MS   Z3 time limit per query (default 10000; 0: none)\n"
          "  --rlimit N           Z3 resource limit per query (default 50000000; 0: none)\n"
          "  -h, --help           this help\n"
          "\n"
          "Exit: 0 written, 1 refuted and 4 unknown (with --strict; nothing written),\n"
          "      2 usage, 3 unreadable or invalid archive, 5 internal or output error.\n",
          out);
}

int sg_cmd_pack(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"strict", no_argument, NULL, OPT_STRICT},
        {"timeout", required_argument, NULL, SG_CLI_OPT_TIMEOUT},
        {"query-timeout", required_argument, NULL, SG_CLI_OPT_QUERY_TIMEOUT},
        {"rlimit", required_argument, NULL, SG_CLI_OPT_RLIMIT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_cli_verification v;
    sg_graph_record_info info;
    sg_error err = SG_ERROR_INIT;
    const char *output = NULL, *member;
    char *record = NULL;
    bool strict = false;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            pack_help(stdout);
            return sg_cli_finish_output(CMD, SG_EXIT_OK);
        case 'o':
            output = optarg;
            break;
        case OPT_STRICT:
            strict = true;
            break;
        case SG_CLI_OPT_TIMEOUT:
        case SG_CLI_OPT_QUERY_TIMEOUT:
        case SG_CLI_OPT_RLIMIT:
            if (!sg_cli_parse_budget(c, optarg, &opts))
                return sg_cli_usage_error(CMD, "'%s' is not a non-negative integer", optarg);
            break;
        default:
            return sg_cli_bad_option(CMD, argc, argv, c, longopts);
        }
    }
    if (optind != argc - 1)
        return sg_cli_usage_error(CMD, optind >= argc ? "no archive given" : "one archive expected");
    if (!output || !*output)
        return sg_cli_usage_error(CMD, "no output given (-o OUT.pt2)");
    rc = sg_cli_verify_open(&v, CMD, argv[optind], NULL, &opts);
    if (rc != SG_EXIT_OK)
        goto cleanup;
    if (strict && v.report->verdict != SG_VERDICT_OK) {
        sg_cli_errorf(CMD, "%s: verdict %s; nothing written (--strict)", argv[optind],
                      sg_verdict_name(v.report->verdict));
        rc = sg_cli_verdict_exit(v.report);
        goto cleanup;
    }
    memset(&info, 0, sizeof info);
    info.model_member = v.model_member;
    info.model_json = v.json;
    info.model_len = v.len;
    info.tool_version = SG_VERSION;
    info.opts = &v.opts;
    member = sg_archive_constraints_member(sg_archive_format_of(v.archive));
    if ((rc = sg_graph_constraints_json(&record, v.graph, v.report, &info, &err)) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if ((rc = sg_archive_write_with(v.archive, output, member, record, strlen(record), &err)) != 0) {
        sg_cli_errorf(CMD, "%s: %s", output, err.msg);
        /* the output side failing is not bad input: exit 5, except for an unusable name */
        rc = rc == SG_EINVALID || rc == SG_ELIMIT ? SG_EXIT_INPUT : SG_EXIT_INTERNAL;
        goto cleanup;
    }
    printf("%s: wrote %s with %s%s%s (verdict %s)\n", argv[optind], output, sg_archive_root(v.archive),
           sg_archive_root(v.archive)[0] ? "/" : "", member, sg_verdict_name(v.report->verdict));
    rc = SG_EXIT_OK;
cleanup:
    sg_free(record);
    sg_cli_verification_free(&v);
    return sg_cli_finish_output(CMD, rc);
}
