//! Known-answer tests for ChaCha20, Poly1305, HChaCha20, ChaCha20-Poly1305
//! and XChaCha20-Poly1305: every vector of every file under
//! `tests/vectors/chacha20poly1305/`, on every backend forced by name, one
//! trial per file and backend (`kat::ChaCha20Poly1305/boringssl::avx2`).
//!
//! Backends this (masked) CPU cannot run, or that do not implement
//! ChaCha20-Poly1305, still get their trials, marked ignored, and a line at
//! the start says which backend was skipped and why. Every file's record
//! count is checked, and the folder is checked to hold exactly these files.
//!
//! AEAD vectors are run four ways (seal in place, seal into a separate
//! buffer, open in place, open from a separate buffer); the vendored
//! failure vector (`Result = CIPHERFINAL_ERROR`) must fail with
//! `AuthenticationFailed` and leave the output all zero. The ChaCha20 and
//! ChaCha20-Poly1305 vectors also go through the streaming API
//! ([`cp::ChaCha20`] with OpenSSL's IV, [`cp::ChaCha20Poly1305Stream`]) in
//! uneven pieces. Poly1305 and
//! HChaCha20 have one (portable) implementation, so their files run as one
//! trial on `soft`; the AEAD vectors exercise each backend's own Poly1305.

mod common;

use common::first_difference;
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{self as cp, ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    common::vectors_dir().join("chacha20poly1305")
}

// ---------------------------------------------------------------- parsing

/// One record: the fields after a `COUNT` line, in the section it is in.
#[derive(Clone, Debug)]
struct Record {
    section: String,
    count: usize,
    line: usize,
    fields: Vec<(String, String)>,
}

impl Record {
    fn label(&self) -> String {
        if self.section.is_empty() {
            format!("COUNT={} (line {})", self.count, self.line)
        } else {
            format!(
                "[{}] COUNT={} (line {})",
                self.section, self.count, self.line
            )
        }
    }

    fn raw(&self, name: &str) -> Result<&str, String> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| format!("{}: no {name}", self.label()))
    }

    fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|(n, _)| n == name)
    }

    /// A hex field, or a `"quoted"` ASCII string (boringssl.txt uses both).
    fn bytes(&self, name: &str) -> Result<Vec<u8>, String> {
        let v = self.raw(name)?;
        if let Some(s) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            return Ok(s.as_bytes().to_vec());
        }
        hex::decode(v).map_err(|e| format!("{}: {name}: bad hex ({e})", self.label()))
    }

    fn number(&self, name: &str) -> Result<u32, String> {
        self.raw(name)?
            .parse()
            .map_err(|_| format!("{}: {name}: not a number", self.label()))
    }

    /// Checks the record has exactly the fields `required` plus any of `optional`.
    fn expect_fields(&self, required: &[&str], optional: &[&str]) -> Result<(), String> {
        for (n, _) in &self.fields {
            if !required.contains(&n.as_str()) && !optional.contains(&n.as_str()) {
                return Err(format!("{}: unexpected field {n}", self.label()));
            }
        }
        for r in required {
            self.raw(r)?;
        }
        Ok(())
    }
}

/// Parses the line formats of these files: `#` comments, `[SECTION]`
/// headers, records opened by `COUNT = N` (N = 0, 1, ... or 1, 2, ... per
/// section, consecutive), and `NAME = VALUE` / `NAME= VALUE` fields; LF or
/// CRLF. Strict: a field before any COUNT, a repeated field, or a line of any
/// other shape is an error.
fn parse(text: &str) -> Result<Vec<Record>, String> {
    let mut out: Vec<Record> = Vec::new();
    let mut section = String::new();
    let mut current: Option<Record> = None;
    let mut next_count: Option<usize> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        let err = |why: &str| format!("line {lineno}: {why}: {line:?}");
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.extend(current.take());
            section = name.to_string();
            next_count = None;
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .ok_or_else(|| err("not `NAME = VALUE`"))?;
        if name == "COUNT" {
            let count: usize = value.parse().map_err(|_| err("bad COUNT"))?;
            if let Some(want) = next_count
                && count != want
            {
                return Err(err(&format!("COUNT {count} where {want} was expected")));
            }
            if next_count.is_none() && count > 1 {
                return Err(err("first COUNT of a section is not 0 or 1"));
            }
            next_count = Some(count + 1);
            out.extend(current.take());
            current = Some(Record {
                section: section.clone(),
                count,
                line: lineno,
                fields: Vec::new(),
            });
            continue;
        }
        let rec = current
            .as_mut()
            .ok_or_else(|| err("field before any COUNT"))?;
        if rec.fields.iter().any(|(n, _)| n == name) {
            return Err(err("repeated field"));
        }
        rec.fields.push((name.to_string(), value.to_string()));
    }
    out.extend(current);
    Ok(out)
}

