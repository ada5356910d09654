//! SSH keys as age recipients and identities (age's `ssh-ed25519` and
//! `ssh-rsa` stanzas), from OpenSSH public key lines and unencrypted
//! OpenSSH private key files.
//!
//! * `ssh-ed25519 tag share`: the Ed25519 key converted to X25519
//!   (Edwards to Montgomery; the secret is SHA-512(seed)[..32]), an X25519
//!   exchange whose shared secret is tweaked by X25519 with
//!   HKDF-SHA256(salt = the SSH key blob, "age-encryption.org/v1/ssh-ed25519").
//! * `ssh-rsa tag`: RSA-OAEP-SHA256 with the label
//!   "age-encryption.org/v1/ssh-rsa". RSA private keys only ever decrypt a
//!   stanza locally (no oracle is exposed); the `rsa` crate 0.10 is used, whose
//!   decryption is constant-time (0.9 carries RUSTSEC-2023-0071, Marvin) and,
//!   with its `getrandom` feature, blinded with the system RNG as age's is.
//!
//! `tag` is base64 of the first 4 bytes of SHA-256 of the SSH key blob: it
//! only says which key a stanza is for.

use crate::error::{Error, Result};
use crate::format::{Stanza, encode_b64};
use crate::primitives::FileKey;
use crate::x25519::{unwrap_from, wrap_to};
use crate::{Identity, Recipient};
use core::fmt;
use curve25519_dalek::edwards::CompressedEdwardsY;
use rsa::{BoxedUint, Oaep};
use sha2::{Digest, Sha256, Sha512};
use ssh_key::private::KeypairData;
use ssh_key::public::KeyData;
use ssh_key::{Mpint, PrivateKey, PublicKey};
use x25519_dalek::{X25519_BASEPOINT_BYTES, x25519};
use zeroize::Zeroizing;

const ED25519_LABEL: &[u8] = b"age-encryption.org/v1/ssh-ed25519";
const RSA_LABEL: &[u8] = b"age-encryption.org/v1/ssh-rsa";
/// ssh-rsa recipient sizes: age refuses moduli under 256 bytes (2041 bits
/// and up pass its byte count); OpenSSH makes keys of up to 16384 bits.
const RSA_BITS: core::ops::RangeInclusive<usize> = 2041..=16384;

/// The stanza tag argument of an SSH key blob.
pub(crate) fn key_tag(blob: &[u8]) -> String {
    encode_b64(&Sha256::digest(blob)[..4])
}

fn ed25519_tweak(blob: &[u8]) -> Zeroizing<[u8; 32]> {
    crate::primitives::hkdf_sha256(&[], blob, ED25519_LABEL)
}

fn ed25519_to_x25519(public: &[u8; 32]) -> Result<[u8; 32]> {
    CompressedEdwardsY(*public)
        .decompress()
        .map(|p| p.to_montgomery().to_bytes())
        .ok_or_else(|| Error::key("invalid ssh-ed25519 public key"))
}

fn mpint(m: &Mpint) -> Result<BoxedUint> {
    let bytes = m
        .as_positive_bytes()
        .ok_or_else(|| Error::key("invalid ssh-rsa key (negative integer)"))?;
    Ok(BoxedUint::from_be_slice_vartime(bytes))
}

enum RecipientKey {
    Ed25519 { x25519: [u8; 32] },
    Rsa(Box<rsa::PublicKey>),
}

/// An SSH public key as a recipient (`ssh-ed25519` or `ssh-rsa`).
pub struct SshRecipient {
    tag: String,
    blob: Vec<u8>,
    key: RecipientKey,
    line: String,
}

