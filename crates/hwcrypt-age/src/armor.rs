//! ASCII armor: the age file as strict PEM, `-----BEGIN AGE ENCRYPTED
//! FILE-----`, padded base64 in 64-column lines (the last 1..=64 columns),
//! `-----END AGE ENCRYPTED FILE-----`. As age 1.3: LF or CRLF line ends,
//! whitespace only around the whole block, canonical base64, nothing else.

use crate::error::{Error, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use core::fmt;
use std::io::{self, BufRead, Read, Write};
use zeroize::{Zeroize, Zeroizing};

/// The armor's first line.
pub const BEGIN: &str = "-----BEGIN AGE ENCRYPTED FILE-----";
/// The armor's last line.
pub const END: &str = "-----END AGE ENCRYPTED FILE-----";
const COLUMNS: usize = 64;
/// Bytes per full line (64 base64 characters).
const LINE_BYTES: usize = COLUMNS / 4 * 3;

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Whether `input` starts (after whitespace) like an armored age file.
pub fn is_armored(input: &[u8]) -> bool {
    let start = input
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(input.len());
    let rest = &input[start..];
    let n = rest.len().min(BEGIN.len());
    n > 0 && rest[..n] == BEGIN.as_bytes()[..n] && rest.starts_with(b"-----BEGIN")
}

/// Most of the input [`sniff_armor`] takes before it decides.
const SNIFF_MAX: usize = 1 << 16;

/// Reads the start of `input` until it is known whether it is armored:
/// ten bytes after any leading whitespace, the end of the input, or 64 KiB
/// (one read may return less than [`is_armored`] needs: a pipe can hand
/// over the first five bytes alone). Returns the decision and the bytes
/// taken, which the caller puts back in front of the rest
/// (`Cursor::new(head).chain(input)`).
pub fn sniff_armor<R: BufRead>(input: &mut R) -> io::Result<(bool, Vec<u8>)> {
    let mut head = Vec::new();
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let take = buf.len().min(SNIFF_MAX - head.len());
        head.extend_from_slice(&buf[..take]);
        input.consume(take);
        let text = head
            .iter()
            .position(|&b| !is_space(b))
            .map_or(0, |i| head.len() - i);
        if text >= "-----BEGIN".len() || head.len() == SNIFF_MAX {
            break;
        }
    }
    Ok((is_armored(&head), head))
}

/// Decodes an armored age file into the binary one (the whole file in
/// memory; [`ArmoredReader`] decodes as it reads).
pub fn decode_armor(input: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match ArmoredReader::new(input).read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(e) => {
            out.zeroize();
            Err(Error::from_io(e))
        }
    }
}

/// Where an [`ArmoredReader`] is in the armor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the BEGIN line (leading whitespace not yet skipped).
    Begin,
    /// In the base64 lines; `last` once a line was short or padded (only
    /// the END line may follow).
    Body { last: bool },
    /// After the END line, only whitespace was found to the end.
    Done,
}

/// Decodes an armored age file as it is read, in bounded memory: one line
/// at a time, with the same rules as [`decode_armor`] (strict PEM, 64-column
/// lines, canonical padded base64, whitespace only around the block). A
/// violation is an `io::Error` of kind `InvalidData` carrying an
/// [`Error::Armor`]; the bytes before it were decoded from lines that were
/// valid so far (the age STREAM authenticates them, not the armor).
pub struct ArmoredReader<R: io::BufRead> {
    inner: R,
    state: State,
    /// The current input line (at most `MAX_LINE` bytes).
    line: Zeroizing<Vec<u8>>,
    /// Decoded bytes of the current line: `decoded[at..len]` not yet read.
    decoded: Zeroizing<[u8; LINE_BYTES]>,
    at: usize,
    len: usize,
}

/// The longest line read: 64 columns, CR and LF, and one byte more to tell
/// a long line.
const MAX_LINE: u64 = COLUMNS as u64 + 3;

impl<R: io::BufRead> ArmoredReader<R> {
    /// Decodes the armored file `inner` holds.
    pub fn new(inner: R) -> Self {
        ArmoredReader {
            inner,
            state: State::Begin,
            line: Zeroizing::new(Vec::with_capacity(MAX_LINE as usize)),
            decoded: Zeroizing::new([0; LINE_BYTES]),
            at: 0,
            len: 0,
        }
    }

