//! The XTS kernel of the VAES-AVX512 backend: the tweaks of the next 32
//! blocks advanced by x^32 beside the AES rounds, the tweak encryption and
//! the ciphertext stealing of a one-unit call done in the kernel. Not the
//! data-unit API (`crate::modes::xts`), not the other modes (the parent
//! module).
#![allow(unsafe_code)]

use super::*;

/// `N` registers (4N blocks) through XTS: `cipher(x ^ t) ^ t` per block,
/// with the first tweak XOR merged into round 0 (a three-way XOR) and the
/// second folded into the last round's key. The tweaks are registers
/// `at..at + N` of `tweaks`, read where they are used (volatile: see
/// [`Tweaks`]).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn xts_cipher<const N: usize, const R: usize, const DEC: bool>(
    rk: &[__m512i; 15],
    d: [__m512i; N],
    tweaks: &Tweaks,
    at: usize,
) -> [__m512i; N] {
    let mut x: [__m512i; N] = core::array::from_fn(|j| {
        _mm512_ternarylogic_epi64::<0x96>(d[j], tweaks.get(at + j), rk[0])
    });
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
        let k = _mm512_xor_si512(rk[R], tweaks.get(at + j));
        *v = if DEC {
            _mm512_aesdeclast_epi128(*v, k)
        } else {
            _mm512_aesenclast_epi128(*v, k)
        };
    }
    x
}

/// The eight tweak registers of the zmm loop, in memory. The tweaks are
/// key-derived (E(K2, tweak) times x^j): with the eight states and up to
/// fifteen round keys in registers, LLVM spilled them to stack slots it
/// never clears (`tests/stack_residue.rs`). Kept here instead, read and
/// written with volatile accesses (as operands where used: the load ports
/// are idle in the AES loop) and wiped on drop.
#[repr(C, align(64))]
struct Tweaks([__m512i; 8]);

impl Tweaks {
    #[inline(always)]
    fn get(&self, j: usize) -> __m512i {
        // SAFETY: an aligned slot of the array (`j` < 8: callers index
        // registers `at..at + N` with `at + N <= 8`; out of range panics
        // on the bounds check).
        unsafe { core::ptr::read_volatile(&self.0[j]) }
    }
    #[inline(always)]
    fn set(&mut self, j: usize, t: __m512i) {
        // SAFETY: as in `get`.
        unsafe { core::ptr::write_volatile(&mut self.0[j], t) }
    }
}

impl Drop for Tweaks {
    #[inline(always)]
    fn drop(&mut self) {
        for slot in &mut self.0 {
            // SAFETY: an aligned slot of the array; volatile stores are kept.
            unsafe { core::ptr::write_volatile(slot, core::mem::zeroed()) };
        }
    }
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
pub(super) fn xts<const R: usize, const DEC: bool>(
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
    // Up to eight whole blocks (seven for AES-256): on xmm, one tweak after
    // the other, with the round keys read from the schedule, instead of
    // broadcasting it and building 32 tweaks (a third of a 16-byte unit's
    // time went there). Through the provider on Zen 4 (TSC ticks per
    // in-place call, stock / xmm / zmm): AES-256 80 B 81 / 71 / 99, 112 B
    // 99 / 92 / 99, 128 B 107 / 119.5 / 98; AES-128 128 B 78 / 72 / 84.
    let xmm_max = if R >= 14 { 112 } else { 128 };
    if io.len() <= xmm_max && io.len().is_multiple_of(16) {
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
    // (Not the first pass's round 0 from the registers `first_tweaks`
    // computes: 512-byte units gained 3%, but without LTO LLVM then
    // spilled round keys and tweaks of AES-192/256 around that pass.)
    let mut tw = Tweaks([_mm512_setzero_si512(); 8]);
    for (j, t) in first_tweaks(t0).into_iter().enumerate() {
        tw.set(j, t);
    }
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
            let x = xts_cipher::<8, R, DEC>(&rk, d, &tw, 0);
            store_n::<8>(dst.add(16 * done), x);
        }
        done += 32;
        // After the last iteration (every unit of 32k blocks: 512 B,
        // 4 KiB) only the tweak after the unit is still needed.
        let live = if done == blocks { 1 } else { 8 };
        for j in 0..live {
            tw.set(j, mul_x32(tw.get(j)));
        }
    }
    // The tail (under 32 blocks): at most one chunk each of 4, 2 and 1
    // registers (16, 8, 4 blocks), then 1-3 blocks masked; each chunk uses
    // the tweak registers from `at` on (7 of the 8 at most).
    // SAFETY: `16 * done <= 16 * blocks <= io.len()`.
    let (mut src, mut dst) = unsafe { (src.add(16 * done), dst.add(16 * done)) };
    let mut left = blocks - done;
    let mut at = 0;
    macro_rules! chunk {
        ($n:literal) => {
            if left >= 4 * $n {
                // SAFETY: `64 * $n <= 16 * left` bytes remain at `src`/`dst`;
                // the loads precede the stores.
                unsafe {
                    let d = load_n::<$n>(src);
                    store_n::<$n>(dst, xts_cipher::<$n, R, DEC>(&rk, d, &tw, at));
                    src = src.add(64 * $n);
                    dst = dst.add(64 * $n);
                }
                at += $n;
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
            let x = xts_cipher::<1, R, DEC>(&rk, [d], &tw, at);
            _mm512_mask_storeu_epi8(dst.cast(), mask, x[0]);
        }
    }
    // (`tw` is wiped where it lies when it goes out of scope, at the end:
    // `drop(tw)` would move it and wipe the copy.)
    let mut next = lane(tw.get(at), left);
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
