//! The ciphers behind the dispatch tables, in safe Rust: one type per
//! family implementing [`Cipher`], which follows the semantics of OpenSSL's
//! own implementations (`providers/implementations/ciphers/ciphercommon.c`
//! and the per-mode files) call for call: the same buffering, padding,
//! parameter handling and error reasons.

pub(crate) mod chacha;
pub(crate) mod ctr;
pub(crate) mod ecb;
pub(crate) mod gcm;
pub(crate) mod xts;

use crate::ffi::params::Param;
use core::sync::atomic::{AtomicU64, Ordering};

/// Every parameter the provider knows, for the tables in
/// [`crate::algorithms`] and the `match`es of the ciphers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamId {
    // Algorithm parameters (`EVP_CIPHER_get_params`).
    Mode,
    BlockSize,
    Aead,
    CustomIv,
    Cts,
    TlsMulti,
    HasRandKey,
    // Context parameters.
    KeyLen,
    IvLen,
    Padding,
    Num,
    Iv,
    UpdatedIv,
    Tag,
    TagLen,
    TlsAad,
    TlsAadPad,
    TlsIvFixed,
    TlsIvGen,
    TlsIvInv,
    // Provider parameters.
    Name,
    Version,
    BuildInfo,
    Status,
    BackendAes,
    BackendAesXts,
    BackendAesGcm,
    BackendChaCha,
    SelfTest,
    Bytes,
}

/// Why an operation failed: the default provider's reason code for the same
/// failure (`openssl/proverr.h`), so error strings read the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// Fails without raising an error, where OpenSSL's cipher raises none
    /// (a tag mismatch: callers such as python3-cryptography read an empty
    /// error queue as "invalid tag").
    Silent = 0,
    BadDecrypt = 100,
    CipherOperationFailed = 102,
    FailedToGetParameter = 103,
    FailedToSetParameter = 104,
    OutputBufferTooSmall = 106,
    WrongFinalBlockLength = 107,
    InvalidAad = 108,
    InvalidIvLength = 109,
    InvalidKeyLength = 105,
    InvalidTag = 110,
    NoKeySet = 114,
    InvalidTagLength = 118,
    TagNotSet = 119,
    TagNotNeeded = 120,
    XtsDataUnitTooLarge = 148,
    XtsDuplicatedKeys = 149,
    InvalidInputLength = 230,
}

/// A failure carries its reason; the FFI layer raises it as an OpenSSL error.
pub(crate) type CResult<T> = Result<T, Reason>;

/// Input and output of one call: in place (the caller passed the same
/// pointer twice) or two separate buffers. The output is exactly as long as
/// [`Cipher::update_len`] said.
#[derive(Debug)]
pub(crate) enum Io<'a> {
    InPlace(&'a mut [u8]),
    Split(&'a [u8], &'a mut [u8]),
}

impl<'a> Io<'a> {
    /// Length of the input.
    pub fn len(&self) -> usize {
        match self {
            Io::InPlace(b) => b.len(),
            Io::Split(i, _) => i.len(),
        }
    }
}

/// One cipher context. `init` takes the key and IV when given (either may
/// come in a later call, as EVP allows); `update`/`finish` are
/// `EVP_CipherUpdate`/`Final`, `cipher` is the raw `EVP_Cipher` call.
pub(crate) trait Cipher: Send {
    fn init(&mut self, encrypt: bool, key: Option<&[u8]>, iv: Option<&[u8]>) -> CResult<()>;

    /// How many bytes an `update` of `inl` input bytes writes.
    fn update_len(&self, inl: usize) -> usize {
        inl
    }

    fn update(&mut self, io: Io<'_>) -> CResult<usize>;

    /// Additional authenticated data (an update with no output); AEADs only.
    fn update_aad(&mut self, _aad: &[u8]) -> CResult<()> {
        Err(Reason::CipherOperationFailed)
    }

    /// How many bytes `finish` may write at most.
    fn final_len(&self) -> usize {
        0
    }

    fn finish(&mut self, out: &mut [u8]) -> CResult<usize>;

    /// `EVP_Cipher` on data: by default the same as `update`.
    fn cipher(&mut self, io: Io<'_>) -> CResult<usize> {
        self.update(io)
    }

    /// `EVP_Cipher(ctx, NULL, NULL, 0)`: finish an AEAD (compute or verify
    /// the tag); nothing for the others.
    fn cipher_final(&mut self) -> CResult<()> {
        Ok(())
    }

    /// Answers one context parameter the algorithm's gettable table lists.
    fn get_param(&mut self, id: ParamId, p: &mut Param<'_>) -> CResult<()>;

    /// Takes one context parameter the algorithm's settable table lists.
    fn set_param(&mut self, id: ParamId, p: &Param<'_>) -> CResult<()>;

    /// The tag of the last encrypted message (AEADs; for the self-test).
    fn aead_tag(&self) -> Option<[u8; 16]> {
        None
    }

    /// Sets the tag a decryption must match (AEADs; for the self-test).
    fn set_aead_tag(&mut self, _tag: &[u8]) -> CResult<()> {
        Err(Reason::CipherOperationFailed)
    }
}

/// A concrete cipher the FFI layer generates its dispatch functions for
/// (`ffi::cipher::dispatch::<I, C>`): what it serves (its mode and whether
/// it is an AEAD, checked against the algorithm's entry when the table is
/// built), how a new context starts, and the deep copy of `dupctx`.
pub(crate) trait CipherType: Cipher + Clone + 'static {
    const MODE: u32;
    const AEAD: bool;

    /// A fresh context for `alg` (no key, no IV).
    fn for_alg(alg: &crate::algorithms::AlgInfo) -> Self;
}

/// Bytes run through the provider's ciphers since it was loaded (the
/// `hwcrypt-bytes-processed` provider parameter; for tests, never written
/// anywhere). Each context counts its own bytes and adds them here once it
/// has [`COUNT_FLUSH`] of them and when it is freed: a locked add on every
/// call waited for the call's stores to drain, so one short message could
/// not overlap the next (a fifth of a 16-byte `EVP_EncryptUpdate`).
static BYTES_PROCESSED: AtomicU64 = AtomicU64::new(0);

/// A context adds its count to the total once it reaches this many bytes.
pub(crate) const COUNT_FLUSH: u64 = 1 << 16;

/// Adds a context's `n` bytes to the total.
pub(crate) fn count_bytes(n: u64) {
    if n != 0 {
        BYTES_PROCESSED.fetch_add(n, Ordering::Relaxed);
    }
}

pub(crate) fn bytes_processed() -> u64 {
    BYTES_PROCESSED.load(Ordering::Relaxed)
}

/// The answers every block-mode context gives (`ossl_cipher_generic_get_ctx_params`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn generic_get(
    id: ParamId,
    p: &mut Param<'_>,
    key_len: usize,
    iv_len: usize,
    padding: bool,
    num: usize,
    iv: &[u8],
    updated_iv: &[u8],
) -> CResult<()> {
    let ok = match id {
        ParamId::KeyLen => p.set_u64(key_len as u64),
        ParamId::IvLen => p.set_u64(iv_len as u64),
        ParamId::Padding => p.set_u64(u64::from(padding)),
        ParamId::Num => p.set_u64(num as u64),
        ParamId::Iv => p.set_octets_or_ptr(&iv[..iv_len]),
        ParamId::UpdatedIv => p.set_octets_or_ptr(&updated_iv[..iv_len]),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(Reason::FailedToSetParameter)
    }
}
