//! Constant-time helpers: no branches or memory accesses that depend on the
//! values compared.

use core::hint::black_box;

/// `true` iff `a == b`, in time that depends only on the lengths.
pub fn eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    black_box(diff) == 0
}

/// 0xff if `a == b`, else 0x00, without branching.
pub(crate) fn mask_eq_u8(a: u8, b: u8) -> u8 {
    let x = u32::from(black_box(a ^ b));
    // (x - 1) has its top bit set only when x == 0.
    (((x.wrapping_sub(1)) >> 8) & 0xff) as u8
}

/// 0xff if `a < b`, else 0x00, without branching (a, b < 256).
pub(crate) fn mask_lt_u8(a: u8, b: u8) -> u8 {
    let d = u32::from(black_box(a)).wrapping_sub(u32::from(b));
    ((d >> 8) & 0xff) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mask_eq_u8(a, b), if a == b { 0xff } else { 0 });
                assert_eq!(mask_lt_u8(a, b), if a < b { 0xff } else { 0 });
            }
        }
        assert!(eq(b"abc", b"abc") && !eq(b"abc", b"abd") && !eq(b"ab", b"abc"));
    }
}
