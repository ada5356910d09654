//! `AESGCM`, `ChaCha20Poly1305` and `XChaCha20Poly1305`: the shape of
//! `cryptography.hazmat.primitives.ciphers.aead` (`generate_key`,
//! `encrypt`, `decrypt`, `encrypt_into`, `decrypt_into`), the same argument
//! checks and exception types, on hwcrypt's backends.

use crate::buffers::{DETACH_MIN, Input, Output, new_bytes};
use crate::errors::{invalid_tag, to_py};
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305 as RustChaCha, XChaCha20Poly1305 as RustXChaCha};
use hwcrypt::gcm::AesGcm;
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

const TAG: usize = 16;
/// `cryptography` refuses data or associated data longer than this.
const MAX_LEN: usize = (1 << 31) - 1;

/// The checks and the sealing/opening one AEAD needs.
trait Sealer: Sync {
    fn check_nonce(&self, nonce: &[u8]) -> PyResult<()>;
    fn seal(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> hwcrypt::Result<[u8; TAG]>;
    /// Seals `input` into `output` (same length). Whether that is one pass
    /// (AES-GCM's VAES kernels) or a copy and an in-place seal.
    fn seal_to(
        &self,
        nonce: &[u8],
        aad: &[u8],
        input: &[u8],
        output: &mut [u8],
    ) -> hwcrypt::Result<[u8; TAG]> {
        output.copy_from_slice(input);
        self.seal(nonce, aad, output)
    }
    /// Verifies and decrypts `input` into `output` (same length); `output`
    /// is zeroed on failure.
    fn open_to(
        &self,
        nonce: &[u8],
        aad: &[u8],
        input: &[u8],
        tag: &[u8],
        output: &mut [u8],
    ) -> hwcrypt::Result<()> {
        output.copy_from_slice(input);
        self.open(nonce, aad, output, tag)
    }
    /// `seal_to` / `open_to` read the input in the same pass as they write
    /// (no copy).
    const ONE_PASS: bool = false;
    fn open(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> hwcrypt::Result<()>;
}

impl Sealer for AesGcm {
    fn check_nonce(&self, nonce: &[u8]) -> PyResult<()> {
        if !(8..=128).contains(&nonce.len()) {
            return Err(PyValueError::new_err(
                "Nonce must be between 8 and 128 bytes",
            ));
        }
        Ok(())
    }
    fn seal(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> hwcrypt::Result<[u8; TAG]> {
        let tag = self.seal_in_place_detached_with(nonce, aad, buf, TAG)?;
        let mut out = [0u8; TAG];
        out.copy_from_slice(tag.as_bytes());
        Ok(out)
    }
    fn open(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> hwcrypt::Result<()> {
        self.open_in_place_detached_with(nonce, aad, buf, tag)
    }
    fn seal_to(
        &self,
        nonce: &[u8],
        aad: &[u8],
        input: &[u8],
        output: &mut [u8],
    ) -> hwcrypt::Result<[u8; TAG]> {
        let tag = self.seal_detached_with(nonce, aad, input, output, TAG)?;
        let mut out = [0u8; TAG];
        out.copy_from_slice(tag.as_bytes());
        Ok(out)
    }
    fn open_to(
        &self,
        nonce: &[u8],
        aad: &[u8],
        input: &[u8],
        tag: &[u8],
        output: &mut [u8],
    ) -> hwcrypt::Result<()> {
        self.open_detached_with(nonce, aad, input, tag, output)
    }
    const ONE_PASS: bool = true;
}

macro_rules! chacha_sealer {
    ($ty:ty, $nonce:expr, $msg:expr) => {
        impl Sealer for $ty {
            fn check_nonce(&self, nonce: &[u8]) -> PyResult<()> {
                if nonce.len() != $nonce {
                    return Err(PyValueError::new_err($msg));
                }
                Ok(())
            }
            fn seal(&self, nonce: &[u8], aad: &[u8], buf: &mut [u8]) -> hwcrypt::Result<[u8; TAG]> {
                let tag = self.seal_in_place_detached(nonce, aad, buf)?;
                let mut out = [0u8; TAG];
                out.copy_from_slice(tag.as_ref());
                Ok(out)
            }
            fn open(
                &self,
                nonce: &[u8],
                aad: &[u8],
                buf: &mut [u8],
                tag: &[u8],
            ) -> hwcrypt::Result<()> {
                self.open_in_place_detached(nonce, aad, buf, tag)
            }
        }
    };
}

chacha_sealer!(RustChaCha, 12, "Nonce must be 12 bytes");
chacha_sealer!(RustXChaCha, 24, "Nonce must be 24 bytes");

/// Runs `f` with the GIL released when the call's work (message and
/// associated data) is long enough for the hand-off to pay.
fn maybe_detach<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= DETACH_MIN { py.detach(f) } else { f() }
}

/// The buffers of one call: nonce, data and (optional) associated data.
struct Args<'py> {
    nonce: Input<'py>,
    data: Input<'py>,
    aad: Option<Input<'py>>,
}

impl<'py> Args<'py> {
    /// The arguments as buffers (`TypeError` for non-buffers).
    fn new(
        nonce: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        aad: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Args<'py>> {
        Ok(Args {
            nonce: Input::new("nonce", nonce)?,
            data: Input::new("data", data)?,
            aad: Input::optional("associated_data", aad)?,
        })
    }

    fn aad(&self) -> &[u8] {
        self.aad.as_ref().map_or(&[][..], Input::as_slice)
    }

    /// `cryptography`'s checks, after every argument was converted (as it
    /// does): the lengths (the data's when encrypting only: a ciphertext of
    /// the longest plaintext is 16 bytes longer, and `cryptography` opens
    /// it; the associated data's both ways), then the nonce.
    fn check<S: Sealer>(&self, key: &S, encrypting: bool) -> PyResult<()> {
        if (encrypting && self.data.as_slice().len() > MAX_LEN) || self.aad().len() > MAX_LEN {
            return Err(PyOverflowError::new_err(
                "Data or associated data too long. Max 2**31 - 1 bytes",
            ));
        }
        key.check_nonce(self.nonce.as_slice())
    }
}

fn encrypt<'py, S: Sealer>(
    key: &S,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let args = Args::new(nonce, data, aad)?;
    args.check(key, true)?;
    let (nonce, data, aad) = (args.nonce.as_slice(), args.data.as_slice(), args.aad());
    let work = data.len() + aad.len();
    if S::ONE_PASS {
        // The result cleared (writes only) instead of a copy of the input
        // (reads and writes): the kernel reads the input itself.
        return new_bytes(py, &[], data.len() + TAG, work, |out| {
            let (body, tag) = out.split_at_mut(data.len());
            let t = key.seal_to(nonce, aad, data, body).map_err(to_py)?;
            tag.copy_from_slice(&t);
            Ok(())
        });
    }
    new_bytes(py, data, TAG, work, |out| {
        let (body, tag) = out.split_at_mut(data.len());
        let t = key.seal(nonce, aad, body).map_err(to_py)?;
        tag.copy_from_slice(&t);
        Ok(())
    })
}

fn decrypt<'py, S: Sealer>(
    key: &S,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let args = Args::new(nonce, data, aad)?;
    args.check(key, false)?;
    let (nonce, data, aad) = (args.nonce.as_slice(), args.data.as_slice(), args.aad());
    if data.len() < TAG {
        return Err(invalid_tag(py));
    }
    let (body, tag) = data.split_at(data.len() - TAG);
    let work = data.len() + aad.len();
    if S::ONE_PASS {
        return new_bytes(py, &[], body.len(), work, |out| {
            key.open_to(nonce, aad, body, tag, out).map_err(to_py)
        });
    }
    new_bytes(py, body, 0, work, |out| {
        key.open(nonce, aad, out, tag).map_err(to_py)
    })
}

