"""AESGCM, ChaCha20Poly1305 and XChaCha20Poly1305 against ``cryptography``:
every length 0..=4096 and a few large ones, random keys, nonces and
associated data; ``*_into``; tampering."""

import os

import pytest
from cryptography.hazmat.primitives.ciphers import aead as c_aead

import hwcrypt
from conftest import rbytes

LENGTHS = list(range(0, 4097)) + [65536, 65537, 1 << 20]


def cases():
    yield "AESGCM", 16, 12
    yield "AESGCM", 24, 12
    yield "AESGCM", 32, 12
    yield "AESGCM", 32, 8
    yield "AESGCM", 16, 60
    yield "ChaCha20Poly1305", 32, 12


@pytest.mark.parametrize("name,key_len,nonce_len", list(cases()))
def test_matches_cryptography(rng, name, key_len, nonce_len):
    ours, theirs = getattr(hwcrypt, name), getattr(c_aead, name)
    for n in LENGTHS:
        if n > 4096 or n % 7 == 0 or n < 64:
            key = rbytes(rng, key_len)
        a, b = ours(key), theirs(key)
        nonce = rbytes(rng, nonce_len)
        data = rbytes(rng, n)
        ad = rbytes(rng, rng.choice([0, 1, 13, 16, 17, 100])) if n % 3 else None
        ct = a.encrypt(nonce, data, ad)
        assert ct == b.encrypt(nonce, data, ad), n
        assert a.decrypt(nonce, ct, ad) == data
        if n % 97 == 0:
            # bytearray and memoryview inputs read the same bytes.
            assert a.encrypt(bytearray(nonce), memoryview(data), ad) == ct
            buf = bytearray(n + 16)
            assert a.encrypt_into(nonce, data, ad, buf) == n + 16
            assert bytes(buf) == ct
            out = bytearray(n)
            assert a.decrypt_into(nonce, ct, ad, out) == n
            assert bytes(out) == data


def test_xchacha_round_trip_and_vector():
    # draft-irtf-cfrg-xchacha-03, A.3.1 (AEAD_XChaCha20_Poly1305).
    key = bytes(range(0x80, 0xA0))
    nonce = bytes.fromhex("404142434445464748494a4b4c4d4e4f5051525354555657")
    ad = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
    pt = (
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one"
        b" tip for the future, sunscreen would be it."
    )
    ct = hwcrypt.XChaCha20Poly1305(key).encrypt(nonce, pt, ad)
    assert ct[-16:].hex() == "c0875924c1c7987947deafd8780acf49"
    assert ct[:16].hex() == "bd6d179d3e83d43b9576579493c0e939"
    assert hwcrypt.XChaCha20Poly1305(key).decrypt(nonce, ct, ad) == pt


@pytest.mark.parametrize("name", ["AESGCM", "ChaCha20Poly1305", "XChaCha20Poly1305"])
def test_tampering_raises_invalid_tag_and_releases_nothing(rng, name):
    cls = getattr(hwcrypt, name)
    key = cls.generate_key(256) if name == "AESGCM" else cls.generate_key()
    a = cls(key)
    nonce = rbytes(rng, 24 if name.startswith("X") else 12)
    ct = a.encrypt(nonce, b"attack at dawn" * 300, b"ad")
    for i in [0, 5, len(ct) - 17, len(ct) - 1]:
        bad = bytearray(ct)
        bad[i] ^= 1
        with pytest.raises(hwcrypt.InvalidTag):
            a.decrypt(nonce, bytes(bad), b"ad")
        out = bytearray(b"\xaa" * (len(ct) - 16))
        with pytest.raises(hwcrypt.InvalidTag):
            a.decrypt_into(nonce, bytes(bad), b"ad", out)
        assert out == bytearray(len(out)), "no unverified plaintext in the buffer"
    with pytest.raises(hwcrypt.InvalidTag):
        a.decrypt(nonce, ct, b"other ad")
    with pytest.raises(hwcrypt.InvalidTag):
        a.decrypt(nonce, ct[:15], b"ad")
    # It is cryptography's InvalidTag too.
    from cryptography.exceptions import InvalidTag

    with pytest.raises(InvalidTag):
        a.decrypt(nonce, ct[:-1], b"ad")


def test_generate_key():
    assert len(hwcrypt.AESGCM.generate_key(128)) == 16
    assert len(hwcrypt.AESGCM.generate_key(192)) == 24
    assert len(hwcrypt.AESGCM.generate_key(256)) == 32
    assert hwcrypt.AESGCM.generate_key(128) != hwcrypt.AESGCM.generate_key(128)
    assert len(hwcrypt.ChaCha20Poly1305.generate_key()) == 32
    assert len(hwcrypt.XChaCha20Poly1305.generate_key()) == 32


