#!/usr/bin/env bash
# Interleaved comparison with `openssl speed -evp`: OpenSSL, hwcrypt, OpenSSL
# for each cell, so both see the same machine state. Prints GB/s and the ratio
# hwcrypt / mean(OpenSSL before, after). Both sides are timed by the wall
# clock (`openssl speed -elapsed`), so time stolen by the VM counts for both.
#
#   crates/hwcrypt-bench/compare-openssl.sh [BACKEND[,BACKEND...]] [SIZES...]
set -euo pipefail
cd "$(dirname "$0")/../.."
backend=${1:-vaes-avx2}; shift || true
sizes=${*:-16384 256}
cargo build -q --release -p hwcrypt-bench --bin aes-throughput
probe=target/release/aes-throughput

ossl() { # cipher size [-decrypt] -> GB/s
    openssl speed -elapsed -evp "$1" -bytes "$2" -seconds 1 ${3:-} 2>/dev/null |
        awk -v n="$2" 'END { gsub("k","",$2); printf "%.3f", $2 * 1000 / 1e9 }'
}

# BACKEND may be a comma-separated list (vaes-avx512,vaes-avx2): each cell
# then times every one of them between the two OpenSSL runs, one row each.
printf '%-16s %6s %-11s %10s %10s %7s\n' cell size backend hwcrypt openssl ratio
for cell in "ecb-enc 128 aes-128-ecb" "ctr 128 aes-128-ctr" "ctr 256 aes-256-ctr" \
            "cbc-dec 128 aes-128-cbc -decrypt" "cbc-dec 256 aes-256-cbc -decrypt" \
            "cbc-enc 256 aes-256-cbc" "ecb-enc 256 aes-256-ecb"; do
    set -- $cell
    for size in $sizes; do
        a=$(ossl "$3" "$size" "${4:-}")
        hs=()
        for be in ${backend//,/ }; do
            hs+=("$be $($probe "$1" "$2" "$be" "$size" 5 200 | sed -E 's/.*: ([0-9.]+) GB.*/\1/')")
        done
        b=$(ossl "$3" "$size" "${4:-}")
        for bh in "${hs[@]}"; do
            set -- $cell
            be=${bh% *} h=${bh#* }
            awk -v c="aes-$2-$1" -v s="$size" -v be="$be" -v h="$h" -v a="$a" -v b="$b" \
                'BEGIN { o = (a + b) / 2; printf "%-16s %6s %-11s %10.2f %10.2f %6.2fx\n", c, s, be, h, o, h / o }'
        done
    done
done
