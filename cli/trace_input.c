/*
 * trace_input.c - what `check`, `spec` and `trace` share: loading a trace and
 * applying the spec overrides (--spec FILE, then each --dim ITEM), with their
 * errors reported the same way; and the run of `check` and `spec` from the
 * loaded trace to the printed report.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * The result of one override (sg_trace_with_spec_file / sg_trace_with_dims: status `rc`, new
 * trace `t2`): on success `*t` becomes `t2` (when there is one; the old trace is freed) and
 * SG_EXIT_OK is returned; on failure the error is printed with `opt` before the message, `*t` is
 * freed, and the exit code returned: out of memory is internal, a file that could not be read
 * (`io`: SG_EIO, SG_ELIMIT) is input, anything else is a usage error.
 */
static int take_override(sg_trace **t, sg_trace *t2, int rc, const sg_error *err, const char *cmd, const char *opt,
                         bool io)
{
    if (rc) {
        if (rc == SG_ENOMEM || (io && (rc == SG_EIO || rc == SG_ELIMIT))) {
            sg_cli_errorf(cmd, "%s%s", opt, err->msg);
            rc = rc == SG_ENOMEM ? SG_EXIT_INTERNAL : SG_EXIT_INPUT;
        } else {
            rc = sg_cli_usage_error(cmd, "%s%s", opt, err->msg);
        }
        sg_trace_free(t2);
        sg_trace_free(*t);
        *t = NULL;
        return rc;
    }
    if (t2) {
        sg_trace_free(*t);
        *t = t2;
    }
    return SG_EXIT_OK;
}

int sg_cli_open_trace(sg_trace **out, const char *cmd, const char *path, unsigned frame, const char *spec_file,
                      const char *const *dims, size_t ndims)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL, *t2 = NULL;
    int rc;

    *out = NULL;
    rc = sg_trace_load_frame(&t, path, frame, &err);
    if (rc) {
        sg_cli_path_error(cmd, path, err.msg);
        return rc == SG_ENOMEM ? SG_EXIT_INTERNAL : SG_EXIT_INPUT;
    }
    /* overrides: --spec replaces the spec, then each --dim (docs/check.md, "Spec overrides");
     * each gives a new trace, the loaded one is never changed */
    if (spec_file) {
        rc = sg_trace_with_spec_file(&t2, t, spec_file, &err);
        if ((rc = take_override(&t, t2, rc, &err, cmd, "--spec ", true)) != SG_EXIT_OK)
            return rc;
        t2 = NULL;
    }
    if (ndims) {
        rc = sg_trace_with_dims(&t2, t, dims, ndims, &err);
        if ((rc = take_override(&t, t2, rc, &err, cmd, "", false)) != SG_EXIT_OK)
            return rc;
    }
    /* a TORCH_TRACE log records no dynamic_shapes: say what is checked instead */
    if (!spec_file && !ndims && strcmp(cmd, "trace") != 0 && sg_trace_is_torch_trace_path(path))
        fprintf(stderr, "%s %s: note: %s records no dynamic_shapes spec: every traced dim is checked as Dim.AUTO; "
                "give yours with --spec FILE or --dim ITEM\n", SG_CLI_PROG, cmd, path);
    *out = t;
    return SG_EXIT_OK;
}

void sg_cli_trace_args_init(sg_cli_trace_args *a, const char *cmd)
{
    sg_check_options d = SG_CHECK_OPTIONS_INIT;
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->opts = d;
}

int sg_cli_trace_option(sg_cli_trace_args *a, int key, const char *arg)
{
    const char **grown;

    switch (key) {
    case 'j':
        a->json = true;
        return -1;
    case SG_CLI_KEY_SPEC:
        a->spec_file = arg;
        return -1;
    case SG_CLI_KEY_FRAME: {
        char *end;
        unsigned long n = strtoul(arg, &end, 10);
        if (!*arg || *end || n < 1 || n > 1000000 || arg[0] == '-')
            return sg_cli_usage_error(a->cmd, "--frame '%s': expected a frame number from 1", arg);
        a->frame = (unsigned)n;
        return -1;
    }
    case SG_CLI_KEY_DIM:
        if (!(grown = realloc(a->dims, (a->ndims + 1) * sizeof *a->dims))) {
            sg_cli_errorf(a->cmd, "out of memory");
            return SG_EXIT_INTERNAL;
        }
        grown[a->ndims++] = arg;
        a->dims = grown;
        return -1;
    default:
        return sg_cli_budget_option(a->cmd, key, arg, &a->opts);
    }
}

int sg_cli_on_trace_option(int key, const char *arg, void *ctx) { return sg_cli_trace_option(ctx, key, arg); }

int sg_cli_run_report(sg_cli_trace_args *a, const char *path, sg_cli_engine_fn run, unsigned text_flags,
                      int (*exit_of)(const sg_report *r))
{
    sg_error err = SG_ERROR_INIT;
    sg_engine *engine = NULL;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    char *text = NULL;
    double t0 = sg_cli_now_ms();
    int rc;

    if ((rc = sg_cli_open_trace(&t, a->cmd, path, a->frame, a->spec_file, a->dims, a->ndims)) != SG_EXIT_OK)
        goto cleanup;
    sg_cli_spend(&a->opts.timeout_ms, t0);
    if ((rc = sg_engine_new(&engine, NULL, &err)) != 0 || (rc = run(engine, t, &a->opts, &r, &err)) != 0) {
        sg_cli_path_error(a->cmd, path, err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    if ((rc = a->json ? sg_report_to_json(&text, r, 0, &err) : sg_report_to_text(&text, r, text_flags, &err)) != 0) {
        sg_cli_errorf(a->cmd, "%s", err.msg);
        rc = sg_cli_exit_code(rc, SG_CLI_COMPUTING);
        goto cleanup;
    }
    fputs(text, stdout);
    if (a->json)
        fputc('\n', stdout);
    rc = sg_cli_finish_output(a->cmd, exit_of(r));
cleanup:
    sg_free(text);
    sg_report_free(r);
    sg_trace_free(t);
    sg_engine_free(engine);
    return rc;
}
