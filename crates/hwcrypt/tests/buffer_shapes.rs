//! Every mode of every backend this (masked) CPU can run, in place and with
//! separate input and output buffers, against `soft`: small enough to run
//! under Miri, which checks the kernels' raw-pointer use (Stacked Borrows,
//! out-of-bounds, uninitialised reads). `.ci/steps/10-miri.sh` runs it with
//! the x86 features enabled at compile time, so Miri's intrinsic models see
//! the SIMD backends as detected; plain `cargo test` runs it too.
//!
//! Under Miri the lengths are few and short; natively they are more.

use hwcrypt::aead::Aead;
use hwcrypt::aes::{Aes, CounterWidth};
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305, chacha20_xor};
use hwcrypt::gcm::AesGcm;
use hwcrypt::modes::{Cbc, CbcEncryptBatch, Cfb8, Cfb128, Ctr, Ecb, Ofb, Xts};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, cpu};

/// Lengths that reach each kernel's widest loop and its tails.
const LENGTHS: &[usize] = if cfg!(miri) {
    &[0, 1, 17, 16 * 9 + 5]
} else {
    &[0, 1, 15, 16, 17, 100, 16 * 9 + 5, 16 * 33 + 7, 1100]
};

fn data(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// The backends to test for `algorithm`, `soft` first. Under Miri, those
/// whose code for `what` Miri cannot interpret are left out, with the reason.
fn runnable(algorithm: Algorithm, what: &str) -> Vec<Backend> {
    let mut backends = registry::runnable(algorithm, cpu::features().expect("HWCRYPT_CPU"));
    backends.sort_by_key(|&b| b != Backend::Soft);
    if cfg!(miri) {
        backends.retain(|&b| match miri_cannot_run(algorithm, b, what) {
            Some(why) => {
                println!("skipped under Miri: {what} on {b}: {why}");
                false
            }
            None => true,
        });
    }
    println!("{what}: {backends:?}");
    backends
}

/// Why Miri cannot run `backend`'s code for `what` (found by running it):
/// it models the SSE/AVX2/AES-NI/VAES/PCLMULQDQ intrinsics, most AVX-512
/// ones, but not inline assembly nor `vpternlog`.
fn miri_cannot_run(algorithm: Algorithm, backend: Backend, what: &str) -> Option<&'static str> {
    match (algorithm, backend, what) {
        (Algorithm::AesXts, Backend::VaesAvx512, _) => {
            Some("its tweak update uses vpternlogq, which Miri does not model")
        }
        (Algorithm::ChaCha20Poly1305, Backend::Avx2, "chacha20") => {
            Some("its 8-block double round is inline assembly")
        }
        _ => None,
    }
}

/// Runs `op` with every key: in place with `keys[0]` (soft) for the
/// expected output, then in place and into a separate buffer with the
/// others (and, natively, soft into a separate buffer too).
fn check<K>(
    what: &str,
    keys: &[(Backend, K)],
    len: usize,
    op: impl Fn(&K, Option<&[u8]>, &mut [u8]),
) {
    let input = data(len, len as u8);
    let mut expected = input.clone();
    op(&keys[0].1, None, &mut expected);
    for (i, (backend, key)) in keys.iter().enumerate() {
        if i > 0 {
            let mut in_place = input.clone();
            op(key, None, &mut in_place);
            assert_eq!(in_place, expected, "{what} {backend} in place, {len} bytes");
        }
        if i > 0 || !cfg!(miri) {
            let mut separate = vec![0xa5; len];
            op(key, Some(&input), &mut separate);
            assert_eq!(separate, expected, "{what} {backend} separate, {len} bytes");
        }
    }
}

/// `$separate` from `Some($x)`, or `$in_place` when the input is `None`.
macro_rules! io {
    ($i:expr, |$x:ident| $separate:expr, $in_place:expr $(,)?) => {
        match $i {
            Some($x) => $separate,
            None => $in_place,
        }
    };
}

