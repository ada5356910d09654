//! Batched filter on AES-NI: one key per xmm register, `G` keys interleaved.
#![allow(unsafe_code)]

use super::kernel::{self, KeyBatch, Lanes};
use super::predicate::Plan;
use crate::aes::{Block, KeySize};
use crate::registry::AESNI_FEATURES;
use core::arch::x86_64::*;

/// Registers whose schedules are expanded side by side (see `kernel::filter`).
const P: usize = 4;

/// Keys per batch: 16 xmm registers' worth, expanded four at a time (see
/// `P`); larger batches amortise the per-batch verdicts (measured: 8 keys
/// ~10% slower, 4 registers side by side beat 2 and 8).
pub(crate) const BATCH: usize = 16;

/// One AES block in an xmm register. Made only by [`Kernel::token`], which
/// exists only after AES-NI and SSSE3 were detected.
#[derive(Clone, Copy)]
pub(crate) struct Xmm(__m128i);

batch_kernel! {
    reg: Xmm,
    zero: _mm_setzero_si128(),
    features: AESNI_FEATURES,
    target: "aes,ssse3",
    regs: BATCH,
    side_by_side: P,
}

// SAFETY (for every block below): an `Xmm` exists only after AES-NI and
// SSSE3 were detected (see `Kernel`), so the intrinsics may run; loads and
// stores index the slice first, which checks the bounds.
impl Lanes for Xmm {
    const LANES: usize = 1;

    #[inline(always)]
    fn load(self, p: &[Block]) -> Self {
        let b = &p[0];
        // SAFETY: 16 readable bytes; unaligned load.
        Xmm(unsafe { _mm_loadu_si128(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, p: &mut [Block]) {
        let b = &mut p[0];
        // SAFETY: 16 writable bytes; unaligned store.
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn splat(self, b: &Block) -> Self {
        // SAFETY: 16 readable bytes; unaligned load.
        Xmm(unsafe { _mm_loadu_si128(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_xor_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn enc(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_aesenc_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn enc_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_aesenclast_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_aesdec_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_aesdeclast_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn imc(self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_aesimc_si128(self.0) })
    }
    #[inline(always)]
    fn shuffle(self, ctrl: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_shuffle_epi8(self.0, ctrl.0) })
    }
    #[inline(always)]
    fn shl4(self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_slli_si128::<4>(self.0) })
    }
    #[inline(always)]
    fn shl8(self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_slli_si128::<8>(self.0) })
    }
    #[inline(always)]
    fn unpack_lo64(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_unpacklo_epi64(self.0, o.0) })
    }
    #[inline(always)]
    fn align8(self, lo: Self) -> Self {
        // SAFETY: see the impl comment.
        Xmm(unsafe { _mm_alignr_epi8::<8>(self.0, lo.0) })
    }
    #[inline(always)]
    fn eq_bits(self, o: Self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(self.0, o.0)) as u16 as u64 }
    }
    #[inline(always)]
    fn non_text_bits(self, utf8: bool) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { non_text(self.0, utf8) as u64 }
    }
}

/// Bit per byte: certainly not text (see `predicate::certainly_not_text`).
#[inline(always)]
unsafe fn non_text(x: __m128i, utf8: bool) -> u16 {
    // SAFETY: SSE2 only (part of x86-64), on registers.
    unsafe {
        let b = |v: u8| _mm_set1_epi8(v as i8);
        let eq = |v: u8| _mm_cmpeq_epi8(x, b(v));
        // x <= 0x1f unsigned: min(x, 0x1f) == x.
        let ctrl = _mm_cmpeq_epi8(_mm_min_epu8(x, b(0x1f)), x);
        let ws = _mm_or_si128(_mm_or_si128(eq(b'\t'), eq(b'\n')), eq(b'\r'));
        let mut bad = _mm_or_si128(_mm_andnot_si128(ws, ctrl), eq(0x7f));
        if utf8 {
            let high = _mm_cmpeq_epi8(_mm_max_epu8(x, b(0xf5)), x);
            bad = _mm_or_si128(_mm_or_si128(bad, high), _mm_or_si128(eq(0xc0), eq(0xc1)));
            _mm_movemask_epi8(bad) as u16
        } else {
            (_mm_movemask_epi8(bad) | _mm_movemask_epi8(x)) as u16
        }
    }
}
