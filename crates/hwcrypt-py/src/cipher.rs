//! The contexts behind `hwcrypt.Cipher(AES(key), mode).encryptor()` and
//! `.decryptor()` (`update`, `update_into`, `finalize`; GCM's
//! `authenticate_additional_data`, `tag`, `finalize_with_tag`), with
//! `cryptography`'s buffering rules, and one-shot functions for whole
//! messages. The Python side (`hwcrypt/ciphers.py`) checks the arguments
//! and messages as `cryptography` does before it makes a context.

use crate::buffers::{DETACH_MIN, Input, Output, new_bytes};
use crate::errors::{AlreadyFinalized, AlreadyUpdated, NotYetFinalized, to_py};
use hwcrypt::aes::Aes;
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::modes::{Cbc, Ctr, Ecb, Xts, padding};
use pyo3::exceptions::{PyAttributeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::sync::Mutex;
use zeroize::Zeroize;

const BLOCK: usize = 16;

/// The mode and its state.
enum Mode {
    Ctr(Ctr<Aes>),
    /// CBC and ECB hold back a partial block until the next update.
    Cbc(Cbc<Aes>, Vec<u8>),
    Ecb(Ecb<Aes>, Vec<u8>),
    /// Each update is one data unit under the context's tweak (as
    /// `cryptography` and OpenSSL do).
    Xts(Box<Xts>, [u8; BLOCK]),
    Gcm(Box<Gcm>),
}

struct Gcm {
    stream: AesGcmStream<AesGcm>,
    /// The tag given to `modes.GCM(iv, tag)` (decryption).
    expected: Option<Vec<u8>>,
    min_tag_len: usize,
    /// The tag made by `finalize` (encryption).
    tag: Option<Vec<u8>>,
    updated: bool,
}

struct State {
    mode: Mode,
    encrypt: bool,
    finalized: bool,
}

/// An encryption or decryption context (`Cipher(...).encryptor()`).
#[pyclass(module = "hwcrypt", name = "CipherContext", frozen)]
pub struct CipherContext {
    state: Mutex<State>,
}

/// The context's state. A context is used by one thread at a time: a
/// second thread gets an error instead of waiting (it would wait holding
/// the GIL for a thread that released it to encrypt, and neither could go
/// on).
fn lock(ctx: &CipherContext) -> PyResult<std::sync::MutexGuard<'_, State>> {
    match ctx.state.try_lock() {
        Ok(g) => Ok(g),
        // Only a panic inside a call poisons it: the state may be half
        // updated, so the context is spent.
        Err(std::sync::TryLockError::Poisoned(_)) => {
            Err(AlreadyFinalized::new_err("Context was already finalized."))
        }
        Err(std::sync::TryLockError::WouldBlock) => Err(pyo3::exceptions::PyRuntimeError::new_err(
            "this cipher context is in use by another thread",
        )),
    }
}

fn run<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_MIN { py.detach(f) } else { f() }
}

/// CBC and ECB: puts the held-back bytes and then whole blocks of `input`
/// into `out` (`out.len()` is the whole blocks available) and holds back
/// the rest; returns whether there is anything to process.
fn stage(pending: &mut Vec<u8>, input: &[u8], out: &mut [u8]) -> bool {
    if out.is_empty() {
        pending.extend_from_slice(input);
        return false;
    }
    let held = pending.len();
    let used = out.len() - held;
    out[..held].copy_from_slice(pending);
    out[held..].copy_from_slice(&input[..used]);
    // Held-back plaintext is wiped, not just forgotten.
    pending.zeroize();
    pending.extend_from_slice(&input[used..]);
    true
}

impl Drop for State {
    fn drop(&mut self) {
        if let Mode::Cbc(_, pending) | Mode::Ecb(_, pending) = &mut self.mode {
            pending.zeroize();
        }
    }
}

impl State {
    /// How many output bytes `update` gives for `n` input bytes.
    fn out_len(&self, n: usize) -> usize {
        match &self.mode {
            Mode::Cbc(_, pending) | Mode::Ecb(_, pending) => (pending.len() + n) / BLOCK * BLOCK,
            _ => n,
        }
    }

    /// The most `update_into` may write for `n` input bytes
    /// (`cryptography`'s rule: `n + 15` for the block modes).
    fn update_into_min(&self, n: usize) -> usize {
        match &self.mode {
            Mode::Cbc(..) | Mode::Ecb(..) => n + BLOCK - 1,
            _ => n,
        }
    }

