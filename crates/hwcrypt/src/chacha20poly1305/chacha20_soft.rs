//! Portable ChaCha20 (RFC 8439 §2.3-2.4) and HChaCha20: 32-bit additions,
//! XORs and rotations only, so constant time on every CPU.

use crate::inout::InOut;
use zeroize::Zeroize;

/// "expand 32-byte k".
pub(crate) const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

#[inline(always)]
fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
}

/// The 20 rounds (10 double rounds) without the final addition.
#[inline(always)]
fn rounds(x: &mut [u32; 16]) {
    for _ in 0..10 {
        quarter_round(x, 0, 4, 8, 12);
        quarter_round(x, 1, 5, 9, 13);
        quarter_round(x, 2, 6, 10, 14);
        quarter_round(x, 3, 7, 11, 15);
        quarter_round(x, 0, 5, 10, 15);
        quarter_round(x, 1, 6, 11, 12);
        quarter_round(x, 2, 7, 8, 13);
        quarter_round(x, 3, 4, 9, 14);
    }
}

/// The initial state: constants, key, counter, nonce.
pub(crate) fn state(key: &[u32; 8], counter: u32, nonce: &[u32; 3]) -> [u32; 16] {
    let mut s = [0u32; 16];
    set_state(&mut s, key, counter, nonce);
    s
}

/// [`state`] written into `s` in place (a heap home).
#[inline]
pub(crate) fn set_state(s: &mut [u32; 16], key: &[u32; 8], counter: u32, nonce: &[u32; 3]) {
    s[..4].copy_from_slice(&SIGMA);
    s[4..12].copy_from_slice(key);
    s[12] = counter;
    s[13..].copy_from_slice(nonce);
}

/// The ChaCha20 block function: 64 bytes of keystream for `state`.
pub(crate) fn block(state: &[u32; 16]) -> [u8; 64] {
    let mut x = *state;
    rounds(&mut x);
    let mut out = [0u8; 64];
    for ((o, xi), si) in out.chunks_exact_mut(4).zip(&x).zip(state) {
        o.copy_from_slice(&xi.wrapping_add(*si).to_le_bytes());
    }
    x.zeroize();
    out
}

/// HChaCha20: the 20 rounds over (constants, key, 16-byte input) without the
/// final addition; words 0..4 and 12..16 are the 32-byte subkey.
/// Written into `out` (a buffer the caller owns and wipes), not returned:
/// a returned subkey is moved, and a move leaves an unwiped copy.
pub(crate) fn hchacha20(key: &[u32; 8], input: &[u32; 4], out: &mut [u32; 8]) {
    let mut x = [0u32; 16];
    x[..4].copy_from_slice(&SIGMA);
    x[4..12].copy_from_slice(key);
    x[12..].copy_from_slice(input);
    rounds(&mut x);
    out[..4].copy_from_slice(&x[..4]);
    out[4..].copy_from_slice(&x[12..]);
    x.zeroize();
}

/// XORs the keystream starting at block `state[12]` into `io`; the counter
/// wraps modulo 2^32 (callers keep within range).
pub(crate) fn xor_keystream(state: &[u32; 16], mut io: InOut<'_>) {
    let mut s = *state;
    let mut offset = 0;
    let len = io.len();
    let mut buf = [0u8; 64];
    while offset < len {
        let n = (len - offset).min(64);
        let mut ks = block(&s);
        io.read(offset, &mut buf[..n]);
        for (b, k) in buf[..n].iter_mut().zip(&ks) {
            *b ^= k;
        }
        io.write(offset, &buf[..n]);
        ks.zeroize();
        s[12] = s[12].wrapping_add(1);
        offset += n;
    }
    buf.zeroize();
    s.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8439 §2.1.1.
    #[test]
    fn quarter_round_vector() {
        let mut x = [0u32; 16];
        x[..4].copy_from_slice(&[0x11111111, 0x01020304, 0x9b8d6f43, 0x01234567]);
        quarter_round(&mut x, 0, 1, 2, 3);
        assert_eq!(x[..4], [0xea2a92f4, 0xcb1cf8ce, 0x4581472e, 0x5881c4bb]);
    }
}
