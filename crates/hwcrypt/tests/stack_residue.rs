//! Key material left on the dead stack (issue 13 §5.3).
//!
//! For every backend this (masked) CPU can run, forced by name, and every
//! algorithm (AES ECB/CBC/CTR/CTR32/CFB128/OFB, AES-GCM, AES-XTS,
//! ChaCha20-Poly1305 one-shot and incremental, the bare ChaCha20,
//! XChaCha20-Poly1305) and key size, this makes a key from
//! a distinctive raw key, runs each operation, re-keys (AES), drops the key,
//! and after each step copies the dead stack below the stack pointer
//! (`SCAN` bytes) into a heap buffer and looks in it for:
//!
//! * `key`: the raw key (every 16-byte window at 4-byte steps);
//! * `rk`: every FIPS 197 round key of the encryption schedule and of the
//!   equivalent inverse cipher's decryption schedule (computed here);
//! * `obj`: every 16-byte piece of the key object's own secret memory, in
//!   whatever form the backend keeps it (fixsliced round keys, broadcast
//!   round keys, H and its powers, Karatsuba operands), read through the
//!   hidden `secret_regions` hook (feature `residue-test`);
//! * `H`: the GHASH key `E(K, 0)`, both byte orders;
//! * `xts`: the XTS "last round key ^ tweak" and "first round key ^ tweak"
//!   values of every block of every unit the operation touches;
//! * `xts-tweak`: the encrypted tweaks themselves (`E(K2, tweak) x^j`, for
//!   every block and the one after the last: with them a block's tweak
//!   can be stripped);
//! * `words`: each ChaCha20 key word (and XChaCha subkey word) broadcast to
//!   four lanes;
//! * `subkey`: the XChaCha20 subkey (16-byte windows);
//! * `poly`: the Poly1305 one-time key (`r`, clamped `r`, `s`).
//!
//! Before each step the same region is zeroed, so what is found was left by
//! that step. The stack is read and written only by the two `asm!` helpers
//! below (`rep stosb` / `rep movsb` below `rsp`, in a thread with a 16 MiB
//! stack), never through Rust references to dead memory.
//!
//! A step passes if everything found is listed for its backend, algorithm
//! and step in [`DECLARED`] (what docs/security.md, "Key material in
//! memory", declares) for the profile the binary was built with: set
//! `HWCRYPT_RESIDUE_PROFILE` to `release` (fat LTO, the default) or `no-lto`
//! (cargo's default release profile, what a dependent crate gets). Entries
//! that no longer occur are reported, not failed. Run by
//! `.ci/steps/20-stack-residue.sh` (`release`) and
//! `.ci/steps/14-constant-time.sh` (`no-lto`, the build its dudect run
//! uses); by hand:
//!
//! ```text
//! cargo test --release -p hwcrypt --features residue-test --test stack_residue
//! HWCRYPT_RESIDUE_PROFILE=no-lto cargo test --profile residue -p hwcrypt \
//!     --features residue-test --test stack_residue
//! ```
//! `HWCRYPT_RESIDUE_TABLE=1` also prints what was found as table entries.

#[cfg(target_arch = "x86_64")]
mod scan {
    use std::arch::asm;

    /// Bytes of dead stack inspected below the stack pointer.
    pub const SCAN: usize = 128 * 1024;
    /// Bytes zeroed before each step (a little more than `SCAN`, so the
    /// region read later lies inside it whatever the helpers' frame sizes).
    const WIPE: usize = SCAN + 8192;

    /// Zeroes `WIPE` bytes below the stack pointer.
    #[inline(never)]
    pub fn wipe_dead_stack() {
        // SAFETY: the memory below `rsp` is this thread's stack (16 MiB,
        // entered near its top) and holds no live data: without `nostack`
        // the compiler keeps nothing in the red zone across this block.
        unsafe {
            asm!(
                "lea rdi, [rsp - {n}]",
                "xor eax, eax",
                "rep stosb",
                n = const WIPE,
                inout("rcx") WIPE => _,
                out("rdi") _,
                out("eax") _,
            );
        }
    }

    /// Copies the `SCAN` bytes below the stack pointer into `out`.
    #[inline(never)]
    pub fn copy_dead_stack(out: &mut [u8; SCAN]) {
        // SAFETY: reads mapped memory of this thread's stack (see above)
        // and writes `SCAN` bytes into `out`, which has exactly that many.
        unsafe {
            asm!(
                "lea rsi, [rsp - {n}]",
                "rep movsb",
                n = const SCAN,
                inout("rcx") SCAN => _,
                inout("rdi") out.as_mut_ptr() => _,
                out("rsi") _,
            );
        }
    }

