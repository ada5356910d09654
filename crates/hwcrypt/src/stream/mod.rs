//! STREAM: online authenticated encryption of a long message in chunks
//! (Hoang, Reyhanitabar, Rogaway and Vizár, "Online Authenticated-Encryption
//! and its Nonce-Reuse Misuse-Resistance", 2015), with the parameters of the
//! age v1 payload.
//!
//! The plaintext is cut into chunks of [`CHUNK_LEN`] (64 KiB) bytes; each is
//! sealed on its own with the AEAD under the nonce
//! `counter (11 bytes, big-endian) || last (1 byte: 0x01 on the final chunk,
//! else 0x00)` and no associated data, and the sealed chunks are concatenated.
//! Every chunk but the last is full; the last may be full too, and is empty
//! only when the whole plaintext is. The counter binds each chunk to its
//! place (no reordering, duplication or dropping) and the final flag to the
//! end (no truncation at a chunk boundary, no appended chunks).
//!
//! * [`StreamEncryptor`]: a [`Write`] adapter; [`StreamEncryptor::finish`]
//!   writes the final chunk. Dropped without `finish`, it leaves a stream
//!   with no final chunk, which every reader rejects as truncated.
//! * [`StreamDecryptor`]: a [`Read`](std::io::Read) adapter (and [`Seek`](std::io::Seek) over a seekable
//!   source). A chunk's plaintext is released only after its tag verified.
//! * [`seal_parallel`] / [`open_parallel`]: `Read` to `Write` on several
//!   threads, a bounded window of chunks in flight, output in order;
//!   [`seal_parallel_at`] / [`open_parallel_at`] the same from a file read
//!   at offsets ([`ReadAt`]: no lock around the reads); [`seal_buffer`] /
//!   [`open_buffer`] for whole buffers.
//!
//! The key may be any [`Aead`] with 12-byte nonces and 16-byte tags:
//! ChaCha20-Poly1305 (as age) or AES-256-GCM. A key must never seal two
//! streams: derive a fresh one per stream (age does, from a random nonce).
//!
//! ```
//! use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
//! use hwcrypt::stream::{StreamDecryptor, StreamEncryptor};
//! use std::io::{Read, Write};
//! let key = ChaCha20Poly1305::new(&[7; 32])?;
//! let mut enc = StreamEncryptor::new(key.clone(), Vec::new());
//! enc.write_all(b"attack at dawn")?;
//! let sealed = enc.finish()?;
//! let mut plain = Vec::new();
//! StreamDecryptor::new(key, &sealed[..]).read_to_end(&mut plain)?;
//! assert_eq!(plain, b"attack at dawn");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod parallel;
mod reader;

pub use parallel::{
    MAX_THREADS, MAX_WINDOW, ReadAt, open_buffer, open_parallel, open_parallel_at, seal_buffer,
    seal_parallel, seal_parallel_at,
};
pub use reader::StreamDecryptor;

use crate::aead::{Aead, TAG_LEN};
use core::fmt;
use std::io::{self, Write};
use zeroize::Zeroizing;

/// Plaintext bytes per chunk (the last chunk may be shorter).
pub const CHUNK_LEN: usize = 64 * 1024;

/// Bytes of one sealed full chunk: the plaintext and its tag.
pub const SEALED_CHUNK_LEN: usize = CHUNK_LEN + TAG_LEN;

/// Nonce length the STREAM needs from its AEAD.
pub const NONCE_LEN: usize = 12;

/// The nonce of chunk `counter`: 11-byte big-endian counter, final flag.
pub fn chunk_nonce(counter: u64, last: bool) -> [u8; NONCE_LEN] {
    let mut nonce = [0u8; NONCE_LEN];
    nonce[3..11].copy_from_slice(&counter.to_be_bytes());
    nonce[11] = u8::from(last);
    nonce
}

/// Length of the sealed stream of a `plaintext_len`-byte message.
pub fn sealed_len(plaintext_len: u64) -> u64 {
    let chunks = plaintext_len.div_ceil(CHUNK_LEN as u64).max(1);
    plaintext_len + chunks * TAG_LEN as u64
}

/// The shape of a sealed stream of known length: how many chunks, how long
/// the plaintext. Fails for lengths no valid stream has.
///
/// ```
/// use hwcrypt::stream::{sealed_len, Layout, CHUNK_LEN};
/// let sealed = sealed_len(CHUNK_LEN as u64 + 10); // one full chunk and 10 bytes
/// let layout = Layout::of_sealed(sealed)?;
/// assert_eq!((layout.chunks, layout.plaintext_len), (2, CHUNK_LEN as u64 + 10));
/// assert_eq!(layout.sealed_chunk_len(1), 10 + 16);
/// # Ok::<(), hwcrypt::stream::StreamError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of chunks (at least one).
    pub chunks: u64,
    /// Plaintext length of the whole message.
    pub plaintext_len: u64,
    /// Sealed length of the whole stream.
    pub sealed_len: u64,
}

