//! `OSSL_PARAM` access: typed reads and writes with OpenSSL's conversion
//! rules (`OSSL_PARAM_get_uint`, `OSSL_PARAM_set_octet_string`, ...), and the
//! parameter tables. Each table is declared once (key, type, [`ParamId`])
//! and serves both the `gettable`/`settable` lists handed to libcrypto and
//! the lookup of the keys a caller passes to `get`/`set`.

#![allow(unsafe_code)]

use super::types::*;
use crate::ciphers::ParamId;
use core::ffi::{CStr, c_uint, c_void};
use core::marker::PhantomData;

/// One parameter a table describes.
#[derive(Debug)]
#[allow(dead_code)] // `data_type` documents the table; the lists carry it to C.
pub(crate) struct ParamDef {
    pub id: ParamId,
    pub key: &'static CStr,
    pub data_type: c_uint,
}

/// A parameter list: the definitions, and the same as an `OSSL_PARAM`
/// array (terminated) for the `gettable`/`settable` functions.
#[derive(Debug)]
pub(crate) struct ParamTable {
    pub defs: &'static [ParamDef],
    pub ossl: OsslParamList,
}

/// A static, read-only `OSSL_PARAM` array.
#[derive(Debug)]
pub(crate) struct OsslParamList(pub &'static [OsslParam]);

// SAFETY: the arrays are immutable statics whose pointers point at other
// statics (the key strings); sharing them between threads is sound.
unsafe impl Sync for OsslParamList {}

impl ParamTable {
    /// The [`ParamId`] of `key`, if this table lists it.
    pub fn find(&self, key: &CStr) -> Option<ParamId> {
        self.defs.iter().find(|d| d.key == key).map(|d| d.id)
    }

    /// The `OSSL_PARAM` descriptor list.
    pub fn as_ptr(&self) -> *const OsslParam {
        self.ossl.0.as_ptr()
    }
}

/// Declares a [`ParamTable`] static: `param_table!(NAME = [(Id, c"key", TYPE), ...]);`
/// with `TYPE` one of `UINT`, `SIZE_T`, `INT`, `OCTETS`, `OCTET_PTR`, `UTF8_PTR`.
macro_rules! param_table {
    ($vis:vis $name:ident = [$(($id:ident, $key:expr, $ty:ident)),* $(,)?]) => {
        $vis static $name: $crate::ffi::params::ParamTable = $crate::ffi::params::ParamTable {
            defs: &[$($crate::ffi::params::ParamDef {
                id: $crate::ciphers::ParamId::$id,
                key: $key,
                data_type: $crate::ffi::params::kind::$ty.0,
            }),*],
            ossl: $crate::ffi::params::OsslParamList(&[
                $($crate::ffi::types::OsslParam {
                    key: $key.as_ptr(),
                    data_type: $crate::ffi::params::kind::$ty.0,
                    data: core::ptr::null_mut(),
                    data_size: $crate::ffi::params::kind::$ty.1,
                    return_size: $crate::ffi::types::PARAM_UNMODIFIED,
                },)*
                $crate::ffi::types::OsslParam::END,
            ]),
        };
    };
}
pub(crate) use param_table;

/// (data type, descriptor size) of each kind of parameter.
pub(crate) mod kind {
    use super::*;
    pub const UINT: (c_uint, usize) = (PARAM_UNSIGNED_INTEGER, size_of::<c_uint>());
    pub const SIZE_T: (c_uint, usize) = (PARAM_UNSIGNED_INTEGER, size_of::<usize>());
    pub const INT: (c_uint, usize) = (PARAM_INTEGER, size_of::<core::ffi::c_int>());
    pub const OCTETS: (c_uint, usize) = (PARAM_OCTET_STRING, 0);
    pub const UTF8_PTR: (c_uint, usize) = (PARAM_UTF8_PTR, 0);
    pub const UINT64: (c_uint, usize) = (PARAM_UNSIGNED_INTEGER, size_of::<u64>());
}

/// Walks a caller's `OSSL_PARAM` array (null: empty) and calls `f` on each
/// element until the terminator or until `f` returns false.
///
/// # Safety
/// `params` is null or points to an array terminated by an element whose
/// key is null, each element valid as OpenSSL documents (`data` points to
/// `data_size` bytes of the stated type or is null), not used elsewhere
/// for the duration of the call.
pub(crate) unsafe fn for_each(
    params: *mut OsslParam,
    mut f: impl FnMut(&mut Param<'_>) -> bool,
) -> bool {
    if params.is_null() {
        return true;
    }
    let mut p = params;
    loop {
        // SAFETY: `p` is within the terminated array (the caller's contract);
        // only read here.
        let key = unsafe { (*p).key };
        if key.is_null() {
            return true;
        }
        // SAFETY: keys are NUL-terminated strings (OSSL_PARAM contract).
        let key = unsafe { CStr::from_ptr(key) };
        let mut param = Param {
            key,
            raw: p,
            array: PhantomData,
        };
        if !f(&mut param) {
            return false;
        }
        // SAFETY: not the terminator, so the next element exists.
        p = unsafe { p.add(1) };
    }
}

/// One caller-supplied parameter, read (`set_ctx_params`) or written
/// (`get_params`). Every method checks the type and size it is handed.
/// Held as a pointer, not `&mut`: `set_ctx_params` gets the caller's
/// array as `const OSSL_PARAM *` (it may be read-only memory), and only the
/// writing methods, which `get_params` paths call, write through it.
#[derive(Debug)]
pub(crate) struct Param<'a> {
    key: &'a CStr,
    raw: *mut OsslParam,
    array: PhantomData<&'a mut OsslParam>,
}

impl Param<'_> {
    /// The element, for reading.
    fn raw(&self) -> &OsslParam {
        // SAFETY: `raw` points to a live element of the caller's array for
        // the lifetime of `self` (`for_each`'s contract); nothing writes
        // it while this borrow lives (writes go through `set_return_size`,
        // which takes `&mut self`).
        unsafe { &*self.raw }
    }

    /// Records how many bytes a get wrote (or would write). Called only on
    /// `get_params` paths, whose array the caller passes writable.
    fn set_return_size(&mut self, n: usize) {
        // SAFETY: as in `raw`; a field write through the pointer, to an
        // element OpenSSL hands over as `OSSL_PARAM *` for writing.
        unsafe { (*self.raw).return_size = n };
    }

    pub fn key(&self) -> &CStr {
        self.key
    }

    /// `data_size` as the caller gave it (the length of an octet string).
    pub fn data_size(&self) -> usize {
        self.raw().data_size
    }

    /// Whether the caller passed no buffer (a size-only octet string).
    pub fn data_is_null(&self) -> bool {
        self.raw().data.is_null()
    }

    pub fn is_octet_string(&self) -> bool {
        self.raw().data_type == PARAM_OCTET_STRING
    }

    /// `OSSL_PARAM_get_uint64`-like: a non-negative integer of 1, 2, 4 or 8
    /// bytes, signed or unsigned.
    pub fn get_u64(&self) -> Option<u64> {
        if self.raw().data.is_null() {
            return None;
        }
        let d = self.raw().data as *const u8;
        // SAFETY: `data` points to `data_size` readable bytes of an integer
        // (OSSL_PARAM contract); the read is unaligned-safe.
        let unsigned = unsafe {
            match self.raw().data_size {
                1 => u64::from(d.read()),
                2 => u64::from((d as *const u16).read_unaligned()),
                4 => u64::from((d as *const u32).read_unaligned()),
                8 => (d as *const u64).read_unaligned(),
                _ => return None,
            }
        };
        match self.raw().data_type {
            PARAM_UNSIGNED_INTEGER => Some(unsigned),
            PARAM_INTEGER => {
                let bits = 8 * self.raw().data_size as u32;
                let negative = (unsigned >> (bits - 1)) & 1 == 1;
                (!negative).then_some(unsigned)
            }
            _ => None,
        }
    }

    /// `OSSL_PARAM_get_uint`.
    pub fn get_uint(&self) -> Option<u32> {
        self.get_u64().and_then(|v| u32::try_from(v).ok())
    }

    /// `OSSL_PARAM_get_size_t`.
    pub fn get_size(&self) -> Option<usize> {
        self.get_u64().and_then(|v| usize::try_from(v).ok())
    }

    /// The bytes of an octet string with a buffer.
    pub fn get_octets(&self) -> Option<&[u8]> {
        if !self.is_octet_string()
            || self.raw().data.is_null()
            || self.raw().data_size > isize::MAX as usize
        {
            return None;
        }
        // SAFETY: an octet string's `data` points to `data_size` readable bytes.
        Some(unsafe {
            core::slice::from_raw_parts(self.raw().data as *const u8, self.raw().data_size)
        })
    }

    /// The first `n` bytes of the buffer of an octet string whose size the
    /// caller gave as `(size_t)-1` (OpenSSH's "the whole IV").
    pub fn read_prefix(&self, n: usize) -> Option<&[u8]> {
        if !self.is_octet_string() || self.raw().data.is_null() || self.raw().data_size < n {
            return None;
        }
        // SAFETY: the caller passes a buffer of at least the IV length
        // (OpenSSH: its IV); `data_size` (here SIZE_MAX) is not a length.
        Some(unsafe { core::slice::from_raw_parts(self.raw().data as *const u8, n) })
    }

    /// The caller's octet-string buffer, to be filled in full (a tag, an
    /// IV): `None` unless the type is octet string and a buffer is there.
    pub fn octet_buffer(&mut self) -> Option<&mut [u8]> {
        if !self.is_octet_string()
            || self.raw().data.is_null()
            || self.raw().data_size > isize::MAX as usize
        {
            return None;
        }
        self.set_return_size(self.raw().data_size);
        // SAFETY: an octet string's `data` points to `data_size` writable
        // bytes owned by the caller for the duration of the call.
        Some(unsafe {
            core::slice::from_raw_parts_mut(self.raw().data as *mut u8, self.raw().data_size)
        })
    }

    /// `OSSL_PARAM_set_uint64`-like: writes `v` into an integer of the
    /// caller's size and signedness, failing when it does not fit.
    pub fn set_u64(&mut self, v: u64) -> bool {
        let size = self.raw().data_size;
        let max = match (self.raw().data_type, size) {
            (PARAM_UNSIGNED_INTEGER, 1 | 2 | 4) => (1u64 << (8 * size)) - 1,
            (PARAM_UNSIGNED_INTEGER, 8) => u64::MAX,
            (PARAM_INTEGER, 1 | 2 | 4 | 8) => (1u64 << (8 * size - 1)) - 1,
            _ => return false,
        };
        self.set_return_size(size);
        if self.raw().data.is_null() {
            return true;
        }
        if v > max {
            return false;
        }
        let d = self.raw().data as *mut u8;
        // SAFETY: `data` points to `size` writable bytes (OSSL_PARAM
        // contract); the write is unaligned-safe and truncation is checked above.
        unsafe {
            match size {
                1 => d.write(v as u8),
                2 => (d as *mut u16).write_unaligned(v as u16),
                4 => (d as *mut u32).write_unaligned(v as u32),
                _ => (d as *mut u64).write_unaligned(v),
            }
        }
        true
    }

    /// `OSSL_PARAM_set_octet_string`: copies `v`; a null buffer only gets the size.
    pub fn set_octets(&mut self, v: &[u8]) -> bool {
        if self.raw().data_type != PARAM_OCTET_STRING {
            return false;
        }
        self.set_return_size(v.len());
        if self.raw().data.is_null() {
            return true;
        }
        if self.raw().data_size < v.len() {
            return false;
        }
        // SAFETY: `data` has `data_size >= v.len()` writable bytes, and
        // does not overlap `v` (a provider-owned buffer).
        unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), self.raw().data as *mut u8, v.len()) };
        true
    }

    /// Whether the caller asks for an octet pointer (`EVP_CIPHER_CTX_iv()`)
    /// rather than a copy.
    pub fn is_octet_ptr(&self) -> bool {
        self.raw().data_type == PARAM_OCTET_PTR
    }

    /// `OSSL_PARAM_set_octet_ptr` then `set_octet_string`, as OpenSSL's own
    /// ciphers answer `iv`/`updated-iv`: an octet pointer receives the
    /// address of the provider's buffer `v` (valid as long as the context).
    pub fn set_octets_or_ptr(&mut self, v: &[u8]) -> bool {
        if self.raw().data_type == PARAM_OCTET_PTR {
            self.set_return_size(v.len());
            if !self.raw().data.is_null() {
                // SAFETY: an octet pointer's `data` points to a writable `void *`.
                unsafe {
                    (self.raw().data as *mut *const c_void).write_unaligned(v.as_ptr().cast())
                };
            }
            return true;
        }
        self.set_octets(v)
    }

    /// `OSSL_PARAM_set_utf8_ptr` (or a copy into a UTF-8 string buffer).
    pub fn set_utf8(&mut self, v: &'static CStr) -> bool {
        match self.raw().data_type {
            PARAM_UTF8_PTR => {
                self.set_return_size(v.to_bytes().len());
                if !self.raw().data.is_null() {
                    // SAFETY: a UTF-8 pointer's `data` points to a writable `char *`;
                    // `v` is static.
                    unsafe {
                        (self.raw().data as *mut *const core::ffi::c_char)
                            .write_unaligned(v.as_ptr())
                    };
                }
                true
            }
            PARAM_UTF8_STRING => {
                let bytes = v.to_bytes_with_nul();
                self.set_return_size(bytes.len() - 1);
                if self.raw().data.is_null() {
                    return true;
                }
                if self.raw().data_size < bytes.len() {
                    return false;
                }
                // SAFETY: `data` has room for the string and its NUL.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        self.raw().data as *mut u8,
                        bytes.len(),
                    )
                };
                true
            }
            _ => false,
        }
    }
}
