//! Safe output for `hwcrypt encrypt` / `decrypt` / `keygen`: with `-o
//! FILE`, a temporary file in the same directory (mode 0600, created new),
//! fsynced and renamed into place only on success, removed on any failure,
//! on SIGINT, SIGTERM or SIGHUP, and on a panic; never an existing file
//! without `--force` (not even one made while the command ran); never the
//! input file. A signal inherited as ignored (`nohup`) stays ignored.
//! Devices, pipes and the standard output's own file (`-o /dev/stdout`)
//! are written in place ([`open_output`]); a symbolic link is followed,
//! never replaced.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// The temporary file to remove if the process is interrupted.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

fn remove_pending() {
    if let Ok(mut p) = PENDING.lock()
        && let Some(path) = p.take()
    {
        let _ = fs::remove_file(path);
    }
}

/// Whether the process inherited `signal` as ignored (`SigIgn` in
/// /proc/self/status): `nohup` ignores SIGHUP, a shell ignores SIGINT in
/// its background jobs. Such a signal is left ignored.
fn inherited_ignored(signal: i32) -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        })
        .is_some_and(|mask| (1..=64).contains(&signal) && mask >> (signal - 1) & 1 == 1)
}

/// Removes a pending temporary file on SIGINT, SIGTERM and SIGHUP (each
/// unless inherited as ignored; exit status 128 + the signal) and on a
/// panic (the release build aborts on a panic: no destructor runs). The
/// signals are taken by `signal-hook`'s thread (the CLI has no `unsafe`).
pub fn remove_temp_on_interrupt() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&s| !inherited_ignored(s))
            .collect();
        if let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    remove_pending();
                    std::process::exit(128 + signal);
                }
            });
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            remove_pending();
            previous(info);
        }));
    });
}

/// Where an output goes.
pub enum OutputTarget {
    /// Written in place: a device, a pipe, or standard output's own file.
    InPlace(File),
    /// A temporary file renamed into place on success.
    Atomic(AtomicFile),
}

impl OutputTarget {
    /// Writes all of `bytes` and, for a temporary file, moves it into place.
    pub fn write_whole(self, bytes: &[u8]) -> io::Result<()> {
        match self {
            OutputTarget::InPlace(mut f) => f.write_all(bytes),
            OutputTarget::Atomic(mut f) => {
                f.write_all(bytes)?;
                f.commit()
            }
        }
    }
}

/// Why an output cannot be opened: the caller's usage error (exit 2) or a
/// failure (exit 1).
pub enum OpenError {
    Usage(String),
    Failed(String),
}

/// Opens `-o path`: in place for a device or pipe (/dev/null, a FIFO) and
/// for standard output's own file reached through a symbolic link
/// (`/dev/stdout`, `/proc/self/fd/1`: written through the descriptor, so a
/// `>>` append stays an append); otherwise a temporary file renamed over
/// the path, or over the file a symbolic link names (the link stays).
/// `keep_mode`: an existing file replaced with `--force` keeps its mode,
/// owner and group where the process may set them (as age writes through
/// it); without it the result is 0600 (a secret key).
pub fn open_output(path: &Path, force: bool, keep_mode: bool) -> Result<OutputTarget, OpenError> {
    let shown = path.display();
    if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(OpenError::Usage(format!(
            "output {shown} names a directory"
        )));
    }
    let link = fs::symlink_metadata(path);
    let is_link = link.as_ref().is_ok_and(|m| m.file_type().is_symlink());
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(OpenError::Usage(format!("output {shown} is a directory")));
        }
        Ok(meta) if !meta.is_file() => {
            let f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| OpenError::Failed(format!("cannot open {shown}: {e}")))?;
            return Ok(OutputTarget::InPlace(f));
        }
        Ok(meta) if is_link => {
            if let Some(stdout) = stdout_file()
                && stdout
                    .metadata()
                    .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
            {
                return Ok(OutputTarget::InPlace(stdout));
            }
        }
        Ok(_) => {}
        Err(_) if is_link && force => {
            return Err(OpenError::Usage(format!(
                "output {shown} is a symbolic link to nothing"
            )));
        }
        Err(_) => {}
    }
    refuse_existing(path, force).map_err(OpenError::Usage)?;
    let target = if is_link {
        fs::canonicalize(path)
            .map_err(|e| OpenError::Failed(format!("cannot resolve {shown}: {e}")))?
    } else {
        path.to_path_buf()
    };
    remove_temp_on_interrupt();
    AtomicFile::create(&target, force, keep_mode)
        .map(OutputTarget::Atomic)
        .map_err(OpenError::Failed)
}

