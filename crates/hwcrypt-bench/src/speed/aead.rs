//! AEAD workloads, shared by hwcrypt and every peer: each library wraps its
//! key in a [`SealOpen`], and the same three workloads drive them all alike
//! (seal, open, and "new key + seal one packet").

use super::measure::{Workload, keys, messages};
use std::hint::black_box;

/// The message of the connection rows: a new key, then one sealed packet of
/// this many bytes (a QUIC/TLS record of an Ethernet-sized packet).
pub const CONNECTION_LEN: usize = 1350;

/// The nonce of message `n`, `len` (12 or 24) bytes: a fixed prefix, then
/// `n` big-endian in the last 8 bytes.
pub(crate) fn nonce_of(n: u64, len: usize) -> [u8; 24] {
    let mut nonce = [0x3c; 24];
    nonce[len - 8..len].copy_from_slice(&n.to_be_bytes());
    nonce
}

/// One library's AEAD key, driven the way its API is meant to be used for
/// one message at a time.
pub(crate) trait SealOpen: Send + 'static {
    /// Seals `buf` in place with the nonce of message `n`; returns the tag.
    fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16];
    /// Opens `buf` in place (nonce of message `n`); whether `tag` verified.
    fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool;
    /// Replaces the key with one made from `key`, as the library's users do
    /// for a new connection (a new key object, or a new key on a reused
    /// context where that is the API's way).
    fn rekey(&mut self, key: &[u8]);
}

/// What an AEAD workload does with a key (the peers pick it by name).
#[cfg(feature = "peers")]
#[derive(Clone, Copy, Debug)]
pub(crate) enum Shape {
    /// [`seal`] messages of this many bytes.
    Seal(usize),
    /// [`open`] messages of this many bytes.
    Open(usize),
    /// [`connection`]: new keys, each sealing one message.
    Connection,
}

/// The workload of `shape` on `key` (its concrete type: every library is
/// called without dynamic dispatch, as hwcrypt is).
#[cfg(feature = "peers")]
pub(crate) fn build<K: SealOpen>(
    key: K,
    shape: Shape,
    key_len: usize,
    aad: &[u8],
) -> Box<dyn Workload> {
    match shape {
        Shape::Seal(len) => seal(key, len, aad),
        Shape::Open(len) => open(key, len, aad),
        Shape::Connection => connection(key, key_len, aad),
    }
}

/// Sealing `len`-byte messages in place, a fresh nonce per message.
pub(crate) fn seal<K: SealOpen>(key: K, len: usize, aad: &[u8]) -> Box<dyn Workload> {
    let aad = aad.to_vec();
    messages(key, len, 0, move |k, buf, _, n| {
        black_box(k.seal(n, &aad, buf));
    })
}

/// Opening a `len`-byte message in place. The ciphertext is copied into the
/// buffer before every open (a copy every implementation pays alike), since
/// opening in place leaves the plaintext there.
pub(crate) fn open<K: SealOpen>(mut key: K, len: usize, aad: &[u8]) -> Box<dyn Workload> {
    let aad = aad.to_vec();
    let mut ciphertext: Vec<u8> = (0..len).map(|i| (i * 29 + 3) as u8).collect();
    let tag = key.seal(0, &aad, &mut ciphertext);
    messages(
        (key, ciphertext, tag),
        len,
        0,
        move |(k, ciphertext, tag), buf, _, _| {
            buf.copy_from_slice(ciphertext);
            // A refused tag is a bug in the harness or the library.
            assert!(k.open(0, &aad, buf, tag), "a sealed message did not open");
        },
    )
}

/// A new key from `key_len` bytes that change every time, then one
/// [`CONNECTION_LEN`]-byte message sealed with it.
pub(crate) fn connection<K: SealOpen>(mut key: K, key_len: usize, aad: &[u8]) -> Box<dyn Workload> {
    let aad = aad.to_vec();
    let mut buf = vec![0x42u8; CONNECTION_LEN];
    let mut n = 0u64;
    keys(key_len, move |k| {
        key.rekey(k);
        n = n.wrapping_add(1);
        black_box(key.seal(n, &aad, &mut buf));
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy "AEAD" (XOR with the key byte, tag = sum): enough to check that
    /// the workloads seal, open and rekey as they claim.
    struct Toy(u8, usize);

    impl SealOpen for Toy {
        fn seal(&mut self, n: u64, aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
            buf.iter_mut().for_each(|b| *b ^= self.0);
            let mut tag = [0u8; 16];
            tag[0] = buf
                .iter()
                .chain(aad)
                .fold(n as u8, |a, b| a.wrapping_add(*b));
            tag
        }
        fn open(&mut self, n: u64, aad: &[u8], buf: &mut [u8], tag: &[u8; 16]) -> bool {
            let t = buf
                .iter()
                .chain(aad)
                .fold(n as u8, |a, b| a.wrapping_add(*b));
            buf.iter_mut().for_each(|b| *b ^= self.0);
            t == tag[0]
        }
        fn rekey(&mut self, key: &[u8]) {
            self.0 = key[0];
            self.1 += 1;
        }
    }

    #[test]
    fn workloads_run() {
        seal(Toy(7, 0), 100, b"aad").run(10);
        open(Toy(7, 0), 100, b"aad").run(10);
        connection(Toy(7, 0), 16, &[]).run(10);
        assert_eq!(
            nonce_of(1, 12)[..12],
            [0x3c, 0x3c, 0x3c, 0x3c, 0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert_eq!(nonce_of(2, 24)[23], 2);
    }
}
