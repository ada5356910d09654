//! `hwcrypt crack`: known-plaintext AES key search over a described key space.
//!
//! Exit status: 0 = a key was found, 1 = the whole (shard of the) key space
//! was searched and no key matched, 2 = error, 130 = interrupted (Ctrl-C;
//! the position reached is printed and, with `--resume FILE`, saved).

use crate::error::CliError;
use hwcrypt::Backend;
use hwcrypt::crack::{
    self, CancelToken, Challenge, Hit, KeySpace, Mode, Padding, Predicate, Progress, Search,
    SearchOptions,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Flags of `hwcrypt crack`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Key space: comma- or space-separated byte sets, each with an optional repeat *N:
  a number (decimal or 0x hex), a range A..=B, A..B or A-B, ? (any byte),
  a list {1,5,0x10..=0x1f}, or hex:0011... for fixed bytes.
  Example: '0..=16*6, 0*26' = first 6 bytes in 0..=16, 26 zero bytes (AES-256).

Exit status: 0 found, 1 searched everything and not found, 2 error,
130 interrupted (continue with --start POSITION or --resume FILE).")]
pub struct Args {
    /// The candidate keys (see below).
    #[arg(short = 'k', long)]
    keyspace: String,
    /// Cipher mode of the ciphertext.
    #[arg(short = 'm', long, value_enum)]
    mode: ModeArg,
    /// IV / initial counter block, 32 hex digits. Required for ctr; optional
    /// for cbc (without it, block 0 is not checked).
    #[arg(long)]
    iv: Option<String>,
    /// Ciphertext as hex.
    #[arg(long, group = "ct")]
    hex: Option<String>,
    /// Ciphertext as base64.
    #[arg(long, group = "ct")]
    base64: Option<String>,
    /// Ciphertext file (raw bytes; `-` reads standard input).
    #[arg(long = "in", group = "ct")]
    input: Option<PathBuf>,
    /// The plaintext must look like text (printable ASCII, tab, CR, LF).
    #[arg(long)]
    text: bool,
    /// With --text: the least share of text bytes, 0..=1 (default 1.0: all).
    /// Lower ratios weaken the fast filter.
    #[arg(long, value_name = "RATIO")]
    text_ratio: Option<f64>,
    /// With --text: UTF-8 multi-byte characters count as text.
    #[arg(long)]
    utf8: bool,
    /// The plaintext contains this string (repeatable).
    #[arg(long, value_name = "STRING")]
    contains: Vec<String>,
    /// The plaintext contains these bytes, given as hex (repeatable).
    #[arg(long, value_name = "HEX")]
    contains_hex: Vec<String>,
    /// The plaintext starts with this string.
    #[arg(long, value_name = "STRING")]
    prefix: Option<String>,
    /// Known plaintext at a byte offset, OFFSET:STRING (repeatable).
    #[arg(long, value_name = "OFFSET:STRING")]
    known: Vec<String>,
    /// Known plaintext at a byte offset as hex, OFFSET:HEX (repeatable).
    #[arg(long, value_name = "OFFSET:HEX")]
    known_hex: Vec<String>,
    /// PKCS#7 padding (ecb, cbc): strip if valid (auto), require, or none.
    #[arg(long, value_enum, default_value = "auto")]
    padding: PaddingArg,
    /// Ciphertext blocks the fast filter checks, e.g. 1,2 (default: chosen
    /// from the predicates; never cbc block 0).
    #[arg(long, value_delimiter = ',', value_name = "BLOCKS")]
    filter_blocks: Option<Vec<usize>>,
    /// Worker threads (default: one per core).
    #[arg(short = 't', long, default_value_t = 0)]
    threads: usize,
    /// Search only slice I of N equal slices (0-based), e.g. 3/16.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Start at this key index (as printed by an interrupted search).
    #[arg(long, value_name = "POSITION")]
    start: Option<u64>,
    /// Continue from the position saved in FILE (if it exists) and save the
    /// position there periodically, when interrupted and at the end.
    #[arg(long, value_name = "FILE")]
    resume: Option<PathBuf>,
    /// With --resume: seconds between saves during the search (0: only at the end).
    #[arg(long, value_name = "SECS", default_value_t = 60, requires = "resume")]
    checkpoint: u64,
    /// Batch backend: vaes-avx512, vaes-avx2, aesni or soft (default: the best this CPU runs).
    #[arg(long)]
    backend: Option<String>,
    /// Report every matching key, not just the first.
    #[arg(long)]
    all: bool,
    /// With --all: stop after this many keys (a predicate most keys pass
    /// would print and keep hits without end); the position to continue
    /// from is printed and saved as for an interrupted search.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "all",
          value_parser = clap::value_parser!(u64).range(1..))]
    max_hits: u64,
    /// Print the result as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// No progress bar (it is shown only on a terminal anyway).
    #[arg(short = 'q', long)]
    quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ModeArg {
    Ecb,
    Cbc,
    Ctr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PaddingArg {
    Auto,
    Pkcs7,
    None,
}

fn usage(msg: impl Into<String>) -> CliError {
    CliError::Crypto(hwcrypt::Error::InvalidSearch(msg.into()))
}

fn hex_decode(what: &str, s: &str) -> Result<Vec<u8>, CliError> {
    let s: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    hex::decode(&s).map_err(|e| match e {
        hex::FromHexError::OddLength => usage(format!("{what}: odd number of hex digits")),
        _ => usage(format!("{what}: not hex")),
    })
}

/// Standard or URL-safe base64, padding optional, whitespace ignored.
fn base64_decode(s: &str) -> Result<Vec<u8>, CliError> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let s: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let config = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let alphabet = if s.contains(['-', '_']) {
        &base64::alphabet::URL_SAFE
    } else {
        &base64::alphabet::STANDARD
    };
    GeneralPurpose::new(alphabet, config)
        .decode(&s)
        .map_err(|_| usage("--base64: not base64"))
}

