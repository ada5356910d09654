//! Project Wycheproof's adversarial vectors (AES-GCM, ChaCha20-Poly1305,
//! XChaCha20-Poly1305, AES-CBC-PKCS5, AES-XTS; vendored under
//! `tests/vectors/wycheproof/`, see SOURCES.md there) on every backend,
//! forced by name: one trial per file and backend
//! (`wycheproof::aes_gcm::vaes-avx2`).
//!
//! - `valid` cases must seal (encrypt) to exactly the vector's ciphertext and
//!   tag, and open (decrypt) back to the message, in place and to a separate
//!   buffer.
//! - `invalid` cases must be refused: either the tag (padding) check fails,
//!   with the buffer zeroed (`refused`), or the parameters are rejected up
//!   front, e.g. a nonce length the algorithm does not take (`parameter
//!   error`), with no plaintext in the output. Each trial prints how many of
//!   each kind, and which errors.
//! - `acceptable` cases (none in the current files) are run and reported with
//!   what hwcrypt did; they cannot fail the trial.

mod common;

use hwcrypt::aead::Aead;
use hwcrypt::aes::Aes;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;
use hwcrypt::modes::{Cbc, Xts};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a vendored file holds and how its cases are run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Gcm,
    ChaCha,
    XChaCha,
    CbcPkcs5,
    Xts,
}

/// One vendored file: its name, kind, and the number of tests it must hold
/// (so that a file that parses to fewer cases fails instead of shrinking).
const FILES: [(&str, Kind, usize); 5] = [
    ("aes_gcm_test.json", Kind::Gcm, 316),
    ("chacha20_poly1305_test.json", Kind::ChaCha, 325),
    ("xchacha20_poly1305_test.json", Kind::XChaCha, 315),
    ("aes_cbc_pkcs5_test.json", Kind::CbcPkcs5, 216),
    ("aes_xts_test.json", Kind::Xts, 123),
];

impl Kind {
    fn algorithm(self) -> Algorithm {
        match self {
            Kind::Gcm => Algorithm::AesGcm,
            Kind::ChaCha | Kind::XChaCha => Algorithm::ChaCha20Poly1305,
            Kind::CbcPkcs5 => Algorithm::Aes,
            Kind::Xts => Algorithm::AesXts,
        }
    }
}

/// One Wycheproof test case (the fields the AEAD and IND-CPA schemas use).
#[derive(Debug)]
struct Case {
    id: u64,
    comment: String,
    flags: Vec<String>,
    result: String,
    key: Vec<u8>,
    iv: Vec<u8>,
    aad: Vec<u8>,
    msg: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

impl Case {
    fn label(&self) -> String {
        format!(
            "tcId {} ({}; {})",
            self.id,
            self.comment,
            self.flags.join(",")
        )
    }
}

fn field<'a>(v: &'a Value, name: &str) -> Result<&'a Value, String> {
    v.get(name).ok_or_else(|| format!("missing field {name:?}"))
}

fn hex_field(v: &Value, name: &str, required: bool) -> Result<Vec<u8>, String> {
    match v.get(name) {
        None if !required => Ok(Vec::new()),
        None => Err(format!("missing field {name:?}")),
        Some(s) => {
            let s = s
                .as_str()
                .ok_or_else(|| format!("{name} is not a string"))?;
            hex::decode(s).map_err(|e| format!("{name}: bad hex: {e}"))
        }
    }
}

/// Reads a vendored file and checks its test count.
fn load(file: &str, want_tests: usize) -> Result<Vec<Case>, String> {
    let path = common::vectors_dir().join("wycheproof").join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let declared = field(&json, "numberOfTests")?.as_u64().unwrap_or(0) as usize;
    let mut cases = Vec::new();
    let groups = field(&json, "testGroups")?
        .as_array()
        .ok_or("testGroups is not an array")?;
    for group in groups {
        let tests = field(group, "tests")?
            .as_array()
            .ok_or("tests is not an array")?;
        for t in tests {
            let case = (|| -> Result<Case, String> {
                Ok(Case {
                    id: field(t, "tcId")?.as_u64().ok_or("tcId")?,
                    comment: t
                        .get("comment")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    flags: t
                        .get("flags")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|f| f.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                    result: field(t, "result")?.as_str().ok_or("result")?.to_string(),
                    key: hex_field(t, "key", true)?,
                    iv: hex_field(t, "iv", true)?,
                    aad: hex_field(t, "aad", false)?,
                    msg: hex_field(t, "msg", true)?,
                    ct: hex_field(t, "ct", true)?,
                    tag: hex_field(t, "tag", false)?,
                })
            })()
            .map_err(|e| format!("{file}: test {t}: {e}"))?;
            if !matches!(case.result.as_str(), "valid" | "invalid" | "acceptable") {
                return Err(format!(
                    "{file}: tcId {}: result {:?}",
                    case.id, case.result
                ));
            }
            cases.push(case);
        }
    }
    if cases.len() != declared || cases.len() != want_tests {
        return Err(format!(
            "{file}: {} tests parsed, {declared} declared, {want_tests} expected",
            cases.len()
        ));
    }
    Ok(cases)
}

