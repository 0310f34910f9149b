/*
 * check_batch.c - `shapegate check --json INPUT...`: many traces in one
 * command (a CI job over a model zoo), checked by a few worker processes.
 *
 * One JSON object per INPUT, one per line, in argument order: the report of
 * docs/check.md with "input" (the argument) and "exit" (that trace's exit
 * code) first; an INPUT that cannot be read or checked gives
 * {"input": ..., "exit": 3 or 5, "error": "<one line>"} and the batch goes
 * on. The process exits with the worst code of the traces (5, then 3, then 1,
 * then 4, then 0). With stderr a terminal, a progress line per finished trace
 * ("[12/87] cases/err_div_offset 3.2 ms violations") goes there.
 *
 * Why processes, not threads: Z3 4.8.12 picks other models while other
 * threads of the process solve, even in fresh contexts (docs/engine.md), so
 * a threaded batch would print other counterexamples than a sequential one.
 * A worker is a fork of this process holding its own engine, with one end of
 * a socketpair; the parent hands it one input index at a time and reads back
 * a frame (batch_frame, then the line), so an idle worker takes the next
 * input (`--jobs N` workers, default the online CPUs).
 *
 * Why the output does not depend on the number of workers: a trace's report
 * does not depend on what its worker checked before. The engine is made
 * with the default options, no warm contexts and no cache (engine.h): every
 * sg_engine_check makes its own Z3 contexts and frees them. The parent keeps
 * the finished lines and prints each as soon as every earlier one is out, so
 * stdout is the sequential run's, line for line, whatever order the workers
 * finish in (tests/test_batch.sh compares them).
 *
 * The parent keeps the clock: a trace still running at its hard limit
 * (sg_cli_hard_limit: Z3 4.8.12 can ignore its interrupt) has its worker
 * killed and gets the report of a killed check; a worker that dies gives its
 * trace an internal-error line. Either way the worker is replaced and the
 * batch goes on; every worker is reaped before the command returns, and dies
 * with the parent (PR_SET_PDEATHSIG). When no worker can be started at all
 * the batch runs here, one trace after another, without the hard limit.
 */
#define _GNU_SOURCE /* open_memstream, prctl */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

#define NO_TASK ((size_t)-1)
#define MAX_LINE ((uint64_t)1 << 30) /* a longer answer is a runaway worker's */
#define POLL_MAX_MS 3600000          /* poll's wait in one go, whatever the hard limit */

/* A worker's answer: this header, then `len` bytes, the line with its newline. The two ends are
 * the same process image, so the struct is the wire format. */
typedef struct batch_frame {
    uint32_t index;    /* the input's index, as the parent sent it */
    int32_t exit_code; /* the trace's exit code */
    double ms;         /* the worker's time for it (load and check) */
    char verdict[16];  /* its verdict's name, or "error", for the progress line */
    uint64_t len;
} batch_frame;

/* One worker process, seen from the parent. */
typedef struct batch_worker {
    pid_t pid;       /* 0: no process in this slot */
    int fd;          /* the parent's end of the socketpair, -1 without a process */
    size_t task;     /* the input it is checking, or NO_TASK */
    double deadline; /* when that input's hard limit passes (0: no limit) */
    char *buf;       /* the answer read so far */
    size_t len, cap;
} batch_worker;

/* One input's result, kept until every earlier one is printed. */
typedef struct batch_slot {
    char *line; /* the line with its newline, owned; NULL until done */
    size_t len;
} batch_slot;

typedef struct batch_run {
    const char *const *inputs;
    size_t n;
    sg_check_options opts; /* each trace's, --timeout counting its load */
    unsigned hard_ms;      /* each trace's hard limit (0: none) */
    batch_worker *workers;
    size_t nworkers;
    struct pollfd *pfd; /* [nworkers], the busy workers' sockets */
    batch_slot *slots;
    size_t next_task, next_print, ndone;
    int worst;
    bool progress;   /* stderr is a terminal */
    bool out_failed; /* stdout refused a write: stop */
} batch_run;

/* ---- one trace's line (the worker's side, or this process's without workers) --------- */

/* `s` as a JSON string literal on `f`. */
static void put_json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* The line of an input whose result is the JSON object `obj` (a report, "{...}"). */
static void object_line(FILE *f, const char *input, int rc, const char *obj)
{
    fputs("{\"input\":", f);
    put_json_str(f, input);
    fprintf(f, ",\"exit\":%d,", rc);
    fputs(obj[0] == '{' ? obj + 1 : obj, f);
    fputc('\n', f);
}

