//! The `aesni` AES-GCM backend: AES-NI and PCLMULQDQ on xmm registers, CTR
//! and GHASH in one stitched pass.
//!
//! Per iteration, eight counter blocks go through AES while the GHASH of
//! eight ciphertext blocks runs between the rounds: on encryption the eight
//! written by the previous iteration (the first eight are encrypted alone,
//! the last eight hashed alone), on decryption the eight being decrypted.
//! The eight blocks are multiplied by the precomputed `H^8..H^1` without
//! reduction (Karatsuba: three `pclmulqdq` per block), the 256-bit products
//! summed, and reduced once per eight blocks. AES (4-cycle latency, two per
//! cycle) and PCLMULQDQ share the vector pipes, so the multiplications fill
//! the slots the eight independent AES chains leave free.
//!
//! Representation: a block is byte-reversed on load (`pshufb`), so the xmm
//! lane holds the big-endian integer of the block, in which GHASH's
//! coefficient of `x^0` is bit 127 ("bit reflected"). The carry-less product
//! of two reflected values is the reflected product times `x`; storing the
//! key powers pre-multiplied by `x^-1` cancels that, so no shift is needed.
//! Reduction modulo `x^128 + x^7 + x^2 + x + 1` folds the low 64 bits twice
//! with one `pclmulqdq` each by `0xc2 << 56` (`x^128 = x^7 + x^2 + x + 1`,
//! reflected and shifted).
//!
//! A [`Key`] can only be made after `aes`, `pclmulqdq` and `ssse3` were
//! detected, so every method may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use crate::aes::{Block, aesni};
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::GCM_AESNI_FEATURES;
use crate::secret::{Schedule, SecretBox};
use core::arch::x86_64::*;

/// Blocks per stitched iteration: eight AES chains cover the `aesenc`
/// latency (4 cycles x 2 per cycle), and eight products per reduction
/// amortise it. 8 states, a round key, 3 accumulators and the GHASH operand
/// nearly fill the 16 xmm registers; LLVM keeps the key powers on the stack
/// (they are memory operands of `pclmulqdq`, which costs nothing extra).
const BATCH: usize = 8;

/// Everything the kernels read, aligned so round keys and key powers load
/// with aligned loads (and to 32 bytes, so that where the CPU has AVX the
/// key's home is wiped with 32-byte stores: [`SecretBox`]).
#[derive(Clone)]
#[repr(C, align(32))]
struct Table {
    /// AES encryption round keys (`rounds + 1` used).
    rk: [Block; 15],
    /// `h[k - 1]` is `H^k * x^-1`, reflected, as a little-endian lane.
    h: [Block; BATCH],
    /// `hk[k - 1]`: the XOR of the two 64-bit halves of `h[k - 1]`, in the
    /// low half (the Karatsuba middle operand).
    hk: [Block; BATCH],
}

/// The `aesni` AES-GCM key. It lives in a [`SecretBox`] (made by
/// [`Key::boxed`] after the features were detected), which wipes it on drop.
pub(crate) struct Key {
    t: Table,
    rounds: usize,
}

// SAFETY: byte arrays and an integer: all-zero is valid, no drop glue, no
// pointers. A zeroed key is only made after detection (`boxed`).
unsafe impl Schedule for Key {}

impl Key {
    /// Expands `key` in a zeroed heap home, in place; `None` unless the CPU
    /// has AES-NI, PCLMULQDQ and SSSE3, or for a key length other than 16,
    /// 24 or 32.
    #[inline(never)]
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(GCM_AESNI_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: the features were detected just above.
        let mut k = unsafe { SecretBox::<Key>::zeroed() };
        k.init(key);
        Some(k)
    }

    /// Fills a zeroed key in place: the encryption round keys expanded
    /// straight into the table (GCM needs no decryption schedule), then the
    /// powers of H, also straight into the table. `key` is 16, 24 or 32
    /// bytes (the callers check).
    pub(crate) fn init(&mut self, key: &[u8]) {
        assert!(matches!(key.len(), 16 | 24 | 32), "an AES key length");
        // SAFETY: a `Key` exists only after the features were detected
        // (AES-NI, PCLMULQDQ and SSSE3 among them); the length is checked
        // above.
        unsafe {
            self.rounds = aesni::expand_encryption(key, &mut self.t.rk);
            match self.rounds {
                10 => table_powers::<10>(&mut self.t),
                12 => table_powers::<12>(&mut self.t),
                _ => table_powers::<14>(&mut self.t),
            }
        }
    }

    /// Number of AES rounds (10, 12 or 14).
    pub(super) fn rounds(&self) -> usize {
        self.rounds
    }

    /// The `rounds + 1` AES encryption round keys (for the wide backend).
    pub(super) fn round_keys(&self) -> &[Block] {
        &self.t.rk[..=self.rounds]
    }

