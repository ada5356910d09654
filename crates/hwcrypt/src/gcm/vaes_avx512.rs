//! The `vaes-avx512` AES-GCM backend: VAES and VPCLMULQDQ on zmm registers,
//! four blocks per register, CTR and GHASH in one stitched pass.
//!
//! The bulk of a message runs in chunks of 32 blocks (8 zmm registers: eight
//! independent AES chains cover the `vaesenc` latency). Per chunk, the 8
//! registers of counter blocks go through AES while the GHASH of 32
//! ciphertext blocks runs between the rounds, one register per round (on
//! encryption those of the previous chunk, on decryption those of the chunk
//! itself): each register of four blocks is multiplied by four key powers at
//! once (`H^32..H^1`, lane quadruples `[H^(32-4j), .., H^(29-4j)]`,
//! Karatsuba, no reduction), the products summed over the lanes and reduced
//! once per chunk (two folds by the `0xc2 << 56` constant). Round keys are
//! broadcast to the four lanes and key powers laid out per register in a
//! zmm table made by the first message that needs it. Associated data of a
//! chunk or more is hashed with the same wide multiply. The chunk kernels
//! are the width-generic ones of `wide.rs`, on [`Zmm`] registers; this file
//! has the table, the zmm operations and (in `last_chunk.rs`) the
//! last-chunk kernel.
//!
//! What is left after the last whole chunk (under 512 bytes): in the
//! one-shot API ([`super::one_pass`]) one pass of its own (`last`): masked zmm
//! loads and stores, `J0` through AES beside the counter blocks, and the
//! chunk, the lengths block and (when no whole chunk came before) up to 64
//! bytes of associated data multiplied in registers against an unaligned
//! window of the power table (`H^32..H^1` are 32 consecutive blocks, so the
//! window starting at `H^operands` gives every lane its power) and reduced
//! once. In the streaming kernels it runs on the
//! `vaes-avx2` key kept alongside (16-block ymm chunks, then `aesni`);
//! decryption first takes one stitched chunk of 4 zmm registers (16 blocks)
//! from a remainder of 256 bytes or more, which beats the ymm chunk there
//! (on encryption, where a lone chunk cannot be stitched, it does not).
//! 8 zmm registers beat 4 wherever there are two chunks or more. The representation
//! (byte-reversed blocks, key powers times `x^-1`) is the one of
//! `aesni_clmul.rs`.
//!
//! A [`Key`] can only be made after every feature in
//! [`VAES_AVX512_FEATURES`] was detected, so every method may call the
//! `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::one_pass::{LastChunk, LastOps};
use super::wide::{self, REGS, Reg, WideAcc};
use super::{inc32, vaes_avx2};
use crate::aes::Block;
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::VAES_AVX512_FEATURES;
use crate::secret::{LazyBox, Schedule, SecretBox};
use core::arch::x86_64::*;

/// Blocks per register.
const LANES: usize = 4;
/// Bytes per chunk (of `REGS` zmm registers): 32 blocks.
const CHUNK: usize = 64 * REGS;

/// One-shot messages (and streamed pieces) under this many bytes go to the
/// `vaes-avx2` kernels while the key has no table ([`Key::first_on_ymm`]).
const FIRST_ON_YMM: usize = 2048;

/// Round keys (broadcast to the four lanes) and key powers (per register),
/// 64-byte aligned for aligned loads.
#[derive(Clone)]
#[repr(C, align(64))]
struct Wide {
    rk: [[u8; 64]; 15],
    /// `h[j]`: `H^(32-4j-i)` in lane `i`.
    h: [[u8; 64]; REGS],
    /// The Karatsuba operands of `h[j]`: each lane's halves XORed, in its low half.
    hk: [[u8; 64]; REGS],
    /// Zeros: `mul_add_from` may read up to three blocks past `hk` (for lanes
    /// whose operands are zero).
    tail: [u8; 64],
}