impl SshRecipient {
    /// Parses an OpenSSH public key line (`ssh-ed25519 AAAA... comment`;
    /// fields apart by any run of spaces or tabs). ssh-rsa keys of under
    /// 2048 bits are refused, as age refuses them.
    pub fn parse(line: &str) -> Result<SshRecipient> {
        let normalized = line.split_whitespace().collect::<Vec<_>>().join(" ");
        let public = PublicKey::from_openssh(&normalized)
            .map_err(|e| Error::key(format!("malformed SSH public key: {e}")))?;
        let blob = public
            .to_bytes()
            .map_err(|e| Error::key(format!("malformed SSH public key: {e}")))?;
        let key = match public.key_data() {
            KeyData::Ed25519(pk) => RecipientKey::Ed25519 {
                x25519: ed25519_to_x25519(&pk.0)?,
            },
            KeyData::Rsa(pk) => {
                let public =
                    rsa::PublicKey::new_with_size_limits(mpint(&pk.n)?, mpint(&pk.e)?, RSA_BITS)
                        .map_err(|e| match e {
                            rsa::Error::ModulusTooSmall => {
                                Error::key("ssh-rsa keys under 2048 bits (a modulus under 256 bytes) are refused (too weak)")
                            }
                            e => Error::key(format!("unusable ssh-rsa key: {e}")),
                        })?;
                RecipientKey::Rsa(Box::new(public))
            }
            other => {
                return Err(Error::key(format!(
                    "SSH key type {} is not supported (ssh-ed25519 and ssh-rsa are)",
                    other.algorithm()
                )));
            }
        };
        let mut parts = line.split_whitespace();
        let line = format!(
            "{} {}",
            parts.next().unwrap_or(""),
            parts.next().unwrap_or("")
        );
        Ok(SshRecipient {
            tag: key_tag(&blob),
            blob,
            key,
            line,
        })
    }
}

impl SshRecipient {
    /// The recipient of an SSH public key blob (an identity's public half).
    pub(crate) fn from_blob(blob: &[u8]) -> Result<SshRecipient> {
        let line = PublicKey::from_bytes(blob)
            .and_then(|k| k.to_openssh())
            .map_err(|e| Error::key(format!("malformed SSH public key: {e}")))?;
        SshRecipient::parse(&line)
    }
}

impl fmt::Debug for SshRecipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SshRecipient({})", self.line)
    }
}

impl Recipient for SshRecipient {
    fn wrap(&self, file_key: &FileKey) -> Result<Vec<Stanza>> {
        match &self.key {
            RecipientKey::Ed25519 { x25519 } => {
                let tweak = ed25519_tweak(&self.blob);
                let (share, body) = wrap_to(x25519, Some(&tweak), ED25519_LABEL, file_key)?;
                Ok(vec![Stanza {
                    tag: "ssh-ed25519".into(),
                    args: vec![self.tag.clone(), encode_b64(&share)],
                    body,
                }])
            }
            RecipientKey::Rsa(public) => {
                let body = public
                    .encrypt(
                        &mut getrandom::SysRng,
                        Oaep::<Sha256>::new_with_label(RSA_LABEL),
                        &file_key[..],
                    )
                    .map_err(|e| Error::key(format!("ssh-rsa encryption failed: {e}")))?;
                Ok(vec![Stanza {
                    tag: "ssh-rsa".into(),
                    args: vec![self.tag.clone()],
                    body,
                }])
            }
        }
    }
}

enum IdentityKey {
    Ed25519 {
        secret: Zeroizing<[u8; 32]>,
        x25519_public: [u8; 32],
    },
    Rsa(Box<rsa::PrivateKey>),
}

/// An OpenSSH private key as an identity.
pub struct SshIdentity {
    tag: String,
    blob: Vec<u8>,
    key: IdentityKey,
}

impl SshIdentity {
    /// Parses an unencrypted RSA private key in PEM form, PKCS#1 (`BEGIN
    /// RSA PRIVATE KEY`, what `ssh-keygen -m PEM` writes and OpenSSH wrote
    /// before 7.8) or PKCS#8 (`BEGIN PRIVATE KEY`), as age reads them.
    pub fn parse_rsa_pem(pem: &str) -> Result<SshIdentity> {
        use base64ct::Encoding;
        use rsa::pkcs1::DecodeRsaPrivateKey;
        use rsa::pkcs8::DecodePrivateKey;
        let malformed = || Error::key("malformed RSA private key (PEM)");
        let pkcs1 = pem
            .trim_start()
            .starts_with("-----BEGIN RSA PRIVATE KEY-----");
        if pem.contains("ENCRYPTED") || pem.contains("Proc-Type:") {
            return Err(Error::key(
                "passphrase-protected PEM key: read it with a passphrase (and its .pub file)",
            ));
        }
        let (_, body) = pem_parts(pem)?;
        // `base64ct`: no lookup table indexed by the key's characters.
        let der = Zeroizing::new(base64ct::Base64::decode_vec(&body).map_err(|_| malformed())?);
        let key = if pkcs1 {
            rsa::PrivateKey::from_pkcs1_der(&der).map_err(|_| malformed())?
        } else {
            rsa::PrivateKey::from_pkcs8_der(&der)
                .map_err(|_| Error::key("unsupported PEM private key (RSA keys are read)"))?
        };
        SshIdentity::from_rsa(key)
    }

