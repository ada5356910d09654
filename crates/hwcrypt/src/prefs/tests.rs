//! Unit tests of the cipher-preference logic and its renderings (pure
//! functions on made-up hardware). Not the tests against the real `openssl`
//! and `ssh` programs, which are `crates/hwcrypt-cli/tests/prefs.rs`.

use super::render::names;
use super::*;
use crate::Backend;

fn x86(features: &[Feature]) -> AesHardware {
    let f = Features::of(features);
    aes_hardware_x86_64(f, f)
}

fn ssh_names(r: &Recommendation) -> Vec<&'static str> {
    names(&r.openssh).collect()
}

#[test]
fn x86_needs_both_aesni_and_pclmulqdq() {
    assert!(x86(&[Feature::Aes, Feature::Pclmulqdq]).present);
    assert!(x86(&Feature::ALL).present);
    let no_clmul = x86(&[Feature::Aes, Feature::Ssse3, Feature::Avx]);
    assert!(!no_clmul.present);
    assert_eq!(no_clmul.reason, "the CPU lacks PCLMULQDQ");
    assert!(!x86(&[Feature::Pclmulqdq]).present);
    assert!(!x86(&[]).present);
    // Masked rather than missing: same decision, different wording.
    let all = Features::of(&Feature::ALL);
    let masked = aes_hardware_x86_64(all, Mask::parse("-aes").unwrap().apply(all));
    assert!(!masked.present);
    assert_eq!(masked.reason, "AES-NI switched off by HWCRYPT_CPU");
    let none = aes_hardware_x86_64(all, Mask::parse("none").unwrap().apply(all));
    assert!(!none.present && none.reason.contains("PCLMULQDQ switched off"));
    assert!(aes_hardware_x86_64(all, Mask::parse("-vaes").unwrap().apply(all)).present);
    // SSSE3 masked: hwcrypt's AES backends cannot run (found in review,
    // 2026-11-29: the rule put AES-GCM first while `speed` ran it in
    // software).
    let no_ssse3 = aes_hardware_x86_64(all, Mask::parse("-ssse3").unwrap().apply(all));
    assert!(!no_ssse3.present);
    assert!(
        no_ssse3.reason.contains("SSSE3 switched off"),
        "{}",
        no_ssse3.reason
    );
}

#[test]
fn aarch64_needs_both_aes_and_pmull_hwcaps() {
    let none = Mask::default();
    let fp_asimd = 0b11;
    assert!(aes_hardware_aarch64(fp_asimd | hwcap::AES | hwcap::PMULL, none).present);
    let a = aes_hardware_aarch64(fp_asimd | hwcap::AES, none);
    assert!(!a.present);
    assert_eq!(a.reason, "AT_HWCAP lacks PMULL");
    assert!(!aes_hardware_aarch64(hwcap::PMULL, none).present);
    assert!(!aes_hardware_aarch64(0, none).present);
    // HWCRYPT_CPU narrows it: -aes takes AES, -pclmulqdq PMULL, none both.
    let both = hwcap::AES | hwcap::PMULL;
    for (mask, gone) in [("-aes", "AES"), ("-pclmulqdq", "PMULL"), ("none", "AES")] {
        let d = aes_hardware_aarch64(both, Mask::parse(mask).unwrap());
        assert!(!d.present, "{mask}");
        assert!(
            d.reason.contains(&format!("{gone} switched off")),
            "{mask}: {}",
            d.reason
        );
    }
    assert!(aes_hardware_aarch64(both, Mask::parse("-vaes,-avx2").unwrap()).present);
    assert_eq!(aes_hardware_aarch64(both, none).arch, Arch::Aarch64);
}

