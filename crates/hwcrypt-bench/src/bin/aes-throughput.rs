//! Quick single-cell throughput probe, for interleaving with `openssl speed`
//! in one shell loop (see `compare-openssl.sh`):
//!
//! `aes-throughput MODE BITS BACKEND SIZE [REPS] [MILLIS]` prints the median
//! GB/s (1e9 B/s) over REPS timed runs of MILLIS each, processing whole
//! messages of SIZE bytes with a fresh IV per message and the key expanded
//! once. MODE: one of `hwcrypt_bench::AES_MODES`;
//! `key-setup` times `Aes::with_backend` and the drop of the key (ns per key;
//! SIZE ignored); `rekey` times `Aes::rekey`, the in-place re-expansion of
//! both schedules (the key expansion alone, without moving or wiping a key).
//! With `HWCRYPT_PROBE_BYTES=N` a message mode runs a fixed amount of work
//! once instead (for `perf stat`; see `hwcrypt_bench::probe_gbps`).

use hwcrypt::Backend;
use hwcrypt::aes::Aes;
use hwcrypt_bench::{aes_message, probe_gbps};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: aes-throughput MODE BITS BACKEND SIZE [REPS] [MILLIS]");
        std::process::exit(2);
    }
    let (mode, bits, size) = (
        &args[0],
        args[1].parse::<usize>().unwrap(),
        args[3].parse::<usize>().unwrap(),
    );
    let backend: Backend = args[2].parse().unwrap();
    let reps: usize = args.get(4).map_or(7, |s| s.parse().unwrap());
    let window = Duration::from_millis(args.get(5).map_or(300, |s| s.parse().unwrap()));
    let key: Vec<u8> = (0..bits / 8).map(|i| i as u8).collect();
    if mode == "key-setup" || mode == "rekey" {
        let mut aes = Aes::with_backend(&key, backend).unwrap();
        let mut samples = Vec::new();
        for _ in 0..reps {
            let (start, mut n) = (Instant::now(), 0u64);
            while start.elapsed() < window {
                for _ in 0..1000 {
                    if mode == "rekey" {
                        aes.rekey(black_box(&key)).unwrap();
                        black_box(&aes);
                    } else {
                        black_box(Aes::with_backend(black_box(&key), backend).unwrap());
                    }
                }
                n += 1000;
            }
            samples.push(start.elapsed().as_nanos() as f64 / n as f64);
        }
        let (med, lo, hi) = median(samples);
        println!("aes-{bits} {mode} {backend}: {med:.1} ns/key (min {lo:.1}, max {hi:.1})");
        return;
    }
    // On the heap, as OpenSSL's EVP context is (see xts-throughput): on the
    // stack the round keys can alias the buffer mod 4 KiB and their loads
    // wait on the previous call's stores (AES-128-ECB at 256 B on
    // vaes-avx512: 13.1 GB/s on the stack, 19.0 on the heap).
    let aes = Box::new(Aes::with_backend(&key, backend).unwrap());
    let mut buf = vec![0u8; size];
    if !aes_message(mode, &aes, &mut buf) {
        eprintln!("unknown mode {mode}");
        std::process::exit(2);
    }
    let (med, lo, hi) = probe_gbps(reps, window, 64 * size as u64, || {
        for _ in 0..64 {
            aes_message(mode, black_box(&aes), black_box(&mut buf));
        }
    });
    println!("aes-{bits}-{mode} {backend} {size} B: {med:.3} GB/s (min {lo:.3}, max {hi:.3})");
}
