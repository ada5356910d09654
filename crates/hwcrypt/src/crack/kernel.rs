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

/// The entry points of an ISA file's batch kernel, the same in each:
/// `Kernel`, the proof that the registry's feature list `$features` was
/// detected (under the `HWCRYPT_CPU` mask), which makes the register type
/// `$reg` (`$zero`, an all-zero register, as its token), and the
/// `#[target_feature(enable = $target)]` functions that compile
/// [`filter`] (and, for the tests, `schedules`) for `$regs` registers a
/// batch, `$side` expanded side by side.
macro_rules! batch_kernel {
    (
        reg: $reg:ident,
        zero: $zero:expr,
        features: $features:path,
        target: $target:literal,
        regs: $regs:expr,
        side_by_side: $side:expr $(,)?
    ) => {
        /// Proof that this file's CPU features were detected (only
        /// [`Kernel::new`] makes one).
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct Kernel(());

        impl Kernel {
            pub(crate) fn new() -> Option<Kernel> {
                crate::cpu::features()
                    .ok()?
                    .contains(crate::cpu::Features::of($features))
                    .then_some(Kernel(()))
            }

            #[inline(always)]
            fn token(self) -> $reg {
                // SAFETY: a `Kernel` exists only after the features were
                // detected (`Kernel::new`), the register's among them.
                $reg(unsafe { $zero })
            }

            pub(crate) fn filter(self, size: KeySize, plan: &Plan, keys: &KeyBatch) -> u64 {
                // SAFETY: a `Kernel` exists only after the features were detected.
                unsafe { filter(self.token(), size, plan, keys) }
            }

            #[cfg(test)]
            pub(crate) fn schedules(
                self,
                size: KeySize,
                keys: &KeyBatch,
            ) -> Vec<(Vec<Block>, Vec<Block>)> {
                // SAFETY: as in `filter`.
                unsafe { schedules(self.token(), size, keys) }
            }
        }

        /// # Safety
        /// The CPU must support every feature in `$target`.
        #[target_feature(enable = $target)]
        unsafe fn filter(t: $reg, size: KeySize, plan: &Plan, keys: &KeyBatch) -> u64 {
            kernel::filter::<$reg, { $regs }, { $side }>(t, size, plan, keys)
        }

        /// # Safety
        /// As [`filter`].
        #[cfg(test)]
        #[target_feature(enable = $target)]
        unsafe fn schedules(
            t: $reg,
            size: KeySize,
            keys: &KeyBatch,
        ) -> Vec<(Vec<Block>, Vec<Block>)> {
            kernel::schedules::<$reg, { $regs }>(t, size, keys)
        }
    };
}

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
    /// Every slot of `lo` (`hi`) holds this value (as a little-endian
    /// integer): the enumeration then leaves that half alone.
    pub(crate) same_lo: Option<u128>,
    pub(crate) same_hi: Option<u128>,
}

