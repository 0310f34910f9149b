#!/usr/bin/env bash
# bench/serve.sh - `shapegate serve` under a real load generator (wrk, Debian package `wrk`):
#   1. the in-process engine on the same trace (bench_engine: load + check + report JSON on
#      $(nproc) threads, no HTTP, no cache): the reference of the uncached path;
#   2. requests/s, latency percentiles and the server's CPU per request for GET /healthz (the
#      HTTP ceiling, no solving), a small POST /v1/check answered from the cache (the answer
#      cache by body bytes: no parse, no engine) and the same check with --cache 0 (parsed and
#      solved every time), with their ratios;
#   3. RSS of one server sampled every second over a soak of at least SG_BENCH_SOAK requests
#      (default 100000; cache hits and /healthz, the paths that allocate per request without
#      solving) and over an uncached run: start, end and max;
#   4. the same uncached check with --isolate (each worker's solving in its own child process,
#      docs/service.md "Isolation") against in-process, and the time to the 504 of an overrun Z3
#      ignores its interrupt in (tests/data/attacks/floor_chain.json, rlimit 0, timeout_ms 2000);
#   5. the same mix through nginx + 3 replicas + one redis-server (Debian's; skipped without them):
#      /healthz, cache hits, and the same check on 3 other replicas with --cache 0 (solved every time).
#
#   bench/serve.sh [BUILD_DIR] [SECONDS] [CONNECTIONS]     (defaults: build 10 32)
#
# The machine is shared: the figures are only as good as the load around them; the script
# prints the load average before and after. Server: --threads $(nproc) workers, 1 I/O thread;
# wrk: 1 thread (both on the same cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD=${1:-build}
SECS=${2:-10}
CONNS=${3:-32}
SG=$BUILD/shapegate
CASE=${SG_BENCH_CASE:-tests/corpus/cases/ok_add_shared_dim}
command -v wrk >/dev/null || { echo "serve.sh: wrk not found (apt-get install wrk)" >&2; exit 2; }
[ -x "$SG" ] && [ -x "$BUILD/tests/serve_traces" ] && [ -x "$BUILD/bench/bench_engine" ] ||
    { echo "serve.sh: build $SG, serve_traces and bench_engine first" >&2; exit 2; }