static void error_line(FILE *f, const char *input, int rc, const char *msg)
{
    fputs("{\"input\":", f);
    put_json_str(f, input);
    fprintf(f, ",\"exit\":%d,\"error\":", rc);
    put_json_str(f, msg);
    fputs("}\n", f);
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

/* Check `input` on `engine` and write its line to `f`; `*verdict` gets the verdict's name (or
 * "error"). Returns the trace's exit code. */
static int check_one(sg_engine *engine, const char *input, const sg_check_options *opts, FILE *f,
                     const char **verdict)
{
    sg_error err = SG_ERROR_INIT;
    sg_trace *t = NULL;
    sg_report *r = NULL;
    char *text = NULL;
    double t0 = sg_cli_now_ms();
    sg_check_options o = *opts; /* each input's --timeout counts its load */
    int rc, src;

    *verdict = "error";
    src = sg_trace_load(&t, input, &err);
    sg_cli_spend(&o.timeout_ms, t0);
    if (src != 0) {
        rc = src == SG_ENOMEM ? SG_EXIT_INTERNAL : SG_EXIT_INPUT;
        error_line(f, input, rc, err.msg);
    } else if ((src = sg_engine_check(engine, t, &o, &r, &err)) != 0 ||
               (src = sg_report_to_json(&text, r, 0, &err)) != 0) {
        rc = src == SG_ENOMEM ? SG_EXIT_INTERNAL : src == SG_EINVALID ? SG_EXIT_INPUT : SG_EXIT_INTERNAL;
        error_line(f, input, rc, err.msg);
    } else {
        rc = sg_cli_verdict_exit(r);
        *verdict = sg_verdict_name(sg_report_verdict(r));
        object_line(f, input, rc, text);
    }
    sg_free(text);
    sg_report_free(r);
    sg_trace_free(t);
    return rc;
}

/* ---- the parent's bookkeeping ---------------------------------------------------------- */

/* Free what `b` owns (the parent's, or a worker's inherited copy) but not its processes. */
static void batch_free(batch_run *b)
{
    size_t i;
    for (i = 0; b->workers && i < b->nworkers; i++)
        free(b->workers[i].buf);
    for (i = 0; b->slots && i < b->n; i++)
        free(b->slots[i].line);
    free(b->workers);
    free(b->pfd);
    free(b->slots);
}

/* Print the finished lines that have every earlier one out. */
static void print_ready(batch_run *b)
{
    while (b->next_print < b->n && b->slots[b->next_print].line && !b->out_failed) {
        batch_slot *s = &b->slots[b->next_print++];
        if (fwrite(s->line, 1, s->len, stdout) != s->len)
            b->out_failed = true;
        free(s->line);
        s->line = NULL;
    }
    if (fflush(stdout) != 0)
        b->out_failed = true;
}

/* Input `i` is done with `line` (taken; NULL: out of memory making it). */
static void settle(batch_run *b, size_t i, int rc, char *line, size_t len, double ms, const char *verdict)
{
    static char nomem[] = "{\"input\":null,\"exit\":5,\"error\":\"out of memory keeping a result\"}\n";

    if (!line) { /* the input's name cannot be kept either: say so without it */
        rc = SG_EXIT_INTERNAL;
        line = strdup(nomem);
        len = strlen(nomem);
    }
    if (!line) {
        b->out_failed = true; /* nothing left to report with */
        return;
    }
    b->slots[i].line = line;
    b->slots[i].len = len;
    b->ndone++;
    if (severity(rc) > severity(b->worst))
        b->worst = rc;
    if (b->progress)
        fprintf(stderr, "[%zu/%zu] %s %.1f ms %s\n", b->ndone, b->n, b->inputs[i], ms, verdict);
    print_ready(b);
}

/* Settle input `i` with a line the parent writes: an error (`msg`), or a killed check's report
 * (`msg` NULL). */
static void settle_here(batch_run *b, size_t i, int rc, const char *msg, double ms)
{
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&line, &len);

    if (f) {
        if (msg) {
            error_line(f, b->inputs[i], rc, msg);
        } else {
            char *obj = NULL;
            size_t olen = 0;
            FILE *g = open_memstream(&obj, &olen);
            if (g) {
                sg_cli_print_killed(g, true, b->inputs[i], b->hard_ms);
                if (fclose(g) == 0) {
                    if (olen && obj[olen - 1] == '\n')
                        obj[olen - 1] = '\0';
                    object_line(f, b->inputs[i], rc, obj);
                }
            }
            free(obj);
        }
        if (fclose(f) != 0) {
            free(line);
            line = NULL;
        }
    }
    settle(b, i, rc, line, len, ms, msg ? "error" : "unknown");
}

