//! The algorithms the provider registers: OpenSSL's names (with the same
//! aliases and OIDs as the default provider, `providers/implementations/
//! include/prov/names.h`), the constants `EVP_CIPHER_get_params` reports, and
//! the parameter tables each one serves.

use crate::ciphers::chacha::{ChaCha20Cipher, ChaChaPolyCipher};
use crate::ciphers::gcm::GcmCipher;
use crate::ciphers::{Cipher, CipherType, ctr::CtrCipher, ecb::EcbCipher, xts::XtsCipher};
use crate::ffi::params::{ParamTable, param_table};
use core::ffi::CStr;

/// `EVP_CIPH_*_MODE`.
pub(crate) const MODE_ECB: u32 = 0x1;
pub(crate) const MODE_CTR: u32 = 0x5;
pub(crate) const MODE_GCM: u32 = 0x6;
pub(crate) const MODE_XTS: u32 = 0x10001;
/// Stream ciphers (ChaCha20, ChaCha20-Poly1305) report mode 0.
pub(crate) const MODE_STREAM: u32 = 0;

/// One registered cipher.
#[derive(Debug)]
pub(crate) struct AlgInfo {
    /// `NAME:ALIAS:OID` as the default provider spells it.
    pub names: &'static CStr,
    pub description: &'static CStr,
    pub mode: u32,
    pub key_len: usize,
    pub block_size: usize,
    pub iv_len: usize,
    pub aead: bool,
    pub custom_iv: bool,
    pub new: fn(&AlgInfo) -> Box<dyn Cipher>,
    pub gettable_ctx: &'static ParamTable,
    pub settable_ctx: &'static ParamTable,
}

// `EVP_CIPHER_get_params`: the same for every cipher.
param_table!(pub(crate) CIPHER_PARAMS = [
    (Mode, c"mode", UINT),
    (KeyLen, c"keylen", SIZE_T),
    (IvLen, c"ivlen", SIZE_T),
    (BlockSize, c"blocksize", SIZE_T),
    (Aead, c"aead", INT),
    (CustomIv, c"custom-iv", INT),
    (Cts, c"cts", INT),
    (TlsMulti, c"tls-multi", INT),
    (HasRandKey, c"has-randkey", INT),
]);

// ECB and CTR contexts (`ossl_cipher_generic_{get,set}table_ctx_params`,
// without the TLS-CBC and CFB1 entries these modes never use).
param_table!(
    GENERIC_GETTABLE = [
        (KeyLen, c"keylen", SIZE_T),
        (IvLen, c"ivlen", SIZE_T),
        (Padding, c"padding", UINT),
        (Num, c"num", UINT),
        (Iv, c"iv", OCTETS),
        (UpdatedIv, c"updated-iv", OCTETS),
    ]
);
param_table!(GENERIC_SETTABLE = [(Padding, c"padding", UINT), (Num, c"num", UINT),]);
// XTS: the generic gettables; only `keylen` is settable (and may not change).
param_table!(XTS_SETTABLE = [(KeyLen, c"keylen", SIZE_T)]);

// AES-GCM (`ossl_gcm_{get,set}table_ctx_params`).
param_table!(
    GCM_GETTABLE = [
        (KeyLen, c"keylen", SIZE_T),
        (IvLen, c"ivlen", SIZE_T),
        (TagLen, c"taglen", SIZE_T),
        (Iv, c"iv", OCTETS),
        (UpdatedIv, c"updated-iv", OCTETS),
        (Tag, c"tag", OCTETS),
        (TlsAadPad, c"tlsaadpad", SIZE_T),
        (TlsIvGen, c"tlsivgen", OCTETS),
    ]
);
param_table!(
    GCM_SETTABLE = [
        (IvLen, c"ivlen", SIZE_T),
        (Tag, c"tag", OCTETS),
        (TlsAad, c"tlsaad", OCTETS),
        (TlsIvFixed, c"tlsivfixed", OCTETS),
        (TlsIvInv, c"tlsivinv", OCTETS),
    ]
);
// Raw ChaCha20: only the (fixed) lengths.
param_table!(CHACHA20_PARAMS = [(KeyLen, c"keylen", SIZE_T), (IvLen, c"ivlen", SIZE_T),]);
// ChaCha20-Poly1305.
param_table!(
    CHACHA_POLY_GETTABLE = [
        (KeyLen, c"keylen", SIZE_T),
        (IvLen, c"ivlen", SIZE_T),
        (TagLen, c"taglen", SIZE_T),
        (Tag, c"tag", OCTETS),
        (TlsAadPad, c"tlsaadpad", SIZE_T),
    ]
);
param_table!(
    CHACHA_POLY_SETTABLE = [
        (KeyLen, c"keylen", SIZE_T),
        (IvLen, c"ivlen", SIZE_T),
        (Tag, c"tag", OCTETS),
        (TlsAad, c"tlsaad", OCTETS),
        (TlsIvFixed, c"tlsivfixed", OCTETS),
    ]
);

