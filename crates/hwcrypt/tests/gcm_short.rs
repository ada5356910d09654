//! AES-GCM's one-pass kernel for short messages (up to 128 bytes with a
//! 12-byte IV and up to 64 bytes of associated data, on every hardware
//! backend): every message length 0..=130 with every associated-data length
//! 0..=66, all key sizes, against `soft`, sealing and opening, in place and
//! between separate buffers, guard bytes around the output, and a wrong
//! tag (or a flipped ciphertext bit) opening to zeros. The lengths run past
//! both limits so the switch to the general path is covered too.

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
        for len in 0..=130 {
            for aad_len in 0..=66 {
                let nonce = bytes(&mut rng, 12);
                let aad = bytes(&mut rng, aad_len);
                let pt = bytes(&mut rng, len);
                let mut want = pt.clone();
                let want_tag = soft
                    .seal_in_place_detached(&nonce, &aad, &mut want)
                    .unwrap();
                for k in &keys {
                    let what = format!("{} key {key_len} len {len} aad {aad_len}", k.backend());
                    // In place.
                    let mut buf = pt.clone();
                    let tag = k.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
                    assert!(buf == want && tag == want_tag, "seal in place: {what}");
                    k.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                        .unwrap();
                    assert!(buf == pt, "open in place: {what}");
                    // Separate buffers, guard bytes around the output.
                    let mut out = vec![0xc3; len + 32];
                    let tag = k
                        .seal_detached(&nonce, &aad, &pt, &mut out[16..16 + len])
                        .unwrap();
                    assert!(
                        out[16..16 + len] == want[..] && tag == want_tag,
                        "seal: {what}"
                    );
                    let guards =
                        |o: &[u8]| o[..16].iter().chain(&o[16 + len..]).all(|&b| b == 0xc3);
                    assert!(guards(&out), "seal guards: {what}");
                    let mut back = vec![0xc3; len + 32];
                    k.open_detached(&nonce, &aad, &want, &tag, &mut back[16..16 + len])
                        .unwrap();
                    assert!(
                        back[16..16 + len] == pt[..] && guards(&back),
                        "open: {what}"
                    );
                    // A wrong tag, or a flipped ciphertext bit: zeros, an error.
                    let mut bad_tag = tag;
                    bad_tag[len % 16] ^= 1 << (aad_len % 8);
                    let mut buf = want.clone();
                    assert!(
                        k.open_in_place_detached(&nonce, &aad, &mut buf, &bad_tag)
                            .is_err()
                    );
                    assert!(buf.iter().all(|&b| b == 0), "bad tag wipes: {what}");
                    if len > 0 {
                        let mut buf = want.clone();
                        buf[(aad_len * 7) % len] ^= 0x80;
                        assert!(
                            k.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                                .is_err()
                        );
                        assert!(buf.iter().all(|&b| b == 0), "bad ciphertext wipes: {what}");
                    }
                }
            }
        }
    }
}
