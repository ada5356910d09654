//! Tests of the fixsliced `soft` AES: its key schedule, S-box circuits and
//! kernels against a plain byte-oriented FIPS 197 reference and published
//! vectors. Not the cross-backend suites, which live in `crates/hwcrypt/tests/`.

use super::*;
use rand::{Rng, RngCore};

/// A deliberately plain byte-oriented AES (FIPS 197 as written, with
/// lookup tables), used only to cross-check the fixsliced code.
mod reference {
    use crate::aes::Block;

    fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut p = 0;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
            b >>= 1;
        }
        p
    }

    /// S-box from its definition: inverse in GF(2^8), then the affine map.
    pub fn sbox_table() -> [u8; 256] {
        let mut table = [0u8; 256];
        for (x, entry) in table.iter_mut().enumerate() {
            let x = x as u8;
            let inv = (1..=255u8).find(|&y| mul(x, y) == 1).unwrap_or(0);
            let mut s = 0x63;
            for i in 0..8 {
                let bit = (inv >> i)
                    ^ (inv >> ((i + 4) % 8))
                    ^ (inv >> ((i + 5) % 8))
                    ^ (inv >> ((i + 6) % 8))
                    ^ (inv >> ((i + 7) % 8));
                s ^= (bit & 1) << i;
            }
            *entry = s;
        }
        table
    }

    pub fn inv_sbox_table() -> [u8; 256] {
        let sbox = sbox_table();
        let mut table = [0u8; 256];
        for (x, &s) in sbox.iter().enumerate() {
            table[usize::from(s)] = x as u8;
        }
        table
    }

    pub struct Aes {
        round_keys: Vec<Block>,
        sbox: [u8; 256],
        inv_sbox: [u8; 256],
    }

    impl Aes {
        pub fn new(key: &[u8]) -> Aes {
            let sbox = sbox_table();
            let nk = key.len() / 4;
            let nr = nk + 6;
            let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| c.try_into().unwrap()).collect();
            let mut rcon = 1u8;
            for i in nk..4 * (nr + 1) {
                let mut t = w[i - 1];
                if i % nk == 0 {
                    t = [t[1], t[2], t[3], t[0]].map(|b| sbox[usize::from(b)]);
                    t[0] ^= rcon;
                    rcon = mul(rcon, 2);
                } else if nk > 6 && i % nk == 4 {
                    t = t.map(|b| sbox[usize::from(b)]);
                }
                let prev = w[i - nk];
                w.push(core::array::from_fn(|j| t[j] ^ prev[j]));
            }
            let round_keys = w
                .chunks(4)
                .map(|c| core::array::from_fn(|i| c[i / 4][i % 4]))
                .collect();
            Aes {
                round_keys,
                sbox,
                inv_sbox: inv_sbox_table(),
            }
        }

        pub fn round_key(&self, round: usize) -> Block {
            self.round_keys[round]
        }

        fn add(s: &mut Block, k: &Block) {
            s.iter_mut().zip(k).for_each(|(a, b)| *a ^= b);
        }

        fn shift_rows(s: &mut Block, inverse: bool) {
            let old = *s;
            for r in 0..4 {
                for c in 0..4 {
                    let from = if inverse {
                        (c + 4 - r) % 4
                    } else {
                        (c + r) % 4
                    };
                    s[4 * c + r] = old[4 * from + r];
                }
            }
        }

        fn mix_columns(s: &mut Block, m: [u8; 4]) {
            for c in 0..4 {
                let col: [u8; 4] = s[4 * c..4 * c + 4].try_into().unwrap();
                for r in 0..4 {
                    s[4 * c + r] = (0..4).fold(0, |acc, k| acc ^ mul(m[k], col[(r + k) % 4]));
                }
            }
        }

        pub fn encrypt(&self, block: &mut Block) {
            let nr = self.round_keys.len() - 1;
            Self::add(block, &self.round_keys[0]);
            for round in 1..=nr {
                block
                    .iter_mut()
                    .for_each(|b| *b = self.sbox[usize::from(*b)]);
                Self::shift_rows(block, false);
                if round != nr {
                    Self::mix_columns(block, [2, 3, 1, 1]);
                }
                Self::add(block, &self.round_keys[round]);
            }
        }

        pub fn decrypt(&self, block: &mut Block) {
            let nr = self.round_keys.len() - 1;
            Self::add(block, &self.round_keys[nr]);
            for round in (0..nr).rev() {
                Self::shift_rows(block, true);
                block
                    .iter_mut()
                    .for_each(|b| *b = self.inv_sbox[usize::from(*b)]);
                Self::add(block, &self.round_keys[round]);
                if round != 0 {
                    Self::mix_columns(block, [0x0e, 0x0b, 0x0d, 0x09]);
                }
            }
        }
    }
}

