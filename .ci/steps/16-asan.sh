#!/usr/bin/env bash
# AddressSanitizer (see docs/testing.md): the known-answer, Wycheproof,
# differential and guard-page suites of the library built with
# -Zsanitizer=address on nightly, so any out-of-bounds load or store of the
# unsafe SIMD code (tails, masked zmm loads, overlapping loads) is reported
# even where it stays inside mapped memory. Its own target directory, so the
# instrumented build never mixes with the normal one.
#
# ci-build-dirs: target/asan
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

ci_nightly

export RUSTFLAGS="-Zsanitizer=address"
export RUSTDOCFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
export CARGO_TARGET_DIR=target/asan
# Optimisation level 1 (`cargo test` builds everything in the `test`
# profile), as AddressSanitizer's documentation advises: the explicit loads
# and stores of the SIMD code are instrumented the same, and the build takes
# about 80 CPU-seconds less than at level 3 (CI time) while the suites run
# as fast.
export CARGO_PROFILE_TEST_OPT_LEVEL=1
# Every length 0..=1024 in the guard-page test (512 in plain `cargo test`).
export HWCRYPT_GUARD_MAX=1024
suites=(--test kat_aes --test kat_gcm --test kat_chacha20poly1305 --test kat_xts
    --test wycheproof --test differential --test differential_aead
    --test differential_xts --test guard_pages)
echo "== RUSTFLAGS=$RUSTFLAGS cargo +nightly test --target x86_64-unknown-linux-gnu ${suites[*]}"
cargo +nightly test -p hwcrypt --target x86_64-unknown-linux-gnu "${suites[@]}"
