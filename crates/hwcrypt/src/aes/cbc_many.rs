//! Multi-buffer CBC encryption: many independent CBC streams (each its own
//! key and chaining value) encrypted together, one block of each stream per
//! step, so that the AES pipes see as many independent blocks as ECB gives
//! them.
//!
//! CBC encryption of one stream is a chain: block `i` cannot start before
//! block `i - 1` left the last round, so one stream runs at one block per
//! `rounds x latency` (~40 cycles for AES-128), a tenth of what the AES
//! units can do. Streams do not depend on each other. A backend packs the
//! block of one stream into each 128-bit lane of its registers (`W` lanes
//! per register: 1 on xmm, 2 on ymm, 4 on zmm) and runs several registers
//! side by side (eight xmm or ymm, four zmm: 8 or 16 streams), each lane
//! with its own round keys (laid out lane by lane once per pass,
//! [`PassPlan`]).
//!
//! This file is the safe part: grouping the streams by backend and round
//! count ([`encrypt_many`]), and the scheduler ([`schedule`]) that fills the
//! lanes, runs a pass for as many blocks as the shortest stream in the lanes
//! has left, retires the streams that finished and refills their lanes. The
//! kernels (`cbc_encrypt_lanes!` in `aesni/lanes.rs`, instantiated per
//! register width) and their dispatch live in the backend files.

#[cfg(target_arch = "x86_64")]
use super::aesni::RoundKeys;
use super::{Aes, Block, Inner};
use crate::inout::InOut;

#[cfg(target_arch = "x86_64")]
/// One stream: its key, its chaining value (updated), and its blocks.
pub(crate) struct Lane<'a, K> {
    pub(crate) key: &'a K,
    pub(crate) chain: &'a mut Block,
    pub(crate) io: InOut<'a>,
}

