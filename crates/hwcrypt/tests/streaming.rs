//! The streaming API against the one-shot API, one trial per family and
//! backend forced by name (`stream::gcm::vaes-avx2::AES-256`).
//!
//! * `gcm` / `chacha20-poly1305`: every message length 0..=4096 and random
//!   larger ones (up to 300 KiB), with random associated data (0..=300
//!   bytes, now and then up to 2 KiB), cut into random pieces (sizes
//!   0..=300, now and then a large one or a run of 16 KiB pieces; or a
//!   short piece, 0..=64 bytes, and the rest in one), each
//!   piece in place or into a separate garbage-filled buffer: the stream
//!   gives the one-shot ciphertext and tag byte for byte; a different split
//!   decrypts it and `verify` accepts the tag; a flipped tag bit, a flipped
//!   ciphertext bit or a tag of the wrong length is rejected. GCM also takes
//!   random IV lengths and tag lengths. One stream serves many messages.
//! * `chacha20`: the raw ChaCha20 with OpenSSL's 16-byte IV, random splits
//!   against `chacha20_xor` on `soft`, with counters just below 2^32 so the
//!   counter carries into the first nonce word (and that word wraps).
//! * `order`: calls out of order (associated data after data, data or a tag
//!   before `start` or after `finish`, mixed directions, `finish` after
//!   decryption, `verify` after encryption) are errors, never panics, and
//!   the stream works again after the next `start`; a copy made in the
//!   middle of a message (OpenSSL's `dupctx`) goes on as the original.
//!
//! Random data comes from a seeded RNG: the base seed is printed at the start
//! and in every failure message; `HWCRYPT_TEST_SEED=0x...` repeats a run.

mod common;

use common::first_difference;
use hwcrypt::aead::Aead;
use hwcrypt::chacha20poly1305::{self as cp, ChaCha20, ChaCha20Poly1305, ChaCha20Poly1305Stream};
use hwcrypt::gcm::{AesGcm, AesGcmStream};
use hwcrypt::registry::Algorithm;
use hwcrypt::{Backend, Error};
use libtest_mimic::{Arguments, Failed, Trial};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const SWEEP_MAX: usize = 4096;
const LARGE_LENGTHS: usize = 8;
const LARGE_MAX: usize = 300 << 10;

fn bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

fn check(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    match first_difference(got, want) {
        None => Ok(()),
        Some(d) => Err(format!("{what}: {d}")),
    }
}

/// Random piece sizes summing to `len`: a quarter of the time a short
/// piece and the rest; now and then equal pieces of 1..=600 bytes; else
/// mostly 0..=300 bytes, now and then a large piece or a run of 16 KiB
/// pieces.
fn split(rng: &mut StdRng, len: usize) -> Vec<usize> {
    if rng.random_range(0..4) == 0 {
        // A short first piece, then all the rest: the whole-block kernels
        // on every length, from every offset inside a block.
        let k = rng.random_range(0..=64.min(len));
        return vec![k, len - k];
    }
    if rng.random_range(0..6) == 0 {
        // Equal pieces, as `openssl speed -evp` gives them (one endless
        // message in 16..16384-byte updates): the buffered keystream's
        // refills from every offset.
        let p = rng.random_range(1..=600);
        let mut pieces = vec![p; len / p];
        pieces.push(len % p);
        return pieces;
    }
    let mut pieces = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = match rng.random_range(0..16) {
            0 => rng.random_range(0..=left),
            1 => 16 << 10,
            2 => 0,
            _ => rng.random_range(0..=300),
        }
        .min(left);
        pieces.push(n);
        left -= n;
    }
    if rng.random_range(0..4) == 0 {
        pieces.push(0);
    }
    pieces
}

fn summary(pieces: &[usize]) -> String {
    let shown: Vec<String> = pieces.iter().take(12).map(|p| p.to_string()).collect();
    let more = if pieces.len() > 12 { ", ..." } else { "" };
    format!("[{}{more}] ({} pieces)", shown.join(", "), pieces.len())
}

