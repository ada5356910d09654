//! The linear layers of the fixsliced `soft` AES on the eight bit planes:
//! the bitslice transposition in and out of the planes, AddRoundKey, the
//! conjugated MixColumns / InvMixColumns of each representation, and the
//! final ShiftRows. Not the S-box circuits (`sbox.rs`), not the key
//! schedule or the mode kernels (`soft.rs`).

use super::{Batch, State};
use crate::aes::BLOCK_SIZE;
use zeroize::Zeroize;

/// Exchanges the bits of `a` at positions `p + shift` with those of `b` at
/// positions `p`, for every `p` in `mask`: the transposition of one bit of
/// the word index (`a` has it clear, `b` set) with bit `log2(shift)` of the
/// bit position.
#[inline(always)]
pub(super) fn swap_move(state: &mut State, a: usize, b: usize, shift: u32, mask: u64) {
    let t = ((state[a] >> shift) ^ state[b]) & mask;
    state[b] ^= t;
    state[a] ^= t << shift;
}

/// Applies [`swap_move`] to every pair of words whose indices differ in
/// bit `WORD_BIT` only: transposes that word-index bit with bit
/// `log2(SHIFT)` of the bit position.
#[inline(always)]
pub(super) fn transpose_index_bits<const WORD_BIT: usize, const SHIFT: u32>(
    state: &mut State,
    mask: u64,
) {
    const PAIRS: [[(usize, usize); 4]; 3] = [
        [(0, 1), (2, 3), (4, 5), (6, 7)],
        [(0, 2), (1, 3), (4, 6), (5, 7)],
        [(0, 4), (1, 5), (2, 6), (3, 7)],
    ];
    for (a, b) in PAIRS[WORD_BIT] {
        swap_move(state, a, b, SHIFT, mask);
    }
}

/// The six index-bit transpositions between the loaded and the bitsliced
/// layout, in the order [`bitslice`] applies them; each is an involution,
/// and [`unbitslice`] applies them in reverse.
///
/// A loaded word `w[4 h + b] = bytes 8h..8h+8 of block b` (little endian)
/// has index bits `(word: h b1 b0 | bit: c0 r1 r0 j2 j1 j0)` for column
/// `c = 2h + c0`, row `r`, bit `j`; the target is
/// `(word: j2 j1 j0 | bit: r1 r0 h c0 b1 b0)`. Swapping word bit 0 with bit
/// position bit 0 and word bit 1 with position bit 1 puts `j0`, `j1` in the
/// word index and `b` in the position; the 5-cycle
/// `h -> P3, r0 -> P4, r1 -> P5, c0 -> P2, j2 -> word bit 2` is four more
/// transpositions through word bit 2. (Written out so that every shift is
/// a constant wherever this is inlined.)
#[inline(always)]
pub(super) fn bitslice_steps(state: &mut State, reverse: bool) {
    let steps: [fn(&mut State); 6] = [
        |s| transpose_index_bits::<0, 1>(s, 0x5555_5555_5555_5555),
        |s| transpose_index_bits::<1, 2>(s, 0x3333_3333_3333_3333),
        |s| transpose_index_bits::<2, 8>(s, 0x00ff_00ff_00ff_00ff),
        |s| transpose_index_bits::<2, 16>(s, 0x0000_ffff_0000_ffff),
        |s| transpose_index_bits::<2, 32>(s, 0x0000_0000_ffff_ffff),
        |s| transpose_index_bits::<2, 4>(s, 0x0f0f_0f0f_0f0f_0f0f),
    ];
    if reverse {
        steps.iter().rev().for_each(|step| step(state));
    } else {
        steps.iter().for_each(|step| step(state));
    }
}

/// Four blocks, bytes to bit planes (see the module docs for the layout).
#[inline(always)]
pub(super) fn bitslice(batch: &Batch) -> State {
    let mut state: State = core::array::from_fn(|i| {
        let (half, block) = (i >> 2, i & 3);
        let start = BLOCK_SIZE * block + 8 * half;
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&batch[start..start + 8]);
        u64::from_le_bytes(bytes)
    });
    bitslice_steps(&mut state, false);
    state
}

/// Bit planes back to four blocks of bytes: the inverse of [`bitslice`].
#[inline(always)]
pub(super) fn unbitslice(state: &State, batch: &mut Batch) {
    let mut words = *state;
    bitslice_steps(&mut words, true);
    for (i, word) in words.iter().enumerate() {
        let (half, block) = (i >> 2, i & 3);
        let start = BLOCK_SIZE * block + 8 * half;
        batch[start..start + 8].copy_from_slice(&word.to_le_bytes());
    }
    words.zeroize();
}

