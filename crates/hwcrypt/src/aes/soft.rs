//! Portable, constant-time AES: the 64-bit *fixsliced* representation of
//! Adomnicai and Peyrin ("Fixslicing AES-like Ciphers", TCHES 2021/1).
//!
//! # Representation
//!
//! Four blocks are processed at once as a [`State`] of eight `u64` *bit
//! planes*. Plane `j` holds bit `j` (bit 0 = least significant) of all 64
//! bytes; byte `(row r, column c)` of block `b` (FIPS 197 byte index
//! `4 * c + r` of that block) sits at bit position
//!
//! ```text
//! 16 * r + 4 * c + b        (r, c, b in 0..4)
//! ```
//!
//! so each plane is four 16-bit *row lanes*, each lane four 4-bit *column
//! groups*, each group the four blocks. Consequences:
//!
//! * SubBytes is a Boolean circuit applied to the eight planes: every gate
//!   processes the same bit of all 64 bytes at once.
//! * Moving every byte one row up (row `r + 1` to row `r`) is one rotation of
//!   the whole word by 16; moving it `n` columns left inside its row is a
//!   rotation by `4 n` inside each 16-bit lane. MixColumns is built from
//!   these moves, so it is a handful of rotations, masks and XORs per plane.
//! * ShiftRows is never executed. The state is allowed to drift: after `k`
//!   rounds the planes hold `X = ShiftRows^-k(S)` for the true state `S`
//!   (the *fixsliced* representation number `k mod 4`). Round `i` then uses
//!   the conjugated `ShiftRows^-k ∘ MixColumns ∘ ShiftRows^k` (whose row
//!   neighbour is `k` columns over, see [`mix_columns`]) and round key `i`
//!   is stored already permuted into representation `i mod 4`. After 12
//!   rounds the drift is zero; after 10 or 14 it is two, undone by one
//!   explicit `ShiftRows^2` ([`shift_rows_twice`]) at the end of encryption
//!   and the start of decryption.
//!
//! # Constant time
//!
//! Every operation on key- or data-dependent values is a fixed sequence of
//! AND, XOR, NOT, shifts and rotations by constant amounts on full words:
//! there is no table lookup indexed by secret data and no branch or loop
//! bound that depends on it. That includes the key schedule, whose SubWord
//! runs through the same bitsliced S-box circuit ([`sub_word`]). The only
//! branches are on public values: the round number, the number of blocks,
//! the key length.
//!
//! # The S-box circuits
//!
//! The forward S-box is the 115-gate straight-line program of Boyar and
//! Peralta (32 AND, 83 XOR/XNOR); the inverse S-box is the depth-16
//! program of Boyar and Peralta ("A depth-16 circuit for the AES S-box",
//! 2011: 34 AND, 93 XOR/XNOR). Their XNOR gates amount to XORing the
//! constant `0x63` into the S-box output (forward) or input (inverse); both
//! circuits here leave the NOTs out, and the constant is folded into round
//! keys `1..=Nr` instead, which is sound because MixColumns and
//! InvMixColumns map the all-`0x63` state to itself.

use super::{AesKernels, BLOCK_SIZE, Block, CounterWidth};
use crate::inout::InOut;
use crate::secret::SecretBox;
use zeroize::Zeroize;

/// Eight bit planes holding four AES states; see the module docs.
type State = [u64; 8];

/// Blocks processed per fixsliced call.
const BATCH_BLOCKS: usize = 4;

/// Bytes processed per fixsliced call.
const BATCH_BYTES: usize = BATCH_BLOCKS * BLOCK_SIZE;

/// One batch of four blocks in their byte form.
type Batch = [u8; BATCH_BYTES];

/// Most round keys of any key size (AES-256: 14 rounds + 1).
const MAX_ROUND_KEYS: usize = 15;

/// The constant the S-box circuits leave out (see the module docs).
const SBOX_CONSTANT: u8 = 0x63;

/// An expanded AES key for the fixsliced backend. It lives in a
/// [`SecretBox`] (made by [`Key::boxed`]), which wipes it on drop.
pub(crate) struct Key {
    /// Round key `i` in fixsliced representation `i mod 4`, the same block
    /// key replicated into all four block slots. Keys `1..=rounds` also
    /// carry the S-box constant `0x63` in every byte. Entries past
    /// `rounds` are zero.
    round_keys: [State; MAX_ROUND_KEYS],
    /// 10, 12 or 14.
    rounds: usize,
}

impl Key {
    /// Expands a 16-, 24- or 32-byte key (FIPS 197 section 5.2) in a
    /// zeroed heap home ([`SecretBox`]: built in place, never moved).
    ///
    /// # Panics
    ///
    /// On any other key length (callers check it first).
    pub(crate) fn boxed(key: &[u8]) -> SecretBox<Key> {
        let mut k = SecretBox::<Key>::new();
        k.rekey(key);
        k
    }

