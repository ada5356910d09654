//! The STREAM decryptor: a `Read` adapter that releases a chunk's plaintext
//! only after its tag verified, and `Seek` over seekable sources.

use super::{CHUNK_LEN, Layout, SEALED_CHUNK_LEN, StreamError, open_chunk, read_full};
use crate::aead::{Aead, TAG_LEN};
use core::fmt;
use std::io::{self, Read, Seek, SeekFrom};
use zeroize::{Zeroize, Zeroizing};

/// The chunk whose plaintext is in `plain`.
#[derive(Clone, Copy, Debug)]
struct Loaded {
    index: u64,
    len: usize,
    last: bool,
}

/// Decrypts a STREAM from a [`Read`].
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
/// Read sequentially, the final chunk is the one the source ends after
/// (found by reading one byte ahead). As age reads a stream: data after a
/// final chunk (one that opens with the final flag where more data follows)
/// releases that chunk, then fails with [`StreamError::TrailingData`]; a
/// stream that ends after a full chunk that verifies only as a middle chunk
/// releases it, then fails with [`StreamError::Truncated`]. Either way every
/// byte released was authenticated, and the read fails.
///
/// Over a [`Seek`] source, [`Seek`] gives random access: the first seek
/// measures the sealed length (from the position the decryptor started at
/// to the end), and from then on chunk `i` is the final one exactly when the
/// length says so. A seek relative to the end decrypts and authenticates the
/// final chunk before it returns, so a truncated or extended file cannot
/// choose the offset (str4d/rage#195). Any failure of the stream
/// (authentication, truncation, trailing data) is sticky; an I/O error of
/// the source (`WouldBlock`, ...) is returned as it is, and the next read
/// goes on where it stopped.
pub struct StreamDecryptor<A: Aead, R: Read> {
    aead: A,
    inner: R,
    /// The sealed chunk as read.
    sealed: Zeroizing<Vec<u8>>,
    /// The verified plaintext of `loaded`.
    plain: Zeroizing<Vec<u8>>,
    loaded: Option<Loaded>,
    /// Plaintext position.
    pos: u64,
    /// Sequential reading: the next chunk index and one byte read ahead.
    next_index: u64,
    peek: Option<u8>,
    /// Bytes of the next chunk already in `sealed` (a read of `inner`
    /// failed part of the way, `WouldBlock` or an error: the next call goes
    /// on from there rather than mid-chunk).
    partial: usize,
    /// Bytes taken from `inner` since construction (sequential reading).
    consumed: u64,
    /// Reported once the last chunk's plaintext has been read (trailing
    /// data, or a stream cut after a verified full middle chunk).
    trailing: Option<StreamError>,
    failed: Option<StreamError>,
    /// Random access: where the stream starts in `inner`, and its shape.
    layout: Option<(u64, Layout)>,
    /// `load_at`, set with `layout` (it needs `R: Seek`, `Read` does not).
    load_at: Option<LoadAt<A, R>>,
}

type LoadAt<A, R> = fn(&mut StreamDecryptor<A, R>, u64) -> io::Result<()>;

impl<A: Aead, R: Read> StreamDecryptor<A, R> {
    /// A STREAM decryptor reading from `inner` (positioned at the first
    /// chunk) with key `aead`.
    pub fn new(aead: A, inner: R) -> Self {
        StreamDecryptor {
            aead,
            inner,
            sealed: Zeroizing::new(vec![0; SEALED_CHUNK_LEN]),
            plain: Zeroizing::new(vec![0; SEALED_CHUNK_LEN]),
            loaded: None,
            pos: 0,
            next_index: 0,
            peek: None,
            partial: 0,
            consumed: 0,
            trailing: None,
            failed: None,
            layout: None,
            load_at: None,
        }
    }

