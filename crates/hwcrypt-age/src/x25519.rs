//! X25519 recipients (`age1...`) and identities (`AGE-SECRET-KEY-1...`):
//! an ephemeral X25519 share per file, HKDF-SHA256 over the shared secret
//! with salt `share || recipient`, the file key wrapped with
//! ChaCha20-Poly1305 under the result.

use crate::error::{Error, Result};
use crate::format::{Stanza, decode_b64, encode_b64};
use crate::primitives::{FileKey, fill_random, hkdf_sha256, unwrap_file_key, wrap_file_key};
use crate::{Identity, Recipient};
use bech32::primitives::decode::CheckedHrpstring;
use bech32::{Bech32, Hrp};
use core::fmt;
use core::str::FromStr;
use x25519_dalek::{X25519_BASEPOINT_BYTES, x25519};
use zeroize::Zeroizing;

const STANZA_TAG: &str = "X25519";
const LABEL: &[u8] = b"age-encryption.org/v1/X25519";
const RECIPIENT_HRP: &str = "age";
const IDENTITY_HRP: &str = "age-secret-key-";

/// Decodes a Bech32 (not Bech32m) string with human-readable part `hrp`
/// into 32 bytes.
fn decode_bech32_32(s: &str, hrp: &str, what: &str) -> Result<Zeroizing<[u8; 32]>> {
    let bad = || Error::key(format!("malformed {what}"));
    let checked = CheckedHrpstring::new::<Bech32>(s).map_err(|_| bad())?;
    // Canonical padding (as age's decoder): one key, one encoding.
    if checked.hrp().to_lowercase() != hrp || checked.validate_segwit_padding().is_err() {
        return Err(bad());
    }
    let bytes = Zeroizing::new(checked.byte_iter().collect::<Vec<u8>>());
    let mut out = Zeroizing::new([0u8; 32]);
    if bytes.len() != 32 {
        return Err(bad());
    }
    out.copy_from_slice(&bytes);
    Ok(out)
}

/// An `age1...` recipient: an X25519 public key.
#[derive(Clone, PartialEq, Eq)]
pub struct X25519Recipient {
    public: [u8; 32],
}

impl X25519Recipient {
    /// The recipient of a raw X25519 public key.
    pub fn from_bytes(public: [u8; 32]) -> X25519Recipient {
        X25519Recipient { public }
    }
}

impl FromStr for X25519Recipient {
    type Err = Error;
    fn from_str(s: &str) -> Result<X25519Recipient> {
        let public = decode_bech32_32(s, RECIPIENT_HRP, "age1 recipient")?;
        Ok(X25519Recipient { public: *public })
    }
}

impl fmt::Display for X25519Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hrp = Hrp::parse(RECIPIENT_HRP).map_err(|_| fmt::Error)?;
        let s = bech32::encode_lower::<Bech32>(hrp, &self.public).map_err(|_| fmt::Error)?;
        f.write_str(&s)
    }
}

impl fmt::Debug for X25519Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "X25519Recipient({self})")
    }
}

/// X25519 as age uses it: fails on an all-zero result (a low-order point).
pub(crate) fn dh(secret: &[u8; 32], public: &[u8; 32]) -> Option<Zeroizing<[u8; 32]>> {
    let shared = Zeroizing::new(x25519(*secret, *public));
    if hwcrypt::ct::eq(&shared[..], &[0u8; 32]) {
        None
    } else {
        Some(shared)
    }
}

/// Wraps `file_key` to the X25519 key `public` with an ephemeral share;
/// `tweak` (ssh-ed25519) is applied to the shared secret; returns the share
/// and the body.
pub(crate) fn wrap_to(
    public: &[u8; 32],
    tweak: Option<&[u8; 32]>,
    label: &[u8],
    file_key: &FileKey,
) -> Result<([u8; 32], Vec<u8>)> {
    let mut ephemeral = Zeroizing::new([0u8; 32]);
    fill_random(&mut ephemeral[..])?;
    let share = x25519(*ephemeral, X25519_BASEPOINT_BYTES);
    let mut shared = dh(&ephemeral, public)
        .ok_or_else(|| Error::key("recipient public key is a low-order point"))?;
    if let Some(tweak) = tweak {
        shared = Zeroizing::new(x25519(*tweak, *shared));
    }
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(&share);
    salt[32..].copy_from_slice(public);
    let key = hkdf_sha256(&shared[..], &salt, label);
    Ok((share, wrap_file_key(&key, file_key)?))
}

