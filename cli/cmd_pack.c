/*
 * cmd_pack.c - `shapegate pack MODEL.pt2 -o OUT.pt2`: verify the archive's
 * declared constraints (as `verify`), then write a copy whose torch members
 * are byte for byte the source's, plus the record of what was verified in
 * extra/shapegate/constraints.json (extra_files/shapegate/constraints.json
 * in the flat layout). The output is written to a temporary file and renamed;
 * the input is never modified; on any error no output file is left.
 *
 * `-o -` streams the archive to stdout (the line saying what was written then
 * goes to stderr). The output never replaces a symbolic link, device, FIFO
 * or folder, and keeps an existing file's mode (archive/write.c).
 *
 * Exit codes: 0 written, 1 / 4 with --strict when the verdict is refuted /
 * unknown (nothing written), 2 usage, 3 unreadable or invalid input, 5
 * internal error or the output cannot be written, 7 the output refused.
 */
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CMD "pack"

enum { OPT_STRICT = 256 };

static const sg_cli_opt pack_opts[] = {
    {"output", 'o', true, true, "-o, --output FILE    the archive to write (required; not MODEL.pt2 itself; - for stdout)"},
    {"strict", OPT_STRICT, false, false, "--strict             write nothing unless every dynamic dim is proved"},
    SG_CLI_OPT_BUDGET("Z3 resource limit per query (default 50000000; 0: none)"),
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec pack_spec = {
    CMD,
    "usage: shapegate pack [options] MODEL.pt2 -o OUT.pt2\n"
    "\n"
    "Verify the archive's declared range_constraints against its runtime asserts\n"
    "(as `shapegate verify`) and write OUT.pt2: every member of MODEL.pt2 copied\n"
    "byte for byte, plus extra/shapegate/constraints.json (extra_files/... in the\n"
    "flat layout of torch <= 2.7) recording per input dim the verified range,\n"
    "divisibility, relations and verdict, the solver and budget, and the SHA-256 of\n"
    "the model JSON. An existing record is replaced. OUT.pt2 is written to a\n"
    "temporary file beside it and renamed: it may replace a regular file (keeping\n"
    "its mode), never a read-only file, symbolic link, device, FIFO or folder.\n"
    "-o - streams the archive to stdout.\n"
    "\n"
    "Options:\n",
    pack_opts,
    "\n"
    "Exit: 0 written, 1 refuted and 4 unknown (with --strict; nothing written),\n"
    "      2 usage, 3 unreadable or invalid archive, 5 internal error or the output\n"
    "      cannot be written, 7 the output refused (not a regular file, read-only,\n"
    "      a symbolic link, the input itself, a terminal).\n",
    false,
    NULL,
};

typedef struct pack_args {
    sg_check_options opts;
    const char *output;
    bool strict;
} pack_args;

static int on_pack_opt(int key, const char *arg, void *ctx)
{
    pack_args *a = ctx;
    switch (key) {
    case 'o': a->output = arg; return -1;
    case OPT_STRICT: a->strict = true; return -1;
    default: return sg_cli_budget_option(CMD, key, arg, &a->opts);
    }
}

int sg_cmd_pack(int argc, char **argv)
{
    sg_check_options defaults = SG_CHECK_OPTIONS_INIT;
    pack_args a;
    sg_cli_verification v;
    sg_graph_record_info info;
    sg_error err = SG_ERROR_INIT;
    const char *member;
    char *record = NULL;
    bool to_stdout;
    int rc;

    memset(&a, 0, sizeof a);
    a.opts = defaults;
    if ((rc = sg_cli_parse(&pack_spec, argc, argv, on_pack_opt, &a)) >= 0)
        return rc;
    if (optind != argc - 1)
        return sg_cli_usage_error(CMD, optind >= argc ? "no archive given" : "one archive expected");
    if (!a.output || !*a.output)
        return sg_cli_usage_error(CMD, "no output given (-o OUT.pt2)");
    to_stdout = strcmp(a.output, "-") == 0;
    if (to_stdout && isatty(STDOUT_FILENO)) {
        sg_cli_errorf(CMD, "stdout is a terminal: not writing an archive to it (redirect it, or -o FILE)");
        return SG_EXIT_OUTPUT;
    }
    rc = sg_cli_verify_open(&v, CMD, argv[optind], NULL, &a.opts);
    if (rc != SG_EXIT_OK)
        goto cleanup;
    if (a.strict && sg_report_verdict(v.report) != SG_VERDICT_OK) {
        sg_cli_errorf(CMD, "%s: verdict %s; nothing written (--strict)", argv[optind],
                      sg_verdict_name(sg_report_verdict(v.report)));
        rc = sg_cli_verdict_exit(v.report);
        goto cleanup;
    }
    memset(&info, 0, sizeof info);
    info.model_member = v.model_member;
    info.model_json = v.json;
    info.model_len = v.len;
    info.tool_version = sg_version();
    info.opts = &v.opts;
    member = sg_archive_constraints_member(sg_archive_format_of(v.archive));
    if ((rc = sg_graph_constraints_json(&record, v.graph, v.report, &info, &err)) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if (to_stdout) {
        fflush(stdout);
        rc = sg_archive_write_with_fd(v.archive, STDOUT_FILENO, member, record, strlen(record), &err);
    } else {
        rc = sg_archive_write_with(v.archive, a.output, member, record, strlen(record), &err);
    }
    if (rc != 0) {
        sg_cli_errorf(CMD, "%s: %s", to_stdout ? "stdout" : a.output, err.msg);
        /* refused (what is there is not ours to replace): 6; cannot write: 5; a record over the limits: 3 */
        rc = rc == SG_EINVALID ? SG_EXIT_OUTPUT : rc == SG_ELIMIT ? SG_EXIT_INPUT : SG_EXIT_INTERNAL;
        goto cleanup;
    }
    /* what was written, on stdout, or on stderr when stdout holds the archive */
    fprintf(to_stdout ? stderr : stdout, "%s: wrote %s with %s%s%s (verdict %s)\n", argv[optind],
            to_stdout ? "stdout" : a.output, sg_archive_root(v.archive), sg_archive_root(v.archive)[0] ? "/" : "",
            member, sg_verdict_name(sg_report_verdict(v.report)));
    rc = SG_EXIT_OK;
cleanup:
    sg_free(record);
    sg_cli_verification_free(&v);
    return sg_cli_finish_output(CMD, rc);
}
