//! AES-NI backend: AES on 128-bit xmm registers.
//!
//! A [`Key`] can only be made after `aes` and `ssse3` were detected, so every
//! method after construction may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::{AesKernels, Block, CounterWidth};
use crate::cpu::{self, Feature, Features};
use crate::inout::InOut;
use crate::registry::AESNI_FEATURES;
use crate::secret::{Schedule, SecretBox};
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Round keys, 16-byte aligned so kernels may load them with aligned loads.
#[derive(Clone)]
#[repr(C, align(16))]
pub(crate) struct RoundKeys(pub(crate) [Block; 15]);

/// Expanded AES key for AES-NI: the encryption schedule and the decryption
/// schedule of the equivalent inverse cipher (for `aesdec`). It lives in a
/// [`SecretBox`] (made by [`Key::boxed`] after the features were detected),
/// which wipes it on drop.
pub(crate) struct Key {
    enc: RoundKeys,
    dec: RoundKeys,
    rounds: usize,
    /// PCLMULQDQ was detected and not masked off (`HWCRYPT_CPU`): the XTS
    /// kernels reduce tweaks with it.
    clmul: bool,
}

// SAFETY: byte arrays, an integer and a bool: all-zero is valid, no drop
// glue, no pointers. A zeroed key is only made after detection (`boxed`).
unsafe impl Schedule for Key {}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes) in a zeroed heap home, in place;
    /// `None` unless the CPU has AES-NI and SSSE3 (or for another key length).
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(AESNI_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: AES-NI and SSSE3 were detected just above, which is all a
        // `Key`'s methods assume.
        let mut k = unsafe { SecretBox::<Key>::zeroed() };
        k.set_clmul(cpu::usable(Feature::Pclmulqdq));
        k.rekey(key);
        Some(k)
    }

    /// Whether the XTS kernels may use PCLMULQDQ (the caller detected it).
    pub(crate) fn set_clmul(&mut self, clmul: bool) {
        self.clmul = clmul;
    }

    /// Re-expands in place for `key` (16, 24 or 32 bytes, checked by the
    /// caller): no move of the schedules, round keys a shorter key leaves
    /// unused are wiped.
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        debug_assert!(matches!(key.len(), 16 | 24 | 32));
        let rounds = 6 + key.len() / 4;
        for i in rounds + 1..=self.rounds {
            self.enc.0[i] = [0; 16];
            self.dec.0[i] = [0; 16];
        }
        self.rounds = rounds;
        // SAFETY: a `Key` exists only if AES-NI and SSSE3 were detected; the
        // length is 16, 24 or 32 and `rounds` matches it.
        unsafe { expand::<true>(key, self) };
    }

    /// 10, 12 or 14.
    pub(crate) fn rounds(&self) -> usize {
        self.rounds
    }

    /// The `rounds + 1` encryption round keys.
    pub(crate) fn encryption_round_keys(&self) -> &[Block] {
        &self.enc.0[..=self.rounds]
    }

    /// The `rounds + 1` decryption round keys, in the order `aesdec` uses them:
    /// `dec[0] = enc[rounds]`, `dec[i] = InvMixColumns(enc[rounds - i])`, `dec[rounds] = enc[0]`.
    pub(crate) fn decryption_round_keys(&self) -> &[Block] {
        &self.dec.0[..=self.rounds]
    }
}

#[inline(always)]
unsafe fn load(block: &Block) -> __m128i {
    // SAFETY: `block` is 16 readable bytes; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
}

#[inline(always)]
unsafe fn store(block: &mut Block, x: __m128i) {
    // SAFETY: `block` is 16 writable bytes; unaligned stores are allowed.
    unsafe { _mm_storeu_si128(block.as_mut_ptr().cast(), x) }
}

/// `[w0, w0^w1, w0^w1^w2, w0^w1^w2^w3]`: the running XOR of a round key's words.
#[inline]
#[target_feature(enable = "sse2")]
fn prefix_xor(k: __m128i) -> __m128i {
    let x = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(x, _mm_slli_si128::<8>(x))
}

/// SubWord(RotWord(word 3 of `k`)) ^ rcon in all four words. `aesenclast` on a
/// register whose four columns are equal makes ShiftRows a no-op, leaving
/// SubBytes and the XOR with `rcon` (constant time, unlike a table).
#[inline]
#[target_feature(enable = "aes,ssse3")]
fn sub_rot_word3(k: __m128i, rcon: i32) -> __m128i {
    let rot_word3 = _mm_setr_epi8(
        13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12,
    );
    _mm_aesenclast_si128(_mm_shuffle_epi8(k, rot_word3), _mm_set1_epi32(rcon))
}

/// SubWord(word 3 of `k`) in all four words (AES-256's extra step).
#[inline]
#[target_feature(enable = "aes")]
fn sub_word3(k: __m128i) -> __m128i {
    _mm_aesenclast_si128(_mm_shuffle_epi32::<0xff>(k), _mm_setzero_si128())
}

const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// Stores round key `i` into the encryption schedule and, if `DEC`, its
/// `aesimc` into the decryption schedule (`dec[R - i]`), so the independent
/// `aesimc`s fill the gaps of the serial expansion.
#[inline]
#[target_feature(enable = "aes")]
fn put<const DEC: bool, const R: usize>(k: &mut Key, i: usize, rk: __m128i) {
    // SAFETY: a store to a 16-byte array.
    unsafe { store(&mut k.enc.0[i], rk) };
    if DEC {
        let d = if i == 0 || i == R {
            rk
        } else {
            _mm_aesimc_si128(rk)
        };
        // SAFETY: as above.
        unsafe { store(&mut k.dec.0[R - i], d) };
    }
}

/// Expands `key` into `k.enc` and, if `DEC`, `k.dec`.
///
/// # Safety
/// The CPU must support AES-NI and SSSE3; `key.len()` is 16, 24 or 32 and
/// matches `k.rounds`.
#[target_feature(enable = "aes,ssse3")]
unsafe fn expand<const DEC: bool>(key: &[u8], k: &mut Key) {
    match key.len() {
        16 => {
            // SAFETY: `key` is 16 readable bytes.
            let mut rk = unsafe { _mm_loadu_si128(key.as_ptr().cast()) };
            put::<DEC, 10>(k, 0, rk);
            for (i, rcon) in RCON.into_iter().enumerate() {
                rk = _mm_xor_si128(prefix_xor(rk), sub_rot_word3(rk, rcon));
                put::<DEC, 10>(k, i + 1, rk);
            }
        }
        32 => {
            // SAFETY: `key` is 32 readable bytes.
            let (mut even, mut odd) = unsafe {
                (
                    _mm_loadu_si128(key.as_ptr().cast()),
                    _mm_loadu_si128(key.as_ptr().add(16).cast()),
                )
            };
            put::<DEC, 14>(k, 0, even);
            put::<DEC, 14>(k, 1, odd);
            for (i, rcon) in (2..15).step_by(2).zip(RCON) {
                even = _mm_xor_si128(prefix_xor(even), sub_rot_word3(odd, rcon));
                put::<DEC, 14>(k, i, even);
                if i < 14 {
                    odd = _mm_xor_si128(prefix_xor(odd), sub_word3(even));
                    put::<DEC, 14>(k, i + 1, odd);
                }
            }
        }
        _ => {
            let enc = &mut k.enc.0;
            // AES-192's 6-word period does not line up with 4-word round
            // keys: expand word by word, SubWord through `aesenclast`.
            let mut w = [0u32; 52];
            for (word, bytes) in w.iter_mut().zip(key.chunks_exact(4)) {
                *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            }
            for i in 6..52 {
                let mut t = w[i - 1];
                if i % 6 == 0 {
                    let x = _mm_set1_epi32(t.rotate_right(8) as i32);
                    let s = _mm_aesenclast_si128(x, _mm_setzero_si128());
                    t = _mm_cvtsi128_si32(s) as u32 ^ RCON[i / 6 - 1] as u32;
                }
                w[i] = w[i - 6] ^ t;
            }
            for (rk, words) in enc.iter_mut().zip(w.chunks_exact(4)) {
                for (dst, word) in rk.chunks_exact_mut(4).zip(words) {
                    dst.copy_from_slice(&word.to_le_bytes());
                }
            }
            w.zeroize();
            if DEC {
                // SAFETY: `aes` is enabled; AES-192 has 12 rounds.
                unsafe { expand_dec(&k.enc, &mut k.dec, 12) };
            }
        }
    }
}

