/*
 * check_batch.c - `shapegate check --json INPUT...`: many traces in one
 * process (a CI job over a model zoo), one engine for all of them.
 *
 * One JSON object per INPUT, one per line, in argument order: the report of
 * docs/check.md with "input" (the argument) and "exit" (that trace's exit
 * code) first; an INPUT that cannot be read or checked gives
 * {"input": ..., "exit": 3 or 5, "error": "<one line>"} and the batch goes
 * on. The process exits with the worst code of the traces (5, then 3, then 1,
 * then 4, then 0). With stderr a terminal, a progress line per trace
 * ("[12/87] cases/err_div_offset 3.2 ms violations") goes there.
 *
 * The whole batch runs under one hard wall-clock limit (cli/supervise.c):
 * the per-trace limit times the number of traces; nothing is printed until it
 * has finished.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"


/* `s` as a JSON string literal on stdout. */
static void put_json_str(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putchar('"');
    for (; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

/* How bad an exit code is, for folding the traces' codes into the process's. */
static int severity(int rc)
{
    switch (rc) {
    case SG_EXIT_INTERNAL: return 4;
    case SG_EXIT_INPUT: return 3;
    case SG_EXIT_FALSE: return 2;
    case SG_EXIT_UNKNOWN: return 1;
    default: return 0;
    }
}

static void error_line(const char *input, int rc, const char *msg)
{
    fputs("{\"input\":", stdout);
    put_json_str(input);
    printf(",\"exit\":%d,\"error\":", rc);
    put_json_str(msg);
    fputs("}\n", stdout);
}

int sg_cli_check_batch(const char *const *inputs, size_t n, const sg_check_options *opts_in)
{
    sg_engine *engine = NULL;
    sg_error err = SG_ERROR_INIT;
    sg_check_options opts = *opts_in;
    bool progress = isatty(STDERR_FILENO);
    size_t i;
    int worst = SG_EXIT_OK;

    if (sg_engine_new(&engine, NULL, &err) != 0) {
        sg_cli_errorf("check", "%s", err.msg);
        return SG_EXIT_INTERNAL;
    }
    for (i = 0; i < n; i++) {
        sg_trace *t = NULL;
        sg_report *r = NULL;
        char *text = NULL;
        double t0 = sg_cli_now_ms();
        sg_check_options o = opts; /* each input's --timeout counts its load */
        int rc, src;
        src = sg_trace_load(&t, inputs[i], &err);
        sg_cli_spend(&o.timeout_ms, t0);
        if (src != 0) {
            rc = src == SG_ENOMEM ? SG_EXIT_INTERNAL : SG_EXIT_INPUT;
            error_line(inputs[i], rc, err.msg);
        } else if ((src = sg_engine_check(engine, t, &o, &r, &err)) != 0 ||
                   (src = sg_report_to_json(&text, r, 0, &err)) != 0) {
            rc = src == SG_ENOMEM ? SG_EXIT_INTERNAL : src == SG_EINVALID ? SG_EXIT_INPUT : SG_EXIT_INTERNAL;
            error_line(inputs[i], rc, err.msg);
        } else {
            rc = sg_cli_verdict_exit(r);
            fputs("{\"input\":", stdout);
            put_json_str(inputs[i]);
            printf(",\"exit\":%d,", rc);
            fputs(text[0] == '{' ? text + 1 : text, stdout);
            fputc('\n', stdout);
        }
        if (severity(rc) > severity(worst))
            worst = rc;
        if (progress)
            fprintf(stderr, "[%zu/%zu] %s %.1f ms %s\n", i + 1, n, inputs[i], sg_cli_now_ms() - t0,
                    r ? sg_verdict_name(sg_report_verdict(r)) : "error");
        sg_free(text);
        sg_report_free(r);
        sg_trace_free(t);
    }
    sg_engine_free(engine);
    return worst;
}
