//! ChaCha20 on zmm registers for the `avx512` backend: 16 blocks in the
//! word-per-register layout, 4 more in the row layout beside them, the
//! transposition to byte order, and masked partial XORs. The hook
//! ([`Between`]) lets the AEAD kernel interleave Poly1305 with the rounds.
//! Not Poly1305 (`poly1305_ifma.rs`), not the AEAD kernels
//! (`chacha20_avx512.rs`).
#![allow(unsafe_code)]

use super::*;
pub(super) use crate::chacha20poly1305::chacha20_avx2::{Rows, message_rows, state_rows};

// ---------------------------------------------------------------------------
// ChaCha20: safe `#[target_feature]` helpers, inlined into the kernels.
// ---------------------------------------------------------------------------

pub(super) type State16 = [__m512i; 16];

/// Word `i` of the 16-block state at block `skip` of `state`: word `i`
/// broadcast, and for word 12 (the block counter) `state[12] + skip` plus
/// the lane number. Read from `state` each time it is needed (at the start
/// of the rounds and for the final addition), volatile, so that LLVM cannot
/// keep the key words in registers across the rounds (or hoist them out of
/// a caller's loop) and spill them to stack slots nobody wipes; there is no
/// broadcast copy of the state in memory to store and wipe either. The
/// loads are off the critical path.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn word(state: &[u32; 16], skip: u32, i: usize) -> __m512i {
    // SAFETY: `state[i]` is a valid u32.
    let w = unsafe { core::ptr::read_volatile(&state[i]) };
    if i == 12 {
        _mm512_add_epi32(
            _mm512_set1_epi32(w.wrapping_add(skip) as i32),
            _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        )
    } else {
        _mm512_set1_epi32(w as i32)
    }
}

/// The 16 words at block `skip` of `state` (see [`word`]); written out, not
/// `array::from_fn`, whose closure may be an out-of-line function returning
/// each register through memory.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn words(state: &[u32; 16], skip: u32) -> State16 {
    let mut x = [_mm512_setzero_si512(); 16];
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = word(state, skip, i);
    }
    x
}

/// Four quarter rounds side by side on the words of `$x` named by `$q`
/// (a macro, not a function: it must be inlined into the kernel so the 16
/// state words stay in registers).
macro_rules! quarter4 {
    ($x:ident, $q:expr) => {{
        let q: [[usize; 4]; 4] = $q;
        // a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12; then 8 and 7.
        for [a, b, _, d] in q {
            $x[a] = _mm512_add_epi32($x[a], $x[b]);
            $x[d] = _mm512_rol_epi32::<16>(_mm512_xor_si512($x[d], $x[a]));
        }
        for [_, b, c, d] in q {
            $x[c] = _mm512_add_epi32($x[c], $x[d]);
            $x[b] = _mm512_rol_epi32::<12>(_mm512_xor_si512($x[b], $x[c]));
        }
        for [a, b, _, d] in q {
            $x[a] = _mm512_add_epi32($x[a], $x[b]);
            $x[d] = _mm512_rol_epi32::<8>(_mm512_xor_si512($x[d], $x[a]));
        }
        for [_, b, c, d] in q {
            $x[c] = _mm512_add_epi32($x[c], $x[d]);
            $x[b] = _mm512_rol_epi32::<7>(_mm512_xor_si512($x[b], $x[c]));
        }
    }};
}

/// Work spread over the 10 double rounds of a batch (the stitched
/// Poly1305). `step` must inline into the kernel: a call there would spill
/// every state register (all vector registers are caller-saved).
pub(super) trait Between {
    /// Runs after double round `i` (0..10).
    fn step(&mut self, i: usize);
}

/// Nothing between the rounds.
impl Between for () {
    #[inline(always)]
    fn step(&mut self, _: usize) {}
}

/// Column and diagonal word quadruples `(a, b, c, d)`.
pub(super) const COLUMNS: [[usize; 4]; 4] =
    [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]];
pub(super) const DIAGONALS: [[usize; 4]; 4] =
    [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]];