/// What a streaming AEAD offers, so one sweep serves both.
trait Stream {
    fn start(&mut self, iv: &[u8]) -> Result<(), Error>;
    fn aad(&mut self, aad: &[u8]) -> Result<(), Error>;
    fn encrypt(&mut self, buf: &mut [u8]) -> Result<(), Error>;
    fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error>;
    fn decrypt(&mut self, buf: &mut [u8]) -> Result<(), Error>;
    fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error>;
    fn finish(&mut self) -> Result<Vec<u8>, Error>;
    fn verify(&mut self, tag: &[u8]) -> Result<(), Error>;
    /// A deep copy, message state included (OpenSSL's `dupctx`).
    fn duplicate(&self) -> Box<dyn Stream>;
}

macro_rules! impl_stream {
    ($ty:ty) => {
        impl Stream for $ty {
            fn start(&mut self, iv: &[u8]) -> Result<(), Error> {
                <$ty>::start(self, iv)
            }
            fn aad(&mut self, aad: &[u8]) -> Result<(), Error> {
                <$ty>::aad(self, aad)
            }
            fn encrypt(&mut self, buf: &mut [u8]) -> Result<(), Error> {
                <$ty>::encrypt(self, buf)
            }
            fn encrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
                <$ty>::encrypt_to(self, input, output)
            }
            fn decrypt(&mut self, buf: &mut [u8]) -> Result<(), Error> {
                <$ty>::decrypt(self, buf)
            }
            fn decrypt_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<(), Error> {
                <$ty>::decrypt_to(self, input, output)
            }
            fn finish(&mut self) -> Result<Vec<u8>, Error> {
                <$ty>::finish(self).map(|t| AsRef::<[u8]>::as_ref(&t).to_vec())
            }
            fn verify(&mut self, tag: &[u8]) -> Result<(), Error> {
                <$ty>::verify(self, tag)
            }
            fn duplicate(&self) -> Box<dyn Stream> {
                Box::new(<$ty>::duplicate(self))
            }
        }
    };
}

impl_stream!(AesGcmStream<AesGcm>);
impl_stream!(ChaCha20Poly1305Stream<ChaCha20Poly1305>);

/// Feeds `data` through `stream` in the pieces of `split` (each in place
/// or into a separate garbage-filled buffer, at random), encrypting or
/// decrypting; returns the output.
fn run_pieces(
    stream: &mut dyn Stream,
    rng: &mut StdRng,
    encrypt: bool,
    data: &[u8],
    pieces: &[usize],
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(data.len());
    let mut at = 0;
    for &n in pieces {
        let input = &data[at..at + n];
        let mut piece = if rng.random_bool(0.5) {
            let mut p = input.to_vec();
            if encrypt {
                stream.encrypt(&mut p)?;
            } else {
                stream.decrypt(&mut p)?;
            }
            p
        } else {
            // At an odd offset in a garbage-filled buffer with guard bytes.
            let at = rng.random_range(0..16);
            let mut out = bytes(rng, at + n + 16);
            let guard = out.clone();
            let before = input.to_vec();
            if encrypt {
                stream.encrypt_to(input, &mut out[at..at + n])?;
            } else {
                stream.decrypt_to(input, &mut out[at..at + n])?;
            }
            assert!(input == before, "a separate input was changed");
            assert!(
                out[..at] == guard[..at] && out[at + n..] == guard[at + n..],
                "bytes around a separate output were changed"
            );
            out[at..at + n].to_vec()
        };
        out.append(&mut piece);
        at += n;
    }
    Ok(out)
}

