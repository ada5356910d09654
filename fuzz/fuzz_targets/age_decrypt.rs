//! age files from an attacker (crate `hwcrypt-age`): the header parser, the
//! armor decoder and decryption with an X25519, an mlkem768x25519 and a
//! (cheap) scrypt identity, on raw input and on the CCTV `x25519` or
//! `hybrid` file edited as the fuzzer says (XOR edits, truncation, inserted
//! bytes). Never a panic; an
//! edited file either fails or decrypts to exactly the original plaintext
//! (no forged plaintext is ever released).
#![no_main]

use hwcrypt_age::{
    Decryptor, HybridIdentity, Identity, ScryptIdentity, X25519Identity, armor, format,
};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::io::Read;
use std::sync::OnceLock;

/// The CCTV test files: a few `key: value` lines, a blank line, the file.
const CCTV_X25519: &[u8] = include_bytes!("../../crates/hwcrypt-age/tests/data/cctv/x25519");
const CCTV_HYBRID: &[u8] = include_bytes!("../../crates/hwcrypt-age/tests/data/cctv/hybrid");

#[derive(Arbitrary, Debug)]
struct Input {
    raw: bool,
    hybrid: bool,
    data: Vec<u8>,
    edits: Vec<(u16, u8)>,
    truncate_to: Option<u16>,
    insert_at: u16,
}

struct Fixture {
    /// The x25519 and hybrid files, and their plaintexts.
    files: [(Vec<u8>, Vec<u8>); 2],
    x25519: X25519Identity,
    hybrid: HybridIdentity,
    scrypt: ScryptIdentity,
}

/// A CCTV file's identity line and age file.
fn split_vector(vector: &[u8]) -> (&str, Vec<u8>) {
    let split = vector
        .windows(2)
        .position(|w| w == b"\n\n")
        .expect("CCTV layout");
    let head = std::str::from_utf8(&vector[..split]).unwrap();
    let secret = head
        .lines()
        .find_map(|l| l.strip_prefix("identity: "))
        .expect("identity line");
    (secret, vector[split + 2..].to_vec())
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let (secret, x_file) = split_vector(CCTV_X25519);
        let x25519: X25519Identity = secret.parse().expect("CCTV identity");
        let (secret, h_file) = split_vector(CCTV_HYBRID);
        let hybrid: HybridIdentity = secret.parse().expect("CCTV identity");
        let scrypt =
            ScryptIdentity::new(zeroize::Zeroizing::new("password".into())).with_max_work_factor(4);
        let ids: [&dyn Identity; 3] = [&x25519, &hybrid, &scrypt];
        let x_plain = decrypt(&x_file, &ids).expect("the CCTV file decrypts");
        let h_plain = decrypt(&h_file, &ids).expect("the CCTV file decrypts");
        Fixture {
            files: [(x_file, x_plain), (h_file, h_plain)],
            x25519,
            hybrid,
            scrypt,
        }
    })
}

fn decrypt(file: &[u8], ids: &[&dyn Identity]) -> Option<Vec<u8>> {
    let binary;
    let file = if armor::is_armored(file) {
        binary = armor::decode_armor(file).ok()?;
        &binary[..]
    } else {
        file
    };
    let mut reader = Decryptor::new(file).ok()?.decrypt(ids).ok()?;
    let mut out = Vec::new();
    reader.read_to_end(&mut out).ok()?;
    Some(out)
}

fuzz_target!(|input: Input| {
    let f = fixture();
    let data = &input.data[..input.data.len().min(1 << 16)];
    let (base, plaintext) = &f.files[usize::from(input.hybrid)];
    let file = if input.raw {
        data.to_vec()
    } else {
        let mut file = base.clone();
        for &(at, x) in input.edits.iter().take(8) {
            let n = file.len();
            file[usize::from(at) % n] ^= x;
        }
        if let Some(t) = input.truncate_to {
            file.truncate(usize::from(t));
        }
        let at = usize::from(input.insert_at).min(file.len());
        file.splice(at..at, data.iter().copied().take(64));
        file
    };
    // The parser alone.
    if let Ok((header, used)) = format::parse_header(&file) {
        assert!(used <= file.len());
        assert!(!header.stanzas.is_empty());
    }
    let ids: [&dyn Identity; 3] = [&f.x25519, &f.hybrid, &f.scrypt];
    match decrypt(&file, &ids) {
        Some(out) if !input.raw => {
            assert_eq!(
                out, *plaintext,
                "an edited file decrypted to other plaintext"
            )
        }
        _ => {}
    }
});
