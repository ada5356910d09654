//! The same ciphers from other libraries (feature `peers`), each driven the
//! way its API is meant to be used for one message at a time: key made
//! once, the IV / nonce reset per message without a new key schedule.

use super::aead::{self, SealOpen, Shape, nonce_of};
use super::catalog::{CBC_STREAMS, Cipher, KeyKind, Mode};
use super::measure::{Workload, bench_key, keys, messages};
use super::{Implementation, PeerInfo, iv_for};
use std::hint::black_box;

/// A peer library.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) name: &'static str,
    covers: &'static str,
}

/// Every peer, in the order its rows appear.
pub(crate) const PEERS: &[Peer] = &[
    Peer {
        name: "openssl",
        covers: "every cipher but XChaCha20-Poly1305 (EVP)",
    },
    Peer {
        name: "ring",
        covers: "AES-GCM and ChaCha20-Poly1305 (ring has no raw AES modes, no XTS)",
    },
    Peer {
        name: "aws-lc-rs",
        covers: "AES-GCM, ChaCha20-Poly1305, AES ECB/CTR/CFB/OFB (its CBC always pads; no XTS)",
    },
    Peer {
        name: "graviola",
        covers: "AES-128/256-GCM, ChaCha20-Poly1305, XChaCha20-Poly1305 (no raw AES modes, no XTS)",
    },
    Peer {
        name: "rustcrypto",
        covers: "aes + ecb/cbc/ctr/cfb-mode/ofb, aes-gcm, chacha20poly1305, xts-mode",
    },
];

pub(crate) fn implementation(p: &Peer) -> Implementation {
    Implementation {
        name: p.name.to_string(),
        library: p.name,
        backend: None,
    }
}

pub(crate) fn info(p: &Peer) -> PeerInfo {
    let version = match p.name {
        "openssl" => format!("openssl crate 0.10, {}", openssl::version::version()),
        "ring" => "ring 0.17".into(),
        "aws-lc-rs" => "aws-lc-rs 1.19 (AWS-LC built from source)".into(),
        "graviola" => "graviola 0.4".into(),
        _ => "aes 0.9, ctr 0.10, cbc 0.2, ecb 0.2, cfb-mode 0.9, ofb 0.7, aes-gcm 0.11, \
              chacha20poly1305 0.11, xts-mode 0.6"
            .into(),
    };
    PeerInfo {
        name: p.name,
        version,
        covers: p.covers,
    }
}

type Made = Result<Box<dyn Workload>, String>;

const OK: &str = "valid sizes and keys";

/// The workload of `peer` for `cipher` with `len`-byte messages (AEADs with
/// `aad`); `None` if the peer does not implement the cipher.
pub(crate) fn workload(peer: &str, cipher: &Cipher, len: usize, aad: &[u8]) -> Option<Made> {
    if cipher.mode == Mode::CbcEncMany {
        // No peer encrypts several CBC streams in one call: its CBC
        // encryption of the streams one after another (each a message with
        // its own IV), which is what its users do.
        let serial = Cipher {
            mode: Mode::CbcEnc,
            ..*cipher
        };
        let made = workload(peer, &serial, len, aad)?;
        return Some(made.map(|w| Box::new(Streams(w)) as Box<dyn Workload>));
    }
    if let Some(made) = aead_cell(peer, cipher, len, aad) {
        return Some(made);
    }
    match peer {
        "openssl" => ossl::workload(cipher, len),
        "aws-lc-rs" => awslc::workload(cipher, len),
        "rustcrypto" => rc::workload(cipher, len),
        _ => None,
    }
}

/// A serial workload run [`CBC_STREAMS`] times per operation.
struct Streams(Box<dyn Workload>);

impl Workload for Streams {
    fn run(&mut self, count: u64) {
        self.0.run(count * CBC_STREAMS as u64);
    }
}