/// A boxed fresh context of `C` (the self-test drives the ciphers by index).
fn boxed<C: CipherType>(alg: &AlgInfo) -> Box<dyn Cipher> {
    Box::new(C::for_alg(alg))
}

const fn gcm(names: &'static CStr, description: &'static CStr, key_len: usize) -> AlgInfo {
    AlgInfo {
        names,
        description,
        mode: MODE_GCM,
        key_len,
        block_size: 1,
        iv_len: 12,
        aead: true,
        custom_iv: true,
        new: boxed::<GcmCipher>,
        gettable_ctx: &GCM_GETTABLE,
        settable_ctx: &GCM_SETTABLE,
    }
}

const fn ecb(names: &'static CStr, description: &'static CStr, key_len: usize) -> AlgInfo {
    AlgInfo {
        names,
        description,
        mode: MODE_ECB,
        key_len,
        block_size: 16,
        iv_len: 0,
        aead: false,
        custom_iv: false,
        new: boxed::<EcbCipher>,
        gettable_ctx: &GENERIC_GETTABLE,
        settable_ctx: &GENERIC_SETTABLE,
    }
}

const fn ctr(names: &'static CStr, description: &'static CStr, key_len: usize) -> AlgInfo {
    AlgInfo {
        names,
        description,
        mode: MODE_CTR,
        key_len,
        block_size: 1,
        iv_len: 16,
        aead: false,
        custom_iv: false,
        new: boxed::<CtrCipher>,
        gettable_ctx: &GENERIC_GETTABLE,
        settable_ctx: &GENERIC_SETTABLE,
    }
}

const fn xts(names: &'static CStr, description: &'static CStr, key_len: usize) -> AlgInfo {
    AlgInfo {
        names,
        description,
        mode: MODE_XTS,
        key_len,
        block_size: 1,
        iv_len: 16,
        aead: false,
        custom_iv: true,
        new: boxed::<XtsCipher>,
        gettable_ctx: &GENERIC_GETTABLE,
        settable_ctx: &XTS_SETTABLE,
    }
}

/// Every registered cipher; the dispatch tables in `ffi::cipher` are built
/// per index of this array.
pub(crate) static ALGORITHMS: [AlgInfo; 13] = [
    ecb(
        c"AES-128-ECB:2.16.840.1.101.3.4.1.1",
        c"hwcrypt AES-128-ECB",
        16,
    ),
    ecb(
        c"AES-192-ECB:2.16.840.1.101.3.4.1.21",
        c"hwcrypt AES-192-ECB",
        24,
    ),
    ecb(
        c"AES-256-ECB:2.16.840.1.101.3.4.1.41",
        c"hwcrypt AES-256-ECB",
        32,
    ),
    ctr(c"AES-128-CTR", c"hwcrypt AES-128-CTR", 16),
    ctr(c"AES-192-CTR", c"hwcrypt AES-192-CTR", 24),
    ctr(c"AES-256-CTR", c"hwcrypt AES-256-CTR", 32),
    xts(
        c"AES-128-XTS:1.3.111.2.1619.0.1.1",
        c"hwcrypt AES-128-XTS",
        32,
    ),
    xts(
        c"AES-256-XTS:1.3.111.2.1619.0.1.2",
        c"hwcrypt AES-256-XTS",
        64,
    ),
    gcm(
        c"AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6",
        c"hwcrypt AES-128-GCM",
        16,
    ),
    gcm(
        c"AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26",
        c"hwcrypt AES-192-GCM",
        24,
    ),
    gcm(
        c"AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46",
        c"hwcrypt AES-256-GCM",
        32,
    ),
    AlgInfo {
        names: c"ChaCha20",
        description: c"hwcrypt ChaCha20",
        mode: MODE_STREAM,
        key_len: 32,
        block_size: 1,
        iv_len: 16,
        aead: false,
        custom_iv: true,
        new: boxed::<ChaCha20Cipher>,
        gettable_ctx: &CHACHA20_PARAMS,
        settable_ctx: &CHACHA20_PARAMS,
    },
    AlgInfo {
        names: c"ChaCha20-Poly1305",
        description: c"hwcrypt ChaCha20-Poly1305",
        mode: MODE_STREAM,
        key_len: 32,
        block_size: 1,
        iv_len: 12,
        aead: true,
        custom_iv: true,
        new: boxed::<ChaChaPolyCipher>,
        gettable_ctx: &CHACHA_POLY_GETTABLE,
        settable_ctx: &CHACHA_POLY_SETTABLE,
    },
];

/// The short name (before the first `:`).
pub(crate) fn short_name(a: &AlgInfo) -> &str {
    let s = a.names.to_str().unwrap_or("");
    s.split(':').next().unwrap_or(s)
}
