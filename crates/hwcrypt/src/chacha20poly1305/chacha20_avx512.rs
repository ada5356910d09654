//! AVX-512 backend for ChaCha20-Poly1305 (`avx512`).
//!
//! ChaCha20 runs on 20 blocks per pass. 16 are in the word-per-register
//! layout: one 32-bit state word of all 16 blocks per zmm register, so the
//! 16 state words fill 16 of the 32 zmm registers and a quarter round is
//! lane-wise `vpaddd`/`vpxord`/`vprold` (AVX-512 has a true rotate: no
//! shuffles, shift pairs or temporaries); the finished blocks are transposed
//! to byte order with 32- and 64-bit interleaves and two rounds of 128-bit
//! lane shuffles. That layout alone is bound by the latency of its 4
//! independent quarter-round chains, so 4 more blocks run beside it in the
//! row layout (one row of 4 blocks per register, the diagonal rounds rotate
//! rows with `vpshufd`): 25% more blocks for little more time. Messages of up
//! to 448 bytes, and short last chunks, use the row layout alone (4 or 8
//! blocks, no transposition).
//!
//! Poly1305 has two engines. Below [`IFMA_MIN`] bytes (only on the short
//! path) it is the scalar 64-bit-limb code, run after (sealing) or before
//! (opening) the ChaCha20 pass. From there on it is vectorised with
//! AVX512-IFMA
//! (`vpmadd52luq`/`vpmadd52huq`): radix 2^44 (limbs of 44, 44 and 42 bits),
//! 8 blocks in parallel, one block per 64-bit lane, each lane multiplied by
//! r^8 per 128-byte group; at the end lane `j` is multiplied by r^(8-j) and
//! the lanes are summed; the powers r^1..r^8 come from three rounds of
//! lane-wise products. For messages past the first batch, one group is
//! absorbed after each of the 10 double rounds of the next 1280-byte batch
//! (20 blocks = 10 groups), so both run in one pass while the data is in L1;
//! shorter ones are absorbed before or after their one pass.
//!
//! Chunk alignment: the first batch uses counters 0..20 (block 0 is the
//! Poly1305 key), so ciphertext chunks end at 1216 + 1280k. The scalar code
//! absorbs the first 64 ciphertext bytes, after which every chunk end is a
//! multiple of 128 bytes from where the vector code starts; only the last
//! (partial) chunk leaves a remainder, which the scalar code absorbs after
//! the vector lanes were folded back into it.
//!
//! Constant time: no branch or memory index depends on the key, the data or
//! the accumulator; lengths and positions are public. Keystream buffers, the
//! ChaCha20 state and the Poly1305 lane state (with the key powers) are
//! wiped after use; register temporaries are not forced to memory to be
//! wiped (doing so for the key-power temporaries cost 6-7% at 256 B-1 KiB).
//!
//! An [`Avx512`] token exists only after the features of
//! [`CHACHA20_AVX512_FEATURES`] were detected, so its methods may call the
//! `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::chacha20_soft;
use super::poly1305_soft::Poly1305;
use crate::aead::Tag;
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::CHACHA20_AVX512_FEATURES;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Bytes per batch: 20 blocks, 16 in the word-per-register layout and 4 in
/// the row layout beside them (see [`blocks20`]).
const BATCH: usize = 1280;
/// Keystream bytes of the first batch of a message (block 0 is the Poly1305 key).
const FIRST: usize = BATCH - 64;
/// Longest message the short (row layout) path takes: 8 blocks, less block 0.
const SHORT_MAX: usize = 7 * 64;
/// Messages from this length on use the IFMA Poly1305 (measured: +10% at
/// 256 bytes, +20% at 384 and 512); below it the setup (key powers
/// r^1..r^8, three dependent lane-wise products) and the final fold of the
/// lanes cost about what they save.
const IFMA_MIN: usize = 256;
// Every message of the long path uses the vector Poly1305 and has whole
// groups after the scalar lead.
const _: () = assert!(IFMA_MIN <= SHORT_MAX && SHORT_MAX >= LEAD + GROUP);
/// Bytes the vector Poly1305 absorbs at once (8 blocks, one per lane).
const GROUP: usize = 128;
/// Ciphertext bytes the scalar Poly1305 absorbs before the vector one
/// starts, so that chunk ends fall on group boundaries.
const LEAD: usize = 64;

/// Proof that this CPU runs AVX-512 F/VL/BW/IFMA (only [`Avx512::new`] makes one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx512 {
    _detected: (),
}

impl Avx512 {
    /// `Some` iff the CPU has every feature of [`CHACHA20_AVX512_FEATURES`].
    pub(crate) fn new() -> Option<Avx512> {
        cpu::detected()
            .contains(Features::of(CHACHA20_AVX512_FEATURES))
            .then_some(Avx512 { _detected: () })
    }

    /// XORs the keystream from block `state[12]` on into `io` (the counter
    /// wraps modulo 2^32; callers keep within range).
    pub(crate) fn xor_keystream(self, state: &[u32; 16], io: InOut<'_>) {
        // SAFETY: an `Avx512` exists only if the features were detected.
        unsafe { xor_keystream(state, io) }
    }

    /// Encrypts `input` (or `output` in place, when `input` is `None`) into
    /// `output` and returns the tag over `aad` and the ciphertext. A separate
    /// `input` has the length of `output` (checked by the caller).
    pub(crate) fn seal(
        self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: an `Avx512` exists only if the features were detected; the
        // lengths match (checked above).
        unsafe { aead::<true>(key, nonce, aad, input, output) }
    }

