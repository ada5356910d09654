//! The post-quantum hybrid recipient of age 1.3, `mlkem768x25519`:
//! recipients `age1pq1...` (the 1,216-byte X-Wing public key: ML-KEM-768
//! then X25519) and identities `AGE-SECRET-KEY-PQ-1...` (the 32-byte X-Wing
//! seed).
//!
//! The file key is sealed with single-shot HPKE (RFC 9180, base mode) over
//! the X-Wing KEM (id 0x647a), HKDF-SHA256 and ChaCha20-Poly1305, with the
//! info string `age-encryption.org/mlkem768x25519`. The stanza's one
//! argument is the 1,120-byte encapsulation; its body the 32-byte sealed
//! file key. Decapsulation refuses an all-zero X25519 secret (a low-order
//! or identity share), as age does.
//!
//! The KEM is the `x-wing` crate (RustCrypto; ML-KEM-768 from `ml-kem`).
//! HPKE's key schedule is the few HKDF calls below rather than the `hpke`
//! crate: that crate decapsulates X-Wing without the all-zero check age
//! requires, and would bring a second ChaCha20-Poly1305.

use crate::error::{Error, Result};
use crate::format::{Stanza, decode_b64, encode_b64};
use crate::primitives::{FileKey, fill_random};
use crate::{Identity, Recipient};
use bech32::primitives::checksum::Checksum;
use bech32::primitives::decode::CheckedHrpstring;
use bech32::{Bech32, Hrp};
use core::fmt;
use core::str::FromStr;
use hkdf::Hkdf;
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use sha2::Sha256;
use x_wing::{
    DecapsulationKeyRejectNonContrib, Decapsulator, EncapsulationKey, KeyExport, KeyInit,
    TryDecapsulate,
};
use zeroize::{Zeroize, Zeroizing};

const STANZA_TAG: &str = "mlkem768x25519";
const HPKE_INFO: &[u8] = b"age-encryption.org/mlkem768x25519";
const RECIPIENT_HRP: &str = "age1pq";
const IDENTITY_HRP: &str = "AGE-SECRET-KEY-PQ-";
/// RFC 9180 suite id: "HPKE", KEM X-Wing (0x647a), KDF HKDF-SHA256
/// (0x0001), AEAD ChaCha20-Poly1305 (0x0003).
const SUITE_ID: &[u8] = b"HPKE\x64\x7a\x00\x01\x00\x03";
const PUBLIC_KEY_LEN: usize = x_wing::ENCAPSULATION_KEY_SIZE;
const ENC_LEN: usize = x_wing::CIPHERTEXT_SIZE;
/// A sealed 16-byte file key with its 16-byte tag.
const BODY_LEN: usize = 32;

/// Bech32 (the BIP 173 checksum) without its 90- or 1,023-character limit:
/// age's post-quantum recipients are 1,959 characters long.
enum Bech32Long {}

impl Checksum for Bech32Long {
    type MidstateRepr = u32;
    const CODE_LENGTH: usize = usize::MAX;
    const CHECKSUM_LENGTH: usize = <Bech32 as Checksum>::CHECKSUM_LENGTH;
    const GENERATOR_SH: [u32; 5] = <Bech32 as Checksum>::GENERATOR_SH;
    const TARGET_RESIDUE: u32 = <Bech32 as Checksum>::TARGET_RESIDUE;
}

/// Decodes a Bech32 string of any length whose human-readable part is
/// exactly `hrp` (as age: recipients lowercase, identities uppercase; mixed
/// case is refused by the decoder), with canonical padding (at most 4 zero
/// bits: one key, one encoding).
fn decode_bech32_long(s: &str, hrp: &str, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    let bad = || Error::key(format!("malformed {what}"));
    let checked = CheckedHrpstring::new::<Bech32Long>(s).map_err(|_| bad())?;
    if checked.hrp().as_str() != hrp || checked.validate_segwit_padding().is_err() {
        return Err(bad());
    }
    Ok(Zeroizing::new(checked.byte_iter().collect()))
}

fn encode_bech32_long(hrp: &str, data: &[u8], upper: bool) -> String {
    let hrp = Hrp::parse(hrp).expect("a valid human-readable part");
    let encoded = if upper {
        bech32::encode_upper::<Bech32Long>(hrp, data)
    } else {
        bech32::encode_lower::<Bech32Long>(hrp, data)
    };
    encoded.expect("no length limit")
}

