//! Multi-buffer CBC encryption on zmm: four streams per register, up to
//! thirty-two in flight. The kernel body is `cbc_encrypt_lanes!`
//! (`aesni/lanes.rs`, with the contract); the scheduler is
//! `aes/cbc_many.rs`.
#![allow(unsafe_code)]

use super::*;
use crate::aes::cbc_many::{CbcLanes, Lane};

/// One block of each of the four lanes' buffers, at byte `off`.
///
/// # Safety
/// The 16 bytes at `src[w] + off` are readable for each `w`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn load4(src: &[*const u8; 4], off: usize) -> __m512i {
    // SAFETY: the caller's guarantee; unaligned loads are allowed.
    unsafe {
        let b = |w: usize| _mm_loadu_si128(src[w].add(off).cast());
        let x = _mm512_castsi128_si512(b(0));
        let x = _mm512_inserti32x4::<1>(x, b(1));
        let x = _mm512_inserti32x4::<2>(x, b(2));
        _mm512_inserti32x4::<3>(x, b(3))
    }
}

/// Stores the four lanes of `x` at byte `off` of their buffers.
///
/// # Safety
/// The 16 bytes at `dst[w] + off` are writable for each `w`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn store4(dst: &[*mut u8; 4], off: usize, x: __m512i) {
    // SAFETY: the caller's guarantee; unaligned stores are allowed.
    unsafe {
        _mm_storeu_si128(dst[0].add(off).cast(), _mm512_castsi512_si128(x));
        _mm_storeu_si128(dst[1].add(off).cast(), _mm512_extracti32x4_epi32::<1>(x));
        _mm_storeu_si128(dst[2].add(off).cast(), _mm512_extracti32x4_epi32::<2>(x));
        _mm_storeu_si128(dst[3].add(off).cast(), _mm512_extracti32x4_epi32::<3>(x));
    }
}

/// `[a, b, c, d]` (one register per lane, four blocks each) to one
/// register per block index (one block per lane), or back: the 4 x 4
/// transpose of 128-bit blocks, its own inverse.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn transpose4(l: [__m512i; 4]) -> [__m512i; 4] {
    let t0 = _mm512_shuffle_i64x2::<0x44>(l[0], l[1]); // a0 a1 b0 b1
    let t1 = _mm512_shuffle_i64x2::<0xee>(l[0], l[1]); // a2 a3 b2 b3
    let t2 = _mm512_shuffle_i64x2::<0x44>(l[2], l[3]); // c0 c1 d0 d1
    let t3 = _mm512_shuffle_i64x2::<0xee>(l[2], l[3]); // c2 c3 d2 d3
    [
        _mm512_shuffle_i64x2::<0x88>(t0, t2), // a0 b0 c0 d0
        _mm512_shuffle_i64x2::<0xdd>(t0, t2), // a1 b1 c1 d1
        _mm512_shuffle_i64x2::<0x88>(t1, t3), // a2 b2 c2 d2
        _mm512_shuffle_i64x2::<0xdd>(t1, t3), // a3 b3 c3 d3
    ]
}

/// Blocks `off / 16 ..+ 4` of each of the four lanes' buffers, one register
/// per block index.
///
/// # Safety
/// The 64 bytes at `src[w] + off` are readable for each `w`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn chunk_load4(src: &[*const u8; 4], off: usize) -> [__m512i; 4] {
    // SAFETY: the caller's guarantee; unaligned loads are allowed.
    transpose4(src.map(|p| unsafe { _mm512_loadu_si512(p.add(off).cast()) }))
}

/// Stores four registers (one per block index) as 64 bytes of each lane.
///
/// # Safety
/// The 64 bytes at `dst[w] + off` are writable for each `w`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
unsafe fn chunk_store4(dst: &[*mut u8; 4], off: usize, x: [__m512i; 4]) {
    let l = transpose4(x);
    for w in 0..4 {
        // SAFETY: the caller's guarantee; unaligned stores are allowed.
        unsafe { _mm512_storeu_si512(dst[w].add(off).cast(), l[w]) };
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn key4(b: &[Block; 4]) -> __m512i {
    // SAFETY: 64 readable bytes, 64-byte aligned (`PassPlan` is
    // 64-byte aligned, its keys a whole number of registers from its start).
    unsafe { core::ptr::read_volatile(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn get4(b: &[Block; 4]) -> __m512i {
    // SAFETY: 64 readable bytes.
    unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
fn put4(b: &mut [Block; 4], x: __m512i) {
    // SAFETY: 64 writable bytes.
    unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), x) }
}

cbc_encrypt_lanes! {
    /// CBC encryption of `4 * G` streams, four per zmm register.
    ///
    /// # Safety
    /// The features of `VAES_AVX512_FEATURES`; the lanes' kernel contract.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq,aes")]
    fn cbc_enc_lanes, W = 4, S = 4, zero = _mm512_setzero_si512(),
    chunk_load = chunk_load4, chunk_store = chunk_store4, load = load4, store = store4, key = key4, get = get4, put = put4,
    xor = _mm512_xor_si512, enc = _mm512_aesenc_epi128, last = _mm512_aesenclast_epi128,
}

impl CbcLanes for Key {
    const W: usize = 4;
    const GROUPS: usize = 4;
    fn rounds(&self) -> usize {
        self.base.narrow().rounds()
    }
    fn round_keys(&self) -> &RoundKeys {
        self.base.narrow().enc_keys()
    }
    fn pass(lanes: &mut [Lane<'_, Self>], blocks: usize) {
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX512_FEATURES` was detected (`Key::boxed`), which covers
        // the kernel's, and `lanes` holds at least one; `PassPlan::new`
        // takes each lane's pointers from its `InOut` of `16 * blocks`
        // bytes, equal in place or not overlapping, and lanes come from
        // distinct streams (repeated lanes aside): the kernel contract.
        unsafe { cbc_lanes_dispatch!(cbc_enc_lanes, 4, [1 2 3 4], lanes, blocks) }
    }
    fn serial(lane: Lane<'_, Self>) {
        lane.key.cbc_encrypt(lane.chain, lane.io);
    }
}
