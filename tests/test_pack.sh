#!/usr/bin/env bash
# test_pack.sh - black-box tests of `shapegate pack` and `shapegate verify`: every corpus
# archive verifies; hand-made archives whose runtime asserts are stronger than their
# declared ranges (tests/make_verify_archives.py) are refuted with a witness; --spec;
# --json; pack writes a readable archive with the record, --strict, and failures (hostile
# input, unusable output) leave no file. Usage: test_pack.sh SHAPEGATE SOURCE_DIR WORKDIR.
# Ends with "N passed, N failed".
set -u
SG=$1
SRC=$2
W=$3
pass=0
fail=0
rm -rf "$W"
mkdir -p "$W"
ERR=$W/stderr

# expect NAME WANT_RC CMD... : run CMD, compare its exit code, keep its stdout in $out.
expect() {
    local name=$1 want=$2
    shift 2
    out=$("$@" 2>"$ERR")
    local rc=$?
    if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $name: exit $rc, want $want: $(cat "$ERR")" >&2; fi
}

# contains NAME TEXT : $out must contain TEXT.
contains() {
    if printf '%s' "$out" | grep -qF -- "$2"; then pass=$((pass + 1)); else
        fail=$((fail + 1)); echo "FAIL $1: output lacks '$2'" >&2; fi
}

# ok NAME CONDITION... : a shell test.
ok() {
    local name=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; fi
}

# every corpus archive verifies as its loaded module behaved in torch: the expected_verify of the
# case's expect.json (tools/expect_12.py ran the module at the bounds of the declared ranges), ok
# for the original corpus (no expect.json; tests/data/boundaries); an archive torch's save left
# half-written (case.json pt2_error) is refused (exit 3)
n=0
for m in "$SRC"/tests/corpus/cases/*/model.pt2 "$SRC"/tests/corpus/cases-2.6/*/model.pt2; do
    d=$(dirname "$m")
    if jq -e 'has("pt2_error")' "$d/case.json" >/dev/null; then
        expect "verify partial $m" 3 "$SG" verify "$m"
        continue
    fi
    want=ok
    [ -f "$d/expect.json" ] && want=$(jq -r '.expected_verify // "none"' "$d/expect.json")
    case $want in
    ok) expect "verify $m" 0 "$SG" verify "$m"
        contains "verify $m" ": ok (the declared range_constraints)" ;;
    violations) expect "verify $m" 1 "$SG" verify "$m"
        contains "verify $m" "witness: " ;;
    none) ;; # the module failed on its own example inputs in torch: nothing to compare with
    *) ok "verify $m: unknown expectation $want" false ;;
    esac
    n=$((n + 1))
done
# as many as the corpus records as saved (index.json outcome ok, no pt2_error in case.json)
saved=0
for v in cases cases-2.6; do
    for c in $(jq -r '.[] | select(.outcome == "ok") | .name' "$SRC/tests/corpus/$v/index.json"); do
        jq -e 'has("pt2_error")' "$SRC/tests/corpus/$v/$c/case.json" >/dev/null || saved=$((saved + 1))
    done
done
ok "$n corpus archives, $saved saved by torch" [ "$n" -eq "$saved" ]

# hand-made archives: asserts stronger than the declared range
python3 "$SRC/tests/make_verify_archives.py" "$W/v" "$SRC/tests/corpus" || fail=$((fail + 1))
while IFS=$'\t' read -r file code text; do
    expect "verify $file" "$code" "$SG" verify "$W/v/$file"
    contains "verify $file" "$text"
    if [ "$code" -eq 1 ]; then contains "verify $file" "witness: ['x'].size()[0]="; fi
done <"$W/v/expected.tsv"

# the witness really fails the assert: mod8's witness is not a multiple of 8
expect mod8json 1 "$SG" verify --json "$W/v/mod8.pt2"
ok "mod8 json" python3 -c "
import json,sys
d=json.loads(sys.argv[1]); r=d['report']
assert d['verdict']=='violations' and d['runtime_asserts']['checked']==1
v=[x for x in r['violations'] if x.get('counterexample')][0]
ce=v['counterexample']; s=list(ce.values())[0] if isinstance(ce,dict) else ce
print(ce)" "$out" >/dev/null

# --spec wider than the declared range is refuted by the range; narrower is proved
M=$SRC/tests/corpus/cases/ok_check_implied_by_range/model.pt2
echo '{"x": {"0": {"name": "dx", "min": 2, "max": 64}}}' >"$W/wide.json"
echo '{"x": {"0": {"name": "dx", "min": 8, "max": 16}}}' >"$W/narrow.json"
expect wide 1 "$SG" verify --spec "$W/wide.json" "$M"
contains wide "fails declared range: 4 <= L['x'].size()[0] <= 64"
contains wide "witness: ['x'].size()[0]="
expect narrow 0 "$SG" verify --spec "$W/narrow.json" "$M"
echo '{"x": {"0": {"name": "dx", "min": 2, "max": 64}}}' >"$W/wide2.json"
expect widemod8 1 "$SG" verify --spec "$W/narrow.json" "$W/v/mod8.pt2"
echo '{"nope": {"0": {"name": "dx"}}}' >"$W/badspec.json"
expect badspec 1 "$SG" verify --spec "$W/badspec.json" "$M"
expect nospecfile 3 "$SG" verify --spec "$W/absent.json" "$M"

