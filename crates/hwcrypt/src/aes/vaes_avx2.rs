//! VAES-AVX2 backend: AES on 256-bit ymm registers, two blocks per register.
//!
//! The parallel kernels (ECB, CBC decryption, CFB128 decryption, CTR) keep
//! eight ymm registers — sixteen blocks — in flight per iteration, enough to
//! cover the `vaesenc` latency at two instructions per cycle; each round key is
//! loaded once per round and applied to all eight. The round keys are
//! broadcast to both 128-bit lanes once, when the key is made. The serial
//! kernels (single blocks, CBC/CFB128 encryption, OFB) are latency-bound and
//! gain nothing from ymm: they run on the AES-NI key kept alongside.
//!
//! A [`Key`] can only be made after every feature in [`VAES_AVX2_FEATURES`]
//! was detected, so every method may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::aesni;
use super::{AesKernels, Block, CounterWidth};
use crate::cpu::{self, Feature, Features};
use crate::inout::InOut;
use crate::registry::VAES_AVX2_FEATURES;
use crate::secret::{Schedule, SecretBox};
use core::arch::x86_64::*;

/// Round keys, each broadcast to both 128-bit lanes, 32-byte aligned so the
/// kernels may use aligned loads.
#[repr(C, align(32))]
struct WideKeys([[u8; 32]; 15]);

impl WideKeys {
    /// Overwrites the schedule with `keys` in both lanes (`vbroadcasti128`);
    /// unused entries are zeroed.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn fill(&mut self, keys: &[Block]) {
        for (i, w) in self.0.iter_mut().enumerate() {
            let k = match keys.get(i) {
                // SAFETY: `k` is 16 readable bytes.
                Some(k) => unsafe { _mm_loadu_si128(k.as_ptr().cast()) },
                None => _mm_setzero_si128(),
            };
            // SAFETY: `w` is 32 writable bytes, 32-byte aligned (`WideKeys` is `align(32)`).
            unsafe { _mm256_store_si256(w.as_mut_ptr().cast(), _mm256_broadcastsi128_si256(k)) };
        }
    }
}

/// Expanded AES key for the VAES-AVX2 backend. It lives in a
/// [`SecretBox`] (made by [`Key::boxed`] after the features were detected),
/// which wipes it on drop.
pub(crate) struct Key {
    /// The AES-NI key: the serial kernels, and the source of the wide keys.
    narrow: aesni::Key,
    /// Encryption round keys, broadcast.
    enc: WideKeys,
    /// Decryption round keys (equivalent inverse cipher), broadcast.
    dec: WideKeys,
    /// VPCLMULQDQ was detected and not masked off (`HWCRYPT_CPU`): the XTS
    /// kernels reduce tweaks with it.
    clmul: bool,
}

// SAFETY: plain arrays, an integer and bools: all-zero is valid, no drop
// glue, no pointers. A zeroed key is only made after detection (`boxed`).
unsafe impl Schedule for Key {}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes) in a zeroed heap home, in place;
    /// `None` unless the CPU has every feature in [`VAES_AVX2_FEATURES`]
    /// (or for another key length).
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(VAES_AVX2_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: every feature of `VAES_AVX2_FEATURES` (a superset of
        // AES-NI's) was detected just above.
        let mut k = unsafe { SecretBox::<Key>::zeroed() };
        k.init(key);
        Some(k)
    }

    /// Fills a zeroed key in place (flags, then the schedules).
    pub(crate) fn init(&mut self, key: &[u8]) {
        // The masked features, not the detected ones: `HWCRYPT_CPU=-pclmulqdq`
        // (or `-vpclmulqdq`) must reach the XTS kernels too.
        self.clmul = cpu::usable(Feature::Vpclmulqdq);
        self.narrow.set_clmul(cpu::usable(Feature::Pclmulqdq));
        self.rekey(key);
    }

    /// The AES-NI key kept alongside (the `vaes-avx512` backend builds its
    /// zmm schedules from it).
    pub(crate) fn narrow(&self) -> &aesni::Key {
        &self.narrow
    }

    /// Re-expands in place for `key` (16, 24 or 32 bytes, checked by the caller).
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        self.narrow.rekey(key);
        // SAFETY: a `Key` exists only after AVX2 (and the rest of
        // `VAES_AVX2_FEATURES`) was detected.
        unsafe {
            self.enc.fill(self.narrow.encryption_round_keys());
            self.dec.fill(self.narrow.decryption_round_keys());
        }
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers. All are safe `#[target_feature]` functions that
// inline into the kernels (same feature set).
// ---------------------------------------------------------------------------

/// Round key `r`, in both lanes.
///
/// The load is volatile on purpose: otherwise LLVM hoists all 11-15 round keys
/// out of the block loop into registers, leaving too few for eight blocks in
/// flight, and spills the data instead. One load per round per iteration
/// (the load ports are idle) keeps 8 data registers + 1 key register live.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn wide_key(keys: &WideKeys, r: usize) -> __m256i {
    // SAFETY: `keys.0[r]` is 32 readable bytes; `WideKeys` is 32-byte aligned
    // and its elements are 32 bytes long, so every element is 32-byte aligned.
    unsafe { core::ptr::read_volatile(keys.0[r].as_ptr().cast::<__m256i>()) }
}

