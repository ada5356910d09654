//! Incremental ChaCha20-Poly1305 ([`ChaCha20Poly1305Stream`]) and the raw
//! ChaCha20 stream cipher with OpenSSL's 16-byte IV ([`ChaCha20`]): calls
//! of any size continue where the last one stopped.
//!
//! Whole 64-byte blocks go straight to the backend's wide kernels (for the
//! AEAD, the stitched ChaCha20+Poly1305 pass of the one-shot API, with the
//! Poly1305 state carried between calls); only the partial block at the
//! edge of a piece goes through a 64-byte keystream buffer (and, for
//! Poly1305, a 16-byte buffer of the bytes not absorbed).
//!
//! Neither type is `Clone` (a copy would encrypt under the same keystream);
//! `duplicate` is the explicit, documented copy:
//!
//! ```compile_fail
//! use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, ChaCha20Poly1305Stream};
//! let s = ChaCha20Poly1305Stream::new(ChaCha20Poly1305::new(&[0u8; 32])?);
//! let copy = s.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! ```compile_fail
//! use hwcrypt::chacha20poly1305::ChaCha20;
//! let c = ChaCha20::new(&[0u8; 32], &[0u8; 16])?;
//! let copy = c.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```

use super::poly1305_soft::{BLOCK, Poly1305};
use super::{
    ChaCha20Poly1305, Engine, MAX_PLAINTEXT_LEN, PolyLanes, StateWords, chacha20_soft, key_words,
    words,
};
use crate::Backend;
use crate::aead::phase::{Phase, add_len};
use crate::aead::{Tag, full_tag, same_len};
use crate::ct;
use crate::error::{Error, Result};
use crate::inout::InOut;
use crate::secret::{SecretBox, wipe_bytes};
use core::borrow::Borrow;
use core::fmt;
use zeroize::Zeroize;

/// ChaCha20 block size in bytes.
const CHACHA_BLOCK: usize = 64;

/// Keystream bytes a stream can hold: up to eight blocks. A message starts
/// with the engine's shortest pass (1, 2 or 4 blocks, the Poly1305 key's
/// block among them); a message that goes on in short pieces (`openssl
/// speed`'s 16-byte `EVP_EncryptUpdate`s) refills by the engine's cheapest
/// pass per byte ([`Engine::bulk_refill`]).
const BUFFERED: usize = 8 * CHACHA_BLOCK;

/// Buffered keystream bytes.
#[derive(Clone, Copy)]
struct Buffered([u8; BUFFERED]);

impl Default for Buffered {
    fn default() -> Buffered {
        Buffered([0; BUFFERED])
    }
}

/// A ChaCha20 keystream position: the state of the next block and the
/// unused rest of the buffered keystream. Wiped on drop (the state holds
/// the key).
#[derive(Clone)]
struct Keystream {
    engine: Engine,
    /// Constants, key, block counter (word 12), nonce (words 13..16), on
    /// the heap (moving a `ChaCha20` or a stream copies a pointer).
    state: SecretBox<StateWords>,
    /// Buffered keystream: bytes `used..end` are still unused (`end` is
    /// a whole number of blocks, so the counter is at a block boundary);
    /// bytes `..dirty` may hold keystream (what a wipe clears).
    block: Buffered,
    used: usize,
    end: usize,
    dirty: usize,
    /// The block counter carries from word 12 into word 13 (OpenSSL's raw
    /// ChaCha20) instead of wrapping (RFC 8439, where the length limit
    /// keeps it from wrapping).
    carry: bool,
    /// Bytes of keystream one refill of the buffer makes (whole blocks,
    /// at most [`BUFFERED`]), and the shortest run of whole blocks that
    /// goes through the kernel directly instead: the engine's shortest
    /// pass at first (the first data piece of an AEAD message, the raw
    /// keystream after a new IV), its cheapest per byte
    /// ([`Engine::bulk_refill`]) after a refill or from an AEAD message's
    /// second piece on.
    refill: usize,
}

impl Keystream {
    /// A zero state, to be set in place.
    fn new(engine: Engine, carry: bool) -> Keystream {
        Keystream {
            engine,
            state: SecretBox::new(),
            block: Buffered::default(),
            used: 0,
            end: 0,
            dirty: 0,
            carry,
            refill: engine.first_pass(),
        }
    }

