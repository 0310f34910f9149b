#!/bin/sh
# Remake the traces of bench/traces.tsv into a cache folder (default build/scale-traces):
#   bench/gen/regen.sh [--out DIR] [--torch CHROOT] NAME...      (or: all)
# torch traces run bench/gen/run.py inside the reference chroot (needs root: run.sh bind-mounts
# the repository); synth traces run bench/gen/synth.py here, tile traces bench/gen/tile.py on
# an already recorded sweep trace. One export at a time: the biggest
# (view800, sweep3000, sweep10000) take from half an hour to hours of one core.
set -eu
cd "$(dirname "$0")/../.."
out=build/scale-traces
chroot=/root/refenv/forky
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    --torch) chroot=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: bench/gen/regen.sh [--out DIR] [--torch CHROOT] NAME... | all" >&2; exit 2; }
if [ "$1" = all ]; then
    set -- $(grep -v '^#' bench/traces.tsv | cut -f1)
fi
mkdir -p "$out"
for name in "$@"; do
    row=$(grep -v '^#' bench/traces.tsv | awk -F'\t' -v n="$name" '$1 == n') || true
    [ -n "$row" ] || { echo "regen: $name is not in bench/traces.tsv" >&2; exit 2; }
    kind=$(printf '%s\n' "$row" | cut -f2)
    args=$(printf '%s\n' "$row" | cut -f3)
    case $kind in
    torch) /work/shared/refenv/run.sh "$chroot" python3 bench/gen/run.py --out "$out" $args ;;
    synth) python3 bench/gen/synth.py $args "$out/$name.json" ;;
    tile) set -- $args; python3 bench/gen/tile.py "$out/$1" "$2" "$out/$name.json" ;;
    *) echo "regen: $name: unknown kind $kind" >&2; exit 2 ;;
    esac
done
