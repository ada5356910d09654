//! VAES-AVX512 backend: AES on 512-bit zmm registers, four blocks per
//! register, for the parallel modes (ECB, CTR, CBC decryption) and XTS.
//!
//! The main loops keep eight zmm registers — 32 blocks — in flight per
//! iteration: `vaesenc` on zmm has a latency of about four cycles at two
//! instructions per cycle, so eight independent registers keep both AES
//! pipes busy. AVX-512's 32 vector registers hold the eight states and
//! every round key at once (broadcast to all four lanes as they are loaded,
//! once per call, from the one 16-byte-per-round schedule a key keeps). Tails of 1-3 blocks use masked loads and stores
//! (`vmovdqu8` with a k-mask), so no block goes through a narrower path.
//!
//! * ECB: the blocks straight through the rounds.
//! * CTR: counters kept as little-endian integers in the lanes, advanced
//!   with `vpaddq` (`vpaddd` for the 32-bit counter), byte-swapped with
//!   `vpshufb` only for the AES input; the data XOR is folded into the last
//!   round (`vaesenclast(x, k_last ^ data)`). A 128-bit counter whose low
//!   64 bits would wrap splits the call there (the slow path).
//! * CBC decryption: the previous-ciphertext operand of each register is a
//!   load 16 bytes before it (`valignq` with the block kept from the
//!   previous chunk for the first), folded into the last round.
//! * XTS: the tweaks of the next 32 blocks are the current ones times
//!   x^32: a 4-byte shift of each 128-bit lane plus one carry-less multiply
//!   of the 32 bits shifted out by 0x87, work that runs beside the AES
//!   rounds on the other vector pipes. A one-unit call encrypts its tweak
//!   in the kernel and, for a unit that is not a whole number of blocks,
//!   also does the ciphertext stealing there (two xmm blocks, the partial
//!   one masked).
//!
//! The serial kernels (single blocks, CBC and CFB128 encryption, OFB) gain
//! nothing from zmm, and CFB128 decryption stays on ymm: they run on the
//! `vaes-avx2` key kept alongside.
//!
//! A [`Key`] can only be made after every feature in
//! [`VAES_AVX512_FEATURES`] was detected, so every method may call the
//! `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::vaes_avx2;
use super::{AesKernels, Block, CounterWidth};
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::VAES_AVX512_FEATURES;
use crate::secret::{Schedule, SecretBox};
use core::arch::x86_64::*;

mod lanes;

/// The round keys the zmm kernels read: the AES-NI schedule, one 16-byte
/// block per round, broadcast to the four lanes as each is loaded
/// (`vbroadcasti32x4` from memory). Kernels load them once per call into
/// registers, so the broadcast costs what a 64-byte load did, and a key
/// keeps one schedule (496 bytes) instead of three.
use super::aesni::{self, RoundKeys};

/// Expanded AES key for the VAES-AVX512 backend. It lives in a
/// [`SecretBox`] (made by [`Key::boxed`] after the features were detected),
/// which wipes it on drop.
pub(crate) struct Key {
    /// The VAES-AVX2 key: the serial kernels and CFB128 decryption, and
    /// (through its AES-NI key) the round keys of the zmm kernels.
    base: vaes_avx2::Key,
}

// SAFETY: a `vaes-avx2` key (byte arrays, an integer, bools): all-zero is
// valid, no drop glue, no pointers. A zeroed key is only made after
// detection (`boxed`).
unsafe impl Schedule for Key {}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes) in a heap home, in place; `None`
    /// unless the CPU has every feature in [`VAES_AVX512_FEATURES`]
    /// (or for another key length).
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(VAES_AVX512_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: every feature of `VAES_AVX512_FEATURES` (a superset of
        // `VAES_AVX2_FEATURES` and AES-NI's) was detected just above.
        // `vaes_avx2::Key::write_in_place` writes the whole `Key` (its one
        // field) before the box is used.
        let mut k = unsafe { SecretBox::<Key>::uninit() };
        // SAFETY: as above; the pointer is the box's, valid and aligned.
        unsafe {
            vaes_avx2::Key::write_in_place(core::ptr::addr_of_mut!((*k.as_mut_ptr()).base), key);
        }
        Some(k)
    }

    /// Re-expands in place for `key` (16, 24 or 32 bytes, checked by the caller).
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        self.base.rekey(key);
    }

    /// The encryption schedule.
    fn enc(&self) -> &RoundKeys {
        self.base.narrow().enc_keys()
    }

    /// The decryption schedule (equivalent inverse cipher).
    fn dec(&self) -> &RoundKeys {
        self.base.narrow().dec_keys()
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers: safe `#[target_feature]` functions that inline
// into the kernels (same feature set).
// ---------------------------------------------------------------------------

/// The round keys `0..=R` of `keys` in registers, each broadcast to the
/// four lanes (the rest zero): loaded once per call.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn round_keys<const R: usize>(keys: &RoundKeys) -> [__m512i; 15] {
    core::array::from_fn(|r| {
        if r <= R {
            // SAFETY: `keys.0[r]` is 16 readable, 16-byte aligned bytes.
            _mm512_broadcast_i32x4(unsafe { _mm_load_si128(keys.0[r].as_ptr().cast()) })
        } else {
            _mm512_setzero_si512()
        }
    })
}