    /// The next line without its LF and one CR before it, as a range of
    /// `self.line`; `None` at the end of the input.
    fn next_line(&mut self) -> io::Result<Option<core::ops::Range<usize>>> {
        self.line.clear();
        let n = (&mut self.inner)
            .take(MAX_LINE)
            .read_until(b'\n', &mut self.line)?;
        if n == 0 {
            return Ok(None);
        }
        let mut end = n;
        if self.line[end - 1] == b'\n' {
            end -= 1;
        } else if n as u64 == MAX_LINE {
            return Err(bad("armor line of the wrong length"));
        }
        if end > 0 && self.line[end - 1] == b'\r' {
            end -= 1;
        }
        Ok(Some(0..end))
    }

    /// Skips whitespace; returns whether anything else follows.
    fn skip_space(&mut self) -> io::Result<bool> {
        loop {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                return Ok(false);
            }
            let n = buf.iter().position(|&b| !is_space(b));
            let skip = n.unwrap_or(buf.len());
            self.inner.consume(skip);
            if n.is_some() {
                return Ok(true);
            }
        }
    }

    /// Decodes the next line into `decoded`; false at the END line.
    fn decode_line(&mut self) -> io::Result<bool> {
        loop {
            match self.state {
                State::Done => return Ok(false),
                State::Begin => {
                    self.skip_space()?;
                    let first = self.next_line()?;
                    if first.map(|r| &self.line[r]) != Some(BEGIN.as_bytes()) {
                        return Err(bad("missing -----BEGIN AGE ENCRYPTED FILE----- line"));
                    }
                    self.state = State::Body { last: false };
                }
                State::Body { last } => {
                    let Some(range) = self.next_line()? else {
                        return Err(bad("missing -----END AGE ENCRYPTED FILE----- line"));
                    };
                    let line = &self.line[range];
                    if line == END.as_bytes() {
                        if self.skip_space()? {
                            return Err(bad("data after the armor"));
                        }
                        self.state = State::Done;
                        return Ok(false);
                    }
                    if last {
                        return Err(bad("short line before the end of the armor"));
                    }
                    if line.is_empty() || line.len() > COLUMNS {
                        return Err(bad("armor line of the wrong length"));
                    }
                    // Lines are whole base64 quanta (64 = 16 x 4), so each
                    // decodes on its own; padding may end only the last.
                    let last = line.len() < COLUMNS || line.ends_with(b"=");
                    let n = STANDARD
                        .decode_slice(line, &mut self.decoded[..])
                        .map_err(|_| bad("armor body is not canonical padded base64"))?;
                    self.state = State::Body { last };
                    self.at = 0;
                    self.len = n;
                    if n > 0 {
                        return Ok(true);
                    }
                }
            }
        }
    }
}

fn bad(message: &str) -> io::Error {
    Error::Armor(message.into()).into()
}

impl<R: io::BufRead> Read for ArmoredReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut written = 0;
        while written < out.len() {
            if self.at == self.len && !self.decode_line()? {
                break;
            }
            let n = (self.len - self.at).min(out.len() - written);
            out[written..written + n].copy_from_slice(&self.decoded[self.at..self.at + n]);
            self.at += n;
            written += n;
        }
        Ok(written)
    }
}

impl<R: io::BufRead> fmt::Debug for ArmoredReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArmoredReader")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// Writes the armor around what is written to it; [`finish`](Self::finish)
/// writes the last line and the END line.
pub struct ArmoredWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
    text: Vec<u8>,
}

impl<W: Write> ArmoredWriter<W> {
    /// Starts an armored file (writes the BEGIN line).
    pub fn new(mut inner: W) -> io::Result<Self> {
        inner.write_all(BEGIN.as_bytes())?;
        inner.write_all(b"\n")?;
        Ok(ArmoredWriter {
            inner,
            pending: Vec::with_capacity(LINE_BYTES),
            text: Vec::new(),
        })
    }

