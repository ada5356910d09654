//! The CPU block that heads `hwcrypt cpu` and `hwcrypt speed`: the processor,
//! its features, the `HWCRYPT_CPU` mask and what is usable after it, for
//! people (four aligned lines) and for scripts (fields flattened into the
//! command's JSON). Said once here so both commands print it alike; what
//! each command adds after it (backends, clock, timing) stays in that command.

use hwcrypt::cpu::{self, Features};
use serde::Serialize;
use std::io::{self, Write};

/// The processor, where the CPU says (x86-64 CPUID).
#[derive(Clone, Debug, Serialize)]
pub struct CpuInfo {
    /// Vendor string, e.g. `AuthenticAMD`.
    pub vendor: String,
    /// Brand string, e.g. `AMD EPYC 9R14 96-Core Processor`.
    pub brand: String,
    /// Display family.
    pub family: u32,
    /// Display model.
    pub model: u32,
    /// Stepping.
    pub stepping: u32,
}

/// The CPU block: what the machine has and what hwcrypt may use of it.
#[derive(Clone, Debug, Serialize)]
pub struct CpuHeader {
    /// The processor, where known.
    pub cpu: Option<CpuInfo>,
    /// Features the CPU has.
    pub detected: Vec<&'static str>,
    /// The `HWCRYPT_CPU` value, if set.
    pub mask: Option<String>,
    /// Features hwcrypt may use after the mask.
    pub usable: Vec<&'static str>,
}

/// The names of a feature set, in the library's order.
pub fn feature_names(features: Features) -> Vec<&'static str> {
    features.iter().map(|f| f.name()).collect()
}

impl CpuHeader {
    /// This machine's block; an error when `HWCRYPT_CPU` does not parse.
    pub fn current() -> hwcrypt::Result<CpuHeader> {
        Ok(CpuHeader {
            cpu: cpu::model().map(|m| CpuInfo {
                vendor: m.vendor,
                brand: m.brand,
                family: m.family,
                model: m.model,
                stepping: m.stepping,
            }),
            detected: feature_names(cpu::detected()),
            mask: std::env::var(cpu::MASK_ENV_VAR).ok(),
            usable: feature_names(cpu::features()?),
        })
    }

    /// Writes the four lines (`CPU:`, `Detected:`, `HWCRYPT_CPU:`,
    /// `Usable:`), values aligned at [`LABEL_WIDTH`].
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let w = LABEL_WIDTH;
        match &self.cpu {
            Some(c) => writeln!(
                out,
                "{:<w$}{} ({}, family {:#x} model {:#x} stepping {})",
                "CPU:",
                if c.brand.is_empty() {
                    "unknown"
                } else {
                    &c.brand
                },
                c.vendor,
                c.family,
                c.model,
                c.stepping
            )?,
            None => writeln!(out, "{:<w$}unknown (not x86-64)", "CPU:")?,
        }
        writeln!(out, "{:<w$}{}", "Detected:", list(&self.detected))?;
        let label = format!("{}:", cpu::MASK_ENV_VAR);
        match &self.mask {
            Some(mask) => writeln!(out, "{label:<w$}{mask:?}")?,
            None => writeln!(out, "{label:<w$}(not set)")?,
        }
        writeln!(out, "{:<w$}{}", "Usable:", list(&self.usable))
    }
}

/// Width of the labels of the header lines, so that values line up (also
/// for the lines a command adds below the block).
pub const LABEL_WIDTH: usize = 14;

fn list(items: &[&str]) -> String {
    if items.is_empty() {
        "-".to_string()
    } else {
        items.join(",")
    }
}
