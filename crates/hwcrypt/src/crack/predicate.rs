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
    /// multi-byte characters).
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
pub(crate) fn non_text_bytes(text: &[u8], utf8: bool) -> usize {
    let mut bad = 0;
    let mut rest = text;
    while !rest.is_empty() {
        match core::str::from_utf8(rest) {
            Ok(s) => {
                bad += s
                    .bytes()
                    .filter(|&b| b < 0x80 && certainly_not_text(b, false))
                    .count()
                    + if utf8 {
                        0
                    } else {
                        s.bytes().filter(|&b| b >= 0x80).count()
                    };
                break;
            }
            Err(e) => {
                let (good, tail) = rest.split_at(e.valid_up_to());
                bad += good
                    .iter()
                    .filter(|&&b| certainly_not_text(b, false) && (b < 0x80 || !utf8))
                    .count();
                let skip = e.error_len().unwrap_or(tail.len());
                bad += skip;
                rest = &tail[skip..];
            }
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
#[derive(Clone, Debug)]
pub struct Challenge {
    pub(crate) ciphertext: Vec<u8>,
    pub(crate) mode: Mode,
    pub(crate) padding: Padding,
    pub(crate) predicates: Vec<Predicate>,
    /// Plaintext bytes the predicates see start here (16 for CBC without IV).
    pub(crate) first_byte: usize,
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
                    if offset + bytes.len() > len {
                        return bad(format!(
                            "known plaintext at {offset}..{} lies past the end of the {len}-byte message",
                            offset + bytes.len()
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
        Ok(Challenge {
            ciphertext,
            mode,
            padding,
            predicates,
            first_byte,
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
        if self.text().is_some() && !(last && self.padding != Padding::None) {
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
                let region = self.ciphertext.len().saturating_sub(self.first_byte);
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
        let text_bits = if max_bad > 0 {
            0.0
        } else if utf8 {
            0.25
        } else {
            1.35
        };
        let bits = |c: &BlockCheck| {
            if c.forward && c.known_mask == 0xffff && c.text_mask == 0 {
                return 128.0;
            }
            8.0 * c.known_mask.count_ones() as f64 + text_bits * c.text_mask.count_ones() as f64
        };
        let mut ranked: Vec<&BlockCheck> = all
            .iter()
            .filter(|c| bits(c) > 0.0 && !(cbc && c.block == 0))
            .collect();
        if ranked.is_empty() {
            ranked = all.iter().filter(|c| bits(c) > 0.0).collect();
        }
        // Highest bits first; ties: lower block first (stable sort).
        ranked.sort_by(|a, b| {
            bits(b)
                .partial_cmp(&bits(a))
                .unwrap_or(core::cmp::Ordering::Equal)
        });
        let mut out = Vec::new();
        let mut total = 0.0;
        for c in ranked {
            if total >= 48.0 || out.len() == 4 {
                break;
            }
            total += bits(c);
            out.push(*c);
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
            Mode::Ctr { iv } => Ctr::new(aes, &iv).expect("16-byte IV").apply_keystream(out),
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
        let region = self.ciphertext.len() - self.first_byte;
        self.predicates.iter().all(|p| match p {
            Predicate::Contains(s) => visible.windows(s.len()).any(|w| w == s.as_slice()),
            Predicate::KnownAt { offset, bytes } => {
                plain.get(*offset..offset + bytes.len()) == Some(bytes.as_slice())
            }
            Predicate::Text { min_ratio, utf8 } => {
                // The allowance is computed from the whole region (before
                // padding is removed) so that the filter's budget, which is
                // fixed before any key is tried, is never smaller.
                non_text_bytes(visible, *utf8) <= allowed_non_text(region, *min_ratio)
            }
        })
    }
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
    fn non_text_counts() {
        assert_eq!(non_text_bytes(b"Hello, world!\n", false), 0);
        assert_eq!(non_text_bytes(b"a\x00b\x7f", false), 2);
        assert_eq!(non_text_bytes("café".as_bytes(), false), 2);
        assert_eq!(non_text_bytes("café".as_bytes(), true), 0);
        assert_eq!(non_text_bytes(b"caf\xc3", true), 1);
        assert_eq!(non_text_bytes(b"\xff\xfe ok", true), 2);
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
    fn allowance() {
        assert_eq!(allowed_non_text(400, 1.0), 0);
        assert_eq!(allowed_non_text(400, 0.95), 20);
        assert_eq!(allowed_non_text(400, 0.0), 400);
        assert_eq!(allowed_non_text(7, 0.9), 0);
    }
}
