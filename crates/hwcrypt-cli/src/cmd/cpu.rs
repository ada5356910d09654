//! `hwcrypt cpu`: what the hardware offers and which backend serves each algorithm.

use crate::error::CliError;
use hwcrypt::cpu::{self, Features, MASK_ENV_VAR};
use hwcrypt::registry::{self, Algorithm};
use serde::Serialize;
use std::io::Write;

/// Flags of `hwcrypt cpu`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON for scripts instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Report {
    cpu: Option<CpuInfo>,
    detected: Vec<&'static str>,
    mask: Option<String>,
    usable: Vec<&'static str>,
    algorithms: Vec<AlgorithmReport>,
}

#[derive(Debug, Serialize)]
struct CpuInfo {
    vendor: String,
    brand: String,
    family: u32,
    model: u32,
    stepping: u32,
}

#[derive(Debug, Serialize)]
struct AlgorithmReport {
    name: &'static str,
    description: &'static str,
    selected: &'static str,
    backends: Vec<BackendReport>,
}

#[derive(Debug, Serialize)]
struct BackendReport {
    name: &'static str,
    priority: u32,
    requires: Vec<&'static str>,
    /// `selected`, `available`, `masked` (the CPU has the features but
    /// HWCRYPT_CPU switched some off) or `unsupported` (the CPU lacks them).
    status: &'static str,
    /// Required features this CPU lacks.
    missing: Vec<&'static str>,
    /// Required features the mask switched off.
    masked: Vec<&'static str>,
}

fn names(features: Features) -> Vec<&'static str> {
    features.iter().map(|f| f.name()).collect()
}

fn report() -> hwcrypt::Result<Report> {
    let detected = cpu::detected();
    let usable = cpu::features()?;
    let algorithms = Algorithm::ALL
        .into_iter()
        .map(|alg| {
            let selected = registry::select(alg, usable);
            let backends = registry::implementations(alg)
                .map(|imp| {
                    let missing = detected.missing(imp.requires);
                    let masked = usable.missing(imp.requires).and(detected);
                    let status = if imp.backend == selected {
                        "selected"
                    } else if !missing.is_empty() {
                        "unsupported"
                    } else if !masked.is_empty() {
                        "masked"
                    } else {
                        "available"
                    };
                    BackendReport {
                        name: imp.backend.name(),
                        priority: imp.priority,
                        requires: names(imp.requires),
                        status,
                        missing: names(missing),
                        masked: names(masked),
                    }
                })
                .collect();
            AlgorithmReport {
                name: alg.name(),
                description: alg.description(),
                selected: selected.name(),
                backends,
            }
        })
        .collect();
    Ok(Report {
        cpu: cpu::model().map(|m| CpuInfo {
            vendor: m.vendor,
            brand: m.brand,
            family: m.family,
            model: m.model,
            stepping: m.stepping,
        }),
        detected: names(detected),
        mask: std::env::var(MASK_ENV_VAR).ok(),
        usable: names(usable),
        algorithms,
    })
}

fn list(items: &[&str]) -> String {
    if items.is_empty() {
        "-".to_string()
    } else {
        items.join(",")
    }
}

/// Runs `hwcrypt cpu`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let report = report()?;
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        write_table(&mut out, &report)?;
    }
    Ok(())
}

fn write_table(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    match &r.cpu {
        Some(c) => writeln!(
            out,
            "CPU:          {} ({}, family {:#x} model {:#x} stepping {})",
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
        None => writeln!(out, "CPU:          unknown (not x86-64)")?,
    }
    writeln!(out, "Detected:     {}", list(&r.detected))?;
    match &r.mask {
        Some(mask) => writeln!(out, "{MASK_ENV_VAR}:  {mask:?}")?,
        None => writeln!(out, "{MASK_ENV_VAR}:  (not set)")?,
    }
    writeln!(out, "Usable:       {}", list(&r.usable))?;
    // One REQUIRES column width for every table, so they line up.
    let width = r
        .algorithms
        .iter()
        .flat_map(|a| &a.backends)
        .map(|b| list(&b.requires).len())
        .max()
        .unwrap_or(0)
        .max("REQUIRES".len());
    for alg in &r.algorithms {
        writeln!(out)?;
        writeln!(
            out,
            "{} ({}): selected {}",
            alg.name, alg.description, alg.selected
        )?;
        writeln!(
            out,
            "  {:<12} {:>8}  {:<width$}  STATUS",
            "BACKEND", "PRIORITY", "REQUIRES"
        )?;
        for b in &alg.backends {
            let status = match b.status {
                "unsupported" => format!("unsupported (CPU lacks {})", b.missing.join(",")),
                "masked" => format!("masked off by {MASK_ENV_VAR} ({})", b.masked.join(",")),
                other => other.to_string(),
            };
            writeln!(
                out,
                "  {:<12} {:>8}  {:<width$}  {status}",
                b.name,
                b.priority,
                list(&b.requires)
            )?;
        }
    }
    Ok(())
}
