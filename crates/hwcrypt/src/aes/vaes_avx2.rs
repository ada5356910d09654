//! VAES-AVX2 backend: AES on 256-bit ymm registers, two blocks per register.
//!
//! The parallel kernels (ECB, CBC decryption, CFB128 decryption, CTR) keep
//! eight ymm registers — sixteen blocks — in flight per iteration, enough to
//! cover the `vaesenc` latency at two instructions per cycle; each round key is
//! loaded once per round and applied to all eight, broadcast to both
//! 128-bit lanes by the load itself (the key keeps one 16-byte block per
//! round, the AES-NI schedule). The serial
//! kernels (single blocks, CBC/CFB128 encryption, OFB) are latency-bound and
//! gain nothing from ymm: they run on the AES-NI key kept alongside.
//!
//! A [`Key`] can only be made after every feature in [`VAES_AVX2_FEATURES`]
//! was detected, so every method may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::aesni;
use super::{AesKernels, Block, CounterWidth};
use crate::cpu::{self, Feature, Features};
use crate::inout::InOut;
use crate::registry::VAES_AVX2_FEATURES;
use crate::secret::{Schedule, SecretBox};
use core::arch::x86_64::*;

#[macro_use]
mod kernels;
use kernels::{ctr, ecb, feedback_decrypt};

#[macro_use]
mod xts;
use xts::{xts_clmul, xts_shift};

mod lanes;

/// The round keys the wide kernels read: the AES-NI schedule itself, one
/// 16-byte block per round, broadcast to both lanes as each is loaded
/// (`vbroadcasti128` from memory: one load, no shuffle). One schedule
/// instead of a second, broadcast copy keeps a key small (496 bytes), so
/// making one writes and later wipes a third as much and its heap home
/// comes from the allocator's small-size cache.
pub(crate) use aesni::RoundKeys;

/// Expanded AES key for the VAES-AVX2 backend. It lives in a
/// [`SecretBox`] (made by [`Key::boxed`] after the features were detected),
/// which wipes it on drop.
#[repr(C, align(32))]
pub(crate) struct Key {
    /// The AES-NI key: the serial kernels, and the round keys of the wide
    /// ones.
    /// Its `wide_clmul`: VPCLMULQDQ was detected and not masked off
    /// (`HWCRYPT_CPU`), so the XTS kernels reduce tweaks with it.
    narrow: aesni::Key,
}

// SAFETY: an AES-NI key: all-zero is valid, no drop
// glue, no pointers. A zeroed key is only made after detection (`boxed`),
// of AVX among the rest (`AVX`: wiped with 32-byte stores; 32-byte aligned).
unsafe impl Schedule for Key {
    const AVX: bool = true;
}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes) in a heap home, in place; `None`
    /// unless the CPU has every feature in [`VAES_AVX2_FEATURES`] (or for
    /// another key length).
    pub(crate) fn boxed(key: &[u8]) -> Option<SecretBox<Key>> {
        if !cpu::detected().contains(Features::of(VAES_AVX2_FEATURES))
            || !matches!(key.len(), 16 | 24 | 32)
        {
            return None;
        }
        // SAFETY: every feature of `VAES_AVX2_FEATURES` (a superset of
        // AES-NI's) was detected just above; `write_in_place` writes a
        // whole `Key` before the box is used.
        let mut k = unsafe { SecretBox::<Key>::uninit() };
        // SAFETY: as above; the pointer is the box's, valid and aligned.
        unsafe { Key::write_in_place(k.as_mut_ptr(), key) };
        Some(k)
    }

    /// Writes a whole key for `key` at `p` (uninitialised memory), as
    /// [`aesni::Key::write_in_place`] does.
    ///
    /// # Safety
    /// The CPU has every feature in [`VAES_AVX2_FEATURES`]; `p` is valid for
    /// writes of a `Key` and aligned; `key.len()` is 16, 24 or 32.
    pub(crate) unsafe fn write_in_place(p: *mut Key, key: &[u8]) {
        // The masked features, not the detected ones: `HWCRYPT_CPU=-pclmulqdq`
        // (or `-vpclmulqdq`) must reach the XTS kernels too.
        let (clmul, narrow_clmul) = (
            cpu::usable(Feature::Vpclmulqdq),
            cpu::usable(Feature::Pclmulqdq),
        );
        // SAFETY: field addresses inside the `Key` at `p` (the caller's
        // promise), and the AES-NI key's contract (its features are a subset).
        unsafe {
            aesni::Key::write_in_place(
                core::ptr::addr_of_mut!((*p).narrow),
                key,
                narrow_clmul,
                clmul,
            );
        }
    }

    /// The AES-NI key (the `vaes-avx512` backend's round keys too).
    pub(crate) fn narrow(&self) -> &aesni::Key {
        &self.narrow
    }

    /// Re-expands in place for `key` (16, 24 or 32 bytes, checked by the caller).
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        self.narrow.rekey(key);
    }

    /// The encryption schedule.
    fn enc(&self) -> &RoundKeys {
        self.narrow.enc_keys()
    }

    /// The decryption schedule (equivalent inverse cipher).
    fn dec(&self) -> &RoundKeys {
        self.narrow.dec_keys()
    }
}

