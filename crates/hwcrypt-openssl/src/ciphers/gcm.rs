//! AES-128/192/256-GCM as OpenSSL's `ciphercommon_gcm.c` serves it, over
//! hwcrypt's incremental [`AesGcmStream`]:
//!
//! * the EVP form: IV (any length up to 128 bytes) at init, associated
//!   data as updates with no output, data, then `final` (computes the tag,
//!   read with `tag`; or checks the tag set with `tag` before it);
//! * OpenSSH's form: `tlsivfixed` with length `(size_t)-1` sets the whole
//!   IV, each packet starts with `tlsivgen` (use the IV, then increment its
//!   64-bit invocation field), and `EVP_Cipher(NULL, NULL, 0)` finishes;
//! * TLS 1.2 records: `tlsivfixed` (4 bytes), `tlsaad` (13 bytes), then one
//!   in-place call on explicit nonce || payload || tag.
//!
//! Differences from OpenSSL, all refusals: the TLS 1.2 explicit nonce
//! starts from zero instead of random bytes (it only has to be unique under
//! the connection's key, which the counter guarantees); decryption tags of
//! 1-3, 5-7 or 9-11 bytes, and tags shorter than 16 bytes given after the
//! data, are refused; a message re-initialised with a key or the other
//! direction but no new IV cannot go on (OpenSSL's goes on from a zeroed
//! GCM state).

use super::{CResult, Cipher, CipherType, Io, ParamId, Reason};
use crate::ffi::params::Param;
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use zeroize::{Zeroize, Zeroizing};

const MAX_IV: usize = 128;
const TAG: usize = 16;
const TLS_AAD: usize = 13;
const TLS_FIXED: usize = 4;
const TLS_EXPLICIT: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IvState {
    Unset,
    /// Set, not yet started.
    Buffered,
    /// The running message uses it.
    Copied,
    /// The message under it ended: refuse to reuse it.
    Finished,
}

pub(crate) struct GcmCipher {
    key_len: usize,
    encrypt: bool,
    stream: Option<AesGcmStream<AesGcm>>,
    /// The key `stream` was made from: setting the same key again (as
    /// `openssl speed` and some programs do per message) keeps the expanded
    /// key and GHASH tables instead of recomputing them.
    key: Zeroizing<[u8; 32]>,
    iv: [u8; MAX_IV],
    iv_len: usize,
    iv_state: IvState,
    /// The invocation field is ours to increment (`tlsivfixed` was set).
    iv_gen: bool,
    /// The tag computed by encryption, or the one to check.
    tag: [u8; TAG],
    tag_len: Option<usize>,
    /// A tag was set since the last message started: its length is the
    /// next message's (a length left from an earlier message is not).
    tag_fresh: bool,
    /// A TLS 1.2 record header (`tlsaad`), its length corrected.
    tls_aad: Option<[u8; TLS_AAD]>,
    tls_aad_pad: usize,
}

/// `dupctx`: a deep copy, the message in progress included (the stream is
/// not `Clone`; `duplicate` is its explicit copy).
impl Clone for GcmCipher {
    fn clone(&self) -> Self {
        GcmCipher {
            stream: self.stream.as_ref().map(AesGcmStream::duplicate),
            key: self.key.clone(),
            ..*self
        }
    }
}

impl GcmCipher {
    pub fn new(key_len: usize) -> Self {
        GcmCipher {
            key_len,
            encrypt: true,
            stream: None,
            key: Zeroizing::new([0; 32]),
            iv: [0; MAX_IV],
            iv_len: 12,
            iv_state: IvState::Unset,
            iv_gen: false,
            tag: [0; TAG],
            tag_len: None,
            tag_fresh: false,
            tls_aad: None,
            tls_aad_pad: 0,
        }
    }

    fn stream(&mut self) -> CResult<&mut AesGcmStream<AesGcm>> {
        self.stream.as_mut().ok_or(Reason::CipherOperationFailed)
    }

