#!/usr/bin/env bash
# Fuzzing (see docs/testing.md): builds every cargo-fuzz target under fuzz/
# (libFuzzer + AddressSanitizer, debug assertions on) and runs each for a
# bounded time from its committed seed corpus (fuzz/corpus/TARGET), two
# targets at a time. A crash fails the step; its input is kept under
# fuzz/artifacts/TARGET/ and printed in base64 here.
#
# FUZZ_SECONDS (default 10) is the time per target; the long local run is
# `FUZZ_SECONDS=600 bash .ci/steps/12-fuzz.sh` (or `cargo +nightly fuzz run
# TARGET -- -max_total_time=600` for one target).
#
# ci-build-dirs: fuzz/target
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

seconds=${FUZZ_SECONDS:-10}

# Nightly and cargo-fuzz, where missing.
ci_nightly
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    ci_locked sh -c 'cargo fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked'
fi

build_start=$SECONDS
echo "== cargo +nightly fuzz build (fuzz/ is its own workspace)"
cargo +nightly fuzz build
echo "== fuzz build: $((SECONDS - build_start)) s"

bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
work=fuzz/target/ci-run
rm -rf "$work"
mkdir -p "$work"
mapfile -t targets < <(cargo +nightly fuzz list)

# Runs one target: a scratch corpus first (libFuzzer adds new inputs to it),
# the committed seeds second (read only). Leak detection is off: the crack
# search's worker threads register thread-local destructors through glibc
# (`__cxa_thread_atexit_impl`), which LeakSanitizer reports as a 32-byte
# leak when the thread exits; memory errors are still reported by ASan.
run_target() {
    local t=$1 rc=0
    mkdir -p "$work/corpus/$t" "fuzz/artifacts/$t" "fuzz/corpus/$t"
    "$bin_dir/$t" "$work/corpus/$t" "fuzz/corpus/$t" \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -detect_leaks=0 \
        -artifact_prefix="fuzz/artifacts/$t/" -print_final_stats=1 \
        >"$work/$t.log" 2>&1 || rc=$?
    echo "$rc" >"$work/$t.rc"
}

run_start=$SECONDS
lane() {
    # Targets i, i+2, i+4, ... one after another.
    local i=$1
    for ((; i < ${#targets[@]}; i += 2)); do
        run_target "${targets[$i]}"
    done
}
lane 0 &
lane0=$!
lane 1 &
lane1=$!
wait "$lane0" "$lane1"

passed=0
failed=0
for t in "${targets[@]}"; do
    log="$work/$t.log"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$(cat "$work/$t.rc" 2>/dev/null || echo missing)" != 0 ]; then
        failed=$((failed + 1))
        echo "FAIL fuzz target $t (exit $(cat "$work/$t.rc" 2>/dev/null), after ${runs:-?} executions); log tail:"
        tail -40 "$log" | sed 's/^/    /'
        for a in "fuzz/artifacts/$t"/*; do
            [ -f "$a" ] || continue
            echo "    crash input saved as $a ($(wc -c <"$a") bytes); base64:"
            base64 -w 76 "$a" | sed 's/^/      /'
            echo "    reproduce: cargo +nightly fuzz run $t $a"
        done
    else
        passed=$((passed + 1))
        echo "ok   fuzz target $t: ${runs:-0} executions in ${seconds} s"
    fi
done
echo "== fuzz runs: $((SECONDS - run_start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