    /// `H^1..H^N` times `x^-1` as little-endian lanes (`p[k - 1] = H^k`),
    /// for the wide backend; the caller wipes them.
    pub(super) fn powers_n<const N: usize>(&self) -> [Block; N] {
        // SAFETY: a `Key` exists only if PCLMULQDQ was detected.
        unsafe { powers_n(&self.t) }
    }

    /// `E(K, c)` for the counter block whose big-endian integer is `c`.
    pub(crate) fn encrypt_counter(&self, c: u128) -> Block {
        // SAFETY: a `Key` exists only if the features were detected.
        unsafe {
            match self.rounds() {
                10 => encrypt_counter::<10>(&self.t, c),
                12 => encrypt_counter::<12>(&self.t, c),
                _ => encrypt_counter::<14>(&self.t, c),
            }
        }
    }

    /// Absorbs the block whose big-endian integer is `x`.
    pub(crate) fn absorb(&self, acc: &mut Block, x: u128) {
        // SAFETY: a `Key` exists only if the features were detected.
        unsafe { absorb(&self.t, acc, x) }
    }

    /// Absorbs `data`, the last block zero-padded.
    pub(crate) fn ghash(&self, acc: &mut Block, data: &[u8]) {
        // SAFETY: a `Key` exists only if the features were detected.
        unsafe { ghash(&self.t, acc, data) }
    }

    #[inline]
    pub(crate) fn encrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        // SAFETY: a `Key` exists only if the features were detected.
        unsafe {
            match self.rounds() {
                10 => seal::<10>(&self.t, counter, acc, buf),
                12 => seal::<12>(&self.t, counter, acc, buf),
                _ => seal::<14>(&self.t, counter, acc, buf),
            }
        }
    }

    #[inline]
    pub(crate) fn decrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        // SAFETY: a `Key` exists only if the features were detected.
        unsafe {
            match self.rounds() {
                10 => open::<10>(&self.t, counter, acc, buf),
                12 => open::<12>(&self.t, counter, acc, buf),
                _ => open::<14>(&self.t, counter, acc, buf),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers: safe `#[target_feature]` functions that inline
// into the kernels.

/// A 128-bit integer as an xmm lane.
#[inline]
#[target_feature(enable = "sse2")]
fn lane(v: u128) -> __m128i {
    _mm_set_epi64x((v >> 64) as i64, v as i64)
}

#[inline]
#[target_feature(enable = "sse2")]
fn load(block: &Block) -> __m128i {
    // SAFETY: `block` is 16 readable bytes; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn store(block: &mut Block, x: __m128i) {
    // SAFETY: `block` is 16 writable bytes; unaligned stores are allowed.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), x) }
}

/// Block `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `16 * i .. 16 * (i + 1)` of `p` must be readable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn load_at(p: *const u8, i: usize) -> __m128i {
    // SAFETY: the caller guarantees the 16 bytes are readable.
    unsafe { _mm_loadu_si128(p.add(16 * i).cast()) }
}

/// Stores `x` as block `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `16 * i .. 16 * (i + 1)` of `p` must be writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn store_at(p: *mut u8, i: usize, x: __m128i) {
    // SAFETY: the caller guarantees the 16 bytes are writable.
    unsafe { _mm_storeu_si128(p.add(16 * i).cast(), x) }
}

/// Reverses the bytes: a block <-> its big-endian integer as a lane.
#[inline]
#[target_feature(enable = "ssse3")]
fn bswap(x: __m128i) -> __m128i {
    _mm_shuffle_epi8(
        x,
        _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
    )
}

/// `inc32` on a byte-reversed counter block: the low dword is the counter.
#[inline]
#[target_feature(enable = "sse2")]
fn inc32(c: __m128i) -> __m128i {
    _mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 1))
}

/// Round key `i`. Volatile, as in the AES kernels: otherwise LLVM hoists
/// all round keys (and key powers) out of the loop and spills the states.
#[inline]
#[target_feature(enable = "sse2")]
fn rk(t: &Table, i: usize) -> __m128i {
    // SAFETY: `t.rk[i]` is 16 readable bytes, 16-byte aligned (`Table` is
    // `align(16)`, `rk` is its first field and a `Block` is 16 bytes).
    unsafe { core::ptr::read_volatile(t.rk[i].as_ptr().cast::<__m128i>()) }
}

/// The XOR of the two halves of `h`, in the low half.
#[inline]
#[target_feature(enable = "sse2")]
fn karatsuba_operand(h: __m128i) -> __m128i {
    _mm_xor_si128(h, _mm_shuffle_epi32::<0x4e>(h))
}

/// Unreduced 256-bit GHASH sum in Karatsuba form: `lo`, `mid` (still to be
/// corrected by `lo ^ hi`), `hi`.
#[derive(Clone, Copy)]
pub(super) struct Acc {
    pub(super) lo: __m128i,
    pub(super) mid: __m128i,
    pub(super) hi: __m128i,
}

impl Acc {
    #[inline]
    #[target_feature(enable = "sse2")]
    fn zero() -> Acc {
        Acc {
            lo: _mm_setzero_si128(),
            mid: _mm_setzero_si128(),
            hi: _mm_setzero_si128(),
        }
    }

