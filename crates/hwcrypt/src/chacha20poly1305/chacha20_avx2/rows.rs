//! The row layout of the AVX2 backend: short messages (up to
//! [`SHORT_MAX`] bytes) and short keystream runs, two blocks per ymm
//! register, one row of four words per register half, so a set of two
//! blocks is four registers and needs no transposition. Also the short
//! path of the AEAD ([`short`], and [`aead_short_vl`] with AVX-512VL
//! rotations, which the `avx512` backend's short messages use).

use super::super::chacha20_soft;
use super::super::poly1305_soft::Poly1305;
use super::{PolyRegs, rot_masks, rotl, wipe, xor_partial};
use crate::aead::Tag;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Longest message the short path takes: 6 blocks, less block 0 (the
/// `avx512` backend sends one-shot messages up to this long here too).
pub(crate) const SHORT_MAX: usize = 5 * 64;

/// The four rows of a ChaCha20 state, one register each (the row-layout
/// short paths of this backend and of `avx512`).
pub(crate) type Rows = [__m128i; 4];

/// Writes the rows of `state` into `rows`. SSE2 only (part of x86_64), so
/// both vector backends use it.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn state_rows(state: &[u32; 16], rows: &mut Rows) {
    for (i, r) in rows.iter_mut().enumerate() {
        // SAFETY: 16 of the 64 bytes of `state`; `r` is valid for writes.
        unsafe { core::ptr::write_volatile(r, _mm_loadu_si128(state[4 * i..].as_ptr().cast())) };
    }
}

/// Writes the rows of the state at block 0 for `key` and `nonce` into
/// `rows` (the caller's memory, which it wipes), made in registers: the
/// caller wrote the nonce words just before, with narrower stores than a
/// row, and a 16-byte load of them would wait for those stores to reach the
/// cache (a failed store-to-load forward, ~10% of a 16-byte message). SSE2
/// only, for both vector backends.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn message_rows(key: &[u32; 8], nonce: &[u32; 3], rows: &mut Rows) {
    let s = chacha20_soft::SIGMA;
    let word = |w: u32| w as i32;
    // One 4-byte load per nonce word (volatile, so that LLVM does not merge
    // them into a wider load that spans two of the caller's stores).
    // SAFETY: each reads one word of `nonce`.
    let n = |i: usize| word(unsafe { core::ptr::read_volatile(&nonce[i]) });
    // SAFETY: 16 of the 32 bytes of `key` each.
    let (k0, k1) = unsafe {
        (
            _mm_loadu_si128(key.as_ptr().cast()),
            _mm_loadu_si128(key[4..].as_ptr().cast()),
        )
    };
    let values = [
        _mm_setr_epi32(word(s[0]), word(s[1]), word(s[2]), word(s[3])),
        k0,
        k1,
        _mm_setr_epi32(0, n(0), n(1), n(2)),
    ];
    // Volatile stores: the rows are written to the caller's memory, which it
    // wipes, not kept only in registers. (This backend's `rows` reads the key
    // rows back from it per set, with volatile loads, rather than hold them
    // and spill them; `avx512`'s, with 32 zmm registers, reads them once and
    // holds them without spilling. `tests/stack_residue.rs` checks both.)
    for (r, v) in rows.iter_mut().zip(values) {
        // SAFETY: `r` is valid for writes.
        unsafe { core::ptr::write_volatile(r, v) };
    }
}

/// The rotations of [`rows`], `(old ^ new) <<< n` (`new` is the value the
/// round just made, `old` the one it updates): by 16 and 8 with `vpshufb`
/// (masks `$m16`, `$m8`), by 12 and 7 with a shift pair (`$sets` unused).
macro_rules! rot_avx2 {
    ($old:expr, $new:expr, $m16:expr, $m8:expr, 16, $sets:expr) => {
        _mm256_shuffle_epi8(_mm256_xor_si256($old, $new), $m16)
    };
    ($old:expr, $new:expr, $m16:expr, $m8:expr, 8, $sets:expr) => {
        _mm256_shuffle_epi8(_mm256_xor_si256($old, $new), $m8)
    };
    ($old:expr, $new:expr, $m16:expr, $m8:expr, 12, $sets:expr) => {
        rotl::<12, 20>(_mm256_xor_si256($old, $new))
    };
    ($old:expr, $new:expr, $m16:expr, $m8:expr, 7, $sets:expr) => {
        rotl::<7, 25>(_mm256_xor_si256($old, $new))
    };
}

