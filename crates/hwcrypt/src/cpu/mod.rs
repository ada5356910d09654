//! CPU features: detected once, cached, and narrowed by the `HWCRYPT_CPU` mask.
//!
//! The mask can only switch features off, never on, the way `OPENSSL_ia32cap`
//! works for OpenSSL. Syntax (comma- or space-separated, case-insensitive):
//!
//! * `-FEATURE` removes one feature, e.g. `HWCRYPT_CPU=-vaes` or `HWCRYPT_CPU=-avx2,-vaes`;
//! * `none` removes every feature (portable software only);
//! * `all` or an empty value changes nothing.
//!
//! Removing a feature also removes the features that cannot be used without it
//! (e.g. `-avx` also removes `avx2`, `vaes`, `vpclmulqdq` and AVX-512), so a
//! mask can never produce a combination no real CPU has. An unknown name, or a
//! `+FEATURE`, is an error: it is never silently ignored.

#[cfg(target_arch = "x86_64")]
mod x86_64;

use crate::error::{Error, Result};
use core::fmt;
use std::sync::OnceLock;

/// Name of the environment variable that holds the capability mask.
pub const MASK_ENV_VAR: &str = "HWCRYPT_CPU";

/// One CPU feature hwcrypt cares about.
///
/// ```
/// use hwcrypt::cpu::{self, Feature};
/// assert_eq!(Feature::from_name("vaes"), Some(Feature::Vaes));
/// let usable = cpu::features()?; // detected, after the HWCRYPT_CPU mask
/// println!("AES-NI usable: {}", usable.has(Feature::Aes));
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// AES-NI (`aesenc`, `aeskeygenassist`, `aesimc`).
    Aes,
    /// Carry-less multiply on xmm registers.
    Pclmulqdq,
    /// Supplemental SSE3 (`pshufb`).
    Ssse3,
    /// AVX (VEX encoding, ymm state).
    Avx,
    /// AVX2 (256-bit integer operations).
    Avx2,
    /// BMI2 (`mulx`: a 64x64-bit multiply that leaves the flags alone, for
    /// the scalar Poly1305 stitched into the AVX2 ChaCha20).
    Bmi2,
    /// Vector AES (`vaesenc` on ymm/zmm).
    Vaes,
    /// Vector carry-less multiply (`vpclmulqdq` on ymm/zmm).
    Vpclmulqdq,
    /// AVX-512 Foundation.
    Avx512f,
    /// AVX-512 Vector Length extensions.
    Avx512vl,
    /// AVX-512 Byte and Word instructions.
    Avx512bw,
    /// AVX-512 Doubleword and Quadword instructions.
    Avx512dq,
    /// AVX-512 52-bit integer multiply-add (`vpmadd52luq`/`vpmadd52huq`).
    Avx512ifma,
}

impl Feature {
    /// Every feature, in the order they are printed.
    pub const ALL: [Feature; 13] = [
        Feature::Aes,
        Feature::Pclmulqdq,
        Feature::Ssse3,
        Feature::Avx,
        Feature::Avx2,
        Feature::Bmi2,
        Feature::Vaes,
        Feature::Vpclmulqdq,
        Feature::Avx512f,
        Feature::Avx512vl,
        Feature::Avx512bw,
        Feature::Avx512dq,
        Feature::Avx512ifma,
    ];

