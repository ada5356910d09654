//! The last chunk of a VAES-AVX512 GCM message and the lengths block in
//! one pass (the `one_pass::LastChunk` kernel): masked loads and stores,
//! the short associated data hashed in the same window. Not the bulk
//! chunks (the parent module).
#![allow(unsafe_code)]

use super::*;

/// The mask of the first `r` bytes of a register (all 64 from `r >= 64`);
/// `r` is a public length.
#[inline]
fn first_bytes(r: usize) -> __mmask64 {
    if r >= 64 { !0 } else { (1u64 << r) - 1 }
}

/// The most associated data the last-chunk kernel hashes in its window
/// (when the message has no whole chunk): four blocks.
const WINDOW_AAD_MAX: usize = 64;

impl LastChunk for Key {
    const CHUNK: usize = CHUNK;
    const OPERANDS: usize = LANES * REGS;
    const AAD_MAX: usize = WINDOW_AAD_MAX;

    fn encrypt_counter(&self, c: u128) -> Block {
        Key::encrypt_counter(self, c)
    }

    fn absorb(&self, acc: &mut Block, x: u128) {
        Key::absorb(self, acc, x);
    }

    fn ghash(&self, acc: &mut Block, data: &[u8]) {
        Key::ghash(self, acc, data);
    }

    fn chunks<const DEC: bool>(&self, counter: u128, acc: &mut Block, io: InOut<'_>) {
        if DEC {
            self.decrypt(counter, acc, io);
        } else {
            self.encrypt(counter, acc, io);
        }
    }

    fn seal_chunks_deferred(&self, counter: u128, acc: &mut Block, io: InOut<'_>) -> *const u8 {
        self.seal_chunks::<false>(counter, acc, io)
    }

    fn last<const DEC: bool>(
        &self,
        ops: &LastOps<'_>,
        acc: &mut Block,
        mut io: InOut<'_>,
    ) -> Block {
        let t = io.len();
        let (src, dst) = io.ptrs();
        let kernels: [Last; REGS] = last_kernels!(last, self.rounds(), DEC);
        let f = kernels[t.div_ceil(64) - 1];
        // SAFETY: a `Key` exists only if the features were detected; `t`
        // bytes at `src` are readable and at `dst` writable, equal or not
        // overlapping (`InOut`); `0 < t < CHUNK` is within the `N` registers
        // of the kernel picked; the operands fit (the caller).
        unsafe { f(self.wide(), ops, acc, src, dst, t) }
    }
}

