//! The passphrase recipient: `-> scrypt base64(salt) log2(N)`, the file key
//! wrapped under scrypt(passphrase, "age-encryption.org/v1/scrypt" || salt,
//! N, r = 8, p = 1). It must be a file's only recipient.

use crate::error::{Error, Result};
use crate::format::{Stanza, decode_b64, encode_b64};
use crate::primitives::{FileKey, UnwrapError, fill_random, unwrap_file_key, wrap_file_key};
use crate::{Identity, Recipient};
use core::fmt;
use zeroize::Zeroizing;

const STANZA_TAG: &str = "scrypt";
const SALT_LABEL: &[u8] = b"age-encryption.org/v1/scrypt";
/// log2(N) for new files, as age (about a second on a laptop).
pub const DEFAULT_LOG_N: u8 = 18;
/// The largest log2(N) accepted when decrypting, as age (about 16 s, 4 GiB... of
/// work; larger values are refused before any work is done).
pub const MAX_LOG_N: u8 = 22;

fn derive(passphrase: &[u8], salt: &[u8; 16], log_n: u8) -> Result<Zeroizing<[u8; 32]>> {
    let mut full_salt = Vec::with_capacity(SALT_LABEL.len() + 16);
    full_salt.extend_from_slice(SALT_LABEL);
    full_salt.extend_from_slice(salt);
    let params = scrypt::Params::new(log_n, 8, 1)
        .map_err(|_| Error::header(format!("invalid scrypt work factor {log_n}")))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(passphrase, &full_salt, &params, &mut key[..])
        .map_err(|_| Error::header("scrypt failed"))?;
    Ok(key)
}

/// Encrypts to a passphrase.
#[derive(Clone)]
pub struct ScryptRecipient {
    passphrase: Zeroizing<String>,
    log_n: u8,
}

impl ScryptRecipient {
    /// A passphrase recipient with the default work factor (2^18).
    pub fn new(passphrase: Zeroizing<String>) -> ScryptRecipient {
        ScryptRecipient {
            passphrase,
            log_n: DEFAULT_LOG_N,
        }
    }

    /// Sets log2(N) (1..=30; tests use small values).
    pub fn with_work_factor(mut self, log_n: u8) -> ScryptRecipient {
        self.log_n = log_n.clamp(1, 30);
        self
    }
}

impl fmt::Debug for ScryptRecipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ScryptRecipient(log_n: {}, passphrase: <redacted>)",
            self.log_n
        )
    }
}

impl Recipient for ScryptRecipient {
    fn wrap(&self, file_key: &FileKey) -> Result<Vec<Stanza>> {
        let mut salt = [0u8; 16];
        fill_random(&mut salt)?;
        let key = derive(self.passphrase.as_bytes(), &salt, self.log_n)?;
        Ok(vec![Stanza {
            tag: STANZA_TAG.into(),
            args: vec![encode_b64(&salt), self.log_n.to_string()],
            body: wrap_file_key(&key, file_key)?,
        }])
    }

    fn exclusive(&self) -> bool {
        true
    }
}

/// Decrypts with a passphrase.
#[derive(Clone)]
pub struct ScryptIdentity {
    passphrase: Zeroizing<String>,
    max_log_n: u8,
}

impl ScryptIdentity {
    /// A passphrase identity accepting work factors up to 2^22.
    pub fn new(passphrase: Zeroizing<String>) -> ScryptIdentity {
        ScryptIdentity {
            passphrase,
            max_log_n: MAX_LOG_N,
        }
    }

    /// Sets the largest accepted log2(N).
    pub fn with_max_work_factor(mut self, max_log_n: u8) -> ScryptIdentity {
        self.max_log_n = max_log_n;
        self
    }
}

impl fmt::Debug for ScryptIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ScryptIdentity(max_log_n: {}, passphrase: <redacted>)",
            self.max_log_n
        )
    }
}

/// A decimal work factor without sign, leading zeros or other characters.
fn parse_log_n(s: &str) -> Option<u8> {
    if s.is_empty() || s.len() > 2 || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Identity for ScryptIdentity {
    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        if stanza.tag != STANZA_TAG {
            return None;
        }
        Some(self.unwrap_scrypt(stanza))
    }
}

impl ScryptIdentity {
    fn unwrap_scrypt(&self, stanza: &Stanza) -> Result<FileKey> {
        if stanza.args.len() != 2 {
            return Err(Error::header("malformed scrypt stanza arguments"));
        }
        let salt = decode_b64(&stanza.args[0])
            .and_then(|s| <[u8; 16]>::try_from(s).ok())
            .ok_or_else(|| Error::header("malformed scrypt salt"))?;
        let log_n = parse_log_n(&stanza.args[1])
            .ok_or_else(|| Error::header("malformed scrypt work factor"))?;
        if log_n > self.max_log_n {
            return Err(Error::WorkFactor {
                got: log_n,
                max: self.max_log_n,
            });
        }
        if stanza.body.len() != 32 {
            return Err(Error::header("malformed scrypt stanza body"));
        }
        let key = derive(self.passphrase.as_bytes(), &salt, log_n)?;
        match unwrap_file_key(&key, &stanza.body) {
            Ok(k) => Ok(k),
            // The only stanza of its file (checked when the header is read):
            // say so, rather than "no identity matched".
            Err(UnwrapError::Mismatch) => Err(Error::Passphrase),
            Err(UnwrapError::BadLength) => Err(Error::header("malformed scrypt stanza body")),
            Err(UnwrapError::Crypto(e)) => Err(Error::Crypto(e)),
        }
    }
}
