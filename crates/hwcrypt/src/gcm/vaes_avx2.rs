//! The `vaes-avx2` AES-GCM backend: VAES and VPCLMULQDQ on ymm registers,
//! two blocks per register, CTR and GHASH in one stitched pass.
//!
//! The bulk of a message runs in chunks of 16 blocks (8 ymm registers, the
//! number that covers the `vaesenc` latency at two per cycle). Per chunk,
//! the 8 registers of counter blocks go through AES while the GHASH of 16
//! ciphertext blocks runs between the rounds (on encryption those of the
//! previous chunk, on decryption those of the chunk itself), each register
//! of two blocks multiplied by two key powers at once (`H^16..H^1`, lane
//! pairs `[H^(16-2j), H^(15-2j)]`, Karatsuba), the products summed over
//! both lanes and reduced once per chunk. Round keys and key powers are
//! broadcast or paired into a ymm table by the first message that needs it
//! (key setup makes only the AES-NI key). The chunk kernels are the
//! width-generic ones of `wide.rs`, on [`Ymm`] registers; this file has the
//! table, the ymm operations and the last-chunk kernel.
//!
//! What is left after the last whole chunk (under 256 bytes): in the
//! one-shot API ([`super::one_pass`]), one pass of its own (`last`): its counter
//! blocks and `J0` through AES together, the chunk (zero-padded through a
//! stack copy of the partial register), the lengths block and, when no whole
//! chunk came before, up to 32 bytes of associated data multiplied against
//! an unaligned window of the power table and reduced once. In the
//! streaming kernels it runs on the `aesni` kernels of the AES-NI key kept
//! alongside, which also hash the associated data and the IV. The representation (byte-reflected blocks,
//! key powers times `x^-1`) is the one of `aesni_clmul.rs`.
//!
//! A [`Key`] can only be made after every feature in
//! [`GCM_VAES_AVX2_FEATURES`] was detected, so every method may call the
//! `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::aesni_clmul;
use super::inc32;
use super::one_pass::{LastChunk, LastOps};
use super::wide::{self, REGS, Reg, WideAcc};
use crate::aes::Block;
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::GCM_VAES_AVX2_FEATURES;
use crate::secret::{LazyBox, Schedule, SecretBox};
use core::arch::x86_64::*;

/// Bytes per chunk (of `REGS` ymm registers): 16 blocks.
const CHUNK: usize = 32 * REGS;

/// Round keys (broadcast to both lanes) and key powers (in lane pairs),
/// 32-byte aligned for aligned loads.
#[derive(Clone)]
#[repr(C, align(32))]
struct Wide {
    rk: [[u8; 32]; 15],
    /// `h[j]`: `H^(16-2j)` in the low lane, `H^(15-2j)` in the high lane.
    h: [[u8; 32]; REGS],
    /// The Karatsuba operands of `h[j]`: each lane's halves XORed, in its low half.
    hk: [[u8; 32]; REGS],
    /// Zeros: `mul_add_from` may read a block past `hk` (for a lane whose
    /// operand is zero).
    tail: [u8; 32],
}

impl Wide {
    /// Writes a whole table at `p` (uninitialised memory): the round keys
    /// broadcast to both lanes (zeroes past the last round), the key powers
    /// (`powers[k - 1] = H^k`) laid out so that `h[j]` holds `H^(16-2j)` and
    /// `H^(15-2j)`, `hk[j]` their Karatsuba operands (high halves zero), and
    /// the zero tail. Every byte is written once; nothing is read.
    ///
    /// # Safety
    /// The CPU must support AVX2; `p` is valid for writes of a `Wide` and
    /// aligned; `round_keys` has at most 15 entries.
    #[target_feature(enable = "avx2")]
    unsafe fn write(p: *mut Wide, round_keys: &[Block], powers: &[Block; 2 * REGS]) {
        let load = |b: &Block| {
            // SAFETY: 16 readable bytes.
            unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
        };
        let row = |field: *mut [u8; 32], x: __m256i| {
            // SAFETY: a 32-byte row inside the `Wide` at `p` (the caller's
            // promise), 32-byte aligned (`Wide` is `align(32)`, rows are 32
            // bytes).
            unsafe { _mm256_store_si256(field.cast(), x) };
        };
        // SAFETY: these field addresses are inside the `Wide` at `p`.
        let (rk, h, hk, tail) = unsafe {
            (
                core::ptr::addr_of_mut!((*p).rk).cast::<[u8; 32]>(),
                core::ptr::addr_of_mut!((*p).h).cast::<[u8; 32]>(),
                core::ptr::addr_of_mut!((*p).hk).cast::<[u8; 32]>(),
                core::ptr::addr_of_mut!((*p).tail),
            )
        };
        for i in 0..15 {
            let k = round_keys.get(i).map_or(_mm256_setzero_si256(), |k| {
                _mm256_broadcastsi128_si256(load(k))
            });
            // SAFETY: row `i < 15` of `rk`.
            row(unsafe { rk.add(i) }, k);
        }
        for j in 0..REGS {
            let top = 2 * REGS - 2 * j;
            let x = _mm256_set_m128i(load(&powers[top - 2]), load(&powers[top - 1]));
            let halves = _mm256_xor_si256(x, _mm256_shuffle_epi32::<0x4e>(x));
            let k = _mm256_unpacklo_epi64(halves, _mm256_setzero_si256());
            // SAFETY: row `j < REGS` of `h` and `hk`.
            unsafe {
                row(h.add(j), x);
                row(hk.add(j), k);
            }
        }
        row(tail, _mm256_setzero_si256());
    }
}

