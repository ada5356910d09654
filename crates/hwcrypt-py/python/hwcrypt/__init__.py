"""hwcrypt: AES-GCM, ChaCha20-Poly1305, XChaCha20-Poly1305 and the AES
modes (CTR, CBC, ECB, XTS, streaming GCM) on hwcrypt's hardware kernels
(VAES, AVX-512, AVX2, AES-NI, or portable constant-time code), with the API
of the ``cryptography`` package: changing the import is enough::

    from hwcrypt import AESGCM            # was: from cryptography...aead import AESGCM
    key = AESGCM.generate_key(256)
    sealed = AESGCM(key).encrypt(nonce, data, associated_data)

The backend is chosen from the CPU when a key is made (``HWCRYPT_CPU``
switches features off, as for the ``hwcrypt`` tool); ``cpu_info()`` and
``backend_for()`` say which. Inputs are any bytes-like object (read in
place); ``*_into`` methods write into caller buffers; messages of 4 KiB or
more are processed with the GIL released, so threads run in parallel.
"""

from ._exceptions import AlreadyFinalized, AlreadyUpdated, InvalidTag, NotYetFinalized
from ._hwcrypt import (
    AESGCM,
    ChaCha20Poly1305,
    CipherContext,
    XChaCha20Poly1305,
    aes_cbc_decrypt,
    aes_cbc_encrypt,
    aes_ctr,
    aes_ecb_decrypt,
    aes_ecb_encrypt,
    aes_xts_decrypt,
    aes_xts_encrypt,
    backend_for,
    cpu_info,
    pkcs7_pad,
    pkcs7_unpad,
)
from .ciphers import Cipher, algorithms, modes
from . import age

__version__ = "0.1.0"

__all__ = [
    "AESGCM",
    "ChaCha20Poly1305",
    "XChaCha20Poly1305",
    "Cipher",
    "CipherContext",
    "algorithms",
    "modes",
    "InvalidTag",
    "AlreadyFinalized",
    "AlreadyUpdated",
    "NotYetFinalized",
    "aes_ctr",
    "aes_cbc_encrypt",
    "aes_cbc_decrypt",
    "aes_ecb_encrypt",
    "aes_ecb_decrypt",
    "aes_xts_encrypt",
    "aes_xts_decrypt",
    "pkcs7_pad",
    "pkcs7_unpad",
    "cpu_info",
    "backend_for",
    "age",
]
