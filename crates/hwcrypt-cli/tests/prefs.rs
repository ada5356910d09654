//! `hwcrypt prefs` end to end, checked against the real tools: the OpenSSL
//! strings must be accepted by `openssl ciphers` and list exactly the
//! intended suites in order, the emitted openssl.cnf must make an
//! `openssl s_server` choose as advised, and the OpenSSH list must be
//! accepted by `ssh`. These tests need the `openssl` and `ssh` binaries and
//! fail (never skip) without them; `.ci/run` installs them.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `hwcrypt prefs ARGS` with `HWCRYPT_CPU` set to `mask` (or unset).
fn prefs(args: &[&str], mask: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hwcrypt"));
    cmd.arg("prefs").args(args);
    match mask {
        Some(m) => cmd.env("HWCRYPT_CPU", m),
        None => cmd.env_remove("HWCRYPT_CPU"),
    };
    cmd.output().expect("run hwcrypt")
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{o:?}");
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json(args: &[&str], mask: Option<&str>) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout(&prefs(&all, mask))).expect("valid JSON")
}

/// Runs an external tool; a missing tool is a test failure, not a skip.
fn tool(program: &str, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run `{program}` ({e}): the prefs tests need openssl and ssh \
             (apt-get install openssl openssh-client; .ci/run does this)"
        )
    })
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

fn str_of<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .fold(v, |v, k| &v[*k])
        .as_str()
        .unwrap_or_else(|| panic!("{path:?} is not a string"))
}

/// Does this CPU have AES hardware in BoringSSL's sense (AES-NI and PCLMULQDQ)?
fn cpu_has_aes_hardware() -> bool {
    let out = Command::new(env!("CARGO_BIN_EXE_hwcrypt"))
        .args(["cpu", "--json"])
        .env_remove("HWCRYPT_CPU")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let detected = v["detected"].as_array().unwrap();
    ["aes", "pclmulqdq"]
        .iter()
        .all(|f| detected.iter().any(|d| d == f))
}

/// `HWCRYPT_CPU` settings with and without AES hardware (the CLI child gets
/// the variable set explicitly, whatever the test process runs under).
const MASKS: [Option<&str>; 3] = [None, Some("none"), Some("-pclmulqdq")];

/// `openssl ciphers -v` output as (name, protocol) pairs.
fn openssl_listing(out: &Output) -> Vec<(String, String)> {
    assert!(
        out.status.success(),
        "openssl rejected it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let mut cols = l.split_whitespace();
            let name = cols.next().unwrap_or_default().to_string();
            let proto = cols.next().unwrap_or_default().to_string();
            (name, proto)
        })
        .collect()
}

fn only(listing: &[(String, String)], proto: &str) -> Vec<String> {
    listing
        .iter()
        .filter(|(_, p)| p == proto)
        .map(|(n, _)| n.clone())
        .collect()
}

#[test]
fn openssl_accepts_the_tls12_string_and_lists_exactly_it() {
    for mask in MASKS {
        let v = json(&[], mask);
        let string = str_of(&v, &["openssl", "cipher_string"]);
        let intended = names(&v["openssl"]["tls12"]);
        assert_eq!(intended.len(), 6);
        assert_eq!(string, intended.join(":"));
        // `openssl ciphers` silently drops names it does not know, so the
        // listing must be compared, not just the exit status.
        let listing = openssl_listing(&tool("openssl", &["ciphers", "-v", string], &[]));
        assert_eq!(only(&listing, "TLSv1.2"), intended, "{mask:?}");
        // Nothing but ECDHE with an AEAD, ECDSA or RSA.
        for line in String::from_utf8(tool("openssl", &["ciphers", "-v", string], &[]).stdout)
            .unwrap()
            .lines()
            .filter(|l| l.contains("TLSv1.2"))
        {
            assert!(
                line.contains("Kx=ECDH ") && line.contains("Mac=AEAD"),
                "{line}"
            );
            assert!(
                line.contains("Au=ECDSA") || line.contains("Au=RSA"),
                "{line}"
            );
        }
    }
}

#[test]
fn openssl_accepts_the_tls13_ciphersuites_and_lists_exactly_them() {
    for mask in MASKS {
        let v = json(&[], mask);
        let list = str_of(&v, &["openssl", "ciphersuites"]);
        let intended = names(&v["openssl"]["tls13"]);
        assert_eq!(intended.len(), 3);
        let out = tool(
            "openssl",
            &["ciphers", "-s", "-tls1_3", "-ciphersuites", list],
            &[],
        );
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            intended.join(":")
        );
        let out = tool(
            "openssl",
            &["ciphers", "-v", "-s", "-tls1_3", "-ciphersuites", list],
            &[],
        );
        assert_eq!(
            only(&openssl_listing(&out), "TLSv1.3"),
            intended,
            "{mask:?}"
        );
    }
}

