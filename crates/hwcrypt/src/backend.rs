//! The names of the implementations ("backends") an algorithm can run on.

use crate::error::{Error, Result};
use core::fmt;
use core::str::FromStr;

/// One implementation strategy. The names are stable: the CLI, the
/// benchmarks and the tests use them.
///
/// ```
/// use hwcrypt::{aes::Aes, Backend};
/// // Every backend has a stable name; forcing one the CPU cannot run is an error.
/// assert_eq!(Backend::VaesAvx2.name(), "vaes-avx2");
/// let soft = Aes::with_backend(&[0u8; 16], Backend::Soft)?;
/// assert_eq!(soft.backend(), Backend::Soft);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// Portable, constant-time software (fixsliced AES).
    Soft,
    /// AES-NI on 128-bit xmm registers.
    AesNi,
    /// VAES on 256-bit ymm registers with AVX2.
    VaesAvx2,
    /// VAES on 512-bit zmm registers with AVX-512.
    VaesAvx512,
    /// AVX2 without AES instructions (ChaCha20, Poly1305).
    Avx2,
    /// AVX-512 without AES instructions (ChaCha20 on zmm, Poly1305 with IFMA).
    Avx512,
}

impl Backend {
    /// Every backend name hwcrypt knows, implemented or not.
    pub const ALL: [Backend; 6] = [
        Backend::Soft,
        Backend::AesNi,
        Backend::VaesAvx2,
        Backend::VaesAvx512,
        Backend::Avx2,
        Backend::Avx512,
    ];

    /// The stable name: `soft`, `aesni`, `vaes-avx2`, `vaes-avx512`, `avx2`, `avx512`.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Soft => "soft",
            Backend::AesNi => "aesni",
            Backend::VaesAvx2 => "vaes-avx2",
            Backend::VaesAvx512 => "vaes-avx512",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;

    fn from_str(s: &str) -> Result<Backend> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::UnknownBackend(s.to_string()))
    }
}
