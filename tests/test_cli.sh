#!/usr/bin/env bash
# test_cli.sh - black-box tests of the shapegate command-line tool: exit codes,
# stdout and the one-line `N:COL: message` error form, for every case in
# docs/cli.md. Usage: test_cli.sh PATH/TO/shapegate [SOURCE_DIR]
# Ends with "N passed, N failed" and exits non-zero on any failure.
set -uo pipefail

SG=${1:?usage: test_cli.sh PATH/TO/shapegate [SOURCE_DIR]}
SRC=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0
OUT='' ERR='' RC=''

# run STDIN_FILE ARGS...: run shapegate with stdin from STDIN_FILE; sets OUT, ERR, RC.
run() {
    local in=$1
    shift
    "$SG" "$@" <"$in" >"$TMP/out" 2>"$TMP/err"
    RC=$?
    OUT=$(cat "$TMP/out")
    ERR=$(cat "$TMP/err")
}

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    printf 'FAIL %s: %s\n' "$1" "$2"
    printf '  exit %s\n  stdout: %.600s\n  stderr: %.600s\n' "$RC" "$OUT" "$ERR"
}

# expect NAME RC STDOUT: exit code and exact stdout ('*' skips the stdout check).
expect() {
    local name=$1 rc=$2 out=$3
    if [ "$RC" != "$rc" ]; then
        fail "$name" "exit $RC, expected $rc"
    elif [ "$out" != '*' ] && [ "$OUT" != "$out" ]; then
        fail "$name" "stdout differs, expected: $out"
    else
        pass
    fi
}

# expect_err1 NAME RC REGEX: exit code, and stderr is exactly one line matching REGEX.
expect_err1() {
    local name=$1 rc=$2 re=$3 lines
    lines=$(wc -l <"$TMP/err")
    if [ "$RC" != "$rc" ]; then
        fail "$name" "exit $RC, expected $rc"
    elif [ "$lines" -ne 1 ]; then
        fail "$name" "stderr has $lines lines, expected 1"
    elif ! [[ $ERR =~ $re ]]; then
        fail "$name" "stderr does not match /$re/"
    else
        pass
    fi
}

# expect_err_has NAME TEXT: stderr contains TEXT.
expect_err_has() {
    if [[ $ERR == *"$2"* ]]; then pass; else fail "$1" "stderr does not contain: $2"; fi
}

# expect_match NAME RC REGEX: exit code, and stdout matches REGEX.
expect_match() {
    local name=$1 rc=$2 re=$3
    if [ "$RC" != "$rc" ]; then
        fail "$name" "exit $RC, expected $rc"
    elif ! [[ $OUT =~ $re ]]; then
        fail "$name" "stdout does not match /$re/"
    else
        pass
    fi
}

# The form every text error takes: LINE:COL: message, on one line.
POS='^[0-9]+:[0-9]+: [^[:cntrl:]]+$'
NUL=/dev/null
printf '' >"$TMP/empty"

# ---- global options and usage ----------------------------------------------------

run $NUL --help
expect_match "--help" 0 'Usage: shapegate <command>'
if [ -z "$ERR" ]; then pass; else fail "--help" "stderr not empty"; fi
run $NUL --version
expect_match "--version" 0 '^shapegate [0-9]+\.[0-9]+\.[0-9]+$'
run $NUL
expect "no command" 2 ''
run $NUL frobnicate
expect_err1 "unknown command" 2 "unknown command 'frobnicate'"
run $NUL --bogus
expect "unknown global option" 2 ''
run $NUL parse --bogus s0
expect "parse: unknown long option" 2 ''
expect_err_has "parse: long option named" "'--bogus'"
run $NUL parse -x s0
expect "parse: unknown short option" 2 ''
expect_err_has "parse: short option named" "'-x'"
run $NUL parse --python=yes s0
expect "parse: argument to a flag" 2 ''
run $NUL parse --python --smt s0
expect "parse: two forms" 2 ''
run $NUL parse --help
expect_match "parse --help" 0 'Usage: shapegate parse'
run $NUL eval --help
expect_match "eval --help" 0 'Usage: shapegate eval'
run $NUL eval
expect "eval: no EXPR" 2 ''
run $NUL eval 's0 + 1' t=3
expect "eval: name not in EXPR" 2 ''
expect_err_has "eval: unknown name named" "'t' is not a symbol"
run $NUL eval 's0 + 1' s0
expect "eval: no '='" 2 ''
run $NUL eval 's0 + 1' =3
expect "eval: empty name" 2 ''
run $NUL eval 's0 + 1' s0=1 s0=2
expect "eval: name twice" 2 ''