    /// Advances the block counter by `n` blocks, at most to the wrap
    /// (`n` <= 2^32 - counter; 2^32 from counter 0 is one whole turn: 256
    /// GiB in one call), carrying into the next word where `carry`.
    fn advance(&mut self, n: u64) {
        let s = &mut self.state.0;
        debug_assert!(n <= (1u64 << 32) - u64::from(s[12]));
        let total = u64::from(s[12]) + n;
        s[12] = total as u32;
        if total >> 32 != 0 && self.carry {
            s[13] = s[13].wrapping_add(1);
        }
    }

    /// XORs the keystream into `io`: the buffered rest first, then a
    /// pass's worth or more straight from the state, and anything shorter
    /// through a refilled buffer.
    fn apply(&mut self, mut io: InOut<'_>) {
        loop {
            if self.used < self.end && !io.is_empty() {
                let take = (self.end - self.used).min(io.len());
                let (mut head, rest) = io.split_at(take);
                head.xor_keystream(&self.block.0[self.used..self.used + take]);
                self.used += take;
                io = rest;
            }
            if io.is_empty() {
                return;
            }
            // The kernels wrap the 32-bit counter; stop at the wrap so the
            // carry (or, for the AEAD, nothing: its limit keeps below it)
            // happens here. `room` >= 1.
            let room = (1u64 << 32) - u64::from(self.state.0[12]);
            if io.len() >= self.refill.max(CHACHA_BLOCK) {
                let blocks = ((io.len() / CHACHA_BLOCK) as u64).min(room);
                let (body, rest) = io.split_at(blocks as usize * CHACHA_BLOCK);
                self.engine.xor_keystream(&self.state.0, body);
                self.advance(blocks);
                io = rest;
            } else {
                let blocks = ((self.refill / CHACHA_BLOCK) as u64).min(room) as usize;
                let fill = blocks * CHACHA_BLOCK;
                // Keystream XORed into zeroes: the bytes it overwrites are
                // the keystream used up (the rest is wiped as `dirty`).
                self.block.0[..fill].fill(0);
                self.engine
                    .xor_keystream(&self.state.0, InOut::InPlace(&mut self.block.0[..fill]));
                self.advance(blocks as u64);
                self.used = 0;
                self.end = fill;
                self.dirty = self.dirty.max(fill);
                // More than one pass's worth in short pieces: refill (and
                // take whole blocks through the buffer) by the cheapest
                // pass from now on.
                self.refill = self.engine.bulk_refill();
            }
        }
    }

    /// Unused buffered keystream bytes.
    fn buffered(&self) -> usize {
        self.end - self.used
    }

    /// Drops the buffered keystream and moves the counter back to the
    /// first unused block (whole blocks only: `used` is a block boundary).
    fn rewind(&mut self) {
        debug_assert!(self.used.is_multiple_of(CHACHA_BLOCK));
        let unused = ((self.end - self.used) / CHACHA_BLOCK) as u32;
        self.state.0[12] = self.state.0[12].wrapping_sub(unused);
        self.wipe_buffer();
    }

    /// Wipes the buffered keystream (the part ever written since the last
    /// wipe, with wide stores).
    fn wipe_buffer(&mut self) {
        wipe_bytes(&mut self.block.0[..self.dirty]);
        self.used = 0;
        self.end = 0;
        self.dirty = 0;
    }

    /// Wipes the state (it holds the key) and the buffered keystream.
    fn wipe(&mut self) {
        self.state.wipe();
        self.wipe_buffer();
    }
}

impl Engine {
    /// Bytes of keystream in the engine's shortest pass: what `start`
    /// makes (block 0 keys Poly1305) and a message's first refill.
    fn first_pass(self) -> usize {
        match self {
            Engine::Soft => CHACHA_BLOCK,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(_) => 2 * CHACHA_BLOCK,
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512(..) => 4 * CHACHA_BLOCK,
        }
    }

    /// Whether a stream makes block 0 with the first data piece instead of
    /// at `start` ([`Engine::first_piece_pass`] is larger than the
    /// shortest pass only here).
    fn defers_key(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Engine::Avx2(_) = self {
            return true;
        }
        false
    }

