//! The data of the recommendations: the ciphers, their names in each
//! target's configuration (OpenSSH, TLS 1.3 and 1.2 suites, Go constants),
//! the TLS 1.2 certificate types and the legacy SSH list with its warnings.
//! Not the order they are recommended in or why (`prefs/mod.rs`).

use super::*;

/// A cipher that appears in the recommendations.
///
/// ```
/// use hwcrypt::cpu::{Feature, Features};
/// use hwcrypt::prefs::{aes_hardware_x86_64, recommend_with, Basis, Cipher};
/// let cpu = Features::of(&[Feature::Aes, Feature::Pclmulqdq]);
/// let rec = recommend_with(aes_hardware_x86_64(cpu, cpu), None, false);
/// assert!(rec.aes_hardware.present);
/// assert_eq!(rec.basis, Basis::Rule);
/// assert_eq!(rec.aead_order[0], Cipher::Aes128Gcm);
/// assert_eq!(rec.openssh[0].name, "aes128-gcm@openssh.com");
/// assert!(rec.server.prioritize_chacha);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// AES-128-GCM.
    Aes128Gcm,
    /// AES-256-GCM.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 8439; OpenSSH's variant for SSH).
    ChaCha20Poly1305,
    /// AES-128-CTR (SSH only; needs a separate MAC).
    Aes128Ctr,
    /// AES-192-CTR (SSH only; needs a separate MAC).
    Aes192Ctr,
    /// AES-256-CTR (SSH only; needs a separate MAC).
    Aes256Ctr,
}

impl Cipher {
    /// The three AEADs TLS 1.2/1.3 and SSH share.
    pub const AEADS: [Cipher; 3] = [
        Cipher::Aes128Gcm,
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
    ];

    /// The AES-CTR ciphers of SSH.
    pub const CTRS: [Cipher; 3] = [Cipher::Aes128Ctr, Cipher::Aes192Ctr, Cipher::Aes256Ctr];

