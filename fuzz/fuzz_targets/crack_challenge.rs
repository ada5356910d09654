//! The library half of `hwcrypt crack --known OFFSET:TEXT`, `--contains`,
//! `--text-ratio` and the mode/IV/padding options: `Challenge::new` on
//! arbitrary predicates (any offset, byte string and ratio) and ciphertext
//! must never panic, and a challenge it accepts runs a small search (one
//! thread, every runnable batch backend) without panicking, every hit's
//! plaintext being what its key decrypts.
#![no_main]

use hwcrypt::crack::{self, Challenge, KeySpace, Mode, Padding, Predicate, SearchOptions};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum P {
    Contains(Vec<u8>),
    KnownAt(u64, Vec<u8>),
    Text(f64, bool),
}

#[derive(Arbitrary, Debug)]
struct Input {
    mode: u8,
    iv: [u8; 16],
    padding: u8,
    predicates: Vec<P>,
    ciphertext: Vec<u8>,
    backend: u8,
    key_byte_range: u8,
}

fuzz_target!(|input: Input| {
    let mode = match input.mode % 4 {
        0 => Mode::Ecb,
        1 => Mode::Cbc { iv: Some(input.iv) },
        2 => Mode::Cbc { iv: None },
        _ => Mode::Ctr { iv: input.iv },
    };
    let padding = [Padding::Auto, Padding::Pkcs7, Padding::None][usize::from(input.padding % 3)];
    let predicates: Vec<Predicate> = input
        .predicates
        .iter()
        .take(4)
        .map(|p| match p {
            P::Contains(b) => Predicate::Contains(b.clone()),
            // usize::MAX-sized offsets included: what `--known 18446744073709551615:AB` gives.
            P::KnownAt(o, b) => Predicate::KnownAt {
                offset: *o as usize,
                bytes: b.clone(),
            },
            P::Text(r, u) => Predicate::Text {
                min_ratio: *r,
                utf8: *u,
            },
        })
        .collect();
    let ct = input.ciphertext[..input.ciphertext.len().min(256)].to_vec();
    let Ok(challenge) = Challenge::new(ct.clone(), mode, padding, predicates) else {
        return;
    };
    // A key space of at most 16 keys: bytes 0..=N then fifteen zeros.
    let n = input.key_byte_range % 16;
    let space = KeySpace::parse(&format!("0..={n}, 0*15")).expect("key space");
    let backends = crack::runnable_backends();
    let backend = backends[usize::from(input.backend) % backends.len()];
    let options = SearchOptions {
        threads: 1,
        backend: Some(backend),
        find_all: true,
        ..SearchOptions::default()
    };
    let Ok(outcome) = crack::search(&space, &challenge, options, |_| {}) else {
        return;
    };
    for hit in &outcome.hits {
        let mut key = vec![0u8; 16];
        space.key_at(hit.index, &mut key);
        assert_eq!(key, hit.key, "{backend}: hit key and index disagree");
    }
});
