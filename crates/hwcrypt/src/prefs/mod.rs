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

mod ciphers;
pub use ciphers::{Auth, Cipher, SSH_LEGACY, SSH_LEGACY_WARNING, SSH_TERRAPIN_NOTE};

mod render;

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
/// only changes the wording of the reason. SSSE3 switched off by the mask
/// (every AES-NI CPU has it) also counts: hwcrypt's AES backends need it,
/// so its AES would run in software.
pub fn aes_hardware_x86_64(detected: Features, usable: Features) -> AesHardware {
    let parts = [(Feature::Aes, "AES-NI"), (Feature::Pclmulqdq, "PCLMULQDQ")];
    let mut missing: Vec<String> = parts
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
    if detected.has(Feature::Ssse3) && !usable.has(Feature::Ssse3) {
        missing.push(format!(
            "SSSE3 switched off by {} (hwcrypt's AES backends need it)",
            cpu::MASK_ENV_VAR
        ));
    }
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
            "the same hardware path, 14 rounds instead of 10 (up to 40% more time a byte); for peers that want AES-256"
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

#[cfg(test)]
mod tests;