/// Four 128-bit lanes of each of `u[0..4]` transposed: result `l` is lane
/// `l` of `u[0]`, `u[1]`, `u[2]`, `u[3]`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn lanes4x4(u: [__m512i; 4]) -> [__m512i; 4] {
    let s0 = _mm512_shuffle_i32x4::<0x88>(u[0], u[1]); // u0.0 u0.2 u1.0 u1.2
    let s1 = _mm512_shuffle_i32x4::<0xdd>(u[0], u[1]); // u0.1 u0.3 u1.1 u1.3
    let s2 = _mm512_shuffle_i32x4::<0x88>(u[2], u[3]);
    let s3 = _mm512_shuffle_i32x4::<0xdd>(u[2], u[3]);
    [
        _mm512_shuffle_i32x4::<0x88>(s0, s2),
        _mm512_shuffle_i32x4::<0x88>(s1, s3),
        _mm512_shuffle_i32x4::<0xdd>(s0, s2),
        _mm512_shuffle_i32x4::<0xdd>(s1, s3),
    ]
}

/// 16 ChaCha20 blocks from block `skip` of `state`, in byte order:
/// register `b` is block `skip + b` (keystream bytes `64b..64b + 64`), handed
/// to `take` with `between` (see [`blocks20`]). `between.step(i)` runs after
/// double round `i` (0..10): the stitched Poly1305 work goes there.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn blocks16<B: Between, R>(
    state: &[u32; 16],
    skip: u32,
    between: &mut B,
    take: impl FnOnce([__m512i; 16], &mut B) -> R,
) -> R {
    let mut x = words(state, skip);
    for i in 0..10 {
        quarter4!(x, COLUMNS);
        quarter4!(x, DIAGONALS);
        between.step(i);
    }
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = _mm512_add_epi32(*xi, word(state, skip, i));
    }
    take(transpose(&x), between)
}

/// The 16 finished blocks of `x` (one word of every block per register) in
/// byte order: register `b` is block `b`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn transpose(x: &State16) -> [__m512i; 16] {
    // Within each 128-bit lane (blocks 4L..4L+4) a 4x4 transpose of 32-bit
    // words: u[g][b] lane L = words 4g..4g+4 of block 4L + b.
    let mut u = [[_mm512_setzero_si512(); 4]; 4];
    for (g, ug) in u.iter_mut().enumerate() {
        let t0 = _mm512_unpacklo_epi32(x[4 * g], x[4 * g + 1]);
        let t1 = _mm512_unpackhi_epi32(x[4 * g], x[4 * g + 1]);
        let t2 = _mm512_unpacklo_epi32(x[4 * g + 2], x[4 * g + 3]);
        let t3 = _mm512_unpackhi_epi32(x[4 * g + 2], x[4 * g + 3]);
        ug[0] = _mm512_unpacklo_epi64(t0, t2);
        ug[1] = _mm512_unpackhi_epi64(t0, t2);
        ug[2] = _mm512_unpacklo_epi64(t1, t3);
        ug[3] = _mm512_unpackhi_epi64(t1, t3);
    }
    let mut out = [_mm512_setzero_si512(); 16];
    for b in 0..4 {
        let l = lanes4x4([u[0][b], u[1][b], u[2][b], u[3][b]]);
        for (lane, v) in l.into_iter().enumerate() {
            out[4 * lane + b] = v;
        }
    }
    out
}

