//! AES-128/192/256-CTR as OpenSSL's `ossl_cipher_hw_generic_ctr` keeps it:
//! the counter block of the next keystream block in `iv` (a full 128-bit
//! big-endian counter, as SP 800-38A and SSH's `aes*-ctr` want), the
//! current keystream block in `keystream` and the bytes of it used in `num`.
//! `updated-iv` reads the counter; sshd exports it from its pre-auth child.

use super::{CResult, Cipher, Io, ParamId, Reason, generic_get};
use crate::ffi::params::Param;
use hwcrypt::aes::{Aes, BLOCK_SIZE};
use hwcrypt::modes::Ctr;
use zeroize::Zeroize;

const B: usize = BLOCK_SIZE;
/// Up to this many bytes of whole blocks go through single-block calls.
const SMALL: usize = 2 * B;

#[derive(Clone)]
pub(crate) struct CtrCipher {
    key_len: usize,
    encrypt: bool,
    padding: bool,
    key: Option<Aes>,
    /// The IV as set (`iv`).
    original_iv: [u8; B],
    /// The counter block of the next keystream block (`updated-iv`).
    iv: [u8; B],
    keystream: [u8; B],
    /// Bytes of `keystream` already used (0: none pending).
    num: usize,
}

impl CtrCipher {
    pub fn new(key_len: usize) -> Self {
        CtrCipher {
            key_len,
            encrypt: true,
            padding: true,
            key: None,
            original_iv: [0; B],
            iv: [0; B],
            keystream: [0; B],
            num: 0,
        }
    }
}

impl Cipher for CtrCipher {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        self.encrypt = encrypt;
        self.num = 0;
        if let Some(iv) = iv {
            if iv.len() != B {
                return Err(Reason::InvalidIvLength);
            }
            self.iv.copy_from_slice(iv);
            self.original_iv.copy_from_slice(iv);
        }
        if let Some(key) = key {
            if key.len() != self.key_len {
                return Err(Reason::InvalidKeyLength);
            }
            match &mut self.key {
                Some(aes) => aes.rekey(key),
                None => Aes::new(key).map(|aes| self.key = Some(aes)),
            }
            .map_err(|_| Reason::InvalidKeyLength)?;
        }
        Ok(())
    }

    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        let aes = self.key.as_ref().ok_or(Reason::NoKeySet)?;
        let n = io.len();
        let mut rest = io;
        // The rest of a keystream block an earlier call began.
        if self.num != 0 && self.num < B {
            let take = (B - self.num).min(rest.len());
            let (head, tail) = rest.split_at(take);
            head.xor(&self.keystream[self.num..self.num + take]);
            self.num = (self.num + take) % B;
            rest = tail;
        } else {
            self.num = 0;
        }
        let whole = rest.len() & !(B - 1);
        let (mut body, tail) = rest.split_at(whole);
        if whole > 0 && whole <= SMALL {
            // A few blocks: one block at a time costs less than setting up
            // the wide kernel (what `openssl speed` at 16 B measures).
            while body.len() > 0 {
                let (block, more) = body.split_at(B);
                let mut ks = self.iv;
                aes.encrypt_block(&mut ks);
                self.iv = u128::from_be_bytes(self.iv).wrapping_add(1).to_be_bytes();
                block.xor(&ks);
                ks.zeroize();
                body = more;
            }
        } else if whole > 0 {
            let mut ctr = Ctr::new(aes, &self.iv).map_err(|_| Reason::CipherOperationFailed)?;
            match body {
                Io::InPlace(b) => ctr
                    .apply_keystream(b)
                    .map_err(|_| Reason::CipherOperationFailed)?,
                Io::Split(i, o) => ctr
                    .apply_keystream_to(i, o)
                    .map_err(|_| Reason::CipherOperationFailed)?,
            }
            self.iv = ctr.next_counter();
        }
        if tail.len() > 0 {
            self.keystream = self.iv;
            aes.encrypt_block(&mut self.keystream);
            self.iv = u128::from_be_bytes(self.iv).wrapping_add(1).to_be_bytes();
            self.num = tail.len();
            tail.xor(&self.keystream);
        }
        Ok(n)
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        self.key.as_ref().ok_or(Reason::NoKeySet)?;
        Ok(0)
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        generic_get(
            id,
            p,
            self.key_len,
            B,
            self.padding,
            self.num,
            &self.original_iv,
            &self.iv,
        )
    }

    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()> {
        let v = p.get_uint().ok_or(Reason::FailedToGetParameter)?;
        match id {
            ParamId::Padding => self.padding = v != 0,
            ParamId::Num => self.num = v as usize,
            _ => {}
        }
        Ok(())
    }

    fn box_clone(&self) -> Box<dyn Cipher> {
        Box::new(self.clone())
    }
}

impl Drop for CtrCipher {
    fn drop(&mut self) {
        self.keystream.zeroize();
        self.iv.zeroize();
        self.original_iv.zeroize();
    }
}