impl KeyBatch {
    pub(crate) fn new() -> KeyBatch {
        KeyBatch {
            lo: [[0; 16]; MAX_BATCH],
            hi: [[0; 16]; MAX_BATCH],
            same_lo: Some(0),
            same_hi: Some(0),
        }
    }

    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, key: &[u8; 32]) {
        self.lo[i].copy_from_slice(&key[..16]);
        self.hi[i].copy_from_slice(&key[16..]);
        self.same_lo = None;
        self.same_hi = None;
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

/// Round keys of `P` registers of keys (`NR + 1` used).
type Schedule<V, const P: usize> = [[V; P]; 15];

/// `prefix_xor(a) ^ SubWord(RotWord(word w of b)) ^ rcon` per register
/// (`ctrl` picks and rotates the word).
#[inline(always)]
fn rot_step<V: Lanes, const P: usize>(t: V, a: [V; P], b: [V; P], ctrl: V, rc: u8) -> [V; P] {
    let rc = t.splat(&rcon_block(rc));
    let mut out = a;
    for i in 0..P {
        out[i] = prefix_xor(a[i]).xor(b[i].shuffle(ctrl).enc_last(rc));
    }
    out
}

/// AES-256's odd step: `prefix_xor(a) ^ SubWord(word 3 of b)`.
#[inline(always)]
fn sub_step<V: Lanes, const P: usize>(t: V, a: [V; P], b: [V; P]) -> [V; P] {
    let (bcast3, zero) = (t.splat(&BCAST3), t.splat(&[0; 16]));
    let mut out = a;
    for i in 0..P {
        out[i] = prefix_xor(a[i]).xor(b[i].shuffle(bcast3).enc_last(zero));
    }
    out
}

/// AES-192's step: the next six words (`a`: four, `b`: two in its low half).
#[inline(always)]
fn step192<V: Lanes, const P: usize>(t: V, a: [V; P], b: [V; P], rc: u8) -> ([V; P], [V; P]) {
    let a2 = rot_step(t, a, b, t.splat(&ROT1), rc);
    let bcast3 = t.splat(&BCAST3);
    let mut b2 = b;
    for i in 0..P {
        b2[i] = prefix_xor(b[i]).xor(a2[i].shuffle(bcast3));
    }
    (a2, b2)
}

/// Expands `P` registers of keys (`lo`, `hi`: key bytes 0..16 and 16..32)
/// in straight-line code: every step written out, so the `P` independent
/// chains interleave and the round keys stay in registers.
#[inline(always)]
fn expand_p<V: Lanes, const P: usize, const NR: usize>(
    t: V,
    lo: [V; P],
    hi: [V; P],
) -> Schedule<V, P> {
    let r = RCON;
    match NR {
        10 => {
            let c = t.splat(&ROT3);
            let k1 = rot_step(t, lo, lo, c, r[0]);
            let k2 = rot_step(t, k1, k1, c, r[1]);
            let k3 = rot_step(t, k2, k2, c, r[2]);
            let k4 = rot_step(t, k3, k3, c, r[3]);
            let k5 = rot_step(t, k4, k4, c, r[4]);
            let k6 = rot_step(t, k5, k5, c, r[5]);
            let k7 = rot_step(t, k6, k6, c, r[6]);
            let k8 = rot_step(t, k7, k7, c, r[7]);
            let k9 = rot_step(t, k8, k8, c, r[8]);
            let k10 = rot_step(t, k9, k9, c, r[9]);
            [lo, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, lo, lo, lo, lo]
        }
        14 => {
            let c = t.splat(&ROT3);
            let k2 = rot_step(t, lo, hi, c, r[0]);
            let k3 = sub_step(t, hi, k2);
            let k4 = rot_step(t, k2, k3, c, r[1]);
            let k5 = sub_step(t, k3, k4);
            let k6 = rot_step(t, k4, k5, c, r[2]);
            let k7 = sub_step(t, k5, k6);
            let k8 = rot_step(t, k6, k7, c, r[3]);
            let k9 = sub_step(t, k7, k8);
            let k10 = rot_step(t, k8, k9, c, r[4]);
            let k11 = sub_step(t, k9, k10);
            let k12 = rot_step(t, k10, k11, c, r[5]);
            let k13 = sub_step(t, k11, k12);
            let k14 = rot_step(t, k12, k13, c, r[6]);
            [
                lo, hi, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14,
            ]
        }
        _ => {
            // AES-192: round keys straddle the six-word steps.
            let lo64 = |b: [V; P], a: [V; P]| {
                let mut out = a;
                for i in 0..P {
                    out[i] = b[i].unpack_lo64(a[i]);
                }
                out
            };
            let hi64 = |b: [V; P], a: [V; P]| {
                let mut out = a;
                for i in 0..P {
                    out[i] = b[i].align8(a[i]);
                }
                out
            };
            let (a1, b1) = step192(t, lo, hi, r[0]);
            let (a2, b2) = step192(t, a1, b1, r[1]);
            let (a3, b3) = step192(t, a2, b2, r[2]);
            let (a4, b4) = step192(t, a3, b3, r[3]);
            let (a5, b5) = step192(t, a4, b4, r[4]);
            let (a6, b6) = step192(t, a5, b5, r[5]);
            let (a7, b7) = step192(t, a6, b6, r[6]);
            let (a8, _) = step192(t, a7, b7, r[7]);
            [
                lo,
                lo64(hi, a1),
                hi64(b1, a1),
                a2,
                lo64(b2, a3),
                hi64(b3, a3),
                a4,
                lo64(b4, a5),
                hi64(b5, a5),
                a6,
                lo64(b6, a7),
                hi64(b7, a7),
                a8,
                lo,
                lo,
            ]
        }
    }
}

/// `E_k(x)` for `P` registers of keys.
#[inline(always)]
fn encrypt<V: Lanes, const P: usize, const NR: usize>(rk: &Schedule<V, P>, x: V) -> [V; P] {
    let mut x = [x; P];
    for i in 0..P {
        x[i] = x[i].xor(rk[0][i]);
    }
    for k in &rk[1..NR] {
        for i in 0..P {
            x[i] = x[i].enc(k[i]);
        }
    }
    for i in 0..P {
        x[i] = x[i].enc_last(rk[NR][i]);
    }
    x
}

/// `D_k(x)` for `P` registers of keys, from the encryption schedule
/// (InvMixColumns of the inner round keys on the way: the equivalent
/// inverse cipher).
#[inline(always)]
fn decrypt<V: Lanes, const P: usize, const NR: usize>(rk: &Schedule<V, P>, x: V) -> [V; P] {
    let mut x = [x; P];
    for i in 0..P {
        x[i] = x[i].xor(rk[NR][i]);
    }
    for r in (1..NR).rev() {
        for i in 0..P {
            x[i] = x[i].dec(rk[r][i].imc());
        }
    }
    for i in 0..P {
        x[i] = x[i].dec_last(rk[0][i]);
    }
    x
}

/// Bit `l` set where 16-bit group `l` of `x` (one lane's bytes) is not zero,
/// without a loop LLVM would vectorise through memory: OR each group into
/// its lowest bit, then gather bits 0, 16, 32, 48 into bits 0..4 with one
/// multiply (the partial products land on distinct bits: no carries).
#[inline(always)]
fn lanes_nonzero(x: u64) -> u64 {
    let mut x = x;
    x |= x >> 8;
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    let y = x & 0x0001_0001_0001_0001;
    (y.wrapping_mul((1 << 48) | (1 << 33) | (1 << 18) | (1 << 3)) >> 48) & 0xf
}

/// `mask` repeated in every lane's 16 bits.
#[inline(always)]
fn per_lane<V: Lanes>(mask: u16) -> u64 {
    let mut m = 0u64;
    for l in 0..V::LANES {
        m |= u64::from(mask) << (16 * l);
    }
    m
}

/// Per-lane evaluation of `check` on `G` registers of block values; clears
/// failing keys from `pass` and adds non-text counts to `bad` (or, when no
/// non-text byte is allowed, fails the key at the first).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn judge<V: Lanes, const G: usize>(
    t: V,
    check: &BlockCheck,
    utf8: bool,
    strict: bool,
    v: &[V; G],
    pass: &mut u64,
    bad: &mut [u8; MAX_BATCH],
) {
    let known = t.splat(&check.known);
    let lane_mask = (1u64 << V::LANES) - 1;
    let km = per_lane::<V>(check.known_mask);
    let tm = per_lane::<V>(check.text_mask);
    for (g, x) in v.iter().enumerate() {
        let shift = g * V::LANES;
        if (*pass >> shift) & lane_mask == 0 {
            continue;
        }
        let mut fail = 0;
        if check.known_mask != 0 {
            fail |= lanes_nonzero(!x.eq_bits(known) & km);
        }
        if check.text_mask != 0 {
            let nt = x.non_text_bits(utf8) & tm;
            if strict {
                fail |= lanes_nonzero(nt);
            } else {
                for l in 0..V::LANES {
                    let b = &mut bad[shift + l];
                    *b = b.saturating_add(((nt >> (16 * l)) & 0xffff).count_ones() as u8);
                }
            }
        }
        *pass &= !(fail << shift);
    }
}

