#!/usr/bin/env bash
# long.sh - a long libFuzzer run of one target, outside CI (docs/robustness.md, "Results").
#
#   fuzz/long.sh TARGET RUNS [CORPUS_DIR]
#
# Builds the targets in build-fuzz/ (ASan+UBSan, as the smoke run; with SG_FUZZ_SANITIZERS=undefined
# in the environment, UBSan only in build-fuzz-undefined/, 3-4 times faster; with
# SG_FUZZ_INTERCEPTORS=OFF too, without libFuzzer's strcmp interceptors, fuzz/CMakeLists.txt), makes
# the seed corpora if they are missing, then runs fuzz_TARGET for RUNS executions at the lowest
# priority on one core,
# growing CORPUS_DIR (default build-fuzz/corpus/TARGET; keep it outside the tree to carry it
# across runs). Crashing inputs go to build-fuzz/artifacts/TARGET/ and the run stops there (add
# the input to tests/data/regress/TARGET/ with its fix, then run again: the corpus is kept). At
# the end it prints libFuzzer's final statistics and the coverage of the whole corpus (a -runs=0
# replay), the figures the Results table records. The log is build-fuzz/long_TARGET.log.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 TARGET RUNS [CORPUS_DIR]" >&2; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B="$ROOT/build-fuzz"
[ -z "${SG_FUZZ_SANITIZERS:-}" ] || B="$ROOT/build-fuzz-${SG_FUZZ_SANITIZERS//,/-}"
T=$1
RUNS=$2
# shellcheck source=fuzz/common.sh
. "$ROOT/fuzz/common.sh"
case " $FUZZ_TARGETS " in *" $T "*) ;; *) echo "$0: unknown target '$T' ($FUZZ_TARGETS)" >&2; exit 2 ;; esac
case "$RUNS" in '' | *[!0-9]*) echo "$0: RUNS must be a number, not '$RUNS'" >&2; exit 2 ;; esac
CORPUS=${3:-$B/corpus/$T}

fuzz_build >/dev/null
[ -d "$B/seeds/$T" ] || "$ROOT/fuzz/make_seeds.sh" "$B" "$B/seeds"
mkdir -p "$CORPUS" "$B/artifacts/$T"
mapfile -t opts < <(fuzz_opts "$T")
log="$B/long_$T.log"
start=$(date +%s)
status=0
nice -n 19 "$B/fuzz/fuzz_$T" "$CORPUS" "$B/seeds/$T" "${opts[@]}" -runs="$RUNS" -print_final_stats=1 \
    -artifact_prefix="$B/artifacts/$T/" >"$log" 2>&1 || status=$?
secs=$(($(date +%s) - start))
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" || true
echo "fuzz_$T: exit $status after $secs s; log $log"
cov=$("$B/fuzz/fuzz_$T" "$CORPUS" "${opts[@]}" -runs=0 2>&1 | grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' | tail -1)
echo "fuzz_$T: corpus replay: $cov"
exit $status