    /// Starts the message under the current IV (`hw->setiv`), with the
    /// tag length this message needs (16 when encrypting; decrypting, the
    /// length of a tag set for this message before it began).
    fn start(&mut self) -> CResult<()> {
        let (iv, n) = (self.iv, self.iv_len);
        let want = match (self.encrypt, self.tag_len, self.tag_fresh) {
            (false, Some(len), true) => len,
            _ => TAG,
        };
        self.tag_fresh = false;
        let s = self.stream.as_mut().ok_or(Reason::CipherOperationFailed)?;
        if s.tag_len() != want {
            let key = s.key().clone();
            *s = AesGcmStream::with_tag_len(key.clone(), want)
                .unwrap_or_else(|_| AesGcmStream::new(key));
        }
        s.start(&iv[..n])
            .map_err(|_| Reason::CipherOperationFailed)?;
        self.iv_state = IvState::Copied;
        Ok(())
    }

    /// Before any data or associated data: the IV must be set and fresh.
    #[inline]
    fn ready(&mut self) -> CResult<()> {
        if self.stream.is_none() {
            return Err(Reason::CipherOperationFailed);
        }
        match self.iv_state {
            IvState::Buffered => self.start(),
            IvState::Copied => Ok(()),
            // As OpenSSL's GCM (`gcm_iv_generate`): encryption begun with
            // no IV gets a random one of the IV length (12 bytes or more),
            // which the caller reads back as the updated IV.
            IvState::Unset if self.encrypt && self.iv_len >= 12 => {
                getrandom::fill(&mut self.iv[..self.iv_len])
                    .map_err(|_| Reason::CipherOperationFailed)?;
                self.start()
            }
            IvState::Unset | IvState::Finished => Err(Reason::CipherOperationFailed),
        }
    }

    /// `tlsivgen`: start under the current IV, hand out its last `n` bytes,
    /// then increment the 64-bit invocation field.
    fn iv_gen(&mut self, out: &mut [u8]) -> CResult<()> {
        // The invocation field is the IV's last 8 bytes, so a shorter IV
        // has none; and nothing is written past `out` (OpenSSL's own GCM
        // copies the whole IV when asked for 0 bytes, into a buffer whose
        // size it was told is 0): both refused, never indexed out of range
        // (a panic would abort the host program).
        if !self.iv_gen || self.stream.is_none() || self.iv_len < 8 || out.is_empty() {
            return Err(Reason::FailedToSetParameter);
        }
        self.start()?;
        let n = out.len().min(self.iv_len);
        out[..n].copy_from_slice(&self.iv[self.iv_len - n..self.iv_len]);
        let field = &mut self.iv[self.iv_len - 8..self.iv_len];
        let next = u64::from_be_bytes(field.try_into().expect("8 bytes")).wrapping_add(1);
        field.copy_from_slice(&next.to_be_bytes());
        Ok(())
    }

    /// `tlsivinv`: the invocation field of a received record.
    fn iv_inv(&mut self, inv: &[u8]) -> CResult<()> {
        if !self.iv_gen || self.stream.is_none() || self.encrypt || inv.len() > self.iv_len {
            return Err(Reason::FailedToSetParameter);
        }
        let at = self.iv_len - inv.len();
        self.iv[at..self.iv_len].copy_from_slice(inv);
        self.start()
    }

    /// `tlsivfixed`: the whole IV (`len == usize::MAX`, OpenSSH) or its
    /// fixed part (TLS 1.2: at least 4 bytes, leaving at least 8).
    fn set_iv_fixed(&mut self, p: &Param<'_>) -> CResult<()> {
        if !p.is_octet_string() {
            return Err(Reason::FailedToGetParameter);
        }
        if p.data_size() == usize::MAX {
            let n = self.iv_len;
            let iv = p.read_prefix(n).ok_or(Reason::FailedToGetParameter)?;
            self.iv[..n].copy_from_slice(iv);
        } else {
            let fixed = p.get_octets().ok_or(Reason::FailedToGetParameter)?;
            if fixed.len() < TLS_FIXED || self.iv_len < fixed.len() + TLS_EXPLICIT {
                return Err(Reason::FailedToGetParameter);
            }
            self.iv[..fixed.len()].copy_from_slice(fixed);
            if self.encrypt {
                self.iv[fixed.len()..self.iv_len].fill(0);
            }
        }
        self.iv_gen = true;
        self.iv_state = IvState::Buffered;
        Ok(())
    }

