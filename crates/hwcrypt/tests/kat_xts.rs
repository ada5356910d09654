//! Known-answer tests for AES-XTS: every vector of the four NIST CAVP
//! `XTSGenAES*.rsp` files (both tweak formats) and the IEEE 1619-2007 Annex B
//! vectors, on every backend forced by name, one trial per file and backend
//! (`kat::XTSGenAES128-hexstr::vaes-avx2`).
//!
//! CAVP vectors whose data unit is not a whole number of bytes
//! (`DataUnitLen` 130, 140, 250 bits) cannot be expressed in a byte API: they
//! are counted, announced at the start, and each file's count is checked, so
//! nothing is skipped silently. Every vector runs in place, to a separate
//! garbage-filled buffer, through the bulk API (one unit), and in both
//! directions (the vector's own, and back).

mod common;

use common::{first_difference, unhex, unhex16};
use hwcrypt::Backend;
use hwcrypt::modes::{Xts, sector_tweak};
use hwcrypt::registry::Algorithm;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::PathBuf;

/// One vendored CAVP file.
#[derive(Clone, Debug)]
struct CavpFile {
    /// Below `tests/vectors/aes/XTS/`.
    path: &'static str,
    name: &'static str,
    /// Key length in bytes (both halves).
    key_len: usize,
    /// Tweaks given as `DataUnitSeqNumber` (decimal) instead of `i` (hex).
    seqno: bool,
    /// Vectors in the file (encrypt + decrypt).
    total: usize,
    /// Of which the data unit is not a whole number of bytes.
    non_byte: usize,
}

const CAVP: [CavpFile; 4] = [
    CavpFile {
        path: "tweak-128hexstr/XTSGenAES128.rsp",
        name: "XTSGenAES128-hexstr",
        key_len: 32,
        seqno: false,
        total: 1000,
        non_byte: 200,
    },
    CavpFile {
        path: "tweak-128hexstr/XTSGenAES256.rsp",
        name: "XTSGenAES256-hexstr",
        key_len: 64,
        seqno: false,
        total: 1000,
        non_byte: 400,
    },
    CavpFile {
        path: "tweak-dataunitseqno/XTSGenAES128.rsp",
        name: "XTSGenAES128-seqno",
        key_len: 32,
        seqno: true,
        total: 1000,
        non_byte: 200,
    },
    CavpFile {
        path: "tweak-dataunitseqno/XTSGenAES256.rsp",
        name: "XTSGenAES256-seqno",
        key_len: 64,
        seqno: true,
        total: 1000,
        non_byte: 400,
    },
];

const IEEE_FILE: &str = "XTS-IEEE/IEEE1619-2007-AnnexB.txt";

fn aes_dir() -> PathBuf {
    common::vectors_dir().join("aes")
}

/// One XTS vector, whatever its source.
#[derive(Clone, Debug, Default)]
struct Vector {
    label: String,
    encrypt: bool,
    /// Data unit length in bits.
    bits: usize,
    key: Vec<u8>,
    tweak: [u8; 16],
    /// The sector number, where the source gives one.
    sector: Option<u64>,
    pt: Vec<u8>,
    ct: Vec<u8>,
}

