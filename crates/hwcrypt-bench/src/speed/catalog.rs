//! What `hwcrypt speed` can measure: the ciphers (named as `openssl speed
//! -evp` names them), the families that select several at once, and the key
//! types whose setup gets its own row.

use hwcrypt::registry::Algorithm;
use serde::Serialize;

/// How one message is processed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// ECB encryption (whole blocks).
    Ecb,
    /// CBC encryption (whole blocks, fresh IV per message).
    CbcEnc,
    /// CBC decryption (whole blocks, fresh IV per message).
    CbcDec,
    /// CBC encryption of [`CBC_STREAMS`] independent streams at once, each
    /// a message of the row's size with its own fresh IV (hwcrypt:
    /// `Cbc::encrypt_many`; a peer, which has no such call, encrypts the
    /// streams one after another). Throughput counts every stream.
    CbcEncMany,
    /// CTR with a 128-bit big-endian counter, fresh IV per message.
    Ctr,
    /// CFB128 encryption, fresh IV per message.
    Cfb128,
    /// OFB, fresh IV per message.
    Ofb,
    /// AES-GCM seal: fresh 12-byte nonce and the AAD (13 bytes unless
    /// `--aad` says otherwise) per message, tag out.
    Gcm,
    /// AES-GCM open of a sealed message, in place (see `aead::open`).
    GcmOpen,
    /// ChaCha20-Poly1305 seal, as [`Mode::Gcm`].
    ChaCha20Poly1305,
    /// ChaCha20-Poly1305 open, as [`Mode::GcmOpen`].
    ChaCha20Poly1305Open,
    /// XChaCha20-Poly1305 seal: fresh 24-byte nonce, the AAD.
    XChaCha20Poly1305,
    /// AES-XTS encryption of one data unit (the message) per call, sector
    /// number as tweak, a new sector per message.
    Xts,
}

/// Streams of a [`Mode::CbcEncMany`] message.
pub const CBC_STREAMS: usize = 16;

/// One measurable cipher: a mode with a key size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cipher {
    /// The name, as `openssl speed -evp` spells it (`-dec` for decryption).
    pub name: &'static str,
    /// How a message is processed.
    pub mode: Mode,
    /// The registry algorithm whose backends implement it.
    pub algorithm: Algorithm,
    /// Key length in bytes (64 for AES-256-XTS: both keys).
    pub key_len: usize,
}

impl Cipher {
    /// The smallest message the cipher takes, and whether lengths must be
    /// whole 16-byte blocks; `None` if any length works.
    pub fn size_rule(&self) -> Option<(usize, bool, &'static str)> {
        match self.mode {
            Mode::Ecb | Mode::CbcEnc | Mode::CbcDec | Mode::CbcEncMany => {
                Some((16, true, "ECB and CBC take whole 16-byte blocks"))
            }
            Mode::Xts => Some((16, false, "an XTS data unit is at least 16 bytes")),
            _ => None,
        }
    }

    /// Why `size` cannot be measured for this cipher, if it cannot.
    pub fn rejects(&self, size: usize) -> Option<&'static str> {
        let (min, whole, why) = self.size_rule()?;
        (size < min || (whole && !size.is_multiple_of(16))).then_some(why)
    }

    /// The key whose setup this cipher's key-setup row measures.
    pub fn key_kind(&self) -> KeyKind {
        match self.mode {
            Mode::Gcm | Mode::GcmOpen => KeyKind::AesGcm(self.key_len),
            Mode::ChaCha20Poly1305 | Mode::ChaCha20Poly1305Open => KeyKind::ChaCha20Poly1305,
            Mode::XChaCha20Poly1305 => KeyKind::XChaCha20Poly1305,
            Mode::Xts => KeyKind::AesXts(self.key_len),
            _ => KeyKind::Aes(self.key_len),
        }
    }

    /// The "new key + seal one packet" row this cipher's key type has, if
    /// any (AES-GCM and ChaCha20-Poly1305: the TLS/QUIC connection shape).
    pub fn connection_kind(&self) -> Option<KeyKind> {
        match self.key_kind() {
            KeyKind::AesGcm(n) => Some(KeyKind::AesGcmSeal(n)),
            KeyKind::ChaCha20Poly1305 => Some(KeyKind::ChaCha20Poly1305Seal),
            _ => None,
        }
    }

    /// Messages one operation processes: [`CBC_STREAMS`] for the multi-stream
    /// rows, else 1. A row's throughput counts all of them.
    pub fn streams(&self) -> usize {
        if self.mode == Mode::CbcEncMany {
            CBC_STREAMS
        } else {
            1
        }
    }

    /// Whether this is an AEAD (the AAD length applies to it).
    pub fn is_aead(&self) -> bool {
        self.algorithm != Algorithm::Aes && self.mode != Mode::Xts
    }
}

