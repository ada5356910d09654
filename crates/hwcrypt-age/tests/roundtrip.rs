//! hwcrypt-age round trips for every recipient type (X25519, scrypt,
//! ssh-ed25519, ssh-rsa, mlkem768x25519; the SSH test keys in tests/data/ssh were made with
//! ssh-keygen for these tests only), binary and armored, sizes around chunk
//! boundaries; the parallel path equal to the streaming one; the failure
//! modes; and a fuzz-style pass flipping, truncating and splicing bytes of
//! real files (no panic, no accepted forgery).

use hwcrypt_age::armor::{ArmoredWriter, decode_armor, is_armored};
use hwcrypt_age::keys::{parse_identity_file, parse_recipient, parse_recipients_file};
use hwcrypt_age::{
    Decryptor, Encryptor, Error, HybridIdentity, HybridRecipient, Identity, Recipient,
    ScryptIdentity, ScryptRecipient, X25519Identity,
};
use std::io::{Read, Write};
use std::path::Path;
use zeroize::Zeroizing;

const C: usize = 64 * 1024;

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 300) as u8).collect()
}

fn ssh_file(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/ssh")
            .join(name),
    )
    .unwrap()
}

fn encrypt(recipients: Vec<Box<dyn Recipient>>, msg: &[u8]) -> Vec<u8> {
    let enc = Encryptor::with_recipients(recipients).unwrap();
    let mut w = enc.wrap_output(Vec::new()).unwrap();
    w.write_all(msg).unwrap();
    w.finish().unwrap()
}

fn decrypt(file: &[u8], identities: &[&dyn Identity]) -> Result<Vec<u8>, Error> {
    let bytes = if is_armored(file) {
        decode_armor(file)?
    } else {
        file.to_vec()
    };
    let mut r = Decryptor::new(&bytes[..])?.decrypt(identities)?;
    let mut out = Vec::new();
    r.read_to_end(&mut out).map_err(Error::from_io)?;
    Ok(out)
}

fn armor(file: &[u8]) -> Vec<u8> {
    let mut w = ArmoredWriter::new(Vec::new()).unwrap();
    // In uneven pieces, to exercise the line buffering.
    for piece in file.chunks(37) {
        w.write_all(piece).unwrap();
    }
    w.finish().unwrap()
}

struct Keys {
    x25519: X25519Identity,
    ed25519: Box<dyn Identity>,
    rsa: Box<dyn Identity>,
    pq: HybridIdentity,
}

fn keys() -> Keys {
    Keys {
        x25519: X25519Identity::generate().unwrap(),
        ed25519: parse_identity_file(&ssh_file("id_ed25519"))
            .unwrap()
            .remove(0),
        rsa: parse_identity_file(&ssh_file("id_rsa")).unwrap().remove(0),
        pq: HybridIdentity::generate().unwrap(),
    }
}

fn recipient(k: &Keys, which: &str) -> Box<dyn Recipient> {
    match which {
        "x25519" => parse_recipient(&k.x25519.to_public().to_string()).unwrap(),
        "ssh-ed25519" => {
            parse_recipient(std::str::from_utf8(&ssh_file("id_ed25519.pub")).unwrap()).unwrap()
        }
        "ssh-rsa" => {
            parse_recipient(std::str::from_utf8(&ssh_file("id_rsa.pub")).unwrap()).unwrap()
        }
        "mlkem768x25519" => parse_recipient(&k.pq.to_public().to_string()).unwrap(),
        _ => unreachable!(),
    }
}

fn identity<'a>(k: &'a Keys, which: &str) -> &'a dyn Identity {
    match which {
        "x25519" => &k.x25519,
        "ssh-ed25519" => k.ed25519.as_ref(),
        "ssh-rsa" => k.rsa.as_ref(),
        "mlkem768x25519" => &k.pq,
        _ => unreachable!(),
    }
}