/// Parses a CAVP XTS file strictly: sections, then `COUNT` blocks with
/// exactly the expected fields.
fn parse_cavp(spec: &CavpFile, text: &str) -> Result<Vec<Vector>, String> {
    let mut out: Vec<Vector> = Vec::new();
    let mut encrypt = None;
    let tweak_field = if spec.seqno { "DataUnitSeqNumber" } else { "i" };
    // The fields of the open vector (None: no vector open).
    let mut seen: Option<Vec<&str>> = None;
    let finish = |v: &mut Vec<Vector>, seen: &mut Option<Vec<&str>>| -> Result<(), String> {
        if let (Some(last), Some(fields)) = (v.last(), seen.take())
            && fields.len() != 5
        {
            return Err(format!("{}: fields {fields:?}", last.label));
        }
        Ok(())
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line {
            "[ENCRYPT]" | "[DECRYPT]" => {
                finish(&mut out, &mut seen)?;
                encrypt = Some(line == "[ENCRYPT]");
                continue;
            }
            _ => {}
        }
        let (name, value) = line
            .split_once(" = ")
            .ok_or_else(|| format!("line {}: not a field: {line:?}", n + 1))?;
        let dir = encrypt.ok_or_else(|| format!("line {}: field before a section", n + 1))?;
        if name == "COUNT" {
            finish(&mut out, &mut seen)?;
            out.push(Vector {
                label: format!(
                    "{} COUNT={value} (line {})",
                    if dir { "ENCRYPT" } else { "DECRYPT" },
                    n + 1
                ),
                encrypt: dir,
                ..Vector::default()
            });
            seen = Some(Vec::new());
            continue;
        }
        let (Some(v), Some(seen)) = (out.last_mut(), seen.as_mut()) else {
            return Err(format!("line {}: field before COUNT", n + 1));
        };
        let known = ["DataUnitLen", "Key", tweak_field, "PT", "CT"];
        let Some(&field) = known.iter().find(|f| **f == name) else {
            return Err(format!("line {}: unknown field {name:?}", n + 1));
        };
        if seen.contains(&field) {
            return Err(format!("line {}: repeated {name}", n + 1));
        }
        seen.push(field);
        let bad = |e: &dyn std::fmt::Display| format!("line {}: {name}: {e}", n + 1);
        match field {
            "DataUnitLen" => v.bits = value.parse().map_err(|e| bad(&e))?,
            "Key" => v.key = unhex(value),
            "i" => v.tweak = unhex16(value),
            "DataUnitSeqNumber" => {
                let s: u64 = value.parse().map_err(|e| bad(&e))?;
                v.sector = Some(s);
                v.tweak = sector_tweak(s);
            }
            "PT" => v.pt = unhex(value),
            _ => v.ct = unhex(value),
        }
    }
    finish(&mut out, &mut seen)?;
    for v in &out {
        if v.key.len() != spec.key_len
            || v.pt.len() != v.ct.len()
            || v.pt.len() != v.bits.div_ceil(8)
        {
            return Err(format!(
                "{}: key {} bytes, PT {}, CT {}, DataUnitLen {}",
                v.label,
                v.key.len(),
                v.pt.len(),
                v.ct.len(),
                v.bits
            ));
        }
    }
    Ok(out)
}

/// Parses the transcribed IEEE file (`VECTOR`, `KEY1`, `KEY2`, `TWEAK`,
/// `PTX`, `CTX`).
fn parse_ieee(text: &str) -> Result<Vec<Vector>, String> {
    let mut out: Vec<Vector> = Vec::new();
    let mut k1 = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line
            .split_once(" = ")
            .ok_or_else(|| format!("line {}: not a field: {line:?}", n + 1))?;
        if name == "VECTOR" {
            out.push(Vector {
                label: format!("vector {value} (line {})", n + 1),
                encrypt: true,
                ..Vector::default()
            });
            continue;
        }
        let v = out.last_mut().ok_or("field before VECTOR")?;
        match name {
            "KEY1" => k1 = unhex(value),
            "KEY2" => v.key = [k1.clone(), unhex(value)].concat(),
            "TWEAK" => {
                v.tweak = unhex16(value);
                if v.tweak[8..] == [0; 8] {
                    v.sector = Some(u64::from_le_bytes(v.tweak[..8].try_into().unwrap()));
                }
            }
            "PTX" => v.pt = unhex(value),
            "CTX" => {
                v.ct = unhex(value);
                v.bits = 8 * v.ct.len();
            }
            _ => return Err(format!("line {}: unknown field {name}", n + 1)),
        }
    }
    Ok(out)
}

fn cmp(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: {d}")),
    }
}