/// RFC 9180 `LabeledExtract`.
fn labeled_extract(salt: &[u8], label: &[u8], ikm: &[u8]) -> Zeroizing<[u8; 32]> {
    let mut labeled = Zeroizing::new(Vec::with_capacity(
        7 + SUITE_ID.len() + label.len() + ikm.len(),
    ));
    labeled.extend_from_slice(b"HPKE-v1");
    labeled.extend_from_slice(SUITE_ID);
    labeled.extend_from_slice(label);
    labeled.extend_from_slice(ikm);
    let (prk, _) = Hkdf::<Sha256>::extract(Some(salt), &labeled);
    let mut out = Zeroizing::new([0u8; 32]);
    out.copy_from_slice(&prk);
    out
}

/// RFC 9180 `LabeledExpand` to `out.len()` bytes.
fn labeled_expand(prk: &[u8; 32], label: &[u8], context: &[u8], out: &mut [u8]) {
    let len = u16::try_from(out.len()).expect("short outputs");
    let mut info = Vec::with_capacity(2 + 7 + SUITE_ID.len() + label.len() + context.len());
    info.extend_from_slice(&len.to_be_bytes());
    info.extend_from_slice(b"HPKE-v1");
    info.extend_from_slice(SUITE_ID);
    info.extend_from_slice(label);
    info.extend_from_slice(context);
    Hkdf::<Sha256>::from_prk(prk)
        .expect("a 32-byte PRK")
        .expand(&info, out)
        .expect("short outputs");
}

/// The RFC 9180 key schedule in base mode (no PSK) with age's info
/// string: the AEAD and the nonce of its first (and only) message.
fn hpke_context(shared_secret: &[u8; 32]) -> Result<(ChaCha20Poly1305, [u8; 12])> {
    let psk_id_hash = labeled_extract(b"", b"psk_id_hash", b"");
    let info_hash = labeled_extract(b"", b"info_hash", HPKE_INFO);
    let mut context = [0u8; 65]; // mode 0x00 (base) || psk_id_hash || info_hash
    context[1..33].copy_from_slice(&psk_id_hash[..]);
    context[33..].copy_from_slice(&info_hash[..]);
    let secret = labeled_extract(shared_secret, b"secret", b"");
    let mut key = Zeroizing::new([0u8; 32]);
    labeled_expand(&secret, b"key", &context, &mut key[..]);
    let mut nonce = [0u8; 12];
    labeled_expand(&secret, b"base_nonce", &context, &mut nonce);
    Ok((
        ChaCha20Poly1305::new(&key[..]).map_err(Error::Crypto)?,
        nonce,
    ))
}

/// An `age1pq1...` recipient: an X-Wing (ML-KEM-768 + X25519) public key.
#[derive(Clone)]
pub struct HybridRecipient {
    key: EncapsulationKey,
}

impl HybridRecipient {
    /// The recipient of a raw 1,216-byte X-Wing public key (refused if its
    /// ML-KEM part is not a valid encoding).
    pub fn from_bytes(public: &[u8]) -> Result<HybridRecipient> {
        if public.len() != PUBLIC_KEY_LEN {
            return Err(Error::key("malformed age1pq recipient"));
        }
        // A low-order X25519 part makes every share's secret zero: files
        // no one (age included) could decrypt. Any clamped scalar gives
        // zero on exactly those points.
        let x_part: &[u8; 32] = public[PUBLIC_KEY_LEN - 32..].try_into().expect("32 bytes");
        if crate::x25519::dh(&[0x5a; 32], x_part).is_none() {
            return Err(Error::key(
                "malformed age1pq recipient (its X25519 key is a low-order point)",
            ));
        }
        let key = EncapsulationKey::try_from(public)
            .map_err(|_| Error::key("malformed age1pq recipient"))?;
        Ok(HybridRecipient { key })
    }

    /// The raw 1,216-byte X-Wing public key (ML-KEM-768, then X25519).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.key.to_bytes().to_vec()
    }
}

impl FromStr for HybridRecipient {
    type Err = Error;
    fn from_str(s: &str) -> Result<HybridRecipient> {
        let public = decode_bech32_long(s, RECIPIENT_HRP, "age1pq recipient")?;
        HybridRecipient::from_bytes(&public)
    }
}

impl PartialEq for HybridRecipient {
    fn eq(&self, other: &HybridRecipient) -> bool {
        self.to_bytes() == other.to_bytes()
    }
}

impl Eq for HybridRecipient {}

impl fmt::Display for HybridRecipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&encode_bech32_long(
            RECIPIENT_HRP,
            &self.key.to_bytes(),
            false,
        ))
    }
}

impl fmt::Debug for HybridRecipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.to_string();
        write!(f, "HybridRecipient({}...)", &s[..24])
    }
}

