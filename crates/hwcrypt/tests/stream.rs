//! `hwcrypt::stream`: round trips around chunk and segment boundaries with
//! ChaCha20-Poly1305 and AES-256-GCM, the parallel and buffer forms equal to
//! the sequential ones, random access, and every way to tamper with a
//! stream (truncation, reordering, duplication, appended data, bit flips).

use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::ChaCha20Poly1305;
use hwcrypt::gcm::AesGcm;
use hwcrypt::stream::{
    CHUNK_LEN, MAX_THREADS, ReadAt, SEALED_CHUNK_LEN, StreamDecryptor, StreamEncryptor,
    StreamError, open_buffer, open_parallel, open_parallel_at, seal_buffer, seal_parallel,
    seal_parallel_at, sealed_len,
};
use std::io::{Cursor, Read, Seek, SeekFrom, Write};

const C: usize = CHUNK_LEN;

fn sizes() -> Vec<usize> {
    vec![
        0,
        1,
        C - 1,
        C,
        C + 1,
        2 * C,
        3 * C,
        3 * C + 7,
        16 * C - 1,
        16 * C,
        16 * C + 1,
        32 * C - 1,
        32 * C,
        32 * C + 1,
        33 * C + 5,
    ]
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 251) as u8).collect()
}

fn chacha() -> ChaCha20Poly1305 {
    ChaCha20Poly1305::new(&[0x42; 32]).unwrap()
}

fn gcm() -> AesGcm {
    AesGcm::new(&[0x24; 32]).unwrap()
}

/// Seals with the `Write` adapter, in writes of `step` bytes.
fn seal_seq<A: Aead>(aead: A, msg: &[u8], step: usize) -> Vec<u8> {
    let mut enc = StreamEncryptor::new(aead, Vec::new());
    for piece in msg.chunks(step.max(1)) {
        enc.write_all(piece).unwrap();
    }
    enc.finish().unwrap()
}

fn open_seq<A: Aead>(aead: A, sealed: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    StreamDecryptor::new(aead, sealed).read_to_end(&mut out)?;
    Ok(out)
}

fn stream_err(e: &std::io::Error) -> Option<StreamError> {
    StreamError::from_io(e)
}

fn round_trips<A: Aead + Clone + Sync>(aead: A) {
    for len in sizes() {
        let msg = data(len);
        let sealed = seal_seq(aead.clone(), &msg, 1000);
        assert_eq!(sealed.len() as u64, sealed_len(len as u64), "len {len}");
        assert_eq!(seal_seq(aead.clone(), &msg, C + 3), sealed, "len {len}");
        assert_eq!(open_seq(aead.clone(), &sealed).unwrap(), msg, "len {len}");
        assert_eq!(seal_buffer(&aead, &msg, 3).unwrap(), sealed, "len {len}");
        assert_eq!(open_buffer(&aead, &sealed, 3).unwrap(), msg, "len {len}");
    }
}

#[test]
fn round_trip_chacha20poly1305() {
    round_trips(chacha());
}

#[test]
fn round_trip_aes256gcm() {
    round_trips(gcm());
}

#[test]
fn chunk_layout_matches_the_nonce_rule() {
    // Chunk 1 of a two-chunk stream opens alone with counter 1, final flag.
    let key = chacha();
    let msg = data(C + 10);
    let sealed = seal_seq(key.clone(), &msg, C);
    let second = &sealed[SEALED_CHUNK_LEN..];
    let mut nonce = [0u8; 12];
    nonce[10] = 1;
    nonce[11] = 1;
    assert_eq!(key.open(&nonce, &[], second).unwrap(), &msg[C..]);
    nonce[11] = 0;
    let first = &sealed[..SEALED_CHUNK_LEN];
    assert_eq!(key.open(&[0; 12], &[], first).unwrap(), &msg[..C]);
    assert!(key.open(&nonce, &[], second).is_err());
}

#[test]
fn parallel_equals_sequential() {
    let key = chacha();
    for len in sizes() {
        let msg = data(len);
        let sealed = seal_seq(key.clone(), &msg, 4096);
        for threads in 1..=8 {
            let mut out = Vec::new();
            let n = seal_parallel(&key, &msg[..], &mut out, threads).unwrap();
            assert_eq!(n as usize, out.len());
            assert!(out == sealed, "seal len {len} threads {threads}");
            let mut plain = Vec::new();
            let n = open_parallel(&key, &sealed[..], &mut plain, threads).unwrap();
            assert_eq!(n as usize, len);
            assert!(plain == msg, "open len {len} threads {threads}");
            // Read at offsets, from the start and behind a prefix.
            for skip in [0, 3] {
                let mut input = vec![0xa5; skip];
                input.extend_from_slice(&msg);
                let mut out = Vec::new();
                let n = seal_parallel_at(&key, &input[..], skip as u64, &mut out, threads).unwrap();
                assert_eq!(n as usize, out.len());
                assert!(
                    out == sealed,
                    "seal_at len {len} threads {threads} skip {skip}"
                );
                let mut input = vec![0x5a; skip];
                input.extend_from_slice(&sealed);
                let mut plain = Vec::new();
                let n =
                    open_parallel_at(&key, &input[..], skip as u64, &mut plain, threads).unwrap();
                assert_eq!(n as usize, len);
                assert!(
                    plain == msg,
                    "open_at len {len} threads {threads} skip {skip}"
                );
            }
        }
    }
}

