//! AES-128/192/256-CTR as OpenSSL's `ossl_cipher_hw_generic_ctr` keeps it: a
//! full 128-bit big-endian counter (SP 800-38A, SSH's `aes*-ctr`), any
//! split of the data across calls. The key and counter are one [`Ctr`] kept
//! for the context's life, always at a block boundary: whole blocks are one
//! `apply_keystream` call, with no per-call setup (what `openssl speed`
//! measures at 16 B). A partial last block takes the next keystream block
//! into `keystream`, whose unused rest serves the next call, as OpenSSL's
//! `buf` and `num` do (and like them it survives a re-init, which only
//! resets `num`). `updated-iv` is the counter block of the next keystream
//! block (sshd exports it from its pre-auth child).

use super::{CResult, Cipher, CipherType, Io, ParamId, Reason, generic_get};
use crate::ffi::params::Param;
use hwcrypt::aes::{Aes, BLOCK_SIZE};
use hwcrypt::modes::Ctr;
use zeroize::Zeroize;

const B: usize = BLOCK_SIZE;

pub(crate) struct CtrCipher {
    key_len: usize,
    encrypt: bool,
    padding: bool,
    /// The key and the counter of the next keystream block (`None` until
    /// a key is set).
    ctr: Option<Ctr<Aes>>,
    /// The IV as set (`iv`).
    original_iv: [u8; B],
    /// The counter block, while no key is set (an IV may come first).
    pending_iv: [u8; B],
    /// The keystream block of the last partial block (OpenSSL's `buf`).
    keystream: [u8; B],
    /// Bytes of `keystream` used (OpenSSL's `num`; 0: none pending).
    num: usize,
    /// The `updated-iv` handed out: an octet pointer to it lives as long
    /// as the context (`EVP_CIPHER_CTX_iv()`), and is kept current after
    /// each call once given. A counter written through it (OpenSSH's compat
    /// `EVP_CIPHER_CTX_set_iv`) is taken at the next call, as OpenSSL's own
    /// CTR, whose pointer is its live counter, takes it.
    iv_out: [u8; B],
    iv_out_given: bool,
}

impl Clone for CtrCipher {
    /// `EVP_CIPHER_CTX_copy` (dupctx): the whole state, keystream position
    /// included ([`Ctr::duplicate`]).
    fn clone(&self) -> Self {
        // A counter written through the `updated-iv` pointer and not yet
        // taken (the original takes it at its next call) goes to the copy.
        let written =
            (self.iv_out_given && self.iv_out != self.next_counter()).then_some(self.iv_out);
        let mut ctr = self.ctr.as_ref().map(Ctr::duplicate);
        let mut pending_iv = self.pending_iv;
        if let Some(w) = written {
            match &mut ctr {
                Some(c) => {
                    let _ = c.restart(&w);
                }
                None => pending_iv = w,
            }
        }
        CtrCipher {
            key_len: self.key_len,
            encrypt: self.encrypt,
            padding: self.padding,
            ctr,
            original_iv: self.original_iv,
            pending_iv,
            keystream: self.keystream,
            num: self.num,
            // No pointer to the copy's buffer has been handed out.
            iv_out: [0; B],
            iv_out_given: false,
        }
    }
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
            keystream: [0; B],
            num: 0,
            iv_out: [0; B],
            iv_out_given: false,
        }
    }

    /// Runs `op`, once an `updated-iv` pointer was handed out between the
    /// two halves of its protocol: a counter written through the pointer
    /// taken first, the pointer's bytes brought up to date after.
    #[inline(always)]
    fn tracking_iv<T>(&mut self, op: impl FnOnce(&mut Self) -> T) -> T {
        if !self.iv_out_given {
            return op(self);
        }
        self.take_written_iv();
        let result = op(self);
        self.iv_out = self.next_counter();
        result
    }

    /// Takes a counter the caller wrote through the `updated-iv` pointer.
    #[cold]
    fn take_written_iv(&mut self) {
        let written = self.iv_out;
        if written != self.next_counter() {
            match &mut self.ctr {
                // A 16-byte counter block restarts any `Ctr`.
                Some(ctr) => {
                    let _ = ctr.restart(&written);
                }
                None => self.pending_iv = written,
            }
        }
    }

    /// [`Cipher::init`] after its argument checks.
    fn init_counter(
        &mut self,
        encrypt: bool,
        key: Option<&[u8]>,
        iv: Option<&[u8]>,
    ) -> CResult<()> {
        self.encrypt = encrypt;
        self.num = 0;
        // A new IV restarts the counter there; without one it goes on from
        // the next block.
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

    /// [`Cipher::update`] proper.
    #[inline(always)]
    fn update_counter(&mut self, io: Io<'_>) -> CResult<usize> {
        let ctr = self.ctr.as_mut().ok_or(Reason::NoKeySet)?;
        let n = io.len();
        let failed = |_| Reason::CipherOperationFailed;
        if self.num == 0 && n.is_multiple_of(B) {
            // The common case: whole blocks from a block boundary.
            match io {
                Io::InPlace(b) => ctr.apply_keystream(b),
                Io::Split(i, o) => ctr.apply_keystream_to(i, o),
            }
            .map_err(failed)?;
            return Ok(n);
        }
        let (input, output): (Option<&[u8]>, &mut [u8]) = match io {
            Io::InPlace(b) => (None, b),
            Io::Split(i, o) => (Some(i), o),
        };
        let mut done = 0;
        let xor = |out: &mut [u8], at: usize, ks: &[u8]| {
            for (j, (o, k)) in out.iter_mut().zip(ks).enumerate() {
                *o = input.map_or(*o, |i| i[at + j]) ^ k;
            }
        };
        // The rest of the keystream block a partial block began.
        if self.num != 0 {
            let take = (B - self.num).min(n);
            xor(
                &mut output[..take],
                0,
                &self.keystream[self.num..self.num + take],
            );
            self.num = (self.num + take) % B;
            done = take;
        }
        let whole = (n - done) & !(B - 1);
        if whole > 0 {
            let out = &mut output[done..done + whole];
            match input {
                None => ctr.apply_keystream(out),
                Some(i) => ctr.apply_keystream_to(&i[done..done + whole], out),
            }
            .map_err(failed)?;
            done += whole;
        }
        if done < n {
            // A partial last block: the next keystream block, kept.
            self.keystream = [0; B];
            ctr.apply_keystream(&mut self.keystream).map_err(failed)?;
            let tail = n - done;
            xor(&mut output[done..], done, &self.keystream[..tail]);
            self.num = tail;
        }
        Ok(n)
    }

    /// The counter block of the next keystream block.
    fn next_counter(&self) -> [u8; B] {
        match &self.ctr {
            Some(ctr) => ctr.next_counter(),
            None => self.pending_iv,
        }
    }
}