#[test]
fn aes_modes_in_place_and_separate() {
    let iv = [0xf0; 16];
    let keys: Vec<(Backend, Aes)> = runnable(Algorithm::Aes, "aes modes")
        .into_iter()
        .map(|b| (b, Aes::with_backend(&[0x2b; 16], b).unwrap()))
        .collect();
    let keys = &keys[..];
    for &len in LENGTHS {
        let whole = len - len % 16;
        check("ecb encrypt", keys, whole, |k, i, o| {
            let e = Ecb::new(k);
            io!(i, |i| e.encrypt_to(i, o), e.encrypt(o)).unwrap()
        });
        check("ecb decrypt", keys, whole, |k, i, o| {
            let e = Ecb::new(k);
            io!(i, |i| e.decrypt_to(i, o), e.decrypt(o)).unwrap()
        });
        check("cbc encrypt", keys, whole, |k, i, o| {
            let mut c = Cbc::new(k, &iv).unwrap();
            io!(i, |i| c.encrypt_to(i, o), c.encrypt(o)).unwrap()
        });
        check("cbc decrypt", keys, whole, |k, i, o| {
            let mut c = Cbc::new(k, &iv).unwrap();
            io!(i, |i| c.decrypt_to(i, o), c.decrypt(o)).unwrap()
        });
        for width in [CounterWidth::Full128, CounterWidth::Low32] {
            check("ctr", keys, len, |k, i, o| {
                let mut c = Ctr::with_width(k, &iv, width).unwrap();
                io!(
                    i,
                    |i| c.apply_keystream_to(i, o).unwrap(),
                    c.apply_keystream(o).unwrap()
                )
            });
        }
        check("cfb128 encrypt", keys, len, |k, i, o| {
            let mut c = Cfb128::new(k, &iv).unwrap();
            io!(i, |i| c.encrypt_to(i, o).unwrap(), c.encrypt(o))
        });
        check("cfb128 decrypt", keys, len, |k, i, o| {
            let mut c = Cfb128::new(k, &iv).unwrap();
            io!(i, |i| c.decrypt_to(i, o).unwrap(), c.decrypt(o))
        });
        check("cfb8 decrypt", keys, len.min(20), |k, i, o| {
            let mut c = Cfb8::new(k, &iv).unwrap();
            io!(i, |i| c.decrypt_to(i, o).unwrap(), c.decrypt(o))
        });
        check("ofb", keys, len, |k, i, o| {
            let mut c = Ofb::new(k, &iv).unwrap();
            io!(
                i,
                |i| c.apply_keystream_to(i, o).unwrap(),
                c.apply_keystream(o)
            )
        });
    }
}

/// Multi-buffer CBC encryption: streams of unequal lengths (whole chunks
/// and single steps, a register's lanes partly repeated), even ones in
/// place and odd ones into separate buffers, against `soft` one by one.
#[test]
fn cbc_encrypt_many_in_place_and_separate() {
    // At least 8 blocks a stream on average: shorter batches run their
    // streams one by one, not on the packed kernels tested here.
    let blocks: &[usize] = if cfg!(miri) {
        &[12, 0, 1, 17, 13]
    } else {
        &[5, 0, 1, 9, 4, 17, 2, 33, 8, 12, 40]
    };
    let iv = [0xf0; 16];
    let inputs: Vec<Vec<u8>> = blocks.iter().map(|&n| data(16 * n, n as u8)).collect();
    let expected: Vec<Vec<u8>> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let aes = Aes::with_backend(&[i as u8; 16], Backend::Soft).unwrap();
            let mut buf = input.clone();
            Cbc::new(aes, &iv).unwrap().encrypt(&mut buf).unwrap();
            buf
        })
        .collect();
    for backend in runnable(Algorithm::Aes, "cbc encrypt_many") {
        let mut ciphers: Vec<Cbc> = (0..blocks.len())
            .map(|i| Cbc::new(Aes::with_backend(&[i as u8; 16], backend).unwrap(), &iv).unwrap())
            .collect();
        let mut bufs = inputs.clone();
        let mut outs: Vec<Vec<u8>> = inputs.iter().map(|i| vec![0xa5; i.len()]).collect();
        let mut batch = CbcEncryptBatch::new();
        for (i, ((cbc, buf), out)) in ciphers.iter_mut().zip(&mut bufs).zip(&mut outs).enumerate() {
            if i % 2 == 0 {
                batch.push(cbc, buf).unwrap();
            } else {
                batch.push_to(cbc, buf, out).unwrap();
            }
        }
        batch.encrypt();
        for (i, want) in expected.iter().enumerate() {
            let got = if i % 2 == 0 { &bufs[i] } else { &outs[i] };
            assert_eq!(got, want, "{backend} stream {i} ({} blocks)", blocks[i]);
        }
    }
}

