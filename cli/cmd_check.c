/*
 * cmd_check.c - `shapegate check`: decide a traced export against its
 * dynamic_shapes spec and print the diagnosis (text, or one JSON object).
 *
 * Exit codes (the output contract of docs/check.md): 0 every dynamic dim
 * proved, 1 some dim refuted or the spec invalid, 4 some unknown and none
 * refuted, 2 usage, 3 unreadable input, 5 internal.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "shapegate/check.h"
#include "shapegate/fixes.h"
#include "shapegate/common.h"

enum { OPT_NO_INFER = 256, OPT_NO_MINIMIZE, OPT_DIM, OPT_SPEC,
       OPT_NO_FIX, OPT_PYTHON, OPT_EXPLAIN, OPT_TORCH };

static void check_help(FILE *out)
{
    fputs("usage: shapegate check [options] INPUT\n"
          "\n"
          "Decide whether every shape the dynamic_shapes spec allows passes the guards torch\n"
          "recorded. INPUT is a capture folder (guards.json + case.json, as in tests/corpus/cases/*)\n"
          "or a single-file JSON trace (docs/trace-format.md).\n"
          "\n"
          "Options:\n"
          "  --json               print one JSON object (docs/check.md) instead of text\n"
          "  --spec FILE          replace the trace's dynamic_shapes by FILE's (JSON, the corpus's\n"
          "                       structured form: {\"x\": {\"0\": {\"name\": \"dx\", \"max\": 64}}})\n"
          "  --dim ITEM           override one dim's spec, after --spec; repeatable. ITEM is\n"
          "                       INPUT.DIM=SPEC, INPUT a path as 'x', 'inputs.a', 'xs.3' or\n"
          "                       \"['inputs']['a']\", SPEC one of NAME, NAME:MIN..MAX (either side\n"
          "                       may be empty), A*NAME+B (derived), AUTO, DYNAMIC, AUTO:MIN..MAX,\n"
          "                       STATIC or a size; or NAME:MIN..MAX alone, a range for a derived\n"
          "                       dim's root. E.g. --dim 'x.0=batch:1..1024' --dim 'y.0=2*batch'\n"
          "  --timeout MS         wall-clock limit for the whole check (default 60000; 0: none)\n"
          "  --query-timeout MS   Z3 time limit per query (default 10000; 0: none)\n"
          "  --rlimit N           Z3 resource limit per query, deterministic (default 50000000; 0: none)\n"
          "  --no-infer           skip inferring ranges, relations, congruences and holes\n"
          "  --no-minimize        report Z3's unsat cores as they come, without shrinking them\n"
          "  --no-fix             do not derive suggested fixes for a refuted spec\n"
          "  --python             print the corrected spec as paste-ready Python (the Dim\n"
          "                       definitions and dynamic_shapes = {...}) after the diagnosis\n"
          "  --explain            say how the fixes were found, and re-check torch's own\n"
          "                       suggested fixes when the trace has them\n"
          "  --torch              print the error torch prints for this trace, byte for byte in\n"
          "                       the wording of its torch version, with our verified fixes\n"
          "  -h, --help           this help\n"
          "\n"
          "Exit: 0 all dynamic dims proved, 1 some refuted or the spec is invalid, 4 unknown,\n"
          "      2 usage, 3 unreadable input, 5 internal error.\n",
          out);
}

static const char *status_text(sg_dim_status s)
{
    switch (s) {
    case SG_DIM_PROVED: return "proved";
    case SG_DIM_REFUTED: return "refuted";
    case SG_DIM_UNKNOWN: return "unknown";
    default: return "static";
    }
}

static void print_bound(FILE *out, sg_bound b)
{
    char buf[SG_INT_STRLEN];
    if (b.inf)
        fputs(b.inf < 0 ? "-int_oo" : "int_oo", out);
    else
        fputs(sg_int_format(buf, b.v), out);
}

/* "x = [2, 3], y = [4]": the sizes of every input, by tensor. */
static void print_shapes(FILE *out, const sg_trace *t, const sg_int *sizes)
{
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    const char *path = NULL;
    char buf[SG_INT_STRLEN];
    for (i = 0; i < n; i++) {
        if (!path || strcmp(path, in[i].path) != 0) {
            /* "['x']" -> "x", "['inputs']['b'][1]" -> "inputs['b'][1]" */
            const char *p = in[i].path, *q = strncmp(p, "['", 2) == 0 ? strstr(p + 2, "']") : NULL;
            if (q)
                fprintf(out, "%s%.*s%s = [", path ? "], " : "", (int)(q - p - 2), p + 2, q + 2);
            else
                fprintf(out, "%s%s = [", path ? "], " : "", p);
            path = in[i].path;
        } else {
            fputs(", ", out);
        }
        fputs(sg_int_format(buf, sizes[i]), out);
    }
    if (path)
        fputs("]", out);
}

