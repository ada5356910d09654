//! The RustCrypto `aead` traits (feature `aead`) give the same bytes as
//! hwcrypt's own API, in place and in/out, and fail opaquely with the output
//! wiped. Run by `.ci/run` as `cargo test -p hwcrypt --features aead`.

use hwcrypt::aead::Aead as HwAead;
use hwcrypt::aead::rustcrypto::aead::inout::InOutBuf;
use hwcrypt::aead::rustcrypto::aead::{Aead, AeadInOut, KeyInit, Payload};
use hwcrypt::aead::rustcrypto::{Aes128Gcm, Aes256Gcm, ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;

const AAD: &[u8] = b"header";

fn message(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

/// Checks one RustCrypto-facing cipher against the hwcrypt AEAD with the same key.
fn check<C: AeadInOut + Aead>(cipher: &C, reference: &impl HwAead, nonce_len: usize) {
    let nonce_bytes: Vec<u8> = (0..nonce_len as u8).collect();
    let nonce = hwcrypt::aead::rustcrypto::aead::Nonce::<C>::try_from(&nonce_bytes[..]).unwrap();
    for len in [0, 1, 15, 16, 17, 255, 256, 1000, 4099] {
        let msg = message(len);
        // Allocating form: ciphertext || tag, equal to hwcrypt's `seal`.
        let sealed = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: &msg,
                    aad: AAD,
                },
            )
            .unwrap();
        assert_eq!(
            sealed,
            reference.seal(&nonce_bytes, AAD, &msg).unwrap(),
            "len {len}"
        );
        let opened = cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: &sealed,
                    aad: AAD,
                },
            )
            .unwrap();
        assert_eq!(opened, msg);

        // In/out with separate buffers.
        let mut out = vec![0xee; len];
        let tag = cipher
            .encrypt_inout_detached(&nonce, AAD, InOutBuf::new(&msg, &mut out).unwrap())
            .unwrap();
        assert_eq!(&out[..], &sealed[..len]);
        assert_eq!(&tag[..], &sealed[len..]);
        let mut back = vec![0xee; len];
        cipher
            .decrypt_inout_detached(&nonce, AAD, InOutBuf::new(&out, &mut back).unwrap(), &tag)
            .unwrap();
        assert_eq!(back, msg);

        // Tampering fails opaquely and wipes the output.
        let mut bad_tag = tag.clone();
        bad_tag[0] ^= 1;
        let mut wiped = vec![0xee; len];
        let err = cipher.decrypt_inout_detached(
            &nonce,
            AAD,
            InOutBuf::new(&out, &mut wiped).unwrap(),
            &bad_tag,
        );
        assert!(err.is_err(), "len {len}");
        assert!(wiped.iter().all(|&b| b == 0), "len {len}: output not wiped");
        assert!(
            cipher
                .decrypt(
                    &nonce,
                    Payload {
                        msg: &sealed,
                        aad: b"other"
                    }
                )
                .is_err()
        );
    }
}

#[test]
fn aes_128_gcm() {
    let key = [0x11; 16];
    check(
        &Aes128Gcm::new(&key.into()),
        &AesGcm::new(&key).unwrap(),
        12,
    );
    assert!(Aes128Gcm::new_from_slice(&[0; 32]).is_err());
}

#[test]
fn aes_256_gcm() {
    let key = [0x22; 32];
    let cipher = Aes256Gcm::new(&key.into());
    assert_eq!(
        cipher.inner().backend(),
        AesGcm::new(&key).unwrap().backend()
    );
    check(&cipher, &AesGcm::new(&key).unwrap(), 12);
}

#[test]
fn chacha20_poly1305() {
    let key = [0x33; 32];
    let reference = hwcrypt::chacha20poly1305::ChaCha20Poly1305::new(&key).unwrap();
    check(
        &<ChaCha20Poly1305 as KeyInit>::new(&key.into()),
        &reference,
        12,
    );
}

#[test]
fn xchacha20_poly1305() {
    let key = [0x44; 32];
    let reference = hwcrypt::chacha20poly1305::XChaCha20Poly1305::new(&key).unwrap();
    check(
        &<XChaCha20Poly1305 as KeyInit>::new(&key.into()),
        &reference,
        24,
    );
}

/// Found in review (2026-11-29): `ChaCha20Poly1305::new(&key)` picked
/// hwcrypt's inherent `new` (a `Result`), so the `chacha20poly1305` crate's
/// own example did not compile; and the wrappers were not `Clone`.
#[test]
fn drop_in_as_the_rustcrypto_crates() {
    use hwcrypt::aead::rustcrypto::aead::{Key, Nonce};
    let key: Key<ChaCha20Poly1305> = [7u8; 32].into();
    let cipher = ChaCha20Poly1305::new(&key).clone();
    let nonce: Nonce<ChaCha20Poly1305> = [0u8; 12].into();
    let ct = cipher.encrypt(&nonce, b"plaintext".as_ref()).unwrap();
    assert_eq!(cipher.decrypt(&nonce, ct.as_ref()).unwrap(), b"plaintext");
    let x = XChaCha20Poly1305::new(&[7u8; 32].into()).clone();
    let xn: Nonce<XChaCha20Poly1305> = [0u8; 24].into();
    let ct = x.encrypt(&xn, b"plaintext".as_ref()).unwrap();
    assert_eq!(x.decrypt(&xn, ct.as_ref()).unwrap(), b"plaintext");
    let g = Aes128Gcm::new(&[1u8; 16].into()).clone();
    let gn = [0u8; 12].into();
    let ct = g.encrypt(&gn, b"x".as_ref()).unwrap();
    let other = Aes256Gcm::new(&[1u8; 32].into()).clone();
    assert!(other.decrypt(&gn, ct.as_ref()).is_err());
}