/// A key type: one key-setup row per key type and implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// An AES key schedule (encryption and decryption), key length in bytes.
    Aes(usize),
    /// An AES-GCM key (schedule plus GHASH key powers), key length in bytes.
    AesGcm(usize),
    /// A ChaCha20-Poly1305 key.
    ChaCha20Poly1305,
    /// An XChaCha20-Poly1305 key.
    XChaCha20Poly1305,
    /// An AES-XTS key pair, total length in bytes.
    AesXts(usize),
    /// A new AES-GCM key, then one sealed message of
    /// [`CONNECTION_LEN`](super::aead::CONNECTION_LEN) bytes.
    AesGcmSeal(usize),
    /// A new ChaCha20-Poly1305 key, then one sealed message, as [`KeyKind::AesGcmSeal`].
    ChaCha20Poly1305Seal,
}

impl KeyKind {
    /// Row name, e.g. `aes-128`, `aes-256-gcm`, `aes-128-xts`.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Aes(16) => "aes-128",
            KeyKind::Aes(24) => "aes-192",
            KeyKind::Aes(_) => "aes-256",
            KeyKind::AesGcm(16) => "aes-128-gcm",
            KeyKind::AesGcm(24) => "aes-192-gcm",
            KeyKind::AesGcm(_) => "aes-256-gcm",
            KeyKind::ChaCha20Poly1305 => "chacha20-poly1305",
            KeyKind::XChaCha20Poly1305 => "xchacha20-poly1305",
            KeyKind::AesXts(32) => "aes-128-xts",
            KeyKind::AesXts(_) => "aes-256-xts",
            KeyKind::AesGcmSeal(16) => "aes-128-gcm + seal 1350 B",
            KeyKind::AesGcmSeal(24) => "aes-192-gcm + seal 1350 B",
            KeyKind::AesGcmSeal(_) => "aes-256-gcm + seal 1350 B",
            KeyKind::ChaCha20Poly1305Seal => "chacha20-poly1305 + seal 1350 B",
        }
    }

    /// Whether the row is a new key plus one sealed message (not key setup alone).
    pub fn is_connection(self) -> bool {
        matches!(self, KeyKind::AesGcmSeal(_) | KeyKind::ChaCha20Poly1305Seal)
    }

    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        match self {
            KeyKind::Aes(n) | KeyKind::AesGcm(n) | KeyKind::AesXts(n) | KeyKind::AesGcmSeal(n) => n,
            KeyKind::ChaCha20Poly1305
            | KeyKind::XChaCha20Poly1305
            | KeyKind::ChaCha20Poly1305Seal => 32,
        }
    }

    /// The registry algorithm whose backends build this key.
    pub fn algorithm(self) -> Algorithm {
        match self {
            KeyKind::Aes(_) => Algorithm::Aes,
            KeyKind::AesGcm(_) | KeyKind::AesGcmSeal(_) => Algorithm::AesGcm,
            KeyKind::ChaCha20Poly1305
            | KeyKind::XChaCha20Poly1305
            | KeyKind::ChaCha20Poly1305Seal => Algorithm::ChaCha20Poly1305,
            KeyKind::AesXts(_) => Algorithm::AesXts,
        }
    }
}

const fn aes(name: &'static str, mode: Mode, key_len: usize) -> Cipher {
    let algorithm = match mode {
        Mode::Gcm | Mode::GcmOpen => Algorithm::AesGcm,
        Mode::Xts => Algorithm::AesXts,
        Mode::ChaCha20Poly1305 | Mode::ChaCha20Poly1305Open | Mode::XChaCha20Poly1305 => {
            Algorithm::ChaCha20Poly1305
        }
        _ => Algorithm::Aes,
    };
    Cipher {
        name,
        mode,
        algorithm,
        key_len,
    }
}