// SAFETY: byte arrays: all-zero is valid, no drop glue, no pointers. A
// table is only made by a `Key`, which exists only after detection.
unsafe impl Schedule for Wide {
    // Made only by a `Key`, after its features (AVX among them) were detected.
    const AVX: bool = true;
}

impl Wide {
    /// The table of `narrow`'s key in a heap home of its own: `H^1..H^16`
    /// from its powers, round keys from its schedule.
    fn boxed(narrow: &aesni_clmul::Key) -> SecretBox<Wide> {
        // SAFETY: a table is only made for a `Key` (this function's callers),
        // which exists only after the features (AVX2 among them) were
        // detected; `Wide::write` below writes a whole table before the box
        // is used.
        let mut w = unsafe { SecretBox::<Wide>::uninit() };
        let mut powers = narrow.powers_n::<{ 2 * REGS }>();
        // SAFETY: the box's `Wide`, valid for writes and aligned; AVX2 was
        // detected; at most 15 round keys.
        unsafe { Wide::write(w.as_mut_ptr(), narrow.round_keys(), &powers) };
        crate::secret::wipe_bytes(powers.as_flattened_mut());
        w
    }
}

/// The `vaes-avx2` AES-GCM key: the AES-NI key in its heap home
/// ([`SecretBox`]), and the ymm table in one of its own, made by the first
/// message that reaches the wide kernels (a whole 256-byte chunk, or a last
/// chunk over [`super::AesGcm`]'s short-message limit): key setup is then
/// the AES-NI key's alone (~90 ns against ~140 with the table, AMD Zen 4),
/// and a key that only seals short records never makes the table. Both are
/// wiped on drop.
#[derive(Clone)]
pub(crate) struct Key {
    /// The AES-NI key: tails, associated data, IVs and single blocks.
    narrow: SecretBox<aesni_clmul::Key>,
    w: LazyBox<Wide>,
}

impl Key {
    /// The heap homes of this key's secrets (test hook, feature
    /// `residue-test`): the AES-NI table and the ymm table once made.
    #[cfg(feature = "residue-test")]
    pub(crate) fn secret_regions(&self) -> Vec<(usize, usize)> {
        let mut r = vec![crate::secret::region_of(&*self.narrow)];
        r.extend(self.w.get().map(crate::secret::region_of));
        r
    }

    /// Expands `key`; `None` unless the CPU has every feature in
    /// [`GCM_VAES_AVX2_FEATURES`], or for a key length other than 16, 24
    /// or 32. The ymm table is made on first use ([`Key::wide`]).
    #[inline]
    pub(crate) fn new(key: &[u8]) -> Option<Key> {
        if !cpu::detected().contains(Features::of(GCM_VAES_AVX2_FEATURES)) {
            return None;
        }
        Some(Key {
            narrow: aesni_clmul::Key::boxed(key)?,
            w: LazyBox::empty(),
        })
    }

    /// The ymm table, made now if no message needed it before.
    fn wide(&self) -> &Wide {
        self.w.get_or_make(|| Wide::boxed(&self.narrow))
    }

    /// Whether a message has made the ymm table.
    pub(super) fn has_wide(&self) -> bool {
        self.w.get().is_some()
    }

