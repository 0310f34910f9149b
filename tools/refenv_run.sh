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
mkdir -p "$dir$here"
mountpoint -q "$dir$here" || mount --bind "$here" "$dir$here"
exec chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  PYTHONDONTWRITEBYTECODE=1 sh -c 'cd "$0" && exec "$@"' "$here" "$@"