    /// Decrypts like [`Avx512::seal`] encrypts and returns the tag computed
    /// over `aad` and the ciphertext (the input); the caller compares it.
    pub(crate) fn open(
        self,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: as in `seal`.
        unsafe { aead::<false>(key, nonce, aad, input, output) }
    }

    /// The middle of a streamed message: encrypts (`seal`) or decrypts
    /// `input` (or `output` in place, when `input` is `None`) into `output`
    /// from block `state[12]` and absorbs the ciphertext into `poly`,
    /// stitched as in a one-shot message. `output` is whole 64-byte blocks,
    /// a separate `input` as long, and `poly` is at a block boundary.
    pub(crate) fn aead_blocks(
        self,
        seal: bool,
        state: &[u32; 16],
        poly: &mut Poly1305,
        input: Option<&[u8]>,
        output: &mut [u8],
    ) {
        assert!(output.len().is_multiple_of(64));
        assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: an `Avx512` exists only if the features were detected;
        // the length is whole blocks and a separate input as long (checked
        // above).
        unsafe {
            if seal {
                aead_blocks::<true>(state, poly, input, output);
            } else {
                aead_blocks::<false>(state, poly, input, output);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// ChaCha20: safe `#[target_feature]` helpers, inlined into the kernels.
// ---------------------------------------------------------------------------

type State16 = [__m512i; 16];

/// Word `i` of the 16-block initial state, read from memory each time it
/// is needed (at the start of the rounds and for the final addition).
/// Volatile, so that LLVM cannot keep the state (eight words of it are the
/// key, broadcast) in registers across the rounds and spill them to stack
/// slots nobody wipes; the state itself lives in the caller's array, which
/// is wiped. The loads are off the critical path.
#[inline(always)]
fn init_word(init: &State16, i: usize) -> __m512i {
    // SAFETY: `init[i]` is a valid, aligned `__m512i`.
    unsafe { core::ptr::read_volatile(&init[i]) }
}

/// The 16-block state for `state` with block counters `state[12] + 0..16`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn init16(state: &[u32; 16]) -> State16 {
    let mut x: State16 = core::array::from_fn(|i| _mm512_set1_epi32(state[i] as i32));
    x[12] = _mm512_add_epi32(
        x[12],
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    );
    x
}

/// Moves all 16 block counters on by one batch (20 blocks).
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn next_batch(x: &mut State16) {
    let c = _mm512_add_epi32(init_word(x, 12), _mm512_set1_epi32((BATCH / 64) as i32));
    // SAFETY: `x[12]` is a valid, aligned `__m512i` (volatile as in `init_word`).
    unsafe { core::ptr::write_volatile(&mut x[12], c) };
}

/// `state` with its block counter moved on by `blocks`.
#[inline(always)]
fn at(state: &[u32; 16], blocks: u32) -> [u32; 16] {
    let mut s = *state;
    s[12] = s[12].wrapping_add(blocks);
    s
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
trait Between {
    /// Runs after double round `i` (0..10).
    fn step(&mut self, i: usize);
}

/// Nothing between the rounds.
impl Between for () {
    #[inline(always)]
    fn step(&mut self, _: usize) {}
}

/// Column and diagonal word quadruples `(a, b, c, d)`.
const COLUMNS: [[usize; 4]; 4] = [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]];
const DIAGONALS: [[usize; 4]; 4] = [[0, 5, 10, 15], [1, 6, 11, 12], [2, 7, 8, 13], [3, 4, 9, 14]];

/// Four 128-bit lanes of each of `u[0..4]` transposed: result `l` is lane
/// `l` of `u[0]`, `u[1]`, `u[2]`, `u[3]`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn lanes4x4(u: [__m512i; 4]) -> [__m512i; 4] {
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

/// 16 ChaCha20 blocks of `init` in byte order: register `b` is block `b`
/// (keystream bytes `64b..64b + 64`). `between.step(i)` runs after double round
/// `i` (0..10): the stitched Poly1305 work goes there.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn blocks16<B: Between>(init: &State16, between: &mut B) -> [__m512i; 16] {
    let mut x: State16 = core::array::from_fn(|i| init_word(init, i));
    for i in 0..10 {
        quarter4!(x, COLUMNS);
        quarter4!(x, DIAGONALS);
        between.step(i);
    }
    for (i, xi) in x.iter_mut().enumerate() {
        *xi = _mm512_add_epi32(*xi, init_word(init, i));
    }
    transpose(&x)
}

/// The 16 finished blocks of `x` (one word of every block per register) in
/// byte order: register `b` is block `b`.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn transpose(x: &State16) -> [__m512i; 16] {
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

/// 20 ChaCha20 blocks in byte order: 16 from `init` (counters `init[12] +
/// 0..16`, word-per-register layout) and 4 from `row_state` (counters
/// `row_state[12] + 0..4`, row layout) as registers 16..20. A 16-block
/// state alone has only 4 independent quarter rounds per half round, too
/// few to hide the latency of its add/xor/rotate chains; the row set runs
/// in the gaps (~25% more blocks for a few percent more time), and 20
/// blocks are 10 Poly1305 groups, one per double round.
/// `between.step(i)` runs after double round `i`, as in [`blocks16`].
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn blocks20<B: Between>(init: &State16, row_state: &[u32; 16], between: &mut B) -> [__m512i; 20] {
    let row = |i: usize| {
        _mm512_broadcast_i32x4(_mm_setr_epi32(
            row_state[i] as i32,
            row_state[i + 1] as i32,
            row_state[i + 2] as i32,
            row_state[i + 3] as i32,
        ))
    };
    let (a0, b0, c0) = (row(0), row(4), row(8));
    let d0 = _mm512_add_epi32(
        row(12),
        _mm512_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0),
    );
    let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
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
    let mut x: State16 = core::array::from_fn(|i| init_word(init, i));
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
        *xi = _mm512_add_epi32(*xi, init_word(init, i));
    }
    let mut out = [_mm512_setzero_si512(); 20];
    out[..16].copy_from_slice(&transpose(&x));
    out[16..].copy_from_slice(&lanes4x4([
        _mm512_add_epi32(a, a0),
        _mm512_add_epi32(b, b0),
        _mm512_add_epi32(c, c0),
        _mm512_add_epi32(d, d0),
    ]));
    out
}

