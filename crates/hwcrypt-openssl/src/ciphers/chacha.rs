//! ChaCha20 and ChaCha20-Poly1305 as OpenSSL's `cipher_chacha20*.c` serve
//! them, over hwcrypt's [`ChaCha20`] and [`ChaCha20Poly1305Stream`].
//!
//! Raw ChaCha20 (`EVP_chacha20()`, used by OpenSSH's
//! `chacha20-poly1305@openssh.com`): a 16-byte IV, the 32-bit little-endian
//! block counter then the 96-bit nonce, the counter carrying into the nonce.
//!
//! ChaCha20-Poly1305 (RFC 8439): the EVP form (nonce of 1 to 12 bytes,
//! left-padded with zeros as OpenSSL does; associated data as updates with
//! no output; `final`; `tag`), and TLS 1.2 records (`tlsivfixed` 12 bytes,
//! `tlsaad` 13 bytes, then one call on payload || tag, the nonce being the
//! fixed IV XOR the record sequence number, RFC 7905). After `final` the
//! next update begins a new message under the same nonce, as in OpenSSL.
//! Difference: decryption tags shorter than 16 bytes are refused.

use super::{CResult, Cipher, CipherType, Io, ParamId, Reason};
use crate::ffi::params::Param;
use hwcrypt::chacha20poly1305::{ChaCha20, ChaCha20Poly1305, ChaCha20Poly1305Stream};
use zeroize::{Zeroize, Zeroizing};

const KEY: usize = 32;
const IV: usize = 16;
const NONCE: usize = 12;
const TAG: usize = 16;
const TLS_AAD: usize = 13;

pub(crate) struct ChaCha20Cipher {
    key: Option<Zeroizing<[u8; KEY]>>,
    iv: [u8; IV],
    stream: Option<ChaCha20>,
    /// The counter block `stream` started at, and OpenSSL's view of the
    /// position since: its counter (`blocks` after `start`) and
    /// `partial_len` (bytes of the block at the counter used; 64 when a
    /// call ended at the end of a block a call before it began, which
    /// OpenSSL leaves unadvanced). A re-init with a key and no IV goes on
    /// from OpenSSL's counter, as its `chacha20_initkey` does (hwcrypt
    /// restarted at the IV, which reused the keystream from there).
    start: [u8; IV],
    blocks: u64,
    partial: usize,
}

/// `dupctx`: a deep copy, keystream position included (the streams are not
/// `Clone`; `duplicate` is their explicit copy).
impl Clone for ChaCha20Cipher {
    fn clone(&self) -> Self {
        ChaCha20Cipher {
            key: self.key.clone(),
            iv: self.iv,
            stream: self.stream.as_ref().map(ChaCha20::duplicate),
            start: self.start,
            blocks: self.blocks,
            partial: self.partial,
        }
    }
}

impl ChaCha20Cipher {
    pub fn new() -> Self {
        ChaCha20Cipher {
            key: None,
            iv: [0; IV],
            stream: None,
            start: [0; IV],
            blocks: 0,
            partial: 0,
        }
    }

    /// Moves OpenSSL's counter and `partial_len` on by a call of `len`
    /// bytes, as `chacha20_cipher` (cipher_chacha20_hw.c) does.
    fn count(&mut self, mut len: usize) {
        if self.partial > 0 {
            let take = len.min(64 - self.partial);
            self.partial += take;
            len -= take;
            if len == 0 {
                return;
            }
            if self.partial == 64 {
                self.partial = 0;
                self.blocks += 1;
            }
        }
        self.blocks += (len / 64) as u64;
        if !len.is_multiple_of(64) {
            self.partial = len % 64;
        }
    }

    /// OpenSSL's counter block (`blocks` after `start`; the 32-bit counter
    /// carrying into the next word, which wraps, as the stream counts).
    fn block_in_use(&self) -> [u8; IV] {
        let word = |at: usize| u32::from_le_bytes(self.start[at..at + 4].try_into().unwrap());
        let counter = u64::from(word(0)) + self.blocks;
        let mut out = self.start;
        out[..4].copy_from_slice(&(counter as u32).to_le_bytes());
        let next = word(4).wrapping_add((counter >> 32) as u32);
        out[4..8].copy_from_slice(&next.to_le_bytes());
        out
    }
}

/// `keylen`/`ivlen` may be set only to the values they have.
fn check_fixed(p: &Param<'_>, want: usize, reason: Reason) -> CResult<()> {
    let n = p.get_size().ok_or(Reason::FailedToGetParameter)?;
    if n != want { Err(reason) } else { Ok(()) }
}

impl CipherType for ChaCha20Cipher {
    const MODE: u32 = crate::algorithms::MODE_STREAM;
    const AEAD: bool = false;