/// Round key `r`, one lane.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn narrow_key(keys: &WideKeys, r: usize) -> __m128i {
    // SAFETY: the first 16 of the 32 readable, 32-byte aligned bytes of `keys.0[r]`.
    unsafe { _mm_load_si128(keys.0[r].as_ptr().cast()) }
}

/// `N` registers (2N blocks) through `R` rounds of AES encryption (or, with
/// `DEC`, the equivalent inverse cipher), with `fold[j]` XORed into the output
/// for free: `last(x, k_R ^ fold)` equals `last(x, k_R) ^ fold`.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn cipher<const N: usize, const R: usize, const DEC: bool>(
    keys: &WideKeys,
    mut x: [__m256i; N],
    fold: [__m256i; N],
) -> [__m256i; N] {
    let k = wide_key(keys, 0);
    for v in &mut x {
        *v = _mm256_xor_si256(*v, k);
    }
    for r in 1..R {
        let k = wide_key(keys, r);
        for v in &mut x {
            *v = if DEC {
                _mm256_aesdec_epi128(*v, k)
            } else {
                _mm256_aesenc_epi128(*v, k)
            };
        }
    }
    let k = wide_key(keys, R);
    for (v, f) in x.iter_mut().zip(fold) {
        let k = _mm256_xor_si256(k, f);
        *v = if DEC {
            _mm256_aesdeclast_epi128(*v, k)
        } else {
            _mm256_aesenclast_epi128(*v, k)
        };
    }
    x
}

/// One block through the cipher on xmm (the odd block of a tail).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn cipher1<const R: usize, const DEC: bool>(keys: &WideKeys, x: __m128i, fold: __m128i) -> __m128i {
    let mut x = _mm_xor_si128(x, narrow_key(keys, 0));
    for r in 1..R {
        let k = narrow_key(keys, r);
        x = if DEC {
            _mm_aesdec_si128(x, k)
        } else {
            _mm_aesenc_si128(x, k)
        };
    }
    let k = _mm_xor_si128(narrow_key(keys, R), fold);
    if DEC {
        _mm_aesdeclast_si128(x, k)
    } else {
        _mm_aesenclast_si128(x, k)
    }
}

/// Loads `N` registers (2N blocks) from `p`.
///
/// # Safety
/// `p` must be valid for reading `32 * N` bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn load_n<const N: usize>(p: *const u8) -> [__m256i; N] {
    // SAFETY: register `j` is bytes `32j..32j + 32` of the caller's range;
    // unaligned loads are allowed.
    core::array::from_fn(|j| unsafe { _mm256_loadu_si256(p.add(32 * j).cast()) })
}

/// Stores `N` registers (2N blocks) at `p`.
///
/// # Safety
/// `p` must be valid for writing `32 * N` bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn store_n<const N: usize>(p: *mut u8, x: [__m256i; N]) {
    for (j, v) in x.into_iter().enumerate() {
        // SAFETY: bytes `32j..32j + 32` of the caller's range; unaligned is allowed.
        unsafe { _mm256_storeu_si256(p.add(32 * j).cast(), v) };
    }
}

