//! The STREAM on several threads: chunks are independent, so the input is
//! cut into segments of 16 chunks (1 MiB) and each of `threads` workers
//! loops over: read the next segment (the input behind a lock), seal or
//! open it, and hand it to the output in order (whichever worker finishes
//! the segment the output waits for writes it and any finished ones after
//! it). There is no reader or writer thread and no channel: a segment stays
//! on the core that read it, and reading, the crypto and writing overlap
//! across the workers. A fixed window of segment buffers bounds the memory
//! (at most [`MAX_WINDOW`] MiB) whatever the input size. With one thread the
//! same segment code runs inline, with no threads or locks.
//!
//! An input that can be read at any offset ([`ReadAt`]: a regular file,
//! with `pread`) is not read behind a lock: each worker claims the next
//! segment number and reads that segment at its own offset, so the copies
//! out of the page cache run on every core at once instead of one at a
//! time ([`seal_parallel_at`], [`open_parallel_at`]).
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
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;
use zeroize::{Zeroize, Zeroizing};

/// Chunks per segment, the unit of work and of I/O.
const SEGMENT_CHUNKS: usize = 16;
const SEGMENT_SEALED: usize = SEGMENT_CHUNKS * SEALED_CHUNK_LEN;

/// The most segment buffers in flight (each a little over 1 MiB).
pub const MAX_WINDOW: usize = 32;

/// The most threads a call uses; more are taken as this many.
pub const MAX_THREADS: usize = 1024;

/// Runs `work` on up to `threads` threads, this one included: as many as
/// can be started (a spawn that fails, at a process or user limit, leaves
/// the work to the threads already running; never a panic).
fn on_threads(threads: usize, work: impl Fn() + Sync) {
    thread::scope(|s| {
        for _ in 1..threads.clamp(1, MAX_THREADS) {
            if thread::Builder::new().spawn_scoped(s, &work).is_err() {
                break;
            }
        }
        work();
    });
}

/// One segment: its buffer and, after processing, its outcome.
struct Segment {
    seq: u64,
    /// Sealing: plaintext chunk `k` at `k * SEALED_CHUNK_LEN`; sealed, it
    /// is contiguous. Opening: the sealed bytes, contiguous; opened, chunk
    /// `k`'s plaintext at `k * SEALED_CHUNK_LEN`. One byte longer than a
    /// sealed segment, so a fill can read the byte after it (see [`Source`]).
    buf: Zeroizing<Vec<u8>>,
    /// Input bytes in `buf`.
    len: usize,
    /// Holds the final chunk.
    last: bool,
    /// Chunks processed successfully, and the failure that stopped it.
    done: usize,
    error: Option<io::Error>,
}

/// The input and what reading it has found so far. A fill reads one byte
/// past its segment, in the same `read` calls, to learn whether the
/// segment is the last (the final chunk must be flagged as it is sealed or
/// opened); that byte starts the next segment.
struct Source<R> {
    input: R,
    next_seq: u64,
    /// The byte read past the previous segment (none after the first
    /// fill: the input has ended).
    carry: Option<u8>,
}

impl<R: Read> Source<R> {
    fn new(input: R) -> Source<R> {
        Source {
            input,
            next_seq: 0,
            carry: None,
        }
    }

    /// Fills `dst` (less of it at the end of the input), starting with the
    /// carried byte.
    fn read_into(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        if let Some(b) = self.carry.take() {
            dst[0] = b;
            got = 1;
        }
        Ok(got + read_full(&mut self.input, &mut dst[got..])?)
    }

