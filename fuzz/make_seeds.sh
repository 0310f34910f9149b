#!/usr/bin/env bash
# make_seeds.sh - build the seed corpora of the fuzz targets from the test fixtures.
#
#   fuzz/make_seeds.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a -DSG_FUZZ=ON build holding trace_seeds; OUT_DIR gets one folder per
# target (expr/ trace/ archive/ check/), recreated each time (never committed):
#   expr     every distinct guard expression of tests/corpus (sympy and Python forms)
#   trace    tests/data/*.json and every corpus case written as a JSON trace
#   archive  a few of the corpus's model.pt2 files (the smallest)
#   check    the smaller JSON traces of trace/
# Also copies the committed regression inputs (tests/data/regress/<target>/) in.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"/{expr,trace,archive,check}

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
find "$ROOT/tests/corpus" -name model.pt2 -printf '%s %p\n' | sort -n | head -5 |
    while read -r _ p; do
        d=$(dirname "$p")
        cp "$p" "$OUT/archive/$(basename "$(dirname "$d")")_$(basename "$d").pt2"
    done

# check: traces under 8 KiB.
find "$OUT/trace" -type f -size -8k -exec cp {} "$OUT/check/" \;

for t in expr trace archive check; do
    if [ -d "$ROOT/tests/data/regress/$t" ]; then
        find "$ROOT/tests/data/regress/$t" -type f ! -name '*.md' -exec cp {} "$OUT/$t/" \;
    fi
    echo "seeds: $t: $(find "$OUT/$t" -type f | wc -l) files"
done