impl Recipient for X25519Recipient {
    fn wrap(&self, file_key: &FileKey) -> Result<Vec<Stanza>> {
        let (share, body) = wrap_to(&self.public, None, LABEL, file_key)?;
        Ok(vec![Stanza {
            tag: STANZA_TAG.into(),
            args: vec![encode_b64(&share)],
            body,
        }])
    }
}

/// An `AGE-SECRET-KEY-1...` identity: an X25519 secret key.
#[derive(Clone)]
pub struct X25519Identity {
    secret: Zeroizing<[u8; 32]>,
}

impl X25519Identity {
    /// A new random identity.
    pub fn generate() -> Result<X25519Identity> {
        let mut secret = Zeroizing::new([0u8; 32]);
        fill_random(&mut secret[..])?;
        Ok(X25519Identity { secret })
    }

    /// Its recipient (public key).
    pub fn to_public(&self) -> X25519Recipient {
        X25519Recipient {
            public: x25519(*self.secret, X25519_BASEPOINT_BYTES),
        }
    }

    /// The `AGE-SECRET-KEY-1...` encoding (secret: handle with care).
    pub fn to_secret_string(&self) -> Zeroizing<String> {
        let hrp = Hrp::parse(IDENTITY_HRP).expect("valid hrp");
        Zeroizing::new(
            bech32::encode_upper::<Bech32>(hrp, &self.secret[..]).expect("32 bytes encode"),
        )
    }
}

impl FromStr for X25519Identity {
    type Err = Error;
    fn from_str(s: &str) -> Result<X25519Identity> {
        let secret = decode_bech32_32(s, IDENTITY_HRP, "AGE-SECRET-KEY-1 identity")?;
        Ok(X25519Identity { secret })
    }
}

impl fmt::Debug for X25519Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "X25519Identity(public: {})", self.to_public())
    }
}

/// Unwraps an X25519-shaped stanza body: `args` must be one 32-byte share.
pub(crate) fn unwrap_from(
    secret: &[u8; 32],
    our_public: &[u8; 32],
    tweak: Option<&[u8; 32]>,
    label: &[u8],
    share_arg: &str,
    body: &[u8],
    what: &str,
) -> Option<Result<FileKey>> {
    let Some(share) = decode_b64(share_arg).and_then(|s| <[u8; 32]>::try_from(s).ok()) else {
        return Some(Err(Error::header(format!("malformed {what} stanza share"))));
    };
    if body.len() != 32 {
        return Some(Err(Error::header(format!("malformed {what} stanza body"))));
    }
    let Some(mut shared) = dh(secret, &share) else {
        return Some(Err(Error::header(format!(
            "{what} stanza share is a low-order point"
        ))));
    };
    if let Some(tweak) = tweak {
        shared = Zeroizing::new(x25519(*tweak, *shared));
    }
    let mut salt = [0u8; 64];
    salt[..32].copy_from_slice(&share);
    salt[32..].copy_from_slice(our_public);
    let key = hkdf_sha256(&shared[..], &salt, label);
    match unwrap_file_key(&key, body) {
        Ok(file_key) => Some(Ok(file_key)),
        Err(e) => e
            .into_error(|| Error::header(format!("malformed {what} stanza body")))
            .map(Err),
    }
}

impl Identity for X25519Identity {
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Ok(vec![Box::new(self.to_public())])
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        if stanza.tag != STANZA_TAG {
            return None;
        }
        if stanza.args.len() != 1 {
            return Some(Err(Error::header("malformed X25519 stanza arguments")));
        }
        let public = self.to_public().public;
        unwrap_from(
            &self.secret,
            &public,
            None,
            LABEL,
            &stanza.args[0],
            &stanza.body,
            "X25519",
        )
    }
}
