"""The Cipher contexts and one-shot functions against ``cryptography``:
every length 0..=4096 (block modes: the multiples of 16) in random update
splits, ``update_into``, GCM with associated data."""

import pytest
from cryptography.hazmat.primitives import padding as c_padding
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import algorithms as c_alg
from cryptography.hazmat.primitives.ciphers import modes as c_modes

import hwcrypt
from conftest import rbytes

LENGTHS = list(range(0, 4097)) + [65536 + 5, 1 << 20]


def run(ctx, data, rng):
    """`data` through `ctx` in random pieces, then finalize."""
    out, i = [], 0
    while i < len(data):
        j = min(len(data), i + rng.choice([1, 7, 16, 33, 500, 4096, 100000]))
        out.append(ctx.update(data[i:j]))
        i = j
    out.append(ctx.finalize())
    return b"".join(out)


def pair(mode, key, arg):
    ours = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), getattr(hwcrypt.modes, mode)(*arg))
    theirs = CCipher(c_alg.AES(key), getattr(c_modes, mode)(*arg))
    return ours, theirs


@pytest.mark.parametrize("mode", ["CTR", "CBC", "ECB"])
@pytest.mark.parametrize("key_len", [16, 24, 32])
def test_modes_match_cryptography(rng, mode, key_len):
    for n in LENGTHS:
        if mode != "CTR" and n % 16:
            continue
        key = rbytes(rng, key_len)
        arg = () if mode == "ECB" else (rbytes(rng, 16),)
        if mode == "CTR" and n % 5 == 0:
            arg = (b"\xff" * 15 + bytes([rng.randrange(256)]),)  # carries across 2^128
        ours, theirs = pair(mode, key, arg)
        data = rbytes(rng, n)
        ct = theirs.encryptor().update(data)
        assert run(ours.encryptor(), data, rng) == ct, (mode, n)
        assert run(ours.decryptor(), ct, rng) == data
        if n % 64 == 0:
            buf = bytearray(n + 15)
            enc = ours.encryptor()
            assert enc.update_into(data, buf) == n
            assert bytes(buf[:n]) == ct


@pytest.mark.parametrize("key_len", [32, 64])
def test_xts_matches_cryptography(rng, key_len):
    for n in list(range(16, 4097)) + [65536, 65536 + 17]:
        key = rbytes(rng, key_len)
        tweak = rbytes(rng, 16)
        ours, theirs = pair("XTS", key, (tweak,))
        data = rbytes(rng, n)
        ct = theirs.encryptor().update(data)
        enc = ours.encryptor()
        assert enc.update(data) == ct, n
        assert enc.finalize() == b""
        assert ours.decryptor().update(ct) == data
        assert hwcrypt.aes_xts_encrypt(key, tweak, data) == ct
        assert hwcrypt.aes_xts_decrypt(key, tweak, ct) == data


@pytest.mark.parametrize("key_len", [16, 24, 32])
def test_gcm_streaming_matches_cryptography(rng, key_len):
    for n in LENGTHS[::3] + [4096, 4095]:
        key = rbytes(rng, key_len)
        iv = rbytes(rng, rng.choice([12, 12, 8, 16, 60]))
        ad = [rbytes(rng, rng.choice([0, 1, 13, 16, 40])) for _ in range(rng.choice([0, 1, 3]))]
        data = rbytes(rng, n)
        ours, theirs = pair("GCM", key, (iv,))
        e = theirs.encryptor()
        for a in ad:
            e.authenticate_additional_data(a)
        ct = e.update(data) + e.finalize()
        tag = e.tag
        enc = ours.encryptor()
        for a in ad:
            enc.authenticate_additional_data(a)
        assert run(enc, data, rng) == ct, n
        assert enc.tag == tag
        dec = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv, tag)).decryptor()
        for a in ad:
            dec.authenticate_additional_data(a)
        assert run(dec, ct, rng) == data
        dec = ours.decryptor()
        for a in ad:
            dec.authenticate_additional_data(a)
        assert dec.update(ct) == data
        bad = bytes([tag[0] ^ 1]) + tag[1:]
        with pytest.raises(hwcrypt.InvalidTag):
            dec.finalize_with_tag(bad)


def test_gcm_min_tag_length_without_a_tag_is_not_checked():
    """cryptography checks min_tag_length only against a tag given to the
    mode: any value is accepted without one (it raised OverflowError or
    TypeError here)."""
    key, iv = bytes(16), bytes(12)
    for make in (hwcrypt.modes.GCM, c_modes.GCM):
        for min_len in (-1, 2**70, 3.5):
            enc = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), make(iv, None, min_len)).encryptor()
            ct = enc.update(b"hello") + enc.finalize()
            dec = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), make(iv, None, min_len)).decryptor()
            assert dec.update(ct) + dec.finalize_with_tag(enc.tag) == b"hello"