    fn for_alg(_alg: &crate::algorithms::AlgInfo) -> Self {
        ChaCha20Cipher::new()
    }
}

impl Cipher for ChaCha20Cipher {
    fn init(&mut self, _encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        if let Some(iv) = iv {
            if iv.len() != IV {
                return Err(Reason::InvalidIvLength);
            }
            self.iv.copy_from_slice(iv);
        }
        if let Some(key) = key {
            let key: [u8; KEY] = key.try_into().map_err(|_| Reason::InvalidKeyLength)?;
            self.key = Some(Zeroizing::new(key));
        }
        // Where the keystream starts: the IV given, else (a new key on a
        // running stream) the block in use.
        let from = match (iv, &self.stream) {
            (Some(_), _) | (None, None) => self.iv,
            (None, Some(_)) => self.block_in_use(),
        };
        match (&self.key, &mut self.stream, iv, key) {
            (Some(k), _, _, Some(_)) | (Some(k), None, Some(_), None) => {
                self.stream =
                    Some(ChaCha20::new(&k[..], &from).map_err(|_| Reason::InvalidKeyLength)?);
            }
            (Some(_), Some(s), Some(_), None) => {
                s.set_iv(&from).map_err(|_| Reason::InvalidIvLength)?;
            }
            _ => return Ok(()),
        }
        self.start = from;
        self.blocks = 0;
        self.partial = 0;
        Ok(())
    }

    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        let s = self.stream.as_mut().ok_or(Reason::NoKeySet)?;
        let n = io.len();
        match io {
            Io::InPlace(b) => s.apply_keystream(b),
            Io::Split(i, o) => s
                .apply_keystream_to(i, o)
                .map_err(|_| Reason::CipherOperationFailed)?,
        }
        self.count(n);
        Ok(n)
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        self.stream.as_ref().ok_or(Reason::NoKeySet)?;
        Ok(0)
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        let ok = match id {
            ParamId::KeyLen => p.set_u64(KEY as u64),
            ParamId::IvLen => p.set_u64(IV as u64),
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
            ParamId::KeyLen => check_fixed(p, KEY, Reason::InvalidKeyLength),
            ParamId::IvLen => check_fixed(p, IV, Reason::InvalidIvLength),
            _ => Ok(()),
        }
    }
}

impl Drop for ChaCha20Cipher {
    fn drop(&mut self) {
        self.iv.zeroize();
        self.start.zeroize();
    }
}

pub(crate) struct ChaChaPolyCipher {
    encrypt: bool,
    stream: Option<ChaCha20Poly1305Stream<ChaCha20Poly1305>>,
    /// The key `stream` was made from (the same key set again is kept).
    key: Zeroizing<[u8; KEY]>,
    /// Whether a message is running (OpenSSL's `mac_inited`).
    started: bool,
    nonce: [u8; NONCE],
    nonce_len: usize,
    nonce_set: bool,
    /// A message ran under this nonce (with this key or another one set
    /// since): encrypting another would repeat a keystream (OpenSSL's
    /// starts one); refused until a new nonce is set. Decrypting again is
    /// allowed.
    nonce_used: bool,
    /// The nonce is a TLS record's fixed part (`tlsivfixed`): records XOR
    /// their sequence number into it, so a plain message under it would
    /// use record 0's nonce; refused until an IV is set.
    nonce_tls: bool,
    tag: [u8; TAG],
    tag_len: usize,
    tls_aad: Option<[u8; TLS_AAD]>,
    tls_aad_pad: usize,
}

/// `dupctx`: a deep copy, the message in progress included.
impl Clone for ChaChaPolyCipher {
    fn clone(&self) -> Self {
        ChaChaPolyCipher {
            stream: self.stream.as_ref().map(ChaCha20Poly1305Stream::duplicate),
            key: self.key.clone(),
            ..*self
        }
    }
}

impl ChaChaPolyCipher {
    pub fn new() -> Self {
        ChaChaPolyCipher {
            encrypt: true,
            stream: None,
            key: Zeroizing::new([0; KEY]),
            started: false,
            nonce: [0; NONCE],
            nonce_len: NONCE,
            nonce_set: false,
            nonce_used: false,
            nonce_tls: false,
            tag: [0; TAG],
            // As OpenSSL's: the length of a tag set, 0 before one is.
            tag_len: 0,
            tls_aad: None,
            tls_aad_pad: 0,
        }
    }

    fn stream(&mut self) -> CResult<&mut ChaCha20Poly1305Stream<ChaCha20Poly1305>> {
        self.stream.as_mut().ok_or(Reason::CipherOperationFailed)
    }

