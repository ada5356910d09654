//! Cipher preferences for TLS and SSH, chosen from this machine's hardware
//! (`hwcrypt prefs`).
//!
//! The decision is BoringSSL's "AES hardware" test: on x86-64 AES-NI **and**
//! PCLMULQDQ (carry-less multiply for GHASH), on aarch64 the ARMv8 AES **and**
//! PMULL instructions (Linux reports both in `getauxval(AT_HWCAP)`). With
//! both, AES-GCM is the fastest AEAD and goes first; without them,
//! ChaCha20-Poly1305 is several times faster than any AES in software and
//! goes first. Go's `crypto/tls` (`hasAESGCMHardwareSupport`) makes the same
//! test. The decision respects `HWCRYPT_CPU`: `-aes`, `-pclmulqdq` or `none`
//! take the AES hardware away (on aarch64 `aes` stands for AES and
//! `pclmulqdq` for PMULL).
//!
//! The decision functions are pure ([`aes_hardware_x86_64`],
//! [`aes_hardware_aarch64`], [`recommend_with`]) so both architectures'
//! logic is tested on any machine; [`recommend`] reads this machine.
//!
//! [`Options::measure`] replaces the rule by a quick calibration of hwcrypt's
//! own ciphers ([`measure()`]) and ranks by measured throughput.
//!
//! ```
//! use hwcrypt::prefs::{self, Options};
//! let rec = prefs::recommend(&Options::default())?;
//! let first = &rec.tls13[0].name;
//! assert!(*first == "TLS_AES_128_GCM_SHA256" || *first == "TLS_CHACHA20_POLY1305_SHA256");
//! println!("Ciphers {}", rec.openssh_ciphers());
//! # Ok::<(), hwcrypt::Error>(())
//! ```

mod measure;

pub use measure::{BATCH, Calibration, MEASURED, Measurement, ROUNDS, SIZES, measure};

use crate::cpu::{self, Feature, Features, Mask};
use crate::error::Result;
use core::fmt;

/// Linux arm64 `AT_HWCAP` bits (`arch/arm64/include/uapi/asm/hwcap.h`).
pub mod hwcap {
    /// `HWCAP_AES`: the ARMv8 AES instructions (`aese`, `aesmc`, ...).
    pub const AES: u64 = 1 << 3;
    /// `HWCAP_PMULL`: 64x64-bit polynomial multiply (`pmull`, `pmull2`), for GHASH.
    pub const PMULL: u64 = 1 << 4;
}

/// The processor architecture a decision was made for.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// x86-64: CPUID bits, narrowed by `HWCRYPT_CPU`.
    X86_64,
    /// aarch64: `AT_HWCAP` bits, narrowed by `HWCRYPT_CPU`.
    Aarch64,
    /// Anything else: no AES hardware test is known, so none is assumed.
    Other,
}

impl Arch {
    /// The architecture this library was built for.
    pub const fn current() -> Arch {
        if cfg!(target_arch = "x86_64") {
            Arch::X86_64
        } else if cfg!(target_arch = "aarch64") {
            Arch::Aarch64
        } else {
            Arch::Other
        }
    }

    /// `x86_64`, `aarch64` or `other`.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
            Arch::Other => "other",
        }
    }

    /// The instructions that make up "AES hardware" here, for messages.
    const fn instructions(self) -> &'static str {
        match self {
            Arch::X86_64 => "AES-NI + PCLMULQDQ",
            Arch::Aarch64 => "ARMv8 AES + PMULL",
            Arch::Other => "AES hardware",
        }
    }
}

/// Whether a machine has "AES hardware" in BoringSSL's sense, and why.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AesHardware {
    /// The architecture the test was made for.
    pub arch: Arch,
    /// AES instructions and a carry-less multiply are both usable.
    pub present: bool,
    /// One line: what was found, e.g. `AES-NI and PCLMULQDQ usable`.
    pub reason: String,
}

/// The x86-64 test: AES-NI and PCLMULQDQ both usable. `detected` is what the
/// CPU has, `usable` the same after the `HWCRYPT_CPU` mask; the difference
/// only changes the wording of the reason.
pub fn aes_hardware_x86_64(detected: Features, usable: Features) -> AesHardware {
    let parts = [(Feature::Aes, "AES-NI"), (Feature::Pclmulqdq, "PCLMULQDQ")];
    let missing: Vec<String> = parts
        .iter()
        .filter(|(f, _)| !usable.has(*f))
        .map(|(f, name)| {
            if detected.has(*f) {
                format!("{name} switched off by {}", cpu::MASK_ENV_VAR)
            } else {
                format!("the CPU lacks {name}")
            }
        })
        .collect();
    decision(Arch::X86_64, "AES-NI and PCLMULQDQ usable", missing)
}

