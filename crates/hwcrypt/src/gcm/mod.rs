//! AES-GCM (NIST SP 800-38D): AES-128/192/256 in counter mode with a GHASH
//! tag, one backend chosen when the key is made.
//!
//! [`AesGcm`] implements [`Aead`] for the usual shape (12-byte nonces,
//! 16-byte tags). The explicit [`AesGcm::seal_in_place_detached_with`] and
//! [`AesGcm::open_in_place_detached_with`] take IVs of any length of at least
//! one byte (`J0 = GHASH(IV || 0-pad || [len(IV)]_64)` for lengths other
//! than 12) and tags of the key's tag length: 16 bytes unless set to 12..=16
//! with [`AesGcm::set_tag_len`]. A tag of any other length is refused, so a
//! receiver that slices the tag from the wire cannot be made to check a
//! shorter one. 4- and 8-byte tags (SP 800-38D Appendix C) are not offered:
//! they are safe only under limits on the number of decryptions per key,
//! which a key object cannot enforce (RustCrypto's `aes-gcm` and Go's
//! `crypto/cipher` also stop at 12).
//!
//! ```
//! use hwcrypt::aead::Aead;
//! use hwcrypt::gcm::AesGcm;
//! let key = AesGcm::new(&[7; 32])?; // best backend for this CPU
//! let sealed = key.seal(&[0; 12], b"header", b"attack at dawn")?; // ciphertext || tag
//! assert_eq!(key.open(&[0; 12], b"header", &sealed)?, b"attack at dawn");
//!
//! // An 8-byte IV and a 12-byte tag, through the explicit API.
//! let mut key = key;
//! key.set_tag_len(12)?;
//! let mut buf = *b"short tag";
//! let tag = key.seal_in_place_detached_with(&[1; 8], b"", &mut buf, 12)?;
//! key.open_in_place_detached_with(&[1; 8], b"", &mut buf, tag.as_bytes())?;
//! assert_eq!(&buf, b"short tag");
//! // A prefix of the tag is not accepted.
//! assert!(key.open_in_place_detached_with(&[1; 8], b"", &mut buf, &tag.as_bytes()[..4]).is_err());
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! [`AesGcmStream`] takes one message in pieces of any size (associated
//! data, then data, then the tag), byte for byte what the one-shot API
//! gives; see its docs for what streaming decryption implies.
//!
//! The mode is written once here: `J0`, the length block, the limits and the
//! tag. A backend supplies five kernels over a key that holds the AES round
//! keys and the GHASH key `H` (powers of it, for the x86 backends):
//!
//! * `ghash(acc, data)`: absorbs `data`, zero-padded to whole blocks;
//! * `absorb(acc, x)`: absorbs the one block whose big-endian integer is `x`
//!   (the length block);
//! * `encrypt(counter, acc, buf)`: CTR-encrypts `buf` in place from the
//!   counter block `counter` (`inc32` steps) and absorbs the ciphertext;
//! * `decrypt(counter, acc, buf)`: absorbs `buf`, then CTR-decrypts it;
//! * `encrypt_counter(c)`: `E(K, c)`, for `E(K, J0)`.
//!
//! Counter blocks travel as their big-endian integers (`u128`, in registers),
//! never as byte arrays assembled piecewise in memory: a 16-byte load of a
//! block just written in pieces cannot be forwarded from the store buffer
//! and stalls, which was a third of the cost of a short message.
//!
//! `soft` is the portable constant-time reference (fixsliced AES, GHASH with
//! masked integer multiplications); `aesni` runs CTR and GHASH in one
//! stitched pass on xmm registers with AES-NI and PCLMULQDQ, 8 blocks per
//! reduction; `vaes-avx2` does the same on ymm registers with VAES and
//! VPCLMULQDQ, 16 blocks per reduction; `vaes-avx512` on zmm registers,
//! 32 blocks per reduction.
//!
//! Short messages and last chunks take one pass of their own, since there
//! the fixed cost is the cost: with a 12-byte IV, a message of up to 128
//! bytes (64 on `vaes-avx2`, 32 on `vaes-avx512`) and up to 64 bytes of
//! associated data runs `aesni`'s short kernel (`E(K, J0)` in the same AES
//! pass as the counter blocks; associated data, ciphertext and lengths
//! under one reduction); on the VAES backends the one-shot API ends every
//! other message with a last-chunk kernel (masked zmm loads and stores on
//! `vaes-avx512`), which also takes `E(K, J0)` beside its counter blocks and
//! hashes the chunk, the lengths and, when no whole chunk came before, the
//! associated data under one reduction. The streaming API keeps the five
//! kernels above.
//!
//! Key material in memory: the key (round keys, H and its powers) lives on
//! the heap, expanded in place and wiped on drop (`secret.rs`). Declared
//! residue (compiler spills, checked by `tests/stack_residue.rs`): with
//! AES-128, the `aesni` and `vaes-avx512` seal/open kernels leave 1-2 round
//! keys on the dead stack. See docs/security.md, "Key material in
//! memory".

pub(crate) mod ghash_soft;
mod stream;

// The AES rounds of the x86 kernels; before the modules that use it
// (`macro_rules!` scope is textual).
/// Runs `$body` for each middle AES round `$r` in `1..$R`, written out so
/// the rounds unroll (`$R` is a constant; every `if` folds away).
#[cfg(target_arch = "x86_64")]
macro_rules! middle_rounds {
    ($R:ident, $r:ident => $body:block) => {
        middle_rounds!(@each $R, $r, $body, 1 2 3 4 5 6 7 8 9 10 11 12 13)
    };
    (@each $R:ident, $r:ident, $body:block, $($i:literal)*) => {
        $(
            if $i < $R {
                let $r: usize = $i;
                $body
            }
        )*
    };
}

#[cfg(target_arch = "x86_64")]
mod aesni_clmul;
#[cfg(target_arch = "x86_64")]
#[macro_use]
mod one_pass;
#[cfg(target_arch = "x86_64")]
mod vaes_avx2;
#[cfg(target_arch = "x86_64")]
mod vaes_avx512;
#[cfg(target_arch = "x86_64")]
mod wide;

use crate::aead::{self, Aead, Tag};
use crate::aes::{Block, KeySize};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::inout::InOut;
use crate::registry::{self, Algorithm};
use crate::secret::SecretBox;
use core::fmt;
use zeroize::Zeroize;

pub use stream::AesGcmStream;

/// Length of the nonce of the [`Aead`] interface (96 bits, the SP 800-38D
/// recommendation: `J0 = IV || 0^31 || 1`).
pub const NONCE_LEN: usize = 12;

/// Longest plaintext of one message: `2^39 - 256` bits.
pub const MAX_PLAINTEXT_LEN: u64 = (1 << 36) - 32;

/// Longest associated data of one message: `2^64 - 1` bits, rounded down to bytes.
pub const MAX_AAD_LEN: u64 = (1 << 61) - 1;

/// Longest IV accepted by the explicit API: `2^64 - 1` bits, rounded down to bytes.
pub const MAX_IV_LEN: u64 = (1 << 61) - 1;

/// A tag of one of the lengths SP 800-38D allows (4, 8, 12, 13, 14, 15 or 16
/// bytes; [`AesGcm`] makes 12..=16, [`AesGcmStream`] all of them): the
/// leading bytes of the full tag.
///
/// ```
/// use hwcrypt::gcm::AesGcm;
/// let mut key = AesGcm::new(&[1u8; 16])?;
/// key.set_tag_len(12)?;
/// let iv = [0u8; 12];
/// let mut data = *b"short tag";
/// let tag = key.seal_in_place_detached_with(&iv, b"", &mut data, 12)?; // 12-byte tag
/// assert_eq!(tag.len(), 12);
/// key.open_in_place_detached_with(&iv, b"", &mut data, tag.as_bytes())?;
/// assert_eq!(&data, b"short tag");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
/// `==` compares in constant time (for tags of the same length; lengths
/// are public), so comparing a received tag with a computed one leaks
/// nothing about where they differ.
#[derive(Clone, Copy)]
pub struct GcmTag {
    bytes: [u8; 16],
    len: usize,
}

impl GcmTag {
    /// The tag bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Tag length in bytes.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.len
    }
}