/// `4 * SETS` ChaCha20 blocks (counters `state[12] + 0..4 * SETS`) in row
/// layout: each register holds one row (4 words) of 4 blocks, one block per
/// 128-bit lane. Returns the blocks in byte order (register `b` is block
/// `b`); registers past `4 * SETS` are zero. `between(i)` runs after double
/// round `i`, as in [`blocks16`].
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn rows<const SETS: usize, B: Between>(state: &[u32; 16], between: &mut B) -> [__m512i; 16] {
    let row = |i: usize| {
        _mm512_broadcast_i32x4(_mm_setr_epi32(
            state[i] as i32,
            state[i + 1] as i32,
            state[i + 2] as i32,
            state[i + 3] as i32,
        ))
    };
    let (a0, b0, c0) = (row(0), row(4), row(8));
    let d0: [__m512i; SETS] = core::array::from_fn(|s| {
        let s = 4 * s as i32;
        _mm512_add_epi32(
            row(12),
            _mm512_setr_epi32(s, 0, 0, 0, s + 1, 0, 0, 0, s + 2, 0, 0, 0, s + 3, 0, 0, 0),
        )
    });
    let mut a = [a0; SETS];
    let mut b = [b0; SETS];
    let mut c = [c0; SETS];
    let mut d = d0;
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
        for s in 0..SETS {
            b[s] = _mm512_shuffle_epi32::<0x39>(b[s]);
            c[s] = _mm512_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x93>(d[s]);
        }
        qr!();
        for s in 0..SETS {
            b[s] = _mm512_shuffle_epi32::<0x93>(b[s]);
            c[s] = _mm512_shuffle_epi32::<0x4e>(c[s]);
            d[s] = _mm512_shuffle_epi32::<0x39>(d[s]);
        }
        between.step(i);
    }
    let mut out = [_mm512_setzero_si512(); 16];
    for s in 0..SETS {
        let l = lanes4x4([
            _mm512_add_epi32(a[s], a0),
            _mm512_add_epi32(b[s], b0),
            _mm512_add_epi32(c[s], c0),
            _mm512_add_epi32(d[s], d0[s]),
        ]);
        out[4 * s..4 * s + 4].copy_from_slice(&l);
    }
    out
}

/// Keystream for a chunk of `n` (<= 1280) bytes from block `state[12]`
/// (`x` is the same position as a 16-block state): the row layout for up to
/// 8 blocks, else 16 or 20 blocks. Registers in byte order.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn keystream<B: Between>(
    x: &State16,
    state: &[u32; 16],
    n: usize,
    between: &mut B,
) -> [__m512i; 20] {
    let mut out = [_mm512_setzero_si512(); 20];
    match n {
        0..=256 => out[..16].copy_from_slice(&rows::<1, B>(state, between)),
        257..=512 => out[..16].copy_from_slice(&rows::<2, B>(state, between)),
        513..=1024 => out[..16].copy_from_slice(&blocks16(x, between)),
        _ => {
            let mut row_state = at(state, 16);
            out = blocks20(x, &row_state, between);
            row_state.zeroize();
        }
    }
    out
}

