//! Constant time, checked by valgrind (the ctgrind technique): every secret
//! input (keys, nonces/counters, plaintexts, Poly1305 keys) is marked
//! undefined with memcheck's `VALGRIND_MAKE_MEM_UNDEFINED` client request,
//! so memcheck reports any branch ("Conditional jump or move depends on
//! uninitialised value") or memory address ("Use of uninitialised value")
//! computed from a secret. Run natively (`cargo test`) the client requests
//! are no-ops and this only exercises the paths; `.ci/steps/14-constant-time.sh`
//! runs it under `valgrind --tool=memcheck` with the suppressions that
//! `--write-suppressions FILE` writes from [`DECLASSIFIED`] below, and fails
//! on any other report. Valgrind's CPU has AES-NI, PCLMULQDQ and AVX2 but no
//! VAES or AVX-512, so it covers `soft`, `aesni` and `avx2`.
//!
//! Each operation is run between two `VALGRIND_COUNT_ERRORS` requests and
//! reported with the number of new errors, so a report names the operation.

use hwcrypt::aead::Aead;
use hwcrypt::aes::{Aes, CounterWidth};
use hwcrypt::chacha20poly1305::{self, ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb, Xts};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, ct};
use std::hint::black_box;

/// The branches where a secret-dependent result becomes public by design:
/// one per operation, the one the API must take. Each entry: the function
/// holding the conditional jump (as valgrind names frames, inlined ones
/// included), the memcheck error kinds allowed there, how many inlined
/// helper frames (`core` slice indexing, `zeroize`'s loop) may sit above it
/// in the report, and why the value is public. `.ci/steps/14-constant-time.sh`
/// writes these out as suppressions (`--write-suppressions FILE`); the
/// function must be the top frame or sit right under at most that many
/// frames, so everything else it calls is still checked (and the code
/// under those helpers, e.g. the CBC kernels under `decrypt_padded`, is
/// checked through its own operations above, where nothing is declassified).
const DECLASSIFIED: &[Declassified] = &[
    // AEAD open (GCM, ChaCha20-Poly1305, XChaCha20-Poly1305): whether the
    // tag verified. Public: the caller gets Ok or AuthenticationFailed. The
    // comparison itself (`ct::eq`) is branch-free over the bytes.
    Declassified {
        function: "hwcrypt::aead::verify_or_wipe",
        kinds: &["Cond"],
        helper_frames: 0,
        why: "tag verified or not",
    },
    // CBC with PKCS#7 (`padding::pkcs7_unpad`): whether the padding is
    // valid, and with it the message length (the slice it returns). Public:
    // the caller gets Ok(message) or BadPadding. The check of the padding
    // bytes themselves is branch-free.
    // Only in `padding_verdict` (out of line, with the slice helpers it
    // calls), never in `pkcs7_unpad`'s check or the `ct` masks: a branch
    // there is reported (a review found the earlier suppression of
    // `pkcs7_unpad` with four helper frames hid one in `ct::mask_lt_u8`).
    Declassified {
        function: "hwcrypt::modes::padding::padding_verdict",
        kinds: &["Cond"],
        helper_frames: 4,
        why: "padding valid or not, and the message length",
    },
    // `Cbc::decrypt_padded`'s match on that verdict (no helper frames), and
    // `keep_message`, which wipes the padding bytes and truncates to the
    // now public message length.
    Declassified {
        function: "hwcrypt::modes::cbc::Cbc<K>::decrypt_padded",
        kinds: &["Cond"],
        helper_frames: 0,
        why: "padding valid or not",
    },
    Declassified {
        function: "hwcrypt::modes::cbc::keep_message",
        kinds: &["Cond", "Value8"],
        helper_frames: 4,
        why: "the message length, public once the padding verified",
    },
    // XTS key setup: whether the two key halves are equal (IEEE 1619
    // forbids it). Public: the key is refused with XtsEqualKeyHalves. The
    // comparison (`ct::eq`) is branch-free.
    Declassified {
        function: "hwcrypt::modes::xts::Xts::build",
        kinds: &["Cond"],
        helper_frames: 0,
        why: "key halves equal or not",
    },
    // The test's own branch on `ct::eq`'s result.
    Declassified {
        function: "constant_time::ct_eq",
        kinds: &["Cond"],
        helper_frames: 0,
        why: "the test branches on the comparison result",
    },
];

/// One declassifying branch (see [`DECLASSIFIED`]).
struct Declassified {
    function: &'static str,
    kinds: &'static [&'static str],
    helper_frames: usize,
    why: &'static str,
}