    /// Begins the message under the nonce if none is running.
    fn ready(&mut self) -> CResult<()> {
        if !self.started {
            if !self.nonce_set || self.nonce_tls || (self.encrypt && self.nonce_used) {
                return Err(Reason::CipherOperationFailed);
            }
            self.nonce_used = true;
            let nonce = self.nonce;
            self.stream()?
                .start(&nonce)
                .map_err(|_| Reason::CipherOperationFailed)?;
            self.started = true;
        }
        Ok(())
    }

    /// A TLS record's header was set (`tlsaad`) and a call other than the
    /// record came: it fails, and the header stays for the record (as
    /// OpenSSL's).
    fn refuse_tls(&mut self) -> CResult<()> {
        if self.tls_aad.is_some() {
            return Err(Reason::CipherOperationFailed);
        }
        Ok(())
    }

    fn end(&mut self) -> CResult<()> {
        self.refuse_tls().map_err(|_| Reason::Silent)?;
        self.ready().map_err(|_| Reason::Silent)?;
        self.started = false;
        let (encrypt, tag, tag_len) = (self.encrypt, self.tag, self.tag_len);
        let s = self.stream()?;
        if encrypt {
            let t = s.finish().map_err(|_| Reason::Silent)?;
            self.tag.copy_from_slice(&t);
            Ok(())
        } else if tag_len != TAG {
            let _ = s.finish();
            Err(Reason::Silent)
        } else {
            s.verify(&tag).map_err(|_| Reason::Silent)
        }
    }

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

    /// The payload length of a TLS record whose header was set.
    fn tls_payload_len(aad: &[u8; TLS_AAD]) -> usize {
        usize::from(u16::from_be_bytes([aad[11], aad[12]]))
    }

    /// One TLS 1.2 record: payload || tag, nonce = fixed IV XOR sequence;
    /// in place or into a separate output (as OpenSSL's: only GCM's TLS
    /// records must be in place). The caller checked its length.
    fn tls_record(&mut self, aad: [u8; TLS_AAD], io: Io<'_>) -> CResult<usize> {
        let payload_len = Self::tls_payload_len(&aad);
        if io.len() != payload_len + TAG {
            return Err(Reason::CipherOperationFailed);
        }
        // The payload is processed in the output; the tag is read from the
        // input (opening: the output's tag bytes are left as they were) or
        // written to the output (sealing).
        let mut received = [0u8; TAG];
        let (payload, tag_out) = match io {
            Io::InPlace(rec) => {
                received.copy_from_slice(&rec[payload_len..]);
                rec.split_at_mut(payload_len)
            }
            Io::Split(input, out) => {
                received.copy_from_slice(&input[payload_len..]);
                out[..payload_len].copy_from_slice(&input[..payload_len]);
                out.split_at_mut(payload_len)
            }
        };
        let mut nonce = self.nonce;
        for (n, s) in nonce[4..].iter_mut().zip(&aad[..8]) {
            *n ^= s;
        }
        let encrypt = self.encrypt;
        let s = self.stream()?;
        s.start(&nonce).map_err(|_| Reason::CipherOperationFailed)?;
        s.aad(&aad).map_err(|_| Reason::CipherOperationFailed)?;
        if encrypt {
            s.encrypt(payload)
                .map_err(|_| Reason::CipherOperationFailed)?;
            tag_out.copy_from_slice(&s.finish().map_err(|_| Reason::CipherOperationFailed)?);
            // Readable with `tag` afterwards, as OpenSSL's.
            self.tag.copy_from_slice(tag_out);
            Ok(payload_len + TAG)
        } else {
            s.decrypt(payload)
                .map_err(|_| Reason::CipherOperationFailed)?;
            if s.verify(&received).is_err() {
                payload.zeroize();
                return Err(Reason::Silent);
            }
            Ok(payload_len)
        }
    }
}

impl CipherType for ChaChaPolyCipher {
    const MODE: u32 = crate::algorithms::MODE_STREAM;
    const AEAD: bool = true;

    fn for_alg(_alg: &crate::algorithms::AlgInfo) -> Self {
        ChaChaPolyCipher::new()
    }
}