    /// Processes `input` into `out` (`out.len() == self.out_len(input.len())`).
    /// No Python calls: the caller may run it with the GIL released.
    fn update(&mut self, input: &[u8], out: &mut [u8]) -> PyResult<()> {
        let enc = self.encrypt;
        match &mut self.mode {
            Mode::Ctr(ctr) => ctr.apply_keystream_to(input, out).map_err(to_py),
            Mode::Cbc(cbc, pending) => {
                if stage(pending, input, out) {
                    if enc {
                        cbc.encrypt(out)
                    } else {
                        cbc.decrypt(out)
                    }
                    .map_err(to_py)?;
                }
                Ok(())
            }
            Mode::Ecb(ecb, pending) => {
                if stage(pending, input, out) {
                    if enc {
                        ecb.encrypt(out)
                    } else {
                        ecb.decrypt(out)
                    }
                    .map_err(to_py)?;
                }
                Ok(())
            }
            Mode::Xts(xts, tweak) => {
                // Nothing in, nothing out (as `cryptography`: a read loop
                // may end with an empty piece).
                if input.is_empty() {
                    return Ok(());
                }
                if input.len() < BLOCK {
                    return Err(PyValueError::new_err(
                        "In XTS mode you must supply at least a full block in the first update call. For AES this is 16 bytes.",
                    ));
                }
                let tweak = *tweak;
                if enc {
                    xts.encrypt_to(&tweak, input, out)
                } else {
                    xts.decrypt_to(&tweak, input, out)
                }
                .map_err(to_py)
            }
            Mode::Gcm(g) => {
                g.updated = true;
                let stream = &mut g.stream;
                if enc {
                    stream.encrypt_to(input, out)
                } else {
                    stream.decrypt_to(input, out)
                }
                .map_err(|e| match e {
                    // `cryptography`'s ValueError for the GCM limit.
                    hwcrypt::Error::MessageTooLong { .. } => {
                        PyValueError::new_err("Exceeded maximum encrypted byte limit")
                    }
                    e => to_py(e),
                })
            }
        }
    }

    /// [`Self::finalize`], and the context's end as `cryptography` has it:
    /// a refused call (a partial block, a tag of the wrong length, no tag:
    /// `ValueError`) leaves the context usable; success or a failed tag
    /// check (`InvalidTag`) spends it.
    fn finish(&mut self, py: Python<'_>, tag: Option<&[u8]>) -> PyResult<()> {
        let r = self.finalize(tag);
        if !matches!(&r, Err(e) if e.is_instance_of::<PyValueError>(py)) {
            self.finalized = true;
        }
        r
    }

    fn finalize(&mut self, tag: Option<&[u8]>) -> PyResult<()> {
        let enc = self.encrypt;
        match &mut self.mode {
            Mode::Cbc(_, pending) | Mode::Ecb(_, pending) => {
                if !pending.is_empty() {
                    return Err(PyValueError::new_err(
                        "The length of the provided data is not a multiple of the block length.",
                    ));
                }
            }
            Mode::Gcm(g) => {
                if enc {
                    let t = g.stream.finish().map_err(to_py)?;
                    g.tag = Some(t.as_bytes().to_vec());
                } else {
                    let tag = match (tag, &g.expected) {
                        (Some(t), _) => t.to_vec(),
                        (None, Some(t)) => t.clone(),
                        (None, None) => {
                            return Err(PyValueError::new_err(
                                "Authentication tag must be provided when decrypting.",
                            ));
                        }
                    };
                    if tag.len() < g.min_tag_len {
                        return Err(PyValueError::new_err(format!(
                            "Authentication tag must be {} bytes or longer.",
                            g.min_tag_len
                        )));
                    }
                    if tag.len() > 16 {
                        return Err(PyValueError::new_err(
                            "Authentication tag cannot be more than 16 bytes.",
                        ));
                    }
                    if tag.len() != g.stream.tag_len() {
                        return Err(PyValueError::new_err(
                            "hwcrypt: a tag shorter than 16 bytes must be given to modes.GCM(iv, tag, min_tag_length) before decryption starts",
                        ));
                    }
                    g.stream.verify(&tag).map_err(to_py)?;
                }
            }
            Mode::Ctr(_) | Mode::Xts(..) => {}
        }
        Ok(())
    }
}

