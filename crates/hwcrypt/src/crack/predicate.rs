//! What a right key must produce (predicates on the plaintext), and the fast
//! filter derived from them: a few one-block checks that are a *necessary*
//! condition of the predicates, so the filter never rejects a key the full
//! predicate would accept.

use crate::aes::{Aes, BLOCK_SIZE, Block};
use crate::error::{Error, Result};
use crate::modes::{Cbc, Ctr, Ecb};

/// Most filter blocks a search may use.
pub const MAX_FILTER_BLOCKS: usize = 8;

/// The cipher mode of the ciphertext.
///
/// ```
/// use hwcrypt::crack::Mode;
/// let unknown_iv = Mode::Cbc { iv: None }; // block 0 is then not checked
/// assert_eq!(unknown_iv.name(), "cbc");
/// assert_eq!(Mode::Ctr { iv: [0u8; 16] }.name(), "ctr");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// AES-ECB.
    Ecb,
    /// AES-CBC; `iv: None` when the IV is unknown (block 0 then cannot be
    /// decrypted, every later block still can: P_i = D_k(C_i) ^ C_{i-1}).
    Cbc {
        /// The IV, if known.
        iv: Option<Block>,
    },
    /// AES-CTR with a 128-bit big-endian counter starting at `iv`.
    Ctr {
        /// The initial counter block.
        iv: Block,
    },
}

impl Mode {
    /// `ecb`, `cbc` or `ctr`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Ecb => "ecb",
            Mode::Cbc { .. } => "cbc",
            Mode::Ctr { .. } => "ctr",
        }
    }
}

/// PKCS#7 padding of ECB/CBC plaintexts.
///
/// ```
/// use hwcrypt::crack::{Challenge, Mode, Padding, Predicate};
/// let ciphertext = vec![0u8; 32];
/// // Require valid PKCS#7 padding and a known first byte.
/// let challenge = Challenge::new(ciphertext, Mode::Ecb, Padding::Pkcs7,
///     vec![Predicate::KnownAt { offset: 0, bytes: b"{".to_vec() }])?;
/// assert_eq!(challenge.blocks(), 2);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Padding {
    /// Strip valid PKCS#7 padding before the predicates look at the
    /// plaintext; a plaintext without valid padding is taken whole.
    #[default]
    Auto,
    /// Require valid PKCS#7 padding (a key whose plaintext lacks it is rejected).
    Pkcs7,
    /// No padding: the predicates see every byte.
    None,
}

/// A property of the plaintext the right key produces. A search accepts a
/// key when *all* its predicates hold.
///
/// ```
/// use hwcrypt::crack::Predicate;
/// let predicates = vec![
///     Predicate::Text { min_ratio: 1.0, utf8: false }, // all printable
///     Predicate::Contains(b"password".to_vec()),
///     Predicate::KnownAt { offset: 0, bytes: b"PK".to_vec() },
/// ];
/// assert_eq!(predicates.len(), 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Predicate {
    /// The plaintext contains these bytes somewhere (across block boundaries too).
    Contains(Vec<u8>),
    /// The plaintext holds `bytes` at byte `offset` (a known prefix when 0).
    KnownAt {
        /// Byte offset in the plaintext.
        offset: usize,
        /// The known bytes.
        bytes: Vec<u8>,
    },
    /// The plaintext looks like text: at least `min_ratio` of its bytes are
    /// printable ASCII, tab, CR or LF (or, with `utf8`, part of valid UTF-8
    /// multi-byte characters). In CBC the test skips block 0, which a wrong
    /// IV garbles, so a wrong IV never hides the right key.
    Text {
        /// 0.0..=1.0; 1.0 means every byte.
        min_ratio: f64,
        /// Accept UTF-8 multi-byte characters as text.
        utf8: bool,
    },
}

/// One-block check for the batch kernels: `v = E_k(input) ^ xor` (forward)
/// or `v = D_k(input) ^ xor` (inverse); the key passes if `v` equals `known`
/// at the bytes of `known_mask` and the bytes of `text_mask` that are
/// certainly not text, summed over all checks, are at most `Plan::max_bad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockCheck {
    pub(crate) forward: bool,
    pub(crate) input: Block,
    pub(crate) xor: Block,
    pub(crate) known_mask: u16,
    pub(crate) known: Block,
    pub(crate) text_mask: u16,
    /// Ciphertext block number this check looks at (for display).
    pub(crate) block: usize,
}