    /// The AES-NI key kept alongside.
    pub(super) fn narrow(&self) -> &aesni_clmul::Key {
        &self.narrow
    }

    pub(crate) fn encrypt_counter(&self, c: u128) -> Block {
        self.narrow.encrypt_counter(c)
    }

    pub(crate) fn absorb(&self, acc: &mut Block, x: u128) {
        self.narrow.absorb(acc, x);
    }

    pub(crate) fn ghash(&self, acc: &mut Block, data: &[u8]) {
        self.narrow.ghash(acc, data);
    }

    /// Encrypts `io` (in place, or from its input into its output) from
    /// `counter`, the ciphertext absorbed into `acc`.
    #[inline]
    pub(crate) fn encrypt(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        let bulk = io.len() / CHUNK * CHUNK;
        let (head, tail) = io.split_at(bulk);
        if !head.is_empty() {
            self.seal_chunks::<true>(counter, acc, head);
        }
        // The rest (under 256 bytes) in place on the AES-NI key.
        self.narrow.encrypt(
            inc32(counter, (bulk / 16) as u32),
            acc,
            tail.into_in_place(),
        );
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
            match (self.narrow.rounds(), sep) {
                (10, false) => seal::<10, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (12, false) => seal::<12, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (_, false) => seal::<14, false, HASH_LAST>(w, counter, acc, src, dst, len),
                (10, true) => seal::<10, true, HASH_LAST>(w, counter, acc, src, dst, len),
                (12, true) => seal::<12, true, HASH_LAST>(w, counter, acc, src, dst, len),
                (_, true) => seal::<14, true, HASH_LAST>(w, counter, acc, src, dst, len),
            }
        }
        dst.wrapping_add(len - CHUNK).cast_const()
    }

    /// Decrypts `io` from `counter`, the ciphertext absorbed into `acc`.
    #[inline]
    pub(crate) fn decrypt(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        let bulk = io.len() / CHUNK * CHUNK;
        let (mut head, tail) = io.split_at(bulk);
        if !head.is_empty() {
            let sep = matches!(head, InOut::Separate { .. });
            let (src, dst) = head.ptrs();
            // SAFETY: as in `encrypt`.
            unsafe {
                let w = self.wide();
                match (self.narrow.rounds(), sep) {
                    (10, false) => open::<10, false>(w, counter, acc, src, dst, bulk),
                    (12, false) => open::<12, false>(w, counter, acc, src, dst, bulk),
                    (_, false) => open::<14, false>(w, counter, acc, src, dst, bulk),
                    (10, true) => open::<10, true>(w, counter, acc, src, dst, bulk),
                    (12, true) => open::<12, true>(w, counter, acc, src, dst, bulk),
                    (_, true) => open::<14, true>(w, counter, acc, src, dst, bulk),
                }
            }
        }
        self.narrow.decrypt(
            inc32(counter, (bulk / 16) as u32),
            acc,
            tail.into_in_place(),
        );
    }
}

// ---------------------------------------------------------------------------
// Register-level helpers: safe `#[target_feature]` functions that inline
// into the kernels.

/// Entry `i` of a 32-byte-aligned table. Volatile, as in the AES kernels:
/// otherwise LLVM hoists the round keys and powers out of the loop and
/// spills the AES states.
#[inline]
#[target_feature(enable = "avx2")]
fn wide(entry: &[u8; 32]) -> __m256i {
    // SAFETY: 32 readable bytes, 32-byte aligned: every entry of `Wide`
    // (`align(32)`, made of 32-byte arrays) is.
    unsafe { core::ptr::read_volatile(entry.as_ptr().cast::<__m256i>()) }
}

/// Register `i` (blocks `2i`, `2i + 1`) of the buffer at `p`.
///
/// # Safety
/// Bytes `32 * i .. 32 * (i + 1)` of `p` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_at(p: *const u8, i: usize) -> __m256i {
    // SAFETY: the caller guarantees the 32 bytes are readable.
    unsafe { _mm256_loadu_si256(p.add(32 * i).cast()) }
}

/// Stores register `i` of the buffer at `p`.
///
/// # Safety
/// Bytes `32 * i .. 32 * (i + 1)` of `p` must be writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_at(p: *mut u8, i: usize, x: __m256i) {
    // SAFETY: the caller guarantees the 32 bytes are writable.
    unsafe { _mm256_storeu_si256(p.add(32 * i).cast(), x) }
}

