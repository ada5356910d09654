//! The measurement harness behind `hwcrypt speed`: every cipher x backend x
//! message size, optionally beside the same ciphers from other libraries
//! (feature `peers`), with key-setup rows, as a [`Report`] that renders as a
//! table, JSON, CSV or a plot.
//!
//! How it measures (see [`run`]):
//!
//! * every workload owns its key (made before timing) and one message
//!   buffer, processed in place; a fresh IV / nonce / XTS sector number per
//!   message; AEADs seal (or open) with 13 bytes of AAD unless
//!   [`Options::aad_len`] says otherwise, and the tag goes through
//!   [`std::hint::black_box`], as does every buffer, so nothing is optimised
//!   away; every library's AEAD is driven by the same code ([`aead`]);
//! * the implementations of one cell (cipher and size) are warmed up, then
//!   timed in turns — repetition 1 of each, repetition 2 of each, ... — so a
//!   change in the machine's state hits them all alike; the median of the
//!   repetitions is reported with their spread;
//! * a single-threaded repetition during which the thread was preempted
//!   (on-CPU time under 90% of wall time) is timed by its on-CPU time;
//! * cycles per byte use the core clock measured by [`measure::core_clock_hz`].

mod aead;
pub mod catalog;
mod hw;
pub mod measure;
pub mod output;
#[cfg(feature = "peers")]
mod peers;
pub mod plot;

use catalog::{Cipher, KeyKind};
use hwcrypt::Backend;
use hwcrypt::cpu::{self, Features};
use hwcrypt::registry;
use measure::{Prepared, Timing, Workload};
use serde::Serialize;
use std::time::Duration;

/// The default length of the associated data sealed with every AEAD
/// message: 13 bytes, as a TLS 1.2 record header (what `openssl speed
/// -aead` uses too). TLS 1.3 records have 5.
pub const DEFAULT_AAD_LEN: usize = 13;

/// The most associated data `--aad` takes.
pub const MAX_AAD_LEN: usize = 1 << 20;

pub use aead::CONNECTION_LEN;

/// The IV of message `n` (CBC, CTR, CFB, OFB).
pub(crate) fn iv_for(n: u64) -> [u8; 16] {
    let mut iv = [0x5a; 16];
    iv[..8].copy_from_slice(&n.to_be_bytes());
    iv
}

/// The default message sizes, in bytes.
pub const DEFAULT_SIZES: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];
/// The message sizes of `--quick`.
pub const QUICK_SIZES: [usize; 3] = [16, 1024, 16384];

/// Which hwcrypt backends to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The one each algorithm uses by default on this (masked) CPU.
    Default,
    /// Every backend this (masked) CPU can run, from the registry.
    All,
    /// One backend by name; ciphers it does not cover are skipped.
    Named(Backend),
}

impl BackendChoice {
    /// Parses `all`, `default` or a backend name.
    pub fn parse(s: &str) -> Result<BackendChoice, String> {
        match s.to_ascii_lowercase().as_str() {
            "all" => Ok(BackendChoice::All),
            "default" | "best" => Ok(BackendChoice::Default),
            _ => s.parse().map(BackendChoice::Named).map_err(|_| {
                let names: Vec<_> = Backend::ALL.iter().map(|b| b.name()).collect();
                format!(
                    "unknown backend '{s}' (known: all, default, {})",
                    names.join(", ")
                )
            }),
        }
    }
}

/// What to measure and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Ciphers, in order (see [`catalog::select`]).
    pub ciphers: Vec<Cipher>,
    /// hwcrypt backends.
    pub backends: BackendChoice,
    /// Message sizes in bytes.
    pub sizes: Vec<usize>,
    /// Time per cell, repetitions, threads.
    pub timing: Timing,
    /// Warm-up per implementation and cell.
    pub warm_up: Duration,
    /// Measure the peers too (needs the `peers` feature).
    pub peers: bool,
    /// Measure key setup (ns per key) too.
    pub key_setup: bool,
    /// Bytes of associated data per AEAD message.
    pub aad_len: usize,
}

impl Options {
    /// The default run (every cipher, default backends, default sizes; about
    /// a minute) or, with `quick`, a run of a few seconds.
    pub fn new(quick: bool) -> Options {
        Options {
            ciphers: catalog::CIPHERS.to_vec(),
            backends: BackendChoice::Default,
            sizes: if quick {
                QUICK_SIZES.to_vec()
            } else {
                DEFAULT_SIZES.to_vec()
            },
            timing: Timing {
                time: Duration::from_millis(if quick { 30 } else { 300 }),
                reps: if quick { 3 } else { 5 },
                threads: 1,
            },
            warm_up: Duration::from_millis(if quick { 5 } else { 40 }),
            peers: false,
            key_setup: true,
            aad_len: DEFAULT_AAD_LEN,
        }
    }
}

