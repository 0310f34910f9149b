#!/usr/bin/env bash
# test_torch_trace.sh - the TORCH_TRACE adapter, black-box through the CLI, on real logs of
# torch 2.14 and 2.6 (tests/data/torch_trace/, made by tools/torch_trace_fixtures.py):
#   - `check` on the log (with the user's spec, --frame N) gives the verdict and the refuted
#     dims that `check` on the capture of the same run gives;
#   - `trace` prints a v1 JSON trace that reads back to the same bytes; .log, .log.gz and the
#     folder give the same trace;
#   - bad logs and wrong inputs: a one-line error naming the file, exit 3 (2 for usage), never
#     a crash; a .pt2 says to use verify/inspect, an unknown file lists what is accepted.
# Usage: test_torch_trace.sh PATH/TO/shapegate [SOURCE_DIR]. Ends with "N passed, N failed".
set -uo pipefail

SG=${1:?usage: test_torch_trace.sh PATH/TO/shapegate [SOURCE_DIR]}
SRC=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
D=$SRC/tests/data/torch_trace
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); printf 'FAIL %s\n' "$*"; }

# run ARGS...: sets RC, OUT (file $TMP/out), ERR (text of stderr)
run() { "$SG" "$@" >"$TMP/out" 2>"$TMP/err"; RC=$?; ERR=$(cat "$TMP/err"); }

# expect_error NAME RC NEEDLE ARGS...: exit RC, one stderr line containing NEEDLE, no stdout
expect_error() {
    local name=$1 rc=$2 needle=$3
    shift 3
    run "$@"
    if [ "$RC" != "$rc" ]; then bad "$name: exit $RC, expected $rc: $ERR"
    elif [ "$(wc -l <"$TMP/err")" -ne 1 ]; then bad "$name: stderr is not one line: $ERR"
    elif [[ $ERR != *"$needle"* ]]; then bad "$name: stderr lacks '$needle': $ERR"
    elif [ -s "$TMP/out" ]; then bad "$name: partial output on stdout"
    else ok; fi
}

verdict() { jq -c '[.verdict, ([.violations[].dim] | sort)]' "$1" 2>/dev/null; }