    /// The public key blob (OpenSSH wire form) the stanzas are tagged by.
    pub(crate) fn blob(&self) -> &[u8] {
        &self.blob
    }

    /// The identity of an RSA private key.
    pub(crate) fn from_rsa(key: rsa::PrivateKey) -> Result<SshIdentity> {
        use rsa::traits::PublicKeyParts;
        let malformed = || Error::key("malformed RSA private key (PEM)");
        let to_mpint = |b: &[u8]| Mpint::from_positive_bytes(b).map_err(|_| malformed());
        let public = ssh_key::public::RsaPublicKey {
            e: to_mpint(&key.e().to_be_bytes_trimmed_vartime())?,
            n: to_mpint(&key.n().as_ref().to_be_bytes_trimmed_vartime())?,
        };
        let blob = PublicKey::from(KeyData::Rsa(public))
            .to_bytes()
            .map_err(|_| malformed())?;
        Ok(SshIdentity {
            tag: key_tag(&blob),
            blob,
            key: IdentityKey::Rsa(Box::new(key)),
        })
    }

    /// Parses an OpenSSH private key file (`-----BEGIN OPENSSH PRIVATE KEY-----`).
    /// Passphrase-protected keys are refused with a clear error; see
    /// [`EncryptedSshIdentity`](crate::EncryptedSshIdentity) for those.
    pub fn parse(pem: &[u8]) -> Result<SshIdentity> {
        let private = parse_openssh(pem)?;
        if private.is_encrypted() {
            return Err(Error::key(
                "passphrase-protected OpenSSH key: a passphrase is needed to use it",
            ));
        }
        SshIdentity::from_keypair(private.key_data())
    }

    /// The identity of an unencrypted key pair.
    pub(crate) fn from_keypair(key_data: &KeypairData) -> Result<SshIdentity> {
        let malformed =
            |e: ssh_key::Error| Error::key(format!("malformed OpenSSH private key: {e}"));
        let public = KeyData::try_from(key_data).map_err(malformed)?;
        let blob = PublicKey::from(public).to_bytes().map_err(malformed)?;
        let key = match key_data {
            KeypairData::Ed25519(kp) => {
                let seed = Zeroizing::new(kp.private.to_bytes());
                let mut hash = Zeroizing::new([0u8; 64]);
                hash.copy_from_slice(&Sha512::digest(&seed[..]));
                let mut secret = Zeroizing::new([0u8; 32]);
                secret.copy_from_slice(&hash[..32]);
                let x25519_public = ed25519_to_x25519(&kp.public.0)?;
                // The converted secret must match the key's public half.
                if x25519(*secret, X25519_BASEPOINT_BYTES) != x25519_public {
                    return Err(Error::key("inconsistent ssh-ed25519 private key"));
                }
                IdentityKey::Ed25519 {
                    secret,
                    x25519_public,
                }
            }
            KeypairData::Rsa(kp) => {
                let key = rsa::PrivateKey::from_components(
                    mpint(&kp.public.n)?,
                    mpint(&kp.public.e)?,
                    mpint(&kp.private.d)?,
                    vec![mpint(&kp.private.p)?, mpint(&kp.private.q)?],
                )
                .map_err(|e| Error::key(format!("unusable ssh-rsa private key: {e}")))?;
                IdentityKey::Rsa(Box::new(key))
            }
            other => return Err(unsupported_type(other.algorithm().ok())),
        };
        Ok(SshIdentity {
            tag: key_tag(&blob),
            blob,
            key,
        })
    }
}

/// A PEM block's `Name: value` header lines, in order.
pub(crate) type PemHeaders = Vec<(String, String)>;