/// The byte mask of the first `n` bytes of a 64-byte register.
#[inline(always)]
fn byte_mask(n: usize) -> __mmask64 {
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
unsafe fn xor_partial(src: *const u8, dst: *mut u8, ks: &[__m512i], first: usize, n: usize) {
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
fn wipe(ks: &mut [__m512i]) {
    for k in ks.iter_mut() {
        // SAFETY: `k` is a valid, aligned `__m512i`.
        unsafe { core::ptr::write_volatile(k, _mm512_setzero_si512()) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

// ---------------------------------------------------------------------------
// Poly1305 with AVX512-IFMA.
// ---------------------------------------------------------------------------

const M44: u64 = (1 << 44) - 1;
const M42: u64 = (1 << 42) - 1;

/// `h` (64-bit limbs, `h[2]` at most 7) in radix 2^44.
#[inline(always)]
fn to_radix44(h: [u64; 3]) -> [u64; 3] {
    [
        h[0] & M44,
        ((h[0] >> 44) | (h[1] << 20)) & M44,
        (h[1] >> 24) | (h[2] << 40),
    ]
}

/// `l0 + l1·2^44 + l2·2^88` (each limb below 2^50) in 64-bit limbs,
/// partially reduced (the top limb at most 4).
#[inline(always)]
fn from_radix44(l: [u64; 3]) -> [u64; 3] {
    let a = u128::from(l[0]) + (u128::from(l[1]) << 44);
    let mid = (a >> 64) + (u128::from(l[2]) << 24);
    let (h0, h1, h2) = (a as u64, mid as u64, (mid >> 64) as u64);
    // Fold the bits above 2^130: (h2 >> 2)·2^130 ≡ (h2 >> 2)·5.
    let c = (h2 >> 2) * 5;
    let (h0, c0) = h0.overflowing_add(c);
    let (h1, c1) = h1.overflowing_add(u64::from(c0));
    [h0, h1, (h2 & 3) + u64::from(c1)]
}

/// A multiplier in radix 2^44 for the lane-wise product: its limbs and
/// `20·` its upper two limbs (2^132 ≡ 20 mod 2^130 - 5).
#[derive(Clone, Copy)]
struct Mult {
    r: [__m512i; 3],
    s: [__m512i; 2],
}

impl Mult {
    /// From per-lane limbs (radix 2^44, each below 2^45).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    fn new(r: [__m512i; 3]) -> Mult {
        // 20·limb < 2^50: exact in one 52-bit multiply-add (AVX-512F has no
        // 64-bit multiply, and LLVM turns shifts and adds into one).
        let twenty = _mm512_set1_epi64(20);
        let z = _mm512_setzero_si512();
        Mult {
            r,
            s: [
                _mm512_madd52lo_epu64(z, r[1], twenty),
                _mm512_madd52lo_epu64(z, r[2], twenty),
            ],
        }
    }

    /// Lane `j` of every limb moved to lane `idx[j]`'s source: the lanes
    /// of `self` permuted by `idx` (as `vpermq`).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    fn permute(&self, idx: __m512i) -> Mult {
        let p = |v: __m512i| _mm512_permutexvar_epi64(idx, v);
        Mult {
            r: [p(self.r[0]), p(self.r[1]), p(self.r[2])],
            s: [p(self.s[0]), p(self.s[1])],
        }
    }

    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    fn wipe(&mut self) {
        wipe(&mut self.r);
        wipe(&mut self.s);
    }
}

/// `h·m` lane-wise, partially reduced (limbs as [`carry`] leaves them).
/// Inputs: limbs of `h` below 2^45.1, 2^45.1, 2^42.6 (a carried product
/// plus a message block), of `m` below 2^44 + 2^15, 2^44 + 2^11, 2^43 (a
/// carried power of r); so each 3-term column sum is below 2^93 (the top
/// one below 2^90), the `lo` sums below 2^54, `hi0`, `hi1` below 2^41 and
/// `hi2` below 2^38.
///
/// Always inlined (it runs inside the ChaCha20 kernel), so it carries no
/// `#[target_feature]`.
///
/// # Safety
/// The CPU must support AVX-512F and AVX512-IFMA.
#[inline(always)]
unsafe fn mul_lanes(h: [__m512i; 3], m: &Mult) -> [__m512i; 3] {
    // SAFETY: AVX-512F/IFMA instructions on registers (caller: supported).
    unsafe {
        let z = _mm512_setzero_si512();
        let [r0, r1, r2] = m.r;
        let [s1, s2] = m.s;
        // d0 = h0 r0 + h1·20 r2 + h2·20 r1
        // d1 = h0 r1 + h1 r0 + h2·20 r2
        // d2 = h0 r2 + h1 r1 + h2 r0
        // each as the sum of the low 52 bits (lo) and of the high bits (hi,
        // worth 2^52 = 2^8 · 2^44, so it moves up one limb shifted by 8).
        let lo0 = _mm512_madd52lo_epu64(z, h[0], r0);
        let hi0 = _mm512_madd52hi_epu64(z, h[0], r0);
        let lo1 = _mm512_madd52lo_epu64(z, h[0], r1);
        let hi1 = _mm512_madd52hi_epu64(z, h[0], r1);
        let lo2 = _mm512_madd52lo_epu64(z, h[0], r2);
        let hi2 = _mm512_madd52hi_epu64(z, h[0], r2);
        let lo0 = _mm512_madd52lo_epu64(lo0, h[1], s2);
        let hi0 = _mm512_madd52hi_epu64(hi0, h[1], s2);
        let lo1 = _mm512_madd52lo_epu64(lo1, h[1], r0);
        let hi1 = _mm512_madd52hi_epu64(hi1, h[1], r0);
        let lo2 = _mm512_madd52lo_epu64(lo2, h[1], r1);
        let hi2 = _mm512_madd52hi_epu64(hi2, h[1], r1);
        let lo0 = _mm512_madd52lo_epu64(lo0, h[2], s1);
        let hi0 = _mm512_madd52hi_epu64(hi0, h[2], s1);
        let lo1 = _mm512_madd52lo_epu64(lo1, h[2], s2);
        let hi1 = _mm512_madd52hi_epu64(hi1, h[2], s2);
        let lo2 = _mm512_madd52lo_epu64(lo2, h[2], r0);
        let hi2 = _mm512_madd52hi_epu64(hi2, h[2], r0);
        // hi2 sits at 2^(88 + 52) = 2^140 ≡ 5·2^10. With the bounds above
        // hi2 < 2^38, so 5·(hi2 << 10) < 2^51: one
        // multiply-add. (Written as shifts and adds, LLVM turns it into a
        // 64-bit multiply, which AVX-512F lacks: 6 instructions.)
        let t0 = _mm512_madd52lo_epu64(lo0, _mm512_slli_epi64::<10>(hi2), _mm512_set1_epi64(5));
        let t1 = _mm512_add_epi64(lo1, _mm512_slli_epi64::<8>(hi0));
        let t2 = _mm512_add_epi64(lo2, _mm512_slli_epi64::<8>(hi1));
        carry(t0, t1, t2)
    }
}

/// One carry step on limbs below 2^55, all three in parallel (a serial
/// carry chain would lengthen the dependency chain of every group): each
/// limb keeps its low 44 (44, 42) bits and passes the rest up, the top
/// limb's carry coming back times 5. Results are below 2^44 + 2^15,
/// 2^44 + 2^11 and 2^42 + 2^11: enough for the next product (see
/// [`mul_lanes`]).
///
/// # Safety
/// The CPU must support AVX-512F and AVX512-IFMA.
#[inline(always)]
unsafe fn carry(t0: __m512i, t1: __m512i, t2: __m512i) -> [__m512i; 3] {
    // SAFETY: AVX-512F/IFMA instructions on registers (caller: supported).
    unsafe {
        let m44 = _mm512_set1_epi64(M44 as i64);
        let m42 = _mm512_set1_epi64(M42 as i64);
        let c0 = _mm512_srli_epi64::<44>(t0);
        let c1 = _mm512_srli_epi64::<44>(t1);
        let c2 = _mm512_srli_epi64::<42>(t2);
        // c2 < 2^13, so 5·c2 fits the 52-bit multiply-add.
        let t0 = _mm512_madd52lo_epu64(_mm512_and_si512(t0, m44), c2, _mm512_set1_epi64(5));
        let t1 = _mm512_add_epi64(_mm512_and_si512(t1, m44), c0);
        let t2 = _mm512_add_epi64(_mm512_and_si512(t2, m42), c1);
        [t0, t1, t2]
    }
}

/// The vector Poly1305 state: 8 lane accumulators, the multiplier r^8 for
/// every lane and the final multipliers r^8..r^1.
pub(crate) struct Ifma {
    h: [__m512i; 3],
    r8: Mult,
    last: Mult,
    /// Whether a group was absorbed (before that, lane 0 holds the scalar
    /// accumulator and the other lanes zero).
    started: bool,
}

impl Ifma {
    /// Takes over from `poly` (its accumulator moves into lane 0).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn new(poly: &Poly1305) -> Ifma {
        // r^1..r^8 by three rounds of lane-wise products (instead of seven
        // serial scalar ones): r·r, then [r, r^2]·r^2, then [r..r^4]·[1, r^4].
        // Each product is partially reduced (limbs below 2^44 + 2^15,
        // 2^44 + 2^11, 2^42 + 2^11), which [`mul_lanes`] takes as either
        // operand.
        let mut r = to_radix44(poly.key_r());
        let bcast = |k: [u64; 3]| Mult::new(k.map(|l| _mm512_set1_epi64(l as i64)));
        let r1 = bcast(r);
        r.zeroize();
        // SAFETY: this function requires AVX-512F and IFMA.
        let r2 = Mult::new(unsafe { mul_lanes(r1.r, &r1) });
        // [r, r^2, r, r^2, ...]
        let q = Mult::new(core::array::from_fn(|k| {
            _mm512_mask_blend_epi64(0xaa, r1.r[k], r2.r[k])
        }));
        // SAFETY: as above.
        let p34 = unsafe { mul_lanes(q.r, &r2) }; // [r^3, r^4, r^3, r^4, ...]
        // [r, r^2, r^3, r^4, r, r^2, r^3, r^4]
        let a: [__m512i; 3] =
            core::array::from_fn(|k| _mm512_mask_blend_epi64(0xcc, q.r[k], p34[k]));
        let r4 = Mult::new(a).permute(_mm512_set1_epi64(3));
        let one = bcast([1, 0, 0]);
        let m = Mult::new(core::array::from_fn(|k| {
            _mm512_mask_blend_epi64(0xf0, one.r[k], r4.r[k])
        }));
        // SAFETY: as above.
        let pow = Mult::new(unsafe { mul_lanes(a, &m) }); // lane j: r^(j + 1)
        let r8 = pow.permute(_mm512_set1_epi64(7));
        // Lane j (the j-th block of the last group) still needs r^(8 - j).
        let last = pow.permute(_mm512_setr_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        let h = to_radix44(poly.accumulator());
        let lane0 = |k: usize| _mm512_maskz_set1_epi64(1, h[k] as i64);
        Ifma {
            h: [lane0(0), lane0(1), lane0(2)],
            r8,
            last,
            started: false,
        }
    }

    /// Absorbs the 8 whole blocks at `p`: `h = h·r^8 + m` lane-wise (just
    /// `h + m` for the first group). Always inlined (it runs inside the
    /// ChaCha20 kernel), so it carries no `#[target_feature]`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX512-IFMA; `p` must be valid for
    /// reading 128 bytes.
    #[inline(always)]
    pub(crate) unsafe fn absorb(&mut self, p: *const u8) {
        // SAFETY: AVX-512F/IFMA instructions (supported, caller); 128
        // readable bytes at `p` (caller); unaligned loads are allowed.
        unsafe {
            let a = _mm512_loadu_si512(p.cast());
            let b = _mm512_loadu_si512(p.add(64).cast());
            // Low and high 64-bit halves of blocks 0..8, one block per lane.
            let lo = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
            let hi = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
            let m44 = _mm512_set1_epi64(M44 as i64);
            let m0 = _mm512_and_si512(lo, m44);
            let m1 = _mm512_and_si512(
                _mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)),
                m44,
            );
            // Bit 128 (2^(88 + 40)) marks a whole block.
            let m2 = _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40));
            let h = if self.started {
                mul_lanes(self.h, &self.r8)
            } else {
                self.h
            };
            self.started = true;
            self.h = [
                _mm512_add_epi64(h[0], m0),
                _mm512_add_epi64(h[1], m1),
                _mm512_add_epi64(h[2], m2),
            ];
        }
    }

    /// Folds the lanes back into `poly`'s accumulator and wipes the state.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn finish(mut self, poly: &mut Poly1305) {
        if self.started {
            // SAFETY: this function requires AVX-512F and IFMA.
            let [h0, h1, h2] = unsafe { mul_lanes(self.h, &self.last) };
            // Each lane limb is below 2^45, so the sums stay below 2^48.
            let mut l = [
                _mm512_reduce_add_epi64(h0) as u64,
                _mm512_reduce_add_epi64(h1) as u64,
                _mm512_reduce_add_epi64(h2) as u64,
            ];
            poly.set_accumulator(from_radix44(l));
            l.zeroize();
        }
        wipe(&mut self.h);
        self.r8.wipe();
        self.last.wipe();
    }
}

