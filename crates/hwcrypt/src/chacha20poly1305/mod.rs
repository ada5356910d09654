//! ChaCha20-Poly1305 (RFC 8439) and XChaCha20-Poly1305
//! (draft-irtf-cfrg-xchacha: HChaCha20 subkey, 24-byte nonce, as libsodium).
//!
//! Both are [`Aead`]s with 32-byte keys and 16-byte tags, bound to a backend
//! when the key is made: `avx2` (8 ChaCha20 blocks per pass, Poly1305
//! stitched into it) or the portable `soft`. The raw primitives are exposed
//! too ([`chacha20_xor`], [`hchacha20`], [`poly1305`]) so their RFC vectors
//! can be checked on every backend.
//!
//! [`ChaCha20Poly1305Stream`] takes one message in pieces of any size
//! (associated data, then data, then the tag), byte for byte what the
//! one-shot API gives; [`ChaCha20`] is the raw stream cipher with OpenSSL's
//! 16-byte IV (counter then nonce), incremental across calls.
//!
//! ```
//! use hwcrypt::aead::Aead;
//! use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
//! let key = ChaCha20Poly1305::new(&[7; 32])?;
//! let sealed = key.seal(&[0; 12], b"header", b"attack at dawn")?;
//! assert_eq!(key.open(&[0; 12], b"header", &sealed)?, b"attack at dawn");
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! Key material in memory: the key words live on the heap, written in place
//! and wiped on drop (`secret.rs`); the kernels read the initial state
//! from a wiped array instead of holding it across the rounds, finish
//! Poly1305 by reference and wipe the XChaCha20 subkey. Declared residue
//! (checked by `tests/stack_residue.rs`): built without LTO, the `avx512`
//! kernel leaves broadcast key words (compiler spills). See docs/security.md,
//! "Key material in memory".

mod chacha20_soft;
mod poly1305_soft;
mod stream;

#[cfg(target_arch = "x86_64")]
mod chacha20_avx2;
#[cfg(target_arch = "x86_64")]
mod chacha20_avx512;

use crate::Backend;
use crate::aead::{self, Aead, Tag, same_len};
use crate::error::{Error, Result};
use crate::inout::InOut;
use crate::registry::{self, Algorithm};
use crate::secret::SecretBox;
use core::fmt;
use poly1305_soft::Poly1305;
use zeroize::Zeroize;

pub use stream::{CHACHA20_IV_LEN, ChaCha20, ChaCha20Poly1305Stream};

/// Key length in bytes.
pub const KEY_LEN: usize = 32;

/// The longest plaintext one nonce may encrypt (RFC 8439 §2.8: 2^32 - 1
/// blocks of 64 bytes, counters 1..2^32).
pub const MAX_PLAINTEXT_LEN: u64 = (1 << 38) - 64;

/// What a streamed message keeps of an engine's vector Poly1305 between
/// its pieces (the `avx512` key powers), wiped when the message ends.
#[derive(Clone, Default)]
struct PolyLanes {
    #[cfg(target_arch = "x86_64")]
    avx512: chacha20_avx512::PowersCache,
}

impl PolyLanes {
    /// Forgets (and wipes) what belonged to the last message's key.
    fn wipe(&mut self) {
        #[cfg(target_arch = "x86_64")]
        self.avx512.wipe();
    }
}

/// The ChaCha20 implementation a key runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Soft,
    #[cfg(target_arch = "x86_64")]
    Avx2(chacha20_avx2::Avx2),
    /// With the `avx2` token where this CPU also runs that backend (BMI2):
    /// one-shot messages of up to [`chacha20_avx2::SHORT_MAX`] bytes go to
    /// its short path (with AVX-512VL rotations), which seals and opens them
    /// faster than the `avx512` row layout with the scalar Poly1305 (Zen 4,
    /// 16-320 B, 0 or 13 bytes of AAD: 5-25%; docs/performance.md).
    #[cfg(target_arch = "x86_64")]
    Avx512(chacha20_avx512::Avx512, Option<chacha20_avx2::Avx2>),
}

