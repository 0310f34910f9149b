/*
 * supervise.c - a hard wall-clock stop for the solver commands.
 *
 * The library stops Z3 cooperatively (a watchdog calls Z3_interrupt, and the
 * check's own budgets); Z3 4.8.12 ignores that interrupt inside some of its
 * non-linear arithmetic loops (docs/robustness.md, "Solver budgets under
 * attack"), so a crafted trace could keep a query running far past its
 * budget. `check` and `spec` therefore run in a forked child whose standard
 * output goes into a memory file (memfd; a pipe where there is none); the
 * parent copies it out only when the child finishes, and kills the child when
 * the hard limit passes. No partial output reaches stdout either way.
 *
 * The memory file costs the child no wait: through a pipe, a megabyte of report
 * went in 64 KiB turns between the two processes (eq1000: about 5 ms of its 60). The
 * child holds the write end of a pipe it never writes; the parent polls it, and
 * its end of file is the child's exit.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define MAX_OUTPUT ((size_t)1 << 30)

double sg_cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

void sg_cli_spend(unsigned *timeout_ms, double since_ms)
{
    double used = sg_cli_now_ms() - since_ms;

    if (*timeout_ms == 0)
        return;
    *timeout_ms = used >= *timeout_ms - 1.0 ? 1u : *timeout_ms - (unsigned)used;
}

/* The child's output so far: its memory file's size. */
static size_t mem_size(int mem)
{
    struct stat st;
    return fstat(mem, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
}

/* Copy the memory file `mem` to stdout (nothing of it buffered there yet): by the kernel where it
 * can, else through a buffer; false on a read or write error. */
static bool copy_out(int mem)
{
    char chunk[65536];
    size_t left = mem_size(mem);
    off_t off = 0;
    ssize_t got;
    while (left > 0 && (got = sendfile(STDOUT_FILENO, mem, &off, left)) > 0)
        left -= (size_t)got;
    if (left == 0)
        return true;
    if (lseek(mem, off, SEEK_SET) != off)
        return false;
    while ((got = read(mem, chunk, sizeof chunk)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || fwrite(chunk, 1, (size_t)got, stdout) != (size_t)got)
            return false;
    }
    return true;
}

/* Parent side: collect the child's output until it exits or the limit passes; `mem` its memory
 * file (the output), or -1 when the output comes through the pipe `fd` itself. */
static int parent(sg_cli_supervisor *sv, pid_t pid, int fd, int mem, unsigned hard_ms)
{
    char *buf = NULL, chunk[65536];
    size_t len = 0, cap = 0;
    double end = hard_ms ? sg_cli_now_ms() + hard_ms : 0;
    bool eof = false, over = false;
    int status = 0;

    while (!eof) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int wait_ms = mem >= 0 ? 250 : -1, n; /* (a memory file's size is looked at every 250 ms) */
        if (end) {
            double left = end - sg_cli_now_ms();
            if (left <= 0) {
                over = true;
                break;
            }
            if (wait_ms < 0 || left + 1 < wait_ms)
                wait_ms = (int)left + 1;
        }
        if (mem >= 0 && mem_size(mem) > MAX_OUTPUT) {
            over = true; /* output beyond any sane size: treat as a runaway */
            break;
        }
        n = poll(&pfd, 1, wait_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        if (n == 0)
            continue; /* the deadline test above ends the loop */
        {
            ssize_t got = read(fd, chunk, sizeof chunk);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0) {
                eof = true;
                break;
            }
            if (len + (size_t)got > cap) {
                size_t ncap = cap ? cap * 2 : sizeof chunk;
                char *nb;
                while (ncap < len + (size_t)got)
                    ncap *= 2;
                if (ncap > MAX_OUTPUT || !(nb = realloc(buf, ncap))) {
                    over = true; /* output beyond any sane size: treat as a runaway */
                    break;
                }
                buf = nb;
                cap = ncap;
            }
            memcpy(buf + len, chunk, (size_t)got);
            len += (size_t)got;
        }
    }
    close(fd);
    if (over)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sv->killed = over;
    if (!over && WIFEXITED(status)) {
        if ((mem >= 0 && !copy_out(mem)) || (len && fwrite(buf, 1, len, stdout) != len))
            sv->exit_code = SG_EXIT_INTERNAL;
        else
            sv->exit_code = WEXITSTATUS(status);
    } else if (!over) {
        sg_cli_errorf(sv->cmd, "internal error: the solver process ended with signal %d",
                      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        sv->exit_code = SG_EXIT_INTERNAL;
    }
    free(buf);
    return 1;
}

int sg_cli_supervise(sg_cli_supervisor *sv, const char *cmd, unsigned hard_ms)
{
    int fds[2], mem = -1, rc;
    pid_t pid;

    memset(sv, 0, sizeof *sv);
    sv->cmd = cmd;
    fflush(stdout);
    if (hard_ms == 0 || pipe(fds) != 0)
        return 0; /* no limit, or no pipe: run unsupervised */
    mem = memfd_create("shapegate-output", MFD_CLOEXEC); /* -1: the output goes through the pipe */
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        if (mem >= 0)
            close(mem);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        if (dup2(mem >= 0 ? mem : fds[1], STDOUT_FILENO) < 0)
            _exit(SG_EXIT_INTERNAL);
        if (mem >= 0)
            close(mem); /* (fds[1] stays open until the exit: the parent's end of file) */
        else
            close(fds[1]);
        sv->child = true;
        return 0;
    }
    close(fds[1]);
    rc = parent(sv, pid, fds[0], mem, hard_ms);
    if (mem >= 0)
        close(mem);
    return rc;
}

int sg_cli_supervised_exit(sg_cli_supervisor *sv, int rc)
{
    if (!sv->child)
        return rc;
    rc = sg_cli_finish_output(sv->cmd, rc);
    exit(rc);
}

unsigned sg_cli_hard_limit(unsigned timeout_ms, unsigned nchecks)
{
    unsigned long long ms;
    if (timeout_ms == 0)
        return 0;
    /* the budgets, plus slack for loading, printing and a check that overruns a little */
    ms = (unsigned long long)timeout_ms * nchecks + timeout_ms / 2 + 3000;
    return ms > 0xffffffffULL ? 0xffffffffu : (unsigned)ms;
}

void sg_cli_print_killed(FILE *out, bool json, const char *input, unsigned hard_ms)
{
    if (json) {
        fprintf(out, "{\"verdict\":\"unknown\",\"reason\":\"hard time limit (%u ms): the solver did not stop\","
               "\"violations\":[],\"dims\":[]}\n", hard_ms);
    } else {
        fprintf(out, "%s: unknown\n  stopped at the hard time limit (%u ms): the solver did not return within its budget "
               "(Z3 ignored its interrupt)\n", input, hard_ms);
    }
}

int sg_cli_start_solver(sg_cli_supervisor *sv, const char *cmd, int argc, char **argv, bool json,
                        unsigned hard_ms)
{
    if (optind >= argc)
        return sg_cli_usage_error(cmd, "missing INPUT");
    if (optind + 1 < argc)
        return sg_cli_usage_error(cmd, "one INPUT only, got '%s' too", argv[optind + 1]);
    if (!sg_cli_supervise(sv, cmd, hard_ms))
        return -1;
    if (!sv->killed)
        return sv->exit_code;
    sg_cli_print_killed(stdout, json, argv[optind], hard_ms);
    return sg_cli_finish_output(cmd, SG_EXIT_UNKNOWN);
}
