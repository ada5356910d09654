//! The stitched CTR + GHASH chunk kernels of the VAES backends, written
//! once for any register width: `vaes_avx2.rs` runs them on ymm registers
//! (two blocks each), `vaes_avx512.rs` on zmm registers (four). A backend
//! supplies its register type ([`Reg`]: the handful of instructions the
//! kernels use, at its width) and a `#[target_feature]` entry point per
//! kernel that calls the generic body here; every function here is
//! `#[inline(always)]`, so the whole body is compiled inside that entry
//! point, with its features, as if it had been written there. (Checked
//! against the two per-width copies these replace: the same instructions,
//! up to register allocation and a few spills fewer: docs/performance.md,
//! Zen 3.)
//!
//! A chunk is `N` registers (8 in the bulk; `vaes-avx512`'s decryption also
//! takes one chunk of 4). Its counter blocks go through AES while the GHASH
//! of a chunk of ciphertext runs between the rounds, one register per
//! round (on encryption the chunk before, on decryption the chunk itself):
//! each register of `LANES` blocks is multiplied by `LANES` key powers at
//! once (Karatsuba, unreduced), the products are summed over the lanes and
//! reduced once per chunk.
//!
//! The register types exist only after their backend's features were
//! detected (see [`Reg`]); raw pointers are the callers' business, as their
//! `# Safety` sections say.
#![allow(unsafe_code)]

use super::aesni_clmul::Acc;
use crate::aes::Block;
use core::arch::x86_64::__m128i;

/// Registers per chunk in the bulk of a message.
pub(super) const REGS: usize = 8;

/// A vector register of AES blocks (`LANES` of them, one per 128-bit lane)
/// and the operations the stitched kernels need at its width.
///
/// A value of an implementing type exists only after every CPU feature of
/// its backend was detected (the backend makes one, its token, only inside
/// its `#[target_feature]` entry points), so the methods may run their
/// instructions. Methods that only make a value (`zero`, `lane0`,
/// `counter_lanes`, the table and accumulator reads) take `self` as that
/// proof and may be called on any register.
pub(super) trait Reg: Copy {
    /// Blocks per register.
    const LANES: usize;
    /// The backend's table: round keys broadcast to every lane, key powers
    /// laid out per register.
    type Table;

    /// All zero.
    fn zero(self) -> Self;
    fn xor(self, other: Self) -> Self;
    /// One AES round per lane, with the round keys `k`.
    fn aes_round(self, k: Self) -> Self;
    /// The last AES round per lane.
    fn aes_last_round(self, k: Self) -> Self;
    /// Per lane, the carry-less product of the low 64-bit halves.
    fn clmul_lo(self, other: Self) -> Self;
    /// Per lane, the carry-less product of the high 64-bit halves.
    fn clmul_hi(self, other: Self) -> Self;
    /// Per lane, the two 64-bit halves swapped.
    fn swap_halves(self) -> Self;
    /// The bytes of each lane reversed.
    fn bswap(self) -> Self;
    /// `n` added to the low 32 bits of each lane (`inc32` on byte-reversed
    /// counters).
    fn add32(self, n: i32) -> Self;
    /// The register whose lane 0 is `y` and whose other lanes are zero.
    fn lane0(self, y: __m128i) -> Self;
    /// The XOR of the lanes.
    fn fold(self) -> __m128i;
    /// Makes `self` (a round key) appear to depend on the GHASH sums, at no
    /// run-time cost (an empty `asm!`). Without it LLVM's scheduler moves
    /// all the multiplications of a chunk after its AES rounds (spilling
    /// their inputs) instead of interleaving them, which is the point of
    /// stitching: the tie keeps one GHASH step between consecutive rounds.
    fn tie(&mut self, lo: Self, mid: Self, hi: Self);
    /// Register `i` of the buffer at `p` (unaligned).
    ///
    /// # Safety
    /// The register's bytes, `size * i .. size * (i + 1)` of `p`, are readable.
    unsafe fn load_at(self, p: *const u8, i: usize) -> Self;
    /// Stores `self` as register `i` of the buffer at `p` (unaligned).
    ///
    /// # Safety
    /// The register's bytes at `p` are writable.
    unsafe fn store_at(self, p: *mut u8, i: usize);
    /// The counter blocks `n, n + 1, ..` (one per lane, byte-reversed) for
    /// the counter block whose big-endian integer is `counter`.
    fn counter_lanes(self, counter: u128) -> Self;
    /// The GHASH accumulator (a byte-reversed block).
    fn load_acc(self, acc: &Block) -> __m128i;
    fn store_acc(self, acc: &mut Block, y: __m128i);
    /// Round key `r`, in every lane. A volatile read: otherwise LLVM hoists
    /// the round keys (and powers) out of the loops and spills the AES
    /// states.
    fn round_key(self, w: &Self::Table, r: usize) -> Self;
    /// The key powers of register `j` of a chunk of `REGS` registers
    /// (lane `i`: `H^(LANES * (REGS - j) - i)`); an ordinary load, which
    /// LLVM folds into the multiply.
    fn power(self, w: &Self::Table, j: usize) -> Self;
    /// Their Karatsuba operands: each lane's halves XORed, in its low half.
    fn power_k(self, w: &Self::Table, j: usize) -> Self;
}