// ---------------------------------------------------------------------------
// Kernels.
// ---------------------------------------------------------------------------

/// Plain ChaCha20 over `io` from block `state[12]`.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn xor_keystream(state: &[u32; 16], mut io: InOut<'_>) {
    let len = io.len();
    let (src, dst) = io.ptrs();
    let mut x = init16(state);
    let mut off = 0;
    while off < len {
        let n = (len - off).min(BATCH);
        let mut st = at(state, (off / 64) as u32);
        let mut ks = keystream(&x, &st, n, &mut ());
        st.zeroize();
        // SAFETY: the `n` bytes from `off` are inside both ranges; in place
        // src == dst, else disjoint.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
        next_batch(&mut x);
        off += n;
    }
    wipe(&mut x);
}

/// ChaCha20-Poly1305 seal (`SEAL`) or open, stitched as the module docs
/// describe; returns the tag over `aad` and the ciphertext.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn aead<const SEAL: bool>(
    key: &[u32; 8],
    nonce: &[u32; 3],
    aad: &[u8],
    input: Option<&[u8]>,
    output: &mut [u8],
) -> Tag {
    let len = output.len();
    let dst = output.as_mut_ptr();
    // In place the input is the output; a separate input has the same length
    // and cannot overlap it (it is a shared borrow next to a mutable one).
    let src = input.map_or(dst.cast_const(), <[u8]>::as_ptr);
    // The bytes Poly1305 reads: the ciphertext, i.e. the output when sealing
    // and the input when opening.
    let mac_base = if SEAL { dst.cast_const() } else { src };
    let mac = |from: usize, n: usize| {
        debug_assert!(from + n <= len);
        // SAFETY: `mac_base` covers `len` bytes and every caller passes
        // `from + n <= len`; each slice covers bytes that are not written
        // while it lives (sealing: earlier chunks, already written;
        // opening: the current chunk, written only after its keystream is
        // ready, when the slice is no longer used).
        unsafe { core::slice::from_raw_parts(mac_base.add(from), n) }
    };
    let mut state = chacha20_soft::state(key, 0, nonce);

    if len <= SHORT_MAX {
        let mut ks = if len <= 3 * 64 {
            rows::<1, _>(&state, &mut ())
        } else {
            rows::<2, _>(&state, &mut ())
        };
        state.zeroize();
        let mut poly = poly_from_block0(ks[0]);
        poly.update_padded(aad);
        let vector = len >= IFMA_MIN;
        if !SEAL {
            absorb_padded(&mut poly, mac(0, len), vector);
        }
        // SAFETY: `len <= 448` bytes from the start of both ranges; the
        // keystream from register 1 (block 1) on covers them.
        unsafe { xor_partial(src, dst, &ks, 1, len) };
        wipe(&mut ks);
        if SEAL {
            absorb_padded(&mut poly, mac(0, len), vector);
        }
        return poly.finish_aead(aad.len() as u64, len as u64);
    }

    let mut x = init16(&state);
    let mut ks = keystream(&x, &state, len.min(FIRST) + 64, &mut ());
    let mut poly = poly_from_block0(ks[0]);
    poly.update_padded(aad);
    let first = len.min(FIRST);
    // Ciphertext bytes absorbed so far.
    let mut absorbed = 0;
    // The vector Poly1305 (always, past the short path); `None` once the
    // lanes were folded back.
    let mut ifma = None;
    if !SEAL {
        poly.blocks(mac(0, LEAD));
        let mut v = Ifma::new(&poly);
        let groups = (first - LEAD) / GROUP;
        for g in 0..groups {
            // SAFETY: bytes LEAD + 128g.. + 128 <= first <= len of the
            // input, not yet overwritten.
            unsafe { v.absorb(mac_base.add(LEAD + GROUP * g)) };
        }
        absorbed = LEAD + groups * GROUP;
        if first == len {
            // All of the message: the rest before it is overwritten.
            v.finish(&mut poly);
            poly.update_padded(mac(absorbed, len - absorbed));
            absorbed = len;
        } else {
            // A whole first batch: ends on a group boundary.
            debug_assert_eq!(absorbed, FIRST);
            ifma = Some(v);
        }
    }
    // SAFETY: `first <= len` bytes from the start of both ranges.
    unsafe { xor_partial(src, dst, &ks, 1, first) };
    // Block 0 held the Poly1305 key.
    wipe(&mut ks);
    if SEAL {
        poly.blocks(mac(0, LEAD));
        ifma = Some(Ifma::new(&poly));
        absorbed = LEAD;
    }
    let mut off = first;
    next_batch(&mut x);
    // The block counter of `x`'s first lane.
    let mut ctr = (BATCH / 64) as u32;

    while off < len {
        let n = (len - off).min(BATCH);
        // The ciphertext that can be absorbed during this batch: sealing,
        // what was written before it; opening, this chunk (read before it
        // is overwritten).
        let ready = if SEAL { off } else { off + n };
        state[12] = ctr;
        let mut ks = match ifma.as_mut() {
            Some(v) => {
                let groups = (ready - absorbed) / GROUP;
                debug_assert!(groups <= 10);
                let base = mac(absorbed, groups * GROUP).as_ptr();
                absorbed += groups * GROUP;
                let mut between = IfmaSteps {
                    v,
                    base,
                    groups,
                    _detected: Avx512 { _detected: () },
                };
                keystream(&x, &state, n, &mut between)
            }
            // Not reached: a message past its first batch has vector state
            // until its last chunk.
            None => {
                debug_assert!(false, "no Poly1305 lanes before the last chunk");
                keystream(&x, &state, n, &mut ())
            }
        };
        if !SEAL && n < BATCH {
            // The last chunk: absorb its rest before it is overwritten.
            if let Some(v) = ifma.take() {
                v.finish(&mut poly);
            }
            poly.update_padded(mac(absorbed, len - absorbed));
            absorbed = len;
        }
        // SAFETY: the `n` bytes from `off` are inside both ranges.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
        next_batch(&mut x);
        ctr = ctr.wrapping_add((BATCH / 64) as u32);
        off += n;
    }
    state.zeroize();
    wipe(&mut x);
    if let Some(mut v) = ifma.take() {
        // Sealing: whole groups of the last chunk, then the lanes fold back.
        while len - absorbed >= GROUP {
            // SAFETY: 128 bytes of written ciphertext from `absorbed`.
            unsafe { v.absorb(mac_base.add(absorbed)) };
            absorbed += GROUP;
        }
        v.finish(&mut poly);
    }
    poly.update_padded(mac(absorbed, len - absorbed));
    poly.finish_aead(aad.len() as u64, len as u64)
}

