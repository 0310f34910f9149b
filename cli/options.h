/*
 * options.h - the one option parser of the CLI: each command declares its
 * options once, in a table holding the long name, the short letter or key,
 * whether it takes an argument, and its line of `--help`; sg_cli_parse()
 * builds getopt_long's tables from it, prints the help, reports bad options
 * the same way for every command, and hands each option to the command.
 */
#ifndef SG_CLI_OPTIONS_H
#define SG_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

#include "shapegate/engine.h"

/* One option. `key` is the short letter ('j') or a value >= 256 for a long-only option. */
typedef struct sg_cli_opt {
    const char *name;   /* the long name, without "--" */
    int key;
    bool arg;           /* takes an argument */
    bool is_short;      /* `key` is also the short option -KEY */
    const char *help;   /* its help line after the two-space indent (continuation lines after
                           "\n"), or NULL when another entry's line covers it */
} sg_cli_opt;

/* A command's options and the text around their help lines. */
typedef struct sg_cli_spec {
    const char *cmd;          /* the command ("check"), or NULL for the program itself */
    const char *head;         /* the help before the option lines (usage, description, "Options:\n") */
    const sg_cli_opt *opts;   /* ended by an entry with a NULL name */
    const char *tail;         /* the help after them */
    bool stop_at_operand;     /* stop at the first operand (the program: at the command name) */
    void (*help)(FILE *out);  /* writes the help instead of head, option lines and tail, or NULL */
} sg_cli_spec;

/* Keys every command may use. */
enum {
    SG_CLI_KEY_HELP = 'h',
    SG_CLI_KEY_TIMEOUT = 300,   /* the budget options, sg_cli_budget_option() */
    SG_CLI_KEY_QUERY_TIMEOUT,
    SG_CLI_KEY_RLIMIT
};

/* The help entry, and the three budget options with their help lines. */
#define SG_CLI_OPT_HELP {"help", SG_CLI_KEY_HELP, false, true, "-h, --help           this help"}
#define SG_CLI_OPT_BUDGET(rlimit_help)                                                               \
    {"timeout", SG_CLI_KEY_TIMEOUT, true, false,                                                     \
     "--timeout MS         wall-clock limit for the whole check (default 60000; 0: none)"},          \
    {"query-timeout", SG_CLI_KEY_QUERY_TIMEOUT, true, false,                                         \
     "--query-timeout MS   Z3 time limit per query (default 10000; 0: none)"},                       \
    {"rlimit", SG_CLI_KEY_RLIMIT, true, false, "--rlimit N           " rlimit_help}
#define SG_CLI_OPT_END {NULL, 0, false, false, NULL}
/* The trace commands' --frame, for a single TORCH_TRACE log (SG_CLI_KEY_FRAME, cli.h). */
#define SG_CLI_OPT_FRAME                                                                             \
    {"frame", SG_CLI_KEY_FRAME, true, false,                                                         \
     "--frame N            export frame N (from 1) of a TORCH_TRACE log holding several"}

/* Called for each option with its key and argument (NULL when none). Returns -1 to go on, or an
 * exit code that ends the parse (the caller returns it). */
typedef int (*sg_cli_on_opt)(int key, const char *arg, void *ctx);

/*
 * Read the options of argv (argv[0] the command) by `spec`: --help prints the
 * help to stdout and ends with exit 0; an unknown or ambiguous option, a
 * missing or unexpected argument is reported as one line on stderr and ends
 * with exit 2; every other option goes to `on_opt`. Returns -1 when every
 * option was read (optind is then the first operand), else the exit code.
 */
int sg_cli_parse(const sg_cli_spec *spec, int argc, char **argv, sg_cli_on_opt on_opt, void *ctx);

/* An sg_cli_on_opt for a command whose one option is a flag: sets the bool `ctx` points to
 * (NULL: a command with --help alone). */
int sg_cli_on_flag(int key, const char *arg, void *ctx);

/* Write the help of `spec` to `out`. */
void sg_cli_print_help(const sg_cli_spec *spec, FILE *out);

/* Apply a budget option (`key` one of SG_CLI_KEY_TIMEOUT, _QUERY_TIMEOUT, _RLIMIT) to `o`:
 * -1, or the usage error's exit code for an argument that is not a non-negative integer. */
int sg_cli_budget_option(const char *cmd, int key, const char *arg, sg_check_options *o);

#endif