    /// Adds `x * h` (`hk` = `karatsuba_operand(h)`), unreduced.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    fn mul_add(&mut self, x: __m128i, h: __m128i, hk: __m128i) {
        self.lo = _mm_xor_si128(self.lo, _mm_clmulepi64_si128::<0x00>(x, h));
        self.hi = _mm_xor_si128(self.hi, _mm_clmulepi64_si128::<0x11>(x, h));
        let xk = karatsuba_operand(x);
        self.mid = _mm_xor_si128(self.mid, _mm_clmulepi64_si128::<0x00>(xk, hk));
    }

    /// Adds `x * H^k` with the table's powers (`1 <= k <= 8`).
    #[inline]
    #[target_feature(enable = "pclmulqdq,ssse3")]
    fn mul_add_power(&mut self, t: &Table, x: __m128i, k: usize) {
        // SAFETY: 16 readable bytes each, 16-byte aligned (`Table` is
        // `align(16)` and made of 16-byte blocks).
        let (h, hk) = unsafe {
            (
                _mm_load_si128(t.h[k - 1].as_ptr().cast()),
                _mm_load_si128(t.hk[k - 1].as_ptr().cast()),
            )
        };
        self.mul_add(x, h, hk);
    }

    /// The sum reduced modulo the GHASH polynomial.
    #[inline]
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub(super) fn reduce(self) -> __m128i {
        let poly = _mm_set_epi64x(0xc200_0000_0000_0000_u64 as i64, 1);
        let mid = _mm_xor_si128(self.mid, _mm_xor_si128(self.lo, self.hi));
        // Fold the low 64 bits (x^192..x^255) into the next 128.
        let t = _mm_clmulepi64_si128::<0x10>(self.lo, poly);
        let mid = _mm_xor_si128(_mm_xor_si128(mid, t), _mm_shuffle_epi32::<0x4e>(self.lo));
        // Then the next 64 (x^128..x^191).
        let t = _mm_clmulepi64_si128::<0x10>(mid, poly);
        _mm_xor_si128(_mm_xor_si128(self.hi, t), _mm_shuffle_epi32::<0x4e>(mid))
    }
}

/// `H^1..H^8` and their Karatsuba operands into `t`, from `H = E(K, 0)`
/// (with `t`'s round keys) in this file's representation: reflected, times
/// `x^-1`, as a little-endian lane. All in registers and the table: `H`
/// made through integer registers and a 16-byte buffer was read back with
/// a load that could not be forwarded from the two 8-byte stores that
/// wrote it (a fifth of the powers' time), and the powers went through a
/// stack array that then had to be wiped. Doubling as in [`powers_from`]
/// ([`extend_powers`]).
///
/// # Safety
/// The CPU must support AES-NI, PCLMULQDQ and SSSE3; `t`'s first `R + 1`
/// round keys are set.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn table_powers<const R: usize>(t: &mut Table) {
    // E(K, 0) as its big-endian integer (little-endian lanes).
    let h = bswap(aes1::<R>(t, _mm_setzero_si128()));
    // Times x^-1: shift the 128-bit integer left by one; the bit shifted out
    // (the x^0 coefficient) comes back as x^-1 = x^127 + x^6 + x + 1,
    // reflected 0xc2000...0001. Branch-free on the secret bit.
    let shifted = _mm_or_si128(
        _mm_slli_epi64::<1>(h),
        _mm_srli_epi64::<63>(_mm_slli_si128::<8>(h)),
    );
    let carry = _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0xff>(h));
    let poly = _mm_set_epi64x(0xc200_0000_0000_0000_u64 as i64, 1);
    let h1 = _mm_xor_si128(shifted, _mm_and_si128(carry, poly));
    store(&mut t.h[0], h1);
    extend_powers(&mut t.h, 1);
    for (hk, h) in t.hk.iter_mut().zip(&t.h) {
        store(hk, karatsuba_operand(load(h)));
    }
}

/// See [`Key::powers_n`].
///
/// # Safety
/// The CPU must support PCLMULQDQ.
#[target_feature(enable = "pclmulqdq,sse2")]
unsafe fn powers_n<const N: usize>(t: &Table) -> [Block; N] {
    // SAFETY: the same features.
    unsafe { powers_from(&t.h[..N.min(BATCH)]) }
}

/// `H^1..H^N` (times `x^-1`, little-endian lanes) from the first powers
/// `known` (at least `H^1`). Doubling: with `H^1..H^m` known,
/// `H^(m+i) = H^i * H^m` for `i = 1..=m` are `m` independent products, so
/// the dependency chain is about log2(N) products long instead of N (the
/// products overlap in the multiplier).
///
/// # Safety
/// The CPU must support PCLMULQDQ.
#[target_feature(enable = "pclmulqdq,sse2")]
unsafe fn powers_from<const N: usize>(known: &[Block]) -> [Block; N] {
    let mut out = [[0u8; 16]; N];
    let m = known.len().min(N);
    out[..m].copy_from_slice(&known[..m]);
    extend_powers(&mut out, m);
    out
}