    /// Fills `seg` with the next segment: plaintext into chunk slots, or
    /// sealed bytes contiguously; marks it last when the input ends with it.
    /// Returns false (and leaves `seg` alone) once the input has ended.
    fn fill(&mut self, seg: &mut Segment, seal: bool) -> io::Result<bool> {
        if self.next_seq > 0 && self.carry.is_none() {
            return Ok(false);
        }
        seg.start(self.next_seq);
        if seal {
            // The chunk slots in one vectored read (a `File` reads them with
            // one `readv`, not one `read` a chunk); the last slot also takes
            // the byte after the segment (the slot has room: its tag goes
            // there).
            let mut start = 0;
            if let Some(b) = self.carry.take() {
                seg.buf[0] = b;
                start = 1;
            }
            let mut slots: Vec<io::IoSliceMut<'_>> = seg
                .buf
                .chunks_mut(SEALED_CHUNK_LEN)
                .take(SEGMENT_CHUNKS)
                .enumerate()
                .map(|(k, slot)| {
                    let from = if k == 0 { start } else { 0 };
                    let to = CHUNK_LEN + usize::from(k + 1 == SEGMENT_CHUNKS);
                    io::IoSliceMut::new(&mut slot[from..to])
                })
                .collect();
            let got = start + read_vectored_full(&mut self.input, &mut slots)?;
            drop(slots);
            let room = SEGMENT_CHUNKS * CHUNK_LEN;
            if got > room {
                self.carry = Some(seg.buf[(SEGMENT_CHUNKS - 1) * SEALED_CHUNK_LEN + CHUNK_LEN]);
            }
            seg.len = got.min(room);
        } else {
            let got = self.read_into(&mut seg.buf[..SEGMENT_SEALED + 1])?;
            if got > SEGMENT_SEALED {
                self.carry = Some(seg.buf[SEGMENT_SEALED]);
            }
            seg.len = got.min(SEGMENT_SEALED);
        }
        seg.last = self.carry.is_none();
        self.next_seq += 1;
        Ok(true)
    }
}

/// Fills `bufs` in order from `src` (a short count only at the end of the
/// input), with vectored reads.
fn read_vectored_full<R: Read + ?Sized>(
    src: &mut R,
    mut bufs: &mut [io::IoSliceMut<'_>],
) -> io::Result<usize> {
    let mut n = 0;
    while !bufs.is_empty() {
        match src.read_vectored(bufs) {
            Ok(0) => break,
            Ok(k) => {
                n += k;
                io::IoSliceMut::advance_slices(&mut bufs, k);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// An input several threads can read at any offset at once: a regular file
/// (on Unix `pread`, which leaves the file position alone; on Windows
/// `seek_read`, which moves it) or bytes in memory.
///
/// ```
/// use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
/// use hwcrypt::stream::{open_parallel_at, seal_parallel_at};
/// use std::io::Write;
/// let key = ChaCha20Poly1305::new(&[7; 32])?;
/// // A file: every worker reads its own 1 MiB segments with `pread`.
/// let path = std::env::temp_dir().join(format!("hwcrypt-doc-{}", std::process::id()));
/// std::fs::File::create(&path)?.write_all(&vec![1u8; 3 << 20])?;
/// let file = std::fs::File::open(&path)?;
/// let mut sealed = Vec::new();
/// seal_parallel_at(&key, &file, 0, &mut sealed, 4)?;
/// // Bytes in memory are a `ReadAt` too (here from offset 0).
/// let mut plain = Vec::new();
/// open_parallel_at(&key, &sealed[..], 0, &mut plain, 4)?;
/// assert_eq!(plain, vec![1u8; 3 << 20]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ReadAt: Sync {
    /// Reads into `buf` from `offset` of the input; returns the bytes read
    /// (0 at or past the end; fewer than asked is allowed anywhere, as with
    /// `read`).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Fills `buf` from `offset`, calling [`read_at`](Self::read_at) until
    /// it is full or the input ends (the only short count); `Interrupted`
    /// is retried, offsets past `u64::MAX` are `InvalidInput`.
    fn read_full_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let at = offset
                .checked_add(n as u64)
                .ok_or_else(past_the_last_offset)?;
            match self.read_at(&mut buf[n..], at) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl ReadAt for std::fs::File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        (**self).read_at(buf, offset)
    }
}

/// An offset beyond `u64::MAX` (a `base` near it).
fn past_the_last_offset() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "the input's offsets run past 2^64 - 1",
    )
}

/// What a worker got when it asked for the next segment.
enum Next {
    /// The segment is in the buffer.
    Segment,
    /// The input has ended: no segment.
    End,
    /// Reading failed.
    Failed(io::Error),
    /// A worker panicked inside the caller's reader: stop without a word
    /// (the scope passes the panic on).
    Abandon,
}

/// Where segments come from.
trait Feed: Sync {
    /// Fills `seg` with the next segment (its number, input, and whether
    /// it is the last); `stop` is the run's flag.
    fn next(&self, seg: &mut Segment, seal: bool, stop: &AtomicBool) -> Next;
}

/// A [`Read`] input, read one segment at a time behind a lock.
struct Sequential<R>(Mutex<Source<R>>);

impl<R: Read + Send> Feed for Sequential<R> {
    fn next(&self, seg: &mut Segment, seal: bool, stop: &AtomicBool) -> Next {
        // Poisoned: a worker panicked inside the caller's reader, which may
        // have consumed input without a segment to show for it; reading on
        // would misnumber what follows.
        let Ok(mut source) = self.0.lock() else {
            return Next::Abandon;
        };
        if stop.load(Ordering::Relaxed) {
            return Next::Abandon;
        }
        match source.fill(seg, seal) {
            Ok(true) => Next::Segment,
            Ok(false) => Next::End,
            Err(e) => {
                // Set under the lock: a failed fill may have consumed input
                // (and the carried byte) without numbering a segment, so no
                // other worker may read on after it (review 2026-11-29: one
                // did, and sealed the wrong bytes under that number).
                stop.store(true, Ordering::Relaxed);
                Next::Failed(e)
            }
        }
    }
}

/// A [`ReadAt`] input from `base` on: each worker reads the segment it
/// claimed at that segment's offset, with no lock.
struct Positional<'a, I: ?Sized> {
    input: &'a I,
    base: u64,
    next_seq: AtomicU64,
    /// The number of the last segment once a worker found it (the input
    /// ended inside it or just after it); no segment after it is read.
    end: AtomicU64,
}