#[test]
fn rule_flips_chacha_first_without_aes_hardware() {
    let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
    let without = recommend_with(x86(&[Feature::Aes]), None, false);
    assert_eq!(with.basis, Basis::Rule);
    assert_eq!(
        ssh_names(&with),
        [
            "aes128-gcm@openssh.com",
            "aes256-gcm@openssh.com",
            "chacha20-poly1305@openssh.com",
            "aes128-ctr",
            "aes192-ctr",
            "aes256-ctr"
        ]
    );
    assert_eq!(
        ssh_names(&without),
        [
            "chacha20-poly1305@openssh.com",
            "aes128-gcm@openssh.com",
            "aes256-gcm@openssh.com",
            "aes128-ctr",
            "aes192-ctr",
            "aes256-ctr"
        ]
    );
    assert_eq!(
        with.openssl_ciphersuites(),
        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    );
    assert_eq!(
        without.openssl_ciphersuites(),
        "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384"
    );
    assert_eq!(
        with.openssl_cipher_string(),
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
         ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:\
         ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
    );
    assert!(
        without.tls12[0].name.contains("CHACHA20") && without.tls12[1].name.contains("CHACHA20")
    );
    assert!(without.go_cipher_suites[0].contains("CHACHA20"));
    assert!(with.go_cipher_suites[0].contains("AES_128_GCM"));
    // Every choice has a one-line reason.
    for r in [&with, &without] {
        for c in r.openssh.iter().chain(&r.tls13).chain(&r.tls12) {
            assert!(!c.reason.is_empty() && !c.reason.contains('\n'), "{c:?}");
        }
    }
    assert_eq!(with.aes_hardware.arch, Arch::X86_64);
}

#[test]
fn server_advice_boosts_chacha_only_where_aes_leads() {
    let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
    assert!(with.server.server_preference && with.server.prioritize_chacha);
    assert!(
        with.openssl_conf()
            .contains("Options = ServerPreference,PrioritizeChaCha\n")
    );
    assert!(
        with.nginx_conf()
            .contains("ssl_conf_command Options PrioritizeChaCha;")
    );
    let without = recommend_with(x86(&[]), None, false);
    assert!(without.server.server_preference && !without.server.prioritize_chacha);
    assert!(
        without
            .openssl_conf()
            .contains("Options = ServerPreference\n")
    );
    assert!(!without.nginx_conf().contains("Options PrioritizeChaCha;"));
    assert!(
        without
            .nginx_conf()
            .contains("ssl_prefer_server_ciphers on;")
    );
}

#[test]
fn boringssl_groups_let_the_client_pick_only_when_aes_leads() {
    let with = recommend_with(x86(&[Feature::Aes, Feature::Pclmulqdq]), None, false);
    assert_eq!(
        with.boringssl_cipher_string(),
        "[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-AES256-GCM-SHA384|ECDHE-ECDSA-CHACHA20-POLY1305]:\
         [ECDHE-RSA-AES128-GCM-SHA256|ECDHE-RSA-AES256-GCM-SHA384|ECDHE-RSA-CHACHA20-POLY1305]"
    );
    let without = recommend_with(x86(&[]), None, false);
    assert_eq!(
        without.boringssl_cipher_string(),
        "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:\
         ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
         ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384"
    );
    // Same suites in both, each exactly once.
    for r in [&with, &without] {
        let mut all: Vec<_> = r.boringssl_groups.concat();
        all.sort_unstable();
        let mut tls12: Vec<_> = names(&r.tls12).collect();
        tls12.sort_unstable();
        assert_eq!(all, tls12);
    }
}

fn fake(figures: &[(Cipher, f64)]) -> Calibration {
    let mut measurements = Vec::new();
    for &(cipher, gbps) in figures {
        for size in SIZES {
            measurements.push(Measurement {
                cipher,
                backend: Backend::Soft,
                size,
                // Bigger messages a bit faster, as in real life.
                gbps: gbps * size as f64 / (size as f64 + 512.0),
            });
        }
    }
    Calibration {
        measurements,
        elapsed: core::time::Duration::from_millis(1),
    }
}

