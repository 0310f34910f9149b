#!/bin/bash
# CI hook for the Python package and the end-to-end capture suite (issue 15).
#
#   tests/e2e/ci.sh [SHAPEGATE_BINARY]        (default: build/shapegate; root; 15-27 min on 2 cores)
#   SG_E2E_SUITES="forky trixie" (default) picks the chroots: forky = torch 2.14, trixie = 2.6
#
# 1. the package's unit tests on the host (no torch; the CLI backend runs the binary);
# 2. each reference chroot is built if missing (tools/refenv_build.sh: Debian's python3-torch,
#    forky = torch 2.14, trixie = torch 2.6; $SG_REFENV_2_14 / $SG_REFENV_2_6 override the
#    folders), then the package's torch tests run inside it;
# 3. the e2e suite (tests/e2e/run.py): capture in torch, check outside, fixes re-exported.
# A chroot that cannot be built (no network) makes this fail, loudly; nothing is skipped quietly.
# Exit 0 only when every step passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-${SHAPEGATE_BIN:-build/shapegate}}
if [[ ! -x $bin ]]; then
  echo "tests/e2e/ci.sh: FAIL: $bin is missing; build the shapegate target first" >&2
  exit 1
fi
status=0
step() { echo "== tests/e2e/ci.sh: $*"; }

step "python unit tests (host)"
python3 python/tests/run.py --bin "$bin" || status=1

declare -A dirs=([forky]=${SG_REFENV_2_14:-/root/refenv/forky} [trixie]=${SG_REFENV_2_6:-/root/refenv/trixie})
# SG_E2E_SUITES: the chroots to run (default both; "forky" alone = torch 2.14 only)
suites=${SG_E2E_SUITES:-forky trixie}
versions=()
for suite in $suites; do
  dir=${dirs[$suite]}
  step "reference chroot $suite ($dir)"
  if ! SUITE=$suite tools/refenv_build.sh "$dir"; then
    echo "tests/e2e/ci.sh: FAIL: the $suite chroot cannot be built; the e2e suite cannot run in real torch" >&2
    status=1
    continue
  fi
  step "python unit tests in $suite"
  tools/refenv_run.sh "$dir" python3 python/tests/run.py --no-binary || status=1
  versions+=("$([[ $suite == forky ]] && echo 2.14 || echo 2.6)")
done

step "e2e suite"
if [[ ${#versions[@]} -eq 0 ]]; then
  echo "tests/e2e/ci.sh: FAIL: no reference chroot to run the e2e suite in" >&2
  exit 1
fi
SG_REFENV_2_14=${dirs[forky]} SG_REFENV_2_6=${dirs[trixie]} \
  python3 tests/e2e/run.py --bin "$bin" --versions "$(IFS=,; echo "${versions[*]}")" || status=1
exit $status