    /// `tlsaad`: keep the header with its length corrected for the explicit
    /// nonce (and, decrypting, the tag).
    fn set_tls_aad(&mut self, aad: &[u8]) -> CResult<usize> {
        let mut buf: [u8; TLS_AAD] = aad.try_into().map_err(|_| Reason::InvalidAad)?;
        let mut len = usize::from(u16::from_be_bytes([buf[11], buf[12]]));
        len = len.checked_sub(TLS_EXPLICIT).ok_or(Reason::InvalidAad)?;
        if !self.encrypt {
            len = len.checked_sub(TAG).ok_or(Reason::InvalidAad)?;
        }
        buf[11..].copy_from_slice(&(len as u16).to_be_bytes());
        self.tls_aad = Some(buf);
        Ok(TAG)
    }

    /// One TLS 1.2 record, in place: explicit nonce || payload || tag.
    fn tls_record(&mut self, io: Io<'_>) -> CResult<usize> {
        let aad = self.tls_aad.take().ok_or(Reason::CipherOperationFailed)?;
        let result = self.tls_record_inner(&aad, io);
        self.iv_state = IvState::Finished;
        result
    }

    fn tls_record_inner(&mut self, aad: &[u8], io: Io<'_>) -> CResult<usize> {
        let Io::InPlace(rec) = io else {
            return Err(Reason::CipherOperationFailed);
        };
        if rec.len() < TLS_EXPLICIT + TAG {
            return Err(Reason::CipherOperationFailed);
        }
        let (nonce, rest) = rec.split_at_mut(TLS_EXPLICIT);
        let payload_len = rest.len() - TAG;
        let (payload, tag) = rest.split_at_mut(payload_len);
        if self.encrypt {
            self.iv_gen(nonce)?;
        } else {
            // A TLS record's tag is 16 bytes, whatever tag length an
            // earlier message on this context set.
            self.tag_len = None;
            self.iv_inv(nonce)?;
        }
        let encrypt = self.encrypt;
        let s = self.stream()?;
        s.aad(aad).map_err(|_| Reason::CipherOperationFailed)?;
        if encrypt {
            s.encrypt(payload)
                .map_err(|_| Reason::CipherOperationFailed)?;
            let t = s.finish().map_err(|_| Reason::CipherOperationFailed)?;
            tag.copy_from_slice(t.as_bytes());
            Ok(TLS_EXPLICIT + payload_len + TAG)
        } else {
            s.decrypt(payload)
                .map_err(|_| Reason::CipherOperationFailed)?;
            if s.verify(tag).is_err() {
                payload.zeroize();
                return Err(Reason::Silent);
            }
            Ok(payload_len)
        }
    }

    #[inline]
    fn data(&mut self, io: Io<'_>) -> CResult<usize> {
        self.ready()?;
        let n = io.len();
        let encrypt = self.encrypt;
        let s = self.stream()?;
        let r = match (io, encrypt) {
            (Io::InPlace(b), true) => s.encrypt(b),
            (Io::InPlace(b), false) => s.decrypt(b),
            (Io::Split(i, o), true) => s.encrypt_to(i, o),
            (Io::Split(i, o), false) => s.decrypt_to(i, o),
        };
        r.map_err(|_| Reason::CipherOperationFailed)?;
        Ok(n)
    }

    /// A TLS record's header was set (`tlsaad`) and a call other than the
    /// record came: as OpenSSL's `gcm_tls_cipher`, the call fails and the
    /// record with it (its IV is not used for anything else).
    fn refuse_tls(&mut self) -> CResult<()> {
        if self.tls_aad.take().is_some() {
            self.iv_state = IvState::Finished;
            return Err(Reason::CipherOperationFailed);
        }
        Ok(())
    }

