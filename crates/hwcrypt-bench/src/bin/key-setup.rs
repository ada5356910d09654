//! Key-setup probe (issue 17, item 1): `key-setup KIND BACKEND [MILLIS]
//! [ROUNDS]` makes and drops keys of KIND (`aes-128`, `aes-256`,
//! `aes-128-gcm`, `aes-256-gcm`, `aes-128-xts`, `aes-256-xts`,
//! `chacha20-poly1305`; `aes-128-gcm+1350`, `aes-256-gcm+1350`: a key and
//! one 1350-byte message sealed with it, the connection shape of `hwcrypt
//! speed`; `aes-128-gcm-stream+1350`, `aes-256-gcm-stream+1350`: the same
//! through `AesGcmStream` with 13 bytes of AAD, as a TLS record through the
//! OpenSSL provider) on BACKEND in a loop, MILLIS per round, and prints
//! the best and median ns per key over ROUNDS: a steady loop to run under
//! `perf record` and to compare layouts of the key objects.
//!
//! Each call's key differs from the last: one byte of it is raised before
//! the call, or with `KEY_RING=1` the keys are 16 made up front and taken in
//! turn, as `hwcrypt speed` does (no byte store for the key's first load to
//! wait on: docs/performance.md, key setup, 2026-11-28).

use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::aes::Aes;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::modes::Xts;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Makes (and drops) one key from the bytes.
type MakeKey = dyn Fn(&[u8]) -> hwcrypt::Result<()>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: key-setup KIND BACKEND [MILLIS] [ROUNDS]");
        std::process::exit(2);
    }
    let kind = args[0].as_str();
    let backend: Backend = args[1].parse().unwrap_or_else(|e| {
        eprintln!("key-setup: {e}");
        std::process::exit(2);
    });
    let millis: u64 = args.get(2).map_or(300, |s| s.parse().expect("MILLIS"));
    let rounds: usize = args.get(3).map_or(7, |s| s.parse().expect("ROUNDS"));
    let mut key: [u8; 64] = core::array::from_fn(|i| (i * 7 + 1) as u8);
    let one: Box<MakeKey> = match kind {
        "aes-128" | "aes-192" | "aes-256" => Box::new(move |k: &[u8]| {
            black_box(Aes::with_backend(k, backend)?);
            Ok(())
        }),
        "aes-128-gcm" | "aes-256-gcm" => Box::new(move |k: &[u8]| {
            black_box(AesGcm::with_backend(k, backend)?);
            Ok(())
        }),
        "aes-128-gcm+1350" | "aes-256-gcm+1350" => {
            let buf = std::cell::RefCell::new(vec![0x42u8; 1350]);
            Box::new(move |k: &[u8]| {
                let gcm = AesGcm::with_backend(k, backend)?;
                let mut buf = buf.borrow_mut();
                black_box(gcm.seal_in_place_detached(&[1; 12], &[], &mut buf)?);
                Ok(())
            })
        }
        "aes-128-gcm-stream+1350" | "aes-256-gcm-stream+1350" => {
            let buf = std::cell::RefCell::new(vec![0x42u8; 1350]);
            Box::new(move |k: &[u8]| {
                let mut s = AesGcmStream::new(AesGcm::with_backend(k, backend)?);
                let mut buf = buf.borrow_mut();
                s.start(&[1; 12])?;
                s.aad(&[7; 13])?;
                s.encrypt(&mut buf)?;
                black_box(s.finish()?);
                Ok(())
            })
        }
        "aes-128-xts" | "aes-256-xts" => Box::new(move |k: &[u8]| {
            black_box(Xts::with_backend(k, backend)?);
            Ok(())
        }),
        "chacha20-poly1305" => Box::new(move |k: &[u8]| {
            black_box(ChaCha20Poly1305::with_backend(k, backend)?);
            Ok(())
        }),
        other => {
            eprintln!("key-setup: unknown kind {other}");
            std::process::exit(2);
        }
    };
    let len = match kind {
        "aes-128" | "aes-128-gcm" | "aes-128-gcm+1350" | "aes-128-gcm-stream+1350" => 16,
        "aes-192" => 24,
        "aes-128-xts" => 32,
        "aes-256-xts" => 64,
        _ => 32,
    };
    if let Err(e) = one(&key[..len]) {
        eprintln!("key-setup: {kind} on {backend}: {e}");
        std::process::exit(1);
    }
    // KEY_RING=1: cycle through 16 keys made up front (as `hwcrypt speed`
    // does) instead of raising one byte of a single key before each call.
    let ring = std::env::var_os("KEY_RING").map(|_| hwcrypt_bench::speed::measure::key_ring());
    let window = Duration::from_millis(millis);
    let mut per_key = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let (start, mut n) = (Instant::now(), 0u64);
        while start.elapsed() < window {
            for i in 0..256 {
                if let Some(ring) = &ring {
                    one(black_box(&ring[i % ring.len()][..len])).expect("checked above");
                } else {
                    key[i % 8] = key[i % 8].wrapping_add(1);
                    one(black_box(&key[..len])).expect("checked above");
                }
            }
            n += 256;
        }
        per_key.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    per_key.sort_by(f64::total_cmp);
    println!(
        "{kind} {backend}: best {:.1} ns, median {:.1} ns per key (new + drop), {rounds} rounds of {millis} ms",
        per_key[0],
        per_key[rounds / 2]
    );
}
