//! The portable `soft` AES-GCM: constant-time GHASH with masked integer
//! multiplications ("ctmul64", as in BearSSL's `ghash_ctmul64.c`), over the
//! fixsliced `soft` AES CTR kernel.
//!
//! No table indexed by secret data and no branch on secret data: a carry-less
//! 64x64 multiplication is done with sixteen ordinary multiplications of
//! operands masked to every fourth bit, so that the carries of each integer
//! product land in bits that are masked away afterwards.
//!
//! Representation: a GHASH block is read as a big-endian 128-bit integer, so
//! the coefficient of `x^0` is bit 127 and that of `x^127` is bit 0 ("bit
//! reflected"). The carry-less product of two reflected values is the
//! reflected 255-bit product shifted right by one; one left shift restores
//! it, then the 256-bit product is reduced modulo `x^128 + x^7 + x^2 + x + 1`
//! in two 64-bit folds.

use crate::aes::{AesKernels, Block, CounterWidth, soft};
use crate::inout::InOut;
use crate::secret::SecretBox;
use zeroize::Zeroize;

/// The low 64 bits of the carry-less product of `x` and `y`.
///
/// Each operand is split into four masks of every fourth bit. In the integer
/// product of two such masks, at most 16 pairs of bits meet at one position
/// below 64 only at position 60 and above (where the carry leaves the word),
/// so the count at every kept position is at most 15 and its carries stay
/// in the three bits above, which the final masks remove.
#[inline]
fn bmul64(x: u64, y: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    const M1: u64 = 0x2222_2222_2222_2222;
    const M2: u64 = 0x4444_4444_4444_4444;
    const M3: u64 = 0x8888_8888_8888_8888;
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let m = u64::wrapping_mul;
    let z0 = m(x0, y0) ^ m(x1, y3) ^ m(x2, y2) ^ m(x3, y1);
    let z1 = m(x0, y1) ^ m(x1, y0) ^ m(x2, y3) ^ m(x3, y2);
    let z2 = m(x0, y2) ^ m(x1, y1) ^ m(x2, y0) ^ m(x3, y3);
    let z3 = m(x0, y3) ^ m(x1, y2) ^ m(x2, y1) ^ m(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// The full 128-bit carry-less product of `x` and `y`, as (high, low): the
/// high half is the low half of the product of the bit-reversed operands,
/// reversed and shifted.
#[inline]
fn clmul64(x: u64, y: u64) -> (u64, u64) {
    let lo = bmul64(x, y);
    let hi = bmul64(x.reverse_bits(), y.reverse_bits()).reverse_bits() >> 1;
    (hi, lo)
}

/// `a * b` in GF(2^128), both reflected (see the module docs). Always
/// inlined: called, it spilled `H` where the stack-residue test found it
/// after a seal.
#[inline(always)]
fn gf_mul(a: u128, b: u128) -> u128 {
    let (a1, a0) = ((a >> 64) as u64, a as u64);
    let (b1, b0) = ((b >> 64) as u64, b as u64);
    // Karatsuba: three 64x64 products.
    let (lo_h, lo_l) = clmul64(a0, b0);
    let (hi_h, hi_l) = clmul64(a1, b1);
    let (mid_h, mid_l) = clmul64(a0 ^ a1, b0 ^ b1);
    let (mid_h, mid_l) = (mid_h ^ lo_h ^ hi_h, mid_l ^ lo_l ^ hi_l);
    // The 256-bit product p3:p2:p1:p0 (p0 the low word).
    let (p0, p1, p2, p3) = (lo_l, lo_h ^ mid_l, hi_l ^ mid_h, hi_h);
    // Reflected, the product is one bit too far right: shift left by one.
    let (p3, p2, p1, p0) = (
        (p3 << 1) | (p2 >> 63),
        (p2 << 1) | (p1 >> 63),
        (p1 << 1) | (p0 >> 63),
        p0 << 1,
    );
    // Fold the low word (the coefficients of x^192..x^255): x^128 = x^7 +
    // x^2 + x + 1, i.e. add d << 128, d << 127, d << 126 and d << 121.
    let d = p0;
    let p1 = p1 ^ (d << 63) ^ (d << 62) ^ (d << 57);
    let p2 = p2 ^ d ^ (d >> 1) ^ (d >> 2) ^ (d >> 7);
    // Then the next word (x^128..x^191), 64 bits higher.
    let d = p1;
    let p2 = p2 ^ (d << 63) ^ (d << 62) ^ (d << 57);
    let p3 = p3 ^ d ^ (d >> 1) ^ (d >> 2) ^ (d >> 7);
    (u128::from(p3) << 64) | u128::from(p2)
}

/// The `soft` AES-GCM key: the fixsliced AES key and `H = E(K, 0^128)`.
/// It lives in a [`SecretBox`] (made by [`Key::boxed`]), which wipes it on
/// drop.
pub(crate) struct Key {
    aes: soft::Key,
    h: u128,
}

impl Key {
    /// Number of AES rounds (10, 12 or 14).
    pub(super) fn rounds(&self) -> usize {
        crate::aes::AesKernels::rounds(&self.aes)
    }

    /// Expands `key` (16, 24 or 32 bytes, checked by the caller) in a
    /// zeroed heap home, in place.
    #[inline(never)]
    pub(crate) fn boxed(key: &[u8]) -> SecretBox<Key> {
        let mut k = SecretBox::<Key>::new();
        k.aes.rekey(key);
        let mut h = [0u8; 16];
        k.aes.encrypt_block(&mut h);
        k.h = u128::from_be_bytes(h);
        h.zeroize();
        k
    }

    pub(crate) fn encrypt_counter(&self, c: u128) -> Block {
        let mut block = c.to_be_bytes();
        self.aes.encrypt_block(&mut block);
        block
    }

    /// Absorbs the block whose big-endian integer is `x`.
    pub(crate) fn absorb(&self, acc: &mut Block, x: u128) {
        *acc = gf_mul(u128::from_be_bytes(*acc) ^ x, self.h).to_be_bytes();
    }

    /// Absorbs `data`, the last block zero-padded.
    pub(crate) fn ghash(&self, acc: &mut Block, data: &[u8]) {
        let mut y = u128::from_be_bytes(*acc);
        let mut chunks = data.chunks_exact(16);
        for c in &mut chunks {
            let c: &Block = c.try_into().expect("16-byte chunk");
            y = gf_mul(y ^ u128::from_be_bytes(*c), self.h);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            y = gf_mul(y ^ u128::from_be_bytes(last), self.h);
            last.zeroize();
        }
        *acc = y.to_be_bytes();
    }

    /// CTR (`inc32`) from `counter` over `buf`, in place.
    fn ctr(&self, counter: u128, buf: &mut [u8]) {
        let mut ctr = counter.to_be_bytes();
        let full = buf.len() / 16 * 16;
        let (blocks, rest) = buf.split_at_mut(full);
        let kernels: &dyn AesKernels = &self.aes;
        kernels.ctr(&mut ctr, CounterWidth::Low32, InOut::InPlace(blocks));
        if !rest.is_empty() {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            kernels.ctr(&mut ctr, CounterWidth::Low32, InOut::InPlace(&mut last));
            rest.copy_from_slice(&last[..rest.len()]);
            last.zeroize();
        }
    }

    pub(crate) fn encrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        self.ctr(counter, buf);
        self.ghash(acc, buf);
    }

    pub(crate) fn decrypt(&self, counter: u128, acc: &mut Block, buf: &mut [u8]) {
        self.ghash(acc, buf);
        self.ctr(counter, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::StdRng};

    /// Bit-by-bit GF(2^128) multiplication straight from SP 800-38D,
    /// Algorithm 1, on reflected integers (`R = 0xe1 || 0^120`).
    fn gf_mul_spec(x: u128, y: u128) -> u128 {
        let mut z = 0u128;
        let mut v = y;
        for i in 0..128 {
            if (x >> (127 - i)) & 1 == 1 {
                z ^= v;
            }
            v = if v & 1 == 1 {
                (v >> 1) ^ (0xe1 << 120)
            } else {
                v >> 1
            };
        }
        z
    }

    #[test]
    fn clmul64_matches_shift_and_add() {
        let mut rng = StdRng::seed_from_u64(1);
        for i in 0..20000 {
            let (x, y): (u64, u64) = if i < 4 {
                [(u64::MAX, u64::MAX), (1, 1), (1 << 63, 1 << 63), (0, 5)][i]
            } else {
                (rng.random(), rng.random())
            };
            let mut want = 0u128;
            for b in 0..64 {
                if (y >> b) & 1 == 1 {
                    want ^= u128::from(x) << b;
                }
            }
            let (hi, lo) = clmul64(x, y);
            assert_eq!((u128::from(hi) << 64) | u128::from(lo), want, "{x:x} {y:x}");
        }
    }

    #[test]
    fn gf_mul_matches_the_spec_algorithm() {
        let mut rng = StdRng::seed_from_u64(2);
        for i in 0..5000 {
            let (a, b): (u128, u128) = if i < 3 {
                [(u128::MAX, u128::MAX), (1, 1), (1 << 127, 3)][i]
            } else {
                (rng.random(), rng.random())
            };
            assert_eq!(gf_mul(a, b), gf_mul_spec(a, b), "{a:x} {b:x}");
        }
    }
}
