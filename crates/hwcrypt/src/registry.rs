//! The one table of implementations: algorithm x backend x priority x the CPU
//! features each needs.
//!
//! "Supported" (the CPU can run it) is separate from "preferred" (the highest
//! priority among the supported). The default for an algorithm is the
//! highest-priority backend the masked CPU can run; callers may also ask for a
//! backend by name, which fails cleanly if the CPU cannot run it.

use crate::backend::Backend;
use crate::cpu::{self, Feature, Features};
use crate::error::{Error, Result};
use core::fmt;
use core::sync::atomic::{AtomicU64, Ordering};

/// An algorithm family with its own set of backends.
///
/// ```
/// use hwcrypt::registry::{self, Algorithm};
/// let backend = registry::default_backend(Algorithm::AesGcm)?;
/// println!("{} runs on {}", Algorithm::AesGcm.name(), backend.name());
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// AES-128/192/256 block cipher and its ECB, CBC, CTR, CFB8, CFB128 and OFB modes.
    Aes,
    /// AES-128/192/256-GCM (NIST SP 800-38D).
    AesGcm,
    /// ChaCha20-Poly1305 and XChaCha20-Poly1305 (and raw ChaCha20).
    ChaCha20Poly1305,
    /// AES-128/256-XTS (IEEE 1619, NIST SP 800-38E), and AES-192-XTS.
    AesXts,
    /// Known-plaintext AES key search (`hwcrypt crack`): batched key
    /// schedules and one-block filters for many candidate keys at once.
    AesKeySearch,
}