    /// Encodes whole lines of `data` into `self.text`.
    fn encode_lines(&mut self, data: &[u8]) {
        for line in data.chunks(LINE_BYTES) {
            let at = self.text.len();
            self.text.resize(at + COLUMNS + 1, 0);
            let n = STANDARD
                .encode_slice(line, &mut self.text[at..])
                .expect("room for one line");
            self.text.truncate(at + n);
            self.text.push(b'\n');
        }
    }

    /// Writes the last line and END, flushes, returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.text.clear();
        let pending = std::mem::take(&mut self.pending);
        self.encode_lines(&pending);
        self.text.extend_from_slice(END.as_bytes());
        self.text.push(b'\n');
        self.inner.write_all(&self.text)?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for ArmoredWriter<W> {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let n = data.len();
        self.text.clear();
        if !self.pending.is_empty() {
            let take = (LINE_BYTES - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..take]);
            data = &data[take..];
            // A full line is written only once more data follows (the last
            // line is written by finish).
            if self.pending.len() == LINE_BYTES && !data.is_empty() {
                let pending = std::mem::take(&mut self.pending);
                self.encode_lines(&pending);
            }
        }
        if !data.is_empty() {
            // Keep 1..=LINE_BYTES bytes back for the next write or finish.
            let keep = (data.len() - 1) % LINE_BYTES + 1;
            let (lines, tail) = data.split_at(data.len() - keep);
            self.encode_lines(lines);
            self.pending.extend_from_slice(tail);
        }
        self.inner.write_all(&self.text)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> fmt::Debug for ArmoredWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArmoredWriter").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands over one byte per read (a slow pipe).
    struct OneByte<'a>(&'a [u8]);

    impl Read for OneByte<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.0.len()).min(1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn sniffing_reads_on_until_it_knows() {
        let armored = format!("\n\n{BEGIN}\nYWdl\n{END}\n");
        for (input, want) in [
            (armored.as_bytes(), true),
            (&b"age-encryption.org/v1\n"[..], false),
            (&b"-----BEG"[..], false),
            (&b""[..], false),
        ] {
            let mut r = io::BufReader::with_capacity(4, OneByte(input));
            let (armored, head) = sniff_armor(&mut r).unwrap();
            assert_eq!(armored, want, "{:?}", String::from_utf8_lossy(input));
            let mut all = head;
            r.read_to_end(&mut all).unwrap();
            assert_eq!(all, input, "nothing lost");
        }
    }

    /// The whole-buffer decoder this module had before `ArmoredReader`
    /// (kept as the oracle: the streaming decoder must accept and reject
    /// exactly what it did, with the same bytes).
    fn decode_whole(input: &[u8]) -> Result<Vec<u8>> {
        let bad = |m: &str| Error::Armor(m.into());
        let start = input
            .iter()
            .position(|&b| !is_space(b))
            .unwrap_or(input.len());
        let mut lines = input[start..].split(|&b| b == b'\n');
        let mut next_line = || lines.next().map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        if next_line() != Some(BEGIN.as_bytes()) {
            return Err(bad("missing -----BEGIN AGE ENCRYPTED FILE----- line"));
        }
        let mut b64 = Zeroizing::new(Vec::new());
        let mut short_seen = false;
        loop {
            let Some(line) = next_line() else {
                return Err(bad("missing -----END AGE ENCRYPTED FILE----- line"));
            };
            if line == END.as_bytes() {
                break;
            }
            if short_seen {
                return Err(bad("short line before the end of the armor"));
            }
            if line.is_empty() || line.len() > COLUMNS {
                return Err(bad("armor line of the wrong length"));
            }
            short_seen = line.len() < COLUMNS;
            b64.extend_from_slice(line);
        }
        let rest: Vec<&[u8]> = std::iter::from_fn(next_line).collect();
        if !rest.iter().all(|l| l.iter().all(|&b| is_space(b))) {
            return Err(bad("data after the armor"));
        }
        STANDARD
            .decode(&b64[..])
            .map_err(|_| bad("armor body is not canonical padded base64"))
    }

    /// A small deterministic generator (no dev-dependency for this).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    fn armor(data: &[u8]) -> Vec<u8> {
        let mut w = ArmoredWriter::new(Vec::new()).unwrap();
        w.write_all(data).unwrap();
        w.finish().unwrap()
    }

    /// The streaming decoder through a reader that hands out `step` bytes
    /// at a time (lines and reads split anywhere).
    fn decode_stream(input: &[u8], step: usize) -> Result<Vec<u8>> {
        let reader = io::BufReader::with_capacity(step.max(1), input);
        let mut out = Vec::new();
        let mut r = ArmoredReader::new(reader);
        let mut buf = vec![0u8; step.max(1) * 3 + 1];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return Ok(out),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return Err(Error::from_io(e)),
            }
        }
    }

    /// Valid armor of many lengths and mutations of it (whitespace, CRLF,
    /// line breaks moved, bytes changed, padding moved, lines dropped or
    /// doubled, data after the END line): the streaming decoder accepts
    /// exactly what the whole-buffer one accepted, with the same bytes.
    #[test]
    fn streaming_decoder_agrees_with_the_whole_buffer_one() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut accepted = 0;
        let mut rejected = 0;
        for case in 0..6000 {
            let len = match case % 4 {
                0 => rng.below(4),
                1 => rng.below(200),
                2 => 48 * rng.below(5) + rng.below(3),
                _ => rng.below(3000),
            };
            let data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let mut a = armor(&data);
            let mutations = if case % 5 == 0 { 0 } else { 1 + rng.below(3) };
            for _ in 0..mutations {
                let at = rng.below(a.len() + 1);
                match rng.below(9) {
                    0 => a.insert(at, [b' ', b'\t', b'\r', b'\n'][rng.below(4)]),
                    1 if at < a.len() => {
                        a.remove(at);
                    }
                    2 if at < a.len() => a[at] = b"AQZ+/=-\n\r x"[rng.below(11)],
                    3 => {
                        // Every LF into CRLF.
                        let mut b = Vec::new();
                        for &c in &a {
                            if c == b'\n' {
                                b.push(b'\r');
                            }
                            b.push(c);
                        }
                        a = b;
                    }
                    4 => a.splice(0..0, b"\n \t\r\n".iter().copied()).for_each(drop),
                    5 => a.extend_from_slice([&b"\n\n  "[..], b"x", b"\r\n"][rng.below(3)]),
                    6 if at < a.len() => a.insert(at, b'='),
                    7 => {
                        // Drop or double a line.
                        let lines: Vec<&[u8]> = a.split(|&c| c == b'\n').collect();
                        let k = rng.below(lines.len());
                        let mut b: Vec<&[u8]> = lines.clone();
                        if rng.below(2) == 0 {
                            b.remove(k);
                        } else {
                            b.insert(k, lines[k]);
                        }
                        a = b.join(&b'\n');
                    }
                    _ => a.truncate(at),
                }
            }
            let want = decode_whole(&a);
            for step in [1, 7, 64, 4096] {
                let got = decode_stream(&a, step);
                match (&want, &got) {
                    (Ok(w), Ok(g)) => assert_eq!(w, g, "case {case} step {step}"),
                    (Err(_), Err(e)) => assert!(matches!(e, Error::Armor(_)), "{e}"),
                    _ => panic!(
                        "case {case} step {step}: whole {:?}, streaming {:?}, input {:?}",
                        want.as_ref().map(Vec::len),
                        got.as_ref().map(Vec::len),
                        String::from_utf8_lossy(&a)
                    ),
                }
            }
            if want.is_ok() {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        // Both outcomes well represented.
        assert!(
            accepted > 1000 && rejected > 1000,
            "{accepted} / {rejected}"
        );
    }

    /// Memory stays bounded however long a line is: a "line" of a
    /// megabyte without LF is refused after a few bytes.
    #[test]
    fn long_lines_are_refused_in_bounded_memory() {
        let mut a = b"-----BEGIN AGE ENCRYPTED FILE-----\n".to_vec();
        a.extend(std::iter::repeat_n(b'A', 1 << 20));
        let mut r = ArmoredReader::new(&a[..]);
        let mut out = [0u8; 4096];
        let e = loop {
            match r.read(&mut out) {
                Ok(0) => panic!("accepted"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(r.line.capacity() <= 128, "{}", r.line.capacity());
    }
}
