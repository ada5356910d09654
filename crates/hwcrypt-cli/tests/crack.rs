//! End-to-end tests of `hwcrypt crack` (small key spaces, so they are fast).

use hwcrypt::aes::Aes;
use hwcrypt::modes::Cbc;
use std::process::{Command, Output};

const TEXT: &[u8] = b"It was a bright cold day in April, and the clocks were striking thirteen. \
Winston Smith, his chin nuzzled into his breast in an effort to escape the vile wind, slipped \
quickly through the glass doors of Victory Mansions.";

fn hwcrypt(args: &[&str], mask: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwcrypt"));
    cmd.args(args);
    match mask {
        Some(m) => cmd.env("HWCRYPT_CPU", m),
        None => cmd.env_remove("HWCRYPT_CPU"),
    };
    cmd.output().expect("run hwcrypt")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// AES-256-CBC of TEXT under a key whose first 3 bytes are `k`, rest zero.
fn challenge(k: [u8; 3]) -> (String, String) {
    let mut key = [0u8; 32];
    key[..3].copy_from_slice(&k);
    let ct = Cbc::new(Aes::new(&key).unwrap(), &[0x11; 16])
        .unwrap()
        .encrypt_padded(TEXT);
    (hex(&ct), hex(&key))
}

const SPACE: &str = "0..=16*3, 0*29";

#[test]
fn finds_the_key_and_prints_it() {
    let (ct, key) = challenge([16, 3, 9]);
    let out = hwcrypt(
        &["crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains(&format!("found key: {key}")), "{stdout}");
    assert!(stdout.contains("cold day in April"), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("4913 keys") && stderr.contains("backend:"),
        "{stderr}"
    );
}

#[test]
fn json_on_every_backend() {
    let (ct, key) = challenge([1, 2, 3]);
    for backend in ["soft", "aesni", "vaes-avx2", "vaes-avx512"] {
        let out = hwcrypt(
            &[
                "crack",
                "-k",
                SPACE,
                "-m",
                "cbc",
                "--hex",
                &ct,
                "--iv",
                "11111111111111111111111111111111",
                "--prefix",
                "It was a bright cold day",
                "--backend",
                backend,
                "--json",
            ],
            None,
        );
        if !hwcrypt::crack::runnable_backends().contains(&backend.parse().unwrap()) {
            assert_eq!(out.status.code(), Some(2), "{backend}: {out:?}");
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{backend}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["found"], true);
        assert_eq!(v["key"], key.as_str());
        assert_eq!(v["backend"], backend);
        assert_eq!(v["keyspace_size"], 4913);
        assert!(v["plaintext"].as_str().unwrap().starts_with("It was"));
        // The whole known block 1 ("bright cold day ") is checked forward.
        assert!(!v["filter_blocks"].as_array().unwrap().is_empty());
    }
}

#[test]
fn not_found_exits_1_and_errors_exit_2() {
    let (ct, _) = challenge([16, 3, 9]);
    let out = hwcrypt(
        &[
            "crack",
            "-k",
            "0..=15*3, 0*29",
            "-m",
            "cbc",
            "--hex",
            &ct,
            "--text",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("not found"));
    for args in [
        vec![
            "crack", "-k", "?*9, 0*7", "-m", "ecb", "--hex", "00", "--text",
        ],
        vec![
            "crack",
            "-k",
            SPACE,
            "-m",
            "cbc",
            "--hex",
            &ct[..30],
            "--text",
        ],
        vec!["crack", "-k", SPACE, "-m", "ctr", "--hex", &ct, "--text"],
        vec!["crack", "-k", SPACE, "-m", "cbc", "--hex", &ct],
        vec![
            "crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--shard", "3/3",
        ],
        vec![
            "crack",
            "-k",
            SPACE,
            "-m",
            "cbc",
            "--hex",
            &ct,
            "--text",
            "--backend",
            "x",
        ],
    ] {
        let out = hwcrypt(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("hwcrypt: error: "), "{err}");
    }
}

#[test]
fn shards_split_the_space_and_one_finds_the_key() {
    let (ct, key) = challenge([7, 0, 12]);
    let mut next = 0;
    let mut found = 0;
    for i in 0..3 {
        let shard = format!("{i}/3");
        let out = hwcrypt(
            &[
                "crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--shard", &shard,
                "--json",
            ],
            None,
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["range"][0], next);
        next = v["range"][1].as_u64().unwrap();
        if v["found"] == true {
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(v["key"], key.as_str());
            found += 1;
        } else {
            assert_eq!(out.status.code(), Some(1));
        }
    }
    assert_eq!((next, found), (4913, 1));
}

#[test]
fn resume_file_and_start_position() {
    let (ct, _) = challenge([0, 0, 5]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    // A saved position past the key: the resumed search misses it.
    std::fs::write(
        &state,
        format!(r#"{{"keyspace":"{SPACE}","shard":null,"position":6,"completed":false}}"#),
    )
    .unwrap();
    let resume = state.to_str().unwrap();
    let args = [
        "crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--resume", resume, "--json",
    ];
    let out = hwcrypt(&args, None);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["range"][0], 6);
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["position"], 4913);
    assert_eq!(saved["completed"], true);
    // A file for another key space is refused.
    let out = hwcrypt(
        &[
            "crack",
            "-k",
            "0..=15*3, 0*29",
            "-m",
            "cbc",
            "--hex",
            &ct,
            "--text",
            "--resume",
            resume,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // --start 5 finds it (index 5), --start 6 does not.
    let out = hwcrypt(
        &[
            "crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--start", "5",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_with_the_position() {
    let (ct, _) = challenge([16, 16, 16]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-int-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    // A large space on the slow portable backend: still running after 300 ms.
    let child = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args([
            "crack",
            "-k",
            "?*3, 0..=16*3, 0*26",
            "-m",
            "cbc",
            "--hex",
            &ct,
            "--text",
            "--backend",
            "soft",
            "--resume",
        ])
        .arg(&state)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("interrupted at position"), "{err}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["completed"], false);
    assert!(saved["position"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
