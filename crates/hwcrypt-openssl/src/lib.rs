//! `hwcrypt.so`, an OpenSSL 3 provider serving hwcrypt's AES-ECB, -CTR,
//! -XTS, -GCM, ChaCha20 and ChaCha20-Poly1305 to every program that uses
//! libcrypto: OpenSSH, curl, nginx, `openssl`, Python's `cryptography`. Enable it in `openssl.cnf` (see
//! `hwcrypt openssl-config` and docs/openssl-provider.md).
//!
//! Layout: [`ffi`] is the boundary (dispatch tables, `OSSL_PARAM`, the entry
//! point) and the only module with `unsafe`; [`ciphers`] holds one safe type
//! per cipher family following OpenSSL's semantics; [`algorithms`] lists what
//! is registered; [`selftest`] runs at load; [`status`] is what the provider
//! reports about itself.
//!
//! Inside a sandbox (sshd's pre-auth child) the provider does no I/O,
//! starts no thread and reads nothing but CPUID: CPU detection, the
//! `HWCRYPT_CPU` mask and the self-test all run at load.

#![deny(unsafe_code)]

mod algorithms;
mod ciphers;
mod ffi;
mod selftest;
mod status;

/// Bytes the provider's ciphers have processed in this process (the
/// `hwcrypt-bytes-processed` provider parameter).
pub fn bytes_processed() -> u64 {
    ciphers::bytes_processed()
}