/// Standard output as a file (a duplicate of descriptor 1).
fn stdout_file() -> Option<File> {
    io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .map(File::from)
}

/// Whether `a` and `b` are the same file (device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Refuses an existing `target` unless `force` (a usage error for the
/// caller; [`AtomicFile::create`] checks again, for a file made since).
pub fn refuse_existing(target: &Path, force: bool) -> Result<(), String> {
    if !force && fs::symlink_metadata(target).is_ok() {
        return Err(format!(
            "output file {} exists (use --force to overwrite it)",
            target.display()
        ));
    }
    Ok(())
}

/// An output file being written under a temporary name.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    temp: PathBuf,
    target: PathBuf,
    /// Whether an existing target may be replaced.
    force: bool,
    /// Renamed into place: the temporary name is gone.
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `target` (refused if it exists, unless `force`;
    /// `keep_mode`: see [`open_output`]).
    pub fn create(target: &Path, force: bool, keep_mode: bool) -> Result<AtomicFile, String> {
        refuse_existing(target, force)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| format!("output {} is not a file name", target.display()))?
            .to_string_lossy()
            .into_owned();
        let mut rnd = [0u8; 6];
        getrandom::fill(&mut rnd).map_err(|e| e.to_string())?;
        let temp = dir.join(format!(".{name}.{}.hwcrypt-tmp", hex::encode(rnd)));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
            .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
        if let Ok(mut p) = PENDING.lock() {
            *p = Some(temp.clone());
        }
        if keep_mode
            && let Ok(old) = fs::metadata(target)
            && old.is_file()
        {
            // Owner first (a chown clears set-id bits), each where allowed.
            let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
            let _ = file.set_permissions(fs::Permissions::from_mode(old.mode() & 0o7777));
        }
        Ok(AtomicFile {
            file: Some(file),
            temp,
            target: target.to_path_buf(),
            force,
            committed: false,
        })
    }

    /// The file to write to.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until commit")
    }

    /// Fsyncs, moves into place, fsyncs the directory. Without `force` the
    /// move is a hard link that fails if the name exists (a file made there
    /// while this ran is kept), then the temporary name's removal; with it,
    /// a rename. If the fsync or the move fails (the target is a directory,
    /// the disk is full), the temporary file is removed on drop, as on any
    /// other failure.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("open until commit");
        file.sync_all()?;
        drop(file);
        let cannot = |e: io::Error| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.target.display()),
            )
        };
        if self.force {
            fs::rename(&self.temp, &self.target).map_err(cannot)?;
        } else {
            match fs::hard_link(&self.temp, &self.target) {
                Ok(()) => {
                    let _ = fs::remove_file(&self.temp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "output file {} was created while this ran (use --force to overwrite it)",
                            self.target.display()
                        ),
                    ));
                }
                // A file system without hard links: the name is free (or
                // the rename below fails as it would have).
                Err(_) if fs::symlink_metadata(&self.target).is_err() => {
                    fs::rename(&self.temp, &self.target).map_err(cannot)?;
                }
                Err(e) => return Err(cannot(e)),
            }
        }
        self.committed = true;
        if let Ok(mut p) = PENDING.lock() {
            *p = None;
        }
        if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        } else if let Ok(d) = File::open(".") {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    /// Not committed (an error, or a failed commit): remove the temporary
    /// file.
    fn drop(&mut self) {
        if !self.committed {
            drop(self.file.take());
            let _ = fs::remove_file(&self.temp);
            if let Ok(mut p) = PENDING.lock() {
                *p = None;
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    /// Passed on: a file writes a segment's chunks with one `writev`.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.file().write_vectored(bufs)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}
