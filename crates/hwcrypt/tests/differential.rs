//! Differential tests: every non-`soft` backend against `soft`, the portable
//! reference, one trial per test family x key size x backend
//! (`diff::cbc_encrypt::aes192::aesni`).
//!
//! * Every length 0..=4096 (CFB8: 0..=1024; ECB/CBC: multiples of 16) plus
//!   20 random larger lengths, in four buffer shapes: in place, separate
//!   buffers with a garbage-filled output, and both again at offsets 1..=15
//!   from a 64-byte boundary. Bytes around the output must stay untouched and
//!   the input of a separate-buffer call must not change at all.
//! * The streaming modes (and CBC at block boundaries) in random chunks,
//!   including empty and one-byte ones, against the one-shot result.
//! * CTR `seek` to random offsets (near and far), and initial counters just
//!   below the carry points 2^32, 2^64 and 2^128 for both counter widths,
//!   also checked against an independent computation of the counter blocks
//!   (encrypted with ECB on `soft`).
//!
//! The `soft` output for a message is computed once for the longest message
//! of a group of consecutive lengths that share a key and IV; every mode here
//! is prefix-consistent (the first n bytes of the output depend only on the
//! first n bytes of the input), so each shorter length is checked against a
//! prefix of it. The backend under test always runs on exactly the length
//! being tested.
//!
//! Random data comes from a seeded RNG: the base seed is printed at the start
//! and in every failure message; `HWCRYPT_TEST_SEED=0x...` repeats a run.

mod common;

use common::{first_difference, to_hex};
use hwcrypt::Backend;
use hwcrypt::aes::{Aes, Block, CounterWidth, KeySize};
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fmt;

/// Lengths sharing one key, IV and `soft` reference in the length sweeps.
const GROUP: usize = 64;
/// Random lengths above the sweep, per family and key size.
const LARGE_LENGTHS: usize = 20;

// ---------------------------------------------------------------- operations

/// One direction of one mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    EcbEncrypt,
    EcbDecrypt,
    CbcEncrypt,
    CbcDecrypt,
    Ctr(CounterWidth),
    Cfb128Encrypt,
    Cfb128Decrypt,
    Cfb8Encrypt,
    Cfb8Decrypt,
    Ofb,
}

impl Op {
    const SWEPT: [Op; 11] = [
        Op::EcbEncrypt,
        Op::EcbDecrypt,
        Op::CbcEncrypt,
        Op::CbcDecrypt,
        Op::Ctr(CounterWidth::Full128),
        Op::Ctr(CounterWidth::Low32),
        Op::Cfb128Encrypt,
        Op::Cfb128Decrypt,
        Op::Cfb8Encrypt,
        Op::Cfb8Decrypt,
        Op::Ofb,
    ];