    /// The end of the message: compute the tag, or check the one given.
    fn end(&mut self) -> CResult<()> {
        self.refuse_tls().map_err(|_| Reason::Silent)?;
        self.ready().map_err(|_| Reason::Silent)?;
        self.iv_state = IvState::Finished;
        if self.encrypt {
            let t = self.stream()?.finish().map_err(|_| Reason::Silent)?;
            // 16 bytes: a message changes direction only by starting anew
            // (`init`), so an encrypting stream has the full tag length.
            let t = t.as_bytes();
            if t.len() != TAG {
                return Err(Reason::Silent);
            }
            self.tag.copy_from_slice(t);
            self.tag_len = Some(TAG);
            Ok(())
        } else {
            let n = self.tag_len.ok_or(Reason::Silent)?;
            let tag = self.tag;
            let s = self.stream()?;
            if n != s.tag_len() {
                // Only possible when a short tag came after the data.
                return Err(Reason::Silent);
            }
            s.verify(&tag[..n]).map_err(|_| Reason::Silent)
        }
    }
}

impl CipherType for GcmCipher {
    const MODE: u32 = crate::algorithms::MODE_GCM;
    const AEAD: bool = true;

    fn for_alg(alg: &crate::algorithms::AlgInfo) -> Self {
        GcmCipher::new(alg.key_len)
    }
}