/// The previous-block operands of CBC/CFB decryption for `N` registers of
/// ciphertext `c` read at `src`: register `j` needs blocks `2j - 1` and `2j`,
/// where block -1 is `last` (the block before `src`, held in a register
/// because in place it may already be overwritten).
///
/// # Safety
/// `src` must be valid for reading `32 * N` bytes, and must not have been
/// written by this call's stores yet (the caller loads before it stores).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn previous_n<const N: usize>(
    src: *const u8,
    last: __m128i,
    c: &[__m256i; N],
) -> [__m256i; N] {
    core::array::from_fn(|j| {
        if j == 0 {
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(last), _mm256_castsi256_si128(c[0]))
        } else {
            // SAFETY: bytes `32j - 16..32j + 16` lie inside the caller's range for j >= 1.
            unsafe { _mm256_loadu_si256(src.add(32 * j - 16).cast()) }
        }
    })
}

/// One block at `p`.
///
/// # Safety
/// `p` must be valid for reading 16 bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn load1(p: *const u8) -> __m128i {
    // SAFETY: the caller's 16 bytes; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(p.cast()) }
}

/// Stores one block at `p`.
///
/// # Safety
/// `p` must be valid for writing 16 bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn store1(p: *mut u8, x: __m128i) {
    // SAFETY: the caller's 16 bytes; unaligned stores are allowed.
    unsafe { _mm_storeu_si128(p.cast(), x) }
}

/// Runs a kernel over `blocks` blocks: `$chunk!(N, offset)` for N = 8 while
/// 16 blocks remain, then at most one each of N = 4, 2, 1, then
/// `$single!(offset)` for a last odd block. Offsets are in bytes.
macro_rules! ladder {
    ($blocks:expr, $chunk:ident, $single:ident) => {{
        let blocks: usize = $blocks;
        let mut i = 0;
        while blocks - i >= 16 {
            $chunk!(8, 16 * i);
            i += 16;
        }
        if blocks - i >= 8 {
            $chunk!(4, 16 * i);
            i += 8;
        }
        if blocks - i >= 4 {
            $chunk!(2, 16 * i);
            i += 4;
        }
        if blocks - i >= 2 {
            $chunk!(1, 16 * i);
            i += 2;
        }
        if blocks - i == 1 {
            $single!(16 * i);
        }
    }};
}

// ---------------------------------------------------------------------------
// Kernels. `R` is the round count (10, 12, 14) so the round loop unrolls.
// ---------------------------------------------------------------------------

/// ECB encryption (`DEC = false`, encryption keys) or decryption (`DEC = true`,
/// decryption keys).
#[target_feature(enable = "avx2,vaes,aes")]
fn ecb<const R: usize, const DEC: bool>(keys: &WideKeys, mut io: InOut<'_>) {
    let (src, dst) = io.ptrs();
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            // SAFETY: the ladder keeps `$at + 32 * $n <= io.len()`; all loads
            // precede the stores (in place, src == dst).
            unsafe {
                let x = load_n::<$n>(src.add($at));
                store_n::<$n>(
                    dst.add($at),
                    cipher::<$n, R, DEC>(keys, x, [_mm256_setzero_si256(); $n]),
                );
            }
        }};
    }
    macro_rules! single {
        ($at:expr) => {{
            // SAFETY: `$at + 16 == io.len()`; the load precedes the store.
            unsafe {
                let x = load1(src.add($at));
                store1(
                    dst.add($at),
                    cipher1::<R, DEC>(keys, x, _mm_setzero_si128()),
                );
            }
        }};
    }
    ladder!(io.len() / 16, chunk, single);
}