/// The valgrind suppressions for [`DECLASSIFIED`].
fn suppressions() -> String {
    let mut text = String::new();
    for d in DECLASSIFIED {
        // Valgrind names inlined frames by their bare name, others by their
        // path (and hash): match the last path segment, with wildcards.
        let name = d.function.rsplit("::").next().unwrap_or(d.function);
        for kind in d.kinds {
            for depth in 0..=d.helper_frames {
                text.push_str(&format!(
                    "{{\n   declassified: {} ({}, {depth} helper frames)\n   Memcheck:{kind}\n",
                    d.why, d.function
                ));
                for _ in 0..depth {
                    text.push_str("   fun:*\n");
                }
                text.push_str(&format!("   fun:*{name}*\n}}\n"));
            }
        }
    }
    text
}

// ---------------------------------------------------------------- client requests

/// Memcheck's requests (`memcheck.h`: `VG_USERREQ_TOOL_BASE('M','C') + n`)
/// and the core's (`valgrind.h`).
const MAKE_MEM_UNDEFINED: usize = 0x4d43_0001;
const MAKE_MEM_DEFINED: usize = 0x4d43_0002;
const RUNNING_ON_VALGRIND: usize = 0x1001;
const COUNT_ERRORS: usize = 0x1201;

/// One valgrind client request: the magic no-op sequence of `valgrind.h`
/// for amd64. Natively it does nothing and returns `default`.
#[cfg(target_arch = "x86_64")]
fn client_request(request: usize, a1: usize, a2: usize, default: usize) -> usize {
    let args: [usize; 6] = [request, a1, a2, 0, 0, 0];
    let result: usize;
    // SAFETY: four rotations of rdi by 128 bits in all (rdi unchanged) and
    // `xchg rbx, rbx` (no change): a no-op on the CPU. Under valgrind the
    // sequence is the client-request marker; valgrind reads the six words
    // at rax (alive for the call) and writes its answer to rdx.
    unsafe {
        core::arch::asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") default => result,
            out("rdi") _,
            options(nostack, readonly),
        );
    }
    result
}

#[cfg(not(target_arch = "x86_64"))]
fn client_request(_: usize, _: usize, _: usize, default: usize) -> usize {
    default
}

/// Marks `bytes` secret (undefined for memcheck).
fn secret<T: ?Sized>(v: &T) {
    let len = std::mem::size_of_val(v);
    client_request(
        MAKE_MEM_UNDEFINED,
        v as *const T as *const u8 as usize,
        len,
        0,
    );
}

/// Marks `bytes` public again (defined), e.g. an output before the test
/// looks at it.
fn public<T: ?Sized>(v: &T) {
    let len = std::mem::size_of_val(v);
    client_request(
        MAKE_MEM_DEFINED,
        v as *const T as *const u8 as usize,
        len,
        0,
    );
}

fn errors_so_far() -> usize {
    client_request(COUNT_ERRORS, 0, 0, 0)
}

/// A secret buffer of `len` bytes (made undefined after it is filled).
fn secret_vec(len: usize, seed: u8) -> Vec<u8> {
    let v: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(29) ^ seed)
        .collect();
    secret(&v[..]);
    v
}

/// `ct::eq` as the caller of a comparison uses it; the branch on its result
/// is listed in [`DECLASSIFIED`].
#[inline(never)]
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    let r = black_box(ct::eq(a, b));
    if r { black_box(true) } else { black_box(false) }
}

// ---------------------------------------------------------------- operations

type Op = (String, Box<dyn Fn()>);

