//! The AES block cipher (FIPS 197) with run-time selected backends.
//!
//! [`Aes`] is an expanded key bound to one backend, chosen when the key is
//! made: the default is the highest-priority backend the (masked) CPU can
//! run, and [`Aes::with_backend`] forces one by name. The modes in
//! [`crate::modes`] are written once over the `AesKernels` each backend
//! provides; a backend only supplies the kernels.
//!
//! Key material in memory: an [`Aes`] keeps its schedule on the heap,
//! expanded in place and wiped on drop (`secret.rs`), so making,
//! moving, re-keying or dropping a key leaves no copy on the stack. Declared
//! residue (compiler spills, checked by `tests/stack_residue.rs`): the
//! `aesni` CTR kernels leave 1-3 round keys of AES-192/256 (rounds 0-1 are
//! the raw key) and its CFB128 decryption up to 10 round keys under fat
//! LTO; `vaes-avx512` ECB and CBC decryption leave their zmm schedule when
//! built without LTO. See docs/security.md, "Key material in memory".

pub(crate) mod soft;

#[macro_use]
pub(crate) mod cbc_many;

#[cfg(target_arch = "x86_64")]
#[macro_use]
pub(crate) mod aesni;
#[cfg(target_arch = "x86_64")]
pub(crate) mod vaes_avx2;
#[cfg(target_arch = "x86_64")]
mod vaes_avx512;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::inout::InOut;
use crate::registry::{self, Algorithm};
use crate::secret::SecretBox;
use core::fmt;

/// AES block size in bytes.
pub const BLOCK_SIZE: usize = 16;

/// One AES block.
///
/// ```
/// use hwcrypt::aes::{Aes, Block};
/// let aes = Aes::new(&[0u8; 16])?;
/// let mut block: Block = [0u8; 16];
/// aes.encrypt_block(&mut block);
/// aes.decrypt_block(&mut block);
/// assert_eq!(block, [0u8; 16]);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
pub type Block = [u8; BLOCK_SIZE];

/// The three AES key sizes.
///
/// ```
/// use hwcrypt::aes::KeySize;
/// let size = KeySize::from_key_len(32)?;
/// assert_eq!((size, size.rounds(), size.bits()), (KeySize::Aes256, 14, 256));
/// assert!(KeySize::from_key_len(20).is_err());
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySize {
    /// 16-byte key, 10 rounds.
    Aes128,
    /// 24-byte key, 12 rounds.
    Aes192,
    /// 32-byte key, 14 rounds.
    Aes256,
}

impl KeySize {
    /// Every key size.
    pub const ALL: [KeySize; 3] = [KeySize::Aes128, KeySize::Aes192, KeySize::Aes256];

    /// The key size for a key of `len` bytes.
    pub fn from_key_len(len: usize) -> Result<KeySize> {
        match len {
            16 => Ok(KeySize::Aes128),
            24 => Ok(KeySize::Aes192),
            32 => Ok(KeySize::Aes256),
            got => Err(Error::InvalidKeyLength {
                expected: "16, 24 or 32",
                got,
            }),
        }
    }

    /// Key length in bytes.
    pub const fn key_len(self) -> usize {
        match self {
            KeySize::Aes128 => 16,
            KeySize::Aes192 => 24,
            KeySize::Aes256 => 32,
        }
    }

    /// Number of rounds (10, 12 or 14).
    pub const fn rounds(self) -> usize {
        match self {
            KeySize::Aes128 => 10,
            KeySize::Aes192 => 12,
            KeySize::Aes256 => 14,
        }
    }

    /// The key size of a schedule with `rounds` rounds (10, 12 or 14).
    pub(crate) const fn from_rounds(rounds: usize) -> KeySize {
        match rounds {
            10 => KeySize::Aes128,
            12 => KeySize::Aes192,
            _ => KeySize::Aes256,
        }
    }

    /// Key length in bits.
    pub const fn bits(self) -> usize {
        self.key_len() * 8
    }
}

