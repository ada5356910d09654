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
mod xts;
use xts::xts;

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
// detection (`boxed`), of AVX among the rest (`AVX`; 32-byte aligned as
// the `vaes-avx2` key is).
unsafe impl Schedule for Key {
    const AVX: bool = true;
}

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
    #[inline(always)]
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

/// ECB and CBC decryption of up to this many bytes (8 blocks) run on the
/// `vaes-avx2` kernels of `base`: broadcasting every round key to zmm and
/// the masked tail cost more than they save there. Zen 4, `hwcrypt speed
/// --backend all`, GB/s `vaes-avx512` -> `vaes-avx2`: AES-128-ECB 16 B
/// 0.87 -> 1.15, 64 B 3.53 -> 4.41, 128 B 8.69 -> 8.92; AES-256-ECB 128 B
/// 5.42 -> 6.96; AES-128-CBC decryption 16 B 0.85 -> 1.15, 64 B 3.57 ->
/// 4.41, 128 B 8.46 -> 8.69.
const NARROW_MAX: usize = 128;

impl AesKernels for Key {
    fn rounds(&self) -> usize {
        AesKernels::rounds(&self.base)
    }

    fn encrypt_block(&self, block: &mut Block) {
        self.base.encrypt_block(block);
    }
    fn decrypt_block(&self, block: &mut Block) {
        self.base.decrypt_block(block);
    }
    fn ecb_encrypt(&self, io: InOut<'_>) {
        if io.len() <= NARROW_MAX {
            return self.base.ecb_encrypt(io);
        }
        by_rounds!(self, ecb::<_, false>(self.enc(), io));
    }
    fn ecb_decrypt(&self, io: InOut<'_>) {
        if io.len() <= NARROW_MAX {
            return self.base.ecb_decrypt(io);
        }
        by_rounds!(self, ecb::<_, true>(self.dec(), io));
    }
    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>) {
        self.base.cbc_encrypt(chain, io);
    }
    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>) {
        if io.len() <= NARROW_MAX {
            return self.base.cbc_decrypt(chain, io);
        }
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
mod tests;
