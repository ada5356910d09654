//! `hwcrypt openssl-config`: the printed file is a configuration the
//! system's `openssl` accepts, naming the module given; a missing module
//! is one error line and exit status 2. (The provider itself is tested
//! end to end by .ci/steps/70-openssl-provider.sh.)

use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .arg("openssl-config")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run hwcrypt")
}

#[test]
fn prints_a_config_openssl_accepts() {
    let dir = std::env::temp_dir().join(format!("hwcrypt-openssl-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A stand-in module file: openssl fails to load it, and must carry on
    // with `default` (what the config promises for a broken module).
    let module = dir.join("hwcrypt.so");
    std::fs::write(&module, b"not a module").unwrap();
    let out = run(&["--module", module.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("module = {}\n", module.display())),
        "{text}"
    );
    assert!(text.contains("default_properties = ?provider=hwcrypt\n"));
    assert!(text.contains("[default_sect]\nactivate = 1\n"));
    let conf = dir.join("hwcrypt.cnf");
    std::fs::write(&conf, &text).unwrap();
    let enc = Command::new("openssl")
        .args([
            "enc",
            "-aes-128-ctr",
            "-K",
            "000102030405060708090a0b0c0d0e0f",
        ])
        .args([
            "-iv",
            "000102030405060708090a0b0c0d0e0f",
            "-in",
            "/dev/null",
        ])
        .env("OPENSSL_CONF", &conf)
        .output()
        .expect("openssl is installed (.ci/run installs it)");
    assert!(enc.status.success(), "{enc:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_module_is_one_error_line() {
    let out = run(&["--module", "/nonexistent/hwcrypt.so"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("build-module.sh"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Found in review (2026-11-29): a module path that is not UTF-8 was
/// written with U+FFFD (naming another file) and exit status 0.
#[cfg(unix)]
#[test]
fn a_non_utf8_module_path_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let base = std::env::temp_dir().join(format!("hwcrypt-conf-{}-", std::process::id()));
    let mut bytes = base.as_os_str().as_bytes().to_vec();
    bytes.push(0xff);
    let dir = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&bytes));
    std::fs::create_dir_all(&dir).unwrap();
    let module = dir.join("hwcrypt.so");
    std::fs::write(&module, b"not a module").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args(["openssl-config", "--module"])
        .arg(&module)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not UTF-8"));
    std::fs::remove_dir_all(&dir).unwrap();
}
