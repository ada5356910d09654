#!/usr/bin/env bash
# Key material left on the dead stack (issue 13 §5.3): the stack-residue test
# (crates/hwcrypt/tests/stack_residue.rs) under the project's release profile
# (fat LTO). It fails on any residue docs/security.md ("Key material in
# memory") does not declare. The same test under cargo's default release
# profile without LTO (`residue` in Cargo.toml: what a crate depending on
# hwcrypt gets) runs in 14-constant-time.sh, whose dudect run needs that
# build too. Budget: about 2 minutes on 2 cores (one fat-LTO build, ~1 s of
# scanning).
#
# ci-build-dirs: target/release
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$(uname -m)" != "x86_64" ]; then
    echo "stack residue: x86_64 only, skipped"
    exit 0
fi
export CARGO_TERM_COLOR=never
echo "-- release profile (fat LTO)"
HWCRYPT_RESIDUE_PROFILE=release timeout 600 cargo test --release \
    -p hwcrypt --features residue-test --test stack_residue
