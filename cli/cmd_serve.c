/*
 * cmd_serve.c - `shapegate serve`: run the HTTP service (service/service.h,
 * docs/service.md) until SIGTERM or SIGINT, then drain the requests in flight
 * and exit 0.
 *
 * Signals are blocked in every thread and taken here with sigwait(), so that
 * no library or libmicrohttpd thread is interrupted; SIGPIPE is ignored (a
 * client that goes away is libmicrohttpd's to notice, not a reason to die).
 */
#define _POSIX_C_SOURCE 200809L /* sigwait, pthread_sigmask */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "service/service.h"

#define CMD "serve"

enum {
    OPT_LISTEN = 256, OPT_THREADS, OPT_IO_THREADS, OPT_MAX_BODY, OPT_CACHE, OPT_MAX_QUEUE, OPT_MAX_CONN,
    OPT_IDLE, OPT_MAX_GUARDS, OPT_MAX_SYMBOLS, OPT_NO_LOG, OPT_DRAIN, OPT_PORT_FILE, OPT_MAX_BUFFERED,
    OPT_REDIS, OPT_REDIS_TTL, OPT_CONFIG, OPT_LOG, OPT_ISOLATE, OPT_WORKER_MEMORY
};

typedef struct serve_args {
    sg_service_config cfg;
    char host[64];
    unsigned drain_ms;
    const char *port_file;
    const char *log_path;
    char **strings;          /* the config file's values, which the options point into */
    size_t nstrings;
} serve_args;

/* An option of `serve`; a number says where it goes in serve_args and its bounds. */
typedef struct serve_opt {
    sg_cli_opt opt;
    enum { OTHER, NUM_UNSIGNED, NUM_SIZE } num;
    size_t field;                  /* offsetof(serve_args, ...) of a number */
    unsigned long long min, max;
    bool suffix;                   /* a K, M or G suffix is read (sizes in bytes) */
} serve_opt;

#define U(f, lo, hi) NUM_UNSIGNED, offsetof(serve_args, f), lo, hi, false
#define BYTES(f, lo) NUM_SIZE, offsetof(serve_args, f), lo, SIZE_MAX, true
#define COUNT(f, lo, hi) NUM_SIZE, offsetof(serve_args, f), lo, hi, false