// ---------------------------------------------------------------- files

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// pyca `ChaCha20/rfc7539.txt`: KEY NONCE INITIAL_BLOCK_COUNTER PLAINTEXT CIPHERTEXT.
    ChaCha20Pyca,
    /// pyca `poly1305/rfc7539.txt`: KEY MSG TAG.
    Poly1305Pyca,
    /// pyca `ChaCha20Poly1305/boringssl.txt`: KEY NONCE IN AD CT TAG.
    AeadBoringSsl,
    /// pyca `ChaCha20Poly1305/openssl.txt`: Key IV AAD Tag Plaintext Ciphertext [Result].
    AeadOpenSsl,
    /// Our transcription, several sections.
    Extra,
}

#[derive(Clone, Debug)]
struct FileSpec {
    path: &'static str,
    kind: Kind,
    /// Records per section (section "" for files without sections).
    counts: &'static [(&'static str, usize)],
    /// Whether the file depends on the backend (else it runs on `soft` only).
    per_backend: bool,
}

const FILES: [FileSpec; 5] = [
    FileSpec {
        path: "ChaCha20/rfc7539.txt",
        kind: Kind::ChaCha20Pyca,
        counts: &[("", 3)],
        per_backend: true,
    },
    FileSpec {
        path: "ChaCha20Poly1305/boringssl.txt",
        kind: Kind::AeadBoringSsl,
        counts: &[("", 66)],
        per_backend: true,
    },
    FileSpec {
        path: "ChaCha20Poly1305/openssl.txt",
        kind: Kind::AeadOpenSsl,
        counts: &[("", 5)],
        per_backend: true,
    },
    FileSpec {
        path: "poly1305/rfc7539.txt",
        kind: Kind::Poly1305Pyca,
        counts: &[("", 11)],
        per_backend: false,
    },
    FileSpec {
        path: "RFC8439-XChaCha-extra.txt",
        kind: Kind::Extra,
        counts: &[
            ("CHACHA20", 7),
            ("POLY1305", 1),
            ("KEYGEN", 4),
            ("HCHACHA20", 1),
            ("XCHACHA20POLY1305", 1),
        ],
        per_backend: true,
    },
];

fn read(spec: &FileSpec) -> Result<Vec<Record>, String> {
    let path = dir().join(spec.path);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let recs = parse(&text).map_err(|e| format!("{}: {e}", spec.path))?;
    for (section, n) in spec.counts {
        let got = recs.iter().filter(|r| r.section == *section).count();
        if got != *n {
            return Err(format!(
                "{}: [{section}] has {got} records, expected {n}",
                spec.path
            ));
        }
    }
    let total: usize = spec.counts.iter().map(|(_, n)| n).sum();
    if recs.len() != total {
        return Err(format!(
            "{}: {} records, expected {total}",
            spec.path,
            recs.len()
        ));
    }
    Ok(recs)
}

// ---------------------------------------------------------------- checks

fn same(what: &str, rec: &Record, got: &[u8], want: &[u8]) -> Result<(), String> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(d) => Err(format!("{}: {what}: {d}", rec.label())),
    }
}

fn chacha20(rec: &Record, backend: Backend, counter_field: &str) -> Result<(), String> {
    let key = rec.bytes(if rec.has("KEY") { "KEY" } else { "Key" })?;
    let nonce = rec.bytes("NONCE")?;
    let counter = rec.number(counter_field)?;
    let pt = rec.bytes("PLAINTEXT")?;
    let ct = rec.bytes("CIPHERTEXT")?;
    let mut buf = pt.clone();
    cp::chacha20_xor(backend, &key, &nonce, counter, &mut buf)
        .map_err(|e| format!("{}: {e}", rec.label()))?;
    same("encrypt", rec, &buf, &ct)?;
    cp::chacha20_xor(backend, &key, &nonce, counter, &mut buf)
        .map_err(|e| format!("{}: {e}", rec.label()))?;
    same("decrypt", rec, &buf, &pt)?;
    // The raw stream with OpenSSL's IV (counter || nonce), in uneven pieces.
    let mut iv = counter.to_le_bytes().to_vec();
    iv.extend_from_slice(&nonce);
    let mut stream = cp::ChaCha20::with_backend(&key, &iv, backend)
        .map_err(|e| format!("{}: {e}", rec.label()))?;
    let mut buf = pt.clone();
    for piece in pieces(&mut buf) {
        stream.apply_keystream(piece);
    }
    same("ChaCha20 stream", rec, &buf, &ct)
}

