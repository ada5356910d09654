//! The provider's entry point `OSSL_provider_init` and its own dispatch
//! functions (parameters, operation query, teardown), error raising through
//! the core's functions, and the panic guard every entry point runs under.

#![allow(unsafe_code)]

use super::cipher::dispatch;
use super::params;
use super::types::*;
use crate::ciphers::chacha::{ChaCha20Cipher, ChaChaPolyCipher};
use crate::ciphers::{
    ParamId, Reason, ctr::CtrCipher, ecb::EcbCipher, gcm::GcmCipher, xts::XtsCipher,
};
use crate::status::{self, Status};
use core::ffi::{c_int, c_void};
use core::ptr;

/// Runs `f`, turning a panic into `default` (with `panic = "abort"` a
/// panic aborts instead; either way none crosses into C).
pub(crate) fn guard<T>(default: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(default)
}

/// The provider context: the core handle and the core's error functions.
#[derive(Debug)]
pub(crate) struct ProvCtx {
    handle: *const CoreHandle,
    new_error: Option<CoreNewErrorFn>,
    set_error_debug: Option<CoreSetErrorDebugFn>,
    vset_error: Option<CoreVsetErrorFn>,
}

/// The error functions of the first provider context, for the few places
/// that have no context (algorithm-level `get_params`).
static FIRST_CTX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

/// Raises `reason` as an OpenSSL error (`ERR_raise(ERR_LIB_PROV, reason)`).
pub(crate) fn raise(prov: *const ProvCtx, reason: Reason) {
    if reason == Reason::Silent {
        return;
    }
    let prov = if prov.is_null() {
        FIRST_CTX
            .get()
            .map_or(ptr::null(), |&p| p as *const ProvCtx)
    } else {
        prov
    };
    // SAFETY: provider contexts live from init to teardown, and cipher
    // contexts (which hold them) are freed before teardown.
    let Some(p) = (unsafe { prov.as_ref() }) else {
        return;
    };
    let (Some(new), Some(debug), Some(set)) = (p.new_error, p.set_error_debug, p.vset_error) else {
        return;
    };
    let code = (ERR_LIB_PROV << ERR_LIB_OFFSET) | reason as u32;
    // SAFETY: the core's own functions with its handle; the format string
    // is null, so the va_list argument is never read.
    unsafe {
        new(p.handle);
        debug(
            p.handle,
            c"hwcrypt-openssl".as_ptr(),
            0,
            c"hwcrypt".as_ptr(),
        );
        set(p.handle, code, ptr::null(), ptr::null_mut());
    }
}

/// A static list of algorithms (pointers to static strings and tables).
struct AlgorithmList([OsslAlgorithm; crate::algorithms::ALGORITHMS.len() + 1]);

// SAFETY: immutable; every pointer points to a static.
unsafe impl Sync for AlgorithmList {}

macro_rules! algorithm_list {
    ($($i:literal: $cipher:ty),* $(,)?) => {{
        AlgorithmList([
            $(OsslAlgorithm {
                algorithm_names: crate::algorithms::ALGORITHMS[$i].names.as_ptr(),
                property_definition: c"provider=hwcrypt".as_ptr(),
                implementation: {
                    static D: [OsslDispatch; 15] = dispatch::<$i, $cipher>();
                    D.as_ptr()
                },
                algorithm_description: crate::algorithms::ALGORITHMS[$i].description.as_ptr(),
            },)*
            OsslAlgorithm {
                algorithm_names: ptr::null(),
                property_definition: ptr::null(),
                implementation: ptr::null(),
                algorithm_description: ptr::null(),
            },
        ])
    }};
}

// Each index of `ALGORITHMS` with the type that serves it (`dispatch`
// refuses to compile a pair whose mode does not match).
static CIPHERS: AlgorithmList = algorithm_list!(
    0: EcbCipher,
    1: EcbCipher,
    2: EcbCipher,
    3: CtrCipher,
    4: CtrCipher,
    5: CtrCipher,
    6: XtsCipher,
    7: XtsCipher,
    8: GcmCipher,
    9: GcmCipher,
    10: GcmCipher,
    11: ChaCha20Cipher,
    12: ChaChaPolyCipher,
);

params::param_table!(
    PROVIDER_PARAMS = [
        (Name, c"name", UTF8_PTR),
        (Version, c"version", UTF8_PTR),
        (BuildInfo, c"buildinfo", UTF8_PTR),
        (Status, c"status", INT),
        (BackendAes, c"hwcrypt-backend-aes", UTF8_PTR),
        (BackendAesXts, c"hwcrypt-backend-aes-xts", UTF8_PTR),
        (BackendAesGcm, c"hwcrypt-backend-aes-gcm", UTF8_PTR),
        (
            BackendChaCha,
            c"hwcrypt-backend-chacha20-poly1305",
            UTF8_PTR
        ),
        (SelfTest, c"hwcrypt-self-test", UTF8_PTR),
        (Bytes, c"hwcrypt-bytes-processed", UINT64),
    ]
);

unsafe extern "C" fn teardown(provctx: *mut c_void) {
    guard((), || {
        if !provctx.is_null() && FIRST_CTX.get() != Some(&(provctx as usize)) {
            // SAFETY: made by Box::into_raw in OSSL_provider_init, freed once.
            // The first context is kept (leaked) for `raise` without one.
            drop(unsafe { Box::from_raw(provctx as *mut ProvCtx) });
        }
    })
}

unsafe extern "C" fn provider_gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    PROVIDER_PARAMS.as_ptr()
}