/// `N` registers (4N blocks) through XTS: `cipher(x ^ t) ^ t` per block,
/// with the first tweak XOR merged into round 0 (a three-way XOR) and the
/// second folded into the last round's key.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn xts_cipher<const N: usize, const R: usize, const DEC: bool>(
    rk: &[__m512i; 15],
    d: [__m512i; N],
    t: &[__m512i],
) -> [__m512i; N] {
    let mut x: [__m512i; N] =
        core::array::from_fn(|j| _mm512_ternarylogic_epi64::<0x96>(d[j], t[j], rk[0]));
    for k in &rk[1..R] {
        for v in &mut x {
            *v = if DEC {
                _mm512_aesdec_epi128(*v, *k)
            } else {
                _mm512_aesenc_epi128(*v, *k)
            };
        }
    }
    for (j, v) in x.iter_mut().enumerate() {
        let k = _mm512_xor_si512(rk[R], t[j]);
        *v = if DEC {
            _mm512_aesdeclast_epi128(*v, k)
        } else {
            _mm512_aesenclast_epi128(*v, k)
        };
    }
    x
}

/// One block through the cipher on xmm (the tweak encryption of a unit).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn cipher1<const R: usize>(keys: &RoundKeys, x: __m128i) -> __m128i {
    let key = |r: usize| {
        // SAFETY: the 16 readable, 16-byte aligned bytes of `keys.0[r]`.
        unsafe { _mm_load_si128(keys.0[r].as_ptr().cast()) }
    };
    let mut x = _mm_xor_si128(x, key(0));
    for r in 1..R {
        x = _mm_aesenc_si128(x, key(r));
    }
    _mm_aesenclast_si128(x, key(R))
}

/// Each lane's tweak times x^32: shift the lane left by four bytes and
/// reduce the 32 bits that fell out with one carry-less multiply by 0x87
/// (the product has under 40 bits, so it stays in the low qword).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn mul_x32(t: __m512i) -> __m512i {
    let poly = _mm512_set1_epi64(0x87);
    _mm512_xor_si512(
        _mm512_bslli_epi128::<4>(t),
        _mm512_clmulepi64_epi128::<0x00>(_mm512_bsrli_epi128::<12>(t), poly),
    )
}

/// Register j = (T x^4j, T x^(4j+1), T x^(4j+2), T x^(4j+3)), j = 0..8:
/// the tweaks of the first 32 blocks, each computed from T directly with
/// per-qword shift counts (no chain through the previous register), so the
/// first rounds wait for a short dependency only.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn first_tweaks(t0: __m128i) -> [__m512i; 8] {
    let b = _mm512_broadcast_i32x4(t0);
    // Per lane: the low qword moved up (its top bits carry into the high
    // qword), the high qword moved down (its top bits are reduced).
    let low_up = _mm512_bslli_epi128::<8>(b);
    let high_down = _mm512_bsrli_epi128::<8>(b);
    let poly = _mm512_set1_epi64(0x87);
    macro_rules! reg {
        ($k:literal) => {{
            let left = _mm512_setr_epi64($k, $k, $k + 1, $k + 1, $k + 2, $k + 2, $k + 3, $k + 3);
            let right = _mm512_setr_epi64(
                64 - $k,
                64 - $k,
                63 - $k,
                63 - $k,
                62 - $k,
                62 - $k,
                61 - $k,
                61 - $k,
            );
            let shifted =
                _mm512_or_si512(_mm512_sllv_epi64(b, left), _mm512_srlv_epi64(low_up, right));
            let carry = _mm512_srlv_epi64(high_down, right);
            _mm512_xor_si512(shifted, _mm512_clmulepi64_epi128::<0x00>(carry, poly))
        }};
    }
    [
        reg!(0),
        reg!(4),
        reg!(8),
        reg!(12),
        reg!(16),
        reg!(20),
        reg!(24),
        reg!(28),
    ]
}

/// Lane `i` (0..4) of `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn lane(x: __m512i, i: usize) -> __m128i {
    match i {
        0 => _mm512_castsi512_si128(x),
        1 => _mm512_extracti32x4_epi32::<1>(x),
        2 => _mm512_extracti32x4_epi32::<2>(x),
        _ => _mm512_extracti32x4_epi32::<3>(x),
    }
}

/// Loads `N` registers (4N blocks) from `p`.
///
/// # Safety
/// `p` must be valid for reading `64 * N` bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn load_n<const N: usize>(p: *const u8) -> [__m512i; N] {
    // SAFETY: register `j` is bytes `64j..64j + 64` of the caller's range;
    // unaligned loads are allowed.
    core::array::from_fn(|j| unsafe { _mm512_loadu_si512(p.add(64 * j).cast()) })
}

/// Stores `N` registers (4N blocks) at `p`.
///
/// # Safety
/// `p` must be valid for writing `64 * N` bytes.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn store_n<const N: usize>(p: *mut u8, x: [__m512i; N]) {
    for (j, v) in x.into_iter().enumerate() {
        // SAFETY: bytes `64j..64j + 64` of the caller's range; unaligned is allowed.
        unsafe { _mm512_storeu_si512(p.add(64 * j).cast(), v) };
    }
}

// ---------------------------------------------------------------------------
// The XTS kernel. `R` is the round count (10, 12, 14) so the round loop
// unrolls.
// ---------------------------------------------------------------------------

/// One block through XTS on xmm: `cipher(x ^ t) ^ t` with the zmm round
/// keys' first lanes (the ciphertext-stealing pair).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn xts1<const R: usize, const DEC: bool>(rk: &[__m512i; 15], x: __m128i, t: __m128i) -> __m128i {
    xts1_with::<R, DEC>(|r| _mm512_castsi512_si128(rk[r]), x, t)
}

