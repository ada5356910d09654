//! `hwcrypt prefs`: cipher order for TLS and SSH chosen from this machine's
//! hardware (or measured), with the configuration snippets.

use crate::error::CliError;
use hwcrypt::cpu::MASK_ENV_VAR;
use hwcrypt::prefs::{self, Choice, Cipher, Options, Recommendation, SIZES};
use serde::Serialize;
use std::io::Write;

/// Flags of `hwcrypt prefs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print only the configuration snippet for one target (or everything as JSON).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// Rank by a quick calibration of hwcrypt's own AES-GCM, ChaCha20-Poly1305
    /// and AES-CTR (well under a second) instead of by rule.
    #[arg(long)]
    measure: bool,
    /// Also allow the legacy CBC ciphers in the OpenSSH list (prints a warning).
    #[arg(long)]
    ssh_legacy: bool,
}

/// What `--format` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// `~/.ssh/config` and `sshd_config` lines (two snippets, each under its
    /// own heading: use `ssh-config` or `sshd-config` to append one to a file).
    Openssh,
    /// The `~/.ssh/config` block alone (`Host *` and `Ciphers`).
    SshConfig,
    /// The `sshd_config` `Ciphers` line alone (`sshd -t` accepts it).
    SshdConfig,
    /// An OpenSSL configuration file (CipherString, Ciphersuites, Options).
    Openssl,
    /// nginx `ssl_*` directives.
    Nginx,
    /// BoringSSL calls with equal-preference groups.
    Boringssl,
    /// A Go `tls.Config`.
    Go,
    /// The whole recommendation as JSON.
    Json,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    aes_hardware: AesHardware<'a>,
    mask: Option<String>,
    basis: &'static str,
    measurements: Option<Measurements>,
    openssh: OpenSsh<'a>,
    openssl: OpenSsl<'a>,
    server: Server<'a>,
    nginx: String,
    boringssl: BoringSsl,
    go: Go,
}

#[derive(Debug, Serialize)]
struct AesHardware<'a> {
    present: bool,
    arch: &'static str,
    reason: &'a str,
}

#[derive(Debug, Serialize)]
struct Measurements {
    elapsed_ms: f64,
    sizes: Vec<usize>,
    results: Vec<Measured>,
}

#[derive(Debug, Serialize)]
struct Measured {
    cipher: &'static str,
    backend: &'static str,
    size: usize,
    gbps: f64,
}

#[derive(Debug, Serialize)]
struct ChoiceReport<'a> {
    name: &'static str,
    reason: &'a str,
}

#[derive(Debug, Serialize)]
struct OpenSsh<'a> {
    ciphers: String,
    choices: Vec<ChoiceReport<'a>>,
    warning: Option<&'static str>,
    note: &'static str,
    client_config: String,
    sshd_config: String,
}

#[derive(Debug, Serialize)]
struct OpenSsl<'a> {
    ciphersuites: String,
    cipher_string: String,
    tls13: Vec<ChoiceReport<'a>>,
    tls12: Vec<ChoiceReport<'a>>,
    conf: String,
}

#[derive(Debug, Serialize)]
struct Server<'a> {
    server_preference: bool,
    prioritize_chacha: bool,
    reason: &'a str,
}

#[derive(Debug, Serialize)]
struct BoringSsl {
    cipher_string: String,
    groups: Vec<Vec<&'static str>>,
    snippet: String,
}

#[derive(Debug, Serialize)]
struct Go {
    cipher_suites: Vec<&'static str>,
    snippet: String,
}

fn choices(list: &[Choice]) -> Vec<ChoiceReport<'_>> {
    list.iter()
        .map(|c| ChoiceReport {
            name: c.name,
            reason: &c.reason,
        })
        .collect()
}

