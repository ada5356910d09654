//! Criterion benchmarks for the AEADs: ChaCha20-Poly1305 and AES-128/256-GCM
//! seal (in place, detached tag, fresh nonce per message) at 16, 256, 1024 and
//! 16384 bytes on every backend this CPU can run, and `ring`'s implementation
//! of the same algorithm in the same run for comparison. Opt-in: `cargo bench -p hwcrypt-bench --bench aead`.
//! Throughput is in decimal GB/s, as `openssl speed` reports it.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use hwcrypt::gcm::AesGcm;
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, cpu};
use ring::aead::{
    AES_128_GCM, AES_256_GCM, Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey,
};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 4] = [16, 256, 1024, 16384];

fn backends_of(algorithm: Algorithm) -> Vec<Backend> {
    let features = cpu::features().expect("valid HWCRYPT_CPU");
    for b in Backend::ALL {
        if let Err(e) = registry::check_with(algorithm, b, features) {
            eprintln!("skipped backend {b} for {algorithm}: {e}");
        }
    }
    registry::runnable(algorithm, features)
}

fn backends() -> Vec<Backend> {
    backends_of(Algorithm::ChaCha20Poly1305)
}

fn nonce(i: u64) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&i.to_le_bytes());
    n
}

fn seal(c: &mut Criterion) {
    let key = [0x42u8; 32];
    let aad = [0u8; 0];
    let mut group = c.benchmark_group("chacha20-poly1305-seal");
    for size in SIZES {
        group.throughput(Throughput::BytesDecimal(size as u64));
        let mut buf = vec![0u8; size];
        for backend in backends() {
            let k = ChaCha20Poly1305::with_backend(&key, backend).unwrap();
            let mut i = 0u64;
            group.bench_function(BenchmarkId::new(backend.name(), size), |b| {
                b.iter(|| {
                    i += 1;
                    k.seal_in_place_detached(&nonce(i), &aad, black_box(&mut buf))
                        .unwrap()
                })
            });
        }
        let k = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &key).unwrap());
        let mut i = 0u64;
        group.bench_function(BenchmarkId::new("ring", size), |b| {
            b.iter(|| {
                i += 1;
                k.seal_in_place_separate_tag(
                    Nonce::assume_unique_for_key(nonce(i)),
                    Aad::from(&aad),
                    black_box(&mut buf[..]),
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

fn gcm_seal(c: &mut Criterion) {
    let aad = [0u8; 0];
    for (bits, ring_alg) in [(128, &AES_128_GCM), (256, &AES_256_GCM)] {
        let key = vec![0x42u8; bits / 8];
        let mut group = c.benchmark_group(format!("aes-{bits}-gcm-seal"));
        for size in SIZES {
            group.throughput(Throughput::BytesDecimal(size as u64));
            let mut buf = vec![0u8; size];
            for backend in backends_of(Algorithm::AesGcm) {
                let k = AesGcm::with_backend(&key, backend).unwrap();
                let mut i = 0u64;
                group.bench_function(BenchmarkId::new(backend.name(), size), |b| {
                    b.iter(|| {
                        i += 1;
                        k.seal_in_place_detached(&nonce(i), &aad, black_box(&mut buf))
                            .unwrap()
                    })
                });
            }
            let k = LessSafeKey::new(UnboundKey::new(ring_alg, &key).unwrap());
            let mut i = 0u64;
            group.bench_function(BenchmarkId::new("ring", size), |b| {
                b.iter(|| {
                    i += 1;
                    k.seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce(i)),
                        Aad::from(&aad),
                        black_box(&mut buf[..]),
                    )
                    .unwrap()
                })
            });
        }
        group.finish();
    }
}

/// The parts alone, to see where the time goes: raw ChaCha20 per backend
/// and the (portable, backend-independent) one-shot Poly1305.
fn parts(c: &mut Criterion) {
    let key = [0x42u8; 32];
    let mut group = c.benchmark_group("chacha20-parts");
    for size in [256, 16384] {
        group.throughput(Throughput::BytesDecimal(size as u64));
        let mut buf = vec![0u8; size];
        for backend in backends() {
            group.bench_function(BenchmarkId::new(format!("chacha20/{backend}"), size), |b| {
                b.iter(|| {
                    hwcrypt::chacha20poly1305::chacha20_xor(
                        backend,
                        &key,
                        &[0; 12],
                        1,
                        black_box(&mut buf),
                    )
                    .unwrap()
                })
            });
        }
        group.bench_function(BenchmarkId::new("poly1305", size), |b| {
            b.iter(|| hwcrypt::chacha20poly1305::poly1305(&key, black_box(&buf)).unwrap())
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    targets = seal, gcm_seal, parts
}
criterion_main!(benches);