#[pymethods]
impl CipherContext {
    /// Encrypts or decrypts `data`; returns what is ready (CBC and ECB hold
    /// back a partial block).
    fn update<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let input = Input::new("data", data)?;
        let mut st = lock(self)?;
        if st.finalized {
            return Err(AlreadyFinalized::new_err("Context was already finalized."));
        }
        let data = input.as_slice();
        let n = st.out_len(data.len());
        let state: &mut State = &mut st;
        new_bytes(py, &[], n, data.len(), |out| state.update(data, out))
    }

    /// As `update`, into `buf` (at least `len(data)` bytes, `len(data) + 15`
    /// for CBC and ECB); returns the bytes written.
    fn update_into(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        buf: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let input = Input::new("data", data)?;
        let mut out = Output::new(buf)?;
        let mut st = lock(self)?;
        if st.finalized {
            return Err(AlreadyFinalized::new_err("Context was already finalized."));
        }
        let len = input.as_slice().len();
        let min = st.update_into_min(len);
        if out.len() < min {
            return Err(PyValueError::new_err(format!(
                "buffer must be at least {min} bytes for this payload"
            )));
        }
        let n = st.out_len(len);
        let state: &mut State = &mut st;
        out.with([Some(&input)], |[data], out| {
            run(py, len, || state.update(data, &mut out[..n]))
        })?;
        Ok(n)
    }

    /// Ends the message: checks that no partial block is left (CBC, ECB),
    /// makes the tag (GCM encryption) or verifies it (GCM decryption with
    /// the tag given to `modes.GCM`). Returns `b""`.
    fn finalize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut st = lock(self)?;
        if st.finalized {
            return Err(AlreadyFinalized::new_err("Context was already finalized."));
        }
        st.finish(py, None)?;
        Ok(PyBytes::new(py, b""))
    }

    /// GCM decryption: verifies `tag` and ends the message (`InvalidTag`
    /// if it does not verify).
    fn finalize_with_tag<'py>(
        &self,
        py: Python<'py>,
        tag: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let tag = Input::new("tag", tag)?;
        let mut st = lock(self)?;
        if st.finalized {
            return Err(AlreadyFinalized::new_err("Context was already finalized."));
        }
        match &st.mode {
            Mode::Gcm(g) if !st.encrypt => {
                if g.expected.is_some() {
                    return Err(PyValueError::new_err(
                        "Authentication tag must be provided only once.",
                    ));
                }
            }
            // AttributeError, as `cryptography`, whose other contexts have
            // no such method.
            _ => {
                return Err(PyAttributeError::new_err(
                    "finalize_with_tag is only for GCM decryption contexts",
                ));
            }
        }
        st.finish(py, Some(tag.as_slice()))?;
        Ok(PyBytes::new(py, b""))
    }

    /// GCM: associated data, before any `update`.
    fn authenticate_additional_data(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let input = Input::new("data", data)?;
        let mut st = lock(self)?;
        if st.finalized {
            return Err(AlreadyFinalized::new_err("Context was already finalized."));
        }
        match &mut st.mode {
            Mode::Gcm(g) => {
                if g.updated {
                    return Err(AlreadyUpdated::new_err(
                        "Update has been called on this context.",
                    ));
                }
                let (stream, aad) = (&mut g.stream, input.as_slice());
                run(py, aad.len(), || stream.aad(aad)).map_err(|e| match e {
                    hwcrypt::Error::MessageTooLong { .. } => {
                        PyValueError::new_err("Exceeded maximum associated data byte limit")
                    }
                    e => to_py(e),
                })
            }
            // AttributeError, as `cryptography`'s non-AEAD contexts have no
            // such method.
            _ => Err(PyAttributeError::new_err(
                "authenticate_additional_data is only for GCM contexts",
            )),
        }
    }

    /// GCM encryption: the tag, once `finalize` was called.
    #[getter]
    fn tag<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let st = lock(self)?;
        match &st.mode {
            Mode::Gcm(g) if st.encrypt => match &g.tag {
                Some(t) => Ok(PyBytes::new(py, t)),
                None => Err(NotYetFinalized::new_err(
                    "You must finalize encryption before getting the tag.",
                )),
            },
            // AttributeError, as `cryptography`'s contexts have no `tag`
            // but a GCM encryption's: `hasattr(ctx, "tag")` answers the same.
            Mode::Gcm(_) => Err(PyAttributeError::new_err(
                "a GCM decryption context has no tag (the tag is the one given to it)",
            )),
            _ => Err(PyAttributeError::new_err(
                "only GCM encryption contexts have a tag",
            )),
        }
    }
}

