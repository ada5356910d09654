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
//! blocks, no transposition). (The dispatcher in `super` sends one-shot
//! messages of up to 320 bytes to the `avx2` short path instead, where the
//! CPU has BMI2: faster there on Zen 4; this path serves them otherwise.)
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
//! Whole batches after the first are XORed into the data from the registers
//! the keystream is made in ([`chacha20::xor_batch`]); the first batch
//! (block 0 is the Poly1305 key) and a partial last one go through a
//! keystream buffer. Storing, reloading and wiping 1,280 bytes of keystream
//! a batch cost 14% of the bare ChaCha20 time on a Zen 4 (one 256-bit
//! store a cycle): 4.65 -> 5.4 GB/s, ChaCha20-Poly1305 at 64 KiB +10%.
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

use super::chacha20_avx2;
use super::chacha20_soft;
use super::poly1305_soft::Poly1305;
use crate::aead::Tag;
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::CHACHA20_AVX512_FEATURES;
use core::arch::x86_64::*;
use zeroize::Zeroize;

mod poly1305_ifma;
use poly1305_ifma::Ifma;
pub(crate) use poly1305_ifma::PowersCache;

#[macro_use]
mod chacha20;
use chacha20::{Between, keystream, message_rows, rows, wipe, xor_batch, xor_partial};