impl Wide {
    /// Writes a whole table at `p` (uninitialised memory): the round keys
    /// broadcast to the four lanes (zeroes past the last round), the key
    /// powers (`powers[k - 1] = H^k`) laid out so that lane `i` of `h[j]`
    /// holds `H^(32-4j-i)` and `hk[j]` the Karatsuba operands (high halves
    /// zero), and the zero tail. Every byte is written once; nothing is read.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `p` is valid for writes of a `Wide`
    /// and aligned; `round_keys` has at most 15 entries.
    #[target_feature(enable = "avx512f")]
    unsafe fn write(p: *mut Wide, round_keys: &[Block], powers: &[Block; LANES * REGS]) {
        let load = |b: &Block| {
            // SAFETY: 16 readable bytes.
            unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
        };
        let row = |field: *mut [u8; 64], x: __m512i| {
            // SAFETY: a 64-byte row inside the `Wide` at `p` (the caller's
            // promise), 64-byte aligned (`Wide` is `align(64)`, rows are 64
            // bytes).
            unsafe { _mm512_store_si512(field.cast(), x) };
        };
        // SAFETY: these field addresses are inside the `Wide` at `p`.
        let (rk, h, hk, tail) = unsafe {
            (
                core::ptr::addr_of_mut!((*p).rk).cast::<[u8; 64]>(),
                core::ptr::addr_of_mut!((*p).h).cast::<[u8; 64]>(),
                core::ptr::addr_of_mut!((*p).hk).cast::<[u8; 64]>(),
                core::ptr::addr_of_mut!((*p).tail),
            )
        };
        for i in 0..15 {
            let k = round_keys
                .get(i)
                .map_or(_mm512_setzero_si512(), |k| _mm512_broadcast_i32x4(load(k)));
            // SAFETY: row `i < 15` of `rk`.
            row(unsafe { rk.add(i) }, k);
        }
        for j in 0..REGS {
            let top = LANES * REGS - LANES * j;
            let mut x = _mm512_castsi128_si512(load(&powers[top - 1]));
            x = _mm512_inserti32x4::<1>(x, load(&powers[top - 2]));
            x = _mm512_inserti32x4::<2>(x, load(&powers[top - 3]));
            x = _mm512_inserti32x4::<3>(x, load(&powers[top - 4]));
            let halves = _mm512_xor_si512(x, _mm512_shuffle_epi32::<0x4e>(x));
            let k = _mm512_unpacklo_epi64(halves, _mm512_setzero_si512());
            // SAFETY: row `j < REGS` of `h` and `hk`.
            unsafe {
                row(h.add(j), x);
                row(hk.add(j), k);
            }
        }
        row(tail, _mm512_setzero_si512());
    }
}

/// `H^1..H^32` (`p[k - 1] = H^k`, the representation of `aesni_clmul.rs`)
/// from `H^1..H^8` (the AES-NI key's, `first`), four powers per product in
/// two dependent steps: `P3, P4 = P1, P2` times `H^8` and `P5..P8 = P1..P4`
/// times `H^16`, with `P1 = [H^1..H^4]` and `P2 = [H^5..H^8]` (six lane-wise
/// products; starting from `H^1` alone took five dependent steps, ~52 ns
/// of an AES-128-GCM table on Zen 4). The caller wipes them.
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW and VPCLMULQDQ.
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
unsafe fn powers_32(first: &[Block; 8]) -> [Block; LANES * REGS] {
    /// Lane-wise `a * b`, each lane reduced (schoolbook: four products).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
    fn mul(a: __m512i, b: __m512i) -> __m512i {
        let lo = _mm512_clmulepi64_epi128::<0x00>(a, b);
        let hi = _mm512_clmulepi64_epi128::<0x11>(a, b);
        let mid = _mm512_xor_si512(
            _mm512_clmulepi64_epi128::<0x01>(a, b),
            _mm512_clmulepi64_epi128::<0x10>(a, b),
        );
        // The reduction of `Acc::reduce`, in every lane.
        let poly = _mm512_broadcast_i32x4(_mm_set_epi64x(0xc200_0000_0000_0000_u64 as i64, 1));
        let t = _mm512_clmulepi64_epi128::<0x10>(lo, poly);
        // (Plain XORs, not `vpternlogq`: Miri runs this code and has no
        // `vpternlogq`; it is key setup, not a hot loop.)
        let mid = _mm512_xor_si512(_mm512_xor_si512(mid, t), _mm512_shuffle_epi32::<0x4e>(lo));
        let t = _mm512_clmulepi64_epi128::<0x10>(mid, poly);
        _mm512_xor_si512(_mm512_xor_si512(hi, t), _mm512_shuffle_epi32::<0x4e>(mid))
    }
    // SAFETY: `first` is 128 readable bytes: blocks 0-3, then 4-7.
    let (p1, p2) = unsafe {
        (
            _mm512_loadu_si512(first.as_ptr().cast()),
            _mm512_loadu_si512(first.as_ptr().add(4).cast()),
        )
    };
    // Lane 3 of `x` in all four lanes.
    let top = |x: __m512i| _mm512_shuffle_i64x2::<0xff>(x, x);
    let h8 = top(p2);
    let (p3, p4) = (mul(p1, h8), mul(p2, h8));
    let h16 = top(p4);
    let p = [
        p1,
        p2,
        p3,
        p4,
        mul(p1, h16),
        mul(p2, h16),
        mul(p3, h16),
        mul(p4, h16),
    ];
    let mut out = [[0u8; 16]; LANES * REGS];
    for (dst, x) in out.chunks_exact_mut(LANES).zip(p) {
        // SAFETY: four blocks, 64 writable bytes.
        unsafe { _mm512_storeu_si512(dst.as_flattened_mut().as_mut_ptr().cast(), x) };
    }
    out
}