impl Cipher for GcmCipher {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        // A message in progress given a key or the other direction but no
        // new IV cannot go on (restarting it under its IV would repeat its
        // keystream; a short decryption tag length would meet an
        // encryption): a new IV is needed, as after the message's end.
        if self.iv_state == IvState::Copied
            && iv.is_none()
            && (key.is_some() || encrypt != self.encrypt)
        {
            self.iv_state = IvState::Finished;
        }
        self.encrypt = encrypt;
        if let Some(iv) = iv {
            if iv.is_empty() || iv.len() > MAX_IV {
                return Err(Reason::InvalidIvLength);
            }
            self.iv_len = iv.len();
            self.iv[..iv.len()].copy_from_slice(iv);
            self.iv_state = IvState::Buffered;
        }
        if let Some(key) = key {
            if key.len() != self.key_len {
                return Err(Reason::InvalidKeyLength);
            }
            let same = self.stream.is_some() && hwcrypt::ct::eq(key, &self.key[..key.len()]);
            if !same {
                let aes = AesGcm::new(key).map_err(|_| Reason::InvalidKeyLength)?;
                self.stream = Some(AesGcmStream::new(aes));
                self.key[..key.len()].copy_from_slice(key);
            }
        }
        Ok(())
    }

    #[inline]
    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        // Nothing in, nothing out, before the TLS branch: a record's AAD
        // stays set for the record (as OpenSSL's).
        if io.len() == 0 {
            return Ok(0);
        }
        if self.tls_aad.is_some() {
            // A record that does not open fails here with a raised error,
            // as OpenSSL's update (its `EVP_Cipher` form raises none).
            return self.tls_record(io).map_err(|r| match r {
                Reason::Silent => Reason::CipherOperationFailed,
                r => r,
            });
        }
        self.data(io)
    }

    fn update_aad(&mut self, aad: &[u8]) -> CResult<()> {
        // Nothing to absorb: succeeds in any state, as OpenSSL's GCM (and
        // makes no random IV).
        if aad.is_empty() {
            return Ok(());
        }
        self.refuse_tls()?;
        self.ready()?;
        self.stream()?
            .aad(aad)
            .map_err(|_| Reason::CipherOperationFailed)
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        self.end()?;
        Ok(0)
    }

    fn cipher(&mut self, io: Io<'_>) -> CResult<usize> {
        if self.tls_aad.is_some() {
            // `EVP_Cipher` returns the record's whole length, opening as
            // sealing (OpenSSL's `ossl_gcm_cipher`); `EVP_CipherUpdate`
            // gives the payload length when opening.
            let n = io.len();
            return self.tls_record(io).map(|_| n).map_err(|_| Reason::Silent);
        }
        self.data(io).map_err(|_| Reason::Silent)
    }

    fn cipher_final(&mut self) -> CResult<()> {
        self.end()
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        let ok = match id {
            ParamId::KeyLen => p.set_u64(self.key_len as u64),
            ParamId::IvLen => p.set_u64(self.iv_len as u64),
            ParamId::TagLen => p.set_u64(self.tag_len.unwrap_or(TAG) as u64),
            ParamId::TlsAadPad => p.set_u64(self.tls_aad_pad as u64),
            ParamId::Iv | ParamId::UpdatedIv => {
                if self.iv_state == IvState::Unset {
                    return Err(Reason::FailedToSetParameter);
                }
                if p.is_octet_string() && !p.data_is_null() && p.data_size() < self.iv_len {
                    return Err(Reason::InvalidIvLength);
                }
                p.set_octets_or_ptr(&self.iv[..self.iv_len])
            }
            ParamId::Tag => {
                let n = p.data_size();
                if n == 0 || n > TAG || !self.encrypt || self.tag_len.is_none() {
                    return Err(Reason::InvalidTag);
                }
                let tag = self.tag;
                p.set_octets(&tag[..n])
            }
            ParamId::TlsIvGen => {
                let Some(buf) = p.octet_buffer() else {
                    return Err(Reason::FailedToSetParameter);
                };
                // The IV's last `min(len, iv_len)` bytes go to the front
                // of the caller's buffer.
                self.iv_gen(buf)?;
                true
            }
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(Reason::FailedToSetParameter)
        }
    }

    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()> {
        match id {
            ParamId::Tag => {
                let tag = p
                    .get_octets()
                    .filter(|t| t.len() <= TAG)
                    .ok_or(Reason::FailedToGetParameter)?;
                if tag.is_empty() || self.encrypt {
                    return Err(Reason::InvalidTag);
                }
                self.tag[..tag.len()].copy_from_slice(tag);
                self.tag_len = Some(tag.len());
                self.tag_fresh = true;
            }
            ParamId::IvLen => {
                let n = p.get_size().ok_or(Reason::FailedToGetParameter)?;
                if n == 0 || n > MAX_IV {
                    return Err(Reason::InvalidIvLength);
                }
                if n != self.iv_len {
                    // An IV set (or made) at the old length is not the
                    // caller's IV at the new one: as OpenSSL's GCM, the
                    // message cannot go on until a new IV is given.
                    if self.iv_state != IvState::Unset {
                        self.iv_state = IvState::Finished;
                    }
                    self.iv_len = n;
                }
            }
            ParamId::TlsAad => {
                if !p.is_octet_string() {
                    return Err(Reason::FailedToGetParameter);
                }
                let aad = p.get_octets().ok_or(Reason::InvalidAad)?;
                match self.set_tls_aad(aad) {
                    Ok(pad) => self.tls_aad_pad = pad,
                    Err(r) => {
                        // No record follows: a data call the caller makes
                        // anyway must not run as a plain message under the
                        // record IV (the next record would use it again).
                        self.tls_aad = None;
                        self.iv_state = IvState::Finished;
                        return Err(r);
                    }
                }
            }
            ParamId::TlsIvFixed => self.set_iv_fixed(p)?,
            ParamId::TlsIvInv => {
                let inv = p.get_octets().ok_or(Reason::FailedToSetParameter)?;
                let inv = inv.to_vec();
                self.iv_inv(&inv)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn aead_tag(&self) -> Option<[u8; 16]> {
        self.tag_len.map(|_| self.tag)
    }

    fn set_aead_tag(&mut self, tag: &[u8]) -> CResult<()> {
        if self.encrypt || tag.len() != TAG {
            return Err(Reason::InvalidTag);
        }
        self.tag.copy_from_slice(tag);
        self.tag_len = Some(TAG);
        self.tag_fresh = true;
        Ok(())
    }
}

impl Drop for GcmCipher {
    fn drop(&mut self) {
        self.iv.zeroize();
        self.tag.zeroize();
    }
}
