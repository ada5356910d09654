//! x86-64 feature detection and CPUID identification.
#![allow(unsafe_code)]

use super::{CpuModel, Feature, Features};
use core::arch::x86_64::{__cpuid, __cpuid_count};

/// Uses the standard library's detection, which also checks that the
/// operating system saves the ymm/zmm state (XGETBV), not just CPUID bits.
pub(super) fn detect() -> Features {
    let mut list = Vec::new();
    macro_rules! probe {
        ($($name:tt => $feature:expr),* $(,)?) => {
            $( if std::arch::is_x86_feature_detected!($name) { list.push($feature); } )*
        };
    }
    probe! {
        "aes" => Feature::Aes,
        "pclmulqdq" => Feature::Pclmulqdq,
        "ssse3" => Feature::Ssse3,
        "avx" => Feature::Avx,
        "avx2" => Feature::Avx2,
        "bmi2" => Feature::Bmi2,
        "vaes" => Feature::Vaes,
        "vpclmulqdq" => Feature::Vpclmulqdq,
        "avx512f" => Feature::Avx512f,
        "avx512vl" => Feature::Avx512vl,
        "avx512bw" => Feature::Avx512bw,
        "avx512dq" => Feature::Avx512dq,
        "avx512ifma" => Feature::Avx512ifma,
    }
    Features::of(&list)
}

#[allow(unused_unsafe)] // `__cpuid` is a safe fn on newer toolchains.
pub(super) fn model() -> CpuModel {
    // SAFETY: CPUID is available on every x86-64 processor; leaves 0, 1 and the
    // 0x8000_000x brand leaves are only read when the maximum leaf allows.
    let (vendor, family, model, stepping, brand) = unsafe {
        let leaf0 = __cpuid(0);
        let mut vendor = Vec::with_capacity(12);
        for reg in [leaf0.ebx, leaf0.edx, leaf0.ecx] {
            vendor.extend_from_slice(&reg.to_le_bytes());
        }
        let (mut family, mut model, mut stepping) = (0, 0, 0);
        if leaf0.eax >= 1 {
            let eax = __cpuid_count(1, 0).eax;
            let base_family = (eax >> 8) & 0xf;
            let base_model = (eax >> 4) & 0xf;
            stepping = eax & 0xf;
            family = base_family;
            model = base_model;
            if base_family == 0xf {
                family += (eax >> 20) & 0xff;
            }
            if base_family == 0x6 || base_family == 0xf {
                model += ((eax >> 16) & 0xf) << 4;
            }
        }
        let mut brand = Vec::with_capacity(48);
        if __cpuid(0x8000_0000).eax >= 0x8000_0004 {
            for leaf in 0x8000_0002u32..=0x8000_0004 {
                let r = __cpuid(leaf);
                for reg in [r.eax, r.ebx, r.ecx, r.edx] {
                    brand.extend_from_slice(&reg.to_le_bytes());
                }
            }
        }
        (vendor, family, model, stepping, brand)
    };
    let text = |bytes: Vec<u8>| {
        String::from_utf8_lossy(&bytes)
            .trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string()
    };
    CpuModel {
        vendor: text(vendor),
        brand: text(brand),
        family,
        model,
        stepping,
    }
}
