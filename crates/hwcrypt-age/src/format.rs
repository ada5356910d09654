//! The age v1 header, byte for byte (C2SP age.md): the version line,
//! recipient stanzas (`-> type args...` and a base64 body in 64-column
//! lines, the last one shorter, possibly empty), and the MAC line
//! `--- base64(HMAC-SHA256(HKDF(file key, "", "header"), header up to "---"))`.
//!
//! [`parse_header`] is strict: canonical unpadded base64, arguments of
//! visible ASCII, LF line ends. Writing is canonical, so the MAC is computed
//! over the very bytes read.

use crate::error::{Error, Result};
use crate::primitives::{FileKey, hkdf_sha256, hmac_sha256};
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use hwcrypt::ct;
use std::io::{BufRead, Read};

/// The first line of every age v1 file.
pub const VERSION_LINE: &str = "age-encryption.org/v1";
/// Characters per full line of a stanza body.
const COLUMNS: usize = 64;
/// Largest header accepted from a stream, and written: 16 MiB, as the key
/// files (hybrid stanzas are a few KiB; age reads files to ten thousand
/// X25519 recipients, about 1.8 MiB of header).
pub const MAX_HEADER_LEN: usize = 16 << 20;

/// One recipient stanza: a type, its arguments and a body.
#[derive(Clone, PartialEq, Eq)]
pub struct Stanza {
    /// The first argument: the recipient type (`X25519`, `scrypt`, ...).
    pub tag: String,
    /// The other arguments.
    pub args: Vec<String>,
    /// The decoded body (a wrapped file key).
    pub body: Vec<u8>,
}

impl core::fmt::Debug for Stanza {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stanza")
            .field("tag", &self.tag)
            .field("args", &self.args)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A parsed header.
#[derive(Clone, Debug)]
pub struct Header {
    /// The recipient stanzas, in order.
    pub stanzas: Vec<Stanza>,
    /// The MAC from the `---` line.
    pub mac: [u8; 32],
    /// The bytes the MAC covers: everything up to and including `---`.
    pub mac_input: Vec<u8>,
}

impl Header {
    /// Checks the MAC against `file_key`, in constant time.
    pub fn verify_mac(&self, file_key: &FileKey) -> Result<()> {
        let expected = header_mac(file_key, &self.mac_input);
        if ct::eq(&expected, &self.mac) {
            Ok(())
        } else {
            Err(Error::HeaderMac)
        }
    }
}

fn header_mac(file_key: &FileKey, covered: &[u8]) -> [u8; 32] {
    let mac_key = hkdf_sha256(&file_key[..], &[], b"header");
    hmac_sha256(&mac_key[..], covered)
}

/// An argument: one or more visible ASCII characters.
fn valid_arg(arg: &str) -> bool {
    !arg.is_empty() && arg.bytes().all(|b| (33..=126).contains(&b))
}

/// Strict unpadded base64 (canonical: no stray trailing bits).
pub fn decode_b64(s: &str) -> Option<Vec<u8>> {
    if s.contains(['=', '\r', '\n']) {
        return None;
    }
    STANDARD_NO_PAD.decode(s).ok()
}

/// Unpadded base64.
pub fn encode_b64(bytes: &[u8]) -> String {
    STANDARD_NO_PAD.encode(bytes)
}

/// Splits one LF-terminated line off `input` at `pos`.
fn line(input: &[u8], pos: usize) -> Result<(&str, usize)> {
    let rest = &input[pos..];
    let end = rest
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| Error::header("header ends in the middle of a line"))?;
    let text =
        std::str::from_utf8(&rest[..end]).map_err(|_| Error::header("header line is not ASCII"))?;
    if !text.is_ascii() {
        return Err(Error::header("header line is not ASCII"));
    }
    Ok((text, pos + end + 1))
}