/// The two feedback decryptions, which differ only in what goes through AES:
///
/// * CBC (`CBC = true`, decryption keys): P_i = D(C_i) ^ C_{i-1};
/// * CFB128 (`CBC = false`, encryption keys): P_i = E(C_{i-1}) ^ C_i;
///
/// with C_{-1} = `feedback` on entry; on return `feedback` holds the last
/// ciphertext block. Both are parallel: every C_{i-1} is known up front.
#[target_feature(enable = "avx2,vaes,aes")]
fn feedback_decrypt<const R: usize, const CBC: bool>(
    keys: &WideKeys,
    feedback: &mut Block,
    mut io: InOut<'_>,
) {
    let (src, dst) = io.ptrs();
    // SAFETY: `feedback` is 16 readable bytes.
    let mut last = unsafe { load1(feedback.as_ptr()) };
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            // SAFETY: the ladder keeps `$at + 32 * $n <= io.len()`; every load
            // of the chunk precedes its stores (in place, src == dst).
            unsafe {
                let c = load_n::<$n>(src.add($at));
                let prev = previous_n::<$n>(src.add($at), last, &c);
                last = _mm256_extracti128_si256::<1>(c[$n - 1]);
                let p = if CBC {
                    cipher::<$n, R, true>(keys, c, prev)
                } else {
                    cipher::<$n, R, false>(keys, prev, c)
                };
                store_n::<$n>(dst.add($at), p);
            }
        }};
    }
    macro_rules! single {
        ($at:expr) => {{
            // SAFETY: `$at + 16 == io.len()`; the load precedes the store.
            unsafe {
                let c = load1(src.add($at));
                let p = if CBC {
                    cipher1::<R, true>(keys, c, last)
                } else {
                    cipher1::<R, false>(keys, last, c)
                };
                store1(dst.add($at), p);
                last = c;
            }
        }};
    }
    ladder!(io.len() / 16, chunk, single);
    // SAFETY: `feedback` is 16 writable bytes.
    unsafe { store1(feedback.as_mut_ptr(), last) };
}

/// Reverses the bytes of each 128-bit lane (big-endian block <-> little-endian integer).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn bswap_mask() -> __m256i {
    _mm256_setr_epi8(
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
        5, 4, 3, 2, 1, 0,
    )
}

/// Adds `n` to the counter in each lane of `x` (counters kept as
/// little-endian integers): to the low 64 bits with no carry out of them
/// (`LOW32 = false`; the caller never lets them wrap), or to the low 32 bits
/// modulo 2^32 (`LOW32 = true`, GCM's `inc32`).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn add_lanes<const LOW32: bool>(x: __m256i, n: u32) -> __m256i {
    if LOW32 {
        let n = n as i32;
        _mm256_add_epi32(x, _mm256_setr_epi32(n, 0, 0, 0, n, 0, 0, 0))
    } else {
        let n = i64::from(n);
        _mm256_add_epi64(x, _mm256_setr_epi64x(n, 0, n, 0))
    }
}

/// CTR over all of `io` starting at counter block `counter` (not updated
/// here). With `LOW32 = false` the low 64 bits of the counter must not wrap
/// within `io` (the caller splits the call where they would).
#[target_feature(enable = "avx2,vaes,aes")]
fn ctr<const R: usize, const LOW32: bool>(keys: &WideKeys, counter: &Block, mut io: InOut<'_>) {
    let (src, dst) = io.ptrs();
    let bswap = bswap_mask();
    // SAFETY: `counter` is 16 readable bytes.
    let first = unsafe { load1(counter.as_ptr()) };
    let first = _mm_shuffle_epi8(first, _mm256_castsi256_si128(bswap));
    // Lane 0 holds counter + i, lane 1 counter + i + 1, for the next block i.
    let lane1 = if LOW32 {
        _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0)
    } else {
        _mm256_setr_epi64x(0, 0, 1, 0)
    };
    let mut base = if LOW32 {
        _mm256_add_epi32(_mm256_broadcastsi128_si256(first), lane1)
    } else {
        _mm256_add_epi64(_mm256_broadcastsi128_si256(first), lane1)
    };
    macro_rules! chunk {
        ($n:literal, $at:expr) => {{
            let x: [__m256i; $n] = core::array::from_fn(|j| {
                _mm256_shuffle_epi8(add_lanes::<LOW32>(base, 2 * j as u32), bswap)
            });
            base = add_lanes::<LOW32>(base, 2 * $n);
            // SAFETY: the ladder keeps `$at + 32 * $n <= io.len()`; the data
            // loads precede the stores (in place, src == dst).
            unsafe {
                let d = load_n::<$n>(src.add($at));
                store_n::<$n>(dst.add($at), cipher::<$n, R, false>(keys, x, d));
            }
        }};
    }
    macro_rules! single {
        ($at:expr) => {{
            let x = _mm_shuffle_epi8(_mm256_castsi256_si128(base), _mm256_castsi256_si128(bswap));
            // SAFETY: `$at + 16 == io.len()`; the load precedes the store.
            unsafe {
                let d = load1(src.add($at));
                store1(dst.add($at), cipher1::<R, false>(keys, x, d));
            }
        }};
    }
    ladder!(io.len() / 16, chunk, single);
}