/// The key-setup workload of `peer` for `kind` (the connection kinds seal
/// with `aad`); `None` if not implemented.
pub(crate) fn key_setup(peer: &str, kind: KeyKind, aad: &[u8]) -> Option<Made> {
    let mode = match kind {
        KeyKind::AesGcmSeal(_) => Some(Mode::Gcm),
        KeyKind::ChaCha20Poly1305Seal => Some(Mode::ChaCha20Poly1305),
        _ => None,
    };
    if let Some(mode) = mode {
        let len = kind.key_len();
        return aead_workload(peer, mode, &bench_key()[..len], Shape::Connection, aad);
    }
    match peer {
        "openssl" => ossl::key_setup(kind),
        "ring" => ring_aead::key_setup(kind),
        "aws-lc-rs" => awslc::key_setup(kind),
        "graviola" => grav::key_setup(kind),
        "rustcrypto" => rc::key_setup(kind),
        _ => None,
    }
}

/// `peer`'s AEAD workload of `shape` for the seal mode `mode` (AES-GCM,
/// ChaCha20-Poly1305, XChaCha20-Poly1305); `None` if the peer lacks it.
fn aead_workload(peer: &str, mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
    match peer {
        "openssl" => ossl::aead(mode, key, shape, aad),
        "ring" => ring_aead::aead(mode, key, shape, aad),
        "aws-lc-rs" => awslc::aead(mode, key, shape, aad),
        "graviola" => grav::aead(mode, key, shape, aad),
        "rustcrypto" => rc::aead(mode, key, shape, aad),
        _ => None,
    }
}

/// The AEAD workload of `peer` for `c` (sealing or opening), if it is an AEAD.
fn aead_cell(peer: &str, c: &Cipher, len: usize, aad: &[u8]) -> Option<Made> {
    let (mode, shape) = match c.mode {
        Mode::Gcm | Mode::ChaCha20Poly1305 | Mode::XChaCha20Poly1305 => (c.mode, Shape::Seal(len)),
        Mode::GcmOpen => (Mode::Gcm, Shape::Open(len)),
        Mode::ChaCha20Poly1305Open => (Mode::ChaCha20Poly1305, Shape::Open(len)),
        _ => return None,
    };
    aead_workload(peer, mode, &bench_key()[..c.key_len], shape, aad)
}

