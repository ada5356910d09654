#!/usr/bin/env bash
# Documentation and packaging (issue 14):
# - the library's API docs build with no warnings (`cargo doc -D warnings`,
#   with and without the `aead` feature), and every public type's docs
#   carry a runnable example;
# - the stated minimum Rust version (workspace `rust-version`) builds the
#   published crates: `cargo +MSRV check` of hwcrypt (feature aead) and
#   hwcrypt-cli (with hwcrypt-bench and hwcrypt-age), the library and the
#   binary a user builds (the test suites and benches need the current
#   toolchain only), with the toolchain installed by rustup where missing;
#   where it cannot be installed, clippy's `incompatible_msrv` lint (std APIs
#   newer than rust-version) instead;
# - `cargo package` of hwcrypt, hwcrypt-bench, hwcrypt-age and hwcrypt-cli
#   succeeds, verified by building each from its package (together, so each
#   finds the others in cargo's local overlay), and each .crate stays under
#   crates.io's 10 MB limit (the test vectors stay out of it).
# About 2 CPU-minutes from a clean target directory, seconds when warm.
#
# ci-build-dirs: target/doc target/package-verify
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh
export CARGO_TERM_COLOR=never
passed=0
failed=0
check() { # NAME COMMAND...: runs one check, counts it
    local name=$1
    shift
    echo "-- $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

docs() {
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p hwcrypt --features aead &&
        RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p hwcrypt
}
check "cargo doc -D warnings (hwcrypt)" docs

# Every `pub struct|enum|trait|type` of the library has a code block in the
# doc comment right above it (run as a doctest by `cargo test`).
examples() {
    local missing
    missing=$(awk '
        FNR == 1 { doc = ""; has = 0 }
        /^[[:space:]]*\/\/\// { doc = doc $0 "\n"; if ($0 ~ /```/) has = 1; next }
        /^[[:space:]]*#\[/ { next }
        /^pub (struct|enum|trait|type) / {
            if (!has && FILENAME !~ /lib\.rs$/) print FILENAME ":" FNR ": " $0
        }
        { doc = ""; has = 0 }
    ' $(find crates/hwcrypt/src -name '*.rs' | sort))
    if [ -n "$missing" ]; then
        echo "public types whose docs have no example:"
        echo "$missing"
        return 1
    fi
}
check "every public type's docs carry an example" examples

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
msrv_check() {
    if rustup toolchain list | grep -q "^$msrv" ||
        ci_locked timeout 120 rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1; then
        echo "cargo +$msrv check -p hwcrypt -p hwcrypt-cli --lib --bins --features hwcrypt/aead"
        cargo "+$msrv" check -p hwcrypt -p hwcrypt-cli --lib --bins --features hwcrypt/aead
    else
        echo "Rust $msrv cannot be installed here: clippy's incompatible_msrv lint instead"
        cargo clippy -p hwcrypt -p hwcrypt-cli --all-targets --features hwcrypt/aead -- \
            -D clippy::incompatible_msrv
    fi
}
check "minimum Rust version $msrv" msrv_check

package() {
    # Cargo treats the packages it verifies against (ours, from a local
    # registry) as immutable: drop its unpacked copies and build state of
    # them from an earlier run, so the check always sees this tree.
    local vt=target/package-verify
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/hwcrypt*-[0-9]* \
        "$vt"/debug/.fingerprint/hwcrypt* "$vt"/package
    # The verification builds are unoptimised; without debug information
    # (nothing runs them) they compile about a quarter faster.
    CARGO_PROFILE_DEV_DEBUG=false \
        cargo package -p hwcrypt -p hwcrypt-bench -p hwcrypt-age -p hwcrypt-cli --allow-dirty \
        --target-dir "$vt" || return 1
    local limit=$((10 * 1000 * 1000)) crate size ok=0
    for crate in "$vt"/package/hwcrypt*.crate; do
        size=$(stat -c %s "$crate")
        echo "$crate: $size bytes ($(tar tzf "$crate" | wc -l) files)"
        [ "$size" -lt "$limit" ] || { echo "$crate is over the 10 MB limit"; ok=1; }
    done
    return $ok
}
check "cargo package (hwcrypt, hwcrypt-bench, hwcrypt-age, hwcrypt-cli)" package

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
