//! Guard pages: every mode of every backend this CPU runs, on buffers that
//! touch an unmapped (`PROT_NONE`) page, so a load or store one byte past
//! either end of a buffer (an overlapping tail load, a masked zmm tail that
//! is not masked, a stray 16-byte store) faults instead of passing
//! silently. One trial per algorithm family and backend
//! (`guard::aes::vaes-avx512`).
//!
//! Cases, for every length 0..=`HWCRYPT_GUARD_MAX` (512 in `cargo test`,
//! to stay fast; `.ci/steps/16-asan.sh` sets 1024):
//! in place with the buffer ending at a guard page and starting at one;
//! separate input and output, each ending or starting at a guard page (four
//! pairs). Then, for input and output offsets 0..=63 from a page start
//! (lengths 0..=300 in steps of 7), one buffer touching its guard page and
//! the other at the offset. Every length's alignment against the page
//! follows from its end touching the guard. A fault kills the process with
//! the case printed (a SIGSEGV handler writes it); `.ci/steps/16-asan.sh`
//! also runs this under AddressSanitizer.

use hwcrypt::aead::Aead;
use hwcrypt::aes::{Aes, CounterWidth};
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use hwcrypt::gcm::AesGcm;
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb, Xts};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

const PAGE: usize = 4096;
/// Data pages between the two guard pages of a region.
const DATA_PAGES: usize = 2;

/// `[guard page][DATA_PAGES pages, read-write][guard page]`, from mmap.
struct Guarded {
    base: *mut u8,
}

impl Guarded {
    fn new() -> Guarded {
        let total = (DATA_PAGES + 2) * PAGE;
        // SAFETY: an anonymous private mapping of `total` bytes; the result
        // is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap failed");
        let base = base.cast::<u8>();
        // SAFETY: both ranges are whole pages inside the mapping above.
        let (a, b) = unsafe {
            (
                libc::mprotect(base.cast(), PAGE, libc::PROT_NONE),
                libc::mprotect(
                    base.add((DATA_PAGES + 1) * PAGE).cast(),
                    PAGE,
                    libc::PROT_NONE,
                ),
            )
        };
        assert!(a == 0 && b == 0, "mprotect failed");
        Guarded { base }
    }

    /// `len` bytes starting `offset` bytes after the leading guard page.
    fn at(&mut self, offset: usize, len: usize) -> &mut [u8] {
        assert!(offset + len <= DATA_PAGES * PAGE);
        // SAFETY: the range lies in the read-write pages of the mapping,
        // which lives as long as `self`; `&mut self` makes it unique.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(PAGE + offset), len) }
    }

    /// `len` bytes ending exactly at the trailing guard page.
    fn ending(&mut self, len: usize) -> &mut [u8] {
        self.at(DATA_PAGES * PAGE - len, len)
    }

    /// `len` bytes starting exactly at the leading guard page.
    fn starting(&mut self, len: usize) -> &mut [u8] {
        self.at(0, len)
    }

    /// A buffer touching its guard page at the end (`edge` false) or start.
    fn edge(&mut self, at_start: bool, len: usize) -> &mut [u8] {
        if at_start {
            self.starting(len)
        } else {
            self.ending(len)
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.base.cast(), (DATA_PAGES + 2) * PAGE);
        }
    }
}

// ---------------------------------------------------------------- fault reporting

/// The case being run, for the SIGSEGV handler (trials run one at a time).
static CASE: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];
static OPS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn set_case(op: usize, len: usize, placement: usize, offset: usize) {
    for (slot, v) in CASE.iter().zip([op, len, placement, offset]) {
        slot.store(v, Ordering::Relaxed);
    }
}

extern "C" fn on_fault(sig: libc::c_int) {
    let v: Vec<usize> = CASE.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    let ops = OPS.try_lock().map(|o| o.clone()).unwrap_or_default();
    let name = ops.get(v[0]).map(String::as_str).unwrap_or("?");
    let msg = format!(
        "\nguard page fault (signal {sig}) in {name}: length {}, placement {} ({}), offset {}\n",
        v[1],
        v[2],
        PLACEMENTS.get(v[2]).copied().unwrap_or("offset sweep"),
        v[3]
    );
    // SAFETY: write(2) to stderr and _exit: the process is going down.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(139);
    }
}

