//! The batched filter, written once over a small vector trait ([`Lanes`]);
//! each ISA file (`batch_aesni.rs`, `batch_vaes_avx2.rs`,
//! `batch_vaes_avx512.rs`) binds it to its registers, with one AES key per
//! 128-bit lane.
//!
//! For a batch of `G` registers of `LANES` keys each, the key schedules are
//! expanded side by side (`G` independent dependency chains hide the AES
//! latency). The first check, when it is a forward one (`E_k(x)`), runs
//! beside the expansion, round key by round key, so no schedule is stored;
//! an inverse first check (`D_k(x)`) stores the encryption schedule and
//! derives the decryption round keys (InvMixColumns) as they appear. Later
//! checks run only for registers that still hold a passing key.

use super::predicate::{BlockCheck, Plan};
use crate::aes::{Block, KeySize};

/// Most keys per batch (the pass mask is a `u64`).
pub(crate) const MAX_BATCH: usize = 64;

/// Candidate keys laid out for the kernels: key `i`'s bytes 0..16 in
/// `lo[i]`, bytes 16..32 in `hi[i]` (zero-padded for AES-192, unused for
/// AES-128).
#[derive(Clone)]
#[repr(C, align(64))]
pub(crate) struct KeyBatch {
    pub(crate) lo: [Block; MAX_BATCH],
    pub(crate) hi: [Block; MAX_BATCH],
}

impl KeyBatch {
    pub(crate) fn new() -> KeyBatch {
        KeyBatch {
            lo: [[0; 16]; MAX_BATCH],
            hi: [[0; 16]; MAX_BATCH],
        }
    }

    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, key: &[u8; 32]) {
        self.lo[i].copy_from_slice(&key[..16]);
        self.hi[i].copy_from_slice(&key[16..]);
    }

    pub(crate) fn key(&self, i: usize, len: usize) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..16].copy_from_slice(&self.lo[i]);
        k[16..].copy_from_slice(&self.hi[i]);
        k[len..].fill(0);
        k
    }
}

impl Drop for KeyBatch {
    fn drop(&mut self) {
        use zeroize::Zeroize;
        self.lo.as_flattened_mut().zeroize();
        self.hi.as_flattened_mut().zeroize();
    }
}

/// A register of `LANES` AES blocks, one per 128-bit lane. A value exists
/// only once the ISA it needs was detected (each implementation keeps its
/// constructor private to its file), so the methods are safe; new values
/// are made from an existing one (`self` is the proof).
pub(crate) trait Lanes: Copy {
    /// Blocks (keys) per register.
    const LANES: usize;
    /// Loads `LANES` consecutive blocks from `p[0..LANES]`.
    fn load(self, p: &[Block]) -> Self;
    /// Stores the lanes to `p[0..LANES]` (the schedule tests).
    #[cfg_attr(not(test), allow(dead_code))]
    fn store(self, p: &mut [Block]);
    /// `b` in every lane.
    fn splat(self, b: &Block) -> Self;
    fn xor(self, o: Self) -> Self;
    fn enc(self, k: Self) -> Self;
    fn enc_last(self, k: Self) -> Self;
    fn dec(self, k: Self) -> Self;
    fn dec_last(self, k: Self) -> Self;
    /// InvMixColumns: `aesimc` where it exists, else
    /// `aesdec(aesenclast(x, 0), 0)` (ShiftRows and SubBytes undone by their
    /// inverses, leaving InvMixColumns).
    fn imc(self) -> Self;
    /// `pshufb` within each lane.
    fn shuffle(self, ctrl: Self) -> Self;
    /// Byte shift left by 4 / 8 within each lane.
    fn shl4(self) -> Self;
    fn shl8(self) -> Self;
    /// Per lane: low 64 bits of `self`, then low 64 bits of `o`.
    fn unpack_lo64(self, o: Self) -> Self;
    /// Per lane: high 64 bits of `lo`, then low 64 bits of `self` (`palignr 8`).
    fn align8(self, lo: Self) -> Self;
    /// Bit `16 * lane + byte`: the bytes are equal.
    fn eq_bits(self, o: Self) -> u64;
    /// Bit `16 * lane + byte`: the byte is certainly not text
    /// ([`super::predicate::certainly_not_text`]).
    fn non_text_bits(self, utf8: bool) -> u64;
}

const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

const fn word_shuffle(bytes: [u8; 4]) -> Block {
    let mut b = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        b[i] = bytes[i % 4];
        i += 1;
    }
    b
}
/// RotWord of word 3 in every word.
const ROT3: Block = word_shuffle([13, 14, 15, 12]);
/// RotWord of word 1 in every word (AES-192).
const ROT1: Block = word_shuffle([5, 6, 7, 4]);
/// Word 3 in every word.
const BCAST3: Block = word_shuffle([12, 13, 14, 15]);

