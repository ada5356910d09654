//! `hwcrypt speed`: throughput of every algorithm x backend x message size,
//! optionally beside OpenSSL, ring, aws-lc-rs, graviola and RustCrypto. The flags are
//! turned into [`speed::Options`]; measuring and rendering live in
//! `hwcrypt_bench::speed`.

use crate::error::CliError;
use hwcrypt_bench::speed::{self, BackendChoice, Options, catalog, output, plot};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Flags of `hwcrypt speed`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Algorithms as `openssl speed -evp` names them (aes-128-gcm,
    /// aes-256-xts, chacha20-poly1305, aes-128-cbc-dec, ...) or families
    /// (aes, aes-gcm, aes-xts, chacha, aead, aes-256, aes-ctr, all); all
    /// when none is given. `--list` names them all.
    #[arg(value_name = "ALG")]
    algorithms: Vec<String>,
    /// hwcrypt backend: a name (soft, aesni, vaes-avx2, ...), `all` (every
    /// backend this CPU can run, side by side) or `default` (the one each
    /// algorithm uses).
    #[arg(long, value_name = "NAME", default_value = "default")]
    backend: String,
    /// Message sizes in bytes, comma-separated (k = 1024) [default:
    /// 16,64,256,1024,8192,16384; with --quick 16,1024,16384].
    #[arg(long, value_name = "LIST")]
    sizes: Option<String>,
    /// Timed time per implementation and cell, all repetitions together
    /// (e.g. 0.3, 300ms) [default: 300ms; with --quick 30ms].
    #[arg(long, value_name = "TIME")]
    time: Option<String>,
    /// Timed repetitions per cell; the median is reported [default: 5; with --quick 3].
    #[arg(long, value_name = "N")]
    reps: Option<String>,
    /// Threads, each with its own key and buffer; rows give the aggregate
    /// GB/s, the single-thread GB/s and the scaling efficiency.
    #[arg(long, value_name = "N", default_value = "1")]
    threads: String,
    /// Output format: table, json or csv.
    #[arg(long, value_name = "FORMAT", default_value = "table")]
    format: String,
    /// Also draw GB/s against message size, one line per implementation,
    /// into FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Measure OpenSSL, ring, aws-lc-rs, graviola and RustCrypto too, interleaved with
    /// hwcrypt (needs a build with `--features peers`).
    #[arg(long)]
    peers: bool,
    /// A run of a few seconds: fewer sizes, shorter cells.
    #[arg(long)]
    quick: bool,
    /// Bytes of associated data per AEAD message [default: 13, a TLS 1.2
    /// record header; TLS 1.3 has 5].
    #[arg(long, value_name = "BYTES")]
    aad: Option<String>,
    /// Leave out the key-setup rows.
    #[arg(long)]
    no_key_setup: bool,
    /// List the algorithm names and families, then exit.
    #[arg(long)]
    list: bool,
}

fn usage(msg: String) -> CliError {
    CliError::Usage(msg)
}

/// Turns the flags into options, checking every value before anything is measured.
fn options(args: &Args) -> Result<Options, CliError> {
    let mut opts = Options::new(args.quick);
    opts.ciphers = catalog::select(&args.algorithms).map_err(usage)?;
    opts.backends = BackendChoice::parse(&args.backend).map_err(usage)?;
    if let Some(s) = &args.sizes {
        opts.sizes = speed::parse_sizes(s).map_err(|e| usage(format!("--sizes: {e}")))?;
    }
    if let Some(t) = &args.time {
        opts.timing.time = speed::parse_duration(t).map_err(|e| usage(format!("--time: {e}")))?;
        // Warm-up: an eighth of the cell, 2..40 ms.
        opts.warm_up = (opts.timing.time / 8).clamp(
            std::time::Duration::from_millis(2),
            std::time::Duration::from_millis(40),
        );
    }
    if let Some(r) = &args.reps {
        opts.timing.reps = speed::parse_count("--reps", r, 100).map_err(usage)?;
    }
    opts.timing.threads = speed::parse_count("--threads", &args.threads, 256).map_err(usage)?;
    opts.peers = args.peers;
    opts.key_setup = !args.no_key_setup;
    if let Some(a) = &args.aad {
        opts.aad_len = a
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= speed::MAX_AAD_LEN)
            .ok_or_else(|| {
                usage(format!(
                    "invalid --aad '{a}' (bytes of associated data, 0 to {})",
                    speed::MAX_AAD_LEN
                ))
            })?;
    }
    speed::validate(&opts).map_err(usage)?;
    Ok(opts)
}

fn list(out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "Algorithms:")?;
    for c in catalog::CIPHERS {
        writeln!(out, "  {:<20} ({})", c.name, c.algorithm.description())?;
    }
    writeln!(out, "Families:")?;
    for (name, what) in catalog::FAMILIES {
        writeln!(out, "  {name:<44} {what}")?;
    }
    Ok(())
}

/// Runs `hwcrypt speed`.
pub fn run(args: &Args) -> Result<(), CliError> {
    if args.list {
        return Ok(list(&mut std::io::stdout().lock())?);
    }
    let format = output::Format::parse(&args.format).map_err(usage)?;
    let opts = options(args)?;
    if let Some(path) = &args.plot {
        plot::check_target(path).map_err(usage)?;
    }
    let tty = std::io::stderr().is_terminal();
    let mut status = |p: &speed::Progress| {
        if tty {
            let mut err = std::io::stderr().lock();
            if p.label.is_empty() {
                let _ = write!(err, "\r\x1b[2K");
            } else {
                let _ = write!(err, "\r\x1b[2K[{}/{}] {}", p.done + 1, p.total, p.label);
            }
            let _ = err.flush();
        }
    };
    let report = speed::run(&opts, &mut status).map_err(usage)?;
    // The results first: a plot that cannot be written costs the plot,
    // not the measurements.
    let printed = {
        let mut out = std::io::stdout().lock();
        output::write(&mut out, &report, format).and_then(|()| out.flush())
    };
    if let Some(path) = &args.plot
        && let Some(warning) =
            plot::write(path, &report).map_err(|e| CliError::Io(std::io::Error::other(e)))?
    {
        eprintln!("hwcrypt: warning: {warning}");
    }
    Ok(printed?)
}