/* ---- a worker process ------------------------------------------------------------------ */

/* Read or write all `len` bytes of `p` on socket `fd`; false on EOF or error. */
static bool recv_all(int fd, void *p, size_t len)
{
    char *c = p;
    while (len) {
        ssize_t got = recv(fd, c, len, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        c += got;
        len -= (size_t)got;
    }
    return true;
}

static bool send_all(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t put = send(fd, c, len, MSG_NOSIGNAL);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        c += put;
        len -= (size_t)put;
    }
    return true;
}

/* The worker's life: answer each index read from `fd` with its frame, until EOF. */
static void worker_serve(batch_run *b, int fd)
{
    sg_engine *engine = NULL;
    sg_error err = SG_ERROR_INIT;
    bool have_engine = sg_engine_new(&engine, NULL, &err) == 0;
    uint32_t index;

    while (recv_all(fd, &index, sizeof index) && index < b->n) {
        batch_frame fr;
        char *line = NULL;
        size_t len = 0;
        const char *verdict = "error";
        double t0 = sg_cli_now_ms();
        FILE *f = open_memstream(&line, &len);
        bool ok;

        if (!f)
            break; /* out of memory: the parent reports the input */
        memset(&fr, 0, sizeof fr);
        fr.index = index;
        if (have_engine) {
            fr.exit_code = check_one(engine, b->inputs[index], &b->opts, f, &verdict);
        } else {
            fr.exit_code = SG_EXIT_INTERNAL;
            error_line(f, b->inputs[index], SG_EXIT_INTERNAL, err.msg);
        }
        ok = fclose(f) == 0;
        fr.ms = sg_cli_now_ms() - t0;
        strncpy(fr.verdict, verdict, sizeof fr.verdict - 1);
        fr.len = len;
        ok = ok && send_all(fd, &fr, sizeof fr) && send_all(fd, line, len);
        free(line);
        if (!ok)
            break;
    }
    sg_engine_free(engine);
}

/* Start a worker process in slot `w`; false when it cannot be started. */
static bool spawn(batch_run *b, batch_worker *w)
{
    pid_t parent = getpid(), pid;
    int sv[2];
    size_t i;

    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return false;
    fflush(stdout); /* the child must not write the parent's buffered lines again */
    pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    if (pid == 0) {
        /* the worker: the other workers' sockets are not its own (their EOF is their end) */
        close(sv[0]);
        for (i = 0; i < b->nworkers; i++)
            if (b->workers[i].fd >= 0)
                close(b->workers[i].fd);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() == parent)
            worker_serve(b, sv[1]);
        close(sv[1]);
        batch_free(b);
        exit(0);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];
    w->task = NO_TASK;
    w->len = 0;
    return true;
}

/* Wait for slot `w`'s process (killing it first when `kill_it`); returns its wait status. */
static int reap(batch_worker *w, bool kill_it)
{
    int status = 0;

    if (w->fd >= 0)
        close(w->fd); /* an idle worker reads EOF and exits */
    if (kill_it)
        kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    w->pid = 0;
    w->fd = -1;
    w->task = NO_TASK;
    w->len = 0;
    return status;
}

/* At the batch's end: slot `w`'s process, idle, exits on EOF; one that does not exit cleanly
 * (a sanitizer's report, a crash on the way out) makes the batch's exit code 5. One still
 * checking (the batch stopped early: stdout refused a write) is killed. */
