#!/usr/bin/env bash
# Times `hwcrypt crack` on the issue's challenge: AES-256-CBC, key = first 6
# bytes each in 0..=16, the other 26 zero (17^6 = 24,137,569 keys), a
# 400-byte English plaintext, IV unknown to the search.
#
# For each CPU mask (default = vaes-avx512; -avx512f = vaes-avx2; -vaes =
# aesni) and predicate (--text: the decryption path; --known: a known
# plaintext block, checked by forward encryption) it runs
#   * the full search on all cores: the key planted near the end of the
#     space, and not in the space at all (every key tested), timed as whole
#     processes (start-up included): median wall seconds;
#   * the not-found search on one thread: keys per second per core, from
#     the process's CPU time (robust on a shared machine) and from wall time.
#
# Usage: crates/hwcrypt-bench/crack-bench.sh [REPS]   (default 7)
# HWCRYPT_BIN=PATH times that hwcrypt binary instead of building this tree's.
# Needs openssl (to make the challenge) and python3 (to time).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS="${1:-7}"

if [ -n "${HWCRYPT_BIN:-}" ]; then
    BIN="$(realpath "$HWCRYPT_BIN")"
else
    cargo build --release -q -p hwcrypt-cli
    BIN="$PWD/target/release/hwcrypt"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# 400 bytes of English.
python3 - "$WORK/plain.txt" <<'EOF'
import sys
text = ("It was a bright cold day in April, and the clocks were striking thirteen. "
        "Winston Smith, his chin nuzzled into his breast in an effort to escape the vile "
        "wind, slipped quickly through the glass doors of Victory Mansions, though not "
        "quickly enough to prevent a swirl of gritty dust from entering along with him. "
        "The hallway smelt of boiled cabbage and old rag mats. At one end of it a coloured "
        "poster, too large for indoor display, had been tacked to the wall.")
open(sys.argv[1], "w").write(text[:400])
EOF
IV=000102030405060708090a0b0c0d0e0f
# Planted near the end of the space: bytes 16,16,16,16,16,12 (index 24,137,564 of 24,137,569).
KEY_FOUND=10101010100c0000000000000000000000000000000000000000000000000000
# Byte 0 = 0x11 lies outside 0..=16: no key of the space matches.
KEY_ABSENT=1100000000000000000000000000000000000000000000000000000000000000
openssl enc -aes-256-cbc -K "$KEY_FOUND" -iv "$IV" -in "$WORK/plain.txt" -out "$WORK/found.bin"
openssl enc -aes-256-cbc -K "$KEY_ABSENT" -iv "$IV" -in "$WORK/plain.txt" -out "$WORK/absent.bin"
# Plaintext block 1 (bytes 16..32), known to the --known runs.
KNOWN="16:$(cut -c17-32 "$WORK/plain.txt")"

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "challenge: AES-256-CBC, 416-byte ciphertext, key space '0..=16*6, 0*26' (24137569 keys), IV not given"
echo

python3 - "$BIN" "$WORK" "$REPS" "$KNOWN" <<'EOF'
import json, os, resource, statistics, subprocess, sys, time
bin_, work, reps, known = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
SPACE = "0..=16*6, 0*26"

def run(mask, ct, pred, threads):
    env = dict(os.environ)
    env.pop("HWCRYPT_CPU", None)
    if mask:
        env["HWCRYPT_CPU"] = mask
    args = [bin_, "crack", "-k", SPACE, "-m", "cbc", "--in", f"{work}/{ct}.bin", "--json", "-q"]
    args += pred + ["-t", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(args, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    want = 0 if ct == "found" else 1
    if p.returncode != want:
        sys.exit(f"unexpected exit {p.returncode}: {args}\n{p.stderr.decode()}")
    return wall, cpu, json.loads(p.stdout)

rows = []
for mask in ["", "-avx512f", "-vaes"]:
    for pname, pred in [("text", ["--text"]), ("known", ["--known", known])]:
        found, absent, cpu1, wall1 = [], [], [], []
        backend = None
        for _ in range(reps):
            # Interleaved so load changes hit every measurement alike.
            w, c, j = run(mask, "found", pred, 0); found.append(w); backend = j["backend"]
            w, c, j = run(mask, "absent", pred, 0); absent.append(w)
            w, c, j = run(mask, "absent", pred, 1); wall1.append(j["searched"] / w); cpu1.append(j["searched"] / c)
        rows.append((mask or "(none)", backend, pname, statistics.median(found),
                     statistics.median(absent), statistics.median(cpu1), statistics.median(wall1),
                     min(absent)))

print(f"{'HWCRYPT_CPU':<12} {'backend':<12} {'filter':<6} {'found s':>8} {'absent s':>9} {'best s':>7} "
      f"{'Mkeys/s/core (cpu)':>19} {'(wall, 1 thread)':>17}")
for m, b, p, f, a, c, w, best in rows:
    print(f"{m:<12} {b:<12} {p:<6} {f:8.3f} {a:9.3f} {best:7.3f} {c/1e6:19.1f} {w/1e6:17.1f}")
print()
print(f"found s / absent s: median wall seconds of the whole process on all cores over {reps} runs "
      "(key planted near the end / no key in the space); best s: fastest absent run;")
print("Mkeys/s/core: the absent search on one thread, keys / process CPU time (and / wall time).")
print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
EOF
