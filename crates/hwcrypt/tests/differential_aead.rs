//! Differential and tamper tests for ChaCha20-Poly1305 and
//! XChaCha20-Poly1305, one trial per family x algorithm x backend
//! (`diff::sweep::chacha20-poly1305::avx2`).
//!
//! * `sweep`: every plaintext length 0..=4096 with a random AAD length
//!   (0..=300, now and then up to 4 KiB), then 20 random lengths up to
//!   256 KiB: every non-`soft` backend against `soft` (ciphertext and tag),
//!   sealed in place, into a separate garbage-filled buffer, and at an
//!   unaligned offset; opened in place and from a separate buffer. Bytes
//!   around an output must stay untouched, and a separate input unchanged.
//! * `tamper` (every backend, `soft` included): for lengths around the 64-byte
//!   block and 512-byte chunk boundaries, flipping any single bit of the
//!   ciphertext, the tag, the AAD or the nonce makes `open` fail with
//!   `AuthenticationFailed` and leaves the output all zero, in place and out
//!   of place; a truncated or over-long tag is a clear error.
//! * `chacha20`: the raw stream cipher, every length 0..=2048 at random
//!   counters and at counters just below 2^32, against `soft`; and the
//!   counter limit.
//!
//! Random data comes from a seeded RNG: the base seed is printed at the start
//! and in every failure message; `HWCRYPT_TEST_SEED=0x...` repeats a run.

mod common;

use common::first_difference;
use hwcrypt::aead::{Aead, TAG_LEN};
use hwcrypt::chacha20poly1305::{self as cp, ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SWEEP_MAX: usize = 4096;
const LARGE_LENGTHS: usize = 20;
const LARGE_MAX: usize = 256 << 10;
/// Lengths for the exhaustive tamper tests: around blocks (64), the first
/// batch (448) and chunks (512) of the avx2 path; the vector Poly1305 (from
/// 256), the first batch (1216) and chunks (1280) of the avx512 path.
const TAMPER_LENGTHS: [usize; 22] = [
    0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 447, 448, 449, 511, 512, 961, 1024, 1025, 1216, 1217,
    2496, 2497,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alg {
    ChaCha,
    XChaCha,
}

impl Alg {
    const ALL: [Alg; 2] = [Alg::ChaCha, Alg::XChaCha];
    fn name(self) -> &'static str {
        match self {
            Alg::ChaCha => "chacha20-poly1305",
            Alg::XChaCha => "xchacha20-poly1305",
        }
    }
    fn nonce_len(self) -> usize {
        match self {
            Alg::ChaCha => 12,
            Alg::XChaCha => 24,
        }
    }
    fn key(self, key: &[u8], backend: Backend) -> Result<Box<dyn Dyn>, Error> {
        Ok(match self {
            Alg::ChaCha => Box::new(ChaCha20Poly1305::with_backend(key, backend)?),
            Alg::XChaCha => Box::new(XChaCha20Poly1305::with_backend(key, backend)?),
        })
    }
}

/// The object-safe part of [`Aead`] the tests use.
trait Dyn {
    fn seal_ip(&self, n: &[u8], a: &[u8], buf: &mut [u8]) -> Result<[u8; 16], Error>;
    fn seal_sep(&self, n: &[u8], a: &[u8], p: &[u8], c: &mut [u8]) -> Result<[u8; 16], Error>;
    fn open_ip(&self, n: &[u8], a: &[u8], buf: &mut [u8], t: &[u8]) -> Result<(), Error>;
    fn open_sep(&self, n: &[u8], a: &[u8], c: &[u8], t: &[u8], p: &mut [u8]) -> Result<(), Error>;
}

impl<A: Aead> Dyn for A {
    fn seal_ip(&self, n: &[u8], a: &[u8], buf: &mut [u8]) -> Result<[u8; 16], Error> {
        self.seal_in_place_detached(n, a, buf)
    }
    fn seal_sep(&self, n: &[u8], a: &[u8], p: &[u8], c: &mut [u8]) -> Result<[u8; 16], Error> {
        self.seal_detached(n, a, p, c)
    }
    fn open_ip(&self, n: &[u8], a: &[u8], buf: &mut [u8], t: &[u8]) -> Result<(), Error> {
        self.open_in_place_detached(n, a, buf, t)
    }
    fn open_sep(&self, n: &[u8], a: &[u8], c: &[u8], t: &[u8], p: &mut [u8]) -> Result<(), Error> {
        self.open_detached(n, a, c, t, p)
    }
}

fn bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

fn check(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: {d}")),
    }
}