// SAFETY: byte arrays: all-zero is valid, no drop glue, no pointers. A
// table is only made by a `Key`, which exists only after detection.
unsafe impl Schedule for Wide {
    // Made only by a `Key`, after its features (AVX among them) were detected.
    const AVX: bool = true;
}

impl Wide {
    /// The table of `aesni`'s key in a heap home of its own: `H^9..H^32`
    /// computed four at a time from its `H^1..H^8` ([`powers_32`]), round
    /// keys from its schedule.
    fn boxed(aesni: &super::aesni_clmul::Key) -> SecretBox<Wide> {
        // SAFETY: a table is only made for a `Key` (this function's caller),
        // which exists only after every feature in `VAES_AVX512_FEATURES`
        // was detected; `Wide::write` below writes a whole table before the
        // box is used.
        let mut w = unsafe { SecretBox::<Wide>::uninit() };
        let mut first = aesni.powers_n::<8>();
        // SAFETY: the features were detected (above).
        let mut powers = unsafe { powers_32(&first) };
        crate::secret::wipe_bytes(first.as_flattened_mut());
        // SAFETY: the box's `Wide`, valid for writes and aligned; AVX-512F
        // was detected; at most 15 round keys.
        unsafe { Wide::write(w.as_mut_ptr(), aesni.round_keys(), &powers) };
        crate::secret::wipe_bytes(powers.as_flattened_mut());
        w
    }
}

/// The `vaes-avx512` AES-GCM key: the `vaes-avx2` key (whose AES-NI key is
/// all that key setup makes) and the zmm table, made in a heap home of its
/// own by the first message that reaches the zmm kernels (as the
/// `vaes-avx2` key's ymm table is: see [`vaes_avx2::Key`]); a key's first
/// message under 2 KiB runs on the ymm kernels instead
/// ([`Key::first_on_ymm`]). Wiped on drop.
#[derive(Clone)]
pub(crate) struct Key {
    /// The `vaes-avx2` key: tails, short associated data, IVs and single blocks.
    narrow: vaes_avx2::Key,
    w: LazyBox<Wide>,
}

impl Key {
    /// The heap homes of this key's secrets (test hook, feature
    /// `residue-test`): the `vaes-avx2` key's and the zmm table once made.
    #[cfg(feature = "residue-test")]
    pub(crate) fn secret_regions(&self) -> Vec<(usize, usize)> {
        let mut r = self.narrow.secret_regions();
        r.extend(self.w.get().map(crate::secret::region_of));
        r
    }

    /// Expands `key`; `None` unless the CPU has every feature in
    /// [`VAES_AVX512_FEATURES`], or for a key length other than 16, 24 or
    /// 32. The zmm table is made on first use ([`Key::wide`]).
    #[inline]
    pub(crate) fn new(key: &[u8]) -> Option<Key> {
        if !cpu::detected().contains(Features::of(VAES_AVX512_FEATURES)) {
            return None;
        }
        Some(Key {
            narrow: vaes_avx2::Key::new(key)?,
            w: LazyBox::empty(),
        })
    }