impl Cipher for ChaChaPolyCipher {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        self.encrypt = encrypt;
        // A key or an IV ends the message in progress (OpenSSL's `initkey`
        // and `initiv`); an init with neither lets it go on.
        if key.is_some() || iv.is_some() {
            self.started = false;
            self.tls_aad = None;
        }
        if let Some(iv) = iv {
            if iv.is_empty() || iv.len() > NONCE {
                return Err(Reason::InvalidIvLength);
            }
            self.nonce = [0; NONCE];
            self.nonce[NONCE - iv.len()..].copy_from_slice(iv);
            self.nonce_set = true;
            self.nonce_used = false;
            self.nonce_tls = false;
        }
        if let Some(key) = key {
            if key.len() != KEY {
                return Err(Reason::InvalidKeyLength);
            }
            if self.stream.is_none() || !hwcrypt::ct::eq(key, &self.key[..]) {
                let k = ChaCha20Poly1305::new(key).map_err(|_| Reason::InvalidKeyLength)?;
                self.stream = Some(ChaCha20Poly1305Stream::new(k));
                self.key.copy_from_slice(key);
            }
        }
        Ok(())
    }

    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        // Nothing in, nothing out, before the TLS branch: a record's AAD
        // stays set for the record (as OpenSSL's).
        if io.len() == 0 {
            return Ok(0);
        }
        if let Some(aad) = self.tls_aad {
            // A call of the wrong length fails and leaves the record's
            // header for the right one (as OpenSSL's).
            if io.len() != Self::tls_payload_len(&aad) + TAG {
                return Err(Reason::CipherOperationFailed);
            }
            self.tls_aad = None;
            self.started = false;
            return self.tls_record(aad, io);
        }
        self.data(io)
    }

    fn update_aad(&mut self, aad: &[u8]) -> CResult<()> {
        // Nothing to absorb: succeeds in any state, as OpenSSL's.
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
        self.update(io).map_err(|_| Reason::Silent)
    }

    // `EVP_Cipher(ctx, NULL, NULL, 0)` does nothing (OpenSSL's
    // `chacha20_poly1305_cipher` returns at once for no input): the
    // trait's no-op, not the message's end (that is `EVP_*Final`).

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        let ok = match id {
            ParamId::KeyLen => p.set_u64(KEY as u64),
            ParamId::IvLen => p.set_u64(self.nonce_len as u64),
            ParamId::TagLen => p.set_u64(self.tag_len as u64),
            ParamId::TlsAadPad => p.set_u64(self.tls_aad_pad as u64),
            ParamId::Tag => {
                if !p.is_octet_string() {
                    return Err(Reason::FailedToSetParameter);
                }
                if !self.encrypt {
                    return Err(Reason::TagNotSet);
                }
                let n = p.data_size();
                if n == 0 || n > TAG {
                    return Err(Reason::InvalidTagLength);
                }
                let tag = self.tag;
                p.set_octets(&tag[..n])
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
            ParamId::KeyLen => check_fixed(p, KEY, Reason::InvalidKeyLength)?,
            ParamId::IvLen => {
                // 12 bytes only, as OpenSSL 3's own ChaCha20-Poly1305 (a
                // shorter nonce, zero-padded in front as OpenSSL 1.1 did,
                // would give other bytes than the default provider).
                let n = p.get_size().ok_or(Reason::FailedToGetParameter)?;
                if n != NONCE {
                    return Err(Reason::InvalidIvLength);
                }
                self.nonce_len = n;
            }
            ParamId::Tag => {
                if !p.is_octet_string() {
                    return Err(Reason::FailedToGetParameter);
                }
                let n = p.data_size();
                if n == 0 || n > TAG {
                    return Err(Reason::InvalidTagLength);
                }
                if !p.data_is_null() {
                    if self.encrypt {
                        return Err(Reason::TagNotNeeded);
                    }
                    let tag = p.get_octets().ok_or(Reason::FailedToGetParameter)?;
                    self.tag[..n].copy_from_slice(tag);
                }
                self.tag_len = n;
            }
            ParamId::TlsAad => {
                let aad = p.get_octets().ok_or(Reason::FailedToGetParameter)?;
                let mut aad: [u8; TLS_AAD] = aad.try_into().map_err(|_| Reason::InvalidAad)?;
                if !self.encrypt {
                    let len = u16::from_be_bytes([aad[11], aad[12]]);
                    let len = len.checked_sub(TAG as u16).ok_or(Reason::InvalidAad)?;
                    aad[11..].copy_from_slice(&len.to_be_bytes());
                }
                self.tls_aad = Some(aad);
                self.tls_aad_pad = TAG;
            }
            ParamId::TlsIvFixed => {
                let fixed = p.get_octets().ok_or(Reason::FailedToGetParameter)?;
                if fixed.len() != NONCE {
                    return Err(Reason::FailedToGetParameter);
                }
                self.nonce.copy_from_slice(fixed);
                self.nonce_set = true;
                self.nonce_tls = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn aead_tag(&self) -> Option<[u8; 16]> {
        Some(self.tag)
    }

    fn set_aead_tag(&mut self, tag: &[u8]) -> CResult<()> {
        if self.encrypt || tag.len() != TAG {
            return Err(Reason::InvalidTag);
        }
        self.tag.copy_from_slice(tag);
        self.tag_len = TAG;
        Ok(())
    }
}

impl Drop for ChaChaPolyCipher {
    fn drop(&mut self) {
        self.nonce.zeroize();
        self.tag.zeroize();
    }
}
