//! Unit tests of the `avx512` ChaCha20-Poly1305 backend against the portable
//! code around its batch and path boundaries. Not the cross-backend suites,
//! which live in `crates/hwcrypt/tests/`.

use super::poly1305_ifma::{from_radix44, to_radix44};
use super::*;

/// Poly1305 in the AEAD's shape (`update_padded` of `msg`, then the
/// length block) with the scalar code for the first `lead` bytes, the
/// IFMA lanes for as many whole groups as follow, and the scalar code
/// for the rest; `None` if this CPU lacks the features. The groups go one
/// at a time (`singles` of them) and then as one run on the two chains of
/// [`Ifma::absorb_groups`].
fn mixed(key: &[u8; 32], msg: &[u8], lead: usize, singles: usize) -> Option<[u8; 16]> {
    Avx512::new()?;
    let mut poly = Poly1305::new(key);
    poly.blocks(&msg[..lead]);
    let mut powers = PowersCache::default();
    // SAFETY: the features were detected (checked above).
    let mut v = unsafe { Ifma::new(&poly, powers.get(&poly)) };
    let mut at = lead;
    let groups = (msg.len() - at) / GROUP;
    for _ in 0..singles.min(groups) {
        // SAFETY: the features were detected; 128 bytes of `msg` from `at`.
        unsafe { v.absorb(msg[at..].as_ptr()) };
        at += GROUP;
    }
    let rest = (msg.len() - at) / GROUP;
    // SAFETY: the features were detected; `rest` groups of `msg` from `at`.
    unsafe { v.absorb_groups(msg[at..].as_ptr(), rest) };
    at += rest * GROUP;
    // SAFETY: the features were detected.
    unsafe { v.finish(&mut poly) };
    poly.update_padded(&msg[at..]);
    Some(poly.finish_aead(3, msg.len() as u64))
}

fn reference(key: &[u8; 32], msg: &[u8]) -> [u8; 16] {
    let mut poly = Poly1305::new(key);
    poly.update_padded(msg);
    poly.finish_aead(3, msg.len() as u64)
}

/// A small deterministic generator (xorshift64*), enough for test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next() as u8;
        }
    }
}