#[inline(always)]
fn prefix_xor<V: Lanes>(x: V) -> V {
    let y = x.xor(x.shl4());
    y.xor(y.shl8())
}

#[inline(always)]
fn rcon_block(r: u8) -> Block {
    word_shuffle([r, 0, 0, 0])
}

/// Round keys of one register of keys (`NR + 1` used).
type Schedule<V> = [V; 15];

/// Expands one register of keys (`lo`, `hi`: key bytes 0..16 and 16..32),
/// straight-line: `NR` (10, 12, 14) is a constant, so every loop below has
/// a constant trip count and unrolls into one block of register code.
#[inline(always)]
fn expand_one<V: Lanes, const NR: usize>(t: V, lo: V, hi: V) -> Schedule<V> {
    let mut rk = [lo; 15];
    match NR {
        10 => {
            let rot3 = t.splat(&ROT3);
            let mut k = lo;
            for (i, rc) in RCON.into_iter().enumerate() {
                k = prefix_xor(k).xor(k.shuffle(rot3).enc_last(t.splat(&rcon_block(rc))));
                rk[i + 1] = k;
            }
        }
        14 => {
            let rot3 = t.splat(&ROT3);
            let bcast3 = t.splat(&BCAST3);
            let zero = t.splat(&[0; 16]);
            let (mut e, mut o) = (lo, hi);
            rk[1] = o;
            for (i, &rc) in RCON[..7].iter().enumerate() {
                let rc = t.splat(&rcon_block(rc));
                e = prefix_xor(e).xor(o.shuffle(rot3).enc_last(rc));
                rk[2 + 2 * i] = e;
                if i < 6 {
                    o = prefix_xor(o).xor(e.shuffle(bcast3).enc_last(zero));
                    rk[3 + 2 * i] = o;
                }
            }
        }
        _ => {
            // AES-192: words w0..w3 in `a`, w4, w5 in the low half of `b`;
            // each step makes the next six words; round keys straddle them.
            let rot1 = t.splat(&ROT1);
            let bcast3 = t.splat(&BCAST3);
            let (mut a, mut b) = (lo, hi);
            for (it, &rc) in RCON[..8].iter().enumerate() {
                let rc = t.splat(&rcon_block(rc));
                let a2 = prefix_xor(a).xor(b.shuffle(rot1).enc_last(rc));
                let b2 = prefix_xor(b).xor(a2.shuffle(bcast3));
                // Round keys 3j+1, 3j+2 from (b, a2, b2) when `it` = 2j;
                // round key 3j+3 = a2 when `it` = 2j+1.
                let j = it / 2;
                if it % 2 == 0 {
                    rk[3 * j + 1] = b.unpack_lo64(a2);
                    rk[3 * j + 2] = b2.align8(a2);
                } else {
                    rk[3 * j + 3] = a2;
                }
                a = a2;
                b = b2;
            }
        }
    }
    rk
}

/// `E_k(x)` with a schedule.
#[inline(always)]
fn encrypt<V: Lanes, const NR: usize>(rk: &Schedule<V>, x: V) -> V {
    let mut x = x.xor(rk[0]);
    for k in &rk[1..NR] {
        x = x.enc(*k);
    }
    x.enc_last(rk[NR])
}

/// `D_k(x)` with an encryption schedule (InvMixColumns of the inner round
/// keys on the way: the equivalent inverse cipher).
#[inline(always)]
fn decrypt<V: Lanes, const NR: usize>(rk: &Schedule<V>, x: V) -> V {
    let mut x = x.xor(rk[NR]);
    for r in (1..NR).rev() {
        x = x.dec(rk[r].imc());
    }
    x.dec_last(rk[0])
}

/// Per-lane evaluation of `check` on `G` registers of block values; clears
/// failing keys from `pass` and adds non-text counts to `bad`.
#[inline(always)]
fn judge<V: Lanes, const G: usize>(
    t: V,
    check: &BlockCheck,
    utf8: bool,
    v: &[V; G],
    pass: &mut u64,
    bad: &mut [u8; MAX_BATCH],
) {
    let known = t.splat(&check.known);
    let lane_mask = (1u64 << V::LANES) - 1;
    for (g, x) in v.iter().enumerate() {
        if (*pass >> (g * V::LANES)) & lane_mask == 0 {
            continue;
        }
        if check.known_mask != 0 {
            let eq = x.eq_bits(known);
            for l in 0..V::LANES {
                let m = (eq >> (16 * l)) as u16;
                if m & check.known_mask != check.known_mask {
                    *pass &= !(1 << (g * V::LANES + l));
                }
            }
        }
        if check.text_mask != 0 {
            let nt = x.non_text_bits(utf8);
            for l in 0..V::LANES {
                let m = (nt >> (16 * l)) as u16 & check.text_mask;
                let b = &mut bad[g * V::LANES + l];
                *b = b.saturating_add(m.count_ones() as u8);
            }
        }
    }
}