/// One message: `seal` gives the one-shot ciphertext and tag; the stream
/// must give the same, open it again in other pieces, and reject tampering.
#[allow(clippy::too_many_arguments)]
fn one_message(
    stream: &mut dyn Stream,
    rng: &mut StdRng,
    iv: &[u8],
    aad: &[u8],
    pt: &[u8],
    want_ct: &[u8],
    want_tag: &[u8],
) -> Result<(), String> {
    let aad_split = split(rng, aad.len());
    let pt_split = split(rng, pt.len());
    let at = |what: String| {
        format!(
            "len {}, aad {}, iv {}, tag {}: {what}; aad pieces {}, data pieces {}",
            pt.len(),
            aad.len(),
            iv.len(),
            want_tag.len(),
            summary(&aad_split),
            summary(&pt_split)
        )
    };
    let feed_aad = |stream: &mut dyn Stream, pieces: &[usize]| -> Result<(), Error> {
        let mut off = 0;
        for &n in pieces {
            stream.aad(&aad[off..off + n])?;
            off += n;
        }
        Ok(())
    };

    stream.start(iv).map_err(|e| at(format!("start: {e}")))?;
    feed_aad(stream, &aad_split).map_err(|e| at(format!("aad: {e}")))?;
    let ct =
        run_pieces(stream, rng, true, pt, &pt_split).map_err(|e| at(format!("encrypt: {e}")))?;
    let tag = stream.finish().map_err(|e| at(format!("finish: {e}")))?;
    check("ciphertext", &ct, want_ct).map_err(at)?;
    check("tag", &tag, want_tag).map_err(at)?;

    // Decrypt in other pieces.
    let aad_split = split(rng, aad.len());
    let ct_split = split(rng, ct.len());
    stream.start(iv).map_err(|e| at(format!("start: {e}")))?;
    feed_aad(stream, &aad_split).map_err(|e| at(format!("aad (open): {e}")))?;
    let back =
        run_pieces(stream, rng, false, &ct, &ct_split).map_err(|e| at(format!("decrypt: {e}")))?;
    check("decrypted plaintext", &back, pt).map_err(at)?;
    stream
        .verify(&tag)
        .map_err(|e| at(format!("verify of the right tag: {e}")))?;

    // A flipped tag bit, or (for non-empty messages) a flipped ciphertext bit.
    let mut bad_tag = tag.clone();
    let bit = rng.random_range(0..bad_tag.len() * 8);
    bad_tag[bit / 8] ^= 1 << (bit % 8);
    stream.start(iv).map_err(|e| at(format!("start: {e}")))?;
    feed_aad(stream, &aad_split).map_err(|e| at(format!("aad: {e}")))?;
    let mut bad_ct = ct.clone();
    let tag_to_give = if !bad_ct.is_empty() && rng.random_bool(0.5) {
        let bit = rng.random_range(0..bad_ct.len() * 8);
        bad_ct[bit / 8] ^= 1 << (bit % 8);
        &tag
    } else {
        &bad_tag
    };
    run_pieces(stream, rng, false, &bad_ct, &ct_split).map_err(|e| at(format!("decrypt: {e}")))?;
    match stream.verify(tag_to_give) {
        Err(Error::AuthenticationFailed) => {}
        r => return Err(at(format!("tampered message: verify gave {r:?}"))),
    }
    // A tag one byte short is a length error (the length is bound).
    stream.start(iv).map_err(|e| at(format!("start: {e}")))?;
    match stream.verify(&tag[..tag.len() - 1]) {
        Err(Error::InvalidTagLength { .. }) => Ok(()),
        r => Err(at(format!("short tag: verify gave {r:?}"))),
    }
}

/// The lengths of a sweep: 0..=4096, then random larger ones.
fn lengths(rng: &mut StdRng) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=SWEEP_MAX).collect();
    for _ in 0..LARGE_LENGTHS {
        v.push(rng.random_range(SWEEP_MAX + 1..=LARGE_MAX));
    }
    v
}

fn aad_len(rng: &mut StdRng) -> usize {
    if rng.random_range(0..16) == 0 {
        rng.random_range(0..=2048)
    } else {
        rng.random_range(0..=300)
    }
}

