//! Poly1305 on AVX512-IFMA for the `avx512` backend: radix 2^44 limbs,
//! 8 blocks in parallel (one per 64-bit lane), the key powers r^1..r^8, and
//! the fold back into the scalar accumulator. Not the scalar Poly1305
//! (`poly1305_soft.rs`), not ChaCha20 (`chacha20.rs`), not the AEAD kernels
//! that interleave both (`chacha20_avx512.rs`).
#![allow(unsafe_code)]

use super::*;

// ---------------------------------------------------------------------------
// Poly1305 with AVX512-IFMA.
// ---------------------------------------------------------------------------

pub(super) const M44: u64 = (1 << 44) - 1;
pub(super) const M42: u64 = (1 << 42) - 1;

/// `h` (64-bit limbs, `h[2]` at most 7) in radix 2^44.
#[inline(always)]
pub(super) fn to_radix44(h: [u64; 3]) -> [u64; 3] {
    [
        h[0] & M44,
        ((h[0] >> 44) | (h[1] << 20)) & M44,
        (h[1] >> 24) | (h[2] << 40),
    ]
}

/// `l0 + l1·2^44 + l2·2^88` (each limb below 2^50) in 64-bit limbs,
/// partially reduced (the top limb at most 4).
#[inline(always)]
pub(super) fn from_radix44(l: [u64; 3]) -> [u64; 3] {
    let a = u128::from(l[0]) + (u128::from(l[1]) << 44);
    let mid = (a >> 64) + (u128::from(l[2]) << 24);
    let (h0, h1, h2) = (a as u64, mid as u64, (mid >> 64) as u64);
    // Fold the bits above 2^130: (h2 >> 2)·2^130 ≡ (h2 >> 2)·5.
    let c = (h2 >> 2) * 5;
    let (h0, c0) = h0.overflowing_add(c);
    let (h1, c1) = h1.overflowing_add(u64::from(c0));
    [h0, h1, (h2 & 3) + u64::from(c1)]
}

/// A multiplier in radix 2^44 for the lane-wise product: its limbs and
/// `20·` its upper two limbs (2^132 ≡ 20 mod 2^130 - 5).
#[derive(Clone, Copy)]
pub(super) struct Mult {
    r: [__m512i; 3],
    s: [__m512i; 2],
}

impl Mult {
    /// From per-lane limbs (radix 2^44, each below 2^45).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    fn new(r: [__m512i; 3]) -> Mult {
        // 20·limb < 2^50: exact in one 52-bit multiply-add (AVX-512F has no
        // 64-bit multiply, and LLVM turns shifts and adds into one).
        let twenty = _mm512_set1_epi64(20);
        let z = _mm512_setzero_si512();
        Mult {
            r,
            s: [
                _mm512_madd52lo_epu64(z, r[1], twenty),
                _mm512_madd52lo_epu64(z, r[2], twenty),
            ],
        }
    }

    /// Lane `j` of every limb moved to lane `idx[j]`'s source: the lanes
    /// of `self` permuted by `idx` (as `vpermq`).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    fn permute(&self, idx: __m512i) -> Mult {
        let p = |v: __m512i| _mm512_permutexvar_epi64(idx, v);
        Mult {
            r: [p(self.r[0]), p(self.r[1]), p(self.r[2])],
            s: [p(self.s[0]), p(self.s[1])],
        }
    }
}

