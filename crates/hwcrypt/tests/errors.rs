//! Every error path of the public API returns the documented `Error`
//! variant (never a panic), leaves buffers and stream state untouched, and
//! displays as one line; `Debug` output never shows key bytes; and an
//! invalid `HWCRYPT_CPU` is reported, not ignored (checked in a child
//! process, since the mask is read once per process).

mod common;

use hwcrypt::aes::{Aes, CounterWidth, KeySize};
use hwcrypt::cpu::{Feature, Features, Mask};
use hwcrypt::modes::padding::{pkcs7_pad, pkcs7_unpad};
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, Error};
use std::process::Command;

const KEY16: [u8; 16] = [7; 16];
const IV: [u8; 16] = [9; 16];

/// Most tests here make keys, and under an invalid `HWCRYPT_CPU` every key
/// constructor fails (by design: see `helper_bogus_cpu_mask`). They stand
/// down then, and `the_cpu_mask_is_valid` alone fails, saying why.
fn mask_is_valid() -> bool {
    hwcrypt::cpu::features().is_ok()
}

#[test]
fn the_cpu_mask_is_valid() {
    if let Err(e) = hwcrypt::cpu::features() {
        panic!("these tests need a valid HWCRYPT_CPU mask (or none): {e}");
    }
}

/// A key on the portable backend, which every CPU can run.
fn soft() -> Aes {
    Aes::with_backend(&KEY16, Backend::Soft).expect("soft always runs")
}

fn assert_one_line(e: &Error) {
    let text = e.to_string();
    assert!(!text.is_empty(), "{e:?} displays as nothing");
    assert!(
        !text.contains('\n') && !text.contains('\r'),
        "{e:?} displays as several lines: {text:?}"
    );
    assert_eq!(text.trim(), text, "{e:?} has surrounding whitespace");
}

// ---------------------------------------------------------------- keys

#[test]
fn wrong_key_lengths_are_invalid_key_length() {
    for len in [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64] {
        let key = vec![0x11; len];
        let e = Aes::new(&key).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidKeyLength {
                expected: "16, 24 or 32",
                got: len
            },
            "Aes::new with a {len}-byte key"
        );
        assert_one_line(&e);
        // The key length is checked first, whatever the backend.
        for backend in Backend::ALL {
            let e = Aes::with_backend(&key, backend).unwrap_err();
            assert!(
                matches!(e, Error::InvalidKeyLength { got, .. } if got == len),
                "Aes::with_backend({backend}) with a {len}-byte key: {e:?}"
            );
        }
        assert!(
            matches!(KeySize::from_key_len(len), Err(Error::InvalidKeyLength { got, .. }) if got == len)
        );
    }
    // (Bad lengths are reported as such whatever the mask; good keys need
    // a valid one.)
    if !mask_is_valid() {
        return;
    }
    for size in KeySize::ALL {
        assert_eq!(KeySize::from_key_len(size.key_len()), Ok(size));
        let aes = Aes::with_backend(&vec![1; size.key_len()], Backend::Soft).unwrap();
        assert_eq!(aes.key_size(), size);
    }
}

// ---------------------------------------------------------------- IVs

#[test]
fn wrong_iv_lengths_are_invalid_iv_length_for_every_mode() {
    if !mask_is_valid() {
        return;
    }
    type Make = fn(Aes, &[u8]) -> Result<(), Error>;
    let modes: [(&str, Make); 7] = [
        ("Cbc::new", |a, iv| Cbc::new(a, iv).map(drop)),
        ("Ctr::new", |a, iv| Ctr::new(a, iv).map(drop)),
        ("Ctr::with_width(Full128)", |a, iv| {
            Ctr::with_width(a, iv, CounterWidth::Full128).map(drop)
        }),
        ("Ctr::with_width(Low32)", |a, iv| {
            Ctr::with_width(a, iv, CounterWidth::Low32).map(drop)
        }),
        ("Cfb128::new", |a, iv| Cfb128::new(a, iv).map(drop)),
        ("Cfb8::new", |a, iv| Cfb8::new(a, iv).map(drop)),
        ("Ofb::new", |a, iv| Ofb::new(a, iv).map(drop)),
    ];
    for (name, make) in modes {
        for len in [0, 1, 8, 12, 15, 17, 24, 32] {
            let e = make(soft(), &vec![0; len]).unwrap_err();
            assert!(
                matches!(e, Error::InvalidIvLength { got, .. } if got == len),
                "{name} with a {len}-byte IV: {e:?}"
            );
            assert_one_line(&e);
        }
        make(soft(), &IV).unwrap_or_else(|e| panic!("{name} with a 16-byte IV: {e}"));
    }
}

// ---------------------------------------------------------------- block alignment