/// The positional forms on a real file (`pread`), at an offset.
#[test]
fn parallel_at_reads_a_file() {
    let key = chacha();
    let msg = data(40 * C + 123);
    let sealed = seal_seq(key.clone(), &msg, 4096);
    let dir = std::env::temp_dir().join(format!("hwcrypt-stream-at-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("in");
    let mut bytes = b"prefix".to_vec();
    bytes.extend_from_slice(&msg);
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    for threads in [1, 3, 8] {
        let mut out = Vec::new();
        seal_parallel_at(&key, &file, 6, &mut out, threads).unwrap();
        assert!(out == sealed, "threads {threads}");
    }
    let mut bytes = b"pre".to_vec();
    bytes.extend_from_slice(&sealed);
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    for threads in [1, 3, 8] {
        let mut plain = Vec::new();
        open_parallel_at(&key, &file, 3, &mut plain, threads).unwrap();
        assert!(plain == msg, "threads {threads}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A positional input whose length changes while it is read: the first
/// `len_before` bytes of `data` for `switch_after` reads, then the first
/// `len_after`.
struct Changing<'a> {
    data: &'a [u8],
    calls: std::sync::atomic::AtomicUsize,
    switch_after: usize,
    len_before: usize,
    len_after: usize,
}

impl ReadAt for Changing<'_> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        use std::sync::atomic::Ordering;
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let len = if call < self.switch_after {
            self.len_before
        } else {
            self.len_after
        };
        let data = &self.data[..len.min(self.data.len())];
        // Short reads too: at most 40,000 bytes a call.
        let want = buf.len().min(40_000);
        data.read_at(&mut buf[..want], offset)
    }
}

/// A positional input that fails on its `fail_at`-th read.
struct FailsAt<'a>(&'a [u8], std::sync::atomic::AtomicUsize, usize);

impl ReadAt for FailsAt<'_> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        if self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == self.2 {
            return Err(std::io::Error::other("disk on fire"));
        }
        self.0.read_at(buf, offset)
    }
}

#[test]
fn parallel_at_passes_read_failures_on() {
    let key = chacha();
    let msg = data(20 * C + 9);
    let sealed = seal_seq(key.clone(), &msg, 4096);
    for threads in [1, 2, 6] {
        for fail_at in [0, 1, 7, 16, 17] {
            let input = FailsAt(&msg, 0.into(), fail_at);
            let err = seal_parallel_at(&key, &input, 0, std::io::sink(), threads).unwrap_err();
            assert_eq!(err.to_string(), "disk on fire");
            let input = FailsAt(&sealed, 0.into(), fail_at.min(1));
            let mut plain = Vec::new();
            let err = open_parallel_at(&key, &input, 0, &mut plain, threads).unwrap_err();
            assert_eq!(err.to_string(), "disk on fire");
            assert!(msg.starts_with(&plain));
        }
    }
}

/// An input that shrinks while it is read fails (`UnexpectedEof`, or as
/// a truncated or forged stream when opening), never a stream without its
/// final chunk or released plaintext that did not verify; one that grows
/// is read up to where the reading found its end, and what comes out is a
/// well-formed stream of what was read.
#[test]
fn parallel_at_with_an_input_that_changes() {
    let key = chacha();
    let msg = data(40 * C + 17);
    let sealed = seal_seq(key.clone(), &msg, 4096);
    for threads in [1, 2, 5, 8] {
        for switch_after in [0, 1, 3, 17, 40, 100] {
            // Shrinks to a segment boundary, inside a chunk, to nothing.
            for len_after in [16 * C, 5 * C + 3, 0] {
                let input = Changing {
                    data: &msg,
                    calls: 0.into(),
                    switch_after,
                    len_before: msg.len(),
                    len_after,
                };
                let mut out = Vec::new();
                match seal_parallel_at(&key, &input, 0, &mut out, threads) {
                    Ok(_) => {
                        let plain = open_seq(key.clone(), &out).unwrap();
                        assert!(
                            msg.starts_with(&plain),
                            "{threads} {switch_after} {len_after}"
                        );
                    }
                    Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}"),
                }
                let input = Changing {
                    data: &sealed,
                    calls: 0.into(),
                    switch_after,
                    len_before: sealed.len(),
                    len_after,
                };
                let mut plain = Vec::new();
                if open_parallel_at(&key, &input, 0, &mut plain, threads).is_ok() {
                    assert_eq!(plain, msg, "{threads} {switch_after} {len_after}");
                } else {
                    // Whatever was released verified: a prefix of the message.
                    assert!(
                        msg.starts_with(&plain),
                        "{threads} {switch_after} {len_after}"
                    );
                }
            }
        }
    }
    // Grows after the first reads: the end is where a segment's reading
    // found it, and the stream is well formed (a later segment that saw
    // more is not written).
    for threads in [1, 4] {
        for len_before in [0, 3 * C, 16 * C, 16 * C + 5] {
            let input = Changing {
                data: &msg,
                calls: 0.into(),
                switch_after: 1,
                len_before,
                len_after: msg.len(),
            };
            let mut out = Vec::new();
            seal_parallel_at(&key, &input, 0, &mut out, threads).unwrap();
            let plain = open_seq(key.clone(), &out).unwrap();
            assert!(msg.starts_with(&plain), "{threads} {len_before}");
        }
    }
}