fn encrypt_into<'py, S: Sealer>(
    key: &S,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let args = Args::new(nonce, data, aad)?;
    let mut out = Output::new(buf)?;
    args.check(key, true)?;
    let len = args.data.as_slice().len();
    if out.len() != len + TAG {
        return Err(PyValueError::new_err(format!(
            "buffer must be {} bytes",
            len + TAG
        )));
    }
    let inputs = [Some(&args.nonce), Some(&args.data), args.aad.as_ref()];
    out.with(inputs, |[nonce, input, aad], out| {
        let (body, tag) = out.split_at_mut(len);
        let work = len + aad.len();
        let t = maybe_detach(py, work, || key.seal_to(nonce, aad, input, body)).map_err(to_py)?;
        tag.copy_from_slice(&t);
        Ok(len + TAG)
    })
}

fn decrypt_into<'py, S: Sealer>(
    key: &S,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    aad: Option<&Bound<'py, PyAny>>,
    buf: &Bound<'py, PyAny>,
) -> PyResult<usize> {
    let args = Args::new(nonce, data, aad)?;
    let mut out = Output::new(buf)?;
    args.check(key, false)?;
    let len = args.data.as_slice().len();
    if len < TAG {
        return Err(invalid_tag(py));
    }
    if out.len() != len - TAG {
        return Err(PyValueError::new_err(format!(
            "buffer must be {} bytes",
            len - TAG
        )));
    }
    let inputs = [Some(&args.nonce), Some(&args.data), args.aad.as_ref()];
    out.with(inputs, |[nonce, input, aad], out| {
        let (body, tag) = input.split_at(len - TAG);
        // On failure `out` is zeroed by the library before this returns.
        // The one-pass open writes plaintext there before the tag is
        // checked: while the call runs (the GIL released from 4 KiB) no
        // other thread may read the buffer (docs/python.md). A private
        // buffer and a copy cost more than half the speed (measured
        // 2026-11-29: 3.2 against 7.4 GB/s at 16 KiB).
        let work = len + aad.len();
        maybe_detach(py, work, || key.open_to(nonce, aad, body, tag, out)).map_err(to_py)?;
        Ok(len - TAG)
    })
}