#[test]
fn ecb_and_cbc_reject_partial_blocks_in_place_and_to() {
    if !mask_is_valid() {
        return;
    }
    for len in [1, 15, 17, 31, 33, 4095] {
        let want = Error::NotBlockAligned {
            len,
            block_size: 16,
        };
        let data = vec![0x42; len];
        let ecb = Ecb::new(soft());
        let mut buf = data.clone();
        assert_eq!(
            ecb.encrypt(&mut buf),
            Err(want.clone()),
            "Ecb::encrypt({len})"
        );
        assert_eq!(
            ecb.decrypt(&mut buf),
            Err(want.clone()),
            "Ecb::decrypt({len})"
        );
        assert_eq!(buf, data, "Ecb changed a buffer it rejected");
        let mut out = vec![0x24; len];
        assert_eq!(
            ecb.encrypt_to(&data, &mut out),
            Err(want.clone()),
            "Ecb::encrypt_to({len})"
        );
        assert_eq!(
            ecb.decrypt_to(&data, &mut out),
            Err(want.clone()),
            "Ecb::decrypt_to({len})"
        );
        assert_eq!(out, vec![0x24; len], "Ecb wrote into a rejected output");

        let mut cbc = Cbc::new(soft(), &IV).unwrap();
        assert_eq!(
            cbc.encrypt(&mut buf),
            Err(want.clone()),
            "Cbc::encrypt({len})"
        );
        assert_eq!(
            cbc.decrypt(&mut buf),
            Err(want.clone()),
            "Cbc::decrypt({len})"
        );
        assert_eq!(
            cbc.encrypt_to(&data, &mut out),
            Err(want.clone()),
            "Cbc::encrypt_to({len})"
        );
        assert_eq!(
            cbc.decrypt_to(&data, &mut out),
            Err(want.clone()),
            "Cbc::decrypt_to({len})"
        );
        assert_eq!(buf, data, "Cbc changed a buffer it rejected");
        assert_eq!(out, vec![0x24; len], "Cbc wrote into a rejected output");
        assert_eq!(
            cbc.chaining_value(),
            IV,
            "a rejected call moved the CBC chain"
        );
        assert_eq!(
            cbc.decrypt_padded(&data),
            Err(want.clone()),
            "Cbc::decrypt_padded of {len} bytes"
        );
        assert_one_line(&want);
    }
}

// ---------------------------------------------------------------- length mismatch

#[test]
fn separate_buffers_of_different_lengths_are_length_mismatch_for_every_mode() {
    if !mask_is_valid() {
        return;
    }
    for (input_len, output_len) in [(16, 32), (32, 16), (0, 16), (16, 0), (1, 2), (64, 63)] {
        let input = vec![0x5a; input_len];
        let fresh_out = vec![0xa5; output_len];
        let want = Error::LengthMismatch {
            input: input_len,
            output: output_len,
        };
        let mut out = fresh_out.clone();
        let check = |name: &str, r: Result<(), Error>, out: &mut Vec<u8>| {
            assert_eq!(r, Err(want.clone()), "{name}({input_len} -> {output_len})");
            assert_eq!(*out, fresh_out, "{name} wrote into a rejected output");
        };

        let ecb = Ecb::new(soft());
        check(
            "Ecb::encrypt_to",
            ecb.encrypt_to(&input, &mut out),
            &mut out,
        );
        check(
            "Ecb::decrypt_to",
            ecb.decrypt_to(&input, &mut out),
            &mut out,
        );

        let mut cbc = Cbc::new(soft(), &IV).unwrap();
        check(
            "Cbc::encrypt_to",
            cbc.encrypt_to(&input, &mut out),
            &mut out,
        );
        check(
            "Cbc::decrypt_to",
            cbc.decrypt_to(&input, &mut out),
            &mut out,
        );
        assert_eq!(cbc.chaining_value(), IV);

        for width in [CounterWidth::Full128, CounterWidth::Low32] {
            let mut ctr = Ctr::with_width(soft(), &IV, width).unwrap();
            check(
                "Ctr::apply_keystream_to",
                ctr.apply_keystream_to(&input, &mut out),
                &mut out,
            );
            assert_eq!(ctr.position(), 0, "a rejected call moved the CTR position");
            assert_eq!(
                ctr.next_counter(),
                IV,
                "a rejected call moved the CTR counter"
            );
        }

        let mut cfb = Cfb128::new(soft(), &IV).unwrap();
        check(
            "Cfb128::encrypt_to",
            cfb.encrypt_to(&input, &mut out),
            &mut out,
        );
        check(
            "Cfb128::decrypt_to",
            cfb.decrypt_to(&input, &mut out),
            &mut out,
        );

        let mut cfb8 = Cfb8::new(soft(), &IV).unwrap();
        check(
            "Cfb8::encrypt_to",
            cfb8.encrypt_to(&input, &mut out),
            &mut out,
        );
        check(
            "Cfb8::decrypt_to",
            cfb8.decrypt_to(&input, &mut out),
            &mut out,
        );

        let mut ofb = Ofb::new(soft(), &IV).unwrap();
        check(
            "Ofb::apply_keystream_to",
            ofb.apply_keystream_to(&input, &mut out),
            &mut out,
        );

        assert_one_line(&want);
    }
}

// ---------------------------------------------------------------- padding

