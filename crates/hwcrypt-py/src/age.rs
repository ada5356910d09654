//! age v1 files from Python (`hwcrypt.age`): whole buffers through
//! `hwcrypt-age` (the payload on every core, the GIL released), and
//! binary file objects streamed a megabyte at a time (bounded memory).

use crate::buffers::Input;
use hwcrypt_age::keys::{parse_identity_file, parse_recipient};
use hwcrypt_age::{Decryptor, Encryptor, Identity, ScryptIdentity, ScryptRecipient, armor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::io::{self, BufRead, BufReader, Read, Write};
use zeroize::Zeroizing;

pyo3::create_exception!(
    hwcrypt,
    AgeError,
    pyo3::exceptions::PyException,
    "An age file could not be encrypted or decrypted (wrong key, altered or truncated file, malformed header)."
);

/// A key problem is `ValueError`, a bad file `AgeError`; an exception the
/// file object raised (`OSError`, `KeyboardInterrupt`, ...) goes through
/// unchanged.
fn age_err(e: hwcrypt_age::Error) -> PyErr {
    match e {
        hwcrypt_age::Error::Key(m) => PyValueError::new_err(m),
        hwcrypt_age::Error::Io(io) if io.get_ref().is_some_and(|e| e.is::<PyErr>()) => {
            match io.into_inner().map(|e| e.downcast::<PyErr>()) {
                Some(Ok(py_err)) => *py_err,
                _ => AgeError::new_err("I/O error"),
            }
        }
        other => AgeError::new_err(other.to_string()),
    }
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `encrypt(data, recipients=(), passphrase=None, armor=False)` -> bytes:
/// an age file for `recipients` (`age1...`, `age1pq1...`, `ssh-ed25519 ...`,
/// `ssh-rsa ...` strings) or for a passphrase (scrypt), not both.
#[pyfunction]
#[pyo3(signature = (data, recipients = Vec::new(), passphrase = None, armor = false))]
fn age_encrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    recipients: Vec<String>,
    passphrase: Option<String>,
    armor: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let data = Input::new("data", data)?;
    let encryptor = encryptor(recipients, passphrase)?;
    let d = data.as_slice();
    let out = py
        .detach(|| -> hwcrypt_age::Result<Vec<u8>> {
            let mut file = Vec::with_capacity(d.len() + d.len() / 4096 + 512);
            encryptor.encrypt_parallel(d, &mut file, threads())?;
            if armor {
                let mut w = armor::ArmoredWriter::new(Vec::new())?;
                std::io::Write::write_all(&mut w, &file)?;
                file = w.finish()?;
            }
            Ok(file)
        })
        .map_err(age_err)?;
    Ok(PyBytes::new(py, &out))
}

/// `decrypt(data, identities=(), passphrase=None)` -> bytes: the plaintext
/// of an age file (binary or armored); `identities` are identity-file
/// texts (`AGE-SECRET-KEY-1...`, `AGE-SECRET-KEY-PQ-1...` lines, or an
/// unencrypted OpenSSH private key). Raises `AgeError` on a wrong key or
/// a damaged file (nothing is returned then).
#[pyfunction]
#[pyo3(signature = (data, identities = Vec::new(), passphrase = None))]
fn age_decrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    identities: Vec<String>,
    passphrase: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let data = Input::new("data", data)?;
    let ids = self::identities(&identities, passphrase)?;
    let d = data.as_slice();
    let out = py
        .detach(|| -> hwcrypt_age::Result<zeroize::Zeroizing<Vec<u8>>> {
            let binary;
            let file = if armor::is_armored(d) {
                binary = armor::decode_armor(d)?;
                &binary[..]
            } else {
                d
            };
            let refs: Vec<&dyn Identity> = ids.iter().map(|b| b.as_ref()).collect();
            // Never reallocated (the plaintext is shorter than the file),
            // so no copy of it is left behind; wiped once Python has its own
            // (or when a later chunk fails).
            let mut out = zeroize::Zeroizing::new(Vec::with_capacity(file.len()));
            Decryptor::new(file)?.decrypt_parallel(&refs, &mut *out, threads())?;
            Ok(out)
        })
        .map_err(age_err)?;
    Ok(PyBytes::new(py, &out))
}

