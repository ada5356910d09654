//! The STREAM on several threads: chunks are independent, so segments of
//! 16 chunks (1 MiB) are sealed or opened on a pool of workers while the
//! calling thread reads the next ones and a writer thread writes finished
//! ones in order. A fixed window of segment buffers bounds the memory
//! (at most [`MAX_WINDOW`] MiB) whatever the input size. With one thread the
//! same segment code runs inline, with no threads or channels.
//!
//! The output is byte for byte that of [`StreamEncryptor`](super::StreamEncryptor)
//! and [`StreamDecryptor`](super::StreamDecryptor); when opening, chunks are
//! written only after they verified, in order, and the first failure stops
//! the run. (Data after a final chunk fails as that chunk's authentication
//! here, as trailing data in the sequential reader.)

use super::{
    CHUNK_LEN, Layout, SEALED_CHUNK_LEN, StreamError, chunk_nonce, open_chunk, read_full,
    seal_chunk,
};
use crate::aead::{Aead, TAG_LEN};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread;
use zeroize::{Zeroize, Zeroizing};

/// Chunks per segment, the unit of work and of I/O.
const SEGMENT_CHUNKS: usize = 16;
const SEGMENT_SEALED: usize = SEGMENT_CHUNKS * SEALED_CHUNK_LEN;
const SEGMENT_PLAIN: usize = SEGMENT_CHUNKS * CHUNK_LEN;

/// The most segment buffers in flight (each a little over 1 MiB).
pub const MAX_WINDOW: usize = 32;

/// One segment: its buffer and, after processing, its outcome.
struct Segment {
    seq: u64,
    /// Sealing: plaintext chunk `k` at `k * SEALED_CHUNK_LEN`; sealed, it
    /// is contiguous. Opening: the sealed bytes, contiguous; opened, chunk
    /// `k`'s plaintext at `k * SEALED_CHUNK_LEN`.
    buf: Zeroizing<Vec<u8>>,
    /// Input bytes in `buf`.
    len: usize,
    /// Holds the final chunk.
    last: bool,
    /// Chunks processed successfully, and the failure that stopped it.
    done: usize,
    error: Option<io::Error>,
}

impl Segment {
    fn new() -> Segment {
        Segment {
            seq: 0,
            buf: Zeroizing::new(vec![0; SEGMENT_SEALED]),
            len: 0,
            last: false,
            done: 0,
            error: None,
        }
    }

    /// Fills the segment from `input`: plaintext into chunk slots, or
    /// sealed bytes contiguously. Returns whether it is full.
    fn fill<R: Read + ?Sized>(&mut self, seq: u64, seal: bool, input: &mut R) -> io::Result<bool> {
        self.seq = seq;
        self.last = false;
        self.done = 0;
        self.error = None;
        if seal {
            self.len = 0;
            for k in 0..SEGMENT_CHUNKS {
                let at = k * SEALED_CHUNK_LEN;
                let got = read_full(input, &mut self.buf[at..at + CHUNK_LEN])?;
                self.len += got;
                if got < CHUNK_LEN {
                    break;
                }
            }
            Ok(self.len == SEGMENT_PLAIN)
        } else {
            self.len = read_full(input, &mut self.buf[..])?;
            Ok(self.len == SEGMENT_SEALED)
        }
    }

    fn first_counter(&self) -> u64 {
        self.seq * SEGMENT_CHUNKS as u64
    }

    /// Seals or opens every chunk of the segment.
    fn process<A: Aead>(&mut self, aead: &A, seal: bool) {
        if seal {
            let chunks = self.len.div_ceil(CHUNK_LEN).max(1);
            for k in 0..chunks {
                let len = (self.len - k * CHUNK_LEN).min(CHUNK_LEN);
                let last = self.last && k + 1 == chunks;
                let at = k * SEALED_CHUNK_LEN;
                let counter = self.first_counter() + k as u64;
                let slot = &mut self.buf[at..at + SEALED_CHUNK_LEN];
                if let Err(e) = seal_chunk(aead, counter, last, slot, len) {
                    self.error = Some(e);
                    return;
                }
                self.done += 1;
            }
        } else {
            if self.len == 0 {
                // Only the first segment can be empty: the source ended at once.
                self.error = Some(StreamError::NoChunks.into());
                return;
            }
            let chunks = self.len.div_ceil(SEALED_CHUNK_LEN);
            for k in 0..chunks {
                let at = k * SEALED_CHUNK_LEN;
                let end = self.len.min(at + SEALED_CHUNK_LEN);
                let last = self.last && k + 1 == chunks;
                let counter = self.first_counter() + k as u64;
                let checked = if end - at < TAG_LEN {
                    Err(StreamError::Truncated)
                } else if last && end - at == TAG_LEN && counter > 0 {
                    Err(StreamError::EmptyLastChunk)
                } else {
                    open_chunk(aead, counter, last, &mut self.buf[at..end])
                };
                if let Err(e) = checked {
                    self.error = Some(e.into());
                    return;
                }
                self.done += 1;
            }
        }
    }

