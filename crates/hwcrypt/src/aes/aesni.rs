//! AES-NI backend: AES on 128-bit xmm registers.
//!
//! A [`Key`] can only be made after `aes` and `ssse3` were detected, so every
//! method after construction may call the `#[target_feature]` kernels.
#![allow(unsafe_code)]

use super::{AesKernels, Block, CounterWidth};
use crate::cpu::{self, Features};
use crate::inout::InOut;
use crate::registry::AESNI_FEATURES;
use core::arch::x86_64::*;
use zeroize::Zeroize;

/// Round keys, 16-byte aligned so kernels may load them with aligned loads.
#[derive(Clone)]
#[repr(C, align(16))]
pub(crate) struct RoundKeys(pub(crate) [Block; 15]);

/// Expanded AES key for AES-NI: the encryption schedule and the decryption
/// schedule of the equivalent inverse cipher (for `aesdec`).
#[derive(Clone)]
pub(crate) struct Key {
    enc: RoundKeys,
    dec: RoundKeys,
    rounds: usize,
}

impl Key {
    /// Expands `key` (16, 24 or 32 bytes); `None` unless the CPU has AES-NI and SSSE3.
    pub(crate) fn new(key: &[u8]) -> Option<Key> {
        if !cpu::detected().contains(Features::of(AESNI_FEATURES)) {
            return None;
        }
        let mut k = Key {
            enc: RoundKeys([[0; 16]; 15]),
            dec: RoundKeys([[0; 16]; 15]),
            rounds: 6 + key.len() / 4,
        };
        // SAFETY: AES-NI and SSSE3 were detected just above.
        unsafe { expand(key, &mut k) };
        Some(k)
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

impl Drop for Key {
    fn drop(&mut self) {
        self.enc.0.zeroize();
        self.dec.0.zeroize();
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

/// # Safety
/// The CPU must support AES-NI and SSSE3; `key.len()` is 16, 24 or 32 and
/// matches `k.rounds`.
#[target_feature(enable = "aes,ssse3")]
unsafe fn expand(key: &[u8], k: &mut Key) {
    let enc = &mut k.enc.0;
    match key.len() {
        16 => {
            enc[0].copy_from_slice(key);
            // SAFETY (all blocks below): loads/stores of 16-byte arrays; features enabled.
            let mut rk = unsafe { load(&enc[0]) };
            for (i, rcon) in RCON.into_iter().enumerate() {
                rk = _mm_xor_si128(prefix_xor(rk), sub_rot_word3(rk, rcon));
                unsafe { store(&mut enc[i + 1], rk) };
            }
        }
        32 => {
            enc[0].copy_from_slice(&key[..16]);
            enc[1].copy_from_slice(&key[16..]);
            // SAFETY: as above.
            let (mut even, mut odd) = unsafe { (load(&enc[0]), load(&enc[1])) };
            for i in 2..15 {
                if i % 2 == 0 {
                    even = _mm_xor_si128(prefix_xor(even), sub_rot_word3(odd, RCON[i / 2 - 1]));
                    unsafe { store(&mut enc[i], even) };
                } else {
                    odd = _mm_xor_si128(prefix_xor(odd), sub_word3(even));
                    unsafe { store(&mut enc[i], odd) };
                }
            }
        }
        _ => {
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
        }
    }
    let rounds = k.rounds;
    let dec = &mut k.dec.0;
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

impl AesKernels for Key {
    fn encrypt_block(&self, block: &mut Block) {
        // SAFETY: a `Key` exists only if AES-NI was detected.
        unsafe { encrypt1(self.encryption_round_keys(), block) }
    }
    fn decrypt_block(&self, block: &mut Block) {
        // SAFETY: a `Key` exists only if AES-NI was detected.
        unsafe { decrypt1(self.decryption_round_keys(), block) }
    }
    fn ecb_encrypt(&self, _io: InOut<'_>) {
        todo!()
    }
    fn ecb_decrypt(&self, _io: InOut<'_>) {
        todo!()
    }
    fn cbc_encrypt(&self, _chain: &mut Block, _io: InOut<'_>) {
        todo!()
    }
    fn cbc_decrypt(&self, _chain: &mut Block, _io: InOut<'_>) {
        todo!()
    }
    fn cfb128_encrypt(&self, _register: &mut Block, _io: InOut<'_>) {
        todo!()
    }
    fn cfb128_decrypt(&self, _register: &mut Block, _io: InOut<'_>) {
        todo!()
    }
    fn ofb(&self, _register: &mut Block, _io: InOut<'_>) {
        todo!()
    }
    fn ctr(&self, _counter: &mut Block, _width: CounterWidth, _io: InOut<'_>) {
        todo!()
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
        let Some(k) = Key::new(&[
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ]) else {
            return;
        };
        assert_eq!(
            hex(&k.encryption_round_keys()[10]),
            "d014f9a8c9ee2589e13f0cc8b6630ca6"
        );
        let k = Key::new(&[
            0x8e, 0x73, 0xb0, 0xf7, 0xda, 0x0e, 0x64, 0x52, 0xc8, 0x10, 0xf3, 0x2b, 0x80, 0x90,
            0x79, 0xe5, 0x62, 0xf8, 0xea, 0xd2, 0x52, 0x2c, 0x6b, 0x7b,
        ])
        .unwrap();
        assert_eq!(
            hex(&k.encryption_round_keys()[12]),
            "e98ba06f448c773c8ecc720401002202"
        );
        let k = Key::new(&[
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
}