impl Recipient for HybridRecipient {
    fn wrap(&self, file_key: &FileKey) -> Result<Vec<Stanza>> {
        let mut randomness = Zeroizing::new([0u8; x_wing::ENCAPSULATION_RANDOMNESS_SIZE]);
        fill_random(&mut randomness[..])?;
        // By reference: no unwiped copy of the randomness.
        let (enc, mut shared) = self.key.encapsulate_deterministic((&*randomness).into());
        let mut secret = Zeroizing::new([0u8; 32]);
        secret.copy_from_slice(&shared);
        shared.as_mut_slice().zeroize();
        let (aead, nonce) = hpke_context(&secret)?;
        let body = aead
            .seal(&nonce, &[], &file_key[..])
            .map_err(Error::Crypto)?;
        Ok(vec![Stanza {
            tag: STANZA_TAG.into(),
            args: vec![encode_b64(&enc)],
            body,
        }])
    }

    fn post_quantum(&self) -> bool {
        true
    }
}

/// An `AGE-SECRET-KEY-PQ-1...` identity: the 32-byte X-Wing seed.
#[derive(Clone)]
pub struct HybridIdentity {
    seed: Zeroizing<[u8; 32]>,
    /// Zeroizes its copy of the seed on drop (the crate's `zeroize`
    /// feature).
    key: DecapsulationKeyRejectNonContrib,
}

impl HybridIdentity {
    fn from_seed(seed: Zeroizing<[u8; 32]>) -> HybridIdentity {
        HybridIdentity {
            // By reference (`KeyInit`): no unwiped copy of the seed.
            key: <DecapsulationKeyRejectNonContrib as KeyInit>::new((&*seed).into()),
            seed,
        }
    }

    /// A new random identity.
    pub fn generate() -> Result<HybridIdentity> {
        let mut seed = Zeroizing::new([0u8; 32]);
        fill_random(&mut seed[..])?;
        Ok(HybridIdentity::from_seed(seed))
    }

    /// Its recipient (public key).
    pub fn to_public(&self) -> HybridRecipient {
        HybridRecipient {
            key: self.key.encapsulation_key().clone(),
        }
    }

    /// The `AGE-SECRET-KEY-PQ-1...` encoding (secret: handle with care).
    pub fn to_secret_string(&self) -> Zeroizing<String> {
        Zeroizing::new(encode_bech32_long(IDENTITY_HRP, &self.seed[..], true))
    }
}

impl FromStr for HybridIdentity {
    type Err = Error;
    fn from_str(s: &str) -> Result<HybridIdentity> {
        let bytes = decode_bech32_long(s, IDENTITY_HRP, "AGE-SECRET-KEY-PQ-1 identity")?;
        let mut seed = Zeroizing::new([0u8; 32]);
        if bytes.len() != 32 {
            return Err(Error::key("malformed AGE-SECRET-KEY-PQ-1 identity"));
        }
        seed.copy_from_slice(&bytes);
        Ok(HybridIdentity::from_seed(seed))
    }
}

impl fmt::Debug for HybridIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HybridIdentity(public: {:?})", self.to_public())
    }
}

impl Identity for HybridIdentity {
    fn recipients(&self) -> Result<Vec<Box<dyn Recipient>>> {
        Ok(vec![Box::new(self.to_public())])
    }

    fn unwrap(&self, stanza: &Stanza) -> Option<Result<FileKey>> {
        if stanza.tag != STANZA_TAG {
            return None;
        }
        let malformed = |what: &str| {
            Some(Err(Error::header(format!(
                "malformed {STANZA_TAG} stanza {what}"
            ))))
        };
        if stanza.args.len() != 1 {
            return malformed("arguments");
        }
        let Some(enc) = decode_b64(&stanza.args[0]).filter(|e| e.len() == ENC_LEN) else {
            return malformed("encapsulated key");
        };
        if stanza.body.len() != BODY_LEN {
            return malformed("body");
        }
        let enc = x_wing::Ciphertext::try_from(&enc[..]).expect("checked length");
        let Ok(mut shared) = self.key.try_decapsulate(&enc) else {
            return Some(Err(Error::header(format!(
                "{STANZA_TAG} stanza: the X25519 share is a low-order point"
            ))));
        };
        let mut secret = Zeroizing::new([0u8; 32]);
        secret.copy_from_slice(&shared);
        shared.as_mut_slice().zeroize();
        // ML-KEM rejects implicitly: a stanza for another key decapsulates to
        // an unrelated secret, and the tag below does not verify.
        let (aead, nonce) = match hpke_context(&secret) {
            Ok(context) => context,
            Err(e) => return Some(Err(e)),
        };
        let plain = Zeroizing::new(aead.open(&nonce, &[], &stanza.body).ok()?);
        let mut file_key = Zeroizing::new([0u8; 16]);
        file_key.copy_from_slice(&plain);
        Some(Ok(file_key))
    }
}
