//! ASCII armor: the age file as strict PEM, `-----BEGIN AGE ENCRYPTED
//! FILE-----`, padded base64 in 64-column lines (the last 1..=64 columns),
//! `-----END AGE ENCRYPTED FILE-----`. As age 1.3: LF or CRLF line ends,
//! whitespace only around the whole block, canonical base64, nothing else.

use crate::error::{Error, Result};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use core::fmt;
use std::io::{self, Write};
use zeroize::Zeroizing;

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

/// Decodes an armored age file into the binary one.
pub fn decode_armor(input: &[u8]) -> Result<Vec<u8>> {
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