/// What hwcrypt did with one case.
#[derive(Debug)]
enum Outcome {
    /// Sealed/encrypted and opened/decrypted exactly as the vector says.
    Exact,
    /// Open (decrypt) refused by the tag or padding check, buffer zeroed.
    Refused,
    /// Rejected before any decryption: the error, e.g. `InvalidNonceLength`.
    ParameterError(String),
}

/// The error's variant name, without its fields.
fn variant(e: &Error) -> String {
    let d = format!("{e:?}");
    d.split([' ', '{', '(']).next().unwrap_or("").to_string()
}

/// Seals a buffer in place, returning the tag.
type SealFn<'a> = &'a dyn Fn(&mut [u8]) -> Result<Vec<u8>, Error>;
/// Opens a buffer in place under a tag.
type OpenFn<'a> = &'a dyn Fn(&mut [u8], &[u8]) -> Result<(), Error>;
/// Opens a ciphertext under a tag into a separate buffer.
type OpenToFn<'a> = &'a dyn Fn(&[u8], &[u8], &mut [u8]) -> Result<(), Error>;

/// Runs one AEAD case; `seal`/`open` are in place and detached.
fn run_aead(c: &Case, seal: SealFn, open: OpenFn, open_to: OpenToFn) -> Result<Outcome, String> {
    let expect_ok = c.result == "valid";
    // Open in place.
    let mut buf = c.ct.clone();
    let opened = open(&mut buf, &c.tag);
    // Open to a separate, garbage-filled buffer.
    let mut out = vec![0xa5; c.ct.len()];
    let opened_to = open_to(&c.ct, &c.tag, &mut out);
    match (&opened, &opened_to) {
        (Ok(()), Ok(())) => {
            if c.result == "invalid" {
                return Err(format!(
                    "{}: invalid case opened (forgery accepted)",
                    c.label()
                ));
            }
            if buf != c.msg || out != c.msg {
                return Err(format!("{}: opened to the wrong plaintext", c.label()));
            }
        }
        (Err(Error::AuthenticationFailed), Err(Error::AuthenticationFailed)) => {
            if buf.iter().any(|&b| b != 0) || out.iter().any(|&b| b != 0) {
                return Err(format!("{}: refused but buffer not zeroed", c.label()));
            }
            if expect_ok {
                return Err(format!("{}: valid case refused", c.label()));
            }
            return Ok(Outcome::Refused);
        }
        (Err(e), Err(e2)) if variant(e) == variant(e2) => {
            // A parameter error: nothing may have been decrypted.
            if !c.msg.is_empty() && c.msg != c.ct && (buf == c.msg || out == c.msg) {
                return Err(format!("{}: {e}, but plaintext released", c.label()));
            }
            if expect_ok {
                return Err(format!("{}: valid case rejected: {e}", c.label()));
            }
            return Ok(Outcome::ParameterError(variant(e)));
        }
        (a, b) => {
            return Err(format!(
                "{}: in place {a:?}, to a separate buffer {b:?}",
                c.label()
            ));
        }
    }
    // It opened (valid or acceptable): sealing must reproduce it.
    let mut buf = c.msg.clone();
    let tag = seal(&mut buf).map_err(|e| format!("{}: seal: {e}", c.label()))?;
    if buf != c.ct || tag != c.tag {
        return Err(format!(
            "{}: sealed to {}/{} instead of {}/{}",
            c.label(),
            hex::encode(&buf),
            hex::encode(&tag),
            hex::encode(&c.ct),
            hex::encode(&c.tag)
        ));
    }
    Ok(Outcome::Exact)
}

