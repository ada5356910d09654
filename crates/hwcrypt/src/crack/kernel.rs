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

/// Expands `G` registers of keys, calling `f(r, &round_keys_r)` for
/// `r = 0..=rounds` in order.
#[inline(always)]
pub(crate) fn expand<V: Lanes, const G: usize>(
    t: V,
    size: KeySize,
    lo: [V; G],
    hi: [V; G],
    mut f: impl FnMut(usize, &[V; G]),
) {
    let zero = t.splat(&[0; 16]);
    match size {
        KeySize::Aes128 => {
            let rot3 = t.splat(&ROT3);
            let mut k = lo;
            f(0, &k);
            for (i, rc) in RCON.into_iter().enumerate() {
                let rc = t.splat(&rcon_block(rc));
                for x in k.iter_mut() {
                    *x = prefix_xor(*x).xor(x.shuffle(rot3).enc_last(rc));
                }
                f(i + 1, &k);
            }
        }
        KeySize::Aes256 => {
            let rot3 = t.splat(&ROT3);
            let bcast3 = t.splat(&BCAST3);
            let (mut e, mut o) = (lo, hi);
            f(0, &e);
            f(1, &o);
            for (i, rc) in RCON[..7].iter().enumerate() {
                let rc = t.splat(&rcon_block(*rc));
                for g in 0..G {
                    e[g] = prefix_xor(e[g]).xor(o[g].shuffle(rot3).enc_last(rc));
                }
                f(2 + 2 * i, &e);
                if i < 6 {
                    for g in 0..G {
                        o[g] = prefix_xor(o[g]).xor(e[g].shuffle(bcast3).enc_last(zero));
                    }
                    f(3 + 2 * i, &o);
                }
            }
        }
        KeySize::Aes192 => {
            // Words w0..w3 in `a`, w4, w5 in the low half of `b`; each step
            // makes the next six words; round keys straddle them.
            let rot1 = t.splat(&ROT1);
            let bcast3 = t.splat(&BCAST3);
            let (mut a, mut b) = (lo, hi);
            f(0, &a);
            let mut r = 1;
            let mut rk = a;
            for (it, rc) in RCON[..8].iter().enumerate() {
                let rc = t.splat(&rcon_block(*rc));
                let mut a2 = a;
                let mut b2 = b;
                for g in 0..G {
                    a2[g] = prefix_xor(a[g]).xor(b[g].shuffle(rot1).enc_last(rc));
                    b2[g] = prefix_xor(b[g]).xor(a2[g].shuffle(bcast3));
                }
                if it % 2 == 0 {
                    for g in 0..G {
                        rk[g] = b[g].unpack_lo64(a2[g]);
                    }
                    f(r, &rk);
                    for g in 0..G {
                        rk[g] = b2[g].align8(a2[g]);
                    }
                    f(r + 1, &rk);
                    r += 2;
                } else {
                    f(r, &a2);
                    r += 1;
                }
                a = a2;
                b = b2;
            }
        }
    }
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
    let n = G * V::LANES;
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let Some(first) = plan.checks.first() else {
        return all;
    };
    let rounds = size.rounds();
    let mut lo = [t; G];
    let mut hi = [t; G];
    for g in 0..G {
        lo[g] = t.load(&keys.lo[g * V::LANES..]);
        hi[g] = t.load(&keys.hi[g * V::LANES..]);
    }
    let store = plan.checks.len() > 1 || !first.forward;
    let mut rk = [[t; G]; 15];
    let mut dk = [[t; G]; 15];
    let mut st = [t.splat(&first.input); G];
    if first.forward {
        expand(t, size, lo, hi, |r, k| {
            for g in 0..G {
                st[g] = match r {
                    0 => st[g].xor(k[g]),
                    _ if r == rounds => st[g].enc_last(k[g]),
                    _ => st[g].enc(k[g]),
                };
            }
            if store {
                rk[r] = *k;
            }
        });
    } else {
        expand(t, size, lo, hi, |r, k| {
            rk[r] = *k;
            if r > 0 && r < rounds {
                for g in 0..G {
                    dk[r][g] = k[g].imc();
                }
            }
        });
        for g in 0..G {
            let mut x = st[g].xor(rk[rounds][g]);
            for r in (1..rounds).rev() {
                x = x.dec(dk[r][g]);
            }
            st[g] = x.dec_last(rk[0][g]);
        }
    }
    let mut pass = all;
    let mut bad = [0u8; MAX_BATCH];
    let finish = |pass: &mut u64, bad: &[u8; MAX_BATCH]| {
        for (i, &b) in bad[..n].iter().enumerate() {
            if u32::from(b) > plan.max_bad {
                *pass &= !(1 << i);
            }
        }
    };
    let xor = t.splat(&first.xor);
    for s in st.iter_mut() {
        *s = s.xor(xor);
    }
    judge(t, first, plan.utf8, &st, &mut pass, &mut bad);
    finish(&mut pass, &bad);
    if pass == 0 || plan.checks.len() == 1 {
        return pass;
    }
    let mut have_dk = !first.forward;
    let lane_mask = (1u64 << V::LANES) - 1;
    for check in &plan.checks[1..] {
        if pass == 0 {
            break;
        }
        let input = t.splat(&check.input);
        let xor = t.splat(&check.xor);
        let mut v = [t; G];
        if check.forward {
            for g in 0..G {
                if (pass >> (g * V::LANES)) & lane_mask == 0 {
                    continue;
                }
                let mut x = input.xor(rk[0][g]);
                for k in &rk[1..rounds] {
                    x = x.enc(k[g]);
                }
                v[g] = x.enc_last(rk[rounds][g]).xor(xor);
            }
        } else {
            if !have_dk {
                for r in 1..rounds {
                    for g in 0..G {
                        dk[r][g] = rk[r][g].imc();
                    }
                }
                have_dk = true;
            }
            for g in 0..G {
                if (pass >> (g * V::LANES)) & lane_mask == 0 {
                    continue;
                }
                let mut x = input.xor(rk[rounds][g]);
                for r in (1..rounds).rev() {
                    x = x.dec(dk[r][g]);
                }
                v[g] = x.dec_last(rk[0][g]).xor(xor);
            }
        }
        judge(t, check, plan.utf8, &v, &mut pass, &mut bad);
        finish(&mut pass, &bad);
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
    let rounds = size.rounds();
    let n = G * V::LANES;
    let mut lo = [t; G];
    let mut hi = [t; G];
    for g in 0..G {
        lo[g] = t.load(&keys.lo[g * V::LANES..]);
        hi[g] = t.load(&keys.hi[g * V::LANES..]);
    }
    let mut out = vec![(vec![[0u8; 16]; rounds + 1], vec![[0u8; 16]; rounds + 1]); n];
    expand(t, size, lo, hi, |r, k| {
        for g in 0..G {
            let mut e = [[0u8; 16]; 4];
            let mut d = [[0u8; 16]; 4];
            k[g].store(&mut e);
            let dv = if r == 0 || r == rounds {
                k[g]
            } else {
                k[g].imc()
            };
            dv.store(&mut d);
            for l in 0..V::LANES {
                out[g * V::LANES + l].0[r] = e[l];
                out[g * V::LANES + l].1[rounds - r] = d[l];
            }
        }
    });
    out
}