fn block(what: &str, s: &str) -> Result<[u8; 16], CliError> {
    let v = hex_decode(what, s)?;
    v.try_into()
        .map_err(|v: Vec<u8>| usage(format!("{what}: {} bytes, need 16", v.len())))
}

fn offset_and(what: &str, s: &str) -> Result<(usize, String), CliError> {
    let (off, rest) = s
        .split_once(':')
        .ok_or_else(|| usage(format!("{what}: expected OFFSET:VALUE, got {s:?}")))?;
    let off = off
        .trim()
        .parse()
        .map_err(|_| usage(format!("{what}: bad offset {off:?}")))?;
    Ok((off, rest.to_string()))
}

fn read_ciphertext(args: &Args) -> Result<Vec<u8>, CliError> {
    if let Some(h) = &args.hex {
        return hex_decode("--hex", h);
    }
    if let Some(b) = &args.base64 {
        return base64_decode(b);
    }
    match &args.input {
        Some(p) if p.as_os_str() == "-" => {
            let mut v = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut v)?;
            Ok(v)
        }
        Some(p) => std::fs::read(p).map_err(|e| {
            CliError::Io(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", p.display()),
            ))
        }),
        None => Err(usage("no ciphertext: give --hex, --base64 or --in FILE")),
    }
}

fn predicates(args: &Args) -> Result<Vec<Predicate>, CliError> {
    let mut p = Vec::new();
    if args.text || args.text_ratio.is_some() || args.utf8 {
        p.push(Predicate::Text {
            min_ratio: args.text_ratio.unwrap_or(1.0),
            utf8: args.utf8,
        });
    }
    for s in &args.contains {
        p.push(Predicate::Contains(s.as_bytes().to_vec()));
    }
    for h in &args.contains_hex {
        p.push(Predicate::Contains(hex_decode("--contains-hex", h)?));
    }
    if let Some(s) = &args.prefix {
        p.push(Predicate::KnownAt {
            offset: 0,
            bytes: s.as_bytes().to_vec(),
        });
    }
    for k in &args.known {
        let (offset, s) = offset_and("--known", k)?;
        p.push(Predicate::KnownAt {
            offset,
            bytes: s.into_bytes(),
        });
    }
    for k in &args.known_hex {
        let (offset, h) = offset_and("--known-hex", k)?;
        p.push(Predicate::KnownAt {
            offset,
            bytes: hex_decode("--known-hex", &h)?,
        });
    }
    Ok(p)
}