// ---------------------------------------------------------------------------
// XTS. A tweak is a little-endian 128-bit integer, which is what a 128-bit
// lane holds after a plain load, so multiplying by x^k is a 128-bit left
// shift by k plus the reduction of the k bits shifted out: for c < 2^16,
// c * (x^7 + x^2 + x + 1) = c ^ c << 1 ^ c << 2 ^ c << 7, four 64-bit shifts
// that cannot overflow. Register j of the 8 holds the tweaks of blocks 2j
// and 2j + 1 of the iteration; the next iteration's are these times x^16,
// a 2-byte lane shift (`vpslldq`) plus that reduction: no carry-less
// multiply needed, and the work is independent of the AES rounds it runs
// beside.
// ---------------------------------------------------------------------------

/// `c * 0x87` for `c` < 2^16 in the low 64 bits of each lane (the high 64
/// bits zero): the reduction of the bits shifted out of a tweak.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn xts_reduce(c: __m256i) -> __m256i {
    let a = _mm256_xor_si256(c, _mm256_slli_epi64::<1>(c));
    let b = _mm256_xor_si256(_mm256_slli_epi64::<2>(c), _mm256_slli_epi64::<7>(c));
    _mm256_xor_si256(a, b)
}

/// Each lane's tweak times x^16: shift the lane left by two bytes, reduce
/// the two bytes that fell out.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn xts_mul_x16(x: __m256i) -> __m256i {
    _mm256_xor_si256(
        _mm256_slli_si256::<2>(x),
        xts_reduce(_mm256_srli_si256::<14>(x)),
    )
}

/// [`xts_mul_x16`] with the reduction as one carry-less multiply.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,vpclmulqdq")]
fn xts_mul_x16_clmul(x: __m256i) -> __m256i {
    let poly = _mm256_set1_epi64x(0x87);
    _mm256_xor_si256(
        _mm256_slli_si256::<2>(x),
        _mm256_clmulepi64_epi128::<0x00>(_mm256_srli_si256::<14>(x), poly),
    )
}

/// Eight tweak registers (or last-round keys) on the stack, aligned.
#[repr(C, align(32))]
struct XtsTweaks([__m256i; 8]);

/// Register j = (T_0 x^2j, T_0 x^(2j+1)), j = 0..8: the tweaks of the first
/// 16 blocks, each computed from T_0 directly (per-lane shift counts), so
/// the first AES rounds wait for one short dependency chain only.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn xts_first_tweaks(t0: __m128i) -> [__m256i; 8] {
    let b = _mm256_broadcastsi128_si256(t0);
    // Per qword: the low qword moved up (its top bits carry into the high
    // qword), and the high qword moved down (its top bits are reduced).
    let low_up = _mm256_slli_si256::<8>(b);
    let high_down = _mm256_srli_si256::<8>(b);
    // Written out with literal shift counts: as a closure over `j`, LLVM
    // kept a loop that built the counts at run time and went through the stack.
    macro_rules! reg {
        ($k:literal) => {{
            let left = _mm256_setr_epi64x($k, $k, $k + 1, $k + 1);
            let right = _mm256_setr_epi64x(64 - $k, 64 - $k, 63 - $k, 63 - $k);
            let shifted =
                _mm256_or_si256(_mm256_sllv_epi64(b, left), _mm256_srlv_epi64(low_up, right));
            let carry = _mm256_srlv_epi64(high_down, right);
            _mm256_xor_si256(shifted, xts_reduce(carry))
        }};
    }
    [
        reg!(0),
        reg!(2),
        reg!(4),
        reg!(6),
        reg!(8),
        reg!(10),
        reg!(12),
        reg!(14),
    ]
}