impl PartialEq for GcmTag {
    fn eq(&self, other: &GcmTag) -> bool {
        self.len == other.len && crate::ct::eq(self.as_bytes(), other.as_bytes())
    }
}

impl Eq for GcmTag {}

impl AsRef<[u8]> for GcmTag {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl fmt::Debug for GcmTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GcmTag(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        f.write_str(")")
    }
}

/// Whether SP 800-38D allows a tag of `len` bytes.
fn check_tag_len(len: usize) -> Result<()> {
    if matches!(len, 4 | 8 | 12..=16) {
        Ok(())
    } else {
        Err(Error::InvalidTagLength {
            expected: "4, 8 or 12..=16",
            got: len,
        })
    }
}

/// Whether an [`AesGcm`] key may use tags of `len` bytes (12..=16; see
/// the module docs for why not 4 or 8).
fn check_key_tag_len(len: usize) -> Result<()> {
    if (12..=16).contains(&len) {
        Ok(())
    } else {
        Err(Error::InvalidTagLength {
            expected: "12..=16",
            got: len,
        })
    }
}

/// The tag length of a seal or open is the key's, [`AesGcm::tag_len`].
fn check_tag_is_keys(len: usize, key_tag_len: usize) -> Result<()> {
    if len == key_tag_len {
        Ok(())
    } else {
        Err(Error::InvalidTagLength {
            expected: "the key's tag length (AesGcm::set_tag_len)",
            got: len,
        })
    }
}

