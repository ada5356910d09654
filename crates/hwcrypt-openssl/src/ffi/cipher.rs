//! The cipher dispatch functions libcrypto calls (`OSSL_FUNC_cipher_*`):
//! each turns raw pointers into slices and the context pointer into a
//! [`CipherCtx`], calls the safe [`Cipher`] behind it, raises an OpenSSL
//! error on failure and never lets a panic cross into C.

#![allow(unsafe_code)]

use super::params::{self, ParamTable};
use super::provider::{ProvCtx, guard, raise};
use super::types::*;
use crate::algorithms::{ALGORITHMS, AlgInfo, CIPHER_PARAMS};
use crate::ciphers::{self, CipherType, Io, ParamId, Reason};
use core::ffi::{c_int, c_void};
use core::ptr;
use zeroize::Zeroizing;

/// What a `void *vctx` points to. The dispatch functions are generated per
/// cipher type `C`, so an update calls the cipher directly (and LLVM inlines
/// it) instead of through a `Box<dyn Cipher>`: a 16-byte call is short
/// enough that the indirection showed (docs/openssl-provider.md).
pub(crate) struct CipherCtx<C> {
    prov: *const ProvCtx,
    alg: &'static AlgInfo,
    cipher: C,
    /// Bytes processed and not yet added to the provider's total.
    uncounted: u64,
}

impl<C> CipherCtx<C> {
    /// Counts `n` bytes, adding them to the provider's total in batches.
    #[inline(always)]
    fn count(&mut self, n: usize) {
        self.uncounted += n as u64;
        if self.uncounted >= ciphers::COUNT_FLUSH {
            ciphers::count_bytes(core::mem::take(&mut self.uncounted));
        }
    }

    fn fail(&self, reason: Reason) -> c_int {
        if reason != Reason::Silent {
            raise(self.prov, reason);
        }
        0
    }
}

/// The context behind `vctx`.
///
/// # Safety
/// `vctx` is null or a pointer the `newctx`/`dupctx` of the same `C`
/// returned (libcrypto hands a context only to the functions of the table
/// that made it) and `freectx` has not freed, not in use by another thread
/// (EVP contexts are not shared).
#[inline(always)]
unsafe fn ctx<'a, C>(vctx: *mut c_void) -> Option<&'a mut CipherCtx<C>> {
    // SAFETY: as the function's contract says.
    unsafe { (vctx as *mut CipherCtx<C>).as_mut() }
}

/// A byte slice from C, empty when `len` is 0 (the pointer may then be null).
///
/// # Safety
/// Unless `len` is 0, `p` points to `len` readable bytes for `'a`.
unsafe fn bytes<'a>(p: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if p.is_null() || !fits(len) {
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { core::slice::from_raw_parts(p, len) })
}

/// Whether `len` bytes can be one slice: no object is larger than
/// `isize::MAX` bytes, so a larger length (a negative `int` cast to
/// `size_t` by a caller) names no buffer, and a slice of it would be
/// undefined behaviour.
#[inline(always)]
fn fits(len: usize) -> bool {
    len <= isize::MAX as usize
}

/// The input/output pair of an update: in place when `out == in` and the
/// output fits in the input, separate when the ranges do not overlap, and
/// from a copy of the input (kept in `scratch`) when they partly overlap.
///
/// # Safety
/// `input` points to `inl` readable bytes and `out` to `out_len` writable
/// bytes (unless the lengths are 0), both valid for `'a`.
#[inline(always)]
unsafe fn make_io<'a>(
    out: *mut u8,
    out_len: usize,
    input: *const u8,
    inl: usize,
    scratch: &'a mut Option<Zeroizing<Vec<u8>>>,
) -> Option<Io<'a>> {
    if (inl > 0 && input.is_null())
        || (out_len > 0 && out.is_null())
        || !fits(inl)
        || !fits(out_len)
    {
        return None;
    }
    if inl == 0 && out_len == 0 {
        return Some(Io::Split(&[], &mut []));
    }
    let (o, i) = (out as usize, input as usize);
    if o == i && out_len <= inl {
        // SAFETY: one buffer of `inl` > 0 bytes (both lengths 0 returned
        // above, and `out_len <= inl`), non-null (checked above), readable
        // and writable (the caller passed it as both), referenced only here.
        return Some(Io::InPlace(unsafe {
            core::slice::from_raw_parts_mut(out, inl)
        }));
    }
    // An empty side is `[]`, never a slice made from a pointer that may be
    // NULL (undefined behaviour; a NULL `Split` input read as `InPlace`).
    let out_slice: &mut [u8] = if out_len == 0 {
        &mut []
    } else {
        // SAFETY: `out` is non-null with `out_len` writable bytes (the
        // caller's contract, checked for NULL above).
        unsafe { core::slice::from_raw_parts_mut(out, out_len) }
    };
    if inl == 0 {
        return Some(Io::Split(&[], out_slice));
    }
    if out_len == 0 || o + out_len <= i || i + inl <= o {
        // SAFETY: `input` is non-null with `inl` readable bytes, disjoint
        // from `out_slice`.
        let in_slice = unsafe { core::slice::from_raw_parts(input, inl) };
        return Some(Io::Split(in_slice, out_slice));
    }
    // SAFETY: `input` is readable; copied before `out_slice` is written.
    let copy = Zeroizing::new(unsafe { core::slice::from_raw_parts(input, inl) }.to_vec());
    Some(Io::Split(&scratch.insert(copy)[..], out_slice))
}