#[test]
fn pkcs7_unpad_rejects_bad_padding() {
    let block = |tail: &[u8]| {
        let mut b = vec![0xaa; 16 - tail.len()];
        b.extend_from_slice(tail);
        b
    };
    let mut two_blocks = vec![0x10; 32];
    two_blocks[16] = 0x0f; // last block of 16s with one wrong byte
    let bad: Vec<(&str, Vec<u8>, usize)> = vec![
        ("empty", vec![], 16),
        ("not a whole block", vec![1; 15], 16),
        ("17 bytes", vec![1; 17], 16),
        ("pad byte 0", block(&[0]), 16),
        ("pad byte 17", block(&[17]), 16),
        ("pad byte 0xff", block(&[0xff]), 16),
        ("inconsistent pad bytes", block(&[2, 3, 3]), 16),
        ("inconsistent far pad byte", block(&[4, 5, 5, 5, 5]), 16),
        ("one wrong byte in a full pad block", two_blocks, 16),
        ("block size 0", vec![1; 16], 0),
        ("block size 256", vec![1; 256], 256),
    ];
    for (what, buf, block_size) in bad {
        assert_eq!(
            pkcs7_unpad(&buf, block_size),
            Err(Error::BadPadding),
            "{what}: {buf:02x?}"
        );
    }
    assert_one_line(&Error::BadPadding);
    // And the good ones still work.
    assert_eq!(pkcs7_unpad(&[16; 16], 16), Ok(&[][..]));
    assert_eq!(pkcs7_unpad(&block(&[3, 3, 3]), 16).map(<[u8]>::len), Ok(13));
    let mut v = b"fourteen bytes".to_vec();
    pkcs7_pad(&mut v, 16).unwrap();
    assert_eq!(pkcs7_unpad(&v, 16), Ok(&b"fourteen bytes"[..]));
}

/// CBC-encrypts `plaintext` (whole blocks, no padding added) with [`KEY16`].
fn cbc_raw(plaintext: &[u8]) -> Vec<u8> {
    let mut buf = plaintext.to_vec();
    Cbc::new(soft(), &IV).unwrap().encrypt(&mut buf).unwrap();
    buf
}

#[test]
fn cbc_decrypt_padded_rejects_bad_padding() {
    if !mask_is_valid() {
        return;
    }
    // Ciphertexts whose plaintext ends in a bad PKCS#7 padding, made by
    // encrypting that plaintext without padding: deterministic whatever the key.
    let mut full_wrong = [0x10; 32];
    full_wrong[20] = 0x11;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("last byte 0", [[0x61; 15].as_slice(), &[0]].concat()),
        ("last byte 17", [[0x61; 15].as_slice(), &[17]].concat()),
        ("last byte 0xff", [[0x61; 15].as_slice(), &[0xff]].concat()),
        (
            "pad bytes disagree",
            [[0x61; 13].as_slice(), &[2, 3, 3]].concat(),
        ),
        ("full pad block with a wrong byte", full_wrong.to_vec()),
    ];
    for (what, plaintext) in cases {
        let ct = cbc_raw(&plaintext);
        let mut cbc = Cbc::new(soft(), &IV).unwrap();
        assert_eq!(cbc.decrypt_padded(&ct), Err(Error::BadPadding), "{what}");
    }
    // Truncated: the first block of a two-block message ends in 'z', not a padding.
    let mut cbc = Cbc::new(soft(), &IV).unwrap();
    let ct = cbc.encrypt_padded(b"the quick brown fox, lazily");
    assert_eq!(ct.len(), 32);
    let mut cbc = Cbc::new(soft(), &IV).unwrap();
    assert_eq!(
        cbc.decrypt_padded(&ct[..16]),
        Err(Error::BadPadding),
        "truncated"
    );
    // Empty ciphertext: no padding at all.
    let mut cbc = Cbc::new(soft(), &IV).unwrap();
    assert_eq!(cbc.decrypt_padded(&[]), Err(Error::BadPadding), "empty");
    // The intact message still round-trips.
    let mut cbc = Cbc::new(soft(), &IV).unwrap();
    assert_eq!(
        cbc.decrypt_padded(&ct).as_deref(),
        Ok(&b"the quick brown fox, lazily"[..])
    );
}

// ---------------------------------------------------------------- backends and registry

#[test]
fn unknown_backend_names_are_unknown_backend() {
    for name in ["avx9", "", "aes-ni", "vaes", "soft ", "vaes_avx2"] {
        let e = name.parse::<Backend>().unwrap_err();
        assert_eq!(e, Error::UnknownBackend(name.to_string()), "{name:?}");
        assert_one_line(&e);
        assert!(
            e.to_string().contains(name.trim()),
            "{e} does not name {name:?}"
        );
    }
    for b in Backend::ALL {
        assert_eq!(b.name().parse::<Backend>(), Ok(b));
        assert_eq!(b.name().to_uppercase().parse::<Backend>(), Ok(b));
        assert_eq!(b.to_string(), b.name());
    }
}