fn run_case(kind: Kind, backend: Backend, c: &Case) -> Result<Outcome, String> {
    let key_err = |e: Error| format!("{}: key: {e}", c.label());
    match kind {
        Kind::Gcm => {
            let k = AesGcm::with_backend(&c.key, backend).map_err(key_err)?;
            let tag_len = c.tag.len();
            let seal = |buf: &mut [u8]| {
                let with = k.seal_in_place_detached_with(&c.iv, &c.aad, buf, tag_len)?;
                Ok(with.as_bytes().to_vec())
            };
            let open =
                |buf: &mut [u8], tag: &[u8]| k.open_in_place_detached_with(&c.iv, &c.aad, buf, tag);
            // The trait's separate-buffer form takes 12-byte nonces only;
            // other IV lengths go through the in-place `_with` form.
            let open_to = |ct: &[u8], tag: &[u8], out: &mut [u8]| {
                if c.iv.len() == 12 {
                    k.open_detached(&c.iv, &c.aad, ct, tag, out)
                } else {
                    out.copy_from_slice(ct);
                    k.open_in_place_detached_with(&c.iv, &c.aad, out, tag)
                }
            };
            let outcome = run_aead(c, &seal, &open, &open_to)?;
            if matches!(outcome, Outcome::Exact) && c.iv.len() == 12 && tag_len == 16 {
                // The trait's 12-byte-nonce form agrees.
                let mut buf = c.msg.clone();
                let tag = k
                    .seal_in_place_detached(&c.iv, &c.aad, &mut buf)
                    .map_err(|e| format!("{}: Aead::seal: {e}", c.label()))?;
                if buf != c.ct || tag[..] != c.tag[..] {
                    return Err(format!("{}: Aead::seal differs", c.label()));
                }
            }
            Ok(outcome)
        }
        Kind::ChaCha | Kind::XChaCha => {
            let k: Box<dyn AeadDyn> = if kind == Kind::ChaCha {
                Box::new(ChaCha20Poly1305::with_backend(&c.key, backend).map_err(key_err)?)
            } else {
                Box::new(XChaCha20Poly1305::with_backend(&c.key, backend).map_err(key_err)?)
            };
            let seal = |buf: &mut [u8]| k.seal(&c.iv, &c.aad, buf).map(|t| t.to_vec());
            let open = |buf: &mut [u8], tag: &[u8]| k.open(&c.iv, &c.aad, buf, tag);
            let open_to =
                |ct: &[u8], tag: &[u8], out: &mut [u8]| k.open_to(&c.iv, &c.aad, ct, tag, out);
            run_aead(c, &seal, &open, &open_to)
        }
        Kind::CbcPkcs5 => {
            let aes = Aes::with_backend(&c.key, backend).map_err(key_err)?;
            let mut cbc =
                Cbc::new(aes.clone(), &c.iv).map_err(|e| format!("{}: {e}", c.label()))?;
            match cbc.decrypt_padded(&c.ct) {
                Ok(msg) => {
                    if c.result == "invalid" {
                        return Err(format!("{}: invalid padding accepted", c.label()));
                    }
                    if msg != c.msg {
                        return Err(format!("{}: decrypted wrongly", c.label()));
                    }
                    let mut cbc = Cbc::new(aes, &c.iv).map_err(|e| e.to_string())?;
                    if cbc.encrypt_padded(&c.msg) != c.ct {
                        return Err(format!("{}: encrypted wrongly", c.label()));
                    }
                    Ok(Outcome::Exact)
                }
                Err(e) if c.result == "valid" => {
                    Err(format!("{}: valid case refused: {e}", c.label()))
                }
                Err(Error::BadPadding) => Ok(Outcome::Refused),
                Err(e) => Ok(Outcome::ParameterError(variant(&e))),
            }
        }
        Kind::Xts => {
            let xts = Xts::with_backend(&c.key, backend).map_err(key_err)?;
            // Wycheproof's XTS "iv" is the tweak's first bytes (8..=16),
            // zero-padded to a block.
            if c.iv.len() > 16 {
                return Err(format!("{}: tweak of {} bytes", c.label(), c.iv.len()));
            }
            let mut tweak = [0u8; 16];
            tweak[..c.iv.len()].copy_from_slice(&c.iv);
            let what = |e: Error| format!("{}: {e}", c.label());
            let mut out = vec![0xa5; c.msg.len()];
            let enc = xts.encrypt_to(&tweak, &c.msg, &mut out);
            if c.result != "valid" {
                return match enc {
                    Err(e) => Ok(Outcome::ParameterError(variant(&e))),
                    Ok(()) if out != c.ct => Ok(Outcome::Refused),
                    Ok(()) => Err(format!("{}: invalid case reproduced", c.label())),
                };
            }
            enc.map_err(what)?;
            let mut buf = c.ct.clone();
            xts.decrypt(&tweak, &mut buf).map_err(what)?;
            let mut inplace = c.msg.clone();
            xts.encrypt(&tweak, &mut inplace).map_err(what)?;
            if out != c.ct || inplace != c.ct || buf != c.msg {
                return Err(format!("{}: wrong result", c.label()));
            }
            Ok(Outcome::Exact)
        }
    }
}

