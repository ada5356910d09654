//! Unit tests of the AES-NI backend: the key expansion against FIPS 197,
//! every kernel against a reference built from its single-block calls, SP
//! 800-38A vectors, counter wraps, and an opt-in throughput probe. Not the
//! cross-backend suites, which live in `crates/hwcrypt/tests/`.

use super::*;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// FIPS 197 Appendix A: the last round key of each example expansion.
#[test]
fn key_expansion_matches_fips197_appendix_a() {
    let Some(k) = Key::boxed(&[
        0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f,
        0x3c,
    ]) else {
        return;
    };
    assert_eq!(
        hex(&k.encryption_round_keys()[10]),
        "d014f9a8c9ee2589e13f0cc8b6630ca6"
    );
    let k = Key::boxed(&[
        0x8e, 0x73, 0xb0, 0xf7, 0xda, 0x0e, 0x64, 0x52, 0xc8, 0x10, 0xf3, 0x2b, 0x80, 0x90, 0x79,
        0xe5, 0x62, 0xf8, 0xea, 0xd2, 0x52, 0x2c, 0x6b, 0x7b,
    ])
    .unwrap();
    assert_eq!(
        hex(&k.encryption_round_keys()[12]),
        "e98ba06f448c773c8ecc720401002202"
    );
    let k = Key::boxed(&[
        0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77,
        0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14,
        0xdf, 0xf4,
    ])
    .unwrap();
    assert_eq!(
        hex(&k.encryption_round_keys()[14]),
        "fe4890d1e6188d0b046df344706c631e"
    );
}

// --- SP 800-38A Appendix F -------------------------------------------

const SP_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
                     30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
const SP_IV: &str = "000102030405060708090a0b0c0d0e0f";
const SP_CTR: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/// (key, F.1 ECB, F.2 CBC, F.3 CFB128, F.4 OFB, F.5 CTR) ciphertexts.
const SP_VECTORS: [[&str; 6]; 2] = [
    [
        "2b7e151628aed2a6abf7158809cf4f3c",
        "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf\
         43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
        "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2\
         73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
        "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b\
         26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6",
        "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825\
         9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e",
        "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff\
         5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
    ],
    [
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
        "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870\
         b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
        "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d\
         39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
        "dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b\
         df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471",
        "dc7e84bfda79164b7ecd8486985d38604febdc6740d20b3ac88f6ad82a4fb08d\
         71ab47a086e86eedf39d1c5bba97c4080126141d67f37be8538f5a8be740e484",
        "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5\
         2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
    ],
];

/// Every kernel that takes data, as one enum so tests can loop over them.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    EcbEnc,
    EcbDec,
    CbcEnc,
    CbcDec,
    CfbEnc,
    CfbDec,
    Ofb,
    Ctr(CounterWidth),
}

const MODES: [Mode; 9] = [
    Mode::EcbEnc,
    Mode::EcbDec,
    Mode::CbcEnc,
    Mode::CbcDec,
    Mode::CfbEnc,
    Mode::CfbDec,
    Mode::Ofb,
    Mode::Ctr(CounterWidth::Full128),
    Mode::Ctr(CounterWidth::Low32),
];

/// Runs the kernel under test.
fn kernel(k: &Key, mode: Mode, state: &mut Block, io: InOut<'_>) {
    match mode {
        Mode::EcbEnc => k.ecb_encrypt(io),
        Mode::EcbDec => k.ecb_decrypt(io),
        Mode::CbcEnc => k.cbc_encrypt(state, io),
        Mode::CbcDec => k.cbc_decrypt(state, io),
        Mode::CfbEnc => k.cfb128_encrypt(state, io),
        Mode::CfbDec => k.cfb128_decrypt(state, io),
        Mode::Ofb => k.ofb(state, io),
        Mode::Ctr(width) => k.ctr(state, width, io),
    }
}

fn xor(a: &mut Block, b: &Block) {
    a.iter_mut().zip(b).for_each(|(a, b)| *a ^= b);
}

/// The reference: each mode composed by hand from the single-block
/// `encrypt1`/`decrypt1`, in place.
fn reference(k: &Key, mode: Mode, state: &mut Block, data: &mut [u8]) {
    let enc = |b: &mut Block| {
        // SAFETY: a `Key` exists only if AES-NI was detected.
        unsafe { encrypt1(k.encryption_round_keys(), b) }
    };
    let dec = |b: &mut Block| {
        // SAFETY: as above.
        unsafe { decrypt1(k.decryption_round_keys(), b) }
    };
    for chunk in data.chunks_exact_mut(16) {
        let b: &mut Block = chunk.try_into().unwrap();
        match mode {
            Mode::EcbEnc => enc(b),
            Mode::EcbDec => dec(b),
            Mode::CbcEnc => {
                xor(b, state);
                enc(b);
                *state = *b;
            }
            Mode::CbcDec => {
                let c = *b;
                dec(b);
                xor(b, state);
                *state = c;
            }
            Mode::CfbEnc => {
                enc(state);
                xor(b, state);
                *state = *b;
            }
            Mode::CfbDec => {
                let c = *b;
                enc(state);
                xor(b, state);
                *state = c;
            }
            Mode::Ofb => {
                enc(state);
                xor(b, state);
            }
            Mode::Ctr(width) => {
                let mut ks = *state;
                enc(&mut ks);
                xor(b, &ks);
                width.add(state, 1);
            }
        }
    }
}

