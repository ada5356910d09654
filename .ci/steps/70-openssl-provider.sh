#!/usr/bin/env bash
# The OpenSSL provider (crates/hwcrypt-openssl) against the system's
# OpenSSL 3, OpenSSH, curl and python3-cryptography: registration, which
# provider serves each fetch, known answers and differential tests through
# Python, `openssl enc`, OpenSSH end to end (sshd with its seccomp sandbox),
# TLS with curl and `openssl s_server`, a config naming a missing module.
# Budget: under 4 minutes on 2 cores (the ssh transfers are 64 MiB each).
set -euo pipefail
cd "$(dirname "$0")/../.."
source .ci/lib.sh

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
ci_apt_install libssl-dev openssh-server openssh-client curl python3-cryptography gcc

# The test profile: its build of the hwcrypt library is the one `cargo test`
# already made.
module=$(crates/hwcrypt-openssl/build-module.sh test)
cargo test -q -p hwcrypt-openssl 2>&1 | tail -n 3
$sudo timeout 200 crates/hwcrypt-openssl/tests/system/run.sh "$(dirname "$module")"