/// Parses a header from the start of `input`; returns it and the number of
/// bytes it took (the payload starts there).
pub fn parse_header(input: &[u8]) -> Result<(Header, usize)> {
    if !input.starts_with(b"age-encryption.org/") {
        return Err(Error::header(
            "not an age file (no age-encryption.org/v1 line)",
        ));
    }
    let (first, mut pos) = line(input, 0)?;
    if first != VERSION_LINE {
        return Err(if first.starts_with("age-encryption.org/") {
            Error::header(format!("unsupported version {first:?}"))
        } else {
            Error::header("not an age file (no age-encryption.org/v1 line)")
        });
    }
    let mut stanzas = Vec::new();
    loop {
        let start = pos;
        let (text, next) = line(input, pos)?;
        pos = next;
        if let Some(rest) = text.strip_prefix("-> ") {
            let mut args = rest.split(' ').map(str::to_owned).collect::<Vec<_>>();
            if !args.iter().all(|a| valid_arg(a)) {
                return Err(Error::header("malformed stanza arguments"));
            }
            let tag = args.remove(0);
            let mut body_b64 = String::new();
            loop {
                let (body_line, next) = line(input, pos)?;
                pos = next;
                if body_line.len() > COLUMNS {
                    return Err(Error::header("stanza body line longer than 64 columns"));
                }
                body_b64.push_str(body_line);
                if body_line.len() < COLUMNS {
                    break;
                }
            }
            let body = decode_b64(&body_b64)
                .ok_or_else(|| Error::header("stanza body is not canonical base64"))?;
            stanzas.push(Stanza { tag, args, body });
        } else if let Some(mac_b64) = text.strip_prefix("--- ") {
            let mac = decode_b64(mac_b64)
                .and_then(|m| <[u8; 32]>::try_from(m).ok())
                .ok_or_else(|| Error::header("malformed header MAC"))?;
            if stanzas.is_empty() {
                return Err(Error::header("no recipient stanzas"));
            }
            let mac_input = input[..start + 3].to_vec();
            return Ok((
                Header {
                    stanzas,
                    mac,
                    mac_input,
                },
                pos,
            ));
        } else {
            return Err(Error::header(
                "expected a stanza (->) or the MAC line (---)",
            ));
        }
    }
}

/// Reads a header from `input` line by line (leaving `input` at the payload).
pub fn read_header<R: BufRead>(input: &mut R) -> Result<Header> {
    read_header_counted(input).map(|(header, _)| header)
}

/// [`read_header`], and the bytes it took (through the MAC line).
pub(crate) fn read_header_counted<R: BufRead>(input: &mut R) -> Result<(Header, usize)> {
    let mut buf = Vec::new();
    loop {
        let start = buf.len();
        let n = Read::by_ref(input)
            .take((MAX_HEADER_LEN - start) as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            return Err(if start == 0 {
                Error::header("empty input (not an age file)")
            } else {
                Error::header("header ends early (no --- line)")
            });
        }
        if buf.len() > MAX_HEADER_LEN {
            return Err(Error::header("header longer than 16 MiB"));
        }
        if buf[start..].starts_with(b"---") || buf[start..].last() != Some(&b'\n') {
            break;
        }
    }
    let (header, used) = parse_header(&buf)?;
    debug_assert_eq!(used, buf.len());
    Ok((header, used))
}

/// Writes a header for `stanzas` with its MAC under `file_key`.
pub fn write_header(stanzas: &[Stanza], file_key: &FileKey) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(VERSION_LINE.as_bytes());
    out.push(b'\n');
    for s in stanzas {
        out.extend_from_slice(b"-> ");
        out.extend_from_slice(s.tag.as_bytes());
        for a in &s.args {
            out.push(b' ');
            out.extend_from_slice(a.as_bytes());
        }
        out.push(b'\n');
        let body = encode_b64(&s.body);
        let mut lines = body.as_bytes().chunks(COLUMNS).peekable();
        while let Some(l) = lines.next() {
            out.extend_from_slice(l);
            out.push(b'\n');
            if lines.peek().is_none() && l.len() == COLUMNS {
                out.push(b'\n');
            }
        }
        if body.is_empty() {
            out.push(b'\n');
        }
    }
    out.extend_from_slice(b"---");
    let mac = header_mac(file_key, &out);
    out.push(b' ');
    out.extend_from_slice(encode_b64(&mac).as_bytes());
    out.push(b'\n');
    out
}
