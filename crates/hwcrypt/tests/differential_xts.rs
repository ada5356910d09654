//! AES-XTS differential tests: every non-`soft` backend against `soft`, one
//! trial per family x key size x backend (`diff::sweep::xts256::vaes-avx2`).
//!
//! * `sweep`: every data unit length 16..=4096 and 20 random larger ones (up
//!   to 80 KiB), encryption and decryption, in four buffer shapes: in place
//!   and to a separate garbage-filled buffer, each at a 32-byte-aligned
//!   offset and at an odd offset 1..=31. Bytes around the output must stay
//!   untouched, the input of a separate-buffer call must not change. Each
//!   length has its own random key halves and tweak (so every tail shape
//!   meets every tweak lane position).
//! * `bulk`: `encrypt_units`/`decrypt_units` (and `_to`) over 1..=33 units of
//!   sizes 16, 17, 31, 32, 48, 100, 512, 520, 4096 and 4111 bytes equal one
//!   per-unit call each, on the backend and on `soft`, including sector
//!   numbers that wrap at 2^64; sector calls equal tweak calls with
//!   `sector_tweak`.
//!
//! Random data comes from a seeded RNG: the base seed is printed at the start
//! and in every failure message; `HWCRYPT_TEST_SEED=0x...` repeats a run.

mod common;

use common::first_difference;
use hwcrypt::Backend;
use hwcrypt::modes::{Xts, sector_tweak};
use hwcrypt::registry::Algorithm;
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEY_LENS: [usize; 3] = [32, 48, 64];
const GUARD: usize = 32;

fn base_seed() -> Result<u64, String> {
    match std::env::var("HWCRYPT_TEST_SEED") {
        Ok(s) => {
            let t = s.trim();
            match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => t.parse(),
            }
            .map_err(|e| format!("HWCRYPT_TEST_SEED={s:?}: {e}"))
        }
        Err(_) => Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ u64::from(std::process::id()).rotate_left(32)),
    }
}

/// A random XTS key of `len` bytes (halves distinct with overwhelming
/// probability; retried otherwise).
fn random_key(rng: &mut StdRng, len: usize) -> Vec<u8> {
    loop {
        let mut k = vec![0u8; len];
        rng.fill(&mut k[..]);
        if k[..len / 2] != k[len / 2..] {
            return k;
        }
    }
}

fn pair(key: &[u8], backend: Backend) -> Result<(Xts, Xts), String> {
    let soft = Xts::with_backend(key, Backend::Soft).map_err(|e| format!("soft key: {e}"))?;
    let under = Xts::with_backend(key, backend).map_err(|e| format!("{backend} key: {e}"))?;
    Ok((soft, under))
}

fn cmp(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    first_difference(got, want).map_or(Ok(()), |d| Err(format!("{what}: {d}")))
}

/// Runs one direction of `xts` on `input` in the four buffer shapes and
/// checks each against `want`.
fn shapes(
    xts: &Xts,
    encrypt: bool,
    tweak: &[u8; 16],
    input: &[u8],
    want: &[u8],
    rng: &mut StdRng,
) -> Result<(), String> {
    let n = input.len();
    for odd in [false, true] {
        let at = if odd { rng.random_range(1..32) } else { 0 };
        // In place, inside guard bytes.
        let mut buf = vec![0x3cu8; at + n + GUARD];
        buf[at..at + n].copy_from_slice(input);
        let unit = &mut buf[at..at + n];
        if encrypt {
            xts.encrypt(tweak, unit)
        } else {
            xts.decrypt(tweak, unit)
        }
        .map_err(|e| format!("in place at +{at}: {e}"))?;
        cmp(&format!("in place at +{at}"), &buf[at..at + n], want)?;
        if buf[..at].iter().chain(&buf[at + n..]).any(|&b| b != 0x3c) {
            return Err(format!("in place at +{at}: bytes around the unit changed"));
        }
        // Separate buffers: garbage-filled output, guarded; input unchanged.
        let mut src = vec![0u8; at + n];
        src[at..].copy_from_slice(input);
        let mut out = vec![0u8; at + n + GUARD];
        rng.fill(&mut out[..]);
        let before = out.clone();
        if encrypt {
            xts.encrypt_to(tweak, &src[at..], &mut out[at..at + n])
        } else {
            xts.decrypt_to(tweak, &src[at..], &mut out[at..at + n])
        }
        .map_err(|e| format!("separate at +{at}: {e}"))?;
        cmp(&format!("separate at +{at}"), &out[at..at + n], want)?;
        if out[..at] != before[..at] || out[at + n..] != before[at + n..] {
            return Err(format!(
                "separate at +{at}: bytes around the output changed"
            ));
        }
        if src[at..] != *input {
            return Err(format!("separate at +{at}: the input changed"));
        }
    }
    Ok(())
}

