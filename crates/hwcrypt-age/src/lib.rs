//! hwcrypt-age: the age v1 file encryption format (C2SP `age.md`) with
//! hwcrypt's ChaCha20-Poly1305 for the payload.
//!
//! A file is a header (the file key wrapped to each recipient, and a MAC
//! under that key) followed by a 16-byte nonce and the payload: the STREAM
//! of [`hwcrypt::stream`] under HKDF-SHA256(file key, nonce, "payload").
//! Recipients: X25519 ([`X25519Recipient`], `age1...`), passphrases
//! ([`ScryptRecipient`]), SSH keys ([`SshRecipient`]: `ssh-ed25519`,
//! `ssh-rsa`), age 1.3's post-quantum hybrid ([`HybridRecipient`],
//! `age1pq1...`: ML-KEM-768 + X25519); optional ASCII armor ([`armor`]).
//!
//! ```
//! use hwcrypt_age::{Decryptor, Encryptor, X25519Identity};
//! use std::io::{Read, Write};
//! let identity = X25519Identity::generate()?;
//! let encryptor = Encryptor::with_recipients(vec![Box::new(identity.to_public())])?;
//! let mut writer = encryptor.wrap_output(Vec::new())?;
//! writer.write_all(b"attack at dawn")?;
//! let file = writer.finish()?;
//!
//! let decryptor = Decryptor::new(&file[..])?;
//! let mut reader = decryptor.decrypt(&[&identity])?;
//! let mut plain = Vec::new();
//! reader.read_to_end(&mut plain)?;
//! assert_eq!(plain, b"attack at dawn");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The parsers take bytes or strings and are public for fuzzing:
//! [`format::parse_header`], [`armor::decode_armor`],
//! [`keys::parse_recipient`], [`keys::parse_identity_file`].

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod armor;
mod error;
pub mod format;
pub mod keys;
mod locked;
mod pq;
pub mod primitives;
mod scrypt;
mod ssh;
mod x25519;

pub use error::{Error, Result};
pub use format::{Header, Stanza};
pub use locked::{
    EncryptedIdentityFile, EncryptedPemIdentity, EncryptedSshIdentity, PassphraseSource,
};
pub use pq::{HybridIdentity, HybridRecipient};
pub use primitives::FileKey;
pub use scrypt::{DEFAULT_LOG_N, MAX_LOG_N, ScryptIdentity, ScryptRecipient};
pub use ssh::{SshIdentity, SshRecipient};
pub use x25519::{X25519Identity, X25519Recipient};

use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
pub use hwcrypt::stream::ReadAt;
use hwcrypt::stream::{StreamDecryptor, StreamEncryptor};
use std::io::{BufRead, Read, Write};

/// Something a file key can be wrapped to.
pub trait Recipient: Send + Sync + core::fmt::Debug {
    /// Wraps `file_key` into stanzas for this recipient.
    fn wrap(&self, file_key: &FileKey) -> Result<Vec<Stanza>>;

    /// Whether it must be the file's only recipient (passphrases).
    fn exclusive(&self) -> bool {
        false
    }

    /// Whether it resists a quantum computer (mlkem768x25519). Such
    /// recipients are not mixed with classic ones: the file key would be
    /// no safer than the weakest stanza.
    fn post_quantum(&self) -> bool {
        false
    }
}

/// Something that can unwrap file keys.
pub trait Identity: Send + Sync + core::fmt::Debug {
    /// `None`: the stanza is not for this identity. `Some(Err)`: it is of
    /// this identity's type but malformed (the whole file is rejected).
    /// `Some(Ok)`: the file key.
    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>>;

    /// The recipients files to this identity are encrypted to (age's
    /// `-e -i`): the public key of an age or SSH identity. A
    /// passphrase-protected identity file is opened for it; a passphrase
    /// has none.
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Err(Error::key("this identity has no recipient to encrypt to"))
    }
}

/// Encrypts to a set of recipients.
#[derive(Debug)]
pub struct Encryptor {
    recipients: Vec<Box<dyn Recipient>>,
}