    fn name(self) -> &'static str {
        match self {
            Op::EcbEncrypt => "ecb_encrypt",
            Op::EcbDecrypt => "ecb_decrypt",
            Op::CbcEncrypt => "cbc_encrypt",
            Op::CbcDecrypt => "cbc_decrypt",
            Op::Ctr(CounterWidth::Full128) => "ctr_full128",
            Op::Ctr(CounterWidth::Low32) => "ctr_low32",
            Op::Cfb128Encrypt => "cfb128_encrypt",
            Op::Cfb128Decrypt => "cfb128_decrypt",
            Op::Cfb8Encrypt => "cfb8_encrypt",
            Op::Cfb8Decrypt => "cfb8_decrypt",
            Op::Ofb => "ofb",
        }
    }

    /// Lengths must be a multiple of this.
    fn granule(self) -> usize {
        match self {
            Op::EcbEncrypt | Op::EcbDecrypt | Op::CbcEncrypt | Op::CbcDecrypt => 16,
            _ => 1,
        }
    }

    /// Every length 0..=this is tested.
    fn sweep_max(self) -> usize {
        match self {
            // One block encryption per byte: 16x the work.
            Op::Cfb8Encrypt | Op::Cfb8Decrypt => 1024,
            _ => 4096,
        }
    }

    /// Random larger lengths go up to this.
    fn large_max(self) -> usize {
        match self {
            // CFB8 is byte-serial on every backend (no backend kernel), and
            // its `soft` reference is ~16x slower than the other modes.
            Op::Cfb8Encrypt | Op::Cfb8Decrypt => 16 << 10,
            _ => 256 << 10,
        }
    }

    /// Whether calls continue one another (all but ECB).
    fn streams(self) -> bool {
        !matches!(self, Op::EcbEncrypt | Op::EcbDecrypt)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode object for one [`Op`].
enum Machine {
    Ecb(Ecb),
    Cbc(Cbc),
    Ctr(Ctr),
    Cfb128(Cfb128),
    Cfb8(Cfb8),
    Ofb(Ofb),
}

struct Instance {
    op: Op,
    m: Machine,
}

impl Instance {
    fn new(op: Op, aes: Aes, iv: &Block) -> Instance {
        let m = match op {
            Op::EcbEncrypt | Op::EcbDecrypt => Machine::Ecb(Ecb::new(aes)),
            Op::CbcEncrypt | Op::CbcDecrypt => Machine::Cbc(Cbc::new(aes, iv).expect("16-byte IV")),
            Op::Ctr(w) => Machine::Ctr(Ctr::with_width(aes, iv, w).expect("16-byte IV")),
            Op::Cfb128Encrypt | Op::Cfb128Decrypt => {
                Machine::Cfb128(Cfb128::new(aes, iv).expect("16-byte IV"))
            }
            Op::Cfb8Encrypt | Op::Cfb8Decrypt => {
                Machine::Cfb8(Cfb8::new(aes, iv).expect("16-byte IV"))
            }
            Op::Ofb => Machine::Ofb(Ofb::new(aes, iv).expect("16-byte IV")),
        };
        Instance { op, m }
    }

    fn in_place(&mut self, buf: &mut [u8]) -> hwcrypt::Result<()> {
        let enc = matches!(
            self.op,
            Op::EcbEncrypt | Op::CbcEncrypt | Op::Cfb128Encrypt | Op::Cfb8Encrypt
        );
        match &mut self.m {
            Machine::Ecb(m) if enc => m.encrypt(buf),
            Machine::Ecb(m) => m.decrypt(buf),
            Machine::Cbc(m) if enc => m.encrypt(buf),
            Machine::Cbc(m) => m.decrypt(buf),
            Machine::Ctr(m) => m.apply_keystream(buf),
            Machine::Cfb128(m) if enc => {
                m.encrypt(buf);
                Ok(())
            }
            Machine::Cfb128(m) => {
                m.decrypt(buf);
                Ok(())
            }
            Machine::Cfb8(m) if enc => {
                m.encrypt(buf);
                Ok(())
            }
            Machine::Cfb8(m) => {
                m.decrypt(buf);
                Ok(())
            }
            Machine::Ofb(m) => {
                m.apply_keystream(buf);
                Ok(())
            }
        }
    }

    fn to(&mut self, input: &[u8], output: &mut [u8]) -> hwcrypt::Result<()> {
        let enc = matches!(
            self.op,
            Op::EcbEncrypt | Op::CbcEncrypt | Op::Cfb128Encrypt | Op::Cfb8Encrypt
        );
        match &mut self.m {
            Machine::Ecb(m) if enc => m.encrypt_to(input, output),
            Machine::Ecb(m) => m.decrypt_to(input, output),
            Machine::Cbc(m) if enc => m.encrypt_to(input, output),
            Machine::Cbc(m) => m.decrypt_to(input, output),
            Machine::Ctr(m) => m.apply_keystream_to(input, output),
            Machine::Cfb128(m) if enc => m.encrypt_to(input, output),
            Machine::Cfb128(m) => m.decrypt_to(input, output),
            Machine::Cfb8(m) if enc => m.encrypt_to(input, output),
            Machine::Cfb8(m) => m.decrypt_to(input, output),
            Machine::Ofb(m) => m.apply_keystream_to(input, output),
        }
    }

    /// State that the public API exposes after a call: CBC's chaining value,
    /// CTR's next counter block and position.
    fn visible_state(&self) -> Option<String> {
        match &self.m {
            Machine::Cbc(m) => Some(format!("chaining value {}", to_hex(&m.chaining_value()))),
            Machine::Ctr(m) => Some(format!(
                "next counter {}, position {}",
                to_hex(&m.next_counter()),
                m.position()
            )),
            _ => None,
        }
    }
}

/// What [`Instance::visible_state`] must be after one call of `len` bytes.
fn expected_state(op: Op, iv: &Block, input: &[u8], output: &[u8]) -> Option<String> {
    let last_block = |data: &[u8]| -> Block {
        if data.len() < 16 {
            *iv
        } else {
            data[data.len() - 16..].try_into().expect("16 bytes")
        }
    };
    match op {
        Op::CbcEncrypt => Some(format!("chaining value {}", to_hex(&last_block(output)))),
        Op::CbcDecrypt => Some(format!("chaining value {}", to_hex(&last_block(input)))),
        Op::Ctr(w) => {
            let blocks_used = input.len().div_ceil(16) as u128;
            Some(format!(
                "next counter {}, position {}",
                to_hex(&counter_at(iv, w, blocks_used)),
                input.len()
            ))
        }
        _ => None,
    }
}

/// The counter block of keystream block `n`, computed independently of the
/// library from the rules of SP 800-38A (Full128) and GCM's inc32 (Low32).
fn counter_at(initial: &Block, width: CounterWidth, n: u128) -> Block {
    match width {
        CounterWidth::Full128 => u128::from_be_bytes(*initial).wrapping_add(n).to_be_bytes(),
        CounterWidth::Low32 => {
            let mut c = *initial;
            let low = u32::from_be_bytes([c[12], c[13], c[14], c[15]]);
            // Only n mod 2^32 matters for a 32-bit counter.
            let low = low.wrapping_add(n as u32);
            c[12..].copy_from_slice(&low.to_be_bytes());
            c
        }
    }
}

/// Keystream bytes `offset..offset + len`: the counter blocks from
/// [`counter_at`], encrypted with ECB on `soft`.
fn independent_keystream(
    soft: &Ecb,
    initial: &Block,
    width: CounterWidth,
    offset: u128,
    len: usize,
) -> Vec<u8> {
    let first = offset / 16;
    let skip = (offset % 16) as usize;
    let blocks = (skip + len).div_ceil(16);
    let mut buf = Vec::with_capacity(blocks * 16);
    for i in 0..blocks {
        buf.extend_from_slice(&counter_at(initial, width, first.wrapping_add(i as u128)));
    }
    soft.encrypt(&mut buf).expect("whole blocks");
    buf.drain(..skip);
    buf.truncate(len);
    buf
}

// ---------------------------------------------------------------- buffers

/// Where the data of one call lives.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// In place, 64-byte aligned.
    InPlace,
    /// Separate buffers, both 64-byte aligned, output prefilled with garbage.
    To,
    /// In place at this offset from a 64-byte boundary.
    InPlaceAt(usize),
    /// Separate buffers at these offsets (input, output).
    ToAt(usize, usize),
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::InPlace => f.write_str("in-place"),
            Shape::To => f.write_str("separate(garbage-prefilled output)"),
            Shape::InPlaceAt(o) => write!(f, "in-place(unaligned +{o})"),
            Shape::ToAt(i, o) => write!(f, "separate(unaligned input +{i}, output +{o})"),
        }
    }
}