/// The aarch64 test: `HWCAP_AES` and `HWCAP_PMULL` both set in `hwcap` (the
/// value of `getauxval(AT_HWCAP)` on Linux) and not switched off by `mask`
/// (`-aes` stands for AES, `-pclmulqdq` for PMULL, `none` for both).
pub fn aes_hardware_aarch64(hwcap: u64, mask: Mask) -> AesHardware {
    let parts = [
        (hwcap::AES, Feature::Aes, "AES"),
        (hwcap::PMULL, Feature::Pclmulqdq, "PMULL"),
    ];
    let missing: Vec<String> = parts
        .iter()
        .filter_map(|&(bit, feature, name)| {
            if hwcap & bit == 0 {
                Some(format!("AT_HWCAP lacks {name}"))
            } else if mask.removed().has(feature) {
                Some(format!("{name} switched off by {}", cpu::MASK_ENV_VAR))
            } else {
                None
            }
        })
        .collect();
    decision(
        Arch::Aarch64,
        "ARMv8 AES and PMULL usable (AT_HWCAP)",
        missing,
    )
}

fn decision(arch: Arch, present: &str, missing: Vec<String>) -> AesHardware {
    AesHardware {
        arch,
        present: missing.is_empty(),
        reason: if missing.is_empty() {
            present.to_string()
        } else {
            missing.join(", ")
        },
    }
}

/// The test for this machine, with `HWCRYPT_CPU` applied.
///
/// Fails only when `HWCRYPT_CPU` does not parse.
pub fn aes_hardware() -> Result<AesHardware> {
    #[cfg(target_arch = "x86_64")]
    {
        Ok(aes_hardware_x86_64(cpu::detected(), cpu::features()?))
    }
    #[cfg(target_arch = "aarch64")]
    {
        Ok(aes_hardware_aarch64(aarch64_hwcap(), cpu::mask()?))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        cpu::mask()?;
        Ok(AesHardware {
            arch: Arch::Other,
            present: false,
            reason: "no AES hardware test for this architecture".to_string(),
        })
    }
}

/// The AES and PMULL bits of `AT_HWCAP`, through the standard library, which
/// reads `getauxval(AT_HWCAP)` on Linux (and the OS's equivalent elsewhere).
/// Its `aes` feature already requires PMULL as well.
#[cfg(target_arch = "aarch64")]
fn aarch64_hwcap() -> u64 {
    let mut bits = 0;
    if std::arch::is_aarch64_feature_detected!("aes") {
        bits |= hwcap::AES;
    }
    if std::arch::is_aarch64_feature_detected!("pmull") {
        bits |= hwcap::PMULL;
    }
    bits
}

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

    const fn aes_bits(self) -> u32 {
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

/// One entry of an ordered list, with why it is there.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The name as the target's configuration spells it.
    pub name: &'static str,
    /// One line: why it is at this position.
    pub reason: String,
}

/// How the order was chosen.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// By the AES-hardware rule.
    Rule,
    /// By throughput measured with hwcrypt's own ciphers.
    Measured,
}

impl Basis {
    /// `rule` or `measured`.
    pub const fn name(self) -> &'static str {
        match self {
            Basis::Rule => "rule",
            Basis::Measured => "measured",
        }
    }
}

/// What a TLS server should do about the client's cipher order.
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerAdvice {
    /// Use the server's order (OpenSSL `ServerPreference`, nginx
    /// `ssl_prefer_server_ciphers on`).
    pub server_preference: bool,
    /// Serve ChaCha20-Poly1305 to clients that list it first (OpenSSL
    /// `PrioritizeChaCha`, s2n-tls "ChaCha20 boosting"; BoringSSL expresses
    /// it with an equal-preference group, Go does it by itself).
    pub prioritize_chacha: bool,
    /// Why.
    pub reason: String,
}

/// What [`recommend`] should do.
///
/// ```
/// use hwcrypt::prefs::{recommend, Options};
/// let rec = recommend(&Options { ssh_legacy: true, ..Options::default() })?;
/// assert!(rec.openssh_warning.is_some());
/// println!("{}", rec.openssh_snippet());
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Rank by a quick calibration ([`measure()`]) instead of by rule.
    pub measure: bool,
    /// Append the legacy SSH ciphers [`SSH_LEGACY`] (with [`SSH_LEGACY_WARNING`]).
    pub ssh_legacy: bool,
}

/// The recommendation for one machine, as data; the `*_snippet` / `*_config`
/// methods render it for each target.
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
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// The AES-hardware decision.
    pub aes_hardware: AesHardware,
    /// Rule or measurement.
    pub basis: Basis,
    /// The calibration, when [`Basis::Measured`].
    pub calibration: Option<Calibration>,
    /// The three AEADs, best first.
    pub aead_order: Vec<Cipher>,
    /// OpenSSH `Ciphers`, best first.
    pub openssh: Vec<Choice>,
    /// Set when legacy SSH ciphers were added.
    pub openssh_warning: Option<&'static str>,
    /// TLS 1.3 suites, best first (OpenSSL `Ciphersuites`).
    pub tls13: Vec<Choice>,
    /// TLS 1.2 ECDHE AEAD suites, best first (OpenSSL cipher string).
    pub tls12: Vec<Choice>,
    /// Server preference and ChaCha boosting.
    pub server: ServerAdvice,
    /// BoringSSL TLS 1.2 cipher list as equal-preference groups.
    pub boringssl_groups: Vec<Vec<&'static str>>,
    /// Go `crypto/tls` TLS 1.2 suite constants (an allow-list to Go).
    pub go_cipher_suites: Vec<&'static str>,
}

