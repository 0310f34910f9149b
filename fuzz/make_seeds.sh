#!/usr/bin/env bash
# make_seeds.sh - build the seed corpora of the fuzz targets from the test fixtures.
#
#   fuzz/make_seeds.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a -DSG_FUZZ=ON build holding trace_seeds; OUT_DIR gets one folder per
# target (expr/ trace/ archive/ check/ spec/ dir/), recreated each time (never committed):
#   expr     every distinct guard expression of tests/corpus (sympy and Python forms)
#   trace    tests/data/*.json and every corpus case written as a JSON trace
#   archive  a few of the corpus's model.pt2 files (the smallest)
#   graph    the model JSON of every corpus model.pt2 under 64 KiB (trace_seeds --models)
#   check    the smaller JSON traces of trace/, and each with its named Dims narrowed
#   spec     spec JSON (the corpus's) and override items for fuzz_spec's fixed traces
#   dir      guards.json NUL case.json of the corpus cases under 60 KiB
# Also copies the committed regression inputs (tests/data/regress/<target>/) in.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"/{expr,trace,archive,graph,check,spec,dir,torch_trace}

# expr: one file per distinct guard text (name = hash of the text).
n=0
while IFS= read -r expr; do
    [ -n "$expr" ] || continue
    h=$(printf '%s' "$expr" | sha1sum | cut -c1-16)
    printf '%s' "$expr" >"$OUT/expr/$h"
    n=$((n + 1))
done < <(find "$ROOT/tests/corpus" -name guards.json -print0 |
         xargs -0 jq -r '.. | objects | (.expr?, .python_expr?) | strings' 2>/dev/null | sort -u)

# trace: the JSON fixtures, then every capture folder as a JSON trace.
cp "$ROOT"/tests/data/*.json "$OUT/trace/"
find "$ROOT/tests/corpus" -mindepth 2 -maxdepth 2 -type d -print0 |
    xargs -0 "$BUILD/fuzz/trace_seeds" "$OUT/trace" 2>/dev/null || true

# archive: the five smallest model.pt2 files.
# (sed, not head: head closing the pipe early kills sort with SIGPIPE under pipefail)
find "$ROOT/tests/corpus" -name model.pt2 -printf '%s %p\n' | sort -n | sed -n 1,5p |
    while read -r _ p; do
        d=$(dirname "$p")
        cp "$p" "$OUT/archive/$(basename "$(dirname "$d")")_$(basename "$d").pt2"
    done

# graph: every archive's model JSON under 64 KiB, as sg_graph_load parses it (small: fast runs).
args=()
while IFS= read -r p; do
    d=$(dirname "$p")
    args+=("$p" "$(basename "$(dirname "$d")")_$(basename "$d")")
done < <(find "$ROOT/tests/corpus" -name model.pt2 | sort)
# and the archives whose guards_code narrows the declared ranges (tests/data/boundaries/archives)
for p in "$ROOT"/tests/data/boundaries/archives/*.pt2; do
    [ -f "$p" ] && args+=("$p" "boundaries_$(basename "$p" .pt2)")
done
"$BUILD/fuzz/trace_seeds" --models "$OUT/graph" "${args[@]}" 2>/dev/null || true
find "$OUT/graph" -type f -size +64k -delete

# check: traces under 8 KiB, and each again with every named Dim narrowed to the 61 values
# around its example size, so that fuzz_check's brute-force confirmation applies.
find "$OUT/trace" -type f -size -8k -exec cp {} "$OUT/check/" \;
for f in "$OUT"/check/*.json; do
    jq -c '.inputs |= map(if (.spec.kind? == "dim") and (.size | type) == "number" then
               .spec.min = ([.size - 30, 2] | max) | .spec.max = .size + 30 else . end)' "$f" \
        >"$OUT/check/small_$(basename "$f")" 2>/dev/null || rm -f "$OUT/check/small_$(basename "$f")"
done

# spec: one byte (fuzz_spec.c: bit 0 overrides, bits 1-2 the fixed trace, bit 3 check) and then
# each fixed trace's own spec and every corpus spec as JSON, or override items that fit the trace.
C="$ROOT/tests/corpus/cases"
spec_seed() { # NAME MODEBYTE(decimal) TEXT
    { printf "\\$(printf '%03o' "$2")"; printf '%s' "$3"; } >"$OUT/spec/$1"
}
k=0
for t in 0 1 2; do
    for c in ok_nested_dict_list ok_derived_spec_2x err_spec_bad_keys; do
        js=$(jq -c '.dynamic_shapes' "$C/$c/case.json")
        spec_seed "json_${t}_$c" $((t * 2 + 8)) "$js"
    done
done
for c in "$C"/*/case.json; do
    k=$((k + 1))
    spec_seed "json_corpus_$k" 8 "$(jq -c '.dynamic_shapes' "$c")"
done
nl=$'\n'
spec_seed over_nested_a 9 "inputs.a.0=B:2..64${nl}inputs.b.1.1=T:0..32"
spec_seed over_nested_shared 9 "['inputs']['b'][0].0=B${nl}scale.0=AUTO:4..64${nl}B:2..32"
spec_seed over_nested_static 1 "inputs.b.1.1=7${nl}scale.0=STATIC${nl}inputs.a.0=DYNAMIC"
spec_seed over_derived 11 "x.0=dx:2..16${nl}y.0=2*dx"
spec_seed over_derived_root 11 "y.0=2*dx+1${nl}dx:3..9${nl}x.0=dx"
spec_seed over_derived_source 3 "L['x'].size()[0]=dx:..oo${nl}y.0=8*_dx${nl}_dx:2.."
spec_seed over_bad_keys 13 "x.0=dx:0..64"
spec_seed over_bad_keys_auto 5 "L['x'].size()[0]=AUTO"

# dir: guards.json, a NUL, case.json of every corpus case under 60 KiB in all.
for d in "$C"/* "$ROOT"/tests/corpus/cases-2.6/*; do
    [ -f "$d/guards.json" ] && [ -f "$d/case.json" ] || continue
    n=$(($(stat -c %s "$d/guards.json") + $(stat -c %s "$d/case.json")))
    [ "$n" -lt 61440 ] || continue
    { cat "$d/guards.json"; printf '\0'; cat "$d/case.json"; } >"$OUT/dir/$(basename "$(dirname "$d")")_$(basename "$d")"
done

# torch_trace: the TORCH_TRACE fixtures (real torch 2.14 and 2.6 logs) cut to their first 60 KiB (whole lines).
for f in "$ROOT"/tests/data/torch_trace/*/*.log.gz; do
    [ -f "$f" ] || continue
    # head stops reading early: zcat's SIGPIPE is expected, not a failure
    { zcat "$f" || true; } | head -c 61440 | sed '$d' >"$OUT/torch_trace/$(basename "$(dirname "$f")")_$(basename "$f" .log.gz)"
done

for t in expr trace archive graph check spec dir torch_trace; do
    if [ -d "$ROOT/tests/data/regress/$t" ]; then
        find "$ROOT/tests/data/regress/$t" -type f ! -name '*.md' -exec cp {} "$OUT/$t/" \;
    fi
    echo "seeds: $t: $(find "$OUT/$t" -type f | wc -l) files"
done