#[test]
fn backend_unavailable_names_the_missing_features() {
    let e = registry::check_with(Algorithm::Aes, Backend::VaesAvx2, Features::NONE).unwrap_err();
    assert_one_line(&e);
    let Error::BackendUnavailable {
        algorithm,
        backend,
        missing,
    } = &e
    else {
        panic!("expected BackendUnavailable, got {e:?}");
    };
    assert_eq!(*algorithm, "aes");
    assert_eq!(*backend, "vaes-avx2");
    if cfg!(target_arch = "x86_64") {
        for f in registry::VAES_AVX2_FEATURES {
            assert!(
                missing.split(',').any(|m| m == f.name()),
                "{missing:?} does not name {f}"
            );
        }
        let text = e.to_string();
        assert!(
            text.contains("vaes-avx2") && text.contains("vaes") && text.contains("avx2"),
            "{text}"
        );

        // Only what is actually missing is named.
        let some = Features::of(&[Feature::Aes, Feature::Ssse3, Feature::Avx]);
        let e = registry::check_with(Algorithm::Aes, Backend::VaesAvx2, some).unwrap_err();
        let Error::BackendUnavailable { missing, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(missing, "avx2,vaes");
        let e = registry::check_with(Algorithm::Aes, Backend::AesNi, Features::NONE).unwrap_err();
        let Error::BackendUnavailable { missing, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(missing, "aes,ssse3");
    }
    assert_eq!(
        registry::check_with(Algorithm::Aes, Backend::Soft, Features::NONE),
        Ok(())
    );
}

#[test]
fn unregistered_backend_is_an_error_not_a_panic() {
    if !mask_is_valid() {
        return;
    }
    // `avx512` is a ChaCha20 backend, never registered for `aes`.
    let all = Features::of(&Feature::ALL);
    let e = registry::check_with(Algorithm::Aes, Backend::Avx512, all).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::BackendNotImplemented {
                backend: "avx512",
                algorithm: "aes",
            }
        ),
        "{e:?}"
    );
    assert_one_line(&e);
    assert!(registry::check(Algorithm::Aes, Backend::Avx512).is_err());
    assert!(!registry::runnable(Algorithm::Aes, all).contains(&Backend::Avx512));
    for key_len in [16, 24, 32] {
        let e = Aes::with_backend(&vec![3; key_len], Backend::Avx512).unwrap_err();
        assert!(
            matches!(
                &e,
                Error::BackendNotImplemented {
                    backend: "avx512",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_one_line(&e);
    }
}

#[test]
fn forcing_a_backend_agrees_with_the_registry() {
    if !mask_is_valid() {
        return;
    }
    // Whatever the CPU (and HWCRYPT_CPU): a backend the registry says runs
    // can be forced, and one it says cannot gives that same error.
    for (backend, check) in common::backends(Algorithm::Aes) {
        match (check, Aes::with_backend(&KEY16, backend)) {
            (Ok(()), Ok(aes)) => assert_eq!(aes.backend(), backend),
            (Ok(()), Err(e)) => panic!("registry says {backend} runs, but forcing it fails: {e}"),
            (Err(want), Err(got)) => assert_eq!(got, want, "{backend}"),
            (Err(e), Ok(_)) => {
                panic!("registry says {backend} cannot run ({e}), but forcing it worked")
            }
        }
    }
    let default = registry::default_backend(Algorithm::Aes).unwrap();
    assert_eq!(Aes::new(&KEY16).unwrap().backend(), default);
}

// ---------------------------------------------------------------- CPU mask

#[test]
fn bad_cpu_masks_are_invalid_cpu_mask() {
    for bad in [
        "-bogus",
        "bogus",
        "+aes",
        "aes",
        "-",
        "-aes,-nope",
        "none,-avx3",
        "avx2",
    ] {
        let e = Mask::parse(bad).unwrap_err();
        assert!(matches!(e, Error::InvalidCpuMask(_)), "{bad:?}: {e:?}");
        assert_one_line(&e);
    }
    for good in ["", "all", "none", "-vaes", "-AVX2, -vaes", " -aes "] {
        Mask::parse(good).unwrap_or_else(|e| panic!("{good:?}: {e}"));
    }
}

/// Runs this test binary again with `HWCRYPT_CPU=mask`, selecting exactly
/// the ignored helper test `helper`, and returns its output.
fn run_helper(mask: &str, helper: &str) -> String {
    let exe = std::env::current_exe().expect("current_exe");
    let out = Command::new(&exe)
        .args([
            "--ignored",
            "--exact",
            helper,
            "--nocapture",
            "--test-threads=1",
        ])
        .env(hwcrypt::cpu::MASK_ENV_VAR, mask)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", exe.display()));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "helper {helper} with HWCRYPT_CPU={mask:?} failed:\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "helper {helper} did not run exactly one test:\n{text}"
    );
    assert!(
        text.contains(&format!("HELPER CHECKED {helper}")),
        "helper {helper} did not check anything:\n{text}"
    );
    text
}

#[test]
fn invalid_cpu_mask_is_reported_not_ignored() {
    run_helper("bogus", "helper_bogus_cpu_mask");
}

#[test]
fn cpu_mask_none_leaves_only_soft() {
    run_helper("none", "helper_cpu_mask_none");
}

/// Whether this process was started by [`run_helper`] with `mask`; helpers
/// run by hand (`--ignored`) without it check nothing and say so.
fn spawned_with(mask: &str) -> bool {
    let got = std::env::var(hwcrypt::cpu::MASK_ENV_VAR).ok();
    if got.as_deref() != Some(mask) {
        println!(
            "helper: HWCRYPT_CPU is {got:?}, not {mask:?}: nothing to check (run by its parent test)"
        );
        return false;
    }
    true
}

#[test]
#[ignore = "helper: run in a child process by invalid_cpu_mask_is_reported_not_ignored"]
fn helper_bogus_cpu_mask() {
    if !spawned_with("bogus") {
        return;
    }
    let e = Aes::new(&[0; 16]).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidCpuMask(why) if why.contains("bogus")),
        "{e:?}"
    );
    assert_one_line(&e);
    for backend in Backend::ALL {
        let e = Aes::with_backend(&[0; 16], backend).unwrap_err();
        assert!(matches!(e, Error::InvalidCpuMask(_)), "{backend}: {e:?}");
    }
    assert!(matches!(
        hwcrypt::cpu::features(),
        Err(Error::InvalidCpuMask(_))
    ));
    assert!(matches!(
        registry::default_backend(Algorithm::Aes),
        Err(Error::InvalidCpuMask(_))
    ));
    // A bad key length is still reported as such (XTS reported the mask
    // first until a review noticed).
    assert!(matches!(
        Aes::new(&[0; 5]),
        Err(Error::InvalidKeyLength { got: 5, .. })
    ));
    for xts in [
        hwcrypt::modes::Xts::new(&[0x11; 5]),
        hwcrypt::modes::Xts::with_backend(&[0x11; 5], Backend::Soft),
    ] {
        assert!(matches!(xts, Err(Error::InvalidKeyLength { got: 5, .. })));
    }
    println!("HELPER CHECKED helper_bogus_cpu_mask");
}