/// Found in review (2026-11-29): `usize::MAX` threads overflowed the
/// window size and spawned threads until the process limit, then panicked
/// on the failed spawn. Counts are capped at `MAX_THREADS`, a failed spawn
/// leaves the work to the threads running, and the buffer forms take their
/// chunks from a shared queue.
#[test]
fn thread_counts_beyond_the_cap() {
    let key = chacha();
    let msg = data(3 * C + 5);
    let sealed = seal_seq(key.clone(), &msg, 4096);
    for threads in [0, MAX_THREADS + 1, usize::MAX] {
        assert!(
            seal_buffer(&key, &msg, threads).unwrap() == sealed,
            "{threads}"
        );
        assert!(
            open_buffer(&key, &sealed, threads).unwrap() == msg,
            "{threads}"
        );
        let mut out = Vec::new();
        seal_parallel(&key, &msg[..], &mut out, threads).unwrap();
        assert!(out == sealed, "{threads}");
        let mut out = Vec::new();
        seal_parallel_at(&key, &msg[..], 0, &mut out, threads).unwrap();
        assert!(out == sealed, "{threads}");
    }
    // The buffer form names the first bad chunk whichever thread saw it.
    let mut bad = sealed.clone();
    bad[3 * SEALED_CHUNK_LEN + 2] ^= 1;
    bad[SEALED_CHUNK_LEN + 2] ^= 1;
    for threads in [1, 2, 4] {
        assert_eq!(
            open_buffer(&key, &bad, threads).unwrap_err(),
            StreamError::ChunkAuthentication { index: 1 }
        );
    }
}

/// Every way to open: sequential reader, parallel on 1 and 4 threads (read
/// and positional), buffer.
fn open_all_ways(sealed: &[u8]) -> Vec<Result<Vec<u8>, StreamError>> {
    let key = chacha();
    let mut results = vec![open_seq(key.clone(), sealed).map_err(|e| stream_err(&e).unwrap())];
    for threads in [1, 4] {
        let mut out = Vec::new();
        results.push(
            open_parallel(&key, sealed, &mut out, threads)
                .map(|_| out)
                .map_err(|e| stream_err(&e).unwrap()),
        );
        let mut out = Vec::new();
        results.push(
            open_parallel_at(&key, sealed, 0, &mut out, threads)
                .map(|_| out)
                .map_err(|e| stream_err(&e).unwrap()),
        );
    }
    results.push(open_buffer(&key, sealed, 2));
    results
}

fn assert_rejected(sealed: &[u8], what: &str) {
    for (way, r) in open_all_ways(sealed).into_iter().enumerate() {
        assert!(r.is_err(), "{what}: accepted by way {way}");
    }
}

#[test]
fn truncation_is_rejected() {
    let key = chacha();
    for len in [0, 1, C, C + 1, 3 * C, 3 * C + 9, 17 * C] {
        let sealed = seal_seq(key.clone(), &data(len), 7777);
        // At every chunk boundary, and inside chunks.
        let mut cuts: Vec<usize> = (0..sealed.len()).step_by(SEALED_CHUNK_LEN).collect();
        cuts.extend([sealed.len() - 1, sealed.len().saturating_sub(16), 1, 15]);
        for cut in cuts {
            if cut < sealed.len() {
                assert_rejected(&sealed[..cut], &format!("len {len} cut at {cut}"));
            }
        }
    }
    let results = open_all_ways(&[]);
    assert!(results.iter().all(|r| *r == Err(StreamError::NoChunks)));
}

#[test]
fn reordered_duplicated_and_appended_chunks_are_rejected() {
    let key = chacha();
    let sealed = seal_seq(key.clone(), &data(3 * C + 100), C);
    let chunk =
        |i: usize| &sealed[i * SEALED_CHUNK_LEN..((i + 1) * SEALED_CHUNK_LEN).min(sealed.len())];
    let swapped = [chunk(1), chunk(0), chunk(2), chunk(3)].concat();
    assert_rejected(&swapped, "chunks 0 and 1 swapped");
    let duplicated = [chunk(0), chunk(0), chunk(1), chunk(2), chunk(3)].concat();
    assert_rejected(&duplicated, "chunk 0 duplicated");
    let dropped = [chunk(0), chunk(2), chunk(3)].concat();
    assert_rejected(&dropped, "chunk 1 dropped");
    for extra in [&[0u8][..], &[0; 16], chunk(3), chunk(0)] {
        let appended = [&sealed[..], extra].concat();
        assert_rejected(&appended, "data appended");
    }
    // Two streams spliced together (each stream has its own key, as age's
    // payload keys: with one key reused, a splice would verify).
    let other = seal_seq(ChaCha20Poly1305::new(&[9; 32]).unwrap(), &data(2 * C), C);
    assert_rejected(
        &[&sealed[..SEALED_CHUNK_LEN], &other[SEALED_CHUNK_LEN..]].concat(),
        "splice",
    );
}

