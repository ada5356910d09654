//! Known-answer tests: every vector of every vendored AES vector file, on
//! every backend forced by name, one trial per file and backend
//! (`kat::ECBGFSbox128::aesni`).
//!
//! Backends this (masked) CPU cannot run still get their trials, marked
//! ignored, and a line at the start says which backend was skipped and why.
//! Every file's vector count is checked against the expected total, and the
//! vector folders are checked to hold exactly the expected files, so that a
//! parser or layout surprise cannot quietly run fewer vectors.

mod common;

use common::{Direction, Vector, first_difference, to_hex};
use hwcrypt::Backend;
use hwcrypt::aes::{Aes, CounterWidth};
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Ecb,
    Cbc,
    Cfb8,
    Cfb128,
    Ofb,
    Ctr,
}

/// One vendored vector file and how many vectors it must hold.
#[derive(Clone, Debug)]
struct FileSpec {
    /// Path below `tests/vectors/aes/`.
    path: String,
    /// Trial name part, e.g. `ECBGFSbox128`.
    name: String,
    mode: Mode,
    /// Every key in the file is this long (`None`: mixed sizes).
    key_len: Option<usize>,
    encrypt: usize,
    decrypt: usize,
}

/// Sub-folders of `tests/vectors/aes` whose files this binary runs.
const USED_DIRS: [&str; 5] = ["CBC", "CFB", "CTR", "ECB", "OFB"];
/// Sub-folders knowingly not run, with why.
const UNUSED_DIRS: [(&str, &str); 3] = [
    ("GCM", "run by kat_gcm"),
    ("XTS", "run by kat_xts"),
    ("XTS-IEEE", "run by kat_xts"),
];

/// Every vector file, with its expected (encrypt, decrypt) counts: the AESAVS
/// known-answer and MMT files of NIST CAVP for each block mode, and the RFC
/// 3686 CTR vectors as shipped by pyca's `cryptography_vectors`, plus the
/// NIST SP 800-38A CTR examples.
fn file_specs() -> Vec<FileSpec> {
    let mut specs = Vec::new();
    let modes = [
        ("ECB", "ECB", Mode::Ecb),
        ("CBC", "CBC", Mode::Cbc),
        ("CFB", "CFB8", Mode::Cfb8),
        ("CFB", "CFB128", Mode::Cfb128),
        ("OFB", "OFB", Mode::Ofb),
    ];
    // Vectors per key size (128, 192, 256) in each of [ENCRYPT] and [DECRYPT].
    let kinds: [(&str, [usize; 3]); 5] = [
        ("GFSbox", [7, 6, 5]),
        ("KeySbox", [21, 24, 16]),
        ("MMT", [10, 10, 10]),
        ("VarKey", [128, 192, 256]),
        ("VarTxt", [128, 128, 128]),
    ];
    for (dir, prefix, mode) in modes {
        for (kind, counts) in kinds {
            for (bits, n) in [128, 192, 256].into_iter().zip(counts) {
                let name = format!("{prefix}{kind}{bits}");
                specs.push(FileSpec {
                    path: format!("{dir}/{name}.rsp"),
                    name,
                    mode,
                    key_len: Some(bits / 8),
                    encrypt: n,
                    decrypt: n,
                });
            }
        }
    }
    for bits in [128, 192, 256] {
        let name = format!("aes-{bits}-ctr");
        specs.push(FileSpec {
            path: format!("CTR/{name}.txt"),
            name,
            mode: Mode::Ctr,
            key_len: Some(bits / 8),
            encrypt: 3,
            decrypt: 0,
        });
    }
    // NIST SP 800-38A F.5.1-F.5.6, transcribed (not in the package; see SOURCES.md).
    specs.push(FileSpec {
        path: "CTR/SP800-38A-F5.txt".into(),
        name: "SP800-38A-F5".into(),
        mode: Mode::Ctr,
        key_len: None,
        encrypt: 3,
        decrypt: 3,
    });
    specs
}