/// The pass mask (bit `i`: key `i` passes every check of `plan`) for the
/// `G * LANES` keys of `keys`.
#[inline(always)]
pub(crate) fn filter<V: Lanes, const G: usize>(
    t: V,
    size: KeySize,
    plan: &Plan,
    keys: &KeyBatch,
) -> u64 {
    match size {
        KeySize::Aes128 => filter_nr::<V, G, 10>(t, plan, keys),
        KeySize::Aes192 => filter_nr::<V, G, 12>(t, plan, keys),
        KeySize::Aes256 => filter_nr::<V, G, 14>(t, plan, keys),
    }
}

/// One check's block values for the registers of `todo` (bit `g`).
#[inline(always)]
fn values<V: Lanes, const G: usize, const NR: usize>(
    t: V,
    check: &BlockCheck,
    keys: &KeyBatch,
    todo: u32,
) -> [V; G] {
    let input = t.splat(&check.input);
    let xor = t.splat(&check.xor);
    let mut v = [input; G];
    // One register at a time, its whole schedule in registers: the loop
    // body is straight-line code that out-of-order execution overlaps with
    // the next register's, so several key schedules are in flight.
    if check.forward {
        for (g, out) in v.iter_mut().enumerate() {
            if todo & (1 << g) != 0 {
                let lo = t.load(&keys.lo[g * V::LANES..]);
                let hi = t.load(&keys.hi[g * V::LANES..]);
                let rk = expand_one::<V, NR>(t, lo, hi);
                *out = encrypt::<V, NR>(&rk, input).xor(xor);
            }
        }
    } else {
        for (g, out) in v.iter_mut().enumerate() {
            if todo & (1 << g) != 0 {
                let lo = t.load(&keys.lo[g * V::LANES..]);
                let hi = t.load(&keys.hi[g * V::LANES..]);
                let rk = expand_one::<V, NR>(t, lo, hi);
                *out = decrypt::<V, NR>(&rk, input).xor(xor);
            }
        }
    }
    v
}

#[inline(always)]
fn filter_nr<V: Lanes, const G: usize, const NR: usize>(t: V, plan: &Plan, keys: &KeyBatch) -> u64 {
    let n = G * V::LANES;
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let lane_mask = (1u64 << V::LANES) - 1;
    let mut pass = all;
    let mut bad = [0u8; MAX_BATCH];
    let mut todo = (1u32 << G) - 1;
    for check in &plan.checks {
        // Later checks recompute the schedule of the (rare) registers that
        // still hold a passing key instead of storing every schedule.
        let v = values::<V, G, NR>(t, check, keys, todo);
        judge(t, check, plan.utf8, &v, &mut pass, &mut bad);
        for (i, &b) in bad[..n].iter().enumerate() {
            if u32::from(b) > plan.max_bad {
                pass &= !(1 << i);
            }
        }
        if pass == 0 {
            return 0;
        }
        todo = 0;
        for g in 0..G {
            if (pass >> (g * V::LANES)) & lane_mask != 0 {
                todo |= 1 << g;
            }
        }
    }
    pass
}

/// The encryption and decryption (`aesdec` order) schedules of the `G *
/// LANES` keys of `keys`, as the kernels compute them; for the tests that
/// compare them with the single-key expansion.
#[cfg(test)]
pub(crate) fn schedules<V: Lanes, const G: usize>(
    t: V,
    size: KeySize,
    keys: &KeyBatch,
) -> Vec<(Vec<Block>, Vec<Block>)> {
    let nr = size.rounds();
    let mut out = Vec::new();
    for g in 0..G {
        let lo = t.load(&keys.lo[g * V::LANES..]);
        let hi = t.load(&keys.hi[g * V::LANES..]);
        let rk = match nr {
            10 => expand_one::<V, 10>(t, lo, hi),
            12 => expand_one::<V, 12>(t, lo, hi),
            _ => expand_one::<V, 14>(t, lo, hi),
        };
        let mut lanes = vec![(vec![[0u8; 16]; nr + 1], vec![[0u8; 16]; nr + 1]); V::LANES];
        for (r, k) in rk[..=nr].iter().enumerate() {
            let mut e = [[0u8; 16]; 4];
            let mut d = [[0u8; 16]; 4];
            k.store(&mut e);
            let dv = if r == 0 || r == nr { *k } else { k.imc() };
            dv.store(&mut d);
            for (l, lane) in lanes.iter_mut().enumerate() {
                lane.0[r] = e[l];
                lane.1[nr - r] = d[l];
            }
        }
        out.extend(lanes);
    }
    out
}