impl CipherType for CtrCipher {
    const MODE: u32 = crate::algorithms::MODE_CTR;
    const AEAD: bool = false;

    fn for_alg(alg: &crate::algorithms::AlgInfo) -> Self {
        CtrCipher::new(alg.key_len)
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
        self.tracking_iv(|c| c.init_counter(encrypt, key, iv))
    }

    #[inline]
    fn update(&mut self, io: Io<'_>) -> CResult<usize> {
        self.tracking_iv(|c| c.update_counter(io))
    }

    fn finish(&mut self, _out: &mut [u8]) -> CResult<usize> {
        self.ctr.as_ref().ok_or(Reason::NoKeySet)?;
        Ok(0)
    }

    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()> {
        if id == ParamId::UpdatedIv {
            if self.iv_out_given {
                self.take_written_iv();
            }
            self.iv_out = self.next_counter();
            // Kept current from now on only for a pointer (a copy, as
            // `EVP_CIPHER_CTX_get_updated_iv` asks, needs nothing more).
            self.iv_out_given |= p.is_octet_ptr();
        }
        generic_get(
            id,
            p,
            self.key_len,
            B,
            self.padding,
            self.num,
            &self.original_iv,
            &self.iv_out,
        )
    }

    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()> {
        let v = p.get_uint().ok_or(Reason::FailedToGetParameter)?;
        match id {
            ParamId::Padding => self.padding = v != 0,
            // As OpenSSL: the next bytes use `keystream` from byte `num`
            // on (a value past the block is refused, where OpenSSL would
            // read past its buffer).
            ParamId::Num => {
                if v as usize >= B {
                    return Err(Reason::FailedToSetParameter);
                }
                self.num = v as usize;
            }
            _ => {}
        }
        Ok(())
    }
}

impl Drop for CtrCipher {
    fn drop(&mut self) {
        self.keystream.zeroize();
        self.pending_iv.zeroize();
        self.original_iv.zeroize();
        self.iv_out.zeroize();
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
                assert_eq!(c.num, 200 % B);
                let next = u128::from_be_bytes(iv).wrapping_add(13).to_be_bytes();
                assert_eq!(c.next_counter(), next);
            }
        }
    }

    #[test]
    fn init_without_iv_goes_on_from_the_next_block_and_num_reuses_the_buffer() {
        let key = [9u8; 32];
        let iv = [3u8; B];
        let want = reference(&key, iv, 96);
        let mut c = CtrCipher::new(32);
        c.init(true, Some(&key), Some(&iv)).unwrap();
        let mut a = [0u8; 20];
        run(&mut c, &mut a);
        assert_eq!(a[..], want[..20]);
        assert_eq!((c.num, c.next_counter()[15]), (4, 5));
        // A new key and no IV: the counter goes on from block 2, and the 12
        // unused bytes of block 1 are dropped (`num` 0).
        c.init(true, Some(&key), None).unwrap();
        assert_eq!(c.num, 0);
        let mut b = [0u8; 16];
        run(&mut c, &mut b);
        assert_eq!(b[..], want[32..48]);
        // `num` = 5, as OpenSSL: bytes 5.. of the kept block (block 1, the
        // last partial one) again, then on from the counter (block 3).
        c.num = 5;
        let mut d = [0u8; 27];
        run(&mut c, &mut d);
        assert_eq!(d[..11], want[21..32]);
        assert_eq!(d[11..], want[48..64]);
        // A copy goes on where the original is.
        let mut e = c.clone();
        let (mut x, mut y) = ([0u8; 7], [0u8; 7]);
        run(&mut c, &mut x);
        run(&mut e, &mut y);
        assert_eq!(x, y);
        assert_eq!(x[..], want[64..71]);
        // An IV alone restarts there.
        c.init(false, None, Some(&iv)).unwrap();
        let mut f = [0u8; 40];
        run(&mut c, &mut f);
        assert_eq!(f[..], want[..40]);
    }
}
