//! AES-GCM's one-pass kernels for short messages and last chunks: the
//! `aesni` one for up to 128 bytes with a 12-byte IV and up to 64 bytes of
//! associated data (every hardware backend), and the VAES last-chunk
//! kernels (under 512 bytes on `vaes-avx512`, masked; under 256 on
//! `vaes-avx2`), with the associated data in their window when no whole
//! chunk comes before it. Every message length 0..=130 with
//! every associated-data length 0..=66, and every length up to 1100 with
//! associated data around the block and window limits, all key sizes,
//! 12-byte and other IVs, against `soft`, sealing and opening, in place and
//! between separate buffers, guard bytes around the output, and a wrong tag
//! (or a flipped ciphertext bit) opening to zeros. The lengths run past
//! every limit so the switches between paths are covered too. And the
//! 32-bit counter wrapping at every place inside those kernels (16-byte IVs
//! solved for a chosen `J0`), against plain CTR under soft AES.

use hwcrypt::aead::Aead;
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, cpu};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.random()).collect()
}

#[test]
fn short_messages_equal_soft() {
    let mut rng = StdRng::seed_from_u64(0x5407_6c3a);
    let backends = registry::runnable(Algorithm::AesGcm, cpu::features().expect("HWCRYPT_CPU"));
    for key_len in [16, 24, 32] {
        let key = bytes(&mut rng, key_len);
        let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
        let keys: Vec<AesGcm> = backends
            .iter()
            .filter(|b| **b != Backend::Soft)
            .map(|b| AesGcm::with_backend(&key, *b).unwrap())
            .collect();
        let around = [0, 1, 5, 13, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 80];
        for len in 0..=1100 {
            let aads: Vec<usize> = if len <= 130 {
                (0..=66).collect()
            } else {
                around.to_vec()
            };
            for aad_len in aads {
                let iv_len = if (len + aad_len) % 7 == 0 {
                    [1, 8, 16, 60][len % 4]
                } else {
                    12
                };
                let nonce = bytes(&mut rng, iv_len);
                let aad = bytes(&mut rng, aad_len);
                let pt = bytes(&mut rng, len);
                let mut want = pt.clone();
                let want_tag = soft
                    .seal_in_place_detached_with(&nonce, &aad, &mut want, 16)
                    .unwrap();
                let want_tag = want_tag.as_bytes();
                for k in &keys {
                    let what = format!("{} key {key_len} len {len} aad {aad_len}", k.backend());
                    // In place.
                    let mut buf = pt.clone();
                    let tag = k
                        .seal_in_place_detached_with(&nonce, &aad, &mut buf, 16)
                        .unwrap();
                    assert!(
                        buf == want && tag.as_bytes() == want_tag,
                        "seal in place: {what}"
                    );
                    k.open_in_place_detached_with(&nonce, &aad, &mut buf, tag.as_bytes())
                        .unwrap();
                    assert!(buf == pt, "open in place: {what}");
                    // Separate buffers, guard bytes around the output.
                    let mut out = vec![0xc3; len + 32];
                    let tag = k
                        .seal_detached_with(&nonce, &aad, &pt, &mut out[16..16 + len], 16)
                        .unwrap();
                    assert!(
                        out[16..16 + len] == want[..] && tag.as_bytes() == want_tag,
                        "seal: {what}"
                    );
                    let guards =
                        |o: &[u8]| o[..16].iter().chain(&o[16 + len..]).all(|&b| b == 0xc3);
                    assert!(guards(&out), "seal guards: {what}");
                    let mut back = vec![0xc3; len + 32];
                    k.open_detached_with(
                        &nonce,
                        &aad,
                        &want,
                        tag.as_bytes(),
                        &mut back[16..16 + len],
                    )
                    .unwrap();
                    assert!(
                        back[16..16 + len] == pt[..] && guards(&back),
                        "open: {what}"
                    );
                    // A wrong tag, or a flipped ciphertext bit: zeros, an error.
                    let mut bad_tag = tag.as_bytes().to_vec();
                    bad_tag[len % 16] ^= 1 << (aad_len % 8);
                    let mut buf = want.clone();
                    assert!(
                        k.open_in_place_detached_with(&nonce, &aad, &mut buf, &bad_tag)
                            .is_err()
                    );
                    assert!(buf.iter().all(|&b| b == 0), "bad tag wipes: {what}");
                    if len > 0 {
                        let mut buf = want.clone();
                        buf[(aad_len * 7) % len] ^= 0x80;
                        assert!(
                            k.open_in_place_detached_with(&nonce, &aad, &mut buf, tag.as_bytes())
                                .is_err()
                        );
                        assert!(buf.iter().all(|&b| b == 0), "bad ciphertext wipes: {what}");
                    }
                }
            }
        }
    }
}