/// The rotations of [`rows_vl`], `(old ^ new) <<< n`, with AVX-512VL.
/// `vprold` is one instruction, but on Zen 4 it (like `vpshufb`) takes two
/// cycles, so XOR-then-rotate puts three on the quarter round's dependency
/// chain. A rotation distributes over XOR: `(old <<< n) ^ (new << n) ^
/// (new >> (32 - n))`, where `old <<< n` is made off the chain (`old` is
/// older than `new`), the shifts take one cycle and the three-way XOR
/// (`vpternlogd`) one: two cycles on the chain, for four instructions
/// instead of two. A single set (messages of up to 64 bytes) is bound by
/// the chain and takes that form (Zen 4: 16 and 64 B +8-10%); two and
/// three sets are not, and measured the same or up to 10% slower with it
/// (for every rotation, for 16 and 8 only, for 12 and 7 only), so they
/// keep `vprold`.
macro_rules! rot_vl {
    ($old:expr, $new:expr, $m16:expr, $m8:expr, $n:literal, $sets:expr) => {{
        let (old, new) = ($old, $new);
        if $sets == 1 {
            _mm256_ternarylogic_epi32::<0x96>(
                _mm256_rol_epi32::<$n>(old),
                _mm256_slli_epi32::<$n>(new),
                _mm256_srli_epi32::<{ 32 - $n }>(new),
            )
        } else {
            _mm256_rol_epi32::<$n>(_mm256_xor_si256(old, new))
        }
    }};
}

