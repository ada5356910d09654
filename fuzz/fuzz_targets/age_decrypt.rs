//! age files from an attacker (crate `hwcrypt-age`): the header parser, the
//! armor decoder and decryption with an X25519 and a (cheap) scrypt
//! identity, on raw input and on the CCTV `x25519` file edited as the
//! fuzzer says (XOR edits, truncation, inserted bytes). Never a panic; an
//! edited file either fails or decrypts to exactly the original plaintext
//! (no forged plaintext is ever released).
#![no_main]

use hwcrypt_age::{Decryptor, Identity, ScryptIdentity, X25519Identity, armor, format};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use std::io::Read;
use std::sync::OnceLock;

/// The CCTV test file: a few `key: value` lines, a blank line, the file.
const CCTV_X25519: &[u8] = include_bytes!("../../crates/hwcrypt-age/tests/data/cctv/x25519");

#[derive(Arbitrary, Debug)]
struct Input {
    raw: bool,
    data: Vec<u8>,
    edits: Vec<(u16, u8)>,
    truncate_to: Option<u16>,
    insert_at: u16,
}

struct Fixture {
    file: Vec<u8>,
    plaintext: Vec<u8>,
    x25519: X25519Identity,
    scrypt: ScryptIdentity,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let split = CCTV_X25519
            .windows(2)
            .position(|w| w == b"\n\n")
            .expect("CCTV layout");
        let head = std::str::from_utf8(&CCTV_X25519[..split]).unwrap();
        let secret = head
            .lines()
            .find_map(|l| l.strip_prefix("identity: "))
            .expect("identity line");
        let x25519: X25519Identity = secret.parse().expect("CCTV identity");
        let scrypt =
            ScryptIdentity::new(zeroize::Zeroizing::new("password".into())).with_max_work_factor(4);
        let file = CCTV_X25519[split + 2..].to_vec();
        let plaintext = decrypt(&file, &x25519, &scrypt).expect("the CCTV file decrypts");
        Fixture {
            file,
            plaintext,
            x25519,
            scrypt,
        }
    })
}

fn decrypt(file: &[u8], x: &X25519Identity, s: &ScryptIdentity) -> Option<Vec<u8>> {
    let binary;
    let file = if armor::is_armored(file) {
        binary = armor::decode_armor(file).ok()?;
        &binary[..]
    } else {
        file
    };
    let ids: [&dyn Identity; 2] = [x, s];
    let mut reader = Decryptor::new(file).ok()?.decrypt(&ids).ok()?;
    let mut out = Vec::new();
    reader.read_to_end(&mut out).ok()?;
    Some(out)
}

fuzz_target!(|input: Input| {
    let f = fixture();
    let data = &input.data[..input.data.len().min(1 << 16)];
    let file = if input.raw {
        data.to_vec()
    } else {
        let mut file = f.file.clone();
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
    match decrypt(&file, &f.x25519, &f.scrypt) {
        Some(out) if !input.raw => {
            assert_eq!(
                out, f.plaintext,
                "an edited file decrypted to other plaintext"
            )
        }
        _ => {}
    }
});