fn install_handler() {
    // SAFETY: installs a plain handler for SIGSEGV and SIGBUS.
    unsafe {
        libc::signal(libc::SIGSEGV, on_fault as *const () as libc::sighandler_t);
        libc::signal(libc::SIGBUS, on_fault as *const () as libc::sighandler_t);
    }
}

const PLACEMENTS: [&str; 6] = [
    "in place, ends at the guard",
    "in place, starts at the guard",
    "input and output end at guards",
    "input ends, output starts at a guard",
    "input starts, output ends at a guard",
    "input and output start at guards",
];

// ---------------------------------------------------------------- operations

/// One operation: in place when `input` is `None`, else input -> output.
type Op<'a> = Box<dyn Fn(Option<&[u8]>, &mut [u8]) -> Result<(), Error> + 'a>;

/// An operation with its name and the lengths it takes (`len` -> the
/// length to run, e.g. whole blocks for ECB and CBC).
type Named<'a> = (String, Op<'a>, fn(usize) -> usize);

/// Whole blocks of `len` (ECB, CBC) or none for empty.
fn blocks(len: usize) -> usize {
    len / 16 * 16
}

#[allow(clippy::vec_init_then_push)]
fn aes_ops(aes: &Aes) -> Vec<Named<'_>> {
    let iv = [0x33u8; 16];
    let all = |n: usize| n;
    let mut v: Vec<Named<'_>> = Vec::new();
    v.push((
        "ECB encrypt".into(),
        Box::new(move |i, o| match i {
            None => Ecb::new(aes).encrypt(o),
            Some(i) => Ecb::new(aes).encrypt_to(i, o),
        }),
        blocks,
    ));
    v.push((
        "ECB decrypt".into(),
        Box::new(move |i, o| match i {
            None => Ecb::new(aes).decrypt(o),
            Some(i) => Ecb::new(aes).decrypt_to(i, o),
        }),
        blocks,
    ));
    v.push((
        "CBC encrypt".into(),
        Box::new(move |i, o| match i {
            None => Cbc::new(aes, &iv)?.encrypt(o),
            Some(i) => Cbc::new(aes, &iv)?.encrypt_to(i, o),
        }),
        blocks,
    ));
    v.push((
        "CBC encrypt_many".into(),
        // Multi-buffer CBC: the buffer cut into up to 17 streams of 1-5
        // blocks (unequal, so the lanes finish at different times), the
        // last one ending where the buffer ends. In place only: a separate
        // input is copied over first.
        Box::new(move |i, o| {
            if let Some(i) = i {
                o.copy_from_slice(i);
            }
            let mut parts: Vec<&mut [u8]> = Vec::new();
            let mut rest = o;
            while !rest.is_empty() && parts.len() < 16 {
                let take = ((parts.len() * 7 % 5 + 1) * 16).min(rest.len());
                let (part, tail) = rest.split_at_mut(take);
                parts.push(part);
                rest = tail;
            }
            if !rest.is_empty() {
                parts.push(rest);
            }
            let mut ciphers = Vec::with_capacity(parts.len());
            for _ in 0..parts.len() {
                ciphers.push(Cbc::new(aes, &iv)?);
            }
            Cbc::encrypt_many(ciphers.iter_mut().zip(parts))
        }),
        blocks,
    ));
    v.push((
        "CBC decrypt".into(),
        Box::new(move |i, o| match i {
            None => Cbc::new(aes, &iv)?.decrypt(o),
            Some(i) => Cbc::new(aes, &iv)?.decrypt_to(i, o),
        }),
        blocks,
    ));
    for (name, width) in [
        ("CTR", CounterWidth::Full128),
        ("CTR32", CounterWidth::Low32),
    ] {
        v.push((
            name.into(),
            Box::new(move |i, o| {
                let mut c = Ctr::with_width(aes, &iv, width)?;
                match i {
                    None => {
                        c.apply_keystream(o)?;
                        Ok(())
                    }
                    Some(i) => c.apply_keystream_to(i, o),
                }
            }),
            all,
        ));
    }
    v.push((
        "CFB8 encrypt".into(),
        Box::new(move |i, o| match i {
            None => {
                Cfb8::new(aes, &iv)?.encrypt(o);
                Ok(())
            }
            Some(i) => Cfb8::new(aes, &iv)?.encrypt_to(i, o),
        }),
        all,
    ));
    v.push((
        "CFB128 encrypt".into(),
        Box::new(move |i, o| match i {
            None => {
                Cfb128::new(aes, &iv)?.encrypt(o);
                Ok(())
            }
            Some(i) => Cfb128::new(aes, &iv)?.encrypt_to(i, o),
        }),
        all,
    ));
    v.push((
        "CFB128 decrypt".into(),
        Box::new(move |i, o| match i {
            None => {
                Cfb128::new(aes, &iv)?.decrypt(o);
                Ok(())
            }
            Some(i) => Cfb128::new(aes, &iv)?.decrypt_to(i, o),
        }),
        all,
    ));
    v.push((
        "OFB".into(),
        Box::new(move |i, o| match i {
            None => {
                Ofb::new(aes, &iv)?.apply_keystream(o);
                Ok(())
            }
            Some(i) => Ofb::new(aes, &iv)?.apply_keystream_to(i, o),
        }),
        all,
    ));
    v
}

