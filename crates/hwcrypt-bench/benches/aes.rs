//! Criterion benchmarks: every AES mode x key size x runnable backend x
//! message size, plus key setup. Opt-in: `cargo bench -p hwcrypt-bench`.
//!
//! Filter with criterion's regex, e.g.
//! `cargo bench -p hwcrypt-bench -- 'aes-128-ctr/vaes-avx2/16384'`.
//! Throughput is reported in decimal GB/s (1e9 bytes/s), as `openssl speed` does.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hwcrypt::aes::Aes;
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, cpu};
use hwcrypt_bench::{AES_MODES, aes_message};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 4] = [16, 256, 1024, 16384];
const KEY_BITS: [usize; 2] = [128, 256];

fn backends() -> Vec<Backend> {
    let features = cpu::features().expect("valid HWCRYPT_CPU");
    for b in Backend::ALL {
        if let Err(e) = registry::check_with(Algorithm::Aes, b, features) {
            eprintln!("skipped backend {b}: {e}");
        }
    }
    registry::runnable(Algorithm::Aes, features)
}

fn key(bits: usize) -> Vec<u8> {
    (0..bits / 8).map(|i| i as u8 * 7 + 1).collect()
}

fn modes(c: &mut Criterion) {
    let backends = backends();
    for mode in AES_MODES {
        for bits in KEY_BITS {
            let mut group = c.benchmark_group(format!("aes-{bits}-{mode}"));
            for &backend in &backends {
                let aes = Aes::with_backend(&key(bits), backend).unwrap();
                for size in SIZES {
                    let mut buf = vec![0u8; size];
                    group.throughput(Throughput::BytesDecimal(size as u64));
                    group.bench_function(BenchmarkId::new(backend.name(), size), |b| {
                        b.iter(|| aes_message(mode, black_box(&aes), black_box(&mut buf)))
                    });
                }
            }
            group.finish();
        }
    }
}

fn key_setup(c: &mut Criterion) {
    let backends = backends();
    for bits in [128, 192, 256] {
        let mut group = c.benchmark_group(format!("aes-{bits}-key-setup"));
        let key = key(bits);
        for &backend in &backends {
            // A new key, then its drop (which wipes it).
            group.bench_function(format!("new+drop/{backend}"), |b| {
                b.iter(|| Aes::with_backend(black_box(&key), backend).unwrap())
            });
            // The expansion alone: both schedules rebuilt in place.
            let mut aes = Aes::with_backend(&key, backend).unwrap();
            group.bench_function(format!("rekey/{backend}"), |b| {
                b.iter(|| aes.rekey(black_box(&key)).unwrap())
            });
        }
        group.finish();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = modes, key_setup
}
criterion_main!(benches);