/// [`xts1`] with round key `r` from `key(r)`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn xts1_with<const R: usize, const DEC: bool>(
    key: impl Fn(usize) -> __m128i,
    x: __m128i,
    t: __m128i,
) -> __m128i {
    let mut x = _mm_ternarylogic_epi64::<0x96>(x, t, key(0));
    for r in 1..R {
        x = if DEC {
            _mm_aesdec_si128(x, key(r))
        } else {
            _mm_aesenc_si128(x, key(r))
        };
    }
    let k = _mm_xor_si128(key(R), t);
    if DEC {
        _mm_aesdeclast_si128(x, k)
    } else {
        _mm_aesenclast_si128(x, k)
    }
}

/// `t * x` on one xmm tweak, without a branch: each qword shifted left by
/// one, the low qword's top bit carried into the high qword, and the high
/// qword's top bit reduced as 0x87 into the low one.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn mul_x1(t: __m128i) -> __m128i {
    // Each qword's top bit spread over the qword, then the two swapped.
    let tops = _mm_shuffle_epi32::<0x4e>(_mm_srai_epi64::<63>(t));
    _mm_xor_si128(
        _mm_slli_epi64::<1>(t),
        _mm_and_si128(tops, _mm_set_epi64x(1, 0x87)),
    )
}

/// XTS over one data unit `io` of any length >= 16 with the data key's
/// schedule `keys` (encryption, or with `DEC` the equivalent inverse
/// cipher's). `tweak` is T_0 on entry (or, with `tweak_key`, the tweak
/// before its encryption with that schedule) and on return the tweak after
/// the last (possibly partial) block. A partial last block is ciphertext
/// stealing (IEEE 1619 5.3.2): the last full block and the partial one go
/// through [`xts1`] twice, the partial one loaded and stored with a byte
/// mask; everything before them runs through the zmm loop.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn xts<const R: usize, const DEC: bool>(
    keys: &RoundKeys,
    tweak_key: Option<&RoundKeys>,
    tweak: &mut Block,
    mut io: InOut<'_>,
) {
    let (src, dst) = io.ptrs();
    let (unit_src, unit_dst) = (src, dst);
    // SAFETY: this kernel runs only where AVX was detected.
    let mut t0 = unsafe { aesni::load_halves_vex(tweak) };
    if let Some(k2) = tweak_key {
        t0 = cipher1::<R>(k2, t0);
    }
    if io.len() <= 128 && io.len().is_multiple_of(16) {
        // Up to eight whole blocks: on xmm, one tweak after the other, with
        // the round keys read from the schedule, instead of broadcasting it
        // and building 32 tweaks (a third of a 16-byte unit's time went
        // there; measured faster up to 128 bytes through the provider).
        let key = |r: usize| {
            // SAFETY: the 16 readable, 16-byte aligned bytes of `keys.0[r]`.
            unsafe { _mm_load_si128(keys.0[r].as_ptr().cast()) }
        };
        for b in 0..io.len() / 16 {
            // SAFETY: block `b` is in bounds (`16 * b + 16 <= io.len()`);
            // its load precedes its store (in place, src == dst).
            unsafe {
                let d = _mm_loadu_si128(src.add(16 * b).cast());
                let x = xts1_with::<R, DEC>(key, d, t0);
                _mm_storeu_si128(dst.add(16 * b).cast(), x);
            }
            t0 = mul_x1(t0);
        }
        // SAFETY: `tweak` is 16 writable bytes.
        unsafe { _mm_storeu_si128(tweak.as_mut_ptr().cast(), t0) };
        return;
    }
    let mut tw = first_tweaks(t0);
    let rk = round_keys::<R>(keys);
    // (Under 16 bytes, not a data unit, nothing is touched.)
    let partial = if io.len() >= 16 { io.len() % 16 } else { 0 };
    // With a partial block, the last full block belongs to the stealing pair.
    let blocks = io.len() / 16 - usize::from(partial != 0);
    let stealing_at = 16 * blocks;
    let mut done = 0;
    while blocks - done >= 32 {
        // SAFETY: `done + 32 <= blocks`, so the 512 bytes at `16 * done`
        // are in bounds; the loads precede the stores (in place, src == dst).
        unsafe {
            let d = load_n::<8>(src.add(16 * done));
            let x = xts_cipher::<8, R, DEC>(&rk, d, &tw);
            store_n::<8>(dst.add(16 * done), x);
        }
        done += 32;
        if done == blocks {
            // The last iteration (every unit of 32k blocks: 512 B, 4 KiB):
            // only the tweak after the unit is still needed.
            tw[0] = mul_x32(tw[0]);
        } else {
            for t in &mut tw {
                *t = mul_x32(*t);
            }
        }
    }
    // The tail (under 32 blocks): at most one chunk each of 4, 2 and 1
    // registers (16, 8, 4 blocks), then 1-3 blocks masked; the tweak
    // registers move down as they are used (7 of the 8 at most).
    // SAFETY: `16 * done <= 16 * blocks <= io.len()`.
    let (mut src, mut dst) = unsafe { (src.add(16 * done), dst.add(16 * done)) };
    let mut left = blocks - done;
    macro_rules! chunk {
        ($n:literal) => {
            if left >= 4 * $n {
                // SAFETY: `64 * $n <= 16 * left` bytes remain at `src`/`dst`;
                // the loads precede the stores.
                unsafe {
                    let d = load_n::<$n>(src);
                    store_n::<$n>(dst, xts_cipher::<$n, R, DEC>(&rk, d, &tw));
                    src = src.add(64 * $n);
                    dst = dst.add(64 * $n);
                }
                tw = core::array::from_fn(|j| tw[(j + $n).min(7)]);
                left -= 4 * $n;
            }
        };
    }
    chunk!(4);
    chunk!(2);
    chunk!(1);
    if left > 0 {
        // 1-3 blocks: `left` < 4, so the mask has 16 * left < 64 bits.
        let mask: __mmask64 = (1u64 << (16 * left)) - 1;
        // SAFETY: the masked load and store touch only the `16 * left`
        // bytes that remain (masked-off bytes are neither read nor
        // written, and cannot fault); the load precedes the store.
        unsafe {
            let d = _mm512_maskz_loadu_epi8(mask, src.cast());
            let x = xts_cipher::<1, R, DEC>(&rk, [d], &tw);
            _mm512_mask_storeu_epi8(dst.cast(), mask, x[0]);
        }
    }
    let mut next = lane(tw[0], left);
    if partial != 0 {
        // `next` is the tweak of the last full block, `t_b` of the partial one.
        let t_b = mul_x1(next);
        // Encryption: CC = E(P_{m-1}, T_{m-1}); C_m = CC[..r];
        // C_{m-1} = E(P_m || CC[r..], T_m). Decryption: PP = D(C_{m-1}, T_m);
        // P_m = PP[..r]; P_{m-1} = D(C_m || PP[r..], T_{m-1}).
        let (first, second) = if DEC { (t_b, next) } else { (next, t_b) };
        // `partial` < 16, so the mask has `partial` bits.
        let mask: __mmask16 = (1u16 << partial) - 1;
        // SAFETY: `stealing_at + 16 + partial == io.len()`: the full block
        // is 16 bytes at `stealing_at`, the partial one `partial` bytes
        // after it (the masked load and store touch only those; masked-off
        // bytes are neither read nor written and cannot fault); both
        // loads precede both stores (in place, src == dst).
        unsafe {
            let full = _mm_loadu_si128(unit_src.add(stealing_at).cast());
            let tail = _mm_maskz_loadu_epi8(mask, unit_src.add(stealing_at + 16).cast());
            let cc = xts1::<R, DEC>(&rk, full, first);
            let out = xts1::<R, DEC>(&rk, _mm_mask_blend_epi8(mask, cc, tail), second);
            _mm_mask_storeu_epi8(unit_dst.add(stealing_at + 16).cast(), mask, cc);
            _mm_storeu_si128(unit_dst.add(stealing_at).cast(), out);
        }
        next = mul_x1(t_b);
    }
    // SAFETY: `tweak` is 16 writable bytes.
    unsafe { _mm_storeu_si128(tweak.as_mut_ptr().cast(), next) };
}