impl Layout {
    /// The layout of a sealed stream of `sealed_len` bytes.
    pub fn of_sealed(sealed_len: u64) -> Result<Layout, StreamError> {
        let full = sealed_len / SEALED_CHUNK_LEN as u64;
        let rem = sealed_len % SEALED_CHUNK_LEN as u64;
        let chunks = if sealed_len == 0 {
            return Err(StreamError::NoChunks);
        } else if rem == 0 {
            full
        } else if rem < TAG_LEN as u64 {
            return Err(StreamError::Truncated);
        } else if rem == TAG_LEN as u64 && full > 0 {
            return Err(StreamError::EmptyLastChunk);
        } else {
            full + 1
        };
        Ok(Layout {
            chunks,
            plaintext_len: sealed_len - chunks * TAG_LEN as u64,
            sealed_len,
        })
    }

    /// Sealed length of chunk `index` (< `chunks`).
    pub fn sealed_chunk_len(&self, index: u64) -> usize {
        if index + 1 < self.chunks {
            SEALED_CHUNK_LEN
        } else {
            (self.sealed_len - index * SEALED_CHUNK_LEN as u64) as usize
        }
    }
}

/// Why a sealed stream was rejected. Inside an [`io::Error`] (kind
/// `InvalidData`) when it comes through `Read`/`Write`; see
/// [`StreamError::from_io`].
///
/// ```
/// use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
/// use hwcrypt::stream::{StreamDecryptor, StreamEncryptor, StreamError};
/// use std::io::{Read, Write};
/// let key = ChaCha20Poly1305::new(&[7; 32])?;
/// let mut enc = StreamEncryptor::new(key.clone(), Vec::new());
/// enc.write_all(b"attack at dawn")?;
/// let mut sealed = enc.finish()?;
/// sealed[0] ^= 1; // tamper
/// let err = StreamDecryptor::new(key, &sealed[..]).read_to_end(&mut Vec::new()).unwrap_err();
/// assert_eq!(StreamError::from_io(&err), Some(StreamError::ChunkAuthentication { index: 0 }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamError {
    /// No chunk at all (an empty message is one empty final chunk).
    NoChunks,
    /// The stream ends before its final chunk, or inside a chunk.
    Truncated,
    /// A chunk did not authenticate: wrong key, or the data was corrupted,
    /// reordered, duplicated or truncated.
    ChunkAuthentication {
        /// Index of the chunk (0-based).
        index: u64,
    },
    /// An empty final chunk after full ones (only an empty message has one).
    EmptyLastChunk,
    /// Data after the final chunk.
    TrailingData,
    /// More chunks than the counter can number.
    TooLong,
}

impl StreamError {
    /// The `StreamError` inside an `io::Error` from this module, if any.
    pub fn from_io(err: &io::Error) -> Option<StreamError> {
        err.get_ref()?.downcast_ref::<StreamError>().copied()
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::NoChunks => f.write_str("encrypted payload is empty (no chunks)"),
            StreamError::Truncated => f.write_str("encrypted payload is truncated"),
            StreamError::ChunkAuthentication { index } => write!(
                f,
                "payload chunk {index} failed authentication (wrong key, or data corrupted, \
                 reordered or truncated)"
            ),
            StreamError::EmptyLastChunk => f.write_str("final payload chunk is empty"),
            StreamError::TrailingData => f.write_str("trailing data after the final chunk"),
            StreamError::TooLong => f.write_str("stream too long for its chunk counter"),
        }
    }
}

impl std::error::Error for StreamError {}

impl From<StreamError> for io::Error {
    fn from(err: StreamError) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, err)
    }
}

/// Seals one chunk of `buf[..len]` in place and puts its tag at
/// `buf[len..len + TAG_LEN]`; returns the sealed length.
pub(crate) fn seal_chunk<A: Aead>(
    aead: &A,
    counter: u64,
    last: bool,
    buf: &mut [u8],
    len: usize,
) -> io::Result<usize> {
    let tag = aead
        .seal_in_place_detached(&chunk_nonce(counter, last), &[], &mut buf[..len])
        .map_err(io::Error::other)?;
    buf[len..len + TAG_LEN].copy_from_slice(&tag);
    Ok(len + TAG_LEN)
}

/// Opens one sealed chunk `buf` (plaintext || tag) in place; the plaintext
/// is `buf[..buf.len() - TAG_LEN]`. On failure that part is zeroed.
pub(crate) fn open_chunk<A: Aead>(
    aead: &A,
    counter: u64,
    last: bool,
    buf: &mut [u8],
) -> Result<usize, StreamError> {
    let Some(len) = buf.len().checked_sub(TAG_LEN) else {
        return Err(StreamError::Truncated);
    };
    let (data, tag) = buf.split_at_mut(len);
    aead.open_in_place_detached(&chunk_nonce(counter, last), &[], data, tag)
        .map_err(|_| StreamError::ChunkAuthentication { index: counter })?;
    Ok(len)
}