/// The decryption schedule (for `aesdec`) from the encryption schedule.
///
/// # Safety
/// The CPU must support AES-NI; `rounds` is 10, 12 or 14.
#[target_feature(enable = "aes")]
unsafe fn expand_dec(enc: &RoundKeys, dec: &mut RoundKeys, rounds: usize) {
    let (enc, dec) = (&enc.0, &mut dec.0);
    dec[0] = enc[rounds];
    dec[rounds] = enc[0];
    for i in 1..rounds {
        // SAFETY: 16-byte loads/stores; `aes` is enabled.
        unsafe { store(&mut dec[i], _mm_aesimc_si128(load(&enc[rounds - i]))) };
    }
}

/// # Safety
/// The CPU must support AES-NI; `keys` holds `rounds + 1` round keys.
#[target_feature(enable = "aes")]
unsafe fn encrypt1(keys: &[Block], block: &mut Block) {
    let last = keys.len() - 1;
    // SAFETY: 16-byte loads/stores of arrays; `aes` is enabled.
    unsafe {
        let mut x = _mm_xor_si128(load(block), load(&keys[0]));
        for k in &keys[1..last] {
            x = _mm_aesenc_si128(x, load(k));
        }
        store(block, _mm_aesenclast_si128(x, load(&keys[last])));
    }
}

/// # Safety
/// The CPU must support AES-NI; `keys` is a decryption schedule.
#[target_feature(enable = "aes")]
unsafe fn decrypt1(keys: &[Block], block: &mut Block) {
    let last = keys.len() - 1;
    // SAFETY: 16-byte loads/stores of arrays; `aes` is enabled.
    unsafe {
        let mut x = _mm_xor_si128(load(block), load(&keys[0]));
        for k in &keys[1..last] {
            x = _mm_aesdec_si128(x, load(k));
        }
        store(block, _mm_aesdeclast_si128(x, load(&keys[last])));
    }
}

// ---------------------------------------------------------------------------
// Building blocks of the kernels.
//
// Why 8 blocks per iteration in the parallel modes: AESENC/AESDEC have a
// latency of about 4 cycles and a throughput of 2 per cycle (two AES pipes),
// so 4 x 2 = 8 independent blocks are needed to keep both pipes busy every
// cycle. 8 states plus a round key and a temporary still fit the 16 xmm
// registers, so nothing spills in the round loop.
//
// The round count is a const generic `R` and the rounds are written out by
// `rounds!`, so every kernel is specialised for 10, 12 and 14 rounds
// with the round loop unrolled and no per-round branch.

impl RoundKeys {
    /// Round key `i`, read from memory at each use. Kernels read each round
    /// key once per round (per 8 blocks in the parallel loops, where 8 states
    /// and 15 keys would not fit the 16 xmm registers; in the serial loops the
    /// loads are off the critical path). The load is volatile so that LLVM
    /// neither hoists all 15 keys out of the loop (spilling them to the stack)
    /// nor, under that register pressure, reschedules the rounds block pair by
    /// block pair, which leaves too few independent AES instructions in flight.
    #[inline(always)]
    fn key(&self, i: usize) -> __m128i {
        // SAFETY: `self.0[i]` is 16 readable bytes, 16-byte aligned (`align(16)`).
        unsafe { core::ptr::read_volatile(self.0[i].as_ptr().cast::<__m128i>()) }
    }
}

/// Block `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `16 * i .. 16 * (i + 1)` of `p` must be readable.
#[inline(always)]
unsafe fn load_at(p: *const u8, i: usize) -> __m128i {
    // SAFETY: the caller guarantees the 16 bytes are readable; unaligned is fine.
    unsafe { _mm_loadu_si128(p.add(16 * i).cast()) }
}

/// Stores `x` as block `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `16 * i .. 16 * (i + 1)` of `p` must be writable.
#[inline(always)]
unsafe fn store_at(p: *mut u8, i: usize, x: __m128i) {
    // SAFETY: the caller guarantees the 16 bytes are writable; unaligned is fine.
    unsafe { _mm_storeu_si128(p.add(16 * i).cast(), x) }
}

/// Blocks `0..N` of the buffer at `p`.
///
/// # Safety
/// The first `16 * N` bytes of `p` must be readable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn load_n<const N: usize>(p: *const u8) -> [__m128i; N] {
    let mut x = [_mm_setzero_si128(); N];
    for (i, b) in x.iter_mut().enumerate() {
        // SAFETY: block `i < N` is readable (caller).
        *b = unsafe { load_at(p, i) };
    }
    x
}

/// Stores `x` as blocks `0..N` of the buffer at `p`.
///
/// # Safety
/// The first `16 * N` bytes of `p` must be writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn store_n<const N: usize>(p: *mut u8, x: [__m128i; N]) {
    for (i, b) in x.into_iter().enumerate() {
        // SAFETY: block `i < N` is writable (caller).
        unsafe { store_at(p, i, b) };
    }
}

/// AES rounds on the `N` blocks of the array `$x` with round keys from `$k`
/// (`&RoundKeys`), `$op` being `_mm_aesenc_si128` or
/// `_mm_aesdec_si128`. `rounds!(op, R, k, x)` does the whitening XOR and
/// rounds `1..R`; `rounds!(@middle op, R, k, x)` only rounds `1..R`. The
/// caller does the last round, so it can fold an XOR into its key operand.
///
/// Each round key is read once and applied to all `N` blocks. The rounds are
/// written out: `$R` is a constant, so every `if` folds away at compile time.
/// A macro rather than a function, because a `#[target_feature]` function
/// cannot be `#[inline(always)]` and LLVM declines to inline the 8-block
/// version, which then passes the states through the stack.
macro_rules! rounds {
    ($op:ident, $R:ident, $k:expr, $x:expr) => {{
        let key = $k.key(0);
        for b in $x.iter_mut() {
            *b = _mm_xor_si128(*b, key);
        }
        rounds!(@middle $op, $R, $k, $x);
    }};
    (@middle $op:ident, $R:ident, $k:expr, $x:expr) => {
        rounds!(@each $op, $R, $k, $x, 1 2 3 4 5 6 7 8 9 10 11 12 13)
    };
    (@each $op:ident, $R:ident, $k:expr, $x:expr, $($i:literal)*) => {
        $(
            if $i < $R {
                let key = $k.key($i);
                for b in $x.iter_mut() {
                    *b = $op(*b, key);
                }
            }
        )*
    };
}