/// Unreduced GHASH sums, lane-wise Karatsuba.
#[derive(Clone, Copy)]
pub(super) struct WideAcc<V> {
    lo: V,
    mid: V,
    hi: V,
}

impl<V: Reg> WideAcc<V> {
    #[inline(always)]
    pub(super) fn zero(t: V) -> WideAcc<V> {
        WideAcc {
            lo: t.zero(),
            mid: t.zero(),
            hi: t.zero(),
        }
    }

    /// Adds the products of the byte-reversed blocks in `x` by the key
    /// powers of register `j` ([`Reg::power`]).
    #[inline(always)]
    fn mul_add(&mut self, w: &V::Table, x: V, j: usize) {
        self.mul_add_by(x, x.power(w, j), x.power_k(w, j));
    }

    /// Adds the lane-wise products of `x` by the key powers `h`, whose
    /// Karatsuba operands are `hk`.
    #[inline(always)]
    pub(super) fn mul_add_by(&mut self, x: V, h: V, hk: V) {
        self.lo = self.lo.xor(x.clmul_lo(h));
        self.hi = self.hi.xor(x.clmul_hi(h));
        let xk = x.xor(x.swap_halves());
        self.mid = self.mid.xor(xk.clmul_lo(hk));
    }

    /// The lanes summed and reduced.
    #[inline(always)]
    pub(super) fn reduce(self) -> __m128i {
        let sum = Acc {
            lo: self.lo.fold(),
            mid: self.mid.fold(),
            hi: self.hi.fold(),
        };
        // SAFETY: a `V` exists only after its backend's features, PCLMULQDQ
        // among them, were detected (`Reg`).
        unsafe { sum.reduce() }
    }
}

/// `N` registers of counter blocks from `c` (byte-reversed), whitened;
/// advances `c` by `LANES * N` blocks.
#[inline(always)]
fn counters<V: Reg, const N: usize>(w: &V::Table, c: &mut V) -> [V; N] {
    let k0 = c.round_key(w, 0);
    let mut x = [c.zero(); N];
    for b in x.iter_mut() {
        *b = c.bswap().xor(k0);
        *c = c.add32(V::LANES as i32);
    }
    x
}