/// `h·m` lane-wise, partially reduced (limbs as [`carry`] leaves them).
/// Inputs: limbs of `h` below 2^45.1, 2^45.1, 2^42.6 (a carried product
/// plus a message block), of `m` below 2^44 + 2^15, 2^44 + 2^11, 2^43 (a
/// carried power of r); so each 3-term column sum is below 2^93 (the top
/// one below 2^90), the `lo` sums below 2^54, `hi0`, `hi1` below 2^41 and
/// `hi2` below 2^38.
///
/// Always inlined (it runs inside the ChaCha20 kernel), so it carries no
/// `#[target_feature]`.
///
/// # Safety
/// The CPU must support AVX-512F and AVX512-IFMA.
#[inline(always)]
pub(super) unsafe fn mul_lanes(h: [__m512i; 3], m: &Mult) -> [__m512i; 3] {
    // SAFETY: AVX-512F/IFMA instructions on registers (caller: supported).
    unsafe {
        let z = _mm512_setzero_si512();
        let [r0, r1, r2] = m.r;
        let [s1, s2] = m.s;
        // d0 = h0 r0 + h1·20 r2 + h2·20 r1
        // d1 = h0 r1 + h1 r0 + h2·20 r2
        // d2 = h0 r2 + h1 r1 + h2 r0
        // each as the sum of the low 52 bits (lo) and of the high bits (hi,
        // worth 2^52 = 2^8 · 2^44, so it moves up one limb shifted by 8).
        let lo0 = _mm512_madd52lo_epu64(z, h[0], r0);
        let hi0 = _mm512_madd52hi_epu64(z, h[0], r0);
        let lo1 = _mm512_madd52lo_epu64(z, h[0], r1);
        let hi1 = _mm512_madd52hi_epu64(z, h[0], r1);
        let lo2 = _mm512_madd52lo_epu64(z, h[0], r2);
        let hi2 = _mm512_madd52hi_epu64(z, h[0], r2);
        let lo0 = _mm512_madd52lo_epu64(lo0, h[1], s2);
        let hi0 = _mm512_madd52hi_epu64(hi0, h[1], s2);
        let lo1 = _mm512_madd52lo_epu64(lo1, h[1], r0);
        let hi1 = _mm512_madd52hi_epu64(hi1, h[1], r0);
        let lo2 = _mm512_madd52lo_epu64(lo2, h[1], r1);
        let hi2 = _mm512_madd52hi_epu64(hi2, h[1], r1);
        let lo0 = _mm512_madd52lo_epu64(lo0, h[2], s1);
        let hi0 = _mm512_madd52hi_epu64(hi0, h[2], s1);
        let lo1 = _mm512_madd52lo_epu64(lo1, h[2], s2);
        let hi1 = _mm512_madd52hi_epu64(hi1, h[2], s2);
        let lo2 = _mm512_madd52lo_epu64(lo2, h[2], r0);
        let hi2 = _mm512_madd52hi_epu64(hi2, h[2], r0);
        // hi2 sits at 2^(88 + 52) = 2^140 ≡ 5·2^10. With the bounds above
        // hi2 < 2^38, so 5·(hi2 << 10) < 2^51: one
        // multiply-add. (Written as shifts and adds, LLVM turns it into a
        // 64-bit multiply, which AVX-512F lacks: 6 instructions.)
        let t0 = _mm512_madd52lo_epu64(lo0, _mm512_slli_epi64::<10>(hi2), _mm512_set1_epi64(5));
        let t1 = _mm512_add_epi64(lo1, _mm512_slli_epi64::<8>(hi0));
        let t2 = _mm512_add_epi64(lo2, _mm512_slli_epi64::<8>(hi1));
        carry(t0, t1, t2)
    }
}

/// One carry step on limbs below 2^55, all three in parallel (a serial
/// carry chain would lengthen the dependency chain of every group): each
/// limb keeps its low 44 (44, 42) bits and passes the rest up, the top
/// limb's carry coming back times 5. Results are below 2^44 + 2^15,
/// 2^44 + 2^11 and 2^42 + 2^11: enough for the next product (see
/// [`mul_lanes`]).
///
/// # Safety
/// The CPU must support AVX-512F and AVX512-IFMA.
#[inline(always)]
pub(super) unsafe fn carry(t0: __m512i, t1: __m512i, t2: __m512i) -> [__m512i; 3] {
    // SAFETY: AVX-512F/IFMA instructions on registers (caller: supported).
    unsafe {
        let m44 = _mm512_set1_epi64(M44 as i64);
        let m42 = _mm512_set1_epi64(M42 as i64);
        let c0 = _mm512_srli_epi64::<44>(t0);
        let c1 = _mm512_srli_epi64::<44>(t1);
        let c2 = _mm512_srli_epi64::<42>(t2);
        // c2 < 2^13, so 5·c2 fits the 52-bit multiply-add.
        let t0 = _mm512_madd52lo_epu64(_mm512_and_si512(t0, m44), c2, _mm512_set1_epi64(5));
        let t1 = _mm512_add_epi64(_mm512_and_si512(t1, m44), c0);
        let t2 = _mm512_add_epi64(_mm512_and_si512(t2, m42), c1);
        [t0, t1, t2]
    }
}