// ---------------------------------------------------------------------------
// The parallel `aes` kernels (ECB, CBC decryption, CTR). Each runs eight zmm
// registers (32 blocks) per main-loop iteration with every round key in a
// register, then at most one chunk each of 4, 2 and 1 registers, then 1-3
// blocks with masked loads and stores.
// ---------------------------------------------------------------------------

/// `N` registers (4N blocks) through `R` rounds of AES encryption (or, with
/// `DEC`, the equivalent inverse cipher), with `fold[j]` XORed into the
/// output for free: `last(x, k_R ^ fold)` equals `last(x, k_R) ^ fold`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn cipher<const N: usize, const R: usize, const DEC: bool>(
    rk: &[__m512i; 15],
    x: [__m512i; N],
    fold: [__m512i; N],
) -> [__m512i; N] {
    let mut x: [__m512i; N] = core::array::from_fn(|j| _mm512_xor_si512(x[j], rk[0]));
    for k in &rk[1..R] {
        for v in &mut x {
            *v = if DEC {
                _mm512_aesdec_epi128(*v, *k)
            } else {
                _mm512_aesenc_epi128(*v, *k)
            };
        }
    }
    for (v, f) in x.iter_mut().zip(fold) {
        let k = _mm512_xor_si512(rk[R], f);
        *v = if DEC {
            _mm512_aesdeclast_epi128(*v, k)
        } else {
            _mm512_aesenclast_epi128(*v, k)
        };
    }
    x
}

/// The byte mask of the first `blocks` (1..=3) blocks of a zmm register.
#[inline]
fn tail_mask(blocks: usize) -> __mmask64 {
    debug_assert!((1..4).contains(&blocks));
    (1u64 << (16 * blocks)) - 1
}

/// Runs a kernel over `blocks` blocks: `$chunk!(N, offset)` for N = 16
/// while 64 blocks remain (only if `$wide`), for N = 8 while 32 remain,
/// then at most one each of N = 4, 2, 1, then `$masked!(offset, left)` for
/// a last 1-3 blocks. Offsets are in bytes.
///
/// Sixteen registers in flight (64 blocks) measured ~8% faster than eight
/// for ECB and CBC decryption on Zen 5 (the eight-register loop leaves
/// `vaesenc` issue slots empty); CTR, which also holds the data and
/// counter registers, spills at sixteen and stays at eight.
macro_rules! ladder {
    ($wide:expr, $blocks:expr, $chunk:ident, $masked:ident) => {{
        let blocks: usize = $blocks;
        let mut i = 0;
        if $wide {
            while blocks - i >= 64 {
                $chunk!(16, 16 * i);
                i += 64;
            }
        }
        while blocks - i >= 32 {
            $chunk!(8, 16 * i);
            i += 32;
        }
        if blocks - i >= 16 {
            $chunk!(4, 16 * i);
            i += 16;
        }
        if blocks - i >= 8 {
            $chunk!(2, 16 * i);
            i += 8;
        }
        if blocks - i >= 4 {
            $chunk!(1, 16 * i);
            i += 4;
        }
        if blocks > i {
            $masked!(16 * i, blocks - i);
        }
    }};
}