impl Algorithm {
    /// Every algorithm, in display order.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Aes,
        Algorithm::AesGcm,
        Algorithm::ChaCha20Poly1305,
        Algorithm::AesXts,
        Algorithm::AesKeySearch,
    ];

    /// Stable name.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Aes => "aes",
            Algorithm::AesGcm => "aes-gcm",
            Algorithm::ChaCha20Poly1305 => "chacha20-poly1305",
            Algorithm::AesXts => "aes-xts",
            Algorithm::AesKeySearch => "aes-key-search",
        }
    }

    /// What the name covers.
    pub const fn description(self) -> &'static str {
        match self {
            Algorithm::Aes => "AES-128/192/256: ECB, CBC, CTR, CFB8, CFB128, OFB",
            Algorithm::AesGcm => "AES-128/192/256-GCM",
            Algorithm::ChaCha20Poly1305 => "ChaCha20-Poly1305 and XChaCha20-Poly1305",
            Algorithm::AesXts => "AES-128/192/256-XTS with ciphertext stealing",
            Algorithm::AesKeySearch => "AES key search (hwcrypt crack): batched key schedules",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of the registry.
///
/// ```
/// use hwcrypt::registry::{self, Algorithm};
/// let usable = hwcrypt::cpu::features()?;
/// for row in registry::implementations(Algorithm::Aes) {
///     println!("{:<12} {:>4} runs here: {}", row.backend.name(), row.priority, row.runs_on(usable));
/// }
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Implementation {
    /// The algorithm implemented.
    pub algorithm: Algorithm,
    /// The backend implementing it.
    pub backend: Backend,
    /// Higher wins when the CPU can run several.
    pub priority: u32,
    /// CPU features the backend needs.
    pub requires: Features,
}

impl Implementation {
    /// Whether a CPU with `features` can run this implementation.
    pub fn runs_on(&self, features: Features) -> bool {
        features.contains(self.requires)
    }
}

const fn row(
    algorithm: Algorithm,
    backend: Backend,
    priority: u32,
    requires: &[Feature],
) -> Implementation {
    Implementation {
        algorithm,
        backend,
        priority,
        requires: Features::of(requires),
    }
}

/// Features the `aesni` AES backend needs (`pshufb` for counter byte order).
pub const AESNI_FEATURES: &[Feature] = &[Feature::Aes, Feature::Ssse3];
/// Features the `vaes-avx2` AES backend needs (it uses AES-NI for key setup
/// and single blocks).
pub const VAES_AVX2_FEATURES: &[Feature] = &[
    Feature::Aes,
    Feature::Ssse3,
    Feature::Avx,
    Feature::Avx2,
    Feature::Vaes,
];
/// Features a `vaes-avx512` backend needs (zmm VAES/VPCLMULQDQ with 512-bit
/// masks and byte shuffles; AES-NI for key setup and single blocks).
pub const VAES_AVX512_FEATURES: &[Feature] = &[
    Feature::Aes,
    Feature::Pclmulqdq,
    Feature::Ssse3,
    Feature::Avx,
    Feature::Avx2,
    Feature::Vaes,
    Feature::Vpclmulqdq,
    Feature::Avx512f,
    Feature::Avx512vl,
    Feature::Avx512bw,
    Feature::Avx512dq,
];
/// Features the `avx512` ChaCha20-Poly1305 backend needs (zmm ChaCha20;
/// Poly1305 with 52-bit multiply-add).
pub const CHACHA20_AVX512_FEATURES: &[Feature] = &[
    Feature::Avx,
    Feature::Avx2,
    Feature::Avx512f,
    Feature::Avx512vl,
    Feature::Avx512bw,
    Feature::Avx512ifma,
];
/// Features the `avx2` ChaCha20-Poly1305 backend needs (`bmi2` for the
/// stitched scalar Poly1305's `mulx`; every AVX2 CPU made has it).
pub const CHACHA20_AVX2_FEATURES: &[Feature] = &[Feature::Avx, Feature::Avx2, Feature::Bmi2];

/// Features the `aesni` AES-GCM backend needs (`pclmulqdq` for GHASH).
pub const GCM_AESNI_FEATURES: &[Feature] = &[Feature::Aes, Feature::Pclmulqdq, Feature::Ssse3];
/// Features the `vaes-avx2` AES-GCM backend needs.
pub const GCM_VAES_AVX2_FEATURES: &[Feature] = &[
    Feature::Aes,
    Feature::Pclmulqdq,
    Feature::Ssse3,
    Feature::Avx,
    Feature::Avx2,
    Feature::Vaes,
    Feature::Vpclmulqdq,
];

/// The registry, highest priority first within each algorithm (a test checks
/// the order, so lookups need no sorting).
static TABLE: &[Implementation] = &[
    // vaes-avx512: zmm ECB, CTR and CBC decryption; the serial modes run
    // on the vaes-avx2/AES-NI kernels it keeps alongside.
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::Aes,
        Backend::VaesAvx512,
        400,
        VAES_AVX512_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(Algorithm::Aes, Backend::VaesAvx2, 300, VAES_AVX2_FEATURES),
    #[cfg(target_arch = "x86_64")]
    row(Algorithm::Aes, Backend::AesNi, 200, AESNI_FEATURES),
    row(Algorithm::Aes, Backend::Soft, 100, &[]),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesGcm,
        Backend::VaesAvx512,
        400,
        VAES_AVX512_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesGcm,
        Backend::VaesAvx2,
        300,
        GCM_VAES_AVX2_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(Algorithm::AesGcm, Backend::AesNi, 200, GCM_AESNI_FEATURES),
    row(Algorithm::AesGcm, Backend::Soft, 100, &[]),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::ChaCha20Poly1305,
        Backend::Avx512,
        300,
        CHACHA20_AVX512_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::ChaCha20Poly1305,
        Backend::Avx2,
        200,
        CHACHA20_AVX2_FEATURES,
    ),
    row(Algorithm::ChaCha20Poly1305, Backend::Soft, 100, &[]),
    // XTS runs on the AES keys of the same backend (tweaks by shifts, no
    // carry-less multiply), so it needs exactly what that backend needs;
    // vaes-avx512 advances zmm tweaks with vpclmulqdq.
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesXts,
        Backend::VaesAvx512,
        400,
        VAES_AVX512_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesXts,
        Backend::VaesAvx2,
        300,
        VAES_AVX2_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(Algorithm::AesXts, Backend::AesNi, 200, AESNI_FEATURES),
    row(Algorithm::AesXts, Backend::Soft, 100, &[]),
    // Key search expands the schedules of 4 (zmm), 2 (ymm) or 1 (xmm)
    // candidate keys per register; soft runs one key at a time.
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesKeySearch,
        Backend::VaesAvx512,
        400,
        VAES_AVX512_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(
        Algorithm::AesKeySearch,
        Backend::VaesAvx2,
        300,
        VAES_AVX2_FEATURES,
    ),
    #[cfg(target_arch = "x86_64")]
    row(Algorithm::AesKeySearch, Backend::AesNi, 200, AESNI_FEATURES),
    row(Algorithm::AesKeySearch, Backend::Soft, 100, &[]),
];

