//! The power-on self-test: known-answer tests of every registered
//! algorithm through the same code the dispatch functions call, on the
//! backend hwcrypt selected for this machine. Vectors: NIST SP 800-38A
//! F.1 (ECB) and F.5 (CTR), IEEE 1619-2007 annex B vectors 2 (AES-128-XTS)
//! and 10 (AES-256-XTS, first three blocks), McGrew-Viega GCM test cases 4,
//! 10 and 16 (AES-128/192/256-GCM), RFC 8439 2.4.2 (ChaCha20) and 2.8.2
//! (ChaCha20-Poly1305).
//!
//! The vectors are 32 to 114 bytes: the narrow kernels. The wide ones
//! (ECB and CTR over many registers, XTS with ciphertext stealing), which
//! the default provider's DRBG runs on, are checked against hwcrypt's
//! portable backend over 1,037 bytes in both directions ([`wide`]), the
//! portable one having passed the same known answers first.

use crate::algorithms::{ALGORITHMS, AlgInfo};
use crate::ciphers::{Cipher, Io};

/// One known answer: algorithm name, key, IV, plaintext, ciphertext (hex);
/// AEADs: associated data and tag.
struct Kat {
    alg: &'static str,
    key: &'static str,
    iv: &'static str,
    pt: &'static str,
    ct: &'static str,
    aad: &'static str,
    tag: &'static str,
}

const GCM_KEY: &str = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";
const GCM_IV: &str = "cafebabefacedbaddecaf888";
const GCM_PT: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
const GCM_AAD: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const RFC8439_PT: &str = "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966204920636f756c64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73637265656e20776f756c642062652069742e";

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
        ..NO_AEAD
    },
    Kat {
        alg: "AES-192-ECB",
        key: K192,
        iv: "",
        pt: SP800_38A_PT,
        ct: "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-256-ECB",
        key: K256,
        iv: "",
        pt: SP800_38A_PT,
        ct: "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-128-CTR",
        key: K128,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-192-CTR",
        key: K192,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-256-CTR",
        key: K256,
        iv: CTR_IV,
        pt: SP800_38A_PT,
        ct: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-128-XTS",
        key: "1111111111111111111111111111111122222222222222222222222222222222",
        iv: "33333333330000000000000000000000",
        pt: "4444444444444444444444444444444444444444444444444444444444444444",
        ct: "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-256-XTS",
        key: "27182818284590452353602874713526624977572470936999595749669676273141592653589793238462643383279502884197169399375105820974944592",
        iv: "ff000000000000000000000000000000",
        pt: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f",
        ct: "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b5d31e276f8fe4a8d66b317f9ac683f44",
        ..NO_AEAD
    },
    Kat {
        alg: "AES-128-GCM",
        key: GCM_KEY.split_at(32).0,
        iv: GCM_IV,
        pt: GCM_PT,
        ct: "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
        aad: GCM_AAD,
        tag: "5bc94fbc3221a5db94fae95ae7121a47",
    },
    Kat {
        alg: "AES-192-GCM",
        key: GCM_KEY.split_at(48).0,
        iv: GCM_IV,
        pt: GCM_PT,
        ct: "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
        aad: GCM_AAD,
        tag: "2519498e80f1478f37ba55bd6d27618c",
    },
    Kat {
        alg: "AES-256-GCM",
        key: GCM_KEY,
        iv: GCM_IV,
        pt: GCM_PT,
        ct: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
        aad: GCM_AAD,
        tag: "76fc6ece0f4e1768cddf8853bb2d551b",
    },
    Kat {
        alg: "ChaCha20",
        key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
        iv: "01000000000000000000004a00000000",
        pt: RFC8439_PT,
        ct: "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab77937365af90bbf74a35be6b40b8eedf2785e42874d",
        ..NO_AEAD
    },
    Kat {
        alg: "ChaCha20-Poly1305",
        key: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        iv: "070000004041424344454647",
        pt: RFC8439_PT,
        ct: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116",
        aad: "50515253c0c1c2c3c4c5c6c7",
        tag: "1ae10b594f09e26a7e902ecbd0600691",
    },
];

const NO_AEAD: Kat = Kat {
    alg: "",
    key: "",
    iv: "",
    pt: "",
    ct: "",
    aad: "",
    tag: "",
};

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

    let (aad, tag) = (unhex(kat.aad), unhex(kat.tag));
    let mut enc: Box<dyn Cipher> = (alg.new)(alg);
    enc.init(true, Some(&key), iv).map_err(|_| fail("init"))?;
    if alg.aead {
        let (a, b) = aad.split_at(3);
        enc.update_aad(a).map_err(|_| fail("aad"))?;
        enc.update_aad(b).map_err(|_| fail("aad"))?;
    }
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
    if alg.aead {
        enc.finish(&mut []).map_err(|_| fail("final"))?;
        if enc.aead_tag().map(|t| t.to_vec()) != Some(tag.clone()) {
            return Err(fail("tag differs from the known answer"));
        }
    }
    if out != ct {
        return Err(fail("encryption differs from the known answer"));
    }

    let mut dec: Box<dyn Cipher> = (alg.new)(alg);
    dec.init(false, Some(&key), iv).map_err(|_| fail("init"))?;
    if alg.aead {
        dec.set_aead_tag(&tag).map_err(|_| fail("tag"))?;
        dec.update_aad(&aad).map_err(|_| fail("aad"))?;
    }
    let mut back = ct.clone();
    dec.cipher(Io::InPlace(&mut back))
        .map_err(|_| fail("cipher"))?;
    if alg.aead {
        dec.finish(&mut []).map_err(|_| fail("tag rejected"))?;
        // A tampered tag must be refused.
        let mut bad = tag.clone();
        bad[0] ^= 1;
        dec.init(false, None, iv).map_err(|_| fail("init"))?;
        dec.set_aead_tag(&bad).map_err(|_| fail("tag"))?;
        dec.update_aad(&aad).map_err(|_| fail("aad"))?;
        let mut again = ct.clone();
        dec.cipher(Io::InPlace(&mut again))
            .map_err(|_| fail("cipher"))?;
        if dec.finish(&mut []).is_ok() {
            return Err(fail("a tampered tag was accepted"));
        }
    }
    if back != pt {
        return Err(fail("decryption differs from the known answer"));
    }
    Ok(())
}

