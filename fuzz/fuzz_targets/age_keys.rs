//! age recipient and identity parsing (crate `hwcrypt-age`) on arbitrary
//! text: `age1...` and SSH public key lines, recipients files, identity
//! files (AGE-SECRET-KEY-1 lines, OpenSSH private keys). Never a panic; an
//! X25519 identity that parses prints back to a string that parses to the
//! same public key.
#![no_main]

use hwcrypt_age::X25519Identity;
use hwcrypt_age::keys::{parse_identity_file, parse_recipient, parse_recipients_file};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_identity_file(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_recipient(text);
    let _ = parse_recipients_file(text);
    if let Ok(id) = text.trim().parse::<X25519Identity>() {
        let again: X25519Identity = id
            .to_secret_string()
            .parse()
            .expect("printed identity parses");
        assert_eq!(again.to_public().to_string(), id.to_public().to_string());
    }
});
