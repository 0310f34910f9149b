/*
 * options.c - the CLI's table-driven option parser (cli/options.h) over
 * getopt_long(3).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_OPTS 32

void sg_cli_print_help(const sg_cli_spec *spec, FILE *out)
{
    const sg_cli_opt *o;
    if (spec->help) {
        spec->help(out);
        return;
    }
    fputs(spec->head, out);
    for (o = spec->opts; o->name; o++) {
        const char *line = o->help, *nl;
        if (!line)
            continue;
        /* continuation lines of a help entry line up under its text */
        while ((nl = strchr(line, '\n')) != NULL) {
            fprintf(out, "  %.*s\n", (int)(nl - line), line);
            line = nl + 1;
        }
        fprintf(out, "  %s\n", line);
    }
    fputs(spec->tail, out);
}

int sg_cli_parse(const sg_cli_spec *spec, int argc, char **argv, sg_cli_on_opt on_opt, void *ctx)
{
    struct option longopts[MAX_OPTS + 1];
    char shorts[2 * MAX_OPTS + 3];
    size_t n = 0, k;
    int c, rc;

    k = 0;
    if (spec->stop_at_operand)
        shorts[k++] = '+';
    shorts[k++] = ':'; /* a missing argument is ':', not '?' */
    for (n = 0; spec->opts[n].name && n < MAX_OPTS; n++) {
        const sg_cli_opt *o = &spec->opts[n];
        longopts[n].name = o->name;
        longopts[n].has_arg = o->arg ? required_argument : no_argument;
        longopts[n].flag = NULL;
        longopts[n].val = o->key;
        if (o->is_short) {
            shorts[k++] = (char)o->key;
            if (o->arg)
                shorts[k++] = ':';
        }
    }
    shorts[k] = '\0';
    memset(&longopts[n], 0, sizeof longopts[n]);
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        if (c == '?' || c == ':')
            return sg_cli_bad_option(spec->cmd, argc, argv, c, longopts);
        if (c == SG_CLI_KEY_HELP) {
            sg_cli_print_help(spec, stdout);
            return sg_cli_finish_output(spec->cmd, SG_EXIT_OK);
        }
        if ((rc = on_opt(c, optarg, ctx)) >= 0)
            return rc;
    }
    return -1;
}

int sg_cli_on_flag(int key, const char *arg, void *ctx)
{
    (void)key;
    (void)arg;
    if (ctx)
        *(bool *)ctx = true;
    return -1;
}

int sg_cli_budget_option(const char *cmd, int key, const char *arg, sg_check_options *o)
{
    char *end;
    unsigned long long v;

    if (!*arg || *arg == '-')
        goto bad;
    errno = 0;
    v = strtoull(arg, &end, 10);
    if (errno || *end)
        goto bad;
    if (key == SG_CLI_KEY_RLIMIT) {
        o->query_rlimit = v;
        return -1;
    }
    if (v > 0xFFFFFFFFull)
        goto bad;
    if (key == SG_CLI_KEY_TIMEOUT)
        o->timeout_ms = (unsigned)v;
    else
        o->query_timeout_ms = (unsigned)v;
    return -1;
bad:
    return sg_cli_usage_error(cmd, "'%s' is not a non-negative integer", arg);
}