#[test]
#[ignore = "helper: run in a child process by cpu_mask_none_leaves_only_soft"]
fn helper_cpu_mask_none() {
    if !spawned_with("none") {
        return;
    }
    assert_eq!(hwcrypt::cpu::features(), Ok(Features::NONE));
    assert_eq!(registry::default_backend(Algorithm::Aes), Ok(Backend::Soft));
    assert_eq!(Aes::new(&[0; 16]).unwrap().backend(), Backend::Soft);
    for backend in [Backend::AesNi, Backend::VaesAvx2, Backend::VaesAvx512] {
        let e = Aes::with_backend(&[0; 16], backend).unwrap_err();
        assert!(
            matches!(
                e,
                Error::BackendUnavailable { .. } | Error::BackendNotImplemented { .. }
            ),
            "{backend}: {e:?}"
        );
    }
    println!("HELPER CHECKED helper_cpu_mask_none");
}

// ---------------------------------------------------------------- CTR keystream limits

/// 32-bit counters serve 2^32 blocks (2^36 bytes) from the initial counter;
/// a call that would go past that (and so repeat keystream from the start)
/// fails with `KeystreamExhausted` and leaves the buffer untouched, in place
/// and to a separate buffer, on every backend. Up to the limit works, the
/// last block included. The 128-bit counter's limit is the byte position
/// 2^128 - 1. (Before this check, the 32-bit counter wrapped silently.)
#[test]
fn ctr_refuses_to_repeat_keystream() {
    const LIMIT32: u128 = 1 << 36;
    let runnable = common::backends(Algorithm::Aes)
        .into_iter()
        .filter(|(_, ok)| ok.is_ok())
        .map(|(b, _)| b);
    for backend in runnable {
        let aes = Aes::with_backend(&KEY16, backend).unwrap();
        for initial in [[0u8; 16], [0xff; 16], IV] {
            let mut ctr = Ctr::with_width(&aes, &initial, CounterWidth::Low32).unwrap();
            // The last whole block before the limit: allowed, and equal to
            // the keystream of the block one before the initial counter.
            ctr.seek(LIMIT32 - 16);
            let mut last = [0u8; 16];
            ctr.apply_keystream(&mut last).unwrap();
            let mut before = initial;
            let low = u32::from_be_bytes(before[12..].try_into().unwrap()).wrapping_sub(1);
            before[12..].copy_from_slice(&low.to_be_bytes());
            let mut want = before;
            Ecb::new(&aes).encrypt(&mut want).unwrap();
            assert_eq!(last, want, "{backend}: last block of the 32-bit keystream");
            // One byte more: refused, buffer and position untouched.
            let mut buf = [0x5au8; 33];
            assert_eq!(
                ctr.apply_keystream(&mut buf[..1]),
                Err(Error::KeystreamExhausted)
            );
            assert_eq!(buf, [0x5a; 33], "{backend}: buffer touched");
            assert_eq!(ctr.position(), LIMIT32);
            // A call straddling the limit: refused whole, in place and to.
            ctr.seek(LIMIT32 - 7);
            assert_eq!(
                ctr.apply_keystream(&mut buf),
                Err(Error::KeystreamExhausted)
            );
            assert_eq!(buf, [0x5a; 33], "{backend}: buffer touched");
            let mut out = [0u8; 33];
            assert_eq!(
                ctr.apply_keystream_to(&buf, &mut out),
                Err(Error::KeystreamExhausted)
            );
            assert_eq!(out, [0; 33], "{backend}: output touched");
            assert_eq!(ctr.position(), LIMIT32 - 7);
            // The 7 bytes that are left are still served.
            ctr.apply_keystream(&mut buf[..7]).unwrap();
            assert_eq!(ctr.position(), LIMIT32);
            // A seek far past the limit, then any data: refused; nothing
            // (an empty call) is no keystream, fine anywhere (as the
            // 128-bit width; found in review, 2026-11-29).
            ctr.seek(LIMIT32 * 5 + 3);
            assert_eq!(
                ctr.apply_keystream(&mut buf[..2]),
                Err(Error::KeystreamExhausted)
            );
            assert_eq!(ctr.apply_keystream(&mut []), Ok(()));
            assert_eq!(ctr.apply_keystream_to(&[], &mut []), Ok(()));
        }
        // 128-bit counters: fine far past 2^36, refused past position 2^128 - 1.
        let mut ctr = Ctr::new(&aes, &IV).unwrap();
        ctr.seek(LIMIT32 * 5);
        let mut buf = [0u8; 40];
        ctr.apply_keystream(&mut buf).unwrap();
        ctr.seek(u128::MAX - 10);
        let mut buf = [0x33u8; 11];
        assert_eq!(
            ctr.apply_keystream(&mut buf),
            Err(Error::KeystreamExhausted)
        );
        assert_eq!(buf, [0x33; 11]);
        ctr.apply_keystream(&mut buf[..10]).unwrap();
    }
}

