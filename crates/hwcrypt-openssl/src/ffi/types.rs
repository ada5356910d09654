//! The C types and numbers of OpenSSL 3's provider interface
//! (`openssl/core.h`, `core_dispatch.h`, `core_names.h`, `proverr.h`),
//! declared here rather than taken from a crate: no maintained crate covers
//! the provider side, and the subset a cipher provider needs is small.

use core::ffi::{c_char, c_int, c_uint, c_void};

/// `OSSL_DISPATCH`: one function of a dispatch table, by number.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct OsslDispatch {
    pub function_id: c_int,
    pub function: Option<unsafe extern "C" fn()>,
}

/// `OSSL_ALGORITHM`: a name list, its properties and its dispatch table.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct OsslAlgorithm {
    pub algorithm_names: *const c_char,
    pub property_definition: *const c_char,
    pub implementation: *const OsslDispatch,
    pub algorithm_description: *const c_char,
}

/// `OSSL_PARAM`: a key, a typed buffer and the size written back.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct OsslParam {
    pub key: *const c_char,
    pub data_type: c_uint,
    pub data: *mut c_void,
    pub data_size: usize,
    pub return_size: usize,
}

/// `OSSL_PARAM_UNMODIFIED`: the `return_size` of a parameter nobody set.
pub(crate) const PARAM_UNMODIFIED: usize = usize::MAX;

impl OsslParam {
    /// The terminating element of a parameter array (`OSSL_PARAM_END`).
    pub const END: OsslParam = OsslParam {
        key: core::ptr::null(),
        data_type: 0,
        data: core::ptr::null_mut(),
        data_size: 0,
        return_size: 0,
    };
}

/// `OSSL_PARAM` data types.
pub(crate) const PARAM_INTEGER: c_uint = 1;
pub(crate) const PARAM_UNSIGNED_INTEGER: c_uint = 2;
pub(crate) const PARAM_UTF8_STRING: c_uint = 4;
pub(crate) const PARAM_OCTET_STRING: c_uint = 5;
pub(crate) const PARAM_UTF8_PTR: c_uint = 6;
pub(crate) const PARAM_OCTET_PTR: c_uint = 7;

/// `OSSL_CORE_HANDLE` is opaque.
pub(crate) type CoreHandle = c_void;

/// Core (libcrypto) functions a provider may call, by number.
pub(crate) const FUNC_CORE_NEW_ERROR: c_int = 5;
pub(crate) const FUNC_CORE_SET_ERROR_DEBUG: c_int = 6;
pub(crate) const FUNC_CORE_VSET_ERROR: c_int = 7;

/// Provider functions libcrypto calls, by number.
pub(crate) const FUNC_PROVIDER_TEARDOWN: c_int = 1024;
pub(crate) const FUNC_PROVIDER_GETTABLE_PARAMS: c_int = 1025;
pub(crate) const FUNC_PROVIDER_GET_PARAMS: c_int = 1026;
pub(crate) const FUNC_PROVIDER_QUERY_OPERATION: c_int = 1027;

/// `OSSL_OP_CIPHER`.
pub(crate) const OP_CIPHER: c_int = 2;

/// Cipher functions, by number.
pub(crate) const FUNC_CIPHER_NEWCTX: c_int = 1;
pub(crate) const FUNC_CIPHER_ENCRYPT_INIT: c_int = 2;
pub(crate) const FUNC_CIPHER_DECRYPT_INIT: c_int = 3;
pub(crate) const FUNC_CIPHER_UPDATE: c_int = 4;
pub(crate) const FUNC_CIPHER_FINAL: c_int = 5;
pub(crate) const FUNC_CIPHER_CIPHER: c_int = 6;
pub(crate) const FUNC_CIPHER_FREECTX: c_int = 7;
pub(crate) const FUNC_CIPHER_DUPCTX: c_int = 8;
pub(crate) const FUNC_CIPHER_GET_PARAMS: c_int = 9;
pub(crate) const FUNC_CIPHER_GET_CTX_PARAMS: c_int = 10;
pub(crate) const FUNC_CIPHER_SET_CTX_PARAMS: c_int = 11;
pub(crate) const FUNC_CIPHER_GETTABLE_PARAMS: c_int = 12;
pub(crate) const FUNC_CIPHER_GETTABLE_CTX_PARAMS: c_int = 13;
pub(crate) const FUNC_CIPHER_SETTABLE_CTX_PARAMS: c_int = 14;

/// `ERR_LIB_PROV`: errors are raised with the default provider's library
/// number and reason codes, so they print the same text OpenSSL's do.
pub(crate) const ERR_LIB_PROV: u32 = 57;
/// `ERR_LIB_OFFSET`.
pub(crate) const ERR_LIB_OFFSET: u32 = 23;

/// `core_new_error(handle)`.
pub(crate) type CoreNewErrorFn = unsafe extern "C" fn(*const CoreHandle);
/// `core_set_error_debug(handle, file, line, func)`.
pub(crate) type CoreSetErrorDebugFn =
    unsafe extern "C" fn(*const CoreHandle, *const c_char, c_int, *const c_char);
/// `core_vset_error(handle, reason, fmt, va_list)`. The `va_list` is never
/// read: every format string passed has no conversion, so a null pointer
/// stands in for it.
pub(crate) type CoreVsetErrorFn =
    unsafe extern "C" fn(*const CoreHandle, u32, *const c_char, *mut c_void);