/// The four shapes for length number `i` of a sweep; offsets cycle through 1..=15.
fn shapes(i: usize) -> [Shape; 4] {
    [
        Shape::InPlace,
        Shape::To,
        Shape::InPlaceAt(1 + i % 15),
        Shape::ToAt(1 + (i * 7 + 3) % 15, 1 + (i * 11 + 8) % 15),
    ]
}

/// `len` bytes at `misalign` bytes past a 64-byte boundary inside a larger
/// buffer whose other bytes are random, remembered to detect stray writes.
struct Placed {
    buf: Vec<u8>,
    start: usize,
    len: usize,
    snapshot: Vec<u8>,
}

impl Placed {
    fn new(rng: &mut StdRng, content: Option<&[u8]>, len: usize, misalign: usize) -> Placed {
        let mut buf = vec![0u8; len + 64 + misalign + 48];
        rng.fill(&mut buf[..]);
        let start = buf.as_ptr().align_offset(64) + misalign;
        if let Some(c) = content {
            buf[start..start + len].copy_from_slice(c);
        }
        let snapshot = buf.clone();
        Placed {
            buf,
            start,
            len,
            snapshot,
        }
    }

    fn data(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }

    fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }

    /// Bytes before and after the data are as they were.
    fn check_surroundings(&self) -> Result<(), String> {
        let end = self.start + self.len;
        if let Some(i) = (0..self.start).find(|&i| self.buf[i] != self.snapshot[i]) {
            return Err(format!("wrote {} bytes before the output", self.start - i));
        }
        if let Some(i) = (end..self.buf.len())
            .rev()
            .find(|&i| self.buf[i] != self.snapshot[i])
        {
            return Err(format!(
                "wrote {} bytes past the end of the output",
                i + 1 - end
            ));
        }
        Ok(())
    }

    /// Nothing at all changed (for inputs of separate-buffer calls).
    fn check_unchanged(&self) -> Result<(), String> {
        match self
            .buf
            .iter()
            .zip(&self.snapshot)
            .position(|(a, b)| a != b)
        {
            None => Ok(()),
            Some(i) => Err(format!(
                "the input buffer was modified (byte {} relative to the input start)",
                i as isize - self.start as isize
            )),
        }
    }
}

