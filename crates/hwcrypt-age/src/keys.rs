//! Recipient strings, recipient files and identity files, as age reads them:
//! `age1...`, `age1pq1...` and OpenSSH public key lines (`ssh-ed25519`,
//! `ssh-rsa`); identity files of `AGE-SECRET-KEY-1...` and
//! `AGE-SECRET-KEY-PQ-1...` lines (with `#` comments) or an OpenSSH private
//! key, passphrase-protected or not, or such a file encrypted as an age file.

use crate::error::{Error, Result};
use crate::locked::{
    EncryptedIdentityFile, EncryptedPemIdentity, EncryptedSshIdentity, PassphraseSource,
};
use crate::pq::{HybridIdentity, HybridRecipient};
use crate::ssh::{SshIdentity, SshRecipient, parse_openssh};
use crate::x25519::{X25519Identity, X25519Recipient};
use crate::{Identity, Recipient};

/// Whether a line is an SSH public key of a type age cannot encrypt to
/// (ECDSA, DSA, security keys).
fn unsupported_ssh_key(s: &str) -> bool {
    let kind = s.split_whitespace().next().unwrap_or("");
    kind != "ssh-ed25519"
        && kind != "ssh-rsa"
        && (kind.starts_with("ssh-") || kind.starts_with("ecdsa-") || kind.starts_with("sk-"))
}

/// Parses one recipient: `age1...`, `age1pq1...`, or an SSH public key
/// line.
pub fn parse_recipient(s: &str) -> Result<Box<dyn Recipient>> {
    let s = s.trim();
    let kind = s.split_whitespace().next().unwrap_or("");
    if s.starts_with("age1pq1") {
        Ok(Box::new(s.parse::<HybridRecipient>()?))
    } else if s.starts_with("age1") && s[4..].contains('1') {
        // Bech32 data has no '1': a second one ends a plugin's name
        // (age1yubikey1...).
        Err(Error::key(format!(
            "plugin recipients are not supported (this one needs age-plugin-{})",
            s[4..].split('1').next().unwrap_or("")
        )))
    } else if s.starts_with("age1") {
        Ok(Box::new(s.parse::<X25519Recipient>()?))
    } else if kind == "ssh-ed25519" || kind == "ssh-rsa" {
        Ok(Box::new(SshRecipient::parse(s)?))
    } else if unsupported_ssh_key(s) {
        Err(Error::key(
            "only ssh-ed25519 and ssh-rsa SSH keys can be recipients",
        ))
    } else {
        Err(Error::key(
            "unknown recipient type (expected age1..., age1pq1... or an ssh-ed25519 / ssh-rsa public key)",
        ))
    }
}

/// Parses a recipients file: one recipient per line, blank lines and `#`
/// comments ignored. SSH keys of types age cannot encrypt to (a GitHub
/// `.keys` file or an `authorized_keys` file may list ECDSA keys) are
/// skipped; see [`parse_recipients_file_with`] to hear about them.
pub fn parse_recipients_file(text: &str) -> Result<Vec<Box<dyn Recipient>>> {
    parse_recipients_file_with(text, |_, _| {})
}

/// [`parse_recipients_file`], calling `skipped(line_number, key_type)` for
/// each SSH key it skips (1-based line numbers).
pub fn parse_recipients_file_with(
    text: &str,
    mut skipped: impl FnMut(usize, &str),
) -> Result<Vec<Box<dyn Recipient>>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if unsupported_ssh_key(line) {
            skipped(n + 1, line.split_whitespace().next().unwrap_or(""));
            continue;
        }
        out.push(parse_recipient(line).map_err(|e| Error::key(format!("line {}: {e}", n + 1)))?);
    }
    if out.is_empty() {
        return Err(Error::key("no recipients in the file"));
    }
    Ok(out)
}

