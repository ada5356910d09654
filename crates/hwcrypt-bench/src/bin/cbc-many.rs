//! Multi-buffer CBC encryption probe: `cbc-many BITS BACKEND STREAMS SIZE
//! [KEYS] [REPS] [MILLIS]` prints the median GB/s of `Cbc::encrypt_many`
//! over STREAMS streams of SIZE bytes each (KEYS: `distinct`, one key per
//! stream, the default; or `shared`, one key for all), and in the same run
//! ECB encryption of SIZE-byte messages and one CBC stream at a time on the
//! same backend, with the ratios to ECB.

use hwcrypt::Backend;
use hwcrypt::aes::Aes;
use hwcrypt::modes::{Cbc, Ecb};
use hwcrypt_bench::probe_gbps;
use std::hint::black_box;
use std::time::Duration;

/// Median GB/s of `f`, which processes `bytes` per call.
fn rate(reps: usize, window: Duration, bytes: usize, mut f: impl FnMut()) -> f64 {
    probe_gbps(reps, window, bytes as u64, &mut f).0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: cbc-many BITS BACKEND STREAMS SIZE [distinct|shared] [REPS] [MILLIS]");
        std::process::exit(2);
    }
    let bits: usize = args[0].parse().unwrap();
    let backend: Backend = args[1].parse().unwrap();
    let streams: usize = args[2].parse().unwrap();
    let size: usize = args[3].parse().unwrap();
    let shared = args.get(4).is_some_and(|k| k == "shared");
    let reps: usize = args.get(5).map_or(7, |s| s.parse().unwrap());
    let window = Duration::from_millis(args.get(6).map_or(300, |s| s.parse().unwrap()));
    let keys: Vec<Aes> = (0..if shared { 1 } else { streams })
        .map(|i| {
            let key: Vec<u8> = (0..bits / 8).map(|j| (i * 31 + j) as u8).collect();
            Aes::with_backend(&key, backend).unwrap()
        })
        .collect();
    let mut ciphers: Vec<Cbc<&Aes>> = (0..streams)
        .map(|i| Cbc::new(&keys[i % keys.len()], &[i as u8; 16]).unwrap())
        .collect();
    // CBC_MANY_GAP=N: the streams sit in one allocation, N bytes apart
    // (their offsets modulo 4 KiB differ by N), instead of one allocation each.
    let gap: Option<usize> = std::env::var("CBC_MANY_GAP")
        .ok()
        .map(|g| g.parse().unwrap());
    let mut arena = vec![0u8; gap.map_or(0, |g| streams * (size + g))];
    let mut bufs = vec![vec![0u8; size]; streams];
    let many = rate(reps, window, streams * size, || match gap {
        Some(g) => Cbc::encrypt_many(
            black_box(&mut ciphers)
                .iter_mut()
                .zip(arena.chunks_exact_mut(size + g).map(|b| &mut b[..size])),
        )
        .unwrap(),
        None => Cbc::encrypt_many(
            black_box(&mut ciphers)
                .iter_mut()
                .zip(bufs.iter_mut().map(|b| &mut b[..])),
        )
        .unwrap(),
    });
    let ecb = rate(reps, window, streams * size, || {
        for (i, b) in bufs.iter_mut().enumerate() {
            Ecb::new(black_box(&keys[i % keys.len()]))
                .encrypt(b)
                .unwrap();
        }
    });
    let serial = rate(reps, window, streams * size, || {
        for (c, b) in black_box(&mut ciphers).iter_mut().zip(&mut bufs) {
            c.encrypt(b).unwrap();
        }
    });
    let keys = if shared { "shared key" } else { "own keys" };
    println!(
        "aes-{bits}-cbc {backend} {streams} streams x {size} B ({keys}): encrypt_many {many:.2} GB/s, \
         ecb {ecb:.2} ({:.2}x), serial cbc {serial:.2} ({:.2}x)",
        many / ecb,
        serial / ecb
    );
}
