/*
 * consumer.c - a program built only against the installed shapegate: its
 * headers and `pkg-config shapegate` (tests/test_install.sh builds it after
 * `cmake --install` into a temporary prefix). It checks one corpus case and
 * prints what a binding would read.
 *
 *     consumer CASE_DIR EXPECTED_VERDICT
 */
#include <stdio.h>
#include <string.h>

#include <shapegate/shapegate.h>

int main(int argc, char **argv)
{
    sg_error err = SG_ERROR_INIT;
    sg_engine *engine = NULL;
    sg_trace *trace = NULL;
    sg_report *report = NULL;
    sg_check_options opts = SG_CHECK_OPTIONS_INIT;
    char *json = NULL;
    size_t i;
    int rc = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: consumer CASE_DIR EXPECTED_VERDICT\n");
        return 2;
    }
    if (strcmp(sg_version(), SG_VERSION_STRING) != 0) {
        fprintf(stderr, "headers %s, library %s\n", SG_VERSION_STRING, sg_version());
        return 1;
    }
    opts.timeout_ms = 0; /* resource limits only: the same answer on any machine */
    opts.query_timeout_ms = 0;
    if (sg_trace_load(&trace, argv[1], &err) != 0 || sg_engine_new(&engine, NULL, &err) != 0
        || sg_engine_check(engine, trace, &opts, &report, &err) != 0
        || sg_report_to_json(&json, report, SG_JSON_NO_TIMES, &err) != 0) {
        fprintf(stderr, "consumer: %s (%s)\n", err.msg, sg_strerror(err.code));
        goto cleanup;
    }
    printf("shapegate %s: %s: %s\n", sg_version(), argv[1], sg_verdict_name(sg_report_verdict(report)));
    for (i = 0; i < sg_report_dim_count(report); i++) {
        sg_num size;
        sg_trace_input_size(trace, i, &size);
        printf("  %s (example %s): %s\n", sg_trace_input_source(trace, i), size.text,
               sg_dim_status_name(sg_report_dim_status(report, i)));
    }
    for (i = 0; i < sg_report_fix_count(report); i++)
        printf("  fix: %s\n", sg_report_fix_line(report, i));
    printf("%s\n", json);
    rc = strcmp(sg_verdict_name(sg_report_verdict(report)), argv[2]) == 0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "consumer: verdict %s, expected %s\n", sg_verdict_name(sg_report_verdict(report)), argv[2]);
cleanup:
    sg_free(json);
    sg_report_free(report);
    sg_trace_free(trace);
    sg_engine_free(engine);
    return rc;
}