    /// Bytes of keystream in the pass that keys Poly1305 (block 0) when the
    /// first data piece has `n` bytes: on `avx2` the piece's blocks too
    /// while one row-layout pass (up to 6 blocks, three independent pairs:
    /// the latency of one) makes them, so a short message costs one pass,
    /// not a key pass and a data pass; else the shortest pass (a longer
    /// piece runs on the stitched kernel).
    fn first_piece_pass(self, n: usize) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(_) if n <= 5 * CHACHA_BLOCK => {
                CHACHA_BLOCK + n.next_multiple_of(CHACHA_BLOCK)
            }
            _ => self.first_pass(),
        }
    }

    /// Bytes of keystream per refill once a message goes on in more than
    /// one piece: the pass with the fewest cycles per byte that fits the
    /// buffer. On `avx2` that is the 8-block column pass (1.3 cycles/B on
    /// Zen 3, against 5.2 for the 2-block row pass, whose one dependency
    /// chain leaves the core idle); on `avx512` the 8-block row pass, whose
    /// two chains make twice the keystream of the 4-block one in the same
    /// time (with the IFMA MAC of such pieces, a stream of 256-byte pieces
    /// through the provider went from 485 to 375 TSC ticks a piece on Zen
    /// 4). Pieces of fewer whole blocks go through
    /// the buffer, longer ones through the stitched kernel. Elsewhere the
    /// shortest pass.
    fn bulk_refill(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2(_) | Engine::Avx512(..) => 8 * CHACHA_BLOCK,
            _ => self.first_pass(),
        }
    }
}

impl Drop for Keystream {
    fn drop(&mut self) {
        self.wipe();
    }
}

// ------------------------------------------------------------ raw ChaCha20

/// IV length of [`ChaCha20`]: OpenSSL's layout, a 32-bit little-endian
/// block counter then the 96-bit nonce.
pub const CHACHA20_IV_LEN: usize = 16;

/// The raw ChaCha20 stream cipher with OpenSSL's `EVP_chacha20()` IV: 16
/// bytes, the initial 32-bit block counter (little-endian) then the 96-bit
/// nonce (RFC 8439 §2.3 state words 12..16). As in OpenSSL, when the 32-bit
/// counter wraps it carries into the first nonce word. Calls of any length
/// continue where the last one stopped. No authentication: for protocols
/// that add their own (OpenSSH's `chacha20-poly1305@openssh.com`).
///
/// The key and keystream are wiped on drop; `Debug` shows only the backend.
///
/// ```
/// use hwcrypt::chacha20poly1305::ChaCha20;
/// let mut iv = [0u8; 16];
/// iv[0] = 1; // block counter 1, nonce 0
/// let mut c = ChaCha20::new(&[7; 32], &iv)?;
/// let mut data = *b"any split, any sizes";
/// let (a, b) = data.split_at_mut(3);
/// c.apply_keystream(a);
/// c.apply_keystream(b);
/// c.set_iv(&iv)?; // back to the start
/// c.apply_keystream(&mut data);
/// assert_eq!(&data, b"any split, any sizes");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct ChaCha20 {
    stream: Keystream,
}

impl ChaCha20 {
    /// A 32-byte key and a 16-byte IV on the best backend this (masked)
    /// CPU can run.
    pub fn new(key: &[u8], iv: &[u8]) -> Result<ChaCha20> {
        ChaCha20::build(key, iv, Engine::default())
    }

    /// As [`ChaCha20::new`], on the named backend.
    pub fn with_backend(key: &[u8], iv: &[u8], backend: Backend) -> Result<ChaCha20> {
        ChaCha20::build(key, iv, Engine::new(backend))
    }

    fn build(key: &[u8], iv: &[u8], engine: Result<Engine>) -> Result<ChaCha20> {
        let key = key_words(key)?;
        let engine = engine?;
        let mut c = ChaCha20 {
            stream: Keystream::new(engine, true),
        };
        chacha20_soft::set_state(&mut c.stream.state.0, &key.0, 0, &[0; 3]);
        c.set_iv(iv)?;
        Ok(c)
    }

    /// Restarts the keystream at a new 16-byte IV (same key).
    pub fn set_iv(&mut self, iv: &[u8]) -> Result<()> {
        if iv.len() != CHACHA20_IV_LEN {
            return Err(Error::InvalidIvLength {
                expected: "16",
                got: iv.len(),
            });
        }
        let iv: [u32; 4] = words(iv);
        self.stream.state.0[12..].copy_from_slice(&iv);
        self.stream.wipe_buffer();
        self.stream.refill = self.stream.engine.first_pass();
        Ok(())
    }