fn report(r: &Recommendation) -> Report<'_> {
    Report {
        aes_hardware: AesHardware {
            present: r.aes_hardware.present,
            arch: r.aes_hardware.arch.name(),
            reason: &r.aes_hardware.reason,
        },
        mask: std::env::var(MASK_ENV_VAR).ok(),
        basis: r.basis.name(),
        measurements: r.calibration.as_ref().map(|cal| Measurements {
            elapsed_ms: cal.elapsed.as_secs_f64() * 1e3,
            sizes: SIZES.to_vec(),
            results: cal
                .measurements
                .iter()
                .map(|m| Measured {
                    cipher: m.cipher.id(),
                    backend: m.backend.name(),
                    size: m.size,
                    gbps: m.gbps,
                })
                .collect(),
        }),
        openssh: OpenSsh {
            ciphers: r.openssh_ciphers(),
            choices: choices(&r.openssh),
            warning: r.openssh_warning,
            note: prefs::SSH_TERRAPIN_NOTE,
            client_config: r.ssh_client_config(),
            sshd_config: r.sshd_config(),
        },
        openssl: OpenSsl {
            ciphersuites: r.openssl_ciphersuites(),
            cipher_string: r.openssl_cipher_string(),
            tls13: choices(&r.tls13),
            tls12: choices(&r.tls12),
            conf: r.openssl_conf(),
        },
        server: Server {
            server_preference: r.server.server_preference,
            prioritize_chacha: r.server.prioritize_chacha,
            reason: &r.server.reason,
        },
        nginx: r.nginx_conf(),
        boringssl: BoringSsl {
            cipher_string: r.boringssl_cipher_string(),
            groups: r.boringssl_groups.clone(),
            snippet: r.boringssl_snippet(),
        },
        go: Go {
            cipher_suites: r.go_cipher_suites.clone(),
            snippet: r.go_snippet(),
        },
    }
}

/// Runs `hwcrypt prefs`.
pub fn run(args: &Args) -> Result<(), CliError> {
    let rec = prefs::recommend(&Options {
        measure: args.measure,
        ssh_legacy: args.ssh_legacy,
    })?;
    // The legacy-CBC warning is about SSH lines: only where some are printed.
    let ssh_lines = matches!(
        args.format,
        None | Some(Format::Json | Format::Openssh | Format::SshConfig | Format::SshdConfig)
    );
    if let Some(warning) = rec.openssh_warning
        && ssh_lines
    {
        eprintln!("hwcrypt: warning: {warning}");
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        None => write_human(&mut out, &rec)?,
        Some(Format::Json) => {
            serde_json::to_writer_pretty(&mut out, &report(&rec)).map_err(std::io::Error::from)?;
            writeln!(out)?;
        }
        Some(Format::Openssh) => out.write_all(rec.openssh_snippet().as_bytes())?,
        Some(Format::SshConfig) => out.write_all(rec.ssh_client_config().as_bytes())?,
        Some(Format::SshdConfig) => out.write_all(rec.sshd_config().as_bytes())?,
        Some(Format::Openssl) => out.write_all(rec.openssl_conf().as_bytes())?,
        Some(Format::Nginx) => out.write_all(rec.nginx_conf().as_bytes())?,
        Some(Format::Boringssl) => out.write_all(rec.boringssl_snippet().as_bytes())?,
        Some(Format::Go) => out.write_all(rec.go_snippet().as_bytes())?,
    }
    out.flush()?;
    Ok(())
}

/// Splits `text` at spaces into lines of at most `width` characters (longer
/// words stay whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

fn write_list(out: &mut impl Write, list: &[Choice]) -> std::io::Result<()> {
    let width = list.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for (i, c) in list.iter().enumerate() {
        writeln!(out, "  {:>2}. {:<width$}  {}", i + 1, c.name, c.reason)?;
    }
    Ok(())
}

