//! PKCS#7 padding (RFC 5652 6.3). Unpadding is constant-time in the padding
//! bytes, so it does not become a padding oracle by itself.

use crate::ct;
use crate::error::{Error, Result};

/// Appends PKCS#7 padding: 1..=`block_size` bytes, each equal to the count.
/// `block_size` must be 1..=255 (16 for AES), else [`Error::InvalidBlockSize`].
pub fn pkcs7_pad(buf: &mut Vec<u8>, block_size: usize) -> Result<()> {
    if !(1..=255).contains(&block_size) {
        return Err(Error::InvalidBlockSize { got: block_size });
    }
    let n = block_size - buf.len() % block_size;
    buf.resize(buf.len() + n, n as u8);
    Ok(())
}

/// Strips PKCS#7 padding, returning the message. The length must be a
/// non-zero multiple of `block_size`; the last byte `n` must be 1..=`block_size`
/// and the last `n` bytes all equal `n`, or the result is [`Error::BadPadding`].
pub fn pkcs7_unpad(buf: &[u8], block_size: usize) -> Result<&[u8]> {
    if buf.is_empty()
        || block_size == 0
        || block_size > 255
        || !buf.len().is_multiple_of(block_size)
    {
        return Err(Error::BadPadding);
    }
    let last = &buf[buf.len() - block_size..];
    let n = last[block_size - 1];
    // good = n != 0 && n <= block_size, and every byte in the padding equals n;
    // every byte of the last block is looked at whatever n is.
    let mut good = !ct::mask_eq_u8(n, 0) & !ct::mask_lt_u8(block_size as u8, n);
    for (i, &byte) in last.iter().enumerate() {
        let distance_from_end = (block_size - i) as u8; // 1..=block_size
        let in_padding = !ct::mask_lt_u8(n, distance_from_end); // distance <= n
        good &= !in_padding | ct::mask_eq_u8(byte, n);
    }
    padding_verdict(buf, good, n)
}

/// Where the padding check's result becomes public: the verdict, and the
/// message length it gives. Out of line so that the constant-time harness
/// (`tests/constant_time.rs`) allows the branches here and nothing in the
/// check above it.
#[inline(never)]
fn padding_verdict(buf: &[u8], good: u8, n: u8) -> Result<&[u8]> {
    if core::hint::black_box(good) == 0xff {
        Ok(&buf[..buf.len() - usize::from(n)])
    } else {
        Err(Error::BadPadding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length() {
        for len in 0..64 {
            let mut buf: Vec<u8> = (0..len as u8).collect();
            pkcs7_pad(&mut buf, 16).unwrap();
            assert_eq!(buf.len(), (len / 16 + 1) * 16);
            assert_eq!(buf.len() % 16, 0);
            assert!(buf.len() > len);
            assert_eq!(
                pkcs7_unpad(&buf, 16).unwrap(),
                &(0..len as u8).collect::<Vec<_>>()[..]
            );
        }
    }

    #[test]
    fn rejects_bad_padding() {
        let block = |last: &[u8]| {
            let mut b = vec![0xaa; 16 - last.len()];
            b.extend_from_slice(last);
            b
        };
        for bad in [
            block(&[0]),
            block(&[17]),
            block(&[0xff]),
            block(&[1, 3, 3]),
            block(&[4, 3, 4, 4]),
            block(&[16, 16, 16]),
            vec![],
            vec![1; 15],
        ] {
            assert_eq!(pkcs7_unpad(&bad, 16), Err(Error::BadPadding), "{bad:?}");
        }
        assert_eq!(pkcs7_unpad(&[16; 16], 16).unwrap(), &[] as &[u8]);
        for bad in [0, 256, 1000] {
            assert_eq!(
                pkcs7_pad(&mut vec![], bad),
                Err(Error::InvalidBlockSize { got: bad })
            );
            assert_eq!(pkcs7_unpad(&[1; 16], bad), Err(Error::BadPadding));
        }
        assert_eq!(pkcs7_unpad(&block(&[3, 3, 3]), 16).unwrap().len(), 13);
    }
}
