//! AES-GCM: every vector of the six NIST CAVP GCM files on every backend
//! forced by name (`kat::gcmDecrypt128::aesni`), every backend against
//! `soft` on every length 0..=4096 and random larger ones
//! (`differential::aesni::AES-256`), and tamper tests (`tamper::aesni`).
//!
//! Backends that do not implement AES-GCM, or that this (masked) CPU cannot
//! run, still get their trials, marked ignored, and a line at the start says
//! which backend was skipped and why. Every file's vector and FAIL counts are
//! checked, so a parser surprise cannot quietly run fewer vectors. Every
//! vector also goes through [`AesGcmStream`] in uneven pieces.

mod common;

use common::{first_difference, to_hex, unhex};
use hwcrypt::aead::Aead;
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::{Rng, SeedableRng, rngs::StdRng};

/// One vector file: name (below `vectors/aes/GCM/`), whether it is a
/// decryption file, vectors and FAIL vectors it must hold.
const FILES: [(&str, bool, usize, usize); 6] = [
    ("gcmEncryptExtIV128", false, 7875, 0),
    ("gcmEncryptExtIV192", false, 7875, 0),
    ("gcmEncryptExtIV256", false, 7875, 0),
    ("gcmDecrypt128", true, 7875, 4011),
    ("gcmDecrypt192", true, 7875, 3978),
    ("gcmDecrypt256", true, 7875, 3919),
];

/// One GCM vector. Lengths in the group header are in bits.
#[derive(Clone, Debug, Default)]
struct Vector {
    line: usize,
    key_bits: usize,
    tag_bits: usize,
    key: Vec<u8>,
    iv: Vec<u8>,
    pt: Option<Vec<u8>>,
    aad: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
    fail: bool,
}

/// Parses the CAVP GCM format strictly: `[Keylen/IVlen/PTlen/AADlen/Taglen
/// = N]` group headers, records opened by `Count = N` (0, 1, 2, ... within a
/// group) with exactly the fields Key, IV, PT (or a bare `FAIL` line in
/// decryption files), AAD, CT and Tag, each of the length the header says.
fn parse(text: &str) -> Result<Vec<Vector>, String> {
    let mut out: Vec<Vector> = Vec::new();
    let mut header = [None::<usize>; 5];
    const NAMES: [&str; 5] = ["Keylen", "IVlen", "PTlen", "AADlen", "Taglen"];
    let mut cur: Option<Vector> = None;
    let mut next_count = 0;
    let finish = |v: Vector, header: &[Option<usize>; 5]| -> Result<Vector, String> {
        let h: Vec<usize> = header
            .iter()
            .map(|x| x.ok_or(format!("line {}: incomplete group header", v.line)))
            .collect::<Result<_, _>>()?;
        let bad = |what: &str| format!("line {}: {what}", v.line);
        if v.key.len() * 8 != h[0] || v.iv.len() * 8 != h[1] || v.aad.len() * 8 != h[3] {
            return Err(bad("key, IV or AAD length differs from the header"));
        }
        if v.ct.len() * 8 != h[2] || v.tag.len() * 8 != h[4] {
            return Err(bad("CT or Tag length differs from the header"));
        }
        match (&v.pt, v.fail) {
            (Some(pt), false) if pt.len() == v.ct.len() => {}
            (None, true) => {}
            _ => return Err(bad("needs exactly one of PT (of CT's length) and FAIL")),
        }
        Ok(Vector {
            key_bits: h[0],
            tag_bits: h[4],
            ..v
        })
    };
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        let err = |why: &str| format!("line {lineno}: {why}: {line:?}");
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let (name, value) = inner.split_once('=').ok_or_else(|| err("bad header"))?;
            let slot = NAMES
                .iter()
                .position(|n| *n == name.trim())
                .ok_or_else(|| err("unknown header"))?;
            if slot == 0 {
                if let Some(v) = cur.take() {
                    out.push(finish(v, &header)?);
                }
                header = [None; 5];
                next_count = 0;
            }
            header[slot] = Some(value.trim().parse().map_err(|_| err("bad number"))?);
            continue;
        }
        if line == "FAIL" {
            let v = cur.as_mut().ok_or_else(|| err("FAIL outside a record"))?;
            if v.fail || v.pt.is_some() {
                return Err(err("repeated FAIL/PT"));
            }
            v.fail = true;
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .ok_or_else(|| err("not `NAME = VALUE`"))?;
        if name == "Count" {
            let count: usize = value.parse().map_err(|_| err("bad Count"))?;
            if count != next_count {
                return Err(err(&format!(
                    "Count {count} where {next_count} was expected"
                )));
            }
            next_count += 1;
            if let Some(v) = cur.take() {
                out.push(finish(v, &header)?);
            }
            cur = Some(Vector {
                line: lineno,
                ..Vector::default()
            });
            continue;
        }
        let v = cur.as_mut().ok_or_else(|| err("field before any Count"))?;
        let bytes = hex::decode(value).map_err(|e| err(&format!("bad hex ({e})")))?;
        let fresh = match name {
            "Key" => std::mem::replace(&mut v.key, bytes).is_empty(),
            "IV" => std::mem::replace(&mut v.iv, bytes).is_empty(),
            "AAD" => std::mem::replace(&mut v.aad, bytes).is_empty(),
            "CT" => std::mem::replace(&mut v.ct, bytes).is_empty(),
            "Tag" => std::mem::replace(&mut v.tag, bytes).is_empty(),
            "PT" => v.pt.replace(bytes).is_none(),
            _ => return Err(err("unknown field")),
        };
        if !fresh {
            return Err(err("repeated field"));
        }
    }
    if let Some(v) = cur.take() {
        out.push(finish(v, &header)?);
    }
    Ok(out)
}