/// Fills `h[m..]` with the next powers of H, given `h[k - 1] = H^k` for
/// `k = 1..=m` (`m >= 1`), by the doubling of [`powers_from`].
#[inline]
#[target_feature(enable = "pclmulqdq,sse2")]
fn extend_powers(h: &mut [Block], mut m: usize) {
    while m < h.len() {
        let hm = load(&h[m - 1]);
        let hmk = karatsuba_operand(hm);
        let (have, new) = h.split_at_mut(m);
        for (dst, src) in new.iter_mut().zip(have.iter()) {
            let mut acc = Acc::zero();
            acc.mul_add(load(src), hm, hmk);
            store(dst, acc.reduce());
        }
        m *= 2;
    }
}

/// GHASH of the byte-reversed blocks `x` (at most 8) into `y`:
/// `(y ^ x[0]) H^n ^ x[1] H^(n-1) ^ ... ^ x[n-1] H`, one reduction.
#[inline]
#[target_feature(enable = "pclmulqdq,ssse3")]
fn ghash_n(t: &Table, y: __m128i, x: &[__m128i]) -> __m128i {
    let n = x.len();
    debug_assert!((1..=BATCH).contains(&n));
    let mut acc = Acc::zero();
    for (j, &b) in x.iter().enumerate() {
        let b = if j == 0 { _mm_xor_si128(b, y) } else { b };
        acc.mul_add_power(t, b, n - j);
    }
    acc.reduce()
}

/// One block through AES.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn aes1<const R: usize>(t: &Table, x: __m128i) -> __m128i {
    let mut x = _mm_xor_si128(x, rk(t, 0));
    middle_rounds!(R, r => {
        x = _mm_aesenc_si128(x, rk(t, r));
    });
    _mm_aesenclast_si128(x, rk(t, R))
}

/// `N` counter blocks from the byte-reversed counter `c` (advanced) through
/// AES, XORed with the `N` input blocks at `src`, stored at `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `16 * N` bytes, equal or disjoint.
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn ctr_n<const R: usize, const N: usize>(
    t: &Table,
    c: &mut __m128i,
    src: *const u8,
    dst: *mut u8,
) {
    let mut x = [_mm_setzero_si128(); N];
    let k0 = rk(t, 0);
    for b in x.iter_mut() {
        *b = _mm_xor_si128(bswap(*c), k0);
        *c = inc32(*c);
    }
    middle_rounds!(R, r => {
        let k = rk(t, r);
        for b in x.iter_mut() {
            *b = _mm_aesenc_si128(*b, k);
        }
    });
    let k = rk(t, R);
    for (j, b) in x.iter_mut().enumerate() {
        // SAFETY: block `j < N` is in bounds (caller).
        let d = unsafe { load_at(src, j) };
        *b = _mm_aesenclast_si128(*b, _mm_xor_si128(k, d));
        // SAFETY: as above; block `j` was loaded before it is stored.
        unsafe { store_at(dst, j, *b) };
    }
}

/// CTR over `blocks < 8` whole blocks at `p` in place, in batches of 4, 2, 1,
/// from counter `c`; returns the counter after them. By value, not through
/// a `&mut`: the caller's counter comes from a `u128` in two registers, and
/// behind a reference LLVM stored it as two 8-byte halves that the first
/// 16-byte load here could not take from the store buffer (in a stream of
/// 16-byte GCM updates, a quarter of the time).
///
/// # Safety
/// `p` readable and writable for `16 * blocks` bytes.
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn ctr_tail<const R: usize>(
    t: &Table,
    mut c: __m128i,
    p: *mut u8,
    blocks: usize,
) -> __m128i {
    let c = &mut c;
    let mut at = 0;
    if blocks & 4 != 0 {
        // SAFETY: the batch lies within the `blocks` blocks (caller).
        unsafe { ctr_n::<R, 4>(t, c, p, p) };
        at += 4;
    }
    if blocks & 2 != 0 {
        // SAFETY: as above.
        unsafe { ctr_n::<R, 2>(t, c, p.add(16 * at), p.add(16 * at)) };
        at += 2;
    }
    if blocks & 1 != 0 {
        // SAFETY: as above.
        unsafe { ctr_n::<R, 1>(t, c, p.add(16 * at), p.add(16 * at)) };
    }
    *c
}

/// The final partial block (`1..=15` bytes of `rest`) in place: one more
/// keystream block, only the needed bytes used.
#[inline]
#[target_feature(enable = "aes,ssse3")]
fn ctr_partial<const R: usize>(t: &Table, c: __m128i, rest: &mut [u8]) {
    let mut block = [0u8; 16];
    block[..rest.len()].copy_from_slice(rest);
    let ks = aes1::<R>(t, bswap(c));
    let out = _mm_xor_si128(load(&block), ks);
    store(&mut block, out);
    rest.copy_from_slice(&block[..rest.len()]);
}