    /// Expands `key` (16, 24 or 32 bytes) where the schedule is, over the
    /// old one (round keys a shorter key leaves unused are zeroed).
    ///
    /// # Panics
    ///
    /// On any other key length (callers check it first).
    pub(crate) fn rekey(&mut self, key: &[u8]) {
        let key_words = match key.len() {
            16 | 24 | 32 => key.len() / 4,
            len => panic!("AES key of {len} bytes"),
        };
        let rounds = key_words + 6;
        let total_words = 4 * (rounds + 1);

        // FIPS 197 KeyExpansion on big-endian 32-bit words (byte 0 of a
        // word is its most significant byte); branches depend only on the
        // public word index, SubWord is the bitsliced circuit.
        let mut words = [0u32; 4 * MAX_ROUND_KEYS];
        for (word, chunk) in words.iter_mut().zip(key.chunks_exact(4)) {
            *word = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        let mut rcon = 1u8;
        for i in key_words..total_words {
            let mut temp = words[i - 1];
            if i % key_words == 0 {
                temp = sub_word(temp.rotate_left(8)) ^ (u32::from(rcon) << 24);
                rcon = xtime_byte(rcon);
            } else if key_words > 6 && i % key_words == 4 {
                temp = sub_word(temp);
            }
            words[i] = words[i - key_words] ^ temp;
        }

        // Bitslice four round keys per call, one per block slot, then
        // broadcast each slot to all four, straight into the schedule.
        self.rounds = rounds;
        for unused in &mut self.round_keys[rounds + 1..] {
            *unused = [0; 8];
        }
        let mut batch = [0u8; BATCH_BYTES];
        for first in (0..=rounds).step_by(BATCH_BLOCKS) {
            let count = (rounds + 1 - first).min(BATCH_BLOCKS);
            for (slot, bytes) in batch.chunks_exact_mut(BLOCK_SIZE).enumerate().take(count) {
                let round = first + slot;
                fixslice_key_bytes(&words[4 * round..4 * round + 4], round, bytes);
            }
            let mut planes = bitslice(&batch);
            for (slot, round_key) in self.round_keys[first..first + count].iter_mut().enumerate() {
                *round_key = broadcast_block_slot(&planes, slot);
            }
            planes.zeroize();
        }
        batch.zeroize();
        words.zeroize();
    }

    /// Encrypts the four blocks of `batch` in place.
    fn encrypt_batch(&self, batch: &mut Batch) {
        let keys = &self.round_keys;
        let mut state = bitslice(batch);
        add_round_key(&mut state, &keys[0]);
        for (round, key) in keys.iter().enumerate().take(self.rounds).skip(1) {
            sub_bytes(&mut state);
            // Round `round` runs in representation `round mod 4`: its
            // MixColumns pairs row r with row r + 1, `round mod 4` columns
            // over, and row r + 2, `2 * round mod 4` columns over.
            match round % 4 {
                0 => mix_columns::<0, 0>(&mut state),
                1 => mix_columns::<1, 2>(&mut state),
                2 => mix_columns::<2, 0>(&mut state),
                _ => mix_columns::<3, 2>(&mut state),
            }
            add_round_key(&mut state, key);
        }
        sub_bytes(&mut state);
        add_round_key(&mut state, &keys[self.rounds]);
        if self.rounds % 4 == 2 {
            shift_rows_twice(&mut state);
        }
        unbitslice(&state, batch);
        state.zeroize();
    }

    /// Decrypts the four blocks of `batch` in place (the straightforward
    /// inverse cipher of FIPS 197 section 5.3, run in the same fixsliced
    /// representations as encryption so the same round keys serve).
    fn decrypt_batch(&self, batch: &mut Batch) {
        let keys = &self.round_keys;
        let mut state = bitslice(batch);
        if self.rounds % 4 == 2 {
            shift_rows_twice(&mut state);
        }
        add_round_key(&mut state, &keys[self.rounds]);
        for round in (1..self.rounds).rev() {
            inv_sub_bytes(&mut state);
            add_round_key(&mut state, &keys[round]);
            match round % 4 {
                0 => inv_mix_columns::<0, 0>(&mut state),
                1 => inv_mix_columns::<1, 2>(&mut state),
                2 => inv_mix_columns::<2, 0>(&mut state),
                _ => inv_mix_columns::<3, 2>(&mut state),
            }
        }
        inv_sub_bytes(&mut state);
        add_round_key(&mut state, &keys[0]);
        unbitslice(&state, batch);
        state.zeroize();
    }
}

impl AesKernels for Key {
    fn encrypt_block(&self, block: &mut Block) {
        let mut batch = [0u8; BATCH_BYTES];
        batch[..BLOCK_SIZE].copy_from_slice(block);
        self.encrypt_batch(&mut batch);
        block.copy_from_slice(&batch[..BLOCK_SIZE]);
        batch.zeroize();
    }

    fn decrypt_block(&self, block: &mut Block) {
        let mut batch = [0u8; BATCH_BYTES];
        batch[..BLOCK_SIZE].copy_from_slice(block);
        self.decrypt_batch(&mut batch);
        block.copy_from_slice(&batch[..BLOCK_SIZE]);
        batch.zeroize();
    }

    fn ecb_encrypt(&self, io: InOut<'_>) {
        let mut batch = [0u8; BATCH_BYTES];
        for_each_batch(io, |mut chunk| {
            let n = chunk.len();
            chunk.read(0, &mut batch[..n]);
            self.encrypt_batch(&mut batch);
            chunk.write(0, &batch[..n]);
        });
        batch.zeroize();
    }

    fn ecb_decrypt(&self, io: InOut<'_>) {
        let mut batch = [0u8; BATCH_BYTES];
        for_each_batch(io, |mut chunk| {
            let n = chunk.len();
            chunk.read(0, &mut batch[..n]);
            self.decrypt_batch(&mut batch);
            chunk.write(0, &batch[..n]);
        });
        batch.zeroize();
    }

    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>) {
        for_each_block(io, |mut chunk| {
            let mut block = [0u8; BLOCK_SIZE];
            chunk.read(0, &mut block);
            xor_in_place(chain, &block);
            self.encrypt_block(chain);
            chunk.write(0, chain);
            block.zeroize();
        });
    }

    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>) {
        let mut ciphertext = [0u8; BATCH_BYTES];
        let mut batch = [0u8; BATCH_BYTES];
        for_each_batch(io, |mut chunk| {
            let n = chunk.len();
            // Keep the ciphertext: in place, the chunk is overwritten below.
            chunk.read(0, &mut ciphertext[..n]);
            batch[..n].copy_from_slice(&ciphertext[..n]);
            self.decrypt_batch(&mut batch);
            xor_in_place(&mut batch[..BLOCK_SIZE], chain);
            xor_in_place(&mut batch[BLOCK_SIZE..n], &ciphertext[..n - BLOCK_SIZE]);
            chunk.write(0, &batch[..n]);
            chain.copy_from_slice(&ciphertext[n - BLOCK_SIZE..n]);
        });
        batch.zeroize();
    }

    fn cfb128_encrypt(&self, register: &mut Block, io: InOut<'_>) {
        for_each_block(io, |mut chunk| {
            let mut plaintext = [0u8; BLOCK_SIZE];
            chunk.read(0, &mut plaintext);
            // register = E(previous ciphertext), then the new ciphertext.
            self.encrypt_block(register);
            xor_in_place(register, &plaintext);
            chunk.write(0, register);
            plaintext.zeroize();
        });
    }

    fn cfb128_decrypt(&self, register: &mut Block, io: InOut<'_>) {
        let mut ciphertext = [0u8; BATCH_BYTES];
        let mut keystream = [0u8; BATCH_BYTES];
        for_each_batch(io, |mut chunk| {
            let n = chunk.len();
            chunk.read(0, &mut ciphertext[..n]);
            // Keystream block i encrypts ciphertext block i - 1 (the
            // register for i = 0): all four are known up front.
            keystream[..BLOCK_SIZE].copy_from_slice(register);
            keystream[BLOCK_SIZE..n].copy_from_slice(&ciphertext[..n - BLOCK_SIZE]);
            self.encrypt_batch(&mut keystream);
            chunk.xor_keystream(&keystream[..n]);
            register.copy_from_slice(&ciphertext[n - BLOCK_SIZE..n]);
        });
        keystream.zeroize();
    }

    fn ofb(&self, register: &mut Block, io: InOut<'_>) {
        for_each_block(io, |mut chunk| {
            self.encrypt_block(register);
            chunk.xor_keystream(register);
        });
    }

    fn ctr(&self, counter: &mut Block, width: CounterWidth, io: InOut<'_>) {
        let mut keystream = [0u8; BATCH_BYTES];
        for_each_batch(io, |mut chunk| {
            let n = chunk.len();
            // One counter block per block present, stepped with the
            // width's carry rule; see `for_each_batch` for short batches.
            for slot in keystream[..n].chunks_exact_mut(BLOCK_SIZE) {
                slot.copy_from_slice(counter);
                width.add(counter, 1);
            }
            self.encrypt_batch(&mut keystream);
            chunk.xor_keystream(&keystream[..n]);
        });
        keystream.zeroize();
    }
}

/// Calls `f` on consecutive pieces of `io` of [`BATCH_BYTES`] bytes, the
/// last one possibly shorter (always whole blocks, as `io` is). For a short
/// piece the callers still run a full four-block batch: the unused slots
/// hold stale bytes of the same call, whose results are never written out.
fn for_each_batch(mut io: InOut<'_>, mut f: impl FnMut(InOut<'_>)) {
    while !io.is_empty() {
        let n = io.len().min(BATCH_BYTES);
        let (chunk, rest) = io.split_at(n);
        f(chunk);
        io = rest;
    }
}

