//! AES-XTS throughput probe, for interleaving with `openssl speed` (see
//! `compare-openssl-xts.sh`):
//!
//! `xts-throughput BITS BACKEND SIZE SHAPE [REPS] [MILLIS]` prints the median
//! GB/s (1e9 B/s, wall clock) over REPS timed runs of MILLIS each. BITS is
//! 128 or 256 (the AES key size; the XTS key is twice as long). SHAPE:
//!
//! * `unit`: one `Xts::encrypt` call per SIZE-byte data unit, same tweak
//!   each time (what `openssl speed -evp aes-*-xts -bytes SIZE` does);
//! * `unit-dec`: the same with `Xts::decrypt`;
//! * `bulk`: `Xts::encrypt_units` over 64 KiB of consecutive SIZE-byte units
//!   per call (sector numbers, tweak encryption batched); `XTS_BULK_BYTES`
//!   sets another buffer size (rounded down to whole units, at least one).
//!
//! A run during which the thread was preempted (on-CPU time under 90% of
//! wall time, from `/proc/thread-self/schedstat`) is timed by its on-CPU
//! time instead, as `gcm-throughput` does: the machine is a shared VM.

use hwcrypt::Backend;
use hwcrypt::modes::Xts;
use hwcrypt_bench::probe_gbps;
use std::hint::black_box;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: xts-throughput BITS BACKEND SIZE unit|unit-dec|bulk [REPS] [MILLIS]");
        std::process::exit(2);
    }
    let bits: usize = args[0].parse().expect("BITS");
    let backend: Backend = args[1].parse().expect("BACKEND");
    let size: usize = args[2].parse().expect("SIZE");
    let shape = args[3].as_str();
    let reps: usize = args.get(4).map_or(7, |s| s.parse().expect("REPS"));
    let window = Duration::from_millis(args.get(5).map_or(300, |s| s.parse().expect("MILLIS")));
    let key: Vec<u8> = (0..bits / 4).map(|i| i as u8).collect();
    // On the heap, as OpenSSL's EVP context is: on the stack the round keys
    // sit at a random offset (mod 4 KiB) from the heap buffer, and in the
    // runs where they alias the buffer's addresses mod 4 KiB, each call's
    // key loads wait on the previous call's stores (AES-128-XTS vaes-avx512
    // at 512 B came out at ~11 or ~16.5 GB/s from one process to the next).
    let xts = Box::new(Xts::with_backend(&key, backend).expect("key"));
    let tweak = [0x5a; 16];
    let bulk_bytes: usize = std::env::var("XTS_BULK_BYTES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(65536);
    let len = if shape == "bulk" {
        (bulk_bytes / size).max(1) * size
    } else {
        size
    };
    let mut buf = vec![0u8; len];
    let (med, lo, hi) = probe_gbps(reps, window, 64 * len as u64, || {
        for _ in 0..64 {
            let b = black_box(&mut buf[..]);
            match shape {
                "unit" => xts.encrypt(&tweak, b),
                "unit-dec" => xts.decrypt(&tweak, b),
                "bulk" => xts.encrypt_units(size, 7, b),
                _ => {
                    eprintln!("unknown shape {shape}");
                    std::process::exit(2);
                }
            }
            .expect("valid sizes");
        }
    });
    println!("aes-{bits}-xts {shape} {backend} {size} B: {med:.3} GB/s (min {lo:.3}, max {hi:.3})");
}