    /// Display name, e.g. `AES-128-GCM`.
    pub const fn name(self) -> &'static str {
        match self {
            Cipher::Aes128Gcm => "AES-128-GCM",
            Cipher::Aes256Gcm => "AES-256-GCM",
            Cipher::ChaCha20Poly1305 => "ChaCha20-Poly1305",
            Cipher::Aes128Ctr => "AES-128-CTR",
            Cipher::Aes192Ctr => "AES-192-CTR",
            Cipher::Aes256Ctr => "AES-256-CTR",
        }
    }

    /// Stable lower-case id, e.g. `aes-128-gcm` (JSON).
    pub const fn id(self) -> &'static str {
        match self {
            Cipher::Aes128Gcm => "aes-128-gcm",
            Cipher::Aes256Gcm => "aes-256-gcm",
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305",
            Cipher::Aes128Ctr => "aes-128-ctr",
            Cipher::Aes192Ctr => "aes-192-ctr",
            Cipher::Aes256Ctr => "aes-256-ctr",
        }
    }

    /// The OpenSSH `Ciphers` name.
    pub const fn openssh(self) -> &'static str {
        match self {
            Cipher::Aes128Gcm => "aes128-gcm@openssh.com",
            Cipher::Aes256Gcm => "aes256-gcm@openssh.com",
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305@openssh.com",
            Cipher::Aes128Ctr => "aes128-ctr",
            Cipher::Aes192Ctr => "aes192-ctr",
            Cipher::Aes256Ctr => "aes256-ctr",
        }
    }

    /// The TLS 1.3 suite (IANA and OpenSSL name), for the AEADs.
    pub const fn tls13(self) -> Option<&'static str> {
        match self {
            Cipher::Aes128Gcm => Some("TLS_AES_128_GCM_SHA256"),
            Cipher::Aes256Gcm => Some("TLS_AES_256_GCM_SHA384"),
            Cipher::ChaCha20Poly1305 => Some("TLS_CHACHA20_POLY1305_SHA256"),
            _ => None,
        }
    }

    /// The TLS 1.2 ECDHE suite in OpenSSL/BoringSSL naming, for the AEADs.
    pub const fn tls12(self, auth: Auth) -> Option<&'static str> {
        match (self, auth) {
            (Cipher::Aes128Gcm, Auth::Ecdsa) => Some("ECDHE-ECDSA-AES128-GCM-SHA256"),
            (Cipher::Aes128Gcm, Auth::Rsa) => Some("ECDHE-RSA-AES128-GCM-SHA256"),
            (Cipher::Aes256Gcm, Auth::Ecdsa) => Some("ECDHE-ECDSA-AES256-GCM-SHA384"),
            (Cipher::Aes256Gcm, Auth::Rsa) => Some("ECDHE-RSA-AES256-GCM-SHA384"),
            (Cipher::ChaCha20Poly1305, Auth::Ecdsa) => Some("ECDHE-ECDSA-CHACHA20-POLY1305"),
            (Cipher::ChaCha20Poly1305, Auth::Rsa) => Some("ECDHE-RSA-CHACHA20-POLY1305"),
            _ => None,
        }
    }

    /// The TLS 1.2 ECDHE suite as a Go `crypto/tls` constant, for the AEADs.
    pub const fn go(self, auth: Auth) -> Option<&'static str> {
        match (self, auth) {
            (Cipher::Aes128Gcm, Auth::Ecdsa) => Some("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
            (Cipher::Aes128Gcm, Auth::Rsa) => Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            (Cipher::Aes256Gcm, Auth::Ecdsa) => Some("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
            (Cipher::Aes256Gcm, Auth::Rsa) => Some("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
            (Cipher::ChaCha20Poly1305, Auth::Ecdsa) => {
                Some("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256")
            }
            (Cipher::ChaCha20Poly1305, Auth::Rsa) => {
                Some("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256")
            }
            _ => None,
        }
    }

    /// Whether this is one of the [`AEADS`](Cipher::AEADS).
    pub const fn is_aead(self) -> bool {
        matches!(
            self,
            Cipher::Aes128Gcm | Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305
        )
    }

    pub(super) const fn aes_bits(self) -> u32 {
        match self {
            Cipher::Aes128Gcm | Cipher::Aes128Ctr => 128,
            Cipher::Aes192Ctr => 192,
            Cipher::Aes256Gcm | Cipher::Aes256Ctr => 256,
            Cipher::ChaCha20Poly1305 => 0,
        }
    }
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The certificate type a TLS 1.2 ECDHE suite authenticates with.
///
/// ```
/// use hwcrypt::prefs::{aes_hardware_x86_64, recommend_with};
/// use hwcrypt::cpu::Features;
/// // Without AES hardware ChaCha20 comes first, for ECDSA and RSA certificates alike.
/// let rec = recommend_with(aes_hardware_x86_64(Features::NONE, Features::NONE), None, false);
/// assert_eq!(rec.tls12[0].name, "ECDHE-ECDSA-CHACHA20-POLY1305");
/// assert_eq!(rec.tls12[1].name, "ECDHE-RSA-CHACHA20-POLY1305");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// ECDSA certificate.
    Ecdsa,
    /// RSA certificate.
    Rsa,
}

/// The legacy SSH ciphers [`Options::ssh_legacy`] appends: AES-CBC only
/// (3DES, with its 64-bit block, stays out even then).
pub const SSH_LEGACY: [&str; 3] = ["aes128-cbc", "aes192-cbc", "aes256-cbc"];

/// The warning that comes with [`SSH_LEGACY`].
pub const SSH_LEGACY_WARNING: &str = "legacy CBC ciphers enabled: SSH in CBC mode has known \
     plaintext-recovery attacks and, with -etm MACs, Terrapin (CVE-2023-48795); keep them only \
     while a peer that cannot do better still needs them";

/// What the OpenSSH snippets say about chacha20-poly1305@openssh.com and
/// Terrapin: the prefix-truncation attack needs a peer without strict key
/// exchange; AES-GCM is not affected.
pub const SSH_TERRAPIN_NOTE: &str = "chacha20-poly1305@openssh.com resists Terrapin \
     (CVE-2023-48795) only when both ends use strict key exchange (OpenSSH 9.6+ or a patched \
     build); the GCM ciphers are not affected";