fn aes_ops(ops: &mut Vec<Op>, b: Backend) {
    for len in [16, 24, 32] {
        ops.push((
            format!("{b}: AES-{} key schedule", len * 8),
            Box::new(move || {
                let key = secret_vec(len, 1);
                black_box(Aes::with_backend(&key, b).unwrap());
            }),
        ));
    }
    for len in [16, 32] {
        let bits = len * 8;
        ops.push((
            format!(
                "{b}: AES-{bits} ECB, CBC, CFB8, CFB128, OFB encrypt and decrypt (key, data secret)"
            ),
            Box::new(move || {
                let key = secret_vec(len, 2);
                let aes = Aes::with_backend(&key, b).unwrap();
                let iv = secret_vec(16, 3);
                for n in [16, 64, 160] {
                    let mut data = secret_vec(n, 4);
                    Ecb::new(&aes).encrypt(&mut data).unwrap();
                    Ecb::new(&aes).decrypt(&mut data).unwrap();
                    Cbc::new(&aes, &iv).unwrap().encrypt(&mut data).unwrap();
                    Cbc::new(&aes, &iv).unwrap().decrypt(&mut data).unwrap();
                    let mut odd = secret_vec(n + 7, 5);
                    Cfb8::new(&aes, &iv).unwrap().encrypt(&mut odd);
                    Cfb128::new(&aes, &iv).unwrap().encrypt(&mut odd);
                    Cfb128::new(&aes, &iv).unwrap().decrypt(&mut odd);
                    Ofb::new(&aes, &iv).unwrap().apply_keystream(&mut odd);
                    public(&data[..]);
                    public(&odd[..]);
                    black_box((&data, &odd));
                }
            }),
        ));
        ops.push((
            format!("{b}: AES-{bits} CTR, 128- and 32-bit counters (key, data secret; counter block secret on soft)"),
            Box::new(move || {
                let key = secret_vec(len, 6);
                let aes = Aes::with_backend(&key, b).unwrap();
                // Counters near both carry points. The counter block is a
                // public value (the IV); soft treats it as secret anyway and
                // is checked so. aesni splits a call where the low 64 bits
                // of the counter wrap (a carry-free fast path): its timing
                // and addresses depend on the counter, so there it is left
                // public (docs/testing.md).
                let mut iv = [0xffu8; 16];
                iv[0] = 0x12;
                if b == Backend::Soft {
                    secret(&iv);
                }
                for width in [CounterWidth::Full128, CounterWidth::Low32] {
                    let mut data = secret_vec(200, 7);
                    let mut ctr = Ctr::with_width(&aes, &iv, width).unwrap();
                    ctr.apply_keystream(&mut data[..37]).unwrap();
                    ctr.apply_keystream(&mut data[37..]).unwrap();
                    public(&data[..]);
                    black_box(&data);
                }
            }),
        ));
    }
    ops.push((
        format!("{b}: CBC-PKCS#7 encrypt_padded and decrypt_padded, valid and bad padding"),
        Box::new(move || {
            let key = secret_vec(16, 8);
            let aes = Aes::with_backend(&key, b).unwrap();
            let iv = [9u8; 16];
            for n in [0, 5, 16, 40] {
                let msg = secret_vec(n, 10);
                let ct = Cbc::new(&aes, &iv).unwrap().encrypt_padded(&msg);
                public(&ct[..]);
                let r = Cbc::new(&aes, &iv).unwrap().decrypt_padded(&ct);
                let _ = black_box(r.map(|m| m.len()));
                // A ciphertext whose padding is (almost surely) bad.
                let mut bad = ct.clone();
                let last = ct.len() - 1;
                bad[last] ^= 0x55;
                let r = Cbc::new(&aes, &iv).unwrap().decrypt_padded(&bad);
                let _ = black_box(r.map(|m| m.len()));
            }
        }),
    ));
}

fn gcm_ops(ops: &mut Vec<Op>, b: Backend) {
    for len in [16, 32] {
        ops.push((
            format!(
                "{b}: AES-{}-GCM key setup (AES schedule, H and its powers)",
                len * 8
            ),
            Box::new(move || {
                let key = secret_vec(len, 11);
                black_box(AesGcm::with_backend(&key, b).unwrap());
            }),
        ));
    }
    ops.push((
        format!("{b}: AES-GCM seal and open, good and bad tag (key, nonce, data secret)"),
        Box::new(move || {
            let key = secret_vec(32, 12);
            let k = AesGcm::with_backend(&key, b).unwrap();
            for (n, iv_len) in [(0, 12), (60, 12), (300, 12), (33, 20)] {
                let iv = secret_vec(iv_len, 13);
                let aad = secret_vec(21, 14);
                let mut buf = secret_vec(n, 15);
                let tag = k
                    .seal_in_place_detached_with(&iv, &aad, &mut buf, 16)
                    .unwrap();
                let mut tag = tag.as_bytes().to_vec();
                public(&tag[..]);
                public(&buf[..]);
                let ct = buf.clone();
                black_box(
                    k.open_in_place_detached_with(&iv, &aad, &mut buf, &tag)
                        .is_ok(),
                );
                public(&buf[..]);
                let mut buf = ct;
                tag[3] ^= 1;
                black_box(
                    k.open_in_place_detached_with(&iv, &aad, &mut buf, &tag)
                        .is_ok(),
                );
            }
        }),
    ));
}

