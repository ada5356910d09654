//! AES-GCM's one-pass kernels for short messages and last chunks: the
//! `aesni` one for up to 128 bytes with a 12-byte IV and up to 64 bytes of
//! associated data (every hardware backend), and `vaes-avx512`'s masked
//! last chunk (under 512 bytes, with the associated data in its window when
//! there is no whole chunk before it). Every message length 0..=130 with
//! every associated-data length 0..=66, and every length up to 1100 with
//! associated data around the block and window limits, all key sizes,
//! 12-byte and other IVs, against `soft`, sealing and opening, in place and
//! between separate buffers, guard bytes around the output, and a wrong tag
//! (or a flipped ciphertext bit) opening to zeros. The lengths run past
//! every limit so the switches between paths are covered too.

use hwcrypt::aead::Aead;
use hwcrypt::gcm::AesGcm;
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