/// The 8 whole blocks at `p` in radix 2^44, one block per lane, with the
/// 2^128 bit of a whole block.
///
/// # Safety
/// The CPU must support AVX-512F; `p` must be valid for reading 128 bytes.
#[inline(always)]
unsafe fn load_group(p: *const u8) -> [__m512i; 3] {
    // SAFETY: AVX-512F instructions (supported, caller); 128 readable bytes
    // at `p` (caller); unaligned loads are allowed.
    unsafe {
        let a = _mm512_loadu_si512(p.cast());
        let b = _mm512_loadu_si512(p.add(64).cast());
        // Low and high 64-bit halves of blocks 0..8, one block per lane.
        let lo = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14), b);
        let hi = _mm512_permutex2var_epi64(a, _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15), b);
        let m44 = _mm512_set1_epi64(M44 as i64);
        let m0 = _mm512_and_si512(lo, m44);
        let m1 = _mm512_and_si512(
            _mm512_or_si512(_mm512_srli_epi64::<44>(lo), _mm512_slli_epi64::<20>(hi)),
            m44,
        );
        // Bit 128 (2^(88 + 40)) marks a whole block.
        let m2 = _mm512_or_si512(_mm512_srli_epi64::<24>(hi), _mm512_set1_epi64(1 << 40));
        [m0, m1, m2]
    }
}

/// `h + m` limb by limb.
///
/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn add_lanes(h: [__m512i; 3], m: [__m512i; 3]) -> [__m512i; 3] {
    // SAFETY: AVX-512F instructions (supported, caller).
    unsafe {
        [
            _mm512_add_epi64(h[0], m[0]),
            _mm512_add_epi64(h[1], m[1]),
            _mm512_add_epi64(h[2], m[2]),
        ]
    }
}

/// The key powers of the vector Poly1305: r^8 for every lane (the step
/// from one group to the next) and r^8..r^1 (lane `j` of the last group
/// still needs r^(8 - j)). They depend on the message's Poly1305 key only,
/// so a streamed message computes them once ([`PowersCache`]).
#[derive(Clone, Copy)]
pub(crate) struct Powers {
    r8: Mult,
    last: Mult,
}

impl Powers {
    /// The powers of `poly`'s key.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn new(poly: &Poly1305) -> Powers {
        // r^1..r^8 by three rounds of lane-wise products (instead of seven
        // serial scalar ones): r·r, then [r, r^2]·r^2, then [r..r^4]·[1, r^4].
        // Each product is partially reduced (limbs below 2^44 + 2^15,
        // 2^44 + 2^11, 2^42 + 2^11), which [`mul_lanes`] takes as either
        // operand.
        let mut r = to_radix44(poly.key_r());
        let bcast = |k: [u64; 3]| Mult::new(k.map(|l| _mm512_set1_epi64(l as i64)));
        let r1 = bcast(r);
        r.zeroize();
        // SAFETY: this function requires AVX-512F and IFMA.
        let r2 = Mult::new(unsafe { mul_lanes(r1.r, &r1) });
        // [r, r^2, r, r^2, ...]
        let q = Mult::new(core::array::from_fn(|k| {
            _mm512_mask_blend_epi64(0xaa, r1.r[k], r2.r[k])
        }));
        // SAFETY: as above.
        let p34 = unsafe { mul_lanes(q.r, &r2) }; // [r^3, r^4, r^3, r^4, ...]
        // [r, r^2, r^3, r^4, r, r^2, r^3, r^4]
        let a: [__m512i; 3] =
            core::array::from_fn(|k| _mm512_mask_blend_epi64(0xcc, q.r[k], p34[k]));
        let r4 = Mult::new(a).permute(_mm512_set1_epi64(3));
        let one = bcast([1, 0, 0]);
        let m = Mult::new(core::array::from_fn(|k| {
            _mm512_mask_blend_epi64(0xf0, one.r[k], r4.r[k])
        }));
        // SAFETY: as above.
        let pow = Mult::new(unsafe { mul_lanes(a, &m) }); // lane j: r^(j + 1)
        Powers {
            r8: pow.permute(_mm512_set1_epi64(7)),
            last: pow.permute(_mm512_setr_epi64(7, 6, 5, 4, 3, 2, 1, 0)),
        }
    }
}