    /// The zmm table, made now if no message needed it before.
    fn wide(&self) -> &Wide {
        self.w.get_or_make(|| Wide::boxed(self.aesni()))
    }

    /// The `vaes-avx2` key, for a one-shot message (or a streamed piece)
    /// of under [`FIRST_ON_YMM`] bytes when no message has made a table
    /// yet: a key used once (a TLS handshake key, a QUIC connection's first
    /// packet) makes the 1 KiB ymm table instead of the 2 KiB zmm one; the
    /// next such message makes the zmm table.
    #[inline]
    pub(super) fn first_on_ymm(&self, len: usize) -> Option<&vaes_avx2::Key> {
        (len < FIRST_ON_YMM && self.w.get().is_none() && !self.narrow.has_wide())
            .then_some(&self.narrow)
    }

    fn rounds(&self) -> usize {
        self.narrow.narrow().rounds()
    }

    /// The AES-NI key kept alongside (short messages).
    pub(super) fn aesni(&self) -> &super::aesni_clmul::Key {
        self.narrow.narrow()
    }

    pub(crate) fn encrypt_counter(&self, c: u128) -> Block {
        self.narrow.encrypt_counter(c)
    }

    pub(crate) fn absorb(&self, acc: &mut Block, x: u128) {
        self.narrow.absorb(acc, x);
    }

    pub(crate) fn ghash(&self, acc: &mut Block, data: &[u8]) {
        let bulk = data.len() / CHUNK * CHUNK;
        let (head, tail) = data.split_at(bulk);
        if !head.is_empty() {
            // SAFETY: a `Key` exists only if the features were detected;
            // `head` is a non-zero multiple of `CHUNK` bytes.
            unsafe { ghash(self.wide(), acc, head) };
        }
        self.narrow.ghash(acc, tail);
    }

    /// Splits `len` bytes for `decrypt` into whole chunks of 8 registers,
    /// then at most one chunk of 4 registers (the rest, under 256 bytes,
    /// goes to the `vaes-avx2` key, which passes it on to `aesni`).
    fn split(len: usize) -> (usize, usize) {
        let bulk = len / CHUNK * CHUNK;
        let half = if len - bulk >= CHUNK / 2 {
            CHUNK / 2
        } else {
            0
        };
        (bulk, half)
    }

    /// Encrypts `io` (in place, or from its input into its output) from
    /// `counter`, the ciphertext absorbed into `acc`.
    pub(crate) fn encrypt(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        if let Some(first) = self.first_on_ymm(io.len()) {
            return first.encrypt(counter, acc, io);
        }
        // Unlike `decrypt`, no 4-register chunk: unstitched (CTR, then
        // GHASH) it measured 1-5% slower than `vaes-avx2`'s 8 ymm chains.
        let bulk = io.len() / CHUNK * CHUNK;
        let (head, tail) = io.split_at(bulk);
        if !head.is_empty() {
            self.seal_chunks::<true>(counter, acc, head);
        }
        // The rest (under 512 bytes) on the narrower key.
        self.narrow
            .encrypt(inc32(counter, (bulk / 16) as u32), acc, tail);
    }

    /// Encrypts `io`, a non-zero multiple of `CHUNK` bytes, from `counter`,
    /// the ciphertext absorbed into `acc` (without `HASH_LAST`, all but the
    /// last chunk's, which is left to the last-chunk kernel); returns the
    /// last chunk's ciphertext (in `io`'s output).
    fn seal_chunks<const HASH_LAST: bool>(
        &self,
        counter: u128,
        acc: &mut Block,
        mut io: InOut<'_>,
    ) -> *const u8 {
        let len = io.len();
        debug_assert!(len != 0 && len.is_multiple_of(CHUNK));
        let sep = matches!(io, InOut::Separate { .. });
        let (src, dst) = io.ptrs();
        let w = self.wide();
        // SAFETY: a `Key` exists only if the features were detected; `src`
        // and `dst` cover `len` bytes, a non-zero multiple of `CHUNK`, equal
        // (in place) or not overlapping (`InOut`).
        unsafe {
            match (self.rounds(), sep) {
                (10, false) => seal::<10, REGS, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (12, false) => seal::<12, REGS, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (_, false) => seal::<14, REGS, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (10, true) => seal::<10, REGS, true, HASH_LAST>(w, counter, acc, src, dst, len),
                (12, true) => seal::<12, REGS, true, HASH_LAST>(w, counter, acc, src, dst, len),
                (_, true) => seal::<14, REGS, true, HASH_LAST>(w, counter, acc, src, dst, len),
            }
        }
        dst.wrapping_add(len - CHUNK).cast_const()
    }

