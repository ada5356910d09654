//! `hwcrypt`: the command-line tool, a thin layer over the `hwcrypt` library.
#![forbid(unsafe_code)]

mod cmd;
mod error;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Fast, constant-time symmetric encryption on the AES hardware of this CPU.
#[derive(Debug, Parser)]
#[command(name = "hwcrypt", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the CPU, its features (before and after the HWCRYPT_CPU mask) and
    /// the backend each algorithm uses.
    Cpu(cmd::cpu::Args),
    /// Recommend cipher orders for OpenSSH, OpenSSL, nginx, BoringSSL and Go
    /// from this machine's AES hardware (or a quick measurement).
    Prefs(cmd::prefs::Args),
    /// Print the openssl.cnf that plugs hwcrypt's OpenSSL provider (hwcrypt.so)
    /// into every program using libcrypto: OpenSSH, curl, openssl, Python.
    OpensslConfig(cmd::openssl_config::Args),
    /// Measure throughput (GB/s, cycles per byte) of every algorithm x
    /// backend x message size, and key setup; optionally beside OpenSSL,
    /// ring, aws-lc-rs, graviola and RustCrypto (--peers); table, JSON, CSV, plot.
    Speed(cmd::speed::Args),
    /// Search a described AES key space for the key of a ciphertext whose
    /// plaintext is partly known (exit 0 found, 1 not found, 2 error).
    Crack(Box<cmd::crack::Args>),
    /// Encrypt a file to age recipients or a passphrase (age v1 format, all
    /// cores; exit 1 on failure, 2 on a usage error).
    Encrypt(Box<cmd::age::EncryptArgs>),
    /// Decrypt an age file (binary or armored) with identities or a
    /// passphrase; nothing unauthenticated is written.
    Decrypt(Box<cmd::age::DecryptArgs>),
    /// Make an age identity (X25519, AGE-SECRET-KEY-1...; --pq: the
    /// post-quantum hybrid), or print the recipients of one (-y).
    Keygen(cmd::age::KeygenArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(&err),
    };
    let result = match cli.command {
        Command::Cpu(args) => cmd::cpu::run(&args),
        Command::Prefs(args) => cmd::prefs::run(&args),
        Command::OpensslConfig(args) => cmd::openssl_config::run(&args),
        Command::Speed(args) => cmd::speed::run(&args),
        Command::Crack(args) => return cmd::crack::main(&args),
        Command::Encrypt(args) => return cmd::age::encrypt_main(&args),
        Command::Decrypt(args) => return cmd::age::decrypt_main(&args),
        Command::Keygen(args) => return cmd::age::keygen_main(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("hwcrypt: error: {err}");
            err.exit_code()
        }
    }
}

/// Help and version go out as clap writes them; a usage error becomes one
/// line on stderr, exit 2, like every other error of the tool:
/// `hwcrypt: error: MESSAGE (TIPS; see 'hwcrypt SUBCOMMAND --help')`.
fn usage_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        err.exit();
    }
    eprintln!("hwcrypt: error: {}", one_line(&err.render().to_string()));
    ExitCode::from(2)
}

/// clap's rendered error (an `error:` line, indented continuation lines
/// and tips, a blank line, `Usage: hwcrypt SUB ...`, a `--help` hint) as
/// one line.
fn one_line(rendered: &str) -> String {
    let mut message = Vec::new();
    let mut tips = Vec::new();
    let mut command = None;
    for line in rendered.lines() {
        let line = line.trim();
        if let Some(usage) = line.strip_prefix("Usage:") {
            let words: Vec<&str> = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['-', '[', '<']))
                .collect();
            if !words.is_empty() {
                command = Some(words.join(" "));
            }
            break;
        } else if let Some(tip) = line.strip_prefix("tip:") {
            tips.push(tip.trim().to_string());
        } else if !line.is_empty() && !line.starts_with("For more information") {
            message.push(line.strip_prefix("error:").unwrap_or(line).trim());
        }
    }
    let command = command.unwrap_or_else(subcommand_from_args);
    tips.push(format!("see '{command} --help'"));
    format!("{} ({})", message.join(" "), tips.join("; "))
}

/// `hwcrypt SUB` for the subcommand named on the command line, if any, else
/// `hwcrypt`: for the errors clap renders without a usage line. `args_os`:
/// `args` panics on an argument that is not UTF-8.
fn subcommand_from_args() -> String {
    use clap::CommandFactory;
    std::env::args_os()
        .skip(1)
        .filter_map(|a| a.into_string().ok())
        .find(|a| !a.starts_with('-'))
        .filter(|a| Cli::command().get_subcommands().any(|s| s.get_name() == a))
        .map_or_else(|| "hwcrypt".to_string(), |sub| format!("hwcrypt {sub}"))
}