/// Every registered implementation of `algorithm`, highest priority first.
pub fn implementations(algorithm: Algorithm) -> impl Iterator<Item = &'static Implementation> {
    TABLE.iter().filter(move |r| r.algorithm == algorithm)
}

/// The highest-priority implementation of `algorithm` a CPU with `features` can run.
pub fn select(algorithm: Algorithm, features: Features) -> Backend {
    implementations(algorithm)
        .find(|r| r.runs_on(features))
        .map(|r| r.backend)
        // Every algorithm registers a `soft` row with no requirements.
        .unwrap_or(Backend::Soft)
}

/// The backend `algorithm` uses by default on this (masked) CPU.
#[inline]
pub fn default_backend(algorithm: Algorithm) -> Result<Backend> {
    // By reference: every key made with the default backend asks, and
    // cloning the `Result` cost more than the selection.
    match cpu::usable_features() {
        Ok(features) => Ok(select(algorithm, *features)),
        Err(e) => Err(cloned(e)),
    }
}

/// A copy of the feature-mask error (out of line: key constructors inline
/// [`default_backend`]).
#[cold]
#[inline(never)]
fn cloned(e: &Error) -> Error {
    e.clone()
}

/// The (algorithm, backend) pairs [`check`] passed in this process, one bit
/// each (5 algorithms x 8 backend slots). Every key constructor that names
/// a backend asks, and the answer for this process's (masked) CPU never
/// changes, so a pair that passed once is answered with one load (the
/// table scan was ~10% of a ChaCha20 key's setup). Failures are not
/// remembered: they take the slow path and build their error every time.
static PASSED: AtomicU64 = AtomicU64::new(0);

/// The bit of `PASSED` for a pair.
#[inline]
fn passed_bit(algorithm: Algorithm, backend: Backend) -> u64 {
    const { assert!(Algorithm::ALL.len() * 8 <= 64 && Backend::ALL.len() <= 8) };
    1u64 << (algorithm as usize * 8 + backend as usize)
}

/// Checks that `backend` implements `algorithm` and that this (masked) CPU can run it.
#[inline]
pub fn check(algorithm: Algorithm, backend: Backend) -> Result<()> {
    if PASSED.load(Ordering::Relaxed) & passed_bit(algorithm, backend) != 0 {
        return Ok(());
    }
    check_first(algorithm, backend)
}

/// [`check`]'s first time for a pair (out of line: key constructors
/// inline `check`).
#[cold]
#[inline(never)]
fn check_first(algorithm: Algorithm, backend: Backend) -> Result<()> {
    check_with(algorithm, backend, cpu::features()?)?;
    PASSED.fetch_or(passed_bit(algorithm, backend), Ordering::Relaxed);
    Ok(())
}

/// [`check`] against an explicit feature set.
pub fn check_with(algorithm: Algorithm, backend: Backend, features: Features) -> Result<()> {
    let row = implementations(algorithm)
        .find(|r| r.backend == backend)
        .ok_or(Error::BackendNotImplemented {
            algorithm: algorithm.name(),
            backend: backend.name(),
        })?;
    if row.runs_on(features) {
        Ok(())
    } else {
        Err(Error::BackendUnavailable {
            algorithm: algorithm.name(),
            backend: backend.name(),
            missing: features.missing(row.requires).to_string(),
        })
    }
}