/// `hwcrypt._hwcrypt._context(mode, key, iv, encrypt, tag, min_tag_length)`:
/// a context for a mode the Python side already checked.
#[pyfunction]
#[pyo3(signature = (mode, key, iv, encrypt, tag = None, min_tag_length = 16))]
fn _context(
    mode: &str,
    key: &Bound<'_, PyAny>,
    iv: Option<&Bound<'_, PyAny>>,
    encrypt: bool,
    tag: Option<&Bound<'_, PyAny>>,
    min_tag_length: usize,
) -> PyResult<CipherContext> {
    let key = Input::new("key", key)?;
    let iv = Input::optional("iv", iv)?;
    let iv = iv.as_ref().map_or(&[][..], Input::as_slice);
    let key = key.as_slice();
    let mode = match mode {
        "CTR" => Mode::Ctr(Ctr::new(Aes::new(key).map_err(to_py)?, iv).map_err(to_py)?),
        "CBC" => Mode::Cbc(
            Cbc::new(Aes::new(key).map_err(to_py)?, iv).map_err(to_py)?,
            Vec::new(),
        ),
        "ECB" => Mode::Ecb(Ecb::new(Aes::new(key).map_err(to_py)?), Vec::new()),
        "XTS" => {
            let tweak: [u8; BLOCK] = iv
                .try_into()
                .map_err(|_| PyValueError::new_err("tweak must be 128-bits (16 bytes)"))?;
            Mode::Xts(Box::new(Xts::new(key).map_err(to_py)?), tweak)
        }
        "GCM" => {
            let expected = Input::optional("tag", tag)?.map(|t| t.as_slice().to_vec());
            let tag_len = match &expected {
                Some(t) if !encrypt => t.len(),
                _ => 16,
            };
            let mut stream = AesGcmStream::with_tag_len(AesGcm::new(key).map_err(to_py)?, tag_len)
                .map_err(to_py)?;
            stream.start(iv).map_err(to_py)?;
            Mode::Gcm(Box::new(Gcm {
                stream,
                expected,
                min_tag_len: min_tag_length,
                tag: None,
                updated: false,
            }))
        }
        other => return Err(PyValueError::new_err(format!("unknown mode {other}"))),
    };
    Ok(CipherContext {
        state: Mutex::new(State {
            mode,
            encrypt,
            finalized: false,
        }),
    })
}

/// A new `bytes` as long as `data`, written by `f(data, out)` (with the GIL
/// released for long messages).
fn detached_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    f: impl FnOnce(&[u8], &mut [u8]) -> hwcrypt::Result<()> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    new_bytes(py, &[], data.len(), data.len(), |out| {
        f(data, out).map_err(to_py)
    })
}

/// The key, IV and data of a one-shot CBC call, and the CBC context.
fn cbc_parts<'py>(
    key: &Bound<'py, PyAny>,
    iv: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<(Cbc<Aes>, Input<'py>)> {
    let (key, iv, data) = (
        Input::new("key", key)?,
        Input::new("iv", iv)?,
        Input::new("data", data)?,
    );
    let cbc = Cbc::new(Aes::new(key.as_slice()).map_err(to_py)?, iv.as_slice()).map_err(to_py)?;
    Ok((cbc, data))
}

/// `aes_ctr(key, nonce, data)`: AES-CTR with a 16-byte initial counter
/// block (128-bit big-endian counter, as `cryptography`'s `modes.CTR`);
/// encryption and decryption are the same.
#[pyfunction]
fn aes_ctr<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (key, nonce, data) = (
        Input::new("key", key)?,
        Input::new("nonce", nonce)?,
        Input::new("data", data)?,
    );
    let mut ctr =
        Ctr::new(Aes::new(key.as_slice()).map_err(to_py)?, nonce.as_slice()).map_err(to_py)?;
    let d = data.as_slice();
    detached_bytes(py, d, |i, o| ctr.apply_keystream_to(i, o))
}

/// `aes_cbc_encrypt(key, iv, data, padding=True)`: PKCS#7-padded (or, with
/// `padding=False`, whole blocks only) CBC encryption.
#[pyfunction]
#[pyo3(signature = (key, iv, data, padding = true))]
fn aes_cbc_encrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    iv: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    padding: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let (mut cbc, data) = cbc_parts(key, iv, data)?;
    let d = data.as_slice();
    if padding {
        let out = run(py, d.len(), || cbc.encrypt_padded(d));
        return Ok(PyBytes::new(py, &out));
    }
    detached_bytes(py, d, |i, o| cbc.encrypt_to(i, o))
}