/// The key of one backend, in its heap home ([`SecretBox`]): built in
/// place, never moved, wiped on drop (see [`crate::secret`]); the VAES
/// keys' wide tables in homes of their own, made on first use.
#[derive(Clone)]
enum Inner {
    Soft(SecretBox<ghash_soft::Key>),
    #[cfg(target_arch = "x86_64")]
    AesNi(SecretBox<aesni_clmul::Key>),
    #[cfg(target_arch = "x86_64")]
    VaesAvx2(vaes_avx2::Key),
    #[cfg(target_arch = "x86_64")]
    VaesAvx512(vaes_avx512::Key),
}

/// The error of a backend this CPU cannot run (out of line: it makes a
/// `String`, and [`AesGcm::build`] is inlined).
#[cold]
#[inline(never)]
fn unavailable(backend: Backend) -> Error {
    Error::BackendUnavailable {
        algorithm: Algorithm::AesGcm.name(),
        backend: backend.name(),
        missing: "CPU support not detected".into(),
    }
}

/// An AES-GCM key (AES-128, -192 or -256) bound to one backend. The AES
/// round keys and the GHASH key are zeroized on drop; `Debug` shows only the
/// algorithm and the backend.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::gcm::AesGcm;
/// let gcm = AesGcm::new(&[1u8; 32])?; // AES-256-GCM on the best backend here
/// let sealed = gcm.seal(&[0u8; 12], b"header", b"secret")?;
/// assert_eq!(gcm.open(&[0u8; 12], b"header", &sealed)?, b"secret");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct AesGcm {
    /// The key size is the schedule's: a byte field beside the tag length
    /// made callers move the key through overlapping 4-byte copies of its
    /// padding, which stalled store-to-load forwarding.
    inner: Inner,
    /// Tag length of the explicit API, 12..=16 (16 unless set).
    tag_len: usize,
}

impl AesGcm {
    /// A key (16, 24 or 32 bytes) for the best AES-GCM backend this CPU,
    /// after the `HWCRYPT_CPU` mask, can run.
    #[inline(always)]
    pub fn new(key: &[u8]) -> Result<AesGcm> {
        KeySize::from_key_len(key.len())?;
        AesGcm::build(key, registry::default_backend(Algorithm::AesGcm)?)
    }

    /// A key for the named backend; an error if it does not implement
    /// AES-GCM or this (masked) CPU cannot run it.
    #[inline(always)]
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<AesGcm> {
        KeySize::from_key_len(key.len())?;
        registry::check(Algorithm::AesGcm, backend)?;
        AesGcm::build(key, backend)
    }

    /// Inlined with its callers, as [`Aes`]'s constructor is: a
    /// `Result<AesGcm>` returned through memory was written with 8-byte
    /// stores and copied out with 16-byte loads, which cannot be forwarded
    /// from them (a stall of about a tenth of a key's setup, AMD Zen 4).
    #[inline(always)]
    fn build(key: &[u8], backend: Backend) -> Result<AesGcm> {
        KeySize::from_key_len(key.len())?;
        let unavailable = || unavailable(backend);
        let inner = match backend {
            Backend::Soft => Inner::Soft(ghash_soft::Key::boxed(key)),
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => Inner::AesNi(aesni_clmul::Key::boxed(key).ok_or_else(unavailable)?),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx2 => Inner::VaesAvx2(vaes_avx2::Key::new(key).ok_or_else(unavailable)?),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx512 => {
                Inner::VaesAvx512(vaes_avx512::Key::new(key).ok_or_else(unavailable)?)
            }
            _ => return Err(unavailable()),
        };
        Ok(AesGcm { inner, tag_len: 16 })
    }

    /// AES-128, -192 or -256.
    pub fn key_size(&self) -> KeySize {
        KeySize::from_rounds(match &self.inner {
            Inner::Soft(k) => k.rounds(),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.rounds(),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.narrow().rounds(),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.aesni().rounds(),
        })
    }

    /// The length of the tags [`seal_in_place_detached_with`] makes and
    /// [`open_in_place_detached_with`] accepts: 16 unless set.
    ///
    /// [`seal_in_place_detached_with`]: AesGcm::seal_in_place_detached_with
    /// [`open_in_place_detached_with`]: AesGcm::open_in_place_detached_with
    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// Binds this key to tags of `tag_len` bytes (12..=16) for the explicit
    /// API; tags of any other length are then refused. The [`Aead`]
    /// interface always uses 16-byte tags and refuses a key set otherwise.
    pub fn set_tag_len(&mut self, tag_len: usize) -> Result<()> {
        check_key_tag_len(tag_len)?;
        self.tag_len = tag_len;
        Ok(())
    }