/// Whether this build can measure peers.
pub const PEERS_BUILT: bool = cfg!(feature = "peers");

/// Parses a list of message sizes: `16,256,1k,16KiB` (k, KiB = 1024).
pub fn parse_sizes(s: &str) -> Result<Vec<usize>, String> {
    let mut sizes = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let lower = item.to_ascii_lowercase();
        let (num, mult) = if let Some(n) = lower
            .strip_suffix("kib")
            .or_else(|| lower.strip_suffix("kb"))
            .or_else(|| lower.strip_suffix('k'))
        {
            (n, 1024)
        } else if let Some(n) = lower
            .strip_suffix("mib")
            .or_else(|| lower.strip_suffix("mb"))
            .or_else(|| lower.strip_suffix('m'))
        {
            (n, 1 << 20)
        } else {
            (lower.strip_suffix('b').unwrap_or(&lower), 1)
        };
        let n: usize = num.trim().parse().map_err(|_| {
            format!("invalid size '{item}' (sizes are bytes, e.g. 16,256,1k,16KiB)")
        })?;
        let size = n.saturating_mul(mult);
        if size == 0 || size > 64 << 20 {
            return Err(format!(
                "invalid size '{item}': sizes run from 1 byte to 64 MiB"
            ));
        }
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    if sizes.is_empty() {
        return Err("no sizes given (e.g. --sizes 16,256,16k)".into());
    }
    sizes.sort_unstable();
    Ok(sizes)
}

/// Parses a duration: `0.3`, `0.3s`, `300ms`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let lower = s.trim().to_ascii_lowercase();
    let (num, scale) = if let Some(n) = lower.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = lower.strip_suffix("us") {
        (n, 1e-6)
    } else {
        (lower.strip_suffix('s').unwrap_or(&lower), 1.0)
    };
    let secs = num
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .map(|x| x * scale)
        .ok_or_else(|| format!("invalid time '{s}' (e.g. 0.3, 300ms, 2s)"))?;
    // The bounds with a little slack: 100 * 1e-6 is 9.999...e-5 in binary.
    if !((1e-4 * (1.0 - 1e-9))..=(60.0 * (1.0 + 1e-9))).contains(&secs) {
        return Err(format!("invalid time '{s}': from 100us to 60s per cell"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a positive count up to `max` (threads, repetitions).
pub fn parse_count(what: &str, s: &str, max: usize) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "invalid {what} '{s}' (a whole number from 1 to {max})"
        )),
    }
}

/// One implementation of a cell.
#[derive(Clone, Debug, Serialize)]
pub struct Implementation {
    /// `hwcrypt/<backend>` or the peer's name.
    pub name: String,
    /// `hwcrypt`, `openssl`, `ring`, `aws-lc-rs` or `rustcrypto`.
    pub library: &'static str,
    /// The hwcrypt backend, for hwcrypt rows.
    pub backend: Option<&'static str>,
}

impl Implementation {
    fn hwcrypt(b: Backend) -> Implementation {
        Implementation {
            name: format!("hwcrypt/{}", b.name()),
            library: "hwcrypt",
            backend: Some(b.name()),
        }
    }

    /// Whether this is one of hwcrypt's backends.
    pub fn is_hwcrypt(&self) -> bool {
        self.library == "hwcrypt"
    }
}

/// One throughput row: a cipher, a message size, an implementation.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Cipher name, e.g. `aes-128-gcm`.
    pub algorithm: &'static str,
    /// Message size in bytes.
    pub size: usize,
    /// Who computed it.
    #[serde(flatten)]
    pub implementation: Implementation,
    /// Threads (each its own key and buffer).
    pub threads: usize,
    /// Median throughput, GB/s (1e9 bytes per second), all threads together.
    pub gbps: f64,
    /// Slowest repetition, GB/s.
    pub gbps_min: f64,
    /// Fastest repetition, GB/s.
    pub gbps_max: f64,
    /// (max - min) / median, in percent.
    pub spread_pct: f64,
    /// Core clock cycles per byte on one core.
    pub cycles_per_byte: f64,
    /// Single-threaded median GB/s (measured beside the threaded one), when threads > 1.
    pub single_thread_gbps: Option<f64>,
    /// gbps / (threads x single_thread_gbps), when threads > 1.
    pub scaling_efficiency: Option<f64>,
    /// gbps / the best peer's gbps in the same cell, when peers were measured.
    pub vs_best_peer: Option<f64>,
    /// The best peer in the same cell.
    pub best_peer: Option<String>,
    /// Repetitions timed.
    pub reps: usize,
    /// Repetitions timed by on-CPU time because the thread was preempted.
    pub preempted_reps: usize,
}