/// Bytes per batch: 20 blocks, 16 in the word-per-register layout and 4 in
/// the row layout beside them (see [`chacha20::blocks20`]).
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
/// The same threshold for a streamed message's pieces, whose key powers
/// are made once per message ([`PowersCache`]): only the fold of the lanes
/// is left to amortise.
const STREAM_IFMA_MIN: usize = 128;
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

    /// A one-shot seal (`SEAL`) or open of up to
    /// [`chacha20_avx2::SHORT_MAX`] bytes on the `avx2` backend's short path
    /// with AVX-512VL rotations (faster there than this backend's row
    /// layout; see the dispatcher in `super`). `avx2` proves BMI2.
    pub(crate) fn short<const SEAL: bool>(
        self,
        _avx2: chacha20_avx2::Avx2,
        key: &[u32; 8],
        nonce: &[u32; 3],
        aad: &[u8],
        input: Option<&[u8]>,
        output: &mut [u8],
    ) -> Tag {
        assert!(output.len() <= chacha20_avx2::SHORT_MAX);
        assert!(input.is_none_or(|i| i.len() == output.len()));
        // SAFETY: this token proves AVX2, AVX-512F and AVX-512VL, the `Avx2`
        // one BMI2; the lengths are checked above.
        unsafe { chacha20_avx2::aead_short_vl::<SEAL>(key, nonce, aad, input, output) }
    }

    /// The middle of a streamed message: encrypts (`seal`) or decrypts
    /// `input` (or `output` in place, when `input` is `None`) into `output`
    /// from block `state[12]` and absorbs the ciphertext into `poly`,
    /// stitched as in a one-shot message. `output` is whole 64-byte blocks,
    /// a separate `input` as long, and `poly` is at a block boundary.
    /// `powers` holds the vector Poly1305's key powers of this message (made
    /// by the first piece that needs them).
    pub(crate) fn aead_blocks(
        self,
        seal: bool,
        state: &[u32; 16],
        poly: &mut Poly1305,
        powers: &mut PowersCache,
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
                aead_blocks::<true>(state, poly, powers, input, output);
            } else {
                aead_blocks::<false>(state, poly, powers, input, output);
            }
        }
    }

    /// Absorbs `data` (whole 16-byte blocks) into a streamed message's
    /// `poly` outside the stitched kernel (pieces served from buffered
    /// keystream): on the IFMA lanes with the message's cached key powers
    /// from [`STREAM_IFMA_MIN`] bytes on, else with the scalar code.
    pub(crate) fn absorb(self, poly: &mut Poly1305, powers: &mut PowersCache, data: &[u8]) {
        debug_assert!(data.len().is_multiple_of(16));
        let vector = data.len() >= STREAM_IFMA_MIN;
        // SAFETY: an `Avx512` exists only if the features were detected.
        unsafe { absorb_padded(poly, data, vector, Some(powers)) }
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
    let mut off = 0;
    while off < len {
        let n = (len - off).min(BATCH);
        let skip = (off / 64) as u32;
        if n == BATCH {
            // SAFETY: the 1280 bytes from `off` are inside both ranges; in
            // place src == dst, else disjoint.
            unsafe { xor_batch(state, skip, &mut (), |_| {}, src.add(off), dst.add(off)) };
        } else {
            // A short message (up to 8 blocks on the row layout alone) or
            // the last partial batch.
            keystream(state, skip, n, &mut (), |ks, _| {
                // SAFETY: the `n` bytes from `off` are inside both ranges;
                // in place src == dst, else disjoint.
                unsafe { xor_partial(src.add(off), dst.add(off), ks, 0, n) };
            });
        }
        off += n;
    }
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
    if len <= SHORT_MAX {
        let short = |ks: &mut [__m512i]| {
            let mut poly = poly_from_block0(ks[0]);
            poly.update_padded(aad);
            let vector = len >= IFMA_MIN;
            if !SEAL {
                absorb_padded(&mut poly, mac(0, len), vector, None);
            }
            // SAFETY: `len <= 448` bytes from the start of both ranges; the
            // keystream from register 1 (block 1) on covers them.
            unsafe { xor_partial(src, dst, ks, 1, len) };
            wipe(ks);
            if SEAL {
                absorb_padded(&mut poly, mac(0, len), vector, None);
            }
            poly.finish_aead(aad.len() as u64, len as u64)
        };
        let mut init = [_mm_setzero_si128(); 4];
        message_rows(key, nonce, &mut init);
        // The key rows are wiped as soon as the keystream is made.
        return if len <= 3 * 64 {
            let mut ks = rows::<1, 4, _>(&init, &mut ());
            init.zeroize();
            short(&mut ks)
        } else {
            let mut ks = rows::<2, 8, _>(&init, &mut ());
            init.zeroize();
            short(&mut ks)
        };
    }

    let mut state = chacha20_soft::state(key, 0, nonce);
    let first = len.min(FIRST);
    // The first batch: block 0 is the Poly1305 key, the text's keystream
    // starts at block 1. The Poly1305 state is set in place (moved out of
    // the closure, copies of its key were left on the stack).
    let mut poly = Poly1305::new(&[0; 32]);
    // Ciphertext bytes absorbed so far.
    let mut absorbed = 0;
    // The key powers of the vector Poly1305 (wiped on drop) and its lanes
    // (always, past the short path; `None` once they were folded back).
    let mut powers = PowersCache::default();
    let mut ifma = None;
    keystream(&state, 0, first + 64, &mut (), |ks, _| {
        set_poly_key(&mut poly, ks[0]);
        poly.update_padded(aad);
        if !SEAL {
            poly.blocks(mac(0, LEAD));
            let v = ifma.insert(Ifma::new(&poly, powers.get(&poly)));
            let groups = (first - LEAD) / GROUP;
            for g in 0..groups {
                // SAFETY: bytes LEAD + 128g.. + 128 <= first <= len of the
                // input, not yet overwritten.
                unsafe { v.absorb(mac_base.add(LEAD + GROUP * g)) };
            }
            absorbed = LEAD + groups * GROUP;
            if first == len {
                // All of the message: the rest before it is overwritten.
                v.finish_in_place(&mut poly);
                ifma = None;
                poly.update_padded(mac(absorbed, len - absorbed));
                absorbed = len;
            } else {
                // A whole first batch: ends on a group boundary.
                debug_assert_eq!(absorbed, FIRST);
            }
        }
        // SAFETY: `first <= len` bytes from the start of both ranges.
        unsafe { xor_partial(src, dst, ks, 1, first) };
    });
    if SEAL {
        poly.blocks(mac(0, LEAD));
        ifma = Some(Ifma::new(&poly, powers.get(&poly)));
        absorbed = LEAD;
    }
    let mut off = first;
    // The block of `state` the next batch starts at.
    let mut skip = (BATCH / 64) as u32;

    while off < len {
        let n = (len - off).min(BATCH);
        // The ciphertext that can be absorbed during this batch: sealing,
        // what was written before it; opening, this chunk (read before it
        // is overwritten).
        let ready = if SEAL { off } else { off + n };
        // Opening, the last (partial) chunk absorbs its rest between the
        // keystream and the XOR.
        let last_open = !SEAL && n < BATCH;
        // A whole batch is XORed from the registers it is made in; a last
        // partial one goes through a keystream buffer.
        match ifma.as_mut() {
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
                if n == BATCH {
                    // SAFETY: the 1280 bytes from `off` are inside both
                    // ranges; the groups `between` reads (earlier chunks
                    // when sealing, this one when opening) are read during
                    // the rounds, before this batch's stores.
                    unsafe {
                        xor_batch(
                            &state,
                            skip,
                            &mut between,
                            |_| {},
                            src.add(off),
                            dst.add(off),
                        )
                    };
                } else {
                    keystream(&state, skip, n, &mut between, |ks, between| {
                        if last_open {
                            // The rest, before it is overwritten.
                            between.v.finish_in_place(&mut poly);
                            poly.update_padded(mac(absorbed, len - absorbed));
                        }
                        // SAFETY: the `n` bytes from `off` are inside both ranges.
                        unsafe { xor_partial(src.add(off), dst.add(off), ks, 0, n) };
                    });
                }
            }
            // Not reached: a message past its first batch has vector state
            // until its last chunk.
            None => {
                debug_assert!(false, "no Poly1305 lanes before the last chunk");
                keystream(&state, skip, n, &mut (), |ks, _| {
                    if last_open {
                        poly.update_padded(mac(absorbed, len - absorbed));
                    }
                    // SAFETY: the `n` bytes from `off` are inside both ranges.
                    unsafe { xor_partial(src.add(off), dst.add(off), ks, 0, n) };
                });
            }
        }
        if last_open {
            ifma = None;
            absorbed = len;
        }
        skip = skip.wrapping_add((BATCH / 64) as u32);
        off += n;
    }
    state.zeroize();
    if let Some(mut v) = ifma.take() {
        // Sealing: whole groups of the last chunk, then the lanes fold back.
        let groups = (len - absorbed) / GROUP;
        // SAFETY: `groups` whole groups of written ciphertext from `absorbed`.
        unsafe { v.absorb_groups(mac_base.add(absorbed), groups) };
        absorbed += groups * GROUP;
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
    powers: &mut PowersCache,
    input: Option<&[u8]>,
    output: &mut [u8],
) {
    let len = output.len();
    debug_assert!(len.is_multiple_of(64));
    if len <= 8 * 64 {
        // Up to 8 blocks: ChaCha20 on the row layout alone, Poly1305 before
        // (opening) or after (sealing) it, on the IFMA lanes from
        // `STREAM_IFMA_MIN` bytes on (the key powers are cached).
        let vector = len >= STREAM_IFMA_MIN;
        if !SEAL {
            absorb_padded(poly, input.unwrap_or(output), vector, Some(powers));
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
            absorb_padded(poly, output, vector, Some(powers));
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
    let mut ifma = Some(Ifma::new(poly, powers.get(poly)));
    // Ciphertext bytes absorbed so far.
    let mut absorbed = 0;
    let mut off = 0;
    while off < len {
        let n = (len - off).min(BATCH);
        let skip = (off / 64) as u32;
        // Sealing: what was written before this chunk; opening: this chunk,
        // read before it is overwritten.
        let ready = if SEAL { off } else { off + n };
        // Opening, the last chunk absorbs its rest between the keystream
        // and the XOR.
        let last_open = !SEAL && off + n == len;
        match ifma.as_mut() {
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
                let mut rest = |between: &mut IfmaSteps<'_, '_>| {
                    if last_open {
                        // The rest, before it is overwritten.
                        between.v.finish_in_place(poly);
                        poly.blocks(mac(absorbed, len - absorbed));
                    }
                };
                if n == BATCH {
                    // SAFETY: the 1280 bytes from `off` are inside both
                    // ranges (in place src == dst, else disjoint); the
                    // groups `between` reads, and the rest, are read before
                    // this batch's stores.
                    unsafe {
                        xor_batch(state, skip, &mut between, rest, src.add(off), dst.add(off))
                    };
                } else {
                    keystream(state, skip, n, &mut between, |ks, between| {
                        rest(between);
                        // SAFETY: the `n` bytes from `off` are inside both
                        // ranges; in place src == dst, else disjoint.
                        unsafe { xor_partial(src.add(off), dst.add(off), ks, 0, n) };
                    });
                }
            }
            None => {
                debug_assert!(false, "no Poly1305 lanes before the last chunk");
                keystream(state, skip, n, &mut (), |ks, _| {
                    if last_open {
                        poly.blocks(mac(absorbed, len - absorbed));
                    }
                    // SAFETY: the `n` bytes from `off` are inside both
                    // ranges; in place src == dst, else disjoint.
                    unsafe { xor_partial(src.add(off), dst.add(off), ks, 0, n) };
                });
            }
        }
        if last_open {
            ifma = None;
            absorbed = len;
        }
        off += n;
    }
    if let Some(mut v) = ifma.take() {
        // Sealing: whole groups of the last chunk, then the lanes fold back.
        let groups = (len - absorbed) / GROUP;
        // SAFETY: `groups` whole groups of written ciphertext from `absorbed`.
        unsafe { v.absorb_groups(mac_base.add(absorbed), groups) };
        absorbed += groups * GROUP;
        v.finish(poly);
    }
    poly.blocks(mac(absorbed, len - absorbed));
}

/// The vector Poly1305 of `groups` (at most 10) whole groups at `base`, one
/// per double round.
struct IfmaSteps<'a, 'p> {
    v: &'a mut Ifma<'p>,
    base: *const u8,
    groups: usize,
    /// The CPU runs the IFMA code.
    _detected: Avx512,
}

impl Between for IfmaSteps<'_, '_> {
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
/// lanes when `vector` (with the key powers of a stream's `cache`, made
/// there if missing, or else made for this call), the rest with the scalar
/// code.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn absorb_padded(poly: &mut Poly1305, data: &[u8], vector: bool, cache: Option<&mut PowersCache>) {
    let mut at = 0;
    if vector && data.len() >= GROUP {
        let groups = data.len() / GROUP;
        let mut local = PowersCache::default();
        let powers = match cache {
            Some(cache) => cache.get(poly),
            None => local.get(poly),
        };
        let mut v = Ifma::new(poly, powers);
        // SAFETY: this function requires AVX-512F and IFMA; `groups` whole
        // groups of `data`.
        unsafe { v.absorb_groups(data.as_ptr(), groups) };
        v.finish(poly);
        at = groups * GROUP;
    }
    poly.update_padded(&data[at..]);
}

/// The Poly1305 computation keyed by the first 32 bytes of block 0.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn poly_from_block0(block0: __m512i) -> Poly1305 {
    let mut poly = Poly1305::new(&[0; 32]);
    set_poly_key(&mut poly, block0);
    poly
}

/// Keys `poly` (in place) with the first 32 bytes of block 0.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
fn set_poly_key(poly: &mut Poly1305, block0: __m512i) {
    let mut poly_key = [0u8; 32];
    // SAFETY: `poly_key` is 32 writable bytes; unaligned stores are allowed.
    unsafe { _mm256_storeu_si256(poly_key.as_mut_ptr().cast(), _mm512_castsi512_si256(block0)) };
    poly.set_key(&poly_key);
    crate::secret::wipe_bytes(&mut poly_key);
}

#[cfg(test)]
mod tests;