    /// Internal, for the stack-residue test (feature `residue-test`): the
    /// memory holding this key's secrets, as (address, length) pairs.
    #[cfg(feature = "residue-test")]
    #[doc(hidden)]
    pub fn secret_regions(&self) -> Vec<(usize, usize)> {
        use crate::secret::region_of;
        match &self.inner {
            Inner::Soft(k) => vec![region_of(&**k)],
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => vec![region_of(&**k)],
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.secret_regions(),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.secret_regions(),
        }
    }

    /// `E(K, c)` for the counter block whose big-endian integer is `c`.
    fn encrypt_counter(&self, c: u128) -> Block {
        match &self.inner {
            Inner::Soft(k) => k.encrypt_counter(c),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.encrypt_counter(c),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.encrypt_counter(c),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.encrypt_counter(c),
        }
    }

    fn absorb(&self, acc: &mut Block, x: u128) {
        match &self.inner {
            Inner::Soft(k) => k.absorb(acc, x),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.absorb(acc, x),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.absorb(acc, x),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.absorb(acc, x),
        }
    }

    fn ghash(&self, acc: &mut Block, data: &[u8]) {
        match &self.inner {
            Inner::Soft(k) => k.ghash(acc, data),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.ghash(acc, data),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.ghash(acc, data),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.ghash(acc, data),
        }
    }

