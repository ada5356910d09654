#!/usr/bin/env bash
# AES-XTS next to `openssl speed -evp aes-{128,256}-xts`, interleaved per cell
# (OpenSSL, hwcrypt vaes-avx2, hwcrypt aesni, OpenSSL) so all see the same
# machine state. One data unit per call with the same tweak, as `openssl
# speed` does (-bytes N = one N-byte data unit per EVP call); `bulk` is
# `Xts::encrypt_units` over 64 KiB of N-byte sectors per call. Prints GB/s
# and ratios to mean(OpenSSL before, after).
#
#   crates/hwcrypt-bench/compare-openssl-xts.sh [ROUNDS] [SIZES...]
#
# ROUNDS (default 3) repeats the whole table; OpenSSL is timed with -elapsed
# (wall clock) unless OPENSSL_CPU_TIME=1. xts-throughput uses the wall clock
# unless its thread was preempted (then its on-CPU time).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}; shift || true
sizes=${*:-16384 4096 512}
cargo build -q --release -p hwcrypt-bench --bin xts-throughput
probe=target/release/xts-throughput
elapsed=-elapsed; [ "${OPENSSL_CPU_TIME:-0}" = 1 ] && elapsed=

ossl() { # bits size -> GB/s
    openssl speed $elapsed -evp "aes-$1-xts" -bytes "$2" -seconds 1 2>/dev/null |
        awk 'END { gsub("k","",$2); printf "%.3f", $2 * 1000 / 1e9 }'
}
gbs() { sed -E 's/.*: ([0-9.]+) GB.*/\1/'; }

printf '%-12s %6s %10s %10s %10s %10s %8s %8s\n' cipher size vaes-avx2 aesni bulk-vaes openssl vaes/ossl aesni/ossl
for r in $(seq "$rounds"); do
    for bits in 128 256; do
        for size in $sizes; do
            a=$(ossl "$bits" "$size")
            v=$($probe "$bits" vaes-avx2 "$size" unit 5 200 | gbs)
            n=$($probe "$bits" aesni "$size" unit 5 200 | gbs)
            k=$($probe "$bits" vaes-avx2 "$size" bulk 5 200 | gbs)
            b=$(ossl "$bits" "$size")
            awk -v c="aes-$bits-xts" -v s="$size" -v v="$v" -v n="$n" -v k="$k" -v a="$a" -v b="$b" \
                'BEGIN { o = (a + b) / 2; printf "%-12s %6s %10.2f %10.2f %10.2f %10.2f %7.2fx %7.2fx\n", c, s, v, n, k, o, v / o, n / o }'
        done
    done
done
