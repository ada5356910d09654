//! Multi-buffer CBC encryption on xmm (one stream per register, eight in
//! flight), and `cbc_encrypt_lanes!`, the kernel body every register width
//! instantiates (`vaes_avx2/lanes.rs`, `vaes_avx512/lanes.rs`). The
//! scheduler and the lane layout are in `aes/cbc_many.rs`.
//!
//! The lanes' kernel contract (`unsafe fn kernel::<G, R>(plan, blocks)`):
//! the features the instantiation names are present; every `plan.src` and
//! `plan.dst` pointer covers `16 * blocks` bytes, readable and writable
//! respectively; a lane's `src` and `dst` are equal (in place) or do not
//! overlap, and apart from repeated lanes (equal to lane 0 in everything) no
//! two lanes' `dst` regions overlap each other or another lane's `src`;
//! `plan.keys[g][r]` holds lane round keys for `r <= R`. The kernel loads
//! every lane's blocks of a chunk (or of a single step) before it stores
//! any of them, and stores a block only after every lane's load of it,
//! which is what makes repeated lanes sound in place.
#![allow(unsafe_code)]

use super::*;
use crate::aes::cbc_many::{CbcLanes, Lane};

/// Defines `unsafe fn $name<const G: usize, const R: usize>(plan: &mut
/// PassPlan<G, W>, blocks: usize)`: CBC encryption of `G` registers of `W`
/// lanes for `blocks` blocks each, under the contract in this file's docs.
///
/// The blocks move in chunks of `S` per lane: `chunk_load` reads `S`
/// consecutive blocks of each of a register's `W` lanes (one wide load per
/// lane) and transposes them into `S` registers, one per step, and
/// `chunk_store` does the reverse; blocks past the last whole chunk move one
/// step at a time (`load`/`store`: the block at byte `off` of every lane).
/// (`S` is 4 on zmm, 2 on ymm, 1 on xmm.) A chunk touches each cache line
/// of a lane once: streams whose buffers share their offset modulo 4 KiB
/// (consecutive sectors) crowd one L1 set, and there block-by-block access
/// revisits every line four times (16 such streams on `vaes-avx512`: 4.3
/// GB/s block by block, 7.7 in chunks of four).
/// `key` loads the round keys of a register's lanes (`[Block; W]`, aligned
/// to the register size) with a volatile load at every use: LLVM would
/// otherwise hoist all `G x (R + 1)` of them out of the loop, more than the
/// registers hold, and spill and reload them between the rounds. `get`/`put`
/// move `[Block; W]` (chaining values) to and from a register.
macro_rules! cbc_encrypt_lanes {
    (
        $(#[$attr:meta])*
        fn $name:ident, W = $w:literal, S = $s:literal, zero = $zero:expr,
        chunk_load = $chunk_load:path, chunk_store = $chunk_store:path,
        load = $load:path, store = $store:path, key = $key:path, get = $get:path, put = $put:path,
        xor = $xor:path, enc = $enc:path, last = $last:path $(,)?
    ) => {
        $(#[$attr])*
        pub(crate) unsafe fn $name<const G: usize, const R: usize, const SHARED: bool>(
            plan: &mut $crate::aes::cbc_many::PassPlan<G, $w>,
            blocks: usize,
        ) {
            let mut c = [$zero; G];
            for g in 0..G {
                c[g] = $get(&plan.chains[g]);
            }
            let k = &plan.keys;
            // One key for every lane: its round keys stay in registers
            // (plain loads, hoisted), not loaded per round and lane group.
            let mut kk = [$zero; 15];
            if SHARED {
                for r in 0..=R {
                    kk[r] = $get(&plan.keys[0][r]);
                }
            }
            let mut i = 0;
            let mut chunk = [[$zero; $s]; G];
            if blocks >= $s {
                for g in 0..G {
                    // SAFETY: blocks `0..S <= blocks` of every lane are
                    // readable (the lanes' kernel contract).
                    chunk[g] = unsafe { $chunk_load(&plan.src[g], 0) };
                }
            }
            while blocks - i >= $s {
                cbc_encrypt_lanes!(@steps $s, $xor, $enc, $last, $key, R, k, kk, c, chunk, 0 1 2 3 4 5 6 7);
                // The next chunk is loaded before this one is stored: a
                // load after a store to the same offset modulo 4 KiB waits
                // for that store, and streams in buffers of their own sit
                // 16 bytes apart modulo 4 KiB (one malloc header), so the
                // other order stalled every chunk (16 streams of 16 KiB on
                // vaes-avx512: 8.5 GB/s that way).
                let mut next = [[$zero; $s]; G];
                if blocks - i >= 2 * $s {
                    for g in 0..G {
                        // SAFETY: blocks `i + S..i + 2S <= blocks` of every
                        // lane are readable and not stored yet.
                        next[g] = unsafe { $chunk_load(&plan.src[g], 16 * (i + $s)) };
                    }
                }
                for g in 0..G {
                    // SAFETY: blocks `i..i + S` of every lane are writable;
                    // every lane loaded them, before this first store (the
                    // lanes' kernel contract).
                    unsafe { $chunk_store(&plan.dst[g], 16 * i, chunk[g]) };
                }
                chunk = next;
                i += $s;
            }
            while i < blocks {
                let off = 16 * i;
                let mut x = [$zero; G];
                for g in 0..G {
                    // SAFETY: block `i < blocks` of every lane is readable.
                    let p = unsafe { $load(&plan.src[g], off) };
                    x[g] = $xor($xor(p, c[g]), if SHARED { kk[0] } else { $key(&k[g][0]) });
                }
                cbc_encrypt_lanes!(@rounds $enc, $key, R, k, kk, x, 1 2 3 4 5 6 7 8 9 10 11 12 13);
                for g in 0..G {
                    c[g] = $last(x[g], if SHARED { kk[R] } else { $key(&k[g][R]) });
                    // SAFETY: block `i` of every lane is writable; every
                    // lane loaded it above, before this first store.
                    unsafe { $store(&plan.dst[g], off, c[g]) };
                }
                i += 1;
            }
            for g in 0..G {
                $put(&mut plan.chains[g], c[g]);
            }
        }
    };
    // The steps of a chunk written out, so that `chunk` stays in registers
    // (a loop over `j` leaves it on the stack, and its stores there can
    // alias the round-key loads modulo 4 KiB).
    (@steps $s:literal, $xor:path, $enc:path, $last:path, $key:path, $R:ident, $k:ident, $kk:ident,
     $c:ident, $chunk:ident, $($j:literal)*) => {
        $(
            if $j < $s {
                let mut x = [$c[0]; G];
                for g in 0..G {
                    x[g] = $xor($xor($chunk[g][$j], $c[g]), if SHARED { $kk[0] } else { $key(&$k[g][0]) });
                }
                cbc_encrypt_lanes!(@rounds $enc, $key, $R, $k, $kk, x, 1 2 3 4 5 6 7 8 9 10 11 12 13);
                for g in 0..G {
                    $c[g] = $last(x[g], if SHARED { $kk[$R] } else { $key(&$k[g][$R]) });
                    $chunk[g][$j] = $c[g];
                }
            }
        )*
    };
    (@rounds $enc:path, $key:path, $R:ident, $k:ident, $kk:ident, $x:ident, $($r:literal)*) => {
        $(
            if $r < $R {
                for g in 0..$x.len() {
                    $x[g] = $enc($x[g], if SHARED { $kk[$r] } else { $key(&$k[g][$r]) });
                }
            }
        )*
    };
}

/// One block of the lane's buffer, at byte `off`.
///
/// # Safety
/// The 16 bytes at `src[0] + off` are readable.
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn load1(src: &[*const u8; 1], off: usize) -> __m128i {
    // SAFETY: the caller's guarantee; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(src[0].add(off).cast()) }
}

/// Stores `x` at byte `off` of the lane's buffer.
///
/// # Safety
/// The 16 bytes at `dst[0] + off` are writable.
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn store1(dst: &[*mut u8; 1], off: usize, x: __m128i) {
    // SAFETY: the caller's guarantee; unaligned stores are allowed.
    unsafe { _mm_storeu_si128(dst[0].add(off).cast(), x) }
}

/// Block `off / 16` of the lane's buffer, as a chunk of one.
///
/// # Safety
/// As [`load1`].
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn chunk_load1(src: &[*const u8; 1], off: usize) -> [__m128i; 1] {
    // SAFETY: the caller's guarantee.
    [unsafe { load1(src, off) }]
}

/// Stores a chunk of one block at byte `off` of the lane's buffer.
///
/// # Safety
/// As [`store1`].
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn chunk_store1(dst: &[*mut u8; 1], off: usize, x: [__m128i; 1]) {
    // SAFETY: the caller's guarantee.
    unsafe { store1(dst, off, x[0]) }
}

#[inline]
#[target_feature(enable = "aes,ssse3")]
fn key1(b: &[Block; 1]) -> __m128i {
    // SAFETY: 16 readable bytes, 16-byte aligned (`PassPlan` is 64-byte
    // aligned, its keys a whole number of registers from its start).
    unsafe { core::ptr::read_volatile(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "aes,ssse3")]
fn get1(b: &[Block; 1]) -> __m128i {
    // SAFETY: 16 readable bytes.
    unsafe { _mm_loadu_si128(b[0].as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "aes,ssse3")]
fn put1(b: &mut [Block; 1], x: __m128i) {
    // SAFETY: 16 writable bytes.
    unsafe { _mm_storeu_si128(b[0].as_mut_ptr().cast(), x) }
}

cbc_encrypt_lanes! {
    /// CBC encryption of `G` streams, one per xmm register.
    ///
    /// # Safety
    /// AES-NI and SSSE3 are present; the lanes' kernel contract.
    #[target_feature(enable = "aes,ssse3")]
    fn cbc_enc_lanes, W = 1, S = 1, zero = _mm_setzero_si128(),
    chunk_load = chunk_load1, chunk_store = chunk_store1, load = load1, store = store1, key = key1, get = get1, put = put1,
    xor = _mm_xor_si128, enc = _mm_aesenc_si128, last = _mm_aesenclast_si128,
}

impl CbcLanes for Key {
    const W: usize = 1;
    const GROUPS: usize = 8;
    fn rounds(&self) -> usize {
        self.rounds
    }
    fn round_keys(&self) -> &RoundKeys {
        &self.enc
    }
    fn pass(lanes: &mut [Lane<'_, Self>], blocks: usize) {
        // SAFETY: a `Key` exists only if AES-NI and SSSE3 were detected
        // (`Key::boxed`), and `lanes` holds at least one; `PassPlan::new`
        // takes each lane's pointers from its `InOut` of `16 * blocks`
        // bytes, which are equal in place or do not overlap, and lanes come
        // from distinct streams (repeated lanes aside), as the kernel
        // contract requires.
        unsafe { cbc_lanes_dispatch!(cbc_enc_lanes, 1, [1 2 3 4 5 6 7 8], lanes, blocks) }
    }
    fn serial(lane: Lane<'_, Self>) {
        lane.key.cbc_encrypt(lane.chain, lane.io);
    }
}
