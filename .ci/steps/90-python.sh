#!/usr/bin/env bash
# The Python package (issue 18, crates/hwcrypt-py): builds it with maturin
# into a fresh virtual environment and runs its pytest suite (differential
# against `cryptography`, error types, threads, age) once per HWCRYPT_CPU
# setting: unset, -avx512f, -vaes and none. Installs python3-venv where
# `python3 -m venv` is missing, and maturin, pytest and cryptography (pinned)
# into the environment. Prints "N passed, N failed".
#
# ci-build-dirs: target/py-venv target/maturin target/python
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

if ! python3 -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "python-package: needs CPython >= 3.11 (found $(python3 --version 2>&1))" >&2
    exit 1
fi
venv="$PWD/target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" 2>/dev/null; then
        ci_apt_install python3-venv
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
fi
"$venv/bin/pip" install -q --disable-pip-version-check maturin==1.16.0 pytest==8.4.2 cryptography==48.0.0
# The `dev` profile (optimised, panics unwind like the wheel's `python`
# profile, debug assertions on), not the wheel's fat-LTO `python` profile:
# it reuses most of what `cargo test` built and takes about 40 s here
# instead of about 100 (CI time). The kernels are the library's own, tested
# in the release profiles by the other steps; what this step tests is the
# binding (buffers, errors, the GIL, age). `pip install ./crates/hwcrypt-py`
# builds the `python` profile.
echo "== maturin develop --profile dev (crates/hwcrypt-py)"
(cd crates/hwcrypt-py && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop -q --profile dev)

passed=0
failed=0
seen=""
for cpu in "" -avx512f -vaes none; do
    # A setting that leaves the same CPU features usable as an earlier one
    # (-avx512f on a CPU without AVX-512) runs the same code: skipped.
    usable=$(HWCRYPT_CPU="$cpu" "$venv/bin/python" -c \
        'import hwcrypt; print(",".join(hwcrypt.cpu_info()["usable"]) or "-")')
    if [[ " $seen " == *" $usable "* ]]; then
        echo "== pytest, HWCRYPT_CPU='$cpu': the same usable features ($usable) as an earlier run, skipped"
        continue
    fi
    seen="$seen $usable"
    echo "== pytest, HWCRYPT_CPU='$cpu'"
    log=$(mktemp)
    if HWCRYPT_CPU="$cpu" "$venv/bin/python" -m pytest -q -p no:cacheprovider crates/hwcrypt-py/tests 2>&1 | tee "$log" | tail -3; then :; fi
    p=$(grep -oE '[0-9]+ passed' "$log" | grep -oE '[0-9]+' | tail -1 || true)
    f=$(grep -oE '[0-9]+ (failed|errors?)' "$log" | awk '{s += $1} END {print s + 0}' || true)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if ! grep -qE '[0-9]+ passed' "$log"; then failed=$((failed + 1)); fi
    rm -f "$log"
done
echo "python-package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