/// Runs `$body` over `$blocks` blocks at `$src`/`$dst` in batches of `$n`
/// blocks, `$n` a constant: 8 while at least 8 are left, then one batch each
/// of 4, 2 and 1 as the tail needs (no byte or block loop for it). Inside
/// `$body`, `$src`/`$dst` point at the batch.
macro_rules! batches {
    ($blocks:expr, $src:ident, $dst:ident, $n:ident => $body:block) => {{
        let blocks: usize = $blocks;
        let (base_src, base_dst) = ($src, $dst);
        let mut done = 0;
        while blocks - done >= 8 {
            batches!(@at base_src, base_dst, done, $src, $dst, $n, $body, 8);
            done += 8;
        }
        let tail = blocks - done;
        batches!(@at base_src, base_dst, done, $src, $dst, $n, $body, tail & 4);
        batches!(@at base_src, base_dst, done + (tail & 4), $src, $dst, $n, $body, tail & 2);
        batches!(@at base_src, base_dst, done + (tail & 6), $src, $dst, $n, $body, tail & 1);
    }};
    (@at $bs:ident, $bd:ident, $at:expr, $src:ident, $dst:ident, $n:ident, $body:block, 8) => {{
        const $n: usize = 8;
        let $src = $bs.wrapping_add(16 * $at);
        let $dst = $bd.wrapping_add(16 * $at);
        $body
    }};
    (@at $bs:ident, $bd:ident, $at:expr, $src:ident, $dst:ident, $n:ident, $body:block, $tail:ident & $size:literal) => {
        if $tail & $size != 0 {
            const $n: usize = $size;
            let $src = $bs.wrapping_add(16 * ($at));
            let $dst = $bd.wrapping_add(16 * ($at));
            $body
        }
    };
}

// ---------------------------------------------------------------------------
// Kernels. Common safety contract ("the kernel contract"): the CPU supports
// AES-NI and SSSE3; `src` is readable and `dst` writable for `16 * blocks`
// bytes; they are equal (in place) or do not overlap. Every kernel loads a
// block before it stores the output of that block and never reads a block
// after storing it.

/// ECB encryption.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn ecb_enc<const R: usize>(keys: &RoundKeys, src: *const u8, dst: *mut u8, blocks: usize) {
    let k = keys;
    batches!(blocks, src, dst, N => {
        // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
        let mut x = unsafe { load_n::<N>(src) };
        rounds!(_mm_aesenc_si128, R, k, x);
        let last = k.key(R);
        for b in &mut x {
            *b = _mm_aesenclast_si128(*b, last);
        }
        // SAFETY: as above.
        unsafe { store_n(dst, x) };
    });
}

/// ECB decryption (`keys` the decryption schedule).
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn ecb_dec<const R: usize>(keys: &RoundKeys, src: *const u8, dst: *mut u8, blocks: usize) {
    let k = keys;
    batches!(blocks, src, dst, N => {
        // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
        let mut x = unsafe { load_n::<N>(src) };
        rounds!(_mm_aesdec_si128, R, k, x);
        let last = k.key(R);
        for b in &mut x {
            *b = _mm_aesdeclast_si128(*b, last);
        }
        // SAFETY: as above.
        unsafe { store_n(dst, x) };
    });
}

/// CBC decryption: `p[i] = D(c[i]) ^ c[i - 1]`, the XOR folded into the last
/// round (`aesdeclast(x, k[R] ^ c[i - 1])`). `chain` is `c[-1]` on entry and
/// the last ciphertext block on return.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn cbc_dec<const R: usize>(
    keys: &RoundKeys,
    chain: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    // SAFETY: `chain` is 16 readable bytes.
    let mut prev = unsafe { load(chain) };
    batches!(blocks, src, dst, N => {
        // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
        let c = unsafe { load_n::<N>(src) };
        let mut x = c;
        rounds!(_mm_aesdec_si128, R, k, x);
        let last = k.key(R);
        for (i, b) in x.iter_mut().enumerate() {
            let p = if i == 0 { prev } else { c[i - 1] };
            *b = _mm_aesdeclast_si128(*b, _mm_xor_si128(last, p));
        }
        prev = c[N - 1];
        // SAFETY: as above.
        unsafe { store_n(dst, x) };
    });
    // SAFETY: `chain` is 16 writable bytes.
    unsafe { store(chain, prev) };
}

/// CFB128 decryption: `p[i] = E(c[i - 1]) ^ c[i]`, parallel; the XOR is
/// folded into the last round. `register` is `c[-1]` on entry and the last
/// ciphertext block on return.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn cfb_dec<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    // SAFETY: `register` is 16 readable bytes.
    let mut prev = unsafe { load(register) };
    batches!(blocks, src, dst, N => {
        // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
        let c = unsafe { load_n::<N>(src) };
        let mut x = [prev; N];
        x[1..].copy_from_slice(&c[..N - 1]);
        rounds!(_mm_aesenc_si128, R, k, x);
        let last = k.key(R);
        for (b, c) in x.iter_mut().zip(c) {
            *b = _mm_aesenclast_si128(*b, _mm_xor_si128(last, c));
        }
        prev = c[N - 1];
        // SAFETY: as above.
        unsafe { store_n(dst, x) };
    });
    // SAFETY: `register` is 16 writable bytes.
    unsafe { store(register, prev) };
}

/// Reverses the 16 bytes: a big-endian counter block <-> a little-endian
/// 128-bit integer (lane 0 = the low 64 bits, dword 0 = the low 32 bits).
#[inline]
#[target_feature(enable = "ssse3")]
fn bswap128(x: __m128i) -> __m128i {
    _mm_shuffle_epi8(
        x,
        _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
    )
}

/// The byte-reversed counter plus one: `paddq` on the low 64-bit lane
/// (`Full128`; the caller splits runs so that it cannot carry out of it
/// mid-run) or `paddd` on the low 32-bit lane (`Low32`, which wraps there by
/// definition).
#[inline]
#[target_feature(enable = "sse2")]
fn ctr_inc<const FULL: bool>(ctr: __m128i) -> __m128i {
    if FULL {
        _mm_add_epi64(ctr, _mm_set_epi64x(0, 1))
    } else {
        _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, 1))
    }
}

