//! Tests of the VAES-AVX512 backend's kernels against the AES-NI ones and
//! the generic compositions (they skip on CPUs without AVX-512).

use super::*;
use crate::aes::xts_generic;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Every length 0..=100 blocks (and a few long ones), every key size,
/// both directions, with and without the fused tweak encryption: the
/// zmm kernel equals XTS composed from single AES-NI blocks.
#[test]
fn xts_kernels_agree_with_the_generic_composition() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0512);
    let mut lens: Vec<usize> = (0..=100).collect();
    lens.extend([127, 128, 129, 255, 256, 257, 1000]);
    for key_len in [16, 24, 32] {
        let mut k1 = vec![0u8; key_len];
        let mut k2 = vec![0u8; key_len];
        rng.fill(&mut k1[..]);
        rng.fill(&mut k2[..]);
        let (Some(d), Some(t)) = (Key::boxed(&k1), Key::boxed(&k2)) else {
            eprintln!("vaes-avx512 not available: skipped");
            return;
        };
        for &blocks in &lens {
            let mut pt = vec![0u8; 16 * blocks];
            rng.fill(&mut pt[..]);
            let mut tweak = [0u8; 16];
            rng.fill(&mut tweak);
            for decrypt in [false, true] {
                let mut want = pt.clone();
                let mut tw_want = tweak;
                t.base.narrow().encrypt_block(&mut tw_want);
                xts_generic(
                    d.base.narrow(),
                    &mut tw_want,
                    InOut::InPlace(&mut want),
                    decrypt,
                );
                // Pre-encrypted tweak, separate buffers.
                let mut got = vec![0u8; pt.len()];
                let mut tw = tweak;
                t.encrypt_block(&mut tw);
                let io = InOut::separate(&pt, &mut got).unwrap();
                if decrypt {
                    d.xts_decrypt(&mut tw, io);
                } else {
                    d.xts_encrypt(&mut tw, io);
                }
                assert_eq!(got, want, "{key_len} {blocks} {decrypt}");
                assert_eq!(tw, tw_want, "{key_len} {blocks} {decrypt} tweak");
                // Fused tweak encryption, in place.
                let mut got = pt.clone();
                let mut tw = tweak;
                d.xts_unit(&t, &mut tw, InOut::InPlace(&mut got), decrypt);
                assert_eq!(got, want, "{key_len} {blocks} {decrypt} fused");
                assert_eq!(tw, tw_want, "{key_len} {blocks} {decrypt} fused tweak");
            }
        }
    }
}