/// Calls `$f::<R, ..>(args)` with `R` the key's round count, inside an unsafe
/// block justified by the `Key`'s existence.
macro_rules! by_rounds {
    ($key:expr, $f:ident :: <_ $(, $c:tt)*> ($($arg:expr),* $(,)?)) => {{
        let rounds = $key.narrow.rounds();
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX2_FEATURES` (AES, SSSE3, AVX, AVX2, VAES) was detected,
        // which covers the kernels' `avx2,vaes,aes`.
        unsafe {
            match rounds {
                10 => $f::<10 $(, $c)*>($($arg),*),
                12 => $f::<12 $(, $c)*>($($arg),*),
                _ => $f::<14 $(, $c)*>($($arg),*),
            }
        }
    }};
}

/// [`by_rounds!`] for a kernel that also needs VPCLMULQDQ: only called when
/// the AES-NI key's `wide_clmul` is set.
macro_rules! by_rounds_clmul {
    ($key:expr, $f:ident :: <_ $(, $c:tt)*> ($($arg:expr),* $(,)?)) => {{
        let rounds = $key.narrow.rounds();
        // SAFETY: a `Key` exists only after every feature in
        // `VAES_AVX2_FEATURES` was detected, and `wide_clmul` (checked by the
        // caller) is set only if VPCLMULQDQ was detected too: together they
        // cover the kernel's `avx2,vaes,aes,vpclmulqdq`.
        unsafe {
            match rounds {
                10 => $f::<10 $(, $c)*>($($arg),*),
                12 => $f::<12 $(, $c)*>($($arg),*),
                _ => $f::<14 $(, $c)*>($($arg),*),
            }
        }
    }};
}

impl Key {
    /// XTS over one data unit of whole blocks whose tweak is not encrypted
    /// yet: the tweak is encrypted with `tweak_key` inside the kernel, so
    /// the tweaks and the first rounds follow it without a round trip
    /// through memory. `tweak` holds the tweak after the last block on return.
    #[inline(always)]
    pub(crate) fn xts_unit(
        &self,
        tweak_key: &Key,
        tweak: &mut Block,
        io: InOut<'_>,
        decrypt: bool,
    ) {
        let k2 = Some(tweak_key.enc());
        super::count_xts_path(self.narrow.wide_clmul());
        match (self.narrow.wide_clmul(), decrypt) {
            (true, false) => {
                by_rounds_clmul!(self, xts_clmul::<_, false>(self.enc(), k2, tweak, io))
            }
            (true, true) => by_rounds_clmul!(self, xts_clmul::<_, true>(self.dec(), k2, tweak, io)),
            (false, false) => by_rounds!(self, xts_shift::<_, false>(self.enc(), k2, tweak, io)),
            (false, true) => by_rounds!(self, xts_shift::<_, true>(self.dec(), k2, tweak, io)),
        }
    }
}

impl AesKernels for Key {
    fn rounds(&self) -> usize {
        self.narrow.rounds()
    }

    fn encrypt_block(&self, block: &mut Block) {
        self.narrow.encrypt_block(block);
    }
    fn decrypt_block(&self, block: &mut Block) {
        self.narrow.decrypt_block(block);
    }
    fn ecb_encrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, false>(self.enc(), io));
    }
    fn ecb_decrypt(&self, io: InOut<'_>) {
        by_rounds!(self, ecb::<_, true>(self.dec(), io));
    }
    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>) {
        self.narrow.cbc_encrypt(chain, io);
    }
    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>) {
        by_rounds!(self, feedback_decrypt::<_, true>(self.dec(), chain, io));
    }
    fn cfb128_encrypt(&self, register: &mut Block, io: InOut<'_>) {
        self.narrow.cfb128_encrypt(register, io);
    }
    fn cfb128_decrypt(&self, register: &mut Block, io: InOut<'_>) {
        by_rounds!(self, feedback_decrypt::<_, false>(self.enc(), register, io));
    }
    fn ofb(&self, register: &mut Block, io: InOut<'_>) {
        self.narrow.ofb(register, io);
    }
    fn xts_encrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        super::count_xts_path(self.narrow.wide_clmul());
        if self.narrow.wide_clmul() {
            by_rounds_clmul!(self, xts_clmul::<_, false>(self.enc(), None, tweak, io));
        } else {
            by_rounds!(self, xts_shift::<_, false>(self.enc(), None, tweak, io));
        }
    }
    fn xts_decrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        super::count_xts_path(self.narrow.wide_clmul());
        if self.narrow.wide_clmul() {
            by_rounds_clmul!(self, xts_clmul::<_, true>(self.dec(), None, tweak, io));
        } else {
            by_rounds!(self, xts_shift::<_, true>(self.dec(), None, tweak, io));
        }
    }
    fn ctr(&self, counter: &mut Block, width: CounterWidth, mut io: InOut<'_>) {
        let blocks = io.len() / 16;
        if blocks == 1 {
            // One block is a serial kernel: the AES-NI one, whose counter
            // update stays in the vector register beside the rounds (here
            // the update went through general registers and memory: through
            // the OpenSSL provider on a Zen 3, 16-byte `EVP_EncryptUpdate`s
            // took 49 / 64 TSC ticks for AES-128 / AES-256 this way, 44 / 50
            // on the AES-NI kernel, against stock OpenSSL's 49 / 61).
            return self.narrow.ctr(counter, width, io);
        }
        match width {
            CounterWidth::Low32 => {
                by_rounds!(self, ctr::<_, true>(self.enc(), counter, io));
            }
            CounterWidth::Full128 => {
                // The common case first: the low 64 bits do not wrap, one
                // kernel call (at 16 B the general loop below cost ~3 ns).
                let low = u64::from_be_bytes(counter[8..].try_into().unwrap_or([0; 8]));
                if let Some(next) = low.checked_add(blocks as u64) {
                    by_rounds!(self, ctr::<_, false>(self.enc(), counter, io));
                    counter[8..].copy_from_slice(&next.to_be_bytes());
                    return;
                }
                // The kernel adds to the low 64 bits without carrying: split
                // the call where they wrap (at most once per 2^64 blocks).
                let mut done = 0;
                while done < blocks {
                    let low = u64::from_be_bytes(counter[8..].try_into().unwrap_or([0; 8]));
                    let room = u128::from(u64::MAX - low) + 1;
                    let seg = (blocks - done).min(usize::try_from(room).unwrap_or(usize::MAX));
                    let (head, rest) = io.split_at(seg * 16);
                    by_rounds!(self, ctr::<_, false>(self.enc(), counter, head));
                    width.add(counter, seg as u128);
                    io = rest;
                    done += seg;
                }
                return;
            }
        }
        width.add(counter, blocks as u128);
    }
}

#[cfg(test)]
mod tests;