fn sweep(backend: Backend, key_len: usize, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lengths: Vec<usize> = (16..=4096).collect();
    lengths.extend((0..20).map(|_| rng.random_range(4097..=80 * 1024)));
    for len in lengths {
        let key = random_key(&mut rng, key_len);
        let (soft, under) = pair(&key, backend)?;
        let mut tweak = [0u8; 16];
        rng.fill(&mut tweak);
        let mut pt = vec![0u8; len];
        rng.fill(&mut pt[..]);
        let mut ct = pt.clone();
        soft.encrypt(&tweak, &mut ct)
            .map_err(|e| format!("soft: {e}"))?;
        let ctx = |e: String| format!("len {len}, tweak {}: {e}", common::to_hex(&tweak));
        shapes(&under, true, &tweak, &pt, &ct, &mut rng)
            .map_err(|e| ctx(format!("encrypt {e}")))?;
        shapes(&under, false, &tweak, &ct, &pt, &mut rng)
            .map_err(|e| ctx(format!("decrypt {e}")))?;
    }
    Ok(())
}

fn bulk(backend: Backend, key_len: usize, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let key = random_key(&mut rng, key_len);
    let (soft, under) = pair(&key, backend)?;
    for unit in [16usize, 17, 31, 32, 48, 100, 512, 520, 4096, 4111] {
        for units in [1usize, 2, 3, 15, 16, 17, 33] {
            if unit * units > 64 * 1024 && units > 17 {
                continue;
            }
            let first = match rng.random_range(0..3) {
                0 => rng.random::<u64>(),
                1 => u64::MAX - rng.random_range(0..units as u64),
                _ => rng.random_range(0..1000),
            };
            let ctx = |e: String| format!("unit {unit} x {units} from sector {first}: {e}");
            let mut pt = vec![0u8; unit * units];
            rng.fill(&mut pt[..]);
            // Per-unit reference on soft, with explicit tweaks.
            let mut want = pt.clone();
            for (j, u) in want.chunks_exact_mut(unit).enumerate() {
                let tweak = sector_tweak(first.wrapping_add(j as u64));
                soft.encrypt(&tweak, u)
                    .map_err(|e| ctx(format!("soft: {e}")))?;
            }
            for (name, xts) in [("soft", &soft), ("under test", &under)] {
                let mut buf = pt.clone();
                xts.encrypt_units(unit, first, &mut buf)
                    .map_err(|e| ctx(e.to_string()))?;
                cmp(&format!("{name} encrypt_units"), &buf, &want).map_err(ctx)?;
                let mut out = vec![0xa5u8; pt.len()];
                xts.decrypt_units_to(unit, first, &buf, &mut out)
                    .map_err(|e| ctx(e.to_string()))?;
                cmp(&format!("{name} decrypt_units_to"), &out, &pt).map_err(ctx)?;
                xts.encrypt_units_to(unit, first, &pt, &mut out)
                    .map_err(|e| ctx(e.to_string()))?;
                cmp(&format!("{name} encrypt_units_to"), &out, &want).map_err(ctx)?;
                xts.decrypt_units(unit, first, &mut buf)
                    .map_err(|e| ctx(e.to_string()))?;
                cmp(&format!("{name} decrypt_units"), &buf, &pt).map_err(ctx)?;
                // Per-unit sector calls.
                let mut buf = pt.clone();
                for (j, u) in buf.chunks_exact_mut(unit).enumerate() {
                    xts.encrypt_sector(first.wrapping_add(j as u64), u)
                        .map_err(|e| ctx(e.to_string()))?;
                }
                cmp(&format!("{name} encrypt_sector per unit"), &buf, &want).map_err(ctx)?;
                for (j, u) in buf.chunks_exact_mut(unit).enumerate() {
                    xts.decrypt_sector(first.wrapping_add(j as u64), u)
                        .map_err(|e| ctx(e.to_string()))?;
                }
                cmp(&format!("{name} decrypt_sector per unit"), &buf, &pt).map_err(ctx)?;
            }
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(Algorithm::AesXts);
    let seed = base_seed();
    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::AesXts, &backends));
    match &seed {
        Ok(s) => preamble.push(format!(
            "differential_xts: base seed {s:#018x} (HWCRYPT_TEST_SEED={s:#018x} repeats this run)"
        )),
        Err(e) => preamble.push(format!("differential_xts: {e}")),
    }
    common::announce(&preamble, args.list);
    let mut trials = vec![Trial::test("harness::seed", {
        let seed = seed.clone();
        move || seed.map(|_| ()).map_err(Failed::from)
    })];
    let base = seed.unwrap_or(0);
    for (backend, runnable) in &backends {
        // `soft` is the reference; its bulk API is still checked against
        // its per-unit calls.
        let backend = *backend;
        for key_len in KEY_LENS {
            let bits = key_len * 4;
            for (i, family) in ["sweep", "bulk"].into_iter().enumerate() {
                if backend == Backend::Soft && family == "sweep" {
                    continue;
                }
                let seed = base ^ (key_len as u64) << 40 ^ (i as u64) << 48;
                trials.push(
                    Trial::test(format!("diff::{family}::xts{bits}::{backend}"), move || {
                        let run = if family == "sweep" { sweep } else { bulk };
                        run(backend, key_len, seed)
                            .map_err(|e| Failed::from(format!("{e} (seed {seed:#018x})")))
                    })
                    .with_ignored_flag(runnable.is_err()),
                );
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