/// 20 ChaCha20 blocks from block `skip` of `state`, in byte order: 16 in
/// the word-per-register layout (counters `state[12] + skip + 0..16`) and 4
/// in the row layout (counters `+ 16..20`) as registers 16..20. (The
/// counter is added as the words are read, not in a copy of `state`: a copy
/// is one more place for the key, and without LTO the compiler left one
/// behind unwiped.) A 16-block state alone has only 4 independent quarter
/// rounds per half round, too few to hide the latency of its
/// add/xor/rotate chains; the row set runs in the gaps (~25% more blocks
/// for a few percent more time), and 20 blocks are 10 Poly1305 groups, one
/// per double round.
/// `between.step(i)` runs after double round `i`, as in [`blocks16`].
/// The blocks go to `take` (with `between`, for work that must follow the
/// last step), which runs inside this function: whether LLVM inlines it
/// into its caller or not, they are used in the registers they are made in,
/// never returned through memory (where nobody would wipe them).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn blocks20<B: Between, R>(
    state: &[u32; 16],
    skip: u32,
    between: &mut B,
    take: impl FnOnce([__m512i; 20], &mut B) -> R,
) -> R {
    // The first row-layout block's counter offset.
    let ctr = skip.wrapping_add(16) as i32;
    // Row `i / 4` of the 4 blocks. Read from memory each time (volatile, as
    // in `word`), at the start and again for the final addition: kept
    // in registers across the rounds, or hoisted out of a caller's loop,
    // the key rows would be spilled to stack slots nobody wipes.
    let row = |i: usize| {
        debug_assert!(i <= 12);
        // SAFETY: words i..i + 4 of `state` (i <= 12) are a valid
        // `[u32; 4]` (alignment 4), the size of a `__m128i`.
        let w = unsafe { core::ptr::read_volatile(state.as_ptr().add(i).cast::<[u32; 4]>()) };
        // SAFETY: any 16 bytes are a valid `__m128i`.
        let v = _mm512_broadcast_i32x4(unsafe { core::mem::transmute::<[u32; 4], __m128i>(w) });
        if i == 12 {
            let (c0, c1) = (ctr, ctr.wrapping_add(1));
            let (c2, c3) = (ctr.wrapping_add(2), ctr.wrapping_add(3));
            _mm512_add_epi32(
                v,
                _mm512_setr_epi32(c0, 0, 0, 0, c1, 0, 0, 0, c2, 0, 0, 0, c3, 0, 0, 0),
            )
        } else {
            v
        }
    };
    let (mut a, mut b, mut c, mut d) = (row(0), row(4), row(8), row(12));
    macro_rules! row_qr {
        () => {
            a = _mm512_add_epi32(a, b);
            d = _mm512_rol_epi32::<16>(_mm512_xor_si512(d, a));
            c = _mm512_add_epi32(c, d);
            b = _mm512_rol_epi32::<12>(_mm512_xor_si512(b, c));
            a = _mm512_add_epi32(a, b);
            d = _mm512_rol_epi32::<8>(_mm512_xor_si512(d, a));
            c = _mm512_add_epi32(c, d);
            b = _mm512_rol_epi32::<7>(_mm512_xor_si512(b, c));
        };
    }
    let mut x = words(state, skip);
    for i in 0..10 {
        quarter4!(x, COLUMNS);
        row_qr!();
        b = _mm512_shuffle_epi32::<0x39>(b);
        c = _mm512_shuffle_epi32::<0x4e>(c);
        d = _mm512_shuffle_epi32::<0x93>(d);
        quarter4!(x, DIAGONALS);
        row_qr!();
        b = _mm512_shuffle_epi32::<0x93>(b);
        c = _mm512_shuffle_epi32::<0x4e>(c);
        d = _mm512_shuffle_epi32::<0x39>(d);
        between.step(i);
    }
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = _mm512_add_epi32(*xi, word(state, skip, i));
    }
    let t = transpose(&x);
    let r = lanes4x4([
        _mm512_add_epi32(a, row(0)),
        _mm512_add_epi32(b, row(4)),
        _mm512_add_epi32(c, row(8)),
        _mm512_add_epi32(d, row(12)),
    ]);
    // Written out, not `array::from_fn`: without LTO its closure may be
    // an out-of-line function returning each register through memory.
    #[rustfmt::skip]
    let ks = [
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
        t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15],
        r[0], r[1], r[2], r[3],
    ];
    take(ks, between)
}