/// Reverses the bytes of each lane.
#[inline]
#[target_feature(enable = "avx2")]
fn bswap(x: __m256i) -> __m256i {
    _mm256_shuffle_epi8(
        x,
        _mm256_setr_epi8(
            15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7,
            6, 5, 4, 3, 2, 1, 0,
        ),
    )
}

/// Adds `n` to the low dword of each lane (`inc32` on byte-reversed counters).
#[inline]
#[target_feature(enable = "avx2")]
fn add32(c: __m256i, n: i32) -> __m256i {
    _mm256_add_epi32(c, _mm256_set_epi32(0, 0, 0, n, 0, 0, 0, n))
}

/// The counter pair `[n, n + 1]` (byte-reversed) for the counter block
/// whose big-endian integer is `n`.
#[inline]
#[target_feature(enable = "avx2")]
fn counter_pair(counter: u128) -> __m256i {
    let c = _mm_set_epi64x((counter >> 64) as i64, counter as i64);
    let c = _mm256_broadcastsi128_si256(c);
    _mm256_add_epi32(c, _mm256_set_epi32(0, 0, 0, 1, 0, 0, 0, 0))
}

#[inline]
#[target_feature(enable = "avx2")]
fn load_acc(acc: &Block) -> __m128i {
    // SAFETY: `acc` is 16 readable bytes.
    let y = unsafe { _mm_loadu_si128(acc.as_ptr().cast()) };
    _mm256_castsi256_si128(bswap(_mm256_castsi128_si256(y)))
}

#[inline]
#[target_feature(enable = "avx2")]
fn store_acc(acc: &mut Block, y: __m128i) {
    let y = _mm256_castsi256_si128(bswap(_mm256_castsi128_si256(y)));
    // SAFETY: `acc` is 16 writable bytes.
    unsafe { _mm_storeu_si128(acc.as_mut_ptr().cast(), y) }
}

/// Makes `k` appear to depend on `lo`, `mid` and `hi` at no run-time cost
/// (the `asm!` is empty): [`Reg::tie`].
///
/// # Safety
/// None beyond the CPU supporting AVX (the caller's target features).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn tie(k: &mut __m256i, lo: __m256i, mid: __m256i, hi: __m256i) {
    // SAFETY: the template is empty: no instruction runs, nothing is read
    // or written besides the operands, which are left unchanged.
    unsafe {
        core::arch::asm!(
            "/* {k} {lo} {mid} {hi} */",
            k = inout(ymm_reg) *k,
            lo = in(ymm_reg) lo,
            mid = in(ymm_reg) mid,
            hi = in(ymm_reg) hi,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
}

/// Two blocks in a ymm register: the register type of the width-generic
/// kernels (`wide.rs`). Made only inside this backend's `#[target_feature]`
/// kernels ([`Ymm::token`]), which run only after every feature in
/// [`GCM_VAES_AVX2_FEATURES`] was detected.
#[derive(Clone, Copy)]
struct Ymm(__m256i);

impl Ymm {
    /// A register to pass to the generic kernels as the proof they need.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn token() -> Ymm {
        Ymm(_mm256_setzero_si256())
    }
}

// SAFETY (for every block below): a `Ymm` exists only after every feature
// in `GCM_VAES_AVX2_FEATURES` (AVX2, VAES, VPCLMULQDQ among them) was
// detected (see `Ymm::token`), so these instructions may run.
impl Reg for Ymm {
    const LANES: usize = 2;
    type Table = Wide;