/// One key-setup row.
#[derive(Clone, Debug, Serialize)]
pub struct KeyRow {
    /// Key type, e.g. `aes-128`, `aes-256-gcm`, `aes-128-xts`.
    pub algorithm: &'static str,
    /// Who computed it.
    #[serde(flatten)]
    pub implementation: Implementation,
    /// Median nanoseconds per key (made from bytes, then dropped).
    pub ns_per_key: f64,
    /// Fastest repetition.
    pub ns_min: f64,
    /// Slowest repetition.
    pub ns_max: f64,
    /// (max - min) / median, in percent.
    pub spread_pct: f64,
    /// Core clock cycles per key.
    pub cycles_per_key: f64,
    /// Repetitions timed.
    pub reps: usize,
}

/// Something that was not measured, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    /// Cipher or key type.
    pub algorithm: String,
    /// The message size, where the reason is the size.
    pub size: Option<usize>,
    /// The implementation, where the reason is the implementation.
    pub implementation: Option<String>,
    /// Why.
    pub reason: String,
}

pub use crate::cpu_header::{CpuHeader, CpuInfo};

/// A peer library and its version.
#[derive(Clone, Debug, Serialize)]
pub struct PeerInfo {
    /// Name used in the rows.
    pub name: &'static str,
    /// Version (of the crate, and of the C library where there is one).
    pub version: String,
    /// What it covers here.
    pub covers: &'static str,
}

/// The conditions of the run.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    /// hwcrypt's version.
    pub hwcrypt_version: &'static str,
    /// The CPU, its features, the mask, the usable features (`cpu`,
    /// `detected`, `mask`, `usable` in JSON): the block `hwcrypt cpu` starts
    /// with too.
    #[serde(flatten)]
    pub hardware: CpuHeader,
    /// Core clock used for cycles, GHz.
    pub clock_ghz: f64,
    /// How the clock was found.
    pub clock_method: &'static str,
    /// Threads per cell.
    pub threads: usize,
    /// Repetitions per cell.
    pub reps: usize,
    /// Timed milliseconds per implementation and cell (all repetitions).
    pub time_per_cell_ms: f64,
    /// Warm-up milliseconds per implementation and cell.
    pub warm_up_ms: f64,
    /// Message sizes.
    pub sizes: Vec<usize>,
    /// Bytes of associated data per AEAD message.
    pub aad_len: usize,
    /// `/proc/loadavg` at the start (1, 5, 15 minutes), where known.
    pub load_average: Option<[f64; 3]>,
    /// Peers measured.
    pub peers: Vec<PeerInfo>,
    /// Units and conventions.
    pub notes: Vec<&'static str>,
}

/// Everything a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Conditions.
    pub header: Header,
    /// Throughput rows, by cipher, then size, then implementation.
    pub throughput: Vec<Row>,
    /// Key-setup rows.
    pub key_setup: Vec<KeyRow>,
    /// What was not measured.
    pub skipped: Vec<Skipped>,
}

/// Progress, for a status line.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Cells done.
    pub done: usize,
    /// Cells in the run.
    pub total: usize,
    /// The cell now being measured.
    pub label: String,
}

type Factory = Box<dyn Fn() -> Result<Box<dyn Workload>, String>>;

/// The hwcrypt backends to measure for `algorithm`, or why none.
fn backends_for(
    algorithm: registry::Algorithm,
    choice: BackendChoice,
    features: Features,
) -> Result<Vec<Backend>, String> {
    match choice {
        BackendChoice::Default => Ok(vec![registry::select(algorithm, features)]),
        BackendChoice::All => Ok(registry::runnable(algorithm, features)),
        BackendChoice::Named(b) => registry::check_with(algorithm, b, features)
            .map(|()| vec![b])
            .map_err(|e| e.to_string()),
    }
}

fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(|s| s.parse::<f64>().ok());
    Some([it.next()??, it.next()??, it.next()??])
}