/// The fast filter: checks in the order the kernels run them (forward ones
/// first, so the first can run beside the key expansion).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Plan {
    pub(crate) checks: Vec<BlockCheck>,
    pub(crate) max_bad: u32,
    pub(crate) utf8: bool,
}

/// Whether byte `b` can never be text (control other than tab/LF/CR, DEL;
/// any byte >= 0x80 unless `utf8`; with `utf8`, bytes no UTF-8 string holds).
#[inline]
pub(crate) fn certainly_not_text(b: u8, utf8: bool) -> bool {
    match b {
        b'\t' | b'\n' | b'\r' => false,
        0..=0x1f | 0x7f => true,
        0x80..=0xff if !utf8 => true,
        0xc0 | 0xc1 | 0xf5..=0xff => true,
        _ => false,
    }
}

/// How many bytes of `text` are not text: control bytes, DEL, and with
/// `utf8` every byte that is not part of a valid UTF-8 character (else every
/// byte >= 0x80).
#[cfg(test)]
pub(crate) fn non_text_bytes(text: &[u8], utf8: bool) -> usize {
    non_text_bytes_upto(text, utf8, usize::MAX)
}

/// [`non_text_bytes`], stopping as soon as the count exceeds `limit` (the
/// result is then `limit + 1`): most wrong keys are rejected after a few
/// bytes. With `utf8`, a byte that does not start a well-formed UTF-8
/// character (RFC 3629: no overlong forms, surrogates or values past
/// U+10FFFF) counts and the scan resumes at the next byte.
pub(crate) fn non_text_bytes_upto(text: &[u8], utf8: bool, limit: usize) -> usize {
    let mut bad = 0;
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let len = if b < 0x80 || !utf8 {
            1
        } else {
            let cont =
                |k: usize, lo: u8, hi: u8| text.get(i + k).is_some_and(|&c| (lo..=hi).contains(&c));
            match b {
                0xc2..=0xdf if cont(1, 0x80, 0xbf) => 2,
                0xe0 if cont(1, 0xa0, 0xbf) && cont(2, 0x80, 0xbf) => 3,
                0xe1..=0xec | 0xee..=0xef if cont(1, 0x80, 0xbf) && cont(2, 0x80, 0xbf) => 3,
                0xed if cont(1, 0x80, 0x9f) && cont(2, 0x80, 0xbf) => 3,
                0xf0 if cont(1, 0x90, 0xbf) && cont(2, 0x80, 0xbf) && cont(3, 0x80, 0xbf) => 4,
                0xf1..=0xf3
                    if cont(1, 0x80, 0xbf) && cont(2, 0x80, 0xbf) && cont(3, 0x80, 0xbf) =>
                {
                    4
                }
                0xf4 if cont(1, 0x80, 0x8f) && cont(2, 0x80, 0xbf) && cont(3, 0x80, 0xbf) => 4,
                _ => 0,
            }
        };
        if len == 0 || (len == 1 && certainly_not_text(b, utf8)) {
            bad += 1;
            if bad > limit {
                return bad;
            }
            i += 1;
        } else {
            i += len;
        }
    }
    bad
}

/// The most non-text bytes a text of `len` bytes may hold at `min_ratio`.
pub(crate) fn allowed_non_text(len: usize, min_ratio: f64) -> usize {
    // The smallest number of text bytes that meets the ratio, computed so
    // that a ratio of exactly 1.0 allows none.
    let need = (min_ratio * len as f64 - 1e-9).ceil().max(0.0) as usize;
    len - need.min(len)
}

/// A challenge: ciphertext, mode, padding and predicates, checked for
/// consistency. [`super::search`] runs it over a key space.
///
/// ```
/// use hwcrypt::crack::{Challenge, Mode, Padding, Predicate};
/// let challenge = Challenge::new(
///     vec![0u8; 48],                 // the ciphertext
///     Mode::Cbc { iv: None },        // IV unknown
///     Padding::Auto,
///     vec![Predicate::Text { min_ratio: 1.0, utf8: false }],
/// )?;
/// assert_eq!(challenge.blocks(), 3);
/// # Ok::<(), hwcrypt::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Challenge {
    pub(crate) ciphertext: Vec<u8>,
    pub(crate) mode: Mode,
    pub(crate) padding: Padding,
    pub(crate) predicates: Vec<Predicate>,
    /// Plaintext bytes the predicates see start here (16 for CBC without IV).
    pub(crate) first_byte: usize,
    /// The text test starts here: 16 for CBC with more than one block, IV
    /// or not, because block 0 depends on the IV, which may be wrong (a
    /// wrong IV must not hide the right key); else 0.
    pub(crate) text_from: usize,
}