fn tag16(t: &[u8]) -> [u8; 16] {
    t.try_into().expect(OK)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

mod ossl {
    use super::*;
    use openssl::cipher::{Cipher as Evp, CipherRef};
    use openssl::cipher_ctx::CipherCtx;

    fn evp(mode: Mode, key_len: usize) -> Option<&'static CipherRef> {
        Some(match (mode, key_len) {
            (Mode::Ecb, 16) => Evp::aes_128_ecb(),
            (Mode::Ecb, 24) => Evp::aes_192_ecb(),
            (Mode::Ecb, 32) => Evp::aes_256_ecb(),
            (Mode::CbcEnc | Mode::CbcDec, 16) => Evp::aes_128_cbc(),
            (Mode::CbcEnc | Mode::CbcDec, 24) => Evp::aes_192_cbc(),
            (Mode::CbcEnc | Mode::CbcDec, 32) => Evp::aes_256_cbc(),
            (Mode::Ctr, 16) => Evp::aes_128_ctr(),
            (Mode::Ctr, 24) => Evp::aes_192_ctr(),
            (Mode::Ctr, 32) => Evp::aes_256_ctr(),
            (Mode::Cfb128, 16) => Evp::aes_128_cfb128(),
            (Mode::Cfb128, 24) => Evp::aes_192_cfb128(),
            (Mode::Cfb128, 32) => Evp::aes_256_cfb128(),
            (Mode::Ofb, 16) => Evp::aes_128_ofb(),
            (Mode::Ofb, 24) => Evp::aes_192_ofb(),
            (Mode::Ofb, 32) => Evp::aes_256_ofb(),
            (Mode::Gcm, 16) => Evp::aes_128_gcm(),
            (Mode::Gcm, 24) => Evp::aes_192_gcm(),
            (Mode::Gcm, 32) => Evp::aes_256_gcm(),
            (Mode::ChaCha20Poly1305, _) => Evp::chacha20_poly1305(),
            (Mode::Xts, 32) => Evp::aes_128_xts(),
            (Mode::Xts, 64) => Evp::aes_256_xts(),
            _ => return None,
        })
    }

    fn ctx(cipher: &'static CipherRef, key: &[u8], decrypt: bool) -> Result<CipherCtx, String> {
        let mut ctx = CipherCtx::new().map_err(err)?;
        if decrypt {
            ctx.decrypt_init(Some(cipher), Some(key), None)
        } else {
            ctx.encrypt_init(Some(cipher), Some(key), None)
        }
        .map_err(err)?;
        ctx.set_padding(false);
        Ok(ctx)
    }

    /// One EVP context for sealing and opening (re-initialised with a new
    /// nonce per message, as long-lived OpenSSL users do).
    struct Evp1(CipherCtx);

    impl SealOpen for Evp1 {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            let ctx = &mut self.0;
            ctx.encrypt_init(None, None, Some(&nonce_of(n, 12)[..12]))
                .expect(OK);
            ctx.cipher_update(aad, None).expect(OK);
            ctx.cipher_update_inplace(buf, buf.len()).expect(OK);
            ctx.cipher_final(&mut [0u8; 16]).expect(OK);
            let mut tag = [0u8; 16];
            ctx.tag(&mut tag).expect(OK);
            tag
        }

        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let ctx = &mut self.0;
            ctx.decrypt_init(None, None, Some(&nonce_of(n, 12)[..12]))
                .expect(OK);
            ctx.cipher_update(aad, None).expect(OK);
            ctx.cipher_update_inplace(buf, buf.len()).expect(OK);
            ctx.set_tag(tag).expect(OK);
            ctx.cipher_final(&mut [0u8; 16]).is_ok()
        }

        fn rekey(&mut self, key: &[u8]) {
            self.0.encrypt_init(None, Some(key), None).expect(OK);
        }
    }

    pub(super) fn aead(mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
        let evp = match mode {
            Mode::Gcm | Mode::ChaCha20Poly1305 => evp(mode, key.len())?,
            _ => return None,
        };
        Some(ctx(evp, key, false).map(|c| aead::build(Evp1(c), shape, key.len(), aad)))
    }

    pub(super) fn workload(c: &Cipher, len: usize) -> Option<Made> {
        let evp = evp(c.mode, c.key_len)?;
        let key = &bench_key()[..c.key_len];
        let mode = c.mode;
        let made = ctx(evp, key, mode == Mode::CbcDec).map(|ctx| {
            // EVP_CipherUpdate wants room for one block more than the input.
            messages(ctx, len, 16, move |ctx, buf, len, n| match mode {
                Mode::Ecb => {
                    ctx.cipher_update_inplace(buf, len).expect(OK);
                }
                Mode::CbcDec => {
                    ctx.decrypt_init(None, None, Some(&iv_for(n))).expect(OK);
                    ctx.cipher_update_inplace(buf, len).expect(OK);
                }
                _ => {
                    ctx.encrypt_init(None, None, Some(&iv_for(n))).expect(OK);
                    ctx.cipher_update_inplace(buf, len).expect(OK);
                }
            })
        });
        Some(made)
    }

    pub(super) fn key_setup(kind: KeyKind) -> Option<Made> {
        let evp = match kind {
            KeyKind::Aes(n) => evp(Mode::Ecb, n)?,
            KeyKind::AesGcm(n) => evp(Mode::Gcm, n)?,
            KeyKind::ChaCha20Poly1305 => evp(Mode::ChaCha20Poly1305, 32)?,
            KeyKind::AesXts(n) => evp(Mode::Xts, n)?,
            KeyKind::XChaCha20Poly1305 | KeyKind::AesGcmSeal(_) | KeyKind::ChaCha20Poly1305Seal => {
                return None;
            }
        };
        let len = kind.key_len();
        // The EVP context is reused: a new key on an existing context is what
        // a long-lived OpenSSL user pays (allocation excluded).
        Some(ctx(evp, &bench_key()[..len], false).map(|mut ctx| {
            keys(len, move |k| {
                ctx.encrypt_init(None, Some(k), None).expect(OK);
                black_box(&mut ctx);
            })
        }))
    }
}