/// XORs a bitsliced round key into the state.
#[inline(always)]
pub(super) fn add_round_key(state: &mut State, key: &State) {
    for (s, k) in state.iter_mut().zip(key) {
        *s ^= k;
    }
}

/// Per 16-bit row lane, the bit positions of columns `0..4 - n`: the bytes
/// that stay inside the lane when columns move `n` to the left.
pub(super) const fn columns_below(n: u32) -> u64 {
    (0xffff >> (4 * n)) * 0x0001_0001_0001_0001
}

/// Plane `x` with each byte replaced by the one `ROWS` rows below and
/// `COLS` columns to the right (cyclically): result `(r, c)` = `x (r + ROWS,
/// c + COLS)`, all four blocks alike. `ROWS` is 1 or 2, `COLS` is 0..4.
/// The row move is a rotation by `16 * ROWS`; the column move is a rotation
/// by `4 * COLS` for the bytes that stay in their lane and by
/// `4 * COLS - 16` for those that wrap around it, merged with a mask.
#[inline(always)]
pub(super) fn neighbour<const ROWS: u32, const COLS: u32>(x: u64) -> u64 {
    if COLS == 0 {
        x.rotate_right(16 * ROWS)
    } else {
        let stay = columns_below(COLS);
        let direct = x.rotate_right(16 * ROWS + 4 * COLS);
        let wrapped = x.rotate_right(16 * ROWS + 4 * COLS - 16);
        (direct & stay) | (wrapped & !stay)
    }
}

/// Multiplication by `x` in GF(2^8) of every byte (planes are bits):
/// shift up one plane, and reduce by `x^8 = x^4 + x^3 + x + 1`.
#[inline(always)]
pub(super) fn xtime(t: &State) -> State {
    [
        t[7],
        t[0] ^ t[7],
        t[1],
        t[2] ^ t[7],
        t[3] ^ t[7],
        t[4],
        t[5],
        t[6],
    ]
}

/// MixColumns in a fixsliced representation `m`, with `C1 = m` and
/// `C2 = 2 m mod 4`.
///
/// In representation `m` the byte that real MixColumns combines with byte
/// `(r, c)` as row `r + k` sits at `(r + k, c + k m)`. With `a` the state,
/// `b = N1(a)` its row-below neighbour (`neighbour::<1, C1>`) and `N2` the
/// two-rows-below neighbour, each output byte is
/// `2a + 3b + N2(a) + N2(b) = 2(a + b) + b + N2(a + b)`.
#[inline(always)]
pub(super) fn mix_columns<const C1: u32, const C2: u32>(state: &mut State) {
    let below: State = core::array::from_fn(|j| neighbour::<1, C1>(state[j]));
    let sum: State = core::array::from_fn(|j| state[j] ^ below[j]);
    let doubled = xtime(&sum);
    for j in 0..8 {
        state[j] = doubled[j] ^ below[j] ^ neighbour::<2, C2>(sum[j]);
    }
}

/// InvMixColumns in a fixsliced representation (parameters as for
/// [`mix_columns`]), from the factorisation
/// `InvMixColumns = MixColumns ∘ circ(05, 00, 04, 00)`: first every byte
/// becomes `a + 4 (a + N2(a))`, then MixColumns.
#[inline(always)]
pub(super) fn inv_mix_columns<const C1: u32, const C2: u32>(state: &mut State) {
    let pair: State = core::array::from_fn(|j| state[j] ^ neighbour::<2, C2>(state[j]));
    let quadrupled = xtime(&xtime(&pair));
    for j in 0..8 {
        state[j] ^= quadrupled[j];
    }
    mix_columns::<C1, C2>(state);
}

/// ShiftRows applied twice (its own inverse): rows 1 and 3 move two
/// columns, i.e. swap the two bytes of their 16-bit lanes.
#[inline(always)]
pub(super) fn shift_rows_twice(state: &mut State) {
    const ODD_ROWS: u64 = 0xffff_0000_ffff_0000;
    for x in state.iter_mut() {
        let swapped = ((*x >> 8) & 0x00ff_00ff_00ff_00ff) | ((*x << 8) & 0xff00_ff00_ff00_ff00);
        *x = (*x & !ODD_ROWS) | (swapped & ODD_ROWS);
    }
}