#[test]
fn trailing_data_after_a_full_final_chunk() {
    // As age: the final chunk is released, then the reader fails.
    let key = chacha();
    let msg = data(2 * C);
    let sealed = seal_seq(key.clone(), &msg, C);
    let appended = [&sealed[..], b"x"].concat();
    let mut dec = StreamDecryptor::new(key, &appended[..]);
    let mut out = Vec::new();
    let err = dec.read_to_end(&mut out).unwrap_err();
    assert_eq!(stream_err(&err), Some(StreamError::TrailingData));
    assert_eq!(out, msg);
}

#[test]
fn bit_flips_are_rejected() {
    let key = chacha();
    let sealed = seal_seq(key.clone(), &data(2 * C + 33), 999);
    let mut positions: Vec<usize> = (0..sealed.len()).step_by(4099).collect();
    positions.extend([0, SEALED_CHUNK_LEN - 1, SEALED_CHUNK_LEN, sealed.len() - 1]);
    for pos in positions {
        let mut bad = sealed.clone();
        bad[pos] ^= 0x10;
        assert_rejected(&bad, &format!("flip at {pos}"));
    }
}

#[test]
fn nothing_unauthenticated_is_released() {
    // A flip in chunk 2: exactly chunks 0 and 1 come out, then the error.
    let key = chacha();
    let msg = data(5 * C);
    let mut sealed = seal_seq(key.clone(), &msg, C);
    sealed[2 * SEALED_CHUNK_LEN + 5] ^= 1;
    let mut out = Vec::new();
    let err = StreamDecryptor::new(key.clone(), &sealed[..])
        .read_to_end(&mut out)
        .unwrap_err();
    assert_eq!(
        stream_err(&err),
        Some(StreamError::ChunkAuthentication { index: 2 })
    );
    assert_eq!(out, &msg[..2 * C]);
    for threads in [1, 3, 8] {
        let mut out = Vec::new();
        let err = open_parallel(&key, &sealed[..], &mut out, threads).unwrap_err();
        assert_eq!(
            stream_err(&err),
            Some(StreamError::ChunkAuthentication { index: 2 })
        );
        assert_eq!(out, &msg[..2 * C], "threads {threads}");
    }
    assert_eq!(
        open_buffer(&key, &sealed, 4),
        Err(StreamError::ChunkAuthentication { index: 2 })
    );
}

#[test]
fn wrong_key_is_rejected() {
    let sealed = seal_seq(chacha(), &data(100), 10);
    let other = ChaCha20Poly1305::new(&[1; 32]).unwrap();
    assert!(open_seq(other, &sealed).is_err());
}

#[test]
fn dropped_encryptor_leaves_a_truncated_stream() {
    let key = chacha();
    let mut out = Vec::new();
    {
        let mut enc = StreamEncryptor::new(key.clone(), &mut out);
        enc.write_all(&data(3 * C + 1)).unwrap();
    }
    assert_eq!(out.len(), 3 * SEALED_CHUNK_LEN);
    assert_rejected(&out, "no finish");
}

#[test]
fn seek_gives_random_access() {
    let key = gcm();
    let msg = data(5 * C + 1234);
    let sealed = seal_seq(key.clone(), &msg, C);
    let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(&sealed));
    // Read a little sequentially first, then jump around.
    let mut head = [0u8; 100];
    dec.read_exact(&mut head).unwrap();
    assert_eq!(&head[..], &msg[..100]);
    for &pos in &[
        0usize,
        1,
        C - 1,
        C,
        3 * C + 5,
        5 * C,
        5 * C + 1233,
        2 * C - 10,
    ] {
        assert_eq!(dec.seek(SeekFrom::Start(pos as u64)).unwrap(), pos as u64);
        let mut buf = vec![0u8; 200];
        let n = read_up_to(&mut dec, &mut buf);
        assert_eq!(&buf[..n], &msg[pos..(pos + 200).min(msg.len())], "at {pos}");
    }
    assert_eq!(dec.seek(SeekFrom::End(-10)).unwrap(), msg.len() as u64 - 10);
    let mut tail = Vec::new();
    dec.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, &msg[msg.len() - 10..]);
    assert_eq!(dec.seek(SeekFrom::End(5)).unwrap(), msg.len() as u64 + 5);
    assert_eq!(dec.read(&mut [0; 10]).unwrap(), 0);
    assert!(
        dec.seek(SeekFrom::Current(-(msg.len() as i64) - 100))
            .is_err()
    );
}

fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]).unwrap() {
            0 => break,
            k => n += k,
        }
    }
    n
}

#[test]
fn seek_from_end_authenticates_the_final_chunk() {
    // str4d/rage#195: a file truncated at a chunk boundary must not let the
    // attacker choose where SeekFrom::End lands.
    let key = chacha();
    let msg = data(4 * C);
    let sealed = seal_seq(key.clone(), &msg, C);
    for cut in [SEALED_CHUNK_LEN, 2 * SEALED_CHUNK_LEN, 3 * SEALED_CHUNK_LEN] {
        let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(&sealed[..cut]));
        assert!(dec.seek(SeekFrom::End(-1)).is_err(), "cut {cut}");
        // And the failure is sticky.
        assert!(dec.seek(SeekFrom::Start(0)).is_err());
        assert!(dec.read(&mut [0; 1]).is_err());
    }
    let appended = [&sealed[..], &[0u8; 40]].concat();
    let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(&appended));
    assert!(dec.seek(SeekFrom::End(0)).is_err());
    let mut dec = StreamDecryptor::new(key, Cursor::new(&sealed));
    assert_eq!(dec.authenticated_len().unwrap(), msg.len() as u64);
}

