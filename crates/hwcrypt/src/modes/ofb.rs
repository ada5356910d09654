//! Output feedback (NIST SP 800-38A 6.4) as a stream.

use super::{block_iv, separate};
use crate::aes::{Aes, BLOCK_SIZE, Block};
use crate::error::Result;
use crate::inout::InOut;
use core::borrow::Borrow;
use zeroize::Zeroize;

/// AES-OFB keystream; calls of any length continue where the last stopped.
/// Encryption and decryption are the same operation.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Ofb};
/// let aes = Aes::new(&[0u8; 16])?;
/// let mut data = *b"any length";
/// Ofb::new(&aes, &[1u8; 16])?.apply_keystream(&mut data);
/// Ofb::new(&aes, &[1u8; 16])?.apply_keystream(&mut data); // its own inverse
/// assert_eq!(&data, b"any length");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct Ofb<K = Aes> {
    aes: K,
    /// The last keystream block (the IV at first).
    register: Block,
    /// Bytes of `register` already used: 0 (none pending) or 1..=15.
    used: usize,
}

impl<K: Borrow<Aes>> Ofb<K> {
    /// OFB with an expanded key and a 16-byte IV.
    pub fn new(aes: K, iv: &[u8]) -> Result<Self> {
        Ok(Ofb {
            aes,
            register: block_iv(iv)?,
            used: 0,
        })
    }

    /// XORs the keystream into `buf`.
    pub fn apply_keystream(&mut self, buf: &mut [u8]) {
        self.apply(InOut::InPlace(buf));
    }

    /// Writes `input` XOR keystream to `output` (same length).
    pub fn apply_keystream_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.apply(separate(input, output)?);
        Ok(())
    }

    fn apply(&mut self, mut io: InOut<'_>) {
        if self.used != 0 && !io.is_empty() {
            let take = (BLOCK_SIZE - self.used).min(io.len());
            let (mut head, rest) = io.split_at(take);
            head.xor_keystream(&self.register[self.used..self.used + take]);
            self.used = (self.used + take) % BLOCK_SIZE;
            io = rest;
        }
        let whole = io.len() - io.len() % BLOCK_SIZE;
        let (body, mut tail) = io.split_at(whole);
        if !body.is_empty() {
            self.aes.borrow().kernels().ofb(&mut self.register, body);
        }
        if !tail.is_empty() {
            self.aes.borrow().encrypt_block(&mut self.register);
            tail.xor_keystream(&self.register[..tail.len()]);
            self.used = tail.len();
        }
    }
}

impl<K> Drop for Ofb<K> {
    fn drop(&mut self) {
        self.register.zeroize();
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Ofb<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ofb")
            .field("aes", self.aes.borrow())
            .finish_non_exhaustive()
    }
}