/// `buf` cut into pieces of 1, 7, 16, 64, 3, 200, 1, 7, ... bytes.
fn pieces(buf: &mut [u8]) -> Vec<&mut [u8]> {
    const SIZES: [usize; 6] = [1, 7, 16, 64, 3, 200];
    let mut out = Vec::new();
    let mut rest = buf;
    for n in SIZES.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at_mut((*n).min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

/// An AEAD vector through [`cp::ChaCha20Poly1305Stream`], associated data
/// and text in uneven pieces: the ciphertext and tag (valid vectors), and
/// `verify` (accepts valid vectors, rejects the others).
#[allow(clippy::too_many_arguments)]
fn stream_vector(
    rec: &Record,
    aead: &ChaCha20Poly1305,
    nonce: &[u8],
    aad: &[u8],
    pt: &[u8],
    ct: &[u8],
    tag: &[u8],
    valid: bool,
) -> Result<(), String> {
    let e = |what: &str, err: Error| format!("{}: stream: {what}: {err}", rec.label());
    let mut s = cp::ChaCha20Poly1305Stream::new(aead);
    let mut aad_buf = aad.to_vec();
    if valid {
        s.start(nonce).map_err(|x| e("start", x))?;
        for piece in pieces(&mut aad_buf) {
            s.aad(piece).map_err(|x| e("aad", x))?;
        }
        let mut buf = pt.to_vec();
        for piece in pieces(&mut buf) {
            s.encrypt(piece).map_err(|x| e("encrypt", x))?;
        }
        let t = s.finish().map_err(|x| e("finish", x))?;
        same("stream: ciphertext", rec, &buf, ct)?;
        same("stream: tag", rec, &t, tag)?;
    }
    s.start(nonce).map_err(|x| e("start", x))?;
    for piece in pieces(&mut aad_buf) {
        s.aad(piece).map_err(|x| e("aad", x))?;
    }
    let mut buf = ct.to_vec();
    for piece in pieces(&mut buf) {
        s.decrypt(piece).map_err(|x| e("decrypt", x))?;
    }
    match (s.verify(tag), valid) {
        (Ok(()), true) => same("stream: plaintext", rec, &buf, pt),
        (Err(_), false) => Ok(()),
        (r, _) => Err(format!("{}: stream: verify gave {r:?}", rec.label())),
    }
}

/// One AEAD vector through all four call shapes. `valid = false`: every open
/// must fail opaquely and leave zeros.
#[allow(clippy::too_many_arguments)]
fn aead_vector<A: Aead>(
    rec: &Record,
    aead: &A,
    nonce: &[u8],
    aad: &[u8],
    pt: &[u8],
    ct: &[u8],
    tag: &[u8],
    valid: bool,
) -> Result<(), String> {
    let e = |what: &str, err: Error| format!("{}: {what}: {err}", rec.label());
    if valid {
        let mut buf = pt.to_vec();
        let t = aead
            .seal_in_place_detached(nonce, aad, &mut buf)
            .map_err(|x| e("seal in place", x))?;
        same("seal in place: ciphertext", rec, &buf, ct)?;
        same("seal in place: tag", rec, &t, tag)?;
        let mut out = vec![0xa5; pt.len()];
        let t = aead
            .seal_detached(nonce, aad, pt, &mut out)
            .map_err(|x| e("seal separate", x))?;
        same("seal separate: ciphertext", rec, &out, ct)?;
        same("seal separate: tag", rec, &t, tag)?;
        let mut buf = ct.to_vec();
        aead.open_in_place_detached(nonce, aad, &mut buf, tag)
            .map_err(|x| e("open in place", x))?;
        same("open in place", rec, &buf, pt)?;
        let mut out = vec![0xa5; ct.len()];
        aead.open_detached(nonce, aad, ct, tag, &mut out)
            .map_err(|x| e("open separate", x))?;
        same("open separate", rec, &out, pt)?;
        let mut sealed = ct.to_vec();
        sealed.extend_from_slice(tag);
        let opened = aead.open(nonce, aad, &sealed).map_err(|x| e("open", x))?;
        same("open (allocating)", rec, &opened, pt)
    } else {
        let mut buf = ct.to_vec();
        let r = aead.open_in_place_detached(nonce, aad, &mut buf, tag);
        if r != Err(Error::AuthenticationFailed) {
            return Err(format!(
                "{}: invalid vector: open in place gave {r:?}",
                rec.label()
            ));
        }
        if buf.iter().any(|&b| b != 0) {
            return Err(format!("{}: failed open left data behind", rec.label()));
        }
        let mut out = vec![0xa5; ct.len()];
        let r = aead.open_detached(nonce, aad, ct, tag, &mut out);
        if r != Err(Error::AuthenticationFailed) || out.iter().any(|&b| b != 0) {
            return Err(format!(
                "{}: invalid vector: open separate gave {r:?} or left data",
                rec.label()
            ));
        }
        Ok(())
    }
}

fn run_record(kind: Kind, rec: &Record, backend: Backend) -> Result<(), String> {
    let key_err = |e: Error| format!("{}: key: {e}", rec.label());
    match (kind, rec.section.as_str()) {
        (Kind::ChaCha20Pyca, _) => {
            rec.expect_fields(
                &[
                    "KEY",
                    "NONCE",
                    "INITIAL_BLOCK_COUNTER",
                    "PLAINTEXT",
                    "CIPHERTEXT",
                ],
                &[],
            )?;
            chacha20(rec, backend, "INITIAL_BLOCK_COUNTER")
        }
        (Kind::Extra, "CHACHA20") => {
            rec.expect_fields(&["KEY", "NONCE", "COUNTER", "PLAINTEXT", "CIPHERTEXT"], &[])?;
            chacha20(rec, backend, "COUNTER")
        }
        (Kind::Poly1305Pyca, _) | (Kind::Extra, "POLY1305") => {
            rec.expect_fields(&["KEY", "MSG", "TAG"], &[])?;
            let tag = cp::poly1305(&rec.bytes("KEY")?, &rec.bytes("MSG")?)
                .map_err(|e| format!("{}: {e}", rec.label()))?;
            same("tag", rec, &tag, &rec.bytes("TAG")?)
        }
        (Kind::Extra, "KEYGEN") => {
            rec.expect_fields(&["KEY", "NONCE", "POLYKEY"], &[])?;
            let mut block0 = [0u8; 32];
            cp::chacha20_xor(
                backend,
                &rec.bytes("KEY")?,
                &rec.bytes("NONCE")?,
                0,
                &mut block0,
            )
            .map_err(|e| format!("{}: {e}", rec.label()))?;
            same("one-time key", rec, &block0, &rec.bytes("POLYKEY")?)
        }
        (Kind::Extra, "HCHACHA20") => {
            rec.expect_fields(&["KEY", "INPUT", "SUBKEY"], &[])?;
            let sub = cp::hchacha20(&rec.bytes("KEY")?, &rec.bytes("INPUT")?)
                .map_err(|e| format!("{}: {e}", rec.label()))?;
            same("subkey", rec, &sub, &rec.bytes("SUBKEY")?)
        }
        (Kind::Extra, "XCHACHA20POLY1305") => {
            rec.expect_fields(
                &["KEY", "NONCE", "AAD", "PLAINTEXT", "CIPHERTEXT", "TAG"],
                &[],
            )?;
            let aead =
                XChaCha20Poly1305::with_backend(&rec.bytes("KEY")?, backend).map_err(key_err)?;
            aead_vector(
                rec,
                &aead,
                &rec.bytes("NONCE")?,
                &rec.bytes("AAD")?,
                &rec.bytes("PLAINTEXT")?,
                &rec.bytes("CIPHERTEXT")?,
                &rec.bytes("TAG")?,
                true,
            )
        }
        (Kind::AeadBoringSsl, _) => {
            rec.expect_fields(&["KEY", "NONCE", "IN", "AD", "CT", "TAG"], &[])?;
            let aead =
                ChaCha20Poly1305::with_backend(&rec.bytes("KEY")?, backend).map_err(key_err)?;
            aead_vector(
                rec,
                &aead,
                &rec.bytes("NONCE")?,
                &rec.bytes("AD")?,
                &rec.bytes("IN")?,
                &rec.bytes("CT")?,
                &rec.bytes("TAG")?,
                true,
            )?;
            stream_vector(
                rec,
                &aead,
                &rec.bytes("NONCE")?,
                &rec.bytes("AD")?,
                &rec.bytes("IN")?,
                &rec.bytes("CT")?,
                &rec.bytes("TAG")?,
                true,
            )
        }
        (Kind::AeadOpenSsl, _) => {
            rec.expect_fields(
                &["Key", "IV", "AAD", "Tag", "Plaintext", "Ciphertext"],
                &["Result"],
            )?;
            let valid = match rec.raw("Result") {
                Err(_) => true,
                Ok("CIPHERFINAL_ERROR") => false,
                Ok(other) => return Err(format!("{}: unknown Result {other}", rec.label())),
            };
            let aead =
                ChaCha20Poly1305::with_backend(&rec.bytes("Key")?, backend).map_err(key_err)?;
            aead_vector(
                rec,
                &aead,
                &rec.bytes("IV")?,
                &rec.bytes("AAD")?,
                &rec.bytes("Plaintext")?,
                &rec.bytes("Ciphertext")?,
                &rec.bytes("Tag")?,
                valid,
            )?;
            stream_vector(
                rec,
                &aead,
                &rec.bytes("IV")?,
                &rec.bytes("AAD")?,
                &rec.bytes("Plaintext")?,
                &rec.bytes("Ciphertext")?,
                &rec.bytes("Tag")?,
                valid,
            )
        }
        (Kind::Extra, other) => Err(format!("{}: unknown section {other}", rec.label())),
    }
}

fn run_file(spec: &FileSpec, backend: Backend) -> Result<(), String> {
    let recs = read(spec)?;
    let mut failures = Vec::new();
    for rec in &recs {
        if !spec.per_backend && backend != Backend::Soft {
            continue;
        }
        // Backend-independent sections of the extra file run on `soft` only.
        if spec.kind == Kind::Extra
            && matches!(rec.section.as_str(), "POLY1305" | "HCHACHA20")
            && backend != Backend::Soft
        {
            continue;
        }
        if let Err(e) = run_record(spec.kind, rec, backend) {
            failures.push(e);
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} vectors of {} failed on {backend}:\n{}",
            failures.len(),
            recs.len(),
            spec.path,
            failures.join("\n")
        ))
    }
}