static void end_worker(batch_run *b, batch_worker *w)
{
    bool busy = w->task != NO_TASK;
    int status = reap(w, busy);

    if (busy || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
        return;
    if (WIFSIGNALED(status))
        sg_cli_errorf("check", "internal error: a solver process ended with signal %d", WTERMSIG(status));
    else
        sg_cli_errorf("check", "internal error: a solver process exited with code %d", WEXITSTATUS(status));
    b->worst = SG_EXIT_INTERNAL;
}

/* Slot `w`'s process ended, or broke the protocol (`why` then says how; else NULL), while
 * checking its input: it is killed and reaped, and that input gets an internal-error line. */
static void on_died(batch_run *b, batch_worker *w, const char *why)
{
    size_t i = w->task;
    int status = reap(w, true);
    char msg[128];

    if (why)
        snprintf(msg, sizeof msg, "internal error: %s", why);
    else if (WIFSIGNALED(status))
        snprintf(msg, sizeof msg, "internal error: the solver process ended with signal %d", WTERMSIG(status));
    else
        snprintf(msg, sizeof msg, "internal error: the solver process exited (code %d) without an answer",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    if (i != NO_TASK)
        settle_here(b, i, SG_EXIT_INTERNAL, msg, 0);
}

/* Give every input without a line an internal error saying `why` (the workers still checking are
 * killed): the batch cannot go on, yet every INPUT gets its line. */
static void abandon(batch_run *b, const char *why)
{
    char msg[128];
    size_t k;

    snprintf(msg, sizeof msg, "internal error: %s", why);
    for (k = 0; k < b->nworkers; k++)
        if (b->workers[k].task != NO_TASK)
            on_died(b, &b->workers[k], why);
    for (; b->next_task < b->n; b->next_task++)
        settle_here(b, b->next_task, SG_EXIT_INTERNAL, msg, 0);
}

/* Give the next input to idle slot `w`, starting its process if it has none. Returns false
 * when the slot has no process and none can be started. */
static bool dispatch(batch_run *b, batch_worker *w)
{
    uint32_t index = (uint32_t)b->next_task;

    if (!w->pid && !spawn(b, w))
        return false;
    if (!send_all(w->fd, &index, sizeof index)) {
        reap(w, true); /* it died idle: start another */
        if (!spawn(b, w) || !send_all(w->fd, &index, sizeof index)) {
            if (w->pid)
                reap(w, true);
            return false;
        }
    }
    w->task = b->next_task++;
    w->deadline = b->hard_ms ? sg_cli_now_ms() + b->hard_ms : 0;
    return true;
}

/* Read what slot `w` sent; settle its input once the frame is whole. */
static void on_readable(batch_run *b, batch_worker *w)
{
    batch_frame fr;
    ssize_t got;

    if (w->cap - w->len < 65536) {
        size_t ncap = w->cap ? w->cap * 2 : 65536 + sizeof fr;
        char *nb = ncap <= MAX_LINE + sizeof fr ? realloc(w->buf, ncap) : NULL;
        if (!nb) {
            on_died(b, w, "out of memory reading the solver process's answer");
            return;
        }
        w->buf = nb;
        w->cap = ncap;
    }
    got = read(w->fd, w->buf + w->len, w->cap - w->len);
    if (got < 0 && errno == EINTR)
        return;
    if (got <= 0 || w->task == NO_TASK) {
        on_died(b, w, NULL);
        return;
    }
    w->len += (size_t)got;
    if (w->len < sizeof fr)
        return;
    memcpy(&fr, w->buf, sizeof fr);
    if (fr.index != w->task || fr.len > MAX_LINE) {
        on_died(b, w, "the solver process answered another question");
        return;
    }
    if (w->len < sizeof fr + fr.len)
        return;
    if (w->len > sizeof fr + fr.len) {
        on_died(b, w, "the solver process answered twice");
        return;
    }
    {
        char *line = malloc(fr.len ? fr.len : 1);
        size_t i = w->task;
        if (line)
            memcpy(line, w->buf + sizeof fr, fr.len);
        fr.verdict[sizeof fr.verdict - 1] = '\0';
        w->task = NO_TASK;
        w->len = 0;
        settle(b, i, fr.exit_code, line, fr.len, fr.ms, fr.verdict);
    }
}

/* Give each idle slot the next input while any is left, and set b->pfd to the busy slots'
 * sockets. Returns how many slots are busy, or -1 when the batch's first input found no process
 * (none could be started); `*first` gets the earliest deadline (0: none). */
static long fill_slots(batch_run *b, double *first)
{
    long busy = 0;
    size_t k;

    *first = 0;
    for (k = 0; k < b->nworkers; k++) {
        batch_worker *w = &b->workers[k];
        if (w->task == NO_TASK && b->next_task < b->n && !dispatch(b, w) && b->next_task == 0)
            return -1;
        b->pfd[k].fd = w->task != NO_TASK ? w->fd : -1; /* poll ignores negative descriptors */
        b->pfd[k].events = POLLIN;
        b->pfd[k].revents = 0;
        if (w->task != NO_TASK) {
            busy++;
            if (w->deadline && (!*first || w->deadline < *first))
                *first = w->deadline;
        }
    }
    return busy;
}

/* Read the busy slots poll found ready; kill the ones past their deadline. */
static void collect(batch_run *b)
{
    double now = sg_cli_now_ms();
    size_t k;

    for (k = 0; k < b->nworkers; k++) {
        batch_worker *w = &b->workers[k];
        if (w->task == NO_TASK)
            continue;
        if (b->pfd[k].revents)
            on_readable(b, w);
        if (w->task != NO_TASK && w->deadline && now >= w->deadline) {
            size_t i = w->task;
            reap(w, true);
            settle_here(b, i, SG_EXIT_UNKNOWN, NULL, b->hard_ms);
        }
    }
}

/* Run the batch on `b->nworkers` slots until every line is out (or stdout refuses one); false
 * when not one worker could be started (nothing was printed). */
static bool run_workers(batch_run *b)
{
    while (b->next_print < b->n && !b->out_failed) {
        double first;
        long busy = fill_slots(b, &first);
        int wait_ms = -1;

        if (busy < 0)
            return false;
        if (busy == 0) { /* inputs left, and no process can be started for them */
            abandon(b, "cannot start a solver process");
            break;
        }
        if (first) {
            double left = first - sg_cli_now_ms();
            wait_ms = left <= 0 ? 0 : left > POLL_MAX_MS ? POLL_MAX_MS : (int)left + 1;
        }
        if (poll(b->pfd, b->nworkers, wait_ms) < 0 && errno != EINTR) {
            abandon(b, "cannot wait for the solver processes");
            break;
        }
        collect(b);
    }
    return true;
}

/* Without workers: every input here, one after another (no hard limit). */
static void run_here(batch_run *b)
{
    sg_engine *engine = NULL;
    sg_error err = SG_ERROR_INIT;
    size_t i;

    if (sg_engine_new(&engine, NULL, &err) != 0) {
        for (i = 0; i < b->n; i++)
            settle_here(b, i, SG_EXIT_INTERNAL, err.msg, 0);
        return;
    }
    for (i = 0; i < b->n && !b->out_failed; i++) {
        char *line = NULL;
        size_t len = 0;
        const char *verdict = "error";
        double t0 = sg_cli_now_ms();
        FILE *f = open_memstream(&line, &len);
        int rc = SG_EXIT_INTERNAL;

        if (f) {
            rc = check_one(engine, b->inputs[i], &b->opts, f, &verdict);
            if (fclose(f) != 0) {
                free(line);
                line = NULL;
            }
        }
        settle(b, i, rc, line, len, sg_cli_now_ms() - t0, verdict);
    }
    sg_engine_free(engine);
}

int sg_cli_check_batch(const char *const *inputs, size_t n, const sg_check_options *opts, unsigned jobs,
                       unsigned hard_ms)
{
    batch_run b;
    size_t k;
    bool started;

    memset(&b, 0, sizeof b);
    b.inputs = inputs;
    b.n = n;
    b.opts = *opts;
    b.hard_ms = hard_ms;
    b.nworkers = jobs < 1 ? 1 : jobs < n ? jobs : n;
    b.progress = isatty(STDERR_FILENO);
    b.worst = SG_EXIT_OK;
    if (n > UINT32_MAX || !(b.workers = calloc(b.nworkers, sizeof *b.workers)) ||
        !(b.pfd = calloc(b.nworkers, sizeof *b.pfd)) || !(b.slots = calloc(n, sizeof *b.slots))) {
        batch_free(&b);
        sg_cli_errorf("check", "out of memory starting the batch");
        return SG_EXIT_INTERNAL;
    }
    for (k = 0; k < b.nworkers; k++) {
        b.workers[k].fd = -1;
        b.workers[k].task = NO_TASK;
    }
    started = run_workers(&b);
    for (k = 0; k < b.nworkers; k++)
        if (b.workers[k].pid)
            end_worker(&b, &b.workers[k]);
    if (!started)
        run_here(&b);
    batch_free(&b);
    return b.out_failed ? SG_EXIT_INTERNAL : b.worst;
}
