//! The FFI boundary with Python's buffer protocol: the one module of the
//! bindings with `unsafe`.
//!
//! Inputs are any C-contiguous buffer of bytes (`bytes`, `bytearray`,
//! `memoryview`, numpy arrays): read in place, without a copy. Outputs are
//! new `bytes` objects filled before Python can see them, or a caller's
//! writable buffer (`*_into`). While a buffer is held (a `PyBuffer` export)
//! its memory cannot be freed or resized (`bytearray` refuses to resize
//! with an export alive), so the slices below stay valid across a released
//! GIL. What Python code in another thread writes into a buffer while
//! hwcrypt reads or writes it is that program's race, as with every C
//! extension that releases the GIL (numpy, hashlib): the documented rule is
//! not to mutate a buffer that is being encrypted.
#![allow(unsafe_code)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyBufferError, PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Inputs at least this long are processed with the GIL released, so other
/// Python threads run (and several threads encrypt in parallel).
pub const DETACH_MIN: usize = 4096;

/// A readable byte buffer.
pub enum Input<'py> {
    /// `bytes`: immutable, read directly.
    Bytes(Bound<'py, PyBytes>),
    /// Anything else with the buffer protocol.
    Buffer(PyBuffer<u8>),
}

impl<'py> Input<'py> {
    /// `obj` as a byte buffer; `TypeError` (naming `what`) for objects
    /// without the buffer protocol (`str`, `None`, ...), as `cryptography`.
    pub fn new(what: &str, obj: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
        if let Ok(b) = obj.cast::<PyBytes>() {
            return Ok(Input::Bytes(b.clone()));
        }
        let buffer = PyBuffer::<u8>::get(obj).map_err(|e| {
            // An `Exception` (not a buffer, a released memoryview, ...)
            // becomes `cryptography`'s TypeError; a `BaseException` that is
            // not one (KeyboardInterrupt from a `__buffer__`, SystemExit)
            // goes on as it is.
            if !e.is_instance_of::<PyException>(obj.py()) {
                return e;
            }
            PyTypeError::new_err(format!(
                "argument '{what}': Cannot convert \"{}\" instance to a buffer.",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        if !buffer.is_c_contiguous() {
            // BufferError, as `cryptography` raises (not a ValueError).
            return Err(PyBufferError::new_err(format!(
                "argument '{what}': Buffer is not contiguous."
            )));
        }
        Ok(Input::Buffer(buffer))
    }

    /// An optional argument: `None` is the empty buffer.
    pub fn optional(what: &str, obj: Option<&Bound<'py, PyAny>>) -> PyResult<Option<Input<'py>>> {
        match obj {
            None => Ok(None),
            Some(o) if o.is_none() => Ok(None),
            Some(o) => Input::new(what, o).map(Some),
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Input::Bytes(b) => b.as_bytes(),
            Input::Buffer(buf) => {
                let len = buf.len_bytes();
                if len == 0 {
                    return &[];
                }
                // SAFETY: a C-contiguous buffer of `len` bytes (checked in
                // `new`; `u8` elements, checked by `PyBuffer::<u8>::get`),
                // kept alive and unresizable by the export `buf` holds for
                // as long as `self` (and so the returned slice) lives.
                unsafe { core::slice::from_raw_parts(buf.buf_ptr().cast::<u8>(), len) }
            }
        }
    }

    /// Where its bytes are (for the overlap check of `*_into`).
    fn range(&self) -> core::ops::Range<usize> {
        let s = self.as_slice();
        let start = s.as_ptr() as usize;
        start..start + s.len()
    }
}

/// A caller's writable buffer (`encrypt_into`, `update_into`, ...).
pub struct Output {
    buffer: PyBuffer<u8>,
}

impl Output {
    /// `obj` as a writable, contiguous byte buffer (`TypeError` otherwise,
    /// as `cryptography`).
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Output> {
        let buffer = PyBuffer::<u8>::get(obj).map_err(|e| {
            if !e.is_instance_of::<PyException>(obj.py()) {
                return e;
            }
            PyTypeError::new_err("argument 'buf': Cannot convert the object to a buffer.")
        })?;
        if buffer.readonly() {
            return Err(PyTypeError::new_err(
                "argument 'buf': Buffer is not writable.",
            ));
        }
        if !buffer.is_c_contiguous() {
            return Err(PyBufferError::new_err(
                "argument 'buf': Buffer is not contiguous.",
            ));
        }
        Ok(Output { buffer })
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.buffer.len_bytes()
    }

    /// Runs `f(inputs, output)` with the bytes of `inputs` (`None` is
    /// empty) and of this buffer. An input that shares memory with the
    /// output (another view of the same buffer: the data, but also a nonce
    /// or associated data) is copied first, before the output slice is
    /// made, so no `&[u8]` aliases the `&mut [u8]` and writing the output
    /// cannot change an input that is still to be read.
    pub fn with<R, const N: usize>(
        &mut self,
        inputs: [Option<&Input<'_>>; N],
        f: impl FnOnce([&[u8]; N], &mut [u8]) -> R,
    ) -> R {
        let len = self.buffer.len_bytes();
        let start = self.buffer.buf_ptr() as usize;
        let overlaps = |i: &Input<'_>| {
            let r = i.range();
            len != 0 && !r.is_empty() && r.start < start + len && start < r.end
        };
        let copies: [Option<Vec<u8>>; N] =
            inputs.map(|i| i.filter(|i| overlaps(i)).map(|i| i.as_slice().to_vec()));
        let slices: [&[u8]; N] = core::array::from_fn(|k| match (&copies[k], inputs[k]) {
            (Some(copy), _) => &copy[..],
            (None, Some(i)) => i.as_slice(),
            (None, None) => &[][..],
        });
        let out: &mut [u8] = if len == 0 {
            &mut []
        } else {
            // SAFETY: a writable (checked in `new`), C-contiguous buffer of
            // `len` bytes, alive and unresizable while `self.buffer` holds
            // its export; `&mut self` keeps this the only slice made from it
            // here, and every input slice that shares its memory was
            // replaced by a private copy above, so no `&[u8]` in `slices`
            // aliases it.
            unsafe { core::slice::from_raw_parts_mut(self.buffer.buf_ptr().cast::<u8>(), len) }
        };
        f(slices, out)
    }
}

/// A new `bytes` of `prefix.len() + extra` bytes that starts as a copy of
/// `prefix` (the rest zero), finished by `f` before Python sees it. Unlike
/// `PyBytes::new_with`, the memory is not cleared first (one pass over the
/// message fewer: a megabyte message is out of L2). The copy, the zeros and
/// `f` run with the GIL released when `work` (the bytes the call
/// processes: the message and its associated data) is at least
/// [`DETACH_MIN`]: only the allocation needs the interpreter, and nothing
/// else can reach the object before this returns it.
pub fn new_bytes<'py>(
    py: Python<'py>,
    prefix: &[u8],
    extra: usize,
    work: usize,
    f: impl FnOnce(&mut [u8]) -> PyResult<()> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    use pyo3::ffi;
    let len = prefix.len() + extra;
    let size = ffi::Py_ssize_t::try_from(len)
        .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("message too long"))?;
    // SAFETY: `PyBytes_FromStringAndSize(NULL, n)` returns a new reference
    // to a bytes object with `n` uninitialised bytes (or NULL with an
    // exception set, which `from_owned_ptr_or_err` turns into `Err`); we
    // hold the GIL (`py`).
    let bytes = unsafe {
        Bound::from_owned_ptr_or_err(py, ffi::PyBytes_FromStringAndSize(core::ptr::null(), size))?
            .cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: the GIL is held; `bytes` is a bytes object.
    let buf = Unshared(unsafe { ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>() });
    let fill = move || {
        let buf = buf.get();
        // SAFETY: the object was just made and no other code has a
        // reference to it (it is not returned until this closure is done,
        // and the GIL, released or not, does not hand it to anyone), so its
        // `len` bytes at `buf` are ours to write, with or without the GIL;
        // they are all initialised (the copy of `prefix`, then zeros)
        // before the slice is made.
        let out = unsafe {
            core::ptr::copy_nonoverlapping(prefix.as_ptr(), buf, prefix.len());
            core::ptr::write_bytes(buf.add(prefix.len()), 0, extra);
            core::slice::from_raw_parts_mut(buf, len)
        };
        f(out)
    };
    // On an error `bytes` is dropped and freed: Python never sees it.
    if work >= DETACH_MIN {
        py.detach(fill)?;
    } else {
        fill()?;
    }
    Ok(bytes)
}

/// The storage of a `bytes` object no other code can reach yet: written
/// from the thread that made it, with the GIL released.
struct Unshared(*mut u8);

// SAFETY: the pointer is only written through by the one closure that
// receives it, while the thread that made the object waits for it (see
// `new_bytes`): never by two threads at once.
unsafe impl Send for Unshared {}

impl Unshared {
    /// The pointer (a method, so that a closure captures the whole value,
    /// which is `Send`, not its raw-pointer field).
    fn get(self) -> *mut u8 {
        self.0
    }
}