#[test]
fn xts_in_place_and_separate() {
    let key: Vec<u8> = (0..32u8).collect();
    let tweak = [0x33; 16];
    let keys: Vec<(Backend, Xts)> = runnable(Algorithm::AesXts, "xts")
        .into_iter()
        .map(|b| (b, Xts::with_backend(&key, b).unwrap()))
        .collect();
    for &len in LENGTHS.iter().filter(|&&l| l >= 16) {
        check("xts encrypt", &keys, len, |x, i, o| {
            io!(i, |i| x.encrypt_to(&tweak, i, o), x.encrypt(&tweak, o)).unwrap()
        });
        check("xts decrypt", &keys, len, |x, i, o| {
            io!(i, |i| x.decrypt_to(&tweak, i, o), x.decrypt(&tweak, o)).unwrap()
        });
    }
}

/// Seals and opens in place and with separate buffers with every key;
/// the in-place seal with `keys[0]` (soft) is the expected output.
fn check_aead<A: Aead>(what: &str, keys: &[(Backend, A)]) {
    let nonce = vec![0x5a; A::NONCE_LEN];
    let aad = b"associated data";
    for &len in LENGTHS {
        let plaintext = data(len, 7);
        let mut ciphertext = plaintext.clone();
        let tag = keys[0]
            .1
            .seal_in_place_detached(&nonce, aad, &mut ciphertext)
            .unwrap();
        for (i, (backend, k)) in keys.iter().enumerate() {
            if i > 0 {
                let mut buf = plaintext.clone();
                let t = k.seal_in_place_detached(&nonce, aad, &mut buf).unwrap();
                assert!(
                    buf == ciphertext && t == tag,
                    "{what} {backend} seal in place, {len}"
                );
                let mut buf = ciphertext.clone();
                k.open_in_place_detached(&nonce, aad, &mut buf, &tag)
                    .unwrap();
                assert_eq!(buf, plaintext, "{what} {backend} open in place, {len}");
            }
            if i > 0 || !cfg!(miri) {
                let mut out = vec![0xa5; len];
                let t = k.seal_detached(&nonce, aad, &plaintext, &mut out).unwrap();
                assert!(
                    out == ciphertext && t == tag,
                    "{what} {backend} seal separate, {len}"
                );
                let mut out = vec![0xa5; len];
                k.open_detached(&nonce, aad, &ciphertext, &tag, &mut out)
                    .unwrap();
                assert_eq!(out, plaintext, "{what} {backend} open separate, {len}");
            }
        }
    }
}

/// One key per backend to test for `algorithm`, soft first.
fn keys<A>(algorithm: Algorithm, what: &str, make: impl Fn(Backend) -> A) -> Vec<(Backend, A)> {
    runnable(algorithm, what)
        .into_iter()
        .map(|b| (b, make(b)))
        .collect()
}

#[test]
fn aeads_in_place_and_separate() {
    let gcm = keys(Algorithm::AesGcm, "aes-gcm", |b| {
        AesGcm::with_backend(&[0x42; 16], b).unwrap()
    });
    check_aead("aes-128-gcm", &gcm);
    let chacha = keys(Algorithm::ChaCha20Poly1305, "chacha20-poly1305", |b| {
        ChaCha20Poly1305::with_backend(&[0x42; 32], b).unwrap()
    });
    check_aead("chacha20-poly1305", &chacha);
    let xchacha = keys(Algorithm::ChaCha20Poly1305, "xchacha20-poly1305", |b| {
        XChaCha20Poly1305::with_backend(&[0x42; 32], b).unwrap()
    });
    check_aead("xchacha20-poly1305", &xchacha);
}

#[test]
fn raw_chacha20_in_place() {
    let backends = runnable(Algorithm::ChaCha20Poly1305, "chacha20");
    for &len in LENGTHS {
        let mut expected = data(len, 3);
        chacha20_xor(Backend::Soft, &[9; 32], &[1; 12], 5, &mut expected).unwrap();
        for &backend in &backends[1..] {
            let mut buf = data(len, 3);
            chacha20_xor(backend, &[9; 32], &[1; 12], 5, &mut buf).unwrap();
            assert_eq!(buf, expected, "chacha20 {backend}, {len}");
        }
    }
}
