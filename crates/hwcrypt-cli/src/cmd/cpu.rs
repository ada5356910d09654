//! `hwcrypt cpu`: what the hardware offers and which backend serves each algorithm.

use crate::error::CliError;
use hwcrypt::cpu::{self, MASK_ENV_VAR};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt_bench::cpu_header::{CpuHeader, feature_names as names};
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
    /// `cpu`, `detected`, `mask`, `usable`.
    #[serde(flatten)]
    header: CpuHeader,
    algorithms: Vec<AlgorithmReport>,
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
        header: CpuHeader::current()?,
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
    r.header.write(out)?;
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
