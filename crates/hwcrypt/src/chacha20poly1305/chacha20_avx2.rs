//! AVX2 backend for ChaCha20-Poly1305: ChaCha20 on 8 blocks at once, one
//! 32-bit state word of all 8 blocks per ymm register, so a quarter round is
//! plain lane-wise `vpaddd`/`vpxor`/rotate on 16 registers. Rotations by 16
//! and 8 are byte shuffles (`vpshufb`); by 12 and 7 shift/shift/or. The 8
//! finished blocks are transposed to byte order with 32-bit, 64-bit and
//! 128-bit interleaves. Each double round of the 8-block path is one `asm!`
//! block with a planned register allocation (two state words parked on the
//! stack, masks as memory operands), as OpenSSL's 8-block code; compiled from
//! intrinsics the register allocator spilled words on the dependency chains
//! and the core ran ~12% slower.
//!
//! The AEAD works in 512-byte chunks (8 blocks) and is stitched: the scalar
//! Poly1305 of one chunk (64-bit limbs, `mulx`, an `asm!` loop with the
//! accumulator held in registers across the batch) is spread over the 10
//! double rounds of the ChaCha20 of the next (seal: Poly1305 of the
//! previous chunk's ciphertext; open: of this chunk's ciphertext, before it
//! is overwritten), so the integer and vector units run at the same time and
//! the chunk is read while it is still in L1. Zen 3 retires both halves
//! through the same 6-wide dispatch, so instructions per byte set the speed:
//! 5.53 at 16 KiB (ring's code: 5.56), down from 7.19 with `mul` (no BMI2:
//! `rax`/`rdx` moves), the accumulator stored and reloaded around every
//! round's `asm!` and a divided share per round. The first 8-block batch uses
//! counters 0..8: block 0 is the Poly1305 key, blocks 1..8 the first 448
//! bytes of keystream. Messages of up to 320 bytes, and a last chunk of up
//! to 384 bytes, use a row layout instead (two blocks per register, 2, 4 or
//! 6 blocks, no transposition; `rows.rs`): about half the vector work of a
//! full batch.
//!
//! An [`Avx2`] token exists only after `avx`, `avx2` and `bmi2` were
//! detected, so its methods may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::chacha20_soft;
use super::poly1305_soft::Poly1305;
use crate::aead::Tag;
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::CHACHA20_AVX2_FEATURES;
use core::arch::x86_64::*;
use core::hint::black_box;
use zeroize::Zeroize;

mod rows;

pub(super) use rows::{Rows, SHORT_MAX, aead_short_vl, message_rows, state_rows};
use rows::{rows_keystream, short};

/// Bytes per 8-block batch.
const BATCH: usize = 512;
/// Keystream bytes of the first batch of a message (block 0 is the Poly1305 key).
const FIRST: usize = BATCH - 64;

/// Proof that this CPU runs AVX2 (only [`Avx2::new`] makes one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2 {
    _detected: (),
}

impl Avx2 {
    /// `Some` iff the CPU has AVX, AVX2 and BMI2.
    pub(crate) fn new() -> Option<Avx2> {
        cpu::detected()
            .contains(Features::of(CHACHA20_AVX2_FEATURES))
            .then_some(Avx2 { _detected: () })
    }

    /// XORs the keystream from block `state[12]` on into `io` (the counter
    /// wraps modulo 2^32; callers keep within range).
    pub(crate) fn xor_keystream(self, state: &[u32; 16], io: InOut<'_>) {
        // SAFETY: an `Avx2` exists only if AVX, AVX2 and BMI2 were detected.
        unsafe { xor_keystream(state, io) }
    }

    /// Encrypts `input` (or `output` in place, when `input` is `None`) into
    /// `output` and returns the tag over `aad` and the ciphertext. A separate
    /// `input` has the length of `output` (checked by the caller).
    pub(crate) fn seal(
        self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        debug_assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: an `Avx2` exists only if AVX, AVX2 and BMI2 were detected; the
        // lengths match (caller).
        unsafe { aead::<true>(key, nonce, aad, input, output) }
    }

    /// Decrypts like [`Avx2::seal`] encrypts and returns the tag computed
    /// over `aad` and the ciphertext (the input); the caller compares it.
    pub(crate) fn open(
        self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        debug_assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: as in `seal`.
        unsafe { aead::<false>(key, nonce, aad, input, output) }
    }

