//! Passphrase-protected identities: OpenSSH keys encrypted by ssh-keygen
//! (tests/data/ssh, passphrase `secret`) and an identity file encrypted by
//! age 1.1.1 with `age -p` (tests/data/identity, passphrase `secret`). The
//! passphrase is asked for only when a stanza needs the identity, once.

use hwcrypt_age::keys::{
    parse_identity_file, parse_identity_file_with_passphrase, parse_recipient,
};
use hwcrypt_age::{Decryptor, Encryptor, Error, Identity, PassphraseSource, X25519Identity};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use zeroize::Zeroizing;

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(path),
    )
    .unwrap()
}

fn text(path: &str) -> String {
    String::from_utf8(fixture(path)).unwrap()
}

fn encrypt_to(recipient: &str, msg: &[u8]) -> Vec<u8> {
    let enc = Encryptor::with_recipients(vec![parse_recipient(recipient).unwrap()]).unwrap();
    let mut w = enc.wrap_output(Vec::new()).unwrap();
    w.write_all(msg).unwrap();
    w.finish().unwrap()
}

fn decrypt(file: &[u8], identities: &[Box<dyn Identity>]) -> Result<Vec<u8>, Error> {
    let ids: Vec<&dyn Identity> = identities.iter().map(|b| b.as_ref()).collect();
    let mut r = Decryptor::new(file)?.decrypt(&ids)?;
    let mut out = Vec::new();
    r.read_to_end(&mut out).map_err(Error::from_io)?;
    Ok(out)
}

/// A passphrase source that counts its calls.
fn counted(passphrase: &'static str) -> (PassphraseSource, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let source: PassphraseSource = Box::new(move || {
        seen.fetch_add(1, Ordering::SeqCst);
        Ok(Zeroizing::new(passphrase.to_owned()))
    });
    (source, calls)
}

#[test]
fn encrypted_ssh_keys_open_with_their_passphrase() {
    let msg = b"a message for a locked key".repeat(3000);
    for name in [
        "ssh/id_ed25519_encrypted",
        "ssh/id_rsa_encrypted",
        "ssh/id_ed25519_encrypted_cbc",
    ] {
        let file = encrypt_to(&text(&format!("{name}.pub")), &msg);

        let (source, calls) = counted("secret");
        let ids = parse_identity_file_with_passphrase(&fixture(name), source).unwrap();
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "{name}: asked before needed"
        );
        assert!(format!("{:?}", ids[0]).contains("locked"), "{name}");
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{name}: asked once");
        assert!(format!("{:?}", ids[0]).contains("opened"), "{name}");

        let (source, _) = counted("Secret");
        let ids = parse_identity_file_with_passphrase(&fixture(name), source).unwrap();
        assert!(
            matches!(decrypt(&file, &ids), Err(Error::IdentityPassphrase)),
            "{name}: wrong passphrase"
        );

        // A file for another key: no stanza is for this one, no prompt.
        let other = encrypt_to(&text("ssh/id_ed25519.pub"), &msg);
        let (source, calls) = counted("secret");
        let ids = parse_identity_file_with_passphrase(&fixture(name), source).unwrap();
        assert!(
            matches!(decrypt(&other, &ids), Err(Error::NoMatch)),
            "{name}"
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "{name}: asked for no stanza of its own"
        );

        // Without a passphrase source: a clear error at parse time.
        let err = parse_identity_file(&fixture(name)).unwrap_err().to_string();
        assert!(err.contains("passphrase-protected"), "{name}: {err}");
    }
}

#[test]
fn unsupported_key_ciphers_fail_before_the_prompt() {
    let (source, calls) = counted("secret");
    let err = parse_identity_file_with_passphrase(&fixture("ssh/id_ed25519_encrypted_gcm"), source)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("aes256-gcm@openssh.com is not supported"),
        "{err}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn a_failing_passphrase_source_fails_the_decryption() {
    let file = encrypt_to(&text("ssh/id_ed25519_encrypted.pub"), b"x");
    let source: PassphraseSource = Box::new(|| Err(Error::Key("no terminal".into())));
    let ids =
        parse_identity_file_with_passphrase(&fixture("ssh/id_ed25519_encrypted"), source).unwrap();
    assert_eq!(decrypt(&file, &ids).unwrap_err().to_string(), "no terminal");
}