fn random_key(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyBytes>> {
    PyBytes::new_with(py, len, |out| {
        getrandom::fill(out)
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("random: {e}")))
    })
}

/// Defines a Python AEAD class around a hwcrypt key type.
macro_rules! aead_class {
    ($name:ident, $pyname:literal, $rust:ty, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(module = "hwcrypt", name = $pyname, frozen)]
        pub struct $name {
            key: $rust,
        }

        #[pymethods]
        impl $name {
            /// `encrypt(nonce, data, associated_data)` -> `ciphertext || tag`.
            #[pyo3(signature = (nonce, data, associated_data))]
            fn encrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                encrypt(&self.key, py, nonce, data, associated_data)
            }

            /// `decrypt(nonce, data, associated_data)` -> plaintext; raises
            /// `InvalidTag` (and releases nothing) if the tag does not verify.
            #[pyo3(signature = (nonce, data, associated_data))]
            fn decrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                decrypt(&self.key, py, nonce, data, associated_data)
            }

            /// `encrypt_into(nonce, data, associated_data, buf)`: writes
            /// `ciphertext || tag` into `buf` (exactly `len(data) + 16`
            /// writable bytes); returns the bytes written.
            #[pyo3(signature = (nonce, data, associated_data, buf))]
            fn encrypt_into<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                buf: &Bound<'py, PyAny>,
            ) -> PyResult<usize> {
                encrypt_into(&self.key, py, nonce, data, associated_data, buf)
            }

            /// `decrypt_into(nonce, data, associated_data, buf)`: writes the
            /// plaintext into `buf` (exactly `len(data) - 16` bytes); on
            /// `InvalidTag` `buf` is left zeroed.
            #[pyo3(signature = (nonce, data, associated_data, buf))]
            fn decrypt_into<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<&Bound<'py, PyAny>>,
                buf: &Bound<'py, PyAny>,
            ) -> PyResult<usize> {
                decrypt_into(&self.key, py, nonce, data, associated_data, buf)
            }

            /// The hwcrypt backend this key runs on (`"vaes-avx512"`, ...).
            #[getter]
            fn backend(&self) -> &'static str {
                self.key.backend().name()
            }

            fn __repr__(&self) -> String {
                format!(
                    "<hwcrypt.{} backend={}>",
                    $pyname,
                    self.key.backend().name()
                )
            }
        }
    };
}

aead_class!(
    AesGcmPy,
    "AESGCM",
    AesGcm,
    "AES-GCM with a 128-, 192- or 256-bit key and 16-byte tags: `cryptography`'s `AESGCM`."
);
aead_class!(
    ChaChaPy,
    "ChaCha20Poly1305",
    RustChaCha,
    "ChaCha20-Poly1305 (RFC 8439), 32-byte key, 12-byte nonce: `cryptography`'s `ChaCha20Poly1305`."
);
aead_class!(
    XChaChaPy,
    "XChaCha20Poly1305",
    RustXChaCha,
    "XChaCha20-Poly1305, 32-byte key, 24-byte nonce (random nonces are safe): the shape of `ChaCha20Poly1305`."
);

fn key_bytes<'py>(key: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
    Input::new("key", key)
}

#[pymethods]
impl AesGcmPy {
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<AesGcmPy> {
        let key = key_bytes(key)?;
        if !matches!(key.as_slice().len(), 16 | 24 | 32) {
            return Err(PyValueError::new_err(
                "AESGCM key must be 128, 192, or 256 bits.",
            ));
        }
        Ok(AesGcmPy {
            key: AesGcm::new(key.as_slice()).map_err(to_py)?,
        })
    }

    /// A random key of `bit_length` (128, 192 or 256) bits.
    #[staticmethod]
    fn generate_key(py: Python<'_>, bit_length: usize) -> PyResult<Bound<'_, PyBytes>> {
        if !matches!(bit_length, 128 | 192 | 256) {
            return Err(PyValueError::new_err("bit_length must be 128, 192, or 256"));
        }
        random_key(py, bit_length / 8)
    }
}

macro_rules! chacha_new {
    ($name:ident, $rust:ty, $msg:literal) => {
        #[pymethods]
        impl $name {
            #[new]
            fn new(key: &Bound<'_, PyAny>) -> PyResult<$name> {
                let key = key_bytes(key)?;
                if key.as_slice().len() != 32 {
                    return Err(PyValueError::new_err($msg));
                }
                Ok($name {
                    key: <$rust>::new(key.as_slice()).map_err(to_py)?,
                })
            }

            /// A random 32-byte key.
            #[staticmethod]
            fn generate_key(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
                random_key(py, 32)
            }
        }
    };
}

chacha_new!(
    ChaChaPy,
    RustChaCha,
    "ChaCha20Poly1305 key must be 32 bytes."
);
chacha_new!(
    XChaChaPy,
    RustXChaCha,
    "XChaCha20Poly1305 key must be 32 bytes."
);
