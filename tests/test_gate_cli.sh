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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