mod ring_aead {
    use super::*;
    use ring::aead::{
        AES_128_GCM, AES_256_GCM, Aad, Algorithm, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag,
        UnboundKey,
    };

    fn alg(mode: Mode, key_len: usize) -> Option<&'static Algorithm> {
        match (mode, key_len) {
            (Mode::Gcm, 16) => Some(&AES_128_GCM),
            (Mode::Gcm, 32) => Some(&AES_256_GCM),
            (Mode::ChaCha20Poly1305, _) => Some(&CHACHA20_POLY1305),
            _ => None,
        }
    }

    struct Ring(LessSafeKey, &'static Algorithm);

    impl SealOpen for Ring {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            let nonce = Nonce::try_assume_unique_for_key(&nonce_of(n, 12)[..12]).expect(OK);
            let tag = self
                .0
                .seal_in_place_separate_tag(nonce, Aad::from(aad), buf);
            tag16(tag.expect(OK).as_ref())
        }

        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let nonce = Nonce::try_assume_unique_for_key(&nonce_of(n, 12)[..12]).expect(OK);
            self.0
                .open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(*tag), buf, 0..)
                .is_ok()
        }

        fn rekey(&mut self, key: &[u8]) {
            self.0 = LessSafeKey::new(UnboundKey::new(self.1, key).expect(OK));
        }
    }

    pub(super) fn aead(mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
        let alg = alg(mode, key.len())?;
        let k = UnboundKey::new(alg, key).map_err(err);
        Some(k.map(|k| aead::build(Ring(LessSafeKey::new(k), alg), shape, key.len(), aad)))
    }

    pub(super) fn key_setup(kind: KeyKind) -> Option<Made> {
        let alg = match kind {
            KeyKind::AesGcm(n) => alg(Mode::Gcm, n)?,
            KeyKind::ChaCha20Poly1305 => alg(Mode::ChaCha20Poly1305, 32)?,
            _ => return None,
        };
        Some(Ok(keys(kind.key_len(), move |k| {
            black_box(LessSafeKey::new(UnboundKey::new(alg, k).expect(OK)));
        })))
    }
}

mod grav {
    use super::*;
    use graviola::aead::{AesGcm, ChaCha20Poly1305, XChaCha20Poly1305};

    fn key32(key: &[u8]) -> [u8; 32] {
        key.try_into().expect(OK)
    }

    /// graviola's three AEADs behind one `SealOpen`. Not boxed: a box would
    /// add an allocation to every new key of the connection rows.
    #[allow(clippy::large_enum_variant)]
    enum Grav {
        Gcm(AesGcm),
        ChaCha(ChaCha20Poly1305),
        XChaCha(XChaCha20Poly1305),
    }

