/*
 * main.c - entry point of the `shapegate` command-line tool: the command
 * table, global options (--help, --version), dispatch to a command. Commands
 * themselves live in cmd_*.c; `serve` in its own executable (serve_main.c);
 * the exit codes and error lines in messages.c.
 */
#define _DEFAULT_SOURCE /* sbrk, MADV_HUGEPAGE */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#endif
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static int exec_serve(int argc, char **argv);

/* Every command, in the order `--help` lists them. */
static const sg_cli_command commands[] = {
    {"parse", sg_cmd_parse, "parse guard expressions and print them (sympy, Python or SMT-LIB form)"},
    {"eval", sg_cmd_eval, "evaluate one expression with integer values for its symbols"},
    {"check", sg_cmd_check, "decide a traced export against its dynamic_shapes spec"},
    {"spec", sg_cmd_spec, "print the widest valid dynamic_shapes for a trace, verified, as Python or JSON"},
    {"trace", sg_cmd_trace, "print any input check reads (capture, TORCH_TRACE log, ...) as a v1 JSON trace"},
    {"inspect", sg_cmd_inspect, "show a .pt2 archive's inputs, symbolic shapes, ranges and asserts"},
    {"verify", sg_cmd_verify, "prove a .pt2 archive's declared ranges pass its runtime asserts"},
    {"pack", sg_cmd_pack, "copy a .pt2 archive adding its verified constraints (extra/shapegate/)"},
    {"gate", sg_cmd_gate, "does NEW.pt2 accept every input shape OLD.pt2 accepts? (release gate)"},
    {"serve", exec_serve, "serve check, spec, verify and pack over HTTP (JSON; docs/service.md)"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

/*
 * A one-shot command's heap, made for a short process. Its cost is mostly first touches of
 * memory: Z3's first context alone touches about 17 MB (some 4,300 page faults, 45-60 ms on
 * the reference VM, where a fault costs about 10 us), a model-sized trace's JSON as much again.
 * So the heap is grown in one step, kept (never trimmed: the process ends soon), large blocks
 * come from it rather than from mmaps of their own (each unmapped on free and faulted in again
 * at the next), and the kernel is asked to back it with transparent huge pages (where
 * /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always"): a fault then maps
 * 2 MiB. Only the process's own allocator settings change; outputs do not depend on them.
 * `serve` keeps glibc's defaults (a long-lived server returns memory it no longer needs).
 */
#define HEAP_PAD ((size_t)64 << 20)
#define HEAP_BIG_BLOCK ((size_t)32 << 20) /* glibc's largest mmap threshold on 64-bit */
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void tune_heap(void)
{
#if defined(__linux__) && defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    uintptr_t lo, hi;
    void *volatile grow; /* volatile: the compiler may not drop the malloc-free pair */
    char *before = sbrk(0);
    if (before == (void *)-1 || !mallopt(M_MMAP_THRESHOLD, (int)HEAP_BIG_BLOCK) ||
        !mallopt(M_TRIM_THRESHOLD, (int)(HEAP_PAD * 4)) || !mallopt(M_TOP_PAD, (int)HEAP_PAD))
        return;
    grow = malloc(HUGE_PAGE); /* larger than the free top: the heap grows by it plus the pad */
    free(grow);
    hi = (uintptr_t)sbrk(0);
    lo = ((uintptr_t)before + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (hi != (uintptr_t)-1 && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: refused, nothing changes */
#endif
}

/* Write the top-level help to `out`. */
static void print_help(FILE *out)
{
    size_t i;

    fprintf(out,
            "Usage: %s <command> [options] [arguments]\n"
            "       %s --help | --version\n"
            "\n"
            "Checks torch.export dynamic-shape guards with exact integer semantics.\n"
            "\n"
            "Commands:\n",
            SG_CLI_PROG, SG_CLI_PROG);
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Run '%s <command> --help' for a command's options.\n"
            "Exit codes: 0 ok, 1 false/undefined/refuted, 2 usage, 3 invalid input,\n"
            "4 unknown, 5 internal error (docs/cli.md).\n",
            SG_CLI_PROG);
}

/*
 * `serve` (and the hidden `__serve-worker`, a solver process of `serve --isolate`) run in their own
 * executable, shapegate-serve (serve_main.c): only it links libmicrohttpd, with GnuTLS and its
 * crypto libraries, and hiredis, whose loading and relocation cost every other command about 6 ms
 * at start (docs/cli.md). It sits next to this program in a build tree, in SG_SERVE_INSTALLED
 * (relative to this program's folder) once installed. Returns only when it cannot be started.
 */
static int exec_serve(int argc, char **argv)
{
    static const char *const where[] = {"shapegate-serve", SG_SERVE_INSTALLED};
    char self[PATH_MAX], path[PATH_MAX + 64];
    char **args = calloc((size_t)argc + 2, sizeof *args);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    const char *failed = where[1];
    size_t i;
    int err = ENOENT;

    if (!args) {
        sg_cli_errorf(argv[0], "out of memory");
        return SG_EXIT_INTERNAL;
    }
    if (n <= 0 || memchr(self, '/', (size_t)n) == NULL) {
        sg_cli_errorf(argv[0], "cannot find this program's folder: %s", n < 0 ? strerror(errno) : "no path");
        free(args);
        return SG_EXIT_INTERNAL;
    }
    self[n] = '\0';
    *strrchr(self, '/') = '\0'; /* (the program's folder; "" for a program at /) */
    args[0] = (char *)SG_CLI_PROG;
    memcpy(args + 1, argv, (size_t)argc * sizeof *args);
    for (i = 0; i < sizeof where / sizeof where[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", self, where[i]);
        execv(path, args);
        if (errno != ENOENT && err == ENOENT) { /* there, but not runnable: say so rather than ENOENT */
            err = errno;
            failed = where[i];
        }
    }
    sg_cli_errorf(argv[0], "cannot run %s/%s: %s", self, failed, strerror(err));
    free(args);
    return SG_EXIT_INTERNAL;
}

/* The program's own options: --help, --version. */
static int on_global(int key, const char *arg, void *ctx)
{
    (void)arg;
    (void)ctx;
    if (key == 'V') {
        printf("%s %s\n", SG_CLI_PROG, sg_version());
        return sg_cli_finish_output(NULL, SG_EXIT_OK);
    }
    return -1;
}

/* Parse the global options, find the command named by the first argument and run it
 * with the rest of argv; returns the command's exit code (see sg_exit). */
int main(int argc, char **argv)
{
    static const sg_cli_opt opts[] = {
        {"help", SG_CLI_KEY_HELP, false, true, NULL},
        {"version", 'V', false, true, NULL},
        SG_CLI_OPT_END,
    };
    static const sg_cli_spec spec = {NULL, NULL, opts, NULL, true, print_help};
    const char *name;
    size_t i;
    int rc;

    /* stop at the command name, whose options are the command's own */
    if ((rc = sg_cli_parse(&spec, argc, argv, on_global, NULL)) >= 0)
        return rc;
    if (optind >= argc) {
        fprintf(stderr, "%s: no command given\n", SG_CLI_PROG);
        print_help(stderr);
        return SG_EXIT_USAGE;
    }

    name = argv[optind];
    if (strcmp(name, "serve") != 0 && strcmp(name, "__serve-worker") != 0)
        tune_heap();
    if (strcmp(name, "__serve-worker") == 0) /* not listed: the service starts it (serve --isolate) */
        return exec_serve(argc - optind, argv + optind);
    for (i = 0; i < NCOMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;

            optind = 0; /* glibc: 0 re-initialises getopt for the command's own scan */
            return commands[i].run(sub_argc, sub_argv);
        }
    }
    return sg_cli_usage_error(NULL, "unknown command '%s'", name);
}
