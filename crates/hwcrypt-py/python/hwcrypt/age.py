"""age v1 file encryption (C2SP age.md), as the ``hwcrypt encrypt`` /
``decrypt`` commands: files readable by ``age``/``rage`` and back, the
payload (ChaCha20-Poly1305) on every core.

Recipients are strings: ``age1...`` (X25519), ``age1pq1...`` (age 1.3's
post-quantum hybrid), or OpenSSH public key lines (``ssh-ed25519 ...``,
``ssh-rsa ...``). Identities are identity-file texts (``AGE-SECRET-KEY-1...``
or ``AGE-SECRET-KEY-PQ-1...`` lines, or an unencrypted OpenSSH private key).
"""

from ._hwcrypt import (
    AgeError,
    age_decrypt,
    age_decrypt_stream,
    age_encrypt,
    age_encrypt_stream,
    age_keygen,
)


def _strings(value, what):
    """``value`` (a ``str`` or an iterable of them) as a list of ``str``;
    a readable TypeError for bytes (a common slip: keys read from a file in
    binary mode) and other types."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} must be str or a list of str, not bytes (decode the key text)")
    try:
        items = list(value)
    except TypeError:
        raise TypeError(
            f"{what} must be str or a list of str, not {type(value).__name__}"
        ) from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"each of {what} must be str, not {type(item).__name__}"
                + (" (decode the key text)" if isinstance(item, (bytes, bytearray)) else "")
            )
    return items


def encrypt(data, recipients=(), *, passphrase=None, armor=False):
    """Encrypts ``data`` (bytes-like, or a binary file object, read whole)
    to ``recipients``, or to a ``passphrase`` (scrypt); returns the age
    file as ``bytes`` (PEM-armored text with ``armor=True``)."""
    if hasattr(data, "read"):
        data = data.read()
    return age_encrypt(data, _strings(recipients, "recipients"), passphrase, armor)


def decrypt(data, identities=(), *, passphrase=None):
    """Decrypts an age file (bytes-like or a binary file object; binary or
    armored) with ``identities`` or a ``passphrase``; returns the plaintext.
    Raises ``AgeError`` (and returns nothing) on a wrong key or a damaged,
    truncated or altered file."""
    if hasattr(data, "read"):
        data = data.read()
    return age_decrypt(data, _strings(identities, "identities"), passphrase)


def encrypt_stream(src, dst, recipients=(), *, passphrase=None, armor=False):
    """Encrypts the binary file object ``src`` (read to its end, a megabyte
    at a time) into the binary file object ``dst``: memory stays bounded
    whatever the size. Returns the plaintext bytes read."""
    return age_encrypt_stream(src, dst, _strings(recipients, "recipients"), passphrase, armor)


def decrypt_stream(src, dst, identities=(), *, passphrase=None):
    """Decrypts the age file read from ``src`` into ``dst``, a chunk at a
    time, each chunk written only after its tag verified. On ``AgeError``
    the chunks before the bad one were written: discard ``dst`` (write to a
    temporary file and rename it on success). Returns the bytes written."""
    return age_decrypt_stream(src, dst, _strings(identities, "identities"), passphrase)


def keygen(post_quantum=False):
    """A new identity: ``(secret, recipient)`` strings
    (``AGE-SECRET-KEY-1...``/``age1...``, or with ``post_quantum=True``
    ``AGE-SECRET-KEY-PQ-1...``/``age1pq1...``)."""
    return age_keygen(post_quantum)


__all__ = ["encrypt", "decrypt", "encrypt_stream", "decrypt_stream", "keygen", "AgeError"]
