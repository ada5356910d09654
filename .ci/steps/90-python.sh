#!/usr/bin/env bash
# The Python package (issue 18, crates/hwcrypt-py): builds it with maturin
# into a fresh virtual environment and runs its pytest suite (differential
# against `cryptography`, error types, threads, age) once per HWCRYPT_CPU
# setting: unset, -avx512f, -vaes and none. Installs python3-venv where
# `python3 -m venv` is missing, and maturin, pytest and cryptography (pinned)
# into the environment. Prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! python3 -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "python-package: needs CPython >= 3.11 (found $(python3 --version 2>&1))" >&2
    exit 1
fi
venv="$PWD/target/py-venv"
if [ ! -x "$venv/bin/python" ]; then
    if ! python3 -m venv "$venv" 2>/dev/null; then
        echo "== installing python3-venv"
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        rm -rf "$venv"
        python3 -m venv "$venv"
    fi
fi
"$venv/bin/pip" install -q --disable-pip-version-check maturin==1.16.0 pytest==8.4.2 cryptography==48.0.0
echo "== maturin develop --release (crates/hwcrypt-py)"
(cd crates/hwcrypt-py && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release -q)

passed=0
failed=0
for cpu in "" -avx512f -vaes none; do
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