/// Defines an XTS kernel `$name::<R, DEC>(keys, tweak_key, tweak, io)` compiled for
/// `$features`, advancing the tweaks with `$advance` (times x^16): over the
/// whole blocks of `io` with the data key's schedule `keys` (encryption, or
/// with `DEC` the equivalent inverse cipher's), block i is
/// `cipher(in_i ^ T_i) ^ T_i`, the first XOR done on the data, the second
/// folded into the last round's key. `tweak` is T_0 on entry (or, with
/// `tweak_key`, the tweak before its encryption with that schedule) and the
/// tweak after the last block on return.
macro_rules! xts_kernel {
    ($name:ident, $features:literal, $advance:ident) => {
        #[target_feature(enable = $features)]
        fn $name<const R: usize, const DEC: bool>(
            keys: &WideKeys,
            tweak_key: Option<&WideKeys>,
            tweak: &mut Block,
            mut io: InOut<'_>,
        ) {
            let (src, dst) = io.ptrs();
            // SAFETY: `tweak` is 16 readable bytes.
            let mut t0 = unsafe { load1(tweak.as_ptr()) };
            if let Some(k2) = tweak_key {
                t0 = cipher1::<R, false>(k2, t0, _mm_setzero_si128());
            }
            // The main loop keeps the eight tweak registers, and each
            // block pair's last-round key (k_R ^ tweak), in memory: loaded
            // as operands where needed (the load ports are idle), so the
            // rounds have the eight states, a round key and spare registers
            // and nothing spills mid-round. Volatile, or LLVM would keep
            // them in registers and spill the states instead.
            let mut tweaks = XtsTweaks([_mm256_setzero_si256(); 8]);
            let mut last_keys = XtsTweaks([_mm256_setzero_si256(); 8]);
            let first = xts_first_tweaks(t0);
            for (slot, t) in tweaks.0.iter_mut().zip(first) {
                // SAFETY: a 32-byte aligned slot of a local array.
                unsafe { core::ptr::write_volatile(slot, t) };
            }
            let blocks = io.len() / 16;
            let mut done = 0;
            while blocks - done >= 16 {
                let k0 = wide_key(keys, 0);
                let kr = wide_key(keys, R);
                // SAFETY: `done + 16 <= blocks`, so the 512 bytes at
                // `16 * done` are in bounds; all loads of the chunk precede
                // its stores (in place, src == dst); the volatile accesses
                // are to aligned slots of local arrays.
                unsafe {
                    let d = load_n::<8>(src.add(16 * done));
                    let mut x = [_mm256_setzero_si256(); 8];
                    for j in 0..8 {
                        let t = core::ptr::read_volatile(&tweaks.0[j]);
                        x[j] = _mm256_xor_si256(_mm256_xor_si256(d[j], t), k0);
                        core::ptr::write_volatile(&mut last_keys.0[j], _mm256_xor_si256(kr, t));
                        core::ptr::write_volatile(&mut tweaks.0[j], $advance(t));
                    }
                    for r in 1..R {
                        let k = wide_key(keys, r);
                        for v in &mut x {
                            *v = if DEC {
                                _mm256_aesdec_epi128(*v, k)
                            } else {
                                _mm256_aesenc_epi128(*v, k)
                            };
                        }
                    }
                    for (j, v) in x.iter_mut().enumerate() {
                        let k = core::ptr::read_volatile(&last_keys.0[j]);
                        *v = if DEC {
                            _mm256_aesdeclast_epi128(*v, k)
                        } else {
                            _mm256_aesenclast_epi128(*v, k)
                        };
                    }
                    store_n::<8>(dst.add(16 * done), x);
                }
                done += 16;
            }
            // `last_keys` holds k_R ^ tweak, the last round key to anyone who
            // knows the tweak: wipe it (volatile stores are kept).
            for slot in &mut last_keys.0 {
                // SAFETY: an aligned slot of a local array.
                unsafe { core::ptr::write_volatile(slot, _mm256_setzero_si256()) };
            }
            let mut tw: [__m256i; 8] = core::array::from_fn(|j| {
                // SAFETY: an aligned slot of a local array.
                unsafe { core::ptr::read_volatile(&tweaks.0[j]) }
            });
            // The tail (under 16 blocks) from here, tweaks in registers.
            // SAFETY: `16 * done <= io.len()`.
            let (src, dst) = unsafe { (src.add(16 * done), dst.add(16 * done)) };
            macro_rules! chunk {
                ($n:literal, $at:expr) => {{
                    // SAFETY: the ladder keeps `$at + 32 * $n <= io.len()`; all
                    // loads precede the stores (in place, src == dst).
                    unsafe {
                        let d = load_n::<$n>(src.add($at));
                        let x: [__m256i; $n] =
                            core::array::from_fn(|j| _mm256_xor_si256(d[j], tw[j]));
                        let fold: [__m256i; $n] = core::array::from_fn(|j| tw[j]);
                        store_n::<$n>(dst.add($at), cipher::<$n, R, DEC>(keys, x, fold));
                    }
                    if $n == 8 {
                        for t in &mut tw {
                            *t = $advance(*t);
                        }
                    } else {
                        // A tail chunk: the remaining tweaks move down (the
                        // tail chunks use at most 4 + 2 + 1 registers in all).
                        tw = core::array::from_fn(|j| tw[(j + $n).min(7)]);
                    }
                }};
            }
            macro_rules! single {
                ($at:expr) => {{
                    let t = _mm256_castsi256_si128(tw[0]);
                    // SAFETY: `$at + 16 == io.len()`; the load precedes the store.
                    unsafe {
                        let x = _mm_xor_si128(load1(src.add($at)), t);
                        store1(dst.add($at), cipher1::<R, DEC>(keys, x, t));
                    }
                    tw[0] = _mm256_permute2x128_si256::<0x11>(tw[0], tw[0]);
                }};
            }
            ladder!(blocks - done, chunk, single);
            // SAFETY: `tweak` is 16 writable bytes.
            unsafe { store1(tweak.as_mut_ptr(), _mm256_castsi256_si128(tw[0])) };
        }
    };
}