/// The recommendation for this machine: the AES-hardware rule, or a
/// calibration when `options.measure`.
///
/// Fails only when `HWCRYPT_CPU` does not parse.
pub fn recommend(options: &Options) -> Result<Recommendation> {
    let aes = aes_hardware()?;
    let calibration = if options.measure {
        Some(measure()?)
    } else {
        None
    };
    Ok(recommend_with(aes, calibration, options.ssh_legacy))
}

/// The recommendation for a given decision and, optionally, calibration
/// (pure: no CPU access).
pub fn recommend_with(
    aes_hardware: AesHardware,
    calibration: Option<Calibration>,
    ssh_legacy: bool,
) -> Recommendation {
    let (aead_order, ctr_order) = match &calibration {
        None => rule_order(aes_hardware.present),
        Some(cal) => measured_order(aes_hardware.present, &cal.measurements),
    };
    let why = |c: Cipher| match &calibration {
        None => rule_reason(c, &aes_hardware),
        Some(cal) => measured_reason(c, &cal.measurements, aead_order[0]),
    };

    let mut openssh: Vec<Choice> = aead_order
        .iter()
        .chain(&ctr_order)
        .map(|&c| Choice {
            name: c.openssh(),
            reason: why(c),
        })
        .collect();
    if ssh_legacy {
        for name in SSH_LEGACY {
            openssh.push(Choice {
                name,
                reason: "legacy CBC: only for a peer that offers nothing above (see the warning)"
                    .to_string(),
            });
        }
    }

    let tls13 = aead_order
        .iter()
        .filter_map(|&c| {
            c.tls13().map(|name| Choice {
                name,
                reason: why(c),
            })
        })
        .collect();
    let mut tls12 = Vec::new();
    for &c in &aead_order {
        if let (Some(ecdsa), Some(rsa)) = (c.tls12(Auth::Ecdsa), c.tls12(Auth::Rsa)) {
            tls12.push(Choice {
                name: ecdsa,
                reason: format!("ECDSA certificate; {}", why(c)),
            });
            tls12.push(Choice {
                name: rsa,
                reason: "RSA certificate; the same cipher as the line above".to_string(),
            });
        }
    }

    let chacha_first = aead_order[0] == Cipher::ChaCha20Poly1305;
    let server = server_advice(chacha_first, &aes_hardware, calibration.is_some());

    // BoringSSL: with ChaCha20 not first, one equal-preference group per
    // certificate type lets the client's order decide, which gives ChaCha20
    // to exactly the clients that list it above every AES-GCM suite (the
    // PrioritizeChaCha signal) and the client's own AES-GCM choice, cheap on
    // this server, to everyone else. With ChaCha20 first, a strict order.
    let boringssl_groups = if chacha_first {
        aead_order
            .iter()
            .flat_map(|&c| [c.tls12(Auth::Ecdsa), c.tls12(Auth::Rsa)])
            .flatten()
            .map(|s| vec![s])
            .collect()
    } else {
        [Auth::Ecdsa, Auth::Rsa]
            .iter()
            .map(|&auth| aead_order.iter().filter_map(|c| c.tls12(auth)).collect())
            .collect()
    };
    let go_cipher_suites = aead_order
        .iter()
        .flat_map(|&c| [c.go(Auth::Ecdsa), c.go(Auth::Rsa)])
        .flatten()
        .collect();

    Recommendation {
        aes_hardware,
        basis: if calibration.is_some() {
            Basis::Measured
        } else {
            Basis::Rule
        },
        calibration,
        aead_order,
        openssh,
        openssh_warning: ssh_legacy.then_some(SSH_LEGACY_WARNING),
        tls13,
        tls12,
        server,
        boringssl_groups,
        go_cipher_suites,
    }
}

/// The AES-hardware rule: AES-GCM first with it, ChaCha20-Poly1305 first
/// without; AES-128 before AES-256 (10 rounds instead of 14, and 128-bit
/// keys are ample); the SSH CTR modes after every AEAD.
fn rule_order(aes_hardware: bool) -> (Vec<Cipher>, Vec<Cipher>) {
    let aeads = if aes_hardware {
        vec![
            Cipher::Aes128Gcm,
            Cipher::Aes256Gcm,
            Cipher::ChaCha20Poly1305,
        ]
    } else {
        vec![
            Cipher::ChaCha20Poly1305,
            Cipher::Aes128Gcm,
            Cipher::Aes256Gcm,
        ]
    };
    (aeads, Cipher::CTRS.to_vec())
}