    /// Returns the inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn fail(&mut self, err: StreamError) -> io::Error {
        self.plain.zeroize();
        self.loaded = None;
        self.failed = Some(err);
        err.into()
    }

    /// Opens `sealed[..len]` as chunk `index` into `plain`.
    fn open_into_plain(
        &mut self,
        index: u64,
        len: usize,
        last: bool,
    ) -> Result<usize, StreamError> {
        self.plain[..len].copy_from_slice(&self.sealed[..len]);
        open_chunk(&self.aead, index, last, &mut self.plain[..len])
    }

    /// Reads and opens the next chunk in sequence.
    fn load_sequential(&mut self) -> io::Result<()> {
        let index = self.next_index;
        if self.partial == 0
            && let Some(b) = self.peek.take()
        {
            self.sealed[0] = b;
            self.partial = 1;
        }
        // Every byte read is kept (`partial`) before an error returns.
        while self.partial < SEALED_CHUNK_LEN {
            match self.inner.read(&mut self.sealed[self.partial..]) {
                Ok(0) => break,
                Ok(k) => {
                    self.partial += k;
                    self.consumed += k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let n = self.partial;
        let at_end = if n < SEALED_CHUNK_LEN {
            true
        } else {
            let mut one = [0u8; 1];
            let k = read_full(&mut self.inner, &mut one)?;
            self.consumed += k as u64;
            if k == 1 {
                self.peek = Some(one[0]);
            }
            k == 0
        };
        self.partial = 0;
        let result = if n == 0 {
            Err(if index == 0 {
                StreamError::NoChunks
            } else {
                StreamError::Truncated
            })
        } else if n < TAG_LEN {
            Err(StreamError::Truncated)
        } else if at_end && n == TAG_LEN && index > 0 {
            Err(StreamError::EmptyLastChunk)
        } else if at_end && n < SEALED_CHUNK_LEN {
            self.open_into_plain(index, n, true).map(|len| (len, true))
        } else if at_end {
            // A full chunk at the end: the final one, or (as age reads it) a
            // verified middle chunk after which the stream was cut.
            match self.open_into_plain(index, n, true) {
                Ok(len) => Ok((len, true)),
                Err(err) => match self.open_into_plain(index, n, false) {
                    Ok(len) => {
                        self.trailing = Some(StreamError::Truncated);
                        Ok((len, true))
                    }
                    Err(_) => Err(err),
                },
            }
        } else {
            match self.open_into_plain(index, n, false) {
                Ok(len) => Ok((len, false)),
                // A full chunk that opens as the final one, with data after it.
                Err(err) => match self.open_into_plain(index, n, true) {
                    Ok(len) => {
                        self.trailing = Some(StreamError::TrailingData);
                        Ok((len, true))
                    }
                    Err(_) => Err(err),
                },
            }
        };
        match result {
            Ok((len, last)) => {
                self.loaded = Some(Loaded { index, len, last });
                self.next_index = index + 1;
                Ok(())
            }
            Err(err) => Err(self.fail(err)),
        }
    }

    fn read_inner(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if let Some(err) = self.failed {
            return Err(err.into());
        }
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let index = self.pos / CHUNK_LEN as u64;
            let offset = (self.pos % CHUNK_LEN as u64) as usize;
            if let Some(l) = self.loaded {
                if l.index == index && offset < l.len {
                    let n = out.len().min(l.len - offset);
                    out[..n].copy_from_slice(&self.plain[offset..offset + n]);
                    self.pos += n as u64;
                    return Ok(n);
                }
                if l.last && index >= l.index {
                    // At or past the end of the message.
                    return match self.trailing {
                        Some(err) => Err(self.fail(err)),
                        None => Ok(0),
                    };
                }
            }
            match (self.layout, self.load_at) {
                (Some((_, layout)), _) if index >= layout.chunks => return Ok(0),
                (Some(_), Some(load_at)) => load_at(self, index)?,
                _ => self.load_sequential()?,
            }
        }
    }
}

impl<A: Aead, R: Read + Seek> StreamDecryptor<A, R> {
    /// Measures the stream on the first seek.
    fn layout(&mut self) -> io::Result<(u64, Layout)> {
        if let Some(layout) = self.layout {
            return Ok(layout);
        }
        let here = self.inner.stream_position()?;
        let start = here.checked_sub(self.consumed).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "stream position moved under the decryptor",
            )
        })?;
        let end = self.inner.seek(SeekFrom::End(0))?;
        let sealed_len = end.checked_sub(start).ok_or(StreamError::Truncated)?;
        let layout = Layout::of_sealed(sealed_len).map_err(|e| self.fail(e))?;
        self.peek = None;
        self.partial = 0;
        self.trailing = None;
        // A chunk read in sequence was called the last one because the
        // source ended after it, which may be a middle chunk of a truncated
        // stream (or a final one with data after it): its `last` is not
        // the layout's, and the error that was due when it was read out is
        // gone. Dropped, so that the layout loads every chunk anew, with
        // the final flag the length gives it.
        self.loaded = None;
        self.layout = Some((start, layout));
        self.load_at = Some(Self::load_at);
        Ok((start, layout))
    }

    /// Reads and opens chunk `index` (< chunks) at its place.
    fn load_at(&mut self, index: u64) -> io::Result<()> {
        let (start, layout) = self.layout()?;
        let len = layout.sealed_chunk_len(index);
        let last = index + 1 == layout.chunks;
        self.inner
            .seek(SeekFrom::Start(start + index * SEALED_CHUNK_LEN as u64))?;
        if read_full(&mut self.inner, &mut self.sealed[..len])? != len {
            return Err(self.fail(StreamError::Truncated));
        }
        match self.open_into_plain(index, len, last) {
            Ok(len) => {
                self.loaded = Some(Loaded { index, len, last });
                Ok(())
            }
            Err(err) => Err(self.fail(err)),
        }
    }

    /// The plaintext length, after authenticating the final chunk.
    pub fn authenticated_len(&mut self) -> io::Result<u64> {
        if let Some(err) = self.failed {
            return Err(err.into());
        }
        let (_, layout) = self.layout()?;
        let last = layout.chunks - 1;
        if !matches!(self.loaded, Some(l) if l.index == last && l.last) {
            self.load_at(last)?;
        }
        Ok(layout.plaintext_len)
    }
}

impl<A: Aead, R: Read> Read for StreamDecryptor<A, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.read_inner(out)
    }
}

impl<A: Aead, R: Read + Seek> Seek for StreamDecryptor<A, R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        if let Some(err) = self.failed {
            return Err(err.into());
        }
        self.layout()?;
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.authenticated_len()?.checked_add_signed(d),
        };
        let target = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek to a negative or overflowing position",
            )
        })?;
        self.pos = target;
        Ok(target)
    }
}

impl<A: Aead, R: Read> fmt::Debug for StreamDecryptor<A, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamDecryptor")
            .field("algorithm", &self.aead.algorithm())
            .field("position", &self.pos)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}
