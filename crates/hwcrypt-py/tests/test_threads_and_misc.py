"""Threads (the GIL is released for long messages), cpu_info /
backend_for, and hwcrypt.age."""

import os
import threading

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM as C_AESGCM

import hwcrypt


def test_four_threads_seal_concurrently():
    key = os.urandom(32)
    a, ref = hwcrypt.AESGCM(key), C_AESGCM(key)
    msgs = [os.urandom(1 << 20) for _ in range(4)]
    nonces = [os.urandom(12) for _ in range(4)]
    results = [None] * 4

    def work(i):
        for _ in range(20):
            results[i] = a.encrypt(nonces[i], msgs[i], b"ad")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert results[i] == ref.encrypt(nonces[i], msgs[i], b"ad")


def test_a_context_shared_between_threads_is_an_error_not_a_hang():
    key = os.urandom(16)
    ctx = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CTR(b"\0" * 16)).encryptor()
    errors = []

    def work():
        for _ in range(50):
            try:
                ctx.update(b"\0" * (1 << 20))
            except RuntimeError:
                errors.append(1)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Finished (no deadlock); contention, if any, was reported as RuntimeError.


def test_cpu_info_and_backend_for():
    info = hwcrypt.cpu_info()
    assert {"detected", "usable", "backends", "hwcrypt_cpu"} <= set(info)
    assert info["backends"]["aes-gcm"]["default"] == hwcrypt.backend_for("aes-gcm")
    assert hwcrypt.AESGCM(b"k" * 16).backend == hwcrypt.backend_for("aes-gcm")
    assert hwcrypt.ChaCha20Poly1305(b"k" * 32).backend == hwcrypt.backend_for("chacha20-poly1305")
    if os.environ.get("HWCRYPT_CPU") == "none":
        assert hwcrypt.backend_for("aes-gcm") == "soft"
    with pytest.raises(ValueError):
        hwcrypt.backend_for("rot13")


def test_age_round_trips():
    for pq in [False, True]:
        secret, recipient = hwcrypt.age.keygen(post_quantum=pq)
        for n in [0, 1, 65536, 65537, 300000]:
            data = os.urandom(n)
            for armor in [False, True]:
                f = hwcrypt.age.encrypt(data, [recipient], armor=armor)
                assert hwcrypt.age.decrypt(f, [secret]) == data
        other, _ = hwcrypt.age.keygen(post_quantum=pq)
        with pytest.raises(hwcrypt.age.AgeError):
            hwcrypt.age.decrypt(f, [other])
    f = hwcrypt.age.encrypt(b"secret", passphrase="correct horse")
    assert hwcrypt.age.decrypt(f, passphrase="correct horse") == b"secret"
    with pytest.raises(hwcrypt.age.AgeError):
        hwcrypt.age.decrypt(f, passphrase="wrong")
    bad = bytearray(hwcrypt.age.encrypt(b"x" * 1000, [recipient]))
    bad[-5] ^= 1
    with pytest.raises(hwcrypt.age.AgeError):
        hwcrypt.age.decrypt(bytes(bad), [secret])
    with pytest.raises(ValueError):
        hwcrypt.age.encrypt(b"x", ["not-a-recipient"])