static const serve_opt serve_opts[] = {
    {{"listen", OPT_LISTEN, true, false,
      "--listen ADDR:PORT   where to listen (default 127.0.0.1:8080; [::1]:8080 for IPv6;\n"
      "                     port 0: any free port, see --port-file)"}, OTHER, 0, 0, 0, false},
    {{"threads", OPT_THREADS, true, false, "--threads N          solver workers, one warm Z3 context each (default 2)"},
     U(cfg.threads, 1, 256)},
    {{"io-threads", OPT_IO_THREADS, true, false, "--io-threads N       threads moving bytes (default 1)"},
     U(cfg.io_threads, 1, 64)},
    {{"max-body", OPT_MAX_BODY, true, false,
      "--max-body BYTES     largest request body, e.g. 1048576, 64M (default 64M): 413 above"}, BYTES(cfg.max_body, 1)},
    {{"timeout", SG_CLI_KEY_TIMEOUT, true, false,
      "--timeout MS         solving budget of one request (default 30000; 0: none): 504 past it"},
     U(cfg.timeout_ms, 0, 86400000)},
    {{"cache", OPT_CACHE, true, false,
      "--cache N            answers and reports kept for repeated requests (default 1024; 0: none)"},
     U(cfg.cache_entries, 0, 1000000)},
    {{"max-queue", OPT_MAX_QUEUE, true, false, "--max-queue N        requests waiting for a worker (default 64): 429 beyond"},
     U(cfg.max_queue, 1, 1000000)},
    {{"max-connections", OPT_MAX_CONN, true, false, "--max-connections N  open connections at once (default 1024)"},
     U(cfg.max_connections, 1, 100000)},
    {{"idle-timeout", OPT_IDLE, true, false, "--idle-timeout S     close a connection silent for S seconds (default 15)"},
     U(cfg.idle_timeout_s, 1, 86400)},
    {{"max-buffered", OPT_MAX_BUFFERED, true, false,
      "--max-buffered BYTES JSON bodies held in memory at once, all requests (default 512M): 503 beyond"},
     BYTES(cfg.max_buffered, 0)},
    {{"max-guards", OPT_MAX_GUARDS, true, false, "--max-guards N       guards in one trace (default 100000): 413 beyond"},
     COUNT(cfg.max_guards, 1, 100000000)},
    {{"max-symbols", OPT_MAX_SYMBOLS, true, false,
      "--max-symbols N      symbols in one trace (default 100000): 413 beyond"}, COUNT(cfg.max_symbols, 1, 100000000)},
    {{"isolate", OPT_ISOLATE, false, false,
      "--isolate            solve in one child process per worker: killed at the budget plus\n"
      "                     a grace (504 timeout) or when it dies (503 worker_failed), and\n"
      "                     replaced (docs/service.md, \"Isolation\"); default: in-process"}, OTHER, 0, 0, 0, false},
    {{"worker-memory", OPT_WORKER_MEMORY, true, false,
      "--worker-memory MIB  with --isolate: memory a solver process may add after its start\n"
      "                     (default 0: no cap); past it the request gets 503 worker_failed"},
     U(cfg.worker_memory_mib, 0, 1048576)},
    {{"redis", OPT_REDIS, true, false,
      "--redis URL          share answers with other replicas through Redis (redis://HOST[:PORT][/DB]);\n"
      "                     without Redis reachable the service solves every request itself"}, OTHER, 0, 0, 0, false},
    {{"redis-ttl", OPT_REDIS_TTL, true, false,
      "--redis-ttl S        how long Redis keeps an answer (default 86400; 0: no expiry)"},
     U(cfg.redis_ttl_s, 0, 100000000)},
    {{"drain-timeout", OPT_DRAIN, true, false,
      "--drain-timeout MS   at SIGTERM, wait this long for requests in flight (default 30000)"},
     U(drain_ms, 0, 86400000)},
    {{"port-file", OPT_PORT_FILE, true, false, "--port-file FILE     write the port listened on to FILE once listening"},
     OTHER, 0, 0, 0, false},
    {{"log", OPT_LOG, true, false,
      "--log FILE           the JSON access log (appended; SIGHUP reopens it, for logrotate);\n"
      "                     default stderr"}, OTHER, 0, 0, 0, false},
    {{"no-access-log", OPT_NO_LOG, false, false, "--no-access-log      no JSON access log lines"}, OTHER, 0, 0, 0, false},
    {{"config", OPT_CONFIG, true, false,
      "--config FILE        options from FILE first, one 'name = value' a line (the long\n"
      "                     names above; '#' comments; 'no-access-log = true'); the\n"
      "                     command line overrides them"}, OTHER, 0, 0, 0, false},
};
#define NOPTS (sizeof serve_opts / sizeof serve_opts[0])

#undef U
#undef BYTES
#undef COUNT

static const sg_cli_spec serve_spec = {
    CMD,
    "usage: shapegate serve [options]\n"
    "\n"
    "Serve shapegate over HTTP: POST /v1/check and /v1/spec take a JSON trace, POST\n"
    "/v1/archives/inspect, /verify and /pack a .pt2 archive, POST /v1/gate two (form\n"
    "parts old and new); GET /healthz, /readyz, /metrics, /v1/version and\n"
    "/v1/openapi.json (docs/service.md). One JSON access log\n"
    "line per request on stderr or --log FILE. SIGTERM or SIGINT: drain, then exit 0;\n"
    "SIGHUP: reopen --log FILE.\n"
    "\n"
    "Options:\n",
    NULL, /* sg_cmd_serve's copy has serve_opts' sg_cli_opt, with --help */
    "\n"
    "Exit: 0 after a signal, 2 usage or a bad --config file, 3 cannot listen or open\n"
    "      the log, 5 internal error.\n",
    false,
    NULL,
};