/// Zeroes `p` with stores the compiler keeps.
fn wipe_powers(p: &mut Powers) {
    for m in [&mut p.r8, &mut p.last] {
        for v in m.r.iter_mut().chain(m.s.iter_mut()) {
            // SAFETY: `v` is a valid, aligned `__m512i` (a plain store: no
            // instruction beyond what the target has).
            unsafe { core::ptr::write_volatile(v, core::mem::zeroed()) };
        }
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// The key powers of a message, made when the vector Poly1305 first needs
/// them and kept until the message ends (a one-shot message's on the
/// stack; a streamed message's in its state between pieces, where a stream
/// of short ones, `openssl speed`'s 256-byte `EVP_EncryptUpdate`s, would
/// otherwise make them for every piece). Wiped by [`PowersCache::wipe`]
/// and on drop.
#[derive(Clone, Default)]
pub(crate) struct PowersCache(Option<Powers>);

impl PowersCache {
    /// The powers of `poly`'s key: the cached ones, or made now.
    ///
    /// The caller keeps the cache to one key (a streamed message wipes it
    /// when it ends; a one-shot message makes its own).
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn get(&mut self, poly: &Poly1305) -> &Powers {
        match self.0 {
            Some(ref p) => p,
            None => self.0.insert(Powers::new(poly)),
        }
    }

    /// Wipes the powers (a new message has a new key).
    pub(crate) fn wipe(&mut self) {
        if let Some(p) = self.0.as_mut() {
            wipe_powers(p);
        }
        self.0 = None;
    }
}

impl Drop for PowersCache {
    fn drop(&mut self) {
        self.wipe();
    }
}

/// The vector Poly1305 state: 8 lane accumulators, and the key powers
/// (borrowed: their owner, a [`PowersCache`], wipes them).
pub(crate) struct Ifma<'p> {
    h: [__m512i; 3],
    powers: &'p Powers,
    /// Whether a group was absorbed (before that, lane 0 holds the scalar
    /// accumulator and the other lanes zero).
    started: bool,
}

impl<'p> Ifma<'p> {
    /// Takes over from `poly` (its accumulator moves into lane 0), with the
    /// powers of its key.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn new(poly: &Poly1305, powers: &'p Powers) -> Ifma<'p> {
        let h = to_radix44(poly.accumulator());
        let lane0 = |k: usize| _mm512_maskz_set1_epi64(1, h[k] as i64);
        Ifma {
            h: [lane0(0), lane0(1), lane0(2)],
            powers,
            started: false,
        }
    }

    /// Absorbs the 8 whole blocks at `p`: `h = h·r^8 + m` lane-wise (just
    /// `h + m` for the first group). Always inlined (it runs inside the
    /// ChaCha20 kernel), so it carries no `#[target_feature]`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX512-IFMA; `p` must be valid for
    /// reading 128 bytes.
    #[inline(always)]
    pub(crate) unsafe fn absorb(&mut self, p: *const u8) {
        // SAFETY: AVX-512F/IFMA instructions (supported, caller); 128
        // readable bytes at `p` (caller).
        unsafe {
            let m = load_group(p);
            let h = if self.started {
                mul_lanes(self.h, &self.powers.r8)
            } else {
                self.h
            };
            self.started = true;
            self.h = add_lanes(h, m);
        }
    }

    /// Absorbs the `k` whole groups at `p`, as `k` calls of
    /// [`Ifma::absorb`] would, in half the latency from four groups on:
    /// the odd groups of a run of pairs on one chain (`h·r^16 + m`), the
    /// even ones on a second, joined at the end by one product with r^8.
    /// For the runs absorbed after the ChaCha20 pass (the end of a sealed
    /// message, a streamed piece), where nothing else hides the chain.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX512-IFMA; `p` must be valid for
    /// reading `128 * k` bytes.
    #[inline(always)]
    pub(crate) unsafe fn absorb_groups(&mut self, mut p: *const u8, mut k: usize) {
        // SAFETY: AVX-512F/IFMA instructions (supported, caller); each
        // group read is one of the `k` at `p` (caller).
        unsafe {
            if k < 4 {
                for i in 0..k {
                    self.absorb(p.add(GROUP * i));
                }
                return;
            }
            // One or two single steps, so that the chains start from a
            // multiplied accumulator and take an even number of groups.
            while !self.started || !k.is_multiple_of(2) {
                self.absorb(p);
                p = p.add(GROUP);
                k -= 1;
            }
            // Groups 1, 3, 5.. of the run on chain b (its first without a
            // product), 2, 4, 6.. on chain a: with 2n groups,
            // a = h·r^(16n) + Σ m_2i·r^(16(n-i)), b = Σ m_(2i-1)·r^(16(n-i)),
            // and h·r^(16n) + Σ_j m_j·r^(8(2n-j)) = a + b·r^8.
            // r^16, made here beside the first steps (a register value,
            // not stored: keeping it with the powers was no faster).
            let r16 = Mult::new(mul_lanes(self.powers.r8.r, &self.powers.r8));
            let mut a = self.h;
            let mut b = load_group(p);
            a = add_lanes(mul_lanes(a, &r16), load_group(p.add(GROUP)));
            for i in 1..k / 2 {
                let q = p.add(2 * GROUP * i);
                b = add_lanes(mul_lanes(b, &r16), load_group(q));
                a = add_lanes(mul_lanes(a, &r16), load_group(q.add(GROUP)));
            }
            // The sum of a carried product, a block and a carried product
            // (limbs below 3·2^44, 3·2^44, 2^43.3): one carry step brings it
            // back under the bounds [`mul_lanes`] takes.
            let [b0, b1, b2] = mul_lanes(b, &self.powers.r8);
            self.h = carry(
                _mm512_add_epi64(a[0], b0),
                _mm512_add_epi64(a[1], b1),
                _mm512_add_epi64(a[2], b2),
            );
        }
    }

    /// Folds the lanes back into `poly`'s accumulator and wipes the state.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn finish(mut self, poly: &mut Poly1305) {
        self.finish_in_place(poly);
    }

    /// As [`Ifma::finish`], through a reference (from inside a kernel that
    /// borrows the state); the state is wiped and must not absorb again.
    #[inline]
    #[target_feature(enable = "avx2,avx512f,avx512vl,avx512bw,avx512ifma")]
    pub(crate) fn finish_in_place(&mut self, poly: &mut Poly1305) {
        if self.started {
            // SAFETY: this function requires AVX-512F and IFMA.
            let [h0, h1, h2] = unsafe { mul_lanes(self.h, &self.powers.last) };
            // Each lane limb is below 2^45, so the sums stay below 2^48.
            let mut l = [
                _mm512_reduce_add_epi64(h0) as u64,
                _mm512_reduce_add_epi64(h1) as u64,
                _mm512_reduce_add_epi64(h2) as u64,
            ];
            poly.set_accumulator(from_radix44(l));
            l.zeroize();
        }
        self.started = false;
        wipe(&mut self.h);
    }
}
