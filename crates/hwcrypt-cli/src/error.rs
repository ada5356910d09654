//! The CLI's error: one line for the user, exit status 2.

use std::fmt;

/// Anything a subcommand can fail with.
#[derive(Debug)]
pub enum CliError {
    /// From the library (bad key, bad `HWCRYPT_CPU`, ...).
    Crypto(hwcrypt::Error),
    /// Reading or writing a file or a standard stream.
    Io(std::io::Error),
    /// A bad option value or combination, already worded for the user.
    Usage(String),
}

impl CliError {
    /// A closed pipe on output (`hwcrypt cpu | head`) is how a reader says it
    /// has seen enough; not worth an error message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The exit status: 1 for a failed read or write (a full disk, a
    /// closed terminal), 2 for everything the user can fix in the command
    /// line or the environment (options, `HWCRYPT_CPU`, a key).
    pub fn exit_code(&self) -> std::process::ExitCode {
        match self {
            CliError::Io(_) => std::process::ExitCode::from(1),
            CliError::Crypto(_) | CliError::Usage(_) => std::process::ExitCode::from(2),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Crypto(e) => write!(f, "{e}"),
            CliError::Io(e) => write!(f, "{e}"),
            CliError::Usage(msg) => f.write_str(msg),
        }
    }
}

impl From<hwcrypt::Error> for CliError {
    fn from(e: hwcrypt::Error) -> Self {
        CliError::Crypto(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Io(e)
    }
}