/// Every cipher, in the order a full run measures them.
pub const CIPHERS: &[Cipher] = &[
    aes("aes-128-ecb", Mode::Ecb, 16),
    aes("aes-192-ecb", Mode::Ecb, 24),
    aes("aes-256-ecb", Mode::Ecb, 32),
    aes("aes-128-cbc", Mode::CbcEnc, 16),
    aes("aes-192-cbc", Mode::CbcEnc, 24),
    aes("aes-256-cbc", Mode::CbcEnc, 32),
    aes("aes-128-cbc-x16", Mode::CbcEncMany, 16),
    aes("aes-256-cbc-x16", Mode::CbcEncMany, 32),
    aes("aes-128-cbc-dec", Mode::CbcDec, 16),
    aes("aes-192-cbc-dec", Mode::CbcDec, 24),
    aes("aes-256-cbc-dec", Mode::CbcDec, 32),
    aes("aes-128-ctr", Mode::Ctr, 16),
    aes("aes-192-ctr", Mode::Ctr, 24),
    aes("aes-256-ctr", Mode::Ctr, 32),
    aes("aes-128-cfb", Mode::Cfb128, 16),
    aes("aes-192-cfb", Mode::Cfb128, 24),
    aes("aes-256-cfb", Mode::Cfb128, 32),
    aes("aes-128-ofb", Mode::Ofb, 16),
    aes("aes-192-ofb", Mode::Ofb, 24),
    aes("aes-256-ofb", Mode::Ofb, 32),
    aes("aes-128-gcm", Mode::Gcm, 16),
    aes("aes-256-gcm", Mode::Gcm, 32),
    aes("aes-128-gcm-dec", Mode::GcmOpen, 16),
    aes("aes-256-gcm-dec", Mode::GcmOpen, 32),
    aes("chacha20-poly1305", Mode::ChaCha20Poly1305, 32),
    aes("chacha20-poly1305-dec", Mode::ChaCha20Poly1305Open, 32),
    aes("xchacha20-poly1305", Mode::XChaCha20Poly1305, 32),
    aes("aes-128-xts", Mode::Xts, 32),
    aes("aes-256-xts", Mode::Xts, 64),
];

/// Names that select several ciphers, with what each covers. A cipher's own
/// name always wins over a family of the same spelling.
pub const FAMILIES: &[(&str, &str)] = &[
    ("all", "every cipher"),
    (
        "aes",
        "the AES block modes: ECB, CBC (both ways, and 16 streams at once), CTR, CFB, OFB",
    ),
    (
        "aes-gcm",
        "AES-128-GCM and AES-256-GCM, sealing and opening",
    ),
    ("aes-xts", "AES-128-XTS and AES-256-XTS"),
    (
        "chacha",
        "ChaCha20-Poly1305 (sealing and opening) and XChaCha20-Poly1305",
    ),
    ("aead", "every AEAD: AES-GCM and both ChaCha20-Poly1305s"),
    (
        "aead-dec",
        "the AEAD opening rows (aes-128-gcm-dec, ..., chacha20-poly1305-dec)",
    ),
    (
        "aes-128, aes-192, aes-256",
        "every AES cipher with that key size",
    ),
    (
        "aes-ecb, aes-cbc, aes-ctr, aes-cfb, aes-ofb",
        "one mode, every key size",
    ),
    ("aes-128-cbc-enc", "the same as aes-128-cbc (and 192, 256)"),
];

fn family(name: &str) -> Option<Vec<Cipher>> {
    let pick = |f: &dyn Fn(&Cipher) -> bool| -> Vec<Cipher> {
        CIPHERS.iter().copied().filter(|c| f(c)).collect()
    };
    let v = match name {
        "all" => pick(&|_| true),
        "aes" => pick(&|c| c.algorithm == Algorithm::Aes),
        "aes-gcm" => pick(&|c| c.algorithm == Algorithm::AesGcm),
        "aead-dec" => pick(&|c| matches!(c.mode, Mode::GcmOpen | Mode::ChaCha20Poly1305Open)),
        "aes-xts" => pick(&|c| c.mode == Mode::Xts),
        "chacha" | "chacha20" => pick(&|c| c.algorithm == Algorithm::ChaCha20Poly1305),
        "aead" => pick(&|c| matches!(c.algorithm, Algorithm::AesGcm | Algorithm::ChaCha20Poly1305)),
        "aes-128" | "aes-192" | "aes-256" => {
            let bits: usize = name[4..].parse().ok()?;
            pick(&|c| {
                c.name.starts_with(name)
                    && match c.mode {
                        Mode::Xts => c.key_len * 4 == bits,
                        _ => c.key_len * 8 == bits,
                    }
            })
        }
        "aes-ecb" | "aes-cbc" | "aes-ctr" | "aes-cfb" | "aes-ofb" => {
            let mode = &name[4..];
            pick(&|c| {
                c.algorithm == Algorithm::Aes
                    && c.name[8..]
                        .trim_end_matches("-dec")
                        .trim_end_matches("-x16")
                        == mode
            })
        }
        _ => {
            let base = name.strip_suffix("-enc").unwrap_or(name);
            let v = pick(&|c| c.name == base);
            if v.is_empty() {
                return None;
            }
            v
        }
    };
    Some(v)
}