# 1. capture vs TORCH_TRACE log of the same run
ncalls=0
for cap in "$D"/*/*-[0-9]*.json; do
    case $cap in *.spec.json) continue ;; esac
    base=${cap%.json}
    n=${base##*-}
    stem=${base%-*}
    log=$stem.log.gz
    frame=()
    [ -f "$stem-2.json" ] && frame=(--frame "$n")
    ncalls=$((ncalls + 1))
    "$SG" check --json "$cap" >"$TMP/a.json" 2>/dev/null
    "$SG" check --json --spec "$base.spec.json" "${frame[@]}" "$log" >"$TMP/b.json" 2>"$TMP/err"
    a=$(verdict "$TMP/a.json")
    b=$(verdict "$TMP/b.json")
    what="${cap#"$D"/}"
    if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "$what: capture $a, TORCH_TRACE log $b ($(cat "$TMP/err"))"; fi
    # trace: v1 JSON that reads back to the same bytes
    if "$SG" trace "${frame[@]}" "$log" >"$TMP/t1.json" && "$SG" trace "$TMP/t1.json" >"$TMP/t2.json" \
        && cmp -s "$TMP/t1.json" "$TMP/t2.json" && jq -e '.format == "shapegate-trace" and .version == 1' "$TMP/t1.json" >/dev/null
    then ok; else bad "$what: shapegate trace does not round-trip"; fi
    # the plain .log and a TORCH_TRACE folder give the same trace
    rm -rf "$TMP/dir" && mkdir "$TMP/dir" && zcat "$log" >"$TMP/dir/dedicated_log_torch_trace_x.log"
    if "$SG" trace "${frame[@]}" "$TMP/dir/dedicated_log_torch_trace_x.log" | cmp -s - "$TMP/t1.json" \
        && "$SG" trace "${frame[@]}" "$TMP/dir" | cmp -s - "$TMP/t1.json"; then ok; else bad "$what: .log / folder differ from .log.gz"; fi
done
[ "$ncalls" -ge 16 ] && ok || bad "only $ncalls fixture calls under $D"

# torch version from the log (2.14 records it; 2.6 does not)
"$SG" trace --frame 1 "$D/2.14/two_exports.log.gz" | jq -e '.torch_version | startswith("2.14")' >/dev/null && ok \
    || bad "torch 2.14 log: torch_version not read"
# a runtime assert stays one (torch._check on an unbacked value)
"$SG" trace "$D/2.14/unbacked_item_check.log.gz" | jq -e '[.guards[].origin] | index("runtime_assert") != null' >/dev/null \
    && ok || bad "unbacked_item_check: no runtime assert"
# spec on a log
run spec --spec "$D/2.14/view_chunks_of_8-1.spec.json" "$D/2.14/view_chunks_of_8.log.gz"
[ "$RC" = 0 ] && ok || bad "spec on a log: exit $RC: $ERR"
# check without a spec: a note, every traced dim as Dim.AUTO
run check "$D/2.6/view_chunks_of_8.log.gz"
if [[ $RC =~ ^[014]$ ]] && [[ $ERR == *"records no dynamic_shapes spec"* ]]; then ok; else bad "check without spec: exit $RC: $ERR"; fi
# a non-strict export that stopped on a data-dependent guard: the log records no exception, only
# the partial graph (make_fx_fail_partial); the log's check must not prove anything (exit 6)
for v in cases cases-2.6; do
    for n in err_data_dependent_branch dd_item_lt_size dd_nonzero_count_branch dd_float_item_branch; do
        log=$SRC/tests/corpus/$v/$n/torch_trace.log.gz
        run check --json "$log"
        if [ "$RC" = 6 ] && jq -e '.verdict == "torch_failed" and (.reason | test("GuardOnDataDependentSymNode.*tracing stopped after `[a-z_0-9]+: \"Sym\\("))' \
            "$TMP/out" >/dev/null; then ok; else bad "$v/$n log: exit $RC, $(jq -c '[.verdict, .reason]' "$TMP/out")"; fi
    done
done
run check --json "$SRC/tests/corpus/cases/err_data_dependent_branch/torch_trace.log.gz"
jq -e '.reason | contains("at /corpus/gen/cases_misc.py:41 in forward, code: if t.item() > 0:")' "$TMP/out" >/dev/null \
    && ok || bad "err_data_dependent_branch log: the user's line is not named"
# a partial graph over backed sizes only says that tracing stopped, not why
{ zcat "$D/2.6/view_chunks_of_8.log.gz"
  printf 'V1201 00:00:00.000000 1 proxy_tensor.py:1] {"artifact": {"name": "make_fx_fail_partial", "encoding": "string"}}\n'
  printf '\tdef forward(self, arg0_1: "f32[s0][1]cpu"):\n\t    # File: /m.py:7 in forward, code: y = x.view(-1, 8)\n'
  printf '\t    view: "f32[(s0//8), 8][8, 1]cpu" = torch.ops.aten.view.default(arg0_1, [-1, 8]);  arg0_1 = None\n'; } >"$TMP/partial.log"
run check --json "$TMP/partial.log"
if [ "$RC" = 6 ] && jq -e '.reason | startswith("torch failed while tracing (make_fx_fail_partial): tracing stopped after `view: ")' \
    "$TMP/out" >/dev/null; then ok; else bad "partial graph without unbacked symbols: exit $RC, $(jq -c .reason "$TMP/out")"; fi
# a partial graph with a node line longer than any message: clipped, still one answer
{ zcat "$D/2.6/view_chunks_of_8.log.gz"
  printf 'V1201 00:00:00.000000 1 proxy_tensor.py:1] {"artifact": {"name": "make_fx_fail_partial", "encoding": "string"}}\n'
  printf '\t    big: "Sym(u0 + %s)" = x\n' "$(head -c 200000 /dev/zero | tr '\0' '1')"; } >"$TMP/partial_big.log"
run check --json "$TMP/partial_big.log"
if [ "$RC" = 6 ] && [ "$(jq -r .reason "$TMP/out" | wc -c)" -lt 1500 ]; then ok; else bad "huge partial graph line: exit $RC"; fi

# 2. errors
two=$D/2.14/two_exports.log.gz
expect_error "several frames, no --frame" 3 "pick one with --frame 1..2" check "$two"
expect_error "--frame past the end" 3 "no frame 3: the log holds 2 export frames" trace --frame 3 "$two"
expect_error "--frame 0" 2 "--frame '0'" trace --frame 0 "$two"
expect_error "--frame x" 2 "--frame 'x'" check --frame x "$two"
expect_error "--frame on a JSON trace" 3 "only a TORCH_TRACE log" check --frame 2 "$D/2.14/two_exports-1.json"
head -c 3000 "$two" >"$TMP/trunc.log.gz"
expect_error "truncated gzip" 3 "truncated gzip" trace --frame 1 "$TMP/trunc.log.gz"
{ zcat "$D/2.6/view_chunks_of_8.log.gz"; echo "this is not a record"; } >"$TMP/garbage.log"
expect_error "a line that is not a record" 3 "garbage.log:$(($(zcat "$D/2.6/view_chunks_of_8.log.gz" | wc -l) + 1)): not a TORCH_TRACE record" \
    trace "$TMP/garbage.log"
printf 'V1201 00:00:00.000000 1 x.py:1] {"create_symbol": {"symbol": "s0", "val": "4", "vr": "[2, 8]"\n' >"$TMP/badjson.log"
expect_error "a record that is not JSON" 3 "badjson.log:1: " trace "$TMP/badjson.log"
printf 'V1201 00:00:00.000000 1 x.py:1] {"str": ["a.py", 0]}\n' >"$TMP/empty.log"
expect_error "no export frame" 3 "no export frame" check "$TMP/empty.log"
printf 'V1201 00:00:00.000000 1 x.py:1] {"create_symbol": {"symbol": "s0", "val": "4", "vr": "[2, 8]", "source": "L[%sx%s].size()[0]"}}\nV1201 00:00:00.000000 1 x.py:1] {"guard_added_fast": {"expr": "frobnicate(s0) > 2"}}\n' "'" "'" >"$TMP/badguard.log"
expect_error "a guard shapegate cannot read" 3 "badguard.log (frame 1): guards[0].expr" check "$TMP/badguard.log"
{ printf 'V1201 00:00:00.000000 1 x.py:1] {"create_symbol": {"symbol": "s0", "val": "4", "vr": "[2, 8]", "source": "L[%sx%s].size()[0]"}}\n' "'" "'"
  printf 'V1201 00:00:00.000000 1 x.py:1] {"create_symbol": {"symbol": "s0", "val": "5", "vr": "[2, 8]", "source": "L[%sy%s].size()[0]"}}\n' "'" "'"; } >"$TMP/twice.log"
expect_error "one symbol, two meanings" 3 "symbol s0 created twice in one export frame" check "$TMP/twice.log"
printf 'V1201 00:00:00.000000 1 x.py:1] {"str": ["a.py", 0]}\n\001\002binary\n' >"$TMP/nul.log"
expect_error "binary junk" 3 "nul.log:2: " trace "$TMP/nul.log"
python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1],'w').writestr('m/archive_format','pt2')" "$TMP/model.pt2"
expect_error ".pt2 to check" 3 "use \`shapegate verify\` or \`shapegate inspect\`" check "$TMP/model.pt2"
printf 'hello, world\n' >"$TMP/notes.txt"
expect_error "unknown file" 3 "a TORCH_TRACE folder or log (.log, .log.gz)" check "$TMP/notes.txt"
mkdir "$TMP/nologs"
expect_error "a folder with neither capture nor logs" 3 "neither a capture folder" check "$TMP/nologs"

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
