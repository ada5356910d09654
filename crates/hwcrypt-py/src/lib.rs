//! `hwcrypt` for Python: the extension module `hwcrypt._hwcrypt` under the
//! Python package in `python/hwcrypt` (maturin builds both into one wheel).
//!
//! - [`aead`]: `AESGCM`, `ChaCha20Poly1305`, `XChaCha20Poly1305`
//!   (`cryptography`'s AEAD classes).
//! - [`cipher`]: the contexts behind `hwcrypt.Cipher(...).encryptor()` /
//!   `decryptor()` (CTR, CBC, ECB, XTS, streaming GCM) and one-shot
//!   functions.
//! - [`age`]: age v1 files (`hwcrypt.age`).
//! - [`buffers`]: Python's buffer protocol (the only `unsafe`).

mod aead;
mod age;
mod buffers;
mod cipher;
mod errors;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What `hwcrypt cpu --json` reports: the CPU model, the features detected,
/// the `HWCRYPT_CPU` mask, the features in use, and each algorithm's
/// backend.
#[pyfunction]
fn cpu_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    use hwcrypt::cpu;
    use hwcrypt::registry::{self, Algorithm};
    let d = PyDict::new(py);
    if let Some(m) = cpu::model() {
        d.set_item("vendor", m.vendor)?;
        d.set_item("model", m.brand)?;
        d.set_item("family", m.family)?;
        d.set_item("model_number", m.model)?;
    }
    let names = |f: cpu::Features| f.iter().map(|x| x.name()).collect::<Vec<_>>();
    d.set_item("detected", names(cpu::detected()))?;
    let mask = std::env::var("HWCRYPT_CPU").unwrap_or_default();
    d.set_item("hwcrypt_cpu", mask)?;
    let usable = cpu::features().map_err(errors::to_py)?;
    d.set_item("usable", names(usable))?;
    let backends = PyDict::new(py);
    for alg in &Algorithm::ALL {
        let entry = PyDict::new(py);
        entry.set_item(
            "default",
            registry::default_backend(*alg)
                .map_err(errors::to_py)?
                .name(),
        )?;
        let runnable: Vec<&str> = registry::runnable(*alg, usable)
            .into_iter()
            .map(|b| b.name())
            .collect();
        entry.set_item("runnable", runnable)?;
        backends.set_item(alg.name(), entry)?;
    }
    d.set_item("backends", backends)?;
    // How the extension was built: "unwind" (a Rust panic is raised as
    // PanicException), or "abort" (it would end the interpreter).
    d.set_item(
        "panic",
        if cfg!(panic = "unwind") {
            "unwind"
        } else {
            "abort"
        },
    )?;
    Ok(d)
}

/// The backend hwcrypt uses for `algorithm` on this CPU (after
/// `HWCRYPT_CPU`): `backend_for("aes-gcm")` -> `"vaes-avx512"`.
#[pyfunction]
fn backend_for(algorithm: &str) -> PyResult<&'static str> {
    use hwcrypt::registry::{self, Algorithm};
    let alg = Algorithm::ALL
        .iter()
        .find(|a| a.name() == algorithm)
        .ok_or_else(|| {
            let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            pyo3::exceptions::PyValueError::new_err(format!(
                "unknown algorithm {algorithm:?} (known: {})",
                known.join(", ")
            ))
        })?;
    Ok(registry::default_backend(*alg)
        .map_err(errors::to_py)?
        .name())
}

#[pymodule]
fn _hwcrypt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<aead::AesGcmPy>()?;
    m.add_class::<aead::ChaChaPy>()?;
    m.add_class::<aead::XChaChaPy>()?;
    cipher::register(m)?;
    age::register(m)?;
    m.add_function(wrap_pyfunction!(cpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(backend_for, m)?)?;
    Ok(())
}