fn chacha_ops(ops: &mut Vec<Op>, b: Backend) {
    ops.push((
        format!("{b}: ChaCha20-Poly1305 and XChaCha20-Poly1305 seal and open, good and bad tag (key, nonce, data secret)"),
        Box::new(move || {
            let key = secret_vec(32, 16);
            let c = ChaCha20Poly1305::with_backend(&key, b).unwrap();
            let x = XChaCha20Poly1305::with_backend(&key, b).unwrap();
            for n in [0, 64, 300, 1000] {
                let aad = secret_vec(13, 17);
                for extended in [false, true] {
                    let nonce = secret_vec(if extended { 24 } else { 12 }, 18);
                    let mut buf = secret_vec(n, 19);
                    let seal = |buf: &mut [u8]| {
                        if extended {
                            x.seal_in_place_detached(&nonce, &aad, buf)
                        } else {
                            c.seal_in_place_detached(&nonce, &aad, buf)
                        }
                    };
                    let open = |buf: &mut [u8], tag: &[u8]| {
                        if extended {
                            x.open_in_place_detached(&nonce, &aad, buf, tag)
                        } else {
                            c.open_in_place_detached(&nonce, &aad, buf, tag)
                        }
                    };
                    let mut tag = seal(&mut buf).unwrap();
                    public(&tag);
                    public(&buf[..]);
                    let ct = buf.clone();
                    black_box(open(&mut buf, &tag).is_ok());
                    public(&buf[..]);
                    let mut buf = ct;
                    tag[0] ^= 0x80;
                    black_box(open(&mut buf, &tag).is_ok());
                }
            }
        }),
    ));
    ops.push((
        format!("{b}: raw ChaCha20 (key, nonce, data secret)"),
        Box::new(move || {
            let key = secret_vec(32, 20);
            let nonce = secret_vec(12, 21);
            let mut data = secret_vec(777, 22);
            chacha20poly1305::chacha20_xor(b, &key, &nonce, 1, &mut data).unwrap();
            public(&data[..]);
            black_box(&data);
        }),
    ));
}

fn xts_ops(ops: &mut Vec<Op>, b: Backend) {
    for len in [32, 64] {
        ops.push((
            format!("{b}: AES-{}-XTS key setup (key-halves check) and units of 16, 37, 512 bytes (key, tweak, data secret)", len * 4),
            Box::new(move || {
                let key = secret_vec(len, 23);
                let x = Xts::with_backend(&key, b).unwrap();
                for n in [16, 37, 512] {
                    let tweak = [0x5au8; 16];
                    secret(&tweak);
                    let mut data = secret_vec(n, 24);
                    x.encrypt(&tweak, &mut data).unwrap();
                    x.decrypt(&tweak, &mut data).unwrap();
                    public(&data[..]);
                    black_box(&data);
                }
            }),
        ));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // libtest's listing protocol: no trials to list.
    }
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--write-suppressions") {
        let path = args.get(i + 1).expect("--write-suppressions FILE");
        let text = suppressions();
        std::fs::write(path, text).expect("write the suppressions");
        println!(
            "{} declassified branches written to {path}",
            DECLASSIFIED.len()
        );
        return;
    }
    let on_valgrind = client_request(RUNNING_ON_VALGRIND, 0, 0, 0) > 0;
    if on_valgrind {
        println!("running under valgrind: secrets are marked undefined");
    } else {
        println!(
            "not under valgrind: the client requests are no-ops (run .ci/steps/14-constant-time.sh for the check)"
        );
    }
    let runnable = |a, b| registry::check(a, b).is_ok();
    let mut ops: Vec<Op> = Vec::new();
    for b in Backend::ALL {
        if runnable(Algorithm::Aes, b) {
            aes_ops(&mut ops, b);
        } else {
            println!("skipped backend {b} for aes: not runnable here");
        }
        if runnable(Algorithm::AesGcm, b) {
            gcm_ops(&mut ops, b);
        }
        if runnable(Algorithm::ChaCha20Poly1305, b) {
            chacha_ops(&mut ops, b);
        }
        if runnable(Algorithm::AesXts, b) {
            xts_ops(&mut ops, b);
        }
    }
    ops.push((
        "soft: one-shot Poly1305 (key, message secret)".into(),
        Box::new(|| {
            let key = secret_vec(32, 25);
            let msg = secret_vec(100, 26);
            let mut tag = chacha20poly1305::poly1305(&key, &msg).unwrap();
            public(&tag);
            black_box(&mut tag);
        }),
    ));
    ops.push((
        "ct::eq on secret bytes (equal and not)".into(),
        Box::new(|| {
            let a = secret_vec(16, 27);
            let b = secret_vec(16, 27);
            let c = secret_vec(16, 28);
            black_box((ct_eq(&a, &b), ct_eq(&a, &c)));
        }),
    ));
    let (mut passed, mut failed) = (0, 0);
    for (name, op) in &ops {
        let before = errors_so_far();
        op();
        let new = errors_so_far() - before;
        if new == 0 {
            passed += 1;
            println!("ok   {name}");
        } else {
            failed += 1;
            println!("FAIL {name}: {new} memcheck errors (secret-dependent branch or address)");
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
