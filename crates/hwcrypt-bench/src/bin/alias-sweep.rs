//! 4 KiB aliasing probe (issue 17, item 3): does it matter where the data
//! sits relative to the key?
//!
//! `alias-sweep MODE BITS BACKEND SIZE [ROUNDS] [MILLIS]` times one
//! SIZE-byte message per call at 64 data offsets, 64 bytes apart, covering
//! a whole 4 KiB page, once with the `Aes`/`AesGcm` value in a local
//! (the caller's stack) and once boxed (the heap). Whatever address the
//! key's schedule has, one of the 64 offsets puts the data at the same
//! place modulo 4 KiB, where a store to the data and a later load of a
//! round key look alike to the CPU's memory disambiguation (the slowdown
//! that cost up to ~30% at 256-512 B while schedules lived on the stack).
//! Offsets are visited round-robin, ROUNDS times, MILLIS per visit; each
//! offset keeps its best rate, so noise from a shared machine drops out.
//! Prints, per placement, the median over offsets, the slowest offset and
//! its ratio to the median (and, with `ALIAS_SWEEP_ALL` set, every
//! offset's rate; with `ALIAS_SWEEP_ADDR` set, the page offsets of the
//! local key value and of a stack local, to match a slow offset to them).
//! MODE: one of `hwcrypt_bench::AES_MODES`, `gcm-seal` (AAD 13) or
//! `chacha-seal` (ChaCha20-Poly1305, AAD 13, BITS 256: its state lives on
//! the heap either way, so the sweep shows where the data meets the
//! kernel's own stack).

use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::aes::Aes;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use hwcrypt::gcm::AesGcm;
use hwcrypt_bench::aes_message;
use std::hint::black_box;
use std::time::{Duration, Instant};

const PAGE: usize = 4096;
const STEP: usize = 64;

enum Key {
    Aes(Aes),
    Gcm(AesGcm),
    ChaCha(ChaCha20Poly1305),
}

fn message(mode: &str, key: &Key, buf: &mut [u8]) {
    match key {
        Key::Aes(aes) => {
            aes_message(mode, aes, buf);
        }
        Key::Gcm(gcm) => {
            let tag = gcm
                .seal_in_place_detached(&[7; 12], &[1; 13], buf)
                .expect("valid lengths");
            black_box(tag);
        }
        Key::ChaCha(c) => {
            let tag = c
                .seal_in_place_detached(&[7; 12], &[1; 13], buf)
                .expect("valid lengths");
            black_box(tag);
        }
    }
}

/// Best GB/s per offset.
fn sweep(mode: &str, key: &Key, size: usize, rounds: usize, window: Duration) -> Vec<f64> {
    let mut page = vec![0u8; 2 * PAGE + size + STEP];
    let base = page.as_ptr().align_offset(PAGE);
    let offsets = PAGE / STEP;
    let mut best = vec![0f64; offsets];
    for _ in 0..rounds {
        for (i, slot) in best.iter_mut().enumerate() {
            let at = base + i * STEP;
            let buf = &mut page[at..at + size];
            message(mode, key, buf);
            let (start, mut bytes) = (Instant::now(), 0u64);
            while start.elapsed() < window {
                for _ in 0..32 {
                    message(mode, black_box(key), black_box(&mut *buf));
                }
                bytes += 32 * size as u64;
            }
            let rate = bytes as f64 / start.elapsed().as_secs_f64() / 1e9;
            *slot = slot.max(rate);
        }
    }
    best
}

fn report(placement: &str, best: &[f64]) {
    if std::env::var_os("ALIAS_SWEEP_ALL").is_some() {
        let line: Vec<String> = best.iter().map(|r| format!("{r:.1}")).collect();
        println!("  {placement} per offset: {}", line.join(" "));
    }
    let mut sorted = best.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let (worst_at, worst) = best
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, &r)| (i * STEP, r))
        .unwrap_or((0, 0.0));
    println!(
        "  key on the {placement}: median {median:.3} GB/s over {} offsets; slowest {worst:.3} at +{worst_at} B ({:.3}x the median); fastest {:.3}",
        best.len(),
        worst / median,
        sorted[sorted.len() - 1]
    );
}

fn make(mode: &str, key: &[u8], backend: Backend) -> Key {
    if mode == "gcm-seal" {
        Key::Gcm(AesGcm::with_backend(key, backend).expect("backend runs here"))
    } else if mode == "chacha-seal" {
        Key::ChaCha(ChaCha20Poly1305::with_backend(key, backend).expect("backend runs here"))
    } else {
        Key::Aes(Aes::with_backend(key, backend).expect("backend runs here"))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: alias-sweep MODE BITS BACKEND SIZE [ROUNDS] [MILLIS]");
        std::process::exit(2);
    }
    let mode = args[0].as_str();
    let bits: usize = args[1].parse().expect("BITS");
    let backend: Backend = args[2].parse().expect("BACKEND");
    let size: usize = args[3].parse().expect("SIZE");
    let rounds: usize = args.get(4).map_or(5, |s| s.parse().expect("ROUNDS"));
    let window = Duration::from_millis(args.get(5).map_or(4, |s| s.parse().expect("MILLIS")));
    if mode != "gcm-seal" && mode != "chacha-seal" && !hwcrypt_bench::AES_MODES.contains(&mode) {
        eprintln!("unknown mode {mode}");
        std::process::exit(2);
    }
    let key: Vec<u8> = (0..bits / 8).map(|i| i as u8).collect();
    let family = if mode == "chacha-seal" {
        "chacha20-poly1305"
    } else {
        "aes"
    };
    println!("{family}-{bits} {mode} {backend} {size} B:");
    let local = make(mode, &key, backend);
    if std::env::var_os("ALIAS_SWEEP_ADDR").is_some() {
        let probe = 0u8;
        println!(
            "  key value at {:#x} (page offset {}), a stack local at page offset {}",
            &local as *const Key as usize,
            &local as *const Key as usize % PAGE,
            black_box(&probe) as *const u8 as usize % PAGE
        );
    }
    report("stack", &sweep(mode, &local, size, rounds, window));
    let boxed = Box::new(make(mode, &key, backend));
    report("heap", &sweep(mode, &boxed, size, rounds, window));
}