/// A buffer with guard bytes on both sides at a chosen offset.
struct Guarded {
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

const GUARD: usize = 32;
const GUARD_BYTE: u8 = 0xc3;

impl Guarded {
    fn new(content: &[u8], misalign: usize) -> Guarded {
        let at = GUARD + misalign;
        let mut buf = vec![GUARD_BYTE; at + content.len() + GUARD];
        buf[at..at + content.len()].copy_from_slice(content);
        Guarded {
            buf,
            at,
            len: content.len(),
        }
    }
    fn garbage(rng: &mut StdRng, len: usize, misalign: usize) -> Guarded {
        Guarded::new(&bytes(rng, len), misalign)
    }
    fn get(&self) -> &[u8] {
        &self.buf[self.at..self.at + self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.at..self.at + self.len]
    }
    fn guards_intact(&self) -> Result<(), String> {
        let before = &self.buf[..self.at];
        let after = &self.buf[self.at + self.len..];
        if before.iter().chain(after).all(|&b| b == GUARD_BYTE) {
            Ok(())
        } else {
            Err("bytes outside the output were written".into())
        }
    }
}

// ---------------------------------------------------------------- sweep

/// One message on `backend` against `soft`, every call shape.
fn one_message(
    alg: Alg,
    backend: Backend,
    rng: &mut StdRng,
    len: usize,
    aad_len: usize,
) -> Result<(), String> {
    let key = bytes(rng, 32);
    let nonce = bytes(rng, alg.nonce_len());
    let aad = bytes(rng, aad_len);
    let pt = bytes(rng, len);
    let ctx = |e: String| format!("len {len}, aad {aad_len}: {e}");
    let reference = alg.key(&key, Backend::Soft).map_err(|e| e.to_string())?;
    let under = alg.key(&key, backend).map_err(|e| e.to_string())?;

    let mut want = pt.clone();
    let want_tag = reference
        .seal_ip(&nonce, &aad, &mut want)
        .map_err(|e| ctx(format!("soft seal: {e}")))?;

    // Sealed in place, at an offset.
    let misalign = rng.random_range(0..32);
    let mut g = Guarded::new(&pt, misalign);
    let tag = under
        .seal_ip(&nonce, &aad, g.get_mut())
        .map_err(|e| ctx(format!("seal in place: {e}")))?;
    check(
        &format!("seal in place (offset {misalign}): ciphertext"),
        g.get(),
        &want,
    )
    .map_err(ctx)?;
    check("seal in place: tag", &tag, &want_tag).map_err(ctx)?;
    g.guards_intact().map_err(ctx)?;

    // Sealed into a separate garbage-filled buffer, input unchanged.
    let input = Guarded::new(&pt, rng.random_range(0..32));
    let out_at = rng.random_range(0..32);
    let mut out = Guarded::garbage(rng, len, out_at);
    let tag = under
        .seal_sep(&nonce, &aad, input.get(), out.get_mut())
        .map_err(|e| ctx(format!("seal separate: {e}")))?;
    check("seal separate: ciphertext", out.get(), &want).map_err(ctx)?;
    check("seal separate: tag", &tag, &want_tag).map_err(ctx)?;
    check("seal separate: input", input.get(), &pt).map_err(ctx)?;
    out.guards_intact().map_err(ctx)?;

    // Opened in place and from a separate buffer.
    let mut g = Guarded::new(&want, rng.random_range(0..32));
    under
        .open_ip(&nonce, &aad, g.get_mut(), &want_tag)
        .map_err(|e| ctx(format!("open in place: {e}")))?;
    check("open in place", g.get(), &pt).map_err(ctx)?;
    g.guards_intact().map_err(ctx)?;
    let input = Guarded::new(&want, rng.random_range(0..32));
    let out_at = rng.random_range(0..32);
    let mut out = Guarded::garbage(rng, len, out_at);
    under
        .open_sep(&nonce, &aad, input.get(), &want_tag, out.get_mut())
        .map_err(|e| ctx(format!("open separate: {e}")))?;
    check("open separate", out.get(), &pt).map_err(ctx)?;
    check("open separate: input", input.get(), &want).map_err(ctx)?;
    out.guards_intact().map_err(ctx)
}

fn aad_len(rng: &mut StdRng) -> usize {
    if rng.random_range(0..16) == 0 {
        rng.random_range(0..=4096)
    } else {
        rng.random_range(0..=300)
    }
}

fn sweep(alg: Alg, backend: Backend, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut lengths: Vec<usize> = (0..=SWEEP_MAX).collect();
    for _ in 0..LARGE_LENGTHS {
        lengths.push(rng.random_range(SWEEP_MAX + 1..=LARGE_MAX));
    }
    for len in lengths {
        let a = aad_len(&mut rng);
        one_message(alg, backend, &mut rng, len, a)?;
    }
    Ok(())
}

// ---------------------------------------------------------------- tamper

/// `open` of a tampered message must fail opaquely and leave zeros, both shapes.
#[allow(clippy::too_many_arguments)]
fn must_fail(
    key: &dyn Dyn,
    nonce: &[u8],
    aad: &[u8],
    ct: &[u8],
    tag: &[u8],
    what: &dyn Fn() -> String,
    expect: &Error,
) -> Result<(), String> {
    let mut buf = ct.to_vec();
    let r = key.open_ip(nonce, aad, &mut buf, tag);
    if r.as_ref() != Err(expect) {
        return Err(format!("{}: open in place gave {r:?}", what()));
    }
    if *expect == Error::AuthenticationFailed && buf.iter().any(|&b| b != 0) {
        return Err(format!("{}: failed open in place left data", what()));
    }
    let mut out = vec![0x5a; ct.len()];
    let r = key.open_sep(nonce, aad, ct, tag, &mut out);
    if r.as_ref() != Err(expect) {
        return Err(format!("{}: open separate gave {r:?}", what()));
    }
    if out.iter().any(|&b| b != 0) {
        return Err(format!("{}: failed open separate left data", what()));
    }
    Ok(())
}

fn flip(v: &[u8], bit: usize) -> Vec<u8> {
    let mut w = v.to_vec();
    w[bit / 8] ^= 1 << (bit % 8);
    w
}

fn tamper(alg: Alg, backend: Backend, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let af = Error::AuthenticationFailed;
    for len in TAMPER_LENGTHS {
        let key_bytes = bytes(&mut rng, 32);
        let key = alg.key(&key_bytes, backend).map_err(|e| e.to_string())?;
        let nonce = bytes(&mut rng, alg.nonce_len());
        let aad = bytes(&mut rng, [0, 1, 13, 16, 33][len % 5]);
        let mut ct = bytes(&mut rng, len);
        let tag = key
            .seal_ip(&nonce, &aad, &mut ct)
            .map_err(|e| e.to_string())?;
        let ctx = format!("len {len}, aad {}", aad.len());
        for bit in 0..ct.len() * 8 {
            let bad = flip(&ct, bit);
            must_fail(
                &*key,
                &nonce,
                &aad,
                &bad,
                &tag,
                &|| format!("{ctx}: ciphertext bit {bit}"),
                &af,
            )?;
        }
        for bit in 0..TAG_LEN * 8 {
            let bad = flip(&tag, bit);
            must_fail(
                &*key,
                &nonce,
                &aad,
                &ct,
                &bad,
                &|| format!("{ctx}: tag bit {bit}"),
                &af,
            )?;
        }
        for bit in 0..aad.len() * 8 {
            let bad = flip(&aad, bit);
            must_fail(
                &*key,
                &nonce,
                &bad,
                &ct,
                &tag,
                &|| format!("{ctx}: aad bit {bit}"),
                &af,
            )?;
        }
        for bit in 0..nonce.len() * 8 {
            let bad = flip(&nonce, bit);
            must_fail(
                &*key,
                &bad,
                &aad,
                &ct,
                &tag,
                &|| format!("{ctx}: nonce bit {bit}"),
                &af,
            )?;
        }
        // A different key, and AAD moved into the ciphertext's place.
        let other = alg
            .key(&flip(&key_bytes, rng.random_range(0..256)), backend)
            .map_err(|e| e.to_string())?;
        must_fail(
            &*other,
            &nonce,
            &aad,
            &ct,
            &tag,
            &|| format!("{ctx}: other key"),
            &af,
        )?;
        if !aad.is_empty() {
            let mut longer = aad.clone();
            longer.push(0);
            must_fail(
                &*key,
                &nonce,
                &longer,
                &ct,
                &tag,
                &|| format!("{ctx}: aad + 0"),
                &af,
            )?;
        }
        // Wrong tag lengths are a clear error, not a panic; nothing is released.
        for tlen in [0, 12, 15, 17, 32] {
            let t = vec![0u8; tlen];
            let want = Error::InvalidTagLength {
                expected: "16",
                got: tlen,
            };
            must_fail(
                &*key,
                &nonce,
                &aad,
                &ct,
                &t,
                &|| format!("{ctx}: tag of {tlen} bytes"),
                &want,
            )?;
        }
        // And the untouched message still opens.
        let mut buf = ct.clone();
        key.open_ip(&nonce, &aad, &mut buf, &tag)
            .map_err(|e| format!("{ctx}: untampered open: {e}"))?;
    }
    // Wrong key and nonce lengths.
    for klen in [0, 16, 31, 33] {
        if alg.key(&vec![0; klen], backend).is_ok() {
            return Err(format!("a {klen}-byte key was accepted"));
        }
    }
    let key = alg.key(&[1; 32], backend).map_err(|e| e.to_string())?;
    for nlen in [0, 8, 11, 13, 16, 23, 25] {
        if nlen == alg.nonce_len() {
            continue;
        }
        let mut buf = [0u8; 4];
        match key.seal_ip(&vec![0; nlen], b"", &mut buf) {
            Err(Error::InvalidNonceLength { got, .. }) if got == nlen => {}
            other => return Err(format!("{nlen}-byte nonce: seal gave {other:?}")),
        }
    }
    let mut out = [0u8; 3];
    match key.seal_sep(&vec![0; alg.nonce_len()], b"", &[0; 4], &mut out) {
        Err(Error::LengthMismatch {
            input: 4,
            output: 3,
        }) => Ok(()),
        other => Err(format!("mismatched buffers: seal gave {other:?}")),
    }
}

// ---------------------------------------------------------------- raw ChaCha20

fn chacha20(backend: Backend, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    for len in 0..=2048usize {
        let key = bytes(&mut rng, 32);
        let nonce = bytes(&mut rng, 12);
        // Mostly random counters; every 8th length starts just below 2^32,
        // with room for exactly the blocks needed.
        let blocks = len.div_ceil(64) as u64;
        let counter = if len % 8 == 0 {
            ((1u64 << 32) - blocks) as u32
        } else {
            rng.random_range(0..=u32::MAX - 64)
        };
        let data = bytes(&mut rng, len);
        let mut want = data.clone();
        cp::chacha20_xor(Backend::Soft, &key, &nonce, counter, &mut want)
            .map_err(|e| format!("len {len}: soft: {e}"))?;
        let mut got = data.clone();
        cp::chacha20_xor(backend, &key, &nonce, counter, &mut got)
            .map_err(|e| format!("len {len}: {e}"))?;
        check(&format!("len {len}, counter {counter:#x}"), &got, &want)?;
    }
    // One block too many past 2^32 - 1 is an error, not a wrap.
    let mut buf = [0u8; 65];
    match cp::chacha20_xor(backend, &[0; 32], &[0; 12], u32::MAX, &mut buf) {
        Err(Error::MessageTooLong { limit: 64, .. }) => Ok(()),
        other => Err(format!("counter overflow: {other:?}")),
    }
}

// ---------------------------------------------------------------- harness

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn trial_seed(base: u64, name: &str) -> u64 {
    mix(base
        ^ name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        }))
}

