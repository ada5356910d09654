//! Safe output for `hwcrypt encrypt` / `decrypt`: with `-o FILE`, a
//! temporary file in the same directory (mode 0600, created new), fsynced
//! and renamed into place only on success, removed on any failure or on
//! Ctrl-C; never an existing file without `--force`; never the input file.
//! (Devices and pipes such as /dev/null are written in place by the caller.)

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary file to remove if the process is interrupted.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Installs the Ctrl-C handler that removes a pending temporary file.
pub fn remove_temp_on_interrupt() {
    // Another handler already installed (tests) is not worth failing for.
    let _ = ctrlc::set_handler(|| {
        if let Ok(mut p) = PENDING.lock()
            && let Some(path) = p.take()
        {
            let _ = fs::remove_file(path);
        }
        std::process::exit(130);
    });
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
    /// Renamed into place: the temporary name is gone.
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `target` (refused if it exists, unless `force`).
    pub fn create(target: &Path, force: bool) -> Result<AtomicFile, String> {
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
        Ok(AtomicFile {
            file: Some(file),
            temp,
            target: target.to_path_buf(),
            committed: false,
        })
    }

    /// The file to write to.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until commit")
    }

    /// Fsyncs, renames into place, fsyncs the directory. If the fsync or
    /// the rename fails (the target is a directory, the disk is full), the
    /// temporary file is removed on drop, as on any other failure.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("open until commit");
        file.sync_all()?;
        drop(file);
        fs::rename(&self.temp, &self.target).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write {}: {e}", self.target.display()),
            )
        })?;
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
