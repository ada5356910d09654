//! Electronic codebook: each block on its own. Leaks equal plaintext blocks;
//! here for interoperability and as a building block.

use super::{separate, whole_blocks};
use crate::aes::Aes;
use crate::error::Result;
use crate::inout::InOut;
use core::borrow::Borrow;

/// AES-ECB over whole blocks.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Ecb};
/// let ecb = Ecb::new(Aes::new(&[0u8; 16])?);
/// let mut blocks = [0u8; 32]; // whole blocks only
/// ecb.encrypt(&mut blocks)?;
/// ecb.decrypt(&mut blocks)?;
/// assert_eq!(blocks, [0u8; 32]);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ecb<K = Aes> {
    aes: K,
}

impl<K: Borrow<Aes>> Ecb<K> {
    /// ECB with an expanded key.
    pub fn new(aes: K) -> Self {
        Ecb { aes }
    }

    /// The key in use.
    pub fn aes(&self) -> &Aes {
        self.aes.borrow()
    }

    /// Encrypts `buf` in place; its length must be a multiple of 16.
    pub fn encrypt(&self, buf: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .ecb_encrypt(whole_blocks(InOut::InPlace(buf))?);
        Ok(())
    }

    /// Encrypts `input` into `output` (same length, a multiple of 16).
    pub fn encrypt_to(&self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .ecb_encrypt(whole_blocks(separate(input, output)?)?);
        Ok(())
    }

    /// Decrypts `buf` in place; its length must be a multiple of 16.
    pub fn decrypt(&self, buf: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .ecb_decrypt(whole_blocks(InOut::InPlace(buf))?);
        Ok(())
    }

    /// Decrypts `input` into `output` (same length, a multiple of 16).
    pub fn decrypt_to(&self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .ecb_decrypt(whole_blocks(separate(input, output)?)?);
        Ok(())
    }
}