/// Runs every placement of `ops` for every length; the number of calls.
fn sweep(ops: &[Named<'_>], label: &str) -> Result<usize, String> {
    if let Ok(mut names) = OPS.lock() {
        *names = ops.iter().map(|(n, _, _)| format!("{label} {n}")).collect();
    }
    let max: usize = std::env::var("HWCRYPT_GUARD_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(512)
        .min(PAGE);
    let mut a = Guarded::new();
    let mut b = Guarded::new();
    let mut calls = 0;
    for (k, (name, op, shape)) in ops.iter().enumerate() {
        let id = k;
        let mut lens: Vec<usize> = (0..=max).map(shape).collect();
        lens.dedup();
        for &len in &lens {
            for (p, (in_start, out_start)) in [
                (None, false),
                (None, true),
                (Some(false), false),
                (Some(false), true),
                (Some(true), false),
                (Some(true), true),
            ]
            .into_iter()
            .enumerate()
            {
                set_case(id, len, p, 0);
                let r = match in_start {
                    None => op(None, b.edge(out_start, len)),
                    Some(s) => {
                        let input = a.edge(s, len);
                        input.fill(0xa5);
                        op(Some(input), b.edge(out_start, len))
                    }
                };
                r.map_err(|e| format!("{name}, length {len}, {}: {e}", PLACEMENTS[p]))?;
                calls += 1;
            }
        }
        // Offsets: one buffer touching a guard page, the other `off` bytes
        // after a page start.
        for off in 0..64 {
            for len in (0..=max.min(300)).step_by(7).map(shape) {
                set_case(id, len, 6, off);
                let input = a.ending(len);
                op(Some(input), b.at(off, len))
                    .map_err(|e| format!("{name}, length {len}, output offset {off}: {e}"))?;
                let input = a.at(off, len);
                op(Some(input), b.ending(len))
                    .map_err(|e| format!("{name}, length {len}, input offset {off}: {e}"))?;
                calls += 2;
            }
        }
    }
    Ok(calls)
}

fn aead_ops<'a, A: Aead>(name: &str, k: &'a A, nonce: &'a [u8]) -> Vec<Named<'a>> {
    let all = |n: usize| n;
    vec![
        (
            format!("{name} seal"),
            Box::new(move |i: Option<&[u8]>, o: &mut [u8]| match i {
                None => k.seal_in_place_detached(nonce, b"aad", o).map(drop),
                Some(i) => k.seal_detached(nonce, b"aad", i, o).map(drop),
            }) as Op<'a>,
            all as fn(usize) -> usize,
        ),
        (
            format!("{name} open (tag fails: decrypt, then wipe)"),
            Box::new(move |i: Option<&[u8]>, o: &mut [u8]| {
                let r = match i {
                    None => k.open_in_place_detached(nonce, b"aad", o, &[0; 16]),
                    Some(i) => k.open_detached(nonce, b"aad", i, &[0; 16], o),
                };
                match r {
                    Err(Error::AuthenticationFailed) => Ok(()),
                    Ok(()) => Err(Error::AuthenticationFailed),
                    Err(e) => Err(e),
                }
            }),
            all,
        ),
    ]
}

fn run_family(family: &str, backend: Backend) -> Result<(), String> {
    let label = backend.name();
    let err = |e: Error| e.to_string();
    let calls = match family {
        "aes" => {
            let mut calls = 0;
            for key_len in [16, 32] {
                let aes = Aes::with_backend(&vec![7u8; key_len], backend).map_err(err)?;
                let ops = aes_ops(&aes);
                calls += sweep(&ops, &format!("{label} AES-{}", key_len * 8))?;
            }
            calls
        }
        "gcm" => {
            let k = AesGcm::with_backend(&[7u8; 16], backend).map_err(err)?;
            let ops = aead_ops("AES-128-GCM", &k, &[1; 12]);
            sweep(&ops, label)?
        }
        "chacha20poly1305" => {
            let c = ChaCha20Poly1305::with_backend(&[7u8; 32], backend).map_err(err)?;
            let x = XChaCha20Poly1305::with_backend(&[7u8; 32], backend).map_err(err)?;
            let mut ops = aead_ops("ChaCha20-Poly1305", &c, &[1; 12]);
            ops.extend(aead_ops("XChaCha20-Poly1305", &x, &[1; 24]));
            sweep(&ops, label)?
        }
        "xts" => {
            let mut key = [7u8; 64];
            key[40] = 9;
            let x = Xts::with_backend(&key, backend).map_err(err)?;
            let t = [3u8; 16];
            let xts_len = |n: usize| n.max(16);
            let ops: Vec<Named<'_>> = vec![
                (
                    "AES-256-XTS encrypt".into(),
                    Box::new(|i: Option<&[u8]>, o: &mut [u8]| match i {
                        None => x.encrypt(&t, o),
                        Some(i) => x.encrypt_to(&t, i, o),
                    }),
                    xts_len,
                ),
                (
                    "AES-256-XTS decrypt".into(),
                    Box::new(|i: Option<&[u8]>, o: &mut [u8]| match i {
                        None => x.decrypt(&t, o),
                        Some(i) => x.decrypt_to(&t, i, o),
                    }),
                    xts_len,
                ),
            ];
            sweep(&ops, label)?
        }
        _ => unreachable!(),
    };
    println!("guard pages: {family} on {backend}: {calls} calls, no fault");
    Ok(())
}

fn main() {
    let mut args = Arguments::from_args();
    // One trial at a time: the fault handler reports a single current case.
    args.test_threads = Some(1);
    let mut preamble = vec![common::cpu_line()];
    let mut trials = Vec::new();
    for (family, algorithm) in [
        ("aes", Algorithm::Aes),
        ("gcm", Algorithm::AesGcm),
        ("chacha20poly1305", Algorithm::ChaCha20Poly1305),
        ("xts", Algorithm::AesXts),
    ] {
        let backends = common::backends(algorithm);
        preamble.extend(common::skip_lines(algorithm, &backends));
        for (backend, runnable) in backends {
            trials.push(
                Trial::test(format!("guard::{family}::{backend}"), move || {
                    run_family(family, backend).map_err(Failed::from)
                })
                .with_ignored_flag(runnable.is_err()),
            );
        }
    }
    common::announce(&preamble, args.list);
    install_handler();
    libtest_mimic::run(&args, trials).exit();
}