/// `dst[..1280] = src[..1280] ^` the 20 blocks of [`blocks20`] from block
/// `skip` of `state`, XORed from the registers they are made in: the
/// keystream is never stored, so there is no buffer to wipe (two zmm stores and a load
/// a block fewer: 14% of the bare ChaCha20 time on a Zen 4, whose zmm
/// store takes two cycles). `before` runs after the rounds, before the
/// first store (an opening's last chunk absorbs its rest there).
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing 1280 bytes; they
/// are equal or do not overlap.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) unsafe fn xor_batch<B: Between>(
    state: &[u32; 16],
    skip: u32,
    between: &mut B,
    before: impl FnOnce(&mut B),
    src: *const u8,
    dst: *mut u8,
) {
    blocks20(state, skip, between, |ks, between| {
        before(between);
        for (j, k) in ks.into_iter().enumerate() {
            // SAFETY: bytes 64j..64j + 64 of the caller's 1280-byte ranges;
            // each register is loaded before it is stored.
            unsafe {
                let v = _mm512_loadu_si512(src.add(64 * j).cast());
                _mm512_storeu_si512(dst.add(64 * j).cast(), _mm512_xor_si512(v, k));
            }
        }
    })
}

/// `4 * SETS` ChaCha20 blocks (counters `init[3]`'s first word + `0..4 *
/// SETS`) in row layout: each register holds one row (4 words) of 4 blocks,
/// one block per 128-bit lane. Returns the blocks in byte order (register
/// `b` is block `b`), `N = 4 * SETS` registers: a short message's caller
/// spills, and wipes, only those. `between(i)` runs after double round `i`,
/// as in [`blocks16`].
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn rows<const SETS: usize, const N: usize, B: Between>(
    init: &Rows,
    between: &mut B,
) -> [__m512i; N] {
    const { assert!(N == 4 * SETS) };
    // Volatile loads (as `avx2`'s `rows`): LLVM can neither keep the key
    // rows (`b`, `c`) in registers across the rounds, where they were
    // spilled to unwiped stack slots, nor forward the caller's stores.
    let row = |i: usize| {
        // SAFETY: `init[i / 4]` is a valid `__m128i` (`i <= 12`).
        _mm512_broadcast_i32x4(unsafe { core::ptr::read_volatile(&init[i / 4]) })
    };
    let d_init = |s: usize| {
        let s = 4 * s as i32;
        _mm512_add_epi32(
            row(12),
            _mm512_setr_epi32(s, 0, 0, 0, s + 1, 0, 0, 0, s + 2, 0, 0, 0, s + 3, 0, 0, 0),
        )
    };
    let mut a = [row(0); SETS];
    let mut b = [row(4); SETS];
    let mut c = [row(8); SETS];
    let mut d: [__m512i; SETS] = core::array::from_fn(d_init);
    macro_rules! qr {
        () => {
            for s in 0..SETS {
                a[s] = _mm512_add_epi32(a[s], b[s]);
                d[s] = _mm512_rol_epi32::<16>(_mm512_xor_si512(d[s], a[s]));
                c[s] = _mm512_add_epi32(c[s], d[s]);
                b[s] = _mm512_rol_epi32::<12>(_mm512_xor_si512(b[s], c[s]));
                a[s] = _mm512_add_epi32(a[s], b[s]);
                d[s] = _mm512_rol_epi32::<8>(_mm512_xor_si512(d[s], a[s]));
                c[s] = _mm512_add_epi32(c[s], d[s]);
                b[s] = _mm512_rol_epi32::<7>(_mm512_xor_si512(b[s], c[s]));
            }
        };
    }
    for i in 0..10 {
        qr!();
        // Diagonals (a[i-1], b[i], c[i+1], d[i+2]) in column i: `b`, the
        // last row a quarter round writes and the first it reads, stays
        // put, so no shuffle lies on the dependency chain.
        for s in 0..SETS {
            a[s] = _mm512_shuffle_epi32::<0x93>(a[s]);
            c[s] = _mm512_shuffle_epi32::<0x39>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x4e>(d[s]);
        }
        qr!();
        for s in 0..SETS {
            a[s] = _mm512_shuffle_epi32::<0x39>(a[s]);
            c[s] = _mm512_shuffle_epi32::<0x93>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x4e>(d[s]);
        }
        between.step(i);
    }
    // The rows again, from memory, once per set (see `row`).
    let mut out = [_mm512_setzero_si512(); N];
    for s in 0..SETS {
        let l = lanes4x4([
            _mm512_add_epi32(a[s], row(0)),
            _mm512_add_epi32(b[s], row(4)),
            _mm512_add_epi32(c[s], row(8)),
            _mm512_add_epi32(d[s], d_init(s)),
        ]);
        out[4 * s..4 * s + 4].copy_from_slice(&l);
    }
    out
}