impl<I: ReadAt + ?Sized> Feed for Positional<'_, I> {
    fn next(&self, seg: &mut Segment, seal: bool, stop: &AtomicBool) -> Next {
        if stop.load(Ordering::Relaxed) {
            return Next::Abandon;
        }
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        if seq > self.end.load(Ordering::Relaxed) {
            return Next::End;
        }
        seg.start(seq);
        // Sealing: plaintext into the chunk slots, the last slot also
        // taking the byte after the segment (it has room: its tag goes
        // there); opening: the sealed bytes and the byte after them. That
        // byte says whether the segment is the last.
        let room = if seal {
            SEGMENT_CHUNKS * CHUNK_LEN
        } else {
            SEGMENT_SEALED
        };
        let Some(start) = seq
            .checked_mul(room as u64)
            .and_then(|at| at.checked_add(self.base))
        else {
            return Next::Failed(past_the_last_offset());
        };
        let got = if seal {
            let mut got = 0;
            for (k, slot) in seg
                .buf
                .chunks_mut(SEALED_CHUNK_LEN)
                .take(SEGMENT_CHUNKS)
                .enumerate()
            {
                let want = CHUNK_LEN + usize::from(k + 1 == SEGMENT_CHUNKS);
                let Some(at) = start.checked_add(got as u64) else {
                    return Next::Failed(past_the_last_offset());
                };
                match self.input.read_full_at(&mut slot[..want], at) {
                    Ok(n) => got += n,
                    Err(e) => return Next::Failed(e),
                }
                if got < (k + 1) * CHUNK_LEN {
                    break;
                }
            }
            got
        } else {
            match self
                .input
                .read_full_at(&mut seg.buf[..SEGMENT_SEALED + 1], start)
            {
                Ok(n) => n,
                Err(e) => return Next::Failed(e),
            }
        };
        seg.len = got.min(room);
        seg.last = got <= room;
        if seg.last {
            self.end.fetch_min(seq, Ordering::Relaxed);
        }
        if got == 0 && seq > 0 {
            // Reported only if the output reaches this segment: the one
            // before saw a byte here, so the input changed size while it
            // was read (it shrank; or it grew, with this segment read
            // before the one before found more).
            seg.error = Some(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the input changed size while it was being read",
            ));
        }
        Next::Segment
    }
}

