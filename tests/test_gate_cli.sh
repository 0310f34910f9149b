#!/usr/bin/env bash
# test_gate_cli.sh - `shapegate gate` black-box: exit codes (0 pass or widening, 1 regression or
# signature, 2 usage, 3 unreadable input), the JSON witness, --junit (well-formed XML, one test case
# per input dim, never over a non-regular file), --annotations, --policy.
# Usage: test_gate_cli.sh SHAPEGATE SOURCE_DIR WORKDIR. Ends with "N passed, N failed".
set -u
SG=$1
SRC=$2
W=$3
G=$SRC/tests/data/gate
pass=0
fail=0
rm -rf "$W"
mkdir -p "$W"
ERR=$W/stderr

expect() {
    local name=$1 want=$2
    shift 2
    out=$("$@" 2>"$ERR")
    local rc=$?
    if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want: $(cat "$ERR")" >&2; fi
}
contains() {
    if printf '%s' "$out" | grep -qF -- "$2"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $1: output lacks '$2'" >&2; fi
}
ok() {
    local name=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; fi
}

expect "no archives" 2 "$SG" gate
expect "one archive" 2 "$SG" gate "$G/new_min-2.14/old.pt2"
expect "two outputs" 2 "$SG" gate --json --annotations "$G/new_min-2.14/old.pt2" "$G/new_min-2.14/new.pt2"
expect "missing archive" 3 "$SG" gate "$W/none.pt2" "$G/new_min-2.14/new.pt2"
head -c 100 "$G/new_min-2.14/new.pt2" >"$W/trunc.pt2"
expect "truncated archive" 3 "$SG" gate "$G/new_min-2.14/old.pt2" "$W/trunc.pt2"
ok "one-line error" [ "$(wc -l <"$ERR")" -eq 1 ]

expect "regression" 1 "$SG" gate --json "$G/new_min-2.14/old.pt2" "$G/new_min-2.14/new.pt2"
contains "regression verdict" '"verdict": "regression"'
contains "regression witness" '"witness": [{"path": "['"'"'x'"'"']", "shape": [2, 2, 4]}]'
contains "rejecting condition" '"condition": "L['"'"'x'"'"'].size()[2] >= 6"'
expect "widening passes" 0 "$SG" gate "$G/widen_max-2.14/old.pt2" "$G/widen_max-2.14/new.pt2"
contains "widening reported" "widening: NEW also accepts ['x']=[33, 4]"
expect "refactor passes" 0 "$SG" gate "$G/refactor-2.6/old.pt2" "$G/refactor-2.6/new.pt2"
expect "torch 2.6 vs 2.14" 1 "$SG" gate "$G/cross_narrow-2.6to2.14/old.pt2" "$G/cross_narrow-2.6to2.14/new.pt2"
expect "signature" 1 "$SG" gate "$G/sig_renamed-2.14/old.pt2" "$G/sig_renamed-2.14/new.pt2"
contains "signature named" "signature: input ['mask'] removed (or renamed)"

expect "junit" 1 "$SG" gate --junit "$W/gate.xml" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
ok "junit is XML" python3 -c "
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
cases = d.getElementsByTagName('testcase')
assert len(cases) == 5, len(cases)                       # signature + 4 input dims
assert d.getElementsByTagName('failure'), 'no failure'" "$W/gate.xml"
mkdir "$W/dir.xml"
expect "junit not over a folder" 7 "$SG" gate --junit "$W/dir.xml" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
expect "annotations" 1 "$SG" gate --annotations "$G/relation-2.14/old.pt2" "$G/relation-2.14/new.pt2"
contains "annotation: regression" "::error file=$G/relation-2.14/new.pt2,title=shapegate gate%3A regression::NEW rejects"
contains "annotation: widening" "::notice file="
expect "annotations: none on equal" 0 "$SG" gate --annotations "$G/refactor-2.14/old.pt2" "$G/refactor-2.14/new.pt2"
ok "no annotation line" [ -z "$out" ]

# --policy: ranges NEW must accept, relations it may require
printf '%s\n' '{"require": {"['"'"'x'"'"'].size()[0]": [2, 64]}}' >"$W/batch64.json"
expect "policy violated" 1 "$SG" gate --policy "$W/batch64.json" "$G/widen_max-2.14/new.pt2" "$G/widen_max-2.14/old.pt2"
contains "policy witness" "policy: NEW rejects ['x']=[33, 4], which the policy requires"
expect "policy holds" 0 "$SG" gate --policy "$W/batch64.json" "$G/widen_max-2.14/old.pt2" "$G/widen_max-2.14/new.pt2"
contains "policy holds: said" "policy: holds"
printf '%s\n' '{"relations": ["L['"'"'x'"'"'].size()[0] == L['"'"'y'"'"'].size()[0]"]}' >"$W/eq.json"
expect "relation NEW may require" 0 "$SG" gate --policy "$W/eq.json" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
expect "the same without the policy" 1 "$SG" gate "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
printf '%s\n' '{"require": {"x": [1, 2]}}' >"$W/bad.json"
expect "policy naming no dim" 3 "$SG" gate --policy "$W/bad.json" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
ok "one-line policy error" grep -qF "policy: 'x' is not an input dim of OLD" "$ERR"
printf '{"require": ' >"$W/trunc.json"
expect "policy not JSON" 3 "$SG" gate --policy "$W/trunc.json" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
expect "policy missing" 3 "$SG" gate --policy "$W/none.json" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"

