//! AES-128/192/256-CTR as OpenSSL's `ossl_cipher_hw_generic_ctr` keeps it: a
//! full 128-bit big-endian counter (SP 800-38A, SSH's `aes*-ctr`), any
//! split of the data across calls. The state is one [`Ctr`] kept for the
//! context's life: a call is one `apply_keystream`, with no per-call setup
//! (what `openssl speed` measures at 16 B). `updated-iv` is the counter
//! block of the next keystream block (sshd exports it from its pre-auth
//! child) and `num` the bytes used of the current one.

use super::{CResult, Cipher, Io, ParamId, Reason, generic_get};
use crate::ffi::params::Param;
use hwcrypt::aes::{Aes, BLOCK_SIZE};
use hwcrypt::modes::Ctr;
use zeroize::Zeroize;

const B: usize = BLOCK_SIZE;

#[derive(Clone)]
pub(crate) struct CtrCipher {
    key_len: usize,
    encrypt: bool,
    padding: bool,
    /// The key and the running counter (`None` until a key is set).
    ctr: Option<Ctr<Aes>>,
    /// The IV as set (`iv`).
    original_iv: [u8; B],
    /// The counter block, while no key is set (an IV may come first).
    pending_iv: [u8; B],
}

impl CtrCipher {
    pub fn new(key_len: usize) -> Self {
        CtrCipher {
            key_len,
            encrypt: true,
            padding: true,
            ctr: None,
            original_iv: [0; B],
            pending_iv: [0; B],
        }
    }

    /// The counter block of the next keystream block.
    fn next_counter(&self) -> [u8; B] {
        match &self.ctr {
            Some(ctr) => ctr.next_counter(),
            None => self.pending_iv,
        }
    }

    /// Sets OpenSSL's `num`: `num` bytes into the last keystream block made
    /// (OpenSSL keeps that block and goes on from byte `num` of it); 0
    /// starts the next block. A value past the block is refused.
    fn set_num(&mut self, num: u32) -> CResult<()> {
        let num = u128::from(num);
        if num >= B as u128 {
            return Err(Reason::FailedToSetParameter);
        }
        if let Some(ctr) = &mut self.ctr {
            let blocks = ctr.position().div_ceil(B as u128);
            let offset = if num == 0 {
                blocks * B as u128
            } else {
                blocks.saturating_sub(1) * B as u128 + num
            };
            ctr.seek(offset);
        }
        Ok(())
    }

    /// Bytes used of the current keystream block (OpenSSL's `num`).
    fn num(&self) -> usize {
        self.ctr
            .as_ref()
            .map_or(0, |ctr| (ctr.position() % B as u128) as usize)
    }
}

impl Cipher for CtrCipher {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()> {
        if iv.is_some_and(|iv| iv.len() != B) {
            return Err(Reason::InvalidIvLength);
        }
        if key.is_some_and(|key| key.len() != self.key_len) {
            return Err(Reason::InvalidKeyLength);
        }
        self.encrypt = encrypt;
        // As OpenSSL: a new IV restarts the counter there; without one the
        // counter goes on from the next block (a partial block is dropped).
        let counter = match iv {
            Some(iv) => {
                self.original_iv.copy_from_slice(iv);
                self.original_iv
            }
            None => self.next_counter(),
        };
        match (&mut self.ctr, key) {
            (Some(ctr), Some(key)) => {
                ctr.rekey(key).map_err(|_| Reason::InvalidKeyLength)?;
                ctr.restart(&counter)
            }
            (Some(ctr), None) => ctr.restart(&counter),
            (None, Some(key)) => Aes::new(key)
                .and_then(|aes| Ctr::new(aes, &counter))
                .map(|ctr| self.ctr = Some(ctr)),
            (None, None) => {
                self.pending_iv = counter;
                Ok(())
            }
        }
        .map_err(|_| Reason::InvalidKeyLength)
    }

