#!/usr/bin/env bash
# bench/serve.sh - `shapegate serve` under a real load generator (wrk, Debian package `wrk`):
# requests/s and latency percentiles for GET /healthz (the HTTP ceiling, no solving: the
# reference), a small POST /v1/check answered from the engine's cache, and the same check with
# the cache off (solved every time), each side by side with its ratio to the reference.
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
[ -x "$SG" ] && [ -x "$BUILD/tests/serve_traces" ] || { echo "serve.sh: build $SG and serve_traces first" >&2; exit 2; }

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

# start NAME OPTIONS...: a server on a free port; sets PORT
start() {
    local name=$1
    shift
    "$SG" serve --listen 127.0.0.1:0 --port-file "$WORK/$name.port" --no-access-log --threads "$(nproc)" "$@" \
        2>"$WORK/$name.log" &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$WORK/$name.port" ] && break; sleep 0.05; done
    PORT=$(cat "$WORK/$name.port")
}

# run LABEL URL [wrk options]: prints "LABEL req/s p50 p99" and sets RPS
run() {
    local label=$1 url=$2 out
    shift 2
    wrk -t1 -c"$CONNS" -d"${SECS}s" --latency "$@" "$url" >"$WORK/wrk.out" 2>&1 || true
    out=$WORK/wrk.out
    RPS=$(awk '/Requests\/sec/ {print $2}' "$out")
    local p50 p99 non2xx
    p50=$(awk '$1 == "50%" {print $2}' "$out")
    p99=$(awk '$1 == "99%" {print $2}' "$out")
    non2xx=$(awk '/Non-2xx/ {print $NF}' "$out")
    printf '%-34s %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$label" "$RPS" "$p50" "$p99" "${non2xx:-0}"
}

echo "shapegate serve: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (shared machine)"
echo "case $CASE, $CONNS connections, ${SECS}s each, wrk 1 thread"
start cached --cache 1024
run "GET /healthz (reference)" "http://127.0.0.1:$PORT/healthz"
REF=$RPS
run "POST /v1/check, cache hits" "http://127.0.0.1:$PORT/v1/check" -s "$WORK/post.lua"
HIT=$RPS
start cold --cache 0
run "POST /v1/check, no cache" "http://127.0.0.1:$PORT/v1/check" -s "$WORK/post.lua"
COLD=$RPS
awk -v r="$REF" -v h="$HIT" -v c="$COLD" 'BEGIN {
    printf "ratios to /healthz: cache hits %.3f, no cache %.3f; cache speed-up %.1fx\n", h / r, c / r, h / c }'
RSS=$(awk '/VmRSS/ {print $2}' "/proc/${PIDS[0]}/status")
echo "RSS of the cached server after its runs: $RSS kB"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
