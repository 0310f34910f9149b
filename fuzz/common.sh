# shellcheck shell=bash
# common.sh - sourced by fuzz/smoke.sh and fuzz/long.sh: the fuzz build and each target's options.
#
#   fuzz_build            configure and build every target in $B (a clang -DSG_FUZZ=ON tree)
#   fuzz_opts TARGET      print the target's libFuzzer options (dictionary, input size), one per line
#
# Needs ROOT (the source tree) and B (the build tree) set by the caller.

FUZZ_TARGETS="expr trace archive graph check spec dir torch_trace"

fuzz_build() {
    CC=clang cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_FUZZ=ON \
        -DBUILD_TESTING=OFF -DSG_FUZZ_SANITIZERS="${SG_FUZZ_SANITIZERS:-address,undefined}" \
        -DSG_FUZZ_INTERCEPTORS="${SG_FUZZ_INTERCEPTORS:-ON}" >/dev/null
    # shellcheck disable=SC2046,SC2086  # the target list is words
    cmake --build "$B" -j "$(nproc 2>/dev/null || echo 2)" \
        --target $(printf 'fuzz_%s ' $FUZZ_TARGETS) trace_seeds
}

fuzz_opts() {
    case "$1" in
    expr) echo "-dict=$ROOT/fuzz/expr.dict"; echo "-max_len=4096" ;;
    spec) echo "-dict=$ROOT/fuzz/spec.dict"; echo "-max_len=4096" ;;
    archive | graph | dir | torch_trace) echo "-max_len=65536" ;;
    *) echo "-max_len=4096" ;;
    esac
    echo "-rss_limit_mb=2048"
    echo "-timeout=10"
}

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
