//! Block cipher modes, written once over the kernels every AES backend provides.
//!
//! * [`Ecb`] and [`Cbc`] work on whole blocks; [`Cbc`] keeps its chaining
//!   value across calls. Use [`padding`] for messages of any length.
//! * [`Ctr`], [`Cfb128`], [`Cfb8`] and [`Ofb`] are streams: calls of any
//!   length, even one byte, continue exactly where the previous call stopped.
//!   [`Ctr`] can also seek to any byte offset.
//!
//! A mode owns its key or borrows it (`Ctr::new(&aes, iv)`, or any
//! `K: Borrow<Aes>` such as `Arc<Aes>`), so one expanded key can serve many
//! messages with fresh IVs without being copied or re-expanded.
//!
//! * [`Xts`] encrypts data units (disk sectors) of 16 bytes or more under a
//!   tweak or sector number, with ciphertext stealing, one unit or a buffer
//!   of consecutive units per call.
//!
//! The stream modes ([`Ctr`], [`Ofb`], [`Cfb128`], [`Cfb8`]) are not
//! `Clone`: a copy would produce the same keystream again (two messages
//! under one keystream reveal their XOR). Make a new object with a fresh
//! IV instead:
//!
//! ```compile_fail
//! use hwcrypt::{aes::Aes, modes::Ctr};
//! let ctr = Ctr::new(Aes::new(&[0u8; 16])?, &[0u8; 16])?;
//! let copy = ctr.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! ```compile_fail
//! use hwcrypt::{aes::Aes, modes::Ofb};
//! let ofb = Ofb::new(Aes::new(&[0u8; 16])?, &[0u8; 16])?;
//! let copy = ofb.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! ```compile_fail
//! use hwcrypt::{aes::Aes, modes::Cfb128};
//! let cfb = Cfb128::new(Aes::new(&[0u8; 16])?, &[0u8; 16])?;
//! let copy = cfb.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! ```compile_fail
//! use hwcrypt::{aes::Aes, modes::Cfb8};
//! let cfb = Cfb8::new(Aes::new(&[0u8; 16])?, &[0u8; 16])?;
//! let copy = cfb.clone(); // does not compile
//! # Ok::<(), hwcrypt::Error>(())
//! ```
//!
//! Every operation has an in-place form (`encrypt`, `apply_keystream`, ...)
//! and a separate-buffers form (`..._to`) that reads one slice and writes
//! another of the same length.

mod cbc;
mod cfb;
mod ctr;
mod ecb;
mod ofb;
pub mod padding;
mod xts;

pub use cbc::{Cbc, CbcEncryptBatch};
pub use cfb::{Cfb8, Cfb128};
pub use ctr::Ctr;
pub use ecb::Ecb;
pub use ofb::Ofb;
pub use xts::{MAX_DATA_UNIT, Xts, sector_tweak};

use crate::aes::{BLOCK_SIZE, Block};
use crate::error::{Error, Result};
use crate::inout::InOut;

/// Checks that `iv` is one block long.
fn block_iv(iv: &[u8]) -> Result<Block> {
    iv.try_into().map_err(|_| Error::InvalidIvLength {
        expected: "16",
        got: iv.len(),
    })
}

/// Pairs separate buffers, or reports their length mismatch.
pub(crate) fn separate<'a>(input: &'a [u8], output: &'a mut [u8]) -> Result<InOut<'a>> {
    let output_len = output.len();
    InOut::separate(input, output).ok_or(Error::LengthMismatch {
        input: input.len(),
        output: output_len,
    })
}

/// Checks that a block mode's data is a whole number of blocks.
fn whole_blocks(io: InOut<'_>) -> Result<InOut<'_>> {
    if io.len().is_multiple_of(BLOCK_SIZE) {
        Ok(io)
    } else {
        Err(Error::NotBlockAligned {
            len: io.len(),
            block_size: BLOCK_SIZE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::Aes;
    use std::sync::Arc;

    /// Owned, borrowed and shared keys drive the same kernels.
    #[test]
    fn owned_borrowed_and_shared_keys_agree() {
        let aes = Aes::new(&[9; 32]).unwrap();
        let iv = [3; 16];
        let msg: Vec<u8> = (0..100u8).collect();
        let run = |f: &mut dyn FnMut(&mut [u8])| {
            let mut buf = msg.clone();
            f(&mut buf);
            buf
        };
        let owned = run(&mut |b| {
            Ctr::new(aes.clone(), &iv)
                .unwrap()
                .apply_keystream(b)
                .unwrap()
        });
        let borrowed = run(&mut |b| Ctr::new(&aes, &iv).unwrap().apply_keystream(b).unwrap());
        let shared = run(&mut |b| {
            Ctr::new(Arc::new(aes.clone()), &iv)
                .unwrap()
                .apply_keystream(b)
                .unwrap()
        });
        assert_eq!(owned, borrowed);
        assert_eq!(owned, shared);
        let mut cbc = Cbc::new(&aes, &iv).unwrap();
        let ct = cbc.encrypt_padded(&msg);
        assert_eq!(
            Cbc::new(Arc::new(aes.clone()), &iv)
                .unwrap()
                .decrypt_padded(&ct)
                .unwrap(),
            msg
        );
        let mut bad = ct.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(
            Cbc::new(&aes, &iv).unwrap().decrypt_padded(&bad),
            Err(Error::BadPadding)
        );
    }
}