/* "FILE:LINE: " while the options of a --config file are read, for the one-line errors */
static char where[320];

/* A usage error (exit 2) naming where the option came from. */
static int serve_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int serve_usage(const char *fmt, ...)
{
    char msg[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sg_cli_usage_error(CMD, "%s%s", where, msg);
}

/* A non-negative integer of at most `max`, with an optional K/M/G suffix when `suffix`. */
static int read_count(const char *opt, const char *arg, unsigned long long max, bool suffix,
                      unsigned long long *out)
{
    char *end;
    unsigned long long v, mul = 1;

    errno = 0;
    if (!arg || *arg < '0' || *arg > '9')
        goto bad;
    v = strtoull(arg, &end, 10);
    if (suffix && *end && !end[1]) {
        mul = *end == 'K' || *end == 'k' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : *end == 'G' ? 1ull << 30 : 0;
        if (mul)
            end++;
    }
    if (errno || *end || !mul || v > max / mul)
        goto bad;
    *out = v * mul;
    return -1;
bad:
    return serve_usage("option '--%s' takes an integer up to %llu%s, not '%s'", opt, max,
                              suffix ? " (K, M, G suffixes)" : "", arg ? arg : "");
}

static int read_listen(serve_args *a, const char *arg)
{
    const char *colon;
    unsigned long long port;
    size_t n;
    int rc;

    if (arg[0] == '[') {
        const char *close = strchr(arg, ']');
        if (!close || close[1] != ':')
            return serve_usage("--listen '%s': expected [ADDR]:PORT", arg);
        n = (size_t)(close - arg - 1);
        colon = close + 1;
        arg++;
    } else {
        if (!(colon = strrchr(arg, ':')))
            return serve_usage("--listen '%s': expected ADDR:PORT", arg);
        n = (size_t)(colon - arg);
    }
    if (n == 0 || n >= sizeof a->host)
        return serve_usage("--listen: no address or one too long");
    memcpy(a->host, arg, n);
    a->host[n] = '\0';
    if ((rc = read_count("listen", colon + 1, 65535, false, &port)) >= 0)
        return rc;
    a->cfg.host = a->host;
    a->cfg.port = (unsigned)port;
    return -1;
}

static int on_serve_opt(int key, const char *arg, void *ctx)
{
    serve_args *a = ctx;
    const serve_opt *o;
    unsigned long long v = 0;
    int rc;

    switch (key) {
    case OPT_LISTEN: return read_listen(a, arg);
    case OPT_NO_LOG: a->cfg.access_log = NULL; return -1;
    case OPT_PORT_FILE: a->port_file = arg; return -1;
    case OPT_LOG: a->log_path = arg; return -1;
    case OPT_CONFIG: return -1; /* read before the command line (read_config) */
    case OPT_REDIS: a->cfg.redis_url = arg; return -1;
    case OPT_ISOLATE: a->cfg.isolate = true; return -1;
    default: break;
    }
    for (o = serve_opts; o < serve_opts + NOPTS && o->opt.key != key; o++)
        ;
    if (o == serve_opts + NOPTS || o->num == OTHER)
        return -1;
    if ((rc = read_count(o->opt.name, arg, o->max, o->suffix, &v)) >= 0)
        return rc;
    if (v < o->min)
        return serve_usage("option '--%s' must be at least %llu", o->opt.name, o->min);
    if (o->num == NUM_SIZE)
        *(size_t *)((char *)a + o->field) = (size_t)v;
    else
        *(unsigned *)((char *)a + o->field) = (unsigned)v;
    return -1;
}

/* Trim the blanks around `s` in place. */
static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

/* A string the options keep pointing to (a->strings, freed at the end); NULL when out of memory. */
static char *keep(serve_args *a, const char *s)
{
    char **ns, *d;

    if (!(d = strdup(s)) || !(ns = realloc(a->strings, (a->nstrings + 1) * sizeof *ns))) {
        free(d);
        return NULL;
    }
    a->strings = ns;
    a->strings[a->nstrings++] = d;
    return d;
}

/*
 * The options of the --config file `path`, read into `a` as the command line's are: -1 when all
 * were read, else an exit code after a one-line error naming FILE:LINE.
 */
static int read_config(serve_args *a, const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    unsigned lineno = 0;
    int rc = -1;

    if (!f)
        return serve_usage("--config %s: %s", path, strerror(errno));
    while (rc < 0 && (len = getline(&line, &cap, f)) >= 0) {
        const sg_cli_opt *o = NULL;
        char *eq, *name, *value, *text;
        size_t k;

        snprintf(where, sizeof where, "%.260s:%u: ", path, ++lineno);
        if (strlen(line) != (size_t)len) {
            rc = serve_usage("a NUL byte");
            break;
        }
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        text = trim(line);
        if (!*text || *text == '#')
            continue;
        if (!(eq = strchr(text, '='))) {
            rc = serve_usage("expected 'name = value', not '%.80s'", text);
            break;
        }
        *eq = '\0';
        name = trim(text);
        value = trim(eq + 1);
        for (k = 0; k < NOPTS && !o; k++)
            if (strcmp(serve_opts[k].opt.name, name) == 0)
                o = &serve_opts[k].opt;
        if (!o || o->key == OPT_CONFIG) {
            rc = serve_usage("'%.80s' is not an option of shapegate serve", name);
        } else if (!o->arg) {
            if (strcmp(value, "true") && strcmp(value, "false"))
                rc = serve_usage("'%s' takes true or false, not '%.80s'", name, value);
            else if (!strcmp(value, "true"))
                rc = on_serve_opt(o->key, NULL, a);
        } else if (!*value) {
            rc = serve_usage("'%s' has no value", name);
        } else if (!(value = keep(a, value))) {
            sg_cli_errorf(CMD, "%s: out of memory", path);
            rc = SG_EXIT_INTERNAL;
        } else {
            rc = on_serve_opt(o->key, value, a);
        }
    }
    if (rc < 0 && ferror(f))
        rc = serve_usage("cannot read: %s", strerror(errno));
    where[0] = '\0';
    free(line);
    fclose(f);
    return rc;
}

/* The --config FILE of the command line (the last one), or NULL (a --config without its value is
 * left to the option parser's error). */
static const char *config_arg(int argc, char **argv)
{
    const char *path = NULL;
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "--config")) {
            if (i + 1 == argc)
                return NULL;
            path = argv[++i];
        } else if (!strncmp(argv[i], "--config=", 9)) {
            path = argv[i] + 9;
        }
    }
    return path;
}