/// The figure a cipher is ranked by: the geometric mean of its throughput
/// at the measured sizes (0 when unmeasured).
pub fn score(measurements: &[Measurement], cipher: Cipher) -> f64 {
    let mut product = 1.0;
    for size in SIZES {
        match measure::find(measurements, cipher, size) {
            Some(g) if g > 0.0 => product *= g,
            _ => return 0.0,
        }
    }
    product.powf(1.0 / SIZES.len() as f64)
}

/// The AEADs by measured speed, then the CTR modes by measured speed: CTR
/// stays after the AEADs because OpenSSH pairs it with a separate MAC pass
/// that the cipher-only figure leaves out. Ties keep the rule's order.
fn measured_order(aes_hardware: bool, ms: &[Measurement]) -> (Vec<Cipher>, Vec<Cipher>) {
    let (mut aeads, mut ctrs) = rule_order(aes_hardware);
    let by_score = |a: &Cipher, b: &Cipher| score(ms, *b).total_cmp(&score(ms, *a));
    aeads.sort_by(by_score);
    ctrs.sort_by(by_score);
    (aeads, ctrs)
}

fn rule_reason(c: Cipher, aes: &AesHardware) -> String {
    let hw = aes.arch.instructions();
    match (c, aes.present) {
        (Cipher::Aes128Gcm, true) => {
            format!("{hw}: AES and GHASH in hardware, one pass; the fastest AEAD here")
        }
        (Cipher::Aes256Gcm, true) => {
            "the same hardware path, 14 rounds instead of 10 (up to 40% slower); for peers that want AES-256"
                .to_string()
        }
        (Cipher::ChaCha20Poly1305, true) => {
            "for peers without AES hardware (phones, small ARM): several times faster there"
                .to_string()
        }
        (Cipher::ChaCha20Poly1305, false) => format!(
            "no AES hardware ({}): several times faster than software AES-GCM, constant time",
            aes.reason
        ),
        (Cipher::Aes128Gcm, false) => {
            "AES-GCM without full hardware support here: slow; for peers that offer nothing else"
                .to_string()
        }
        (Cipher::Aes256Gcm, false) => {
            "as AES-128-GCM, 14 rounds instead of 10; for peers that want AES-256".to_string()
        }
        (ctr, _) => format!(
            "{}-bit AES-CTR for peers without the AEAD modes: a separate MAC pass (use an -etm MAC)",
            ctr.aes_bits()
        ),
    }
}

fn measured_reason(c: Cipher, ms: &[Measurement], best: Cipher) -> String {
    let fig = |size| measure::find(ms, c, size).unwrap_or(0.0);
    let backend = ms
        .iter()
        .find(|m| m.cipher == c)
        .map_or("?", |m| m.backend.name());
    let figures = format!(
        "{:.2} GB/s at {} B, {:.2} GB/s at {} KiB ({backend})",
        fig(SIZES[0]),
        SIZES[0],
        fig(SIZES[1]),
        SIZES[1] / 1024
    );
    if !c.is_aead() {
        return format!(
            "{figures}; cipher only: SSH adds a separate MAC pass, so CTR stays after the AEADs"
        );
    }
    if c == best {
        return format!("{figures}; the fastest AEAD measured");
    }
    let ratio = score(ms, best) / score(ms, c).max(f64::MIN_POSITIVE);
    format!("{figures}; {ratio:.1}x slower than {best}")
}

fn server_advice(chacha_first: bool, aes: &AesHardware, measured: bool) -> ServerAdvice {
    let basis = if measured {
        "measured here"
    } else if aes.present {
        "this server has AES hardware"
    } else {
        "this server lacks AES hardware"
    };
    if chacha_first {
        ServerAdvice {
            server_preference: true,
            prioritize_chacha: false,
            reason: format!(
                "ChaCha20-Poly1305 comes first ({basis}): with server preference every client that \
                 offers it gets it, sparing this server software AES; PrioritizeChaCha would change \
                 nothing (harmless in a config shared with AES-hardware servers)"
            ),
        }
    } else {
        ServerAdvice {
            server_preference: true,
            prioritize_chacha: true,
            reason: format!(
                "AES-GCM comes first ({basis}), but a client that lists ChaCha20 first does so \
                 because it lacks AES hardware (phones, small ARM): AES-GCM would cost it several \
                 times what ChaCha20 costs this server, so serve those clients ChaCha20 and everyone \
                 else this server's order"
            ),
        }
    }
}

