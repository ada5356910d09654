//! Single-cell AES-GCM throughput probe, for interleaving with
//! `openssl speed -elapsed -evp aes-256-gcm`:
//!
//! `gcm-throughput BITS BACKEND SIZE [REPS] [MILLIS] [seal|open]` prints the
//! median GB/s (1e9 B/s) over REPS timed runs of MILLIS each, sealing (or
//! opening) whole messages of SIZE bytes in place with a 12-byte nonce and
//! `GCM_AAD` bytes of associated data (default none), the key made once; the nonce changes per message. A run during
//! which the thread was preempted (on-CPU time under 90% of wall time, from
//! `/proc/thread-self/schedstat`) is timed by its on-CPU time instead, as
//! the in-crate AES measurements do: the machine is a shared VM. `open` includes
//! copying the ciphertext into the buffer before each call.

use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::gcm::AesGcm;
use hwcrypt_bench::probe_gbps;
use std::hint::black_box;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: gcm-throughput BITS BACKEND SIZE [REPS] [MILLIS] [seal|open]");
        std::process::exit(2);
    }
    let bits: usize = args[0].parse().unwrap();
    let backend: Backend = args[1].parse().unwrap();
    let size: usize = args[2].parse().unwrap();
    let reps: usize = args.get(3).map_or(5, |s| s.parse().unwrap());
    let window = Duration::from_millis(args.get(4).map_or(200, |s| s.parse().unwrap()));
    let open = args.get(5).is_some_and(|s| s == "open");
    // Associated data per message: `GCM_AAD` bytes (default none).
    let aad = vec![0x41u8; std::env::var("GCM_AAD").map_or(0, |s| s.parse().unwrap())];
    let key: Vec<u8> = (0..bits / 8).map(|i| i as u8).collect();
    let gcm = AesGcm::with_backend(&key, backend).unwrap();
    let mut buf = vec![0u8; size];
    let mut nonce = [0u8; 12];
    let tag = gcm.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
    let sealed = buf.clone();
    let mut counter = 0u64;
    let (med, lo, hi) = probe_gbps(reps, window, 64 * size as u64, || {
        for _ in 0..64 {
            if open {
                // A valid message each time: the ciphertext is copied in
                // first (a failed open would time the wipe instead).
                buf.copy_from_slice(&sealed);
                gcm.open_in_place_detached(&nonce, &aad, black_box(&mut buf), &tag)
                    .unwrap();
            } else {
                counter += 1;
                nonce[4..].copy_from_slice(&counter.to_be_bytes());
                black_box(
                    gcm.seal_in_place_detached(&nonce, &aad, black_box(&mut buf))
                        .unwrap(),
                );
            }
        }
    });
    let op = if open { "open" } else { "seal" };
    println!("aes-{bits}-gcm {op} {backend} {size} B: {med:.3} GB/s (min {lo:.3}, max {hi:.3})");
}