impl Encryptor {
    /// An encryptor for `recipients` (at least one; a passphrase only
    /// alone; post-quantum recipients only with each other, as age 1.3).
    pub fn with_recipients(recipients: Vec<Box<dyn Recipient>>) -> Result<Encryptor> {
        if recipients.is_empty() {
            return Err(Error::key("no recipients"));
        }
        if recipients.len() > 1 && recipients.iter().any(|r| r.exclusive()) {
            return Err(Error::key(
                "a passphrase cannot be combined with other recipients",
            ));
        }
        let post_quantum = recipients.iter().filter(|r| r.post_quantum()).count();
        if post_quantum != 0 && post_quantum != recipients.len() {
            return Err(Error::key(
                "post-quantum (age1pq1...) and classic recipients cannot be mixed: the file would not resist a quantum computer",
            ));
        }
        Ok(Encryptor { recipients })
    }

    /// An encryptor for one passphrase (scrypt, work factor 2^18).
    pub fn with_passphrase(passphrase: zeroize::Zeroizing<String>) -> Encryptor {
        Encryptor {
            recipients: vec![Box::new(ScryptRecipient::new(passphrase))],
        }
    }

    /// A new file key, the header and the payload nonce; returns the bytes
    /// to write first and the payload key.
    fn start(&self) -> Result<(Vec<u8>, ChaCha20Poly1305)> {
        let file_key = primitives::new_file_key()?;
        let mut stanzas = Vec::new();
        for r in &self.recipients {
            stanzas.extend(r.wrap(&file_key)?);
        }
        let mut head = format::write_header(&stanzas, &file_key);
        if head.len() > format::MAX_HEADER_LEN {
            return Err(Error::key(
                "too many recipients: the header would be longer than 16 MiB (more than a file may have to decrypt)",
            ));
        }
        let mut nonce = [0u8; 16];
        primitives::fill_random(&mut nonce)?;
        head.extend_from_slice(&nonce);
        Ok((head, primitives::payload_key(&file_key, &nonce)?))
    }

    /// Writes the header to `output` and returns the payload writer; call
    /// [`StreamEncryptor::finish`] at the end (dropped without it, the file
    /// is truncated and will not decrypt).
    pub fn wrap_output<W: Write>(
        &self,
        mut output: W,
    ) -> Result<StreamEncryptor<ChaCha20Poly1305, W>> {
        let (head, key) = self.start()?;
        output.write_all(&head)?;
        Ok(StreamEncryptor::new(key, output))
    }

    /// Encrypts all of `input` into `output` on `threads` threads (chunks
    /// in parallel, a bounded window in flight, output in order); returns
    /// the bytes written.
    pub fn encrypt_parallel<R: Read + Send, W: Write + Send>(
        &self,
        input: R,
        mut output: W,
        threads: usize,
    ) -> Result<u64> {
        let (head, key) = self.start()?;
        output.write_all(&head)?;
        let n = hwcrypt::stream::seal_parallel(&key, input, output, threads)?;
        Ok(head.len() as u64 + n)
    }

    /// [`encrypt_parallel`](Self::encrypt_parallel) of the bytes of `input`
    /// from `offset` to its end, each thread reading its own chunks at
    /// their offsets (a [`File`](std::fs::File): `pread`, no lock between
    /// the threads); the form for a regular file.
    pub fn encrypt_parallel_at<I: ReadAt + ?Sized, W: Write + Send>(
        &self,
        input: &I,
        offset: u64,
        mut output: W,
        threads: usize,
    ) -> Result<u64> {
        let (head, key) = self.start()?;
        output.write_all(&head)?;
        let n = hwcrypt::stream::seal_parallel_at(&key, input, offset, output, threads)?;
        Ok(head.len() as u64 + n)
    }
}

/// Reads an age file: the header first, then (with an identity) the payload.
#[derive(Debug)]
pub struct Decryptor<R: BufRead> {
    header: Header,
    /// Bytes the header took, through its MAC line.
    header_len: usize,
    input: R,
}

impl<R: BufRead> Decryptor<R> {
    /// Reads and parses the header (binary age; see [`armor`] for armored
    /// input).
    pub fn new(mut input: R) -> Result<Decryptor<R>> {
        let (header, header_len) = format::read_header_counted(&mut input)?;
        // Checked here, before any identity or passphrase is asked for.
        if header.stanzas.len() > 1 && header.stanzas.iter().any(|s| s.tag == "scrypt") {
            return Err(Error::header(
                "a passphrase (scrypt) stanza must be the only stanza",
            ));
        }
        Ok(Decryptor {
            header,
            header_len,
            input,
        })
    }