// Measured on Zen 5 (AES-128-XTS, 16 KiB): the carry-less multiply for the
// reduction gives ~18.6 GB/s, the shift-only reduction ~16 GB/s (its five
// shifts per register compete with the AES instructions for ports). The
// shift-only kernel serves a CPU with VAES but without VPCLMULQDQ.
xts_kernel!(xts_clmul, "avx2,vaes,aes,vpclmulqdq", xts_mul_x16_clmul);
xts_kernel!(xts_shift, "avx2,vaes,aes", xts_mul_x16);

/// Calls `$f::<R, ..>(args)` with `R` the key's round count, inside an unsafe
/// block justified by the `Key`'s existence.
macro_rules! by_rounds {
    ($key:expr, $f:ident :: <_ $(, $c:tt)*> ($($arg:expr),* $(,)?)) => {{
        let rounds = $key.narrow.rounds();
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX2_FEATURES` (AES, SSSE3, AVX, AVX2, VAES) was detected,
        // which covers the kernels' `avx2,vaes,aes`.
        unsafe {
            match rounds {
                10 => $f::<10 $(, $c)*>($($arg),*),
                12 => $f::<12 $(, $c)*>($($arg),*),
                _ => $f::<14 $(, $c)*>($($arg),*),
            }
        }
    }};
}

/// [`by_rounds!`] for a kernel that also needs VPCLMULQDQ: only called when
/// `Key::clmul` is set.
macro_rules! by_rounds_clmul {
    ($key:expr, $f:ident :: <_ $(, $c:tt)*> ($($arg:expr),* $(,)?)) => {{
        let rounds = $key.narrow.rounds();
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX2_FEATURES` was detected, and `clmul` (checked by the
        // caller) is set only if VPCLMULQDQ was detected too: together they
        // cover the kernel's `avx2,vaes,aes,vpclmulqdq`.
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
    /// XTS over one data unit of whole blocks whose tweak is not encrypted
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
        let k2 = Some(&tweak_key.enc);
        super::count_xts_path(self.clmul);
        match (self.clmul, decrypt) {
            (true, false) => {
                by_rounds_clmul!(self, xts_clmul::<_, false>(&self.enc, k2, tweak, io))
            }
            (true, true) => by_rounds_clmul!(self, xts_clmul::<_, true>(&self.dec, k2, tweak, io)),
            (false, false) => by_rounds!(self, xts_shift::<_, false>(&self.enc, k2, tweak, io)),
            (false, true) => by_rounds!(self, xts_shift::<_, true>(&self.dec, k2, tweak, io)),
        }
    }
}

impl AesKernels for Key {
    fn encrypt_block(&self, block: &mut Block) {
        self.narrow.encrypt_block(block);
    }
    fn decrypt_block(&self, block: &mut Block) {
        self.narrow.decrypt_block(block);
    }
    fn ecb_encrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, false>(&self.enc, io));
    }
    fn ecb_decrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, true>(&self.dec, io));
    }
    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>) {
        self.narrow.cbc_encrypt(chain, io);
    }
    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>) {
        by_rounds!(self, feedback_decrypt::<_, true>(&self.dec, chain, io));
    }
    fn cfb128_encrypt(&self, register: &mut Block, io: InOut<'_>) {
        self.narrow.cfb128_encrypt(register, io);
    }
    fn cfb128_decrypt(&self, register: &mut Block, io: InOut<'_>) {
        by_rounds!(self, feedback_decrypt::<_, false>(&self.enc, register, io));
    }
    fn ofb(&self, register: &mut Block, io: InOut<'_>) {
        self.narrow.ofb(register, io);
    }
    fn xts_encrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        super::count_xts_path(self.clmul);
        if self.clmul {
            by_rounds_clmul!(self, xts_clmul::<_, false>(&self.enc, None, tweak, io));
        } else {
            by_rounds!(self, xts_shift::<_, false>(&self.enc, None, tweak, io));
        }
    }
    fn xts_decrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        super::count_xts_path(self.clmul);
        if self.clmul {
            by_rounds_clmul!(self, xts_clmul::<_, true>(&self.dec, None, tweak, io));
        } else {
            by_rounds!(self, xts_shift::<_, true>(&self.dec, None, tweak, io));
        }
    }
    fn ctr(&self, counter: &mut Block, width: CounterWidth, mut io: InOut<'_>) {
        let blocks = io.len() / 16;
        match width {
            CounterWidth::Low32 => {
                by_rounds!(self, ctr::<_, true>(&self.enc, counter, io));
            }
            CounterWidth::Full128 => {
                // The kernel adds to the low 64 bits without carrying: split
                // the call where they wrap (at most once per 2^64 blocks).
                let mut done = 0;
                while done < blocks {
                    let low = u64::from_be_bytes(counter[8..].try_into().unwrap_or([0; 8]));
                    let room = u128::from(u64::MAX - low) + 1;
                    let seg = (blocks - done).min(usize::try_from(room).unwrap_or(usize::MAX));
                    let (head, rest) = io.split_at(seg * 16);
                    by_rounds!(self, ctr::<_, false>(&self.enc, counter, head));
                    width.add(counter, seg as u128);
                    io = rest;
                    done += seg;
                }
                return;
            }
        }
        width.add(counter, blocks as u128);
    }
}

#[cfg(test)]
mod tests {
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
            if !k.clmul {
                eprintln!("vpclmulqdq not detected: carry-less XTS kernel not compared");
                return;
            }
            for n in (0..=70).chain([127, 128, 129, 300]) {
                let mut input = vec![0u8; 16 * n];
                rng.fill(&mut input[..]);
                let mut t0 = [0u8; 16];
                rng.fill(&mut t0);
                for dec in [false, true] {
                    let keys = if dec { &k.dec } else { &k.enc };
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

    #[test]
    fn key_is_none_or_matches_aesni_schedule() {
        let Some(k) = key(KEY256) else { return };
        for (w, n) in k.enc.0.iter().zip(k.narrow.encryption_round_keys()) {
            assert_eq!((&w[..16], &w[16..]), (&n[..], &n[..]));
        }
        for (w, n) in k.dec.0.iter().zip(k.narrow.decryption_round_keys()) {
            assert_eq!((&w[..16], &w[16..]), (&n[..], &n[..]));
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
}