/// The folder holds exactly the files of [`FILES`].
fn inventory() -> Result<(), String> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeSet<String>) -> Result<(), String> {
        for entry in std::fs::read_dir(at).map_err(|e| format!("{}: {e}", at.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else {
                let rel = path.strip_prefix(root).map_err(|e| e.to_string())?;
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut have = BTreeSet::new();
    walk(&dir(), &dir(), &mut have)?;
    let want: BTreeSet<String> = FILES.iter().map(|f| f.path.to_string()).collect();
    if have == want {
        Ok(())
    } else {
        Err(format!(
            "vectors/chacha20poly1305 holds {have:?}, expected {want:?}"
        ))
    }
}

fn parser_self_test() -> Result<(), String> {
    let ok = parse("# c\n[S]\nCOUNT = 0\nKEY= 00\nIN = \"ab\"\r\n\nCOUNT = 1\nKEY = 01\n")?;
    if ok.len() != 2 || ok[0].bytes("IN")? != b"ab" || ok[1].bytes("KEY")? != [1] {
        return Err(format!("parser misread a good file: {ok:?}"));
    }
    for bad in [
        "KEY = 00\n",
        "COUNT = 0\nKEY = 00\nKEY = 01\n",
        "COUNT = 0\nCOUNT = 2\n",
        "COUNT = 0\nnonsense\n",
        "COUNT = 5\n",
    ] {
        if parse(bad).is_ok() {
            return Err(format!("parser accepted {bad:?}"));
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(Algorithm::ChaCha20Poly1305);

    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::ChaCha20Poly1305, &backends));
    common::announce(&preamble, args.list);

    let mut trials = vec![
        Trial::test("harness::vector_inventory", || {
            inventory().map_err(Failed::from)
        }),
        Trial::test("harness::parser_is_strict", || {
            parser_self_test().map_err(Failed::from)
        }),
    ];
    for spec in FILES {
        for (backend, runnable) in &backends {
            if !spec.per_backend && *backend != Backend::Soft {
                continue;
            }
            let backend = *backend;
            let spec = spec.clone();
            let name = spec.path.trim_end_matches(".txt").to_string();
            trials.push(
                Trial::test(format!("kat::{name}::{backend}"), move || {
                    run_file(&spec, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
