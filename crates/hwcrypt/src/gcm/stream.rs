//! Incremental AES-GCM: one message fed in pieces of any size (the shape of
//! OpenSSL's EVP and of protocols that see a record in parts).
//!
//! Whole blocks go straight to the backend's stitched CTR+GHASH kernels,
//! with the counter carried between calls; only the partial block at the
//! edge of a piece goes through a 16-byte buffer (its keystream block, and
//! the ciphertext bytes GHASH has not taken yet).
//!
//! [`AesGcmStream`] is not `Clone` (a copy would encrypt under the same
//! keystream); [`AesGcmStream::duplicate`] is the explicit, documented copy:
//!
//! ```compile_fail
//! use hwcrypt::gcm::{AesGcm, AesGcmStream};
//! let s = AesGcmStream::new(AesGcm::new(&[0u8; 16])?);
//! let copy = s.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```

use super::{AesGcm, GcmTag, MAX_AAD_LEN, MAX_IV_LEN, MAX_PLAINTEXT_LEN, check_tag_len, inc32};
use crate::aead::phase::{Phase, add_len};
use crate::aes::{BLOCK_SIZE, Block};
use crate::ct;
use crate::error::{Error, Result};
use crate::inout::InOut;
use core::borrow::Borrow;
use core::fmt;
use zeroize::Zeroize;

/// An AES-GCM message in progress: `start` it with an IV, give the
/// associated data in pieces ([`aad`](Self::aad)), then encrypt or decrypt
/// the data in pieces of any sizes, and end with [`finish`](Self::finish)
/// (encryption: returns the tag) or [`verify`](Self::verify) (decryption:
/// checks the received tag in constant time). Every split gives the bytes
/// the one-shot [`AesGcm`] gives for the whole message. A stream serves any
/// number of messages one after the other: `start` again with a fresh IV
/// (it costs one AES block for a 12-byte IV).
///
/// **Decryption releases plaintext before the tag is checked**: the pieces
/// [`decrypt`](Self::decrypt) returns are not authenticated until
/// [`verify`](Self::verify) succeeds, and a forger controls them until then.
/// This is what streaming needs (and what OpenSSL's EVP does); a caller
/// must not act on that plaintext, or must discard it when `verify` fails.
/// Callers who need "no unverified plaintext" use the one-shot
/// [`AesGcm::open_in_place_detached_with`], which zeroes its output on failure.
///
/// The key is any `K: Borrow<AesGcm>`: owned, `&AesGcm` or `Arc<AesGcm>`.
/// The tag length is bound to the stream: the key's
/// ([`AesGcm::tag_len`], 16 unless set), or one chosen with
/// [`with_tag_len`](Self::with_tag_len) / [`set_tag_len`](Self::set_tag_len).
/// `finish` returns tags of that length and `verify` accepts only tags of
/// that length, so a truncated tag cannot be slipped in. Unlike the key, a
/// stream also offers SP 800-38D's 4- and 8-byte tags, which OpenSSL's EVP
/// accepts; they are safe only under the limits of SP 800-38D Appendix C on
/// the number of messages and decryption attempts per key, which the
/// caller must enforce.
/// The message state (`E(K, J0)`, the GHASH accumulator, buffered keystream)
/// is wiped on drop; `Debug` shows only the algorithm, backend and phase.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::gcm::{AesGcm, AesGcmStream};
/// let key = AesGcm::new(&[7; 16])?;
/// let iv = [1; 12];
/// let mut stream = AesGcmStream::new(&key);
///
/// stream.start(&iv)?;
/// stream.aad(b"head")?;
/// stream.aad(b"er")?;
/// let mut msg = *b"attack at dawn, bring snacks";
/// let (a, b) = msg.split_at_mut(5);
/// stream.encrypt(a)?;
/// stream.encrypt(b)?;
/// let tag = stream.finish()?;
///
/// // The same bytes as the one-shot API.
/// let mut one_shot = *b"attack at dawn, bring snacks";
/// let tag2 = key.seal_in_place_detached(&iv, b"header", &mut one_shot)?;
/// assert_eq!((msg, tag.as_bytes()), (one_shot, &tag2[..]));
///
/// // Decrypt in other pieces; the plaintext counts only once verify succeeds.
/// stream.start(&iv)?;
/// stream.aad(b"header")?;
/// for piece in msg.chunks_mut(3) {
///     stream.decrypt(piece)?;
/// }
/// stream.verify(tag.as_bytes())?;
/// assert_eq!(&msg, b"attack at dawn, bring snacks");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct AesGcmStream<K = AesGcm> {
    key: K,
    tag_len: usize,
    phase: Phase,
    /// `E(K, J0)`, the mask of the tag.
    mask: Block,
    /// The GHASH accumulator.
    acc: Block,
    /// Counter block (big-endian integer) of the next keystream block.
    counter: u128,
    /// Associated data or ciphertext bytes GHASH has not absorbed yet (the
    /// start of a partial block): `pending[..pending_len]`.
    pending: Block,
    pending_len: usize,
    /// Keystream of the partial data block; bytes `pending_len..` unused.
    keystream: Block,
    aad_len: u64,
    text_len: u64,
}

