//! The one-shot AES-GCM of the VAES backends, written once: whole chunks on
//! the backend's stitched kernels, then its last-chunk kernel, which takes
//! `E(K, J0)` beside its counter blocks and hashes the chunk, the lengths
//! block and (when no whole chunk came before it) the associated data under
//! one reduction. A backend supplies the sizes and the kernels
//! ([`LastChunk`]); `vaes_avx2.rs` and `vaes_avx512.rs` hold them.

use super::inc32;
use crate::aes::Block;
use crate::inout::InOut;

/// What the last-chunk kernel hashes besides the ciphertext, and its counters.
/// The last-chunk kernels `$f::<R, N, DEC>` for `N` = 1..=8 registers,
/// `R` the round count `$rounds` (10, 12, else 14): an array the backend
/// indexes by the registers a remainder needs (its element type, a function
/// pointer, comes from the binding it initialises).
macro_rules! last_kernels {
    ($f:ident, $rounds:expr, $dec:ident) => {
        match $rounds {
            10 => last_kernels!(@regs $f, 10, $dec),
            12 => last_kernels!(@regs $f, 12, $dec),
            _ => last_kernels!(@regs $f, 14, $dec),
        }
    };
    (@regs $f:ident, $r:literal, $dec:ident) => {
        [
            $f::<$r, 1, $dec>,
            $f::<$r, 2, $dec>,
            $f::<$r, 3, $dec>,
            $f::<$r, 4, $dec>,
            $f::<$r, 5, $dec>,
            $f::<$r, 6, $dec>,
            $f::<$r, 7, $dec>,
            $f::<$r, 8, $dec>,
        ]
    };
}

pub(super) struct LastOps<'a> {
    /// `J0`: `E(K, J0)` is returned.
    pub(super) j0: u128,
    /// The first counter block of the chunk.
    pub(super) counter: u128,
    /// Associated data hashed before the ciphertext (at most
    /// [`LastChunk::AAD_MAX`] bytes; empty when `acc` holds its hash
    /// already).
    pub(super) aad: &'a [u8],
    /// The lengths block, hashed after the ciphertext (`None`: the caller
    /// absorbs it).
    pub(super) lengths: Option<u128>,
    /// Sealing only: the last whole chunk's ciphertext (`CHUNK` readable
    /// bytes), not absorbed yet: the kernel hashes it first, so that its
    /// GHASH runs beside the chunk's AES rounds instead of before them
    /// ([`LastChunk::seal_chunks_deferred`]).
    pub(super) pending: Option<*const u8>,
}

/// A VAES key with a last-chunk kernel.
pub(super) trait LastChunk {
    /// Bytes per whole chunk of the stitched kernels.
    const CHUNK: usize;
    /// Key powers the last-chunk kernel has: GHASH operands it takes.
    const OPERANDS: usize;
    /// The most associated data it hashes with the chunk.
    const AAD_MAX: usize;

    /// `E(K, c)` for the counter block whose big-endian integer is `c`.
    fn encrypt_counter(&self, c: u128) -> Block;
    /// Absorbs the block whose big-endian integer is `x`.
    fn absorb(&self, acc: &mut Block, x: u128);
    /// Absorbs `data`, zero-padded to whole blocks.
    fn ghash(&self, acc: &mut Block, data: &[u8]);
    /// CTR over whole chunks from `counter`, the ciphertext absorbed
    /// (`DEC`: the input is the ciphertext).
    fn chunks<const DEC: bool>(&self, counter: u128, acc: &mut Block, io: InOut<'_>);
    /// Seals whole chunks as `chunks::<false>` does, but leaves the last
    /// chunk's GHASH to the last-chunk kernel: returns its ciphertext (for
    /// [`LastOps::pending`]).
    fn seal_chunks_deferred(&self, counter: u128, acc: &mut Block, io: InOut<'_>) -> *const u8;
    /// The last-chunk kernel over `io` (`0 < len < CHUNK`); returns
    /// `E(K, J0)`. The operands (blocks of `ops.aad` and of `io`, and the
    /// lengths) are at most [`LastChunk::OPERANDS`].
    fn last<const DEC: bool>(&self, ops: &LastOps<'_>, acc: &mut Block, io: InOut<'_>) -> Block;
}

/// Seals (`DEC` false) or opens `io` under `J0` = `j0` after the associated
/// data `aad`; returns the full tag.
pub(super) fn crypt<K: LastChunk, const DEC: bool>(
    k: &K,
    j0: u128,
    aad: &[u8],
    io: InOut<'_>,
) -> Block {
    let len = io.len();
    let bulk = len / K::CHUNK * K::CHUNK;
    let t = len - bulk;
    let blocks = t.div_ceil(16);
    // The associated data goes into the kernel when there is no chunk
    // before it and the operands fit; else first, apart.
    let windowed = bulk == 0
        && t > 0
        && aad.len() <= K::AAD_MAX
        && aad.len().div_ceil(16) + blocks < K::OPERANDS;
    // Without a last chunk, `E(K, J0)` goes first, so that its latency
    // overlaps the chunks'.
    let early = (t == 0).then(|| k.encrypt_counter(j0));
    let mut acc = [0u8; 16];
    if !windowed {
        k.ghash(&mut acc, aad);
    }
    let (head, tail) = io.split_at(bulk);
    let counter = inc32(j0, 1);
    let mut pending = None;
    if !head.is_empty() {
        if !DEC && t > 0 {
            pending = Some(k.seal_chunks_deferred(counter, &mut acc, head));
        } else {
            k.chunks::<DEC>(counter, &mut acc, head);
        }
    }
    let lengths = (u128::from(aad.len() as u64 * 8) << 64) | u128::from(len as u64 * 8);
    // A chunk of `OPERANDS` blocks leaves no power for the lengths block:
    // it is absorbed on its own then.
    let alone = t == 0 || (!windowed && blocks == K::OPERANDS);
    let mut mask = match early {
        Some(mask) => mask,
        None => {
            let ops = LastOps {
                j0,
                counter: inc32(counter, (bulk / 16) as u32),
                aad: if windowed { aad } else { &[] },
                lengths: if alone { None } else { Some(lengths) },
                pending,
            };
            k.last::<DEC>(&ops, &mut acc, tail)
        }
    };
    if alone {
        k.absorb(&mut acc, lengths);
    }
    for (b, a) in mask.iter_mut().zip(&acc) {
        *b ^= a;
    }
    crate::secret::wipe_bytes(&mut acc);
    mask
}
