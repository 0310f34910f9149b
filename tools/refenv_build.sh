#!/bin/bash
# Builds (or checks) a Debian chroot with real PyTorch from Debian's python3-torch, for the
# end-to-end capture suite (tests/e2e) and the tools here:
#   SUITE=forky  (default) torch 2.14    SUITE=trixie  torch 2.6
# Usage: tools/refenv_build.sh [DIR]      (default DIR: /root/refenv/$SUITE; root; ~2 GB, 5-10 min)
# Idempotent: a chroot whose python3 already imports torch is left as it is (exit 0 at once).
# Without network (no Debian mirror reachable) it fails with exit 1 and says so: the e2e suite
# then fails loudly, it never passes without real torch.
set -euo pipefail
suite=${SUITE:-forky}
dir=${1:-/root/refenv/$suite}
say() { echo "refenv_build.sh ($suite, $dir): $*" >&2; }
if [[ -x $dir/usr/bin/python3 ]] && chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin python3 -c 'import torch' 2>/dev/null; then
  say "ready: torch $(chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
  exit 0
fi
[[ $(id -u) -eq 0 ]] || { say "must run as root (debootstrap, chroot)"; exit 1; }
mirror=${MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)}
[[ -n $mirror ]] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $mirror ]] || mirror=http://deb.debian.org/debian
if ! command -v debootstrap >/dev/null; then
  apt-get update -q && apt-get install -y -q debootstrap || { say "cannot install debootstrap (no network?)"; exit 1; }
fi
if [[ ! -x $dir/usr/bin/apt-get ]]; then
  mkdir -p "$dir"
  script=/usr/share/debootstrap/scripts/$suite
  [[ -e $script ]] || script=/usr/share/debootstrap/scripts/sid   # an older debootstrap lacks newer suites
  debootstrap --variant=minbase "$suite" "$dir" "$mirror" "$script" || { say "debootstrap from $mirror failed (no network?)"; exit 1; }
fi
# a testing suite's Release file can be past its Valid-Until date on a mirror snapshot
echo 'Acquire::Check-Valid-Until "false";' > "$dir/etc/apt/apt.conf.d/99no-valid-until"
mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends python3-torch python3-sympy python3-numpy' \
  || { say "apt-get install python3-torch failed (no network?)"; exit 1; }
v=$(chroot "$dir" /usr/bin/env -i PATH=/usr/bin:/bin python3 -c 'import torch; print(torch.__version__)') \
  || { say "torch does not import in the new chroot"; exit 1; }
say "built: torch $v"
