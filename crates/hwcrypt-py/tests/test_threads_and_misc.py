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
    # One recipient given as a string, as decrypt takes one identity.
    assert hwcrypt.age.decrypt(hwcrypt.age.encrypt(b"one", recipient), secret) == b"one"
    # An empty passphrase would make a file anyone opens: refused.
    with pytest.raises(ValueError):
        hwcrypt.age.encrypt(b"x", passphrase="")


def test_age_streams(tmp_path):
    import io
    import shutil
    import subprocess

    secret, recipient = hwcrypt.age.keygen()
    for n in [0, 1, 65535, 65536, 65537, 3 * (1 << 20) + 5]:
        data = os.urandom(n)
        for armor in [False, True]:
            src, dst = io.BytesIO(data), io.BytesIO()
            assert hwcrypt.age.encrypt_stream(src, dst, [recipient], armor=armor) == n
            f = dst.getvalue()
            assert hwcrypt.age.decrypt(f, [secret]) == data
            out = io.BytesIO()
            assert hwcrypt.age.decrypt_stream(io.BytesIO(f), out, [secret]) == n
            assert out.getvalue() == data
    # Real files, and the whole-buffer form reads what the stream wrote.
    p = tmp_path / "plain.bin"
    p.write_bytes(os.urandom(200000))
    with open(p, "rb") as src, open(tmp_path / "f.age", "wb") as dst:
        hwcrypt.age.encrypt_stream(src, dst, [recipient])
    with open(tmp_path / "f.age", "rb") as src, open(tmp_path / "back.bin", "wb") as dst:
        hwcrypt.age.decrypt_stream(src, dst, secret)
    assert (tmp_path / "back.bin").read_bytes() == p.read_bytes()
    # A truncated file: AgeError, and what was written verified.
    f = (tmp_path / "f.age").read_bytes()
    out = io.BytesIO()
    with pytest.raises(hwcrypt.age.AgeError):
        hwcrypt.age.decrypt_stream(io.BytesIO(f[:-100]), out, [secret])
    assert p.read_bytes().startswith(out.getvalue())
    # The age tool, where it is installed, reads the stream's output.
    if shutil.which("age"):
        (tmp_path / "key.txt").write_text(secret + "\n")
        got = subprocess.run(["age", "-d", "-i", str(tmp_path / "key.txt"), str(tmp_path / "f.age")],
                             capture_output=True, check=True).stdout
        assert got == p.read_bytes()


def test_age_stream_non_blocking_raw_writer_is_an_error():
    """A raw file whose write() returns None wrote nothing (it would
    block): an error, not data silently lost; a plain class whose write()
    returns None took everything."""
    import fcntl
    import io

    secret, recipient = hwcrypt.age.keygen()
    plain = os.urandom(1 << 20)
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        with open(w, "wb", buffering=0, closefd=False) as dst:
            with pytest.raises(hwcrypt.age.AgeError):
                hwcrypt.age.encrypt_stream(io.BytesIO(plain), dst, [recipient])
    finally:
        os.close(r)
        os.close(w)

    class Sink:
        def __init__(self):
            self.data = bytearray()

        def write(self, b):
            self.data += b

    sink = Sink()
    assert hwcrypt.age.encrypt_stream(io.BytesIO(plain), sink, [recipient]) == len(plain)
    assert hwcrypt.age.decrypt(bytes(sink.data), [secret]) == plain


def test_age_stream_file_errors_pass_through():
    import io

    secret, recipient = hwcrypt.age.keygen()

    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def read(self, n=-1):
            raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        hwcrypt.age.encrypt_stream(Broken(), io.BytesIO(), [recipient])

    class Trickle(io.RawIOBase):
        """Returns at most 3 bytes per read: armor is still detected."""

        def __init__(self, data):
            self.data, self.pos = data, 0

        def readable(self):
            return True

        def read(self, n=-1):
            chunk = self.data[self.pos : self.pos + min(n, 3)]
            self.pos += len(chunk)
            return chunk

    f = hwcrypt.age.encrypt(b"hello" * 1000, [recipient], armor=True)
    out = io.BytesIO()
    hwcrypt.age.decrypt_stream(Trickle(f), out, [secret])
    assert out.getvalue() == b"hello" * 1000


def test_review_2026_11_29_age_keys_given_as_bytes():
    """Found in review: recipients or identities given as bytes (a key file
    read in binary mode) raised "'int' object is not an instance of 'str'";
    now a TypeError that says what was expected."""
    secret, recipient = hwcrypt.age.keygen()
    for bad in (recipient.encode(), [recipient.encode()], 5):
        with pytest.raises(TypeError, match="str"):
            hwcrypt.age.encrypt(b"hi", bad)
    sealed = hwcrypt.age.encrypt(b"hi", (recipient,))
    with pytest.raises(TypeError, match="decode the key text"):
        hwcrypt.age.decrypt(sealed, secret.encode())
    assert hwcrypt.age.decrypt(sealed, [secret]) == b"hi"
