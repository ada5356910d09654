#!/usr/bin/env bash
# File encryption throughput (issue 15): `hwcrypt encrypt` / `decrypt` (age
# v1, X25519 recipient) on a file in the page cache, to /dev/null and to a
# file on the same disk, beside `age` (Debian), `rage` (if installed),
# `openssl enc -chacha20` (unauthenticated: a floor) and `dd bs=1M` (a plain
# copy: the I/O ceiling).
#
# hwcrypt runs with -j default (one thread per core) and -j 1, and under
# HWCRYPT_CPU=-avx512f (AVX2 ChaCha20) and HWCRYPT_CPU=none (portable).
# "to a file" is measured two ways for hwcrypt: `-o FILE` (temporary file,
# fsync, rename: what the CLI does for safety, so it includes the disk
# flush) and `> FILE` (page cache only, as age, rage, openssl and dd write).
#
# Each case: one untimed warm-up run (so the output pages are not touched
# for the first time while timed), then REPS timed runs, each preceded by a
# re-read of the input into the page cache and a `sync` (so no writeback of
# the previous run's output overlaps it); median wall seconds, GB/s =
# 1e9 B/s of plaintext, the median CPU seconds (user + system: robust when
# the machine is shared, where wall time is not) as GB per CPU-second, and
# the largest max RSS (GNU time) of the runs.
#
# Usage: crates/hwcrypt-bench/age-bench.sh [SIZE_MIB] [REPS]   (default 1024 3)
# HWCRYPT_BIN=PATH times that hwcrypt binary instead of building this tree's
# (to compare two builds in one sitting).
# Needs age (apt-get install age), GNU time (/usr/bin/time), openssl.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZE_MIB="${1:-1024}"
REPS="${2:-3}"
export LC_ALL=C

if [ -n "${HWCRYPT_BIN:-}" ]; then
    HW="$(realpath "$HWCRYPT_BIN")"
else
    cargo build --release -q -p hwcrypt-cli
    HW="$PWD/target/release/hwcrypt"
fi
WORK="$(mktemp -d "${BENCH_DIR:-/tmp}/age-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

head -c "$((SIZE_MIB << 20))" /dev/urandom >in.bin
BYTES=$(stat -c %s in.bin)
"$HW" keygen -o key.txt 2>/dev/null
R=$("$HW" keygen -y key.txt)
age -r "$R" -o in.age in.bin
KEY=$(printf '11%.0s' $(seq 32))
IV=$(printf '22%.0s' $(seq 16))

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# case NAME INPUT OUTPUT -- COMMAND...: OUTPUT is null, file or fsync (the
# command writes OUTPUT itself: -o out); prints one table row.
case_() {
    local name=$1 input=$2 out=$3
    shift 4
    local times=() cpus=() rss=0 t m u sy
    for rep in $(seq 0 "$REPS"); do
        cat "$input" >/dev/null
        rm -f out
        # No dirty pages of the previous run left to write back while this
        # one is timed (the kernel throttles writers when they pile up).
        sync
        case $out in
            null) /usr/bin/time -f "%e %M %U %S" -o t.txt "$@" >/dev/null ;;
            file) /usr/bin/time -f "%e %M %U %S" -o t.txt "$@" >out ;;
            fsync) /usr/bin/time -f "%e %M %U %S" -o t.txt "$@" ;;
        esac
        read -r t m u sy <t.txt
        [ "$rep" -eq 0 ] && continue
        times+=("$t")
        cpus+=("$(awk -v a="$u" -v b="$sy" 'BEGIN {print a + b}')")
        [ "$m" -gt "$rss" ] && rss=$m
    done
    local med cpu
    med=$(printf '%s\n' "${times[@]}" | median)
    cpu=$(printf '%s\n' "${cpus[@]}" | median)
    awk -v n="$name" -v o="$out" -v s="$med" -v c="$cpu" -v b="$BYTES" -v r="$rss" 'BEGIN {
        if (c < 0.01) c = 0.01
        printf "%-44s %-6s %8.2f s %7.2f GB/s %8.2f GB/cpu-s %8.1f MiB\n", n, o, s, b / s / 1e9, b / c / 1e9, r / 1024 }'
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: ${SIZE_MIB} MiB of random bytes in $WORK ($(df -h --output=source . | tail -1)); $REPS runs per case (median), 1 warm-up"
echo "age: $(age --version); rage: $(command -v rage >/dev/null && rage --version || echo 'not installed'); $(openssl version)"
echo "hwcrypt speed (ChaCha20-Poly1305 seal, 64 KiB, one core): $("$HW" speed chacha20-poly1305 --sizes 64k --no-key-setup --format csv 2>/dev/null | awk -F, 'NR==2 {print $0}')"
echo
printf "%-44s %-6s %10s %12s %16s %12s\n" "case" "output" "median" "throughput" "per CPU-second" "max RSS"
for out in null file; do
    case_ "dd bs=1M (copy)" in.bin "$out" -- dd if=in.bin bs=1M status=none
    case_ "openssl enc -chacha20 (no MAC)" in.bin "$out" -- openssl enc -chacha20 -K "$KEY" -iv "$IV" -in in.bin
    case_ "age encrypt" in.bin "$out" -- age -r "$R" in.bin
    case_ "age decrypt" in.age "$out" -- age -d -i key.txt in.age
    if command -v rage >/dev/null; then
        case_ "rage encrypt" in.bin "$out" -- rage -r "$R" in.bin
        case_ "rage decrypt" in.age "$out" -- rage -d -i key.txt in.age
    fi
    for mask in "" -avx512f none; do
        label=""
        envc=(env -u HWCRYPT_CPU)
        if [ -n "$mask" ]; then label=" HWCRYPT_CPU=$mask"; envc=(env HWCRYPT_CPU="$mask"); fi
        for j in "" 1; do
            jl="-j $(nproc)"
            jarg=()
            if [ -n "$j" ]; then jl="-j 1"; jarg=(-j 1); fi
            case_ "hwcrypt: encrypt $jl$label" in.bin "$out" -- \
                "${envc[@]}" "$HW" encrypt -q "${jarg[@]}" -r "$R" in.bin
            case_ "hwcrypt: decrypt $jl$label" in.age "$out" -- \
                "${envc[@]}" "$HW" decrypt -q "${jarg[@]}" -i key.txt in.age
        done
    done
done
case_ "hwcrypt: encrypt -j $(nproc) -o FILE" in.bin fsync -- "$HW" encrypt -q -r "$R" -o out in.bin
case_ "hwcrypt: decrypt -j $(nproc) -o FILE" in.age fsync -- "$HW" decrypt -q -i key.txt -o out in.age
case_ "dd bs=1M conv=fsync" in.bin fsync -- dd if=in.bin of=out bs=1M conv=fsync status=none
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