/// ChaCha20-Poly1305 and XChaCha20-Poly1305 behind one object type (the
/// `Aead` trait has an associated constant, so it is not object safe).
trait AeadDyn {
    fn seal(&self, n: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16], Error>;
    fn open(&self, n: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), Error>;
    fn open_to(
        &self,
        n: &[u8],
        aad: &[u8],
        ct: &[u8],
        tag: &[u8],
        out: &mut [u8],
    ) -> Result<(), Error>;
}

impl<T: Aead> AeadDyn for T {
    fn seal(&self, n: &[u8], aad: &[u8], buf: &mut [u8]) -> Result<[u8; 16], Error> {
        self.seal_in_place_detached(n, aad, buf)
    }
    fn open(&self, n: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), Error> {
        self.open_in_place_detached(n, aad, buf, tag)
    }
    fn open_to(
        &self,
        n: &[u8],
        aad: &[u8],
        ct: &[u8],
        tag: &[u8],
        out: &mut [u8],
    ) -> Result<(), Error> {
        self.open_detached(n, aad, ct, tag, out)
    }
}

/// Runs every case of one file on one backend; prints one summary line.
fn run_file(file: &str, kind: Kind, want: usize, backend: Backend) -> Result<(), String> {
    let cases = load(file, want)?;
    let (mut exact, mut refused) = (0usize, 0usize);
    let mut params: BTreeMap<String, usize> = BTreeMap::new();
    let mut acceptable = Vec::new();
    let mut failures = Vec::new();
    for c in &cases {
        match run_case(kind, backend, c) {
            Ok(o) if c.result == "acceptable" => acceptable.push(format!("tcId {}: {o:?}", c.id)),
            Ok(Outcome::Exact) => exact += 1,
            Ok(Outcome::Refused) => refused += 1,
            Ok(Outcome::ParameterError(e)) => *params.entry(e).or_default() += 1,
            Err(e) if c.result == "acceptable" => acceptable.push(format!("tcId {}: {e}", c.id)),
            Err(e) => failures.push(e),
        }
    }
    if !failures.is_empty() {
        let n = failures.len();
        failures.truncate(10);
        return Err(format!(
            "{n} of {} cases failed:\n  {}",
            cases.len(),
            failures.join("\n  ")
        ));
    }
    let mut line = format!(
        "wycheproof {file} on {backend}: {} cases, {exact} valid exact, {refused} invalid refused (tag/padding check, buffer zeroed)",
        cases.len()
    );
    let p: usize = params.values().sum();
    let _ = write!(line, ", {p} invalid rejected as parameter errors");
    if p > 0 {
        let list: Vec<String> = params.iter().map(|(e, n)| format!("{e} x{n}")).collect();
        let _ = write!(line, " ({})", list.join(", "));
    }
    let _ = write!(line, ", {} acceptable", acceptable.len());
    if !acceptable.is_empty() {
        let _ = write!(line, " ({})", acceptable.join("; "));
    }
    println!("{line}");
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut preamble = vec![common::cpu_line()];
    let mut trials = Vec::new();
    for (file, kind, want) in FILES {
        let backends = common::backends(kind.algorithm());
        for line in common::skip_lines(kind.algorithm(), &backends) {
            if !preamble.contains(&line) {
                preamble.push(line);
            }
        }
        let short = file.trim_end_matches("_test.json");
        for (backend, runnable) in backends {
            trials.push(
                Trial::test(format!("wycheproof::{short}::{backend}"), move || {
                    run_file(file, kind, want, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    common::announce(&preamble, args.list);
    libtest_mimic::run(&args, trials).exit();
}