impl Challenge {
    /// Checks the parameters: ECB/CBC ciphertext a non-empty multiple of 16
    /// bytes (CBC without IV: at least 2 blocks), at least one predicate,
    /// known bytes inside the decryptable plaintext, a ratio in 0..=1.
    pub fn new(
        ciphertext: Vec<u8>,
        mode: Mode,
        padding: Padding,
        predicates: Vec<Predicate>,
    ) -> Result<Challenge> {
        let bad = |s: String| Err(Error::InvalidSearch(s));
        let len = ciphertext.len();
        if len == 0 {
            return bad("the ciphertext is empty".into());
        }
        if !matches!(mode, Mode::Ctr { .. }) && !len.is_multiple_of(BLOCK_SIZE) {
            return bad(format!(
                "{}: the ciphertext is {len} bytes, not a multiple of 16",
                mode.name()
            ));
        }
        let first_byte = match mode {
            Mode::Cbc { iv: None } => {
                if len < 2 * BLOCK_SIZE {
                    return bad(
                        "cbc without an IV needs at least 2 ciphertext blocks (block 0 cannot be decrypted)"
                            .into(),
                    );
                }
                BLOCK_SIZE
            }
            _ => 0,
        };
        if predicates.is_empty() {
            return bad(
                "no predicate: give a known plaintext, a string to look for, or a text test".into(),
            );
        }
        for p in &predicates {
            match p {
                Predicate::Contains(s) if s.is_empty() => {
                    return bad("an empty string to look for".into());
                }
                Predicate::KnownAt { offset, bytes } => {
                    if bytes.is_empty() {
                        return bad("empty known plaintext".into());
                    }
                    // Checked: an offset near usize::MAX (from the command
                    // line) must be refused, not wrap.
                    if offset.checked_add(bytes.len()).is_none_or(|end| end > len) {
                        return bad(format!(
                            "known plaintext at offset {offset} ({} bytes) lies past the end of the {len}-byte message",
                            bytes.len()
                        ));
                    }
                    if *offset < first_byte {
                        return bad(format!(
                            "known plaintext at offset {offset} lies in block 0, which cannot be decrypted without the IV; give --iv or a later offset"
                        ));
                    }
                }
                Predicate::Text { min_ratio, .. } if !(0.0..=1.0).contains(min_ratio) => {
                    return bad(format!("text ratio {min_ratio} is not in 0..=1"));
                }
                _ => {}
            }
        }
        if padding != Padding::None && matches!(mode, Mode::Ctr { .. }) {
            // CTR has no padding; treat Auto as None silently, refuse Pkcs7.
            if padding == Padding::Pkcs7 {
                return bad("ctr plaintexts are not padded; drop the padding option".into());
            }
        }
        let padding = if matches!(mode, Mode::Ctr { .. }) {
            Padding::None
        } else {
            padding
        };
        let text_from = match mode {
            Mode::Cbc { .. } if len > BLOCK_SIZE => BLOCK_SIZE,
            _ => 0,
        };
        Ok(Challenge {
            ciphertext,
            mode,
            padding,
            predicates,
            first_byte,
            text_from,
        })
    }