# traces (v1 JSON traces captured in real torch, tools/make_gate_pairs.py traces) and any mix with
# archives: the same verdict as the two archives, for every pair of both torch versions
for d in "$G"/*-2.14 "$G"/*-2.6; do
    [ -f "$d/old.trace.json" ] || continue
    "$SG" gate "$d/old.pt2" "$d/new.pt2" >/dev/null 2>&1
    want=$?
    expect "$(basename "$d") trace/trace" "$want" "$SG" gate "$d/old.trace.json" "$d/new.trace.json"
    expect "$(basename "$d") pt2/trace" "$want" "$SG" gate "$d/old.pt2" "$d/new.trace.json"
    expect "$(basename "$d") trace/pt2" "$want" "$SG" gate "$d/old.trace.json" "$d/new.pt2"
done
expect "2.6 trace vs 2.14 trace" 1 "$SG" gate "$G/view_div-2.6/old.trace.json" "$G/view_div-2.14/new.trace.json"
# the rejecting condition's user line: a trace's guard, an archive's assert node
expect "source line (trace)" 1 "$SG" gate "$G/new_check-2.14/old.trace.json" "$G/new_check-2.14/new.trace.json"
contains "source line (trace): at" "  at: torch._check(x.shape[0] % 2 == 0)  # "
contains "source line (trace): file" "make_gate_pairs.py:"
expect "source line (archive)" 1 "$SG" gate "$G/new_check-2.14/old.pt2" "$G/new_check-2.14/new.pt2"
contains "source line (archive)" "  at: return self.l2(F.gelu(self.l1(x)))  # make_gate_pairs.py:72 in forward"
expect "source line JSON" 1 "$SG" gate --json "$G/new_check-2.14/old.pt2" "$G/new_check-2.14/new.pt2"
contains "source line JSON: user_loc" '"user_loc": "return self.l2'
expect "source line annotation" 1 "$SG" gate --annotations "$G/new_check-2.14/old.pt2" "$G/new_check-2.14/new.pt2"
contains "source line annotation: at" " at return self.l2"
expect "source line junit" 1 "$SG" gate --junit "$W/src.xml" "$G/new_check-2.14/old.pt2" "$G/new_check-2.14/new.pt2"
ok "source line junit: at" grep -qF "at: return self.l2" "$W/src.xml"
# TORCH_TRACE logs of a pair (tools/make_gate_pairs.py torch-trace 2.14 new_min): against each other,
# against the archives and the v1 traces
T=$G/new_min-2.14
expect "TORCH_TRACE vs TORCH_TRACE" 1 "$SG" gate "$T/old.torch_trace" "$T/new.torch_trace"
contains "TORCH_TRACE witness" "NEW rejects ['x']=[2, 2, 4], which OLD accepts"
expect "archive vs TORCH_TRACE" 1 "$SG" gate "$T/old.pt2" "$T/new.torch_trace/torch_trace.log"
expect "TORCH_TRACE vs v1 trace" 1 "$SG" gate "$T/old.torch_trace" "$T/new.trace.json"
expect "TORCH_TRACE vs itself" 0 "$SG" gate "$T/new.torch_trace" "$T/new.pt2"
# a capture folder against its own export's TORCH_TRACE log (real torch 2.14): the same domain
C=$SRC/tests/corpus/cases
expect "capture folder vs TORCH_TRACE log" 0 "$SG" gate "$C/err_div_view_8" "$C/err_div_view_8/torch_trace.log.gz"
contains "a failed export is said" "note: OLD: torch raised"
expect "export stopped on a data-dependent guard" 4 "$SG" gate "$C/dd_float_item_branch" "$C/dd_float_item_branch/torch_trace.log.gz"
ok "its inputs are not known: no signature change listed" sh -c '! printf "%s" "$1" | grep -q "^signature:"' _ "$out"
contains "data-dependent: said" "the export did not complete"

# a TORCH_TRACE log of two exports: --frame picks one for both logs, --old-frame/--new-frame each
TT=$SRC/tests/data/torch_trace/2.14
gzip -dc "$TT/two_exports.log.gz" >"$W/two.log"
expect "two-frame log needs --frame" 3 "$SG" gate "$W/two.log" "$W/two.log"
ok "frame error names the choice" grep -qF "pick one with --frame 1..2" "$ERR"
ok "path named once" [ "$(grep -o "$W/two.log" "$ERR" | wc -l)" -eq 1 ]
expect "--frame 2: an export against itself" 0 "$SG" gate --frame 2 "$W/two.log" "$W/two.log"
expect "--old-frame 1 --new-frame 2" 1 "$SG" gate --json --old-frame 1 --new-frame 2 "$W/two.log" "$W/two.log"
frames=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"], [s.get("path") for s in d.get("witness", [])])')
expect "the same frames as v1 traces" 1 "$SG" gate --json "$TT/two_exports-1.json" "$TT/two_exports-2.json"
ok "frames gate as their v1 traces" [ "$frames" = "$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"], [s.get("path") for s in d.get("witness", [])])')" ]
expect "--frame only for logs: a v1 trace beside a log" 0 "$SG" gate --frame 2 "$TT/two_exports-2.json" "$W/two.log"
expect "--old-frame 2 on a v1 trace" 3 "$SG" gate --old-frame 2 "$TT/two_exports-1.json" "$W/two.log"
expect "no frame 3" 3 "$SG" gate --frame 3 "$W/two.log" "$W/two.log"
expect "--frame 0" 2 "$SG" gate --frame 0 "$W/two.log" "$W/two.log"
expect "--new-frame 2 on an archive" 2 "$SG" gate --new-frame 2 "$G/new_min-2.14/old.pt2" "$G/new_min-2.14/new.pt2"
printf '{"hello": "world"}' >"$W/case.json"
expect "not a trace" 3 "$SG" gate "$W/case.json" "$G/new_min-2.14/new.pt2"

# non-tensor arguments (int, float, bool, str, None): constant inputs of an archive, in a capture's
# record, absent from a TORCH_TRACE log; an archive against a trace of the same model passes
for v in 2.14 2.6; do
    S=$G/scalars-$v
    expect "scalars $v archive -> trace" 0 "$SG" gate "$S/old.pt2" "$S/new.trace.json"
    expect "scalars $v trace -> archive" 0 "$SG" gate "$S/old.trace.json" "$S/new.pt2"
    expect "scalars $v: a changed constant" 1 "$SG" gate "$G/scalars_const-$v/old.pt2" "$G/scalars_const-$v/new.trace.json"
    contains "scalars $v: the constant named" "input ['n']: constant 3 -> 4"
    expect "scalars $v: narrowed, archive -> trace" 1 "$SG" gate --json "$G/scalars_narrow-$v/old.pt2" "$G/scalars_narrow-$v/new.trace.json"
    contains "scalars $v: tensor witness only" '"witness": [{"path": "['"'"'x'"'"']", "shape": [17, 4]}]'
done
expect "symint: a dynamic int in the archive and in the capture" 1 "$SG" gate "$G/symint-2.14/old.pt2" "$G/symint-2.14/new.trace.json"
contains "symint: no signature change" "regression: NEW rejects ['x']=[33, 4], which OLD accepts"
expect "symint: a dynamic int becomes a constant" 1 "$SG" gate "$G/symint-2.14/old.pt2" "$G/scalars-2.14/new.pt2"
contains "symint: said" "input ['n']: a dynamic int -> the constant 3"
expect "scalars: archive -> TORCH_TRACE log (no capture record)" 0 "$SG" gate "$G/scalars-2.14/old.pt2" "$G/scalars-2.14/new.torch_trace/torch_trace.log"
contains "scalars: said what was not compared" "OLD's 5 non-tensor inputs (['n'], ...) not compared"
expect "scalars: TORCH_TRACE log -> archive" 0 "$SG" gate "$G/scalars-2.14/old.torch_trace/torch_trace.log" "$G/scalars-2.14/new.pt2"

# serving descriptors of NEW's domain
expect "emit tensorrt" 1 "$SG" gate --emit tensorrt "$G/view_div-2.14/old.pt2" "$G/view_div-2.14/new.pt2"
contains "trtexec min" "--minShapes=x:4x4"
contains "trtexec max" "--maxShapes=x:64x4"
expect "emit triton" 0 "$SG" gate --emit triton "$G/pytree-2.14/new.pt2" "$G/pytree-2.14/new.pt2"
contains "triton dims" "dims: [ -1, -1, 4 ]"
contains "triton type" "data_type: TYPE_FP32"
contains "triton full shapes" "max_batch_size: 0"
expect "emit dynamic-shapes" 0 "$SG" gate --emit dynamic-shapes "$G/pytree-2.14/new.pt2" "$G/pytree-2.14/new.pt2"
contains "dynamic_shapes derived" "'mask': {0: inputs_a_0, 1: 2*_inputs_a_1}"
expect "emit dynamic-shapes: a hole is AUTO" 0 "$SG" gate --emit dynamic-shapes "$G/new_hole-2.14/new.pt2" "$G/new_hole-2.14/new.pt2"
contains "hole AUTO" "{'x': {0: Dim.AUTO}}"
expect "emit from an archive: opt is its recorded example" 0 "$SG" gate --json --emit tensorrt "$G/new_min-2.6/new.pt2" "$G/new_min-2.6/new.pt2"
contains "archive opt" '"opt": [2, 2, 16]'
contains "archive opt source" '"opt_source": "the example sizes the archive records (tensor meta hints)"'
expect "trtexec says which opt" 0 "$SG" gate --emit tensorrt "$G/new_min-2.6/new.pt2" "$G/new_min-2.6/new.pt2"
contains "trtexec opt comment" "# --optShapes: the example sizes the archive records"
expect "triton names: the placeholders" 0 "$SG" gate --emit triton "$G/pytree-2.6/new.trace.json" "$G/pytree-2.6/new.trace.json"
contains "triton name from a trace" 'name: "inputs_b_1"'
expect "emit from a trace: opt is its example" 0 "$SG" gate --emit tensorrt "$G/deep48-2.14/new.trace.json" "$G/deep48-2.14/new.trace.json"
contains "trace opt" "--optShapes=x:2x8x4"
expect "serving in JSON" 1 "$SG" gate --json --emit tensorrt "$G/view_div-2.14/old.pt2" "$G/view_div-2.14/new.pt2"
contains "serving verified" '"dynamic_shapes_verified": true'
expect "emit bad kind" 2 "$SG" gate --emit onnx "$G/view_div-2.14/old.pt2" "$G/view_div-2.14/new.pt2"
expect "emit on a changed signature" 1 "$SG" gate --emit triton "$G/sig_added-2.14/old.pt2" "$G/sig_added-2.14/new.pt2"
ok "emit on a changed signature: said" grep -qF "no serving descriptors: the signature changed" "$ERR"

# the policy in the Python dynamic_shapes form (read, never run)
cat >"$W/batch64.py" <<'PY'
from torch.export import Dim
batch = Dim('batch', min=1, max=64)   # what production sends
dynamic_shapes = {'x': {0: batch}}
PY
expect "python policy violated" 1 "$SG" gate --policy "$W/batch64.py" "$G/narrow_max-2.14/old.pt2" "$G/narrow_max-2.14/new.pt2"
contains "python policy witness" "policy: NEW rejects ['x']=[33, 4], which the policy requires"
expect "python policy holds" 0 "$SG" gate --policy "$W/batch64.py" "$G/widen_max-2.14/old.pt2" "$G/widen_max-2.14/new.pt2"
printf "b = Dim('b', min=2, max=64)\n{'x': {0: b}, 'y': (b, None)}\n" >"$W/shared.py"
expect "python policy: a shared Dim is a relation NEW may require" 0 "$SG" gate --policy "$W/shared.py" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
printf "{'x': {0: Dim.AUTO}, 'y': {0: 7}}\n" >"$W/static.py"
expect "python policy: an int requires that size" 1 "$SG" gate --policy "$W/static.py" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.trace.json"
contains "python policy: the size required" "['y']=[7, 4], which the policy requires"
printf "b = Dim('b', min=2, max=64)\n{'x': {0: b}, 'y': {0: bb}}\n" >"$W/undef.py"
expect "python policy: an undefined name" 3 "$SG" gate --policy "$W/undef.py" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
ok "python policy: line:col" grep -qF "policy: 2:24: a name not defined above" "$ERR"
printf "{'x': {0: Dim('b', min=2, foo=3)}}\n" >"$W/kw.py"
expect "python policy: an unknown keyword" 3 "$SG" gate --policy "$W/kw.py" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"
ok "python policy: keyword line:col" grep -qF "policy: 1:30: expected min=INT or max=INT" "$ERR"
printf "import os\nos.system('true')\n" >"$W/code.py"
expect "python policy: code is not read" 3 "$SG" gate --policy "$W/code.py" "$G/new_eq-2.14/old.pt2" "$G/new_eq-2.14/new.pt2"

# the committed re-export results of --emit dynamic-shapes (real torch, tools/gate_serving_check.py run)
# are about what this binary emits
for v in 2.14 2.6; do
    ok "dynamic_shapes as re-exported in torch $v" python3 "$SRC/tools/gate_serving_check.py" check --torch "$v" --shapegate "$SG"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