impl<K: Borrow<AesGcm>> AesGcmStream<K> {
    /// A stream with the key's tag length ([`AesGcm::tag_len`]: 16 unless
    /// set); [`start`](Self::start) begins a message.
    pub fn new(key: K) -> Self {
        let tag_len = key.borrow().tag_len();
        AesGcmStream {
            key,
            tag_len,
            phase: Phase::Idle,
            mask: [0; BLOCK_SIZE],
            acc: [0; BLOCK_SIZE],
            counter: 0,
            pending: [0; BLOCK_SIZE],
            pending_len: 0,
            keystream: [0; BLOCK_SIZE],
            aad_len: 0,
            text_len: 0,
        }
    }

    /// A stream whose tags are `tag_len` bytes (4, 8 or 12..=16, as
    /// SP 800-38D allows; 4 and 8 only within its Appendix C limits).
    pub fn with_tag_len(key: K, tag_len: usize) -> Result<Self> {
        check_tag_len(tag_len)?;
        let mut s = AesGcmStream::new(key);
        s.tag_len = tag_len;
        Ok(s)
    }

    /// The key.
    pub fn key(&self) -> &AesGcm {
        self.key.borrow()
    }

    /// The tag length `finish` returns and `verify` expects.
    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// Changes the tag length (4, 8 or 12..=16) for the next messages; an
    /// error during a message.
    pub fn set_tag_len(&mut self, tag_len: usize) -> Result<()> {
        check_tag_len(tag_len)?;
        if self.phase != Phase::Idle {
            return Err(Error::OutOfOrder("tag length changed during a message"));
        }
        self.tag_len = tag_len;
        Ok(())
    }

    /// Starts a message under `iv` (any length of at least one byte; 12 is
    /// the fast and recommended one). Abandons a message in progress.
    pub fn start(&mut self, iv: &[u8]) -> Result<()> {
        if iv.is_empty() {
            return Err(Error::InvalidNonceLength {
                expected: "at least 1",
                got: 0,
            });
        }
        if iv.len() as u64 > MAX_IV_LEN {
            return Err(Error::MessageTooLong {
                what: "IV",
                limit: MAX_IV_LEN,
            });
        }
        let key = self.key.borrow();
        let j0 = key.j0(iv);
        self.mask = key.encrypt_counter(j0);
        self.counter = inc32(j0, 1);
        self.acc = [0; BLOCK_SIZE];
        self.pending = [0; BLOCK_SIZE];
        self.pending_len = 0;
        self.keystream = [0; BLOCK_SIZE];
        self.aad_len = 0;
        self.text_len = 0;
        self.phase = Phase::Aad;
        Ok(())
    }

