//! Differential fuzzing of AES-XTS (AES-128, -192, -256; ciphertext
//! stealing): every backend this CPU runs against `soft`, and `soft` against
//! RustCrypto's `xts-mode`, with random keys, tweaks and data unit lengths,
//! in place and to a separate buffer at random offsets; both directions.
#![no_main]

use aes::cipher::KeyInit;
use aes::cipher::array::Array;
use hwcrypt::modes::Xts;
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use hwcrypt_fuzz::{Placed, backends};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    key_size: u8,
    key: [u8; 64],
    equal_halves: bool,
    tweak: [u8; 16],
    decrypt: bool,
    in_offset: u8,
    out_offset: u8,
    data: Vec<u8>,
}

fn run(x: &Xts, input: &Input, data: &[u8]) -> Vec<u8> {
    let name = x.backend();
    let mut buf = Placed::new(data, input.in_offset);
    if input.decrypt {
        x.decrypt(&input.tweak, buf.get_mut()).unwrap();
    } else {
        x.encrypt(&input.tweak, buf.get_mut()).unwrap();
    }
    buf.check_guards();
    let src = Placed::new(data, input.in_offset);
    let mut dst = Placed::new(&vec![0xee; data.len()], input.out_offset);
    if input.decrypt {
        x.decrypt_to(&input.tweak, src.get(), dst.get_mut())
            .unwrap();
    } else {
        x.encrypt_to(&input.tweak, src.get(), dst.get_mut())
            .unwrap();
    }
    dst.check_guards();
    assert_eq!(
        buf.get(),
        dst.get(),
        "{name}: in place and to a buffer differ"
    );
    // And back.
    let mut back = buf.get().to_vec();
    if input.decrypt {
        x.encrypt(&input.tweak, &mut back).unwrap();
    } else {
        x.decrypt(&input.tweak, &mut back).unwrap();
    }
    assert_eq!(back, data, "{name}: no round trip");
    buf.get().to_vec()
}

fn rustcrypto<C>(key: &[u8], input: &Input, data: &[u8]) -> Vec<u8>
where
    C: aes::cipher::BlockCipherEncrypt<BlockSize = aes::cipher::consts::U16>
        + aes::cipher::BlockCipherDecrypt<BlockSize = aes::cipher::consts::U16>
        + KeyInit,
{
    let (a, b) = key.split_at(key.len() / 2);
    let x =
        xts_mode::Xts128::<C>::new(C::new_from_slice(a).unwrap(), C::new_from_slice(b).unwrap());
    let mut buf = data.to_vec();
    if input.decrypt {
        x.decrypt_sector(&mut buf, Array::from(input.tweak));
    } else {
        x.encrypt_sector(&mut buf, Array::from(input.tweak));
    }
    buf
}

fuzz_target!(|input: Input| {
    let half = [16, 24, 32][usize::from(input.key_size % 3)];
    let mut key = input.key[..2 * half].to_vec();
    if input.equal_halves {
        let (a, b) = key.split_at_mut(half);
        b.copy_from_slice(a);
        for &backend in backends(Algorithm::AesXts) {
            assert_eq!(
                Xts::with_backend(&key, backend).err(),
                Some(Error::XtsEqualKeyHalves),
                "{backend}: equal key halves accepted"
            );
        }
        return;
    }
    if key[..half] == key[half..] {
        return;
    }
    let data = &input.data[..input.data.len().min(4096)];
    if data.len() < 16 {
        for &backend in backends(Algorithm::AesXts) {
            let x = Xts::with_backend(&key, backend).unwrap();
            let mut buf = data.to_vec();
            assert!(
                x.encrypt(&input.tweak, &mut buf).is_err(),
                "{backend}: short unit"
            );
            assert_eq!(buf, data, "{backend}: short unit changed");
        }
        return;
    }
    let want = run(
        &Xts::with_backend(&key, Backend::Soft).unwrap(),
        &input,
        data,
    );
    for &backend in backends(Algorithm::AesXts) {
        let got = run(&Xts::with_backend(&key, backend).unwrap(), &input, data);
        assert_eq!(got, want, "{backend} differs from soft");
    }
    let rc = match half {
        16 => rustcrypto::<aes::Aes128>(&key, &input, data),
        24 => rustcrypto::<aes::Aes192>(&key, &input, data),
        _ => rustcrypto::<aes::Aes256>(&key, &input, data),
    };
    assert_eq!(want, rc, "soft differs from RustCrypto xts-mode");
});