/// ECB encryption (`DEC = false`, encryption keys) or decryption
/// (`DEC = true`, decryption keys) of the whole blocks of `io`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn ecb<const R: usize, const DEC: bool>(keys: &RoundKeys, mut io: InOut<'_>) {
    let (src, dst) = io.ptrs();
    let rk = round_keys::<R>(keys);
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            // SAFETY: the ladder keeps `$at + 64 * $n <= io.len()`; the
            // loads precede the stores (in place, src == dst).
            unsafe {
                let x = load_n::<$n>(src.add($at));
                let y = cipher::<$n, R, DEC>(&rk, x, [_mm512_setzero_si512(); $n]);
                store_n::<$n>(dst.add($at), y);
            }
        }};
    }
    macro_rules! masked {
        ($at:expr, $left:expr) => {{
            let mask = tail_mask($left);
            // SAFETY: `$at + 16 * $left == io.len()` bytes: the masked load
            // and store touch only those (masked-off bytes are neither read
            // nor written and cannot fault); the load precedes the store.
            unsafe {
                let x = _mm512_maskz_loadu_epi8(mask, src.add($at).cast());
                let y = cipher::<1, R, DEC>(&rk, [x], [_mm512_setzero_si512()]);
                _mm512_mask_storeu_epi8(dst.add($at).cast(), mask, y[0]);
            }
        }};
    }
    ladder!(true, io.len() / 16, chunk, masked);
}

/// CBC decryption (decryption keys): P_i = D(C_i) ^ C_{i-1}, with C_{-1} =
/// `chain` on entry; on return `chain` holds the last ciphertext block.
/// `last` keeps the block before the chunk in its lane 3 (in place it may
/// be overwritten already), and register 0's previous blocks are `last`'s
/// lane 3 and lanes 0-2 of the first ciphertext register (`valignq`). In
/// chunks of up to 8 registers the others' are shifted from registers the
/// same way (at 512 B ~3% faster than loads 16 bytes before their own,
/// which straddle two of the previous call's stores when a buffer is
/// decrypted again in place); the 16-register chunk loads them (there the
/// shuffles cost ~1.5% at 16 KiB, competing with the AES units).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn cbc_dec<const R: usize>(keys: &RoundKeys, chain: &mut Block, mut io: InOut<'_>) {
    let (src, dst) = io.ptrs();
    let rk = round_keys::<R>(keys);
    // SAFETY: this kernel runs only where AVX was detected.
    let mut last = _mm512_broadcast_i32x4(unsafe { aesni::load_halves_vex(chain) });
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            // SAFETY: the ladder keeps `$at + 64 * $n <= io.len()`, and the
            // offset loads (`64j - 16` for j >= 1) lie inside the chunk;
            // every load of the chunk precedes its stores (in place,
            // src == dst).
            unsafe {
                let c = load_n::<$n>(src.add($at));
                let prev: [__m512i; $n] = core::array::from_fn(|j| {
                    if j == 0 {
                        _mm512_alignr_epi64::<6>(c[0], last)
                    } else if $n <= 8 {
                        _mm512_alignr_epi64::<6>(c[j], c[j - 1])
                    } else {
                        _mm512_loadu_si512(src.add($at + 64 * j - 16).cast())
                    }
                });
                last = c[$n - 1];
                store_n::<$n>(dst.add($at), cipher::<$n, R, true>(&rk, c, prev));
            }
        }};
    }
    macro_rules! masked {
        ($at:expr, $left:expr) => {{
            let left: usize = $left;
            let mask = tail_mask(left);
            // SAFETY: `$at + 16 * left == io.len()` bytes: the masked load
            // and store touch only those (masked-off bytes are neither read
            // nor written and cannot fault); the load precedes the store.
            unsafe {
                let c = _mm512_maskz_loadu_epi8(mask, src.add($at).cast());
                let prev = _mm512_alignr_epi64::<6>(c, last);
                let p = cipher::<1, R, true>(&rk, [c], [prev]);
                _mm512_mask_storeu_epi8(dst.add($at).cast(), mask, p[0]);
                // Move the last ciphertext block (lane `left - 1`) to lane 3.
                last = _mm512_permutexvar_epi64(
                    _mm512_add_epi64(
                        _mm512_set1_epi64(2 * (left as i64 - 1)),
                        _mm512_setr_epi64(0, 1, 0, 1, 0, 1, 0, 1),
                    ),
                    c,
                );
            }
        }};
    }
    ladder!(true, io.len() / 16, chunk, masked);
    // SAFETY: `chain` is 16 writable bytes.
    unsafe { _mm_storeu_si128(chain.as_mut_ptr().cast(), lane(last, 3)) };
}

/// Reverses the bytes of each 128-bit lane (big-endian block <->
/// little-endian integer).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn bswap_mask() -> __m512i {
    _mm512_broadcast_i32x4(_mm_setr_epi8(
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0,
    ))
}