#[cfg(target_arch = "x86_64")]
/// A backend's multi-buffer CBC encryption.
pub(crate) trait CbcLanes: Sized {
    /// 128-bit lanes per register.
    const W: usize;
    /// Most registers a pass keeps in flight. Eight xmm or ymm registers
    /// cover the AES latency at two instructions per cycle (latency 4 x 2);
    /// on zmm four do where the units are 256 bits wide (AMD Zen 4), and
    /// eight zmm plus their blocks in flight no longer fit the registers.
    const GROUPS: usize;
    /// The round count (10, 12 or 14).
    fn rounds(&self) -> usize;
    /// The encryption schedule.
    fn round_keys(&self) -> &RoundKeys;
    /// One pass: `1..=GROUPS * W` lanes of one round count, each with
    /// exactly `blocks` blocks.
    fn pass(lanes: &mut [Lane<'_, Self>], blocks: usize);
    /// One stream alone (the serial kernel: no packing, no per-lane keys).
    fn serial(lane: Lane<'_, Self>);
}

#[cfg(target_arch = "x86_64")]
/// The operands of one pass for `G` registers of `W` lanes: lane `w` of
/// register `g` is stream `g * W + w`; lanes past the last stream repeat
/// stream 0 (its key, chaining value, source and destination).
///
/// A repeated lane computes exactly what lane 0 computes and stores the same
/// bytes at the same address. That is sound, in place too, because a kernel
/// loads every lane's block of a step before it stores any block of that
/// step (the kernel contract in `aesni/lanes.rs`).
#[repr(C, align(64))]
pub(crate) struct PassPlan<const G: usize, const W: usize> {
    /// `keys[g][r]`: round key `r` of the `W` lanes of register `g`.
    pub(crate) keys: [[[Block; W]; 15]; G],
    /// The chaining values, lane by lane; the kernel leaves the last
    /// ciphertext blocks here.
    pub(crate) chains: [[Block; W]; G],
    /// Where each lane reads its blocks, `16 * blocks` bytes from here.
    pub(crate) src: [[*const u8; W]; G],
    /// Where each lane writes them: the same pointer as `src` in place,
    /// otherwise a region that no other stream's `src` or `dst` overlaps.
    pub(crate) dst: [[*mut u8; W]; G],
}

#[cfg(target_arch = "x86_64")]
impl<const G: usize, const W: usize> PassPlan<G, W> {
    /// Lays out `lanes` (at most `G * W`, more than `(G - 1) * W`).
    pub(crate) fn new<K: CbcLanes>(lanes: &mut [Lane<'_, K>]) -> Self {
        debug_assert!(lanes.len() <= G * W && lanes.len() > (G - 1) * W);
        let mut plan = PassPlan {
            keys: [[[[0; 16]; W]; 15]; G],
            chains: [[[0; 16]; W]; G],
            src: [[core::ptr::null(); W]; G],
            dst: [[core::ptr::null_mut(); W]; G],
        };
        for (i, lane) in lanes.iter_mut().enumerate() {
            let (g, w) = (i / W, i % W);
            let rounds = lane.key.rounds();
            for (r, key) in lane.key.round_keys().0[..=rounds].iter().enumerate() {
                plan.keys[g][r][w] = *key;
            }
            plan.chains[g][w] = *lane.chain;
            // One `ptrs` call per stream: a second one would reborrow the
            // buffer and invalidate the pointers the first one gave
            // (Stacked Borrows), so repeated lanes copy lane 0's.
            (plan.src[g][w], plan.dst[g][w]) = lane.io.ptrs();
        }
        for i in lanes.len()..G * W {
            let (g, w) = (i / W, i % W);
            for r in 0..15 {
                plan.keys[g][r][w] = plan.keys[0][r][0];
            }
            plan.chains[g][w] = plan.chains[0][0];
            (plan.src[g][w], plan.dst[g][w]) = (plan.src[0][0], plan.dst[0][0]);
        }
        plan
    }

    /// Hands each stream its new chaining value.
    pub(crate) fn finish<K>(&self, lanes: &mut [Lane<'_, K>]) {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane.chain = self.chains[i / W][i % W];
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const G: usize, const W: usize> Drop for PassPlan<G, W> {
    fn drop(&mut self) {
        // A `memset` the compiler must keep: `zeroize`'s byte-by-byte
        // volatile stores took ~1 us for 3.8 KiB, more than the rounds of
        // a short pass.
        crate::secret::wipe_bytes(
            self.keys
                .as_flattened_mut()
                .as_flattened_mut()
                .as_flattened_mut(),
        );
    }
}

/// Runs `$kernel::<G, R>(&mut plan, $blocks)` for the `G` (one of `$g`)
/// that `$lanes` (at most `$w` times the last of `$g`) need and their
/// round count `R`, then hands the chaining values back. The kernel is `unsafe`: the caller wraps the
/// expansion in an `unsafe` block and states why its features are present.
macro_rules! cbc_lanes_dispatch {
    ($kernel:ident, $w:literal, [$($g:literal)*], $lanes:expr, $blocks:expr) => {{
        let lanes = $lanes;
        let blocks = $blocks;
        let rounds = $crate::aes::cbc_many::CbcLanes::rounds(lanes[0].key);
        assert!(
            lanes
                .iter()
                .all(|l| $crate::aes::cbc_many::CbcLanes::rounds(l.key) == rounds),
            "one round count per pass"
        );
        // One key for every lane (streams of one disk, or sessions that
        // share a key): a kernel that keeps its round keys in registers.
        let shared = lanes.iter().all(|l| core::ptr::eq(l.key, lanes[0].key));
        macro_rules! go {
            ($count:literal) => {{
                let mut plan = $crate::aes::cbc_many::PassPlan::<$count, $w>::new(lanes);
                match (rounds, shared) {
                    (10, false) => $kernel::<$count, 10, false>(&mut plan, blocks),
                    (12, false) => $kernel::<$count, 12, false>(&mut plan, blocks),
                    (_, false) => $kernel::<$count, 14, false>(&mut plan, blocks),
                    (10, true) => $kernel::<$count, 10, true>(&mut plan, blocks),
                    (12, true) => $kernel::<$count, 12, true>(&mut plan, blocks),
                    (_, true) => $kernel::<$count, 14, true>(&mut plan, blocks),
                }
                plan.finish(lanes);
            }};
        }
        match lanes.len().div_ceil($w) {
            $($g => go!($g),)*
            _ => unreachable!("more lanes than a pass takes"),
        }
    }};
}

#[cfg(target_arch = "x86_64")]
/// Encrypts every stream of `jobs` (one backend, one round count): fills up
/// to `K::GROUPS * K::W` lanes, runs a pass for as many blocks as the
/// shortest of them has left, retires the finished streams and refills
/// their lanes from the rest; a stream left alone runs on the serial kernel.
pub(crate) fn schedule<K: CbcLanes>(jobs: Vec<Lane<'_, K>>) {
    let max = K::GROUPS * K::W;
    let mut pending = jobs.into_iter().filter(|j| !j.io.is_empty()).peekable();
    let mut active: Vec<Lane<'_, K>> = Vec::with_capacity(max);
    loop {
        while active.len() < max {
            match pending.next() {
                Some(job) => active.push(job),
                None => break,
            }
        }
        match active.len() {
            0 => return,
            1 if pending.peek().is_none() => {
                K::serial(active.pop().expect("one stream"));
                return;
            }
            _ => {}
        }
        let bytes = active.iter().map(|l| l.io.len()).min().expect("streams");
        let mut heads: Vec<Lane<'_, K>> = active
            .iter_mut()
            .map(|l| {
                let (head, rest) =
                    core::mem::replace(&mut l.io, InOut::InPlace(&mut [])).split_at(bytes);
                l.io = rest;
                Lane {
                    key: l.key,
                    chain: &mut *l.chain,
                    io: head,
                }
            })
            .collect();
        if heads.len() > L1_WAYS && crowds_one_set(&heads) {
            // Eight lanes a pass, one pass after another, where more would
            // fill one L1 set (see `crowds_one_set`).
            for part in heads.chunks_mut(L1_WAYS) {
                K::pass(part, bytes / 16);
            }
        } else {
            K::pass(&mut heads, bytes / 16);
        }
        drop(heads);
        active.retain(|l| !l.io.is_empty());
    }
}

/// A batch whose streams are shorter than this on average (bytes) runs them
/// one after another ([`CbcEncryptBatch::encrypt`](crate::modes::CbcEncryptBatch::encrypt)):
/// calls of a few blocks overlap in the out-of-order core anyway, and laying
/// out the lanes costs more than it saves (64-byte streams: 1.8 GB/s packed,
/// 3.9 one by one, on `vaes-avx512`; the two meet near 100 bytes).
pub(crate) const SERIAL_BELOW: usize = 128;

/// Ways of the L1 data cache of the x86-64 cores hwcrypt targets (8 on AMD
/// Zen 3 and Zen 4, 12 on Zen 5, 12 on Intel since Ice Lake): lines that
/// share a set index and can stay in it together.
#[cfg(target_arch = "x86_64")]
const L1_WAYS: usize = 8;

/// Whether more than [`L1_WAYS`] of `lanes` read or write at the same
/// offset modulo 4 KiB (the same L1 set), as streams in consecutive 4 KiB
/// sectors or in page-aligned buffers do. Their blocks advance together,
/// so their lines evict each other at every step for the whole pass
/// (16 such streams of 16 KiB, AES-128: 4.1 GB/s on vaes-avx2 and 7.5 on
/// vaes-avx512 in passes of 16 lanes, 8.9 and 9.2 in passes of eight).
#[cfg(target_arch = "x86_64")]
fn crowds_one_set<K>(lanes: &[Lane<'_, K>]) -> bool {
    let mut count = [0u8; 64];
    let mut crowded = false;
    for lane in lanes {
        let (src, dst) = lane.io.addrs();
        for (i, a) in [src, dst].into_iter().enumerate() {
            if i == 1 && dst == src {
                continue;
            }
            let set = &mut count[(a >> 6) & 63];
            *set += 1;
            crowded |= usize::from(*set) > L1_WAYS;
        }
    }
    crowded
}

/// A stream of [`encrypt_many`]: a key, its chaining value, its blocks.
pub(crate) struct CbcJob<'a> {
    pub(crate) aes: &'a Aes,
    pub(crate) chain: &'a mut Block,
    pub(crate) io: InOut<'a>,
}

/// Encrypts every job (whole blocks each), the streams of each backend and
/// round count together; `soft` streams one after another.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub(crate) fn encrypt_many<'a>(jobs: impl ExactSizeIterator<Item = CbcJob<'a>>) {
    // Index: round count (10, 12, 14) -> 0, 1, 2.
    #[cfg(target_arch = "x86_64")]
    let mut aesni: [Vec<Lane<'_, super::aesni::Key>>; 3] = Default::default();
    #[cfg(target_arch = "x86_64")]
    let mut vaes_avx2: [Vec<Lane<'_, super::vaes_avx2::Key>>; 3] = Default::default();
    #[cfg(target_arch = "x86_64")]
    let mut vaes_avx512: [Vec<Lane<'_, super::vaes_avx512::Key>>; 3] = Default::default();
    let n = jobs.len();
    // Each group's vector is sized for every job on its first push: one
    // allocation per group, however many streams.
    #[cfg(target_arch = "x86_64")]
    fn push<'a, K>(group: &mut Vec<Lane<'a, K>>, n: usize, lane: Lane<'a, K>) {
        group.reserve(n);
        group.push(lane);
    }
    for job in jobs {
        let by_rounds = (job.aes.key_size().rounds() - 10) / 2;
        match &job.aes.inner {
            Inner::Soft(_) => job.aes.kernels().cbc_encrypt(job.chain, job.io),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => push(
                &mut aesni[by_rounds],
                n,
                Lane {
                    key: k,
                    chain: job.chain,
                    io: job.io,
                },
            ),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => push(
                &mut vaes_avx2[by_rounds],
                n,
                Lane {
                    key: k,
                    chain: job.chain,
                    io: job.io,
                },
            ),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => push(
                &mut vaes_avx512[by_rounds],
                n,
                Lane {
                    key: k,
                    chain: job.chain,
                    io: job.io,
                },
            ),
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        aesni.into_iter().for_each(schedule);
        vaes_avx2.into_iter().for_each(schedule);
        vaes_avx512.into_iter().for_each(schedule);
    }
}
