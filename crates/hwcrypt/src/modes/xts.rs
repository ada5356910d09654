//! XTS (IEEE 1619, NIST SP 800-38E): the disk/file encryption mode, with
//! ciphertext stealing for data units that are not a whole number of blocks.
//!
//! A data unit (a disk sector, a file block) of `n >= 16` bytes is encrypted
//! under a 16-byte tweak `i`: `T_0 = E_K2(i)`, `T_{j+1} = T_j * x` in
//! GF(2^128), and block `j` is `E_K1(P_j ^ T_j) ^ T_j`. When `n` is not a
//! multiple of 16, the last two blocks use ciphertext stealing. Only the
//! last two blocks of a unit are handled here; the rest runs on the
//! backend's XTS kernel, which computes the tweaks alongside the AES rounds.

use super::separate;
use crate::aes::{Aes, BLOCK_SIZE, Block, KeySize, xts_mul_x};
use crate::backend::Backend;
use crate::ct;
use crate::error::{Error, Result};
use crate::inout::InOut;
use crate::registry::{self, Algorithm};
use core::fmt;
use zeroize::Zeroize;

/// The largest data unit, 2^20 blocks (IEEE 1619-2018 5.1, SP 800-38E).
pub const MAX_DATA_UNIT: usize = BLOCK_SIZE << 20;

/// The tweak of sector `sector` as dm-crypt's `plain64` (and the NIST
/// `DataUnitSeqNumber` vectors) form it: the number little-endian in the
/// first 8 bytes, zeros after.
pub fn sector_tweak(sector: u64) -> Block {
    let mut t = [0; BLOCK_SIZE];
    t[..8].copy_from_slice(&sector.to_le_bytes());
    t
}

/// An AES-XTS key: the data key `K1` (first half of the key) and the tweak
/// key `K2` (second half), both expanded for one backend. Keys are zeroized
/// on drop and never printed.
///
/// ```
/// use hwcrypt::modes::Xts;
/// let xts = Xts::new(&[[1u8; 32], [2u8; 32]].concat())?; // AES-256-XTS
/// let mut disk = vec![0u8; 8 * 4096];
/// // Eight 4096-byte sectors, numbered 100..108 (dm-crypt plain64 tweaks).
/// xts.encrypt_units(4096, 100, &mut disk)?;
/// // Sector 103 alone: the same bytes.
/// let mut sector = vec![0u8; 4096];
/// xts.encrypt_sector(103, &mut sector)?;
/// assert_eq!(sector, disk[3 * 4096..4 * 4096]);
/// xts.decrypt_units(4096, 100, &mut disk)?;
/// assert!(disk.iter().all(|&b| b == 0));
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct Xts {
    data: Aes,
    tweak: Aes,
}

impl Xts {
    /// AES-128-XTS (32-byte key), AES-192-XTS (48) or AES-256-XTS (64) on
    /// the best backend this (masked) CPU can run. Keys whose two halves are
    /// equal are rejected.
    #[inline(always)]
    pub fn new(key: &[u8]) -> Result<Xts> {
        // The key length first, as `Aes::new`: a bad length is reported as
        // such whatever the `HWCRYPT_CPU` mask.
        Xts::check_key_len(key)?;
        Xts::build(key, registry::default_backend(Algorithm::AesXts)?)
    }

    /// As [`Xts::new`] on the named backend; an error if this (masked) CPU
    /// cannot run it.
    #[inline(always)]
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Xts> {
        Xts::check_key_len(key)?;
        registry::check(Algorithm::AesXts, backend)?;
        Xts::build(key, backend)
    }

    #[inline(always)]
    fn check_key_len(key: &[u8]) -> Result<()> {
        if matches!(key.len(), 32 | 48 | 64) {
            Ok(())
        } else {
            Err(Error::InvalidKeyLength {
                expected: "32, 48 or 64",
                got: key.len(),
            })
        }
    }

    /// Inlined with its callers, with the two AES handles made out of line
    /// and returned in registers (see [`Aes`]'s constructor): a
    /// `Result<Xts>` returned through memory was copied out with loads
    /// that straddle its stores (a stall of about a sixth of the setup).
    #[inline(always)]
    fn build(key: &[u8], backend: Backend) -> Result<Xts> {
        let (k1, k2) = key.split_at(key.len() / 2);
        if ct::eq(k1, k2) {
            return Err(Error::XtsEqualKeyHalves);
        }
        Ok(Xts {
            data: Aes::for_xts(k1, backend)?,
            tweak: Aes::for_xts(k2, backend)?,
        })
    }

    /// The backend both keys run on.
    pub fn backend(&self) -> Backend {
        self.data.backend()
    }

    /// The AES key size of each half (AES-128 for a 32-byte XTS key).
    pub fn key_size(&self) -> KeySize {
        self.data.key_size()
    }

