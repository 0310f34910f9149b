#!/bin/bash
# Runs COMMAND inside a reference chroot (tools/refenv_build.sh), with the current directory
# bind-mounted at the same path, so that the repository and build outputs are visible on both
# sides. Needs root (mount, chroot). The environment inside is clean: pass variables with
#   tools/refenv_run.sh DIR env NAME=VALUE ... COMMAND
# Usage: tools/refenv_run.sh DIR COMMAND [ARG...]
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 CHROOT_DIR COMMAND [ARG...]" >&2; exit 2; }
dir=$1; shift
[[ -x $dir/usr/bin/python3 ]] || { echo "refenv_run.sh: $dir is not a reference chroot (no usr/bin/python3); build it with tools/refenv_build.sh" >&2; exit 3; }
here=$(pwd)
mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
# The bind mount must show this very folder. A chroot kept from an earlier run can still hold a
# mount of a folder that was deleted since and made again at the same path (a CI clone): that
# mount is stale (getcwd fails inside), so it is dropped and made again.
same_dir() { [[ $(stat -Lc %d:%i "$1" 2>/dev/null) == "$(stat -Lc %d:%i "$2" 2>/dev/null)" ]]; }
mkdir -p "$dir$here"
if ! same_dir "$here" "$dir$here"; then
  while mountpoint -q "$dir$here"; do umount -l "$dir$here"; done
  mkdir -p "$dir$here"
  mount --bind "$here" "$dir$here"
  same_dir "$here" "$dir$here" || { echo "refenv_run.sh: cannot bind $here into $dir" >&2; exit 3; }
fi
exec chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  PYTHONDONTWRITEBYTECODE=1 sh -c 'cd "$0" && exec "$@"' "$here" "$@"
