//! End-to-end tests of `hwcrypt encrypt` / `decrypt` / `keygen`: round trips
//! of every recipient type through the binary, the exit statuses (1 for a
//! bad or tampered file, 2 for usage errors), and the output-file safety
//! rules (nothing left behind on failure, no overwrite without --force,
//! never the input file). Interop with the real `age` binary is in
//! .ci/steps/50-age-interop.sh.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hwcrypt(args: &[&str], dir: &Path, stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwcrypt"));
    cmd.args(args).current_dir(dir);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run hwcrypt");
    let input = stdin.unwrap_or(b"").to_vec();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hwcrypt-age-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 13 + i / 97) as u8).collect()
}

fn ssh_key(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../hwcrypt-age/tests/data/ssh")
        .join(name)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Files in `dir` other than the given ones (temporary leftovers).
fn leftovers(dir: &Path, expected: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(&n.as_str()))
        .collect()
}

fn keygen(dir: &Path) -> String {
    let o = hwcrypt(&["keygen", "-o", "key.txt"], dir, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("key.txt")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("# public key: "))
        .unwrap()
        .to_owned()
}

#[test]
fn x25519_round_trip_files_and_pipes() {
    let dir = tempdir("x25519");
    let recipient = keygen(&dir);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir.join("key.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let y = hwcrypt(&["keygen", "-y", "key.txt"], &dir, None);
    assert_eq!(String::from_utf8_lossy(&y.stdout).trim(), recipient);
    for (len, threads) in [
        (0, "1"),
        (1, "2"),
        (65536, "3"),
        (65537, "1"),
        (3 * 65536, "4"),
        (2_500_000, "2"),
    ] {
        let msg = data(len);
        std::fs::write(dir.join("in.bin"), &msg).unwrap();
        let _ = std::fs::remove_file(dir.join("out.age"));
        let o = hwcrypt(
            &[
                "encrypt", "-r", &recipient, "-j", threads, "-o", "out.age", "in.bin",
            ],
            &dir,
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let o = hwcrypt(
            &["decrypt", "-i", "key.txt", "-j", threads, "out.age"],
            &dir,
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stdout == msg, "len {len}");
        // Armored, through pipes.
        let o = hwcrypt(&["encrypt", "-a", "-r", &recipient], &dir, Some(&msg));
        assert!(
            o.stdout
                .starts_with(b"-----BEGIN AGE ENCRYPTED FILE-----\n")
        );
        let back = hwcrypt(&["decrypt", "-i", "key.txt"], &dir, Some(&o.stdout));
        assert!(back.status.success(), "{}", stderr(&back));
        assert!(back.stdout == msg);
    }
}

/// A regular file is read at offsets (each thread its own chunks), a pipe
/// in order: both give the same bytes. Standard input redirected from a
/// file is read from its position (here after a 5- and a 3-byte prefix
/// another command read), and left at its end as reading in order would.
#[test]
fn files_pipes_and_redirected_standard_input() {
    let dir = tempdir("stdin-offset");
    let recipient = keygen(&dir);
    let msg = data(2 * 1024 * 1024 + 77);
    let mut prefixed = b"12345".to_vec();
    prefixed.extend_from_slice(&msg);
    std::fs::write(dir.join("prefixed.bin"), &prefixed).unwrap();
    let sh = |script: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(&dir)
            .env("HW", env!("CARGO_BIN_EXE_hwcrypt"))
            .env("R", &recipient)
            .output()
            .unwrap()
    };
    let o = sh(
        r#"{ dd bs=1 count=5 of=/dev/null status=none; "$HW" encrypt -j 3 -r "$R" -o out.age; cat; } < prefixed.bin > rest.bin"#,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.join("rest.bin")).unwrap(), b"");
    let sealed = std::fs::read(dir.join("out.age")).unwrap();
    for threads in ["1", "4"] {
        let by_path = hwcrypt(
            &["decrypt", "-i", "key.txt", "-j", threads, "out.age"],
            &dir,
            None,
        );
        assert!(by_path.status.success(), "{}", stderr(&by_path));
        assert!(by_path.stdout == msg);
        let by_pipe = hwcrypt(
            &["decrypt", "-i", "key.txt", "-j", threads],
            &dir,
            Some(&sealed),
        );
        assert!(by_pipe.status.success(), "{}", stderr(&by_pipe));
        assert!(by_pipe.stdout == msg);
        // Encrypted from a pipe, decrypted from a file.
        let o = hwcrypt(
            &["encrypt", "-r", &recipient, "-j", threads],
            &dir,
            Some(&msg),
        );
        std::fs::write(dir.join("piped.age"), &o.stdout).unwrap();
        let back = hwcrypt(
            &["decrypt", "-i", "key.txt", "-j", threads, "piped.age"],
            &dir,
            None,
        );
        assert!(back.stdout == msg);
    }
    let mut prefixed_age = b"xyz".to_vec();
    prefixed_age.extend_from_slice(&sealed);
    std::fs::write(dir.join("prefixed.age"), &prefixed_age).unwrap();
    let o = sh(
        r#"{ dd bs=1 count=3 of=/dev/null status=none; "$HW" decrypt -j 2 -i key.txt -o plain.bin; cat; } < prefixed.age > rest.bin"#,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(dir.join("plain.bin")).unwrap() == msg);
    assert_eq!(std::fs::read(dir.join("rest.bin")).unwrap(), b"");
    // A flipped payload byte in a file read at offsets: exit 1, no output.
    let mut bad = sealed.clone();
    let at = bad.len() - 70_000;
    bad[at] ^= 1;
    std::fs::write(dir.join("bad.age"), &bad).unwrap();
    let o = hwcrypt(
        &[
            "decrypt", "-i", "key.txt", "-j", "3", "-o", "bad.bin", "bad.age",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(!dir.join("bad.bin").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn post_quantum_keygen_round_trip_and_mixing() {
    let dir = tempdir("pq");
    let classic = keygen(&dir);
    let o = hwcrypt(&["keygen", "--pq", "-o", "pq.txt"], &dir, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("pq.txt")).unwrap();
    assert!(text.lines().any(|l| l.starts_with("AGE-SECRET-KEY-PQ-1")));
    let recipient = text
        .lines()
        .find_map(|l| l.strip_prefix("# public key: "))
        .unwrap()
        .to_owned();
    assert!(recipient.starts_with("age1pq1") && recipient.len() == 1959);
    assert!(stderr(&o).contains(&recipient));
    // -y prints the recipients of both kinds of identity, in file order.
    let both = format!(
        "{text}{}",
        std::fs::read_to_string(dir.join("key.txt")).unwrap()
    );
    let y = hwcrypt(&["keygen", "-y"], &dir, Some(both.as_bytes()));
    assert!(y.status.success(), "{}", stderr(&y));
    let lines: Vec<String> = String::from_utf8_lossy(&y.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines, [recipient.clone(), classic.clone()]);
    let msg = data(65537);
    for threads in ["1", "3"] {
        let o = hwcrypt(
            &["encrypt", "-r", &recipient, "-j", threads],
            &dir,
            Some(&msg),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stdout.windows(16).any(|w| w == b"-> mlkem768x2551"));
        let back = hwcrypt(
            &["decrypt", "-i", "pq.txt", "-j", threads],
            &dir,
            Some(&o.stdout),
        );
        assert!(back.status.success(), "{}", stderr(&back));
        assert!(back.stdout == msg);
        // The classic key does not match it: exit 1.
        let wrong = hwcrypt(&["decrypt", "-i", "key.txt"], &dir, Some(&o.stdout));
        assert_eq!(code(&wrong), 1);
    }
    // Classic and post-quantum recipients are not mixed (usage error).
    let o = hwcrypt(
        &["encrypt", "-r", &recipient, "-r", &classic],
        &dir,
        Some(b"x"),
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("cannot be mixed"));
    let o = hwcrypt(&["keygen", "--pq", "-y", "pq.txt"], &dir, None);
    assert_eq!(code(&o), 2);
}

#[test]
fn ssh_and_recipient_files() {
    let dir = tempdir("ssh");
    let msg = data(70_000);
    std::fs::write(dir.join("in.bin"), &msg).unwrap();
    let recipient = keygen(&dir);
    let list = format!(
        "# a list\n{recipient}\n{}",
        std::fs::read_to_string(ssh_key("id_rsa.pub")).unwrap()
    );
    std::fs::write(dir.join("list.txt"), list).unwrap();
    let ed_pub = ssh_key("id_ed25519.pub");
    let o = hwcrypt(
        &[
            "encrypt",
            "-R",
            "list.txt",
            "-R",
            ed_pub.to_str().unwrap(),
            "-o",
            "out.age",
            "in.bin",
        ],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for id in [
        ssh_key("id_ed25519"),
        ssh_key("id_rsa"),
        dir.join("key.txt"),
    ] {
        let o = hwcrypt(
            &["decrypt", "-q", "-i", id.to_str().unwrap(), "out.age"],
            &dir,
            None,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stdout == msg);
    }
}

/// Passphrase-protected identities (an OpenSSH key encrypted by ssh-keygen,
/// an identity file encrypted by `age -p`), their passphrase from
/// --passphrase-file (the terminal prompt is driven through a pty in
/// .ci/steps/50-age-interop.sh).
#[test]
fn passphrase_protected_identities() {
    let dir = tempdir("locked");
    let msg = data(70_000);
    std::fs::write(dir.join("in.bin"), &msg).unwrap();
    std::fs::write(dir.join("pass.txt"), "secret\n").unwrap();
    std::fs::write(dir.join("wrong.txt"), "Secret\n").unwrap();
    let age_data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hwcrypt-age/tests/data/identity");
    let age_recipient = std::fs::read_to_string(age_data.join("identity.pub")).unwrap();
    let cases = [
        (
            ssh_key("id_ed25519_encrypted.pub"),
            ssh_key("id_ed25519_encrypted"),
        ),
        (ssh_key("id_rsa_encrypted.pub"), ssh_key("id_rsa_encrypted")),
        // Legacy encrypted PEM: its public key read from the .pub beside it.
        (ssh_key("id_rsa.pub"), ssh_key("id_rsa_pem_encrypted")),
        (PathBuf::new(), age_data.join("identity.txt.age")),
        (PathBuf::new(), age_data.join("identity.txt.age.asc")),
    ];
    for (public, identity) in cases {
        let _ = std::fs::remove_file(dir.join("out.age"));
        let to = if public.as_os_str().is_empty() {
            vec!["-r", age_recipient.trim()]
        } else {
            vec!["-R", public.to_str().unwrap()]
        };
        let mut args = vec!["encrypt"];
        args.extend(&to);
        args.extend(["-o", "out.age", "in.bin"]);
        let o = hwcrypt(&args, &dir, None);
        assert!(o.status.success(), "{}", stderr(&o));
        let id = identity.to_str().unwrap();
        let o = hwcrypt(
            &[
                "decrypt",
                "-q",
                "-i",
                id,
                "--passphrase-file",
                "pass.txt",
                "out.age",
            ],
            &dir,
            None,
        );
        assert!(o.status.success(), "{id}: {}", stderr(&o));
        assert!(o.stdout == msg, "{id}");
        let o = hwcrypt(
            &[
                "decrypt",
                "-q",
                "-i",
                id,
                "--passphrase-file",
                "wrong.txt",
                "-o",
                "out.bin",
                "out.age",
            ],
            &dir,
            None,
        );
        assert_eq!(code(&o), 1, "{id}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            "hwcrypt: error: incorrect passphrase for the passphrase-protected identity\n"
        );
        assert!(leftovers(&dir, &["in.bin", "pass.txt", "wrong.txt", "out.age"]).is_empty());
    }
    // An encrypted PEM key without its .pub: a usage error naming both.
    std::fs::copy(ssh_key("id_rsa_pem_encrypted"), dir.join("pem_key")).unwrap();
    let o = hwcrypt(
        &[
            "decrypt",
            "-q",
            "-i",
            "pem_key",
            "--passphrase-file",
            "pass.txt",
            "out.age",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with(
            "hwcrypt: error: pem_key: a passphrase-protected PEM key needs its public key, \
             read from pem_key.pub: "
        ) && stderr(&o).contains("ssh-keygen -p -f pem_key"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(dir.join("pem_key")).unwrap();
    // Not asked for (a wrong passphrase file is never read) when an
    // identity before it opens the file.
    let recipient = keygen(&dir);
    let o = hwcrypt(
        &[
            "encrypt",
            "-r",
            &recipient,
            "-R",
            ssh_key("id_ed25519_encrypted.pub").to_str().unwrap(),
            "-o",
            "two.age",
            "in.bin",
        ],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let locked = ssh_key("id_ed25519_encrypted");
    let o = hwcrypt(
        &[
            "decrypt",
            "-i",
            "key.txt",
            "-i",
            locked.to_str().unwrap(),
            "--passphrase-file",
            "wrong.txt",
            "two.age",
        ],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == msg);
    // A key cipher neither age nor hwcrypt reads: exit 2 before any prompt.
    let o = hwcrypt(
        &[
            "decrypt",
            "-i",
            ssh_key("id_ed25519_encrypted_gcm").to_str().unwrap(),
            "two.age",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("aes256-gcm@openssh.com is not supported"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn passphrase_round_trip_and_rules() {
    let dir = tempdir("pass");
    std::fs::write(dir.join("pass.txt"), "correct horse\n").unwrap();
    std::fs::write(dir.join("wrong.txt"), "wrong horse\n").unwrap();
    let msg = data(1000);
    let o = hwcrypt(
        &["encrypt", "--passphrase-file", "pass.txt", "-a"],
        &dir,
        Some(&msg),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let file = o.stdout;
    let o = hwcrypt(
        &["decrypt", "--passphrase-file", "pass.txt"],
        &dir,
        Some(&file),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, msg);
    let o = hwcrypt(
        &["decrypt", "--passphrase-file", "wrong.txt"],
        &dir,
        Some(&file),
    );
    assert_eq!(code(&o), 1);
    assert!(!stderr(&o).contains("horse"));
    let recipient = keygen(&dir);
    let o = hwcrypt(
        &["encrypt", "--passphrase-file", "pass.txt", "-r", &recipient],
        &dir,
        Some(&msg),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn failures_exit_1_and_leave_nothing() {
    let dir = tempdir("fail");
    let recipient = keygen(&dir);
    let msg = data(200_000);
    let o = hwcrypt(&["encrypt", "-r", &recipient], &dir, Some(&msg));
    let good = o.stdout;
    let payload = good.windows(4).position(|w| w == b"--- ").unwrap();
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut flipped = good.clone();
    flipped[good.len() - 100] ^= 1;
    cases.push(("flipped payload", flipped));
    cases.push((
        "truncated at a chunk",
        good[..good.len() - (200_000 - 3 * 65536) - 16].to_vec(),
    ));
    cases.push(("truncated", good[..good.len() - 1].to_vec()));
    cases.push(("appended", [&good[..], b"x"].concat()));
    let mut mac = good.clone();
    mac[payload + 5] ^= 1;
    cases.push(("header MAC", mac));
    cases.push(("not age", b"hello\n".to_vec()));
    cases.push(("empty", Vec::new()));
    for (what, bytes) in cases {
        std::fs::write(dir.join("bad.age"), &bytes).unwrap();
        let o = hwcrypt(
            &["decrypt", "-i", "key.txt", "-o", "plain.bin", "bad.age"],
            &dir,
            None,
        );
        assert_eq!(code(&o), 1, "{what}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).lines().count(),
            1,
            "{what}: one line: {}",
            stderr(&o)
        );
        assert!(
            leftovers(&dir, &["key.txt", "bad.age"]).is_empty(),
            "{what}: files left"
        );
    }
    // Wrong key.
    std::fs::write(dir.join("bad.age"), &good).unwrap();
    let other = tempdir("fail-other");
    keygen(&other);
    let o = hwcrypt(
        &[
            "decrypt",
            "-i",
            other.join("key.txt").to_str().unwrap(),
            "-o",
            "p",
            "bad.age",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(leftovers(&dir, &["key.txt", "bad.age"]).is_empty());
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempdir("usage");
    let recipient = keygen(&dir);
    std::fs::write(dir.join("in.bin"), b"data").unwrap();
    std::fs::write(dir.join("exists"), b"keep me").unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["encrypt", "in.bin"],
        vec!["encrypt", "-r", "age1bogus", "in.bin"],
        vec!["encrypt", "-r", &recipient, "-o", "exists", "in.bin"],
        vec![
            "encrypt", "-r", &recipient, "-o", "in.bin", "--force", "in.bin",
        ],
        vec!["encrypt", "-r", &recipient, "-j", "0", "in.bin"],
        vec!["decrypt", "-i", "missing.txt", "in.bin"],
        vec!["decrypt", "-i", "in.bin", "in.bin"],
    ];
    for args in cases {
        let o = hwcrypt(&args, &dir, None);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(dir.join("exists")).unwrap(), b"keep me");
    assert_eq!(std::fs::read(dir.join("in.bin")).unwrap(), b"data");
    // An invalid HWCRYPT_CPU mask: one line and exit 2, as for the other
    // commands (it panicked in the age crate), and no output file.
    for args in [
        vec!["encrypt", "-r", &recipient, "-o", "new.age", "in.bin"],
        vec![
            "encrypt",
            "--passphrase-file",
            "in.bin",
            "-o",
            "new.age",
            "in.bin",
        ],
        vec!["decrypt", "-i", "key.txt", "-o", "new.bin", "exists"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
            .args(&args)
            .current_dir(&dir)
            .env("HWCRYPT_CPU", "bogus")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("hwcrypt: error: invalid HWCRYPT_CPU: 'bogus'")
                && stderr(&o).lines().count() == 1,
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!dir.join("new.age").exists() && !dir.join("new.bin").exists());
    }
    // A device is written in place (no temporary file beside /dev/null).
    let o = hwcrypt(
        &["encrypt", "-r", &recipient, "-o", "/dev/null", "in.bin"],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // --force replaces an existing output atomically.
    let o = hwcrypt(
        &[
            "encrypt", "-r", &recipient, "-o", "exists", "--force", "in.bin",
        ],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = hwcrypt(&["decrypt", "-i", "key.txt", "exists"], &dir, None);
    assert_eq!(o.stdout, b"data");
}

#[test]
fn identity_permissions_warn() {
    let dir = tempdir("perm");
    let recipient = keygen(&dir);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("key.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = hwcrypt(&["encrypt", "-r", &recipient], &dir, Some(b"x"));
    let d = hwcrypt(&["decrypt", "-i", "key.txt"], &dir, Some(&o.stdout));
    assert!(d.status.success());
    assert!(stderr(&d).contains("warning"), "{}", stderr(&d));
    let secret = std::fs::read_to_string(dir.join("key.txt")).unwrap();
    let secret_line = secret.lines().last().unwrap();
    assert!(!stderr(&d).contains(secret_line));
}

/// Found in review (2026-11-29): a failed rename left the decrypted
/// temporary file behind; an unwritable output directory exited 2; `keygen
/// -o FILE --force` wrote the key into the old file with its old mode, and
/// through a symbolic link; armor was not recognised when the first read
/// of a pipe returned fewer than ten bytes.
#[test]
fn output_failures_keygen_force_and_split_armor() {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("review");
    let recipient = keygen(&dir);
    let msg = data(70_000);
    std::fs::write(dir.join("p"), &msg).unwrap();
    let o = hwcrypt(
        &["encrypt", "-r", &recipient, "-o", "v.age", "p"],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = hwcrypt(
        &["encrypt", "-a", "-r", &recipient, "-o", "v.asc", "p"],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));

    // The output is a directory: refused before any work (a usage error),
    // nothing is left.
    std::fs::create_dir(dir.join("outdir")).unwrap();
    let o = hwcrypt(
        &[
            "decrypt", "-i", "key.txt", "-o", "outdir", "--force", "v.age",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(leftovers(&dir, &["key.txt", "p", "v.age", "v.asc", "outdir"]).is_empty());
    assert_eq!(std::fs::read_dir(dir.join("outdir")).unwrap().count(), 0);

    // No such directory: an I/O failure (1), not a usage error (2).
    let o = hwcrypt(
        &["decrypt", "-i", "key.txt", "-o", "no/such/dir/x", "v.age"],
        &dir,
        None,
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));

    // keygen --force over a 0644 file and over a symbolic link.
    std::fs::write(dir.join("old.txt"), "old\n").unwrap();
    std::fs::set_permissions(dir.join("old.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = hwcrypt(&["keygen", "-o", "old.txt", "--force"], &dir, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = std::fs::metadata(dir.join("old.txt")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    std::fs::write(dir.join("target.txt"), "t\n").unwrap();
    std::os::unix::fs::symlink("target.txt", dir.join("lnk")).unwrap();
    // The link is followed (it stays); its target is replaced by a new
    // 0600 file (a secret key does not take the old file's mode).
    let o = hwcrypt(&["keygen", "-o", "lnk", "--force"], &dir, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let key = std::fs::read_to_string(dir.join("target.txt")).unwrap();
    assert!(key.contains("AGE-SECRET-KEY-1"));
    let link = std::fs::symlink_metadata(dir.join("lnk")).unwrap();
    assert!(link.file_type().is_symlink());
    let target = std::fs::metadata(dir.join("target.txt")).unwrap();
    assert_eq!(target.permissions().mode() & 0o777, 0o600);

    // Armor through a pipe whose first read returns five bytes.
    let armored = std::fs::read(dir.join("v.asc")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args(["decrypt", "-i", "key.txt"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        pipe.write_all(&armored[..5]).unwrap();
        pipe.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        pipe.write_all(&armored[5..]).unwrap();
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, msg);
}

/// Found in review (2026-11-29), each against age 1.1.1: `-R -` and `-i -`
/// read standard input; key files over 16 MiB are refused before they fill
/// memory; unsupported SSH keys in a recipients file are skipped with a
/// warning; a wrong passphrase says so; `keygen` to a non-terminal prints
/// the public key on stderr and warns about a world-readable file.
#[test]
fn stdin_key_files_size_cap_skipped_keys_and_keygen_notes() {
    let dir = tempdir("stdin-keys");
    let recipient = keygen(&dir);
    std::fs::write(dir.join("in.bin"), b"data").unwrap();
    let key = std::fs::read(dir.join("key.txt")).unwrap();
    let o = hwcrypt(
        &["encrypt", "-R", "-", "-o", "a.age", "in.bin"],
        &dir,
        Some(format!("{recipient}\n").as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = hwcrypt(&["decrypt", "-i", "-", "a.age"], &dir, Some(&key));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(o.stdout, b"data");
    // Standard input cannot be the key and the data.
    let o = hwcrypt(&["decrypt", "-i", "-"], &dir, Some(&key));
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("standard input"), "{}", stderr(&o));
    // 16 MiB and one byte of key file.
    std::fs::write(dir.join("big"), vec![b'#'; (16 << 20) + 1]).unwrap();
    for args in [
        &["decrypt", "-i", "big", "a.age"][..],
        &["encrypt", "-R", "big", "in.bin"],
    ] {
        let o = hwcrypt(args, &dir, None);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(stderr(&o).contains("larger than 16 MiB"), "{}", stderr(&o));
    }
    // An ECDSA line beside a usable recipient: skipped, with a warning.
    let ecdsa = std::fs::read_to_string(ssh_key("id_ecdsa.pub")).unwrap();
    std::fs::write(dir.join("list"), format!("{}\n{recipient}\n", ecdsa.trim())).unwrap();
    let o = hwcrypt(
        &["encrypt", "-R", "list", "-o", "b.age", "in.bin"],
        &dir,
        None,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 1: ignoring unsupported SSH key type ecdsa"),
        "{}",
        stderr(&o)
    );
    // A wrong passphrase.
    std::fs::write(dir.join("p1"), "one\n").unwrap();
    std::fs::write(dir.join("p2"), "two\n").unwrap();
    let o = hwcrypt(
        &[
            "encrypt",
            "--passphrase-file",
            "p1",
            "-o",
            "p.age",
            "in.bin",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = hwcrypt(&["decrypt", "--passphrase-file", "p2", "p.age"], &dir, None);
    assert_eq!(code(&o), 1);
    assert_eq!(stderr(&o), "hwcrypt: error: incorrect passphrase\n");
    // keygen into a pipe: the public key on stderr.
    let o = hwcrypt(&["keygen"], &dir, None);
    assert_eq!(code(&o), 0);
    let public = stderr(&o);
    assert!(public.starts_with("Public key: age1"), "{public}");
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains(public.trim_start_matches("Public key: ").trim())
    );
}

/// Found in review (2026-11-29): `--force` renamed over a symbolic link
/// (`/dev/stdout` became a file) and reset an existing file's mode; a
/// directory output failed only at the end; a file made at the output path
/// while the command ran was overwritten; `-j` had no bound; `keygen -y`
/// ignored `-o` and read any amount; a closed pipe was an error; SIGTERM
/// left the temporary file.
#[test]
fn review_2026_11_29_output_targets() {
    use std::io::{Read, Write};
    use std::os::unix::fs::{PermissionsExt, symlink};
    let dir = tempdir("targets");
    let msg = data(300_000);
    std::fs::write(dir.join("in.bin"), &msg).unwrap();
    let recipient = keygen(&dir);
    let decrypts = |file: &str| {
        let o = hwcrypt(&["decrypt", "-i", "key.txt", file], &dir, None);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        o.stdout == msg
    };

    // A symbolic link is followed; the existing file keeps its mode.
    std::fs::write(dir.join("target.age"), "old").unwrap();
    std::fs::set_permissions(
        dir.join("target.age"),
        std::fs::Permissions::from_mode(0o640),
    )
    .unwrap();
    symlink("target.age", dir.join("link.age")).unwrap();
    let o = hwcrypt(
        &[
            "encrypt", "-r", &recipient, "-o", "link.age", "--force", "in.bin",
        ],
        &dir,
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::symlink_metadata(dir.join("link.age"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let mode = std::fs::metadata(dir.join("target.age"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(decrypts("target.age"));
    symlink("nowhere", dir.join("dangling")).unwrap();
    let o = hwcrypt(
        &[
            "encrypt", "-r", &recipient, "-o", "dangling", "--force", "in.bin",
        ],
        &dir,
        None,
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));

    // Directories, refused before any work.
    std::fs::create_dir(dir.join("sub")).unwrap();
    for (out, force) in [
        ("sub", false),
        ("sub", true),
        ("sub/", true),
        ("nowhere/", false),
    ] {
        let mut args = vec!["encrypt", "-r", &recipient, "-o", out, "in.bin"];
        if force {
            args.push("--force");
        }
        let o = hwcrypt(&args, &dir, None);
        assert_eq!(code(&o), 2, "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains("directory"), "{out}: {}", stderr(&o));
    }

    // -j bounds.
    for j in ["0", "1025", "18446744073709551615"] {
        let o = hwcrypt(
            &["encrypt", "-j", j, "-r", &recipient, "in.bin"],
            &dir,
            None,
        );
        assert_eq!(code(&o), 2, "-j {j}");
    }

    // keygen -y -o, and the 16 MiB cap on what it reads.
    let o = hwcrypt(&["keygen", "-y", "key.txt", "-o", "pub.txt"], &dir, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("pub.txt")).unwrap(),
        format!("{recipient}\n")
    );
    let o = hwcrypt(&["keygen", "-y", "/dev/zero"], &dir, None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("larger than 16 MiB"), "{}", stderr(&o));

    let temp = || {
        std::fs::read_dir(&dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".hwcrypt-tmp")
        })
    };
    let wait_for_temp = || {
        let start = std::time::Instant::now();
        while !temp() && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(temp(), "no temporary file appeared");
    };
    // `[wrapper] hwcrypt encrypt -r R -o OUT` reading `first` from a pipe
    // kept open, once its temporary file exists.
    let start_encrypt = |wrapper: Option<&str>, out: &str, first: &[u8]| {
        let mut cmd = match wrapper {
            Some(w) => {
                let mut c = std::process::Command::new(w);
                c.arg(env!("CARGO_BIN_EXE_hwcrypt"));
                c
            }
            None => std::process::Command::new(env!("CARGO_BIN_EXE_hwcrypt")),
        };
        let mut child = cmd
            .args(["encrypt", "-r", &recipient, "-o", out])
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(first).unwrap();
        wait_for_temp();
        (child, stdin)
    };
    let signal = |child: &std::process::Child, name: &str| {
        let sent = std::process::Command::new("kill")
            .args([name, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    };

    // A file made at the output path while the command ran is kept.
    let (child, stdin) = start_encrypt(None, "late.age", b"some plaintext");
    std::fs::write(dir.join("late.age"), "important").unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("late.age")).unwrap(),
        "important"
    );

    // SIGTERM while writing: the temporary file is removed.
    let (mut child, stdin) = start_encrypt(None, "term.age", &msg);
    signal(&child, "-TERM");
    let _ = child.wait().unwrap();
    drop(stdin);
    assert!(!temp(), "temporary file left after SIGTERM");
    assert!(!dir.join("term.age").exists());

    // Under nohup, SIGHUP stays ignored: the command finishes.
    if std::process::Command::new("nohup")
        .arg("true")
        .output()
        .is_ok()
    {
        let (child, stdin) = start_encrypt(Some("nohup"), "hup.age", &msg);
        signal(&child, "-HUP");
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(decrypts("hup.age"));
    }

    // A reader that goes away (`| head -c1`): exit 0, no message.
    let o = hwcrypt(
        &["encrypt", "-r", &recipient, "-o", "big.age", "in.bin"],
        &dir,
        None,
    );
    assert!(o.status.success());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args(["decrypt", "-i", "key.txt", "big.age"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut one = [0u8; 1];
    out.read_exact(&mut one).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}
