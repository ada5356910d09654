//! hwcrypt's own workloads, one per cipher and backend.

use super::catalog::{Cipher, KeyKind, Mode};
use super::measure::{Workload, bench_key, keys, messages};
use super::{AAD, iv_for, nonce_for};
use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::aes::Aes;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;
use hwcrypt::modes::{Cbc, Cfb128, Ctr, Ecb, Ofb, Xts};
use std::hint::black_box;

// Lengths are checked against `Cipher::rejects` before a workload is made;
// a failure inside the loop is a bug in the harness.
const SIZED: &str = "message size checked beforehand";

/// The workload for `cipher` on `backend` with `len`-byte messages: the key
/// is made once, a fresh IV / nonce / sector per message.
pub fn workload(
    cipher: &Cipher,
    backend: Backend,
    len: usize,
) -> hwcrypt::Result<Box<dyn Workload>> {
    let key = &bench_key()[..cipher.key_len];
    Ok(match cipher.mode {
        Mode::Ecb => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, _| Ecb::new(&*aes).encrypt(buf).expect(SIZED),
        ),
        Mode::CbcEnc => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, n| {
                let mut cbc = Cbc::new(&*aes, &iv_for(n)).expect(SIZED);
                cbc.encrypt(buf).expect(SIZED)
            },
        ),
        Mode::CbcDec => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, n| {
                let mut cbc = Cbc::new(&*aes, &iv_for(n)).expect(SIZED);
                cbc.decrypt(buf).expect(SIZED)
            },
        ),
        Mode::Ctr => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, n| {
                Ctr::new(&*aes, &iv_for(n))
                    .and_then(|mut c| c.apply_keystream(buf))
                    .expect(SIZED)
            },
        ),
        Mode::Cfb128 => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, n| Cfb128::new(&*aes, &iv_for(n)).expect(SIZED).encrypt(buf),
        ),
        Mode::Ofb => messages(
            Aes::with_backend(key, backend)?,
            len,
            0,
            |aes, buf, _, n| {
                Ofb::new(&*aes, &iv_for(n))
                    .expect(SIZED)
                    .apply_keystream(buf)
            },
        ),
        Mode::Gcm => messages(
            AesGcm::with_backend(key, backend)?,
            len,
            0,
            |k, buf, _, n| {
                black_box(
                    k.seal_in_place_detached(&nonce_for(n), &AAD, buf)
                        .expect(SIZED),
                );
            },
        ),
        Mode::ChaCha20Poly1305 => messages(
            ChaCha20Poly1305::with_backend(key, backend)?,
            len,
            0,
            |k, buf, _, n| {
                black_box(
                    k.seal_in_place_detached(&nonce_for(n), &AAD, buf)
                        .expect(SIZED),
                );
            },
        ),
        Mode::XChaCha20Poly1305 => messages(
            XChaCha20Poly1305::with_backend(key, backend)?,
            len,
            0,
            |k, buf, _, n| {
                let mut nonce = [0x24u8; 24];
                nonce[16..].copy_from_slice(&n.to_be_bytes());
                black_box(k.seal_in_place_detached(&nonce, &AAD, buf).expect(SIZED));
            },
        ),
        Mode::Xts => messages(Xts::with_backend(key, backend)?, len, 0, |x, buf, _, n| {
            x.encrypt_sector(n, buf).expect(SIZED)
        }),
    })
}

/// The key-setup workload for `kind` on `backend`: a new key object from
/// the bytes, then its drop (which wipes it).
pub fn key_setup(kind: KeyKind, backend: Backend) -> hwcrypt::Result<Box<dyn Workload>> {
    let len = kind.key_len();
    let key = &bench_key()[..len];
    // Fail here, before timing, if the backend cannot build this key.
    Ok(match kind {
        KeyKind::Aes(_) => {
            Aes::with_backend(key, backend)?;
            keys(len, move |k| {
                black_box(Aes::with_backend(k, backend).expect(SIZED));
            })
        }
        KeyKind::AesGcm(_) => {
            AesGcm::with_backend(key, backend)?;
            keys(len, move |k| {
                black_box(AesGcm::with_backend(k, backend).expect(SIZED));
            })
        }
        KeyKind::ChaCha20Poly1305 => {
            ChaCha20Poly1305::with_backend(key, backend)?;
            keys(len, move |k| {
                black_box(ChaCha20Poly1305::with_backend(k, backend).expect(SIZED));
            })
        }
        KeyKind::XChaCha20Poly1305 => {
            XChaCha20Poly1305::with_backend(key, backend)?;
            keys(len, move |k| {
                black_box(XChaCha20Poly1305::with_backend(k, backend).expect(SIZED));
            })
        }
        KeyKind::AesXts(_) => {
            Xts::with_backend(key, backend)?;
            keys(len, move |k| {
                black_box(Xts::with_backend(k, backend).expect(SIZED));
            })
        }
    })
}
