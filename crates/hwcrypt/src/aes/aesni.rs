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

#[macro_use]
mod kernels;
#[macro_use]
mod lanes;
use kernels::{
    cbc_dec, cbc_enc, cfb_dec, cfb_enc, ctr, ecb_dec, ecb_enc, ofb, xts_clmul, xts_shift,
};

/// Round keys, 16-byte aligned so kernels may load them with aligned loads.
#[derive(Clone)]
#[repr(C, align(16))]
pub(crate) struct RoundKeys(pub(crate) [Block; 15]);

/// Expanded AES key for AES-NI: the encryption schedule and the decryption
/// schedule of the equivalent inverse cipher (for `aesdec`). It lives in a
/// [`SecretBox`] (made by [`Key::boxed`] after the features were detected),
/// which wipes it on drop. 32-byte aligned, so that where the CPU has AVX
/// the home is wiped with 32-byte stores ([`SecretBox`]).
#[repr(C, align(32))]
pub(crate) struct Key {
    enc: RoundKeys,
    dec: RoundKeys,
    rounds: usize,
    /// PCLMULQDQ was detected and not masked off (`HWCRYPT_CPU`): the XTS
    /// kernels reduce tweaks with it.
    clmul: bool,
    /// VPCLMULQDQ was detected and not masked off: read by the VAES keys
    /// that embed this one (their XTS kernels), kept here so that they add
    /// no field past this key's 32-byte-aligned size (`false` on `aesni`).
    wide_clmul: bool,
}

