#!/usr/bin/env bash
# Constant time, checked by machine (see docs/testing.md):
# 1. crates/hwcrypt/tests/constant_time.rs under valgrind's memcheck with
#    every secret marked undefined (ctgrind): any secret-dependent branch or
#    address in soft, aesni or avx2 code fails, except the declassifying
#    branches the test lists (written out as suppressions here);
# 2. crates/hwcrypt/tests/dudect.rs: fixed-vs-random Welch's t-test of soft
#    AES and GHASH timings, DUDECT_SECONDS per case (5 by default; the long
#    run: DUDECT_SECONDS=600).
# 3. the no-LTO half of the stack-residue check (tests/stack_residue.rs; the
#    fat-LTO half is 20-stack-residue.sh), which needs the same build as the
#    second dudect run below: cargo's default release profile, `residue` in
#    Cargo.toml. One build serves both (CI time).
# Release build (what users run), without LTO and with line tables so that
# valgrind can name inlined functions.
#
# ci-build-dirs: target/constant-time target/residue
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

command -v valgrind >/dev/null || ci_apt_install valgrind

export CARGO_PROFILE_RELEASE_LTO=off
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
export CARGO_TARGET_DIR=target/constant-time
echo "== cargo test --release --no-run (constant_time, dudect)"
# (Printed after the build, not through `tee /dev/stderr`: tee opens
# /dev/stderr with O_TRUNC, which empties a CI log that stderr points to.)
built=$(cargo test --release -p hwcrypt --test constant_time --test dudect --no-run 2>&1)
printf '%s\n' "$built" >&2
ct_bin=$(grep -o "$CARGO_TARGET_DIR/release/deps/constant_time-[0-9a-f]*" <<<"$built" | tail -1)
dudect_bin=$(grep -o "$CARGO_TARGET_DIR/release/deps/dudect-[0-9a-f]*" <<<"$built" | tail -1)
[ -x "$ct_bin" ] && [ -x "$dudect_bin" ] || { echo "test binaries not found" >&2; exit 1; }

supp="$CARGO_TARGET_DIR/declassified.supp"
"$ct_bin" --write-suppressions "$supp"
echo "== valgrind memcheck: $ct_bin"
valgrind --tool=memcheck --error-exitcode=1 --suppressions="$supp" \
    --num-callers=20 --track-origins=yes --read-inline-info=yes \
    --show-leak-kinds=none "$ct_bin"

# Pinned to the last core where taskset exists: a measurement that moves
# between cores mid-run mixes two clocks and caches into the classes.
pin=()
if command -v taskset >/dev/null; then
    pin=(taskset -c "$(($(nproc) - 1))")
fi
# dudect twice: built as a crate that depends on hwcrypt gets it from
# cargo's default release profile (thin local LTO, 16 codegen units: the
# `residue` profile, with the feature the stack-residue test needs, which
# adds methods only), and as built above for valgrind (LTO off: nothing
# inlined across codegen units), where soft AES shows a small
# plaintext-dependent time (see docs/testing.md, "open finding"). Both are
# reported, neither judged.
residue=(--profile residue -p hwcrypt --features residue-test)
built_default=$(env -u CARGO_PROFILE_RELEASE_LTO -u CARGO_PROFILE_RELEASE_CODEGEN_UNITS \
    -u CARGO_PROFILE_RELEASE_DEBUG -u CARGO_TARGET_DIR \
    cargo test "${residue[@]}" --test dudect --test stack_residue --no-run 2>&1)
printf '%s\n' "$built_default" >&2
dudect_default=$(grep -o "target/residue/deps/dudect-[0-9a-f]*" <<<"$built_default" | tail -1)
[ -x "$dudect_default" ] || { echo "dudect (default profile) not found" >&2; exit 1; }
echo "== dudect, cargo's default release profile (DUDECT_SECONDS=${DUDECT_SECONDS:-5} per case${pin[*]:+, ${pin[*]}})"
"${pin[@]}" "$dudect_default"
echo "== dudect, LTO off (the valgrind build)"
"${pin[@]}" "$dudect_bin"

if [ "$(uname -m)" = "x86_64" ]; then
    echo "== stack residue, residue profile (release without LTO)"
    HWCRYPT_RESIDUE_PROFILE=no-lto env -u CARGO_PROFILE_RELEASE_LTO \
        -u CARGO_PROFILE_RELEASE_CODEGEN_UNITS -u CARGO_PROFILE_RELEASE_DEBUG \
        -u CARGO_TARGET_DIR timeout 600 cargo test "${residue[@]}" --test stack_residue
else
    echo "== stack residue: x86_64 only, skipped"
fi