#[test]
fn a_seek_after_reading_keeps_truncation_and_trailing_data_errors() {
    // Found in review: a stream cut after a full middle chunk (or a full
    // final chunk with data after it) read in sequence is flagged at its
    // end; the first seek (even `stream_position`) switched to random
    // access and must not turn that into a clean end of the stream.
    let key = chacha();
    let msg = data(C + 10);
    let sealed = seal_seq(key.clone(), &msg, C);
    let cut = &sealed[..SEALED_CHUNK_LEN];
    let one = seal_seq(key.clone(), &data(C), C);
    let appended = [&one[..], &[0u8; 50]].concat();
    for (what, bytes) in [("cut", cut), ("appended", &appended[..])] {
        let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(bytes));
        let mut first = [0u8; 1];
        dec.read_exact(&mut first).unwrap();
        let _ = dec.stream_position();
        let mut rest = Vec::new();
        assert!(
            dec.read_to_end(&mut rest).is_err(),
            "{what}: read after a position query"
        );
        let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(bytes));
        dec.read_exact(&mut first).unwrap();
        assert!(
            dec.seek(SeekFrom::End(0)).is_err(),
            "{what}: seek from the end"
        );
        let mut dec = StreamDecryptor::new(key.clone(), Cursor::new(bytes));
        dec.read_exact(&mut first).unwrap();
        assert!(
            dec.authenticated_len().is_err(),
            "{what}: authenticated length"
        );
    }
    // An intact stream still reads on after a position query.
    let mut dec = StreamDecryptor::new(key, Cursor::new(&sealed));
    let mut first = [0u8; 1];
    dec.read_exact(&mut first).unwrap();
    assert_eq!(dec.stream_position().unwrap(), 1);
    let mut rest = Vec::new();
    dec.read_to_end(&mut rest).unwrap();
    assert_eq!([&first[..], &rest].concat(), msg);
}

/// A source that returns at most `step` bytes per read and fails at the
/// first read that starts at or past `fail_at` (if given).
struct Trickle<'a> {
    data: &'a [u8],
    at: usize,
    step: usize,
    fail_at: Option<usize>,
}