fn read_file(name: &str) -> Result<Vec<Vector>, String> {
    let path = common::vectors_dir()
        .join("aes")
        .join("GCM")
        .join(format!("{name}.rsp"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs every vector of one file on `backend`.
fn run_file(
    name: &str,
    decrypt: bool,
    want: usize,
    want_fail: usize,
    backend: Backend,
) -> Result<(), String> {
    let vectors = read_file(name)?;
    let fails = vectors.iter().filter(|v| v.fail).count();
    if vectors.len() != want || fails != want_fail {
        return Err(format!(
            "{name}: {} vectors ({fails} FAIL) instead of {want} ({want_fail} FAIL)",
            vectors.len()
        ));
    }
    let mut on_trait_api = 0;
    for v in &vectors {
        let at = |what: &str| format!("{name} line {} (AES-{}): {what}", v.line, v.key_bits);
        if v.key.len() * 8 != v.key_bits {
            return Err(at("key length"));
        }
        let mut k = AesGcm::with_backend(&v.key, backend).map_err(|e| at(&e.to_string()))?;
        via_stream(&k, v, decrypt).map_err(|e| at(&format!("stream: {e}")))?;
        // The one-shot API binds the tag length to the key and offers
        // 12..=16 bytes; the 32- and 64-bit-tag vectors run through the
        // stream above only, and the key refuses their length.
        if let Err(e) = k.set_tag_len(v.tag_bits / 8) {
            if matches!(v.tag_bits, 32 | 64) && matches!(e, Error::InvalidTagLength { .. }) {
                continue;
            }
            return Err(at(&format!("set_tag_len: {e}")));
        }
        let full = v.iv.len() == 12 && v.tag_bits == 128;
        if !decrypt {
            let pt = v.pt.as_ref().expect("checked by the parser");
            let mut buf = pt.clone();
            let tag = k
                .seal_in_place_detached_with(&v.iv, &v.aad, &mut buf, v.tag_bits / 8)
                .map_err(|e| at(&e.to_string()))?;
            if let Some(d) = first_difference(&buf, &v.ct) {
                return Err(at(&format!("ciphertext: {d}")));
            }
            if tag.as_bytes() != v.tag {
                return Err(at(&format!(
                    "tag {} instead of {}",
                    to_hex(tag.as_bytes()),
                    to_hex(&v.tag)
                )));
            }
            k.open_in_place_detached_with(&v.iv, &v.aad, &mut buf, &v.tag)
                .map_err(|e| at(&format!("open of the sealed vector: {e}")))?;
            if buf != *pt {
                return Err(at("open of the sealed vector: wrong plaintext"));
            }
            if full {
                on_trait_api += 1;
                let sealed = k.seal(&v.iv, &v.aad, pt).map_err(|e| at(&e.to_string()))?;
                if sealed[..pt.len()] != v.ct[..] || sealed[pt.len()..] != v.tag[..] {
                    return Err(at("Aead::seal differs"));
                }
            }
        } else {
            let mut buf = v.ct.clone();
            let r = k.open_in_place_detached_with(&v.iv, &v.aad, &mut buf, &v.tag);
            match (&v.pt, r) {
                (None, Err(Error::AuthenticationFailed)) => {
                    if buf.iter().any(|&b| b != 0) {
                        return Err(at("FAIL vector: buffer not zeroed"));
                    }
                }
                (None, r) => return Err(at(&format!("FAIL vector opened: {r:?}"))),
                (Some(pt), Ok(())) => {
                    if let Some(d) = first_difference(&buf, pt) {
                        return Err(at(&format!("plaintext: {d}")));
                    }
                }
                (Some(_), Err(e)) => return Err(at(&format!("open failed: {e}"))),
            }
            if full {
                on_trait_api += 1;
                // Out of place through the trait, output prefilled with garbage.
                let mut out = vec![0xa5; v.ct.len()];
                let r = k.open_detached(&v.iv, &v.aad, &v.ct, &v.tag, &mut out);
                match (&v.pt, r) {
                    (None, Err(Error::AuthenticationFailed)) if out.iter().all(|&b| b == 0) => {}
                    (Some(pt), Ok(())) if out == *pt => {}
                    (_, r) => return Err(at(&format!("Aead::open_detached: {r:?}"))),
                }
            }
        }
    }
    if on_trait_api == 0 {
        return Err(format!("{name}: no vector went through the Aead trait"));
    }
    Ok(())
}

/// `data` cut into pieces of 1, 7, 16, 64, 3, 200, 1, 7, ... bytes, the
/// sizes starting at `phase`.
fn pieces(data: &mut [u8], phase: usize) -> Vec<&mut [u8]> {
    const SIZES: [usize; 6] = [1, 7, 16, 64, 3, 200];
    let mut out = Vec::new();
    let mut rest = data;
    for n in SIZES.iter().cycle().skip(phase % SIZES.len()) {
        if rest.is_empty() {
            break;
        }
        let (head, tail) = rest.split_at_mut((*n).min(rest.len()));
        out.push(head);
        rest = tail;
    }
    out
}

/// The vector through [`AesGcmStream`] with its tag length, associated data
/// and text in uneven pieces: encryption files give the ciphertext and tag;
/// decryption files verify (or, for FAIL vectors, reject) the tag.
fn via_stream(k: &AesGcm, v: &Vector, decrypt: bool) -> Result<(), String> {
    let mut s = AesGcmStream::with_tag_len(k, v.tag_bits / 8).map_err(|e| e.to_string())?;
    s.start(&v.iv).map_err(|e| e.to_string())?;
    let mut aad = v.aad.clone();
    for piece in pieces(&mut aad, v.line) {
        s.aad(piece).map_err(|e| e.to_string())?;
    }
    if !decrypt {
        let mut buf = v.pt.clone().expect("checked by the parser");
        for piece in pieces(&mut buf, v.line / 7) {
            s.encrypt(piece).map_err(|e| e.to_string())?;
        }
        let tag = s.finish().map_err(|e| e.to_string())?;
        if let Some(d) = first_difference(&buf, &v.ct) {
            return Err(format!("ciphertext: {d}"));
        }
        if tag.as_bytes() != v.tag {
            return Err(format!("tag {}", to_hex(tag.as_bytes())));
        }
        return Ok(());
    }
    let mut buf = v.ct.clone();
    for piece in pieces(&mut buf, v.line / 7) {
        s.decrypt(piece).map_err(|e| e.to_string())?;
    }
    match (s.verify(&v.tag), &v.pt) {
        (Ok(()), Some(pt)) => match first_difference(&buf, pt) {
            None => Ok(()),
            Some(d) => Err(format!("plaintext: {d}")),
        },
        (Err(Error::AuthenticationFailed), None) => Ok(()),
        (r, _) => Err(format!("verify gave {r:?}")),
    }
}

fn key_for(bits: usize, rng: &mut StdRng) -> Vec<u8> {
    let mut key = vec![0u8; bits / 8];
    rng.fill(&mut key[..]);
    key
}

/// Message lengths: every one 0..=4096, and random larger ones.
fn lengths(rng: &mut StdRng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=4096).collect();
    v.extend((0..12).map(|_| rng.random_range(4097..70_000)));
    v.extend([16 * 1024, 16 * 1024 + 1, 65536 + 15]);
    v
}

/// `backend` against `soft`: seal in place and out of place, open in place
/// and out of place, for every length 0..=4096 (random AAD of 0..=600
/// bytes), every AAD length 0..=600, and IVs of other lengths.
fn differential(backend: Backend, bits: usize) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(0x4743_4d00 + bits as u64);
    let key = key_for(bits, &mut rng);
    let k = AesGcm::with_backend(&key, backend).map_err(|e| e.to_string())?;
    let soft = AesGcm::with_backend(&key, Backend::Soft).map_err(|e| e.to_string())?;
    let mut cases: Vec<(usize, usize, usize)> = Vec::new();
    for len in lengths(&mut rng) {
        let aad = match len % 5 {
            0 => 0,
            1 => rng.random_range(0..=16),
            _ => rng.random_range(0..=600),
        };
        cases.push((len, aad, 12));
    }
    for aad in 0..=600 {
        cases.push((rng.random_range(0..=300), aad, 12));
    }
    for iv_len in [1, 8, 11, 13, 16, 17, 31, 32, 33, 64, 128, 129, 200] {
        for _ in 0..3 {
            cases.push((
                rng.random_range(0..=1000),
                rng.random_range(0..=100),
                iv_len,
            ));
        }
    }
    for (len, aad_len, iv_len) in cases {
        let what =
            format!("{backend} AES-{bits}, {len} bytes, {aad_len} bytes AAD, {iv_len}-byte IV");
        let mut pt = vec![0u8; len];
        rng.fill(&mut pt[..]);
        let mut aad = vec![0u8; aad_len];
        rng.fill(&mut aad[..]);
        let mut iv = vec![0u8; iv_len];
        rng.fill(&mut iv[..]);

        let mut want = pt.clone();
        let want_tag = soft
            .seal_in_place_detached_with(&iv, &aad, &mut want, 16)
            .map_err(|e| format!("{what}: soft: {e}"))?;

        let mut buf = pt.clone();
        let tag = k
            .seal_in_place_detached_with(&iv, &aad, &mut buf, 16)
            .map_err(|e| format!("{what}: {e}"))?;
        if let Some(d) = first_difference(&buf, &want) {
            return Err(format!("{what}: in-place ciphertext: {d}"));
        }
        if tag != want_tag {
            return Err(format!("{what}: tag {tag:?} instead of {want_tag:?}"));
        }
        // Open in place.
        k.open_in_place_detached_with(&iv, &aad, &mut buf, tag.as_bytes())
            .map_err(|e| format!("{what}: open in place: {e}"))?;
        if buf != pt {
            return Err(format!("{what}: open in place: wrong plaintext"));
        }
        if iv_len == 12 {
            // Out of place, both buffers misaligned by one byte, output garbage-filled.
            let mut input = vec![0u8; len + 1];
            input[1..].copy_from_slice(&pt);
            let mut output = vec![0u8; len + 1];
            rng.fill(&mut output[..]);
            let t = k
                .seal_detached(&iv, &aad, &input[1..], &mut output[1..])
                .map_err(|e| format!("{what}: seal out of place: {e}"))?;
            if output[1..] != want[..] || t[..] != *want_tag.as_bytes() {
                return Err(format!("{what}: seal out of place differs"));
            }
            input[1..].copy_from_slice(&want);
            rng.fill(&mut output[..]);
            k.open_detached(&iv, &aad, &input[1..], &t, &mut output[1..])
                .map_err(|e| format!("{what}: open out of place: {e}"))?;
            if output[1..] != pt[..] {
                return Err(format!("{what}: open out of place: wrong plaintext"));
            }
        }
    }
    Ok(())
}

/// Flipping any bit of the ciphertext, tag, AAD or nonce makes `open` fail
/// with `AuthenticationFailed` and zero the buffer; for full and short tags.
fn tamper(backend: Backend) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(0x7461_6d70);
    for (bits, len, aad_len, iv_len, tag_len) in [
        (128, 0, 0, 12, 16),
        (128, 1, 3, 12, 16),
        (256, 37, 20, 12, 16),
        (192, 129, 17, 12, 12),
        (256, 200, 0, 8, 13),
        (128, 16, 16, 1, 14),
        (256, 300, 40, 60, 16),
        // Long enough for the wide backends' bulk path (whole 256-byte
        // chunks) plus a tail; every 61st bit of the ciphertext is flipped.
        (128, 1000, 5, 12, 16),
        (256, 4100, 33, 12, 16),
    ] {
        let key = key_for(bits, &mut rng);
        let mut k = AesGcm::with_backend(&key, backend).map_err(|e| e.to_string())?;
        k.set_tag_len(tag_len).map_err(|e| e.to_string())?;
        let mut pt = vec![0u8; len];
        rng.fill(&mut pt[..]);
        let mut aad = vec![0u8; aad_len];
        rng.fill(&mut aad[..]);
        let mut iv = vec![0u8; iv_len];
        rng.fill(&mut iv[..]);
        let mut ct = pt.clone();
        let tag = k
            .seal_in_place_detached_with(&iv, &aad, &mut ct, tag_len)
            .map_err(|e| e.to_string())?;
        let tag = tag.as_bytes().to_vec();
        let what =
            format!("{backend} AES-{bits}, {len} bytes, {aad_len} AAD, {iv_len} IV, {tag_len} tag");
        let check =
            |iv: &[u8], aad: &[u8], ct: &[u8], tag: &[u8], flipped: &str| -> Result<(), String> {
                let mut buf = ct.to_vec();
                match k.open_in_place_detached_with(iv, aad, &mut buf, tag) {
                    Err(Error::AuthenticationFailed) if buf.iter().all(|&b| b == 0) => Ok(()),
                    Err(Error::AuthenticationFailed) => {
                        Err(format!("{what}: {flipped}: buffer not zeroed"))
                    }
                    r => Err(format!("{what}: {flipped}: {r:?}")),
                }
            };
        let stride = if len > 500 { 61 } else { 1 };
        for bit in (0..len * 8).step_by(stride) {
            let mut c = ct.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            check(&iv, &aad, &c, &tag, &format!("ciphertext bit {bit}"))?;
        }
        for bit in 0..tag.len() * 8 {
            let mut t = tag.clone();
            t[bit / 8] ^= 1 << (bit % 8);
            check(&iv, &aad, &ct, &t, &format!("tag bit {bit}"))?;
        }
        for bit in 0..aad_len * 8 {
            let mut a = aad.clone();
            a[bit / 8] ^= 1 << (bit % 8);
            check(&iv, &a, &ct, &tag, &format!("AAD bit {bit}"))?;
        }
        for bit in 0..iv_len * 8 {
            let mut n = iv.clone();
            n[bit / 8] ^= 1 << (bit % 8);
            check(&n, &aad, &ct, &tag, &format!("nonce bit {bit}"))?;
        }
        // A prefix of the tag is refused (the key fixes the tag length),
        // and the buffer is zeroed.
        for short in [4, 8, tag.len() - 1] {
            let mut buf = ct.clone();
            match k.open_in_place_detached_with(&iv, &aad, &mut buf, &tag[..short]) {
                Err(Error::InvalidTagLength { .. }) if buf.iter().all(|&b| b == 0) => {}
                r => return Err(format!("{what}: {short}-byte tag prefix: {r:?}")),
            }
        }
        // The untampered message opens.
        let mut buf = ct.clone();
        k.open_in_place_detached_with(&iv, &aad, &mut buf, &tag)
            .map_err(|e| format!("{what}: untampered: {e}"))?;
        if buf != pt {
            return Err(format!("{what}: untampered: wrong plaintext"));
        }
    }
    Ok(())
}