#[test]
fn ifma_poly1305_matches_scalar() {
    if Avx512::new().is_none() {
        eprintln!("skipped: this CPU lacks {CHACHA20_AVX512_FEATURES:?}");
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Keys: random, r all ones (the clamped maximum), r zero, s all
    // ones; messages: random, all 0xff, all zero.
    let mut keys = vec![[0xff; 32], [0; 32]];
    let mut k = [0u8; 32];
    k[..16].fill(0xff);
    keys.push(k);
    k = [0; 32];
    k[16..].fill(0xff);
    keys.push(k);
    for _ in 0..12 {
        rng.fill(&mut k);
        keys.push(k);
    }
    for (ki, key) in keys.iter().enumerate() {
        for pattern in 0..3 {
            for len in (0..2200).step_by(if ki < 4 { 1 } else { 37 }) {
                let mut msg = vec![0u8; len];
                match pattern {
                    0 => rng.fill(&mut msg),
                    1 => msg.fill(0xff),
                    _ => {}
                }
                let want = reference(key, &msg);
                let whole = len / 16;
                for lead in [0, 1, 4, whole / 2, whole] {
                    let lead = 16 * lead.min(whole);
                    for singles in [0, 1, 2, usize::MAX] {
                        assert_eq!(
                            mixed(key, &msg, lead, singles),
                            Some(want),
                            "key {ki} pattern {pattern} len {len} lead {lead} singles {singles}"
                        );
                    }
                }
            }
        }
    }
}

/// Keys and blocks built from the radix-2^44 limb edges (0, 1, 2^43,
/// 2^44 - 1; the top limb's 40 message bits likewise), and the portable
/// code's middle-limb carry vector (r = 1 + 2^66) at every block position
/// of a group: the random and all-ones messages above rarely put a lane's
/// partial sums exactly on a carry boundary.
#[test]
fn ifma_poly1305_limb_edges() {
    if Avx512::new().is_none() {
        eprintln!("skipped: this CPU lacks {CHACHA20_AVX512_FEATURES:?}");
        return;
    }
    let edges = [0u128, 1, 1 << 43, (1 << 44) - 1];
    let top = [0u128, 1, 1 << 39, (1 << 40) - 1];
    let mut blocks = Vec::new();
    for l0 in edges {
        for l1 in edges {
            for l2 in top {
                blocks.push((l0 | l1 << 44 | l2 << 88).to_le_bytes());
            }
        }
    }
    let mut keys = Vec::new();
    for r in [
        1u128,
        1 + (1 << 66),
        (1 << 44) - 1,
        1 << 44,
        (1 << 88) - 1,
        u128::MAX,
    ] {
        for s in [0u128, u128::MAX] {
            let mut key = [0u8; 32];
            key[..16].copy_from_slice(&r.to_le_bytes());
            key[16..].copy_from_slice(&s.to_le_bytes());
            keys.push(key);
        }
    }
    let carry_block = [
        0x5c, 0x43, 0x79, 0x0d, 0xe5, 0x35, 0x94, 0xd7, 0x87, 0xf2, 0x1a, 0xca, 0x6b, 0x28, 0xaf,
        0xa1,
    ];
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    for (ki, key) in keys.iter().enumerate() {
        let mut messages = Vec::new();
        for at in 0..GROUP / 16 {
            let mut msg = vec![0u8; 2 * GROUP];
            msg[16 * at..16 * at + 16].copy_from_slice(&carry_block);
            messages.push(msg);
        }
        for b in &blocks {
            messages.push(b.repeat(GROUP / 16 * 3));
        }
        for _ in 0..64 {
            let n = 8 + (rng.next() % 40) as usize;
            let msg: Vec<u8> = (0..n)
                .flat_map(|_| blocks[(rng.next() % blocks.len() as u64) as usize])
                .collect();
            messages.push(msg);
        }
        for (mi, msg) in messages.iter().enumerate() {
            let want = reference(key, msg);
            for lead in [0, 16] {
                for singles in [0, 1, usize::MAX] {
                    assert_eq!(
                        mixed(key, msg, lead, singles),
                        Some(want),
                        "key {ki} message {mi} lead {lead} singles {singles}"
                    );
                }
            }
        }
    }
}

#[test]
fn radix44_round_trip() {
    for h in [
        [0, 0, 0],
        [u64::MAX, u64::MAX, 3],
        [u64::MAX - 4, u64::MAX, 3],
        [0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321, 2],
    ] {
        assert_eq!(from_radix44(to_radix44(h)), h);
    }
    // 2^130 folds to 5.
    assert_eq!(from_radix44([0, 0, 1 << 42]), [5, 0, 0]);
}

/// The row-layout short path and the first long messages, called on the
/// token directly: the dispatcher sends one-shot messages of up to 320
/// bytes to the `avx2` backend wherever BMI2 is there too, so the
/// cross-backend suites no longer reach most of this path.
#[test]
fn short_path_matches_the_portable_aead() {
    let Some(t) = Avx512::new() else {
        eprintln!("skipped: this CPU lacks {CHACHA20_AVX512_FEATURES:?}");
        return;
    };
    let soft = crate::chacha20poly1305::soft_aead;
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for len in (0..=SHORT_MAX + 80).chain([FIRST - 1, FIRST, FIRST + 1, BATCH + 65]) {
        for aad_len in [0, 5, 13, 16, 33] {
            let mut key = [0u32; 8];
            let mut nonce = [0u32; 3];
            for w in key.iter_mut().chain(nonce.iter_mut()) {
                *w = rng.next() as u32;
            }
            let mut aad = vec![0u8; aad_len];
            let mut msg = vec![0u8; len];
            rng.fill(&mut aad);
            rng.fill(&mut msg);
            let mut expect = msg.clone();
            let expect_tag = soft(true, &key, &nonce, &aad, None, &mut expect);
            // Sealed in place and from a separate input.
            let mut ct = msg.clone();
            assert_eq!(
                t.seal(&key, &nonce, &aad, None, &mut ct),
                expect_tag,
                "seal tag, {len} B"
            );
            assert_eq!(ct, expect, "ciphertext, {len} B");
            let mut ct2 = vec![0u8; len];
            assert_eq!(t.seal(&key, &nonce, &aad, Some(&msg), &mut ct2), expect_tag);
            assert_eq!(ct2, expect);
            // Opened (the tag returned is the one computed over the input).
            let mut pt = ct.clone();
            assert_eq!(
                t.open(&key, &nonce, &aad, None, &mut pt),
                expect_tag,
                "open tag, {len} B"
            );
            assert_eq!(pt, msg, "plaintext, {len} B");
        }
    }
}