    impl SealOpen for Grav {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            let mut tag = [0u8; 16];
            let nonce = nonce_of(n, 24);
            let n12: &[u8; 12] = nonce[..12].try_into().expect(OK);
            match self {
                Grav::Gcm(k) => k.encrypt(n12, aad, buf, &mut tag),
                Grav::ChaCha(k) => k.encrypt(n12, aad, buf, &mut tag),
                Grav::XChaCha(k) => k.encrypt(&nonce, aad, buf, &mut tag),
            }
            tag
        }

        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let nonce = nonce_of(n, 24);
            let n12: &[u8; 12] = nonce[..12].try_into().expect(OK);
            match self {
                Grav::Gcm(k) => k.decrypt(n12, aad, buf, tag).is_ok(),
                Grav::ChaCha(k) => k.decrypt(n12, aad, buf, tag).is_ok(),
                Grav::XChaCha(k) => k.decrypt(&nonce, aad, buf, tag).is_ok(),
            }
        }

        fn rekey(&mut self, key: &[u8]) {
            *self = match self {
                Grav::Gcm(_) => Grav::Gcm(AesGcm::new(key)),
                Grav::ChaCha(_) => Grav::ChaCha(ChaCha20Poly1305::new(key32(key))),
                Grav::XChaCha(_) => Grav::XChaCha(XChaCha20Poly1305::new(key32(key))),
            };
        }
    }

    pub(super) fn aead(mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
        // Where its assembly cannot run, graviola has no rows.
        if !graviola::util::is_cpu_supported() {
            return None;
        }
        let k = match (mode, key.len()) {
            (Mode::Gcm, 16 | 32) => Grav::Gcm(AesGcm::new(key)),
            (Mode::ChaCha20Poly1305, _) => Grav::ChaCha(ChaCha20Poly1305::new(key32(key))),
            (Mode::XChaCha20Poly1305, _) => Grav::XChaCha(XChaCha20Poly1305::new(key32(key))),
            _ => return None,
        };
        Some(Ok(aead::build(k, shape, key.len(), aad)))
    }

    pub(super) fn key_setup(kind: KeyKind) -> Option<Made> {
        // Where its assembly cannot run, graviola has no rows.
        if !graviola::util::is_cpu_supported() {
            return None;
        }
        Some(Ok(match kind {
            KeyKind::AesGcm(16 | 32) => keys(kind.key_len(), |k| {
                black_box(AesGcm::new(k));
            }),
            KeyKind::ChaCha20Poly1305 => keys(32, |k| {
                black_box(ChaCha20Poly1305::new(key32(k)));
            }),
            KeyKind::XChaCha20Poly1305 => keys(32, |k| {
                black_box(XChaCha20Poly1305::new(key32(k)));
            }),
            _ => return None,
        }))
    }
}

mod awslc {
    use super::*;
    use aws_lc_rs::aead::{
        AES_128_GCM, AES_256_GCM, Aad, Algorithm, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey,
    };
    use aws_lc_rs::cipher::{
        AES_128, AES_192, AES_256, Algorithm as CipherAlg, EncryptingKey, EncryptionContext,
        UnboundCipherKey,
    };
    use aws_lc_rs::iv::FixedLength;