/// Reads until `buf` is full or the source ends; returns the bytes read.
pub(crate) fn read_full<R: io::Read + ?Sized>(src: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match src.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Encrypts a STREAM into a [`Write`]: chunks are sealed and written as they
/// fill; [`finish`](StreamEncryptor::finish) seals the final chunk.
///
/// ```
/// use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
/// use hwcrypt::stream::{StreamDecryptor, StreamEncryptor};
/// use std::io::{Read, Write};
/// let key = ChaCha20Poly1305::new(&[7; 32])?;
/// let mut enc = StreamEncryptor::new(key.clone(), Vec::new());
/// enc.write_all(&vec![1u8; 100_000])?; // two chunks
/// let sealed = enc.finish()?;
/// let mut plain = Vec::new();
/// StreamDecryptor::new(key, &sealed[..]).read_to_end(&mut plain)?;
/// assert_eq!(plain, vec![1u8; 100_000]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Dropping it without `finish` writes nothing more: the output then has no
/// final chunk and any reader rejects it as truncated. The buffered
/// plaintext is zeroized on drop.
///
/// A write of the inner writer that fails (`WouldBlock` on a non-blocking
/// socket, any error) leaves the sealed chunk pending: the next `write`
/// (or `flush`) sends the rest of it first, and a chunk is never sealed
/// twice. `finish` after such a failure reseals a chunk none of which went
/// out as the last one; one partly written (or sent by `flush`) cannot be
/// the last, and `finish` then fails. `finish` itself writes the last chunk
/// with `write_all` and consumes the encryptor: give it a writer that
/// blocks (a `WouldBlock` there ends the stream unfinished).
pub struct StreamEncryptor<A: Aead, W: Write> {
    aead: A,
    inner: W,
    /// Plaintext of the chunk being filled, with room for its tag.
    buf: Zeroizing<Vec<u8>>,
    filled: usize,
    counter: u64,
    /// `buf[..sealed]` is chunk `counter`, sealed as not the last, of which
    /// `written` bytes went out before a write failed (0: none pending).
    sealed: usize,
    written: usize,
}

impl<A: Aead, W: Write> StreamEncryptor<A, W> {
    /// A STREAM encryptor writing to `inner` with a fresh key `aead`.
    pub fn new(aead: A, inner: W) -> Self {
        StreamEncryptor {
            aead,
            inner,
            buf: Zeroizing::new(vec![0; SEALED_CHUNK_LEN]),
            filled: 0,
            counter: 0,
            sealed: 0,
            written: 0,
        }
    }

    /// Writes `buf[written..sealed]`, counting what went out, so that a
    /// failed write can be resumed where it stopped.
    fn drain(&mut self) -> io::Result<()> {
        while self.written < self.sealed {
            match self.inner.write(&self.buf[self.written..self.sealed]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(k) => self.written += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Seals (unless an earlier call did) and writes the full chunk in the
    /// buffer (not the final one: more data follows it).
    fn flush_chunk(&mut self) -> io::Result<()> {
        if self.sealed == 0 {
            if self.counter == u64::MAX {
                return Err(StreamError::TooLong.into());
            }
            self.sealed = seal_chunk(&self.aead, self.counter, false, &mut self.buf, self.filled)?;
            self.written = 0;
        }
        self.drain()?;
        self.counter += 1;
        self.filled = 0;
        self.sealed = 0;
        self.written = 0;
        Ok(())
    }

    /// Seals and writes the final chunk, flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        if self.sealed > 0 {
            if self.written > 0 {
                return Err(io::Error::other(
                    "the stream cannot end here: a chunk sealed as not the last was partly \
                     written when a write failed (let write or flush succeed before finish)",
                ));
            }
            // None of it went out: back to plaintext, to be sealed as the last.
            open_chunk(
                &self.aead,
                self.counter,
                false,
                &mut self.buf[..self.sealed],
            )?;
            self.sealed = 0;
        }
        if self.filled == 0 && self.counter > 0 {
            // Only after a failed write and a `flush` that sent the chunk
            // meant to be followed by more data: an empty last chunk after
            // full ones is not a valid stream.
            return Err(StreamError::EmptyLastChunk.into());
        }
        let n = seal_chunk(&self.aead, self.counter, true, &mut self.buf, self.filled)?;
        self.inner.write_all(&self.buf[..n])?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<A: Aead, W: Write> Write for StreamEncryptor<A, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        // A full chunk is sealed only once more data shows it is not the last.
        if self.filled == CHUNK_LEN {
            self.flush_chunk()?;
        }
        let n = data.len().min(CHUNK_LEN - self.filled);
        self.buf[self.filled..self.filled + n].copy_from_slice(&data[..n]);
        self.filled += n;
        Ok(n)
    }

    /// Sends what is left of a chunk an earlier write could not, and
    /// flushes the inner writer; the partial chunk stays buffered (it can
    /// only be sealed once it is full or final).
    fn flush(&mut self) -> io::Result<()> {
        if self.sealed > 0 {
            self.flush_chunk()?;
        }
        self.inner.flush()
    }
}

impl<A: Aead, W: Write> fmt::Debug for StreamEncryptor<A, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamEncryptor")
            .field("algorithm", &self.aead.algorithm())
            .field("chunks_written", &self.counter)
            .finish_non_exhaustive()
    }
}