fn parse_shard(s: &str) -> Result<(u64, u64), CliError> {
    let bad = || usage(format!("--shard {s:?}: expected I/N with 0 <= I < N"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// What `--resume FILE` holds.
#[derive(Debug, Serialize, Deserialize)]
struct ResumeState {
    keyspace: String,
    shard: Option<String>,
    /// Fingerprint of the challenge (mode, IV, ciphertext, padding and
    /// predicates): a file saved for another challenge is refused, and so
    /// is a file without one (written before it existed: it cannot say
    /// which challenge it belongs to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    challenge: Option<String>,
    position: u64,
    completed: bool,
    /// Keys found so far (with `--all`, over every resumed run).
    #[serde(default)]
    hits: Vec<SavedHit>,
}

/// A key recorded in the resume file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct SavedHit {
    key: String,
    index: u64,
}

/// A fingerprint of everything that defines the challenge besides the key
/// space: 64-bit FNV-1a over a canonical description (not a security
/// measure; it only stops a resume file from silently serving another
/// challenge).
fn challenge_fingerprint(args: &Args, ciphertext: &[u8]) -> String {
    let description = format!(
        "mode={:?};iv={:?};padding={:?};text={};ratio={:?};utf8={};contains={:?};contains_hex={:?};\
         prefix={:?};known={:?};known_hex={:?};ct={}",
        args.mode,
        args.iv.as_deref().map(str::to_ascii_lowercase),
        args.padding,
        args.text,
        args.text_ratio,
        args.utf8,
        args.contains,
        args.contains_hex,
        args.prefix,
        args.known,
        args.known_hex,
        hex(ciphertext),
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in description.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

fn load_resume(path: &Path, args: &Args, challenge: &str) -> Result<Option<ResumeState>, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(usage(format!("{}: {e}", path.display()))),
    };
    let state: ResumeState = serde_json::from_str(&text)
        .map_err(|e| usage(format!("{}: not a resume file ({e})", path.display())))?;
    if state.keyspace != args.keyspace || state.shard != args.shard {
        return Err(usage(format!(
            "{}: saved for key space {:?} shard {:?}, not this search",
            path.display(),
            state.keyspace,
            state.shard
        )));
    }
    match state.challenge.as_deref() {
        Some(c) if c == challenge => Ok(Some(state)),
        Some(_) => Err(usage(format!(
            "{}: saved for another challenge (ciphertext, IV, mode or predicates differ); \
             use another --resume file",
            path.display()
        ))),
        None => Err(usage(format!(
            "{}: written by an older hwcrypt without a challenge fingerprint, so it cannot \
             show it belongs to this challenge; continue with --start {} if it does",
            path.display(),
            state.position
        ))),
    }
}

/// The resume file's contents for a search at `position` that has found
/// `found` (besides the `earlier` hits of resumed runs).
fn resume_state(
    args: &Args,
    fingerprint: &str,
    earlier: &[SavedHit],
    found: &[Hit],
    position: u64,
    completed: bool,
) -> ResumeState {
    let mut hits = earlier.to_vec();
    for h in found {
        let saved = SavedHit {
            key: hex(&h.key),
            index: h.index,
        };
        if !hits.contains(&saved) {
            hits.push(saved);
        }
    }
    ResumeState {
        keyspace: args.keyspace.clone(),
        shard: args.shard.clone(),
        challenge: Some(fingerprint.to_owned()),
        position,
        completed,
        hits,
    }
}

/// Writes `state` to `path` atomically: a new file with a unique name in
/// the same directory (created exclusively, so a planted file or symlink
/// is never followed), synced, renamed over `path`, then the directory
/// synced so the rename itself survives a crash.
fn save_resume(path: &Path, state: &ResumeState) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let text = serde_json::to_string_pretty(state).map_err(std::io::Error::from)? + "\n";
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(
        ".{}.{}-{}-{nanos}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        // Directory fsync: best effort where directories cannot be opened.
        if let Ok(d) = std::fs::File::open(&dir) {
            d.sync_all()?;
        }
        Ok(())
    };
    let r = write();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// Saves the resume file, or warns naming it: the search result (printed
/// before) must not be lost to a file that cannot be written.
fn save_resume_or_warn(path: &Path, state: &ResumeState) {
    if let Err(e) = save_resume(path, state) {
        eprintln!(
            "hwcrypt: warning: could not save the resume file {}: {e}",
            path.display()
        );
    }
}

/// The plaintext as one line: text as is, `\n`, `\t`, `\r`, `\\`, `\"` and
/// other control characters escaped, bytes that are not UTF-8 as `\xNN`.
pub fn escape(bytes: &[u8]) -> String {
    let mut s = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => s.push_str("\\n"),
                '\t' => s.push_str("\\t"),
                '\r' => s.push_str("\\r"),
                '\\' => s.push_str("\\\\"),
                '"' => s.push_str("\\\""),
                c if c.is_control() => s.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => s.push(c),
            }
        }
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

fn hex(b: &[u8]) -> String {
    hex::encode(b)
}

#[derive(Debug, Serialize)]
struct JsonHit {
    key: String,
    index: u64,
    plaintext: String,
    plaintext_hex: String,
    plaintext_offset: usize,
}

#[derive(Debug, Serialize)]
struct JsonReport {
    found: bool,
    key: Option<String>,
    plaintext: Option<String>,
    hits: Vec<JsonHit>,
    keyspace_size: u64,
    key_bits: usize,
    mode: &'static str,
    range: [u64; 2],
    searched: u64,
    position: u64,
    completed: bool,
    interrupted: bool,
    hit_limit: bool,
    backend: &'static str,
    threads: usize,
    filter_blocks: Vec<usize>,
    filter_passes: u64,
    seconds: f64,
    keys_per_second: f64,
}

fn json_hit(h: &Hit) -> JsonHit {
    JsonHit {
        key: hex(&h.key),
        index: h.index,
        plaintext: escape(&h.plaintext),
        plaintext_hex: hex(&h.plaintext),
        plaintext_offset: h.plaintext_offset,
    }
}

fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.1} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else if x >= 10.0 || x == 0.0 {
        format!("{x:.0} ")
    } else {
        // A slow filter on one thread can run under ten keys a second:
        // "0 keys/s" would read as a stalled search.
        format!("{x:.2} ")
    }
}