/// CTR: output = input ^ E(counter + i). The counter is kept byte-reversed
/// (a little-endian integer: low 64 bits in lane 0, low 32 bits in dword 0)
/// and incremented with `paddq`/`paddd`; `pshufb` swaps it back only for the
/// AES input. `FULL` selects `CounterWidth::Full128` (else `Low32`). The data
/// XOR is folded into the last round: `aesenclast(x, k[R] ^ data) ==
/// aesenclast(x, k[R]) ^ data`.
///
/// Full128 carries across all 128 bits, which `paddq` does not do. Rather than
/// test every batch, the blocks are split into runs that end exactly where the
/// low 64 bits wrap: inside a run `paddq` is exact, and at the (rare) end of a
/// run the low lane has wrapped to 0 and the carry is added to the high lane.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn ctr<const R: usize, const FULL: bool>(
    keys: &RoundKeys,
    counter: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    // SAFETY: `counter` is 16 readable bytes.
    let mut c = bswap128(unsafe { load(counter) });
    let mut done = 0;
    loop {
        let left = blocks - done;
        // Blocks until the low 64 bits wrap: 2^64 - low (as u128, no overflow).
        let room = (1u128 << 64) - u128::from(_mm_cvtsi128_si64(c) as u64);
        let run = if FULL && room < left as u128 {
            room as usize
        } else {
            left
        };
        // SAFETY: blocks `done..done + run` are in bounds (kernel contract).
        unsafe {
            ctr_run::<R, FULL>(keys, &mut c, src.add(16 * done), dst.add(16 * done), run);
        }
        done += run;
        if FULL && run as u128 == room {
            // The low lane wrapped to 0: carry into the high lane.
            c = _mm_add_epi64(c, _mm_set_epi64x(1, 0));
        }
        if done == blocks {
            break;
        }
    }
    // SAFETY: `counter` is 16 writable bytes.
    unsafe { store(counter, bswap128(c)) };
}

/// The body of [`ctr`]: `blocks` blocks from the byte-reversed counter `c`,
/// which is advanced past them.
///
/// # Safety
/// The kernel contract; for `FULL`, the low 64 bits of `c` do not carry before
/// the last block of the run.
#[inline]
#[target_feature(enable = "aes,ssse3")]
unsafe fn ctr_run<const R: usize, const FULL: bool>(
    k: &RoundKeys,
    c: &mut __m128i,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    batches!(blocks, src, dst, N => {
        // The counter goes through memory between batches (volatile, so it
        // stays there): held in a register across the rounds, it and the
        // increment constants push LLVM over the 16 xmm registers, and its
        // scheduler then starts the last block's rounds half a batch late.
        // SAFETY: `c` is a valid, aligned `__m128i`.
        let mut ctr = unsafe { core::ptr::read_volatile(c) };
        let mut x = [ctr; N];
        for b in x.iter_mut() {
            *b = bswap128(ctr);
            ctr = ctr_inc::<FULL>(ctr);
        }
        // SAFETY: as above.
        unsafe { core::ptr::write_volatile(c, ctr) };
        rounds!(_mm_aesenc_si128, R, k, x);
        // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
        let data = unsafe { load_n::<N>(src) };
        let last = k.key(R);
        for (b, d) in x.iter_mut().zip(data) {
            *b = _mm_aesenclast_si128(*b, _mm_xor_si128(last, d));
        }
        // SAFETY: as above.
        unsafe { store_n(dst, x) };
    });
}

/// CBC encryption, serial: `c[i] = E(p[i] ^ c[i - 1])`. The chain carries
/// no XOR: the last round of block `i` is done twice, in parallel,
/// `aesenclast(x, k[R])` for the output and `aesenclast(x, k[R] ^ k[0] ^
/// p[i + 1])`, which is already the whitened input of block `i + 1`.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn cbc_enc<const R: usize>(
    keys: &RoundKeys,
    chain: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    if blocks == 0 {
        return;
    }
    let k = keys;
    let last_first = _mm_xor_si128(k.key(R), k.key(0));
    // SAFETY: `chain` is 16 readable bytes; block 0 is in bounds (kernel contract).
    let mut x = [_mm_xor_si128(unsafe { load(chain) }, unsafe {
        load_at(src, 0)
    })];
    x[0] = _mm_xor_si128(x[0], k.key(0));
    for i in 1..blocks {
        rounds!(@middle _mm_aesenc_si128, R, k, x);
        // SAFETY: blocks `i - 1` and `i < blocks` are in bounds (kernel contract).
        unsafe {
            let p = load_at(src, i);
            store_at(dst, i - 1, _mm_aesenclast_si128(x[0], k.key(R)));
            x[0] = _mm_aesenclast_si128(x[0], _mm_xor_si128(last_first, p));
        }
    }
    rounds!(@middle _mm_aesenc_si128, R, k, x);
    let c = _mm_aesenclast_si128(x[0], k.key(R));
    // SAFETY: block `blocks - 1` is in bounds; `chain` is 16 writable bytes.
    unsafe {
        store_at(dst, blocks - 1, c);
        store(chain, c);
    }
}

/// CFB128 encryption, serial: `c[i] = E(c[i - 1]) ^ p[i]`. As in
/// [`cbc_enc`], the last round is done twice: with `k[R] ^ p[i]` for the
/// output and with `k[R] ^ p[i] ^ k[0]` for the whitened next input, so the
/// chain is only the rounds.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn cfb_enc<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    // SAFETY: `register` is 16 readable bytes.
    let mut x = [_mm_xor_si128(unsafe { load(register) }, k.key(0))];
    for i in 0..blocks {
        rounds!(@middle _mm_aesenc_si128, R, k, x);
        // SAFETY: block `i < blocks` is in bounds (kernel contract).
        let last = _mm_xor_si128(k.key(R), unsafe { load_at(src, i) });
        // SAFETY: as above.
        unsafe { store_at(dst, i, _mm_aesenclast_si128(x[0], last)) };
        x[0] = _mm_aesenclast_si128(x[0], _mm_xor_si128(last, k.key(0)));
    }
    // SAFETY: `register` is 16 writable bytes.
    unsafe { store(register, _mm_xor_si128(x[0], k.key(0))) };
}

/// OFB, serial: `o[i] = E(o[i - 1])`, output = input ^ `o[i]`. The last round
/// is done twice: with `k[R] ^ p[i]` for the output and with `k[R] ^ k[0]`
/// for the whitened next input.
///
/// # Safety
/// The kernel contract.
#[target_feature(enable = "aes,ssse3")]
unsafe fn ofb<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    let last_first = _mm_xor_si128(k.key(R), k.key(0));
    // SAFETY: `register` is 16 readable bytes.
    let mut x = [_mm_xor_si128(unsafe { load(register) }, k.key(0))];
    for i in 0..blocks {
        rounds!(@middle _mm_aesenc_si128, R, k, x);
        // SAFETY: block `i < blocks` is in bounds (kernel contract).
        let last = _mm_xor_si128(k.key(R), unsafe { load_at(src, i) });
        // SAFETY: as above.
        unsafe { store_at(dst, i, _mm_aesenclast_si128(x[0], last)) };
        x[0] = _mm_aesenclast_si128(x[0], last_first);
    }
    // SAFETY: `register` is 16 writable bytes.
    unsafe { store(register, _mm_xor_si128(x[0], k.key(0))) };
}

// XTS: tweaks are little-endian 128-bit integers, as a plain load puts them
// in an xmm register. Eight blocks in flight with their eight tweaks T_i..
// T_i+7; the next batch's are these times x^8, a one-byte shift plus the
// reduction of the byte shifted out (see `xts_reduce`), independent of the
// rounds running beside it.

/// `c * 0x87` for `c` < 2^16 in the low 64 bits (high 64 bits zero).
#[inline(always)]
fn xts_reduce(c: __m128i) -> __m128i {
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        let a = _mm_xor_si128(c, _mm_slli_epi64::<1>(c));
        let b = _mm_xor_si128(_mm_slli_epi64::<2>(c), _mm_slli_epi64::<7>(c));
        _mm_xor_si128(a, b)
    }
}

