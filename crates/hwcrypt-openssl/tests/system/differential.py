#!/usr/bin/python3
"""Known-answer and differential checks of the hwcrypt provider through the
system's python3-cryptography (which links the system libcrypto).

Run once with OPENSSL_CONF pointing at a config that enables hwcrypt and
once without: both runs print the same `digest` line when every result
agrees. Usage: differential.py ALG[,ALG...]; prints `cases`, `digest`,
`hwcrypt-bytes` (the provider's counter; -1 when it is not loaded) and
`failed` lines."""

import ctypes
import hashlib
import random
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

LARGE = [65536 + 7, (1 << 20) + 13]
failures = []
digest = hashlib.sha256()
cases = 0


def splits(rng, data):
    """`data` cut into 1 to 4 pieces at random points."""
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(rng.randrange(4)))
    bounds = [0] + cuts + [len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def run(ctx, pieces):
    return b"".join(ctx.update(p) for p in pieces) + ctx.finalize()


def lengths(step, minimum=0):
    return [n for n in range(minimum, 4097) if n % step == 0] + [n - n % step for n in LARGE]


def check_block(rng, name, make_mode, step, minimum, keylen):
    global cases
    for n in lengths(step, minimum):
        key = rng.randbytes(keylen)
        mode = make_mode(rng)
        pt = rng.randbytes(n)
        ct = run(Cipher(algorithms.AES(key), mode).encryptor(), splits(rng, pt))
        back = run(Cipher(algorithms.AES(key), mode).decryptor(), splits(rng, ct))
        cases += 1
        if back != pt:
            failures.append(f"{name} length {n}: decryption does not invert encryption")
        digest.update(f"{name}:{n}:".encode() + ct)


def flip(data, rng):
    """`data` with one random bit flipped."""
    i = rng.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]