fn block(text: &str) -> Block {
    hex::decode(text).unwrap().try_into().unwrap()
}

#[test]
fn sp800_38a_appendix_f() {
    if Key::boxed(&[0; 16]).is_none() {
        eprintln!("skipped: AES-NI/SSSE3 not detected");
        return;
    }
    let pt = hex::decode(SP_PT).unwrap();
    for [key, ecb, cbc, cfb, ofb, ctr] in SP_VECTORS {
        let k = Key::boxed(&hex::decode(key).unwrap()).unwrap();
        let bits = key.len() * 4;
        let cases = [
            (Mode::EcbEnc, Mode::EcbDec, SP_IV, ecb, "F.1 ECB"),
            (Mode::CbcEnc, Mode::CbcDec, SP_IV, cbc, "F.2 CBC"),
            (Mode::CfbEnc, Mode::CfbDec, SP_IV, cfb, "F.3 CFB128"),
            (Mode::Ofb, Mode::Ofb, SP_IV, ofb, "F.4 OFB"),
            (
                Mode::Ctr(CounterWidth::Full128),
                Mode::Ctr(CounterWidth::Full128),
                SP_CTR,
                ctr,
                "F.5 CTR",
            ),
        ];
        for (enc, dec, iv, ct, name) in cases {
            let ct = hex::decode(ct).unwrap();
            let mut buf = pt.clone();
            kernel(&k, enc, &mut block(iv), InOut::InPlace(&mut buf));
            assert_eq!(hex(&buf), hex(&ct), "{name} AES-{bits} encrypt");
            kernel(&k, dec, &mut block(iv), InOut::InPlace(&mut buf));
            assert_eq!(hex(&buf), hex(&pt), "{name} AES-{bits} decrypt");
        }
    }
}

// --- every kernel against the reference --------------------------------

use rand::{Rng, SeedableRng, rngs::StdRng};

/// Block counts: every count through 5 batches of 8, and a few large ones.
fn block_counts() -> impl Iterator<Item = usize> {
    (0..=40).chain([63, 64, 65, 100, 257, 1000])
}

/// Starting states: random, and for CTR counters just below the 2^32,
/// 2^64 and 2^128 carry points (random bytes above the carry point).
fn states(rng: &mut StdRng, mode: Mode) -> Vec<Block> {
    let mut out = vec![rng.random()];
    if let Mode::Ctr(_) = mode {
        for below in [1u64, 2, 3, 5, 8, 9, 17] {
            let mut c: Block = rng.random();
            c[12..].copy_from_slice(&(u32::MAX - (below as u32 - 1)).to_be_bytes());
            out.push(c);
            let mut c: Block = rng.random();
            c[8..].copy_from_slice(&(u64::MAX - (below - 1)).to_be_bytes());
            out.push(c);
            out.push((u128::MAX - u128::from(below - 1)).to_be_bytes());
        }
    }
    out
}

/// One kernel call, `n` blocks, from `state`, compared with the reference
/// in place, with separate (misaligned, garbage-filled) buffers, and as
/// two calls split at several points.
fn check(k: &Key, mode: Mode, state: Block, data: &[u8], rng: &mut StdRng, what: &str) {
    let mut want = data.to_vec();
    let mut want_state = state;
    reference(k, mode, &mut want_state, &mut want);

    let mut buf = data.to_vec();
    let mut st = state;
    kernel(k, mode, &mut st, InOut::InPlace(&mut buf));
    assert!(buf == want, "{what}: in place output");
    assert_eq!(st, want_state, "{what}: in place state");

    // Separate buffers, both misaligned by one byte, output prefilled with garbage.
    let mut input = vec![0u8; data.len() + 1];
    input[1..].copy_from_slice(data);
    let mut output = vec![0u8; data.len() + 1];
    rng.fill(&mut output[..]);
    let mut st = state;
    let io = InOut::separate(&input[1..], &mut output[1..]).unwrap();
    kernel(k, mode, &mut st, io);
    assert!(output[1..] == want[..], "{what}: separate output");
    assert_eq!(st, want_state, "{what}: separate state");
    assert!(input[1..] == *data, "{what}: input modified");

    let blocks = data.len() / 16;
    for split in [1, 3, 8, blocks / 2, blocks.saturating_sub(1)] {
        if split == 0 || split >= blocks {
            continue;
        }
        let mut buf = data.to_vec();
        let mut st = state;
        let (a, b) = buf.split_at_mut(split * 16);
        kernel(k, mode, &mut st, InOut::InPlace(a));
        kernel(k, mode, &mut st, InOut::InPlace(b));
        assert!(buf == want, "{what}: split at {split}: output");
        assert_eq!(st, want_state, "{what}: split at {split}: state");
    }
}

