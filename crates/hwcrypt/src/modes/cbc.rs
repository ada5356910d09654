//! Cipher block chaining (NIST SP 800-38A 6.2).

use super::{block_iv, padding, separate, whole_blocks};
use crate::aes::cbc_many::{self, CbcJob};
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
                keep_message(&mut buf, len);
                Ok(buf)
            }
            Err(e) => {
                buf.zeroize();
                Err(e)
            }
        }
    }
}

/// Wipes the padding and truncates to the message (`len`, public once the
/// padding verified). Out of line so that the constant-time harness allows
/// the branches and addresses that depend on `len` here only.
#[inline(never)]
fn keep_message(buf: &mut Vec<u8>, len: usize) {
    buf[len..].zeroize();
    buf.truncate(len);
}

impl<K: Borrow<Aes>> Cbc<K> {
    /// Encrypts many independent CBC streams together, in place: each pair
    /// is a `Cbc` (its own key or a shared one, its own chaining value) and
    /// its next whole blocks. The result is exactly what [`Cbc::encrypt`]
    /// on each pair in turn gives, and each chaining value moves on the
    /// same way; but one stream's blocks are a chain that leaves the AES
    /// units idle most of the time, while here up to 8 (`aesni`) or 16
    /// (`vaes-avx2`, `vaes-avx512`) streams share them, one block
    /// of each per step. Streams may differ in length and key size; 16 or
    /// more streams of a few KiB reach about ECB's speed. See
    /// [`CbcEncryptBatch`] for separate input and output buffers.
    ///
    /// Every length is checked before any stream is touched: one that is
    /// not a multiple of 16 is an error and nothing is encrypted.
    ///
    /// ```
    /// use hwcrypt::{aes::Aes, modes::Cbc};
    /// let keys: Vec<Aes> = (0..16u8).map(|i| Aes::new(&[i; 16])).collect::<Result<_, _>>()?;
    /// let mut sessions: Vec<Cbc<&Aes>> =
    ///     keys.iter().map(|k| Cbc::new(k, &[7; 16])).collect::<Result<_, _>>()?;
    /// let mut records = vec![vec![0u8; 4096]; 16];
    /// Cbc::encrypt_many(sessions.iter_mut().zip(records.iter_mut().map(|r| &mut r[..])))?;
    ///
    /// let mut one = vec![0u8; 4096];
    /// Cbc::new(&keys[3], &[7; 16])?.encrypt(&mut one)?;
    /// assert_eq!(records[3], one);
    /// # Ok::<(), hwcrypt::Error>(())
    /// ```
    pub fn encrypt_many<'a, I>(streams: I) -> Result<()>
    where
        I: IntoIterator<Item = (&'a mut Cbc<K>, &'a mut [u8])>,
        K: 'a,
    {
        let streams = streams.into_iter();
        let mut batch = CbcEncryptBatch {
            streams: Vec::with_capacity(streams.size_hint().0),
        };
        for (cbc, buf) in streams {
            batch.push(cbc, buf)?;
        }
        batch.encrypt();
        Ok(())
    }
}

/// A set of independent CBC encryptions run together (multi-buffer), for
/// servers with many CBC sessions (SSH `aes*-cbc`, TLS 1.2 CBC suites,
/// VPNs) and disks encrypting many sectors (ESSIV-CBC): collect each
/// stream's next blocks with [`push`](Self::push) or
/// [`push_to`](Self::push_to), then [`encrypt`](Self::encrypt) them all.
/// See [`Cbc::encrypt_many`] for why this is faster than one stream after
/// another.
///
/// ```
/// use hwcrypt::{aes::Aes, modes::{Cbc, CbcEncryptBatch}};
/// let aes = Aes::new(&[1; 32])?;
/// let (mut a, mut b) = (Cbc::new(&aes, &[2; 16])?, Cbc::new(&aes, &[3; 16])?);
/// let (input_a, input_b) = ([5u8; 64], [6u8; 1024]);
/// let (mut out_a, mut out_b) = ([0u8; 64], [0u8; 1024]);
/// let mut batch = CbcEncryptBatch::new();
/// batch.push_to(&mut a, &input_a, &mut out_a)?;
/// batch.push_to(&mut b, &input_b, &mut out_b)?;
/// batch.encrypt();
/// assert_eq!(a.chaining_value(), out_a[48..]);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub struct CbcEncryptBatch<'a, K = Aes> {
    streams: Vec<(&'a mut Cbc<K>, InOut<'a>)>,
}

impl<K> Default for CbcEncryptBatch<'_, K> {
    fn default() -> Self {
        CbcEncryptBatch {
            streams: Vec::new(),
        }
    }
}

impl<'a, K: Borrow<Aes>> CbcEncryptBatch<'a, K> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `cbc`'s next blocks, encrypted in place (a multiple of 16 bytes).
    pub fn push(&mut self, cbc: &'a mut Cbc<K>, buf: &'a mut [u8]) -> Result<()> {
        self.streams.push((cbc, whole_blocks(InOut::InPlace(buf))?));
        Ok(())
    }

    /// Adds `cbc`'s next blocks, read from `input` and written to `output`
    /// (same length, a multiple of 16 bytes).
    pub fn push_to(
        &mut self,
        cbc: &'a mut Cbc<K>,
        input: &'a [u8],
        output: &'a mut [u8],
    ) -> Result<()> {
        self.streams
            .push((cbc, whole_blocks(separate(input, output)?)?));
        Ok(())
    }

    /// Streams added so far.
    pub fn len(&self) -> usize {
        self.streams.len()
    }

    /// Whether no stream was added.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
    }

    /// Encrypts every stream; each `Cbc`'s chaining value moves past its blocks.
    pub fn encrypt(self) {
        let bytes: usize = self.streams.iter().map(|(_, io)| io.len()).sum();
        if bytes < cbc_many::SERIAL_BELOW * self.streams.len() {
            // Short streams: one by one is faster (see `SERIAL_BELOW`).
            for (cbc, io) in self.streams {
                cbc.aes.borrow().kernels().cbc_encrypt(&mut cbc.chain, io);
            }
            return;
        }
        cbc_many::encrypt_many(self.streams.into_iter().map(|(cbc, io)| {
            let Cbc { aes, chain } = cbc;
            CbcJob {
                aes: (*aes).borrow(),
                chain,
                io,
            }
        }));
    }
}

impl<K> core::fmt::Debug for CbcEncryptBatch<'_, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CbcEncryptBatch")
            .field("streams", &self.streams.len())
            .finish_non_exhaustive()
    }
}

impl<K: Borrow<Aes>> core::fmt::Debug for Cbc<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cbc")
            .field("aes", self.aes.borrow())
            .finish_non_exhaustive()
    }
}