    #[inline(always)]
    fn zero(self) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    fn xor(self, o: Ymm) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
    #[inline(always)]
    fn aes_round(self, k: Ymm) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn aes_last_round(self, k: Ymm) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn clmul_lo(self, o: Ymm) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_clmulepi64_epi128::<0x00>(self.0, o.0) })
    }
    #[inline(always)]
    fn clmul_hi(self, o: Ymm) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_clmulepi64_epi128::<0x11>(self.0, o.0) })
    }
    #[inline(always)]
    fn swap_halves(self) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_shuffle_epi32::<0x4e>(self.0) })
    }
    #[inline(always)]
    fn bswap(self) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { bswap(self.0) })
    }
    #[inline(always)]
    fn add32(self, n: i32) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { add32(self.0, n) })
    }
    #[inline(always)]
    fn lane0(self, y: __m128i) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { _mm256_zextsi128_si256(y) })
    }
    #[inline(always)]
    fn fold(self) -> __m128i {
        // SAFETY: see the impl comment.
        unsafe {
            _mm_xor_si128(
                _mm256_castsi256_si128(self.0),
                _mm256_extracti128_si256::<1>(self.0),
            )
        }
    }
    #[inline(always)]
    fn tie(&mut self, lo: Ymm, mid: Ymm, hi: Ymm) {
        // SAFETY: see the impl comment.
        unsafe { tie(&mut self.0, lo.0, mid.0, hi.0) }
    }
    #[inline(always)]
    unsafe fn load_at(self, p: *const u8, i: usize) -> Ymm {
        // SAFETY: see the impl comment; The 32 bytes are readable (the caller's promise).
        Ymm(unsafe { load_at(p, i) })
    }
    #[inline(always)]
    unsafe fn store_at(self, p: *mut u8, i: usize) {
        // SAFETY: see the impl comment; The 32 bytes are writable (the caller's promise).
        unsafe { store_at(p, i, self.0) }
    }
    #[inline(always)]
    fn counter_lanes(self, counter: u128) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { counter_pair(counter) })
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
    fn round_key(self, w: &Wide, r: usize) -> Ymm {
        // SAFETY: see the impl comment.
        Ymm(unsafe { wide(&w.rk[r]) })
    }
    #[inline(always)]
    fn power(self, w: &Wide, j: usize) -> Ymm {
        // SAFETY: see the impl comment; 32 readable bytes, 32-byte aligned (see `wide`).
        Ymm(unsafe { _mm256_load_si256(w.h[j].as_ptr().cast()) })
    }
    #[inline(always)]
    fn power_k(self, w: &Wide, j: usize) -> Ymm {
        // SAFETY: see the impl comment; As in `power`.
        Ymm(unsafe { _mm256_load_si256(w.hk[j].as_ptr().cast()) })
    }
}

/// Encryption of the `len` bytes at `src` into `dst` (a non-zero multiple
/// of 256 bytes; in place when the two are equal): [`wide::seal`] on 8 ymm
/// registers a chunk.
///
/// # Safety
/// The CPU must support every feature in [`GCM_VAES_AVX2_FEATURES`]; as
/// [`wide::seal`].
#[target_feature(enable = "avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn seal<const R: usize, const SEP: bool, const HASH_LAST: bool>(
    w: &Wide,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // SAFETY: the features were detected (caller), so a `Ymm` may be made;
    // the buffers as the caller promised.
    unsafe {
        wide::seal::<Ymm, R, REGS, SEP, HASH_LAST>(Ymm::token(), w, counter, acc, src, dst, len)
    }
}

/// Decryption of the `len` bytes at `src` into `dst` (a multiple of 256
/// bytes; in place when equal): [`wide::open`] on 8 ymm registers a chunk.
///
/// # Safety
/// As [`seal`].
#[target_feature(enable = "avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn open<const R: usize, const SEP: bool>(
    w: &Wide,
    counter: u128,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    // SAFETY: as in `seal`.
    unsafe { wide::open::<Ymm, R, REGS, SEP>(Ymm::token(), w, counter, acc, src, dst, len) }
}
// ---------------------------------------------------------------------------
// The last chunk and the lengths in one pass.

/// The most associated data the last-chunk kernel hashes with the
/// ciphertext (when the message has no whole chunk): one register.
const WINDOW_AAD_MAX: usize = 32;

/// `0xff` then `0x00`, 32 of each: the 32 bytes at `32 - n` keep the first
/// `n` bytes of a register (`n` is a public length).
const KEEP: [u8; 64] = {
    let mut m = [0u8; 64];
    let mut i = 0;
    while i < 32 {
        m[i] = 0xff;
        i += 1;
    }
    m
};

/// Register `i` of the `len` bytes at `p`, zero-padded past the end (a
/// partial one read without a `memcpy` call: see
/// [`aesni_clmul::read_partial`]).
///
/// # Safety
/// `len` bytes at `p` are readable and register `i` starts before `len`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_part(p: *const u8, len: usize, i: usize) -> __m256i {
    let n = len - 32 * i;
    // SAFETY: register `i` starts before `len` (caller).
    let p = unsafe { p.add(32 * i) };
    if n >= 32 {
        // SAFETY: the whole register is in bounds (caller).
        unsafe { load_at(p, 0) }
    } else {
        // SAFETY: the bytes before `n` are in bounds (caller).
        unsafe {
            let (lo, hi) = if n >= 16 {
                let lo = _mm_loadu_si128(p.cast());
                let b = aesni_clmul::read_partial(p.add(16), n - 16);
                (lo, _mm_loadu_si128(b.as_ptr().cast()))
            } else {
                let b = aesni_clmul::read_partial(p, n);
                (_mm_loadu_si128(b.as_ptr().cast()), _mm_setzero_si128())
            };
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    }
}

