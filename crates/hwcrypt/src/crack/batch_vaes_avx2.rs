//! Batched filter on VAES + AVX2: two keys per ymm register (one per
//! 128-bit lane), `G` registers interleaved. The decryption round keys come
//! from `vaesdec(vaesenclast(x, 0), 0)` = InvMixColumns(x), since there is
//! no wide `aesimc`.
#![allow(unsafe_code)]

use super::kernel::{self, KeyBatch, Lanes};
use super::predicate::Plan;
use crate::aes::{Block, KeySize};
use crate::registry::VAES_AVX2_FEATURES;
use core::arch::x86_64::*;

/// Registers whose schedules are expanded side by side (see `kernel::filter`).
const P: usize = 4;

/// Registers per batch: 16 ymm (32 keys), expanded four at a time (see
/// `P`); larger batches amortise the per-batch verdicts (measured: 4
/// registers per batch ~30% slower, 8 ~5%).
const G: usize = 16;
/// Keys per batch.
pub(crate) const BATCH: usize = 2 * G;

/// Two AES blocks in a ymm register. Made only from a [`Kernel`], which
/// exists only after VAES and AVX2 were detected.
#[derive(Clone, Copy)]
pub(crate) struct Ymm(__m256i);

batch_kernel! {
    reg: Ymm,
    zero: _mm256_setzero_si256(),
    features: VAES_AVX2_FEATURES,
    target: "aes,ssse3,avx,avx2,vaes",
    regs: G,
    side_by_side: P,
}

// SAFETY (for every block below): a `Ymm` exists only after VAES and AVX2
// were detected (see `Kernel`), so the intrinsics may run; loads and stores
// slice first, which checks the bounds.
impl Lanes for Ymm {
    const LANES: usize = 2;

    #[inline(always)]
    fn load(self, p: &[Block]) -> Self {
        let b = &p[..2];
        // SAFETY: 32 readable bytes; unaligned load.
        Ymm(unsafe { _mm256_loadu_si256(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, p: &mut [Block]) {
        let b = &mut p[..2];
        // SAFETY: 32 writable bytes; unaligned store.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn splat(self, b: &Block) -> Self {
        // SAFETY: 16 readable bytes; see the impl comment.
        Ymm(unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(b.as_ptr().cast())) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
    #[inline(always)]
    fn enc(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn enc_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesdec_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesdeclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn imc(self) -> Self {
        // SAFETY: see the impl comment.
        let z = unsafe { _mm256_setzero_si256() };
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesdec_epi128(_mm256_aesenclast_epi128(self.0, z), z) })
    }
    #[inline(always)]
    fn shuffle(self, ctrl: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_shuffle_epi8(self.0, ctrl.0) })
    }
    #[inline(always)]
    fn shl4(self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_bslli_epi128::<4>(self.0) })
    }
    #[inline(always)]
    fn shl8(self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_bslli_epi128::<8>(self.0) })
    }
    #[inline(always)]
    fn unpack_lo64(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_unpacklo_epi64(self.0, o.0) })
    }
    #[inline(always)]
    fn align8(self, lo: Self) -> Self {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_alignr_epi8::<8>(self.0, lo.0) })
    }
    #[inline(always)]
    fn eq_bits(self, o: Self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { _mm256_movemask_epi8(_mm256_cmpeq_epi8(self.0, o.0)) as u32 as u64 }
    }
    #[inline(always)]
    fn non_text_bits(self, utf8: bool) -> u64 {
        let x = self.0;
        // SAFETY: see the impl comment.
        unsafe {
            let b = |v: u8| _mm256_set1_epi8(v as i8);
            let eq = |v: u8| _mm256_cmpeq_epi8(x, b(v));
            let ctrl = _mm256_cmpeq_epi8(_mm256_min_epu8(x, b(0x1f)), x);
            let ws = _mm256_or_si256(_mm256_or_si256(eq(b'\t'), eq(b'\n')), eq(b'\r'));
            let mut bad = _mm256_or_si256(_mm256_andnot_si256(ws, ctrl), eq(0x7f));
            let bits = if utf8 {
                let high = _mm256_cmpeq_epi8(_mm256_max_epu8(x, b(0xf5)), x);
                bad = _mm256_or_si256(
                    _mm256_or_si256(bad, high),
                    _mm256_or_si256(eq(0xc0), eq(0xc1)),
                );
                _mm256_movemask_epi8(bad)
            } else {
                _mm256_movemask_epi8(bad) | _mm256_movemask_epi8(x)
            };
            bits as u32 as u64
        }
    }
}
