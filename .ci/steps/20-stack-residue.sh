#!/usr/bin/env bash
# Key material left on the dead stack (issue 13 §5.3): the stack-residue test
# (crates/hwcrypt/tests/stack_residue.rs) under the project's release profile
# (fat LTO) and under cargo's default release profile without LTO (`residue`
# in Cargo.toml: what a crate depending on hwcrypt gets). It fails on any
# residue docs/security.md ("Key material in memory") does not declare.
# Budget: under 3 minutes on 2 cores (two optimised builds, ~2 s of scanning).
#
# ci-build-dirs: target/release target/residue
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(uname -m)" != "x86_64" ]; then
    echo "stack residue: x86_64 only, skipped"
    exit 0
fi
export CARGO_TERM_COLOR=never
test_args=(-p hwcrypt --features residue-test --test stack_residue)
echo "-- release profile (fat LTO)"
HWCRYPT_RESIDUE_PROFILE=release timeout 600 cargo test --release "${test_args[@]}"
echo "-- residue profile (release without LTO)"
HWCRYPT_RESIDUE_PROFILE=no-lto timeout 600 cargo test --profile residue "${test_args[@]}"
