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
#include "shapegate/archive.h"
#include "shapegate/check.h"
#include "shapegate/common.h"
#include "shapegate/graph.h"

#define CMD "verify"

enum { OPT_SPEC = 256, OPT_TIMEOUT, OPT_QUERY_TIMEOUT, OPT_RLIMIT };

static void verify_help(FILE *out)
{
    fputs("usage: shapegate verify [options] MODEL.pt2\n"
          "\n"
          "Prove that the shapes the archive's range_constraints admit (or those a spec\n"
          "admits) pass every runtime assert of the exported graph and its input range\n"
          "checks, or report the dims that do not, with a witness shape.\n"
          "\n"
          "Options:\n"
          "  --spec FILE          decide this dynamic_shapes spec instead of the declared ranges\n"
          "                       (JSON, the corpus's structured form, as `check --spec`)\n"
          "  --json               print one JSON object instead of text\n"
          "  --timeout MS         wall-clock limit for the whole check (default 60000; 0: none)\n"
          "  --query-timeout MS   Z3 time limit per query (default 10000; 0: none)\n"
          "  --rlimit N           Z3 resource limit per query (default 50000000; 0: none)\n"
          "  -h, --help           this help\n"
          "\n"
          "Exit: 0 all dynamic dims proved, 1 some refuted (or the spec invalid), 4 unknown,\n"
          "      2 usage, 3 unreadable or invalid archive or spec, 5 internal error.\n",
          out);
}

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
    sg_trace_free(v->trace);
    sg_graph_free(v->graph);
    sg_free(v->json);
    sg_archive_free(v->archive);
    memset(v, 0, sizeof *v);
}

int sg_cli_verify_open(sg_cli_verification *v, const char *cmd, const char *path, const char *spec_path,
                       const sg_check_options *opts)
{
    sg_error err = SG_ERROR_INIT;
    const sg_archive_model *m;
    int rc;

    memset(v, 0, sizeof *v);
    v->opts = *opts;
    if ((rc = sg_archive_open(&v->archive, path, NULL, &err)) != 0
        || (rc = sg_archive_read_model(&v->json, &v->len, NULL, v->archive, NULL, &err)) != 0
        || (rc = sg_graph_parse(&v->graph, v->json, v->len, &err)) != 0) {
        sg_cli_errorf(cmd, "%s: %s", path, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }
    m = sg_archive_find_model(v->archive, "model");
    if (!m)
        m = sg_archive_model_at(v->archive, 0);
    v->model_member = m ? m->json_member : NULL;
    if (spec_path) {
        char *spec = NULL;
        size_t slen = 0;
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
        rc = sg_graph_to_trace_spec(&v->trace, v->graph, spec, slen, spec_path, &err);
        free(spec);
        if (rc != 0) {
            sg_cli_errorf(cmd, "%s", err.msg);
            return sg_cli_exit_code(rc, SG_CLI_READING);
        }
    } else if ((rc = sg_graph_to_trace(&v->trace, v->graph, &err)) != 0) {
        sg_cli_errorf(cmd, "%s: building the constraints: %s", path, err.msg);
        return sg_cli_exit_code(rc, SG_CLI_READING);
    }
    if ((rc = sg_check(&v->report, v->trace, &v->opts, &err)) != 0) {
        sg_cli_errorf(cmd, "%s: %s", path, err.msg);
        return SG_EXIT_INTERNAL;
    }
    return SG_EXIT_OK;
}

int sg_cli_verdict_exit(const sg_report *r)
{
    switch (r->verdict) {
    case SG_VERDICT_OK: return SG_EXIT_OK;
    case SG_VERDICT_UNKNOWN: return SG_EXIT_UNKNOWN;
    default: return SG_EXIT_FALSE;
    }
}

bool sg_cli_parse_budget(int opt, const char *arg, sg_check_options *o)
{
    char *end;
    unsigned long long v;

    if (!*arg || *arg == '-')
        return false;
    errno = 0;
    v = strtoull(arg, &end, 10);
    if (errno || *end)
        return false;
    if (opt == SG_CLI_OPT_RLIMIT) {
        o->query_rlimit = v;
        return true;
    }
    if (v > 0xFFFFFFFFull)
        return false;
    if (opt == SG_CLI_OPT_TIMEOUT)
        o->timeout_ms = (unsigned)v;
    else
        o->query_timeout_ms = (unsigned)v;
    return true;
}

/* Print an expression in sympy form (or `?`). */
static void put_expr(FILE *out, const sg_expr *e)
{
    char *s = NULL;
    sg_error err = SG_ERROR_INIT;

    if (e && sg_expr_print(&s, e, SG_SYNTAX_SYMPY, NULL, NULL, &err) == 0)
        fputs(s, out);
    else
        fputs("?", out);
    sg_free(s);
}

/* The number of recovered asserts that mention an unbacked (data-dependent) symbol. */
static size_t data_dependent(const sg_cli_verification *v)
{
    size_t i, k, n = 0, ns;
    const sg_expr **syms = NULL;
    sg_error err = SG_ERROR_INIT;

    for (i = 0; i < sg_graph_assert_count(v->graph); i++) {
        const sg_graph_assert *a = sg_graph_assert_at(v->graph, i);
        bool dd = false;
        if (!a->expr || sg_expr_symbols(&syms, &ns, sg_graph_pool(v->graph), a->expr, &err) != 0)
            continue;
        for (k = 0; k < ns; k++) {
            const sg_symbol_info *si;
            const char *name = sg_expr_symbol_name(syms[k]);
            const sg_expr *s2 = sg_pool_find_symbol(sg_trace_pool(v->trace), name, strlen(name));
            if (s2 && (si = sg_trace_symbol_info(v->trace, s2)) && si->unbacked)
                dd = true;
        }
        sg_free(syms);
        syms = NULL;
        n += dd;
    }
    return n;
}

/* The text report. */
static void print_text(FILE *out, const char *path, const sg_cli_verification *v, bool spec)
{
    const sg_report *r = v->report;
    size_t n = 0, i, k, checked = 0, dd = data_dependent(v);
    const sg_input_dim *in = sg_trace_inputs(v->trace, &n);
    char a[SG_INT_STRLEN];

    for (i = 0; i < sg_graph_assert_count(v->graph); i++)
        checked += sg_graph_assert_at(v->graph, i)->expr != NULL;
    fprintf(out, "%s: %s (%s)\n", path, sg_verdict_name(r->verdict),
            spec ? "the given spec" : "the declared range_constraints");
    fprintf(out, "runtime asserts: %zu (%zu over input sizes, %zu data-dependent, %zu not recovered)\n",
            sg_graph_assert_count(v->graph), checked - dd, dd, sg_graph_assert_count(v->graph) - checked);
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        const sg_input_dim *x = &in[d->input];
        if (d->status == SG_DIM_STATIC)
            continue;
        fprintf(out, "  %s.size()[%d] = ", x->path, x->dim);
        put_expr(out, x->value);
        fprintf(out, ": %s", d->status == SG_DIM_PROVED ? "proved" : d->status == SG_DIM_REFUTED ? "refuted" : "unknown");
        if (d->reason[0])
            fprintf(out, " (%s)", d->reason);
        fputc('\n', out);
    }
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *vi = &r->violations[i];
        fprintf(out, "violation: %s: %s\n", vi->dim ? vi->dim : "?", vi->message ? vi->message : "");
        if (vi->has_counterexample) {
            fputs("  witness:", out);
            for (k = 0; k < n; k++)
                fprintf(out, "%s %s.size()[%d]=%s", k ? "," : "", in[k].path, in[k].dim,
                        sg_int_format(a, vi->counterexample[k]));
            fputc('\n', out);
        }
        for (k = 0; k < vi->ncore; k++)
            fprintf(out, "  %s: %s\n",
                    vi->core[k].kind == SG_CORE_GUARD ? "fails runtime assert"
                    : vi->core[k].kind == SG_CORE_RANGE ? "fails declared range"
                    : vi->core[k].kind == SG_CORE_SPEC ? "spec" : "with",
                    vi->core[k].text);
    }
}