unsafe extern "C" fn newctx<const I: usize, C: CipherType>(provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        let alg = &ALGORITHMS[I];
        let ctx = CipherCtx {
            prov: provctx as *const ProvCtx,
            alg,
            cipher: C::for_alg(alg),
            uncounted: 0,
        };
        Box::into_raw(Box::new(ctx)) as *mut c_void
    })
}

unsafe extern "C" fn freectx<C: CipherType>(vctx: *mut c_void) {
    guard((), || {
        if !vctx.is_null() {
            // SAFETY: `vctx` came from `Box::into_raw` in newctx/dupctx and
            // libcrypto frees it once. The cipher's Drop wipes the keys.
            let c = unsafe { Box::from_raw(vctx as *mut CipherCtx<C>) };
            ciphers::count_bytes(c.uncounted);
            drop(c);
        }
    })
}

unsafe extern "C" fn dupctx<C: CipherType>(vctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: a live context (dispatch contract).
        let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
            return ptr::null_mut();
        };
        let copy = CipherCtx {
            prov: c.prov,
            alg: c.alg,
            cipher: c.cipher.clone(),
            uncounted: 0,
        };
        Box::into_raw(Box::new(copy)) as *mut c_void
    })
}

unsafe fn init<C: CipherType>(
    vctx: *mut c_void,
    encrypt: bool,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    // SAFETY: a live context (dispatch contract).
    let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
        return 0;
    };
    if !fits(keylen) || !fits(ivlen) {
        return c.fail(Reason::InvalidKeyLength);
    }
    // SAFETY: EVP passes key/iv buffers of keylen/ivlen bytes or null (of
    // lengths a slice can have: checked above).
    let key = (!key.is_null()).then(|| unsafe { core::slice::from_raw_parts(key, keylen) });
    // SAFETY: as above.
    let iv = (!iv.is_null()).then(|| unsafe { core::slice::from_raw_parts(iv, ivlen) });
    if let Err(r) = c.cipher.init(encrypt, key, iv) {
        return c.fail(r);
    }
    // SAFETY: a terminated parameter array or null (dispatch contract).
    unsafe { set_params(c, params as *mut OsslParam) }
}

unsafe extern "C" fn encrypt_init<C: CipherType>(
    vctx: *mut c_void,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded dispatch contract.
    guard(0, || unsafe {
        init::<C>(vctx, true, key, keylen, iv, ivlen, params)
    })
}

unsafe extern "C" fn decrypt_init<C: CipherType>(
    vctx: *mut c_void,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded dispatch contract.
    guard(0, || unsafe {
        init::<C>(vctx, false, key, keylen, iv, ivlen, params)
    })
}

