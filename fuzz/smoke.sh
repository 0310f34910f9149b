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

say() { printf '==> %s\n' "$*"; }

# shellcheck source=fuzz/common.sh
. "$ROOT/fuzz/common.sh"

say "building fuzz targets in $B"
fuzz_build
"$ROOT/fuzz/make_seeds.sh" "$B" "$B/seeds"

status=0
passed=0
failed=0
for t in $FUZZ_TARGETS; do
    work="$B/corpus/$t"
    art="$B/artifacts/$t/"
    mkdir -p "$work" "$art"
    mapfile -t opts < <(fuzz_opts "$t")
    say "fuzz_$t for ${SECS}s"
    if ! "$B/fuzz/fuzz_$t" "$work" "$B/seeds/$t" "${opts[@]}" -max_total_time="$SECS" \
            -print_final_stats=1 -artifact_prefix="$art" >"$B/fuzz_$t.log" 2>&1; then
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
