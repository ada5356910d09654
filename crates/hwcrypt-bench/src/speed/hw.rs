//! hwcrypt's own workloads, one per cipher and backend.

use super::aead::{self, SealOpen, nonce_of};
use super::catalog::{CBC_STREAMS, Cipher, KeyKind, Mode};
use super::iv_for;
use super::measure::{Workload, bench_key, keys, messages};
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

/// An hwcrypt AEAD key on one backend, for the shared AEAD workloads.
struct HwAead<A> {
    key: A,
    backend: Backend,
    nonce_len: usize,
    make: fn(&[u8], Backend) -> hwcrypt::Result<A>,
}

fn hw_aead<A>(
    make: fn(&[u8], Backend) -> hwcrypt::Result<A>,
    key: &[u8],
    backend: Backend,
    nonce_len: usize,
) -> hwcrypt::Result<HwAead<A>> {
    Ok(HwAead {
        key: make(key, backend)?,
        backend,
        nonce_len,
        make,
    })
}

impl<A: Aead + Send + 'static> SealOpen for HwAead<A> {
    fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        let nonce = nonce_of(n, self.nonce_len);
        self.key
            .seal_in_place_detached(&nonce[..self.nonce_len], aad, buf)
            .expect(SIZED)
    }

    fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
        let nonce = nonce_of(n, self.nonce_len);
        self.key
            .open_in_place_detached(&nonce[..self.nonce_len], aad, buf, tag)
            .is_ok()
    }

    fn rekey(&mut self, key: &[u8]) {
        self.key = (self.make)(key, self.backend).expect(SIZED);
    }
}

/// The workload for `cipher` on `backend` with `len`-byte messages (AEADs
/// with `aad`): the key is made once, a fresh IV / nonce / sector per
/// message.
pub fn workload(
    cipher: &Cipher,
    backend: Backend,
    len: usize,
    aad: &[u8],
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
        Mode::CbcEncMany => messages(
            Aes::with_backend(key, backend)?,
            len * CBC_STREAMS,
            0,
            move |aes, buf, _, n| {
                let mut streams: [Cbc<&Aes>; CBC_STREAMS] = core::array::from_fn(|i| {
                    Cbc::new(&*aes, &iv_for(n * CBC_STREAMS as u64 + i as u64)).expect(SIZED)
                });
                Cbc::encrypt_many(streams.iter_mut().zip(buf.chunks_mut(len))).expect(SIZED)
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
        Mode::Gcm => aead::seal(hw_aead(AesGcm::with_backend, key, backend, 12)?, len, aad),
        Mode::GcmOpen => aead::open(hw_aead(AesGcm::with_backend, key, backend, 12)?, len, aad),
        Mode::ChaCha20Poly1305 => aead::seal(
            hw_aead(ChaCha20Poly1305::with_backend, key, backend, 12)?,
            len,
            aad,
        ),
        Mode::ChaCha20Poly1305Open => aead::open(
            hw_aead(ChaCha20Poly1305::with_backend, key, backend, 12)?,
            len,
            aad,
        ),
        Mode::XChaCha20Poly1305 => aead::seal(
            hw_aead(XChaCha20Poly1305::with_backend, key, backend, 24)?,
            len,
            aad,
        ),
        Mode::Xts => messages(Xts::with_backend(key, backend)?, len, 0, |x, buf, _, n| {
            x.encrypt_sector(n, buf).expect(SIZED)
        }),
    })
}

/// The key-setup workload for `kind` on `backend`: a new key object from
/// the bytes, then its drop (which wipes it); for the connection kinds, one
/// message sealed (with `aad`) in between.
pub fn key_setup(
    kind: KeyKind,
    backend: Backend,
    aad: &[u8],
) -> hwcrypt::Result<Box<dyn Workload>> {
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
        KeyKind::AesGcmSeal(_) => {
            aead::connection(hw_aead(AesGcm::with_backend, key, backend, 12)?, len, aad)
        }
        KeyKind::ChaCha20Poly1305Seal => aead::connection(
            hw_aead(ChaCha20Poly1305::with_backend, key, backend, 12)?,
            len,
            aad,
        ),
    })
}