    /// Writes what processing released; then reports its failure, if any.
    fn emit<W: Write + ?Sized>(&mut self, seal: bool, output: &mut W) -> io::Result<u64> {
        let mut written = 0u64;
        if seal {
            if self.error.is_none() {
                let chunks = self.len.div_ceil(CHUNK_LEN).max(1);
                let n = self.len + chunks * TAG_LEN;
                output.write_all(&self.buf[..n])?;
                written = n as u64;
            }
        } else {
            for k in 0..self.done {
                let at = k * SEALED_CHUNK_LEN;
                let end = self.len.min(at + SEALED_CHUNK_LEN) - TAG_LEN;
                output.write_all(&self.buf[at..end])?;
                written += (end - at) as u64;
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }
}

/// Reads segments, marks the final one (the source ends after it) and hands
/// each to `dispatch` in order; `next_buffer` supplies empty buffers (None:
/// stop, the consumer has given up).
fn read_segments<R: Read + ?Sized>(
    seal: bool,
    input: &mut R,
    mut next_buffer: impl FnMut() -> Option<Segment>,
    mut dispatch: impl FnMut(Segment) -> io::Result<()>,
) -> io::Result<()> {
    let mut seq = 0u64;
    let mut pending: Option<Segment> = None;
    loop {
        let Some(mut seg) = next_buffer() else {
            return Ok(());
        };
        let full = seg.fill(seq, seal, input)?;
        if let Some(mut prev) = pending.take() {
            if seg.len == 0 {
                prev.last = true;
                return dispatch(prev);
            }
            dispatch(prev)?;
        }
        if !full {
            seg.last = true;
            return dispatch(seg);
        }
        pending = Some(seg);
        seq += 1;
    }
}

/// Seals everything `input` holds into `output` as one STREAM on `threads`
/// threads (0 or 1: inline); returns the bytes written.
pub fn seal_parallel<A, R, W>(aead: &A, input: R, output: W, threads: usize) -> io::Result<u64>
where
    A: Aead + Sync,
    R: Read,
    W: Write + Send,
{
    run(aead, true, input, output, threads)
}

/// Opens the STREAM `input` holds into `output` on `threads` threads (0 or
/// 1: inline); returns the plaintext bytes written. Chunks are written in
/// order and only once verified; on failure the plaintext of the chunks
/// before the bad one has been written (the error says which chunk).
pub fn open_parallel<A, R, W>(aead: &A, input: R, output: W, threads: usize) -> io::Result<u64>
where
    A: Aead + Sync,
    R: Read,
    W: Write + Send,
{
    run(aead, false, input, output, threads)
}

fn run<A, R, W>(
    aead: &A,
    seal: bool,
    mut input: R,
    mut output: W,
    threads: usize,
) -> io::Result<u64>
where
    A: Aead + Sync,
    R: Read,
    W: Write + Send,
{
    if threads <= 1 {
        let mut total = 0u64;
        let free = RefCell::new(vec![Segment::new(), Segment::new()]);
        read_segments(
            seal,
            &mut input,
            || Some(free.borrow_mut().pop().unwrap_or_else(Segment::new)),
            |mut seg| {
                seg.process(aead, seal);
                total += seg.emit(seal, &mut output)?;
                free.borrow_mut().push(seg);
                Ok(())
            },
        )?;
        output.flush()?;
        return Ok(total);
    }

    let window = (2 * threads + 2).clamp(4, MAX_WINDOW);
    let stop = AtomicBool::new(false);
    let (pool_tx, pool_rx) = mpsc::channel::<Segment>();
    for _ in 0..window {
        // The receiver is alive: this cannot fail.
        let _ = pool_tx.send(Segment::new());
    }
    let (work_tx, work_rx) = mpsc::channel::<Segment>();
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<Segment>();

    thread::scope(|s| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            s.spawn(move || {
                loop {
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(mut seg) = next else { return };
                    seg.process(aead, seal);
                    if done_tx.send(seg).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);

        let stop_ref = &stop;
        let output = &mut output;
        let writer = s.spawn(move || -> io::Result<u64> {
            let mut next = 0u64;
            let mut held = BTreeMap::new();
            let mut total = 0u64;
            for seg in done_rx {
                held.insert(seg.seq, seg);
                while let Some(mut seg) = held.remove(&next) {
                    match seg.emit(seal, output) {
                        Ok(n) => total += n,
                        Err(e) => {
                            stop_ref.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                    next += 1;
                    let _ = pool_tx.send(seg);
                }
            }
            output.flush()?;
            Ok(total)
        });

        let read = read_segments(
            seal,
            &mut input,
            || {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                pool_rx.recv().ok()
            },
            |seg| {
                work_tx
                    .send(seg)
                    .map_err(|_| io::Error::other("STREAM workers stopped"))
            },
        );
        drop(work_tx);
        if read.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("STREAM writer thread panicked")));
        match (read, written) {
            // A write or authentication failure explains a reader that stopped.
            (_, Err(e)) => Err(e),
            (Err(e), Ok(_)) => Err(e),
            (Ok(()), Ok(n)) => Ok(n),
        }
    })
}

/// Seals `plaintext` as one STREAM, its chunks shared among `threads`
/// threads.
pub fn seal_buffer<A: Aead + Sync>(
    aead: &A,
    plaintext: &[u8],
    threads: usize,
) -> crate::Result<Vec<u8>> {
    let chunks = plaintext.len().div_ceil(CHUNK_LEN).max(1);
    let mut out = vec![0u8; super::sealed_len(plaintext.len() as u64) as usize];
    let per_thread = chunks.div_ceil(threads.clamp(1, chunks));
    let results: Vec<crate::Result<()>> = thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per_thread * SEALED_CHUNK_LEN)
            .enumerate()
            .map(|(t, group)| {
                s.spawn(move || {
                    for (j, slot) in group.chunks_mut(SEALED_CHUNK_LEN).enumerate() {
                        let index = t * per_thread + j;
                        let start = index * CHUNK_LEN;
                        let len = (plaintext.len() - start).min(CHUNK_LEN);
                        slot[..len].copy_from_slice(&plaintext[start..start + len]);
                        let nonce = chunk_nonce(index as u64, index + 1 == chunks);
                        let (data, tag) = slot.split_at_mut(len);
                        tag.copy_from_slice(&aead.seal_in_place_detached(&nonce, &[], data)?);
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for r in results {
        r?;
    }
    Ok(out)
}

/// Opens the STREAM `sealed`, its chunks shared among `threads` threads.
/// All or nothing: if any chunk fails, no plaintext is returned (the
/// buffer is zeroed) and the error names the first bad chunk.
pub fn open_buffer<A: Aead + Sync>(
    aead: &A,
    sealed: &[u8],
    threads: usize,
) -> Result<Vec<u8>, StreamError> {
    let layout = Layout::of_sealed(sealed.len() as u64)?;
    let chunks = layout.chunks as usize;
    let mut out = vec![0u8; layout.plaintext_len as usize];
    if out.is_empty() {
        let mut tag_only = sealed.to_vec();
        open_chunk(aead, 0, true, &mut tag_only)?;
        return Ok(out);
    }
    let per_thread = chunks.div_ceil(threads.clamp(1, chunks));
    let first_error: Option<StreamError> = thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per_thread * CHUNK_LEN)
            .enumerate()
            .map(|(t, group)| {
                s.spawn(move || -> Result<(), StreamError> {
                    for (j, plain) in group.chunks_mut(CHUNK_LEN).enumerate() {
                        let index = t * per_thread + j;
                        let at = index * SEALED_CHUNK_LEN;
                        let (data, rest) = sealed[at..].split_at(plain.len());
                        plain.copy_from_slice(data);
                        let nonce = chunk_nonce(index as u64, index + 1 == chunks);
                        aead.open_in_place_detached(&nonce, &[], plain, &rest[..TAG_LEN])
                            .map_err(|_| StreamError::ChunkAuthentication {
                                index: index as u64,
                            })?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .find_map(Result::err)
    });
    match first_error {
        Some(e) => {
            out.zeroize();
            Err(e)
        }
        None => Ok(out),
    }
}
