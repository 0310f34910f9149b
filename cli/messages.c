/*
 * messages.c - how every command of the `shapegate` tools reports: the one mapping
 * from library status codes to exit codes, and the error and usage lines on stderr
 * ("shapegate CMD: ..."). Shared by the CLI (main.c) and the service's executable
 * (serve_main.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

sg_exit sg_cli_exit_code(int code, sg_cli_stage stage)
{
    switch (code) {
    case SG_OK:
        return SG_EXIT_OK;
    case SG_EUNDEFINED:
    case SG_EOVERFLOW:
        return stage == SG_CLI_COMPUTING ? SG_EXIT_FALSE : SG_EXIT_INPUT;
    case SG_EINVALID:
    case SG_ELIMIT:
    case SG_EUNSUPPORTED:
    case SG_EIO:
        return SG_EXIT_INPUT;
    default: /* SG_ENOMEM, SG_ERROR, codes this version does not know */
        return SG_EXIT_INTERNAL;
    }
}

/* "shapegate CMD: " and the formatted message on stderr, without the newline. */
static void vsay(const char *cmd, const char *fmt, va_list ap)
{
    if (cmd)
        fprintf(stderr, "%s %s: ", SG_CLI_PROG, cmd);
    else
        fprintf(stderr, "%s: ", SG_CLI_PROG);
    vfprintf(stderr, fmt, ap);
}

void sg_cli_errorf(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void sg_cli_path_error(const char *cmd, const char *path, const char *msg)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':')
        sg_cli_errorf(cmd, "%s", msg);
    else
        sg_cli_errorf(cmd, "%s: %s", path, msg);
}

int sg_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsay(cmd, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, " (see '%s %s --help')\n", SG_CLI_PROG, cmd);
    else
        fprintf(stderr, " (see '%s --help')\n", SG_CLI_PROG);
    return SG_EXIT_USAGE;
}

int sg_cli_bad_option(const char *cmd, int argc, char **argv, int optchar,
                      const struct option *longopts)
{
    /* getopt_long moves optind past a long option's element, but not past a
     * short option inside a cluster (-xy): there argv[optind - 1] is an older
     * element, and only optopt (the short letter) names the culprit. For an
     * unknown long option optopt is 0; for a known one, its value. */
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    const struct option *o, *match = NULL;
    size_t namelen = 0;
    int nmatch = 0;
    bool is_long = false;

    if (strncmp(arg, "--", 2) == 0 && arg[2] != '\0') {
        /* the option getopt_long matched or refused: exact name, else unique prefix */
        namelen = strcspn(arg + 2, "=");
        for (o = longopts; o && o->name; o++) {
            if (strncmp(o->name, arg + 2, namelen) != 0)
                continue;
            match = o;
            if (strlen(o->name) == namelen) {
                nmatch = 1;
                break;
            }
            nmatch++;
        }
        is_long = optopt == 0 || optopt >= 256 || (nmatch == 1 && match->val == optopt);
    }
    if (!is_long) {
        if (optchar == ':')
            return sg_cli_usage_error(cmd, "option '-%c' needs an argument", optopt);
        return sg_cli_usage_error(cmd, "unknown option '-%c'", optopt);
    }
    if (nmatch > 1)
        return sg_cli_usage_error(cmd, "ambiguous option '%.*s'", (int)namelen + 2, arg);
    if (nmatch == 0)
        return sg_cli_usage_error(cmd, "unknown option '%.*s'", (int)namelen + 2, arg);
    if (optchar == ':' || match->has_arg == required_argument)
        return sg_cli_usage_error(cmd, "option '--%s' needs an argument", match->name);
    return sg_cli_usage_error(cmd, "option '--%s' takes no argument", match->name);
}

int sg_cli_finish_output(const char *cmd, int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        sg_cli_errorf(cmd, "cannot write standard output: %s", strerror(errno));
        return SG_EXIT_INTERNAL;
    }
    return rc;
}

