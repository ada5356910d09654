//! Partial blocks: the little-endian words of a short byte string,
//! zero-padded, read with a few overlapping loads where the bytes lie.
//! The alternative, a copy into a zeroed 16-byte buffer and a load from
//! it, makes the load wait for the copy's narrower stores (a failed
//! store-to-load forward, and a `memcpy` call): about 60 cycles of a
//! 256-byte AES-GCM message with 13 bytes of associated data. For public
//! bytes only (associated data, ciphertext): the loads depend on the
//! length.

/// The little-endian value of the first 8 bytes of `b`.
#[inline(always)]
pub(crate) fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[..8]);
    u64::from_le_bytes(w)
}

/// The little-endian value of `b` (1 to 15 public bytes) as two words,
/// zero-padded: overlapping loads of the first and last 8 (or 4) bytes,
/// the overlap shifted out.
#[inline(always)]
pub(crate) fn le_partial(b: &[u8]) -> (u64, u64) {
    let n = b.len();
    debug_assert!(n > 0 && n < 16);
    if n >= 8 {
        // Bytes 8..n are the top n - 8 bytes of the last eight.
        let hi = le64(&b[n - 8..])
            .checked_shr(8 * (16 - n) as u32)
            .unwrap_or(0);
        (le64(b), hi)
    } else {
        (le_upto8(b), 0)
    }
}

/// The little-endian value of `b` (1 to 7 bytes).
#[inline(always)]
fn le_upto8(b: &[u8]) -> u64 {
    let n = b.len();
    let le32 = |b: &[u8]| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if n >= 4 {
        // Bytes 4..n are the top n - 4 bytes of the last four.
        le32(b) | (le32(&b[n - 4..]) >> (8 * (8 - n))) << 32
    } else {
        b.iter().rev().fold(0, |v, &x| (v << 8) | u64::from(x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_blocks_read_as_padded_copies() {
        let data: Vec<u8> = (1..=16u32).map(|i| (i * 17) as u8).collect();
        for n in 1..16 {
            let mut padded = [0u8; 16];
            padded[..n].copy_from_slice(&data[..n]);
            let want = (le64(&padded[..8]), le64(&padded[8..]));
            assert_eq!(le_partial(&data[..n]), want, "{n} bytes");
        }
    }
}