unsafe extern "C" fn provider_get_params(_provctx: *mut c_void, params: *mut OsslParam) -> c_int {
    guard(0, || {
        let st: &Status = status::get();
        // SAFETY: a terminated array or null (dispatch contract).
        let ok = unsafe {
            params::for_each(params, |p| match PROVIDER_PARAMS.find(p.key()) {
                Some(ParamId::Name) => {
                    p.set_utf8(c"hwcrypt: hardware AES and ChaCha20 for OpenSSL")
                }
                Some(ParamId::Version) => p.set_utf8(status::VERSION),
                Some(ParamId::BuildInfo) => p.set_utf8(&st.build_info),
                Some(ParamId::Status) => p.set_u64(u64::from(st.self_test_passed)),
                Some(ParamId::BackendAes) => p.set_utf8(st.backends[0]),
                Some(ParamId::BackendAesXts) => p.set_utf8(st.backends[1]),
                Some(ParamId::BackendAesGcm) => p.set_utf8(st.backends[2]),
                Some(ParamId::BackendChaCha) => p.set_utf8(st.backends[3]),
                Some(ParamId::SelfTest) => p.set_utf8(&st.self_test),
                Some(ParamId::Bytes) => p.set_u64(crate::ciphers::bytes_processed()),
                _ => true,
            })
        };
        c_int::from(ok)
    })
}

unsafe extern "C" fn query_operation(
    _provctx: *mut c_void,
    operation_id: c_int,
    no_cache: *mut c_int,
) -> *const OsslAlgorithm {
    guard(ptr::null(), || {
        if !no_cache.is_null() {
            // SAFETY: points to an int (dispatch contract).
            unsafe { no_cache.write(0) };
        }
        if operation_id == OP_CIPHER && status::get().self_test_passed {
            CIPHERS.0.as_ptr()
        } else {
            ptr::null()
        }
    })
}

type TeardownFn = unsafe extern "C" fn(*mut c_void);
type ProvGettableFn = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type ProvGetParamsFn = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type QueryFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_int) -> *const OsslAlgorithm;

macro_rules! entry {
    ($id:expr, $ty:ty, $f:expr) => {
        OsslDispatch {
            function_id: $id,
            // SAFETY: libcrypto casts the pointer back to the signature
            // `core_dispatch.h` gives this function number, which `$ty` is.
            function: Some(unsafe { core::mem::transmute::<$ty, unsafe extern "C" fn()>($f) }),
        }
    };
}

static PROVIDER_DISPATCH: [OsslDispatch; 5] = [
    entry!(FUNC_PROVIDER_TEARDOWN, TeardownFn, teardown),
    entry!(
        FUNC_PROVIDER_GETTABLE_PARAMS,
        ProvGettableFn,
        provider_gettable_params
    ),
    entry!(
        FUNC_PROVIDER_GET_PARAMS,
        ProvGetParamsFn,
        provider_get_params
    ),
    entry!(FUNC_PROVIDER_QUERY_OPERATION, QueryFn, query_operation),
    OsslDispatch {
        function_id: 0,
        function: None,
    },
];

/// The function of `id` in the core's dispatch table, if offered.
///
/// # Safety
/// `table` is null or a dispatch table terminated by function id 0.
unsafe fn core_fn(table: *const OsslDispatch, id: c_int) -> Option<unsafe extern "C" fn()> {
    let mut d = table;
    if d.is_null() {
        return None;
    }
    loop {
        // SAFETY: within the terminated table.
        let e = unsafe { &*d };
        if e.function_id == 0 {
            return None;
        }
        if e.function_id == id {
            return e.function;
        }
        // SAFETY: not the terminator, so the next entry exists.
        d = unsafe { d.add(1) };
    }
}

/// The module's entry point. Runs the power-on self-test (once per
/// process); if it fails, the provider loads but offers no algorithm, so
/// every fetch falls back to the default provider.
///
/// # Safety
/// Called by libcrypto as `OSSL_provider_init_fn` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const CoreHandle,
    core_in: *const OsslDispatch,
    out: *mut *const OsslDispatch,
    provctx: *mut *mut c_void,
) -> c_int {
    guard(0, || {
        if out.is_null() || provctx.is_null() {
            return 0;
        }
        // SAFETY: the core's table, terminated; each function's signature
        // is the one `core_dispatch.h` gives its number.
        let ctx = unsafe {
            ProvCtx {
                handle,
                new_error: core_fn(core_in, FUNC_CORE_NEW_ERROR)
                    .map(|f| core::mem::transmute::<unsafe extern "C" fn(), CoreNewErrorFn>(f)),
                set_error_debug: core_fn(core_in, FUNC_CORE_SET_ERROR_DEBUG).map(|f| {
                    core::mem::transmute::<unsafe extern "C" fn(), CoreSetErrorDebugFn>(f)
                }),
                vset_error: core_fn(core_in, FUNC_CORE_VSET_ERROR)
                    .map(|f| core::mem::transmute::<unsafe extern "C" fn(), CoreVsetErrorFn>(f)),
            }
        };
        // CPU detection, HWCRYPT_CPU and the self-test happen here, before
        // any sandbox: nothing later reads a file or the environment.
        status::get();
        let raw = Box::into_raw(Box::new(ctx));
        let _ = FIRST_CTX.set(raw as usize);
        // SAFETY: both are valid out-pointers (checked non-null above).
        unsafe {
            out.write(PROVIDER_DISPATCH.as_ptr());
            provctx.write(raw as *mut c_void);
        }
        1
    })
}
