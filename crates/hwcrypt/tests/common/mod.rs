//! Shared by the integration tests: where the vendored vectors live, a strict
//! parser for their `.rsp`/`.txt` format, the list of backends with the
//! reason each one cannot run here, and hex helpers.
//!
//! Each test binary uses a different subset of this module.
#![allow(dead_code)]

use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, Error};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `crates/hwcrypt/tests/vectors`.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("vectors")
}

/// Every backend hwcrypt knows (implemented or not), with whether this
/// (masked) CPU can run it for `algorithm` and, if not, why.
pub fn backends(algorithm: Algorithm) -> Vec<(Backend, Result<(), Error>)> {
    Backend::ALL
        .into_iter()
        .map(|b| (b, registry::check(algorithm, b)))
        .collect()
}

/// The lines announcing every backend that cannot run `algorithm` here and
/// why, e.g. `skipped backend vaes-avx2 for aes: backend ...`.
pub fn skip_lines(algorithm: Algorithm, backends: &[(Backend, Result<(), Error>)]) -> Vec<String> {
    backends
        .iter()
        .filter_map(|(b, r)| {
            r.as_ref()
                .err()
                .map(|e| format!("skipped backend {b} for {algorithm}: {e}"))
        })
        .collect()
}

/// One line describing the CPU features in use and the `HWCRYPT_CPU` mask.
pub fn cpu_line() -> String {
    let mask = std::env::var(hwcrypt::cpu::MASK_ENV_VAR)
        .map(|m| format!("{}={m:?}", hwcrypt::cpu::MASK_ENV_VAR))
        .unwrap_or_else(|_| format!("{} unset", hwcrypt::cpu::MASK_ENV_VAR));
    match hwcrypt::cpu::features() {
        Ok(f) => format!(
            "cpu features detected: {}; in use: {f} ({mask})",
            hwcrypt::cpu::detected()
        ),
        Err(e) => format!("cpu features unusable: {e} ({mask})"),
    }
}