    fn aead_alg(mode: Mode, key_len: usize) -> Option<&'static Algorithm> {
        match (mode, key_len) {
            (Mode::Gcm, 16) => Some(&AES_128_GCM),
            (Mode::Gcm, 32) => Some(&AES_256_GCM),
            (Mode::ChaCha20Poly1305, _) => Some(&CHACHA20_POLY1305),
            _ => None,
        }
    }

    fn aes(key_len: usize) -> &'static CipherAlg {
        match key_len {
            16 => &AES_128,
            24 => &AES_192,
            _ => &AES_256,
        }
    }

    fn encrypting_key(mode: Mode, key: &[u8]) -> Option<Result<EncryptingKey, String>> {
        if !matches!(mode, Mode::Ecb | Mode::Ctr | Mode::Cfb128 | Mode::Ofb) {
            return None;
        }
        let unbound = match UnboundCipherKey::new(aes(key.len()), key) {
            Ok(k) => k,
            Err(e) => return Some(Err(err(e))),
        };
        let k = match mode {
            Mode::Ecb => EncryptingKey::ecb(unbound),
            Mode::Ctr => EncryptingKey::ctr(unbound),
            Mode::Cfb128 => EncryptingKey::cfb128(unbound),
            Mode::Ofb => EncryptingKey::ofb(unbound),
            _ => return None,
        };
        Some(k.map_err(err))
    }

    struct AwsLc(LessSafeKey, &'static Algorithm);

    impl SealOpen for AwsLc {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            let nonce = Nonce::try_assume_unique_for_key(&nonce_of(n, 12)[..12]).expect(OK);
            let tag = self
                .0
                .seal_in_place_separate_tag(nonce, Aad::from(aad), buf);
            tag16(tag.expect(OK).as_ref())
        }

        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let nonce = Nonce::try_assume_unique_for_key(&nonce_of(n, 12)[..12]).expect(OK);
            self.0
                .open_in_place_separate_tag(nonce, Aad::from(aad), tag, buf)
                .is_ok()
        }

        fn rekey(&mut self, key: &[u8]) {
            self.0 = LessSafeKey::new(UnboundKey::new(self.1, key).expect(OK));
        }
    }

    pub(super) fn aead(mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
        let alg = aead_alg(mode, key.len())?;
        let k = UnboundKey::new(alg, key).map_err(err);
        Some(k.map(|k| aead::build(AwsLc(LessSafeKey::new(k), alg), shape, key.len(), aad)))
    }

    pub(super) fn workload(c: &Cipher, len: usize) -> Option<Made> {
        let key = &bench_key()[..c.key_len];
        let mode = c.mode;
        let k = encrypting_key(mode, key)?;
        Some(k.map(|k| {
            messages(k, len, 0, move |k, buf, _, n| {
                let context = if mode == Mode::Ecb {
                    EncryptionContext::None
                } else {
                    EncryptionContext::Iv128(FixedLength::from(iv_for(n)))
                };
                black_box(k.less_safe_encrypt(buf, context).expect(OK));
            })
        }))
    }

    pub(super) fn key_setup(kind: KeyKind) -> Option<Made> {
        let len = kind.key_len();
        match kind {
            KeyKind::AesGcm(_) | KeyKind::ChaCha20Poly1305 => {
                let mode = if kind == KeyKind::ChaCha20Poly1305 {
                    Mode::ChaCha20Poly1305
                } else {
                    Mode::Gcm
                };
                let alg = aead_alg(mode, len)?;
                Some(Ok(keys(len, move |k| {
                    black_box(LessSafeKey::new(UnboundKey::new(alg, k).expect(OK)));
                })))
            }
            KeyKind::Aes(_) => Some(Ok(keys(len, move |k| {
                black_box(encrypting_key(Mode::Ctr, k).and_then(Result::ok).expect(OK));
            }))),
            _ => None,
        }
    }
}