fn random_block(rng: &mut StdRng) -> Block {
    let mut b = [0; 16];
    rng.fill(&mut b);
    b
}

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = vec![0; len];
    rng.fill(&mut v[..]);
    v
}

/// Random chunk sizes adding up to `len` (a multiple of `granule`), with
/// empty and one-granule chunks among them.
fn random_chunks(rng: &mut StdRng, len: usize, granule: usize) -> Vec<usize> {
    let mut left = len / granule;
    let mut chunks = Vec::new();
    if rng.random_bool(0.3) {
        chunks.push(0);
    }
    while left > 0 {
        let n = match rng.random_range(0..100) {
            0..10 => 0,
            10..30 => 1,
            30..65 => rng.random_range(2..=33),
            65..90 => rng.random_range(34..=600),
            _ => left,
        }
        .min(left);
        chunks.push(n * granule);
        left -= n;
    }
    if rng.random_bool(0.3) {
        chunks.push(0);
    }
    chunks
}

fn chunk_summary(chunks: &[usize]) -> String {
    if chunks.len() <= 24 {
        format!("{chunks:?}")
    } else {
        format!("{:?}... ({} chunks)", &chunks[..24], chunks.len())
    }
}

// ---------------------------------------------------------------- context

/// Names everything a failure message must: backend, mode, key size, and the
/// seeds; each check adds the length and shape.
struct Ctx {
    backend: Backend,
    family: &'static str,
    key_size: KeySize,
    base_seed: u64,
    seed: u64,
}

impl Ctx {
    fn fail(
        &self,
        len: usize,
        shape: &dyn fmt::Display,
        key: &[u8],
        iv: &[u8],
        what: &str,
    ) -> String {
        format!(
            "{} vs soft: {} AES-{} len={len} shape={shape}: {what} [key={} iv={} trial seed={:#018x}, \
             HWCRYPT_TEST_SEED={:#018x}]",
            self.backend,
            self.family,
            self.key_size.bits(),
            to_hex(key),
            to_hex(iv),
            self.seed,
            self.base_seed
        )
    }

    fn rng(&self) -> StdRng {
        StdRng::seed_from_u64(self.seed)
    }

    fn key(&self, rng: &mut StdRng) -> Vec<u8> {
        random_bytes(rng, self.key_size.key_len())
    }

    /// The key on the backend under test (and that it really is that backend).
    fn backend_aes(&self, key: &[u8]) -> Result<Aes, String> {
        let aes = Aes::with_backend(key, self.backend).map_err(|e| {
            format!(
                "Aes::with_backend({}) for {} AES-{}: {e}",
                self.backend,
                self.family,
                self.key_size.bits()
            )
        })?;
        if aes.backend() != self.backend {
            return Err(format!("asked for {}, got {}", self.backend, aes.backend()));
        }
        Ok(aes)
    }
}

fn soft_aes(key: &[u8]) -> Aes {
    Aes::with_backend(key, Backend::Soft).expect("soft runs everywhere")
}

/// `op` on `soft`, one call.
fn reference(op: Op, key: &[u8], iv: &Block, input: &[u8]) -> Vec<u8> {
    let mut buf = input.to_vec();
    Instance::new(op, soft_aes(key), iv)
        .in_place(&mut buf)
        .expect("reference call");
    buf
}

// ---------------------------------------------------------------- checks