/// The byte-reversed blocks of `data` (at most 8 blocks' worth, the last
/// zero-padded), as GHASH operands; returns how many.
#[inline]
#[target_feature(enable = "ssse3")]
fn gather(data: &[u8], out: &mut [__m128i; BATCH]) -> usize {
    // Whole blocks are loaded where they are, a partial last block with
    // overlapping 8- or 4-byte loads (`le_partial`): a zero-padded copy
    // (a `memcpy` call) and a 16-byte load of it waited for the copy's
    // stores, about 60 cycles of a 256-byte message with 13 bytes of
    // associated data.
    let mut chunks = data.chunks_exact(16);
    let mut n = 0;
    for chunk in &mut chunks {
        out[n] = bswap(load(chunk.try_into().expect("16-byte chunk")));
        n += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let (lo, hi) = crate::partial::le_partial(rest);
        out[n] = bswap(_mm_set_epi64x(hi as i64, lo as i64));
        n += 1;
    }
    n
}

/// Absorbs `data` into `acc`, eight blocks per reduction.
///
/// # Safety
/// The CPU must support PCLMULQDQ and SSSE3.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn ghash(t: &Table, acc: &mut Block, data: &[u8]) {
    let mut y = bswap(load(acc));
    let mut chunks = data.chunks_exact(16 * BATCH);
    for chunk in &mut chunks {
        let p = chunk.as_ptr();
        // SAFETY: `chunk` is 8 readable blocks.
        let x: [__m128i; BATCH] = core::array::from_fn(|j| bswap(unsafe { load_at(p, j) }));
        y = ghash_n(t, y, &x);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut x = [_mm_setzero_si128(); BATCH];
        let n = gather(rest, &mut x);
        y = ghash_n(t, y, &x[..n]);
    }
    store(acc, bswap(y));
}

/// `E(K, c)` for the counter block whose big-endian integer is `c`.
///
/// # Safety
/// The CPU must support AES-NI and SSSE3.
#[target_feature(enable = "aes,ssse3")]
unsafe fn encrypt_counter<const R: usize>(t: &Table, c: u128) -> Block {
    let mut out = [0u8; 16];
    store(&mut out, aes1::<R>(t, bswap(lane(c))));
    out
}

/// Absorbs one block given as its big-endian integer.
///
/// # Safety
/// The CPU must support PCLMULQDQ and SSSE3.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn absorb(t: &Table, acc: &mut Block, x: u128) {
    let y = ghash_n(t, bswap(load(acc)), &[lane(x)]);
    store(acc, bswap(y));
}

/// Encryption: CTR from `counter` over `buf` in place, the ciphertext
/// absorbed into `acc`, stitched (see the module docs).
///
/// # Safety
/// The CPU must support AES-NI, PCLMULQDQ and SSSE3.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn seal<const R: usize>(t: &Table, counter: u128, acc: &mut Block, buf: &mut [u8]) {
    let mut y = bswap(load(acc));
    let mut c = lane(counter);
    let blocks = buf.len() / 16;
    let p = buf.as_mut_ptr();
    let mut done = 0;
    if blocks >= BATCH {
        // SAFETY: blocks 0..8 are in bounds.
        unsafe { ctr_n::<R, BATCH>(t, &mut c, p, p) };
        done = BATCH;
        while blocks - done >= BATCH {
            // SAFETY: blocks `done - 8 .. done + 8` are in bounds.
            unsafe { seal_stitched::<R>(t, &mut c, &mut y, p.add(16 * done)) };
            done += BATCH;
        }
        // SAFETY: blocks `done - 8 .. done` are in bounds (and hold ciphertext).
        let prev = unsafe { p.add(16 * (done - BATCH)) };
        // SAFETY: as above.
        let x: [__m128i; BATCH] = core::array::from_fn(|j| bswap(unsafe { load_at(prev, j) }));
        y = ghash_n(t, y, &x);
    }
    let tail = &mut buf[16 * done..];
    if !tail.is_empty() {
        let whole = tail.len() / 16;
        // SAFETY: `whole` blocks of `tail` are in bounds.
        c = unsafe { ctr_tail::<R>(t, c, tail.as_mut_ptr(), whole) };
        let rest = &mut tail[16 * whole..];
        if !rest.is_empty() {
            ctr_partial::<R>(t, c, rest);
        }
        let mut x = [_mm_setzero_si128(); BATCH];
        let n = gather(tail, &mut x);
        y = ghash_n(t, y, &x[..n]);
    }
    store(acc, bswap(y));
}

