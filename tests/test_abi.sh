#!/usr/bin/env bash
# test_abi.sh LIB HEADERDIR: libshapegate.so exports only the public API.
#   - every dynamic symbol it defines starts with sg_ and is no semi-private sg_x__y;
#   - every one is declared SG_API in the public headers, and every SG_API function there is
#     exported (nothing declared but missing, nothing exported but undeclared);
#   - nothing in the public headers mentions __int128, sg_int or a Z3 type.
# Ends with "N passed, N failed".
set -u
LIB=$1
INC=$2
pass=0
failn=0
ok() { pass=$((pass + 1)); }
bad() { failn=$((failn + 1)); printf 'FAIL %s\n' "$*" >&2; }

exported=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort -u)
declared=$(cat "$INC"/shapegate/*.h | tr '\n' ' ' | grep -o 'SG_API [^;{]*(' \
           | grep -o 'sg_[A-Za-z0-9_]*($' | tr -d '(' | sort -u)

if [ -n "$exported" ]; then ok; else bad "nm lists no symbols of $LIB"; fi
n=$(printf '%s\n' "$exported" | grep -vc '^sg_')
if [ "$n" -eq 0 ]; then ok; else bad "exported symbols without the sg_ prefix: $(printf '%s\n' "$exported" | grep -v '^sg_' | head -5 | tr '\n' ' ')"; fi
n=$(printf '%s\n' "$exported" | grep -c '__')
if [ "$n" -eq 0 ]; then ok; else bad "semi-private symbols exported: $(printf '%s\n' "$exported" | grep '__' | head -5 | tr '\n' ' ')"; fi
extra=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
if [ -z "$extra" ]; then ok; else bad "exported but not declared SG_API: $(echo $extra | head -c 300)"; fi
missing=$(comm -13 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
if [ -z "$missing" ]; then ok; else bad "declared SG_API but not exported: $(echo $missing | head -c 300)"; fi
if grep -nE '__int128|\bsg_int\b|\bsg_uint\b|\bZ3_[a-z]|<z3\.h>' "$INC"/shapegate/*.h >/dev/null; then
    bad "a public header mentions a 128-bit or Z3 type: $(grep -nE '__int128|\bsg_int\b|\bZ3_[a-z]|<z3\.h>' "$INC"/shapegate/*.h | head -3)"
else
    ok
fi
printf 'libshapegate.so exports %d symbols, %d declared SG_API\n' "$(printf '%s\n' "$exported" | wc -l)" \
    "$(printf '%s\n' "$declared" | wc -l)"
printf '%d passed, %d failed\n' "$pass" "$failn"
[ "$failn" -eq 0 ]