/// How a CTR counter block is incremented.
///
/// ```
/// use hwcrypt::{aes::{Aes, CounterWidth}, modes::Ctr};
/// // GCM-style counter: only the last 4 bytes count, wrapping at 2^32.
/// let mut ctr = Ctr::with_width(Aes::new(&[7u8; 16])?, &[0xff; 16], CounterWidth::Low32)?;
/// let mut data = [0u8; 64];
/// ctr.apply_keystream(&mut data)?;
/// assert_eq!(ctr.next_counter()[..12], [0xff; 12]); // the first 12 bytes never change
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CounterWidth {
    /// The whole 16-byte block is one big-endian integer that carries across
    /// all 128 bits (NIST SP 800-38A, SSH `aes*-ctr`), wrapping at 2^128.
    #[default]
    Full128,
    /// Only the last 4 bytes count, big-endian, wrapping at 2^32 without
    /// touching the first 12 bytes (GCM's `inc32`).
    Low32,
}

impl CounterWidth {
    /// Adds `n` blocks to `counter` with this width's carry rule.
    pub(crate) fn add(self, counter: &mut Block, n: u128) {
        match self {
            CounterWidth::Full128 => {
                *counter = u128::from_be_bytes(*counter).wrapping_add(n).to_be_bytes();
            }
            CounterWidth::Low32 => {
                let low = u32::from_be_bytes([counter[12], counter[13], counter[14], counter[15]]);
                // Truncation is the point: the counter wraps at 2^32.
                let low = low.wrapping_add(n as u32);
                counter[12..].copy_from_slice(&low.to_be_bytes());
            }
        }
    }
}

