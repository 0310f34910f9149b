#!/usr/bin/env bash
# build.sh - shapegate's quick start and test entry point.
#
#   ./build.sh demo    install missing packages, build (Release) into build/, run the demo
#   ./build.sh test    install missing packages, build and run ctest in build/, then again
#                      with ASan+UBSan in build-asan/, then the threaded tests (ctest -L
#                      threads) with ThreadSanitizer in build-tsan/; fails if any fails
#   ./build.sh deps    only install missing Debian packages (apt-get, as root or via sudo)
#   ./build.sh build   only configure and build build/
#   ./build.sh tsan    only the threaded tests under ThreadSanitizer (build-tsan/)
#
# Needs Debian 12 (bookworm) or a system with the same packages.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD

# Keep this list equal to the one in .ci/run.
PACKAGES=(build-essential cmake ninja-build pkg-config libz3-dev z3 libzip-dev libcjson-dev
          libmicrohttpd-dev python3 jq clang libclang-rt-14-dev curl nginx libhiredis-dev redis-server zlib1g-dev)
DEMO_CASE=tests/corpus/cases/err_div_view_8
DEMO_SPEC_CASE=tests/corpus/cases/large_transformer_8layers_auto
JOBS=$(nproc 2>/dev/null || echo 2)

say() { printf '==> %s\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,13s/^# \{0,1\}//p' "$0"
}

# Install the packages of PACKAGES that dpkg does not report as installed.
deps() {
    local missing=() p
    if ! command -v dpkg-query >/dev/null 2>&1; then
        say "dpkg not found: not a Debian system; make sure these are installed: ${PACKAGES[*]}"
        return 0
    fi
    for p in "${PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        say "all packages present"
        return 0
    fi
    say "installing: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo: install ${missing[*]} yourself"
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

# configure_build DIR [cmake options...]: configure with Ninja and build.
configure_build() {
    local dir=$1
    shift
    say "building $dir"
    cmake -S "$ROOT" -B "$ROOT/$dir" -G Ninja "$@"
    cmake --build "$ROOT/$dir" -j "$JOBS"
}

build() {
    configure_build build -DCMAKE_BUILD_TYPE=Release
}

# The demo: `shapegate check` on a real torch.export case (what a user runs when torch says
# "Constraints violated"), then each guard torch recorded in the three forms shapegate prints.
demo() {
    local sg="$ROOT/build/shapegate" guards="$DEMO_CASE/guards.json" env_idx expr rc=0
    local -a exprs=()

    [ -x "$sg" ] || die "$sg is missing: build failed?"
    echo
    say "case $DEMO_CASE: $(jq -r '.description // .name' "$DEMO_CASE/case.json")"
    echo "torch $(jq -r '.torch_version' "$DEMO_CASE/case.json") said:"
    jq -r '.error_msg_attr // .error_message // "(exported)"' "$DEMO_CASE/case.json" | sed 's/^/  | /'
    echo
    say "shapegate check --explain --python $DEMO_CASE"
    "$sg" check --explain --python "$DEMO_CASE" || rc=$?
    # 1 means a violation was found (the case is one): a finding, not a failure of the demo
    [ "$rc" -le 1 ] || die "shapegate check failed with exit code $rc"
    echo
    say "shapegate spec $DEMO_SPEC_CASE   (Dim.AUTO everywhere: what the guards allow, made explicit)"
    "$sg" spec "$DEMO_SPEC_CASE" || die "shapegate spec failed"

    env_idx=$(jq -r '.main_shape_env_index // 0' "$guards")
    mapfile -t exprs < <(jq -r ".shape_envs[$env_idx].guards[].expr" "$guards")
    echo
    say "the guards torch recorded, as shapegate reads them (sympy | Python | SMT-LIB):"
    for expr in "${exprs[@]}"; do
        printf '  %s | %s | %s\n' "$("$sg" parse -- "$expr")" "$("$sg" parse --python -- "$expr")" \
            "$("$sg" parse --smt -- "$expr" | grep assert)"
    done
    echo
    say "demo done"
}

# run_ctest DIR [env assignments...]: ctest with output on failure; returns its status.
run_ctest() {
    local dir=$1
    shift
    say "ctest in $dir"
    env "$@" ctest --test-dir "$ROOT/$dir" --output-on-failure -j "$JOBS"
}

# The threaded tests under ThreadSanitizer: only their programs are built (TSan and ASan do not
# combine, and the rest of the suite has no threads of its own). tests/tsan.supp names the two
# reports inside Z3 4.8.12 that are not ours.
tsan() {
    say "building build-tsan (the threaded tests)"
    cmake -S "$ROOT" -B "$ROOT/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_TSAN=ON
    cmake --build "$ROOT/build-tsan" -j "$JOBS" --target test_engine test_budget shapegate serve_traces
    say "ctest -L threads in build-tsan"
    env TSAN_OPTIONS="suppressions=$ROOT/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1" \
        ctest --test-dir "$ROOT/build-tsan" --output-on-failure -L threads
}

test_all() {
    local plain=0 asan=0 thread=0
    build
    run_ctest build || plain=$?
    configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DSG_SANITIZE=ON
    run_ctest build-asan ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 || asan=$?
    tsan || thread=$?
    if [ "$plain" -ne 0 ] || [ "$asan" -ne 0 ] || [ "$thread" -ne 0 ]; then
        die "tests failed (build/: status $plain, build-asan/: status $asan, build-tsan/: status $thread)"
    fi
    say "all tests passed in build/, build-asan/ and build-tsan/"
}

case "${1:-}" in
    deps) deps ;;
    build) deps; build ;;
    demo) deps; build; demo ;;
    test) deps; test_all ;;
    tsan) deps; tsan ;;
    -h | --help | help) usage ;;
    *) usage >&2; exit 2 ;;
esac