SOAK=${SG_BENCH_SOAK:-100000}

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
"$BUILD/tests/serve_traces" "$WORK" "$CASE"
BODY=$WORK/$(basename "$CASE").json
cat > "$WORK/post.lua" <<LUA
local f = assert(io.open("$BODY", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA

# start NAME OPTIONS...: a server on a free port; sets PORT and SPID
start() {
    local name=$1
    shift
    "$SG" serve --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --no-access-log --threads "$(nproc)" "$@" \
        2>"$WORK/$name.log" &
    SPID=$!
    PIDS+=($SPID)
    for _ in $(seq 200); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
    PORT=$(cat "$WORK/$name.port")
}

rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }

# sample PID FILE: RSS of PID every second into FILE until killed
sample() {
    while kill -0 "$1" 2>/dev/null; do rss "$1" >>"$2"; sleep 1; done
}

# rss_report LABEL FILE REQUESTS: start, end and max of the samples
rss_report() {
    awk -v l="$1" -v n="$3" 'NR == 1 {s = $1} {e = $1; if ($1 > m) m = $1}
        END {printf "%-34s %s requests: RSS start %d kB, end %d kB, max %d kB (%d samples)\n", l, n, s, e, m, NR}' "$2"
}

# requests in the last wrk output
reqs() { awk '/requests in/ {print $1}' "$WORK/wrk.out"; }

# CPU seconds (user + system) the process PID and its children (--isolate's solver processes) have
# used so far
cpu_s() {
    local p
    for p in "$1" $(pgrep -P "$1" || true); do cat "/proc/$p/stat" 2>/dev/null || true; done |
        awk -v hz="$(getconf CLK_TCK)" '{s += $14 + $15} END {print s / hz}'
}

# run LABEL URL [wrk options]: prints "LABEL req/s p50 p99" (and, with CPU_PID set, the CPU ms that
# process spent per request: a figure the load around it disturbs less than req/s) and sets RPS
run() {
    local label=$1 url=$2 out c0 c1 per=""
    shift 2
    [ -n "${CPU_PID:-}" ] && c0=$(cpu_s "$CPU_PID")
    wrk -t1 -c"$CONNS" -d"${SECS}s" --latency "$@" "$url" >"$WORK/wrk.out" 2>&1 || true
    out=$WORK/wrk.out
    if [ -n "${CPU_PID:-}" ]; then
        c1=$(cpu_s "$CPU_PID")
        per=$(awk -v a="$c0" -v b="$c1" -v n="$(reqs)" 'BEGIN {if (n > 0) printf "   server CPU %.3f ms/req", (b - a) * 1000 / n}')
    fi
    RPS=$(awk '/Requests\/sec/ {print $2}' "$out")
    local p50 p99 non2xx
    p50=$(awk '$1 == "50%" {print $2}' "$out")
    p99=$(awk '$1 == "99%" {print $2}' "$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' "$out")
    printf '%-34s %10s req/s   p50 %8s   p99 %8s   non-2xx %s%s\n' "$label" "$RPS" "$p50" "$p99" "${non2xx:-0}" "$per"
}

echo "shapegate serve: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared machine)"
echo "case $CASE, $CONNS connections, ${SECS}s each, wrk 1 thread"
"$BUILD/bench/bench_engine" "$BODY" "$(nproc)" "$SECS" | tee "$WORK/engine.out"
ENGINE=$(awk '{for (i = 1; i <= NF; i++) if ($(i + 1) == "checks/s,") print $i}' "$WORK/engine.out")
start cached --cache 1024
CPU_PID=$SPID
run "GET /healthz (reference)" "http://127.0.0.1:$PORT/healthz"
REF=$RPS
run "POST /v1/check, cache hits" "http://127.0.0.1:$PORT/v1/check" -s "$WORK/post.lua"
HIT=$RPS
start cold --cache 0
CPU_PID=$SPID
run "POST /v1/check, no cache" "http://127.0.0.1:$PORT/v1/check" -s "$WORK/post.lua"
COLD=$RPS
CPU_PID=""
awk -v r="$REF" -v h="$HIT" -v c="$COLD" -v e="$ENGINE" 'BEGIN {
    printf "ratios to /healthz: cache hits %.3f, no cache %.3f; cache speed-up %.1fx\n", h / r, c / r, h / c
    printf "no cache against the in-process engine: %.2f (1.00: HTTP costs nothing next to solving)\n", c / e }'
COLD_PID=$SPID
start isolated --cache 0 --isolate
CPU_PID=$SPID
run "POST /v1/check, no cache, --isolate" "http://127.0.0.1:$PORT/v1/check" -s "$WORK/post.lua"
CPU_PID=""
awk -v c="$COLD" -v i="$RPS" 'BEGIN { printf "--isolate against in-process (no cache): %.2f\n", i / c }'
curl -s -o /dev/null -w "overrun with --isolate (floor_chain, rlimit 0, timeout_ms 2000): %{http_code} after %{time_total} s\n" \
    -H 'Content-Type: application/json' --data-binary @tests/data/attacks/floor_chain.json \
    "http://127.0.0.1:$PORT/v1/check?rlimit=0&timeout_ms=2000"
curl -s -o /dev/null -w "the next check on the same server: %{http_code} after %{time_total} s (a new process)\n" \
    -H 'Content-Type: application/json' --data-binary @"$BODY" "http://127.0.0.1:$PORT/v1/check"

# RSS: the cached server over >= SOAK requests (cache hits and /healthz), sampled every second
CACHED_PID=${PIDS[0]}
CACHED_PORT=$(cat "$WORK/cached.port")
: >"$WORK/rss.cached"
sample "$CACHED_PID" "$WORK/rss.cached" &
SAMPLER=$!
total=0
while [ "$total" -lt "$SOAK" ]; do
    wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$WORK/post.lua" "http://127.0.0.1:$CACHED_PORT/v1/check" >"$WORK/wrk.out" 2>&1 || true
    total=$((total + $(reqs)))
    wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$CACHED_PORT/healthz" >"$WORK/wrk.out" 2>&1 || true
    total=$((total + $(reqs)))
done
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
rss_report "cached server (hits + /healthz)" "$WORK/rss.cached" "$total"
# and the uncached one over one more run of solving
: >"$WORK/rss.cold"
sample "$COLD_PID" "$WORK/rss.cold" &
SAMPLER=$!
COLD_PORT=$(cat "$WORK/cold.port")
wrk -t1 -c"$CONNS" -d"$((SECS * 3))s" -s "$WORK/post.lua" "http://127.0.0.1:$COLD_PORT/v1/check" >"$WORK/wrk.out" 2>&1 || true
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
rss_report "uncached server (solving)" "$WORK/rss.cold" "$(reqs) more"

# nginx + 3 replicas (--threads 1 each) + redis-server, as tests/test_serve_scale.py runs them
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
REDIS=$(command -v redis-server || true)
if [ -x "$NGINX" ] && [ -n "$REDIS" ]; then
    free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
    RPORT=$(free_port)
    "$REDIS" --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
    PIDS+=($!)
    servers=""
    cold=""
    for i in 1 2 3; do
        "$SG" serve --listen 127.0.0.1:0 --port-file "$WORK/r$i.port" --no-access-log --threads 1 --cache 1024 \
            --redis "redis://127.0.0.1:$RPORT" 2>"$WORK/r$i.log" &
        PIDS+=($!)
        # and the same without any cache, for the solving path through nginx
        "$SG" serve --listen 127.0.0.1:0 --port-file "$WORK/c$i.port" --no-access-log --threads 1 --cache 0 \
            2>"$WORK/c$i.log" &
        PIDS+=($!)
    done
    for i in 1 2 3; do
        for _ in $(seq 200); do [ -s "$WORK/r$i.port" ] && [ -s "$WORK/c$i.port" ] && break; sleep 0.05; done
        servers="$servers        server 127.0.0.1:$(cat "$WORK/r$i.port") max_fails=1 fail_timeout=30s;
"
        cold="$cold        server 127.0.0.1:$(cat "$WORK/c$i.port") max_fails=1 fail_timeout=30s;
"
    done
    NPORT=$(free_port)
    mkdir -p "$WORK/ng"
    cat >"$WORK/ng/nginx.conf" <<NGINX
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 2;
pid $WORK/ng/nginx.pid;
error_log $WORK/ng/error.log warn;
daemon off;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $WORK/ng/body;
    proxy_temp_path $WORK/ng/proxy;
    fastcgi_temp_path $WORK/ng/fastcgi;
    uwsgi_temp_path $WORK/ng/uwsgi;
    scgi_temp_path $WORK/ng/scgi;
    client_max_body_size 64m;
    upstream shapegate {
$servers        keepalive 16;
    }
    upstream cold {
$cold        keepalive 16;
    }
    server {
        listen 127.0.0.1:$NPORT;
        location /cold/ {
            proxy_pass http://cold/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout;
        }
        location / {
            proxy_pass http://shapegate;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout;
        }
    }
}
NGINX
    "$NGINX" -p "$WORK/ng" -c "$WORK/ng/nginx.conf" 2>"$WORK/ng/stderr" &
    NGPID=$!
    PIDS+=($NGPID)
    for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$NPORT/healthz" && break; sleep 0.05; done
    echo "nginx (2 workers) + 3 replicas (--threads 1) + redis-server, all on the same $(nproc) cores:"
    run "  GET /healthz via nginx" "http://127.0.0.1:$NPORT/healthz"
    NREF=$RPS
    run "  POST /v1/check via nginx (hits)" "http://127.0.0.1:$NPORT/v1/check" -s "$WORK/post.lua"
    NHIT=$RPS
    run "  POST /v1/check via nginx, no cache" "http://127.0.0.1:$NPORT/cold/v1/check" -s "$WORK/post.lua"
    awk -v r="$NREF" -v h="$NHIT" -v d="$HIT" -v c="$RPS" -v dc="$COLD" 'BEGIN {
        printf "  ratios: hits to /healthz via nginx %.3f; via nginx to one server direct: hits %.3f, no cache %.3f\n",
               h / r, h / d, c / dc }'
    kill -QUIT "$NGPID" 2>/dev/null || true
else
    echo "nginx or redis-server not installed: the replica run skipped"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