    /// Internal, for the stack-residue test (feature `residue-test`): the
    /// memory holding this key's secrets, as (address, length) pairs.
    #[cfg(feature = "residue-test")]
    #[doc(hidden)]
    pub fn secret_regions(&self) -> Vec<(usize, usize)> {
        [self.data.secret_regions(), self.tweak.secret_regions()].concat()
    }

    /// Encrypts one data unit (16 bytes to 16 MiB) in place under `tweak`.
    #[inline]
    pub fn encrypt(&self, tweak: &Block, unit: &mut [u8]) -> Result<()> {
        self.one(tweak, InOut::InPlace(unit), false)
    }

    /// Decrypts one data unit in place under `tweak`.
    #[inline]
    pub fn decrypt(&self, tweak: &Block, unit: &mut [u8]) -> Result<()> {
        self.one(tweak, InOut::InPlace(unit), true)
    }

    /// Encrypts one data unit from `input` into `output` (same length).
    #[inline]
    pub fn encrypt_to(&self, tweak: &Block, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.one(tweak, separate(input, output)?, false)
    }

    /// Decrypts one data unit from `input` into `output` (same length).
    #[inline]
    pub fn decrypt_to(&self, tweak: &Block, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.one(tweak, separate(input, output)?, true)
    }

    /// Encrypts sector `sector` in place (tweak: [`sector_tweak`]).
    pub fn encrypt_sector(&self, sector: u64, unit: &mut [u8]) -> Result<()> {
        self.one(&sector_tweak(sector), InOut::InPlace(unit), false)
    }

    /// Decrypts sector `sector` in place.
    pub fn decrypt_sector(&self, sector: u64, unit: &mut [u8]) -> Result<()> {
        self.one(&sector_tweak(sector), InOut::InPlace(unit), true)
    }

    /// Encrypts sector `sector` from `input` into `output`.
    pub fn encrypt_sector_to(&self, sector: u64, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.one(&sector_tweak(sector), separate(input, output)?, false)
    }

    /// Decrypts sector `sector` from `input` into `output`.
    pub fn decrypt_sector_to(&self, sector: u64, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.one(&sector_tweak(sector), separate(input, output)?, true)
    }

    /// Encrypts `buf`, consecutive data units of `unit_size` bytes, in place:
    /// unit `j` is sector `first_sector + j` (wrapping at 2^64). The length
    /// must be a multiple of `unit_size`; the result equals one
    /// [`Xts::encrypt_sector`] per unit.
    pub fn encrypt_units(&self, unit_size: usize, first_sector: u64, buf: &mut [u8]) -> Result<()> {
        self.units(unit_size, first_sector, InOut::InPlace(buf), false)
    }

    /// Decrypts consecutive data units in place; see [`Xts::encrypt_units`].
    pub fn decrypt_units(&self, unit_size: usize, first_sector: u64, buf: &mut [u8]) -> Result<()> {
        self.units(unit_size, first_sector, InOut::InPlace(buf), true)
    }