fn gcm(backend: Backend, bits: usize, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut stream = None;
    for len in lengths(&mut rng) {
        // A fresh key (and tag length) every 64 messages; the stream is
        // reused across the messages in between.
        if len % 64 == 0 || stream.is_none() {
            let key = AesGcm::with_backend(&bytes(&mut rng, bits / 8), backend)
                .map_err(|e| e.to_string())?;
            let tag_len = [16, 16, 16, 15, 14, 13, 12, 8, 4][rng.random_range(0..9)];
            stream = Some(AesGcmStream::with_tag_len(key, tag_len).map_err(|e| e.to_string())?);
        }
        let s = stream.as_mut().expect("made above");
        let iv_len = if rng.random_range(0..4) == 0 {
            rng.random_range(1..=80)
        } else {
            12
        };
        let iv = bytes(&mut rng, iv_len);
        let aad_len = aad_len(&mut rng);
        let aad = bytes(&mut rng, aad_len);
        let pt = bytes(&mut rng, len);
        let mut ct = pt.clone();
        // The one-shot key's tags are 16 bytes; a shorter GCM tag is
        // their prefix (the stream also offers 4 and 8 bytes).
        let tag_len = s.tag_len();
        let tag = s
            .key()
            .seal_in_place_detached_with(&iv, &aad, &mut ct, 16)
            .map_err(|e| format!("one-shot seal: {e}"))?;
        one_message(s, &mut rng, &iv, &aad, &pt, &ct, &tag.as_bytes()[..tag_len])?;
    }
    Ok(())
}

fn chacha20_poly1305(backend: Backend, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut stream = None;
    for len in lengths(&mut rng) {
        if len % 64 == 0 || stream.is_none() {
            let key = ChaCha20Poly1305::with_backend(&bytes(&mut rng, 32), backend)
                .map_err(|e| e.to_string())?;
            stream = Some(ChaCha20Poly1305Stream::new(key));
        }
        let s = stream.as_mut().expect("made above");
        let nonce = bytes(&mut rng, 12);
        let aad_len = aad_len(&mut rng);
        let aad = bytes(&mut rng, aad_len);
        let pt = bytes(&mut rng, len);
        let mut ct = pt.clone();
        let tag = s
            .key()
            .seal_in_place_detached(&nonce, &aad, &mut ct)
            .map_err(|e| format!("one-shot seal: {e}"))?;
        one_message(s, &mut rng, &nonce, &aad, &pt, &ct, &tag)?;
    }
    Ok(())
}

/// The raw ChaCha20 keystream with OpenSSL's IV, built from `chacha20_xor`
/// on `soft`: at the 2^32 wrap the counter carries into nonce word 0.
fn chacha20_reference(key: &[u8], iv: &[u8; 16], data: &mut [u8]) {
    let mut counter = u32::from_le_bytes(iv[..4].try_into().unwrap());
    let mut nonce: [u8; 12] = iv[4..].try_into().unwrap();
    let mut at = 0;
    while at < data.len() {
        let room = ((1u64 << 32) - u64::from(counter)) * 64;
        let n = ((data.len() - at) as u64).min(room) as usize;
        cp::chacha20_xor(Backend::Soft, key, &nonce, counter, &mut data[at..at + n]).unwrap();
        at += n;
        counter = 0;
        let w = u32::from_le_bytes(nonce[..4].try_into().unwrap()).wrapping_add(1);
        nonce[..4].copy_from_slice(&w.to_le_bytes());
    }
}

