//! Single-cell ChaCha20-Poly1305 throughput probe, for interleaving with
//! `openssl speed -elapsed -evp chacha20-poly1305`:
//!
//! `chacha-throughput ALG BACKEND SIZE [REPS] [MILLIS] [seal|open]` prints
//! the median GB/s (1e9 B/s) over REPS timed runs of MILLIS each, sealing
//! (or opening) whole messages of SIZE bytes in place, no AAD, the key made
//! once and a fresh nonce per message. ALG is `chacha20-poly1305`,
//! `xchacha20-poly1305`, `chacha20` (the bare keystream, `chacha20_xor`)
//! or `stream` (one ChaCha20-Poly1305 message sealed by SIZE-byte pieces
//! through `ChaCha20Poly1305Stream::encrypt`, as `openssl speed -evp`
//! drives the provider);
//! BACKEND a hwcrypt backend name, or `ring` (ring 0.17's
//! ChaCha20-Poly1305, per message, when built with `--features ring`).
//! A run during which the thread was preempted (on-CPU time under 90% of
//! wall time, from `/proc/thread-self/schedstat`) is timed by its on-CPU
//! time instead: the machine is a shared VM. `open` includes copying the
//! ciphertext into the buffer before each call.

use hwcrypt::Backend;
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, ChaCha20Poly1305Stream, XChaCha20Poly1305};
use hwcrypt_bench::probe_gbps;
use std::hint::black_box;
use std::time::Duration;

/// One message operation: seal or open `buf` in place, nonce from `counter`.
type Op<'a> = Box<dyn FnMut(&mut [u8], u64) + 'a>;

