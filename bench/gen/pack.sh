#!/bin/sh
# Pack recorded traces for committing: bench/traces/NAME.tar.gz holding NAME/case.json and
# NAME/guards.json (what shapegate check reads), or NAME.json for a synth trace.
#   bench/gen/pack.sh [--from DIR] NAME...
# Refuses an archive over 1 MiB (commit the generator only; bench/gen/regen.sh remakes it).
set -eu
cd "$(dirname "$0")/../.."
from=build/scale-traces
if [ "${1:-}" = --from ]; then from=$2; shift 2; fi
mkdir -p bench/traces
for name in "$@"; do
    if [ -d "$from/$name" ]; then
        set_files="$name/case.json $name/guards.json"
    else
        set_files="$name.json"
    fi
    tmp=bench/traces/.$name.tar.gz.tmp
    # fixed owner, mode and time: the same trace packs to the same bytes
    tar -C "$from" --owner=0 --group=0 --numeric-owner --mode=a+r,u+w --mtime=@0 --sort=name -cf - $set_files \
        | gzip -9n > "$tmp"
    size=$(stat -c %s "$tmp")
    if [ "$size" -gt 1048576 ]; then
        rm -f "$tmp"
        echo "pack: $name is $size bytes compressed (> 1 MiB): not packed; bench/gen/regen.sh $name remakes it" >&2
        continue
    fi
    mv "$tmp" "bench/traces/$name.tar.gz"
    echo "bench/traces/$name.tar.gz: $size bytes"
done