/// One stitched encryption iteration: CTR on the 8 blocks at `p`, GHASH of
/// the 8 ciphertext blocks before them (`p - 128`) between the rounds.
///
/// # Safety
/// The 16 blocks from `p - 128` to `p + 128` are readable and writable.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn seal_stitched<const R: usize>(t: &Table, c: &mut __m128i, y: &mut __m128i, p: *mut u8) {
    // SAFETY: the caller guarantees 8 blocks before `p`.
    let prev = unsafe { p.sub(16 * BATCH) };
    let k0 = rk(t, 0);
    let mut x = [_mm_setzero_si128(); BATCH];
    for b in x.iter_mut() {
        *b = _mm_xor_si128(bswap(*c), k0);
        *c = inc32(*c);
    }
    let mut acc = Acc::zero();
    middle_rounds!(R, r => {
        let k = rk(t, r);
        for b in x.iter_mut() {
            *b = _mm_aesenc_si128(*b, k);
        }
        if r <= BATCH {
            let j = r - 1;
            // SAFETY: block `j < 8` before `p` (caller).
            let mut g = bswap(unsafe { load_at(prev, j) });
            if j == 0 {
                g = _mm_xor_si128(g, *y);
            }
            acc.mul_add_power(t, g, BATCH - j);
        }
    });
    *y = acc.reduce();
    let k = rk(t, R);
    for (j, b) in x.iter_mut().enumerate() {
        // SAFETY: block `j < 8` at `p` (caller); loaded before stored.
        unsafe {
            let d = load_at(p, j);
            store_at(p, j, _mm_aesenclast_si128(*b, _mm_xor_si128(k, d)));
        }
    }
}

/// Decryption: the ciphertext in `buf` absorbed into `acc` and decrypted in
/// place, the GHASH of each 8 blocks stitched into their own CTR rounds.
///
/// # Safety
/// The CPU must support AES-NI, PCLMULQDQ and SSSE3.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn open<const R: usize>(t: &Table, counter: u128, acc: &mut Block, buf: &mut [u8]) {
    let mut y = bswap(load(acc));
    let mut c = lane(counter);
    let blocks = buf.len() / 16;
    let p = buf.as_mut_ptr();
    let mut done = 0;
    while blocks - done >= BATCH {
        // SAFETY: blocks `done .. done + 8` are in bounds.
        unsafe { open_stitched::<R>(t, &mut c, &mut y, p.add(16 * done)) };
        done += BATCH;
    }
    let tail = &mut buf[16 * done..];
    if !tail.is_empty() {
        let mut x = [_mm_setzero_si128(); BATCH];
        let n = gather(tail, &mut x);
        y = ghash_n(t, y, &x[..n]);
        let whole = tail.len() / 16;
        // SAFETY: `whole` blocks of `tail` are in bounds.
        c = unsafe { ctr_tail::<R>(t, c, tail.as_mut_ptr(), whole) };
        let rest = &mut tail[16 * whole..];
        if !rest.is_empty() {
            ctr_partial::<R>(t, c, rest);
        }
    }
    store(acc, bswap(y));
}

/// One stitched decryption iteration on the 8 blocks at `p`: their GHASH
/// between the CTR rounds, then the plaintext stored over them.
///
/// # Safety
/// The 8 blocks at `p` are readable and writable.
#[inline]
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn open_stitched<const R: usize>(t: &Table, c: &mut __m128i, y: &mut __m128i, p: *mut u8) {
    let k0 = rk(t, 0);
    let mut x = [_mm_setzero_si128(); BATCH];
    for b in x.iter_mut() {
        *b = _mm_xor_si128(bswap(*c), k0);
        *c = inc32(*c);
    }
    let mut acc = Acc::zero();
    middle_rounds!(R, r => {
        let k = rk(t, r);
        for b in x.iter_mut() {
            *b = _mm_aesenc_si128(*b, k);
        }
        if r <= BATCH {
            let j = r - 1;
            // SAFETY: block `j < 8` at `p` (caller), not yet overwritten.
            let mut g = bswap(unsafe { load_at(p, j) });
            if j == 0 {
                g = _mm_xor_si128(g, *y);
            }
            acc.mul_add_power(t, g, BATCH - j);
        }
    });
    *y = acc.reduce();
    let k = rk(t, R);
    for (j, b) in x.iter_mut().enumerate() {
        // SAFETY: block `j < 8` at `p` (caller); loaded before stored.
        unsafe {
            let d = load_at(p, j);
            store_at(p, j, _mm_aesenclast_si128(*b, _mm_xor_si128(k, d)));
        }
    }
}

// ---------------------------------------------------------------------------
// Short messages in one pass.

/// The longest message [`Key::short`] takes: eight blocks.
pub(super) const SHORT_MAX: usize = 16 * BATCH;
/// The longest associated data [`Key::short`] takes: four blocks.
pub(super) const SHORT_AAD_MAX: usize = 64;

/// `0xff` then `0x00`, 16 of each: the 16 bytes at `16 - n` keep the first
/// `n` bytes of a block (`n` is a public length).
const KEEP: [u8; 32] = {
    let mut m = [0u8; 32];
    let mut i = 0;
    while i < 16 {
        m[i] = 0xff;
        i += 1;
    }
    m
};

