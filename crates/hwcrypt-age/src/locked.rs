//! Passphrase-protected identities, opened the first time a stanza needs
//! them (as age does: a file that one of several identities opens asks for
//! no passphrase of the others):
//!
//! * [`EncryptedSshIdentity`]: an OpenSSH private key encrypted by
//!   `ssh-keygen` (bcrypt-pbkdf, then AES-CTR or AES-CBC). The key file's
//!   public half says which stanzas are for it, so the passphrase is asked
//!   for only when one is. The AES is hwcrypt's.
//! * [`EncryptedPemIdentity`]: a PKCS#1 RSA key in OpenSSL's legacy PEM
//!   encryption (`ssh-keygen -m PEM -N ...`; MD5 key derivation, then
//!   AES-CBC). The file holds no public key: as age, the key's `.pub` file
//!   gives it. The AES is hwcrypt's.
//! * [`EncryptedIdentityFile`]: an identity file that is itself an age file
//!   encrypted with a passphrase (`age -p key.txt > key.age`), binary or
//!   armored; asked for at the first stanza any identity could open.

use crate::error::{Error, Result};
use crate::format::Stanza;
use crate::primitives::FileKey;
use crate::scrypt::ScryptIdentity;
use crate::ssh::{SshIdentity, SshRecipient, key_tag, parse_openssh, pem_parts, stanza_id};
use crate::{Decryptor, Identity, Recipient, armor, keys};
use core::fmt;
use hwcrypt::aes::Aes;
use hwcrypt::modes::{Cbc, Ctr};
use ssh_encoding::Decode;
use ssh_key::private::KeypairData;
use ssh_key::public::KeyData;
use ssh_key::{Cipher, Kdf, PrivateKey};
use std::io::Read;
use std::sync::OnceLock;
use zeroize::Zeroizing;

/// Gives the passphrase of a passphrase-protected identity; called only
/// when the identity is needed, at most once per identity that opens.
pub type PassphraseSource = Box<dyn Fn() -> Result<Zeroizing<String>> + Send + Sync>;

/// How a passphrase-protected OpenSSH key's private section is encrypted.
#[derive(Clone, Copy)]
enum SshKeyCipher {
    Ctr(usize),
    Cbc(usize),
}

impl SshKeyCipher {
    fn of(cipher: Cipher) -> Result<SshKeyCipher> {
        Ok(match cipher {
            Cipher::Aes128Ctr => SshKeyCipher::Ctr(16),
            Cipher::Aes192Ctr => SshKeyCipher::Ctr(24),
            Cipher::Aes256Ctr => SshKeyCipher::Ctr(32),
            Cipher::Aes128Cbc => SshKeyCipher::Cbc(16),
            Cipher::Aes192Cbc => SshKeyCipher::Cbc(24),
            Cipher::Aes256Cbc => SshKeyCipher::Cbc(32),
            other => {
                return Err(Error::key(format!(
                    "OpenSSH key encrypted with {} is not supported (aes*-ctr, ssh-keygen's \
                     default, and aes*-cbc are; `ssh-keygen -p -Z aes256-ctr` re-encrypts it)",
                    other.as_str()
                )));
            }
        })
    }

    fn key_len(self) -> usize {
        match self {
            SshKeyCipher::Ctr(n) | SshKeyCipher::Cbc(n) => n,
        }
    }
}

/// A passphrase-protected OpenSSH private key (`ssh-ed25519` or `ssh-rsa`)
/// as an identity; decrypted the first time a stanza for its public key is
/// found.
pub struct EncryptedSshIdentity {
    key: PrivateKey,
    cipher: SshKeyCipher,
    salt: Vec<u8>,
    rounds: u32,
    kind: &'static str,
    /// The public key blob, and its tag (which stanzas are for the key).
    blob: Vec<u8>,
    tag: String,
    passphrase: PassphraseSource,
    opened: OnceLock<SshIdentity>,
}

impl EncryptedSshIdentity {
    /// Parses a passphrase-protected OpenSSH private key file; `passphrase`
    /// is called when a stanza for the key is found. The key type, cipher
    /// and KDF are checked here, before any passphrase is asked for.
    pub fn parse(pem: &[u8], passphrase: PassphraseSource) -> Result<EncryptedSshIdentity> {
        EncryptedSshIdentity::from_key(parse_openssh(pem)?, passphrase)
    }

