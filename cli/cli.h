/*
 * cli.h - private header of the `shapegate` command-line tool: exit codes, the
 * one mapping from library status codes to exit codes, the command table entry
 * type, and small helpers every command uses to report errors the same way.
 *
 * The CLI is a thin client of the public headers (include/shapegate/) and
 * libshapegate.so; it never includes anything from the library's modules.
 * Each command lives in its own file (cmd_expr.c has `parse` and `eval`) and
 * is listed in the table in main.c. A command function gets its own argv,
 * with argv[0] the command name, reads its options with the one table-driven
 * parser (cli/options.h), and returns an exit code.
 */
#ifndef SG_CLI_H
#define SG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "shapegate/shapegate.h"
#include "options.h"

#if defined(__GNUC__) || defined(__clang__)
#define SG_CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SG_CLI_PRINTF(fmt, args)
#endif

/* The program's name in every message. */
#define SG_CLI_PROG "shapegate"

/*
 * Exit codes, the same for every command (docs/cli.md has the table).
 * The later `check` command reads 1 as "some guard refuted or the spec is
 * invalid", 3 as "input unreadable" and 4 as "unknown (timeout, unsupported)".
 */
typedef enum sg_exit {
    SG_EXIT_OK = 0,       /* success; for `eval`, a value other than False */
    SG_EXIT_FALSE = 1,    /* the answer is no: refuted, False, or undefined (Python would raise) */
    SG_EXIT_USAGE = 2,    /* bad command line: unknown command or option, malformed argument */
    SG_EXIT_INPUT = 3,    /* invalid or unreadable input: syntax, limits, i/o */
    SG_EXIT_UNKNOWN = 4,  /* no answer could be found (reserved for the solver commands) */
    SG_EXIT_INTERNAL = 5, /* out of memory or an internal error; an output that cannot be written */
    SG_EXIT_TORCH_FAILED = 6, /* torch did not complete the export (a data-dependent guard): nothing decided */
    SG_EXIT_OUTPUT = 7    /* an output refused: not a regular file, a symbolic link, the input itself, a terminal */
} sg_exit;

/*
 * Where a library error arose. The same status code means different things
 * at different stages: SG_EUNDEFINED while *reading* an expression (a
 * constant such as `FloorDiv(1, 0)` folded by the parser) means the text was
 * rejected, exit 3; while *computing* a result it is the result itself
 * ("undefined"), exit 1.
 */
typedef enum sg_cli_stage {
    SG_CLI_READING,   /* turning the user's text into expressions */
    SG_CLI_COMPUTING  /* evaluating or deciding */
} sg_cli_stage;

/*
 * The one mapping from an sg_error code (SG_OK, SG_E*) to an exit code:
 *   SG_OK                                          -> 0
 *   SG_EUNDEFINED, SG_EOVERFLOW                    -> 1 when computing, 3 when reading
 *   SG_EINVALID, SG_ELIMIT, SG_EUNSUPPORTED, SG_EIO -> 3
 *   SG_ENOMEM, SG_ERROR and anything else          -> 5
 */
sg_exit sg_cli_exit_code(int code, sg_cli_stage stage);

/* A command: its name, its entry point, and the one line `shapegate --help` shows. */
typedef struct sg_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} sg_cli_command;

/* Print "shapegate CMD: <message>\n" to stderr (CMD omitted when NULL). */
void sg_cli_errorf(const char *cmd, const char *fmt, ...) SG_CLI_PRINTF(2, 3);

/* The library's error `msg` about input `path`: "shapegate CMD: PATH: msg", the path once (the
 * trace loader's messages already start with it). */
void sg_cli_path_error(const char *cmd, const char *path, const char *msg);

/*
 * Report a getopt_long failure for command `cmd` (NULL: the program itself):
 * an unknown or ambiguous option, a missing or unexpected argument.
 * `optchar` is what getopt_long returned ('?' or ':', with ':' first in the
 * optstring and opterr = 0), `longopts` the table it was given. Commands give
 * long-only options values >= 256. One line on stderr; returns SG_EXIT_USAGE.
 */