    /// The backend the key runs on.
    pub fn backend(&self) -> Backend {
        self.stream.engine.backend()
    }

    /// XORs the keystream into `buf`.
    pub fn apply_keystream(&mut self, buf: &mut [u8]) {
        self.stream.apply(InOut::InPlace(buf));
    }

    /// Writes `input` XOR keystream to `output` (same length).
    pub fn apply_keystream_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        same_len(input, output)?;
        self.stream.apply(InOut::Separate { input, output });
        Ok(())
    }
}

impl ChaCha20 {
    /// A copy of the whole state, the message in progress included: what
    /// OpenSSL's `EVP_CIPHER_CTX_copy` needs. **The copy and the original share
    /// one keystream position**: if both go on encrypting, they encrypt
    /// different data under the same keystream, which reveals the XOR of the
    /// plaintexts. Use it to fork a computation (for example, finish one copy
    /// and discard the other), never to encrypt twice. (Deliberately not
    /// `Clone`, so that a copy is never made by accident.)
    pub fn duplicate(&self) -> ChaCha20 {
        ChaCha20 {
            stream: self.stream.clone(),
        }
    }
}

impl fmt::Debug for ChaCha20 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaCha20")
            .field("backend", &self.backend().name())
            .finish_non_exhaustive()
    }
}

// ------------------------------------------------------- streaming AEAD

/// A ChaCha20-Poly1305 (RFC 8439) message in progress: `start` it with a
/// 12-byte nonce, give the associated data in pieces ([`aad`](Self::aad)),
/// then encrypt or decrypt the data in pieces of any sizes, and end with
/// [`finish`](Self::finish) (encryption: returns the tag) or
/// [`verify`](Self::verify) (decryption: checks the received 16-byte tag in
/// constant time). Every split gives the bytes the one-shot
/// [`ChaCha20Poly1305`] gives for the whole message. A stream serves any
/// number of messages one after the other: `start` again with a fresh nonce.
///
/// **Decryption releases plaintext before the tag is checked**: the pieces
/// [`decrypt`](Self::decrypt) returns are not authenticated until
/// [`verify`](Self::verify) succeeds, and a forger controls them until then.
/// This is what streaming needs (and what OpenSSL's EVP does); a caller
/// must not act on that plaintext, or must discard it when `verify` fails.
/// Callers who need "no unverified plaintext" use the one-shot
/// [`Aead::open_in_place_detached`](crate::aead::Aead::open_in_place_detached),
/// which zeroes its output on failure.
///
/// The key is any `K: Borrow<ChaCha20Poly1305>`: owned, borrowed or in an
/// `Arc`. The message state (ChaCha20 state, Poly1305 key and accumulator,
/// buffered keystream) is wiped on drop; `Debug` shows only the backend and
/// phase.
///
/// ```
/// use hwcrypt::aead::Aead;
/// use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, ChaCha20Poly1305Stream};
/// let key = ChaCha20Poly1305::new(&[7; 32])?;
/// let mut stream = ChaCha20Poly1305Stream::new(&key);
/// stream.start(&[9; 12])?;
/// stream.aad(b"header")?;
/// let mut msg = *b"attack at dawn";
/// for piece in msg.chunks_mut(5) {
///     stream.encrypt(piece)?;
/// }
/// let tag = stream.finish()?;
/// assert_eq!(
///     [&msg[..], &tag[..]].concat(),
///     key.seal(&[9; 12], b"header", b"attack at dawn")?
/// );
///
/// stream.start(&[9; 12])?;
/// stream.aad(b"header")?;
/// stream.decrypt(&mut msg)?;
/// stream.verify(&tag)?; // only now is the plaintext authentic
/// assert_eq!(&msg, b"attack at dawn");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct ChaCha20Poly1305Stream<K = ChaCha20Poly1305> {
    key: K,
    phase: Phase,
    /// The message in progress (meaningful unless the phase is idle). On
    /// the heap: it holds the Poly1305 key, the key powers and buffered
    /// keystream, and moving the stream (returning it from a function) must
    /// not leave copies of them in dead stack frames.
    message: Box<Message>,
}