/// The first `n` (`1..=16`) bytes of a block kept, the rest zeroed.
#[inline]
#[target_feature(enable = "sse2")]
fn keep(x: __m128i, n: usize) -> __m128i {
    debug_assert!((1..=16).contains(&n));
    // SAFETY: `16 - n .. 32 - n` lies within the 32 bytes of `KEEP`.
    _mm_and_si128(x, unsafe {
        _mm_loadu_si128(KEEP.as_ptr().add(16 - n).cast())
    })
}

/// The first `n` (`0..16`) bytes at `p`, zero-padded, read in pieces of
/// 8, 4, 2 and 1 bytes: no `memcpy` call, around which the compiler would
/// spill the live registers (round keys and key-derived states among them).
///
/// # Safety
/// `n < 16` bytes at `p` are readable.
#[inline]
pub(super) unsafe fn read_partial(p: *const u8, n: usize) -> [u8; 16] {
    debug_assert!(n < 16);
    let mut b = [0u8; 16];
    let mut at = 0;
    for piece in [8, 4, 2, 1] {
        if n & piece != 0 {
            // SAFETY: `at + piece <= n` bytes at `p` are readable (caller).
            let src = unsafe { core::slice::from_raw_parts(p.add(at), piece) };
            b[at..at + piece].copy_from_slice(src);
            at += piece;
        }
    }
    b
}

/// Writes the first `n` (`0..16`) bytes of `b` to `p`, in pieces of 8, 4,
/// 2 and 1 bytes (no `memcpy` call; see [`read_partial`]).
///
/// # Safety
/// `n < 16` bytes at `p` are writable.
#[inline]
pub(super) unsafe fn write_partial(p: *mut u8, n: usize, b: &[u8; 16]) {
    debug_assert!(n < 16);
    let mut at = 0;
    for piece in [8, 4, 2, 1] {
        if n & piece != 0 {
            // SAFETY: `at + piece <= n` bytes at `p` are writable (caller).
            let dst = unsafe { core::slice::from_raw_parts_mut(p.add(at), piece) };
            dst.copy_from_slice(&b[at..at + piece]);
            at += piece;
        }
    }
}

/// Block `i` of the `len` bytes at `p`, zero-padded when it is the partial
/// last one.
///
/// # Safety
/// `len` bytes at `p` are readable and block `i` starts before `len`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn load_block(p: *const u8, len: usize, i: usize) -> __m128i {
    let n = len - 16 * i;
    if n >= 16 {
        // SAFETY: the whole block is in bounds (caller).
        unsafe { load_at(p, i) }
    } else {
        // SAFETY: `n < 16` bytes from block `i` are in bounds (caller).
        load(&unsafe { read_partial(p.add(16 * i), n) })
    }
}

/// Stores the first `min(16, len - 16 i)` bytes of `x` as block `i` of the
/// `len` bytes at `p`.
///
/// # Safety
/// `len` bytes at `p` are writable and block `i` starts before `len`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn store_block(p: *mut u8, len: usize, i: usize, x: __m128i) {
    let n = len - 16 * i;
    if n >= 16 {
        // SAFETY: the whole block is in bounds (caller).
        unsafe { store_at(p, i, x) }
    } else {
        let mut b = [0u8; 16];
        store(&mut b, x);
        // SAFETY: `n < 16` bytes from block `i` are in bounds (caller).
        unsafe { write_partial(p.add(16 * i), n, &b) };
    }
}

impl Key {
    /// Seals (`DEC` false) or opens a message of at most [`SHORT_MAX`]
    /// bytes under the 12-byte IV whose `J0` is `j0`, with at most
    /// [`SHORT_AAD_MAX`] bytes of associated data, in one pass: `E(K, J0)`
    /// goes through AES with the counter blocks, and the associated data,
    /// the ciphertext and the lengths are hashed with one reduction (two
    /// when they exceed eight blocks). Returns the full tag (on opening,
    /// the expected one; the caller compares it and wipes the output).
    pub(crate) fn short<const DEC: bool>(&self, j0: u128, aad: &[u8], mut io: InOut<'_>) -> Block {
        let len = io.len();
        assert!(
            len <= SHORT_MAX && aad.len() <= SHORT_AAD_MAX,
            "a short message"
        );
        let (src, dst) = io.ptrs();
        type Kernel = unsafe fn(&Table, u128, &[u8], *const u8, *mut u8, usize) -> Block;
        // Counter blocks, rounded up to 1, 2, 4 or 8.
        let pick = |k: [Kernel; 4]| match len {
            0..=16 => k[0],
            17..=32 => k[1],
            33..=64 => k[2],
            _ => k[3],
        };
        let f = match self.rounds() {
            10 => pick([
                short::<10, 1, DEC>,
                short::<10, 2, DEC>,
                short::<10, 4, DEC>,
                short::<10, 8, DEC>,
            ]),
            12 => pick([
                short::<12, 1, DEC>,
                short::<12, 2, DEC>,
                short::<12, 4, DEC>,
                short::<12, 8, DEC>,
            ]),
            _ => pick([
                short::<14, 1, DEC>,
                short::<14, 2, DEC>,
                short::<14, 4, DEC>,
                short::<14, 8, DEC>,
            ]),
        };
        // SAFETY: a `Key` exists only if the features were detected; `len`
        // bytes at `src` are readable and at `dst` writable, equal or not
        // overlapping (`InOut`); `len <= 16 * N` for the `N` picked.
        unsafe { f(&self.t, j0, aad, src, dst, len) }
    }
}