fn chacha20(backend: Backend, seed: u64) -> Result<(), String> {
    let mut rng = StdRng::seed_from_u64(seed);
    for len in 0..=2048usize {
        let key = bytes(&mut rng, 32);
        let mut iv: [u8; 16] = bytes(&mut rng, 16).try_into().unwrap();
        match len % 4 {
            // Just below the 2^32 wrap of the block counter.
            0 => {
                let below = rng.random_range(1..=40u32);
                iv[..4].copy_from_slice(&0u32.wrapping_sub(below).to_le_bytes())
            }
            // ... and with the first nonce word wrapping too.
            1 => {
                let below = rng.random_range(1..=40u32);
                iv[..4].copy_from_slice(&0u32.wrapping_sub(below).to_le_bytes());
                iv[4..8].fill(0xff);
            }
            _ => {}
        }
        let data = bytes(&mut rng, len);
        let mut want = data.clone();
        chacha20_reference(&key, &iv, &mut want);
        let pieces = split(&mut rng, len);
        let mut c = ChaCha20::with_backend(&key, &iv, backend).map_err(|e| e.to_string())?;
        let mut got = Vec::new();
        let mut at = 0;
        for &n in &pieces {
            let mut p = data[at..at + n].to_vec();
            if rng.random_bool(0.5) {
                c.apply_keystream(&mut p);
            } else {
                let mut out = bytes(&mut rng, n);
                c.apply_keystream_to(&p, &mut out)
                    .map_err(|e| e.to_string())?;
                p = out;
            }
            got.extend_from_slice(&p);
            at += n;
        }
        let ctx = format!(
            "len {len}, counter {:#x}, pieces {}",
            u32::from_le_bytes(iv[..4].try_into().unwrap()),
            summary(&pieces)
        );
        check(&ctx, &got, &want)?;
        // set_iv restarts.
        c.set_iv(&iv).map_err(|e| e.to_string())?;
        let mut again = data.clone();
        c.apply_keystream(&mut again);
        check(&format!("{ctx}, after set_iv"), &again, &want)?;
    }
    Ok(())
}

