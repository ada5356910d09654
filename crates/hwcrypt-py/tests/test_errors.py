"""Every misuse raises the exception type ``cryptography`` raises for it."""

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher as CCipher
from cryptography.hazmat.primitives.ciphers import aead as c_aead
from cryptography.hazmat.primitives.ciphers import algorithms as c_alg
from cryptography.hazmat.primitives.ciphers import modes as c_modes

import hwcrypt


def outcome(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__
    return "ok"


def same(ours, theirs):
    assert outcome(ours) == outcome(theirs)


K16, K32 = b"k" * 16, bytes(range(32))


@pytest.mark.parametrize(
    "name,key,args",
    [
        ("AESGCM", b"x" * 15, None),
        ("AESGCM", "x" * 16, None),
        ("AESGCM", None, None),
        ("AESGCM", K16, (b"n" * 7, b"d", None)),
        ("AESGCM", K16, (b"n" * 129, b"d", None)),
        ("AESGCM", K16, ("n" * 12, b"d", None)),
        ("AESGCM", K16, (b"n" * 12, None, None)),
        ("AESGCM", K16, (b"n" * 12, b"d", "ad")),
        ("AESGCM", K16, (b"n" * 12, b"d", b"ad")),
        ("ChaCha20Poly1305", K16, None),
        ("ChaCha20Poly1305", K32, (b"n" * 8, b"d", None)),
        ("ChaCha20Poly1305", K32, (b"n" * 13, b"d", None)),
        ("ChaCha20Poly1305", K32, (b"n" * 12, b"d", None)),
    ],
)
def test_aead_argument_errors(name, key, args):
    ours, theirs = getattr(hwcrypt, name), getattr(c_aead, name)
    if args is None:
        same(lambda: ours(key), lambda: theirs(key))
    else:
        same(lambda: ours(key).encrypt(*args), lambda: theirs(key).encrypt(*args))
        same(lambda: ours(key).decrypt(*args), lambda: theirs(key).decrypt(*args))


def test_generate_key_errors():
    for bad in [100, 0, 512]:
        same(lambda: hwcrypt.AESGCM.generate_key(bad), lambda: c_aead.AESGCM.generate_key(bad))
    same(lambda: hwcrypt.AESGCM.generate_key("128"), lambda: c_aead.AESGCM.generate_key("128"))


def test_into_buffer_errors():
    for cls in ["AESGCM", "ChaCha20Poly1305"]:
        a, b = getattr(hwcrypt, cls)(K32), getattr(c_aead, cls)(K32)
        n = b"n" * 12
        for buf in [bytearray(19), bytearray(20), bytearray(18), bytes(19)]:
            same(lambda: a.encrypt_into(n, b"abc", None, buf), lambda: b.encrypt_into(n, b"abc", None, buf))
        ct = b.encrypt(n, b"abc", None)
        for buf in [bytearray(3), bytearray(4), bytes(3)]:
            same(lambda: a.decrypt_into(n, ct, None, buf), lambda: b.decrypt_into(n, ct, None, buf))


def both(mode_ours, mode_theirs, key):
    return (
        lambda: hwcrypt.Cipher(hwcrypt.algorithms.AES(key), mode_ours()),
        lambda: CCipher(c_alg.AES(key), mode_theirs()),
    )


@pytest.mark.parametrize(
    "mode,arg,key",
    [
        ("CBC", b"\0" * 15, K16),
        ("CBC", b"\0" * 16, b"k" * 17),
        ("CBC", "x" * 16, K16),
        ("CTR", b"\0" * 15, K16),
        ("XTS", b"\0" * 15, K32),
        ("XTS", b"\0" * 16, K16),
        ("XTS", b"\0" * 16, b"k" * 48),
        ("GCM", b"\0" * 7, K16),
        ("GCM", b"\0" * 12, b"k" * 64),
    ],
)
def test_cipher_construction_errors(mode, arg, key):
    ours, theirs = both(
        lambda: getattr(hwcrypt.modes, mode)(arg), lambda: getattr(c_modes, mode)(arg), key
    )
    same(ours, theirs)


def test_context_errors():
    key = K16
    pairs = [
        (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CBC(b"\0" * 16)),
         CCipher(c_alg.AES(key), c_modes.CBC(b"\0" * 16))),
        (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.ECB()),
         CCipher(c_alg.AES(key), c_modes.ECB())),
    ]
    for ours, theirs in pairs:
        for make in ["encryptor", "decryptor"]:
            a, b = getattr(ours, make)(), getattr(theirs, make)()
            same(lambda: a.update(b"x" * 5), lambda: b.update(b"x" * 5))
            same(a.finalize, b.finalize)  # a partial block left: ValueError
            a, b = getattr(ours, make)(), getattr(theirs, make)()
            a.update(b"x" * 16), b.update(b"x" * 16)
            same(a.finalize, b.finalize)
            same(a.finalize, b.finalize)  # AlreadyFinalized
            same(lambda: a.update(b"x"), lambda: b.update(b"x"))
            a, b = getattr(ours, make)(), getattr(theirs, make)()
            for n in [19, 20, 30, 31]:
                buf = bytearray(n)
                same(lambda: a.update_into(b"x" * 16, buf), lambda: b.update_into(b"x" * 16, buf))
    # XTS: the first update needs a block; duplicated key halves.
    xk = bytes(range(64))
    a = hwcrypt.Cipher(hwcrypt.algorithms.AES(xk), hwcrypt.modes.XTS(b"\0" * 16)).encryptor()
    b = CCipher(c_alg.AES(xk), c_modes.XTS(b"\0" * 16)).encryptor()
    same(lambda: a.update(b"x" * 15), lambda: b.update(b"x" * 15))
    dup = b"k" * 64
    same(
        lambda: hwcrypt.Cipher(hwcrypt.algorithms.AES(dup), hwcrypt.modes.XTS(b"\0" * 16)).encryptor(),
        lambda: CCipher(c_alg.AES(dup), c_modes.XTS(b"\0" * 16)).encryptor(),
    )