/// GHASH of the `N` registers at `p` into `y` (`N <= REGS`), one
/// reduction: register `j` by the powers of register `j + REGS - N`.
///
/// # Safety
/// `N` registers at `p` are readable.
#[inline(always)]
pub(super) unsafe fn ghash_chunk<V: Reg, const N: usize>(
    t: V,
    w: &V::Table,
    y: __m128i,
    p: *const u8,
) -> __m128i {
    let mut acc = WideAcc::zero(t);
    for j in 0..N {
        // SAFETY: register `j < N` of the chunk (caller).
        let mut g = unsafe { t.load_at(p, j) }.bswap();
        if j == 0 {
            g = g.xor(t.lane0(y));
        }
        acc.mul_add(w, g, j + REGS - N);
    }
    acc.reduce()
}

/// One chunk of `N` registers: AES on the counters `x` (whitened) with the
/// GHASH of the chunk at `g` into `y` between the rounds (one register per
/// round: `N` is at most the rounds less one), then the chunk at `src`
/// XORed with the keystream into `dst`. `src` may equal `dst` (in place:
/// each register is loaded before it is stored), and `g` may equal both
/// (decryption in place hashes the chunk it decrypts: every register is
/// loaded for the hash before it is overwritten).
///
/// `once` (decryption between separate buffers, `g` = `src`): each input
/// register is read once, for the hash and the XOR, so the plaintext
/// written is the decryption of exactly the ciphertext hashed, even if the
/// caller's input changed meanwhile.
///
/// # Safety
/// `N` registers at `g` and at `src` are readable and at `dst` writable;
/// `dst` is `src` or does not overlap it, and does not overlap `g` unless
/// `g` is `src` too (in-place decryption).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn stitched<V: Reg, const R: usize, const N: usize>(
    w: &V::Table,
    mut x: [V; N],
    y: &mut __m128i,
    g: *const u8,
    src: *const u8,
    dst: *mut u8,
    once: bool,
) {
    let t = x[0];
    let mut acc = WideAcc::zero(t);
    let mut held = [t.zero(); N];
    middle_rounds!(R, r => {
        let mut k = t.round_key(w, r);
        if (2..=N + 1).contains(&r) {
            k.tie(acc.lo, acc.mid, acc.hi);
        }
        for b in x.iter_mut() {
            *b = b.aes_round(k);
        }
        if r <= N {
            let j = r - 1;
            // SAFETY: register `j < N` at `g` (caller).
            let raw = unsafe { t.load_at(g, j) };
            if once {
                held[j] = raw;
            }
            let mut h = raw.bswap();
            if j == 0 {
                h = h.xor(t.lane0(*y));
            }
            acc.mul_add(w, h, j + REGS - N);
        }
    });
    *y = acc.reduce();
    let k = t.round_key(w, R);
    for (j, b) in x.iter().enumerate() {
        // SAFETY: register `j < N` at `src` and `dst` (caller); loaded
        // before stored.
        unsafe {
            let d = if once { held[j] } else { t.load_at(src, j) };
            b.aes_last_round(k.xor(d)).store_at(dst, j);
        }
    }
}

/// CTR only, on the chunk of `N` registers at `src`, into `dst`.
///
/// # Safety
/// `N` registers at `src` are readable and at `dst` writable; `dst` is
/// `src` or does not overlap it.
#[inline(always)]
unsafe fn ctr_chunk<V: Reg, const R: usize, const N: usize>(
    w: &V::Table,
    mut x: [V; N],
    src: *const u8,
    dst: *mut u8,
) {
    let t = x[0];
    middle_rounds!(R, r => {
        let k = t.round_key(w, r);
        for b in x.iter_mut() {
            *b = b.aes_round(k);
        }
    });
    let k = t.round_key(w, R);
    for (j, b) in x.iter().enumerate() {
        // SAFETY: register `j < N` at `src` and `dst` (caller); loaded
        // before stored.
        unsafe {
            let d = t.load_at(src, j);
            b.aes_last_round(k.xor(d)).store_at(dst, j);
        }
    }
}