    /// [`EncryptedSshIdentity::parse`] on a key file already parsed.
    pub(crate) fn from_key(
        key: PrivateKey,
        passphrase: PassphraseSource,
    ) -> Result<EncryptedSshIdentity> {
        if !key.is_encrypted() {
            return Err(Error::key("the OpenSSH key is not passphrase-protected"));
        }
        let (kind, blob) = stanza_id(key.public_key().key_data())?;
        let cipher = SshKeyCipher::of(key.cipher())?;
        let (salt, rounds) = match key.kdf() {
            Kdf::Bcrypt { salt, rounds } if *rounds > 0 && !salt.is_empty() => {
                (salt.clone(), *rounds)
            }
            _ => return Err(Error::key("malformed OpenSSH private key (KDF)")),
        };
        if key.key_data().encrypted().is_none_or(|c| c.len() % 16 != 0) {
            return Err(Error::key(
                "malformed OpenSSH private key (private section)",
            ));
        }
        Ok(EncryptedSshIdentity {
            key,
            cipher,
            salt,
            rounds,
            kind,
            tag: key_tag(&blob),
            blob,
            passphrase,
            opened: OnceLock::new(),
        })
    }

    fn open(&self) -> Result<&SshIdentity> {
        if let Some(id) = self.opened.get() {
            return Ok(id);
        }
        let passphrase = (self.passphrase)()?;
        let id = self.decrypt(passphrase.as_bytes())?;
        Ok(self.opened.get_or_init(|| id))
    }

    /// bcrypt-pbkdf gives the key and IV; the private section is
    /// `checkint checkint keypair comment 1 2 3 ...` (OpenSSH's PROTOCOL.key),
    /// whose two equal check words tell a right passphrase from a wrong one.
    fn decrypt(&self, passphrase: &[u8]) -> Result<SshIdentity> {
        let malformed = || Error::key("malformed OpenSSH private key (private section)");
        let key_len = self.cipher.key_len();
        let mut derived = Zeroizing::new([0u8; 48]);
        let derived = &mut derived[..key_len + 16];
        bcrypt_pbkdf::bcrypt_pbkdf(passphrase, &self.salt, self.rounds, derived)
            .map_err(|_| Error::key("malformed OpenSSH private key (KDF)"))?;
        let (aes_key, iv) = derived.split_at(key_len);
        let aes = Aes::new(aes_key).map_err(|_| malformed())?;
        let mut section = Zeroizing::new(
            self.key
                .key_data()
                .encrypted()
                .ok_or_else(malformed)?
                .to_vec(),
        );
        match self.cipher {
            SshKeyCipher::Ctr(_) => {
                Ctr::new(aes, iv).and_then(|mut c| c.apply_keystream(&mut section))
            }
            SshKeyCipher::Cbc(_) => Cbc::new(aes, iv).and_then(|mut c| c.decrypt(&mut section)),
        }
        .map_err(|_| malformed())?;
        let mut reader: &[u8] = &section;
        let check1 = u32::decode(&mut reader).map_err(|_| malformed())?;
        let check2 = u32::decode(&mut reader).map_err(|_| malformed())?;
        if check1 != check2 {
            return Err(Error::IdentityPassphrase);
        }
        let keypair = KeypairData::decode(&mut reader).map_err(|_| malformed())?;
        if KeyData::try_from(&keypair).ok().as_ref() != Some(self.key.public_key().key_data()) {
            return Err(Error::key(
                "inconsistent OpenSSH private key (the private key is not the public one's)",
            ));
        }
        let _comment = String::decode(&mut reader).map_err(|_| malformed())?;
        // What is left is the padding 1, 2, 3, ... to the cipher's block.
        let padding_ok = reader.len() < 16 && reader.iter().zip(1u8..).all(|(&b, n)| b == n);
        if !padding_ok {
            return Err(malformed());
        }
        SshIdentity::from_keypair(&keypair)
    }
}

impl fmt::Debug for EncryptedSshIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "EncryptedSshIdentity({}, tag {}, {})",
            self.kind,
            self.tag,
            if self.opened.get().is_some() {
                "opened"
            } else {
                "locked"
            }
        )
    }
}

impl Identity for EncryptedSshIdentity {
    /// From the key file's public half: no passphrase is asked for.
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Ok(vec![Box::new(SshRecipient::from_blob(&self.blob)?)])
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        if stanza.tag != self.kind || stanza.args.first() != Some(&self.tag) {
            return None;
        }
        match self.open() {
            Ok(id) => id.unwrap(stanza),
            Err(e) => Some(Err(e)),
        }
    }
}

/// A passphrase-protected RSA private key in OpenSSL's legacy PEM form
/// (`-----BEGIN RSA PRIVATE KEY-----`, `Proc-Type: 4,ENCRYPTED`, `DEK-Info:
/// AES-128-CBC,<IV>`: what `ssh-keygen -m PEM -N ...` writes). Its public
/// key comes from the key's `.pub` file, as age takes it; decrypted the first
/// time a stanza for that public key is found.
pub struct EncryptedPemIdentity {
    key_len: usize,
    iv: [u8; 16],
    encrypted: Vec<u8>,
    /// The public key blob (from the `.pub` file), and its tag.
    blob: Vec<u8>,
    tag: String,
    passphrase: PassphraseSource,
    opened: OnceLock<SshIdentity>,
}