/// A scratch directory of this test process, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "hwcrypt-prefs-{tag}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_openssl_conf_snippet_configures_openssl() {
    let dir = Scratch::new("conf");
    for mask in MASKS {
        let v = json(&[], mask);
        let conf = dir.0.join("hwcrypt.cnf");
        std::fs::write(&conf, stdout(&prefs(&["--format", "openssl"], mask))).unwrap();
        assert_eq!(
            std::fs::read_to_string(&conf).unwrap(),
            str_of(&v, &["openssl", "conf"])
        );
        // With no cipher argument, `openssl ciphers` shows the library's
        // default list, which the configuration's system_default sets.
        let listing = openssl_listing(&tool(
            "openssl",
            &["ciphers", "-v"],
            &[("OPENSSL_CONF", &conf)],
        ));
        assert_eq!(
            only(&listing, "TLSv1.3"),
            names(&v["openssl"]["tls13"]),
            "{mask:?}"
        );
        assert_eq!(
            only(&listing, "TLSv1.2"),
            names(&v["openssl"]["tls12"]),
            "{mask:?}"
        );
        assert_eq!(listing.len(), 9, "{listing:?}");
    }
}

/// Starts `openssl s_server` under `conf`, connects once per client offer
/// (extra `s_client` arguments) and returns the suite chosen for each.
fn negotiate(dir: &Path, conf: &Path, offers: &[&[&str]]) -> Vec<String> {
    let (key, cert) = (dir.join("key.pem"), dir.join("cert.pem"));
    let no_conf = [("OPENSSL_CONF", Path::new("/dev/null"))];
    if !cert.exists() {
        let out = tool(
            "openssl",
            &[
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-keyout",
                key.to_str().unwrap(),
                "-out",
                cert.to_str().unwrap(),
            ],
            &no_conf,
        );
        assert!(out.status.success(), "{out:?}");
    }
    let naccept = offers.len().to_string();
    // -www: answer without reading stdin; -naccept: exit after the clients.
    let mut server = Command::new("openssl")
        .args([
            "s_server",
            "-accept",
            "127.0.0.1:0",
            "-www",
            "-naccept",
            &naccept,
            "-cert",
            cert.to_str().unwrap(),
            "-key",
            key.to_str().unwrap(),
        ])
        .env("OPENSSL_CONF", conf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot run openssl s_server (install openssl)");
    let port = BufReader::new(server.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("ACCEPT ")
                .and_then(|a| a.rsplit(':').next())
                .map(str::to_string)
        })
        .expect("s_server printed no ACCEPT line");
    let connect = format!("127.0.0.1:{port}");
    let chosen = offers
        .iter()
        .map(|offer| {
            let args = [&["s_client", "-connect", connect.as_str()][..], offer].concat();
            let out = tool("openssl", &args, &no_conf);
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .find_map(|l| l.split("Cipher is ").nth(1).map(str::to_string))
                .unwrap_or_else(|| "(no handshake)".to_string())
        })
        .collect();
    let _ = server.kill();
    let _ = server.wait();
    chosen
}

#[test]
fn an_openssl_server_with_the_snippet_chooses_as_advised() {
    let dir = Scratch::new("server");
    // A client without AES hardware lists ChaCha20 first; an OpenSSL-style
    // client lists AES-256 first and ChaCha20 before AES-128.
    let offers: [&[&str]; 4] = [
        &[
            "-ciphersuites",
            "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256",
        ],
        &[
            "-ciphersuites",
            "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256",
        ],
        &[
            "-tls1_2",
            "-cipher",
            "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256",
        ],
        &[
            "-tls1_2",
            "-cipher",
            "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256",
        ],
    ];
    let run = |mask| {
        let conf = dir.0.join("server.cnf");
        std::fs::write(&conf, stdout(&prefs(&["--format", "openssl"], mask))).unwrap();
        negotiate(&dir.0, &conf, &offers)
    };
    if cpu_has_aes_hardware() {
        // This server's order (AES-128-GCM first) for everyone, except
        // ChaCha20 for the clients that list it first: PrioritizeChaCha.
        assert_eq!(
            run(None),
            [
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_AES_128_GCM_SHA256",
                "ECDHE-ECDSA-CHACHA20-POLY1305",
                "ECDHE-ECDSA-AES128-GCM-SHA256"
            ]
        );
    } else {
        eprintln!("skipped the AES-hardware half: this CPU lacks AES-NI or PCLMULQDQ");
    }
    // Without AES hardware: ChaCha20 for every client that offers it.
    assert_eq!(
        run(Some("none")),
        [
            "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_CHACHA20_POLY1305_SHA256",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        ]
    );
}