/// The state of one message.
#[derive(Clone)]
struct Message {
    keystream: Keystream,
    poly: Poly1305,
    /// The vector Poly1305's state between pieces (the key powers).
    lanes: PolyLanes,
    /// Bytes Poly1305 has not absorbed yet (associated data or ciphertext,
    /// the start of a partial block): `pending[..pending_len]`.
    pending: [u8; BLOCK],
    pending_len: usize,
    aad_len: u64,
    text_len: u64,
    /// Whether block 0 was made and keyed `poly` (until then `pending`
    /// holds the associated data, under 16 bytes).
    keyed: bool,
}

impl Message {
    /// Absorbs `data` into Poly1305, carrying a partial block to the next call.
    fn mac(&mut self, data: &[u8]) {
        let mut rest = data;
        if self.pending_len != 0 {
            let take = (BLOCK - self.pending_len).min(rest.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&rest[..take]);
            self.pending_len += take;
            rest = &rest[take..];
            if self.pending_len < BLOCK {
                return;
            }
            self.poly.blocks(&self.pending);
            self.pending_len = 0;
        }
        let whole = rest.len() - rest.len() % BLOCK;
        if whole != 0 {
            self.keystream
                .engine
                .absorb(&mut self.poly, &mut self.lanes, &rest[..whole]);
        }
        let tail = &rest[whole..];
        self.pending[..tail.len()].copy_from_slice(tail);
        self.pending_len = tail.len();
    }

    /// Encrypts or decrypts a few bytes at the edge of a piece (inside one
    /// keystream block) through the buffers.
    fn edge(&mut self, encrypt: bool, io: InOut<'_>) {
        if io.is_empty() {
            return;
        }
        let buf = match io {
            InOut::InPlace(buf) => buf,
            InOut::Separate { input, output } => {
                output.copy_from_slice(input);
                output
            }
        };
        if encrypt {
            self.keystream.apply(InOut::InPlace(&mut *buf));
            self.mac(buf);
        } else {
            self.mac(buf);
            self.keystream.apply(InOut::InPlace(buf));
        }
    }

    /// Makes the first `pass` bytes of the message's keystream (blocks
    /// 0.., from a wiped buffer and counter 0): block 0 keys Poly1305, the
    /// rest is buffered for the data.
    ///
    /// Always inlined: out of line (without LTO, on `soft`) its frame kept
    /// a copy of the clamped `r` and `s` after it returned.
    #[inline(always)]
    fn key(&mut self, pass: usize) {
        let ks = &mut self.keystream;
        debug_assert!(ks.dirty == 0 && ks.state.0[12] == 0);
        debug_assert!(pass.is_multiple_of(CHACHA_BLOCK) && pass <= BUFFERED);
        ks.engine
            .xor_keystream(&ks.state.0, InOut::InPlace(&mut ks.block.0[..pass]));
        let mut poly_key = [0u8; 32];
        poly_key.copy_from_slice(&ks.block.0[..32]);
        // (The whole buffer is wiped again when the message ends.)
        ks.block.0[..CHACHA_BLOCK].fill(0);
        ks.dirty = ks.dirty.max(pass);
        self.poly.set_key(&poly_key);
        crate::secret::wipe_bytes(&mut poly_key);
        ks.used = CHACHA_BLOCK;
        ks.end = pass;
        ks.refill = ks.engine.first_pass();
        ks.advance((pass / CHACHA_BLOCK) as u64);
        self.keyed = true;
    }

    /// Absorbs the pending partial block, zero-padded (the end of the
    /// associated data or of the ciphertext).
    fn pad(&mut self) {
        self.poly.update_padded(&self.pending[..self.pending_len]);
        self.pending.zeroize();
        self.pending_len = 0;
    }
}

impl Message {
    /// Wipes the message state (the keystream wipes itself on drop too).
    fn wipe(&mut self) {
        self.keystream.wipe();
        self.poly.wipe();
        self.lanes.wipe();
        self.pending.zeroize();
        self.pending_len = 0;
    }
}

impl Drop for Message {
    fn drop(&mut self) {
        self.pending.zeroize();
    }
}

impl<K: Borrow<ChaCha20Poly1305>> ChaCha20Poly1305Stream<K> {
    /// A stream; [`start`](Self::start) begins a message.
    pub fn new(key: K) -> Self {
        let engine = key.borrow().core.engine;
        ChaCha20Poly1305Stream {
            key,
            phase: Phase::Idle,
            message: Box::new(Message {
                keystream: Keystream::new(engine, false),
                poly: Poly1305::new(&[0; 32]),
                lanes: PolyLanes::default(),
                pending: [0; BLOCK],
                pending_len: 0,
                aad_len: 0,
                text_len: 0,
                keyed: false,
            }),
        }
    }

