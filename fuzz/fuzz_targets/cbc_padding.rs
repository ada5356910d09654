//! CBC decryption with PKCS#7 unpadding of attacker-controlled ciphertext on
//! every backend: never a panic, the same answer as `soft`, and a message
//! that unpads re-encrypts to the same ciphertext; plus `pkcs7_unpad` on
//! arbitrary buffers and block sizes against a plain reference.
#![no_main]

use hwcrypt::Backend;
use hwcrypt::aes::Aes;
use hwcrypt::modes::Cbc;
use hwcrypt::modes::padding::pkcs7_unpad;
use hwcrypt::registry::Algorithm;
use hwcrypt_fuzz::{aes_key_len, backends};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    key_size: u8,
    key: [u8; 32],
    iv: [u8; 16],
    block_size: u16,
    ciphertext: Vec<u8>,
}

/// PKCS#7 as RFC 5652 6.3 says it, written the obvious (variable-time) way.
fn reference_unpad(buf: &[u8], block_size: usize) -> Option<&[u8]> {
    if buf.is_empty() || block_size == 0 || block_size > 255 || buf.len() % block_size != 0 {
        return None;
    }
    let n = usize::from(*buf.last()?);
    if n == 0 || n > block_size || buf[buf.len() - n..].iter().any(|&b| usize::from(b) != n) {
        return None;
    }
    Some(&buf[..buf.len() - n])
}

fuzz_target!(|input: Input| {
    let key = &input.key[..aes_key_len(input.key_size)];
    let ct = &input.ciphertext[..input.ciphertext.len().min(2048)];
    let mut first = None;
    for &backend in backends(Algorithm::Aes) {
        let aes = Aes::with_backend(key, backend).unwrap();
        let r = Cbc::new(aes.clone(), &input.iv).unwrap().decrypt_padded(ct);
        if let Ok(msg) = &r {
            let again = Cbc::new(aes, &input.iv).unwrap().encrypt_padded(msg);
            assert_eq!(again, ct, "{backend}: unpadded message does not re-encrypt");
        }
        match &first {
            None => first = Some(r),
            Some(f) => assert_eq!(f, &r, "{backend} differs from {}", Backend::Soft),
        }
    }
    let bs = usize::from(input.block_size % 300);
    assert_eq!(
        pkcs7_unpad(ct, bs).ok(),
        reference_unpad(ct, bs),
        "pkcs7_unpad disagrees with the reference (block size {bs})"
    );
});
