//! The RustCrypto [`aead`](https://docs.rs/aead) traits for hwcrypt's AEADs
//! (cargo feature `aead`), so code written against `aes-gcm` or
//! `chacha20poly1305` switches by changing one `use` line:
//!
//! ```
//! use hwcrypt::aead::rustcrypto::{Aes256Gcm, aead::{Aead, AeadCore, KeyInit}};
//! let cipher = Aes256Gcm::new(&[7u8; 32].into());
//! let nonce = [0u8; 12].into();
//! let ciphertext = cipher.encrypt(&nonce, b"plaintext".as_ref()).unwrap();
//! assert_eq!(cipher.decrypt(&nonce, ciphertext.as_ref()).unwrap(), b"plaintext");
//! ```
//!
//! Every type picks its backend as hwcrypt's own constructors do.
//! `KeyInit::new` cannot return an error, so with an invalid `HWCRYPT_CPU`
//! it panics with the mask error instead of silently ignoring the mask; use
//! the hwcrypt constructors (`AesGcm::new`, ...) to get a `Result`.
//! All failures map to the opaque [`aead::Error`]; a failed decryption leaves
//! the output zeroed, as everywhere in hwcrypt.

pub use aead;

use crate::aead::Aead as HwAead;
use crate::chacha20poly1305 as hw_chacha;
use crate::gcm::AesGcm;
use aead::consts::{U12, U16, U24, U32};
use aead::inout::InOutBuf;
use aead::{AeadCore, AeadInOut, Key, KeyInit, KeySizeUser, Nonce, Tag, TagPosition};

/// AES-128-GCM with a fixed key size, for [`KeyInit`].
///
/// ```
/// use hwcrypt::aead::rustcrypto::{aead::{Aead, KeyInit}, Aes128Gcm};
/// let cipher = Aes128Gcm::new(&[1u8; 16].into());
/// let nonce = [0u8; 12].into();
/// let sealed = cipher.encrypt(&nonce, b"hello".as_ref()).unwrap();
/// assert_eq!(cipher.decrypt(&nonce, sealed.as_ref()).unwrap(), b"hello");
/// ```
#[derive(Clone, Debug)]
pub struct Aes128Gcm(AesGcm);

/// AES-256-GCM with a fixed key size, for [`KeyInit`].
///
/// ```
/// use hwcrypt::aead::rustcrypto::{aead::{Aead, KeyInit}, Aes256Gcm};
/// let cipher = Aes256Gcm::new(&[1u8; 32].into());
/// let nonce = [0u8; 12].into();
/// let sealed = cipher.encrypt(&nonce, b"hello".as_ref()).unwrap();
/// assert_eq!(cipher.decrypt(&nonce, sealed.as_ref()).unwrap(), b"hello");
/// ```
#[derive(Clone, Debug)]
pub struct Aes256Gcm(AesGcm);

/// ChaCha20-Poly1305 (RFC 8439), for [`KeyInit`]: a type of its own (not
/// hwcrypt's [`hw_chacha::ChaCha20Poly1305`], whose inherent `new` returns
/// a `Result` and would be picked by `ChaCha20Poly1305::new(&key)`), so the
/// `chacha20poly1305` crate's code compiles unchanged.
///
/// ```
/// use hwcrypt::aead::rustcrypto::{aead::{Aead, Key, KeyInit, Nonce}, ChaCha20Poly1305};
/// let key: Key<ChaCha20Poly1305> = [7u8; 32].into();
/// let cipher = ChaCha20Poly1305::new(&key);
/// let nonce: Nonce<ChaCha20Poly1305> = [0u8; 12].into();
/// let sealed = cipher.encrypt(&nonce, b"hello".as_ref()).unwrap();
/// assert_eq!(cipher.decrypt(&nonce, sealed.as_ref()).unwrap(), b"hello");
/// ```
#[derive(Clone, Debug)]
pub struct ChaCha20Poly1305(hw_chacha::ChaCha20Poly1305);

/// XChaCha20-Poly1305 (24-byte nonces), for [`KeyInit`]; see
/// [`ChaCha20Poly1305`].
///
/// ```
/// use hwcrypt::aead::rustcrypto::{aead::{Aead, Key, KeyInit, Nonce}, XChaCha20Poly1305};
/// let cipher = XChaCha20Poly1305::new(&[7u8; 32].into());
/// let nonce: Nonce<XChaCha20Poly1305> = [0u8; 24].into();
/// let sealed = cipher.encrypt(&nonce, b"hello".as_ref()).unwrap();
/// assert_eq!(cipher.decrypt(&nonce, sealed.as_ref()).unwrap(), b"hello");
/// ```
#[derive(Clone, Debug)]
pub struct XChaCha20Poly1305(hw_chacha::XChaCha20Poly1305);