/// GHASH of `data` (a non-zero multiple of `REGS` registers) into `acc`.
#[inline(always)]
pub(super) fn ghash<V: Reg>(t: V, w: &V::Table, acc: &mut Block, data: &[u8]) {
    let chunk = 16 * V::LANES * REGS;
    debug_assert!(data.len().is_multiple_of(chunk));
    let mut y = t.load_acc(acc);
    for c in data.chunks_exact(chunk) {
        // SAFETY: `c` is `REGS` readable registers.
        y = unsafe { ghash_chunk::<V, REGS>(t, w, y, c.as_ptr()) };
    }
    t.store_acc(acc, y);
}

/// Encryption of the `len` bytes at `src` into `dst` (a non-zero multiple
/// of `N` registers; in place when the two are equal) from `counter`, the
/// ciphertext absorbed into `acc`: the first chunk alone, then each chunk
/// stitched with the GHASH of the one before (read back from `dst`), then
/// (with `HASH_LAST`) the GHASH of the last; without it the last chunk is
/// left for the caller to absorb. `SEP`: `src` and `dst` differ.
///
/// # Safety
/// `len` bytes at `src` are readable and at `dst` writable (and readable),
/// `dst` equal to `src` or not overlapping it.
#[inline(always)]
pub(super) unsafe fn seal<
    V: Reg,
    const R: usize,
    const N: usize,
    const SEP: bool,
    const HASH_LAST: bool,
>(
    t: V,
    w: &V::Table,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // In place (`!SEP`) the compiler sees one pointer, as before
    // separate buffers existed: the same code for the common case.
    debug_assert!(SEP != (src == dst.cast_const()), "SEP matches the buffers");
    let src = if SEP { src } else { dst.cast_const() };
    let chunk = 16 * V::LANES * N;
    debug_assert!(len != 0 && len.is_multiple_of(chunk));
    let chunks = len / chunk;
    let mut y = t.load_acc(acc);
    let mut c = t.counter_lanes(counter);
    let x = counters::<V, N>(w, &mut c);
    // SAFETY: chunk 0 is in bounds of both.
    unsafe { ctr_chunk::<V, R, N>(w, x, src, dst) };
    for i in 1..chunks {
        let x = counters::<V, N>(w, &mut c);
        // SAFETY: chunk `i` is in bounds of both; chunks `i - 1` (hashed,
        // in `dst`) and `i` (encrypted) are in bounds.
        unsafe {
            let (from, to) = (src.add(chunk * i), dst.add(chunk * i));
            let hashed = to.wrapping_sub(chunk).cast_const();
            stitched::<V, R, N>(w, x, &mut y, hashed, from, to, false);
        }
    }
    if HASH_LAST {
        // SAFETY: the last chunk of `dst` is in bounds.
        y = unsafe { ghash_chunk::<V, N>(t, w, y, dst.add(chunk * (chunks - 1))) };
    }
    t.store_acc(acc, y);
}

/// Decryption of the `len` bytes at `src` into `dst` (a multiple of `N`
/// registers; in place when equal) from `counter`, the ciphertext absorbed
/// into `acc`, each chunk's GHASH stitched into its own CTR rounds.
///
/// # Safety
/// As [`seal`].
#[inline(always)]
pub(super) unsafe fn open<V: Reg, const R: usize, const N: usize, const SEP: bool>(
    t: V,
    w: &V::Table,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // As in `seal`.
    debug_assert!(SEP != (src == dst.cast_const()), "SEP matches the buffers");
    let src = if SEP { src } else { dst.cast_const() };
    let chunk = 16 * V::LANES * N;
    debug_assert!(len.is_multiple_of(chunk));
    let chunks = len / chunk;
    let mut y = t.load_acc(acc);
    let mut c = t.counter_lanes(counter);
    for i in 0..chunks {
        let x = counters::<V, N>(w, &mut c);
        // SAFETY: chunk `i` is in bounds of both; it is hashed from `src`
        // and decrypted into `dst`.
        unsafe {
            let (from, to) = (src.add(chunk * i), dst.add(chunk * i));
            stitched::<V, R, N>(w, x, &mut y, from, from, to, SEP);
        }
    }
    t.store_acc(acc, y);
}
