//! Counter mode (NIST SP 800-38A 6.5) as a seekable stream.

use super::{block_iv, separate};
use crate::aes::{Aes, BLOCK_SIZE, Block, CounterWidth};
use crate::error::{Error, Result};
use crate::inout::InOut;
use core::borrow::Borrow;
use zeroize::Zeroize;

/// AES-CTR keystream. Calls of any length continue where the last stopped;
/// [`Ctr::seek`] jumps to any byte offset. Encryption and decryption are the
/// same operation, [`Ctr::apply_keystream`].
///
/// A call that would take the counter past its width, which would repeat
/// keystream, fails with [`Error::KeystreamExhausted`] and leaves the buffer
/// as it was: with [`CounterWidth::Low32`] a counter serves 2^32 blocks
/// (64 GiB) from its initial value; with [`CounterWidth::Full128`] the limit
/// is the byte position 2^128 - 1.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Ctr};
/// let mut ctr = Ctr::new(Aes::new(&[0u8; 16])?, &[0u8; 16])?;
/// let mut data = *b"any length, any split";
/// ctr.apply_keystream(&mut data[..5])?;
/// ctr.apply_keystream(&mut data[5..])?;
/// ctr.seek(0); // back to the start: CTR is its own inverse
/// ctr.apply_keystream(&mut data)?;
/// assert_eq!(&data, b"any length, any split");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct Ctr<K = Aes> {
    aes: K,
    width: CounterWidth,
    /// Counter block of byte offset 0.
    initial: Block,
    /// Counter block of the next keystream block to generate.
    counter: Block,
    /// The current keystream block; bytes `[used..]` are still unused.
    keystream: Block,
    /// 0 when no partial keystream block is pending, else 1..=15.
    used: usize,
    /// Byte offset of the next byte.
    position: u128,
}

impl<K: Borrow<Aes>> Ctr<K> {
    /// CTR whose 16-byte initial counter block is one big-endian 128-bit
    /// integer that carries across all 128 bits (SP 800-38A, SSH `aes*-ctr`).
    pub fn new(aes: K, initial_counter: &[u8]) -> Result<Self> {
        Ctr::with_width(aes, initial_counter, CounterWidth::Full128)
    }

    /// CTR with an explicit counter width, e.g. [`CounterWidth::Low32`] for
    /// GCM-style counters that wrap in the last 4 bytes.
    pub fn with_width(aes: K, initial_counter: &[u8], width: CounterWidth) -> Result<Self> {
        let initial = block_iv(initial_counter)?;
        Ok(Ctr {
            aes,
            width,
            initial,
            counter: initial,
            keystream: [0; BLOCK_SIZE],
            used: 0,
            position: 0,
        })
    }

    /// Starts over at `initial_counter` with the same key, as a new `Ctr`
    /// would: position 0, no partial keystream block pending. A connection
    /// that sends one message per IV keeps one `Ctr` and restarts it.
    ///
    /// ```
    /// use hwcrypt::{aes::Aes, modes::Ctr};
    /// let mut ctr = Ctr::new(Aes::new(&[1u8; 16])?, &[0u8; 16])?;
    /// let mut a = [0u8; 20];
    /// ctr.apply_keystream(&mut a)?;
    /// ctr.restart(&[9u8; 16])?;
    /// let mut b = [0u8; 20];
    /// ctr.apply_keystream(&mut b)?;
    /// let mut fresh = Ctr::new(Aes::new(&[1u8; 16])?, &[9u8; 16])?;
    /// let mut c = [0u8; 20];
    /// fresh.apply_keystream(&mut c)?;
    /// assert_eq!(b, c);
    /// # Ok::<(), hwcrypt::Error>(())
    /// ```
    pub fn restart(&mut self, initial_counter: &[u8]) -> Result<()> {
        let initial = block_iv(initial_counter)?;
        self.initial = initial;
        self.counter = initial;
        self.used = 0;
        self.position = 0;
        Ok(())
    }

    /// XORs the keystream into `buf`; [`Error::KeystreamExhausted`] (and
    /// `buf` untouched) where that would repeat keystream.
    pub fn apply_keystream(&mut self, buf: &mut [u8]) -> Result<()> {
        self.check_room(buf.len())?;
        self.apply(InOut::InPlace(buf));
        Ok(())
    }

