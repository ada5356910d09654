"""hwcrypt vs cryptography (its bundled OpenSSL) vs pycryptodome, in one
Python process: GB/s (1e9 B/s of plaintext, one call per message, key made
beforehand) at 64 B, 1 KiB, 16 KiB and 1 MiB; then 2 threads against one at
1 MiB. Medians of --reps timed runs; the implementations of a cell run
interleaved, so drifting clocks hit them alike.

    python bench.py [--reps 5] [--time 0.2] [--algs aes-128-gcm,...]
"""

import argparse
import os
import statistics
import threading
import time

import hwcrypt
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers import aead as c_aead

try:
    from Crypto.Cipher import AES as P_AES
    from Crypto.Cipher import ChaCha20_Poly1305 as P_CHACHA
except ImportError:  # pragma: no cover
    P_AES = P_CHACHA = None

SIZES = [64, 1024, 16384, 1 << 20]


def impls(alg, size):
    """name -> a function sealing one message of `size` bytes."""
    data = os.urandom(size)
    nonce12 = os.urandom(12)
    iv16 = os.urandom(16)
    out = {}
    if alg in ("aes-128-gcm", "aes-256-gcm"):
        key = os.urandom(16 if alg == "aes-128-gcm" else 32)
        h, c = hwcrypt.AESGCM(key), c_aead.AESGCM(key)
        out["hwcrypt"] = lambda: h.encrypt(nonce12, data, None)
        out["cryptography"] = lambda: c.encrypt(nonce12, data, None)
        if P_AES:
            out["pycryptodome"] = lambda: P_AES.new(key, P_AES.MODE_GCM, nonce=nonce12).encrypt_and_digest(data)
    elif alg == "chacha20-poly1305":
        key = os.urandom(32)
        h, c = hwcrypt.ChaCha20Poly1305(key), c_aead.ChaCha20Poly1305(key)
        out["hwcrypt"] = lambda: h.encrypt(nonce12, data, None)
        out["cryptography"] = lambda: c.encrypt(nonce12, data, None)
        if P_CHACHA:
            out["pycryptodome"] = lambda: P_CHACHA.new(key=key, nonce=nonce12).encrypt_and_digest(data)
    elif alg == "aes-256-ctr":
        key = os.urandom(32)
        hc = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CTR(iv16))
        cc = Cipher(algorithms.AES(key), modes.CTR(iv16))
        out["hwcrypt"] = lambda: hwcrypt.aes_ctr(key, iv16, data)
        out["hwcrypt Cipher"] = lambda: hc.encryptor().update(data)
        out["cryptography"] = lambda: cc.encryptor().update(data)
        if P_AES:
            out["pycryptodome"] = lambda: P_AES.new(key, P_AES.MODE_CTR, initial_value=iv16, nonce=b"").encrypt(data)
    elif alg == "aes-256-xts":
        key = os.urandom(64)
        hc = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.XTS(iv16))
        cc = Cipher(algorithms.AES(key), modes.XTS(iv16))
        out["hwcrypt"] = lambda: hwcrypt.aes_xts_encrypt(key, iv16, data)
        out["hwcrypt Cipher"] = lambda: hc.encryptor().update(data)
        out["cryptography"] = lambda: cc.encryptor().update(data)
    return out


def rate(f, size, seconds):
    """GB/s of one timed run of about `seconds`."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            f()
        dt = time.perf_counter() - t
        if dt >= seconds / 4:
            break
        n *= 4
    n = max(1, int(n * seconds / dt))
    t = time.perf_counter()
    for _ in range(n):
        f()
    return n * size / (time.perf_counter() - t) / 1e9


def threaded(f, size, threads, seconds):
    """Aggregate GB/s of `threads` threads each running `f` for `seconds`."""
    counts = [0] * threads
    stop = time.perf_counter() + seconds
    barrier = threading.Barrier(threads + 1)

    def work(i):
        barrier.wait()
        while time.perf_counter() < stop:
            f()
            counts[i] += 1

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    t0 = time.perf_counter()
    barrier.wait()
    for t in ts:
        t.join()
    return sum(counts) * size / (time.perf_counter() - t0) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--time", type=float, default=0.2)
    ap.add_argument("--algs", default="aes-128-gcm,aes-256-gcm,chacha20-poly1305,aes-256-ctr,aes-256-xts")
    args = ap.parse_args()
    import cryptography

    print(f"# hwcrypt {hwcrypt.__version__} (aes-gcm: {hwcrypt.backend_for('aes-gcm')}, "
          f"chacha20-poly1305: {hwcrypt.backend_for('chacha20-poly1305')}), "
          f"cryptography {cryptography.__version__}, HWCRYPT_CPU={os.environ.get('HWCRYPT_CPU', '')!r}")
    print(f"{'algorithm':<20}{'size':>9}  {'implementation':<16}{'GB/s':>8}{'ns/call':>10}  vs cryptography")
    for alg in args.algs.split(","):
        for size in SIZES:
            fs = impls(alg, size)
            samples = {k: [] for k in fs}
            for _ in range(args.reps):
                for k, f in fs.items():
                    samples[k].append(rate(f, size, args.time))
            med = {k: statistics.median(v) for k, v in samples.items()}
            label = f"{size // 1024} KiB" if size >= 1024 and size < 1 << 20 else ("1 MiB" if size == 1 << 20 else f"{size} B")
            for k, v in med.items():
                ratio = v / med["cryptography"]
                print(f"{alg:<20}{label:>9}  {k:<16}{v:8.3f}{size / v:10.0f}  {ratio:5.2f}x")
    print("\n# threads at 1 MiB: aggregate GB/s, 2 threads / 1 thread")
    for alg in ["aes-256-gcm", "chacha20-poly1305"]:
        for k, f in impls(alg, 1 << 20).items():
            one = statistics.median(threaded(f, 1 << 20, 1, args.time * 2) for _ in range(args.reps))
            two = statistics.median(threaded(f, 1 << 20, 2, args.time * 2) for _ in range(args.reps))
            print(f"{alg:<20}{k:<16} 1 thread {one:7.3f}  2 threads {two:7.3f}  scaling {two / one:4.2f}x")


if __name__ == "__main__":
    main()