#[test]
fn age_encrypted_identity_files_binary_and_armored() {
    let msg = b"to the identity in an encrypted file".repeat(2000);
    let file = encrypt_to(text("identity/identity.pub").trim(), &msg);
    for name in ["identity/identity.txt.age", "identity/identity.txt.age.asc"] {
        let (source, calls) = counted("secret");
        let ids = parse_identity_file_with_passphrase(&fixture(name), source).unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{name}");
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{name}");

        let (source, _) = counted("not it");
        let ids = parse_identity_file_with_passphrase(&fixture(name), source).unwrap();
        assert!(
            matches!(decrypt(&file, &ids), Err(Error::IdentityPassphrase)),
            "{name}"
        );

        let err = parse_identity_file(&fixture(name)).unwrap_err().to_string();
        assert!(err.contains("age-encrypted"), "{name}: {err}");
    }
    // An identity file encrypted to a recipient, not a passphrase: refused
    // at parse time.
    let (source, calls) = counted("secret");
    let err = parse_identity_file_with_passphrase(
        &fixture("identity/identity.txt.to-recipient.age"),
        source,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("encrypted with a passphrase"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

/// As age: identities are tried in order, each on every stanza, so one that
/// opens the file first spares the passphrase of a locked one after it.
#[test]
fn a_locked_identity_after_one_that_opens_the_file_is_not_asked() {
    let plain = X25519Identity::generate().unwrap();
    let msg = b"two recipients".to_vec();
    let enc = Encryptor::with_recipients(vec![
        parse_recipient(text("identity/identity.pub").trim()).unwrap(),
        parse_recipient(&plain.to_public().to_string()).unwrap(),
    ])
    .unwrap();
    let mut w = enc.wrap_output(Vec::new()).unwrap();
    w.write_all(&msg).unwrap();
    let file = w.finish().unwrap();

    let (source, calls) = counted("secret");
    let mut ids = vec![Box::new(plain) as Box<dyn Identity>];
    ids.extend(
        parse_identity_file_with_passphrase(&fixture("identity/identity.txt.age"), source).unwrap(),
    );
    assert_eq!(decrypt(&file, &ids).unwrap(), msg);
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // In the other order the locked one is opened (its stanza is first).
    ids.reverse();
    assert_eq!(decrypt(&file, &ids).unwrap(), msg);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn tampered_encrypted_ssh_keys_are_clear_errors() {
    // Flip bytes across the whole armored body: every result is an error
    // or a working key, never a panic.
    let pem = text("ssh/id_ed25519_encrypted");
    let file = encrypt_to(&text("ssh/id_ed25519_encrypted.pub"), b"msg");
    let lines: Vec<&str> = pem.lines().collect();
    let body: String = lines[1..lines.len() - 1].concat();
    use base64::Engine;
    let der = base64::engine::general_purpose::STANDARD
        .decode(&body)
        .unwrap();
    // The bcrypt rounds (a u32 at bytes 63..67) are left out but for the
    // last byte: a flip of a high byte asks for 2^30 rounds, which runs
    // (as OpenSSH would) for hours.
    assert_eq!(&der[63..67], &[0, 0, 0, 16]);
    for i in (0..der.len()).step_by(9).filter(|i| !(63..66).contains(i)) {
        let mut bad = der.clone();
        bad[i] ^= 0x41;
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bad);
        let pem = format!(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
            b64.as_bytes()
                .chunks(70)
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect::<Vec<_>>()
                .join("\n")
        );
        let (source, _) = counted("secret");
        if let Ok(ids) = parse_identity_file_with_passphrase(pem.as_bytes(), source) {
            let _ = decrypt(&file, &ids);
        }
    }
}

#[test]
fn encrypted_pem_rsa_keys_open_with_their_passphrase_and_public_key() {
    use hwcrypt_age::EncryptedPemIdentity;
    let msg = b"a message for a PEM key".repeat(3000);
    let file = encrypt_to(&text("ssh/id_rsa.pub"), &msg);
    // ssh-keygen -m PEM (AES-128-CBC) and openssl rsa -aes256 (AES-256-CBC).
    for name in [
        "ssh/id_rsa_pem_encrypted",
        "ssh/id_rsa_pem_encrypted_aes256",
    ] {
        let pem = fixture(name);
        assert!(EncryptedPemIdentity::detect(&pem), "{name}");
        let public = fixture(&format!("{name}.pub"));

        let (source, calls) = counted("secret");
        let id = EncryptedPemIdentity::parse(&pem, &public, source).unwrap();
        let ids: Vec<Box<dyn Identity>> = vec![Box::new(id)];
        assert_eq!(
            calls.load(Ordering::SeqCst),
            0,
            "{name}: asked before needed"
        );
        assert!(format!("{:?}", ids[0]).contains("locked"), "{name}");
        // Its recipient comes from the public key: no passphrase.
        assert_eq!(ids[0].recipients().unwrap().len(), 1);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(decrypt(&file, &ids).unwrap(), msg, "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{name}: asked once");

        let (source, _) = counted("Secret");
        let ids: Vec<Box<dyn Identity>> = vec![Box::new(
            EncryptedPemIdentity::parse(&pem, &public, source).unwrap(),
        )];
        assert!(
            matches!(decrypt(&file, &ids), Err(Error::IdentityPassphrase)),
            "{name}: wrong passphrase"
        );

        // A file for another key: no prompt.
        let other = encrypt_to(&text("ssh/id_ed25519.pub"), &msg);
        let (source, calls) = counted("secret");
        let ids: Vec<Box<dyn Identity>> = vec![Box::new(
            EncryptedPemIdentity::parse(&pem, &public, source).unwrap(),
        )];
        assert!(
            matches!(decrypt(&other, &ids), Err(Error::NoMatch)),
            "{name}"
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);

        // Without the public key (the plain parser): a clear error.
        let (source, _) = counted("secret");
        let err = parse_identity_file_with_passphrase(&pem, source)
            .unwrap_err()
            .to_string();
        assert!(err.contains("public key"), "{name}: {err}");
        let err = parse_identity_file(&pem).unwrap_err().to_string();
        assert!(err.contains("passphrase-protected"), "{name}: {err}");
    }
}

#[test]
fn encrypted_pem_keys_refused_clearly() {
    use hwcrypt_age::EncryptedPemIdentity;
    let public = fixture("ssh/id_rsa.pub");
    // 3DES (openssl rsa -des3): refused before any prompt.
    let (source, calls) = counted("secret");
    let err =
        EncryptedPemIdentity::parse(&fixture("ssh/id_rsa_pem_encrypted_des3"), &public, source)
            .unwrap_err()
            .to_string();
    assert!(err.contains("DES-EDE3-CBC is not supported"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let pem = fixture("ssh/id_rsa_pem_encrypted");
    // A public key file that is not ssh-rsa, or not a public key.
    let (source, _) = counted("secret");
    let err = EncryptedPemIdentity::parse(&pem, &fixture("ssh/id_ed25519.pub"), source)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no ssh-rsa key"), "{err}");
    let (source, _) = counted("secret");
    assert!(EncryptedPemIdentity::parse(&pem, b"ssh-rsa !!!", source).is_err());

    // The public key of another RSA key, to which the file is encrypted:
    // the stanza is for it, but the private key is not its.
    let other_public = fixture("ssh/id_rsa_encrypted.pub");
    let file = encrypt_to(&text("ssh/id_rsa_encrypted.pub"), b"msg");
    let (source, _) = counted("secret");
    let ids: Vec<Box<dyn Identity>> = vec![Box::new(
        EncryptedPemIdentity::parse(&pem, &other_public, source).unwrap(),
    )];
    let err = decrypt(&file, &ids).unwrap_err().to_string();
    assert!(err.contains("does not match its public key"), "{err}");

    // Flipped bytes anywhere in the body or the IV: an error or the key,
    // never a panic.
    let text_pem = String::from_utf8(pem.clone()).unwrap();
    let file = encrypt_to(&text("ssh/id_rsa.pub"), b"msg");
    for i in (40..text_pem.len() - 40).step_by(7) {
        let mut bad = text_pem.clone().into_bytes();
        if !bad[i].is_ascii_alphanumeric() {
            continue;
        }
        bad[i] = if bad[i] == b'A' { b'B' } else { b'A' };
        let (source, _) = counted("secret");
        if let Ok(id) = EncryptedPemIdentity::parse(&bad, &public, source) {
            let ids: Vec<Box<dyn Identity>> = vec![Box::new(id)];
            let _ = decrypt(&file, &ids);
        }
    }
}
