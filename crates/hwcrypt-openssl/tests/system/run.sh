#!/usr/bin/env bash
# System tests of the hwcrypt OpenSSL provider, against the system's
# OpenSSL 3, OpenSSH, curl and python3-cryptography.
#
# Usage: run.sh MODULE_DIR      (MODULE_DIR holds hwcrypt.so)
# Environment: HWCRYPT_SSH_MIB (size of each ssh transfer, default 64).
# Prints one line per check and a closing "N passed, N failed" line; exits
# non-zero when a check failed. Needs root (sshd on a high port).
set -euo pipefail

MODDIR=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
SSH_MIB=${HWCRYPT_SSH_MIB:-64}
WORK=$(mktemp -d /tmp/hwcrypt-provider-test.XXXXXX)
PORT=$((20000 + RANDOM % 20000))
SSHD_PID=""
TLS_PID=""

# What the provider registers, and the OpenSSH ciphers it serves.
REGISTERED=(AES-128-ECB AES-192-ECB AES-256-ECB AES-128-CTR AES-192-CTR AES-256-CTR
    AES-128-XTS AES-256-XTS AES-128-GCM AES-192-GCM AES-256-GCM ChaCha20 ChaCha20-Poly1305)
SSH_CIPHERS=(aes128-ctr aes192-ctr aes256-ctr aes128-gcm@openssh.com aes256-gcm@openssh.com
    chacha20-poly1305@openssh.com)