    /// The header's stanzas.
    pub fn stanzas(&self) -> &[Stanza] {
        &self.header.stanzas
    }

    /// Whether the file is passphrase-encrypted.
    pub fn is_passphrase(&self) -> bool {
        self.header.stanzas.iter().any(|s| s.tag == "scrypt")
    }

    /// Unwraps the file key with the first identity (in order) that opens
    /// any stanza, and checks the header MAC. Identities are tried in turn
    /// on every stanza, as age does, so a passphrase-protected identity
    /// after one that opens the file is never asked for its passphrase.
    pub fn unwrap_file_key(&self, identities: &[&dyn Identity]) -> Result<FileKey> {
        let stanzas = &self.header.stanzas;
        if self.is_passphrase() && stanzas.len() != 1 {
            return Err(Error::header(
                "a passphrase (scrypt) stanza must be the only stanza",
            ));
        }
        for identity in identities {
            for stanza in stanzas {
                match identity.unwrap(stanza) {
                    None => {}
                    Some(Err(e)) => return Err(e),
                    Some(Ok(file_key)) => {
                        self.header.verify_mac(&file_key)?;
                        return Ok(file_key);
                    }
                }
            }
        }
        Err(Error::NoMatch)
    }

    /// Reads the payload nonce and derives the payload key.
    fn payload_key(&mut self, file_key: &FileKey) -> Result<ChaCha20Poly1305> {
        let mut nonce = [0u8; 16];
        let got = read_full(&mut self.input, &mut nonce)?;
        if got < 16 {
            return Err(Error::header("file ends before the payload nonce"));
        }
        primitives::payload_key(file_key, &nonce)
    }

    /// Unwraps the file key and returns the payload reader (a chunk is
    /// released only once it verified; the reader fails on any tampering).
    pub fn decrypt(
        mut self,
        identities: &[&dyn Identity],
    ) -> Result<StreamDecryptor<ChaCha20Poly1305, R>> {
        let file_key = self.unwrap_file_key(identities)?;
        let key = self.payload_key(&file_key)?;
        Ok(StreamDecryptor::new(key, self.input))
    }

    /// Unwraps the file key and decrypts the payload into `output` on
    /// `threads` threads, in order; returns the plaintext bytes written.
    /// On failure, the verified chunks before the bad one have been written.
    pub fn decrypt_parallel<W: Write + Send>(
        mut self,
        identities: &[&dyn Identity],
        output: W,
        threads: usize,
    ) -> Result<u64>
    where
        R: Send,
    {
        let file_key = self.unwrap_file_key(identities)?;
        let key = self.payload_key(&file_key)?;
        Ok(hwcrypt::stream::open_parallel(
            &key, self.input, output, threads,
        )?)
    }

    /// [`decrypt_parallel`](Self::decrypt_parallel) with the payload read
    /// from `input` at offsets, each thread reading its own chunks (a
    /// [`File`](std::fs::File): `pread`, no lock between the threads).
    /// `input` holds the binary age file this decryptor read its header
    /// from, starting at `offset` (the payload nonce and payload follow the
    /// header there); bytes this decryptor's reader buffered past the
    /// header are not used.
    pub fn decrypt_parallel_at<I: ReadAt + ?Sized, W: Write + Send>(
        self,
        identities: &[&dyn Identity],
        input: &I,
        offset: u64,
        output: W,
        threads: usize,
    ) -> Result<u64> {
        let file_key = self.unwrap_file_key(identities)?;
        let past = || Error::header("the file's offsets run past 2^64 - 1");
        let at = offset
            .checked_add(self.header_len as u64)
            .ok_or_else(past)?;
        let payload = at.checked_add(16).ok_or_else(past)?;
        let mut nonce = [0u8; 16];
        if input.read_full_at(&mut nonce, at)? < nonce.len() {
            return Err(Error::header("file ends before the payload nonce"));
        }
        let key = primitives::payload_key(&file_key, &nonce)?;
        Ok(hwcrypt::stream::open_parallel_at(
            &key, input, payload, output, threads,
        )?)
    }
}

fn read_full<R: Read>(src: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
