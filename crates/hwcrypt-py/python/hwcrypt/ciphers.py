"""``Cipher(algorithms.AES(key), modes.X(...))`` with ``encryptor()`` /
``decryptor()`` contexts, as ``cryptography.hazmat.primitives.ciphers``:
the same argument checks, messages and exception types, on hwcrypt's
kernels. ``Cipher`` also takes ``cryptography``'s own ``algorithms.AES`` and
mode objects (it reads their attributes), so existing code can pass them.

Differences from ``cryptography``: AES only (no Camellia, TripleDES...);
GCM tags shorter than 16 bytes must be given to ``modes.GCM(iv, tag,
min_tag_length)`` when decrypting, not to ``finalize_with_tag``; a context
is used by one thread at a time (a second thread gets ``RuntimeError``).
"""

from . import _hwcrypt


def _check_byteslike(name, value):
    try:
        memoryview(value)
    except TypeError:
        raise TypeError(f"{name} must be bytes-like") from None


class algorithms:
    """The block ciphers: ``AES`` only."""

    class AES:
        """AES with a 128-, 192- or 256-bit key (or a 256- or 512-bit key
        for XTS, which is two AES keys)."""

        name = "AES"
        block_size = 128
        key_sizes = frozenset([128, 192, 256, 512])

        def __init__(self, key):
            _check_byteslike("key", key)
            if len(key) * 8 not in self.key_sizes:
                raise ValueError(f"Invalid key size ({len(key) * 8}) for AES.")
            self.key = key

        @property
        def key_size(self):
            return len(self.key) * 8


class modes:
    """The modes: ``CBC``, ``CTR``, ``ECB``, ``XTS``, ``GCM``."""

    class CBC:
        name = "CBC"

        def __init__(self, initialization_vector):
            _check_byteslike("initialization_vector", initialization_vector)
            self.initialization_vector = initialization_vector

    class CTR:
        name = "CTR"

        def __init__(self, nonce):
            _check_byteslike("nonce", nonce)
            self.nonce = nonce

    class ECB:
        name = "ECB"

    class XTS:
        name = "XTS"

        def __init__(self, tweak):
            _check_byteslike("tweak", tweak)
            if len(tweak) != 16:
                raise ValueError("tweak must be 128-bits (16 bytes)")
            self.tweak = tweak

    class GCM:
        name = "GCM"
        _MAX_ENCRYPTED_BYTES = (2**39 - 256) // 8
        _MAX_AAD_BYTES = (2**64) // 8

        def __init__(self, initialization_vector, tag=None, min_tag_length=16):
            _check_byteslike("initialization_vector", initialization_vector)
            if len(initialization_vector) < 8 or len(initialization_vector) > 128:
                raise ValueError(
                    "initialization_vector must be between 8 and 128 bytes (64 "
                    "and 1024 bits)."
                )
            self.initialization_vector = initialization_vector
            if tag is not None:
                _check_byteslike("tag", tag)
                if min_tag_length < 4:
                    raise ValueError("min_tag_length must be >= 4")
                if len(tag) < min_tag_length:
                    raise ValueError(
                        f"Authentication tag must be {min_tag_length} bytes or longer."
                    )
            self.tag = tag
            self.min_tag_length = min_tag_length


class Cipher:
    """``Cipher(algorithm, mode)``: ``encryptor()`` and ``decryptor()``
    return a :class:`hwcrypt.CipherContext` (``update``, ``update_into``,
    ``finalize``; for GCM also ``authenticate_additional_data``, ``tag``,
    ``finalize_with_tag``)."""

    def __init__(self, algorithm, mode, backend=None):
        if getattr(algorithm, "name", None) != "AES" or not hasattr(algorithm, "key"):
            raise TypeError("Expected interface of CipherAlgorithm.")
        name = getattr(mode, "name", None)
        if name not in ("CBC", "CTR", "ECB", "XTS", "GCM"):
            raise TypeError("hwcrypt supports the modes CBC, CTR, ECB, XTS and GCM")
        key = algorithm.key
        bits = len(key) * 8
        if name == "XTS":
            if bits not in (256, 512):
                raise ValueError(
                    "The XTS specification requires a 256-bit key for AES-128-XTS"
                    " and 512-bit key for AES-256-XTS"
                )
        elif bits not in (128, 192, 256):
            raise ValueError(f"Invalid key size ({bits}) for {algorithm.name}.")
        if name == "CBC" and len(mode.initialization_vector) != 16:
            raise ValueError(
                f"Invalid IV size ({len(mode.initialization_vector)}) for {name}."
            )
        if name == "CTR" and len(mode.nonce) != 16:
            raise ValueError(f"Invalid nonce size ({len(mode.nonce)}) for {name}.")
        self.algorithm = algorithm
        self.mode = mode

    def _context(self, encrypt):
        mode, key = self.mode, self.algorithm.key
        name = mode.name
        if name == "XTS":
            half = len(key) // 2
            if bytes(key[:half]) == bytes(key[half:]):
                raise ValueError("In XTS mode duplicated keys are not allowed")
            iv = mode.tweak
        elif name == "CTR":
            iv = mode.nonce
        elif name == "ECB":
            iv = None
        else:
            iv = mode.initialization_vector
        tag = None
        min_tag_length = 16
        if name == "GCM":
            tag = mode.tag
            # cryptography's own GCM keeps it as `_min_tag_length`.
            min_tag_length = getattr(
                mode, "min_tag_length", getattr(mode, "_min_tag_length", 16)
            )
            # Only checked against a tag given to the mode (which the mode
            # checked already): without one, any value cryptography takes
            # (negative, huge, not an int) must not fail here.
            if tag is None:
                min_tag_length = 16
            else:
                min_tag_length = min(max(int(min_tag_length), 0), 16)
            if encrypt and tag is not None:
                raise ValueError("Authentication tag must be None when encrypting.")
        return _hwcrypt._context(name, key, iv, encrypt, tag, min_tag_length)

    def encryptor(self):
        """A context that encrypts."""
        return self._context(True)

    def decryptor(self):
        """A context that decrypts."""
        return self._context(False)


__all__ = ["Cipher", "algorithms", "modes"]
