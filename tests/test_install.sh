#!/usr/bin/env bash
# test_install.sh BUILD_DIR SOURCE_DIR WORK_DIR: `cmake --install` into a temporary prefix, then a
# C program built only against the installed headers and `pkg-config shapegate` (no include
# path or library of the build tree) checks a corpus case and must print the CLI's verdict; the
# installed CLI runs, and its `serve` finds the installed service executable.
# Ends with "N passed, N failed".
set -u
BUILD=$1
SRC=$2
WORK=$3
CC=${CC:-cc}
pass=0
failn=0
ok() { pass=$((pass + 1)); }
bad() { failn=$((failn + 1)); printf 'FAIL %s\n' "$*" >&2; }

rm -rf "$WORK"
mkdir -p "$WORK"
PREFIX=$WORK/prefix
if cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1; then ok; else bad "cmake --install: $(tail -3 "$WORK/install.log")"; fi
PC=$(find "$PREFIX" -name shapegate.pc | head -1)
LIBDIR=$(dirname "$(dirname "$PC")")
if [ -f "$PC" ] && [ -f "$PREFIX/include/shapegate/shapegate.h" ] && ls "$LIBDIR"/libshapegate.so* >/dev/null 2>&1; then
    ok
else
    bad "the install tree lacks shapegate.pc, the headers or libshapegate.so"
fi
# only the public headers: no module header, nothing of the library's insides
if [ -z "$(find "$PREFIX/include" -name '*.h' ! -path '*/shapegate/*')" ] && ! grep -rq '__int128\|<z3.h>' "$PREFIX/include"; then
    ok
else
    bad "the installed headers hold more than the public API"
fi
export PKG_CONFIG_PATH="$(dirname "$PC")"
FLAGS=$(pkg-config --cflags --libs shapegate 2>"$WORK/pc.err")
if [ -n "$FLAGS" ] && ! printf '%s' "$FLAGS" | grep -q -- "-I$SRC/include"; then ok; else bad "pkg-config shapegate: '$FLAGS' $(cat "$WORK/pc.err")"; fi
if $CC -std=c11 -Wall -Wextra -Werror -o "$WORK/consumer" "$SRC/tests/install/consumer.c" $FLAGS \
       -Wl,-rpath,"$LIBDIR" >"$WORK/cc.log" 2>&1; then
    ok
else
    bad "building the consumer: $(head -5 "$WORK/cc.log")"
fi
if [ -x "$WORK/consumer" ]; then
    # linked against the installed library, not the build tree's
    if ldd "$WORK/consumer" | grep libshapegate | grep -q "$PREFIX"; then ok; else bad "the consumer does not load the installed libshapegate.so"; fi
    if "$WORK/consumer" "$SRC/tests/corpus/cases/err_div_view_8" violations >"$WORK/out" 2>"$WORK/err" \
       && grep -q '"verdict":"violations"' "$WORK/out" && grep -q 'fix: dx = 8\*_dx' "$WORK/out"; then
        ok
    else
        bad "the consumer on err_div_view_8: $(head -3 "$WORK/err" "$WORK/out")"
    fi
    if "$WORK/consumer" "$SRC/tests/corpus/cases/ok_add_shared_dim" ok >"$WORK/out2" 2>"$WORK/err2"; then ok; else bad "the consumer on ok_add_shared_dim: $(head -3 "$WORK/err2")"; fi
fi
# the installed CLI runs from the prefix
if "$PREFIX/bin/shapegate" --version >"$WORK/v" 2>&1 && grep -q "^shapegate " "$WORK/v"; then ok; else bad "the installed shapegate: $(cat "$WORK/v")"; fi
# `serve` runs the installed service executable (LIBEXECDIR/shapegate/shapegate-serve), not the build tree's
if "$PREFIX/bin/shapegate" serve --help >"$WORK/sv" 2>&1 && grep -q "^usage: shapegate serve" "$WORK/sv" \
   && [ -x "$(find "$PREFIX" -path '*/shapegate/shapegate-serve' | head -1)" ] && [ ! -e "$PREFIX/bin/shapegate-serve" ]; then
    ok
else
    bad "the installed shapegate serve: $(head -3 "$WORK/sv")"
fi
printf '%d passed, %d failed\n' "$pass" "$failn"
[ "$failn" -eq 0 ]
