//! Unit tests of the batched kernels: schedules against a textbook
//! single-key expansion, filters against the soft backend.

use super::kernel::KeyBatch;
use super::predicate::{BlockCheck, Plan};
use super::*;
use crate::aes::{Block, KeySize};

fn xtime(x: u8) -> u8 {
    (x << 1) ^ if x & 0x80 != 0 { 0x1b } else { 0 }
}

fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = xtime(a);
        b >>= 1;
    }
    p
}

fn sbox(x: u8) -> u8 {
    // Multiplicative inverse (x^254), then the affine map.
    let mut inv = 1u8;
    for _ in 0..254 {
        inv = gmul(inv, x);
    }
    if x == 0 {
        inv = 0;
    }
    let mut s = inv;
    for i in 1..5 {
        s ^= inv.rotate_left(i);
    }
    s ^ 0x63
}

/// FIPS 197 key expansion and the equivalent-inverse-cipher schedule, by the book.
fn reference(key: &[u8]) -> (Vec<Block>, Vec<Block>) {
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [sbox(t[1]) ^ rcon, sbox(t[2]), sbox(t[3]), sbox(t[0])];
            rcon = xtime(rcon);
        } else if nk > 6 && i % nk == 4 {
            t = t.map(sbox);
        }
        let p = w[i - nk];
        w.push(core::array::from_fn(|j| p[j] ^ t[j]));
    }
    let enc: Vec<Block> = w
        .chunks(4)
        .map(|c| core::array::from_fn(|j| c[j / 4][j % 4]))
        .collect();
    let imc = |b: &Block| -> Block {
        let mut o = [0u8; 16];
        for c in 0..4 {
            let s = &b[4 * c..4 * c + 4];
            for r in 0..4 {
                o[4 * c + r] = gmul(s[r], 14)
                    ^ gmul(s[(r + 1) % 4], 11)
                    ^ gmul(s[(r + 2) % 4], 13)
                    ^ gmul(s[(r + 3) % 4], 9);
            }
        }
        o
    };
    let dec = (0..=rounds)
        .map(|i| {
            let k = &enc[rounds - i];
            if i == 0 || i == rounds { *k } else { imc(k) }
        })
        .collect();
    (enc, dec)
}

fn random_batch(seed: u64, len: usize) -> (KeyBatch, Vec<Vec<u8>>) {
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    let mut batch = KeyBatch::new();
    let mut keys = Vec::new();
    for i in 0..kernel::MAX_BATCH {
        let mut k = [0u8; 32];
        for b in &mut k[..len] {
            *b = next();
        }
        batch.set(i, &k);
        keys.push(k[..len].to_vec());
    }
    (batch, keys)
}

#[test]
fn reference_expansion_matches_fips197() {
    let key: Vec<u8> = (0u8..32).collect();
    let (enc, _) = reference(&key);
    // FIPS 197 A.3: last round key of 000102..1f.
    let hex: String = enc[14].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, "24fc79ccbf0979e9371ac23c6d68de36");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn batched_schedules_equal_the_single_key_one() {
    for size in KeySize::ALL {
        for seed in [1u64, 0x9e3779b97f4a7c15, 42] {
            let (batch, keys) = random_batch(seed, size.key_len());
            let mut checked = Vec::new();
            if let Some(k) = batch_aesni::Kernel::new() {
                checked.push(("aesni", k.schedules(size, &batch)));
            }
            if let Some(k) = batch_vaes_avx2::Kernel::new() {
                checked.push(("vaes-avx2", k.schedules(size, &batch)));
            }
            if let Some(k) = batch_vaes_avx512::Kernel::new() {
                checked.push(("vaes-avx512", k.schedules(size, &batch)));
            }
            for (name, got) in checked {
                assert!(!got.is_empty());
                for (i, sched) in got.iter().enumerate() {
                    assert_eq!(sched, &reference(&keys[i]), "{name} {size:?} key {i}");
                }
            }
        }
    }
}