/// `buf` encrypted in place by the portable backend as the ECB, CTR or XTS
/// cipher `name` (`iv`: the counter block or tweak; ignored for ECB); `None`
/// for other algorithms, `Some(false)` if it could not be done.
fn soft_encrypt(name: &str, key: &[u8], iv: &[u8], buf: &mut [u8]) -> Option<bool> {
    use hwcrypt::Backend::Soft;
    use hwcrypt::aes::Aes;
    use hwcrypt::modes::{Ctr, Ecb, Xts};
    let done = if name.ends_with("-ECB") {
        Aes::with_backend(key, Soft).and_then(|a| Ecb::new(a).encrypt(buf))
    } else if name.ends_with("-CTR") {
        Aes::with_backend(key, Soft)
            .and_then(|a| Ctr::new(a, iv))
            .and_then(|mut c| c.apply_keystream(buf))
    } else if name.ends_with("-XTS") {
        let Ok(tweak) = <[u8; 16]>::try_from(iv) else {
            return Some(false);
        };
        Xts::with_backend(key, Soft).and_then(|x| x.encrypt(&tweak, buf))
    } else {
        return None;
    };
    Some(done.is_ok())
}

/// The portable backend against the known answers of ECB, CTR and XTS.
fn soft_kats() -> Result<(), String> {
    for kat in KATS {
        let (key, iv, pt, ct) = (unhex(kat.key), unhex(kat.iv), unhex(kat.pt), unhex(kat.ct));
        let mut out = pt.clone();
        match soft_encrypt(kat.alg, &key, &iv, &mut out) {
            None => {}
            Some(true) if out == ct => {}
            Some(_) => {
                return Err(format!(
                    "{} (portable backend): differs from the known answer",
                    kat.alg
                ));
            }
        }
    }
    Ok(())
}

/// The registered ECB, CTR and XTS ciphers (the backend selected) against
/// the portable backend over 1,037 bytes (ECB and CTR 1,024: their wide
/// loops and tails; XTS with a stolen last block), both directions.
fn wide() -> Result<(), String> {
    let pt: Vec<u8> = (0..1037u32)
        .map(|i| (i.wrapping_mul(97) >> 3) as u8)
        .collect();
    let block: Vec<u8> = (0..16u8).map(|i| 0xf0 ^ i).collect();
    for alg in &ALGORITHMS {
        let name = crate::algorithms::short_name(alg);
        let key: Vec<u8> = (0..alg.key_len).map(|i| (i * 29 + 3) as u8).collect();
        let fail = |what: &str| format!("{name}: {what} differs from the portable backend");
        let len = if name.ends_with("-XTS") { 1037 } else { 1024 };
        let mut want = pt[..len].to_vec();
        match soft_encrypt(name, &key, &block, &mut want) {
            None => continue,
            Some(false) => return Err(fail("the reference")),
            Some(true) => {}
        }
        let iv = (!name.ends_with("-ECB")).then_some(&block[..]);
        for encrypt in [true, false] {
            let mut c: Box<dyn Cipher> = (alg.new)(alg);
            c.init(encrypt, Some(&key), iv).map_err(|_| fail("init"))?;
            let (input, expect) = if encrypt {
                (&pt[..len], &want[..])
            } else {
                (&want[..], &pt[..len])
            };
            let mut out = vec![0u8; len];
            let n = c
                .update(Io::Split(input, &mut out))
                .map_err(|_| fail("update"))?;
            // ECB decryption with padding (the default) holds the last block back.
            let held = if !encrypt && name.ends_with("-ECB") {
                16
            } else {
                0
            };
            if n != len - held || out[..n] != expect[..n] {
                return Err(fail(if encrypt { "encryption" } else { "decryption" }));
            }
        }
    }
    Ok(())
}

/// Runs every known-answer test, then the wide kernels against the
/// portable backend; the first failure, if any.
pub(crate) fn run() -> Result<(), String> {
    for a in &ALGORITHMS {
        let name = crate::algorithms::short_name(a);
        if !KATS.iter().any(|k| k.alg == name) {
            return Err(format!("{name}: no known-answer test"));
        }
    }
    KATS.iter().try_for_each(check)?;
    soft_kats()?;
    wide()
}

#[cfg(test)]
mod tests {
    #[test]
    fn self_test_passes() {
        assert_eq!(super::run(), Ok(()));
    }
}