    /// Decrypts `io` from `counter`, the ciphertext absorbed into `acc`.
    pub(crate) fn decrypt(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        if let Some(first) = self.first_on_ymm(io.len()) {
            return first.decrypt(counter, acc, io);
        }
        let (bulk, half) = Key::split(io.len());
        let (head, rest) = io.split_at(bulk);
        let (mid, tail) = rest.split_at(half);
        let counter_mid = inc32(counter, (bulk / 16) as u32);
        type Kernel = unsafe fn(&Wide, u128, &mut Block, *const u8, *mut u8, usize);
        // (in place, separate) forms of one kernel.
        let run = |f: (Kernel, Kernel), c, acc: &mut Block, mut io: InOut<'_>| {
            if !io.is_empty() {
                let f = if matches!(io, InOut::Separate { .. }) {
                    f.1
                } else {
                    f.0
                };
                let (src, dst) = io.ptrs();
                // SAFETY: a `Key` exists only if the features were detected;
                // `head` is a multiple of 512 bytes (8 registers), `mid` of
                // 256 (4 registers), as `f` requires; `src` and `dst` cover
                // them, equal (the in-place form) or not overlapping.
                unsafe { f(self.wide(), c, acc, src, dst, io.len()) };
            }
        };
        match self.rounds() {
            10 => {
                run(
                    (open::<10, REGS, false>, open::<10, REGS, true>),
                    counter,
                    acc,
                    head,
                );
                let half: (Kernel, Kernel) = (
                    open::<10, { REGS / 2 }, false>,
                    open::<10, { REGS / 2 }, true>,
                );
                run(half, counter_mid, acc, mid);
            }
            12 => {
                run(
                    (open::<12, REGS, false>, open::<12, REGS, true>),
                    counter,
                    acc,
                    head,
                );
                let half: (Kernel, Kernel) = (
                    open::<12, { REGS / 2 }, false>,
                    open::<12, { REGS / 2 }, true>,
                );
                run(half, counter_mid, acc, mid);
            }
            _ => {
                run(
                    (open::<14, REGS, false>, open::<14, REGS, true>),
                    counter,
                    acc,
                    head,
                );
                let half: (Kernel, Kernel) = (
                    open::<14, { REGS / 2 }, false>,
                    open::<14, { REGS / 2 }, true>,
                );
                run(half, counter_mid, acc, mid);
            }
        }
        self.narrow
            .decrypt(inc32(counter, ((bulk + half) / 16) as u32), acc, tail);
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers: safe `#[target_feature]` functions that inline
// into the kernels.

/// Entry `i` of a 64-byte-aligned table. Volatile, as in the AES kernels:
/// otherwise LLVM hoists the round keys out of the loop and spills the AES
/// states.
#[inline]
#[target_feature(enable = "avx512f")]
fn wide(entry: &[u8; 64]) -> __m512i {
    // SAFETY: 64 readable bytes, 64-byte aligned: every entry of `Wide`
    // (`align(64)`, made of 64-byte arrays) is.
    unsafe { core::ptr::read_volatile(entry.as_ptr().cast::<__m512i>()) }
}

/// Makes `k` appear to depend on `lo`, `mid` and `hi` at no run-time cost
/// (the `asm!` is empty): [`Reg::tie`].
///
/// # Safety
/// None beyond the CPU supporting AVX-512F (the caller's target features).
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn tie(k: &mut __m512i, lo: __m512i, mid: __m512i, hi: __m512i) {
    // SAFETY: the template is empty: no instruction runs, nothing is read
    // or written besides the operands, which are left unchanged.
    unsafe {
        core::arch::asm!(
            "/* {k} {lo} {mid} {hi} */",
            k = inout(zmm_reg) *k,
            lo = in(zmm_reg) lo,
            mid = in(zmm_reg) mid,
            hi = in(zmm_reg) hi,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
}

/// Register `i` (blocks `4i .. 4i + 4`) of the buffer at `p`.
///
/// # Safety
/// Bytes `64 * i .. 64 * (i + 1)` of `p` must be readable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load_at(p: *const u8, i: usize) -> __m512i {
    // SAFETY: the caller guarantees the 64 bytes are readable.
    unsafe { _mm512_loadu_si512(p.add(64 * i).cast()) }
}

/// Stores register `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `64 * i .. 64 * (i + 1)` of `p` must be writable.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn store_at(p: *mut u8, i: usize, x: __m512i) {
    // SAFETY: the caller guarantees the 64 bytes are writable.
    unsafe { _mm512_storeu_si512(p.add(64 * i).cast(), x) }
}

/// Reverses the bytes of each lane.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn bswap(x: __m512i) -> __m512i {
    let m = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    _mm512_shuffle_epi8(x, _mm512_broadcast_i32x4(m))
}

