//! `--measure`: a quick in-process calibration of hwcrypt's own AEADs and
//! AES-CTR at typical record sizes, so the order can follow measured speed
//! instead of the rule.
//!
//! Every cell (cipher x size) is timed in short batches of about
//! [`BATCH`], round-robin over all cells for [`ROUNDS`] rounds, and the best
//! batch counts: round-robin spreads a burst of noise from another process
//! over all cells instead of one, and the minimum is the figure least
//! disturbed by it. The whole run takes a few hundred milliseconds, even with
//! the portable backends (`HWCRYPT_CPU=none`).

use super::Cipher;
use crate::Backend;
use crate::aead::Aead;
use crate::aes::Aes;
use crate::chacha20poly1305::ChaCha20Poly1305;
use crate::error::Result;
use crate::gcm::AesGcm;
use crate::modes::Ctr;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The record sizes measured: a TLS record that fits one Ethernet frame
/// (1420 bytes of payload, what dynamic record sizing starts with) and a
/// full-size TLS record (16 KiB; SSH bulk packets are of the same order).
pub const SIZES: [usize; 2] = [1420, 16 * 1024];

/// Rounds over all cells; the best batch of each cell counts.
pub const ROUNDS: usize = 7;

/// Target length of one timed batch.
pub const BATCH: Duration = Duration::from_millis(2);

/// The ciphers measured, in display order.
pub const MEASURED: [Cipher; 6] = [
    Cipher::Aes128Gcm,
    Cipher::Aes256Gcm,
    Cipher::ChaCha20Poly1305,
    Cipher::Aes128Ctr,
    Cipher::Aes192Ctr,
    Cipher::Aes256Ctr,
];

/// Throughput of one cipher at one message size.
///
/// ```
/// use hwcrypt::prefs::{recommend_with, aes_hardware_x86_64, Calibration, Cipher, Measurement};
/// use hwcrypt::{cpu::Features, Backend};
/// // A calibration as `hwcrypt::prefs::measure()` returns it (figures made up).
/// let m = |cipher, gbps| Measurement { cipher, backend: Backend::Soft, size: 16384, gbps };
/// let calibration = Calibration {
///     measurements: vec![m(Cipher::Aes128Gcm, 0.2), m(Cipher::Aes256Gcm, 0.15), m(Cipher::ChaCha20Poly1305, 0.7)],
///     elapsed: std::time::Duration::from_millis(300),
/// };
/// assert_eq!(calibration.gbps(Cipher::ChaCha20Poly1305, 16384), Some(0.7));
/// let rec = recommend_with(aes_hardware_x86_64(Features::NONE, Features::NONE), Some(calibration), false);
/// assert_eq!(rec.aead_order[0], Cipher::ChaCha20Poly1305);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// What was measured.
    pub cipher: Cipher,
    /// The hwcrypt backend it ran on (the default for this masked CPU).
    pub backend: Backend,
    /// Message size in bytes.
    pub size: usize,
    /// Decimal GB/s (bytes per nanosecond), best batch.
    pub gbps: f64,
}

/// The result of [`measure`].
///
/// ```
/// use hwcrypt::prefs::{recommend_with, aes_hardware_x86_64, Calibration, Cipher, Measurement};
/// use hwcrypt::{cpu::Features, Backend};
/// // A calibration as `hwcrypt::prefs::measure()` returns it (figures made up).
/// let m = |cipher, gbps| Measurement { cipher, backend: Backend::Soft, size: 16384, gbps };
/// let calibration = Calibration {
///     measurements: vec![m(Cipher::Aes128Gcm, 0.2), m(Cipher::Aes256Gcm, 0.15), m(Cipher::ChaCha20Poly1305, 0.7)],
///     elapsed: std::time::Duration::from_millis(300),
/// };
/// assert_eq!(calibration.gbps(Cipher::ChaCha20Poly1305, 16384), Some(0.7));
/// let rec = recommend_with(aes_hardware_x86_64(Features::NONE, Features::NONE), Some(calibration), false);
/// assert_eq!(rec.aead_order[0], Cipher::ChaCha20Poly1305);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// One entry per cipher in [`MEASURED`] and size in [`SIZES`], cipher-major.
    pub measurements: Vec<Measurement>,
    /// Wall time the whole calibration took.
    pub elapsed: Duration,
}

impl Calibration {
    /// The figure for `cipher` at `size`, if measured.
    pub fn gbps(&self, cipher: Cipher, size: usize) -> Option<f64> {
        find(&self.measurements, cipher, size)
    }
}

