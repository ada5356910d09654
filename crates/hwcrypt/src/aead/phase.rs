//! Where a streaming AEAD message is (no message, associated data, data in
//! one direction, finished) and which calls each phase allows; shared by
//! [`AesGcmStream`](crate::gcm::AesGcmStream) and
//! [`ChaCha20Poly1305Stream`](crate::chacha20poly1305::ChaCha20Poly1305Stream).

use crate::error::{Error, Result};

/// The phase of a streaming message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No message started yet, or the last one was finished or verified.
    Idle,
    /// Started; associated data may still come.
    Aad,
    /// Encrypting data: no more associated data, no decryption.
    Encrypt,
    /// Decrypting data: no more associated data, no encryption.
    Decrypt,
}

const NOT_STARTED: &str =
    "no message started (call start with an IV first, also after finish or verify)";

impl Phase {
    /// Checks that associated data may come now.
    pub(crate) fn check_aad(self) -> Result<()> {
        match self {
            Phase::Aad => Ok(()),
            Phase::Idle => Err(Error::OutOfOrder(NOT_STARTED)),
            Phase::Encrypt | Phase::Decrypt => Err(Error::OutOfOrder(
                "associated data after the data (all of it must come first)",
            )),
        }
    }

    /// Checks that data may be encrypted (`encrypt`) or decrypted now; the
    /// phase it then moves to (the caller sets it once the data is taken;
    /// an empty call leaves the phase as it was).
    pub(crate) fn data(self, encrypt: bool) -> Result<Phase> {
        match (self, encrypt) {
            (Phase::Idle, _) => Err(Error::OutOfOrder(NOT_STARTED)),
            (Phase::Aad | Phase::Encrypt, true) => Ok(Phase::Encrypt),
            (Phase::Aad | Phase::Decrypt, false) => Ok(Phase::Decrypt),
            (Phase::Decrypt, true) => Err(Error::OutOfOrder(
                "encryption in a message that is being decrypted",
            )),
            (Phase::Encrypt, false) => Err(Error::OutOfOrder(
                "decryption in a message that is being encrypted",
            )),
        }
    }

    /// Checks that the message may end now with `finish` (`finish`, which
    /// returns the tag: not after decryption) or `verify` (not after
    /// encryption).
    pub(crate) fn check_end(self, finish: bool) -> Result<()> {
        match (self, finish) {
            (Phase::Idle, _) => Err(Error::OutOfOrder(NOT_STARTED)),
            (Phase::Aad, _) | (Phase::Encrypt, true) | (Phase::Decrypt, false) => Ok(()),
            (Phase::Decrypt, true) => Err(Error::OutOfOrder(
                "finish after decryption (check the received tag with verify)",
            )),
            (Phase::Encrypt, false) => Err(Error::OutOfOrder(
                "verify after encryption (take the tag with finish)",
            )),
        }
    }
}

/// `total + more` if it stays within `limit`, else the error for `what`.
pub(crate) fn add_len(total: u64, more: usize, limit: u64, what: &'static str) -> Result<u64> {
    match total.checked_add(more as u64) {
        Some(t) if t <= limit => Ok(t),
        _ => Err(Error::MessageTooLong { what, limit }),
    }
}