int sg_cli_bad_option(const char *cmd, int argc, char **argv, int optchar,
                      const struct option *longopts);

/*
 * Report a usage error as one line on stderr,
 * "shapegate CMD: <message> (see 'shapegate CMD --help')". Returns SG_EXIT_USAGE.
 */
int sg_cli_usage_error(const char *cmd, const char *fmt, ...) SG_CLI_PRINTF(2, 3);

/* Flush stdout; on a write error report it and return SG_EXIT_INTERNAL, else `rc`. */
int sg_cli_finish_output(const char *cmd, int rc);

/* ---- Commands (one file each) ---------------------------------------------------- */

/* cmd_expr.c: `shapegate parse` and `shapegate eval`. */
int sg_cmd_parse(int argc, char **argv);
int sg_cmd_eval(int argc, char **argv);

/* cmd_check.c: `shapegate check`. */
int sg_cmd_check(int argc, char **argv);

/* cmd_spec.c: `shapegate spec`. */
int sg_cmd_spec(int argc, char **argv);

/* cmd_trace.c: `shapegate trace`. */
int sg_cmd_trace(int argc, char **argv);

/* trace_input.c: load the trace at `path` (export frame `frame` of a TORCH_TRACE log), then apply --spec FILE (or NULL) and the
 * --dim items; errors reported as command `cmd`. Returns an exit code; `*out` the
 * trace on SG_EXIT_OK (free with sg_trace_free()), else NULL. */
int sg_cli_open_trace(sg_trace **out, const char *cmd, const char *path, unsigned frame, const char *spec_file,
                      const char *const *dims, size_t ndims);
/* What `check` and `spec` read besides their own options: --json, --spec FILE, the --dim
 * items (a list to free()), the budgets. */
enum { SG_CLI_KEY_SPEC = 320, SG_CLI_KEY_DIM, SG_CLI_KEY_FRAME };
typedef struct sg_cli_trace_args {
    const char *cmd;
    sg_check_options opts;
    bool json;
    const char *spec_file;
    const char **dims;
    size_t ndims;
    unsigned frame; /* --frame N: export frame N of a TORCH_TRACE log (0: the only one) */
} sg_cli_trace_args;
void sg_cli_trace_args_init(sg_cli_trace_args *a, const char *cmd);
/* Apply one of those options; -1 to go on, or an exit code (usage error, out of memory). */
int sg_cli_trace_option(sg_cli_trace_args *a, int key, const char *arg);
/* sg_cli_trace_option as an sg_cli_parse callback (`ctx`: the sg_cli_trace_args), for the
 * commands whose options are the trace options alone. */
int sg_cli_on_trace_option(int key, const char *arg, void *ctx);

/* An engine call taking a trace to a report: sg_engine_check, sg_engine_spec. */
typedef int (*sg_cli_engine_fn)(sg_engine *e, const sg_trace *t, const sg_check_options *opts, sg_report **out,
                                sg_error *err);
/* trace_input.c: the rest of `check` or `spec` once options are read and the command supervised:
 * the trace at `path` with a's overrides, `run` on a new engine with a->opts (its timeout less the
 * time the load took), the report printed (JSON with --json, else text with `text_flags`).
 * Returns the exit code: `exit_of` the report's, or the one of the error reported. */
int sg_cli_run_report(sg_cli_trace_args *a, const char *path, sg_cli_engine_fn run, unsigned text_flags,
                      int (*exit_of)(const sg_report *r));

/* supervise.c: run the rest of a solver command in a child process with a hard
 * wall-clock limit (Z3 can ignore its interrupt). sg_cli_supervise() returns 0 in
 * the process that must do the work (the child, or this one when `hard_ms` is 0 or
 * fork fails) and 1 in the parent once the child is done: `exit_code` is then its
 * exit code, or `killed` says it was stopped at the limit (nothing was printed). The
 * worker ends with `return sg_cli_supervised_exit(&sv, rc)`. */