/// The most `validate` lets the threads' buffers take together.
pub const MAX_BUFFER_BYTES: u64 = 4 << 30;

/// Checks what can be checked before measuring: the peers feature, that a
/// named backend covers at least one of the ciphers, and that the threads'
/// buffers stay under [`MAX_BUFFER_BYTES`].
pub fn validate(opts: &Options) -> Result<(), String> {
    if opts.peers && !PEERS_BUILT {
        return Err("this hwcrypt was built without peers; rebuild with \
                    `cargo build --release -p hwcrypt-cli --features peers`"
            .into());
    }
    if opts.ciphers.is_empty() {
        return Err("no algorithms selected".into());
    }
    if opts.aad_len > MAX_AAD_LEN {
        return Err(format!("--aad: at most {MAX_AAD_LEN} bytes"));
    }
    // Each thread holds about two buffers of the largest size (data and a
    // copy to open), times the streams of a multi-stream row (the 16 CBC
    // streams of `aes-*-cbc-x16`): `--threads 256 --sizes 64m` would ask
    // for 32 GiB.
    let largest = opts.sizes.iter().copied().max().unwrap_or(0) as u64;
    let streams = opts.ciphers.iter().map(|c| c.streams()).max().unwrap_or(1) as u64;
    let held = largest
        .saturating_mul(2)
        .saturating_mul(streams)
        .saturating_mul(opts.timing.threads as u64);
    if held > MAX_BUFFER_BYTES {
        return Err(format!(
            "--threads {} with a {} MiB size would hold about {} MiB of buffers \
             (at most {} MiB): fewer threads or smaller sizes",
            opts.timing.threads,
            largest >> 20,
            held >> 20,
            MAX_BUFFER_BYTES >> 20
        ));
    }
    let features = cpu::features().map_err(|e| e.to_string())?;
    if let BackendChoice::Named(b) = opts.backends {
        let errors: Vec<String> = opts
            .ciphers
            .iter()
            .filter_map(|c| backends_for(c.algorithm, opts.backends, features).err())
            .collect();
        if errors.len() == opts.ciphers.len() {
            return Err(format!(
                "backend {b} cannot run any selected algorithm here: {}",
                errors[0]
            ));
        }
    }
    if opts
        .ciphers
        .iter()
        .all(|c| opts.sizes.iter().all(|s| c.rejects(*s).is_some()))
    {
        return Err("no selected algorithm takes any of the given sizes \
                    (ECB/CBC need multiples of 16 bytes, XTS at least 16)"
            .into());
    }
    Ok(())
}

struct Cell {
    label: String,
    impls: Vec<(Implementation, Factory)>,
}

/// Times every implementation of a cell in turns; returns per implementation
/// the samples (ops/s) of the threaded runs, of the single-threaded runs
/// (when threads > 1), and how many runs were preempted.
fn time_cell(
    cell: &Cell,
    opts: &Options,
    threads: usize,
    skipped: &mut Vec<Skipped>,
    algorithm: &str,
    size: Option<usize>,
) -> Vec<(Implementation, Vec<f64>, Vec<f64>, usize)> {
    let mut prepared: Vec<(Implementation, Prepared)> = Vec::new();
    for (imp, make) in &cell.impls {
        let made: Result<Vec<_>, String> = (0..threads).map(|_| make()).collect();
        match made {
            Ok(per_thread) => {
                prepared.push((imp.clone(), Prepared::new(per_thread, opts.warm_up)));
            }
            Err(reason) => skipped.push(Skipped {
                algorithm: algorithm.to_string(),
                size,
                implementation: Some(imp.name.clone()),
                reason,
            }),
        }
    }
    let mut results: Vec<_> = prepared
        .iter()
        .map(|(imp, _)| (imp.clone(), Vec::new(), Vec::new(), 0usize))
        .collect();
    for _ in 0..opts.timing.reps {
        for ((_, p), r) in prepared.iter_mut().zip(results.iter_mut()) {
            if threads > 1 {
                r.2.push(measure::sample(p, &opts.timing, 1).ops_per_sec);
            }
            let s = measure::sample(p, &opts.timing, threads);
            r.1.push(s.ops_per_sec);
            r.3 += usize::from(s.preempted);
        }
    }
    results
}

fn spread(med: f64, lo: f64, hi: f64) -> f64 {
    if med > 0.0 {
        (hi - lo) / med * 100.0
    } else {
        0.0
    }
}

