//! The C2SP CCTV age test vectors (tests/data/cctv, see its README): every
//! vector of a recipient type hwcrypt-age implements must give the expected
//! outcome (success with the payload's SHA-256, or the expected kind of
//! failure, with the SHA-256 of what was released before it). All of the
//! set's recipient types are implemented (X25519, scrypt, mlkem768x25519);
//! an identity of another type would be counted as skipped.
//!
//! Each vector is also decrypted through the parallel path (threads 1 and 3)
//! which must agree on success and on the plaintext.

use hwcrypt_age::armor::decode_armor;
use hwcrypt_age::keys::parse_identity;
use hwcrypt_age::{Decryptor, Error, Identity, ScryptIdentity};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use zeroize::Zeroizing;

struct Vector {
    fields: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Vector {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, key: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

fn load(path: &Path) -> Vector {
    let raw = std::fs::read(path).unwrap();
    let split = raw.windows(2).position(|w| w == b"\n\n").unwrap();
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let fields = head
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(": ").unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect::<Vec<_>>();
    let mut body = raw[split + 2..].to_vec();
    let v = Vector {
        fields,
        body: Vec::new(),
    };
    if v.get("compressed") == Some("zlib") {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(&body[..])
            .read_to_end(&mut out)
            .unwrap();
        body = out;
    }
    Vector { body, ..v }
}

fn kind(err: &Error) -> &'static str {
    match err {
        Error::Armor(_) => "armor failure",
        Error::Header(_) | Error::WorkFactor { .. } => "header failure",
        Error::HeaderMac => "HMAC failure",
        // A passphrase that unwraps nothing is the vectors' "no match".
        Error::NoMatch | Error::Passphrase => "no match",
        Error::Payload(_) => "payload failure",
        Error::Key(_) | Error::Io(_) => "other",
        _ => "other",
    }
}

/// Decrypts a vector; returns the outcome and the plaintext released.
fn run(v: &Vector, identities: &[&dyn Identity], threads: Option<usize>) -> (String, Vec<u8>) {
    let mut released = Vec::new();
    let bytes = if v.get("armored") == Some("yes") {
        match decode_armor(&v.body) {
            Ok(b) => b,
            Err(e) => return (kind(&e).into(), released),
        }
    } else {
        v.body.clone()
    };
    let dec = match Decryptor::new(&bytes[..]) {
        Ok(d) => d,
        Err(e) => return (kind(&e).into(), released),
    };
    let outcome = match threads {
        None => dec.decrypt(identities).and_then(|mut r| {
            r.read_to_end(&mut released).map_err(Error::from_io)?;
            Ok(())
        }),
        Some(t) => dec
            .decrypt_parallel(identities, &mut released, t)
            .map(|_| ()),
    };
    match outcome {
        Ok(()) => ("success".into(), released),
        Err(e) => (kind(&e).into(), released),
    }
}

#[test]
fn cctv_age_vectors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cctv");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.contains('.') && n != "LICENSE")
        .collect();
    names.sort();
    let (mut passed, mut failed) = (0, Vec::new());
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    for name in &names {
        let v = load(&dir.join(name));
        let mut identities: Vec<Box<dyn Identity>> = Vec::new();
        let mut unsupported = None;
        for id in v.all("identity") {
            match parse_identity(id) {
                Some(Ok(i)) => identities.push(i),
                None => unsupported = Some(id.split('1').next().unwrap_or(id).to_owned()),
                Some(Err(e)) => panic!("{name}: identity {e}"),
            }
        }
        for p in v.all("passphrase") {
            identities.push(Box::new(ScryptIdentity::new(Zeroizing::new(p.to_owned()))));
        }
        if let Some(t) = unsupported {
            *skipped.entry(t).or_default() += 1;
            continue;
        }
        let ids: Vec<&dyn Identity> = identities.iter().map(|b| b.as_ref()).collect();
        let expect = v.get("expect").unwrap();
        let (got, released) = run(&v, &ids, None);
        let mut problems = Vec::new();
        if got != expect {
            problems.push(format!("expected {expect}, got {got}"));
        }
        if let Some(hash) = v.get("payload") {
            let h = hex::encode(Sha256::digest(&released));
            if h != hash {
                problems.push(format!("payload hash {h} != {hash}"));
            }
        }
        // The parallel path: the same verdict on success, the same plaintext.
        for t in [1, 3] {
            let (pgot, preleased) = run(&v, &ids, Some(t));
            if (pgot == "success") != (expect == "success") {
                problems.push(format!("parallel({t}): {pgot}"));
            }
            if expect == "success" && preleased != released {
                problems.push(format!("parallel({t}): different plaintext"));
            }
        }
        if problems.is_empty() {
            passed += 1;
        } else {
            failed.push(format!("{name}: {}", problems.join("; ")));
        }
    }
    let skipped_total: usize = skipped.values().sum();
    println!("CCTV age vectors: {} files", names.len());
    for (t, n) in &skipped {
        println!("  skipped {n} ({t}: not implemented)");
    }
    for f in &failed {
        println!("  FAILED {f}");
    }
    println!(
        "cctv: {passed} passed, {} failed, {skipped_total} skipped",
        failed.len()
    );
    assert!(failed.is_empty(), "{} CCTV vectors failed", failed.len());
    assert_eq!(
        skipped_total, 0,
        "every recipient type of the set is implemented"
    );
    assert_eq!(names.len(), 143, "the vendored set has 143 vectors");
}
