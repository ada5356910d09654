#!/usr/bin/env bash
# Miri over crates/hwcrypt/tests/buffer_shapes.rs: every mode of every
# backend Miri can interpret, in place and with separate buffers, on short
# inputs. Miri checks the kernels' raw-pointer use (Stacked Borrows aliasing,
# bounds, uninitialised reads). The x86 features are enabled at compile time
# so that Miri's intrinsic models count them as detected: the AES-NI,
# VAES-AVX2, VAES-AVX-512, AVX2 and AVX-512 backends all run, whatever this
# machine's CPU. Backends or paths Miri cannot interpret (inline assembly,
# vpternlog) are listed by the test as skipped. Budget: under 3 minutes.
#
# ci-build-dirs: target/miri
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

ci_nightly
if ! cargo +nightly miri --version >/dev/null 2>&1 ||
    ! rustup +nightly component list --installed | grep -q '^rust-src'; then
    ci_locked rustup component add miri rust-src --toolchain nightly
fi
ci_locked sh -c 'cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup'

features="+aes,+ssse3,+pclmulqdq,+avx,+avx2,+vaes,+vpclmulqdq"
features="$features,+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx512ifma"
# HWCRYPT_CPU is not forwarded: Miri sees every feature enabled above.
RUSTFLAGS="-C target-feature=$features" timeout 600 \
    cargo +nightly miri test -p hwcrypt --test buffer_shapes -- --nocapture
# The heap homes of key schedules (crate::secret): allocation, wipe, clone,
# and the LazyBox that wide GCM tables are made in on first use, with
# threads racing to make it (a few scheduler seeds).
MIRIFLAGS="-Zmiri-many-seeds=0..4" RUSTFLAGS="-C target-feature=$features" timeout 600 \
    cargo +nightly miri test -p hwcrypt --lib secret::tests