/// Tweak times x^k, 0 <= k <= 16 (shift counts in registers; used to lay
/// out the first tweaks of a call).
#[inline(always)]
fn xts_mul_xk(x: __m128i, k: i64) -> __m128i {
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        let (left, right) = (_mm_cvtsi64_si128(k), _mm_cvtsi64_si128(64 - k));
        let shifted = _mm_or_si128(
            _mm_sll_epi64(x, left),
            _mm_srl_epi64(_mm_slli_si128::<8>(x), right),
        );
        let carry = _mm_srl_epi64(_mm_srli_si128::<8>(x), right);
        _mm_xor_si128(shifted, xts_reduce(carry))
    }
}

/// Tweak times x^8.
#[inline(always)]
fn xts_mul_x8(x: __m128i) -> __m128i {
    // SAFETY: SSE2 is part of x86-64.
    unsafe { _mm_xor_si128(_mm_slli_si128::<1>(x), xts_reduce(_mm_srli_si128::<15>(x))) }
}

/// Tweak times x^8, the reduction by one carry-less multiply.
#[inline]
#[target_feature(enable = "sse2,pclmulqdq")]
fn xts_mul_x8_clmul(x: __m128i) -> __m128i {
    let poly = _mm_set_epi64x(0, 0x87);
    _mm_xor_si128(
        _mm_slli_si128::<1>(x),
        _mm_clmulepi64_si128::<0x00>(_mm_srli_si128::<15>(x), poly),
    )
}

/// Defines an XTS kernel `$name::<R, DEC>(keys, tweak, src, dst, blocks)`
/// compiled for `$features`, advancing the tweaks with `$advance` (times
/// x^8): `blocks` whole blocks with the data key's schedule `keys`
/// (encryption, or with `DEC` the decryption schedule); block i is
/// `cipher(in_i ^ T_i) ^ T_i`, the second XOR folded into the last round's
/// key. `tweak` is T_0 on entry (or, with `tweak_key`, the tweak before its
/// encryption with that schedule) and the tweak after the last block on
/// return. Safety: the kernel contract, plus the CPU features of `$features`.
macro_rules! xts_kernel {
    ($name:ident, $features:literal, $advance:ident) => {
        #[target_feature(enable = $features)]
        unsafe fn $name<const R: usize, const DEC: bool>(
            keys: &RoundKeys,
            tweak_key: Option<&RoundKeys>,
            tweak: &mut Block,
            src: *const u8,
            dst: *mut u8,
            blocks: usize,
        ) {
            let k = keys;
            // SAFETY: `tweak` is 16 readable bytes.
            let mut t0 = unsafe { load(tweak) };
            if let Some(k2) = tweak_key {
                t0 = _mm_xor_si128(t0, k2.key(0));
                for r in 1..R {
                    t0 = _mm_aesenc_si128(t0, k2.key(r));
                }
                t0 = _mm_aesenclast_si128(t0, k2.key(R));
            }
            let mut tw: [__m128i; 8] = core::array::from_fn(|j| xts_mul_xk(t0, j as i64));
            batches!(blocks, src, dst, N => {
                // SAFETY: this batch's `N` blocks are in bounds (kernel contract).
                let mut x = unsafe { load_n::<N>(src) };
                for (b, t) in x.iter_mut().zip(&tw) {
                    *b = _mm_xor_si128(*b, *t);
                }
                if DEC {
                    rounds!(_mm_aesdec_si128, R, k, x);
                } else {
                    rounds!(_mm_aesenc_si128, R, k, x);
                }
                let last = k.key(R);
                for (b, t) in x.iter_mut().zip(&tw) {
                    let key = _mm_xor_si128(last, *t);
                    *b = if DEC {
                        _mm_aesdeclast_si128(*b, key)
                    } else {
                        _mm_aesenclast_si128(*b, key)
                    };
                }
                // SAFETY: as above.
                unsafe { store_n(dst, x) };
                if N == 8 {
                    for t in &mut tw {
                        *t = $advance(*t);
                    }
                } else {
                    // A tail batch: the remaining tweaks move down (tail
                    // batches use at most 4 + 2 + 1 of them in all).
                    tw = core::array::from_fn(|j| tw[(j + N).min(7)]);
                }
            });
            // SAFETY: `tweak` is 16 writable bytes.
            unsafe { store(tweak, tw[0]) };
        }
    };
}

xts_kernel!(xts_clmul, "aes,ssse3,pclmulqdq", xts_mul_x8_clmul);
xts_kernel!(xts_shift, "aes,ssse3", xts_mul_x8);

/// Binds the const `$R` to the key's round count (10, 12 or 14) for `$body`.
macro_rules! with_rounds {
    ($rounds:expr, $R:ident => $body:expr) => {
        match $rounds {
            10 => {
                const $R: usize = 10;
                $body
            }
            12 => {
                const $R: usize = 12;
                $body
            }
            _ => {
                const $R: usize = 14;
                $body
            }
        }
    };
}

/// `(src, dst, blocks)` of a whole-block `io` (the kernel contract's pointers).
fn raw(io: &mut InOut<'_>) -> (*const u8, *mut u8, usize) {
    debug_assert_eq!(io.len() % 16, 0);
    let (src, dst) = io.ptrs();
    (src, dst, io.len() / 16)
}

// SAFETY (every unsafe block below): a `Key` exists only if AES-NI and SSSE3
// were detected (`Key::boxed`); `raw` gives pointers that cover `16 * blocks`
// bytes of `io`, equal in place or non-overlapping, as the kernel contract
// requires; `self.rounds` matches the schedules.
impl Key {
    /// XTS over one data unit of whole blocks whose tweak is not encrypted
    /// yet: the kernel encrypts it with `tweak_key` first, in registers.
    /// `tweak` holds the tweak after the last block on return.
    pub(crate) fn xts_unit(
        &self,
        tweak_key: &Key,
        tweak: &mut Block,
        mut io: InOut<'_>,
        decrypt: bool,
    ) {
        let (src, dst, n) = raw(&mut io);
        let k2 = Some(&tweak_key.enc);
        let keys = if decrypt { &self.dec } else { &self.enc };
        super::count_xts_path(self.clmul);
        // SAFETY: for each call below, a `Key` exists only if AES-NI and SSSE3
        // were detected, and `clmul` is set only if PCLMULQDQ was; `raw`
        // gives pointers covering `16 * n` bytes of `io` (the kernel
        // contract); both keys have the same size, so `R` rounds.
        with_rounds!(self.rounds(), R => unsafe {
            match (self.clmul, decrypt) {
                (true, false) => xts_clmul::<R, false>(keys, k2, tweak, src, dst, n),
                (true, true) => xts_clmul::<R, true>(keys, k2, tweak, src, dst, n),
                (false, false) => xts_shift::<R, false>(keys, k2, tweak, src, dst, n),
                (false, true) => xts_shift::<R, true>(keys, k2, tweak, src, dst, n),
            }
        })
    }
}

