//! The AES-XTS kernels of the VAES+AVX2 backend: tweaks advanced by x^16
//! over ymm registers (by carry-less multiply, or by shifts where the CPU
//! lacks VPCLMULQDQ), 16 blocks in flight, the tweak encryption fused in
//! for one-unit calls. Not ciphertext stealing or the data-unit API
//! (`crate::modes::xts`), not the other modes (`kernels.rs`).
#![allow(unsafe_code)]

use super::kernels::*;
use super::*;

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

/// One tweak times x, without a branch: each qword shifted left by one,
/// the low qword's top bit carried into the high qword and the high
/// qword's top bit reduced as 0x87 into the low one (the dword signs,
/// shuffled to the qword they go to and masked).
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn xts_mul_x1(t: __m128i) -> __m128i {
    let tops = _mm_shuffle_epi32::<0x13>(_mm_srai_epi32::<31>(t));
    _mm_xor_si128(
        _mm_slli_epi64::<1>(t),
        _mm_and_si128(tops, _mm_set_epi32(0, 1, 0, 0x87)),
    )
}

/// `c * 0x87` for `c` < 2^16 in the low 64 bits of each lane (the high 64
/// bits zero): the reduction of the bits shifted out of a tweak.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn xts_reduce(c: __m256i) -> __m256i {
    let a = _mm256_xor_si256(c, _mm256_slli_epi64::<1>(c));
    let b = _mm256_xor_si256(_mm256_slli_epi64::<2>(c), _mm256_slli_epi64::<7>(c));
    _mm256_xor_si256(a, b)
}

/// Each lane's tweak times x^16: shift the lane left by two bytes, reduce
/// the two bytes that fell out.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn xts_mul_x16(x: __m256i) -> __m256i {
    _mm256_xor_si256(
        _mm256_slli_si256::<2>(x),
        xts_reduce(_mm256_srli_si256::<14>(x)),
    )
}

/// [`xts_mul_x16`] with the reduction as one carry-less multiply.
#[inline]
#[target_feature(enable = "avx2,vaes,aes,vpclmulqdq")]
pub(super) fn xts_mul_x16_clmul(x: __m256i) -> __m256i {
    let poly = _mm256_set1_epi64x(0x87);
    _mm256_xor_si256(
        _mm256_slli_si256::<2>(x),
        _mm256_clmulepi64_epi128::<0x00>(_mm256_srli_si256::<14>(x), poly),
    )
}

/// Eight tweak registers (or last-round keys) on the stack, aligned.
#[repr(C, align(32))]
pub(super) struct XtsTweaks([__m256i; 8]);

