//! Cipher feedback (NIST SP 800-38A 6.3) with 128-bit and 8-bit segments,
//! as streams.

use super::{block_iv, separate};
use crate::aes::{Aes, BLOCK_SIZE, Block};
use crate::error::Result;
use crate::inout::InOut;
use core::borrow::Borrow;
use zeroize::Zeroize;

/// AES-CFB128; calls of any length continue where the last stopped.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Cfb128};
/// let aes = Aes::new(&[0u8; 16])?;
/// let mut data = *b"any length";
/// Cfb128::new(&aes, &[1u8; 16])?.encrypt(&mut data);
/// Cfb128::new(&aes, &[1u8; 16])?.decrypt(&mut data);
/// assert_eq!(&data, b"any length");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct Cfb128<K = Aes> {
    aes: K,
    /// With `used == 0`: the previous ciphertext block (the IV at first).
    /// Otherwise: the encrypted register, whose first `used` bytes have
    /// already been replaced by the ciphertext bytes produced with them.
    register: Block,
    used: usize,
}

impl<K: Borrow<Aes>> Cfb128<K> {
    /// CFB128 with an expanded key and a 16-byte IV.
    pub fn new(aes: K, iv: &[u8]) -> Result<Self> {
        Ok(Cfb128 {
            aes,
            register: block_iv(iv)?,
            used: 0,
        })
    }

    /// Encrypts `buf` in place.
    pub fn encrypt(&mut self, buf: &mut [u8]) {
        self.run(InOut::InPlace(buf), Direction::Encrypt);
    }

    /// Encrypts `input` into `output` (same length).
    pub fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.run(separate(input, output)?, Direction::Encrypt);
        Ok(())
    }

    /// Decrypts `buf` in place.
    pub fn decrypt(&mut self, buf: &mut [u8]) {
        self.run(InOut::InPlace(buf), Direction::Decrypt);
    }

    /// Decrypts `input` into `output` (same length).
    pub fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.run(separate(input, output)?, Direction::Decrypt);
        Ok(())
    }

    /// XORs bytes against the encrypted register, feeding ciphertext back.
    fn bytes(&mut self, io: &mut InOut<'_>, direction: Direction) {
        for i in 0..io.len() {
            let input = io.get(i);
            let output = input ^ self.register[self.used];
            io.set(i, output);
            self.register[self.used] = match direction {
                Direction::Encrypt => output,
                Direction::Decrypt => input,
            };
            self.used += 1;
        }
        self.used %= BLOCK_SIZE;
    }

    fn run(&mut self, mut io: InOut<'_>, direction: Direction) {
        if self.used != 0 && !io.is_empty() {
            let take = (BLOCK_SIZE - self.used).min(io.len());
            let (mut head, rest) = io.split_at(take);
            self.bytes(&mut head, direction);
            io = rest;
        }
        let whole = io.len() - io.len() % BLOCK_SIZE;
        let (body, mut tail) = io.split_at(whole);
        if !body.is_empty() {
            let kernels = self.aes.borrow().kernels();
            match direction {
                Direction::Encrypt => kernels.cfb128_encrypt(&mut self.register, body),
                Direction::Decrypt => kernels.cfb128_decrypt(&mut self.register, body),
            }
        }
        if !tail.is_empty() {
            self.aes.borrow().encrypt_block(&mut self.register);
            self.bytes(&mut tail, direction);
        }
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Encrypt,
    Decrypt,
}

/// AES-CFB8: one byte per block encryption (16x the work of CFB128). Any
/// call length; state carries over.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Cfb8};
/// let aes = Aes::new(&[0u8; 16])?;
/// let mut data = *b"byte by byte";
/// Cfb8::new(&aes, &[1u8; 16])?.encrypt(&mut data);
/// Cfb8::new(&aes, &[1u8; 16])?.decrypt(&mut data);
/// assert_eq!(&data, b"byte by byte");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct Cfb8<K = Aes> {
    aes: K,
    /// The last 16 ciphertext bytes (the IV at first).
    register: Block,
}

impl<K: Borrow<Aes>> Cfb8<K> {
    /// CFB8 with an expanded key and a 16-byte IV.
    pub fn new(aes: K, iv: &[u8]) -> Result<Self> {
        Ok(Cfb8 {
            aes,
            register: block_iv(iv)?,
        })
    }

    /// Encrypts `buf` in place.
    pub fn encrypt(&mut self, buf: &mut [u8]) {
        self.run(InOut::InPlace(buf), Direction::Encrypt);
    }

    /// Encrypts `input` into `output` (same length).
    pub fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.run(separate(input, output)?, Direction::Encrypt);
        Ok(())
    }

    /// Decrypts `buf` in place.
    pub fn decrypt(&mut self, buf: &mut [u8]) {
        self.run(InOut::InPlace(buf), Direction::Decrypt);
    }

    /// Decrypts `input` into `output` (same length).
    pub fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.run(separate(input, output)?, Direction::Decrypt);
        Ok(())
    }

    fn run(&mut self, mut io: InOut<'_>, direction: Direction) {
        for i in 0..io.len() {
            let mut pad = self.register;
            self.aes.borrow().encrypt_block(&mut pad);
            let input = io.get(i);
            let output = input ^ pad[0];
            io.set(i, output);
            let ciphertext = match direction {
                Direction::Encrypt => output,
                Direction::Decrypt => input,
            };
            self.register.copy_within(1.., 0);
            self.register[BLOCK_SIZE - 1] = ciphertext;
            pad.zeroize();
        }
    }
}

impl<K> Drop for Cfb128<K> {
    fn drop(&mut self) {
        self.register.zeroize();
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Cfb128<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cfb128")
            .field("aes", self.aes.borrow())
            .finish_non_exhaustive()
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Cfb8<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cfb8")
            .field("aes", self.aes.borrow())
            .finish_non_exhaustive()
    }
}