/// The middle of a streamed message (see [`Avx512::aead_blocks`]): the
/// loop of [`aead`] without its first batch (block 0, the associated data)
/// and its end (the length block): `output.len()` is a multiple of 64, so
/// every chunk but the last is a whole batch and the rest after the vector
/// Poly1305's groups is whole 16-byte blocks.
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn aead_blocks<const SEAL: bool>(
    state: &[u32; 16],
    poly: &mut Poly1305,
    input: Option<&[u8]>,
    output: &mut [u8],
) {
    let len = output.len();
    debug_assert!(len.is_multiple_of(64));
    if len < IFMA_MIN {
        // Too short to pay for the vector Poly1305's setup.
        if !SEAL {
            poly.blocks(input.unwrap_or(output));
        }
        let io = match input {
            Some(input) => InOut::Separate {
                input,
                output: &mut *output,
            },
            None => InOut::InPlace(&mut *output),
        };
        xor_keystream(state, io);
        if SEAL {
            poly.blocks(output);
        }
        return;
    }
    let dst = output.as_mut_ptr();
    // In place the input is the output; a separate input has the same
    // length and cannot overlap it (a shared borrow next to a mutable one).
    let src = input.map_or(dst.cast_const(), <[u8]>::as_ptr);
    // The ciphertext: the output when sealing, the input when opening.
    let mac_base = if SEAL { dst.cast_const() } else { src };
    let mac = |from: usize, n: usize| {
        debug_assert!(from + n <= len);
        // SAFETY: `mac_base` covers `len` bytes and every caller passes
        // `from + n <= len`; each slice covers bytes not written while it
        // lives (sealing: earlier chunks, already written; opening: the
        // current chunk, before its keystream is applied).
        unsafe { core::slice::from_raw_parts(mac_base.add(from), n) }
    };
    let mut x = init16(state);
    let mut st = *state;
    let mut ifma = Some(Ifma::new(poly));
    // Ciphertext bytes absorbed so far.
    let mut absorbed = 0;
    let mut off = 0;
    while off < len {
        let n = (len - off).min(BATCH);
        // Sealing: what was written before this chunk; opening: this chunk,
        // read before it is overwritten.
        let ready = if SEAL { off } else { off + n };
        let mut ks = match ifma.as_mut() {
            Some(v) => {
                let groups = (ready - absorbed) / GROUP;
                debug_assert!(groups <= 10);
                let base = mac(absorbed, groups * GROUP).as_ptr();
                absorbed += groups * GROUP;
                let mut between = IfmaSteps {
                    v,
                    base,
                    groups,
                    _detected: Avx512 { _detected: () },
                };
                keystream(&x, &st, n, &mut between)
            }
            None => {
                debug_assert!(false, "no Poly1305 lanes before the last chunk");
                keystream(&x, &st, n, &mut ())
            }
        };
        if !SEAL && off + n == len {
            // The last chunk: absorb its rest before it is overwritten.
            if let Some(v) = ifma.take() {
                v.finish(poly);
            }
            poly.blocks(mac(absorbed, len - absorbed));
            absorbed = len;
        }
        // SAFETY: the `n` bytes from `off` are inside both ranges; in place
        // src == dst, else disjoint.
        unsafe { xor_partial(src.add(off), dst.add(off), &ks, 0, n) };
        wipe(&mut ks);
        next_batch(&mut x);
        st[12] = st[12].wrapping_add((BATCH / 64) as u32);
        off += n;
    }
    st.zeroize();
    wipe(&mut x);
    if let Some(mut v) = ifma.take() {
        // Sealing: whole groups of the last chunk, then the lanes fold back.
        while len - absorbed >= GROUP {
            // SAFETY: 128 bytes of written ciphertext from `absorbed`.
            unsafe { v.absorb(mac_base.add(absorbed)) };
            absorbed += GROUP;
        }
        v.finish(poly);
    }
    poly.blocks(mac(absorbed, len - absorbed));
}