/// Reverses the bytes of an xmm block.
#[inline]
#[target_feature(enable = "ssse3")]
fn bswap128(x: __m128i) -> __m128i {
    let m = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    _mm_shuffle_epi8(x, m)
}

/// Adds `n` to the low dword of each lane (`inc32` on byte-reversed counters).
#[inline]
#[target_feature(enable = "avx512f")]
fn add32(c: __m512i, n: i32) -> __m512i {
    _mm512_add_epi32(
        c,
        _mm512_set_epi32(0, 0, 0, n, 0, 0, 0, n, 0, 0, 0, n, 0, 0, 0, n),
    )
}

/// The zmm register whose lane 0 is `y` and whose other lanes are zero.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane0(y: __m128i) -> __m512i {
    _mm512_inserti32x4::<0>(_mm512_setzero_si512(), y)
}

/// The counter quadruple `[n, .., n + 3]` (byte-reversed) for the counter
/// block whose big-endian integer is `n`.
#[inline]
#[target_feature(enable = "avx512f")]
fn counter_quad(counter: u128) -> __m512i {
    let c = _mm_set_epi64x((counter >> 64) as i64, counter as i64);
    let c = _mm512_broadcast_i32x4(c);
    _mm512_add_epi32(
        c,
        _mm512_set_epi32(0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0),
    )
}

#[inline]
#[target_feature(enable = "ssse3")]
fn load_acc(acc: &Block) -> __m128i {
    // SAFETY: `acc` is 16 readable bytes.
    bswap128(unsafe { _mm_loadu_si128(acc.as_ptr().cast()) })
}

#[inline]
#[target_feature(enable = "ssse3")]
fn store_acc(acc: &mut Block, y: __m128i) {
    // SAFETY: `acc` is 16 writable bytes.
    unsafe { _mm_storeu_si128(acc.as_mut_ptr().cast(), bswap128(y)) }
}

/// Four blocks in a zmm register: the register type of the width-generic
/// kernels (`wide.rs`). Made only inside this backend's `#[target_feature]`
/// kernels ([`Zmm::token`]), which run only after every feature in
/// [`VAES_AVX512_FEATURES`] was detected.
#[derive(Clone, Copy)]
struct Zmm(__m512i);

impl Zmm {
    /// A register to pass to the generic kernels as the proof they need.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn token() -> Zmm {
        Zmm(_mm512_setzero_si512())
    }
}

// SAFETY (for every block below): a `Zmm` exists only after every feature
// in `VAES_AVX512_FEATURES` (AVX-512 F/BW/VL, VAES, VPCLMULQDQ among them)
// was detected (see `Zmm::token`), so these instructions may run.
impl Reg for Zmm {
    const LANES: usize = LANES;
    type Table = Wide;