/// A key's first one-shot message that needs a wide table runs on
/// `vaes-avx2`'s kernels when the key is `vaes-avx512` and the message is
/// under 2 KiB (the ymm table is cheaper to make); the next such message
/// makes the zmm table. So for lengths on both sides of the limit and of the
/// chunk sizes, a fresh key per case: its first three messages (each sealed
/// then opened, or opened first) against `soft`, and the first as one
/// streamed piece on fresh keys.
#[test]
fn a_fresh_keys_first_messages_equal_soft() {
    let mut rng = StdRng::seed_from_u64(0x0f15_7a11);
    let backends: Vec<Backend> =
        registry::runnable(Algorithm::AesGcm, cpu::features().expect("HWCRYPT_CPU"))
            .into_iter()
            .filter(|b| *b != Backend::Soft)
            .collect();
    let lengths = [
        65, 100, 255, 256, 257, 511, 512, 513, 1024, 1350, 1500, 2047, 2048, 2049, 5000,
    ];
    for key_len in [16, 24, 32] {
        for len in lengths {
            for aad_len in [0, 13, 100] {
                let key = bytes(&mut rng, key_len);
                let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
                // (nonce, associated data, plaintext, ciphertext, tag)
                type Message = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, [u8; 16]);
                let msgs: Vec<Message> = (0..3)
                    .map(|i| {
                        let nonce = bytes(&mut rng, 12);
                        let aad = bytes(&mut rng, aad_len);
                        let pt = bytes(&mut rng, len + i);
                        let mut ct = pt.clone();
                        let tag = soft
                            .seal_in_place_detached_with(&nonce, &aad, &mut ct, 16)
                            .unwrap();
                        let tag: [u8; 16] = tag.as_bytes().try_into().unwrap();
                        (nonce, aad, pt, ct, tag)
                    })
                    .collect();
                for b in &backends {
                    for open_first in [false, true] {
                        let k = AesGcm::with_backend(&key, *b).unwrap();
                        for (i, (nonce, aad, pt, ct, tag)) in msgs.iter().enumerate() {
                            let what = format!(
                                "{b} key {key_len} len {} aad {aad_len} message {i} open first {open_first}",
                                pt.len()
                            );
                            let seal = || {
                                let mut out = vec![0u8; pt.len()];
                                let t = k.seal_detached_with(nonce, aad, pt, &mut out, 16).unwrap();
                                assert!(out == *ct && t.as_bytes() == tag, "seal: {what}");
                            };
                            let open = || {
                                let mut buf = ct.clone();
                                k.open_in_place_detached_with(nonce, aad, &mut buf, tag)
                                    .unwrap();
                                assert!(buf == *pt, "open: {what}");
                            };
                            // The same message as one streamed piece, on a
                            // fresh key of its own (the streaming form's
                            // whole blocks take the same first-message rule).
                            let streamed = || {
                                let mut s =
                                    AesGcmStream::new(AesGcm::with_backend(&key, *b).unwrap());
                                s.start(nonce).unwrap();
                                s.aad(aad).unwrap();
                                let mut buf = pt.clone();
                                s.encrypt(&mut buf).unwrap();
                                assert!(buf == *ct, "streamed seal: {what}");
                                assert!(
                                    s.finish().unwrap().as_bytes() == tag,
                                    "streamed tag: {what}"
                                );
                                let mut s =
                                    AesGcmStream::new(AesGcm::with_backend(&key, *b).unwrap());
                                s.start(nonce).unwrap();
                                s.aad(aad).unwrap();
                                s.decrypt(&mut buf).unwrap();
                                s.verify(tag).unwrap();
                                assert!(buf == *pt, "streamed open: {what}");
                            };
                            if open_first {
                                open();
                                seal();
                            } else {
                                seal();
                                open();
                            }
                            if i == 0 {
                                streamed();
                            }
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The 32-bit counter wrapping inside the one-pass kernels.

/// `x * y` in GF(2^128), GCM's bit order, on big-endian integers (SP
/// 800-38D, Algorithm 1).
fn gmul(x: u128, y: u128) -> u128 {
    let mut z = 0u128;
    let mut v = y;
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = if v & 1 == 1 {
            (v >> 1) ^ (0xe1u128 << 120)
        } else {
            v >> 1
        };
    }
    z
}

/// `h^-1 = h^(2^128 - 2)`.
fn ginv(h: u128) -> u128 {
    let mut r = 1u128 << 127; // 1 in GCM's bit order
    let mut b = h;
    for i in 0..128 {
        if i != 0 {
            r = gmul(r, b);
        }
        b = gmul(b, b);
    }
    r
}

/// `inc32` applied `n` times.
fn inc32(c: u128, n: u32) -> u128 {
    (c & !u128::from(u32::MAX)) | u128::from((c as u32).wrapping_add(n))
}

/// For every length to 1100 and a few past whole chunks, and every place the
/// counter can wrap (before the first block, in the whole chunks, where the
/// last chunk starts, inside it, at the end), a 16-byte IV is solved for a
/// `J0` that puts the wrap there (`J0 = GHASH_H(IV || [128]_128)`, so
/// `IV = (J0 + [128] H) H^-2`); the ciphertext must be plain CTR from
/// `J0 + 1` under soft AES, block by block with the wrap, and every backend
/// must match soft in place and between buffers.
#[test]
fn counter_wraps_inside_the_one_pass_kernels() {
    let mut rng = StdRng::seed_from_u64(0x77a9_0c31);
    let backends: Vec<Backend> =
        registry::runnable(Algorithm::AesGcm, cpu::features().expect("HWCRYPT_CPU"))
            .into_iter()
            .filter(|b| *b != Backend::Soft)
            .collect();
    for key_len in [16, 24, 32] {
        let key = bytes(&mut rng, key_len);
        let aes = hwcrypt::aes::Aes::with_backend(&key, Backend::Soft).unwrap();
        let mut h = [0u8; 16];
        aes.encrypt_block(&mut h);
        let h = u128::from_be_bytes(h);
        let inv = ginv(h);
        let inv2 = gmul(inv, inv);
        let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
        let keys: Vec<AesGcm> = backends
            .iter()
            .map(|b| AesGcm::with_backend(&key, *b).unwrap())
            .collect();
        let lengths = (0usize..=1100).chain([1535, 1536, 1537, 2047, 2048, 2049, 2100, 4100]);
        for len in lengths {
            let blocks = len.div_ceil(16) as u32;
            let (bulk512, bulk256) = ((len / 512 * 32) as u32, (len / 256 * 16) as u32);
            let mut wraps = vec![0, 1, bulk512, bulk512 + 1, bulk256, bulk256 + 1];
            wraps.extend([
                blocks.saturating_sub(1),
                blocks,
                rng.random_range(0..=blocks),
            ]);
            for s in wraps {
                // Block `s` gets counter 0 (its low word wrapped).
                let low = u32::MAX.wrapping_sub(s);
                let j0 = (rng.random::<u128>() & !u128::from(u32::MAX)) | u128::from(low);
                let iv = gmul(j0 ^ gmul(128, h), inv2);
                assert_eq!(gmul(gmul(iv, h) ^ 128, h), j0, "IV solved for J0");
                let iv = iv.to_be_bytes();
                let aad = bytes(&mut rng, [0, 5, 13, 16, 33, 64, 65][len % 7]);
                let pt = bytes(&mut rng, len);
                let mut want = pt.clone();
                for (i, chunk) in want.chunks_mut(16).enumerate() {
                    let mut ks = inc32(j0, 1 + i as u32).to_be_bytes();
                    aes.encrypt_block(&mut ks);
                    chunk.iter_mut().zip(ks).for_each(|(o, k)| *o ^= k);
                }
                let mut buf = pt.clone();
                let want_tag = soft
                    .seal_in_place_detached_with(&iv, &aad, &mut buf, 16)
                    .unwrap();
                assert!(
                    buf == want,
                    "soft is CTR from J0 + 1: len {len} wrap at {s}"
                );
                for k in &keys {
                    let what = format!("{} key {key_len} len {len} wrap at {s}", k.backend());
                    let mut buf = pt.clone();
                    let tag = k
                        .seal_in_place_detached_with(&iv, &aad, &mut buf, 16)
                        .unwrap();
                    assert!(buf == want && tag == want_tag, "seal: {what}");
                    let mut back = vec![0u8; len];
                    k.open_detached_with(&iv, &aad, &want, tag.as_bytes(), &mut back)
                        .unwrap();
                    assert!(back == pt, "open: {what}");
                }
            }
        }
    }
}