    /// The key.
    pub fn key(&self) -> &ChaCha20Poly1305 {
        self.key.borrow()
    }

    /// Starts a message under a 12-byte `nonce`. Abandons a message in
    /// progress.
    pub fn start(&mut self, nonce: &[u8]) -> Result<()> {
        ChaCha20Poly1305::check_nonce(nonce)?;
        let core = &self.key.borrow().core;
        let nonce: [u32; 3] = words(nonce);
        let m = &mut self.message;
        m.wipe();
        let ks = &mut m.keystream;
        ks.engine = core.engine;
        chacha20_soft::set_state(&mut ks.state.0, &core.key.0, 0, &nonce);
        m.keyed = false;
        m.aad_len = 0;
        m.text_len = 0;
        self.phase = Phase::Aad;
        // Block 0 (the Poly1305 key): on `avx2`, later, in the pass that
        // also makes the first piece's keystream; else now (the other
        // engines have no cheaper combined pass).
        if !core.engine.defers_key() {
            m.key(core.engine.first_pass());
        }
        Ok(())
    }

    /// Adds associated data; any number of pieces, all before the data.
    pub fn aad(&mut self, aad: &[u8]) -> Result<()> {
        self.phase.check_aad()?;
        let m = &mut self.message;
        m.aad_len = add_len(m.aad_len, aad.len(), u64::MAX, "associated data")?;
        if !m.keyed {
            if m.pending_len + aad.len() < BLOCK {
                // A short header (a TLS record's 5 or 13 bytes) waits in
                // the partial block for the key.
                m.pending[m.pending_len..m.pending_len + aad.len()].copy_from_slice(aad);
                m.pending_len += aad.len();
                return Ok(());
            }
            m.key(m.keystream.engine.first_pass());
        }
        m.mac(aad);
        Ok(())
    }

    /// Encrypts the next piece of the message in place.
    pub fn encrypt(&mut self, buf: &mut [u8]) -> Result<()> {
        self.data(true, InOut::InPlace(buf))
    }