/// Both XTS kernels (carry-less and shift-only tweak reduction) against
/// the generic ECB composition, every block count 0..=40 and a few
/// larger, both directions, every key size.
#[test]
fn xts_kernels_agree() {
    let mut rng = StdRng::seed_from_u64(0x0078_7473);
    for len in [16, 24, 32] {
        let mut raw = vec![0u8; len];
        rng.fill(&mut raw[..]);
        let Some(k) = Key::boxed(&raw) else { return };
        if !k.clmul {
            eprintln!("pclmulqdq not detected: carry-less XTS kernel not compared");
            return;
        }
        for n in (0..=40).chain([63, 64, 65, 300]) {
            let mut input = vec![0u8; 16 * n];
            rng.fill(&mut input[..]);
            let mut t0 = [0u8; 16];
            rng.fill(&mut t0);
            for dec in [false, true] {
                let keys = if dec { &k.dec } else { &k.enc };
                let (mut a, mut b) = (input.clone(), input.clone());
                let (mut ta, mut tb) = (t0, t0);
                let (pa, pb) = (a.as_mut_ptr(), b.as_mut_ptr());
                // SAFETY: `Key::boxed` succeeded (AES-NI, SSSE3) and `clmul`
                // is set (PCLMULQDQ); both buffers hold `n` blocks, in place.
                with_rounds!(k.rounds(), R => unsafe {
                    if dec {
                        xts_clmul::<R, true>(keys, None, &mut ta, pa, pa, n);
                        xts_shift::<R, true>(keys, None, &mut tb, pb, pb, n);
                    } else {
                        xts_clmul::<R, false>(keys, None, &mut ta, pa, pa, n);
                        xts_shift::<R, false>(keys, None, &mut tb, pb, pb, n);
                    }
                });
                let (mut c, mut tc) = (input.clone(), t0);
                super::super::xts_generic(&*k, &mut tc, InOut::InPlace(&mut c), dec);
                assert_eq!((&a, ta), (&c, tc), "clmul, {n} blocks, dec {dec}");
                assert_eq!((&b, tb), (&c, tc), "shift, {n} blocks, dec {dec}");
            }
        }
    }
}

