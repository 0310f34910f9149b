#!/usr/bin/env bash
# gate.sh - `shapegate gate` on the 48-layer pair (tests/data/gate/deep48-2.14, real torch 2.14:
# 48 blocks, NEW's block 40 needs seq even): archives, traces and a mix, each timed as the median
# of N runs of the CLI (process start, both inputs read, both domains, the Z3 queries, the report).
# Reference, side by side: `shapegate inspect` of both archives (reading only), and the issue's
# budget of 1 s. Usage: bench/gate.sh [SHAPEGATE] [N]. Wall-clock: noisy on a loaded machine.
set -euo pipefail
SG=${1:-build/shapegate}
N=${2:-9}
D=$(dirname "$0")/../tests/data/gate/deep48-2.14

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # run CMD...: median seconds of N runs
    local i t0 t1
    for ((i = 0; i < N; i++)); do
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || true
        t1=$(date +%s.%N)
        echo "$t1 - $t0" | bc -l
    done | median
}
read_s=$(run sh -c "'$SG' inspect '$D/old.pt2' && '$SG' inspect '$D/new.pt2'")
printf '%-34s %8s %10s %10s\n' "gate of deep48-2.14 (median of $N)" seconds "x read" "x 1 s"
printf '%-34s %8.3f %10s %10s\n' "reference: inspect both archives" "$read_s" 1.00 "$(printf '%.2f' "$read_s")"
for kind in "archives:old.pt2:new.pt2" "traces:old.trace.json:new.trace.json" "mixed:old.pt2:new.trace.json" \
            "archives --emit (serving bounds):old.pt2:new.pt2:--emit=tensorrt"; do
    IFS=: read -r name o n extra <<<"$kind"
    s=$(run "$SG" gate ${extra:+$extra} "$D/$o" "$D/$n")
    printf '%-34s %8.3f %10.2f %10.2f\n' "$name" "$s" "$(echo "$s / $read_s" | bc -l)" "$s"
done