    #[inline]
    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        let ctr = self.ctr.as_mut().ok_or(Reason::NoKeySet)?;
        let n = io.len();
        match io {
            Io::InPlace(b) => ctr.apply_keystream(b),
            Io::Split(i, o) => ctr.apply_keystream_to(i, o),
        }
        .map_err(|_| Reason::CipherOperationFailed)?;
        Ok(n)
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        self.ctr.as_ref().ok_or(Reason::NoKeySet)?;
        Ok(0)
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        generic_get(
            id,
            p,
            self.key_len,
            B,
            self.padding,
            self.num(),
            &self.original_iv,
            &self.next_counter(),
        )
    }

    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()> {
        let v = p.get_uint().ok_or(Reason::FailedToGetParameter)?;
        match id {
            ParamId::Padding => self.padding = v != 0,
            ParamId::Num => self.set_num(v)?,
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
        self.pending_iv.zeroize();
        self.original_iv.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keystream block `i` after `iv`, one AES call each (the reference).
    fn reference(key: &[u8], iv: [u8; B], len: usize) -> Vec<u8> {
        let aes = Aes::new(key).unwrap();
        let mut out = Vec::new();
        let mut c = u128::from_be_bytes(iv);
        while out.len() < len {
            let mut b = c.to_be_bytes();
            aes.encrypt_block(&mut b);
            out.extend_from_slice(&b);
            c = c.wrapping_add(1);
        }
        out.truncate(len);
        out
    }

    fn run(cipher: &mut CtrCipher, data: &mut [u8]) {
        assert_eq!(cipher.update(Io::InPlace(data)), Ok(data.len()));
    }

    #[test]
    fn any_split_matches_the_reference_and_state_reads_like_openssl() {
        let key = [7u8; 16];
        // The low 64 bits and the whole counter wrap inside the stream.
        for iv in [[0u8; B], [0xff; B], {
            let mut v = [0u8; B];
            v[8..].fill(0xff);
            v[15] = 0xfd;
            v
        }] {
            let want = reference(&key, iv, 200);
            for split in [1, 5, 15, 16, 17, 31, 32, 48, 64, 100] {
                let mut c = CtrCipher::new(16);
                c.init(true, Some(&key), Some(&iv)).unwrap();
                let mut got = vec![0u8; 200];
                for piece in got.chunks_mut(split) {
                    run(&mut c, piece);
                }
                assert_eq!(got, want, "split {split}");
                // 200 bytes: 13 blocks made, 8 bytes of the last used.
                assert_eq!(c.num(), 200 % B);
                let next = u128::from_be_bytes(iv).wrapping_add(13).to_be_bytes();
                assert_eq!(c.next_counter(), next);
            }
        }
    }

    #[test]
    fn init_without_iv_goes_on_from_the_next_block_and_num_seeks() {
        let key = [9u8; 32];
        let iv = [3u8; B];
        let want = reference(&key, iv, 96);
        let mut c = CtrCipher::new(32);
        c.init(true, Some(&key), Some(&iv)).unwrap();
        let mut a = [0u8; 20];
        run(&mut c, &mut a);
        assert_eq!(a[..], want[..20]);
        // A new key and no IV: the counter goes on from block 2, and the 12
        // unused bytes of block 1 are dropped.
        c.init(true, Some(&key), None).unwrap();
        assert_eq!(c.num(), 0);
        let mut b = [0u8; 16];
        run(&mut c, &mut b);
        assert_eq!(b[..], want[32..48]);
        // `num` = 5: bytes 5.. of the last block made (block 2) again.
        c.set_num(5).unwrap();
        let mut d = [0u8; 11];
        run(&mut c, &mut d);
        assert_eq!(d[..], want[37..48]);
        assert!(c.set_num(16).is_err());
        // An IV alone restarts there.
        c.init(false, None, Some(&iv)).unwrap();
        let mut e = [0u8; 40];
        run(&mut c, &mut e);
        assert_eq!(e[..], want[..40]);
    }
}
