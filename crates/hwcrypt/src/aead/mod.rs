//! Authenticated encryption with associated data: one shape for every AEAD.
//!
//! The core of every algorithm is detached and in place:
//! [`Aead::seal_in_place_detached`] encrypts a buffer and returns the tag,
//! [`Aead::open_in_place_detached`] checks the tag (in constant time) and
//! decrypts. On failure the buffer is zeroed and the error is the opaque
//! [`Error::AuthenticationFailed`]: no plaintext is ever released from a
//! message that did not verify. Separate-buffer and allocating forms
//! (`ciphertext || tag`) are built on top.

pub(crate) mod phase;
#[cfg(feature = "aead")]
pub mod rustcrypto;

use crate::Backend;
use crate::ct;
use crate::error::{Error, Result};
use zeroize::Zeroize;

/// Length of a full tag, in bytes (every AEAD here).
pub const TAG_LEN: usize = 16;

/// A full authentication tag.
///
/// ```
/// use hwcrypt::aead::{Aead, Tag};
/// use hwcrypt::gcm::AesGcm;
/// let key = AesGcm::new(&[1u8; 16])?;
/// let mut data = *b"message";
/// let tag: Tag = key.seal_in_place_detached(&[0u8; 12], b"", &mut data)?;
/// key.open_in_place_detached(&[0u8; 12], b"", &mut data, &tag)?;
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub type Tag = [u8; TAG_LEN];

/// An AEAD key bound to one backend.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::{chacha20poly1305::ChaCha20Poly1305, gcm::AesGcm};
/// // The same code for every AEAD.
/// fn roundtrip(key: &impl Aead, nonce: &[u8]) -> hwcrypt::Result<()> {
///     let sealed = key.seal(nonce, b"aad", b"hello")?;
///     assert_eq!(key.open(nonce, b"aad", &sealed)?, b"hello");
///     Ok(())
/// }
/// roundtrip(&AesGcm::new(&[1u8; 32])?, &[0u8; 12])?;
/// roundtrip(&ChaCha20Poly1305::new(&[2u8; 32])?, &[0u8; 12])?;
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub trait Aead {
    /// Nonce length in bytes.
    const NONCE_LEN: usize;

    /// The algorithm, e.g. `AES-256-GCM` or `ChaCha20-Poly1305`.
    fn algorithm(&self) -> &'static str;

    /// The backend the key runs on.
    fn backend(&self) -> Backend;

    /// Encrypts `in_out` in place and returns the tag over `aad` and the ciphertext.
    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], in_out: &mut [u8]) -> Result<Tag>;

    /// Verifies `tag` over `aad` and the ciphertext in `in_out`, then decrypts
    /// it in place. If the tag does not verify, `in_out` is zeroed and the
    /// result is [`Error::AuthenticationFailed`]; on any other error (nonce
    /// or tag length, message too long) `in_out` is zeroed too, so a failed
    /// open never leaves anything a caller could take for plaintext.
    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8],
    ) -> Result<()>;

    /// Encrypts `plaintext` into `ciphertext` (same length) and returns the tag.
    fn seal_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        ciphertext: &mut [u8],
    ) -> Result<Tag> {
        same_len(plaintext, ciphertext)?;
        ciphertext.copy_from_slice(plaintext);
        self.seal_in_place_detached(nonce, aad, ciphertext)
    }

    /// Verifies and decrypts `ciphertext` into `plaintext` (same length); on
    /// any failure (including a length or parameter error) `plaintext` is
    /// zeroed.
    fn open_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        tag: &[u8],
        plaintext: &mut [u8],
    ) -> Result<()> {
        let r = same_len(ciphertext, plaintext).and_then(|()| {
            plaintext.copy_from_slice(ciphertext);
            self.open_in_place_detached(nonce, aad, plaintext, tag)
        });
        // The copy above put ciphertext in `plaintext`: whatever failed
        // (lengths, nonce, tag length, tag), leave zeros, not that.
        wipe_on_error(plaintext, r)
    }

    /// Returns `ciphertext || tag`.
    fn seal(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let tag = self.seal_in_place_detached(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Opens `ciphertext || tag`, returning the plaintext.
    fn open(&self, nonce: &[u8], aad: &[u8], ciphertext_and_tag: &[u8]) -> Result<Vec<u8>> {
        let Some(split) = ciphertext_and_tag.len().checked_sub(TAG_LEN) else {
            return Err(Error::AuthenticationFailed);
        };
        let (ciphertext, tag) = ciphertext_and_tag.split_at(split);
        let mut out = ciphertext.to_vec();
        // On failure `out` has been zeroed; dropping it releases nothing.
        self.open_in_place_detached(nonce, aad, &mut out, tag)?;
        Ok(out)
    }
}

/// Separate input and output buffers must be the same length.
pub(crate) fn same_len(input: &[u8], output: &[u8]) -> Result<()> {
    if input.len() == output.len() {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            input: input.len(),
            output: output.len(),
        })
    }
}

/// The end of every `open`: compares `expected` with the received `tag` in
/// constant time; on a mismatch wipes `buf` (which may hold plaintext) and
/// fails opaquely. `tag.len()` must equal `expected.len()` (checked by callers).
pub(crate) fn verify_or_wipe(expected: &[u8], tag: &[u8], buf: &mut [u8]) -> Result<()> {
    if ct::eq(expected, tag) {
        Ok(())
    } else {
        buf.zeroize();
        Err(Error::AuthenticationFailed)
    }
}

/// `r`, after zeroing `buf` if `r` is an error: every failed open leaves
/// its output zeroed, whatever failed.
pub(crate) fn wipe_on_error(buf: &mut [u8], r: Result<()>) -> Result<()> {
    if r.is_err() {
        buf.zeroize();
    }
    r
}

/// Checks a full-length tag argument.
pub(crate) fn full_tag(tag: &[u8]) -> Result<&Tag> {
    tag.try_into().map_err(|_| Error::InvalidTagLength {
        expected: "16",
        got: tag.len(),
    })
}
