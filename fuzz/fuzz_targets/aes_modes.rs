//! Differential fuzzing of the AES block modes (ECB, CBC, CTR with 128- and
//! 32-bit counters, CFB8, CFB128, OFB): every backend this CPU runs against
//! `soft`, with random keys, IVs, lengths, a split point (two calls on one
//! stream), in place or to a separate buffer, at random buffer offsets, and
//! single blocks against RustCrypto's `aes`.
#![no_main]

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use hwcrypt::Backend;
use hwcrypt::aes::{Aes, CounterWidth};
use hwcrypt::modes::{Cbc, Cfb8, Cfb128, Ctr, Ecb, Ofb};
use hwcrypt::registry::Algorithm;
use hwcrypt_fuzz::{Placed, aes_key_len, backends};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    key_size: u8,
    key: [u8; 32],
    iv: [u8; 16],
    mode: u8,
    decrypt: bool,
    split: u16,
    in_place: bool,
    in_offset: u8,
    out_offset: u8,
    data: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Ecb,
    Cbc,
    Ctr128,
    Ctr32,
    Cfb8,
    Cfb128,
    Ofb,
}

impl Mode {
    fn block_aligned(self) -> bool {
        matches!(self, Mode::Ecb | Mode::Cbc)
    }
}

/// One pass over `data` (two calls, split at `split`) on `backend`.
fn run(backend: Backend, mode: Mode, input: &Input, data: &[u8], split: usize) -> Vec<u8> {
    let key = &input.key[..aes_key_len(input.key_size)];
    let aes = Aes::with_backend(key, backend).expect("runnable backend");
    let iv = &input.iv;
    let mut src = Placed::new(data, input.in_offset);
    let mut dst = Placed::new(&vec![0xee; data.len()], input.out_offset);
    // Each of the two calls: in place in `src`, or `src` -> `dst`.
    enum Stream {
        Ecb(Ecb),
        Cbc(Cbc),
        Ctr(Ctr),
        Cfb8(Cfb8),
        Cfb128(Cfb128),
        Ofb(Ofb),
    }
    let mut s = match mode {
        Mode::Ecb => Stream::Ecb(Ecb::new(aes)),
        Mode::Cbc => Stream::Cbc(Cbc::new(aes, iv).unwrap()),
        Mode::Ctr128 => Stream::Ctr(Ctr::new(aes, iv).unwrap()),
        Mode::Ctr32 => Stream::Ctr(Ctr::with_width(aes, iv, CounterWidth::Low32).unwrap()),
        Mode::Cfb8 => Stream::Cfb8(Cfb8::new(aes, iv).unwrap()),
        Mode::Cfb128 => Stream::Cfb128(Cfb128::new(aes, iv).unwrap()),
        Mode::Ofb => Stream::Ofb(Ofb::new(aes, iv).unwrap()),
    };
    let dec = input.decrypt;
    for range in [0..split, split..data.len()] {
        if input.in_place {
            let buf = &mut src.get_mut()[range];
            match &mut s {
                Stream::Ecb(m) if dec => m.decrypt(buf).unwrap(),
                Stream::Ecb(m) => m.encrypt(buf).unwrap(),
                Stream::Cbc(m) if dec => m.decrypt(buf).unwrap(),
                Stream::Cbc(m) => m.encrypt(buf).unwrap(),
                Stream::Ctr(m) => m.apply_keystream(buf).unwrap(),
                Stream::Cfb8(m) if dec => m.decrypt(buf),
                Stream::Cfb8(m) => m.encrypt(buf),
                Stream::Cfb128(m) if dec => m.decrypt(buf),
                Stream::Cfb128(m) => m.encrypt(buf),
                Stream::Ofb(m) => m.apply_keystream(buf),
            }
        } else {
            let i = &src.get()[range.clone()];
            let o = &mut dst.get_mut()[range];
            match &mut s {
                Stream::Ecb(m) if dec => m.decrypt_to(i, o),
                Stream::Ecb(m) => m.encrypt_to(i, o),
                Stream::Cbc(m) if dec => m.decrypt_to(i, o),
                Stream::Cbc(m) => m.encrypt_to(i, o),
                Stream::Ctr(m) => m.apply_keystream_to(i, o),
                Stream::Cfb8(m) if dec => m.decrypt_to(i, o),
                Stream::Cfb8(m) => m.encrypt_to(i, o),
                Stream::Cfb128(m) if dec => m.decrypt_to(i, o),
                Stream::Cfb128(m) => m.encrypt_to(i, o),
                Stream::Ofb(m) => m.apply_keystream_to(i, o),
            }
            .unwrap();
        }
    }
    src.check_guards();
    dst.check_guards();
    if input.in_place {
        src.get().to_vec()
    } else {
        assert_eq!(src.get(), data, "{backend}: the input buffer changed");
        dst.get().to_vec()
    }
}

fuzz_target!(|input: Input| {
    let mode = [
        Mode::Ecb,
        Mode::Cbc,
        Mode::Ctr128,
        Mode::Ctr32,
        Mode::Cfb8,
        Mode::Cfb128,
        Mode::Ofb,
    ][usize::from(input.mode % 7)];
    let mut data = &input.data[..input.data.len().min(4096)];
    let mut split = usize::from(input.split) % (data.len() + 1);
    if mode.block_aligned() {
        data = &data[..data.len() / 16 * 16];
        split = split / 16 * 16;
    }
    let want = run(Backend::Soft, mode, &input, data, split);
    // The same stream in one call.
    assert_eq!(
        want,
        run(Backend::Soft, mode, &input, data, 0),
        "soft: split"
    );
    for &backend in backends(Algorithm::Aes) {
        if backend != Backend::Soft {
            let got = run(backend, mode, &input, data, split);
            assert_eq!(got, want, "{backend} differs from soft in {mode:?}");
        }
    }
    // Soft ECB against RustCrypto's AES on the first block.
    if let (Mode::Ecb, Some(block)) = (mode, data.get(..16)) {
        let key = &input.key[..aes_key_len(input.key_size)];
        let mut b = aes::Block::try_from(block).unwrap();
        match key.len() {
            16 => aes::Aes128::new_from_slice(key)
                .unwrap()
                .encrypt_block(&mut b),
            24 => aes::Aes192::new_from_slice(key)
                .unwrap()
                .encrypt_block(&mut b),
            _ => aes::Aes256::new_from_slice(key)
                .unwrap()
                .encrypt_block(&mut b),
        }
        let mut mine = [0u8; 16];
        mine.copy_from_slice(block);
        Ecb::new(Aes::with_backend(key, Backend::Soft).unwrap())
            .encrypt(&mut mine)
            .unwrap();
        assert_eq!(mine[..], b[..], "soft AES differs from RustCrypto's aes");
    }
});