impl<'a> Trickle<'a> {
    fn new(data: &'a [u8], step: usize, fail_at: Option<usize>) -> Trickle<'a> {
        Trickle {
            data,
            at: 0,
            step,
            fail_at,
        }
    }
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.fail_at.is_some_and(|f| self.at >= f) {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = buf.len().min(self.step).min(self.data.len() - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// A sink that accepts `room` bytes, then fails.
struct Full {
    taken: Vec<u8>,
    room: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.taken.len() + buf.len() > self.room {
            return Err(std::io::Error::other("disk full"));
        }
        self.taken.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn parallel_with_short_reads_and_io_failures() {
    let key = chacha();
    let len = 40 * C + 3;
    let msg = data(len);
    let sealed = seal_seq(key.clone(), &msg, C);
    for threads in [1, 2, 5] {
        // Reads of odd sizes still cut segments in the same places.
        let input = Trickle::new(&msg, 10_007, None);
        let mut out = Vec::new();
        seal_parallel(&key, input, &mut out, threads).unwrap();
        assert!(out == sealed, "short reads, seal, threads {threads}");
        let input = Trickle::new(&sealed, 70_001, None);
        let mut out = Vec::new();
        open_parallel(&key, input, &mut out, threads).unwrap();
        assert!(out == msg, "short reads, open, threads {threads}");

        // A read failure anywhere is the run's error, never a success.
        for fail_at in [0, 5, 16 * C, 20 * C + 1, len - 1] {
            let input = Trickle::new(&msg, C, Some(fail_at));
            let err = seal_parallel(&key, input, std::io::sink(), threads).unwrap_err();
            assert_eq!(err.to_string(), "disk on fire", "seal fail_at {fail_at}");
            let input = Trickle::new(&sealed, C, Some(fail_at));
            let mut out = Vec::new();
            let err = open_parallel(&key, input, &mut out, threads).unwrap_err();
            assert_eq!(err.to_string(), "disk on fire", "open fail_at {fail_at}");
            // What was released is a prefix of the plaintext.
            assert!(out == msg[..out.len()]);
        }

        // A write failure stops the run with that error.
        for room in [0, 100, 17 * SEALED_CHUNK_LEN] {
            let mut full = Full {
                taken: Vec::new(),
                room,
            };
            let err = seal_parallel(&key, &msg[..], &mut full, threads).unwrap_err();
            assert_eq!(err.to_string(), "disk full", "seal room {room}");
            assert!(full.taken == sealed[..full.taken.len()]);
            let mut full = Full {
                taken: Vec::new(),
                room,
            };
            let err = open_parallel(&key, &sealed[..], &mut full, threads).unwrap_err();
            assert_eq!(err.to_string(), "disk full", "open room {room}");
            assert!(full.taken == msg[..full.taken.len()]);
        }
    }
}

/// A writer that panics on its `n`th write.
struct Explodes(usize);

impl Write for Explodes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 -= 1;
        assert!(self.0 > 0, "writer exploded");
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_panicking_writer_panics_the_call_instead_of_hanging() {
    // More segments (16 chunks each) than the window holds buffers
    // (2 x threads + 2), so the others would wait for the lost one; a
    // regression shows as a timeout here, not a hung test run.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let key = chacha();
        let msg = data(24 * 16 * C);
        for threads in [2, 3] {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                seal_parallel(&key, &msg[..], Explodes(3), threads)
            }));
            assert!(r.is_err(), "threads {threads}");
        }
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the other workers kept waiting after a panic");
}

#[test]
fn parallel_under_uneven_timing() {
    // Reads of pseudo-random sizes (1 byte to 256 KiB), up to 8 threads on
    // however many cores, inputs of up to 40 segments: segments finish in
    // varying orders (and a short last one early), the window runs out of
    // buffers, and the output must still be the sequential stream.
    struct Ragged<'a> {
        data: &'a [u8],
        at: usize,
        state: u64,
    }
    impl Read for Ragged<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.state = self
                .state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let want = match self.state >> 62 {
                0 => 1 + (self.state >> 20) as usize % 64,
                _ => 1 + (self.state >> 20) as usize % (256 << 10),
            };
            let n = buf.len().min(want).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }
    let key = chacha();
    let cases = [
        (40 * 16 * C + 5, 2),
        (40 * 16 * C, 8),
        (17 * C + 3, 5),
        (33 * C, 3),
        (1, 4),
    ];
    for (round, &(len, threads)) in cases.iter().enumerate() {
        let msg = data(len);
        let sealed = seal_seq(key.clone(), &msg, C);
        let input = Ragged {
            data: &msg,
            at: 0,
            state: round as u64,
        };
        let mut out = Vec::new();
        seal_parallel(&key, input, &mut out, threads).unwrap();
        assert!(out == sealed, "seal len {len} threads {threads}");
        let input = Ragged {
            data: &sealed,
            at: 0,
            state: round as u64 + 99,
        };
        let mut out = Vec::new();
        open_parallel(&key, input, &mut out, threads).unwrap();
        assert!(out == msg, "open len {len} threads {threads}");
    }
    // More threads than the window has buffers (32).
    let msg = data(40 * 16 * C + 77);
    let sealed = seal_seq(key.clone(), &msg, C);
    let mut out = Vec::new();
    seal_parallel(&key, &msg[..], &mut out, 40).unwrap();
    assert!(out == sealed);
    let mut out = Vec::new();
    open_parallel(&key, &sealed[..], &mut out, 40).unwrap();
    assert!(out == msg);
}

/// A source and a sink whose vectored calls move a pseudo-random number of
/// bytes (1 byte to 200 KiB) across the buffers they are given, as `readv`
/// and `writev` may: a segment's chunk slots are filled, and an opened
/// segment's chunks written, with one vectored call each where the other
/// side takes it all.
struct Vectored<'a> {
    data: &'a [u8],
    at: usize,
    out: Vec<u8>,
    state: u64,
}

impl<'a> Vectored<'a> {
    /// A source of `data` (or, with no data, a sink) whose call sizes come
    /// from `state`.
    fn new(data: &'a [u8], state: u64) -> Vectored<'a> {
        Vectored {
            data,
            at: 0,
            out: Vec::new(),
            state,
        }
    }

    fn step(&mut self) -> usize {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match self.state >> 62 {
            0 => 1 + (self.state >> 20) as usize % 40,
            _ => 1 + (self.state >> 20) as usize % (200 << 10),
        }
    }
}

impl Read for Vectored<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.read_vectored(&mut [std::io::IoSliceMut::new(buf)])
    }
    fn read_vectored(&mut self, bufs: &mut [std::io::IoSliceMut<'_>]) -> std::io::Result<usize> {
        let mut left = self.step().min(self.data.len() - self.at);
        let mut n = 0;
        for b in bufs.iter_mut() {
            let k = b.len().min(left);
            b[..k].copy_from_slice(&self.data[self.at..self.at + k]);
            self.at += k;
            n += k;
            left -= k;
        }
        Ok(n)
    }
}