# verify usage and bad input
expect noarg 2 "$SG" verify
expect twoargs 2 "$SG" verify "$M" "$M"
expect badopt 2 "$SG" verify --frob "$M"
expect badbudget 2 "$SG" verify --rlimit -3 "$M"
expect missing 3 "$SG" verify "$W/absent.pt2"
head -c 3000 "$M" >"$W/trunc.pt2"
expect trunc 3 "$SG" verify "$W/trunc.pt2"

# pack: both layouts, the record is there, the archive reads back
for m in cases/ok_nonzero cases-2.6/ok_derived_spec_2x; do
    o=$W/$(echo "$m" | tr / _).pt2
    expect "pack $m" 0 "$SG" pack "$SRC/tests/corpus/$m/model.pt2" -o "$o"
    contains "pack $m" "shapegate/constraints.json (verdict ok)"
    expect "inspect $m" 0 "$SG" inspect "$o"
    contains "inspect $m" "shapegate/constraints.json"
    expect "verify packed $m" 0 "$SG" verify "$o"
    expect "repack $m" 0 "$SG" pack "$o" -o "$o.2"
    ok "repack one record $m" [ "$(unzip -l "$o.2" | grep -c 'shapegate/constraints.json')" -eq 1 ]
done

# pack of a refuted archive records the violation; --strict writes nothing
expect packmod8 0 "$SG" pack "$W/v/mod8.pt2" -o "$W/mod8.packed.pt2"
contains packmod8 "(verdict violations)"
ok "mod8 record" python3 -c "
import json,sys,zipfile
r=json.loads(zipfile.ZipFile(sys.argv[1]).read('model/extra/shapegate/constraints.json'))
assert r['verdict']=='violations' and r['violations'][0]['witness'][0] % 8 != 0, r" "$W/mod8.packed.pt2"
expect strict 1 "$SG" pack --strict "$W/v/mod8.pt2" -o "$W/strict.pt2"
ok "strict wrote nothing" [ ! -e "$W/strict.pt2" ]

# pack failures leave no file
expect packnoout 2 "$SG" pack "$M"
expect packtrunc 3 "$SG" pack "$W/trunc.pt2" -o "$W/fromtrunc.pt2"
ok "no file from a truncated input" [ ! -e "$W/fromtrunc.pt2" ]
cp "$M" "$W/flip.pt2"
printf '\xff' | dd of="$W/flip.pt2" bs=1 seek=200 conv=notrunc status=none
expect packflip 3 "$SG" pack "$W/flip.pt2" -o "$W/fromflip.pt2"
ok "no file from a bit-flipped input" [ ! -e "$W/fromflip.pt2" ]
expect packnodir 5 "$SG" pack "$M" -o "$W/no/such/dir/out.pt2"
expect packself 3 "$SG" pack "$W/flip.pt2" -o "$W/flip.pt2"
cp "$M" "$W/self.pt2"
sum=$(sha256sum <"$W/self.pt2")
expect packself2 7 "$SG" pack "$W/self.pt2" -o "$W/self.pt2"
ok "input untouched" [ "$(sha256sum <"$W/self.pt2")" = "$sum" ]

# the output: never a symbolic link, device, FIFO, folder or read-only file (exit 7, untouched);
# an existing file keeps its mode; -o - streams the same bytes to stdout
O=$W/out
mkdir -p "$O/dir"
echo keep >"$O/target"
ln -s target "$O/link"
expect "pack over a symlink" 7 "$SG" pack "$M" -o "$O/link"
ok "symlink kept" [ -L "$O/link" ] && ok "its target kept" [ "$(cat "$O/target")" = keep ]
mkfifo "$O/fifo"
expect "pack over a FIFO" 7 "$SG" pack "$M" -o "$O/fifo"
ok "FIFO kept" [ -p "$O/fifo" ]
expect "pack over a folder" 7 "$SG" pack "$M" -o "$O/dir"
ok "folder kept" [ -d "$O/dir" ]
if [ "$(id -u)" -eq 0 ] && mknod "$O/null" c 1 3 2>/dev/null; then
    expect "pack over a device" 7 "$SG" pack "$M" -o "$O/null"
    ok "device kept" [ -c "$O/null" ]
fi
echo keep >"$O/ro"
chmod 0444 "$O/ro"
expect "pack over a read-only file" 7 "$SG" pack "$M" -o "$O/ro"
ok "read-only file kept" [ "$(cat "$O/ro")" = keep ]
echo old >"$O/mode"
chmod 0640 "$O/mode"
expect "pack over a file" 0 "$SG" pack "$M" -o "$O/mode"
ok "mode kept" [ "$(stat -c %a "$O/mode")" = 640 ]
expect "pack to stdout" 0 sh -c '"$1" pack "$2" -o - >"$3"' sh "$SG" "$M" "$O/stdout.pt2"
ok "stdout has the same bytes" cmp -s "$O/stdout.pt2" "$O/mode"
ok "stdout: what was written on stderr" grep -qF "wrote stdout" "$ERR"
ok "no temporary files left" [ -z "$(find "$W" "$O" -maxdepth 1 -name '.*.pt2.*' -o -maxdepth 1 -name '.mode.*')" ]

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
