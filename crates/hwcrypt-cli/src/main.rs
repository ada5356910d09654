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
    /// Make an age X25519 identity (AGE-SECRET-KEY-1...), or print the
    /// recipients of one (-y).
    Keygen(cmd::age::KeygenArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
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