/// Adds `n` to the counter in each lane of `x` (counters kept as
/// little-endian integers): to the low 64 bits with no carry out of them
/// (`LOW32 = false`; the caller never lets them wrap), or to the low 32
/// bits modulo 2^32 (`LOW32 = true`, GCM's `inc32`).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn add_lanes<const LOW32: bool>(x: __m512i, n: u32) -> __m512i {
    if LOW32 {
        // The same bits as `n`, reinterpreted: a 32-bit lane add.
        let n = n as i32;
        _mm512_add_epi32(
            x,
            _mm512_setr_epi32(n, 0, 0, 0, n, 0, 0, 0, n, 0, 0, 0, n, 0, 0, 0),
        )
    } else {
        let n = i64::from(n);
        _mm512_add_epi64(x, _mm512_setr_epi64(n, 0, n, 0, n, 0, n, 0))
    }
}

/// CTR over one block: on xmm with the round keys read from the schedule
/// and the counter block as loaded: no broadcasts, no byte swaps, no masks
/// (through the provider, 16 B went from 0.88 to 1.03 GB/s; two or three
/// blocks gained under 5% this way and stay with [`ctr`]). A kernel of its
/// own: the same branch at the top of [`ctr`] cost it 2-5% at 32-256 B.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn ctr1<const R: usize>(keys: &RoundKeys, counter: &Block, mut io: InOut<'_>) {
    debug_assert_eq!(io.len(), 16);
    let (src, dst) = io.ptrs();
    // SAFETY: this kernel runs only where AVX was detected.
    let x = cipher1::<R>(keys, unsafe { aesni::load_halves_vex(counter) });
    // SAFETY: `io` is these 16 bytes; the load precedes the store.
    unsafe {
        let d = _mm_loadu_si128(src.cast());
        _mm_storeu_si128(dst.cast(), _mm_xor_si128(x, d));
    }
}

/// CTR over the whole blocks of `io` starting at counter block `counter`
/// (not updated here). With `LOW32 = false` the low 64 bits of the counter
/// must not wrap within `io` (the caller splits the call where they would).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn ctr<const R: usize, const LOW32: bool>(keys: &RoundKeys, counter: &Block, mut io: InOut<'_>) {
    let (src, dst) = io.ptrs();
    let rk = round_keys::<R>(keys);
    let bswap = bswap_mask();
    // SAFETY: this kernel runs only where AVX was detected.
    let first = unsafe { aesni::load_halves_vex(counter) };
    let first = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(first), bswap);
    // Lane k holds counter + i + k for the next block i.
    let lanes = if LOW32 {
        _mm512_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0)
    } else {
        _mm512_setr_epi64(0, 0, 1, 0, 2, 0, 3, 0)
    };
    let mut base = if LOW32 {
        _mm512_add_epi32(first, lanes)
    } else {
        _mm512_add_epi64(first, lanes)
    };
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            let x: [__m512i; $n] = core::array::from_fn(|j| {
                _mm512_shuffle_epi8(add_lanes::<LOW32>(base, 4 * j as u32), bswap)
            });
            base = add_lanes::<LOW32>(base, 4 * $n);
            // SAFETY: the ladder keeps `$at + 64 * $n <= io.len()`; the
            // data loads precede the stores (in place, src == dst).
            unsafe {
                let d = load_n::<$n>(src.add($at));
                store_n::<$n>(dst.add($at), cipher::<$n, R, false>(&rk, x, d));
            }
        }};
    }
    macro_rules! masked {
        ($at:expr, $left:expr) => {{
            let mask = tail_mask($left);
            let x = _mm512_shuffle_epi8(base, bswap);
            // SAFETY: `$at + 16 * $left == io.len()` bytes: the masked load
            // and store touch only those (masked-off bytes are neither read
            // nor written and cannot fault); the load precedes the store.
            unsafe {
                let d = _mm512_maskz_loadu_epi8(mask, src.add($at).cast());
                let y = cipher::<1, R, false>(&rk, [x], [d]);
                _mm512_mask_storeu_epi8(dst.add($at).cast(), mask, y[0]);
            }
        }};
    }
    ladder!(false, io.len() / 16, chunk, masked);
}

