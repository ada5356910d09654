//! The streaming AEADs against the one-shot API, per backend:
//!
//! `stream-throughput [REPS] [MILLIS] [ALG...]` seals and opens messages
//! with a 13-byte AAD (a TLS record header) both ways, the one-shot
//! `seal_in_place_detached` / `open_in_place_detached` and the stream
//! (`start`, `aad`, `encrypt`/`decrypt` per piece, `finish`/`verify`), for
//! these shapes: a 16 KiB message in one piece (in place, and between
//! separate buffers: `seal_detached` / `encrypt_to`) and in 16 pieces of
//! 1 KiB, a 1 KiB message in one piece, and a 1 MiB message in 16 KiB
//! pieces; messages of 256 and 16 bytes in one piece (the per-message
//! cost). In-place opens copy the ciphertext back first, both APIs alike. ALG is
//! `aes-128-gcm`, `aes-256-gcm` or `chacha20-poly1305` (default: all three)
//! on every backend this (masked) CPU runs.
//!
//! Each of REPS rounds (default 7) times every cell for MILLIS (default 100)
//! in turn, so load from other processes falls on all cells alike; a cell's
//! figure is the median GB/s (1e9 B/s) of its rounds, and the ratio is
//! stream / one-shot of those medians. A run during which the thread was
//! preempted is timed by its on-CPU time (see [`hwcrypt_bench::probe_gbps`]).

use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{ChaCha20Poly1305, ChaCha20Poly1305Stream};
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt_bench::probe_gbps;
use std::hint::black_box;
use std::time::Duration;

const AAD: [u8; 13] = [0x17; 13];
const NONCE: [u8; 12] = [0x42; 12];

/// (message bytes, piece bytes, separate input and output buffers).
const SHAPES: [(usize, usize, bool); 7] = [
    (16 << 10, 16 << 10, false),
    (16 << 10, 16 << 10, true),
    (16 << 10, 1 << 10, false),
    (1 << 10, 1 << 10, false),
    (1 << 20, 16 << 10, false),
    (256, 256, false),
    (16, 16, false),
];

/// One algorithm on one backend, both APIs.
trait Subject {
    fn seal(&self, buf: &mut [u8]) -> Vec<u8>;
    fn open(&self, buf: &mut [u8], tag: &[u8]);
    fn seal_to(&self, input: &[u8], output: &mut [u8]);
    fn open_to(&self, input: &[u8], output: &mut [u8], tag: &[u8]);
    fn stream_seal(&mut self, buf: &mut [u8], piece: usize);
    fn stream_open(&mut self, buf: &mut [u8], piece: usize, tag: &[u8]);
    fn stream_seal_to(&mut self, input: &[u8], output: &mut [u8]);
    fn stream_open_to(&mut self, input: &[u8], output: &mut [u8], tag: &[u8]);
}

struct Gcm(AesGcm, AesGcmStream<AesGcm>);
struct Chacha(ChaCha20Poly1305, ChaCha20Poly1305Stream<ChaCha20Poly1305>);

macro_rules! subject {
    ($ty:ident) => {
        impl Subject for $ty {
            fn seal(&self, buf: &mut [u8]) -> Vec<u8> {
                let tag = self.0.seal_in_place_detached(&NONCE, &AAD, buf).unwrap();
                AsRef::<[u8]>::as_ref(&tag).to_vec()
            }
            fn open(&self, buf: &mut [u8], tag: &[u8]) {
                self.0
                    .open_in_place_detached(&NONCE, &AAD, buf, tag)
                    .unwrap();
            }
            fn seal_to(&self, input: &[u8], output: &mut [u8]) {
                black_box(self.0.seal_detached(&NONCE, &AAD, input, output).unwrap());
            }
            fn open_to(&self, input: &[u8], output: &mut [u8], tag: &[u8]) {
                self.0
                    .open_detached(&NONCE, &AAD, input, tag, output)
                    .unwrap();
            }
            fn stream_seal_to(&mut self, input: &[u8], output: &mut [u8]) {
                let s = &mut self.1;
                s.start(&NONCE).unwrap();
                s.aad(&AAD).unwrap();
                s.encrypt_to(input, output).unwrap();
                black_box(s.finish().unwrap());
            }
            fn stream_open_to(&mut self, input: &[u8], output: &mut [u8], tag: &[u8]) {
                let s = &mut self.1;
                s.start(&NONCE).unwrap();
                s.aad(&AAD).unwrap();
                s.decrypt_to(input, output).unwrap();
                s.verify(tag).unwrap();
            }
            fn stream_seal(&mut self, buf: &mut [u8], piece: usize) {
                let s = &mut self.1;
                s.start(&NONCE).unwrap();
                s.aad(&AAD).unwrap();
                for p in buf.chunks_mut(piece) {
                    s.encrypt(p).unwrap();
                }
                black_box(s.finish().unwrap());
            }
            fn stream_open(&mut self, buf: &mut [u8], piece: usize, tag: &[u8]) {
                let s = &mut self.1;
                s.start(&NONCE).unwrap();
                s.aad(&AAD).unwrap();
                for p in buf.chunks_mut(piece) {
                    s.decrypt(p).unwrap();
                }
                s.verify(tag).unwrap();
            }
        }
    };
}
subject!(Gcm);
subject!(Chacha);