/// Prints the harness preamble (CPU line and one line per skipped backend).
/// Goes to stderr when the harness only lists trials (`--list`), so that
/// tools parsing the list see nothing else; to stdout otherwise.
pub fn announce(lines: &[String], listing: bool) {
    for line in lines {
        if listing {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
}

// ---------------------------------------------------------------- hex

/// Lower-case hex.
pub fn to_hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// Decodes hex (either case); panics with the offending text otherwise.
pub fn unhex(text: &str) -> Vec<u8> {
    hex::decode(text).unwrap_or_else(|e| panic!("bad hex {text:?}: {e}"))
}

/// Decodes exactly 16 bytes of hex.
pub fn unhex16(text: &str) -> [u8; 16] {
    unhex(text)
        .try_into()
        .unwrap_or_else(|v: Vec<u8>| panic!("{text:?} is {} bytes, not 16", v.len()))
}

/// `None` if equal, else a one-line description of the first difference
/// (index, and a 16-byte window of both sides in hex).
pub fn first_difference(got: &[u8], want: &[u8]) -> Option<String> {
    if got == want {
        return None;
    }
    if got.len() != want.len() {
        return Some(format!("length {} instead of {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
    let from = i - i % 16;
    let to = (from + 16).min(got.len());
    let mut s = String::new();
    let _ = write!(
        s,
        "first difference at byte {i} of {}: bytes {from}..{to} are {} instead of {}",
        got.len(),
        to_hex(&got[from..to]),
        to_hex(&want[from..to])
    );
    Some(s)
}

// ---------------------------------------------------------------- vectors

/// Which section of a vector file a vector is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `[ENCRYPT]`: PLAINTEXT is the input, CIPHERTEXT the expected output.
    Encrypt,
    /// `[DECRYPT]`: CIPHERTEXT is the input, PLAINTEXT the expected output.
    Decrypt,
}

/// One vector of a CAVP-style file.
#[derive(Clone, Debug)]
pub struct Vector {
    /// Section it came from.
    pub direction: Direction,
    /// Its `COUNT`.
    pub count: usize,
    /// 1-based line of its `COUNT =` line.
    pub line: usize,
    /// `KEY`.
    pub key: Vec<u8>,
    /// `IV` (absent in ECB files).
    pub iv: Option<Vec<u8>>,
    /// `PLAINTEXT`.
    pub plaintext: Vec<u8>,
    /// `CIPHERTEXT`.
    pub ciphertext: Vec<u8>,
}

impl Vector {
    /// (input, expected output) for this vector's direction.
    pub fn io(&self) -> (&[u8], &[u8]) {
        match self.direction {
            Direction::Encrypt => (&self.plaintext, &self.ciphertext),
            Direction::Decrypt => (&self.ciphertext, &self.plaintext),
        }
    }

    /// Short label for messages: `ENCRYPT COUNT=3 (line 27)`.
    pub fn label(&self) -> String {
        let d = match self.direction {
            Direction::Encrypt => "ENCRYPT",
            Direction::Decrypt => "DECRYPT",
        };
        format!("{d} COUNT={} (line {})", self.count, self.line)
    }
}

#[derive(Default)]
struct Partial {
    count: usize,
    line: usize,
    key: Option<Vec<u8>>,
    iv: Option<Vec<u8>>,
    plaintext: Option<Vec<u8>>,
    ciphertext: Option<Vec<u8>>,
}

/// Reads and parses a vector file; see [`parse_vectors`].
pub fn read_vectors(path: &Path) -> Result<Vec<Vector>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_vectors(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses the NIST CAVP `.rsp` format, which the vendored RFC 3686 CTR
/// `.txt` files share: `#` comments, `[ENCRYPT]`/`[DECRYPT]` section
/// headers, and records of `NAME = HEX` lines, each opened by `COUNT = N`;
/// LF or CRLF line ends.
///
/// Strict on purpose, so that a format surprise fails loudly instead of
/// running fewer vectors: any other line, section or field name, a field
/// outside a record, a repeated field, a record without KEY, PLAINTEXT and
/// CIPHERTEXT, plaintext and ciphertext of different lengths, or COUNTs that
/// do not run 0, 1, 2, ... within a section are all errors.
pub fn parse_vectors(text: &str) -> Result<Vec<Vector>, String> {
    let mut out = Vec::new();
    let mut direction: Option<Direction> = None;
    let mut current: Option<Partial> = None;
    let mut next_count = 0usize;

    fn finish(p: Partial, direction: Direction, out: &mut Vec<Vector>) -> Result<(), String> {
        let missing = |what: &str| format!("COUNT = {} (line {}): no {what}", p.count, p.line);
        let key = p.key.clone().ok_or_else(|| missing("KEY"))?;
        let plaintext = p.plaintext.clone().ok_or_else(|| missing("PLAINTEXT"))?;
        let ciphertext = p.ciphertext.clone().ok_or_else(|| missing("CIPHERTEXT"))?;
        if plaintext.len() != ciphertext.len() {
            return Err(format!(
                "COUNT = {} (line {}): PLAINTEXT is {} bytes but CIPHERTEXT {}",
                p.count,
                p.line,
                plaintext.len(),
                ciphertext.len()
            ));
        }
        out.push(Vector {
            direction,
            count: p.count,
            line: p.line,
            key,
            iv: p.iv,
            plaintext,
            ciphertext,
        });
        Ok(())
    }

    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        let err = |why: &str| format!("line {lineno}: {why}: {line:?}");
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            let d = match line {
                "[ENCRYPT]" => Direction::Encrypt,
                "[DECRYPT]" => Direction::Decrypt,
                _ => return Err(err("unknown section")),
            };
            if let (Some(p), Some(d)) = (current.take(), direction) {
                finish(p, d, &mut out)?;
            }
            direction = Some(d);
            next_count = 0;
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .ok_or_else(|| err("not `NAME = VALUE`"))?;
        let Some(d) = direction else {
            return Err(err("field before any [ENCRYPT]/[DECRYPT] section"));
        };
        if name == "COUNT" {
            let count: usize = value.parse().map_err(|_| err("bad COUNT"))?;
            if count != next_count {
                return Err(err(&format!(
                    "COUNT {count} where {next_count} was expected"
                )));
            }
            next_count += 1;
            if let Some(p) = current.take() {
                finish(p, d, &mut out)?;
            }
            current = Some(Partial {
                count,
                line: lineno,
                ..Partial::default()
            });
            continue;
        }
        let Some(p) = current.as_mut() else {
            return Err(err("field before any COUNT"));
        };
        let bytes = hex::decode(value).map_err(|e| err(&format!("bad hex ({e})")))?;
        let slot = match name {
            "KEY" => &mut p.key,
            "IV" => &mut p.iv,
            "PLAINTEXT" => &mut p.plaintext,
            "CIPHERTEXT" => &mut p.ciphertext,
            _ => return Err(err("unknown field")),
        };
        if slot.replace(bytes).is_some() {
            return Err(err("repeated field"));
        }
    }
    if let (Some(p), Some(d)) = (current.take(), direction) {
        finish(p, d, &mut out)?;
    }
    Ok(out)
}

/// Number of (encrypt, decrypt) vectors.
pub fn count_directions(vectors: &[Vector]) -> (usize, usize) {
    let enc = vectors
        .iter()
        .filter(|v| v.direction == Direction::Encrypt)
        .count();
    (enc, vectors.len() - enc)
}