    /// Writes `input` XOR keystream to `output` (same length); errors as
    /// [`Ctr::apply_keystream`].
    pub fn apply_keystream_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        let io = separate(input, output)?;
        self.check_room(io.len())?;
        self.apply(io);
        Ok(())
    }

    /// Bytes of keystream a counter of this width serves before it repeats
    /// (`None`: more than a `u128` byte position can name).
    fn keystream_limit(&self) -> Option<u128> {
        match self.width {
            CounterWidth::Low32 => Some((1u128 << 32) * BLOCK_SIZE as u128),
            CounterWidth::Full128 => None,
        }
    }

    /// Fails if `len` more bytes from the current position would pass the
    /// end of the keystream (the counter wrapping onto blocks already used).
    fn check_room(&self, len: usize) -> Result<()> {
        // Nothing to produce uses no keystream, wherever the position is
        // (a seek may go past the end of a 32-bit counter's keystream).
        if len == 0 {
            return Ok(());
        }
        let end = self
            .position
            .checked_add(len as u128)
            .ok_or(Error::KeystreamExhausted)?;
        match self.keystream_limit() {
            Some(limit) if end > limit => Err(Error::KeystreamExhausted),
            _ => Ok(()),
        }
    }

    /// Moves to byte `offset` of the keystream (relative to the initial counter).
    pub fn seek(&mut self, offset: u128) {
        self.counter = self.initial;
        self.width
            .add(&mut self.counter, offset / BLOCK_SIZE as u128);
        self.used = (offset % BLOCK_SIZE as u128) as usize;
        if self.used != 0 {
            self.next_keystream_block();
        }
        self.position = offset;
    }

    /// Byte offset of the next keystream byte.
    pub fn position(&self) -> u128 {
        self.position
    }

    /// The counter block of the next keystream block to be generated.
    pub fn next_counter(&self) -> Block {
        self.counter
    }

    fn next_keystream_block(&mut self) {
        self.keystream = [0; BLOCK_SIZE];
        let kernels = self.aes.borrow().kernels();
        kernels.ctr(
            &mut self.counter,
            self.width,
            InOut::InPlace(&mut self.keystream),
        );
    }

    /// Inlined into its callers: a short call (an OpenSSL provider's
    /// 16-byte update) pays for one function layer fewer.
    #[inline(always)]
    fn apply(&mut self, io: InOut<'_>) {
        let len = io.len();
        if self.used == 0 && len.is_multiple_of(BLOCK_SIZE) {
            // Whole blocks from a block boundary (every call of a caller
            // that keeps to blocks, e.g. one message per Ctr): straight to
            // the kernel, none of the partial-block bookkeeping.
            if len != 0 {
                self.aes
                    .borrow()
                    .kernels()
                    .ctr(&mut self.counter, self.width, io);
            }
            // check_room made sure this does not overflow.
            self.position += len as u128;
            return;
        }
        self.apply_partial(io);
    }

    /// [`Ctr::apply`] when a keystream block is partly used or `io` ends
    /// inside one.
    #[inline(never)]
    fn apply_partial(&mut self, mut io: InOut<'_>) {
        let len = io.len();
        if self.used != 0 && len != 0 {
            let take = (BLOCK_SIZE - self.used).min(io.len());
            let (mut head, rest) = io.split_at(take);
            head.xor_keystream(&self.keystream[self.used..self.used + take]);
            self.used = (self.used + take) % BLOCK_SIZE;
            io = rest;
        }
        let whole = io.len() - io.len() % BLOCK_SIZE;
        let (body, mut tail) = io.split_at(whole);
        if !body.is_empty() {
            self.aes
                .borrow()
                .kernels()
                .ctr(&mut self.counter, self.width, body);
        }
        if !tail.is_empty() {
            self.next_keystream_block();
            tail.xor_keystream(&self.keystream[..tail.len()]);
            self.used = tail.len();
        }
        // check_room made sure this does not overflow.
        self.position += len as u128;
    }
}

impl<K: Clone> Ctr<K> {
    /// A copy of the whole state: what OpenSSL's `EVP_CIPHER_CTX_copy`
    /// needs. **The copy and the original share one keystream position**:
    /// if both go on encrypting, they encrypt different data under the same
    /// keystream, which reveals the XOR of the plaintexts. Use it to fork a
    /// computation (finish one copy and discard the other), never to
    /// encrypt twice. (Deliberately not `Clone`, so that a copy is never
    /// made by accident.)
    pub fn duplicate(&self) -> Self {
        Ctr {
            aes: self.aes.clone(),
            width: self.width,
            initial: self.initial,
            counter: self.counter,
            keystream: self.keystream,
            used: self.used,
            position: self.position,
        }
    }
}

impl Ctr<Aes> {
    /// Replaces the key in place ([`Aes::rekey`]: no allocation). The
    /// keystream goes on from the next counter block under the new key,
    /// which becomes position 0 (a partial keystream block still pending
    /// under the old key is dropped).
    ///
    /// ```
    /// use hwcrypt::{aes::Aes, modes::Ctr};
    /// let mut ctr = Ctr::new(Aes::new(&[1u8; 16])?, &[0u8; 16])?;
    /// let mut a = [0u8; 20]; // two blocks made, 12 bytes left unused
    /// ctr.apply_keystream(&mut a)?;
    /// ctr.rekey(&[2u8; 32])?;
    /// assert_eq!(ctr.next_counter()[15], 2);
    /// let mut b = [0u8; 16];
    /// ctr.apply_keystream(&mut b)?;
    /// let mut counter = [0u8; 16];
    /// counter[15] = 2;
    /// let mut c = [0u8; 16];
    /// Ctr::new(Aes::new(&[2u8; 32])?, &counter)?.apply_keystream(&mut c)?;
    /// assert_eq!(b, c);
    /// # Ok::<(), hwcrypt::Error>(())
    /// ```
    pub fn rekey(&mut self, key: &[u8]) -> Result<()> {
        self.aes.rekey(key)?;
        let next = self.counter;
        self.restart(&next)
    }
}

impl<K> Drop for Ctr<K> {
    fn drop(&mut self) {
        self.keystream.zeroize();
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Ctr<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ctr")
            .field("aes", self.aes.borrow())
            .field("width", &self.width)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}