/// Defines `$name`, the row-layout keystream below, with the rotations of
/// `$rot` under the target features `$features`.
macro_rules! rows_fn {
    ($name:ident, $features:literal, $masks:expr, $rot:ident) => {
        /// `2 * SETS` ChaCha20 blocks (counters `init[3]`'s first word + `0..2 *
        /// SETS`) in row layout, for short messages: each ymm register holds one
        /// row (4 words) of two blocks, so a set of two blocks is 4 registers, the
        /// diagonal rounds rotate rows with `vpshufd`, and no transposition is
        /// needed. Half the vector work of [`blocks8`](super::blocks8) for up to 6 blocks. Returns
        /// keystream registers in byte order (register `j` is bytes `32j..32j +
        /// 32`); those past `4 * SETS` are zero. `between(i)` runs after double
        /// round `i`, as in [`blocks8`](super::blocks8). `init` lives in the caller's memory, which
        /// the caller wipes.
        #[inline]
        #[target_feature(enable = $features)]
        fn $name<const SETS: usize, F: FnMut(usize)>(init: &Rows, mut between: F) -> [__m256i; 12] {
            // (Unused by `rot_vl`.)
            #[allow(unused_variables)]
            let (m16, m8) = $masks;
            // Volatile loads, one per set for the key rows (`b`, `c`): LLVM can
            // neither keep the key rows in registers across the first sets' work
            // (and spill them, with three sets) nor forward the caller's stores.
            let row = |i: usize| {
                // SAFETY: `init[i / 4]` is a valid `__m128i` (`i <= 12`).
                let r = unsafe { core::ptr::read_volatile(&init[i / 4]) };
                _mm256_broadcastsi128_si256(r)
            };
            let a0 = row(0);
            let d0: [__m256i; SETS] = core::array::from_fn(|s| {
                _mm256_add_epi32(
                    row(12),
                    _mm256_setr_epi32(2 * s as i32, 0, 0, 0, 2 * s as i32 + 1, 0, 0, 0),
                )
            });
            let mut a = [a0; SETS];
            let mut b: [__m256i; SETS] = core::array::from_fn(|_| row(4));
            let mut c: [__m256i; SETS] = core::array::from_fn(|_| row(8));
            let mut d = d0;
            macro_rules! qr {
                () => {
                    for s in 0..SETS {
                        a[s] = _mm256_add_epi32(a[s], b[s]);
                        d[s] = $rot!(d[s], a[s], m16, m8, 16, SETS);
                        c[s] = _mm256_add_epi32(c[s], d[s]);
                        b[s] = $rot!(b[s], c[s], m16, m8, 12, SETS);
                        a[s] = _mm256_add_epi32(a[s], b[s]);
                        d[s] = $rot!(d[s], a[s], m16, m8, 8, SETS);
                        c[s] = _mm256_add_epi32(c[s], d[s]);
                        b[s] = $rot!(b[s], c[s], m16, m8, 7, SETS);
                    }
                };
            }
            for i in 0..10 {
                qr!();
                // One set is bound by the rounds' dependency chain: diagonals (a[i-1],
                // b[i], c[i+1], d[i+2]) in column i leave `b`, the last row a quarter
                // round writes and the first it reads, in place, so no shuffle lies
                // on the chain (+3% at 16 B on Zen 4). Two and three sets are bound
                // by throughput, where shuffling `b` measured 4-5% faster.
                if SETS == 1 {
                    for s in 0..SETS {
                        a[s] = _mm256_shuffle_epi32::<0x93>(a[s]);
                        c[s] = _mm256_shuffle_epi32::<0x39>(c[s]);
                        d[s] = _mm256_shuffle_epi32::<0x4e>(d[s]);
                    }
                    qr!();
                    for s in 0..SETS {
                        a[s] = _mm256_shuffle_epi32::<0x39>(a[s]);
                        c[s] = _mm256_shuffle_epi32::<0x93>(c[s]);
                        d[s] = _mm256_shuffle_epi32::<0x4e>(d[s]);
                    }
                } else {
                    for s in 0..SETS {
                        b[s] = _mm256_shuffle_epi32::<0x39>(b[s]);
                        c[s] = _mm256_shuffle_epi32::<0x4e>(c[s]);
                        d[s] = _mm256_shuffle_epi32::<0x93>(d[s]);
                    }
                    qr!();
                    for s in 0..SETS {
                        b[s] = _mm256_shuffle_epi32::<0x93>(b[s]);
                        c[s] = _mm256_shuffle_epi32::<0x4e>(c[s]);
                        d[s] = _mm256_shuffle_epi32::<0x39>(d[s]);
                    }
                }
                between(i);
            }
            // The key rows again, from memory (`row` reads volatile), once per set:
            // held across the rounds, or for all sets, they were spilled to unwiped
            // stack slots.
            let mut out = [_mm256_setzero_si256(); 12];
            for s in 0..SETS {
                let (b0, c0) = (row(4), row(8));
                let (a, b) = (_mm256_add_epi32(a[s], a0), _mm256_add_epi32(b[s], b0));
                let (c, d) = (_mm256_add_epi32(c[s], c0), _mm256_add_epi32(d[s], d0[s]));
                // Low halves: block 2s; high halves: block 2s + 1.
                out[4 * s] = _mm256_permute2x128_si256::<0x20>(a, b);
                out[4 * s + 1] = _mm256_permute2x128_si256::<0x20>(c, d);
                out[4 * s + 2] = _mm256_permute2x128_si256::<0x31>(a, b);
                out[4 * s + 3] = _mm256_permute2x128_si256::<0x31>(c, d);
            }
            out
        }
    };
}

rows_fn!(rows, "avx2", rot_masks(), rot_avx2);
// Where AVX-512VL is there (the `avx512` backend's short messages, which run
// on this backend's short path): one `vprold` per rotation. Zen 4, 13 bytes
// of AAD: 256-byte seals +6%, opens +5%, 128 B +3%, 16-64 B +0-1%.
rows_fn!(
    rows_vl,
    "avx2,avx512f,avx512vl",
    (_mm256_setzero_si256(), _mm256_setzero_si256()),
    rot_vl
);

/// Keystream for `n` (<= 384) bytes from block `state[12]` on the row
/// layout (1 to 3 sets of two blocks). Registers in byte order.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn rows_keystream<F: FnMut(usize)>(
    state: &[u32; 16],
    n: usize,
    between: F,
) -> [__m256i; 16] {
    debug_assert!(n <= 384);
    let mut out = [_mm256_setzero_si256(); 16];
    let mut init = [_mm_setzero_si128(); 4];
    state_rows(state, &mut init);
    match n {
        0..=128 => out[..12].copy_from_slice(&rows::<1, F>(&init, between)),
        129..=256 => out[..12].copy_from_slice(&rows::<2, F>(&init, between)),
        _ => out[..12].copy_from_slice(&rows::<3, F>(&init, between)),
    }
    init.zeroize();
    out
}