    #[cfg(test)]
    fn encrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        self.encrypt_io(counter, acc, InOut::InPlace(buf));
    }

    #[cfg(test)]
    fn decrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        self.decrypt_io(counter, acc, InOut::InPlace(buf));
    }

    /// CTR and GHASH over `io`: the VAES kernels read the input and write
    /// the output in one pass; the others work in place on the output (a
    /// copy of the input first).
    #[inline]
    fn encrypt_io(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        match &self.inner {
            Inner::Soft(k) => k.encrypt(counter, acc, io.into_in_place()),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.encrypt(counter, acc, io.into_in_place()),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.encrypt(counter, acc, io),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.encrypt(counter, acc, io),
        }
    }

    #[inline]
    fn decrypt_io(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        match &self.inner {
            Inner::Soft(k) => k.decrypt(counter, acc, io.into_in_place()),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.decrypt(counter, acc, io.into_in_place()),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.decrypt(counter, acc, io),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.decrypt(counter, acc, io),
        }
    }

    /// `J0` for `iv` (as its big-endian integer): `IV || 0^31 || 1` for 12
    /// bytes, else `GHASH(IV || 0-pad || 0^64 || [len(IV)]_64)`.
    fn j0(&self, iv: &[u8]) -> u128 {
        if let Ok(iv) = <&[u8; NONCE_LEN]>::try_from(iv) {
            let hi = u64::from_be_bytes([iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6], iv[7]]);
            let lo = u32::from_be_bytes([iv[8], iv[9], iv[10], iv[11]]);
            (u128::from(hi) << 64) | (u128::from(lo) << 32) | 1
        } else {
            let mut j0 = [0u8; 16];
            self.ghash(&mut j0, iv);
            self.absorb(&mut j0, u128::from(iv.len() as u64 * 8));
            u128::from_be_bytes(j0)
        }
    }

    fn check_lengths(iv: usize, aad: usize, text: usize) -> Result<()> {
        if iv == 0 {
            return Err(Error::InvalidNonceLength {
                expected: "at least 1",
                got: 0,
            });
        }
        if iv as u64 > MAX_IV_LEN {
            return Err(Error::MessageTooLong {
                what: "IV",
                limit: MAX_IV_LEN,
            });
        }
        if text as u64 > MAX_PLAINTEXT_LEN {
            return Err(Error::MessageTooLong {
                what: "plaintext",
                limit: MAX_PLAINTEXT_LEN,
            });
        }
        if aad as u64 > MAX_AAD_LEN {
            return Err(Error::MessageTooLong {
                what: "associated data",
                limit: MAX_AAD_LEN,
            });
        }
        Ok(())
    }

    /// The full tag: `E(K, J0) ^ GHASH(A, C, lengths)`; `acc` holds the
    /// GHASH state after the ciphertext, `tag` holds `E(K, J0)` (computed
    /// first, so that its AES latency overlaps the message's).
    fn finish(&self, mut tag: Block, mut acc: Block, aad_len: usize, text_len: usize) -> Block {
        let lengths = (u128::from(aad_len as u64 * 8) << 64) | u128::from(text_len as u64 * 8);
        self.absorb(&mut acc, lengths);
        for (t, a) in tag.iter_mut().zip(&acc) {
            *t ^= a;
        }
        acc.zeroize();
        tag
    }

    /// The AES-NI key of a hardware backend (the `vaes` keys keep one
    /// alongside), for the one-pass kernels of short messages with a
    /// 12-byte IV; `None` on `soft` or when the message is not short.
    #[cfg(target_arch = "x86_64")]
    fn short_key(&self, iv: &[u8], aad: &[u8], len: usize) -> Option<&aesni_clmul::Key> {
        // Above this length the masked kernels of the last chunk win. (On
        // `vaes-avx512` it was 32 bytes until 2026-11-29: on Zen 4, whose
        // 512-bit operations take two passes, the AES-NI kernel seals 48
        // and 64 bytes 13-22% faster and opens them 4-12% (medians of four
        // alternations), and the `vaes-avx2` key already used it there.)
        const SHORT_VAES_MAX: usize = 64;
        if iv.len() != NONCE_LEN
            || len > aesni_clmul::SHORT_MAX
            || aad.len() > aesni_clmul::SHORT_AAD_MAX
        {
            return None;
        }
        match &self.inner {
            Inner::Soft(_) => None,
            Inner::AesNi(k) => Some(k),
            Inner::VaesAvx2(k) => (len <= SHORT_VAES_MAX).then(|| k.narrow()),
            Inner::VaesAvx512(k) => (len <= SHORT_VAES_MAX).then(|| k.aesni()),
        }
    }

    /// Seals `io` (in place, or its input into its output) and returns the
    /// full tag.
    fn seal_full(&self, iv: &[u8], aad: &[u8], io: InOut<'_>) -> Result<Block> {
        AesGcm::check_lengths(iv.len(), aad.len(), io.len())?;
        Ok(self.crypt::<false>(iv, aad, io))
    }

    /// CTR over `io` (`DEC`: the input is the ciphertext) and the full tag
    /// (`E(K, J0)` XOR the GHASH of the associated data, the ciphertext and
    /// the lengths); the lengths were checked.
    fn crypt<const DEC: bool>(&self, iv: &[u8], aad: &[u8], io: InOut<'_>) -> Block {
        let len = io.len();
        let j0 = self.j0(iv);
        #[cfg(target_arch = "x86_64")]
        if let Some(k) = self.short_key(iv, aad, len) {
            return k.short::<DEC>(j0, aad, io);
        }
        #[cfg(target_arch = "x86_64")]
        match &self.inner {
            Inner::VaesAvx512(k) => {
                return match k.first_on_ymm(len) {
                    Some(y) => one_pass::crypt::<_, DEC>(y, j0, aad, io),
                    None => one_pass::crypt::<_, DEC>(k, j0, aad, io),
                };
            }
            Inner::VaesAvx2(k) => return one_pass::crypt::<_, DEC>(k, j0, aad, io),
            _ => {}
        }
        let mask = self.encrypt_counter(j0);
        let counter = inc32(j0, 1);
        let mut acc = [0u8; 16];
        self.ghash(&mut acc, aad);
        if DEC {
            self.decrypt_io(counter, &mut acc, io);
        } else {
            self.encrypt_io(counter, &mut acc, io);
        }
        self.finish(mask, acc, aad.len(), len)
    }

    /// Opens `output` in place (`input` `None`) or from `input` (same
    /// length); `output` is wiped if the tag does not verify.
    fn open_full(
        &self,
        iv: &[u8],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
        tag: &[u8],
    ) -> Result<()> {
        AesGcm::check_lengths(iv.len(), aad.len(), output.len())?;
        // One pass: GHASH of the ciphertext and decryption together; the
        // plaintext is wiped below if the tag does not verify.
        let io = match input {
            Some(input) => crate::modes::separate(input, output)?,
            None => InOut::InPlace(output),
        };
        let mut expected = self.crypt::<true>(iv, aad, io);
        let result = aead::verify_or_wipe(&expected[..tag.len()], tag, output);
        expected.zeroize();
        result
    }

    /// Encrypts `plaintext` into `ciphertext` (same length, one pass: no
    /// copy first) under an IV of any length (at least one byte); returns a
    /// tag of `tag_len` bytes, which must be the key's
    /// [`tag_len`](AesGcm::tag_len).
    pub fn seal_detached_with(
        &self,
        iv: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        ciphertext: &mut [u8],
        tag_len: usize,
    ) -> Result<GcmTag> {
        check_tag_is_keys(tag_len, self.tag_len)?;
        let io = crate::modes::separate(plaintext, ciphertext)?;
        let bytes = self.seal_full(iv, aad, io)?;
        Ok(GcmTag {
            bytes,
            len: tag_len,
        })
    }

    /// Verifies a tag of the key's [`tag_len`](AesGcm::tag_len) and
    /// decrypts `ciphertext` into `plaintext` (same length, one pass) under
    /// an IV of any length; on any failure `plaintext` is zeroed.
    pub fn open_detached_with(
        &self,
        iv: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        tag: &[u8],
        plaintext: &mut [u8],
    ) -> Result<()> {
        let r = check_tag_is_keys(tag.len(), self.tag_len)
            .and_then(|()| self.open_full(iv, aad, Some(ciphertext), plaintext, tag));
        aead::wipe_on_error(plaintext, r)
    }

    /// Encrypts `in_out` in place under an IV of any length (at least one
    /// byte) and returns a tag of `tag_len` bytes, which must be the key's
    /// [`tag_len`](AesGcm::tag_len) (an [`Error::InvalidTagLength`] otherwise).
    pub fn seal_in_place_detached_with(
        &self,
        iv: &[u8],
        aad: &[u8],
        in_out: &mut [u8],
        tag_len: usize,
    ) -> Result<GcmTag> {
        check_tag_is_keys(tag_len, self.tag_len)?;
        let bytes = self.seal_full(iv, aad, InOut::InPlace(in_out))?;
        Ok(GcmTag {
            bytes,
            len: tag_len,
        })
    }

    /// Verifies a tag of the key's [`tag_len`](AesGcm::tag_len) under an IV
    /// of any length (at least one byte), then decrypts `in_out` in place.
    /// A tag of another length is an [`Error::InvalidTagLength`] (never a
    /// check of fewer bytes). On any failure `in_out` is zeroed; a wrong
    /// tag is [`Error::AuthenticationFailed`].
    pub fn open_in_place_detached_with(
        &self,
        iv: &[u8],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8],
    ) -> Result<()> {
        let r = check_tag_is_keys(tag.len(), self.tag_len)
            .and_then(|()| self.open_full(iv, aad, None, in_out, tag));
        aead::wipe_on_error(in_out, r)
    }
}

