//! hwcrypt's errors as the Python exceptions `cryptography` raises for the
//! same misuse. The exception classes are defined in
//! `hwcrypt/_exceptions.py`: subclasses of `cryptography.exceptions`' when
//! `cryptography` is installed (existing `except` clauses keep working),
//! hwcrypt's own otherwise.

use hwcrypt::Error;
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

pyo3::import_exception!(hwcrypt._exceptions, InvalidTag);
pyo3::import_exception!(hwcrypt._exceptions, AlreadyFinalized);
pyo3::import_exception!(hwcrypt._exceptions, AlreadyUpdated);
pyo3::import_exception!(hwcrypt._exceptions, NotYetFinalized);

/// `InvalidTag()`.
pub fn invalid_tag(_py: Python<'_>) -> PyErr {
    InvalidTag::new_err(())
}

/// A hwcrypt error as a Python exception: a failed tag or padding check is
/// `InvalidTag` / `ValueError` (as `cryptography`), lengths and parameters
/// `ValueError`, limits `OverflowError`.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::AuthenticationFailed => InvalidTag::new_err(()),
        Error::BadPadding => PyValueError::new_err("Invalid padding bytes."),
        Error::MessageTooLong { .. } | Error::KeystreamExhausted => {
            PyOverflowError::new_err(e.to_string())
        }
        other => PyValueError::new_err(other.to_string()),
    }
}