/// The parser rejects what it does not understand.
fn parser_self_test() -> Result<(), String> {
    let good = "# c\r\n[Keylen = 128]\r\n[IVlen = 8]\r\n[PTlen = 8]\r\n[AADlen = 0]\r\n[Taglen = 32]\r\n\r\n\
                Count = 0\r\nKey = 000102030405060708090a0b0c0d0e0f\r\nIV = aa\r\nCT = bb\r\nAAD = \r\nTag = 01020304\r\nFAIL\r\n\r\n\
                Count = 1\r\nKey = 000102030405060708090a0b0c0d0e0f\r\nIV = aa\r\nCT = bb\r\nAAD = \r\nTag = 01020304\r\nPT = cc\r\n";
    let v = parse(good)?;
    if v.len() != 2 || !v[0].fail || v[1].pt.as_deref() != Some(&[0xcc][..]) || v[1].tag_bits != 32
    {
        return Err(format!("parsed wrongly: {v:?}"));
    }
    for (bad, why) in [
        (good.replace("Count = 1", "Count = 2"), "Count gap"),
        (
            good.replace("IV = aa", "IV = aabb"),
            "length against header",
        ),
        (good.replace("PT = cc", "PT = cc\r\nFAIL"), "PT and FAIL"),
        (good.replace("[Taglen", "[Tagsize"), "unknown header"),
        (good.replace("AAD =", "XYZ ="), "unknown field"),
    ] {
        if parse(&bad).is_ok() {
            return Err(format!("accepted a file with a {why}"));
        }
    }
    let _ = unhex("00");
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let backends = common::backends(Algorithm::AesGcm);
    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::AesGcm, &backends));
    common::announce(&preamble, args.list);

    let mut trials = vec![Trial::test("harness::parser_is_strict", || {
        parser_self_test().map_err(Failed::from)
    })];
    for (name, decrypt, n, fails) in FILES {
        for (backend, runnable) in &backends {
            let backend = *backend;
            trials.push(
                Trial::test(format!("kat::{name}::{backend}"), move || {
                    run_file(name, decrypt, n, fails, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    for (backend, runnable) in &backends {
        let backend = *backend;
        if backend == Backend::Soft {
            continue;
        }
        for bits in [128, 192, 256] {
            trials.push(
                Trial::test(format!("differential::{backend}::AES-{bits}"), move || {
                    differential(backend, bits).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    for (backend, runnable) in &backends {
        let backend = *backend;
        trials.push(
            Trial::test(format!("tamper::{backend}"), move || {
                tamper(backend).map_err(Failed::from)
            })
            .with_ignored_flag(runnable.is_err()),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