# ---- parse: good input -------------------------------------------------------------

run $NUL parse 'Eq(Mod(s77, 8), 0)' 'Ne((s77//8), 1)'
expect "parse: torch's sympy strings round-trip" 0 \
"Eq(Mod(s77, 8), 0)
Ne((s77//8), 1)"
run $NUL parse '8*((s77//8)) >= 2'
expect_match "parse: a FloorDiv inside a product" 0 '^8\*\(\(?s77//8\)\)? >= 2$'
run $NUL parse --sympy '(s0 % 2) == 0' 's1 + s0 + 1'
expect "parse: Python form in, sympy out" 0 \
"Eq(Mod(s0, 2), 0)
s0 + s1 + 1"
run $NUL parse --python 'Eq(Mod(s77, 8), 0)' '8*((s77//8)) >= 2' 'Ne((s77//8), 1)'
expect "parse --python" 0 \
"(s77 % 8) == 0
8*(s77 // 8) >= 2
(s77 // 8) != 1"
run $NUL parse -- '-s0 + 3'
expect_match "parse: '--' before an EXPR starting with '-'" 0 '^(-s0 \+ 3|3 - s0)$'

printf 'Eq(Mod(s77, 8), 0)\r\nMax(s1, s0)\ns0*2' >"$TMP/in"
run "$TMP/in" parse
expect "parse: stdin lines (CRLF, last line without newline)" 0 \
"Eq(Mod(s77, 8), 0)
Max(s0, s1)
2*s0"
run "$TMP/empty" parse
expect "parse: empty stdin" 0 ''

run $NUL parse --smt 'Eq(Mod(s77, 8), 0)'
expect_match "parse --smt declares and asserts" 0 '\(declare-const s77 Int\).*\(assert '
if command -v z3 >/dev/null 2>&1; then
    { printf '%s\n' "$OUT"; echo '(check-sat)'; } >"$TMP/q.smt2"
    if [ "$(z3 "$TMP/q.smt2" 2>&1)" = sat ]; then pass; else
        fail "parse --smt output is valid SMT-LIB" "$(z3 "$TMP/q.smt2" 2>&1 | head -3)"
    fi
    run $NUL parse --smt 'FloorDiv(s0, s1)'
    { printf '%s\n' "$OUT"
      echo '(assert (= s0 (- 7))) (assert (= s1 2)) (check-sat) (get-value (value defined))'
    } >"$TMP/q.smt2"
    if [[ $(z3 "$TMP/q.smt2" 2>&1 | tr -s ' \n' ' ') == *"sat ((value (- 4)) (defined true))"* ]]
    then pass; else
        fail "parse --smt: FloorDiv(-7, 2) is -4 in Z3" "$(z3 "$TMP/q.smt2" 2>&1 | head -5)"
    fi
fi

# ---- eval ---------------------------------------------------------------------------

run $NUL eval 'FloorDiv(s0, s1)' s0=-7 s1=2
expect "eval: FloorDiv floors" 0 '-4'
run $NUL eval 'Mod(s0, s1)' s0=7 s1=-2
expect "eval: Mod takes the divisor's sign" 0 '-1'
run $NUL eval '(s0 % s1)' s0=-7 s1=2
expect "eval: Python % form" 0 '1'
run $NUL eval 'CeilDiv(s0, s1)' s0=-7 s1=2
expect "eval: CeilDiv" 0 '-3'
run $NUL eval 's0*s1 - 5' s0=-3 s1=4
expect "eval: negative values" 0 '-17'
run $NUL eval 'Eq(Mod(s77, 8), 0)' s77=16
expect "eval: a true guard" 0 'True'
run $NUL eval 'Eq(Mod(s77, 8), 0)' s77=12
expect "eval: a false guard exits 1" 1 'False'
run $NUL eval "L['x'].size()[0] // 8" "L['x'].size()[0]=17"
expect "eval: a source name as symbol" 0 '2'
run $NUL eval 's0' s0=170141183460469231731687303715884105727
expect "eval: largest 128-bit value" 0 '170141183460469231731687303715884105727'
run $NUL eval 's0 - 1' s0=-170141183460469231731687303715884105728
expect_err1 "eval: overflow exits 1" 1 '^overflow: '
run $NUL eval 's0 + 1' s0=170141183460469231731687303715884105728
expect_err1 "eval: value over 128 bits exits 3" 3 'does not fit in 128 bits'
run $NUL eval 's0 + 1' s0=abc
expect_err1 "eval: value not an integer exits 3" 3 'not a decimal integer'
run $NUL eval 's0 + 1' s0=
expect_err1 "eval: empty value exits 3" 3 'not a decimal integer'
run $NUL eval 'FloorDiv(s0, s1)' s0=1 s1=0
expect_err1 "eval: division by zero exits 1" 1 '^undefined: '
run $NUL eval 'Mod(s0, s1) + s2' s0=1 s1=0 s2=1
expect_err1 "eval: modulo by zero exits 1" 1 '^undefined: '
run $NUL eval 'FloorDiv(s0, s1) + s2'
expect_err1 "eval: missing values named" 3 'no value for s0, s1, s2'
run $NUL eval 's0 + s1' s0=1
expect_err1 "eval: one missing value" 3 'no value for s1 '
run $NUL eval 's0 - s0 + s1' s0=5 s1=2
expect "eval: a symbol folded away may still be given" 0 '2'
run $NUL eval 'Foo(s0)' s0=1
expect_err1 "eval: invalid EXPR exits 3" 3 "$POS"

# ---- parse: malformed input, each one line N:COL: message and exit 3 ---------------------

run $NUL parse '(s0 + 1'
expect_err1 "unbalanced parentheses" 3 "$POS"
run $NUL parse 's0 + 1)'
expect_err1 "unbalanced closing parenthesis" 3 "$POS"
run $NUL parse 'Foo(s0)'
expect_err1 "unknown function" 3 "$POS"
run $NUL parse 's0' 'Eq(s0'
expect_err1 "the failing argument is numbered" 3 '^2:[0-9]+: '
expect "arguments before the failure are printed" 3 's0'
run $NUL parse ''
expect_err1 "empty argument" 3 '^1:1: empty expression$'

printf 's0\n\ns1\n' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "empty line" 3 '^2:1: empty expression$'
printf 's0\n \t \n' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "whitespace-only line" 3 '^2:1: empty expression$'

printf 's0 + \xff\n' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "non-UTF-8 byte" 3 '^1:6: '
printf 's0 + s\xc3\n' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "truncated UTF-8 sequence" 3 "$POS"
printf 's0 +\0 1\n' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "NUL byte in a line" 3 "$POS"

head -c 10485760 /dev/zero | tr '\0' '(' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "10 MB of '(' on one line" 3 '^1:1048577: line longer than 1048576 bytes$'
head -c 200000 /dev/zero | tr '\0' '(' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "200000 nested '(' (nesting limit)" 3 "$POS"
python3 -c 'import sys; sys.stdout.write("s0\n" + "s0 + " * 250000 + "s1\n")' >"$TMP/in"
run "$TMP/in" parse
expect_err1 "over-long second line" 3 '^2:1048577: line longer than 1048576 bytes$'
python3 -c 'import sys; sys.stdout.write("s0 + " * 200000 + "s1\n")' >"$TMP/in"
run "$TMP/in" parse
expect "a 1 MB line under the limit parses" 0 '*'

# ---- every guard of the shipped torch corpus parses, and printing is a fixed point ---------

python3 - "$SRC/tests/corpus" >"$TMP/guards" <<'PY'
import glob, json, os, sys
seen = set()
for f in sorted(glob.glob(os.path.join(sys.argv[1], "cases*", "*", "guards.json"))):
    with open(f) as fh:
        doc = json.load(fh)
    for env in doc.get("shape_envs") or []:
        for g in env.get("guards") or []:
            if g.get("expr") and g["expr"] not in seen:
                seen.add(g["expr"])
                print(g["expr"])
PY
if [ -s "$TMP/guards" ]; then
    for form in --sympy --python; do
        run "$TMP/guards" parse "$form"
        expect "corpus guards parse ($form, $(wc -l <"$TMP/guards") guards)" 0 '*'
        printf '%s\n' "$OUT" >"$TMP/printed"
        run "$TMP/printed" parse "$form"
        expect "corpus guards: printing $form is a fixed point" 0 "$(cat "$TMP/printed")"
    done
else
    fail "corpus" "no guards found under $SRC/tests/corpus"
fi

# ---- check: spec overrides (--dim, --spec; docs/check.md "Spec overrides") -------------------

CASES=$SRC/tests/corpus/cases
# expect_out_has NAME TEXT: stdout contains TEXT.
expect_out_has() {
    if [[ $OUT == *"$2"* ]]; then pass; else fail "$1" "stdout lacks: $2"; fi
}
# two Dim.AUTO whose bounds each meet the traced range but not together (s0 + s1 >= 50, both
# <= 20): refuted, not vacuously proved; the counterexample puts both inside their bounds
run /dev/null check --json --no-fix "$SRC/tests/data/hints/joint_auto_bounds.json"
expect "joint hint bounds: refuted" 1 '*'
expect_out_has "joint hint bounds: range_conflict" '"kind":"range_conflict"'
expect_out_has "joint hint bounds: counterexample in the bounds" '"counterexample":{"['"'"'x'"'"']":[20],"['"'"'y'"'"']":[20]}'
# {"hello": "world"} is not a capture: one line, exit 3
mkdir -p "$TMP/hello" && echo '{"hello": "world"}' >"$TMP/hello/case.json" && echo '{"hello": "world"}' >"$TMP/hello/guards.json"
run /dev/null check "$TMP/hello"
expect "hello world: unreadable" 3 ''
if [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] && [[ $ERR == *"guards.json: shape_envs: missing"* ]]; then pass; else fail "hello world: one line naming the file" "$ERR"; fi
if [ -d "$CASES/err_check_ge" ]; then
    run /dev/null check "$CASES/err_check_ge"
    expect "check err_check_ge as traced: refuted" 1 '*'
    run /dev/null check "$CASES/err_check_ge" --dim 'x.0=dx:16..100'
    expect "--dim x.0=dx:16..100 satisfies the guard 16 <= x" 0 '*'
    expect_out_has "--dim x.0=dx:16..100: verdict" "err_check_ge (torch 2.14.1+debian): ok"
    run /dev/null check "$CASES/err_check_ge" --dim 'x.0=dx:2..100'
    expect "--dim x.0=dx:2..100: refuted" 1 '*'
    run /dev/null check --json --dim "['x'].0=dx:20..64" "$CASES/err_check_ge"
    expect "--dim with a bracketed path, --json" 0 '*'
    expect_out_has "--dim --json: verdict ok" '"verdict":"ok"'
    run /dev/null check "$CASES/err_check_ge" --dim "L['x'].size()[0]=dx:16.."
    expect "--dim by source name, max int_oo: fails the traced range" 1 '*'
    run /dev/null check "$CASES/err_check_ge" --dim 'x.0=AUTO'
    expect "--dim x.0=AUTO: nothing to decide" 0 '*'
    run /dev/null check "$CASES/err_check_ge" --dim 'z.0=dx'
    expect_err1 "--dim unknown input" 2 "^shapegate check: dim override 'z.0=dx': no tensor input 'z'; the inputs are x \(2 dims\)"
    run /dev/null check "$CASES/err_check_ge" --dim 'x.7=dx'
    expect_err1 "--dim unknown dim index" 2 "'x' has 2 dims \(0..1\), not 7"
    run /dev/null check "$CASES/err_check_ge" --dim 'x.0=dx**2'
    expect_err1 "--dim non-affine derived" 2 "a derived dim must be A\*NAME \+ B"
    run /dev/null check "$CASES/err_check_ge" --dim 'x.0=dx:4..8' --dim 'x.1=dx:4..9'
    expect_err1 "--dim two ranges for one name" 2 "Dim 'dx' is given two ranges, 4..8 and 4..9"
    run /dev/null check "$CASES/err_check_ge" --dim
    expect_err1 "--dim without a value" 2 "dim"
    run /dev/null check "$CASES/ok_derived_spec_2x" --dim 'y.0=2*dx+1'
    expect "--dim derived whose example does not fit" 1 '*'
    expect_out_has "--dim derived: torch's message" "Expected input L['y'].size()[0] to be equal to 2*dx + 1, where dx = 4, but got 8"
    run /dev/null check "$CASES/err_div_view_8" --dim 'x.0=8*_dx' --dim '_dx:2..'
    expect "--dim derived over a root given only a range" 0 '*'
    run /dev/null check "$CASES/ok_nested_dict_list" --dim 'inputs.b.1.1=T:2..16'
    expect "--dim nested path" 0 '*'
    run /dev/null check "$CASES/err_spec_bad_keys" --dim 'x.0=dx'
    expect "--dim supplies a spec torch rejected (no ShapeEnv: unknown)" 4 '*'

    printf '{"x": {"0": {"name": "dx", "min": 16, "max": 100}}}\n' >"$TMP/spec_ok.json"
    printf '{"x": [{"name": "dx", "min": 2, "max": 100}, null]}\n' >"$TMP/spec_list.json"
    printf '{"inp": {"0": {"name": "dx"}}}\n' >"$TMP/spec_keys.json"
    printf '{"x": {"5": {"name": "dx"}}}\n' >"$TMP/spec_dim.json"
    printf '{"x": {"0": \n' >"$TMP/spec_syntax.json"
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/spec_ok.json"
    expect "--spec dict form" 0 '*'
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/spec_list.json"
    expect "--spec list form" 1 '*'
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/spec_list.json" --dim 'x.0=dx:16..100'
    expect "--spec then --dim" 0 '*'
    run /dev/null check --json "$CASES/err_check_ge" --spec "$TMP/spec_keys.json"
    expect "--spec with keys that are not argument names" 1 '*'
    expect_out_has "--spec bad keys: invalid_spec" '"verdict":"invalid_spec"'
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/spec_dim.json"
    expect_err1 "--spec with a dim the tensor lacks" 2 "spec_dim.json: \['x'\]\['5'\]: the tensor has 2 dims, no dim 5"
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/spec_syntax.json"
    expect_err1 "--spec bad JSON" 2 "invalid JSON at byte"
    run /dev/null check "$CASES/err_check_ge" --spec "$TMP/no-such.json"
    expect_err1 "--spec missing file" 3 "no-such.json: No such file or directory"
    run /dev/null check "$CASES/err_check_ge" --spec "$CASES/err_check_ge/case.json"
    expect "--spec a case.json: its own spec, same verdict" 1 '*'
    run /dev/null check --help
    expect_out_has "check --help lists --dim" "--dim ITEM"
    expect_out_has "check --help lists --spec" "--spec FILE"
else
    fail "check overrides" "no corpus at $CASES"
fi

# ---- suggested fixes, torch's text, spec generation ---------------------------------------
if [ -d "$CASES" ]; then
    run /dev/null check "$CASES/err_div_view_8"
    expect "check with fixes: refuted" 1 '*'
    expect_out_has "check prints verified fixes" "Suggested fixes (re-checked: the fixed spec is proved, 1 round):"
    expect_out_has "new root with an explicit min" "_dx = Dim('_dx', min=2)"
    run /dev/null check --python "$CASES/err_div_view_8"
    expect_out_has "--python: the fixed spec" "dynamic_shapes = {'x': {0: 8*_dx}}"
    run /dev/null check --explain "$CASES/err_div_view_8"
    # torch's _dx min=1 is a root analysed from 2 (its re-export's range_constraints say [2, oo]): ok
    expect_out_has "--explain re-checks torch's lines" "applied as refine_dynamic_shapes_from_suggested_fixes reads them and checked: ok"
    run /dev/null check --torch "$CASES/err_check_ge"
    expect "--torch: refuted" 1 '*'
    expect_out_has "--torch: torch's header" "Constraints violated (dx)! For more information, run with TORCH_LOGS=\"+dynamic\"."
    expect_out_has "--torch: our verified fix in torch's block" "Suggested fixes:"
    run /dev/null check --no-fix "$CASES/err_check_ge"
    if printf "%s" "$OUT" | grep -q "Suggested fixes"; then fail "--no-fix" "fixes printed"; else pass; fi
    run /dev/null check --json "$CASES/err_eq_add"
    expect_out_has "--json: fixes object" '"fixes":{"verified":true'
    expect_out_has "--json: fix line" '"dy = dx"'
    # the fixed spec, fed back through --spec, checks clean (one round)
    "$SG" check --json "$CASES/err_div_offset" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["fixes"]["spec"]))' >"$TMP/fixed.json"
    run /dev/null check "$CASES/err_div_offset" --spec "$TMP/fixed.json"
    expect "fixed spec re-checks clean" 0 '*'
    run /dev/null spec "$CASES/large_transformer_8layers_auto"
    expect "spec: verified" 0 '*'
    expect_out_has "spec: AUTO dims made explicit and related" "dynamic_shapes = {'ids': {0: ids_0, 1: ids_1}, 'mask': {0: ids_0, 1: ids_1}}"
    run /dev/null spec --json "$CASES/ok_nested_dict_list"
    expect_out_has "spec --json" '"verified":true'
    run /dev/null spec "$CASES/err_dim_same_name_diff_range"
    expect "spec on an invalid spec" 1 '*'
    run /dev/null spec "$TMP/no-such-dir"
    expect "spec: missing input" 3 '*'
    run /dev/null spec
    expect_err1 "spec: no input" 2 "missing INPUT"
    run /dev/null spec --bogus "$CASES/err_eq_add"
    expect "spec: unknown option" 2 '*'
else
    fail "fixes" "no corpus at $CASES"
fi

# ---- the hard time limit: Z3 may ignore its interrupt on this trace (docs/robustness.md) -----------
# a 1000-deep floor-division chain Z3 answers only after about 16 s; with --timeout 1000 the hard
# limit is 6.5 s (4.5 s with --no-fix; sg_cli_hard_limit). Whether Z3 hears the interrupt depends on
# where in its loops the interrupt lands (on a loaded machine it often does): either way the answer is
# unknown with its reason, one complete report, never the solver's late answer. No wall-clock
# assertion: the elapsed time depends on the machine's load.
ATTACK="$SRC/tests/data/attacks/floor_chain.json"
run /dev/null check --timeout 1000 "$ATTACK"
expect "hard limit: unknown" 4 '*'
if [[ $OUT == *"stopped at the hard time limit"* || $OUT == *"unknown (timeout ("* ]]; then pass
else fail "hard limit: says why" "stdout names neither the hard limit nor a timeout: $OUT"; fi
run /dev/null check --json --no-fix --timeout 1000 "$ATTACK"
expect "hard limit --json: unknown" 4 '*'
if [[ $OUT == '{"verdict":"unknown","reason":"hard time limit'* ]] ||
   { [[ $OUT == '{"verdict":"unknown",'*'"reason":"timeout ('* ]] && jq -e . >/dev/null <<<"$OUT"; }; then pass
else fail "hard limit --json: one JSON object, unknown with a reason" "stdout: $OUT"; fi
run /dev/null spec --timeout 1000 "$ATTACK"
expect "hard limit: spec unknown" 4 '*'
# high powers: the non-linear solver stops these within a resource budget (it used to need the
# hard limit); no wall clock, so the answer does not depend on the machine's load
run /dev/null check --json --no-fix --timeout 0 --query-timeout 0 --rlimit 2000000 "$SRC/tests/data/attacks/high_powers.json"
expect "high powers: within the budget" 1 '*'
expect_out_has "high powers: a counterexample" '"counterexample":'

# batch: several INPUTs with --json, one object per line in argument order, the worst exit code
if [ -d "$CASES/err_div_view_8" ]; then
    run /dev/null check --json --no-fix "$CASES/err_div_view_8" /nonexistent/trace "$CASES/err_div_view_8"
    expect "batch: the worst exit code (unreadable input)" 3 '*'
    if [ "$(printf '%s\n' "$OUT" | wc -l)" -eq 3 ]; then pass; else fail "batch: three lines" "got $(printf '%s\n' "$OUT" | wc -l)"; fi
    expect_out_has "batch: the input named" '{"input":"/nonexistent/trace","exit":3,"error":'
    expect_out_has "batch: a report with its exit" '"exit":1,"verdict":"violations"'
    run /dev/null check --json --no-fix "$CASES/err_div_view_8" "$CASES/err_div_view_8"
    expect "batch: refuted twice" 1 '*'
    run /dev/null check "$CASES/err_div_view_8" "$CASES/err_div_view_8"
    expect_err1 "batch needs --json" 2 'several INPUTs need --json'
fi

# a Dim bound of sys.maxsize stays exact in the spec's validation message and in its repair
# (both read the spec as cJSON doubles once: 9223372036854775808, and 9.2233720368547758e+18,
# which the repaired spec then refused)
run /dev/null check "$SRC/tests/data/bigint/maxsize_spec.json"
expect "maxsize spec: invalid (a 2-entry spec for a 1-dim tensor)" 1 '*'
expect_out_has "maxsize spec: the bound exact in torch's message" "Dim('dx', max=9223372036854775807)"
expect_out_has "maxsize spec: the repaired spec checked" "Suggested fixes (re-checked: the fixed spec is proved, 1 round)"
expect_out_has "maxsize spec: the repair's Python" "dx = Dim('dx', min=2, max=9223372036854775806)"

# `serve` runs the service executable next to shapegate (build tree) or installed in LIBEXECDIR:
# a copy of shapegate alone says which program it could not run, one line, exit 5
mkdir -p "$TMP/alone"
cp "$SG" "$TMP/alone/shapegate"
SG_KEEP=$SG
SG=$TMP/alone/shapegate
run /dev/null serve --help
expect_err1 "serve without its executable" 5 "^shapegate serve: cannot run .*/shapegate-serve: No such file or directory$"
SG=$SG_KEEP
run /dev/null serve --help
expect_match "serve --help through its executable" 0 "^usage: shapegate serve"

# libraries a command does not need are not loaded: a check the presolve decides maps neither libz3
# (bound at the first Z3 context, solver/z3fns.h) nor libzip (at the first archive, archive/zipfns.h),
# libmicrohttpd or hiredis (shapegate-serve's); one that asks Z3 maps libz3; inspect maps libzip
# (a sanitizer build loads libz3 and libzip at start, CMakeLists.txt says why: not checked there)
loaded() { LD_DEBUG=files "$SG" "$@" 2>&1 >/dev/null | grep -oE "file=lib(z3|zip|microhttpd|hiredis)[^ ]*" | sort -u | tr '\n' ' '; }
if ! ldd "$SG" | grep -qE "lib(a|t)san"; then
    LOADED=$(loaded check --json "$SRC/tests/corpus/cases/ok_add_shared_dim")
    if [ -z "$LOADED" ]; then pass; else RC=0 OUT='' ERR=$LOADED; fail "check loads only what it needs" "it loaded $LOADED"; fi
    LOADED=$(loaded check --json "$SRC/tests/corpus/cases/cr_cat_view_1d_unbounded")
    if [[ $LOADED == *libz3* && $LOADED != *libzip* ]]; then pass; else RC=0 OUT='' ERR=$LOADED; fail "a check that asks Z3 loads it" "it loaded: $LOADED"; fi
    LOADED=$(loaded inspect "$SRC/tests/corpus/cases/ok_add_shared_dim/model.pt2")
    if [[ $LOADED == *libzip* ]]; then pass; else RC=0 OUT='' ERR=$LOADED; fail "inspect loads libzip" "it loaded: $LOADED"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
