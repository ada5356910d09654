//! The one error type of the library.
//!
//! Every fallible call returns [`Error`]; nothing in the public API panics on
//! bad input. `Display` gives one readable line, suitable for a CLI.

use core::fmt;

/// What went wrong.
///
/// ```
/// use hwcrypt::{aes::Aes, Error};
/// match Aes::new(&[0u8; 15]) {
///     Err(Error::InvalidKeyLength { got, .. }) => assert_eq!(got, 15),
///     other => panic!("{other:?}"),
/// }
/// // Every error is one readable line.
/// println!("{}", Aes::new(&[0u8; 15]).unwrap_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A key of the wrong length for the algorithm.
    InvalidKeyLength {
        /// What the algorithm accepts, e.g. "16, 24 or 32".
        expected: &'static str,
        /// What was given.
        got: usize,
    },
    /// An IV, nonce or counter block of the wrong length.
    InvalidIvLength {
        /// Accepted length(s), in bytes.
        expected: &'static str,
        /// What was given.
        got: usize,
    },
    /// Data whose length must be a multiple of the block size is not.
    NotBlockAligned {
        /// The length given.
        len: usize,
        /// The block size it must be a multiple of.
        block_size: usize,
    },
    /// Separate input and output buffers of different lengths.
    LengthMismatch {
        /// Input length.
        input: usize,
        /// Output length.
        output: usize,
    },
    /// PKCS#7 padding that does not check out (wrong key, corrupted or truncated data).
    BadPadding,
    /// A padding block size outside 1..=255.
    InvalidBlockSize {
        /// What was given.
        got: usize,
    },
    /// No backend of that name exists.
    UnknownBackend(String),
    /// The backend exists but does not implement this algorithm (on this architecture).
    BackendNotImplemented {
        /// Algorithm asked for.
        algorithm: &'static str,
        /// Backend asked for.
        backend: &'static str,
    },
    /// The backend exists but this CPU (after the `HWCRYPT_CPU` mask) cannot run it.
    BackendUnavailable {
        /// Algorithm asked for.
        algorithm: &'static str,
        /// Backend asked for.
        backend: &'static str,
        /// CPU features it needs that are missing or masked off, comma-separated.
        missing: String,
    },
    /// The `HWCRYPT_CPU` capability mask could not be parsed.
    InvalidCpuMask(String),
    /// An AEAD nonce of the wrong length.
    InvalidNonceLength {
        /// Accepted length(s), in bytes.
        expected: &'static str,
        /// What was given.
        got: usize,
    },
    /// An AEAD tag of a length the algorithm (or this API) does not accept.
    InvalidTagLength {
        /// Accepted length(s), in bytes.
        expected: &'static str,
        /// What was given.
        got: usize,
    },
    /// Plaintext or associated data longer than the algorithm allows.
    MessageTooLong {
        /// What was too long: "plaintext", "associated data".
        what: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// An AEAD open failed: wrong key, nonce, associated data, or tampered
    /// ciphertext or tag. Deliberately says nothing more; no plaintext is
    /// released.
    AuthenticationFailed,
    /// An XTS key whose two halves (data key and tweak key) are equal, which
    /// IEEE 1619-2018 and FIPS 140-3 (IG C.I) forbid.
    XtsEqualKeyHalves,
    /// An XTS data unit shorter than one block or longer than 2^20 blocks.
    InvalidDataUnitLength {
        /// What was given.
        got: usize,
    },
    /// A buffer of XTS data units whose length is not a multiple of the unit size.
    NotUnitAligned {
        /// The buffer length.
        len: usize,
        /// The data unit size.
        unit_size: usize,
    },
    /// A key-space description (`hwcrypt crack`) that does not parse or is too large.
    InvalidKeySpace(String),
    /// A key search whose parameters do not fit together (mode, ciphertext,
    /// predicates, filter blocks, shard).
    InvalidSearch(String),
    /// A streaming call made out of order: associated data after the data,
    /// data or a tag before a message was started or after it was finished,
    /// or encryption and decryption mixed in one message.
    OutOfOrder(&'static str),
    /// A CTR call that would run the counter past its width and repeat
    /// keystream: more than 2^32 blocks (64 GiB) from the initial counter
    /// with 32-bit counters, or a byte position past 2^128 - 1. Nothing was
    /// encrypted.
    KeystreamExhausted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidKeyLength { expected, got } => {
                write!(f, "invalid key length: {got} bytes (expected {expected})")
            }
            Error::InvalidIvLength { expected, got } => {
                write!(f, "invalid IV length: {got} bytes (expected {expected})")
            }
            Error::NotBlockAligned { len, block_size } => write!(
                f,
                "data length {len} is not a multiple of the {block_size}-byte block size"
            ),
            Error::LengthMismatch { input, output } => write!(
                f,
                "output buffer is {output} bytes but input is {input} bytes; they must be equal"
            ),
            Error::BadPadding => {
                f.write_str("bad padding (wrong key, or corrupted or truncated data)")
            }
            Error::InvalidBlockSize { got } => {
                write!(f, "invalid padding block size {got} (expected 1..=255)")
            }
            Error::UnknownBackend(name) => {
                write!(f, "unknown backend {name:?} (known: ")?;
                for (i, b) in crate::Backend::ALL.iter().enumerate() {
                    write!(f, "{}{b}", if i == 0 { "" } else { ", " })?;
                }
                f.write_str(")")
            }
            Error::BackendNotImplemented { algorithm, backend } => write!(
                f,
                "backend '{backend}' does not implement {algorithm} (in this build, for this architecture)"
            ),
            Error::BackendUnavailable {
                algorithm,
                backend,
                missing,
            } => write!(
                f,
                "backend '{backend}' cannot run {algorithm} on this CPU (missing or masked: {missing})"
            ),
            Error::InvalidCpuMask(why) => write!(f, "invalid HWCRYPT_CPU: {why}"),
            Error::InvalidNonceLength { expected, got } => {
                write!(f, "invalid nonce length: {got} bytes (expected {expected})")
            }
            Error::InvalidTagLength { expected, got } => {
                write!(f, "invalid tag length: {got} bytes (expected {expected})")
            }
            Error::MessageTooLong { what, limit } => {
                write!(f, "{what} too long (at most {limit} bytes)")
            }
            Error::AuthenticationFailed => f.write_str(
                "authentication failed (wrong key, nonce or associated data, or tampered data)",
            ),
            Error::XtsEqualKeyHalves => {
                f.write_str("XTS key rejected: its two halves (data key and tweak key) are equal")
            }
            Error::InvalidDataUnitLength { got } => write!(
                f,
                "invalid XTS data unit length: {got} bytes (expected 16 to 16777216)"
            ),
            Error::NotUnitAligned { len, unit_size } => write!(
                f,
                "data length {len} is not a multiple of the {unit_size}-byte data unit size"
            ),
            Error::InvalidKeySpace(why) => write!(f, "invalid key space: {why}"),
            Error::InvalidSearch(why) => write!(f, "invalid key search: {why}"),
            Error::OutOfOrder(why) => write!(f, "call out of order: {why}"),
            Error::KeystreamExhausted => {
                f.write_str("CTR keystream exhausted: the counter would wrap and repeat keystream")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand used throughout the crate.
///
/// ```
/// fn make_key(bytes: &[u8]) -> hwcrypt::Result<hwcrypt::aes::Aes> {
///     hwcrypt::aes::Aes::new(bytes)
/// }
/// assert!(make_key(&[0u8; 16]).is_ok());
/// assert!(make_key(&[0u8; 3]).is_err());
/// ```
pub type Result<T> = core::result::Result<T, Error>;