    /// The number of ciphertext blocks (a partial last CTR block counts).
    pub fn blocks(&self) -> usize {
        self.ciphertext.len().div_ceil(BLOCK_SIZE)
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    fn cblock(&self, i: usize) -> Block {
        let mut b = [0u8; BLOCK_SIZE];
        let s = &self.ciphertext[i * BLOCK_SIZE..self.ciphertext.len().min((i + 1) * BLOCK_SIZE)];
        b[..s.len()].copy_from_slice(s);
        b
    }

    fn text(&self) -> Option<(f64, bool)> {
        self.predicates.iter().find_map(|p| match p {
            Predicate::Text { min_ratio, utf8 } => Some((*min_ratio, *utf8)),
            _ => None,
        })
    }

    /// Whether block `i` can be checked on its own.
    fn checkable(&self, i: usize) -> bool {
        i < self.blocks() && !(i == 0 && self.first_byte > 0)
    }

    /// The check of block `i` with everything the predicates say about it.
    fn block_check(&self, i: usize) -> BlockCheck {
        let len = self.ciphertext.len();
        let start = i * BLOCK_SIZE;
        let in_block = (len - start).min(BLOCK_SIZE);
        let mut known = [0u8; BLOCK_SIZE];
        let mut known_mask = 0u16;
        for p in &self.predicates {
            if let Predicate::KnownAt { offset, bytes } = p {
                for (j, &b) in bytes.iter().enumerate() {
                    let pos = offset + j;
                    if (start..start + in_block).contains(&pos) {
                        known[pos - start] = b;
                        known_mask |= 1 << (pos - start);
                    }
                }
            }
        }
        let mut text_mask = 0u16;
        let last = i + 1 == self.blocks();
        if self.text().is_some()
            && !(last && self.padding != Padding::None)
            && start >= self.text_from
        {
            text_mask = ((1u32 << in_block) - 1) as u16;
        }
        let c = self.cblock(i);
        let mut check = BlockCheck {
            forward: false,
            input: c,
            xor: [0; BLOCK_SIZE],
            known_mask,
            known,
            text_mask,
            block: i,
        };
        match self.mode {
            Mode::Ecb | Mode::Cbc { .. } => {
                let prev = match self.mode {
                    Mode::Ecb => [0; BLOCK_SIZE],
                    Mode::Cbc { iv } if i == 0 => iv.unwrap_or([0; BLOCK_SIZE]),
                    _ => self.cblock(i - 1),
                };
                if known_mask == 0xffff {
                    // A whole known block: AES_k(P_i ^ prev) == C_i, forward.
                    check.forward = true;
                    check.input = xor(&known, &prev);
                    check.xor = c;
                    check.known = [0; BLOCK_SIZE];
                    check.text_mask = 0;
                } else {
                    check.xor = prev;
                }
            }
            Mode::Ctr { iv } => {
                check.forward = true;
                check.input = (u128::from_be_bytes(iv).wrapping_add(i as u128)).to_be_bytes();
                check.xor = c;
                // Bytes past a partial last block are zero in `c`; they are
                // neither known nor text (masks cover `in_block` bytes only).
            }
        }
        check
    }

    /// The filter plan for the given blocks, or the default: every block
    /// with a whole known plaintext block is enough alone; else blocks with
    /// known bytes (most first) and text blocks until about 48 bits of
    /// filtering, never block 0 of CBC (a wrong IV garbles it) unless nothing
    /// else is informative.
    pub(crate) fn plan(&self, blocks: Option<&[usize]>) -> Result<Plan> {
        let (max_bad, utf8) = match self.text() {
            Some((ratio, utf8)) => {
                let region = self.ciphertext.len().saturating_sub(self.text_from);
                (allowed_non_text(region, ratio) as u32, utf8)
            }
            None => (0, false),
        };
        let mut checks = match blocks {
            Some(list) => {
                if list.len() > MAX_FILTER_BLOCKS {
                    return Err(Error::InvalidSearch(format!(
                        "at most {MAX_FILTER_BLOCKS} filter blocks"
                    )));
                }
                let mut out = Vec::new();
                for &i in list {
                    if i >= self.blocks() {
                        return Err(Error::InvalidSearch(format!(
                            "filter block {i} does not exist (the ciphertext has {} blocks)",
                            self.blocks()
                        )));
                    }
                    if !self.checkable(i) {
                        return Err(Error::InvalidSearch(
                            "filter block 0 of cbc needs the IV".into(),
                        ));
                    }
                    if out.iter().any(|c: &BlockCheck| c.block == i) {
                        continue;
                    }
                    out.push(self.block_check(i));
                }
                out
            }
            None => self.default_checks(max_bad, utf8),
        };
        // Forward checks first: the kernels run the first beside the key schedule.
        checks.sort_by_key(|c| !c.forward);
        Ok(Plan {
            checks,
            max_bad,
            utf8,
        })
    }

    fn default_checks(&self, max_bad: u32, utf8: bool) -> Vec<BlockCheck> {
        let all: Vec<BlockCheck> = (0..self.blocks())
            .filter(|&i| self.checkable(i))
            .map(|i| self.block_check(i))
            .collect();
        let cbc = matches!(self.mode, Mode::Cbc { .. });
        let known_bits = |c: &BlockCheck| {
            if c.forward && c.known_mask == 0xffff && c.text_mask == 0 {
                128.0
            } else {
                8.0 * c.known_mask.count_ones() as f64
            }
        };
        // A random byte is certainly not text with this probability.
        let p_bad = if utf8 { 43.0 / 256.0 } else { 158.0 / 256.0 };
        // Bits of filtering of the whole set: known bytes, plus the chance
        // that `n` random bytes hold at most `max_bad` non-text ones.
        let estimate = |set: &[BlockCheck]| {
            let n: u32 = set.iter().map(|c| c.text_mask.count_ones()).sum();
            set.iter().map(known_bits).sum::<f64>() - binomial_cdf(max_bad, n, p_bad).log2()
        };
        let useful = |c: &&BlockCheck| c.known_mask != 0 || c.text_mask != 0;
        let mut ranked: Vec<&BlockCheck> = all
            .iter()
            .filter(useful)
            .filter(|c| !(cbc && c.block == 0))
            .collect();
        if ranked.is_empty() {
            ranked = all.iter().filter(useful).collect();
        }
        // Most known bits first, then most text bytes; ties: lower block
        // first (stable sort).
        ranked.sort_by(|a, b| {
            known_bits(b)
                .partial_cmp(&known_bits(a))
                .unwrap_or(core::cmp::Ordering::Equal)
                .then(b.text_mask.count_ones().cmp(&a.text_mask.count_ones()))
        });
        let mut out: Vec<BlockCheck> = Vec::new();
        for c in ranked {
            let before = estimate(&out);
            if before >= 48.0 || out.len() == 4 {
                break;
            }
            out.push(*c);
            // A block that adds less than a bit only costs time.
            if estimate(&out) < before + 1.0 {
                out.pop();
            }
        }
        out
    }

    /// Decrypts the whole message with `aes` into `out` (resized to the
    /// ciphertext length; the first `first_byte` bytes are meaningless for
    /// CBC without IV).
    pub(crate) fn decrypt(&self, aes: &Aes, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.ciphertext);
        match self.mode {
            Mode::Ecb => Ecb::new(aes).decrypt(out).expect("block-aligned"),
            Mode::Cbc { iv } => Cbc::new(aes, &iv.unwrap_or([0; BLOCK_SIZE]))
                .expect("16-byte IV")
                .decrypt(out)
                .expect("block-aligned"),
            Mode::Ctr { iv } => Ctr::new(aes, &iv)
                .and_then(|mut ctr| ctr.apply_keystream(out))
                .expect("16-byte IV, 128-bit counter"),
        }
    }

