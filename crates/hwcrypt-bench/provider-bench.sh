#!/usr/bin/env bash
# The hwcrypt OpenSSL provider against stock OpenSSL 3, in one sitting:
#
# 1. `openssl speed -evp ALG` with and without the provider
#    (-provider-path DIR -provider hwcrypt -provider default
#    -propquery '?provider=hwcrypt'), sizes 16..16384 B, for AES-128/256-GCM,
#    AES-128/256-CTR, AES-256-XTS and ChaCha20-Poly1305: median GB/s of REPS
#    runs, alternating, and the ratio hwcrypt/stock;
# 2. OpenSSH over 127.0.0.1: SSH_MIB MiB through `ssh -c CIPHER host 'cat
#    >/dev/null'` per cipher, the provider on both ends or on neither:
#    median MiB/s and CPU seconds of ssh and of sshd (every sshd process of
#    the connection, less the remote `cat`);
# 3. curl downloading TLS_MIB MiB from `openssl s_server -WWW` over TLS 1.3
#    AES-256-GCM: median MiB/s and CPU seconds of curl and s_server.
#
# Usage: crates/hwcrypt-bench/provider-bench.sh [MODULE_DIR]
#   (default: builds the release module with crates/hwcrypt-openssl/build-module.sh)
# Environment: REPS (5), SPEED_SECONDS (1), SSH_MIB (1024), TLS_MIB (1024),
# PARTS ("speed ssh tls"). Needs root for sshd. Prints the load (uptime):
# compare ratios, not absolute figures, on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${REPS:-5}
SPEED_SECONDS=${SPEED_SECONDS:-1}
SSH_MIB=${SSH_MIB:-1024}
TLS_MIB=${TLS_MIB:-1024}
PARTS=${PARTS:-speed ssh tls}
if [ $# -ge 1 ]; then
    MODDIR=$(cd "$1" && pwd)
else
    MODDIR=$(cd "$(dirname "$(crates/hwcrypt-openssl/build-module.sh release)")" && pwd)
fi
WORK=$(mktemp -d /tmp/hwcrypt-provider-bench.XXXXXX)
SSHD_PID=""
TLS_PID=""
cleanup() {
    [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null || true
    [ -n "$TLS_PID" ] && kill "$TLS_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

cat >"$WORK/hwcrypt.cnf" <<CNF
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
module = $MODDIR/hwcrypt.so
activate = 1
[algorithm_sect]
default_properties = ?provider=hwcrypt
CNF
HW=$WORK/hwcrypt.cnf

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "# hwcrypt provider benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores"
echo "# $(OPENSSL_CONF=$HW openssl list -providers -verbose | grep 'build info: hwcrypt' | sed 's/^ *//')"
echo "# load at start: $(uptime | sed 's/.*load average/load average/')"

# --- 1. openssl speed ---------------------------------------------------------
if [[ " $PARTS " == *" speed "* ]]; then
    SIZES=(16 64 256 1024 8192 16384)
    echo
    echo "## openssl speed -evp (GB/s, median of $REPS; ratio = hwcrypt / stock)"
    printf '%-18s' "algorithm"
    for s in "${SIZES[@]}"; do printf ' %22s' "$s B"; done
    echo
    for alg in aes-128-gcm aes-256-gcm aes-128-ctr aes-256-ctr aes-256-xts chacha20-poly1305; do
        for r in $(seq "$REPS"); do
            OPENSSL_CONF=/dev/null openssl speed -mr -seconds "$SPEED_SECONDS" -evp "$alg" 2>/dev/null |
                grep '^+F:' >>"$WORK/$alg.stock"
            OPENSSL_CONF=/dev/null openssl speed -mr -seconds "$SPEED_SECONDS" -provider-path "$MODDIR" \
                -provider hwcrypt -provider default -propquery '?provider=hwcrypt' -evp "$alg" 2>/dev/null |
                grep '^+F:' >>"$WORK/$alg.hw"
        done
        printf '%-18s' "$alg"
        for i in "${!SIZES[@]}"; do
            col=$((i + 4))
            s=$(cut -d: -f$col "$WORK/$alg.stock" | median)
            h=$(cut -d: -f$col "$WORK/$alg.hw" | median)
            printf ' %22s' "$(awk -v s="$s" -v h="$h" 'BEGIN {printf "%.2f/%.2f %.2fx", s / 1e9, h / 1e9, h / s}')"
        done
        echo
    done
    echo "(each cell: stock/hwcrypt GB/s, then the ratio)"
fi

# --- 2. OpenSSH -----------------------------------------------------------------
if [[ " $PARTS " == *" ssh "* ]]; then
    S=$WORK/ssh
    PORT=$((20000 + RANDOM % 20000))
    mkdir -p "$S" /run/sshd
    ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
    ssh-keygen -q -t ed25519 -N '' -f "$S/user_key"
    cp "$S/user_key.pub" "$S/authorized_keys"
    cat >"$S/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile $S/sshd.pid
CFG
    start_sshd() {
        [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null || true
        OPENSSL_CONF=$1 /usr/sbin/sshd -D -f "$S/sshd_config" -E "$S/sshd.log" &
        SSHD_PID=$!
        for _ in $(seq 100); do
            [ -s "$S/sshd.pid" ] && [ "$(cat "$S/sshd.pid")" = "$SSHD_PID" ] && break
            sleep 0.1
        done
        sleep 0.3
    }
    # CPU seconds (user + system) of the reaped children of process $1.
    children_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($16 + $17) / hz}' "/proc/$1/stat"; }
    # One transfer: prints "MiB/s ssh_cpu sshd_cpu".
    ssh_once() {
        local conf=$1 cipher=$2
        local before after out
        before=$(children_cpu "$SSHD_PID")
        out=$( { head -c $((SSH_MIB * 1024 * 1024)) /dev/zero |
            OPENSSL_CONF=$conf /usr/bin/time -f 'TIME %e %U %S' ssh -F /dev/null -p "$PORT" \
                -i "$S/user_key" -o BatchMode=yes -o StrictHostKeyChecking=no \
                -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -c "$cipher" root@127.0.0.1 \
                'cat >/dev/null; times | tail -1'; } 2>&1)
        sleep 0.2 # the listener reaps the connection's process
        after=$(children_cpu "$SSHD_PID")
        awk -v mib="$SSH_MIB" -v b="$before" -v a="$after" '
            /^TIME/ {wall = $2; cpu = $3 + $4}
            /m.*s .*m.*s/ {gsub(/[ms]/, " "); cat = $1 * 60 + $2 + $3 * 60 + $4}
            END {printf "%.1f %.2f %.2f\n", mib / wall, cpu, a - b - cat}' <<<"$out"
    }
    echo
    echo "## OpenSSH, $SSH_MIB MiB over 127.0.0.1 (median of $REPS; provider on both ends or neither)"
    printf '%-32s %22s %22s %22s\n' cipher "MiB/s stock/hw" "ssh CPU s stock/hw" "sshd CPU s stock/hw"
    for cipher in aes128-gcm@openssh.com aes256-gcm@openssh.com aes128-ctr aes256-ctr chacha20-poly1305@openssh.com; do
        for side in stock hw; do
            conf=/dev/null
            [ $side = hw ] && conf=$HW
            start_sshd "$conf"
            : >"$WORK/ssh.$side"
            for r in $(seq "$REPS"); do ssh_once "$conf" "$cipher" >>"$WORK/ssh.$side"; done
        done
        cols=()
        for c in 1 2 3; do
            s=$(awk -v c=$c '{print $c}' "$WORK/ssh.stock" | median)
            h=$(awk -v c=$c '{print $c}' "$WORK/ssh.hw" | median)
            cols+=("$(awk -v s="$s" -v h="$h" 'BEGIN {printf "%s/%s %.2fx", s, h, h / s}')")
        done
        printf '%-32s %22s %22s %22s\n' "$cipher" "${cols[@]}"
    done
    kill "$SSHD_PID" 2>/dev/null && wait "$SSHD_PID" 2>/dev/null || true
    SSHD_PID=""
fi

# --- 3. curl over TLS 1.3 AES-256-GCM ---------------------------------------------
if [[ " $PARTS " == *" tls "* ]]; then
    T=$WORK/tls
    mkdir -p "$T/www"
    TLS_PORT=$((20000 + RANDOM % 20000))
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj /CN=localhost -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
    truncate -s $((TLS_MIB * 1024 * 1024)) "$T/www/payload"
    own_cpu() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
    echo
    echo "## curl, $TLS_MIB MiB from openssl s_server -WWW, TLS 1.3 AES-256-GCM (median of $REPS; provider on both ends or neither)"
    for side in stock hw; do
        conf=/dev/null
        [ $side = hw ] && conf=$HW
        (cd "$T/www" && exec env OPENSSL_CONF="$conf" openssl s_server -quiet -WWW \
            -accept "127.0.0.1:$TLS_PORT" -cert "$T/cert.pem" -key "$T/key.pem" </dev/null >/dev/null 2>&1) &
        TLS_PID=$!
        sleep 0.5
        : >"$WORK/tls.$side"
        for r in $(seq "$REPS"); do
            before=$(own_cpu "$TLS_PID")
            out=$(OPENSSL_CONF=$conf /usr/bin/time -f 'TIME %e %U %S' curl -sk --tlsv1.3 \
                --tls13-ciphers TLS_AES_256_GCM_SHA384 -o /dev/null "https://127.0.0.1:$TLS_PORT/payload" 2>&1)
            after=$(own_cpu "$TLS_PID")
            awk -v mib="$TLS_MIB" -v b="$before" -v a="$after" '/^TIME/ {printf "%.1f %.2f %.2f\n", mib / $2, $3 + $4, a - b}' \
                <<<"$out" >>"$WORK/tls.$side"
        done
        kill "$TLS_PID" 2>/dev/null && wait "$TLS_PID" 2>/dev/null || true
        TLS_PID=""
    done
    printf '%22s %22s %22s\n' "MiB/s stock/hw" "curl CPU s stock/hw" "s_server CPU s stock/hw"
    cols=()
    for c in 1 2 3; do
        s=$(awk -v c=$c '{print $c}' "$WORK/tls.stock" | median)
        h=$(awk -v c=$c '{print $c}' "$WORK/tls.hw" | median)
        cols+=("$(awk -v s="$s" -v h="$h" 'BEGIN {printf "%s/%s %.2fx", s, h, h / s}')")
    done
    printf '%22s %22s %22s\n' "${cols[@]}"
fi
echo
echo "# load at end: $(uptime | sed 's/.*load average/load average/')"
