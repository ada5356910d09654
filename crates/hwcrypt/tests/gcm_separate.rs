//! AES-GCM between separate buffers (`seal_detached`, `open_detached`,
//! `seal_detached_with`, `open_detached_with`): the VAES kernels read the
//! input and write the output in one pass, the others copy first. Every
//! backend this (masked) CPU can run, against in-place `soft`, for every
//! length 0..=2048 and random larger ones, 128/192/256-bit keys, 12-byte
//! and other IV lengths, input and output at random offsets (so the two
//! shapes see every alignment); the input is left unchanged, the bytes
//! around the output untouched, and a failed open zeroes the output.

use hwcrypt::aead::Aead;
use hwcrypt::gcm::AesGcm;
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, Error, cpu};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn runnable() -> Vec<Backend> {
    registry::runnable(Algorithm::AesGcm, cpu::features().expect("HWCRYPT_CPU"))
}

fn bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.random()).collect()
}

/// `len` bytes at a random offset inside a buffer with 40 guard bytes on
/// each side: (buffer, start).
fn placed(rng: &mut StdRng, content: &[u8]) -> (Vec<u8>, usize) {
    let at = 40 + rng.random_range(0..64);
    let mut buf = vec![0xc3; at + content.len() + 40];
    buf[at..at + content.len()].copy_from_slice(content);
    (buf, at)
}

fn guards_intact(buf: &[u8], at: usize, len: usize) -> bool {
    buf[..at].iter().all(|&b| b == 0xc3) && buf[at + len..].iter().all(|&b| b == 0xc3)
}

#[test]
fn separate_buffers_equal_in_place_soft() {
    let mut rng = StdRng::seed_from_u64(0x6c6d_5e9a);
    let mut lengths: Vec<usize> = (0..=2048).collect();
    lengths.extend((0..40).map(|_| rng.random_range(2049..70_000)));
    for backend in runnable() {
        for &len in &lengths {
            let key = bytes(&mut rng, [16, 24, 32][len % 3]);
            let iv_len = if len % 5 == 0 {
                [1, 8, 16, 60][len % 4]
            } else {
                12
            };
            let iv = bytes(&mut rng, iv_len);
            let aad_len = rng.random_range(0..80);
            let aad = bytes(&mut rng, aad_len);
            let pt = bytes(&mut rng, len);
            let soft = AesGcm::with_backend(&key, Backend::Soft).unwrap();
            let k = AesGcm::with_backend(&key, backend).unwrap();
            let mut want = pt.clone();
            let want_tag = soft
                .seal_in_place_detached_with(&iv, &aad, &mut want, 16)
                .unwrap();

            let (input, i_at) = placed(&mut rng, &pt);
            let (mut out, o_at) = placed(&mut rng, &vec![0x5a; len]);
            let tag = if iv_len == 12 {
                k.seal_detached(
                    &iv,
                    &aad,
                    &input[i_at..i_at + len],
                    &mut out[o_at..o_at + len],
                )
                .unwrap()
                .to_vec()
            } else {
                k.seal_detached_with(
                    &iv,
                    &aad,
                    &input[i_at..i_at + len],
                    &mut out[o_at..o_at + len],
                    16,
                )
                .unwrap()
                .as_bytes()
                .to_vec()
            };
            assert!(out[o_at..o_at + len] == want[..], "{backend} seal {len}");
            assert_eq!(tag, want_tag.as_bytes(), "{backend} seal tag {len}");
            assert!(input[i_at..i_at + len] == pt[..] && guards_intact(&out, o_at, len));

            let (input, i_at) = placed(&mut rng, &want);
            let (mut out, o_at) = placed(&mut rng, &vec![0x5a; len]);
            let r = if iv_len == 12 {
                k.open_detached(
                    &iv,
                    &aad,
                    &input[i_at..i_at + len],
                    &tag,
                    &mut out[o_at..o_at + len],
                )
            } else {
                k.open_detached_with(
                    &iv,
                    &aad,
                    &input[i_at..i_at + len],
                    &tag,
                    &mut out[o_at..o_at + len],
                )
            };
            r.unwrap();
            assert!(out[o_at..o_at + len] == pt[..], "{backend} open {len}");
            assert!(guards_intact(&out, o_at, len));
            assert!(
                input[i_at..i_at + len] == want[..],
                "{backend} open: input unchanged"
            );

            // Tampered (a bit of the ciphertext, in the bulk, the 256-byte
            // middle chunk or the tail, or of the tag): the output is
            // zeroed, through both APIs.
            if len > 0 && len % 7 == 0 {
                let mut bad = want.clone();
                let bit = rng.random_range(0..len * 8);
                bad[bit / 8] ^= 1 << (bit % 8);
                let mut out = vec![0x5a; len];
                let r = k.open_detached_with(&iv, &aad, &bad, &tag, &mut out);
                assert!(matches!(r, Err(Error::AuthenticationFailed)));
                assert!(out.iter().all(|&b| b == 0), "{backend} tampered open {len}");
                let mut bad_tag = tag.clone();
                bad_tag[len % 16] ^= 0x80;
                let mut out = vec![0x5a; len];
                let r = if iv_len == 12 {
                    k.open_detached(&iv, &aad, &want, &bad_tag, &mut out)
                } else {
                    k.open_detached_with(&iv, &aad, &want, &bad_tag, &mut out)
                };
                assert!(matches!(r, Err(Error::AuthenticationFailed)));
                assert!(out.iter().all(|&b| b == 0), "{backend} bad tag {len}");
                if iv_len == 12 {
                    let mut out = vec![0x5a; len];
                    let r = k.open_detached(&iv, &aad, &bad, &tag, &mut out);
                    assert!(matches!(r, Err(Error::AuthenticationFailed)));
                    assert!(
                        out.iter().all(|&b| b == 0),
                        "{backend} tampered Aead open {len}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_key_bound_to_12_byte_tags_refuses_a_16_byte_tag_and_zeroes_the_output() {
    for backend in runnable() {
        let mut k = AesGcm::with_backend(&[7; 32], backend).unwrap();
        k.set_tag_len(12).unwrap();
        let pt = [3u8; 1000];
        let mut ct = [0u8; 1000];
        let tag = k
            .seal_detached_with(&[1; 12], b"a", &pt, &mut ct, 12)
            .unwrap();
        assert_eq!(tag.len(), 12);
        let mut out = [0x5a; 1000];
        let long = [tag.as_bytes(), &[0; 4][..]].concat();
        assert!(
            k.open_detached_with(&[1; 12], b"a", &ct, &long, &mut out)
                .is_err()
        );
        assert!(out.iter().all(|&b| b == 0));
        k.open_detached_with(&[1; 12], b"a", &ct, tag.as_bytes(), &mut out)
            .unwrap();
        assert_eq!(out, pt);
    }
}

#[test]
fn separate_buffers_of_different_lengths_are_refused() {
    for backend in runnable() {
        let k = AesGcm::with_backend(&[9; 16], backend).unwrap();
        let mut out = [0x5a; 33];
        assert!(matches!(
            k.seal_detached(&[0; 12], b"", &[1; 32], &mut out),
            Err(Error::LengthMismatch { .. })
        ));
        let r = k.open_detached(&[0; 12], b"", &[1; 32], &[0; 16], &mut out);
        assert!(r.is_err() && out.iter().all(|&b| b == 0));
    }
}