#[test]
fn every_kernel_matches_the_reference() {
    if Key::boxed(&[0; 16]).is_none() {
        eprintln!("skipped: AES-NI/SSSE3 not detected");
        return;
    }
    let mut rng = StdRng::seed_from_u64(0x4145_534e_4921);
    for key_len in [16, 24, 32] {
        for _ in 0..2 {
            let mut key = vec![0u8; key_len];
            rng.fill(&mut key[..]);
            let k = Key::boxed(&key).unwrap();
            // The reference takes both schedules from `k`: check that
            // they are inverses.
            let mut data = vec![0u8; 16 * 40];
            rng.fill(&mut data[..]);
            let mut buf = data.clone();
            k.ecb_encrypt(InOut::InPlace(&mut buf));
            assert!(buf != data);
            k.ecb_decrypt(InOut::InPlace(&mut buf));
            assert!(buf == data, "AES-{} ECB round trip", key_len * 8);
            for mode in MODES {
                for state in states(&mut rng, mode) {
                    for n in block_counts() {
                        let mut data = vec![0u8; 16 * n];
                        rng.fill(&mut data[..]);
                        let what = format!(
                            "AES-{} {mode:?} {n} blocks from {}",
                            key_len * 8,
                            hex(&state)
                        );
                        check(&k, mode, state, &data, &mut rng, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn ctr_counter_wraps_as_specified() {
    let Some(k) = Key::boxed(&[7; 32]) else {
        eprintln!("skipped: AES-NI/SSSE3 not detected");
        return;
    };
    let mut buf = [0u8; 16 * 11];
    let mut c = [0xff; 16];
    k.ctr(&mut c, CounterWidth::Full128, InOut::InPlace(&mut buf));
    assert_eq!(u128::from_be_bytes(c), 10);
    let mut c = [0xff; 16];
    k.ctr(&mut c, CounterWidth::Low32, InOut::InPlace(&mut buf));
    assert_eq!(c[..12], [0xff; 12]);
    assert_eq!(c[12..], 10u32.to_be_bytes());
    let mut c = [0; 16];
    c[8..].copy_from_slice(&(u64::MAX - 4).to_be_bytes());
    k.ctr(&mut c, CounterWidth::Full128, InOut::InPlace(&mut buf));
    assert_eq!(u128::from_be_bytes(c), (1 << 64) + 6);
}

// --- measurements (run with --release -- --ignored --nocapture) --------

use std::hint::black_box;
use std::time::Instant;

/// This thread's on-CPU time in seconds (Linux `schedstat`), if known.
/// The development machine is a shared 2-core VM, where wall time often
/// measures the neighbours; `openssl speed` likewise divides by CPU time
/// unless given `-elapsed`.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
}

/// Seconds `f` took: wall time while this thread was not preempted (it is
/// precise), else CPU time (the kernel updates it per scheduler tick, a
/// few ms, so runs are ~100 ms).
fn measure(mut f: impl FnMut()) -> f64 {
    let (cpu0, wall0) = (cpu_seconds(), Instant::now());
    f();
    let wall = wall0.elapsed().as_secs_f64();
    match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) if b - a < 0.9 * wall => b - a,
        _ => wall,
    }
}

/// Median over `reps` runs of the seconds per call of `f`, each run
/// sized to take about `run_ms`.
fn time_per_call(reps: usize, run_ms: u64, mut f: impl FnMut()) -> f64 {
    let mut calls = 1u64;
    while measure(|| (0..calls).for_each(|_| f())) < run_ms as f64 / 4e3 {
        calls *= 2;
    }
    calls *= 4;
    let mut runs: Vec<f64> = (0..reps)
        .map(|_| measure(|| (0..calls).for_each(|_| f())) / calls as f64)
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[reps / 2]
}

#[test]
#[ignore = "measurement; run with --release -- --ignored --nocapture"]
fn aesni_throughput() {
    if Key::boxed(&[0; 16]).is_none() {
        eprintln!("skipped: AES-NI/SSSE3 not detected");
        return;
    }
    let modes = [
        ("ECB enc", Mode::EcbEnc),
        ("CTR", Mode::Ctr(CounterWidth::Full128)),
        ("CBC dec", Mode::CbcDec),
        ("CBC enc", Mode::CbcEnc),
    ];
    println!(
        "{:<8} {:<8} {:>10} {:>10}",
        "key", "mode", "16 KiB", "256 B"
    );
    for key_len in [16, 32] {
        let k = Key::boxed(&vec![0x42; key_len]).unwrap();
        for (name, mode) in modes {
            let mut cells = Vec::new();
            for len in [16384, 256] {
                let mut buf = vec![0x5a; len];
                let mut state = [0; 16];
                let secs = time_per_call(5, 100, || {
                    kernel(&k, mode, &mut state, InOut::InPlace(black_box(&mut buf)));
                });
                cells.push(format!("{:.2} GB/s", len as f64 / secs / 1e9));
            }
            println!(
                "AES-{:<4} {name:<8} {:>10} {:>10}",
                key_len * 8,
                cells[0],
                cells[1]
            );
        }
    }
}

#[test]
#[ignore = "measurement; run with --release -- --ignored --nocapture"]
fn aesni_key_setup() {
    if Key::boxed(&[0; 16]).is_none() {
        eprintln!("skipped: AES-NI/SSSE3 not detected");
        return;
    }
    for key_len in [16, 24, 32] {
        let key = vec![0x42; key_len];
        let mut k = Key::boxed(&key).unwrap();
        let enc_only = time_per_call(7, 100, || {
            // SAFETY: AES-NI and SSSE3 were detected (checked above); the
            // length matches `k.rounds`.
            unsafe {
                expand_into::<false>(black_box(&key), k.enc.0.as_mut_ptr(), k.dec.0.as_mut_ptr())
            };
            black_box(&mut k);
        });
        let both = time_per_call(7, 100, || {
            // SAFETY: as above.
            unsafe {
                expand_into::<true>(black_box(&key), k.enc.0.as_mut_ptr(), k.dec.0.as_mut_ptr())
            };
            black_box(&mut k);
        });
        let new = time_per_call(7, 100, || {
            // Forget, not drop: this times the expansion, not the zeroizing.
            core::mem::forget(black_box(Key::boxed(black_box(&key))));
        });
        let new_drop = time_per_call(7, 100, || {
            drop(black_box(Key::boxed(black_box(&key))));
        });
        println!(
            "AES-{}: encrypt schedule {:.1} ns, both schedules {:.1} ns, \
             Key::boxed {:.1} ns, Key::boxed + drop {:.1} ns",
            key_len * 8,
            enc_only * 1e9,
            both * 1e9,
            new * 1e9,
            new_drop * 1e9
        );
    }
}
