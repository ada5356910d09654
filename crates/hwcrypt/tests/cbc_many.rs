//! Multi-buffer CBC encryption (`Cbc::encrypt_many`, `CbcEncryptBatch`)
//! against one `soft` stream after another: every backend this (masked) CPU
//! runs, 1..=40 streams (past every backend's lane count), unequal lengths
//! (empty ones too), mixed key sizes, per-stream and shared keys, in place
//! and into separate buffers, and calls that continue a stream. Lengths
//! average more than the 128 bytes a stream below which a batch runs its
//! streams one by one, so the packed kernels are what is tested.

use hwcrypt::aes::Aes;
use hwcrypt::modes::{Cbc, CbcEncryptBatch};
use hwcrypt::registry::{self, Algorithm};
use hwcrypt::{Backend, Error, cpu};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn backends() -> Vec<Backend> {
    registry::runnable(Algorithm::Aes, cpu::features().expect("HWCRYPT_CPU"))
}

struct Stream {
    key: Vec<u8>,
    iv: [u8; 16],
    data: Vec<u8>,
}

fn streams(rng: &mut Rng, count: usize, max_blocks: usize) -> Vec<Stream> {
    (0..count)
        .map(|_| {
            let key_len = [16, 24, 32][rng.below(3)];
            let blocks = rng.below(max_blocks + 1);
            Stream {
                key: rng.bytes(key_len),
                iv: rng.bytes(16).try_into().unwrap(),
                data: rng.bytes(16 * blocks),
            }
        })
        .collect()
}

/// Each stream's ciphertext and final chaining value, one after another on `soft`.
fn expected(streams: &[Stream]) -> Vec<(Vec<u8>, [u8; 16])> {
    streams
        .iter()
        .map(|s| {
            let mut cbc =
                Cbc::new(Aes::with_backend(&s.key, Backend::Soft).unwrap(), &s.iv).unwrap();
            let mut buf = s.data.clone();
            cbc.encrypt(&mut buf).unwrap();
            (buf, cbc.chaining_value())
        })
        .collect()
}

#[test]
fn every_stream_count_and_length_matches_the_serial_path() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for backend in backends() {
        for count in 1..=40 {
            // Streams of 12 blocks on average: batches shorter than 8
            // blocks a stream on average run one stream after another.
            let max_blocks = if count % 3 == 0 { 70 } else { 24 };
            let s = streams(&mut rng, count, max_blocks);
            let want = expected(&s);
            let mut ciphers: Vec<Cbc> = s
                .iter()
                .map(|s| Cbc::new(Aes::with_backend(&s.key, backend).unwrap(), &s.iv).unwrap())
                .collect();
            // Even streams in place, odd ones into separate buffers.
            let mut bufs: Vec<Vec<u8>> = s.iter().map(|s| s.data.clone()).collect();
            let mut outs: Vec<Vec<u8>> = s.iter().map(|s| vec![0xa5; s.data.len()]).collect();
            let mut batch = CbcEncryptBatch::new();
            for (i, ((cbc, buf), out)) in
                ciphers.iter_mut().zip(&mut bufs).zip(&mut outs).enumerate()
            {
                if i % 2 == 0 {
                    batch.push(cbc, buf).unwrap();
                } else {
                    batch.push_to(cbc, buf, out).unwrap();
                }
            }
            assert_eq!(batch.len(), count);
            batch.encrypt();
            for (i, (w, cbc)) in want.iter().zip(&ciphers).enumerate() {
                let got = if i % 2 == 0 { &bufs[i] } else { &outs[i] };
                assert!(
                    *got == w.0 && cbc.chaining_value() == w.1,
                    "{backend}: stream {i} of {count} ({} bytes, AES-{})",
                    s[i].data.len(),
                    s[i].key.len() * 8
                );
                if i % 2 == 1 {
                    assert_eq!(bufs[i], s[i].data, "{backend}: input {i} changed");
                }
            }
        }
    }
}