/// Stores the bytes of `x` before `len` as register `i` of the buffer at
/// `p` (a partial one without a `memcpy` call).
///
/// # Safety
/// `len` bytes at `p` are writable and register `i` starts before `len`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_part(p: *mut u8, len: usize, i: usize, x: __m256i) {
    let n = len - 32 * i;
    // SAFETY: register `i` starts before `len` (caller).
    let p = unsafe { p.add(32 * i) };
    if n >= 32 {
        // SAFETY: the whole register is in bounds (caller).
        unsafe { store_at(p, 0, x) }
    } else {
        let mut b = [0u8; 16];
        // SAFETY: the bytes before `n` are in bounds (caller); `b` is 16
        // writable bytes.
        unsafe {
            if n >= 16 {
                _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(x));
                _mm_storeu_si128(b.as_mut_ptr().cast(), _mm256_extracti128_si256::<1>(x));
                aesni_clmul::write_partial(p.add(16), n - 16, &b);
            } else {
                _mm_storeu_si128(b.as_mut_ptr().cast(), _mm256_castsi256_si128(x));
                aesni_clmul::write_partial(p, n, &b);
            }
        }
    }
}

/// `x` with only its first `n` bytes (of 32) kept.
#[inline]
#[target_feature(enable = "avx2")]
fn keep(x: __m256i, n: usize) -> __m256i {
    let n = n.min(32);
    // SAFETY: `32 - n .. 64 - n` lies within the 64 bytes of `KEEP`.
    _mm256_and_si256(x, unsafe {
        _mm256_loadu_si256(KEEP.as_ptr().add(32 - n).cast())
    })
}

impl LastChunk for Key {
    const CHUNK: usize = CHUNK;
    const OPERANDS: usize = 16;
    const AAD_MAX: usize = WINDOW_AAD_MAX;

    fn encrypt_counter(&self, c: u128) -> Block {
        Key::encrypt_counter(self, c)
    }

    fn absorb(&self, acc: &mut Block, x: u128) {
        Key::absorb(self, acc, x);
    }

    fn ghash(&self, acc: &mut Block, data: &[u8]) {
        Key::ghash(self, acc, data);
    }

    fn chunks<const DEC: bool>(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        if DEC {
            self.decrypt(counter, acc, io);
        } else {
            self.encrypt(counter, acc, io);
        }
    }

    fn seal_chunks_deferred(&self, counter: u128, acc: &mut Block, io: InOut<'_>) -> *const u8 {
        self.seal_chunks::<false>(counter, acc, io)
    }

    fn last<const DEC: bool>(
        &self,
        ops: &LastOps<'_>,
        acc: &mut Block,
        mut io: InOut<'_>,
    ) -> Block {
        let t = io.len();
        let (src, dst) = io.ptrs();
        let kernels: [Last; REGS] = last_kernels!(last, self.narrow.rounds(), DEC);
        let f = kernels[t.div_ceil(32) - 1];
        // SAFETY: a `Key` exists only if the features were detected; `t`
        // bytes at `src` are readable and at `dst` writable, equal or not
        // overlapping (`InOut`); `0 < t < CHUNK` is within the `N` registers
        // of the kernel picked; the operands fit (the caller).
        unsafe { f(self.wide(), ops, acc, src, dst, t) }
    }
}