/// One call of `op` on the backend in `shape`, against `want`.
#[allow(clippy::too_many_arguments)]
fn check_shape(
    ctx: &Ctx,
    op: Op,
    aes: &Aes,
    key: &[u8],
    iv: &Block,
    input: &[u8],
    want: &[u8],
    shape: Shape,
    rng: &mut StdRng,
) -> Result<(), String> {
    let len = input.len();
    let fail = |what: &str| ctx.fail(len, &shape, key, iv, what);
    let mut inst = Instance::new(op, aes.clone(), iv);
    let got = match shape {
        Shape::InPlace | Shape::InPlaceAt(_) => {
            let misalign = if let Shape::InPlaceAt(o) = shape {
                o
            } else {
                0
            };
            let mut p = Placed::new(rng, Some(input), len, misalign);
            inst.in_place(p.data_mut())
                .map_err(|e| fail(&format!("error {e}")))?;
            p.check_surroundings().map_err(|e| fail(&e))?;
            p.data().to_vec()
        }
        Shape::To | Shape::ToAt(..) => {
            let (a, b) = if let Shape::ToAt(a, b) = shape {
                (a, b)
            } else {
                (0, 0)
            };
            let src = Placed::new(rng, Some(input), len, a);
            let mut dst = Placed::new(rng, None, len, b);
            inst.to(src.data(), dst.data_mut())
                .map_err(|e| fail(&format!("error {e}")))?;
            src.check_unchanged().map_err(|e| fail(&e))?;
            dst.check_surroundings().map_err(|e| fail(&e))?;
            dst.data().to_vec()
        }
    };
    if let Some(d) = first_difference(&got, want) {
        return Err(fail(&d));
    }
    if inst.visible_state() != expected_state(op, iv, input, want) {
        return Err(fail(&format!(
            "after the call: {:?}, expected {:?}",
            inst.visible_state(),
            expected_state(op, iv, input, want)
        )));
    }
    Ok(())
}

/// The message in random chunks (each call randomly in place or into a
/// separate buffer) on one backend object, against `want`.
#[allow(clippy::too_many_arguments)]
fn check_chunks(
    ctx: &Ctx,
    op: Op,
    aes: &Aes,
    key: &[u8],
    iv: &Block,
    input: &[u8],
    want: &[u8],
    rng: &mut StdRng,
) -> Result<(), String> {
    let chunks = random_chunks(rng, input.len(), op.granule());
    let shape = format!("chunks {}", chunk_summary(&chunks));
    let mut inst = Instance::new(op, aes.clone(), iv);
    let mut out = random_bytes(rng, input.len());
    let mut pos = 0;
    for &n in &chunks {
        let r = if rng.random_bool(0.5) {
            out[pos..pos + n].copy_from_slice(&input[pos..pos + n]);
            inst.in_place(&mut out[pos..pos + n])
        } else {
            inst.to(&input[pos..pos + n], &mut out[pos..pos + n])
        };
        r.map_err(|e| {
            ctx.fail(
                input.len(),
                &shape,
                key,
                iv,
                &format!("chunk at {pos}: error {e}"),
            )
        })?;
        pos += n;
    }
    if let Some(d) = first_difference(&out, want) {
        return Err(ctx.fail(input.len(), &shape, key, iv, &d));
    }
    Ok(())
}

/// Every length 0..=sweep_max, then the random large lengths.
fn sweep(ctx: &Ctx, op: Op) -> Result<(), String> {
    let mut rng = ctx.rng();
    let g = op.granule();
    let max = op.sweep_max();
    let mut index = 0;
    let mut start = 0;
    while start <= max {
        let end = (start + GROUP - 1).min(max);
        let key = ctx.key(&mut rng);
        let iv = random_block(&mut rng);
        let aes = ctx.backend_aes(&key)?;
        let msg = random_bytes(&mut rng, end - end % g);
        let want = reference(op, &key, &iv, &msg);
        for len in (start..=end).filter(|l| l % g == 0) {
            for shape in shapes(index) {
                check_shape(
                    ctx,
                    op,
                    &aes,
                    &key,
                    &iv,
                    &msg[..len],
                    &want[..len],
                    shape,
                    &mut rng,
                )?;
            }
            if op.streams() {
                check_chunks(
                    ctx,
                    op,
                    &aes,
                    &key,
                    &iv,
                    &msg[..len],
                    &want[..len],
                    &mut rng,
                )?;
            }
            index += 1;
        }
        start = end + 1;
    }
    for _ in 0..LARGE_LENGTHS {
        let len = rng.random_range(max + 1..=op.large_max()) / g * g;
        let key = ctx.key(&mut rng);
        let iv = random_block(&mut rng);
        let aes = ctx.backend_aes(&key)?;
        let msg = random_bytes(&mut rng, len);
        let want = reference(op, &key, &iv, &msg);
        for shape in shapes(index) {
            check_shape(ctx, op, &aes, &key, &iv, &msg, &want, shape, &mut rng)?;
        }
        if op.streams() {
            check_chunks(ctx, op, &aes, &key, &iv, &msg, &want, &mut rng)?;
        }
        index += 1;
    }
    Ok(())
}