/// `inc32` applied `n` times: the low 32 bits of the counter block `c` (its
/// big-endian integer) advance by `n`, wrapping, the rest unchanged.
pub(crate) fn inc32(c: u128, n: u32) -> u128 {
    let low = (c as u32).wrapping_add(n);
    (c & !u128::from(u32::MAX)) | u128::from(low)
}

fn check_nonce(nonce: &[u8]) -> Result<()> {
    if nonce.len() == NONCE_LEN {
        Ok(())
    } else {
        Err(Error::InvalidNonceLength {
            expected: "12",
            got: nonce.len(),
        })
    }
}

impl Aead for AesGcm {
    const NONCE_LEN: usize = NONCE_LEN;

    fn algorithm(&self) -> &'static str {
        match self.key_size() {
            KeySize::Aes128 => "AES-128-GCM",
            KeySize::Aes192 => "AES-192-GCM",
            KeySize::Aes256 => "AES-256-GCM",
        }
    }

    fn backend(&self) -> Backend {
        match &self.inner {
            Inner::Soft(_) => Backend::Soft,
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(_) => Backend::AesNi,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(_) => Backend::VaesAvx2,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(_) => Backend::VaesAvx512,
        }
    }

    fn seal_in_place_detached(&self, nonce: &[u8], aad: &[u8], in_out: &mut [u8]) -> Result<Tag> {
        check_nonce(nonce)?;
        check_tag_is_keys(aead::TAG_LEN, self.tag_len)?;
        self.seal_full(nonce, aad, InOut::InPlace(in_out))
    }

    /// One pass from `plaintext` into `ciphertext` (the trait's default
    /// copies first).
    fn seal_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        plaintext: &[u8],
        ciphertext: &mut [u8],
    ) -> Result<Tag> {
        check_nonce(nonce)?;
        check_tag_is_keys(aead::TAG_LEN, self.tag_len)?;
        let io = crate::modes::separate(plaintext, ciphertext)?;
        self.seal_full(nonce, aad, io)
    }

    /// One pass from `ciphertext` into `plaintext`; on any failure
    /// `plaintext` is zeroed.
    fn open_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        tag: &[u8],
        plaintext: &mut [u8],
    ) -> Result<()> {
        let r = check_nonce(nonce)
            .and_then(|()| aead::full_tag(tag))
            .and_then(|tag| {
                check_tag_is_keys(aead::TAG_LEN, self.tag_len)?;
                self.open_full(nonce, aad, Some(ciphertext), plaintext, tag)
            });
        aead::wipe_on_error(plaintext, r)
    }

    fn open_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        in_out: &mut [u8],
        tag: &[u8],
    ) -> Result<()> {
        let r = check_nonce(nonce)
            .and_then(|()| aead::full_tag(tag))
            .and_then(|tag| {
                check_tag_is_keys(aead::TAG_LEN, self.tag_len)?;
                self.open_full(nonce, aad, None, in_out, tag)
            });
        aead::wipe_on_error(in_out, r)
    }
}

