//! Multi-buffer CBC encryption on ymm: two streams per register, up to
//! sixteen in flight. The kernel body is `cbc_encrypt_lanes!`
//! (`aesni/lanes.rs`, with the contract); the scheduler is
//! `aes/cbc_many.rs`.
#![allow(unsafe_code)]

use super::*;
use crate::aes::cbc_many::{CbcLanes, Lane};

/// One block of each of the two lanes' buffers, at byte `off`.
///
/// # Safety
/// The 16 bytes at `src[0] + off` and at `src[1] + off` are readable.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn load2(src: &[*const u8; 2], off: usize) -> __m256i {
    // SAFETY: the caller's guarantee; unaligned loads are allowed.
    unsafe {
        let lo = _mm_loadu_si128(src[0].add(off).cast());
        let hi = _mm_loadu_si128(src[1].add(off).cast());
        _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
    }
}

/// Stores the two lanes of `x` at byte `off` of their buffers.
///
/// # Safety
/// The 16 bytes at `dst[0] + off` and at `dst[1] + off` are writable.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn store2(dst: &[*mut u8; 2], off: usize, x: __m256i) {
    // SAFETY: the caller's guarantee; unaligned stores are allowed.
    unsafe {
        _mm_storeu_si128(dst[0].add(off).cast(), _mm256_castsi256_si128(x));
        _mm_storeu_si128(dst[1].add(off).cast(), _mm256_extracti128_si256::<1>(x));
    }
}

/// `[a, b]` (one register per lane, two blocks each) to one register per
/// block index (one block per lane), or back: its own inverse.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn transpose2(l: [__m256i; 2]) -> [__m256i; 2] {
    [
        _mm256_permute2x128_si256::<0x20>(l[0], l[1]), // a0 b0
        _mm256_permute2x128_si256::<0x31>(l[0], l[1]), // a1 b1
    ]
}

/// Blocks `off / 16` and `off / 16 + 1` of both lanes' buffers, one
/// register per block index.
///
/// # Safety
/// The 32 bytes at `src[w] + off` are readable for each `w`.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn chunk_load2(src: &[*const u8; 2], off: usize) -> [__m256i; 2] {
    // SAFETY: the caller's guarantee; unaligned loads are allowed.
    transpose2(src.map(|p| unsafe { _mm256_loadu_si256(p.add(off).cast()) }))
}

/// Stores two registers (one per block index) as 32 bytes of each lane.
///
/// # Safety
/// The 32 bytes at `dst[w] + off` are writable for each `w`.
#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
unsafe fn chunk_store2(dst: &[*mut u8; 2], off: usize, x: [__m256i; 2]) {
    let l = transpose2(x);
    for w in 0..2 {
        // SAFETY: the caller's guarantee; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(dst[w].add(off).cast(), l[w]) };
    }
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn key2(b: &[Block; 2]) -> __m256i {
    // SAFETY: 32 readable bytes, 32-byte aligned (`PassPlan` is
    // 64-byte aligned, its keys a whole number of registers from its start).
    unsafe { core::ptr::read_volatile(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn get2(b: &[Block; 2]) -> __m256i {
    // SAFETY: 32 readable bytes.
    unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "avx2,vaes,aes")]
fn put2(b: &mut [Block; 2], x: __m256i) {
    // SAFETY: 32 writable bytes.
    unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), x) }
}

cbc_encrypt_lanes! {
    /// CBC encryption of `2 * G` streams, two per ymm register.
    ///
    /// # Safety
    /// AVX2, VAES and AES-NI are present; the lanes' kernel contract.
    #[target_feature(enable = "avx2,vaes,aes")]
    fn cbc_enc_lanes, W = 2, S = 2, zero = _mm256_setzero_si256(),
    chunk_load = chunk_load2, chunk_store = chunk_store2, load = load2, store = store2, key = key2, get = get2, put = put2,
    xor = _mm256_xor_si256, enc = _mm256_aesenc_epi128, last = _mm256_aesenclast_epi128,
}

impl CbcLanes for Key {
    const W: usize = 2;
    const GROUPS: usize = 8;
    fn rounds(&self) -> usize {
        self.narrow.rounds()
    }
    fn round_keys(&self) -> &RoundKeys {
        self.enc()
    }
    fn pass(lanes: &mut [Lane<'_, Self>], blocks: usize) {
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX2_FEATURES` was detected (`Key::boxed`), which covers
        // `avx2,vaes,aes`, and `lanes` holds at least one; `PassPlan::new`
        // takes each lane's pointers from its `InOut` of `16 * blocks`
        // bytes, equal in place or not overlapping, and lanes come from
        // distinct streams (repeated lanes aside): the kernel contract.
        unsafe { cbc_lanes_dispatch!(cbc_enc_lanes, 2, [1 2 3 4 5 6 7 8], lanes, blocks) }
    }
    fn serial(lane: Lane<'_, Self>) {
        lane.key.cbc_encrypt(lane.chain, lane.io);
    }
}