def test_gcm_context_errors():
    key, iv = K16, b"\0" * 12
    ours = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv))
    theirs = CCipher(c_alg.AES(key), c_modes.GCM(iv))
    a, b = ours.encryptor(), theirs.encryptor()
    same(lambda: a.tag, lambda: b.tag)  # NotYetFinalized
    a.update(b"abc"), b.update(b"abc")
    same(lambda: a.authenticate_additional_data(b"x"), lambda: b.authenticate_additional_data(b"x"))
    a.finalize(), b.finalize()
    assert a.tag == b.tag
    a, b = ours.decryptor(), theirs.decryptor()
    a.update(b"abc"), b.update(b"abc")
    same(a.finalize, b.finalize)  # no tag: ValueError
    a, b = ours.decryptor(), theirs.decryptor()
    a.update(b"abc"), b.update(b"abc")
    same(lambda: a.finalize_with_tag(b"\0" * 16), lambda: b.finalize_with_tag(b"\0" * 16))
    a, b = ours.decryptor(), theirs.decryptor()
    same(lambda: a.finalize_with_tag(b"\0" * 3), lambda: b.finalize_with_tag(b"\0" * 3))
    same(lambda: hwcrypt.modes.GCM(iv, b"\0" * 3), lambda: c_modes.GCM(iv, b"\0" * 3))
    same(
        lambda: hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv, b"\0" * 16)).encryptor(),
        lambda: CCipher(c_alg.AES(key), c_modes.GCM(iv, b"\0" * 16)).encryptor(),
    )


