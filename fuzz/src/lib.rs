//! Shared by the fuzz targets: the backends this (masked) CPU can run for an
//! algorithm, and buffers placed at a chosen offset, so every target can
//! push the same input through every backend and compare.

use hwcrypt::Backend;
use hwcrypt::registry::{self, Algorithm};
use std::sync::OnceLock;

/// The backends this CPU runs for `algorithm`, `soft` first. Computed once
/// per process (the registry check reads the CPU mask).
pub fn backends(algorithm: Algorithm) -> &'static [Backend] {
    static CACHE: OnceLock<Vec<(Algorithm, Vec<Backend>)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        Algorithm::ALL
            .into_iter()
            .map(|a| {
                let runnable = Backend::ALL
                    .into_iter()
                    .filter(|&b| registry::check(a, b).is_ok())
                    .collect();
                (a, runnable)
            })
            .collect()
    });
    all.iter()
        .find(|(a, _)| *a == algorithm)
        .map(|(_, b)| b.as_slice())
        .unwrap_or(&[])
}

/// A byte buffer whose data starts `offset` bytes into its allocation (so
/// kernels see every alignment), with a guard pattern before and after that
/// must survive every call.
#[derive(Debug)]
pub struct Placed {
    store: Vec<u8>,
    offset: usize,
    len: usize,
}

/// The byte the guard bytes around a [`Placed`] buffer hold.
const GUARD: u8 = 0x5c;
/// Guard bytes after the data.
const TAIL: usize = 64;

impl Placed {
    /// A copy of `data` at `offset % 64` bytes into a fresh allocation.
    pub fn new(data: &[u8], offset: u8) -> Placed {
        let offset = usize::from(offset % 64);
        let mut store = vec![GUARD; offset + data.len() + TAIL];
        store[offset..offset + data.len()].copy_from_slice(data);
        Placed {
            store,
            offset,
            len: data.len(),
        }
    }

    /// The data.
    pub fn get(&self) -> &[u8] {
        &self.store[self.offset..self.offset + self.len]
    }

    /// The data, mutably.
    pub fn get_mut(&mut self) -> &mut [u8] {
        &mut self.store[self.offset..self.offset + self.len]
    }

    /// Panics if a call wrote outside the data.
    pub fn check_guards(&self) {
        let (before, rest) = self.store.split_at(self.offset);
        let after = &rest[self.len..];
        assert!(
            before.iter().chain(after).all(|&b| b == GUARD),
            "a write outside the buffer (offset {}, length {})",
            self.offset,
            self.len
        );
    }
}

/// The key length (16, 24 or 32) a fuzzer byte picks.
pub fn aes_key_len(selector: u8) -> usize {
    [16, 24, 32][usize::from(selector % 3)]
}

/// RustCrypto's AEADs (`aes-gcm`, `chacha20poly1305`) as the independent
/// reference: seal `buf` in place, returning the tag; open in place.
pub mod rustcrypto {
    use aes_gcm::aead::{AeadInOut, KeyInit, Nonce, Tag};

    /// Seals `buf` in place under `key` and `nonce`; the 16-byte tag.
    pub fn seal<A: AeadInOut + KeyInit>(
        key: &[u8],
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Vec<u8> {
        let a = A::new_from_slice(key).expect("key length");
        let n = Nonce::<A>::try_from(nonce).expect("nonce length");
        a.encrypt_inout_detached(&n, aad, buf.into())
            .expect("seal")
            .to_vec()
    }

    /// Opens `buf` in place; whether the tag verified.
    pub fn open<A: AeadInOut + KeyInit>(
        key: &[u8],
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> bool {
        let a = A::new_from_slice(key).expect("key length");
        let n = Nonce::<A>::try_from(nonce).expect("nonce length");
        let Ok(t) = Tag::<A>::try_from(tag) else {
            return false;
        };
        a.decrypt_inout_detached(&n, aad, buf.into(), &t).is_ok()
    }
}