impl AesKernels for Key {
    fn encrypt_block(&self, block: &mut Block) {
        // SAFETY: a `Key` exists only if AES-NI was detected.
        unsafe { encrypt1(self.encryption_round_keys(), block) }
    }
    fn decrypt_block(&self, block: &mut Block) {
        // SAFETY: a `Key` exists only if AES-NI was detected.
        unsafe { decrypt1(self.decryption_round_keys(), block) }
    }
    fn ecb_encrypt(&self, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { ecb_enc::<R>(&self.enc, src, dst, n) })
    }
    fn ecb_decrypt(&self, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { ecb_dec::<R>(&self.dec, src, dst, n) })
    }
    fn cbc_encrypt(&self, chain: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { cbc_enc::<R>(&self.enc, chain, src, dst, n) })
    }
    fn cbc_decrypt(&self, chain: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { cbc_dec::<R>(&self.dec, chain, src, dst, n) })
    }
    fn cfb128_encrypt(&self, register: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { cfb_enc::<R>(&self.enc, register, src, dst, n) })
    }
    fn cfb128_decrypt(&self, register: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { cfb_dec::<R>(&self.enc, register, src, dst, n) })
    }
    fn ofb(&self, register: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        // SAFETY: see the note above this impl.
        with_rounds!(self.rounds(), R => unsafe { ofb::<R>(&self.enc, register, src, dst, n) })
    }
    fn xts_encrypt(&self, tweak: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        super::count_xts_path(self.clmul);
        if self.clmul {
            // SAFETY: see the note above this impl; `clmul` is set only if
            // PCLMULQDQ was detected.
            with_rounds!(self.rounds(), R => unsafe { xts_clmul::<R, false>(&self.enc, None, tweak, src, dst, n) })
        } else {
            // SAFETY: see the note above this impl.
            with_rounds!(self.rounds(), R => unsafe { xts_shift::<R, false>(&self.enc, None, tweak, src, dst, n) })
        }
    }
    fn xts_decrypt(&self, tweak: &mut Block, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        super::count_xts_path(self.clmul);
        if self.clmul {
            // SAFETY: see the note above this impl; `clmul` is set only if
            // PCLMULQDQ was detected.
            with_rounds!(self.rounds(), R => unsafe { xts_clmul::<R, true>(&self.dec, None, tweak, src, dst, n) })
        } else {
            // SAFETY: see the note above this impl.
            with_rounds!(self.rounds(), R => unsafe { xts_shift::<R, true>(&self.dec, None, tweak, src, dst, n) })
        }
    }
    fn ctr(&self, counter: &mut Block, width: CounterWidth, mut io: InOut<'_>) {
        let (src, dst, n) = raw(&mut io);
        with_rounds!(self.rounds(), R => match width {
            // SAFETY: see the note above this impl.
            CounterWidth::Full128 => unsafe { ctr::<R, true>(&self.enc, counter, src, dst, n) },
            // SAFETY: see the note above this impl.
            CounterWidth::Low32 => unsafe { ctr::<R, false>(&self.enc, counter, src, dst, n) },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// FIPS 197 Appendix A: the last round key of each example expansion.
    #[test]
    fn key_expansion_matches_fips197_appendix_a() {
        let Some(k) = Key::boxed(&[
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ]) else {
            return;
        };
        assert_eq!(
            hex(&k.encryption_round_keys()[10]),
            "d014f9a8c9ee2589e13f0cc8b6630ca6"
        );
        let k = Key::boxed(&[
            0x8e, 0x73, 0xb0, 0xf7, 0xda, 0x0e, 0x64, 0x52, 0xc8, 0x10, 0xf3, 0x2b, 0x80, 0x90,
            0x79, 0xe5, 0x62, 0xf8, 0xea, 0xd2, 0x52, 0x2c, 0x6b, 0x7b,
        ])
        .unwrap();
        assert_eq!(
            hex(&k.encryption_round_keys()[12]),
            "e98ba06f448c773c8ecc720401002202"
        );
        let k = Key::boxed(&[
            0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d,
            0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3,
            0x09, 0x14, 0xdf, 0xf4,
        ])
        .unwrap();
        assert_eq!(
            hex(&k.encryption_round_keys()[14]),
            "fe4890d1e6188d0b046df344706c631e"
        );
    }

    // --- SP 800-38A Appendix F -------------------------------------------

    const SP_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
                         30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
    const SP_IV: &str = "000102030405060708090a0b0c0d0e0f";
    const SP_CTR: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

    /// (key, F.1 ECB, F.2 CBC, F.3 CFB128, F.4 OFB, F.5 CTR) ciphertexts.
    const SP_VECTORS: [[&str; 6]; 2] = [
        [
            "2b7e151628aed2a6abf7158809cf4f3c",
            "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf\
             43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
            "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2\
             73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
            "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b\
             26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6",
            "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825\
             9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e",
            "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff\
             5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
        ],
        [
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870\
             b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
            "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d\
             39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
            "dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b\
             df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471",
            "dc7e84bfda79164b7ecd8486985d38604febdc6740d20b3ac88f6ad82a4fb08d\
             71ab47a086e86eedf39d1c5bba97c4080126141d67f37be8538f5a8be740e484",
            "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5\
             2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
        ],
    ];

    /// Every kernel that takes data, as one enum so tests can loop over them.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Mode {
        EcbEnc,
        EcbDec,
        CbcEnc,
        CbcDec,
        CfbEnc,
        CfbDec,
        Ofb,
        Ctr(CounterWidth),
    }

    const MODES: [Mode; 9] = [
        Mode::EcbEnc,
        Mode::EcbDec,
        Mode::CbcEnc,
        Mode::CbcDec,
        Mode::CfbEnc,
        Mode::CfbDec,
        Mode::Ofb,
        Mode::Ctr(CounterWidth::Full128),
        Mode::Ctr(CounterWidth::Low32),
    ];

    /// Runs the kernel under test.
    fn kernel(k: &Key, mode: Mode, state: &mut Block, io: InOut<'_>) {
        match mode {
            Mode::EcbEnc => k.ecb_encrypt(io),
            Mode::EcbDec => k.ecb_decrypt(io),
            Mode::CbcEnc => k.cbc_encrypt(state, io),
            Mode::CbcDec => k.cbc_decrypt(state, io),
            Mode::CfbEnc => k.cfb128_encrypt(state, io),
            Mode::CfbDec => k.cfb128_decrypt(state, io),
            Mode::Ofb => k.ofb(state, io),
            Mode::Ctr(width) => k.ctr(state, width, io),
        }
    }

    fn xor(a: &mut Block, b: &Block) {
        a.iter_mut().zip(b).for_each(|(a, b)| *a ^= b);
    }

    /// The reference: each mode composed by hand from the single-block
    /// `encrypt1`/`decrypt1`, in place.
    fn reference(k: &Key, mode: Mode, state: &mut Block, data: &mut [u8]) {
        let enc = |b: &mut Block| {
            // SAFETY: a `Key` exists only if AES-NI was detected.
            unsafe { encrypt1(k.encryption_round_keys(), b) }
        };
        let dec = |b: &mut Block| {
            // SAFETY: as above.
            unsafe { decrypt1(k.decryption_round_keys(), b) }
        };
        for chunk in data.chunks_exact_mut(16) {
            let b: &mut Block = chunk.try_into().unwrap();
            match mode {
                Mode::EcbEnc => enc(b),
                Mode::EcbDec => dec(b),
                Mode::CbcEnc => {
                    xor(b, state);
                    enc(b);
                    *state = *b;
                }
                Mode::CbcDec => {
                    let c = *b;
                    dec(b);
                    xor(b, state);
                    *state = c;
                }
                Mode::CfbEnc => {
                    enc(state);
                    xor(b, state);
                    *state = *b;
                }
                Mode::CfbDec => {
                    let c = *b;
                    enc(state);
                    xor(b, state);
                    *state = c;
                }
                Mode::Ofb => {
                    enc(state);
                    xor(b, state);
                }
                Mode::Ctr(width) => {
                    let mut ks = *state;
                    enc(&mut ks);
                    xor(b, &ks);
                    width.add(state, 1);
                }
            }
        }
    }

    fn block(text: &str) -> Block {
        hex::decode(text).unwrap().try_into().unwrap()
    }

    #[test]
    fn sp800_38a_appendix_f() {
        if Key::boxed(&[0; 16]).is_none() {
            eprintln!("skipped: AES-NI/SSSE3 not detected");
            return;
        }
        let pt = hex::decode(SP_PT).unwrap();
        for [key, ecb, cbc, cfb, ofb, ctr] in SP_VECTORS {
            let k = Key::boxed(&hex::decode(key).unwrap()).unwrap();
            let bits = key.len() * 4;
            let cases = [
                (Mode::EcbEnc, Mode::EcbDec, SP_IV, ecb, "F.1 ECB"),
                (Mode::CbcEnc, Mode::CbcDec, SP_IV, cbc, "F.2 CBC"),
                (Mode::CfbEnc, Mode::CfbDec, SP_IV, cfb, "F.3 CFB128"),
                (Mode::Ofb, Mode::Ofb, SP_IV, ofb, "F.4 OFB"),
                (
                    Mode::Ctr(CounterWidth::Full128),
                    Mode::Ctr(CounterWidth::Full128),
                    SP_CTR,
                    ctr,
                    "F.5 CTR",
                ),
            ];
            for (enc, dec, iv, ct, name) in cases {
                let ct = hex::decode(ct).unwrap();
                let mut buf = pt.clone();
                kernel(&k, enc, &mut block(iv), InOut::InPlace(&mut buf));
                assert_eq!(hex(&buf), hex(&ct), "{name} AES-{bits} encrypt");
                kernel(&k, dec, &mut block(iv), InOut::InPlace(&mut buf));
                assert_eq!(hex(&buf), hex(&pt), "{name} AES-{bits} decrypt");
            }
        }
    }

    // --- every kernel against the reference --------------------------------

    use rand::{Rng, SeedableRng, rngs::StdRng};

    /// Block counts: every count through 5 batches of 8, and a few large ones.
    fn block_counts() -> impl Iterator<Item = usize> {
        (0..=40).chain([63, 64, 65, 100, 257, 1000])
    }

    /// Starting states: random, and for CTR counters just below the 2^32,
    /// 2^64 and 2^128 carry points (random bytes above the carry point).
    fn states(rng: &mut StdRng, mode: Mode) -> Vec<Block> {
        let mut out = vec![rng.random()];
        if let Mode::Ctr(_) = mode {
            for below in [1u64, 2, 3, 5, 8, 9, 17] {
                let mut c: Block = rng.random();
                c[12..].copy_from_slice(&(u32::MAX - (below as u32 - 1)).to_be_bytes());
                out.push(c);
                let mut c: Block = rng.random();
                c[8..].copy_from_slice(&(u64::MAX - (below - 1)).to_be_bytes());
                out.push(c);
                out.push((u128::MAX - u128::from(below - 1)).to_be_bytes());
            }
        }
        out
    }

    /// One kernel call, `n` blocks, from `state`, compared with the reference
    /// in place, with separate (misaligned, garbage-filled) buffers, and as
    /// two calls split at several points.
    fn check(k: &Key, mode: Mode, state: Block, data: &[u8], rng: &mut StdRng, what: &str) {
        let mut want = data.to_vec();
        let mut want_state = state;
        reference(k, mode, &mut want_state, &mut want);

        let mut buf = data.to_vec();
        let mut st = state;
        kernel(k, mode, &mut st, InOut::InPlace(&mut buf));
        assert!(buf == want, "{what}: in place output");
        assert_eq!(st, want_state, "{what}: in place state");

        // Separate buffers, both misaligned by one byte, output prefilled with garbage.
        let mut input = vec![0u8; data.len() + 1];
        input[1..].copy_from_slice(data);
        let mut output = vec![0u8; data.len() + 1];
        rng.fill(&mut output[..]);
        let mut st = state;
        let io = InOut::separate(&input[1..], &mut output[1..]).unwrap();
        kernel(k, mode, &mut st, io);
        assert!(output[1..] == want[..], "{what}: separate output");
        assert_eq!(st, want_state, "{what}: separate state");
        assert!(input[1..] == *data, "{what}: input modified");

        let blocks = data.len() / 16;
        for split in [1, 3, 8, blocks / 2, blocks.saturating_sub(1)] {
            if split == 0 || split >= blocks {
                continue;
            }
            let mut buf = data.to_vec();
            let mut st = state;
            let (a, b) = buf.split_at_mut(split * 16);
            kernel(k, mode, &mut st, InOut::InPlace(a));
            kernel(k, mode, &mut st, InOut::InPlace(b));
            assert!(buf == want, "{what}: split at {split}: output");
            assert_eq!(st, want_state, "{what}: split at {split}: state");
        }
    }

    /// Both XTS kernels (carry-less and shift-only tweak reduction) against
    /// the generic ECB composition, every block count 0..=40 and a few
    /// larger, both directions, every key size.
    #[test]
    fn xts_kernels_agree() {
        let mut rng = StdRng::seed_from_u64(0x0078_7473);
        for len in [16, 24, 32] {
            let mut raw = vec![0u8; len];
            rng.fill(&mut raw[..]);
            let Some(k) = Key::boxed(&raw) else { return };
            if !k.clmul {
                eprintln!("pclmulqdq not detected: carry-less XTS kernel not compared");
                return;
            }
            for n in (0..=40).chain([63, 64, 65, 300]) {
                let mut input = vec![0u8; 16 * n];
                rng.fill(&mut input[..]);
                let mut t0 = [0u8; 16];
                rng.fill(&mut t0);
                for dec in [false, true] {
                    let keys = if dec { &k.dec } else { &k.enc };
                    let (mut a, mut b) = (input.clone(), input.clone());
                    let (mut ta, mut tb) = (t0, t0);
                    let (pa, pb) = (a.as_mut_ptr(), b.as_mut_ptr());
                    // SAFETY: `Key::boxed` succeeded (AES-NI, SSSE3) and `clmul`
                    // is set (PCLMULQDQ); both buffers hold `n` blocks, in place.
                    with_rounds!(k.rounds(), R => unsafe {
                        if dec {
                            xts_clmul::<R, true>(keys, None, &mut ta, pa, pa, n);
                            xts_shift::<R, true>(keys, None, &mut tb, pb, pb, n);
                        } else {
                            xts_clmul::<R, false>(keys, None, &mut ta, pa, pa, n);
                            xts_shift::<R, false>(keys, None, &mut tb, pb, pb, n);
                        }
                    });
                    let (mut c, mut tc) = (input.clone(), t0);
                    super::super::xts_generic(&*k, &mut tc, InOut::InPlace(&mut c), dec);
                    assert_eq!((&a, ta), (&c, tc), "clmul, {n} blocks, dec {dec}");
                    assert_eq!((&b, tb), (&c, tc), "shift, {n} blocks, dec {dec}");
                }
            }
        }
    }

    #[test]
    fn every_kernel_matches_the_reference() {
        if Key::boxed(&[0; 16]).is_none() {
            eprintln!("skipped: AES-NI/SSSE3 not detected");
            return;
        }
        let mut rng = StdRng::seed_from_u64(0x4145_534e_4921);
        for key_len in [16, 24, 32] {
            for _ in 0..2 {
                let mut key = vec![0u8; key_len];
                rng.fill(&mut key[..]);
                let k = Key::boxed(&key).unwrap();
                // The reference takes both schedules from `k`: check that
                // they are inverses.
                let mut data = vec![0u8; 16 * 40];
                rng.fill(&mut data[..]);
                let mut buf = data.clone();
                k.ecb_encrypt(InOut::InPlace(&mut buf));
                assert!(buf != data);
                k.ecb_decrypt(InOut::InPlace(&mut buf));
                assert!(buf == data, "AES-{} ECB round trip", key_len * 8);
                for mode in MODES {
                    for state in states(&mut rng, mode) {
                        for n in block_counts() {
                            let mut data = vec![0u8; 16 * n];
                            rng.fill(&mut data[..]);
                            let what = format!(
                                "AES-{} {mode:?} {n} blocks from {}",
                                key_len * 8,
                                hex(&state)
                            );
                            check(&k, mode, state, &data, &mut rng, &what);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ctr_counter_wraps_as_specified() {
        let Some(k) = Key::boxed(&[7; 32]) else {
            eprintln!("skipped: AES-NI/SSSE3 not detected");
            return;
        };
        let mut buf = [0u8; 16 * 11];
        let mut c = [0xff; 16];
        k.ctr(&mut c, CounterWidth::Full128, InOut::InPlace(&mut buf));
        assert_eq!(u128::from_be_bytes(c), 10);
        let mut c = [0xff; 16];
        k.ctr(&mut c, CounterWidth::Low32, InOut::InPlace(&mut buf));
        assert_eq!(c[..12], [0xff; 12]);
        assert_eq!(c[12..], 10u32.to_be_bytes());
        let mut c = [0; 16];
        c[8..].copy_from_slice(&(u64::MAX - 4).to_be_bytes());
        k.ctr(&mut c, CounterWidth::Full128, InOut::InPlace(&mut buf));
        assert_eq!(u128::from_be_bytes(c), (1 << 64) + 6);
    }

    // --- measurements (run with --release -- --ignored --nocapture) --------

    use std::hint::black_box;
    use std::time::Instant;

    /// This thread's on-CPU time in seconds (Linux `schedstat`), if known.
    /// The development machine is a shared 2-core VM, where wall time often
    /// measures the neighbours; `openssl speed` likewise divides by CPU time
    /// unless given `-elapsed`.
    fn cpu_seconds() -> Option<f64> {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
    }

    /// Seconds `f` took: wall time while this thread was not preempted (it is
    /// precise), else CPU time (the kernel updates it per scheduler tick, a
    /// few ms, so runs are ~100 ms).
    fn measure(mut f: impl FnMut()) -> f64 {
        let (cpu0, wall0) = (cpu_seconds(), Instant::now());
        f();
        let wall = wall0.elapsed().as_secs_f64();
        match (cpu0, cpu_seconds()) {
            (Some(a), Some(b)) if b - a < 0.9 * wall => b - a,
            _ => wall,
        }
    }

    /// Median over `reps` runs of the seconds per call of `f`, each run
    /// sized to take about `run_ms`.
    fn time_per_call(reps: usize, run_ms: u64, mut f: impl FnMut()) -> f64 {
        let mut calls = 1u64;
        while measure(|| (0..calls).for_each(|_| f())) < run_ms as f64 / 4e3 {
            calls *= 2;
        }
        calls *= 4;
        let mut runs: Vec<f64> = (0..reps)
            .map(|_| measure(|| (0..calls).for_each(|_| f())) / calls as f64)
            .collect();
        runs.sort_by(f64::total_cmp);
        runs[reps / 2]
    }

    #[test]
    #[ignore = "measurement; run with --release -- --ignored --nocapture"]
    fn aesni_throughput() {
        if Key::boxed(&[0; 16]).is_none() {
            eprintln!("skipped: AES-NI/SSSE3 not detected");
            return;
        }
        let modes = [
            ("ECB enc", Mode::EcbEnc),
            ("CTR", Mode::Ctr(CounterWidth::Full128)),
            ("CBC dec", Mode::CbcDec),
            ("CBC enc", Mode::CbcEnc),
        ];
        println!(
            "{:<8} {:<8} {:>10} {:>10}",
            "key", "mode", "16 KiB", "256 B"
        );
        for key_len in [16, 32] {
            let k = Key::boxed(&vec![0x42; key_len]).unwrap();
            for (name, mode) in modes {
                let mut cells = Vec::new();
                for len in [16384, 256] {
                    let mut buf = vec![0x5a; len];
                    let mut state = [0; 16];
                    let secs = time_per_call(5, 100, || {
                        kernel(&k, mode, &mut state, InOut::InPlace(black_box(&mut buf)));
                    });
                    cells.push(format!("{:.2} GB/s", len as f64 / secs / 1e9));
                }
                println!(
                    "AES-{:<4} {name:<8} {:>10} {:>10}",
                    key_len * 8,
                    cells[0],
                    cells[1]
                );
            }
        }
    }

    #[test]
    #[ignore = "measurement; run with --release -- --ignored --nocapture"]
    fn aesni_key_setup() {
        if Key::boxed(&[0; 16]).is_none() {
            eprintln!("skipped: AES-NI/SSSE3 not detected");
            return;
        }
        for key_len in [16, 24, 32] {
            let key = vec![0x42; key_len];
            let mut k = Key::boxed(&key).unwrap();
            let enc_only = time_per_call(7, 100, || {
                // SAFETY: AES-NI and SSSE3 were detected (checked above); the
                // length matches `k.rounds`.
                unsafe { expand::<false>(black_box(&key), &mut k) };
                black_box(&mut k);
            });
            let both = time_per_call(7, 100, || {
                // SAFETY: as above.
                unsafe { expand::<true>(black_box(&key), &mut k) };
                black_box(&mut k);
            });
            let new = time_per_call(7, 100, || {
                // Forget, not drop: this times the expansion, not the zeroizing.
                core::mem::forget(black_box(Key::boxed(black_box(&key))));
            });
            let new_drop = time_per_call(7, 100, || {
                drop(black_box(Key::boxed(black_box(&key))));
            });
            println!(
                "AES-{}: encrypt schedule {:.1} ns, both schedules {:.1} ns, \
                 Key::boxed {:.1} ns, Key::boxed + drop {:.1} ns",
                key_len * 8,
                enc_only * 1e9,
                both * 1e9,
                new * 1e9,
                new_drop * 1e9
            );
        }
    }
}