def test_review_2026_11_29_cryptography_parity():
    """Found in review: a refused finalize spent the context; an empty XTS
    update was refused; a non-contiguous buffer raised ValueError."""
    key = K16
    # CBC: a partial block refuses finalize, and the context stays usable.
    pair = (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CBC(b"\0" * 16)),
            CCipher(c_alg.AES(key), c_modes.CBC(b"\0" * 16)))
    a, b = pair[0].encryptor(), pair[1].encryptor()
    a.update(b"a" * 20), b.update(b"a" * 20)
    same(a.finalize, b.finalize)
    assert a.update(b"b" * 12) == b.update(b"b" * 12)
    same(a.finalize, b.finalize)
    # GCM: a tag of the wrong length is refused; the right one then works.
    iv = b"\1" * 12
    e = CCipher(c_alg.AES(key), c_modes.GCM(iv)).encryptor()
    ct = e.update(b"m" * 40) + e.finalize()
    a = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv)).decryptor()
    b = CCipher(c_alg.AES(key), c_modes.GCM(iv)).decryptor()
    assert a.update(ct) == b.update(ct)
    same(lambda: a.finalize_with_tag(e.tag[:3]), lambda: b.finalize_with_tag(e.tag[:3]))
    same(lambda: a.finalize_with_tag(e.tag), lambda: b.finalize_with_tag(e.tag))
    # XTS: an empty update gives b"".
    xk = bytes(range(64))
    a = hwcrypt.Cipher(hwcrypt.algorithms.AES(xk), hwcrypt.modes.XTS(b"\0" * 16)).encryptor()
    b = CCipher(c_alg.AES(xk), c_modes.XTS(b"\0" * 16)).encryptor()
    assert a.update(b"x" * 32) == b.update(b"x" * 32)
    assert a.update(b"") == b.update(b"") == b""
    # A non-contiguous buffer: BufferError, as cryptography.
    strided = memoryview(bytearray(64))[::2]
    same(lambda: hwcrypt.AESGCM(key).encrypt(b"\0" * 12, strided, None),
         lambda: c_aead.AESGCM(key).encrypt(b"\0" * 12, strided, None))
    with pytest.raises(BufferError):
        hwcrypt.AESGCM(key).encrypt(b"\0" * 12, strided, None)


def test_review_2026_11_29_second():
    """Found in a second review: generate_key(-1) raised ValueError (an
    OverflowError in cryptography); the one-shot XTS functions took 48-byte
    keys that Cipher refuses; the wheel's profile must unwind panics."""
    same(lambda: hwcrypt.AESGCM.generate_key(-1), lambda: c_aead.AESGCM.generate_key(-1))
    with pytest.raises(ValueError, match="XTS specification"):
        hwcrypt.aes_xts_encrypt(bytes(range(48)), b"\0" * 16, b"x" * 16)
    with pytest.raises(ValueError, match="XTS specification"):
        hwcrypt.aes_xts_decrypt(bytes(range(48)), b"\0" * 16, b"x" * 16)
    # This build (CI's `maturin develop`) and `pip install`'s both use the
    # wheel's profile, [profile.python], which unwinds.
    assert hwcrypt.cpu_info()["panic"] == "unwind"
    import pathlib
    import tomllib

    here = pathlib.Path(__file__).resolve().parent
    pyproject = tomllib.loads((here.parent / "pyproject.toml").read_text())
    workspace = tomllib.loads((here.parents[2] / "Cargo.toml").read_text())
    profile = pyproject["tool"]["maturin"]["profile"]
    assert workspace["profile"][profile]["panic"] == "unwind"


def test_aead_decrypt_checks_no_length_before_the_tag():
    """cryptography checks the 2**31 - 1 limit when encrypting only (its
    ciphertext is 16 bytes longer); hwcrypt refused to decrypt it. The
    buffers are zero pages of an anonymous map: nothing is touched before
    the tag check fails."""
    import mmap

    size = 2**31 + 15
    try:
        m = mmap.mmap(-1, size)
    except (OSError, OverflowError, MemoryError):
        pytest.skip("no 2 GiB address space")
    try:
        view = memoryview(m)
        for cls, key in [(hwcrypt.AESGCM, K16), (hwcrypt.ChaCha20Poly1305, K32)]:
            # A wrong-size buffer is the first complaint of decrypt_into.
            with pytest.raises(ValueError, match="buffer must be"):
                cls(key).decrypt_into(b"\0" * 12, view, None, bytearray(1))
            # Associated data past the limit is refused both ways (as
            # cryptography), before any work.
            with pytest.raises(OverflowError, match="too long"):
                cls(key).decrypt(b"\0" * 12, bytes(32), view)
        view.release()
    finally:
        m.close()


