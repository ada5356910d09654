//! hwcrypt: fast, constant-time symmetric encryption that uses the AES
//! hardware of the CPU it runs on.
//!
//! Every algorithm has several backends (portable constant-time software,
//! AES-NI, VAES+AVX2, VAES+AVX-512), registered with priorities in [`registry`]; the best
//! one the CPU can run is chosen once, when a key is made. The environment
//! variable `HWCRYPT_CPU` can switch CPU features off (see [`cpu`]) so every
//! backend can be tested and measured on one machine.
//!
//! ```
//! use hwcrypt::{aes::Aes, modes::Ctr};
//! let key = [0x2b; 16];
//! let mut ctr = Ctr::new(Aes::new(&key)?, &[0; 16])?;
//! let mut data = *b"attack at dawn";
//! ctr.apply_keystream(&mut data)?;
//! # Ok::<(), hwcrypt::Error>(())
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod aead;
pub mod aes;
pub mod backend;
pub mod chacha20poly1305;
pub mod cpu;
pub mod crack;
pub mod ct;
pub mod error;
pub mod gcm;
mod inout;
pub mod modes;
mod partial;
pub mod prefs;
pub mod registry;
mod secret;
pub mod stream;

pub use backend::Backend;
pub use error::{Error, Result};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The library guide's examples (`docs/library.md`), compiled and run as
/// doctests.
#[doc = include_str!("../../../docs/library.md")]
#[cfg(doctest)]
pub struct LibraryGuideDoctests;