def test_into_overlapping_buffers(rng):
    """Input and output views of one buffer: the output is still right."""
    key = rbytes(rng, 16)
    a = hwcrypt.AESGCM(key)
    nonce = rbytes(rng, 12)
    for n in [0, 1, 100, 5000]:
        data = rbytes(rng, n)
        expected = a.encrypt(nonce, data, None)
        for shift in [0, 1, 8, 16]:
            buf = bytearray(n + 16 + shift)
            buf[shift : shift + n] = data
            mv = memoryview(buf)
            # data at [shift, shift + n), output at [0, n + 16): they overlap.
            a.encrypt_into(nonce, mv[shift : shift + n], None, mv[: n + 16])
            assert bytes(buf[: n + 16]) == expected, (n, shift)
        buf = bytearray(expected) + bytearray(3)
        mv = memoryview(buf)
        a.decrypt_into(nonce, mv[: n + 16], None, mv[3 : 3 + n])
        assert bytes(buf[3 : 3 + n]) == data


def test_numpy_like_buffers(rng):
    array = pytest.importorskip("array")
    key = rbytes(rng, 32)
    data = array.array("B", rbytes(rng, 1000))
    a = hwcrypt.ChaCha20Poly1305(key)
    nonce = os.urandom(12)
    assert a.decrypt(nonce, a.encrypt(nonce, data, None), None) == bytes(data)


def test_into_with_nonce_or_aad_inside_the_output_buffer(rng):
    """A nonce or associated data that are views of the output buffer are
    read before the output is written (they are copied first)."""
    key = rbytes(rng, 16)
    a = hwcrypt.AESGCM(key)
    for n in [0, 5, 100, 5000]:
        data = rbytes(rng, n)
        nonce, ad = rbytes(rng, 12), rbytes(rng, 20)
        expected = a.encrypt(nonce, data, ad)
        buf = bytearray(n + 16)
        buf[:12] = nonce
        mv = memoryview(buf)
        a.encrypt_into(mv[:12], data, ad, mv)
        assert bytes(buf) == expected, n
        buf = bytearray(n + 16 + 20)
        buf[:20] = ad
        mv = memoryview(buf)
        a.encrypt_into(nonce, data, mv[:20], mv[: n + 16])
        assert bytes(buf[: n + 16]) == expected, n
        if n >= 12:
            out = bytearray(n)
            ct = a.encrypt(bytes(data[:12]), data, None)
            out[:12] = data[:12]
            mv = memoryview(out)
            a.decrypt_into(mv[:12], ct, None, mv)
            assert bytes(out) == data


@pytest.mark.parametrize("name,key_len,nonce_len", list(cases()))
def test_long_associated_data_short_message(rng, name, key_len, nonce_len):
    """Review 2026-11-29: the GIL is released by the call's whole work
    (message and associated data), so a megabyte of associated data with a
    short message runs detached too; the bytes are the same."""
    ours, theirs = getattr(hwcrypt, name), getattr(c_aead, name)
    key = rbytes(rng, key_len)
    a, b = ours(key), theirs(key)
    for n, ad_len in [(0, 1 << 20), (10, 5000), (4095, 1), (3, 4093)]:
        nonce, data, ad = rbytes(rng, nonce_len), rbytes(rng, n), rbytes(rng, ad_len)
        ct = a.encrypt(nonce, data, ad)
        assert ct == b.encrypt(nonce, data, ad)
        assert a.decrypt(nonce, ct, ad) == data
        out = bytearray(n + 16)
        assert a.encrypt_into(nonce, data, ad, out) == n + 16 and out == ct
        back = bytearray(n)
        assert a.decrypt_into(nonce, ct, ad, back) == n and back == data


def test_gcm_context_long_associated_data(rng):
    key, iv = rbytes(rng, 16), rbytes(rng, 12)
    ad = rbytes(rng, 1 << 20)
    from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
    from cryptography.hazmat.primitives.ciphers import algorithms as c_alg
    from cryptography.hazmat.primitives.ciphers import modes as c_modes

    ours = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv)).encryptor()
    theirs = CCipher(c_alg.AES(key), c_modes.GCM(iv)).encryptor()
    ours.authenticate_additional_data(ad)
    theirs.authenticate_additional_data(ad)
    assert ours.update(b"abc") + ours.finalize() == theirs.update(b"abc") + theirs.finalize()
    assert ours.tag == theirs.tag