/* Open the --log file for appending (one-line error and NULL when it cannot be). */
static FILE *open_log(const char *path)
{
    FILE *f = fopen(path, "a");

    if (!f)
        sg_cli_errorf(CMD, "--log %s: %s", path, strerror(errno));
    else
        setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

int sg_cmd_serve(int argc, char **argv)
{
    sg_service_config defaults = SG_SERVICE_CONFIG_INIT;
    sg_error err = SG_ERROR_INIT;
    sg_service *s = NULL;
    serve_args a;
    sigset_t sigs;
    const char *config;
    FILE *log = NULL, *info = stderr;
    sg_cli_opt opts[NOPTS + 2];
    sg_cli_spec spec = serve_spec;
    unsigned left;
    size_t k;
    int rc, sig = 0;

    for (k = 0; k < NOPTS; k++)
        opts[k] = serve_opts[k].opt;
    opts[k++] = (sg_cli_opt)SG_CLI_OPT_HELP;
    opts[k] = (sg_cli_opt)SG_CLI_OPT_END;
    spec.opts = opts;
    memset(&a, 0, sizeof a);
    a.cfg = defaults;
    a.cfg.access_log = stderr;
    a.drain_ms = 30000;
    /* the config file first, so that the command line overrides it */
    config = config_arg(argc, argv);
    if (config && (rc = read_config(&a, config)) >= 0)
        goto done;
    if ((rc = sg_cli_parse(&spec, argc, argv, on_serve_opt, &a)) >= 0)
        goto done;
    if (optind != argc) {
        rc = serve_usage("unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (a.cfg.worker_memory_mib && !a.cfg.isolate) {
        rc = serve_usage("--worker-memory needs --isolate (a cap per solver process)");
        goto done;
    }
    if (a.log_path && a.cfg.access_log) {
        if (!(log = open_log(a.log_path))) {
            rc = SG_EXIT_INPUT;
            goto done;
        }
        a.cfg.access_log = info = log;
    }

    /* before any thread exists: the signals go to sigwait() below only */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    sg_service_tune_memory();
    if ((rc = sg_service_start(&s, &a.cfg, &err)) != 0) {
        sg_cli_errorf(CMD, "%s", err.msg);
        rc = rc == SG_EINVALID || rc == SG_EIO ? SG_EXIT_INPUT : SG_EXIT_INTERNAL;
        goto done;
    }
    fprintf(info, "{\"level\": \"info\", \"message\": \"listening\", \"address\": \"%s\", \"port\": %u, "
            "\"threads\": %u, \"isolate\": %s, \"version\": \"%s\"}\n", a.cfg.host, sg_service_port(s), a.cfg.threads,
            a.cfg.isolate ? "true" : "false", sg_version());
    fflush(info);
    if (a.port_file) {
        char tmp[PATH_MAX];
        FILE *f;
        snprintf(tmp, sizeof tmp, "%s.tmp", a.port_file);
        if (!(f = fopen(tmp, "w")) || fprintf(f, "%u\n", sg_service_port(s)) < 0 || fclose(f) != 0
            || rename(tmp, a.port_file) != 0) {
            sg_cli_errorf(CMD, "%s: %s", a.port_file, strerror(errno));
            rc = SG_EXIT_INTERNAL;
            goto done;
        }
    }
    for (;;) {
        if (sigwait(&sigs, &sig) != 0)
            continue;
        if (sig != SIGHUP)
            break;
        /* SIGHUP: the --log file again by its name (logrotate moved the old one away); the old
         * stream is closed once no thread writes to it. Without --log: nothing to reopen. */
        if (log) {
            FILE *nl = fopen(a.log_path, "a");
            if (!nl) {
                fprintf(log, "{\"level\": \"error\", \"message\": \"cannot reopen the log\", \"error\": \"%s\"}\n",
                        strerror(errno));
                fflush(log);
                continue;
            }
            setvbuf(nl, NULL, _IOFBF, 1 << 16);
            fclose(sg_service_set_log(s, nl));
            info = log = nl;
            fprintf(info, "{\"level\": \"info\", \"message\": \"log reopened\"}\n");
            fflush(info);
        }
    }
    fprintf(info, "{\"level\": \"info\", \"message\": \"draining\", \"signal\": %d}\n", sig);
    fflush(info);
    left = sg_service_drain(s, a.drain_ms);
    sg_service_free(s);
    s = NULL;
    fprintf(info, "{\"level\": \"info\", \"message\": \"stopped\", \"abandoned\": %u}\n", left);
    rc = SG_EXIT_OK;
done:
    sg_service_free(s);
    if (log)
        fclose(log);
    while (a.nstrings > 0)
        free(a.strings[--a.nstrings]);
    free(a.strings);
    return rc;
}

int sg_cmd_serve_worker(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    /* started by `serve --isolate` (service/isolate.c) with its socket as descriptor 3; not for people */
    return sg_service_worker_main(3);
}