    /// The middle of a streamed message: encrypts (`seal`) or decrypts
    /// `input` (or `output` in place, when `input` is `None`) into `output`
    /// from block `state[12]` and absorbs the ciphertext into `poly`,
    /// stitched as in a one-shot message. `output` is whole 64-byte blocks,
    /// a separate `input` as long, and `poly` is at a block boundary.
    pub(crate) fn aead_blocks(
        self,
        seal: bool,
        state: &[u32; 16],
        poly: &mut Poly1305,
        input: Option<&[u8]>,
        output: &mut [u8],
    ) {
        assert!(output.len().is_multiple_of(64));
        assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: an `Avx2` exists only if AVX, AVX2 and BMI2 were detected; the
        // length is whole blocks and a separate input as long (checked
        // above).
        unsafe {
            if seal {
                aead_blocks::<true>(state, poly, input, output);
            } else {
                aead_blocks::<false>(state, poly, input, output);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers: safe `#[target_feature]` functions, inlined into
// the kernels below.
// ---------------------------------------------------------------------------

type State8 = [__m256i; 16];

/// Word `i` of the 8-block initial state, read from memory each time it is
/// needed (at the start of the rounds and for the final addition).
/// Volatile, so that LLVM cannot keep the state (eight words of it are the
/// key, broadcast) in registers across the rounds and spill them to stack
/// slots nobody wipes; the state itself lives in the caller's array, which
/// is wiped. The loads are off the critical path.
#[inline(always)]
fn init_word(init: &State8, i: usize) -> __m256i {
    // SAFETY: `init[i]` is a valid, aligned `__m256i`.
    unsafe { core::ptr::read_volatile(&init[i]) }
}

/// `vpshufb` masks rotating each 32-bit lane left by 16 and by 8.
#[inline]
#[target_feature(enable = "avx2")]
fn rot_masks() -> (__m256i, __m256i) {
    let m16 = _mm256_setr_epi8(
        2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9,
        14, 15, 12, 13,
    );
    let m8 = _mm256_setr_epi8(
        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10,
        15, 12, 13, 14,
    );
    // Opaque to the optimiser: with constant masks LLVM rewrites the
    // rotations (2-instruction `vpshuflw`/`vpshufhw` pairs, shuffles pushed
    // through XORs), adding work on the two shuffle ports.
    (black_box(m16), black_box(m8))
}

/// Rotate each 32-bit lane left by `L` (`R` = 32 - `L`).
#[inline]
#[target_feature(enable = "avx2")]
fn rotl<const L: i32, const R: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<L>(x), _mm256_srli_epi32::<R>(x))
}

/// The 8-block state for `state` with block counters `state[12] + 0..8`.
#[inline]
#[target_feature(enable = "avx2")]
fn init8(state: &[u32; 16]) -> State8 {
    let mut x: State8 = core::array::from_fn(|i| _mm256_set1_epi32(state[i] as i32));
    x[12] = _mm256_add_epi32(x[12], _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    x
}

/// Moves all 8 block counters on by 8.
#[inline]
#[target_feature(enable = "avx2")]
fn next8(x: &mut State8) {
    let c = _mm256_add_epi32(init_word(x, 12), _mm256_set1_epi32(8));
    // SAFETY: `x[12]` is a valid, aligned `__m256i` (volatile as in `init_word`).
    unsafe { core::ptr::write_volatile(&mut x[12], c) };
}

/// Assembly text of two quarter rounds `(a, b, c, d)` and `(e, f, g, h)`
/// side by side (operand names of the `asm!` in [`blocks8`]): rotations by
/// 16 and 8 shuffle with the masks at `[m]` and `[m + 32]`, by 12 and 7
/// shift into `t0`/`t1` and or.
#[rustfmt::skip]
macro_rules! dr_half {
    ($a:literal, $b:literal, $c:literal, $d:literal,
     $e:literal, $f:literal, $g:literal, $h:literal) => {
        concat!(
            "vpaddd {", $a, "}, {", $a, "}, {", $b, "}\n",
            "vpaddd {", $e, "}, {", $e, "}, {", $f, "}\n",
            "vpxor {", $d, "}, {", $d, "}, {", $a, "}\n",
            "vpxor {", $h, "}, {", $h, "}, {", $e, "}\n",
            "vpshufb {", $d, "}, {", $d, "}, ymmword ptr [{m}]\n",
            "vpshufb {", $h, "}, {", $h, "}, ymmword ptr [{m}]\n",
            "vpaddd {", $c, "}, {", $c, "}, {", $d, "}\n",
            "vpaddd {", $g, "}, {", $g, "}, {", $h, "}\n",
            "vpxor {", $b, "}, {", $b, "}, {", $c, "}\n",
            "vpxor {", $f, "}, {", $f, "}, {", $g, "}\n",
            "vpslld {t0}, {", $b, "}, 12\n",
            "vpslld {t1}, {", $f, "}, 12\n",
            "vpsrld {", $b, "}, {", $b, "}, 20\n",
            "vpsrld {", $f, "}, {", $f, "}, 20\n",
            "vpor {", $b, "}, {", $b, "}, {t0}\n",
            "vpor {", $f, "}, {", $f, "}, {t1}\n",
            "vpaddd {", $a, "}, {", $a, "}, {", $b, "}\n",
            "vpaddd {", $e, "}, {", $e, "}, {", $f, "}\n",
            "vpxor {", $d, "}, {", $d, "}, {", $a, "}\n",
            "vpxor {", $h, "}, {", $h, "}, {", $e, "}\n",
            "vpshufb {", $d, "}, {", $d, "}, ymmword ptr [{m} + 32]\n",
            "vpshufb {", $h, "}, {", $h, "}, ymmword ptr [{m} + 32]\n",
            "vpaddd {", $c, "}, {", $c, "}, {", $d, "}\n",
            "vpaddd {", $g, "}, {", $g, "}, {", $h, "}\n",
            "vpxor {", $b, "}, {", $b, "}, {", $c, "}\n",
            "vpxor {", $f, "}, {", $f, "}, {", $g, "}\n",
            "vpslld {t0}, {", $b, "}, 7\n",
            "vpslld {t1}, {", $f, "}, 7\n",
            "vpsrld {", $b, "}, {", $b, "}, 25\n",
            "vpsrld {", $f, "}, {", $f, "}, 25\n",
            "vpor {", $b, "}, {", $b, "}, {t0}\n",
            "vpor {", $f, "}, {", $f, "}, {t1}\n",
        )
    };
}

/// 8 ChaCha20 blocks of `init`, transposed to byte order: register `j` is
/// keystream bytes `32j..32j + 32`. `between(i)` runs after double round
/// `i` (0..10): the stitched Poly1305 work goes there.
#[inline]
#[target_feature(enable = "avx2")]
fn blocks8<F: FnMut(usize)>(init: &State8, mut between: F) -> [__m256i; 16] {
    let (m16, m8) = rot_masks();
    let masks = [m16, m8];
    // 16 state words and the temporaries of the rotations do not fit in 16
    // ymm registers, and the register allocator spills words that are needed
    // again right away (store-to-load forwarding on the dependency chains).
    // So the double round is written out, as OpenSSL's 8-block code: two of
    // the four `c` words (8..12) are parked on the stack at any time and
    // swapped where the half-rounds change which pair they use, and the
    // `vpshufb` masks are memory operands. Words 8 and 9 are in registers
    // between double rounds, 10 and 11 in `parked[2..4]`: they go there
    // first, volatile (ordered before the other words' loads), so that they
    // never wait in registers beside the other 14 (spilled to stack slots
    // that were not wiped: broadcast key words).
    let mut parked = [_mm256_setzero_si256(); 4];
    for (i, p) in parked.iter_mut().enumerate().skip(2) {
        // SAFETY: `p` is a valid, aligned `__m256i`.
        unsafe { core::ptr::write_volatile(p, init_word(init, 8 + i)) };
    }
    let mut x: State8 = core::array::from_fn(|i| {
        if i == 10 || i == 11 {
            _mm256_setzero_si256()
        } else {
            init_word(init, i)
        }
    });
    for i in 0..10 {
        // SAFETY: AVX2 instructions only (this function requires AVX2); the
        // memory accessed is `masks` (read, 64 bytes) and `parked` (read and
        // written, 128 bytes), both local, 32-byte aligned arrays of
        // `__m256i`; no stack use beyond them, flags untouched.
        unsafe {
            core::arch::asm!(
                dr_half!("a0", "b0", "cx", "d0", "a1", "b1", "cy", "d1"),
                "vmovdqa ymmword ptr [{p}], {cx}",
                "vmovdqa ymmword ptr [{p} + 32], {cy}",
                "vmovdqa {cx}, ymmword ptr [{p} + 64]",
                "vmovdqa {cy}, ymmword ptr [{p} + 96]",
                dr_half!("a2", "b2", "cx", "d2", "a3", "b3", "cy", "d3"),
                dr_half!("a0", "b1", "cx", "d3", "a1", "b2", "cy", "d0"),
                "vmovdqa ymmword ptr [{p} + 64], {cx}",
                "vmovdqa ymmword ptr [{p} + 96], {cy}",
                "vmovdqa {cx}, ymmword ptr [{p}]",
                "vmovdqa {cy}, ymmword ptr [{p} + 32]",
                dr_half!("a2", "b3", "cx", "d1", "a3", "b0", "cy", "d2"),
                a0 = inout(ymm_reg) x[0],
                a1 = inout(ymm_reg) x[1],
                a2 = inout(ymm_reg) x[2],
                a3 = inout(ymm_reg) x[3],
                b0 = inout(ymm_reg) x[4],
                b1 = inout(ymm_reg) x[5],
                b2 = inout(ymm_reg) x[6],
                b3 = inout(ymm_reg) x[7],
                cx = inout(ymm_reg) x[8],
                cy = inout(ymm_reg) x[9],
                d0 = inout(ymm_reg) x[12],
                d1 = inout(ymm_reg) x[13],
                d2 = inout(ymm_reg) x[14],
                d3 = inout(ymm_reg) x[15],
                t0 = out(ymm_reg) _,
                t1 = out(ymm_reg) _,
                p = in(reg) parked.as_mut_ptr(),
                m = in(reg) masks.as_ptr(),
                options(nostack, preserves_flags),
            );
        }
        between(i);
    }
    x[10] = parked[2];
    x[11] = parked[3];
    // Round state (invertible to the key) does not stay behind on the stack.
    wipe(&mut parked);
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = _mm256_add_epi32(*xi, init_word(init, i));
    }
    // Lanes hold blocks 0..8 (0..4 in the low 128-bit half, 4..8 in the high
    // one). Interleave 32-bit then 64-bit words so each 128-bit half holds 4
    // consecutive words of one block, then pair halves across registers.
    let mut u = [[_mm256_setzero_si256(); 4]; 4];
    for (g, ug) in u.iter_mut().enumerate() {
        let t0 = _mm256_unpacklo_epi32(x[4 * g], x[4 * g + 1]);
        let t1 = _mm256_unpackhi_epi32(x[4 * g], x[4 * g + 1]);
        let t2 = _mm256_unpacklo_epi32(x[4 * g + 2], x[4 * g + 3]);
        let t3 = _mm256_unpackhi_epi32(x[4 * g + 2], x[4 * g + 3]);
        // ug[b]: words 4g..4g+4 of block b (low half) and block b + 4 (high half).
        ug[0] = _mm256_unpacklo_epi64(t0, t2);
        ug[1] = _mm256_unpackhi_epi64(t0, t2);
        ug[2] = _mm256_unpacklo_epi64(t1, t3);
        ug[3] = _mm256_unpackhi_epi64(t1, t3);
    }
    let mut out = [_mm256_setzero_si256(); 16];
    for b in 0..4 {
        out[2 * b] = _mm256_permute2x128_si256::<0x20>(u[0][b], u[1][b]);
        out[2 * b + 1] = _mm256_permute2x128_si256::<0x20>(u[2][b], u[3][b]);
        out[2 * b + 8] = _mm256_permute2x128_si256::<0x31>(u[0][b], u[1][b]);
        out[2 * b + 9] = _mm256_permute2x128_si256::<0x31>(u[2][b], u[3][b]);
    }
    out
}

/// Keystream for a last chunk of `n` (< 512) bytes from block `state[12]`
/// (`x` is the same position as an 8-block state): the row layout for up to
/// 6 blocks, else a full 8-block batch. Registers in byte order.
#[inline]
#[target_feature(enable = "avx2")]
fn tail_keystream<F: FnMut(usize)>(
    x: &State8,
    state: &[u32; 16],
    n: usize,
    between: F,
) -> [__m256i; 16] {
    if n > 384 {
        return blocks8(x, between);
    }
    rows_keystream(state, n, between)
}

/// `dst[..512] = src[..512] ^ ks`.
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing 512 bytes; they are
/// equal or do not overlap.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn xor512(src: *const u8, dst: *mut u8, ks: &[__m256i; 16]) {
    for (j, k) in ks.iter().enumerate() {
        // SAFETY: bytes 32j..32j + 32 of the caller's ranges; register j is
        // loaded before it is stored; unaligned access is allowed.
        unsafe {
            let v = _mm256_loadu_si256(src.add(32 * j).cast());
            _mm256_storeu_si256(dst.add(32 * j).cast(), _mm256_xor_si256(v, *k));
        }
    }
}

/// `dst[..n] = src[..n] ^ keystream`, the keystream starting at register
/// `first` of `ks` (byte `32 * first`); `n <= 32 * (ks.len() - first)`. Whole
/// registers go straight from registers; a last partial one by 16, 8, 4, 2
/// and 1 bytes, the keystream shifted down in registers. (Through a stack
/// buffer, with `memcpy` in and out, it was a ninth of a 16-byte seal: two
/// calls and a 32-byte load of bytes stored narrower, which cannot be
/// forwarded.)
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `n` bytes; they are
/// equal or do not overlap.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn xor_partial(src: *const u8, dst: *mut u8, ks: &[__m256i], first: usize, n: usize) {
    debug_assert!(n <= 32 * (ks.len() - first));
    let whole = n / 32;
    for j in 0..whole {
        // SAFETY: bytes 32j..32j + 32 <= n of the caller's ranges; loaded
        // before stored; unaligned access is allowed.
        unsafe {
            let v = _mm256_loadu_si256(src.add(32 * j).cast());
            _mm256_storeu_si256(dst.add(32 * j).cast(), _mm256_xor_si256(v, ks[first + j]));
        }
    }
    let mut rest = n % 32;
    if rest == 0 {
        return;
    }
    let mut at = 32 * whole;
    let k = ks[first + whole];
    let mut k128 = _mm256_castsi256_si128(k);
    // SAFETY: each access below is to bytes `at..at + width` of the
    // caller's ranges with `at + width <= n` (`rest` counts the bytes left
    // from `at`), read before written; unaligned access is allowed.
    unsafe {
        if rest >= 16 {
            let v = _mm_loadu_si128(src.add(at).cast());
            _mm_storeu_si128(dst.add(at).cast(), _mm_xor_si128(v, k128));
            k128 = _mm256_extracti128_si256::<1>(k);
            at += 16;
            rest -= 16;
        }
        let mut q = _mm_cvtsi128_si64(k128) as u64;
        if rest >= 8 {
            let v = core::ptr::read_unaligned(src.add(at).cast::<u64>());
            core::ptr::write_unaligned(dst.add(at).cast::<u64>(), v ^ q);
            q = _mm_extract_epi64::<1>(k128) as u64;
            at += 8;
            rest -= 8;
        }
        if rest >= 4 {
            let v = core::ptr::read_unaligned(src.add(at).cast::<u32>());
            core::ptr::write_unaligned(dst.add(at).cast::<u32>(), v ^ q as u32);
            q >>= 32;
            at += 4;
            rest -= 4;
        }
        if rest >= 2 {
            let v = core::ptr::read_unaligned(src.add(at).cast::<u16>());
            core::ptr::write_unaligned(dst.add(at).cast::<u16>(), v ^ q as u16);
            q >>= 16;
            at += 2;
            rest -= 2;
        }
        if rest == 1 {
            *dst.add(at) = *src.add(at) ^ q as u8;
        }
    }
}