    /// Copies `len` bytes at `addr` (memory a live key object owns, as its
    /// `secret_regions` reported) into a vector.
    pub fn copy_region(addr: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        // SAFETY: `addr..addr + len` is memory of a live key object (the
        // caller holds it); bytes are copied as bytes (padding included),
        // which `rep movsb` does without any typed read.
        unsafe {
            asm!(
                "rep movsb",
                inout("rcx") len => _,
                inout("rsi") addr => _,
                inout("rdi") out.as_mut_ptr() => _,
            );
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
mod residue {
    use super::scan::{SCAN, copy_dead_stack, copy_region, wipe_dead_stack};
    use hwcrypt::Backend;
    use hwcrypt::aead::Aead;
    use hwcrypt::aes::{Aes, CounterWidth};
    use hwcrypt::chacha20poly1305::{
        ChaCha20, ChaCha20Poly1305, ChaCha20Poly1305Stream, XChaCha20Poly1305, chacha20_xor,
        hchacha20,
    };
    use hwcrypt::gcm::AesGcm;
    use hwcrypt::modes::{Cbc, Cfb128, Ctr, Ecb, Ofb, Xts, sector_tweak};
    use hwcrypt::registry::{self, Algorithm};
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Write as _;

    /// What a found 16-byte value is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Kind {
        Key,
        Rk,
        Obj,
        H,
        XtsTweakKey,
        XtsTweak,
        Words,
        Subkey,
        Poly,
    }

    impl Kind {
        fn name(self) -> &'static str {
            match self {
                Kind::Key => "key",
                Kind::Rk => "rk",
                Kind::Obj => "obj",
                Kind::H => "H",
                Kind::XtsTweakKey => "xts",
                Kind::XtsTweak => "xts-tweak",
                Kind::Words => "words",
                Kind::Subkey => "subkey",
                Kind::Poly => "poly",
            }
        }
    }

    /// Which build an entry of [`DECLARED`] holds for.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Profile {
        Any,
        Release,
        NoLto,
    }

    use Kind::*;
    use Profile::*;

    /// Residue the documentation declares (docs/security.md, "Key material
    /// in memory", and the module docs): (backend, algorithm, step,
    /// profile, kinds). Steps: `new`, `encrypt`, `decrypt`, `rekey`,
    /// `drop` (`encrypt`/`decrypt` are seal/open for the AEADs).
    #[rustfmt::skip]
    pub const DECLARED: &[(&str, &str, &str, Profile, &[Kind])] = &[
        // Compiler spills in kernels (docs/security.md, "Key material in
        // memory"; the module docs of aes, gcm and chacha20poly1305).
        ("aesni", "aes-cfb", "decrypt", Release, &[Key, Rk]),
        ("aesni", "aes-ctr", "decrypt", Any, &[Key, Rk]),
        ("aesni", "aes-ctr", "encrypt", Any, &[Key, Rk]),
        ("aesni", "aes-ctr32", "decrypt", Any, &[Key, Rk]),
        ("aesni", "aes-ctr32", "encrypt", Any, &[Key, Rk]),
        ("aesni", "aes-gcm", "decrypt", Any, &[Rk]),
        ("aesni", "aes-gcm", "encrypt", Any, &[Rk]),
        // Two of the eight tweak registers of the 8-block XTS loop
        // (E(K2, tweak) x^j; kept in memory instead, the loop ran 5-9%
        // slower and, for AES-192, LLVM spilled a round key in their place).
        ("aesni", "aes-xts", "decrypt", Any, &[XtsTweak]),
        ("aesni", "aes-xts", "decrypt stealing", Any, &[XtsTweak]),
        ("aesni", "aes-xts", "decrypt units", Any, &[XtsTweak]),
        ("aesni", "aes-xts", "encrypt", Any, &[XtsTweak]),
        ("aesni", "aes-xts", "encrypt stealing", Any, &[XtsTweak]),
        ("aesni", "aes-xts", "encrypt units", Any, &[XtsTweak]),
        // The avx512 kernels called with the state of the bare ChaCha20 and
        // of the incremental ChaCha20-Poly1305 (found when these steps were
        // added, 2026-11-27; the same kernels' one-shot steps are clean).
        ("avx512", "chacha20-poly1305", "chacha20", Any, &[Key]),
        ("avx512", "chacha20-poly1305", "stream encrypt", Any, &[Key]),
        ("avx512", "chacha20-poly1305", "stream decrypt", Any, &[Key]),
        // Short messages (AES-GCM's short and last-chunk kernels, and the
        // aesni kernels' partial last batch): 1-3 round keys.
        ("aesni", "aes-gcm", "decrypt 100 B", Any, &[Key, Rk]),
        ("aesni", "aes-gcm", "encrypt 300 B", Any, &[Rk]),
        ("aesni", "aes-gcm", "decrypt 300 B", Any, &[Rk]),
        ("vaes-avx2", "aes-gcm", "encrypt 100 B", Any, &[Key, Rk]),
        ("vaes-avx2", "aes-gcm", "encrypt 300 B", Any, &[Key, Rk]),
        ("vaes-avx512", "aes-cbc", "decrypt", NoLto, &[Key, Rk]),
        ("vaes-avx512", "aes-ecb", "decrypt", NoLto, &[Key, Rk]),
        ("vaes-avx512", "aes-ecb", "encrypt", NoLto, &[Key, Rk]),
        // Found 2026-11-29, when `secret_regions` began to report the heap
        // schedules (it had reported the key handles, pointers only, since
        // the schedules moved to the heap, so `obj` saw no key memory).
        // The AES steps: the round-key spills declared above, seen again as
        // pieces of the schedule (two adjacent spills make an 8-byte-offset
        // piece). The GCM steps: the stitched kernels spill GHASH key
        // powers (`H^k` and Karatsuba operands); making their loads
        // volatile moved the spill, not removed it (docs/security.md).
        ("aesni", "aes-cfb", "decrypt", Release, &[Obj]),
        ("vaes-avx512", "aes-cbc", "decrypt", NoLto, &[Obj]),
        ("vaes-avx512", "aes-ecb", "decrypt", NoLto, &[Obj]),
        ("vaes-avx512", "aes-ecb", "encrypt", NoLto, &[Obj]),
        ("aesni", "aes-gcm", "encrypt", Any, &[Obj]),
        ("aesni", "aes-gcm", "decrypt", Any, &[Obj]),
        ("aesni", "aes-gcm", "encrypt 300 B", Any, &[Obj]),
        ("aesni", "aes-gcm", "decrypt 300 B", Any, &[Obj]),
        ("vaes-avx2", "aes-gcm", "encrypt", Any, &[Obj]),
        ("vaes-avx2", "aes-gcm", "decrypt", Any, &[Obj]),
        ("vaes-avx2", "aes-gcm", "encrypt 100 B", NoLto, &[Obj]),
        ("vaes-avx2", "aes-gcm", "decrypt 100 B", Any, &[Obj]),
        ("vaes-avx2", "aes-gcm", "decrypt 300 B", Any, &[Obj]),
        ("vaes-avx512", "aes-gcm", "decrypt", Any, &[Obj]),
        ("vaes-avx512", "aes-gcm", "decrypt 300 B", Release, &[Obj]),
    ];