mod rc {
    use super::*;
    use aes::cipher::common::InnerInit;
    use aes::cipher::consts::U16;
    use aes::cipher::{
        Array, Block, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt,
        InOutBuf, InnerIvInit, KeyInit, SetIvState, StreamCipherCore,
    };
    use aes::{Aes128, Aes192, Aes256};
    use aes_gcm::aead::AeadInOut;
    use aes_gcm::{Aes128Gcm, Aes256Gcm};
    use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};

    /// Splits a buffer into whole blocks and the rest.
    fn split(buf: &mut [u8]) -> (InOutBuf<'_, '_, Array<u8, U16>>, InOutBuf<'_, '_, u8>) {
        InOutBuf::from(buf).into_chunks::<U16>()
    }

    /// XORs one keystream block into the tail of a message.
    fn xor_tail(mut tail: InOutBuf<'_, '_, u8>, ks: &Block<Aes128>) {
        let n = tail.len();
        if n > 0 {
            let mut t = [0u8; 16];
            t[..n].copy_from_slice(tail.get_in());
            for (a, b) in t.iter_mut().zip(ks.iter()) {
                *a ^= b;
            }
            tail.get_out().copy_from_slice(&t[..n]);
        }
    }

    fn modes<C>(mode: Mode, key: &[u8], len: usize) -> Option<Made>
    where
        C: BlockCipherEncrypt<BlockSize = U16>
            + BlockCipherDecrypt<BlockSize = U16>
            + KeyInit
            + Clone
            + Send
            + 'static,
    {
        let cipher = || C::new_from_slice(key).map_err(err);
        let made = match mode {
            Mode::Ecb => cipher().map(|c| {
                messages(
                    ecb::Encryptor::<C>::inner_init(c),
                    len,
                    0,
                    |e, buf, _, _| e.encrypt_blocks_inout(split(buf).0),
                )
            }),
            Mode::CbcEnc => cipher().map(|c| {
                let e = cbc::Encryptor::<C>::inner_iv_init(c, &Default::default());
                messages(e, len, 0, |e, buf, _, n| {
                    e.set_iv(&Array::from(iv_for(n)));
                    e.encrypt_blocks_inout(split(buf).0)
                })
            }),
            Mode::CbcDec => cipher().map(|c| {
                let d = cbc::Decryptor::<C>::inner_iv_init(c, &Default::default());
                messages(d, len, 0, |d, buf, _, n| {
                    d.set_iv(&Array::from(iv_for(n)));
                    d.decrypt_blocks_inout(split(buf).0)
                })
            }),
            Mode::Ctr => cipher().map(|c| {
                let core = ctr::CtrCore::<C, ctr::flavors::Ctr128BE>::inner_iv_init(
                    c,
                    &Default::default(),
                );
                messages(core, len, 0, |core, buf, _, n| {
                    core.set_iv(&Array::from(iv_for(n)));
                    let (blocks, tail) = split(buf);
                    core.apply_keystream_blocks_inout(blocks);
                    let mut ks = Block::<Aes128>::default();
                    if !tail.is_empty() {
                        core.write_keystream_block(&mut ks);
                    }
                    xor_tail(tail, &ks);
                })
            }),
            Mode::Ofb => cipher().map(|c| {
                let core = ofb::OfbCore::<C>::inner_iv_init(c, &Default::default());
                messages(core, len, 0, |core, buf, _, n| {
                    core.set_iv(&Array::from(iv_for(n)));
                    let (blocks, tail) = split(buf);
                    core.apply_keystream_blocks_inout(blocks);
                    let mut ks = Block::<Aes128>::default();
                    if !tail.is_empty() {
                        core.write_keystream_block(&mut ks);
                    }
                    xor_tail(tail, &ks);
                })
            }),
            Mode::Cfb128 => cipher().map(|c| {
                let e = cfb_mode::Encryptor::<C>::inner_iv_init(c, &Default::default());
                messages(e, len, 0, |e, buf, _, n| {
                    e.set_iv(&Array::from(iv_for(n)));
                    let (blocks, mut tail) = split(buf);
                    e.encrypt_blocks_inout(blocks);
                    let t = tail.len();
                    if t > 0 {
                        let mut b = Block::<Aes128>::default();
                        b[..t].copy_from_slice(tail.get_in());
                        e.encrypt_block(&mut b);
                        tail.get_out().copy_from_slice(&b[..t]);
                    }
                })
            }),
            Mode::Xts => {
                let (k1, k2) = key.split_at(key.len() / 2);
                match (C::new_from_slice(k1), C::new_from_slice(k2)) {
                    (Ok(a), Ok(b)) => Ok(messages(
                        xts_mode::Xts128::<C>::new(a, b),
                        len,
                        0,
                        |x, buf, _, n| {
                            x.encrypt_sector(buf, xts_mode::get_tweak_default(u128::from(n)))
                        },
                    )),
                    _ => Err("bad XTS key length".into()),
                }
            }
            _ => return None,
        };
        Some(made)
    }

    /// A RustCrypto AEAD (`aes-gcm`, `chacha20poly1305`).
    struct Rc<A>(A);

    fn nonce<A: AeadInOut>(n: u64) -> Array<u8, A::NonceSize> {
        let mut a = Array::<u8, A::NonceSize>::default();
        let len = a.len();
        a.copy_from_slice(&nonce_of(n, len)[..len]);
        a
    }

    impl<A: AeadInOut + KeyInit + Send + 'static> SealOpen for Rc<A> {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            let tag = self
                .0
                .encrypt_inout_detached(&nonce::<A>(n), aad, buf.into());
            tag16(&tag.expect(OK))
        }

        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let tag = Array::try_from(&tag[..]).expect(OK);
            self.0
                .decrypt_inout_detached(&nonce::<A>(n), aad, buf.into(), &tag)
                .is_ok()
        }

        fn rekey(&mut self, key: &[u8]) {
            self.0 = A::new_from_slice(key).expect(OK);
        }
    }

    fn rc<A: AeadInOut + KeyInit + Send + 'static>(key: &[u8], shape: Shape, aad: &[u8]) -> Made {
        let k = Rc(A::new_from_slice(key).map_err(err)?);
        Ok(aead::build(k, shape, key.len(), aad))
    }

    pub(super) fn aead(mode: Mode, key: &[u8], shape: Shape, aad: &[u8]) -> Option<Made> {
        Some(match (mode, key.len()) {
            (Mode::Gcm, 16) => rc::<Aes128Gcm>(key, shape, aad),
            (Mode::Gcm, 32) => rc::<Aes256Gcm>(key, shape, aad),
            (Mode::ChaCha20Poly1305, _) => rc::<ChaCha20Poly1305>(key, shape, aad),
            (Mode::XChaCha20Poly1305, _) => rc::<XChaCha20Poly1305>(key, shape, aad),
            _ => return None,
        })
    }

    pub(super) fn workload(c: &Cipher, len: usize) -> Option<Made> {
        let key = &bench_key()[..c.key_len];
        let aes_len = if c.mode == Mode::Xts {
            c.key_len / 2
        } else {
            c.key_len
        };
        match aes_len {
            16 => modes::<Aes128>(c.mode, key, len),
            24 => modes::<Aes192>(c.mode, key, len),
            _ => modes::<Aes256>(c.mode, key, len),
        }
    }

    fn build<T: KeyInit + Send + 'static>(len: usize) -> Made {
        Ok(keys(len, |k| {
            black_box(T::new_from_slice(k).expect(OK));
        }))
    }

    fn build_xts<C>(len: usize) -> Made
    where
        C: BlockCipherEncrypt<BlockSize = U16>
            + BlockCipherDecrypt<BlockSize = U16>
            + KeyInit
            + Send
            + 'static,
    {
        Ok(keys(len, |k| {
            let (a, b) = k.split_at(k.len() / 2);
            black_box(xts_mode::Xts128::<C>::new(
                C::new_from_slice(a).expect(OK),
                C::new_from_slice(b).expect(OK),
            ));
        }))
    }

    pub(super) fn key_setup(kind: KeyKind) -> Option<Made> {
        let len = kind.key_len();
        Some(match kind {
            KeyKind::Aes(16) => build::<Aes128>(len),
            KeyKind::Aes(24) => build::<Aes192>(len),
            KeyKind::Aes(_) => build::<Aes256>(len),
            KeyKind::AesGcm(16) => build::<Aes128Gcm>(len),
            KeyKind::AesGcm(32) => build::<Aes256Gcm>(len),
            KeyKind::AesGcm(_) => return None,
            KeyKind::ChaCha20Poly1305 => build::<ChaCha20Poly1305>(len),
            KeyKind::XChaCha20Poly1305 => build::<XChaCha20Poly1305>(len),
            KeyKind::AesXts(32) => build_xts::<Aes128>(len),
            KeyKind::AesXts(_) => build_xts::<Aes256>(len),
            KeyKind::AesGcmSeal(_) | KeyKind::ChaCha20Poly1305Seal => return None,
        })
    }
}