    #[inline(always)]
    fn zero(self) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_setzero_si512() })
    }
    #[inline(always)]
    fn xor(self, o: Zmm) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_xor_si512(self.0, o.0) })
    }
    #[inline(always)]
    fn aes_round(self, k: Zmm) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn aes_last_round(self, k: Zmm) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn clmul_lo(self, o: Zmm) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_clmulepi64_epi128::<0x00>(self.0, o.0) })
    }
    #[inline(always)]
    fn clmul_hi(self, o: Zmm) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_clmulepi64_epi128::<0x11>(self.0, o.0) })
    }
    #[inline(always)]
    fn swap_halves(self) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { _mm512_shuffle_epi32::<0x4e>(self.0) })
    }
    #[inline(always)]
    fn bswap(self) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { bswap(self.0) })
    }
    #[inline(always)]
    fn add32(self, n: i32) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { add32(self.0, n) })
    }
    #[inline(always)]
    fn lane0(self, y: __m128i) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { lane0(y) })
    }
    #[inline(always)]
    fn fold(self) -> __m128i {
        let v = self.0;
        // SAFETY: see the impl comment.
        unsafe {
            let v = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v));
            _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v))
        }
    }
    #[inline(always)]
    fn tie(&mut self, lo: Zmm, mid: Zmm, hi: Zmm) {
        // SAFETY: see the impl comment.
        unsafe { tie(&mut self.0, lo.0, mid.0, hi.0) }
    }
    #[inline(always)]
    unsafe fn load_at(self, p: *const u8, i: usize) -> Zmm {
        // SAFETY: see the impl comment; the 64 bytes are readable (the
        // caller's promise).
        Zmm(unsafe { load_at(p, i) })
    }
    #[inline(always)]
    unsafe fn store_at(self, p: *mut u8, i: usize) {
        // SAFETY: see the impl comment; the 64 bytes are writable (the
        // caller's promise).
        unsafe { store_at(p, i, self.0) }
    }
    #[inline(always)]
    fn counter_lanes(self, counter: u128) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { counter_quad(counter) })
    }
    #[inline(always)]
    fn load_acc(self, acc: &Block) -> __m128i {
        // SAFETY: see the impl comment.
        unsafe { load_acc(acc) }
    }
    #[inline(always)]
    fn store_acc(self, acc: &mut Block, y: __m128i) {
        // SAFETY: see the impl comment.
        unsafe { store_acc(acc, y) }
    }
    #[inline(always)]
    fn round_key(self, w: &Wide, r: usize) -> Zmm {
        // SAFETY: see the impl comment.
        Zmm(unsafe { wide(&w.rk[r]) })
    }
    #[inline(always)]
    fn power(self, w: &Wide, j: usize) -> Zmm {
        // SAFETY: see the impl comment; 64 readable bytes, 64-byte aligned
        // (see `wide`).
        Zmm(unsafe { _mm512_load_si512(w.h[j].as_ptr().cast()) })
    }
    #[inline(always)]
    fn power_k(self, w: &Wide, j: usize) -> Zmm {
        // SAFETY: as in `power`.
        Zmm(unsafe { _mm512_load_si512(w.hk[j].as_ptr().cast()) })
    }
}

/// GHASH of `data` (a non-zero multiple of 512 bytes) into `acc`:
/// [`wide::ghash`] on zmm registers.
///
/// # Safety
/// The CPU must support every feature in [`VAES_AVX512_FEATURES`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,vpclmulqdq,pclmulqdq,ssse3")]
unsafe fn ghash(w: &Wide, acc: &mut Block, data: &[u8]) {
    wide::ghash(Zmm::token(), w, acc, data);
}

/// Encryption of the `len` bytes at `src` into `dst` (a non-zero multiple
/// of `64 * N` bytes, chunks of `N` registers; in place when the two are
/// equal): [`wide::seal`] on zmm registers.
///
/// # Safety
/// The CPU must support every feature in [`VAES_AVX512_FEATURES`]; as
/// [`wide::seal`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn seal<const R: usize, const N: usize, const SEP: bool, const HASH_LAST: bool>(
    w: &Wide,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // SAFETY: the features were detected (caller), so a `Zmm` may be made;
    // the buffers as the caller promised.
    unsafe { wide::seal::<Zmm, R, N, SEP, HASH_LAST>(Zmm::token(), w, counter, acc, src, dst, len) }
}

/// Decryption of the `len` bytes at `src` into `dst` (a multiple of
/// `64 * N` bytes, chunks of `N` registers; in place when equal):
/// [`wide::open`] on zmm registers.
///
/// # Safety
/// As [`seal`].
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn open<const R: usize, const N: usize, const SEP: bool>(
    w: &Wide,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // SAFETY: as in `seal`.
    unsafe { wide::open::<Zmm, R, N, SEP>(Zmm::token(), w, counter, acc, src, dst, len) }
}

// The last chunk and the lengths in one pass.
mod last_chunk;
