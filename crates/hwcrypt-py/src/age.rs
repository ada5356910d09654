//! age v1 files from Python (`hwcrypt.age`): whole buffers through
//! `hwcrypt-age`, the payload on every core.

use crate::buffers::Input;
use hwcrypt_age::keys::{parse_identity_file, parse_recipient};
use hwcrypt_age::{Decryptor, Encryptor, Identity, ScryptIdentity, ScryptRecipient, armor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

pyo3::create_exception!(
    hwcrypt,
    AgeError,
    pyo3::exceptions::PyException,
    "An age file could not be encrypted or decrypted (wrong key, altered or truncated file, malformed header)."
);

fn age_err(e: hwcrypt_age::Error) -> PyErr {
    match e {
        hwcrypt_age::Error::Key(m) => PyValueError::new_err(m),
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
    let encryptor = match (passphrase, recipients.is_empty()) {
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
    .map_err(age_err)?;
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
    let mut ids: Vec<Box<dyn Identity>> = Vec::new();
    for text in &identities {
        ids.extend(parse_identity_file(text.as_bytes()).map_err(age_err)?);
    }
    if let Some(p) = passphrase {
        ids.push(Box::new(ScryptIdentity::new(Zeroizing::new(p))));
    }
    if ids.is_empty() {
        return Err(PyValueError::new_err("no identities or passphrase"));
    }
    let d = data.as_slice();
    let out = py
        .detach(|| -> hwcrypt_age::Result<Vec<u8>> {
            let binary;
            let file = if armor::is_armored(d) {
                binary = armor::decode_armor(d)?;
                &binary[..]
            } else {
                d
            };
            let refs: Vec<&dyn Identity> = ids.iter().map(|b| b.as_ref()).collect();
            let mut out = Vec::with_capacity(file.len());
            Decryptor::new(file)?.decrypt_parallel(&refs, &mut out, threads())?;
            Ok(out)
        })
        .map_err(age_err)?;
    Ok(PyBytes::new(py, &out))
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
    Ok(())
}
