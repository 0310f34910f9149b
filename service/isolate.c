/*
 * isolate.c - `serve --isolate`: the solving of each worker in a long-lived
 * child process, killed and replaced when it overruns, dies or runs out of
 * memory (docs/service.md, "Isolation").
 *
 * Each pool worker owns one solver process: this executable run again as
 * `shapegate __serve-worker` (fork, then exec of /proc/self/exe: the child
 * starts clean, with none of the parent's threads, locks or Z3 state), with
 * one end of a socketpair as its descriptor 3. The process holds its own
 * engine (one warm Z3 context, its own report cache) and answers one request
 * at a time, so a small check costs a round trip over the socket, not a fork.
 * A Unix socket rather than two pipes: the spool files of archive and gate
 * bodies, and the packed archive coming back, are passed as descriptors
 * (SCM_RIGHTS), never copied.
 *
 * The framing is fixed-size headers (the two sides are the same executable,
 * so the structs are the wire format) followed by their payloads:
 *
 *   parent -> child, once:  wire_init (the limits, spool folder, Redis URL, memory cap)
 *   child -> parent, once:  wire_ready (0, or a failure with its message)
 *   parent -> child:        wire_req + body bytes + policy bytes; 0 to 2 descriptors with the header
 *   child -> parent:        wire_ans + answer bytes; the packed archive's descriptor with the header
 *
 * The parent keeps the clock: it polls the socket until the request's budget
 * plus the grace, then SIGKILLs the process, whatever Z3 is doing (Z3 4.8.12
 * ignores its interrupt in some non-linear loops). A process that closes the
 * socket without answering died: it is reaped and its status named. The memory
 * cap is RLIMIT_DATA, set by the process on itself once started, at what it
 * then holds plus the cap: an allocation past it fails; the process then exits
 * with SG_SERVICE_EXIT_MEMORY instead of answering (its heap and Z3's state
 * after a failed allocation are not trusted), or dies of it (an uncaught
 * std::bad_alloc aborts), and is replaced either way.
 *
 * Children die with their parent: PR_SET_PDEATHSIG (SIGKILL) is set between
 * fork and exec, and a process reads the socket's end (EOF) as the order to
 * exit. Every descriptor but 0-2 and the socket is closed before exec.
 */
#define _GNU_SOURCE /* close_range, MSG_CMSG_CLOEXEC, SOCK_CLOEXEC */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

#define WIRE_MAGIC 0x53475731u /* "SGW1" */
#define CHILD_FD 3
#define READY_WAIT_MS 60000     /* a process's start (Z3's first context; slow under sanitizers) */
#define EXIT_WAIT_MS 2000       /* at shutdown, between closing a process's socket and killing it */
#define POLL_SLICE_MS 50        /* how often a waiting worker looks at its request's cancel token */

typedef struct wire_init {
    uint32_t magic;
    uint32_t cache_entries, redis_ttl_s, memory_mib;
    uint64_t max_guards, max_symbols;
    char spool[256];
    char redis_url[512];
} wire_init;

typedef struct wire_ready {
    uint32_t magic;
    uint32_t failed;
    char msg[200];
} wire_ready;

typedef struct wire_req {
    uint32_t magic;
    uint32_t route;          /* sv_route_id */
    uint32_t nfds;           /* spool files with the header: 0, 1 (archive) or 2 (gate: old, new) */
    uint32_t pad;
    uint64_t body_len, policy_len, received;
    uint64_t part_bytes[SV_NPARTS];
    sg_check_options opts;   /* `cancel` cleared: the process has its own stop (the parent's kill) */
    char part_file[2][96];
} wire_req;

typedef struct wire_ans {
    uint32_t magic;
    uint32_t status;
    uint32_t has_fd;         /* the answer is the file passed with the header (pack), `fd_len` bytes */
    uint32_t from_redis;
    uint64_t body_len, fd_len;
    char code[40], verdict[24], ctype[48];
    char extra_header[2][96];
    sg_engine_stats stats;   /* the process's engine counters after the request */
} wire_ans;

/* ---- socket I/O --------------------------------------------------------------------------------- */