/// The error of a backend this CPU cannot run (out of line: it makes a
/// `String`, and key constructors are inlined).
#[cold]
#[inline(never)]
fn unavailable(backend: Backend) -> Error {
    Error::BackendUnavailable {
        algorithm: Algorithm::ChaCha20Poly1305.name(),
        backend: backend.name(),
        missing: "CPU support not detected".into(),
    }
}

impl Engine {
    #[inline(always)]
    fn new(backend: Backend) -> Result<Engine> {
        registry::check(Algorithm::ChaCha20Poly1305, backend)?;
        let unavailable = || unavailable(backend);
        match backend {
            Backend::Soft => Ok(Engine::Soft),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => chacha20_avx2::Avx2::new()
                .map(Engine::Avx2)
                .ok_or_else(unavailable),
            #[cfg(target_arch = "x86_64")]
            // The short path's `avx2` token only where the mask leaves its
            // features (BMI2's `mulx`): `HWCRYPT_CPU=-bmi2` reaches it too.
            Backend::Avx512 => chacha20_avx512::Avx512::new()
                .map(|t| {
                    let short = chacha20_avx2::Avx2::new().filter(|_| {
                        matches!(crate::cpu::usable_features(), Ok(f)
                            if f.contains(crate::cpu::Features::of(registry::CHACHA20_AVX2_FEATURES)))
                    });
                    Engine::Avx512(t, short)
                })
                .ok_or_else(unavailable),
            #[allow(unreachable_patterns)]
            _ => Err(unavailable()),
        }
    }

    #[inline(always)]
    fn default() -> Result<Engine> {
        Engine::new(registry::default_backend(Algorithm::ChaCha20Poly1305)?)
    }

    fn backend(self) -> Backend {
        match self {
            Engine::Soft => Backend::Soft,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(_) => Backend::Avx2,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(..) => Backend::Avx512,
        }
    }

    fn xor_keystream(self, state: &[u32; 16], io: InOut<'_>) {
        match self {
            Engine::Soft => chacha20_soft::xor_keystream(state, io),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(t) => t.xor_keystream(state, io),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, _) => t.xor_keystream(state, io),
        }
    }

    /// The middle of a streamed message: encrypts (`seal`) or decrypts
    /// `input` (or `output` in place) into `output` (whole 64-byte blocks)
    /// from block `state[12]` and absorbs the ciphertext into `poly` (at a
    /// block boundary); the vector backends stitch both in one pass.
    /// `lanes` is the message's vector Poly1305 state between pieces.
    fn aead_blocks(
        self,
        seal: bool,
        state: &[u32; 16],
        poly: &mut Poly1305,
        lanes: &mut PolyLanes,
        input: Option<&[u8]>,
        output: &mut [u8],
    ) {
        match self {
            Engine::Soft => {
                if !seal {
                    poly.blocks(input.unwrap_or(output));
                }
                let io = match input {
                    Some(input) => InOut::Separate {
                        input,
                        output: &mut *output,
                    },
                    None => InOut::InPlace(&mut *output),
                };
                chacha20_soft::xor_keystream(state, io);
                if seal {
                    poly.blocks(output);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(t) => t.aead_blocks(seal, state, poly, input, output),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, _) => {
                t.aead_blocks(seal, state, poly, &mut lanes.avx512, input, output)
            }
        }
    }

    /// Absorbs `data` (whole 16-byte blocks) into a streamed message's
    /// `poly` (pieces served from buffered keystream): on the vector lanes
    /// where the engine has them (and decides the run is long enough).
    fn absorb(self, poly: &mut Poly1305, lanes: &mut PolyLanes, data: &[u8]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, _) => t.absorb(poly, &mut lanes.avx512, data),
            _ => {
                let _ = lanes;
                poly.blocks(data);
            }
        }
    }

    /// Seal (`seal = true`) or open `input` (or `output` in place) into
    /// `output`; returns the tag over `aad` and the ciphertext.
    fn run(
        self,
        seal: bool,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        match self {
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(t) if seal => t.seal(key, nonce, aad, input, output),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(t) => t.open(key, nonce, aad, input, output),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, Some(avx2)) if output.len() <= chacha20_avx2::SHORT_MAX => {
                if seal {
                    t.short::<true>(avx2, key, nonce, aad, input, output)
                } else {
                    t.short::<false>(avx2, key, nonce, aad, input, output)
                }
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, _) if seal => t.seal(key, nonce, aad, input, output),
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(t, _) => t.open(key, nonce, aad, input, output),
            Engine::Soft => soft_aead(seal, key, nonce, aad, input, output),
        }
    }
}