impl ChaCha20Poly1305 {
    /// The hwcrypt key inside (backend, streaming API).
    pub fn inner(&self) -> &hw_chacha::ChaCha20Poly1305 {
        &self.0
    }
}

impl XChaCha20Poly1305 {
    /// The hwcrypt key inside (backend).
    pub fn inner(&self) -> &hw_chacha::XChaCha20Poly1305 {
        &self.0
    }
}

impl Aes128Gcm {
    /// The hwcrypt key inside (backend, explicit IV/tag-length API).
    pub fn inner(&self) -> &AesGcm {
        &self.0
    }
}

impl Aes256Gcm {
    /// The hwcrypt key inside (backend, explicit IV/tag-length API).
    pub fn inner(&self) -> &AesGcm {
        &self.0
    }
}

/// The hwcrypt AEAD behind a RustCrypto-facing type.
trait Hw {
    type Aead: HwAead;
    fn hw(&self) -> &Self::Aead;
}

impl Hw for Aes128Gcm {
    type Aead = AesGcm;
    fn hw(&self) -> &AesGcm {
        &self.0
    }
}

impl Hw for Aes256Gcm {
    type Aead = AesGcm;
    fn hw(&self) -> &AesGcm {
        &self.0
    }
}

impl Hw for ChaCha20Poly1305 {
    type Aead = hw_chacha::ChaCha20Poly1305;
    fn hw(&self) -> &hw_chacha::ChaCha20Poly1305 {
        &self.0
    }
}

impl Hw for XChaCha20Poly1305 {
    type Aead = hw_chacha::XChaCha20Poly1305;
    fn hw(&self) -> &hw_chacha::XChaCha20Poly1305 {
        &self.0
    }
}

/// Implements the RustCrypto traits for `$ty`, built from a key slice by `$new`.
macro_rules! rustcrypto_aead {
    ($ty:ty, key: $key:ty, nonce: $nonce:ty, new: $new:expr) => {
        impl AeadCore for $ty {
            type NonceSize = $nonce;
            type TagSize = U16;
            const TAG_POSITION: TagPosition = TagPosition::Postfix;
        }

        impl KeySizeUser for $ty {
            type KeySize = $key;
        }

        impl KeyInit for $ty {
            /// Panics only if `HWCRYPT_CPU` is invalid (see the module docs).
            fn new(key: &Key<Self>) -> Self {
                match $new(key.as_slice()) {
                    Ok(cipher) => cipher,
                    Err(e) => panic!("{e}"),
                }
            }
        }

        impl AeadInOut for $ty {
            fn encrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
            ) -> aead::Result<Tag<Self>> {
                let buf = buffer.into_out_with_copied_in();
                let tag = self
                    .hw()
                    .seal_in_place_detached(nonce.as_slice(), associated_data, buf)
                    .map_err(|_| aead::Error)?;
                Ok(tag.into())
            }

            fn decrypt_inout_detached(
                &self,
                nonce: &Nonce<Self>,
                associated_data: &[u8],
                buffer: InOutBuf<'_, '_, u8>,
                tag: &Tag<Self>,
            ) -> aead::Result<()> {
                let buf = buffer.into_out_with_copied_in();
                let r = self.hw().open_in_place_detached(
                    nonce.as_slice(),
                    associated_data,
                    buf,
                    tag.as_slice(),
                );
                // hwcrypt zeroes on every failure; say so where the copied
                // ciphertext would otherwise stay.
                crate::aead::wipe_on_error(buf, r).map_err(|_| aead::Error)
            }
        }
    };
}

rustcrypto_aead!(Aes128Gcm, key: U16, nonce: U12, new: |k| AesGcm::new(k).map(Aes128Gcm));
rustcrypto_aead!(Aes256Gcm, key: U32, nonce: U12, new: |k| AesGcm::new(k).map(Aes256Gcm));
rustcrypto_aead!(ChaCha20Poly1305, key: U32, nonce: U12, new: |k| hw_chacha::ChaCha20Poly1305::new(k).map(ChaCha20Poly1305));
rustcrypto_aead!(XChaCha20Poly1305, key: U32, nonce: U24, new: |k| hw_chacha::XChaCha20Poly1305::new(k).map(XChaCha20Poly1305));