/// A PEM block's header lines (`Name: value`, before the blank line that
/// ends them; RFC 1421's form, which OpenSSL's encrypted keys use) and its
/// base64 body, the lines between BEGIN and END only (age ignores what
/// follows). The body is key material: it is wiped when dropped.
pub(crate) fn pem_parts(pem: &str) -> Result<(PemHeaders, Zeroizing<String>)> {
    let mut lines = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .peekable();
    let mut headers = Vec::new();
    if lines.peek().is_some_and(|l| l.contains(':')) {
        for line in lines.by_ref() {
            if line.is_empty() {
                break;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| Error::key("malformed PEM key (headers)"))?;
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let body = lines.filter(|l| !l.is_empty()).collect::<String>().into();
    Ok((headers, body))
}

/// Parses an OpenSSH private key file, encrypted or not.
pub(crate) fn parse_openssh(pem: &[u8]) -> Result<PrivateKey> {
    PrivateKey::from_openssh(pem).map_err(|e| match e {
        // A well-formed key of a type this build does not parse
        // (ECDSA, DSA): say that, not "malformed".
        ssh_key::Error::AlgorithmUnknown | ssh_key::Error::AlgorithmUnsupported { .. } => {
            unsupported_type(None)
        }
        e => Error::key(format!("malformed OpenSSH private key: {e}")),
    })
}

fn unsupported_type(algorithm: Option<ssh_key::Algorithm>) -> Error {
    match algorithm {
        Some(a) => Error::key(format!(
            "SSH key type {a} is not supported (ssh-ed25519 and ssh-rsa are)"
        )),
        None => Error::key("SSH key type not supported (ssh-ed25519 and ssh-rsa are)"),
    }
}

/// The stanza type of an SSH public key's stanzas and the key's blob (whose
/// [`key_tag`] they carry); an error for key types age has no stanza for.
pub(crate) fn stanza_id(public: &KeyData) -> Result<(&'static str, Vec<u8>)> {
    let kind = match public {
        KeyData::Ed25519(_) => "ssh-ed25519",
        KeyData::Rsa(_) => "ssh-rsa",
        other => return Err(unsupported_type(Some(other.algorithm()))),
    };
    let blob = PublicKey::from(public.clone())
        .to_bytes()
        .map_err(|e| Error::key(format!("malformed OpenSSH private key: {e}")))?;
    Ok((kind, blob))
}

impl fmt::Debug for SshIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.key {
            IdentityKey::Ed25519 { .. } => "ssh-ed25519",
            IdentityKey::Rsa(_) => "ssh-rsa",
        };
        write!(f, "SshIdentity({kind}, tag {})", self.tag)
    }
}

impl Identity for SshIdentity {
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Ok(vec![Box::new(SshRecipient::from_blob(&self.blob)?)])
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        match (&self.key, stanza.tag.as_str()) {
            (
                IdentityKey::Ed25519 {
                    secret,
                    x25519_public,
                },
                "ssh-ed25519",
            ) => {
                if stanza.args.len() != 2 {
                    return Some(Err(Error::header("malformed ssh-ed25519 stanza arguments")));
                }
                if stanza.args[0] != self.tag {
                    return None;
                }
                let tweak = ed25519_tweak(&self.blob);
                unwrap_from(
                    secret,
                    x25519_public,
                    Some(&tweak),
                    ED25519_LABEL,
                    &stanza.args[1],
                    &stanza.body,
                    "ssh-ed25519",
                )
            }
            (IdentityKey::Rsa(key), "ssh-rsa") => {
                if stanza.args.len() != 1 {
                    return Some(Err(Error::header("malformed ssh-rsa stanza arguments")));
                }
                if stanza.args[0] != self.tag {
                    return None;
                }
                let plain = Zeroizing::new(
                    key.decrypt(Oaep::<Sha256>::new_with_label(RSA_LABEL), &stanza.body)
                        .ok()?,
                );
                if plain.len() != 16 {
                    return Some(Err(Error::header(
                        "malformed ssh-rsa stanza (file key size)",
                    )));
                }
                let mut file_key = Zeroizing::new([0u8; 16]);
                file_key.copy_from_slice(&plain);
                Some(Ok(file_key))
            }
            _ => None,
        }
    }
}