/// `text` as `#` comment lines of at most about 80 characters.
fn comment(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("#");
    for word in text.split_whitespace() {
        if line.len() > 1 && line.len() + 1 + word.len() > 80 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

fn names(list: &[Choice]) -> impl Iterator<Item = &'static str> + '_ {
    list.iter().map(|c| c.name)
}

impl Recommendation {
    /// OpenSSH `Ciphers` value (comma-separated).
    pub fn openssh_ciphers(&self) -> String {
        names(&self.openssh).collect::<Vec<_>>().join(",")
    }

    /// OpenSSL TLS 1.3 `Ciphersuites` value (colon-separated).
    pub fn openssl_ciphersuites(&self) -> String {
        names(&self.tls13).collect::<Vec<_>>().join(":")
    }

    /// OpenSSL TLS 1.2 cipher string (colon-separated).
    pub fn openssl_cipher_string(&self) -> String {
        names(&self.tls12).collect::<Vec<_>>().join(":")
    }

    /// BoringSSL TLS 1.2 cipher string: `[a|b]` is an equal-preference group.
    pub fn boringssl_cipher_string(&self) -> String {
        self.boringssl_groups
            .iter()
            .map(|g| match g.as_slice() {
                [one] => (*one).to_string(),
                many => format!("[{}]", many.join("|")),
            })
            .collect::<Vec<_>>()
            .join(":")
    }

    fn legacy_comment(&self) -> String {
        match self.openssh_warning {
            Some(w) => comment(&format!("WARNING: {w}")),
            None => String::new(),
        }
    }

    /// A `Host *` block for `~/.ssh/config`.
    pub fn ssh_client_config(&self) -> String {
        format!(
            "# ~/.ssh/config: ssh keeps the first value it reads for each option, so put this\n\
             # block at the end (host-specific blocks above it still win).\n\
             # SSH uses the first cipher in the client's list that the server allows.\n\
             {}Host *\n    Ciphers {}\n",
            self.legacy_comment(),
            self.openssh_ciphers()
        )
    }

    /// The `Ciphers` line for `sshd_config`.
    pub fn sshd_config(&self) -> String {
        format!(
            "# /etc/ssh/sshd_config (sshd also keeps the first value it reads: mind\n\
             # sshd_config.d/ includes). The client's order picks the cipher; this list\n\
             # only allows, so keep ChaCha20-Poly1305 in it for clients without AES\n\
             # hardware. Check with `sshd -t`, then reload sshd.\n\
             {}{}Ciphers {}\n",
            comment(&format!("Note: {SSH_TERRAPIN_NOTE}.")),
            self.legacy_comment(),
            self.openssh_ciphers()
        )
    }

    /// Both OpenSSH snippets.
    pub fn openssh_snippet(&self) -> String {
        format!("{}\n{}", self.ssh_client_config(), self.sshd_config())
    }

    fn openssl_options(&self) -> &'static str {
        if self.server.prioritize_chacha {
            "ServerPreference,PrioritizeChaCha"
        } else {
            "ServerPreference"
        }
    }

    /// A self-contained OpenSSL (1.1.1+) configuration file: the system
    /// default TLS settings for every program that uses the library.
    pub fn openssl_conf(&self) -> String {
        format!(
            "# OpenSSL 1.1.1+ configuration: use with OPENSSL_CONF=/path/to/this.cnf, or merge\n\
             # it into openssl.cnf (add `ssl_conf = hwcrypt_ssl` to the section its\n\
             # `openssl_conf` line names, instead of the first line here). Programs that set\n\
             # their own ciphers (nginx, ...) override these defaults.\n\
             # Options only act in servers: {}\n\
             openssl_conf = hwcrypt_init\n\
             \n\
             [hwcrypt_init]\n\
             ssl_conf = hwcrypt_ssl\n\
             \n\
             [hwcrypt_ssl]\n\
             system_default = hwcrypt_tls\n\
             \n\
             [hwcrypt_tls]\n\
             MinProtocol = TLSv1.2\n\
             # TLS 1.2 (SSL_CTX_set_cipher_list)\n\
             CipherString = {}\n\
             # TLS 1.3 (SSL_CTX_set_ciphersuites)\n\
             Ciphersuites = {}\n\
             Options = {}\n",
            if self.server.prioritize_chacha {
                "PrioritizeChaCha serves ChaCha20 to clients that list it first."
            } else {
                "ChaCha20-Poly1305 already comes first; PrioritizeChaCha not needed."
            },
            self.openssl_cipher_string(),
            self.openssl_ciphersuites(),
            self.openssl_options()
        )
    }

    /// nginx directives (1.19.4+ for `ssl_conf_command`, OpenSSL 1.1.1+).
    pub fn nginx_conf(&self) -> String {
        let chacha = if self.server.prioritize_chacha {
            "# Serve ChaCha20-Poly1305 to clients that list it first (no AES hardware there).\n\
             ssl_conf_command Options PrioritizeChaCha;\n"
        } else {
            "# PrioritizeChaCha not needed: ChaCha20-Poly1305 already comes first.\n"
        };
        format!(
            "# nginx 1.19.4+ built with OpenSSL 1.1.1+; in http {{ }} so every server block\n\
             # inherits it. Check with `nginx -t`, then reload.\n\
             ssl_protocols TLSv1.2 TLSv1.3;\n\
             ssl_ciphers {};\n\
             ssl_conf_command Ciphersuites {};\n\
             ssl_prefer_server_ciphers on;\n\
             {chacha}",
            self.openssl_cipher_string(),
            self.openssl_ciphersuites()
        )
    }

    /// BoringSSL C calls for a server context.
    pub fn boringssl_snippet(&self) -> String {
        let groups = if self.server.prioritize_chacha {
            "// [a|b|c] is an equal-preference group: with server preference on, the\n\
             // client's order decides inside it, so a client that lists ChaCha20 first\n\
             // (no AES hardware) gets it and any other gets the AES-GCM it prefers.\n"
        } else {
            "// A strict order, no groups: ChaCha20-Poly1305 wins for every client that\n\
             // offers it, sparing this server software AES.\n"
        };
        format!(
            "// BoringSSL server, TLS 1.2 suites. TLS 1.3 suites are not configurable in\n\
             // BoringSSL: it follows the client's order when it has AES hardware and\n\
             // prefers ChaCha20-Poly1305 when it has none.\n\
             {groups}\
             if (!SSL_CTX_set_strict_cipher_list(ctx,\n        \"{}\")) {{\n    /* handle the error */\n}}\n\
             SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);\n",
            self.boringssl_cipher_string()
        )
    }

    /// A Go `tls.Config` with what Go honours.
    pub fn go_snippet(&self) -> String {
        let mut suites = String::new();
        for s in &self.go_cipher_suites {
            suites.push_str(&format!("\t\ttls.{s},\n"));
        }
        format!(
            "// Go crypto/tls (1.17+) orders cipher suites itself and ignores any order given:\n\
             // AES-GCM first only when this machine has AES-GCM hardware (AES-NI + PCLMULQDQ,\n\
             // or ARMv8 AES + PMULL) and, as a server, only when the client also lists\n\
             // AES-GCM first; ChaCha20-Poly1305 otherwise (ChaCha boosting built in).\n\
             // TLS 1.3 suites are not configurable; CipherSuites is an allow-list for\n\
             // TLS 1.0-1.2 whose order is ignored; PreferServerCipherSuites is ignored.\n\
             // Go reads the CPU itself: HWCRYPT_CPU does not affect it.\n\
             cfg := &tls.Config{{\n\
             \tMinVersion: tls.VersionTLS12,\n\
             \tCipherSuites: []uint16{{\n\
             {suites}\
             \t}},\n\
             }}\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;

    fn x86(features: &[Feature]) -> AesHardware {
        let f = Features::of(features);
        aes_hardware_x86_64(f, f)
    }

    fn ssh_names(r: &Recommendation) -> Vec<&'static str> {
        names(&r.openssh).collect()
    }

    #[test]
    fn x86_needs_both_aesni_and_pclmulqdq() {
        assert!(x86(&[Feature::Aes, Feature::Pclmulqdq]).present);
        assert!(x86(&Feature::ALL).present);
        let no_clmul = x86(&[Feature::Aes, Feature::Ssse3, Feature::Avx]);
        assert!(!no_clmul.present);
        assert_eq!(no_clmul.reason, "the CPU lacks PCLMULQDQ");
        assert!(!x86(&[Feature::Pclmulqdq]).present);
        assert!(!x86(&[]).present);
        // Masked rather than missing: same decision, different wording.
        let all = Features::of(&Feature::ALL);
        let masked = aes_hardware_x86_64(all, Mask::parse("-aes").unwrap().apply(all));
        assert!(!masked.present);
        assert_eq!(masked.reason, "AES-NI switched off by HWCRYPT_CPU");
        let none = aes_hardware_x86_64(all, Mask::parse("none").unwrap().apply(all));
        assert!(!none.present && none.reason.contains("PCLMULQDQ switched off"));
        assert!(aes_hardware_x86_64(all, Mask::parse("-vaes").unwrap().apply(all)).present);
    }

    #[test]
    fn aarch64_needs_both_aes_and_pmull_hwcaps() {
        let none = Mask::default();
        let fp_asimd = 0b11;
        assert!(aes_hardware_aarch64(fp_asimd | hwcap::AES | hwcap::PMULL, none).present);
        let a = aes_hardware_aarch64(fp_asimd | hwcap::AES, none);
        assert!(!a.present);
        assert_eq!(a.reason, "AT_HWCAP lacks PMULL");
        assert!(!aes_hardware_aarch64(hwcap::PMULL, none).present);
        assert!(!aes_hardware_aarch64(0, none).present);
        // HWCRYPT_CPU narrows it: -aes takes AES, -pclmulqdq PMULL, none both.
        let both = hwcap::AES | hwcap::PMULL;
        for (mask, gone) in [("-aes", "AES"), ("-pclmulqdq", "PMULL"), ("none", "AES")] {
            let d = aes_hardware_aarch64(both, Mask::parse(mask).unwrap());
            assert!(!d.present, "{mask}");
            assert!(
                d.reason.contains(&format!("{gone} switched off")),
                "{mask}: {}",
                d.reason
            );
        }
        assert!(aes_hardware_aarch64(both, Mask::parse("-vaes,-avx2").unwrap()).present);
        assert_eq!(aes_hardware_aarch64(both, none).arch, Arch::Aarch64);
    }

    #[test]
    fn rule_flips_chacha_first_without_aes_hardware() {
        let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
        let without = recommend_with(x86(&[Feature::Aes]), None, false);
        assert_eq!(with.basis, Basis::Rule);
        assert_eq!(
            ssh_names(&with),
            [
                "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com",
                "chacha20-poly1305@openssh.com",
                "aes128-ctr",
                "aes192-ctr",
                "aes256-ctr"
            ]
        );
        assert_eq!(
            ssh_names(&without),
            [
                "chacha20-poly1305@openssh.com",
                "aes128-gcm@openssh.com",
                "aes256-gcm@openssh.com",
                "aes128-ctr",
                "aes192-ctr",
                "aes256-ctr"
            ]
        );
        assert_eq!(
            with.openssl_ciphersuites(),
            "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
        );
        assert_eq!(
            without.openssl_ciphersuites(),
            "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            with.openssl_cipher_string(),
            "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
             ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:\
             ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
        );
        assert!(
            without.tls12[0].name.contains("CHACHA20")
                && without.tls12[1].name.contains("CHACHA20")
        );
        assert!(without.go_cipher_suites[0].contains("CHACHA20"));
        assert!(with.go_cipher_suites[0].contains("AES_128_GCM"));
        // Every choice has a one-line reason.
        for r in [&with, &without] {
            for c in r.openssh.iter().chain(&r.tls13).chain(&r.tls12) {
                assert!(!c.reason.is_empty() && !c.reason.contains('\n'), "{c:?}");
            }
        }
        assert_eq!(with.aes_hardware.arch, Arch::X86_64);
    }

    #[test]
    fn server_advice_boosts_chacha_only_where_aes_leads() {
        let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
        assert!(with.server.server_preference && with.server.prioritize_chacha);
        assert!(
            with.openssl_conf()
                .contains("Options = ServerPreference,PrioritizeChaCha\n")
        );
        assert!(
            with.nginx_conf()
                .contains("ssl_conf_command Options PrioritizeChaCha;")
        );
        let without = recommend_with(x86(&[]), None, false);
        assert!(without.server.server_preference && !without.server.prioritize_chacha);
        assert!(
            without
                .openssl_conf()
                .contains("Options = ServerPreference\n")
        );
        assert!(!without.nginx_conf().contains("Options PrioritizeChaCha;"));
        assert!(
            without
                .nginx_conf()
                .contains("ssl_prefer_server_ciphers on;")
        );
    }

    #[test]
    fn boringssl_groups_let_the_client_pick_only_when_aes_leads() {
        let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
        assert_eq!(
            with.boringssl_cipher_string(),
            "[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-AES256-GCM-SHA384|ECDHE-ECDSA-CHACHA20-POLY1305]:\
             [ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-AES256-GCM-SHA384|ECDHE-RSA-CHACHA20-POLY1305]"
        );
        let without = recommend_with(x86(&[]), None, false);
        assert_eq!(
            without.boringssl_cipher_string(),
            "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:\
             ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
             ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"
        );
        // Same suites in both, each exactly once.
        for r in [&with, &without] {
            let mut all: Vec<_> = r.boringssl_groups.concat();
            all.sort_unstable();
            let mut tls12: Vec<_> = names(&r.tls12).collect();
            tls12.sort_unstable();
            assert_eq!(all, tls12);
        }
    }

    fn fake(figures: &[(Cipher, f64)]) -> Calibration {
        let mut measurements = Vec::new();
        for &(cipher, gbps) in figures {
            for size in SIZES {
                measurements.push(Measurement {
                    cipher,
                    backend: Backend::Soft,
                    size,
                    // Bigger messages a bit faster, as in real life.
                    gbps: gbps * size as f64 / (size as f64 + 512.0),
                });
            }
        }
        Calibration {
            measurements,
            elapsed: core::time::Duration::from_millis(1),
        }
    }

    #[test]
    fn measured_order_follows_the_figures_not_the_rule() {
        // AES hardware by rule, but ChaCha20 measured fastest: the measurement wins.
        let cal = fake(&[
            (Cipher::Aes128Gcm, 2.0),
            (Cipher::Aes256Gcm, 1.5),
            (Cipher::ChaCha20Poly1305, 3.0),
            (Cipher::Aes128Ctr, 9.0),
            (Cipher::Aes192Ctr, 8.0),
            (Cipher::Aes256Ctr, 10.0),
        ]);
        let r = recommend_with(x86(&Feature::ALL), Some(cal), false);
        assert_eq!(r.basis, Basis::Measured);
        assert_eq!(
            r.aead_order,
            [
                Cipher::ChaCha20Poly1305,
                Cipher::Aes128Gcm,
                Cipher::Aes256Gcm
            ]
        );
        // CTR is ranked among itself, after every AEAD even when faster.
        assert_eq!(
            ssh_names(&r)[3..],
            ["aes256-ctr", "aes128-ctr", "aes192-ctr"]
        );
        assert!(!r.server.prioritize_chacha);
        assert!(
            r.openssh[0].reason.contains("fastest AEAD measured"),
            "{}",
            r.openssh[0].reason
        );
        assert!(
            r.openssh[1]
                .reason
                .contains("1.5x slower than ChaCha20-Poly1305"),
            "{}",
            r.openssh[1].reason
        );
        assert!(r.openssh[3].reason.contains("separate MAC"));

        // No AES hardware by rule, AES-256-GCM measured fastest.
        let cal = fake(&[
            (Cipher::Aes128Gcm, 2.0),
            (Cipher::Aes256Gcm, 4.0),
            (Cipher::ChaCha20Poly1305, 3.0),
        ]);
        let r = recommend_with(x86(&[]), Some(cal), false);
        assert_eq!(
            r.aead_order,
            [
                Cipher::Aes256Gcm,
                Cipher::ChaCha20Poly1305,
                Cipher::Aes128Gcm
            ]
        );
        assert!(r.server.prioritize_chacha);
        // Unmeasured CTR ciphers score 0 and keep the rule's order.
        assert_eq!(
            ssh_names(&r)[3..],
            ["aes128-ctr", "aes192-ctr", "aes256-ctr"]
        );
    }

    #[test]
    fn ties_keep_the_rule_order() {
        let even = fake(&[
            (Cipher::Aes128Gcm, 1.0),
            (Cipher::Aes256Gcm, 1.0),
            (Cipher::ChaCha20Poly1305, 1.0),
        ]);
        let with = recommend_with(x86(&Feature::ALL), Some(even.clone()), false);
        assert_eq!(with.aead_order[0], Cipher::Aes128Gcm);
        let without = recommend_with(x86(&[]), Some(even), false);
        assert_eq!(without.aead_order[0], Cipher::ChaCha20Poly1305);
    }

    #[test]
    fn legacy_ssh_ciphers_only_on_request_and_with_a_warning() {
        let plain = recommend_with(x86(&Feature::ALL), None, false);
        assert!(plain.openssh_warning.is_none());
        assert!(!plain.openssh_ciphers().contains("cbc"));
        assert!(!plain.openssh_snippet().contains("WARNING"));
        let legacy = recommend_with(x86(&Feature::ALL), None, true);
        assert_eq!(legacy.openssh_warning, Some(SSH_LEGACY_WARNING));
        assert!(
            legacy
                .openssh_ciphers()
                .ends_with(",aes128-cbc,aes192-cbc,aes256-cbc")
        );
        assert!(!legacy.openssh_ciphers().contains("3des"));
        assert_eq!(legacy.openssh_snippet().matches("# WARNING: ").count(), 2);
        // TLS is never affected.
        assert_eq!(
            legacy.openssl_cipher_string(),
            plain.openssl_cipher_string()
        );
    }

    #[test]
    fn snippets_carry_the_lists() {
        let r = recommend_with(x86(&Feature::ALL), None, false);
        assert!(
            r.ssh_client_config()
                .contains(&format!("Host *\n    Ciphers {}\n", r.openssh_ciphers()))
        );
        assert!(
            r.sshd_config()
                .ends_with(&format!("\nCiphers {}\n", r.openssh_ciphers()))
        );
        assert!(
            r.openssl_conf()
                .contains(&format!("CipherString = {}\n", r.openssl_cipher_string()))
        );
        assert!(
            r.openssl_conf()
                .contains(&format!("Ciphersuites = {}\n", r.openssl_ciphersuites()))
        );
        let nginx = r.nginx_conf();
        assert!(nginx.contains(&format!("ssl_ciphers {};", r.openssl_cipher_string())));
        assert!(nginx.contains(&format!(
            "ssl_conf_command Ciphersuites {};",
            r.openssl_ciphersuites()
        )));
        assert!(r.boringssl_snippet().contains(&r.boringssl_cipher_string()));
        let go = r.go_snippet();
        for s in &r.go_cipher_suites {
            assert!(go.contains(&format!("\t\ttls.{s},\n")), "{s}");
        }
        assert!(
            go.contains("order is ignored") && go.contains("TLS 1.3 suites are not configurable")
        );
        assert!(!go.contains("PreferServerCipherSuites:"));
    }
}