/// Resolves the names given on the command line (ciphers or families,
/// case-insensitive) into ciphers, in catalogue order without duplicates.
/// No names means every cipher.
pub fn select(names: &[String]) -> Result<Vec<Cipher>, String> {
    if names.is_empty() {
        return Ok(CIPHERS.to_vec());
    }
    let mut chosen = Vec::new();
    for raw in names {
        let name = raw.to_ascii_lowercase();
        let found = match CIPHERS.iter().find(|c| c.name == name) {
            Some(c) => vec![*c],
            None => family(&name).ok_or_else(|| {
                format!(
                    "unknown algorithm '{raw}' (e.g. aes-128-gcm, aes-256-xts, chacha20-poly1305, aes; \
                     `hwcrypt speed --list` names them all)"
                )
            })?,
        };
        chosen.extend(found);
    }
    Ok(CIPHERS
        .iter()
        .copied()
        .filter(|c| chosen.contains(c))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(args: &[&str]) -> Vec<&'static str> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        select(&args).unwrap().iter().map(|c| c.name).collect()
    }

    #[test]
    fn names_and_families() {
        assert_eq!(names(&[]).len(), CIPHERS.len());
        assert_eq!(names(&["AES-128-GCM"]), ["aes-128-gcm"]);
        assert_eq!(names(&["chacha20-poly1305"]), ["chacha20-poly1305"]);
        assert_eq!(names(&["chacha"]).len(), 3);
        assert_eq!(names(&["aes-gcm"]).len(), 4);
        assert_eq!(
            names(&["aead-dec"]),
            [
                "aes-128-gcm-dec",
                "aes-256-gcm-dec",
                "chacha20-poly1305-dec"
            ]
        );
        assert_eq!(
            names(&["aes-256-xts", "aes-128-xts"]),
            ["aes-128-xts", "aes-256-xts"]
        );
        assert_eq!(names(&["aes"]).len(), 20);
        assert_eq!(names(&["aes-cbc"]).len(), 8);
        assert_eq!(names(&["aes-128-cbc-enc"]), ["aes-128-cbc"]);
        assert_eq!(
            names(&["aes-256"]),
            [
                "aes-256-ecb",
                "aes-256-cbc",
                "aes-256-cbc-x16",
                "aes-256-cbc-dec",
                "aes-256-ctr",
                "aes-256-cfb",
                "aes-256-ofb",
                "aes-256-gcm",
                "aes-256-gcm-dec",
                "aes-256-xts"
            ]
        );
        assert_eq!(names(&["aes-128"]).len(), 10);
        assert!(select(&["aes-512-gcm".into()]).is_err());
    }

    #[test]
    fn size_rules() {
        let xts = CIPHERS.iter().find(|c| c.mode == Mode::Xts).unwrap();
        assert!(xts.rejects(8).is_some() && xts.rejects(17).is_none());
        let cbc = CIPHERS.iter().find(|c| c.mode == Mode::CbcDec).unwrap();
        assert!(cbc.rejects(24).is_some() && cbc.rejects(32).is_none());
        let ctr = CIPHERS.iter().find(|c| c.mode == Mode::Ctr).unwrap();
        assert!(ctr.rejects(1).is_none());
        let x16 = CIPHERS.iter().find(|c| c.mode == Mode::CbcEncMany).unwrap();
        assert!(x16.rejects(8).is_some() && x16.rejects(24).is_some());
        assert!(x16.rejects(16).is_none() && x16.rejects(16384).is_none());
        assert_eq!(x16.streams(), CBC_STREAMS);
    }
}