/// The kernels a backend supplies. Every `io` is a whole number of blocks
/// (callers guarantee it); the 16-byte state argument is read and updated so
/// that consecutive calls continue the mode:
///
/// * CBC: `chain` is the previous ciphertext block (the IV at the start);
/// * CFB128: `register` is the previous ciphertext block (the IV at the start);
/// * OFB: `register` is the previous keystream block (the IV at the start);
/// * CTR: `counter` is the counter block of the next block, advanced by the
///   number of blocks processed with `width`'s carry rule.
/// * XTS: `tweak` is the (already encrypted) tweak of the first block, and on
///   return the tweak of the block after the last one (multiplied by x once
///   per block); a key's XTS kernels run its own (data-key) schedules.
pub(crate) trait AesKernels {
    /// The number of rounds of the key's schedule: 10, 12 or 14.
    fn rounds(&self) -> usize;
    fn encrypt_block(&self, block: &mut Block);
    fn decrypt_block(&self, block: &mut Block);
    fn ecb_encrypt(&self, io: InOut<'_>);
    fn ecb_decrypt(&self, io: InOut<'_>);
    fn cbc_encrypt(&self, chain: &mut Block, io: InOut<'_>);
    fn cbc_decrypt(&self, chain: &mut Block, io: InOut<'_>);
    fn cfb128_encrypt(&self, register: &mut Block, io: InOut<'_>);
    fn cfb128_decrypt(&self, register: &mut Block, io: InOut<'_>);
    fn ofb(&self, register: &mut Block, io: InOut<'_>);
    fn ctr(&self, counter: &mut Block, width: CounterWidth, io: InOut<'_>);

    /// XTS encryption of whole blocks; by default composed from the ECB
    /// kernel (the `soft` backend), overridden where tweaks can be computed
    /// alongside the rounds.
    fn xts_encrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        xts_generic(self, tweak, io, false);
    }

    /// XTS decryption of whole blocks; see [`AesKernels::xts_encrypt`].
    fn xts_decrypt(&self, tweak: &mut Block, io: InOut<'_>) {
        xts_generic(self, tweak, io, true);
    }
}

/// `t * x` in GF(2^128) with the XTS conventions (IEEE 1619: the block is a
/// little-endian integer, reduction polynomial x^128 + x^7 + x^2 + x + 1),
/// without a secret-dependent branch.
pub(crate) fn xts_mul_x(t: u128) -> u128 {
    (t << 1) ^ (0x87 & 0u128.wrapping_sub(t >> 127))
}

/// Test hook: XTS kernel calls that reduced tweaks with carry-less
/// multiplication (`[1]`) or with shifts (`[0]`), so a test can see which
/// path the (masked) CPU features chose.
#[cfg(test)]
pub(crate) static XTS_PATH_CALLS: [core::sync::atomic::AtomicUsize; 2] = [
    core::sync::atomic::AtomicUsize::new(0),
    core::sync::atomic::AtomicUsize::new(0),
];

/// Counts one XTS kernel call on the carry-less (`clmul`) or shift path in
/// [`XTS_PATH_CALLS`] (tests only; nothing otherwise).
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn count_xts_path(clmul: bool) {
    #[cfg(test)]
    XTS_PATH_CALLS[usize::from(clmul)].fetch_add(1, core::sync::atomic::Ordering::Relaxed);
}

/// XTS over whole blocks from single-key ECB calls: XOR the tweaks in, ECB
/// a batch of up to 32 blocks, XOR them out. Constant time if the ECB
/// kernel is.
pub(crate) fn xts_generic<K: AesKernels + ?Sized>(
    k: &K,
    tweak: &mut Block,
    io: InOut<'_>,
    decrypt: bool,
) {
    use zeroize::Zeroize;
    const BATCH: usize = 32 * BLOCK_SIZE;
    let mut buf = [0u8; BATCH];
    let mut tweaks = [0u128; BATCH / BLOCK_SIZE];
    let mut rest = io;
    while !rest.is_empty() {
        let n = rest.len().min(BATCH);
        let (mut chunk, tail) = rest.split_at(n);
        rest = tail;
        chunk.read(0, &mut buf[..n]);
        let mut t = u128::from_le_bytes(*tweak);
        for (b, tw) in buf[..n].chunks_exact_mut(BLOCK_SIZE).zip(&mut tweaks) {
            *tw = t;
            let x = u128::from_le_bytes(b.try_into().expect("16-byte chunk")) ^ t;
            b.copy_from_slice(&x.to_le_bytes());
            t = xts_mul_x(t);
        }
        // The running tweak waits in the caller's buffer (which the caller
        // wipes), not in a register across the ECB call: a callee-saved
        // register would be pushed, and left, in the callee's frame.
        *tweak = t.to_le_bytes();
        core::hint::black_box(&mut *tweak);
        if decrypt {
            k.ecb_decrypt(InOut::InPlace(&mut buf[..n]));
        } else {
            k.ecb_encrypt(InOut::InPlace(&mut buf[..n]));
        }
        for (b, tw) in buf[..n].chunks_exact_mut(BLOCK_SIZE).zip(&tweaks) {
            let x = u128::from_le_bytes(b.try_into().expect("16-byte chunk")) ^ tw;
            b.copy_from_slice(&x.to_le_bytes());
        }
        chunk.write(0, &buf[..n]);
    }
    buf.zeroize();
    tweaks.zeroize();
}

/// The schedule of one backend, in its heap home ([`SecretBox`]): built in
/// place, never moved, wiped on drop (see [`crate::secret`]).
#[derive(Clone)]
enum Inner {
    Soft(SecretBox<soft::Key>),
    #[cfg(target_arch = "x86_64")]
    AesNi(SecretBox<aesni::Key>),
    #[cfg(target_arch = "x86_64")]
    VaesAvx2(SecretBox<vaes_avx2::Key>),
    /// zmm ECB, CTR, CBC decryption and XTS; the serial kernels are
    /// `vaes-avx2`'s.
    #[cfg(target_arch = "x86_64")]
    VaesAvx512(SecretBox<vaes_avx512::Key>),
}

impl Inner {
    /// `key` (16, 24 or 32 bytes, checked by the caller) expanded for
    /// `backend`; `None` if this CPU cannot run it.
    #[inline]
    fn make(key: &[u8], backend: Backend) -> Option<Inner> {
        Some(match backend {
            Backend::Soft => Inner::Soft(soft::Key::boxed(key)),
            #[cfg(target_arch = "x86_64")]
            Backend::AesNi => Inner::AesNi(aesni::Key::boxed(key)?),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx2 => Inner::VaesAvx2(vaes_avx2::Key::boxed(key)?),
            #[cfg(target_arch = "x86_64")]
            Backend::VaesAvx512 => Inner::VaesAvx512(vaes_avx512::Key::boxed(key)?),
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }
}

/// An expanded AES key (encryption and decryption schedules) bound to one
/// backend. Round keys are zeroized when it is dropped and never printed.
///
/// The schedule lives on the heap, expanded where it stays: making,
/// moving or returning an `Aes` copies a pointer, never round keys, so no
/// copy of the schedule is left behind in a dead stack frame (docs/security.md,
/// "Key material in memory"). `clone` copies the schedule heap to heap.
///
/// ```
/// use hwcrypt::aes::Aes;
/// let aes = Aes::new(&[0x2b; 16])?; // the best backend this CPU runs
/// let mut block = [0u8; 16];
/// aes.encrypt_block(&mut block);
/// println!("{aes:?}"); // key size and backend only, never the key
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct Aes {
    /// The key size is the schedule's (`AesKernels::rounds`): a second
    /// field (a byte) made the handle three words, which callers moved
    /// with a byte store and a word load that cannot be forwarded from it
    /// (a stall of about a third of an AES-128 key's setup, AMD Zen 4).
    inner: Inner,
}

/// The error of a backend this CPU cannot run (out of line: it makes a
/// `String`, and [`Aes::build`] is inlined).
#[cold]
#[inline(never)]
fn unavailable(backend: Backend) -> Error {
    Error::BackendUnavailable {
        algorithm: Algorithm::Aes.name(),
        backend: backend.name(),
        missing: "CPU support not detected".into(),
    }
}

impl Aes {
    /// Expands `key` (16, 24 or 32 bytes) for the best backend this CPU,
    /// after the `HWCRYPT_CPU` mask, can run.
    #[inline(always)]
    pub fn new(key: &[u8]) -> Result<Aes> {
        KeySize::from_key_len(key.len())?;
        Aes::build(key, registry::default_backend(Algorithm::Aes)?)
    }

    /// Expands `key` for the named backend; an error if this (masked) CPU
    /// cannot run it.
    #[inline(always)]
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Aes> {
        KeySize::from_key_len(key.len())?;
        registry::check(Algorithm::Aes, backend)?;
        Aes::build(key, backend)
    }

    /// The data and tweak keys of an XTS key on `backend`, which
    /// [`crate::modes::Xts`] checked against the `aes-xts` registry rows.
    #[inline(always)]
    pub(crate) fn for_xts(key: &[u8], backend: Backend) -> Result<Aes> {
        KeySize::from_key_len(key.len())?;
        Aes::build(key, backend)
    }

    /// The key handle reaches the caller in registers: [`Inner::make`]
    /// returns an `Option<Inner>` (two words), and this wrapper, which
    /// turns `None` into the error, is inlined. Returned through memory (a
    /// `Result<Aes>` is 56 bytes, the size of an `Error`), the handle was
    /// written with 8-byte stores and read back with 16-byte loads, which
    /// cannot be forwarded from them.
    #[inline(always)]
    fn build(key: &[u8], backend: Backend) -> Result<Aes> {
        match Inner::make(key, backend) {
            Some(inner) => Ok(Aes { inner }),
            None => Err(unavailable(backend)),
        }
    }

    /// Replaces the key in place, keeping the backend: the round keys are
    /// re-expanded where they are (no allocation, no copy of the schedules)
    /// and the old ones overwritten. Useful where keys change often (protocol
    /// rekeying, key search). The key size may change.
    pub fn rekey(&mut self, key: &[u8]) -> Result<()> {
        KeySize::from_key_len(key.len())?;
        match &mut self.inner {
            Inner::Soft(k) => k.rekey(key),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => k.rekey(key),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => k.rekey(key),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => k.rekey(key),
        }
        Ok(())
    }

    /// The backend this key runs on.
    pub fn backend(&self) -> Backend {
        match &self.inner {
            Inner::Soft(_) => Backend::Soft,
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(_) => Backend::AesNi,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(_) => Backend::VaesAvx2,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(_) => Backend::VaesAvx512,
        }
    }

    /// AES-128, -192 or -256.
    pub fn key_size(&self) -> KeySize {
        KeySize::from_rounds(self.kernels().rounds())
    }

    /// Internal, for the stack-residue test (feature `residue-test`): the
    /// memory holding this key's secrets, as (address, length) pairs.
    #[cfg(feature = "residue-test")]
    #[doc(hidden)]
    pub fn secret_regions(&self) -> Vec<(usize, usize)> {
        use crate::secret::region_of;
        vec![match &self.inner {
            Inner::Soft(k) => region_of(&**k),
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => region_of(&**k),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => region_of(&**k),
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => region_of(&**k),
        }]
    }

    /// Encrypts one block in place.
    pub fn encrypt_block(&self, block: &mut Block) {
        self.kernels().encrypt_block(block);
    }

    /// Decrypts one block in place.
    pub fn decrypt_block(&self, block: &mut Block) {
        self.kernels().decrypt_block(block);
    }

    /// Whether [`Aes::xts_unit`] takes data units that are not a whole
    /// number of blocks (ciphertext stealing inside the kernel).
    pub(crate) fn xts_unit_steals(&self) -> bool {
        match &self.inner {
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(_) => true,
            _ => false,
        }
    }

    /// XTS over one data unit of whole blocks (any length >= 16 where
    /// [`Aes::xts_unit_steals`]) with `self` as the data key:
    /// `tweak` is encrypted with `tweak_key` (same backend and size), then
    /// the unit runs; the AES-NI and VAES backends do both in one kernel.
    #[inline(always)]
    pub(crate) fn xts_unit(&self, tweak_key: &Aes, tweak: &Block, io: InOut<'_>, decrypt: bool) {
        let mut t = *tweak;
        match (&self.inner, &tweak_key.inner) {
            #[cfg(target_arch = "x86_64")]
            (Inner::VaesAvx2(d), Inner::VaesAvx2(k2)) => d.xts_unit(k2, &mut t, io, decrypt),
            #[cfg(target_arch = "x86_64")]
            (Inner::AesNi(d), Inner::AesNi(k2)) => d.xts_unit(k2, &mut t, io, decrypt),
            #[cfg(target_arch = "x86_64")]
            (Inner::VaesAvx512(d), Inner::VaesAvx512(k2)) => d.xts_unit(k2, &mut t, io, decrypt),
            _ => {
                tweak_key.encrypt_block(&mut t);
                if decrypt {
                    self.kernels().xts_decrypt(&mut t, io);
                } else {
                    self.kernels().xts_encrypt(&mut t, io);
                }
            }
        }
        // The kernels leave the encrypted tweak after the last block here:
        // key-derived (with it, that block's tweak can be stripped).
        crate::secret::wipe_bytes(&mut t);
    }

    #[inline]
    pub(crate) fn kernels(&self) -> &dyn AesKernels {
        match &self.inner {
            Inner::Soft(k) => &**k,
            #[cfg(target_arch = "x86_64")]
            Inner::AesNi(k) => &**k,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx2(k) => &**k,
            #[cfg(target_arch = "x86_64")]
            Inner::VaesAvx512(k) => &**k,
        }
    }
}

impl fmt::Debug for Aes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aes")
            .field("key_size", &self.key_size())
            .field("backend", &self.backend().name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `HWCRYPT_CPU=-pclmulqdq` takes the shift-based XTS tweak path on
    /// aesni and vaes-avx2 (whose wide kernel needs VPCLMULQDQ, which the
    /// mask removes with PCLMULQDQ). The mask is read once per process, so
    /// the masked half runs in a child: this test binary, this test only.
    #[test]
    fn xts_carry_less_multiply_follows_the_mask() {
        use crate::cpu::{Feature, Features};
        use crate::modes::Xts;
        use core::sync::atomic::Ordering::Relaxed;
        const NAME: &str = "aes::tests::xts_carry_less_multiply_follows_the_mask";
        let features = crate::cpu::features().unwrap();
        let clmul = features.contains(Features::of(&[Feature::Pclmulqdq]));
        for backend in [Backend::AesNi, Backend::VaesAvx2] {
            let Ok(xts) = Xts::with_backend(&[[1u8; 16], [2u8; 16]].concat(), backend) else {
                continue;
            };
            // The wide kernel multiplies with VPCLMULQDQ (`-vpclmulqdq`
            // alone leaves vaes-avx2 on the shift path).
            let clmul = clmul
                && (backend == Backend::AesNi
                    || features.contains(Features::of(&[Feature::Vpclmulqdq])));
            let before = XTS_PATH_CALLS.each_ref().map(|c| c.load(Relaxed));
            let mut unit = [0u8; 16 * 40];
            xts.encrypt_sector(7, &mut unit).unwrap();
            xts.decrypt(&[3; 16], &mut unit).unwrap();
            let after = XTS_PATH_CALLS.each_ref().map(|c| c.load(Relaxed));
            // Other tests may run XTS at the same time: only the path this
            // key must take is checked to have moved; in the child (one
            // test) the other must not have.
            assert!(
                after[usize::from(clmul)] >= before[usize::from(clmul)] + 2,
                "{backend}"
            );
            if std::env::var_os(crate::cpu::MASK_ENV_VAR).is_some() && !clmul {
                assert_eq!(
                    after[1], before[1],
                    "{backend}: carry-less path with -pclmulqdq"
                );
            }
        }
        let masked = std::env::var_os(crate::cpu::MASK_ENV_VAR).is_some();
        if !masked && clmul {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1"])
                .env(crate::cpu::MASK_ENV_VAR, "-pclmulqdq")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("1 passed"),
                "child with -pclmulqdq: {text}"
            );
        }
    }

    #[test]
    fn counter_widths_carry_as_specified() {
        let mut c = [0xff; 16];
        CounterWidth::Full128.add(&mut c, 1);
        assert_eq!(c, [0; 16]);
        let mut c = [0xff; 16];
        CounterWidth::Low32.add(&mut c, 2);
        let mut want = [0xff; 16];
        want[12..].copy_from_slice(&1u32.to_be_bytes());
        assert_eq!(c, want);
        let mut c = [0; 16];
        c[8..].copy_from_slice(&u64::MAX.to_be_bytes());
        CounterWidth::Full128.add(&mut c, 1);
        assert_eq!(u128::from_be_bytes(c), 1u128 << 64);
    }

    #[test]
    fn fips197_appendix_c_on_every_runnable_backend() {
        let pt: Block = *b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff";
        let key: Vec<u8> = (0u8..32).collect();
        let cts: [(usize, &str); 3] = [
            (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
            (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
            (32, "8ea2b7ca516745bfeafc49904b496089"),
        ];
        for backend in registry::runnable(Algorithm::Aes, crate::cpu::features().unwrap()) {
            for (len, ct) in cts {
                let aes = Aes::with_backend(&key[..len], backend).unwrap();
                let mut b = pt;
                aes.encrypt_block(&mut b);
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                assert_eq!(hex, ct, "{backend} AES-{}", len * 8);
                aes.decrypt_block(&mut b);
                assert_eq!(b, pt, "{backend} AES-{} decrypt", len * 8);
            }
        }
    }

    #[test]
    fn rekey_equals_a_fresh_key_on_every_backend() {
        let keys: [&[u8]; 5] = [&[1; 32], &[2; 16], &[3; 24], &[4; 16], &[5; 32]];
        for backend in registry::runnable(Algorithm::Aes, crate::cpu::features().unwrap()) {
            let mut aes = Aes::with_backend(keys[0], backend).unwrap();
            for key in keys {
                aes.rekey(key).unwrap();
                let fresh = Aes::with_backend(key, backend).unwrap();
                assert_eq!(aes.key_size(), fresh.key_size());
                let (mut a, mut b) = ([7; 16], [7; 16]);
                aes.encrypt_block(&mut a);
                fresh.encrypt_block(&mut b);
                assert_eq!(a, b, "{backend} encrypt after rekey to {} bytes", key.len());
                aes.decrypt_block(&mut a);
                assert_eq!(
                    a,
                    [7; 16],
                    "{backend} decrypt after rekey to {} bytes",
                    key.len()
                );
                let mut blocks = [9u8; 16 * 40];
                let mut expect = blocks;
                crate::modes::Ecb::new(&aes).decrypt(&mut blocks).unwrap();
                crate::modes::Ecb::new(&fresh).decrypt(&mut expect).unwrap();
                assert_eq!(blocks, expect, "{backend} wide decrypt after rekey");
                // The other modes' kernels (round counts, and the serial
                // AES-NI key a wide backend keeps) after a size change too.
                let iv = [5u8; 16];
                let run = |k: &Aes, data: &mut [u8]| {
                    crate::modes::Ctr::new(k, &iv)
                        .unwrap()
                        .apply_keystream(data)
                        .unwrap();
                    crate::modes::Cbc::new(k, &iv)
                        .unwrap()
                        .encrypt(data)
                        .unwrap();
                    crate::modes::Cbc::new(k, &iv)
                        .unwrap()
                        .decrypt(&mut data[16..])
                        .unwrap();
                    crate::modes::Ofb::new(k, &iv)
                        .unwrap()
                        .apply_keystream(data);
                };
                let (mut got, mut want) = ([0x5au8; 16 * 37], [0x5au8; 16 * 37]);
                run(&aes, &mut got);
                run(&fresh, &mut want);
                assert_eq!(
                    got,
                    want,
                    "{backend} CTR/CBC/OFB after rekey to {} bytes",
                    key.len()
                );
            }
            assert_eq!(
                aes.rekey(&[0; 17]),
                Err(Error::InvalidKeyLength {
                    expected: "16, 24 or 32",
                    got: 17
                })
            );
        }
    }

    #[test]
    fn debug_hides_the_key() {
        let aes = Aes::with_backend(&[0x42; 16], Backend::Soft).unwrap();
        let text = format!("{aes:?}");
        assert!(
            text.contains("soft") && !text.contains("42") && !text.contains("66"),
            "{text}"
        );
    }
}
