//! End-to-end tests of the `hwcrypt` binary.

use std::process::{Command, Output};

fn hwcrypt(args: &[&str], mask: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwcrypt"));
    cmd.args(args);
    match mask {
        Some(m) => cmd.env("HWCRYPT_CPU", m),
        None => cmd.env_remove("HWCRYPT_CPU"),
    };
    cmd.output().expect("run hwcrypt")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json(args: &[&str], mask: Option<&str>) -> serde_json::Value {
    let out = hwcrypt(args, mask);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn cpu_table_names_every_backend_and_the_selection() {
    let out = hwcrypt(&["cpu"], None);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    for needle in [
        "CPU:",
        "Detected:",
        "HWCRYPT_CPU:",
        "Usable:",
        "aes (",
        "soft",
        "aesni",
        "vaes-avx2",
        "selected",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

#[test]
fn cpu_json_has_the_documented_shape() {
    let v = json(&["cpu", "--json"], None);
    assert!(v["detected"].is_array() && v["usable"].is_array());
    assert!(v["mask"].is_null());
    let aes = v["algorithms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "aes")
        .expect("aes listed");
    let backends = aes["backends"].as_array().unwrap();
    let names: Vec<_> = backends
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["vaes-avx512", "vaes-avx2", "aesni", "soft"],
        "highest priority first"
    );
    let selected: Vec<_> = backends
        .iter()
        .filter(|b| b["status"] == "selected")
        .collect();
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0]["name"], aes["selected"]);
}

#[test]
fn mask_none_selects_soft_everywhere() {
    let v = json(&["cpu", "--json"], Some("none"));
    assert_eq!(v["mask"], "none");
    assert_eq!(v["usable"].as_array().unwrap().len(), 0);
    for alg in v["algorithms"].as_array().unwrap() {
        assert_eq!(alg["selected"], "soft", "{alg}");
    }
}

#[test]
fn mask_minus_vaes_drops_only_the_vaes_backend() {
    let v = json(&["cpu", "--json"], Some("-vaes"));
    assert!(!v["usable"].as_array().unwrap().iter().any(|f| f == "vaes"));
    let aes = &v["algorithms"][0];
    assert_ne!(aes["selected"], "vaes-avx2");
    let detected_vaes = v["detected"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "vaes");
    let vaes_row = aes["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "vaes-avx2")
        .unwrap();
    if detected_vaes {
        assert_eq!(vaes_row["status"], "masked");
        assert_eq!(vaes_row["masked"], serde_json::json!(["vaes"]));
    } else {
        assert_eq!(vaes_row["status"], "unsupported");
    }
}

#[test]
fn usage_errors_are_one_line_and_exit_2() {
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["encrypt", "--bogus"],
            "unexpected argument '--bogus'",
            "hwcrypt encrypt --help",
        ),
        (
            &["crack"],
            "required arguments were not provided: --keyspace",
            "hwcrypt crack --help",
        ),
        (
            &["encryp"],
            "unrecognized subcommand 'encryp'",
            "hwcrypt --help",
        ),
        (
            &["speed", "--sizes"],
            "a value is required for '--sizes",
            "hwcrypt speed --help",
        ),
        (
            &["encrypt", "-j", "x"],
            "invalid value 'x'",
            "hwcrypt encrypt --help",
        ),
        (
            &["--bogus"],
            "unexpected argument '--bogus'",
            "hwcrypt --help",
        ),
    ];
    for (args, message, help) in cases {
        let out = hwcrypt(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("hwcrypt: error: "), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            err.trim_end().ends_with(&format!("see '{help}')")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    // Help and version are not errors.
    for args in [&["--help"][..], &["--version"], &["encrypt", "--help"]] {
        let out = hwcrypt(args, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        assert!(!out.stdout.is_empty());
    }
}

#[test]
fn bad_mask_is_one_line_and_exit_2() {
    for bad in ["bogus", "-avx3", "+vaes", "vaes"] {
        let out = hwcrypt(&["cpu"], Some(bad));
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{bad}: {err}");
        assert!(
            err.starts_with("hwcrypt: error: invalid HWCRYPT_CPU"),
            "{bad}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Found in review (2026-11-29): an argument that is not UTF-8 in a usage
/// error made the one-line rendering panic (exit 134).
#[cfg(unix)]
#[test]
fn a_non_utf8_argument_is_a_usage_error() {
    use std::os::unix::ffi::OsStrExt;
    for args in [&[&b"\xff"[..]][..], &[b"--bogus", b"\xff"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
            .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    }
}