/// The pass mask (bit `i`: key `i` passes every check of `plan`) for the
/// `G * LANES` keys of `keys`.
#[inline(always)]
///
/// `P` registers have their schedules expanded side by side (independent
/// chains in one straight-line block); `G` must be a multiple of `P`.
pub(crate) fn filter<V: Lanes, const G: usize, const P: usize>(
    t: V,
    size: KeySize,
    plan: &Plan,
    keys: &KeyBatch,
) -> u64 {
    match size {
        KeySize::Aes128 => filter_nr::<V, G, P, 10>(t, plan, keys),
        KeySize::Aes192 => filter_nr::<V, G, P, 12>(t, plan, keys),
        KeySize::Aes256 => filter_nr::<V, G, P, 14>(t, plan, keys),
    }
}

/// One check's block values for the registers of `todo` (bit `g`).
#[inline(always)]
fn values<V: Lanes, const G: usize, const P: usize, const NR: usize>(
    t: V,
    check: &BlockCheck,
    keys: &KeyBatch,
    todo: u32,
) -> [V; G] {
    let input = t.splat(&check.input);
    let xor = t.splat(&check.xor);
    let mut v = [input; G];
    // `P` registers at a time, their whole schedules in registers; out-of-
    // order execution overlaps consecutive iterations as well.
    for g0 in (0..G).step_by(P) {
        if todo & (((1 << P) - 1) << g0) == 0 {
            continue;
        }
        let (mut lo, mut hi) = ([t; P], [t; P]);
        for i in 0..P {
            lo[i] = t.load(&keys.lo[(g0 + i) * V::LANES..]);
            hi[i] = t.load(&keys.hi[(g0 + i) * V::LANES..]);
        }
        let rk = expand_p::<V, P, NR>(t, lo, hi);
        let out = if check.forward {
            encrypt::<V, P, NR>(&rk, input)
        } else {
            decrypt::<V, P, NR>(&rk, input)
        };
        for i in 0..P {
            v[g0 + i] = out[i].xor(xor);
        }
    }
    v
}