    /// Encrypts the next piece of the message from `input` into `output`
    /// (same length).
    pub fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        same_len(input, output)?;
        self.data(true, InOut::Separate { input, output })
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
        same_len(input, output)?;
        self.data(false, InOut::Separate { input, output })
    }

    /// Ends an encrypted message (or one of associated data only) and
    /// returns its 16-byte tag. The stream is then idle until the next
    /// [`start`](Self::start).
    pub fn finish(&mut self) -> Result<Tag> {
        self.phase.check_end(true)?;
        Ok(self.tag())
    }

    /// Ends a decrypted message (or one of associated data only): compares
    /// the 16-byte `tag` with the computed one in constant time. On a
    /// mismatch the error is [`Error::AuthenticationFailed`] and the caller
    /// must discard all the plaintext of this message. The stream is then
    /// idle until the next [`start`](Self::start).
    pub fn verify(&mut self, tag: &[u8]) -> Result<()> {
        self.phase.check_end(false)?;
        let tag = full_tag(tag)?;
        let mut expected = self.tag();
        let ok = ct::eq(&expected, tag);
        expected.zeroize();
        if ok {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed)
        }
    }

    /// The tag of the message; wipes it, and the stream becomes idle.
    fn tag(&mut self) -> Tag {
        self.phase = Phase::Idle;
        let m = &mut self.message;
        if !m.keyed {
            m.key(m.keystream.engine.first_pass());
        }
        m.pad();
        // In place: moving the Poly1305 out would leave a copy of its key
        // in the dead frame.
        let tag = m.poly.finish_aead(m.aad_len, m.text_len);
        m.wipe();
        tag
    }

    fn data(&mut self, encrypt: bool, io: InOut<'_>) -> Result<()> {
        let next = self.phase.data(encrypt)?;
        if io.is_empty() {
            return Ok(());
        }
        let m = &mut self.message;
        m.text_len = add_len(m.text_len, io.len(), MAX_PLAINTEXT_LEN, "plaintext")?;
        if self.phase == Phase::Aad {
            if !m.keyed {
                m.key(m.keystream.engine.first_piece_pass(io.len()));
            }
            m.pad();
        } else {
            // A second piece or later: refill by the cheapest pass.
            m.keystream.refill = m.keystream.engine.bulk_refill();
        }
        self.phase = next;
        if io.len() <= m.keystream.buffered() {
            // The whole piece from buffered keystream (runs of short pieces).
            m.edge(encrypt, io);
            return Ok(());
        }
        // The rest of the keystream block in progress (buffered: `end` is
        // a whole number of blocks).
        let used = m.keystream.used;
        let in_block = if used.is_multiple_of(CHACHA_BLOCK) {
            0
        } else {
            CHACHA_BLOCK - used % CHACHA_BLOCK
        };
        let first = in_block.min(io.len());
        let (head, rest) = io.split_at(first);
        m.edge(encrypt, head);
        // Whole buffered blocks serve a piece that fits in them, or one too
        // short for a pass of the stitched kernel; a longer piece runs on
        // that kernel from the first of them instead (the counter goes
        // back to it).
        let ks = &mut m.keystream;
        let whole = rest.len() - rest.len() % CHACHA_BLOCK;
        if ks.buffered() > 0 && rest.len() > ks.buffered() && whole >= ks.refill {
            ks.rewind();
        }
        let head = m.keystream.buffered().min(rest.len());
        let (head, rest) = rest.split_at(head);
        m.edge(encrypt, head);
        // Whole blocks through the stitched kernel when they fill at least
        // one pass of the engine; fewer go through the buffer (one pass
        // makes the keystream of several such pieces).
        let whole = rest.len() - rest.len() % CHACHA_BLOCK;
        let whole = if whole >= m.keystream.refill {
            whole
        } else {
            0
        };
        let (body, tail) = rest.split_at(whole);
        if !body.is_empty() {
            // At a keystream block boundary the text offset is a multiple
            // of 64 (block 0 is not text), so Poly1305 holds no partial
            // block.
            debug_assert_eq!(m.pending_len, 0);
            let (input, output) = match body {
                InOut::InPlace(buf) => (None, buf),
                InOut::Separate { input, output } => (Some(input), output),
            };
            let ks = &mut m.keystream;
            ks.engine.aead_blocks(
                encrypt,
                &ks.state.0,
                &mut m.poly,
                &mut m.lanes,
                input,
                output,
            );
            ks.advance((whole / CHACHA_BLOCK) as u64);
        }
        m.edge(encrypt, tail);
        Ok(())
    }
}

impl<K: Clone> ChaCha20Poly1305Stream<K> {
    /// A copy of the whole state, the message in progress included: what
    /// OpenSSL's `EVP_CIPHER_CTX_copy` needs. **The copy and the original share
    /// one keystream position**: if both go on encrypting, they encrypt
    /// different data under the same keystream, which reveals the XOR of the
    /// plaintexts and lets a forger compute the Poly1305 key. Use it to fork a
    /// computation (for example, finish one copy and discard the other), never
    /// to encrypt twice. (Deliberately not `Clone`, so that a copy is never
    /// made by accident.)
    pub fn duplicate(&self) -> Self {
        ChaCha20Poly1305Stream {
            key: self.key.clone(),
            phase: self.phase,
            message: self.message.clone(),
        }
    }
}

impl<K: Borrow<ChaCha20Poly1305>> fmt::Debug for ChaCha20Poly1305Stream<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChaCha20Poly1305Stream")
            .field("backend", &self.key.borrow().core.engine.backend().name())
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::{Engine, Keystream};

    /// Found in review (2026-11-29): one call of 2^32 blocks (256 GiB)
    /// from counter 0 advanced the counter by `2^32 as u32` = 0, so the
    /// raw ChaCha20 reused its keystream from block 0 after it.
    #[test]
    fn a_whole_turn_of_the_counter_carries() {
        for (start, n, want12, want13) in [
            (0u32, 1u64 << 32, 0u32, 1u32),
            (5, (1u64 << 32) - 5, 0, 1),
            (5, 7, 12, 0),
            (u32::MAX, 1, 0, 1),
        ] {
            for carry in [true, false] {
                let mut ks = Keystream::new(Engine::Soft, carry);
                ks.state.0[12] = start;
                ks.advance(n);
                let carried = if carry { want13 } else { 0 };
                assert_eq!(
                    (ks.state.0[12], ks.state.0[13]),
                    (want12, carried),
                    "{start} {n} {carry}"
                );
            }
        }
    }
}