def check_gcm(rng, bits):
    """AES-GCM incrementally (split data and associated data, tag before or
    after the data) and one-shot (AESGCM), with tampering."""
    global cases
    name = f"aes-{bits}-gcm"
    for n in lengths(1):
        key = rng.randbytes(bits // 8)
        iv = rng.randbytes(rng.choice([12, 12, 12, 8, 16, 60]))
        aad = rng.randbytes(rng.choice([0, 0, 1, 13, 20, 100]))
        pt = rng.randbytes(n)
        enc = Cipher(algorithms.AES(key), modes.GCM(iv)).encryptor()
        for piece in splits(rng, aad):
            enc.authenticate_additional_data(piece)
        ct = run(enc, splits(rng, pt))
        tag = enc.tag
        cases += 1
        digest.update(f"{name}:{n}:".encode() + iv + ct + tag)
        if rng.randrange(2):
            dec = Cipher(algorithms.AES(key), modes.GCM(iv, tag)).decryptor()
            dec.authenticate_additional_data(aad)
            back = run(dec, splits(rng, ct))
        else:
            dec = Cipher(algorithms.AES(key), modes.GCM(iv)).decryptor()
            dec.authenticate_additional_data(aad)
            back = b"".join(dec.update(p) for p in splits(rng, ct)) + dec.finalize_with_tag(tag)
        if back != pt:
            failures.append(f"{name} length {n}: no round trip")
        if len(iv) == 12:
            one_shot = AESGCM(key).encrypt(iv, pt, aad or None)
            if one_shot != ct + tag:
                failures.append(f"{name} length {n}: AESGCM differs from the incremental form")
            for bad in (flip(one_shot, rng), one_shot[:-16] + flip(tag, rng)):
                try:
                    AESGCM(key).decrypt(iv, bad, aad or None)
                    failures.append(f"{name} length {n}: tampered message accepted")
                except InvalidTag:
                    pass
        if n % 97 == 0:
            dec = Cipher(algorithms.AES(key), modes.GCM(iv, flip(tag, rng))).decryptor()
            dec.authenticate_additional_data(aad)
            try:
                run(dec, [ct])
                failures.append(f"{name} length {n}: tampered tag accepted (incremental)")
            except InvalidTag:
                pass


def check_chacha(rng):
    """Raw ChaCha20 with OpenSSL's 16-byte IV, split updates, counters near
    the 32-bit wrap (which carries into the nonce)."""
    global cases
    for n in lengths(1):
        key = rng.randbytes(32)
        counter = rng.choice([0, 1, rng.randrange(1 << 32), (1 << 32) - 1, (1 << 32) - 3])
        iv = counter.to_bytes(4, "little") + rng.randbytes(12)
        pt = rng.randbytes(n)
        ct = run(Cipher(algorithms.ChaCha20(key, iv), None).encryptor(), splits(rng, pt))
        back = run(Cipher(algorithms.ChaCha20(key, iv), None).decryptor(), splits(rng, ct))
        cases += 1
        if back != pt:
            failures.append(f"chacha20 length {n}: no round trip")
        digest.update(f"chacha20:{n}:".encode() + iv + ct)


def check_chacha_poly(rng):
    global cases
    for n in lengths(1):
        key = rng.randbytes(32)
        nonce = rng.randbytes(12)
        aad = rng.randbytes(rng.choice([0, 0, 1, 12, 13, 100]))
        pt = rng.randbytes(n)
        aead = ChaCha20Poly1305(key)
        ct = aead.encrypt(nonce, pt, aad or None)
        cases += 1
        digest.update(f"chacha20-poly1305:{n}:".encode() + ct)
        if aead.decrypt(nonce, ct, aad or None) != pt:
            failures.append(f"chacha20-poly1305 length {n}: no round trip")
        for bad in (flip(ct, rng), ct[:-16] + flip(ct[-16:], rng)):
            try:
                aead.decrypt(nonce, bad, aad or None)
                failures.append(f"chacha20-poly1305 length {n}: tampered message accepted")
            except InvalidTag:
                pass


def kat(name, key, iv, pt, ct):
    """One published vector (NIST SP 800-38A), both directions."""
    global cases
    cipher = {"ecb": lambda: Cipher(algorithms.AES(key), modes.ECB()),
              "ctr": lambda: Cipher(algorithms.AES(key), modes.CTR(iv))}[name[-3:]]
    cases += 1
    if run(cipher().encryptor(), [pt]) != ct or run(cipher().decryptor(), [ct]) != pt:
        failures.append(f"{name}: known answer")


def hwcrypt_bytes():
    """The provider's `hwcrypt-bytes-processed` counter, read through the
    libcrypto this process uses; -1 when hwcrypt is not loaded."""
    lib = ctypes.CDLL("libcrypto.so.3")
    lib.OSSL_PROVIDER_available.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    if not lib.OSSL_PROVIDER_available(None, b"hwcrypt"):
        return -1
    lib.OSSL_PROVIDER_load.restype = ctypes.c_void_p
    lib.OSSL_PROVIDER_load.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    prov = lib.OSSL_PROVIDER_load(None, b"hwcrypt")

    class Param(ctypes.Structure):
        _fields_ = [("key", ctypes.c_char_p), ("data_type", ctypes.c_uint),
                    ("data", ctypes.c_void_p), ("data_size", ctypes.c_size_t),
                    ("return_size", ctypes.c_size_t)]

    value = ctypes.c_uint64(0)
    params = (Param * 2)()
    params[0] = Param(b"hwcrypt-bytes-processed", 2, ctypes.addressof(value), 8, 0)
    lib.OSSL_PROVIDER_get_params.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    if lib.OSSL_PROVIDER_get_params(ctypes.c_void_p(prov), params) != 1:
        return -1
    return value.value


def main():
    global cases
    rng = random.Random(20261124)
    pt = bytes.fromhex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
    keys = {128: bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c"),
            192: bytes.fromhex("8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b"),
            256: bytes.fromhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")}
    ecb = {128: "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf",
           192: "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef",
           256: "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"}
    ctr = {128: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
           192: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94",
           256: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"}
    ctr_iv = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
    wanted = sys.argv[1].lower().split(",")
    for bits in (128, 192, 256):
        if f"aes-{bits}-ecb" in wanted:
            kat(f"aes-{bits}-ecb", keys[bits], None, pt, bytes.fromhex(ecb[bits]))
            check_block(rng, f"aes-{bits}-ecb", lambda r: modes.ECB(), 16, 0, bits // 8)
        if f"aes-{bits}-ctr" in wanted:
            kat(f"aes-{bits}-ctr", keys[bits], ctr_iv, pt, bytes.fromhex(ctr[bits]))
            check_block(rng, f"aes-{bits}-ctr", lambda r: modes.CTR(r.randbytes(16)), 1, 0, bits // 8)
            # A counter that carries across all 128 bits.
            check_block(rng, f"aes-{bits}-ctr-wrap",
                        lambda r: modes.CTR(b"\xff" * 15 + bytes([r.randrange(256)])), 1, 0, bits // 8)
    for bits in (128, 256):
        if f"aes-{bits}-xts" in wanted:
            # Each update call is a data unit of its own in OpenSSL's XTS:
            # one piece per call.
            for n in lengths(1, 16):
                key = rng.randbytes(bits // 4)
                tweak = rng.randbytes(16)
                data = rng.randbytes(n)
                ct = run(Cipher(algorithms.AES(key), modes.XTS(tweak)).encryptor(), [data])
                back = run(Cipher(algorithms.AES(key), modes.XTS(tweak)).decryptor(), [ct])
                cases += 1
                if back != data:
                    failures.append(f"aes-{bits}-xts length {n}: no round trip")
                digest.update(f"xts{bits}:{n}:".encode() + ct)
    for bits in (128, 192, 256):
        if f"aes-{bits}-gcm" in wanted:
            # McGrew-Viega test case 2/8/14: zero key, IV and block.
            want = {128: "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf",
                    192: "98e7247c07f0fe411c267e4384b0f6002ff58d80033927ab8ef4d4587514f0fb",
                    256: "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919"}[bits]
            cases += 1
            if AESGCM(bytes(bits // 8)).encrypt(bytes(12), bytes(16), None).hex() != want:
                failures.append(f"aes-{bits}-gcm: known answer")
            check_gcm(rng, bits)
    if "chacha20" in wanted:
        check_chacha(rng)
    if "chacha20-poly1305" in wanted:
        # RFC 8439 2.8.2, tag only.
        ct = ChaCha20Poly1305(bytes(range(0x80, 0xa0))).encrypt(
            bytes.fromhex("070000004041424344454647"),
            b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
            b"the future, sunscreen would be it.", bytes.fromhex("50515253c0c1c2c3c4c5c6c7"))
        cases += 1
        if ct[-16:].hex() != "1ae10b594f09e26a7e902ecbd0600691":
            failures.append("chacha20-poly1305: known answer")
        check_chacha_poly(rng)
    print(f"cases {cases}")
    print(f"digest {digest.hexdigest()}")
    print(f"hwcrypt-bytes {hwcrypt_bytes()}")
    for f in failures[:20]:
        print(f"FAIL {f}")
    print(f"failed {len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
