#!/usr/bin/env bash
# The OpenSSL provider (crates/hwcrypt-openssl) against the system's
# OpenSSL 3, OpenSSH, curl and python3-cryptography: registration, which
# provider serves each fetch, known answers and differential tests through
# Python, `openssl enc`, OpenSSH end to end (sshd with its seccomp sandbox),
# TLS with curl and `openssl s_server`, a config naming a missing module.
# Budget: under 4 minutes on 2 cores (the ssh transfers are 64 MiB each).
set -euo pipefail
cd "$(dirname "$0")/../.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for pkg in libssl-dev openssh-server openssh-client curl python3-cryptography gcc; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The test profile: its build of the hwcrypt library is the one `cargo test`
# already made.
module=$(crates/hwcrypt-openssl/build-module.sh test)
cargo test -q -p hwcrypt-openssl 2>&1 | tail -n 3
$sudo timeout 200 crates/hwcrypt-openssl/tests/system/run.sh "$(dirname "$module")"
