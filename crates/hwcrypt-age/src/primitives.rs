//! The small primitives the format is built from: the file key, HKDF and
//! HMAC over SHA-256, ChaCha20-Poly1305 with a zero nonce for wrapping file
//! keys (hwcrypt's own), and the system random generator.

use crate::error::{Error, Result};
use hkdf::Hkdf;
use hmac::{Hmac, KeyInit, Mac};
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use sha2::Sha256;
use zeroize::Zeroizing;

/// The 16-byte symmetric key of one file, wrapped to each recipient.
pub type FileKey = Zeroizing<[u8; 16]>;

/// A fresh random file key.
pub fn new_file_key() -> Result<FileKey> {
    let mut key = Zeroizing::new([0u8; 16]);
    fill_random(&mut key[..])?;
    Ok(key)
}

/// Fills `buf` from the operating system's generator.
pub fn fill_random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::Io(std::io::Error::other(format!("random: {e}"))))
}

/// HKDF-SHA256 to 32 bytes.
pub fn hkdf_sha256(ikm: &[u8], salt: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut okm = Zeroizing::new([0u8; 32]);
    Hkdf::<Sha256>::new(Some(salt), ikm)
        .expand(info, &mut okm[..])
        .expect("32 bytes is a valid HKDF-SHA256 length");
    okm
}

/// HMAC-SHA256.
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// ChaCha20-Poly1305 with a zero nonce (each wrapping key is used once).
/// The key is 32 bytes: only an invalid `HWCRYPT_CPU` mask fails it.
fn wrap_aead(key: &[u8; 32]) -> core::result::Result<ChaCha20Poly1305, hwcrypt::Error> {
    ChaCha20Poly1305::new(key)
}

/// Wraps a file key: ChaCha20-Poly1305 under `key`, zero nonce.
pub fn wrap_file_key(key: &[u8; 32], file_key: &FileKey) -> crate::Result<Vec<u8>> {
    wrap_aead(key)
        .and_then(|aead| aead.seal(&[0; 12], &[], &file_key[..]))
        .map_err(crate::Error::Crypto)
}

/// Why a wrapped file key did not unwrap.
#[derive(Debug)]
pub enum UnwrapError {
    /// The body is not 32 bytes (a malformed stanza).
    BadLength,
    /// The tag did not verify (another recipient's stanza, or a wrong key).
    Mismatch,
    /// The AEAD is not available (an invalid `HWCRYPT_CPU` mask).
    Crypto(hwcrypt::Error),
}

impl UnwrapError {
    /// The error of a stanza this failure makes unusable: `None` for a
    /// mismatch (the stanza is for someone else), else `malformed` for a
    /// bad length and the AEAD's own error.
    pub(crate) fn into_error(
        self,
        malformed: impl FnOnce() -> crate::Error,
    ) -> Option<crate::Error> {
        match self {
            UnwrapError::Mismatch => None,
            UnwrapError::BadLength => Some(malformed()),
            UnwrapError::Crypto(e) => Some(crate::Error::Crypto(e)),
        }
    }
}

/// Unwraps a file key wrapped by [`wrap_file_key`].
pub fn unwrap_file_key(key: &[u8; 32], body: &[u8]) -> core::result::Result<FileKey, UnwrapError> {
    if body.len() != 32 {
        return Err(UnwrapError::BadLength);
    }
    let plain = Zeroizing::new(
        wrap_aead(key)
            .map_err(UnwrapError::Crypto)?
            .open(&[0; 12], &[], body)
            .map_err(|_| UnwrapError::Mismatch)?,
    );
    let mut file_key = Zeroizing::new([0u8; 16]);
    file_key.copy_from_slice(&plain);
    Ok(file_key)
}

/// The payload key: HKDF-SHA256(file key, salt = the header nonce, "payload").
pub fn payload_key(file_key: &FileKey, nonce: &[u8; 16]) -> crate::Result<ChaCha20Poly1305> {
    ChaCha20Poly1305::new(&hkdf_sha256(&file_key[..], nonce, b"payload")[..])
        .map_err(crate::Error::Crypto)
}
