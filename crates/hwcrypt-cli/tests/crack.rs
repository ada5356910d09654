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
        // The child runs without HWCRYPT_CPU: whether it can run a backend
        // depends on the CPU only.
        if out.status.code() == Some(2) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                backend != "soft" && err.contains("cannot run"),
                "{backend}: {err}"
            );
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
    // A file of an older hwcrypt, without the challenge fingerprint: it
    // cannot show which challenge it belongs to, so it is refused, naming
    // the --start that continues it.
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
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without a challenge fingerprint") && stderr.contains("--start 6"),
        "{stderr}"
    );
    // A position past the key (--start with a new resume file): the
    // resumed search misses it.
    std::fs::remove_file(&state).unwrap();
    let mut start_args = args.to_vec();
    start_args.extend(["--start", "6"]);
    let out = hwcrypt(&start_args, None);
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

/// A search that runs for hours (a large space on the slow portable
/// backend) with `--resume STATE` and `extra` flags; its output piped or
/// discarded.
#[cfg(unix)]
fn long_search(
    ct: &str,
    state: &std::path::Path,
    extra: &[&str],
    piped: bool,
) -> std::process::Child {
    let out = || {
        if piped {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        }
    };
    Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args([
            "crack",
            "-k",
            "?*3, 0..=16*3, 0*26",
            "-m",
            "cbc",
            "--hex",
            ct,
            "--text",
            "--backend",
            "soft",
        ])
        .args(extra)
        .arg("--resume")
        .arg(state)
        .stdout(out())
        .stderr(out())
        .spawn()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_with_the_position() {
    let (ct, _) = challenge([16, 16, 16]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-int-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let mut child = long_search(&ct, &state, &[], true);
    // The header is printed once the Ctrl-C handler is in place.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut err = String::new();
    while !err.contains("backend:") {
        let n = std::io::BufRead::read_line(&mut stderr, &mut err).unwrap();
        assert!(n > 0, "stderr closed early: {err}");
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?} {err}");
    assert!(err.contains("interrupted at position"), "{err}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["completed"], false);
    assert!(saved["position"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With --resume, the position is saved during the search too (every
/// --checkpoint seconds): a search killed outright (SIGKILL: no handler
/// runs) leaves a resume file to continue from.
#[cfg(unix)]
#[test]
fn resume_file_is_saved_periodically() {
    let (ct, _) = challenge([16, 16, 16]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-ckpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let mut child = long_search(&ct, &state, &["--checkpoint", "1"], false);
    // Wait for the first checkpoint (up to 60 s on a loaded machine).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut first = None;
    while std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
        if let Ok(text) = std::fs::read_to_string(&state) {
            first = Some(text);
            break;
        }
    }
    // And for a second one further on, then kill it with no chance to save.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    child.kill().unwrap();
    child.wait().unwrap();
    let first = first.expect("no checkpoint within 60 s");
    let first: serde_json::Value = serde_json::from_str(&first).unwrap();
    let last: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(last["completed"], false, "{last}");
    assert!(last["challenge"].is_string(), "{last}");
    assert!(
        last["position"].as_u64().unwrap() >= first["position"].as_u64().unwrap(),
        "{first} then {last}"
    );
    assert!(last["position"].as_u64().unwrap() > 0, "{last}");
    // No temporary files left behind by the saves.
    let left = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(left, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A found key is printed before the resume file is saved; if saving fails
/// the run warns naming the file and still reports the key (exit 0).
#[test]
fn found_key_survives_an_unwritable_resume_file() {
    let (ct, key) = challenge([3, 1, 4]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-missing-{}", std::process::id()));
    let state = dir.join("no-such-dir").join("state.json");
    let out = hwcrypt(
        &[
            "crack",
            "-k",
            SPACE,
            "-m",
            "cbc",
            "--hex",
            &ct,
            "--text",
            "--resume",
            state.to_str().unwrap(),
        ],
        None,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("found key: {key}")), "{stdout}");
    assert!(
        stderr.contains("warning") && stderr.contains(state.to_str().unwrap()),
        "{stderr}"
    );
}

/// The resume file records the hits and the challenge; another challenge
/// (same key space) refuses it; a symlink planted at the old fixed temp
/// name is not followed.
#[cfg(unix)]
#[test]
fn resume_file_is_tied_to_the_challenge_and_written_safely() {
    let (ct, key) = challenge([2, 7, 1]);
    let (other_ct, _) = challenge([2, 7, 2]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-tie-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let victim = dir.join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("state.tmp~")).unwrap();
    let run = |ct: &str| {
        hwcrypt(
            &[
                "crack",
                "-k",
                SPACE,
                "-m",
                "cbc",
                "--hex",
                ct,
                "--text",
                "--all",
                "--resume",
                state.to_str().unwrap(),
            ],
            None,
        )
    };
    let out = run(&ct);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(saved["completed"], true, "{saved}");
    assert_eq!(saved["hits"][0]["key"], key.as_str(), "{saved}");
    assert!(saved["challenge"].is_string(), "{saved}");
    let out = run(&other_ct);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("another challenge"), "{stderr}");
    // No temporary files are left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A search in which every key whose plaintext contains one given byte
/// matches: many per batch (JSON output, two threads).
const WEAK_PREDICATE: [&str; 12] = [
    "crack",
    "-k",
    "?*3,0*13",
    "-m",
    "ecb",
    "--hex",
    "40a0183193c4aeb247e900a656b0a813",
    "--contains-hex",
    "0a",
    "-t",
    "2",
    "--json",
];

/// Found in review (2026-11-29): without --all, several keys of one batch
/// were reported; a rerun with the resume file of a search that had found
/// its key searched on past it and said "not found"; a closed stdout made
/// any search exit 0 ("found").
#[test]
fn one_key_without_all_resume_after_a_hit_and_a_closed_pipe() {
    let out = hwcrypt(&WEAK_PREDICATE, None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");

    let (ct, key) = challenge([0, 0, 5]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-rerun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let resume = state.to_str().unwrap();
    let args = [
        "crack", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--resume", resume,
    ];
    for run in ["first", "rerun"] {
        let out = hwcrypt(&args, None);
        assert_eq!(out.status.code(), Some(0), "{run}: {out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("found key: {key}")),
            "{run}: {stdout}"
        );
        assert!(stdout.contains("cold day in April"), "{run}: {stdout}");
    }
    // An edited record (another key) is confirmed against the challenge
    // and dropped: the search runs (from the saved position) instead.
    let text = std::fs::read_to_string(&state).unwrap();
    let forged = text.replace(&key, &"ab".repeat(32));
    std::fs::write(&state, forged).unwrap();
    let out = hwcrypt(&args, None);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(&"ab".repeat(32)),
        "{out:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    // Not found, stdout closed at once: still 1.
    #[cfg(unix)]
    {
        use std::process::Stdio;
        let (ct, _) = challenge([0, 0, 5]);
        let mut child = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
            .args([
                "crack",
                "-k",
                "0..=4*3, 0*29",
                "-m",
                "cbc",
                "--hex",
                &ct,
                "--text",
            ])
            .env_remove("HWCRYPT_CPU")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        assert_eq!(child.wait().unwrap().code(), Some(1));
    }
}

/// Found in review (2026-11-29): `--all` with a predicate most keys pass
/// gathered hits without bound (gigabytes of JSON in seconds). It stops at
/// `--max-hits` (default 1000) with the position to continue from.
#[test]
fn all_stops_at_max_hits_with_a_position() {
    let mut base = WEAK_PREDICATE.to_vec();
    base.push("--all");
    let out = hwcrypt(&base, None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = v["hits"].as_array().unwrap();
    // Threads finish the batch they are in: a few over the limit.
    assert!((1000..1300).contains(&hits.len()), "{}", hits.len());
    assert_eq!(v["hit_limit"], true, "{}", v["hit_limit"]);
    assert_eq!(v["completed"], false);
    let position = v["position"].as_u64().unwrap();
    assert!(position > 0 && position < 1 << 24, "{position}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("stopped after") && stderr.contains(&format!("--start {position}")),
        "{stderr}"
    );
    // Continuing from the position: hits from there on.
    let start = position.to_string();
    let mut more = base.to_vec();
    more.extend(["--max-hits", "5", "--start", &start]);
    let out = hwcrypt(&more, None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert!(hits.len() >= 5, "{v}");
    assert!(
        hits.iter()
            .all(|h| h["index"].as_u64().unwrap() >= position),
        "{v}"
    );
    // 0, or without --all: usage errors.
    for extra in [&["--max-hits", "0"][..], &["--max-hits", "x"]] {
        let mut args = base.to_vec();
        args.extend(extra);
        assert_eq!(hwcrypt(&args, None).status.code(), Some(2), "{extra:?}");
    }
    let mut args = base[..base.len() - 1].to_vec();
    args.extend(["--max-hits", "5"]);
    assert_eq!(hwcrypt(&args, None).status.code(), Some(2));
}

/// A failed write is an I/O failure (1), not a usage error (2); a bad
/// HWCRYPT_CPU and a module path openssl.cnf cannot hold are usage errors.
#[cfg(target_os = "linux")]
#[test]
fn write_failures_exit_1_and_openssl_config_refuses_what_it_cannot_write() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .arg("cpu")
        .env_remove("HWCRYPT_CPU")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let module = std::env::current_exe().unwrap();
    let out = hwcrypt(
        &["openssl-config", "--module", module.to_str().unwrap()],
        Some("bogus"),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let dir = std::env::temp_dir().join(format!("hwcrypt-cnf-{}#x", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let odd = dir.join("hwcrypt.so");
    std::fs::write(&odd, b"not a module").unwrap();
    let out = hwcrypt(&["openssl-config", "--module", odd.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("'#'"),
        "{out:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Found in review (2026-11-29): stdout that cannot be written (a full
/// disk) lost the `--resume` file, and with it the key; and `searched`
/// left out the batch the key was found in.
#[cfg(target_os = "linux")]
#[test]
fn resume_file_is_saved_when_stdout_fails() {
    let (ct, key) = challenge([2, 7, 1]);
    let dir = std::env::temp_dir().join(format!("hwcrypt-crack-full-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args([
            "crack", "-q", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text",
        ])
        .args(["--resume", state.to_str().unwrap()])
        .env_remove("HWCRYPT_CPU")
        .stdout(full)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains(&key), "{saved}");
    let out = hwcrypt(
        &[
            "crack", "-q", "-t", "1", "-k", SPACE, "-m", "cbc", "--hex", &ct, "--text", "--json",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let index = v["hits"][0]["index"].as_u64().unwrap();
    assert_eq!(v["searched"].as_u64().unwrap(), index + 1, "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
}