/// One cell: its label and the GB/s of each round.
struct Cell {
    label: String,
    samples: Vec<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps: usize = args.first().map_or(7, |s| s.parse().expect("REPS"));
    let window = Duration::from_millis(args.get(1).map_or(100, |s| s.parse().expect("MILLIS")));
    let algs: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        vec![
            "aes-128-gcm".into(),
            "aes-256-gcm".into(),
            "chacha20-poly1305".into(),
        ]
    };
    let features = hwcrypt::cpu::features().expect("HWCRYPT_CPU");

    let mut subjects: Vec<(String, Box<dyn Subject>)> = Vec::new();
    for alg in &algs {
        let (algorithm, key_len) = match alg.as_str() {
            "aes-128-gcm" => (Algorithm::AesGcm, 16),
            "aes-256-gcm" => (Algorithm::AesGcm, 32),
            "chacha20-poly1305" => (Algorithm::ChaCha20Poly1305, 32),
            other => panic!("unknown algorithm {other}"),
        };
        let key = vec![0x5c; key_len];
        for backend in registry::runnable(algorithm, features) {
            let s: Box<dyn Subject> = if algorithm == Algorithm::AesGcm {
                let k = AesGcm::with_backend(&key, backend).unwrap();
                Box::new(Gcm(k.clone(), AesGcmStream::new(k)))
            } else {
                let k = ChaCha20Poly1305::with_backend(&key, backend).unwrap();
                Box::new(Chacha(k.clone(), ChaCha20Poly1305Stream::new(k)))
            };
            subjects.push((format!("{alg} {backend}"), s));
        }
    }

    // Cells in order: per subject, per shape, per op: one-shot then stream.
    let mut cells: Vec<Cell> = Vec::new();
    for (name, _) in &subjects {
        for (msg, piece, sep) in SHAPES {
            for op in ["seal", "open"] {
                for api in ["one-shot", "stream"] {
                    let to = if sep { " (_to)" } else { "" };
                    cells.push(Cell {
                        label: format!("{name} {op}{to} {msg} B in {piece} B pieces {api}"),
                        samples: Vec::new(),
                    });
                }
            }
        }
    }
    for _ in 0..reps {
        let mut c = 0;
        for (_, s) in &mut subjects {
            for (msg, piece, sep) in SHAPES {
                let mut buf = vec![0u8; msg];
                let plain = buf.clone();
                let tag = s.seal(&mut buf);
                let sealed = buf.clone();
                // Batches of about 1 MiB between clock reads.
                let per = (1usize << 20).div_ceil(msg);
                let bytes = (per * msg) as u64;
                for open in [false, true] {
                    for stream in [false, true] {
                        let (med, _, _) = probe_gbps(1, window, bytes, || {
                            for _ in 0..per {
                                if sep {
                                    // Separate buffers: no copy back needed.
                                    match (open, stream) {
                                        (false, false) => s.seal_to(&plain, black_box(&mut buf)),
                                        (false, true) => {
                                            s.stream_seal_to(&plain, black_box(&mut buf))
                                        }
                                        (true, false) => {
                                            s.open_to(&sealed, black_box(&mut buf), &tag)
                                        }
                                        (true, true) => {
                                            s.stream_open_to(&sealed, black_box(&mut buf), &tag)
                                        }
                                    }
                                    continue;
                                }
                                match (open, stream) {
                                    (false, false) => {
                                        black_box(s.seal(black_box(&mut buf)));
                                    }
                                    (false, true) => s.stream_seal(black_box(&mut buf), piece),
                                    (true, false) => {
                                        buf.copy_from_slice(&sealed);
                                        s.open(black_box(&mut buf), &tag);
                                    }
                                    (true, true) => {
                                        buf.copy_from_slice(&sealed);
                                        s.stream_open(black_box(&mut buf), piece, &tag);
                                    }
                                }
                            }
                        });
                        cells[c].samples.push(med);
                        c += 1;
                    }
                }
            }
        }
    }
    println!("median GB/s of {reps} rounds of {window:?} per cell; ratio = stream / one-shot");
    for pair in cells.chunks(2) {
        let (one, st) = (median(&pair[0].samples), median(&pair[1].samples));
        let label = pair[0].label.trim_end_matches(" one-shot");
        println!(
            "{label:<62} one-shot {one:7.3}  stream {st:7.3}  ratio {:.3}",
            st / one
        );
    }
}
