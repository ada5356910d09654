//! `hwcrypt encrypt`, `hwcrypt decrypt` and `hwcrypt keygen`: age v1 files
//! (crate `hwcrypt-age`) with age's flags, on every core. Exit status 0 on
//! success, 1 when encryption or decryption fails (bad file, wrong key,
//! tampering, I/O), 2 on a usage error; one line on stderr.

use super::age_output::{AtomicFile, OpenError, OutputTarget, open_output, same_file};
use clap::Args as ClapArgs;
use hwcrypt_age::armor::{ArmoredReader, ArmoredWriter, sniff_armor};
use hwcrypt_age::keys::{
    parse_identity_file_with_passphrase, parse_recipient, parse_recipients_file_with,
};
use hwcrypt_age::{
    Decryptor, Encryptor, HybridIdentity, Identity, Recipient, ScryptIdentity, ScryptRecipient,
    X25519Identity,
};
use hwcrypt_age::{EncryptedPemIdentity, PassphraseSource, ReadAt};
use indicatif::{ProgressBar, ProgressStyle};
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Seek, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use zeroize::Zeroizing;

/// Inputs larger than this get a progress bar (on a terminal).
const PROGRESS_MIN: u64 = 8 << 20;

/// Flags shared by encrypt and decrypt.
#[derive(Debug, ClapArgs)]
pub struct CommonArgs {
    /// Write the result to FILE (atomically: a temporary file renamed on
    /// success) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// Worker threads (default: one per core; 1 = no worker threads).
    #[arg(short = 'j', long = "threads", value_name = "N")]
    threads: Option<usize>,
    /// No progress bar and no warnings.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Input file (default: standard input).
    #[arg(value_name = "INPUT")]
    input: Option<PathBuf>,
}

