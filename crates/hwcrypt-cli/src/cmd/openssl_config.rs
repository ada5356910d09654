//! `hwcrypt openssl-config`: the openssl.cnf that loads hwcrypt's OpenSSL
//! provider (crates/hwcrypt-openssl) on this machine: module path,
//! activation of `default` and `hwcrypt`, and `default_properties` that
//! prefer hwcrypt where it serves an algorithm.

use crate::error::CliError;
use hwcrypt::cpu::MASK_ENV_VAR;
use hwcrypt::registry::{self, Algorithm};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Flags of `hwcrypt openssl-config`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The provider module; by default `hwcrypt.so` next to this `hwcrypt`
    /// binary (where crates/hwcrypt-openssl/build-module.sh puts it).
    #[arg(long, value_name = "PATH")]
    module: Option<PathBuf>,
}

/// What the provider registers (its names in OpenSSL).
const SERVED: &str =
    "AES-128/192/256-ECB, -CTR, -GCM; AES-128/256-XTS; ChaCha20; ChaCha20-Poly1305";

fn find_module(args: &Args) -> Result<PathBuf, CliError> {
    if let Some(path) = &args.module {
        if !path.is_file() {
            return Err(CliError::Usage(format!(
                "--module {}: no such file (build it with crates/hwcrypt-openssl/build-module.sh)",
                path.display()
            )));
        }
        return Ok(std::path::absolute(path)?);
    }
    let exe = std::env::current_exe()?;
    let beside = exe.parent().unwrap_or(Path::new(".")).join("hwcrypt.so");
    if beside.is_file() {
        return Ok(beside);
    }
    Err(CliError::Usage(format!(
        "no provider module at {} (build it with crates/hwcrypt-openssl/build-module.sh, or pass --module PATH)",
        beside.display()
    )))
}

/// The configuration text for `module`.
pub fn config_text(module: &Path) -> String {
    let backend = |a: Algorithm| {
        registry::default_backend(a)
            .map_or_else(|e| format!("unavailable ({e})"), |b| b.name().to_string())
    };
    let mask = std::env::var(MASK_ENV_VAR).map_or("not set".to_string(), |m| format!("{m:?}"));
    format!(
        "\
# hwcrypt's OpenSSL 3 provider for this machine (from `hwcrypt openssl-config`).
# It serves {SERVED};
# everything else (CBC, hashes, key exchange, signatures, TLS-CBC) stays with `default`.
# Backends here: aes {aes}, aes-gcm {gcm}, aes-xts {xts}, chacha20-poly1305 {chacha}
# ({MASK_ENV_VAR} {mask}; the provider picks again, with the same rules, when it loads).
#
# One program or service:  OPENSSL_CONF=/etc/ssl/hwcrypt.cnf ssh host
# Check it is active:      OPENSSL_CONF=/etc/ssl/hwcrypt.cnf openssl list -providers -verbose
# Turn it off:             drop OPENSSL_CONF (or these lines from openssl.cnf)
# If the module is missing or fails its self-test, programs keep working on `default`.

openssl_conf = openssl_init

[openssl_init]
providers = provider_sect
alg_section = algorithm_sect

[provider_sect]
default=default_sect
hwcrypt=hwcrypt_sect

[default_sect]
activate = 1

[hwcrypt_sect]
module = {module}
activate = 1

[algorithm_sect]
# Prefer hwcrypt where it serves the algorithm, `default` for the rest.
default_properties = ?provider=hwcrypt
",
        aes = backend(Algorithm::Aes),
        gcm = backend(Algorithm::AesGcm),
        xts = backend(Algorithm::AesXts),
        chacha = backend(Algorithm::ChaCha20Poly1305),
        module = module.display(),
    )
}

/// Characters openssl.cnf reads specially in a value (`#` starts a
/// comment, `$` a variable, quotes and `\` escape): a module path with one
/// would load something else, or nothing, without a word.
const CONFIG_SPECIAL: &[char] = &['#', '$', '"', '\'', '\\', '\n', '\r', ';'];

/// Runs `hwcrypt openssl-config`.
pub fn run(args: &Args) -> Result<(), CliError> {
    // A bad HWCRYPT_CPU is an error here as in every other command (the
    // backends named in the comments would otherwise read "unavailable").
    hwcrypt::cpu::features()?;
    let module = find_module(args)?;
    // The config is text: a path that is not UTF-8 would be written with
    // U+FFFD in it, naming another file (OpenSSL then loads no hwcrypt).
    let Some(text) = module.to_str() else {
        return Err(CliError::Usage(format!(
            "module path {} is not UTF-8, so openssl.cnf cannot name it; put the module where its path is UTF-8",
            module.display()
        )));
    };
    let bad = text
        .chars()
        .find(|c| CONFIG_SPECIAL.contains(c))
        .or_else(|| (text.trim() != text).then_some(' '));
    if let Some(c) = bad {
        return Err(CliError::Usage(format!(
            "module path {} has {:?}, which openssl.cnf would not read as part of a path; \
             put the module where its path has none",
            module.display(),
            c
        )));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(config_text(&module).as_bytes())?;
    out.flush()?;
    Ok(())
}
