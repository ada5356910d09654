//! Unit tests of the VAES+AVX2 backend: every kernel against the modes
//! composed from AES-NI single-block calls, at every length around the
//! 16-block batches, and an opt-in throughput probe. Not the cross-backend
//! suites, which live in `crates/hwcrypt/tests/`.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace([' ', '\n'], "")).unwrap()
}

fn block(s: &str) -> Block {
    unhex(s).try_into().unwrap()
}

/// SP 800-38A plaintext (F.1 - F.5).
const PT: &str = "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
                  30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710";
const KEY128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const KEY192: &str = "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b";
const KEY256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const IV: &str = "000102030405060708090a0b0c0d0e0f";

/// The key, or `None` (the test is skipped) on a CPU without VAES-AVX2.
fn key(hex: &str) -> Option<SecretBox<Key>> {
    let k = Key::boxed(&unhex(hex));
    if k.is_none() {
        eprintln!("vaes-avx2 not detected: test skipped");
    }
    k
}

/// The shift-only XTS kernel (for CPUs without VPCLMULQDQ) against the
/// carry-less one and the generic ECB composition, every block count
/// 0..=70 and a few larger, both directions, every key size.
#[test]
fn xts_kernels_agree() {
    let mut rng = StdRng::seed_from_u64(0x0078_7473);
    for len in [16, 24, 32] {
        let mut raw = vec![0u8; len];
        rng.fill(&mut raw[..]);
        let Some(k) = Key::boxed(&raw) else { return };
        if !k.narrow.wide_clmul() {
            eprintln!("vpclmulqdq not detected: carry-less XTS kernel not compared");
            return;
        }
        for n in (0..=70).chain([127, 128, 129, 300]) {
            let mut input = vec![0u8; 16 * n];
            rng.fill(&mut input[..]);
            let mut t0 = [0u8; 16];
            rng.fill(&mut t0);
            for dec in [false, true] {
                let keys = if dec { k.dec() } else { k.enc() };
                let (mut a, mut b) = (input.clone(), input.clone());
                let (mut ta, mut tb) = (t0, t0);
                // SAFETY: `Key::boxed` succeeded (VAES_AVX2_FEATURES) and
                // `clmul` is set (VPCLMULQDQ), which both kernels need.
                unsafe {
                    match (len, dec) {
                        (16, false) => {
                            xts_clmul::<10, false>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<10, false>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                        (16, true) => {
                            xts_clmul::<10, true>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<10, true>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                        (24, false) => {
                            xts_clmul::<12, false>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<12, false>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                        (24, true) => {
                            xts_clmul::<12, true>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<12, true>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                        (_, false) => {
                            xts_clmul::<14, false>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<14, false>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                        (_, true) => {
                            xts_clmul::<14, true>(keys, None, &mut ta, InOut::InPlace(&mut a));
                            xts_shift::<14, true>(keys, None, &mut tb, InOut::InPlace(&mut b));
                        }
                    }
                }
                let (mut c, mut tc) = (input.clone(), t0);
                super::super::xts_generic(&*k, &mut tc, InOut::InPlace(&mut c), dec);
                assert_eq!((&a, ta), (&c, tc), "clmul, {n} blocks, dec {dec}");
                assert_eq!((&b, tb), (&c, tc), "shift, {n} blocks, dec {dec}");
            }
        }
    }
}

#[test]
fn sp800_38a_f1_ecb() {
    let cases = [
        (
            KEY128,
            "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf
             43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4",
        ),
        (
            KEY256,
            "f3eed1bdb5d2a03c064b5a7e3db181f8 591ccb10d410ed26dc5ba74a31362870
             b6ed21b99ca6f4f9f153e7b1beafed1d 23304b7a39f9f3ff067d8d8f9e24ecc7",
        ),
    ];
    for (k, ct) in cases {
        let Some(k) = key(k) else { return };
        let mut buf = unhex(PT);
        k.ecb_encrypt(InOut::InPlace(&mut buf));
        assert_eq!(buf, unhex(ct));
        k.ecb_decrypt(InOut::InPlace(&mut buf));
        assert_eq!(buf, unhex(PT));
    }
}

#[test]
fn sp800_38a_f2_cbc_decrypt() {
    let cases = [
        (
            KEY128,
            "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2
             73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7",
        ),
        (
            KEY256,
            "f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d
             39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b",
        ),
    ];
    for (k, ct) in cases {
        let Some(k) = key(k) else { return };
        let ct = unhex(ct);
        let mut chain = block(IV);
        let mut out = vec![0xa5; 64];
        k.cbc_decrypt(&mut chain, InOut::separate(&ct, &mut out).unwrap());
        assert_eq!(out, unhex(PT));
        assert_eq!(chain[..], ct[48..]);
    }
}

#[test]
fn sp800_38a_f3_cfb128_decrypt() {
    let cases = [
        (
            KEY128,
            "3b3fd92eb72dad20333449f8e83cfb4a c8a64537a0b3a93fcde3cdad9f1ce58b
             26751f67a3cbb140b1808cf187a4f4df c04b05357c5d1c0eeac4c66f9ff7f2e6",
        ),
        (
            KEY192,
            "cdc80d6fddf18cab34c25909c99a4174 67ce7f7f81173621961a2b70171d3d7a
             2e1e8a1dd59b88b1c8e60fed1efac4c9 c05f9f9ca9834fa042ae8fba584b09ff",
        ),
        (
            KEY256,
            "dc7e84bfda79164b7ecd8486985d3860 39ffed143b28b1c832113c6331e5407b
             df10132415e54b92a13ed0a8267ae2f9 75a385741ab9cef82031623d55b1e471",
        ),
    ];
    for (k, ct) in cases {
        let Some(k) = key(k) else { return };
        let mut buf = unhex(ct);
        let mut register = block(IV);
        k.cfb128_decrypt(&mut register, InOut::InPlace(&mut buf));
        assert_eq!(buf, unhex(PT));
        assert_eq!(register[..], unhex(ct)[48..]);
    }
}

#[test]
fn sp800_38a_f5_ctr() {
    let cases = [
        (
            KEY128,
            "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff
             5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee",
        ),
        (
            KEY256,
            "601ec313775789a5b7a7f504bbf3d228 f443e3ca4d62b59aca84e990cacaf5c5
             2b0930daa23de94ce87017ba2d84988d dfc9c58db67aada613c2dd08457941a6",
        ),
    ];
    for (k, ct) in cases {
        let Some(k) = key(k) else { return };
        for width in [CounterWidth::Full128, CounterWidth::Low32] {
            let mut counter = block("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
            let mut buf = unhex(PT);
            k.ctr(&mut counter, width, InOut::InPlace(&mut buf));
            assert_eq!(buf, unhex(ct), "{width:?}");
            let mut want = block("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
            width.add(&mut want, 4);
            assert_eq!(counter, want, "{width:?}");
        }
    }
}

// -- Differential tests against single-block AES-NI ---------------------

/// The modes composed from `aesni::Key`'s single-block kernels.
struct Reference(SecretBox<aesni::Key>);

impl Reference {
    fn ecb_encrypt(&self, data: &mut [u8]) {
        for b in data.chunks_exact_mut(16) {
            self.0.encrypt_block(b.try_into().unwrap());
        }
    }
    fn ecb_decrypt(&self, data: &mut [u8]) {
        for b in data.chunks_exact_mut(16) {
            self.0.decrypt_block(b.try_into().unwrap());
        }
    }
    fn cbc_decrypt(&self, chain: &mut Block, data: &mut [u8]) {
        for b in data.chunks_exact_mut(16) {
            let c: Block = b.try_into().unwrap();
            self.0.decrypt_block(b.try_into().unwrap());
            b.iter_mut().zip(chain.iter()).for_each(|(x, p)| *x ^= p);
            *chain = c;
        }
    }
    fn cfb128_decrypt(&self, register: &mut Block, data: &mut [u8]) {
        for b in data.chunks_exact_mut(16) {
            let c: Block = b.try_into().unwrap();
            self.0.encrypt_block(register);
            b.iter_mut().zip(register.iter()).for_each(|(x, k)| *x ^= k);
            *register = c;
        }
    }
    fn ctr(&self, counter: &mut Block, width: CounterWidth, data: &mut [u8]) {
        for b in data.chunks_exact_mut(16) {
            let mut ks = *counter;
            self.0.encrypt_block(&mut ks);
            b.iter_mut().zip(ks).for_each(|(x, k)| *x ^= k);
            width.add(counter, 1);
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    EcbEnc,
    EcbDec,
    CbcDec,
    CfbDec,
    Ctr(CounterWidth),
}

const MODES: [Mode; 6] = [
    Mode::EcbEnc,
    Mode::EcbDec,
    Mode::CbcDec,
    Mode::CfbDec,
    Mode::Ctr(CounterWidth::Full128),
    Mode::Ctr(CounterWidth::Low32),
];

fn run_ref(r: &Reference, mode: Mode, state: &mut Block, data: &mut [u8]) {
    match mode {
        Mode::EcbEnc => r.ecb_encrypt(data),
        Mode::EcbDec => r.ecb_decrypt(data),
        Mode::CbcDec => r.cbc_decrypt(state, data),
        Mode::CfbDec => r.cfb128_decrypt(state, data),
        Mode::Ctr(w) => r.ctr(state, w, data),
    }
}

fn run(k: &Key, mode: Mode, state: &mut Block, io: InOut<'_>) {
    match mode {
        Mode::EcbEnc => k.ecb_encrypt(io),
        Mode::EcbDec => k.ecb_decrypt(io),
        Mode::CbcDec => k.cbc_decrypt(state, io),
        Mode::CfbDec => k.cfb128_decrypt(state, io),
        Mode::Ctr(w) => k.ctr(state, w, io),
    }
}

/// `mode` over `input` with `state`, in place and to a garbage-filled
/// separate buffer, against the reference; also split in two calls at
/// `split` blocks (state continuation).
fn check(k: &Key, r: &Reference, mode: Mode, state: Block, input: &[u8], split: usize) {
    let n = input.len() / 16;
    let mut want = input.to_vec();
    let mut want_state = state;
    run_ref(r, mode, &mut want_state, &mut want);
    let ctx = || format!("{mode:?} blocks={n} state={}", hex::encode(state));

    let mut buf = input.to_vec();
    let mut st = state;
    run(k, mode, &mut st, InOut::InPlace(&mut buf));
    assert_eq!(buf, want, "in place {}", ctx());
    assert_eq!(st, want_state, "in place state {}", ctx());

    let mut out = vec![0xa5u8; input.len()];
    let mut st = state;
    run(k, mode, &mut st, InOut::separate(input, &mut out).unwrap());
    assert_eq!(out, want, "separate {}", ctx());
    assert_eq!(st, want_state, "separate state {}", ctx());

    let split = split.min(n) * 16;
    let mut buf = input.to_vec();
    let mut st = state;
    let (a, b) = buf.split_at_mut(split);
    run(k, mode, &mut st, InOut::InPlace(a));
    run(k, mode, &mut st, InOut::InPlace(b));
    assert_eq!(buf, want, "two calls at {split} {}", ctx());
    assert_eq!(st, want_state, "two calls state {}", ctx());
}

fn keys(rng: &mut StdRng, len: usize) -> Option<(SecretBox<Key>, Reference)> {
    let mut raw = vec![0u8; len];
    rng.fill(&mut raw[..]);
    let k = Key::boxed(&raw);
    if k.is_none() {
        eprintln!("vaes-avx2 not detected: test skipped");
    }
    Some((k?, Reference(aesni::Key::boxed(&raw)?)))
}

#[test]
fn every_parallel_kernel_matches_single_block_aesni() {
    let mut rng = StdRng::seed_from_u64(0x7661_6573);
    for len in [16, 24, 32] {
        let Some((k, r)) = keys(&mut rng, len) else {
            return;
        };
        let sizes = (0..=70).chain([127, 128, 129, 255, 256, 257, 1000, 1024 + 15]);
        for n in sizes {
            let mut input = vec![0u8; n * 16];
            rng.fill(&mut input[..]);
            for mode in MODES {
                let mut state = [0u8; 16];
                rng.fill(&mut state);
                let split = rng.random_range(0..=n);
                check(&k, &r, mode, state, &input, split);
            }
        }
    }
}

#[test]
fn ctr_counters_near_carry_points() {
    let mut rng = StdRng::seed_from_u64(0x0063_7472);
    for len in [16, 24, 32] {
        let Some((k, r)) = keys(&mut rng, len) else {
            return;
        };
        let mut prefix = [0u8; 16];
        rng.fill(&mut prefix);
        let p = u128::from_be_bytes(prefix);
        let mut starts = Vec::new();
        for back in [0u128, 1, 2, 3, 7, 15, 16, 17, 31, 33, 40] {
            // Just below 2^32, 2^64 and 2^128 (with random and all-ones high bits).
            starts.push((p & !0xffff_ffff) | (0x1_0000_0000 - back));
            starts.push((p & !u128::from(u64::MAX)) | ((1u128 << 64) - back));
            starts.push(((1u128 << 64) - back) | (u128::from(u64::MAX) << 64));
            starts.push(0u128.wrapping_sub(back));
            starts.push(u128::from(u32::MAX) << 32 | (0x1_0000_0000 - back));
        }
        for start in starts {
            for n in [1usize, 2, 5, 16, 17, 33, 47, 70] {
                let mut input = vec![0u8; n * 16];
                rng.fill(&mut input[..]);
                for width in [CounterWidth::Full128, CounterWidth::Low32] {
                    let split = rng.random_range(0..=n);
                    check(&k, &r, Mode::Ctr(width), start.to_be_bytes(), &input, split);
                }
            }
        }
    }
}

/// `wide_key` puts round key `r` of the AES-NI schedule in both lanes.
#[test]
fn wide_round_keys_are_the_aesni_schedule_broadcast() {
    let Some(k) = key(KEY256) else { return };
    let pairs = [
        (k.enc(), k.narrow.encryption_round_keys()),
        (k.dec(), k.narrow.decryption_round_keys()),
    ];
    for (keys, want) in pairs {
        for (r, n) in want.iter().enumerate() {
            let mut w = [0u8; 32];
            // SAFETY: `Key::boxed` succeeded, so AVX2, VAES and AES-NI were
            // detected; `w` is 32 writable bytes.
            unsafe {
                _mm256_storeu_si256(w.as_mut_ptr().cast(), kernels::wide_key(keys, r));
            }
            assert_eq!((&w[..16], &w[16..]), (&n[..], &n[..]), "round key {r}");
        }
    }
}

/// This thread's CPU time in seconds: `openssl speed` divides by user CPU
/// time too (unless `-elapsed`), so both are immune to preemption on a
/// shared machine.
fn thread_cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: Linux x86-64 `clock_gettime` (in the C library std links)
    // writes one `struct timespec` (two 64-bit fields) to a valid pointer.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

/// GB/s (10^9 bytes per second of thread CPU time) of the parallel
/// kernels, median of 7 runs of ~0.2 s each. Run with
/// `cargo test --release -p hwcrypt --lib vaes_throughput -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark"]
fn vaes_throughput() {
    use std::hint::black_box;
    let Some(_) = key(KEY128) else { return };
    let modes: [(&str, Mode); 3] = [
        ("ecb-enc", Mode::EcbEnc),
        ("ctr", Mode::Ctr(CounterWidth::Full128)),
        ("cbc-dec", Mode::CbcDec),
    ];
    println!(
        "{:<8} {:<8} {:>6} {:<8} {:>8}  runs",
        "key", "mode", "bytes", "buffers", "GB/s"
    );
    for (name, hex) in [("aes-128", KEY128), ("aes-256", KEY256)] {
        let k = key(hex).unwrap();
        for (mode_name, mode) in modes {
            // In place on one buffer, like `openssl speed` (each call then
            // waits for the previous call's stores), and 256 B to a
            // separate buffer (independent messages).
            for (size, in_place) in [(16384usize, true), (256, true), (256, false)] {
                let mut buf = vec![0x5au8; size];
                let input = vec![0xa5u8; size];
                let per_check = (1 << 20) / size;
                let mut runs: Vec<f64> = (0..7)
                    .map(|_| {
                        let start = thread_cpu_seconds();
                        let mut bytes = 0u64;
                        while thread_cpu_seconds() - start < 0.2 {
                            // ~1 MiB between clock reads (a syscall).
                            for _ in 0..per_check {
                                // A fresh IV/counter per message, as a caller would.
                                let mut state = [7u8; 16];
                                let io = if in_place {
                                    InOut::InPlace(black_box(&mut buf))
                                } else {
                                    InOut::Separate {
                                        input: black_box(&input),
                                        output: black_box(&mut buf),
                                    }
                                };
                                run(&k, mode, &mut state, io);
                                black_box(&state);
                            }
                            bytes += (per_check * size) as u64;
                        }
                        bytes as f64 / (thread_cpu_seconds() - start) / 1e9
                    })
                    .collect();
                runs.sort_by(f64::total_cmp);
                let all: Vec<String> = runs.iter().map(|r| format!("{r:.2}")).collect();
                let buffers = if in_place { "in-place" } else { "separate" };
                println!(
                    "{name:<8} {mode_name:<8} {size:>6} {buffers:<8} {:>8.2}  [{}]",
                    runs[3],
                    all.join(" ")
                );
            }
        }
    }
}