    /// Residue found and not yet fixed nor declared (expected failures, so
    /// CI stays green while a fix lands): each fix removes its entries.
    /// Also steps new to the scan on a backend no machine at hand runs,
    /// allowed until a run there says what occurs (marked so below).
    /// Same shape as [`DECLARED`]; empty when everything found is declared.
    #[rustfmt::skip]
    pub const KNOWN_UNFIXED: &[(&str, &str, &str, Profile, &[Kind])] = &[
    ];

    /// Every entry that allows residue.
    pub fn entries() -> impl Iterator<
        Item = &'static (
            &'static str,
            &'static str,
            &'static str,
            Profile,
            &'static [Kind],
        ),
    > {
        DECLARED.iter().chain(KNOWN_UNFIXED)
    }

    /// The algorithms under test.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Alg {
        Ecb,
        Cbc,
        Ctr,
        Ctr32,
        Cfb,
        Ofb,
        Gcm,
        Xts,
        ChaCha,
        XChaCha,
    }

    impl Alg {
        pub const ALL: [Alg; 10] = [
            Alg::Ecb,
            Alg::Cbc,
            Alg::Ctr,
            Alg::Ctr32,
            Alg::Cfb,
            Alg::Ofb,
            Alg::Gcm,
            Alg::Xts,
            Alg::ChaCha,
            Alg::XChaCha,
        ];

        pub fn name(self) -> &'static str {
            match self {
                Alg::Ecb => "aes-ecb",
                Alg::Cbc => "aes-cbc",
                Alg::Ctr => "aes-ctr",
                Alg::Ctr32 => "aes-ctr32",
                Alg::Cfb => "aes-cfb",
                Alg::Ofb => "aes-ofb",
                Alg::Gcm => "aes-gcm",
                Alg::Xts => "aes-xts",
                Alg::ChaCha => "chacha20-poly1305",
                Alg::XChaCha => "xchacha20-poly1305",
            }
        }

        fn registry(self) -> Algorithm {
            match self {
                Alg::Gcm => Algorithm::AesGcm,
                Alg::Xts => Algorithm::AesXts,
                Alg::ChaCha | Alg::XChaCha => Algorithm::ChaCha20Poly1305,
                _ => Algorithm::Aes,
            }
        }

        pub fn key_lens(self) -> &'static [usize] {
            match self {
                Alg::Xts => &[32, 48, 64],
                Alg::ChaCha | Alg::XChaCha => &[32],
                _ => &[16, 24, 32],
            }
        }
    }

    // ------------------------------------------------------------ references

    /// Deterministic, distinctive bytes (xorshift64*), made on the heap.
    fn distinctive(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
        (0..len)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    }

    fn sbox() -> [u8; 256] {
        let mut s = [0u8; 256];
        let (mut p, mut q) = (1u8, 1u8);
        loop {
            // p * 3
            p = p ^ (p << 1) ^ if p & 0x80 != 0 { 0x1b } else { 0 };
            // q / 3
            q ^= q << 1;
            q ^= q << 2;
            q ^= q << 4;
            if q & 0x80 != 0 {
                q ^= 0x09;
            }
            let x = q ^ q.rotate_left(1) ^ q.rotate_left(2) ^ q.rotate_left(3) ^ q.rotate_left(4);
            s[p as usize] = x ^ 0x63;
            if p == 1 {
                break;
            }
        }
        s[0] = 0x63;
        s
    }

    fn xtime(b: u8) -> u8 {
        (b << 1) ^ if b & 0x80 != 0 { 0x1b } else { 0 }
    }

    fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut r = 0;
        while b != 0 {
            if b & 1 != 0 {
                r ^= a;
            }
            a = xtime(a);
            b >>= 1;
        }
        r
    }

    /// FIPS 197 round keys (encryption schedule).
    fn round_keys(key: &[u8]) -> Vec<[u8; 16]> {
        let s = sbox();
        let nk = key.len() / 4;
        let rounds = nk + 6;
        let mut w: Vec<[u8; 4]> = key.chunks_exact(4).map(|c| c.try_into().unwrap()).collect();
        let mut rcon = 1u8;
        for i in nk..4 * (rounds + 1) {
            let mut t = w[i - 1];
            if i % nk == 0 {
                t = [
                    s[t[1] as usize] ^ rcon,
                    s[t[2] as usize],
                    s[t[3] as usize],
                    s[t[0] as usize],
                ];
                rcon = xtime(rcon);
            } else if nk > 6 && i % nk == 4 {
                t = t.map(|b| s[b as usize]);
            }
            let prev = w[i - nk];
            w.push(core::array::from_fn(|j| prev[j] ^ t[j]));
        }
        w.chunks_exact(4)
            .map(|c| core::array::from_fn(|j| c[j / 4][j % 4]))
            .collect()
    }

    fn inv_mix_columns(rk: [u8; 16]) -> [u8; 16] {
        let mut out = [0u8; 16];
        for c in 0..4 {
            let a = &rk[4 * c..4 * c + 4];
            for r in 0..4 {
                out[4 * c + r] = mul(a[r], 14)
                    ^ mul(a[(r + 1) % 4], 11)
                    ^ mul(a[(r + 2) % 4], 13)
                    ^ mul(a[(r + 3) % 4], 9);
            }
        }
        out
    }

    /// The values to look for, each with its kind.
    #[derive(Default)]
    pub struct Patterns {
        by_prefix: HashMap<u64, Vec<([u8; 16], Kind)>>,
    }

    impl Patterns {
        fn add(&mut self, kind: Kind, v: [u8; 16]) {
            let prefix = u64::from_le_bytes(v[..8].try_into().unwrap());
            let list = self.by_prefix.entry(prefix).or_default();
            if !list.iter().any(|(x, _)| *x == v) {
                list.push((v, kind));
            }
        }

        fn add_windows(&mut self, kind: Kind, bytes: &[u8]) {
            for start in (0..=bytes.len().saturating_sub(16)).step_by(4) {
                if let Some(w) = bytes.get(start..start + 16) {
                    self.add(kind, w.try_into().unwrap());
                }
            }
        }

        fn add_aes_key(&mut self, key: &[u8]) {
            self.add_windows(Key, key);
            let rks = round_keys(key);
            for (i, rk) in rks.iter().enumerate() {
                self.add(Rk, *rk);
                if i != 0 && i != rks.len() - 1 {
                    self.add(Rk, inv_mix_columns(*rk));
                }
            }
        }

        /// 16-byte pieces (at 8-byte steps) of a key object's secret
        /// memory that look like key material (at least 4 distinct bytes
        /// and at most 4 zero bytes: not padding, lengths or flags; the
        /// fixsliced soft round keys repeat 16-bit patterns, so more
        /// distinct bytes cannot be asked for).
        fn add_object(&mut self, regions: &[(usize, usize)]) {
            for &(addr, len) in regions {
                let bytes = copy_region(addr, len);
                for start in (0..len.saturating_sub(15)).step_by(8) {
                    let w: [u8; 16] = bytes[start..start + 16].try_into().unwrap();
                    if distinct(&w) >= 4 && w.iter().filter(|&&b| b == 0).count() <= 4 {
                        self.add(Obj, w);
                    }
                }
            }
        }

        fn add_chacha(&mut self, key: &[u8], nonce12: &[u8], words_kind: Kind) {
            for w in key.chunks_exact(4) {
                let mut v = [0u8; 16];
                for lane in v.chunks_exact_mut(4) {
                    lane.copy_from_slice(w);
                }
                self.add(words_kind, v);
            }
            let mut block0 = vec![0u8; 64];
            chacha20_xor(Backend::Soft, key, nonce12, 0, &mut block0).unwrap();
            let r: [u8; 16] = block0[..16].try_into().unwrap();
            let mut clamped = r;
            for i in [3, 7, 11, 15] {
                clamped[i] &= 15;
            }
            for i in [4, 8, 12] {
                clamped[i] &= 252;
            }
            self.add(Poly, r);
            self.add(Poly, clamped);
            self.add(Poly, block0[16..32].try_into().unwrap());
        }

        /// Finds every pattern in `stack`; kinds with their counts.
        fn find(&self, stack: &[u8]) -> BTreeMap<Kind, usize> {
            let mut found = BTreeMap::new();
            for start in 0..stack.len() - 15 {
                let prefix = u64::from_le_bytes(stack[start..start + 8].try_into().unwrap());
                if let Some(list) = self.by_prefix.get(&prefix) {
                    for (v, kind) in list {
                        if stack[start..start + 16] == v[..] {
                            *found.entry(*kind).or_insert(0) += 1;
                        }
                    }
                }
            }
            found
        }
    }

    fn distinct(w: &[u8; 16]) -> usize {
        let mut seen = [false; 256];
        w.iter()
            .filter(|&&b| !std::mem::replace(&mut seen[b as usize], true))
            .count()
    }

    fn xts_mul_x(t: u128) -> u128 {
        (t << 1) ^ (0x87 & 0u128.wrapping_sub(t >> 127))
    }

    // ------------------------------------------------------------- the runs

    const AAD: &[u8] = b"stack residue test: associated data";
    /// Block-aligned length for ECB/CBC (131 blocks: wide loops and tails).
    const BLOCKS_LEN: usize = 2096;
    /// Stream length (a partial last block).
    const STREAM_LEN: usize = 2101;
    /// XTS: the longest single unit (whole blocks; one more byte makes the
    /// ciphertext-stealing step), then four 512-byte units.
    const XTS_LEN: usize = 2000;
    /// The single-unit XTS steps: (name, length).
    const XTS_SINGLE_ENC: [(&str, usize); 6] = [
        ("encrypt", XTS_LEN),
        ("encrypt stealing", XTS_LEN + 1),
        ("encrypt 16 B", 16),
        ("encrypt 32 B", 32),
        ("encrypt 48 B", 48),
        ("encrypt 64 B", 64),
    ];
    const XTS_SINGLE_DEC: [(&str, usize); 6] = [
        ("decrypt", XTS_LEN),
        ("decrypt stealing", XTS_LEN + 1),
        ("decrypt 16 B", 16),
        ("decrypt 32 B", 32),
        ("decrypt 48 B", 48),
        ("decrypt 64 B", 64),
    ];
    const XTS_UNIT: usize = 512;
    /// AEAD length: ChaCha20-Poly1305 on `avx512` makes a first batch of
    /// 1216 bytes, then whole 1280-byte batches XORed from registers, then
    /// a partial one through a buffer; this covers each (and GCM's wide
    /// loops).
    const AEAD_LEN: usize = 4000;
    const XTS_SECTOR: u64 = 7;

    /// The residue found by each step of one trial, and the stack depth
    /// the step wrote to (bytes below the caller's stack pointer).
    pub type StepResidue = Vec<(&'static str, BTreeMap<Kind, usize>, usize)>;

    /// Runs steps, wiping before and scanning after each.
    struct Scanner {
        buf: Box<[u8; SCAN]>,
        patterns: Patterns,
        steps: StepResidue,
    }

    impl Scanner {
        fn step(&mut self, name: &'static str, f: &mut dyn FnMut()) {
            step_inner(f, &mut self.buf);
            let found = self.patterns.find(&self.buf[..]);
            let depth = SCAN - self.buf.iter().position(|&b| b != 0).unwrap_or(SCAN);
            self.steps.push((name, found, depth));
        }
    }

    /// Wipe, run, copy: one frame, so both helpers see the same `rsp`.
    #[inline(never)]
    fn step_inner(f: &mut dyn FnMut(), buf: &mut [u8; SCAN]) {
        wipe_dead_stack();
        f();
        copy_dead_stack(buf);
    }

    fn xts_tweaks() -> Vec<[u8; 16]> {
        let mut t = vec![*b"residue tweak!!!"];
        t.extend((0..(BLOCKS_LEN / XTS_UNIT) as u64).map(|i| sector_tweak(XTS_SECTOR + i)));
        t
    }

    /// One trial: a key of `key_len` bytes for `alg` on `backend`.
    pub fn trial(alg: Alg, backend: Backend, key_len: usize) -> StepResidue {
        let raw = distinctive(key_len as u64 * 131 + alg as u64, key_len);
        let raw2 = distinctive(key_len as u64 * 977 + alg as u64 + 7, key_len);
        let nonce = distinctive(99, 24);
        let mut p = Patterns::default();
        match alg {
            Alg::ChaCha | Alg::XChaCha => {
                p.add_chacha(&raw, &nonce[..12], Words);
                p.add_windows(Key, &raw);
                if alg == Alg::XChaCha {
                    let sub = hchacha20(&raw, &nonce[..16]).unwrap().to_vec();
                    p.add_windows(Subkey, &sub);
                    let mut n12 = vec![0u8; 12];
                    n12[4..].copy_from_slice(&nonce[16..24]);
                    p.add_chacha(&sub, &n12, Words);
                    p.add_object(
                        &XChaCha20Poly1305::with_backend(&raw, backend)
                            .unwrap()
                            .secret_regions(),
                    );
                } else {
                    p.add_object(
                        &ChaCha20Poly1305::with_backend(&raw, backend)
                            .unwrap()
                            .secret_regions(),
                    );
                }
            }
            Alg::Xts => {
                let (k1, k2) = raw.split_at(key_len / 2);
                p.add_aes_key(k1);
                p.add_aes_key(k2);
                p.add_object(&Xts::with_backend(&raw, backend).unwrap().secret_regions());
                let rks = round_keys(k1);
                let (first, last) = (
                    u128::from_le_bytes(rks[0]),
                    u128::from_le_bytes(rks[rks.len() - 1]),
                );
                let aes2 = Aes::with_backend(k2, Backend::Soft).unwrap();
                for tweak in xts_tweaks() {
                    let mut t = tweak;
                    aes2.encrypt_block(&mut t);
                    let mut t = u128::from_le_bytes(t);
                    // Every block of the longest unit (the stealing step's
                    // partial block included) and the tweak after it.
                    for _ in 0..=(XTS_LEN + 1) / 16 + 1 {
                        p.add(XtsTweak, t.to_le_bytes());
                        p.add(XtsTweakKey, (t ^ last).to_le_bytes());
                        p.add(XtsTweakKey, (t ^ first).to_le_bytes());
                        t = xts_mul_x(t);
                    }
                }
            }
            Alg::Gcm => {
                p.add_aes_key(&raw);
                p.add_object(
                    &AesGcm::with_backend(&raw, backend)
                        .unwrap()
                        .secret_regions(),
                );
                let mut h = [0u8; 16];
                Aes::with_backend(&raw, Backend::Soft)
                    .unwrap()
                    .encrypt_block(&mut h);
                p.add(H, h);
                h.reverse();
                p.add(H, h);
            }
            _ => {
                p.add_aes_key(&raw);
                p.add_aes_key(&raw2);
                p.add_object(&Aes::with_backend(&raw, backend).unwrap().secret_regions());
                p.add_object(&Aes::with_backend(&raw2, backend).unwrap().secret_regions());
            }
        }
        let mut s = Scanner {
            buf: vec![0u8; SCAN].into_boxed_slice().try_into().unwrap(),
            patterns: p,
            steps: Vec::new(),
        };
        let iv = [0x5au8; 16];
        match alg {
            Alg::ChaCha => {
                aead_steps(
                    &mut s,
                    || ChaCha20Poly1305::with_backend(&raw, backend).unwrap(),
                    &nonce[..12],
                );
                chacha_stream_steps(&mut s, &raw, backend, &nonce[..12]);
            }
            Alg::XChaCha => aead_steps(
                &mut s,
                || XChaCha20Poly1305::with_backend(&raw, backend).unwrap(),
                &nonce,
            ),
            Alg::Gcm => aead_steps(
                &mut s,
                || AesGcm::with_backend(&raw, backend).unwrap(),
                &nonce[..12],
            ),
            Alg::Xts => {
                let mut key: Box<Option<Xts>> = Box::new(None);
                let mut buf = vec![0x33u8; BLOCKS_LEN];
                let tweaks = xts_tweaks();
                s.step("new", &mut || {
                    *key = Some(Xts::with_backend(&raw, backend).unwrap())
                });
                let k = key.as_ref().as_ref().unwrap();
                // Per operation: the long unit, whole units, ciphertext
                // stealing, and the short units (1-4 blocks take their own
                // code in the hardware backends).
                for (decrypt, units, single) in [
                    (false, "encrypt units", XTS_SINGLE_ENC),
                    (true, "decrypt units", XTS_SINGLE_DEC),
                ] {
                    let run = |b: &mut [u8]| {
                        if decrypt {
                            k.decrypt(&tweaks[0], b).unwrap();
                        } else {
                            k.encrypt(&tweaks[0], b).unwrap();
                        }
                    };
                    for (name, len) in single {
                        s.step(name, &mut || run(&mut buf[..len]));
                    }
                    s.step(units, &mut || {
                        let b = &mut buf[..4 * XTS_UNIT];
                        if decrypt {
                            k.decrypt_units(XTS_UNIT, XTS_SECTOR, b).unwrap();
                        } else {
                            k.encrypt_units(XTS_UNIT, XTS_SECTOR, b).unwrap();
                        }
                    });
                }
                s.step("drop", &mut || *key = None);
            }
            _ => {
                let mut key: Box<Option<Aes>> = Box::new(None);
                let len = if matches!(alg, Alg::Ecb | Alg::Cbc) {
                    BLOCKS_LEN
                } else {
                    STREAM_LEN
                };
                let mut buf = vec![0x33u8; len];
                s.step("new", &mut || {
                    *key = Some(Aes::with_backend(&raw, backend).unwrap())
                });
                for (name, decrypt) in [("encrypt", false), ("decrypt", true)] {
                    let k = key.as_ref().as_ref().unwrap();
                    s.step(name, &mut || run_mode(alg, k, &iv, decrypt, &mut buf));
                }
                s.step("rekey", &mut || {
                    key.as_mut().as_mut().unwrap().rekey(&raw2).unwrap()
                });
                s.step("drop", &mut || *key = None);
            }
        }
        s.steps
    }

    fn run_mode(alg: Alg, k: &Aes, iv: &[u8; 16], decrypt: bool, buf: &mut [u8]) {
        match (alg, decrypt) {
            (Alg::Ecb, false) => Ecb::new(k).encrypt(buf).unwrap(),
            (Alg::Ecb, true) => Ecb::new(k).decrypt(buf).unwrap(),
            (Alg::Cbc, false) => Cbc::new(k, iv).unwrap().encrypt(buf).unwrap(),
            (Alg::Cbc, true) => Cbc::new(k, iv).unwrap().decrypt(buf).unwrap(),
            (Alg::Ctr, _) => Ctr::new(k, iv).unwrap().apply_keystream(buf).unwrap(),
            (Alg::Ctr32, _) => Ctr::with_width(k, iv, CounterWidth::Low32)
                .unwrap()
                .apply_keystream(buf)
                .unwrap(),
            (Alg::Cfb, false) => Cfb128::new(k, iv).unwrap().encrypt(buf),
            (Alg::Cfb, true) => Cfb128::new(k, iv).unwrap().decrypt(buf),
            (Alg::Ofb, _) => Ofb::new(k, iv).unwrap().apply_keystream(buf),
            _ => unreachable!("not an AES mode"),
        }
    }

    /// The incremental ChaCha20-Poly1305 (pieces through the keystream
    /// buffer and through the stitched kernel, whole batches included) and
    /// the bare ChaCha20 (`chacha20_xor`, the `ChaCha20` stream), each step
    /// making and dropping its key.
    fn chacha_stream_steps(s: &mut Scanner, raw: &[u8], backend: Backend, nonce: &[u8]) {
        let mut buf = vec![0x33u8; AEAD_LEN];
        let mut tag = vec![0u8; 16];
        // A new key, a stream on it, the message started and its AAD in.
        let started = || {
            let key = ChaCha20Poly1305::with_backend(raw, backend).unwrap();
            let mut st = ChaCha20Poly1305Stream::new(key);
            st.start(nonce).unwrap();
            st.aad(AAD).unwrap();
            st
        };
        s.step("stream encrypt", &mut || {
            let mut st = started();
            let (a, b) = buf.split_at_mut(100);
            st.encrypt(a).unwrap();
            st.encrypt(b).unwrap();
            tag.copy_from_slice(&st.finish().unwrap()[..]);
        });
        s.step("stream decrypt", &mut || {
            let mut st = started();
            let (a, b) = buf.split_at_mut(100);
            st.decrypt(a).unwrap();
            st.decrypt(b).unwrap();
            st.verify(&tag).unwrap();
        });
        s.step("chacha20", &mut || {
            chacha20_xor(backend, raw, nonce, 1, &mut buf).unwrap();
            let mut iv = [0u8; 16];
            iv[4..].copy_from_slice(nonce);
            let mut c = ChaCha20::with_backend(raw, &iv, backend).unwrap();
            let (a, b) = buf.split_at_mut(300);
            c.apply_keystream(a);
            c.apply_keystream(b);
        });
    }

    fn aead_steps<A: Aead>(s: &mut Scanner, make: impl Fn() -> A, nonce: &[u8]) {
        let mut key: Box<Option<A>> = Box::new(None);
        let mut buf = vec![0x33u8; AEAD_LEN];
        let mut tag = vec![0u8; 16];
        s.step("new", &mut || *key = Some(make()));
        let k = key.as_ref().as_ref().unwrap();
        s.step("encrypt", &mut || {
            let t = k.seal_in_place_detached(nonce, AAD, &mut buf).unwrap();
            tag.copy_from_slice(&t[..]);
        });
        s.step("decrypt", &mut || {
            k.open_in_place_detached(nonce, AAD, &mut buf, &tag)
                .unwrap()
        });
        // Short messages take kernels of their own (AES-GCM: `aesni`'s
        // short kernel, the VAES last-chunk kernels).
        for (len, seal, open) in [
            (20, "encrypt 20 B", "decrypt 20 B"),
            (100, "encrypt 100 B", "decrypt 100 B"),
            (300, "encrypt 300 B", "decrypt 300 B"),
        ] {
            s.step(seal, &mut || {
                let t = k
                    .seal_in_place_detached(nonce, AAD, &mut buf[..len])
                    .unwrap();
                tag.copy_from_slice(&t[..]);
            });
            s.step(open, &mut || {
                k.open_in_place_detached(nonce, AAD, &mut buf[..len], &tag)
                    .unwrap()
            });
        }
        s.step("drop", &mut || *key = None);
    }

    // ------------------------------------------------------------ the verdict

    pub fn describe(found: &BTreeMap<Kind, usize>) -> String {
        if found.is_empty() {
            return "clean".into();
        }
        let mut s = String::new();
        for (k, n) in found {
            let _ = write!(
                s,
                "{}{}({n})",
                if s.is_empty() { "" } else { " " },
                k.name()
            );
        }
        s
    }

    pub fn runnable(alg: Alg) -> Vec<Backend> {
        Backend::ALL
            .into_iter()
            .filter(|&b| registry::check(alg.registry(), b).is_ok())
            .collect()
    }
}