impl fmt::Debug for AesGcm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesGcm")
            .field("algorithm", &self.algorithm())
            .field("backend", &self.backend().name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        hex::decode(s).unwrap()
    }

    /// The GCM spec's test cases 2, 4 and 6 (McGrew & Viega), AES-128.
    #[test]
    fn gcm_spec_test_cases_on_every_runnable_backend() {
        let key = unhex("feffe9928665731c6d6a8f9467308308");
        let pt = unhex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
        );
        let aad = unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
        let cases: [(&str, &str, &str); 2] = [
            (
                "cafebabefacedbaddecaf888",
                "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
                "5bc94fbc3221a5db94fae95ae7121a47",
            ),
            (
                "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
                "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca701e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5",
                "619cc5aefffe0bfa462af43c1699d050",
            ),
        ];
        for backend in registry::runnable(Algorithm::AesGcm, crate::cpu::features().unwrap()) {
            let k = AesGcm::with_backend(&key, backend).unwrap();
            for (iv, ct, tag) in cases {
                let iv = unhex(iv);
                let mut buf = pt.clone();
                let t = k
                    .seal_in_place_detached_with(&iv, &aad, &mut buf, 16)
                    .unwrap();
                assert_eq!(hex::encode(&buf), ct, "{backend}");
                assert_eq!(hex::encode(t.as_bytes()), tag, "{backend}");
                k.open_in_place_detached_with(&iv, &aad, &mut buf, t.as_bytes())
                    .unwrap();
                assert_eq!(buf, pt, "{backend}");
            }
            // Test case 1: empty everything.
            let k = AesGcm::with_backend(&[0; 16], backend).unwrap();
            let tag = k.seal_in_place_detached(&[0; 12], &[], &mut []).unwrap();
            assert_eq!(hex::encode(tag), "58e2fccefa7e3061367f1d57a4e7455a");
        }
    }

    /// The wide tables are made by the first message that needs them (see
    /// `secret::LazyBox`): a key cloned before that, one cloned after, and
    /// keys whose first long messages race on several threads all seal as
    /// the portable backend does, short and long messages alike.
    #[test]
    fn wide_tables_made_on_first_use_agree_everywhere() {
        let key = [0x3e; 32];
        let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
        let lens = [16, 100, 700, 5000, 33];
        let expect: Vec<(Vec<u8>, [u8; 16])> = lens
            .iter()
            .map(|&len| {
                let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let tag = soft
                    .seal_in_place_detached(&[9; 12], b"aad", &mut buf)
                    .unwrap();
                (buf, tag)
            })
            .collect();
        let check = |k: &AesGcm, what: &str| {
            for (&len, (ct, tag)) in lens.iter().zip(&expect) {
                let mut buf: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let t = k
                    .seal_in_place_detached(&[9; 12], b"aad", &mut buf)
                    .unwrap();
                assert!(buf == *ct && t == *tag, "{what}, {len} bytes");
            }
        };
        for backend in registry::runnable(Algorithm::AesGcm, crate::cpu::features().unwrap()) {
            let k = AesGcm::with_backend(&key, backend).unwrap();
            let before = k.clone();
            check(&k, &format!("{backend} first use"));
            let after = k.clone();
            check(&before, &format!("{backend} cloned before first use"));
            check(&after, &format!("{backend} cloned after first use"));
            check(&k, &format!("{backend} again"));
            let fresh = AesGcm::with_backend(&key, backend).unwrap();
            std::thread::scope(|s| {
                for i in 0..4 {
                    let (fresh, check) = (&fresh, &check);
                    s.spawn(move || check(fresh, &format!("{backend} thread {i}")));
                }
            });
        }
    }

    /// `inc32` wraps the low 32 bits of the counter without a carry into the
    /// rest, on every backend: J0 from a non-96-bit IV can start anywhere.
    #[test]
    fn counter_wraps_at_2_pow_32_like_soft() {
        let key = [0x5c; 32];
        let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
        for backend in registry::runnable(Algorithm::AesGcm, crate::cpu::features().unwrap()) {
            let k = AesGcm::with_backend(&key, backend).unwrap();
            for below in [1u32, 2, 5, 8, 9, 17, 40] {
                let counter = u128::from_be_bytes([0xab; 16]);
                let counter = inc32(counter & !u128::from(u32::MAX), 0u32.wrapping_sub(below));
                assert_eq!(inc32(counter, below), counter & !u128::from(u32::MAX));
                for len in [16 * 8, 16 * 24 + 5, 16 * 50, 16 * 80 + 3] {
                    let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
                    let (mut a, mut b) = (data.clone(), data.clone());
                    let (mut ya, mut yb) = ([1; 16], [1; 16]);
                    k.encrypt(counter, &mut ya, &mut a);
                    soft.encrypt(counter, &mut yb, &mut b);
                    assert!(
                        a == b && ya == yb,
                        "{backend} encrypt {below} below, {len} bytes"
                    );
                    // The same between separate buffers.
                    let mut c = vec![0x5a; len];
                    let mut yc = [1; 16];
                    k.encrypt_io(
                        counter,
                        &mut yc,
                        InOut::Separate {
                            input: &data,
                            output: &mut c,
                        },
                    );
                    assert!(
                        c == b && yc == yb,
                        "{backend} encrypt separate {below} below, {len}"
                    );
                    let mut d = vec![0x5a; len];
                    k.decrypt_io(
                        counter,
                        &mut yc,
                        InOut::Separate {
                            input: &c,
                            output: &mut d,
                        },
                    );
                    k.decrypt(counter, &mut ya, &mut a);
                    soft.decrypt(counter, &mut yb, &mut b);
                    assert!(a == data && b == data && ya == yb, "{backend} decrypt");
                    assert!(d == data && yc == yb, "{backend} decrypt separate");
                }
            }
        }
    }

    /// Long IVs and long associated data (the wide GHASH paths of the x86
    /// backends, from 512 bytes) give what `soft` gives.
    #[test]
    fn long_iv_and_aad_like_soft() {
        let key = [0x3a; 16];
        let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
        for backend in registry::runnable(Algorithm::AesGcm, crate::cpu::features().unwrap()) {
            let k = AesGcm::with_backend(&key, backend).unwrap();
            for (iv_len, aad_len, len) in [(600, 1000, 700), (1024, 512, 1536), (13, 2048 + 7, 33)]
            {
                let iv: Vec<u8> = (0..iv_len).map(|i| (i * 7) as u8).collect();
                let aad: Vec<u8> = (0..aad_len).map(|i| (i * 13) as u8).collect();
                let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let (mut a, mut b) = (data.clone(), data.clone());
                let ta = k
                    .seal_in_place_detached_with(&iv, &aad, &mut a, 16)
                    .unwrap();
                let tb = soft
                    .seal_in_place_detached_with(&iv, &aad, &mut b, 16)
                    .unwrap();
                assert!(a == b && ta == tb, "{backend} {iv_len} {aad_len} {len}");
                k.open_in_place_detached_with(&iv, &aad, &mut a, ta.as_bytes())
                    .unwrap();
                assert_eq!(a, data, "{backend}");
            }
        }
    }

    #[test]
    fn errors_and_debug() {
        let k = AesGcm::with_backend(&[0x42; 32], Backend::Soft).unwrap();
        let text = format!("{k:?}");
        assert!(text.contains("AES-256-GCM") && text.contains("soft") && !text.contains("42"));
        assert!(matches!(
            k.seal_in_place_detached(&[0; 8], &[], &mut []),
            Err(Error::InvalidNonceLength { .. })
        ));
        assert!(matches!(
            k.seal_in_place_detached_with(&[], &[], &mut [], 16),
            Err(Error::InvalidNonceLength { .. })
        ));
        for bad in [0, 1, 3, 5, 7, 9, 10, 11, 17] {
            assert!(matches!(
                k.seal_in_place_detached_with(&[0; 12], &[], &mut [], bad),
                Err(Error::InvalidTagLength { .. })
            ));
        }
        assert!(matches!(
            k.open_in_place_detached(&[0; 12], &[], &mut [], &[0; 12]),
            Err(Error::InvalidTagLength { .. })
        ));
        let max = MAX_PLAINTEXT_LEN as usize;
        assert!(AesGcm::check_lengths(12, 0, max).is_ok());
        assert_eq!(
            AesGcm::check_lengths(12, 0, max + 1),
            Err(Error::MessageTooLong {
                what: "plaintext",
                limit: (1 << 36) - 32
            })
        );
        let max = MAX_AAD_LEN as usize;
        assert!(AesGcm::check_lengths(12, max, 0).is_ok());
        assert!(matches!(
            AesGcm::check_lengths(12, max + 1, 0),
            Err(Error::MessageTooLong {
                what: "associated data",
                ..
            })
        ));
        assert!(matches!(
            AesGcm::with_backend(&[0; 15], Backend::Soft),
            Err(Error::InvalidKeyLength { .. })
        ));
        assert!(matches!(
            AesGcm::with_backend(&[0; 16], Backend::Avx512),
            Err(Error::BackendNotImplemented { .. })
        ));
    }
}