/// A Python binary file object (`read(n)` -> bytes-like) as `io::Read`.
struct PyReader(Py<PyAny>);

impl PyReader {
    /// One `read(len(buf))` call.
    fn read_once(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let chunk = self
                .0
                .bind(py)
                .call_method1("read", (buf.len(),))
                .map_err(io::Error::other)?;
            if chunk.is_none() {
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "the file object returned None (non-blocking)",
                ));
            }
            let chunk = Input::new("read()", &chunk).map_err(io::Error::other)?;
            let data = chunk.as_slice();
            if data.len() > buf.len() {
                return Err(io::Error::other("read(n) returned more than n bytes"));
            }
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }
}

impl Read for PyReader {
    /// Fills `buf` unless the file ends (raw files may return less than
    /// asked: the armor check needs its first bytes in one buffer).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.read_once(&mut buf[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    }
}

/// A Python binary file object (`write(b)`) as `io::Write`.
struct PyWriter(Py<PyAny>);

impl Write for PyWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let n = self
                .0
                .bind(py)
                .call_method1("write", (PyBytes::new(py, buf),))
                .map_err(io::Error::other)?;
            // Buffered files return the length; raw ones may write less.
            // None from a raw file (`io.RawIOBase`) means it wrote nothing
            // (non-blocking, it would block); from other writers (a class
            // whose `write` returns nothing) that it took everything.
            if n.is_none() {
                let raw_base = py
                    .import("io")
                    .and_then(|io| io.getattr("RawIOBase"))
                    .map_err(io::Error::other)?;
                if self
                    .0
                    .bind(py)
                    .is_instance(&raw_base)
                    .map_err(io::Error::other)?
                {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "the raw file wrote nothing (non-blocking): give a blocking file",
                    ));
                }
                return Ok(buf.len());
            }
            match n.extract::<usize>().map_err(io::Error::other)? {
                k if k > buf.len() => Err(io::Error::other(
                    "write() reported more bytes than it was given",
                )),
                k => Ok(k),
            }
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Python::attach(|py| {
            let f = self.0.bind(py);
            if f.hasattr("flush").map_err(io::Error::other)? {
                f.call_method0("flush").map_err(io::Error::other)?;
            }
            Ok(())
        })
    }
}

/// Pieces read from Python at a time: big enough that the call overhead
/// vanishes, small enough to keep memory bounded.
const PIECE: usize = 1 << 20;

/// Copies `r` to its end into `w`; returns the bytes copied.
fn pump(r: &mut impl Read, w: &mut impl Write) -> io::Result<u64> {
    let mut buf = vec![0u8; PIECE];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        total += n as u64;
    }
}

fn encryptor(recipients: Vec<String>, passphrase: Option<String>) -> PyResult<Encryptor> {
    match (passphrase, recipients.is_empty()) {
        // As the CLI: an empty passphrase would make a file anyone opens
        // (`passphrase=os.environ.get("PW", "")`).
        (Some(p), _) if p.is_empty() => {
            return Err(PyValueError::new_err("empty passphrase"));
        }
        (Some(p), true) => {
            Encryptor::with_recipients(vec![Box::new(ScryptRecipient::new(Zeroizing::new(p)))])
        }
        (Some(_), false) => {
            return Err(PyValueError::new_err(
                "a passphrase cannot be combined with other recipients",
            ));
        }
        (None, true) => return Err(PyValueError::new_err("no recipients")),
        (None, false) => {
            let mut rs = Vec::new();
            for r in &recipients {
                rs.push(parse_recipient(r).map_err(age_err)?);
            }
            Encryptor::with_recipients(rs)
        }
    }
    .map_err(age_err)
}

fn identities(texts: &[String], passphrase: Option<String>) -> PyResult<Vec<Box<dyn Identity>>> {
    let mut ids: Vec<Box<dyn Identity>> = Vec::new();
    for text in texts {
        ids.extend(parse_identity_file(text.as_bytes()).map_err(age_err)?);
    }
    if let Some(p) = passphrase {
        ids.push(Box::new(ScryptIdentity::new(Zeroizing::new(p))));
    }
    if ids.is_empty() {
        return Err(PyValueError::new_err("no identities or passphrase"));
    }
    Ok(ids)
}