// ---------------------------------------------------------------- Display and Debug

#[test]
fn every_error_displays_as_one_line() {
    let errors = [
        Error::InvalidKeyLength {
            expected: "16, 24 or 32",
            got: 5,
        },
        Error::InvalidIvLength {
            expected: "16",
            got: 3,
        },
        Error::NotBlockAligned {
            len: 17,
            block_size: 16,
        },
        Error::LengthMismatch {
            input: 1,
            output: 2,
        },
        Error::BadPadding,
        Error::UnknownBackend("avx9".into()),
        Error::BackendUnavailable {
            algorithm: "aes",
            backend: "aesni",
            missing: "aes,ssse3".into(),
        },
        Error::InvalidCpuMask("'x' is neither '-FEATURE', 'none' nor 'all'".into()),
        Error::KeystreamExhausted,
    ];
    for e in &errors {
        assert_one_line(e);
        let dynamic: &dyn std::error::Error = e;
        assert!(dynamic.source().is_none());
    }
    // Errors produced by real calls, too.
    assert_one_line(&Mask::parse("-bogus").unwrap_err());
    assert_one_line(&"avx9".parse::<Backend>().unwrap_err());
}

/// A key whose bytes are distinctive in hex and in decimal (none of its
/// decimal values is a key size, so `Aes128` etc. cannot match).
const SECRET: [u8; 32] = [
    0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe, 0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15,
    0xf3, 0x9c, 0xc1, 0x60, 0x5c, 0xed, 0xc8, 0x34, 0x10, 0x82, 0x27, 0x6b, 0xf3, 0xa2, 0x72, 0x37,
];

fn assert_no_key(what: &str, text: &str, key: &[u8]) {
    let hex_lower = common::to_hex(key);
    let hex_upper = hex_lower.to_uppercase();
    for window in key.windows(4) {
        let h = common::to_hex(window);
        assert!(
            !text.contains(&h) && !text.contains(&h.to_uppercase()),
            "{what} shows key bytes {h}: {text}"
        );
    }
    assert!(
        !text.contains(&hex_lower) && !text.contains(&hex_upper),
        "{what}: {text}"
    );
    for window in key.windows(3) {
        for sep in [", ", ",", " "] {
            let dec = window
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(sep);
            assert!(!text.contains(&dec), "{what} shows key bytes {dec}: {text}");
        }
        let hex_list = window
            .iter()
            .map(|b| format!("{b:#04x}"))
            .collect::<Vec<_>>()
            .join(", ");
        assert!(
            !text.contains(&hex_list),
            "{what} shows key bytes {hex_list}: {text}"
        );
    }
    // Three-digit bytes are distinctive enough on their own.
    for b in key.iter().filter(|&&b| b >= 100) {
        assert!(
            !text.contains(&b.to_string()),
            "{what} shows key byte {b}: {text}"
        );
    }
}