/* Send `n` bytes of `buf`, with descriptors `fds` (`nfds`, at most 2) on the first byte: 0 or -1. */
static int send_msg(int fd, const void *buf, size_t n, const int *fds, unsigned nfds)
{
    const char *p = buf;
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;

    while (n > 0) {
        struct iovec iov = {(void *)p, n};
        struct msghdr m;
        ssize_t k;

        memset(&m, 0, sizeof m);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        if (nfds) {
            struct cmsghdr *c;
            memset(&u, 0, sizeof u);
            m.msg_control = u.buf;
            m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
            c = CMSG_FIRSTHDR(&m);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
            memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
        }
        k = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        nfds = 0; /* sent with the first byte */
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/*
 * Receive `n` bytes into `buf`, and up to `maxfds` descriptors into `fds` (`*nfds` of them; close-
 * on-exec). `deadline` (sv_now() seconds, 0: none) and `cancel` bound the waiting: 0; -1 at the
 * socket's end or an error; -2 past the deadline; -3 when `cancel` was requested.
 */
static int recv_msg(int fd, void *buf, size_t n, int *fds, unsigned maxfds, unsigned *nfds, double deadline,
                    const sg_cancel *cancel)
{
    char *p = buf;
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;

    if (nfds)
        *nfds = 0;
    while (n > 0) {
        struct iovec iov = {p, n};
        struct msghdr m;
        struct cmsghdr *c;
        ssize_t k;

        if (deadline > 0 || cancel) {
            struct pollfd pfd = {fd, POLLIN, 0};
            int wait = -1, r;
            if (cancel && sg_cancel_requested(cancel))
                return -3;
            if (deadline > 0) {
                double left = deadline - sv_now();
                if (left <= 0)
                    return -2;
                wait = (int)(left * 1000.0) + 1;
            }
            if (cancel && (wait < 0 || wait > POLL_SLICE_MS))
                wait = POLL_SLICE_MS;
            r = poll(&pfd, 1, wait);
            if (r < 0 && errno != EINTR)
                return -1;
            if (r <= 0)
                continue;
        }
        memset(&m, 0, sizeof m);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        if (maxfds) {
            m.msg_control = u.buf;
            m.msg_controllen = sizeof u.buf;
        }
        k = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        for (c = maxfds ? CMSG_FIRSTHDR(&m) : NULL; c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                unsigned i, got = (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                int in[4];
                memcpy(in, CMSG_DATA(c), (got > 4 ? 4 : got) * sizeof(int));
                for (i = 0; i < got && i < 4; i++) {
                    if (*nfds < maxfds)
                        fds[(*nfds)++] = in[i];
                    else
                        close(in[i]);
                }
            }
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* ---- the parent's side ------------------------------------------------------------------------- */

typedef struct sv_child {
    pid_t pid;               /* 0: none running */
    int fd;                  /* our end of its socket, or -1 */
    sg_engine_stats last;    /* its counters at its last answer */
} sv_child;

struct sv_iso {
    sg_service *s;
    sv_child *kids;          /* [s->cfg.threads], kids[i] touched by worker i only (and at start/free) */
    unsigned n;
    pthread_mutex_t lock;    /* `last`, `gone`, `running` against /metrics */
    sg_engine_stats gone;    /* the summed counters of processes replaced */
    unsigned running;
    _Atomic uint64_t restarts[SV_NRESTART];
};

static const char *const restart_names[SV_NRESTART] = {"timeout", "memory", "signal", "exit", "shutdown"};

const char *sv_restart_name(sv_restart r) { return r < SV_NRESTART ? restart_names[r] : "exit"; }

/* Add the counters of `b` to `a` (the gauge of warm contexts only when `gauges`). */
static void stats_add(sg_engine_stats *a, const sg_engine_stats *b, bool gauges)
{
    uint64_t idle = a->contexts_idle;
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    size_t i;

    for (i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        x[i] += y[i];
    if (!gauges)
        a->contexts_idle = idle;
}

/* Wait for `pid` to end, up to `ms` (then SIGKILL and wait): its wait status. */
static int reap(pid_t pid, unsigned ms)
{
    double end = sv_now() + ms / 1000.0;
    int st = 0;
    pid_t r;

    for (;;) {
        r = waitpid(pid, &st, ms ? WNOHANG : 0);
        if (r == pid || (r < 0 && errno != EINTR))
            return r == pid ? st : 0;
        if (r == 0 && sv_now() >= end) {
            kill(pid, SIGKILL);
            ms = 0;
            continue;
        }
        if (r == 0) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

/* The child between fork and exec: only async-signal-safe calls. */
static void child_exec(int sock, pid_t parent)
{
    static char arg0[] = "shapegate", arg1[] = "__serve-worker";
    char *argv[] = {arg0, arg1, NULL};
    sigset_t none;

    /* the signals the server blocks in every thread (cmd_serve.c) are the worker's defaults again */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(1); /* the parent is already gone */
    if (sock == CHILD_FD) {
        if (fcntl(sock, F_SETFD, 0) != 0)
            _exit(1);
    } else if (dup2(sock, CHILD_FD) != CHILD_FD) {
        _exit(1);
    }
    /* nothing else of the server's crosses: listening and client sockets, spool files, the log */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, CHILD_FD + 1, ~0u, 0) != 0)
#endif
    {
        int fd;
        for (fd = CHILD_FD + 1; fd < 65536; fd++)
            close(fd);
    }
    execv("/proc/self/exe", argv);
    _exit(127);
}

/* Start worker `i`'s process and wait until it is ready: 0, or -1 with `err` set. */
static int spawn(sv_iso *iso, unsigned i, sg_error *err)
{
    const sg_service_config *c = &iso->s->cfg;
    sv_child *k = &iso->kids[i];
    wire_init in;
    wire_ready rd;
    int sv[2], rc;
    pid_t pid, self = getpid();

    k->pid = 0;
    k->fd = -1;
    memset(&k->last, 0, sizeof k->last);
    memset(&rd, 0, sizeof rd);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err->msg, sizeof err->msg, "solver process: socketpair: %s", strerror(errno));
        return -1;
    }
    if ((pid = fork()) < 0) {
        snprintf(err->msg, sizeof err->msg, "solver process: fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0)
        child_exec(sv[1], self);
    close(sv[1]);
    k->pid = pid;
    k->fd = sv[0];
    memset(&in, 0, sizeof in);
    in.magic = WIRE_MAGIC;
    in.cache_entries = c->cache_entries;
    in.redis_ttl_s = c->redis_ttl_s;
    in.memory_mib = c->worker_memory_mib;
    in.max_guards = c->max_guards;
    in.max_symbols = c->max_symbols;
    snprintf(in.spool, sizeof in.spool, "%s", iso->s->spool);
    snprintf(in.redis_url, sizeof in.redis_url, "%s", c->redis_url ? c->redis_url : "");
    if (send_msg(k->fd, &in, sizeof in, NULL, 0) != 0
        || (rc = recv_msg(k->fd, &rd, sizeof rd, NULL, 0, NULL, sv_now() + READY_WAIT_MS / 1000.0, NULL)) != 0
        || rd.magic != WIRE_MAGIC || rd.failed) {
        if (k->fd >= 0 && rd.magic == WIRE_MAGIC && rd.failed)
            snprintf(err->msg, sizeof err->msg, "solver process: %.200s", rd.msg);
        else
            snprintf(err->msg, sizeof err->msg, "solver process %d did not start", (int)pid);
        close(k->fd);
        k->fd = -1;
        kill(pid, SIGKILL);
        reap(pid, 0);
        k->pid = 0;
        return -1;
    }
    pthread_mutex_lock(&iso->lock);
    iso->running++;
    pthread_mutex_unlock(&iso->lock);
    return 0;
}

/* Stop worker `i`'s process (killed unless `gently`: then its socket is closed and it exits),
 * reap it, and count why: its wait status in `*status`. */
static void retire(sv_iso *iso, unsigned i, bool gently, int *status, sv_restart why, bool count)
{
    sv_child *k = &iso->kids[i];
    int st;

    if (!k->pid)
        return;
    if (!gently)
        kill(k->pid, SIGKILL);
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    st = reap(k->pid, gently ? EXIT_WAIT_MS : 0);
    if (status)
        *status = st;
    k->pid = 0;
    pthread_mutex_lock(&iso->lock);
    stats_add(&iso->gone, &k->last, false);
    memset(&k->last, 0, sizeof k->last);
    iso->running--;
    pthread_mutex_unlock(&iso->lock);
    if (count)
        atomic_fetch_add(&iso->restarts[why], 1);
}

int sv_iso_new(sv_iso **out, sg_service *s, sg_error *err)
{
    sv_iso *iso;
    unsigned i;

    *out = NULL;
    if (s->cfg.redis_url && strlen(s->cfg.redis_url) >= sizeof(((wire_init *)0)->redis_url)) {
        snprintf(err->msg, sizeof err->msg, "the Redis URL is too long for --isolate");
        return err->code = SG_EINVALID;
    }
    if (!(iso = calloc(1, sizeof *iso)) || !(iso->kids = calloc(s->cfg.threads, sizeof *iso->kids))) {
        free(iso);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return err->code = SG_ENOMEM;
    }
    iso->s = s;
    iso->n = s->cfg.threads;
    pthread_mutex_init(&iso->lock, NULL);
    for (i = 0; i < iso->n; i++)
        iso->kids[i].fd = -1;
    for (i = 0; i < iso->n; i++) {
        if (spawn(iso, i, err) != 0) {
            sv_iso_free(iso);
            return err->code = SG_ERROR;
        }
    }
    *out = iso;
    return 0;
}

/* Why process status `st` ended, for a message: "killed by signal 9 (Killed)", "exit status 3". */
static void describe(char *buf, size_t n, int st, unsigned memory_mib)
{
    if (WIFSIGNALED(st))
        snprintf(buf, n, "died of signal %d (SIG%s)", WTERMSIG(st),
                 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
    else if (WIFEXITED(st) && WEXITSTATUS(st) == SG_SERVICE_EXIT_MEMORY)
        snprintf(buf, n, "ran out of its memory cap (--worker-memory %u MiB)", memory_mib);
    else if (WIFEXITED(st))
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(buf, n, "stopped answering");
}

/* The process of worker `i` failed request `q` (died, broke the protocol): answer, retire it, start
 * another. */
static void failed(sv_iso *iso, unsigned i, sv_request *q)
{
    unsigned mib = iso->s->cfg.worker_memory_mib;
    char what[160];
    sg_error err = SG_ERROR_INIT;
    int st = 0;
    sv_restart why;

    /* it closed its socket: it is dying or dead (one that broke the protocol is killed after a while) */
    retire(iso, i, true, &st, SV_RESTART_EXIT, false);
    describe(what, sizeof what, st, mib);
    why = WIFEXITED(st) && WEXITSTATUS(st) == SG_SERVICE_EXIT_MEMORY ? SV_RESTART_MEMORY
          : WIFSIGNALED(st)                                         ? SV_RESTART_SIGNAL
                                                                    : SV_RESTART_EXIT;
    atomic_fetch_add(&iso->restarts[why], 1);
    sv_error(q, 503, "worker_failed", "the solver process %s while answering; it was replaced, retry later "
             "(a request that needs more memory than the cap fails again)", what);
    if (spawn(iso, i, &err) != 0)
        sv_error(q, 503, "worker_failed", "the solver process %s while answering, and %s", what, err.msg);
}

/* The library's own string for verdict name `name` (a report's or a gate's), or NULL: q->verdict
 * outlives the request (the answer cache keeps the pointer), so it must not point into it. */
static const char *verdict_named(const char *name)
{
    int v;

    for (v = SG_VERDICT_OK; v <= SG_VERDICT_TORCH_FAILED; v++)
        if (!strcmp(name, sg_verdict_name((sg_verdict)v)))
            return sg_verdict_name((sg_verdict)v);
    for (v = SG_GATE_PASS; v <= SG_GATE_UNKNOWN; v++)
        if (!strcmp(name, sg_gate_verdict_name((sg_gate_verdict)v)))
            return sg_gate_verdict_name((sg_gate_verdict)v);
    return NULL;
}

void sv_iso_run(sv_iso *iso, sv_request *q)
{
    unsigned i = q->worker;
    sv_child *k = &iso->kids[i];
    sg_error err = SG_ERROR_INIT;
    wire_req rq;
    wire_ans an;
    int fds[2], ansfd = -1, rc;
    unsigned nfds = 0, got = 0;
    unsigned budget = q->opts.timeout_ms;
    double deadline = 0;
    char *body = NULL;
    bool retried = false;

    if (!k->pid && spawn(iso, i, &err) != 0) {
        sv_error(q, 503, "worker_failed", "no solver process: %s", err.msg);
        return;
    }
    memset(&rq, 0, sizeof rq);
    rq.magic = WIRE_MAGIC;
    rq.route = (uint32_t)q->route->id;
    rq.body_len = q->body ? q->len : 0;
    rq.policy_len = q->policy ? q->policy_len : 0;
    rq.received = q->received;
    memcpy(rq.part_bytes, q->part_bytes, sizeof rq.part_bytes);
    rq.opts = q->opts;
    rq.opts.cancel = NULL;
    memcpy(rq.part_file, q->part_file, sizeof rq.part_file);
    if (q->fd >= 0)
        fds[nfds++] = q->fd;
    if (q->fd2 >= 0)
        fds[nfds++] = q->fd2;
    rq.nfds = nfds;
again:
    if (send_msg(k->fd, &rq, sizeof rq, fds, nfds) != 0 || send_msg(k->fd, q->body, rq.body_len, NULL, 0) != 0
        || send_msg(k->fd, q->policy, rq.policy_len, NULL, 0) != 0) {
        /* it died while idle (nothing of this request was solved): once more on a new one */
        if (!retried) {
            int st = 0;
            retire(iso, i, false, &st, SV_RESTART_EXIT, false);
            atomic_fetch_add(&iso->restarts[WIFEXITED(st) && WEXITSTATUS(st) == SG_SERVICE_EXIT_MEMORY ? SV_RESTART_MEMORY
                                               : WIFSIGNALED(st) ? SV_RESTART_SIGNAL : SV_RESTART_EXIT], 1);
            retried = true;
            if (spawn(iso, i, &err) == 0)
                goto again;
            sv_error(q, 503, "worker_failed", "no solver process: %s", err.msg);
            return;
        }
        failed(iso, i, q);
        return;
    }
    sv_body_release(q); /* the process has it */
    if (budget)
        deadline = sv_now() + (budget + SG_SERVICE_GRACE_MS + budget / 10) / 1000.0;
    rc = recv_msg(k->fd, &an, sizeof an, &ansfd, 1, &got, deadline, q->cancel);
    if (rc == 0 && (an.magic != WIRE_MAGIC || an.body_len > ((uint64_t)1 << 40)))
        rc = -1;
    if (rc == 0 && an.body_len && !(body = malloc(an.body_len + 1))) {
        /* the answer cannot be taken: the process is replaced, its socket being mid-message */
        retire(iso, i, false, NULL, SV_RESTART_EXIT, true);
        sv_error(q, 503, "out_of_memory", "out of memory reading the solver's answer");
        goto respawn;
    }
    if (rc == 0 && an.body_len)
        rc = recv_msg(k->fd, body, an.body_len, NULL, 0, NULL, deadline, q->cancel);
    if (rc == -2) {
        retire(iso, i, false, NULL, SV_RESTART_TIMEOUT, true);
        sv_error(q, 504, "timeout", "the solver did not return within the budget (%u ms) and its grace; its "
                 "process was stopped and replaced", budget);
        goto respawn;
    }
    if (rc == -3) {
        retire(iso, i, false, NULL, SV_RESTART_SHUTDOWN, true);
        sv_error(q, 503, "draining", "the service is shutting down; the solving was stopped");
        goto done; /* no new process: the pool is stopping */
    }
    if (rc != 0 || (an.has_fd && got != 1)) {
        failed(iso, i, q);
        goto done;
    }
    pthread_mutex_lock(&iso->lock);
    k->last = an.stats;
    pthread_mutex_unlock(&iso->lock);
    if (body)
        body[an.body_len] = '\0';
    an.code[sizeof an.code - 1] = an.verdict[sizeof an.verdict - 1] = an.ctype[sizeof an.ctype - 1] = '\0';
    sv_answer(q, an.status, an.code, body, an.body_len, !strcmp(an.ctype, "application/zip") ? "application/zip"
                                                         : !strncmp(an.ctype, "text/plain", 10) ? "text/plain"
                                                                                                : "application/json");
    body = NULL;
    q->verdict = verdict_named(an.verdict);
    memcpy(q->extra_header, an.extra_header, sizeof q->extra_header);
    q->extra_header[0][sizeof q->extra_header[0] - 1] = q->extra_header[1][sizeof q->extra_header[1] - 1] = '\0';
    q->from_redis = an.from_redis != 0;
    if (an.has_fd) {
        q->resp_fd = ansfd;
        q->resp_fd_len = an.fd_len;
        ansfd = -1;
    }
    goto done;
respawn:
    spawn(iso, i, &err); /* when it fails, the next request tries again */
done:
    if (ansfd >= 0)
        close(ansfd);
    free(body);
}

void sv_iso_stats(sv_iso *iso, sg_engine_stats *st, uint64_t restarts[SV_NRESTART], unsigned *running)
{
    unsigned i;

    pthread_mutex_lock(&iso->lock);
    if (st) {
        *st = iso->gone;
        st->contexts_idle = 0;
        for (i = 0; i < iso->n; i++)
            stats_add(st, &iso->kids[i].last, true);
    }
    if (running)
        *running = iso->running;
    pthread_mutex_unlock(&iso->lock);
    if (restarts)
        for (i = 0; i < SV_NRESTART; i++)
            restarts[i] = atomic_load(&iso->restarts[i]);
}

void sv_iso_free(sv_iso *iso)
{
    unsigned i;

    if (!iso)
        return;
    for (i = 0; i < iso->n; i++)
        if (iso->kids[i].pid && iso->kids[i].fd >= 0)
            shutdown(iso->kids[i].fd, SHUT_WR); /* all of them told first: they exit together */
    for (i = 0; i < iso->n; i++)
        retire(iso, i, true, NULL, SV_RESTART_EXIT, false);
    pthread_mutex_destroy(&iso->lock);
    free(iso->kids);
    free(iso);
}

/* ---- the solver process's side ----------------------------------------------------------------- */

/* The process's data segment now (VmData, bytes), or 0. */
static uint64_t vm_data(void)
{
    char line[256];
    unsigned long long kb = 0;
    FILE *f = fopen("/proc/self/status", "r");

    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb << 10;
}

/* Did request `q` fail for want of memory? Its answer says so: 503 out_of_memory, or Z3's
 * memory error in a message or a dim's reason. */
static bool out_of_memory(const sv_request *q)
{
    if (q->status == 503 && !strcmp(q->code, "out_of_memory"))
        return true;
    if (!q->resp || q->status == 400)
        return false;
    return strstr(q->resp, "out of memory") || strstr(q->resp, "memory exceeded")
           || strstr(q->resp, "max. memory") || strstr(q->resp, "std::bad_alloc");
}


/* Free a request the child built, with its body, answer and descriptors. */
static void free_request(sv_request *q)
{
    free(q->body);
    free(q->policy);
    free(q->resp);
    if (q->fd >= 0)
        close(q->fd);
    if (q->fd2 >= 0)
        close(q->fd2);
    if (q->resp_fd >= 0)
        close(q->resp_fd);
    free(q);
}

/* Answer `q` to the parent: 0 or -1. */
static int send_answer(int fd, const sv_request *q, const sg_engine *e)
{
    wire_ans an;

    memset(&an, 0, sizeof an);
    an.magic = WIRE_MAGIC;
    an.status = q->status;
    snprintf(an.code, sizeof an.code, "%s", q->code);
    snprintf(an.verdict, sizeof an.verdict, "%s", q->verdict ? q->verdict : "");
    snprintf(an.ctype, sizeof an.ctype, "%s", q->ctype ? q->ctype : "application/json");
    memcpy(an.extra_header, q->extra_header, sizeof an.extra_header);
    an.from_redis = q->from_redis;
    an.has_fd = q->resp_fd >= 0;
    an.fd_len = q->resp_fd_len;
    an.body_len = q->resp ? q->resp_len : 0;
    sg_engine_stats_get(e, &an.stats);
    if (send_msg(fd, &an, sizeof an, &q->resp_fd, an.has_fd ? 1 : 0) != 0)
        return -1;
    return send_msg(fd, q->resp, an.body_len, NULL, 0);
}

int sg_service_worker_main(int fd)
{
    sg_engine_options eo = SG_ENGINE_OPTIONS_INIT;
    sg_service_config dc = SG_SERVICE_CONFIG_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_service *s = NULL;
    sv_request *q = NULL;
    wire_init in;
    wire_ready rd;
    wire_req rq;
    int rc = 1, fds[2];
    unsigned nfds;

    memset(&rd, 0, sizeof rd);
    rd.magic = WIRE_MAGIC;
    if (recv_msg(fd, &in, sizeof in, NULL, 0, NULL, 0, NULL) != 0 || in.magic != WIRE_MAGIC)
        return 1;
    in.spool[sizeof in.spool - 1] = in.redis_url[sizeof in.redis_url - 1] = '\0';
    sg_service_tune_memory();
    if (!(s = calloc(1, sizeof *s))) {
        snprintf(rd.msg, sizeof rd.msg, "out of memory");
        goto fail;
    }
    s->cfg = dc;
    s->cfg.access_log = NULL;
    s->cfg.cache_entries = in.cache_entries;
    s->cfg.max_guards = in.max_guards;
    s->cfg.max_symbols = in.max_symbols;
    s->quiesced_fd = -1;
    snprintf(s->spool, sizeof s->spool, "%s", in.spool);
    /* packed archives are named by this counter in the shared spool folder: apart from the others' */
    atomic_init(&s->seq, (uint64_t)getpid() * 1000000000ull);
    pthread_mutex_init(&s->log_lock, NULL);
    eo.warm_contexts = 1;
    eo.cache_entries = in.cache_entries;
    if (sg_engine_new(&s->engine, &eo, &err) != 0
        || (in.redis_url[0] && sv_redis_new(&s->redis, in.redis_url, in.redis_ttl_s, &err) != 0)) {
        snprintf(rd.msg, sizeof rd.msg, "%.190s", err.msg);
        goto fail;
    }
    if (in.memory_mib) {
        /* the cap is on what the process adds to what it holds now (its code, Z3's tables, a
         * sanitizer's shadow): private writable memory, the heap and every anonymous mapping */
        uint64_t now = vm_data(), cap = (uint64_t)in.memory_mib << 20;
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = (rlim_t)(now + cap);
        if (!now || setrlimit(RLIMIT_DATA, &rl) != 0) {
            snprintf(rd.msg, sizeof rd.msg, "cannot set the memory cap: %s", now ? strerror(errno) : "no VmData");
            goto fail;
        }
    }
    if (send_msg(fd, &rd, sizeof rd, NULL, 0) != 0)
        goto done;
    for (;;) {
        const sv_route *route;
        int r = recv_msg(fd, &rq, sizeof rq, fds, 2, &nfds, 0, NULL);

        if (r != 0) {
            rc = 0; /* the service closed the socket: its end, or ours */
            break;
        }
        if (rq.magic != WIRE_MAGIC || !(route = sv_route_of((sv_route_id)rq.route)) || nfds != rq.nfds
            || rq.body_len > ((uint64_t)1 << 40) || rq.policy_len > SV_MAX_POLICY) {
            while (nfds > 0)
                close(fds[--nfds]);
            rc = 1;
            break;
        }
        if (!(q = calloc(1, sizeof *q)))
            goto oom;
        q->svc = s;
        q->route = route;
        q->fd = nfds > 0 ? fds[0] : -1;
        q->fd2 = nfds > 1 ? fds[1] : -1;
        q->resp_fd = -1;
        q->received = rq.received;
        memcpy(q->part_bytes, rq.part_bytes, sizeof q->part_bytes);
        memcpy(q->part_file, rq.part_file, sizeof q->part_file);
        q->part_file[0][sizeof q->part_file[0] - 1] = q->part_file[1][sizeof q->part_file[1] - 1] = '\0';
        q->opts = rq.opts;
        q->opts.cancel = NULL;
        if ((rq.body_len && !(q->body = malloc(rq.body_len + 1)))
            || (rq.policy_len && !(q->policy = malloc(rq.policy_len + 1))))
            goto oom;
        if (recv_msg(fd, q->body, rq.body_len, NULL, 0, NULL, 0, NULL) != 0
            || recv_msg(fd, q->policy, rq.policy_len, NULL, 0, NULL, 0, NULL) != 0)
            break;
        if (q->body)
            q->body[rq.body_len] = '\0';
        if (q->policy)
            q->policy[rq.policy_len] = '\0';
        q->len = rq.body_len;
        q->policy_len = rq.policy_len;
        sv_handle(q, s);
        if (out_of_memory(q))
            goto oom;
        if (send_answer(fd, q, s->engine) != 0)
            break;
        free_request(q);
        q = NULL;
    }
    goto done;
oom:
    /* an allocation failed (the memory cap): not answered, the service says why from the status */
    rc = SG_SERVICE_EXIT_MEMORY;
    _exit(rc); /* nothing of this heap is trusted to be freed */
fail:
    rd.failed = 1;
    send_msg(fd, &rd, sizeof rd, NULL, 0);
done:
    if (q)
        free_request(q);
    if (s) {
        sg_engine_free(s->engine);
        sv_redis_free(s->redis);
        pthread_mutex_destroy(&s->log_lock);
        free(s);
    }
    return rc;
}