/// Measures everything `opts` asks for. `progress` is called before each cell.
pub fn run(opts: &Options, progress: &mut dyn FnMut(&Progress)) -> Result<Report, String> {
    validate(opts)?;
    let features = cpu::features().map_err(|e| e.to_string())?;
    let threads = opts.timing.threads.max(1);
    let load = load_average();
    let clock = measure::core_clock_hz();
    let mut skipped = Vec::new();
    let aad = vec![0xa5u8; opts.aad_len];

    // Throughput cells.
    let mut cells: Vec<(Cipher, usize, Cell)> = Vec::new();
    let mut key_kinds: Vec<KeyKind> = Vec::new();
    for cipher in &opts.ciphers {
        let backends = match backends_for(cipher.algorithm, opts.backends, features) {
            Ok(b) => b,
            Err(reason) => {
                skipped.push(Skipped {
                    algorithm: cipher.name.to_string(),
                    size: None,
                    implementation: None,
                    reason,
                });
                Vec::new()
            }
        };
        if backends.is_empty() && !opts.peers {
            continue;
        }
        if !key_kinds.contains(&cipher.key_kind()) {
            key_kinds.push(cipher.key_kind());
        }
        for &size in &opts.sizes {
            if let Some(why) = cipher.rejects(size) {
                skipped.push(Skipped {
                    algorithm: cipher.name.to_string(),
                    size: Some(size),
                    implementation: None,
                    reason: why.to_string(),
                });
                continue;
            }
            let mut impls: Vec<(Implementation, Factory)> = Vec::new();
            for &b in &backends {
                let c = *cipher;
                let aad = aad.clone();
                impls.push((
                    Implementation::hwcrypt(b),
                    Box::new(move || hw::workload(&c, b, size, &aad).map_err(|e| e.to_string())),
                ));
            }
            #[cfg(feature = "peers")]
            if opts.peers {
                for peer in peers::PEERS {
                    let c = *cipher;
                    let aad = aad.clone();
                    if peers::workload(peer.name, &c, size, &aad).is_some() {
                        impls.push((
                            peers::implementation(peer),
                            Box::new(move || {
                                peers::workload(peer.name, &c, size, &aad)
                                    .unwrap_or_else(|| Err("not implemented".into()))
                            }),
                        ));
                    }
                }
            }
            let label = format!("{} {}", cipher.name, output::size_label(size));
            cells.push((*cipher, size, Cell { label, impls }));
        }
    }

    // Key-setup cells, then the "new key + seal" ones.
    let connections: Vec<KeyKind> = key_kinds
        .iter()
        .filter_map(|k| {
            opts.ciphers
                .iter()
                .find(|c| c.key_kind() == *k)
                .and_then(|c| c.connection_kind())
        })
        .collect();
    key_kinds.extend(connections);
    let mut key_cells: Vec<(KeyKind, Cell)> = Vec::new();
    if opts.key_setup {
        for kind in key_kinds {
            let mut impls: Vec<(Implementation, Factory)> = Vec::new();
            for b in backends_for(kind.algorithm(), opts.backends, features).unwrap_or_default() {
                let aad = aad.clone();
                impls.push((
                    Implementation::hwcrypt(b),
                    Box::new(move || hw::key_setup(kind, b, &aad).map_err(|e| e.to_string())),
                ));
            }
            #[cfg(feature = "peers")]
            if opts.peers {
                for peer in peers::PEERS {
                    let aad = aad.clone();
                    if peers::key_setup(peer.name, kind, &aad).is_some() {
                        impls.push((
                            peers::implementation(peer),
                            Box::new(move || {
                                peers::key_setup(peer.name, kind, &aad)
                                    .unwrap_or_else(|| Err("not implemented".into()))
                            }),
                        ));
                    }
                }
            }
            if !impls.is_empty() {
                let label = if kind.is_connection() {
                    kind.name().to_string()
                } else {
                    format!("{} key setup", kind.name())
                };
                key_cells.push((kind, Cell { label, impls }));
            }
        }
    }

    let total = cells.len() + key_cells.len();
    let mut done = 0;
    let mut rows = Vec::new();
    for (cipher, size, cell) in &cells {
        progress(&Progress {
            done,
            total,
            label: cell.label.clone(),
        });
        done += 1;
        let results = time_cell(cell, opts, threads, &mut skipped, cipher.name, Some(*size));
        let gb = |ops: f64| ops * (*size * cipher.streams()) as f64 / 1e9;
        let mut cell_rows: Vec<Row> = results
            .into_iter()
            .map(|(imp, multi, single, preempted)| {
                let multi: Vec<f64> = multi.into_iter().map(gb).collect();
                let (med, lo, hi) = measure::stats(&multi);
                let single_med = (!single.is_empty()).then(|| {
                    let s: Vec<f64> = single.into_iter().map(gb).collect();
                    measure::stats(&s).0
                });
                Row {
                    algorithm: cipher.name,
                    size: *size,
                    implementation: imp,
                    threads,
                    gbps: med,
                    gbps_min: lo,
                    gbps_max: hi,
                    spread_pct: spread(med, lo, hi),
                    cycles_per_byte: clock * threads as f64 / (med * 1e9),
                    single_thread_gbps: single_med,
                    scaling_efficiency: single_med.map(|s| med / (threads as f64 * s)),
                    vs_best_peer: None,
                    best_peer: None,
                    reps: multi.len(),
                    preempted_reps: preempted,
                }
            })
            .collect();
        let best = cell_rows
            .iter()
            .filter(|r| !r.implementation.is_hwcrypt())
            .max_by(|a, b| a.gbps.total_cmp(&b.gbps))
            .map(|r| (r.gbps, r.implementation.name.clone()));
        if let Some((best_gbps, best_name)) = best {
            for r in &mut cell_rows {
                r.vs_best_peer = Some(r.gbps / best_gbps);
                r.best_peer = Some(best_name.clone());
            }
        }
        rows.extend(cell_rows);
    }

    let mut key_rows = Vec::new();
    let key_opts = Options {
        timing: Timing {
            threads: 1,
            ..opts.timing
        },
        ..opts.clone()
    };
    for (kind, cell) in &key_cells {
        progress(&Progress {
            done,
            total,
            label: cell.label.clone(),
        });
        done += 1;
        for (imp, samples, _, _) in time_cell(cell, &key_opts, 1, &mut skipped, kind.name(), None) {
            let ns: Vec<f64> = samples.iter().map(|ops| 1e9 / ops).collect();
            let (med, lo, hi) = measure::stats(&ns);
            key_rows.push(KeyRow {
                algorithm: kind.name(),
                implementation: imp,
                ns_per_key: med,
                ns_min: lo,
                ns_max: hi,
                spread_pct: spread(med, lo, hi),
                cycles_per_key: med * clock / 1e9,
                reps: ns.len(),
            });
        }
    }
    progress(&Progress {
        done,
        total,
        label: String::new(),
    });

    #[cfg(feature = "peers")]
    let peer_info = if opts.peers {
        peers::PEERS.iter().map(peers::info).collect()
    } else {
        Vec::new()
    };
    #[cfg(not(feature = "peers"))]
    let peer_info = Vec::new();
    let header = Header {
        hwcrypt_version: env!("CARGO_PKG_VERSION"),
        hardware: CpuHeader::current().map_err(|e| e.to_string())?,
        clock_ghz: clock / 1e9,
        clock_method: measure::CLOCK_METHOD,
        threads,
        reps: opts.timing.reps,
        time_per_cell_ms: opts.timing.time.as_secs_f64() * 1e3,
        warm_up_ms: opts.warm_up.as_secs_f64() * 1e3,
        sizes: opts.sizes.clone(),
        aad_len: opts.aad_len,
        load_average: load,
        peers: peer_info,
        notes: vec![
            "GB/s = 1e9 bytes per second (median of the repetitions); spread = (max - min) / median",
            "cycles use the measured core clock (not the TSC); with threads, cycles per byte per core",
            "one message per call, in place, key made beforehand; fresh IV/nonce/sector per message; AEADs seal (-dec rows: open) with aad_len bytes of AAD",
            "AEAD open rows (-dec): the ciphertext is copied into the buffer before each open, by every implementation alike",
            "'+ seal 1350 B' rows: a new key from fresh bytes, then one 1350-byte message sealed with it (ns per key and message)",
            "XTS: the message is one data unit (the sector number is the tweak)",
            "-x16 rows: 16 CBC streams of the row's size, one key, an IV each, encrypted in one call (hwcrypt: Cbc::encrypt_many; peers: one stream after another); GB/s counts all 16",
            "implementations of a cell are timed in turns (interleaved), in one process",
        ],
    };
    Ok(Report {
        header,
        throughput: rows,
        key_setup: key_rows,
        skipped,
    })
}
