#!/usr/bin/env bash
# ChaCha20-Poly1305 next to `openssl speed -evp chacha20-poly1305` and ring
# 0.17, interleaved per cell (OpenSSL, hwcrypt avx2, hwcrypt avx512, ring,
# OpenSSL) so all see the same machine state; then XChaCha20-Poly1305 (no
# OpenSSL or ring equivalent: its ratios are to the same ChaCha20-Poly1305
# cells). hwcrypt and ring seal whole messages in place with a fresh nonce
# per message (`chacha-throughput`, medians of 5 x 200 ms). `openssl speed`
# reuses one context and skips per-message setup, so at small sizes ring
# (per message) is the fairer peer. Prints GB/s (1e9 B/s) and ratios to
# mean(OpenSSL before, after) and to ring; after ROUNDS rounds, the medians.
#
#   crates/hwcrypt-bench/compare-openssl-chacha.sh [ROUNDS] [SIZES...]
#
# ROUNDS (default 3); OpenSSL is timed with -elapsed (wall clock) unless
# OPENSSL_CPU_TIME=1; the probe uses the wall clock unless its thread was
# preempted (then its on-CPU time).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}; shift || true
sizes=${*:-256 1024 16384}
cargo build -q --release -p hwcrypt-bench --features ring --bin chacha-throughput
probe=target/release/chacha-throughput
elapsed=-elapsed; [ "${OPENSSL_CPU_TIME:-0}" = 1 ] && elapsed=

ossl() { # size -> GB/s
    openssl speed $elapsed -evp chacha20-poly1305 -bytes "$1" -seconds 1 2>/dev/null |
        awk 'END { gsub("k","",$2); printf "%.3f", $2 * 1000 / 1e9 }'
}
gbs() { sed -E 's/.*: ([0-9.]+) GB.*/\1/'; }

rows=$(mktemp); trap 'rm -f "$rows"' EXIT
fmt='%-20s %6s %8s %8s %8s %8s %9s %9s %9s %9s\n'
printf "$fmt" aead size avx2 avx512 ring openssl 512/ossl 512/ring avx2/ossl avx2/ring
line() { # alg size avx2 avx512 ring openssl
    awk -v c="$1" -v s="$2" -v v="$3" -v w="$4" -v g="$5" -v o="$6" \
        'BEGIN { printf "%-20s %6s %8.2f %8.2f %8.2f %8.2f %8.2fx %8.2fx %8.2fx %8.2fx\n", c, s, v, w, g, o, w / o, w / g, v / o, v / g }'
}
for r in $(seq "$rounds"); do
    for size in $sizes; do
        a=$(ossl "$size")
        v=$($probe chacha20-poly1305 avx2 "$size" 5 200 | gbs)
        w=$($probe chacha20-poly1305 avx512 "$size" 5 200 | gbs)
        g=$($probe chacha20-poly1305 ring "$size" 5 200 | gbs)
        xv=$($probe xchacha20-poly1305 avx2 "$size" 5 200 | gbs)
        xw=$($probe xchacha20-poly1305 avx512 "$size" 5 200 | gbs)
        b=$(ossl "$size")
        o=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (a + b) / 2 }')
        line chacha20-poly1305 "$size" "$v" "$w" "$g" "$o" | tee -a "$rows"
        line xchacha20-poly1305 "$size" "$xv" "$xw" "$g" "$o" | tee -a "$rows"
    done
done
if [ "$rounds" -gt 1 ]; then
    echo "medians over $rounds rounds:"
    for alg in chacha20-poly1305 xchacha20-poly1305; do
        for size in $sizes; do
            med() { awk -v a="$alg" -v s="$size" -v c="$1" '$1 == a && $2 == s { print $c }' "$rows" |
                sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
            line "$alg" "$size" "$(med 3)" "$(med 4)" "$(med 5)" "$(med 6)"
        done
    done
fi