#[test]
fn debug_output_never_contains_the_key() {
    for len in [16, 24, 32] {
        let key = &SECRET[..len];
        for (backend, runnable) in common::backends(Algorithm::Aes) {
            if runnable.is_err() {
                continue;
            }
            let aes = Aes::with_backend(key, backend).unwrap();
            let texts = [
                ("Aes", format!("{aes:?}"), format!("{aes:#?}")),
                (
                    "Ecb",
                    format!("{:?}", Ecb::new(aes.clone())),
                    format!("{:#?}", Ecb::new(aes.clone())),
                ),
                (
                    "Cbc",
                    format!("{:?}", Cbc::new(aes.clone(), &IV).unwrap()),
                    format!("{:#?}", Cbc::new(aes.clone(), &IV).unwrap()),
                ),
                (
                    "Ctr",
                    format!("{:?}", Ctr::new(aes.clone(), &IV).unwrap()),
                    format!("{:#?}", Ctr::new(aes.clone(), &IV).unwrap()),
                ),
                (
                    "Cfb128",
                    format!("{:?}", Cfb128::new(aes.clone(), &IV).unwrap()),
                    format!("{:#?}", Cfb128::new(aes.clone(), &IV).unwrap()),
                ),
                (
                    "Cfb8",
                    format!("{:?}", Cfb8::new(aes.clone(), &IV).unwrap()),
                    format!("{:#?}", Cfb8::new(aes.clone(), &IV).unwrap()),
                ),
                (
                    "Ofb",
                    format!("{:?}", Ofb::new(aes.clone(), &IV).unwrap()),
                    format!("{:#?}", Ofb::new(aes.clone(), &IV).unwrap()),
                ),
            ];
            for (what, plain, pretty) in texts {
                let what = format!("{what} on {backend} with a {len}-byte key");
                assert_no_key(&what, &plain, key);
                assert_no_key(&what, &pretty, key);
            }
            assert!(
                format!("{aes:?}").contains(backend.name()),
                "{aes:?} does not name its backend"
            );
        }
    }
}

#[test]
fn debug_output_after_use_never_contains_the_key() {
    // Streams hold keystream state after a partial block; Debug must not show it either.
    let key = &SECRET[..16];
    for (backend, runnable) in common::backends(Algorithm::Aes) {
        if runnable.is_err() {
            continue;
        }
        let aes = Aes::with_backend(key, backend).unwrap();
        let mut ctr = Ctr::new(aes.clone(), &IV).unwrap();
        let mut ofb = Ofb::new(aes.clone(), &IV).unwrap();
        let mut cfb = Cfb128::new(aes.clone(), &IV).unwrap();
        let mut buf = [0u8; 7];
        ctr.apply_keystream(&mut buf).unwrap();
        ofb.apply_keystream(&mut buf);
        cfb.encrypt(&mut buf);
        for (what, text) in [
            ("Ctr", format!("{ctr:#?}")),
            ("Ofb", format!("{ofb:#?}")),
            ("Cfb128", format!("{cfb:#?}")),
        ] {
            assert_no_key(&format!("used {what} on {backend}"), &text, key);
        }
    }
}

// ---------------------------------------------------------------- XTS

fn xts_soft() -> hwcrypt::modes::Xts {
    let key: Vec<u8> = (0u8..32).collect();
    hwcrypt::modes::Xts::with_backend(&key, Backend::Soft).expect("soft always runs")
}

#[test]
fn xts_bad_key_lengths_and_equal_halves() {
    if !mask_is_valid() {
        return;
    }
    use hwcrypt::modes::Xts;
    for len in [0, 16, 24, 31, 33, 40, 47, 63, 65, 128] {
        let e = Xts::new(&vec![0x11; len]).unwrap_err();
        assert_eq!(
            e,
            Error::InvalidKeyLength {
                expected: "32, 48 or 64",
                got: len
            }
        );
        assert_one_line(&e);
    }
    for len in [32, 48, 64] {
        for backend in [Backend::Soft, Backend::AesNi, Backend::VaesAvx2] {
            let mut key = vec![0x5a; len];
            key[0] = 1;
            key[len / 2] = 1;
            if registry::check(Algorithm::AesXts, backend).is_err() {
                continue;
            }
            let e = Xts::with_backend(&key, backend).unwrap_err();
            assert_eq!(e, Error::XtsEqualKeyHalves, "{backend} {len}");
            assert_one_line(&e);
            key[len - 1] ^= 1;
            assert!(Xts::with_backend(&key, backend).is_ok());
        }
    }
}

#[test]
fn xts_short_and_long_units_are_rejected_untouched() {
    if !mask_is_valid() {
        return;
    }
    use hwcrypt::modes::MAX_DATA_UNIT;
    let xts = xts_soft();
    let tweak = [3u8; 16];
    for len in [0usize, 1, 15] {
        let mut buf = vec![0x77; len];
        let want = Error::InvalidDataUnitLength { got: len };
        assert_eq!(xts.encrypt(&tweak, &mut buf), Err(want.clone()));
        assert_eq!(xts.decrypt(&tweak, &mut buf), Err(want.clone()));
        assert_eq!(xts.encrypt_sector(9, &mut buf), Err(want.clone()));
        assert_eq!(xts.decrypt_sector(9, &mut buf), Err(want.clone()));
        let mut out = vec![0u8; len];
        assert_eq!(xts.encrypt_to(&tweak, &buf, &mut out), Err(want.clone()));
        assert_eq!(xts.decrypt_sector_to(1, &buf, &mut out), Err(want.clone()));
        assert_eq!(xts.encrypt_units(len, 0, &mut buf), Err(want.clone()));
        assert!(buf.iter().all(|&b| b == 0x77) && out.iter().all(|&b| b == 0));
        assert_one_line(&want);
    }
    let mut big = vec![0u8; MAX_DATA_UNIT + 1];
    assert_eq!(
        xts.encrypt(&tweak, &mut big),
        Err(Error::InvalidDataUnitLength {
            got: MAX_DATA_UNIT + 1
        })
    );
    assert!(big.iter().all(|&b| b == 0));
    assert!(xts.encrypt(&tweak, &mut big[..MAX_DATA_UNIT]).is_ok());
}