/// The keystream of a chunk of `n` (<= 1280) bytes from block `skip` of
/// `state`, handed to `take` as registers in byte order (with `between`,
/// for work that must follow its last step) and wiped when it returns: the
/// row layout for up to 8 blocks, else 16 or 20 blocks.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn keystream<B: Between, R>(
    state: &[u32; 16],
    skip: u32,
    n: usize,
    between: &mut B,
    take: impl FnOnce(&mut [__m512i], &mut B) -> R,
) -> R {
    debug_assert!(n <= 1280);
    match n {
        0..=512 => {
            let mut init = [_mm_setzero_si128(); 4];
            state_rows(state, &mut init);
            // SAFETY: `init[3]` is a valid, aligned `__m128i` (volatile as
            // in `state_rows`: the rows are the caller-wiped copy).
            unsafe {
                let d = _mm_add_epi32(init[3], _mm_cvtsi32_si128(skip as i32));
                core::ptr::write_volatile(&mut init[3], d);
            }
            if n <= 256 {
                let mut ks = rows::<1, 4, B>(&init, between);
                init.zeroize();
                let r = take(&mut ks, between);
                wipe(&mut ks);
                r
            } else {
                let mut ks = rows::<2, 8, B>(&init, between);
                init.zeroize();
                let r = take(&mut ks, between);
                wipe(&mut ks);
                r
            }
        }
        513..=1024 => blocks16(state, skip, between, |mut ks, between| {
            let r = take(&mut ks, between);
            wipe(&mut ks);
            r
        }),
        _ => blocks20(state, skip, between, |mut ks, between| {
            let r = take(&mut ks, between);
            wipe(&mut ks);
            r
        }),
    }
}

/// The byte mask of the first `n` bytes of a 64-byte register.
#[inline(always)]
pub(super) fn byte_mask(n: usize) -> __mmask64 {
    if n >= 64 { !0 } else { (1u64 << n) - 1 }
}

/// `dst[..n] = src[..n] ^ keystream`, the keystream starting at register
/// `first` of `ks` (byte `64 * first`); `n <= 64 * (ks.len() - first)`. A
/// last partial register is read and written with byte masks (masked-off
/// bytes are not accessed).
///
/// # Safety
/// `src` must be valid for reading and `dst` for writing `n` bytes; they are
/// equal or do not overlap.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) unsafe fn xor_partial(
    src: *const u8,
    dst: *mut u8,
    ks: &[__m512i],
    first: usize,
    n: usize,
) {
    debug_assert!(n <= 64 * (ks.len() - first));
    for j in 0..n.div_ceil(64) {
        let m = byte_mask(n - 64 * j);
        // SAFETY: the unmasked bytes are 64j..min(64j + 64, n) of the
        // caller's ranges; each register is loaded before it is stored.
        unsafe {
            let v = _mm512_maskz_loadu_epi8(m, src.add(64 * j).cast());
            _mm512_mask_storeu_epi8(
                dst.add(64 * j).cast(),
                m,
                _mm512_xor_si512(v, ks[first + j]),
            );
        }
    }
}

/// Overwrites vector registers spilled to memory (volatile, not optimised away).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
pub(super) fn wipe(ks: &mut [__m512i]) {
    for k in ks.iter_mut() {
        // SAFETY: `k` is a valid, aligned `__m512i`.
        unsafe { core::ptr::write_volatile(k, _mm512_setzero_si512()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}