/// Calls out of order are errors, and the stream recovers at `start`.
fn order(backend: Backend) -> Result<(), String> {
    fn expect(what: &str, r: Result<(), Error>, ok: bool) -> Result<(), String> {
        match (r, ok) {
            (Ok(()), true) => Ok(()),
            (Err(Error::OutOfOrder(_)), false) => Ok(()),
            (r, _) => Err(format!("{what}: {r:?}")),
        }
    }
    let mut streams: Vec<(String, Box<dyn Stream>)> = Vec::new();
    if let Ok(k) = AesGcm::with_backend(&[3; 16], backend) {
        streams.push(("gcm".into(), Box::new(AesGcmStream::new(k))));
    }
    if let Ok(k) = ChaCha20Poly1305::with_backend(&[3; 32], backend) {
        streams.push((
            "chacha20-poly1305".into(),
            Box::new(ChaCha20Poly1305Stream::new(k)),
        ));
    }
    if streams.is_empty() {
        return Err(format!("{backend} runs no AEAD"));
    }
    let iv = [9u8; 12];
    for (name, s) in &mut streams {
        let w = |what: &str| format!("{name}: {what}");
        let mut buf = [0u8; 20];
        expect(&w("aad before start"), s.aad(b"x"), false)?;
        expect(&w("encrypt before start"), s.encrypt(&mut buf), false)?;
        expect(&w("decrypt before start"), s.decrypt(&mut buf), false)?;
        expect(&w("finish before start"), s.finish().map(drop), false)?;
        expect(&w("verify before start"), s.verify(&[0; 16]), false)?;
        // AAD after data.
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        expect(&w("aad"), s.aad(b"abc"), true)?;
        expect(&w("encrypt"), s.encrypt(&mut buf), true)?;
        expect(&w("aad after data"), s.aad(b"late"), false)?;
        expect(&w("decrypt while encrypting"), s.decrypt(&mut buf), false)?;
        expect(&w("verify after encryption"), s.verify(&[0; 16]), false)?;
        let tag = s.finish().map_err(|e| w(&e.to_string()))?;
        // Use after finish.
        expect(&w("encrypt after finish"), s.encrypt(&mut buf), false)?;
        expect(&w("aad after finish"), s.aad(b""), false)?;
        expect(&w("finish twice"), s.finish().map(drop), false)?;
        // Decryption: the other direction and finish are refused.
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        s.aad(b"abc").map_err(|e| w(&e.to_string()))?;
        expect(&w("decrypt"), s.decrypt(&mut buf), true)?;
        expect(&w("encrypt while decrypting"), s.encrypt(&mut buf), false)?;
        expect(
            &w("encrypt_to while decrypting"),
            s.encrypt_to(&[0; 3], &mut [0; 3]),
            false,
        )?;
        expect(&w("finish after decryption"), s.finish().map(drop), false)?;
        expect(&w("aad after data"), s.aad(b"late"), false)?;
        s.verify(&tag).map_err(|e| w(&format!("verify: {e}")))?;
        expect(&w("verify twice"), s.verify(&tag), false)?;
        // A copy made mid-message (after a partial block of each kind)
        // goes on exactly as the original.
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        s.aad(b"seventeen bytes!!").map_err(|e| w(&e.to_string()))?;
        let mut head = [7u8; 70];
        s.encrypt(&mut head).map_err(|e| w(&e.to_string()))?;
        let mut copy = s.duplicate();
        let (mut a, mut b) = ([9u8; 300], [9u8; 300]);
        s.encrypt(&mut a).map_err(|e| w(&e.to_string()))?;
        copy.encrypt(&mut b).map_err(|e| w(&e.to_string()))?;
        let (ta, tb) = (s.finish(), copy.finish());
        if a != b || ta.is_err() || ta != tb {
            return Err(w("a mid-message copy went its own way"));
        }
        // Mismatched separate buffers.
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        match s.encrypt_to(&[0; 4], &mut [0; 3]) {
            Err(Error::LengthMismatch { .. }) => {}
            r => return Err(w(&format!("mismatched buffers: {r:?}"))),
        }
        // An empty data call does not end the associated data.
        expect(&w("empty encrypt"), s.encrypt(&mut []), true)?;
        expect(&w("aad after an empty encrypt"), s.aad(b"abc"), true)?;
        // An AAD-only message verifies under either ending.
        let t = s.finish().map_err(|e| w(&e.to_string()))?;
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        s.aad(b"abc").map_err(|e| w(&e.to_string()))?;
        s.verify(&t)
            .map_err(|e| w(&format!("AAD-only verify: {e}")))?;
        // Bad IVs and tags of the wrong length.
        match s.start(&[]) {
            Err(Error::InvalidNonceLength { .. }) => {}
            r => return Err(w(&format!("empty IV: {r:?}"))),
        }
        s.start(&iv).map_err(|e| w(&e.to_string()))?;
        match s.verify(&[0; 17]) {
            Err(Error::InvalidTagLength { .. }) => {}
            r => return Err(w(&format!("17-byte tag: {r:?}"))),
        }
    }
    // ChaCha20-Poly1305: only 12-byte nonces.
    if let Ok(k) = ChaCha20Poly1305::with_backend(&[3; 32], backend) {
        let mut s = ChaCha20Poly1305Stream::new(&k);
        for n in [8, 11, 13, 24] {
            if !matches!(s.start(&vec![0; n]), Err(Error::InvalidNonceLength { .. })) {
                return Err(format!("chacha20-poly1305: {n}-byte nonce accepted"));
            }
        }
        let text = format!("{s:?}");
        if text.contains("3, 3") || !text.contains(backend.name()) {
            return Err(format!("chacha20-poly1305 Debug: {text}"));
        }
        for n in [0, 12, 15, 17] {
            if !matches!(
                ChaCha20::with_backend(&[3; 32], &vec![0; n], backend),
                Err(Error::InvalidIvLength { .. })
            ) {
                return Err(format!("chacha20: {n}-byte IV accepted"));
            }
        }
    }
    // GCM: tag lengths are SP 800-38D's, and fixed during a message.
    if let Ok(k) = AesGcm::with_backend(&[3; 16], backend) {
        for bad in [0, 3, 5, 11, 17] {
            if AesGcmStream::with_tag_len(&k, bad).is_ok() {
                return Err(format!("gcm: tag length {bad} accepted"));
            }
        }
        // The key's tag length is the stream's default.
        let mut k12 = k.clone();
        k12.set_tag_len(13).map_err(|e| e.to_string())?;
        if AesGcmStream::new(&k12).tag_len() != 13 || AesGcmStream::new(&k).tag_len() != 16 {
            return Err("gcm: the stream does not take the key's tag length".into());
        }
        let mut s = AesGcmStream::with_tag_len(&k, 12).map_err(|e| e.to_string())?;
        s.start(&iv).map_err(|e| e.to_string())?;
        expect(
            "gcm: set_tag_len during a message",
            s.set_tag_len(16),
            false,
        )?;
        let t = s.finish().map_err(|e| e.to_string())?;
        if t.len() != 12 {
            return Err(format!("gcm: {}-byte tag instead of 12", t.len()));
        }
        s.set_tag_len(16).map_err(|e| e.to_string())?;
        let text = format!("{s:?}");
        if !text.contains(backend.name()) || text.contains("3, 3") {
            return Err(format!("gcm Debug: {text}"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- harness

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn trial_seed(base: u64, name: &str) -> u64 {
    mix(base
        ^ name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        }))
}

fn base_seed() -> Result<u64, String> {
    match std::env::var("HWCRYPT_TEST_SEED") {
        Ok(s) => {
            let t = s.trim();
            let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => t.parse(),
            };
            parsed.map_err(|e| format!("HWCRYPT_TEST_SEED={s:?}: {e}"))
        }
        Err(_) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            Ok(mix(now ^ u64::from(std::process::id())))
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let gcm_backends = common::backends(Algorithm::AesGcm);
    let chacha_backends = common::backends(Algorithm::ChaCha20Poly1305);
    let seed = base_seed();

    let mut preamble = vec![common::cpu_line()];
    preamble.extend(common::skip_lines(Algorithm::AesGcm, &gcm_backends));
    preamble.extend(common::skip_lines(
        Algorithm::ChaCha20Poly1305,
        &chacha_backends,
    ));
    match &seed {
        Ok(s) => preamble.push(format!(
            "streaming: base seed {s:#018x} (HWCRYPT_TEST_SEED={s:#018x} repeats this run)"
        )),
        Err(e) => preamble.push(format!("streaming: {e}")),
    }
    common::announce(&preamble, args.list);

    let mut trials = vec![Trial::test("harness::seed", {
        let seed = seed.clone();
        move || seed.map(|_| ()).map_err(Failed::from)
    })];
    let base = seed.unwrap_or(0);
    let note = move |r: Result<(), String>, s: u64| {
        r.map_err(|e| {
            Failed::from(format!(
                "{e} [trial seed {s:#018x}, base HWCRYPT_TEST_SEED={base:#018x}]"
            ))
        })
    };
    for (backend, runnable) in &gcm_backends {
        let (backend, ignored) = (*backend, runnable.is_err());
        for bits in [128, 192, 256] {
            let name = format!("stream::gcm::{backend}::AES-{bits}");
            let s = trial_seed(base, &name);
            trials.push(
                Trial::test(name, move || note(gcm(backend, bits, s), s))
                    .with_ignored_flag(ignored),
            );
        }
    }
    for (backend, runnable) in &chacha_backends {
        let (backend, ignored) = (*backend, runnable.is_err());
        let name = format!("stream::chacha20-poly1305::{backend}");
        let s = trial_seed(base, &name);
        trials.push(
            Trial::test(name, move || note(chacha20_poly1305(backend, s), s))
                .with_ignored_flag(ignored),
        );
        let name = format!("stream::chacha20::{backend}");
        let s = trial_seed(base, &name);
        trials.push(
            Trial::test(name, move || note(chacha20(backend, s), s)).with_ignored_flag(ignored),
        );
    }
    for (backend, _) in &gcm_backends {
        let backend = *backend;
        let runs_any = hwcrypt::registry::check(Algorithm::AesGcm, backend).is_ok()
            || hwcrypt::registry::check(Algorithm::ChaCha20Poly1305, backend).is_ok();
        trials.push(
            Trial::test(format!("stream::order::{backend}"), move || {
                order(backend).map_err(Failed::from)
            })
            .with_ignored_flag(!runs_any),
        );
    }
    libtest_mimic::run(&args, trials).exit();
}