/// The zmm ECB, CBC-decryption and CTR kernels against the vaes-avx2
/// ones for every block count 0..=100 and a few long ones, every key
/// size, in place and to a separate buffer (one byte past the end
/// untouched), with counters whose low 32 or 64 bits wrap mid-call.
#[test]
fn parallel_kernels_agree_with_vaes_avx2() {
    let mut rng = StdRng::seed_from_u64(0x5eed_0ae5);
    let mut lens: Vec<usize> = (0..=100).collect();
    lens.extend([127, 128, 129, 255, 256, 257, 1000]);
    for key_len in [16, 24, 32] {
        let mut raw = vec![0u8; key_len];
        rng.fill(&mut raw[..]);
        let Some(k) = Key::boxed(&raw) else {
            eprintln!("vaes-avx512 not available: skipped");
            return;
        };
        for &blocks in &lens {
            let mut input = vec![0u8; 16 * blocks];
            rng.fill(&mut input[..]);
            let mut iv = [0u8; 16];
            rng.fill(&mut iv);
            // Near a wrap of the low 32 or 64 bits, or random.
            let mut counters = vec![iv];
            let mut c = iv;
            c[8..].copy_from_slice(&(u64::MAX - 5).to_be_bytes());
            counters.push(c);
            let mut c = iv;
            c[12..].copy_from_slice(&(u32::MAX - 6).to_be_bytes());
            counters.push(c);
            counters.push([0xff; 16]);
            type Run<'a> = Box<dyn Fn(&dyn AesKernels, &mut Block, InOut<'_>) + 'a>;
            let mut runs: Vec<(&str, Run)> = vec![
                ("ecb-enc", Box::new(|k, _, io| k.ecb_encrypt(io))),
                ("ecb-dec", Box::new(|k, _, io| k.ecb_decrypt(io))),
                ("cbc-dec", Box::new(|k, s, io| k.cbc_decrypt(s, io))),
            ];
            for (i, c) in counters.iter().enumerate() {
                let c = *c;
                let name = ["ctr0", "ctr1", "ctr2", "ctr3"][i];
                runs.push((
                    name,
                    Box::new(move |k, s, io| {
                        *s = c;
                        k.ctr(s, CounterWidth::Full128, io)
                    }),
                ));
                let name = ["ctr32-0", "ctr32-1", "ctr32-2", "ctr32-3"][i];
                runs.push((
                    name,
                    Box::new(move |k, s, io| {
                        *s = c;
                        k.ctr(s, CounterWidth::Low32, io)
                    }),
                ));
            }
            for (name, run) in &runs {
                let mut want = input.clone();
                let mut s_want = iv;
                run(&k.base, &mut s_want, InOut::InPlace(&mut want));
                let mut got = input.clone();
                let mut s_got = iv;
                run(&*k, &mut s_got, InOut::InPlace(&mut got));
                assert_eq!(got, want, "{key_len} {blocks} {name} in place");
                assert_eq!(s_got, s_want, "{key_len} {blocks} {name} state");
                let mut got = vec![0xa5u8; input.len() + 1];
                let mut s_got = iv;
                let n = input.len();
                run(
                    &*k,
                    &mut s_got,
                    InOut::separate(&input, &mut got[..n]).unwrap(),
                );
                assert_eq!(got[..n], want, "{key_len} {blocks} {name} separate");
                assert_eq!(got[n], 0xa5, "{key_len} {blocks} {name} past the end");
                assert_eq!(s_got, s_want, "{key_len} {blocks} {name} separate state");
            }
        }
    }
}

/// Units of every length 16..=700 bytes (ciphertext stealing inside the
/// kernel when not whole blocks), in place and to a separate buffer,
/// equal the `soft` backend's `Xts`.
#[test]
fn fused_units_of_any_length_match_soft() {
    use crate::backend::Backend;
    use crate::modes::Xts;
    let mut rng = StdRng::seed_from_u64(0x5eed_0c75);
    for key_len in [16, 24, 32] {
        let mut k1 = vec![0u8; key_len];
        let mut k2 = vec![0u8; key_len];
        rng.fill(&mut k1[..]);
        rng.fill(&mut k2[..]);
        let (Some(d), Some(t)) = (Key::boxed(&k1), Key::boxed(&k2)) else {
            eprintln!("vaes-avx512 not available: skipped");
            return;
        };
        let soft = Xts::with_backend(&[k1, k2].concat(), Backend::Soft).unwrap();
        for len in 16..=700 {
            let mut pt = vec![0u8; len];
            rng.fill(&mut pt[..]);
            let mut tweak = [0u8; 16];
            rng.fill(&mut tweak);
            for decrypt in [false, true] {
                let mut want = pt.clone();
                if decrypt {
                    soft.decrypt(&tweak, &mut want).unwrap();
                } else {
                    soft.encrypt(&tweak, &mut want).unwrap();
                }
                let mut got = pt.clone();
                d.xts_unit(&t, &mut tweak.clone(), InOut::InPlace(&mut got), decrypt);
                assert_eq!(got, want, "{key_len} {len} {decrypt} in place");
                let mut got = vec![0xa5u8; len + 1];
                let io = InOut::separate(&pt, &mut got[..len]).unwrap();
                d.xts_unit(&t, &mut tweak.clone(), io, decrypt);
                assert_eq!(got[..len], want, "{key_len} {len} {decrypt} separate");
                assert_eq!(got[len], 0xa5, "{key_len} {len} {decrypt} past the end");
            }
        }
    }
}