/// Calls `f` on each 16-byte block of `io` in order.
fn for_each_block(mut io: InOut<'_>, mut f: impl FnMut(InOut<'_>)) {
    while !io.is_empty() {
        let (chunk, rest) = io.split_at(BLOCK_SIZE);
        f(chunk);
        io = rest;
    }
}

/// `dst ^= src`, byte by byte (equal lengths).
fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Multiplication by `x` in GF(2^8) of a public byte (the round constants).
fn xtime_byte(b: u8) -> u8 {
    (b << 1) ^ (0x1b & 0u8.wrapping_sub(b >> 7))
}

/// FIPS 197 SubWord in constant time: the four bytes go through the
/// bitsliced S-box as four one-byte "blocks" (bit `j` of byte `b` to bit
/// `b` of plane `j`; the other plane bits stay zero). Which byte is which
/// does not matter, SubWord acts on each alone.
fn sub_word(word: u32) -> u32 {
    const LOW_BITS: u32 = 0x0101_0101;
    let mut planes: State = core::array::from_fn(|j| {
        let bits = (word >> j) & LOW_BITS;
        u64::from((bits | bits >> 7 | bits >> 14 | bits >> 21) & 0xf)
    });
    sub_bytes(&mut planes);
    let mut out = u32::from_ne_bytes([SBOX_CONSTANT; 4]);
    for (j, &plane) in planes.iter().enumerate() {
        let bits = plane as u32;
        out ^= ((bits | bits << 7 | bits << 14 | bits << 21) & LOW_BITS) << j;
    }
    planes.zeroize();
    out
}

/// Writes round key `round` (its four big-endian words, one per column) as
/// the 16 bytes that [`bitslice`] turns into its fixsliced form: moved into
/// representation `round mod 4` (stored byte `(r, c)` is real byte
/// `(r, c - round * r mod 4)`) and, for `round > 0`, XORed with the S-box
/// constant.
fn fixslice_key_bytes(words: &[u32], round: usize, bytes: &mut [u8]) {
    let drift = round % 4;
    let constant = if round > 0 { SBOX_CONSTANT } else { 0 };
    for column in 0..4 {
        for row in 0..4 {
            let from_column = (column + 4 - (drift * row) % 4) % 4;
            let byte = (words[from_column] >> (24 - 8 * row)) as u8;
            bytes[4 * column + row] = byte ^ constant;
        }
    }
}

/// The bits of block slot `slot` of every plane copied to all four slots
/// (a round key applies to the four blocks alike): in each 4-bit column
/// group, bit `slot` is isolated and smeared over the group.
fn broadcast_block_slot(planes: &State, slot: usize) -> State {
    core::array::from_fn(|j| {
        let bits = (planes[j] >> slot) & 0x1111_1111_1111_1111;
        let pairs = bits | bits << 1;
        pairs | pairs << 2
    })
}

/// Exchanges the bits of `a` at positions `p + shift` with those of `b` at
/// positions `p`, for every `p` in `mask`: the transposition of one bit of
/// the word index (`a` has it clear, `b` set) with bit `log2(shift)` of the
/// bit position.
#[inline(always)]
fn swap_move(state: &mut State, a: usize, b: usize, shift: u32, mask: u64) {
    let t = ((state[a] >> shift) ^ state[b]) & mask;
    state[b] ^= t;
    state[a] ^= t << shift;
}

