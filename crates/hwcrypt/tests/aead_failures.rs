//! How AEAD opens fail, on every backend this (masked) CPU can run:
//!
//! * the AES-GCM tag length is part of the key (16 unless set to 12..=16
//!   with `AesGcm::set_tag_len`): a tag of any other length is refused, so
//!   an attacker cannot shorten the tag a receiver checks (review finding
//!   2 of issue 13);
//! * every failed open, whatever the reason (tag, tag length, nonce length,
//!   buffer lengths), leaves the output zeroed, in place and separate
//!   (review finding 3).

use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, Error, cpu};

fn runnable(algorithm: Algorithm) -> Vec<Backend> {
    registry::runnable(algorithm, cpu::features().expect("HWCRYPT_CPU"))
}

const MSG: &[u8; 40] = b"a message of forty bytes, to be sealed.!";

#[test]
fn gcm_refuses_a_tag_shorter_than_the_keys() {
    for backend in runnable(Algorithm::AesGcm) {
        let k = AesGcm::with_backend(&[3; 16], backend).unwrap();
        assert_eq!(k.tag_len(), 16);
        let iv = [1; 12];
        let mut ct = *MSG;
        let tag = k
            .seal_in_place_detached_with(&iv, b"", &mut ct, 16)
            .unwrap();
        for len in [0, 1, 4, 8, 12, 13, 15] {
            let mut buf = ct;
            let r = k.open_in_place_detached_with(&iv, b"", &mut buf, &tag.as_bytes()[..len]);
            assert!(
                matches!(r, Err(Error::InvalidTagLength { got, .. }) if got == len),
                "{backend}: a {len}-byte prefix of the tag gave {r:?}"
            );
            assert_eq!(buf, [0; 40], "{backend}: {len}-byte tag: output not zeroed");
        }
        let mut buf = ct;
        k.open_in_place_detached_with(&iv, b"", &mut buf, tag.as_bytes())
            .unwrap();
        assert_eq!(&buf, MSG);
    }
}

#[test]
fn gcm_tag_length_is_set_on_the_key() {
    for backend in runnable(Algorithm::AesGcm) {
        let full = AesGcm::with_backend(&[5; 32], backend).unwrap();
        let iv = [2; 12];
        let mut ct = *MSG;
        let full_tag = full
            .seal_in_place_detached_with(&iv, b"aad", &mut ct, 16)
            .unwrap();
        // SP 800-38D allows 4 and 8 bytes only with limits on the number of
        // decryptions per key, which a stateless key cannot keep: refused.
        for bad in [0, 1, 4, 8, 11, 17, 32] {
            let mut k = full.clone();
            let r = k.set_tag_len(bad);
            assert!(
                matches!(r, Err(Error::InvalidTagLength { got, .. }) if got == bad),
                "{r:?}"
            );
            assert_eq!(k.tag_len(), 16);
        }
        for len in 12..=16 {
            let mut k = full.clone();
            k.set_tag_len(len).unwrap();
            assert_eq!(k.tag_len(), len);
            let mut buf = *MSG;
            let tag = k
                .seal_in_place_detached_with(&iv, b"aad", &mut buf, len)
                .unwrap();
            assert_eq!(buf, ct, "{backend}");
            assert_eq!(tag.as_bytes(), &full_tag.as_bytes()[..len], "{backend}");
            // Sealing with another length than the key's is refused too.
            for other in [4, 8, 12, 16].into_iter().filter(|&o| o != len) {
                let r = k.seal_in_place_detached_with(&iv, b"aad", &mut [0; 3], other);
                assert!(matches!(r, Err(Error::InvalidTagLength { .. })), "{r:?}");
            }
            k.open_in_place_detached_with(&iv, b"aad", &mut buf, tag.as_bytes())
                .unwrap();
            assert_eq!(&buf, MSG);
            // The full tag is not this key's length either.
            if len != 16 {
                let mut buf = ct;
                let r = k.open_in_place_detached_with(&iv, b"aad", &mut buf, full_tag.as_bytes());
                assert!(matches!(r, Err(Error::InvalidTagLength { .. })), "{r:?}");
                assert_eq!(buf, [0; 40]);
            }
        }
    }
}

/// Every way `open` can fail, in place and into a separate buffer
/// (prefilled with garbage): the output is all zero afterwards.
fn failed_opens_leave_zeros<A: Aead>(name: &str, k: &A) {
    let nonce = vec![7; A::NONCE_LEN];
    let mut ct = *MSG;
    let tag = k.seal_in_place_detached(&nonce, b"aad", &mut ct).unwrap();
    let mut bad_tag = tag;
    bad_tag[0] ^= 1;
    let long_tag = [&tag[..], &[0]].concat();
    let short_nonce = vec![7; A::NONCE_LEN - 1];
    let long_nonce = vec![7; A::NONCE_LEN + 1];
    let cases: [(&str, &[u8], &[u8]); 7] = [
        ("wrong tag", &nonce, &bad_tag),
        ("empty tag", &nonce, &[]),
        ("12-byte tag", &nonce, &tag[..12]),
        ("15-byte tag", &nonce, &tag[..15]),
        ("17-byte tag", &nonce, &long_tag),
        ("short nonce", &short_nonce, &tag),
        ("long nonce", &long_nonce, &tag),
    ];
    for (what, n, t) in cases {
        let mut buf = ct;
        let r = k.open_in_place_detached(n, b"aad", &mut buf, t);
        assert!(
            r.is_err(),
            "{name} {}: {what}: opened in place",
            k.backend()
        );
        assert_eq!(
            buf,
            [0; 40],
            "{name} {}: {what}: in place left data ({r:?})",
            k.backend()
        );
        let mut out = [0xa5; 40];
        let r = k.open_detached(n, b"aad", &ct, t, &mut out);
        assert!(
            r.is_err(),
            "{name} {}: {what}: opened separate",
            k.backend()
        );
        assert_eq!(
            out,
            [0; 40],
            "{name} {}: {what}: separate left data ({r:?})",
            k.backend()
        );
    }
    // Buffers of different lengths: nothing to decrypt, and the output is
    // still zeroed.
    let mut out = [0xa5; 39];
    let r = k.open_detached(&nonce, b"aad", &ct, &tag, &mut out);
    assert!(
        matches!(r, Err(Error::LengthMismatch { .. })),
        "{name}: {r:?}"
    );
    assert_eq!(
        out,
        [0; 39],
        "{name} {}: length mismatch left data",
        k.backend()
    );
    // And the genuine message opens both ways.
    let mut out = [0; 40];
    k.open_detached(&nonce, b"aad", &ct, &tag, &mut out)
        .unwrap();
    assert_eq!(&out, MSG);
}

#[test]
fn every_failed_open_leaves_the_output_zeroed() {
    for backend in runnable(Algorithm::AesGcm) {
        failed_opens_leave_zeros("aes-gcm", &AesGcm::with_backend(&[9; 16], backend).unwrap());
    }
    for backend in runnable(Algorithm::ChaCha20Poly1305) {
        let k = ChaCha20Poly1305::with_backend(&[9; 32], backend).unwrap();
        failed_opens_leave_zeros("chacha20-poly1305", &k);
        let k = XChaCha20Poly1305::with_backend(&[9; 32], backend).unwrap();
        failed_opens_leave_zeros("xchacha20-poly1305", &k);
    }
}
