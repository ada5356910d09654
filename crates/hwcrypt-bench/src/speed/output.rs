//! Rendering a [`Report`]: a table for people, JSON and CSV for scripts.

use super::Report;
use std::io::{self, Write};

/// `16 B`, `1 KiB`, `16 KiB`, `1.5 KiB`.
pub fn size_label(size: usize) -> String {
    if size >= 1 << 20 && size.is_multiple_of(1 << 20) {
        format!("{} MiB", size >> 20)
    } else if size >= 1024 && size.is_multiple_of(1024) {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned text with a header.
    Table,
    /// One JSON document.
    Json,
    /// One CSV table (throughput and key-setup rows, told apart by `kind`).
    Csv,
}

impl Format {
    /// Parses `table`, `json` or `csv`.
    pub fn parse(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "table" => Ok(Format::Table),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            _ => Err(format!("unknown format '{s}' (table, json or csv)")),
        }
    }
}

/// Writes `report` in `format`.
pub fn write(out: &mut dyn Write, report: &Report, format: Format) -> io::Result<()> {
    match format {
        Format::Table => write_table(out, report),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::from)?;
            writeln!(out)
        }
        Format::Csv => write_csv(out, report),
    }
}

/// The CSV header line.
pub const CSV_HEADER: &str = "kind,algorithm,size,implementation,library,backend,threads,\
gbps,gbps_min,gbps_max,spread_pct,cycles_per_byte,single_thread_gbps,scaling_efficiency,\
vs_best_peer,best_peer,ns_per_key,cycles_per_key,reps";

fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.4}")).unwrap_or_default()
}

fn write_csv(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "{CSV_HEADER}")?;
    for row in &r.throughput {
        let i = &row.implementation;
        writeln!(
            out,
            "throughput,{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.2},{:.4},{},{},{},{},,,{}",
            row.algorithm,
            row.size,
            i.name,
            i.library,
            i.backend.unwrap_or(""),
            row.threads,
            row.gbps,
            row.gbps_min,
            row.gbps_max,
            row.spread_pct,
            row.cycles_per_byte,
            opt(row.single_thread_gbps),
            opt(row.scaling_efficiency),
            opt(row.vs_best_peer),
            row.best_peer.as_deref().unwrap_or(""),
            row.reps
        )?;
    }
    for k in &r.key_setup {
        let i = &k.implementation;
        writeln!(
            out,
            "key-setup,{},,{},{},{},1,,,,{:.2},,,,,,{:.2},{:.1},{}",
            k.algorithm,
            i.name,
            i.library,
            i.backend.unwrap_or(""),
            k.spread_pct,
            k.ns_per_key,
            k.cycles_per_key,
            k.reps
        )?;
    }
    Ok(())
}

fn write_header(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let h = &r.header;
    h.hardware.write(out)?;
    writeln!(
        out,
        "Clock:        {:.2} GHz core clock, measured (dependent-multiply chain vs wall clock; not the TSC)",
        h.clock_ghz
    )?;
    let load = h
        .load_average
        .map(|l| format!("; load average {:.2} {:.2} {:.2}", l[0], l[1], l[2]))
        .unwrap_or_default();
    writeln!(
        out,
        "Timing:       median of {} x {:.0} ms per cell after {:.0} ms warm-up, implementations interleaved; \
         {} thread{}{load}",
        h.reps,
        h.time_per_cell_ms / h.reps.max(1) as f64,
        h.warm_up_ms,
        h.threads,
        if h.threads == 1 { "" } else { "s" }
    )?;
    for p in &h.peers {
        writeln!(
            out,
            "Peer:         {:<11} {}; covers {}",
            p.name, p.version, p.covers
        )?;
    }
    writeln!(
        out,
        "Units:        GB/s = 1e9 B/s; SPREAD = (max-min)/median; CYC/B at the measured clock; \
         (preempted n/m): n runs timed by on-CPU time{}",
        if h.peers.is_empty() {
            ""
        } else {
            "; VS PEER = GB/s / best peer's GB/s in the same cell"
        }
    )?;
    writeln!(
        out,
        "Messages:     one per call, in place, key made beforehand, fresh IV/nonce per message; \
         AEAD seal (-dec: open) with {} B AAD; XTS data unit = message",
        h.aad_len
    )
}