pub(super) fn find(measurements: &[Measurement], cipher: Cipher, size: usize) -> Option<f64> {
    measurements
        .iter()
        .find(|m| m.cipher == cipher && m.size == size)
        .map(|m| m.gbps)
}

/// A keyed primitive under test.
enum Subject {
    Gcm(AesGcm),
    ChaCha(ChaCha20Poly1305),
    Ctr(Aes),
}

impl Subject {
    fn new(cipher: Cipher) -> Result<Subject> {
        // Fixed, non-secret keys: only the speed matters here.
        Ok(match cipher {
            Cipher::Aes128Gcm => Subject::Gcm(AesGcm::new(&[0x42; 16])?),
            Cipher::Aes256Gcm => Subject::Gcm(AesGcm::new(&[0x42; 32])?),
            Cipher::ChaCha20Poly1305 => Subject::ChaCha(ChaCha20Poly1305::new(&[0x42; 32])?),
            Cipher::Aes128Ctr => Subject::Ctr(Aes::new(&[0x42; 16])?),
            Cipher::Aes192Ctr => Subject::Ctr(Aes::new(&[0x42; 24])?),
            Cipher::Aes256Ctr => Subject::Ctr(Aes::new(&[0x42; 32])?),
        })
    }

    fn backend(&self) -> Backend {
        match self {
            Subject::Gcm(k) => k.backend(),
            Subject::ChaCha(k) => k.backend(),
            Subject::Ctr(k) => k.backend(),
        }
    }

    /// Encrypts `buf` in place as one message numbered `seq` (a fresh nonce
    /// or counter block per message, as a TLS or SSH record layer does).
    fn run(&self, seq: u64, buf: &mut [u8]) -> Result<()> {
        let mut nonce = [0u8; 16];
        nonce[4..12].copy_from_slice(&seq.to_be_bytes());
        match self {
            Subject::Gcm(k) => {
                black_box(k.seal_in_place_detached(&nonce[..12], &[], buf)?);
            }
            Subject::ChaCha(k) => {
                black_box(k.seal_in_place_detached(&nonce[..12], &[], buf)?);
            }
            Subject::Ctr(k) => Ctr::new(k, &nonce)?.apply_keystream(buf)?,
        }
        black_box(buf);
        Ok(())
    }
}

struct Cell {
    subject: usize,
    size: usize,
    iters: u64,
    /// Best nanoseconds per message so far.
    best_ns: f64,
}

/// Measures every cipher in [`MEASURED`] at every size in [`SIZES`] on the
/// backends this (masked) CPU selects by default.
///
/// Fails only where a key cannot be made (an invalid `HWCRYPT_CPU`).
pub fn measure() -> Result<Calibration> {
    let start = Instant::now();
    let subjects = MEASURED
        .iter()
        .map(|&c| Subject::new(c))
        .collect::<Result<Vec<_>>>()?;
    let mut buf = vec![0x5a_u8; SIZES[1]];
    let mut seq = 0u64;

    // One warm-up message per cell, which also sizes its batches.
    let mut cells = Vec::new();
    for (subject, s) in subjects.iter().enumerate() {
        for size in SIZES {
            s.run(seq, &mut buf[..size])?;
            seq += 1;
            let t0 = Instant::now();
            s.run(seq, &mut buf[..size])?;
            seq += 1;
            let one = t0.elapsed().max(Duration::from_nanos(1));
            let iters = (BATCH.as_nanos() / one.as_nanos()).clamp(1, 100_000) as u64;
            cells.push(Cell {
                subject,
                size,
                iters,
                best_ns: f64::INFINITY,
            });
        }
    }

    for _ in 0..ROUNDS {
        for cell in &mut cells {
            let s = &subjects[cell.subject];
            let t0 = Instant::now();
            for _ in 0..cell.iters {
                s.run(seq, &mut buf[..cell.size])?;
                seq += 1;
            }
            let per_message = t0.elapsed().as_nanos().max(1) as f64 / cell.iters as f64;
            cell.best_ns = cell.best_ns.min(per_message);
        }
    }

    let measurements = cells
        .iter()
        .map(|cell| Measurement {
            cipher: MEASURED[cell.subject],
            backend: subjects[cell.subject].backend(),
            size: cell.size,
            gbps: cell.size as f64 / cell.best_ns,
        })
        .collect();
    Ok(Calibration {
        measurements,
        elapsed: start.elapsed(),
    })
}