/// The portable AEAD: Poly1305 key from block 0, ChaCha20 from block 1,
/// Poly1305 over the padded AAD and ciphertext and the two lengths.
fn soft_aead(
    seal: bool,
    key: &[u32; 8],
    nonce: &[u32; 3],
    aad: &[u8],
    input: Option<&[u8]>,
    output: &mut [u8],
) -> Tag {
    // Every array holding key words or key stream is named and wiped.
    let mut state = chacha20_soft::state(key, 0, nonce);
    let mut block0 = chacha20_soft::block(&state);
    let mut poly_key = [0u8; 32];
    poly_key.copy_from_slice(&block0[..32]);
    block0.zeroize();
    let mut poly = Poly1305::new(&poly_key);
    poly_key.zeroize();
    poly.update_padded(aad);
    if !seal {
        poly.update_padded(input.unwrap_or(output));
    }
    let io = match input {
        Some(input) => InOut::Separate {
            input,
            output: &mut *output,
        },
        None => InOut::InPlace(&mut *output),
    };
    state[12] = 1;
    chacha20_soft::xor_keystream(&state, io);
    state.zeroize();
    if seal {
        poly.update_padded(output);
    }
    poly.finish_aead(aad.len() as u64, output.len() as u64)
}

/// The key's little-endian words in a heap home (returned inside a
/// `Result` by value, they were left behind on the stack when moved out).
fn key_words(key: &[u8]) -> Result<SecretBox<KeyWords>> {
    if key.len() != KEY_LEN {
        return Err(Error::InvalidKeyLength {
            expected: "32",
            got: key.len(),
        });
    }
    let mut w = SecretBox::<KeyWords>::new();
    for (w, b) in w.0.iter_mut().zip(key.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    Ok(w)
}

fn words<const N: usize>(bytes: &[u8]) -> [u32; N] {
    core::array::from_fn(|i| {
        u32::from_le_bytes([
            bytes[4 * i],
            bytes[4 * i + 1],
            bytes[4 * i + 2],
            bytes[4 * i + 3],
        ])
    })
}

fn check_len(len: usize) -> Result<()> {
    if len as u64 > MAX_PLAINTEXT_LEN {
        Err(Error::MessageTooLong {
            what: "plaintext",
            limit: MAX_PLAINTEXT_LEN,
        })
    } else {
        Ok(())
    }
}

/// A ChaCha20 key as its eight little-endian words.
pub(crate) struct KeyWords(pub(crate) [u32; 8]);

/// A ChaCha20 state (constants, key words, block counter, nonce): the
/// position of the bare ChaCha20 and of the incremental AEAD, kept in a
/// [`SecretBox`] like the key words so that moving those values leaves no
/// copy of the key behind.
pub(crate) struct StateWords(pub(crate) [u32; 16]);

/// The shared body of both AEADs: a key and its engine. The key words live
/// on the heap ([`SecretBox`]: written in place, never moved, wiped on
/// drop), so moving a key object leaves no copy of them behind.
#[derive(Clone)]
struct Core {
    key: SecretBox<KeyWords>,
    engine: Engine,
}

impl Core {
    /// Inlined with the public constructors, so that the key handle (a
    /// pointer and the engine) reaches the caller in registers: returned
    /// through memory, it was copied out with loads that straddle the
    /// stores that wrote it, which cannot be forwarded.
    #[inline(always)]
    fn new(key: &[u8], engine: Result<Engine>) -> Result<Core> {
        if key.len() != KEY_LEN {
            return Err(Error::InvalidKeyLength {
                expected: "32",
                got: key.len(),
            });
        }
        let engine = engine?;
        let mut words = SecretBox::<KeyWords>::new();
        for (w, b) in words.0.iter_mut().zip(key.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(Core { key: words, engine })
    }

    fn seal(
        &self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Result<Tag> {
        check_len(output.len())?;
        Ok(self.engine.run(true, key, nonce, aad, input, output))
    }

    #[allow(clippy::too_many_arguments)]
    fn open(
        &self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
        tag: &[u8],
    ) -> Result<()> {
        // On an error here nothing was decrypted; the callers zero the
        // output all the same (`aead::wipe_on_error`).
        let tag = aead::full_tag(tag)?;
        check_len(output.len())?;
        let mut expected = self.engine.run(false, key, nonce, aad, input, output);
        let r = aead::verify_or_wipe(&expected, tag, output);
        expected.zeroize();
        r
    }
}

/// The constructors, the [`Aead`] impl and `Debug` of a ChaCha20-Poly1305
/// flavour, given its `with_key_and_nonce(&self, nonce, f)`: runs `f` with
/// the ChaCha20 key and 96-bit nonce (as words) that one message uses.
macro_rules! chacha_aead {
    ($ty:ident, $name:literal, nonce: $nonce_len:literal) => {
        impl $ty {
            /// Nonce length in bytes.
            pub const NONCE_LEN: usize = $nonce_len;

            /// A key (32 bytes) for the best backend this (masked) CPU can run.
            #[inline(always)]
            pub fn new(key: &[u8]) -> Result<$ty> {
                Ok($ty {
                    core: Core::new(key, Engine::default())?,
                })
            }

            /// A key (32 bytes) for the named backend; an error if this (masked)
            /// CPU cannot run it.
            #[inline(always)]
            pub fn with_backend(key: &[u8], backend: Backend) -> Result<$ty> {
                Ok($ty {
                    core: Core::new(key, Engine::new(backend))?,
                })
            }

            /// Internal, for the stack-residue test (feature `residue-test`):
            /// the memory holding this key's secrets, as (address, length) pairs.
            #[cfg(feature = "residue-test")]
            #[doc(hidden)]
            pub fn secret_regions(&self) -> Vec<(usize, usize)> {
                vec![(self.core.key.0.as_ptr() as usize, size_of::<[u32; 8]>())]
            }

            fn check_nonce(nonce: &[u8]) -> Result<()> {
                if nonce.len() == $nonce_len {
                    Ok(())
                } else {
                    Err(Error::InvalidNonceLength {
                        expected: stringify!($nonce_len),
                        got: nonce.len(),
                    })
                }
            }
        }

        impl Aead for $ty {
            const NONCE_LEN: usize = $nonce_len;

            fn algorithm(&self) -> &'static str {
                $name
            }

            fn backend(&self) -> Backend {
                self.core.engine.backend()
            }

            fn seal_in_place_detached(
                &self,
                nonce: &[u8],
                aad: &[u8],
                in_out: &mut [u8],
            ) -> Result<Tag> {
                self.with_key_and_nonce(nonce, |k, n| self.core.seal(k, n, aad, None, in_out))
            }

            fn open_in_place_detached(
                &self,
                nonce: &[u8],
                aad: &[u8],
                in_out: &mut [u8],
                tag: &[u8],
            ) -> Result<()> {
                let r = self
                    .with_key_and_nonce(nonce, |k, n| self.core.open(k, n, aad, None, in_out, tag));
                aead::wipe_on_error(in_out, r)
            }

            fn seal_detached(
                &self,
                nonce: &[u8],
                aad: &[u8],
                plaintext: &[u8],
                ciphertext: &mut [u8],
            ) -> Result<Tag> {
                same_len(plaintext, ciphertext)?;
                self.with_key_and_nonce(nonce, |k, n| {
                    self.core.seal(k, n, aad, Some(plaintext), ciphertext)
                })
            }

            fn open_detached(
                &self,
                nonce: &[u8],
                aad: &[u8],
                ciphertext: &[u8],
                tag: &[u8],
                plaintext: &mut [u8],
            ) -> Result<()> {
                let r = same_len(ciphertext, plaintext).and_then(|()| {
                    self.with_key_and_nonce(nonce, |k, n| {
                        self.core.open(k, n, aad, Some(ciphertext), plaintext, tag)
                    })
                });
                aead::wipe_on_error(plaintext, r)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("algorithm", &$name)
                    .field("backend", &self.backend().name())
                    .finish_non_exhaustive()
            }
        }
    };
}

/// ChaCha20-Poly1305 (RFC 8439): 32-byte key, 12-byte nonce, 16-byte tag.
/// The key is wiped on drop; `Debug` shows only the algorithm and backend.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
/// let key = ChaCha20Poly1305::new(&[2u8; 32])?;
/// let sealed = key.seal(&[0u8; 12], b"", b"hello")?;
/// assert_eq!(key.open(&[0u8; 12], b"", &sealed)?, b"hello");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct ChaCha20Poly1305 {
    core: Core,
}

impl ChaCha20Poly1305 {
    /// Runs `f` with the key itself and the nonce as words.
    fn with_key_and_nonce<R>(
        &self,
        nonce: &[u8],
        f: impl FnOnce(&[u32; 8], &[u32; 3]) -> Result<R>,
    ) -> Result<R> {
        Self::check_nonce(nonce)?;
        f(&self.core.key.0, &words(nonce))
    }
}

chacha_aead!(ChaCha20Poly1305, "ChaCha20-Poly1305", nonce: 12);

/// XChaCha20-Poly1305: 32-byte key, 24-byte nonce, 16-byte tag. Each message
/// uses the subkey HChaCha20(key, nonce[..16]) and the ChaCha20-Poly1305
/// nonce `[0; 4] || nonce[16..]`, as libsodium's
/// `crypto_aead_xchacha20poly1305_ietf`. Random nonces are safe to use.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::chacha20poly1305::XChaCha20Poly1305;
/// let key = XChaCha20Poly1305::new(&[3u8; 32])?;
/// let nonce = [9u8; 24]; // long enough to be drawn at random
/// let sealed = key.seal(&nonce, b"", b"hello")?;
/// assert_eq!(key.open(&nonce, b"", &sealed)?, b"hello");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct XChaCha20Poly1305 {
    core: Core,
}

