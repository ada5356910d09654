//! What the provider reports about itself (`openssl list -providers
//! -verbose`, `OSSL_PROVIDER_get_params`): version, the backend each
//! algorithm family runs on, and the self-test result. Computed once, at
//! the first load in the process, before any sandbox is entered.

use core::ffi::CStr;
use hwcrypt::registry::{self, Algorithm};
use std::ffi::CString;
use std::sync::OnceLock;

pub(crate) const VERSION: &CStr = c"0.1.0";

/// The load-time state.
#[derive(Debug)]
pub(crate) struct Status {
    pub self_test_passed: bool,
    /// `passed`, or the first failure.
    pub self_test: CString,
    /// Backends for aes, aes-xts, aes-gcm, chacha20-poly1305.
    pub backends: [&'static CStr; 4],
    pub build_info: CString,
}

fn backend_name(a: Algorithm) -> &'static CStr {
    match registry::default_backend(a) {
        Ok(b) => match b {
            hwcrypt::Backend::Soft => c"soft",
            hwcrypt::Backend::AesNi => c"aesni",
            hwcrypt::Backend::VaesAvx2 => c"vaes-avx2",
            hwcrypt::Backend::VaesAvx512 => c"vaes-avx512",
            hwcrypt::Backend::Avx2 => c"avx2",
            hwcrypt::Backend::Avx512 => c"avx512",
        },
        Err(_) => c"unavailable",
    }
}

fn compute() -> Status {
    let backends = [
        backend_name(Algorithm::Aes),
        backend_name(Algorithm::AesXts),
        backend_name(Algorithm::AesGcm),
        backend_name(Algorithm::ChaCha20Poly1305),
    ];
    let result = match hwcrypt::cpu::features() {
        Ok(_) => crate::selftest::run(),
        Err(e) => Err(format!("HWCRYPT_CPU: {e}")),
    };
    let self_test_passed = result.is_ok();
    let self_test = result.err().unwrap_or_else(|| "passed".into());
    let build_info = format!(
        "hwcrypt {} (aes: {}, aes-xts: {}, aes-gcm: {}, chacha20-poly1305: {}; self-test {})",
        VERSION.to_str().unwrap_or("?"),
        backends[0].to_str().unwrap_or("?"),
        backends[1].to_str().unwrap_or("?"),
        backends[2].to_str().unwrap_or("?"),
        backends[3].to_str().unwrap_or("?"),
        self_test,
    );
    Status {
        self_test_passed,
        self_test: CString::new(self_test.replace('\0', " ")).unwrap_or_default(),
        backends,
        build_info: CString::new(build_info.replace('\0', " ")).unwrap_or_default(),
    }
}

/// The state, computed on first use.
pub(crate) fn get() -> &'static Status {
    static STATUS: OnceLock<Status> = OnceLock::new();
    STATUS.get_or_init(compute)
}