/// Single blocks through `Aes::encrypt_block` / `decrypt_block`.
fn blocks(ctx: &Ctx) -> Result<(), String> {
    let mut rng = ctx.rng();
    for _ in 0..200 {
        let key = ctx.key(&mut rng);
        let aes = ctx.backend_aes(&key)?;
        let soft = soft_aes(&key);
        for _ in 0..8 {
            let pt = random_block(&mut rng);
            let (mut got, mut want) = (pt, pt);
            aes.encrypt_block(&mut got);
            soft.encrypt_block(&mut want);
            let shape = format!("encrypt_block({})", to_hex(&pt));
            if let Some(d) = first_difference(&got, &want) {
                return Err(ctx.fail(16, &shape, &key, &[], &d));
            }
            aes.decrypt_block(&mut got);
            if got != pt {
                let shape = format!("decrypt_block(encrypt_block({}))", to_hex(&pt));
                return Err(ctx.fail(16, &shape, &key, &[], &format!("gave {}", to_hex(&got))));
            }
            let ct = random_block(&mut rng);
            let (mut got, mut want) = (ct, ct);
            aes.decrypt_block(&mut got);
            soft.decrypt_block(&mut want);
            let shape = format!("decrypt_block({})", to_hex(&ct));
            if let Some(d) = first_difference(&got, &want) {
                return Err(ctx.fail(16, &shape, &key, &[], &d));
            }
        }
    }
    Ok(())
}

/// `seek` on one CTR object to random offsets, against the `soft` keystream
/// (near) and the independent computation (far).
fn ctr_seek(ctx: &Ctx, width: CounterWidth) -> Result<(), String> {
    let mut rng = ctx.rng();
    for round in 0..24 {
        let key = ctx.key(&mut rng);
        let mut iv = random_block(&mut rng);
        if round % 2 == 1 {
            // Put a wrap of the low 32 bits within reach.
            let low = u32::MAX - rng.random_range(0..300u32);
            iv[12..].copy_from_slice(&low.to_be_bytes());
        }
        let aes = ctx.backend_aes(&key)?;
        let soft_ecb = Ecb::new(soft_aes(&key));
        let total = 4096 + rng.random_range(0..4096);
        let keystream = reference(Op::Ctr(width), &key, &iv, &vec![0; total]);
        let independent = independent_keystream(&soft_ecb, &iv, width, 0, total);
        if let Some(d) = first_difference(&keystream, &independent) {
            return Err(ctx.fail(
                total,
                &"soft one-shot vs independent counters",
                &key,
                &iv,
                &format!("the reference itself is wrong: {d}"),
            ));
        }
        let mut ctr = Ctr::with_width(aes.clone(), &iv, width).map_err(|e| e.to_string())?;
        for _ in 0..64 {
            let fresh = rng.random_bool(0.25);
            let offset = rng.random_range(0..=total);
            let cap = if rng.random_bool(0.2) { total } else { 80 };
            let n = rng.random_range(0..=(total - offset).min(cap));
            let mut fresh_ctr;
            let c = if fresh {
                fresh_ctr = Ctr::with_width(aes.clone(), &iv, width).map_err(|e| e.to_string())?;
                &mut fresh_ctr
            } else {
                &mut ctr
            };
            let shape = format!(
                "seek({offset}) on a {} Ctr, then {n} bytes",
                if fresh { "fresh" } else { "used" }
            );
            c.seek(offset as u128);
            if c.position() != offset as u128 {
                return Err(ctx.fail(
                    n,
                    &shape,
                    &key,
                    &iv,
                    &format!("position() = {} after seek", c.position()),
                ));
            }
            let msg = random_bytes(&mut rng, n);
            let mut got = vec![0; n];
            if rng.random_bool(0.5) {
                got.copy_from_slice(&msg);
                c.apply_keystream(&mut got).map_err(|e| e.to_string())?;
            } else {
                c.apply_keystream_to(&msg, &mut got)
                    .map_err(|e| e.to_string())?;
            }
            let want: Vec<u8> = msg
                .iter()
                .zip(&keystream[offset..offset + n])
                .map(|(m, k)| m ^ k)
                .collect();
            if let Some(d) = first_difference(&got, &want) {
                return Err(ctx.fail(n, &shape, &key, &iv, &d));
            }
            if c.position() != (offset + n) as u128 {
                return Err(ctx.fail(
                    n,
                    &shape,
                    &key,
                    &iv,
                    &format!("position() = {} afterwards", c.position()),
                ));
            }
        }
        // Far offsets: past a low-32-bit wrap of the block counter (2^36
        // bytes), past 2^64 blocks, and anywhere in the 128-bit range.
        for far in [
            (1u128 << 36) - 40,
            (1u128 << 36) + rng.random_range(0..1000u128),
            (1u128 << 68) - rng.random_range(1..2000u128),
            rng.random::<u128>(),
            u128::MAX - rng.random_range(0..100u128),
        ] {
            let room = u128::MAX - far;
            let n = if room < 200 {
                room as usize
            } else {
                rng.random_range(0..=200)
            };
            let shape = format!("seek({far:#x}), then {n} bytes");
            ctr.seek(far);
            let mut got = vec![0; n];
            let applied = ctr.apply_keystream(&mut got);
            // 32-bit counters serve 2^32 blocks from the initial counter;
            // past that the keystream would repeat, and the call must fail
            // without touching the buffer (an empty call uses no keystream
            // and succeeds anywhere).
            if width == CounterWidth::Low32 && n > 0 && far + n as u128 > 1u128 << 36 {
                if applied != Err(hwcrypt::Error::KeystreamExhausted) || got.iter().any(|&b| b != 0)
                {
                    return Err(ctx.fail(
                        n,
                        &shape,
                        &key,
                        &iv,
                        &format!(
                            "past the 32-bit counter: {applied:?}, buffer changed: {}",
                            got.iter().any(|&b| b != 0)
                        ),
                    ));
                }
                continue;
            }
            applied.map_err(|e| ctx.fail(n, &shape, &key, &iv, &e.to_string()))?;
            let want = independent_keystream(&soft_ecb, &iv, width, far, n);
            if let Some(d) = first_difference(&got, &want) {
                return Err(ctx.fail(n, &shape, &key, &iv, &d));
            }
        }
    }
    Ok(())
}