    /// The part of a full decryption the predicates see: from `first_byte`,
    /// without PKCS#7 padding where it applies; `None` if padding is
    /// required and invalid.
    pub(crate) fn visible<'a>(&self, plain: &'a [u8]) -> Option<&'a [u8]> {
        let body = &plain[self.first_byte..];
        let pad = match plain.last() {
            Some(&n) if (1..=16).contains(&n) && plain.len() - self.first_byte >= n as usize => {
                let n = n as usize;
                if plain[plain.len() - n..].iter().all(|&b| b as usize == n) {
                    Some(n)
                } else {
                    None
                }
            }
            _ => None,
        };
        match (self.padding, pad) {
            (Padding::None, _) => Some(body),
            (Padding::Pkcs7, None) => None,
            (_, Some(n)) => Some(&body[..body.len() - n]),
            (Padding::Auto, None) => Some(body),
        }
    }

    /// The full predicate on a full decryption.
    pub(crate) fn accepts(&self, plain: &[u8]) -> bool {
        let Some(visible) = self.visible(plain) else {
            return false;
        };
        let region = self.ciphertext.len() - self.text_from;
        // `visible` starts at `first_byte` (<= `text_from`).
        let text = visible
            .get(self.text_from - self.first_byte..)
            .unwrap_or(&[]);
        self.predicates.iter().all(|p| match p {
            Predicate::Contains(s) => visible.windows(s.len()).any(|w| w == s.as_slice()),
            Predicate::KnownAt { offset, bytes } => {
                plain.get(*offset..offset + bytes.len()) == Some(bytes.as_slice())
            }
            Predicate::Text { min_ratio, utf8 } => {
                // The allowance is computed from the whole region (before
                // padding is removed) so that the filter's budget, which is
                // fixed before any key is tried, is never smaller.
                let allowed = allowed_non_text(region, *min_ratio);
                // A region that starts inside the message (CBC from byte
                // 16) may begin with the rest of a UTF-8 character its
                // start cut: up to 3 continuation bytes, not counted.
                let text = if *utf8 && self.text_from > 0 {
                    let cut = text
                        .iter()
                        .take(3)
                        .take_while(|&&b| (0x80..=0xbf).contains(&b))
                        .count();
                    &text[cut..]
                } else {
                    text
                };
                non_text_bytes_upto(text, *utf8, allowed) <= allowed
            }
        })
    }
}

