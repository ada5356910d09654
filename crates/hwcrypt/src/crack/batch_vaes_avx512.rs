//! Batched filter on VAES + AVX-512: four keys per zmm register (one per
//! 128-bit lane), `G` registers interleaved; byte compares land in mask
//! registers. InvMixColumns for the decryption round keys is
//! `vaesdec(vaesenclast(x, 0), 0)` (there is no wide `aesimc`).
#![allow(unsafe_code)]

use super::kernel::{self, KeyBatch, Lanes};
use super::predicate::Plan;
use crate::aes::{Block, KeySize};
use crate::registry::VAES_AVX512_FEATURES;
use core::arch::x86_64::*;

/// Registers whose schedules are expanded side by side (see `kernel::filter`).
const P: usize = 4;

/// Registers per batch: 16 zmm (64 keys, the most a `u64` pass mask
/// holds), expanded four at a time (see `P`).
const G: usize = 16;
/// Keys per batch.
pub(crate) const BATCH: usize = 4 * G;

/// Four AES blocks in a zmm register. Made only from a [`Kernel`], which
/// exists only after VAES and AVX-512 F/BW/VL were detected.
#[derive(Clone, Copy)]
pub(crate) struct Zmm(__m512i);

batch_kernel! {
    reg: Zmm,
    zero: _mm512_setzero_si512(),
    features: VAES_AVX512_FEATURES,
    target: "aes,ssse3,avx,avx2,vaes,avx512f,avx512bw,avx512vl",
    regs: G,
    side_by_side: P,
}

// SAFETY (for every block below): a `Zmm` exists only after VAES and
// AVX-512 F/BW/VL were detected (see `Kernel`), so the intrinsics may run;
// loads and stores slice first, which checks the bounds.
impl Lanes for Zmm {
    const LANES: usize = 4;

    #[inline(always)]
    fn load(self, p: &[Block]) -> Self {
        let b = &p[..4];
        // SAFETY: 64 readable bytes; unaligned load.
        Zmm(unsafe { _mm512_loadu_si512(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, p: &mut [Block]) {
        let b = &mut p[..4];
        // SAFETY: 64 writable bytes; unaligned store.
        unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn splat(self, b: &Block) -> Self {
        // SAFETY: 16 readable bytes; see the impl comment.
        Zmm(unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(b.as_ptr().cast())) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_xor_si512(self.0, o.0) })
    }
    #[inline(always)]
    fn enc(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn enc_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesdec_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn dec_last(self, k: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesdeclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn imc(self) -> Self {
        // SAFETY: see the impl comment.
        let z = unsafe { _mm512_setzero_si512() };
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesdec_epi128(_mm512_aesenclast_epi128(self.0, z), z) })
    }
    #[inline(always)]
    fn shuffle(self, ctrl: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_shuffle_epi8(self.0, ctrl.0) })
    }
    #[inline(always)]
    fn shl4(self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_bslli_epi128::<4>(self.0) })
    }
    #[inline(always)]
    fn shl8(self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_bslli_epi128::<8>(self.0) })
    }
    #[inline(always)]
    fn unpack_lo64(self, o: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_unpacklo_epi64(self.0, o.0) })
    }
    #[inline(always)]
    fn align8(self, lo: Self) -> Self {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_alignr_epi8::<8>(self.0, lo.0) })
    }
    #[inline(always)]
    fn eq_bits(self, o: Self) -> u64 {
        // SAFETY: see the impl comment.
        unsafe { _mm512_cmpeq_epi8_mask(self.0, o.0) }
    }
    #[inline(always)]
    fn non_text_bits(self, utf8: bool) -> u64 {
        let x = self.0;
        // SAFETY: see the impl comment.
        unsafe {
            let b = |v: u8| _mm512_set1_epi8(v as i8);
            let eq = |v: u8| _mm512_cmpeq_epi8_mask(x, b(v));
            let ctrl = _mm512_cmple_epu8_mask(x, b(0x1f));
            let ws = eq(b'\t') | eq(b'\n') | eq(b'\r');
            let bad = (ctrl & !ws) | eq(0x7f);
            if utf8 {
                bad | _mm512_cmpge_epu8_mask(x, b(0xf5)) | eq(0xc0) | eq(0xc1)
            } else {
                bad | _mm512_movepi8_mask(x)
            }
        }
    }
}