/// Applies [`swap_move`] to every pair of words whose indices differ in
/// bit `WORD_BIT` only: transposes that word-index bit with bit
/// `log2(SHIFT)` of the bit position.
#[inline(always)]
fn transpose_index_bits<const WORD_BIT: usize, const SHIFT: u32>(state: &mut State, mask: u64) {
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
fn bitslice_steps(state: &mut State, reverse: bool) {
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
fn bitslice(batch: &Batch) -> State {
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
fn unbitslice(state: &State, batch: &mut Batch) {
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
fn add_round_key(state: &mut State, key: &State) {
    for (s, k) in state.iter_mut().zip(key) {
        *s ^= k;
    }
}

/// Per 16-bit row lane, the bit positions of columns `0..4 - n`: the bytes
/// that stay inside the lane when columns move `n` to the left.
const fn columns_below(n: u32) -> u64 {
    (0xffff >> (4 * n)) * 0x0001_0001_0001_0001
}

/// Plane `x` with each byte replaced by the one `ROWS` rows below and
/// `COLS` columns to the right (cyclically): result `(r, c)` = `x (r + ROWS,
/// c + COLS)`, all four blocks alike. `ROWS` is 1 or 2, `COLS` is 0..4.
/// The row move is a rotation by `16 * ROWS`; the column move is a rotation
/// by `4 * COLS` for the bytes that stay in their lane and by
/// `4 * COLS - 16` for those that wrap around it, merged with a mask.
#[inline(always)]
fn neighbour<const ROWS: u32, const COLS: u32>(x: u64) -> u64 {
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
fn xtime(t: &State) -> State {
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
fn mix_columns<const C1: u32, const C2: u32>(state: &mut State) {
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
fn inv_mix_columns<const C1: u32, const C2: u32>(state: &mut State) {
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
fn shift_rows_twice(state: &mut State) {
    const ODD_ROWS: u64 = 0xffff_0000_ffff_0000;
    for x in state.iter_mut() {
        let swapped = ((*x >> 8) & 0x00ff_00ff_00ff_00ff) | ((*x << 8) & 0xff00_ff00_ff00_ff00);
        *x = (*x & !ODD_ROWS) | (swapped & ODD_ROWS);
    }
}

/// SubBytes without the constant: every byte `x` of the four blocks
/// becomes `S(x) ^ 0x63`. Boyar–Peralta's 115-gate circuit with its four
/// XNORs as XORs; `U0`/`S0` are the most significant bits (plane 7).
#[inline(always)]
fn sub_bytes(state: &mut State) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;

    // Top linear layer: 23 XORs.
    let y14 = u3 ^ u5;
    let y13 = u0 ^ u6;
    let y9 = u0 ^ u3;
    let y8 = u0 ^ u5;
    let t0 = u1 ^ u2;
    let y1 = t0 ^ u7;
    let y4 = y1 ^ u3;
    let y12 = y13 ^ y14;
    let y2 = y1 ^ u0;
    let y5 = y1 ^ u6;
    let y3 = y5 ^ y8;
    let t1 = u4 ^ y12;
    let y15 = t1 ^ u5;
    let y20 = t1 ^ u1;
    let y6 = y15 ^ u7;
    let y10 = y15 ^ t0;
    let y11 = y20 ^ y9;
    let y7 = u7 ^ y11;
    let y17 = y10 ^ y11;
    let y19 = y10 ^ y8;
    let y16 = t0 ^ y11;
    let y21 = y13 ^ y16;
    let y18 = u0 ^ y16;

    // Nonlinear middle: inversion in GF(2^8) through GF(2^4).
    let t2 = y12 & y15;
    let t3 = y3 & y6;
    let t4 = t3 ^ t2;
    let t5 = y4 & u7;
    let t6 = t5 ^ t2;
    let t7 = y13 & y16;
    let t8 = y5 & y1;
    let t9 = t8 ^ t7;
    let t10 = y2 & y7;
    let t11 = t10 ^ t7;
    let t12 = y9 & y11;
    let t13 = y14 & y17;
    let t14 = t13 ^ t12;
    let t15 = y8 & y10;
    let t16 = t15 ^ t12;
    let t17 = t4 ^ t14;
    let t18 = t6 ^ t16;
    let t19 = t9 ^ t14;
    let t20 = t11 ^ t16;
    let t21 = t17 ^ y20;
    let t22 = t18 ^ y19;
    let t23 = t19 ^ y21;
    let t24 = t20 ^ y18;
    let t25 = t21 ^ t22;
    let t26 = t21 & t23;
    let t27 = t24 ^ t26;
    let t28 = t25 & t27;
    let t29 = t28 ^ t22;
    let t30 = t23 ^ t24;
    let t31 = t22 ^ t26;
    let t32 = t31 & t30;
    let t33 = t32 ^ t24;
    let t34 = t23 ^ t33;
    let t35 = t27 ^ t33;
    let t36 = t24 & t35;
    let t37 = t36 ^ t34;
    let t38 = t27 ^ t36;
    let t39 = t29 & t38;
    let t40 = t25 ^ t39;
    let t41 = t40 ^ t37;
    let t42 = t29 ^ t33;
    let t43 = t29 ^ t40;
    let t44 = t33 ^ t37;
    let t45 = t42 ^ t41;
    let z0 = t44 & y15;
    let z1 = t37 & y6;
    let z2 = t33 & u7;
    let z3 = t43 & y16;
    let z4 = t40 & y1;
    let z5 = t29 & y7;
    let z6 = t42 & y11;
    let z7 = t45 & y17;
    let z8 = t41 & y10;
    let z9 = t44 & y12;
    let z10 = t37 & y3;
    let z11 = t33 & y4;
    let z12 = t43 & y13;
    let z13 = t40 & y5;
    let z14 = t29 & y2;
    let z15 = t42 & y9;
    let z16 = t45 & y14;
    let z17 = t41 & y8;

    // Bottom linear layer (affine map without its constant).
    let t46 = z15 ^ z16;
    let t47 = z10 ^ z11;
    let t48 = z5 ^ z13;
    let t49 = z9 ^ z10;
    let t50 = z2 ^ z12;
    let t51 = z2 ^ z5;
    let t52 = z7 ^ z8;
    let t53 = z0 ^ z3;
    let t54 = z6 ^ z7;
    let t55 = z16 ^ z17;
    let t56 = z12 ^ t48;
    let t57 = t50 ^ t53;
    let t58 = z4 ^ t46;
    let t59 = z3 ^ t54;
    let t60 = t46 ^ t57;
    let t61 = z14 ^ t57;
    let t62 = t52 ^ t58;
    let t63 = t49 ^ t58;
    let t64 = z4 ^ t59;
    let t65 = t61 ^ t62;
    let t66 = z1 ^ t63;
    let s0 = t59 ^ t63;
    let s6 = t56 ^ t62;
    let s7 = t48 ^ t60;
    let t67 = t64 ^ t65;
    let s3 = t53 ^ t66;
    let s4 = t51 ^ t66;
    let s5 = t47 ^ t65;
    let s1 = t64 ^ s3;
    let s2 = t55 ^ t67;

    *state = [s7, s6, s5, s4, s3, s2, s1, s0];
}

/// InvSubBytes of input-shifted bytes: every byte `x` becomes
/// `S^-1(x ^ 0x63)`. Boyar–Peralta's depth-16 inverse circuit (top linear
/// layer of their figure 6 with its XNORs as XORs, the shared middle of
/// figure 7 with `D = Y5`, the bottom of figure 9); `U0`/`W0` are the most
/// significant bits (plane 7).
#[inline(always)]
fn inv_sub_bytes(state: &mut State) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;

    // Top linear layer (inverse affine map and change of basis).
    let t23 = u0 ^ u3;
    let t22 = u1 ^ u3;
    let t2 = u0 ^ u1;
    let t1 = u3 ^ u4;
    let t24 = u4 ^ u7;
    let r5 = u6 ^ u7;
    let t8 = u1 ^ t23;
    let t19 = t22 ^ r5;
    let t9 = u7 ^ t1;
    let t10 = t2 ^ t24;
    let t13 = t2 ^ r5;
    let t3 = t1 ^ r5;
    let t25 = u2 ^ t1;
    let r13 = u1 ^ u6;
    let t17 = u2 ^ t19;
    let t20 = t24 ^ r13;
    let t4 = u4 ^ t8;
    let r17 = u2 ^ u5;
    let r18 = u5 ^ u6;
    let r19 = u2 ^ u4;
    let y5 = u0 ^ r17;
    let t6 = t22 ^ r17;
    let t16 = r13 ^ r19;
    let t27 = t1 ^ r18;
    let t15 = t10 ^ t27;
    let t14 = t10 ^ r18;
    let t26 = t3 ^ t16;

    // Shared nonlinear middle.
    let d = y5;
    let m1 = t13 & t6;
    let m2 = t23 & t8;
    let m3 = t14 ^ m1;
    let m4 = t19 & d;
    let m5 = m4 ^ m1;
    let m6 = t3 & t16;
    let m7 = t22 & t9;
    let m8 = t26 ^ m6;
    let m9 = t20 & t17;
    let m10 = m9 ^ m6;
    let m11 = t1 & t15;
    let m12 = t4 & t27;
    let m13 = m12 ^ m11;
    let m14 = t2 & t10;
    let m15 = m14 ^ m11;
    let m16 = m3 ^ m2;
    let m17 = m5 ^ t24;
    let m18 = m8 ^ m7;
    let m19 = m10 ^ m15;
    let m20 = m16 ^ m13;
    let m21 = m17 ^ m15;
    let m22 = m18 ^ m13;
    let m23 = m19 ^ t25;
    let m24 = m22 ^ m23;
    let m25 = m22 & m20;
    let m26 = m21 ^ m25;
    let m27 = m20 ^ m21;
    let m28 = m23 ^ m25;
    let m29 = m28 & m27;
    let m30 = m26 & m24;
    let m31 = m20 & m23;
    let m32 = m27 & m31;
    let m33 = m27 ^ m25;
    let m34 = m21 & m22;
    let m35 = m24 & m34;
    let m36 = m24 ^ m25;
    let m37 = m21 ^ m29;
    let m38 = m32 ^ m33;
    let m39 = m23 ^ m30;
    let m40 = m35 ^ m36;
    let m41 = m38 ^ m40;
    let m42 = m37 ^ m39;
    let m43 = m37 ^ m38;
    let m44 = m39 ^ m40;
    let m45 = m42 ^ m41;
    let m46 = m44 & t6;
    let m47 = m40 & t8;
    let m48 = m39 & d;
    let m49 = m43 & t16;
    let m50 = m38 & t9;
    let m51 = m37 & t17;
    let m52 = m42 & t15;
    let m53 = m45 & t27;
    let m54 = m41 & t10;
    let m55 = m44 & t13;
    let m56 = m40 & t23;
    let m57 = m39 & t19;
    let m58 = m43 & t3;
    let m59 = m38 & t22;
    let m60 = m37 & t20;
    let m61 = m42 & t1;
    let m62 = m45 & t4;
    let m63 = m41 & t2;

    // Bottom linear layer (back to the polynomial basis).
    let p0 = m52 ^ m61;
    let p1 = m58 ^ m59;
    let p2 = m54 ^ m62;
    let p3 = m47 ^ m50;
    let p4 = m48 ^ m56;
    let p5 = m46 ^ m51;
    let p6 = m49 ^ m60;
    let p7 = p0 ^ p1;
    let p8 = m50 ^ m53;
    let p9 = m55 ^ m63;
    let p10 = m57 ^ p4;
    let p11 = p0 ^ p3;
    let p12 = m46 ^ m48;
    let p13 = m49 ^ m51;
    let p14 = m49 ^ m62;
    let p15 = m54 ^ m59;
    let p16 = m57 ^ m61;
    let p17 = m58 ^ p2;
    let p18 = m63 ^ p5;
    let p19 = p2 ^ p3;
    let p20 = p4 ^ p6;
    let p22 = p2 ^ p7;
    let p23 = p7 ^ p8;
    let p24 = p5 ^ p7;
    let p25 = p6 ^ p10;
    let p26 = p9 ^ p11;
    let p27 = p10 ^ p18;
    let p28 = p11 ^ p25;
    let p29 = p15 ^ p20;
    let w0 = p13 ^ p22;
    let w1 = p26 ^ p29;
    let w2 = p17 ^ p28;
    let w3 = p12 ^ p22;
    let w4 = p23 ^ p27;
    let w5 = p19 ^ p24;
    let w6 = p14 ^ p23;
    let w7 = p9 ^ p16;

    *state = [w7, w6, w5, w4, w3, w2, w1, w0];
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngCore};

    /// A deliberately plain byte-oriented AES (FIPS 197 as written, with
    /// lookup tables), used only to cross-check the fixsliced code.
    mod reference {
        use crate::aes::Block;

        fn mul(mut a: u8, mut b: u8) -> u8 {
            let mut p = 0;
            while b != 0 {
                if b & 1 != 0 {
                    p ^= a;
                }
                a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
                b >>= 1;
            }
            p
        }

        /// S-box from its definition: inverse in GF(2^8), then the affine map.
        pub fn sbox_table() -> [u8; 256] {
            let mut table = [0u8; 256];
            for (x, entry) in table.iter_mut().enumerate() {
                let x = x as u8;
                let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
                let mut s = 0x63;
                for i in 0..8 {
                    let bit = (inv >> i)
                        ^ (inv >> ((i + 4) % 8))
                        ^ (inv >> ((i + 5) % 8))
                        ^ (inv >> ((i + 6) % 8))
                        ^ (inv >> ((i + 7) % 8));
                    s ^= (bit & 1) << i;
                }
                *entry = s;
            }
            table
        }

        pub fn inv_sbox_table() -> [u8; 256] {
            let sbox = sbox_table();
            let mut table = [0u8; 256];
            for (x, &s) in sbox.iter().enumerate() {
                table[usize::from(s)] = x as u8;
            }
            table
        }

        pub struct Aes {
            round_keys: Vec<Block>,
            sbox: [u8; 256],
            inv_sbox: [u8; 256],
        }

        impl Aes {
            pub fn new(key: &[u8]) -> Aes {
                let sbox = sbox_table();
                let nk = key.len() / 4;
                let nr = nk + 6;
                let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| c.try_into().unwrap()).collect();
                let mut rcon = 1u8;
                for i in nk..4 * (nr + 1) {
                    let mut t = w[i - 1];
                    if i % nk == 0 {
                        t = [t[1], t[2], t[3], t[0]].map(|b| sbox[usize::from(b)]);
                        t[0] ^= rcon;
                        rcon = mul(rcon, 2);
                    } else if nk > 6 && i % nk == 4 {
                        t = t.map(|b| sbox[usize::from(b)]);
                    }
                    let prev = w[i - nk];
                    w.push(core::array::from_fn(|j| t[j] ^ prev[j]));
                }
                let round_keys = w
                    .chunks(4)
                    .map(|c| core::array::from_fn(|i| c[i / 4][i % 4]))
                    .collect();
                Aes {
                    round_keys,
                    sbox,
                    inv_sbox: inv_sbox_table(),
                }
            }

            pub fn round_key(&self, round: usize) -> Block {
                self.round_keys[round]
            }

            fn add(s: &mut Block, k: &Block) {
                s.iter_mut().zip(k).for_each(|(a, b)| *a ^= b);
            }

            fn shift_rows(s: &mut Block, inverse: bool) {
                let old = *s;
                for r in 0..4 {
                    for c in 0..4 {
                        let from = if inverse {
                            (c + 4 - r) % 4
                        } else {
                            (c + r) % 4
                        };
                        s[4 * c + r] = old[4 * from + r];
                    }
                }
            }

            fn mix_columns(s: &mut Block, m: [u8; 4]) {
                for c in 0..4 {
                    let col: [u8; 4] = s[4 * c..4 * c + 4].try_into().unwrap();
                    for r in 0..4 {
                        s[4 * c + r] = (0..4).fold(0, |acc, k| acc ^ mul(m[k], col[(r + k) % 4]));
                    }
                }
            }

            pub fn encrypt(&self, block: &mut Block) {
                let nr = self.round_keys.len() - 1;
                Self::add(block, &self.round_keys[0]);
                for round in 1..=nr {
                    block
                        .iter_mut()
                        .for_each(|b| *b = self.sbox[usize::from(*b)]);
                    Self::shift_rows(block, false);
                    if round != nr {
                        Self::mix_columns(block, [2, 3, 1, 1]);
                    }
                    Self::add(block, &self.round_keys[round]);
                }
            }

            pub fn decrypt(&self, block: &mut Block) {
                let nr = self.round_keys.len() - 1;
                Self::add(block, &self.round_keys[nr]);
                for round in (0..nr).rev() {
                    Self::shift_rows(block, true);
                    block
                        .iter_mut()
                        .for_each(|b| *b = self.inv_sbox[usize::from(*b)]);
                    Self::add(block, &self.round_keys[round]);
                    if round != 0 {
                        Self::mix_columns(block, [0x0e, 0x0b, 0x0d, 0x09]);
                    }
                }
            }
        }
    }

    fn block(hex_text: &str) -> Block {
        hex::decode(hex_text).unwrap().try_into().unwrap()
    }

    fn random_key(rng: &mut impl RngCore, len: usize) -> Vec<u8> {
        let mut key = vec![0u8; len];
        rng.fill_bytes(&mut key);
        key
    }

    /// Runs a kernel in place and with separate buffers, checks that both
    /// agree (output and final state), and returns the output and state.
    fn run_kernel(
        input: &[u8],
        state: Block,
        kernel: impl Fn(&mut Block, InOut<'_>),
    ) -> (Vec<u8>, Block) {
        let mut in_place = input.to_vec();
        let mut state_in_place = state;
        kernel(&mut state_in_place, InOut::InPlace(&mut in_place));
        let mut separate = vec![0u8; input.len()];
        let mut state_separate = state;
        kernel(
            &mut state_separate,
            InOut::separate(input, &mut separate).unwrap(),
        );
        assert_eq!(in_place, separate, "in place and separate buffers differ");
        assert_eq!(state_in_place, state_separate, "final states differ");
        (in_place, state_in_place)
    }

    fn ecb_encrypt(key: &Key, input: &[u8]) -> Vec<u8> {
        run_kernel(input, [0; 16], |_, io| key.ecb_encrypt(io)).0
    }

    fn ecb_decrypt(key: &Key, input: &[u8]) -> Vec<u8> {
        run_kernel(input, [0; 16], |_, io| key.ecb_decrypt(io)).0
    }

    fn ctr(key: &Key, counter: Block, width: CounterWidth, input: &[u8]) -> (Vec<u8>, Block) {
        run_kernel(input, counter, |c, io| key.ctr(c, width, io))
    }

    /// Reference CBC encryption over the reference cipher.
    fn reference_cbc_encrypt(aes: &reference::Aes, iv: Block, input: &[u8]) -> (Vec<u8>, Block) {
        let mut chain = iv;
        let mut out = Vec::new();
        for chunk in input.chunks(16) {
            chain.iter_mut().zip(chunk).for_each(|(c, p)| *c ^= p);
            aes.encrypt(&mut chain);
            out.extend_from_slice(&chain);
        }
        (out, chain)
    }

    /// Reference keystream modes: block `i` is input XOR E(register), then
    /// `next(register, keystream, output block)` sets the next register.
    fn reference_keystream_xor(
        aes: &reference::Aes,
        register: Block,
        input: &[u8],
        next: impl Fn(&mut Block, &Block, &[u8]),
    ) -> (Vec<u8>, Block) {
        let mut reg = register;
        let mut out = Vec::new();
        for chunk in input.chunks(16) {
            let mut ks = reg;
            aes.encrypt(&mut ks);
            let produced: Vec<u8> = chunk.iter().zip(ks).map(|(a, b)| a ^ b).collect();
            next(&mut reg, &ks, &produced);
            out.extend_from_slice(&produced);
        }
        (out, reg)
    }

    fn reference_ctr(
        aes: &reference::Aes,
        counter: Block,
        width: CounterWidth,
        input: &[u8],
    ) -> (Vec<u8>, Block) {
        reference_keystream_xor(aes, counter, input, |reg, _, _| width.add(reg, 1))
    }

    const FIPS197_PLAINTEXT: &str = "00112233445566778899aabbccddeeff";
    const FIPS197_CIPHERTEXTS: [(usize, &str); 3] = [
        (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
        (32, "8ea2b7ca516745bfeafc49904b496089"),
    ];

    #[test]
    fn sbox_circuits_match_the_definition_on_every_byte() {
        let sbox = reference::sbox_table();
        let inv_sbox = reference::inv_sbox_table();
        // Spot values from FIPS 197 (figure 7 and section 5.1.1).
        assert_eq!((sbox[0x00], sbox[0x53], sbox[0xff]), (0x63, 0xed, 0x16));
        assert_eq!(inv_sbox[0xed], 0x53);
        for quarter in 0..4u8 {
            let input: Batch = core::array::from_fn(|i| 64 * quarter + i as u8);
            let mut state = bitslice(&input);
            sub_bytes(&mut state);
            let mut forward = [0u8; BATCH_BYTES];
            unbitslice(&state, &mut forward);

            let shifted: Batch = input.map(|x| x ^ SBOX_CONSTANT);
            let mut state = bitslice(&shifted);
            inv_sub_bytes(&mut state);
            let mut inverse = [0u8; BATCH_BYTES];
            unbitslice(&state, &mut inverse);

            for (i, &x) in input.iter().enumerate() {
                let x_index = usize::from(x);
                assert_eq!(forward[i] ^ SBOX_CONSTANT, sbox[x_index], "S({x:#04x})");
                assert_eq!(inverse[i], inv_sbox[x_index], "S^-1({x:#04x})");
            }
        }
        for x in 0..=255u8 {
            let word = sub_word(u32::from_be_bytes([x, x ^ 1, x ^ 0x80, !x])).to_be_bytes();
            let want = [x, x ^ 1, x ^ 0x80, !x].map(|b| sbox[usize::from(b)]);
            assert_eq!(word, want);
        }
    }

    #[test]
    fn bitslice_layout_and_round_trip() {
        let mut rng = rand::rng();
        for _ in 0..50 {
            let mut batch = [0u8; BATCH_BYTES];
            rng.fill_bytes(&mut batch);
            let state = bitslice(&batch);
            for block in 0..4 {
                for row in 0..4 {
                    for column in 0..4 {
                        let byte = batch[16 * block + 4 * column + row];
                        let position = 16 * row + 4 * column + block;
                        for (j, plane) in state.iter().enumerate() {
                            assert_eq!(
                                (plane >> position) & 1,
                                u64::from((byte >> j) & 1),
                                "block {block} row {row} column {column} bit {j}"
                            );
                        }
                    }
                }
            }
            let mut back = [0u8; BATCH_BYTES];
            unbitslice(&state, &mut back);
            assert_eq!(back, batch);
        }
    }

    #[test]
    fn fips197_appendix_c_all_key_sizes() {
        let key: Vec<u8> = (0u8..32).collect();
        for (len, ciphertext) in FIPS197_CIPHERTEXTS {
            let aes = Key::boxed(&key[..len]);
            assert_eq!(aes.rounds, len / 4 + 6);
            let mut b = block(FIPS197_PLAINTEXT);
            aes.encrypt_block(&mut b);
            assert_eq!(b, block(ciphertext), "AES-{} encrypt", len * 8);
            aes.decrypt_block(&mut b);
            assert_eq!(b, block(FIPS197_PLAINTEXT), "AES-{} decrypt", len * 8);
        }
    }

    /// Reads round key `round` back out of its fixsliced form.
    fn decode_round_key(key: &Key, round: usize) -> Block {
        let mut batch = [0u8; BATCH_BYTES];
        unbitslice(&key.round_keys[round], &mut batch);
        let constant = if round > 0 { SBOX_CONSTANT } else { 0 };
        let drift = round % 4;
        let mut real = [0u8; 16];
        for column in 0..4 {
            for row in 0..4 {
                let from_column = (column + 4 - (drift * row) % 4) % 4;
                real[4 * from_column + row] = batch[4 * column + row] ^ constant;
                // All four block slots carry the same key.
                for slot in 1..4 {
                    assert_eq!(batch[16 * slot + 4 * column + row], batch[4 * column + row]);
                }
            }
        }
        real
    }

    #[test]
    fn fips197_appendix_a_key_expansion() {
        // (key, [(round key index, its four words)]) from FIPS 197 A.1-A.3.
        let cases: [(&str, [(usize, &str); 2]); 3] = [
            (
                "2b7e151628aed2a6abf7158809cf4f3c",
                [
                    (1, "a0fafe1788542cb123a339392a6c7605"),
                    (10, "d014f9a8c9ee2589e13f0cc8b6630ca6"),
                ],
            ),
            (
                "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
                [
                    (1, "62f8ead2522c6b7bfe0c91f72402f5a5"),
                    (12, "e98ba06f448c773c8ecc720401002202"),
                ],
            ),
            (
                "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
                [
                    (2, "9ba354118e6925afa51a8b5f2067fcde"),
                    (14, "fe4890d1e6188d0b046df344706c631e"),
                ],
            ),
        ];
        for (key_hex, checks) in cases {
            let key_bytes = hex::decode(key_hex).unwrap();
            let aes = Key::boxed(&key_bytes);
            let want = reference::Aes::new(&key_bytes);
            for (round, words) in checks {
                assert_eq!(
                    decode_round_key(&aes, round),
                    block(words),
                    "{key_hex} w{round}"
                );
            }
            for round in 0..=aes.rounds {
                assert_eq!(decode_round_key(&aes, round), want.round_key(round));
            }
            for unused in &aes.round_keys[aes.rounds + 1..] {
                assert_eq!(unused, &[0; 8]);
            }
        }
    }

    const SP800_38A_PLAINTEXT: &str = concat!(
        "6bc1bee22e409f96e93d7e117393172a",
        "ae2d8a571e03ac9c9eb76fac45af8e51",
        "30c81c46a35ce411e5fbc1191a0a52ef",
        "f69f2445df4f9b17ad2b417be66c3710"
    );
    const SP800_38A_KEY_128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
    const SP800_38A_KEY_256: &str =
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
    const SP800_38A_IV: &str = "000102030405060708090a0b0c0d0e0f";
    const SP800_38A_COUNTER: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

    /// (key, F.1 ECB, F.2 CBC, F.5 CTR ciphertexts).
    const SP800_38A_VECTORS: [(&str, &str, &str, &str); 2] = [
        (
            SP800_38A_KEY_128,
            concat!(
                "3ad77bb40d7a3660a89ecaf32466ef97",
                "f5d3d58503b9699de785895a96fdbaaf",
                "43b1cd7f598ece23881b00e3ed030688",
                "7b0c785e27e8ad3f8223207104725dd4"
            ),
            concat!(
                "7649abac8119b246cee98e9b12e9197d",
                "5086cb9b507219ee95db113a917678b2",
                "73bed6b8e3c1743b7116e69e22229516",
                "3ff1caa1681fac09120eca307586e1a7"
            ),
            concat!(
                "874d6191b620e3261bef6864990db6ce",
                "9806f66b7970fdff8617187bb9fffdff",
                "5ae4df3edbd5d35e5b4f09020db03eab",
                "1e031dda2fbe03d1792170a0f3009cee"
            ),
        ),
        (
            SP800_38A_KEY_256,
            concat!(
                "f3eed1bdb5d2a03c064b5a7e3db181f8",
                "591ccb10d410ed26dc5ba74a31362870",
                "b6ed21b99ca6f4f9f153e7b1beafed1d",
                "23304b7a39f9f3ff067d8d8f9e24ecc7"
            ),
            concat!(
                "f58c4c04d6e5f1ba779eabfb5f7bfbd6",
                "9cfc4e967edb808d679f777bc6702c7d",
                "39f23369a9d9bacfa530e26304231461",
                "b2eb05e2c39be9fcda6c19078c6a9d1b"
            ),
            concat!(
                "601ec313775789a5b7a7f504bbf3d228",
                "f443e3ca4d62b59aca84e990cacaf5c5",
                "2b0930daa23de94ce87017ba2d84988d",
                "dfc9c58db67aada613c2dd08457941a6"
            ),
        ),
    ];

    #[test]
    fn sp800_38a_ecb_cbc_ctr() {
        let plaintext = hex::decode(SP800_38A_PLAINTEXT).unwrap();
        for (key_hex, ecb_hex, cbc_hex, ctr_hex) in SP800_38A_VECTORS {
            let aes = Key::boxed(&hex::decode(key_hex).unwrap());
            let (ecb_ct, cbc_ct, ctr_ct) = (
                hex::decode(ecb_hex).unwrap(),
                hex::decode(cbc_hex).unwrap(),
                hex::decode(ctr_hex).unwrap(),
            );

            assert_eq!(ecb_encrypt(&aes, &plaintext), ecb_ct, "F.1 ECB encrypt");
            assert_eq!(ecb_decrypt(&aes, &ecb_ct), plaintext, "F.1 ECB decrypt");

            let iv = block(SP800_38A_IV);
            let (ct, chain) = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
            assert_eq!(ct, cbc_ct, "F.2 CBC encrypt");
            assert_eq!(chain[..], cbc_ct[48..]);
            let (pt, chain) = run_kernel(&cbc_ct, iv, |c, io| aes.cbc_decrypt(c, io));
            assert_eq!(pt, plaintext, "F.2 CBC decrypt");
            assert_eq!(chain[..], cbc_ct[48..]);

            let counter = block(SP800_38A_COUNTER);
            let (ct, next) = ctr(&aes, counter, CounterWidth::Full128, &plaintext);
            assert_eq!(ct, ctr_ct, "F.5 CTR encrypt");
            assert_eq!(next, block("f0f1f2f3f4f5f6f7f8f9fafbfcfdff03"));
            let (pt, _) = ctr(&aes, counter, CounterWidth::Full128, &ctr_ct);
            assert_eq!(pt, plaintext, "F.5 CTR decrypt");

            // Block by block gives the same as one call (state carries over).
            let mut chain = iv;
            let mut pieces = Vec::new();
            for piece in plaintext.chunks(16) {
                let (ct, next) = run_kernel(piece, chain, |c, io| aes.cbc_encrypt(c, io));
                pieces.extend(ct);
                chain = next;
            }
            assert_eq!(pieces, cbc_ct);
        }
    }

    #[test]
    fn random_round_trips_every_mode() {
        let mut rng = rand::rng();
        for key_len in [16, 24, 32] {
            for blocks in 1..=20 {
                let aes = Key::boxed(&random_key(&mut rng, key_len));
                let mut plaintext = vec![0u8; 16 * blocks];
                rng.fill_bytes(&mut plaintext);
                let iv: Block = rng.random();

                let ct = ecb_encrypt(&aes, &plaintext);
                assert_ne!(ct, plaintext);
                assert_eq!(ecb_decrypt(&aes, &ct), plaintext);

                let (ct, c1) = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
                let (pt, c2) = run_kernel(&ct, iv, |c, io| aes.cbc_decrypt(c, io));
                assert_eq!((pt.as_slice(), c1), (plaintext.as_slice(), c2), "CBC");

                let (ct, r1) = run_kernel(&plaintext, iv, |r, io| aes.cfb128_encrypt(r, io));
                let (pt, r2) = run_kernel(&ct, iv, |r, io| aes.cfb128_decrypt(r, io));
                assert_eq!((pt.as_slice(), r1), (plaintext.as_slice(), r2), "CFB");

                let (ct, r1) = run_kernel(&plaintext, iv, |r, io| aes.ofb(r, io));
                let (pt, r2) = run_kernel(&ct, iv, |r, io| aes.ofb(r, io));
                assert_eq!((pt.as_slice(), r1), (plaintext.as_slice(), r2), "OFB");

                let (ct, n1) = ctr(&aes, iv, CounterWidth::Low32, &plaintext);
                let (pt, n2) = ctr(&aes, iv, CounterWidth::Low32, &ct);
                assert_eq!((pt.as_slice(), n1), (plaintext.as_slice(), n2), "CTR");

                for b in plaintext.chunks(16) {
                    let mut x: Block = b.try_into().unwrap();
                    aes.encrypt_block(&mut x);
                    aes.decrypt_block(&mut x);
                    assert_eq!(x[..], *b);
                }
            }
        }
    }

    #[test]
    fn single_blocks_match_reference_for_random_keys() {
        let mut rng = rand::rng();
        for key_len in [16, 24, 32] {
            for _ in 0..300 {
                let key = random_key(&mut rng, key_len);
                let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
                let pt: Block = rng.random();
                let (mut got, mut expected) = (pt, pt);
                aes.encrypt_block(&mut got);
                want.encrypt(&mut expected);
                assert_eq!(got, expected, "encrypt, key {}", hex::encode(&key));
                aes.decrypt_block(&mut got);
                assert_eq!(got, pt, "decrypt, key {}", hex::encode(&key));
                let mut ct = pt;
                want.decrypt(&mut ct);
                aes.encrypt_block(&mut ct);
                assert_eq!(ct, pt, "E(D_ref(x)), key {}", hex::encode(&key));
            }
        }
    }

    #[test]
    fn multi_block_modes_match_reference() {
        let mut rng = rand::rng();
        for key_len in [16, 24, 32] {
            for _ in 0..10 {
                let key = random_key(&mut rng, key_len);
                let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
                let blocks = rng.random_range(1..=23);
                let mut plaintext = vec![0u8; 16 * blocks];
                rng.fill_bytes(&mut plaintext);
                let iv: Block = rng.random();

                let expected_ecb: Vec<u8> = plaintext
                    .chunks(16)
                    .flat_map(|b| {
                        let mut b: Block = b.try_into().unwrap();
                        want.encrypt(&mut b);
                        b
                    })
                    .collect();
                assert_eq!(ecb_encrypt(&aes, &plaintext), expected_ecb);
                assert_eq!(ecb_decrypt(&aes, &expected_ecb), plaintext);

                let (cbc_ct, cbc_chain) = reference_cbc_encrypt(&want, iv, &plaintext);
                let got = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
                assert_eq!(got, (cbc_ct.clone(), cbc_chain));
                let got = run_kernel(&cbc_ct, iv, |c, io| aes.cbc_decrypt(c, io));
                assert_eq!(got, (plaintext.clone(), cbc_chain));

                let cfb = reference_keystream_xor(&want, iv, &plaintext, |r, _, ct| {
                    r.copy_from_slice(ct)
                });
                let got = run_kernel(&plaintext, iv, |r, io| aes.cfb128_encrypt(r, io));
                assert_eq!(got, cfb, "CFB encrypt");
                let got = run_kernel(&cfb.0, iv, |r, io| aes.cfb128_decrypt(r, io));
                assert_eq!(got, (plaintext.clone(), cfb.1), "CFB decrypt");

                let ofb = reference_keystream_xor(&want, iv, &plaintext, |r, ks, _| *r = *ks);
                let got = run_kernel(&plaintext, iv, |r, io| aes.ofb(r, io));
                assert_eq!(got, ofb, "OFB");

                for width in [CounterWidth::Full128, CounterWidth::Low32] {
                    let got = ctr(&aes, iv, width, &plaintext);
                    assert_eq!(
                        got,
                        reference_ctr(&want, iv, width, &plaintext),
                        "{width:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn ctr_counter_wraparound_matches_reference() {
        let mut rng = rand::rng();
        let prefix: [u8; 12] = rng.random();
        let mut low32 = [0u8; 16];
        low32[..12].copy_from_slice(&prefix);
        low32[12..].copy_from_slice(&0xffff_fffeu32.to_be_bytes());
        let cases = [
            (CounterWidth::Low32, low32),
            (CounterWidth::Full128, ((1u128 << 64) - 2).to_be_bytes()),
            (
                CounterWidth::Full128,
                u128::MAX.wrapping_sub(1).to_be_bytes(),
            ),
        ];
        for key_len in [16, 24, 32] {
            let key = random_key(&mut rng, key_len);
            let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
            for (width, counter) in cases {
                for blocks in [1, 2, 3, 4, 5, 7, 9] {
                    let mut input = vec![0u8; 16 * blocks];
                    rng.fill_bytes(&mut input);
                    let got = ctr(&aes, counter, width, &input);
                    let expected = reference_ctr(&want, counter, width, &input);
                    assert_eq!(got, expected, "{width:?} from {}", hex::encode(counter));
                }
                // The counter after the wrap is the expected one.
                let (_, next) = ctr(&aes, counter, width, &[0u8; 64]);
                let mut expected = counter;
                width.add(&mut expected, 4);
                assert_eq!(next, expected);
                if width == CounterWidth::Low32 {
                    assert_eq!(next[..12], prefix, "Low32 must not carry");
                }
            }
        }
    }

    #[test]
    fn wipe_zeroes_round_keys() {
        let mut aes = Key::boxed(&[0x42; 32]);
        let copy = aes.clone();
        assert!(aes.round_keys.iter().flatten().any(|&w| w != 0));
        aes.wipe();
        assert!(aes.round_keys.iter().flatten().all(|&w| w == 0));
        // A clone owns its own copy.
        assert!(copy.round_keys.iter().flatten().any(|&w| w != 0));
    }

    /// Throughput and key-setup figures; run with
    /// `cargo test --release -p hwcrypt --lib soft -- --ignored --nocapture`.
    #[test]
    #[ignore = "benchmark"]
    fn throughput() {
        use core::hint::black_box;
        use std::time::Instant;

        const LEN: usize = 16 * 1024;
        const ITERATIONS: usize = 2000;
        let mut buf = vec![0u8; LEN];
        for key_len in [16, 32] {
            let key = [7u8; 32];
            let aes = Key::boxed(&key[..key_len]);
            let mut report = |name: &str, f: &mut dyn FnMut(&mut [u8])| {
                f(&mut buf);
                let start = Instant::now();
                for _ in 0..ITERATIONS {
                    f(black_box(&mut buf));
                }
                let secs = start.elapsed().as_secs_f64();
                let mbps = (LEN * ITERATIONS) as f64 / secs / 1e6;
                println!("AES-{} {name:<12} {mbps:8.1} MB/s", key_len * 8);
            };
            report("ECB encrypt", &mut |b| aes.ecb_encrypt(InOut::InPlace(b)));
            report("ECB decrypt", &mut |b| aes.ecb_decrypt(InOut::InPlace(b)));
            let mut counter = [0u8; 16];
            report("CTR", &mut |b| {
                aes.ctr(&mut counter, CounterWidth::Full128, InOut::InPlace(b))
            });

            let keys = 100_000;
            let start = Instant::now();
            for i in 0..keys {
                let mut k = key;
                k[0] = i as u8;
                black_box(Key::boxed(black_box(&k[..key_len])));
            }
            let ns = start.elapsed().as_nanos() as f64 / keys as f64;
            println!("AES-{} key setup  {ns:8.0} ns", key_len * 8);
        }
    }
}