/* A torch location 'File "a/b.py", line 43, in forward\n    code' as "a/b.py:43 in forward: code". */
static void print_loc(FILE *out, const char *loc)
{
    const char *file = strstr(loc, "File \""), *line, *in, *code;
    if (!file) {
        fputs(loc, out);
        return;
    }
    file += 6;
    line = strstr(file, "\", line ");
    in = line ? strstr(line, ", in ") : NULL;
    if (!line || !in) {
        fputs(loc, out);
        return;
    }
    fprintf(out, "%.*s:%.*s in ", (int)(line - file), file, (int)(in - line - 8), line + 8);
    code = strchr(in + 5, '\n');
    fprintf(out, "%.*s", (int)(code ? (size_t)(code - in - 5) : strlen(in + 5)), in + 5);
    if (code) {
        while (*code == '\n' || *code == ' ')
            code++;
        fprintf(out, ": %.*s", (int)strcspn(code, "\n"), code);
    }
}

/* Symbols print as the input they are the size of (for relations in the text output). */
typedef struct naming {
    const sg_report *r;
    const sg_trace *t;
} naming;

static const char *source_name(const sg_expr *sym, void *payload)
{
    const naming *nm = payload;
    size_t n = 0, i;
    const sg_input_dim *in = sg_trace_inputs(nm->t, &n);
    for (i = 0; i < nm->r->ninferred; i++)
        if (nm->r->inferred[i].sym == sym && nm->r->inferred[i].input < n)
            return in[nm->r->inferred[i].input].source;
    return NULL;
}

static void print_text(FILE *out, const char *input, const sg_trace *t, const sg_report *r)
{
    size_t n = 0, i, k;
    const sg_input_dim *in = sg_trace_inputs(t, &n);
    char buf[SG_INT_STRLEN];

    fprintf(out, "%s (torch %s): %s\n", input, sg_trace_torch_version(t)[0] ? sg_trace_torch_version(t) : "?",
            sg_verdict_name(r->verdict));
    if (r->no_spec)
        fputs("  the trace carries no per-dim spec (torch failed before building it): nothing to decide\n", out);
    for (i = 0; i < r->ndims; i++) {
        const sg_dim_result *d = &r->dims[i];
        if (d->status == SG_DIM_STATIC)
            continue;
        fprintf(out, "  %s%s%s: %s%s%s%s\n", in[d->input].name ? in[d->input].name : "",
                in[d->input].name ? " = " : "", in[d->input].source, status_text(d->status),
                d->reason[0] ? " (" : "", d->reason, d->reason[0] ? ")" : "");
    }
    for (i = 0; i < r->nviolations; i++) {
        const sg_violation *v = &r->violations[i];
        fprintf(out, "\n- %s\n", v->message ? v->message : "");
        if (v->has_counterexample) {
            fputs("  counterexample: ", out);
            print_shapes(out, t, v->counterexample);
            fputs("\n", out);
        }
        if (v->ncore)
            fputs("  conflicting:\n", out);
        for (k = 0; k < v->ncore; k++) {
            fprintf(out, "    %s", v->core[k].text);
            if (v->core[k].loc) {
                fputs("   at ", out);
                print_loc(out, v->core[k].loc);
            }
            fputs("\n", out);
        }
    }
    if (r->ninferred)
        fputs("\ninferred:\n", out);
    for (i = 0; i < r->ninferred; i++) {
        const sg_inferred *f = &r->inferred[i];
        fprintf(out, "  %s", f->input < n ? in[f->input].source : sg_expr_symbol_name(f->sym));
        if (f->is_constant) {
            fprintf(out, " = %s\n", sg_int_format(buf, f->constant));
            continue;
        }
        fputs(" in [", out);
        print_bound(out, f->lo);
        fputs(", ", out);
        print_bound(out, f->hi);
        fprintf(out, "]%s", f->range_exact ? "" : " (over-approximation)");
        if (f->modulus > 1) {
            char m[SG_INT_STRLEN];
            fprintf(out, ", = %s mod %s", sg_int_format(buf, f->residue), sg_int_format(m, f->modulus));
        }
        for (k = 0; k < f->nholes; k++)
            fprintf(out, "%s%s", k ? ", " : ", except ", sg_int_format(buf, f->holes[k]));
        if (f->nholes && !f->holes_complete)
            fputs(" (maybe more)", out);
        if (f->equals) {
            char *eq = NULL;
            naming nm;
            nm.r = r;
            nm.t = t;
            if (sg_expr_print(&eq, f->equals, SG_SYNTAX_PYTHON, source_name, &nm, NULL) == 0)
                fprintf(out, ", = %s", eq);
            sg_free(eq);
        }
        fputs("\n", out);
    }
    fprintf(out, "\n%u solver queries, %u guards decided without Z3, %.3f s\n", r->stats.queries,
            r->stats.decided_cheaply, r->stats.seconds);
}