impl XChaCha20Poly1305 {
    /// Runs `f` with the subkey and ChaCha20 nonce for a 24-byte `nonce`.
    /// The subkey is computed into a local buffer, used there and wiped
    /// (returned, it would be moved, and a move leaves an unwiped copy).
    fn with_key_and_nonce<R>(
        &self,
        nonce: &[u8],
        f: impl FnOnce(&[u32; 8], &[u32; 3]) -> Result<R>,
    ) -> Result<R> {
        Self::check_nonce(nonce)?;
        let mut subkey = [0u32; 8];
        chacha20_soft::hchacha20(&self.core.key.0, &words(&nonce[..16]), &mut subkey);
        let tail: [u32; 2] = words(&nonce[16..]);
        let result = f(&subkey, &[0, tail[0], tail[1]]);
        subkey.zeroize();
        result
    }
}

chacha_aead!(XChaCha20Poly1305, "XChaCha20-Poly1305", nonce: 24);

// ---------------------------------------------------------------- primitives

/// Raw ChaCha20 (RFC 8439 §2.4) on the named backend: XORs the keystream
/// that starts at block `counter` for `key` (32 bytes) and `nonce` (12
/// bytes) into `data`. An error if the block counter would pass 2^32 - 1.
/// No authentication: for test vectors and protocols that need the bare
/// stream cipher.
pub fn chacha20_xor(
    backend: Backend,
    key: &[u8],
    nonce: &[u8],
    counter: u32,
    data: &mut [u8],
) -> Result<()> {
    let engine = Engine::new(backend)?;
    let key = key_words(key)?;
    ChaCha20Poly1305::check_nonce(nonce)?;
    let nonce: [u32; 3] = words(nonce);
    let room = ((1u64 << 32) - u64::from(counter)) * 64;
    if data.len() as u64 > room {
        return Err(Error::MessageTooLong {
            what: "plaintext",
            limit: room,
        });
    }
    let mut state = SecretBox::<StateWords>::new();
    chacha20_soft::set_state(&mut state.0, &key.0, counter, &nonce);
    engine.xor_keystream(&state.0, InOut::InPlace(data));
    Ok(())
}

