//! Differential fuzzing of AES-GCM: every backend this CPU runs against
//! `soft` (any IV length 1..=80, AAD and message lengths, in place and to a
//! separate buffer at random offsets), and `soft` against RustCrypto's
//! `aes-gcm` for 12-byte nonces (AES-128, -192, -256). Every sealed message
//! must open on every backend to the same plaintext.
#![no_main]

use aes_gcm::aead::consts::U12;
use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::gcm::AesGcm;
use hwcrypt::registry::Algorithm;
use hwcrypt_fuzz::{Placed, aes_key_len, backends, rustcrypto};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    key_size: u8,
    key: [u8; 32],
    iv: Vec<u8>,
    aad: Vec<u8>,
    in_offset: u8,
    out_offset: u8,
    plaintext: Vec<u8>,
}

/// Seals in place (any IV length); the ciphertext and tag.
fn seal(k: &AesGcm, iv: &[u8], aad: &[u8], pt: &[u8], offset: u8) -> (Vec<u8>, Vec<u8>) {
    let mut buf = Placed::new(pt, offset);
    let tag = if iv.len() == 12 {
        k.seal_in_place_detached(iv, aad, buf.get_mut())
            .unwrap()
            .to_vec()
    } else {
        k.seal_in_place_detached_with(iv, aad, buf.get_mut(), 16)
            .unwrap()
            .as_bytes()
            .to_vec()
    };
    buf.check_guards();
    (buf.get().to_vec(), tag)
}

fuzz_target!(|input: Input| {
    let key = &input.key[..aes_key_len(input.key_size)];
    let mut iv = &input.iv[..input.iv.len().min(80)];
    if iv.is_empty() {
        iv = &[0u8; 12];
    }
    let aad = &input.aad[..input.aad.len().min(1024)];
    let pt = &input.plaintext[..input.plaintext.len().min(4096)];

    let soft = AesGcm::with_backend(key, Backend::Soft).unwrap();
    let (ct, tag) = seal(&soft, iv, aad, pt, input.in_offset);

    if iv.len() == 12 {
        let mut rc = pt.to_vec();
        let rc_tag = match key.len() {
            16 => rustcrypto::seal::<aes_gcm::Aes128Gcm>(key, iv, aad, &mut rc),
            24 => rustcrypto::seal::<aes_gcm::AesGcm<aes::Aes192, U12>>(key, iv, aad, &mut rc),
            _ => rustcrypto::seal::<aes_gcm::Aes256Gcm>(key, iv, aad, &mut rc),
        };
        assert_eq!(
            (&ct, &tag),
            (&rc, &rc_tag),
            "soft differs from RustCrypto aes-gcm"
        );
    }

    for &backend in backends(Algorithm::AesGcm) {
        let k = AesGcm::with_backend(key, backend).unwrap();
        if backend != Backend::Soft {
            let got = seal(&k, iv, aad, pt, input.in_offset);
            assert_eq!(
                got,
                (ct.clone(), tag.clone()),
                "{backend} differs from soft"
            );
        }
        // Opens in place.
        let mut buf = Placed::new(&ct, input.in_offset);
        k.open_in_place_detached_with(iv, aad, buf.get_mut(), &tag)
            .unwrap_or_else(|e| panic!("{backend}: open: {e}"));
        buf.check_guards();
        assert_eq!(buf.get(), pt, "{backend}: open in place");
        // Seal and open to separate buffers (12-byte nonces: the trait).
        if iv.len() == 12 {
            let src = Placed::new(pt, input.in_offset);
            let mut dst = Placed::new(&vec![0xee; pt.len()], input.out_offset);
            let t = k.seal_detached(iv, aad, src.get(), dst.get_mut()).unwrap();
            dst.check_guards();
            assert_eq!(
                (dst.get(), &t[..]),
                (&ct[..], &tag[..]),
                "{backend}: seal_detached"
            );
            let src = Placed::new(&ct, input.in_offset);
            let mut dst = Placed::new(&vec![0xee; pt.len()], input.out_offset);
            k.open_detached(iv, aad, src.get(), &tag, dst.get_mut())
                .unwrap();
            dst.check_guards();
            assert_eq!(dst.get(), pt, "{backend}: open_detached");
        }
    }
});