/// The backends of `algorithm` a CPU with `features` can run, highest priority first.
pub fn runnable(algorithm: Algorithm, features: Features) -> Vec<Backend> {
    implementations(algorithm)
        .filter(|r| r.runs_on(features))
        .map(|r| r.backend)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_remembers_passes_and_not_failures() {
        for _ in 0..3 {
            assert!(check(Algorithm::Aes, Backend::Soft).is_ok());
            // No ChaCha20 on AES-NI: the same error every time, never cached.
            assert!(matches!(
                check(Algorithm::ChaCha20Poly1305, Backend::AesNi),
                Err(Error::BackendNotImplemented { .. })
            ));
        }
        // Every pair answers as the uncached check does.
        if let Ok(features) = cpu::features() {
            for alg in Algorithm::ALL {
                for backend in Backend::ALL {
                    for _ in 0..2 {
                        assert_eq!(
                            check(alg, backend).is_ok(),
                            check_with(alg, backend, features).is_ok(),
                            "{alg} {backend}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn soft_is_always_there_and_is_the_floor() {
        for alg in Algorithm::ALL {
            assert_eq!(select(alg, Features::NONE), Backend::Soft);
            assert!(check_with(alg, Backend::Soft, Features::NONE).is_ok());
        }
    }

    #[test]
    fn table_is_sorted_by_priority_and_has_no_duplicates() {
        for alg in Algorithm::ALL {
            let rows: Vec<_> = implementations(alg).collect();
            assert!(
                rows.windows(2).all(|w| w[0].priority > w[1].priority),
                "{alg}"
            );
            assert_eq!(rows.last().map(|r| r.backend), Some(Backend::Soft), "{alg}");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn priorities_pick_the_widest_runnable() {
        let all = Features::of(&Feature::ALL);
        assert_eq!(select(Algorithm::Aes, all), Backend::VaesAvx512);
        let avx2_only = Features::of(VAES_AVX2_FEATURES);
        assert_eq!(select(Algorithm::Aes, avx2_only), Backend::VaesAvx2);
        let no_vaes = Features::of(&[Feature::Aes, Feature::Ssse3, Feature::Avx, Feature::Avx2]);
        assert_eq!(select(Algorithm::Aes, no_vaes), Backend::AesNi);
        let err = check_with(Algorithm::Aes, Backend::VaesAvx2, no_vaes).unwrap_err();
        assert!(err.to_string().contains("vaes"), "{err}");
        assert!(check_with(Algorithm::Aes, Backend::Avx512, all).is_err());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn xts_prefers_vaes_avx512_then_vaes_avx2() {
        let all = Features::of(&Feature::ALL);
        assert_eq!(select(Algorithm::AesXts, all), Backend::VaesAvx512);
        let avx2_only = Features::of(VAES_AVX2_FEATURES);
        assert_eq!(select(Algorithm::AesXts, avx2_only), Backend::VaesAvx2);
        let err = check_with(Algorithm::AesXts, Backend::VaesAvx512, avx2_only).unwrap_err();
        assert!(err.to_string().contains("avx512f"), "{err}");
        // The other AES modes follow the same order.
        assert_eq!(select(Algorithm::Aes, all), Backend::VaesAvx512);
        assert_eq!(select(Algorithm::Aes, avx2_only), Backend::VaesAvx2);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn gcm_prefers_vaes_avx512_then_vaes_avx2() {
        let all = Features::of(&Feature::ALL);
        assert_eq!(select(Algorithm::AesGcm, all), Backend::VaesAvx512);
        let avx2_only = Features::of(GCM_VAES_AVX2_FEATURES);
        assert_eq!(select(Algorithm::AesGcm, avx2_only), Backend::VaesAvx2);
        let err = check_with(Algorithm::AesGcm, Backend::VaesAvx512, avx2_only).unwrap_err();
        assert!(err.to_string().contains("avx512f"), "{err}");
    }
}
