"""hwcrypt's exceptions. With ``cryptography`` installed they subclass
``cryptography.exceptions``' classes of the same names, so code written for
``cryptography`` (``except InvalidTag:``) keeps working after switching the
import; without it they are hwcrypt's own."""

try:
    from cryptography import exceptions as _c
except ImportError:  # pragma: no cover - exercised where cryptography is absent
    _c = None


def _base(name):
    return (getattr(_c, name),) if _c is not None else (Exception,)


class InvalidTag(*_base("InvalidTag")):
    """The authentication tag did not verify: the message, its associated
    data, nonce or key is not the one it was sealed with. Nothing was
    decrypted."""


class AlreadyFinalized(*_base("AlreadyFinalized")):
    """The context was finalized; make a new one."""


class AlreadyUpdated(*_base("AlreadyUpdated")):
    """Associated data must come before the first ``update``."""


class NotYetFinalized(*_base("NotYetFinalized")):
    """The tag exists once ``finalize`` was called."""


__all__ = ["InvalidTag", "AlreadyFinalized", "AlreadyUpdated", "NotYetFinalized"]
