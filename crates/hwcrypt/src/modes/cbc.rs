//! Cipher block chaining (NIST SP 800-38A 6.2).

use super::{block_iv, padding, separate, whole_blocks};
use crate::aes::{Aes, BLOCK_SIZE, Block};
use crate::error::Result;
use crate::inout::InOut;
use core::borrow::Borrow;
use zeroize::Zeroize;

/// AES-CBC over whole blocks. The chaining value (the last ciphertext block)
/// is kept, so a message may be passed in several calls of whole blocks.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::Cbc};
/// let aes = Aes::new(&[0u8; 16])?;
/// let ciphertext = Cbc::new(&aes, &[1u8; 16])?.encrypt_padded(b"hello"); // PKCS#7
/// assert_eq!(Cbc::new(&aes, &[1u8; 16])?.decrypt_padded(&ciphertext)?, b"hello");
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct Cbc<K = Aes> {
    aes: K,
    chain: Block,
}

impl<K: Borrow<Aes>> Cbc<K> {
    /// CBC with an expanded key and a 16-byte IV.
    pub fn new(aes: K, iv: &[u8]) -> Result<Self> {
        Ok(Cbc {
            aes,
            chain: block_iv(iv)?,
        })
    }

    /// The chaining value: the last ciphertext block processed (the IV at first).
    pub fn chaining_value(&self) -> Block {
        self.chain
    }

    /// Encrypts `buf` in place; its length must be a multiple of 16.
    pub fn encrypt(&mut self, buf: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .cbc_encrypt(&mut self.chain, whole_blocks(InOut::InPlace(buf))?);
        Ok(())
    }

    /// Encrypts `input` into `output` (same length, a multiple of 16).
    pub fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .cbc_encrypt(&mut self.chain, whole_blocks(separate(input, output)?)?);
        Ok(())
    }

    /// Decrypts `buf` in place; its length must be a multiple of 16.
    pub fn decrypt(&mut self, buf: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .cbc_decrypt(&mut self.chain, whole_blocks(InOut::InPlace(buf))?);
        Ok(())
    }

    /// Decrypts `input` into `output` (same length, a multiple of 16).
    pub fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.aes
            .borrow()
            .kernels()
            .cbc_decrypt(&mut self.chain, whole_blocks(separate(input, output)?)?);
        Ok(())
    }

    /// Pads `plaintext` with PKCS#7 and encrypts it: a whole message.
    pub fn encrypt_padded(&mut self, plaintext: &[u8]) -> Vec<u8> {
        // One allocation at the padded size, so padding never grows (and
        // reallocates, freeing an unwiped copy of) the plaintext.
        let mut buf = Vec::with_capacity((plaintext.len() / BLOCK_SIZE + 1) * BLOCK_SIZE);
        buf.extend_from_slice(plaintext);
        padding::pkcs7_pad(&mut buf, BLOCK_SIZE).expect("16 is a valid block size");
        self.aes
            .borrow()
            .kernels()
            .cbc_encrypt(&mut self.chain, InOut::InPlace(&mut buf));
        buf
    }

    /// Decrypts a whole PKCS#7-padded message and removes the padding.
    /// A bad padding is [`Error::BadPadding`](crate::Error::BadPadding), and
    /// the decrypted bytes are wiped before it is returned. Either way the
    /// chaining value has moved past the ciphertext, as after [`Cbc::decrypt`].
    ///
    /// CBC alone does not authenticate: a padding error reveals something
    /// about the plaintext to whoever can observe it. Use an AEAD for data an
    /// attacker can modify.
    pub fn decrypt_padded(&mut self, ciphertext: &[u8]) -> Result<Vec<u8>> {
        let mut buf = vec![0; ciphertext.len()];
        self.decrypt_to(ciphertext, &mut buf)?;
        match padding::pkcs7_unpad(&buf, BLOCK_SIZE) {
            Ok(message) => {
                let len = message.len();
                buf[len..].zeroize();
                buf.truncate(len);
                Ok(buf)
            }
            Err(e) => {
                buf.zeroize();
                Err(e)
            }
        }
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Cbc<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cbc")
            .field("aes", self.aes.borrow())
            .finish_non_exhaustive()
    }
}