/// The seal and open operations of `A` (open re-copies `sealed` first).
fn ops<'a, A: Aead + 'a>(
    a: &'a A,
    sealed: Vec<u8>,
    tag: Vec<u8>,
    nonce0: Vec<u8>,
) -> (Op<'a>, Op<'a>) {
    let n = nonce0.len();
    let seal: Op<'a> = Box::new(move |buf, counter| {
        // On the stack: an allocation per message would be timed too.
        let mut nonce = [0u8; 24];
        nonce[n - 8..n].copy_from_slice(&counter.to_be_bytes());
        black_box(
            a.seal_in_place_detached(&nonce[..n], &[], black_box(buf))
                .unwrap(),
        );
    });
    let open: Op<'a> = Box::new(move |buf, _| {
        buf.copy_from_slice(&sealed);
        a.open_in_place_detached(&nonce0, &[], black_box(buf), &tag)
            .unwrap();
    });
    (seal, open)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: chacha-throughput ALG BACKEND SIZE [REPS] [MILLIS] [seal|open]");
        std::process::exit(2);
    }
    let alg = args[0].as_str();
    let size: usize = args[2].parse().unwrap();
    let reps: usize = args.get(3).map_or(5, |s| s.parse().unwrap());
    let window = Duration::from_millis(args.get(4).map_or(200, |s| s.parse().unwrap()));
    let open = args.get(5).is_some_and(|s| s == "open");
    let key: Vec<u8> = (0..32).map(|i| i as u8).collect();
    let mut buf = vec![0u8; size];

    // The keys are declared first: the operations borrow them.
    let chacha;
    let xchacha;
    #[cfg(feature = "ring")]
    let ring_key;
    let (mut seal_op, mut open_op): (Op<'_>, Op<'_>);
    if args[1] == "ring" {
        #[cfg(feature = "ring")]
        {
            use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};
            assert_eq!(alg, "chacha20-poly1305", "ring has no XChaCha20-Poly1305");
            ring_key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &key).unwrap());
            let k = &ring_key;
            let mut sealed = vec![0u8; size];
            let tag = k
                .seal_in_place_separate_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::empty(),
                    &mut sealed,
                )
                .unwrap();
            seal_op = Box::new(move |buf, counter| {
                let mut nonce = [0u8; 12];
                nonce[4..].copy_from_slice(&counter.to_be_bytes());
                let _tag = black_box(
                    k.seal_in_place_separate_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::empty(),
                        black_box(buf),
                    )
                    .unwrap(),
                );
            });
            let mut tmp = vec![0u8; size + 16];
            open_op = Box::new(move |buf, _| {
                tmp[..size].copy_from_slice(&sealed);
                tmp[size..].copy_from_slice(tag.as_ref());
                black_box(
                    k.open_in_place(
                        Nonce::assume_unique_for_key([0; 12]),
                        Aad::empty(),
                        &mut tmp,
                    )
                    .unwrap(),
                );
                black_box(&buf);
            });
        }
        #[cfg(not(feature = "ring"))]
        {
            eprintln!("chacha-throughput: built without the `ring` feature");
            std::process::exit(2);
        }
    } else {
        let backend: Backend = args[1].parse().unwrap();
        match alg {
            "chacha20-poly1305" => {
                chacha = ChaCha20Poly1305::with_backend(&key, backend).unwrap();
                let nonce = vec![0u8; 12];
                let tag = chacha
                    .seal_in_place_detached(&nonce, &[], &mut buf)
                    .unwrap();
                (seal_op, open_op) = ops(&chacha, buf.clone(), tag.to_vec(), nonce);
            }
            "xchacha20-poly1305" => {
                xchacha = XChaCha20Poly1305::with_backend(&key, backend).unwrap();
                let nonce = vec![0u8; 24];
                let tag = xchacha
                    .seal_in_place_detached(&nonce, &[], &mut buf)
                    .unwrap();
                (seal_op, open_op) = ops(&xchacha, buf.clone(), tag.to_vec(), nonce);
            }
            "chacha20" => {
                // The bare keystream (no MAC): `chacha20_xor` from block 1.
                seal_op = Box::new(move |buf, counter| {
                    let mut nonce = [0u8; 12];
                    nonce[4..].copy_from_slice(&counter.to_be_bytes());
                    hwcrypt::chacha20poly1305::chacha20_xor(
                        backend,
                        &[7; 32],
                        &nonce,
                        1,
                        black_box(buf),
                    )
                    .unwrap();
                });
                open_op = Box::new(|_, _| unreachable!("chacha20 has no open"));
            }
            "stream" => {
                // What `openssl speed -evp chacha20-poly1305` does through
                // the provider: one message, `EVP_EncryptUpdate` of SIZE
                // bytes again and again (a fresh message every 1 GiB).
                chacha = ChaCha20Poly1305::with_backend(&key, backend).unwrap();
                let mut stream = ChaCha20Poly1305Stream::new(&chacha);
                let mut sent = u64::MAX;
                seal_op = Box::new(move |buf, counter| {
                    if sent >= 1 << 30 {
                        let mut nonce = [0u8; 12];
                        nonce[4..].copy_from_slice(&counter.to_be_bytes());
                        stream.start(&nonce).unwrap();
                        sent = 0;
                    }
                    stream.encrypt(black_box(buf)).unwrap();
                    sent += buf.len() as u64;
                });
                open_op = Box::new(|_, _| unreachable!("stream: seal only"));
            }
            _ => {
                eprintln!("chacha-throughput: unknown algorithm {alg}");
                std::process::exit(2);
            }
        }
    }
    let op = if open { &mut open_op } else { &mut seal_op };
    // `CHACHA_BUF_OFFSET=N`: the message starts N bytes into a larger
    // buffer (where it sits modulo 4 KiB against the kernel's stack).
    let offset: usize = std::env::var("CHACHA_BUF_OFFSET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut backing = vec![0u8; size + offset];
    backing[offset..].copy_from_slice(&buf);
    let buf = &mut backing[offset..];
    let mut counter = 0u64;
    let (med, lo, hi) = probe_gbps(reps, window, 64 * size as u64, || {
        for _ in 0..64 {
            counter += 1;
            op(buf, counter);
        }
    });
    let what = if open { "open" } else { "seal" };
    println!(
        "{alg} {what} {} {size} B: {med:.3} GB/s (min {lo:.3}, max {hi:.3})",
        args[1]
    );
}