fn block(hex_text: &str) -> Block {
    hex::decode(hex_text).unwrap().try_into().unwrap()
}

fn random_key(rng: &mut impl RngCore, len: usize) -> Vec<u8> {
    let mut key = vec![0u8; len];
    rng.fill_bytes(&mut key);
    key
}

/// Runs a kernel in place and with separate buffers, checks that both
/// agree (output and final state), and returns the output and state.
fn run_kernel(
    input: &[u8],
    state: Block,
    kernel: impl Fn(&mut Block, InOut<'_>),
) -> (Vec<u8>, Block) {
    let mut in_place = input.to_vec();
    let mut state_in_place = state;
    kernel(&mut state_in_place, InOut::InPlace(&mut in_place));
    let mut separate = vec![0u8; input.len()];
    let mut state_separate = state;
    kernel(
        &mut state_separate,
        InOut::separate(input, &mut separate).unwrap(),
    );
    assert_eq!(in_place, separate, "in place and separate buffers differ");
    assert_eq!(state_in_place, state_separate, "final states differ");
    (in_place, state_in_place)
}

fn ecb_encrypt(key: &Key, input: &[u8]) -> Vec<u8> {
    run_kernel(input, [0; 16], |_, io| key.ecb_encrypt(io)).0
}

fn ecb_decrypt(key: &Key, input: &[u8]) -> Vec<u8> {
    run_kernel(input, [0; 16], |_, io| key.ecb_decrypt(io)).0
}

fn ctr(key: &Key, counter: Block, width: CounterWidth, input: &[u8]) -> (Vec<u8>, Block) {
    run_kernel(input, counter, |c, io| key.ctr(c, width, io))
}

/// Reference CBC encryption over the reference cipher.
fn reference_cbc_encrypt(aes: &reference::Aes, iv: Block, input: &[u8]) -> (Vec<u8>, Block) {
    let mut chain = iv;
    let mut out = Vec::new();
    for chunk in input.chunks(16) {
        chain.iter_mut().zip(chunk).for_each(|(c, p)| *c ^= p);
        aes.encrypt(&mut chain);
        out.extend_from_slice(&chain);
    }
    (out, chain)
}

/// Reference keystream modes: block `i` is input XOR E(register), then
/// `next(register, keystream, output block)` sets the next register.
fn reference_keystream_xor(
    aes: &reference::Aes,
    register: Block,
    input: &[u8],
    next: impl Fn(&mut Block, &Block, &[u8]),
) -> (Vec<u8>, Block) {
    let mut reg = register;
    let mut out = Vec::new();
    for chunk in input.chunks(16) {
        let mut ks = reg;
        aes.encrypt(&mut ks);
        let produced: Vec<u8> = chunk.iter().zip(ks).map(|(a, b)| a ^ b).collect();
        next(&mut reg, &ks, &produced);
        out.extend_from_slice(&produced);
    }
    (out, reg)
}

fn reference_ctr(
    aes: &reference::Aes,
    counter: Block,
    width: CounterWidth,
    input: &[u8],
) -> (Vec<u8>, Block) {
    reference_keystream_xor(aes, counter, input, |reg, _, _| width.add(reg, 1))
}

const FIPS197_PLAINTEXT: &str = "00112233445566778899aabbccddeeff";
const FIPS197_CIPHERTEXTS: [(usize, &str); 3] = [
    (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
    (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
    (32, "8ea2b7ca516745bfeafc49904b496089"),
];

#[test]
fn sbox_circuits_match_the_definition_on_every_byte() {
    let sbox = reference::sbox_table();
    let inv_sbox = reference::inv_sbox_table();
    // Spot values from FIPS 197 (figure 7 and section 5.1.1).
    assert_eq!((sbox[0x00], sbox[0x53], sbox[0xff]), (0x63, 0xed, 0x16));
    assert_eq!(inv_sbox[0xed], 0x53);
    for quarter in 0..4u8 {
        let input: Batch = core::array::from_fn(|i| 64 * quarter + i as u8);
        let mut state = bitslice(&input);
        sub_bytes(&mut state);
        let mut forward = [0u8; BATCH_BYTES];
        unbitslice(&state, &mut forward);

        let shifted: Batch = input.map(|x| x ^ SBOX_CONSTANT);
        let mut state = bitslice(&shifted);
        inv_sub_bytes(&mut state);
        let mut inverse = [0u8; BATCH_BYTES];
        unbitslice(&state, &mut inverse);

        for (i, &x) in input.iter().enumerate() {
            let x_index = usize::from(x);
            assert_eq!(forward[i] ^ SBOX_CONSTANT, sbox[x_index], "S({x:#04x})");
            assert_eq!(inverse[i], inv_sbox[x_index], "S^-1({x:#04x})");
        }
    }
    for x in 0..=255u8 {
        let word = sub_word(u32::from_be_bytes([x, x ^ 1, x ^ 0x80, !x])).to_be_bytes();
        let want = [x, x ^ 1, x ^ 0x80, !x].map(|b| sbox[usize::from(b)]);
        assert_eq!(word, want);
    }
}

#[test]
fn bitslice_layout_and_round_trip() {
    let mut rng = rand::rng();
    for _ in 0..50 {
        let mut batch = [0u8; BATCH_BYTES];
        rng.fill_bytes(&mut batch);
        let state = bitslice(&batch);
        for block in 0..4 {
            for row in 0..4 {
                for column in 0..4 {
                    let byte = batch[16 * block + 4 * column + row];
                    let position = 16 * row + 4 * column + block;
                    for (j, plane) in state.iter().enumerate() {
                        assert_eq!(
                            (plane >> position) & 1,
                            u64::from((byte >> j) & 1),
                            "block {block} row {row} column {column} bit {j}"
                        );
                    }
                }
            }
        }
        let mut back = [0u8; BATCH_BYTES];
        unbitslice(&state, &mut back);
        assert_eq!(back, batch);
    }
}

#[test]
fn fips197_appendix_c_all_key_sizes() {
    let key: Vec<u8> = (0u8..32).collect();
    for (len, ciphertext) in FIPS197_CIPHERTEXTS {
        let aes = Key::boxed(&key[..len]);
        assert_eq!(aes.rounds, len / 4 + 6);
        let mut b = block(FIPS197_PLAINTEXT);
        aes.encrypt_block(&mut b);
        assert_eq!(b, block(ciphertext), "AES-{} encrypt", len * 8);
        aes.decrypt_block(&mut b);
        assert_eq!(b, block(FIPS197_PLAINTEXT), "AES-{} decrypt", len * 8);
    }
}

/// Reads round key `round` back out of its fixsliced form.
fn decode_round_key(key: &Key, round: usize) -> Block {
    let mut batch = [0u8; BATCH_BYTES];
    unbitslice(&key.round_keys[round], &mut batch);
    let constant = if round > 0 { SBOX_CONSTANT } else { 0 };
    let drift = round % 4;
    let mut real = [0u8; 16];
    for column in 0..4 {
        for row in 0..4 {
            let from_column = (column + 4 - (drift * row) % 4) % 4;
            real[4 * from_column + row] = batch[4 * column + row] ^ constant;
            // All four block slots carry the same key.
            for slot in 1..4 {
                assert_eq!(batch[16 * slot + 4 * column + row], batch[4 * column + row]);
            }
        }
    }
    real
}

#[test]
fn fips197_appendix_a_key_expansion() {
    // (key, [(round key index, its four words)]) from FIPS 197 A.1-A.3.
    let cases: [(&str, [(usize, &str); 2]); 3] = [
        (
            "2b7e151628aed2a6abf7158809cf4f3c",
            [
                (1, "a0fafe1788542cb123a339392a6c7605"),
                (10, "d014f9a8c9ee2589e13f0cc8b6630ca6"),
            ],
        ),
        (
            "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            [
                (1, "62f8ead2522c6b7bfe0c91f72402f5a5"),
                (12, "e98ba06f448c773c8ecc720401002202"),
            ],
        ),
        (
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            [
                (2, "9ba354118e6925afa51a8b5f2067fcde"),
                (14, "fe4890d1e6188d0b046df344706c631e"),
            ],
        ),
    ];
    for (key_hex, checks) in cases {
        let key_bytes = hex::decode(key_hex).unwrap();
        let aes = Key::boxed(&key_bytes);
        let want = reference::Aes::new(&key_bytes);
        for (round, words) in checks {
            assert_eq!(
                decode_round_key(&aes, round),
                block(words),
                "{key_hex} w{round}"
            );
        }
        for round in 0..=aes.rounds {
            assert_eq!(decode_round_key(&aes, round), want.round_key(round));
        }
        for unused in &aes.round_keys[aes.rounds + 1..] {
            assert_eq!(unused, &[0; 8]);
        }
    }
}

const SP800_38A_PLAINTEXT: &str = concat!(
    "6bc1bee22e409f96e93d7e117393172a",
    "ae2d8a571e03ac9c9eb76fac45af8e51",
    "30c81c46a35ce411e5fbc1191a0a52ef",
    "f69f2445df4f9b17ad2b417be66c3710"
);
const SP800_38A_KEY_128: &str = "2b7e151628aed2a6abf7158809cf4f3c";
const SP800_38A_KEY_256: &str = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const SP800_38A_IV: &str = "000102030405060708090a0b0c0d0e0f";
const SP800_38A_COUNTER: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/// (key, F.1 ECB, F.2 CBC, F.5 CTR ciphertexts).
const SP800_38A_VECTORS: [(&str, &str, &str, &str); 2] = [
    (
        SP800_38A_KEY_128,
        concat!(
            "3ad77bb40d7a3660a89ecaf32466ef97",
            "f5d3d58503b9699de785895a96fdbaaf",
            "43b1cd7f598ece23881b00e3ed030688",
            "7b0c785e27e8ad3f8223207104725dd4"
        ),
        concat!(
            "7649abac8119b246cee98e9b12e9197d",
            "5086cb9b507219ee95db113a917678b2",
            "73bed6b8e3c1743b7116e69e22229516",
            "3ff1caa1681fac09120eca307586e1a7"
        ),
        concat!(
            "874d6191b620e3261bef6864990db6ce",
            "9806f66b7970fdff8617187bb9fffdff",
            "5ae4df3edbd5d35e5b4f09020db03eab",
            "1e031dda2fbe03d1792170a0f3009cee"
        ),
    ),
    (
        SP800_38A_KEY_256,
        concat!(
            "f3eed1bdb5d2a03c064b5a7e3db181f8",
            "591ccb10d410ed26dc5ba74a31362870",
            "b6ed21b99ca6f4f9f153e7b1beafed1d",
            "23304b7a39f9f3ff067d8d8f9e24ecc7"
        ),
        concat!(
            "f58c4c04d6e5f1ba779eabfb5f7bfbd6",
            "9cfc4e967edb808d679f777bc6702c7d",
            "39f23369a9d9bacfa530e26304231461",
            "b2eb05e2c39be9fcda6c19078c6a9d1b"
        ),
        concat!(
            "601ec313775789a5b7a7f504bbf3d228",
            "f443e3ca4d62b59aca84e990cacaf5c5",
            "2b0930daa23de94ce87017ba2d84988d",
            "dfc9c58db67aada613c2dd08457941a6"
        ),
    ),
];

#[test]
fn sp800_38a_ecb_cbc_ctr() {
    let plaintext = hex::decode(SP800_38A_PLAINTEXT).unwrap();
    for (key_hex, ecb_hex, cbc_hex, ctr_hex) in SP800_38A_VECTORS {
        let aes = Key::boxed(&hex::decode(key_hex).unwrap());
        let (ecb_ct, cbc_ct, ctr_ct) = (
            hex::decode(ecb_hex).unwrap(),
            hex::decode(cbc_hex).unwrap(),
            hex::decode(ctr_hex).unwrap(),
        );

        assert_eq!(ecb_encrypt(&aes, &plaintext), ecb_ct, "F.1 ECB encrypt");
        assert_eq!(ecb_decrypt(&aes, &ecb_ct), plaintext, "F.1 ECB decrypt");

        let iv = block(SP800_38A_IV);
        let (ct, chain) = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
        assert_eq!(ct, cbc_ct, "F.2 CBC encrypt");
        assert_eq!(chain[..], cbc_ct[48..]);
        let (pt, chain) = run_kernel(&cbc_ct, iv, |c, io| aes.cbc_decrypt(c, io));
        assert_eq!(pt, plaintext, "F.2 CBC decrypt");
        assert_eq!(chain[..], cbc_ct[48..]);

        let counter = block(SP800_38A_COUNTER);
        let (ct, next) = ctr(&aes, counter, CounterWidth::Full128, &plaintext);
        assert_eq!(ct, ctr_ct, "F.5 CTR encrypt");
        assert_eq!(next, block("f0f1f2f3f4f5f6f7f8f9fafbfcfdff03"));
        let (pt, _) = ctr(&aes, counter, CounterWidth::Full128, &ctr_ct);
        assert_eq!(pt, plaintext, "F.5 CTR decrypt");

        // Block by block gives the same as one call (state carries over).
        let mut chain = iv;
        let mut pieces = Vec::new();
        for piece in plaintext.chunks(16) {
            let (ct, next) = run_kernel(piece, chain, |c, io| aes.cbc_encrypt(c, io));
            pieces.extend(ct);
            chain = next;
        }
        assert_eq!(pieces, cbc_ct);
    }
}

#[test]
fn random_round_trips_every_mode() {
    let mut rng = rand::rng();
    for key_len in [16, 24, 32] {
        for blocks in 1..=20 {
            let aes = Key::boxed(&random_key(&mut rng, key_len));
            let mut plaintext = vec![0u8; 16 * blocks];
            rng.fill_bytes(&mut plaintext);
            let iv: Block = rng.random();

            let ct = ecb_encrypt(&aes, &plaintext);
            assert_ne!(ct, plaintext);
            assert_eq!(ecb_decrypt(&aes, &ct), plaintext);

            let (ct, c1) = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
            let (pt, c2) = run_kernel(&ct, iv, |c, io| aes.cbc_decrypt(c, io));
            assert_eq!((pt.as_slice(), c1), (plaintext.as_slice(), c2), "CBC");

            let (ct, r1) = run_kernel(&plaintext, iv, |r, io| aes.cfb128_encrypt(r, io));
            let (pt, r2) = run_kernel(&ct, iv, |r, io| aes.cfb128_decrypt(r, io));
            assert_eq!((pt.as_slice(), r1), (plaintext.as_slice(), r2), "CFB");

            let (ct, r1) = run_kernel(&plaintext, iv, |r, io| aes.ofb(r, io));
            let (pt, r2) = run_kernel(&ct, iv, |r, io| aes.ofb(r, io));
            assert_eq!((pt.as_slice(), r1), (plaintext.as_slice(), r2), "OFB");

            let (ct, n1) = ctr(&aes, iv, CounterWidth::Low32, &plaintext);
            let (pt, n2) = ctr(&aes, iv, CounterWidth::Low32, &ct);
            assert_eq!((pt.as_slice(), n1), (plaintext.as_slice(), n2), "CTR");

            for b in plaintext.chunks(16) {
                let mut x: Block = b.try_into().unwrap();
                aes.encrypt_block(&mut x);
                aes.decrypt_block(&mut x);
                assert_eq!(x[..], *b);
            }
        }
    }
}

#[test]
fn single_blocks_match_reference_for_random_keys() {
    let mut rng = rand::rng();
    for key_len in [16, 24, 32] {
        for _ in 0..300 {
            let key = random_key(&mut rng, key_len);
            let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
            let pt: Block = rng.random();
            let (mut got, mut expected) = (pt, pt);
            aes.encrypt_block(&mut got);
            want.encrypt(&mut expected);
            assert_eq!(got, expected, "encrypt, key {}", hex::encode(&key));
            aes.decrypt_block(&mut got);
            assert_eq!(got, pt, "decrypt, key {}", hex::encode(&key));
            let mut ct = pt;
            want.decrypt(&mut ct);
            aes.encrypt_block(&mut ct);
            assert_eq!(ct, pt, "E(D_ref(x)), key {}", hex::encode(&key));
        }
    }
}

#[test]
fn multi_block_modes_match_reference() {
    let mut rng = rand::rng();
    for key_len in [16, 24, 32] {
        for _ in 0..10 {
            let key = random_key(&mut rng, key_len);
            let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
            let blocks = rng.random_range(1..=23);
            let mut plaintext = vec![0u8; 16 * blocks];
            rng.fill_bytes(&mut plaintext);
            let iv: Block = rng.random();

            let expected_ecb: Vec<u8> = plaintext
                .chunks(16)
                .flat_map(|b| {
                    let mut b: Block = b.try_into().unwrap();
                    want.encrypt(&mut b);
                    b
                })
                .collect();
            assert_eq!(ecb_encrypt(&aes, &plaintext), expected_ecb);
            assert_eq!(ecb_decrypt(&aes, &expected_ecb), plaintext);

            let (cbc_ct, cbc_chain) = reference_cbc_encrypt(&want, iv, &plaintext);
            let got = run_kernel(&plaintext, iv, |c, io| aes.cbc_encrypt(c, io));
            assert_eq!(got, (cbc_ct.clone(), cbc_chain));
            let got = run_kernel(&cbc_ct, iv, |c, io| aes.cbc_decrypt(c, io));
            assert_eq!(got, (plaintext.clone(), cbc_chain));

            let cfb =
                reference_keystream_xor(&want, iv, &plaintext, |r, _, ct| r.copy_from_slice(ct));
            let got = run_kernel(&plaintext, iv, |r, io| aes.cfb128_encrypt(r, io));
            assert_eq!(got, cfb, "CFB encrypt");
            let got = run_kernel(&cfb.0, iv, |r, io| aes.cfb128_decrypt(r, io));
            assert_eq!(got, (plaintext.clone(), cfb.1), "CFB decrypt");

            let ofb = reference_keystream_xor(&want, iv, &plaintext, |r, ks, _| *r = *ks);
            let got = run_kernel(&plaintext, iv, |r, io| aes.ofb(r, io));
            assert_eq!(got, ofb, "OFB");

            for width in [CounterWidth::Full128, CounterWidth::Low32] {
                let got = ctr(&aes, iv, width, &plaintext);
                assert_eq!(
                    got,
                    reference_ctr(&want, iv, width, &plaintext),
                    "{width:?}"
                );
            }
        }
    }
}

#[test]
fn ctr_counter_wraparound_matches_reference() {
    let mut rng = rand::rng();
    let prefix: [u8; 12] = rng.random();
    let mut low32 = [0u8; 16];
    low32[..12].copy_from_slice(&prefix);
    low32[12..].copy_from_slice(&0xffff_fffeu32.to_be_bytes());
    let cases = [
        (CounterWidth::Low32, low32),
        (CounterWidth::Full128, ((1u128 << 64) - 2).to_be_bytes()),
        (
            CounterWidth::Full128,
            u128::MAX.wrapping_sub(1).to_be_bytes(),
        ),
    ];
    for key_len in [16, 24, 32] {
        let key = random_key(&mut rng, key_len);
        let (aes, want) = (Key::boxed(&key), reference::Aes::new(&key));
        for (width, counter) in cases {
            for blocks in [1, 2, 3, 4, 5, 7, 9] {
                let mut input = vec![0u8; 16 * blocks];
                rng.fill_bytes(&mut input);
                let got = ctr(&aes, counter, width, &input);
                let expected = reference_ctr(&want, counter, width, &input);
                assert_eq!(got, expected, "{width:?} from {}", hex::encode(counter));
            }
            // The counter after the wrap is the expected one.
            let (_, next) = ctr(&aes, counter, width, &[0u8; 64]);
            let mut expected = counter;
            width.add(&mut expected, 4);
            assert_eq!(next, expected);
            if width == CounterWidth::Low32 {
                assert_eq!(next[..12], prefix, "Low32 must not carry");
            }
        }
    }
}

#[test]
fn wipe_zeroes_round_keys() {
    let mut aes = Key::boxed(&[0x42; 32]);
    let copy = aes.clone();
    assert!(aes.round_keys.iter().flatten().any(|&w| w != 0));
    aes.wipe();
    assert!(aes.round_keys.iter().flatten().all(|&w| w == 0));
    // A clone owns its own copy.
    assert!(copy.round_keys.iter().flatten().any(|&w| w != 0));
}

/// Throughput and key-setup figures; run with
/// `cargo test --release -p hwcrypt --lib soft -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark"]
fn throughput() {
    use core::hint::black_box;
    use std::time::Instant;

    const LEN: usize = 16 * 1024;
    const ITERATIONS: usize = 2000;
    let mut buf = vec![0u8; LEN];
    for key_len in [16, 32] {
        let key = [7u8; 32];
        let aes = Key::boxed(&key[..key_len]);
        let mut report = |name: &str, f: &mut dyn FnMut(&mut [u8])| {
            f(&mut buf);
            let start = Instant::now();
            for _ in 0..ITERATIONS {
                f(black_box(&mut buf));
            }
            let secs = start.elapsed().as_secs_f64();
            let mbps = (LEN * ITERATIONS) as f64 / secs / 1e6;
            println!("AES-{} {name:<12} {mbps:8.1} MB/s", key_len * 8);
        };
        report("ECB encrypt", &mut |b| aes.ecb_encrypt(InOut::InPlace(b)));
        report("ECB decrypt", &mut |b| aes.ecb_decrypt(InOut::InPlace(b)));
        let mut counter = [0u8; 16];
        report("CTR", &mut |b| {
            aes.ctr(&mut counter, CounterWidth::Full128, InOut::InPlace(b))
        });

        let keys = 100_000;
        let start = Instant::now();
        for i in 0..keys {
            let mut k = key;
            k[0] = i as u8;
            black_box(Key::boxed(black_box(&k[..key_len])));
        }
        let ns = start.elapsed().as_nanos() as f64 / keys as f64;
        println!("AES-{} key setup  {ns:8.0} ns", key_len * 8);
    }
}