#[cfg(target_arch = "x86_64")]
fn run() -> (usize, usize) {
    use residue::*;
    use std::collections::{BTreeMap, BTreeSet};
    let profile = match std::env::var("HWCRYPT_RESIDUE_PROFILE").as_deref() {
        Ok("no-lto") => Profile::NoLto,
        Ok("release") | Err(_) => Profile::Release,
        Ok(other) => panic!("HWCRYPT_RESIDUE_PROFILE={other:?}: expected release or no-lto"),
    };
    let print_table = std::env::var_os("HWCRYPT_RESIDUE_TABLE").is_some();
    let (mut passed, mut failed) = (0, 0);
    // (backend, alg, step) -> kinds found over every key size.
    let mut seen: BTreeMap<(String, &str, &str), BTreeSet<Kind>> = BTreeMap::new();
    let mut summary: Vec<(String, String)> = Vec::new();
    for alg in Alg::ALL {
        for backend in runnable(alg) {
            let mut cells = Vec::new();
            for &len in alg.key_lens() {
                let steps = trial(alg, backend, len);
                for (step, found, _) in &steps {
                    let ok_kinds = allowed_by_name(backend.name(), alg.name(), step, profile);
                    let bad: Vec<_> = found.keys().filter(|k| !ok_kinds.contains(k)).collect();
                    seen.entry((backend.name().to_string(), alg.name(), step))
                        .or_default()
                        .extend(found.keys().copied());
                    if bad.is_empty() {
                        passed += 1;
                    } else {
                        failed += 1;
                        println!(
                            "FAIL {backend} {} {}-bit {step}: undeclared residue {bad:?} (found {})",
                            alg.name(),
                            len * 8,
                            describe(found)
                        );
                    }
                }
                let row: Vec<String> = steps
                    .iter()
                    .map(|(s, f, depth)| format!("{s}: {} ({depth} B deep)", describe(f)))
                    .collect();
                cells.push(format!("{}-bit [{}]", len * 8, row.join("; ")));
            }
            summary.push((format!("{backend} {}", alg.name()), cells.join(" ")));
        }
    }
    println!("residue by backend x algorithm ({profile:?}); per key size, per step:");
    for (what, cells) in &summary {
        println!("  {what}: {cells}");
    }
    for (b, a, s, p, _) in entries() {
        if *p != Profile::Any && *p != profile {
            continue;
        }
        let key = (b.to_string(), *a, *s);
        if let Some(found) = seen.get(&key) {
            let declared = allowed_by_name(b, a, s, profile);
            let stale: Vec<_> = declared.difference(found).collect();
            if !stale.is_empty() {
                println!("note: declared but not found now (remove?): {b} {a} {s}: {stale:?}");
            }
        }
    }
    if print_table {
        println!("table entries for what was found ({profile:?}):");
        for ((b, a, s), kinds) in &seen {
            if !kinds.is_empty() {
                println!("        ({b:?}, {a:?}, {s:?}, {profile:?}, &{kinds:?}),");
            }
        }
    }
    (passed, failed)
}

#[cfg(target_arch = "x86_64")]
fn allowed_by_name(
    b: &str,
    a: &str,
    s: &str,
    profile: residue::Profile,
) -> std::collections::BTreeSet<residue::Kind> {
    residue::entries()
        .filter(|e| {
            e.0 == b && e.1 == a && e.2 == s && (e.3 == residue::Profile::Any || e.3 == profile)
        })
        .flat_map(|e| e.4.iter().copied())
        .collect()
}

fn main() {
    if cfg!(debug_assertions) {
        println!(
            "stack residue: skipped (debug assertions on: run it with --release or --profile residue)"
        );
        println!("0 passed, 0 failed");
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let worker = std::thread::Builder::new()
            .name("stack-residue".into())
            .stack_size(16 << 20)
            .spawn(run)
            .expect("spawn the scanning thread");
        let (passed, failed) = worker.join().expect("scanning thread");
        println!("{passed} passed, {failed} failed");
        if failed > 0 {
            std::process::exit(1);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    println!("0 passed, 0 failed (x86_64 only)");
}