/// Initial counters just below the carry points, for one counter width:
/// the low 32 bits at 2^32 - k, the low 64 bits at 2^64 - k, and all 128
/// bits at 2^128 - k, for k in 1..=40, over lengths spanning the carry.
fn ctr_carry(ctx: &Ctx, width: CounterWidth) -> Result<(), String> {
    let mut rng = ctx.rng();
    let op = Op::Ctr(width);
    for (point, bits) in [
        ("low 32 bits", 32u32),
        ("low 64 bits", 64),
        ("all 128 bits", 128),
    ] {
        for k in 1..=40usize {
            let key = ctx.key(&mut rng);
            let aes = ctx.backend_aes(&key)?;
            let soft_ecb = Ecb::new(soft_aes(&key));
            let mut iv = random_block(&mut rng);
            let below = (k as u128).wrapping_neg(); // 2^128 - k
            match bits {
                32 => iv[12..].copy_from_slice(&(below as u32).to_be_bytes()),
                64 => iv[8..].copy_from_slice(&(below as u64).to_be_bytes()),
                _ => iv = below.to_be_bytes(),
            }
            let carry_at = 16 * k; // byte offset of the first block after the carry
            let lens = [
                carry_at - 1,
                carry_at,
                carry_at + 1,
                carry_at + 31,
                carry_at + 16 * 9 + 3,
                carry_at + 16 * rng.random_range(10..80) + rng.random_range(0..16),
            ];
            for len in lens {
                let msg = random_bytes(&mut rng, len);
                let keystream = independent_keystream(&soft_ecb, &iv, width, 0, len);
                let want: Vec<u8> = msg.iter().zip(&keystream).map(|(m, k)| m ^ k).collect();
                let tag = |s: &str| format!("{s}, counter {point} at 2^{bits} - {k}");
                let soft = reference(op, &key, &iv, &msg);
                if let Some(d) = first_difference(&soft, &want) {
                    return Err(ctx.fail(
                        len,
                        &tag("soft one-shot vs independent counters"),
                        &key,
                        &iv,
                        &format!("the reference itself is wrong: {d}"),
                    ));
                }
                for shape in [
                    Shape::InPlace,
                    Shape::InPlaceAt(1 + k % 15),
                    Shape::ToAt(1 + (k * 7) % 15, 1 + (k * 3) % 15),
                ] {
                    check_shape(ctx, op, &aes, &key, &iv, &msg, &want, shape, &mut rng)
                        .map_err(|e| tag(&e))?;
                }
                check_chunks(ctx, op, &aes, &key, &iv, &msg, &want, &mut rng)
                    .map_err(|e| tag(&e))?;
                let offset = rng.random_range(carry_at.saturating_sub(40)..=len);
                let mut c = Ctr::with_width(aes.clone(), &iv, width).map_err(|e| e.to_string())?;
                c.seek(offset as u128);
                let mut got = msg[offset..].to_vec();
                c.apply_keystream(&mut got).map_err(|e| e.to_string())?;
                if let Some(d) = first_difference(&got, &want[offset..]) {
                    return Err(ctx.fail(len, &tag(&format!("seek({offset})")), &key, &iv, &d));
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- main

/// A 64-bit mix (splitmix64 finaliser).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn trial_seed(base: u64, name: &str) -> u64 {
    // FNV-1a of the trial name, mixed with the base seed.
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    mix(base ^ h)
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

/// The test families, each run for every key size.
#[derive(Clone, Copy, Debug)]
enum Family {
    Blocks,
    Sweep(Op),
    CtrSeek(CounterWidth),
    CtrCarry(CounterWidth),
}

impl Family {
    fn all() -> Vec<Family> {
        let mut v = vec![Family::Blocks];
        v.extend(Op::SWEPT.map(Family::Sweep));
        for w in [CounterWidth::Full128, CounterWidth::Low32] {
            v.push(Family::CtrSeek(w));
            v.push(Family::CtrCarry(w));
        }
        v
    }

    fn name(self) -> &'static str {
        match self {
            Family::Blocks => "blocks",
            Family::Sweep(op) => op.name(),
            Family::CtrSeek(CounterWidth::Full128) => "ctr_seek_full128",
            Family::CtrSeek(CounterWidth::Low32) => "ctr_seek_low32",
            Family::CtrCarry(CounterWidth::Full128) => "ctr_carry_full128",
            Family::CtrCarry(CounterWidth::Low32) => "ctr_carry_low32",
        }
    }

    fn run(self, ctx: &Ctx) -> Result<(), String> {
        match self {
            Family::Blocks => blocks(ctx),
            Family::Sweep(op) => sweep(ctx, op),
            Family::CtrSeek(w) => ctr_seek(ctx, w),
            Family::CtrCarry(w) => ctr_carry(ctx, w),
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(hwcrypt::registry::Algorithm::Aes);
    let seed = base_seed();

    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(
        hwcrypt::registry::Algorithm::Aes,
        &backends,
    ));
    match &seed {
        Ok(s) => preamble.push(format!(
            "differential: base seed {s:#018x} (HWCRYPT_TEST_SEED={s:#018x} repeats this run)"
        )),
        Err(e) => preamble.push(format!("differential: {e}")),
    }
    common::announce(&preamble, args.list);

    let soft_ok = backends
        .iter()
        .any(|(b, r)| *b == Backend::Soft && r.is_ok());
    let mut trials = vec![
        Trial::test("harness::cpu_features_usable", || {
            hwcrypt::cpu::features()
                .map(|_| ())
                .map_err(|e| Failed::from(format!("every backend is unusable: {e}")))
        }),
        Trial::test("harness::seed", {
            let seed = seed.clone();
            move || seed.map(|_| ()).map_err(Failed::from)
        }),
        Trial::test("harness::soft_reference_runnable", move || {
            if soft_ok {
                Ok(())
            } else {
                Err("the soft reference backend cannot run, so nothing is compared".into())
            }
        }),
    ];
    let base = seed.unwrap_or(0);
    for family in Family::all() {
        for key_size in KeySize::ALL {
            for (backend, runnable) in &backends {
                if *backend == Backend::Soft {
                    continue;
                }
                let backend = *backend;
                let name = format!("diff::{}::aes{}::{backend}", family.name(), key_size.bits());
                let ctx = Ctx {
                    backend,
                    family: family.name(),
                    key_size,
                    base_seed: base,
                    seed: trial_seed(base, &name),
                };
                trials.push(
                    Trial::test(name, move || family.run(&ctx).map_err(Failed::from))
                        .with_ignored_flag(runnable.is_err() || !soft_ok),
                );
            }
        }
    }

    libtest_mimic::run(&args, trials).exit();
}