/// P(X <= k) for X ~ Binomial(n, p).
fn binomial_cdf(k: u32, n: u32, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    // Term i = C(n, i) p^i (1-p)^(n-i), built up from i = 0.
    let mut term = (1.0 - p).powi(n as i32);
    let mut sum = term;
    for i in 0..k {
        term *= (n - i) as f64 / (i + 1) as f64 * p / (1.0 - p);
        sum += term;
    }
    sum.min(1.0)
}

fn xor(a: &Block, b: &Block) -> Block {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// Evaluates one check on the block value `v` (the scalar form of what the
/// batch kernels compute): whether the known bytes match, and the number of
/// certainly-non-text bytes.
#[inline]
pub(crate) fn eval_check(c: &BlockCheck, v: &Block, utf8: bool) -> (bool, u32) {
    let mut ok = true;
    let mut bad = 0;
    for (i, (&x, &k)) in v.iter().zip(&c.known).enumerate() {
        if c.known_mask & (1 << i) != 0 && x != k {
            ok = false;
        }
        if c.text_mask & (1 << i) != 0 && certainly_not_text(x, utf8) {
            bad += 1;
        }
    }
    (ok, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_offset_near_usize_max_is_refused() {
        // Found by fuzz/crack_challenge (`--known 18446744073709551615:AB`):
        // offset + length wrapped (release) or panicked (debug).
        for offset in [usize::MAX, usize::MAX - 1, usize::MAX - 16] {
            let r = Challenge::new(
                vec![0; 32],
                Mode::Ecb,
                Padding::None,
                vec![Predicate::KnownAt {
                    offset,
                    bytes: vec![0xab; 2],
                }],
            );
            assert!(matches!(r, Err(Error::InvalidSearch(_))), "{offset}");
        }
    }

    #[test]
    fn non_text_counts() {
        assert_eq!(non_text_bytes(b"Hello, world!\n", false), 0);
        assert_eq!(non_text_bytes(b"a\x00b\x7f", false), 2);
        assert_eq!(non_text_bytes("café".as_bytes(), false), 2);
        assert_eq!(non_text_bytes("café".as_bytes(), true), 0);
        assert_eq!(non_text_bytes(b"caf\xc3", true), 1);
        assert_eq!(non_text_bytes(b"\xff\xfe ok", true), 2);
        // Agrees with the standard library's idea of valid UTF-8.
        let mut x = 0x1234_5678u32;
        for _ in 0..2000 {
            let v: Vec<u8> = (0..12)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    [
                        0x41, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0,
                        0xc0, 0xff,
                    ][x as usize % 14]
                })
                .collect();
            let valid = core::str::from_utf8(&v).is_ok();
            assert_eq!(non_text_bytes(&v, true) == 0, valid, "{v:x?}");
            assert_eq!(non_text_bytes_upto(&v, true, 0) == 0, valid, "{v:x?}");
        }
        for b in 0..=255u8 {
            // The filter's "certainly not text" implies the full count sees it.
            for utf8 in [false, true] {
                if certainly_not_text(b, utf8) {
                    assert_eq!(non_text_bytes(&[b'a', b, b'a'], utf8), 1, "{b:#x}");
                }
            }
        }
    }

    #[test]
    fn binomial() {
        assert!((binomial_cdf(0, 16, 0.5) - 0.5f64.powi(16)).abs() < 1e-12);
        assert_eq!(binomial_cdf(16, 16, 0.3), 1.0);
        assert!((binomial_cdf(1, 2, 0.5) - 0.75).abs() < 1e-12);
    }

    #[test]
    fn allowance() {
        assert_eq!(allowed_non_text(400, 1.0), 0);
        assert_eq!(allowed_non_text(400, 0.95), 20);
        assert_eq!(allowed_non_text(400, 0.0), 400);
        assert_eq!(allowed_non_text(7, 0.9), 0);
    }
}