/// `aes_cbc_decrypt(key, iv, data, padding=True)`: CBC decryption, then
/// the PKCS#7 padding checked and removed (`ValueError` if it is bad).
#[pyfunction]
#[pyo3(signature = (key, iv, data, padding = true))]
fn aes_cbc_decrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    iv: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    padding: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let (mut cbc, data) = cbc_parts(key, iv, data)?;
    let d = data.as_slice();
    if padding {
        // The plaintext's private copy is wiped once Python has its own.
        let out =
            zeroize::Zeroizing::new(run(py, d.len(), || cbc.decrypt_padded(d)).map_err(to_py)?);
        return Ok(PyBytes::new(py, &out));
    }
    detached_bytes(py, d, |i, o| cbc.decrypt_to(i, o))
}

/// `aes_ecb_encrypt(key, data)` / `aes_ecb_decrypt`: whole blocks.
#[pyfunction]
fn aes_ecb_encrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (key, data) = (Input::new("key", key)?, Input::new("data", data)?);
    let ecb = Ecb::new(Aes::new(key.as_slice()).map_err(to_py)?);
    let d = data.as_slice();
    detached_bytes(py, d, |i, o| ecb.encrypt_to(i, o))
}

/// See [`aes_ecb_encrypt`].
#[pyfunction]
fn aes_ecb_decrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (key, data) = (Input::new("key", key)?, Input::new("data", data)?);
    let ecb = Ecb::new(Aes::new(key.as_slice()).map_err(to_py)?);
    let d = data.as_slice();
    detached_bytes(py, d, |i, o| ecb.decrypt_to(i, o))
}

fn xts_parts<'py>(
    key: &Bound<'py, PyAny>,
    tweak: &Bound<'py, PyAny>,
) -> PyResult<(Xts, [u8; BLOCK])> {
    let (key, tweak) = (Input::new("key", key)?, Input::new("tweak", tweak)?);
    let tweak: [u8; BLOCK] = tweak
        .as_slice()
        .try_into()
        .map_err(|_| PyValueError::new_err("tweak must be 128-bits (16 bytes)"))?;
    // AES-192-XTS (48 bytes) is not in IEEE 1619; `Cipher` refuses it too.
    if !matches!(key.as_slice().len(), 32 | 64) {
        return Err(PyValueError::new_err(
            "The XTS specification requires a 256-bit key for AES-128-XTS and 512-bit key for AES-256-XTS",
        ));
    }
    Ok((Xts::new(key.as_slice()).map_err(to_py)?, tweak))
}

/// `aes_xts_encrypt(key, tweak, data)`: one data unit of at least 16 bytes
/// (ciphertext stealing for the rest); the key is both halves (32 or 64
/// bytes, halves different).
#[pyfunction]
fn aes_xts_encrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    tweak: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (xts, tweak) = xts_parts(key, tweak)?;
    let data = Input::new("data", data)?;
    let d = data.as_slice();
    detached_bytes(py, d, |i, o| xts.encrypt_to(&tweak, i, o))
}

/// See [`aes_xts_encrypt`].
#[pyfunction]
fn aes_xts_decrypt<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
    tweak: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (xts, tweak) = xts_parts(key, tweak)?;
    let data = Input::new("data", data)?;
    let d = data.as_slice();
    detached_bytes(py, d, |i, o| xts.decrypt_to(&tweak, i, o))
}

/// `pkcs7_pad(data)` / `pkcs7_unpad(data)` (block size 16).
#[pyfunction]
fn pkcs7_pad<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let data = Input::new("data", data)?;
    let d = data.as_slice();
    // Written straight into the new `bytes` (no private copy of the
    // plaintext to wipe): `n` bytes of value `n`, 1 <= n <= 16.
    let pad = BLOCK - d.len() % BLOCK;
    new_bytes(py, d, pad, d.len(), |out| {
        out[d.len()..].fill(pad as u8);
        Ok(())
    })
}

/// See [`pkcs7_pad`]; `ValueError("Invalid padding bytes.")` on bad padding.
#[pyfunction]
fn pkcs7_unpad<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let data = Input::new("data", data)?;
    let out = padding::pkcs7_unpad(data.as_slice(), BLOCK).map_err(to_py)?;
    Ok(PyBytes::new(py, out))
}

/// Adds the contexts and one-shot functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CipherContext>()?;
    m.add_function(wrap_pyfunction!(_context, m)?)?;
    m.add_function(wrap_pyfunction!(aes_ctr, m)?)?;
    m.add_function(wrap_pyfunction!(aes_cbc_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(aes_cbc_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(aes_ecb_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(aes_ecb_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(aes_xts_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(aes_xts_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(pkcs7_pad, m)?)?;
    m.add_function(wrap_pyfunction!(pkcs7_unpad, m)?)?;
    Ok(())
}