/* The "torch" part of sg_fixes_to_json(): torch's lines and what re-checking them gave. */
static void print_torch_fixes(FILE *out, const char *fixes_json)
{
    cJSON *root = cJSON_Parse(fixes_json);
    const cJSON *torch = cJSON_GetObjectItemCaseSensitive(root, "torch"), *it, *ours, *o;
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(torch, "verdict");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(torch, "why");
    bool same = true;
    int nt = 0, no = 0;

    if (!torch) {
        cJSON_Delete(root);
        return;
    }
    fputs("\ntorch suggested:\n", out);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(torch, "lines")) {
        fprintf(out, "  %s\n", cJSON_IsString(it) ? it->valuestring : "?");
        nt++;
    }
    fprintf(out, "  applied as refine_dynamic_shapes_from_suggested_fixes reads them and checked: %s\n",
            cJSON_IsString(verdict) ? verdict->valuestring : "?");
    if (cJSON_IsString(verdict) && strcmp(verdict->valuestring, "violations") == 0)
        fputs("  (the spec they make allows shapes the recorded guards reject: torch may still re-export it,\n"
              "  its analysis starting every size at 2, but the exported program's ranges then admit shapes\n"
              "  it rejects at run time)\n", out);
    if (cJSON_IsString(why))
        fprintf(out, "    %s\n", why->valuestring);
    ours = cJSON_GetObjectItemCaseSensitive(root, "lines");
    cJSON_ArrayForEach(o, ours) {
        const cJSON *tl = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(torch, "lines"), no++);
        if (!cJSON_IsString(tl) || !cJSON_IsString(o) || strcmp(tl->valuestring, o->valuestring) != 0)
            same = false;
    }
    if (same && no == nt)
        fputs("  ours are the same lines\n", out);
    else
        fputs("  ours differ (above): each of ours was re-checked before it was printed\n", out);
    cJSON_Delete(root);
}

/* The suggested fixes after the diagnosis; --python adds the fixed spec, --explain how it was found. */
static int print_fixes(FILE *out, const sg_trace *t, const sg_fixes *f, const sg_check_options *opts, bool python,
                       bool explain)
{
    sg_error err = SG_ERROR_INIT;
    size_t i;
    int rc = 0;

    if (f->verified) {
        fprintf(out, "\nSuggested fixes (re-checked: the fixed spec is proved, %u round%s):\n", f->rounds,
                f->rounds == 1 ? "" : "s");
        for (i = 0; i < f->nfixes; i++)
            fprintf(out, "  %s\n", f->fixes[i].line);
    } else {
        fputs("\nNo suggested fix: none that could be derived checks clean.\n", out);
    }
    if (explain || !f->verified)
        for (i = 0; i < f->nnotes; i++)
            fprintf(out, "  note: %s\n", f->notes[i]);
    if (python && f->spec_json) {
        char *py = NULL;
        if ((rc = sg_spec_to_python(&py, t, f->spec_json, &err)) != 0) {
            sg_cli_errorf("check", "printing the fixed spec: %s", err.msg);
            return sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        }
        fprintf(out, "\n%s", py);
        sg_free(py);
    }
    if (explain && sg_trace_torch_fixes_json(t)) {
        char *js = NULL;
        /* torch's own lines, re-checked (the JSON form carries them with their verdict) */
        if ((rc = sg_fixes_to_json(&js, f, t, opts, &err)) != 0) {
            sg_cli_errorf("check", "re-checking torch's fixes: %s", err.msg);
            return sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        }
        print_torch_fixes(out, js);
        sg_free(js);
    }
    return 0;
}