fn write_human(out: &mut impl Write, r: &Recommendation) -> std::io::Result<()> {
    let aes = &r.aes_hardware;
    writeln!(
        out,
        "AES hardware:  {} ({}: {})",
        if aes.present { "yes" } else { "no" },
        aes.arch.name(),
        aes.reason
    )?;
    match std::env::var(MASK_ENV_VAR) {
        Ok(mask) => writeln!(out, "{MASK_ENV_VAR}:   {mask:?}")?,
        Err(_) => writeln!(out, "{MASK_ENV_VAR}:   (not set)")?,
    }
    match &r.calibration {
        None => writeln!(
            out,
            "Order:         by rule: {} first (--measure ranks by measured speed)",
            r.aead_order[0]
        )?,
        Some(cal) => {
            writeln!(
                out,
                "Order:         by speed measured with hwcrypt's own code ({:.0} ms; one core, in place, \
                 best of {} batches)",
                cal.elapsed.as_secs_f64() * 1e3,
                prefs::ROUNDS
            )?;
            writeln!(out)?;
            writeln!(
                out,
                "  {:<18} {:<10} {:>13} {:>13}",
                "CIPHER",
                "BACKEND",
                format!("{} B", SIZES[0]),
                format!("{} KiB", SIZES[1] / 1024)
            )?;
            for &cipher in &prefs::MEASURED {
                let backend = cal
                    .measurements
                    .iter()
                    .find(|m| m.cipher == cipher)
                    .map_or("?", |m| m.backend.name());
                let fig = |size| {
                    cal.gbps(cipher, size)
                        .map_or("-".to_string(), |g| format!("{g:.2} GB/s"))
                };
                writeln!(
                    out,
                    "  {:<18} {:<10} {:>13} {:>13}",
                    cipher.name(),
                    backend,
                    fig(SIZES[0]),
                    fig(SIZES[1])
                )?;
            }
        }
    }

    let chacha_first = r.aead_order[0] == Cipher::ChaCha20Poly1305;
    if r.calibration.is_some() && chacha_first == r.aes_hardware.present {
        writeln!(
            out,
            "Note:          the measurement disagrees with the AES-hardware rule; the order follows it"
        )?;
    }

    writeln!(out)?;
    writeln!(
        out,
        "OpenSSH Ciphers (the client's order decides; the server's list only allows)"
    )?;
    write_list(out, &r.openssh)?;
    if let Some(w) = r.openssh_warning {
        writeln!(out, "  WARNING: {w}")?;
    }
    for line in wrap(&format!("Note: {}.", prefs::SSH_TERRAPIN_NOTE), 96) {
        writeln!(out, "  {line}")?;
    }
    writeln!(
        out,
        "  ~/.ssh/config (in a `Host *` block at the end) and sshd_config:"
    )?;
    writeln!(out, "    Ciphers {}", r.openssh_ciphers())?;

    writeln!(out)?;
    writeln!(out, "TLS 1.3 (OpenSSL Ciphersuites)")?;
    write_list(out, &r.tls13)?;
    writeln!(out, "  Ciphersuites = {}", r.openssl_ciphersuites())?;

    writeln!(out)?;
    writeln!(
        out,
        "TLS 1.2 (OpenSSL cipher string: ECDHE with AEADs only)"
    )?;
    write_list(out, &r.tls12)?;
    writeln!(out, "  CipherString = {}", r.openssl_cipher_string())?;

    writeln!(out)?;
    writeln!(
        out,
        "TLS server: server preference {}, PrioritizeChaCha / ChaCha boosting {}",
        if r.server.server_preference {
            "on"
        } else {
            "off"
        },
        if r.server.prioritize_chacha {
            "on"
        } else {
            "not needed"
        }
    )?;
    for line in wrap(&r.server.reason, 96) {
        writeln!(out, "  {line}")?;
    }

    writeln!(out)?;
    writeln!(
        out,
        "BoringSSL (TLS 1.2 with equal-preference groups; TLS 1.3 is not configurable there)"
    )?;
    writeln!(out, "  {}", r.boringssl_cipher_string())?;
    writeln!(out)?;
    writeln!(
        out,
        "Go crypto/tls: orders suites itself (AES-GCM first only with AES hardware here and a peer\n  \
         that prefers it), ignores any order given, cannot configure TLS 1.3; CipherSuites only allows"
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Snippets: hwcrypt prefs --format openssh|ssh-config|sshd-config|openssl|nginx|boringssl|go|json"
    )?;
    Ok(())
}
