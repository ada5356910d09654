//! AES-128/256-XTS as OpenSSL serves it: the IV is the 16-byte tweak, and
//! every `update` (or `EVP_Cipher`) call is one whole data unit of 16 bytes
//! to 2^20 blocks under that tweak; the tweak does not advance between calls.

use super::{CResult, Cipher, CipherType, Io, ParamId, Reason, generic_get};
use crate::ffi::params::Param;
use hwcrypt::aes::BLOCK_SIZE;
use hwcrypt::modes::{MAX_DATA_UNIT, Xts};
use zeroize::Zeroize;

const B: usize = BLOCK_SIZE;

#[derive(Clone)]
pub(crate) struct XtsCipher {
    key_len: usize,
    encrypt: bool,
    padding: bool,
    key: Option<Xts>,
    iv: [u8; B],
    iv_set: bool,
}

impl XtsCipher {
    pub fn new(key_len: usize) -> Self {
        XtsCipher {
            key_len,
            encrypt: true,
            padding: true,
            key: None,
            iv: [0; B],
            iv_set: false,
        }
    }
}

impl CipherType for XtsCipher {
    const MODE: u32 = crate::algorithms::MODE_XTS;
    const AEAD: bool = false;

    fn for_alg(alg: &crate::algorithms::AlgInfo) -> Self {
        XtsCipher::new(alg.key_len)
    }
}

impl Cipher for XtsCipher {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        self.encrypt = encrypt;
        if let Some(iv) = iv {
            if iv.len() != B {
                return Err(Reason::InvalidIvLength);
            }
            self.iv.copy_from_slice(iv);
            self.iv_set = true;
        }
        if let Some(key) = key {
            if key.len() != self.key_len {
                return Err(Reason::InvalidKeyLength);
            }
            // hwcrypt refuses equal key halves in both directions (OpenSSL's
            // default provider refuses them when encrypting).
            self.key = Some(Xts::new(key).map_err(|e| match e {
                hwcrypt::Error::XtsEqualKeyHalves => Reason::XtsDuplicatedKeys,
                _ => Reason::InvalidKeyLength,
            })?);
        }
        Ok(())
    }

    #[inline(always)]
    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        let n = io.len();
        if n > MAX_DATA_UNIT {
            return Err(Reason::XtsDataUnitTooLarge);
        }
        let xts = self.key.as_ref().ok_or(Reason::CipherOperationFailed)?;
        if !self.iv_set || n < B {
            return Err(Reason::CipherOperationFailed);
        }
        let r = match (io, self.encrypt) {
            (Io::InPlace(b), true) => xts.encrypt(&self.iv, b),
            (Io::InPlace(b), false) => xts.decrypt(&self.iv, b),
            (Io::Split(i, o), true) => xts.encrypt_to(&self.iv, i, o),
            (Io::Split(i, o), false) => xts.decrypt_to(&self.iv, i, o),
        };
        r.map_err(|_| Reason::CipherOperationFailed)?;
        Ok(n)
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        Ok(0)
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        generic_get(id, p, self.key_len, B, self.padding, 0, &self.iv, &self.iv)
    }

    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()> {
        if id == ParamId::KeyLen {
            // The key length of XTS cannot change.
            let len = p.get_size().ok_or(Reason::FailedToGetParameter)?;
            if len != self.key_len {
                return Err(Reason::InvalidKeyLength);
            }
        }
        Ok(())
    }
}

impl Drop for XtsCipher {
    fn drop(&mut self) {
        self.iv.zeroize();
    }
}