/// Parses one `AGE-SECRET-KEY-1...` or `AGE-SECRET-KEY-PQ-1...` line; `None`
/// for other lines. Errors never quote key material.
pub fn parse_identity(line: &str) -> Option<Result<Box<dyn Identity>>> {
    if line.starts_with("AGE-SECRET-KEY-PQ-1") {
        Some(
            line.parse::<HybridIdentity>()
                .map(|i| Box::new(i) as Box<dyn Identity>),
        )
    } else if line.starts_with("AGE-SECRET-KEY-1") {
        Some(
            line.parse::<X25519Identity>()
                .map(|i| Box::new(i) as Box<dyn Identity>),
        )
    } else if line.starts_with("AGE-PLUGIN-") {
        Some(Err(Error::key(
            "plugin identities (AGE-PLUGIN-...) are not supported",
        )))
    } else {
        None
    }
}

/// Parses an identity file: an OpenSSH private key, or `AGE-SECRET-KEY-1`
/// and `AGE-SECRET-KEY-PQ-1` lines with blank lines and `#` comments.
/// Passphrase-protected files are refused (see
/// [`parse_identity_file_with_passphrase`]). Errors never quote key material.
pub fn parse_identity_file(bytes: &[u8]) -> Result<Vec<Box<dyn Identity>>> {
    parse_identity_file_inner(bytes, None)
}

/// [`parse_identity_file`], and also passphrase-protected identity files,
/// as age reads them: an OpenSSH key encrypted by `ssh-keygen`
/// ([`EncryptedSshIdentity`]) or an identity file encrypted with a
/// passphrase as an age file ([`EncryptedIdentityFile`]). `passphrase` is
/// called only if decryption comes to need the identity.
pub fn parse_identity_file_with_passphrase(
    bytes: &[u8],
    passphrase: PassphraseSource,
) -> Result<Vec<Box<dyn Identity>>> {
    parse_identity_file_inner(bytes, Some(passphrase))
}

fn parse_identity_file_inner(
    bytes: &[u8],
    passphrase: Option<PassphraseSource>,
) -> Result<Vec<Box<dyn Identity>>> {
    // A passphrase-protected file, without a passphrase source: refused.
    let source = |what: &str| {
        passphrase.ok_or_else(|| Error::key(format!("{what}: a passphrase is needed to use it")))
    };
    if EncryptedIdentityFile::detect(bytes) {
        let passphrase = source("the identity file is age-encrypted")?;
        return Ok(vec![Box::new(EncryptedIdentityFile::new(
            bytes.to_vec(),
            passphrase,
        )?)]);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| Error::key("identity file is not text"))?;
    let trimmed = text.trim_start();
    if trimmed.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----") {
        let key = parse_openssh(trimmed.as_bytes())?;
        if key.is_encrypted() {
            let passphrase = source("passphrase-protected OpenSSH key")?;
            return Ok(vec![Box::new(EncryptedSshIdentity::from_key(
                key, passphrase,
            )?)]);
        }
        return Ok(vec![Box::new(SshIdentity::from_keypair(key.key_data())?)]);
    }
    if EncryptedPemIdentity::detect(bytes) {
        return Err(Error::key(
            "passphrase-protected PEM key: its public key is needed too \
             (EncryptedPemIdentity::parse takes the key's .pub file)",
        ));
    }
    if trimmed.starts_with("-----BEGIN RSA PRIVATE KEY-----")
        || trimmed.starts_with("-----BEGIN PRIVATE KEY-----")
    {
        return Ok(vec![Box::new(SshIdentity::parse_rsa_pem(trimmed)?)]);
    }
    if trimmed.starts_with("-----BEGIN") {
        return Err(Error::key(
            "unsupported identity file (of PEM keys, OpenSSH's and unencrypted RSA ones are read)",
        ));
    }
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_identity(line) {
            None => {
                return Err(Error::key(format!(
                    "identity file line {}: not an AGE-SECRET-KEY-1 or AGE-SECRET-KEY-PQ-1 identity",
                    n + 1
                )));
            }
            // A fixed message, never the key's text.
            Some(Err(e)) if line.starts_with("AGE-PLUGIN-") => {
                return Err(Error::key(format!("identity file line {}: {e}", n + 1)));
            }
            Some(Err(_)) => {
                return Err(Error::key(format!(
                    "identity file line {}: malformed identity",
                    n + 1
                )));
            }
            Some(Ok(identity)) => out.push(identity),
        }
    }
    if out.is_empty() {
        return Err(Error::key("no identities in the file"));
    }
    Ok(out)
}