/// update and cipher: `raw` selects `EVP_Cipher` semantics.
#[inline(always)]
unsafe fn run<C: CipherType>(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
    input: *const u8,
    inl: usize,
    raw: bool,
) -> c_int {
    // SAFETY: a live context (dispatch contract).
    let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
        return 0;
    };
    let set_outl = |n: usize| {
        if !outl.is_null() {
            // SAFETY: `outl` points to a size_t (dispatch contract).
            unsafe { outl.write(n) };
        }
    };
    if raw && input.is_null() {
        // EVP_Cipher(ctx, NULL, NULL, 0): finish an AEAD.
        return match c.cipher.cipher_final() {
            Ok(()) => {
                set_outl(0);
                1
            }
            Err(r) => c.fail(r),
        };
    }
    if out.is_null() && !input.is_null() && c.alg.aead {
        // No output: the input is additional authenticated data.
        // SAFETY: `input` has `inl` readable bytes (dispatch contract).
        let Some(aad) = (unsafe { bytes(input, inl) }) else {
            return c.fail(Reason::CipherOperationFailed);
        };
        return match c.cipher.update_aad(aad) {
            Ok(()) => {
                set_outl(inl);
                1
            }
            Err(r) => c.fail(r),
        };
    }
    // A cipher of block size 1 writes as many bytes as it reads; only a
    // block cipher's update (ECB) buffers, and asks its cipher.
    let out_len = if raw || c.alg.block_size == 1 {
        inl
    } else {
        c.cipher.update_len(inl)
    };
    if outsize < out_len {
        return c.fail(Reason::OutputBufferTooSmall);
    }
    let mut scratch = None;
    // SAFETY: EVP passes `inl` readable input bytes and an output buffer of
    // `outsize >= out_len` bytes.
    let Some(io) = (unsafe { make_io(out, out_len, input, inl, &mut scratch) }) else {
        return c.fail(Reason::CipherOperationFailed);
    };
    let r = if raw {
        c.cipher.cipher(io)
    } else {
        c.cipher.update(io)
    };
    match r {
        Ok(n) => {
            c.count(inl);
            set_outl(n);
            1
        }
        Err(r) => c.fail(r),
    }
}

unsafe extern "C" fn update<C: CipherType>(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
    input: *const u8,
    inl: usize,
) -> c_int {
    // SAFETY: forwarded dispatch contract.
    guard(0, || unsafe {
        run::<C>(vctx, out, outl, outsize, input, inl, false)
    })
}

unsafe extern "C" fn cipher<C: CipherType>(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
    input: *const u8,
    inl: usize,
) -> c_int {
    // SAFETY: forwarded dispatch contract.
    guard(0, || unsafe {
        run::<C>(vctx, out, outl, outsize, input, inl, true)
    })
}

unsafe extern "C" fn final_<C: CipherType>(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
) -> c_int {
    guard(0, || {
        // SAFETY: a live context (dispatch contract).
        let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
            return 0;
        };
        let max = c.cipher.final_len();
        if max > 0 && (outsize < max || out.is_null()) {
            return c.fail(Reason::OutputBufferTooSmall);
        }
        let out_slice: &mut [u8] = if max == 0 {
            &mut []
        } else {
            // SAFETY: `out` has `outsize >= max` writable bytes.
            unsafe { core::slice::from_raw_parts_mut(out, max) }
        };
        match c.cipher.finish(out_slice) {
            Ok(n) => {
                if !outl.is_null() {
                    // SAFETY: `outl` points to a size_t.
                    unsafe { outl.write(n) };
                }
                1
            }
            Err(r) => c.fail(r),
        }
    })
}

/// Applies the parameters the algorithm's settable table lists; others are
/// ignored, as OpenSSL's own ciphers ignore them.
///
/// # Safety
/// `params` is null or a valid terminated array.
unsafe fn set_params<C: CipherType>(c: &mut CipherCtx<C>, params: *mut OsslParam) -> c_int {
    let table = c.alg.settable_ctx;
    let mut failed = None;
    // SAFETY: forwarded.
    let ok = unsafe {
        params::for_each(params, |p| match table.find(p.key()) {
            Some(id) => match c.cipher.set_param(id, p) {
                Ok(()) => true,
                Err(r) => {
                    failed = Some(r);
                    false
                }
            },
            None => true,
        })
    };
    match failed {
        Some(r) => c.fail(r),
        None => c_int::from(ok),
    }
}

unsafe extern "C" fn set_ctx_params<C: CipherType>(
    vctx: *mut c_void,
    params: *const OsslParam,
) -> c_int {
    guard(0, || {
        // SAFETY: a live context (dispatch contract).
        let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
            return 0;
        };
        // SAFETY: a terminated array or null (dispatch contract).
        unsafe { set_params(c, params as *mut OsslParam) }
    })
}

unsafe extern "C" fn get_ctx_params<C: CipherType>(
    vctx: *mut c_void,
    params: *mut OsslParam,
) -> c_int {
    guard(0, || {
        // SAFETY: a live context (dispatch contract).
        let Some(c) = (unsafe { ctx::<C>(vctx) }) else {
            return 0;
        };
        let table = c.alg.gettable_ctx;
        let mut failed = None;
        // SAFETY: a terminated array or null (dispatch contract).
        unsafe {
            params::for_each(params, |p| match table.find(p.key()) {
                Some(id) => match c.cipher.get_param(id, p) {
                    Ok(()) => true,
                    Err(r) => {
                        failed = Some(r);
                        false
                    }
                },
                None => true,
            })
        };
        match failed {
            Some(r) => c.fail(r),
            None => 1,
        }
    })
}