fn ssh_ciphers() -> Vec<String> {
    let out = tool("ssh", &["-Q", "cipher"], &[]);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn ssh_accepts_the_openssh_list() {
    let known = ssh_ciphers();
    for mask in MASKS {
        for legacy in [false, true] {
            let args: &[&str] = if legacy { &["--ssh-legacy"] } else { &[] };
            let v = json(args, mask);
            let list = str_of(&v, &["openssh", "ciphers"]);
            let intended = names(&v["openssh"]["choices"]);
            assert_eq!(list, intended.join(","));
            assert_eq!(intended.len(), if legacy { 9 } else { 6 });
            for name in &intended {
                assert!(
                    known.contains(name),
                    "`ssh -Q cipher` lacks {name}: {known:?}"
                );
            }
            // `ssh -G` parses the option and prints the resulting config;
            // -F /dev/null keeps any user configuration out.
            let out = tool(
                "ssh",
                &[
                    "-F",
                    "/dev/null",
                    "-G",
                    "-o",
                    &format!("Ciphers={list}"),
                    "localhost",
                ],
                &[],
            );
            assert!(out.status.success(), "ssh rejected {list}: {out:?}");
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(
                text.lines().any(|l| l == format!("ciphers {list}")),
                "{list}\n{text}"
            );
            // The emitted snippets carry the same list.
            let snippet = stdout(&prefs(&[&["--format", "openssh"], args].concat(), mask));
            assert!(
                snippet.contains(&format!("Host *\n    Ciphers {list}\n")),
                "{snippet}"
            );
            assert!(
                snippet.contains(&format!("\nCiphers {list}\n")),
                "{snippet}"
            );
        }
    }
}

#[test]
fn legacy_ssh_ciphers_need_the_flag_and_warn() {
    let plain = prefs(&["--format", "openssh"], None);
    assert!(plain.stderr.is_empty(), "{plain:?}");
    assert!(!stdout(&plain).contains("cbc"));
    let legacy = prefs(&["--format", "openssh", "--ssh-legacy"], None);
    let err = String::from_utf8(legacy.stderr.clone()).unwrap();
    assert!(
        err.starts_with("hwcrypt: warning: legacy CBC ciphers"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    let text = stdout(&legacy);
    assert!(
        text.contains(",aes128-cbc,aes192-cbc,aes256-cbc\n"),
        "{text}"
    );
    assert!(text.contains("# WARNING: "));
    // TLS never gets legacy suites.
    let v = json(&["--ssh-legacy"], None);
    assert!(!str_of(&v, &["openssl", "cipher_string"]).contains("CBC"));
}

/// The first entry of every ordered list in a JSON recommendation.
fn firsts(v: &Value) -> Vec<String> {
    vec![
        names(&v["openssh"]["choices"])[0].clone(),
        names(&v["openssl"]["tls13"])[0].clone(),
        names(&v["openssl"]["tls12"])[0].clone(),
        names(&v["openssl"]["tls12"])[1].clone(),
        v["boringssl"]["groups"][0][0].as_str().unwrap().to_string(),
        v["go"]["cipher_suites"][0].as_str().unwrap().to_string(),
    ]
}

#[test]
fn hwcrypt_cpu_none_puts_chacha_first_everywhere() {
    let chacha = [
        "chacha20-poly1305@openssh.com",
        "TLS_CHACHA20_POLY1305_SHA256",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ];
    let aes = [
        "aes128-gcm@openssh.com",
        "TLS_AES_128_GCM_SHA256",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ];
    for mask in ["none", "-aes", "-pclmulqdq", "-ssse3"] {
        let v = json(&[], Some(mask));
        assert_eq!(v["aes_hardware"]["present"], false, "{mask}");
        assert_eq!(v["mask"], mask);
        assert_eq!(firsts(&v), chacha, "{mask}");
        assert_eq!(v["server"]["prioritize_chacha"], false);
        // Every snippet leads with ChaCha20 too.
        for (format, needle) in [
            ("openssl", "CipherString = ECDHE-ECDSA-CHACHA20-POLY1305:"),
            ("openssl", "Ciphersuites = TLS_CHACHA20_POLY1305_SHA256:"),
            ("nginx", "ssl_ciphers ECDHE-ECDSA-CHACHA20-POLY1305:"),
            (
                "nginx",
                "ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256:",
            ),
            ("openssh", "Ciphers chacha20-poly1305@openssh.com,"),
            ("boringssl", "\"ECDHE-ECDSA-CHACHA20-POLY1305:"),
            (
                "go",
                "[]uint16{\n\t\ttls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,",
            ),
        ] {
            let text = stdout(&prefs(&["--format", format], Some(mask)));
            assert!(text.contains(needle), "{mask} {format}: {needle}\n{text}");
        }
    }
    let v = json(&[], None);
    if cpu_has_aes_hardware() {
        assert_eq!(v["aes_hardware"]["present"], true);
        assert_eq!(firsts(&v), aes);
        assert_eq!(v["server"]["prioritize_chacha"], true);
        let nginx = stdout(&prefs(&["--format", "nginx"], None));
        assert!(nginx.contains("ssl_conf_command Options PrioritizeChaCha;"));
        // Masking only the wide units keeps AES hardware.
        assert_eq!(firsts(&json(&[], Some("-vaes,-avx2"))), aes);
    } else {
        eprintln!("skipped the AES-hardware half: this CPU lacks AES-NI or PCLMULQDQ");
        assert_eq!(firsts(&v), chacha);
    }
}

#[test]
fn human_output_has_a_reason_per_choice_and_snippet_formats_only_the_snippet() {
    for mask in [None, Some("none")] {
        let text = stdout(&prefs(&[], mask));
        for needle in [
            "AES hardware:",
            "OpenSSH Ciphers",
            "TLS 1.3 (OpenSSL Ciphersuites)",
            "TLS 1.2 (OpenSSL cipher string",
            "PrioritizeChaCha",
            "BoringSSL",
            "Go crypto/tls",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in\n{text}");
        }
        // Numbered entries, each with a reason on the same line.
        let entries: Vec<_> = text
            .lines()
            .filter(|l| {
                l.trim_start()
                    .split_once(". ")
                    .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            })
            .collect();
        assert_eq!(entries.len(), 6 + 3 + 6, "{text}");
        for e in entries {
            assert!(e.split_whitespace().count() > 4, "no reason: {e}");
        }
    }
    for format in ["openssh", "openssl", "nginx", "boringssl", "go"] {
        let text = stdout(&prefs(&["--format", format], None));
        assert!(!text.contains("AES hardware:"), "{format}");
        assert!(!text.is_empty());
    }
    assert!(stdout(&prefs(&["--format", "go"], None)).contains("cfg := &tls.Config{"));
}

#[test]
fn measure_ranks_by_the_figures_it_shows() {
    for mask in [None, Some("none")] {
        let v = json(&["--measure"], mask);
        assert_eq!(v["basis"], "measured");
        let m = &v["measurements"];
        assert_eq!(m["sizes"], serde_json::json!([1420, 16384]));
        let results = m["results"].as_array().unwrap();
        assert_eq!(results.len(), 6 * 2);
        let score = |cipher: &str| {
            let figs: Vec<f64> = results
                .iter()
                .filter(|r| r["cipher"] == cipher)
                .map(|r| r["gbps"].as_f64().unwrap())
                .collect();
            assert_eq!(figs.len(), 2);
            assert!(
                figs.iter().all(|g| *g > 0.0 && g.is_finite()),
                "{cipher}: {figs:?}"
            );
            (figs[0] * figs[1]).sqrt()
        };
        let by_name = [
            ("TLS_AES_128_GCM_SHA256", "aes-128-gcm"),
            ("TLS_AES_256_GCM_SHA384", "aes-256-gcm"),
            ("TLS_CHACHA20_POLY1305_SHA256", "chacha20-poly1305"),
        ];
        let order: Vec<f64> = names(&v["openssl"]["tls13"])
            .iter()
            .map(|n| score(by_name.iter().find(|(t, _)| t == n).unwrap().1))
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] >= w[1]),
            "{mask:?}: {order:?}"
        );
        if mask == Some("none") {
            assert!(
                results.iter().all(|r| r["backend"] == "soft"),
                "{results:?}"
            );
        }
        // The human form shows the table.
        let text = stdout(&prefs(&["--measure"], mask));
        assert!(text.contains("1420 B") && text.contains("16 KiB") && text.contains("GB/s"));
    }
}

#[test]
fn bad_mask_is_one_line_and_exit_2() {
    let out = prefs(&["--format", "openssl"], Some("-bogus"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("hwcrypt: error: invalid HWCRYPT_CPU"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// Found in review (2026-11-29): `--format openssh` is two snippets, and
/// its `Host *` block stops sshd when appended to sshd_config; the
/// `--ssh-legacy` warning came with formats that print no SSH lines.
#[test]
fn ssh_and_sshd_snippets_apart_and_the_legacy_warning_only_with_ssh_lines() {
    let client = stdout(&prefs(&["--format", "ssh-config"], None));
    assert!(
        client.contains("Host *") && client.contains("    Ciphers "),
        "{client}"
    );
    let server = stdout(&prefs(&["--format", "sshd-config"], None));
    assert!(
        !server.contains("Host") && server.contains("\nCiphers "),
        "{server}"
    );
    let both = stdout(&prefs(&["--format", "openssh"], None));
    assert_eq!(both, format!("{client}\n{server}"));
    let o = prefs(&["--ssh-legacy", "--format", "nginx"], None);
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
    let o = prefs(&["--ssh-legacy", "--format", "sshd-config"], None);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{o:?}"
    );
}