typedef struct sg_cli_supervisor {
    const char *cmd;
    bool child;
    bool killed;
    int exit_code;
} sg_cli_supervisor;
int sg_cli_supervise(sg_cli_supervisor *sv, const char *cmd, unsigned hard_ms);
int sg_cli_supervised_exit(sg_cli_supervisor *sv, int rc);
/* The hard limit for a command whose checks have wall-clock budget `timeout_ms`
 * (0: none) and run `nchecks` budgets one after another. */
unsigned sg_cli_hard_limit(unsigned timeout_ms, unsigned nchecks);

/* The monotonic clock in milliseconds. */
double sg_cli_now_ms(void);

/* `--timeout` is the whole command's: charge what the command spent since `since_ms` (reading
 * the trace) to the engine's budget `*timeout_ms`, which stays 0 (no limit) when 0 and is at
 * least 1 ms otherwise. */
void sg_cli_spend(unsigned *timeout_ms, double since_ms);
/* What a killed command prints instead of its result (text, or JSON with --json), on `out`. */
void sg_cli_print_killed(FILE *out, bool json, const char *input, unsigned hard_ms);
/* After option parsing of a solver command taking one INPUT (argv[optind]): check
 * there is exactly one, then sg_cli_supervise(). Returns -1 in the process that
 * must do the work, else the exit code to return (usage error, or the child's, or
 * "unknown" after printing what a killed command prints). */
int sg_cli_start_solver(sg_cli_supervisor *sv, const char *cmd, int argc, char **argv, bool json,
                        unsigned hard_ms);

/* cmd_inspect.c: `shapegate inspect`. */
int sg_cmd_inspect(int argc, char **argv);

/* cmd_serve.c: `shapegate serve`. */
int sg_cmd_serve(int argc, char **argv);
/* `shapegate __serve-worker`: a solver process of `serve --isolate` (hidden; service/isolate.c). */
int sg_cmd_serve_worker(int argc, char **argv);

/* cmd_verify.c: `shapegate verify`, and the pipeline `pack` shares with it. */
int sg_cmd_verify(int argc, char **argv);
/* cmd_pack.c: `shapegate pack`. */
int sg_cmd_pack(int argc, char **argv);
/* `shapegate gate [--json] OLD.pt2 NEW.pt2` (cmd_gate.c). */
int sg_cmd_gate(int argc, char **argv);

/* An archive opened, its model JSON read and parsed, its trace built and checked. */
typedef struct sg_cli_verification {
    sg_archive *archive;
    char *json;               /* the model JSON member's raw bytes */
    size_t len;
    const char *model_member; /* its relative name (borrowed from the archive) */
    sg_graph *graph;
    sg_engine *engine;
    sg_report *report;        /* the engine's verify report (it holds the trace it checked) */
    sg_check_options opts;
} sg_cli_verification;

/* Fill `v` for archive `path` (spec file `spec_path` or NULL: the declared ranges),
 * reporting errors as command `cmd`. Returns an exit code; free `v` in any case. */
int sg_cli_verify_open(sg_cli_verification *v, const char *cmd, const char *path, const char *spec_path,
                       const sg_check_options *opts);
void sg_cli_verification_free(sg_cli_verification *v);
/* 0 ok, 1 refuted or invalid spec, 4 unknown. */
int sg_cli_verdict_exit(const sg_report *r);

/* `shapegate check --json INPUT...` (cli/check_batch.c): every one of the `n` inputs checked with
 * `opts` by `jobs` worker processes (at most n), each trace killed at `hard_ms` (0: never); one
 * JSON object per line on stdout, in input order, each printed once every earlier one is; the
 * same lines whatever `jobs`. Returns the worst exit code (5 when stdout refused a write). */
int sg_cli_check_batch(const char *const *inputs, size_t n, const sg_check_options *opts, unsigned jobs,
                       unsigned hard_ms);

#endif
