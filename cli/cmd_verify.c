/*
 * cmd_verify.c - `shapegate verify MODEL.pt2 [--spec SPEC.json] [--json]`:
 * prove that the archive's declared range_constraints (or the given spec)
 * admit only shapes that pass every runtime assert of the graph, or name the
 * dims that do not with a witness shape. Also the shared pipeline `pack`
 * uses (sg_cli_verify_open / sg_cli_verification_free): open the archive,
 * read the model JSON, parse the graph, build the trace, check it.
 *
 * Exit codes as `check`: 0 every dynamic dim proved, 1 some refuted (or the
 * spec invalid), 4 unknown, 2 usage, 3 unreadable or invalid input, 5 internal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CMD "verify"

static const sg_cli_opt verify_opts[] = {
    {"spec", SG_CLI_KEY_SPEC, true, false,
     "--spec FILE          decide this dynamic_shapes spec instead of the declared ranges\n"
     "                     (JSON, the corpus's structured form, as `check --spec`)"},
    {"json", 'j', false, false, "--json               print one JSON object instead of text"},
    SG_CLI_OPT_BUDGET("Z3 resource limit per query (default 50000000; 0: none)"),
    SG_CLI_OPT_HELP,
    SG_CLI_OPT_END,
};

static const sg_cli_spec verify_spec = {
    CMD,
    "usage: shapegate verify [options] MODEL.pt2\n"
    "\n"
    "Prove that the shapes the archive's range_constraints admit (or those a spec\n"
    "admits) pass every runtime assert of the exported graph and its input range\n"
    "checks, or report the dims that do not, with a witness shape.\n"
    "\n"
    "Options:\n",
    verify_opts,
    "\n"
    "Exit: 0 all dynamic dims proved, 1 some refuted (or the spec invalid), 4 unknown,\n"
    "      2 usage, 3 unreadable or invalid archive or spec, 5 internal error.\n",
    false,
    NULL,
};

/* Read all of `f` (at most 64 MiB) into a new buffer `*out` (free()). 0, 1 too large, 2 error. */
static int read_all(FILE *f, char **out, size_t *len)
{
    size_t cap = 0, n = 0, k;
    char *buf = NULL, *nb;

    *out = NULL;
    do {
        if (n == cap) {
            if (cap >= ((size_t)64 << 20)) {
                free(buf);
                return 1;
            }
            cap = cap ? cap * 2 : 65536;
            if (!(nb = realloc(buf, cap))) {
                free(buf);
                return 2;
            }
            buf = nb;
        }
        k = fread(buf + n, 1, cap - n, f);
        n += k;
    } while (k > 0);
    if (ferror(f)) {
        free(buf);
        return 2;
    }
    *out = buf;
    *len = n;
    return 0;
}

void sg_cli_verification_free(sg_cli_verification *v)
{
    if (!v)
        return;
    sg_report_free(v->report);
    sg_engine_free(v->engine);
    sg_graph_free(v->graph);
    sg_free(v->json);
    sg_archive_free(v->archive);
    memset(v, 0, sizeof *v);
}

int sg_cli_verify_open(sg_cli_verification *v, const char *cmd, const char *path, const char *spec_path,
                       const sg_check_options *opts)
{
    sg_verify_input in = SG_VERIFY_INPUT_INIT;
    sg_error err = SG_ERROR_INIT;
    const sg_archive_model *m;
    char *spec = NULL;
    size_t slen = 0;
    int rc;

    memset(v, 0, sizeof *v);
    v->opts = *opts;
    if ((rc = sg_archive_open(&v->archive, path, NULL, &err)) != 0
        || (rc = sg_archive_read_model(&v->json, &v->len, NULL, v->archive, NULL, &err)) != 0
        || (rc = sg_graph_parse(&v->graph, v->json, v->len, &err)) != 0) {
        sg_cli_path_error(cmd, path, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }
    m = sg_archive_find_model(v->archive, "model");
    if (!m)
        m = sg_archive_model_at(v->archive, 0);
    v->model_member = m ? m->json_member : NULL;
    if (spec_path) {
        FILE *f = fopen(spec_path, "rb");
        if (!f) {
            sg_cli_errorf(cmd, "%s: %s", spec_path, strerror(errno));
            return SG_EXIT_INPUT;
        }
        rc = read_all(f, &spec, &slen);
        fclose(f);
        if (rc != 0) {
            sg_cli_errorf(cmd, "%s: %s", spec_path, rc == 1 ? "larger than 64 MiB" : "cannot read");
            free(spec);
            return SG_EXIT_INPUT;
        }
    }
    in.graph = v->graph;
    in.name = path;
    in.spec = spec;
    in.spec_len = slen;
    in.spec_name = spec_path;
    if ((rc = sg_engine_new(&v->engine, NULL, &err)) == 0)
        rc = sg_engine_verify(v->engine, &in, &v->opts, &v->report, &err);
    free(spec);
    if (rc == SG_ENOMEM || rc == SG_ERROR) {
        sg_cli_path_error(cmd, path, err.msg);
        return SG_EXIT_INTERNAL;
    }
    if (rc) {
        if (spec_path)
            sg_cli_errorf(cmd, "%s", err.msg);
        else
            sg_cli_errorf(cmd, "%s: building the constraints: %s", path, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }
    return SG_EXIT_OK;
}

int sg_cli_verdict_exit(const sg_report *r)
{
    switch (sg_report_verdict(r)) {
    case SG_VERDICT_OK: return SG_EXIT_OK;
    case SG_VERDICT_UNKNOWN: return SG_EXIT_UNKNOWN;
    case SG_VERDICT_TORCH_FAILED: return SG_EXIT_TORCH_FAILED;
    default: return SG_EXIT_FALSE;
    }
}

int sg_cmd_verify(int argc, char **argv)
{
    sg_cli_trace_args a;
    sg_cli_verification v;
    int rc;

    sg_cli_trace_args_init(&a, CMD);
    if ((rc = sg_cli_parse(&verify_spec, argc, argv, sg_cli_on_trace_option, &a)) >= 0)
        return rc;
    if (optind != argc - 1)
        return sg_cli_usage_error(CMD, optind >= argc ? "no archive given" : "one archive expected");
    rc = sg_cli_verify_open(&v, CMD, argv[optind], a.spec_file, &a.opts);
    if (rc == SG_EXIT_OK) {
        char *text = NULL;
        sg_error err = SG_ERROR_INIT;
        if ((a.json ? sg_report_to_json(&text, v.report, 0, &err) : sg_report_to_text(&text, v.report, 0, &err)) != 0) {
            sg_cli_errorf(CMD, "%s", err.msg);
            rc = SG_EXIT_INTERNAL;
        } else {
            fputs(text, stdout);
            if (a.json)
                fputc('\n', stdout);
            rc = sg_cli_verdict_exit(v.report);
        }
        sg_free(text);
    }
    sg_cli_verification_free(&v);
    return sg_cli_finish_output(CMD, rc);
}