#[test]
fn round_trip_every_recipient_type() {
    let k = keys();
    for which in ["x25519", "ssh-ed25519", "ssh-rsa", "mlkem768x25519"] {
        for len in [0, 1, C - 1, C, C + 1, 3 * C, 3 * C + 100] {
            let msg = data(len);
            let file = encrypt(vec![recipient(&k, which)], &msg);
            assert_eq!(
                decrypt(&file, &[identity(&k, which)]).unwrap(),
                msg,
                "{which} {len}"
            );
            let armored = armor(&file);
            assert!(armored.starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----\n"));
            assert_eq!(decode_armor(&armored).unwrap(), file);
            assert_eq!(decrypt(&armored, &[identity(&k, which)]).unwrap(), msg);
        }
    }
}

#[test]
fn several_recipients_each_decrypt() {
    let k = keys();
    let msg = data(1000);
    let file = encrypt(
        ["x25519", "ssh-ed25519", "ssh-rsa"]
            .iter()
            .map(|w| recipient(&k, w))
            .collect(),
        &msg,
    );
    for which in ["x25519", "ssh-ed25519", "ssh-rsa"] {
        assert_eq!(decrypt(&file, &[identity(&k, which)]).unwrap(), msg);
    }
    let other = X25519Identity::generate().unwrap();
    assert!(matches!(decrypt(&file, &[&other]), Err(Error::NoMatch)));
}

#[test]
fn post_quantum_recipients() {
    let k = keys();
    let other = HybridIdentity::generate().unwrap();
    let msg = data(C + 1);
    // Two post-quantum recipients: each decrypts; a third key does not.
    let file = encrypt(
        vec![recipient(&k, "mlkem768x25519"), Box::new(other.to_public())],
        &msg,
    );
    assert_eq!(decrypt(&file, &[&k.pq]).unwrap(), msg);
    assert_eq!(decrypt(&file, &[&other]).unwrap(), msg);
    let third = HybridIdentity::generate().unwrap();
    assert!(matches!(decrypt(&file, &[&third]), Err(Error::NoMatch)));
    // An X25519 identity ignores the hybrid stanzas (no match, no error).
    assert!(matches!(decrypt(&file, &[&k.x25519]), Err(Error::NoMatch)));
    // Never mixed with classic recipients, either order (as age 1.3).
    for classic in ["x25519", "ssh-ed25519", "ssh-rsa"] {
        let mixed = Encryptor::with_recipients(vec![
            recipient(&k, "mlkem768x25519"),
            recipient(&k, classic),
        ]);
        assert!(mixed.unwrap_err().to_string().contains("cannot be mixed"));
        let mixed = Encryptor::with_recipients(vec![
            recipient(&k, classic),
            recipient(&k, "mlkem768x25519"),
        ]);
        assert!(mixed.is_err());
    }
    // Encodings: 1,959-character recipients (as age-keygen -pq prints),
    // identities round trip, the secret never shows in Debug.
    let public = k.pq.to_public().to_string();
    assert!(public.starts_with("age1pq1"));
    assert_eq!(public.len(), 1959);
    assert_eq!(public.parse::<HybridRecipient>().unwrap(), k.pq.to_public());
    let secret = k.pq.to_secret_string();
    assert!(secret.starts_with("AGE-SECRET-KEY-PQ-1"));
    let parsed: HybridIdentity = secret.parse().unwrap();
    assert_eq!(parsed.to_public(), k.pq.to_public());
    assert!(!format!("{:?}", k.pq).contains(&secret[19..]));
    assert!(!format!("{:?}", k.pq).contains(&secret[19..].to_lowercase()));
    // A corrupted character, a truncated key, the wrong kind of key.
    let mut bad = public.clone().into_bytes();
    bad[500] = if bad[500] == b'q' { b'p' } else { b'q' };
    assert!(parse_recipient(std::str::from_utf8(&bad).unwrap()).is_err());
    assert!(parse_recipient(&public[..public.len() - 7]).is_err());
    assert!(
        parse_recipient(
            &k.x25519
                .to_public()
                .to_string()
                .replacen("age1", "age1pq1", 1)
        )
        .is_err()
    );
    let text = format!(
        "# public key: {public}\n{}\n{}\n",
        secret.as_str(),
        k.x25519.to_secret_string().as_str()
    );
    let ids = parse_identity_file(text.as_bytes()).unwrap();
    assert_eq!(ids.len(), 2);
    let ids: Vec<&dyn Identity> = ids.iter().map(|b| b.as_ref()).collect();
    assert_eq!(decrypt(&file, &ids).unwrap(), msg);
    let truncated = format!("{}\n", &secret[..secret.len() - 3]);
    assert!(parse_identity_file(truncated.as_bytes()).is_err());
    // The case age requires: recipients lowercase, identities uppercase.
    assert!(public.to_uppercase().parse::<HybridRecipient>().is_err());
    assert!(secret.to_lowercase().parse::<HybridIdentity>().is_err());
    // A public key whose X25519 part is a low-order point (here 0) is
    // refused: no one could decrypt files made for it.
    let id = HybridIdentity::generate().unwrap();
    let bytes = id.to_public().to_bytes();
    assert_eq!(bytes.len(), 1216);
    assert!(HybridRecipient::from_bytes(&bytes).is_ok());
    let mut low = bytes.clone();
    low[1184..].fill(0);
    assert!(HybridRecipient::from_bytes(&low).is_err());
}

#[test]
fn passphrase_round_trip_and_rules() {
    let pass = || Zeroizing::new("correct horse battery staple".to_owned());
    let r = ScryptRecipient::new(pass()).with_work_factor(10);
    let msg = data(C + 5);
    let file = encrypt(vec![Box::new(r.clone())], &msg);
    assert_eq!(
        decrypt(&file, &[&ScryptIdentity::new(pass())]).unwrap(),
        msg
    );
    let wrong = ScryptIdentity::new(Zeroizing::new("wrong".into()));
    assert!(matches!(decrypt(&file, &[&wrong]), Err(Error::Passphrase)));
    // The work factor cap is checked before any work.
    let capped = ScryptIdentity::new(pass()).with_max_work_factor(9);
    assert!(matches!(
        decrypt(&file, &[&capped]),
        Err(Error::WorkFactor { got: 10, max: 9 })
    ));
    // A passphrase cannot be mixed with other recipients.
    let k = keys();
    let mixed = Encryptor::with_recipients(vec![Box::new(r), recipient(&k, "x25519")]);
    assert!(mixed.is_err());
    // Debug never shows the passphrase.
    assert!(!format!("{:?}", ScryptIdentity::new(pass())).contains("horse"));
}

#[test]
fn secrets_do_not_print() {
    let id = X25519Identity::generate().unwrap();
    let secret = id.to_secret_string();
    assert!(secret.starts_with("AGE-SECRET-KEY-1"));
    assert!(!format!("{id:?}").contains(&secret[16..]));
    let parsed: X25519Identity = secret.parse().unwrap();
    assert_eq!(parsed.to_public(), id.to_public());
    let ssh = parse_identity_file(&ssh_file("id_ed25519")).unwrap();
    assert!(format!("{:?}", ssh[0]).starts_with("SshIdentity(ssh-ed25519"));
}

#[test]
fn key_files() {
    assert!(
        parse_identity_file(&ssh_file("id_ed25519_encrypted"))
            .unwrap_err()
            .to_string()
            .contains("passphrase-protected")
    );
    assert!(parse_identity_file(&ssh_file("id_ecdsa")).is_err());
    assert!(parse_recipient(std::str::from_utf8(&ssh_file("id_ecdsa.pub")).unwrap()).is_err());
    let id = X25519Identity::generate().unwrap();
    let text = format!(
        "# created: now\n# public key: {}\n{}\n",
        id.to_public(),
        id.to_secret_string().as_str()
    );
    assert_eq!(parse_identity_file(text.as_bytes()).unwrap().len(), 1);
    assert!(parse_identity_file(b"AGE-SECRET-KEY-1XYZ\n").is_err());
    let list = format!(
        "# team\n{}\n\n{}",
        id.to_public(),
        std::str::from_utf8(&ssh_file("id_rsa.pub")).unwrap()
    );
    assert_eq!(parse_recipients_file(&list).unwrap().len(), 2);
    assert!(parse_recipients_file("age1notarecipient\n").is_err());
    assert!(parse_recipient("age1qqqq").is_err());
}

/// Found in review (2026-11-29), each against age 1.1.1.
#[test]
fn recipient_and_identity_edges_as_age() {
    let text = |name| String::from_utf8(ssh_file(name)).unwrap();
    let err =
        |r: Result<Box<dyn Recipient>, Error>| r.err().map(|e| e.to_string()).unwrap_or_default();
    // RSA under 2048 bits: refused as a recipient.
    assert!(err(parse_recipient(&text("id_rsa1024.pub"))).contains("under 2048 bits"));
    // Fields apart by several spaces or a tab.
    for sep in ["  ", "\t", " \t "] {
        for name in ["id_ed25519.pub", "id_rsa.pub"] {
            let line = text(name).replacen(' ', sep, 1);
            assert!(parse_recipient(&line).is_ok(), "{name} {sep:?}");
        }
    }
    // A plugin recipient is named as one.
    assert!(err(parse_recipient("age1yubikey1q2w3e4r5t6y7u8i9o0p")).contains("age-plugin-yubikey"));
    // Unsupported SSH keys in a recipients file are skipped (and reported).
    let id = X25519Identity::generate().unwrap();
    let list = format!("{}\n{}\n", text("id_ecdsa.pub").trim(), id.to_public());
    let mut skipped = Vec::new();
    let parsed = hwcrypt_age::keys::parse_recipients_file_with(&list, |n, kind| {
        skipped.push((n, kind.to_string()))
    })
    .unwrap();
    assert_eq!(parsed.len(), 1);
    assert_eq!(skipped, [(1, "ecdsa-sha2-nistp256".to_string())]);
    assert!(parse_recipients_file(text("id_ecdsa.pub").as_str()).is_err());
    // The RSA key in PEM (PKCS#1) and PKCS#8 form opens what its OpenSSH
    // public key was sent.
    let file = encrypt(vec![parse_recipient(&text("id_rsa.pub")).unwrap()], b"pem");
    for name in ["id_rsa_pem", "id_rsa_pkcs8"] {
        let ids = parse_identity_file(&ssh_file(name)).unwrap();
        assert_eq!(
            decrypt(&file, &[ids[0].as_ref()]).unwrap(),
            b"pem",
            "{name}"
        );
    }
    // A valid ECDSA private key: "not supported", not "malformed".
    let e = parse_identity_file(&ssh_file("id_ecdsa"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("not supported"), "{e}");
    let e = parse_identity_file(b"AGE-PLUGIN-YUBIKEY-1QQQQ\n")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("plugin identities"), "{e}");
    // A wrong passphrase says so.
    let right = ScryptRecipient::new(Zeroizing::new("right".into())).with_work_factor(10);
    let file = encrypt(vec![Box::new(right)], b"m");
    let wrong = ScryptIdentity::new(Zeroizing::new("wrong".into()));
    assert!(matches!(decrypt(&file, &[&wrong]), Err(Error::Passphrase)));
    // A scrypt stanza beside another: refused when the header is read,
    // before any identity or passphrase is asked for.
    let x = encrypt(vec![Box::new(id.to_public())], b"m");
    let head = |f: &[u8]| {
        let t = String::from_utf8_lossy(f).into_owned();
        let lines: Vec<String> = t.lines().map(str::to_string).collect();
        lines
    };
    let (p, x) = (head(&file), head(&x));
    let mixed = format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n",
        p[0], x[1], x[2], p[1], p[2], p[3]
    );
    match Decryptor::new(mixed.as_bytes()) {
        Err(Error::Header(m)) => assert!(m.contains("only stanza"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

#[test]
fn parallel_equals_streaming() {
    let k = keys();
    for len in [0, 1, C - 1, C, C + 1, 16 * C, 16 * C + 1, 20 * C + 3] {
        let msg = data(len);
        let file = encrypt(vec![recipient(&k, "x25519")], &msg);
        for threads in 1..=8 {
            let mut out = Vec::new();
            Decryptor::new(&file[..])
                .unwrap()
                .decrypt_parallel(&[&k.x25519], &mut out, threads)
                .unwrap();
            assert!(out == msg, "len {len} threads {threads}");
            // The payload read at offsets, the file behind a prefix.
            let mut prefixed = b"junk".to_vec();
            prefixed.extend_from_slice(&file);
            let mut out = Vec::new();
            Decryptor::new(&prefixed[4..])
                .unwrap()
                .decrypt_parallel_at(&[&k.x25519], &prefixed[..], 4, &mut out, threads)
                .unwrap();
            assert!(out == msg, "at: len {len} threads {threads}");
        }
        let enc = Encryptor::with_recipients(vec![recipient(&k, "x25519")]).unwrap();
        let mut file2 = Vec::new();
        enc.encrypt_parallel(&msg[..], &mut file2, 3).unwrap();
        assert_eq!(file2.len(), file.len());
        assert_eq!(decrypt(&file2, &[&k.x25519]).unwrap(), msg);
        let mut prefixed = b"ab".to_vec();
        prefixed.extend_from_slice(&msg);
        let mut file3 = Vec::new();
        enc.encrypt_parallel_at(&prefixed[..], 2, &mut file3, 5)
            .unwrap();
        assert_eq!(file3.len(), file.len());
        assert_eq!(decrypt(&file3, &[&k.x25519]).unwrap(), msg);
    }
}

#[test]
fn failure_modes() {
    let k = keys();
    let msg = data(3 * C + 10);
    let file = encrypt(vec![recipient(&k, "x25519")], &msg);
    let header_len = file.windows(4).position(|w| w == b"--- ").unwrap();
    let header_end = header_len + file[header_len..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let payload_start = header_end + 16;
    let id: &dyn Identity = &k.x25519;
    // Header MAC: alter a stanza argument byte that still parses.
    let mut bad = file.clone();
    let pos = file.windows(9).position(|w| w == b"-> X25519").unwrap() + 10;
    bad[pos] = if bad[pos] == b'A' { b'B' } else { b'A' };
    assert!(decrypt(&bad, &[id]).is_err());
    // MAC line altered.
    let mut bad = file.clone();
    bad[header_end - 3] ^= 1;
    assert!(matches!(
        decrypt(&bad, &[id]),
        Err(Error::HeaderMac) | Err(Error::Header(_))
    ));
    // Truncated at a chunk boundary, inside a chunk, before the payload.
    for cut in [
        payload_start + 65536 + 16,
        payload_start + 100,
        payload_start,
        header_end + 3,
    ] {
        let r = decrypt(&file[..cut], &[id]);
        assert!(r.is_err(), "cut at {cut}");
    }
    // Appended data.
    let mut longer = file.clone();
    longer.extend_from_slice(b"more");
    assert!(matches!(decrypt(&longer, &[id]), Err(Error::Payload(_))));
    // Unknown stanza only.
    let unknown = file.replacen(b"-> X25519", b"-> Y25519");
    assert!(matches!(decrypt(&unknown, &[id]), Err(Error::NoMatch)));
    // Not an age file at all; empty input.
    assert!(matches!(
        decrypt(b"hello world\n", &[id]),
        Err(Error::Header(_))
    ));
    assert!(matches!(decrypt(b"", &[id]), Err(Error::Header(_))));
}

trait ReplaceN {
    fn replacen(&self, from: &[u8], to: &[u8]) -> Vec<u8>;
}

impl ReplaceN for Vec<u8> {
    fn replacen(&self, from: &[u8], to: &[u8]) -> Vec<u8> {
        let pos = self.windows(from.len()).position(|w| w == from).unwrap();
        [&self[..pos], to, &self[pos + from.len()..]].concat()
    }
}

/// A small xorshift generator: the fuzz pass is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn fuzz_flips_truncations_splices() {
    let k = keys();
    let msg = data(2 * C + 77);
    let files = [
        encrypt(vec![recipient(&k, "x25519")], &msg),
        encrypt(
            vec![recipient(&k, "ssh-ed25519"), recipient(&k, "x25519")],
            &msg,
        ),
        encrypt(vec![recipient(&k, "mlkem768x25519")], &msg),
    ];
    let other = encrypt(vec![recipient(&k, "x25519")], &data(C + 9));
    let armored = armor(&files[0]);
    let ids: [&dyn Identity; 2] = [&k.x25519, &k.pq];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut tried = 0;
    for round in 0..400 {
        let base: &[u8] = match round % 4 {
            0 => &files[0],
            1 => &files[1],
            2 => &files[2],
            _ => &armored,
        };
        let mut f = base.to_vec();
        match rng.below(4) {
            0 => {
                let n = 1 + rng.below(3);
                for _ in 0..n {
                    let p = rng.below(f.len());
                    f[p] ^= 1 << rng.below(8);
                }
            }
            1 => f.truncate(rng.below(f.len())),
            2 => {
                let p = rng.below(f.len());
                let q = rng.below(other.len());
                f.truncate(p);
                f.extend_from_slice(&other[q..]);
            }
            _ => {
                let p = rng.below(f.len());
                let extra: Vec<u8> = (0..1 + rng.below(40)).map(|_| rng.next() as u8).collect();
                f.splice(p..p, extra);
            }
        }
        if f == base {
            continue;
        }
        tried += 1;
        // Either an error, or (only where the change is in ignored armor
        // whitespace) exactly the original plaintext: never anything else.
        if let Ok(out) = decrypt(&f, &ids) {
            assert!(out == msg, "round {round}: forged plaintext accepted");
        }
        for threads in [1, 2] {
            let bytes = if is_armored(&f) {
                decode_armor(&f)
            } else {
                Ok(f.clone())
            };
            if let Ok(bytes) = bytes
                && let Ok(d) = Decryptor::new(&bytes[..])
            {
                let mut out = Vec::new();
                if d.decrypt_parallel(&ids, &mut out, threads).is_ok() {
                    assert!(out == msg, "round {round}: parallel accepted a forgery");
                }
                if let Ok(d) = Decryptor::new(&bytes[..]) {
                    let mut out = Vec::new();
                    if d.decrypt_parallel_at(&ids, &bytes[..], 0, &mut out, threads)
                        .is_ok()
                    {
                        assert!(
                            out == msg,
                            "round {round}: read at offsets, accepted a forgery"
                        );
                    }
                }
            }
        }
    }
    assert!(tried > 350);
}

/// Found in review (2026-11-29): text after the END line of a PEM key (age
/// ignores it) made the key "malformed".
#[test]
fn pem_key_with_text_after_it() {
    let mut pem = ssh_file("id_rsa_pem");
    pem.extend_from_slice(b"# a comment\nssh-rsa AAAA... test\n");
    assert_eq!(parse_identity_file(&pem).unwrap().len(), 1);
}

/// Found in review (2026-11-29): a file to some thousands of recipients
/// (as age writes and reads) had a header over the 1 MiB the reader took,
/// and encrypting never checked it. The limit is 16 MiB both ways.
#[test]
fn headers_of_many_recipients() {
    let id = X25519Identity::generate().unwrap();
    let many: Vec<Box<dyn Recipient>> = (0..12_000)
        .map(|_| Box::new(id.to_public()) as Box<dyn Recipient>)
        .collect();
    let file = encrypt(many, b"to twelve thousand");
    assert!(file.len() > 1 << 20);
    assert_eq!(decrypt(&file, &[&id]).unwrap(), b"to twelve thousand");

    let pq = HybridIdentity::generate().unwrap();
    let too_many: Vec<Box<dyn Recipient>> = (0..12_000)
        .map(|_| Box::new(pq.to_public()) as Box<dyn Recipient>)
        .collect();
    let err = Encryptor::with_recipients(too_many)
        .unwrap()
        .wrap_output(Vec::new())
        .unwrap_err();
    assert!(err.to_string().contains("longer than 16 MiB"), "{err}");
}