/// `encrypt_stream(src, dst, recipients=(), passphrase=None, armor=False)`:
/// reads the binary file object `src` to its end and writes the age file
/// to `dst`, a megabyte at a time (memory stays bounded); returns the
/// plaintext bytes read.
#[pyfunction]
#[pyo3(signature = (src, dst, recipients = Vec::new(), passphrase = None, armor = false))]
fn age_encrypt_stream(
    py: Python<'_>,
    src: Py<PyAny>,
    dst: Py<PyAny>,
    recipients: Vec<String>,
    passphrase: Option<String>,
    armor: bool,
) -> PyResult<u64> {
    let encryptor = encryptor(recipients, passphrase)?;
    let mut reader = PyReader(src);
    let run = || -> hwcrypt_age::Result<u64> {
        if armor {
            let mut w = encryptor.wrap_output(armor::ArmoredWriter::new(PyWriter(dst))?)?;
            let total = pump(&mut reader, &mut w)?;
            w.finish()?.finish()?.flush()?;
            Ok(total)
        } else {
            let mut w = encryptor.wrap_output(PyWriter(dst))?;
            let total = pump(&mut reader, &mut w)?;
            w.finish()?.flush()?;
            Ok(total)
        }
    };
    // The GIL is released for the crypto; `PyReader`/`PyWriter` take it
    // back for each call of the file objects, so other Python threads run
    // in between.
    py.detach(run).map_err(age_err)
}

/// `decrypt_stream(src, dst, identities=(), passphrase=None)`: decrypts the
/// age file read from `src` (binary or armored) into `dst`, a chunk at a
/// time; each chunk is written only after its tag verified. On an error
/// (`AgeError`) the chunks before the bad one have been written: the caller
/// discards `dst`. Returns the plaintext bytes written.
#[pyfunction]
#[pyo3(signature = (src, dst, identities = Vec::new(), passphrase = None))]
fn age_decrypt_stream(
    py: Python<'_>,
    src: Py<PyAny>,
    dst: Py<PyAny>,
    identities: Vec<String>,
    passphrase: Option<String>,
) -> PyResult<u64> {
    let ids = self::identities(&identities, passphrase)?;
    let run = || -> hwcrypt_age::Result<u64> {
        let mut reader = BufReader::with_capacity(PIECE, PyReader(src));
        // The bytes the decision took go back in front of the rest.
        let (armored, head) = armor::sniff_armor(&mut reader)?;
        let reader = std::io::Cursor::new(head).chain(reader);
        let source: Box<dyn BufRead> = if armored {
            Box::new(BufReader::with_capacity(
                1 << 16,
                armor::ArmoredReader::new(reader),
            ))
        } else {
            Box::new(reader)
        };
        let refs: Vec<&dyn Identity> = ids.iter().map(|b| b.as_ref()).collect();
        let mut plain = Decryptor::new(source)?.decrypt(&refs)?;
        let mut out = PyWriter(dst);
        let total = pump(&mut plain, &mut out).map_err(hwcrypt_age::Error::from_io)?;
        out.flush()?;
        Ok(total)
    };
    // As in `encrypt_stream`: released, taken back per file-object call.
    py.detach(run).map_err(age_err)
}

/// `keygen(post_quantum=False)` -> (identity, recipient).
#[pyfunction]
#[pyo3(signature = (post_quantum = false))]
fn age_keygen(post_quantum: bool) -> PyResult<(String, String)> {
    if post_quantum {
        let id = hwcrypt_age::HybridIdentity::generate().map_err(age_err)?;
        Ok((
            id.to_secret_string().to_string(),
            id.to_public().to_string(),
        ))
    } else {
        let id = hwcrypt_age::X25519Identity::generate().map_err(age_err)?;
        Ok((
            id.to_secret_string().to_string(),
            id.to_public().to_string(),
        ))
    }
}

/// Adds the age functions and `AgeError` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("AgeError", m.py().get_type::<AgeError>())?;
    m.add_function(wrap_pyfunction!(age_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(age_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(age_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(age_encrypt_stream, m)?)?;
    m.add_function(wrap_pyfunction!(age_decrypt_stream, m)?)?;
    Ok(())
}