/// `EVP_CIPHER_get_params` (`ossl_cipher_generic_get_params`).
unsafe extern "C" fn get_params<const I: usize>(params: *mut OsslParam) -> c_int {
    guard(0, || {
        let a = &ALGORITHMS[I];
        // SAFETY: a terminated array or null (dispatch contract).
        let ok = unsafe {
            params::for_each(params, |p| match CIPHER_PARAMS.find(p.key()) {
                Some(ParamId::Mode) => p.set_u64(u64::from(a.mode)),
                Some(ParamId::KeyLen) => p.set_u64(a.key_len as u64),
                Some(ParamId::IvLen) => p.set_u64(a.iv_len as u64),
                Some(ParamId::BlockSize) => p.set_u64(a.block_size as u64),
                Some(ParamId::Aead) => p.set_u64(u64::from(a.aead)),
                Some(ParamId::CustomIv) => p.set_u64(u64::from(a.custom_iv)),
                Some(ParamId::Cts | ParamId::TlsMulti | ParamId::HasRandKey) => p.set_u64(0),
                _ => true,
            })
        };
        if !ok {
            raise(ptr::null(), Reason::FailedToSetParameter);
        }
        c_int::from(ok)
    })
}

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    CIPHER_PARAMS.as_ptr()
}

unsafe extern "C" fn gettable_ctx_params<const I: usize>(
    _cctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    let t: &ParamTable = ALGORITHMS[I].gettable_ctx;
    t.as_ptr()
}

unsafe extern "C" fn settable_ctx_params<const I: usize>(
    _cctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    let t: &ParamTable = ALGORITHMS[I].settable_ctx;
    t.as_ptr()
}

type NewCtxFn = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type FreeCtxFn = unsafe extern "C" fn(*mut c_void);
type InitFn = unsafe extern "C" fn(
    *mut c_void,
    *const u8,
    usize,
    *const u8,
    usize,
    *const OsslParam,
) -> c_int;
type UpdateFn =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
type FinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type GetParamsFn = unsafe extern "C" fn(*mut OsslParam) -> c_int;
type GetCtxParamsFn = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type SetCtxParamsFn = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
type GettableFn = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type CtxGettableFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const OsslParam;

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

/// The dispatch table of `ALGORITHMS[I]`, served by the cipher type `C`
/// (checked when the table is built: `C` must be the type of that entry).
pub(crate) const fn dispatch<const I: usize, C: CipherType>() -> [OsslDispatch; 15] {
    assert!(C::MODE == ALGORITHMS[I].mode && C::AEAD == ALGORITHMS[I].aead);
    [
        entry!(FUNC_CIPHER_NEWCTX, NewCtxFn, newctx::<I, C>),
        entry!(FUNC_CIPHER_FREECTX, FreeCtxFn, freectx::<C>),
        entry!(FUNC_CIPHER_DUPCTX, NewCtxFn, dupctx::<C>),
        entry!(FUNC_CIPHER_ENCRYPT_INIT, InitFn, encrypt_init::<C>),
        entry!(FUNC_CIPHER_DECRYPT_INIT, InitFn, decrypt_init::<C>),
        entry!(FUNC_CIPHER_UPDATE, UpdateFn, update::<C>),
        entry!(FUNC_CIPHER_FINAL, FinalFn, final_::<C>),
        entry!(FUNC_CIPHER_CIPHER, UpdateFn, cipher::<C>),
        entry!(FUNC_CIPHER_GET_PARAMS, GetParamsFn, get_params::<I>),
        entry!(
            FUNC_CIPHER_GET_CTX_PARAMS,
            GetCtxParamsFn,
            get_ctx_params::<C>
        ),
        entry!(
            FUNC_CIPHER_SET_CTX_PARAMS,
            SetCtxParamsFn,
            set_ctx_params::<C>
        ),
        entry!(FUNC_CIPHER_GETTABLE_PARAMS, GettableFn, gettable_params),
        entry!(
            FUNC_CIPHER_GETTABLE_CTX_PARAMS,
            CtxGettableFn,
            gettable_ctx_params::<I>
        ),
        entry!(
            FUNC_CIPHER_SETTABLE_CTX_PARAMS,
            CtxGettableFn,
            settable_ctx_params::<I>
        ),
        OsslDispatch {
            function_id: 0,
            function: None,
        },
    ]
}