fn aes_dir() -> PathBuf {
    common::vectors_dir().join("aes")
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(hwcrypt::registry::Algorithm::Aes);

    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(
        hwcrypt::registry::Algorithm::Aes,
        &backends,
    ));
    for (dir, why) in UNUSED_DIRS {
        let n = std::fs::read_dir(aes_dir().join(dir))
            .map(|d| d.count())
            .unwrap_or(0);
        preamble.push(format!("not run: vectors/aes/{dir} ({n} entries): {why}"));
    }
    common::announce(&preamble, args.list);

    let mut trials = vec![
        Trial::test("harness::cpu_features_usable", || {
            hwcrypt::cpu::features()
                .map(|_| ())
                .map_err(|e| Failed::from(format!("every backend is unusable: {e}")))
        }),
        Trial::test("harness::vector_inventory", || {
            inventory().map_err(Failed::from)
        }),
        Trial::test("harness::parser_is_strict", || {
            parser_self_test().map_err(Failed::from)
        }),
    ];

    for spec in file_specs() {
        for (backend, runnable) in &backends {
            let spec = spec.clone();
            let backend = *backend;
            trials.push(
                Trial::test(format!("kat::{}::{backend}", spec.name), move || {
                    run_file(&spec, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The vector folders hold exactly the files of [`file_specs`] (so none is
/// silently left out), and nothing unexpected.
fn inventory() -> Result<(), String> {
    let specs = file_specs();
    let want: BTreeSet<String> = specs.iter().map(|s| s.path.clone()).collect();
    let mut have = BTreeSet::new();
    let root = aes_dir();
    let entries = std::fs::read_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let dir = entry.file_name().to_string_lossy().into_owned();
        if UNUSED_DIRS.iter().any(|(d, _)| *d == dir) {
            continue;
        }
        if !USED_DIRS.contains(&dir.as_str()) {
            return Err(format!(
                "unexpected entry vectors/aes/{dir}: run its vectors or list it in UNUSED_DIRS"
            ));
        }
        for file in std::fs::read_dir(entry.path()).map_err(|e| e.to_string())? {
            let file = file.map_err(|e| e.to_string())?;
            have.insert(format!("{dir}/{}", file.file_name().to_string_lossy()));
        }
    }
    let missing: Vec<_> = want.difference(&have).collect();
    let extra: Vec<_> = have.difference(&want).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(format!(
            "vector files missing: {missing:?}; present but not run: {extra:?}"
        ));
    }
    let total: usize = specs.iter().map(|s| s.encrypt + s.decrypt).sum();
    if total != 10_705 {
        return Err(format!("expected totals add up to {total}, not 10705"));
    }
    Ok(())
}

/// The parser accepts CRLF and rejects what it does not understand.
fn parser_self_test() -> Result<(), String> {
    let good = "# comment\r\n\r\n[ENCRYPT]\r\n\r\nCOUNT = 0\r\nKEY = 00\r\nIV = 0102\r\n\
                PLAINTEXT = aa\r\nCIPHERTEXT = BB\r\n\r\nCOUNT = 1\r\nKEY = 01\r\n\
                PLAINTEXT = \r\nCIPHERTEXT = \r\n[DECRYPT]\r\nCOUNT = 0\r\nKEY = 02\r\n\
                CIPHERTEXT = cc\r\nPLAINTEXT = dd\r\n";
    let v = common::parse_vectors(good)?;
    let ok = v.len() == 3
        && v[0].direction == Direction::Encrypt
        && v[0].iv.as_deref() == Some(&[1, 2][..])
        && v[0].plaintext == [0xaa]
        && v[0].ciphertext == [0xbb]
        && v[1].plaintext.is_empty()
        && v[1].iv.is_none()
        && v[2].direction == Direction::Decrypt
        && v[2].key == [2]
        && v[2].plaintext == [0xdd];
    if !ok {
        return Err(format!("parsed the good sample wrongly: {v:?}"));
    }
    let bad = [
        ("unknown section", "[ENCRYPT]\n[AES-128]\n"),
        ("field before section", "COUNT = 0\n"),
        ("field before COUNT", "[ENCRYPT]\nKEY = 00\n"),
        (
            "COUNT not from 0",
            "[ENCRYPT]\nCOUNT = 1\nKEY = 00\nPLAINTEXT = 00\nCIPHERTEXT = 00\n",
        ),
        (
            "unknown field",
            "[ENCRYPT]\nCOUNT = 0\nKEY = 00\nTAG = 00\n",
        ),
        (
            "repeated field",
            "[ENCRYPT]\nCOUNT = 0\nKEY = 00\nKEY = 00\n",
        ),
        (
            "missing CIPHERTEXT",
            "[ENCRYPT]\nCOUNT = 0\nKEY = 00\nPLAINTEXT = 00\n",
        ),
        ("bad hex", "[ENCRYPT]\nCOUNT = 0\nKEY = 0g\n"),
        ("odd hex", "[ENCRYPT]\nCOUNT = 0\nKEY = 000\n"),
        (
            "length mismatch",
            "[ENCRYPT]\nCOUNT = 0\nKEY = 00\nPLAINTEXT = 00\nCIPHERTEXT = 0000\n",
        ),
        ("not a field", "[ENCRYPT]\nCOUNT = 0\nKEY 00\n"),
    ];
    for (what, text) in bad {
        if let Ok(v) = common::parse_vectors(text) {
            return Err(format!("{what}: accepted {text:?} as {v:?}"));
        }
    }
    Ok(())
}

fn run_file(spec: &FileSpec, backend: Backend) -> Result<(), String> {
    let path = aes_dir().join(&spec.path);
    let vectors = common::read_vectors(&path)?;
    let (enc, dec) = common::count_directions(&vectors);
    if (enc, dec) != (spec.encrypt, spec.decrypt) {
        return Err(format!(
            "{}: {enc} encrypt and {dec} decrypt vectors, expected {} and {}",
            spec.path, spec.encrypt, spec.decrypt
        ));
    }
    for v in &vectors {
        let key_ok = match spec.key_len {
            Some(len) => v.key.len() == len,
            None => matches!(v.key.len(), 16 | 24 | 32),
        };
        if !key_ok {
            return Err(format!(
                "{} {}: {}-byte key, expected {:?}",
                spec.path,
                v.label(),
                v.key.len(),
                spec.key_len
            ));
        }
        check_vector(spec.mode, backend, v)
            .map_err(|e| format!("{} {} on {backend}: {e}", spec.path, v.label()))?;
    }
    Ok(())
}

fn cmp(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: {d}")),
    }
}

fn key_for(v: &Vector, backend: Backend) -> Result<Aes, String> {
    let aes = Aes::with_backend(&v.key, backend)
        .map_err(|e| format!("Aes::with_backend(key {}): {e}", to_hex(&v.key)))?;
    if aes.backend() != backend {
        return Err(format!("asked for {backend}, got {}", aes.backend()));
    }
    Ok(aes)
}

fn iv_of(v: &Vector) -> Result<&[u8], String> {
    v.iv.as_deref()
        .ok_or_else(|| "vector has no IV".to_string())
}

fn check_vector(mode: Mode, backend: Backend, v: &Vector) -> Result<(), String> {
    let aes = key_for(v, backend)?;
    match mode {
        Mode::Ecb => check_ecb(aes, v),
        Mode::Cbc => check_cbc(aes, v),
        Mode::Cfb8 | Mode::Cfb128 | Mode::Ofb => check_stream(mode, aes, v, CounterWidth::Full128),
        Mode::Ctr => {
            check_stream(mode, aes.clone(), v, CounterWidth::Full128)?;
            // No vector's counter wraps its low 32 bits, so the GCM-style
            // width must give the same keystream.
            check_stream(mode, aes.clone(), v, CounterWidth::Low32)
                .map_err(|e| format!("with CounterWidth::Low32: {e}"))?;
            check_ctr_seek(aes, v)
        }
    }
}

fn check_ecb(aes: Aes, v: &Vector) -> Result<(), String> {
    let (input, want) = v.io();
    let ecb = Ecb::new(aes.clone());
    let enc = v.direction == Direction::Encrypt;
    let mut buf = input.to_vec();
    if enc {
        ecb.encrypt(&mut buf)
    } else {
        ecb.decrypt(&mut buf)
    }
    .map_err(|e| format!("in place: {e}"))?;
    cmp("Ecb in place", &buf, want)?;
    let mut out = vec![0xa5; input.len()];
    if enc {
        ecb.encrypt_to(input, &mut out)
    } else {
        ecb.decrypt_to(input, &mut out)
    }
    .map_err(|e| format!("_to: {e}"))?;
    cmp("Ecb _to", &out, want)?;
    for (i, (block, want)) in input.chunks(16).zip(want.chunks(16)).enumerate() {
        let mut b: [u8; 16] = block.try_into().map_err(|_| "partial block".to_string())?;
        if enc {
            aes.encrypt_block(&mut b)
        } else {
            aes.decrypt_block(&mut b)
        }
        cmp(
            &format!(
                "Aes::{}_block on block {i}",
                if enc { "encrypt" } else { "decrypt" }
            ),
            &b,
            want,
        )?;
    }
    Ok(())
}

fn check_cbc(aes: Aes, v: &Vector) -> Result<(), String> {
    let (input, want) = v.io();
    let iv = iv_of(v)?;
    let enc = v.direction == Direction::Encrypt;
    let final_chain = if v.ciphertext.len() >= 16 {
        &v.ciphertext[v.ciphertext.len() - 16..]
    } else {
        iv
    };
    let run = |cbc: &mut Cbc, buf: &mut [u8]| {
        if enc {
            cbc.encrypt(buf)
        } else {
            cbc.decrypt(buf)
        }
    };
    let new = || Cbc::new(aes.clone(), iv).map_err(|e| format!("Cbc::new: {e}"));

    let mut cbc = new()?;
    let mut buf = input.to_vec();
    run(&mut cbc, &mut buf).map_err(|e| format!("in place: {e}"))?;
    cmp("Cbc in place", &buf, want)?;
    cmp(
        "Cbc chaining value after the message",
        &cbc.chaining_value(),
        final_chain,
    )?;

    let mut cbc = new()?;
    let mut out = vec![0x5a; input.len()];
    if enc {
        cbc.encrypt_to(input, &mut out)
    } else {
        cbc.decrypt_to(input, &mut out)
    }
    .map_err(|e| format!("_to: {e}"))?;
    cmp("Cbc _to", &out, want)?;

    // The message in two calls, split at every block boundary.
    for split in (0..=input.len()).step_by(16) {
        let mut cbc = new()?;
        let mut buf = input.to_vec();
        let (a, b) = buf.split_at_mut(split);
        run(&mut cbc, a).map_err(|e| format!("first call of split at {split}: {e}"))?;
        run(&mut cbc, b).map_err(|e| format!("second call of split at {split}: {e}"))?;
        cmp(
            &format!("Cbc in two calls split at byte {split}"),
            &buf,
            want,
        )?;
    }
    Ok(())
}

/// CFB8, CFB128, OFB or CTR as one stream object.
enum Stream {
    Cfb8(Cfb8),
    Cfb128(Cfb128),
    Ofb(Ofb),
    Ctr(Ctr),
}

impl Stream {
    fn new(mode: Mode, aes: Aes, iv: &[u8], width: CounterWidth) -> Result<Stream, String> {
        let r = match mode {
            Mode::Cfb8 => Cfb8::new(aes, iv).map(Stream::Cfb8),
            Mode::Cfb128 => Cfb128::new(aes, iv).map(Stream::Cfb128),
            Mode::Ofb => Ofb::new(aes, iv).map(Stream::Ofb),
            Mode::Ctr => Ctr::with_width(aes, iv, width).map(Stream::Ctr),
            Mode::Ecb | Mode::Cbc => unreachable!("not a stream mode"),
        };
        r.map_err(|e| format!("{mode:?}::new: {e}"))
    }

    fn run(&mut self, enc: bool, buf: &mut [u8]) {
        match self {
            Stream::Cfb8(c) if enc => c.encrypt(buf),
            Stream::Cfb8(c) => c.decrypt(buf),
            Stream::Cfb128(c) if enc => c.encrypt(buf),
            Stream::Cfb128(c) => c.decrypt(buf),
            Stream::Ofb(c) => c.apply_keystream(buf),
            Stream::Ctr(c) => c.apply_keystream(buf).expect("well inside the keystream"),
        }
    }

    fn run_to(&mut self, enc: bool, input: &[u8], output: &mut [u8]) -> hwcrypt::Result<()> {
        match self {
            Stream::Cfb8(c) if enc => c.encrypt_to(input, output),
            Stream::Cfb8(c) => c.decrypt_to(input, output),
            Stream::Cfb128(c) if enc => c.encrypt_to(input, output),
            Stream::Cfb128(c) => c.decrypt_to(input, output),
            Stream::Ofb(c) => c.apply_keystream_to(input, output),
            Stream::Ctr(c) => c.apply_keystream_to(input, output),
        }
    }
}

fn check_stream(mode: Mode, aes: Aes, v: &Vector, width: CounterWidth) -> Result<(), String> {
    let iv = iv_of(v)?;
    // CTR and OFB have no direction; run CTR files (encrypt-only) both ways.
    let directions: &[Direction] = if mode == Mode::Ctr {
        &[Direction::Encrypt, Direction::Decrypt]
    } else {
        std::slice::from_ref(&v.direction)
    };
    for &dir in directions {
        let (input, want) = match dir {
            Direction::Encrypt => (&v.plaintext[..], &v.ciphertext[..]),
            Direction::Decrypt => (&v.ciphertext[..], &v.plaintext[..]),
        };
        let enc = dir == Direction::Encrypt;
        let tag = format!("{mode:?} {dir:?}");

        let mut s = Stream::new(mode, aes.clone(), iv, width)?;
        let mut buf = input.to_vec();
        s.run(enc, &mut buf);
        cmp(&format!("{tag} in place"), &buf, want)?;

        let mut s = Stream::new(mode, aes.clone(), iv, width)?;
        let mut out = vec![0xc3; input.len()];
        s.run_to(enc, input, &mut out)
            .map_err(|e| format!("{tag} _to: {e}"))?;
        cmp(&format!("{tag} _to"), &out, want)?;

        // Byte by byte, alternating in-place and separate-buffer calls.
        let mut s = Stream::new(mode, aes.clone(), iv, width)?;
        let mut out = vec![0x3c; input.len()];
        for i in 0..input.len() {
            if i % 2 == 0 {
                out[i] = input[i];
                s.run(enc, &mut out[i..=i]);
            } else {
                s.run_to(enc, &input[i..=i], &mut out[i..=i])
                    .map_err(|e| format!("{tag} byte {i}: {e}"))?;
            }
        }
        cmp(&format!("{tag} one byte per call"), &out, want)?;

        // In two calls, split at every byte (with an empty call in the middle).
        for split in 0..=input.len() {
            let mut s = Stream::new(mode, aes.clone(), iv, width)?;
            let mut buf = input.to_vec();
            let (a, b) = buf.split_at_mut(split);
            s.run(enc, a);
            s.run(enc, &mut []);
            s.run(enc, b);
            cmp(
                &format!("{tag} in two calls split at byte {split}"),
                &buf,
                want,
            )?;
        }
    }
    Ok(())
}

/// CTR through `seek`: from every offset, on a fresh stream and on one that
/// has already been used past the end.
fn check_ctr_seek(aes: Aes, v: &Vector) -> Result<(), String> {
    let iv = iv_of(v)?;
    let (input, want) = (&v.plaintext[..], &v.ciphertext[..]);
    let mut used = Ctr::new(aes.clone(), iv).map_err(|e| e.to_string())?;
    let mut scratch = input.to_vec();
    used.apply_keystream(&mut scratch)
        .map_err(|e| e.to_string())?;
    for offset in 0..=input.len() {
        for (which, ctr) in [
            (
                "fresh",
                &mut Ctr::new(aes.clone(), iv).map_err(|e| e.to_string())?,
            ),
            ("used", &mut used),
        ] {
            ctr.seek(offset as u128);
            if ctr.position() != offset as u128 {
                return Err(format!(
                    "seek({offset}) on a {which} Ctr: position() = {}",
                    ctr.position()
                ));
            }
            let mut buf = input[offset..].to_vec();
            ctr.apply_keystream(&mut buf).map_err(|e| e.to_string())?;
            cmp(
                &format!("CTR seek({offset}) on a {which} Ctr"),
                &buf,
                &want[offset..],
            )?;
            if ctr.position() != input.len() as u128 {
                return Err(format!(
                    "after seek({offset}) and {} bytes on a {which} Ctr: position() = {}",
                    buf.len(),
                    ctr.position()
                ));
            }
        }
    }
    Ok(())
}
