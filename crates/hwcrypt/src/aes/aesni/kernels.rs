//! The mode kernels of the AES-NI backend: ECB, CBC, CFB128, OFB, CTR and
//! XTS over 128-bit xmm registers, 8 blocks in flight where blocks are
//! independent, and the load/store and round macros they share. Not the key
//! type, the key schedule or the single-block calls (`aesni.rs`), which also
//! binds the round count and dispatches to these kernels.
//! Their common safety contract ("the kernel contract") is stated above
//! the first kernel.
#![allow(unsafe_code)]

use super::*;

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
pub(super) unsafe fn load_at(p: *const u8, i: usize) -> __m128i {
    // SAFETY: the caller guarantees the 16 bytes are readable; unaligned is fine.
    unsafe { _mm_loadu_si128(p.add(16 * i).cast()) }
}

/// Stores `x` as block `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `16 * i .. 16 * (i + 1)` of `p` must be writable.
#[inline(always)]
pub(super) unsafe fn store_at(p: *mut u8, i: usize, x: __m128i) {
    // SAFETY: the caller guarantees the 16 bytes are writable; unaligned is fine.
    unsafe { _mm_storeu_si128(p.add(16 * i).cast(), x) }
}

/// Blocks `0..N` of the buffer at `p`.
///
/// # Safety
/// The first `16 * N` bytes of `p` must be readable.
#[inline]
#[target_feature(enable = "sse2")]
pub(super) unsafe fn load_n<const N: usize>(p: *const u8) -> [__m128i; N] {
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
pub(super) unsafe fn store_n<const N: usize>(p: *mut u8, x: [__m128i; N]) {
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
pub(super) unsafe fn ecb_enc<const R: usize>(
    keys: &RoundKeys,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
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
pub(super) unsafe fn ecb_dec<const R: usize>(
    keys: &RoundKeys,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
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
pub(super) unsafe fn cbc_dec<const R: usize>(
    keys: &RoundKeys,
    chain: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    let mut prev = load_halves(chain);
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
pub(super) unsafe fn cfb_dec<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    let mut prev = load_halves(register);
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
pub(super) fn bswap128(x: __m128i) -> __m128i {
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
pub(super) fn ctr_inc<const FULL: bool>(ctr: __m128i) -> __m128i {
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
pub(super) unsafe fn ctr<const R: usize, const FULL: bool>(
    keys: &RoundKeys,
    counter: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    if blocks == 1 {
        // One block: the counter block goes to the rounds as loaded, not
        // byte-swapped twice and through memory on the way; the counter's
        // update runs beside the rounds.
        let first = load_halves(counter);
        let mut x = [first];
        rounds!(_mm_aesenc_si128, R, keys, x);
        // SAFETY: block 0 is in bounds (kernel contract).
        let d = unsafe { load_at(src, 0) };
        let y = _mm_aesenclast_si128(x[0], _mm_xor_si128(keys.key(R), d));
        // SAFETY: as above.
        unsafe { store_at(dst, 0, y) };
        let c = bswap128(first);
        let mut next = ctr_inc::<FULL>(c);
        if FULL && _mm_cvtsi128_si64(c) == -1 {
            // The low 64 bits wrapped to 0: carry into the high lane.
            next = _mm_add_epi64(next, _mm_set_epi64x(1, 0));
        }
        // SAFETY: `counter` is 16 writable bytes.
        unsafe { store(counter, bswap128(next)) };
        return;
    }
    let mut c = bswap128(load_halves(counter));
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
pub(super) unsafe fn ctr_run<const R: usize, const FULL: bool>(
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
pub(super) unsafe fn cbc_enc<const R: usize>(
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
    // SAFETY: block 0 is in bounds (kernel contract).
    let mut x = [_mm_xor_si128(load_halves(chain), unsafe {
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
pub(super) unsafe fn cfb_enc<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    let mut x = [_mm_xor_si128(load_halves(register), k.key(0))];
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
pub(super) unsafe fn ofb<const R: usize>(
    keys: &RoundKeys,
    register: &mut Block,
    src: *const u8,
    dst: *mut u8,
    blocks: usize,
) {
    let k = keys;
    let last_first = _mm_xor_si128(k.key(R), k.key(0));
    let mut x = [_mm_xor_si128(load_halves(register), k.key(0))];
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
pub(super) fn xts_reduce(c: __m128i) -> __m128i {
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
pub(super) fn xts_mul_xk(x: __m128i, k: i64) -> __m128i {
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
pub(super) fn xts_mul_x8(x: __m128i) -> __m128i {
    // SAFETY: SSE2 is part of x86-64.
    unsafe { _mm_xor_si128(_mm_slli_si128::<1>(x), xts_reduce(_mm_srli_si128::<15>(x))) }
}

/// Tweak times x^8, the reduction by one carry-less multiply.
#[inline]
#[target_feature(enable = "sse2,pclmulqdq")]
pub(super) fn xts_mul_x8_clmul(x: __m128i) -> __m128i {
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
        pub(super) unsafe fn $name<const R: usize, const DEC: bool>(
            keys: &RoundKeys,
            tweak_key: Option<&RoundKeys>,
            tweak: &mut Block,
            src: *const u8,
            dst: *mut u8,
            blocks: usize,
        ) {
            let k = keys;
            let mut t0 = load_halves(tweak);
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