/// Writes all of `parts` (none empty) in order, with vectored writes.
fn write_vectored_all<W: Write + ?Sized>(
    output: &mut W,
    mut parts: &mut [io::IoSlice<'_>],
) -> io::Result<()> {
    while !parts.is_empty() {
        match output.write_vectored(parts) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(k) => io::IoSlice::advance_slices(&mut parts, k),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Segment {
    fn new() -> Segment {
        Segment {
            seq: 0,
            buf: Zeroizing::new(vec![0; SEGMENT_SEALED + 1]),
            len: 0,
            last: false,
            done: 0,
            error: None,
        }
    }

    /// Made ready to take segment `seq`'s input.
    fn start(&mut self, seq: u64) {
        self.seq = seq;
        self.done = 0;
        self.error = None;
        self.len = 0;
    }

    fn first_counter(&self) -> u64 {
        self.seq * SEGMENT_CHUNKS as u64
    }

    /// Seals or opens every chunk of the segment (none if reading it
    /// already failed).
    fn process<A: Aead>(&mut self, aead: &A, seal: bool) {
        if self.error.is_some() {
            return;
        }
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
            // The verified chunks' plaintexts in one vectored write (one
            // `writev` to a `File`).
            let mut parts: Vec<io::IoSlice<'_>> = (0..self.done)
                .map(|k| {
                    let at = k * SEALED_CHUNK_LEN;
                    let end = self.len.min(at + SEALED_CHUNK_LEN) - TAG_LEN;
                    io::IoSlice::new(&self.buf[at..end])
                })
                .filter(|part| !part.is_empty())
                .collect();
            written = parts.iter().map(|part| part.len() as u64).sum();
            write_vectored_all(output, &mut parts)?;
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }
}

/// Seals everything `input` holds into `output` as one STREAM on `threads`
/// threads (0 or 1: inline; at most [`MAX_THREADS`]); returns the bytes
/// written.
pub fn seal_parallel<A, R, W>(aead: &A, input: R, output: W, threads: usize) -> io::Result<u64>
where
    A: Aead + Sync,
    R: Read + Send,
    W: Write + Send,
{
    run(
        aead,
        true,
        &Sequential(Mutex::new(Source::new(input))),
        output,
        threads,
    )
}

/// Opens the STREAM `input` holds into `output` on `threads` threads (0 or
/// 1: inline; at most [`MAX_THREADS`]); returns the plaintext bytes written. Chunks are written in
/// order and only once verified; on failure the plaintext of the chunks
/// before the bad one has been written (the error says which chunk).
pub fn open_parallel<A, R, W>(aead: &A, input: R, output: W, threads: usize) -> io::Result<u64>
where
    A: Aead + Sync,
    R: Read + Send,
    W: Write + Send,
{
    run(
        aead,
        false,
        &Sequential(Mutex::new(Source::new(input))),
        output,
        threads,
    )
}

/// [`seal_parallel`] of the bytes of `input` from `offset` to its end, each
/// worker reading the segments it seals at their own offsets with no lock
/// between them (a [`File`](std::fs::File): `pread`): the form for a file,
/// whose copies out of the page cache then run on every core. The output
/// is byte for byte that of [`seal_parallel`]. An input that changes size
/// while it is read is sealed up to where the reading found its end or is
/// an error (`UnexpectedEof`), never a stream without its final chunk.
/// Offsets past `u64::MAX` are an error (`InvalidInput`).
pub fn seal_parallel_at<A, I, W>(
    aead: &A,
    input: &I,
    offset: u64,
    output: W,
    threads: usize,
) -> io::Result<u64>
where
    A: Aead + Sync,
    I: ReadAt + ?Sized,
    W: Write + Send,
{
    run(aead, true, &Positional::new(input, offset), output, threads)
}

/// [`open_parallel`] of the sealed bytes of `input` from `offset` to its
/// end, read as [`seal_parallel_at`] reads; the same order, errors and
/// release rule as [`open_parallel`].
pub fn open_parallel_at<A, I, W>(
    aead: &A,
    input: &I,
    offset: u64,
    output: W,
    threads: usize,
) -> io::Result<u64>
where
    A: Aead + Sync,
    I: ReadAt + ?Sized,
    W: Write + Send,
{
    run(
        aead,
        false,
        &Positional::new(input, offset),
        output,
        threads,
    )
}

impl<'a, I: ReadAt + ?Sized> Positional<'a, I> {
    fn new(input: &'a I, base: u64) -> Positional<'a, I> {
        Positional {
            input,
            base,
            next_seq: AtomicU64::new(0),
            end: AtomicU64::new(u64::MAX),
        }
    }
}

/// The output side shared by the workers: segments finished out of order
/// wait in `held` until every earlier one has been written.
struct Sink<W> {
    output: W,
    next_seq: u64,
    /// The last segment has been written: later ones (read from an input
    /// that grew meanwhile) are dropped.
    finished: bool,
    held: BTreeMap<u64, Segment>,
    written: u64,
    error: Option<io::Error>,
}

/// What the workers share. Locks are taken one at a time, except `pool`
/// inside `sink` (a written segment's buffer goes back at once).
struct Shared<'f, F, W> {
    feed: &'f F,
    /// The first read failure.
    read_error: Mutex<Option<io::Error>>,
    sink: Mutex<Sink<W>>,
    pool: Mutex<Vec<Segment>>,
    pool_refilled: Condvar,
    stop: AtomicBool,
}

/// The pool's lock, even if a holder panicked (it only pushes and pops
/// buffers, so its state is always consistent); the input's and the
/// output's locks treat a panic as the end of the run instead.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<F: Feed, W: Write> Shared<'_, F, W> {
    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _pool = lock(&self.pool);
        self.pool_refilled.notify_all();
    }

    /// A free buffer, or None once the run has stopped.
    fn buffer(&self) -> Option<Segment> {
        let mut pool = lock(&self.pool);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(seg) = pool.pop() {
                return Some(seg);
            }
            pool = self
                .pool_refilled
                .wait(pool)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn give_back(&self, seg: Segment) {
        lock(&self.pool).push(seg);
        self.pool_refilled.notify_one();
    }

    /// One worker: read, process and hand over segments until the input
    /// ends or the run stops.
    fn work<A: Aead>(&self, aead: &A, seal: bool) {
        // A panic (in the caller's reader or writer) drops this worker's
        // buffer: stop the others, or they could wait for it forever
        // instead of letting the scope pass the panic on.
        struct HaltOnPanic<'a, 'f, F: Feed, W: Write>(&'a Shared<'f, F, W>);
        impl<F: Feed, W: Write> Drop for HaltOnPanic<'_, '_, F, W> {
            fn drop(&mut self) {
                if thread::panicking() {
                    self.0.halt();
                }
            }
        }
        let _guard = HaltOnPanic(self);
        while let Some(mut seg) = self.buffer() {
            match self.feed.next(&mut seg, seal, &self.stop) {
                Next::Segment => {}
                Next::End => {
                    self.give_back(seg);
                    return;
                }
                Next::Failed(e) => {
                    lock(&self.read_error).get_or_insert(e);
                    self.halt();
                    return;
                }
                Next::Abandon => {
                    self.halt();
                    return;
                }
            }
            seg.process(aead, seal);
            self.hand_over(seg, seal);
        }
    }

    /// Queues `seg` for output and writes every segment now in order.
    fn hand_over(&self, seg: Segment, seal: bool) {
        // Poisoned: the caller's writer panicked mid-segment; write no more.
        let Ok(mut sink) = self.sink.lock() else {
            self.halt();
            return;
        };
        if sink.error.is_some() {
            return;
        }
        if sink.finished {
            self.give_back(seg);
            return;
        }
        sink.held.insert(seg.seq, seg);
        loop {
            let next = sink.next_seq;
            let Some(mut seg) = sink.held.remove(&next) else {
                return;
            };
            match seg.emit(seal, &mut sink.output) {
                Ok(n) => sink.written += n,
                Err(e) => {
                    sink.error = Some(e);
                    sink.held.clear();
                    drop(sink);
                    self.halt();
                    return;
                }
            }
            sink.next_seq += 1;
            let last = seg.last;
            self.give_back(seg);
            if last {
                sink.finished = true;
                for (_, seg) in std::mem::take(&mut sink.held) {
                    self.give_back(seg);
                }
                return;
            }
        }
    }
}

fn run<A, F, W>(aead: &A, seal: bool, feed: &F, mut output: W, threads: usize) -> io::Result<u64>
where
    A: Aead + Sync,
    F: Feed,
    W: Write + Send,
{
    if threads <= 1 {
        let mut total = 0u64;
        let mut seg = Segment::new();
        let stop = AtomicBool::new(false);
        loop {
            match feed.next(&mut seg, seal, &stop) {
                Next::Segment => {}
                Next::End | Next::Abandon => break,
                Next::Failed(e) => {
                    // What was written before a read error is flushed, as
                    // on several threads.
                    let _ = output.flush();
                    return Err(e);
                }
            }
            seg.process(aead, seal);
            total += seg.emit(seal, &mut output)?;
            if seg.last {
                break;
            }
        }
        output.flush()?;
        return Ok(total);
    }

    let window = (2 * threads.min(MAX_THREADS) + 2).clamp(4, MAX_WINDOW);
    let shared = Shared {
        feed,
        read_error: Mutex::new(None),
        sink: Mutex::new(Sink {
            output,
            next_seq: 0,
            finished: false,
            held: BTreeMap::new(),
            written: 0,
            error: None,
        }),
        pool: Mutex::new((0..window).map(|_| Segment::new()).collect()),
        pool_refilled: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    on_threads(threads, || shared.work(aead, seal));
    let Shared {
        read_error, sink, ..
    } = shared;
    let read_error = read_error.into_inner().unwrap_or_else(|p| p.into_inner());
    let mut sink = sink.into_inner().unwrap_or_else(|p| p.into_inner());
    // A write or authentication failure explains a reader that stopped.
    if let Some(e) = sink.error.take() {
        return Err(e);
    }
    // What was written before a read error is flushed too.
    let flushed = sink.output.flush();
    match read_error {
        Some(e) => Err(e),
        None => flushed.map(|()| sink.written),
    }
}

/// Seals `plaintext` as one STREAM, its chunks shared among `threads`
/// threads (at most [`MAX_THREADS`]).
pub fn seal_buffer<A: Aead + Sync>(
    aead: &A,
    plaintext: &[u8],
    threads: usize,
) -> crate::Result<Vec<u8>> {
    let chunks = plaintext.len().div_ceil(CHUNK_LEN).max(1);
    let mut out = vec![0u8; super::sealed_len(plaintext.len() as u64) as usize];
    // Each worker takes the next chunk's slot (a lock per 64 KiB).
    let slots = Mutex::new(out.chunks_mut(SEALED_CHUNK_LEN).enumerate());
    let error = Mutex::new(None);
    on_threads(threads.min(chunks), || {
        while let Some((index, slot)) = lock(&slots).next() {
            let start = index * CHUNK_LEN;
            let len = (plaintext.len() - start).min(CHUNK_LEN);
            slot[..len].copy_from_slice(&plaintext[start..start + len]);
            let nonce = chunk_nonce(index as u64, index + 1 == chunks);
            let (data, tag) = slot.split_at_mut(len);
            match aead.seal_in_place_detached(&nonce, &[], data) {
                Ok(t) => tag.copy_from_slice(&t),
                Err(e) => {
                    lock(&error).get_or_insert(e);
                    return;
                }
            }
        }
    });
    match error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(out),
    }
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
    // Each worker takes the next chunk; the error kept is the first
    // chunk's that failed.
    let slots = Mutex::new(out.chunks_mut(CHUNK_LEN).enumerate());
    let failed = Mutex::new(None::<usize>);
    on_threads(threads.min(chunks), || {
        while let Some((index, plain)) = lock(&slots).next() {
            let at = index * SEALED_CHUNK_LEN;
            let (data, rest) = sealed[at..].split_at(plain.len());
            plain.copy_from_slice(data);
            let nonce = chunk_nonce(index as u64, index + 1 == chunks);
            if aead
                .open_in_place_detached(&nonce, &[], plain, &rest[..TAG_LEN])
                .is_err()
            {
                let mut first = lock(&failed);
                *first = Some(first.map_or(index, |f| f.min(index)));
                return;
            }
        }
    });
    let first_error = failed
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .map(|index| StreamError::ChunkAuthentication {
            index: index as u64,
        });
    match first_error {
        Some(e) => {
            out.zeroize();
            Err(e)
        }
        None => Ok(out),
    }
}