/// The progress bar of a search on a terminal: keys searched of the range.
fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("[{bar:30}] {percent:>3}%  {msg}  ETA {eta}") {
        bar.set_style(style.progress_chars("#>."));
    }
    bar
}

fn progress_message(p: &Progress) -> String {
    let secs = p.elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        p.searched as f64 / secs
    } else {
        0.0
    };
    format!("{}keys/s", si(rate))
}

/// Runs `hwcrypt crack`; the exit status says found (0), not found (1),
/// error (2) or interrupted (130).
pub fn main(args: &Args) -> ExitCode {
    match run(args) {
        Ok(code) => code,
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("hwcrypt: error: {err}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, CliError> {
    let space = KeySpace::parse(&args.keyspace)?;
    let ciphertext = read_ciphertext(args)?;
    let mode = match args.mode {
        ModeArg::Ecb => {
            if args.iv.is_some() {
                return Err(usage("ecb takes no IV"));
            }
            Mode::Ecb
        }
        ModeArg::Cbc => Mode::Cbc {
            iv: args.iv.as_deref().map(|s| block("--iv", s)).transpose()?,
        },
        ModeArg::Ctr => Mode::Ctr {
            iv: block(
                "--iv",
                args.iv
                    .as_deref()
                    .ok_or_else(|| usage("ctr needs --iv (the initial counter block)"))?,
            )?,
        },
    };
    let padding = match args.padding {
        PaddingArg::Auto => Padding::Auto,
        PaddingArg::Pkcs7 => Padding::Pkcs7,
        PaddingArg::None => Padding::None,
    };
    let fingerprint = challenge_fingerprint(args, &ciphertext);
    let challenge = Challenge::new(ciphertext, mode, padding, predicates(args)?)?;
    let backend = args
        .backend
        .as_deref()
        .map(str::parse::<Backend>)
        .transpose()?;
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let mut start = args.start;
    let mut earlier_hits = Vec::new();
    if let Some(path) = &args.resume
        && let Some(state) = load_resume(path, args, &fingerprint)?
    {
        if start.is_some() {
            return Err(usage("give either --start or --resume, not both"));
        }
        start = Some(state.position);
        earlier_hits = state.hits;
    }
    let cancel = CancelToken::new();
    let options = SearchOptions {
        threads: args.threads,
        backend,
        shard,
        start,
        filter_blocks: args.filter_blocks.clone(),
        find_all: args.all,
        max_hits: Some(usize::try_from(args.max_hits).unwrap_or(usize::MAX)),
        cancel: Some(cancel.clone()),
        progress_interval: None,
    };
    let search = Search::new(&space, &challenge, options)?;
    // Keys an earlier run of this search found (the resume file), confirmed
    // against the challenge again: a stale or edited record is dropped.
    let confirmed: Vec<Hit> = earlier_hits
        .iter()
        .filter_map(|h| search.confirm(&hex_decode("key", &h.key).ok()?, h.index))
        .collect();
    if !args.all && !confirmed.is_empty() {
        // The search was for one key, and it was found: report it again
        // instead of searching past it.
        return report_earlier(args, &confirmed);
    }
    {
        let c = cancel.clone();
        // A second handler (tests run several searches) is not an error worth stopping for.
        let _ = ctrlc::set_handler(move || c.cancel());
    }
    let range = search.range();
    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let mut err = std::io::stderr().lock();
    if !args.json || show_progress {
        writeln!(
            err,
            "key space: {} keys (2^{:.1}), AES-{}; searching {}..{} ({} keys){}",
            space.size(),
            space.bits(),
            space.key_size().bits(),
            range.start,
            range.end,
            range.end - range.start,
            shard.map_or(String::new(), |(i, n)| format!(", shard {i}/{n}")),
        )?;
        writeln!(
            err,
            "backend: {} ({} key{} per register), {} thread{}; filter: {}",
            search.backend(),
            crack::keys_per_register(search.backend()),
            if crack::keys_per_register(search.backend()) == 1 {
                ""
            } else {
                "s"
            },
            search.threads(),
            if search.threads() == 1 { "" } else { "s" },
            search.filter_description()
        )?;
    }
    drop(err);
    let started = Instant::now();
    let bar = show_progress.then(|| progress_bar(range.end - range.start));
    // Periodic checkpoints: the position below which every key was tested,
    // with the keys found below it, so a crash or a killed job loses at
    // most one interval.
    let checkpoint = (args.resume.is_some() && args.checkpoint > 0)
        .then(|| Duration::from_secs(args.checkpoint));
    let mut last_saved = Instant::now();
    let outcome = search.run(|p| {
        if let Some(bar) = &bar {
            bar.set_length(p.total);
            bar.set_position(p.searched.min(p.total));
            bar.set_message(progress_message(p));
        }
        if let (Some(every), Some(path)) = (checkpoint, &args.resume)
            && last_saved.elapsed() >= every
        {
            last_saved = Instant::now();
            let state = resume_state(
                args,
                &fingerprint,
                &earlier_hits,
                p.found,
                p.position,
                false,
            );
            save_resume_or_warn(path, &state);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let secs = started.elapsed().as_secs_f64();
    let rate = outcome.searched as f64 / secs.max(1e-9);
    // Stopped by Ctrl-C before the search ended: with --all even after
    // hits (the rest of the range is still to search), without --all only
    // if no key was found.
    let interrupted = outcome.cancelled && (args.all || outcome.hits.is_empty());
    // With --all, the keys earlier runs found are reported with the new ones.
    let mut all_hits = if args.all { confirmed } else { Vec::new() };
    for h in &outcome.hits {
        if !all_hits
            .iter()
            .any(|e| e.index == h.index && e.key == h.key)
        {
            all_hits.push(h.clone());
        }
    }
    all_hits.sort_by_key(|h| h.index);
    let code = if interrupted {
        ExitCode::from(130)
    } else if all_hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    let printed = (|| -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        if args.json {
            let report = JsonReport {
                found: !all_hits.is_empty(),
                key: all_hits.first().map(|h| hex(&h.key)),
                plaintext: all_hits.first().map(|h| escape(&h.plaintext)),
                hits: all_hits.iter().map(json_hit).collect(),
                keyspace_size: space.size(),
                key_bits: space.key_size().bits(),
                mode: mode.name(),
                range: [outcome.range.start, outcome.range.end],
                searched: outcome.searched,
                position: outcome.position,
                completed: outcome.completed,
                interrupted,
                hit_limit: outcome.hit_limit,
                backend: outcome.backend.name(),
                threads: outcome.threads,
                filter_blocks: outcome.filter_blocks.clone(),
                filter_passes: outcome.filter_passes,
                seconds: secs,
                keys_per_second: rate,
            };
            serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            for h in &all_hits {
                print_hit(&mut out, h)?;
            }
            if all_hits.is_empty() && !interrupted {
                writeln!(out, "not found: no key in the searched range matched")?;
            }
            writeln!(
                out,
                "searched {} keys in {:.3} s ({}keys/s, {}keys/s per thread); {} passed the filter",
                outcome.searched,
                secs,
                si(rate),
                si(rate / outcome.threads as f64),
                outcome.filter_passes
            )?;
        }
        out.flush()
    })();
    // Saved after the result is printed, whether or not that worked: a
    // resume file that cannot be written costs a warning, never the key,
    // and an output that cannot be written (a full disk, a closed
    // terminal) costs the printout, never the saved key and position.
    if let Some(path) = &args.resume {
        let state = resume_state(
            args,
            &fingerprint,
            &earlier_hits,
            &outcome.hits,
            outcome.position,
            outcome.completed,
        );
        save_resume_or_warn(path, &state);
    }
    // A closed stdout (`| head`) loses the printout, not the exit status
    // the search decided (0 means a key was found).
    match printed {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r?,
    }
    if outcome.hit_limit && !interrupted {
        eprintln!(
            "hwcrypt: stopped after {} hits (--max-hits) at position {}; continue with --start {}{}, or narrow the predicates",
            outcome.hits.len(),
            outcome.position,
            outcome.position,
            if args.resume.is_some() {
                " (or the same --resume)"
            } else {
                ""
            }
        );
    }
    if interrupted {
        eprintln!(
            "hwcrypt: interrupted at position {}; continue with --start {}{}",
            outcome.position,
            outcome.position,
            if args.resume.is_some() {
                " (or the same --resume)"
            } else {
                ""
            }
        );
    }
    Ok(code)
}

/// One found key, as the text output shows it.
fn print_hit(out: &mut impl Write, h: &Hit) -> std::io::Result<()> {
    writeln!(out, "found key: {}", hex(&h.key))?;
    writeln!(out, "key index: {}", h.index)?;
    if h.plaintext_offset > 0 {
        writeln!(
            out,
            "plaintext (from byte {}; block 0 needs the IV): \"{}\"",
            h.plaintext_offset,
            escape(&h.plaintext)
        )
    } else {
        writeln!(out, "plaintext: \"{}\"", escape(&h.plaintext))
    }
}

/// Prints the keys an earlier run found (without `--all`, a rerun of a
/// search whose resume file holds its key): found, exit status 0.
fn report_earlier(args: &Args, hits: &[Hit]) -> Result<ExitCode, CliError> {
    let mut out = std::io::stdout().lock();
    let printed = (|| -> std::io::Result<()> {
        if args.json {
            let report = serde_json::json!({
                "found": true,
                "key": hits.first().map(|h| hex(&h.key)),
                "plaintext": hits.first().map(|h| escape(&h.plaintext)),
                "hits": hits.iter().map(json_hit).collect::<Vec<_>>(),
                "from_resume_file": true,
            });
            serde_json::to_writer_pretty(&mut out, &report).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            for h in hits {
                print_hit(&mut out, h)?;
            }
            writeln!(
                out,
                "(found by an earlier run: the --resume file; not searched again)"
            )?;
        }
        out.flush()
    })();
    match printed {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        r => r?,
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod si_tests {
    use super::si;

    #[test]
    fn rates_keep_their_digits() {
        assert_eq!(si(0.0), "0 ");
        assert_eq!(si(0.25), "0.25 ");
        assert_eq!(si(3.456), "3.46 ");
        assert_eq!(si(42.4), "42 ");
        assert_eq!(si(1234.0), "1.2 k");
        assert_eq!(si(2.5e6), "2.5 M");
        assert_eq!(si(3.0e9), "3.00 G");
    }
}