/// Overwrites keystream registers spilled to memory (volatile, not optimised away).
#[inline]
#[target_feature(enable = "avx2")]
fn wipe(ks: &mut [__m256i]) {
    for k in ks.iter_mut() {
        // SAFETY: `k` is a valid, aligned `__m256i`.
        unsafe { core::ptr::write_volatile(k, _mm256_setzero_si256()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// The Poly1305 of a batch loop with its accumulator in registers: taken
/// out of `poly` when made, put back by [`PolyRegs::done`] (or on drop).
/// Between the double rounds LLVM keeps `h` in general registers (locals
/// that never reach memory): stored in `poly` and loaded back around every
/// round's `asm!`, which may write memory, it cost ~9 instructions a step.
struct PolyRegs<'a> {
    poly: &'a mut Poly1305,
    h: [u64; 3],
}

impl<'a> PolyRegs<'a> {
    #[inline(always)]
    fn new(poly: &'a mut Poly1305) -> PolyRegs<'a> {
        let h = poly.accumulator();
        PolyRegs { poly, h }
    }

    /// Absorbs the whole 16-byte blocks of `m` (a multiple of 16 bytes).
    #[inline(always)]
    fn blocks(&mut self, m: &[u8]) {
        debug_assert!(m.len().is_multiple_of(16));
        let n = m.len() / 16;
        if n == 0 {
            return;
        }
        let [mut h0, mut h1, mut h2] = self.h;
        // Per block: h = (h + m + 2^128)·r, partially reduced, as
        // `Poly1305::mul` computes it (d0 = h0·r0 + h1·s1, d1 = h0·r1 +
        // h1·r0 + h2·s1 + hi(d0), d2 = h2·r0 + hi(d1); then the bits of d2
        // from 2^130 up fold back times 5), with `mulx` and add-with-carry
        // chains: 30 instructions a block and 3 for the loop, about what
        // the compiler makes of `u128` products, but with the accumulator
        // in the registers the caller keeps it in. The key limbs are
        // memory operands, read where `poly` keeps them.
        // SAFETY: reads `n` 16-byte blocks from `m` (n >= 1, `m` is 16n
        // bytes) and the three key words; writes no memory; BMI2 (`mulx`)
        // is enabled for every caller (the `Avx2` token was made after
        // `bmi2` was detected).
        unsafe {
            core::arch::asm!(
                "2:",
                "add {h0}, qword ptr [{p}]",
                "adc {h1}, qword ptr [{p} + 8]",
                "adc {h2}, 1",
                "mov rdx, {h0}",
                "mulx {t1}, {t0}, qword ptr [{k}]",
                "mulx {h0}, {t2}, qword ptr [{k} + 8]",
                "mov rdx, {h1}",
                "mulx {t3}, {h1}, qword ptr [{k} + 16]",
                "add {t0}, {h1}",
                "adc {t1}, {t3}",
                "mulx {t3}, {h1}, qword ptr [{k}]",
                "add {t2}, {h1}",
                "adc {h0}, {t3}",
                "mov {h1}, {h2}",
                "imul {h1}, qword ptr [{k} + 16]",
                "imul {h2}, qword ptr [{k}]",
                "add {t2}, {h1}",
                "adc {h0}, {h2}",
                "add {t2}, {t1}",
                "adc {h0}, 0",
                // h0 = d2, t2 = d1 (low), t0 = d0 (low).
                "mov {h2}, {h0}",
                "and {h2}, 3",
                "mov {t1}, {h0}",
                "shr {t1}, 2",
                "and {h0}, -4",
                "add {h0}, {t1}",
                "add {h0}, {t0}",
                "adc {t2}, 0",
                "adc {h2}, 0",
                "mov {h1}, {t2}",
                "add {p}, 16",
                "dec {n}",
                "jnz 2b",
                h0 = inout(reg) h0,
                h1 = inout(reg) h1,
                h2 = inout(reg) h2,
                p = inout(reg) m.as_ptr() => _,
                n = inout(reg) n => _,
                k = in(reg) self.poly.key_limbs().as_ptr(),
                t0 = out(reg) _,
                t1 = out(reg) _,
                t2 = out(reg) _,
                t3 = out(reg) _,
                out("rdx") _,
                options(readonly, nostack),
            );
        }
        self.h = [h0, h1, h2];
    }

    /// Absorbs `m` zero-padded to whole blocks (`Poly1305::update_padded`).
    /// A partial last block goes through [`PolyRegs::blocks`] too, padded
    /// in a 16-byte buffer (public bytes: associated data or ciphertext):
    /// through `Poly1305::update_padded` its multiply was compiled into
    /// the caller with the key limbs in general registers, where register
    /// pressure could spill them to unwiped stack slots (the `no-lto`
    /// residue profile found `r` after a short `avx512` open once the
    /// short path sat in a codegen unit of its own).
    #[inline(always)]
    fn update_padded(&mut self, m: &[u8]) {
        let whole = m.len() - m.len() % 16;
        self.blocks(&m[..whole]);
        if whole < m.len() {
            let (m0, m1) = crate::partial::le_partial(&m[whole..]);
            let mut last = [0u8; 16];
            last[..8].copy_from_slice(&m0.to_le_bytes());
            last[8..].copy_from_slice(&m1.to_le_bytes());
            self.blocks(&last);
        }
    }

    /// Puts the accumulator back into `poly`.
    #[inline(always)]
    fn done(self) {}
}

impl Drop for PolyRegs<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.poly.set_accumulator(self.h);
    }
}

/// Poly1305 work (whole 16-byte blocks) spread over the 10 double rounds
/// of a batch: step `i` absorbs `nb / 10` blocks, one more in each of the
/// last `nb % 10` steps. A running slice, so that a step costs one length
/// check and no division.
struct Spread<'a> {
    rest: &'a [u8],
    base: usize,
    extra_from: usize,
}

impl<'a> Spread<'a> {
    /// `m` is whole blocks.
    #[inline(always)]
    fn new(m: &'a [u8]) -> Spread<'a> {
        let nb = m.len() / 16;
        Spread {
            rest: m,
            base: nb / 10,
            extra_from: 10 - nb % 10,
        }
    }

    /// The share of double round `i` (0..10), absorbed into `poly`.
    #[inline(always)]
    fn step(&mut self, poly: &mut PolyRegs<'_>, i: usize) {
        let n = 16 * (self.base + usize::from(i >= self.extra_from));
        let (now, rest) = self.rest.split_at(n);
        self.rest = rest;
        poly.blocks(now);
    }
}

// ---------------------------------------------------------------------------
// Kernels.
// ---------------------------------------------------------------------------

/// Plain ChaCha20 over `io` from block `state[12]`.
#[target_feature(enable = "avx2")]
fn xor_keystream(state: &[u32; 16], mut io: InOut<'_>) {
    let len = io.len();
    let (src, dst) = io.ptrs();
    if len <= 384 {
        // Short (a stream's first pass or a refill): the row layout alone,
        // without making (and wiping) the 8-block state.
        if len > 0 {
            let mut ks = rows_keystream(state, len, |_| {});
            // SAFETY: the `len` bytes of both ranges.
            unsafe { xor_partial(src, dst, &ks, 0, len) };
            wipe(&mut ks);
        }
        return;
    }
    let mut x = init8(state);
    let mut off = 0;
    while len - off >= BATCH {
        let ks = blocks8(&x, |_| {});
        // SAFETY: off + 512 <= len; in place src == dst, else disjoint.
        unsafe { xor512(src.add(off), dst.add(off), &ks) };
        next8(&mut x);
        off += BATCH;
    }
    if off < len {
        // Up to 384 bytes (and short messages) on the row layout.
        let n = len - off;
        let mut st = *state;
        st[12] = st[12].wrapping_add((off / 64) as u32);
        let mut ks = tail_keystream(&x, &st, n, |_| {});
        st.zeroize();
        // SAFETY: the `n` (< 512) bytes from `off` are inside both ranges.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
    }
    wipe(&mut x);
}

/// ChaCha20-Poly1305 seal (`SEAL`) or open, stitched as the module docs
/// describe; returns the tag over `aad` and the ciphertext.
#[target_feature(enable = "avx2,bmi2")]
fn aead<const SEAL: bool>(
    key: &[u32; 8],
    nonce: &[u32; 3],
    aad: &[u8],
    input: Option<&[u8]>,
    output: &mut [u8],
) -> Tag {
    let len = output.len();
    let dst = output.as_mut_ptr();
    // In place the input is the output; a separate input has the same length
    // and cannot overlap it (it is a shared borrow next to a mutable one).
    let src = input.map_or(dst.cast_const(), <[u8]>::as_ptr);
    // The bytes Poly1305 reads: the ciphertext, i.e. the output when sealing
    // and the input when opening.
    let mac_base = if SEAL { dst.cast_const() } else { src };
    let mac = |from: usize, n: usize| {
        debug_assert!(from + n <= len);
        // SAFETY: `mac_base` covers `len` bytes and every caller passes
        // `from + n <= len`; each slice covers bytes that are not written
        // while it lives (sealing: an earlier chunk, already written;
        // opening: the current chunk, written only after its keystream is
        // ready, when the slice is no longer used).
        unsafe { core::slice::from_raw_parts(mac_base.add(from), n) }
    };

    if len <= SHORT_MAX {
        // SAFETY: `len` <= SHORT_MAX bytes at `src` and `dst` (one slice, or
        // two of the same length that cannot overlap).
        return unsafe { short::<SEAL>(key, nonce, aad, src, dst, len) };
    }

    let mut state0 = chacha20_soft::state(key, 0, nonce);
    let mut x = init8(&state0);
    state0.zeroize();
    let mut ks = blocks8(&x, |_| {});
    let mut poly_key = [0u8; 32];
    // SAFETY: `poly_key` is 32 writable bytes; unaligned stores are allowed.
    unsafe { _mm256_storeu_si256(poly_key.as_mut_ptr().cast(), ks[0]) };
    let mut poly = Poly1305::new(&poly_key);
    crate::secret::wipe_bytes(&mut poly_key);
    poly.update_padded(aad);

    let first = len.min(FIRST);
    if !SEAL {
        poly.update_padded(mac(0, first));
    }
    // SAFETY: `first <= len` bytes from the start of both ranges.
    unsafe { xor_partial(src, dst, &ks, 2, first) };
    // Block 0 held the Poly1305 key.
    wipe(&mut ks);
    // Sealing: the ciphertext not yet absorbed (always whole blocks once a
    // further chunk follows).
    let (mut pending_at, mut pending_len) = (0, first);
    let mut off = first;
    next8(&mut x);
    // The block counter of `x`'s first lane.
    let mut ctr = 8u32;

    let mut regs = PolyRegs::new(&mut poly);
    while len - off >= BATCH {
        let ks = if SEAL {
            let mut m = Spread::new(mac(pending_at, pending_len));
            blocks8(&x, |i| m.step(&mut regs, i))
        } else {
            let mut m = Spread::new(mac(off, BATCH));
            blocks8(&x, |i| m.step(&mut regs, i))
        };
        // SAFETY: off + 512 <= len; in place src == dst, else disjoint.
        unsafe { xor512(src.add(off), dst.add(off), &ks) };
        (pending_at, pending_len) = (off, BATCH);
        next8(&mut x);
        ctr = ctr.wrapping_add(8);
        off += BATCH;
    }
    if off < len {
        let n = len - off;
        let mut state = chacha20_soft::state(key, ctr, nonce);
        let mut ks = if SEAL {
            let mut m = Spread::new(mac(pending_at, pending_len));
            tail_keystream(&x, &state, n, |i| m.step(&mut regs, i))
        } else {
            let m = mac(off, n);
            let whole = n - n % 16;
            let mut spread = Spread::new(&m[..whole]);
            let ks = tail_keystream(&x, &state, n, |i| spread.step(&mut regs, i));
            regs.update_padded(&m[whole..]);
            ks
        };
        state.zeroize();
        // SAFETY: the `n` bytes from `off` are inside both ranges.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
        (pending_at, pending_len) = (off, n);
    }
    regs.done();
    // The key words, broadcast.
    wipe(&mut x);
    if SEAL {
        poly.update_padded(mac(pending_at, pending_len));
    }
    poly.finish_aead(aad.len() as u64, len as u64)
}

/// The middle of a streamed message (see [`Avx2::aead_blocks`]): the loop
/// of [`aead`] without its first batch (block 0, the associated data) and
/// its end (the length block). `output.len()` is a multiple of 64, so every
/// chunk is whole 16-byte blocks.
#[target_feature(enable = "avx2,bmi2")]
fn aead_blocks<const SEAL: bool>(
    state: &[u32; 16],
    poly: &mut Poly1305,
    input: Option<&[u8]>,
    output: &mut [u8],
) {
    let len = output.len();
    debug_assert!(len.is_multiple_of(64));
    let dst = output.as_mut_ptr();
    // In place the input is the output; a separate input has the same
    // length and cannot overlap it (a shared borrow next to a mutable one).
    let src = input.map_or(dst.cast_const(), <[u8]>::as_ptr);
    // The ciphertext: the output when sealing, the input when opening.
    let mac_base = if SEAL { dst.cast_const() } else { src };
    let mac = |from: usize, n: usize| {
        debug_assert!(from + n <= len);
        // SAFETY: `mac_base` covers `len` bytes and every caller passes
        // `from + n <= len`; each slice covers bytes not written while it
        // lives (sealing: an earlier chunk, already written; opening: the
        // current chunk, before its keystream is applied).
        unsafe { core::slice::from_raw_parts(mac_base.add(from), n) }
    };
    let mut x = init8(state);
    // Sealing: the ciphertext not yet absorbed.
    let (mut pending_at, mut pending_len) = (0, 0);
    let mut off = 0;
    let mut regs = PolyRegs::new(poly);
    while len - off >= BATCH {
        let mut m = Spread::new(if SEAL {
            mac(pending_at, pending_len)
        } else {
            mac(off, BATCH)
        });
        let mut ks = blocks8(&x, |i| m.step(&mut regs, i));
        // SAFETY: off + 512 <= len; in place src == dst, else disjoint.
        unsafe { xor512(src.add(off), dst.add(off), &ks) };
        wipe(&mut ks);
        (pending_at, pending_len) = (off, BATCH);
        next8(&mut x);
        off += BATCH;
    }
    if off < len {
        let n = len - off;
        let mut st = *state;
        st[12] = st[12].wrapping_add((off / 64) as u32);
        let mut m = Spread::new(if SEAL {
            mac(pending_at, pending_len)
        } else {
            mac(off, n)
        });
        let mut ks = tail_keystream(&x, &st, n, |i| m.step(&mut regs, i));
        st.zeroize();
        // SAFETY: the `n` bytes from `off` are inside both ranges.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
        (pending_at, pending_len) = (off, n);
    }
    wipe(&mut x);
    if SEAL {
        regs.blocks(mac(pending_at, pending_len));
    }
    regs.done();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scalar Poly1305 of the stitched kernels against the portable one
    /// on inputs that reach the carries of the partial reduction, which
    /// random messages practically never do: r = 1 with all-ones blocks
    /// (h1 = 2^64 - 1 as the fold overflows), and the soft tests' vector
    /// for the middle-limb carry. A review's mutant that dropped the last
    /// `adc` survived every AEAD test.
    #[test]
    fn poly1305_registers_reach_the_reduction_carries() {
        if Avx2::new().is_none() {
            return;
        }
        #[target_feature(enable = "bmi2")]
        fn run(p: &mut Poly1305, m: &[u8]) {
            let mut regs = PolyRegs::new(p);
            regs.blocks(m);
            regs.done();
        }
        let mut carry_key = [0u8; 32];
        carry_key[0] = 1;
        carry_key[8] = 4;
        let mut carry_msg = vec![
            0x5c, 0x43, 0x79, 0x0d, 0xe5, 0x35, 0x94, 0xd7, 0x87, 0xf2, 0x1a, 0xca, 0x6b, 0x28,
            0xaf, 0xa1,
        ];
        carry_msg.extend([0; 16]);
        let mut ones_key = [0u8; 32];
        ones_key[0] = 1;
        let mut ones_msg = vec![0xff; 32];
        ones_msg.extend([0; 16]);
        for (key, msg) in [(carry_key, carry_msg), (ones_key, ones_msg)] {
            let mut soft = Poly1305::new(&key);
            soft.blocks(&msg);
            let mut p = Poly1305::new(&key);
            // SAFETY: BMI2 was detected (`Avx2::new` requires it).
            unsafe { run(&mut p, &msg) };
            assert_eq!(p.accumulator(), soft.accumulator());
        }
    }
}
