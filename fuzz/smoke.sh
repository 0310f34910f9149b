#!/usr/bin/env bash
# smoke.sh - CI smoke run of the libFuzzer targets (docs/robustness.md).
#
#   fuzz/smoke.sh [SECONDS]
#
# Configures a clang build with -DSG_FUZZ=ON in build-fuzz/, builds the targets, makes the
# seed corpora (fuzz/make_seeds.sh) and runs each target for SECONDS (default 20) on them.
# Fails when a target crashes, leaks, times out on one input or breaks a property; the
# crashing input is left in build-fuzz/artifacts/<target>/ — commit it under
# tests/data/regress/<target>/ once fixed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=${1:-20}
B="$ROOT/build-fuzz"
JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }

say "building fuzz targets in $B"
CC=clang cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_FUZZ=ON \
    -DBUILD_TESTING=OFF >/dev/null
cmake --build "$B" -j "$JOBS" --target fuzz_expr fuzz_trace fuzz_archive fuzz_check fuzz_spec fuzz_dir \
    trace_seeds
"$ROOT/fuzz/make_seeds.sh" "$B" "$B/seeds"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
passed=0
failed=0
for t in expr trace archive check spec dir; do
    work="$B/corpus/$t"
    art="$B/artifacts/$t/"
    mkdir -p "$work" "$art"
    dict=()
    maxlen=4096
    [ "$t" = expr ] && dict=(-dict="$ROOT/fuzz/expr.dict")
    [ "$t" = archive ] && maxlen=65536
    [ "$t" = dir ] && maxlen=65536
    [ "$t" = spec ] && dict=(-dict="$ROOT/fuzz/spec.dict")
    say "fuzz_$t for ${SECS}s"
    if ! "$B/fuzz/fuzz_$t" "$work" "$B/seeds/$t" "${dict[@]}" -max_total_time="$SECS" \
            -rss_limit_mb=2048 -timeout=10 -max_len=$maxlen -print_final_stats=1 \
            -artifact_prefix="$art" >"$B/fuzz_$t.log" 2>&1; then
        echo "fuzz_$t FAILED; tail of $B/fuzz_$t.log:" >&2
        tail -40 "$B/fuzz_$t.log" >&2
        status=1
        failed=$((failed + 1))
    else
        grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov: ' "$B/fuzz_$t.log" | tail -3
        passed=$((passed + 1))
    fi
done
echo "fuzz_smoke: $passed passed, $failed failed"
exit $status
