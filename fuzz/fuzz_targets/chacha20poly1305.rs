//! Differential fuzzing of ChaCha20-Poly1305 and XChaCha20-Poly1305: every
//! backend this CPU runs against `soft`, and `soft` against RustCrypto's
//! `chacha20poly1305`, with random keys, nonces, AAD and message lengths, in
//! place and to separate buffers at random offsets.
#![no_main]

use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::registry::Algorithm;
use hwcrypt_fuzz::{Placed, backends, rustcrypto};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    extended: bool,
    key: [u8; 32],
    nonce: [u8; 24],
    aad: Vec<u8>,
    in_offset: u8,
    out_offset: u8,
    plaintext: Vec<u8>,
}

/// Seal and open, in place and to separate buffers, on one key; the
/// ciphertext and tag.
fn check<A: Aead>(k: &A, nonce: &[u8], aad: &[u8], pt: &[u8], input: &Input) -> (Vec<u8>, Vec<u8>) {
    let name = k.backend();
    let mut buf = Placed::new(pt, input.in_offset);
    let tag = k.seal_in_place_detached(nonce, aad, buf.get_mut()).unwrap();
    buf.check_guards();
    let ct = buf.get().to_vec();
    let src = Placed::new(pt, input.in_offset);
    let mut dst = Placed::new(&vec![0xee; pt.len()], input.out_offset);
    let t = k
        .seal_detached(nonce, aad, src.get(), dst.get_mut())
        .unwrap();
    dst.check_guards();
    assert_eq!((dst.get(), t), (&ct[..], tag), "{name}: seal_detached");
    k.open_in_place_detached(nonce, aad, buf.get_mut(), &tag)
        .unwrap_or_else(|e| panic!("{name}: open: {e}"));
    buf.check_guards();
    assert_eq!(buf.get(), pt, "{name}: open in place");
    let src = Placed::new(&ct, input.in_offset);
    let mut dst = Placed::new(&vec![0xee; pt.len()], input.out_offset);
    k.open_detached(nonce, aad, src.get(), &tag, dst.get_mut())
        .unwrap();
    dst.check_guards();
    assert_eq!(dst.get(), pt, "{name}: open_detached");
    (ct, tag.to_vec())
}

fuzz_target!(|input: Input| {
    let aad = &input.aad[..input.aad.len().min(1024)];
    let pt = &input.plaintext[..input.plaintext.len().min(4096)];
    let key = &input.key;
    let (want, rc) = if input.extended {
        let nonce = &input.nonce[..];
        let soft = XChaCha20Poly1305::with_backend(key, Backend::Soft).unwrap();
        let want = check(&soft, nonce, aad, pt, &input);
        for &b in backends(Algorithm::ChaCha20Poly1305) {
            let got = check(
                &XChaCha20Poly1305::with_backend(key, b).unwrap(),
                nonce,
                aad,
                pt,
                &input,
            );
            assert_eq!(got, want, "{b} differs from soft (XChaCha20-Poly1305)");
        }
        let mut rc = pt.to_vec();
        let t = rustcrypto::seal::<chacha20poly1305::XChaCha20Poly1305>(key, nonce, aad, &mut rc);
        (want, (rc, t))
    } else {
        let nonce = &input.nonce[..12];
        let soft = ChaCha20Poly1305::with_backend(key, Backend::Soft).unwrap();
        let want = check(&soft, nonce, aad, pt, &input);
        for &b in backends(Algorithm::ChaCha20Poly1305) {
            let got = check(
                &ChaCha20Poly1305::with_backend(key, b).unwrap(),
                nonce,
                aad,
                pt,
                &input,
            );
            assert_eq!(got, want, "{b} differs from soft (ChaCha20-Poly1305)");
        }
        let mut rc = pt.to_vec();
        let t = rustcrypto::seal::<chacha20poly1305::ChaCha20Poly1305>(key, nonce, aad, &mut rc);
        (want, (rc, t))
    };
    assert_eq!(want, rc, "soft differs from RustCrypto chacha20poly1305");
});