#[inline(always)]
fn filter_nr<V: Lanes, const G: usize, const P: usize, const NR: usize>(
    t: V,
    plan: &Plan,
    keys: &KeyBatch,
) -> u64 {
    let n = G * V::LANES;
    let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    let lane_mask = (1u64 << V::LANES) - 1;
    let mut pass = all;
    let mut bad = [0u8; MAX_BATCH];
    let mut todo = (1u32 << G) - 1;
    for check in &plan.checks {
        // Later checks recompute the schedule of the (rare) registers that
        // still hold a passing key instead of storing every schedule.
        let v = values::<V, G, P, NR>(t, check, keys, todo);
        let strict = plan.max_bad == 0;
        judge(t, check, plan.utf8, strict, &v, &mut pass, &mut bad);
        if !strict {
            for (i, &b) in bad[..n].iter().enumerate() {
                if u32::from(b) > plan.max_bad {
                    pass &= !(1 << i);
                }
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
#[test]
fn lanes_nonzero_gathers_each_group() {
    for lanes in 0u64..16 {
        for pos in 0..16 {
            let mut x = 0u64;
            for l in 0..4 {
                if lanes & (1 << l) != 0 {
                    x |= 1 << (16 * l + (pos + l * 5) % 16);
                }
            }
            assert_eq!(lanes_nonzero(x), lanes, "{x:#x}");
        }
    }
    assert_eq!(lanes_nonzero(u64::MAX), 0xf);
}

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
        let rk: [V; 15] = match nr {
            10 => expand_p::<V, 1, 10>(t, [lo], [hi]),
            12 => expand_p::<V, 1, 12>(t, [lo], [hi]),
            _ => expand_p::<V, 1, 14>(t, [lo], [hi]),
        }
        .map(|k| k[0]);
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