/// Runs one vector on `xts` in every call shape, in its direction and back.
fn check(xts: &Xts, v: &Vector) -> Result<(), String> {
    for encrypt in [v.encrypt, !v.encrypt] {
        let (input, want) = if encrypt {
            (&v.pt, &v.ct)
        } else {
            (&v.ct, &v.pt)
        };
        let dir = if encrypt { "encrypt" } else { "decrypt" };
        let mut buf = input.clone();
        if encrypt {
            xts.encrypt(&v.tweak, &mut buf)
        } else {
            xts.decrypt(&v.tweak, &mut buf)
        }
        .map_err(|e| format!("{dir}: {e}"))?;
        cmp(&format!("{dir} in place"), &buf, want)?;
        let mut out = vec![0xa5; input.len()];
        if encrypt {
            xts.encrypt_to(&v.tweak, input, &mut out)
        } else {
            xts.decrypt_to(&v.tweak, input, &mut out)
        }
        .map_err(|e| format!("{dir}_to: {e}"))?;
        cmp(&format!("{dir}_to"), &out, want)?;
        if let Some(sector) = v.sector {
            let mut buf = input.clone();
            if encrypt {
                xts.encrypt_sector(sector, &mut buf)
            } else {
                xts.decrypt_sector(sector, &mut buf)
            }
            .map_err(|e| format!("{dir}_sector: {e}"))?;
            cmp(&format!("{dir}_sector"), &buf, want)?;
            let mut out = vec![0x5a; input.len()];
            if encrypt {
                xts.encrypt_units_to(input.len(), sector, input, &mut out)
            } else {
                xts.decrypt_units_to(input.len(), sector, input, &mut out)
            }
            .map_err(|e| format!("{dir}_units_to: {e}"))?;
            cmp(&format!("{dir}_units_to"), &out, want)?;
        }
    }
    Ok(())
}

fn make(key: &[u8], backend: Backend) -> Result<Xts, String> {
    let xts = Xts::with_backend(key, backend).map_err(|e| format!("Xts::with_backend: {e}"))?;
    if xts.backend() != backend {
        return Err(format!("asked for {backend}, got {}", xts.backend()));
    }
    Ok(xts)
}

fn run_cavp(spec: &CavpFile, backend: Backend) -> Result<(), String> {
    let path = aes_dir().join("XTS").join(spec.path);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let vectors = parse_cavp(spec, &text).map_err(|e| format!("{}: {e}", spec.path))?;
    let non_byte = vectors.iter().filter(|v| v.bits % 8 != 0).count();
    if (vectors.len(), non_byte) != (spec.total, spec.non_byte) {
        return Err(format!(
            "{}: {} vectors of which {non_byte} not whole bytes, expected {} and {}",
            spec.path,
            vectors.len(),
            spec.total,
            spec.non_byte
        ));
    }
    for v in vectors.iter().filter(|v| v.bits % 8 == 0) {
        let xts = make(&v.key, backend)?;
        check(&xts, v).map_err(|e| format!("{} {} on {backend}: {e}", spec.path, v.label))?;
    }
    Ok(())
}

fn run_ieee(backend: Backend) -> Result<(), String> {
    let path = aes_dir().join(IEEE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let vectors = parse_ieee(&text)?;
    let numbers: Vec<&str> = vectors
        .iter()
        .map(|v| v.label.split(' ').nth(1).unwrap_or(""))
        .collect();
    let want = [
        "1", "2", "3", "4", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19",
    ];
    if numbers != want {
        return Err(format!("IEEE vectors {numbers:?}, expected {want:?}"));
    }
    for v in &vectors {
        let (k1, k2) = v.key.split_at(v.key.len() / 2);
        if k1 == k2 {
            // Vector 1: all-zero keys, valid in 2007, rejected since 2018.
            match Xts::with_backend(&v.key, backend) {
                Err(hwcrypt::Error::XtsEqualKeyHalves) => continue,
                other => return Err(format!("{}: equal halves gave {other:?}", v.label)),
            }
        }
        let xts = make(&v.key, backend)?;
        check(&xts, v).map_err(|e| format!("IEEE {} on {backend}: {e}", v.label))?;
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(Algorithm::AesXts);
    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::AesXts, &backends));
    let non_byte: usize = CAVP.iter().map(|f| f.non_byte).sum();
    let total: usize = CAVP.iter().map(|f| f.total).sum();
    preamble.push(format!(
        "not run: {non_byte} of the {total} CAVP XTS vectors (DataUnitLen 130, 140 or 250 bits: \
         not whole bytes, which this byte-oriented API cannot express)"
    ));
    common::announce(&preamble, args.list);

    let mut trials = Vec::new();
    for (backend, runnable) in &backends {
        let backend = *backend;
        for spec in CAVP {
            trials.push(
                Trial::test(format!("kat::{}::{backend}", spec.name), move || {
                    run_cavp(&spec, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
        trials.push(
            Trial::test(format!("kat::IEEE1619-2007-AnnexB::{backend}"), move || {
                run_ieee(backend).map_err(Failed::from)
            })
            .with_ignored_flag(runnable.is_err()),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
