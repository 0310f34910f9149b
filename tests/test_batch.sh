#!/usr/bin/env bash
# test_batch.sh - `shapegate check --json INPUT...` on worker processes (cli/check_batch.c,
# docs/cli.md): the output of --jobs 1, 2, 3 and more jobs than inputs is the same byte for byte
# (the "seconds" fields masked), one line per INPUT in argument order, over corpus cases with bad
# inputs mixed in; the exit code is the worst line's; a worker killed mid-trace gives that input an
# internal-error line and the batch goes on; a trace past its hard limit gives an unknown line.
# Usage: test_batch.sh PATH/TO/shapegate [SOURCE_DIR]. Ends with "N passed, N failed".
set -uo pipefail

SG=${1:?usage: test_batch.sh PATH/TO/shapegate [SOURCE_DIR]}
SRC=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); printf 'FAIL %s: %s\n' "$1" "$2"; }

# mask FILE: the output without its timings
mask() { sed -E 's/"seconds":[-0-9.eE+]+/"seconds":0/g' "$1"; }
# worst FILE: the exit code a batch with these lines ends with (5, then 3, then 1, then 4, then 0)
worst() {
    jq -s '[.[].exit] | if any(. == 5) then 5 elif any(. == 3) then 3 elif any(. == 1) then 1
           elif any(. == 4) then 4 else 0 end' "$1"
}

