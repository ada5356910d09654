//! The one error type of the age crate: one readable line each, no secrets.

use core::fmt;
use hwcrypt::stream::StreamError;
use std::io;

/// What went wrong while reading, writing or decrypting an age file.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The header is malformed (or an unsupported version, or a stanza a
    /// matching identity found malformed).
    Header(String),
    /// The header MAC does not verify: the header was altered, or the file
    /// key unwrapped from it is not the one it was made with.
    HeaderMac,
    /// No identity could unwrap any recipient stanza.
    NoMatch,
    /// The passphrase did not unwrap the file key of a passphrase-encrypted
    /// file (a wrong passphrase, or an altered stanza): the passphrase
    /// form of [`Error::NoMatch`] (the C2SP test vectors' "no match").
    Passphrase,
    /// The passphrase did not open a passphrase-protected identity (an
    /// encrypted OpenSSH key or an age-encrypted identity file).
    IdentityPassphrase,
    /// The ASCII armor is malformed.
    Armor(String),
    /// The payload did not decrypt (truncated, altered, trailing data).
    Payload(StreamError),
    /// A recipient, identity or key file that cannot be used.
    Key(String),
    /// The passphrase stanza asks for more scrypt work than allowed.
    WorkFactor {
        /// log2(N) in the file.
        got: u8,
        /// The largest accepted.
        max: u8,
    },
    /// Reading or writing failed.
    Io(io::Error),
    /// hwcrypt's ChaCha20-Poly1305 is not available (an invalid
    /// `HWCRYPT_CPU` mask).
    Crypto(hwcrypt::Error),
}

impl Error {
    pub(crate) fn header(msg: impl Into<String>) -> Error {
        Error::Header(msg.into())
    }

    pub(crate) fn key(msg: impl Into<String>) -> Error {
        Error::Key(msg.into())
    }

    /// Turns an `io::Error` from the payload stream back into `Payload`.
    pub fn from_io(err: io::Error) -> Error {
        match StreamError::from_io(&err) {
            Some(e) => Error::Payload(e),
            None => match err.get_ref().and_then(|e| e.downcast_ref::<Error>()) {
                Some(_) => match err.into_inner().map(|e| e.downcast::<Error>()) {
                    Some(Ok(e)) => *e,
                    _ => Error::Io(io::Error::other("age error")),
                },
                None => Error::Io(err),
            },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Header(m) => write!(f, "invalid age header: {m}"),
            Error::HeaderMac => f.write_str(
                "age header MAC does not verify (the header was altered or does not belong to this file key)",
            ),
            Error::NoMatch => f.write_str("no identity matched any of the file's recipients"),
            Error::Passphrase => f.write_str("incorrect passphrase"),
            Error::IdentityPassphrase => {
                f.write_str("incorrect passphrase for the passphrase-protected identity")
            }
            Error::Armor(m) => write!(f, "invalid ASCII armor: {m}"),
            Error::Payload(e) => write!(f, "{e}"),
            Error::Key(m) => f.write_str(m),
            Error::WorkFactor { got, max } => write!(
                f,
                "passphrase work factor 2^{got} is above the accepted 2^{max} (a file that would take too long to open)"
            ),
            Error::Io(e) => write!(f, "{e}"),
            Error::Crypto(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(err: io::Error) -> Error {
        Error::from_io(err)
    }
}

impl From<StreamError> for Error {
    fn from(err: StreamError) -> Error {
        Error::Payload(err)
    }
}

impl From<Error> for io::Error {
    fn from(err: Error) -> io::Error {
        match err {
            Error::Io(e) => e,
            Error::Payload(e) => e.into(),
            other => io::Error::new(io::ErrorKind::InvalidData, other),
        }
    }
}

/// Result with [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