def test_gcm_short_tags(rng):
    key, iv = rbytes(rng, 16), rbytes(rng, 12)
    data = rbytes(rng, 100)
    e = CCipher(c_alg.AES(key), c_modes.GCM(iv)).encryptor()
    ct = e.update(data) + e.finalize()
    for tag_len in [4, 8, 12, 13, 15]:
        tag = e.tag[:tag_len]
        mode = hwcrypt.modes.GCM(iv, tag, min_tag_length=tag_len)
        d = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), mode).decryptor()
        assert d.update(ct) + d.finalize() == data
        bad = hwcrypt.modes.GCM(iv, bytes([tag[0] ^ 1]) + tag[1:], min_tag_length=tag_len)
        d = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), bad).decryptor()
        d.update(ct)
        with pytest.raises(hwcrypt.InvalidTag):
            d.finalize()


def test_cryptography_objects_are_accepted(rng):
    key, iv = rbytes(rng, 32), rbytes(rng, 16)
    data = rbytes(rng, 1000)
    ours = hwcrypt.Cipher(c_alg.AES(key), c_modes.CTR(iv))
    assert ours.encryptor().update(data) == CCipher(c_alg.AES(key), c_modes.CTR(iv)).encryptor().update(data)


def test_one_shot_functions(rng):
    for n in [0, 1, 15, 16, 17, 1000, 100000]:
        key, iv, data = rbytes(rng, 32), rbytes(rng, 16), rbytes(rng, n)
        assert hwcrypt.aes_ctr(key, iv, data) == CCipher(c_alg.AES(key), c_modes.CTR(iv)).encryptor().update(data)
        padder = c_padding.PKCS7(128).padder()
        padded = padder.update(data) + padder.finalize()
        assert hwcrypt.pkcs7_pad(data) == padded
        assert hwcrypt.pkcs7_unpad(padded) == data
        ct = CCipher(c_alg.AES(key), c_modes.CBC(iv)).encryptor().update(padded)
        assert hwcrypt.aes_cbc_encrypt(key, iv, data) == ct
        assert hwcrypt.aes_cbc_decrypt(key, iv, ct) == data
        assert hwcrypt.aes_cbc_encrypt(key, iv, padded, padding=False) == ct
        assert hwcrypt.aes_cbc_decrypt(key, iv, ct, padding=False) == padded
        ecb = CCipher(c_alg.AES(key), c_modes.ECB()).encryptor().update(padded)
        assert hwcrypt.aes_ecb_encrypt(key, padded) == ecb
        assert hwcrypt.aes_ecb_decrypt(key, ecb) == padded
    with pytest.raises(ValueError):
        hwcrypt.aes_cbc_decrypt(b"k" * 16, b"\0" * 16, b"x" * 16)  # bad padding
    with pytest.raises(ValueError):
        hwcrypt.aes_ecb_encrypt(b"k" * 16, b"x" * 15)


def test_cryptography_gcm_mode_with_short_min_tag_length(rng):
    key, iv, data = rbytes(rng, 16), rbytes(rng, 12), rbytes(rng, 50)
    e = CCipher(c_alg.AES(key), c_modes.GCM(iv)).encryptor()
    ct = e.update(data) + e.finalize()
    mode = c_modes.GCM(iv, e.tag[:12], min_tag_length=12)
    d = hwcrypt.Cipher(c_alg.AES(key), mode).decryptor()
    assert d.update(ct) + d.finalize() == data


def test_context_is_spent_after_a_failed_tag_check(rng):
    key, iv = rbytes(rng, 16), rbytes(rng, 12)
    d = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv, b"\0" * 16)).decryptor()
    d.update(b"abc")
    with pytest.raises(hwcrypt.InvalidTag):
        d.finalize()
    with pytest.raises(hwcrypt.AlreadyFinalized):
        d.finalize()
    with pytest.raises(hwcrypt.AlreadyFinalized):
        d.update(b"x")
    # A tag in the mode and another to finalize_with_tag: refused.
    d = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv, b"\0" * 16)).decryptor()
    with pytest.raises(ValueError):
        d.finalize_with_tag(b"\0" * 16)
    # A partial block refuses finalize without spending the context (as
    # `cryptography`): the rest of the block, then finalize, works.
    c = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CBC(iv + b"\0" * 4)).encryptor()
    c.update(b"x" * 5)
    with pytest.raises(ValueError):
        c.finalize()
    assert len(c.update(b"x" * 11)) == 16
    assert c.finalize() == b""
