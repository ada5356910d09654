#!/usr/bin/env bash
# AES-XTS next to `openssl speed -evp aes-{128,256}-xts`, interleaved per
# cell (OpenSSL, hwcrypt vaes-avx512, vaes-avx2, aesni, bulk vaes-avx512,
# bulk vaes-avx2, OpenSSL) so all see the same machine state. One data unit
# per call with the same tweak, as `openssl speed` does (-bytes N = one
# N-byte data unit per EVP call); `bulk` is `Xts::encrypt_units` over 64 KiB
# of N-byte sectors per call (XTS_BULK_BYTES=16384 for 16 KiB). Prints GB/s
# and ratios to mean(OpenSSL before, after). A backend this CPU cannot run
# (e.g. vaes-avx512 without AVX-512) prints as n/a.
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
cell() { # bits backend size shape -> GB/s, or 0 if the backend cannot run here
    "$probe" "$@" 5 200 2>/dev/null | gbs || echo 0
}

printf '%-12s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n' cipher size \
    avx512 avx2 aesni bulk512 bulk2 openssl avx512/o avx2/o aesni/o blk512/o blk2/o
for r in $(seq "$rounds"); do
    for bits in 128 256; do
        for size in $sizes; do
            a=$(ossl "$bits" "$size")
            w=$(cell "$bits" vaes-avx512 "$size" unit)
            v=$(cell "$bits" vaes-avx2 "$size" unit)
            n=$(cell "$bits" aesni "$size" unit)
            kw=$(cell "$bits" vaes-avx512 "$size" bulk)
            k=$(cell "$bits" vaes-avx2 "$size" bulk)
            b=$(ossl "$bits" "$size")
            awk -v c="aes-$bits-xts" -v s="$size" -v w="$w" -v v="$v" -v n="$n" -v kw="$kw" -v k="$k" \
                -v a="$a" -v b="$b" '
                function g(x) { return x > 0 ? sprintf("%8.2f", x) : sprintf("%8s", "n/a") }
                function q(x) { return x > 0 ? sprintf("%7.2fx", x / o) : sprintf("%8s", "n/a") }
                BEGIN { o = (a + b) / 2
                    printf "%-12s %6s %s %s %s %s %s %8.2f %s %s %s %s %s\n", c, s, g(w), g(v), g(n), g(kw), g(k), o,
                        q(w), q(v), q(n), q(kw), q(k) }'
        done
    done
done