/// The vector Poly1305 of `groups` (at most 10) whole groups at `base`, one
/// per double round.
struct IfmaSteps<'a> {
    v: &'a mut Ifma,
    base: *const u8,
    groups: usize,
    /// The CPU runs the IFMA code.
    _detected: Avx512,
}

impl Between for IfmaSteps<'_> {
    #[inline(always)]
    fn step(&mut self, i: usize) {
        if i < self.groups {
            // SAFETY: the features were detected (`_detected`); group i of
            // the `groups` whole groups at `base`, which the maker of this
            // value keeps inside the ciphertext and unwritten during the
            // batch.
            unsafe { self.v.absorb(self.base.add(GROUP * i)) };
        }
    }
}

/// Absorbs `data` zero-padded to whole blocks into `poly` (as
/// [`Poly1305::update_padded`]): its whole 128-byte groups on the IFMA
/// lanes when `vector`, the rest with the scalar code.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn absorb_padded(poly: &mut Poly1305, data: &[u8], vector: bool) {
    let mut at = 0;
    if vector && data.len() >= GROUP {
        let mut v = Ifma::new(poly);
        while data.len() - at >= GROUP {
            // SAFETY: this function requires AVX-512F and IFMA; 128 bytes
            // of `data` from `at`.
            unsafe { v.absorb(data[at..].as_ptr()) };
            at += GROUP;
        }
        v.finish(poly);
    }
    poly.update_padded(&data[at..]);
}