#[test]
fn a_shared_key_and_calls_that_continue_a_stream() {
    let mut rng = Rng(7);
    // Every key size: the shared-key kernels are instantiated per round
    // count (a review's mutant with AES-192 run as 14 rounds survived when
    // only AES-256 keys were shared).
    for (backend, key_len) in backends()
        .into_iter()
        .flat_map(|b| [16, 24, 32].map(|n| (b, n)))
    {
        let aes = Aes::with_backend(&rng.bytes(key_len), backend).unwrap();
        let ivs: Vec<[u8; 16]> = (0..20).map(|_| rng.bytes(16).try_into().unwrap()).collect();
        let data: Vec<Vec<u8>> = (0..20).map(|i| rng.bytes(16 * (3 + i * 7))).collect();
        let split: Vec<usize> = data
            .iter()
            .map(|d| 16 * rng.below(d.len() / 16 + 1))
            .collect();
        // Serially, on this backend's key, in one call per stream.
        let want: Vec<Vec<u8>> = ivs
            .iter()
            .zip(&data)
            .map(|(iv, d)| {
                let mut buf = d.clone();
                Cbc::new(&aes, iv).unwrap().encrypt(&mut buf).unwrap();
                buf
            })
            .collect();
        // Together, in two calls at an uneven split of each stream.
        let mut ciphers: Vec<Cbc<&Aes>> =
            ivs.iter().map(|iv| Cbc::new(&aes, iv).unwrap()).collect();
        let mut bufs = data.clone();
        Cbc::encrypt_many(
            ciphers
                .iter_mut()
                .zip(bufs.iter_mut().zip(&split).map(|(b, &n)| &mut b[..n])),
        )
        .unwrap();
        Cbc::encrypt_many(
            ciphers
                .iter_mut()
                .zip(bufs.iter_mut().zip(&split).map(|(b, &n)| &mut b[n..])),
        )
        .unwrap();
        assert_eq!(bufs, want, "{backend} AES-{}", key_len * 8);
    }
}

#[test]
fn streams_on_different_backends_in_one_batch() {
    let mut rng = Rng(11);
    let all = backends();
    let s = streams(&mut rng, 30, 20);
    let want = expected(&s);
    let mut ciphers: Vec<Cbc> = s
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Cbc::new(
                Aes::with_backend(&s.key, all[i % all.len()]).unwrap(),
                &s.iv,
            )
            .unwrap()
        })
        .collect();
    let mut bufs: Vec<Vec<u8>> = s.iter().map(|s| s.data.clone()).collect();
    Cbc::encrypt_many(ciphers.iter_mut().zip(bufs.iter_mut().map(|b| &mut b[..]))).unwrap();
    for (i, (w, b)) in want.iter().zip(&bufs).enumerate() {
        assert_eq!(*b, w.0, "stream {i} on {}", all[i % all.len()]);
    }
}

#[test]
fn a_partial_block_anywhere_is_an_error_and_nothing_is_encrypted() {
    for backend in backends() {
        let aes = Aes::with_backend(&[3; 16], backend).unwrap();
        let mut ciphers: Vec<Cbc<&Aes>> =
            (0..5).map(|_| Cbc::new(&aes, &[0; 16]).unwrap()).collect();
        let mut bufs = vec![vec![1u8; 64]; 5];
        bufs[3].push(0);
        let err = Cbc::encrypt_many(ciphers.iter_mut().zip(bufs.iter_mut().map(|b| &mut b[..])));
        assert_eq!(
            err,
            Err(Error::NotBlockAligned {
                len: 65,
                block_size: 16
            })
        );
        assert!(
            bufs.iter().all(|b| b[..64].iter().all(|&x| x == 1)),
            "{backend}"
        );
        assert!(ciphers.iter().all(|c| c.chaining_value() == [0; 16]));
        let (input, mut output) = ([0u8; 32], [0u8; 48]);
        let mut cbc = Cbc::new(&aes, &[0; 16]).unwrap();
        let mut batch = CbcEncryptBatch::new();
        assert!(matches!(
            batch.push_to(&mut cbc, &input, &mut output),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(batch.is_empty());
    }
}

/// Consecutive 4 KiB sectors of one buffer (ESSIV-style disk encryption):
/// every stream at the same offset modulo 4 KiB, which a batch runs eight
/// lanes at a time.
#[test]
fn consecutive_sectors_of_one_buffer() {
    let mut rng = Rng(4096);
    let data = rng.bytes(20 * 4096);
    for backend in backends() {
        let aes = Aes::with_backend(&[9; 32], backend).unwrap();
        let soft = Aes::with_backend(&[9; 32], Backend::Soft).unwrap();
        let iv = |i: usize| -> [u8; 16] { (i as u128 * 0x0101).to_le_bytes() };
        let mut want = data.clone();
        for (i, sector) in want.chunks_mut(4096).enumerate() {
            Cbc::new(&soft, &iv(i)).unwrap().encrypt(sector).unwrap();
        }
        let mut ciphers: Vec<Cbc<&Aes>> =
            (0..20).map(|i| Cbc::new(&aes, &iv(i)).unwrap()).collect();
        let mut buf = data.clone();
        Cbc::encrypt_many(ciphers.iter_mut().zip(buf.chunks_mut(4096))).unwrap();
        assert!(buf == want, "{backend}");
    }
}