/// Random plans: checks built so that some keys pass (the known bytes are
/// taken from one key's real block), run on every backend, compared with soft.
#[test]
fn every_backend_filters_like_soft() {
    let mut rng = 0x1234_5678_9abc_def1u64;
    let mut rnd = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let backends = runnable_backends();
    for round in 0..60 {
        let size = KeySize::ALL[round % 3];
        let len = size.key_len();
        let (mut batch, keys) = random_batch(rnd(), len);
        // Make some keys equal so several lanes pass.
        for i in (0..kernel::MAX_BATCH).step_by(5) {
            let mut k = [0u8; 32];
            k[..len].copy_from_slice(&keys[0]);
            batch.set(i, &k);
        }
        let aes = Aes::with_backend(&keys[0], Backend::Soft).unwrap();
        let nchecks = 1 + (rnd() % 3) as usize;
        let mut checks = Vec::new();
        for c in 0..nchecks {
            let forward = rnd() % 2 == 0;
            let input: Block = core::array::from_fn(|_| rnd() as u8);
            let xor: Block = core::array::from_fn(|_| rnd() as u8);
            let mut v = input;
            if forward {
                aes.encrypt_block(&mut v);
            } else {
                aes.decrypt_block(&mut v);
            }
            for (a, b) in v.iter_mut().zip(&xor) {
                *a ^= b;
            }
            let known_mask = match rnd() % 4 {
                0 => 0,
                1 => 0xffff,
                _ => rnd() as u16,
            };
            let mut known = v;
            if rnd() % 5 == 0 {
                known[3] ^= 1; // sometimes nobody passes
            }
            let text_mask = if rnd() % 3 == 0 { rnd() as u16 } else { 0 };
            checks.push(BlockCheck {
                forward,
                input,
                xor,
                known_mask,
                known,
                text_mask,
                block: c,
            });
        }
        checks.sort_by_key(|c| !c.forward);
        let plan = Plan {
            checks,
            max_bad: (rnd() % 20) as u32,
            utf8: rnd() % 2 == 0,
        };
        let mut soft = Aes::with_backend(&keys[0], Backend::Soft).unwrap();
        let mut want = 0u64;
        for base in (0..kernel::MAX_BATCH).step_by(8) {
            let mut b = KeyBatch::new();
            for i in 0..8 {
                b.set(i, &batch.key(base + i, len));
            }
            want |= soft_filter(size, &plan, &b, 8, &mut soft) << base;
        }
        for &backend in &backends {
            let k = Kernel::new(backend).unwrap();
            let n = k.batch();
            let mut got = 0u64;
            for base in (0..kernel::MAX_BATCH).step_by(n) {
                let mut b = KeyBatch::new();
                for i in 0..n {
                    b.set(i, &batch.key(base + i, len));
                }
                got |= k.filter(size, &plan, &b, &mut soft) << base;
            }
            assert_eq!(got, want, "{backend} {size:?} round {round} plan {plan:?}");
        }
    }
}

#[test]
fn non_text_classification_matches_scalar() {
    let backends = runnable_backends();
    for &backend in &backends {
        let k = Kernel::new(backend).unwrap();
        for utf8 in [false, true] {
            for first in (0..=255u8).step_by(16) {
                // A block of 16 consecutive byte values, through a check whose
                // value is the ECB decryption of its encryption.
                let block: Block = core::array::from_fn(|i| first.wrapping_add(i as u8));
                let key = [5u8; 16];
                let aes = Aes::with_backend(&key, Backend::Soft).unwrap();
                let mut c = block;
                aes.encrypt_block(&mut c);
                let expected_bad = block
                    .iter()
                    .filter(|&&b| predicate::certainly_not_text(b, utf8))
                    .count() as u32;
                for max_bad in [expected_bad.saturating_sub(1), expected_bad] {
                    let plan = Plan {
                        checks: vec![BlockCheck {
                            forward: false,
                            input: c,
                            xor: [0; 16],
                            known_mask: 0,
                            known: [0; 16],
                            text_mask: 0xffff,
                            block: 0,
                        }],
                        max_bad,
                        utf8,
                    };
                    let mut batch = KeyBatch::new();
                    let mut kk = [0u8; 32];
                    kk[..16].copy_from_slice(&key);
                    for i in 0..k.batch() {
                        batch.set(i, &kk);
                    }
                    let mut soft = Aes::with_backend(&key, Backend::Soft).unwrap();
                    let got = k.filter(KeySize::Aes128, &plan, &batch, &mut soft) & 1;
                    assert_eq!(
                        got == 1,
                        max_bad >= expected_bad,
                        "{backend} utf8={utf8} first={first:#x} max_bad={max_bad}"
                    );
                }
            }
        }
    }
}