fn write_table(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    write_header(out, r)?;
    let peers = r.throughput.iter().any(|row| row.vs_best_peer.is_some());
    let threads = r.header.threads > 1;
    let impl_w = r
        .throughput
        .iter()
        .map(|row| row.implementation.name.len())
        .chain(r.key_setup.iter().map(|k| k.implementation.name.len()))
        .max()
        .unwrap_or(0)
        .max("IMPLEMENTATION".len());
    let alg_w = r
        .throughput
        .iter()
        .map(|row| row.algorithm.len())
        .max()
        .unwrap_or(0)
        .max("ALGORITHM".len());
    if !r.throughput.is_empty() {
        writeln!(out)?;
        write!(
            out,
            "{:<alg_w$}  {:>7}  {:<impl_w$}  {:>8}  {:>6}  {:>7}",
            "ALGORITHM", "SIZE", "IMPLEMENTATION", "GB/s", "SPREAD", "CYC/B"
        )?;
        if threads {
            write!(out, "  {:>8}  {:>7}", "1-THREAD", "SCALING")?;
        }
        if peers {
            write!(out, "  {:>8}", "VS PEER")?;
        }
        writeln!(out)?;
        let mut last: Option<(&str, usize)> = None;
        for row in &r.throughput {
            let key = (row.algorithm, row.size);
            if last.is_some_and(|l| l.0 != key.0) {
                writeln!(out)?;
            }
            let (alg, size) = if last == Some(key) {
                ("", String::new())
            } else {
                (row.algorithm, size_label(row.size))
            };
            last = Some(key);
            write!(
                out,
                "{alg:<alg_w$}  {size:>7}  {:<impl_w$}  {:>8.3}  {:>5.1}%  {:>7.3}",
                row.implementation.name, row.gbps, row.spread_pct, row.cycles_per_byte
            )?;
            if threads {
                write!(
                    out,
                    "  {:>8.3}  {:>6.0}%",
                    row.single_thread_gbps.unwrap_or(f64::NAN),
                    row.scaling_efficiency.unwrap_or(f64::NAN) * 100.0
                )?;
            }
            if peers {
                match row.vs_best_peer {
                    Some(v) => write!(out, "  {:>7.2}x", v)?,
                    None => write!(out, "  {:>8}", "-")?,
                }
            }
            if row.preempted_reps > 0 {
                write!(
                    out,
                    "  (preempted {}/{}: on-CPU time)",
                    row.preempted_reps, row.reps
                )?;
            }
            writeln!(out)?;
        }
    }
    if !r.key_setup.is_empty() {
        let kw = r
            .key_setup
            .iter()
            .map(|k| k.algorithm.len())
            .max()
            .unwrap_or(0)
            .max("KEY SETUP".len());
        writeln!(out)?;
        writeln!(
            out,
            "{:<kw$}  {:<impl_w$}  {:>9}  {:>6}  {:>8}",
            "KEY SETUP", "IMPLEMENTATION", "NS/KEY", "SPREAD", "CYCLES"
        )?;
        let mut last = "";
        for k in &r.key_setup {
            let alg = if k.algorithm == last { "" } else { k.algorithm };
            last = k.algorithm;
            writeln!(
                out,
                "{alg:<kw$}  {:<impl_w$}  {:>9.1}  {:>5.1}%  {:>8.0}",
                k.implementation.name, k.ns_per_key, k.spread_pct, k.cycles_per_key
            )?;
        }
    }
    if !r.skipped.is_empty() {
        writeln!(out)?;
        writeln!(out, "Not measured:")?;
        for s in &r.skipped {
            let mut what = s.algorithm.clone();
            if let Some(size) = s.size {
                what += &format!(" at {}", size_label(size));
            }
            if let Some(i) = &s.implementation {
                what += &format!(" on {i}");
            }
            writeln!(out, "  {what}: {}", s.reason)?;
        }
    }
    Ok(())
}