    /// The stable lower-case name, as used in `HWCRYPT_CPU` and `/proc/cpuinfo`.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Aes => "aes",
            Feature::Pclmulqdq => "pclmulqdq",
            Feature::Ssse3 => "ssse3",
            Feature::Avx => "avx",
            Feature::Avx2 => "avx2",
            Feature::Bmi2 => "bmi2",
            Feature::Vaes => "vaes",
            Feature::Vpclmulqdq => "vpclmulqdq",
            Feature::Avx512f => "avx512f",
            Feature::Avx512vl => "avx512vl",
            Feature::Avx512bw => "avx512bw",
            Feature::Avx512dq => "avx512dq",
            Feature::Avx512ifma => "avx512ifma",
        }
    }

    /// Looks a feature up by name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// Features this one cannot be used without.
    const fn prerequisites(self) -> Features {
        match self {
            Feature::Aes | Feature::Pclmulqdq | Feature::Ssse3 | Feature::Avx | Feature::Bmi2 => {
                Features::NONE
            }
            Feature::Avx2 => Features::of(&[Feature::Avx]),
            Feature::Vaes => Features::of(&[Feature::Avx, Feature::Aes]),
            Feature::Vpclmulqdq => Features::of(&[Feature::Avx, Feature::Pclmulqdq]),
            Feature::Avx512f => Features::of(&[Feature::Avx2]),
            Feature::Avx512vl | Feature::Avx512bw | Feature::Avx512dq | Feature::Avx512ifma => {
                Features::of(&[Feature::Avx512f])
            }
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Feature`]s.
///
/// ```
/// use hwcrypt::cpu::{Feature, Features};
/// let needs = Features::of(&[Feature::Aes, Feature::Ssse3]);
/// let have = Features::of(&[Feature::Aes]);
/// assert!(!have.contains(needs));
/// assert_eq!(have.missing(needs), Features::of(&[Feature::Ssse3]));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Features(u32);

impl Features {
    /// The empty set.
    pub const NONE: Features = Features(0);

    /// The set of the given features.
    pub const fn of(list: &[Feature]) -> Features {
        let mut bits = 0;
        let mut i = 0;
        while i < list.len() {
            bits |= list[i].bit();
            i += 1;
        }
        Features(bits)
    }

    /// Whether `feature` is in the set.
    pub const fn has(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }

    /// Whether every feature of `other` is in the set.
    pub const fn contains(self, other: Features) -> bool {
        self.0 & other.0 == other.0
    }

    /// The features of `other` that are not in this set.
    pub const fn missing(self, other: Features) -> Features {
        Features(other.0 & !self.0)
    }

    /// Intersection.
    pub const fn and(self, other: Features) -> Features {
        Features(self.0 & other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The features in the set, in [`Feature::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.has(*f))
    }

    fn without(self, feature: Feature) -> Features {
        Features(self.0 & !feature.bit())
    }

    /// Drops every feature whose prerequisites are not all present.
    fn close(mut self) -> Features {
        loop {
            let before = self;
            for f in self.iter() {
                if !self.contains(f.prerequisites()) {
                    self = self.without(f);
                }
            }
            if self == before {
                return self;
            }
        }
    }
}

impl fmt::Display for Features {
    /// Comma-separated names, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        for (i, feature) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(feature.name())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Features({self})")
    }
}

/// A parsed `HWCRYPT_CPU` value: the features it switches off.
///
/// ```
/// use hwcrypt::cpu::{Feature, Features, Mask};
/// let mask = Mask::parse("-vaes")?;
/// let cpu = Features::of(&[Feature::Aes, Feature::Avx, Feature::Avx2, Feature::Vaes]);
/// assert!(!mask.apply(cpu).has(Feature::Vaes));
/// assert!(Mask::parse("+vaes").is_err()); // a mask only switches features off
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Mask {
    removed: Features,
}

impl Mask {
    /// Parses the mask syntax described in the [module docs](self).
    pub fn parse(text: &str) -> Result<Mask> {
        let mut removed = Features::NONE;
        for item in text
            .split(|c: char| c == ',' || c.is_ascii_whitespace())
            .filter(|s| !s.is_empty())
        {
            if item.eq_ignore_ascii_case("none") {
                removed = Features::of(&Feature::ALL);
            } else if item.eq_ignore_ascii_case("all") {
            } else if let Some(name) = item.strip_prefix('-') {
                let feature = Feature::from_name(name).ok_or_else(|| {
                    Error::InvalidCpuMask(format!(
                        "unknown feature '{name}' (known: {})",
                        Features::of(&Feature::ALL)
                    ))
                })?;
                removed.0 |= feature.bit();
            } else if item.starts_with('+') || Feature::from_name(item).is_some() {
                return Err(Error::InvalidCpuMask(format!(
                    "'{item}': the mask can only switch features off; write '-{}'",
                    item.trim_start_matches('+')
                )));
            } else {
                return Err(Error::InvalidCpuMask(format!(
                    "'{item}' is neither '-FEATURE', 'none' nor 'all'"
                )));
            }
        }
        Ok(Mask { removed })
    }

    /// The features this mask switches off (as written, before closure).
    pub fn removed(self) -> Features {
        self.removed
    }

    /// Applies the mask to a detected feature set.
    pub fn apply(self, detected: Features) -> Features {
        Features(detected.0 & !self.removed.0).close()
    }
}

/// The features this CPU and operating system support, detected once.
pub fn detected() -> Features {
    static DETECTED: OnceLock<Features> = OnceLock::new();
    *DETECTED.get_or_init(detect)
}

/// The mask from `HWCRYPT_CPU`, read and parsed once.
pub fn mask() -> Result<Mask> {
    static MASK: OnceLock<Result<Mask>> = OnceLock::new();
    MASK.get_or_init(|| match std::env::var(MASK_ENV_VAR) {
        Ok(text) => Mask::parse(&text),
        Err(std::env::VarError::NotPresent) => Ok(Mask::default()),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(Error::InvalidCpuMask("value is not valid UTF-8".into()))
        }
    })
    .clone()
}

/// The features hwcrypt may use: [`detected`] narrowed by [`mask`].
///
/// Fails only when `HWCRYPT_CPU` is set to something that does not parse.
pub fn features() -> Result<Features> {
    usable_features().clone()
}

/// [`features`], by reference: made once per process.
pub(crate) fn usable_features() -> &'static Result<Features> {
    static USABLE: OnceLock<Result<Features>> = OnceLock::new();
    USABLE.get_or_init(|| Ok(mask()?.apply(detected())))
}

/// Whether [`features`] (the detected features after the `HWCRYPT_CPU`
/// mask) include `feature`; `false` if the mask does not parse. For
/// optional instructions inside a backend (e.g. carry-less multiply in the
/// XTS kernels), so that the mask reaches them too. Borrows the result
/// instead of cloning it (every AES key asks twice).
pub(crate) fn usable(feature: Feature) -> bool {
    matches!(usable_features(), Ok(f) if f.contains(Features::of(&[feature])))
}

fn detect() -> Features {
    #[cfg(target_arch = "x86_64")]
    {
        x86_64::detect().close()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Features::NONE
    }
}

/// What the processor calls itself, with family/model/stepping where known.
///
/// ```
/// if let Some(model) = hwcrypt::cpu::model() {
///     println!("{} ({}, family {:#x})", model.brand, model.vendor, model.family);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuModel {
    /// Vendor string, e.g. `AuthenticAMD`.
    pub vendor: String,
    /// Brand string, e.g. `AMD EPYC 7B13 64-Core Processor`.
    pub brand: String,
    /// Display family (base + extended).
    pub family: u32,
    /// Display model (base + extended).
    pub model: u32,
    /// Stepping.
    pub stepping: u32,
}

/// Reads the processor's identification (CPUID on x86-64).
pub fn model() -> Option<CpuModel> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(x86_64::model())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mask_parses_and_only_removes() {
        let all = Features::of(&Feature::ALL);
        assert_eq!(Mask::parse("").unwrap().apply(all), all);
        assert_eq!(Mask::parse("all").unwrap().apply(all), all);
        assert_eq!(Mask::parse("none").unwrap().apply(all), Features::NONE);
        let no_vaes = Mask::parse("-vaes").unwrap().apply(all);
        assert!(!no_vaes.has(Feature::Vaes) && no_vaes.has(Feature::Avx2));
        let m = Mask::parse(" -AVX2 , -vaes").unwrap().apply(all);
        assert!(!m.has(Feature::Avx2) && !m.has(Feature::Vaes) && !m.has(Feature::Avx512f));
        assert!(m.has(Feature::Avx) && m.has(Feature::Aes));
        // Removing a prerequisite removes its dependents (BMI2 is no vector
        // feature: it stays).
        let m = Mask::parse("-avx").unwrap().apply(all);
        assert_eq!(
            m,
            Features::of(&[
                Feature::Aes,
                Feature::Pclmulqdq,
                Feature::Ssse3,
                Feature::Bmi2
            ])
        );
        let m = Mask::parse("-aes").unwrap().apply(all);
        assert!(!m.has(Feature::Vaes) && m.has(Feature::Vpclmulqdq));
        // Never switches anything on.
        let few = Features::of(&[Feature::Aes]);
        assert_eq!(Mask::parse("-vaes").unwrap().apply(few), few);
    }

    #[test]
    fn mask_rejects_unknown_and_additions() {
        for bad in ["-foo", "vaes", "+vaes", "avx3", "-", "-aes,bogus"] {
            let err = Mask::parse(bad).unwrap_err();
            assert!(matches!(err, Error::InvalidCpuMask(_)), "{bad}: {err}");
            assert!(!err.to_string().contains('\n'));
        }
    }

    #[test]
    fn detection_is_closed_under_prerequisites() {
        let d = detected();
        assert_eq!(d, d.close());
        assert!(Mask::default().apply(d) == d);
    }
}