def test_tag_attribute_as_cryptography():
    """`hasattr(ctx, "tag")` answers as for cryptography's contexts: only a
    GCM encryption context has a tag (a ValueError before, which hasattr
    does not catch)."""
    key, iv = K16, b"\0" * 16
    cases = [
        (lambda m: m.CTR(iv), True),
        (lambda m: m.CBC(iv), True),
        (lambda m: m.ECB(), False),
        (lambda m: m.GCM(iv[:12], b"\0" * 16), False),
    ]
    for mode, encrypt in cases:
        ours = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), mode(hwcrypt.modes))
        theirs = CCipher(c_alg.AES(key), mode(c_modes))
        a = ours.encryptor() if encrypt else ours.decryptor()
        b = theirs.encryptor() if encrypt else theirs.decryptor()
        assert hasattr(a, "tag") == hasattr(b, "tag") is False, mode(c_modes)
    # A GCM encryption context: NotYetFinalized before finalize, as there.
    a = hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv[:12])).encryptor()
    b = CCipher(c_alg.AES(key), c_modes.GCM(iv[:12])).encryptor()
    same(lambda: a.tag, lambda: b.tag)


def test_review_2026_11_29_methods_other_contexts_lack():
    """Found in review: `finalize_with_tag` on an encryption or non-GCM
    context and `authenticate_additional_data` on a non-GCM one raised
    ValueError; `cryptography`'s contexts have no such method
    (AttributeError), so `except AttributeError` code saw a different type."""
    key, iv = K16, b"\0" * 12
    gcm = (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.GCM(iv)),
           CCipher(c_alg.AES(key), c_modes.GCM(iv)))
    cbc = (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CBC(b"\0" * 16)),
           CCipher(c_alg.AES(key), c_modes.CBC(b"\0" * 16)))
    ctr = (hwcrypt.Cipher(hwcrypt.algorithms.AES(key), hwcrypt.modes.CTR(b"\0" * 16)),
           CCipher(c_alg.AES(key), c_modes.CTR(b"\0" * 16)))
    a, b = gcm[0].encryptor(), gcm[1].encryptor()
    same(lambda: a.finalize_with_tag(b"\0" * 16), lambda: b.finalize_with_tag(b"\0" * 16))
    for ours, theirs in (cbc, ctr):
        for make in ("encryptor", "decryptor"):
            a, b = getattr(ours, make)(), getattr(theirs, make)()
            assert outcome(lambda: a.finalize_with_tag(b"\0" * 16)) == "AttributeError"
            same(lambda: a.finalize_with_tag(b"\0" * 16), lambda: b.finalize_with_tag(b"\0" * 16))
            same(lambda: a.authenticate_additional_data(b"x"),
                 lambda: b.authenticate_additional_data(b"x"))


class _RaisingBuffer:
    """An object whose buffer export raises an exception that is not a
    TypeError."""

    def __init__(self, exc):
        self.exc = exc

    def __buffer__(self, flags):
        raise self.exc


def test_review_2026_11_29_buffer_export_errors_pass_through():
    """Found in review: a KeyboardInterrupt raised by a `__buffer__` became
    TypeError (a swallowed Ctrl-C). Exceptions still become TypeError, as in
    `cryptography` (a released memoryview's ValueError too); a
    BaseException that is not an Exception goes on as it is. (`__buffer__`
    on a Python class works from CPython 3.12.)"""
    import sys

    aead = hwcrypt.ChaCha20Poly1305(K32)
    theirs = c_aead.ChaCha20Poly1305(K32)
    gone = memoryview(b"abc")
    gone.release()
    assert outcome(lambda: aead.encrypt(b"n" * 12, gone, None)) == "TypeError"
    same(lambda: aead.encrypt(b"n" * 12, gone, None), lambda: theirs.encrypt(b"n" * 12, gone, None))
    with pytest.raises(TypeError):
        aead.encrypt(b"n" * 12, object(), None)
    if sys.version_info >= (3, 12):
        for exc in (KeyboardInterrupt(), SystemExit(3)):
            with pytest.raises(type(exc)):
                aead.encrypt(b"n" * 12, _RaisingBuffer(exc), None)
        with pytest.raises(TypeError):
            aead.encrypt(b"n" * 12, _RaisingBuffer(MemoryError()), None)