cleanup() {
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null || true
    [ -n "$TLS_PID" ] && kill "$TLS_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

passed=0
failed=0
check() { # check NAME COMMAND...: runs the command, counts it
    local name=$1
    shift
    if "$@" >"$WORK/out" 2>&1; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
        tail -n 20 "$WORK/out" | sed 's/^/     /'
    fi
}

write_conf() { # write_conf FILE MODULE_PATH
    cat >"$1" <<CNF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
alg_section = algorithm_sect
[provider_sect]
default = default_sect
hwcrypt = hwcrypt_sect
[default_sect]
activate = 1
[hwcrypt_sect]
module = $2
activate = 1
[algorithm_sect]
default_properties = ?provider=hwcrypt
CNF
}
CONF=$WORK/hwcrypt.cnf
MISSING=$WORK/missing.cnf
write_conf "$CONF" "$MODDIR/hwcrypt.so"
write_conf "$MISSING" "$WORK/no-such-dir/hwcrypt.so"

# --- registration ---------------------------------------------------------
list_names() {
    local out
    out=$(openssl list -cipher-algorithms -provider-path "$MODDIR" -provider hwcrypt)
    for name in "${REGISTERED[@]}"; do
        grep -iF " $name" <<<"$out" | grep -q "@ hwcrypt" || { echo "missing: $name"; return 1; }
    done
}
check "openssl list: every registered name @ hwcrypt" list_names
check "openssl list -providers: self-test passed" \
    bash -c "OPENSSL_CONF='$CONF' openssl list -providers -verbose | grep -q 'self-test passed'"

gcc -O2 -o "$WORK/fetch_provider" "$HERE/fetch_provider.c" -lcrypto
fetch_is() { # fetch_is PROVIDER CONF NAME...
    local want=$1 conf=$2
    shift 2
    local out
    out=$(OPENSSL_CONF=$conf "$WORK/fetch_provider" "$@")
    echo "$out"
    ! grep -v " $want\$" <<<"$out"
}
check "EVP_CIPHER_get0_provider: hwcrypt with the config" fetch_is hwcrypt "$CONF" "${REGISTERED[@]}"
check "EVP_CIPHER_get0_provider: default without it" fetch_is default /dev/null "${REGISTERED[@]}"
check "EVP_CIPHER_get0_provider: default for AES-128-CBC (not registered)" \
    fetch_is default "$CONF" AES-128-CBC
check "EVP_CIPHER_get0_provider: default with a missing module" \
    fetch_is default "$MISSING" "${REGISTERED[@]}"

gcc -O2 -o "$WORK/misuse" "$HERE/misuse.c" -lcrypto
misuse() {
    OPENSSL_CONF=$CONF "$WORK/misuse"
}
check "misuse.c: bad parameters, wrong call order, dupctx: fail cleanly, never crash" misuse

# --- python3-cryptography: known answers and differential -------------------
ALGS=$(IFS=,; echo "${REGISTERED[*]}")
python_differential() {
    OPENSSL_CONF=$CONF /usr/bin/python3 "$HERE/differential.py" "$ALGS" >"$WORK/py.hw"
    OPENSSL_CONF=/dev/null /usr/bin/python3 "$HERE/differential.py" "$ALGS" >"$WORK/py.stock"
    cat "$WORK/py.hw"
    grep -q '^failed 0$' "$WORK/py.hw" && grep -q '^failed 0$' "$WORK/py.stock"
    # The same results with and without the provider...
    [ "$(grep '^digest' "$WORK/py.hw")" = "$(grep '^digest' "$WORK/py.stock")" ]
    # ...and the provider did the work in the first run only.
    [ "$(awk '/^hwcrypt-bytes/ {print $2}' "$WORK/py.hw")" -gt 1000000 ]
    grep -q '^hwcrypt-bytes -1$' "$WORK/py.stock"
}
check "python3-cryptography: KATs, lengths 0..4096 and 1 MiB, split updates, tampering, same as stock" \
    python_differential
# Every backend: the HWCRYPT_CPU mask the provider reads at load.
python_backend() { # python_backend MASK
    HWCRYPT_CPU=$1 OPENSSL_CONF=$CONF openssl list -providers -verbose | grep 'build info: hwcrypt'
    HWCRYPT_CPU=$1 OPENSSL_CONF=$CONF /usr/bin/python3 "$HERE/differential.py" "$ALGS" >"$WORK/py.mask"
    grep -q '^failed 0$' "$WORK/py.mask"
    [ "$(grep '^digest' "$WORK/py.mask")" = "$(grep '^digest' "$WORK/py.stock")" ]
}
# A mask under which the provider selects the same backends as an earlier
# run (-avx512f on a CPU without AVX-512) runs the same code: skipped.
backends_of() { # backends_of MASK: the provider's build info under MASK
    HWCRYPT_CPU=$1 OPENSSL_CONF=$CONF openssl list -providers -verbose |
        grep -o 'build info: hwcrypt.*' || echo "unknown$1"
}
seen="|$(backends_of "")|"
for mask in -avx512f -vaes none; do
    info=$(backends_of "$mask")
    if [[ "$seen" == *"|$info|"* ]]; then
        echo "skip python3-cryptography with HWCRYPT_CPU=$mask: the same backends as an earlier run"
        continue
    fi
    seen="$seen$info|"
    check "python3-cryptography with HWCRYPT_CPU=$mask: same as stock" python_backend "$mask"
done
bad_mask() {
    HWCRYPT_CPU=bogus fetch_is default "$CONF" "${REGISTERED[@]}"
}
check "HWCRYPT_CPU=bogus: the provider registers nothing, fetches go to default" bad_mask

# --- openssl enc ------------------------------------------------------------
head -c $((1024 * 1024 + 3)) /dev/urandom >"$WORK/plain"
enc_same() { # enc_same CIPHER EXTRA...
    local c=$1
    shift
    local key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
    local iv=f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff
    case $c in *-128-*) key=${key:0:32} ;; *-192-*) key=${key:0:48} ;; esac
    for len in 0 1 15 16 17 4096 1048579; do
        head -c $len "$WORK/plain" >"$WORK/p"
        OPENSSL_CONF=${ENC_CONF:-$CONF} openssl enc -$c "$@" -K $key -iv $iv -in "$WORK/p" -out "$WORK/c.hw" 2>/dev/null || true
        OPENSSL_CONF=/dev/null openssl enc -$c "$@" -K $key -iv $iv -in "$WORK/p" -out "$WORK/c.stock" 2>/dev/null || true
        cmp "$WORK/c.hw" "$WORK/c.stock" || { echo "$c $* length $len differs"; return 1; }
        OPENSSL_CONF=${ENC_CONF:-$CONF} openssl enc -d -$c "$@" -K $key -iv $iv -in "$WORK/c.stock" -out "$WORK/d.hw" 2>/dev/null || true
        OPENSSL_CONF=/dev/null openssl enc -d -$c "$@" -K $key -iv $iv -in "$WORK/c.stock" -out "$WORK/d.stock" 2>/dev/null || true
        cmp "$WORK/d.hw" "$WORK/d.stock" || { echo "$c $* decrypt length $len differs"; return 1; }
    done
}
for c in aes-128-ctr aes-192-ctr aes-256-ctr aes-128-ecb aes-192-ecb aes-256-ecb; do
    check "openssl enc $c: identical with and without" enc_same $c
done
for c in aes-128-ecb aes-256-ecb; do
    check "openssl enc $c -nopad: identical with and without" enc_same $c -nopad
done
check "openssl rand through hwcrypt's AES-256-CTR DRBG" \
    bash -c "OPENSSL_CONF='$CONF' openssl rand -hex 64 | grep -Eq '^[0-9a-f]{128}\$'"

# --- OpenSSH on 127.0.0.1 ---------------------------------------------------
source "$HERE/ssh.sh"

# --- TLS with curl and openssl s_server -------------------------------------
source "$HERE/tls.sh"

# --- a config naming a missing module -----------------------------------------
ENC_CONF=$MISSING check "missing module: openssl enc still works" enc_same aes-128-ctr

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
