//! The block kernels of the VAES+AVX2 backend: register-level helpers
//! (wide and narrow round keys, the cipher over N ymm registers, loads and
//! stores, the `ladder!` of batch sizes) and the ECB, CBC/CFB decryption and
//! CTR kernels, 16 blocks in flight. Not the key type or the dispatch
//! (`vaes_avx2.rs`), not XTS (`xts.rs`), not the serial modes (CBC/CFB
//! encryption, OFB), which run on the AES-NI kernels.
#![allow(unsafe_code)]

use super::*;

// ---------------------------------------------------------------------------
// Register-level helpers. All are safe `#[target_feature]` functions that
// inline into the kernels (same feature set).
// ---------------------------------------------------------------------------

/// Round key `r`, in both lanes: `vbroadcasti128` straight from the
/// schedule (a load-port operation, no shuffle).
///
/// The load is an `asm!` block that LLVM must treat as having side effects
/// (no `pure`), so it is neither hoisted nor merged: otherwise LLVM hoists
/// all 11-15 round keys out of the block loop into registers, leaving too
/// few for eight blocks in flight, and spills the data (or the keys, onto
/// the stack) instead. One load per round per iteration (the load ports are
/// idle) keeps 8 data registers + 1 key register live.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn wide_key(keys: &RoundKeys, r: usize) -> __m256i {
    // Miri runs no inline assembly: a volatile load and a broadcast there.
    #[cfg(miri)]
    // SAFETY: the 16 readable, 16-byte aligned bytes of `keys.0[r]`.
    return _mm256_broadcastsi128_si256(unsafe {
        core::ptr::read_volatile(keys.0[r].as_ptr().cast::<__m128i>())
    });
    #[cfg(not(miri))]
    let k: __m256i;
    // SAFETY: the instruction reads the 16 bytes of `keys.0[r]` (readable,
    // in bounds: indexing checked `r`) and writes only the output register.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!(
            "vbroadcasti128 {k}, xmmword ptr [{p}]",
            k = lateout(ymm_reg) k,
            p = in(reg) keys.0[r].as_ptr(),
            options(readonly, nostack, preserves_flags),
        );
    }
    #[cfg(not(miri))]
    k
}

/// Round key `r`, one lane.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn narrow_key(keys: &RoundKeys, r: usize) -> __m128i {
    // SAFETY: the 16 readable bytes of `keys.0[r]`, 16-byte aligned
    // (`RoundKeys` is `align(16)` with 16-byte elements).
    unsafe { _mm_load_si128(keys.0[r].as_ptr().cast()) }
}

/// `N` registers (2N blocks) through `R` rounds of AES encryption (or, with
/// `DEC`, the equivalent inverse cipher), with `fold[j]` XORed into the output
/// for free: `last(x, k_R ^ fold)` equals `last(x, k_R) ^ fold`.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn cipher<const N: usize, const R: usize, const DEC: bool>(
    keys: &RoundKeys,
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

/// `N` blocks through the cipher on xmm, each round key loaded once for
/// all of them, `fold[j]` XORed into block j's output as in [`cipher`]. A
/// loop of [`cipher1`] calls instead would let LLVM hoist the round keys
/// out of the loop: fifteen of them do not fit the sixteen registers beside
/// the data, and the ones it spilled stayed on the stack.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn cipher_narrow<const N: usize, const R: usize, const DEC: bool>(
    keys: &RoundKeys,
    mut x: [__m128i; N],
    fold: [__m128i; N],
) -> [__m128i; N] {
    let k = narrow_key(keys, 0);
    for v in &mut x {
        *v = _mm_xor_si128(*v, k);
    }
    for r in 1..R {
        let k = narrow_key(keys, r);
        for v in &mut x {
            *v = if DEC {
                _mm_aesdec_si128(*v, k)
            } else {
                _mm_aesenc_si128(*v, k)
            };
        }
    }
    let k = narrow_key(keys, R);
    for (v, f) in x.iter_mut().zip(fold) {
        let k = _mm_xor_si128(k, f);
        *v = if DEC {
            _mm_aesdeclast_si128(*v, k)
        } else {
            _mm_aesenclast_si128(*v, k)
        };
    }
    x
}

/// One block through the cipher on xmm (the odd block of a tail).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn cipher1<const R: usize, const DEC: bool>(
    keys: &RoundKeys,
    x: __m128i,
    fold: __m128i,
) -> __m128i {
    cipher_narrow::<1, R, DEC>(keys, [x], [fold])[0]
}

/// Loads `N` registers (2N blocks) from `p`.
///
/// # Safety
/// `p` must be valid for reading `32 * N` bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) unsafe fn load_n<const N: usize>(p: *const u8) -> [__m256i; N] {
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
pub(super) unsafe fn store_n<const N: usize>(p: *mut u8, x: [__m256i; N]) {
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
pub(super) unsafe fn previous_n<const N: usize>(
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
pub(super) unsafe fn load1(p: *const u8) -> __m128i {
    // SAFETY: the caller's 16 bytes; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(p.cast()) }
}

/// Stores one block at `p`.
///
/// # Safety
/// `p` must be valid for writing 16 bytes.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) unsafe fn store1(p: *mut u8, x: __m128i) {
    // SAFETY: the caller's 16 bytes; unaligned stores are allowed.
    unsafe { _mm_storeu_si128(p.cast(), x) }
}

/// Runs a kernel over `blocks` blocks: `$chunk!(N, offset)` for N = 8 while
/// 16 blocks remain, then at most one each of N = 4, 2, 1, then
/// `$single!(offset)` for a last odd block. Offsets are in bytes.
/// `ladder!(@tail ...)` is the same for fewer than 16 blocks (the caller's
/// own main loop took the rest): no 8-register code for LLVM to allocate
/// registers around.
macro_rules! ladder {
    ($blocks:expr, $chunk:ident, $single:ident) => {{
        let blocks: usize = $blocks;
        let mut i = 0;
        while blocks - i >= 16 {
            $chunk!(8, 16 * i);
            i += 16;
        }
        ladder!(@from i, blocks, $chunk, $single);
    }};
    (@tail $blocks:expr, $chunk:ident, $single:ident) => {{
        let blocks: usize = $blocks;
        debug_assert!(blocks < 16);
        ladder!(@from 0, blocks, $chunk, $single);
    }};
    (@from $i:expr, $blocks:ident, $chunk:ident, $single:ident) => {{
        let blocks = $blocks;
        let mut i = $i;
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
pub(super) fn ecb<const R: usize, const DEC: bool>(keys: &RoundKeys, mut io: InOut<'_>) {
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
pub(super) fn feedback_decrypt<const R: usize, const CBC: bool>(
    keys: &RoundKeys,
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
pub(super) fn bswap_mask() -> __m256i {
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
pub(super) fn add_lanes<const LOW32: bool>(x: __m256i, n: u32) -> __m256i {
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
pub(super) fn ctr<const R: usize, const LOW32: bool>(
    keys: &RoundKeys,
    counter: &Block,
    mut io: InOut<'_>,
) {
    let (src, dst) = io.ptrs();
    // SAFETY: this kernel runs only where AVX was detected.
    let first = unsafe { aesni::load_halves_vex(counter) };
    if io.len() == 16 {
        // One block: the counter block goes to the rounds as loaded, with
        // no byte swaps on the way (the last round folds the data in).
        // SAFETY: `io` is these 16 bytes; the load precedes the store.
        unsafe {
            let d = load1(src);
            store1(dst, cipher1::<R, false>(keys, first, d));
        }
        return;
    }
    let bswap = bswap_mask();
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