    /// Encrypts consecutive data units from `input` into `output`.
    pub fn encrypt_units_to(
        &self,
        unit_size: usize,
        first_sector: u64,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<()> {
        self.units(unit_size, first_sector, separate(input, output)?, false)
    }

    /// Decrypts consecutive data units from `input` into `output`.
    pub fn decrypt_units_to(
        &self,
        unit_size: usize,
        first_sector: u64,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<()> {
        self.units(unit_size, first_sector, separate(input, output)?, true)
    }

    // Inlined into each public entry, which builds `io` in registers: as a
    // call of its own, it copied the caller's `io` with 16-byte loads over
    // the caller's 8-byte stores (a failed store-to-load forward, ~12% of
    // a 16-byte unit).
    #[inline(always)]
    fn one(&self, tweak: &Block, io: InOut<'_>, decrypt: bool) -> Result<()> {
        check_unit(io.len())?;
        if io.len().is_multiple_of(BLOCK_SIZE) || self.data.xts_unit_steals() {
            // The common case (sectors): tweak encryption and unit in one go
            // (and ciphertext stealing too, on vaes-avx512).
            self.data.xts_unit(&self.tweak, tweak, io, decrypt);
            return Ok(());
        }
        let mut t = *tweak;
        self.tweak.encrypt_block(&mut t);
        self.unit(&mut t, io, decrypt);
        t.zeroize();
        Ok(())
    }

    fn units(&self, unit_size: usize, first: u64, io: InOut<'_>, decrypt: bool) -> Result<()> {
        check_unit(unit_size)?;
        if !io.len().is_multiple_of(unit_size) {
            return Err(Error::NotUnitAligned {
                len: io.len(),
                unit_size,
            });
        }
        // The tweaks of up to BATCH units are encrypted in one ECB call, so
        // they cost what a block of data does instead of a serial AES each.
        const BATCH: usize = 16;
        let mut tweaks = [0u8; BATCH * BLOCK_SIZE];
        let mut sector = first;
        let mut rest = io;
        while !rest.is_empty() {
            let n = (rest.len() / unit_size).min(BATCH);
            for t in tweaks[..n * BLOCK_SIZE].chunks_exact_mut(BLOCK_SIZE) {
                t.copy_from_slice(&sector_tweak(sector));
                sector = sector.wrapping_add(1);
            }
            self.tweak
                .kernels()
                .ecb_encrypt(InOut::InPlace(&mut tweaks[..n * BLOCK_SIZE]));
            for t in tweaks[..n * BLOCK_SIZE].chunks_exact_mut(BLOCK_SIZE) {
                let (unit, tail) = rest.split_at(unit_size);
                rest = tail;
                self.unit(t.try_into().expect("16-byte chunk"), unit, decrypt);
            }
        }
        tweaks.zeroize();
        Ok(())
    }

    /// One data unit of a checked length, `t` its encrypted tweak (in the
    /// caller's buffer, which it wipes: by reference, so no copy of the
    /// key-derived tweak is left in an argument slot).
    fn unit(&self, t: &mut Block, io: InOut<'_>, decrypt: bool) {
        let k = self.data.kernels();
        let partial = io.len() % BLOCK_SIZE;
        if partial == 0 {
            if decrypt {
                k.xts_decrypt(t, io);
            } else {
                k.xts_encrypt(t, io);
            }
            return;
        }
        // Ciphertext stealing: the whole blocks before the last full one go
        // through the kernel; the last full block and the partial one (16 +
        // `partial` bytes) are done here, in a local buffer.
        let len = io.len();
        let (front, mut last) = io.split_at(len - BLOCK_SIZE - partial);
        if decrypt {
            k.xts_decrypt(t, front);
        } else {
            k.xts_encrypt(t, front);
        }
        let mut buf = [0u8; 2 * BLOCK_SIZE];
        let n = BLOCK_SIZE + partial;
        last.read(0, &mut buf[..n]);
        let (a, b) = buf.split_at_mut(BLOCK_SIZE);
        let a: &mut Block = a.try_into().expect("16 bytes");
        // `t` is the tweak of the last full block, `t_next` of the partial one.
        let mut t_next = xts_mul_x(u128::from_le_bytes(*t)).to_le_bytes();
        if decrypt {
            // C_{m-1} was made with the later tweak: PP = D(C_{m-1}, T_m);
            // P_m = PP[..r]; P_{m-1} = D(C_m || PP[r..], T_{m-1}).
            k.xts_decrypt(&mut t_next, InOut::InPlace(a));
        } else {
            // CC = E(P_{m-1}, T_{m-1}); C_m = CC[..r];
            // C_{m-1} = E(P_m || CC[r..], T_m).
            k.xts_encrypt(t, InOut::InPlace(a));
        }
        // Swap the first `partial` bytes of the two halves: the stolen
        // tail of `a` stays, `b` gets the head of `a`.
        for i in 0..partial {
            core::mem::swap(&mut a[i], &mut b[i]);
        }
        if decrypt {
            k.xts_decrypt(t, InOut::InPlace(a));
        } else {
            k.xts_encrypt(&mut t_next, InOut::InPlace(a));
        }
        last.write(0, &buf[..n]);
        buf.zeroize();
        t_next.zeroize();
    }
}

#[inline]
fn check_unit(len: usize) -> Result<()> {
    if (BLOCK_SIZE..=MAX_DATA_UNIT).contains(&len) {
        Ok(())
    } else {
        Err(Error::InvalidDataUnitLength { got: len })
    }
}

impl fmt::Debug for Xts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Xts")
            .field("key_size", &self.key_size())
            .field("backend", &self.backend().name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IEEE 1619-2007 Annex B vector 1 (all-zero keys are allowed by the
    /// 2007 text, but this API rejects equal halves) and vector 2.
    #[test]
    fn equal_halves_rejected_vector_2_accepted() {
        assert_eq!(Xts::new(&[0; 32]).unwrap_err(), Error::XtsEqualKeyHalves);
        let key = [[0x11u8; 16], [0x22u8; 16]].concat();
        let xts = Xts::new(&key).unwrap();
        let mut unit = [0x44u8; 32];
        let mut tweak = [0u8; 16];
        tweak[..5].copy_from_slice(&[0x33; 5]);
        xts.encrypt(&tweak, &mut unit).unwrap();
        assert_eq!(
            hex::encode(unit),
            "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"
        );
    }

    #[test]
    fn debug_hides_the_keys() {
        let xts = Xts::with_backend(&[[0x42u8; 16], [0x43u8; 16]].concat(), Backend::Soft).unwrap();
        let text = format!("{xts:?}");
        assert!(
            text.contains("soft") && !text.contains("42") && !text.contains("66"),
            "{text}"
        );
    }
}
