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
//! # Files
//!
//! This file holds the key type, the key schedule and the mode kernels;
//! `soft/rounds.rs` the linear layers on the bit planes, `soft/sbox.rs` the
//! S-box circuits (Boyar and Peralta), `soft/tests.rs` the unit tests.

use super::{AesKernels, BLOCK_SIZE, Block, CounterWidth};
use crate::inout::InOut;
use crate::secret::SecretBox;
use zeroize::Zeroize;

mod sbox;
use sbox::{inv_sub_bytes, sub_bytes};

mod rounds;
use rounds::{add_round_key, bitslice, inv_mix_columns, mix_columns, shift_rows_twice, unbitslice};

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
    fn rounds(&self) -> usize {
        self.rounds
    }

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

#[cfg(test)]
mod tests;