int sg_cmd_verify(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"spec", required_argument, NULL, OPT_SPEC},
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, SG_CLI_OPT_TIMEOUT},
        {"query-timeout", required_argument, NULL, SG_CLI_OPT_QUERY_TIMEOUT},
        {"rlimit", required_argument, NULL, SG_CLI_OPT_RLIMIT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_cli_verification v;
    const char *spec = NULL;
    bool json = false;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            verify_help(stdout);
            return sg_cli_finish_output(CMD, SG_EXIT_OK);
        case 'j':
            json = true;
            break;
        case OPT_SPEC:
            spec = optarg;
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
    rc = sg_cli_verify_open(&v, CMD, argv[optind], spec, &opts);
    if (rc == SG_EXIT_OK) {
        if (json) {
            char *rep = NULL;
            sg_error err = SG_ERROR_INIT;
            size_t checked = 0, i, dd = data_dependent(&v);
            for (i = 0; i < sg_graph_assert_count(v.graph); i++)
                checked += sg_graph_assert_at(v.graph, i)->expr != NULL;
            if (sg_report_to_json(&rep, v.report, v.trace, &err) != 0) {
                sg_cli_errorf(CMD, "%s", err.msg);
                rc = SG_EXIT_INTERNAL;
            } else {
                printf("{\"archive\": ");
                sg_cli_put_json_str(stdout, argv[optind]);
                printf(", \"against\": \"%s\", \"verdict\": \"%s\", \"runtime_asserts\": {\"count\": %zu, "
                       "\"checked\": %zu, \"data_dependent\": %zu, \"unrecovered\": %zu}, \"report\": %s}\n",
                       spec ? "spec" : "range_constraints", sg_verdict_name(v.report->verdict),
                       sg_graph_assert_count(v.graph), checked - dd, dd, sg_graph_assert_count(v.graph) - checked, rep);
            }
            sg_free(rep);
        } else {
            print_text(stdout, argv[optind], &v, spec != NULL);
        }
        if (rc == SG_EXIT_OK)
            rc = sg_cli_verdict_exit(v.report);
    }
    sg_cli_verification_free(&v);
    return sg_cli_finish_output(CMD, rc);
}