type Last = unsafe fn(&Wide, &LastOps<'_>, &mut Block, *const u8, *mut u8, usize) -> Block;

/// `x` times the four consecutive key powers from `H^(32 - b)` (lane `i`
/// by `H^(32 - b - i)`) into `sum`: `h` and `hk` read as 32 blocks each,
/// `H^32` first, from block `b` (unaligned; up to three blocks past the
/// end, into the next field, for lanes whose operand is zero).
///
/// # Safety
/// `b <= 31`.
#[inline]
#[target_feature(enable = "avx512f,vpclmulqdq")]
unsafe fn mul_add_from(sum: &mut WideAcc<Zmm>, w: &Wide, x: __m512i, b: usize) {
    debug_assert!(b < LANES * REGS);
    // The pointers come from the whole `Wide` (not from the `h` field's
    // slice), so reading past a field stays within what they may read.
    let base = core::ptr::from_ref(w).cast::<u8>();
    // SAFETY: `h` and `hk` are followed by `hk` and `tail` (`repr(C)`, no
    // padding between 64-byte arrays): 64 bytes from block `b <= 31` stay
    // inside `w`.
    let (h, hk) = unsafe {
        (
            _mm512_loadu_si512(base.add(core::mem::offset_of!(Wide, h) + 16 * b).cast()),
            _mm512_loadu_si512(base.add(core::mem::offset_of!(Wide, hk) + 16 * b).cast()),
        )
    };
    sum.mul_add_by(Zmm(x), Zmm(h), Zmm(hk));
}

/// The block `v` (a 128-bit integer) in lane `i` of a register, others zero.
#[inline]
#[target_feature(enable = "avx512f")]
fn in_lane(v: __m128i, i: usize) -> __m512i {
    _mm512_maskz_broadcast_i32x4(0xf << (4 * i), v)
}

/// CTR over the last `t` bytes (`64 * (N - 1) < t <= 64 * N`, so `t < 512`)
/// from `ops.counter`, with masked loads and stores, and `E(K, J0)` (the
/// return value) beside it; the associated data in `ops`, the ciphertext (on
/// opening the input, read once) and the lengths block absorbed into `acc`
/// under one reduction. The operands stay in registers: register `i` of
/// them meets the key powers from block `32 - operands + first(i)` of the
/// table.
///
/// # Safety
/// The CPU must support every feature in [`VAES_AVX512_FEATURES`]; `t`
/// bytes at `src` are readable and at `dst` writable, `dst` equal to `src`
/// or not overlapping it; `64 * (N - 1) < t <= 64 * N`; the operands (the
/// blocks of `ops.aad`, of `t` bytes and the lengths) are at most 32.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,vaes,vpclmulqdq,pclmulqdq,aes,ssse3")]
unsafe fn last<const R: usize, const N: usize, const DEC: bool>(
    w: &Wide,
    ops: &LastOps<'_>,
    acc: &mut Block,
    src: *const u8,
    dst: *mut u8,
    t: usize,
) -> Block {
    debug_assert!(N >= 1 && t > 64 * (N - 1) && t <= 64 * N);
    debug_assert!(ops.aad.len() <= WINDOW_AAD_MAX);
    let head = ops.aad.len().div_ceil(16);
    let blocks = t.div_ceil(16);
    let operands = head + blocks + usize::from(ops.lengths.is_some());
    debug_assert!(operands <= LANES * REGS);
    // Table block of the first operand's power, `H^operands`.
    let base = LANES * REGS - operands;
    let zmm = Zmm::token();
    let mut sum = WideAcc::zero(zmm);
    // The running hash joins the first operand: after the last whole
    // chunk's GHASH when it was left to this kernel (its multiplies and
    // reduction then run beside the AES rounds below, which do not wait
    // for them).
    let mut y = lane0(match ops.pending {
        // SAFETY: `CHUNK` readable bytes (`LastOps::pending`).
        Some(p) => unsafe { wide::ghash_chunk::<Zmm, REGS>(zmm, w, load_acc(acc), p) },
        None => load_acc(acc),
    });
    if head > 0 {
        // SAFETY: the bytes of `ops.aad` are readable (masked-off bytes are
        // not accessed).
        let a =
            unsafe { _mm512_maskz_loadu_epi8(first_bytes(ops.aad.len()), ops.aad.as_ptr().cast()) };
        // SAFETY: `base <= 31`.
        unsafe { mul_add_from(&mut sum, w, _mm512_xor_si512(bswap(a), y), base) };
        y = _mm512_setzero_si512();
    }
    // The lengths block: in the free lane after the last ciphertext block,
    // or alone in one more register.
    let lengths = ops
        .lengths
        .map(|l| _mm_set_epi64x((l >> 64) as i64, l as i64));
    let free = blocks % LANES;
    // The GHASH operand of ciphertext register `i` (`y` joins register 0).
    let operand = |i: usize, ct: __m512i, y: __m512i| {
        let mut g = bswap(ct);
        if i == 0 {
            g = _mm512_xor_si512(g, y);
        }
        if let Some(l) = lengths
            && i == N - 1
            && free != 0
        {
            g = _mm512_xor_si512(g, in_lane(l, free));
        }
        g
    };
    // Opening: the ciphertext is read once, hashed now (beside the AES
    // rounds) and kept in memory for the XOR (volatile, so that the
    // registers go to the AES states and round keys: no key spills). It is
    // public, so the copy needs no wipe.
    let mut held = [_mm512_setzero_si512(); N];
    if DEC {
        for (i, h) in held.iter_mut().enumerate() {
            // SAFETY: the bytes of register `i` before `t` are readable
            // (caller); masked-off bytes are not accessed.
            let v =
                unsafe { _mm512_maskz_loadu_epi8(first_bytes(t - 64 * i), src.add(64 * i).cast()) };
            // SAFETY: `h` is an aligned, writable `__m512i`.
            unsafe { core::ptr::write_volatile(h, v) };
            // SAFETY: `base + head + 4 i <= 31`: an operand starts there.
            unsafe { mul_add_from(&mut sum, w, operand(i, v, y), base + head + LANES * i) };
        }
    }
    // J0 beside the counter blocks (on ymm, with the same round key loads:
    // a chain of its own would keep its keys in spills).
    let k0 = wide(&w.rk[0]);
    let j0 = _mm_set_epi64x((ops.j0 >> 64) as i64, ops.j0 as i64);
    let mut j = _mm256_xor_si256(
        _mm256_broadcastsi128_si256(bswap128(j0)),
        _mm512_castsi512_si256(k0),
    );
    let mut c = counter_quad(ops.counter);
    let mut x = [_mm512_setzero_si512(); N];
    for b in x.iter_mut() {
        *b = _mm512_xor_si512(bswap(c), k0);
        c = add32(c, LANES as i32);
    }
    middle_rounds!(R, r => {
        let k = wide(&w.rk[r]);
        j = _mm256_aesenc_epi128(j, _mm512_castsi512_si256(k));
        for b in x.iter_mut() {
            *b = _mm512_aesenc_epi128(*b, k);
        }
    });
    let k = wide(&w.rk[R]);
    let j = _mm256_castsi256_si128(_mm256_aesenclast_epi128(j, _mm512_castsi512_si256(k)));
    for (i, (b, h)) in x.iter().zip(&held).enumerate() {
        let keep = first_bytes(t - 64 * i);
        let v = if DEC {
            // SAFETY: an aligned, readable `__m512i`.
            unsafe { core::ptr::read_volatile(h) }
        } else {
            // SAFETY: the bytes of register `i` before `t` are readable
            // (caller); masked-off bytes are not accessed.
            unsafe { _mm512_maskz_loadu_epi8(keep, src.add(64 * i).cast()) }
        };
        let out = _mm512_maskz_mov_epi8(keep, _mm512_aesenclast_epi128(*b, _mm512_xor_si512(k, v)));
        if t - 64 * i >= 64 {
            // A whole register: a plain store. Masked stores are slow to
            // clear a later load of the caller's key value (on its stack)
            // at the same address modulo 4 KiB (`alias-sweep`: up to 24%
            // at 256 B on Zen 4).
            // SAFETY: the 64 bytes of register `i` are writable (caller).
            unsafe { _mm512_storeu_si512(dst.add(64 * i).cast(), out) };
        } else {
            // SAFETY: the bytes of register `i` before `t` are writable
            // (caller); masked-off bytes are not accessed.
            unsafe { _mm512_mask_storeu_epi8(dst.add(64 * i).cast(), keep, out) };
        }
        if !DEC {
            // SAFETY: as above.
            unsafe { mul_add_from(&mut sum, w, operand(i, out, y), base + head + LANES * i) };
        }
    }
    if let Some(l) = lengths
        && free == 0
    {
        // SAFETY: the lengths block is the last operand: block 31 is `H^1`.
        unsafe { mul_add_from(&mut sum, w, lane0(l), LANES * REGS - 1) };
    }
    store_acc(acc, sum.reduce());
    let mut mask = [0u8; 16];
    // SAFETY: 16 writable bytes.
    unsafe { _mm_storeu_si128(mask.as_mut_ptr().cast(), j) };
    mask
}