/// Defines `$name`, the short path of [`aead`](super::aead) (messages of up to
/// [`SHORT_MAX`] bytes: the row layout with the keystream made by `$rows`,
/// Poly1305 in registers) under the target features `$features`.
macro_rules! short_fn {
    ($name:ident, $features:literal, $rows:ident) => {
        /// Seals (`SEAL`) or opens the `len` (<= [`SHORT_MAX`]) bytes at
        /// `src` into `dst`; returns the tag over `aad` and the ciphertext.
        ///
        /// # Safety
        /// The CPU has `$features` and BMI2. `src` is valid for reading and
        /// `dst` for writing `len` bytes; they are equal or do not overlap.
        #[inline]
        #[target_feature(enable = $features)]
        pub(super) unsafe fn $name<const SEAL: bool>(
            key: &[u32; 8],
            nonce: &[u32; 3],
            aad: &[u8],
            src: *const u8,
            dst: *mut u8,
            len: usize,
        ) -> Tag {
            // The bytes Poly1305 reads: the ciphertext, i.e. the output when
            // sealing and the input when opening.
            let mac_base = if SEAL { dst.cast_const() } else { src };
            let mac = |from: usize, n: usize| {
                debug_assert!(from + n <= len);
                // SAFETY: `mac_base` covers `len` bytes (the caller) and
                // `from + n <= len`; each slice covers bytes not written
                // while it lives (sealing: taken after the XOR; opening:
                // dropped before it).
                unsafe { core::slice::from_raw_parts(mac_base.add(from), n) }
            };
            let mut init = [_mm_setzero_si128(); 4];
            message_rows(key, nonce, &mut init);
            // The registers a set fills (the rest stay zero: nothing to wipe).
            let (mut ks, used) = match len {
                0..=64 => ($rows::<1, _>(&init, |_| {}), 4),
                65..=192 => ($rows::<2, _>(&init, |_| {}), 8),
                _ => ($rows::<3, _>(&init, |_| {}), 12),
            };
            init.zeroize();
            let mut poly_key = [0u8; 32];
            // SAFETY: `poly_key` is 32 writable bytes; unaligned stores are allowed.
            unsafe { _mm256_storeu_si256(poly_key.as_mut_ptr().cast(), ks[0]) };
            let mut poly = Poly1305::new(&poly_key);
            crate::secret::wipe_bytes(&mut poly_key);
            let mut regs = PolyRegs::new(&mut poly);
            regs.update_padded(aad);
            if !SEAL {
                regs.update_padded(mac(0, len));
            }
            // SAFETY: `len <= 320` bytes from the start of both ranges; the
            // keystream from register 2 (block 1) on covers them.
            unsafe { xor_partial(src, dst, &ks, 2, len) };
            wipe(&mut ks[..used]);
            if SEAL {
                regs.update_padded(mac(0, len));
            }
            regs.done();
            poly.finish_aead(aad.len() as u64, len as u64)
        }
    };
}

short_fn!(short, "avx2,bmi2", rows);
short_fn!(short_vl, "avx2,bmi2,avx512f,avx512vl", rows_vl);

/// [`aead`](super::aead)'s short path with AVX-512VL rotations (see `rows_vl`), for the
/// `avx512` backend's short messages: seals (`SEAL`) or opens `input` (or
/// `output` in place) of up to [`SHORT_MAX`] bytes.
///
/// # Safety
/// The CPU has AVX2, BMI2, AVX-512F and AVX-512VL; a separate `input` has
/// the length of `output`.
#[target_feature(enable = "avx2,bmi2,avx512f,avx512vl")]
pub(crate) unsafe fn aead_short_vl<const SEAL: bool>(
    key: &[u32; 8],
    nonce: &[u32; 3],
    aad: &[u8],
    input: Option<&[u8]>,
    output: &mut [u8],
) -> Tag {
    let len = output.len();
    debug_assert!(len <= SHORT_MAX);
    let dst = output.as_mut_ptr();
    let src = input.map_or(dst.cast_const(), <[u8]>::as_ptr);
    // SAFETY: the features (the caller); `len` bytes at `src` and `dst`
    // (one slice, or two of the same length that cannot overlap).
    unsafe { short_vl::<SEAL>(key, nonce, aad, src, dst, len) }
}