/// Makes the round key `k` appear to depend on the AES states `a`, `b`,
/// `c` at no run-time cost (the `asm!` is empty), so that LLVM runs the
/// chains round by round: left alone it may run one chain through every
/// round first and keep the round keys for the others in spills (key
/// material on the stack).
///
/// # Safety
/// None beyond the CPU supporting SSE2 (the caller's target features).
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn after(k: &mut __m128i, a: __m128i, b: __m128i, c: __m128i) {
    // SAFETY: the template is empty: no instruction runs, nothing is read
    // or written besides the operands, which are left unchanged.
    // Miri does not run inline assembly; the tie only steers scheduling.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!(
            "/* {k} {a} {b} {c} */",
            k = inout(xmm_reg) *k,
            a = in(xmm_reg) a,
            b = in(xmm_reg) b,
            c = in(xmm_reg) c,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    #[cfg(miri)]
    let _ = (k, a, b, c);
}

/// See [`Key::short`]: `N` counter blocks (`len <= 16 * N`) and `J0`
/// through AES together; every input block is read once, before any output
/// is written (so `src` may equal `dst`), and on opening the ciphertext
/// hashed is the one decrypted.
///
/// # Safety
/// The CPU must support AES-NI, PCLMULQDQ and SSSE3; `len` bytes at `src`
/// are readable and at `dst` writable, `dst` equal to `src` or not
/// overlapping it; `len <= 16 * N`, `N <= 8`, `aad.len() <= SHORT_AAD_MAX`.
#[target_feature(enable = "aes,pclmulqdq,ssse3")]
unsafe fn short<const R: usize, const N: usize, const DEC: bool>(
    t: &Table,
    j0: u128,
    aad: &[u8],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) -> Block {
    let blocks = len.div_ceil(16);
    // J0 and the counter blocks, whitened.
    let k0 = rk(t, 0);
    let mut c = lane(j0);
    let mut mask = _mm_xor_si128(bswap(c), k0);
    let mut x = [_mm_setzero_si128(); N];
    for b in x.iter_mut() {
        c = inc32(c);
        *b = _mm_xor_si128(bswap(c), k0);
    }
    // The input, each block read once.
    let mut d = [_mm_setzero_si128(); N];
    for (i, b) in d.iter_mut().enumerate().take(blocks) {
        // SAFETY: block `i < blocks` starts before `len` (caller).
        *b = unsafe { load_block(src, len, i) };
    }
    // The GHASH operands: the associated data, the ciphertext (on opening
    // the input, so their products overlap the AES rounds), the lengths.
    let mut g = [_mm_setzero_si128(); SHORT_AAD_MAX / 16 + BATCH + 1];
    let mut m = 0;
    for i in 0..aad.len().div_ceil(16) {
        // SAFETY: block `i` starts before `aad.len()`.
        g[m] = bswap(unsafe { load_block(aad.as_ptr(), aad.len(), i) });
        m += 1;
    }
    if DEC {
        for b in d.iter().take(blocks) {
            g[m] = bswap(*b);
            m += 1;
        }
    }
    middle_rounds!(R, r => {
        let mut k = rk(t, r);
        // SAFETY: an empty instruction sequence (see `after`).
        unsafe { after(&mut k, mask, x[0], x[N - 1]) };
        mask = _mm_aesenc_si128(mask, k);
        for b in x.iter_mut() {
            *b = _mm_aesenc_si128(*b, k);
        }
    });
    let mut k = rk(t, R);
    // SAFETY: as above.
    unsafe { after(&mut k, mask, x[0], x[N - 1]) };
    mask = _mm_aesenclast_si128(mask, k);
    for (i, (b, data)) in x.iter().zip(&d).enumerate().take(blocks) {
        let out = _mm_aesenclast_si128(*b, _mm_xor_si128(k, *data));
        if !DEC {
            // The ciphertext hashed: zero past the end of the message.
            g[m] = bswap(keep(out, (len - 16 * i).min(16)));
            m += 1;
        }
        // SAFETY: block `i < blocks` starts before `len` (caller).
        unsafe { store_block(dst, len, i, out) };
    }
    let lengths = (u128::from(aad.len() as u64 * 8) << 64) | u128::from(len as u64 * 8);
    g[m] = lane(lengths);
    m += 1;
    let mut y = _mm_setzero_si128();
    if m > BATCH {
        y = ghash_n(t, y, &g[..m - BATCH]);
    }
    y = ghash_n(t, y, &g[m.saturating_sub(BATCH)..m]);
    let mut tag = [0u8; 16];
    store(&mut tag, _mm_xor_si128(mask, bswap(y)));
    tag
}
