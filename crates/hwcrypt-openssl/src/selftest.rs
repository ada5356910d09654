//! The power-on self-test: known-answer tests of every registered
//! algorithm through the same code the dispatch functions call, on the
//! backend hwcrypt selected for this machine. Vectors: NIST SP 800-38A
//! F.1 (ECB) and F.5 (CTR), IEEE 1619-2007 annex B vectors 2 (AES-128-XTS)
//! and 10 (AES-256-XTS, first three blocks).

use crate::algorithms::{ALGORITHMS, AlgInfo};
use crate::ciphers::{Cipher, Io};

/// One known answer: algorithm name, key, IV, plaintext, ciphertext (hex).
struct Kat {
    alg: &'static str,
    key: &'static str,
    iv: &'static str,
    pt: &'static str,
    ct: &'static str,
}

const SP800_38A_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51";
const K128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const K192: &str = "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b";
const K256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const CTR_IV: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

const KATS: &[Kat] = &[
    Kat {
        alg: "AES-128-ECB",
        key: K128,
        iv: "",
        pt: SP800_38A_PT,
        ct: "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf",
    },
    Kat {
        alg: "AES-192-ECB",
        key: K192,
        iv: "",
        pt: SP800_38A_PT,
        ct: "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef",
    },
    Kat {
        alg: "AES-256-ECB",
        key: K256,
        iv: "",
        pt: SP800_38A_PT,
        ct: "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870",
    },
    Kat {
        alg: "AES-128-CTR",
        key: K128,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
    },
    Kat {
        alg: "AES-192-CTR",
        key: K192,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94",
    },
    Kat {
        alg: "AES-256-CTR",
        key: K256,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5",
    },
    Kat {
        alg: "AES-128-XTS",
        key: "1111111111111111111111111111111122222222222222222222222222222222",
        iv: "33333333330000000000000000000000",
        pt: "4444444444444444444444444444444444444444444444444444444444444444",
        ct: "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0",
    },
    Kat {
        alg: "AES-256-XTS",
        key: "27182818284590452353602874713526624977572470936999595749669676273141592653589793238462643383279502884197169399375105820974944592",
        iv: "ff000000000000000000000000000000",
        pt: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f",
        ct: "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b5d31e276f8fe4a8d66b317f9ac683f44",
    },
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

fn find(name: &str) -> Option<&'static AlgInfo> {
    ALGORITHMS
        .iter()
        .find(|a| crate::algorithms::short_name(a) == name)
}

/// Encrypts with `update` in two uneven pieces (exercising the partial
/// block paths), decrypts with the raw `cipher` call, and compares both.
fn check(kat: &Kat) -> Result<(), String> {
    let alg = find(kat.alg).ok_or_else(|| format!("{}: not registered", kat.alg))?;
    let (key, iv, pt, ct) = (unhex(kat.key), unhex(kat.iv), unhex(kat.pt), unhex(kat.ct));
    let iv = (!iv.is_empty()).then_some(&iv[..]);
    let fail = |what: &str| format!("{}: {what}", kat.alg);

    let mut enc: Box<dyn Cipher> = (alg.new)(alg);
    enc.init(true, Some(&key), iv).map_err(|_| fail("init"))?;
    let mut out = vec![0u8; pt.len()];
    if alg.block_size == 1 && alg.mode != crate::algorithms::MODE_XTS {
        let (a, b) = pt.split_at(5);
        let (oa, ob) = out.split_at_mut(5);
        enc.update(Io::Split(a, oa)).map_err(|_| fail("update"))?;
        enc.update(Io::Split(b, ob)).map_err(|_| fail("update"))?;
    } else {
        let n = enc
            .update(Io::Split(&pt, &mut out))
            .map_err(|_| fail("update"))?;
        if n != pt.len() {
            return Err(fail("update length"));
        }
    }
    if out != ct {
        return Err(fail("encryption differs from the known answer"));
    }

    let mut dec: Box<dyn Cipher> = (alg.new)(alg);
    dec.init(false, Some(&key), iv).map_err(|_| fail("init"))?;
    let mut back = ct.clone();
    dec.cipher(Io::InPlace(&mut back))
        .map_err(|_| fail("cipher"))?;
    if back != pt {
        return Err(fail("decryption differs from the known answer"));
    }
    Ok(())
}

/// Runs every known-answer test; the first failure, if any.
pub(crate) fn run() -> Result<(), String> {
    for a in &ALGORITHMS {
        let name = crate::algorithms::short_name(a);
        if !KATS.iter().any(|k| k.alg == name) {
            return Err(format!("{name}: no known-answer test"));
        }
    }
    KATS.iter().try_for_each(check)
}

#[cfg(test)]
mod tests {
    #[test]
    fn self_test_passes() {
        assert_eq!(super::run(), Ok(()));
    }
}