int sg_cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},
        {"timeout", required_argument, NULL, SG_CLI_OPT_TIMEOUT},
        {"query-timeout", required_argument, NULL, SG_CLI_OPT_QUERY_TIMEOUT},
        {"rlimit", required_argument, NULL, SG_CLI_OPT_RLIMIT},
        {"no-infer", no_argument, NULL, OPT_NO_INFER},
        {"no-minimize", no_argument, NULL, OPT_NO_MINIMIZE},
        {"dim", required_argument, NULL, OPT_DIM},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"no-fix", no_argument, NULL, OPT_NO_FIX},
        {"python", no_argument, NULL, OPT_PYTHON},
        {"explain", no_argument, NULL, OPT_EXPLAIN},
        {"torch", no_argument, NULL, OPT_TORCH},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    bool json = false, no_fix = false, python = false, explain = false, torch = false;
    sg_fixes *fx = NULL;
    char *fx_json = NULL;
    char *text = NULL;
    const char **dims = NULL, *spec_file = NULL;
    size_t ndims = 0;
    sg_cli_supervisor sv = {0};
    unsigned hard_ms;
    int c, rc;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hj", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            check_help(stdout);
            return sg_cli_finish_output("check", SG_EXIT_OK);
        case 'j':
            json = true;
            break;
        case SG_CLI_OPT_TIMEOUT: case SG_CLI_OPT_QUERY_TIMEOUT: case SG_CLI_OPT_RLIMIT:
            if (!sg_cli_parse_budget(c, optarg, &opts)) {
                free(dims);
                return sg_cli_usage_error("check", "'%s' is not a non-negative integer", optarg);
            }
            break;
        case OPT_NO_INFER:
            opts.infer = false;
            break;
        case OPT_NO_MINIMIZE:
            opts.minimize_cores = false;
            break;
        case OPT_DIM:
            if (!sg_cli_push_dim(&dims, &ndims, optarg)) {
                free(dims);
                sg_cli_errorf("check", "out of memory");
                return SG_EXIT_INTERNAL;
            }
            break;
        case OPT_SPEC:
            spec_file = optarg;
            break;
        case OPT_NO_FIX:
            no_fix = true;
            break;
        case OPT_PYTHON:
            python = true;
            break;
        case OPT_EXPLAIN:
            explain = true;
            break;
        case OPT_TORCH:
            torch = true;
            break;
        default:
            free(dims);
            return sg_cli_bad_option("check", argc, argv, c, longopts);
        }
    }
    /* one INPUT; the rest runs under a hard wall-clock limit (cli/supervise.c) */
    hard_ms = sg_cli_hard_limit(opts.timeout_ms, no_fix ? 1 : 3);
    if ((rc = sg_cli_start_solver(&sv, "check", argc, argv, json, hard_ms)) >= 0) {
        free(dims);
        return rc;
    }
    if ((rc = sg_cli_open_trace(&t, "check", argv[optind], spec_file, dims, ndims)) != SG_EXIT_OK)
        goto cleanup;
    rc = sg_check(&r, t, &opts, &err);
    if (rc) {
        sg_cli_errorf("check", "%s: %s", argv[optind], err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if (!no_fix && r->verdict == SG_VERDICT_VIOLATIONS) {
        if ((rc = sg_fixes_suggest(&fx, t, r, &opts, &err)) != 0 || (rc = sg_fixes_attach(r, fx, &err)) != 0
            || (json && (rc = sg_fixes_to_json(&fx_json, fx, t, &opts, &err)) != 0)) {
            sg_cli_errorf("check", "%s: suggesting fixes: %s", argv[optind], err.msg);
            rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
            goto cleanup;
        }
    }
    if (json) {
        size_t len;
        rc = sg_report_to_json(&text, r, t, &err);
        if (rc) {
            sg_cli_errorf("check", "%s", err.msg);
            rc = SG_EXIT_INTERNAL;
            goto cleanup;
        }
        len = strlen(text);
        if (fx_json && len && text[len - 1] == '}') /* the report object, with "fixes" added */
            printf("%.*s,\"fixes\":%s}\n", (int)(len - 1), text, fx_json);
        else
            printf("%s\n", text);
    } else if (torch) {
        /* torch's own text (a spec torch rejects before tracing: the check's message is torch's) */
        char *msg = NULL;
        if ((rc = sg_fixes_torch_message(&msg, t, fx, &err)) != 0) {
            sg_cli_errorf("check", "%s", err.msg);
            rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
            goto cleanup;
        }
        if (msg)
            printf("%s\n", msg);
        else if (r->nviolations && r->violations[0].kind == SG_VIOL_SPEC)
            printf("%s\n", r->violations[0].message);
        sg_free(msg);
    } else {
        print_text(stdout, argv[optind], t, r);
        if (fx && (rc = print_fixes(stdout, t, fx, &opts, python, explain)) != 0)
            goto cleanup;
    }
    switch (r->verdict) {
    case SG_VERDICT_OK: rc = SG_EXIT_OK; break;
    case SG_VERDICT_UNKNOWN: rc = SG_EXIT_UNKNOWN; break;
    default: rc = SG_EXIT_FALSE; break;
    }
    rc = sg_cli_finish_output("check", rc);
cleanup:
    free(dims);
    sg_free(text);
    sg_free(fx_json);
    sg_fixes_free(fx);
    sg_report_free(r);
    sg_trace_free(t);
    return sg_cli_supervised_exit(&sv, rc);
}