impl EncryptedPemIdentity {
    /// Whether `bytes` are a PEM RSA key with OpenSSL's legacy encryption.
    pub fn detect(bytes: &[u8]) -> bool {
        let text = String::from_utf8_lossy(bytes);
        text.trim_start()
            .starts_with("-----BEGIN RSA PRIVATE KEY-----")
            && pem_parts(&text).is_ok_and(|(headers, _)| {
                headers
                    .iter()
                    .any(|(name, value)| name == "Proc-Type" && value.ends_with("ENCRYPTED"))
            })
    }

    /// Parses the encrypted key file `pem` and the OpenSSH public key file
    /// `public_key` (`ssh-rsa AAAA... comment`); `passphrase` is called when
    /// a stanza for the key is found. The cipher is checked here, before any
    /// passphrase is asked for.
    pub fn parse(
        pem: &[u8],
        public_key: &[u8],
        passphrase: PassphraseSource,
    ) -> Result<EncryptedPemIdentity> {
        let malformed = || Error::key("malformed passphrase-protected PEM key");
        let text = std::str::from_utf8(pem).map_err(|_| malformed())?;
        let (headers, body) = pem_parts(text)?;
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        if header("Proc-Type") != Some("4,ENCRYPTED") {
            return Err(malformed());
        }
        let (cipher, iv_hex) = header("DEK-Info")
            .and_then(|v| v.split_once(','))
            .ok_or_else(malformed)?;
        let key_len = match cipher.trim() {
            "AES-128-CBC" => 16,
            "AES-192-CBC" => 24,
            "AES-256-CBC" => 32,
            other => {
                return Err(Error::key(format!(
                    "PEM key encrypted with {other} is not supported (AES-128/192/256-CBC are; \
                     `ssh-keygen -p -f KEY` re-encrypts it in OpenSSH's format)"
                )));
            }
        };
        let mut iv = [0u8; 16];
        hex::decode_to_slice(iv_hex.trim(), &mut iv).map_err(|_| malformed())?;
        use base64ct::Encoding;
        let encrypted = base64ct::Base64::decode_vec(&body).map_err(|_| malformed())?;
        if encrypted.is_empty() || encrypted.len() % 16 != 0 {
            return Err(malformed());
        }
        let public_text = std::str::from_utf8(public_key)
            .map_err(|_| Error::key("the public key file is not text"))?;
        let public = ssh_key::PublicKey::from_openssh(public_text.trim())
            .map_err(|_| Error::key("malformed OpenSSH public key file"))?;
        let (kind, blob) = stanza_id(public.key_data())?;
        if kind != "ssh-rsa" {
            return Err(Error::key(
                "the public key file holds no ssh-rsa key (a PEM private key is RSA)",
            ));
        }
        Ok(EncryptedPemIdentity {
            key_len,
            iv,
            encrypted,
            tag: key_tag(&blob),
            blob,
            passphrase,
            opened: OnceLock::new(),
        })
    }

    fn open(&self) -> Result<&SshIdentity> {
        if let Some(id) = self.opened.get() {
            return Ok(id);
        }
        let passphrase = (self.passphrase)()?;
        let id = self.decrypt(passphrase.as_bytes())?;
        Ok(self.opened.get_or_init(|| id))
    }

    /// OpenSSL's `EVP_BytesToKey` with MD5 and one iteration (the key is
    /// D1 || D2 cut to length, D1 = MD5(passphrase || salt), D2 = MD5(D1 ||
    /// passphrase || salt), the salt the IV's first 8 bytes), then AES-CBC
    /// and PKCS#7 padding; a bad padding or a body that is not an RSA key
    /// means a wrong passphrase.
    fn decrypt(&self, passphrase: &[u8]) -> Result<SshIdentity> {
        use md5::{Digest, Md5};
        use rsa::pkcs1::DecodeRsaPrivateKey;
        let salt = &self.iv[..8];
        let mut derived = Zeroizing::new([0u8; 32]);
        let mut d1 = Md5::new();
        d1.update(passphrase);
        d1.update(salt);
        derived[..16].copy_from_slice(&d1.finalize());
        let mut d2 = Md5::new();
        d2.update(&derived[..16]);
        d2.update(passphrase);
        d2.update(salt);
        derived[16..].copy_from_slice(&d2.finalize());
        let malformed = || Error::key("malformed passphrase-protected PEM key");
        let aes = Aes::new(&derived[..self.key_len]).map_err(|_| malformed())?;
        let mut der = Zeroizing::new(self.encrypted.clone());
        Cbc::new(aes, &self.iv)
            .and_then(|mut c| c.decrypt(&mut der))
            .map_err(|_| malformed())?;
        let pad = usize::from(der[der.len() - 1]);
        let padding_ok = (1..=16).contains(&pad)
            && der[der.len() - pad..]
                .iter()
                .fold(0u8, |acc, &b| acc | (b ^ pad as u8))
                == 0;
        if !padding_ok {
            return Err(Error::IdentityPassphrase);
        }
        let body = &der[..der.len() - pad];
        let key = rsa::PrivateKey::from_pkcs1_der(body).map_err(|_| Error::IdentityPassphrase)?;
        let id = SshIdentity::from_rsa(key)?;
        if id.blob() != self.blob.as_slice() {
            return Err(Error::key(
                "the private key does not match its public key file",
            ));
        }
        Ok(id)
    }
}