impl Write for Vectored<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_vectored(&[std::io::IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        let mut left = self.step();
        let mut n = 0;
        for b in bufs {
            let k = b.len().min(left);
            self.out.extend_from_slice(&b[..k]);
            n += k;
            left -= k;
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn parallel_with_ragged_vectored_io() {
    let key = chacha();
    for (round, (len, threads)) in [
        (0, 1),
        (1, 2),
        (16 * C - 1, 1),
        (16 * C, 2),
        (16 * C + 1, 3),
        (33 * C + 17, 2),
        (48 * C, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let msg = data(len);
        let sealed = seal_seq(key.clone(), &msg, C);
        let state = round as u64 * 7919;
        let mut sink = Vectored::new(&[], state + 1);
        seal_parallel(&key, Vectored::new(&msg, state), &mut sink, threads).unwrap();
        assert!(sink.out == sealed, "seal len {len} threads {threads}");
        let mut sink = Vectored::new(&[], state + 3);
        open_parallel(&key, Vectored::new(&sealed, state + 2), &mut sink, threads).unwrap();
        assert!(sink.out == msg, "open len {len} threads {threads}");
    }
}

#[test]
fn parallel_open_stops_at_a_bad_chunk_in_a_later_segment() {
    // Chunk 20 is in the second segment; later segments verify (and may
    // finish) before it, but nothing after chunk 19 is written.
    let key = chacha();
    let msg = data(70 * C + 9);
    let mut sealed = seal_seq(key.clone(), &msg, C);
    sealed[20 * SEALED_CHUNK_LEN + 7] ^= 0x40;
    for threads in [2, 8] {
        let mut out = Vec::new();
        let err = open_parallel(&key, &sealed[..], &mut out, threads).unwrap_err();
        assert_eq!(
            stream_err(&err),
            Some(StreamError::ChunkAuthentication { index: 20 })
        );
        assert!(out == msg[..20 * C], "threads {threads}");
        // An authentication failure explains a reader that fails later.
        let input = Trickle::new(&sealed, C, Some(50 * SEALED_CHUNK_LEN));
        let mut out = Vec::new();
        let err = open_parallel(&key, input, &mut out, threads).unwrap_err();
        assert_eq!(
            stream_err(&err),
            Some(StreamError::ChunkAuthentication { index: 20 }),
            "threads {threads}"
        );
        assert!(out == msg[..20 * C]);
    }
}

#[test]
fn a_panicking_reader_never_shifts_the_stream() {
    // The reader panics partway; whatever was written before the panic
    // reaches the caller must be a prefix of the real stream (no segment
    // read again after the lost bytes, numbered as the lost one).
    /// Data, position, where to panic (once: the bytes of that read are
    /// lost, as if the reader died mid-read; later reads go on).
    struct PanicsAt<'a>(&'a [u8], usize, Option<usize>);
    impl Read for PanicsAt<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.2.is_some_and(|cut| self.1 >= cut) {
                self.2 = None;
                self.1 += 1000;
                panic!("reader exploded");
            }
            let n = buf.len().min(C / 2).min(self.0.len() - self.1);
            buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }
    let key = chacha();
    let msg = data(12 * 16 * C);
    let sealed = seal_seq(key.clone(), &msg, C);
    for threads in [2, 3, 8] {
        for cut in [5 * 16 * C + C / 2, 6 * 16 * C] {
            let mut out = Vec::new();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                seal_parallel(&key, PanicsAt(&msg, 0, Some(cut)), &mut out, threads)
            }));
            assert!(r.is_err());
            assert!(out.len() <= cut + cut / C * 16);
            assert!(out == sealed[..out.len()], "threads {threads} cut {cut}");
        }
    }
}

/// A writer whose `write` fails with `WouldBlock` at the given calls (and
/// takes at most `cap` bytes a call otherwise).
struct Flaky {
    out: Vec<u8>,
    calls: usize,
    /// Shared, so that a test can disarm it before `finish`.
    fail_at: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    cap: usize,
}

impl Flaky {
    /// A writer failing at the calls in `fail_at` (shared, to disarm).
    fn new(fail_at: &std::rc::Rc<std::cell::RefCell<Vec<usize>>>, cap: usize) -> Flaky {
        Flaky {
            out: Vec::new(),
            calls: 0,
            fail_at: fail_at.clone(),
            cap,
        }
    }
}

