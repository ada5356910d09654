//! The age armor (crate `hwcrypt-age`): `decode_armor` on arbitrary input
//! never panics, and what it accepts re-encodes (with `ArmoredWriter`) to
//! armor that decodes to the same bytes; any binary input armors and
//! decodes back to itself.
#![no_main]

use hwcrypt_age::armor::{ArmoredWriter, decode_armor, is_armored};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fn armor(data: &[u8]) -> Vec<u8> {
    let mut w = ArmoredWriter::new(Vec::new()).unwrap();
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

fuzz_target!(|data: &[u8]| {
    let _ = is_armored(data);
    if let Ok(binary) = decode_armor(data) {
        assert_eq!(decode_armor(&armor(&binary)).unwrap(), binary);
    }
    let armored = armor(data);
    assert!(is_armored(&armored));
    assert_eq!(decode_armor(&armored).unwrap(), data, "armor round trip");
});