// SAFETY: byte arrays, an integer and a bool: all-zero is valid, no drop
// glue, no pointers. A zeroed key is only made after detection (`boxed`).
unsafe impl Schedule for Key {}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes) in a heap home, in place; `None`
    /// unless the CPU has AES-NI and SSSE3 (or for another key length).
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(AESNI_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: AES-NI and SSSE3 were detected just above, which is all a
        // `Key`'s methods assume; `write_in_place` writes a whole `Key`
        // before the box is used.
        let mut k = unsafe { SecretBox::<Key>::uninit() };
        // SAFETY: as above; the pointer is the box's, valid and aligned.
        unsafe { Key::write_in_place(k.as_mut_ptr(), key, cpu::usable(Feature::Pclmulqdq), false) };
        Some(k)
    }

    /// Writes a whole key for `key` at `p` (uninitialised memory): the
    /// flags, the round keys `0..=rounds` of both schedules by expansion,
    /// zeroes past them. Every byte but padding is written once, and
    /// nothing at `p` is read before it was written.
    ///
    /// # Safety
    /// The CPU supports AES-NI and SSSE3; `p` is valid for writes of a
    /// `Key` and aligned; `key.len()` is 16, 24 or 32.
    pub(crate) unsafe fn write_in_place(p: *mut Key, key: &[u8], clmul: bool, wide_clmul: bool) {
        let rounds = 6 + key.len() / 4;
        // SAFETY: field addresses inside the `Key` at `p`, valid for writes
        // (the caller's promise); `expand_into`'s contract: 15 writable
        // blocks each, and the CPU features.
        unsafe {
            core::ptr::addr_of_mut!((*p).rounds).write(rounds);
            core::ptr::addr_of_mut!((*p).clmul).write(clmul);
            core::ptr::addr_of_mut!((*p).wide_clmul).write(wide_clmul);
            let enc = core::ptr::addr_of_mut!((*p).enc).cast::<Block>();
            let dec = core::ptr::addr_of_mut!((*p).dec).cast::<Block>();
            for i in rounds + 1..15 {
                enc.add(i).write([0; 16]);
                dec.add(i).write([0; 16]);
            }
            expand_into::<true>(key, enc, dec);
        }
    }

    /// Re-expands in place for `key` (16, 24 or 32 bytes, checked by the
    /// caller): no move of the schedules, round keys a shorter key leaves
    /// unused are wiped.
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        debug_assert!(matches!(key.len(), 16 | 24 | 32));
        let (clmul, wide_clmul) = (self.clmul, self.wide_clmul);
        // SAFETY: a `Key` exists only if AES-NI and SSSE3 were detected;
        // `self` is a valid, aligned `Key` to overwrite; the length is 16,
        // 24 or 32.
        unsafe { Key::write_in_place(self, key, clmul, wide_clmul) };
    }

    /// Whether the embedding VAES key's XTS kernels may use VPCLMULQDQ.
    pub(crate) fn wide_clmul(&self) -> bool {
        self.wide_clmul
    }

    /// 10, 12 or 14.
    pub(crate) fn rounds(&self) -> usize {
        self.rounds
    }

    /// The encryption schedule (entries past `rounds` are zero): the wide
    /// backends broadcast its round keys into their registers as they load
    /// them, so it is the only schedule they keep.
    pub(crate) fn enc_keys(&self) -> &RoundKeys {
        &self.enc
    }

    /// The decryption schedule of the equivalent inverse cipher (see
    /// [`Key::decryption_round_keys`]; entries past `rounds` are zero).
    pub(crate) fn dec_keys(&self) -> &RoundKeys {
        &self.dec
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

/// A counter (or IV) block, read as two 8-byte halves. Callers build
/// counter blocks just before a call, typically a fixed part and an 8-byte
/// sequence number stored apart; a 16-byte load of two such stores cannot
/// be forwarded from the store buffer and waits for them to reach the
/// cache (~20 cycles: a quarter of a 16-byte CTR message on Zen 4). Two
/// loads in `asm!` (`movq`, `movhps`: SSE2), which LLVM cannot merge back
/// into one (a volatile read of the bytes came out as 16 byte loads).
#[cfg(not(miri))]
#[inline(always)]
pub(crate) fn load_halves(block: &Block) -> __m128i {
    let x: __m128i;
    // SAFETY: reads the 16 bytes of `block` (two 8-byte loads; no
    // alignment needed); SSE2 is part of x86_64; writes only `x`.
    unsafe {
        core::arch::asm!(
            "movq {x}, qword ptr [{p}]",
            "movhps {x}, qword ptr [{p} + 8]",
            p = in(reg) block.as_ptr(),
            x = out(xmm_reg) x,
            options(nostack, readonly, preserves_flags)
        );
    }
    x
}

/// [`load_halves`] in VEX form (`vmovq`, `vmovhps`), for the VAES kernels:
/// it zeroes the register's upper lanes instead of merging into them, so
/// there is no dependency on an old ymm/zmm value (nor, on Intel, a
/// penalty for legacy SSE code beside dirty upper halves).
///
/// # Safety
/// AVX was detected.
#[cfg(not(miri))]
#[inline(always)]
pub(crate) unsafe fn load_halves_vex(block: &Block) -> __m128i {
    let x: __m128i;
    // SAFETY: AVX was detected (caller); reads the 16 bytes of `block` (two
    // 8-byte loads, no alignment needed); writes only `x`.
    unsafe {
        core::arch::asm!(
            "vmovq {x}, qword ptr [{p}]",
            "vmovhps {x}, {x}, qword ptr [{p} + 8]",
            p = in(reg) block.as_ptr(),
            x = out(xmm_reg) x,
            options(nostack, readonly, preserves_flags)
        );
    }
    x
}

/// Miri runs no inline assembly: the same value, one load.
#[cfg(miri)]
#[inline(always)]
pub(crate) fn load_halves(block: &Block) -> __m128i {
    // SAFETY: `block` is 16 readable bytes; unaligned loads are allowed.
    unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
}

/// Miri runs no inline assembly: the same value, one load.
///
/// # Safety
/// None under Miri (kept `unsafe` to match the real one).
#[cfg(miri)]
#[inline(always)]
pub(crate) unsafe fn load_halves_vex(block: &Block) -> __m128i {
    load_halves(block)
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

/// SubWord(RotWord(word 1 of `k`)) ^ rcon in all four words: AES-192's
/// step, whose last key word is word 1 of the two-word half it keeps in
/// the low half of a register.
#[inline]
#[target_feature(enable = "aes,ssse3")]
fn sub_rot_word1(k: __m128i, rcon: i32) -> __m128i {
    let rot_word1 = _mm_setr_epi8(5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4, 5, 6, 7, 4);
    _mm_aesenclast_si128(_mm_shuffle_epi8(k, rot_word1), _mm_set1_epi32(rcon))
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
///
/// # Safety
/// `enc` (and `dec` if `DEC`) are valid for writes of 15 blocks; `i <= R <= 14`.
#[inline]
#[target_feature(enable = "aes")]
unsafe fn put<const DEC: bool, const R: usize>(
    enc: *mut Block,
    dec: *mut Block,
    i: usize,
    rk: __m128i,
) {
    // SAFETY: `i < 15` blocks into `enc` (the caller's promise); unaligned
    // stores are allowed.
    unsafe { _mm_storeu_si128(enc.add(i).cast(), rk) };
    if DEC {
        let d = if i == 0 || i == R {
            rk
        } else {
            _mm_aesimc_si128(rk)
        };
        // SAFETY: as above, `R - i < 15` blocks into `dec`.
        unsafe { _mm_storeu_si128(dec.add(R - i).cast(), d) };
    }
}

/// Expands a 16-, 24- or 32-byte `key` into the encryption round keys
/// `enc[..=rounds]` only (AES-GCM's tables need no decryption schedule), in
/// place; returns the number of rounds.
///
/// # Safety
/// The CPU must support AES-NI and SSSE3; `key.len()` is 16, 24 or 32.
#[target_feature(enable = "aes,ssse3")]
pub(crate) unsafe fn expand_encryption(key: &[u8], enc: &mut [Block; 15]) -> usize {
    // SAFETY: the same contract.
    unsafe { expand_into::<false>(key, enc.as_mut_ptr(), core::ptr::null_mut()) };
    6 + key.len() / 4
}

/// Expands `key` into `enc[..=rounds]` and, if `DEC`, `dec[..=rounds]`
/// (raw pointers: the memory may be uninitialised; the entries past
/// `rounds` are not touched). `enc` is read back only where this function
/// wrote it.
///
/// # Safety
/// The CPU must support AES-NI and SSSE3; `key.len()` is 16, 24 or 32;
/// `enc` (and `dec` if `DEC`) are valid for reads and writes of 15 blocks.
#[target_feature(enable = "aes,ssse3")]
unsafe fn expand_into<const DEC: bool>(key: &[u8], enc: *mut Block, dec: *mut Block) {
    match key.len() {
        16 => {
            // SAFETY: `key` is 16 readable bytes.
            let mut rk = unsafe { _mm_loadu_si128(key.as_ptr().cast()) };
            // SAFETY: `enc` and `dec` as the caller promised; the index is at most 10.
            unsafe { put::<DEC, 10>(enc, dec, 0, rk) };
            for (i, rcon) in RCON.into_iter().enumerate() {
                rk = _mm_xor_si128(prefix_xor(rk), sub_rot_word3(rk, rcon));
                // SAFETY: `enc` and `dec` as the caller promised; the index is at most 10.
                unsafe { put::<DEC, 10>(enc, dec, i + 1, rk) };
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
            // SAFETY: `enc` and `dec` as the caller promised; the index is at most 14.
            unsafe { put::<DEC, 14>(enc, dec, 0, even) };
            // SAFETY: `enc` and `dec` as the caller promised; the index is at most 14.
            unsafe { put::<DEC, 14>(enc, dec, 1, odd) };
            for (i, rcon) in (2..15).step_by(2).zip(RCON) {
                even = _mm_xor_si128(prefix_xor(even), sub_rot_word3(odd, rcon));
                // SAFETY: `enc` and `dec` as the caller promised; the index is at most 14.
                unsafe { put::<DEC, 14>(enc, dec, i, even) };
                if i < 14 {
                    odd = _mm_xor_si128(prefix_xor(odd), sub_word3(even));
                    // SAFETY: `enc` and `dec` as the caller promised; the index is at most 14.
                    unsafe { put::<DEC, 14>(enc, dec, i + 1, odd) };
                }
            }
        }
        _ => {
            // AES-192: each step makes six key words from the previous six,
            // held as four (`a`) and two (the low half of `b`): the first
            // four are a prefix XOR of `a` with SubWord(RotWord(last
            // word)) ^ rcon, the last two a prefix XOR of `b` with the new
            // word 3. Two steps make three round keys: `b` of the step
            // before with the low half of `a`, then the high half of `a`
            // with `b`; the next step's `a` is a round key as it stands.
            // (Word by word, with a `aesenclast` round trip through a
            // general register per SubWord and the words packed through
            // memory, AES-192 keys took about four times AES-128's.)
            // SAFETY: `key` is 24 readable bytes.
            let (mut a, mut b) = unsafe {
                (
                    _mm_loadu_si128(key.as_ptr().cast()),
                    _mm_loadl_epi64(key.as_ptr().add(16).cast()),
                )
            };
            // SAFETY: `enc` and `dec` as the caller promised; the index is at most 12.
            unsafe { put::<DEC, 12>(enc, dec, 0, a) };
            let mut i = 1;
            for (step, &rcon) in RCON[..8].iter().enumerate() {
                let before = b;
                a = _mm_xor_si128(prefix_xor(a), sub_rot_word1(b, rcon));
                b = _mm_xor_si128(
                    _mm_xor_si128(b, _mm_slli_si128::<4>(b)),
                    _mm_shuffle_epi32::<0xff>(a),
                );
                if step % 2 == 0 {
                    // SAFETY: `enc` and `dec` as the caller promised; the
                    // indexes are at most 11.
                    unsafe {
                        put::<DEC, 12>(enc, dec, i, _mm_unpacklo_epi64(before, a));
                        put::<DEC, 12>(enc, dec, i + 1, _mm_alignr_epi8::<8>(b, a));
                    }
                    i += 2;
                } else {
                    // SAFETY: as above; the index is at most 12.
                    unsafe { put::<DEC, 12>(enc, dec, i, a) };
                    i += 1;
                }
            }
            debug_assert_eq!(i, 13);
        }
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
    #[inline(always)]
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
    fn rounds(&self) -> usize {
        self.rounds
    }

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
mod tests;