/// `hwcrypt encrypt`.
#[derive(Debug, ClapArgs)]
pub struct EncryptArgs {
    /// Encrypt to this recipient: age1..., age1pq1... (post-quantum) or an
    /// SSH public key (repeatable).
    #[arg(short = 'r', long = "recipient", value_name = "RECIPIENT")]
    recipients: Vec<String>,
    /// Encrypt to the recipients listed in FILE, one per line, or an SSH
    /// .pub file (repeatable; - reads standard input).
    #[arg(short = 'R', long = "recipients-file", value_name = "FILE")]
    recipient_files: Vec<PathBuf>,
    /// Encrypt to the recipients of the identities in FILE (as age -e -i:
    /// the public half of each; a passphrase-encrypted identity file is
    /// opened, asking on the terminal) (repeatable).
    #[arg(short = 'i', long = "identity", value_name = "FILE")]
    identities: Vec<PathBuf>,
    /// Encrypt with a passphrase, asked on the terminal (no echo).
    #[arg(short = 'p', long = "passphrase")]
    passphrase: bool,
    /// Read the passphrase from the first line of FILE.
    #[arg(long = "passphrase-file", value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    /// Write PEM-armored text (-----BEGIN AGE ENCRYPTED FILE-----).
    #[arg(short = 'a', long)]
    armor: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// `hwcrypt decrypt`.
#[derive(Debug, ClapArgs)]
pub struct DecryptArgs {
    /// Decrypt with the identities in FILE: AGE-SECRET-KEY-1 or
    /// AGE-SECRET-KEY-PQ-1 lines, or an OpenSSH private key, either also
    /// passphrase-protected (an encrypted OpenSSH key, an age-encrypted
    /// identity file: asked for only when needed) (repeatable; - reads
    /// standard input).
    #[arg(short = 'i', long = "identity", value_name = "FILE")]
    identities: Vec<PathBuf>,
    /// Read the passphrase from the first line of FILE instead of asking on
    /// the terminal: a passphrase-encrypted file's, or else the one of the
    /// passphrase-protected identities.
    #[arg(long = "passphrase-file", value_name = "FILE")]
    passphrase_file: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

/// `hwcrypt keygen`.
#[derive(Debug, ClapArgs)]
pub struct KeygenArgs {
    /// Write the new identity (with -y: the recipients) to FILE instead of
    /// standard output (a new file: mode 0600; --force over a file: its
    /// mode kept with -y).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    force: bool,
    /// Make a post-quantum hybrid identity (ML-KEM-768 + X25519, age 1.3's
    /// mlkem768x25519: AGE-SECRET-KEY-PQ-1..., recipient age1pq1...).
    #[arg(long, conflicts_with = "convert")]
    pq: bool,
    /// Print the recipients (public keys) of an identity file (or standard
    /// input) instead of making a key.
    #[arg(short = 'y', value_name = "IDENTITY_FILE", num_args = 0..=1, default_missing_value = "-")]
    convert: Option<PathBuf>,
}

/// Why a command failed, and so its exit status.
enum Failure {
    /// Exit 2.
    Usage(String),
    /// Exit 1.
    Failed(String),
    /// The reader of standard output went away (`| head`): exit 0 without
    /// a message, as the other commands.
    BrokenPipe,
}

impl From<hwcrypt_age::Error> for Failure {
    fn from(e: hwcrypt_age::Error) -> Failure {
        match e {
            hwcrypt_age::Error::Key(m) => Failure::Usage(m),
            hwcrypt_age::Error::Io(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                Failure::BrokenPipe
            }
            other => Failure::Failed(other.to_string()),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        hwcrypt_age::Error::from_io(e).into()
    }
}

impl From<OpenError> for Failure {
    fn from(e: OpenError) -> Failure {
        match e {
            OpenError::Usage(m) => Failure::Usage(m),
            OpenError::Failed(m) => Failure::Failed(m),
        }
    }
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure::Usage(msg.into())
}

/// An invalid `HWCRYPT_CPU` mask is a usage error before anything is read
/// or written (as for the other commands).
fn cpu_mask() -> Result<(), Failure> {
    hwcrypt::cpu::features()
        .map(|_| ())
        .map_err(|e| usage(e.to_string()))
}

fn finish(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("hwcrypt: error: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Failed(m)) => {
            eprintln!("hwcrypt: error: {m}");
            ExitCode::from(1)
        }
        Err(Failure::BrokenPipe) => ExitCode::SUCCESS,
    }
}

/// Runs `hwcrypt encrypt`.
pub fn encrypt_main(args: &EncryptArgs) -> ExitCode {
    finish(encrypt(args))
}

/// Runs `hwcrypt decrypt`.
pub fn decrypt_main(args: &DecryptArgs) -> ExitCode {
    finish(decrypt(args))
}

/// Runs `hwcrypt keygen`.
pub fn keygen_main(args: &KeygenArgs) -> ExitCode {
    finish(keygen(args))
}

fn threads(common: &CommonArgs) -> Result<usize, Failure> {
    match common.threads {
        Some(n) if !(1..=hwcrypt::stream::MAX_THREADS).contains(&n) => Err(usage(format!(
            "-j/--threads must be 1 to {}",
            hwcrypt::stream::MAX_THREADS
        ))),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Standard input or output as a plain `File` (no extra buffering layer).
fn stdio_file(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<File> {
    Ok(File::from(fd.try_clone_to_owned()?))
}

/// Reads a small file (a passphrase or identity file), up to
/// [`KEY_FILE_MAX`] bytes: `/dev/zero` must not fill memory.
fn read_file(path: &Path, what: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let cannot = |e: io::Error| usage(format!("cannot read {what} {}: {e}", path.display()));
    read_capped(File::open(path).map_err(cannot)?, path, what)
}

/// At most [`KEY_FILE_MAX`] bytes of `src`; more is a usage error. Read
/// with no copy outside zeroizing memory (key files and passphrases): no
/// `BufReader` (its buffer is freed unwiped), and the buffer grown by hand
/// (a `Vec` reallocation frees the old block unwiped).
fn read_capped(mut src: impl Read, path: &Path, what: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let cannot = |e: io::Error| usage(format!("cannot read {what} {}: {e}", path.display()));
    let mut bytes = Zeroizing::new(Vec::with_capacity(4096));
    let mut chunk = Zeroizing::new([0u8; 4096]);
    loop {
        let n = match src.read(&mut chunk[..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        if bytes.len() as u64 + n as u64 > KEY_FILE_MAX {
            return Err(usage(format!(
                "{what} {} is larger than 16 MiB",
                path.display()
            )));
        }
        if bytes.len() + n > bytes.capacity() {
            let mut grown = Zeroizing::new(Vec::with_capacity(2 * bytes.capacity() + n));
            grown.extend_from_slice(&bytes);
            // The old buffer is wiped (its whole capacity) as it drops.
            bytes = grown;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    Ok(bytes)
}

/// The most a recipients or identity file may hold (as age: a key file is
/// small, and `-R /dev/zero` must not fill memory).
const KEY_FILE_MAX: u64 = 16 << 20;

/// Reads a recipients or identity file, or standard input for `-` (which
/// must then not also be the data input), up to [`KEY_FILE_MAX`] bytes.
fn read_key_file(
    path: &Path,
    what: &str,
    common: &CommonArgs,
    quiet: bool,
) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let cannot = |e: io::Error| usage(format!("cannot read {what} {}: {e}", path.display()));
    let file = if path.as_os_str() == "-" {
        if common.input.as_ref().is_none_or(|p| p.as_os_str() == "-") {
            return Err(usage(format!(
                "standard input cannot be both the {what} (-) and the input: name the input file"
            )));
        }
        stdio_file(io::stdin().as_fd()).map_err(cannot)?
    } else {
        let file = File::open(path).map_err(cannot)?;
        if let Ok(meta) = file.metadata()
            && meta.is_file()
            && meta.permissions().mode() & 0o077 != 0
            && !quiet
        {
            eprintln!(
                "hwcrypt: warning: {what} {} is accessible by group or others (chmod 600 it)",
                path.display()
            );
        }
        file
    };
    read_capped(file, path, what)
}

/// The input: a file or standard input, and its size when known.
fn open_input(common: &CommonArgs) -> Result<(File, Option<u64>), Failure> {
    let f = match &common.input {
        Some(p) if p.as_os_str() != "-" => File::open(p)
            .map_err(|e| Failure::Failed(format!("cannot open {}: {e}", p.display())))?,
        _ => stdio_file(io::stdin().as_fd())?,
    };
    let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    Ok((f, len))
}

/// Where a regular file's unread bytes start (standard input redirected
/// from a file may have been read before): several workers read it from
/// there at offsets, each its own chunks. None for pipes, terminals and
/// other inputs that can only be read in order, and for one thread (which
/// reads in order, a segment per `readv`).
fn positional_start(input: &mut File, len: Option<u64>, threads: usize) -> Option<u64> {
    if threads <= 1 {
        return None;
    }
    len?;
    input.stream_position().ok()
}

/// Where the output goes: a temporary file to rename, or standard output.
enum Output {
    File(AtomicFile),
    Stdout(File),
}

impl Output {
    fn open(common: &CommonArgs, binary: bool) -> Result<Output, Failure> {
        match &common.output {
            Some(p) if p.as_os_str() != "-" => {
                if let Some(input) = &common.input
                    && same_file(input, p)
                {
                    return Err(usage(format!(
                        "input and output are the same file ({})",
                        p.display()
                    )));
                }
                // An existing output is a usage error; failing to create
                // the temporary file (no such directory, no permission, a
                // full or read-only disk) is an I/O failure.
                Ok(match open_output(p, common.force, true)? {
                    OutputTarget::InPlace(f) => Output::Stdout(f),
                    OutputTarget::Atomic(f) => Output::File(f),
                })
            }
            // `-o -` asks for standard output even when it is a terminal
            // (as age).
            Some(_) => Ok(Output::Stdout(stdio_file(io::stdout().as_fd())?)),
            None => {
                if binary && io::stdout().is_terminal() {
                    return Err(usage(
                        "refusing to write binary output to a terminal (use -a/--armor or -o FILE; -o - forces it)",
                    ));
                }
                Ok(Output::Stdout(stdio_file(io::stdout().as_fd())?))
            }
        }
    }

    fn writer(&mut self) -> &mut File {
        match self {
            Output::File(f) => f.file(),
            Output::Stdout(f) => f,
        }
    }

    fn commit(self) -> io::Result<()> {
        match self {
            Output::File(f) => f.commit(),
            Output::Stdout(mut f) => f.flush(),
        }
    }
}

/// Counts bytes read into a progress bar.
struct Progress<R> {
    inner: R,
    bar: Option<ProgressBar>,
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
    /// Passed on, so that a file reads a segment's chunk slots with one
    /// `readv`.
    fn read_vectored(&mut self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        let n = self.inner.read_vectored(bufs)?;
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Progress<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        if let Some(bar) = &self.bar {
            bar.inc(n as u64);
        }
        self.inner.consume(n);
    }
}

/// Keeps the end of the furthest read at offsets, and moves a progress bar
/// with it: the bar counts each byte once, although each parallel segment
/// also reads the first byte of the next one (its look-ahead), and may run
/// ahead of the segments still being read by up to the bytes in flight.
struct ProgressAt<'a> {
    inner: &'a File,
    bar: Option<ProgressBar>,
    furthest: std::sync::atomic::AtomicU64,
}

impl<'a> ProgressAt<'a> {
    /// Reading starts at `start`.
    fn new(inner: &'a File, start: u64, bar: &Option<ProgressBar>) -> ProgressAt<'a> {
        ProgressAt {
            inner,
            bar: bar.clone(),
            furthest: start.into(),
        }
    }

    /// Moves the file position to where reading in order would have left
    /// it, the end of what was read (it matters for standard input shared
    /// with the commands after this one).
    fn leave_after_what_was_read(&self) {
        let end = self.furthest.load(std::sync::atomic::Ordering::Relaxed);
        let _ = (&mut &*self.inner).seek(io::SeekFrom::Start(end));
    }
}

impl ReadAt for ProgressAt<'_> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = self.inner.read_at(buf, offset)?;
        if n > 0 {
            let end = offset.saturating_add(n as u64);
            let before = self
                .furthest
                .fetch_max(end, std::sync::atomic::Ordering::Relaxed);
            // Increments, not positions: the sum is right whatever order
            // the threads' calls reach the bar in.
            if end > before
                && let Some(bar) = &self.bar
            {
                bar.inc(end - before);
            }
        }
        Ok(n)
    }
}

fn progress_bar(common: &CommonArgs, len: Option<u64>) -> Option<ProgressBar> {
    let len = len.filter(|&l| l >= PROGRESS_MIN)?;
    if common.quiet || !io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{bar:30} {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} ETA {eta}",
        )
        .ok()?,
    );
    Some(bar)
}

/// The first line of a passphrase file.
fn passphrase_from_file(path: &Path) -> Result<Zeroizing<String>, Failure> {
    let bytes = read_file(path, "passphrase file")?;
    let text = std::str::from_utf8(&bytes).map_err(|_| usage("passphrase file is not UTF-8"))?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(usage("passphrase file is empty"));
    }
    Ok(Zeroizing::new(line.to_owned()))
}

/// Encrypts the input file into `output`: read at offsets from `start`
/// where it has one (a regular file), else in order.
fn encrypt_from<W: Write + Send>(
    encryptor: &Encryptor,
    (input, start, bar): (&File, Option<u64>, &Option<ProgressBar>),
    output: W,
    threads: usize,
) -> Result<(), Failure> {
    match start {
        Some(offset) => {
            let input = ProgressAt::new(input, offset, bar);
            encryptor.encrypt_parallel_at(&input, offset, output, threads)?;
            input.leave_after_what_was_read();
        }
        None => {
            let input = Progress {
                inner: input,
                bar: bar.clone(),
            };
            encryptor.encrypt_parallel(input, output, threads)?;
        }
    }
    Ok(())
}

/// Asks on the terminal, without echo.
fn prompt(question: &str) -> Result<Zeroizing<String>, Failure> {
    rpassword::prompt_password(question)
        .map(Zeroizing::new)
        .map_err(|_| {
            usage("cannot read a passphrase from the terminal (use --passphrase-file FILE)")
        })
}

fn encrypt(args: &EncryptArgs) -> Result<(), Failure> {
    cpu_mask()?;
    let threads = threads(&args.common)?;
    let wants_passphrase = args.passphrase || args.passphrase_file.is_some();
    let mut recipients: Vec<Box<dyn Recipient>> = Vec::new();
    for r in &args.recipients {
        recipients.push(parse_recipient(r).map_err(|e| usage(format!("-r: {e}")))?);
    }
    for path in &args.recipient_files {
        let bytes = read_key_file(path, "recipients file", &args.common, true)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| usage(format!("{} is not text", path.display())))?;
        let skipped = |line: usize, kind: &str| {
            if !args.common.quiet {
                eprintln!(
                    "hwcrypt: warning: {} line {line}: ignoring unsupported SSH key type {kind}",
                    path.display()
                );
            }
        };
        recipients.extend(
            parse_recipients_file_with(text, skipped)
                .map_err(|e| usage(format!("{}: {e}", path.display())))?,
        );
    }
    if wants_passphrase && !(recipients.is_empty() && args.identities.is_empty()) {
        return Err(usage(
            "a passphrase (-p) cannot be combined with recipients (-r/-R/-i)",
        ));
    }
    // After the check above: opening an encrypted identity file asks for
    // its passphrase.
    let no_bar = Arc::new(OnceLock::new());
    for path in &args.identities {
        for id in load_identities(std::slice::from_ref(path), &args.common, None, &no_bar)? {
            let of_id = id.recipients().map_err(|e| match e {
                hwcrypt_age::Error::Key(m) => usage(format!("{}: {m}", path.display())),
                e => Failure::Failed(format!("{}: {e}", path.display())),
            })?;
            recipients.extend(of_id);
        }
    }
    if args.passphrase && args.passphrase_file.is_some() {
        return Err(usage("give -p or --passphrase-file, not both"));
    }
    if !wants_passphrase && recipients.is_empty() {
        return Err(usage(
            "no recipients: give -r RECIPIENT, -R FILE, -i FILE or -p",
        ));
    }
    let (input, len) = open_input(&args.common)?;
    let mut output = Output::open(&args.common, !args.armor)?;
    if wants_passphrase {
        let pass = match &args.passphrase_file {
            Some(p) => passphrase_from_file(p)?,
            None => {
                let pass = prompt("Enter passphrase: ")?;
                if pass.is_empty() {
                    return Err(usage("empty passphrase"));
                }
                if *prompt("Confirm passphrase: ")? != *pass {
                    return Err(usage("passphrases do not match"));
                }
                pass
            }
        };
        recipients.push(Box::new(ScryptRecipient::new(pass)));
    }
    let encryptor = Encryptor::with_recipients(recipients)?;
    let mut input = input;
    let start = positional_start(&mut input, len, threads);
    let bar = progress_bar(&args.common, len);
    let source = (&input, start, &bar);
    if args.armor {
        let mut armored = ArmoredWriter::new(output.writer())?;
        encrypt_from(&encryptor, source, &mut armored, threads)?;
        armored.finish()?;
    } else {
        encrypt_from(&encryptor, source, output.writer(), threads)?;
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    output.commit()?;
    Ok(())
}

/// Asks on the terminal with the progress bar, if one is shown, put aside.
fn prompt_beside(
    bar: &OnceLock<ProgressBar>,
    question: &str,
) -> Result<Zeroizing<String>, Failure> {
    match bar.get() {
        Some(bar) => bar.suspend(|| prompt(question)),
        None => prompt(question),
    }
}

/// The identities of the `-i` files. A passphrase-protected one asks for
/// its passphrase (from `passphrase_file`, or on the terminal) only when a
/// stanza needs it.
fn load_identities(
    paths: &[PathBuf],
    common: &CommonArgs,
    passphrase_file: Option<&Path>,
    bar: &Arc<OnceLock<ProgressBar>>,
) -> Result<Vec<Box<dyn Identity>>, Failure> {
    let mut out: Vec<Box<dyn Identity>> = Vec::new();
    for path in paths {
        let bytes = read_key_file(path, "identity file", common, common.quiet)?;
        let (path_shown, passphrase_file, bar) = (
            path.display().to_string(),
            passphrase_file.map(Path::to_path_buf),
            bar.clone(),
        );
        let passphrase: PassphraseSource = Box::new(move || {
            match &passphrase_file {
                Some(file) => passphrase_from_file(file),
                None => prompt_beside(
                    &bar,
                    &format!("Enter passphrase for identity file \"{path_shown}\": "),
                ),
            }
            .map_err(|f| match f {
                Failure::Usage(m) | Failure::Failed(m) => hwcrypt_age::Error::Key(m),
                Failure::BrokenPipe => hwcrypt_age::Error::Key("broken pipe".into()),
            })
        });
        if EncryptedPemIdentity::detect(&bytes) {
            // The file holds no public key: as age, take it from KEY.pub.
            let mut public_path = path.clone().into_os_string();
            public_path.push(".pub");
            let public_path = PathBuf::from(public_path);
            let public = File::open(&public_path)
                .map_err(|e| {
                    usage(format!(
                        "{}: a passphrase-protected PEM key needs its public key, read from \
                         {}: {e}; or convert the key to OpenSSH's format (`ssh-keygen -p -f {}`)",
                        path.display(),
                        public_path.display(),
                        path.display()
                    ))
                })
                .and_then(|file| read_capped(file, &public_path, "public key file"))?;
            out.push(Box::new(
                EncryptedPemIdentity::parse(&bytes, &public, passphrase)
                    .map_err(|e| usage(format!("{}: {e}", path.display())))?,
            ));
            continue;
        }
        out.extend(
            parse_identity_file_with_passphrase(&bytes, passphrase)
                .map_err(|e| usage(format!("{}: {e}", path.display())))?,
        );
    }
    Ok(out)
}

fn decrypt(args: &DecryptArgs) -> Result<(), Failure> {
    cpu_mask()?;
    let threads = threads(&args.common)?;
    let shown_bar = Arc::new(OnceLock::new());
    let mut identities = load_identities(
        &args.identities,
        &args.common,
        args.passphrase_file.as_deref(),
        &shown_bar,
    )?;
    let (mut input, len) = open_input(&args.common)?;
    let start = positional_start(&mut input, len, threads);
    let mut output = Output::open(&args.common, false)?;
    let bar = progress_bar(&args.common, len);
    if let Some(bar) = &bar {
        let _ = shown_bar.set(bar.clone());
    }
    let mut reader = Progress {
        inner: BufReader::with_capacity(1 << 16, &input),
        bar: bar.clone(),
    };
    // The bytes the decision took go back in front of the rest.
    let (armored, head) = sniff_armor(&mut reader)?;
    let reader = io::Cursor::new(head).chain(reader);
    let source: Box<dyn BufRead + Send + '_> = if armored {
        // Decoded as it is read: memory stays bounded for any size.
        Box::new(BufReader::with_capacity(
            1 << 16,
            ArmoredReader::new(reader),
        ))
    } else {
        Box::new(reader)
    };
    let decryptor = Decryptor::new(source)?;
    if decryptor.is_passphrase() {
        if !identities.is_empty() {
            return Err(usage(
                "the file is passphrase-encrypted: give no -i (the passphrase is asked for)",
            ));
        }
        let pass = match &args.passphrase_file {
            Some(p) => passphrase_from_file(p)?,
            None => prompt_beside(&shown_bar, "Enter passphrase: ")?,
        };
        identities.push(Box::new(ScryptIdentity::new(pass)));
    } else if identities.is_empty() {
        return Err(usage(
            "the file is encrypted to recipients: give -i IDENTITY_FILE",
        ));
    }
    let ids: Vec<&dyn Identity> = identities.iter().map(|b| b.as_ref()).collect();
    match start {
        // The payload of a binary age file read at offsets (the header was
        // read through the buffer above, from `offset`).
        Some(offset) if !armored => {
            let payload = ProgressAt::new(&input, offset, &bar);
            decryptor.decrypt_parallel_at(&ids, &payload, offset, output.writer(), threads)?;
            payload.leave_after_what_was_read();
        }
        _ => {
            decryptor.decrypt_parallel(&ids, output.writer(), threads)?;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    output.commit()?;
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time (civil-from-days, proleptic Gregorian).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn keygen(args: &KeygenArgs) -> Result<(), Failure> {
    if let Some(path) = &args.convert {
        let bytes = if path.as_os_str() == "-" {
            read_capped(stdio_file(io::stdin().as_fd())?, path, "identity file")?
        } else {
            read_file(path, "identity file")?
        };
        let text = std::str::from_utf8(&bytes).map_err(|_| usage("identity file is not text"))?;
        let mut n = 0;
        let mut out = String::new();
        for line in text.lines().map(str::trim) {
            let public = if line.starts_with("AGE-SECRET-KEY-PQ-1") {
                let id: HybridIdentity = line.parse().map_err(|_| usage("malformed identity"))?;
                id.to_public().to_string()
            } else if line.starts_with("AGE-SECRET-KEY-1") {
                let id: X25519Identity = line.parse().map_err(|_| usage("malformed identity"))?;
                id.to_public().to_string()
            } else {
                continue;
            };
            out.push_str(&public);
            out.push('\n');
            n += 1;
        }
        if n == 0 {
            return Err(usage(
                "no AGE-SECRET-KEY-1 or AGE-SECRET-KEY-PQ-1 identities in the input",
            ));
        }
        // `-o FILE` as age-keygen -y -o: the recipients to a new file.
        return match &args.output {
            Some(p) if p.as_os_str() != "-" => {
                Ok(open_output(p, args.force, true)?.write_whole(out.as_bytes())?)
            }
            _ => Ok(io::stdout().lock().write_all(out.as_bytes())?),
        };
    }
    let (public, secret) = if args.pq {
        let id = HybridIdentity::generate()?;
        (id.to_public().to_string(), id.to_secret_string())
    } else {
        let id = X25519Identity::generate()?;
        (id.to_public().to_string(), id.to_secret_string())
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let text = Zeroizing::new(format!(
        "# created: {}\n# public key: {public}\n{}\n",
        rfc3339(now),
        secret.as_str()
    ));
    match &args.output {
        Some(p) if p.as_os_str() != "-" => {
            // A new 0600 file renamed into place: with --force an existing
            // file is replaced, never written through with the mode it had
            // (a symbolic link is followed; a device is written in place).
            open_output(p, args.force, false)?.write_whole(text.as_bytes())?;
            eprintln!("Public key: {public}");
        }
        _ => {
            // As age-keygen: the public key on stderr when stdout is not a
            // terminal, and a warning when it is a file others can read.
            let stdout = io::stdout();
            if !stdout.is_terminal() {
                if let Ok(meta) = stdout
                    .as_fd()
                    .try_clone_to_owned()
                    .map(File::from)
                    .and_then(|f| f.metadata())
                    && meta.is_file()
                    && meta.permissions().mode() & 0o004 != 0
                {
                    eprintln!("hwcrypt: warning: writing the secret key to a world-readable file");
                }
                eprintln!("Public key: {public}");
            }
            stdout.lock().write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_798_761_599), "2026-12-31T23:59:59Z");
    }
}