/// Calls `$f::<R, ..>(args)` with `R` the key's round count, inside an unsafe
/// block justified by the `Key`'s existence.
macro_rules! by_rounds {
    ($key:expr, $f:ident :: <_ $(, $c:tt)*> ($($arg:expr),* $(,)?)) => {{
        let rounds = $key.base.narrow().rounds();
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX512_FEATURES` was detected, which covers the kernels'
        // `avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes`.
        unsafe {
            match rounds {
                10 => $f::<10 $(, $c)*>($($arg),*),
                12 => $f::<12 $(, $c)*>($($arg),*),
                _ => $f::<14 $(, $c)*>($($arg),*),
            }
        }
    }};
}

impl Key {
    /// XTS over one data unit (any length >= 16: a partial last block is
    /// ciphertext stealing, done in the kernel) whose tweak is not encrypted
    /// yet: the tweak is encrypted with `tweak_key` inside the kernel, so
    /// the tweaks and the first rounds follow it without a round trip
    /// through memory. `tweak` holds the tweak after the last block on return.
    pub(crate) fn xts_unit(
        &self,
        tweak_key: &Key,
        tweak: &mut Block,
        io: InOut<'_>,
        decrypt: bool,
    ) {
        let k2 = Some(tweak_key.enc());
        if decrypt {
            by_rounds!(self, xts::<_, true>(self.dec(), k2, tweak, io));
        } else {
            by_rounds!(self, xts::<_, false>(self.enc(), k2, tweak, io));
        }
    }
}

impl AesKernels for Key {
    fn encrypt_block(&self, block: &mut Block) {
        self.base.encrypt_block(block);
    }
    fn decrypt_block(&self, block: &mut Block) {
        self.base.decrypt_block(block);
    }
    fn ecb_encrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, false>(self.enc(), io));
    }
    fn ecb_decrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, true>(self.dec(), io));
    }
    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>) {
        self.base.cbc_encrypt(chain, io);
    }
    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>) {
        by_rounds!(self, cbc_dec::<_>(self.dec(), chain, io));
    }
    fn cfb128_encrypt(&self, register: &mut Block, io: InOut<'_>) {
        self.base.cfb128_encrypt(register, io);
    }
    fn cfb128_decrypt(&self, register: &mut Block, io: InOut<'_>) {
        self.base.cfb128_decrypt(register, io);
    }
    fn ofb(&self, register: &mut Block, io: InOut<'_>) {
        self.base.ofb(register, io);
    }
    fn ctr(&self, counter: &mut Block, width: CounterWidth, mut io: InOut<'_>) {
        let blocks = io.len() / 16;
        if blocks == 1 {
            by_rounds!(self, ctr1::<_>(self.enc(), counter, io));
            width.add(counter, 1);
            return;
        }
        match width {
            CounterWidth::Low32 => {
                by_rounds!(self, ctr::<_, true>(self.enc(), counter, io));
                width.add(counter, blocks as u128);
            }
            CounterWidth::Full128 => {
                // The common case first: the low 64 bits do not wrap, one
                // kernel call (at 16 B the general loop below cost ~3 ns).
                let low = u64::from_be_bytes(counter[8..].try_into().unwrap_or([0; 8]));
                if let Some(next) = low.checked_add(blocks as u64) {
                    by_rounds!(self, ctr::<_, false>(self.enc(), counter, io));
                    counter[8..].copy_from_slice(&next.to_be_bytes());
                    return;
                }
                // The kernel adds to the low 64 bits without carrying: split
                // the call where they wrap (the slow path, at most once per
                // 2^64 blocks).
                let mut done = 0;
                while done < blocks {
                    let low = u64::from_be_bytes(counter[8..].try_into().unwrap_or([0; 8]));
                    let room = u128::from(u64::MAX - low) + 1;
                    let seg = (blocks - done).min(usize::try_from(room).unwrap_or(usize::MAX));
                    let (head, rest) = io.split_at(seg * 16);
                    by_rounds!(self, ctr::<_, false>(self.enc(), counter, head));
                    width.add(counter, seg as u128);
                    io = rest;
                    done += seg;
                }
            }
        }
    }
    fn xts_encrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        by_rounds!(self, xts::<_, false>(self.enc(), None, tweak, io));
    }
    fn xts_decrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        by_rounds!(self, xts::<_, true>(self.dec(), None, tweak, io));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::xts_generic;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Every length 0..=100 blocks (and a few long ones), every key size,
    /// both directions, with and without the fused tweak encryption: the
    /// zmm kernel equals XTS composed from single AES-NI blocks.
    #[test]
    fn xts_kernels_agree_with_the_generic_composition() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0512);
        let mut lens: Vec<usize> = (0..=100).collect();
        lens.extend([127, 128, 129, 255, 256, 257, 1000]);
        for key_len in [16, 24, 32] {
            let mut k1 = vec![0u8; key_len];
            let mut k2 = vec![0u8; key_len];
            rng.fill(&mut k1[..]);
            rng.fill(&mut k2[..]);
            let (Some(d), Some(t)) = (Key::boxed(&k1), Key::boxed(&k2)) else {
                eprintln!("vaes-avx512 not available: skipped");
                return;
            };
            for &blocks in &lens {
                let mut pt = vec![0u8; 16 * blocks];
                rng.fill(&mut pt[..]);
                let mut tweak = [0u8; 16];
                rng.fill(&mut tweak);
                for decrypt in [false, true] {
                    let mut want = pt.clone();
                    let mut tw_want = tweak;
                    t.base.narrow().encrypt_block(&mut tw_want);
                    xts_generic(
                        d.base.narrow(),
                        &mut tw_want,
                        InOut::InPlace(&mut want),
                        decrypt,
                    );
                    // Pre-encrypted tweak, separate buffers.
                    let mut got = vec![0u8; pt.len()];
                    let mut tw = tweak;
                    t.encrypt_block(&mut tw);
                    let io = InOut::separate(&pt, &mut got).unwrap();
                    if decrypt {
                        d.xts_decrypt(&mut tw, io);
                    } else {
                        d.xts_encrypt(&mut tw, io);
                    }
                    assert_eq!(got, want, "{key_len} {blocks} {decrypt}");
                    assert_eq!(tw, tw_want, "{key_len} {blocks} {decrypt} tweak");
                    // Fused tweak encryption, in place.
                    let mut got = pt.clone();
                    let mut tw = tweak;
                    d.xts_unit(&t, &mut tw, InOut::InPlace(&mut got), decrypt);
                    assert_eq!(got, want, "{key_len} {blocks} {decrypt} fused");
                    assert_eq!(tw, tw_want, "{key_len} {blocks} {decrypt} fused tweak");
                }
            }
        }
    }

    /// The zmm ECB, CBC-decryption and CTR kernels against the vaes-avx2
    /// ones for every block count 0..=100 and a few long ones, every key
    /// size, in place and to a separate buffer (one byte past the end
    /// untouched), with counters whose low 32 or 64 bits wrap mid-call.
    #[test]
    fn parallel_kernels_agree_with_vaes_avx2() {
        let mut rng = StdRng::seed_from_u64(0x5eed_0ae5);
        let mut lens: Vec<usize> = (0..=100).collect();
        lens.extend([127, 128, 129, 255, 256, 257, 1000]);
        for key_len in [16, 24, 32] {
            let mut raw = vec![0u8; key_len];
            rng.fill(&mut raw[..]);
            let Some(k) = Key::boxed(&raw) else {
                eprintln!("vaes-avx512 not available: skipped");
                return;
            };
            for &blocks in &lens {
                let mut input = vec![0u8; 16 * blocks];
                rng.fill(&mut input[..]);
                let mut iv = [0u8; 16];
                rng.fill(&mut iv);
                // Near a wrap of the low 32 or 64 bits, or random.
                let mut counters = vec![iv];
                let mut c = iv;
                c[8..].copy_from_slice(&(u64::MAX - 5).to_be_bytes());
                counters.push(c);
                let mut c = iv;
                c[12..].copy_from_slice(&(u32::MAX - 6).to_be_bytes());
                counters.push(c);
                counters.push([0xff; 16]);
                type Run<'a> = Box<dyn Fn(&dyn AesKernels, &mut Block, InOut<'_>) + 'a>;
                let mut runs: Vec<(&str, Run)> = vec![
                    ("ecb-enc", Box::new(|k, _, io| k.ecb_encrypt(io))),
                    ("ecb-dec", Box::new(|k, _, io| k.ecb_decrypt(io))),
                    ("cbc-dec", Box::new(|k, s, io| k.cbc_decrypt(s, io))),
                ];
                for (i, c) in counters.iter().enumerate() {
                    let c = *c;
                    let name = ["ctr0", "ctr1", "ctr2", "ctr3"][i];
                    runs.push((
                        name,
                        Box::new(move |k, s, io| {
                            *s = c;
                            k.ctr(s, CounterWidth::Full128, io)
                        }),
                    ));
                    let name = ["ctr32-0", "ctr32-1", "ctr32-2", "ctr32-3"][i];
                    runs.push((
                        name,
                        Box::new(move |k, s, io| {
                            *s = c;
                            k.ctr(s, CounterWidth::Low32, io)
                        }),
                    ));
                }
                for (name, run) in &runs {
                    let mut want = input.clone();
                    let mut s_want = iv;
                    run(&k.base, &mut s_want, InOut::InPlace(&mut want));
                    let mut got = input.clone();
                    let mut s_got = iv;
                    run(&*k, &mut s_got, InOut::InPlace(&mut got));
                    assert_eq!(got, want, "{key_len} {blocks} {name} in place");
                    assert_eq!(s_got, s_want, "{key_len} {blocks} {name} state");
                    let mut got = vec![0xa5u8; input.len() + 1];
                    let mut s_got = iv;
                    let n = input.len();
                    run(
                        &*k,
                        &mut s_got,
                        InOut::separate(&input, &mut got[..n]).unwrap(),
                    );
                    assert_eq!(got[..n], want, "{key_len} {blocks} {name} separate");
                    assert_eq!(got[n], 0xa5, "{key_len} {blocks} {name} past the end");
                    assert_eq!(s_got, s_want, "{key_len} {blocks} {name} separate state");
                }
            }
        }
    }

    /// Units of every length 16..=700 bytes (ciphertext stealing inside the
    /// kernel when not whole blocks), in place and to a separate buffer,
    /// equal the `soft` backend's `Xts`.
    #[test]
    fn fused_units_of_any_length_match_soft() {
        use crate::backend::Backend;
        use crate::modes::Xts;
        let mut rng = StdRng::seed_from_u64(0x5eed_0c75);
        for key_len in [16, 24, 32] {
            let mut k1 = vec![0u8; key_len];
            let mut k2 = vec![0u8; key_len];
            rng.fill(&mut k1[..]);
            rng.fill(&mut k2[..]);
            let (Some(d), Some(t)) = (Key::boxed(&k1), Key::boxed(&k2)) else {
                eprintln!("vaes-avx512 not available: skipped");
                return;
            };
            let soft = Xts::with_backend(&[k1, k2].concat(), Backend::Soft).unwrap();
            for len in 16..=700 {
                let mut pt = vec![0u8; len];
                rng.fill(&mut pt[..]);
                let mut tweak = [0u8; 16];
                rng.fill(&mut tweak);
                for decrypt in [false, true] {
                    let mut want = pt.clone();
                    if decrypt {
                        soft.decrypt(&tweak, &mut want).unwrap();
                    } else {
                        soft.encrypt(&tweak, &mut want).unwrap();
                    }
                    let mut got = pt.clone();
                    d.xts_unit(&t, &mut tweak.clone(), InOut::InPlace(&mut got), decrypt);
                    assert_eq!(got, want, "{key_len} {len} {decrypt} in place");
                    let mut got = vec![0xa5u8; len + 1];
                    let io = InOut::separate(&pt, &mut got[..len]).unwrap();
                    d.xts_unit(&t, &mut tweak.clone(), io, decrypt);
                    assert_eq!(got[..len], want, "{key_len} {len} {decrypt} separate");
                    assert_eq!(got[len], 0xa5, "{key_len} {len} {decrypt} past the end");
                }
            }
        }
    }
}