/// Register j = (T_0 x^2j, T_0 x^(2j+1)), j = 0..N (the rest zero): the
/// tweaks of the first 2N blocks, each computed from T_0 directly (per-lane
/// shift counts), so the first AES rounds wait for one short dependency
/// chain only. A short unit asks for the registers it uses: at 64 bytes the
/// six unused ones were a third of a call's instructions.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
pub(super) fn xts_first_tweaks<const N: usize>(t0: __m128i) -> [__m256i; 8] {
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
    let z = _mm256_setzero_si256();
    [
        reg!(0),
        if N > 1 { reg!(2) } else { z },
        if N > 2 { reg!(4) } else { z },
        if N > 3 { reg!(6) } else { z },
        if N > 4 { reg!(8) } else { z },
        if N > 5 { reg!(10) } else { z },
        if N > 6 { reg!(12) } else { z },
        if N > 7 { reg!(14) } else { z },
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
        pub(super) fn $name<const R: usize, const DEC: bool>(
            keys: &RoundKeys,
            tweak_key: Option<&RoundKeys>,
            tweak: &mut Block,
            mut io: InOut<'_>,
        ) {
            let (src, dst) = io.ptrs();
            // SAFETY: this kernel runs only where AVX was detected.
            let mut t0 = unsafe { aesni::load_halves_vex(tweak) };
            if let Some(k2) = tweak_key {
                t0 = cipher1::<R, false>(k2, t0, _mm_setzero_si128());
            }
            if io.len() <= 48 {
                // One to three blocks: on xmm, one tweak after the other,
                // without building the sixteen tweaks of the ymm path
                // (through the provider: +35% at 16 B; from 128 B on the
                // ymm path is faster). Unrolled by count, not a loop: see
                // `cipher_narrow`.
                macro_rules! narrow {
                    ($n:literal) => {{
                        let mut t = [t0; $n];
                        for slot in &mut t {
                            *slot = t0;
                            t0 = xts_mul_x1(t0);
                        }
                        // SAFETY: the `$n` blocks are in bounds (`16 * $n <=
                        // io.len()`); all loads precede the stores (in place).
                        unsafe {
                            let x: [__m128i; $n] =
                                core::array::from_fn(|j| _mm_xor_si128(load1(src.add(16 * j)), t[j]));
                            let y = cipher_narrow::<$n, R, DEC>(keys, x, t);
                            for (j, v) in y.into_iter().enumerate() {
                                store1(dst.add(16 * j), v);
                            }
                        }
                    }};
                }
                match io.len() / 16 {
                    0 => {}
                    1 => narrow!(1),
                    2 => narrow!(2),
                    _ => narrow!(3),
                }
                // SAFETY: `tweak` is 16 writable bytes.
                unsafe { store1(tweak.as_mut_ptr(), t0) };
                return;
            }
            // The main loop keeps the eight tweak registers, and each
            // block pair's last-round key (k_R ^ tweak), in memory: loaded
            // as operands where needed (the load ports are idle), so the
            // rounds have the eight states, a round key and spare registers
            // and nothing spills mid-round. Volatile, or LLVM would keep
            // them in registers and spill the states instead.
            let blocks = io.len() / 16;
            let mut done = 0;
            // Up to 4 (8) blocks the ladder below reads the first three
            // (five) registers only: those of its blocks and the one that
            // holds the tweak after the last block.
            let mut tw = if blocks <= 4 {
                xts_first_tweaks::<3>(t0)
            } else if blocks <= 8 {
                xts_first_tweaks::<5>(t0)
            } else {
                xts_first_tweaks::<8>(t0)
            };
            if blocks >= 16 {
                let mut tweaks = XtsTweaks([_mm256_setzero_si256(); 8]);
                let mut last_keys = XtsTweaks([_mm256_setzero_si256(); 8]);
                for (slot, t) in tweaks.0.iter_mut().zip(tw) {
                    // SAFETY: a 32-byte aligned slot of a local array.
                    unsafe { core::ptr::write_volatile(slot, t) };
                }
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
                            // The next iteration's tweaks halfway through
                            // the rounds, not before them: the first rounds
                            // start sooner, and the multiplies fill gaps in
                            // the AES pipes (AES-128-XTS 16 KiB on a Zen 4,
                            // `HWCRYPT_CPU=-avx512f`: +3.5%).
                            if r == R / 2 {
                                for slot in &mut tweaks.0 {
                                    let t = core::ptr::read_volatile(slot);
                                    core::ptr::write_volatile(slot, $advance(t));
                                }
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
                tw = core::array::from_fn(|j| {
                    // SAFETY: an aligned slot of a local array.
                    unsafe { core::ptr::read_volatile(&tweaks.0[j]) }
                });
                // The tweaks are key-derived too (E(K2, tweak) times x^j).
                for slot in &mut tweaks.0 {
                    // SAFETY: an aligned slot of a local array.
                    unsafe { core::ptr::write_volatile(slot, _mm256_setzero_si256()) };
                }
            }
            // The tail (under 16 blocks) from here, tweaks in registers (a
            // unit under 16 blocks wrote neither array: nothing to wipe).
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
            ladder!(@tail blocks - done, chunk, single);
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