    /// Adds associated data; any number of pieces, all before the data.
    pub fn aad(&mut self, aad: &[u8]) -> Result<()> {
        self.phase.check_aad()?;
        self.aad_len = add_len(self.aad_len, aad.len(), MAX_AAD_LEN, "associated data")?;
        let key = self.key.borrow();
        let mut rest = aad;
        if self.pending_len != 0 {
            let take = (BLOCK_SIZE - self.pending_len).min(rest.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&rest[..take]);
            self.pending_len += take;
            rest = &rest[take..];
            if self.pending_len < BLOCK_SIZE {
                return Ok(());
            }
            key.ghash(&mut self.acc, &self.pending);
            self.pending_len = 0;
        }
        let whole = rest.len() - rest.len() % BLOCK_SIZE;
        key.ghash(&mut self.acc, &rest[..whole]);
        let tail = &rest[whole..];
        self.pending[..tail.len()].copy_from_slice(tail);
        self.pending_len = tail.len();
        Ok(())
    }

    /// Encrypts the next piece of the message in place.
    pub fn encrypt(&mut self, buf: &mut [u8]) -> Result<()> {
        self.data(true, InOut::InPlace(buf))
    }

    /// Encrypts the next piece of the message from `input` into `output`
    /// (same length).
    pub fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.data(true, crate::modes::separate(input, output)?)
    }

    /// Decrypts the next piece of the message in place. The plaintext is
    /// not authenticated until [`verify`](Self::verify) succeeds.
    pub fn decrypt(&mut self, buf: &mut [u8]) -> Result<()> {
        self.data(false, InOut::InPlace(buf))
    }

    /// Decrypts the next piece of the message from `input` into `output`
    /// (same length). The plaintext is not authenticated until
    /// [`verify`](Self::verify) succeeds.
    pub fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.data(false, crate::modes::separate(input, output)?)
    }

    /// Ends an encrypted message (or one of associated data only) and
    /// returns its tag ([`tag_len`](Self::tag_len) bytes). The stream is
    /// then idle until the next [`start`](Self::start).
    pub fn finish(&mut self) -> Result<GcmTag> {
        self.phase.check_end(true)?;
        let mut full = self.full_tag();
        let tag = GcmTag {
            bytes: full,
            len: self.tag_len,
        };
        full.zeroize();
        Ok(tag)
    }

    /// Ends a decrypted message (or one of associated data only): compares
    /// `tag` with the computed one in constant time. `tag` must be
    /// [`tag_len`](Self::tag_len) bytes. On a mismatch the error is
    /// [`Error::AuthenticationFailed`] and the caller must discard all the
    /// plaintext of this message. The stream is then idle until the next
    /// [`start`](Self::start).
    pub fn verify(&mut self, tag: &[u8]) -> Result<()> {
        self.phase.check_end(false)?;
        if tag.len() != self.tag_len {
            return Err(Error::InvalidTagLength {
                expected: "the stream's tag length",
                got: tag.len(),
            });
        }
        let mut full = self.full_tag();
        let ok = ct::eq(&full[..self.tag_len], tag);
        full.zeroize();
        if ok {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed)
        }
    }

    /// The full 16-byte tag of the message so far; wipes the message state
    /// and makes the stream idle.
    fn full_tag(&mut self) -> Block {
        let key = self.key.borrow();
        // Associated data only, or a partial last ciphertext block: GHASH
        // takes it zero-padded.
        key.ghash(&mut self.acc, &self.pending[..self.pending_len]);
        let lengths = (u128::from(self.aad_len * 8) << 64) | u128::from(self.text_len * 8);
        key.absorb(&mut self.acc, lengths);
        let mut tag = self.mask;
        for (t, a) in tag.iter_mut().zip(&self.acc) {
            *t ^= a;
        }
        self.wipe();
        tag
    }

    fn wipe(&mut self) {
        self.mask.zeroize();
        self.acc.zeroize();
        self.pending.zeroize();
        self.keystream.zeroize();
        self.pending_len = 0;
        self.phase = Phase::Idle;
    }

    /// Encrypts (`encrypt`) or decrypts `io` (in place, or its input into
    /// its output) as the next piece: whole blocks in one pass on the
    /// kernels, the partial blocks at either end through the output.
    fn data(&mut self, encrypt: bool, io: InOut<'_>) -> Result<()> {
        let next = self.phase.data(encrypt)?;
        if io.is_empty() {
            return Ok(());
        }
        self.text_len = add_len(self.text_len, io.len(), MAX_PLAINTEXT_LEN, "plaintext")?;
        let key = self.key.borrow();
        if self.phase == Phase::Aad {
            // The end of the associated data: its partial block, zero-padded.
            key.ghash(&mut self.acc, &self.pending[..self.pending_len]);
            self.pending_len = 0;
        }
        self.phase = next;

        let mut rest = io;
        if self.pending_len != 0 {
            // Finish the partial block the last call began.
            let at = self.pending_len;
            let take = (BLOCK_SIZE - at).min(rest.len());
            let (head, tail) = rest.split_at(take);
            for ((b, k), p) in head
                .into_in_place()
                .iter_mut()
                .zip(&self.keystream[at..])
                .zip(&mut self.pending[at..])
            {
                if encrypt {
                    *b ^= k;
                    *p = *b;
                } else {
                    *p = *b;
                    *b ^= k;
                }
            }
            self.pending_len += take;
            rest = tail;
            if self.pending_len < BLOCK_SIZE {
                return Ok(());
            }
            key.ghash(&mut self.acc, &self.pending);
            self.pending_len = 0;
        }
        let whole = rest.len() - rest.len() % BLOCK_SIZE;
        let (body, tail) = rest.split_at(whole);
        if !body.is_empty() {
            if encrypt {
                key.encrypt_io(self.counter, &mut self.acc, body);
            } else {
                key.decrypt_io(self.counter, &mut self.acc, body);
            }
            self.counter = inc32(self.counter, (whole / BLOCK_SIZE) as u32);
        }
        let tail = tail.into_in_place();
        if !tail.is_empty() {
            self.keystream = key.encrypt_counter(self.counter);
            self.counter = inc32(self.counter, 1);
            for ((b, k), p) in tail.iter_mut().zip(&self.keystream).zip(&mut self.pending) {
                if encrypt {
                    *b ^= k;
                    *p = *b;
                } else {
                    *p = *b;
                    *b ^= k;
                }
            }
            self.pending_len = tail.len();
        }
        Ok(())
    }
}