# ---- inputs: corpus cases (every 6th of each folder, and the slowest ones, whose
# counterexamples differ when checked on threads), a case twice, and bad inputs --------------
INPUTS=()
for sub in cases cases-2.6; do
    i=0
    for d in "$SRC/tests/corpus/$sub"/*/; do
        if [ $((i % 6)) -eq 0 ]; then INPUTS+=("${d%/}"); fi
        i=$((i + 1))
    done
    for name in err_div_2d_reshape large_100_div_ranges_err; do
        if [ -d "$SRC/tests/corpus/$sub/$name" ]; then INPUTS+=("$SRC/tests/corpus/$sub/$name"); fi
    done
done
if [ ${#INPUTS[@]} -lt 20 ]; then
    echo "test_batch: expected at least 20 corpus cases under $SRC/tests/corpus, found ${#INPUTS[@]}"
    exit 1
fi
GOOD1=${INPUTS[1]} GOOD2=${INPUTS[2]}
printf '{"guards": [' >"$TMP/truncated.json"
: >"$TMP/empty.json"
printf '\x00\x01\x02 not a trace' >"$TMP/binary.json"
mkdir "$TMP/empty_dir"
BAD=("$TMP/nonexistent" "$TMP/truncated.json" "$TMP/empty.json" "$TMP/binary.json" "$TMP/empty_dir")
MIXED=("${BAD[0]}" "${INPUTS[@]:0:8}" "${BAD[1]}" "${BAD[2]}" "${INPUTS[@]:8}" "$GOOD1" "${BAD[3]}" "${BAD[4]}")

# run NAME ARGS...: the batch with stdout in $TMP/NAME.out, stderr in $TMP/NAME.err, exit in RC
run() {
    local name=$1
    shift
    "$SG" check --json "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}

# ---- the same output for every --jobs ----------------------------------------------------------
run j1 --jobs 1 "${MIXED[@]}"
RC1=$RC
if [ "$RC1" -eq 3 ]; then pass; else fail "jobs 1: exit 3 (the worst: unreadable inputs)" "exit $RC1"; fi
if [ "$(wc -l <"$TMP/j1.out")" -eq ${#MIXED[@]} ]; then pass
else fail "jobs 1: one line per input" "$(wc -l <"$TMP/j1.out") lines for ${#MIXED[@]} inputs"; fi
if jq -r .input "$TMP/j1.out" >"$TMP/j1.inputs" 2>/dev/null &&
   printf '%s\n' "${MIXED[@]}" | cmp -s - "$TMP/j1.inputs"; then pass
else fail "jobs 1: one JSON object per line, in argument order" "$(head -c 300 "$TMP/j1.out")"; fi
nbad=$(jq -r 'select(.exit == 3 and (.error | type) == "string") | .input' "$TMP/j1.out" | wc -l)
if [ "$nbad" -eq ${#BAD[@]} ]; then pass; else fail "jobs 1: an error line per bad input" "$nbad of ${#BAD[@]}"; fi
if [ ! -s "$TMP/j1.err" ]; then pass; else fail "jobs 1: nothing on stderr" "$(head -c 300 "$TMP/j1.err")"; fi
mask "$TMP/j1.out" >"$TMP/j1.masked"

for jobs in 2 3 $((${#MIXED[@]} + 5)); do
    run "j$jobs" --jobs "$jobs" "${MIXED[@]}"
    if [ "$RC" -eq "$RC1" ]; then pass; else fail "jobs $jobs: the exit code of jobs 1" "exit $RC, jobs 1: $RC1"; fi
    if mask "$TMP/j$jobs.out" | cmp -s - "$TMP/j1.masked"; then pass
    else fail "jobs $jobs: byte-identical to jobs 1" "$(mask "$TMP/j$jobs.out" | diff - "$TMP/j1.masked" | head -c 600)"; fi
    if [ ! -s "$TMP/j$jobs.err" ]; then pass; else fail "jobs $jobs: nothing on stderr" "$(head -c 300 "$TMP/j$jobs.err")"; fi
done

# the default (the online CPUs), and the corpus alone: the exit code is the worst line's
run jd "${INPUTS[@]}"
worst=$(worst "$TMP/jd.out")
if [ "$RC" -eq "$worst" ]; then pass; else fail "default jobs: exit is the worst line's" "exit $RC, worst $worst"; fi
run jd1 --jobs 1 "${INPUTS[@]}"
if mask "$TMP/jd.out" | cmp -s - <(mask "$TMP/jd1.out"); then pass
else fail "default jobs: byte-identical to jobs 1" "$(mask "$TMP/jd.out" | diff - <(mask "$TMP/jd1.out") | head -c 600)"; fi

# ---- usage ---------------------------------------------------------------------------------
for bad in 0 -1 x 2x 257 ''; do
    run usage --jobs "$bad" "$GOOD1" "$GOOD2"
    if [ "$RC" -eq 2 ] && grep -q -- "--jobs needs a whole number" "$TMP/usage.err" && [ ! -s "$TMP/usage.out" ]; then pass
    else fail "--jobs '$bad': usage error" "exit $RC: $(cat "$TMP/usage.err")"; fi
done

# ---- a worker killed mid-trace: that input gets an internal-error line, the batch goes on -----
# floor_chain takes Z3 about 16 s without a time limit (tests/test_cli.sh); the worker checking
# it is killed once the line before it is out (the lines stream in order).
ATTACK="$SRC/tests/data/attacks/floor_chain.json"
"$SG" check --json --no-fix --timeout 0 --jobs 1 "$GOOD1" "$ATTACK" "$GOOD2" >"$TMP/crash.out" 2>"$TMP/crash.err" &
batch=$!
for _ in $(seq 600); do
    [ -s "$TMP/crash.out" ] && break
    sleep 0.1
done
sleep 0.2
workers=$(pgrep -P "$batch" || true)
if [ -n "$workers" ]; then kill -KILL $workers; else kill -KILL "$batch"; fi
wait "$batch"
RC=$?
if [ "$RC" -eq 5 ]; then pass; else fail "killed worker: exit 5" "exit $RC"; fi
if [ "$(wc -l <"$TMP/crash.out")" -eq 3 ] &&
   [ "$(sed -n 2p "$TMP/crash.out")" = "{\"input\":\"$ATTACK\",\"exit\":5,\"error\":\"internal error: the solver process ended with signal 9\"}" ]; then pass
else fail "killed worker: the input's line says so" "$(head -c 600 "$TMP/crash.out")"; fi
run ref --jobs 1 --no-fix "$GOOD1" "$GOOD2"
if mask "$TMP/crash.out" | sed 2d | cmp -s - <(mask "$TMP/ref.out"); then pass
else fail "killed worker: the other lines as without it" "$(mask "$TMP/crash.out" | sed 2d | diff - <(mask "$TMP/ref.out") | head -c 600)"; fi

# ---- the hard limit: unknown for that trace (the library's timeout, or the worker killed at the
# hard limit, 3.75 s here: whichever comes first), the others as without it --------------------
run hard --jobs 2 --no-fix --timeout 500 "$GOOD1" "$ATTACK" "$GOOD2"
if [ "$RC" -eq "$(worst "$TMP/hard.out")" ]; then pass; else fail "hard limit: exit is the worst line's" "exit $RC"; fi
line=$(sed -n 2p "$TMP/hard.out")
if jq -e '.exit == 4 and .verdict == "unknown" and (tostring | test("hard time limit|timeout \\("))' <<<"$line" >/dev/null; then pass
else fail "hard limit: the trace is unknown with its reason" "${line:0:600}"; fi
if mask "$TMP/hard.out" | sed 2d | cmp -s - <(mask "$TMP/ref.out"); then pass
else fail "hard limit: the other lines as without it" "$(mask "$TMP/hard.out" | sed 2d | diff - <(mask "$TMP/ref.out") | head -c 600)"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