/// Makes the round key `k` appear to depend on the AES states `a`, `b`,
/// `c` at no run-time cost (the `asm!` is empty), so that LLVM runs the
/// chains round by round: left alone it runs one chain through every round
/// first and keeps the round keys for the others in spills (key material
/// on the stack).
///
/// # Safety
/// None beyond the CPU supporting AVX (the caller's target features).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn after(k: &mut __m256i, a: __m256i, b: __m256i, c: __m256i) {
    // SAFETY: the template is empty: no instruction runs, nothing is read
    // or written besides the operands, which are left unchanged.
    // Miri does not run inline assembly; the tie only steers scheduling.
    #[cfg(not(miri))]
    unsafe {
        core::arch::asm!(
            "/* {k} {a} {b} {c} */",
            k = inout(ymm_reg) *k,
            a = in(ymm_reg) a,
            b = in(ymm_reg) b,
            c = in(ymm_reg) c,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    #[cfg(miri)]
    let _ = (k, a, b, c);
}

type Last = unsafe fn(&Wide, &LastOps<'_>, &mut Block, *const u8, *mut u8, usize) -> Block;

/// `x` times the two consecutive key powers from `H^(16 - b)` (lane `i` by
/// `H^(16 - b - i)`) into `sum`: `h` and `hk` read as 16 blocks each,
/// `H^16` first, from block `b` (unaligned; up to one block past the end,
/// into the next field, for a lane whose operand is zero).
///
/// # Safety
/// `b <= 15`.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
unsafe fn mul_add_from(sum: &mut WideAcc<Ymm>, w: &Wide, x: __m256i, b: usize) {
    debug_assert!(b < 16);
    // The pointers come from the whole `Wide` (not from the `h` field's
    // slice), so reading past a field stays within what they may read.
    let base = core::ptr::from_ref(w).cast::<u8>();
    // SAFETY: `h` and `hk` are followed by `hk` and `tail` (`repr(C)`, no
    // padding between 32-byte arrays): 32 bytes from block `b <= 15` stay
    // inside `w`.
    let (h, hk) = unsafe {
        (
            _mm256_loadu_si256(base.add(core::mem::offset_of!(Wide, h) + 16 * b).cast()),
            _mm256_loadu_si256(base.add(core::mem::offset_of!(Wide, hk) + 16 * b).cast()),
        )
    };
    sum.mul_add_by(Ymm(x), Ymm(h), Ymm(hk));
}

/// CTR over the last `t` bytes (`32 * (N - 1) < t <= 32 * N`, so `t < 256`)
/// from `ops.counter`, and `E(K, J0)` (the return value) beside it; the
/// associated data in `ops`, the ciphertext (on opening the input, read
/// once) and the lengths block absorbed into `acc` under one reduction,
/// the operands kept in registers (register `i` of them meets the key
/// powers from block `16 - operands + first(i)` of the table).
///
/// # Safety
/// The CPU must support every feature in [`GCM_VAES_AVX2_FEATURES`]; `t`
/// bytes at `src` are readable and at `dst` writable, `dst` equal to `src`
/// or not overlapping it; `32 * (N - 1) < t <= 32 * N`; the operands (the
/// blocks of `ops.aad`, of `t` bytes and the lengths) are at most 16.
#[target_feature(enable = "avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn last<const R: usize, const N: usize, const DEC: bool>(
    w: &Wide,
    ops: &LastOps<'_>,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    t: usize,
) -> Block {
    debug_assert!(N >= 1 && t > 32 * (N - 1) && t <= 32 * N);
    debug_assert!(ops.aad.len() <= WINDOW_AAD_MAX);
    let head = ops.aad.len().div_ceil(16);
    let blocks = t.div_ceil(16);
    let operands = head + blocks + usize::from(ops.lengths.is_some());
    debug_assert!(operands <= 16);
    // Table block of the first operand's power, `H^operands`.
    let base = 16 - operands;
    let ymm = Ymm::token();
    let mut sum = WideAcc::zero(ymm);
    // The running hash joins the first operand: after the last whole
    // chunk's GHASH when it was left to this kernel (its multiplies and
    // reduction then run beside the AES rounds below, which do not wait
    // for them).
    let mut y = _mm256_zextsi128_si256(match ops.pending {
        // SAFETY: `CHUNK` readable bytes (`LastOps::pending`).
        Some(p) => unsafe { wide::ghash_chunk::<Ymm, REGS>(ymm, w, load_acc(acc), p) },
        None => load_acc(acc),
    });
    if head > 0 {
        // SAFETY: `ops.aad` is readable for its length, register 0 starts
        // before it ends.
        let a = unsafe { load_part(ops.aad.as_ptr(), ops.aad.len(), 0) };
        // SAFETY: `base <= 15`.
        unsafe { mul_add_from(&mut sum, w, _mm256_xor_si256(bswap(a), y), base) };
        y = _mm256_setzero_si256();
    }
    // The lengths block: in the free lane after the last ciphertext block,
    // or alone in one more register.
    let lengths = ops
        .lengths
        .map(|l| _mm_set_epi64x((l >> 64) as i64, l as i64));
    let free = blocks % 2;
    // The GHASH operand of ciphertext register `i` (`y` joins register 0).
    let operand = |i: usize, ct: __m256i, y: __m256i| {
        let mut g = bswap(ct);
        if i == 0 {
            g = _mm256_xor_si256(g, y);
        }
        if let Some(l) = lengths
            && i == N - 1
            && free != 0
        {
            g = _mm256_xor_si256(g, _mm256_inserti128_si256::<1>(_mm256_setzero_si256(), l));
        }
        g
    };
    // Opening: the ciphertext is read once, hashed now (beside the AES
    // rounds) and kept in memory for the XOR (volatile, so that the 16 ymm
    // registers go to the AES states and round keys: no key spills). It is
    // public, so the copy needs no wipe.
    let mut held = [_mm256_setzero_si256(); N];
    if DEC {
        for (i, h) in held.iter_mut().enumerate() {
            // SAFETY: register `i < N` starts before `t` (caller).
            let v = unsafe { load_part(src, t, i) };
            // SAFETY: `h` is an aligned, writable `__m256i`.
            unsafe { core::ptr::write_volatile(h, v) };
            // SAFETY: `base + head + 2 i <= 15`: an operand starts there.
            unsafe { mul_add_from(&mut sum, w, operand(i, v, y), base + head + 2 * i) };
        }
    }
    // J0 beside the counter blocks (one more register, with the same
    // round key loads: a chain of its own would keep its keys in spills).
    let j0 = _mm_set_epi64x((ops.j0 >> 64) as i64, ops.j0 as i64);
    let swap = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    let k0 = wide(&w.rk[0]);
    let mut j = _mm256_xor_si256(_mm256_broadcastsi128_si256(_mm_shuffle_epi8(j0, swap)), k0);
    let mut c = counter_pair(ops.counter);
    let mut x = [_mm256_setzero_si256(); N];
    for b in x.iter_mut() {
        *b = _mm256_xor_si256(bswap(c), k0);
        c = add32(c, 2);
    }
    middle_rounds!(R, r => {
        let mut k = wide(&w.rk[r]);
        // SAFETY: an empty instruction sequence; it only makes this round's
        // key appear to depend on the states after the round before.
        unsafe { after(&mut k, j, x[0], x[N - 1]) };
        j = _mm256_aesenc_epi128(j, k);
        for b in x.iter_mut() {
            *b = _mm256_aesenc_epi128(*b, k);
        }
    });
    // The input, before the last round key is loaded: a partial register
    // goes through a `memcpy` call, across which a live key would be spilled.
    let mut input = [_mm256_setzero_si256(); N];
    for (i, (v, h)) in input.iter_mut().zip(&held).enumerate() {
        *v = if DEC {
            // SAFETY: an aligned, readable `__m256i`.
            unsafe { core::ptr::read_volatile(h) }
        } else {
            // SAFETY: register `i < N` starts before `t` (caller).
            unsafe { load_part(src, t, i) }
        };
    }
    let mut k = wide(&w.rk[R]);
    // SAFETY: as above.
    unsafe { after(&mut k, j, x[0], x[N - 1]) };
    let j = _mm256_castsi256_si128(_mm256_aesenclast_epi128(j, k));
    for (i, (b, v)) in x.iter().zip(&input).enumerate() {
        let out = _mm256_aesenclast_epi128(*b, _mm256_xor_si256(k, *v));
        // SAFETY: register `i < N` starts before `t` (caller).
        unsafe { store_part(dst, t, i, out) };
        if !DEC {
            // The ciphertext hashed: zero past the end of the message.
            let out = keep(out, t - 32 * i);
            // SAFETY: as above.
            unsafe { mul_add_from(&mut sum, w, operand(i, out, y), base + head + 2 * i) };
        }
    }
    if let Some(l) = lengths
        && free == 0
    {
        // SAFETY: the lengths block is the last operand: block 15 is `H^1`.
        unsafe { mul_add_from(&mut sum, w, _mm256_zextsi128_si256(l), 15) };
    }
    store_acc(acc, sum.reduce());
    let mut mask = [0u8; 16];
    // SAFETY: 16 writable bytes.
    unsafe { _mm_storeu_si128(mask.as_mut_ptr().cast(), j) };
    mask
}
