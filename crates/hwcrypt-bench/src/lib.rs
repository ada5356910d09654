//! Shared pieces of hwcrypt's opt-in benchmarks (criterion benches in
//! `benches/`, the `aes-throughput` probe in `src/bin/`), and [`speed`], the
//! measurement harness behind `hwcrypt speed`; [`cpu_header`], the CPU block
//! that heads `hwcrypt cpu` and `hwcrypt speed`.

pub mod cpu_header;
pub mod speed;

use hwcrypt::aes::Aes;
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};
use std::time::{Duration, Instant};

/// The AES modes the benchmarks know, by the names they print.
pub const AES_MODES: [&str; 9] = [
    "ecb-enc",
    "ecb-dec",
    "cbc-enc",
    "cbc-dec",
    "ctr",
    "cfb128-enc",
    "cfb128-dec",
    "cfb8-enc",
    "ofb",
];

/// Processes one whole message in place with `mode`, as a protocol would: a
/// fresh mode object (and IV) per message, the key expanded beforehand.
/// Returns `false` for an unknown mode name.
pub fn aes_message(mode: &str, aes: &Aes, buf: &mut [u8]) -> bool {
    let iv = [0x5a; 16];
    // Lengths are multiples of 16 in every caller; a failure is a bug.
    let whole = "benchmark sizes are whole blocks";
    match mode {
        "ecb-enc" => Ecb::new(aes).encrypt(buf).expect(whole),
        "ecb-dec" => Ecb::new(aes).decrypt(buf).expect(whole),
        "cbc-enc" => Cbc::new(aes, &iv)
            .and_then(|mut c| c.encrypt(buf))
            .expect(whole),
        "cbc-dec" => Cbc::new(aes, &iv)
            .and_then(|mut c| c.decrypt(buf))
            .expect(whole),
        "ctr" => Ctr::new(aes, &iv)
            .and_then(|mut c| c.apply_keystream(buf))
            .expect("16-byte IV, 128-bit counter"),
        "cfb128-enc" => Cfb128::new(aes, &iv).expect("16-byte IV").encrypt(buf),
        "cfb128-dec" => Cfb128::new(aes, &iv).expect("16-byte IV").decrypt(buf),
        "cfb8-enc" => Cfb8::new(aes, &iv).expect("16-byte IV").encrypt(buf),
        "ofb" => Ofb::new(aes, &iv).expect("16-byte IV").apply_keystream(buf),
        _ => return false,
    }
    true
}

/// This thread's on-CPU time in seconds (Linux `schedstat`), if known.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
}

/// The timing loop of the single-cell probes in `src/bin/`: `reps` runs of
/// `window` each, calling `batch` (which processes `batch_bytes` bytes)
/// until the window is over. Returns (median, min, max) GB/s (1e9 B/s). A
/// run during which the thread was preempted (on-CPU time under 90% of wall
/// time) is timed by its on-CPU time instead: the machine is a shared VM.
///
/// With `HWCRYPT_PROBE_BYTES=N` in the environment it instead runs batches
/// until at least N bytes were processed, once, and prints the byte count to
/// stderr: a fixed amount of work for `perf stat` (instructions and cycles
/// per byte, which the noise of a shared machine does not move).
pub fn probe_gbps(
    reps: usize,
    window: Duration,
    batch_bytes: u64,
    mut batch: impl FnMut(),
) -> (f64, f64, f64) {
    if let Some(total) = std::env::var("HWCRYPT_PROBE_BYTES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let (start, mut bytes) = (Instant::now(), 0u64);
        while bytes < total {
            batch();
            bytes += batch_bytes;
        }
        let gbps = bytes as f64 / start.elapsed().as_secs_f64() / 1e9;
        eprintln!("bytes processed: {bytes}");
        return (gbps, gbps, gbps);
    }
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let (cpu0, start, mut bytes) = (cpu_seconds(), Instant::now(), 0u64);
        while start.elapsed() < window {
            batch();
            bytes += batch_bytes;
        }
        let wall = start.elapsed().as_secs_f64();
        let secs = match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) if b - a < 0.9 * wall => b - a,
            _ => wall,
        };
        samples.push(bytes as f64 / secs / 1e9);
    }
    samples.sort_by(f64::total_cmp);
    (
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1],
    )
}