impl fmt::Debug for EncryptedPemIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "EncryptedPemIdentity(ssh-rsa, tag {}, {})",
            self.tag,
            if self.opened.get().is_some() {
                "opened"
            } else {
                "locked"
            }
        )
    }
}

impl Identity for EncryptedPemIdentity {
    /// From the public key file: no passphrase is asked for.
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Ok(vec![Box::new(SshRecipient::from_blob(&self.blob)?)])
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        if stanza.tag != "ssh-rsa" || stanza.args.first() != Some(&self.tag) {
            return None;
        }
        match self.open() {
            Ok(id) => id.unwrap(stanza),
            Err(e) => Some(Err(e)),
        }
    }
}

/// An identity file encrypted with a passphrase as an age file (binary or
/// armored), as age accepts for `-i`; opened at the first stanza that is
/// not a passphrase stanza, its identities then tried on every stanza.
pub struct EncryptedIdentityFile {
    contents: Vec<u8>,
    passphrase: PassphraseSource,
    opened: OnceLock<Vec<Box<dyn Identity>>>,
}

impl EncryptedIdentityFile {
    /// Whether `bytes` look like an age file (binary or armored) rather
    /// than an identity file.
    pub fn detect(bytes: &[u8]) -> bool {
        bytes.starts_with(b"age-encryption.org/") || armor::is_armored(bytes)
    }

    /// Takes an age-encrypted identity file; its header is checked here
    /// (it must be encrypted with a passphrase), before any passphrase is
    /// asked for.
    pub fn new(contents: Vec<u8>, passphrase: PassphraseSource) -> Result<EncryptedIdentityFile> {
        let file = EncryptedIdentityFile {
            contents,
            passphrase,
            opened: OnceLock::new(),
        };
        let binary = file.binary()?;
        if !Decryptor::new(&binary[..])?.is_passphrase() {
            return Err(Error::key(
                "an age-encrypted identity file must be encrypted with a passphrase (age -p)",
            ));
        }
        Ok(file)
    }

    fn binary(&self) -> Result<std::borrow::Cow<'_, [u8]>> {
        Ok(if armor::is_armored(&self.contents) {
            armor::decode_armor(&self.contents)?.into()
        } else {
            self.contents[..].into()
        })
    }

    fn open(&self) -> Result<&[Box<dyn Identity>]> {
        if let Some(ids) = self.opened.get() {
            return Ok(ids);
        }
        let scrypt = ScryptIdentity::new((self.passphrase)()?);
        let binary = self.binary()?;
        let mut reader = Decryptor::new(&binary[..])?
            .decrypt(&[&scrypt])
            .map_err(|e| match e {
                Error::Passphrase => Error::IdentityPassphrase,
                e => e,
            })?;
        let mut plain = Zeroizing::new(Vec::new());
        reader.read_to_end(&mut plain).map_err(Error::from_io)?;
        let ids = keys::parse_identity_file(&plain)
            .map_err(|e| Error::key(format!("in the encrypted identity file: {e}")))?;
        Ok(self.opened.get_or_init(|| ids))
    }
}

impl fmt::Debug for EncryptedIdentityFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.opened.get() {
            Some(ids) => write!(f, "EncryptedIdentityFile(opened, {} identities)", ids.len()),
            None => f.write_str("EncryptedIdentityFile(locked)"),
        }
    }
}

impl Identity for EncryptedIdentityFile {
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        let mut out = Vec::new();
        for id in self.open()? {
            out.extend(id.recipients()?);
        }
        Ok(out)
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        // A passphrase stanza is the file's only one, and no identity
        // file opens it.
        if stanza.tag == "scrypt" {
            return None;
        }
        match self.open() {
            Ok(ids) => ids.iter().find_map(|id| id.unwrap(stanza)),
            Err(e) => Some(Err(e)),
        }
    }
}