impl<K: Clone> AesGcmStream<K> {
    /// A copy of the whole state, the message in progress included: what
    /// OpenSSL's `EVP_CIPHER_CTX_copy` needs. **The copy and the original share
    /// one keystream position**: if both go on encrypting, they encrypt
    /// different data under the same keystream, which reveals the XOR of the
    /// plaintexts and, for GCM, lets a forger compute the GHASH key. Use it to
    /// fork a computation (for example, finish one copy and discard the other),
    /// never to encrypt twice. (Deliberately not `Clone`, so that a copy is
    /// never made by accident.)
    ///
    /// ```
    /// use hwcrypt::gcm::{AesGcm, AesGcmStream};
    /// let mut a = AesGcmStream::new(AesGcm::new(&[1; 16])?);
    /// a.start(&[2; 12])?;
    /// a.aad(b"header")?;
    /// let mut b = a.duplicate(); // forked after the header
    /// let mut x = *b"one message";
    /// a.encrypt(&mut x)?;
    /// let tag_a = a.finish()?;
    /// drop(b.finish()?); // the other fork ends without encrypting anything
    /// # let _ = tag_a;
    /// # Ok::<(), hwcrypt::Error>(())
    /// ```
    pub fn duplicate(&self) -> Self {
        AesGcmStream {
            key: self.key.clone(),
            tag_len: self.tag_len,
            phase: self.phase,
            mask: self.mask,
            acc: self.acc,
            counter: self.counter,
            pending: self.pending,
            pending_len: self.pending_len,
            keystream: self.keystream,
            aad_len: self.aad_len,
            text_len: self.text_len,
        }
    }
}

impl<K> Drop for AesGcmStream<K> {
    fn drop(&mut self) {
        self.mask.zeroize();
        self.acc.zeroize();
        self.pending.zeroize();
        self.keystream.zeroize();
    }
}

impl<K: Borrow<AesGcm>> fmt::Debug for AesGcmStream<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AesGcmStream")
            .field("key", self.key.borrow())
            .field("tag_len", &self.tag_len)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}