#[test]
fn measured_order_follows_the_figures_not_the_rule() {
    // AES hardware by rule, but ChaCha20 measured fastest: the measurement wins.
    let cal = fake(&[
        (Cipher::Aes128Gcm, 2.0),
        (Cipher::Aes256Gcm, 1.5),
        (Cipher::ChaCha20Poly1305, 3.0),
        (Cipher::Aes128Ctr, 9.0),
        (Cipher::Aes192Ctr, 8.0),
        (Cipher::Aes256Ctr, 10.0),
    ]);
    let r = recommend_with(x86(&Feature::ALL), Some(cal), false);
    assert_eq!(r.basis, Basis::Measured);
    assert_eq!(
        r.aead_order,
        [
            Cipher::ChaCha20Poly1305,
            Cipher::Aes128Gcm,
            Cipher::Aes256Gcm
        ]
    );
    // CTR is ranked among itself, after every AEAD even when faster.
    assert_eq!(
        ssh_names(&r)[3..],
        ["aes256-ctr", "aes128-ctr", "aes192-ctr"]
    );
    assert!(!r.server.prioritize_chacha);
    assert!(
        r.openssh[0].reason.contains("fastest AEAD measured"),
        "{}",
        r.openssh[0].reason
    );
    assert!(
        r.openssh[1]
            .reason
            .contains("1.5x slower than ChaCha20-Poly1305"),
        "{}",
        r.openssh[1].reason
    );
    assert!(r.openssh[3].reason.contains("separate MAC"));

    // No AES hardware by rule, AES-256-GCM measured fastest.
    let cal = fake(&[
        (Cipher::Aes128Gcm, 2.0),
        (Cipher::Aes256Gcm, 4.0),
        (Cipher::ChaCha20Poly1305, 3.0),
    ]);
    let r = recommend_with(x86(&[]), Some(cal), false);
    assert_eq!(
        r.aead_order,
        [
            Cipher::Aes256Gcm,
            Cipher::ChaCha20Poly1305,
            Cipher::Aes128Gcm
        ]
    );
    assert!(r.server.prioritize_chacha);
    // Unmeasured CTR ciphers score 0 and keep the rule's order.
    assert_eq!(
        ssh_names(&r)[3..],
        ["aes128-ctr", "aes192-ctr", "aes256-ctr"]
    );
}

#[test]
fn ties_keep_the_rule_order() {
    let even = fake(&[
        (Cipher::Aes128Gcm, 1.0),
        (Cipher::Aes256Gcm, 1.0),
        (Cipher::ChaCha20Poly1305, 1.0),
    ]);
    let with = recommend_with(x86(&Feature::ALL), Some(even.clone()), false);
    assert_eq!(with.aead_order[0], Cipher::Aes128Gcm);
    let without = recommend_with(x86(&[]), Some(even), false);
    assert_eq!(without.aead_order[0], Cipher::ChaCha20Poly1305);
}

#[test]
fn legacy_ssh_ciphers_only_on_request_and_with_a_warning() {
    let plain = recommend_with(x86(&Feature::ALL), None, false);
    assert!(plain.openssh_warning.is_none());
    assert!(!plain.openssh_ciphers().contains("cbc"));
    assert!(!plain.openssh_snippet().contains("WARNING"));
    let legacy = recommend_with(x86(&Feature::ALL), None, true);
    assert_eq!(legacy.openssh_warning, Some(SSH_LEGACY_WARNING));
    assert!(
        legacy
            .openssh_ciphers()
            .ends_with(",aes128-cbc,aes192-cbc,aes256-cbc")
    );
    assert!(!legacy.openssh_ciphers().contains("3des"));
    assert_eq!(legacy.openssh_snippet().matches("# WARNING: ").count(), 2);
    // TLS is never affected.
    assert_eq!(
        legacy.openssl_cipher_string(),
        plain.openssl_cipher_string()
    );
}

#[test]
fn snippets_carry_the_lists() {
    let r = recommend_with(x86(&Feature::ALL), None, false);
    assert!(
        r.ssh_client_config()
            .contains(&format!("Host *\n    Ciphers {}\n", r.openssh_ciphers()))
    );
    assert!(
        r.sshd_config()
            .ends_with(&format!("\nCiphers {}\n", r.openssh_ciphers()))
    );
    assert!(
        r.openssl_conf()
            .contains(&format!("CipherString = {}\n", r.openssl_cipher_string()))
    );
    assert!(
        r.openssl_conf()
            .contains(&format!("Ciphersuites = {}\n", r.openssl_ciphersuites()))
    );
    let nginx = r.nginx_conf();
    assert!(nginx.contains(&format!("ssl_ciphers {};", r.openssl_cipher_string())));
    assert!(nginx.contains(&format!(
        "ssl_conf_command Ciphersuites {};",
        r.openssl_ciphersuites()
    )));
    assert!(r.boringssl_snippet().contains(&r.boringssl_cipher_string()));
    let go = r.go_snippet();
    for s in &r.go_cipher_suites {
        assert!(go.contains(&format!("\t\ttls.{s},\n")), "{s}");
    }
    assert!(go.contains("order is ignored") && go.contains("TLS 1.3 suites are not configurable"));
    assert!(!go.contains("PreferServerCipherSuites:"));
}