fn base_seed() -> Result<u64, String> {
    match std::env::var("HWCRYPT_TEST_SEED") {
        Ok(s) => {
            let t = s.trim();
            let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => t.parse(),
            };
            parsed.map_err(|e| format!("HWCRYPT_TEST_SEED={s:?}: {e}"))
        }
        Err(_) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            Ok(mix(now ^ u64::from(std::process::id())))
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(Algorithm::ChaCha20Poly1305);
    let seed = base_seed();

    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::ChaCha20Poly1305, &backends));
    match &seed {
        Ok(s) => preamble.push(format!(
            "differential_aead: base seed {s:#018x} (HWCRYPT_TEST_SEED={s:#018x} repeats this run)"
        )),
        Err(e) => preamble.push(format!("differential_aead: {e}")),
    }
    common::announce(&preamble, args.list);

    let mut trials = vec![Trial::test("harness::seed", {
        let seed = seed.clone();
        move || seed.map(|_| ()).map_err(Failed::from)
    })];
    let base = seed.unwrap_or(0);
    let note = move |r: Result<(), String>, s: u64| {
        r.map_err(|e| {
            Failed::from(format!(
                "{e} [trial seed {s:#018x}, base HWCRYPT_TEST_SEED={base:#018x}]"
            ))
        })
    };
    for (backend, runnable) in &backends {
        let backend = *backend;
        let ignored = runnable.is_err();
        for alg in Alg::ALL {
            if backend != Backend::Soft {
                let name = format!("diff::sweep::{}::{backend}", alg.name());
                let s = trial_seed(base, &name);
                trials.push(
                    Trial::test(name, move || note(sweep(alg, backend, s), s))
                        .with_ignored_flag(ignored),
                );
            }
            let name = format!("diff::tamper::{}::{backend}", alg.name());
            let s = trial_seed(base, &name);
            trials.push(
                Trial::test(name, move || note(tamper(alg, backend, s), s))
                    .with_ignored_flag(ignored),
            );
        }
        if backend != Backend::Soft {
            let name = format!("diff::chacha20::{backend}");
            let s = trial_seed(base, &name);
            trials.push(
                Trial::test(name, move || note(chacha20(backend, s), s)).with_ignored_flag(ignored),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
