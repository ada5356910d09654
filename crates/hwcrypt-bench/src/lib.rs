//! Shared pieces of hwcrypt's opt-in benchmarks (criterion benches in
//! `benches/`, the `aes-throughput` probe in `src/bin/`), and [`speed`], the
//! measurement harness behind `hwcrypt speed`.

pub mod speed;

use hwcrypt::aes::Aes;
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};

/// The AES modes the benchmarks know, by the names they print.
pub const AES_MODES: [&str; 9] = [
    "ecb-enc",
    "ecb-dec",
    "cbc-enc",
    "cbc-dec",
    "ctr",
    "cfb128-enc",
    "cfb128-dec",
    "cfb8-enc",
    "ofb",
];

/// Processes one whole message in place with `mode`, as a protocol would: a
/// fresh mode object (and IV) per message, the key expanded beforehand.
/// Returns `false` for an unknown mode name.
pub fn aes_message(mode: &str, aes: &Aes, buf: &mut [u8]) -> bool {
    let iv = [0x5a; 16];
    // Lengths are multiples of 16 in every caller; a failure is a bug.
    let whole = "benchmark sizes are whole blocks";
    match mode {
        "ecb-enc" => Ecb::new(aes).encrypt(buf).expect(whole),
        "ecb-dec" => Ecb::new(aes).decrypt(buf).expect(whole),
        "cbc-enc" => Cbc::new(aes, &iv)
            .and_then(|mut c| c.encrypt(buf))
            .expect(whole),
        "cbc-dec" => Cbc::new(aes, &iv)
            .and_then(|mut c| c.decrypt(buf))
            .expect(whole),
        "ctr" => Ctr::new(aes, &iv).expect("16-byte IV").apply_keystream(buf),
        "cfb128-enc" => Cfb128::new(aes, &iv).expect("16-byte IV").encrypt(buf),
        "cfb128-dec" => Cfb128::new(aes, &iv).expect("16-byte IV").decrypt(buf),
        "cfb8-enc" => Cfb8::new(aes, &iv).expect("16-byte IV").encrypt(buf),
        "ofb" => Ofb::new(aes, &iv).expect("16-byte IV").apply_keystream(buf),
        _ => return false,
    }
    true
}