/// HChaCha20 (draft-irtf-cfrg-xchacha §2.2): the 32-byte subkey for `key`
/// (32 bytes) and a 16-byte `input`.
pub fn hchacha20(key: &[u8], input: &[u8]) -> Result<[u8; 32]> {
    let key = key_words(key)?;
    if input.len() != 16 {
        return Err(Error::InvalidNonceLength {
            expected: "16",
            got: input.len(),
        });
    }
    let mut sub = [0u32; 8];
    chacha20_soft::hchacha20(&key.0, &words(input), &mut sub);
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(&sub) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    sub.zeroize();
    Ok(out)
}

/// One-shot Poly1305 (RFC 8439 §2.5) of `msg` under the 32-byte one-time
/// `key`. Never reuse a key.
pub fn poly1305(key: &[u8], msg: &[u8]) -> Result<[u8; 16]> {
    let key: &[u8; 32] = key.try_into().map_err(|_| Error::InvalidKeyLength {
        expected: "32",
        got: key.len(),
    })?;
    Ok(Poly1305::mac(key, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_key_and_lengths_are_checked() {
        let key = [0x5c; 32];
        for backend in
            registry::runnable(Algorithm::ChaCha20Poly1305, crate::cpu::features().unwrap())
        {
            let a = ChaCha20Poly1305::with_backend(&key, backend).unwrap();
            let x = XChaCha20Poly1305::with_backend(&key, backend).unwrap();
            for text in [format!("{a:?}"), format!("{x:?}")] {
                assert!(text.contains(backend.name()), "{text}");
                assert!(!text.contains("92") && !text.contains("5c"), "{text}");
            }
        }
        assert_eq!(
            ChaCha20Poly1305::new(&[0; 16]).unwrap_err(),
            Error::InvalidKeyLength {
                expected: "32",
                got: 16
            }
        );
        assert!(hchacha20(&[0; 32], &[0; 15]).is_err());
        assert!(poly1305(&[0; 31], b"").is_err());
        assert!(chacha20_xor(Backend::Soft, &[0; 32], &[0; 8], 0, &mut []).is_err());
    }

    /// Without any of its AVX-512 features the `avx512` backend steps down
    /// to `avx2` (what `HWCRYPT_CPU=-avx512ifma` or `-avx512f` select).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_steps_down_to_avx2() {
        use crate::cpu::{Feature, Features};
        let all = Features::of(&Feature::ALL);
        assert_eq!(
            registry::select(Algorithm::ChaCha20Poly1305, all),
            Backend::Avx512
        );
        for off in [
            Feature::Avx512ifma,
            Feature::Avx512f,
            Feature::Avx512vl,
            Feature::Avx512bw,
        ] {
            let rest: Vec<Feature> = Feature::ALL.into_iter().filter(|f| *f != off).collect();
            let features = Features::of(&rest);
            assert_eq!(
                registry::select(Algorithm::ChaCha20Poly1305, features),
                Backend::Avx2,
                "{off:?}"
            );
            let err = registry::check_with(Algorithm::ChaCha20Poly1305, Backend::Avx512, features)
                .unwrap_err();
            assert!(err.to_string().contains(off.name()), "{err}");
        }
    }

    #[test]
    fn length_limit() {
        assert!(check_len((MAX_PLAINTEXT_LEN) as usize).is_ok());
        assert_eq!(
            check_len(MAX_PLAINTEXT_LEN as usize + 1),
            Err(Error::MessageTooLong {
                what: "plaintext",
                limit: MAX_PLAINTEXT_LEN
            })
        );
    }
}