/// The Poly1305 computation keyed by the first 32 bytes of block 0.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn poly_from_block0(block0: __m512i) -> Poly1305 {
    let mut poly_key = [0u8; 32];
    // SAFETY: `poly_key` is 32 writable bytes; unaligned stores are allowed.
    unsafe { _mm256_storeu_si256(poly_key.as_mut_ptr().cast(), _mm512_castsi512_si256(block0)) };
    let poly = Poly1305::new(&poly_key);
    poly_key.zeroize();
    poly
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poly1305 in the AEAD's shape (`update_padded` of `msg`, then the
    /// length block) with the scalar code for the first `lead` bytes, the
    /// IFMA lanes for as many whole groups as follow, and the scalar code
    /// for the rest; `None` if this CPU lacks the features.
    fn mixed(key: &[u8; 32], msg: &[u8], lead: usize) -> Option<[u8; 16]> {
        Avx512::new()?;
        let mut poly = Poly1305::new(key);
        poly.blocks(&msg[..lead]);
        // SAFETY: the features were detected (checked above).
        let mut v = unsafe { Ifma::new(&poly) };
        let mut at = lead;
        while msg.len() - at >= GROUP {
            // SAFETY: the features were detected; 128 bytes of `msg` from `at`.
            unsafe { v.absorb(msg[at..].as_ptr()) };
            at += GROUP;
        }
        // SAFETY: the features were detected.
        unsafe { v.finish(&mut poly) };
        poly.update_padded(&msg[at..]);
        Some(poly.finish_aead(3, msg.len() as u64))
    }

    fn reference(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
        let mut poly = Poly1305::new(key);
        poly.update_padded(msg);
        poly.finish_aead(3, msg.len() as u64)
    }

    /// A small deterministic generator (xorshift64*), enough for test data.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn fill(&mut self, buf: &mut [u8]) {
            for b in buf {
                *b = self.next() as u8;
            }
        }
    }

    #[test]
    fn ifma_poly1305_matches_scalar() {
        if Avx512::new().is_none() {
            eprintln!("skipped: this CPU lacks {CHACHA20_AVX512_FEATURES:?}");
            return;
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        // Keys: random, r all ones (the clamped maximum), r zero, s all
        // ones; messages: random, all 0xff, all zero.
        let mut keys = vec![[0xff; 32], [0; 32]];
        let mut k = [0u8; 32];
        k[..16].fill(0xff);
        keys.push(k);
        k = [0; 32];
        k[16..].fill(0xff);
        keys.push(k);
        for _ in 0..12 {
            rng.fill(&mut k);
            keys.push(k);
        }
        for (ki, key) in keys.iter().enumerate() {
            for pattern in 0..3 {
                for len in (0..2200).step_by(if ki < 4 { 1 } else { 37 }) {
                    let mut msg = vec![0u8; len];
                    match pattern {
                        0 => rng.fill(&mut msg),
                        1 => msg.fill(0xff),
                        _ => {}
                    }
                    let want = reference(key, &msg);
                    let whole = len / 16;
                    for lead in [0, 1, 4, whole / 2, whole] {
                        let lead = 16 * lead.min(whole);
                        assert_eq!(
                            mixed(key, &msg, lead),
                            Some(want),
                            "key {ki} pattern {pattern} len {len} lead {lead}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn radix44_round_trip() {
        for h in [
            [0, 0, 0],
            [u64::MAX, u64::MAX, 3],
            [u64::MAX - 4, u64::MAX, 3],
            [0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321, 2],
        ] {
            assert_eq!(from_radix44(to_radix44(h)), h);
        }
        // 2^130 folds to 5.
        assert_eq!(from_radix44([0, 0, 1 << 42]), [5, 0, 0]);
    }
}