#[test]
fn xts_bulk_buffer_not_a_multiple_of_the_unit() {
    if !mask_is_valid() {
        return;
    }
    let xts = xts_soft();
    for (unit, len) in [
        (512usize, 513usize),
        (512, 511),
        (16, 40),
        (4096, 4096 * 3 + 16),
    ] {
        let mut buf = vec![0x42; len];
        let want = Error::NotUnitAligned {
            len,
            unit_size: unit,
        };
        assert_eq!(xts.encrypt_units(unit, 0, &mut buf), Err(want.clone()));
        assert_eq!(xts.decrypt_units(unit, 0, &mut buf), Err(want.clone()));
        let mut out = vec![0u8; len];
        assert_eq!(
            xts.encrypt_units_to(unit, 0, &buf, &mut out),
            Err(want.clone())
        );
        assert!(buf.iter().all(|&b| b == 0x42) && out.iter().all(|&b| b == 0));
        assert_one_line(&want);
    }
    // An empty buffer is zero units.
    assert_eq!(xts.encrypt_units(512, 0, &mut []), Ok(()));
}

#[test]
fn xts_separate_buffers_of_different_lengths() {
    if !mask_is_valid() {
        return;
    }
    let xts = xts_soft();
    let input = [0u8; 64];
    let mut out = [0u8; 63];
    let want = Error::LengthMismatch {
        input: 64,
        output: 63,
    };
    assert_eq!(
        xts.encrypt_to(&[0; 16], &input, &mut out),
        Err(want.clone())
    );
    assert_eq!(
        xts.decrypt_to(&[0; 16], &input, &mut out),
        Err(want.clone())
    );
    assert_eq!(
        xts.encrypt_sector_to(0, &input, &mut out),
        Err(want.clone())
    );
    assert_eq!(xts.decrypt_units_to(16, 0, &input, &mut out), Err(want));
    assert!(out.iter().all(|&b| b == 0));
}

#[test]
fn xts_debug_hides_keys() {
    if !mask_is_valid() {
        return;
    }
    let text = format!("{:?}", xts_soft());
    assert!(text.contains("Xts") && text.contains("soft"), "{text}");
    assert!(
        !text.contains("0, 1, 2") && !text.contains("01020304"),
        "{text}"
    );
}

#[test]
fn xts_without_avx512f_falls_back_from_vaes_avx512() {
    run_helper("-avx512f", "helper_xts_cpu_mask_no_avx512f");
}

#[test]
#[ignore = "helper: run in a child process by xts_without_avx512f_falls_back_from_vaes_avx512"]
fn helper_xts_cpu_mask_no_avx512f() {
    use hwcrypt::modes::Xts;
    if !spawned_with("-avx512f") {
        return;
    }
    let features = hwcrypt::cpu::features().unwrap();
    assert!(!features.contains(Features::of(&[Feature::Avx512f])));
    let default = registry::default_backend(Algorithm::AesXts).unwrap();
    assert_ne!(default, Backend::VaesAvx512);
    assert_eq!(default, registry::select(Algorithm::AesXts, features));
    if features.contains(Features::of(registry::VAES_AVX2_FEATURES)) {
        assert_eq!(default, Backend::VaesAvx2);
    }
    let key: Vec<u8> = (0..64).collect();
    assert_eq!(Xts::new(&key).unwrap().backend(), default);
    let e = Xts::with_backend(&key, Backend::VaesAvx512).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::BackendUnavailable { backend: "vaes-avx512", missing, .. }
                if missing.contains("avx512f")
        ),
        "{e:?}"
    );
    assert_one_line(&e);
    // AES-GCM falls back the same way.
    let gcm = registry::default_backend(Algorithm::AesGcm).unwrap();
    assert_ne!(gcm, Backend::VaesAvx512);
    if features.contains(Features::of(registry::GCM_VAES_AVX2_FEATURES)) {
        assert_eq!(gcm, Backend::VaesAvx2);
    }
    assert!(hwcrypt::gcm::AesGcm::with_backend(&[0; 16], Backend::VaesAvx512).is_err());
    // The other AES modes fall back the same way.
    let default = registry::default_backend(Algorithm::Aes).unwrap();
    assert_ne!(default, Backend::VaesAvx512);
    assert_eq!(default, registry::select(Algorithm::Aes, features));
    if features.contains(Features::of(registry::VAES_AVX2_FEATURES)) {
        assert_eq!(default, Backend::VaesAvx2);
    }
    assert_eq!(Aes::new(&key[..32]).unwrap().backend(), default);
    let e = Aes::with_backend(&key[..16], Backend::VaesAvx512).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::BackendUnavailable { backend: "vaes-avx512", missing, .. }
                if missing.contains("avx512f")
        ),
        "{e:?}"
    );
    println!("HELPER CHECKED helper_xts_cpu_mask_no_avx512f");
}