impl Write for Flaky {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.fail_at.borrow().contains(&self.calls) {
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = data.len().min(self.cap);
        self.out.extend_from_slice(&data[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A reader that fails with `WouldBlock` at the given calls and returns at
/// most `cap` bytes a call otherwise.
struct FlakyReader<'a> {
    data: &'a [u8],
    calls: usize,
    fail_at: Vec<usize>,
    cap: usize,
}

impl Read for FlakyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.fail_at.contains(&self.calls) {
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.cap).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Writes all of `msg`, retrying each `WouldBlock` as a non-blocking caller
/// does; returns how many writes failed.
fn write_retrying<W: Write>(w: &mut W, mut msg: &[u8]) -> usize {
    let mut failures = 0;
    while !msg.is_empty() {
        match w.write(msg) {
            Ok(n) => msg = &msg[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => failures += 1,
            Err(e) => panic!("{e}"),
        }
    }
    failures
}

/// Found in review (2026-11-29): a write of the inner writer that failed
/// after a chunk was sealed left it sealed in the buffer, and the retry
/// sealed it again under the same nonce, which put the plaintext on the
/// wire with a valid tag. Now the sealed chunk's rest goes out first.
fn retried_writes_round_trip<A: Aead + Clone>(aead: A) {
    for len in [C + 1, 2 * C + 7, 3 * C] {
        let msg = data(len);
        for fail_at in [vec![1], vec![1, 2, 3], vec![2], vec![1, 4, 5]] {
            for cap in [usize::MAX, 1000, C + 3] {
                let armed = std::rc::Rc::new(std::cell::RefCell::new(fail_at.clone()));
                let mut enc = StreamEncryptor::new(aead.clone(), Flaky::new(&armed, cap));
                let failures = write_retrying(&mut enc, &msg);
                armed.borrow_mut().clear();
                if failures == 0 {
                    continue; // the failing call would have been finish's
                }
                let sealed = enc.finish().unwrap().out;
                assert_eq!(
                    sealed,
                    seal_seq(aead.clone(), &msg, C),
                    "{len} {fail_at:?} {cap}"
                );
                // No plaintext run on the wire.
                assert!(
                    !sealed
                        .windows(64)
                        .any(|w| msg.windows(64).take(4).any(|m| m == w))
                );
            }
        }
    }
    // finish right after a failed write: the pending chunk (none of which
    // went out) becomes the last one.
    let msg = data(C);
    let mut enc = StreamEncryptor::new(
        aead.clone(),
        Flaky::new(
            &std::rc::Rc::new(std::cell::RefCell::new(vec![1])),
            usize::MAX,
        ),
    );
    enc.write_all(&msg).unwrap();
    assert!(enc.write(b"x").is_err());
    let sealed = enc.finish().unwrap().out;
    assert_eq!(open_seq(aead.clone(), &sealed).unwrap(), msg);
    // Part of it out, then finish: refused (it cannot be the last chunk).
    let mut enc = StreamEncryptor::new(
        aead.clone(),
        Flaky::new(&std::rc::Rc::new(std::cell::RefCell::new(vec![2])), 1000),
    );
    enc.write_all(&msg).unwrap();
    assert!(enc.write(b"x").is_err());
    assert!(enc.finish().is_err());
}

#[test]
fn retried_writes_never_seal_twice() {
    retried_writes_round_trip(chacha());
    retried_writes_round_trip(gcm());
}

/// Found in review (2026-11-29): a read of the source that failed part of
/// the way through a chunk dropped the bytes read so far, and the next read
/// started mid-chunk: a permanent authentication error.
#[test]
fn retried_reads_resume_the_chunk() {
    let msg = data(3 * C + 11);
    let sealed = seal_seq(chacha(), &msg, C);
    for fail_at in [vec![1], vec![2], vec![2, 3, 7], vec![5, 40, 41]] {
        for cap in [usize::MAX, 999, C] {
            let src = FlakyReader {
                data: &sealed,
                calls: 0,
                fail_at: fail_at.clone(),
                cap,
            };
            let mut dec = StreamDecryptor::new(chacha(), src);
            let mut out = Vec::new();
            let mut buf = vec![0u8; 5000];
            loop {
                match dec.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => panic!("{fail_at:?} {cap}: {e}"),
                }
            }
            assert_eq!(out, msg, "{fail_at:?} {cap}");
        }
    }
}

/// A `Read` whose `at`-th call fails (after a pause, so that other workers
/// queue on the input's lock), then goes on giving data.
struct FlakyRead {
    data: Vec<u8>,
    pos: usize,
    calls: usize,
    at: usize,
}

impl Read for FlakyRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls == self.at {
            std::thread::sleep(std::time::Duration::from_millis(30));
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "flaky"));
        }
        let n = buf.len().min(self.data.len() - self.pos).min(100_000);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Found in review (2026-11-29): after a read error on the locked input, a
/// worker already waiting for the lock read on (the failed fill had
/// consumed input without numbering a segment): sealing wrote a wrong
/// segment, opening reported a chunk authentication failure instead of the
/// I/O error. The run now stops under the lock.
#[test]
fn a_read_error_stops_every_worker() {
    let key = chacha();
    let msg = data(40 * C + 9);
    let sealed = seal_seq(key.clone(), &msg, 4096);
    for threads in [2, 3, 4] {
        for at in [2, 5, 12, 13, 20] {
            let input = FlakyRead {
                data: msg.clone(),
                pos: 0,
                calls: 0,
                at,
            };
            let mut out = Vec::new();
            let err = seal_parallel(&key, input, &mut out, threads).unwrap_err();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::TimedOut,
                "{threads} {at}: {err}"
            );
            assert!(
                sealed.starts_with(&out),
                "seal {threads} {at}: wrote other bytes"
            );
            let input = FlakyRead {
                data: sealed.clone(),
                pos: 0,
                calls: 0,
                at,
            };
            let mut plain = Vec::new();
            let err = open_parallel(&key, input, &mut plain, threads).unwrap_err();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::TimedOut,
                "{threads} {at}: {err}"
            );
            assert!(msg.starts_with(&plain));
        }
    }
}

/// Found in review (2026-11-29): offsets near `u64::MAX` overflowed (a
/// panic with overflow checks, a wrap without). Now `InvalidInput`.
#[test]
fn offsets_past_the_largest_are_an_error() {
    struct Endless;
    impl ReadAt for Endless {
        fn read_at(&self, buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
            buf.fill(7);
            Ok(buf.len())
        }
    }
    let key = chacha();
    for threads in [1, 2, 4] {
        for base in [u64::MAX - 5, u64::MAX - 16 * C as u64] {
            let err = seal_parallel_at(&key, &Endless, base, std::io::sink(), threads).unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
            let err = open_parallel_at(&key, &Endless, base, std::io::sink(), threads).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
                ),
                "{err}"
            );
        }
    }
}
